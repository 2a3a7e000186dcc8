/*
 * check_ydoc.c - the YAML loader: core-schema typing, positions, lookup,
 * JSON conversion, JSON pointers, and every hostile-input refusal.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/ydoc.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/diag.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct arena arena;
static struct diag diag;

static void
setup(void)
{
    arena_init(&arena);
    diag = (struct diag)DIAG_INIT;
}

static void
teardown(void)
{
    arena_release(&arena);
    diag_release(&diag);
}

static const struct ydoc_node *
load(const char *src)
{
    return ydoc_load_buffer(src, strlen(src), "t.yaml", &arena, &diag);
}

/* Exactly one problem, on `line`, mentioning `word`. */
static void
assert_one_problem(const char *file, int line, const char *word)
{
    ck_assert_uint_eq(diag.count, 1);
    ck_assert_str_eq(diag.items[0].file, file);
    ck_assert_int_eq(diag.items[0].line, line);
    ck_assert_msg(strstr(diag.items[0].msg, word) != NULL,
                  "'%s' does not mention '%s'", diag.items[0].msg, word);
}

static double
seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static char *
xmalloc(size_t n)
{
    char *p = malloc(n);

    ck_assert_ptr_nonnull(p);
    return p;
}

/* A temporary file holding data[0..len); the caller unlinks `path`. */
static void
write_temp(char path[static 32], const char *data, size_t len)
{
    int fd;

    snprintf(path, 32, "/tmp/check_ydoc.XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
}

/* --- typing --------------------------------------------------------------- */

#define NUM(x) (&(const double){x})

/* `number` is what ydoc_number() gives, NULL when it refuses; `b` is the
 * value of a boolean. */
static const struct {
    const char *src;
    const char *type;
    long long i;
    const double *number;
    bool b;
} typing_cases[] = {
    {"", "null", 0, NULL, false},
    {"~", "null", 0, NULL, false},
    {"null", "null", 0, NULL, false},
    {"Null", "null", 0, NULL, false},
    {"NULL", "null", 0, NULL, false},
    {"nULL", "string", 0, NULL, false},
    {"'null'", "string", 0, NULL, false},
    {"''", "string", 0, NULL, false},
    {"true", "boolean", 0, NULL, true},
    {"True", "boolean", 0, NULL, true},
    {"TRUE", "boolean", 0, NULL, true},
    {"false", "boolean", 0, NULL, false},
    {"False", "boolean", 0, NULL, false},
    {"FALSE", "boolean", 0, NULL, false},
    {"tRUE", "string", 0, NULL, false},
    {"yes", "string", 0, NULL, false}, /* YAML 1.1 only */
    {"\"true\"", "string", 0, NULL, false},
    {"0", "integer", 0, NUM(0), false},
    {"-17", "integer", -17, NUM(-17), false},
    {"+5", "integer", 5, NUM(5), false},
    {"007", "integer", 7, NUM(7), false},
    {"0x1F", "integer", 31, NUM(31), false},
    {"0xff", "integer", 255, NUM(255), false},
    {"0o17", "integer", 15, NUM(15), false},
    {"0o8", "string", 0, NULL, false},
    {"0x", "string", 0, NULL, false},
    {"0X1F", "string", 0, NULL, false},
    {"-0x1", "string", 0, NULL, false},
    {"9223372036854775807", "integer", LLONG_MAX, NUM(0x1p63), false},
    {"-9223372036854775808", "integer", LLONG_MIN, NUM(-0x1p63), false},
    {"0x7fffffffffffffff", "integer", LLONG_MAX, NUM(0x1p63), false},
    {"9223372036854775808", "number", 0, NUM(0x1p63), false},
    {"0x10000000000000000", "number", 0, NUM(0x1p64), false},
    {"1.5", "number", 0, NUM(1.5), false},
    {".5", "number", 0, NUM(0.5), false},
    {"-.5e3", "number", 0, NUM(-500), false},
    {"1.", "number", 0, NUM(1), false},
    {"1e3", "number", 0, NUM(1000), false},
    {"+2.5E-1", "number", 0, NUM(0.25), false},
    {"1e", "string", 0, NULL, false},
    {".", "string", 0, NULL, false},
    {"+", "string", 0, NULL, false},
    {"1.2.3", "string", 0, NULL, false},
    {"1_000", "string", 0, NULL, false},
    {"12 monkeys", "string", 0, NULL, false},
    {"1e999", "number", 0, NULL, false}, /* overflows a double */
    {".inf", "number", 0, NULL, false},
    {"-.Inf", "number", 0, NULL, false},
    {".NaN", "number", 0, NULL, false},
    {".infinity", "string", 0, NULL, false},
    {"'.inf'", "string", 0, NULL, false},
    {"'1'", "string", 0, NULL, false},
    {"\"0x1F\"", "string", 0, NULL, false},
};

START_TEST(typing_follows_core_schema)
{
    const struct ydoc_node *n = load(typing_cases[_i].src);
    const char *type = typing_cases[_i].type;
    long long i;
    double f;
    bool b;

    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(n->kind, YDOC_SCALAR);
    ck_assert_str_eq(ydoc_type_name(n), type);
    ck_assert_int_eq(ydoc_is_null(n), strcmp(type, "null") == 0);
    ck_assert_int_eq(ydoc_bool(n, &b), strcmp(type, "boolean") == 0);
    if (strcmp(type, "boolean") == 0)
        ck_assert_int_eq(b, typing_cases[_i].b);
    ck_assert_int_eq(ydoc_int(n, &i), strcmp(type, "integer") == 0);
    if (strcmp(type, "integer") == 0)
        ck_assert(i == typing_cases[_i].i);
    ck_assert_int_eq(ydoc_number(n, &f), typing_cases[_i].number != NULL);
    if (typing_cases[_i].number != NULL)
        ck_assert_double_eq(f, *typing_cases[_i].number);
    ck_assert_int_eq(ydoc_string(n) != NULL, strcmp(type, "string") == 0);
    ck_assert_uint_eq(diag.count, 0);
}
END_TEST

START_TEST(typing_needs_a_scalar)
{
    const struct ydoc_node *n = load("{a: [1]}");
    long long i;

    ck_assert_str_eq(ydoc_type_name(n), "mapping");
    ck_assert_str_eq(ydoc_type_name(ydoc_get(n, "a")), "sequence");
    ck_assert(!ydoc_int(ydoc_get(n, "a"), &i));
    ck_assert(!ydoc_is_null(n));
    ck_assert_ptr_null(ydoc_string(n));
    ck_assert_ptr_null(ydoc_string(NULL));
    ck_assert(!ydoc_int(NULL, &i));
}
END_TEST

START_TEST(scalar_keeps_embedded_nul)
{
    const struct ydoc_node *n = load("\"a\\0b\"");
    json_t *j;

    ck_assert_ptr_nonnull(n);
    ck_assert_uint_eq(n->len, 3);
    ck_assert_int_eq(memcmp(n->text, "a\0b", 4), 0);
    ck_assert_str_eq(ydoc_type_name(n), "string");
    ck_assert_ptr_null(ydoc_string(n)); /* never a truncated "a" */
    j = ydoc_to_json(n, "t.yaml", &diag);
    ck_assert_uint_eq(json_string_length(j), 3);
    json_decref(j);
}
END_TEST

START_TEST(empty_documents_are_null)
{
    /* libyaml places the empty scalar of a bare `---` after the marker */
    static const struct {
        const char *src;
        int line;
    } docs[] = {
        {"", 1}, {"# only a comment\n", 1}, {"---\n", 2}, {"--- ~\n...\n", 1}};

    for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
        const struct ydoc_node *n = load(docs[i].src);
        ck_assert_ptr_nonnull(n);
        ck_assert(ydoc_is_null(n));
        ck_assert_int_eq(n->line, docs[i].line);
    }
    ck_assert_uint_eq(diag.count, 0);
}
END_TEST

