/*
 * webget.h - one bounded HTTP GET for the built-in plugins that read the
 * web (web_search, references).
 *
 * Not the Gemini transport (gemini/transport.c: POST, streaming, a shared
 * connection cache): each call here makes its own curl easy handle and
 * frees it, so it is safe from any number of request threads and from a
 * worker process forked after the site was loaded (no handle crosses a
 * fork). Only http and https, also after a redirect; only the addresses
 * the outbound policy allows (plugins/outbound.h), checked on every
 * connection, each redirect hop's included; no proxy; a total timeout;
 * the body cut off at a size cap. Messages never carry the request's
 * headers (an API key may be one of them) nor libcurl's error buffer
 * verbatim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_WEBGET_H
#define APP_WEBGET_H

#include "core/common.h"
#include "plugins/bounds.h"

#include <stddef.h>

struct outbound;

struct webget_req {
    const char *url;
    /* "Name: value" lines, NULL-terminated, or NULL */
    const char *const *headers;
    long timeout_ms;
    size_t max_bytes; /* a longer body is an error */
    bool follow;      /* follow up to BOUND_WEBGET_REDIRECTS redirects */
    /* a longer body: keep its first max_bytes and succeed (truncated
     * set) instead of failing */
    bool keep_start;
    /* where it may connect (outbound.h); NULL: the public Internet only */
    const struct outbound *policy;
};

struct webget_res {
    long status; /* the HTTP status, 0 when none arrived */
    char *body;  /* malloc'd, NUL-terminated (webget_free) */
    size_t len;
    bool truncated; /* keep_start cut the body */
};

/*
 * GET req->url. Returns 0 when an HTTP answer arrived (any status: the
 * caller decides), with `res` filled; or -1 with a short sentence for the
 * site's visitor in msg[msgsize] ("timed out after 8000 ms", "could not
 * connect", "answer larger than 65536 bytes", "the address of
 * docs.example is not allowed") and `res` empty.
 */
int webget_fetch(const struct webget_req *req, struct webget_res *res,
                 char *msg, size_t msgsize) ATTR_WUR;

void webget_free(struct webget_res *res);

/* Whether `url` is an absolute http:// or https:// URL with a host. */
bool webget_is_http_url(const char *url);

#endif /* APP_WEBGET_H */
