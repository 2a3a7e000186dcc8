/*
 * check_loop.c - the agent loop in-process, over a fake Gemini transport:
 * text, parallel calls, server-only chains, mixed turns, max steps,
 * blocked, malformed-then-recovered, truncated, hostile usage counts; and
 * allocation failure injected at every allocation of a loop run and of a
 * whole chat request, each of which must end in a clean out-of-memory
 * error (a 500 envelope over HTTP), never a wrong status or half an
 * answer.
 *
 * The server actions are the real shop plugin; Gemini is a script of
 * answers in the real wire format. Nothing leaves the process.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/loop.h"
#include "agent/history.h"
#include "agent/turn.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "http/dispatch.h"
#include "gemini/gemini.h"
#include "http/httpio.h"
#include "core/jsonin.h"
#include "core/memlimit.h"
#include "http/site.h"
#include "core/status.h"
#include "unit_memio.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- Gemini answers in the wire format ------------------------------------ */

#define USAGE(p, c, t)                                                         \
    "\"usageMetadata\":{\"promptTokenCount\":" #p                              \
    ",\"candidatesTokenCount\":" #c ",\"totalTokenCount\":" #t "}"
#define ANSWER(parts, finish)                                                  \
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[" parts      \
    "]},\"finishReason\":\"" finish                                            \
    "\"}]," USAGE(10, 2, 12) ",\"modelVersion\":\"gemini-test-001\"}"
#define TEXT(s) "{\"text\":\"" s "\"}"
#define CALL(name, args)                                                       \
    "{\"functionCall\":{\"name\":\"" name "\",\"args\":" args "}}"
#define SEARCH  CALL("action_shop_searchProducts", "{\"query\":\"usb\"}")
#define BY_SLUG CALL("action_shop_getProductBySlug", "{\"slug\":\"usb-c-hub\"}")

/* --- a fake transport: scripted answers, recorded requests ----------------- */

#define FAKE_MAX 16

struct fake {
    const char *const *answers; /* NULL-terminated; past the end: HTTP 500 */
    size_t next;
    int posts, streamed;
    char *requests[FAKE_MAX]; /* bodies as sent (the test's own malloc) */
};

static int
fake_post(void *ctx, const char *url, const char *key, const char *body,
          size_t len, long timeout_ms, struct gemini_http *out)
{
    struct fake *f = ctx;
    const char *ans = f->answers[f->next];

    (void)url, (void)key, (void)timeout_ms;
    if (f->posts < FAKE_MAX)
        f->requests[f->posts] = strndup(body, len);
    f->posts++;
    out->net = GEMINI_NET_OK;
    out->sent = 1;
    out->retry_after_ms = -1;
    out->status = ans ? 200 : 500;
    if (ans != NULL)
        f->next++;
    if (ans != NULL && out->on_data != NULL) {
        /* a stream: the answer as one SSE event, in two reads */
        char *ev = NULL;
        int n = asprintf(&ev, "data: %s\r\n\r\n", ans);
        ck_assert_int_gt(n, 0);
        f->streamed++;
        if (out->on_data(out->on_data_ctx, ev, (size_t)n / 2) != 0 ||
            out->on_data(out->on_data_ctx, ev + n / 2,
                         (size_t)n - (size_t)n / 2) != 0)
            out->net = GEMINI_NET_SINK;
        free(ev);
        return 0;
    }
    return sbuf_adds(&out->body, ans ? ans : "{}");
}

static void
fake_sleep(void *ctx, long ms)
{
    (void)ctx, (void)ms;
}

static long
fake_now(void *ctx)
{
    (void)ctx;
    return 0;
}

static void
fake_release(struct fake *f)
{
    for (int i = 0; i < f->posts && i < FAKE_MAX; i++)
        free(f->requests[i]);
}

/* --- a sink that writes down every event ---------------------------------- */

struct rec {
    char log[4096];
    size_t len;
    int dones, errors;
    struct loop_usage usage;
};

static void ATTR_FMT(2, 3) rec_add(struct rec *r, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(r->log + r->len, sizeof(r->log) - r->len, fmt, ap);
    va_end(ap);
    ck_assert(n >= 0 && (size_t)n < sizeof(r->log) - r->len);
    r->len += (size_t)n;
}

static int
rec_text(void *ctx, const char *text, struct status_error *err)
{
    (void)err;
    rec_add(ctx, "text:%s\n", text);
    return 0;
}

static int
rec_call(void *ctx, const struct loop_call *c, bool back,
         struct status_error *err)
{
    (void)err;
    rec_add(ctx, "call:%s:%s\n", c->name, back ? "back" : "run");
    return 0;
}

static int
rec_result(void *ctx, const struct loop_call *c, const struct loop_result *r,
           struct status_error *err)
{
    (void)c, (void)err;
    ck_assert_ptr_nonnull(r->response);
    rec_add(ctx, "result:%s:%s\n", r->action ? r->action : "-",
            r->ok ? "ok" : "fail");
    return 0;
}

static int
rec_usage(void *ctx, const struct loop_usage *u, const char *model,
          struct status_error *err)
{
    struct rec *r = ctx;

    (void)err;
    r->usage = *u;
    rec_add(r, "usage:%ld/%d:%s\n", u->total, u->calls, model ? model : "-");
    return 0;
}

static const char *const end_names[] = {"answered", "truncated", "handed_back",
                                        "blocked", "max_steps"};

static int
rec_done(void *ctx, enum loop_end end, const struct turn *last,
         struct status_error *err)
{
    struct rec *r = ctx;

    (void)last, (void)err;
    r->dones++;
    rec_add(r, "done:%s\n", end_names[end]);
    return 0;
}

static void
rec_error(void *ctx, const struct status_error *err)
{
    struct rec *r = ctx;

    r->errors++;
    rec_add(r, "error:%s\n", status_code(err->code));
}

static int
rec_retry(void *ctx, int attempt, int max, const struct status_error *why,
          struct status_error *err)
{
    (void)err;
    rec_add(ctx, "retry:%d/%d:%s\n", attempt, max, status_code(why->code));
    return 0;
}

static const struct loop_sink_ops rec_ops = {
    rec_text, rec_call,  rec_result, rec_usage, rec_done,
    rec_error, NULL,     NULL,       rec_retry};

static int
rec_status(void *ctx, enum loop_status st, const char *tool,
           struct status_error *err)
{
    static const char *const names[] = {"thinking", "tool", "waiting"};

    (void)err;
    rec_add(ctx, "status:%s%s%s\n", names[st], tool ? ":" : "",
            tool ? tool : "");
    return 0;
}

static int
rec_delta(void *ctx, const char *text, size_t len, struct status_error *err)
{
    (void)err;
    rec_add(ctx, "delta:%.*s\n", (int)len, text);
    return 0;
}

/* The same, with the ops that make the loop stream. */
static const struct loop_sink_ops rec_stream_ops = {
    rec_text, rec_call,   rec_result, rec_usage,
    rec_done, rec_error, rec_status, rec_delta, rec_retry};

/* --- fixture: the real shop plugin, a key, data in a temp dir -------------- */

static struct site *site;
static char tmpdir[64];

