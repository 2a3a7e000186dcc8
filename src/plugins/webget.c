/*
 * webget.c - one bounded HTTP GET (webget.h).
 *
 * A fresh easy handle per call: a few hundred microseconds of setup that
 * a search or a documentation fetch does not notice, bought for having
 * no shared state at all between request threads and across fork().
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/webget.h"
#include "plugins/outbound.h"
#include "plugins/bounds.h"
#include "core/sbuf.h"
#include "gemini/cabundle.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct sink {
    struct sbuf body;
    bool too_big;
    bool keep_start;
};

static size_t
write_cb(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;

    size_t room = s->body.max - s->body.len;

    if (s->keep_start && size * n > room) {
        /* what fits, then the end of the transfer */
        if (sbuf_add(&s->body, data, room) == 0)
            s->too_big = true;
        return 0;
    }
    if (sbuf_add(&s->body, data, size * n) != 0) {
        s->too_big = true; /* or out of memory: both end the transfer */
        return 0;
    }
    return size * n;
}

bool
webget_is_http_url(const char *url)
{
    size_t skip;

    if (url == NULL)
        return false;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else
        return false;
    /* a host must follow: not "http://" nor "http:///path" */
    return url[skip] != '\0' && url[skip] != '/' && url[skip] != '?' &&
           url[skip] != '#';
}

/* What went wrong, for the visitor: libcurl's codes grouped into the few
 * cases a site owner can act on, never its error buffer (it may quote the
 * URL, whose query holds the visitor's words, or a header). */
static void
describe(CURLcode rc, const struct webget_req *req, const struct sink *s,
         char *msg, size_t msgsize)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        snprintf(msg, msgsize, "timed out after %ld ms", req->timeout_ms);
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        snprintf(msg, msgsize, "could not resolve the host");
        break;
    case CURLE_COULDNT_CONNECT:
        snprintf(msg, msgsize, "could not connect");
        break;
    case CURLE_UNSUPPORTED_PROTOCOL:
        snprintf(msg, msgsize, "only http and https are allowed");
        break;
    case CURLE_TOO_MANY_REDIRECTS:
        snprintf(msg, msgsize, "too many redirects");
        break;
    case CURLE_WRITE_ERROR:
        if (s->too_big) {
            snprintf(msg, msgsize, "answer larger than %zu bytes",
                     req->max_bytes);
            break;
        }
        /* fall through */
    default:
        snprintf(msg, msgsize, "request failed (%s)", curl_easy_strerror(rc));
        break;
    }
}

/* req's extra headers as a list for curl: 0, or -1 (out of memory;
 * *hdrs is what was made so far, the caller frees it). */
static int
header_list(const struct webget_req *req, struct curl_slist **hdrs)
{
    for (size_t i = 0; req->headers != NULL && req->headers[i] != NULL; i++) {
        struct curl_slist *h = curl_slist_append(*hdrs, req->headers[i]);
        if (h == NULL)
            return -1;
        *hdrs = h;
    }
    return 0;
}

/* The handle set up for req: the outbound policy's guard, the bounds,
 * the headers, the body into s. 0, or -1. */
static int
set_options(CURL *c, const struct webget_req *req, struct curl_slist *hdrs,
            struct sink *s, struct outbound_guard *guard)
{
    /* NOSIGNAL: request threads must not take SIGALRM (a resolver
     * timeout would otherwise use it). */
    if (outbound_guard(c, guard, req->policy) != 0 ||
        curl_easy_setopt(c, CURLOPT_URL, req->url) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        cabundle_apply(c) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, req->follow ? 1L : 0L) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)BOUND_WEBGET_REDIRECTS) !=
            CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, req->timeout_ms) !=
            CURLE_OK ||
        (!req->keep_start &&
         curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                          (curl_off_t)req->max_bytes) != CURLE_OK) ||
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_USERAGENT, "gemini-agent") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, s) != CURLE_OK)
        return -1;
    return 0;
}

int
webget_fetch(const struct webget_req *req, struct webget_res *res, char *msg,
             size_t msgsize)
{
    struct sink s = {.too_big = false, .keep_start = req->keep_start};
    struct outbound_guard guard;
    struct curl_slist *hdrs = NULL;
    CURL *c;
    CURLcode rc;
    int ret = -1;

    *res = (struct webget_res){0, NULL, 0, false};
    if (!webget_is_http_url(req->url)) {
        snprintf(msg, msgsize, "only http and https URLs are allowed");
        return -1;
    }
    sbuf_init(&s.body, req->max_bytes);
    c = curl_easy_init();
    if (c == NULL) {
        snprintf(msg, msgsize, "out of memory");
        return -1;
    }
    if (header_list(req, &hdrs) != 0) {
        snprintf(msg, msgsize, "out of memory");
        goto out;
    }
    if (set_options(c, req, hdrs, &s, &guard) != 0) {
        snprintf(msg, msgsize, "cannot set up the request");
        goto out;
    }
    rc = curl_easy_perform(c);
    if (rc == CURLE_FILESIZE_EXCEEDED) {
        s.too_big = true;
        rc = CURLE_WRITE_ERROR;
    }
    if (rc == CURLE_WRITE_ERROR && s.keep_start && s.too_big) {
        res->truncated = true;
        rc = CURLE_OK;
    }
    if (rc != CURLE_OK) {
        /* a refused address fails the transfer as a failed connect */
        if (rc != CURLE_COULDNT_CONNECT ||
            !outbound_refusal(c, &guard, msg, msgsize))
            describe(rc, req, &s, msg, msgsize);
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->status);
    res->body = sbuf_detach(&s.body, &res->len);
    if (res->body == NULL) {
        snprintf(msg, msgsize, "out of memory");
        goto out;
    }
    ret = 0;
out:
    sbuf_release(&s.body);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return ret;
}

void
webget_free(struct webget_res *res)
{
    free(res->body);
    *res = (struct webget_res){0, NULL, 0, false};
}
