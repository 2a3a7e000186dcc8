/*
 * check_stream.c - a streamed Gemini call (gemini_stream): the answer is
 * assembled from its chunks as generateContent would have answered it,
 * the text deltas go out as they come, and a stream that breaks off is
 * tried again only while nothing of it went out.
 *
 * The transport is a fake that plays an SSE body through on_data, in
 * pieces of a chosen size, as libcurl's write callback would.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/chunks.h"
#include "agent/turn.h"
#include "gemini/gemini.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"

#include "unit_fixture.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTEMPTS 4

/* --- the fake transport ------------------------------------------------- */

struct attempt {
    long status;        /* HTTP status */
    const char *body;   /* what the server sends */
    enum gemini_net net; /* how the transfer ends once the body is out */
};

struct fake {
    const struct attempt *at;
    size_t n, calls;
    size_t piece; /* bytes per on_data call (0: all at once) */
    long now;
    const char *url;
    char keys[MAX_ATTEMPTS][32]; /* the secret each attempt was sent */
};

static int
fake_post(void *ctx, const char *url, const char *api_key, const char *body,
          size_t len, long timeout_ms, struct gemini_http *out)
{
    struct fake *f = ctx;
    const struct attempt *a;
    size_t left, off = 0;

    (void)body, (void)len, (void)timeout_ms;
    ck_assert_msg(f->calls < f->n, "unexpected attempt %zu", f->calls + 1);
    snprintf(f->keys[f->calls], sizeof(f->keys[0]), "%s", api_key);
    a = &f->at[f->calls++];
    f->url = url;
    f->now += 10;
    out->status = a->status;
    out->net = a->net;
    left = strlen(a->body);
    if (out->on_data == NULL || a->status < 200 || a->status > 299) {
        ck_assert_int_eq(sbuf_add(&out->body, a->body, left), 0);
        return 0;
    }
    while (left > 0) {
        size_t k = f->piece == 0 || f->piece > left ? left : f->piece;
        if (out->on_data(out->on_data_ctx, a->body + off, k) != 0) {
            out->net = GEMINI_NET_SINK;
            return 0;
        }
        off += k;
        left -= k;
    }
    return 0;
}

static void
fake_sleep(void *ctx, long ms)
{
    ((struct fake *)ctx)->now += ms;
}

static long
fake_now(void *ctx)
{
    return ((struct fake *)ctx)->now;
}

/* What the text callback saw; `stop_after`: fail on that delta (gone). */
struct deltas {
    struct sbuf all;
    size_t count, stop_after;
};

static int
on_text(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct deltas *d = ctx;

    d->count++;
    if (d->stop_after != 0 && d->count == d->stop_after)
        return status_set(err, ST_CLIENT_GONE, "gone");
    ck_assert_int_eq(sbuf_add(&d->all, text, len), 0);
    return 0;
}

static const struct gemini_stream_ops ops = {on_text};

struct run {
    struct fake f;
    struct gemini g;
    struct config cfg;
    struct arena a;
    struct deltas d;
    struct gemini_usage usage;
    struct status_error err;
    json_t *resp;
    int rc;
};

/* A run's client set up (before_run), for a test that sets more. */
static void (*before_run)(struct gemini *g);

static void
run_stream(struct run *r, const struct attempt *at, size_t n, size_t piece)
{
    static char key[] = "test-key", model[] = "gemini-3.8-flash",
                base[] = "http://gemini.test";
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &r->f};

    memset(r, 0, sizeof(*r));
    r->f.at = at;
    r->f.n = n;
    r->f.piece = piece;
    r->cfg.gemini.api_key = key;
    r->cfg.gemini.model = model;
    r->cfg.gemini.base_url = base;
    r->cfg.gemini.timeout_ms = 60000;
    gemini_init_transport(&r->g, &t);
    if (before_run != NULL)
        before_run(&r->g);
    arena_init(&r->a);
    sbuf_init(&r->d.all, 1u << 24);
    struct gemini_request rq = {&r->cfg.gemini, "{}", 2, &r->a, &r->usage};
    r->rc = gemini_stream(&r->g, &rq, &ops, &r->d, &r->resp, &r->err);
}

static void
run_done(struct run *r)
{
    sbuf_release(&r->d.all);
    arena_release(&r->a);
    gemini_release(&r->g);
}