static void
write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void
setup(void)
{
    char path[512], text[1024], cwd[512];
    struct diag d = DIAG_INIT;

    /* The environment must not point the client elsewhere. */
    unsetenv("GEMINI_API_KEY");
    unsetenv("GOOGLE_API_KEY");
    unsetenv("GEMINI_BASE_URL");
    unsetenv("AGENT_MAX_LOOP_STEPS");
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ga-loop-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    snprintf(text, sizeof(text),
             "actions: [%s/../../actions]\n"
             "dataDir: %s\n"
             "gemini: .gemini.yaml\n"
             "limits: {maxLoopSteps: 4}\n"
             /* the histories here are written by hand */
             "history: {verify: off}\n",
             cwd, tmpdir);
    write_file(tmpdir, "agent.yaml", text);
    write_file(tmpdir, ".gemini.yaml",
               "apiKey: AIzaSyTEST-key_0123456789abcdefghijkl\n"
               "model: gemini-test\n"
               "baseUrl: http://127.0.0.1:9\n");
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    site = site_load(path, &d);
    ck_assert_ptr_nonnull(site);
    ck_assert_ptr_nonnull(site->cfg->gemini.api_key);
    diag_release(&d);
    /* as the program does at start: jansson allocates through the
     * request's memory bound (and the injection hook) */
    memlimit_install();
}

static void
teardown(void)
{
    char cmd[600];

    memlimit_fail_hook = NULL;
    site_free(site);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* --- one loop run ------------------------------------------------------------ */

/* Page tools, run by "the browser", are the names that start with page_. */
static int
page_tool(void *ctx, const struct loop_call *c, struct loop_result *r,
          struct status_error *err)
{
    /* own_*: the caller answers it itself, at once; ctx: the arena */
    if (strncmp(c->name, "own_", 4) == 0) {
        r->action = "own";
        r->ok = true;
        /* own_deep: a result three levels deep */
        r->response = arena_take_json(
            ctx, strcmp(c->name, "own_deep") == 0
                     ? json_pack("{s:{s:{s:i}}}", "result", "a", "b", 1)
                     : json_pack("{s:s}", "result", "done by the caller"));
        if (r->response == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        return LOOP_ANSWER_IT;
    }
    return strncmp(c->name, "page_", 5) == 0 ? LOOP_HAND_BACK : LOOP_RUN_IT;
}

struct run {
    struct fake fake;
    struct rec rec;
    struct arena arena;
    struct gemini g;
    json_t *contents;
    struct status_error err;
    int rc;
};

static const char first_turn[] =
    "[{\"role\":\"user\",\"parts\":[{\"text\":\"find a usb hub\"}]}]";

/* The loop over the conversation `first_turn`; with `last`, also a turn
 * that must stay the last of every request (as the page state does). */
/* What a case may add to the loop's input: a gate, the bounds. */
struct loop_more {
    struct loop_gate *gate;
    long max_upstream_bytes, max_output_tokens;
    long broke_retries;
    const struct turn_bounds *bounds;
};

static void
run_loop_more(struct run *r, const char *const *answers, long max_steps,
              bool last, bool stream, long max_calls,
              const struct loop_more *more)
{
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &r->fake};
    struct loop_sink sink = {stream ? &rec_stream_ops : &rec_ops, &r->rec};
    struct loop_input in = {.g = &r->g,
                            .gemini = &site->cfg->gemini,
                            .actions = site->actions,
                            .action_env = &site->cfg->actions,
                            .a = &r->arena,
                            .system = "You are a test.",
                            .max_steps = max_steps,
                            .max_calls = max_calls,
                            .decide = page_tool};

    if (more != NULL) {
        in.gate = more->gate;
        in.max_upstream_bytes = more->max_upstream_bytes;
        in.max_output_tokens = more->max_output_tokens;
        in.broke_retries = more->broke_retries;
        in.bounds = more->bounds;
    }
    memset(r, 0, sizeof(*r));
    r->fake.answers = answers;
    gemini_init_transport(&r->g, &t);
    arena_init(&r->arena);
    /* parsed as the request path parses: never with a failed
     * allocation inside jansson's parser (memlimit.h) */
    r->contents = jsonin_parse(first_turn, strlen(first_turn), 0,
                               &(json_error_t){0}, &(bool){false});
    in.contents = r->contents;
    in.g = &r->g;
    in.a = &r->arena;
    in.decide_ctx = &r->arena;
    if (r->contents == NULL) { /* only under injected failures */
        status_set(&r->err, ST_NO_MEMORY, "out of memory");
        r->rc = -1;
        r->rec.errors++;
        rec_add(&r->rec, "error:internal_error\n");
        return;
    }
    if (last) {
        in.last_turn = json_pack("{s:s, s:[{s:s}]}", "role", "user", "parts",
                                 "text", "STATE");
        if (in.last_turn == NULL ||
            json_array_append_new(r->contents, in.last_turn) != 0) {
            status_set(&r->err, ST_NO_MEMORY, "out of memory");
            r->rc = -1;
            return;
        }
    }
    r->rc = loop_run(&in, &sink, &r->err);
}

static void
run_loop_opts(struct run *r, const char *const *answers, long max_steps,
              bool last, bool stream, long max_calls)
{
    run_loop_more(r, answers, max_steps, last, stream, max_calls, NULL);
}

static void
run_loop_ex(struct run *r, const char *const *answers, long max_steps,
            bool last)
{
    run_loop_opts(r, answers, max_steps, last, false, 0);
}

static void
run_loop(struct run *r, const char *const *answers, long max_steps)
{
    run_loop_ex(r, answers, max_steps, false);
}

static void
run_release(struct run *r)
{
    arena_release(&r->arena);
    json_decref(r->contents);
    gemini_release(&r->g);
    fake_release(&r->fake);
}

/* The role and first part's kind of contents[i], e.g. "model:functionCall". */
static const char *
turn_shape(const struct run *r, size_t i, char *buf, size_t size)
{
    json_t *turn = json_array_get(r->contents, i);
    json_t *part = json_array_get(json_object_get(turn, "parts"), 0);
    const char *kind = json_object_iter_key(json_object_iter(part));

    snprintf(buf, size, "%s:%s",
             json_string_value(json_object_get(turn, "role")),
             kind ? kind : "?");
    return buf;
}

#define ASSERT_SHAPE(r, i, want)                                               \
    do {                                                                       \
        char shape_[64];                                                       \
        ck_assert_str_eq(turn_shape((r), (i), shape_, sizeof(shape_)),         \
                         (want));                                              \
    } while (0)

/* --- the cases ---------------------------------------------------------------- */

START_TEST(text_answer)
{
    static const char *const answers[] = {ANSWER(TEXT("Here it is."), "STOP"),
                                          NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "text:Here it is.\n"
                                "done:answered\n");
    ck_assert_int_eq(r.fake.posts, 1);
    /* the request: system instruction first, then the conversation */
    ck_assert_ptr_nonnull(strstr(r.fake.requests[0],
                                 "\"systemInstruction\":{\"parts\":[{\"text\":"
                                 "\"You are a test.\"}]}"));
    ck_assert_ptr_nonnull(strstr(r.fake.requests[0], "find a usb hub"));
    ck_assert_int_eq(json_array_size(r.contents), 2);
    ASSERT_SHAPE(&r, 1, "model:text");
    run_release(&r);
}
END_TEST

START_TEST(parallel_page_calls_go_back)
{
    static const char *const answers[] = {
        ANSWER(TEXT("Adding both.") "," CALL("page_add", "{\"id\":1}") "," CALL(
                   "page_add", "{\"id\":2}"),
               "STOP"),
        NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "text:Adding both.\n"
                                "call:page_add:back\n"
                                "call:page_add:back\n"
                                "done:handed_back\n");
    ck_assert_int_eq(r.fake.posts, 1);
    /* the calls wait for the browser: no answer turn yet */
    ck_assert_int_eq(json_array_size(r.contents), 2);
    run_release(&r);
}
END_TEST

START_TEST(server_only_chain)
{
    static const char *const answers[] = {
        ANSWER(SEARCH, "STOP"), ANSWER(BY_SLUG, "STOP"),
        ANSWER(TEXT("The hub costs $29."), "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:shop.searchProducts:ok\n"
                                "usage:24/2:gemini-test-001\n"
                                "call:action_shop_getProductBySlug:run\n"
                                "result:shop.getProductBySlug:ok\n"
                                "usage:36/3:gemini-test-001\n"
                                "text:The hub costs $29.\n"
                                "done:answered\n");
    ck_assert_int_eq(r.fake.posts, 3);
    ck_assert_int_eq(json_array_size(r.contents), 6);
    ASSERT_SHAPE(&r, 1, "model:functionCall");
    ASSERT_SHAPE(&r, 2, "user:functionResponse");
    ASSERT_SHAPE(&r, 3, "model:functionCall");
    ASSERT_SHAPE(&r, 4, "user:functionResponse");
    ASSERT_SHAPE(&r, 5, "model:text");
    /* each step sends the results so far: the search result reaches
     * Gemini with the second request, both with the third */
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1],
                                 "\"functionResponse\":{"
                                 "\"name\":\"action_shop_searchProducts\""));
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1], "usb-c-hub"));
    ck_assert_ptr_nonnull(strstr(r.fake.requests[2],
                                 "\"name\":\"action_shop_getProductBySlug\","
                                 "\"response\":{\"result\""));
    ck_assert_int_eq(r.rec.usage.prompt, 30);
    ck_assert_int_eq(r.rec.usage.candidates, 6);
    run_release(&r);
}
END_TEST

