/*
 * check_turn.c - turn_parse() on every recorded Gemini response and on
 * hand-made odd ones.
 *
 * The recorded bodies live in ../data/gemini-fixtures (see its README):
 * each *.response.json, each element of each *.stream-chunks.json and
 * each `data:` event of each *.sse.txt is parsed as a response of its
 * own. Every kept part must be the very json_t of the input (a shared
 * reference, so thoughtSignature and unknown fields survive), and the
 * references turn_parse() takes must all be returned by the arena.
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/turn.h"
#include "agent/history.h"
#include "core/bounds.h"
#include "core/jscan.h"
#include "core/jsonin.h"
#include "core/arena.h"
#include "core/status.h"

#include <check.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES "../data/gemini-fixtures"

/* --- helpers -------------------------------------------------------------- */

static json_t *
load_file(const char *name)
{
    char path[512];
    json_error_t jerr;
    json_t *v;

    snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
    v = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    ck_assert_msg(v != NULL, "%s: %s (line %d)", path, jerr.text, jerr.line);
    return v;
}

static json_t *
load_str(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                           &jerr);

    ck_assert_msg(v != NULL, "bad test JSON: %s: %s", jerr.text, text);
    return v;
}

/* The parts of candidates[0] as sent, or NULL. */
static json_t *
sent_parts(const json_t *response)
{
    json_t *cands = json_object_get(response, "candidates");

    return json_object_get(json_object_get(json_array_get(cands, 0), "content"),
                           "parts");
}

/* Whether turn_parse() should have dropped this part. */
static bool
droppable(const json_t *part)
{
    const json_t *text = json_object_get(part, "text");

    if (!json_is_object(part) || json_object_size(part) == 0)
        return true;
    /* a kind history_check does not know, with no signature to keep */
    if (!history_part_known(part) &&
        !json_is_string(json_object_get(part, "thoughtSignature")))
        return true;
    return json_object_size(part) == 1 && json_is_string(text) &&
           json_string_length(text) == 0;
}

/*
 * What holds for every successful parse: content is {"role":"model",
 * "parts"} whose parts are the non-empty sent parts, by pointer, with one
 * more reference each; the calls point into those parts; the text is the
 * join of the visible texts.
 */
static void
assert_sound(const json_t *response, const struct turn *t)
{
    const json_t *sent = sent_parts(response), *part;
    const json_t *kept = json_object_get(t->content, "parts");
    size_t i, k = 0, c = 0;
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(t->text);
    ck_assert_ptr_nonnull(t->reason);
    if (json_object_get(json_object_get(response, "promptFeedback"),
                        "blockReason") != NULL) {
        /* A blocked prompt keeps nothing, whatever else came. */
        ck_assert_ptr_null(t->content);
        sent = NULL;
    }
    if (t->content != NULL) {
        ck_assert_uint_eq(json_object_size(t->content), 2);
        ck_assert_str_eq(
            json_string_value(json_object_get(t->content, "role")), "model");
        ck_assert(json_is_array(kept));
        ck_assert_uint_gt(json_array_size(kept), 0);
        /* Ours and the response's, nothing else: a copy would be 1. */
        ck_assert_uint_eq(t->content->refcount, 1);
    }
    json_array_foreach(sent, i, part) {
        const json_t *fc, *text_v;

        if (droppable(part))
            continue;
        if (!history_part_known(part)) {
            /* only its signature goes back, on an empty text */
            const json_t *copy = json_array_get(kept, k++);
            ck_assert_str_eq(json_string_value(json_object_get(copy, "text")),
                             "");
            ck_assert(json_equal(json_object_get(copy, "thoughtSignature"),
                                 json_object_get(part, "thoughtSignature")));
            continue;
        }
        ck_assert_msg(json_array_get(kept, k) == part,
                      "sent part %zu is not kept part %zu by reference", i, k);
        /* One reference from the response, one from content. */
        ck_assert_uint_eq(part->refcount, 2);
        ck_assert(json_equal(part, json_array_get(kept, k)));
        fc = json_object_get(part, "functionCall");
        if (fc != NULL && t->end != TURN_MALFORMED) {
            const json_t *id = json_object_get(fc, "id");
            const json_t *args = json_object_get(fc, "args");
            ck_assert_uint_lt(c, t->ncalls);
            ck_assert_uint_eq(t->calls[c].part, k);
            ck_assert_str_eq(t->calls[c].name,
                             json_string_value(json_object_get(fc, "name")));
            if (!json_is_string(id))
                ck_assert_ptr_null(t->calls[c].id);
            else
                ck_assert_str_eq(t->calls[c].id, json_string_value(id));
            if (args != NULL) {
                ck_assert_ptr_eq(t->calls[c].args, args);
            } else {
                ck_assert(json_is_object(t->calls[c].args));
                ck_assert_uint_eq(json_object_size(t->calls[c].args), 0);
            }
            c++;
        }
        text_v = json_object_get(part, "text");
        if (json_is_string(text_v) &&
            !json_is_true(json_object_get(part, "thought")))
            fputs(json_string_value(text_v), f);
        k++;
    }
    fclose(f);
    ck_assert_uint_eq(json_array_size(kept), k);
    ck_assert_uint_eq(t->ncalls, c);
    ck_assert_str_eq(t->text, text);
    free(text);
}

