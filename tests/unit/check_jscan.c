/*
 * check_jscan.c - jscan reads what jansson reads and refuses what it
 * refuses, with the same words at the same place; jscan_write and jsonout
 * write what json_dumps writes; every allocation may fail cleanly.
 *
 * Every table row is also run through jansson itself (agree()), so a row
 * states both what we expect and that it is what jansson does.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/jscan.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "../fuzz/too_deep.h"

#include <check.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_FLAGS (APP_JSON_FLAGS | JSON_ENCODE_ANY)

/* Modes of the tables: the parse flags, and the request path's depth
 * (32 brackets) unless JSCAN_DEPTH_SCALARS asks for jansson's 2048. */
#define M_OBJ  0u
#define M_ANY  JSCAN_ANY
#define M_DUPS JSCAN_DUPLICATES_OK

static void
setup(void)
{
    memlimit_install();
    memlimit_reset(0);
}

static void
teardown(void)
{
    memlimit_fail_hook = NULL;
}

/* The text json_dumps() writes for v; the caller frees it. */
static char *
dumped(const json_t *v)
{
    char *t = json_dumps(v, DUMP_FLAGS);

    ck_assert_ptr_nonnull(t);
    return t;
}

/* Strings compared without quoting them whole in the failure. */
#define ASSERT_SAME(got, want)                                                 \
    ck_assert_msg(strcmp(got, want) == 0, "'%.200s' is not '%.200s'", got, want)

/*
 * Parse with jscan and with jansson (same flags, same depth rule) and
 * check that they agree: both refuse with the same message, line, column
 * and position, or both accept and jscan's value, jscan_write() and
 * jsonout_dumps() all come out as jansson's. Returns jscan's result, with
 * the doc in `doc` (from `a`) and the error in `err`.
 */
static int
agree(const char *in, size_t len, unsigned flags, struct arena *a,
      struct jscan_doc *doc, struct status_error *err)
{
    int depth = flags & JSCAN_DEPTH_SCALARS ? JSON_PARSER_MAX_DEPTH
                                            : BOUND_JSON_DEPTH;
    size_t jflags = (flags & JSCAN_ANY ? JSON_DECODE_ANY : 0) |
                    (flags & JSCAN_DUPLICATES_OK ? 0 : JSON_REJECT_DUPLICATES);
    bool deep = !(flags & JSCAN_DEPTH_SCALARS) && too_deep(in, len, depth);
    json_error_t jerr;
    json_t *jv = deep ? NULL : json_loadb(in, len, jflags, &jerr);
    int rc = jscan_parse(in, len, flags, depth, a, doc, err);

    ck_assert_msg((rc == 0) == (jv != NULL), "'%.*s': jansson %s, jscan %s",
                  (int)(len > 200 ? 200 : len), in, jv ? "accepts" : jerr.text,
                  rc == 0 ? "accepts" : err->text);
    if (rc != 0) {
        if (!deep) {
            ck_assert_str_eq(doc->fail.what, jerr.text);
            ck_assert_int_eq(doc->fail.line, jerr.line);
            ck_assert_int_eq(doc->fail.column, jerr.column);
            ck_assert_int_eq((int)doc->fail.offset, jerr.position);
        }
        return rc;
    }
    {
        struct status_error e = {0};
        json_t *sv = jscan_to_json(doc, 0, &e);
        char *want, *got, *out;
        struct sbuf sb;

        ck_assert_ptr_nonnull(sv);
        ck_assert(json_equal(jv, sv));
        want = dumped(jv);
        got = dumped(sv);
        ASSERT_SAME(got, want);
        sbuf_init(&sb, JSONOUT_UNBOUNDED);
        ck_assert_int_eq(jscan_write(doc, 0, &sb), 0);
        ASSERT_SAME(sb.buf, want);
        sbuf_release(&sb);
        out = jsonout_dumps(jv, DUMP_FLAGS, JSONOUT_UNBOUNDED, NULL);
        ck_assert_ptr_nonnull(out);
        ASSERT_SAME(out, want);
        free(out);
        free(got);
        free(want);
        json_decref(sv);
        json_decref(jv);
    }
    return rc;
}

/* --- what is accepted, and how it is written ------------------------------ */

