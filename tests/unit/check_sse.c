/*
 * check_sse.c - the SSE parser gives the same events for the same bytes
 * however they are split: every recorded stream in ../data/gemini-fixtures
 * whole, a byte at a time and at 200 random splits; every synthetic case
 * whole, cut at every pair of offsets and a byte at a time. Also: the
 * line ends, data joining, fields, comments, BOM, bare JSON (SSE_RAW),
 * the size bound, a callback that stops, and allocation failures.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/sse.h"
#include "core/bounds.h"
#include "core/memlimit.h"
#include "core/sbuf.h"

#include "unit_fixture.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG      (1024u * 1024) /* max_event where the bound is not tested */

/* An assertion for the hot loops: Check's ck_assert records every passing
 * assertion in a file, too slow for a million feeds. */
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);              \
    } while (0)

static void
setup(void)
{
    memlimit_install();
    memlimit_reset(0);
}

static void
teardown(void)
{
    memlimit_fail_hook = NULL;
    memlimit_reset(0);
}

/* --- recording events ---------------------------------------------------- */

struct ev {
    enum sse_kind kind;
    char *data;
    size_t len;
};

struct rec {
    struct ev *ev;
    size_t n, cap;
    size_t stop_at; /* the callback returns -1 on this call (1-based); 0:
                     * never */
};

static int
rec_fn(void *ctx, enum sse_kind kind, const char *data, size_t len)
{
    struct rec *r = ctx;

    CHECK(kind == SSE_DATA || kind == SSE_RAW);
    CHECK(data[len] == '\0');
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
        CHECK(r->ev != NULL);
    }
    r->ev[r->n].kind = kind;
    r->ev[r->n].data = malloc(len + 1);
    CHECK(r->ev[r->n].data != NULL);
    memcpy(r->ev[r->n].data, data, len + 1);
    r->ev[r->n].len = len;
    r->n++;
    return r->n == r->stop_at ? -1 : 0;
}

static void
rec_release(struct rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ev[i].data);
    free(r->ev);
    memset(r, 0, sizeof(*r));
}

/*
 * The events as one string: "D<...>" or "R<...>" each, with '\n', '\r',
 * NUL, '\\' and '>' escaped, so a table states them readably and a
 * failure shows them. The caller frees it.
 */
static char *
rec_render(const struct rec *r)
{
    struct sbuf sb;
    char *s;

    sbuf_init(&sb, SIZE_MAX / 2);
    for (size_t i = 0; i < r->n; i++) {
        ck_assert_int_eq(
            sbuf_adds(&sb, r->ev[i].kind == SSE_DATA ? "D<" : "R<"), 0);
        for (size_t j = 0; j < r->ev[i].len; j++) {
            char c = r->ev[i].data[j];
            const char *esc = c == '\n'   ? "\\n"
                              : c == '\r' ? "\\r"
                              : c == '\0' ? "\\0"
                              : c == '\\' ? "\\\\"
                              : c == '>'  ? "\\>"
                                          : NULL;
            int rc = esc ? sbuf_adds(&sb, esc) : sbuf_putc(&sb, c);

            CHECK(rc == 0);
        }
        ck_assert_int_eq(sbuf_putc(&sb, '>'), 0);
    }
    s = sbuf_detach(&sb, NULL);
    ck_assert_ptr_nonnull(s);
    return s;
}

static bool
rec_equal(const struct rec *a, const struct rec *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->ev[i].kind != b->ev[i].kind || a->ev[i].len != b->ev[i].len ||
            memcmp(a->ev[i].data, b->ev[i].data, a->ev[i].len) != 0)
            return false;
    return true;
}

/* --- feeding in pieces --------------------------------------------------- */

/* A fixed-seed generator (splitmix64): the same splits on every run. */
static uint64_t
next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* How the input is cut: pieces end at each cut (cuts ascending, within
 * the input), or at random sizes. */
struct split {
    const size_t *cuts;
    size_t ncuts;
    bool bytes;     /* one byte per feed */
    uint64_t seed;  /* non-zero: random piece sizes */
    size_t largest; /* random sizes are 1..largest */
};

static const struct split whole = {0};

struct run {
    struct rec rec;
    int rc;
    bool too_large;
    size_t peak_len; /* the most the buffer held after a feed */
    size_t alloc;    /* the buffer's size at the end, before finish */
};

