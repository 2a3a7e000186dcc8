/*
 * yamlout.h - write JSON values as YAML block text.
 *
 * Used for files we generate for people and coding agents to read
 * (actions-index.yaml). Strings are quoted whenever plain style could be
 * misread (reserved words like true/null/yes/no/on/off, numbers, leading
 * indicators, ': ' or ' #', leading/trailing space, empty, control
 * characters, non-ASCII is kept as UTF-8); double-quoted style escapes
 * \" \\ and control characters. Empty objects/arrays are written `{}` /
 * `[]`. Key order is jansson's insertion order (JSON_PRESERVE_ORDER is the
 * default in jansson 2.14's iteration), so output is stable.
 * The result must parse back (libyaml / ydoc) to an equal JSON value.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_YAMLOUT_H
#define APP_YAMLOUT_H

#include "core/common.h"

struct json_t;
struct sbuf;

/* Append `v` as the value of a mapping entry `key:` indented by `indent`
 * spaces (block style, two spaces per level). Returns 0 or -1 (cap hit). */
int yamlout_entry(struct sbuf *out, int indent, const char *key,
                  const struct json_t *v);

/* Append one scalar, quoted when needed (no newline). */
int yamlout_scalar(struct sbuf *out, const struct json_t *v);

/* Append `s` as a YAML string scalar, quoted when needed (no newline). */
int yamlout_string(struct sbuf *out, const char *s);

#endif /* APP_YAMLOUT_H */