static const struct {
    unsigned flags;
    const char *in;
    size_t len;      /* 0: strlen(in) */
    const char *out; /* json_dumps(value, APP_JSON_FLAGS | JSON_ENCODE_ANY) */
} accepted[] = {
    {M_OBJ, "{}", 0, "{}"},
    {M_OBJ, "[]", 0, "[]"},
    {M_OBJ, " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\":{ } }\n", 0,
     "{\"a\":[1,2],\"b\":{}}"},
    {M_ANY, "\"x\"", 0, "\"x\""},
    {M_ANY, "  true ", 0, "true"},
    {M_ANY, "false", 0, "false"},
    {M_ANY, "null", 0, "null"},
    /* numbers: "-0" is the integer 0, reals as "%.15g" writes them */
    {M_ANY, "-0", 0, "0"},
    {M_ANY, "-0.0", 0, "-0.0"},
    {M_ANY, "0e5", 0, "0.0"},
    {M_ANY, "1E2", 0, "100.0"},
    {M_ANY, "1e-5", 0, "1e-5"},
    {M_ANY, "0.1", 0, "0.1"},
    {M_ANY, "49.99", 0, "49.99"},
    {M_ANY, "10.50", 0, "10.5"},
    {M_ANY, "1.5e+300", 0, "1.5e300"},
    {M_ANY, "123456789012345678", 0, "123456789012345678"},
    {M_ANY, "9223372036854775807", 0, "9223372036854775807"},
    {M_ANY, "-9223372036854775808", 0, "-9223372036854775808"},
    {M_ANY, "0.30000000000000004", 0, "0.3"},
    {M_ANY, "12345678901234567890.5", 0, "1.23456789012346e19"},
    {M_ANY, "1e-400", 0, "0.0"}, /* underflow is fine, as for jansson */
    {M_ANY, "-1e-400", 0, "-0.0"},
    {M_ANY, "2.2250738585072011e-308", 0, "2.2250738585072e-308"},
    {M_ANY, "1.7976931348623157e308", 0, "1.79769313486232e308"},
    /* strings: escapes come back as jansson writes them */
    {M_ANY, "\"\\u00e9\\/\\u001f\\b\\f\\n\\r\\t\\\"\\\\\"", 0,
     "\"\xc3\xa9/\\u001F\\b\\f\\n\\r\\t\\\"\\\\\""},
    {M_ANY, "\"\\ud83d\\ude00 \\uD83D\\uDE00\"", 0,
     "\"\xf0\x9f\x98\x80 \xf0\x9f\x98\x80\""},
    {M_ANY, "\"\\u0041\\u00410\"", 0, "\"AA0\""},
    {M_ANY, "\"\x7f \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf\"", 0,
     "\"\x7f \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf\""},
    {M_ANY, "\"\\u0001\\u001F\"", 0, "\"\\u0001\\u001F\""},
    /* jansson skips one NUL byte right after a number or a name */
    {M_OBJ, "[1\0,true\0]", 10, "[1,true]"},
    {M_ANY, "2.5\0", 4, "2.5"},
    /* repeated keys, when allowed: the first place, the last value */
    {M_DUPS, "{\"a\":1,\"b\":2,\"a\":3}", 0, "{\"a\":3,\"b\":2}"},
    {M_DUPS, "{\"a\":1,\"\\u0061\":[2]}", 0, "{\"a\":[2]}"},
};

START_TEST(accepted_as_jansson)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    size_t len = accepted[_i].len ? accepted[_i].len : strlen(accepted[_i].in);
    struct sbuf sb;

    arena_init(&a);
    ck_assert_int_eq(
        agree(accepted[_i].in, len, accepted[_i].flags, &a, &doc, &err), 0);
    sbuf_init(&sb, JSONOUT_UNBOUNDED);
    ck_assert_int_eq(jscan_write(&doc, 0, &sb), 0);
    ck_assert_str_eq(sb.buf, accepted[_i].out);
    sbuf_release(&sb);
    arena_release(&a);
}
END_TEST

/* --- what is refused, and what it says ------------------------------------ */

