/*
 * check_gemini.c - the Gemini client: error bodies (every real fixture in
 * ../data/gemini-fixtures), durations, back-off, the retry and deadline
 * policy over a scripted fake transport and fake clock, and the libcurl
 * transport against a loopback HTTP/1.1 server thread.
 *
 * No test reaches the network: the fake transport answers from a script,
 * and the loopback server listens on 127.0.0.1 with a kernel-chosen port.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/gemini.h"
#include "core/arena.h"
#include "gemini/bounds.h"
#include "core/config.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <arpa/inet.h>
#include "unit_fixture.h"

#include <check.h>
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FIXTURES UNIT_FIXTURES
#define TEST_KEY "AIzaSyTEST-key_0123456789abcdefghijkl"
#define TEST_MODEL "gemini-3.8-flash"
#define TEST_PATH "conf/.gemini.yaml"
#define REQ_BODY "{\"contents\":[]}"

/* TESTABLE in gemini.c */
void gemini_scrub(char *dst, size_t size, const char *msg, const char *key);

/* --- shared helpers ------------------------------------------------------ */

/* A config with its strings in writable storage (config.h has char *). */
struct test_cfg {
    struct config cfg;
    char path[64], key[64], model[64], base[128];
};

static void
test_cfg_init(struct test_cfg *tc, const char *base, long timeout_ms)
{
    memset(tc, 0, sizeof(*tc));
    snprintf(tc->path, sizeof(tc->path), "%s", TEST_PATH);
    snprintf(tc->key, sizeof(tc->key), "%s", TEST_KEY);
    snprintf(tc->model, sizeof(tc->model), "%s", TEST_MODEL);
    snprintf(tc->base, sizeof(tc->base), "%s", base);
    tc->cfg.gemini.path = tc->path;
    tc->cfg.gemini.api_key = tc->key;
    tc->cfg.gemini.model = tc->model;
    tc->cfg.gemini.base_url = tc->base;
    tc->cfg.gemini.timeout_ms = timeout_ms;
}

/* The key must not appear in `s`, not even its first 8 characters. */
static void
assert_no_key(const char *s)
{
    ck_assert_msg(strstr(s, TEST_KEY) == NULL, "key leaked in '%s'", s);
    ck_assert_msg(memmem(s, strlen(s), TEST_KEY, 8) == NULL,
                  "key prefix leaked in '%s'", s);
}

/*
 * The log lines (stderr) written between capture_start() and
 * capture_end(), at level warn: what the site owner reads, apart from
 * what visitors read. capture_end() returns them (free it).
 */
struct capture {
    FILE *f;
    int saved;
};

static void
capture_start(struct capture *c)
{
    c->f = tmpfile();
    ck_assert_ptr_nonnull(c->f);
    c->saved = dup(STDERR_FILENO);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_ge(dup2(fileno(c->f), STDERR_FILENO), 0);
    logmsg_set_level(LOG_LVL_WARN);
}

static char *
capture_end(struct capture *c)
{
    char *buf;
    long n;

    logmsg_set_level(LOG_LVL_ERROR);
    ck_assert_int_ge(dup2(c->saved, STDERR_FILENO), 0);
    close(c->saved);
    ck_assert_int_eq(fseek(c->f, 0, SEEK_END), 0);
    n = ftell(c->f);
    ck_assert_int_ge(n, 0);
    rewind(c->f);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, c->f), (size_t)n);
    buf[n] = '\0';
    fclose(c->f);
    return buf;
}

static void
quiet(void)
{
    logmsg_set_level(LOG_LVL_ERROR);
}

/* --- gemini_parse_error ------------------------------------------------ */

static const struct {
    const char *file;
    long code;
    const char *status;
    const char *reason;
    long retry_ms;
    const char *message; /* a prefix of error.message */
    size_t message_len;  /* its stored length (255 when cut) */
} error_fixtures[] = {
    {"e400-api-key-invalid.array-wrapped.json", 400, "INVALID_ARGUMENT",
     "API_KEY_INVALID", -1, "API key not valid. Please pass", 47},
    {"e400-function-response-count-mismatch.array-wrapped.json", 400,
     "INVALID_ARGUMENT", "", -1, "Please ensure that the number of", 129},
    {"e400-invalid-json-payload-unknown-field.json", 400, "INVALID_ARGUMENT",
     "", -1, "Invalid JSON payload received. Unknown name", 181},
    {"e400-thought-signature-missing.json", 400, "INVALID_ARGUMENT", "", -1,
     "Function call is missing a thought_signature", 255},
    {"e403-permission-denied.json", 403, "PERMISSION_DENIED", "", -1,
     "Method doesn't allow unregistered callers", 157},
    {"e404-model-not-found.json", 404, "NOT_FOUND", "", -1,
     "models/custom-gemini-2.0-flash is not found", 189},
    {"e429-resource-exhausted-retryinfo.json", 429, "RESOURCE_EXHAUSTED", "",
     26000, "You exceeded your current quota", 172},
    {"e429-resource-exhausted-vertex-style.array-wrapped.json", 429,
     "RESOURCE_EXHAUSTED", "", -1, "Resource exhausted. Please try", 146},
    {"e500-internal.json", 500, "INTERNAL", "", -1,
     "An internal error has occurred.", 118},
    {"e500-internal.midstream-chunk.json", 500, "INTERNAL", "", -1,
     "An internal error has occurred.", 118},
    {"e503-unavailable-high-demand.json", 503, "UNAVAILABLE", "", -1,
     "This model is currently experiencing high demand.", 113},
    {"e503-unavailable-overloaded.json", 503, "UNAVAILABLE", "", -1,
     "The model is overloaded.", 48},
};

START_TEST(parse_error_fixture)
{
    struct gemini_error_info info;
    size_t len;
    char *body = unit_fixture(error_fixtures[_i].file, &len);

    ck_assert_int_eq(gemini_parse_error(body, len, &info), 0);
    ck_assert_int_eq(info.code, error_fixtures[_i].code);
    ck_assert_str_eq(info.status, error_fixtures[_i].status);
    ck_assert_str_eq(info.reason, error_fixtures[_i].reason);
    ck_assert_int_eq(info.retry_delay_ms, error_fixtures[_i].retry_ms);
    ck_assert_msg(strncmp(info.message, error_fixtures[_i].message,
                          strlen(error_fixtures[_i].message)) == 0,
                  "%s: message '%s'", error_fixtures[_i].file, info.message);
    ck_assert_uint_eq(strlen(info.message), error_fixtures[_i].message_len);
    free(body);
}
END_TEST

/* The table above covers every e*.json fixture: a new one fails here. */
START_TEST(parse_error_table_covers_every_fixture)
{
    glob_t gl;

    ck_assert_int_eq(glob(FIXTURES "/e*.json", 0, NULL, &gl), 0);
    ck_assert_uint_eq(gl.gl_pathc, ARRAY_SIZE(error_fixtures));
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        const char *base = strrchr(gl.gl_pathv[i], '/') + 1;
        bool found = false;
        for (size_t j = 0; j < ARRAY_SIZE(error_fixtures); j++)
            found = found || strcmp(base, error_fixtures[j].file) == 0;
        ck_assert_msg(found, "fixture '%s' has no row", base);
    }
    globfree(&gl);
}
END_TEST

