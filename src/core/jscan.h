/*
 * jscan.h - a strict JSON scanner that records a tape instead of a tree.
 *
 * jscan_parse() accepts exactly what jansson 2.14's json_loadb() accepts
 * with JSON_REJECT_DUPLICATES (and, with flags, JSON_DECODE_ANY or no
 * duplicate check): every byte well-formed UTF-8, strings without control
 * characters, only the escapes JSON has, UTF-16 surrogates in pairs, no
 * \u0000, integers that fit a long long, reals that do not overflow, no
 * repeated key. A refusal says what and where as jansson does ("line 1,
 * column 9: ':' expected near '1'"). It runs at a few nanoseconds a byte
 * (strings are scanned eight bytes at a time) and allocates only the tape,
 * from the caller's arena.
 *
 * The tape is an array of nodes in document order: a container is
 * followed by its children (an object's by key, value, key, value...), and
 * each node knows its span in the input, so a caller may copy a part of
 * the input out instead of building jansson values for it. A node marked
 * JSCAN_CANON is already written as jansson would write it (compact, reals
 * at 15 digits), so jscan_write() copies it whole.
 *
 * jscan_to_json() builds the jansson value json_loadb() would have built,
 * for the parts a caller wants as a tree.
 *
 * Not here: the request path's rules beyond syntax (jsonin.h), writing
 * values we build (jsonout.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSCAN_H
#define APP_JSCAN_H

#include "core/common.h"
#include "core/bounds.h" /* BOUND_JSCAN_MESSAGE */

struct arena;
struct json_t;
struct sbuf;
struct status_error;

enum jscan_type {
    JSCAN_NULL,
    JSCAN_FALSE,
    JSCAN_TRUE,
    JSCAN_INTEGER,
    JSCAN_REAL,
    JSCAN_STRING,
    JSCAN_ARRAY,
    JSCAN_OBJECT,
};

enum jscan_parse_flags {
    /* The top level may be any value (JSON_DECODE_ANY); without it, an
     * object or an array (jansson's default). */
    JSCAN_ANY = 1 << 0,
    /* A key may repeat (json_loadb() without JSON_REJECT_DUPLICATES): the
     * object keeps the key at its first place with its last value, and
     * is marked JSCAN_DUPKEYS. */
    JSCAN_DUPLICATES_OK = 1 << 1,
    /* Count a scalar as a level too, as jansson's own depth limit does:
     * with max_depth 2048 the limit is exactly json_loadb()'s. Without
     * it, max_depth counts brackets (jsonin's rule for request bodies). */
    JSCAN_DEPTH_SCALARS = 1 << 2,
};

enum jscan_node_flags {
    /* A string (or key) with backslash escapes: its bytes must be decoded. */
    JSCAN_ESCAPED = 1 << 0,
    /* The span is byte for byte what json_dumps(value, APP_JSON_FLAGS |
     * JSON_ENCODE_ANY) writes: no whitespace inside, escapes only as
     * jansson writes them, no "-0", reals only as "%.15g" writes them,
     * and the same of every child. */
    JSCAN_CANON = 1 << 1,
    /* An object in which a key repeats (JSCAN_DUPLICATES_OK only). */
    JSCAN_DUPKEYS = 1 << 2,
};

/*
 * One value. `off` and `len` are its span in the input: a string's runs
 * from its opening to its closing quote, a container's from bracket to
 * bracket, a number's or literal's is its token. The other fields are
 * read through the functions below.
 */
struct jscan_node {
    uint32_t off, len;
    /* containers: x = index one past the subtree, y = children (members,
     * for objects); strings: x = decoded bytes; integers and reals: the
     * value's 64 bits, low half in x */
    uint32_t x, y;
    uint8_t type;  /* enum jscan_type */
    uint8_t flags; /* enum jscan_node_flags */
};

/* What kind of refusal, in jansson's terms (json_error_code). */
enum jscan_error {
    JSCAN_E_NONE,
    JSCAN_E_SYNTAX,    /* json_error_invalid_syntax */
    JSCAN_E_PREMATURE, /* json_error_premature_end_of_input */
    JSCAN_E_UTF8,      /* json_error_invalid_utf8 */
    JSCAN_E_OVERFLOW,  /* json_error_numeric_overflow */
    JSCAN_E_NUL,       /* json_error_null_character: \u0000 in a string */
    JSCAN_E_NUL_KEY,   /* json_error_null_byte_in_key */
    JSCAN_E_DUPLICATE, /* json_error_duplicate_key */
    JSCAN_E_DEPTH,     /* json_error_stack_overflow */
    JSCAN_E_END,       /* json_error_end_of_input_expected */
    JSCAN_E_MEMORY,    /* json_error_out_of_memory */
    JSCAN_E_TOO_LARGE, /* past BOUND_JSCAN_BYTES */
};

/* Where and why a parse failed: json_error_t's fields, as jansson fills
 * them for the same input. */