/* A sink that takes deltas makes the loop stream: each step is told
 * (thinking, the tool it runs, waiting for the page), the text comes as
 * it arrives, and the turns recorded are those of the same answers
 * unstreamed. */
START_TEST(streaming_sink_hears_every_step)
{
    static const char *const answers[] = {
        ANSWER(SEARCH, "STOP"),
        ANSWER(TEXT("Found it.") "," CALL("page_show", "{\"id\":1}"),
               "STOP"),
        NULL};
    struct run r, plain;
    char *a, *b;

    run_loop_opts(&r, answers, 4, false, true, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.fake.streamed, 2);
    ck_assert_str_eq(r.rec.log, "status:thinking\n"
                                "usage:12/1:gemini-test-001\n"
                                "call:action_shop_searchProducts:run\n"
                                "status:tool:shop.searchProducts\n"
                                "result:shop.searchProducts:ok\n"
                                "status:thinking\n"
                                "delta:Found it.\n"
                                "usage:24/2:gemini-test-001\n"
                                "text:Found it.\n"
                                "call:page_show:back\n"
                                "status:waiting\n"
                                "done:handed_back\n");
    run_loop(&plain, answers, 4);
    ck_assert_int_eq(plain.fake.streamed, 0);
    a = json_dumps(r.contents, JSON_COMPACT);
    b = json_dumps(plain.contents, JSON_COMPACT);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    run_release(&plain);
    run_release(&r);
}
END_TEST

/* A call the caller answers itself: no action runs, its answer goes to
 * Gemini like any other. */
START_TEST(caller_answers_a_call)
{
    static const char *const answers[] = {
        ANSWER(CALL("own_note", "{}"), "STOP"),
        ANSWER(TEXT("Noted."), "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:own_note:run\n"
                                "result:own:ok\n"
                                "usage:24/2:gemini-test-001\n"
                                "text:Noted.\n"
                                "done:answered\n");
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1],
                                 "{\"functionResponse\":{\"name\":"
                                 "\"own_note\",\"response\":{\"result\":"
                                 "\"done by the caller\"}}}"));
    run_release(&r);
}
END_TEST

/* A turn asking for more calls than limits.maxCallsPerTurn: the first
 * ones run (or go back), the rest are answered with an error and do not. */
START_TEST(calls_past_the_cap_do_not_run)
{
    static const char *const answers[] = {
        ANSWER(SEARCH "," SEARCH "," CALL("page_add", "{\"id\":1}"), "STOP"),
        ANSWER(TEXT("Two then."), "STOP"), NULL};
    struct run r;

    run_loop_opts(&r, answers, 4, false, false, 2);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:shop.searchProducts:ok\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:shop.searchProducts:ok\n"
                                "call:page_add:run\n"
                                "result:-:fail\n"
                                "usage:24/2:gemini-test-001\n"
                                "text:Two then.\n"
                                "done:answered\n");
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1],
                                 "\"name\":\"page_add\",\"response\":{"
                                 "\"error\":\"not run: a turn may make at "
                                 "most 2 calls; ask again for the rest\"}"));
    run_release(&r);
}
END_TEST

/* A call whose arguments nest past the bounds is neither
 * run nor handed back: the model reads why, and the conversation keeps
 * the call with {} for its arguments, so a later request can carry it. */
#define DEEP5 "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":1}}}}}"
START_TEST(calls_past_the_bounds_are_answered_not_run)
{
    static const char *const answers[] = {
        ANSWER(CALL("page_add", "{\"x\":" DEEP5 "}") "," CALL(
                   "action_shop_searchProducts", "{\"query\":" DEEP5 "}"),
               "STOP"),
        ANSWER(TEXT("Flatter then."), "STOP"), NULL};
    struct turn_bounds b = {.depth = 6}; /* part, call, args: 3 levels left */
    struct loop_more more = {.bounds = &b};
    struct run r;
    char *model;

    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:page_add:run\n"
                                "result:-:fail\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:-:fail\n"
                                "usage:24/2:gemini-test-001\n"
                                "text:Flatter then.\n"
                                "done:answered\n");
    ck_assert_msg(strstr(r.fake.requests[1],
                         "\"name\":\"page_add\",\"response\":{\"error\":"
                         "\"not run: the arguments nest deeper than 4 "
                         "levels") != NULL,
                  "%s", r.fake.requests[1]);
    model = json_dumps(json_array_get(r.contents, 1), JSON_COMPACT);
    ck_assert_str_eq(model,
                     "{\"role\":\"model\",\"parts\":[{\"functionCall\":"
                     "{\"name\":\"page_add\",\"args\":{}}},{\"functionCall\":"
                     "{\"name\":\"action_shop_searchProducts\",\"args\":{}}}]}");
    free(model);
    ck_assert_int_eq(history_check(r.contents, 0, &r.err), 0);
    run_release(&r);
}
END_TEST