static const char *const not_errors[] = {
    "",
    "<html><head><title>502 Bad Gateway</title></head></html>",
    "{\"error\":{\"code\":500,\"message\":\"An internal",
    "[]",
    "[{},{}]",
    "[{\"error\":{\"code\":1}},{\"error\":{\"code\":2}}]",
    "{\"error\":\"x\"}",
    "{}",
    "[{}]",
    "null",
    "\"error\"",
    "{\"candidates\":[]}",
};

/* Pure tables run in one test each: the message names the failing row. */
START_TEST(parse_error_refuses_non_errors)
{
    for (size_t i = 0; i < ARRAY_SIZE(not_errors); i++) {
        struct gemini_error_info info;
        const char *s = not_errors[i];

        ck_assert_msg(gemini_parse_error(s, strlen(s), &info) == -1,
                      "accepted '%s'", s);
        ck_assert_msg(info.code == 0 && info.message[0] == '\0' &&
                          info.retry_delay_ms == -1,
                      "'%s' left data behind", s);
    }
}
END_TEST

START_TEST(parse_error_odd_shapes)
{
    struct gemini_error_info info;
    const char *s;

    /* Details of the wrong types are skipped, not fatal. */
    s = "{\"error\":{\"code\":\"429\",\"status\":7,\"details\":[1,{\"@type\":"
        "5},{\"@type\":\"x.RetryInfo\",\"retryDelay\":\"soon\"},{\"@type\":"
        "\"x.ErrorInfo\",\"reason\":\"A\"},{\"@type\":\"x.ErrorInfo\","
        "\"reason\":\"B\"},{\"@type\":\"x.RetryInfo\",\"retryDelay\":"
        "\"2s\"}]}}";
    ck_assert_int_eq(gemini_parse_error(s, strlen(s), &info), 0);
    ck_assert_int_eq(info.code, 0);
    ck_assert_str_eq(info.status, "");
    ck_assert_str_eq(info.reason, "A");
    /* a junk retryDelay does not hide a later valid one */
    ck_assert_int_eq(info.retry_delay_ms, 2000);

    s = "{\"error\":{\"details\":{\"@type\":\"x.RetryInfo\"}}}";
    ck_assert_int_eq(gemini_parse_error(s, strlen(s), &info), 0);
    ck_assert_int_eq(info.retry_delay_ms, -1);
}
END_TEST

/* A long message is cut whole characters at a time. */
START_TEST(parse_error_cuts_message_at_utf8)
{
    struct gemini_error_info info;
    struct sbuf sb;

    sbuf_init(&sb, 4096);
    ck_assert_int_eq(sbuf_adds(&sb, "{\"error\":{\"message\":\""), 0);
    for (int i = 0; i < 200; i++)
        ck_assert_int_eq(sbuf_adds(&sb, "\xc3\xa9"), 0); /* é */
    ck_assert_int_eq(sbuf_adds(&sb, "\"}}"), 0);
    ck_assert_int_eq(gemini_parse_error(sb.buf, sb.len, &info), 0);
    ck_assert_uint_eq(strlen(info.message), 254);
    ck_assert_int_eq((unsigned char)info.message[252], 0xc3);
    sbuf_release(&sb);
}
END_TEST

/* --- durations, back-off, retryable -------------------------------------- */

static const struct {
    const char *in;
    long ms;
} durations[] = {
    {"26s", 26000},
    {"0.5s", 500},
    {"1.250s", 1250},
    {"1.25s", 1250},
    {"0s", 0},
    {"3.000000000s", 3000},
    {"0.000000001s", 1}, /* sub-millisecond rounds up: a wait */
    {"120s", 120000},
    {"", -1},
    {"s", -1},
    {"26", -1},
    {"-1s", -1},
    {"+1s", -1},
    {"1.s", -1},
    {".5s", -1},
    {"1.0000000001s", -1},
    {"1e3s", -1},
    {"26 s", -1},
    {"26s ", -1},
    {" 26s", -1},
    {"1,5s", -1},
    {"26ms", -1},
    {"abc", -1},
    {"99999999999999999999s", -1},
};

START_TEST(parse_duration_table)
{
    for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
        long got = gemini_parse_duration(durations[i].in);
        ck_assert_msg(got == durations[i].ms, "'%s' -> %ld, want %ld",
                      durations[i].in, got, durations[i].ms);
    }
}
END_TEST

START_TEST(parse_duration_null)
{
    ck_assert_int_eq(gemini_parse_duration(NULL), -1);
}
END_TEST

START_TEST(backoff_bounds)
{
    const long b = GEMINI_BACKOFF_BASE_MS;

    ck_assert_int_eq(gemini_backoff_ms(1, -1, 0), b);
    ck_assert_int_ge(gemini_backoff_ms(1, -1, UINT_MAX), b);
    ck_assert_int_lt(gemini_backoff_ms(1, -1, UINT_MAX), b + b / 2);
    ck_assert_int_eq(gemini_backoff_ms(2, -1, 0), 2 * b);
    ck_assert_int_ge(gemini_backoff_ms(2, -1, UINT_MAX), 2 * b);
    ck_assert_int_lt(gemini_backoff_ms(2, -1, UINT_MAX), 3 * b);
    /* jitter grows with rnd */
    ck_assert_int_gt(gemini_backoff_ms(2, -1, UINT_MAX / 2), 2 * b);
    /* a hint above the back-off wins; one below it does not */
    ck_assert_int_eq(gemini_backoff_ms(1, 26000, 0), 26000);
    ck_assert_int_eq(gemini_backoff_ms(2, 26000, UINT_MAX), 26000);
    ck_assert_int_eq(gemini_backoff_ms(1, 100, 0), b);
    ck_assert_int_eq(gemini_backoff_ms(1, 0, 0), b);
    /* out-of-range retry numbers are clamped, never overflow */
    ck_assert_int_eq(gemini_backoff_ms(0, -1, 0), b);
    ck_assert_int_gt(gemini_backoff_ms(INT_MAX, -1, UINT_MAX), 0);
}
END_TEST

static const struct {
    enum gemini_net net;
    long status;
    bool retry;
} retryables[] = {
    {GEMINI_NET_CONNECT, 0, true},      {GEMINI_NET_OK, 408, true},
    {GEMINI_NET_OK, 429, true},         {GEMINI_NET_OK, 500, true},
    {GEMINI_NET_OK, 502, true},         {GEMINI_NET_OK, 503, true},
    {GEMINI_NET_OK, 504, true},         {GEMINI_NET_OK, 200, false},
    {GEMINI_NET_OK, 400, false},        {GEMINI_NET_OK, 401, false},
    {GEMINI_NET_OK, 403, false},        {GEMINI_NET_OK, 404, false},
    {GEMINI_NET_OK, 409, false},        {GEMINI_NET_OK, 501, false},
    {GEMINI_NET_TIMEOUT, 0, false},     {GEMINI_NET_STALL, 200, false},
    {GEMINI_NET_TOO_LARGE, 200, false}, {GEMINI_NET_OTHER, 503, false},
};

