/*
 * check_jschema.c - the JSON Schema subset: which schemas are accepted, and
 * which instances pass, with the exact path and rule of each failure.
 *
 * The tables write JSON with single quotes so that rows stay readable;
 * load() turns them into double quotes (no row needs a literal ').
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/jschema.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *
load(const char *text)
{
    char *buf = strdup(text);
    json_error_t err;
    json_t *v;

    ck_assert_ptr_nonnull(buf);
    for (char *p = buf; *p != '\0'; p++) {
        if (*p == '\'')
            *p = '"';
    }
    v = json_loads(buf, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    ck_assert_msg(v != NULL, "bad test JSON %s: %s", buf, err.text);
    free(buf);
    return v;
}

/* Collects what jschema_check() reports. */
struct problems {
    int count;
    char pointer[2048]; /* of the first problem */
    char msg[256];
};

static void
collect(void *ctx, const char *pointer, const char *msg)
{
    struct problems *p = ctx;

    if (p->count++ == 0) {
        snprintf(p->pointer, sizeof(p->pointer), "%s", pointer);
        snprintf(p->msg, sizeof(p->msg), "%s", msg);
    }
}

static int
check_text(const char *schema_text, struct problems *p)
{
    json_t *schema = load(schema_text);
    int n;

    memset(p, 0, sizeof(*p));
    n = jschema_check(schema, collect, p);
    json_decref(schema);
    ck_assert_int_eq(n, p->count);
    return n;
}

/* --- jschema_validate() --------------------------------------------------- */

