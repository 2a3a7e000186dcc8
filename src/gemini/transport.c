/*
 * transport.c - the libcurl transport of the Gemini client.
 *
 * One easy handle per worker: its connection cache keeps one keep-alive
 * connection to Gemini for many requests. Each POST reports how it ended
 * below the HTTP status (enum gemini_net), with deadlines for connecting,
 * for a response that stalls, and for the whole attempt, and a cap on the
 * body. libcurl's codes and types never leave this file.
 *
 * The API key is sent only in the x-goog-api-key header (an OAuth token,
 * with GEMINI_AUTH_BEARER, only in Authorization: Bearer), which is built
 * for each transfer and wiped afterwards.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/transport.h"
#include "gemini/cabundle.h"
#include "gemini/gemini.h"
#include "gemini/bounds.h"
#include "core/logmsg.h"
#include "core/monotime.h"
#include "core/sbuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* --- the libcurl transport --------------------------------------------- */

/* What the callbacks of one transfer share. */
struct gemini_xfer {
    struct gemini_http *out;
    long stall_ms;
    long last_ms;   /* when the last body bytes arrived */
    bool started;   /* some body arrived: the stall watch is on */
    bool too_large; /* the write callback hit the body cap */
    bool no_memory; /* the write callback could not grow the buffer */
    bool stalled;   /* the progress callback saw a stall */
    bool gone;      /* ... or that the visitor hung up */
    bool sink_stop; /* on_data ended the transfer */
    int to_sink;    /* the body goes to on_data: 1, to `body`: 0,
                     * not decided yet (no body byte so far): -1 */
    struct gemini *g;
    long gone_checked_ms;
};

static long
curl_now_ms(void *ctx)
{
    (void)ctx;
    return monotime_ms();
}