static const struct {
    unsigned flags;
    const char *in;
    size_t len;       /* 0: strlen(in) */
    const char *what; /* in doc.fail.what */
    int line, column;
} refused[] = {
    {M_OBJ, "1", 0, "'[' or '{' expected near '1'", 1, 1},
    {M_OBJ, "\f[]", 0, "'[' or '{' expected", 1, 1},
    {M_ANY, " ", 0, "unexpected token near end of file", 1, 1},
    {M_OBJ, "{\"query\":}", 0, "unexpected token near '}'", 1, 10},
    {M_OBJ, "{\"a\":1,\"a\":2}", 0, "duplicate object key near '\"a\"'", 1, 10},
    {M_OBJ, "{\"a\":1,\"\\u0061\":2}", 0, "duplicate object key", 1, 15},
    {M_OBJ, "{\n  \"a\": 1,\n  \"a\": 2\n}", 0, "duplicate object key", 3, 5},
    /* UTF-16 surrogates and NUL */
    {M_OBJ, "[\"\\ud800\"]", 0, "invalid Unicode '\\uD800'", 1, 9},
    {M_OBJ, "[\"\\udc00\"]", 0, "invalid Unicode '\\uDC00'", 1, 9},
    {M_OBJ, "[\"\\ud800\\u0041\"]", 0, "invalid Unicode '\\uD800\\u0041'", 1,
     15},
    {M_OBJ, "[\"\\ud800\\x\"]", 0, "invalid escape", 1, 10},
    {M_OBJ, "[\"a\\u0000\"]", 0, "\\u0000 is not allowed", 1, 10},
    {M_OBJ, "{\"\\u0000\":1}", 0, "NUL byte in object key not supported", 1, 9},
    /* UTF-8: bad, overlong, a surrogate, past U+10FFFF, stray, cut */
    {M_OBJ, "[\"\xc3\x28\"]", 0, "unable to decode byte 0xc3 near '\"'", 1, 2},
    {M_OBJ, "[\"\xc0\x80\"]", 0, "unable to decode byte 0xc0", 1, 2},
    {M_OBJ, "[\"\xe0\x80\x80\"]", 0, "unable to decode byte 0xe0", 1, 2},
    {M_OBJ, "[\"\xed\xa0\x80\"]", 0, "unable to decode byte 0xed", 1, 2},
    {M_OBJ, "[\"\xf4\x90\x80\x80\"]", 0, "unable to decode byte 0xf4", 1, 2},
    {M_OBJ, "[\"\x80\"]", 0, "unable to decode byte 0x80", 1, 2},
    {M_OBJ, "[\"\xf8\x88\x80\x80\x80\"]", 0, "unable to decode byte 0xf8", 1,
     2},
    {M_OBJ, "[\"\xe2\x82", 0, "unable to decode byte 0xe2", 1, 2},
    {M_OBJ, "[1\xff]", 0, "unable to decode byte 0xff near '1'", 1, 2},
    {M_OBJ, "\xef\xbb\xbf[]", 0, "'[' or '{' expected", 1, 1},
    /* in strings */
    {M_OBJ, "[\"a\nb\"]", 0, "unexpected newline near '\"a'", 1, 3},
    {M_OBJ, "[\"a\x01\"]", 0, "control character 0x1 near '\"a'", 1, 3},
    {M_OBJ, "[\"a\tb\"]", 0, "control character 0x9", 1, 3},
    {M_OBJ, "[\"\\x\"]", 0, "invalid escape near '\"\\x'", 1, 4},
    {M_OBJ, "[\"\\u12G4\"]", 0, "invalid escape near '\"\\u12G'", 1, 7},
    {M_OBJ, "[\"abc", 0, "premature end of input near '\"abc'", 1, 5},
    {M_OBJ, "[\"\\", 0, "invalid escape near '\"\\'", 1, 3},
    /* numbers */
    {M_OBJ, "[01]", 0, "invalid token near '0'", 1, 2},
    {M_OBJ, "[-01]", 0, "invalid token near '-0'", 1, 3},
    {M_OBJ, "[1.]", 0, "invalid token near '1.'", 1, 3},
    {M_OBJ, "[1e]", 0, "invalid token near '1e'", 1, 3},
    {M_OBJ, "[1e+]", 0, "invalid token near '1e+'", 1, 4},
    {M_OBJ, "[-]", 0, "invalid token near '-'", 1, 2},
    {M_OBJ, "[+1]", 0, "invalid token near '+'", 1, 2},
    {M_OBJ, "[.5]", 0, "invalid token near '.'", 1, 2},
    {M_OBJ, "[9223372036854775808]", 0,
     "too big integer near '9223372036854775808'", 1, 20},
    {M_OBJ, "[-9223372036854775809]", 0, "too big negative integer", 1, 21},
    {M_OBJ, "[1e400]", 0, "real number overflow near '1e400'", 1, 6},
    {M_OBJ, "[-1.5E+999]", 0, "real number overflow", 1, 10},
    /* names */
    {M_OBJ, "[tru]", 0, "invalid token near 'tru'", 1, 4},
    {M_OBJ, "[truex]", 0, "invalid token near 'truex'", 1, 6},
    {M_OBJ, "[True]", 0, "invalid token near 'True'", 1, 5},
    {M_OBJ, "[nul]", 0, "invalid token", 1, 4},
    {M_OBJ, "[@]", 0, "invalid token near '@'", 1, 2},
    /* structure */
    {M_OBJ, "[1,]", 0, "unexpected token near ']'", 1, 4},
    {M_OBJ, "{\"a\":1,}", 0, "string or '}' expected near '}'", 1, 8},
    {M_OBJ, "{1:2}", 0, "string or '}' expected near '1'", 1, 2},
    {M_OBJ, "{\"a\" 1}", 0, "':' expected near '1'", 1, 6},
    {M_OBJ, "[1 2]", 0, "']' expected near '2'", 1, 4},
    {M_OBJ, "{\"a\":1 \"b\":2}", 0, "'}' expected near '\"b\"'", 1, 10},
    {M_OBJ, "[] []", 0, "end of file expected near '['", 1, 4},
    {M_ANY, "1 2", 0, "end of file expected near '2'", 1, 3},
    {M_OBJ, "[", 0, "']' expected near end of file", 1, 1},
    {M_OBJ, "{", 0, "string or '}' expected near end of file", 1, 1},
    {M_OBJ, "{\"a\":", 0, "unexpected token near end of file", 1, 5},
    {M_OBJ, "[1\0\0]", 5, "']' expected near end of file", 1, 3},
    {M_OBJ, "[1\0 x]", 6, "']' expected near 'x'", 1, 4},
    /* positions count characters, and lines */
    {M_OBJ, "[\"\xc3\xa9\xe2\x82\xac\",x]", 0, "invalid token near 'x'", 1, 7},
    {M_OBJ, "[\n1,\n\n  x]", 0, "invalid token near 'x'", 4, 3},
};

START_TEST(refused_as_jansson)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    size_t len = refused[_i].len ? refused[_i].len : strlen(refused[_i].in);
    char where[64];

    arena_init(&a);
    ck_assert_int_eq(
        agree(refused[_i].in, len, refused[_i].flags, &a, &doc, &err), -1);
    ck_assert_msg(strstr(doc.fail.what, refused[_i].what) != NULL,
                  "'%s' lacks '%s'", doc.fail.what, refused[_i].what);
    ck_assert_int_eq(doc.fail.line, refused[_i].line);
    ck_assert_int_eq(doc.fail.column, refused[_i].column);
    ck_assert_int_eq(err.code, ST_INVALID_JSON);
    snprintf(where, sizeof(where),
             "invalid JSON at line %d, column %d: ", refused[_i].line,
             refused[_i].column);
    ck_assert_msg(strncmp(err.text, where, strlen(where)) == 0, "%s", err.text);
    arena_release(&a);
}
END_TEST