static const struct vrow {
    const char *schema;
    const char *instance;
    bool valid;
    const char *path;    /* of the failure */
    const char *rule;    /* of the failure */
    const char *message; /* NULL: not compared */
} vrows[] = {
/* clang-format off */
#define OK(s, i)            {s, i, true, NULL, NULL, NULL}
#define BAD(s, i, p, r)     {s, i, false, p, r, NULL}
#define BADM(s, i, p, r, m) {s, i, false, p, r, m}
/* clang-format on */
    /* type: integer vs number, no coercion */
    OK("{'type':'integer'}", "1"),
    OK("{'type':'integer'}", "1.0"),
    OK("{'type':'integer'}", "-0.0"),
    OK("{'type':'integer'}", "1e2"),
    OK("{'type':'integer'}", "9007199254740992.0"),
    BADM("{'type':'integer'}", "1.5", "", "type",
         "/: expected integer, got number (type)"),
    BAD("{'type':'integer'}", "'1'", "", "type"),
    BAD("{'type':'integer'}", "true", "", "type"),
    BAD("{'type':'integer'}", "1e300", "", "type"),
    OK("{'type':'number'}", "1"),
    OK("{'type':'number'}", "1.5"),
    BAD("{'type':'number'}", "'1'", "", "type"),
    BAD("{'type':'number'}", "true", "", "type"),
    BAD("{'type':'number'}", "null", "", "type"),
    OK("{'type':'string'}", "''"),
    BAD("{'type':'string'}", "1", "", "type"),
    OK("{'type':'boolean'}", "false"),
    BAD("{'type':'boolean'}", "0", "", "type"),
    OK("{'type':'null'}", "null"),
    BAD("{'type':'null'}", "0", "", "type"),
    OK("{'type':'object'}", "{}"),
    BAD("{'type':'object'}", "[]", "", "type"),
    OK("{'type':'array'}", "[]"),
    BAD("{'type':'array'}", "{}", "", "type"),
    OK("{'type':['null','string']}", "null"),
    OK("{'type':['null','string']}", "'a'"),
    BADM("{'type':['null','string']}", "1", "", "type",
         "/: expected string or null, got integer (type)"),
    BADM("{'properties':{'limit':{'type':'integer'}}}", "{'limit':'5'}",
         "/limit", "type", "/limit: expected integer, got string (type)"),
    /* type first: a later keyword does not hide a wrong type */
    BAD("{'minLength':3,'type':'string'}", "5", "", "type"),

    /* properties, required, additionalProperties */
    OK("{'properties':{'a':{'type':'string'}}}", "{}"),
    OK("{'properties':{'a':{'type':'string'}}}", "5"),
    OK("{'required':['query']}", "{'query':1}"),
    OK("{'required':['query']}", "'not an object'"),
    BADM("{'required':['query']}", "{'Query':1}", "", "required",
         "/: missing required property 'query' (required)"),
    OK("{'properties':{'size':{}},'additionalProperties':false}", "{'size':1}"),
    BADM("{'properties':{'size':{}},'additionalProperties':false}",
         "{'size':1,'colour':'red'}", "", "additionalProperties",
         "/: unexpected property 'colour' (additionalProperties)"),
    BAD("{'additionalProperties':false}", "{'a':1}", "",
        "additionalProperties"),
    OK("{'additionalProperties':true}", "{'a':1}"),
    OK("{'properties':{'a':{}},'additionalProperties':{'type':'integer'}}",
       "{'a':'x','b':1}"),
    BAD("{'properties':{'a':{}},'additionalProperties':{'type':'integer'}}",
        "{'a':'x','b':'y'}", "/b", "type"),

    /* nesting: the path names the deep value, escaped per RFC 6901 */
    BADM("{'properties':{'items':{'type':'array','items':"
         "{'properties':{'price':{'minimum':0}}}}}}",
         "{'items':[{'price':1},{'price':0},{'price':-1}]}", "/items/2/price",
         "minimum", "/items/2/price: must be >= 0 (minimum)"),
    BAD("{'properties':{'a/b':{'properties':{'m~n':{'type':'string'}}}}}",
        "{'a/b':{'m~n':1}}", "/a~1b/m~0n", "type"),

    /* enum and const: 1 and 1.0 are equal, even deep inside */
    OK("{'enum':['asc','desc']}", "'asc'"),
    BADM("{'enum':['asc','desc']}", "'up'", "", "enum",
         "/: must be one of [\"asc\",\"desc\"] (enum)"),
    OK("{'enum':[1,2]}", "1.0"),
    OK("{'enum':[1.0]}", "1"),
    BAD("{'enum':[1,2]}", "1.5", "", "enum"),
    BAD("{'enum':[1,2]}", "'1'", "", "enum"),
    BAD("{'enum':[1]}", "true", "", "enum"),
    OK("{'enum':[null,true]}", "true"),
    BAD("{'enum':[null,true]}", "false", "", "enum"),
    OK("{'enum':[[1,{'a':2}]]}", "[1.0,{'a':2.0}]"),
    BAD("{'enum':[[1,{'a':2}]]}", "[1,{'a':3}]", "", "enum"),
    OK("{'const':3}", "3.0"),
    BADM("{'const':3}", "3.5", "", "const", "/: must equal 3 (const)"),
    BAD("{'const':3}", "'3'", "", "const"),
    OK("{'const':{'a':[1]}}", "{'a':[1.0]}"),
    BAD("{'const':{'a':[1]}}", "{'a':[1],'b':1}", "", "const"),
    /* exact across integer and real: 2^53 + 1 is not 2^53 */
    BAD("{'const':9007199254740993}", "9007199254740992.0", "", "const"),

    /* items, minItems, maxItems */
    OK("{'items':{'type':'string'}}", "['a','b']"),
    OK("{'items':{'type':'string'}}", "'not an array'"),
    BAD("{'items':{'type':'string'}}", "['a',1]", "/1", "type"),
    OK("{'minItems':2}", "[1,2]"),
    BADM("{'minItems':2}", "[1]", "", "minItems",
         "/: must have at least 2 items (minItems)"),
    OK("{'maxItems':1}", "[]"),
    BAD("{'maxItems':1}", "[1,2]", "", "maxItems"),
    OK("{'minItems':1}", "''"),

    /* minimum, maximum: inclusive */
    OK("{'minimum':0}", "0"),
    OK("{'minimum':0}", "'x'"),
    BAD("{'minimum':0}", "-1", "", "minimum"),
    BAD("{'minimum':0}", "-0.5", "", "minimum"),
    OK("{'maximum':1.5}", "1.5"),
    OK("{'maximum':1.5}", "1"),
    BADM("{'maximum':1.5}", "2", "", "maximum", "/: must be <= 1.5 (maximum)"),
    BAD("{'minimum':9007199254740993}", "9007199254740992.0", "", "minimum"),

    /* minLength, maxLength: code points, not bytes */
    OK("{'minLength':5}", "'h\xc3\xa9llo'"),
    BADM("{'minLength':5}", "'hell'", "", "minLength",
         "/: must be at least 5 characters long (minLength)"),
    OK("{'maxLength':5}", "'h\xc3\xa9llo'"),
    BAD("{'maxLength':5}", "'h\xc3\xa9llo!'", "", "maxLength"),
    OK("{'maxLength':2}", "'\xe6\x97\xa5\xe6\x9c\xac'"),
    BAD("{'maxLength':2}", "'\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e'", "",
        "maxLength"),
    OK("{'maxLength':1}", "'\xf0\x9f\x98\x80'"),
    OK("{'maxLength':1}", "12345"),

    /* pattern: POSIX ERE, unanchored unless the pattern says so */
    OK("{'pattern':'^[a-z]+$'}", "'abc'"),
    BADM("{'pattern':'^[a-z]+$'}", "'abc1'", "", "pattern",
         "/: must match pattern '^[a-z]+$' (pattern)"),
    OK("{'pattern':'b'}", "'abc'"),
    BAD("{'pattern':'^b'}", "'abc'", "", "pattern"),
    OK("{'pattern':'^[[:digit:]]{3}$'}", "'123'"),
    BAD("{'pattern':'^[[:digit:]]{3}$'}", "'12a'", "", "pattern"),
    BAD("{'pattern':'a'}", "'a\\u0000b'", "", "pattern"),
    OK("{'pattern':'a'}", "5"),

    /* anyOf */
    OK("{'properties':{'x':{'anyOf':[{'type':'string'},"
       "{'type':'integer','minimum':0}]}}}",
       "{'x':'a'}"),
    OK("{'properties':{'x':{'anyOf':[{'type':'string'},"
       "{'type':'integer','minimum':0}]}}}",
       "{'x':3}"),
    BADM("{'properties':{'x':{'anyOf':[{'type':'string'},"
         "{'type':'integer','minimum':0}]}}}",
         "{'x':-1}", "/x", "anyOf",
         "/x: matches none of the anyOf alternatives (anyOf)"),
    BAD("{'items':{'anyOf':[{'items':{'type':'string'}}]}}", "[['a'],[1]]",
        "/1", "anyOf"),

    /* annotations constrain nothing */
    OK("{'description':'d','title':'t','default':1,'examples':[1],"
       "'$comment':'c','format':'email'}",
       "'not an email'"),
    OK("{}", "[{'anything':null}]"),
#undef OK
#undef BAD
#undef BADM
};

