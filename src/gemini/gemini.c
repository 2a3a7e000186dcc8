/*
 * gemini.c - the Gemini REST client: one generateContent call with retries
 * under one deadline.
 *
 * The file has two parts. The pure helpers read error bodies and
 * durations and compute back-off. The policy (gemini_generate) runs the
 * attempts, waits and error mapping, and reaches the network only through
 * `struct gemini_transport`, so tests can drive it with a fake clock; the
 * libcurl transport it normally runs on is transport.c.
 *
 * The API key is never put into the URL, a log line or an error message.
 * Error messages are read by the site's visitors: they are our own words,
 * never a server path or Gemini's own text. Gemini's message (scrubbed of
 * the key) and what the site owner should change (naming the settings
 * file) go to the log.
 *
 * Not here: building the request body (chat.c) or reading the answer
 * (turn.c).
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/gemini.h"
#include "gemini/chunks.h"
#include "gemini/sse.h"
#include "gemini/transport.h"
#include "gemini/vertex.h"
#include "core/jsonin.h"
#include "core/monotime.h"
#include "core/watch.h"
#include "core/utf8.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "gemini/bounds.h"
#include "core/config.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A scrubbed key reads like this in log lines. */
#define GEMINI_REDACTED "[redacted]"

/* What a visitor reads when the site's Gemini settings cannot work. */
#define GEMINI_NOT_SET_UP                                                      \
    "The assistant is not set up yet: the site owner needs to add a Gemini "   \
    "API key."
#define GEMINI_SET_UP_WRONG                                                    \
    "The assistant is not set up correctly: the site owner needs to check "    \
    "its Gemini settings."

/* --- small string helpers ---------------------------------------------- */

/* Copy `src` into `dst[size]`, cut at a UTF-8 boundary when too long. */
static void
copy_cut(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);

    if (n >= size)
        n = utf8_cut(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/*
 * Make Gemini's message fit to quote in an error text: control characters
 * become spaces (messages span lines), every copy of the API key becomes
 * GEMINI_REDACTED, and the result is cut at a UTF-8 boundary to fit
 * `size`. Gemini's message may reach us already cut, so a tail that is the
 * start of the key is removed too: a cut key is still a leak. `key` may be
 * NULL. TESTABLE: that last case cannot be reached through
 * gemini_generate while BOUND_GEMINI_QUOTE is below the parser's cut.
 */
TESTABLE void gemini_scrub(char *dst, size_t size, const char *msg,
                           const char *key);

TESTABLE void
gemini_scrub(char *dst, size_t size, const char *msg, const char *key)
{
    size_t klen = key != NULL ? strlen(key) : 0;
    size_t n = 0, k;

    for (size_t i = 0; msg[i] != '\0' && n + 1 < size;) {
        if (klen > 0 && strncmp(msg + i, key, klen) == 0) {
            size_t r = sizeof(GEMINI_REDACTED) - 1;
            if (r > size - 1 - n)
                r = size - 1 - n;
            memcpy(dst + n, GEMINI_REDACTED, r);
            n += r;
            i += klen;
            continue;
        }
        unsigned char c = (unsigned char)msg[i++];
        dst[n++] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
    }
    n = utf8_cut(dst, n);
    /* A tail of 4 or more bytes that starts the key: cut it off. (Whole
     * copies were replaced above, so only shorter prefixes are left.) */
    k = klen > 0 ? klen - 1 : 0;
    if (k > n)
        k = n;
    for (; k >= 4; k--) {
        if (memcmp(dst + n - k, key, k) == 0) {
            n -= k;
            break;
        }
    }
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

/* --- pure helpers ------------------------------------------------------ */

long
gemini_parse_duration(const char *s)
{
    long sec = 0, ms = 0;
    int idigits = 0, fdigits = 0;
    bool round_up = false;

    /* proto3 JSON Duration: seconds, up to 9 fraction digits, then 's'.
     * Parsed by hand: strtod depends on the locale's decimal point. */
    if (s == NULL)
        return -1;
    for (; *s >= '0' && *s <= '9'; s++, idigits++) {
        if (sec > (LONG_MAX / 1000 - 1) / 10)
            return -1;
        sec = sec * 10 + (*s - '0');
    }
    if (idigits == 0)
        return -1;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, fdigits++) {
            if (fdigits < 3)
                ms = ms * 10 + (*s - '0');
            else if (*s != '0')
                round_up = true; /* a wait is better long than short */
        }
        if (fdigits == 0 || fdigits > 9)
            return -1;
        for (int i = fdigits; i < 3; i++)
            ms *= 10;
    }
    if (s[0] != 's' || s[1] != '\0')
        return -1;
    return sec * 1000 + ms + (round_up ? 1 : 0);
}