/* The size of the next piece of in[at..len). */
static size_t
next_piece(const struct split *sp, size_t at, size_t len, size_t *cut,
           uint64_t *state)
{
    size_t left = len - at;

    if (sp->bytes)
        return 1;
    if (sp->seed != 0) {
        size_t k = 1 + (size_t)(next_random(state) % sp->largest);
        return k < left ? k : left;
    }
    while (*cut < sp->ncuts && sp->cuts[*cut] <= at)
        (*cut)++;
    return *cut < sp->ncuts && sp->cuts[*cut] < len ? sp->cuts[*cut] - at
                                                    : left;
}

/* Parse in[0..len) fed as `sp` cuts it, then finish; `stop_at` as in
 * struct rec. The parser's invariants are checked after every feed. */
static struct run
parse(const char *in, size_t len, size_t max_event, const struct split *sp,
      size_t stop_at)
{
    struct run out = {.rec = {.stop_at = stop_at}};
    struct sse p;
    uint64_t state = sp->seed;
    size_t at = 0, cut = 0;

    sse_init(&p, max_event);
    while (at < len && out.rc == 0) {
        size_t k = next_piece(sp, at, len, &cut, &state);

        CHECK(k > 0);
        out.rc = sse_feed(&p, in + at, k, rec_fn, &out.rec);
        at += k;
        if (out.rc != 0)
            break;
        /* linear: all but a trailing "\r" was searched; bounded: the
         * buffer holds one unfinished event and no more */
        CHECK(p.scanned <= p.buf.len);
        CHECK(p.scanned + 1 >= p.buf.len);
        CHECK(p.scanned == p.buf.len || p.buf.buf[p.scanned] == '\r');
        CHECK(p.buf.len <= max_event + 1);
        if (p.buf.len > out.peak_len)
            out.peak_len = p.buf.len;
    }
    out.alloc = p.buf.alloc;
    if (out.rc == 0)
        out.rc = sse_finish(&p, rec_fn, &out.rec);
    out.too_large = sse_too_large(&p);
    /* after a non-zero return the parser stays stopped and calls nothing */
    if (out.rc != 0) {
        size_t n = out.rec.n;

        ck_assert_int_eq(sse_feed(&p, "data: x\n\n", 9, rec_fn, &out.rec),
                         out.rc);
        ck_assert_int_eq(sse_finish(&p, rec_fn, &out.rec), out.rc);
        ck_assert_uint_eq(out.rec.n, n);
    }
    sse_release(&p);
    return out;
}

/* The run matches the reference: same events, same result. */
static void
assert_same_run(const struct run *got, const struct run *want, const char *how)
{
    if (!rec_equal(&got->rec, &want->rec)) {
        char *g = rec_render(&got->rec), *w = rec_render(&want->rec);

        ck_abort_msg("%s: events '%.300s', whole: '%.300s'", how, g, w);
    }
    if (got->rc != want->rc || got->too_large != want->too_large)
        ck_abort_msg("%s: returns %d (too large: %d), whole: %d (%d)", how,
                     got->rc, got->too_large, want->rc, want->too_large);
}

/* --- the recorded streams ------------------------------------------------ */

static const struct {
    const char *file;
    size_t events;
} streams[] = {
    {"09a-stream-text-single-chunk.sse.txt", 1},
    {"09b-stream-text-many-chunks.sse.txt", 123},
    {"10a-stream-function-call-signature.sse.txt", 1},
    {"10b-stream-after-function-response.sse.txt", 2},
};

/* Each event of a recorded stream is one Gemini response. */
static void
assert_responses(const struct rec *r, const char *file)
{
    for (size_t i = 0; i < r->n; i++) {
        json_error_t jerr;
        json_t *v;

        ck_assert_msg(r->ev[i].kind == SSE_DATA, "%s: event %zu is raw", file,
                      i);
        ck_assert_uint_eq(strlen(r->ev[i].data), r->ev[i].len);
        v = json_loads(r->ev[i].data, 0, &jerr);
        ck_assert_msg(v != NULL, "%s: event %zu: %s", file, i, jerr.text);
        ck_assert_msg(json_is_object(v) &&
                          (json_object_get(v, "candidates") != NULL ||
                           json_object_get(v, "usageMetadata") != NULL),
                      "%s: event %zu is not a response", file, i);
        json_decref(v);
    }
}