struct jscan_fail {
    enum jscan_error code;
    int line;      /* 1-based */
    int column;    /* characters (not bytes) read on that line */
    size_t offset; /* bytes read */
    char what[BOUND_JSCAN_MESSAGE]; /* e.g. "':' expected near '1'" */
};

struct jscan_doc {
    const char *buf; /* the input (borrowed: it must outlive the doc) */
    size_t len;
    struct jscan_node *nodes; /* the tape, in the arena; the root is 0 */
    size_t count;
    unsigned flags;         /* the parse's enum jscan_parse_flags */
    struct jscan_fail fail; /* set when the parse failed */
};

/* 0 is the root, which is nobody's child: the navigation below returns
 * it for "no such node". */
#define JSCAN_NONE ((size_t)0)

/*
 * Validate buf[0..len) (it need not be NUL-terminated) and record its
 * tape in `doc`, with the nodes allocated from `a`. Nesting deeper than
 * `max_depth` containers (at most BOUND_JSCAN_DEPTH) is refused with
 * "nesting deeper than N levels" at the offending bracket, or with
 * JSCAN_DEPTH_SCALARS as jansson refuses it.
 *
 * Returns 0, or -1 with `doc->fail` set and `err` set: ST_INVALID_JSON
 * ("invalid JSON at line L, column C: <what>"; empty input says "the
 * request body is empty; send a JSON value"), ST_NO_MEMORY, or
 * ST_TOO_LARGE past BOUND_JSCAN_BYTES. `doc` borrows `buf` and the arena.
 */
int jscan_parse(const char *buf, size_t len, unsigned flags, int max_depth,
                struct arena *a, struct jscan_doc *doc,
                struct status_error *err) ATTR_WUR;

/* --- navigation (node indexes; valid while the doc is) ------------------- */

static inline enum jscan_type
jscan_type(const struct jscan_doc *d, size_t i)
{
    return (enum jscan_type)d->nodes[i].type;
}

static inline unsigned
jscan_flags(const struct jscan_doc *d, size_t i)
{
    return d->nodes[i].flags;
}

/* The index one past node i's subtree: its next sibling, if it has one. */
static inline size_t
jscan_end(const struct jscan_doc *d, size_t i)
{
    return d->nodes[i].type >= JSCAN_ARRAY ? d->nodes[i].x : i + 1;
}

/* The first child of a container (an object's first key), or JSCAN_NONE
 * for an empty container or a scalar. */
size_t jscan_child(const struct jscan_doc *d, size_t i);

/* The child of `parent` after `i` (for an object: key, value, key...),
 * or JSCAN_NONE after the last. */
size_t jscan_next(const struct jscan_doc *d, size_t parent, size_t i);

/* Elements of an array, members of an object (with JSCAN_DUPKEYS, as
 * written: a repeated key counts each time); 0 for a scalar. */
size_t jscan_count(const struct jscan_doc *d, size_t i);

/* The value of the member named `key` of object `obj` (compared with the
 * decoded key: "caf\u00e9" finds "café"), or JSCAN_NONE. When the key
 * repeats, the last one, as jansson keeps it. */
size_t jscan_member(const struct jscan_doc *d, size_t obj, const char *key);

/*
 * The decoded string of node i (a string or a key), NUL-terminated, copied
 * into `a`; its length in `*len` (may be NULL). NULL when node i is not a
 * string, or out of memory.
 */
const char *jscan_string(const struct jscan_doc *d, size_t i, struct arena *a,
                         size_t *len) ATTR_WUR;

/* Is node i a string (or key) whose decoded bytes are `s`? Allocates
 * nothing. */
bool jscan_string_is(const struct jscan_doc *d, size_t i, const char *s);

/* The value of an integer node, or 0 for any other node. */
long long jscan_integer(const struct jscan_doc *d, size_t i);

/* The value of a real node, or 0.0 for any other node. */
double jscan_real(const struct jscan_doc *d, size_t i);

/* --- out ---------------------------------------------------------------- */

/*
 * The subtree at node i as the jansson value json_loadb() built for it
 * (integers stay integers, "-0" is the integer 0, a repeated key keeps
 * its first place and its last value). Returns a new reference, or NULL
 * with `err` (may be NULL) set to ST_NO_MEMORY; nothing leaks.
 */
struct json_t *jscan_to_json(const struct jscan_doc *d, size_t i,
                             struct status_error *err) ATTR_WUR;

/*
 * Append the subtree at node i as json_dumps(its value, APP_JSON_FLAGS |
 * JSON_ENCODE_ANY) writes it: spans marked JSCAN_CANON are copied, the
 * rest is written again. Returns 0, or -1 (out of memory or over the
 * sbuf's cap) with `out` as it was.
 */
int jscan_write(const struct jscan_doc *d, size_t i, struct sbuf *out) ATTR_WUR;

#endif /* APP_JSCAN_H */
