/*
 * check_tty.c - the terminal client's rendering for a person (term/tty.h):
 * stream-json messages in, the text a terminal shows out; the one-line
 * summary of a call; the permission question's answers. Memory streams
 * stand for the terminal (tests/term/t_tty.sh drives a real pty).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/bounds.h"
#include "term/tty.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Render each JSON text of the NULL-terminated list; the output (heap). */
static char *
render(bool color, const char *const *msgs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct tty *t;

    ck_assert_ptr_nonnull(f);
    t = tty_new(NULL, f, color);
    ck_assert_ptr_nonnull(t);
    for (; *msgs != NULL; msgs++) {
        json_error_t jerr;
        json_t *m = json_loads(*msgs, 0, &jerr);
        ck_assert_msg(m != NULL, "bad test JSON: %s", jerr.text);
        ck_assert_int_eq(tty_message(t, m), 0);
        json_decref(m);
    }
    tty_free(t);
    fclose(f);
    return buf;
}

START_TEST(a_turn)
{
    static const char *const msgs[] = {
        "{\"type\":\"system\",\"subtype\":\"init\"}",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":"
        "{\"file_path\":\"a.txt\"}}]}}",
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
        "\"tool_result\",\"content\":\"1\\u2192x\",\"is_error\":false}]},"
        "\"tool_use_result\":{\"file\":{\"numLines\":2}}}",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"tool_use\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}]}}",
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
        "\"tool_result\",\"content\":\"a\\nb\\nc\\n\",\"is_error\":false}]}}",
        "{\"type\":\"stream_event\",\"event\":{\"type\":"
        "\"content_block_delta\",\"delta\":{\"type\":\"text_delta\","
        "\"text\":\"Hel\"}}}",
        "{\"type\":\"stream_event\",\"event\":{\"type\":"
        "\"content_block_delta\",\"delta\":{\"type\":\"text_delta\","
        "\"text\":\"lo\"}}}",
        "{\"type\":\"stream_event\",\"event\":{\"type\":\"message_stop\"}}",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"text\",\"text\":\"Hello\"}]}}",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"text\",\"text\":\"not streamed\"}]}}",
        "{\"type\":\"result\",\"is_error\":false,\"result\":\"Hello\"}",
        NULL};
    char *out = render(false, msgs);

    ck_assert_str_eq(out, "\xe2\x97\x8f Read(a.txt)\n"
                          "  \xe2\x8e\xbf  Read 2 lines\n"
                          "\xe2\x97\x8f Bash(ls)\n"
                          "  \xe2\x8e\xbf  a \xe2\x80\xa6 +2 lines\n"
                          "Hello\n"
                          "not streamed\n");
    free(out);
}
END_TEST

START_TEST(errors)
{
    static const char *const msgs[] = {
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
        "\"tool_result\",\"content\":\"Permission to use Bash denied\","
        "\"is_error\":true}]}}",
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
        "\"tool_result\",\"content\":\"\",\"is_error\":false}]}}",
        /* the API error's assistant message: the result tells of it */
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"text\",\"text\":\"API Error: x\"}]},\"error\":\"rate_limit\"}",
        "{\"type\":\"result\",\"is_error\":true,\"result\":\"\","
        "\"errors\":[\"API Error: x\"]}",
        NULL};
    char *out = render(false, msgs);

    ck_assert_str_eq(out, "  \xe2\x8e\xbf  Permission to use Bash denied\n"
                          "  \xe2\x8e\xbf  (no output)\n"
                          "\xe2\x9c\x97 API Error: x\n");
    free(out);
}
END_TEST

/* The system messages a person sees; the others (init, permission_denied:
 * the tool_result says it) are not shown. */
START_TEST(system_notes)
{
    static const char *const msgs[] = {
        "{\"type\":\"system\",\"subtype\":\"compact_boundary\","
        "\"compact_metadata\":{\"trigger\":\"auto\",\"pre_tokens\":900}}",
        "{\"type\":\"system\",\"subtype\":\"permission_denied\","
        "\"tool_name\":\"Bash\",\"message\":\"no\"}",
        "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1}",
        "{\"type\":\"system\",\"subtype\":\"init\"}",
        NULL};
    char *out = render(false, msgs);

    ck_assert_str_eq(out,
                     "\xc2\xb7 the conversation was compacted (900 tokens "
                     "summarised)\n"
                     "\xc2\xb7 Gemini's answer broke off; asking again\n");
    free(out);
}
END_TEST