START_TEST(recorded_streams_any_split)
{
    const char *file = streams[_i].file;
    size_t len, largest = 0;
    char *in = unit_fixture(file, &len);
    struct run want = parse(in, len, BOUND_UPSTREAM_BYTES, &whole, 0), got;
    struct split bytes = {.bytes = true};
    uint64_t seeds = 20251124;

    ck_assert_int_eq(want.rc, 0);
    ck_assert_uint_eq(want.rec.n, streams[_i].events);
    assert_responses(&want.rec, file);
    for (size_t i = 0; i < want.rec.n; i++)
        if (want.rec.ev[i].len > largest)
            largest = want.rec.ev[i].len;

    got = parse(in, len, BOUND_UPSTREAM_BYTES, &bytes, 0);
    assert_same_run(&got, &want, "a byte at a time");
    /* compacted as it goes: what stays is one event's "data: ", payload
     * and "\r\n", and the "\r" of the blank line, never the stream */
    ck_assert_uint_le(got.peak_len, largest + 9);
    if (len > 16384)
        ck_assert_uint_le(got.alloc, len / 4);
    rec_release(&got.rec);

    for (int k = 0; k < 200; k++) {
        /* piece sizes up to 1..4096 bytes, small ones as often as large */
        struct split sp = {.seed = next_random(&seeds) | 1,
                           .largest = (size_t)1 << (k % 13)};
        char how[64];

        snprintf(how, sizeof(how), "random split %d", k);
        got = parse(in, len, BOUND_UPSTREAM_BYTES, &sp, 0);
        assert_same_run(&got, &want, how);
        rec_release(&got.rec);
    }
    rec_release(&want.rec);
    free(in);
}
END_TEST

/* Gemini's mid-stream error, as recorded, after an ordinary event. */
START_TEST(midstream_error_is_raw)
{
    size_t elen, dlen;
    char *err = unit_fixture("e500-internal.midstream-chunk.json", &elen);
    char *data = unit_fixture("09a-stream-text-single-chunk.sse.txt", &dlen);
    const char *tails[] = {"", "\n", "\r\n\r\n"};

    for (size_t t = 0; t < ARRAY_SIZE(tails); t++) {
        size_t tlen = strlen(tails[t]), len = dlen + elen + tlen;
        char *in = malloc(len);
        struct split bytes = {.bytes = true};
        struct run want, got;
        json_t *v;

        ck_assert_ptr_nonnull(in);
        memcpy(in, data, dlen);
        memcpy(in + dlen, err, elen);
        memcpy(in + dlen + elen, tails[t], tlen);
        want = parse(in, len, BOUND_UPSTREAM_BYTES, &whole, 0);
        ck_assert_int_eq(want.rc, 0);
        ck_assert_uint_eq(want.rec.n, 2);
        ck_assert_int_eq(want.rec.ev[0].kind, SSE_DATA);
        ck_assert_int_eq(want.rec.ev[1].kind, SSE_RAW);
        /* the whole object, without the line end the file has */
        ck_assert_uint_eq(want.rec.ev[1].len, elen - 1);
        ck_assert_int_eq(memcmp(want.rec.ev[1].data, err, elen - 1), 0);
        v = json_loads(want.rec.ev[1].data, 0, NULL);
        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(json_integer_value(json_object_get(
                             json_object_get(v, "error"), "code")),
                         500);
        json_decref(v);
        got = parse(in, len, BOUND_UPSTREAM_BYTES, &bytes, 0);
        assert_same_run(&got, &want, "a byte at a time");
        rec_release(&got.rec);
        rec_release(&want.rec);
        free(in);
    }
    free(err);
    free(data);
}
END_TEST

/* --- synthetic streams, cut everywhere ----------------------------------- */