START_TEST(retryable_table)
{
    for (size_t i = 0; i < ARRAY_SIZE(retryables); i++) {
        struct gemini_http h = {.net = retryables[i].net,
                                .status = retryables[i].status};
        ck_assert_msg(gemini_retryable(&h) == retryables[i].retry,
                      "net %d status %ld", (int)h.net, h.status);
    }
}
END_TEST

/* --- the policy over a fake transport ------------------------------------ */

struct fake_step {
    enum gemini_net net;
    long status;
    const char *body;    /* the response body, or */
    const char *file;    /* a fixture file */
    bool has_retry_after;
    long retry_after_ms; /* the Retry-After header */
    long took_ms;        /* simulated time; past the attempt's limit the
                          * fake answers GEMINI_NET_TIMEOUT instead */
};

#define MAX_STEPS 4

struct fake {
    const struct fake_step *steps;
    size_t nsteps;
    int calls;
    long now, start, timeout;
    long post_at[MAX_STEPS];
    long post_limit[MAX_STEPS];
    long slept;
    bool overran; /* a post began late or was given more than time left */
    bool bad_args;
};

static int
fake_post(void *ctx, const char *url, const char *api_key, const char *body,
          size_t len, long timeout_ms, struct gemini_http *out)
{
    struct fake *f = ctx;
    const struct fake_step *s;
    long left = f->start + f->timeout - f->now;

    ck_assert_msg((size_t)f->calls < f->nsteps, "unexpected attempt %d",
                  f->calls + 1);
    s = &f->steps[f->calls];
    f->post_at[f->calls] = f->now;
    f->post_limit[f->calls] = timeout_ms;
    f->calls++;
    if (timeout_ms <= 0 || timeout_ms > left)
        f->overran = true;
    if (strcmp(url, "http://gemini.test/v1beta/models/" TEST_MODEL
                    ":generateContent") != 0 ||
        strcmp(api_key, TEST_KEY) != 0 || len != strlen(REQ_BODY) ||
        memcmp(body, REQ_BODY, len) != 0)
        f->bad_args = true;

    if (s->took_ms > timeout_ms) {
        f->now += timeout_ms;
        out->net = GEMINI_NET_TIMEOUT;
        out->status = 0;
        out->retry_after_ms = -1;
        return 0;
    }
    f->now += s->took_ms;
    out->net = s->net;
    out->status = s->status;
    out->retry_after_ms = s->has_retry_after ? s->retry_after_ms : -1;
    if (s->file != NULL) {
        size_t n;
        char *b = unit_fixture(s->file, &n);
        ck_assert_int_eq(sbuf_add(&out->body, b, n), 0);
        free(b);
    } else if (s->body != NULL) {
        ck_assert_int_eq(sbuf_adds(&out->body, s->body), 0);
    }
    return 0;
}

static void
fake_sleep(void *ctx, long ms)
{
    struct fake *f = ctx;

    ck_assert_int_ge(ms, 0);
    f->now += ms;
    f->slept += ms;
}

static long
fake_now(void *ctx)
{
    return ((struct fake *)ctx)->now;
}

/* gemini_generate() of REQ_BODY with the settings gc. */
static int
generate(struct gemini *g, const struct config_gemini *gc, struct arena *a,
         json_t **resp, struct gemini_usage *usage, struct status_error *err)
{
    struct gemini_request rq = {gc, REQ_BODY, strlen(REQ_BODY), a, usage};

    return gemini_generate(g, &rq, resp, err);
}

#define RETRY_1S                                                         \
    "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\","        \
    "\"message\":\"slow down\",\"details\":[{\"@type\":"                 \
    "\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"1s\"}]}}"
#define KEY_IN_MESSAGE                                                   \
    "{\"error\":{\"code\":400,\"status\":\"INVALID_ARGUMENT\","          \
    "\"message\":\"API key " TEST_KEY " is not valid for\\nthis project " \
    "(key=" TEST_KEY ")\"}}"
#define HTML "<html><body><h1>502 Bad Gateway</h1></body></html>"

/* One scripted attempt: an HTTP answer, or a transport outcome. */
#define HTTP(st, ...) {.net = GEMINI_NET_OK, .status = (st), __VA_ARGS__}
#define NET(n, ...)   {.net = GEMINI_NET_##n, __VA_ARGS__}
#define OK_200        HTTP(200, .file = "01-text-reply.response.json", \
                           .took_ms = 700)

struct scenario {
    const char *name;
    struct fake_step steps[MAX_STEPS];
    int calls;            /* attempts expected (= steps used) */
    long timeout_ms;      /* 0: 60 s; -1: none at all */
    bool no_key;
    enum status code;     /* ST_OK: success */
    long min_second_post; /* the 2nd post starts at least this late */
    long max_second_post; /* ... and at most this late (0: no bound) */
    const char *want[2];  /* substrings of err.text (visitors read it) */
    const char *log_want[2]; /* substrings of the log (the owner reads it) */
    long retry_after_min; /* err.retry_after_s at least this */
    long retry_after_max; /* ... and at most this (0: no bound) */
};

/* RetryInfo asking for 99999 s: a broken or hostile upstream. */
#define RETRY_99999S                                                     \
    "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\","        \
    "\"message\":\"slow down\",\"details\":[{\"@type\":"                 \
    "\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":"         \
    "\"99999s\"}]}}"

