/*
 * main.c - argument parsing and dispatch; nothing else.
 *
 * With no arguments under a web server that set GATEWAY_INTERFACE, the
 * program answers one CGI request (config from $GEMINI_AGENT_CONFIG).
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "bounds.h"
#include "commands.h"
#include "config.h"
#include "diag.h"
#include "httpio.h"
#include "logmsg.h"
#include "serve.h"
#include "worker.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static const char usage[] =
    "usage: gemini-agent COMMAND [OPTIONS]\n"
    "\n"
    "  serve  [--config FILE] (--socket PATH | --listen HOST:PORT)\n"
    "         [--workers N] [--pid-file FILE]\n"
    "                              run the FastCGI responder\n"
    "  setup  [--config-dir DIR]   write DIR/.gemini.yaml from the template\n"
    "  check  [--config FILE]      validate config, plugins and actions\n"
    "  actions list|show NAME|types [--out DIR] [--config FILE]\n"
    "                              the server actions and their types\n"
    "  agent-kit --out DIR [--config FILE]\n"
    "                              write DIR/actions-index.yaml\n"
    "\n"
    "With no arguments under a web server (GATEWAY_INTERFACE set) it\n"
    "answers one CGI request; the config comes from $GEMINI_AGENT_CONFIG\n"
    "(default conf/agent.yaml).\n";

struct args {
    const char *config, *config_dir, *socket, *listen, *pid_file, *out;
    int workers;
    const char *pos[2]; /* positional words after the command */
    int npos;
};

static int ATTR_FMT(1, 2)
bad_usage(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "gemini-agent: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return 2;
}

/* Options shared by every command; unknown ones are errors. */
static int
parse_args(int argc, char **argv, struct args *a)
{
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        const char **slot = NULL;

        if (strcmp(o, "--config") == 0)
            slot = &a->config;
        else if (strcmp(o, "--config-dir") == 0)
            slot = &a->config_dir;
        else if (strcmp(o, "--socket") == 0)
            slot = &a->socket;
        else if (strcmp(o, "--listen") == 0)
            slot = &a->listen;
        else if (strcmp(o, "--pid-file") == 0)
            slot = &a->pid_file;
        else if (strcmp(o, "--out") == 0)
            slot = &a->out;
        else if (strcmp(o, "--workers") == 0) {
            char *end;
            if (i + 1 == argc)
                return bad_usage("%s needs a value", o);
            long n = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || n < 1 || n > BOUND_WORKERS)
                return bad_usage("--workers must be 1..64, not '%s'", argv[i]);
            a->workers = (int)n;
            continue;
        } else if (o[0] == '-') {
            return bad_usage("unknown option '%s'", o);
        } else if (a->npos < (int)ARRAY_SIZE(a->pos)) {
            a->pos[a->npos++] = o;
            continue;
        } else {
            return bad_usage("unexpected argument '%s'", o);
        }
        if (i + 1 == argc)
            return bad_usage("%s needs a value", o);
        *slot = argv[++i];
    }
    if (a->config == NULL)
        a->config = config_default_path();
    return 0;
}

static int
run_cgi(void)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = config_load(config_default_path(), &d);
    int rc;

    /* Only fatal problems: a CGI process starts per request, and the log
     * must not repeat the same warnings for each one (`check` shows them). */
    if (cfg == NULL)
        diag_log(&d);
    diag_release(&d);
    rc = worker_cgi(cfg); /* with no config it answers config_error */
    config_free(cfg);
    return rc;
}

int
main(int argc, char **argv)
{
    struct args a = {.workers = 2};
    const char *cmd = argc > 1 ? argv[1] : NULL;
    const char *lvl = getenv("GEMINI_AGENT_LOG");
    int rc;

    if (lvl != NULL)
        logmsg_set_level(strcmp(lvl, "debug") == 0   ? LOG_LVL_DEBUG
                         : strcmp(lvl, "warn") == 0  ? LOG_LVL_WARN
                         : strcmp(lvl, "error") == 0 ? LOG_LVL_ERROR
                                                     : LOG_LVL_INFO);
    /* The API key lives in this process's memory: no core dump may carry
     * it, and no other process of the same user may read it by ptrace. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    /* One-time library set-up, before any worker is forked. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        fprintf(stderr, "gemini-agent: cannot initialise libcurl\n");
        return 1;
    }
    json_object_seed(0);

    if (cmd == NULL) {
        if (getenv("GATEWAY_INTERFACE") != NULL)
            return run_cgi();
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc;

    if (strcmp(cmd, "serve") == 0) {
        struct serve_opts o = {a.config, a.socket, a.listen, a.pid_file,
                               a.workers};
        if ((a.socket == NULL) == (a.listen == NULL))
            return bad_usage("%s needs exactly one of --socket or --listen",
                             cmd);
        rc = serve_run(&o);
    } else if (strcmp(cmd, "setup") == 0) {
        rc = cmd_setup(a.config_dir ? a.config_dir : "conf");
    } else if (strcmp(cmd, "check") == 0) {
        rc = cmd_check(a.config);
    } else if (strcmp(cmd, "actions") == 0) {
        const char *sub = a.npos > 0 ? a.pos[0] : "";
        if (strcmp(sub, "list") == 0 && a.npos == 1)
            rc = cmd_actions(a.config, sub, NULL);
        else if (strcmp(sub, "show") == 0 && a.npos == 2)
            rc = cmd_actions(a.config, sub, a.pos[1]);
        else if (strcmp(sub, "types") == 0 && a.npos == 1)
            rc = cmd_actions(a.config, sub, a.out);
        else
            return bad_usage("%s: use list, show NAME or types [--out DIR]",
                             cmd);
    } else if (strcmp(cmd, "agent-kit") == 0) {
        if (a.out == NULL)
            return bad_usage("%s needs --out DIR", cmd);
        rc = cmd_agent_kit(a.config, a.out);
    } else {
        return bad_usage("unknown command '%s'", cmd);
    }
    curl_global_cleanup();
    return rc;
}
