/*
 * check_plugin_mcp.c - the built-in mcp plugin against a real MCP server:
 * @modelcontextprotocol/server-everything (package.json's devDependencies,
 * installed by scripts/setup-www.sh, which `make test` runs first) over
 * stdio, started by the plugin as a child of this test process.
 *
 * Without node or the package the server tests are skipped with a message
 * saying so; the bad-configuration tests need neither.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp.h"

#include "registry/jschema.h"
#include "core/arena.h"
#include "unit_plugin.h"
#include "unit_proc.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* From tests/unit, where the suites run. */
#define EVERYTHING \
    "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js"

static char tmpdir[64];
static char server_js[PATH_MAX];

/* --- the host's side ---------------------------------------------------- */

static struct arena ar; /* the answers of a test */

/* Is the server there to test against? Says why not when it is not. */
static bool
have_server(void)
{
    if (realpath(EVERYTHING, server_js) == NULL) {
        fprintf(stderr, "check_plugin_mcp: SKIP: %s is not installed (run "
                        "scripts/setup-www.sh)\n", EVERYTHING);
        return false;
    }
    if (system("node --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "check_plugin_mcp: SKIP: no node in PATH\n");
        return false;
    }
    return true;
}

static void
setup(void)
{
    unit_tmpdir(tmpdir, sizeof(tmpdir), "mcp-unit");
    arena_init(&ar);
}

static void
teardown(void)
{
    arena_release(&ar);
    unit_rmdir(tmpdir);
}

/* Write `text` to tmpdir/name. */
static void
write_file(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A .mcp.json naming server-everything over stdio as "everything". */
static void
write_everything(void)
{
    char text[PATH_MAX + 256];

    snprintf(text, sizeof(text),
             "{\"mcpServers\": {\"everything\": {\"command\": \"node\", "
             "\"args\": [\"%s\", \"stdio\"], "
             "\"env\": {\"GA_MCP_MARK\": \"marked-by-env\"}}}}",
             server_js);
    write_file(".mcp.json", text);
}

/* initialize() with `config` (JSON) in tmpdir: its rc, err, *self. */
static int
init_with(const char *config, void **self, char *err, size_t errsize)
{
    return unit_plugin_init(builtin_mcp(GEMINI_AGENT_PLUGIN_ABI), tmpdir,
                            self, err, errsize, "%s", config);
}

/* A tool's rc, its answer's text in text[size] and, when it ran, parsed
 * into *answer (NULL when the text was cut to fit). */
static int
run(void *self, const char *tool, const char *args, json_t **answer,
    char *text, size_t size)
{
    int rc = unit_plugin_exec(builtin_mcp(GEMINI_AGENT_PLUGIN_ABI), self,
                              tmpdir, &ar, tool, args, text, size);

    *answer = rc == GEMINI_AGENT_OK ? json_loads(text, 0, NULL) : NULL;
    return rc;
}

/* The processes whose parent is this one, into pids[max]: how many. */
static size_t
children(pid_t *pids, size_t max)
{
    size_t n = unit_children(pids, max);

    return n < max ? n : max;
}

/* --- the tests ---------------------------------------------------------- */

static void
count_problem(void *ctx, const char *pointer, const char *msg)
{
    fprintf(stderr, "schema problem at %s: %s\n", pointer, msg);
    (*(int *)ctx)++;
}

START_TEST(lists_tools_with_schemas)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300];
    void *self;
    json_t *decls, *d, *echo = NULL, *toggle = NULL, *sum = NULL;
    size_t i;

    if (!have_server())
        return;
    write_everything();
    ck_assert_msg(init_with("{}", &self, err, sizeof(err)) == 0, "%s", err);
    decls = json_loads(p->declarations(self), 0, NULL);
    ck_assert(json_is_array(decls));
    json_array_foreach(decls, i, d) {
        const char *name = json_string_value(json_object_get(d, "name"));
        int problems = 0;

        ck_assert_ptr_nonnull(name);
        ck_assert_msg(strncmp(name, "everything_", 11) == 0, "%s", name);
        ck_assert(json_string_length(json_object_get(d, "description")) > 0);
        ck_assert(json_is_boolean(json_object_get(d, "sideEffects")));
        /* every declaration is one the registry accepts */
        jschema_check(json_object_get(d, "parameters"), count_problem,
                      &problems);
        ck_assert_msg(problems == 0, "%s: parameters refused", name);
        if (strcmp(name, "everything_echo") == 0)
            echo = d;
        if (strcmp(name, "everything_toggle-simulated-logging") == 0)
            toggle = d;
        if (strcmp(name, "everything_get-sum") == 0)
            sum = d;
    }
    ck_assert_ptr_nonnull(echo);
    ck_assert_ptr_nonnull(toggle);
    ck_assert_ptr_nonnull(sum);
    /* the server's schema, less $schema */
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(json_object_get(
                                             echo, "parameters"),
                                                         "properties"),
                                         "message"),
                         "type")),
                     "string");
    ck_assert_ptr_null(json_object_get(json_object_get(echo, "parameters"),
                                       "$schema"));
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
                         json_object_get(sum, "parameters"), "required"), 1)),
                     "b");
    /* readOnlyHint true: no side effects; false or missing: side effects */
    ck_assert(json_is_false(json_object_get(echo, "sideEffects")));
    ck_assert(json_is_true(json_object_get(toggle, "sideEffects")));
    json_decref(decls);
    /* initialize() left no server running in the loading process */
    {
        pid_t pids[8];
        ck_assert_uint_eq(children(pids, 8), 0);
    }
    p->shutdown(self);
}
END_TEST