static const struct scenario scenarios[] = {
    {"200 on the first try", {OK_200}, .calls = 1},
    {"429 with RetryInfo 1s, then 200",
     {HTTP(429, .body = RETRY_1S, .took_ms = 50), OK_200},
     .calls = 2, .min_second_post = 1050},
    {"503 three times",
     {HTTP(503, .file = "e503-unavailable-overloaded.json", .took_ms = 100),
      HTTP(503, .file = "e503-unavailable-overloaded.json", .took_ms = 100),
      HTTP(503, .file = "e503-unavailable-high-demand.json", .took_ms = 100)},
     .calls = 3, .code = ST_UPSTREAM_DOWN,
     .want = {"Gemini is unavailable (HTTP 503, 3 attempts)"},
     .log_want = {"HTTP 503 UNAVAILABLE", "high demand"}},
    {"500, 503, then 200",
     {HTTP(500, .file = "e500-internal.json", .took_ms = 10),
      HTTP(503, .body = HTML, .took_ms = 10), OK_200},
     .calls = 3},
    {"408 is retried", {HTTP(408, .took_ms = 5), OK_200}, .calls = 2,
     .min_second_post = 505},
    {"400 is not retried",
     {HTTP(400, .file = "e400-thought-signature-missing.json")},
     .calls = 1, .code = ST_UPSTREAM_REJECTED,
     .want = {"Gemini rejected the request (HTTP 400)"},
     .log_want = {"HTTP 400 INVALID_ARGUMENT: Function call is missing a "
                  "thought_signature"}},
    {"400 unknown field: one line",
     {HTTP(400, .file = "e400-invalid-json-payload-unknown-field.json")},
     .calls = 1, .code = ST_UPSTREAM_REJECTED,
     .want = {"Gemini rejected the request (HTTP 400)"},
     .log_want = {"Cannot find field. Invalid JSON payload"}},
    {"400 with an HTML body", {HTTP(400, .body = HTML)}, .calls = 1,
     .code = ST_UPSTREAM_REJECTED,
     .want = {"Gemini rejected the request (HTTP 400)"}},
    {"403 is an auth failure",
     {HTTP(403, .file = "e403-permission-denied.json")}, .calls = 1,
     .code = ST_UPSTREAM_AUTH,
     .want = {"Gemini refused the site's API key: the site owner needs to "
              "check it"},
     .log_want = {"check apiKey in " TEST_PATH " or GEMINI_API_KEY",
                  "unregistered callers"}},
    {"401 is an auth failure", {HTTP(401, .took_ms = 0)}, .calls = 1,
     .code = ST_UPSTREAM_AUTH, .want = {"refused the site's API key"},
     .log_want = {"the API key was refused (HTTP 401)"}},
    {"400 API_KEY_INVALID (array-wrapped) is an auth failure",
     {HTTP(400, .file = "e400-api-key-invalid.array-wrapped.json")},
     .calls = 1, .code = ST_UPSTREAM_AUTH,
     .want = {"refused the site's API key"},
     .log_want = {"reason API_KEY_INVALID", "API key not valid"}},
    {"404 names the model", {HTTP(404, .file = "e404-model-not-found.json")},
     .calls = 1, .code = ST_UPSTREAM_REJECTED,
     .want = {"Gemini does not know the model '" TEST_MODEL "'",
              "the site owner needs to choose another"},
     .log_want = {"set model in " TEST_PATH, "is not found for API"}},
    {"429 retryDelay 26s fits a 60 s deadline",
     {HTTP(429, .file = "e429-resource-exhausted-retryinfo.json",
           .took_ms = 200),
      OK_200},
     .calls = 2, .timeout_ms = 60000, .min_second_post = 26200},
    {"429 retryDelay 26s does not fit a 10 s deadline",
     {HTTP(429, .file = "e429-resource-exhausted-retryinfo.json",
           .took_ms = 200)},
     .calls = 1, .timeout_ms = 10000, .code = ST_UPSTREAM_RATE,
     .want = {"Gemini's rate limit was reached; try again in 26 s"},
     .log_want = {"exceeded your current quota"},
     .retry_after_min = 26, .retry_after_max = 26},
    {"429 without RetryInfo, three times",
     {HTTP(429, .file = "e429-resource-exhausted-vertex-style.array-wrapped"
                        ".json"),
      HTTP(429, .file = "e429-resource-exhausted-vertex-style.array-wrapped"
                        ".json"),
      HTTP(429, .file = "e429-resource-exhausted-vertex-style.array-wrapped"
                        ".json")},
     .calls = 3, .code = ST_UPSTREAM_RATE, .want = {"try again in"},
     .retry_after_min = 1},
    {"Retry-After header is honoured",
     {HTTP(503, .has_retry_after = true, .retry_after_ms = 3000,
           .took_ms = 10),
      OK_200},
     .calls = 2, .min_second_post = 3010},
    {"Retry-After on the last 503 is passed on",
     {HTTP(503, .has_retry_after = true, .retry_after_ms = 40000)},
     .calls = 1, .timeout_ms = 30000, .code = ST_UPSTREAM_DOWN,
     .want = {"HTTP 503"}, .retry_after_min = 40, .retry_after_max = 40},
    /* A hint past GEMINI_RETRY_HINT_MAX_MS is clamped, both for the
     * visitor's Retry-After and for the wait before a retry. */
    {"Retry-After of 99999 s is passed on as 60",
     {HTTP(503, .has_retry_after = true, .retry_after_ms = 99999000L)},
     .calls = 1, .timeout_ms = 30000, .code = ST_UPSTREAM_DOWN,
     .want = {"HTTP 503"}, .log_want = {"asked to wait 99999 s"},
     .retry_after_min = 60, .retry_after_max = 60},
    {"RetryInfo of 99999 s is passed on as 60",
     {HTTP(429, .body = RETRY_99999S, .took_ms = 10)},
     .calls = 1, .timeout_ms = 30000, .code = ST_UPSTREAM_RATE,
     .want = {"try again in 60 s"}, .log_want = {"slow down"},
     .retry_after_min = 60, .retry_after_max = 60},
    {"RetryInfo of 99999 s is waited out as 60 s",
     {HTTP(429, .body = RETRY_99999S, .took_ms = 10), OK_200},
     .calls = 2, .timeout_ms = 280000, .min_second_post = 60010,
     .max_second_post = 61000},
    {"502, then 400: the 400 is final",
     {HTTP(502, .body = HTML),
      HTTP(400, .file = "e400-thought-signature-missing.json")},
     .calls = 2, .code = ST_UPSTREAM_REJECTED,
     .want = {"rejected the request (HTTP 400)"},
     .log_want = {"attempt 2 of 3 failed: HTTP 400", "thought_signature"}},
    {"connection failures three times",
     {NET(CONNECT, .took_ms = 10), NET(CONNECT, .took_ms = 10),
      NET(CONNECT, .took_ms = 10)},
     .calls = 3, .code = ST_UPSTREAM_DOWN,
     .want = {"the connection failed", "3 attempts"}},
    {"connection failure, then 200", {NET(CONNECT, .took_ms = 10), OK_200},
     .calls = 2, .min_second_post = 510},
    {"timeout is not retried", {NET(TIMEOUT, .took_ms = 60000)}, .calls = 1,
     .code = ST_UPSTREAM_TIMEOUT,
     .want = {"Gemini did not answer within 60 s"}},
    {"stall is not retried", {NET(STALL, .status = 200, .took_ms = 20000)},
     .calls = 1, .code = ST_UPSTREAM_TIMEOUT,
     .want = {"stopped arriving: nothing came for 15 s"}},
    {"a retry gets only the time left, and times out",
     {HTTP(503, .took_ms = 3000), HTTP(200, .took_ms = 10000)}, .calls = 2,
     .timeout_ms = 5000, .code = ST_UPSTREAM_TIMEOUT,
     .min_second_post = 3500, .want = {"within 5 s"}},
    {"no retry when the back-off passes the deadline",
     {HTTP(503, .took_ms = 950)}, .calls = 1, .timeout_ms = 1000,
     .code = ST_UPSTREAM_DOWN, .want = {"1 attempt)"}},
    {"HTML with 200 is a bad response", {HTTP(200, .body = HTML)},
     .calls = 1, .code = ST_UPSTREAM_BAD,
     .want = {"Gemini sent a response that is not JSON"}},
    {"truncated JSON with 200 is a bad response",
     {HTTP(200, .body = "{\"candidates\":[{\"content\":{")}, .calls = 1,
     .code = ST_UPSTREAM_BAD, .want = {"not JSON"}},
    {"empty 200 is a bad response", {HTTP(200, .took_ms = 0)}, .calls = 1,
     .code = ST_UPSTREAM_BAD, .want = {"not JSON"}},
    {"too large is a bad response", {NET(TOO_LARGE, .status = 200)},
     .calls = 1, .code = ST_UPSTREAM_BAD, .want = {"larger than 16 MiB"}},
    {"transfer error is a bad response", {NET(OTHER, .took_ms = 0)},
     .calls = 1, .code = ST_UPSTREAM_BAD, .want = {"TLS or protocol"}},
    {"a redirect is a bad response", {HTTP(301, .took_ms = 0)}, .calls = 1,
     .code = ST_UPSTREAM_BAD, .want = {"unexpected HTTP 301"}},
    {"no time at all: no call", {OK_200}, .calls = 0, .timeout_ms = -1,
     .code = ST_UPSTREAM_TIMEOUT, .want = {"did not answer"}},
    {"missing key: no call", {OK_200}, .calls = 0, .no_key = true,
     .code = ST_NOT_CONFIGURED,
     .want = {"The assistant is not set up yet: the site owner needs to add "
              "a Gemini API key."},
     .log_want = {"no API key is configured: put it in " TEST_PATH
                  " (apiKey) or set GEMINI_API_KEY"}},
    {"the key is scrubbed from Gemini's message",
     {HTTP(400, .body = KEY_IN_MESSAGE)}, .calls = 1,
     .code = ST_UPSTREAM_REJECTED,
     .want = {"Gemini rejected the request (HTTP 400)"},
     .log_want = {"API key [redacted] is not valid for this project "
                  "(key=[redacted])"}},
};