/* The request path's words for the empty body and for \u0000. */
START_TEST(request_path_messages)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};

    arena_init(&a);
    ck_assert_int_eq(jscan_parse("", 0, 0, 32, &a, &doc, &err), -1);
    ck_assert_str_eq(err.text, "the request body is empty; send a JSON value");
    ck_assert_str_eq(doc.fail.what, "'[' or '{' expected near end of file");
    status_clear(&err);
    ck_assert_int_eq(jscan_parse("[\"\\u0000\"]", 10, 0, 32, &a, &doc, &err),
                     -1);
    ck_assert_str_eq(err.text, "invalid JSON at line 1, column 9: strings "
                               "must not contain \\u0000");
    ck_assert_int_eq(doc.fail.code, JSCAN_E_NUL);
    /* not NUL-terminated input is fine */
    status_clear(&err);
    ck_assert_int_eq(jscan_parse("{}garbage", 2, 0, 32, &a, &doc, &err), 0);
    arena_release(&a);
}
END_TEST

/* --- depth ---------------------------------------------------------------- */

START_TEST(depth_of_brackets)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    char deep[80];

    arena_init(&a);
    memset(deep, '[', 32);
    memset(deep + 32, ']', 32);
    ck_assert_int_eq(agree(deep, 64, M_OBJ, &a, &doc, &err), 0);
    /* a scalar inside 32 brackets is fine: only brackets count */
    memcpy(deep + 32, "1", 1);
    memset(deep + 33, ']', 32);
    ck_assert_int_eq(agree(deep, 65, M_OBJ, &a, &doc, &err), 0);
    memset(deep, '[', 33);
    memset(deep + 33, ']', 33);
    ck_assert_int_eq(agree(deep, 66, M_OBJ, &a, &doc, &err), -1);
    ck_assert_str_eq(err.text, "invalid JSON at line 1, column 33: nesting "
                               "deeper than 32 levels");
    ck_assert_int_eq(doc.fail.code, JSCAN_E_DEPTH);
    /* brackets inside strings do not count */
    status_clear(&err);
    ck_assert_int_eq(
        agree("[\"[[[[\",{\"[\":\"{{{{{{\"}]", 23, M_OBJ, &a, &doc, &err), 0);
    /* the depth asked for, up to BOUND_JSCAN_DEPTH */
    ck_assert_int_eq(jscan_parse("[[1]]", 5, 0, 2, &a, &doc, &err), 0);
    ck_assert_int_eq(jscan_parse("[[1]]", 5, 0, 1, &a, &doc, &err), -1);
    ck_assert_int_eq(jscan_parse("[]", 2, 0, 0, &a, &doc, &err), -1);
    arena_release(&a);
}
END_TEST

/* With JSCAN_DEPTH_SCALARS and 2048, exactly jansson's own limit: a
 * scalar counts as a level. */
START_TEST(depth_as_jansson)
{
    const unsigned flags = JSCAN_DEPTH_SCALARS | JSCAN_ANY;
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    size_t n = 2050;
    char *buf = malloc(2 * n + 1);

    ck_assert_ptr_nonnull(buf);
    arena_init(&a);
    for (size_t depth = 2046; depth <= 2049; depth++) {
        /* depth brackets around nothing, then around a scalar */
        memset(buf, '[', depth);
        memset(buf + depth, ']', depth);
        agree(buf, 2 * depth, flags, &a, &doc, &err);
        memset(buf, '[', depth);
        buf[depth] = '7';
        memset(buf + depth + 1, ']', depth);
        agree(buf, 2 * depth + 1, flags, &a, &doc, &err);
        status_clear(&err);
    }
    memset(buf, '[', 2047);
    buf[2047] = '7';
    memset(buf + 2048, ']', 2047);
    ck_assert_int_eq(
        jscan_parse(buf, 2 * 2047 + 1, flags, 2048, &a, &doc, &err), 0);
    memset(buf, '[', 2048);
    buf[2048] = '7';
    memset(buf + 2049, ']', 2048);
    ck_assert_int_eq(
        jscan_parse(buf, 2 * 2048 + 1, flags, 2048, &a, &doc, &err), -1);
    ck_assert_str_eq(doc.fail.what, "maximum parsing depth reached near '7'");
    /* a bound past BOUND_JSCAN_DEPTH is BOUND_JSCAN_DEPTH */
    status_clear(&err);
    memset(buf, '[', 2049);
    memset(buf + 2049, ']', 2049);
    ck_assert_int_eq(jscan_parse(buf, 2 * 2049, 0, INT_MAX, &a, &doc, &err),
                     -1);
    arena_release(&a);
    free(buf);
}
END_TEST

/* --- repeated keys in large objects --------------------------------------- */

/* An object of n members "k0".."k<n-1>", with member `dup` (if < n)
 * named as member 0, and every key escaped when `escaped`. */
