/*
 * check_reqfail.c - allocation failure at every allocation of one whole
 * HTTP request, through dispatch_request() as a worker runs it: the chat
 * (a server action and a page tool in one answer), its stream,
 * submitToolResults, a run of the run API (the sqlite store in a temp
 * folder) and a direct action that writes.
 *
 * For each N = 1, 2, ... the Nth allocation fails (and, in a second
 * sweep, every allocation from the Nth on), until a run needs fewer than
 * N. Every run must end with the error envelope (500, internal_error),
 * the stream's error line, or the answer a run without failures gives;
 * never a crash, a half-written body, a leaked JSON value, or a lost
 * write (a run left unfinished in the store, a review answered but not
 * saved). The allocations are those of the doors (memlimit.h): arena
 * blocks, sbuf growth, jansson outside a parse, memlimit_malloc(); and,
 * one at a time, SQLite's (the store's) and OpenSSL's (the HMACs of the
 * signed history), through allocators the suite wraps. The store
 * connection is kept from request to request, as a worker's thread keeps
 * it; the chat signs its turns (a site secret, history.verify strict) and
 * submitToolResults sends back what sendMessage answered.
 *
 * Gemini is a fake transport: scripted answers in the wire format.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "gemini/gemini.h"
#include "http/dispatch.h"
#include "http/httpio.h"
#include "http/site.h"
#include "store/store.h"
#include "unit_memio.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- Gemini answers in the wire format ------------------------------------ */

#define ANSWER(parts)                                                          \
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[" parts      \
    "]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":"  \
    "10,\"candidatesTokenCount\":2,\"totalTokenCount\":12},"                   \
    "\"modelVersion\":\"gemini-test-001\"}"
#define TEXT(s) "{\"text\":\"" s "\"}"
#define CALL(name, args)                                                       \
    "{\"functionCall\":{\"name\":\"" name "\",\"args\":" args "}}"
#define SEARCH  CALL("action_shop_searchProducts", "{\"query\":\"usb\"}")
#define BY_SLUG CALL("action_shop_getProductBySlug", "{\"slug\":\"usb-c-hub\"}")
#define SHOW    CALL("page_show", "{\"id\":\"p004\"}")

/* A server call, then a server call and a page tool in one turn. */
static const char *const chat_answers[] = {
    ANSWER(TEXT("Looking.") "," SEARCH), ANSWER(BY_SLUG "," SHOW), NULL};
/* After the page's result: the last word. */
static const char *const text_answers[] = {ANSWER(TEXT("It is shown.")),
                                           NULL};
/* A run: a server call, then the last word. */
static const char *const run_answers[] = {ANSWER(SEARCH),
                                          ANSWER(TEXT("Found one.")), NULL};

/* --- a fake transport: the scripted answers, in order ---------------------- */

struct fake {
    const char *const *answers; /* NULL-terminated; past the end: HTTP 500 */
    size_t next;
};