/* A result deeper than the bounds keep (a functionResponse's response in
 * a later request) is replaced by an error saying so. */
START_TEST(results_past_the_bounds_are_not_kept)
{
    static const char *const answers[] = {
        ANSWER(CALL("own_deep", "{}") "," CALL("own_note", "{}"), "STOP"),
        ANSWER(TEXT("Noted."), "STOP"), NULL};
    struct turn_bounds b = {.depth = 4}; /* response: 2 levels */
    struct loop_more more = {.bounds = &b};
    struct run r;

    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_msg(strstr(r.fake.requests[1],
                         "{\"functionResponse\":{\"name\":\"own_deep\","
                         "\"response\":{\"error\":\"the call ran, but its "
                         "result nests deeper than 1 levels") != NULL,
                  "%s", r.fake.requests[1]);
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1],
                                 "\"response\":{\"result\":"
                                 "\"done by the caller\"}"));
    ck_assert_int_eq(history_check(r.contents, 0, &r.err), 0);
    run_release(&r);
}
END_TEST

START_TEST(mixed_turn_runs_server_calls_and_hands_back_the_rest)
{
    static const char *const answers[] = {
        ANSWER(SEARCH "," CALL("page_show", "{}"), "STOP"), NULL};
    struct run r;
    json_t *answers_turn;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:shop.searchProducts:ok\n"
                                "call:page_show:back\n"
                                "done:handed_back\n");
    /* the server's answer is recorded as a partial turn after the calls */
    ck_assert_int_eq(json_array_size(r.contents), 3);
    answers_turn = json_object_get(json_array_get(r.contents, 2), "parts");
    ck_assert_int_eq(json_array_size(answers_turn), 1);
    ASSERT_SHAPE(&r, 2, "user:functionResponse");
    run_release(&r);
}
END_TEST

/* A turn that must stay last (the page state) is moved behind the turns
 * each step records: every request ends with it, and begins with all of
 * the previous request but it. */
START_TEST(the_last_turn_stays_last)
{
    static const char *const answers[] = {ANSWER(SEARCH, "STOP"),
                                          ANSWER(BY_SLUG, "STOP"),
                                          ANSWER(TEXT("Done."), "STOP"), NULL};
    static const char last[] = "{\"role\":\"user\",\"parts\":[{\"text\":"
                               "\"STATE\"}]}]}";
    struct run r;

    run_loop_ex(&r, answers, 4, true);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.fake.posts, 3);
    for (int i = 0; i < 3; i++) {
        const char *q = r.fake.requests[i];
        size_t n = strlen(q);
        ck_assert_msg(n > sizeof(last) &&
                          strcmp(q + n - (sizeof(last) - 1), last) == 0,
                      "request %d does not end with the last turn: %s", i, q);
        if (i > 0) {
            const char *prev = r.fake.requests[i - 1];
            size_t keep = strlen(prev) - (sizeof(last) - 1);
            ck_assert_msg(strncmp(q, prev, keep) == 0,
                          "request %d does not begin with request %d", i,
                          i - 1);
        }
    }
    /* the first turn, 2 x (call, answer), the last turn, and the answer
     * (recorded after it: it is moved only before a Gemini call) */
    ck_assert_int_eq(json_array_size(r.contents), 7);
    ASSERT_SHAPE(&r, 5, "user:text");
    ASSERT_SHAPE(&r, 6, "model:text");
    run_release(&r);
}
END_TEST

START_TEST(max_steps_stops_the_loop)
{
    static const char *const answers[] = {ANSWER(SEARCH, "STOP"),
                                          ANSWER(SEARCH, "STOP"),
                                          ANSWER(SEARCH, "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 2);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_ptr_nonnull(strstr(r.rec.log, "done:max_steps\n"));
    ck_assert_int_eq(r.rec.dones, 1);
    ck_assert_int_eq(json_array_size(r.contents), 5);
    run_release(&r);
}
END_TEST

START_TEST(blocked_is_not_recorded)
{
    static const char *const answers[] = {
        "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"}," USAGE(5, 0, 5) "}",
        NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:5/1:-\ndone:blocked\n");
    ck_assert_int_eq(json_array_size(r.contents), 1);
    run_release(&r);
}
END_TEST

START_TEST(malformed_then_recovered)
{
    static const char *const answers[] = {
        "{\"candidates\":[{\"finishReason\":\"MALFORMED_FUNCTION_CALL\"}]}",
        ANSWER(TEXT("Done."), "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_ptr_nonnull(strstr(r.rec.log, "text:Done.\ndone:answered\n"));
    /* nothing of the malformed answer is kept */
    ck_assert_int_eq(json_array_size(r.contents), 2);
    ck_assert_str_eq(r.fake.requests[0], r.fake.requests[1]);
    run_release(&r);
}
END_TEST

START_TEST(malformed_twice_is_an_error)
{
    static const char *const answers[] = {
        "{\"candidates\":[{\"finishReason\":\"MALFORMED_FUNCTION_CALL\"}]}",
        "{\"candidates\":[{\"finishReason\":\"UNEXPECTED_TOOL_CALL\"}]}",
        ANSWER(TEXT("never read"), "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_BAD);
    ck_assert_ptr_nonnull(strstr(r.err.text, "UNEXPECTED_TOOL_CALL"));
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_int_eq(r.rec.dones, 0);
    ck_assert_int_eq(r.rec.errors, 1);
    ck_assert_ptr_nonnull(strstr(r.rec.log, "error:upstream_bad_response\n"));
    run_release(&r);
}
END_TEST

START_TEST(truncated_answer)
{
    static const char *const answers[] = {
        ANSWER(TEXT("The first half"), "MAX_TOKENS"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "text:The first half\n"
                                "done:truncated\n");
    run_release(&r);
}
END_TEST

START_TEST(bad_calls_are_answered_with_errors)
{
    static const char *const answers[] = {
        ANSWER(CALL("action_shop_nope",
                    "{}") "," CALL("action_shop_searchProducts",
                                   "{\"query\":\"x\",\"limit\":500}"),
               "STOP"),
        ANSWER(TEXT("Sorry."), "STOP"), NULL};
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.rec.log,
                                 "result:-:fail\n"
                                 "call:action_shop_searchProducts:run\n"
                                 "result:shop.searchProducts:fail\n"));
    /* the model reads why, and can correct itself */
    ck_assert_ptr_nonnull(
        strstr(r.fake.requests[1], "unknown function 'action_shop_nope'"));
    ck_assert_msg(strstr(r.fake.requests[1], "invalid arguments: /limit"), "%s",
                  r.fake.requests[1]);
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1], "did not run"));
    run_release(&r);
}
END_TEST

START_TEST(hostile_usage_counts_saturate)
{
    static const char *const answers[] =
        {
            "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":"
            "[" SEARCH "]},\"finishReason\":\"STOP\"}]," USAGE(
                9223372036854775807, -7, 9223372036854775807) "}",
            "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":"
            "[" TEXT("ok") "]},\"finishReason\":\"STOP\"}]," USAGE(
                9223372036854775807, 1e300, 9223372036854775807) "}",
            NULL};
    struct run r;
    long acc = LONG_MAX - 1;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.rec.usage.prompt, LONG_MAX);
    ck_assert_int_eq(r.rec.usage.total, LONG_MAX);
    ck_assert_int_eq(r.rec.usage.candidates, LONG_MAX);
    ck_assert_int_eq(r.rec.usage.calls, 2);
    loop_usage_add(&acc, 5);
    ck_assert_int_eq(acc, LONG_MAX);
    acc = 3;
    loop_usage_add(&acc, -5);
    ck_assert_int_eq(acc, 3);
    run_release(&r);
}
END_TEST