static char *
big_object(int n, int dup, bool escaped)
{
    struct sbuf sb;

    sbuf_init(&sb, JSONOUT_UNBOUNDED);
    ck_assert_int_eq(sbuf_adds(&sb, "{"), 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(sbuf_addf(&sb, "%s\"%sk%d\":%d", i ? "," : "",
                                   escaped ? "\\u0041" : "A", i == dup ? 0 : i,
                                   i),
                         0);
    ck_assert_int_eq(sbuf_adds(&sb, "}"), 0);
    return sbuf_detach(&sb, NULL);
}

START_TEST(repeated_keys_of_large_objects)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    char *text;

    arena_init(&a);
    for (int escaped = 0; escaped < 2; escaped++) {
        /* the linear compare, its hand-over to the set, the set */
        for (int dup = 1; dup < 40; dup += 3) {
            text = big_object(40, dup, escaped);
            ck_assert_int_eq(agree(text, strlen(text), M_OBJ, &a, &doc, &err),
                             -1);
            ck_assert_int_eq(doc.fail.code, JSCAN_E_DUPLICATE);
            status_clear(&err);
            ck_assert_int_eq(agree(text, strlen(text), M_DUPS, &a, &doc, &err),
                             0);
            ck_assert(jscan_flags(&doc, 0) & JSCAN_DUPKEYS);
            ck_assert(!(jscan_flags(&doc, 0) & JSCAN_CANON));
            ck_assert_int_eq(jscan_integer(&doc, jscan_member(&doc, 0, "Ak0")),
                             dup);
            free(text);
        }
        text = big_object(5000, 5000, escaped);
        ck_assert_int_eq(agree(text, strlen(text), M_OBJ, &a, &doc, &err), 0);
        ck_assert_uint_eq(jscan_count(&doc, 0), 5000);
        ck_assert_int_eq(jscan_integer(&doc, jscan_member(&doc, 0, "Ak4321")),
                         4321);
        free(text);
        text = big_object(5000, 4999, escaped);
        ck_assert_int_eq(agree(text, strlen(text), M_OBJ, &a, &doc, &err), -1);
        status_clear(&err);
        free(text);
    }
    arena_release(&a);
}
END_TEST

/* --- the tape ------------------------------------------------------------- */

START_TEST(navigation)
{
    static const char in[] = "{\"a\":1,\"b\":[true,2.5,\"s\"],\"c\\u00e9\":"
                             "{\"d\":null},\"e\":\"x\\ny\",\"f\":[]}";
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    size_t b, e, n, len;
    const char *s;

    arena_init(&a);
    ck_assert_int_eq(jscan_parse(in, strlen(in), 0, 32, &a, &doc, &err), 0);
    ck_assert_int_eq(jscan_type(&doc, 0), JSCAN_OBJECT);
    ck_assert_uint_eq(jscan_count(&doc, 0), 5);
    ck_assert_uint_eq(jscan_end(&doc, 0), doc.count);
    /* children: key, value, key, value... */
    ck_assert_uint_eq(jscan_child(&doc, 0), 1);
    ck_assert_str_eq(jscan_string(&doc, 1, &a, NULL), "a");
    ck_assert_uint_eq(jscan_next(&doc, 0, 1), 2);
    ck_assert_int_eq(jscan_integer(&doc, 2), 1);
    ck_assert_uint_eq(jscan_next(&doc, 0, 2), 3);
    b = jscan_member(&doc, 0, "b");
    ck_assert_int_eq(jscan_type(&doc, b), JSCAN_ARRAY);
    ck_assert_uint_eq(jscan_count(&doc, b), 3);
    e = jscan_child(&doc, b);
    ck_assert_int_eq(jscan_type(&doc, e), JSCAN_TRUE);
    e = jscan_next(&doc, b, e);
    ck_assert(jscan_real(&doc, e) == 2.5);
    ck_assert_int_eq(jscan_integer(&doc, e), 0); /* not an integer */
    e = jscan_next(&doc, b, e);
    ck_assert_str_eq(jscan_string(&doc, e, &a, NULL), "s");
    ck_assert_uint_eq(jscan_next(&doc, b, e), JSCAN_NONE);
    /* an escaped key is found by its decoded bytes */
    n = jscan_member(&doc, 0, "c\xc3\xa9");
    ck_assert_int_eq(jscan_type(&doc, n), JSCAN_OBJECT);
    ck_assert_int_eq(jscan_type(&doc, jscan_member(&doc, n, "d")), JSCAN_NULL);
    ck_assert_uint_eq(jscan_member(&doc, 0, "c"), JSCAN_NONE);
    ck_assert_uint_eq(jscan_member(&doc, 0, "zz"), JSCAN_NONE);
    ck_assert_uint_eq(jscan_member(&doc, b, "a"), JSCAN_NONE);
    s = jscan_string(&doc, jscan_member(&doc, 0, "e"), &a, &len);
    ck_assert_uint_eq(len, 3);
    ck_assert_str_eq(s, "x\ny");
    ck_assert_ptr_null(jscan_string(&doc, b, &a, NULL));
    /* empty containers and scalars have no child */
    n = jscan_member(&doc, 0, "f");
    ck_assert_uint_eq(jscan_child(&doc, n), JSCAN_NONE);
    ck_assert_uint_eq(jscan_count(&doc, n), 0);
    ck_assert_uint_eq(jscan_child(&doc, 2), JSCAN_NONE);
    ck_assert_uint_eq(jscan_count(&doc, 2), 0);
    /* spans */
    ck_assert_int_eq(doc.nodes[b].len, 14);
    ck_assert_int_eq(memcmp(in + doc.nodes[b].off, "[true,2.5,\"s\"]", 14), 0);
    arena_release(&a);
}
END_TEST

