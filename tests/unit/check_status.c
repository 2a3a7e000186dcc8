/*
 * check_status.c - the error value: first error wins for its detail too,
 * and the two ways it is written out (status_json, status_text) say the
 * same thing an HTTP client has always been sent.
 *
 * The table and status_set basics are in check_arena.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The compact JSON text of status_json(e); the caller frees it. */
static char *
json_of(const struct status_error *e)
{
    json_t *v = status_json(e);
    char *text;

    ck_assert_ptr_nonnull(v);
    text = json_dumps(v, APP_JSON_FLAGS);
    ck_assert_ptr_nonnull(text);
    json_decref(v);
    return text;
}

#define ASSERT_JSON(e, want)                                                   \
    do {                                                                       \
        char *got_ = json_of(e);                                               \
        ck_assert_str_eq(got_, want);                                          \
        free(got_);                                                            \
    } while (0)

/* --- setting and clearing ------------------------------------------------- */

START_TEST(schema_detail)
{
    struct status_error e = {0};

    ck_assert_int_eq(status_set_schema(&e, "/limit", "maximum",
                                       "%s: must be <= %d (maximum)", "/limit",
                                       50),
                     -1);
    ck_assert_int_eq(e.code, ST_SCHEMA);
    ck_assert_str_eq(e.text, "/limit: must be <= 50 (maximum)");
    ck_assert_str_eq(e.path, "/limit");
    ck_assert_str_eq(e.rule, "maximum");
    ck_assert_int_eq(e.retry_after_s, 0);

    /* the root is "", and still a path: rule says so */
    status_clear(&e);
    status_set_schema(&e, "", "type", "/: expected object, got array (type)");
    ck_assert_str_eq(e.path, "");
    ck_assert_ptr_nonnull(e.rule);
    ck_assert_str_eq(e.rule, "type");

    /* a NULL rule still marks the path as present */
    status_clear(&e);
    status_set_schema(&e, "/a", NULL, "bad");
    ck_assert_str_eq(e.rule, "");
    ck_assert_str_eq(e.path, "/a");

    /* NULL is allowed, as for status_set */
    ck_assert_int_eq(status_set_schema(NULL, "/a", "type", "x"), -1);
    ck_assert_int_eq(status_set_retry(NULL, ST_UPSTREAM_RATE, 5, "x"), -1);
}
END_TEST

START_TEST(long_path_is_cut_on_a_utf8_boundary)
{
    char path[STATUS_PATH_MAX * 2] = "/";
    struct status_error e = {0};
    json_t *check;
    size_t len;

    /* two-byte characters from an odd offset: a cut would split one */
    for (size_t i = 1; i + 2 < sizeof(path); i += 2)
        memcpy(path + i, "\xc3\xa9", 3);
    status_set_schema(&e, path, "type", "x");
    len = strlen(e.path);
    ck_assert_uint_lt(len, STATUS_PATH_MAX);
    ck_assert_uint_ge(len, STATUS_PATH_MAX - 3);
    ck_assert_int_eq(strncmp(e.path, path, len), 0);
    check = json_string(e.path);
    ck_assert_ptr_nonnull(check);
    json_decref(check);
}
END_TEST

START_TEST(retry_detail)
{
    struct status_error e = {0};

    ck_assert_int_eq(
        status_set_retry(&e, ST_UPSTREAM_RATE, 26, "try again in %d s", 26),
        -1);
    ck_assert_int_eq(e.code, ST_UPSTREAM_RATE);
    ck_assert_str_eq(e.text, "try again in 26 s");
    ck_assert_int_eq(e.retry_after_s, 26);
    ck_assert_ptr_null(e.rule);

    /* no hint: no promise */
    status_clear(&e);
    status_set_retry(&e, ST_UPSTREAM_DOWN, 0, "down");
    ck_assert_int_eq(e.code, ST_UPSTREAM_DOWN);
    ck_assert_int_eq(e.retry_after_s, 0);
    status_clear(&e);
    status_set_retry(&e, ST_UPSTREAM_DOWN, -3, "down");
    ck_assert_int_eq(e.retry_after_s, 0);
}
END_TEST

