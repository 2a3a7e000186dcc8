/*
 * check_plugin_todo.c - the built-in todo plugin (src/plugins/todo.c):
 * its tools on a plan, its bounds, the plan kept on disk across
 * instances, the cap on stored plans, concurrent writers (threads and
 * processes) that leave a valid plan with no update lost, and who/where
 * reaching it through the registry (action_run's who).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/todo.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "registry/action.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "unit_plugin.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];
static struct arena ar;

static void
setup(void)
{
    unit_tmpdir(dir, sizeof(dir), "todo");
    arena_init(&ar);
}

static void
teardown(void)
{
    arena_release(&ar);
    unit_rmdir(dir);
}

static void *
open_todo(const char *config)
{
    return unit_plugin_start(builtin_todo(GEMINI_AGENT_PLUGIN_ABI), dir,
                             config);
}

static void
close_todo(void *self)
{
    builtin_todo(GEMINI_AGENT_PLUGIN_ABI)->shutdown(self);
}

/* Run `tool` with `args` in `conv`: the rc, and the answer in *text. */
static int
call(void *self, const char *conv, const char *tool, const char *args,
     const char **text)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, dir, unit_plugin_alloc,
                                   &ar, NULL, conv, NULL};
    struct gemini_agent_out out = {NULL, 0};
    int rc = builtin_todo(GEMINI_AGENT_PLUGIN_ABI)
                 ->execute(self, &ctx, tool, args, strlen(args), &out);

    *text = out.text ? out.text : "";
    return rc;
}

/* The steps of an answer, as "id:title:status|..." */
static const char *
steps_of(const char *text)
{
    static char buf[8192];
    json_t *ans = json_loads(text, 0, NULL), *s;
    json_t *steps = json_object_get(json_object_get(ans, "todo"), "steps");
    size_t i, n = 0;

    ck_assert_msg(json_is_array(steps), "not a plan: %s", text);
    buf[0] = '\0';
    json_array_foreach(steps, i, s) {
        n += (size_t)snprintf(
            buf + n, sizeof(buf) - n, "%s%lld:%s:%s", i ? "|" : "",
            (long long)json_integer_value(json_object_get(s, "id")),
            json_string_value(json_object_get(s, "title")),
            json_string_value(json_object_get(s, "status")));
    }
    json_decref(ans);
    return buf;
}

static const char *
ok(void *self, const char *conv, const char *tool, const char *args)
{
    const char *text;
    int rc = call(self, conv, tool, args, &text);

    ck_assert_msg(rc == GEMINI_AGENT_OK, "%s %s: %d %s", tool, args, rc, text);
    return steps_of(text);
}

static size_t
count_files(const char *suffix)
{
    char sub[128];
    struct dirent *e;
    size_t n = 0;
    DIR *d;

    snprintf(sub, sizeof(sub), "%s/todo", dir);
    d = opendir(sub);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        n += len > strlen(suffix) &&
             strcmp(e->d_name + len - strlen(suffix), suffix) == 0;
    }
    closedir(d);
    return n;
}