START_TEST(upstream_failure_reaches_the_sink)
{
    static const char *const answers[] = {NULL}; /* HTTP 500, always */
    struct run r;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_DOWN);
    ck_assert_int_eq(r.fake.posts, 3); /* the first try and two retries */
    ck_assert_str_eq(r.rec.log, "error:upstream_unavailable\n");
    run_release(&r);
}
END_TEST

/* An answer cut short (a 200 whose body is not whole JSON): asked again
 * as often as broke_retries says - the sink told first - and not at all
 * by default (the web routes). */
START_TEST(a_broken_answer_is_asked_again)
{
#define CUT "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
    static const char *const once[] = {CUT, ANSWER(TEXT("hi"), "STOP"),
                                       NULL};
    static const char *const twice[] = {CUT, CUT, ANSWER(TEXT("hi"), "STOP"),
                                        NULL};
    struct loop_more more = {.broke_retries = 1};
    struct run r;

    run_loop_more(&r, once, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_ptr_nonnull(strstr(r.rec.log, "retry:1/1:upstream_bad_response\n"));
    ck_assert_ptr_nonnull(strstr(r.rec.log, "text:hi"));
    /* the cut answer left nothing in the conversation */
    ck_assert_int_eq(json_array_size(r.contents), 2);
    run_release(&r);

    run_loop_more(&r, twice, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_BAD);
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_str_eq(r.rec.log, "retry:1/1:upstream_bad_response\n"
                                "error:upstream_bad_response\n");
    run_release(&r);

    run_loop(&r, once, 4);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.fake.posts, 1);
    ck_assert_str_eq(r.rec.log, "error:upstream_bad_response\n");
    run_release(&r);
#undef CUT
}
END_TEST

/* --- what a caller lets the loop spend -------------------------------------- */

/* A gate that writes down what it is asked, and refuses step `refuse`
 * (0-based; -1: never). */
struct gate_rec {
    int calls, refuse;
    size_t bytes[FAKE_MAX];
    long so_far[FAKE_MAX];
};

static int
gate_step(void *ctx, size_t request_bytes, const struct loop_usage *so_far,
          struct status_error *err)
{
    struct gate_rec *g = ctx;
    int i = g->calls++;

    ck_assert_int_lt(i, FAKE_MAX);
    g->bytes[i] = request_bytes;
    g->so_far[i] = loop_usage_tokens(so_far);
    if (i == g->refuse)
        return status_set_retry(err, ST_BUDGET_EXHAUSTED, 60,
                                "the budget is spent");
    return 0;
}

/* The gate is asked before every call, with the very bytes sent and the
 * usage of the calls before; what was used stays readable after. */
START_TEST(the_gate_sees_every_step)
{
    static const char *const answers[] = {
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[" SEARCH
        "]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{"
        "\"promptTokenCount\":10,\"candidatesTokenCount\":2,"
        "\"thoughtsTokenCount\":30,\"toolUsePromptTokenCount\":5,"
        "\"totalTokenCount\":47}}",
        ANSWER(BY_SLUG, "STOP"), ANSWER(TEXT("The hub costs $29."), "STOP"),
        NULL};
    struct gate_rec g = {.refuse = -1};
    struct loop_gate gate = {gate_step, &g, {0}};
    struct loop_more more = {&gate, 0, 0, 0, NULL};
    struct run r;

    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(g.calls, 3);
    ck_assert_int_eq(r.fake.posts, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(g.bytes[i], strlen(r.fake.requests[i]));
    /* prompt + candidates + thoughts + tool-use prompt, so far */
    ck_assert_int_eq(g.so_far[0], 0);
    ck_assert_int_eq(g.so_far[1], 47);
    ck_assert_int_eq(g.so_far[2], 47 + 12);
    ck_assert_int_eq(loop_usage_tokens(&gate.used), 47 + 12 + 12);
    ck_assert_int_eq(gate.used.thoughts, 30);
    ck_assert_int_eq(gate.used.tool_use, 5);
    ck_assert_int_eq(gate.used.calls, 3);
    run_release(&r);
}
END_TEST

/* A refused step is never sent: the loop ends with the gate's error,
 * and what the steps before used is there to settle. */
START_TEST(a_refused_step_is_not_sent)
{
    static const char *const answers[] = {
        ANSWER(SEARCH, "STOP"), ANSWER(BY_SLUG, "STOP"),
        ANSWER(TEXT("The hub costs $29."), "STOP"), NULL};
    struct gate_rec g = {.refuse = 1};
    struct loop_gate gate = {gate_step, &g, {0}};
    struct loop_more more = {&gate, 0, 0, 0, NULL};
    struct run r;

    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_BUDGET_EXHAUSTED);
    ck_assert_int_eq(r.err.retry_after_s, 60);
    ck_assert_int_eq(r.fake.posts, 1);
    ck_assert_int_eq(g.calls, 2);
    ck_assert_str_eq(r.rec.log, "usage:12/1:gemini-test-001\n"
                                "call:action_shop_searchProducts:run\n"
                                "result:shop.searchProducts:ok\n"
                                "error:budget_exhausted\n");
    ck_assert_int_eq(loop_usage_tokens(&gate.used), 12);
    run_release(&r);

    /* the first step refused: nothing at all reaches Gemini */
    g = (struct gate_rec){.refuse = 0};
    gate.used = (struct loop_usage){0};
    run_loop_more(&r, answers, 4, false, true, 0, &more);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.fake.posts, 0);
    /* a stream is told nothing before the refusal: not even "thinking" */
    ck_assert_str_eq(r.rec.log, "error:budget_exhausted\n");
    ck_assert_int_eq(loop_usage_tokens(&gate.used), 0);
    run_release(&r);
}
END_TEST

/* The bytes a request sends over all its steps are bounded: the step
 * that would pass the bound is not sent. */
START_TEST(upstream_bytes_are_bounded)
{
    static const char *const answers[] = {
        ANSWER(SEARCH, "STOP"), ANSWER(BY_SLUG, "STOP"),
        ANSWER(TEXT("The hub costs $29."), "STOP"), NULL};
    struct loop_more more = {NULL, 0, 0, 0, NULL};
    struct run r;
    size_t s0, s1;

    run_loop(&r, answers, 4);
    ck_assert_int_eq(r.fake.posts, 3);
    s0 = strlen(r.fake.requests[0]);
    s1 = strlen(r.fake.requests[1]);
    run_release(&r);

    /* exactly two steps' bytes: the third is refused */
    more.max_upstream_bytes = (long)(s0 + s1);
    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_TOO_LARGE);
    ck_assert_int_eq(r.fake.posts, 2);
    ck_assert_ptr_nonnull(strstr(r.err.text, "limits.maxUpstreamBytes"));
    run_release(&r);
    /* less than the first step: nothing is sent */
    more.max_upstream_bytes = (long)s0 - 1;
    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_int_eq(r.err.code, ST_UPSTREAM_TOO_LARGE);
    ck_assert_int_eq(r.fake.posts, 0);
    run_release(&r);
}
END_TEST