/* Parse, check what always holds, release, and check no reference leaked. */
struct parsed {
    struct arena a;
    struct turn t;
    struct status_error err;
    int rc;
};

static void
parse(const json_t *response, struct parsed *p)
{
    arena_init(&p->a);
    memset(&p->err, 0, sizeof(p->err));
    p->rc = turn_parse(response, NULL, &p->a, &p->t, &p->err);
    if (p->rc == 0) {
        ck_assert_int_eq(p->err.code, ST_OK);
        assert_sound(response, &p->t);
    } else {
        ck_assert_int_eq(p->rc, -1);
        ck_assert_ptr_null(p->t.content);
        ck_assert_uint_eq(p->t.ncalls, 0);
        ck_assert_ptr_nonnull(p->t.text);
        ck_assert_ptr_nonnull(p->t.reason);
    }
}

static void
release(const json_t *response, struct parsed *p)
{
    const json_t *part;
    size_t i;

    arena_release(&p->a);
    /* Scalars may be shared singletons (null, true): objects only. */
    json_array_foreach(sent_parts(response), i, part)
        if (json_is_object(part))
            ck_assert_uint_eq(part->refcount, 1);
}

/* --- recorded responses --------------------------------------------------- */

enum { NO_CHUNK = -1 };

struct fx {
    const char *file;
    int chunk;          /* element of a *.stream-chunks.json, or NO_CHUNK */
    enum status status; /* ST_OK or ST_UPSTREAM_BAD */
    enum turn_end end;
    const char *reason;
    size_t nparts; /* kept parts; 0: content is NULL */
    size_t ncalls;
    const char *names[3];
    const char *text; /* prefix of the text */
    size_t text_len;
    long usage[5]; /* prompt, candidates, thoughts, cached, total */
    bool signed0;  /* kept part 0 carries a thoughtSignature */
};

static const struct fx fixtures[] = {
    { "01-text-reply.response.json", NO_CHUNK, ST_OK, TURN_DONE, "STOP", 1, 0,
      { NULL }, "low", 3, { 9, 1, 20, 0, 30 }, false },
    { "02-max-tokens-truncated-text.response.json", NO_CHUNK, ST_OK,
      TURN_TRUNCATED, "MAX_TOKENS", 1, 0, { NULL },
      "The sky is blue because of something called **Rayleigh", 620,
      { 7, 149, 48, 0, 204 }, false },
    { "03-function-call-single.response.json", NO_CHUNK, ST_OK, TURN_DONE,
      "STOP", 1, 1, { "customDivide" }, "", 0, { 21, 6, 0, 0, 27 }, false },
    { "03b-function-call-cookbook.response.json", NO_CHUNK, ST_OK, TURN_DONE,
      "STOP", 1, 1, { "find_theaters" }, "", 0, { 0, 0, 0, 0, 0 }, false },
    { "04-function-call-any-mode-jsonschema-signature.response.json",
      NO_CHUNK, ST_OK, TURN_DONE, "STOP", 1, 1, { "concatStringFunction" }, "",
      0, { 65, 22, 59, 0, 146 }, true },
    { "05-parallel-calls-x3.response.json", NO_CHUNK, ST_OK, TURN_DONE, "STOP",
      3, 3, { "print", "beep", "controlLight" }, "", 0, { 96, 13, 0, 0, 109 },
      false },
    { "06a-parallel-calls-signature.response.json", NO_CHUNK, ST_OK,
      TURN_DONE, "STOP", 2, 2, { "print", "beep" }, "", 0,
      { 80, 26, 76, 0, 182 }, true },
    { "06b-parallel-function-responses.response.json", NO_CHUNK, ST_OK,
      TURN_DONE, "STOP", 1, 0, { NULL }, "hello \nbeep", 11,
      { 166, 4, 0, 0, 170 }, false },
    /* Only a thought: kept for history, but no visible text. */
    { "08-thought-part-max-tokens.response.json", NO_CHUNK, ST_OK,
      TURN_TRUNCATED, "MAX_TOKENS", 1, 0, { NULL }, "", 0,
      { 17, 0, 19, 0, 36 }, false },
    /* countTokens is not a GenerateContentResponse. */
    { "12-count-tokens.response.json", NO_CHUNK, ST_UPSTREAM_BAD, TURN_OTHER,
      "", 0, 0, { NULL }, "", 0, { 0 }, false },
    { "13-prompt-blocked-safety.response.json", NO_CHUNK, ST_OK, TURN_BLOCKED,
      "SAFETY", 0, 0, { NULL }, "", 0, { 0 }, false },
    { "14-candidate-finish-safety.response.json", NO_CHUNK, ST_OK,
      TURN_BLOCKED, "SAFETY", 0, 0, { NULL }, "", 0, { 2417, 1, 0, 0, 2418 },
      false },
    { "15-max-tokens-no-parts.vertex.response.json", NO_CHUNK, ST_OK,
      TURN_TRUNCATED, "MAX_TOKENS", 0, 0, { NULL }, "", 0,
      { 1706, 0, 2999, 0, 4705 }, false },
    { "07a-sequential-step1.stream-chunks.json", 0, ST_OK, TURN_DONE, "STOP",
      1, 1, { "customDivide" }, "", 0, { 81, 20, 179, 0, 280 }, true },
    /* The final text carries the signature (wire §5.2). */
    { "07b-sequential-final-text.stream-chunks.json", 0, ST_OK, TURN_DONE,
      "STOP", 1, 0, { NULL }, "The result is 2.", 16,
      { 435, 6, 102, 0, 543 }, true },
    /*
     * Vertex streamFunctionCallArguments (we never ask for it): the first
     * chunk names the call, with no args yet; the others carry
     * partialArgs under a nameless functionCall, which is not a call this
     * code can run, so each alone is a bad response.
     */
    { "11-vertex-stream-partial-args.stream-chunks.json", 0, ST_OK, TURN_DONE,
      "", 1, 1, { "getCurrentWeather" }, "", 0, { 0 }, true },
#define PARTIAL(i)                                                            \
    { "11-vertex-stream-partial-args.stream-chunks.json", i, ST_UPSTREAM_BAD,  \
      TURN_OTHER, "", 0, 0, { NULL }, "", 0, { 0 }, false }
    PARTIAL(1), PARTIAL(2), PARTIAL(3), PARTIAL(4), PARTIAL(5), PARTIAL(6),
    PARTIAL(7), PARTIAL(8), PARTIAL(9),
#undef PARTIAL
};

