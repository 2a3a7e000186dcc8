/*
 * stream-client.c - `make bench`'s streaming client: how long one chunk
 * takes from the upstream, through the responder and nginx, to a visitor.
 *
 *   stream-client URL BODY_FILE [STREAMS [PARALLEL [raw-sse]]]
 *
 * Opens STREAMS streams (default 1000), PARALLEL at a time (default 16):
 * each a POST of BODY_FILE to URL (http://127.0.0.1:PORT/path) with
 * `Accept: application/x-ndjson`, on a connection of its own, read as it
 * comes (HTTP/1.1, chunked or not). The upstream is fastmock.c, whose
 * first SSE event carries the text "t=<CLOCK_MONOTONIC ns just before the
 * mock wrote it> "; the responder streams it on as a line
 * {"type":"delta","delta":"t=... "}. At the first delta line of a stream
 * the client takes CLOCK_MONOTONIC, read right after the read() that
 * completed the line, minus that t=.
 *
 * `raw-sse` reads fastmock's own SSE events instead (URL is then the
 * mock's :streamGenerateContent?alt=sse): the floor of this client and of
 * loopback TCP, with no responder and no nginx in the way.
 *
 * In C, a blocking thread per stream in flight, because a client in Python
 * (one thread, a selector) measured against fastmock alone put 50 to 100
 * µs on the median and 1 to 4 ms on the p99: as much as what is measured.
 *
 * Prints one JSON object: {"streams", "ok", "errors", "not_streamed",
 * "error_kinds": {...}, "median_us", "p99_us", "min_us", "max_us",
 * "seconds"}. A stream is ok when it answered 200 with
 * application/x-ndjson, had a delta with t= and its last line is
 * {"type":"result",...} (raw-sse: a finishReason). Anything else is an
 * error (a non-200, no result line, an error line last, a connection
 * failure, 30 s without a byte), except a 200 that is one plain JSON
 * document (application/json): not_streamed, the responder ignored the
 * Accept header. Exit status 0 when every stream was ok, 3 when none was
 * streamed, 1 otherwise.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { V_OK, V_NOT_STREAMED, V_STATUS, V_CONNECT, V_IO, V_TIMEOUT, V_CTYPE,
       V_NO_RESULT, V_ERROR_LINE, V_NO_DELTA, V_BAD_HTTP, V_N };
static const char *const vname[V_N] = {
    "ok", "not_streamed", "non-200 status", "connect failed", "read/write failed",
    "timeout (30 s without a byte)", "other content-type", "no result line last",
    "error line last", "no delta with t=", "bad HTTP"};

static struct sockaddr_in addr;
static char *request;
static size_t request_len;
static int total, raw_sse;
static int next_stream;                 /* under mu */
static double *lat;                     /* µs, one per ok stream; under mu */
static int nlat, counts[V_N];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static long long
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A growing buffer. */
struct buf {
    char *p;
    size_t n, cap;
};

