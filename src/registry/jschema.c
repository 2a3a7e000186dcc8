/*
 * jschema.c - the JSON Schema subset of .jay-action files: checking a schema
 * and validating arguments against it.
 *
 * One table of keywords drives both jobs: what type a keyword's value needs,
 * how to check that value further, and how to enforce it on an instance.
 * Validation stops at the first violation and names it by JSON pointer and
 * keyword, because the message goes back to an HTTP client or to the model.
 * This is not a general JSON Schema implementation: no $ref, no combinators
 * other than anyOf, no format assertions. Nothing here allocates or copies
 * JSON values.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/jschema.h"
#include "core/utf8.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/status.h"

#include <jansson.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* --- small helpers ------------------------------------------------------- */

/* JSON value types as bits, so a keyword can accept several at once. */
#define T_OBJECT  (1u << JSON_OBJECT)
#define T_ARRAY   (1u << JSON_ARRAY)
#define T_STRING  (1u << JSON_STRING)
#define T_INTEGER (1u << JSON_INTEGER)
#define T_NUMBER  (T_INTEGER | (1u << JSON_REAL))
#define T_BOOL    ((1u << JSON_TRUE) | (1u << JSON_FALSE))
#define T_NULL    (1u << JSON_NULL)
#define T_ANY     (T_OBJECT | T_ARRAY | T_STRING | T_NUMBER | T_BOOL | T_NULL)

static unsigned
type_bit(const json_t *v)
{
    return 1u << json_typeof(v);
}

/* A real counts as an integer when integral and within json_int_t range;
 * the range test comes first because casting an out-of-range double is UB. */
static bool
real_is_integral(double d)
{
    return d >= -0x1p63 && d < 0x1p63 && (double)(json_int_t)d == d;
}

/*
 * Compare two JSON numbers exactly, also across integer and real: going
 * through double would make 2^53 + 1 equal to 2^53.
 */
static int
cmp_int_real(json_int_t i, double d)
{
    json_int_t t;

    if (d >= 0x1p63)
        return -1;
    if (d < -0x1p63)
        return 1;
    t = (json_int_t)d; /* toward zero: d - t is the exact fraction */
    if (i != t)
        return i < t ? -1 : 1;
    return d > (double)t ? -1 : d < (double)t ? 1 : 0;
}

static int
cmp_number(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    if (json_is_integer(a))
        return cmp_int_real(json_integer_value(a), json_real_value(b));
    if (json_is_integer(b))
        return -cmp_int_real(json_integer_value(b), json_real_value(a));
    double x = json_real_value(a), y = json_real_value(b);
    return x < y ? -1 : x > y;
}

/* json_equal(), except that 1 and 1.0 are equal, as JSON Schema says. */
static bool
values_equal(const json_t *a, const json_t *b, unsigned depth)
{
    const char *key;
    const json_t *av;
    size_t i;

    if (json_is_number(a) && json_is_number(b))
        return cmp_number(a, b) == 0;
    if (json_typeof(a) != json_typeof(b) || depth > BOUND_JSON_DEPTH)
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        json_array_foreach(a, i, av) {
            if (!values_equal(av, json_array_get(b, i), depth + 1))
                return false;
        }
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach(UNCONST(a), key, av) {
            const json_t *bv = json_object_get(b, key);
            if (bv == NULL || !values_equal(av, bv, depth + 1))
                return false;
        }
        return true;
    }
    return json_equal(a, b);
}

/*
 * vsnprintf() into dst (size >= 4); a cut text ends with "..." on a UTF-8
 * boundary, since messages end up in JSON strings, which must stay valid.
 */
static void ATTR_FMT(3, 0)
    vfmt_cut(char *dst, size_t size, const char *fmt, va_list ap)
{
    int n = vsnprintf(dst, size, fmt, ap);

    if (n < 0) {
        dst[0] = '\0';
    } else if ((size_t)n >= size) {
        size_t keep = utf8_cut(dst, size - 4);
        memcpy(dst + keep, "...", 4);
    }
}