START_TEST(recorded_response)
{
    const struct fx *x = &fixtures[_i];
    json_t *root = load_file(x->file);
    const json_t *resp = root;
    struct parsed p;

    if (x->chunk != NO_CHUNK) {
        ck_assert(json_is_array(root));
        resp = json_array_get(root, (size_t)x->chunk);
        ck_assert_ptr_nonnull(resp);
    }
    parse(resp, &p);
    if (x->status != ST_OK) {
        ck_assert_msg(p.rc == -1, "%s#%d parsed", x->file, x->chunk);
        ck_assert_int_eq(p.err.code, x->status);
        release(resp, &p);
        json_decref(root);
        return;
    }
    ck_assert_msg(p.rc == 0, "%s#%d: %s", x->file, x->chunk, p.err.text);
    ck_assert_int_eq(p.t.end, x->end);
    ck_assert_str_eq(p.t.reason, x->reason);
    if (x->nparts == 0)
        ck_assert_ptr_null(p.t.content);
    else
        ck_assert_uint_eq(
            json_array_size(json_object_get(p.t.content, "parts")), x->nparts);
    ck_assert_uint_eq(p.t.ncalls, x->ncalls);
    for (size_t i = 0; i < x->ncalls; i++) {
        ck_assert_str_eq(p.t.calls[i].name, x->names[i]);
        /* Gemini 2.x sends no call ids; none was invented. */
        ck_assert_ptr_null(p.t.calls[i].id);
    }
    ck_assert_uint_eq(strlen(p.t.text), x->text_len);
    ck_assert_msg(strncmp(p.t.text, x->text, strlen(x->text)) == 0,
                  "text '%.40s' does not start with '%s'", p.t.text, x->text);
    ck_assert_int_eq(p.t.prompt_tokens, x->usage[0]);
    ck_assert_int_eq(p.t.candidates_tokens, x->usage[1]);
    ck_assert_int_eq(p.t.thoughts_tokens, x->usage[2]);
    ck_assert_int_eq(p.t.cached_tokens, x->usage[3]);
    ck_assert_int_eq(p.t.total_tokens, x->usage[4]);
    if (x->signed0) {
        const json_t *kept = json_array_get(
            json_object_get(p.t.content, "parts"), 0);
        const json_t *sent = json_array_get(sent_parts(resp), 0);
        const json_t *sig = json_object_get(kept, "thoughtSignature");
        ck_assert(json_is_string(sig));
        ck_assert_uint_gt(json_string_length(sig), 16);
        ck_assert(json_equal(sig, json_object_get(sent, "thoughtSignature")));
        ck_assert(json_equal(kept, sent));
    }
    release(resp, &p);
    json_decref(root);
}
END_TEST

/* A new fixture file must get a row above. */
START_TEST(every_fixture_is_covered)
{
    static const char *const patterns[] = {
        FIXTURES "/*.response.json",
        FIXTURES "/*.stream-chunks.json",
    };

    for (size_t p = 0; p < ARRAY_SIZE(patterns); p++) {
        glob_t g;

        ck_assert_int_eq(glob(patterns[p], 0, NULL, &g), 0);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *base = strrchr(g.gl_pathv[i], '/') + 1;
            size_t rows = 0, chunks = 1;

            for (size_t j = 0; j < ARRAY_SIZE(fixtures); j++)
                rows += strcmp(fixtures[j].file, base) == 0;
            if (p == 1) {
                json_t *root = load_file(base);
                chunks = json_array_size(root);
                json_decref(root);
            }
            ck_assert_msg(rows == chunks, "%s: %zu rows for %zu responses",
                          base, rows, chunks);
        }
        globfree(&g);
    }
}
END_TEST