static json_t *
parts_of(json_t *resp)
{
    return json_object_get(
        json_object_get(json_array_get(json_object_get(resp, "candidates"), 0),
                        "content"),
        "parts");
}

/* The SSE of a list of chunk objects given as JSON text. */
#define EV(json) "data: " json "\r\n\r\n"
#define TEXT(t, extra)                                                       \
    EV("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"" t "\"" extra \
       "}],\"role\":\"model\"},\"index\":0}]}")
#define FINISH                                                               \
    EV("{\"candidates\":[{\"content\":{\"parts\":[],\"role\":\"model\"},"    \
       "\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":"          \
       "{\"totalTokenCount\":9},\"modelVersion\":\"m\"}")

/* --- the fixtures: any chunking, the same answer ------------------------ */

static const char *const sse_fixtures[] = {
    "09a-stream-text-single-chunk.sse.txt",
    "09b-stream-text-many-chunks.sse.txt",
    "10a-stream-function-call-signature.sse.txt",
    "10b-stream-after-function-response.sse.txt",
};

START_TEST(fixture_assembles_the_same_in_any_pieces)
{
    size_t len;
    char *body = unit_fixture(sse_fixtures[_i], &len);
    struct attempt at = {200, body, GEMINI_NET_OK};
    struct run whole, r;
    char *want, *got;
    static const size_t pieces[] = {1, 2, 7, 100, 4096};

    run_stream(&whole, &at, 1, 0);
    ck_assert_msg(whole.rc == 0, "%s: %s", sse_fixtures[_i], whole.err.text);
    ck_assert_int_eq(whole.f.calls, 1);
    ck_assert_str_eq(whole.f.url, "http://gemini.test/v1beta/models/"
                                  "gemini-3.8-flash:streamGenerateContent"
                                  "?alt=sse");
    /* the deltas are the text of the turn, in order */
    {
        json_t *parts = parts_of(whole.resp), *p;
        size_t i;
        struct sbuf joined;
        sbuf_init(&joined, 1u << 24);
        json_array_foreach(parts, i, p) {
            json_t *t = json_object_get(p, "text");
            if (json_is_string(t) && !json_is_true(json_object_get(p, "thought")))
                ck_assert_int_eq(sbuf_add(&joined, json_string_value(t),
                                          json_string_length(t)),
                                 0);
        }
        ck_assert_uint_eq(joined.len, whole.d.all.len);
        if (joined.len > 0)
            ck_assert_int_eq(memcmp(joined.buf, whole.d.all.buf, joined.len),
                             0);
        sbuf_release(&joined);
    }
    want = json_dumps(whole.resp, JSON_COMPACT);
    for (size_t k = 0; k < ARRAY_SIZE(pieces); k++) {
        run_stream(&r, &at, 1, pieces[k]);
        ck_assert_int_eq(r.rc, 0);
        got = json_dumps(r.resp, JSON_COMPACT);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(r.d.count, whole.d.count);
        free(got);
        run_done(&r);
    }
    free(want);
    run_done(&whole);
    free(body);
}
END_TEST

/* 09b: 123 deltas of one unsigned text become one part; the usage is the
 * last chunk's (cumulative), not a sum; finishReason from the last. */
START_TEST(many_deltas_become_one_part)
{
    size_t len;
    char *body = unit_fixture("09b-stream-text-many-chunks.sse.txt", &len);
    struct attempt at = {200, body, GEMINI_NET_OK};
    struct run r;
    json_t *parts, *cand;

    run_stream(&r, &at, 1, 0);
    ck_assert_int_eq(r.rc, 0);
    parts = parts_of(r.resp);
    ck_assert_uint_eq(json_array_size(parts), 1);
    ck_assert_uint_eq(r.d.count, 123);
    cand = json_array_get(json_object_get(r.resp, "candidates"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(cand, "finishReason")),
                     "STOP");
    /* the last event's usage, which is the largest */
    ck_assert_ptr_nonnull(strstr(body, "\"totalTokenCount\": "));
    {
        long total = (long)json_integer_value(json_object_get(
            json_object_get(r.resp, "usageMetadata"), "totalTokenCount"));
        const char *last = NULL, *p = body;
        while ((p = strstr(p, "\"totalTokenCount\": ")) != NULL)
            last = p++;
        ck_assert_int_eq(total, strtol(last + 19, NULL, 10));
    }
    run_done(&r);
    free(body);
}
END_TEST

/* A signature stays on the part and the text it came with: the first
 * delta, the last delta, or a part of its own; unsigned neighbours are
 * joined, thoughts apart from answers, and a field only a later delta
 * has is kept. */
START_TEST(signatures_stay_where_they_came)
{
    static const char body[] =
        TEXT("Hel", ",\"thoughtSignature\":\"S1\"") TEXT("lo", "")
        TEXT(" world", ",\"extra\":1") TEXT("", ",\"thoughtSignature\":\"S2\"")
        TEXT("hmm", ",\"thought\":true") TEXT("!", "")
        TEXT("end", ",\"thoughtSignature\":\"S3\"") FINISH;
    static const char *const want =
        "[{\"text\":\"Hel\",\"thoughtSignature\":\"S1\"},"
        "{\"text\":\"lo world\",\"extra\":1},"
        "{\"text\":\"\",\"thoughtSignature\":\"S2\"},"
        "{\"text\":\"hmm\",\"thought\":true},"
        "{\"text\":\"!\"},"
        "{\"text\":\"end\",\"thoughtSignature\":\"S3\"}]";
    struct attempt at = {200, body, GEMINI_NET_OK};
    struct run r;
    char *got;

    run_stream(&r, &at, 1, 3);
    ck_assert_msg(r.rc == 0, "%s", r.err.text);
    got = json_dumps(parts_of(r.resp), JSON_COMPACT);
    ck_assert_str_eq(got, want);
    /* deltas: visible text only, thoughts not */
    ck_assert_uint_eq(r.d.all.len, strlen("Hello world!end"));
    ck_assert_int_eq(memcmp(r.d.all.buf, "Hello world!end", r.d.all.len), 0);
    free(got);
    run_done(&r);
}
END_TEST

/* Streamed, the answer is what generateContent answers for the same
 * turn: fixture 01's text, cut into deltas, gives back fixture 01. */
START_TEST(assembled_equals_the_whole_answer)
{
    size_t len;
    char *unary = unit_fixture("01-text-reply.response.json", &len);
    json_t *whole = json_loads(unary, 0, NULL), *cand, *part, *chunk;
    struct sbuf sse;
    struct run r;
    const char *text;
    size_t n, cut[3];
    char *a, *b;

    ck_assert_ptr_nonnull(whole);
    cand = json_array_get(json_object_get(whole, "candidates"), 0);
    part = json_array_get(
        json_object_get(json_object_get(cand, "content"), "parts"), 0);
    text = json_string_value(json_object_get(part, "text"));
    n = strlen(text);
    cut[0] = 0, cut[1] = n / 3, cut[2] = 2 * n / 3;
    sbuf_init(&sse, 1u << 20);
    for (int i = 0; i < 3; i++) {
        size_t end = i == 2 ? n : cut[i + 1];
        chunk = json_deep_copy(whole);
        json_t *c0 = json_array_get(json_object_get(chunk, "candidates"), 0);
        json_t *p0 = json_array_get(
            json_object_get(json_object_get(c0, "content"), "parts"), 0);
        json_object_set_new(p0, "text",
                            json_stringn(text + cut[i], end - cut[i]));
        if (i < 2)
            json_object_del(c0, "finishReason");
        char *line = json_dumps(chunk, JSON_COMPACT);
        ck_assert_int_eq(sbuf_adds(&sse, "data: ") | sbuf_adds(&sse, line) |
                             sbuf_adds(&sse, "\n\n"),
                         0);
        free(line);
        json_decref(chunk);
    }
    ck_assert_int_eq(sbuf_putc(&sse, '\0'), 0);
    struct attempt at = {200, sse.buf, GEMINI_NET_OK};
    run_stream(&r, &at, 1, 5);
    ck_assert_int_eq(r.rc, 0);
    a = json_dumps(whole, JSON_COMPACT | JSON_SORT_KEYS);
    b = json_dumps(r.resp, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(b, a);
    free(a);
    free(b);
    run_done(&r);
    sbuf_release(&sse);
    json_decref(whole);
    free(unary);
}
END_TEST

/* --- breaks: retried only while nothing went out ------------------------ */

START_TEST(break_before_text_is_tried_again)
{
    /* usage only, then the end: no finishReason */
    static const struct attempt at[] = {
        {200, EV("{\"usageMetadata\":{\"totalTokenCount\":1}}"),
         GEMINI_NET_OK},
        {200, TEXT("ok", "") FINISH, GEMINI_NET_OK},
    };
    struct run r;

    run_stream(&r, at, 2, 0);
    ck_assert_msg(r.rc == 0, "%s", r.err.text);
    ck_assert_uint_eq(r.f.calls, 2);
    ck_assert_int_eq(r.usage.calls, 2);
    ck_assert_uint_eq(r.d.all.len, 2);
    run_done(&r);
}
END_TEST

START_TEST(break_before_text_twice_fails)
{
    static const struct attempt at[] = {
        {200, "", GEMINI_NET_OK},
        {200, EV("{\"usageMetadata\":{}}"), GEMINI_NET_OK},
    };
    struct run r;

    run_stream(&r, at, 2, 0);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_DOWN);
    ck_assert_uint_eq(r.f.calls, 2);
    run_done(&r);
}
END_TEST

/* After text went out, a break is an error, never a shorter answer. */
START_TEST(break_after_text_is_an_error)
{
    static const struct attempt cases[][1] = {
        {{200, TEXT("Half an", ""), GEMINI_NET_OK}},       /* no finish */
        {{200, TEXT("Half an", ""), GEMINI_NET_CONNECT}},  /* dropped */
        {{200, TEXT("Half an", ""), GEMINI_NET_STALL}},    /* stalled */
        {{200,
          TEXT("Half an", "") "{\"error\":{\"code\":500,\"message\":\"x\","
                              "\"status\":\"INTERNAL\"}}\n",
          GEMINI_NET_OK}}, /* Gemini's error mid-stream */
        {{200, TEXT("Half an", "") EV("{not json"), GEMINI_NET_OK}},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct run r;
        run_stream(&r, cases[i], 1, 4);
        ck_assert_msg(r.rc == -1, "case %zu", i);
        ck_assert_int_eq(r.err.code, ST_UPSTREAM_DOWN);
        ck_assert_ptr_nonnull(strstr(r.err.text, "broke off"));
        ck_assert_uint_eq(r.f.calls, 1);
        ck_assert_uint_eq(r.d.all.len, 7);
        ck_assert_ptr_null(r.resp);
        run_done(&r);
    }
}
END_TEST

/* An error status is read whole and retried as without a stream. */
START_TEST(error_status_is_not_a_stream)
{
    static const struct attempt at[] = {
        {503,
         "{\"error\":{\"code\":503,\"message\":\"busy\",\"status\":"
         "\"UNAVAILABLE\"}}",
         GEMINI_NET_OK},
        {200, TEXT("fine", "") FINISH, GEMINI_NET_OK},
    };
    static const struct attempt refused[] = {
        {404,
         "{\n  \"error\": {\n    \"code\": 404,\n    \"message\": \"no\",\n"
         "    \"status\": \"NOT_FOUND\"\n  }\n}\n",
         GEMINI_NET_OK},
    };
    struct run r;

    run_stream(&r, at, 2, 0);
    ck_assert_msg(r.rc == 0, "%s", r.err.text);
    ck_assert_uint_eq(r.f.calls, 2);
    run_done(&r);
    run_stream(&r, refused, 1, 0);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_REJECTED);
    run_done(&r);
}
END_TEST