START_TEST(validate_table)
{
    const struct vrow *r = &vrows[_i];
    json_t *schema = load(r->schema), *instance = load(r->instance);
    struct problems p;
    struct status_error err = {0};
    int rc;

    /* every schema here is also one jschema_check() accepts */
    ck_assert_msg(check_text(r->schema, &p) == 0, "%s: %s %s", r->schema,
                  p.pointer, p.msg);
    rc = jschema_validate(schema, instance, &err);
    ck_assert_msg(rc == (r->valid ? 0 : -1), "row %d %s %s: rc %d (%s)", _i,
                  r->schema, r->instance, rc, err.text);
    if (r->valid) {
        /* a valid instance leaves the error alone, also anyOf's misses */
        ck_assert_int_eq(err.code, ST_OK);
        ck_assert_ptr_null(err.rule);
        ck_assert_str_eq(err.path, "");
    } else {
        ck_assert_int_eq(err.code, ST_SCHEMA);
        ck_assert_ptr_nonnull(err.rule);
        ck_assert_str_eq(err.path, r->path);
        ck_assert_str_eq(err.rule, r->rule);
        if (r->message != NULL)
            ck_assert_str_eq(err.text, r->message);
        ck_assert_int_eq(err.retry_after_s, 0);
    }
    json_decref(schema);
    json_decref(instance);
}
END_TEST

