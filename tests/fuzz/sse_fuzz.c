/*
 * sse_fuzz.c - libFuzzer harness: the SSE parser gives the same events
 * however the stream is split, and the events a plain reference gives.
 *
 * The first two bytes of an input are the settings, the rest the stream:
 *   byte 0, bits 0-5  max_event: 0 means 1 MiB (no bound in practice),
 *                     n means 4n bytes (4..252), so the bound is hit often
 *   byte 0, bits 6-7  the callback stops the parser (returns -1) on its
 *                     call number 1-3; 0: never
 *   byte 1            the splits: bits 0-2 the largest piece, 2^k bytes;
 *                     all 8 bits seed the sizes
 *
 * For every input the stream is fed whole, in the pieces byte 1 picks, and
 * a byte at a time, then finished; it asserts that the three give the same
 * events (kind, length, bytes), the same result and the same
 * sse_too_large(), and that those are what a reference gives: a
 * non-incremental parser below that cuts the whole stream into lines
 * first. Each event is at most max_event bytes and NUL-terminated; a data
 * event never holds a "\r"; a raw one starts with '{' or '[' and has no
 * whitespace around it; the callback is never called after it said stop;
 * a -2 is always a too-large event (memory does not run out here).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
die(const char *what, const char *in, size_t len)
{
    fprintf(stderr, "sse_fuzz: %s\ninput (%zu bytes): '%.*s'\n", what, len,
            (int)(len > 400 ? 400 : len), in);
    abort();
}

/* --- what a run saw: every event, then the result, as bytes -------------- */

struct log {
    char *p;
    size_t len, cap;
    size_t max_event;
    size_t calls, stop_at; /* stop_at: the call that returns -1; 0: never */
    bool stopped;
};

