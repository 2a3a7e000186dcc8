/*
 * check_plugin_memory.c - the built-in memory plugin (src/plugins/
 * memory.c): save and search on the store of its config, per user; no
 * user, no memory; the default store under dataDir; its flag, so the
 * registry never declares it to the widget.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/memory.h"
#include "core/arena.h"
#include "core/jsonin.h"
#include "core/status.h"
#include "gemini-agent/plugin.h"
#include "unit_plugin.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static struct arena ar;

static void
setup(void)
{
    unit_tmpdir(dir, sizeof(dir), "memory");
    arena_init(&ar);
}

static void
teardown(void)
{
    arena_release(&ar);
    unit_rmdir(dir);
}

/* Call `tool` as `user` (NULL: none); the answer's text in *text. */
static int
call(const struct gemini_agent_plugin *p, void *self, const char *user,
     const char *tool, const char *args, const char **text)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, dir,
                                   unit_plugin_alloc,
                                   &ar, user, NULL, NULL};
    struct gemini_agent_out out = {NULL, 0};
    int rc = p->execute(self, &ctx, tool, args, strlen(args), &out);

    *text = out.text ? out.text : "";
    return rc;
}

/* Initialise with `config`; the instance. */
static void *
start(const struct gemini_agent_plugin *p, const char *config)
{
    void *self = unit_plugin_start(p, dir, config);

    ck_assert_ptr_nonnull(self);
    return self;
}

START_TEST(save_and_search_per_user)
{
    const struct gemini_agent_plugin *p = builtin_memory(GEMINI_AGENT_PLUGIN_ABI);
    char conf[160];
    const char *text;
    void *self;
    json_t *v;

    ck_assert_ptr_nonnull(p);
    ck_assert(p->flags & GEMINI_AGENT_NEEDS_USER);
    snprintf(conf, sizeof(conf), "{\"store\":\"sqlite:%s/m.db\"}", dir);
    self = start(p, conf);
    ck_assert_int_eq(call(p, self, "ann", "save",
                          "{\"text\":\"Ann likes tea\",\"tags\":\"drinks\"}",
                          &text),
                     GEMINI_AGENT_OK);
    ck_assert_msg(strstr(text, "\"saved\":true") != NULL, "%s", text);

    ck_assert_int_eq(call(p, self, "ann", "search", "{\"query\":\"tea\"}",
                          &text),
                     GEMINI_AGENT_OK);
    v = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(json_array_size(json_object_get(v, "memories")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(v, "memories"), 0),
                         "text")),
                     "Ann likes tea");
    json_decref(v);

    /* another user finds none of ann's */
    ck_assert_int_eq(call(p, self, "bob", "search", "{\"query\":\"tea\"}",
                          &text),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"memories\":[]}");
    p->shutdown(self);

    /* a new instance on the same store remembers */
    self = start(p, conf);
    ck_assert_int_eq(call(p, self, "ann", "search", "{\"query\":\"tea\"}",
                          &text),
                     GEMINI_AGENT_OK);
    ck_assert_msg(strstr(text, "Ann likes tea") != NULL, "%s", text);
    p->shutdown(self);
}
END_TEST

START_TEST(no_user_no_memory)
{
    const struct gemini_agent_plugin *p = builtin_memory(GEMINI_AGENT_PLUGIN_ABI);
    const char *text;
    char path[128];
    void *self = start(p, "{}");

    ck_assert_int_eq(call(p, self, NULL, "save", "{\"text\":\"x\"}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(text, "memory is only for a signed-in user");
    ck_assert_int_eq(call(p, self, "ann", "forget", "{}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    /* no store named: the run API's default, <dataDir>/agent.db */
    ck_assert_int_eq(call(p, self, "ann", "save", "{\"text\":\"x\"}", &text),
                     GEMINI_AGENT_OK);
    snprintf(path, sizeof(path), "%s/agent.db", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    p->shutdown(self);
}
END_TEST

START_TEST(store_unavailable_is_a_tool_error)
{
    const struct gemini_agent_plugin *p = builtin_memory(GEMINI_AGENT_PLUGIN_ABI);
    const char *text;
    void *self = start(p, "{\"store\":\"sqlite:/nonexistent/dir/m.db\"}");

    ck_assert_int_eq(call(p, self, "ann", "save", "{\"text\":\"x\"}", &text),
                     GEMINI_AGENT_FAILED);
    ck_assert_str_eq(text, "memory is unavailable right now");
    ck_assert_ptr_null(strstr(text, "nonexistent")); /* no path leaks */
    p->shutdown(self);
}
END_TEST

Suite *
plugin_memory_suite(void)
{
    Suite *s = suite_create("plugin_memory");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, save_and_search_per_user);
    tcase_add_test(tc, no_user_no_memory);
    tcase_add_test(tc, store_unavailable_is_a_tool_error);
    suite_add_tcase(s, tc);
    return s;
}
