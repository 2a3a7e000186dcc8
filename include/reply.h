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

#include "common.h"

struct httpio;
struct json_t;
struct status_error;

/* Write `status` with a JSON body of `len` bytes. `extra_headers` (may be
 * NULL) is zero or more complete "Name: value\r\n" lines. */
int reply_raw(struct httpio *io, int status, const char *extra_headers,
              const char *body, size_t len);

/* Serialise `v` compactly and write it with `status`. */
int reply_json(struct httpio *io, int status, const struct json_t *v);

/*
 * Write the error envelope for `err`. `details` (may be NULL) is an
 * object whose members are added inside "error" (e.g. path and rule of a
 * schema violation). `extra_headers` as for reply_raw (e.g. "Allow: GET").
 */
int reply_error(struct httpio *io, const struct status_error *err,
                const struct json_t *details, const char *extra_headers);

#endif /* APP_REPLY_H */
