/*
 * check_term_lines.c - term/lines.h over a pipe: lines handed out whole,
 * what is buffered seen without blocking (the reason it exists: stdio
 * may hold a line that poll() no longer sees), the end of input, and
 * the bound on a line.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/lines.h"

#include <check.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void
put(int fd, const char *s)
{
    ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

START_TEST(lines_without_waiting)
{
    int p[2];
    struct term_lines l;
    char *line;

    ck_assert_int_eq(pipe(p), 0);
    term_lines_init(&l, p[0], 100);
    /* nothing there: no line, and no blocking */
    ck_assert_int_eq(term_lines_next(&l, false, &line), -1);
    ck_assert_ptr_null(line);
    /* two lines and half a third in one write: both lines come out of
     * the buffer although the pipe is empty after the first */
    put(p[1], "{\"a\":1}\r\n{\"b\":2}\n{\"c\"");
    ck_assert_int_eq(term_lines_next(&l, false, &line), 7);
    ck_assert_str_eq(line, "{\"a\":1}");
    ck_assert_int_eq(term_lines_next(&l, false, &line), 7);
    ck_assert_str_eq(line, "{\"b\":2}");
    ck_assert_int_eq(term_lines_next(&l, false, &line), -1);
    /* the rest of it */
    put(p[1], ":3}\n\n");
    ck_assert_int_eq(term_lines_next(&l, true, &line), 7);
    ck_assert_str_eq(line, "{\"c\":3}");
    ck_assert_int_eq(term_lines_next(&l, false, &line), 0);
    ck_assert_str_eq(line, "");
    /* the end: a last line without its newline still counts */
    put(p[1], "last");
    close(p[1]);
    /* one read() gets the bytes, the next one the end */
    ck_assert_int_eq(term_lines_next(&l, false, &line), -1);
    ck_assert_int_eq(term_lines_next(&l, false, &line), 4);
    ck_assert_str_eq(line, "last");
    ck_assert_int_eq(term_lines_next(&l, false, &line), -2);
    ck_assert_int_eq(term_lines_next(&l, true, &line), -2);
    term_lines_release(&l);
    close(p[0]);
}
END_TEST

START_TEST(lines_waiting)
{
    int p[2];
    struct term_lines l;
    char *line;
    char big[70000];
    pid_t pid;

    ck_assert_int_eq(pipe(p), 0);
    term_lines_init(&l, p[0], 200000);
    /* a line longer than one read, written from another process */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    if ((pid = fork()) == 0) {
        close(p[0]);
        put(p[1], big);
        put(p[1], "\nnext\n");
        _exit(0);
    }
    close(p[1]);
    ck_assert_int_eq(term_lines_next(&l, true, &line), (long)strlen(big));
    ck_assert_str_eq(line, big);
    ck_assert_int_eq(term_lines_next(&l, true, &line), 4);
    ck_assert_str_eq(line, "next");
    ck_assert_int_eq(term_lines_next(&l, true, &line), -2);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    term_lines_release(&l);
    close(p[0]);
}
END_TEST

START_TEST(lines_bound)
{
    int p[2];
    struct term_lines l;
    char *line;

    ck_assert_int_eq(pipe(p), 0);
    term_lines_init(&l, p[0], 8);
    put(p[1], "1234567\n12345678\nafter\n");
    close(p[1]);
    /* 7 bytes and the newline fit in 8; 8 and the newline do not */
    ck_assert_int_eq(term_lines_next(&l, true, &line), 7);
    ck_assert_int_eq(term_lines_next(&l, true, &line), -2);
    ck_assert(l.too_long);
    ck_assert_int_eq(term_lines_next(&l, true, &line), -2);
    term_lines_release(&l);
    close(p[0]);

    /* a long line with no newline yet: refused before it is whole */
    ck_assert_int_eq(pipe(p), 0);
    term_lines_init(&l, p[0], 8);
    put(p[1], "123456789");
    ck_assert_int_eq(term_lines_next(&l, false, &line), -2);
    ck_assert(l.too_long);
    term_lines_release(&l);
    close(p[0]);
    close(p[1]);
}
END_TEST

Suite *
term_lines_suite(void)
{
    Suite *s = suite_create("term_lines");
    TCase *tc = tcase_create("term_lines");

    tcase_add_test(tc, lines_without_waiting);
    tcase_add_test(tc, lines_waiting);
    tcase_add_test(tc, lines_bound);
    suite_add_tcase(s, tc);
    return s;
}
