/*
 * check_arena.c - arena and sbuf: the memory every request stands on.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/sbuf.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

static int cleanup_order[4];
static int cleanup_n;

static void
note_cleanup(void *p)
{
    cleanup_order[cleanup_n++] = *(int *)p;
}

START_TEST(arena_alloc_aligned_and_large)
{
    struct arena a;
    arena_init(&a);
    for (int i = 0; i < 1000; i++) {
        void *p = arena_alloc(&a, (size_t)i % 37 + 1);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % _Alignof(max_align_t), 0);
    }
    char *big = arena_alloc(&a, 100000);
    ck_assert_ptr_nonnull(big);
    memset(big, 'x', 100000);
    ck_assert_ptr_null(arena_alloc(&a, SIZE_MAX));
    ck_assert_ptr_null(arena_calloc(&a, SIZE_MAX / 2, 4));
    arena_release(&a);
}
END_TEST

START_TEST(arena_strings)
{
    struct arena a;
    arena_init(&a);
    ck_assert_str_eq(arena_strndup(&a, "hello world", 5), "hello");
    ck_assert_str_eq(arena_printf(&a, "%s-%d", "x", 42), "x-42");
    ck_assert_ptr_null(arena_strdup(&a, NULL));
    arena_release(&a);
}
END_TEST

START_TEST(arena_cleanups_run_lifo_on_reset)
{
    struct arena a;
    static int one = 1, two = 2, three = 3;
    arena_init(&a);
    cleanup_n = 0;
    ck_assert_int_eq(arena_defer(&a, note_cleanup, &one), 0);
    ck_assert_int_eq(arena_defer(&a, note_cleanup, &two), 0);
    ck_assert_int_eq(arena_defer(&a, note_cleanup, &three), 0);
    arena_reset(&a);
    ck_assert_int_eq(cleanup_n, 3);
    ck_assert_int_eq(cleanup_order[0], 3);
    ck_assert_int_eq(cleanup_order[2], 1);
    /* reset arena is reusable, and a json value pinned to it is freed */
    json_t *v = arena_take_json(&a, json_string("pinned"));
    ck_assert_ptr_nonnull(v);
    arena_release(&a);
}
END_TEST

START_TEST(sbuf_cap_is_enforced)
{
    struct sbuf sb;
    sbuf_init(&sb, 10);
    ck_assert_str_eq(sb.buf, "");
    ck_assert_int_eq(sbuf_adds(&sb, "12345"), 0);
    ck_assert_int_eq(sbuf_addf(&sb, "%d", 6789), 0);
    ck_assert_str_eq(sb.buf, "123456789");
    ck_assert_int_eq(sbuf_adds(&sb, "ab"), -1);
    ck_assert_str_eq(sb.buf, "123456789"); /* unchanged on failure */
    ck_assert_int_eq(sbuf_adds(&sb, "a"), 0);
    ck_assert_uint_eq(sb.len, 10);
    size_t n;
    char *s = sbuf_detach(&sb, &n);
    ck_assert_uint_eq(n, 10);
    ck_assert_str_eq(s, "123456789a");
    free(s);
    ck_assert_str_eq(sb.buf, "");
    sbuf_release(&sb);
}
END_TEST


Suite *
arena_suite(void)
{
    Suite *s = suite_create("arena+sbuf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, arena_alloc_aligned_and_large);
    tcase_add_test(tc, arena_strings);
    tcase_add_test(tc, arena_cleanups_run_lifo_on_reset);
    tcase_add_test(tc, sbuf_cap_is_enforced);
    suite_add_tcase(s, tc);
    return s;
}