/*
 * The raw SSE captures: every `data:` event is a response of its own.
 * 09b has 123 text deltas, finishReason only on the last, and cumulative
 * usage; 10a a signed call; 10b text after a function round trip.
 */
struct sse_fx {
    const char *file;
    size_t events;
    size_t text_len; /* bytes of visible text over all events */
    size_t ncalls;   /* over all events */
    long last_total; /* totalTokenCount of the last event */
};

static const struct sse_fx sse_fixtures[] = {
    { "09a-stream-text-single-chunk.sse.txt", 1, 7, 0, 38 },
    { "09b-stream-text-many-chunks.sse.txt", 123, 0, 0, 7993 },
    { "10a-stream-function-call-signature.sse.txt", 1, 0, 1, 201 },
    { "10b-stream-after-function-response.sse.txt", 2, 0, 0, 153 },
};

START_TEST(recorded_sse_events)
{
    const struct sse_fx *x = &sse_fixtures[_i];
    char path[512], *line = NULL;
    size_t cap = 0, events = 0, text_len = 0, ncalls = 0;
    ssize_t n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", FIXTURES, x->file);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open '%s'", path);
    while ((n = getline(&line, &cap, f)) > 0) {
        json_error_t jerr;
        json_t *ev;
        struct parsed p;

        if (strncmp(line, "data: ", 6) != 0)
            continue;
        ev = json_loadb(line + 6, (size_t)n - 6, JSON_REJECT_DUPLICATES, &jerr);
        ck_assert_msg(ev != NULL, "%s event %zu: %s", x->file, events,
                      jerr.text);
        events++;
        parse(ev, &p);
        ck_assert_msg(p.rc == 0, "%s event %zu: %s", x->file, events,
                      p.err.text);
        text_len += strlen(p.t.text);
        ncalls += p.t.ncalls;
        if (events == x->events) {
            ck_assert_int_eq(p.t.end, TURN_DONE);
            ck_assert_str_eq(p.t.reason, "STOP");
            ck_assert_int_eq(p.t.total_tokens, x->last_total);
        } else {
            /* A middle chunk with content and no finishReason. */
            ck_assert_int_eq(p.t.end, TURN_DONE);
            ck_assert_str_eq(p.t.reason, "");
            ck_assert_ptr_nonnull(p.t.content);
        }
        release(ev, &p);
        json_decref(ev);
    }
    free(line);
    fclose(f);
    ck_assert_uint_eq(events, x->events);
    ck_assert_uint_eq(ncalls, x->ncalls);
    if (x->text_len != 0)
        ck_assert_uint_eq(text_len, x->text_len);
    else if (x->ncalls == 0)
        ck_assert_uint_gt(text_len, 0);
}
END_TEST

/* --- hand-made responses -------------------------------------------------- */

struct odd {
    const char *name;
    const char *json;
    enum turn_end end;
    const char *reason;
    int nparts; /* kept parts; 0: content NULL */
    const char *text;
    const char *calls; /* "name/id,name/-" ; "" for none */
};

#define CAND(parts, finish)                                                   \
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":" parts      \
    "}" finish "}]}"
#define STOP ",\"finishReason\":\"STOP\""