static void ATTR_FMT(3, 4) fmt_cut(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfmt_cut(dst, size, fmt, ap);
    va_end(ap);
}

/* Compact ASCII JSON text of v for a message, cut with "..." when long. */
static const char *
dump_value(const json_t *v, char *buf, size_t size)
{
    size_t n;

    /* json_dumpb() never terminates and stops writing at the limit */
    memset(buf, 0, size);
    n = json_dumpb(v, buf, size - 4,
                   JSON_COMPACT | JSON_ENCODE_ANY | JSON_ENSURE_ASCII |
                       JSON_REAL_PRECISION(15));
    if (n > size - 4)
        memcpy(buf + strnlen(buf, size - 4), "...", 4);
    return buf;
}

/* --- JSON pointers ------------------------------------------------------- */

/*
 * A JSON pointer built as we descend. Pushes and pops nest, so a pop only
 * restores the length saved by its push. `len` is the pointer's real length;
 * past BOUND_JSON_POINTER - 1 bytes the text is cut and jptr_text() marks the cut.
 */
struct jptr {
    size_t len;
    char buf[BOUND_JSON_POINTER];
};

static void
jptr_init(struct jptr *p)
{
    p->len = 0;
    p->buf[0] = '\0';
}

static void
jptr_putc(struct jptr *p, char c)
{
    if (p->len < BOUND_JSON_POINTER - 1) {
        p->buf[p->len] = c;
        p->buf[p->len + 1] = '\0';
    }
    p->len++;
}

static void
jptr_pop(struct jptr *p, size_t mark)
{
    p->len = mark;
    p->buf[mark < BOUND_JSON_POINTER - 1 ? mark : BOUND_JSON_POINTER - 1] =
        '\0';
}

/* Append "/key" with RFC 6901 escaping; returns the mark for jptr_pop(). */
static size_t
jptr_push(struct jptr *p, const char *key)
{
    size_t mark = p->len;

    jptr_putc(p, '/');
    for (; *key != '\0'; key++) {
        if (*key == '~' || *key == '/') {
            jptr_putc(p, '~');
            jptr_putc(p, *key == '~' ? '0' : '1');
        } else {
            jptr_putc(p, *key);
        }
    }
    return mark;
}

static size_t
jptr_push_index(struct jptr *p, size_t i)
{
    char num[24];

    snprintf(num, sizeof(num), "%zu", i);
    return jptr_push(p, num);
}

static void
jptr_text(const struct jptr *p, char *dst, size_t size)
{
    bool cut = p->len > BOUND_JSON_POINTER - 1;
    size_t n = cut ? utf8_cut(p->buf, BOUND_JSON_POINTER - 1) : p->len;

    fmt_cut(dst, size, "%.*s%s", (int)n, p->buf, cut ? "..." : "");
}

/* --- state and tables shared by both jobs ----------------------------- */

struct check {
    jschema_report_fn report;
    void *ctx;
    int problems;
    struct jptr ptr; /* of the schema value being checked */
};

struct validation {
    struct status_error *err; /* NULL: only the verdict is wanted */
    struct jptr path;         /* of the instance value being validated */
    bool no_memory;           /* a pattern could not be matched for it */
};

struct keyword;

typedef void (*check_fn)(struct check *c, const struct keyword *kw,
                         const json_t *value, unsigned depth);
typedef int (*validate_fn)(struct validation *v, const json_t *value,
                           const json_t *schema, const json_t *instance,
                           unsigned depth);

struct keyword {
    const char *name;
    unsigned need;         /* T_* bits the keyword's value may have */
    const char *need_text; /* ... said for a message: "'x' must be <this>" */
    check_fn check;        /* further checks of a well-typed value, or NULL */
    validate_fn validate;  /* NULL for annotations */
};

static const struct keyword *keyword_find(const char *name);
static void check_schema(struct check *c, const json_t *schema, unsigned depth);
static int validate(struct validation *v, const json_t *schema,
                    const json_t *instance, unsigned depth);