/* --- positions and lookup ------------------------------------------------- */

static const char doc_src[] = "name: demo\n"        /* 1 */
                              "inputSchema:\n"      /* 2 */
                              "  type: object\n"    /* 3 */
                              "  properties:\n"     /* 4 */
                              "    limit:\n"        /* 5 */
                              "      minimum: 1\n"  /* 6 */
                              "list: [a, {b: c}]\n" /* 7 */
                              "seq:\n"              /* 8 */
                              "  - x\n"             /* 9 */
                              "  -   y\n"           /* 10 */
                              "a/b: slash\n"        /* 11 */
                              "m~n: tilde\n";       /* 12 */

START_TEST(nodes_know_line_and_column)
{
    const struct ydoc_node *root = load(doc_src), *n;

    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(root->kind, YDOC_MAP);
    ck_assert_uint_eq(root->count, 6);
    ck_assert_int_eq(root->line, 1);
    ck_assert_int_eq(root->col, 1);
    ck_assert_int_eq(root->keys[1]->line, 2);
    ck_assert_str_eq(root->keys[1]->text, "inputSchema");

    n = ydoc_get(root, "name");
    ck_assert_int_eq(n->line, 1);
    ck_assert_int_eq(n->col, 7);
    n = ydoc_get(root, "inputSchema");
    ck_assert_int_eq(n->kind, YDOC_MAP);
    ck_assert_int_eq(n->line, 3);
    ck_assert_int_eq(n->col, 3);
    n = ydoc_get(ydoc_get(ydoc_get(n, "properties"), "limit"), "minimum");
    ck_assert_int_eq(n->line, 6);
    ck_assert_int_eq(n->col, 16);

    n = ydoc_get(root, "list");
    ck_assert_int_eq(n->kind, YDOC_SEQ);
    ck_assert_ptr_null(n->keys);
    ck_assert_uint_eq(n->count, 2);
    ck_assert_int_eq(n->col, 7);
    ck_assert_int_eq(n->values[1]->col, 11);
    ck_assert_int_eq(ydoc_get(n->values[1], "b")->col, 15);

    n = ydoc_get(root, "seq");
    ck_assert_int_eq(n->line, 9);
    ck_assert_int_eq(n->values[1]->line, 10);
    ck_assert_int_eq(n->values[1]->col, 7);
    ck_assert(n->values[1]->plain);
}
END_TEST