static const struct odd odd_cases[] = {
    { "empty parts dropped, signature-only kept",
      CAND("[{},{\"text\":\"\"},7,null,[],{\"text\":\"hi\"},"
           "{\"text\":\"\",\"thoughtSignature\":\"SIG\"}]",
           STOP),
      TURN_DONE, "STOP", 2, "hi", "" },
    { "empty text with a thought flag is kept",
      CAND("[{\"text\":\"\",\"thought\":true}]", STOP), TURN_DONE, "STOP", 1,
      "", "" },
    { "thought only",
      CAND("[{\"text\":\"Let me think\",\"thought\":true,"
           "\"thoughtSignature\":\"S\"}]",
           STOP),
      TURN_DONE, "STOP", 1, "", "" },
    { "thoughts excluded from text, deltas joined",
      CAND("[{\"text\":\"plan\",\"thought\":true},{\"text\":\"Hel\"},"
           "{\"text\":\"lo\",\"thought\":false},{\"text\":\"!\"}]",
           STOP),
      TURN_DONE, "STOP", 4, "Hello!", "" },
    { "text then calls, with and without id and args",
      CAND("[{\"text\":\"Checking.\"},{\"functionCall\":{\"name\":\"a\","
           "\"args\":{\"x\":1},\"id\":\"c1\"},\"thoughtSignature\":\"S\"},"
           "{\"functionCall\":{\"name\":\"b\"}}]",
           STOP),
      TURN_DONE, "STOP", 3, "Checking.", "a/c1,b/-" },
    { "call index counts kept parts only",
      CAND("[{},{\"text\":\"\"},"
           "{\"functionCall\":{\"name\":\"a\",\"args\":{}}}]",
           STOP),
      TURN_DONE, "STOP", 1, "", "a/-" },
    { "unknown part fields survive",
      CAND("[{\"text\":\"x\",\"futureField\":{\"a\":[1,2]},"
           "\"thoughtSignature\":\"S\"},{\"videoMetadata\":{}}]",
           STOP),
      TURN_DONE, "STOP", 1, "x", "" },
    { "an unknown kind keeps only its signature, on an empty text",
      CAND("[{\"toolCall\":{\"a\":1},\"thoughtSignature\":\"S\"},"
           "{\"thoughtSignature\":\"T\"},{\"text\":\"y\"}]",
           STOP),
      TURN_DONE, "STOP", 3, "y", "" },
    { "malformed call: nothing may run",
      CAND("[{\"functionCall\":{\"name\":\"a\",\"args\":{}}}]",
           ",\"finishReason\":\"MALFORMED_FUNCTION_CALL\""),
      TURN_MALFORMED, "MALFORMED_FUNCTION_CALL", 1, "", "" },
    { "malformed call with a broken functionCall is not a bad response",
      CAND("[{\"functionCall\":{\"args\":\"{oops\"}}]",
           ",\"finishReason\":\"MALFORMED_FUNCTION_CALL\","
           "\"finishMessage\":\"Malformed function call: print(\"")
      ,
      TURN_MALFORMED, "MALFORMED_FUNCTION_CALL", 1, "", "" },
    { "malformed without content (the usual shape)",
      "{\"candidates\":[{\"finishReason\":\"MALFORMED_FUNCTION_CALL\","
      "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":3}}",
      TURN_MALFORMED, "MALFORMED_FUNCTION_CALL", 0, "", "" },
    { "unexpected tool call",
      CAND("[{\"functionCall\":{\"name\":\"a\"}}]",
           ",\"finishReason\":\"UNEXPECTED_TOOL_CALL\""),
      TURN_MALFORMED, "UNEXPECTED_TOOL_CALL", 1, "", "" },
    { "parts: []", CAND("[]", STOP), TURN_DONE, "STOP", 0, "", "" },
    { "only empty parts", CAND("[{},{\"text\":\"\"}]", STOP), TURN_DONE,
      "STOP", 0, "", "" },
    { "content without parts",
      "{\"candidates\":[{\"content\":{\"role\":\"model\"},"
      "\"finishReason\":\"STOP\"}]}",
      TURN_DONE, "STOP", 0, "", "" },
    { "content null",
      "{\"candidates\":[{\"content\":null,\"finishReason\":\"SAFETY\"}]}",
      TURN_BLOCKED, "SAFETY", 0, "", "" },
    { "parts null",
      "{\"candidates\":[{\"content\":{\"parts\":null},"
      "\"finishReason\":\"OTHER\"}]}",
      TURN_OTHER, "OTHER", 0, "", "" },
    { "stream chunk without finishReason", CAND("[{\"text\":\"de\"}]", ""),
      TURN_DONE, "", 1, "de", "" },
    { "stream chunk with nothing", CAND("[{\"text\":\"\"}]", ""), TURN_OTHER,
      "", 0, "", "" },
    { "no candidate", "{\"candidates\":[]}", TURN_OTHER, "", 0, "", "" },
    { "promptFeedback without blockReason",
      "{\"promptFeedback\":{\"safetyRatings\":[]}}", TURN_OTHER, "", 0, "",
      "" },
    { "blockReason wins over candidates",
      "{\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"},"
      "\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}",
      TURN_BLOCKED, "PROHIBITED_CONTENT", 0, "", "" },
    { "only candidates[0] is read",
      "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},"
      "\"finishReason\":\"STOP\"},{\"content\":{\"parts\":"
      "[{\"functionCall\":7}]}}]}",
      TURN_DONE, "STOP", 1, "a", "" },
#define FINISH(r, e)                                                          \
    { "finishReason " r,                                                      \
      CAND("[{\"text\":\"t\"}]", ",\"finishReason\":\"" r "\""), e, r, 1,   \
      "t", "" }
    FINISH("RECITATION", TURN_BLOCKED),
    FINISH("LANGUAGE", TURN_BLOCKED),
    FINISH("BLOCKLIST", TURN_BLOCKED),
    FINISH("SPII", TURN_BLOCKED),
    FINISH("IMAGE_SAFETY", TURN_BLOCKED),
    FINISH("IMAGE_PROHIBITED_CONTENT", TURN_BLOCKED),
    FINISH("IMAGE_OTHER", TURN_BLOCKED),
    FINISH("NO_IMAGE", TURN_OTHER),
    FINISH("OTHER", TURN_OTHER),
    FINISH("TOO_MANY_TOOL_CALLS", TURN_OTHER),
    FINISH("FINISH_REASON_UNSPECIFIED", TURN_OTHER),
    FINISH("SOMETHING_NEW_IN_2027", TURN_OTHER),
#undef FINISH
};

