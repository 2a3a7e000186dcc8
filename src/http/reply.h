/*
 * reply.h - the only code that writes HTTP responses.
 *
 * Every JSON answer carries `Content-Type: application/json;
 * charset=utf-8`, `X-Content-Type-Options: nosniff` and `Cache-Control:
 * no-store`. Every error is `{"error":{"code":..., "message":...}}` (see
 * status_json()) with the HTTP status that status.c maps the code to.
 *
 * A client that went away is not an error of ours: writes then fail with
 * -1 and the caller simply finishes the request.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_REPLY_H
#define APP_REPLY_H

#include "core/common.h"

struct httpio;
struct json_t;
struct status_error;

/* Write `status` with a JSON body of `len` bytes. `extra_headers` (may be
 * NULL) is zero or more complete "Name: value\r\n" lines; only reply.c
 * builds them, so header text never comes from outside this module. */
int reply_raw(struct httpio *io, int status, const char *extra_headers,
              const char *body, size_t len);

/* Start a streamed answer: 200 with `content_type`, no length, and
 * `X-Accel-Buffering: no` so nginx passes each write on at once. The
 * body follows with io->ops->write (and flush). */
int reply_stream_head(struct httpio *io, const char *content_type);

/* Answer a CORS preflight (cors.h): 204, no body, what a page may send. */
int reply_preflight(struct httpio *io);

/* Serialise `v` compactly and write it with `status`. */
int reply_json(struct httpio *io, int status, const struct json_t *v);

/*
 * Write the error envelope `{"error": status_json(err)}` with the HTTP
 * status of err->code. Headers come from the error and the route: a
 * `Retry-After: N` line when err->retry_after_s > 0, and `Allow: <allow>`
 * when `allow` (the method the path takes, for a 405) is not NULL.
 */
int reply_error(struct httpio *io, const struct status_error *err,
                const char *allow);

#endif /* APP_REPLY_H */