/* JSCAN_CANON says "copy me", JSCAN_ESCAPED "decode me". */
static const struct {
    const char *in; /* one element in an array */
    unsigned flags; /* of the element */
} flag_cases[] = {
    {"[\"plain \xc3\xa9\"]", JSCAN_CANON},
    {"[\"\\n\\t\\\"\\\\\\b\\f\\r\\u0001\\u001F\"]",
     JSCAN_CANON | JSCAN_ESCAPED},
    {"[\"\\/\"]", JSCAN_ESCAPED},
    {"[\"\\u001f\"]", JSCAN_ESCAPED},
    {"[\"\\u000a\"]", JSCAN_ESCAPED},
    {"[\"\\u00e9\"]", JSCAN_ESCAPED},
    {"[\"\\u0041\"]", JSCAN_ESCAPED},
    {"[\"\\ud83d\\ude00\"]", JSCAN_ESCAPED},
    {"[0]", JSCAN_CANON},
    {"[-0]", 0},
    {"[-12]", JSCAN_CANON},
    {"[1.0]", JSCAN_CANON},
    {"[-0.0]", JSCAN_CANON},
    {"[1.50]", 0},
    {"[1.00]", 0},
    {"[1e2]", 0},
    {"[0.0001]", JSCAN_CANON},
    {"[0.00001]", 0},
    {"[123456789012345.0]", JSCAN_CANON},
    {"[1234567890123456.0]", 0},
    {"[12345678901234.5]", JSCAN_CANON},
    {"[123456789012345.5]", 0},
    {"[true]", JSCAN_CANON},
    {"[{\"a\":[1,{}]}]", JSCAN_CANON},
    {"[{\"a\" :1}]", 0},
    {"[[ ]]", 0},
    {"[{\"a\":[1,\"\\/\"]}]", 0},
};

START_TEST(node_flags)
{
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};
    const char *in = flag_cases[_i].in;

    arena_init(&a);
    ck_assert_int_eq(agree(in, strlen(in), M_OBJ, &a, &doc, &err), 0);
    ck_assert_uint_eq(jscan_flags(&doc, 1), flag_cases[_i].flags);
    /* the array is canonical exactly when its element is */
    ck_assert_uint_eq(jscan_flags(&doc, 0) & JSCAN_CANON,
                      flag_cases[_i].flags & JSCAN_CANON);
    arena_release(&a);
}
END_TEST

/* The typical request body (tests/bench) keeps its spans as they are. */
START_TEST(compact_request_is_canonical)
{
    static const char in[] =
        "{\"message\":\"Remove the USB-C Hub\",\"history\":[{\"role\":\"user\","
        "\"parts\":[{\"text\":\"Question 0: what is in my cart?\"}]}],"
        "\"pageState\":{\"items\":[{\"id\":\"item-0\",\"price\":10.0,"
        "\"quantity\":1},{\"id\":\"item-1\",\"price\":11.25,\"quantity\":2}],"
        "\"total\":32.5}}";
    struct arena a;
    struct jscan_doc doc;
    struct status_error err = {0};

    arena_init(&a);
    ck_assert_int_eq(agree(in, strlen(in), M_OBJ, &a, &doc, &err), 0);
    ck_assert(jscan_flags(&doc, 0) & JSCAN_CANON);
    arena_release(&a);
}
END_TEST

/* --- jsonout -------------------------------------------------------------- */

/* jsonout_dumps(v, flags) is json_dumps(v, flags), NULL included. */
static void
same_dump(const json_t *v, size_t flags)
{
    char *want = json_dumps(v, flags);
    size_t len = 0;
    char *got = jsonout_dumps(v, flags, JSONOUT_UNBOUNDED, &len);

    if (want == NULL) {
        ck_assert_ptr_null(got);
        return;
    }
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    ck_assert_uint_eq(len, strlen(want));
    free(want);
    free(got);
}

START_TEST(jsonout_writes_as_jansson)
{
    static const double reals[] = {
        0.0,    -0.0,    1.0,      0.1,   1e-5,    1e-4,
        1e15,   1e14,    1e20,     1e21,  100.0,   123456789012345.6,
        5e-324, DBL_MAX, -DBL_MIN, 49.99, 1.0 / 3, 2.5e-300,
        -7e+22,
    };
    static const long long ints[] = {0, -1, 1, LLONG_MAX, LLONG_MIN, 1000};
    json_t *v = json_object(), *arr = json_array(), *s;
    char ctl[33];

    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < ARRAY_SIZE(reals); i++)
        ck_assert_int_eq(json_array_append_new(arr, json_real(reals[i])), 0);
    for (size_t i = 0; i < ARRAY_SIZE(ints); i++)
        ck_assert_int_eq(json_array_append_new(arr, json_integer(ints[i])), 0);
    for (int c = 0; c < 32; c++)
        ctl[c] = (char)c;
    ctl[32] = '/';
    ck_assert_int_eq(json_array_append_new(arr, json_stringn(ctl, 33)), 0);
    ck_assert_int_eq(
        json_array_append_new(
            arr,
            json_string("\"q\" \\ caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
                        "\x7f <a href=\"x\">")),
        0);
    ck_assert_int_eq(json_object_set_new(v, "z", arr), 0);
    ck_assert_int_eq(json_object_set_new(v, "a", json_true()), 0);
    ck_assert_int_eq(json_object_set_new(v, "m", json_null()), 0);
    ck_assert_int_eq(json_object_set_new(v, "e", json_object()), 0);
    ck_assert_int_eq(json_object_set_new(v, "k\nl", json_array()), 0);
    /* a replaced value keeps its place; a deleted key comes back last */
    ck_assert_int_eq(json_object_set_new(v, "z", json_incref(arr)), 0);
    ck_assert_int_eq(json_object_del(v, "a"), 0);
    ck_assert_int_eq(json_object_set_new(v, "a", json_false()), 0);

    same_dump(v, APP_JSON_FLAGS);
    same_dump(v, APP_JSON_FLAGS | JSON_ENCODE_ANY);
    /* other flags: jansson's own dumper */
    same_dump(v, JSON_INDENT(2) | JSON_SORT_KEYS);
    same_dump(v, APP_JSON_FLAGS | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
    same_dump(v, 0);
    /* scalars need JSON_ENCODE_ANY */
    s = json_string("x");
    same_dump(s, APP_JSON_FLAGS);
    same_dump(s, APP_JSON_FLAGS | JSON_ENCODE_ANY);
    json_decref(s);
    /* strings that are not UTF-8 are refused, as jansson refuses them */
    s = json_stringn_nocheck("ok \xff", 4);
    same_dump(s, APP_JSON_FLAGS | JSON_ENCODE_ANY);
    ck_assert_int_eq(json_array_append_new(arr, s), 0);
    same_dump(v, APP_JSON_FLAGS);
    json_decref(v);
}
END_TEST