START_TEST(validate_without_error)
{
    json_t *schema = load("{'type':'string'}"), *good = load("'x'");
    json_t *bad = load("1");

    ck_assert_int_eq(jschema_validate(schema, good, NULL), 0);
    ck_assert_int_eq(jschema_validate(schema, bad, NULL), -1);
    json_decref(schema);
    json_decref(good);
    json_decref(bad);
}
END_TEST

START_TEST(validate_cuts_long_paths_on_utf8_boundary)
{
    char name[601] = "";
    struct status_error err = {0};
    json_t *schema, *instance, *check;

    /* 300 two-byte characters: far more than err.path holds */
    for (size_t i = 0; i < 300; i++)
        memcpy(name + 2 * i, "\xc3\xa9", 3);
    schema = json_pack("{s:{s:{s:s}}}", "properties", name, "type", "string");
    instance = json_pack("{s:i}", name, 1);
    ck_assert_int_eq(jschema_validate(schema, instance, &err), -1);
    ck_assert_int_eq(err.code, ST_SCHEMA);
    ck_assert_str_eq(err.rule, "type");
    ck_assert_uint_lt(strlen(err.path), sizeof(err.path));
    ck_assert_ptr_nonnull(strstr(err.path, "..."));
    ck_assert_uint_lt(strlen(err.text), SCHEMA_MESSAGE_MAX);
    ck_assert_str_eq(err.text + strlen(err.text) - 3, "...");
    /* json_string() refuses invalid UTF-8: both must survive the cut */
    check = json_string(err.path);
    ck_assert_ptr_nonnull(check);
    json_decref(check);
    check = json_string(err.text);
    ck_assert_ptr_nonnull(check);
    json_decref(check);
    json_decref(schema);
    json_decref(instance);
}
END_TEST

START_TEST(validate_fails_closed_on_unchecked_schema)
{
    json_t *schema = load("{'properties':{'a':5}}");
    json_t *instance = load("{'a':1}");
    struct status_error err = {0};

    ck_assert_int_eq(jschema_validate(schema, instance, &err), -1);
    ck_assert_int_eq(err.code, ST_SCHEMA);
    ck_assert_str_eq(err.path, "/a");
    ck_assert_str_eq(err.rule, "schema");
    ck_assert_str_eq(err.text, "/a: the schema here is not usable (schema)");
    json_decref(schema);
    json_decref(instance);
}
END_TEST