/* The reader hangs up: the call ends at once, and is not tried again. */
START_TEST(reader_gone_stops_the_call)
{
    static const struct attempt at[] = {
        {200, TEXT("one", "") TEXT(" two", "") FINISH, GEMINI_NET_OK},
    };
    struct run r;

    memset(&r, 0, sizeof(r));
    run_stream(&r, at, 1, 0); /* once without stopping, for the count */
    ck_assert_int_eq(r.rc, 0);
    run_done(&r);

    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &r.f};
    static char key[] = "k", model[] = "m", base[] = "http://x";
    memset(&r, 0, sizeof(r));
    r.f.at = at;
    r.f.n = 1;
    r.cfg.gemini.api_key = key;
    r.cfg.gemini.model = model;
    r.cfg.gemini.base_url = base;
    r.cfg.gemini.timeout_ms = 60000;
    gemini_init_transport(&r.g, &t);
    arena_init(&r.a);
    sbuf_init(&r.d.all, 1024);
    r.d.stop_after = 2;
    struct gemini_request rq = {&r.cfg.gemini, "{}", 2, &r.a, &r.usage};
    r.rc = gemini_stream(&r.g, &rq, &ops, &r.d, &r.resp, &r.err);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_CLIENT_GONE);
    ck_assert_uint_eq(r.f.calls, 1);
    run_done(&r);
}
END_TEST