static const struct sse_case {
    const char *name;
    const char *in;
    size_t len; /* 0: strlen(in) */
    size_t max_event;
    const char *want; /* the events, as rec_render writes them */
    int rc;
    bool too_large;
} cases[] = {
    /* line ends: a blank line ends an event, whichever ends the lines */
    {"lf", "data: a\n\ndata: b\n\n", 0, BIG, "D<a>D<b>", 0, false},
    {"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", 0, BIG, "D<a>D<b>", 0, false},
    {"cr", "data: a\r\rdata: b\r\r", 0, BIG, "D<a>D<b>", 0, false},
    {"mixed", "data: a\r\n\ndata: b\n\r\ndata: c\r\n\rdata: d\n\r", 0, BIG,
     "D<a>D<b>D<c>D<d>", 0, false},
    {"mixed, extra blank lines", "data: a\r\r\ndata: b\n\r\rdata: c\r\n\n", 0,
     BIG, "D<a>D<b>D<c>", 0, false},
    /* data lines */
    {"multi-line data", "data: a\ndata:b\ndata\ndata:  c\n\n", 0, BIG,
     "D<a\\nb\\n\\n c>", 0, false},
    {"multi-line data, crlf", "data: {\r\ndata:  \"k\": 1\r\ndata: }\r\n\r\n",
     0, BIG, "D<{\\n \"k\": 1\\n}>", 0, false},
    {"no space", "data:x\n\ndata:\tx\n\ndata::x\n\n", 0, BIG, "D<x>D<\tx>D<:x>",
     0, false},
    {"empty data", "data:\n\ndata\n\ndata: \n\n", 0, BIG, "D<>D<>D<>", 0,
     false},
    {"nul in data", "data: a\0b\n\n", 11, BIG, "D<a\\0b>", 0, false},
    {"names are exact", "Data: x\n\nDATA: y\n\n data: z\n\ndatax: w\n\n", 0,
     BIG, "", 0, false},
    /* fields and comments */
    {"fields ignored",
     ": ping\nevent: message\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n", 0, BIG,
     "D<x>", 0, false},
    {"no data, no event",
     ": ping\n\n: pong\r\n\r\nevent: x\nid: 1\nretry: 5\n\n", 0, BIG, "", 0,
     false},
    {"unknown lines", "foo: bar\nhello\n\n", 0, BIG, "", 0, false},
    /* the end of the body */
    {"unterminated", "data: a\n\ndata: b", 0, BIG, "D<a>D<b>", 0, false},
    {"one line end", "data: a\n\ndata: b\r\n", 0, BIG, "D<a>D<b>", 0, false},
    {"final cr", "data: a\r", 0, BIG, "D<a>", 0, false},
    {"trailing blanks", "data: a\n\n\n\n\r\n\r  \n\t", 0, BIG, "D<a>", 0,
     false},
    {"empty", "", 0, BIG, "", 0, false},
    {"blank lines only", "\n\r\n\r\r\n\n", 0, 0, "", 0, false},
    /* bare JSON */
    {"raw after data", "data: {}\n\n{\"error\":{\"code\":500}}\n", 0, BIG,
     "D<{}>R<{\"error\":{\"code\":500}}>", 0, false},
    {"raw pretty-printed",
     "{\n  \"error\": {\n    \"code\": 500,\n    \"status\": \"INTERNAL\"\n"
     "  }\n}\n\ndata: 1\n\n",
     0, BIG,
     "R<{\\n  \"error\": {\\n    \"code\": 500,\\n    \"status\": "
     "\"INTERNAL\"\\n  }\\n}>D<1>",
     0, false},
    {"raw array, trimmed", "  \r\n[1,\r\n 2]\t\r\n\r\n", 0, BIG,
     "R<[1,\\r\\n 2]>", 0, false},
    {"raw unterminated", "{\"error\":{}}", 0, BIG, "R<{\"error\":{}}>", 0,
     false},
    {"not raw", "hello {\n\nx: {}\n\n\"{\"\n\n", 0, BIG, "", 0, false},
    {"data wins over raw", "{\"a\":1}\ndata: x\n\n", 0, BIG, "D<x>", 0, false},
    {"a field is not raw", "{\"a\":1}\nid: 3\n\n{\"a\":1}\n: c\n\n", 0, BIG, "",
     0, false},
    /* a byte order mark (EF BB BF) at the start of the stream only */
    {"bom", "\357\273\277data: a\n\n", 0, BIG, "D<a>", 0, false},
    {"bom raw", "\357\273\277{\"error\":1}", 0, BIG, "R<{\"error\":1}>", 0,
     false},
    {"one bom only", "\357\273\277\357\273\277data: a\n\ndata: b\n\n", 0, BIG,
     "D<b>", 0, false},
    {"half a bom", "\357\273data: a\n\ndata: b\n\n", 0, BIG, "D<b>", 0, false},
    {"late bom", "data: a\n\n\357\273\277data: b\n\n", 0, BIG, "D<a>", 0,
     false},
    {"half a bom, then the end", "\357\273", 0, BIG, "", 0, false},
    /* the size bound: an event's lines, up to the blank line */
    {"at the bound", "data: 012345678\n\n", 0, 16, "D<012345678>", 0, false},
    {"at the bound, crlf", "data: 01234567\r\n\r\n", 0, 16, "D<01234567>", 0,
     false},
    {"over the bound", "data: 0123456789\n\n", 0, 16, "", -2, true},
    {"over the bound after an event",
     "data: a\n\ndata: 0123456789\n\ndata: b\n\n", 0, 16, "D<a>", -2, true},
    {"at the bound, unterminated", "data: ab", 0, 8, "D<ab>", 0, false},
    {"over the bound, unterminated", "data: abc", 0, 8, "", -2, true},
    {"comments add up", ": 0123456789\n: 0123456789\n", 0, 16, "", -2, true},
    {"nothing is small enough", "data: a\n\n", 0, 0, "", -2, true},
};