START_TEST(generate_scenario)
{
    const struct scenario *sc = &scenarios[_i];
    struct fake f = {.steps = sc->steps, .nsteps = (size_t)sc->calls,
                     .now = 1000000, .start = 1000000};
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &f};
    struct gemini_usage usage = {0};
    struct status_error err = {0};
    struct test_cfg tc;
    struct gemini g;
    struct arena a;
    struct capture cap;
    json_t *resp = (json_t *)&f; /* must be overwritten */
    char *log;
    int rc;

    quiet();
    test_cfg_init(&tc, "http://gemini.test",
                  sc->timeout_ms > 0 ? sc->timeout_ms
                                     : sc->timeout_ms < 0 ? 0 : 60000);
    if (sc->no_key)
        tc.cfg.gemini.api_key = NULL;
    f.timeout = tc.cfg.gemini.timeout_ms;
    arena_init(&a);
    gemini_init_transport(&g, &t);

    capture_start(&cap);
    rc = generate(&g, &tc.cfg.gemini, &a, &resp, &usage, &err);
    log = capture_end(&cap);

    ck_assert_msg(rc == (sc->code == ST_OK ? 0 : -1), "%s: rc %d (%s)",
                  sc->name, rc, err.text);
    ck_assert_msg(err.code == sc->code, "%s: status %d, want %d: %s",
                  sc->name, (int)err.code, (int)sc->code, err.text);
    ck_assert_msg(usage.calls == sc->calls && f.calls == usage.calls,
                  "%s: %d calls", sc->name, usage.calls);
    ck_assert_msg(!f.overran, "%s: an attempt ran past the deadline",
                  sc->name);
    ck_assert_msg(!f.bad_args, "%s: wrong url, key or body", sc->name);
    ck_assert_msg(f.now <= f.start + f.timeout, "%s: clock %ld past %ld",
                  sc->name, f.now - f.start, f.timeout);
    if (sc->min_second_post > 0)
        ck_assert_msg(f.post_at[1] - f.start >= sc->min_second_post,
                      "%s: 2nd post at +%ld ms", sc->name,
                      f.post_at[1] - f.start);
    if (sc->max_second_post > 0)
        ck_assert_msg(f.post_at[1] - f.start <= sc->max_second_post,
                      "%s: 2nd post at +%ld ms", sc->name,
                      f.post_at[1] - f.start);
    for (size_t i = 0; i < ARRAY_SIZE(sc->want); i++) {
        if (sc->want[i] != NULL)
            ck_assert_msg(strstr(err.text, sc->want[i]) != NULL,
                          "%s: '%s' lacks '%s'", sc->name, err.text,
                          sc->want[i]);
        if (sc->log_want[i] != NULL)
            ck_assert_msg(strstr(log, sc->log_want[i]) != NULL,
                          "%s: the log lacks '%s': %s", sc->name,
                          sc->log_want[i], log);
    }
    /* Visitors read err.text: never the settings file, never Gemini's own
     * message (its start, as the log line quotes it) */
    ck_assert_msg(strstr(err.text, ".gemini.yaml") == NULL,
                  "%s: the settings path leaked into '%s'", sc->name,
                  err.text);
    if (sc->calls > 0) {
        const struct fake_step *last = &sc->steps[sc->calls - 1];
        struct gemini_error_info info;
        size_t n = 0;
        char *b = last->file ? unit_fixture(last->file, &n) : NULL;
        const char *body = b ? b : last->body;

        if (body != NULL &&
            gemini_parse_error(body, b ? n : strlen(body), &info) == 0 &&
            strlen(info.message) >= 12) {
            char quote[BOUND_GEMINI_QUOTE];
            gemini_scrub(quote, sizeof(quote), info.message, TEST_KEY);
            quote[12] = '\0';
            ck_assert_msg(strstr(err.text, quote) == NULL,
                          "%s: Gemini's message '%s' in '%s'", sc->name,
                          quote, err.text);
            ck_assert_msg(strstr(log, quote) != NULL,
                          "%s: Gemini's message '%s' not logged: %s",
                          sc->name, quote, log);
        }
        free(b);
    }
    assert_no_key(log);
    free(log);
    if (sc->retry_after_max > 0)
        ck_assert_msg(err.retry_after_s <= sc->retry_after_max,
                      "%s: retry_after_s %ld", sc->name, err.retry_after_s);
    if (sc->retry_after_min > 0)
        ck_assert_msg(err.retry_after_s >= sc->retry_after_min,
                      "%s: retry_after_s %ld", sc->name, err.retry_after_s);
    else if (sc->code != ST_UPSTREAM_RATE)
        ck_assert_msg(err.retry_after_s == 0, "%s: retry_after_s %ld",
                      sc->name, err.retry_after_s);
    /* a rate limit always says when to come back */
    if (sc->code == ST_UPSTREAM_RATE)
        ck_assert_msg(err.retry_after_s >= 1, "%s: no retry_after_s",
                      sc->name);
    /* only a schema violation names a path and rule */
    ck_assert_ptr_null(err.rule);
    assert_no_key(err.text);
    /* Visitors read these messages: the upstream address stays in the log. */
    ck_assert_msg(strstr(err.text, "gemini.test") == NULL,
                  "%s: the base URL leaked into '%s'", sc->name, err.text);
    if (rc == 0) {
        ck_assert_ptr_nonnull(resp);
        ck_assert(json_is_object(resp));
        ck_assert_ptr_nonnull(json_object_get(resp, "candidates"));
    } else {
        ck_assert_ptr_null(resp);
    }
    gemini_release(&g);
    arena_release(&a); /* the pinned response goes here */
}
END_TEST