/* First error wins: a violation found later adds nothing to an error. */
START_TEST(validate_keeps_an_earlier_error)
{
    json_t *schema = load("{'properties':{'a':{'type':'string'}}}");
    json_t *instance = load("{'a':1}");
    struct status_error err = {0};

    status_set(&err, ST_BAD_REQUEST, "first");
    ck_assert_int_eq(jschema_validate(schema, instance, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_str_eq(err.text, "first");
    ck_assert_ptr_null(err.rule);
    ck_assert_str_eq(err.path, "");
    json_decref(schema);
    json_decref(instance);
}
END_TEST

/* --- jschema_check() ------------------------------------------------------ */

static const struct crow {
    const char *schema;
    int problems;
    const char *pointer; /* of the first problem */
    const char *msg;     /* prefix of the first problem's message */
} crows[] = {
    {"{'type':'object','properties':{'q':{'type':['string','null'],"
     "'minLength':1,'maxLength':9,'pattern':'^a','enum':['a'],'const':'a',"
     "'description':'d','title':'t','$comment':'c','format':'f',"
     "'default':'a','examples':['a']},'n':{'type':'array','items':{},"
     "'minItems':0,'maxItems':0},'m':{'minimum':1,'maximum':1.0}},"
     "'required':['q'],'additionalProperties':{'anyOf':[{}]}}",
     0, NULL, NULL},
    {"[]", 1, "", "schema must be an object"},
    {"true", 1, "", "schema must be an object"},

    /* keywords we do not enforce are refused, never ignored */
    {"{'oneOf':[]}", 1, "/oneOf", "unsupported keyword 'oneOf'"},
    {"{'allOf':[{}]}", 1, "/allOf", "unsupported keyword 'allOf'"},
    {"{'$ref':'#/x'}", 1, "/$ref", "unsupported keyword '$ref'"},
    {"{'patternProperties':{}}", 1, "/patternProperties",
     "unsupported keyword 'patternProperties'"},
    {"{'if':{}}", 1, "/if", "unsupported keyword 'if'"},
    {"{'not':{}}", 1, "/not", "unsupported keyword 'not'"},
    {"{'$schema':'x'}", 1, "/$schema", "unsupported keyword '$schema'"},
    {"{'items':[{}]}", 1, "/items", "tuple form of 'items' is not supported"},
    {"{'oneOf':[],'allOf':[]}", 2, "/oneOf", "unsupported keyword 'oneOf'"},
    {"{'properties':{'a/b':{'properties':{'m~n':{'not':{}}}}}}", 1,
     "/properties/a~1b/properties/m~0n/not", "unsupported keyword 'not'"},

    /* wrong-typed values */
    {"{'type':5}", 1, "/type",
     "'type' must be a type name or a non-empty array of type names"},
    {"{'type':[]}", 1, "/type", "'type' must be"},
    {"{'type':'int'}", 1, "/type", "unknown type 'int'"},
    {"{'type':['string','int']}", 1, "/type/1", "unknown type 'int'"},
    {"{'type':['string','string']}", 1, "/type/1", "duplicate type 'string'"},
    {"{'type':['string',1]}", 1, "/type/1", "type name must be a string"},
    {"{'properties':[]}", 1, "/properties",
     "'properties' must be an object of schemas"},
    {"{'properties':{'x':5}}", 1, "/properties/x", "schema must be an object"},
    {"{'required':'x'}", 1, "/required",
     "'required' must be an array of property names"},
    {"{'required':[1]}", 1, "/required/0", "property name must be a string"},
    {"{'required':['a','b','a']}", 1, "/required/2",
     "duplicate property name 'a'"},
    {"{'additionalProperties':'no'}", 1, "/additionalProperties",
     "'additionalProperties' must be a boolean or a schema"},
    {"{'additionalProperties':{'oneOf':[]}}", 1, "/additionalProperties/oneOf",
     "unsupported keyword 'oneOf'"},
    {"{'enum':[]}", 1, "/enum", "'enum' must be a non-empty array"},
    {"{'enum':3}", 1, "/enum", "'enum' must be a non-empty array"},
    {"{'items':5}", 1, "/items", "schema must be an object"},
    {"{'items':{'allOf':[]}}", 1, "/items/allOf", "unsupported keyword"},
    {"{'minItems':-1}", 1, "/minItems",
     "'minItems' must be a non-negative integer"},
    {"{'maxItems':'1'}", 1, "/maxItems", "'maxItems' must be"},
    {"{'minLength':1.5}", 1, "/minLength", "'minLength' must be"},
    {"{'maxLength':null}", 1, "/maxLength", "'maxLength' must be"},
    {"{'minimum':'0'}", 1, "/minimum", "'minimum' must be a number"},
    {"{'maximum':true}", 1, "/maximum", "'maximum' must be a number"},
    {"{'pattern':5}", 1, "/pattern", "'pattern' must be a string"},
    {"{'pattern':'('}", 1, "/pattern", "invalid pattern: "},
    {"{'pattern':'[[:nope:]]'}", 1, "/pattern", "invalid pattern: "},
    {"{'pattern':'a\\u0000b'}", 1, "/pattern", "'pattern' contains a NUL"},
    {"{'anyOf':[]}", 1, "/anyOf",
     "'anyOf' must be a non-empty array of schemas"},
    {"{'anyOf':{}}", 1, "/anyOf", "'anyOf' must be"},
    {"{'anyOf':[{},5]}", 1, "/anyOf/1", "schema must be an object"},
    {"{'description':5}", 1, "/description", "'description' must be a string"},
    {"{'title':[]}", 1, "/title", "'title' must be a string"},
    {"{'$comment':1}", 1, "/$comment", "'$comment' must be a string"},
    {"{'format':{}}", 1, "/format", "'format' must be a string"},

    /* bounds that no value can satisfy */
    {"{'minimum':2,'maximum':1.5}", 1, "/minimum",
     "'minimum' is greater than 'maximum'"},
    {"{'maxLength':2,'minLength':3}", 1, "/minLength",
     "'minLength' is greater than 'maxLength'"},
    {"{'properties':{'a':{'minItems':3,'maxItems':2}}}", 1,
     "/properties/a/minItems", "'minItems' is greater than 'maxItems'"},
};

START_TEST(check_table)
{
    const struct crow *r = &crows[_i];
    struct problems p;

    ck_assert_msg(check_text(r->schema, &p) == r->problems,
                  "%s: %d problems, first %s: %s", r->schema, p.count,
                  p.pointer, p.msg);
    if (r->problems > 0) {
        ck_assert_str_eq(p.pointer, r->pointer);
        ck_assert_msg(strncmp(p.msg, r->msg, strlen(r->msg)) == 0,
                      "%s: '%s' does not start with '%s'", r->schema, p.msg,
                      r->msg);
    }
}
END_TEST

/* {"properties":{"a": ... {} ...}} with `levels` schemas in all. */
static json_t *
nested_schema(int levels)
{
    json_t *schema = json_object();

    for (int i = 1; i < levels; i++)
        schema = json_pack("{s:{s:o}}", "properties", "a", schema);
    return schema;
}

START_TEST(check_depth_cap)
{
    char pointer[1024] = "";
    struct problems p = {0};
    json_t *ok = nested_schema(BOUND_SCHEMA_DEPTH);
    json_t *deep = nested_schema(BOUND_SCHEMA_DEPTH + 1);
    json_t *instance = json_object();

    ck_assert_int_eq(jschema_check(ok, collect, &p), 0);
    ck_assert_int_eq(jschema_check(deep, collect, &p), 1);
    for (int i = 0; i < BOUND_SCHEMA_DEPTH; i++)
        memcpy(pointer + 13 * i, "/properties/a", 14);
    ck_assert_str_eq(p.pointer, pointer);
    ck_assert_str_eq(p.msg, "schema nested deeper than 32 levels");
    /* an instance deeper than the schema is fine: checking stops there */
    for (int i = 0; i < 40; i++)
        instance = json_pack("{s:o}", "a", instance);
    ck_assert_int_eq(jschema_validate(ok, instance, NULL), 0);
    json_decref(ok);
    json_decref(deep);
    json_decref(instance);
}
END_TEST

START_TEST(check_pattern_length_cap)
{
    char pattern[BOUND_PATTERN_LEN + 2];
    struct problems p = {0};
    json_t *schema;

    memset(pattern, 'a', BOUND_PATTERN_LEN);
    pattern[BOUND_PATTERN_LEN] = '\0';
    schema = json_pack("{s:s}", "pattern", pattern);
    ck_assert_int_eq(jschema_check(schema, collect, &p), 0);
    json_decref(schema);
    pattern[BOUND_PATTERN_LEN] = 'a';
    pattern[BOUND_PATTERN_LEN + 1] = '\0';
    schema = json_pack("{s:s}", "pattern", pattern);
    ck_assert_int_eq(jschema_check(schema, collect, &p), 1);
    ck_assert_str_eq(p.pointer, "/pattern");
    ck_assert_str_eq(p.msg, "'pattern' is longer than 1024 bytes");
    json_decref(schema);
}
END_TEST

/* A short pattern whose counted repetitions regcomp would expand past
 * gigabytes is refused before regcomp sees it; patterns that repeat
 * modestly still compile. (Each case would take minutes and GBs if it
 * reached regcomp: the test finishing is part of what it checks.) */
START_TEST(check_pattern_cost_cap)
{
    static const struct {
        const char *pattern;
        bool refused;
    } cases[] = {
        {"(((a{0,255}){0,255}){0,255})", true},
        {"((a{50}){50}){10}", true},
        {"(x{1000}|y){1000}", true},
        {"[a-z]{1,20000}", true},   /* 3 GB in regcomp */
        {"a{1,4000}", true},        /* 128 MB */
        {"a{1,501}", false},        /* 500 optional copies: the range cap */
        {"a{1,502}", true},
        {"a{20000}", true},         /* past the cost cap, though cheap */
        {"[a-z]{10000}", false},    /* the cost cap */
        {"((ab)+){100}", false},
        {"^[[:digit:]]{3}-[[:alpha:]]{2,8}$", false},
        {"a)b{3}", false},          /* a stray ')' is a character */
        {"\\({9999}", false},
        {"(a{100}){100}", false},   /* 10000 */
        {"((a{100}){100}){3}", true},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct problems p = {0};
        json_t *schema = json_pack("{s:s}", "pattern", cases[i].pattern);
        int n = jschema_check(schema, collect, &p);
        if (cases[i].refused) {
            ck_assert_msg(n == 1 && strstr(p.msg, "repeats too much"),
                          "%s: %d problems: %s", cases[i].pattern, n, p.msg);
        } else {
            ck_assert_msg(n == 0 || !strstr(p.msg, "repeats too much"),
                          "%s refused: %s", cases[i].pattern, p.msg);
        }
        json_decref(schema);
    }
}
END_TEST

START_TEST(check_cuts_long_pointers_on_utf8_boundary)
{
    char name[1501] = "";
    struct problems p = {0};
    json_t *schema, *check;

    /* 500 three-byte characters: longer than any pointer we build */
    for (size_t i = 0; i < 500; i++)
        memcpy(name + 3 * i, "\xe6\x97\xa5", 4);
    schema = json_pack("{s:{s:{s:{s:{s:{}}}}}}", "properties", name,
                       "properties", name, "oneOf");
    ck_assert_int_eq(jschema_check(schema, collect, &p), 1);
    ck_assert_uint_lt(strlen(p.pointer), 1100);
    ck_assert_str_eq(p.pointer + strlen(p.pointer) - 3, "...");
    check = json_string(p.pointer);
    ck_assert_ptr_nonnull(check);
    json_decref(check);
    json_decref(schema);
}
END_TEST

Suite *
jschema_suite(void)
{
    Suite *s = suite_create("jschema");
    TCase *tc = tcase_create("validate");

    tcase_add_loop_test(tc, validate_table, 0, (int)ARRAY_SIZE(vrows));
    tcase_add_test(tc, validate_without_error);
    tcase_add_test(tc, validate_keeps_an_earlier_error);
    tcase_add_test(tc, validate_cuts_long_paths_on_utf8_boundary);
    tcase_add_test(tc, validate_fails_closed_on_unchecked_schema);
    suite_add_tcase(s, tc);
    tc = tcase_create("check");
    tcase_add_loop_test(tc, check_table, 0, (int)ARRAY_SIZE(crows));
    tcase_add_test(tc, check_depth_cap);
    tcase_add_test(tc, check_pattern_length_cap);
    tcase_add_test(tc, check_pattern_cost_cap);
    tcase_add_test(tc, check_cuts_long_pointers_on_utf8_boundary);
    suite_add_tcase(s, tc);
    return s;
}
