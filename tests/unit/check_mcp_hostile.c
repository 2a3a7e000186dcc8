/*
 * check_mcp_hostile.c - the built-in mcp plugin against a hostile MCP
 * server: tests/mcp/hostile.py, over stdio (a child of this
 * test process) and over Streamable HTTP (started here on a free
 * loopback port, stopped by PID), in the modes its header lists.
 *
 * Every case: the plugin loads with the good server's tools (a bad
 * server's left out, its status "failed"), a bad call is a clear error
 * and the next call works, time and memory stay bounded, no child is
 * left behind, and the log (this test's stderr, kept in a file) says
 * what went wrong without the server's bytes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp.h"

#include "core/bounds.h"
#include "plugins/bounds.h"
#include "core/monotime.h"
#include "core/arena.h"
#include "unit_plugin.h"
#include "unit_proc.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* From tests/unit, where the suites run. */
#define HOSTILE "../mcp/hostile.py"
/* Each exchange's timeout in these tests: long, for a loaded machine's
 * slow starts, but for the servers whose point is a timeout ("timeout"
 * in .mcp.json: FAST). */
#define TMO  "20000"
#define FAST ", \"timeout\": 2500"

static char tmpdir[64];
static char hostile[PATH_MAX];
static int saved_stderr = -1;
static pid_t http_pid;

/* --- the host's side ---------------------------------------------------- */

static struct arena ar; /* the answers of a test */

