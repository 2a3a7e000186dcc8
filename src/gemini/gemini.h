/*
 * gemini.h - the Gemini REST client: one generateContent call, with
 * retries, under one deadline (wire §1, §10, §11).
 *
 * Each request thread owns one `struct gemini` for its whole life: one
 * libcurl easy handle; the threads of a worker share their connections
 * (gemini_share_new), so keep-alive connections serve every request. The transport sits behind function pointers so the retry,
 * deadline and error-mapping logic is tested without a network.
 *
 * The API key travels only in the `x-goog-api-key` header (an OAuth
 * token, with GEMINI_AUTH_BEARER, only in `Authorization: Bearer`):
 * never in the URL, never in a log line, never in an error message.
 *
 * Not here: building the request body (chat.c) or reading the answer
 * (turn.h).
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_GEMINI_H
#define APP_GEMINI_H

#include "core/common.h"
#include "core/sbuf.h"
#include "gemini/bounds.h"

struct arena;
struct config_gemini;
struct json_t;
struct status_error;

/* How one HTTP attempt ended, below the HTTP status. */
enum gemini_net {
    GEMINI_NET_OK,        /* a complete HTTP response (any status) */
    GEMINI_NET_CONNECT,   /* could not connect / connection dropped: retry */
    GEMINI_NET_TIMEOUT,   /* the attempt's time ran out */
    GEMINI_NET_STALL,     /* the response started, then stopped flowing */
    GEMINI_NET_TOO_LARGE, /* the body passed BOUND_UPSTREAM_BYTES */
    GEMINI_NET_OTHER,     /* anything else (TLS, protocol): no retry */
    GEMINI_NET_GONE,      /* the visitor hung up: the call was dropped */
    GEMINI_NET_SINK,      /* on_data stopped the transfer (see below) */
};

/* One attempt's result, filled by the transport. */
struct gemini_http {
    enum gemini_net net;
    long status;         /* HTTP status; 0 without a response */
    long retry_after_ms; /* Retry-After header, or -1 */
    int sent;            /* requests that went out: libcurl re-sends a POST
                          * once, silently, when a reused connection dies
                          * without an answer; each one counts */
    struct sbuf body;    /* capped at BOUND_UPSTREAM_BYTES */
    /* A stream: when set, the body of a 2xx answer goes to on_data as it
     * arrives, not to `body` (other statuses' bodies, the errors, still
     * go to `body`). It returns 0, or -1 to end the transfer at once
     * (net GEMINI_NET_SINK; on_data_ctx knows why). */
    int (*on_data)(void *ctx, const char *p, size_t n);
    void *on_data_ctx;
};

/*
 * The transport. `post` performs one HTTP POST of `body` to `url` with
 * the key in x-goog-api-key (or a token as Bearer: enum gemini_auth),
 * giving up after `timeout_ms`; it fills `out` (whose body buffer the
 * caller initialised) and returns 0, or -1 only
 * when it could not even try (out of memory). `sleep_ms` and `now_ms`
 * (monotonic) exist so tests can run the retry schedule in no time.
 */
struct gemini_transport {
    int (*post)(void *ctx, const char *url, const char *api_key,
                const char *body, size_t len, long timeout_ms,
                struct gemini_http *out);
    void (*sleep_ms)(void *ctx, long ms);
    long (*now_ms)(void *ctx);
    void *ctx;
};

/* How the libcurl transport sends the secret it is given. */
enum gemini_auth {
    GEMINI_AUTH_KEY,    /* x-goog-api-key: <key> (the Gemini API; serve) */
    GEMINI_AUTH_BEARER, /* Authorization: Bearer <token> (Vertex AI, an
                         * OAuth token from credentials.h) */
};

struct gemini {
    struct gemini_transport t;
    /* GEMINI_AUTH_KEY after every init; the terminal client sets BEARER
     * for an OAuth token. Either way the secret is only in a header. */
    enum gemini_auth auth;
    void *curl;    /* CURL *, owned; NULL with a test transport */
    void *headers; /* struct curl_slist * of the call in flight, owned;
                    * NULL between calls (it holds the key, so it is wiped
                    * and freed after every transfer) */
    unsigned seed; /* for retry jitter */
    /* The libcurl transport's stall window: GEMINI_STALL_MS, set by the
     * init functions. Tests lower it so a stall is seen in milliseconds. */
    long stall_ms;
    /* Has the visitor of the request in flight hung up? Set by whoever
     * serves the request (NULL: never asked); the transport asks while it
     * waits, at most every GEMINI_GONE_CHECK_MS, and drops the call. */
    bool (*gone)(void *ctx);
    void *gone_ctx;
    /* Set by each call: did it fail because Gemini's answer broke off
     * mid-way - a stream cut after text went out, or a 200 whose body is
     * not JSON (cut short)? A caller may ask again (loop_input's
     * broke_retries); the client's own retries are spent by then. */
    bool broke;
    /* Where the secret comes from when it is not gc->api_key (the
     * terminal client's credential, credentials.h; NULL for `serve`):
     * asked before each call with `force` false (the cached token, fetched
     * again near its expiry), and once more with `force` true after a
     * 401, when the call is tried again at once, that once. Returns 0
     * with `*secret` valid until the next ask, or -1 with `err` set. */
    int (*secret)(void *ctx, bool force, const char **secret,
                  struct status_error *err);
    void *secret_ctx;
    /* Vertex AI (vertex.h): when vertex_project is set, a call goes to
     * vertex_url(gc->base_url, project, location, model) instead of
     * {base}/v1beta/models/{model}; gc->base_url NULL then means the
     * location's own host. Borrowed strings. */
    const char *vertex_project;
    const char *vertex_location;
};

