/*
 * main.c - process-wide set-up, then one command from the table below.
 *
 * Each command reads its own options (commands.h, cmdopt.h); main.c only
 * picks the command by name. With no arguments under a web server it
 * answers FastCGI when its stdin is a listening socket (mod_fcgid; config
 * from $GEMINI_AGENT_CONFIG), else one CGI request when GATEWAY_INTERFACE
 * is set (its config: config_cgi_path).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "http/site.h"
#include "proc/worker.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcgi_config.h> /* libfcgi's PACKAGE_VERSION: it has no call that says it */
#include <jansson.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <yaml.h>

/* The Makefile's VERSION, given to this file only (make print-version). */
#ifndef GEMINI_AGENT_VERSION
#define GEMINI_AGENT_VERSION "unknown"
#endif

struct command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the name */
    const char *usage;                 /* its options: cmd_<name>_usage */
    const char *summary;               /* one line: what it does */
};

static const struct command commands[] = {
    {"serve", cmd_serve, cmd_serve_usage, "run the FastCGI responder"},
    {"setup", cmd_setup, cmd_setup_usage,
     "write DIR/.gemini.yaml from the template"},
    {"check", cmd_check, cmd_check_usage,
     "validate config, plugins and actions"},
    {"actions", cmd_actions, cmd_actions_usage,
     "the server actions and their types"},
    {"agent-kit", cmd_agent_kit, cmd_agent_kit_usage,
     "write DIR/actions-index.yaml"},
    {"auth", cmd_auth, cmd_auth_usage,
     "print a session token for a user; sign a history for the chat"},
    {"store", cmd_store, cmd_store_usage,
     "bring the run API's store up to this schema"},
    {"users", cmd_users, cmd_users_usage,
     "set a user's trust level for the run API"},
    {"chat", cmd_chat, cmd_chat_usage,
     "the terminal client (Claude Code's stream-json protocol)"},
};

/* Layout of the command list: "  NAME   OPTIONS   SUMMARY", the summary on
 * a line of its own when the options reach into its column. */
#define USAGE_OPTS_COL    9
#define USAGE_SUMMARY_COL 30

static void
usage(FILE *f)
{
    fputs("usage: gemini-agent COMMAND [OPTIONS]\n\n", f);
    for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
        const struct command *c = &commands[i];
        int col = fprintf(f, "  %-*s ", USAGE_OPTS_COL - 3, c->name);

        col = cmdopt_put_lines(f, c->usage, col, USAGE_OPTS_COL);
        if (col > USAGE_SUMMARY_COL - 2) {
            fputc('\n', f);
            col = 0;
        }
        fprintf(f, "%*s%s\n", USAGE_SUMMARY_COL - col, "", c->summary);
    }
    fputs("\n"
          "`gemini-agent COMMAND --help` shows the usage of one command;\n"
          "`gemini-agent --version` the version and its libraries'.\n"
          "\n"
          "With no arguments under a web server (GATEWAY_INTERFACE set) it\n"
          "answers one CGI request, or FastCGI when its stdin is a listening\n"
          "socket (mod_fcgid). The config comes from $GEMINI_AGENT_CONFIG,\n"
          "else, for CGI, agent.yaml next to the program ($SCRIPT_FILENAME),\n"
          "else conf/agent.yaml.\n",
          f);
}

/*
 * `gemini-agent --version` / `version`: ours on the first line, then each
 * library as it runs, with the version its headers had at the build where
 * that differs from nothing. libyaml's headers carry no version; libfcgi
 * reports none when running.
 */
static void
version(FILE *f)
{
    const char *ssl =
#ifdef OPENSSL_VERSION_STRING
        OpenSSL_version(OPENSSL_VERSION_STRING);
#else
        OpenSSL_version(OPENSSL_VERSION);
#endif
    const char *jansson =
#if JANSSON_VERSION_HEX >= 0x020d00
        jansson_version_str();
#else
        JANSSON_VERSION;
#endif

    fprintf(f, "gemini-agent %s\n", GEMINI_AGENT_VERSION);
    fprintf(f, "libcurl %s (built with %s)\n",
            curl_version_info(CURLVERSION_NOW)->version, LIBCURL_VERSION);
    fprintf(f, "jansson %s (built with %s)\n", jansson, JANSSON_VERSION);
    fprintf(f, "libyaml %s\n", yaml_get_version_string());
    fprintf(f, "SQLite %s (built with %s)\n", sqlite3_libversion(),
            SQLITE_VERSION);
#ifdef OPENSSL_VERSION_STR
    fprintf(f, "OpenSSL libcrypto %s (built with %s)\n", ssl,
            OPENSSL_VERSION_STR);
#else
    fprintf(f, "OpenSSL libcrypto %s\n", ssl);
#endif
#ifdef PACKAGE_VERSION
    fprintf(f, "libfcgi (built with %s)\n", PACKAGE_VERSION);
#endif
}

static int
run_cgi(void)
{
    struct diag d = DIAG_INIT;
    char path[4096];
    struct site *site = site_load(config_cgi_path(path, sizeof(path)), &d);
    int rc;

    /* Only fatal problems: a CGI process starts per request, and the log
     * must not repeat the same warnings for each one (`check` shows them). */
    if (site != NULL && site_check_serving(site, &d) != 0) {
        site_free(site);
        site = NULL;
    }
    if (site == NULL)
        diag_log(&d);
    diag_release(&d);
    /* log: in agent.yaml; a file this user cannot open leaves stderr */
    if (site != NULL &&
        logmsg_set_output(site->cfg->log.format, site->cfg->log.file) != 0)
        log_err("cannot open the log file '%s': %s", site->cfg->log.file,
                strerror(errno));
    rc = worker_cgi(site); /* with no site it answers config_error */
    site_free(site);
    return rc;
}

int
main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    const char *lvl = getenv("GEMINI_AGENT_LOG");
    const struct command *cmd = NULL;
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
    memlimit_install(); /* jansson allocates under the request's bound */

    if (name == NULL) {
        if (cmd_serve_stdin_listens())
            return cmd_serve_stdin();
        if (getenv("GATEWAY_INTERFACE") != NULL)
            return run_cgi();
        usage(stderr);
        return CMDOPT_EXIT_USAGE;
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 ||
        strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        version(stdout);
        return 0;
    }
    for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
        if (strcmp(name, commands[i].name) == 0)
            cmd = &commands[i];
    if (cmd == NULL) {
        fprintf(stderr, "gemini-agent: unknown command '%s'\n\n", name);
        usage(stderr);
        return CMDOPT_EXIT_USAGE;
    }
    rc = cmd->run(argc - 1, argv + 1);
    curl_global_cleanup();
    return rc;
}