static int
fake_post(void *ctx, const char *url, const char *key, const char *body,
          size_t len, long timeout_ms, struct gemini_http *out)
{
    struct fake *f = ctx;
    const char *ans = f->answers[f->next];

    (void)url, (void)key, (void)body, (void)len, (void)timeout_ms;
    out->net = GEMINI_NET_OK;
    out->sent = 1;
    out->retry_after_ms = -1;
    out->status = ans ? 200 : 500;
    if (ans != NULL)
        f->next++;
    if (ans != NULL && out->on_data != NULL) {
        /* a stream: the answer as one SSE event, in two reads */
        char ev[4096];
        int n = snprintf(ev, sizeof(ev), "data: %s\r\n\r\n", ans);

        ck_assert(n > 0 && (size_t)n < sizeof(ev));
        if (out->on_data(out->on_data_ctx, ev, (size_t)n / 2) != 0 ||
            out->on_data(out->on_data_ctx, ev + n / 2,
                         (size_t)n - (size_t)n / 2) != 0)
            out->net = GEMINI_NET_SINK;
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

/* --- fixture: the shop plugin, a store and data in a temp dir -------------- */

#define OWNER "owner"

static struct site *site;
static char tmpdir[64];
/* The store connection, kept from request to request as a worker's
 * thread keeps it (dispatch.h); the suite's own, to read the runs. */
static struct store *conn;
static sqlite3 *reader;
static sqlite3_stmt *by_status;

static void sqlite_count_allocations(void);
static void *crypto_malloc(size_t n, const char *file, int line);
static void *crypto_realloc(void *p, size_t n, const char *file, int line);
static void crypto_free(void *p, const char *file, int line);
static bool crypto_counted; /* OpenSSL's allocations are (below) */

static void
setup(void)
{
    char path[512], cwd[512];
    struct diag d = DIAG_INIT;
    struct status_error err = {0};
    struct store *st;
    FILE *f;

    /* each failed request logs a line; a sweep would log thousands */
    if (getenv("REQFAIL_VERBOSE") == NULL)
        ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    sqlite_count_allocations();
    /* refused when OpenSSL has allocated already in this process: when
     * the whole unit run forks this case from a parent that made keys
     * (check_credentials' fixture); then its allocations go uncounted */
    crypto_counted = CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc,
                                              crypto_free) == 1;
    unsetenv("GEMINI_API_KEY");
    unsetenv("GOOGLE_API_KEY");
    unsetenv("GEMINI_BASE_URL");
    /* in memory when it can be: the store commits with an fsync, and a
     * sweep makes thousands of runs */
    snprintf(tmpdir, sizeof(tmpdir), "%s/ga-reqfail-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    snprintf(path, sizeof(path), "%s/.gemini.yaml", tmpdir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("apiKey: AIzaSyTEST-key_0123456789abcdefghijkl\n"
          "model: gemini-test\n"
          "baseUrl: http://127.0.0.1:9\n",
          f);
    fclose(f);
    /* the site secret: the chat signs the turns it writes, and checks
     * them when they come back (history.verify: strict, the default) */
    snprintf(path, sizeof(path), "%s/secret", tmpdir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("0123456789abcdef0123456789abcdef0123456789abcdef", f);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0600), 0);
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f,
            "actions: [%s/../../actions]\n"
            "dataDir: %s\n"
            "gemini: .gemini.yaml\n"
            "limits: {maxLoopSteps: 4}\n"
            /* the shop's addReview over the direct route, for OWNER */
            "http: {directActions: authenticated}\n"
            "auth: {remoteUser: {variable: REMOTE_USER, server: apache},\n"
            "       secretFile: secret}\n",
            cwd, tmpdir);
    fclose(f);
    site = site_load(path, &d);
    ck_assert_msg(site != NULL, "the site did not load");
    diag_release(&d);
    st = store_open_migrated(site->cfg->run.store, &err);
    ck_assert_msg(st != NULL, "%s", err.text);
    ck_assert_int_eq(st->ops->user_set_trust(st, OWNER, STORE_AUTONOMOUS, &err),
                     0);
    st->ops->close(st);
    /* as the program does at start: jansson allocates through the doors */
    memlimit_install();
}

static void
teardown(void)
{
    char cmd[600];

    memlimit_fail_hook = NULL;
    if (conn != NULL)
        conn->ops->close(conn);
    conn = NULL;
    sqlite3_finalize(by_status);
    sqlite3_close(reader);
    by_status = NULL;
    reader = NULL;
    site_free(site);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* --- allocation failure injection ------------------------------------------ */

/* Allocations counted since inject(); the first that fails; whether every
 * later one fails too. */
static long alloc_count, fail_at;
static bool fail_rest;
/* Did one of sqlite's allocations fail in this request? (below) How many
 * of SQLite's and of OpenSSL's were made? */
static bool sqlite_failed;
static long sqlite_allocs, crypto_allocs;

static bool
count_and_fail(size_t n)
{
    (void)n;
    ++alloc_count;
    return fail_rest ? alloc_count >= fail_at : alloc_count == fail_at;
}

static void
inject(long at, bool rest)
{
    alloc_count = sqlite_allocs = crypto_allocs = 0;
    sqlite_failed = false;
    fail_at = at;
    fail_rest = rest;
    memlimit_fail_hook = count_and_fail;
}

/*
 * sqlite's own allocations (the store's) through the same count: its
 * allocator wrapped, so the hook fails them too, one at a time - a
 * passing malloc() failure. Not in the sweep that fails every allocation
 * from one on: that is the request's budget spent (memlimit.h), which
 * stops the three doors and never SQLite, so the store can still mark the
 * run failed. Set before sqlite starts in the test's process
 * (sqlite3_config() wants it shut down).
 */
static sqlite3_mem_methods sqlite_real;

static bool
sqlite_fails(int n)
{
    sqlite_allocs += memlimit_fail_hook != NULL;
    if (fail_rest || memlimit_fail_hook == NULL ||
        !memlimit_fail_hook((size_t)n))
        return false;
    sqlite_failed = true;
    return true;
}

static void *
sqlite_malloc(int n)
{
    return sqlite_fails(n) ? NULL : sqlite_real.xMalloc(n);
}

static void *
sqlite_realloc(void *p, int n)
{
    return sqlite_fails(n) ? NULL : sqlite_real.xRealloc(p, n);
}

static void
sqlite_count_allocations(void)
{
    sqlite3_mem_methods m;

    ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_real),
                     SQLITE_OK);
    m = sqlite_real;
    m.xMalloc = sqlite_malloc;
    m.xRealloc = sqlite_realloc;
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
    ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
}