/* "a/c1,b/-": the calls, in order, with their ids. */
static void
assert_calls(const struct turn *t, const char *spec)
{
    char buf[256];
    size_t i = 0;

    for (const char *s = spec; *s != '\0'; i++) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        ck_assert_uint_lt(i, t->ncalls);
        snprintf(buf, sizeof(buf), "%s/%s", t->calls[i].name,
                 t->calls[i].id ? t->calls[i].id : "-");
        ck_assert_msg(strlen(buf) == len && strncmp(buf, s, len) == 0,
                      "call %zu is %s, expected %.*s", i, buf, (int)len, s);
        s += len + (end != NULL);
    }
    ck_assert_uint_eq(t->ncalls, i);
}

START_TEST(odd_response)
{
    const struct odd *x = &odd_cases[_i];
    json_t *resp = load_str(x->json);
    struct parsed p;

    parse(resp, &p);
    ck_assert_msg(p.rc == 0, "%s: %s", x->name, p.err.text);
    ck_assert_int_eq(p.t.end, x->end);
    ck_assert_str_eq(p.t.reason, x->reason);
    if (x->nparts == 0)
        ck_assert_ptr_null(p.t.content);
    else
        ck_assert_int_eq(
            (int)json_array_size(json_object_get(p.t.content, "parts")),
            x->nparts);
    ck_assert_str_eq(p.t.text, x->text);
    assert_calls(&p.t, x->calls);
    release(resp, &p);
    json_decref(resp);
}
END_TEST

/* A missing args becomes an empty object the arena owns. */
START_TEST(absent_args_are_an_empty_object)
{
    json_t *resp = load_str(CAND("[{\"functionCall\":{\"name\":\"beep\"}}]",
                                 STOP));
    struct parsed p;

    parse(resp, &p);
    ck_assert_int_eq(p.rc, 0);
    ck_assert_uint_eq(p.t.ncalls, 1);
    ck_assert(json_is_object(p.t.calls[0].args));
    ck_assert_uint_eq(json_object_size(p.t.calls[0].args), 0);
    /* The part itself is untouched: no args member was added. */
    ck_assert_ptr_null(json_object_get(
        json_object_get(json_array_get(sent_parts(resp), 0), "functionCall"),
        "args"));
    release(resp, &p);
    json_decref(resp);
}
END_TEST

/* The reason outlives the response it came from. */
START_TEST(reason_is_arena_owned)
{
    json_t *resp = load_str(
        "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}");
    struct parsed p;

    parse(resp, &p);
    ck_assert_int_eq(p.rc, 0);
    json_decref(resp);
    ck_assert_str_eq(p.t.reason, "SAFETY");
    arena_release(&p.a);
}
END_TEST

START_TEST(usage_is_read_robustly)
{
    json_t *resp = load_str(
        "{\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":5.0,"
        "\"candidatesTokenCount\":\"7\",\"thoughtsTokenCount\":-3,"
        "\"cachedContentTokenCount\":4,\"totalTokenCount\":1e300}}");
    struct parsed p;

    parse(resp, &p);
    ck_assert_int_eq(p.rc, 0);
    ck_assert_int_eq(p.t.prompt_tokens, 5);
    ck_assert_int_eq(p.t.candidates_tokens, 0);
    ck_assert_int_eq(p.t.thoughts_tokens, 0);
    ck_assert_int_eq(p.t.cached_tokens, 4);
    ck_assert_int_eq(p.t.total_tokens, LONG_MAX);
    ck_assert_int_eq(p.t.tool_use_prompt_tokens, 0);
    release(resp, &p);
    json_decref(resp);
}
END_TEST

/* Results of Gemini-side tools are billed as prompt: the budget counts
 * them (prompt + candidates + thoughts + tool-use prompt). */
START_TEST(tool_use_prompt_tokens_are_read)
{
    json_t *resp = load_str(
        "{\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":10,"
        "\"candidatesTokenCount\":3,\"thoughtsTokenCount\":20,"
        "\"toolUsePromptTokenCount\":7,\"totalTokenCount\":40}}");
    struct parsed p;

    parse(resp, &p);
    ck_assert_int_eq(p.rc, 0);
    ck_assert_int_eq(p.t.tool_use_prompt_tokens, 7);
    ck_assert_int_eq(p.t.prompt_tokens + p.t.candidates_tokens +
                         p.t.thoughts_tokens + p.t.tool_use_prompt_tokens,
                     p.t.total_tokens);
    release(resp, &p);
    json_decref(resp);
}
END_TEST

/* --- bounds: what a later request carries ------------------- */

/* `n` levels of {"a": ...} around 1, as a JSON text in `buf`. */
static const char *
nest(char *buf, size_t size, int n)
{
    size_t len = 0;

    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, "{\"a\":");
    len += (size_t)snprintf(buf + len, size - len, "1");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, "}");
    ck_assert_uint_lt(len, size);
    return buf;
}