/* An event over the cap is a bad response, not a crash or a hang. */
START_TEST(chunks_of_other_shapes)
{
    /* a refused prompt finishes without a candidate */
    static const struct attempt blocked[] = {
        {200,
         EV("{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},"
            "\"usageMetadata\":{\"totalTokenCount\":3}}"),
         GEMINI_NET_OK},
    };
    struct run r;

    run_stream(&r, blocked, 1, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(r.resp, "promptFeedback"),
                         "blockReason")),
                     "SAFETY");
    ck_assert_ptr_null(json_object_get(r.resp, "candidates"));
    run_done(&r);
}
END_TEST

/* --- malformed streams ------------------------------------- */

#define CAND_EV(cand, usage)                                                 \
    EV("{\"candidates\":[" cand "]" usage ",\"modelVersion\":\"m\"}")
#define USAGE_EV(fields) ",\"usageMetadata\":{" fields "}"

static const struct malformed {
    const char *name;
    const char *body;
    enum status code; /* of the call, or of turn_parse after it */
    enum turn_end end;     /* when both succeed */
    const char *text;
    long prompt, candidates, thoughts, total;
} malformed_cases[] = {
    {"no candidates, no finish", EV("{\"usageMetadata\":{\"totalTokenCount\""
                                    ":3},\"modelVersion\":\"m\"}"),
     ST_UPSTREAM_DOWN, TURN_OTHER, "", 0, 0, 0, 0},
    {"empty candidates", EV("{\"candidates\":[],\"modelVersion\":\"m\"}"),
     ST_UPSTREAM_DOWN, TURN_OTHER, "", 0, 0, 0, 0},
    {"a candidate without content",
     CAND_EV("{\"finishReason\":\"STOP\",\"index\":0}", ""), ST_OK, TURN_DONE,
     "", 0, 0, 0, 0},
    {"empty parts",
     CAND_EV("{\"content\":{\"parts\":[],\"role\":\"model\"},"
             "\"finishReason\":\"STOP\"}",
             ""),
     ST_OK, TURN_DONE, "", 0, 0, 0, 0},
    {"a part of an unknown kind",
     TEXT("hi", "") CAND_EV("{\"content\":{\"parts\":[{\"toolCall\":{\"x\":1}}"
                            "],\"role\":\"model\"}}",
                            "") FINISH,
     ST_OK, TURN_DONE, "hi", 0, 0, 0, 9},
    {"an unknown finishReason",
     TEXT("hi", "") CAND_EV("{\"finishReason\":\"NEW_IN_2027\"}", ""), ST_OK,
     TURN_OTHER, "hi", 0, 0, 0, 0},
    {"a functionResponse from the model",
     CAND_EV("{\"content\":{\"parts\":[{\"functionResponse\":{\"name\":\"a\","
             "\"response\":{}}}],\"role\":\"model\"},\"finishReason\":\"STOP\"}",
             ""),
     ST_UPSTREAM_BAD, TURN_OTHER, "", 0, 0, 0, 0},
    {"huge, negative, real and string counts",
     TEXT("hi", "") CAND_EV(
         "{\"finishReason\":\"STOP\"}",
         USAGE_EV("\"promptTokenCount\":9223372036854775807,"
                  "\"candidatesTokenCount\":1.5e300,\"thoughtsTokenCount\":-5,"
                  "\"totalTokenCount\":\"7\"")),
     ST_OK, TURN_DONE, "hi", LONG_MAX, LONG_MAX, 0, 0},
    {"a count past int64 after text",
     TEXT("hi", "") CAND_EV("{\"finishReason\":\"STOP\"}",
                            USAGE_EV("\"promptTokenCount\":"
                                     "99999999999999999999")),
     ST_UPSTREAM_DOWN, TURN_OTHER, "", 0, 0, 0, 0},
    /* text no later request could carry: refused as Gemini's JSON is */
    {"a NUL in the text", TEXT("a\\u0000b", "") FINISH, ST_UPSTREAM_DOWN,
     TURN_OTHER, "", 0, 0, 0, 0},
    {"invalid UTF-8 in the text", TEXT("a\xff\xfe", "") FINISH,
     ST_UPSTREAM_DOWN, TURN_OTHER, "", 0, 0, 0, 0},
    /* a chunk that brings no candidate brings no finish either */
    {"candidates not an array", EV("{\"candidates\":{}}"), ST_UPSTREAM_DOWN,
     TURN_OTHER, "", 0, 0, 0, 0},
};

