/*
 * unit_memio.h - an HTTP exchange in memory (httpio.h), for the suites
 * that run the request path without a web server.
 *
 * Writes go to a buffer the caller provides and never allocate, so a
 * suite that fails allocations one by one sees only the request path's.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_MEMIO_H
#define APP_UNIT_MEMIO_H

#include "core/common.h"
#include "http/httpio.h"

struct unit_memio {
    const char *const *params; /* name, value, name, value, ..., NULL */
    const char *body;
    size_t body_len, pos;
    size_t chunk; /* most bytes one read hands out; 0: as many as asked */
    char *out;    /* the caller's buffer: head and body as written */
    size_t out_len, out_cap;
};

extern const struct httpio_ops unit_memio_ops;

#endif /* APP_UNIT_MEMIO_H */