START_TEST(executes_tools)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300], text[8192];
    void *self;
    json_t *a;
    pid_t pids[8];

    if (!have_server())
        return;
    write_everything();
    ck_assert_msg(init_with("{\"timeoutMs\": 20000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    /* echo: the text comes back, not an error */
    ck_assert_int_eq(run(self, "everything_echo", "{\"message\":\"hi there\"}",
                         &a, text, sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_msg(a != NULL, "%s", text);
    ck_assert_str_eq(json_string_value(json_object_get(a, "content")),
                     "Echo: hi there");
    ck_assert(json_is_false(json_object_get(a, "isError")));
    json_decref(a);
    /* numbers through; the server's answer */
    ck_assert_int_eq(run(self, "everything_get-sum", "{\"a\":2,\"b\":40}", &a,
                         text, sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_msg(strstr(text, "42") != NULL, "%s", text);
    json_decref(a);
    /* structuredContent is the answer when the server gives one */
    ck_assert_int_eq(run(self, "everything_get-structured-content",
                         "{\"location\":\"Chicago\"}", &a, text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "temperature")), 36);
    json_decref(a);
    /* the server's own refusal is a result the model reads */
    ck_assert_int_eq(run(self, "everything_echo", "{}", &a, text, sizeof(text)),
                     GEMINI_AGENT_OK);
    ck_assert(json_is_true(json_object_get(a, "isError")));
    json_decref(a);
    /* env from .mcp.json reaches the server */
    ck_assert_int_eq(run(self, "everything_get-env", "{}", &a, text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_msg(strstr(text, "marked-by-env") != NULL, "%.300s", text);
    json_decref(a);
    /* an unknown tool: a clean error, nothing sent */
    ck_assert_int_eq(run(self, "everything_no-such-tool", "{}", &a, text,
                         sizeof(text)), GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(text, "no such tool");
    /* one server process for all these calls, ended by shutdown() */
    ck_assert_uint_eq(children(pids, 8), 1);
    p->shutdown(self);
    ck_assert_uint_eq(children(pids, 8), 0);
    errno = 0;
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD); /* reaped: no zombie left */
}
END_TEST

START_TEST(reconnects_after_the_server_died)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300], text[4096];
    void *self;
    json_t *a;
    pid_t first[8], second[8];

    if (!have_server())
        return;
    write_everything();
    ck_assert_msg(init_with("{\"timeoutMs\": 20000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(run(self, "everything_echo", "{\"message\":\"one\"}", &a,
                         text, sizeof(text)), GEMINI_AGENT_OK);
    json_decref(a);
    ck_assert_uint_eq(children(first, 8), 1);
    ck_assert_int_eq(kill(first[0], SIGKILL), 0);
    usleep(100000);
    ck_assert_int_eq(run(self, "everything_echo", "{\"message\":\"two\"}", &a,
                         text, sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_msg(a != NULL, "%s", text);
    ck_assert_str_eq(json_string_value(json_object_get(a, "content")),
                     "Echo: two");
    json_decref(a);
    /* a new server, the dead one reaped */
    ck_assert_uint_eq(children(second, 8), 1);
    ck_assert_int_ne(first[0], second[0]);
    p->shutdown(self);
    ck_assert_uint_eq(children(second, 8), 0);
}
END_TEST

START_TEST(children_inherit_no_descriptor)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300], text[4096], ours[64], path[128], link[64];
    void *self;
    json_t *a;
    pid_t pids[8];
    int fds[2];
    ssize_t n;
    DIR *d;
    struct dirent *de;

    if (!have_server())
        return;
    /* a descriptor without close-on-exec, as a listen socket may be */
    ck_assert_int_eq(pipe(fds), 0);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
    n = readlink(path, ours, sizeof(ours) - 1);
    ck_assert_int_gt(n, 0);
    ours[n] = '\0';
    write_everything();
    ck_assert_msg(init_with("{\"timeoutMs\": 20000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(run(self, "everything_echo", "{\"message\":\"x\"}", &a,
                         text, sizeof(text)), GEMINI_AGENT_OK);
    json_decref(a);
    ck_assert_uint_eq(children(pids, 8), 1);
    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pids[0]);
    d = opendir(path);
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL) {
        char fdpath[512];

        if (de->d_name[0] == '.')
            continue;
        snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
        n = readlink(fdpath, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        ck_assert_msg(strcmp(link, ours) != 0, "the child has our %s as fd %s",
                      ours, de->d_name);
    }
    closedir(d);
    p->shutdown(self);
    close(fds[0]);
    close(fds[1]);
}
END_TEST

/* The corners server-everything does not show, with tests/unit/data/
 * mcp_fake.py: stray output, a ping from the server, another protocol
 * version, two pages of tools, a schema the subset refuses, mixed
 * content, a timeout. */
START_TEST(fake_server_corners)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300], text[4096], fake[PATH_MAX], conf[PATH_MAX + 128];
    void *self;
    json_t *decls, *d, *loose = NULL, *dotted = NULL, *a;
    size_t i;

    ck_assert_ptr_nonnull(realpath("data/mcp_fake.py", fake));
    snprintf(conf, sizeof(conf),
             "{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", fake);
    write_file(".mcp.json", conf);
    ck_assert_msg(init_with("{\"timeoutMs\": 2000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    decls = json_loads(p->declarations(self), 0, NULL);
    json_array_foreach(decls, i, d) {
        const char *name = json_string_value(json_object_get(d, "name"));
        if (strcmp(name, "fake_loose") == 0)
            loose = d;
        if (strcmp(name, "fake_dotted_name") == 0)
            dotted = d;
    }
    /* both pages */
    ck_assert_uint_eq(json_array_size(decls), 4);
    ck_assert_ptr_nonnull(dotted);
    ck_assert(json_is_false(json_object_get(dotted, "sideEffects")));
    /* a schema the subset refuses: any object, and the description says so */
    ck_assert_ptr_nonnull(loose);
    ck_assert_uint_eq(json_object_size(json_object_get(loose, "parameters")),
                      1);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(loose, "parameters"), "type")),
                     "object");
    ck_assert_str_eq(json_string_value(json_object_get(loose, "description")),
                     "Tool 'loose' of the MCP server 'fake' (arguments "
                     "checked by the MCP server)");
    ck_assert(json_is_true(json_object_get(loose, "sideEffects")));
    json_decref(decls);
    /* the server's own name of a tool goes back to it */
    ck_assert_int_eq(run(self, "fake_dotted_name", "{}", &a, text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_str_eq(json_string_value(json_object_get(a, "content")),
                     "dotted.name");
    json_decref(a);
    ck_assert_int_eq(run(self, "fake_mixed", "{}", &a, text, sizeof(text)),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(json_string_value(json_object_get(a, "content")),
                     "mixed\n[image image/png]\n[resource file:///x]");
    json_decref(a);
    /* no answer in time: the tool's error, and the next call works */
    ck_assert_int_eq(run(self, "fake_slow", "{}", &a, text, sizeof(text)),
                     GEMINI_AGENT_FAILED);
    ck_assert_str_eq(text, "server 'fake' did not answer in time");
    ck_assert_int_eq(run(self, "fake_mixed", "{}", &a, text, sizeof(text)),
                     GEMINI_AGENT_OK);
    json_decref(a);
    p->shutdown(self);
}
END_TEST

/* A stdio server gets no Gemini or Google credential unless passed on by
 * name (core/credenv.h); `env` of .mcp.json still sets
 * what it names. server-everything's get-env answers its environment. */
START_TEST(servers_get_no_credentials)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    static const char *const canaries[][2] = {
        {"GEMINI_API_KEY", "canary-gemini-key-24"},
        {"GOOGLE_API_KEY", "canary-google-key-24"},
        {"GOOGLE_APPLICATION_CREDENTIALS", "/canary/adc-24.json"},
        {"GOOGLE_OAUTH_ACCESS_TOKEN", "canary-oauth-token-24"},
        {"CLOUDSDK_CONFIG", "/canary/gcloud-24"},
    };
    static char text[1 << 16];
    char err[300];
    void *self;
    json_t *a;

    if (!have_server())
        return;
    /* this test's own process (the suite forks): the server inherits it */
    for (size_t i = 0; i < ARRAY_SIZE(canaries); i++)
        ck_assert_int_eq(setenv(canaries[i][0], canaries[i][1], 1), 0);
    unsetenv("GEMINI_AGENT_PASS_ENV");
    write_everything();
    ck_assert_msg(init_with("{\"timeoutMs\": 20000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(run(self, "everything_get-env", "{}", &a, text,
                         sizeof(text)), GEMINI_AGENT_OK);
    json_decref(a);
    ck_assert_msg(strstr(text, "marked-by-env") != NULL, "%.300s", text);
    ck_assert_msg(strstr(text, "\\\"PATH\\\"") != NULL, "%.300s", text);
    for (size_t i = 0; i < ARRAY_SIZE(canaries); i++)
        ck_assert_msg(strstr(text, canaries[i][1]) == NULL, "%s leaked",
                      canaries[i][0]);
    p->shutdown(self);
    /* passed on by name */
    ck_assert_int_eq(setenv("GEMINI_AGENT_PASS_ENV",
                            "GOOGLE_APPLICATION_CREDENTIALS", 1), 0);
    ck_assert_msg(init_with("{\"timeoutMs\": 20000}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(run(self, "everything_get-env", "{}", &a, text,
                         sizeof(text)), GEMINI_AGENT_OK);
    json_decref(a);
    ck_assert_msg(strstr(text, "/canary/adc-24.json") != NULL, "%.300s",
                  text);
    ck_assert_ptr_null(strstr(text, "canary-gemini-key-24"));
    ck_assert_ptr_null(strstr(text, "/canary/gcloud-24"));
    p->shutdown(self);
}
END_TEST

/* initialize() refuses `config` with a reason containing `want`. */
static void
refused(const char *config, const char *want)
{
    char err[300];
    void *self;

    ck_assert_int_ne(init_with(config, &self, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, want) != NULL, "'%s' not in '%s'", want, err);
    ck_assert_ptr_null(self);
}

START_TEST(bad_configurations)
{
    pid_t pids[8];

    /* no file */
    refused("{}", "cannot read '");
    refused("{\"configFile\": \"nope.json\"}", "nope.json");
    /* not JSON, and where */
    write_file("bad.json", "{\"mcpServers\": {\"x\": ");
    refused("{\"configFile\": \"bad.json\"}", "cannot read '");
    /* the wrong shape */
    write_file("shape.json", "{\"servers\": {}}");
    refused("{\"configFile\": \"shape.json\"}", "\"mcpServers\"");
    write_file("both.json", "{\"mcpServers\": {\"x\": {\"command\": \"a\", "
                            "\"url\": \"http://127.0.0.1:1/\"}}}");
    refused("{\"configFile\": \"both.json\"}", "either \"command\" or \"url\"");
    write_file("name.json", "{\"mcpServers\": {\"a b\": {\"command\": \"a\"}}}");
    refused("{\"configFile\": \"name.json\"}", "server name 'a b'");
    write_file("sse.json", "{\"mcpServers\": {\"x\": {\"type\": \"sse\", "
                           "\"url\": \"http://127.0.0.1:1/sse\"}}}");
    refused("{\"configFile\": \"sse.json\"}", "type 'sse' is not supported");
    /* a command that does not exist, by name and by path */
    write_file("cmd.json", "{\"mcpServers\": {\"ghost\": {\"command\": "
                           "\"no-such-mcp-server-here\"}}}");
    refused("{\"configFile\": \"cmd.json\"}",
            "server 'ghost': cannot run 'no-such-mcp-server-here': not found "
            "in PATH");
    write_file("path.json", "{\"mcpServers\": {\"ghost\": {\"command\": "
                            "\"./bin/none\"}}}");
    refused("{\"configFile\": \"path.json\"}", "no such program");
    /* a program that exits at once: gone, and reaped */
    write_file("false.json",
               "{\"mcpServers\": {\"quitter\": {\"command\": \"false\"}}}");
    refused("{\"configFile\": \"false.json\"}", "server 'quitter' is gone");
    /* one that never answers: a timeout, and it is stopped */
    write_file("mute.json", "{\"mcpServers\": {\"mute\": {\"command\": "
                            "\"sleep\", \"args\": [\"30\"]}}}");
    refused("{\"configFile\": \"mute.json\", \"timeoutMs\": 300}",
            "server 'mute' did not answer in time");
    /* nothing reachable over HTTP (port 1 on loopback refuses) */
    write_file("http.json", "{\"mcpServers\": {\"far\": {\"url\": "
                            "\"http://127.0.0.1:1/mcp\"}}}");
    refused("{\"configFile\": \"http.json\", \"timeoutMs\": 2000, "
            "\"outbound\": {\"allow\": [\"127.0.0.1\"]}}",
            "server 'far' is unreachable");
    /* ... and without outbound.allow loopback is refused, not reached;
     * the sentence is ours, not libcurl's error buffer */
    refused("{\"configFile\": \"http.json\", \"timeoutMs\": 2000}",
            "server 'far' is unreachable: the address of 127.0.0.1 is not "
            "allowed");
    write_file("meta.json", "{\"mcpServers\": {\"meta\": {\"url\": "
                            "\"http://169.254.169.254/mcp\"}}}");
    refused("{\"configFile\": \"meta.json\", \"timeoutMs\": 2000, "
            "\"outbound\": {\"allow\": [\"127.0.0.1\"]}}",
            "server 'meta' is unreachable: the address of 169.254.169.254 "
            "is not allowed");
    refused("{\"configFile\": \"http.json\", "
            "\"outbound\": {\"allow\": [\"localhost\"]}}",
            "outbound.allow entries are IP addresses or networks");
    ck_assert_uint_eq(children(pids, 8), 0);
}
END_TEST

Suite *
plugin_mcp_suite(void)
{
    Suite *s = suite_create("plugin_mcp");
    TCase *tc = tcase_create("stdio");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lists_tools_with_schemas);
    tcase_add_test(tc, executes_tools);
    tcase_add_test(tc, servers_get_no_credentials);
    tcase_add_test(tc, reconnects_after_the_server_died);
    tcase_add_test(tc, children_inherit_no_descriptor);
    tcase_add_test(tc, bad_configurations);
    tcase_add_test(tc, fake_server_corners);
    suite_add_tcase(s, tc);
    return s;
}