/* Each ends in a clear error or a sensible turn: never a crash, a hang
 * or a wrapped count. */
START_TEST(malformed_streams)
{
    const struct malformed *x = &malformed_cases[_i];
    const struct attempt at[] = {{200, x->body, GEMINI_NET_OK},
                                 {200, x->body, GEMINI_NET_OK}};
    struct status_error err = {0};
    struct turn t;
    struct run r;
    int rc;

    run_stream(&r, at, 2, 0);
    rc = r.rc;
    err = r.err;
    if (rc == 0)
        rc = turn_parse(r.resp, NULL, &r.a, &t, &err);
    ck_assert_msg(err.code == x->code, "%s: %s (%d)", x->name, err.text,
                  (int)err.code);
    if (rc == 0) {
        ck_assert_int_eq(t.end, x->end);
        ck_assert_str_eq(t.text, x->text);
        ck_assert_int_eq(t.prompt_tokens, x->prompt);
        ck_assert_int_eq(t.candidates_tokens, x->candidates);
        ck_assert_int_eq(t.thoughts_tokens, x->thoughts);
        ck_assert_int_eq(t.total_tokens, x->total);
    } else {
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strlen(err.text) > 0, "%s: no message", x->name);
    }
    run_done(&r);
}
END_TEST

/* --- Vertex AI's function calls in parts (wire §6.4, fixture 11) ------- */