static const struct {
    const char *msg;
    size_t size;
    const char *want;
} scrubs[] = {
    {"plain words", 64, "plain words"},
    {"a " TEST_KEY " b", 64, "a [redacted] b"},
    {TEST_KEY TEST_KEY, 64, "[redacted][redacted]"},
    {"key=" TEST_KEY "&x", 64, "key=[redacted]&x"},
    {"line\nbreak\ttab\r\n", 64, "line break tab"},
    /* the message was cut inside the key: its start goes too */
    {"cut AIzaSyTEST-key_0123", 64, "cut"},
    {"cut AIza", 64, "cut"},
    {"cut AIz", 64, "cut AIz"},
    /* our own cut inside the key */
    {"ab " TEST_KEY, 12, "ab [redacte"},
    {"ab " TEST_KEY, 9, "ab [reda"},
    {"abcdefghij", 8, "abcdefg"},
    {"a\xc3\xa9\xc3\xa9", 4, "a\xc3\xa9"},
    {"a\xc3\xa9\xc3\xa9", 3, "a"},
    {"", 8, ""},
};

START_TEST(scrub_table)
{
    for (size_t i = 0; i < ARRAY_SIZE(scrubs); i++) {
        char out[64];

        ck_assert_uint_le(scrubs[i].size, sizeof(out));
        gemini_scrub(out, scrubs[i].size, scrubs[i].msg, TEST_KEY);
        ck_assert_msg(strcmp(out, scrubs[i].want) == 0,
                      "row %zu: '%s', want '%s'", i, out, scrubs[i].want);
    }
}
END_TEST

START_TEST(scrub_without_key)
{
    char out[16];

    gemini_scrub(out, sizeof(out), "a\x01" "b\x7f" "c", NULL);
    ck_assert_str_eq(out, "a b c");
}
END_TEST

/* A key near the end of a long message, where the quote is cut. */
START_TEST(generate_scrubs_a_key_at_the_cut)
{
    struct sbuf body;
    struct fake_step step = {.net = GEMINI_NET_OK, .status = 400};
    struct fake f = {.steps = &step, .nsteps = 1};
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &f};
    struct gemini_usage usage = {0};
    struct test_cfg tc;
    struct gemini g;
    struct arena a;
    struct capture cap;
    json_t *resp;
    char *log;

    quiet();
    test_cfg_init(&tc, "http://gemini.test", 60000);
    f.timeout = 60000;
    for (int at = 150; at < 260; at += 3) {
        struct status_error err = {0};

        sbuf_init(&body, 4096);
        ck_assert_int_eq(sbuf_adds(&body, "{\"error\":{\"message\":\""), 0);
        for (int i = 0; i < at; i++)
            ck_assert_int_eq(sbuf_adds(&body, "m"), 0);
        ck_assert_int_eq(sbuf_adds(&body, TEST_KEY " tail\"}}"), 0);
        step.body = body.buf;
        f.calls = 0;
        arena_init(&a);
        gemini_init_transport(&g, &t);
        capture_start(&cap);
        ck_assert_int_eq(generate(&g, &tc.cfg.gemini, &a, &resp, &usage, &err),
                         -1);
        log = capture_end(&cap);
        ck_assert_int_eq(err.code, ST_UPSTREAM_REJECTED);
        /* the message is quoted in the log only, cut and scrubbed */
        ck_assert_msg(memmem(log, strlen(log), TEST_KEY, 4) == NULL,
                      "at %d: key start leaked: '%s'", at, log);
        ck_assert_ptr_nonnull(strstr(log, "mmmm"));
        ck_assert_ptr_null(strstr(err.text, "mmmm"));
        free(log);
        gemini_release(&g);
        arena_release(&a);
        sbuf_release(&body);
    }
}
END_TEST

/* Settings that cannot make a request are refused before any call. */
START_TEST(generate_refuses_bad_settings)
{
#define WRONG "not set up correctly: the site owner needs to check"
    static const struct {
        const char *model, *key, *want, *log_want;
    } cases[] = {
        {"gemini/../../x", TEST_KEY, WRONG, "is not a model id"},
        {"gemini 3", TEST_KEY, WRONG, "is not a model id"},
        {"gemini-3?key=x", TEST_KEY, WRONG, "is not a model id"},
        {"", TEST_KEY, WRONG, "no model is configured: set model in"},
        {TEST_MODEL, "AIza\r\nX-Evil: 1", WRONG, "control characters"},
        {TEST_MODEL, "", "not set up yet: the site owner needs to add",
         "no API key is configured"},
    };
#undef WRONG
    struct fake f = {.nsteps = 0};
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &f};

    quiet();
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct gemini_usage usage = {0};
        struct status_error err = {0};
        struct test_cfg tc;
        struct gemini g;
        struct arena a;
        struct capture cap;
        json_t *resp;
        char *log;

        test_cfg_init(&tc, "http://gemini.test", 60000);
        snprintf(tc.model, sizeof(tc.model), "%s", cases[i].model);
        snprintf(tc.key, sizeof(tc.key), "%s", cases[i].key);
        arena_init(&a);
        gemini_init_transport(&g, &t);
        capture_start(&cap);
        ck_assert_int_eq(generate(&g, &tc.cfg.gemini, &a, &resp, &usage, &err),
                         -1);
        log = capture_end(&cap);
        ck_assert_int_eq(err.code, ST_NOT_CONFIGURED);
        ck_assert_msg(strstr(err.text, cases[i].want) != NULL, "%zu: '%s'",
                      i, err.text);
        ck_assert_msg(strstr(log, cases[i].log_want) != NULL, "%zu: '%s'", i,
                      log);
        ck_assert_msg(strstr(log, TEST_PATH) != NULL, "%zu: '%s'", i, log);
        ck_assert_ptr_null(strstr(err.text, TEST_PATH));
        free(log);
        ck_assert_int_eq(usage.calls, 0);
        gemini_release(&g);
        arena_release(&a);
    }
}
END_TEST

/* --- the libcurl transport against a loopback server ---------------------- */

/* One scripted answer: raw HTTP bytes, sent in full or cut short. */
struct canned {
    const char *data;
    size_t send; /* bytes to send then go silent; 0 = all of it */
    bool silent; /* send nothing; wait for the client to give up */
    bool hangup; /* close the connection after sending */
};

struct server {
    int lfd;
    int stop[2]; /* the test writes here to end the thread */
    int port;
    pthread_t th;
    const struct canned *script;
    size_t nscript;
    /* read by the test only after pthread_join */
    int accepts;
    int requests;
    char first_head[4096];
    char first_body[256];
};

