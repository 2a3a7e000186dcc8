/*
 * check_settings.c - the table reader (core/settings.h) on a table of its
 * own: each type read into its slot, defaults, nested sections named by
 * their dotted path, the wording of each kind of problem with file and
 * line, unknown keys (echoed or not, old keys not offered), and the lines
 * `check --settings` prints.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/settings.h"
#include "core/arena.h"
#include "core/diag.h"
#include "core/ydoc.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct inner {
    long n;
};

struct sample {
    bool on, flip;
    long count, ceiling, between;
    char *name, *file;
    int colour;
    bool verify;
    struct inner inner;
    int custom_calls;
    int done_calls;
};

static const struct settings_name colours[] = {
    {"red", 1},
    {"green", 2},
    {"blue", 3},
};

static const struct settings_name verify_words[] = {
    {"strict", 1},
    {"off", 0},
};

static const struct settings_key inner_keys[] = {
    {.name = "n", .type = SETTING_LONG, .offset = offsetof(struct inner, n),
     .min = 1, .max = 9, .def = 5, .say = SAY_NO_LIMIT, .help = "a ceiling"},
};

static const struct settings_table inner_table = {
    .shape = "{n}", .say_type = true, .keys = inner_keys,
    .nkeys = ARRAY_SIZE(inner_keys)};

static void
read_custom(void *base, const struct ydoc_node *v, const char *path,
            const struct settings_ctx *cx)
{
    (void)v;
    (void)cx;
    ck_assert(strcmp(path, "custom") == 0 || strcmp(path, "old") == 0);
    ((struct sample *)base)->custom_calls++;
}

static void
show_custom(const void *base, char *buf, size_t size)
{
    snprintf(buf, size, "%d calls", ((const struct sample *)base)->custom_calls);
}

static void
sample_done(void *base, const struct settings_ctx *cx)
{
    (void)cx;
    ((struct sample *)base)->done_calls++;
}

#define AT(f) .offset = offsetof(struct sample, f)

static const struct settings_key sample_keys[] = {
    {.name = "on", .type = SETTING_BOOL, AT(on), .def = 1, .help = "on"},
    {.name = "flip", .type = SETTING_BOOL, AT(flip), .say = SAY_TYPE},
    {.name = "count", .type = SETTING_LONG, AT(count), .min = 0, .max = 10,
     .def = 3},
    {.name = "between", .type = SETTING_LONG, AT(between), .min = 2,
     .max = 4, .def = 2, .say = SAY_BETWEEN},
    {.name = "name", .type = SETTING_STRING, AT(name), .def_text = "x"},
    {.name = "file", .type = SETTING_PATH, AT(file)},
    {.name = "colour", .type = SETTING_ENUM, AT(colour), .names = colours,
     .nnames = ARRAY_SIZE(colours), .def = 2, .say = SAY_TYPE},
    {.name = "verify", .type = SETTING_SWITCH, AT(verify),
     .names = verify_words, .nnames = ARRAY_SIZE(verify_words), .def = 1},
    {.name = "inner", .type = SETTING_SECTION, AT(inner),
     .section = &inner_table},
    {.name = "custom", .type = SETTING_CUSTOM, .read = read_custom,
     .show = show_custom, .help = "its own shape"},
    {.name = "old", .type = SETTING_CUSTOM, .read = read_custom,
     .hidden = true},
};

static const struct settings_table sample_table = {
    .shape = "a mapping", .keys = sample_keys,
    .nkeys = ARRAY_SIZE(sample_keys), .done = sample_done};

static struct arena arena;
static struct diag diag;
static struct sample got;

static void
setup(void)
{
    arena_init(&arena);
    diag = (struct diag)DIAG_INIT;
    memset(&got, 0, sizeof(got));
    ck_assert_int_eq(settings_defaults(&sample_table, &got), 0);
}

static void
teardown(void)
{
    free(got.name);
    free(got.file);
    diag_release(&diag);
    arena_release(&arena);
}

/* Read `yaml` (a mapping) with the sample table as the section `path`. */
static void
read_text(const char *yaml, const char *path)
{
    const struct ydoc_node *root =
        ydoc_load_buffer(yaml, strlen(yaml), "s.yaml", &arena, &diag);
    struct settings_ctx cx = {"s.yaml", "/base", &diag, NULL};

    ck_assert_ptr_nonnull(root);
    settings_read(&sample_table, &got, root, path, &cx);
}

START_TEST(defaults_are_set)
{
    ck_assert(got.on);
    ck_assert(!got.flip);
    ck_assert_int_eq(got.count, 3);
    ck_assert_str_eq(got.name, "x");
    ck_assert_ptr_null(got.file);
    ck_assert_int_eq(got.colour, 2);
    ck_assert(got.verify);
    ck_assert_int_eq(got.inner.n, 5);
}
END_TEST