static void
curl_sleep_ms(void *ctx, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    (void)ctx;
    /* A signal (the watchdog is one) must not cut the back-off short. */
    while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static size_t
curl_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct gemini_xfer *x = userdata;
    struct sbuf *sb = &x->out->body;
    size_t n = size * nmemb;

    if (x->to_sink < 0) {
        /* The headers are in: a stream's body goes to on_data only when
         * the status says it is one; an error body is read whole. */
        long status = 0;
        curl_easy_getinfo(x->g->curl, CURLINFO_RESPONSE_CODE, &status);
        x->to_sink = x->out->on_data != NULL && status >= 200 && status < 300;
    }
    if (x->to_sink) {
        x->started = true;
        x->last_ms = monotime_ms();
        if (x->out->on_data(x->out->on_data_ctx, ptr, n) != 0) {
            x->sink_stop = true;
            return 0; /* CURLE_WRITE_ERROR */
        }
        return n;
    }
    if (sbuf_add(sb, ptr, n) != 0) {
        /* Returning less than n aborts the transfer (CURLE_WRITE_ERROR). */
        if (n > sb->max - sb->len)
            x->too_large = true;
        else
            x->no_memory = true;
        return 0;
    }
    x->started = true;
    x->last_ms = monotime_ms();
    return n;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
static long
retry_after_value(const char *v)
{
    struct tm tm;
    long sec = 0;
    const char *p;
    time_t when;

    for (p = v; *p >= '0' && *p <= '9'; p++) {
        if (sec > 86400L * 365)
            return -1;
        sec = sec * 10 + (*p - '0');
    }
    if (p != v && *p == '\0')
        return sec * 1000;
    memset(&tm, 0, sizeof(tm));
    p = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (p == NULL || *p != '\0')
        return -1;
    when = timegm(&tm);
    if (when == (time_t)-1)
        return -1;
    when -= time(NULL);
    return when > 0 ? (long)when * 1000 : 0;
}

static size_t
curl_header_cb(char *buf, size_t size, size_t nitems, void *userdata)
{
    static const char name[] = "retry-after:";
    struct gemini_xfer *x = userdata;
    size_t n = size * nitems, i = sizeof(name) - 1, j;
    char value[64];

    /* A new status line starts a new header block (after a 1xx). */
    if (n >= 5 && memcmp(buf, "HTTP/", 5) == 0)
        x->out->retry_after_ms = -1;
    if (n <= i || strncasecmp(buf, name, i) != 0)
        return n;
    while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    j = n;
    while (j > i && (buf[j - 1] == '\r' || buf[j - 1] == '\n' ||
                     buf[j - 1] == ' ' || buf[j - 1] == '\t'))
        j--;
    if (j - i < sizeof(value)) {
        memcpy(value, buf + i, j - i);
        value[j - i] = '\0';
        x->out->retry_after_ms = retry_after_value(value);
    }
    return n;
}

/*
 * Abort a response that started and then stopped. Before the first body
 * byte only the deadline applies: a thinking model is silent for long.
 */
static int
curl_xferinfo_cb(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                 curl_off_t ultotal, curl_off_t ulnow)
{
    struct gemini_xfer *x = clientp;

    long now = monotime_ms();

    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    if (x->started && now - x->last_ms >= x->stall_ms) {
        x->stalled = true;
        return 1;
    }
    /* libcurl calls this about once a second while it waits, and often
     * while bytes flow: ask about the visitor at a fixed pace. */
    if (x->g->gone != NULL &&
        now - x->gone_checked_ms >= GEMINI_GONE_CHECK_MS) {
        x->gone_checked_ms = now;
        if (x->g->gone(x->g->gone_ctx)) {
            x->gone = true;
            return 1;
        }
    }
    return 0;
}

/* Wipe the key out of the header list before it goes back to malloc. */
static void
headers_free(struct gemini *g)
{
    struct curl_slist *l = g->headers;

    for (struct curl_slist *p = l; p != NULL; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
    g->headers = NULL;
}

static int
headers_build(struct gemini *g, const char *api_key)
{
    static const char *const fixed[] = {
        "Content-Type: application/json",
        "Expect:", /* no 100-continue round trip for large bodies */
    };
    static const char key_prefix[] = "x-goog-api-key: ";
    static const char bearer_prefix[] = "Authorization: Bearer ";
    const char *prefix = g->auth == GEMINI_AUTH_BEARER ? bearer_prefix
                                                       : key_prefix;
    size_t plen = strlen(prefix), klen = strlen(api_key);
    char *line = NULL;
    struct curl_slist *l = NULL, *n;
    int rc = -1;

    for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
        n = curl_slist_append(l, fixed[i]);
        if (n == NULL)
            goto out;
        l = n;
    }
    line = malloc(plen + klen + 1);
    if (line == NULL)
        goto out;
    memcpy(line, prefix, plen);
    memcpy(line + plen, api_key, klen + 1);
    n = curl_slist_append(l, line);
    if (n == NULL)
        goto out;
    l = n;
    rc = 0;
out:
    if (line != NULL) {
        explicit_bzero(line, plen + klen + 1);
        free(line);
    }
    g->headers = l; /* freed by headers_free on failure too */
    return rc;
}

/* CURLcode -> enum gemini_net, here at the module boundary, so libcurl's
 * codes never leave this file. */
static enum gemini_net
map_curl(CURLcode res, const struct gemini_xfer *x, long elapsed_ms,
         long timeout_ms)
{
    switch (res) {
    case CURLE_OK:
        return GEMINI_NET_OK;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return GEMINI_NET_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        /* Time out well before the attempt's end: that was the connect
         * timeout, and another try may reach another address. */
        return elapsed_ms + 100 < timeout_ms ? GEMINI_NET_CONNECT
                                             : GEMINI_NET_TIMEOUT;
    case CURLE_ABORTED_BY_CALLBACK:
        return x->gone      ? GEMINI_NET_GONE
               : x->stalled ? GEMINI_NET_STALL
                            : GEMINI_NET_OTHER;
    case CURLE_WRITE_ERROR:
        return x->sink_stop   ? GEMINI_NET_SINK
               : x->too_large ? GEMINI_NET_TOO_LARGE
                              : GEMINI_NET_OTHER;
    default:
        return GEMINI_NET_OTHER;
    }
}

/* Counts the request heads libcurl sends (CURLINFO_HEADER_OUT), without
 * looking at them: they hold the key. */
static int
curl_debug_cb(CURL *c, curl_infotype type, char *data, size_t size, void *userp)
{
    struct gemini_http *out = userp;

    (void)c;
    (void)data;
    (void)size;
    if (type == CURLINFO_HEADER_OUT)
        out->sent++;
    return 0;
}

/*
 * The upload buffer for one call. A body above 64 KB is sent through it
 * (a smaller one goes out with the headers): a buffer the size of the body,
 * up to GEMINI_UPLOAD_BUFFER_MAX, sends it in a few writes instead of one
 * per 16 KB, each of which costs a pass through the network stack. Set
 * back to the minimum after the call, which frees it: a thread waiting on
 * Gemini holds none.
 */
static long
upload_buffer(size_t len)
{
    if (len < GEMINI_UPLOAD_BUFFER)
        return (long)GEMINI_UPLOAD_BUFFER;
    return (long)(len < GEMINI_UPLOAD_BUFFER_MAX ? len
                                                 : GEMINI_UPLOAD_BUFFER_MAX);
}

static int
curl_post(void *ctx, const char *url, const char *api_key, const char *body,
          size_t len, long timeout_ms, struct gemini_http *out)
{
    struct gemini *g = ctx;
    CURL *c = g->curl;
    struct gemini_xfer x = {
        .out = out,
        .stall_ms = g->stall_ms > 0 ? g->stall_ms : GEMINI_STALL_MS,
        .g = g,
        .gone_checked_ms = monotime_ms(),
        .to_sink = -1,
    };
    char errbuf[CURL_ERROR_SIZE];
    long connect_ms = timeout_ms < GEMINI_CONNECT_MS ? timeout_ms
                                                     : GEMINI_CONNECT_MS;
    long t0;
    CURLcode res;
    int rc = -1;

    errbuf[0] = '\0';
    out->net = GEMINI_NET_OTHER;
    out->status = 0;
    out->retry_after_ms = -1;
    if (timeout_ms <= 0) {
        out->net = GEMINI_NET_TIMEOUT; /* 0 would mean "no timeout" */
        return 0;
    }
    if (headers_build(g, api_key) != 0)
        goto out;
    /* Per-call options; the handle, and so its connection, is kept. */
    if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, g->headers) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &x) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &x) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_DEBUGDATA, out) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, upload_buffer(len)) !=
            CURLE_OK)
        goto out; /* only a failed strdup of the URL can get here */

    out->sent = 0;
    t0 = monotime_ms();
    res = curl_easy_perform(c);
    if (x.no_memory)
        goto out;
    out->net = map_curl(res, &x, monotime_ms() - t0, timeout_ms);
    if (res == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    else if (!x.gone && !x.sink_stop)
        /* libcurl's words name the host and the cause, never the key. */
        log_info("gemini: libcurl: %s",
                 errbuf[0] ? errbuf : curl_easy_strerror(res));
    rc = 0;
out:
    /* Nothing may point at this frame or at the wiped list afterwards. */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, NULL);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, NULL);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, NULL);
    curl_easy_setopt(c, CURLOPT_DEBUGDATA, NULL);
    curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, (long)GEMINI_UPLOAD_BUFFER);
    if (out->sent < 1)
        out->sent = 1; /* refused before sending still used an attempt */
    headers_free(g);
    return rc;
}

