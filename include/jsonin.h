/*
 * jsonin.h - strict decoding of JSON that comes from outside.
 *
 * Request bodies are decoded once, here, with every rule the HTTP API
 * promises: duplicate keys, invalid UTF-8, lone surrogates and NUL in
 * strings are refused (jansson's own checks, with JSON_REJECT_DUPLICATES
 * and without JSON_ALLOW_NUL), and so is nesting deeper than the given
 * depth (jansson allows 2048; a linear pre-scan enforces ours before
 * jansson's recursive parser runs). Every refusal says what and where
 * ("line 3, column 14").
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSONIN_H
#define APP_JSONIN_H

#include "common.h"

struct json_t;
struct status_error;

/*
 * Decode `buf[0..len)` (need not be NUL-terminated). Returns a new
 * reference, or NULL with `err` set to ST_INVALID_JSON.
 */
struct json_t *jsonin_decode(const char *buf, size_t len, int max_depth,
                             struct status_error *err);

#endif /* APP_JSONIN_H */