/* Read one details[] entry: ErrorInfo gives the reason, RetryInfo the
 * delay. The first of each kind wins. */
static void
read_detail(json_t *d, struct gemini_error_info *out)
{
    const char *type = json_string_value(json_object_get(d, "@type"));
    const char *v;

    if (type == NULL)
        return;
    if (ends_with(type, "ErrorInfo") && out->reason[0] == '\0') {
        v = json_string_value(json_object_get(d, "reason"));
        if (v != NULL)
            copy_cut(out->reason, sizeof(out->reason), v);
    } else if (ends_with(type, "RetryInfo") && out->retry_delay_ms < 0) {
        v = json_string_value(json_object_get(d, "retryDelay"));
        if (v != NULL)
            out->retry_delay_ms = gemini_parse_duration(v);
    }
}

int
gemini_parse_error(const char *body, size_t len, struct gemini_error_info *out)
{
    json_t *root = NULL, *top, *e, *v, *details;
    json_error_t jerr;
    const char *s;
    size_t i;
    bool oom;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    out->retry_delay_ms = -1;
    if (body == NULL || len == 0)
        goto out;
    root = jsonin_parse(body, len, 0, &jerr, &oom);
    if (oom) {
        rc = -2;
        goto out;
    }
    top = root;
    /* Some paths wrap the error in a one-element array (wire §10.1). */
    if (json_is_array(top))
        top = json_array_size(top) == 1 ? json_array_get(top, 0) : NULL;
    e = json_object_get(top, "error");
    if (!json_is_object(e))
        goto out;

    v = json_object_get(e, "code");
    if (json_is_integer(v))
        out->code = (long)json_integer_value(v);
    s = json_string_value(json_object_get(e, "status"));
    if (s != NULL)
        copy_cut(out->status, sizeof(out->status), s);
    s = json_string_value(json_object_get(e, "message"));
    if (s != NULL)
        copy_cut(out->message, sizeof(out->message), s);
    details = json_object_get(e, "details");
    json_array_foreach(details, i, v) {
        if (json_is_object(v))
            read_detail(v, out);
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

bool
gemini_retryable(const struct gemini_http *h)
{
    if (h->net == GEMINI_NET_CONNECT)
        return true;
    if (h->net != GEMINI_NET_OK)
        return false; /* a timeout used the time up; others repeat */
    switch (h->status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
        return true;
    default:
        return false;
    }
}

long
gemini_backoff_ms(int retry, long hint_ms, unsigned rnd)
{
    long base, jitter, wait;

    if (retry < 1)
        retry = 1;
    if (retry > 16)
        retry = 16; /* only GEMINI_MAX_RETRIES are made; no overflow */
    base = (long)GEMINI_BACKOFF_BASE_MS << (retry - 1);
    /* rnd / 2^32 is in [0, 1): the jitter stays below half the base. */
    jitter = (long)((uint64_t)(base / 2) * rnd / ((uint64_t)UINT_MAX + 1));
    wait = base + jitter;
    return hint_ms > wait ? hint_ms : wait;
}

/* xorshift32: jitter only has to differ between workers, not be secret. */
static unsigned
next_rand(unsigned *state)
{
    uint32_t x = *state != 0 ? (uint32_t)*state : 0x9E3779B9u;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/* --- the policy -------------------------------------------------------- */

static const char *
settings_path(const struct config_gemini *gc)
{
    return gc->path != NULL ? gc->path : ".gemini.yaml";
}

static const char *
base_url(const struct config_gemini *gc)
{
    return gc->base_url != NULL ? gc->base_url : CONFIG_DEFAULT_BASE_URL;
}

/*
 * Refuse settings that cannot make a sound request: no key, a key that
 * would break the header line, a model id that is not one URL path
 * segment. Config validation may let these through (the key comes from
 * the environment too), and none is Gemini's fault. The visitor is told
 * the assistant is not set up; the log says which file to edit.
 */
static int
check_settings(const struct config_gemini *gc, const char *key,
               struct status_error *err)
{
    const char *model = gc->model;

    if (key == NULL || key[0] == '\0') {
        log_warn("gemini: no API key is configured: put it in %s (apiKey) "
                 "or set GEMINI_API_KEY",
                 settings_path(gc));
        return status_set(err, ST_NOT_CONFIGURED, GEMINI_NOT_SET_UP);
    }
    for (const char *p = key; *p != '\0'; p++) {
        if ((unsigned char)*p <= 0x20 || *p == 0x7F) {
            log_warn("gemini: the API key contains spaces or control "
                     "characters: check apiKey in %s or GEMINI_API_KEY",
                     settings_path(gc));
            return status_set(err, ST_NOT_CONFIGURED, GEMINI_SET_UP_WRONG);
        }
    }
    if (model == NULL || model[0] == '\0') {
        log_warn("gemini: no model is configured: set model in %s",
                 settings_path(gc));
        return status_set(err, ST_NOT_CONFIGURED, GEMINI_SET_UP_WRONG);
    }
    if (strlen(model) > 128 ||
        strspn(model, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789._-") != strlen(model)) {
        char shown[65];
        gemini_scrub(shown, sizeof(shown), model, NULL);
        log_warn("gemini: the model '%s' is not a model id (letters, "
                 "digits, '.', '_', '-'): set model in %s",
                 shown, settings_path(gc));
        return status_set(err, ST_NOT_CONFIGURED, GEMINI_SET_UP_WRONG);
    }
    return 0;
}

static const char *
net_name(enum gemini_net net)
{
    switch (net) {
    case GEMINI_NET_OK:
        return "ok";
    case GEMINI_NET_CONNECT:
        return "connection failed";
    case GEMINI_NET_TIMEOUT:
        return "timed out";
    case GEMINI_NET_STALL:
        return "stalled";
    case GEMINI_NET_TOO_LARGE:
        return "response too large";
    case GEMINI_NET_GONE:
        return "dropped: the visitor hung up";
    case GEMINI_NET_SINK:
        return "stopped by its reader";
    case GEMINI_NET_OTHER:
        break;
    }
    return "transfer error";
}

/*
 * One warn line per failed attempt: what happened and Gemini's own
 * message, which is for the site owner only (visitors get our words).
 * Never the body itself.
 */
static void
log_attempt(int attempt, const struct gemini_http *h,
            const struct gemini_error_info *info, const char *key)
{
    char status[sizeof(info->status)], reason[sizeof(info->reason)];
    char msg[BOUND_GEMINI_QUOTE];

    if (h->net == GEMINI_NET_GONE) { /* not Gemini's failure */
        log_info("gemini: the visitor hung up; call dropped (attempt %d)",
                 attempt);
        return;
    }
    if (h->net != GEMINI_NET_OK) {
        log_warn("gemini: attempt %d of %d failed: %s", attempt,
                 GEMINI_MAX_RETRIES + 1, net_name(h->net));
        return;
    }
    /* Gemini's words: no control characters (and no key) in our log. */
    gemini_scrub(status, sizeof(status), info->status, key);
    gemini_scrub(reason, sizeof(reason), info->reason, key);
    gemini_scrub(msg, sizeof(msg), info->message, key);
    log_warn("gemini: attempt %d of %d failed: HTTP %ld%s%s%s%s%s%s", attempt,
             GEMINI_MAX_RETRIES + 1, h->status, status[0] ? " " : "", status,
             reason[0] ? " reason " : "", reason, msg[0] ? ": " : "", msg);
}

static long
ceil_s(long ms)
{
    return ms <= 0 ? 0 : (ms + 999) / 1000;
}

/* Parse a 2xx body and pin it to the arena. */
static int
take_response(const struct gemini_http *h, struct arena *a, json_t **response,
              struct status_error *err)
{
    json_error_t jerr;
    json_t *root;
    bool oom;

    /* Flags 0: Gemini's JSON is trusted not to repeat keys, and the
     * parts must come back exactly as received. */
    root = jsonin_parse(h->body.buf, h->body.len, 0, &jerr, &oom);
    if (oom)
        return status_set(err, ST_NO_MEMORY,
                          "out of memory reading Gemini's response");
    if (root == NULL) {
        log_warn("gemini: HTTP %ld body is not JSON (line %d, column %d)",
                 h->status, jerr.line, jerr.column);
        return status_set(err, ST_UPSTREAM_BAD,
                          "Gemini sent a response that is not JSON");
    }
    if (arena_take_json(a, root) == NULL)
        return status_set(err, ST_NO_MEMORY,
                          "out of memory reading Gemini's response");
    *response = root;
    return 0;
}

/* One call's state across its attempts. */
struct call_state {
    struct gemini_http h;          /* the last attempt's answer */
    struct gemini_error_info info; /* its error, when have_info */
    bool have_info;
    const char *url;
    const char *key; /* the API key or OAuth token */
    long deadline;   /* on the transport's clock */
    long wait;       /* the wait a further retry would have needed */
    long hint;       /* Gemini's own, clamped, or -1 */
    int attempt;
    bool stream_retried; /* a broken stream was tried again */
    bool refreshed;      /* the OAuth token was asked for again */
};

/* The last attempt's failure when it has no HTTP status (h->net is not
 * GEMINI_NET_OK): -1 with err set; 0 when it has one. */
static int
map_net_failure(const struct gemini *g, const struct config_gemini *gc,
                const struct gemini_http *h, int attempts,
                struct status_error *err)
{
    switch (h->net) {
    case GEMINI_NET_OK:
        return 0;
    case GEMINI_NET_CONNECT:
        /* The address is for the site owner's log, not for visitors. */
        log_warn("gemini: no answer from %s after %d attempt%s", base_url(gc),
                 attempts, attempts == 1 ? "" : "s");
        return status_set(err, ST_UPSTREAM_DOWN,
                          "Gemini is unavailable: the connection failed "
                          "(%d attempt%s); try again later",
                          attempts, attempts == 1 ? "" : "s");
    case GEMINI_NET_TIMEOUT:
        return status_set(err, ST_UPSTREAM_TIMEOUT,
                          "Gemini did not answer within %ld s",
                          ceil_s(gc->timeout_ms));
    case GEMINI_NET_STALL:
        return status_set(err, ST_UPSTREAM_TIMEOUT,
                          "Gemini's answer started, then stopped arriving: "
                          "nothing came for %ld s",
                          ceil_s(g->stall_ms));
    case GEMINI_NET_TOO_LARGE:
        return status_set(err, ST_UPSTREAM_BAD,
                          "Gemini sent a response larger than %u MiB",
                          (unsigned)(BOUND_UPSTREAM_BYTES / (1024 * 1024)));
    case GEMINI_NET_GONE:
        return status_set(err, ST_CLIENT_GONE,
                          "the visitor hung up; the Gemini call was "
                          "dropped");
    case GEMINI_NET_SINK: /* a stream's own ends are stream_end()'s */
    case GEMINI_NET_OTHER:
        break;
    }
    log_warn("gemini: TLS or protocol error talking to %s", base_url(gc));
    return status_set(err, ST_UPSTREAM_BAD,
                      "cannot talk to Gemini: TLS or protocol error "
                      "(details in the error log)");
}

/*
 * Map the last attempt's failure to a status. cs->info counts only when
 * cs->have_info (otherwise the body's message, if any, was logged by
 * log_attempt()). The messages are for visitors: our own words, no path,
 * no Gemini text; what the site owner should change goes to the log.
 */
static int
map_failure(const struct gemini *g, const struct config_gemini *gc,
            const struct call_state *cs, struct status_error *err)
{
    const struct gemini_error_info *info = cs->have_info ? &cs->info : NULL;
    int attempts = cs->attempt;
    long s = cs->h.status;

    if (map_net_failure(g, gc, &cs->h, attempts, err) != 0)
        return -1;
    if (s == 401 || s == 403 ||
        (s == 400 && info != NULL &&
         strcmp(info->reason, "API_KEY_INVALID") == 0)) {
        log_warn("gemini: the API key was refused (HTTP %ld): check apiKey "
                 "in %s or GEMINI_API_KEY",
                 s, settings_path(gc));
        return status_set(err, ST_UPSTREAM_AUTH,
                          "Gemini refused the site's API key: the site owner "
                          "needs to check it");
    }
    if (s == 404) {
        log_warn("gemini: the model '%s' is unknown (HTTP 404); it may be "
                 "retired: set model in %s",
                 gc->model, settings_path(gc));
        return status_set(err, ST_UPSTREAM_REJECTED,
                          "Gemini does not know the model '%s'; it may be "
                          "retired: the site owner needs to choose another",
                          gc->model);
    }
    if (s == 429) {
        long after = ceil_s(cs->hint >= 0 ? cs->hint : cs->wait);
        if (after < 1)
            after = 1;
        return status_set_retry(err, ST_UPSTREAM_RATE, after,
                                "Gemini's rate limit was reached; try again "
                                "in %ld s",
                                after);
    }
    if (s >= 400 && s < 500)
        return status_set(err, ST_UPSTREAM_REJECTED,
                          "Gemini rejected the request (HTTP %ld)", s);
    if (s >= 500 && s < 600) {
        /* Gemini's own delay, if it named one; else no promise */
        long after = cs->hint >= 0 ? ceil_s(cs->hint) : 0;
        return status_set_retry(err, ST_UPSTREAM_DOWN, after,
                                "Gemini is unavailable (HTTP %ld, %d "
                                "attempt%s); try again later",
                                s, attempts, attempts == 1 ? "" : "s");
    }
    return status_set(err, ST_UPSTREAM_BAD,
                      "Gemini answered with an unexpected HTTP %ld", s);
}

/* The call's deadline on the transport's clock: geminiTimeoutMs from now,
 * or sooner when the request's own deadline comes first. */
static long
call_deadline(const struct gemini_transport *t, const struct config_gemini *gc)
{
    long now = t->now_ms(t->ctx), request = watch_deadline_ms();
    long left = request == 0 ? gc->timeout_ms : request - monotime_ms();

    return now + (left < gc->timeout_ms ? left : gc->timeout_ms);
}

/* --- streams ------------------------------------------------------------ */

/* A streamed call in flight: libcurl's bytes go through the SSE parser
 * to the assembler (chunks.c), and each text delta on to `ops`. */
struct stream_call {
    const struct gemini_stream_ops *ops;
    void *ctx;
    struct arena *a;
    struct sse sse;
    struct chunks chunks;
    bool started;   /* this attempt's body began (a 2xx stream) */
    bool broke;     /* ... and broke off: an error in it, or unreadable */
    size_t emitted; /* text deltas passed on, over every attempt */
    struct gemini_error_info info; /* an error Gemini sent mid-stream */
    bool have_info;
    struct status_error err; /* why the parser stopped the transfer */
};

static int
stream_text(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct stream_call *s = ctx;

    s->emitted++;
    return s->ops->text(s->ctx, text, len, err);
}

/* One event of the stream: a chunk, or an error object (wire §12). */
static int
stream_event(void *ctx, enum sse_kind kind, const char *data, size_t len)
{
    struct stream_call *s = ctx;
    json_error_t jerr;
    json_t *chunk;
    bool oom;
    int rc;

    if (kind == SSE_DATA && len == 0)
        return 0; /* an empty data line says nothing (browsers drop it) */
    chunk = jsonin_parse(data, len, 0, &jerr, &oom);
    if (oom)
        return status_set(&s->err, ST_NO_MEMORY,
                          "out of memory reading Gemini's answer");
    if (kind == SSE_RAW || json_object_get(chunk, "error") != NULL ||
        !json_is_object(chunk)) {
        json_decref(chunk);
        if (gemini_parse_error(data, len, &s->info) == -2)
            return status_set(&s->err, ST_NO_MEMORY,
                              "out of memory reading Gemini's error");
        s->have_info = s->info.code != 0 || s->info.message[0] != '\0';
        if (!s->have_info)
            log_warn("gemini: a stream event is not JSON (line %d, column "
                     "%d)",
                     jerr.line, jerr.column);
        s->broke = true;
        return -1;
    }
    rc = chunks_add(&s->chunks, chunk, stream_text, s, &s->err);
    json_decref(chunk);
    return rc;
}

static int
stream_data(void *ctx, const char *p, size_t n)
{
    struct stream_call *s = ctx;

    s->started = true;
    if (sse_feed(&s->sse, p, n, stream_event, s) == 0)
        return 0;
    if (s->err.code == ST_OK && !s->broke)
        status_set(&s->err,
                   sse_too_large(&s->sse) ? ST_UPSTREAM_BAD : ST_NO_MEMORY,
                   sse_too_large(&s->sse)
                       ? "Gemini sent a stream event larger than %u MiB"
                       : "out of memory reading Gemini's answer",
                   (unsigned)(BOUND_UPSTREAM_BYTES / (1024 * 1024)));
    return -1;
}

/* A fresh parser and assembler for an attempt. */
static void
stream_restart(struct stream_call *s, struct gemini_http *h)
{
    sse_release(&s->sse);
    chunks_release(&s->chunks);
    sse_init(&s->sse, BOUND_UPSTREAM_BYTES);
    chunks_init(&s->chunks, s->a);
    s->started = s->broke = s->have_info = false;
    memset(&s->err, 0, sizeof(s->err));
    h->on_data = stream_data;
    h->on_data_ctx = s;
}

/*
 * How a streamed attempt that began ended. 0: complete (*response set);
 * 1: it broke off (retry it if nothing went out yet); -1: stop, `err`
 * set (the visitor is gone, out of memory, or the stream's own limit).
 */
static int
stream_end(struct stream_call *s, struct gemini_http *h, json_t **response,
           struct status_error *err)
{
    if (h->net == GEMINI_NET_SINK && !s->broke) {
        *err = s->err;
        return -1;
    }
    if (h->net == GEMINI_NET_OK && !s->broke &&
        sse_finish(&s->sse, stream_event, s) != 0 && !s->broke) {
        *err = s->err;
        return -1;
    }
    if (h->net != GEMINI_NET_OK || s->broke || !s->chunks.finished) {
        if (h->net == GEMINI_NET_GONE)
            return status_set(err, ST_CLIENT_GONE,
                              "the visitor hung up; the Gemini call was "
                              "dropped");
        log_warn("gemini: the stream broke off (%s%s%s)",
                 s->have_info ? "an error: " : "",
                 s->have_info              ? s->info.status
                 : s->broke                ? "an unreadable event"
                 : h->net != GEMINI_NET_OK ? "transfer ended"
                                           : "no finishReason",
                 s->emitted ? ", after text went out" : "");
        return 1;
    }
    *response = chunks_end(&s->chunks, err);
    return *response != NULL ? 0 : -1;
}

/* --- one call, with its retries ------------------------------------------ */

/* The 2xx answer a call is done with (a stream's starts being read). */
static bool
http_ok(const struct gemini_http *h)
{
    return h->net == GEMINI_NET_OK && h->status >= 200 && h->status < 300;
}

/* The key (asked of g->secret when there is one), the URL and the
 * deadline of a call. Returns 0, or -1 with err set. */
static int
call_setup(struct gemini *g, const struct gemini_request *rq, bool streaming,
           struct call_state *cs, struct status_error *err)
{
    const struct config_gemini *gc = rq->gc;

    cs->key = gc->api_key;
    if (g->secret != NULL &&
        g->secret(g->secret_ctx, false, &cs->key, err) != 0)
        return -1;
    if (check_settings(gc, cs->key, err) != 0)
        return -1;
    if (g->vertex_project != NULL) {
        cs->url = vertex_url(rq->a, gc->base_url, g->vertex_project,
                             g->vertex_location, gc->model, streaming, err);
        if (cs->url == NULL)
            return -1;
    } else {
        cs->url = arena_printf(
            rq->a, "%s/v1beta/models/%s:%s", base_url(gc), gc->model,
            streaming ? "streamGenerateContent?alt=sse" : "generateContent");
        if (cs->url == NULL)
            return status_set(err, ST_NO_MEMORY,
                              "out of memory calling Gemini");
    }
    cs->deadline = call_deadline(&g->t, gc);
    return 0;
}

/* Send the request once, `now` on the transport's clock. Returns 0, or
 * -1 with err set. */
static int
post_attempt(struct gemini *g, const struct gemini_request *rq,
             struct stream_call *s, struct call_state *cs, long now,
             struct status_error *err)
{
    const struct gemini_transport *t = &g->t;
    struct gemini_http *h = &cs->h;

    sbuf_reset(&h->body);
    h->net = GEMINI_NET_OK;
    h->status = 0;
    h->retry_after_ms = -1;
    h->sent = 1;
    if (s != NULL)
        stream_restart(s, h);
    if (t->post(t->ctx, cs->url, cs->key, rq->body, rq->len, cs->deadline - now,
                h) != 0)
        return status_set(err, ST_NO_MEMORY, "out of memory calling Gemini");
    /* A silent re-send by libcurl is an attempt too: the retry budget
     * and the usage count say how often Gemini was really asked. */
    if (h->sent > 1)
        cs->attempt += h->sent - 1;
    if (rq->usage != NULL)
        rq->usage->calls += h->sent > 1 ? h->sent : 1;
    return 0;
}

/*
 * The stream broke off. Once, and only before any text went out, it is
 * tried again: returns 1 after the back-off. After that the visitor has
 * seen part of an answer, and must not be shown it as if it were whole:
 * -1 with err set.
 */
static int
stream_broke(struct gemini *g, const struct config_gemini *gc,
             const struct stream_call *s, struct call_state *cs,
             struct status_error *err)
{
    const struct gemini_transport *t = &g->t;
    long now = t->now_ms(t->ctx);

    if (cs->h.net == GEMINI_NET_TIMEOUT)
        return status_set(err, ST_UPSTREAM_TIMEOUT,
                          "Gemini did not finish its answer within %ld s",
                          ceil_s(gc->timeout_ms));
    if (s->emitted > 0 || cs->stream_retried ||
        cs->deadline - now < GEMINI_BACKOFF_BASE_MS + GEMINI_MIN_ATTEMPT_MS) {
        /* not retried here: the caller may (with its own way of taking
         * back the text that went out) */
        g->broke = s->emitted > 0 && !cs->stream_retried;
        return status_set(err, ST_UPSTREAM_DOWN,
                          s->emitted > 0
                              ? "Gemini's answer broke off before it was "
                                "complete; try again"
                              : "Gemini's answer broke off twice before "
                                "any of it arrived; try again later");
    }
    cs->stream_retried = true;
    t->sleep_ms(t->ctx, GEMINI_BACKOFF_BASE_MS);
    return 1;
}

/* The failed attempt's error out of Gemini's answer into cs->info, and
 * the attempt logged. Returns 0, or -1 with err set. */
static int
read_failure(struct call_state *cs, struct status_error *err)
{
    cs->have_info = false;
    if (cs->h.net == GEMINI_NET_OK) {
        int parsed = gemini_parse_error(cs->h.body.buf, cs->h.body.len,
                                        &cs->info);
        if (parsed == -2)
            return status_set(err, ST_NO_MEMORY,
                              "out of memory reading Gemini's error");
        cs->have_info = parsed == 0;
    }
    if (!cs->have_info)
        gemini_parse_error(NULL, 0, &cs->info); /* just empties it */
    log_attempt(cs->attempt, &cs->h, &cs->info, cs->key);
    return 0;
}

/*
 * An OAuth token may be revoked or expire early: on a 401 a new one is
 * asked for once, and the call tried again at once with it; that attempt
 * is not one of the retries. Returns 1 to try again, 0 when this is not
 * that case, -1 with err set.
 */
static int
refresh_key(struct gemini *g, const struct config_gemini *gc,
            struct call_state *cs, struct status_error *err)
{
    if (cs->h.net != GEMINI_NET_OK || cs->h.status != 401 ||
        g->secret == NULL || cs->refreshed)
        return 0;
    cs->refreshed = true;
    if (g->secret(g->secret_ctx, true, &cs->key, err) != 0 ||
        check_settings(gc, cs->key, err) != 0)
        return -1;
    cs->attempt--;
    return 1;
}

/* After a failed attempt: whether to try again, after the back-off (slept
 * here); cs->hint and cs->wait are what map_failure() reports. */
static bool
retry_after_wait(struct gemini *g, struct call_state *cs)
{
    const struct gemini_transport *t = &g->t;
    long hint = cs->info.retry_delay_ms > cs->h.retry_after_ms
                    ? cs->info.retry_delay_ms
                    : cs->h.retry_after_ms;

    /* A delay from upstream is a hint, not an order: a broken or hostile
     * one must not park the visitor (their Retry-After) or this worker
     * (the wait below) for longer than the clamp. */
    if (hint > GEMINI_RETRY_HINT_MAX_MS) {
        log_warn("gemini: asked to wait %ld s; waiting at most %d s",
                 ceil_s(hint), GEMINI_RETRY_HINT_MAX_MS / 1000);
        hint = GEMINI_RETRY_HINT_MAX_MS;
    }
    cs->hint = hint;
    cs->wait = gemini_backoff_ms(cs->attempt, hint, next_rand(&g->seed));
    if (cs->attempt > GEMINI_MAX_RETRIES || !gemini_retryable(&cs->h))
        return false;
    /* A retry that cannot finish before the deadline only delays the
     * answer: report this attempt's error now. */
    if (t->now_ms(t->ctx) + cs->wait + GEMINI_MIN_ATTEMPT_MS > cs->deadline)
        return false;
    t->sleep_ms(t->ctx, cs->wait);
    if (g->gone != NULL && g->gone(g->gone_ctx)) {
        cs->h.net = GEMINI_NET_GONE; /* nobody is left to answer */
        return false;
    }
    return true;
}

/* The call rq, streamed into s when s is not NULL: attempts until one
 * answers, one fails for good, or the deadline. */
static int
call(struct gemini *g, const struct gemini_request *rq, struct stream_call *s,
     json_t **response, struct status_error *err)
{
    const struct gemini_transport *t = &g->t;
    struct call_state cs = {.hint = -1};
    long now;
    int rc = -1;

    *response = NULL;
    g->broke = false;
    cs.h.retry_after_ms = -1;
    sbuf_init(&cs.h.body, BOUND_UPSTREAM_BYTES);
    if (call_setup(g, rq, s != NULL, &cs, err) != 0)
        goto out;
    for (cs.attempt = 1;; cs.attempt++) {
        now = t->now_ms(t->ctx);
        if (cs.deadline - now <= 0) {
            cs.h.net = GEMINI_NET_TIMEOUT; /* only a sleep can overshoot */
            break;
        }
        if ((rc = post_attempt(g, rq, s, &cs, now, err)) != 0)
            goto out;
        if (s != NULL && (s->started || http_ok(&cs.h))) {
            rc = stream_end(s, &cs.h, response, err);
            if (rc <= 0 || (rc = stream_broke(g, rq->gc, s, &cs, err)) < 0)
                goto out;
            continue;
        }
        if (http_ok(&cs.h)) {
            rc = take_response(&cs.h, rq->a, response, err);
            g->broke = rc != 0 && err->code == ST_UPSTREAM_BAD;
            goto out;
        }
        if ((rc = read_failure(&cs, err)) != 0 ||
            (rc = refresh_key(g, rq->gc, &cs, err)) < 0)
            goto out;
        if (rc == 0 && !retry_after_wait(g, &cs))
            break;
    }
    rc = map_failure(g, rq->gc, &cs, err);
out:
    sbuf_release(&cs.h.body);
    return rc;
}

int
gemini_generate(struct gemini *g, const struct gemini_request *rq,
                struct json_t **response, struct status_error *err)
{
    return call(g, rq, NULL, response, err);
}

int
gemini_stream(struct gemini *g, const struct gemini_request *rq,
              const struct gemini_stream_ops *ops, void *ctx,
              struct json_t **response, struct status_error *err)
{
    struct stream_call s = {.ops = ops, .ctx = ctx, .a = rq->a};
    int rc;

    sse_init(&s.sse, BOUND_UPSTREAM_BYTES);
    chunks_init(&s.chunks, rq->a);
    rc = call(g, rq, &s, response, err);
    sse_release(&s.sse);
    chunks_release(&s.chunks);
    return rc;
}

/* --- lifecycle ----------------------------------------------------------- */

int
gemini_init_shared(struct gemini *g, struct gemini_share *share)
{
    memset(g, 0, sizeof(*g));
    g->stall_ms = GEMINI_STALL_MS;
    /* the address differs between threads, the pid between workers */
    g->seed = (unsigned)monotime_ms() ^ (unsigned)getpid() * 2654435761u ^
              (unsigned)(uintptr_t)g;
    return transport_init(g, share);
}

int
gemini_init(struct gemini *g)
{
    return gemini_init_shared(g, NULL);
}

struct gemini_share *
gemini_share_new(void)
{
    return transport_share_new();
}

void
gemini_share_free(struct gemini_share *s)
{
    transport_share_free(s);
}

void
gemini_init_transport(struct gemini *g, const struct gemini_transport *t)
{
    memset(g, 0, sizeof(*g));
    g->t = *t;
    g->stall_ms = GEMINI_STALL_MS;
    g->seed = 0x9E3779B9u; /* fixed: tests see the same jitter each run */
}

void
gemini_release(struct gemini *g)
{
    transport_release(g);
}
