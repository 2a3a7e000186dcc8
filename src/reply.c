/*
 * reply.c - HTTP response writing (CGI/FastCGI "Status:" header form).
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "reply.h"
#include "httpio.h"
#include "logmsg.h"
#include "sbuf.h"
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int
reply_raw(struct httpio *io, int status, const char *extra_headers,
          const char *body, size_t len)
{
    char head[1024];
    int n;

    if (io->replied) {
        /* Our bug: two answers for one request. Never corrupt the first. */
        log_err("second response for one request suppressed (status %d)",
                status);
        return -1;
    }
    io->replied = true;
    n = snprintf(head, sizeof(head),
                 "Status: %d %s\r\n"
                 "Content-Type: application/json; charset=utf-8\r\n"
                 "Content-Length: %zu\r\n"
                 "X-Content-Type-Options: nosniff\r\n"
                 "Cache-Control: no-store\r\n"
                 "%s\r\n",
                 status, status_reason(status), len,
                 extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return -1;
    if (io->ops->write(io->ctx, head, (size_t)n) != 0)
        return -1;
    return len ? io->ops->write(io->ctx, body, len) : 0;
}

int
reply_json(struct httpio *io, int status, const json_t *v)
{
    char *body = json_dumps(v, APP_JSON_FLAGS | JSON_ENCODE_ANY);
    int rc;

    if (body == NULL) {
        struct status_error err = {0};
        status_set(&err, ST_NO_MEMORY, "the response could not be encoded");
        return reply_error(io, &err, NULL, NULL);
    }
    rc = reply_raw(io, status, NULL, body, strlen(body));
    free(body);
    return rc;
}

/*
 * Replace bytes that are not well-formed UTF-8 with '?', in place, so a
 * message quoting client input can always be encoded as a JSON string.
 */
static void
scrub_utf8(char *s)
{
    unsigned char *p = (unsigned char *)s;

    while (*p) {
        size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2
                                 : (*p & 0xF0) == 0xE0 ? 3
                                 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        size_t i = 1;
        while (i < n && (p[i] & 0xC0) == 0x80)
            i++;
        if (n == 0 || i < n || (n == 2 && *p < 0xC2)) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

int
reply_error(struct httpio *io, const struct status_error *err,
            const json_t *details, const char *extra_headers)
{
    /* Fixed fallback for when even building the envelope fails. */
    static const char oom[] = "{\"error\":{\"code\":\"internal_error\","
                              "\"message\":\"out of memory\"}}";
    enum status code = err->code == ST_OK ? ST_INTERNAL : err->code;
    char msg[sizeof(err->text)];
    json_t *inner, *env;
    char *body = NULL;
    int rc;

    memcpy(msg, err->text[0] ? err->text : "internal error",
           err->text[0] ? sizeof(msg) : sizeof("internal error"));
    msg[sizeof(msg) - 1] = '\0';
    scrub_utf8(msg);
    inner = json_pack("{s:s, s:s}", "code", status_code(code), "message", msg);
    if (inner != NULL && details != NULL)
        json_object_update(inner, UNCONST(details));
    env = inner ? json_pack("{s:o}", "error", inner) : NULL;
    if (env != NULL)
        body = json_dumps(env, APP_JSON_FLAGS);
    json_decref(env);
    if (body == NULL)
        return reply_raw(io, 500, NULL, oom, sizeof(oom) - 1);
    rc = reply_raw(io, status_http(code), extra_headers, body, strlen(body));
    free(body);
    return rc;
}
