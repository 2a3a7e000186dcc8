/*
 * jsonout.h - JSON text out, never damaged.
 *
 * jansson 2.14 ignores the result of writing an object's key (dump.c
 * calls dump_string() for keys without checking it), so when a write
 * fails - the buffer behind json_dumps() could not grow - the key's bytes
 * are silently missing and the dump goes on: the text is broken JSON,
 * and json_dumps() may still return it. Every dump of the request path
 * goes through here instead: the first failed write sticks, and the
 * whole text is refused.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSONOUT_H
#define APP_JSONOUT_H

#include "core/common.h"

struct json_t;

/* No cap of our own: the text is as large as what it writes. */
#define JSONOUT_UNBOUNDED (SIZE_MAX / 2)

/*
 * The text of `v` written with `flags` (at most `max` bytes). Returns a
 * NUL-terminated heap string (free it), with its length in `*len` (may be
 * NULL), or NULL when out of memory or over `max`.
 */
char *jsonout_dumps(const struct json_t *v, size_t flags, size_t max,
                    size_t *len);

#endif /* APP_JSONOUT_H */