START_TEST(jsonout_refuses_cycles_and_stays_whole)
{
    json_t *a = json_array(), *b = json_array();
    struct sbuf sb;
    char *t;

    ck_assert_int_eq(json_array_append(a, b), 0);
    ck_assert_int_eq(json_array_append(b, a), 0);
    ck_assert_ptr_null(
        jsonout_dumps(a, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL));
    ck_assert_ptr_null(json_dumps(a, APP_JSON_FLAGS));
    /* the same value twice, not inside itself, is fine */
    ck_assert_int_eq(json_array_clear(b), 0);
    ck_assert_int_eq(json_array_append(a, b), 0);
    t = jsonout_dumps(a, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL);
    ck_assert_str_eq(t, "[[],[]]");
    free(t);
    /* over the cap: nothing, and an append leaves what was there */
    ck_assert_ptr_null(jsonout_dumps(a, APP_JSON_FLAGS, 6, NULL));
    t = jsonout_dumps(a, APP_JSON_FLAGS, 7, NULL);
    ck_assert_str_eq(t, "[[],[]]");
    free(t);
    sbuf_init(&sb, 10);
    ck_assert_int_eq(sbuf_adds(&sb, "abc"), 0);
    ck_assert_int_eq(jsonout_write(a, &sb), 0);
    ck_assert_str_eq(sb.buf, "abc[[],[]]");
    ck_assert_int_eq(jsonout_write(a, &sb), -1);
    ck_assert_str_eq(sb.buf, "abc[[],[]]");
    ck_assert_uint_eq(sb.len, 10);
    sbuf_release(&sb);
    ck_assert_int_eq(jsonout_write(NULL, &sb), -1);
    json_decref(a);
    json_decref(b);
}
END_TEST

START_TEST(jsonout_string_escapes)
{
    struct sbuf sb;

    sbuf_init(&sb, JSONOUT_UNBOUNDED);
    ck_assert_int_eq(jsonout_string(&sb, "", 0), 0);
    ck_assert_int_eq(jsonout_string(&sb, "a\0b\x1f\x7f/", 6), 0);
    ck_assert_str_eq(sb.buf, "\"\"\"a\\u0000b\\u001F\x7f/\"");
    sbuf_reset(&sb);
    /* long runs go eight bytes at a time; what stops them is exact */
    ck_assert_int_eq(jsonout_string(&sb, "0123456789abcdef\"0123456\\7", 26),
                     0);
    ck_assert_str_eq(sb.buf, "\"0123456789abcdef\\\"0123456\\\\7\"");
    ck_assert_int_eq(jsonout_string(&sb, "\xc3", 1), -1);
    ck_assert_int_eq(jsonout_string(&sb, "\xed\xa0\x80", 3), -1);
    sbuf_release(&sb);
}
END_TEST

/* --- jsonin --------------------------------------------------------------- */

/* jsonin_parse() is json_loadb(): values, repeated keys, errors. */
START_TEST(jsonin_parse_is_json_loadb)
{
    static const struct {
        const char *in;
        size_t flags;
    } cases[] = {
        {"{\"a\":1,\"b\":2,\"a\":[3]}", 0},
        {"{\"a\":1,\"a\":2}", JSON_REJECT_DUPLICATES},
        {"\"x\"", JSON_DECODE_ANY},
        {"\"x\"", 0},
        {"[1, 2.5, \"\\u00e9\"]", JSON_DECODE_INT_AS_REAL},
        {"[\"a\\u0000b\"]", JSON_ALLOW_NUL},
        {"[1,", 0},
        {"{\"a\" 1}", JSON_REJECT_DUPLICATES},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        json_error_t want, got;
        bool oom = true;
        const char *in = cases[i].in;
        json_t *w = json_loadb(in, strlen(in), cases[i].flags, &want);
        json_t *g = jsonin_parse(in, strlen(in), cases[i].flags, &got, &oom);

        ck_assert(!oom);
        ck_assert_msg((w == NULL) == (g == NULL), "%s", in);
        if (w == NULL) {
            ck_assert_str_eq(got.text, want.text);
            ck_assert_int_eq(got.line, want.line);
            ck_assert_int_eq(got.column, want.column);
            ck_assert_int_eq(got.position, want.position);
            ck_assert_int_eq(json_error_code(&got), json_error_code(&want));
            continue;
        }
        {
            char *ws = json_dumps(w, DUMP_FLAGS);
            char *gs = json_dumps(g, DUMP_FLAGS);
            ck_assert_str_eq(gs, ws);
            free(ws);
            free(gs);
        }
        json_decref(w);
        json_decref(g);
    }
}
END_TEST