static void
buf_add(struct buf *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void
buf_drop(struct buf *b, size_t n) /* the first n bytes */
{
    memmove(b->p, b->p + n, b->n - n);
    b->n -= n;
    b->p[b->n] = '\0';
}

/* JSON, just enough: skip one value at p (in [p, e)); returns the end or NULL. */
static const char *
skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

static const char *
skip_string(const char *p, const char *e) /* p at the opening quote */
{
    for (p++; p < e; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

static const char *
skip_value(const char *p, const char *e)
{
    int depth = 0;

    p = skip_ws(p, e);
    while (p < e) {
        char c = *p;
        if (c == '"') {
            p = skip_string(p, e);
            if (p == NULL || depth == 0)
                return p;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return p; /* the end of the enclosing object */
            if (--depth == 0)
                return p + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
            return p;
        }
        p++;
    }
    return depth == 0 ? p : NULL;
}

/* The top-level string member KEY of the object in [p, e): its raw text
 * (escapes left as they are) in *v, *vn; 0 when there is none. */
static int
member(const char *p, const char *e, const char *key, const char **v, size_t *vn)
{
    size_t kn = strlen(key);

    p = skip_ws(p, e);
    if (p >= e || *p != '{')
        return 0;
    p++;
    for (;;) {
        const char *k, *ke;
        p = skip_ws(p, e);
        if (p >= e || *p != '"')
            return 0;
        k = p + 1;
        ke = skip_string(p, e);
        if (ke == NULL)
            return 0;
        p = skip_ws(ke, e);
        if (p >= e || *p != ':')
            return 0;
        p = skip_ws(p + 1, e);
        if ((size_t)(ke - 1 - k) == kn && memcmp(k, key, kn) == 0 && p < e && *p == '"') {
            const char *ve = skip_string(p, e);
            if (ve == NULL)
                return 0;
            *v = p + 1;
            *vn = (size_t)(ve - 1 - (p + 1));
            return 1;
        }
        p = skip_value(p, e);
        if (p == NULL)
            return 0;
        p = skip_ws(p, e);
        if (p >= e || *p != ',')
            return 0;
        p++;
    }
}

static int
is(const char *v, size_t vn, const char *s)
{
    return vn == strlen(s) && memcmp(v, s, vn) == 0;
}

struct stream {
    int status, chunked, done;
    long long left;        /* Content-Length left, or -1; chunked: see feed() */
    int chunk_state;       /* chunked: 0 size line next, 1 data, 2 its CRLF */
    char ctype[128];
    struct buf cbuf, body; /* undecoded chunked bytes; body not yet in lines */
    double first_us;       /* < 0 until the first delta */
    int lines, last_kind;  /* last line's type: 0 other, 1 result, 2 error */
    int finish;            /* raw-sse: a finishReason seen */
};

static void
line(struct stream *st, const char *p, const char *e, long long ns)
{
    const char *v;
    size_t vn;

    while (e > p && (e[-1] == '\r' || e[-1] == ' '))
        e--;
    if (e == p)
        return;
    st->lines++;
    if (raw_sse) {
        if (memmem(p, (size_t)(e - p), "\"finishReason\"", 14) != NULL)
            st->finish = 1;
        if (st->first_us < 0 && e - p > 6 && memcmp(p, "data: ", 6) == 0) {
            const char *t = memmem(p, (size_t)(e - p), "\"t=", 3);
            if (t != NULL)
                st->first_us = (double)(ns - atoll(t + 3)) / 1000.0;
        }
        return;
    }
    st->last_kind = 0;
    if (!member(p, e, "type", &v, &vn))
        return;
    if (is(v, vn, "result"))
        st->last_kind = 1;
    else if (is(v, vn, "error"))
        st->last_kind = 2;
    else if (is(v, vn, "delta") && st->first_us < 0 && member(p, e, "delta", &v, &vn) &&
             vn > 2 && v[0] == 't' && v[1] == '=')
        st->first_us = (double)(ns - atoll(v + 2)) / 1000.0;
}

/* Body bytes [p, p+n) arrived at ns: decode, split lines. */
static void
feed(struct stream *st, const char *p, size_t n, long long ns)
{
    char *nl;

    if (!st->chunked) {
        buf_add(&st->body, p, n);
        if (st->left >= 0 && (st->left -= (long long)n) <= 0)
            st->done = 1;
    } else {
        buf_add(&st->cbuf, p, n);
        while (!st->done) {
            if (st->chunk_state == 0) {
                char *eol = strstr(st->cbuf.p, "\r\n");
                if (eol == NULL)
                    break;
                st->left = strtoll(st->cbuf.p, NULL, 16);
                buf_drop(&st->cbuf, (size_t)(eol + 2 - st->cbuf.p));
                if (st->left == 0)
                    st->done = 1;
                else
                    st->chunk_state = 1;
            } else if (st->chunk_state == 1) {
                size_t k = st->cbuf.n < (size_t)st->left ? st->cbuf.n : (size_t)st->left;
                if (k == 0)
                    break;
                buf_add(&st->body, st->cbuf.p, k);
                buf_drop(&st->cbuf, k);
                if ((st->left -= (long long)k) == 0)
                    st->chunk_state = 2;
            } else {
                if (st->cbuf.n < 2)
                    break;
                buf_drop(&st->cbuf, 2);
                st->chunk_state = 0;
            }
        }
    }
    while (st->body.n > 0 && (nl = memchr(st->body.p, '\n', st->body.n)) != NULL) {
        line(st, st->body.p, nl, ns);
        buf_drop(&st->body, (size_t)(nl + 1 - st->body.p));
    }
}

static int
one_stream(void)
{
    char rd[65536];
    struct buf head = {0};
    struct stream st = {.left = -1, .first_us = -1};
    struct timeval tv = {30, 0};
    int one = 1, fd, v = V_OK;
    size_t off = 0;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        return V_CONNECT;
    }
    while (off < request_len) {
        ssize_t k = write(fd, request + off, request_len - off);
        if (k <= 0) {
            close(fd);
            return errno == EAGAIN ? V_TIMEOUT : V_IO;
        }
        off += (size_t)k;
    }
    while (!st.done) {
        ssize_t n = read(fd, rd, sizeof(rd));
        long long ns = now_ns();
        if (n < 0) {
            v = errno == EAGAIN ? V_TIMEOUT : V_IO;
            break;
        }
        if (n == 0) { /* the end: fine unless chunked or short */
            if (st.status == 0)
                v = V_BAD_HTTP;
            else if (st.chunked || st.left > 0)
                v = V_IO;
            else
                feed(&st, "\n", 1, ns); /* a last line without its newline */
            break;
        }
        if (st.status == 0) {
            char *end, *ct, *te, *cl;
            buf_add(&head, rd, (size_t)n);
            end = strstr(head.p, "\r\n\r\n");
            if (end == NULL)
                continue;
            *end = '\0';
            if (sscanf(head.p, "HTTP/1.%*d %d", &st.status) != 1 || st.status <= 0) {
                v = V_BAD_HTTP;
                break;
            }
            ct = strcasestr(head.p, "\r\ncontent-type:");
            if (ct != NULL)
                sscanf(ct + 15, " %127[^\r]", st.ctype);
            te = strcasestr(head.p, "\r\ntransfer-encoding:");
            st.chunked = te != NULL && strncasecmp(te + 20 + strspn(te + 20, " "), "chunked", 7) == 0;
            cl = strcasestr(head.p, "\r\ncontent-length:");
            if (!st.chunked && cl != NULL)
                st.left = strtoll(cl + 17, NULL, 10);
            size_t used = (size_t)(end + 4 - head.p);
            if (head.n > used)
                feed(&st, head.p + used, head.n - used, ns);
            else if (st.left == 0)
                st.done = 1;
            continue;
        }
        feed(&st, rd, (size_t)n, ns);
    }
    close(fd);
    if (v == V_OK && st.body.n > 0)
        feed(&st, "\n", 1, now_ns());
    if (v == V_OK) {
        if (st.status != 200)
            v = V_STATUS;
        else if (raw_sse)
            v = !st.finish ? V_NO_RESULT : st.first_us < 0 ? V_NO_DELTA : V_OK;
        else if (strncasecmp(st.ctype, "application/json", 16) == 0)
            v = V_NOT_STREAMED;
        else if (strncasecmp(st.ctype, "application/x-ndjson", 20) != 0)
            v = V_CTYPE;
        else if (st.last_kind == 2)
            v = V_ERROR_LINE;
        else if (st.last_kind != 1)
            v = V_NO_RESULT;
        else if (st.first_us < 0)
            v = V_NO_DELTA;
    }
    if (v == V_OK) {
        pthread_mutex_lock(&mu);
        lat[nlat++] = st.first_us;
        pthread_mutex_unlock(&mu);
    }
    free(head.p);
    free(st.cbuf.p);
    free(st.body.p);
    return v;
}

static void *
run(void *arg)
{
    (void)arg;
    for (;;) {
        int v;
        pthread_mutex_lock(&mu);
        if (next_stream >= total) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        next_stream++;
        pthread_mutex_unlock(&mu);
        v = one_stream();
        pthread_mutex_lock(&mu);
        counts[v]++;
        pthread_mutex_unlock(&mu);
    }
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
pct(int p) /* nearest rank */
{
    int i = (int)(((long long)p * nlat + 99) / 100) - 1;
    return lat[i < 0 ? 0 : i >= nlat ? nlat - 1 : i];
}

int
main(int argc, char **argv)
{
    char host[256] = "", path[2048] = "/";
    int port = 80, par, errors = 0, first = 1;
    long long t0;
    FILE *f;
    char *body;
    long bl;
    pthread_t *th;

    if (argc < 3 || argc > 6 || sscanf(argv[1], "http://%255[^:/]:%d%2047s", host, &port, path) < 2) {
        fprintf(stderr, "usage: stream-client http://HOST:PORT/PATH BODY_FILE [STREAMS [PARALLEL [raw-sse]]]\n");
        return 2;
    }
    total = argc > 3 ? atoi(argv[3]) : 1000;
    par = argc > 4 ? atoi(argv[4]) : 16;
    raw_sse = argc > 5 && strcmp(argv[5], "raw-sse") == 0;
    if (total < 1 || par < 1) {
        fprintf(stderr, "stream-client: STREAMS and PARALLEL must be positive\n");
        return 2;
    }
    if (par > total)
        par = total;
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "stream-client: %s: give a numeric IPv4 address\n", host);
        return 2;
    }
    f = fopen(argv[2], "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (bl = ftell(f)) < 0) {
        perror(argv[2]);
        return 2;
    }
    rewind(f);
    body = malloc((size_t)bl + 1);
    request = malloc((size_t)bl + 4096);
    lat = calloc((size_t)total, sizeof(*lat));
    th = calloc((size_t)par, sizeof(*th));
    if (body == NULL || request == NULL || lat == NULL || th == NULL ||
        fread(body, 1, (size_t)bl, f) != (size_t)bl)
        return 2;
    fclose(f);
    request_len = (size_t)snprintf(request, 4096,
                                   "POST %s HTTP/1.1\r\nHost: %s:%d\r\n"
                                   "Content-Type: application/json\r\nAccept: %s\r\n"
                                   "Content-Length: %ld\r\nConnection: close\r\n\r\n",
                                   path, host, port,
                                   raw_sse ? "text/event-stream" : "application/x-ndjson", bl);
    memcpy(request + request_len, body, (size_t)bl);
    request_len += (size_t)bl;

    t0 = now_ns();
    for (int i = 0; i < par; i++)
        if (pthread_create(&th[i], NULL, run, NULL) != 0) {
            perror("stream-client: pthread_create");
            return 1;
        }
    for (int i = 0; i < par; i++)
        pthread_join(th[i], NULL);

    qsort(lat, (size_t)nlat, sizeof(*lat), cmp);
    for (int v = V_STATUS; v < V_N; v++)
        errors += counts[v];
    printf("{\"streams\": %d, \"ok\": %d, \"errors\": %d, \"not_streamed\": %d, \"error_kinds\": {",
           total, counts[V_OK], errors, counts[V_NOT_STREAMED]);
    for (int v = V_STATUS; v < V_N; v++)
        if (counts[v] > 0) {
            printf("%s\"%s\": %d", first ? "" : ", ", vname[v], counts[v]);
            first = 0;
        }
    if (nlat > 0)
        printf("}, \"median_us\": %.1f, \"p99_us\": %.1f, \"min_us\": %.1f, \"max_us\": %.1f",
               pct(50), pct(99), lat[0], lat[nlat - 1]);
    else
        printf("}, \"median_us\": null, \"p99_us\": null, \"min_us\": null, \"max_us\": null");
    printf(", \"seconds\": %.2f}\n", (double)(now_ns() - t0) / 1e9);
    if (counts[V_NOT_STREAMED] == total)
        return 3;
    return counts[V_OK] == total ? 0 : 1;
}