/* Fixture 11's chunks (a JSON array) as an SSE body. */
static char *
f11_sse(void)
{
    size_t len, i;
    char *text = unit_fixture("11-vertex-stream-partial-args.stream-chunks.json",
                              &len);
    json_t *chunks = json_loadb(text, len, 0, NULL), *c;
    struct sbuf sb;

    ck_assert_ptr_nonnull(chunks);
    sbuf_init(&sb, 1u << 24);
    json_array_foreach(chunks, i, c) {
        char *one = json_dumps(c, JSON_COMPACT);
        ck_assert_int_eq(sbuf_addf(&sb, "data: %s\r\n\r\n", one), 0);
        free(one);
    }
    ck_assert_int_eq(sbuf_putc(&sb, '\0'), 0);
    json_decref(chunks);
    free(text);
    return sbuf_detach(&sb, NULL);
}

/* The recorded call: ten chunks, eight fragments over four paths, given
 * whole as one part, however the bytes arrive. */
START_TEST(vertex_partial_args_become_one_call)
{
    char *body = f11_sse();
    struct attempt at = {200, body, GEMINI_NET_OK};
    static const size_t pieces[] = {0, 1, 7, 333};
    json_t *want = json_loads(
        "{\"country\":\"USA\",\"location\":\"NewYorkCity\","
        "\"purpose\":\"to know what to wear today\",\"unit\":\"C\"}",
        0, NULL);

    for (size_t k = 0; k < ARRAY_SIZE(pieces); k++) {
        struct run r;
        json_t *parts, *part, *fc, *frags;

        run_stream(&r, &at, 1, pieces[k]);
        ck_assert_msg(r.rc == 0, "%s", r.err.text);
        parts = parts_of(r.resp);
        ck_assert_uint_eq(json_array_size(parts), 1);
        part = json_array_get(parts, 0);
        fc = json_object_get(part, "functionCall");
        ck_assert_str_eq(json_string_value(json_object_get(fc, "name")),
                         "getCurrentWeather");
        ck_assert(json_equal(json_object_get(fc, "args"), want));
        ck_assert_ptr_null(json_object_get(fc, "willContinue"));
        /* the first chunk's signature stays on the call */
        ck_assert_ptr_nonnull(strstr(body, json_string_value(json_object_get(
                                               part, "thoughtSignature"))));
        ck_assert_int_eq(strncmp(json_string_value(json_object_get(
                                     part, "thoughtSignature")),
                                 "CiQB4/H/XgNlLzYf", 16),
                         0);
        /* the fragments as received, in order */
        frags = json_object_get(fc, "partialArgs");
        ck_assert_uint_eq(json_array_size(frags), 8);
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(frags, 0), "stringValue")),
                         "USA");
        ck_assert(json_is_true(
            json_object_get(json_array_get(frags, 0), "willContinue")));
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(frags, 7), "jsonPath")),
                         "$.unit");
        /* the last chunk's usage and finishReason */
        ck_assert_int_eq(json_integer_value(json_object_get(
                             json_object_get(r.resp, "usageMetadata"),
                             "totalTokenCount")),
                         162);
        ck_assert_uint_eq(r.d.count, 0);
        run_done(&r);
    }
    json_decref(want);
    free(body);
}
END_TEST