START_TEST(get_finds_keys_only_in_mappings)
{
    const struct ydoc_node *root = load("a: 1\n'b': 2\n\"c\\0d\": 3\n");

    ck_assert_ptr_nonnull(root);
    ck_assert_str_eq(ydoc_get(root, "a")->text, "1");
    ck_assert_str_eq(ydoc_get(root, "b")->text, "2");
    ck_assert_ptr_null(ydoc_get(root, "c")); /* key "c\0d" */
    ck_assert_ptr_null(ydoc_get(root, "z"));
    ck_assert_ptr_null(ydoc_get(NULL, "a"));
    ck_assert_ptr_null(ydoc_get(ydoc_get(root, "a"), "a"));
}
END_TEST

static const struct {
    const char *pointer;
    int line;
} pointer_cases[] = {
    {"", 1},
    {"/name", 1},
    {"/inputSchema/properties/limit/minimum", 6},
    {"/inputSchema/properties/limit/maximum", 5}, /* the parent's key */
    {"/inputSchema/nope/deeper", 2},
    {"/list/1/b", 7},
    {"/seq/1", 10},
    {"/seq/2", 8},
    {"/seq/01", 8},
    {"/seq/-1", 8},
    {"/seq/99999999999999999999999", 8},
    {"/a~1b", 11},
    {"/m~0n", 12},
    {"/a/b", 0},
    {"/m~2n", 0},
    {"/nope", 0},
    {"/nope/name", 0},
    {"name", 0},
};

START_TEST(line_at_follows_json_pointers)
{
    const struct ydoc_node *root = load(doc_src);

    ck_assert_ptr_nonnull(root);
    ck_assert_msg(
        ydoc_line_at(root, pointer_cases[_i].pointer) == pointer_cases[_i].line,
        "'%s' gave line %d, not %d", pointer_cases[_i].pointer,
        ydoc_line_at(root, pointer_cases[_i].pointer), pointer_cases[_i].line);
}
END_TEST

START_TEST(line_at_on_a_scalar_root)
{
    const struct ydoc_node *root = load("\n\nx\n");

    ck_assert_int_eq(ydoc_line_at(root, ""), 3);
    ck_assert_int_eq(ydoc_line_at(root, "/0"), 0);
    ck_assert_int_eq(ydoc_line_at(NULL, ""), 0);
}
END_TEST

/* --- JSON ----------------------------------------------------------------- */

