/*
 * httpio.h - one HTTP exchange, whatever carries it.
 *
 * The request path reads parameters and the body and writes the response
 * through these three operations, so the same code serves FastCGI (worker.c
 * over libfcgi streams), plain CGI (stdin/stdout/environ) and the unit
 * tests (memory buffers). Parameters are CGI meta-variables
 * (REQUEST_METHOD, CONTENT_TYPE, CONTENT_LENGTH, DOCUMENT_URI, ...).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_HTTPIO_H
#define APP_HTTPIO_H

#include "core/common.h"

struct httpio_ops {
    /* The value of a CGI parameter, or NULL. Borrowed: valid for the
     * whole exchange. */
    const char *(*param)(void *ctx, const char *name);
    /* Read up to n body bytes: the count, 0 at the end, -1 on error. */
    long (*read)(void *ctx, char *buf, size_t n);
    /* Write all n bytes: 0, or -1 when the client is gone. */
    int (*write)(void *ctx, const char *buf, size_t n);
    /* Pass on what was written so far (a streamed answer, event by
     * event): 0, or -1 when the client is gone. NULL: writes are not
     * buffered. */
    int (*flush)(void *ctx);
};

struct httpio {
    const struct httpio_ops *ops;
    void *ctx;
    bool replied; /* a response (status line) was written */
    /* The Origin every answer allows (http/cors.h decides; reply.c writes
     * it): an entry of http.cors.allowOrigins, borrowed; NULL: none. */
    const char *cors_origin;
    /* The request's id (dispatch.c): reply.c sends it as X-Request-Id,
     * the access line names it. Borrowed; NULL: none. */
    const char *request_id;
    /* What the request's work used of Gemini, for its access line:
     * budget_settle() adds each agent loop's usage (saturating). */
    int gemini_calls;
    long tokens_in;  /* prompt + tool-use prompt tokens */
    long tokens_out; /* candidates + thoughts tokens */
};

#endif /* APP_HTTPIO_H */