#define CALL(fc, extra)                                                      \
    EV("{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":" fc     \
       extra "}],\"role\":\"model\"},\"index\":0}]}")

/* Paths into nested objects and arrays, quoted names, each kind of value,
 * a string in three fragments, text between the fragments, and a small
 * call in one part (one partialArgs list, no willContinue). */
START_TEST(partial_args_paths_and_values)
{
    static const char body[] =
        CALL("{\"name\":\"f\",\"id\":\"c1\",\"willContinue\":true}",
             ",\"thoughtSignature\":\"SIG\"")
        CALL("{\"partialArgs\":[{\"jsonPath\":\"$.a.b[1]\",\"numberValue\":5},"
             "{\"jsonPath\":\"$['c d']\",\"boolValue\":true},"
             "{\"jsonPath\":\"$.e\",\"nullValue\":\"NULL_VALUE\"},"
             "{\"jsonPath\":\"$.s\",\"stringValue\":\"x\","
             "\"willContinue\":true}],\"willContinue\":true}", "")
        TEXT("between", "")
        CALL("{\"partialArgs\":[{\"jsonPath\":\"$.s\",\"stringValue\":\"y\","
             "\"willContinue\":true}],\"willContinue\":true}", "")
        CALL("{\"partialArgs\":[{\"jsonPath\":\"$.s\",\"stringValue\":\"z\"},"
             "{\"jsonPath\":\"$[\\\"q\\\"][0].k\",\"stringValue\":\"v\"}]}", "")
        CALL("{\"name\":\"g\",\"partialArgs\":[{\"jsonPath\":\"$.n\","
             "\"numberValue\":1.5}]}", "")
        FINISH;
    struct attempt at = {200, body, GEMINI_NET_OK};
    struct run r;
    char *got;

    run_stream(&r, &at, 1, 5);
    ck_assert_msg(r.rc == 0, "%s", r.err.text);
    json_t *parts = parts_of(r.resp);
    ck_assert_uint_eq(json_array_size(parts), 3);
    got = json_dumps(json_object_get(
                         json_object_get(json_array_get(parts, 0),
                                         "functionCall"),
                         "args"),
                     JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(got, "{\"a\":{\"b\":[null,5]},\"c d\":true,\"e\":null,"
                          "\"q\":[{\"k\":\"v\"}],\"s\":\"xyz\"}");
    free(got);
    /* the call stays where it began, before the text; its members */
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(parts, 0),
                                         "functionCall"),
                         "id")),
                     "c1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(parts, 0), "thoughtSignature")),
                     "SIG");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(parts, 1), "text")),
                     "between");
    got = json_dumps(json_object_get(json_array_get(parts, 2),
                                     "functionCall"),
                     JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(got, "{\"args\":{\"n\":1.5},\"name\":\"g\","
                          "\"partialArgs\":[{\"jsonPath\":\"$.n\","
                          "\"numberValue\":1.5}]}");
    free(got);
    run_done(&r);
}
END_TEST

/* A call still open at the end, or a path we cannot read: an error,
 * never a call with part of its arguments. */
START_TEST(partial_args_broken)
{
    static const char cut[] =
        CALL("{\"name\":\"f\",\"willContinue\":true}", "")
        CALL("{\"partialArgs\":[{\"jsonPath\":\"$.a\",\"stringValue\":\"x\"}],"
             "\"willContinue\":true}", "")
        FINISH;
    static const char *const bad_paths[] = {
        "a", "$", "$.", "$..a", "$[x]", "$['a]", "$.a[*]", "$[99999]",
    };
    struct attempt at = {200, cut, GEMINI_NET_OK};
    struct run r;

    run_stream(&r, &at, 1, 0);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_BAD);
    run_done(&r);
    for (size_t i = 0; i < ARRAY_SIZE(bad_paths); i++) {
        char body[512];
        snprintf(body, sizeof(body),
                 CALL("{\"name\":\"f\",\"partialArgs\":[{\"jsonPath\":\"%s\","
                      "\"numberValue\":1}]}", "") FINISH,
                 bad_paths[i]);
        at.body = body;
        run_stream(&r, &at, 1, 0);
        ck_assert_msg(r.rc == -1 && r.err.code == ST_UPSTREAM_BAD, "%s",
                      bad_paths[i]);
        run_done(&r);
    }
}
END_TEST

