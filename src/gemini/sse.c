/*
 * sse.c - server-sent events, split into events across any chunking (see
 * sse.h).
 *
 * The stream is copied into one buffer that always starts at the first
 * byte of the event being read. Each pass searches only the bytes not yet
 * searched (`scanned`) for a blank line; every whole event found is
 * dispatched, then what is left (the start of the next event) moves to
 * the front. Input is taken a slice at a time, so the buffer never holds
 * more than one event and a slice, whatever the size of a feed.
 *
 * An event's text is only taken apart once it is whole: its lines are
 * read once, its data joined in place (the data is never longer than the
 * lines it comes from), and the text is dropped after the callback.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/sse.h"
#include "core/sbuf.h"

#include <string.h>

/* Input bytes taken into the buffer per pass: a feed of a whole body does
 * not make the buffer as large as the body. */
#define SSE_SLICE 16384

/* sse.bom once the stream's start is past (a BOM skipped, or none). */
#define SSE_BOM_PAST 3

static const char sse_bom[3] = {'\xEF', '\xBB', '\xBF'};

void
sse_init(struct sse *p, size_t max_event)
{
    /* room for an event of max_event bytes plus the blank line after it
     * ("\r\n" at most), which must be seen before the event is whole */
    sbuf_init(&p->buf, max_event > SIZE_MAX - 3 ? SIZE_MAX - 1 : max_event + 2);
    p->scanned = 0;
    p->max_event = max_event;
    p->rc = 0;
    p->too_large = false;
    p->bom = 0;
}

void
sse_release(struct sse *p)
{
    sbuf_release(&p->buf);
    sse_init(p, p->max_event);
}

bool
sse_too_large(const struct sse *p)
{
    return p->too_large;
}

/* Stop the parser with `rc`, which every later call returns too. */
static int
sse_fail(struct sse *p, int rc, bool too_large)
{
    p->rc = rc;
    p->too_large = too_large;
    return rc;
}

/* Is b[0..n) the field name `name`? */
static bool
sse_name_is(const char *b, size_t n, const char *name)
{
    return n == strlen(name) && memcmp(b, name, n) == 0;
}

