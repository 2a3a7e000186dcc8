/*
 * check_plugin_cli.c - the built-in plugin cli, called through its
 * operations as the terminal client will: Claude Code's Bash and its
 * result text (stdout and stderr trimmed and joined, the exit code, the
 * 30000-character cap, the aborted command), exit codes, stdout and stderr,
 * the folder and stdin a command gets, the timeout that kills its process
 * group, extraPaths and env, output caps, no inherited descriptors,
 * concurrent calls, and its config. Each test works in its own folder
 * under /tmp.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/cli.h"
#include "unit_plugin.h"
#include "core/arena.h"
#include "plugins/bounds.h"
#include "core/monotime.h"

#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];
static char root[128];
static const struct gemini_agent_plugin *cli;
static void *self;
static struct arena ar;

static int
init_with(const char *config, void **out, char *err, size_t n)
{
    struct gemini_agent_init init = {config, strlen(config), tmp, tmp};
    return cli->initialize(&init, out, err, n);
}

/* A fresh instance with `config` in place of the current one. */
static void
reinit(const char *config)
{
    char err[300] = "";

    cli->shutdown(self);
    self = NULL;
    ck_assert_msg(init_with(config, &self, err, sizeof(err)) == 0, "%s",
                  err);
}

static void
setup(void)
{
    char conf[256];

    snprintf(tmp, sizeof(tmp), "/tmp/ga-cli.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(root, sizeof(root), "%s/work", tmp);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    arena_init(&ar);
    cli = builtin_cli(GEMINI_AGENT_PLUGIN_ABI);
    ck_assert_ptr_nonnull(cli);
    ck_assert_ptr_null(builtin_cli(GEMINI_AGENT_PLUGIN_ABI + 1));
    snprintf(conf, sizeof(conf), "{\"root\":\"work\"}");
    ck_assert_int_eq(init_with(conf, &self, conf, sizeof(conf)), 0);
}

static void
teardown(void)
{
    char cmd[128];

    cli->shutdown(self);
    self = NULL;
    arena_release(&ar);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    ck_assert_int_eq(system(cmd), 0);
}

static int
call(const char *args, const char **text)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, tmp, unit_plugin_alloc,
                                   &ar, NULL, NULL, NULL};
    struct gemini_agent_out out = {NULL, 0};
    int rc = cli->execute(self, &ctx, "Bash", args, strlen(args), &out);

    ck_assert_ptr_nonnull(out.text);
    *text = out.text;
    return rc;
}

/* Run the command (a JSON string's content) and expect an answer. */
static const char *
run(const char *command_json)
{
    const char *t;
    char *args;
    int rc;

    unit_plugin_lock();
    args = arena_printf(&ar, "{\"command\":\"%s\"}", command_json);
    unit_plugin_unlock();
    rc = call(args, &t);
    ck_assert_msg(rc == GEMINI_AGENT_OK, "%s: %d %s", command_json, rc, t);
    return t;
}

/* The answer's string member `key` (arena). */
static const char *
str(const char *answer, const char *key)
{
    json_t *j = json_loads(answer, 0, NULL);
    const char *r;

    ck_assert_msg(j != NULL, "not JSON: %s", answer);
    ck_assert_msg(json_is_string(json_object_get(j, key)), "%s in %s", key,
                  answer);
    unit_plugin_lock();
    r = arena_strdup(&ar, json_string_value(json_object_get(j, key)));
    unit_plugin_unlock();
    json_decref(j);
    return r;
}

/* The answer's integer or boolean member `key` (a boolean as 0 or 1). */
static long long
num(const char *answer, const char *key)
{
    json_t *j = json_loads(answer, 0, NULL), *v;
    long long r;

    ck_assert_ptr_nonnull(j);
    v = json_object_get(j, key);
    ck_assert_msg(json_is_integer(v) || json_is_boolean(v), "%s in %s", key,
                  answer);
    r = json_is_integer(v) ? json_integer_value(v) : json_is_true(v);
    json_decref(j);
    return r;
}