/*
 * OpenSSL's allocations (the HMAC of a conversation's key and of the
 * turns' signatures) the same way, one at a time. Set before OpenSSL
 * allocates anything in the test's process, which CRYPTO_set_mem_functions()
 * checks (crypto_counted says whether it could be).
 */

static void *
crypto_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    crypto_allocs += memlimit_fail_hook != NULL;
    if (!fail_rest && memlimit_fail_hook != NULL && memlimit_fail_hook(n))
        return NULL;
    return malloc(n);
}

static void *
crypto_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    crypto_allocs += memlimit_fail_hook != NULL;
    if (!fail_rest && memlimit_fail_hook != NULL && memlimit_fail_hook(n))
        return NULL;
    return realloc(p, n);
}

static void
crypto_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    free(p);
}

/* --- one request ----------------------------------------------------------- */

/* What a request may write (check_writes()). */
enum writes {
    WRITES_RUN = 1 << 0,    /* a run, never left unfinished */
    WRITES_REVIEW = 1 << 1, /* a review, saved when answered */
    LEAVES_WAITING = 1 << 2 /* a run waiting for approval may stay so */
};

/* A request of a scenario: where, what, who, and what Gemini answers. */
struct scenario {
    const char *name, *path, *body;
    bool stream;
    const char *const *answers;
    unsigned writes; /* enum writes */
    const char *user; /* REMOTE_USER; NULL: OWNER */
    /* makes what the request works on, before each (no failures) */
    void (*prepare)(void);
};

static char out[1 << 17];

/* dispatch_request() of `s`; its answer, head and body, in out[]. */
static void
exchange(const struct scenario *s)
{
    char len[32];
    const char *params[] = {"REQUEST_METHOD", "POST",
                            "DOCUMENT_URI", s->path,
                            "CONTENT_TYPE", "application/json",
                            "CONTENT_LENGTH", len,
                            "REMOTE_USER", s->user ? s->user : OWNER,
                            "HTTP_ACCEPT", "application/x-ndjson",
                            NULL};
    struct fake f = {s->answers, 0};
    struct gemini_transport t = {fake_post, fake_sleep, fake_now, &f};
    struct unit_memio m = {params, s->body, strlen(s->body), 0, 0,
                           out, 0, sizeof(out)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct gemini g;
    struct arena a;

    if (!s->stream)
        params[10] = NULL;
    snprintf(len, sizeof(len), "%zu", strlen(s->body));
    out[0] = '\0';
    gemini_init_transport(&g, &t);
    arena_init(&a);
    dispatch_request_ex(site, &g, &conn, NULL, &io, &a);
    arena_release(&a);
    gemini_release(&g);
}

/* --- what an answer may be ------------------------------------------------- */

/* Drop what differs from run to run: timings, new ids, signatures. */
static void
normalise(json_t *v)
{
    static const char *const volatile_keys[] = {
        "ms", "conversation", "runId", "actionId", "threadId", "id",
        "createdAt", "signatures", "signature"};
    const char *k;
    json_t *x;
    size_t i;

    if (json_is_object(v)) {
        for (i = 0; i < ARRAY_SIZE(volatile_keys); i++)
            json_object_del(v, volatile_keys[i]);
        json_object_foreach(v, k, x)
            normalise(x);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x)
            normalise(x);
    }
}