/* Wait until `fd` is readable; false when told to stop. */
static bool
server_wait(struct server *s, int fd)
{
    struct pollfd p[2] = {{fd, POLLIN, 0}, {s->stop[0], POLLIN, 0}};

    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (p[1].revents != 0)
            return false;
        return true;
    }
}

static void
send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Serve requests on one connection. Returns false when told to stop. */
static bool
server_conn(struct server *s, int fd)
{
    char buf[65536];
    size_t have = 0;

    for (;;) {
        char *end = memmem(buf, have, "\r\n\r\n", 4);
        if (end != NULL) {
            size_t head = (size_t)(end - buf) + 4, clen = 0;
            char *cl;
            buf[head - 1] = '\0'; /* temporarily, to search the head */
            cl = strcasestr(buf, "\r\ncontent-length:");
            if (cl != NULL)
                clen = strtoul(cl + 17, NULL, 10);
            buf[head - 1] = '\n';
            if (have >= head + clen) {
                const struct canned *c;
                if (s->requests == 0) {
                    snprintf(s->first_head, sizeof(s->first_head), "%.*s",
                             (int)head, buf);
                    snprintf(s->first_body, sizeof(s->first_body), "%.*s",
                             (int)clen, buf + head);
                }
                if ((size_t)s->requests >= s->nscript)
                    return true; /* off script: hang up */
                c = &s->script[s->requests++];
                memmove(buf, buf + head + clen, have - head - clen);
                have -= head + clen;
                if (!c->silent)
                    send_all(fd, c->data,
                             c->send ? c->send : strlen(c->data));
                if (c->hangup)
                    return true;
                if (c->silent || c->send) {
                    /* Silence until the client gives up and closes. */
                    while (server_wait(s, fd)) {
                        if (recv(fd, buf, sizeof(buf), 0) <= 0)
                            return true;
                    }
                    return false;
                }
                continue;
            }
        }
        if (!server_wait(s, fd))
            return false;
        ssize_t r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
        if (r <= 0)
            return true; /* the client closed the connection */
        have += (size_t)r;
    }
}

static void *
server_main(void *arg)
{
    struct server *s = arg;

    while (server_wait(s, s->lfd)) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        s->accepts++;
        bool go_on = server_conn(s, fd);
        close(fd);
        if (!go_on)
            break;
    }
    return NULL;
}