START_TEST(claude_code_text)
{
    const char *t;
    char *want;

    /* stdout without its leading blank lines and trailing white space,
     * then stderr trimmed, joined by \n */
    t = run("printf '\\n\\n  out\\nmore\\n\\n'; printf '\\n err \\n' >&2");
    ck_assert_str_eq(str(t, "text"), "  out\nmore\nerr");
    ck_assert_str_eq(str(t, "stdout"), "  out\nmore");
    ck_assert_str_eq(str(t, "stderr"), "err");
    ck_assert_int_eq(num(t, "interrupted"), 0);
    ck_assert_int_eq(num(t, "isImage"), 0);
    /* a failed command's exit code comes first */
    t = run("echo out; echo err >&2; exit 3");
    ck_assert_str_eq(str(t, "text"), "Exit code 3\nout\nerr");
    ck_assert_int_eq(num(t, "exitCode"), 3);
    t = run("exit 1");
    ck_assert_str_eq(str(t, "text"), "Exit code 1");
    t = run("true");
    ck_assert_str_eq(str(t, "text"), "");
    /* 30000 characters at most, then how many lines were left out */
    t = run("i=0; while [ $i -lt 4000 ]; do echo 0123456789; i=$((i+1)); "
            "done");
    want = arena_printf(&ar, "%s", str(t, "text"));
    ck_assert_uint_eq(strlen(want), 30000 + strlen("\n\n... [1273 lines "
                                                    "truncated] ..."));
    ck_assert_str_eq(want + 30000, "\n\n... [1273 lines truncated] ...");
    ck_assert_str_eq(str(t, "stdout"), want);
    /* characters, not bytes: 30000 of "é" are 60000 bytes */
    t = run("i=0; while [ $i -lt 3100 ]; do printf '\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'; "
            "i=$((i+1)); done");
    ck_assert_str_eq(str(t, "text") + 60000,
                     "\n\n... [1 lines truncated] ...");
    /* the description is accepted (the terminal client shows it) */
    ck_assert_int_eq(call("{\"command\":\"echo hi\",\"description\":"
                          "\"Say hi\"}",
                          &t),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(str(t, "text"), "hi");
}
END_TEST

START_TEST(exit_codes_and_streams)
{
    const char *t;

    t = run("echo out; echo err >&2; exit 3");
    ck_assert_int_eq(num(t, "exitCode"), 3);
    ck_assert_str_eq(str(t, "stdout"), "out");
    ck_assert_str_eq(str(t, "stderr"), "err");
    ck_assert_int_eq(num(t, "timedOut"), 0);
    ck_assert_int_eq(num(t, "truncated"), 0);
    t = run("true");
    ck_assert_int_eq(num(t, "exitCode"), 0);
    ck_assert_str_eq(str(t, "stdout"), "");
    /* killed by a signal: 128 + its number, as the shell says */
    t = run("kill -TERM $$");
    ck_assert_ptr_nonnull(strstr(t, "\"exitCode\":143"));
    t = run("nosuchcommand-ga");
    ck_assert_ptr_nonnull(strstr(t, "\"exitCode\":127"));
    ck_assert_ptr_nonnull(strstr(t, "not found"));
    /* bytes that are not UTF-8 become '?' */
    t = run("printf '\\\\377ok'");
    ck_assert_str_eq(str(t, "stdout"), "?ok");
}
END_TEST

START_TEST(folder_stdin_and_descriptors)
{
    const char *t;
    char *want;
    int fd;

    t = run("pwd");
    want = arena_printf(&ar, "%s", root);
    ck_assert_str_eq(str(t, "stdout"), want);
    /* stdin is /dev/null: cat ends at once */
    t = run("cat; echo done");
    ck_assert_str_eq(str(t, "stdout"), "done");
    /* a descriptor of the server without FD_CLOEXEC is not inherited */
    fd = open("/dev/null", O_RDONLY);
    ck_assert_int_ge(fd, 3);
    t = run(arena_printf(&ar,
                         "test -e /proc/self/fd/%d && echo leaked || "
                         "echo closed",
                         fd));
    close(fd);
    ck_assert_str_eq(str(t, "stdout"), "closed");
    /* its own process group */
    t = run("cut -d' ' -f5 /proc/$$/stat; echo $$");
    {
        long pgid = 0, pid = 0;
        const char *p = strstr(t, "\"stdout\":\"");
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(sscanf(p + 10, "%ld\\n%ld", &pgid, &pid), 2);
        ck_assert_int_eq(pgid, pid);
        ck_assert_int_ne(pgid, getpgrp());
    }
}
END_TEST

/* Has process `pid` gone (or is it only a zombie left for init)? */
static bool
gone(long pid)
{
    char path[64], buf[256];
    FILE *f;
    const char *p;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((f = fopen(path, "r")) == NULL)
        return true;
    buf[0] = '\0';
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && p[2] == 'Z';
}

START_TEST(timeout_kills_the_group)
{
    const char *t;
    long t0 = monotime_ms(), pid = 0;

    ck_assert_int_eq(call("{\"command\":\"echo started; sleep 100\","
                          "\"timeout\":200}",
                          &t),
                     GEMINI_AGENT_OK);
    ck_assert_int_lt(monotime_ms() - t0, 5000);
    ck_assert_int_eq(num(t, "exitCode"), 137);
    ck_assert_int_eq(num(t, "timedOut"), 1);
    ck_assert_int_eq(num(t, "interrupted"), 1);
    ck_assert_str_eq(str(t, "text"), "started\n<error>Command was aborted "
                                     "before completion</error>");
    /* a child of the shell goes with it: the whole group is killed */
    t0 = monotime_ms();
    ck_assert_int_eq(call("{\"command\":\"sleep 100 & echo $!; wait\","
                          "\"timeout\":300}",
                          &t),
                     GEMINI_AGENT_OK);
    ck_assert_int_lt(monotime_ms() - t0, 5000);
    ck_assert_ptr_nonnull(strstr(t, "\"timedOut\":true"));
    ck_assert_int_eq(sscanf(strstr(t, "\"stdout\":\"") + 10, "%ld", &pid), 1);
    for (int i = 0; i < 100 && !gone(pid); i++)
        usleep(10000);
    ck_assert_msg(gone(pid), "sleep %ld outlived its timeout", pid);

    /* the shell exits, its background child holds the pipes: not a
     * timeout, and it does not outlive the call either */
    t0 = monotime_ms();
    t = run("sleep 100 & echo $!");
    ck_assert_int_lt(monotime_ms() - t0, 5000);
    ck_assert_ptr_nonnull(strstr(t, "\"timedOut\":false"));
    ck_assert_ptr_nonnull(strstr(t, "\"exitCode\":0"));
    ck_assert_int_eq(sscanf(strstr(t, "\"stdout\":\"") + 10, "%ld", &pid), 1);
    for (int i = 0; i < 100 && !gone(pid); i++)
        usleep(10000);
    ck_assert_msg(gone(pid), "background sleep %ld outlived the call", pid);

    /* the config's timeout when the call gives none */
    reinit("{\"root\":\"work\",\"timeoutMs\":150}");
    t = run("sleep 100");
    ck_assert_ptr_nonnull(strstr(t, "\"timedOut\":true"));
    /* a timeout above the most is refused */
    ck_assert_int_eq(call("{\"command\":\"true\",\"timeout\":600001}", &t),
                     GEMINI_AGENT_BAD_INPUT);
}
END_TEST

/* ctx->cancelled for the test below: says "stop" from the 3rd question
 * on (about 300 ms into the command), counting the questions. */
static int asked;

static int
cancel_later(const struct gemini_agent_ctx *ctx)
{
    (void)ctx;
    return ++asked >= 3;
}

START_TEST(cancel_kills_the_group)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, tmp,
                                   unit_plugin_alloc, &ar, NULL, NULL,
                                   cancel_later};
    struct gemini_agent_out out = {NULL, 0};
    const char *args = "{\"command\":\"echo started; "
                       "trap 'echo bye; exit 3' TERM; sleep 100 & echo $!; "
                       "wait\"}";
    long t0 = monotime_ms(), pid = 0;
    int rc;

    asked = 0;
    rc = cli->execute(self, &ctx, "Bash", args, strlen(args), &out);
    /* asked every ~100 ms: stopped within a second, not at 100 s */
    ck_assert_int_lt(monotime_ms() - t0, 2000);
    ck_assert_int_ge(asked, 3);
    ck_assert_int_eq(rc, GEMINI_AGENT_FAILED);
    ck_assert_ptr_nonnull(out.text);
    /* SIGTERM first: the shell's trap ran; then Claude Code's error */
    ck_assert_msg(sscanf(out.text, "started\n%ld\nbye\n", &pid) == 1 &&
                      strstr(out.text, "bye\n<error>Command was aborted "
                                       "before completion</error>") != NULL,
                  "%s", out.text);
    for (int i = 0; i < 100 && !gone(pid); i++)
        usleep(10000);
    ck_assert_msg(gone(pid), "sleep %ld outlived the cancelled call", pid);

    /* a group that ignores SIGTERM gets SIGKILL after the grace */
    asked = 0;
    t0 = monotime_ms();
    args = "{\"command\":\"trap '' TERM; sleep 100 & echo $!; wait\"}";
    rc = cli->execute(self, &ctx, "Bash", args, strlen(args), &out);
    ck_assert_int_lt(monotime_ms() - t0, 300 + CLI_KILL_GRACE_MS + 1500);
    ck_assert_int_eq(rc, GEMINI_AGENT_FAILED);
    ck_assert_int_eq(sscanf(out.text, "%ld", &pid), 1);
    for (int i = 0; i < 100 && !gone(pid); i++)
        usleep(10000);
    ck_assert_msg(gone(pid), "sleep %ld outlived SIGKILL", pid);
}
END_TEST