START_TEST(jsonin_decode_messages)
{
    struct status_error e = {0};
    json_t *v;

    ck_assert_ptr_null(jsonin_decode("", 0, 32, &e));
    ck_assert_str_eq(e.text, "the request body is empty; send a JSON value");
    status_clear(&e);
    ck_assert_ptr_null(jsonin_decode("{\"a\":\"\\u0000\"}", 14, 32, &e));
    ck_assert_str_eq(e.text, "invalid JSON at line 1, column 13: strings "
                             "must not contain \\u0000");
    status_clear(&e);
    ck_assert_ptr_null(jsonin_decode("[1]x", 4, 32, &e));
    ck_assert_str_eq(e.text, "invalid JSON at line 1, column 4: end of file "
                             "expected near 'x'");
    ck_assert_int_eq(e.code, ST_INVALID_JSON);
    status_clear(&e);
    v = jsonin_decode("[1]", 3, 32, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
}
END_TEST

/* --- every allocation may fail -------------------------------------------- */

static long alloc_count, fail_at;

static bool
count_and_fail(size_t n)
{
    (void)n;
    return ++alloc_count == fail_at;
}

/* A body that makes the tape grow, the key set grow, the scratch serve
 * escaped keys and long numbers, and the writer re-escape. */
static char *
oom_body(void)
{
    struct sbuf sb;

    sbuf_init(&sb, JSONOUT_UNBOUNDED);
    ck_assert_int_eq(sbuf_adds(&sb, "{\"n\":["), 0);
    for (int i = 0; i < 3000; i++)
        ck_assert_int_eq(sbuf_addf(&sb, "%s%d", i ? "," : "", i % 10), 0);
    ck_assert_int_eq(sbuf_adds(&sb, "],\"o\":{"), 0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(sbuf_addf(&sb, "\"\\u006b%d\":\"v\\/%d\",", i, i), 0);
    ck_assert_int_eq(
        sbuf_adds(&sb, "\"r\":1.00000000000000000000000000000000000000000000"
                       "0000000000000000000000000001e3}, \"d\":{\"a\":1,"
                       "\"a\":2}}"),
        0);
    return sbuf_detach(&sb, NULL);
}

START_TEST(every_allocation_failure_is_clean)
{
    char *body = oom_body();
    size_t len = strlen(body);
    char *want = NULL;
    long total = 0, failures = 0;

    for (long at = 0;; at++) {
        struct arena a;
        struct jscan_doc doc;
        struct status_error err = {0};
        long live = memlimit_json_live;
        json_t *v = NULL;
        struct sbuf sb;
        int rc;

        alloc_count = 0;
        fail_at = at;
        memlimit_fail_hook = count_and_fail;
        arena_init(&a);
        sbuf_init(&sb, JSONOUT_UNBOUNDED);
        rc = jscan_parse(body, len, JSCAN_DUPLICATES_OK, 32, &a, &doc, &err);
        if (rc == 0 && (v = jscan_to_json(&doc, 0, &err)) == NULL)
            rc = -1;
        if (rc == 0 && jscan_write(&doc, 0, &sb) != 0)
            rc = -2;
        if (rc == 0 && jsonout_write(v, &sb) != 0)
            rc = -2;
        memlimit_fail_hook = NULL;
        if (at == 0) {
            ck_assert_int_eq(rc, 0);
            ck_assert(!(jscan_flags(&doc, 0) & JSCAN_CANON));
            want = strdup(sb.buf);
            total = alloc_count;
        } else if (rc == 0) {
            ck_assert_str_eq(sb.buf, want);
        } else {
            failures++;
            if (rc == -1)
                ck_assert_msg(err.code == ST_NO_MEMORY, "allocation %ld: %s",
                              at, err.text);
            else /* a failed write takes back what it wrote */
                ck_assert_uint_eq(sb.len, strlen(sb.buf));
        }
        json_decref(v);
        sbuf_release(&sb);
        arena_release(&a);
        ck_assert_msg(memlimit_json_live == live,
                      "allocation %ld: %ld JSON values leaked", at,
                      memlimit_json_live - live);
        if (at > 0 && at >= total)
            break;
    }
    ck_assert_int_gt(total, 100);
    ck_assert_int_gt(failures, total / 2);
    free(want);
    free(body);
}
END_TEST

Suite *
jscan_suite(void)
{
    Suite *s = suite_create("jscan");
    TCase *tc = tcase_create("read");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, accepted_as_jansson, 0, (int)ARRAY_SIZE(accepted));
    tcase_add_loop_test(tc, refused_as_jansson, 0, (int)ARRAY_SIZE(refused));
    tcase_add_test(tc, request_path_messages);
    tcase_add_test(tc, depth_of_brackets);
    tcase_add_test(tc, depth_as_jansson);
    tcase_add_test(tc, repeated_keys_of_large_objects);
    suite_add_tcase(s, tc);

    tc = tcase_create("tape");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, navigation);
    tcase_add_loop_test(tc, node_flags, 0, (int)ARRAY_SIZE(flag_cases));
    tcase_add_test(tc, compact_request_is_canonical);
    suite_add_tcase(s, tc);

    tc = tcase_create("write");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, jsonout_writes_as_jansson);
    tcase_add_test(tc, jsonout_refuses_cycles_and_stays_whole);
    tcase_add_test(tc, jsonout_string_escapes);
    suite_add_tcase(s, tc);

    tc = tcase_create("jsonin");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, jsonin_parse_is_json_loadb);
    tcase_add_test(tc, jsonin_decode_messages);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, every_allocation_failure_is_clean);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