/* The log goes to tmpdir/log (stderr redirected) for log_has(). */
static void
setup(void)
{
    char path[128];
    int fd;

    unit_tmpdir(tmpdir, sizeof(tmpdir), "mcp-hostile");
    arena_init(&ar);
    ck_assert_ptr_nonnull(realpath(HOSTILE, hostile));
    snprintf(path, sizeof(path), "%s/log", tmpdir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    saved_stderr = dup(2);
    ck_assert_int_ge(dup2(fd, 2), 0);
    close(fd);
    http_pid = 0;
}

static void
teardown(void)
{
    arena_release(&ar);
    if (http_pid > 0) {
        kill(http_pid, SIGKILL);
        waitpid(http_pid, NULL, 0);
    }
    dup2(saved_stderr, 2);
    close(saved_stderr);
    unit_rmdir(tmpdir);
}

/* The log so far (malloc'd; at most 1 MiB of it), and its size. */
static char *
log_text(size_t *size)
{
    char path[128], *buf = calloc(1, 1u << 20);
    struct stat st;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/log", tmpdir);
    ck_assert_int_eq(stat(path, &st), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, (1u << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    *size = (size_t)st.st_size;
    return buf;
}

static bool
log_has(const char *want)
{
    size_t size;
    char *text = log_text(&size);
    bool found = strstr(text, want) != NULL;

    free(text);
    return found;
}

#define ck_log(want) ck_assert_msg(log_has(want), "not in the log: %s", want)

/* tmpdir/.mcp.json with `servers` (JSON members; HOSTILE stands for the
 * server's path, PORT for the HTTP server's port). */
static void
write_conf(const char *servers, int port)
{
    char path[128], *text = NULL;
    FILE *f;
    size_t cap = strlen(servers) * 4 + PATH_MAX * 20, n = 0;

    text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    for (const char *p = servers; *p; p++) {
        if (strncmp(p, "HOSTILE", 7) == 0) {
            n += (size_t)snprintf(text + n, cap - n, "%s", hostile);
            p += 6;
        } else if (strncmp(p, "PORT", 4) == 0) {
            n += (size_t)snprintf(text + n, cap - n, "%d", port);
            p += 3;
        } else {
            text[n++] = *p;
        }
    }
    text[n] = '\0';
    snprintf(path, sizeof(path), "%s/.mcp.json", tmpdir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"mcpServers\": {%s}}", text);
    ck_assert_int_eq(fclose(f), 0);
    free(text);
}

static int
init_with(const char *config, void **self, char *err, size_t errsize)
{
    return unit_plugin_init(builtin_mcp(GEMINI_AGENT_PLUGIN_ABI), tmpdir,
                            self, err, errsize, "%s", config);
}

static int
run(void *self, const char *tool, const char *args, char *text, size_t size)
{
    return unit_plugin_exec(builtin_mcp(GEMINI_AGENT_PLUGIN_ABI), self,
                            tmpdir, &ar, tool, args, text, size);
}

/* The declared names of `self`, as one string " a b c ". */
static char *
declared(void *self)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    json_t *decls = json_loads(p->declarations(self), 0, NULL), *d;
    size_t i, n = 1;
    char *out = malloc(1u << 16);

    ck_assert_ptr_nonnull(decls);
    strcpy(out, " ");
    json_array_foreach(decls, i, d) {
        n += (size_t)snprintf(out + n, (1u << 16) - n, "%s ",
                              json_string_value(json_object_get(d, "name")));
        ck_assert_uint_lt(n, (1u << 16) - 100);
    }
    json_decref(decls);
    return out;
}

static bool
has_tool(void *self, const char *name)
{
    char want[128], *names = declared(self);
    bool found;

    snprintf(want, sizeof(want), " %s ", name);
    found = strstr(names, want) != NULL;
    free(names);
    return found;
}

/* The children of this process: how many (they are the stdio servers;
 * the HTTP server is not counted). */
static size_t
nchildren(void)
{
    pid_t pids[64];
    size_t n = unit_children(pids, ARRAY_SIZE(pids)), left = 0;

    ck_assert_uint_le(n, ARRAY_SIZE(pids));
    for (size_t i = 0; i < n; i++)
        left += pids[i] != http_pid;
    return left;
}

static long
maxrss_kb(void)
{
    struct rusage ru;

    ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

/* hostile.py --http on a free loopback port: the port. */
static int
start_http(void)
{
    char portfile[128];
    long until = monotime_ms() + 10000;
    int port = 0;

    snprintf(portfile, sizeof(portfile), "%s/port", tmpdir);
    http_pid = fork();
    ck_assert_int_ge(http_pid, 0);
    if (http_pid == 0) {
        execl(hostile, hostile, "--http", portfile, (char *)NULL);
        _exit(127);
    }
    while (monotime_ms() < until) {
        FILE *f = fopen(portfile, "r");

        if (f != NULL && fscanf(f, "%d", &port) == 1) {
            fclose(f);
            return port;
        }
        if (f != NULL)
            fclose(f);
        usleep(20000);
    }
    ck_abort_msg("hostile.py --http did not start");
    return 0;
}

/* Depth of a JSON value ({} and [] are 1). */
static int
depth_of(const json_t *v)
{
    const char *k;
    json_t *sub;
    size_t i;
    int most = 0;

    if (json_is_object(v)) {
        json_object_foreach(UNCONST(v), k, sub) {
            int d = depth_of(sub);
            most = d > most ? d : most;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, sub) {
            int d = depth_of(sub);
            most = d > most ? d : most;
        }
    } else {
        return 0;
    }
    return most + 1;
}

/* --- listing: the bad server is left out, the good one serves --------- */

/* A mode, what the log says of it, and its server's timeout. */
static const struct {
    const char *mode, *want, *timeout;
} listing_modes[] = {
    {"huge-list", "sent a line over 4194304 bytes", NULL},
    {"endless-list", "sent a line over 4194304 bytes", NULL},
    {"deep-list", "is gone: end of its output (of what it sent, 1 "
                  "messages were not JSON and 0 not the answer)", NULL},
    {"slow-init", "did not answer in time", FAST},
    {"drip-init", "did not answer in time", FAST},
    {"stall-init", "did not answer in time", FAST},
    {"exit-after-init", "is gone", NULL},
    {"not-json", "did not answer in time (of what it sent, 1 messages "
                 "were not JSON and 0 not the answer)", FAST},
    {"not-rpc", "is gone: end of its output (of what it sent, 1 messages "
                "were not JSON and 3 not the answer)", NULL},
    {"wrong-id", "is gone: end of its output (of what it sent, 0 messages "
                 "were not JSON and 2 not the answer)", NULL},
    {"bad-utf8", "is gone: end of its output (of what it sent, 1 messages "
                 "were not JSON", NULL},
    {"nul", "is gone: end of its output (of what it sent, 2 messages were "
            "not JSON", NULL},
};

START_TEST(listing_modes_leave_the_server_out)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char conf[4096], err[300], text[256];
    long t0 = monotime_ms(), rss0 = maxrss_kb();
    size_t n = 0, i;
    void *self;

    n += (size_t)snprintf(conf, sizeof(conf), "\"good\": {\"command\": "
                          "\"HOSTILE\", \"args\": [\"good\"]}");
    for (i = 0; i < ARRAY_SIZE(listing_modes); i++)
        n += (size_t)snprintf(conf + n, sizeof(conf) - n,
                              ", \"b%zu\": {\"command\": \"HOSTILE\", "
                              "\"args\": [\"%s\"]%s}", i,
                              listing_modes[i].mode,
                              listing_modes[i].timeout
                                  ? listing_modes[i].timeout
                                  : "");
    write_conf(conf, 0);
    ck_assert_msg(init_with("{\"timeoutMs\": " TMO "}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    /* four timeouts (the handshake or the list), one stop's grace, and
     * the servers' start */
    ck_assert_int_lt(monotime_ms() - t0, 40000);
    ck_assert(has_tool(self, "good_echo"));
    ck_assert_str_eq(mcp_server_status(self, 0), "connected");
    for (i = 0; i < ARRAY_SIZE(listing_modes); i++) {
        char want[300], tool[32];

        snprintf(tool, sizeof(tool), "b%zu_echo", i);
        ck_assert_msg(!has_tool(self, tool), "%s", listing_modes[i].mode);
        ck_assert_msg(strcmp(mcp_server_status(self, i + 1), "failed") == 0,
                      "%s", listing_modes[i].mode);
        snprintf(want, sizeof(want), "mcp: server 'b%zu' %s", i,
                 listing_modes[i].want);
        ck_log(want);
    }
    ck_assert_ptr_null(mcp_server_status(self, i + 1));
    ck_log("its tools are left out");
    ck_assert(!log_has("this is not JSON")); /* the server's bytes */
    ck_assert_uint_eq(nchildren(), 0);
    ck_assert_int_lt(maxrss_kb() - rss0, 100 * 1024);
    ck_assert_int_eq(run(self, "good_echo", "{\"text\":\"hi\"}", text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"content\":\"echo: hi\",\"isError\":false}");
    p->shutdown(self);
    ck_assert_uint_eq(nchildren(), 0);
}
END_TEST

/* With one server only, its failure is the load's: the reason as before. */
START_TEST(a_lone_bad_server_fails_the_load)
{
    char err[300];
    void *self;

    write_conf("\"bad\": {\"command\": \"HOSTILE\", \"args\": "
               "[\"exit-after-init\"]}", 0);
    ck_assert_int_ne(init_with("{\"timeoutMs\": " TMO "}", &self, err,
                               sizeof(err)), 0);
    ck_assert_ptr_null(self);
    ck_assert_msg(strstr(err, "server 'bad' is gone") != NULL, "%s", err);
    /* a server's own timeout (Gemini CLI's name) is checked */
    write_conf("\"bad\": {\"command\": \"HOSTILE\", \"args\": [\"good\"], "
               "\"timeout\": 50}", 0);
    ck_assert_int_ne(init_with("{}", &self, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "server 'bad': timeout must be milliseconds "
                              "from 100 to") != NULL, "%s", err);
}
END_TEST

/* --- lying listings: the server loads, its lies are left out ----------- */

START_TEST(lying_listings)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char err[300], text[256], *names, *logt;
    json_t *decls, *d;
    size_t i, nmany = 0, size;
    void *self;

    write_conf("\"good\": {\"command\": \"HOSTILE\", \"args\": [\"good\"]}, "
               "\"dup\": {\"command\": \"HOSTILE\", \"args\": [\"dup-names\"]}, "
               "\"names\": {\"command\": \"HOSTILE\", \"args\": [\"bad-names\"]}, "
               "\"schemas\": {\"command\": \"HOSTILE\", \"args\": [\"bad-schemas\"]}, "
               "\"loop\": {\"command\": \"HOSTILE\", \"args\": [\"cursor-loop\"]}, "
               "\"pages\": {\"command\": \"HOSTILE\", \"args\": [\"cursor-endless\"]}, "
               "\"unasked\": {\"command\": \"HOSTILE\", \"args\": [\"unasked\"]}, "
               "\"many\": {\"command\": \"HOSTILE\", \"args\": [\"many-tools\"]}",
               0);
    ck_assert_msg(init_with("{\"timeoutMs\": " TMO "}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    for (i = 0; i < 8; i++)
        ck_assert_str_eq(mcp_server_status(self, i), "connected");
    names = declared(self);
    /* the same name three times: the first kept */
    ck_assert_ptr_nonnull(strstr(names, " dup_dup "));
    ck_assert_ptr_null(strstr(strstr(names, " dup_dup ") + 1, " dup_dup "));
    ck_log("mcp: server 'dup': tool 'dup' left out: 'dup_dup' is taken");
    /* names Gemini refuses become '_'; too long or none: left out */
    ck_assert_ptr_nonnull(strstr(names, " names_has_space_and_dots "));
    ck_assert_ptr_nonnull(strstr(names, " names_Bash "));
    ck_assert_ptr_nonnull(strstr(names, " names_run_bash "));
    ck_assert_ptr_nonnull(strstr(names, " names_action_mcp_good_echo "));
    ck_assert_ptr_nonnull(strstr(names, " names_esc___31mred_ "));
    ck_assert_ptr_nonnull(strstr(names, " names_____c__d__ ") ?
                          strstr(names, " names_____c__d__ ") :
                          strstr(names, " names_"));
    ck_log("tool 'xxxxxxxx");
    ck_log("left out: its name is too long");
    ck_log("tool '' left out: it has no name");
    /* a loop of cursors, and cursors without end */
    ck_assert_ptr_nonnull(strstr(names, " loop_echo "));
    ck_log("mcp: server 'loop': tools past page 2 left out: its nextCursor "
           "repeats an earlier one");
    ck_log("mcp: server 'pages': tools past page 32 left out: more than 32 "
           "pages");
    /* a response to a request never made is skipped */
    ck_assert_ptr_nonnull(strstr(names, " unasked_echo "));
    /* 100,000 tools: the first MCP_MAX_SERVER_TOOLS */
    for (char *q = names; (q = strstr(q, " many_t")) != NULL; q++)
        nmany++;
    ck_assert_uint_eq(nmany, MCP_MAX_SERVER_TOOLS);
    ck_log("mcp: server 'many': 99744 tools left out: more than 256 of one "
           "server");
    free(names);
    /* schemas not an object, deep, with $ref: any object, server-checked */
    decls = json_loads(p->declarations(self), 0, NULL);
    ck_assert_int_le(depth_of(decls), BOUND_JSON_DEPTH);
    json_array_foreach(decls, i, d) {
        const char *name = json_string_value(json_object_get(d, "name"));

        if (strncmp(name, "schemas_schema-", 15) != 0)
            continue;
        ck_assert_msg(json_object_size(json_object_get(d, "parameters")) == 1,
                      "%s", name);
        ck_assert_msg(strstr(json_string_value(json_object_get(
                                 d, "description")),
                             "(arguments checked by the MCP server)") != NULL,
                      "%s", name);
    }
    ck_assert(has_tool(self, "schemas_schema-deep"));
    ck_assert(has_tool(self, "schemas_schema-mid"));
    ck_assert(has_tool(self, "schemas_schema-refs"));
    json_decref(decls);
    /* the log: bounded, the server's control bytes cleaned */
    logt = log_text(&size);
    ck_assert_msg(size < 16384, "log of %zu bytes", size);
    ck_assert_ptr_null(strchr(logt, '\x1b'));
    free(logt);
    ck_assert_int_eq(run(self, "unasked_echo", "{\"text\":\"x\"}", text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"content\":\"echo: x\",\"isError\":false}");
    p->shutdown(self);
    ck_assert_uint_eq(nchildren(), 0);
}
END_TEST

/* --- calls ------------------------------------------------------------- */

/* Server, mode, the call's rc, what its text starts with, and its
 * server's timeout. */
static const struct {
    const char *server, *mode;
    int rc;
    const char *want, *timeout;
} call_modes[] = {
    {"ghost", "ghost-tool", GEMINI_AGENT_FAILED,
     "server 'ghost': Unknown tool: act", NULL},
    {"huge", "huge-result", GEMINI_AGENT_FAILED,
     "server 'huge' sent a line over 4194304 bytes", NULL},
    {"endless", "endless-call", GEMINI_AGENT_FAILED,
     "server 'endless' sent a line over 4194304 bytes", NULL},
    {"deep", "deep-result", GEMINI_AGENT_OK,
     "{\"content\":\"flat text\",\"isError\":false}", NULL},
    {"late", "late-call", GEMINI_AGENT_FAILED,
     "server 'late' did not answer in time", FAST},
    {"drip", "drip-call", GEMINI_AGENT_FAILED,
     "server 'drip' did not answer in time", FAST},
    {"stall", "stall-call", GEMINI_AGENT_FAILED,
     "server 'stall' did not answer in time", FAST},
    {"herr", "huge-error", GEMINI_AGENT_FAILED,
     "server 'herr': ????????????????????????????????[31meeee", NULL},
    {"flood", "flood", GEMINI_AGENT_FAILED,
     "server 'flood' sent too many other messages (of what it sent, 0 "
     "messages were not JSON and 1001 not the answer)", NULL},
    {"exit", "exit-on-call", GEMINI_AGENT_FAILED,
     "server 'exit' is gone: end of its output", NULL},
    {"asks", "asks-client", GEMINI_AGENT_OK,
     "{\"content\":\"client said [-32601, -32601]\",\"isError\":false}", NULL},
    {"stderr", "stderr-flood", GEMINI_AGENT_OK,
     "{\"content\":\"acted\",\"isError\":false}", NULL},
};

START_TEST(hostile_calls)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    char conf[4096], err[300], text[1024], tool[64], *logt;
    size_t n = 0, size;
    long rss0 = maxrss_kb();
    void *self;

    n += (size_t)snprintf(conf, sizeof(conf), "\"good\": {\"command\": "
                          "\"HOSTILE\", \"args\": [\"good\"]}");
    for (size_t i = 0; i < ARRAY_SIZE(call_modes); i++)
        n += (size_t)snprintf(conf + n, sizeof(conf) - n,
                              ", \"%s\": {\"command\": \"HOSTILE\", "
                              "\"args\": [\"%s\"]%s}",
                              call_modes[i].server, call_modes[i].mode,
                              call_modes[i].timeout ? call_modes[i].timeout
                                                    : "");
    write_conf(conf, 0);
    ck_assert_msg(init_with("{\"timeoutMs\": " TMO "}", &self, err,
                            sizeof(err)) == 0, "%s", err);
    for (size_t i = 0; i < ARRAY_SIZE(call_modes); i++) {
        long t0 = monotime_ms();
        int rc;

        snprintf(tool, sizeof(tool), "%s_act", call_modes[i].server);
        rc = run(self, tool, "{}", text, sizeof(text));
        ck_assert_msg(rc == call_modes[i].rc, "%s: rc %d: %s", tool, rc, text);
        ck_assert_msg(strncmp(text, call_modes[i].want,
                              strlen(call_modes[i].want)) == 0,
                      "%s: %s", tool, text);
        /* a timeout, the stop's grace, one reconnect at most */
        ck_assert_int_lt(monotime_ms() - t0, 15000);
        /* and the server's next call works (a new connection, when the
         * call closed it), for a server with time to start */
        snprintf(tool, sizeof(tool), "%s_echo", call_modes[i].server);
        if (strcmp(call_modes[i].mode, "ghost-tool") != 0 &&
            call_modes[i].timeout == NULL)
            ck_assert_msg(run(self, tool, "{\"text\":\"again\"}", text,
                              sizeof(text)) == GEMINI_AGENT_OK,
                          "%s: %s", tool, text);
    }
    /* the huge error: cut, cleaned, for the model and the log */
    ck_assert_int_eq(run(self, "herr_act", "{}", text, sizeof(text)),
                     GEMINI_AGENT_FAILED);
    ck_assert_uint_lt(strlen(text), 256);
    ck_assert_str_eq(text + strlen(text) - 3, "...");
    /* the 50 MB answer was not read whole */
    ck_assert_int_lt(maxrss_kb() - rss0, 100 * 1024);
    ck_log("mcp: server 'deep': a structuredContent nested deeper than 16 "
           "levels: its text content is the answer");
    ck_log("mcp: server 'exit' is gone: end of its output; reconnecting");
    ck_log("mcp: server 'stderr' (stderr): hostile: a line of stderr that "
           "never ends ?[31m?");
    ck_log("mcp: server 'stderr' writes more than 50 lines a minute to its "
           "stderr: the rest of this minute's are dropped");
    logt = log_text(&size);
    ck_assert_msg(size < 65536, "log of %zu bytes", size);
    ck_assert_ptr_null(strchr(logt, '\x1b'));
    ck_assert_ptr_null(strstr(logt, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
                                    "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
                                    "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"));
    free(logt);
    ck_assert_int_eq(run(self, "good_echo", "{\"text\":\"end\"}", text,
                         sizeof(text)), GEMINI_AGENT_OK);
    p->shutdown(self);
    ck_assert_uint_eq(nchildren(), 0);
}
END_TEST

/* --- Streamable HTTP ---------------------------------------------------- */

/* Is `mode` a word of `list` (" a b ")? */
static bool
is_fast(const char *list, const char *mode)
{
    char word[64];

    snprintf(word, sizeof(word), " %s ", mode);
    return strstr(list, word) != NULL;
}

START_TEST(hostile_over_http)
{
    const struct gemini_agent_plugin *p = builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    static const char *failing[] = {"slow-init", "not-json", "huge-list",
                                    "exit-after-init", "endless-list"};
    /* the modes whose point is a timeout: FAST */
    static const char *fast = " slow-init late-call asks-client ";
    static const struct {
        const char *mode;
        int rc;
        const char *want;
    } calls[] = {
        {"huge-result", GEMINI_AGENT_FAILED, "sent an answer over 4194304"},
        {"endless-call", GEMINI_AGENT_FAILED, "sent an answer over 4194304"},
        {"late-call", GEMINI_AGENT_FAILED, "is unreachable: Operation timed out"},
        {"asks-client", GEMINI_AGENT_FAILED, "is unreachable: Operation timed out"},
        {"huge-error", GEMINI_AGENT_FAILED, "server 'c5': ???"},
        {"deep-result", GEMINI_AGENT_OK, "{\"content\":\"flat text\""},
        {"ghost-tool", GEMINI_AGENT_FAILED, "server 'c7': Unknown tool: act"},
    };
    char conf[4096], err[300], text[1024], tool[64];
    int port = start_http();
    size_t n = 0;
    long t0;
    void *self;

    n += (size_t)snprintf(conf, sizeof(conf),
                          "\"good\": {\"url\": \"http://127.0.0.1:PORT/good\"}");
    for (size_t i = 0; i < ARRAY_SIZE(failing); i++)
        n += (size_t)snprintf(conf + n, sizeof(conf) - n,
                              ", \"f%zu\": {\"url\": "
                              "\"http://127.0.0.1:PORT/%s\"%s}", i, failing[i],
                              is_fast(fast, failing[i]) ? FAST : "");
    for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
        n += (size_t)snprintf(conf + n, sizeof(conf) - n,
                              ", \"c%zu\": {\"url\": "
                              "\"http://127.0.0.1:PORT/%s\"%s}", i + 1,
                              calls[i].mode,
                              is_fast(fast, calls[i].mode) ? FAST : "");
    write_conf(conf, port);
    t0 = monotime_ms();
    /* the hostile servers listen on the loopback: the owner lists it */
    ck_assert_msg(init_with("{\"timeoutMs\": " TMO ", \"outbound\": "
                            "{\"allow\": [\"127.0.0.1\"]}}",
                            &self, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_lt(monotime_ms() - t0, 15000);
    ck_assert_str_eq(mcp_server_status(self, 0), "connected");
    for (size_t i = 0; i < ARRAY_SIZE(failing); i++)
        ck_assert_msg(strcmp(mcp_server_status(self, i + 1), "failed") == 0,
                      "%s", failing[i]);
    ck_log("mcp: server 'f0' is unreachable: Operation timed out");
    ck_log("mcp: server 'f1' sent no answer to request 1 (of what it sent, 1 "
           "messages were not JSON");
    ck_log("mcp: server 'f2' sent an answer over 4194304 bytes");
    ck_log("mcp: server 'f3' ended the session (HTTP 404)");
    for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
        long t1 = monotime_ms();
        int rc;

        snprintf(tool, sizeof(tool), "c%zu_act", i + 1);
        rc = run(self, tool, "{}", text, sizeof(text));
        ck_assert_msg(rc == calls[i].rc, "%s: rc %d: %s", calls[i].mode, rc,
                      text);
        ck_assert_msg(strstr(text, calls[i].want) != NULL, "%s: %s",
                      calls[i].mode, text);
        ck_assert_int_lt(monotime_ms() - t1, 10000);
    }
    ck_assert_int_eq(run(self, "good_echo", "{\"text\":\"end\"}", text,
                         sizeof(text)), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"content\":\"echo: end\",\"isError\":false}");
    p->shutdown(self);
}
END_TEST

Suite *
mcp_hostile_suite(void)
{
    Suite *s = suite_create("mcp_hostile");
    TCase *tc = tcase_create("hostile");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, listing_modes_leave_the_server_out);
    tcase_add_test(tc, a_lone_bad_server_fails_the_load);
    tcase_add_test(tc, lying_listings);
    tcase_add_test(tc, hostile_calls);
    tcase_add_test(tc, hostile_over_http);
    suite_add_tcase(s, tc);
    return s;
}