/* The JSON text `p`[n], normalised, as sorted text (malloc'd). */
static char *
canonical(const char *p, size_t n)
{
    json_t *v = json_loadb(p, n, 0, NULL);
    char *s;

    if (v == NULL)
        return NULL;
    normalise(v);
    s = json_dumps(v, JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(v);
    return s;
}

/* What one answer was. */
struct verdict {
    int status;         /* from the head */
    bool answered;      /* the whole answer (200, or the stream's result) */
    char *result;       /* then: its canonical text */
    const char *code;   /* else: the error's code (static) */
    char why[512];      /* when the answer is malformed, what is wrong */
};

/* Its head's status and body; false (why set) when there is no head. */
static bool
split_head(struct verdict *v, const char **body, size_t *len)
{
    const char *sep = strstr(out, "\r\n\r\n"), *cl;

    if (sep == NULL || sscanf(out, "Status: %d ", &v->status) != 1) {
        snprintf(v->why, sizeof(v->why), "no head: '%.200s'", out);
        return false;
    }
    *body = sep + 4;
    *len = strlen(*body);
    cl = strstr(out, "Content-Length: ");
    if (cl != NULL && cl < sep && strtoul(cl + 16, NULL, 10) != *len) {
        snprintf(v->why, sizeof(v->why), "%zu body bytes, not as the "
                 "Content-Length says: '%.200s'", *len, out);
        return false;
    }
    return true;
}

/*
 * An error object's code, when it is the out-of-memory one (ST_NO_MEMORY,
 * "internal_error" in the status table, core/status.c); else NULL. A
 * failed allocation is never another error (a bad request, a store
 * "busy"), with one exception: SQLite's json_valid() answers false when
 * it cannot allocate, so a CHECK (json_valid(...)) of the store fails as
 * a constraint, which the store reports as its own failure (store_error,
 * 500) - allowed only when one of SQLite's allocations failed.
 */
static const char *
error_code(const json_t *e)
{
    const char *c = json_string_value(json_object_get(e, "code"));

    if (c == NULL || !json_is_string(json_object_get(e, "message")))
        return NULL;
    if (strcmp(c, "internal_error") == 0)
        return "internal_error";
    return sqlite_failed && strcmp(c, "store_error") == 0 ? "store_error"
                                                          : NULL;
}

/* A JSON answer: 200 with the answer, or the 500/503 envelope. */
static bool
judge_json(struct verdict *v, const char *body, size_t len)
{
    json_t *j;

    if (v->status == 200) {
        v->answered = true;
        v->result = canonical(body, len);
        if (v->result == NULL)
            snprintf(v->why, sizeof(v->why), "200, not JSON: '%.200s'", body);
        return v->result != NULL;
    }
    j = json_loadb(body, len, 0, NULL);
    if (v->status == 500)
        v->code = error_code(json_object_get(j, "error"));
    json_decref(j);
    if (v->code == NULL)
        snprintf(v->why, sizeof(v->why), "not the error envelope: '%.300s'",
                 out);
    return v->code != NULL;
}

/* A stream: whole lines of JSON, the last the result or the error, and
 * nothing after it. */
static bool
judge_stream(struct verdict *v, const char *body, size_t len)
{
    const char *p = body, *end = body + len, *nl;
    json_t *line = NULL;
    const char *type = NULL;

    if (len == 0 || body[len - 1] != '\n') {
        snprintf(v->why, sizeof(v->why), "the stream ends mid-line: '%.300s'",
                 len > 300 ? end - 300 : body);
        return false;
    }
    for (; p < end; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (type != NULL && (strcmp(type, "result") == 0 ||
                             strcmp(type, "error") == 0)) {
            snprintf(v->why, sizeof(v->why), "a line after the %s: '%.200s'",
                     type, p);
            json_decref(line);
            return false;
        }
        json_decref(line);
        line = json_loadb(p, (size_t)(nl - p), 0, NULL);
        type = json_string_value(json_object_get(line, "type"));
        if (type == NULL) {
            snprintf(v->why, sizeof(v->why), "not an event line: '%.*s'",
                     (int)(nl - p > 200 ? 200 : nl - p), p);
            json_decref(line);
            return false;
        }
    }
    if (strcmp(type, "result") == 0) {
        char *s = json_dumps(json_object_get(line, "result"), JSON_COMPACT);
        v->answered = true;
        v->result = s ? canonical(s, strlen(s)) : NULL;
        free(s);
    } else if (strcmp(type, "error") == 0) {
        v->code = error_code(json_object_get(line, "error"));
    }
    json_decref(line);
    if (!v->answered && v->code == NULL)
        snprintf(v->why, sizeof(v->why), "the stream ends without a result "
                 "or an error line: '%.300s'", len > 300 ? end - 300 : body);
    return v->answered || v->code != NULL;
}

/* Judge out[]: false with v->why when it is not a clean answer. */
static bool
judge(struct verdict *v)
{
    const char *body;
    size_t len;

    memset(v, 0, sizeof(*v));
    if (!split_head(v, &body, &len))
        return false;
    if (v->status == 200 && strstr(out, "application/x-ndjson") != NULL)
        return judge_stream(v, body, len);
    return judge_json(v, body, len);
}

/* --- what a request leaves behind ----------------------------------------- */

/* The runs in the store by status, "completed:1 failed:2 ", and the
 * reviews saved so far. */
struct traces {
    char runs[256];
    long reviews;
};

static void
count_runs(char *buf, size_t cap)
{
    char path[512];
    size_t n = 0;

    buf[0] = '\0';
    if (reader == NULL) {
        snprintf(path, sizeof(path), "%s/agent.db", tmpdir);
        ck_assert_int_eq(sqlite3_open_v2(path, &reader, SQLITE_OPEN_READONLY,
                                         NULL),
                         SQLITE_OK);
        ck_assert_int_eq(sqlite3_prepare_v2(reader,
                                            "SELECT status, count(*) FROM "
                                            "runs GROUP BY status ORDER BY "
                                            "status",
                                            -1, &by_status, NULL),
                         SQLITE_OK);
    }
    while (sqlite3_step(by_status) == SQLITE_ROW && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "%s:%d ",
                              (const char *)sqlite3_column_text(by_status, 0),
                              sqlite3_column_int(by_status, 1));
    sqlite3_reset(by_status);
}

static void
traces_read(const struct scenario *s, struct traces *t)
{
    char path[512];
    FILE *f;
    int c;

    memset(t, 0, sizeof(*t));
    if (s->writes & WRITES_RUN)
        count_runs(t->runs, sizeof(t->runs));
    snprintf(path, sizeof(path), "%s/shop-reviews.jsonl", tmpdir);
    if ((s->writes & WRITES_REVIEW) && (f = fopen(path, "r")) != NULL) {
        while ((c = getc(f)) != EOF)
            t->reviews += c == '\n';
        fclose(f);
    }
}

/*
 * What the request wrote must be what it answered: no run left queued,
 * planning or executing (a run refused is failed), nor waiting unless the
 * request was to end a wait (a decision refused leaves it waiting); a review
 * answered is saved once. A review refused is saved at most once: the
 * action makes its answer before it writes, but what follows the write
 * (the output's checks, the answer's text) may still fail, and a write
 * cannot be taken back - those are counted.
 */
static long saved_refused;

static void
check_writes(const struct scenario *s, const struct traces *before,
             const struct verdict *v, long at)
{
    struct traces after;

    traces_read(s, &after);
    if ((s->writes & WRITES_REVIEW) && v->answered)
        ck_assert_msg(after.reviews == before->reviews + 1,
                      "%s, allocation %ld: %ld reviews saved for a saved one",
                      s->name, at, after.reviews - before->reviews);
    if ((s->writes & WRITES_REVIEW) && !v->answered) {
        ck_assert_msg(after.reviews <= before->reviews + 1,
                      "%s, allocation %ld: %ld reviews saved for a refused "
                      "one", s->name, at, after.reviews - before->reviews);
        saved_refused += after.reviews - before->reviews;
    }
    if (!(s->writes & WRITES_RUN))
        return;
    ck_assert_msg(strstr(after.runs, "queued") == NULL &&
                      strstr(after.runs, "planning") == NULL &&
                      strstr(after.runs, "executing") == NULL &&
                      ((s->writes & LEAVES_WAITING) ||
                       strstr(after.runs, "awaiting") == NULL),
                  "%s, allocation %ld: a run left unfinished: %s", s->name,
                  at, after.runs);
}

/* --- the sweep -------------------------------------------------------------- */

/* One run of `s` with the allocation `at` failing (and every later one
 * with `rest`); asserts it is clean. Returns the allocations it made. */
static long
one_run(const struct scenario *s, const char *base, long at, bool rest,
        bool *failed)
{
    struct traces before;
    struct verdict v;
    long live = memlimit_json_live;

    if (s->prepare != NULL)
        s->prepare();
    traces_read(s, &before);
    inject(at, rest);
    exchange(s);
    memlimit_fail_hook = NULL;
    ck_assert_msg(memlimit_json_live == live,
                  "%s, allocation %ld%s: %ld JSON values leaked", s->name, at,
                  rest ? " on" : "", memlimit_json_live - live);
    ck_assert_msg(judge(&v), "%s, allocation %ld%s of a run: %s", s->name, at,
                  rest ? " on" : "", v.why);
    if (v.answered)
        ck_assert_msg(strcmp(v.result, base) == 0,
                      "%s, allocation %ld%s: another answer:\n%s\nnot\n%s",
                      s->name, at, rest ? " on" : "", v.result, base);
    check_writes(s, &before, &v, at);
    *failed = !v.answered;
    free(v.result);
    return alloc_count;
}

/* The clean answer of `s` (canonical text). */
static char *
baseline(const struct scenario *s)
{
    struct verdict v;

    if (s->prepare != NULL)
        s->prepare();
    exchange(s);
    ck_assert_msg(judge(&v) && v.answered, "%s: %s\n%s", s->name, v.why, out);
    ck_assert_ptr_nonnull(v.result);
    return v.result;
}

/* Fail each allocation in turn (SQLite's and OpenSSL's too), then each
 * and every later one (the doors'): every run clean, most of them
 * failed. */
static void
sweep(const struct scenario *s)
{
    long total[2], failures[2] = {0, 0}, at, sqlite_n = 0, crypto_n = 0;
    char *base = baseline(s);
    bool failed;

    for (int rest = 0; rest < 2; rest++) {
        /* counted without a failure: the same answer again */
        total[rest] = one_run(s, base, LONG_MAX, rest, &failed);
        ck_assert(!failed);
        if (!rest) {
            sqlite_n = sqlite_allocs;
            crypto_n = crypto_allocs;
        }
        ck_assert_int_gt(total[rest], 20);
        for (at = 1;; at++) {
            long made = one_run(s, base, at, rest, &failed);

            failures[rest] += failed;
            if (made < at)
                break;
        }
    }
    printf("reqfail: %-26s %4ld allocations, and %3ld SQLite, %2ld OpenSSL%s:"
           " %4ld failed alone, %4ld from there on",
           s->name, total[1], sqlite_n, crypto_n,
           crypto_counted ? "" : " (uncounted)", failures[0], failures[1]);
    ck_assert_int_eq(total[0], total[1] + sqlite_n + crypto_n);
    if (s->writes & WRITES_REVIEW)
        printf(", %ld saved though refused", saved_refused);
    printf("\n");
    /* every allocation from the first on failing leaves no answer */
    ck_assert_int_eq(failures[1], total[1]);
    ck_assert_int_gt(failures[0], total[0] / 2);
    free(base);
}

/* --- the requests ----------------------------------------------------------- */

#define PAGE_TOOLS                                                             \
    "\"toolDefinitions\":[{\"name\":\"page_show\",\"description\":\"Show\","   \
    "\"category\":\"navigation\",\"inputSchema\":{\"type\":\"object\","        \
    "\"properties\":{\"id\":{\"type\":\"string\"}}}}]"

static const struct scenario chat = {
    "sendMessage", "/_jay/actions/geminiAgent.sendMessage",
    "{\"message\":\"find a usb hub\",\"history\":[]," PAGE_TOOLS
    ",\"pageState\":{\"cart\":[]}}",
    false, chat_answers, 0, NULL, NULL};

static const struct scenario chat_stream = {
    "sendMessage streamed", "/_jay/actions/geminiAgent.sendMessage",
    "{\"message\":\"find a usb hub\",\"history\":[]," PAGE_TOOLS
    ",\"pageState\":{\"cart\":[]}}",
    true, chat_answers, 0, NULL, NULL};

/* Its body: the page's result for the call of a sendMessage answer, with
 * that answer's history, signatures and conversation (submit_body()). */
static char submit_text[1 << 14];

static const struct scenario submit = {
    "submitToolResults", "/_jay/actions/geminiAgent.submitToolResults",
    submit_text, false, text_answers, 0, NULL, NULL};

static const struct scenario run_api = {
    "POST /api/agent/run", "/api/agent/run", "{\"prompt\":\"find a usb hub\"}",
    false, run_answers, WRITES_RUN, NULL, NULL};

static const struct scenario run_api_stream = {
    "POST /api/agent/run/stream", "/api/agent/run/stream",
    "{\"prompt\":\"find a usb hub\"}", true, run_answers, WRITES_RUN, NULL, NULL};

static const struct scenario direct = {
    "POST shop.addReview", "/_jay/actions/shop.addReview",
    "{\"productId\":\"p001\",\"rating\":5,\"text\":\"good\"}", false, NULL,
    WRITES_REVIEW, NULL, NULL};

/* An approval decided: a run of a supervised user that waits for
 * addReview's approval (made afresh before each request), approved. */
#define STRANGER "stranger"
#define ADD_REVIEW                                                             \
    CALL("action_shop_addReview",                                              \
         "{\"productId\":\"p001\",\"rating\":5,\"text\":\"good\"}")

static const char *const review_answers[] = {ANSWER(ADD_REVIEW), NULL};
static const char *const saved_answers[] = {ANSWER(TEXT("Saved.")), NULL};
static char decide_path[128];

static void waiting_run(void);

static const struct scenario decide = {
    "POST /api/agent/approvals", decide_path,
    "{\"decision\":\"approve_once\"}", false, saved_answers,
    WRITES_RUN | WRITES_REVIEW | LEAVES_WAITING, STRANGER, waiting_run};

static const struct scenario review_run = {
    "a run that waits", "/api/agent/run", "{\"prompt\":\"review p001\"}",
    false, review_answers, 0, STRANGER, NULL};

static void
waiting_run(void)
{
    const char *sep, *id;
    json_t *ans;

    exchange(&review_run);
    ck_assert_ptr_nonnull(sep = strstr(out, "\r\n\r\n"));
    ck_assert_ptr_nonnull(ans = json_loads(sep + 4, 0, NULL));
    id = json_string_value(
        json_object_get(json_object_get(ans, "approval"), "id"));
    ck_assert_msg(id != NULL, "the run does not wait: %s", out);
    snprintf(decide_path, sizeof(decide_path), "/api/agent/approvals/%s", id);
    json_decref(ans);
}

START_TEST(chat_request)
{
    sweep(&chat);
}
END_TEST

START_TEST(chat_stream_request)
{
    sweep(&chat_stream);
}
END_TEST

/* What the page sends after the answer of `chat`: run it, answer its page
 * call, send back its signed history. */
static void
submit_body(void)
{
    const char *sep;
    json_t *ans, *body;
    char *text;

    exchange(&chat);
    ck_assert_ptr_nonnull(sep = strstr(out, "\r\n\r\n"));
    ck_assert_ptr_nonnull(ans = json_loads(sep + 4, 0, NULL));
    ck_assert_ptr_nonnull(json_object_get(ans, "signatures"));
    body = json_pack(
        "{s:[{s:O, s:s}], s:O, s:O, s:O, s:[{s:s, s:s, s:{s:s, s:{s:{s:s}}}}]}",
        "results", "callId",
        json_object_get(json_array_get(json_object_get(ans, "calls"), 0), "id"),
        "result", "{\"ok\":true}", "history", json_object_get(ans, "history"),
        "signatures", json_object_get(ans, "signatures"), "conversation",
        json_object_get(ans, "conversation"), "toolDefinitions", "name",
        "page_show", "description", "Show", "inputSchema", "type", "object",
        "properties", "id", "type", "string");
    ck_assert_ptr_nonnull(body);
    ck_assert_ptr_nonnull(text = json_dumps(body, JSON_COMPACT));
    ck_assert_uint_lt(strlen(text), sizeof(submit_text));
    strcpy(submit_text, text);
    free(text);
    json_decref(body);
    json_decref(ans);
}

START_TEST(submit_request)
{
    submit_body();
    sweep(&submit);
}
END_TEST

START_TEST(run_request)
{
    sweep(&run_api);
}
END_TEST

START_TEST(run_stream_request)
{
    sweep(&run_api_stream);
}
END_TEST

START_TEST(decide_request)
{
    sweep(&decide);
}
END_TEST

START_TEST(direct_action_request)
{
    sweep(&direct);
}
END_TEST

Suite *
reqfail_suite(void)
{
    Suite *s = suite_create("reqfail");
    TCase *tc = tcase_create("every allocation of a request");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, chat_request);
    tcase_add_test(tc, chat_stream_request);
    tcase_add_test(tc, submit_request);
    tcase_add_test(tc, run_request);
    tcase_add_test(tc, run_stream_request);
    tcase_add_test(tc, decide_request);
    tcase_add_test(tc, direct_action_request);
    suite_add_tcase(s, tc);
    return s;
}