static void
server_start(struct server *s, const struct canned *script, size_t n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen = sizeof(sa);

    memset(s, 0, sizeof(*s));
    s->script = script;
    s->nscript = n;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(s->lfd, 0);
    ck_assert_int_eq(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(s->lfd, 8), 0);
    ck_assert_int_eq(getsockname(s->lfd, (struct sockaddr *)&sa, &salen), 0);
    s->port = ntohs(sa.sin_port);
    ck_assert_int_eq(pipe(s->stop), 0);
    ck_assert_int_eq(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void
server_stop(struct server *s)
{
    ck_assert_int_eq(write(s->stop[1], "x", 1), 1);
    pthread_join(s->th, NULL);
    close(s->lfd);
    close(s->stop[0]);
    close(s->stop[1]);
}

static long
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* POST through the libcurl transport directly, with a body cap of `cap`. */
static void
raw_post(struct gemini *g, const struct server *s, long timeout_ms,
         size_t cap, struct gemini_http *h)
{
    char url[128];

    snprintf(url, sizeof(url),
             "http://127.0.0.1:%d/v1beta/models/m:generateContent", s->port);
    sbuf_init(&h->body, cap);
    h->on_data = NULL; /* not a stream */
    ck_assert_int_eq(g->t.post(g->t.ctx, url, TEST_KEY, REQ_BODY,
                               strlen(REQ_BODY), timeout_ms, h),
                     0);
}

#define OK_JSON                                                          \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"              \
    "Content-Length: 17\r\n\r\n{\"candidates\":[]}"

/* (a) one connection for two calls, (b) the key in a header only. */
START_TEST(curl_reuses_one_connection)
{
    static const struct canned script[] = {{.data = OK_JSON},
                                            {.data = OK_JSON}};
    struct server s;
    struct gemini g;
    struct gemini_usage usage = {0};
    struct status_error err = {0};
    struct test_cfg tc;
    struct arena a;
    char base[64];
    json_t *resp;

    quiet();
    server_start(&s, script, ARRAY_SIZE(script));
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", s.port);
    test_cfg_init(&tc, base, 5000);
    arena_init(&a);
    ck_assert_int_eq(gemini_init(&g), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(generate(&g, &tc.cfg.gemini, &a, &resp, &usage, &err) ==
                          0,
                      "call %d: %s", i, err.text);
        ck_assert_ptr_nonnull(json_object_get(resp, "candidates"));
        ck_assert_ptr_null(g.headers); /* wiped and freed after the call */
    }
    ck_assert_int_eq(usage.calls, 2);
    server_stop(&s);
    ck_assert_int_eq(s.accepts, 1);
    ck_assert_int_eq(s.requests, 2);

    ck_assert_msg(strncmp(s.first_head,
                          "POST /v1beta/models/" TEST_MODEL
                          ":generateContent HTTP/1.1\r\n",
                          strlen("POST /v1beta/models/" TEST_MODEL
                                 ":generateContent HTTP/1.1\r\n")) == 0,
                  "request line: %s", s.first_head);
    ck_assert_ptr_null(strstr(s.first_head, "key="));
    ck_assert_ptr_nonnull(
        strstr(s.first_head, "\r\nx-goog-api-key: " TEST_KEY "\r\n"));
    ck_assert_ptr_nonnull(
        strstr(s.first_head, "\r\nContent-Type: application/json\r\n"));
    ck_assert_ptr_nonnull(
        strstr(s.first_head, "\r\nUser-Agent: gemini-agent\r\n"));
    ck_assert_ptr_nonnull(strcasestr(s.first_head, "\r\nAccept-Encoding: "));
    ck_assert_ptr_null(strcasestr(s.first_head, "\r\nExpect:"));
    ck_assert_str_eq(s.first_body, REQ_BODY);
    gemini_release(&g);
    arena_release(&a);
}
END_TEST

/* (c) Retry-After, as seconds and as an HTTP-date. */
START_TEST(curl_reads_retry_after)
{
    char dated[256], date[64];
    struct canned script[3] = {
        {.data = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\n"
                 "Content-Length: 2\r\n\r\n{}"},
        {.data = dated},
        {.data = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: soon\r\n"
                 "Content-Length: 0\r\n\r\n"},
    };
    struct gemini_http h;
    struct server s;
    struct gemini g;
    struct tm tm;
    time_t when = time(NULL) + 30;

    quiet();
    gmtime_r(&when, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    snprintf(dated, sizeof(dated),
             "HTTP/1.1 503 Service Unavailable\r\nretry-after:  %s \r\n"
             "Content-Length: 0\r\n\r\n",
             date);
    server_start(&s, script, ARRAY_SIZE(script));
    ck_assert_int_eq(gemini_init(&g), 0);

    raw_post(&g, &s, 5000, 1024, &h);
    ck_assert_int_eq(h.net, GEMINI_NET_OK);
    ck_assert_int_eq(h.status, 429);
    ck_assert_int_eq(h.retry_after_ms, 7000);
    ck_assert_str_eq(h.body.buf, "{}");
    sbuf_release(&h.body);

    raw_post(&g, &s, 5000, 1024, &h);
    ck_assert_int_eq(h.status, 503);
    ck_assert_int_ge(h.retry_after_ms, 27000);
    ck_assert_int_le(h.retry_after_ms, 30000);
    sbuf_release(&h.body);

    raw_post(&g, &s, 5000, 1024, &h);
    ck_assert_int_eq(h.status, 503);
    ck_assert_int_eq(h.retry_after_ms, -1);
    sbuf_release(&h.body);

    server_stop(&s);
    ck_assert_int_eq(s.accepts, 1);
    gemini_release(&g);
}
END_TEST

/* (d) a body past the cap aborts the transfer. */
START_TEST(curl_caps_the_body)
{
    char big[6000];
    struct canned script[] = {{.data = big}};
    struct gemini_http h;
    struct server s;
    struct gemini g;
    int n;

    quiet();
    n = snprintf(big, sizeof(big),
                 "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n");
    memset(big + n, 'x', 5000);
    big[n + 5000] = '\0';
    server_start(&s, script, ARRAY_SIZE(script));
    ck_assert_int_eq(gemini_init(&g), 0);
    raw_post(&g, &s, 5000, 1000, &h);
    ck_assert_int_eq(h.net, GEMINI_NET_TOO_LARGE);
    ck_assert_uint_le(h.body.len, 1000);
    sbuf_release(&h.body);
    server_stop(&s);
    gemini_release(&g);
}
END_TEST

/* (e) half a body then silence is a stall, seen in the stall window. */
START_TEST(curl_detects_a_stall)
{
    static const char half[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
        "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"";
    static const struct canned script[] = {
        {.data = half, .send = sizeof(half) - 1}};
    struct gemini_http h;
    struct server s;
    struct gemini g;
    long t0, took;

    quiet();
    server_start(&s, script, ARRAY_SIZE(script));
    ck_assert_int_eq(gemini_init(&g), 0);
    g.stall_ms = 150;
    t0 = wall_ms();
    raw_post(&g, &s, 5000, 1024, &h);
    took = wall_ms() - t0;
    ck_assert_int_eq(h.net, GEMINI_NET_STALL);
    ck_assert_int_ge(took, 150);
    ck_assert_int_lt(took, 2000);
    sbuf_release(&h.body);
    server_stop(&s);
    gemini_release(&g);
}
END_TEST

/* Before the first byte only the deadline applies: a silent server is a
 * timeout, never a stall, even with a tiny stall window. */
START_TEST(curl_silence_is_a_timeout)
{
    static const struct canned script[] = {{.data = "", .silent = true}};
    struct gemini_http h;
    struct server s;
    struct gemini g;
    long t0, took;

    quiet();
    server_start(&s, script, ARRAY_SIZE(script));
    ck_assert_int_eq(gemini_init(&g), 0);
    g.stall_ms = 20;
    t0 = wall_ms();
    raw_post(&g, &s, 300, 1024, &h);
    took = wall_ms() - t0;
    ck_assert_int_eq(h.net, GEMINI_NET_TIMEOUT);
    ck_assert_int_ge(took, 250);
    ck_assert_int_lt(took, 1500);
    sbuf_release(&h.body);
    server_stop(&s);
    gemini_release(&g);
}
END_TEST

/* Nothing listens: a connection failure, which the policy retries. */
START_TEST(curl_refused_is_connect)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen = sizeof(sa);
    struct server s = {0};
    struct gemini_http h;
    struct gemini g;
    int fd;

    quiet();
    /* A port that was just free, and is closed again. */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &salen), 0);
    s.port = ntohs(sa.sin_port);
    close(fd);

    ck_assert_int_eq(gemini_init(&g), 0);
    raw_post(&g, &s, 2000, 1024, &h);
    ck_assert_int_eq(h.net, GEMINI_NET_CONNECT);
    ck_assert_int_eq(h.status, 0);
    ck_assert(gemini_retryable(&h));
    sbuf_release(&h.body);
    gemini_release(&g);
}
END_TEST

/* A server that hangs up mid-body: the connection dropped, retryable. */
START_TEST(curl_hangup_is_connect)
{
    static const char cut[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cand";
    static const struct canned script[] = {{.data = cut, .hangup = true}};
    struct gemini_http h;
    struct server s;
    struct gemini g;

    quiet();
    server_start(&s, script, ARRAY_SIZE(script));
    ck_assert_int_eq(gemini_init(&g), 0);
    raw_post(&g, &s, 2000, 1024, &h);
    ck_assert_int_eq(h.net, GEMINI_NET_CONNECT); /* CURLE_PARTIAL_FILE */
    sbuf_release(&h.body);
    server_stop(&s);
    gemini_release(&g);
}
END_TEST

Suite *
gemini_suite(void)
{
    Suite *s = suite_create("gemini");
    TCase *tc;

    tc = tcase_create("errors");
    tcase_add_loop_test(tc, parse_error_fixture, 0,
                        (int)ARRAY_SIZE(error_fixtures));
    tcase_add_test(tc, parse_error_table_covers_every_fixture);
    tcase_add_test(tc, parse_error_refuses_non_errors);
    tcase_add_test(tc, parse_error_odd_shapes);
    tcase_add_test(tc, parse_error_cuts_message_at_utf8);
    suite_add_tcase(s, tc);

    tc = tcase_create("core");
    tcase_add_test(tc, parse_duration_table);
    tcase_add_test(tc, parse_duration_null);
    tcase_add_test(tc, backoff_bounds);
    tcase_add_test(tc, retryable_table);
    suite_add_tcase(s, tc);

    tc = tcase_create("policy");
    tcase_add_loop_test(tc, generate_scenario, 0, (int)ARRAY_SIZE(scenarios));
    tcase_add_test(tc, generate_scrubs_a_key_at_the_cut);
    tcase_add_test(tc, scrub_table);
    tcase_add_test(tc, scrub_without_key);
    tcase_add_test(tc, generate_refuses_bad_settings);
    suite_add_tcase(s, tc);

    tc = tcase_create("curl");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, curl_reuses_one_connection);
    tcase_add_test(tc, curl_reads_retry_after);
    tcase_add_test(tc, curl_caps_the_body);
    tcase_add_test(tc, curl_detects_a_stall);
    tcase_add_test(tc, curl_silence_is_a_timeout);
    tcase_add_test(tc, curl_refused_is_connect);
    tcase_add_test(tc, curl_hangup_is_connect);
    suite_add_tcase(s, tc);
    return s;
}
