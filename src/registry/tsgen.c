/*
 * tsgen.c - TypeScript declarations (.d.ts) from .jay-action JSON Schemas.
 *
 * A printer over schemas that the loader has already checked: it turns the
 * input and output schema of one action into `<Type>Input` and
 * `<Type>Output` declarations. It is not a validator and never fails on a
 * schema: a shape it does not recognise becomes `unknown`, and constraints
 * TypeScript cannot express (pattern, minimum, maxItems, an anyOf that
 * refines a `type`) are dropped, so the types are wider than the schema.
 * Output depends only on the arguments (properties in jansson's insertion
 * order), so regenerating a file that did not change gives the same bytes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/tsgen.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/sbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every put_* helper returns 0 or -1 like sbuf_add(), so a line is written
 * as one `||` chain that stops at the first append over the cap.
 */

/* Spaces per nesting level of the generated code. */
#define TS_INDENT 4

/* JSON Schema `type` names as bits, so that a type array can drop repeats
 * (integer and number both become `number`). */
enum ts_kind {
    TK_STRING = 1 << 0,
    TK_NUMBER = 1 << 1,
    TK_BOOLEAN = 1 << 2,
    TK_NULL = 1 << 3,
    TK_OBJECT = 1 << 4,
    TK_ARRAY = 1 << 5,
    TK_UNKNOWN = 1 << 6,
};

static const struct {
    const char *name;
    enum ts_kind kind;
} ts_kinds[] = {
    {"string", TK_STRING},   {"number", TK_NUMBER}, {"integer", TK_NUMBER},
    {"boolean", TK_BOOLEAN}, {"null", TK_NULL},     {"object", TK_OBJECT},
    {"array", TK_ARRAY},
};

/*
 * Which keyword a schema's type comes from. JSON Schema applies all of them
 * at once; we take the most specific one: const and enum list the exact
 * values, `type` beats anyOf because an anyOf next to a `type` only refines
 * it (e.g. alternative `required` lists).
 */
enum ts_form { TF_UNKNOWN, TF_CONST, TF_ENUM, TF_TYPE, TF_ANYOF };

static int put_type(struct sbuf *out, const json_t *s, int indent, int depth);

/* ---- small writers ------------------------------------------------------ */

static bool
is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* A double-quoted TS string literal. U+2028/U+2029 are escaped because
 * older JavaScript parsers end the line there, even inside a string. */
static int
put_ts_string(struct sbuf *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    if (sbuf_adds(out, "\"") != 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        const char *esc = NULL;
        int rc;

        switch (u[i]) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        default:
            break;
        }
        if (esc != NULL)
            rc = sbuf_adds(out, esc);
        else if (u[i] < 0x20 || u[i] == 0x7f)
            rc = sbuf_addf(out, "\\u%04x", u[i]);
        else if (len - i > 2 && u[i] == 0xe2 && u[i + 1] == 0x80 &&
                 (u[i + 2] == 0xa8 || u[i + 2] == 0xa9)) {
            /* E2 80 A8 is U+2028, E2 80 A9 is U+2029 */
            rc = sbuf_addf(out, "\\u%04x", 0x2028 + u[i + 2] - 0xa8);
            i += 2;
        } else
            rc = sbuf_add(out, &s[i], 1);
        if (rc != 0)
            return -1;
    }
    return sbuf_adds(out, "\"");
}

/* One enum/const value as a literal type. TypeScript has no literal types
 * for objects and arrays, so those widen to their general type. */
static int
put_literal(struct sbuf *out, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return put_ts_string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return sbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return sbuf_add_real(out, json_real_value(v));
    case JSON_TRUE:
        return sbuf_adds(out, "true");
    case JSON_FALSE:
        return sbuf_adds(out, "false");
    case JSON_NULL:
        return sbuf_adds(out, "null");
    case JSON_OBJECT:
        return sbuf_adds(out, "Record<string, unknown>");
    case JSON_ARRAY:
        return sbuf_adds(out, "unknown[]");
    }
    return sbuf_adds(out, "unknown");
}

/* ASCII identifiers only: a non-ASCII name is valid JavaScript too, but
 * quoting it is always correct and needs no Unicode tables. */
static bool
is_identifier(const char *s)
{
    if (!is_alpha((unsigned char)*s) && *s != '_' && *s != '$')
        return false;
    for (s++; *s != '\0'; s++)
        if (!is_alpha((unsigned char)*s) && !is_digit((unsigned char)*s) &&
            *s != '_' && *s != '$')
            return false;
    return true;
}

static int
put_key(struct sbuf *out, const char *name)
{
    if (is_identifier(name))
        return sbuf_adds(out, name);
    return put_ts_string(out, name, strlen(name));
}