/* Totals over the Gemini calls of one chat request. */
struct gemini_usage {
    long prompt_tokens, candidates_tokens, thoughts_tokens, cached_tokens,
        total_tokens;
    int calls; /* HTTP attempts that reached Gemini, retries included */
};

/* A client over libcurl. Returns 0, or -1 (libcurl failed). */
int gemini_init(struct gemini *g);

/*
 * What the clients of one process's threads share: libcurl's connection
 * cache, DNS cache and TLS sessions, so a request reuses the keep-alive
 * connection whichever thread opened it, and an idle thread holds none.
 * Free it after every client that uses it. NULL when out of memory.
 */
struct gemini_share;
struct gemini_share *gemini_share_new(void);
void gemini_share_free(struct gemini_share *s);

/* gemini_init(), with the client joined to `share`. */
int gemini_init_shared(struct gemini *g, struct gemini_share *share);

/* A client over a caller-supplied transport (tests). */
void gemini_init_transport(struct gemini *g, const struct gemini_transport *t);

void gemini_release(struct gemini *g);

/* One call to Gemini: the settings it is made with, the JSON body sent,
 * the arena the answer is pinned to, and the usage its attempts are
 * counted into (NULL: not counted). */
struct gemini_request {
    const struct config_gemini *gc;
    const char *body;
    size_t len;
    struct arena *a;
    struct gemini_usage *usage;
};

/*
 * POST {baseUrl}/v1beta/models/{model}:generateContent with rq->body.
 * Retries at most twice, only on 408/429/500/502/503/504 and connection
 * failures, with exponential back-off plus jitter, honouring RetryInfo
 * retryDelay and Retry-After (clamped to GEMINI_RETRY_HINT_MAX_MS), never
 * past the deadline of rq->gc->timeout_ms from the call's start, nor past
 * the request's own (watch_deadline_ms()).
 * On success returns 0 with `*response` a new reference pinned to rq->a.
 * On failure returns -1 with `err` mapped (upstream_auth, _rejected,
 * _rate_limited, _unavailable, _timeout, _bad_response; not_configured
 * without calling Gemini when the key is missing; client_gone when the
 * visitor hung up, see `gone`). err->text is for the
 * site's visitors: our own words, never a path or Gemini's message (both
 * are logged). For _rate_limited, and for _unavailable when Gemini named
 * a delay, err->retry_after_s says when to come back (the HTTP answer's
 * Retry-After, clamped). rq->usage->calls counts every attempt made.
 */
int gemini_generate(struct gemini *g, const struct gemini_request *rq,
                    struct json_t **response, struct status_error *err);

/* What a streamed call reports as it goes. */
struct gemini_stream_ops {
    /* Visible text of the answer (not thoughts), as it arrives: 0, or -1
     * with `err` set to drop the call (the visitor is gone). */
    int (*text)(void *ctx, const char *text, size_t len,
                struct status_error *err);
};

/*
 * gemini_generate(), streamed: POST ...:streamGenerateContent?alt=sse,
 * with the same headers, body, retries and deadlines. Each text delta
 * goes to ops->text as it arrives; `*response` is the whole answer
 * assembled from the chunks (chunks.h), in the shape generateContent
 * answers. A stream that breaks off (an error in it, the connection lost,
 * no finishReason) before any text went out is tried once more; after
 * text went out it fails with upstream_unavailable, never passing a cut
 * answer off as whole.
 */
int gemini_stream(struct gemini *g, const struct gemini_request *rq,
                  const struct gemini_stream_ops *ops, void *ctx,
                  struct json_t **response, struct status_error *err);

/* --- pure helpers, exposed for tests ----------------------------------- */

/* A Gemini error body, `{...}` or `[{...}]`. */
struct gemini_error_info {
    long code;           /* error.code, 0 if absent */
    char status[48];     /* error.status, e.g. "RESOURCE_EXHAUSTED" */
    char reason[48];     /* ErrorInfo reason, e.g. "API_KEY_INVALID" */
    char message[256];   /* error.message, cut at a UTF-8 boundary */
    long retry_delay_ms; /* RetryInfo retryDelay, or -1 */
};

/* Parse an error body. Returns 0, -1 when it is not one (HTML, ...), or
 * -2 when out of memory. */
int gemini_parse_error(const char *body, size_t len,
                       struct gemini_error_info *out);

/* "26s", "0.5s", "1.250s" -> milliseconds; -1 when malformed. */
long gemini_parse_duration(const char *s);

/* Is this attempt worth another try? */
bool gemini_retryable(const struct gemini_http *h);

/*
 * The wait before retry number `retry` (1 or 2): base back-off doubling
 * from GEMINI_BACKOFF_BASE_MS, plus up to 50% jitter from `rnd`, and at
 * least `hint_ms` (RetryInfo / Retry-After) when that is >= 0.
 */
long gemini_backoff_ms(int retry, long hint_ms, unsigned rnd);

#endif /* APP_GEMINI_H */