/* The answer holding one call of `name` with `args`, signed. */
static json_t *
call_answer(const char *args)
{
    char *text = NULL;
    json_t *resp;

    ck_assert_int_gt(asprintf(&text,
                              CAND("[{\"functionCall\":{\"name\":\"page_x\","
                                   "\"id\":\"c1\",\"args\":%s},"
                                   "\"thoughtSignature\":\"SIG\"}]",
                                   STOP),
                              args),
                     0);
    resp = load_str(text);
    free(text);
    return resp;
}

/* Does the chat request carrying `model` as its last turn pass the
 * request parser's bounds (BOUND_JSON_DEPTH)? */
static bool
request_takes(const json_t *model)
{
    json_t *body = json_pack("{s:s, s:[{s:s, s:[{s:s}]}, O]}", "message",
                             "next", "history", "role", "user", "parts",
                             "text", "hi", model);
    char *text = json_dumps(body, JSON_COMPACT);
    struct arena a;
    struct jscan_doc d;
    struct status_error err = {0};
    int rc;

    arena_init(&a);
    rc = jsonin_scan(text, strlen(text), BOUND_JSON_DEPTH, &a, &d, &err);
    arena_release(&a);
    free(text);
    json_decref(body);
    return rc == 0;
}

/* At the bound a call is kept by reference and the request that carries
 * it back is taken; one level more and the call is refused, kept with {}
 * and gemini-cli's signature sentinel, and that request is taken too. */
START_TEST(call_depth_at_and_past_the_bound)
{
    struct turn_bounds b = turn_bounds_of_body(1 << 20);
    char args[512];
    struct arena a;
    struct turn t;
    struct status_error err = {0};
    json_t *resp, *part;

    arena_init(&a);
    /* part, functionCall, then the arguments' own levels */
    resp = call_answer(nest(args, sizeof(args), b.depth - 2));
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    ck_assert_ptr_null(t.calls[0].refused);
    part = json_array_get(json_object_get(t.content, "parts"), 0);
    ck_assert_ptr_eq(part, json_array_get(sent_parts(resp), 0));
    ck_assert(request_takes(t.content));
    json_decref(resp);

    resp = call_answer(nest(args, sizeof(args), b.depth - 1));
    /* unbounded, that one would brick the conversation */
    ck_assert_int_eq(turn_parse(resp, NULL, &a, &t, &err), 0);
    ck_assert(!request_takes(t.content));
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    ck_assert_uint_eq(t.ncalls, 1);
    ck_assert_ptr_nonnull(t.calls[0].refused);
    ck_assert_ptr_nonnull(strstr(t.calls[0].refused, "nest deeper than 26"));
    ck_assert_str_eq(t.calls[0].name, "page_x");
    ck_assert_str_eq(t.calls[0].id, "c1");
    ck_assert_uint_eq(json_object_size(t.calls[0].args), 0);
    part = json_array_get(json_object_get(t.content, "parts"), 0);
    ck_assert_str_eq(
        json_string_value(json_object_get(part, "thoughtSignature")),
        "skip_thought_signature_validator");
    ck_assert(request_takes(t.content));
    json_decref(resp);
    arena_release(&a);
}
END_TEST

START_TEST(wide_integers_and_large_calls_are_refused)
{
    struct turn_bounds b = {.depth = 28, .bytes = 200};
    struct arena a;
    struct turn t;
    struct status_error err = {0};
    json_t *resp;
    char big[400];

    arena_init(&a);
    resp = call_answer("{\"n\":9007199254740993}");
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    ck_assert_ptr_nonnull(strstr(t.calls[0].refused, "2^53"));
    json_decref(resp);
    resp = call_answer("{\"n\":-9007199254740992}"); /* exact: kept */
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    ck_assert_ptr_null(t.calls[0].refused);
    json_decref(resp);

    memset(big, 'x', sizeof(big));
    memcpy(big, "{\"s\":\"", 6);
    memcpy(big + sizeof(big) - 3, "\"}", 3);
    resp = call_answer(big);
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    ck_assert_ptr_nonnull(strstr(t.calls[0].refused, "more than the 200"));
    ck_assert_uint_eq(json_object_size(t.calls[0].args), 0);
    json_decref(resp);
    arena_release(&a);
}
END_TEST

/* A text past the turn's bytes is cut at a character, with "…", and loses
 * its signature; a deep part of another kind is left out. */
START_TEST(long_text_cut_deep_part_left_out)
{
    struct turn_bounds b = {.depth = 4, .bytes = 40};
    struct arena a;
    struct turn t;
    struct status_error err = {0};
    json_t *resp = load_str(CAND(
        "[{\"executableCode\":{\"a\":{\"b\":{\"c\":{}}}}},"
        "{\"text\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\",\"thoughtSignature\":\"S\"}]",
        STOP));
    const json_t *kept;
    size_t n;

    arena_init(&a);
    ck_assert_int_eq(turn_parse(resp, &b, &a, &t, &err), 0);
    kept = json_object_get(t.content, "parts");
    ck_assert_uint_eq(json_array_size(kept), 1);
    ck_assert_ptr_null(
        json_object_get(json_array_get(kept, 0), "thoughtSignature"));
    n = strlen(t.text);
    ck_assert_uint_gt(n, 10);
    ck_assert_uint_le(n + 10, 40);
    ck_assert_str_eq(t.text + n - 3, "\xe2\x80\xa6");
    ck_assert_int_eq((unsigned char)t.text[n - 4], 0xa9); /* whole é */
    json_decref(resp);
    arena_release(&a);
}
END_TEST