START_TEST(controls_and_colour)
{
    static const char *const msgs[] = {
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"text\",\"text\":\"a\\u001b[2Jb\\rc\"}]}}",
        NULL};
    static const char *const call[] = {
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
        "\"tool_use\",\"name\":\"LS\",\"input\":{}}]}}",
        NULL};
    char *out = render(false, msgs);

    /* the model's ESC does not reach the terminal */
    ck_assert_str_eq(out, "a?[2Jb?c\n");
    free(out);
    out = render(true, call);
    ck_assert_ptr_nonnull(strstr(out, "\033["));
    ck_assert_ptr_nonnull(strstr(out, "LS"));
    ck_assert_ptr_null(strstr(out, "LS(")); /* no input to sum up */
    free(out);
}
END_TEST

START_TEST(summary)
{
    char buf[BOUND_TTY_SUMMARY + 8], big[BOUND_TTY_SUMMARY * 2];
    json_t *in = json_pack("{s:s, s:s}", "command", "echo a\nb",
                           "description", "x");

    ck_assert_str_eq(tty_summary(in, buf, sizeof(buf)), "echo a b");
    json_decref(in);
    in = json_pack("{s:s, s:s}", "pattern", "*.c", "path", "src");
    ck_assert_str_eq(tty_summary(in, buf, sizeof(buf)), "*.c");
    json_decref(in);
    ck_assert_str_eq(tty_summary(NULL, buf, sizeof(buf)), "");
    /* cut at the bound, never inside a UTF-8 sequence */
    memset(big, 'x', sizeof(big));
    for (size_t i = 1; i + 1 < sizeof(big); i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[sizeof(big) - 1] = '\0';
    in = json_pack("{s:s}", "file_path", big);
    tty_summary(in, buf, sizeof(buf));
    json_decref(in);
    ck_assert_uint_le(strlen(buf), BOUND_TTY_SUMMARY + 3);
    ck_assert_str_eq(buf + strlen(buf) - 3, "\xe2\x80\xa6");
    /* the last byte kept is not a lead byte left without its tail */
    ck_assert_int_ne((unsigned char)buf[strlen(buf) - 4] & 0xC0, 0xC0);
    in = json_string(buf); /* jansson takes only valid UTF-8 */
    ck_assert_ptr_nonnull(in);
    json_decref(in);
}
END_TEST

/* tty_ask() with `answers` typed; the answer, the output in out[]. */
static enum tty_answer
ask(const char *answers, char *out, size_t n)
{
    FILE *in = fmemopen(UNCONST(answers), strlen(answers), "r");
    FILE *o = fmemopen(out, n, "w");
    struct tty *t = tty_new(in, o, false);
    json_t *input = json_pack("{s:s}", "command", "rm x");
    enum tty_answer a;

    memset(out, 0, n);
    a = tty_ask(t, "Bash", input);
    json_decref(input);
    tty_free(t);
    fclose(o);
    fclose(in);
    return a;
}

START_TEST(answers)
{
    char out[1024];

    ck_assert_int_eq(ask("y\n", out, sizeof(out)), TTY_YES);
    ck_assert_str_eq(out, "Allow Bash(rm x)? [y]es, [n]o, [a]lways: ");
    ck_assert_int_eq(ask("No\n", out, sizeof(out)), TTY_NO);
    ck_assert_int_eq(ask(" always\n", out, sizeof(out)), TTY_ALWAYS);
    ck_assert_int_eq(ask("maybe\na\n", out, sizeof(out)), TTY_ALWAYS);
    ck_assert_ptr_nonnull(strstr(out, "Please answer y, n or a.\nAllow"));
    /* the input ends: no */
    ck_assert_int_eq(ask("what\n", out, sizeof(out)), TTY_NO);
}
END_TEST

START_TEST(no_input)
{
    struct tty *t = tty_new(NULL, stdout, false);
    char *line = NULL;
    size_t cap = 0;

    ck_assert(!tty_can_ask(t));
    ck_assert_int_eq(tty_ask(t, "Bash", NULL), TTY_NO);
    ck_assert_int_eq(tty_read_prompt(t, &line, &cap), -1);
    tty_free(t);
    free(line);
}
END_TEST

Suite *
tty_suite(void)
{
    Suite *s = suite_create("tty");
    TCase *tc = tcase_create("tty");

    tcase_add_test(tc, a_turn);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, system_notes);
    tcase_add_test(tc, controls_and_colour);
    tcase_add_test(tc, summary);
    tcase_add_test(tc, answers);
    tcase_add_test(tc, no_input);
    suite_add_tcase(s, tc);
    return s;
}