/* The detail belongs to the first error: a later one changes none of it. */
START_TEST(first_error_wins_for_the_detail)
{
    struct status_error e = {0};

    status_set_schema(&e, "/a", "type", "first");
    status_set_retry(&e, ST_UPSTREAM_RATE, 9, "later");
    status_set_schema(&e, "/b", "required", "later");
    status_set(&e, ST_INTERNAL, "later");
    ck_assert_int_eq(e.code, ST_SCHEMA);
    ck_assert_str_eq(e.text, "first");
    ck_assert_str_eq(e.path, "/a");
    ck_assert_str_eq(e.rule, "type");
    ck_assert_int_eq(e.retry_after_s, 0);

    /* a plain first error gains no detail from a later one */
    status_clear(&e);
    status_set(&e, ST_BAD_REQUEST, "first");
    status_set_schema(&e, "/b", "required", "later");
    status_set_retry(&e, ST_UPSTREAM_RATE, 9, "later");
    ck_assert_int_eq(e.code, ST_BAD_REQUEST);
    ck_assert_ptr_null(e.rule);
    ck_assert_str_eq(e.path, "");
    ck_assert_int_eq(e.retry_after_s, 0);

    status_clear(&e);
    status_set_retry(&e, ST_UPSTREAM_DOWN, 4, "first");
    status_set_retry(&e, ST_UPSTREAM_RATE, 9, "later");
    status_set_schema(&e, "/b", "required", "later");
    ck_assert_int_eq(e.code, ST_UPSTREAM_DOWN);
    ck_assert_int_eq(e.retry_after_s, 4);
    ck_assert_ptr_null(e.rule);
}
END_TEST

START_TEST(clear_forgets_everything)
{
    struct status_error e = {0};

    status_set_schema(&e, "/a", "type", "x");
    status_clear(&e);
    ck_assert_int_eq(e.code, ST_OK);
    ck_assert_str_eq(e.text, "");
    ck_assert_ptr_null(e.rule);
    ck_assert_str_eq(e.path, "");
    status_set_retry(&e, ST_UPSTREAM_RATE, 3, "y");
    status_clear(&e);
    ck_assert_int_eq(e.retry_after_s, 0);
    /* the next error starts from nothing */
    status_set(&e, ST_NOT_FOUND, "z");
    ck_assert_int_eq(e.code, ST_NOT_FOUND);
    ck_assert_ptr_null(e.rule);
    ck_assert_int_eq(e.retry_after_s, 0);
    status_clear(NULL);
}
END_TEST

/* --- status_json ---------------------------------------------------------- */

START_TEST(json_shape)
{
    struct status_error e = {0};

    status_set(&e, ST_NOT_FOUND, "no route for %s", "/nothing");
    ASSERT_JSON(&e, "{\"code\":\"not_found\",\"message\":\"no route for "
                    "/nothing\"}");

    /* path and rule only with a schema violation's detail */
    status_clear(&e);
    status_set_schema(&e, "/query", "type",
                      "/query: expected string, got integer (type)");
    ASSERT_JSON(&e, "{\"code\":\"schema_violation\",\"message\":\"/query: "
                    "expected string, got integer (type)\",\"path\":"
                    "\"/query\",\"rule\":\"type\"}");
    status_clear(&e);
    status_set_schema(&e, "", "required",
                      "/: missing required property 'query' (required)");
    ASSERT_JSON(&e, "{\"code\":\"schema_violation\",\"message\":\"/: missing "
                    "required property 'query' (required)\",\"path\":\"\","
                    "\"rule\":\"required\"}");

    /* a retry hint is a header, not a member */
    status_clear(&e);
    status_set_retry(&e, ST_UPSTREAM_RATE, 30, "slow down");
    ASSERT_JSON(&e,
                "{\"code\":\"upstream_rate_limited\",\"message\":\"slow down\"}");
}
END_TEST