static bool
sse_space(char c)
{
    /* JSON's whitespace: what may surround a bare JSON value */
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Call fn with b[0..n), NUL-terminated in place for the call: b[n] is a
 * byte of the buffer (a line end, or the sbuf's own NUL), put back after. */
static int
sse_call(sse_event_fn fn, void *ctx, enum sse_kind kind, char *b, size_t n)
{
    char keep = b[n];
    int rc;

    b[n] = '\0';
    rc = fn(ctx, kind, b, n);
    b[n] = keep;
    return rc;
}

/*
 * Dispatch the whole event whose text is b[0..n): its lines, without the
 * blank line that ended it (b[n] is readable and writable). The text is
 * rewritten in place (the data joined), so it is read only this once.
 */
static int
sse_event(char *b, size_t n, sse_event_fn fn, void *ctx)
{
    size_t r = 0, w = 0;
    bool data = false, known = false;

    while (r < n) {
        size_t start = r, colon = SIZE_MAX, end, value;

        for (; r < n && b[r] != '\r' && b[r] != '\n'; r++)
            if (b[r] == ':' && colon == SIZE_MAX)
                colon = r;
        end = r;
        if (r < n)
            r += b[r] == '\r' && r + 1 < n && b[r + 1] == '\n' ? 2 : 1;
        if (end == start)
            continue; /* no blank line inside an event: defensive only */
        if (colon == start) {
            known = true; /* a comment */
            continue;
        }
        /* "name:value", "name: value" (one space dropped), or "name" */
        value = colon == SIZE_MAX ? end : colon + 1;
        if (value < end && b[value] == ' ')
            value++;
        if (colon == SIZE_MAX)
            colon = end;
        if (sse_name_is(b + start, colon - start, "data")) {
            /* w stays at or before `value`: each line gave up at least
             * "data" and its line end, and the joiner takes one byte */
            if (data)
                b[w++] = '\n';
            memmove(b + w, b + value, end - value);
            w += end - value;
            data = true;
        } else if (sse_name_is(b + start, colon - start, "event") ||
                   sse_name_is(b + start, colon - start, "id") ||
                   sse_name_is(b + start, colon - start, "retry")) {
            known = true;
        }
    }
    if (data)
        return sse_call(fn, ctx, SSE_DATA, b, w);
    if (known)
        return 0;
    /* no data and nothing SSE knows: a bare JSON value, or noise; the
     * text is untouched, since only data lines are rewritten */
    size_t s = 0, e = n;
    while (s < e && sse_space(b[s]))
        s++;
    while (e > s && sse_space(b[e - 1]))
        e--;
    if (s < e && (b[s] == '{' || b[s] == '['))
        return sse_call(fn, ctx, SSE_RAW, b + s, e - s);
    return 0;
}

/*
 * Search buf from `scanned` for blank lines, dispatching each whole event,
 * then move the rest to the front. With `final` (the stream ended) a "\r"
 * at the very end is a line end; otherwise it waits for the next byte,
 * which may be the "\n" of a "\r\n".
 */
static int
sse_scan(struct sse *p, bool final, sse_event_fn fn, void *ctx)
{
    char *b = p->buf.buf;
    size_t len = p->buf.len, i = p->scanned, start = 0;

    while (i < len) {
        char c = b[i];
        size_t t = 1;

        if (c != '\r' && c != '\n') {
            i++;
            continue;
        }
        if (c == '\r') {
            if (i + 1 == len && !final)
                break;
            if (i + 1 < len && b[i + 1] == '\n')
                t = 2;
        }
        /* a line end right at a line start: a blank line, the event's end
         * ("\r\n" is taken whole, so b[i - 1] is a line end only when a
         * line ended there) */
        if (i == start || b[i - 1] == '\r' || b[i - 1] == '\n') {
            if (i - start > p->max_event)
                return sse_fail(p, -2, true);
            if (i > start && sse_event(b + start, i - start, fn, ctx) != 0)
                return sse_fail(p, -1, false);
            start = i + t;
        }
        i += t;
    }
    /* the event being read is at least this long already */
    if (i - start > p->max_event)
        return sse_fail(p, -2, true);
    if (start > 0) {
        memmove(b, b + start, len - start);
        sbuf_truncate(&p->buf, len - start);
    }
    p->scanned = i - start;
    return 0;
}

/* Take n bytes of the stream (after the BOM check) a slice at a time. */
static int
sse_take(struct sse *p, const char *in, size_t n, sse_event_fn fn, void *ctx)
{
    while (n > 0) {
        size_t k = p->buf.max - p->buf.len;

        /* sse_scan fails an event before it fills the buffer (an event
         * of max_event bytes and its "\r\n" fit), so there is room */
        if (k == 0)
            return sse_fail(p, -2, true);
        if (k > n)
            k = n;
        if (k > SSE_SLICE)
            k = SSE_SLICE;
        /* the cap is never passed here, so a failure is memory */
        if (sbuf_add(&p->buf, in, k) != 0)
            return sse_fail(p, -2, false);
        in += k;
        n -= k;
        if (sse_scan(p, false, fn, ctx) != 0)
            return p->rc;
    }
    return 0;
}

int
sse_feed(struct sse *p, const char *buf, size_t n, sse_event_fn fn, void *ctx)
{
    if (p->rc != 0)
        return p->rc;
    /* WHATWG: one BOM at the very start is skipped. Its bytes may come in
     * separate feeds; on a mismatch, those held back are stream bytes. */
    while (p->bom < SSE_BOM_PAST && n > 0) {
        if ((unsigned char)*buf == (unsigned char)sse_bom[p->bom]) {
            p->bom++;
            buf++;
            n--;
        } else {
            size_t held = p->bom;

            p->bom = SSE_BOM_PAST;
            if (sse_take(p, sse_bom, held, fn, ctx) != 0)
                return p->rc;
        }
    }
    return sse_take(p, buf, n, fn, ctx);
}

int
sse_finish(struct sse *p, sse_event_fn fn, void *ctx)
{
    size_t held = p->bom < SSE_BOM_PAST ? p->bom : 0;
    int rc;

    if (p->rc != 0)
        return p->rc;
    /* a stream that ended inside what looked like a BOM */
    p->bom = SSE_BOM_PAST;
    if (sse_take(p, sse_bom, held, fn, ctx) != 0)
        return p->rc;
    if (sse_scan(p, true, fn, ctx) != 0)
        return p->rc;
    /* what is left is an event with no blank line after it; sse_scan
     * checked its size */
    rc = p->buf.len > 0 ? sse_event(p->buf.buf, p->buf.len, fn, ctx) : 0;
    sbuf_reset(&p->buf);
    p->scanned = 0;
    p->bom = 0;
    if (rc != 0)
        return sse_fail(p, -1, false);
    return 0;
}