/* ---- comments ----------------------------------------------------------- */

/* Comment text: `*` `/` would end the comment, so it becomes `*\/`; each
 * line break (\n, \r\n or \r) starts a new ` * ` line at `indent`. */
static int
put_comment_text(struct sbuf *out, int indent, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        int rc;

        if (s[i] == '*' && i + 1 < len && s[i + 1] == '/') {
            rc = sbuf_adds(out, "*\\/");
            i++;
        } else if (s[i] == '\n' || s[i] == '\r') {
            if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
                i++;
            rc = sbuf_adds(out, "\n") || sbuf_add_spaces(out, indent) ||
                 sbuf_adds(out, " *");
            /* no trailing blank on an empty line */
            if (rc == 0 && i + 1 < len && s[i + 1] != '\n' && s[i + 1] != '\r')
                rc = sbuf_adds(out, " ");
        } else
            rc = sbuf_add(out, &s[i], 1);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * A JSDoc comment of up to two paragraphs (either may be NULL or blank; a
 * second equal to the first is dropped): a one-line comment for one line of
 * text, else a block with one ` * ` line per line of text.
 */
static int
put_jsdoc(struct sbuf *out, int indent, const char *a, const char *b)
{
    const char *text[2];
    size_t len[2], n = 0;
    const char *in[2] = {a, b};

    for (int i = 0; i < 2; i++) {
        const char *p = in[i];
        size_t l;

        if (p == NULL)
            continue;
        while (is_space(*p))
            p++;
        for (l = strlen(p); l > 0 && is_space(p[l - 1]); l--)
            ;
        if (l == 0 || (n == 1 && l == len[0] && memcmp(p, text[0], l) == 0))
            continue;
        text[n] = p;
        len[n++] = l;
    }
    if (n == 0)
        return 0;
    if (n == 1 && memchr(text[0], '\n', len[0]) == NULL &&
        memchr(text[0], '\r', len[0]) == NULL) {
        if (sbuf_add_spaces(out, indent) || sbuf_adds(out, "/** ") ||
            put_comment_text(out, indent, text[0], len[0]) ||
            sbuf_adds(out, " */\n"))
            return -1;
        return 0;
    }
    if (sbuf_add_spaces(out, indent) || sbuf_adds(out, "/**\n"))
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((i > 0 &&
             (sbuf_add_spaces(out, indent) || sbuf_adds(out, " *\n"))) ||
            sbuf_add_spaces(out, indent) || sbuf_adds(out, " * ") ||
            put_comment_text(out, indent, text[i], len[i]) ||
            sbuf_adds(out, "\n"))
            return -1;
    if (sbuf_add_spaces(out, indent) || sbuf_adds(out, " */\n"))
        return -1;
    return 0;
}

static const char *
schema_description(const json_t *s)
{
    return json_string_value(json_object_get(s, "description"));
}

/* ---- schema shapes ------------------------------------------------------ */

static enum ts_kind
kind_of(const json_t *name)
{
    const char *s = json_string_value(name);

    for (size_t i = 0; s != NULL && i < ARRAY_SIZE(ts_kinds); i++)
        if (strcmp(s, ts_kinds[i].name) == 0)
            return ts_kinds[i].kind;
    return TK_UNKNOWN;
}

static enum ts_form
form_of(const json_t *s)
{
    const json_t *t = json_object_get(s, "type");

    if (json_object_get(s, "const") != NULL)
        return TF_CONST;
    if (json_is_array(json_object_get(s, "enum")))
        return TF_ENUM;
    if (json_is_string(t) || json_is_array(t))
        return TF_TYPE;
    if (json_is_array(json_object_get(s, "anyOf")))
        return TF_ANYOF;
    return TF_UNKNOWN;
}

/* The kind of a schema whose type is one name, else 0. */
static unsigned
single_kind(const json_t *s)
{
    const json_t *t = json_object_get(s, "type");

    return form_of(s) == TF_TYPE && json_is_string(t) ? kind_of(t) : 0;
}

static unsigned
kinds_of(const json_t *types)
{
    const json_t *v;
    size_t i;
    unsigned mask = 0;

    json_array_foreach(types, i, v) {
        mask |= kind_of(v);
    }
    return mask;
}

/*
 * Whether put_type() writes `A | B` at the top level, which `[]` would bind
 * tighter than. It must agree with put_type() case by case.
 */
static bool
is_union(const json_t *s, int depth)
{
    const json_t *a;

    if (depth > BOUND_SCHEMA_DEPTH)
        return false;
    switch (form_of(s)) {
    case TF_ENUM:
        return json_array_size(json_object_get(s, "enum")) > 1;
    case TF_ANYOF:
        a = json_object_get(s, "anyOf");
        if (json_array_size(a) == 1)
            return is_union(json_array_get(a, 0), depth + 1);
        return json_array_size(a) > 1;
    case TF_TYPE: {
        unsigned m = kinds_of(json_object_get(s, "type"));

        return (m & (m - 1)) != 0; /* more than one bit set */
    }
    case TF_CONST:
    case TF_UNKNOWN:
        break;
    }
    return false;
}

static bool
is_required(const json_t *required, const char *name)
{
    const json_t *v;
    size_t i;

    json_array_foreach(required, i, v) {
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

/* ---- types -------------------------------------------------------------- */

/* The type of keys not named in `properties`: any value, unless
 * additionalProperties is false (none) or a schema. */
static int
put_extra(struct sbuf *out, const json_t *s, int indent, int depth)
{
    const json_t *ap = json_object_get(s, "additionalProperties");

    if (json_is_false(ap))
        return sbuf_adds(out, "never");
    if (json_is_object(ap))
        return put_type(out, ap, indent, depth + 1);
    return sbuf_adds(out, "unknown");
}

/* The member lines of object schema `s` (at depth `depth`), one level
 * deeper than `indent`. */
static int
put_members(struct sbuf *out, const json_t *s, int indent, int depth)
{
    json_t *props = json_object_get(s, "properties"), *p;
    const json_t *req = json_object_get(s, "required");
    const char *name;
    int in = indent + TS_INDENT;

    json_object_foreach(props, name, p) {
        if (put_jsdoc(out, in, schema_description(p), NULL) ||
            sbuf_add_spaces(out, in) || put_key(out, name) ||
            sbuf_adds(out, is_required(req, name) ? ": " : "?: ") ||
            put_type(out, p, in, depth + 1) || sbuf_adds(out, ";\n"))
            return -1;
    }
    if (json_object_size(props) == 0) {
        if (sbuf_add_spaces(out, in) || sbuf_adds(out, "[key: string]: ") ||
            put_extra(out, s, in, depth) || sbuf_adds(out, ";\n"))
            return -1;
        return 0;
    }
    /*
     * Next to named properties, TypeScript requires every property to be
     * assignable to the index signature's type. `T` alone would reject the
     * named ones and `T | <each property type>` says little more than
     * `unknown`, which is always true.
     */
    if (json_is_object(json_object_get(s, "additionalProperties")) &&
        (sbuf_add_spaces(out, in) ||
         sbuf_adds(out, "[key: string]: unknown;\n")))
        return -1;
    return 0;
}

static int
put_object(struct sbuf *out, const json_t *s, int indent, int depth)
{
    if (json_object_size(json_object_get(s, "properties")) == 0) {
        if (sbuf_adds(out, "Record<string, ") ||
            put_extra(out, s, indent, depth) || sbuf_adds(out, ">"))
            return -1;
        return 0;
    }
    if (sbuf_adds(out, "{\n") || put_members(out, s, indent, depth) ||
        sbuf_add_spaces(out, indent) || sbuf_adds(out, "}"))
        return -1;
    return 0;
}

static int
put_items(struct sbuf *out, const json_t *s, int indent, int depth)
{
    const json_t *items = json_object_get(s, "items");

    if (!json_is_object(items))
        return sbuf_adds(out, "unknown");
    return put_type(out, items, indent, depth + 1);
}

static int
put_array(struct sbuf *out, const json_t *s, int indent, int depth)
{
    bool paren = is_union(json_object_get(s, "items"), depth + 1);

    if ((paren && sbuf_adds(out, "(")) || put_items(out, s, indent, depth) ||
        (paren && sbuf_adds(out, ")")) || sbuf_adds(out, "[]"))
        return -1;
    return 0;
}

static int
put_kind(struct sbuf *out, const json_t *s, unsigned kind, int indent,
         int depth)
{
    switch (kind) {
    case TK_STRING:
        return sbuf_adds(out, "string");
    case TK_NUMBER:
        return sbuf_adds(out, "number");
    case TK_BOOLEAN:
        return sbuf_adds(out, "boolean");
    case TK_NULL:
        return sbuf_adds(out, "null");
    case TK_OBJECT:
        return put_object(out, s, indent, depth);
    case TK_ARRAY:
        return put_array(out, s, indent, depth);
    default:
        return sbuf_adds(out, "unknown");
    }
}

/* `A | B | ...` over enum values or anyOf branches; an empty list allows
 * no value at all, which is `never`. */
static int
put_union(struct sbuf *out, const json_t *list, bool literals, int indent,
          int depth)
{
    const json_t *v;
    size_t i;

    if (json_array_size(list) == 0)
        return sbuf_adds(out, "never");
    json_array_foreach(list, i, v) {
        if (i > 0 && sbuf_adds(out, " | "))
            return -1;
        if (literals ? put_literal(out, v)
                     : put_type(out, v, indent, depth + 1))
            return -1;
    }
    return 0;
}

/*
 * The type of schema `s` at nesting `depth`, written inline; object
 * literals continue over lines indented from `indent`, the indentation of
 * the line the type starts on.
 */
static int
put_type(struct sbuf *out, const json_t *s, int indent, int depth)
{
    const json_t *t = json_object_get(s, "type"), *v;
    unsigned done = 0;
    size_t i;

    if (depth > BOUND_SCHEMA_DEPTH)
        return sbuf_adds(out, "unknown");
    switch (form_of(s)) {
    case TF_CONST:
        return put_literal(out, json_object_get(s, "const"));
    case TF_ENUM:
        return put_union(out, json_object_get(s, "enum"), true, indent, depth);
    case TF_ANYOF:
        return put_union(out, json_object_get(s, "anyOf"), false, indent,
                         depth);
    case TF_TYPE:
        if (json_is_string(t))
            return put_kind(out, s, kind_of(t), indent, depth);
        json_array_foreach(t, i, v) {
            unsigned k = kind_of(v);

            if (done & k)
                continue;
            if ((done != 0 && sbuf_adds(out, " | ")) ||
                put_kind(out, s, k, indent, depth))
                return -1;
            done |= k;
        }
        return done != 0 ? 0 : sbuf_adds(out, "never");
    case TF_UNKNOWN:
        break;
    }
    return sbuf_adds(out, "unknown");
}

/* ---- declarations ------------------------------------------------------- */

/*
 * `export interface <type><suffix>` for object and array roots (the product
 * spec asks for Input/Output interfaces; `extends Array<T>` keeps an array
 * root assignable to and from T[]), `export type` for anything else.
 */
static int
put_decl(struct sbuf *out, const char *type, const char *suffix,
         const json_t *schema, const char *doc)
{
    unsigned kind = single_kind(schema);

    if (put_jsdoc(out, 0, doc, schema_description(schema)))
        return -1;
    if (schema == NULL)
        return sbuf_addf(out, "export type %s%s = unknown;\n", type, suffix);
    if (kind == TK_OBJECT) {
        if (sbuf_addf(out, "export interface %s%s {\n", type, suffix) ||
            put_members(out, schema, 0, 0) || sbuf_adds(out, "}\n"))
            return -1;
        return 0;
    }
    if (kind == TK_ARRAY) {
        if (sbuf_addf(out, "export interface %s%s extends Array<", type,
                      suffix) ||
            put_items(out, schema, 0, 0) || sbuf_adds(out, "> {}\n"))
            return -1;
        return 0;
    }
    if (sbuf_addf(out, "export type %s%s = ", type, suffix) ||
        put_type(out, schema, 0, 0) || sbuf_adds(out, ";\n"))
        return -1;
    return 0;
}

int
tsgen_type_name(const char *action_name, char *out, size_t size)
{
    size_t n = 0;
    bool word_start = true;

    if (size == 0)
        return -1;
    out[0] = '\0';
    for (const char *p = action_name; p != NULL && *p != '\0'; p++) {
        int c = (unsigned char)*p;

        if (!is_alpha(c) && !is_digit(c)) {
            word_start = true;
            continue;
        }
        /* room for this character, the NUL and a `_` before a digit */
        if (size - n < (n == 0 && is_digit(c) ? 3u : 2u)) {
            out[0] = '\0';
            return -1;
        }
        if (n == 0 && is_digit(c))
            out[n++] = '_';
        out[n++] = (char)(word_start && c >= 'a' && c <= 'z' ? c - 'a' + 'A'
                                                             : c);
        word_start = false;
    }
    out[n] = '\0';
    return n > 0 ? 0 : -1;
}

int
tsgen_action(struct sbuf *out, const char *action_name, const char *description,
             const char *source, const json_t *input_schema,
             const json_t *output_schema)
{
    char type[BOUND_TS_TYPE_NAME];

    if (tsgen_type_name(action_name, type, sizeof(type)) != 0)
        return -1;
    if (sbuf_adds(out, "/*\n"))
        return -1;
    if (source != NULL && (sbuf_adds(out, " * Source: ") ||
                           put_comment_text(out, 0, source, strlen(source)) ||
                           sbuf_adds(out, "\n")))
        return -1;
    if (sbuf_adds(out, " * Generated by `gemini-agent actions types`; "
                       "do not edit.\n */\n\n") ||
        put_decl(out, type, "Input", input_schema, description) ||
        sbuf_adds(out, "\n") ||
        put_decl(out, type, "Output", output_schema, NULL))
        return -1;
    return 0;
}