START_TEST(json_of_no_error_is_internal)
{
    struct status_error e = {0};

    ASSERT_JSON(&e, "{\"code\":\"internal_error\",\"message\":\"internal "
                    "error\"}");
    /* a status without text still says something */
    status_set(&e, ST_NO_MEMORY, "%s", "");
    ASSERT_JSON(&e, "{\"code\":\"internal_error\",\"message\":\"internal "
                    "error\"}");
}
END_TEST

/* Messages quote client input: whatever the bytes, the JSON is written. */
START_TEST(json_scrubs_invalid_utf8)
{
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"ok \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", /* é 日 😀 pass */
         "ok \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"},
        {"lone \xff byte", "lone ? byte"},
        {"cut \xc3", "cut ?"},
        {"stray \x80\xbf", "stray ??"},
        {"short \xe6\x97!", "short ??" "!"}, /* not a trigraph */
        {"overlong \xc0\xaf", "overlong ??"},
        /* well-formed in shape, refused by jansson: overlong, surrogate,
         * past U+10FFFF, and a lead byte no sequence has */
        {"overlong \xe0\x80\xaf", "overlong ???"},
        {"overlong \xf0\x80\x80\xaf", "overlong ????"},
        {"surrogate \xed\xa0\x80", "surrogate ???"},
        {"too high \xf4\x90\x80\x80", "too high ????"},
        {"no such lead \xf8\x88\x80\x80\x80", "no such lead ?????"},
        {"edges \xed\x9f\xbf \xf4\x8f\xbf\xbf \xe0\xa0\x80",
         "edges \xed\x9f\xbf \xf4\x8f\xbf\xbf \xe0\xa0\x80"},
    };
    struct status_error e = {0};

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        json_t *v;

        status_clear(&e);
        status_set_schema(&e, rows[i].in, "type", "%s", rows[i].in);
        v = status_json(&e);
        ck_assert_msg(v != NULL, "row %zu: no JSON", i);
        ck_assert_str_eq(json_string_value(json_object_get(v, "message")),
                         rows[i].out);
        ck_assert_str_eq(json_string_value(json_object_get(v, "path")),
                         rows[i].out);
        json_decref(v);
    }
}
END_TEST

/* --- status_text ---------------------------------------------------------- */

