/*
 * ydoc.c - YAML text to a tree of line-numbered nodes, and core-schema typing.
 *
 * The loader drives libyaml's event parser with an explicit stack of open
 * collections, so hostile input (aliases, anchors, tags, deep nesting, too
 * many nodes, duplicate keys) is refused at the event that shows it, before
 * libyaml reads much further. It does not validate shapes: callers check
 * what keys they expect with ydoc_get() and the typed accessors.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/ydoc.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* --- loading -------------------------------------------------------------- */

struct ydoc_frame {
    struct ydoc_node *node; /* the open mapping or sequence */
    struct ydoc_node *key;  /* a mapping's key still waiting for its value */
    size_t cap;             /* room in node->values (and node->keys) */
};

struct ydoc_loader {
    struct arena *a;
    struct diag *d;
    const char *name;
    struct ydoc_frame stack[BOUND_YAML_DEPTH];
    int depth;
    size_t nodes;
    int documents;
    struct ydoc_node *root;
};

static int
mark_line(const yaml_mark_t *m)
{
    /* libyaml counts from 0; input is at most BOUND_YAML_BYTES, so it fits */
    return (int)m->line + 1;
}

static struct ydoc_node *
new_node(struct ydoc_loader *ld, enum ydoc_kind kind, const yaml_mark_t *m)
{
    struct ydoc_node *n;

    if (++ld->nodes > BOUND_YAML_NODES) {
        diag_add(ld->d, ld->name, mark_line(m), "more than %d nodes",
                 BOUND_YAML_NODES);
        return NULL;
    }
    n = arena_calloc(ld->a, 1, sizeof(*n));
    if (n == NULL) {
        diag_add(ld->d, ld->name, mark_line(m), "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->line = mark_line(m);
    n->col = (int)m->column + 1;
    return n;
}

static bool
same_text(const struct ydoc_node *x, const struct ydoc_node *y)
{
    return x->len == y->len && memcmp(x->text, y->text, x->len) == 0;
}

/* Arena memory is not freed piecemeal: doubling keeps the waste under the
 * final size of the arrays. */
static bool
grow(struct ydoc_loader *ld, struct ydoc_frame *f)
{
    struct ydoc_node *n = f->node;
    size_t cap = f->cap ? f->cap * 2 : 8;
    struct ydoc_node **values = arena_calloc(ld->a, cap, sizeof(*values));
    struct ydoc_node **keys = NULL;

    if (n->kind == YDOC_MAP)
        keys = arena_calloc(ld->a, cap, sizeof(*keys));
    if (values == NULL || (n->kind == YDOC_MAP && keys == NULL)) {
        diag_add(ld->d, ld->name, n->line, "out of memory");
        return false;
    }
    if (n->count > 0) {
        memcpy(values, n->values, n->count * sizeof(*values));
        if (keys != NULL)
            memcpy(keys, n->keys, n->count * sizeof(*keys));
    }
    n->values = values;
    n->keys = keys;
    f->cap = cap;
    return true;
}

/* Attach a new node to the innermost open collection, or make it the root. */
static bool
attach(struct ydoc_loader *ld, struct ydoc_node *n)
{
    struct ydoc_frame *f;
    struct ydoc_node *c;

    if (ld->depth == 0) {
        ld->root = n;
        return true;
    }
    f = &ld->stack[ld->depth - 1];
    c = f->node;
    if (c->kind == YDOC_MAP && f->key == NULL) {
        if (n->kind != YDOC_SCALAR) {
            diag_add(ld->d, ld->name, n->line, "mapping keys must be scalars");
            return false;
        }
        /* Quadratic, but a mapping holds at most BOUND_YAML_NODES / 2 keys
         * (about 0.15 s at worst) and real files have tens. */
        for (size_t i = 0; i < c->count; i++) {
            if (same_text(c->keys[i], n)) {
                diag_add(ld->d, ld->name, n->line, "duplicate key '%s'",
                         n->text);
                return false;
            }
        }
        f->key = n;
        return true;
    }
    if (c->count == f->cap && !grow(ld, f))
        return false;
    if (c->kind == YDOC_MAP)
        c->keys[c->count] = f->key;
    c->values[c->count++] = n;
    f->key = NULL;
    return true;
}

/*
 * libyaml sets a tag only when the text has one (`!foo`, `!!str`, or the
 * bare `!`, which its implicit flags report as implicit), so a tag that is
 * present was written explicitly.
 */
static bool
check_properties(struct ydoc_loader *ld, const yaml_event_t *ev,
                 const yaml_char_t *anchor, const yaml_char_t *tag)
{
    if (anchor != NULL) {
        diag_add(ld->d, ld->name, mark_line(&ev->start_mark),
                 "anchors are not allowed ('&%s')", (const char *)anchor);
        return false;
    }
    if (tag != NULL) {
        diag_add(ld->d, ld->name, mark_line(&ev->start_mark),
                 "explicit tags are not allowed ('%s')", (const char *)tag);
        return false;
    }
    return true;
}

static bool
on_scalar(struct ydoc_loader *ld, const yaml_event_t *ev)
{
    struct ydoc_node *n = new_node(ld, YDOC_SCALAR, &ev->start_mark);

    if (n == NULL)
        return false;
    /* the length, not strlen: a "\0" escape puts a NUL inside the text */
    n->len = ev->data.scalar.length;
    n->text = arena_strndup(ld->a, (const char *)ev->data.scalar.value, n->len);
    if (n->text == NULL) {
        diag_add(ld->d, ld->name, n->line, "out of memory");
        return false;
    }
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    return attach(ld, n);
}

/* The depth test comes first: a deep file stops at the first level past
 * the bound, before libyaml scans any further. */
static bool
on_open(struct ydoc_loader *ld, const yaml_event_t *ev, enum ydoc_kind kind)
{
    struct ydoc_node *n;

    if (ld->depth == BOUND_YAML_DEPTH) {
        diag_add(ld->d, ld->name, mark_line(&ev->start_mark),
                 "nesting deeper than %d levels", BOUND_YAML_DEPTH);
        return false;
    }
    n = new_node(ld, kind, &ev->start_mark);
    if (n == NULL || !attach(ld, n))
        return false;
    ld->stack[ld->depth++] = (struct ydoc_frame){.node = n};
    return true;
}

static bool
on_event(struct ydoc_loader *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (ld->documents++ > 0) {
            diag_add(ld->d, ld->name, mark_line(&ev->start_mark),
                     "only one document is allowed per file");
            return false;
        }
        return true;
    case YAML_ALIAS_EVENT:
        diag_add(ld->d, ld->name, mark_line(&ev->start_mark),
                 "aliases are not allowed ('*%s')",
                 (const char *)ev->data.alias.anchor);
        return false;
    case YAML_SCALAR_EVENT:
        return check_properties(ld, ev, ev->data.scalar.anchor,
                                ev->data.scalar.tag) &&
               on_scalar(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
        return check_properties(ld, ev, ev->data.sequence_start.anchor,
                                ev->data.sequence_start.tag) &&
               on_open(ld, ev, YDOC_SEQ);
    case YAML_MAPPING_START_EVENT:
        return check_properties(ld, ev, ev->data.mapping_start.anchor,
                                ev->data.mapping_start.tag) &&
               on_open(ld, ev, YDOC_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        ld->depth--;
        return true;
    default: /* stream start and end, document end */
        return true;
    }
}

static void
report_parse_error(struct ydoc_loader *ld, const yaml_parser_t *p)
{
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        diag_add(ld->d, ld->name, 0, "out of memory");
        break;
    case YAML_READER_ERROR:
        /* the reader runs ahead of the scanner: only the offset is known */
        diag_add(ld->d, ld->name, 0, "invalid text at byte %zu: %s",
                 p->problem_offset, p->problem);
        break;
    default:
        diag_add(ld->d, ld->name, mark_line(&p->problem_mark),
                 "yaml syntax error: %s", p->problem);
        break;
    }
}

struct ydoc_node *
ydoc_load_buffer(const char *buf, size_t len, const char *name, struct arena *a,
                 struct diag *d)
{
    struct ydoc_loader ld = {.a = a, .d = d, .name = name};
    struct ydoc_node *root = NULL;
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;

    if (len > BOUND_YAML_BYTES) {
        diag_add(d, name, 0, "file is larger than %u bytes", BOUND_YAML_BYTES);
        return NULL;
    }
    if (!yaml_parser_initialize(&parser)) {
        diag_add(d, name, 0, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    while (!done) {
        bool ok;

        if (!yaml_parser_parse(&parser, &ev)) {
            report_parse_error(&ld, &parser);
            goto out;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        ok = on_event(&ld, &ev);
        yaml_event_delete(&ev);
        if (!ok)
            goto out;
    }
    if (ld.root == NULL) {
        /* no document at all (empty file, only comments): a null root */
        static const yaml_mark_t start = {0, 0, 0};
        ld.root = new_node(&ld, YDOC_SCALAR, &start);
        if (ld.root == NULL)
            goto out;
        ld.root->text = "";
        ld.root->plain = true;
    }
    root = ld.root;
out:
    yaml_parser_delete(&parser);
    return root;
}

struct ydoc_node *
ydoc_load_file(const char *path, struct arena *a, struct diag *d)
{
    struct ydoc_node *root = NULL;
    char *buf = NULL;
    size_t len;
    struct stat st;
    /* O_NONBLOCK: a FIFO put in a file's place must not hang the start
     * waiting for a writer; it is refused below */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    FILE *f;

    if (fd < 0) {
        diag_add(d, path, 0, "cannot open file: %s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_add(d, path, 0, "cannot read file: %s",
                 fstat(fd, &st) != 0   ? strerror(errno)
                 : S_ISDIR(st.st_mode) ? strerror(EISDIR)
                                       : "not a regular file");
        close(fd);
        return NULL;
    }
    f = fdopen(fd, "r");
    if (f == NULL) {
        diag_add(d, path, 0, "cannot open file: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    /* One byte over the bound tells a file that is too large from one that
     * is exactly at it; load time only, and freed right away. */
    buf = malloc(BOUND_YAML_BYTES + 1);
    if (buf == NULL) {
        diag_add(d, path, 0, "out of memory");
        goto out;
    }
    len = fread(buf, 1, BOUND_YAML_BYTES + 1, f);
    if (ferror(f)) {
        diag_add(d, path, 0, "cannot read file: %s", strerror(errno));
        goto out;
    }
    root = ydoc_load_buffer(buf, len, path, a, d);
out:
    free(buf);
    fclose(f);
    return root;
}

/* --- lookup --------------------------------------------------------------- */

const struct ydoc_node *
ydoc_get(const struct ydoc_node *map, const char *key)
{
    size_t len;

    if (map == NULL || map->kind != YDOC_MAP)
        return NULL;
    len = strlen(key);
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i];
        if (k->len == len && memcmp(k->text, key, len) == 0)
            return map->values[i];
    }
    return NULL;
}

/* --- core-schema typing --------------------------------------------------- */

enum ydoc_type {
    YT_STRING,
    YT_NULL,
    YT_BOOL,
    YT_INT,       /* fits in long long */
    YT_NUMBER,    /* finite, including integers too large for long long */
    YT_NONFINITE, /* .inf, .nan, or a float that overflows a double */
};

struct ydoc_value {
    bool b;
    long long i;
    double f;
};

static const char *const null_words[] = {"~", "null", "Null", "NULL"};
static const char *const true_words[] = {"true", "True", "TRUE"};
static const char *const false_words[] = {"false", "False", "FALSE"};
static const char *const nonfinite_words[] = {
    ".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf", "+.INF",
    "-.inf", "-.Inf", "-.INF", ".nan",  ".NaN",  ".NAN",
};

static bool
is_word(const char *s, size_t len, const char *const *words, size_t nwords)
{
    for (size_t i = 0; i < nwords; i++)
        if (strlen(words[i]) == len && memcmp(words[i], s, len) == 0)
            return true;
    return false;
}

static unsigned
digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return (unsigned)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (unsigned)(c - 'a') + 10;
    if (c >= 'A' && c <= 'F')
        return (unsigned)(c - 'A') + 10;
    return 99; /* not a digit in any base we use */
}

/* How many base-`base` digits s[0..len) starts with. */
static size_t
span_digits(const char *s, size_t len, unsigned base)
{
    size_t i = 0;

    while (i < len && digit_value(s[i]) < base)
        i++;
    return i;
}

/* The digits after `0x` or `0o`. Too large for long long is still a
 * number, kept as a double. */
static enum ydoc_type
radix_int(const char *s, size_t len, unsigned base, struct ydoc_value *v)
{
    unsigned long long u = 0;
    bool fits = true;

    if (len == 0 || span_digits(s, len, base) != len)
        return YT_STRING;
    v->f = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned dv = digit_value(s[i]);
        if (u > ((unsigned long long)LLONG_MAX - dv) / base)
            fits = false;
        else
            u = u * base + dv;
        v->f = v->f * base + dv;
    }
    if (!fits)
        return YT_NUMBER;
    v->i = (long long)u;
    return YT_INT;
}

/*
 * [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, the core schema's
 * float, which also covers its decimal int [-+]?[0-9]+ (*integral).
 */
static bool
is_decimal(const char *s, size_t len, bool *integral)
{
    size_t i = 0, n;

    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    n = span_digits(s + i, len - i, 10);
    i += n;
    *integral = n > 0 && i == len;
    if (i < len && s[i] == '.') {
        size_t frac = span_digits(s + i + 1, len - i - 1, 10);
        if (n == 0 && frac == 0)
            return false;
        i += 1 + frac;
    } else if (n == 0) {
        return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+'))
            i++;
        n = span_digits(s + i, len - i, 10);
        if (n == 0)
            return false;
        i += n;
    }
    return i == len;
}

/* The core-schema type of a scalar node, and its value in `v`. */
static enum ydoc_type
classify(const struct ydoc_node *n, struct ydoc_value *v)
{
    const char *s = n->text;
    size_t len = n->len;
    bool integral;

    if (!n->plain)
        return YT_STRING;
    if (len == 0 || is_word(s, len, null_words, ARRAY_SIZE(null_words)))
        return YT_NULL;
    if (is_word(s, len, true_words, ARRAY_SIZE(true_words))) {
        v->b = true;
        return YT_BOOL;
    }
    if (is_word(s, len, false_words, ARRAY_SIZE(false_words))) {
        v->b = false;
        return YT_BOOL;
    }
    if (is_word(s, len, nonfinite_words, ARRAY_SIZE(nonfinite_words)))
        return YT_NONFINITE;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o'))
        return radix_int(s + 2, len - 2, s[1] == 'x' ? 16 : 8, v);
    if (!is_decimal(s, len, &integral))
        return YT_STRING;
    /* the text was matched up to len and ends in NUL: strto* stop there */
    if (integral) {
        errno = 0;
        v->i = strtoll(s, NULL, 10);
        if (errno == 0)
            return YT_INT;
    }
    v->f = strtod(s, NULL);
    return isfinite(v->f) ? YT_NUMBER : YT_NONFINITE;
}

static bool
scalar_type(const struct ydoc_node *n, enum ydoc_type want,
            struct ydoc_value *v)
{
    return n != NULL && n->kind == YDOC_SCALAR && classify(n, v) == want;
}

bool
ydoc_is_null(const struct ydoc_node *n)
{
    struct ydoc_value v;

    return scalar_type(n, YT_NULL, &v);
}

bool
ydoc_bool(const struct ydoc_node *n, bool *out)
{
    struct ydoc_value v;

    if (!scalar_type(n, YT_BOOL, &v))
        return false;
    *out = v.b;
    return true;
}

bool
ydoc_int(const struct ydoc_node *n, long long *out)
{
    struct ydoc_value v;

    if (!scalar_type(n, YT_INT, &v))
        return false;
    *out = v.i;
    return true;
}

bool
ydoc_number(const struct ydoc_node *n, double *out)
{
    struct ydoc_value v;

    if (n == NULL || n->kind != YDOC_SCALAR)
        return false;
    switch (classify(n, &v)) {
    case YT_INT:
        *out = (double)v.i;
        return true;
    case YT_NUMBER:
        *out = v.f;
        return true;
    default:
        return false;
    }
}

const char *
ydoc_string(const struct ydoc_node *n)
{
    struct ydoc_value v;

    if (!scalar_type(n, YT_STRING, &v) || memchr(n->text, '\0', n->len))
        return NULL;
    return n->text;
}

const char *
ydoc_type_name(const struct ydoc_node *n)
{
    struct ydoc_value v;

    if (n->kind == YDOC_MAP)
        return "mapping";
    if (n->kind == YDOC_SEQ)
        return "sequence";
    switch (classify(n, &v)) {
    case YT_NULL:
        return "null";
    case YT_BOOL:
        return "boolean";
    case YT_INT:
        return "integer";
    case YT_NUMBER:
    case YT_NONFINITE:
        return "number";
    default:
        return "string";
    }
}

/* --- conversion to JSON --------------------------------------------------- */

static json_t *
scalar_to_json(const struct ydoc_node *n, const char *file, struct diag *d)
{
    struct ydoc_value v;
    json_t *j = NULL;

    switch (classify(n, &v)) {
    case YT_NULL:
        return json_null();
    case YT_BOOL:
        return json_boolean(v.b);
    case YT_INT:
        j = json_integer(v.i);
        break;
    case YT_NUMBER:
        j = json_real(v.f);
        break;
    case YT_NONFINITE:
        diag_add(d, file, n->line, "'%s' is not a finite number", n->text);
        return NULL;
    case YT_STRING:
        j = json_stringn(n->text, n->len);
        break;
    }
    if (j == NULL)
        diag_add(d, file, n->line, "cannot convert %s to json",
                 ydoc_type_name(n));
    return j;
}

/* Recursion is bounded by BOUND_YAML_DEPTH, which the loader enforces. */
json_t *
ydoc_to_json(const struct ydoc_node *n, const char *file, struct diag *d)
{
    json_t *j;

    if (n->kind == YDOC_SCALAR)
        return scalar_to_json(n, file, d);
    j = n->kind == YDOC_MAP ? json_object() : json_array();
    if (j == NULL)
        goto cannot_convert;
    for (size_t i = 0; i < n->count; i++) {
        json_t *item = ydoc_to_json(n->values[i], file, d);
        int rc;

        if (item == NULL)
            goto out; /* the problem is already recorded */
        /* both *_new calls take `item`, even when they fail */
        if (n->kind == YDOC_MAP)
            rc = json_object_setn_new(j, n->keys[i]->text, n->keys[i]->len,
                                      item);
        else
            rc = json_array_append_new(j, item);
        if (rc != 0)
            goto cannot_convert; /* out of memory, or a key not UTF-8 */
    }
    return j;
cannot_convert:
    diag_add(d, file, n->line, "cannot convert %s to json", ydoc_type_name(n));
out:
    json_decref(j);
    return NULL;
}

/* --- JSON pointers -------------------------------------------------------- */

/* Whether the pointer segment seg[0..n), with ~1 and ~0 decoded, is the
 * text of `key`. */
static bool
segment_is_key(const char *seg, size_t n, const struct ydoc_node *key)
{
    size_t i = 0, k = 0;

    while (i < n && k < key->len) {
        char c = seg[i++];
        if (c == '~') {
            if (i == n || (seg[i] != '0' && seg[i] != '1'))
                return false;
            c = seg[i++] == '0' ? '~' : '/';
        }
        if (c != key->text[k++])
            return false;
    }
    return i == n && k == key->len;
}

/* The child a pointer segment names, or NULL. Sequence indexes are decimal
 * without leading zeros, as RFC 6901 requires. */
static const struct ydoc_node *
child_at(const struct ydoc_node *n, const char *seg, size_t len)
{
    size_t idx = 0;

    if (n->kind == YDOC_MAP) {
        for (size_t i = 0; i < n->count; i++)
            if (segment_is_key(seg, len, n->keys[i]))
                return n->values[i];
        return NULL;
    }
    if (n->kind != YDOC_SEQ || len == 0 || span_digits(seg, len, 10) != len ||
        (len > 1 && seg[0] == '0'))
        return NULL;
    for (size_t i = 0; i < len && idx < n->count; i++)
        idx = idx * 10 + (size_t)(seg[i] - '0');
    return idx < n->count ? n->values[idx] : NULL;
}

int
ydoc_line_at(const struct ydoc_node *root, const char *pointer)
{
    const struct ydoc_node *n = root;
    const char *p = pointer;
    int line;

    if (root == NULL)
        return 0;
    line = root->line;
    while (*p == '/') {
        size_t len = strcspn(p + 1, "/");
        const struct ydoc_node *next = child_at(n, p + 1, len);

        if (next == NULL)
            break;
        /* A mapping entry is where its key is written: a block value
         * starts on the line below, where a person would not look. */
        line = next->line;
        for (size_t i = 0; n->kind == YDOC_MAP && i < n->count; i++)
            if (n->values[i] == next)
                line = n->keys[i]->line;
        n = next;
        p += 1 + len;
    }
    if (*p != '\0' && n == root)
        return 0; /* the first step is missing, or not a pointer at all */
    return line;
}