static void
log_add(struct log *g, const void *b, size_t n)
{
    if (n > g->cap - g->len) {
        size_t cap = g->cap ? g->cap : 256;

        while (cap - g->len < n)
            cap *= 2;
        g->p = realloc(g->p, cap);
        if (g->p == NULL)
            abort();
        g->cap = cap;
    }
    memcpy(g->p + g->len, b, n);
    g->len += n;
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
log_event(void *ctx, enum sse_kind kind, const char *d, size_t n)
{
    struct log *g = ctx;
    unsigned char k = (unsigned char)kind;

    if (g->stopped)
        die("the callback was called after it stopped the parser", d, n);
    if (n > g->max_event)
        die("an event is larger than max_event", d, n);
    if (d[n] != '\0')
        die("an event is not NUL-terminated", d, n);
    if (kind == SSE_DATA && memchr(d, '\r', n) != NULL)
        die("a data event holds a \\r", d, n);
    if (kind == SSE_RAW &&
        (n == 0 || (d[0] != '{' && d[0] != '[') || is_space(d[n - 1])))
        die("a raw event is not trimmed JSON-looking text", d, n);
    if (kind != SSE_DATA && kind != SSE_RAW)
        die("an event of no known kind", d, n);
    log_add(g, &k, 1);
    log_add(g, &n, sizeof(n));
    log_add(g, d, n);
    if (++g->calls == g->stop_at) {
        g->stopped = true;
        return -1;
    }
    return 0;
}

static void
log_end(struct log *g, int rc, bool too_large)
{
    unsigned char end[3] = {0xFF, (unsigned char)(rc + 2), too_large};

    log_add(g, end, sizeof(end));
}

/* --- the parser under test ------------------------------------------------ */

static uint32_t
next_random(uint32_t *s)
{
    /* xorshift32: any fixed sequence will do */
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Feed in[0..len) in pieces of 1..largest bytes (0: whole), then finish. */
static void
run(const char *in, size_t len, size_t largest, uint32_t seed, struct log *g)
{
    struct sse p;
    size_t at = 0;
    int rc = 0;

    sse_init(&p, g->max_event);
    while (at < len && rc == 0) {
        size_t k = largest ? 1 + next_random(&seed) % largest : len;

        if (k > len - at)
            k = len - at;
        rc = sse_feed(&p, in + at, k, log_event, g);
        at += k;
        if (rc == 0 && (p.scanned > p.buf.len || p.scanned + 1 < p.buf.len ||
                        p.buf.len > g->max_event + 1))
            die("the buffer holds more than an unfinished event", in, len);
    }
    if (rc == 0)
        rc = sse_finish(&p, log_event, g);
    if ((rc == -1) != g->stopped)
        die("-1 and the callback's stop disagree", in, len);
    if (rc == -2 && !sse_too_large(&p))
        die("-2 without a too-large event, and memory did not run out", in,
            len);
    log_end(g, rc, sse_too_large(&p));
    sse_release(&p);
}

/* --- the reference: lines first, then events ------------------------------ */

/* The length of the line end at in[i] (0: none); at the end of the stream
 * a "\r" is a whole line end. */
static size_t
line_end(const char *in, size_t len, size_t i)
{
    if (in[i] == '\n')
        return 1;
    if (in[i] != '\r')
        return 0;
    return i + 1 < len && in[i + 1] == '\n' ? 2 : 1;
}

static bool
field_is(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);

    return n >= k && memcmp(line, name, k) == 0 && (n == k || line[k] == ':');
}

/* One event's text t[0..n): its data, a raw text, or nothing. */
static int
ref_event(const char *t, size_t n, struct log *g)
{
    char *d = malloc(n + 1);
    size_t dn = 0, s = 0, e = n;
    bool data = false, known = false;
    int rc = 0;

    if (d == NULL)
        abort();
    for (size_t i = 0; i < n;) {
        size_t j = i, ll, t_end;

        while (j < n && line_end(t, n, j) == 0)
            j++;
        ll = j - i;
        t_end = j < n ? j + line_end(t, n, j) : n;
        if (field_is(t + i, ll, "data")) {
            const char *v = t + i + 4;
            size_t vn = ll - 4;

            if (vn > 0) { /* the colon, then at most one space */
                v++, vn--;
                if (vn > 0 && *v == ' ')
                    v++, vn--;
            }
            if (data)
                d[dn++] = '\n';
            memcpy(d + dn, v, vn);
            dn += vn;
            data = true;
        } else if ((ll > 0 && t[i] == ':') || field_is(t + i, ll, "event") ||
                   field_is(t + i, ll, "id") || field_is(t + i, ll, "retry")) {
            known = true;
        }
        i = t_end;
    }
    while (s < e && is_space(t[s]))
        s++;
    while (e > s && is_space(t[e - 1]))
        e--;
    if (data) {
        d[dn] = '\0';
        rc = log_event(g, SSE_DATA, d, dn);
    } else if (!known && s < e && (t[s] == '{' || t[s] == '[')) {
        memcpy(d, t + s, e - s);
        d[e - s] = '\0';
        rc = log_event(g, SSE_RAW, d, e - s);
    }
    free(d);
    return rc;
}

/* The whole stream at once: skip a BOM, cut at blank lines. */
static void
reference(const char *in, size_t len, struct log *g)
{
    size_t start = 0, i;
    int rc = 0;

    if (len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0)
        start = 3;
    for (i = start; i < len && rc == 0;) {
        size_t t = line_end(in, len, i);

        if (t == 0) {
            i++;
            continue;
        }
        /* a line end at the start of a line: a blank line */
        if (i == start || line_end(in, len, i - 1) != 0) {
            if (i - start > g->max_event)
                rc = -2;
            else if (i > start && ref_event(in + start, i - start, g) != 0)
                rc = -1;
            start = i + t;
        }
        i += t;
    }
    if (rc == 0 && len > start) {
        if (len - start > g->max_event)
            rc = -2;
        else if (ref_event(in + start, len - start, g) != 0)
            rc = -1;
    }
    log_end(g, rc, rc == -2);
}

/* --- the harness ----------------------------------------------------------- */

static void
same(const struct log *a, const struct log *b, const char *what, const char *in,
     size_t len)
{
    if (a->len != b->len || memcmp(a->p, b->p, a->len) != 0)
        die(what, in, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data + 2;
    size_t len, m, largest;
    struct log g[4];

    if (size < 2)
        return 0;
    len = size - 2;
    m = data[0] & 0x3f;
    largest = (size_t)1 << (data[1] & 7);
    memset(g, 0, sizeof(g));
    for (int k = 0; k < 4; k++) {
        g[k].max_event = m == 0 ? 1024u * 1024 : 4 * m;
        g[k].stop_at = data[0] >> 6;
    }
    reference(in, len, &g[0]);
    run(in, len, 0, 0, &g[1]);
    /* xorshift32 needs a non-zero seed */
    run(in, len, largest, 0x9E3779B9u ^ data[1], &g[2]);
    run(in, len, 1, 1, &g[3]);
    same(&g[1], &g[0], "whole and the reference differ", in, len);
    same(&g[2], &g[1], "split and whole differ", in, len);
    same(&g[3], &g[1], "a byte at a time and whole differ", in, len);
    for (int k = 0; k < 4; k++)
        free(g[k].p);
    return 0;
}