START_TEST(to_json_converts_an_action)
{
    static const char src[] =
        "# a .jay-action\n"
        "name: search_orders\n"
        "description: \"Find orders: by customer, 'status' or date\"\n"
        "notes: >\n"
        "  folded text: with a colon\n"
        "  and \"quotes\"\n"
        "sideEffects: false\n"
        "inputSchema:\n"
        "  type: object\n"
        "  required: [customer]\n"
        "  properties:\n"
        "    customer: {type: string, minLength: 1}\n"
        "    limit:\n"
        "      type: integer\n"
        "      minimum: 1\n"
        "      maximum: 0x64\n"
        "      default: ~\n"
        "    ratio: {type: number, maximum: 1.5}\n"
        "    tags:\n"
        "      - 'true'\n"
        "      - \"42\"\n"
        "      - plain text\n"
        "      - []\n"
        "      - {}\n";
    static const char want[] =
        "{\"name\": \"search_orders\","
        " \"description\": \"Find orders: by customer, 'status' or date\","
        " \"notes\": \"folded text: with a colon and \\\"quotes\\\"\\n\","
        " \"sideEffects\": false,"
        " \"inputSchema\": {\"type\": \"object\", \"required\": [\"customer\"],"
        "  \"properties\": {"
        "   \"customer\": {\"type\": \"string\", \"minLength\": 1},"
        "   \"limit\": {\"type\": \"integer\", \"minimum\": 1,"
        "             \"maximum\": 100, \"default\": null},"
        "   \"ratio\": {\"type\": \"number\", \"maximum\": 1.5},"
        "   \"tags\": [\"true\", \"42\", \"plain text\", [], {}]}}}";
    const struct ydoc_node *root = load(src);
    json_t *got, *expected;

    ck_assert_ptr_nonnull(root);
    got = ydoc_to_json(root, "t.yaml", &diag);
    expected = json_loads(want, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_ptr_nonnull(expected);
    ck_assert(json_equal(got, expected));
    json_decref(got);
    json_decref(expected);
    ck_assert_uint_eq(diag.count, 0);
}
END_TEST

START_TEST(to_json_keeps_integers_apart_from_reals)
{
    const struct ydoc_node *root = load("[1, 1.0, 0o10, 9223372036854775808]");
    json_t *j = ydoc_to_json(root, "t.yaml", &diag);

    ck_assert_ptr_nonnull(j);
    ck_assert(json_is_integer(json_array_get(j, 0)));
    ck_assert(json_is_real(json_array_get(j, 1)));
    ck_assert_int_eq(json_integer_value(json_array_get(j, 2)), 8);
    ck_assert(json_is_real(json_array_get(j, 3)));
    json_decref(j);
}
END_TEST

START_TEST(to_json_refuses_non_finite_numbers)
{
    const struct ydoc_node *root =
        load("a: [1, 2]\nb:\n  c: x\n  d: [3, .inf]\n");

    ck_assert_ptr_nonnull(root);
    ck_assert_ptr_null(ydoc_to_json(root, "x.yaml", &diag));
    assert_one_problem("x.yaml", 4, "finite");
}
END_TEST

/* --- refusals ------------------------------------------------------------- */

static const struct {
    const char *src;
    int line;
    const char *word;
} refusal_cases[] = {
    {"a: 1\nb: *base\n", 2, "aliases are not allowed ('*base')"},
    {"- a\n- [*x]\n", 2, "aliases"},
    {"a: 1\nb: &base 1\n", 2, "anchors are not allowed ('&base')"},
    {"a: 1\nb: &x [1]\n", 2, "anchors"},
    {"&x {a: 1}\n", 1, "anchors"},
    {"a: !foo x\n", 1, "tags"},
    {"a: 1\nb: !!str 2\n", 2, "tags"},
    {"a: ! x\n", 1, "tags"},
    {"a: !!map {}\n", 1, "tags"},
    {"- 1\n- !!seq [2]\n", 2, "tags"},
    {"a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"},
    {"{x: 1, y: {p: 1, p: 2}}\n", 1, "duplicate"},
    {"a: 1\n'a': 2\n", 2, "duplicate"},
    {"? [a]\n: 1\n", 1, "keys must be scalars"},
    {"a: 1\n{b: 2}: 3\n", 2, "keys must be scalars"},
    {"a: 1\n---\nb: 2\n", 2, "one document"},
    {"--- a\n--- b\n", 2, "one document"},
    {"a:\n  b: 1\n c: 2\n", 3, "yaml syntax error: did not find expected key"},
    {"a: [1, 2\n", 2, "syntax error"},
    {"a: b: c\n", 1, "syntax error"},
    {"a: \"x\xff\"\n", 0, "invalid"},
};

START_TEST(hostile_input_is_refused)
{
    ck_assert_ptr_null(load(refusal_cases[_i].src));
    assert_one_problem("t.yaml", refusal_cases[_i].line,
                       refusal_cases[_i].word);
}
END_TEST

START_TEST(missing_file_is_refused)
{
    const char *path = "data/ydoc/no-such-file.yaml";

    ck_assert_ptr_null(ydoc_load_file(path, &arena, &diag));
    assert_one_problem(path, 0, "No such file");
}
END_TEST

START_TEST(file_size_is_bounded)
{
    size_t len = BOUND_YAML_BYTES;
    char *buf = xmalloc(len + 1);
    char path[32];
    const struct ydoc_node *n;

    /* exactly at the bound: a comment that fills it */
    memset(buf, 'x', len + 1);
    buf[0] = '#';
    buf[len - 1] = '\n';
    write_temp(path, buf, len);
    n = ydoc_load_file(path, &arena, &diag);
    unlink(path);
    ck_assert_ptr_nonnull(n);
    ck_assert(ydoc_is_null(n));

    /* one byte more */
    buf[len] = '\n';
    write_temp(path, buf, len + 1);
    ck_assert_ptr_null(ydoc_load_file(path, &arena, &diag));
    unlink(path);
    assert_one_problem(path, 0, "larger than");
    free(buf);
}
END_TEST

START_TEST(file_is_loaded)
{
    static const char src[] = "a:\n  - 1\n  - two\n";
    char path[32];
    const struct ydoc_node *root;

    write_temp(path, src, strlen(src));
    root = ydoc_load_file(path, &arena, &diag);
    unlink(path);
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(ydoc_line_at(root, "/a/1"), 3);
    ck_assert_str_eq(ydoc_string(ydoc_get(root, "a")->values[1]), "two");
}
END_TEST

/* --- limits --------------------------------------------------------------- */

/*
 * Documents nested `depth` collections deep, in each style; `line` is where
 * the collection at BOUND_YAML_DEPTH + 1 starts.
 */
static char *
nest_flow_seq(int depth)
{
    char *s = xmalloc((size_t)depth * 2 + 2);

    for (int i = 0; i < depth; i++) {
        s[i] = '[';
        s[depth + 1 + i] = ']';
    }
    s[depth] = '1';
    s[depth * 2 + 1] = '\0';
    return s;
}

static char *
nest_flow_map(int depth)
{
    char *s = xmalloc((size_t)depth * 5 + 2);
    char *p = s;

    for (int i = 0; i < depth; i++, p += 4)
        memcpy(p, "{a: ", 4);
    *p++ = '1';
    for (int i = 0; i < depth; i++)
        *p++ = '}';
    *p = '\0';
    return s;
}

static char *
nest_block_seq(int depth)
{
    char *s = xmalloc((size_t)depth * 2 + 2);

    for (int i = 0; i < depth; i++)
        memcpy(s + i * 2, "- ", 2);
    memcpy(s + depth * 2, "x", 2);
    return s;
}

/* One line per level, each indented one more: quadratic in size, so only a
 * thousand levels fit under BOUND_YAML_BYTES. */
static char *
nest_block_map(int depth)
{
    char *s = xmalloc((size_t)depth * ((size_t)depth + 7) / 2 + 1);
    char *p = s;

    for (int i = 0; i < depth; i++) {
        memset(p, ' ', (size_t)i);
        p += i;
        memcpy(p, "a:\n", 3);
        p += 3;
    }
    *p = '\0';
    return s;
}

static const struct {
    char *(*build)(int depth);
    int huge;      /* a depth far past the bound */
    int deep_line; /* line of the refusal */
} nest_cases[] = {
    {nest_flow_seq, 100000, 1},
    {nest_flow_map, 100000, 1},
    {nest_block_seq, 100000, 1},
    {nest_block_map, 1000, BOUND_YAML_DEPTH + 1},
};

START_TEST(depth_is_bounded)
{
    char *(*build)(int) = nest_cases[_i].build;
    char *ok = build(BOUND_YAML_DEPTH);
    char *deep = build(BOUND_YAML_DEPTH + 1);
    const struct ydoc_node *n;

    n = load(ok);
    ck_assert_ptr_nonnull(n);
    ck_assert_uint_eq(diag.count, 0);
    for (int i = 1; i < BOUND_YAML_DEPTH; i++)
        n = n->values[0];
    ck_assert_int_ne(n->kind, YDOC_SCALAR); /* the 32nd collection */
    ck_assert_int_eq(n->values[0]->kind, YDOC_SCALAR);

    ck_assert_ptr_null(load(deep));
    assert_one_problem("t.yaml", nest_cases[_i].deep_line, "nesting deeper");
    free(ok);
    free(deep);
}
END_TEST

START_TEST(huge_depth_fails_fast)
{
    char *src = nest_cases[_i].build(nest_cases[_i].huge);
    struct timespec t0;
    double took;

    ck_assert_uint_le(strlen(src), BOUND_YAML_BYTES);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_ptr_null(load(src));
    took = seconds_since(&t0);
    ck_assert_msg(took < 0.5, "took %.3f s", took);
    assert_one_problem("t.yaml", nest_cases[_i].deep_line, "nesting deeper");
    free(src);
}
END_TEST

/* A flow sequence of `n` scalars: n + 1 nodes. */
static char *
flow_seq_of(size_t n)
{
    char *s = xmalloc(n * 2 + 2);

    s[0] = '[';
    for (size_t i = 0; i < n; i++)
        memcpy(s + 1 + i * 2, "0,", 2);
    memcpy(s + n * 2, "]", 2); /* over the last comma */
    return s;
}

START_TEST(node_count_is_bounded)
{
    char *at_bound = flow_seq_of(BOUND_YAML_NODES - 1);
    char *over = flow_seq_of(BOUND_YAML_NODES + 1);
    const struct ydoc_node *n = load(at_bound);

    ck_assert_ptr_nonnull(n);
    ck_assert_uint_eq(n->count, BOUND_YAML_NODES - 1);
    ck_assert_ptr_null(load(over));
    assert_one_problem("t.yaml", 1, "more than 20000 nodes");
    free(at_bound);
    free(over);
}
END_TEST

START_TEST(buffer_size_is_bounded)
{
    size_t len = BOUND_YAML_BYTES + 1;
    char *buf = xmalloc(len);

    memset(buf, ' ', len);
    ck_assert_ptr_null(ydoc_load_buffer(buf, len, "b.yaml", &arena, &diag));
    assert_one_problem("b.yaml", 0, "larger than");
    free(buf);
}
END_TEST

Suite *
ydoc_suite(void)
{
    Suite *s = suite_create("ydoc");
    TCase *tc;

    tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, typing_follows_core_schema, 0,
                        (int)ARRAY_SIZE(typing_cases));
    tcase_add_test(tc, typing_needs_a_scalar);
    tcase_add_test(tc, scalar_keeps_embedded_nul);
    tcase_add_test(tc, empty_documents_are_null);
    tcase_add_test(tc, nodes_know_line_and_column);
    tcase_add_test(tc, get_finds_keys_only_in_mappings);
    tcase_add_loop_test(tc, line_at_follows_json_pointers, 0,
                        (int)ARRAY_SIZE(pointer_cases));
    tcase_add_test(tc, line_at_on_a_scalar_root);
    tcase_add_test(tc, to_json_converts_an_action);
    tcase_add_test(tc, to_json_keeps_integers_apart_from_reals);
    tcase_add_test(tc, file_is_loaded);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, hostile_input_is_refused, 0,
                        (int)ARRAY_SIZE(refusal_cases));
    tcase_add_test(tc, to_json_refuses_non_finite_numbers);
    tcase_add_test(tc, missing_file_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, depth_is_bounded, 0, (int)ARRAY_SIZE(nest_cases));
    tcase_add_loop_test(tc, huge_depth_fails_fast, 0,
                        (int)ARRAY_SIZE(nest_cases));
    tcase_add_test(tc, node_count_is_bounded);
    tcase_add_test(tc, file_size_is_bounded);
    tcase_add_test(tc, buffer_size_is_bounded);
    suite_add_tcase(s, tc);
    return s;
}
