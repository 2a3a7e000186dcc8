/*
 * check_yamlout.c - YAML writer: exact text for scalars and nested
 * documents, and a round trip of everything written through libyaml.
 *
 * The round trip uses a small libyaml event reader below (YAML 1.2 core
 * resolution of plain scalars), not ydoc, so this suite stands alone.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/yamlout.h"
#include "core/bounds.h"
#include "core/sbuf.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- reader ------------------------------------------------------------- */

static json_t *
rd_scalar(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    char *end;

    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(s, n);
    if (n == 0 || strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
        return json_null();
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
        return json_boolean(s[0] == 't');
    long long ll = strtoll(s, &end, 10);
    if (*end == '\0' && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return json_integer(ll);
    double d = strtod(s, &end);
    if (*end == '\0' && strpbrk(s, ".eE") != NULL)
        return json_real(d);
    return json_stringn(s, n);
}

/* One node into *out: 1, or 0 at the end of the enclosing collection, or
 * -1 on a parse error or anything yamlout never writes. */
static int
rd_node(yaml_parser_t *p, json_t **out)
{
    yaml_event_t ev;
    json_t *v = NULL, *k = NULL, *item = NULL;
    int rc = -1;

    *out = NULL;
    if (!yaml_parser_parse(p, &ev))
        return -1;
    switch (ev.type) {
    case YAML_SCALAR_EVENT:
        v = rd_scalar(&ev);
        rc = 1;
        break;
    case YAML_SEQUENCE_START_EVENT:
        v = json_array();
        while ((rc = rd_node(p, &item)) == 1)
            json_array_append_new(v, item);
        rc = rc == 0 ? 1 : -1;
        break;
    case YAML_MAPPING_START_EVENT:
        v = json_object();
        while ((rc = rd_node(p, &k)) == 1) {
            /* a key that resolves to a non-string is a quoting bug */
            if (!json_is_string(k) || rd_node(p, &item) != 1 ||
                json_object_get(v, json_string_value(k)) != NULL) {
                rc = -1;
                break;
            }
            json_object_set_new(v, json_string_value(k), item);
            json_decref(k);
            k = NULL;
        }
        rc = rc == 0 ? 1 : -1;
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        rc = 0;
        break;
    default:
        break;
    }
    yaml_event_delete(&ev);
    json_decref(k);
    if (rc != 1)
        json_decref(v);
    else
        *out = v;
    return rc;
}

static bool
rd_expect(yaml_parser_t *p, yaml_event_type_t type)
{
    yaml_event_t ev;
    bool ok;

    if (!yaml_parser_parse(p, &ev))
        return false;
    ok = ev.type == type;
    yaml_event_delete(&ev);
    return ok;
}

/* The one document in `text` as JSON, or NULL when libyaml rejects it. */
static json_t *
rd_document(const char *text)
{
    yaml_parser_t p;
    json_t *v = NULL;

    ck_assert(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    if (!rd_expect(&p, YAML_STREAM_START_EVENT) ||
        !rd_expect(&p, YAML_DOCUMENT_START_EVENT) || rd_node(&p, &v) != 1 ||
        !rd_expect(&p, YAML_DOCUMENT_END_EVENT) ||
        !rd_expect(&p, YAML_STREAM_END_EVENT)) {
        json_decref(v);
        v = NULL;
    }
    yaml_parser_delete(&p);
    return v;
}

/* Write every member of `doc` with yamlout_entry() at indent 0. */
static int
write_document(struct sbuf *sb, json_t *doc)
{
    const char *key;
    json_t *v;

    json_object_foreach(doc, key, v) {
        if (yamlout_entry(sb, 0, key, v) != 0)
            return -1;
    }
    return 0;
}

/* Written text equals `want` and reads back as `doc`. */
static void
check_document(json_t *doc, const char *want)
{
    struct sbuf sb;
    json_t *back;

    sbuf_init(&sb, 1 << 20);
    ck_assert_int_eq(write_document(&sb, doc), 0);
    if (want != NULL)
        ck_assert_str_eq(sb.buf, want);
    back = rd_document(sb.buf);
    ck_assert_msg(back != NULL, "libyaml rejects:\n%s", sb.buf);
    ck_assert_msg(json_equal(back, doc), "round trip differs:\n%s", sb.buf);
    json_decref(back);
    sbuf_release(&sb);
}

static json_t *
load(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, err.text);
    return v;
}

/* ---- scalars ------------------------------------------------------------ */

static const struct {
    const char *json;
    const char *yaml;
} scalars[] = {
    /* plain */
    {"\"hello\"", "hello"},
    {"\"hello world\"", "hello world"},
    {"\"a:b\"", "a:b"},
    {"\"a#b\"", "a#b"},
    {"\"x-y\"", "x-y"},
    {"\"+\"", "+"},
    {"\".\"", "."},
    {"\"yess\"", "yess"},
    {"\"back\\\\slash\"", "back\\slash"},
    {"\"say \\\"hi\\\"\"", "say \"hi\""},
    {"\"h\\u00e9llo \\u2713\"", "h\xc3\xa9llo \xe2\x9c\x93"},
    /* empty, reserved words in any case */
    {"\"\"", "\"\""},
    {"\"true\"", "\"true\""},
    {"\"False\"", "\"False\""},
    {"\"yes\"", "\"yes\""},
    {"\"No\"", "\"No\""},
    {"\"ON\"", "\"ON\""},
    {"\"off\"", "\"off\""},
    {"\"y\"", "\"y\""},
    {"\"N\"", "\"N\""},
    {"\"null\"", "\"null\""},
    {"\"NULL\"", "\"NULL\""},
    {"\"~\"", "\"~\""},
    {"\"<<\"", "\"<<\""},
    {"\"=\"", "\"=\""},
    {"\".inf\"", "\".inf\""},
    {"\".NaN\"", "\".NaN\""},
    /* numbers in disguise */
    {"\"12\"", "\"12\""},
    {"\"1.5\"", "\"1.5\""},
    {"\"-3\"", "\"-3\""},
    {"\"+1\"", "\"+1\""},
    {"\".5\"", "\".5\""},
    {"\"0x1F\"", "\"0x1F\""},
    {"\"1e3\"", "\"1e3\""},
    {"\"1_000\"", "\"1_000\""},
    {"\"1:30\"", "\"1:30\""},
    {"\"2024-01-01\"", "\"2024-01-01\""},
    /* leading indicators */
    {"\"- item\"", "\"- item\""},
    {"\"?x\"", "\"?x\""},
    {"\":x\"", "\":x\""},
    {"\",x\"", "\",x\""},
    {"\"[x\"", "\"[x\""},
    {"\"]\"", "\"]\""},
    {"\"{x\"", "\"{x\""},
    {"\"}\"", "\"}\""},
    {"\"#x\"", "\"#x\""},
    {"\"&a\"", "\"&a\""},
    {"\"*a\"", "\"*a\""},
    {"\"!tag\"", "\"!tag\""},
    {"\"|x\"", "\"|x\""},
    {"\">x\"", "\">x\""},
    {"\"'x\"", "\"'x\""},
    {"\"\\\"x\"", "\"\\\"x\""},
    {"\"%x\"", "\"%x\""},
    {"\"@x\"", "\"@x\""},
    {"\"`x\"", "\"`x\""},
    /* inner ": " and " #", trailing ':', edge spaces */
    {"\"a: b\"", "\"a: b\""},
    {"\"a #b\"", "\"a #b\""},
    {"\"key:\"", "\"key:\""},
    {"\" lead\"", "\" lead\""},
    {"\"trail \"", "\"trail \""},
    {"\"a: \\\"b\\\" \\\\\"", "\"a: \\\"b\\\" \\\\\""},
    /* line breaks and control characters */
    {"\"line1\\nline2\"", "\"line1\\nline2\""},
    {"\"tab\\there\"", "\"tab\\there\""},
    {"\"cr\\r\"", "\"cr\\r\""},
    {"\"\\u0001\"", "\"\\x01\""},
    {"\"del\\u007f\"", "\"del\\x7F\""},
    {"\"nul\\u0000byte\"", "\"nul\\0byte\""},
    {"\"nel\\u0085\"", "\"nel\\x85\""},
    {"\"ls\\u2028ps\\u2029\"", "\"ls\\u2028ps\\u2029\""},
    {"\"\\ufeffbom\"", "\"\\uFEFFbom\""},
    {"\"\\u00e9: x\"", "\"\xc3\xa9: x\""},
    /* numbers, booleans, null, empty collections */
    {"42", "42"},
    {"-7", "-7"},
    {"0", "0"},
    {"9223372036854775807", "9223372036854775807"},
    {"-9223372036854775808", "-9223372036854775808"},
    {"1.5", "1.5"},
    {"1.0", "1.0"},
    {"-0.0", "-0.0"},
    {"0.1", "0.1"},
    {"0.30000000000000004", "0.30000000000000004"},
    {"1e20", "1.0e+20"},
    {"1.5e-7", "1.5e-07"},
    {"123456789.125", "123456789.125"},
    {"true", "true"},
    {"false", "false"},
    {"null", "null"},
    {"{}", "{}"},
    {"[]", "[]"},
};

START_TEST(scalar_text)
{
    json_t *v = load(scalars[_i].json);
    struct sbuf sb;

    sbuf_init(&sb, 4096);
    ck_assert_int_eq(yamlout_scalar(&sb, v), 0);
    ck_assert_msg(strcmp(sb.buf, scalars[_i].yaml) == 0, "%s: got %s want %s",
                  scalars[_i].json, sb.buf, scalars[_i].yaml);
    /* yamlout_string agrees for strings a C string can hold */
    if (json_is_string(v) &&
        strlen(json_string_value(v)) == json_string_length(v)) {
        sbuf_reset(&sb);
        ck_assert_int_eq(yamlout_string(&sb, json_string_value(v)), 0);
        ck_assert_str_eq(sb.buf, scalars[_i].yaml);
    }
    sbuf_release(&sb);
    json_decref(v);
}
END_TEST

/* Each scalar as a value, and each string also as a key, reads back. */
START_TEST(scalar_round_trip)
{
    json_t *v = load(scalars[_i].json);
    json_t *doc = json_pack("{s:O}", "k", v);

    check_document(doc, NULL);
    json_decref(doc);
    if (json_is_string(v) &&
        strlen(json_string_value(v)) == json_string_length(v)) {
        doc = json_pack("{s:i}", json_string_value(v), 1);
        check_document(doc, NULL);
        json_decref(doc);
    }
    json_decref(v);
}
END_TEST

/* ---- documents ---------------------------------------------------------- */

START_TEST(nested_documents)
{
    static const struct {
        const char *json, *yaml;
    } docs[] = {
        {"{\"name\": \"shop.searchProducts\", \"description\": \"Search: by "
         "query\", \"sideEffects\": false, \"inputSchema\": {\"type\": "
         "\"object\", \"properties\": {\"query\": {\"type\": \"string\"}}, "
         "\"required\": [\"query\"]}, \"tags\": [], \"meta\": {}}",
         "name: shop.searchProducts\n"
         "description: \"Search: by query\"\n"
         "sideEffects: false\n"
         "inputSchema:\n"
         "  type: object\n"
         "  properties:\n"
         "    query:\n"
         "      type: string\n"
         "  required:\n"
         "    - query\n"
         "tags: []\n"
         "meta: {}\n"},
        /* mappings in sequences start on the dash line */
        {"{\"examples\": [{\"query\": \"hub\", \"limit\": 3}, {\"query\": "
         "\"yes\"}], \"list\": [{\"a\": {\"b\": 1}, \"c\": [1, {}]}]}",
         "examples:\n"
         "  - query: hub\n"
         "    limit: 3\n"
         "  - query: \"yes\"\n"
         "list:\n"
         "  - a:\n"
         "      b: 1\n"
         "    c:\n"
         "      - 1\n"
         "      - {}\n"},
        /* sequences in sequences, too */
        {"{\"matrix\": [[1, 2], [], [[\"x\"]]], \"on\": [null, 0.5]}",
         "matrix:\n"
         "  - - 1\n"
         "    - 2\n"
         "  - []\n"
         "  - - - x\n"
         "\"on\":\n"
         "  - null\n"
         "  - 0.5\n"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
        json_t *doc = load(docs[i].json);

        check_document(doc, docs[i].yaml);
        json_decref(doc);
    }
}
END_TEST

START_TEST(entry_at_indent)
{
    struct sbuf sb;
    json_t *v = load("{\"a\": [true]}");

    sbuf_init(&sb, 4096);
    ck_assert_int_eq(yamlout_entry(&sb, 4, "k", v), 0);
    ck_assert_str_eq(sb.buf, "    k:\n      a:\n        - true\n");
    sbuf_release(&sb);
    json_decref(v);
}
END_TEST

/* libyaml refuses implicit keys over 1024 characters: long keys go
 * explicit, also inside a sequence item. */
START_TEST(long_keys_are_explicit)
{
    char key[301];
    char *want;
    json_t *doc;

    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    doc = json_pack("{s:i}", key, 1);
    ck_assert_int_ne(asprintf(&want, "? %s\n: 1\n", key), -1);
    check_document(doc, want);
    free(want);
    json_decref(doc);

    doc = json_pack("{s:[{s:{s:i}, s:i}]}", "l", key, "x", 1, "z", 2);
    ck_assert_int_ne(asprintf(&want,
                              "l:\n  - ? %s\n    :\n      x: 1\n"
                              "    z: 2\n",
                              key),
                     -1);
    check_document(doc, want);
    free(want);
    json_decref(doc);
}
END_TEST

/* ---- limits and errors -------------------------------------------------- */

/* Every cap short of the full text fails with -1; the full one succeeds. */
START_TEST(cap_hit_fails)
{
    json_t *doc = load("{\"a\": {\"b\": [1, \"two: 2\", {\"c\": null}]}, "
                       "\"d\": 1.0}");
    struct sbuf sb;
    size_t full;

    sbuf_init(&sb, 4096);
    ck_assert_int_eq(write_document(&sb, doc), 0);
    full = sb.len;
    sbuf_release(&sb);
    for (size_t cap = 0; cap < full; cap++) {
        sbuf_init(&sb, cap);
        ck_assert_int_eq(write_document(&sb, doc), -1);
        sbuf_release(&sb);
    }
    sbuf_init(&sb, full);
    ck_assert_int_eq(write_document(&sb, doc), 0);
    sbuf_release(&sb);
    json_decref(doc);
}
END_TEST

static json_t *
nest(int levels)
{
    json_t *v = json_integer(1);

    for (int i = 0; i < levels; i++)
        v = json_pack("{s:o}", "a", v);
    return v;
}

/* A document at BOUND_YAML_DEPTH is written; one level more is refused. */
START_TEST(depth_is_bounded)
{
    json_t *ok = json_pack("{s:o}", "top", nest(BOUND_YAML_DEPTH - 1));
    json_t *deep = json_pack("{s:o}", "top", nest(BOUND_YAML_DEPTH));
    struct sbuf sb;

    check_document(ok, NULL);
    sbuf_init(&sb, 1 << 20);
    ck_assert_int_eq(write_document(&sb, deep), -1);
    sbuf_reset(&sb);
    ck_assert_int_eq(yamlout_entry(&sb, 2 * BOUND_YAML_DEPTH, "k", NULL), -1);
    ck_assert_int_eq(yamlout_entry(&sb, -2, "k", NULL), -1);
    sbuf_release(&sb);
    json_decref(ok);
    json_decref(deep);
}
END_TEST

START_TEST(bad_arguments)
{
    struct sbuf sb;
    json_t *arr = load("[1]");

    sbuf_init(&sb, 4096);
    ck_assert_int_eq(yamlout_scalar(&sb, arr), -1);
    ck_assert_int_eq(yamlout_string(&sb, NULL), -1);
    ck_assert_int_eq(yamlout_entry(&sb, 0, NULL, arr), -1);
    ck_assert_int_eq(yamlout_scalar(&sb, NULL), 0);
    ck_assert_str_eq(sb.buf, "null");
    /* invalid UTF-8 from a C string is replaced, keeping the output YAML */
    sbuf_reset(&sb);
    ck_assert_int_eq(yamlout_string(&sb, "a\xff\xc0\x80"), 0);
    ck_assert_str_eq(sb.buf, "\"a\\uFFFD\\uFFFD\\uFFFD\"");
    sbuf_release(&sb);
    json_decref(arr);
}
END_TEST

Suite *
yamlout_suite(void)
{
    Suite *s = suite_create("yamlout");
    TCase *tc = tcase_create("core");
    TCase *lim = tcase_create("limits");

    tcase_add_loop_test(tc, scalar_text, 0, (int)ARRAY_SIZE(scalars));
    tcase_add_loop_test(tc, scalar_round_trip, 0, (int)ARRAY_SIZE(scalars));
    tcase_add_test(tc, nested_documents);
    tcase_add_test(tc, entry_at_indent);
    tcase_add_test(tc, long_keys_are_explicit);
    suite_add_tcase(s, tc);
    tcase_add_test(lim, cap_hit_fails);
    tcase_add_test(lim, depth_is_bounded);
    tcase_add_test(lim, bad_arguments);
    suite_add_tcase(s, lim);
    return s;
}