START_TEST(tools_keep_a_plan)
{
    void *t = open_todo("{}");
    const char *text;

    ck_assert_str_eq(ok(t, "c1", "show", "{}"), "");
    ck_assert_str_eq(ok(t, "c1", "plan", "{\"steps\":[\"read\",\"write\"]}"),
                     "1:read:pending|2:write:pending");
    ck_assert_str_eq(ok(t, "c1", "add", "{\"title\":\"test\"}"),
                     "1:read:pending|2:write:pending|3:test:pending");
    ck_assert_str_eq(ok(t, "c1", "add", "{\"title\":\"plan\",\"after\":0}"),
                     "4:plan:pending|1:read:pending|2:write:pending|"
                     "3:test:pending");
    ck_assert_str_eq(ok(t, "c1", "add", "{\"title\":\"think\",\"after\":1}"),
                     "4:plan:pending|1:read:pending|5:think:pending|"
                     "2:write:pending|3:test:pending");
    ck_assert_str_eq(
        ok(t, "c1", "update", "{\"id\":2,\"status\":\"in_progress\"}"),
        "4:plan:pending|1:read:pending|5:think:pending|"
        "2:write:in_progress|3:test:pending");
    ck_assert_str_eq(ok(t, "c1", "update", "{\"id\":3,\"title\":\"check\"}"),
                     "4:plan:pending|1:read:pending|5:think:pending|"
                     "2:write:in_progress|3:check:pending");
    ck_assert_str_eq(ok(t, "c1", "complete", "{\"id\":4}"),
                     "4:plan:done|1:read:pending|5:think:pending|"
                     "2:write:in_progress|3:check:pending");
    /* a new plan replaces the old one and counts from 1 again */
    ck_assert_str_eq(ok(t, "c1", "plan", "{\"steps\":[\"again\"]}"),
                     "1:again:pending");

    /* unknown ids are the model's mistake, and change nothing */
    ck_assert_int_eq(call(t, "c1", "complete", "{\"id\":9}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(text, "no step with that id"));
    ck_assert_int_eq(call(t, "c1", "add", "{\"title\":\"x\",\"after\":9}",
                          &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(ok(t, "c1", "show", "{}"), "1:again:pending");

    /* another conversation has a plan of its own */
    ck_assert_str_eq(ok(t, "c2", "show", "{}"), "");

    /* no conversation: a clear error, nothing stored */
    ck_assert_int_eq(call(t, NULL, "plan", "{\"steps\":[\"a\"]}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(text, "conversation"));
    ck_assert_int_eq(call(t, "c1", "nope", "{}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    close_todo(t);
}
END_TEST

START_TEST(bounds_hold)
{
    void *t = open_todo("{\"maxSteps\":3}");
    char big[BOUND_TODO_TITLE + 32];
    char args[BOUND_TODO_TITLE + 64];
    const char *text;

    ck_assert_int_eq(call(t, "c", "plan", "{\"steps\":[\"a\",\"b\",\"c\",\"d\"]}",
                          &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(text, "at most 3 steps"));
    ok(t, "c", "plan", "{\"steps\":[\"a\",\"b\",\"c\"]}");
    ck_assert_int_eq(call(t, "c", "add", "{\"title\":\"d\"}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(ok(t, "c", "show", "{}"),
                     "1:a:pending|2:b:pending|3:c:pending");
    memset(big, 'x', BOUND_TODO_TITLE + 1);
    big[BOUND_TODO_TITLE + 1] = '\0';
    snprintf(args, sizeof(args), "{\"id\":1,\"title\":\"%s\"}", big);
    ck_assert_int_eq(call(t, "c", "update", args, &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_int_eq(call(t, "c", "plan", "{\"steps\":[\"\"]}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    close_todo(t);

    /* the config's own bounds */
    {
        const struct gemini_agent_plugin *p =
            builtin_todo(GEMINI_AGENT_PLUGIN_ABI);
        struct gemini_agent_init init = {"{\"maxSteps\":100000}", 19, dir,
                                         dir};
        char err[200];
        void *self = NULL;
        ck_assert_int_ne(p->initialize(&init, &self, err, sizeof(err)), 0);
        ck_assert_ptr_nonnull(p->config_schema());
        ck_assert_ptr_null(builtin_todo(GEMINI_AGENT_PLUGIN_ABI + 1));
    }
}
END_TEST

START_TEST(plan_outlives_the_instance)
{
    void *t = open_todo("{}");

    ok(t, "conv", "plan", "{\"steps\":[\"one\",\"two\"]}");
    ok(t, "conv", "complete", "{\"id\":1}");
    close_todo(t);
    t = open_todo("{}");
    ck_assert_str_eq(ok(t, "conv", "show", "{}"),
                     "1:one:done|2:two:pending");
    /* one plan file and its lock; no temporary left behind */
    ck_assert_uint_eq(count_files(".json"), 1);
    ck_assert_uint_eq(count_files(".lock"), 1);
    ck_assert_uint_eq(count_files(".tmp"), 0);
    /* a call that leaves no plan leaves no file either */
    const char *text;
    ck_assert_int_eq(call(t, "other", "complete", "{\"id\":1}", &text),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_uint_eq(count_files(".lock"), 1);
    close_todo(t);
}
END_TEST

/* Set the mtime of conversation `conv`'s plan to `sec`. */
static void
age(const char *conv, time_t sec)
{
    char hexcmd[256], path[256], hex[80];
    FILE *f;

    snprintf(hexcmd, sizeof(hexcmd), "printf %%s '%s' | sha256sum", conv);
    f = popen(hexcmd, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(hex, sizeof(hex), f));
    pclose(f);
    hex[64] = '\0';
    snprintf(path, sizeof(path), "%s/todo/%s.json", dir, hex);
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(cap_evicts_the_oldest)
{
    void *t = open_todo("{\"maxPlans\":3}");

    ok(t, "a", "plan", "{\"steps\":[\"a\"]}");
    ok(t, "b", "plan", "{\"steps\":[\"b\"]}");
    ok(t, "c", "plan", "{\"steps\":[\"c\"]}");
    age("a", 3000);
    age("b", 1000); /* the oldest */
    age("c", 2000);
    /* changing an existing plan makes no room */
    ok(t, "a", "add", "{\"title\":\"more\"}");
    ck_assert_uint_eq(count_files(".json"), 3);
    age("a", 3000);
    /* a fourth plan: b goes */
    ok(t, "d", "plan", "{\"steps\":[\"d\"]}");
    ck_assert_uint_eq(count_files(".json"), 3);
    ck_assert_uint_eq(count_files(".lock"), 3);
    ck_assert_str_eq(ok(t, "b", "show", "{}"), "");
    ck_assert_str_eq(ok(t, "a", "show", "{}"),
                     "1:a:pending|2:more:pending");
    ck_assert_str_eq(ok(t, "c", "show", "{}"), "1:c:pending");
    ck_assert_str_eq(ok(t, "d", "show", "{}"), "1:d:pending");
    close_todo(t);
}
END_TEST

#define ADDS 20

struct adder {
    void *todo;
    int who;
};

/* ADDS steps into conversation "shared", each with its own arena. */
static void *
add_many(void *data)
{
    struct adder *w = data;
    struct arena mine;

    arena_init(&mine);
    for (int i = 0; i < ADDS; i++) {
        struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, dir,
                                       unit_plugin_alloc, &mine, NULL, "shared", NULL};
        struct gemini_agent_out out = {NULL, 0};
        char args[64];
        int n = snprintf(args, sizeof(args), "{\"title\":\"w%d-%d\"}", w->who,
                         i);
        if (builtin_todo(GEMINI_AGENT_PLUGIN_ABI)
                ->execute(w->todo, &ctx, "add", args, (size_t)n, &out) !=
            GEMINI_AGENT_OK)
            w->who = -1;
        arena_reset(&mine);
    }
    arena_release(&mine);
    return NULL;
}

START_TEST(concurrent_writers_lose_nothing)
{
    void *t = open_todo("{\"maxSteps\":100}");
    struct adder w[2] = {{t, 0}, {t, 1}};
    pthread_t th[2];
    pid_t kid[2];
    json_t *ans;
    const char *text;

    ok(t, "shared", "plan", "{\"steps\":[]}");
    /* two processes, each with two threads */
    for (int k = 0; k < 2; k++) {
        kid[k] = fork();
        ck_assert_int_ge(kid[k], 0);
        if (kid[k] == 0) {
            struct adder mine[2] = {{t, 10 * k}, {t, 10 * k + 1}};
            pthread_create(&th[0], NULL, add_many, &mine[0]);
            pthread_create(&th[1], NULL, add_many, &mine[1]);
            pthread_join(th[0], NULL);
            pthread_join(th[1], NULL);
            _exit(mine[0].who < 0 || mine[1].who < 0);
        }
    }
    (void)w;
    for (int k = 0; k < 2; k++) {
        int st;
        ck_assert_int_eq(waitpid(kid[k], &st, 0), kid[k]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_int_eq(call(t, "shared", "show", "{}", &text), GEMINI_AGENT_OK);
    ans = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(ans);
    json_t *steps = json_object_get(json_object_get(ans, "todo"), "steps");
    ck_assert_uint_eq(json_array_size(steps), 4 * ADDS);
    /* every id once */
    for (size_t i = 0; i < json_array_size(steps); i++)
        for (size_t j = i + 1; j < json_array_size(steps); j++)
            ck_assert_int_ne(
                json_integer_value(
                    json_object_get(json_array_get(steps, i), "id")),
                json_integer_value(
                    json_object_get(json_array_get(steps, j), "id")));
    json_decref(ans);
    ck_assert_uint_eq(count_files(".tmp"), 0);
    close_todo(t);
}
END_TEST

static const gemini_agent_plugin_factory only_todo[] = {builtin_todo, NULL};

/* Through the registry: exposed by agent.yaml, run by action_run with a
 * who; a direct call (no who) is refused with the plugin's message. */
START_TEST(registry_passes_who)
{
    char yaml[256], path[128];
    struct diag d = DIAG_INIT;
    struct config *cfg;
    struct plugin_set *set;
    const struct plugin_action *act;
    struct status_error err = {0};
    json_t *in = json_loads("{\"steps\":[\"x\"]}", 0, NULL), *out = NULL;
    FILE *f;

    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    snprintf(yaml, sizeof(yaml),
             "actions: []\nplugins: {expose: [todo]}\n");
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(yaml, f);
    fclose(f);
    cfg = config_load(path, &d);
    ck_assert_ptr_nonnull(cfg);
    set = plugin_load(NULL, 0,
                      &(struct soplugin_env){.cfg = &cfg->plugins,
                                             .builtins = only_todo,
                                             .config_dir = dir,
                                             .data_dir = dir},
                      NULL, &d);
    ck_assert_ptr_nonnull(set);
    act = plugin_find(set, "todo.plan");
    ck_assert_ptr_nonnull(act);
    ck_assert(!act->side_effects);

    ck_assert_int_eq(action_run(&cfg->actions, act, NULL, in, &ar, &out, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(err.text, "conversation"));

    memset(&err, 0, sizeof(err));
    struct action_who who = {.user = "alice", .conversation = "thread-1"};
    ck_assert_int_eq(action_run(&cfg->actions, act, &who, in, &ar, &out, &err),
                     0);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(
                json_object_get(json_object_get(out, "todo"), "steps"), 0),
            "title")),
        "x");
    json_decref(in);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
}
END_TEST

Suite *
plugin_todo_suite(void)
{
    Suite *s = suite_create("plugin_todo");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, tools_keep_a_plan);
    tcase_add_test(tc, bounds_hold);
    tcase_add_test(tc, plan_outlives_the_instance);
    tcase_add_test(tc, cap_evicts_the_oldest);
    tcase_add_test(tc, concurrent_writers_lose_nothing);
    tcase_add_test(tc, registry_passes_who);
    suite_add_tcase(s, tc);
    return s;
}
