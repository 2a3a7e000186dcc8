/*
 * ydoc.h - a YAML file as a small tree of nodes that remember their lines.
 *
 * Built on libyaml's event parser. Every YAML file gemini-agent reads
 * (agent.yaml, .gemini.yaml, plugin.yaml, .jay-action) goes through here, so
 * the hostile-input rules live in one place:
 *   - aliases (`*x`) and anchors (`&x`) are refused (billion-laughs);
 *   - explicit tags (`!foo`, `!!str`) are refused;
 *   - nesting deeper than BOUND_YAML_DEPTH and more than BOUND_YAML_NODES
 *     nodes are refused as soon as they are seen (libyaml 0.2.5 has no
 *     nesting limit of its own: a 100 000-deep file must fail fast). The
 *     root mapping or sequence is depth 1, a collection inside it depth 2;
 *     scalars add no depth. Every node counts, mapping keys included;
 *   - files over BOUND_YAML_BYTES, several documents in one file, and
 *     duplicate keys in a mapping are refused.
 * Nodes live in the caller's arena. Scalars keep their text and whether they
 * were plain (unquoted); typing follows the YAML 1.2 core schema.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_YDOC_H
#define APP_YDOC_H

#include "core/common.h"

struct arena;
struct diag;
struct json_t;

enum ydoc_kind { YDOC_SCALAR, YDOC_MAP, YDOC_SEQ };

struct ydoc_node {
    enum ydoc_kind kind;
    int line; /* 1-based line where the node starts */
    int col;  /* 1-based column */
    /* YDOC_SCALAR */
    const char *text; /* NUL-terminated; may contain NUL only if len says so */
    size_t len;
    bool plain; /* unquoted plain scalar: subject to null/bool/number typing */
    /* YDOC_MAP: keys[i] -> values[i]; YDOC_SEQ: values[i] */
    struct ydoc_node **keys; /* scalar nodes; NULL for sequences */
    struct ydoc_node **values;
    size_t count;
};

/*
 * Parse the file at `path`. Returns the root node (an empty document gives
 * a plain empty scalar, which ydoc_is_null() accepts), or NULL after adding
 * one `path:line: message` problem to `d`.
 */
struct ydoc_node *ydoc_load_file(const char *path, struct arena *a,
                                 struct diag *d);

/* Same for a buffer; `name` is what problems call the file. */
struct ydoc_node *ydoc_load_buffer(const char *buf, size_t len,
                                   const char *name, struct arena *a,
                                   struct diag *d);

/* The value for `key` in a mapping node, or NULL (also when `map` is NULL
 * or not a mapping). */
const struct ydoc_node *ydoc_get(const struct ydoc_node *map, const char *key);

/* Core-schema typing of a scalar. Each returns false when `n` is not a
 * scalar of that type (a quoted "true" is a string, not a bool). */
bool ydoc_is_null(const struct ydoc_node *n);
bool ydoc_bool(const struct ydoc_node *n, bool *out);
/* Decimal, 0x hex or 0o octal integers that fit in long long. */
bool ydoc_int(const struct ydoc_node *n, long long *out);
/* Any number, including integers, .inf/.nan excluded. */
bool ydoc_number(const struct ydoc_node *n, double *out);
/* A string scalar: quoted, or plain and not null/bool/number. NULL also for
 * a string with an embedded NUL (a "\0" escape), so callers never see a
 * truncated string; ydoc_to_json() keeps those whole. */
const char *ydoc_string(const struct ydoc_node *n);

/* A readable name of the node's kind or type for messages:
 * "mapping", "sequence", "string", "integer", "number", "boolean", "null". */
const char *ydoc_type_name(const struct ydoc_node *n);

/*
 * Convert a node to a new jansson value (caller owns the reference), with
 * core-schema typing: plain integers become JSON integers, other numbers
 * reals, null/bool as such, everything else strings. Returns NULL on out of
 * memory or on a scalar that JSON cannot hold (.inf, .nan), after adding a
 * problem to `d` (attributed to `file`).
 */
struct json_t *ydoc_to_json(const struct ydoc_node *n, const char *file,
                            struct diag *d);

/*
 * The line where a JSON pointer (RFC 6901, e.g.
 * "/inputSchema/properties/limit/minimum") leads from `root`: the deepest
 * node found along the path, so a pointer to a missing key yields the line
 * of its parent. A mapping entry is located by its key's line (a block
 * value starts on the next line); a sequence item by its own line.
 * Returns 0 when even the first step is missing.
 */
int ydoc_line_at(const struct ydoc_node *root, const char *pointer);

#endif /* APP_YDOC_H */