/* --- bad responses -------------------------------------------------------- */

static const struct {
    const char *name;
    const char *json;
} bad_cases[] = {
    { "array", "[]" },
    { "string", "\"x\"" },
    { "empty object", "{}" },
    { "neither candidates nor promptFeedback", "{\"modelVersion\":\"m\"}" },
    { "candidates not an array", "{\"candidates\":{}}" },
    { "candidate not an object", "{\"candidates\":[1]}" },
    { "candidate null", "{\"candidates\":[null]}" },
    { "promptFeedback not an object", "{\"promptFeedback\":\"x\"}" },
    { "blockReason not a string",
      "{\"promptFeedback\":{\"blockReason\":5}}" },
    { "finishReason not a string",
      "{\"candidates\":[{\"finishReason\":1}]}" },
    { "content not an object", "{\"candidates\":[{\"content\":[]}]}" },
    { "parts not an array",
      "{\"candidates\":[{\"content\":{\"parts\":{}}}]}" },
    { "functionCall not an object",
      CAND("[{\"functionCall\":\"f()\"}]", STOP) },
    { "functionCall without name", CAND("[{\"functionCall\":{}}]", STOP) },
    { "functionCall name empty",
      CAND("[{\"functionCall\":{\"name\":\"\"}}]", STOP) },
    { "functionCall name not a string",
      CAND("[{\"functionCall\":{\"name\":5}}]", STOP) },
    { "args an array",
      CAND("[{\"functionCall\":{\"name\":\"a\",\"args\":[]}}]", STOP) },
    { "args a string",
      CAND("[{\"functionCall\":{\"name\":\"a\",\"args\":\"{}\"}}]", STOP) },
    { "args null",
      CAND("[{\"functionCall\":{\"name\":\"a\",\"args\":null}}]", STOP) },
    /* what history_check() would refuse when the turn comes back */
    { "non-string id",
      CAND("[{\"functionCall\":{\"name\":\"a\",\"id\":5}}]", STOP) },
    { "text not a string", CAND("[{\"text\":5}]", STOP) },
    { "thought not a boolean",
      CAND("[{\"text\":\"x\",\"thought\":\"yes\"}]", STOP) },
    { "thoughtSignature not a string",
      CAND("[{\"text\":\"x\",\"thoughtSignature\":1}]", STOP) },
    { "two data fields",
      CAND("[{\"text\":\"x\",\"functionCall\":{\"name\":\"a\"}}]",
           STOP) },
    { "functionResponse in a model turn",
      CAND("[{\"functionResponse\":{\"name\":\"a\",\"response\":{}}}]",
           STOP) },
    { "inlineData not an object", CAND("[{\"inlineData\":\"x\"}]", STOP) },
    { "a bad call after a good one",
      CAND("[{\"functionCall\":{\"name\":\"a\"}},{\"text\":\"x\"},"
           "{\"functionCall\":{\"name\":null}}]",
           STOP) },
};

START_TEST(bad_response)
{
    json_t *resp = load_str(bad_cases[_i].json);
    struct parsed p;

    parse(resp, &p);
    ck_assert_msg(p.rc == -1, "%s: parsed", bad_cases[_i].name);
    ck_assert_int_eq(p.err.code, ST_UPSTREAM_BAD);
    ck_assert_str_eq(p.t.text, "");
    ck_assert_str_eq(p.t.reason, "");
    ck_assert_uint_gt(strlen(p.err.text), 0);
    release(resp, &p);
    json_decref(resp);
}
END_TEST

Suite *
turn_suite(void)
{
    Suite *s = suite_create("turn");
    TCase *tc;

    tc = tcase_create("recorded");
    tcase_add_loop_test(tc, recorded_response, 0, (int)ARRAY_SIZE(fixtures));
    tcase_add_test(tc, every_fixture_is_covered);
    tcase_add_loop_test(tc, recorded_sse_events, 0,
                        (int)ARRAY_SIZE(sse_fixtures));
    suite_add_tcase(s, tc);

    tc = tcase_create("core");
    tcase_add_loop_test(tc, odd_response, 0, (int)ARRAY_SIZE(odd_cases));
    tcase_add_test(tc, absent_args_are_an_empty_object);
    tcase_add_test(tc, reason_is_arena_owned);
    tcase_add_test(tc, usage_is_read_robustly);
    tcase_add_test(tc, tool_use_prompt_tokens_are_read);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_loop_test(tc, bad_response, 0, (int)ARRAY_SIZE(bad_cases));
    tcase_add_test(tc, call_depth_at_and_past_the_bound);
    tcase_add_test(tc, wide_integers_and_large_calls_are_refused);
    tcase_add_test(tc, long_text_cut_deep_part_left_out);
    suite_add_tcase(s, tc);
    return s;
}
