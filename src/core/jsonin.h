/*
 * jsonin.h - strict decoding of JSON that comes from outside.
 *
 * Request bodies are decoded once, here, with every rule the HTTP API
 * promises: duplicate keys, invalid UTF-8, lone surrogates and NUL in
 * strings are refused (jansson's own rules with JSON_REJECT_DUPLICATES
 * and without JSON_ALLOW_NUL), and so is nesting deeper than the given
 * depth. Every refusal says what and where ("line 3, column 14").
 *
 * Both doors read with jscan (jscan.h), which refuses exactly what
 * json_loadb() refuses and checks every allocation it makes, so the
 * jansson values come back whole or not at all. Flags jscan does not
 * mirror fall back to json_loadb() under memlimit_parse_begin/end
 * (memlimit.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSONIN_H
#define APP_JSONIN_H

#include "core/common.h"

#include <jansson.h>

struct arena;
struct jscan_doc;
struct status_error;

/*
 * What json_loadb(buf, len, flags, jerr) returns, under the request's
 * memory bound: a new reference, or NULL, with `*oom` true when memory
 * ran out, else not JSON (`jerr` says why, as json_loadb() would). Flags
 * 0, JSON_REJECT_DUPLICATES and JSON_DECODE_ANY are read by jscan; others
 * by jansson.
 */
struct json_t *jsonin_parse(const char *buf, size_t len, size_t flags,
                            json_error_t *jerr, bool *oom);

/* jsonin_parse() of the file at `path`, read whole (at most `max_bytes`).
 * NULL with `*oom` false: unreadable, too large or not JSON (`jerr->text`
 * says which). */
struct json_t *jsonin_load_file(const char *path, size_t max_bytes,
                                size_t flags, json_error_t *jerr, bool *oom);

/*
 * Decode `buf[0..len)` (need not be NUL-terminated): an object or an
 * array, no repeated key, at most `max_depth` levels of brackets. Returns
 * a new reference, or NULL with `err` set: ST_INVALID_JSON, or
 * ST_NO_MEMORY.
 */
struct json_t *jsonin_decode(const char *buf, size_t len, int max_depth,
                             struct status_error *err);

/*
 * jsonin_decode()'s checks without building anything: `doc` gets the
 * tape, its nodes in `a`. Returns 0, or -1 with `err` set as
 * jsonin_decode() sets it. The request path scans the body once and
 * builds trees only for the parts it reads as values (jsonin_tree_except).
 */
int jsonin_scan(const char *buf, size_t len, int max_depth, struct arena *a,
                struct jscan_doc *doc, struct status_error *err) ATTR_WUR;

/*
 * The scanned document as a jansson value, less the root object's members
 * named in `keys` (NULL-terminated): their values stay spans of the
 * input, at nodes skipped[i] (JSCAN_NONE when the root is not an object
 * or has no such member). Keys are copied into `a`. A new reference, or
 * NULL with `err` set to ST_NO_MEMORY.
 */
struct json_t *jsonin_tree_except(const struct jscan_doc *d,
                                  const char *const *keys, size_t *skipped,
                                  struct arena *a, struct status_error *err);

/* The first member of the object `obj` whose name is not in `known`
 * (NULL-terminated), or NULL when there is none. Allocates nothing. */
const char *jsonin_unknown_member(const struct json_t *obj,
                                  const char *const *known);

#endif /* APP_JSONIN_H */
