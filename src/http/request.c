/*
 * request.c - the request head and a strictly checked JSON body.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/request.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "http/httpio.h"
#include "core/jsonin.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>
#include <strings.h>

static const char *
param(struct httpio *io, const char *name)
{
    return io->ops->param(io->ctx, name);
}

/* Does `path` hold a segment that is `.` or `..`? */
static bool
has_dot_segment(const char *path)
{
    const char *seg = path;

    for (;;) {
        size_t n;
        if (*seg == '/')
            seg++;
        n = strcspn(seg, "/");
        if ((n == 1 && seg[0] == '.') ||
            (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return true;
        if (seg[n] == '\0')
            return false;
        seg += n; /* the next '/' */
    }
}

const char *
request_route(const char *path)
{
    static const char *const spaces[] = {"/_jay/", "/api/agent/"};
    const char *first = NULL;

    if (has_dot_segment(path))
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(spaces); i++) {
        const char *at = strstr(path, spaces[i]);
        if (at != NULL && (first == NULL || at < first))
            first = at;
    }
    return first != NULL ? first : path;
}

int
request_head(struct httpio *io, struct arena *a, struct request_head *head,
             struct status_error *err)
{
    const char *m = param(io, "REQUEST_METHOD");
    const char *p = param(io, "DOCUMENT_URI");

    head->method = m ? m : "";
    if (p == NULL || p[0] == '\0') {
        /* nginx sets DOCUMENT_URI (already %-decoded, no query); Apache
         * and CGI hosts give REQUEST_URI or SCRIPT_NAME + PATH_INFO. */
        const char *uri = param(io, "REQUEST_URI");
        if (uri != NULL && uri[0] != '\0') {
            size_t n = strcspn(uri, "?");
            p = arena_strndup(a, uri, n);
        } else {
            const char *sn = param(io, "SCRIPT_NAME");
            const char *pi = param(io, "PATH_INFO");
            p = arena_printf(a, "%s%s", sn ? sn : "", pi ? pi : "");
        }
        if (p == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    head->path = p;
    head->route = request_route(p);
    return 0;
}

int
request_parse_length(const char *s, size_t *out, struct status_error *err)
{
    size_t v = 0;

    if (s == NULL || s[0] == '\0') {
        *out = 0;
        return 0; /* absent: no body */
    }
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9' || c - s > 19)
            return status_set(err, ST_BAD_LENGTH,
                              "Content-Length must be a decimal number of "
                              "bytes");
        unsigned d = (unsigned)(*c - '0');
        if (v > (SIZE_MAX - d) / 10)
            return status_set(err, ST_BAD_LENGTH,
                              "Content-Length is too large to be a length");
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* `application/json`, any case, optionally followed by parameters. */
static bool
is_json_type(const char *ct)
{
    static const char want[] = "application/json";
    size_t n = sizeof(want) - 1;

    if (ct == NULL || strncasecmp(ct, want, n) != 0)
        return false;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

int
request_json_body(struct httpio *io, size_t max_bytes, struct arena *a,
                  struct jscan_doc *body, struct status_error *err)
{
    size_t len, got = 0;
    char *buf;

    if (!is_json_type(param(io, "CONTENT_TYPE")))
        return status_set(err, ST_MEDIA_TYPE,
                          "send the body as JSON with Content-Type: "
                          "application/json");
    if (request_parse_length(param(io, "CONTENT_LENGTH"), &len, err) != 0)
        return -1;
    if (len > max_bytes)
        return status_set(err, ST_TOO_LARGE,
                          "the body is %zu bytes; the limit is %zu", len,
                          max_bytes);
    buf = arena_alloc(a, len + 1);
    if (buf == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    while (got < len) {
        long n = io->ops->read(io->ctx, buf + got, len - got);
        if (n <= 0)
            return status_set(err, ST_SHORT_BODY,
                              "the body ended after %zu of %zu bytes", got,
                              len);
        got += (size_t)n;
    }
    buf[len] = '\0';
    return jsonin_scan(buf, len, BOUND_JSON_DEPTH, a, body, err);
}