/* The names `type` accepts. "integer" also takes integral reals. */
static const struct {
    const char *name;
    unsigned mask;
} type_names[] = {
    {"string", T_STRING}, {"number", T_NUMBER}, {"integer", T_INTEGER},
    {"boolean", T_BOOL},  {"null", T_NULL},     {"object", T_OBJECT},
    {"array", T_ARRAY},
};

static int
type_find(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(type_names); i++) {
        if (strcmp(type_names[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

static bool
type_matches(int t, const json_t *v)
{
    if (type_names[t].mask & type_bit(v))
        return true;
    return type_names[t].mask == T_INTEGER && json_is_real(v) &&
           real_is_integral(json_real_value(v));
}

/* --- jschema_check() ----------------------------------------------------- */

static void ATTR_FMT(2, 3) problem(struct check *c, const char *fmt, ...)
{
    char pointer[BOUND_JSON_POINTER + 4], msg[256];
    va_list ap;

    va_start(ap, fmt);
    vfmt_cut(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    jptr_text(&c->ptr, pointer, sizeof(pointer));
    c->report(c->ctx, pointer, msg);
    c->problems++;
}

static void
bad_value(struct check *c, const struct keyword *kw)
{
    problem(c, "'%s' must be %s", kw->name, kw->need_text);
}

static void
check_type(struct check *c, const struct keyword *kw, const json_t *value,
           unsigned depth UNUSED)
{
    unsigned seen = 0;
    const json_t *name;
    size_t i;
    int t;

    if (json_is_string(value)) {
        if (type_find(json_string_value(value)) < 0)
            problem(c, "unknown type '%s'", json_string_value(value));
        return;
    }
    if (json_array_size(value) == 0)
        bad_value(c, kw);
    json_array_foreach(value, i, name) {
        size_t mark = jptr_push_index(&c->ptr, i);
        if (!json_is_string(name))
            problem(c, "type name must be a string");
        else if ((t = type_find(json_string_value(name))) < 0)
            problem(c, "unknown type '%s'", json_string_value(name));
        else if (seen & (1u << t))
            problem(c, "duplicate type '%s'", json_string_value(name));
        else
            seen |= 1u << t;
        jptr_pop(&c->ptr, mark);
    }
}

static void
check_properties(struct check *c, const struct keyword *kw UNUSED,
                 const json_t *value, unsigned depth)
{
    const char *name;
    const json_t *sub;

    json_object_foreach(UNCONST(value), name, sub) {
        size_t mark = jptr_push(&c->ptr, name);
        check_schema(c, sub, depth + 1);
        jptr_pop(&c->ptr, mark);
    }
}

static void
check_required(struct check *c, const struct keyword *kw UNUSED,
               const json_t *value, unsigned depth UNUSED)
{
    const json_t *name;
    size_t i, j;

    json_array_foreach(value, i, name) {
        size_t mark = jptr_push_index(&c->ptr, i);
        if (!json_is_string(name)) {
            problem(c, "property name must be a string");
        } else {
            for (j = 0; j < i; j++) {
                if (json_equal(name, json_array_get(value, j)))
                    break;
            }
            if (j < i)
                problem(c, "duplicate property name '%s'",
                        json_string_value(name));
        }
        jptr_pop(&c->ptr, mark);
    }
}

static void
check_additional(struct check *c, const struct keyword *kw UNUSED,
                 const json_t *value, unsigned depth)
{
    if (json_is_object(value))
        check_schema(c, value, depth + 1);
}

static void
check_nonempty(struct check *c, const struct keyword *kw, const json_t *value,
               unsigned depth UNUSED)
{
    if (json_array_size(value) == 0)
        bad_value(c, kw);
}

static void
check_items(struct check *c, const struct keyword *kw UNUSED,
            const json_t *value, unsigned depth)
{
    if (json_is_array(value))
        problem(c, "tuple form of 'items' is not supported");
    else
        check_schema(c, value, depth + 1);
}

static void
check_count(struct check *c, const struct keyword *kw, const json_t *value,
            unsigned depth UNUSED)
{
    if (json_integer_value(value) < 0)
        bad_value(c, kw);
}

/*
 * What `p` (an ERE) costs regcomp, estimated from above: every atom counts
 * 1, a group the sum of its branches, and a counted repetition {n,m}
 * multiplies what it repeats by its upper bound (n + 1 without one), as
 * glibc copies the operand that many times. `+` copies it once more. The
 * sum saturates past BOUND_PATTERN_COST; a range of more than
 * BOUND_PATTERN_RANGE optional copies costs the cap at once. Parses [...] and \x as one atom;
 * anything regcomp itself refuses is its error to report.
 */
static unsigned long
pattern_cost(const char **pp, int depth)
{
    const unsigned long cap = (unsigned long)BOUND_PATTERN_COST + 1;
    const char *p = *pp;
    unsigned long total = 0, branch = 0, last = 0;

    /* a ')' with no group open is a plain character (glibc) */
    while (*p != '\0' && !(*p == ')' && depth > 0)) {
        unsigned long atom = 0;
        if (*p == '|') {
            total += branch;
            branch = last = 0;
            p++;
            continue;
        }
        if (*p == '(') {
            p++;
            atom = depth < 64 ? pattern_cost(&p, depth + 1) : cap;
            if (*p == ')')
                p++;
        } else if (*p == '[') {
            p++;
            if (*p == '^')
                p++;
            if (*p == ']')
                p++;
            while (*p != '\0' && *p != ']') {
                if (p[0] == '[' &&
                    (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                    const char *end = strstr(p + 2, ":]");
                    p = end ? end + 2 : p + 1;
                } else {
                    p++;
                }
            }
            if (*p == ']')
                p++;
            atom = 1;
        } else if (*p == '{' || *p == '*' || *p == '+' || *p == '?') {
            /* a repetition of the last atom */
            unsigned long times = 1;
            if (*p == '{') {
                char *end;
                unsigned long n = strtoul(p + 1, &end, 10), m = n;
                if (*end == ',') {
                    char *e2;
                    m = strtoul(end + 1, &e2, 10);
                    if (e2 == end + 1)
                        m = n + 1; /* {n,}: n copies and a star */
                    end = e2;
                }
                if (m > n && m - n > BOUND_PATTERN_RANGE)
                    return *pp = p, cap; /* see BOUND_PATTERN_RANGE */
                times = (n > m ? n : m) ? (n > m ? n : m) : 1;
                p = *end == '}' ? end + 1 : end;
            } else {
                times = *p == '+' ? 2 : 1;
                p++;
            }
            branch -= last;
            last = last * times > cap || times > cap ? cap : last * times;
            branch += last;
            if (branch > cap)
                branch = cap;
            continue;
        } else {
            if (*p == '\\' && p[1] != '\0')
                p++;
            p++; /* a character, an escape, or a stray ')' */
            atom = 1;
        }
        last = atom > cap ? cap : atom;
        branch = branch + last > cap ? cap : branch + last;
    }
    total += branch;
    *pp = p;
    return total > cap ? cap : total;
}

static void
check_pattern(struct check *c, const struct keyword *kw UNUSED,
              const json_t *value, unsigned depth UNUSED)
{
    const char *s = json_string_value(value);
    char err[256];
    regex_t re;
    int rc;

    if (json_string_length(value) > BOUND_PATTERN_LEN) {
        problem(c, "'pattern' is longer than %d bytes", BOUND_PATTERN_LEN);
    } else if (strlen(s) != json_string_length(value)) {
        problem(c, "'pattern' contains a NUL byte");
    } else if (pattern_cost(&(const char *){s}, 0) > BOUND_PATTERN_COST) {
        /* refused before regcomp sees it: compiling is what costs */
        problem(c,
                "'pattern' repeats too much: its counted repetitions "
                "would compile to more than %d parts",
                BOUND_PATTERN_COST);
    } else if ((rc = regcomp(&re, s, REG_EXTENDED | REG_NOSUB)) != 0) {
        regerror(rc, &re, err, sizeof(err));
        problem(c, "invalid pattern: %s", err);
    } else {
        regfree(&re);
    }
}

static void
check_any_of(struct check *c, const struct keyword *kw, const json_t *value,
             unsigned depth)
{
    const json_t *sub;
    size_t i;

    if (json_array_size(value) == 0)
        bad_value(c, kw);
    json_array_foreach(value, i, sub) {
        size_t mark = jptr_push_index(&c->ptr, i);
        check_schema(c, sub, depth + 1);
        jptr_pop(&c->ptr, mark);
    }
}

/* Pairs where a lower bound above the upper one makes the schema unusable. */
static const char *const bound_pairs[][2] = {
    {"minimum", "maximum"},
    {"minLength", "maxLength"},
    {"minItems", "maxItems"},
};

static void
check_bounds(struct check *c, const json_t *schema)
{
    for (size_t i = 0; i < ARRAY_SIZE(bound_pairs); i++) {
        const json_t *lo = json_object_get(schema, bound_pairs[i][0]);
        const json_t *hi = json_object_get(schema, bound_pairs[i][1]);
        size_t mark;

        /* a wrong-typed bound has been reported already */
        if (!json_is_number(lo) || !json_is_number(hi) ||
            cmp_number(lo, hi) <= 0)
            continue;
        mark = jptr_push(&c->ptr, bound_pairs[i][0]);
        problem(c, "'%s' is greater than '%s'", bound_pairs[i][0],
                bound_pairs[i][1]);
        jptr_pop(&c->ptr, mark);
    }
}

static void
check_schema(struct check *c, const json_t *schema, unsigned depth)
{
    const struct keyword *kw;
    const json_t *value;
    const char *key;

    if (depth > BOUND_SCHEMA_DEPTH) {
        problem(c, "schema nested deeper than %d levels", BOUND_SCHEMA_DEPTH);
        return;
    }
    if (!json_is_object(schema)) {
        problem(c, "schema must be an object");
        return;
    }
    json_object_foreach(UNCONST(schema), key, value) {
        size_t mark = jptr_push(&c->ptr, key);
        if ((kw = keyword_find(key)) == NULL)
            problem(c, "unsupported keyword '%s'", key);
        else if ((type_bit(value) & kw->need) == 0)
            bad_value(c, kw);
        else if (kw->check != NULL)
            kw->check(c, kw, value, depth);
        jptr_pop(&c->ptr, mark);
    }
    check_bounds(c, schema);
}

int
jschema_check(const json_t *schema, jschema_report_fn report, void *ctx)
{
    struct check c;

    c.report = report;
    c.ctx = ctx;
    c.problems = 0;
    jptr_init(&c.ptr);
    check_schema(&c, schema, 1);
    return c.problems;
}

/* --- jschema_validate() -------------------------------------------------- */

_Static_assert(SCHEMA_MESSAGE_MAX <= STATUS_TEXT_MAX,
               "a violation's message must fit the error uncut");

/* Record the violation (when asked to) and return -1. */
static int ATTR_FMT(3, 4)
    violation(struct validation *v, const char *rule, const char *fmt, ...)
{
    char what[256], path[STATUS_PATH_MAX], message[SCHEMA_MESSAGE_MAX];
    va_list ap;

    if (v->err == NULL)
        return -1;
    va_start(ap, fmt);
    vfmt_cut(what, sizeof(what), fmt, ap);
    va_end(ap);
    jptr_text(&v->path, path, sizeof(path));
    fmt_cut(message, sizeof(message), "%s: %s (%s)",
            path[0] != '\0' ? path : "/", what, rule);
    return status_set_schema(v->err, path, rule, "%s", message);
}

static const char *const got_names[] = {
    [JSON_OBJECT] = "object", [JSON_ARRAY] = "array",
    [JSON_STRING] = "string", [JSON_INTEGER] = "integer",
    [JSON_REAL] = "number",   [JSON_TRUE] = "boolean",
    [JSON_FALSE] = "boolean", [JSON_NULL] = "null",
};

static int
v_type(struct validation *v, const json_t *value, const json_t *schema UNUSED,
       const json_t *instance, unsigned depth UNUSED)
{
    unsigned wanted = 0; /* bits of type_names[] */
    char want[128];      /* all seven names joined take 66 bytes */
    const json_t *name;
    size_t len = 0, i;
    int t;

    if (json_is_string(value)) {
        if ((t = type_find(json_string_value(value))) >= 0)
            wanted = 1u << t;
    } else {
        json_array_foreach(value, i, name) {
            const char *s = json_string_value(name);
            if (s != NULL && (t = type_find(s)) >= 0)
                wanted |= 1u << t;
        }
    }
    for (t = 0; t < (int)ARRAY_SIZE(type_names); t++) {
        if ((wanted & (1u << t)) && type_matches(t, instance))
            return 0;
    }
    if (wanted == 0) /* no known name: jschema_check() would refuse it */
        return 0;
    for (t = 0; t < (int)ARRAY_SIZE(type_names); t++) {
        if (wanted & (1u << t))
            len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s",
                                    len > 0 ? " or " : "", type_names[t].name);
    }
    return violation(v, "type", "expected %s, got %s", want,
                     got_names[json_typeof(instance)]);
}

static int
v_enum(struct validation *v, const json_t *value, const json_t *schema UNUSED,
       const json_t *instance, unsigned depth UNUSED)
{
    const json_t *item;
    char text[128];
    size_t i;

    json_array_foreach(value, i, item) {
        if (values_equal(item, instance, 0))
            return 0;
    }
    return violation(v, "enum", "must be one of %s",
                     dump_value(value, text, sizeof(text)));
}

static int
v_const(struct validation *v, const json_t *value, const json_t *schema UNUSED,
        const json_t *instance, unsigned depth UNUSED)
{
    char text[128];

    if (values_equal(value, instance, 0))
        return 0;
    return violation(v, "const", "must equal %s",
                     dump_value(value, text, sizeof(text)));
}

static int
v_minimum(struct validation *v, const json_t *value,
          const json_t *schema UNUSED, const json_t *instance,
          unsigned depth UNUSED)
{
    char text[64];

    if (!json_is_number(instance) || !json_is_number(value) ||
        cmp_number(instance, value) >= 0)
        return 0;
    return violation(v, "minimum", "must be >= %s",
                     dump_value(value, text, sizeof(text)));
}

static int
v_maximum(struct validation *v, const json_t *value,
          const json_t *schema UNUSED, const json_t *instance,
          unsigned depth UNUSED)
{
    char text[64];

    if (!json_is_number(instance) || !json_is_number(value) ||
        cmp_number(instance, value) <= 0)
        return 0;
    return violation(v, "maximum", "must be <= %s",
                     dump_value(value, text, sizeof(text)));
}

static int
v_min_length(struct validation *v, const json_t *value,
             const json_t *schema UNUSED, const json_t *instance,
             unsigned depth UNUSED)
{
    json_int_t min = json_integer_value(value);

    if (!json_is_string(instance) ||
        (json_int_t)utf8_count(json_string_value(instance),
                               json_string_length(instance)) >= min)
        return 0;
    return violation(
        v, "minLength",
        "must be at least %" JSON_INTEGER_FORMAT " characters long", min);
}

static int
v_max_length(struct validation *v, const json_t *value,
             const json_t *schema UNUSED, const json_t *instance,
             unsigned depth UNUSED)
{
    json_int_t max = json_integer_value(value);

    if (!json_is_string(instance) ||
        (json_int_t)utf8_count(json_string_value(instance),
                               json_string_length(instance)) <= max)
        return 0;
    return violation(v, "maxLength",
                     "must be at most %" JSON_INTEGER_FORMAT " characters long",
                     max);
}

static int
v_pattern(struct validation *v, const json_t *value,
          const json_t *schema UNUSED, const json_t *instance,
          unsigned depth UNUSED)
{
    const char *s = json_string_value(instance);
    const char *pattern = json_string_value(value);
    int rc = REG_NOMATCH;
    regex_t re;

    if (s == NULL || pattern == NULL)
        return 0;
    /* regexec() would stop at an embedded NUL and judge only a prefix */
    if (strlen(s) == json_string_length(instance) &&
        (rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB)) == 0) {
        rc = regexec(&re, s, 0, NULL, 0);
        regfree(&re);
    }
    if (rc == 0)
        return 0;
    /* the C library's own malloc() failed: no verdict on the value */
    if (rc == REG_ESPACE) {
        v->no_memory = true;
        return -1;
    }
    return violation(v, "pattern", "must match pattern '%s'", pattern);
}

static int
v_min_items(struct validation *v, const json_t *value,
            const json_t *schema UNUSED, const json_t *instance,
            unsigned depth UNUSED)
{
    json_int_t min = json_integer_value(value);

    if (!json_is_array(instance) ||
        (json_int_t)json_array_size(instance) >= min)
        return 0;
    return violation(v, "minItems",
                     "must have at least %" JSON_INTEGER_FORMAT " items", min);
}

static int
v_max_items(struct validation *v, const json_t *value,
            const json_t *schema UNUSED, const json_t *instance,
            unsigned depth UNUSED)
{
    json_int_t max = json_integer_value(value);

    if (!json_is_array(instance) ||
        (json_int_t)json_array_size(instance) <= max)
        return 0;
    return violation(v, "maxItems",
                     "must have at most %" JSON_INTEGER_FORMAT " items", max);
}

static int
v_items(struct validation *v, const json_t *value, const json_t *schema UNUSED,
        const json_t *instance, unsigned depth)
{
    const json_t *item;
    size_t i;

    json_array_foreach(instance, i, item) {
        size_t mark = jptr_push_index(&v->path, i);
        int rc = validate(v, value, item, depth + 1);
        jptr_pop(&v->path, mark);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int
v_required(struct validation *v, const json_t *value,
           const json_t *schema UNUSED, const json_t *instance,
           unsigned depth UNUSED)
{
    const json_t *name;
    size_t i;

    if (!json_is_object(instance))
        return 0;
    json_array_foreach(value, i, name) {
        const char *s = json_string_value(name);
        if (s != NULL && json_object_get(instance, s) == NULL)
            return violation(v, "required", "missing required property '%s'",
                             s);
    }
    return 0;
}

static int
v_properties(struct validation *v, const json_t *value,
             const json_t *schema UNUSED, const json_t *instance,
             unsigned depth)
{
    const json_t *sub, *item;
    const char *name;

    if (!json_is_object(instance))
        return 0;
    json_object_foreach(UNCONST(value), name, sub) {
        size_t mark;
        int rc;

        if ((item = json_object_get(instance, name)) == NULL)
            continue;
        mark = jptr_push(&v->path, name);
        rc = validate(v, sub, item, depth + 1);
        jptr_pop(&v->path, mark);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int
v_additional(struct validation *v, const json_t *value, const json_t *schema,
             const json_t *instance, unsigned depth)
{
    const json_t *props = json_object_get(schema, "properties");
    const json_t *item;
    const char *name;

    if (!json_is_object(instance) || json_is_true(value))
        return 0;
    json_object_foreach(UNCONST(instance), name, item) {
        size_t mark;
        int rc;

        if (json_object_get(props, name) != NULL)
            continue;
        if (!json_is_object(value))
            return violation(v, "additionalProperties",
                             "unexpected property '%s'", name);
        mark = jptr_push(&v->path, name);
        rc = validate(v, value, item, depth + 1);
        jptr_pop(&v->path, mark);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int
v_any_of(struct validation *v, const json_t *value, const json_t *schema UNUSED,
         const json_t *instance, unsigned depth)
{
    struct status_error *err = v->err;
    const json_t *branch;
    bool ok = false;
    size_t i;

    /* a failing branch is expected: keep its details out of `err` */
    v->err = NULL;
    json_array_foreach(value, i, branch) {
        if ((ok = validate(v, branch, instance, depth + 1) == 0))
            break;
    }
    v->err = err;
    if (ok)
        return 0;
    return violation(v, "anyOf", "matches none of the anyOf alternatives");
}

/*
 * Every keyword a schema may use. Validation runs in this order, so `type`
 * is reported before the keywords that assume it.
 */
static const struct keyword keywords[] = {
    {"type", T_STRING | T_ARRAY,
     "a type name or a non-empty array of type names", check_type, v_type},
    {"enum", T_ARRAY, "a non-empty array", check_nonempty, v_enum},
    {"const", T_ANY, NULL, NULL, v_const},
    {"minimum", T_NUMBER, "a number", NULL, v_minimum},
    {"maximum", T_NUMBER, "a number", NULL, v_maximum},
    {"minLength", T_INTEGER, "a non-negative integer", check_count,
     v_min_length},
    {"maxLength", T_INTEGER, "a non-negative integer", check_count,
     v_max_length},
    {"pattern", T_STRING, "a string", check_pattern, v_pattern},
    {"minItems", T_INTEGER, "a non-negative integer", check_count, v_min_items},
    {"maxItems", T_INTEGER, "a non-negative integer", check_count, v_max_items},
    {"items", T_ANY, NULL, check_items, v_items},
    {"required", T_ARRAY, "an array of property names", check_required,
     v_required},
    {"properties", T_OBJECT, "an object of schemas", check_properties,
     v_properties},
    {"additionalProperties", T_BOOL | T_OBJECT, "a boolean or a schema",
     check_additional, v_additional},
    {"anyOf", T_ARRAY, "a non-empty array of schemas", check_any_of, v_any_of},
    /* annotations */
    {"description", T_STRING, "a string", NULL, NULL},
    {"title", T_STRING, "a string", NULL, NULL},
    {"$comment", T_STRING, "a string", NULL, NULL},
    {"format", T_STRING, "a string", NULL, NULL},
    {"default", T_ANY, NULL, NULL, NULL},
    {"examples", T_ANY, NULL, NULL, NULL},
};

static const struct keyword *
keyword_find(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(keywords); i++) {
        if (strcmp(keywords[i].name, name) == 0)
            return &keywords[i];
    }
    return NULL;
}

static int
validate(struct validation *v, const json_t *schema, const json_t *instance,
         unsigned depth)
{
    /* jschema_check() refuses both; fail closed if it was skipped */
    if (!json_is_object(schema) || depth > BOUND_SCHEMA_DEPTH)
        return violation(v, "schema", "the schema here is not usable");
    for (size_t i = 0; i < ARRAY_SIZE(keywords); i++) {
        const struct keyword *kw = &keywords[i];
        const json_t *value;

        if (kw->validate == NULL)
            continue;
        value = json_object_get(schema, kw->name);
        if (value != NULL &&
            kw->validate(v, value, schema, instance, depth) != 0)
            return -1;
    }
    return 0;
}

int
jschema_validate(const json_t *schema, const json_t *instance,
                 struct status_error *err)
{
    struct validation v;
    bool had = err != NULL && err->code != ST_OK;
    int rc;

    v.err = err;
    v.no_memory = false;
    jptr_init(&v.path);
    rc = validate(&v, schema, instance, 1);
    /* refused because a pattern could not be matched: out of memory, not
     * a violation the caller's input made */
    if (rc != 0 && v.no_memory && err != NULL && !had) {
        *err = (struct status_error){0};
        status_set(err, ST_NO_MEMORY, "out of memory matching a pattern");
    }
    return rc;
}