/* maxOutputTokens goes with every step, before the contents (the part
 * of the request that grows). */
START_TEST(max_output_tokens_is_sent)
{
    static const char *const answers[] = {
        ANSWER(SEARCH, "STOP"), ANSWER(TEXT("Done."), "STOP"), NULL};
    struct loop_more more = {NULL, 0, 1234, 0, NULL};
    struct run r;
    json_t *body;

    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    for (int i = 0; i < 2; i++) {
        static const char *const want[] = {"systemInstruction",
                                           "generationConfig", "contents"};
        const char *key;
        size_t k = 0;
        json_t *v;

        /* this run declares no tools: instruction, config, contents */
        body = json_loads(r.fake.requests[i], JSON_PRESERVE_ORDER, NULL);
        ck_assert_ptr_nonnull(body);
        ck_assert_int_eq(json_integer_value(json_object_get(
                             json_object_get(body, "generationConfig"),
                             "maxOutputTokens")),
                         1234);
        ck_assert_uint_eq(
            json_object_size(json_object_get(body, "generationConfig")), 1);
        json_object_foreach(body, key, v) {
            ck_assert_uint_lt(k, ARRAY_SIZE(want));
            ck_assert_str_eq(key, want[k]);
            k++;
        }
        ck_assert_uint_eq(k, ARRAY_SIZE(want));
        json_decref(body);
    }
    run_release(&r);
    /* 0: not sent (Gemini's own limit) */
    run_loop(&r, answers, 4);
    ck_assert_ptr_null(strstr(r.fake.requests[0], "generationConfig"));
    run_release(&r);
}
END_TEST

/* --- allocation failure injection ------------------------------------------- */

/*
 * Fail the allocation numbered `fail_at` (1-based) and count them all:
 * every allocation of jansson (outside a parse, see memlimit.h), of the
 * arena and of an sbuf.
 */
static long alloc_count, fail_at;

static bool
count_and_fail(size_t n)
{
    (void)n;
    return ++alloc_count == fail_at;
}

/* Each failed request logs a line; a sweep would log thousands. */
static void
quiet(void)
{
    if (!getenv("LOOP_VERBOSE"))
        ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
}

static void
inject(long at)
{
    alloc_count = 0;
    fail_at = at;
    memlimit_fail_hook = count_and_fail;
}

static void
stop_injecting(void)
{
    memlimit_fail_hook = NULL;
}

/* A chain, then a mixed turn: every kind of step the loop takes. */
static const char *const oom_answers[] = {
    ANSWER(TEXT("Looking.") "," SEARCH, "STOP"),
    ANSWER(BY_SLUG "," CALL("page_show", "{\"id\":\"p004\"}"), "STOP"), NULL};

/* Every allocation of the loop over `answers` fails in turn: each run
 * ends as if nothing failed, or with out of memory and nothing leaked. */
static void
oom_sweep(const char *const *answers, const struct loop_more *more)
{
    struct run base, r;
    char *base_contents;
    long total, failures = 0;

    quiet();
    run_loop_more(&base, answers, 4, false, false, 0, more);
    ck_assert_msg(base.rc == 0, "%s", base.err.text);
    base_contents = json_dumps(base.contents, JSON_SORT_KEYS);
    ck_assert_ptr_nonnull(base_contents);
    inject(0);
    run_loop_more(&r, answers, 4, false, false, 0, more);
    stop_injecting();
    total = alloc_count;
    run_release(&r);
    ck_assert_int_gt(total, 50);

    for (long at = 1; at <= total; at++) {
        long live = memlimit_json_live;
        inject(at);
        run_loop_more(&r, answers, 4, false, false, 0, more);
        stop_injecting();
        if (r.rc == 0) {
            /* survived: then exactly as if nothing had failed */
            char *got = json_dumps(r.contents, JSON_SORT_KEYS);
            ck_assert_msg(strcmp(r.rec.log, base.rec.log) == 0,
                          "allocation %ld: events differ:\n%s", at, r.rec.log);
            ck_assert_msg(got && strcmp(got, base_contents) == 0,
                          "allocation %ld: the conversation differs", at);
            free(got);
        } else {
            failures++;
            ck_assert_msg(r.err.code == ST_NO_MEMORY,
                          "allocation %ld: %s (%s) instead of out of memory",
                          at, status_code(r.err.code), r.err.text);
            ck_assert_msg(r.rec.errors == 1 && r.rec.dones == 0,
                          "allocation %ld: events:\n%s", at, r.rec.log);
        }
        run_release(&r);
        ck_assert_msg(memlimit_json_live == live,
                      "allocation %ld: %ld JSON values leaked", at,
                      memlimit_json_live - live);
    }
    ck_assert_int_gt(failures, total / 2);
    free(base_contents);
    run_release(&base);
}

START_TEST(every_allocation_failure_in_the_loop_is_clean)
{
    oom_sweep(oom_answers, NULL);
}
END_TEST

/* ... and so with bounds that refuse a call, cut a text and replace a
 * result. */
START_TEST(every_allocation_failure_in_bounding_is_clean)
{
    static const char *const answers[] = {
        ANSWER(CALL("page_add", "{\"x\":" DEEP5 "}") "," CALL(
                   "own_deep", "{}") "," TEXT("Looking at all of this now, "
                                               "one thing after the other, "
                                               "until every part is seen."),
               "STOP"),
        ANSWER(TEXT("Done."), "STOP"), NULL};
    struct turn_bounds b = {.depth = 4, .bytes = 150};
    struct loop_more more = {.bounds = &b};
    struct run r;

    /* the paths the sweep goes through */
    run_loop_more(&r, answers, 4, false, false, 0, &more);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.rec.log, "\xe2\x80\xa6\n"));
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1], "not run: the arguments"));
    ck_assert_ptr_nonnull(strstr(r.fake.requests[1], "the call ran, but"));
    run_release(&r);
    oom_sweep(answers, &more);
}
END_TEST

static const char chat_body[] =
    "{\"message\":\"find a usb hub\",\"history\":[],"
    "\"toolDefinitions\":[{\"name\":\"page_show\",\"description\":\"Show\","
    "\"category\":\"navigation\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"id\":{\"type\":\"string\"}}}}],"
    "\"pageState\":{\"cart\":[]}}";

/* A whole sendMessage request through dispatch_request(); its output
 * (head and body) goes to out[cap], which no injected failure touches. */