START_TEST(every_type_is_read)
{
    read_text("on: false\nflip: true\ncount: 10\nbetween: 4\nname: n1\n"
              "file: f.txt\ncolour: blue\nverify: off\ninner: {n: 9}\n"
              "custom: [anything]\nold: 1\n",
              "");
    ck_assert_uint_eq(diag.count, 0);
    ck_assert(!got.on);
    ck_assert(got.flip);
    ck_assert_int_eq(got.count, 10);
    ck_assert_int_eq(got.between, 4);
    ck_assert_str_eq(got.name, "n1");
    ck_assert_str_eq(got.file, "/base/f.txt");
    ck_assert_int_eq(got.colour, 3);
    ck_assert(!got.verify);
    ck_assert_int_eq(got.inner.n, 9);
    ck_assert_int_eq(got.custom_calls, 2);
    ck_assert_int_eq(got.done_calls, 1);
}
END_TEST

/* yaml, line, the message, word for word */
static const struct {
    const char *yaml;
    int line;
    const char *msg;
} bad[] = {
    {"on: 2\n", 1, "'top.on' must be true or false"},
    {"flip: [1]\n", 1, "'top.flip' must be true or false, not sequence"},
    {"count: 11\n", 1, "'top.count' must be an integer from 0 to 10"},
    {"between: x\n", 1, "'top.between' must be an integer, not string"},
    {"between: 5\n", 1, "'top.between' is 5; it must be between 2 and 4"},
    {"name: ''\n", 1, "'top.name' must be a non-empty string, not an empty "
                      "string"},
    {"file: {a: 1}\n", 1, "'top.file' must be a non-empty string, not "
                          "mapping"},
    {"colour: pink\n", 1, "'top.colour' is red, green or blue, not 'pink'"},
    {"verify: maybe\n", 1, "'top.verify' must be strict or off"},
    {"on: true\ninner: {n: 0}\n", 2,
     "'top.inner.n' must be an integer from 1 to 9 (leave it out for no "
     "limit)"},
    {"inner: 3\n", 1, "'top.inner' must be {n}, not integer"},
    {"colours: red\n", 1, "unknown key 'colours' in 'top' (expected one of: "
                          "on, flip, count, between, name, file, colour, "
                          "verify, inner, custom)"},
};

START_TEST(problems_keep_their_words)
{
    read_text(bad[_i].yaml, "top");
    ck_assert_uint_eq(diag.count, 1);
    ck_assert_str_eq(diag.items[0].file, "s.yaml");
    ck_assert_int_eq(diag.items[0].line, bad[_i].line);
    ck_assert_str_eq(diag.items[0].msg, bad[_i].msg);
}
END_TEST

START_TEST(bad_values_leave_the_default)
{
    read_text("count: -1\ncolour: 7\nname: [a]\n", "");
    ck_assert_uint_eq(diag.count, 3);
    ck_assert_int_eq(got.count, 3);
    ck_assert_int_eq(got.colour, 2);
    ck_assert_str_eq(got.name, "x");
}
END_TEST

/* A quiet table never echoes an unknown key (it may be a pasted secret);
 * a file's own table ("" path) says no section. */
START_TEST(quiet_tables_do_not_echo)
{
    struct settings_table quiet = sample_table;
    const struct ydoc_node *root =
        ydoc_load_buffer("AIzaSECRET: 1\n", 14, "s.yaml", &arena, &diag);
    struct settings_ctx cx = {"s.yaml", "/base", &diag, NULL};

    quiet.quiet = true;
    settings_read(&quiet, &got, root, "", &cx);
    ck_assert_uint_eq(diag.count, 1);
    ck_assert_ptr_null(strstr(diag.items[0].msg, "AIzaSECRET"));
    ck_assert_ptr_nonnull(
        strstr(diag.items[0].msg, "unknown key (expected one of: on,"));
}
END_TEST

START_TEST(print_lists_every_key)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(out);
    read_text("colour: red\ninner: {n: 7}\ncustom: 1\n", "");
    settings_print(out, &sample_table, &got, "top");
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_ptr_nonnull(strstr(text, "  top.on: true - on\n"));
    ck_assert_ptr_nonnull(strstr(text, "  top.colour: red\n"));
    ck_assert_ptr_nonnull(strstr(text, "  top.verify: strict\n"));
    ck_assert_ptr_nonnull(strstr(text, "  top.name: x\n"));
    ck_assert_ptr_nonnull(strstr(text, "  top.file: (none)\n"));
    ck_assert_ptr_nonnull(strstr(text, "  top.inner.n: 7 - a ceiling\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "  top.custom: 1 calls - its own shape\n"));
    ck_assert_ptr_null(strstr(text, "top.old"));
    free(text);
}
END_TEST

Suite *
settings_suite(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("table");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, defaults_are_set);
    tcase_add_test(tc, every_type_is_read);
    tcase_add_loop_test(tc, problems_keep_their_words, 0,
                        (int)ARRAY_SIZE(bad));
    tcase_add_test(tc, bad_values_leave_the_default);
    tcase_add_test(tc, quiet_tables_do_not_echo);
    tcase_add_test(tc, print_lists_every_key);
    suite_add_tcase(s, tc);
    return s;
}