/* --- the share: one per worker process --------------------------------- */

/* libcurl calls these around every use of the shared data; one mutex per
 * kind of data, so a DNS lookup does not wait for the connection cache. */
struct gemini_share {
    CURLSH *sh;
    pthread_mutex_t mu[CURL_LOCK_DATA_LAST];
};

static void
share_lock(CURL *c, curl_lock_data data, curl_lock_access access, void *userp)
{
    struct gemini_share *s = userp;

    (void)c, (void)access;
    pthread_mutex_lock(&s->mu[data]);
}

static void
share_unlock(CURL *c, curl_lock_data data, void *userp)
{
    struct gemini_share *s = userp;

    (void)c;
    pthread_mutex_unlock(&s->mu[data]);
}

struct gemini_share *
transport_share_new(void)
{
    struct gemini_share *s = calloc(1, sizeof(*s));
    int i = 0;

    if (s == NULL)
        return NULL;
    for (; i < CURL_LOCK_DATA_LAST; i++)
        if (pthread_mutex_init(&s->mu[i], NULL) != 0)
            goto fail;
    s->sh = curl_share_init();
    if (s->sh == NULL ||
        curl_share_setopt(s->sh, CURLSHOPT_LOCKFUNC, share_lock) !=
            CURLSHE_OK ||
        curl_share_setopt(s->sh, CURLSHOPT_UNLOCKFUNC, share_unlock) !=
            CURLSHE_OK ||
        curl_share_setopt(s->sh, CURLSHOPT_USERDATA, s) != CURLSHE_OK ||
        curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) !=
            CURLSHE_OK ||
        curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) !=
            CURLSHE_OK ||
        curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) !=
            CURLSHE_OK)
        goto fail;
    return s;
fail:
    if (s->sh != NULL)
        curl_share_cleanup(s->sh);
    while (i-- > 0)
        pthread_mutex_destroy(&s->mu[i]);
    free(s);
    return NULL;
}

void
transport_share_free(struct gemini_share *s)
{
    if (s == NULL)
        return;
    curl_share_cleanup(s->sh);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&s->mu[i]);
    free(s);
}

int
transport_init(struct gemini *g, struct gemini_share *share)
{
    CURL *c;

    g->t.post = curl_post;
    g->t.sleep_ms = curl_sleep_ms;
    g->t.now_ms = curl_now_ms;
    g->t.ctx = g;

    c = curl_easy_init();
    if (c == NULL)
        return -1;
    /*
     * Options that hold for every call. TLS verification stays at its
     * default (on). NOSIGNAL: a worker has many threads (and a CGI
     * process a SIGALRM watchdog); libcurl must not use signals. ACCEPT_ENCODING "": responses may be gzip.
     */
    if (curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        cabundle_apply(c) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_USERAGENT, "gemini-agent") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
        /* a handle per request thread, each keeping its upload buffer
         * (64 KB by default): at a thousand chats that is 64 MB */
        curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE,
                         (long)GEMINI_UPLOAD_BUFFER) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_write_cb) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, curl_header_cb) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, curl_xferinfo_cb) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
        /* VERBOSE only feeds curl_debug_cb, which counts request heads;
         * with a debug function set nothing is printed. */
        curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, curl_debug_cb) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_VERBOSE, 1L) != CURLE_OK ||
        (share != NULL &&
         curl_easy_setopt(c, CURLOPT_SHARE, share->sh) != CURLE_OK)) {
        curl_easy_cleanup(c);
        return -1;
    }
    g->curl = c;
    return 0;
}

void
transport_release(struct gemini *g)
{
    headers_free(g);
    curl_easy_cleanup(g->curl); /* safe on NULL */
    g->curl = NULL;
}