static void
run_request_ex(char *out, size_t cap, struct fake *f, bool stream)
{
    static const char *const params[] = {
        "REQUEST_METHOD",
        "POST",
        "DOCUMENT_URI",
        "/_jay/actions/geminiAgent.sendMessage",
        "CONTENT_TYPE",
        "application/json",
        "CONTENT_LENGTH",
        "221",
        NULL, /* HTTP_ACCEPT, for a stream */
        NULL,
        NULL};
    const char *p[ARRAY_SIZE(params)];
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, f};
    struct unit_memio m = {p, chat_body, strlen(chat_body), 0, 0,
                           out, 0, cap};

    memcpy(p, params, sizeof(p));
    if (stream) {
        p[8] = "HTTP_ACCEPT";
        p[9] = "application/x-ndjson";
    }
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct gemini g;
    struct arena a;

    ck_assert_uint_eq(strlen(chat_body), 221);
    out[0] = '\0';
    memset(f, 0, sizeof(*f));
    f->answers = oom_answers;
    gemini_init_transport(&g, &t);
    arena_init(&a);
    dispatch_request(site, &g, &io, &a);
    arena_release(&a);
    gemini_release(&g);
    fake_release(f);
}

static void
run_request(char *out, size_t cap, struct fake *f)
{
    run_request_ex(out, cap, f, false);
}

/* The body with every serverCalls[].ms zeroed: timings differ per run. */
static char *
answer_without_timings(const char *out)
{
    const char *body = strstr(out, "\r\n\r\n");
    json_t *v = body ? json_loads(body + 4, 0, NULL) : NULL;
    json_t *call;
    size_t i;
    char *s;

    ck_assert_msg(v != NULL, "not JSON: %s", out);
    json_array_foreach(json_object_get(v, "serverCalls"), i, call)
        json_object_set_new(call, "ms", json_integer(0));
    /* a new conversation's key is new every time (agent/convkey.h) */
    ck_assert(json_is_string(json_object_get(v, "conversation")));
    json_object_del(v, "conversation");
    s = json_dumps(v, JSON_SORT_KEYS);
    json_decref(v);
    return s;
}

/* dispatch_request() of `body` on `path`: the answer (head and body) in
 * out[cap], the Gemini requests in `f`. */
static void
run_body(const char *path, const char *body, char *out, size_t cap,
         struct fake *f, const char *const *answers)
{
    char len[32];
    /* one id: the answers are compared byte for byte (X-Request-Id) */
    const char *params[] = {"REQUEST_METHOD", "POST", "DOCUMENT_URI", path,
                            "CONTENT_TYPE", "application/json",
                            "CONTENT_LENGTH", len, "REQUEST_ID", "unit-1",
                            NULL};
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, f};
    struct unit_memio m = {params, body, strlen(body), 0, 0, out, 0, cap};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct gemini g;
    struct arena a;

    snprintf(len, sizeof(len), "%zu", strlen(body));
    out[0] = '\0';
    memset(f, 0, sizeof(*f));
    f->answers = answers;
    gemini_init_transport(&g, &t);
    arena_init(&a);
    dispatch_request(site, &g, &io, &a);
    arena_release(&a);
    gemini_release(&g);
}

/*
 * The browser's turns are copied from the body when they are compact and
 * written from their trees when not: the Gemini requests and the answer
 * must be the same bytes either way - through a chain of server calls, a
 * mixed turn's results, and text that jansson escapes its own way.
 */
START_TEST(copied_turns_are_the_bytes_written)
{
    static const char history[] =
        "[{\"role\":\"user\",\"parts\":[{\"text\":\"caf\\u00e9 <b>\\\"hi\\\""
        "</b> \\/ \\u001f\\ttab\"}]},"
        "{\"role\":\"model\",\"parts\":[{\"text\":\"Looking.\"},"
        "{\"functionCall\":{\"name\":\"action_shop_searchProducts\","
        "\"args\":{\"query\":\"usb\",\"n\":1.50,\"big\":1E3}},"
        "\"thoughtSignature\":\"c2lnbmF0dXJl\"}]},"
        "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":"
        "\"action_shop_searchProducts\",\"response\":{\"result\":[]}}}]},"
        "{\"role\":\"model\",\"parts\":[{\"text\":\"None found.\"}]},"
        "{\"role\":\"user\",\"parts\":[{\"text\":\"show p004\"}]},"
        "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":"
        "\"page_show\",\"args\":{\"id\":\"p004\"}}}]}]";
    static const char tools[] =
        "[{\"name\":\"page_show\",\"description\":\"Show\",\"inputSchema\":"
        "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}}}}]";
    static const char *const answers[] = {
        ANSWER(TEXT("Looking.") "," SEARCH, "STOP"),
        ANSWER(TEXT("Here \\u00e9 it is."), "STOP"), NULL};
    /* path, then the body: head, history, middle, tools, tail */
    static const struct {
        const char *path, *head, *mid, *tail;
    } cases[] = {
        {"/_jay/actions/geminiAgent.sendMessage",
         "{\"message\":\"find a hub\",\"history\":", ",\"toolDefinitions\":",
         ",\"pageState\":{\"cart\":[1,2.0]}}"},
        {"/_jay/actions/geminiAgent.submitToolResults",
         "{\"results\":[{\"callId\":\"call_5_0\",\"result\":\"{\\\"ok\\\":"
         "true}\"}],\"history\":",
         ",\"toolDefinitions\":", "}"},
    };
    static char out1[1 << 16], out2[1 << 16];
    json_t *h = json_loads(history, 0, NULL), *t = json_loads(tools, 0, NULL);
    char *compact = json_dumps(h, JSON_COMPACT | JSON_REAL_PRECISION(15));
    char *pretty = json_dumps(h, JSON_INDENT(2));
    char *tcompact = json_dumps(t, JSON_COMPACT);

    ck_assert_ptr_nonnull(compact);
    ck_assert_ptr_nonnull(pretty);
    quiet();
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char b1[4096], b2[4096];
        struct fake f1, f2;

        snprintf(b1, sizeof(b1), "%s%s%s%s%s", cases[i].head, compact,
                 cases[i].mid, tcompact, cases[i].tail);
        snprintf(b2, sizeof(b2), "%s%s%s%s%s", cases[i].head, pretty,
                 cases[i].mid, tcompact, cases[i].tail);
        run_body(cases[i].path, b1, out1, sizeof(out1), &f1, answers);
        run_body(cases[i].path, b2, out2, sizeof(out2), &f2, answers);
        ck_assert_msg(strncmp(out1, "Status: 200 OK\r\n", 16) == 0, "%s",
                      out1);
        ck_assert_int_eq(f1.posts, 2);
        ck_assert_int_eq(f2.posts, 2);
        for (int k = 0; k < f1.posts; k++)
            ck_assert_str_eq(f1.requests[k], f2.requests[k]);
        /* the timings of server calls differ: compare what comes before */
        ck_assert_ptr_nonnull(strstr(out1, "\"serverCalls\""));
        ck_assert_int_eq(strstr(out1, "\"serverCalls\"") - out1,
                         strstr(out2, "\"serverCalls\"") - out2);
        ck_assert_int_eq(strncmp(out1, out2, (size_t)(strstr(out1,
                                  "\"serverCalls\"") - out1)), 0);
        ck_assert_ptr_nonnull(strstr(f1.requests[0], "caf\xc3\xa9 <b>"));
        fake_release(&f1);
        fake_release(&f2);
    }
    free(compact);
    free(pretty);
    free(tcompact);
    json_decref(h);
    json_decref(t);
}
END_TEST

/* The last line of a streamed answer, parsed, its serverCalls[].ms
 * zeroed (timings differ per run). */