START_TEST(paths_env_and_caps)
{
    char *bin;
    const char *t;
    FILE *f;

    bin = arena_printf(&ar, "%s/bin", tmp);
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    f = fopen(arena_printf(&ar, "%s/ga-tool", bin), "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\necho found \"$GREETING\"\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(arena_printf(&ar, "%s/ga-tool", bin), 0755), 0);

    t = run("ga-tool");
    ck_assert_ptr_nonnull(strstr(t, "\"exitCode\":127"));
    /* extraPaths relative to agent.yaml's folder, env added */
    reinit("{\"root\":\"work\",\"extraPaths\":[\"bin\"],"
           "\"env\":{\"GREETING\":\"hi\"},\"maxOutputBytes\":100}");
    t = run("ga-tool");
    ck_assert_str_eq(str(t, "text"), "found hi");
    ck_assert_int_eq(num(t, "exitCode"), 0);
    t = run("echo $PATH");
    ck_assert_ptr_nonnull(strstr(t, arena_printf(&ar, "\"stdout\":\"%s:",
                                                 bin)));
    /* output past maxOutputBytes: read to the end, kept to the cap */
    t = run("head -c 5000 /dev/zero | tr '\\\\0' a; echo e >&2; exit 4");
    ck_assert_ptr_nonnull(strstr(t, "\"exitCode\":4"));
    ck_assert_ptr_nonnull(strstr(t, "\"truncated\":true"));
    ck_assert_str_eq(str(t, "stderr"), "e");
    {
        const char *s = str(t, "stdout");
        size_t n = strspn(s, "a");
        ck_assert_uint_eq(n, 100);
        ck_assert_str_eq(s + n, "\n\n... [1 lines truncated] ...");
    }
}
END_TEST

/* The credentials a command must not see, each with a
 * value found nowhere else. */
static const char *const canaries[][2] = {
    {"GEMINI_API_KEY", "canary-gemini-key-24"},
    {"GOOGLE_API_KEY", "canary-google-key-24"},
    {"GOOGLE_APPLICATION_CREDENTIALS", "/canary/adc-24.json"},
    {"GOOGLE_OAUTH_ACCESS_TOKEN", "canary-oauth-token-24"},
    {"CLOUDSDK_CONFIG", "/canary/gcloud-24"},
    {"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", "/canary/token-file-24"},
};

START_TEST(commands_get_no_credentials)
{
    const char *t;

    /* the suite forks each test: these stay in this test's process */
    for (size_t i = 0; i < ARRAY_SIZE(canaries); i++)
        ck_assert_int_eq(setenv(canaries[i][0], canaries[i][1], 1), 0);
    ck_assert_int_eq(setenv("GA_CLI_PLAIN", "plain-24", 1), 0);
    unsetenv("GEMINI_AGENT_PASS_ENV");
    reinit("{\"root\":\"work\"}");
    t = run("env");
    for (size_t i = 0; i < ARRAY_SIZE(canaries); i++) {
        ck_assert_msg(strstr(t, canaries[i][1]) == NULL, "%s leaked: %.400s",
                      canaries[i][0], t);
        ck_assert_msg(strstr(t, canaries[i][0]) == NULL, "%s named: %.400s",
                      canaries[i][0], t);
    }
    ck_assert_ptr_nonnull(strstr(t, "GA_CLI_PLAIN=plain-24"));
    ck_assert_ptr_nonnull(strstr(t, "PATH="));
    /* passed on by name (spaces or commas), and set by value in `env` */
    ck_assert_int_eq(setenv("GEMINI_AGENT_PASS_ENV",
                            "GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_CONFIG",
                            1), 0);
    reinit("{\"root\":\"work\",\"env\":{\"GOOGLE_API_KEY\":\"set-24\"}}");
    t = run("env");
    ck_assert_ptr_nonnull(
        strstr(t, "GOOGLE_APPLICATION_CREDENTIALS=/canary/adc-24.json"));
    ck_assert_ptr_nonnull(strstr(t, "CLOUDSDK_CONFIG=/canary/gcloud-24"));
    ck_assert_ptr_nonnull(strstr(t, "GOOGLE_API_KEY=set-24"));
    ck_assert_ptr_null(strstr(t, "canary-gemini-key-24"));
    ck_assert_ptr_null(strstr(t, "canary-google-key-24"));
    ck_assert_ptr_null(strstr(t, "canary-oauth-token-24"));
    ck_assert_ptr_null(strstr(t, "/canary/token-file-24"));
}
END_TEST

START_TEST(bad_calls_and_config)
{
    const char *t;
    char err[300] = "";
    void *s2 = NULL;
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, tmp, unit_plugin_alloc,
                                   &ar, NULL, NULL, NULL};
    struct gemini_agent_out out = {NULL, 0};

    ck_assert_int_eq(call("{\"command\":\"\"}", &t), GEMINI_AGENT_BAD_INPUT);
    ck_assert_ptr_nonnull(strstr(t, "non-empty"));
    ck_assert_int_eq(call("{\"command\":\"true\",\"timeout\":0}", &t),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_int_eq(call("{\"cmd\":\"true\"}", &t), GEMINI_AGENT_BAD_INPUT);
    ck_assert_int_eq(cli->execute(self, &ctx, "run", "{}", 2, &out),
                     GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(out.text, "Error: No such tool available: run");

    ck_assert_int_ne(init_with("{\"root\":\"nope\"}", &s2, err, sizeof(err)),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "is not a folder"));
    ck_assert_int_ne(init_with("{\"extraPaths\":[\"a:b\"]}", &s2, err,
                               sizeof(err)),
                     0);
    ck_assert_int_ne(init_with("{\"env\":{\"A-B\":\"x\"}}", &s2, err,
                               sizeof(err)),
                     0);
    ck_assert_int_ne(init_with("{\"maxOutputBytes\":65537}", &s2, err,
                               sizeof(err)),
                     0);
    ck_assert_int_ne(init_with("{\"shell\":\"bash\"}", &s2, err, sizeof(err)),
                     0);
    ck_assert_ptr_nonnull(cli->config_schema());
    ck_assert_uint_eq(cli->flags, GEMINI_AGENT_TERMINAL_ONLY);
}
END_TEST

static void *
runner(void *arg)
{
    const char *t;
    char cmd[64];
    int n = (int)(intptr_t)arg;

    snprintf(cmd, sizeof(cmd), "sleep 0.05; echo %d", n);
    for (int i = 0; i < 5; i++) {
        char want[32];
        t = run(cmd);
        snprintf(want, sizeof(want), "\"stdout\":\"%d\"", n);
        if (strstr(t, want) == NULL)
            return (void *)1;
    }
    return NULL;
}

START_TEST(concurrent_calls)
{
    pthread_t th[4];
    void *r;

    for (intptr_t i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, runner, (void *)i), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(th[i], &r), 0);
        ck_assert_ptr_null(r);
    }
}
END_TEST

Suite *
plugin_cli_suite(void)
{
    Suite *s = suite_create("plugin_cli");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, claude_code_text);
    tcase_add_test(tc, exit_codes_and_streams);
    tcase_add_test(tc, folder_stdin_and_descriptors);
    tcase_add_test(tc, timeout_kills_the_group);
    tcase_add_test(tc, cancel_kills_the_group);
    tcase_add_test(tc, paths_env_and_caps);
    tcase_add_test(tc, commands_get_no_credentials);
    tcase_add_test(tc, bad_calls_and_config);
    tcase_add_test(tc, concurrent_calls);
    suite_add_tcase(s, tc);
    return s;
}
