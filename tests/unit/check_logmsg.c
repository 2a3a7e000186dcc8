/*
 * check_logmsg.c - the log line: its UTC timestamp, the text and JSON
 * forms (escaping, a cut line that stays one line of valid JSON), the
 * access line's fields, level filtering, and a log file that is reopened
 * after it was moved.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/logmsg.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 2026-11-29T08:01:02.345678901Z */
static const struct timespec T0 = {1795939262, 345678901};

static const struct logmsg_access A = {
    "4f2a9c", "POST", "/_jay/actions/geminiAgent.sendMessage", 200, 12, 1,
    345,      67};

static char line[16384];

static const char *
render(enum logmsg_format fmt, enum logmsg_level lvl, const char *msg,
       const struct logmsg_access *a)
{
    size_t n = logmsg_render(line, sizeof(line), fmt, lvl, &T0, 42, msg, a);

    ck_assert_uint_eq(n, strlen(line));
    return line;
}

/* The JSON object of a rendered line (one line, ending in a newline). */
static json_t *
parse(const char *l)
{
    size_t n = strlen(l);
    json_error_t e;
    json_t *v;

    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(l[n - 1], '\n');
    ck_assert_ptr_null(memchr(l, '\n', n - 1));
    v = json_loadb(l, n - 1, 0, &e);
    ck_assert_msg(v != NULL, "not JSON (%s): %s", e.text, l);
    return v;
}

START_TEST(text_line_starts_with_utc_milliseconds)
{
    ck_assert_str_eq(render(LOG_FMT_TEXT, LOG_LVL_WARN, "hello", NULL),
                     "2026-11-29T08:01:02.345Z gemini-agent[42]: warn: "
                     "hello\n");
    /* the milliseconds are cut, not rounded; zero-padded */
    struct timespec t = {1795939262, 7999999};
    logmsg_render(line, sizeof(line), LOG_FMT_TEXT, LOG_LVL_ERROR, &t, 1, "x",
                  NULL);
    ck_assert_str_eq(line, "2026-11-29T08:01:02.007Z gemini-agent[1]: error: "
                           "x\n");
}
END_TEST

/* A control byte in a message cannot split a text line or forge one. */
START_TEST(text_line_is_one_line)
{
    ck_assert_str_eq(
        render(LOG_FMT_TEXT, LOG_LVL_INFO, "a\nb\r\x1b[31mc\td", NULL),
        "2026-11-29T08:01:02.345Z gemini-agent[42]: info: a?b??[31mc\td\n");
}
END_TEST

START_TEST(json_line_escapes_the_message)
{
    json_t *v = parse(render(LOG_FMT_JSON, LOG_LVL_DEBUG,
                             "say \"hi\" \\ to\nall\t\x01 caf\xc3\xa9 \xff!",
                             NULL));

    ck_assert_str_eq(json_string_value(json_object_get(v, "time")),
                     "2026-11-29T08:01:02.345Z");
    ck_assert_str_eq(json_string_value(json_object_get(v, "level")), "debug");
    ck_assert_int_eq(json_integer_value(json_object_get(v, "pid")), 42);
    /* ill-formed UTF-8 becomes U+FFFD; the rest comes back as it was */
    ck_assert_str_eq(json_string_value(json_object_get(v, "msg")),
                     "say \"hi\" \\ to\nall\t\x01 caf\xc3\xa9 \xef\xbf\xbd!");
    ck_assert_uint_eq(json_object_size(v), 4);
    json_decref(v);
}
END_TEST

/* A line that does not fit is cut inside the message, never inside an
 * escape, and stays valid JSON. */
START_TEST(json_line_cut_stays_json)
{
    char msg[1024], small[400];
    json_t *v;
    const char *m;

    memset(msg, '"', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    for (size_t size = LOGMSG_RENDER_MIN; size <= sizeof(small); size += 7) {
        logmsg_render(small, size, LOG_FMT_JSON, LOG_LVL_INFO, &T0, 42, msg,
                      NULL);
        v = parse(small);
        m = json_string_value(json_object_get(v, "msg"));
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(strspn(m, "\""), strlen(m));
        json_decref(v);
    }
    /* the whole of it fits the real buffer */
    v = parse(render(LOG_FMT_JSON, LOG_LVL_INFO, msg, NULL));
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(v, "msg"))),
                      sizeof(msg) - 1);
    json_decref(v);
}
END_TEST

START_TEST(access_line_text)
{
    ck_assert_str_eq(render(LOG_FMT_TEXT, LOG_LVL_INFO, NULL, &A),
                     "2026-11-29T08:01:02.345Z gemini-agent[42]: info: access "
                     "id=4f2a9c method=POST "
                     "route=/_jay/actions/geminiAgent.sendMessage status=200 "
                     "ms=12 gemini_calls=1 tokens_in=345 tokens_out=67\n");
}
END_TEST