/* --- the credential hook and Vertex AI's URL ---------------------------- */

static int secret_asks, secret_forced;

static int
fake_secret(void *ctx, bool force, const char **secret,
            struct status_error *err)
{
    static char tok[2][16] = {"tok-1", "tok-2"};

    (void)ctx, (void)err;
    secret_asks++;
    secret_forced += force;
    *secret = tok[secret_forced > 1 ? 1 : secret_forced];
    return 0;
}

static void
with_secret(struct gemini *g)
{
    g->auth = GEMINI_AUTH_BEARER;
    g->secret = fake_secret;
    g->vertex_project = "proj-1";
    g->vertex_location = "global";
}

#define E401 "{\"error\":{\"code\":401,\"status\":\"UNAUTHENTICATED\"}}"

/* A 401: a new token once, the call tried again at once with it, on
 * Vertex AI's path; a second 401 is the answer. Without the hook, the
 * first 401 is. */
START_TEST(unauthorized_refreshes_once)
{
    static const struct attempt once[] = {
        {401, E401, GEMINI_NET_OK},
        {200, TEXT("ok", "") FINISH, GEMINI_NET_OK},
    };
    static const struct attempt twice[] = {
        {401, E401, GEMINI_NET_OK},
        {401, E401, GEMINI_NET_OK},
    };
    struct run r;

    secret_asks = secret_forced = 0;
    before_run = with_secret;
    run_stream(&r, once, 2, 0);
    ck_assert_msg(r.rc == 0, "%s", r.err.text);
    ck_assert_int_eq(r.f.calls, 2);
    ck_assert_str_eq(r.f.keys[0], "tok-1");
    ck_assert_str_eq(r.f.keys[1], "tok-2");
    ck_assert_int_eq(secret_asks, 2);
    ck_assert_int_eq(secret_forced, 1);
    ck_assert_str_eq(r.f.url, "http://gemini.test/v1/projects/proj-1/"
                              "locations/global/publishers/google/models/"
                              "gemini-3.8-flash:streamGenerateContent"
                              "?alt=sse");
    run_done(&r);

    secret_asks = secret_forced = 0;
    run_stream(&r, twice, 2, 0);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_AUTH);
    ck_assert_int_eq(r.f.calls, 2);
    ck_assert_int_eq(secret_forced, 1);
    run_done(&r);

    before_run = NULL;
    run_stream(&r, twice, 2, 0);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_AUTH);
    ck_assert_int_eq(r.f.calls, 1);
    ck_assert_str_eq(r.f.keys[0], "test-key");
    run_done(&r);
}
END_TEST

Suite *
stream_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, fixture_assembles_the_same_in_any_pieces, 0,
                        (int)ARRAY_SIZE(sse_fixtures));
    tcase_add_test(tc, many_deltas_become_one_part);
    tcase_add_test(tc, signatures_stay_where_they_came);
    tcase_add_test(tc, assembled_equals_the_whole_answer);
    tcase_add_test(tc, break_before_text_is_tried_again);
    tcase_add_test(tc, break_before_text_twice_fails);
    tcase_add_test(tc, break_after_text_is_an_error);
    tcase_add_test(tc, error_status_is_not_a_stream);
    tcase_add_test(tc, reader_gone_stops_the_call);
    tcase_add_test(tc, chunks_of_other_shapes);
    tcase_add_loop_test(tc, malformed_streams, 0,
                        (int)ARRAY_SIZE(malformed_cases));
    tcase_add_test(tc, vertex_partial_args_become_one_call);
    tcase_add_test(tc, partial_args_paths_and_values);
    tcase_add_test(tc, partial_args_broken);
    tcase_add_test(tc, unauthorized_refreshes_once);
    suite_add_tcase(s, tc);
    return s;
}