START_TEST(text_line)
{
    struct status_error e = {0};
    char buf[128];

    status_set_schema(&e, "/limit", "maximum",
                      "/limit: must be <= 50 (maximum)");
    ck_assert_int_eq(status_text(&e, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "schema_violation: /limit: must be <= 50 (maximum)");

    status_clear(&e);
    status_set_retry(&e, ST_UPSTREAM_RATE, 26,
                     "Gemini's rate limit was reached; try again in 26 s");
    ck_assert_int_eq(status_text(&e, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "upstream_rate_limited: Gemini's rate limit was "
                          "reached; try again in 26 s");

    status_clear(&e);
    ck_assert_int_eq(status_text(&e, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "internal_error: internal error");
}
END_TEST

/* One line, nothing a terminal acts on, and valid UTF-8. */
START_TEST(text_is_one_safe_line)
{
    struct status_error e = {0};
    char buf[128];

    status_set(&e, ST_UNKNOWN_ACTION, "no action '%s'",
               "a\nb\r\x1b[31mc\x7f\xff\tz");
    ck_assert_int_eq(status_text(&e, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "unknown_action: no action 'a?b??[31mc???z'");
}
END_TEST

START_TEST(text_cut_to_fit)
{
    struct status_error e = {0};
    char buf[18], one[1] = {'x'};
    json_t *check;

    /* "not_found: " is 11 bytes, then 3 times é: 17 bytes and the NUL */
    status_set(&e, ST_NOT_FOUND, "\xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_int_eq(status_text(&e, buf, 18), 0);
    ck_assert_str_eq(buf, "not_found: \xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_int_eq(status_text(&e, buf, 17), -1);
    ck_assert_str_eq(buf, "not_found: \xc3\xa9\xc3\xa9");
    /* 14 bytes would end inside the second é: it goes, not a '?' */
    ck_assert_int_eq(status_text(&e, buf, 15), -1);
    ck_assert_str_eq(buf, "not_found: \xc3\xa9");
    check = json_string(buf);
    ck_assert_ptr_nonnull(check);
    json_decref(check);
    ck_assert_int_eq(status_text(&e, one, 1), -1);
    ck_assert_int_eq(one[0], '\0');
    ck_assert_int_eq(status_text(&e, one, 0), -1);
}
END_TEST

START_TEST(status_first_error_wins_and_maps)
{
    struct status_error e = {0};
    ck_assert_int_eq(status_set(&e, ST_TOO_LARGE, "body of %d bytes", 5), -1);
    status_set(&e, ST_INTERNAL, "later");
    ck_assert_int_eq(e.code, ST_TOO_LARGE);
    ck_assert_str_eq(e.text, "body of 5 bytes");
    ck_assert_int_eq(status_http(ST_TOO_LARGE), 413);
    ck_assert_str_eq(status_code(ST_MEDIA_TYPE), "unsupported_media_type");
    ck_assert_int_eq(status_http(ST_SCHEMA), 422);
    ck_assert_int_eq(status_http(ST_METHOD), 405);
    ck_assert_int_eq(status_http(ST_UNKNOWN_ACTION), 404);
    ck_assert_int_eq(status_http((enum status)999), 500);
    /* the budget's: spent (come back later), unknowable (fail closed),
     * and a request that would send too much upstream */
    ck_assert_int_eq(status_http(ST_BUDGET_EXHAUSTED), 429);
    ck_assert_str_eq(status_code(ST_BUDGET_EXHAUSTED), "budget_exhausted");
    ck_assert_int_eq(status_http(ST_BUDGET_UNAVAILABLE), 503);
    ck_assert_str_eq(status_code(ST_BUDGET_UNAVAILABLE), "budget_unavailable");
    ck_assert_int_eq(status_http(ST_UPSTREAM_TOO_LARGE), 413);
    ck_assert_str_eq(status_code(ST_UPSTREAM_TOO_LARGE), "upstream_too_large");
    ck_assert_int_eq(status_http(ST_ORIGIN_NOT_ALLOWED), 403);
    ck_assert_str_eq(status_code(ST_ORIGIN_NOT_ALLOWED), "origin_not_allowed");
    /* every status has a code and a status */
    for (int s = 0; s < ST__COUNT; s++) {
        ck_assert_ptr_nonnull(status_code((enum status)s));
        ck_assert_int_ge(status_http((enum status)s), 200);
    }
    /* long messages are cut on a UTF-8 boundary */
    char big[STATUS_TEXT_MAX * 2];
    for (size_t i = 0; i + 2 < sizeof(big); i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[sizeof(big) - 1] = '\0';
    struct status_error e2 = {0};
    status_set(&e2, ST_BAD_REQUEST, "x%s", big);
    size_t len = strlen(e2.text);
    ck_assert_uint_lt(len, STATUS_TEXT_MAX);
    ck_assert_int_ne((unsigned char)e2.text[len - 1], 0xc3);
}
END_TEST

Suite *
status_suite(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("detail");

    tcase_add_test(tc, status_first_error_wins_and_maps);
    tcase_add_test(tc, schema_detail);
    tcase_add_test(tc, long_path_is_cut_on_a_utf8_boundary);
    tcase_add_test(tc, retry_detail);
    tcase_add_test(tc, first_error_wins_for_the_detail);
    tcase_add_test(tc, clear_forgets_everything);
    suite_add_tcase(s, tc);
    tc = tcase_create("write");
    tcase_add_test(tc, json_shape);
    tcase_add_test(tc, json_of_no_error_is_internal);
    tcase_add_test(tc, json_scrubs_invalid_utf8);
    tcase_add_test(tc, text_line);
    tcase_add_test(tc, text_is_one_safe_line);
    tcase_add_test(tc, text_cut_to_fit);
    suite_add_tcase(s, tc);
    return s;
}