START_TEST(access_line_json)
{
    json_t *v = parse(render(LOG_FMT_JSON, LOG_LVL_INFO, NULL, &A));
    json_t *want = json_pack(
        "{s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i}", "time",
        "2026-11-29T08:01:02.345Z", "level", "info", "pid", 42, "msg", "access",
        "id", "4f2a9c", "method", "POST", "route",
        "/_jay/actions/geminiAgent.sendMessage", "status", 200, "ms", 12,
        "gemini_calls", 1, "tokens_in", 345, "tokens_out", 67);

    ck_assert_msg(json_equal(v, want), "got %s", line);
    json_decref(v);
    json_decref(want);
}
END_TEST

/* The lines of `path`, at most 16, into out[]; their count. */
static int
read_lines(const char *path, char out[16][512])
{
    FILE *f = fopen(path, "r");
    int n = 0;

    ck_assert_ptr_nonnull(f);
    while (n < 16 && fgets(out[n], 512, f) != NULL)
        n++;
    fclose(f);
    return n;
}

START_TEST(levels_and_the_file_reopened)
{
    char dir[] = "/tmp/check_logmsg.XXXXXX", path[128], moved[128];
    char got[16][512];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/agent.log", dir);
    snprintf(moved, sizeof(moved), "%s/agent.log.1", dir);
    ck_assert_int_eq(logmsg_set_output(LOG_FMT_TEXT, path), 0);

    logmsg_set_level(LOG_LVL_WARN);
    ck_assert(!logmsg_enabled(LOG_LVL_INFO));
    log_info("dropped");
    logmsg_access(&A); /* an info line: dropped too */
    log_warn("kept %d", 1);
    log_err("kept %d", 2);
    logmsg_set_level(LOG_LVL_INFO);
    logmsg_access(&A);
    log_debug("dropped");
    ck_assert_int_eq(read_lines(path, got), 3);
    ck_assert_ptr_nonnull(strstr(got[0], "]: warn: kept 1\n"));
    ck_assert_ptr_nonnull(strstr(got[1], "]: error: kept 2\n"));
    ck_assert_ptr_nonnull(strstr(got[2], "]: info: access id=4f2a9c "));

    /* logrotate moves it; lines go on to the old file until the reopen */
    ck_assert_int_eq(rename(path, moved), 0);
    log_warn("before the reopen");
    ck_assert_int_eq(logmsg_reopen(), 0);
    log_warn("after the reopen");
    ck_assert_int_eq(read_lines(moved, got), 4);
    ck_assert_ptr_nonnull(strstr(got[3], "]: warn: before the reopen\n"));
    ck_assert_int_eq(read_lines(path, got), 1);
    ck_assert_ptr_nonnull(strstr(got[0], "]: warn: after the reopen\n"));

    /* the same file, now as JSON (a reload) */
    ck_assert_int_eq(logmsg_set_output(LOG_FMT_JSON, path), 0);
    log_warn("as json");
    ck_assert_int_eq(read_lines(path, got), 2);
    ck_assert_ptr_nonnull(strstr(got[1], "\"msg\":\"as json\"}"));

    /* a file that cannot be opened leaves the output as it was */
    ck_assert_int_eq(logmsg_set_output(LOG_FMT_TEXT, "/nonexistent/x.log"), -1);
    log_warn("still here");
    ck_assert_int_eq(read_lines(path, got), 3);
    ck_assert_ptr_nonnull(strstr(got[2], "\"msg\":\"still here\"}"));

    ck_assert_int_eq(logmsg_set_output(LOG_FMT_TEXT, NULL), 0);
    ck_assert_int_eq(logmsg_reopen(), 0); /* stderr: nothing to do */
    unlink(path);
    unlink(moved);
    rmdir(dir);
}
END_TEST

Suite *
logmsg_suite(void)
{
    Suite *s = suite_create("logmsg");
    TCase *tc = tcase_create("render");

    tcase_add_test(tc, text_line_starts_with_utc_milliseconds);
    tcase_add_test(tc, text_line_is_one_line);
    tcase_add_test(tc, json_line_escapes_the_message);
    tcase_add_test(tc, json_line_cut_stays_json);
    tcase_add_test(tc, access_line_text);
    tcase_add_test(tc, access_line_json);
    suite_add_tcase(s, tc);
    tc = tcase_create("output");
    tcase_add_test(tc, levels_and_the_file_reopened);
    suite_add_tcase(s, tc);
    return s;
}