START_TEST(cases_any_split)
{
    const struct sse_case *c = &cases[_i];
    size_t len = c->len ? c->len : strlen(c->in);
    struct run want = parse(c->in, len, c->max_event, &whole, 0), got;
    struct split bytes = {.bytes = true};
    char *events = rec_render(&want.rec);

    ck_assert_msg(strcmp(events, c->want) == 0, "%s: events '%s', not '%s'",
                  c->name, events, c->want);
    ck_assert_msg(want.rc == c->rc, "%s: returns %d", c->name, want.rc);
    ck_assert_int_eq(want.too_large, c->too_large);
    free(events);

    got = parse(c->in, len, c->max_event, &bytes, 0);
    assert_same_run(&got, &want, c->name);
    rec_release(&got.rec);
    /* three pieces, cut at every pair of offsets (an empty piece is
     * skipped): a "\r\n" or a BOM split any way at all */
    for (size_t i = 1; i < len; i++)
        for (size_t j = i; j < len; j++) {
            size_t cuts[] = {i, j};
            struct split sp = {.cuts = cuts, .ncuts = 2};
            char how[128];

            snprintf(how, sizeof(how), "%s, cut at %zu and %zu", c->name, i, j);
            got = parse(c->in, len, c->max_event, &sp, 0);
            assert_same_run(&got, &want, how);
            rec_release(&got.rec);
        }
    rec_release(&want.rec);
}
END_TEST

/* A "\r" that ends a feed may be half of "\r\n": no event until the next
 * byte says which. */