static json_t *
last_line(const char *out)
{
    json_t *call;
    size_t i;
    const char *body = strstr(out, "\r\n\r\n"), *p, *last = NULL;
    json_t *v;

    ck_assert_msg(body != NULL, "no head: %s", out);
    for (p = body + 4; *p != '\0'; p = strchr(p, '\n') + 1) {
        ck_assert_msg(strchr(p, '\n') != NULL, "unterminated line: %s", p);
        last = p;
    }
    ck_assert_ptr_nonnull(last);
    v = json_loadb(last, strcspn(last, "\n"), 0, NULL);
    ck_assert_msg(v != NULL, "not a JSON line: %s", last);
    json_array_foreach(json_object_get(json_object_get(v, "result"),
                                       "serverCalls"),
                       i, call)
        json_object_set_new(call, "ms", json_integer(0));
    /* a new conversation's key is new every time (agent/convkey.h) */
    json_object_del(json_object_get(v, "result"), "conversation");
    return v;
}

/*
 * The same request streamed, failing each allocation in turn: nothing
 * leaks, and the answer is the whole stream, or a stream whose last line
 * is the error, or (nothing streamed yet) the 500 envelope.
 */
START_TEST(every_allocation_failure_in_a_stream_is_clean)
{
    static char out[1 << 16];
    struct fake f;
    char *base;
    json_t *v;
    long total, errors = 0;

    quiet();
    run_request_ex(out, sizeof(out), &f, true);
    ck_assert_msg(strncmp(out, "Status: 200 OK\r\n", 16) == 0, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "application/x-ndjson"));
    ck_assert_int_eq(f.streamed, 2);
    v = last_line(out);
    ck_assert_str_eq(json_string_value(json_object_get(v, "type")), "result");
    base = json_dumps(json_object_get(v, "result"), JSON_SORT_KEYS);
    json_decref(v);
    inject(0);
    run_request_ex(out, sizeof(out), &f, true);
    stop_injecting();
    total = alloc_count;
    ck_assert_int_gt(total, 100);

    for (long at = 1; at <= total; at++) {
        long live = memlimit_json_live;
        inject(at);
        run_request_ex(out, sizeof(out), &f, true);
        stop_injecting();
        ck_assert_msg(memlimit_json_live == live,
                      "allocation %ld: %ld JSON values leaked", at,
                      memlimit_json_live - live);
        if (strncmp(out, "Status: 500 Internal Server Error\r\n", 35) == 0)
            continue;
        ck_assert_msg(strncmp(out, "Status: 200 OK\r\n", 16) == 0,
                      "allocation %ld: %s", at, out);
        v = last_line(out);
        const char *type = json_string_value(json_object_get(v, "type"));
        if (strcmp(type, "result") == 0) {
            char *got = json_dumps(json_object_get(v, "result"),
                                   JSON_SORT_KEYS);
            ck_assert_msg(strcmp(got, base) == 0,
                          "allocation %ld: another result:\n%s", at, got);
            free(got);
        } else {
            ck_assert_msg(strcmp(type, "error") == 0,
                          "allocation %ld: last line %s", at, type);
            ck_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(v, "error"), "code")),
                             "internal_error");
            errors++;
        }
        json_decref(v);
    }
    ck_assert_int_gt(errors, 0);
    free(base);
}
END_TEST

START_TEST(every_allocation_failure_in_a_request_is_a_500)
{
    static char out[1 << 16];
    struct fake f;
    char *base;
    long total, failures = 0;

    quiet();
    run_request(out, sizeof(out), &f);
    ck_assert_msg(strncmp(out, "Status: 200 OK\r\n", 16) == 0, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"type\":\"tool-calls\""));
    base = answer_without_timings(out);
    inject(0);
    run_request(out, sizeof(out), &f);
    stop_injecting();
    total = alloc_count;
    ck_assert_int_gt(total, 100);

    for (long at = 1; at <= total; at++) {
        long live = memlimit_json_live;
        inject(at);
        run_request(out, sizeof(out), &f);
        stop_injecting();
        ck_assert_msg(memlimit_json_live == live,
                      "allocation %ld: %ld JSON values leaked", at,
                      memlimit_json_live - live);
        if (strncmp(out, "Status: 200 OK\r\n", 16) == 0) {
            char *got = answer_without_timings(out);
            ck_assert_msg(strcmp(got, base) == 0,
                          "allocation %ld: 200 with another answer:\n%s", at,
                          got);
            free(got);
            continue;
        }
        failures++;
        ck_assert_msg(
            strncmp(out, "Status: 500 Internal Server Error\r\n", 35) == 0,
            "allocation %ld of %ld: not a 500:\n%s", at, total, out);
        ck_assert_msg(strstr(out, "\r\n\r\n{\"error\":{\"code\":"
                                    "\"internal_error\",\"message\":") != NULL,
                      "allocation %ld: not the error envelope:\n%s", at, out);
    }
    ck_assert_int_gt(failures, total / 2);
    free(base);
}
END_TEST

Suite *
loop_suite(void)
{
    Suite *s = suite_create("loop");
    TCase *tc = tcase_create("loop");
    TCase *oom = tcase_create("out of memory");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, text_answer);
    tcase_add_test(tc, parallel_page_calls_go_back);
    tcase_add_test(tc, server_only_chain);
    tcase_add_test(tc, mixed_turn_runs_server_calls_and_hands_back_the_rest);
    tcase_add_test(tc, streaming_sink_hears_every_step);
    tcase_add_test(tc, caller_answers_a_call);
    tcase_add_test(tc, calls_past_the_cap_do_not_run);
    tcase_add_test(tc, calls_past_the_bounds_are_answered_not_run);
    tcase_add_test(tc, results_past_the_bounds_are_not_kept);
    tcase_add_test(tc, every_allocation_failure_in_a_stream_is_clean);
    tcase_add_test(tc, the_last_turn_stays_last);
    tcase_add_test(tc, copied_turns_are_the_bytes_written);
    tcase_add_test(tc, max_steps_stops_the_loop);
    tcase_add_test(tc, blocked_is_not_recorded);
    tcase_add_test(tc, malformed_then_recovered);
    tcase_add_test(tc, malformed_twice_is_an_error);
    tcase_add_test(tc, truncated_answer);
    tcase_add_test(tc, bad_calls_are_answered_with_errors);
    tcase_add_test(tc, hostile_usage_counts_saturate);
    tcase_add_test(tc, upstream_failure_reaches_the_sink);
    tcase_add_test(tc, a_broken_answer_is_asked_again);
    tcase_add_test(tc, the_gate_sees_every_step);
    tcase_add_test(tc, a_refused_step_is_not_sent);
    tcase_add_test(tc, upstream_bytes_are_bounded);
    tcase_add_test(tc, max_output_tokens_is_sent);
    suite_add_tcase(s, tc);

    tcase_add_checked_fixture(oom, setup, teardown);
    tcase_set_timeout(oom, 120);
    tcase_add_test(oom, every_allocation_failure_in_the_loop_is_clean);
    tcase_add_test(oom, every_allocation_failure_in_bounding_is_clean);
    tcase_add_test(oom, every_allocation_failure_in_a_request_is_a_500);
    suite_add_tcase(s, oom);
    return s;
}
