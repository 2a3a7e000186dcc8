/*
 * reply.c - HTTP response writing (CGI/FastCGI "Status:" header form).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/reply.h"
#include "http/httpio.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/*
 * The head, the one way every answer starts: once per request (a second
 * answer is our bug, and must never corrupt the first). `type` NULL: no
 * Content-Type (a 204). `len` < 0: no Content-Length (a stream, a 204).
 * `extra` is zero or more whole header lines. A request from an origin
 * http.cors lists is allowed it here, on every answer (cors.h).
 */
static int
write_head(struct httpio *io, int status, const char *type, long long len,
           const char *extra)
{
    char head[1536], length[48] = "", ctype[96] = "";
    char cors[BOUND_CORS_ORIGIN_BYTES + 64] = "", id[96] = "";
    int n;

    if (io->replied) {
        log_err("second response for one request suppressed (status %d)",
                status);
        return -1;
    }
    io->replied = true;
    if (len >= 0)
        snprintf(length, sizeof(length), "Content-Length: %lld\r\n", len);
    if (type != NULL)
        snprintf(ctype, sizeof(ctype), "Content-Type: %s\r\n", type);
    /* config.c checked the origin: scheme://host[:port], nothing else */
    if (io->cors_origin != NULL)
        snprintf(cors, sizeof(cors),
                 "Access-Control-Allow-Origin: %s\r\nVary: Origin\r\n",
                 io->cors_origin);
    /* dispatch.c made or checked it: letters, digits and ._@- */
    if (io->request_id != NULL)
        snprintf(id, sizeof(id), "X-Request-Id: %s\r\n", io->request_id);
    n = snprintf(head, sizeof(head),
                 "Status: %d %s\r\n"
                 "%s%s%s%s"
                 "X-Content-Type-Options: nosniff\r\n"
                 "Cache-Control: no-store\r\n"
                 "%s\r\n",
                 status, status_reason(status), ctype, length, cors, id,
                 extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    return io->ops->write(io->ctx, head, (size_t)n);
}

int
reply_raw(struct httpio *io, int status, const char *extra_headers,
          const char *body, size_t len)
{
    if (write_head(io, status, "application/json; charset=utf-8",
                   (long long)len, extra_headers) != 0)
        return -1;
    return len ? io->ops->write(io->ctx, body, len) : 0;
}

int
reply_stream_head(struct httpio *io, const char *content_type)
{
    return write_head(io, 200, content_type, -1, "X-Accel-Buffering: no\r\n");
}

/*
 * The methods are those of the routing table (dispatch.c); the headers
 * those a page sends and the routes read: Content-Type (the JSON
 * bodies), Authorization (a Bearer token, auth.c) and Accept (a stream,
 * ndjson.c). 600 s: browsers cap the cache lower or near it anyway.
 */
int
reply_preflight(struct httpio *io)
{
    return write_head(io, 204, NULL, -1,
                      "Access-Control-Allow-Methods: GET, POST\r\n"
                      "Access-Control-Allow-Headers: Content-Type, "
                      "Authorization, Accept\r\n"
                      "Access-Control-Max-Age: 600\r\n");
}

int
reply_json(struct httpio *io, int status, const json_t *v)
{
    size_t len;
    char *body = jsonout_dumps(v, APP_JSON_FLAGS | JSON_ENCODE_ANY,
                               JSONOUT_UNBOUNDED, &len);
    int rc;

    if (body == NULL) {
        struct status_error err = {0};
        status_set(&err, ST_NO_MEMORY, "the response could not be encoded");
        return reply_error(io, &err, NULL);
    }
    rc = reply_raw(io, status, NULL, body, len);
    free(body);
    return rc;
}

/*
 * The header lines of an error answer, built here only. `allow` comes from
 * the routing table; a method is a token of capitals, so anything else is
 * our bug and stays out of the head rather than splitting it.
 */
static void
error_headers(const struct status_error *err, const char *allow, char *buf,
              size_t size)
{
    int n = 0, m;

    if (allow != NULL && allow[0] != '\0' &&
        allow[strspn(allow, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")] == '\0')
        n = snprintf(buf, size, "Allow: %s\r\n", allow);
    else if (allow != NULL)
        log_err("a bad Allow value was left out of a %d answer",
                status_http(err->code));
    if (n < 0 || (size_t)n >= size)
        n = 0;
    buf[n] = '\0';
    if (err->retry_after_s > 0) {
        m = snprintf(buf + n, size - (size_t)n, "Retry-After: %ld\r\n",
                     err->retry_after_s);
        if (m < 0 || (size_t)m >= size - (size_t)n)
            buf[n] = '\0';
    }
}

int
reply_error(struct httpio *io, const struct status_error *err,
            const char *allow)
{
    /* Fixed fallback for when even building the envelope fails. */
    static const char oom[] = "{\"error\":{\"code\":\"internal_error\","
                              "\"message\":\"out of memory\"}}";
    enum status code = err->code == ST_OK ? ST_INTERNAL : err->code;
    json_t *inner = status_json(err), *env;
    char headers[128];
    char *body = NULL;
    size_t len = 0;
    int rc;

    env = inner ? json_pack("{s:o}", "error", inner) : NULL;
    if (env != NULL)
        body = jsonout_dumps(env, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len);
    json_decref(env);
    if (body == NULL)
        return reply_raw(io, 500, NULL, oom, sizeof(oom) - 1);
    error_headers(err, allow, headers, sizeof(headers));
    rc = reply_raw(io, status_http(code), headers[0] ? headers : NULL, body,
                   len);
    free(body);
    return rc;
}