START_TEST(cr_waits_for_the_next_byte)
{
    struct rec r = {0};
    struct sse p;

    sse_init(&p, BIG);
    ck_assert_int_eq(sse_feed(&p, "data: a\r\n\r", 10, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_uint_eq(p.scanned, 9); /* the "\r" is not searched yet */
    ck_assert_int_eq(sse_feed(&p, "\n", 1, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(p.buf.len, 0); /* the event is gone from the buffer */
    ck_assert_int_eq(sse_feed(&p, "data: b\r", 8, rec_fn, &r), 0);
    ck_assert_int_eq(sse_feed(&p, "\r", 1, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 1);
    /* not "\n": the "\r" was a line of its own, a blank one */
    ck_assert_int_eq(sse_feed(&p, "x", 1, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_str_eq(r.ev[1].data, "b");
    ck_assert_int_eq(sse_feed(&p, "\r", 1, rec_fn, &r), 0);
    ck_assert_int_eq(sse_feed(&p, "\n", 1, rec_fn, &r), 0);
    ck_assert_int_eq(sse_feed(&p, "data: c\r", 8, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 2);
    /* the end of the body settles it: a line end */
    ck_assert_int_eq(sse_finish(&p, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_str_eq(r.ev[2].data, "c");
    sse_release(&p);
    rec_release(&r);
}
END_TEST

/* The callback's -1 stops the parser at once, in the middle of a feed. */
START_TEST(callback_stops)
{
    const char *in = "data: a\n\ndata: b\n\ndata: c\n\n";
    struct split bytes = {.bytes = true};

    for (size_t stop = 1; stop <= 3; stop++) {
        struct run one = parse(in, strlen(in), BIG, &whole, stop);
        struct run each = parse(in, strlen(in), BIG, &bytes, stop);

        ck_assert_int_eq(one.rc, -1);
        ck_assert(!one.too_large);
        ck_assert_uint_eq(one.rec.n, stop);
        assert_same_run(&each, &one, "a byte at a time");
        rec_release(&one.rec);
        rec_release(&each.rec);
    }
}
END_TEST

/* An event larger than a feed's slice, and one past the bound, found
 * whatever the feeding; a byte at a time stays linear (2 MiB of feeds). */
START_TEST(large_events)
{
    size_t n = 2u * 1024 * 1024, len = n + 8;
    char *in = malloc(len + 1);
    struct split bytes = {.bytes = true};
    struct run r;

    ck_assert_ptr_nonnull(in);
    memcpy(in, "data: ", 6);
    memset(in + 6, 'x', n);
    memcpy(in + 6 + n, "\n\n", 3);
    for (int b = 0; b < 2; b++) {
        r = parse(in, len, len - 1, b ? &bytes : &whole, 0);
        ck_assert_int_eq(r.rc, 0);
        ck_assert_uint_eq(r.rec.n, 1);
        ck_assert_uint_eq(r.rec.ev[0].len, n);
        rec_release(&r.rec);
        r = parse(in, len, len - 2, b ? &bytes : &whole, 0);
        ck_assert_int_eq(r.rc, -2);
        ck_assert(r.too_large);
        ck_assert_uint_eq(r.rec.n, 0);
        rec_release(&r.rec);
    }
    free(in);
}
END_TEST

/* --- memory -------------------------------------------------------------- */

static long alloc_count, fail_at;

static bool
count_and_fail(size_t n)
{
    (void)n;
    return ++alloc_count == fail_at;
}

/* Each of the buffer's allocations may fail: -2, not too large, the
 * events so far are the stream's first ones, and nothing leaks (the
 * ASan run checks that). */
START_TEST(allocation_failure)
{
    size_t len;
    char *in = unit_fixture("09b-stream-text-many-chunks.sse.txt", &len);
    struct run want = parse(in, len, BOUND_UPSTREAM_BYTES, &whole, 0);
    struct split bytes = {.bytes = true};
    long failures = 0;

    for (fail_at = 1;; fail_at++) {
        struct run got;

        alloc_count = 0;
        memlimit_fail_hook = count_and_fail;
        got = parse(in, len, BOUND_UPSTREAM_BYTES,
                    fail_at % 2 ? &bytes : &whole, 0);
        memlimit_fail_hook = NULL;
        if (alloc_count < fail_at) {
            assert_same_run(&got, &want, "no failure");
            rec_release(&got.rec);
            break;
        }
        failures++;
        ck_assert_int_eq(got.rc, -2);
        ck_assert(!got.too_large);
        ck_assert_uint_le(got.rec.n, want.rec.n);
        for (size_t i = 0; i < got.rec.n; i++)
            ck_assert_str_eq(got.rec.ev[i].data, want.rec.ev[i].data);
        rec_release(&got.rec);
    }
    ck_assert_int_gt(failures, 0);
    rec_release(&want.rec);
    free(in);
}
END_TEST

/* The request's memory budget is a failed allocation too, not a too
 * large event. */
START_TEST(memory_budget)
{
    struct rec r = {0};
    struct sse p;

    memlimit_reset(100);
    sse_init(&p, BIG);
    ck_assert_int_eq(sse_feed(&p, "data: a\n\n", 9, rec_fn, &r), -2);
    ck_assert(!sse_too_large(&p));
    ck_assert_uint_eq(r.n, 0);
    sse_release(&p);
    memlimit_reset(0);
    /* released, it starts over */
    ck_assert_int_eq(sse_feed(&p, "data: a\n\n", 9, rec_fn, &r), 0);
    ck_assert_int_eq(sse_finish(&p, rec_fn, &r), 0);
    ck_assert_uint_eq(r.n, 1);
    sse_release(&p);
    rec_release(&r);
}
END_TEST

Suite *
sse_suite(void)
{
    Suite *s = suite_create("sse");
    TCase *tc = tcase_create("split");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, recorded_streams_any_split, 0,
                        (int)ARRAY_SIZE(streams));
    tcase_add_test(tc, midstream_error_is_raw);
    tcase_add_loop_test(tc, cases_any_split, 0, (int)ARRAY_SIZE(cases));
    tcase_add_test(tc, cr_waits_for_the_next_byte);
    tcase_add_test(tc, callback_stops);
    tcase_add_test(tc, large_events);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, allocation_failure);
    tcase_add_test(tc, memory_budget);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
