/*
 * commands.h - the commands of gemini-agent (docs/commands.md), one file each.
 *
 * src/cmd/<name>.c defines two things:
 *
 *     int cmd_<name>(int argc, char **argv);  argv[0] is the command name
 *     const char cmd_<name>_usage[];          its options, as usage shows them
 *
 * A command reads its own options with cmdopt.h, so an option it does not
 * take is an error, and returns the process exit code: 0 done, 1 the work
 * failed, 2 a wrong command line (CMDOPT_EXIT_USAGE). main.c dispatches
 * through a table; adding a command is its file, its two lines here and
 * one row there.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_COMMANDS_H
#define APP_COMMANDS_H

#include "core/common.h"

#include <sys/types.h>

/* serve (--socket PATH | --listen HOST:PORT) [--config FILE] [--workers N]
 * [--pid-file FILE]: the FastCGI responder (serve.h). */
int cmd_serve(int argc, char **argv);
extern const char cmd_serve_usage[];
/* Is stdin a socket that listens (a FastCGI application's start, as
 * mod_fcgid does it)? Then cmd_serve_stdin serves on it, one worker, the
 * config from config_default_path(). */
bool cmd_serve_stdin_listens(void);
int cmd_serve_stdin(void);

/* setup [DIR]: a complete site in DIR, default the current folder
 * (newsite.h). setup --config-dir DIR | --config FILE: write DIR/.gemini.yaml
 * (mode 0600; DIR and its missing parents are made 0700) from the built-in
 * template, and the session secret; never overwrites. */
int cmd_setup(int argc, char **argv);
extern const char cmd_setup_usage[];
/* conf/gemini.yaml.template, made into this string by the Makefile
 * ($(BUILD)/gen/template.c): that file is the one copy of the text. */
extern const char cmd_setup_template[];

/* check [--config FILE]: validate everything; problems as
 * `file:line: message`; 1 on problems. */
int cmd_check(int argc, char **argv);
extern const char cmd_check_usage[];

/* actions list | show NAME | types [--out DIR], each [--config FILE]. */
int cmd_actions(int argc, char **argv);
extern const char cmd_actions_usage[];

/* agent-kit --out DIR [--config FILE]: write DIR/actions-index.yaml
 * describing every listed action (one with a .jay-action). */
int cmd_agent_kit(int argc, char **argv);
extern const char cmd_agent_kit_usage[];

/* auth issue --user NAME [--ttl SECONDS] [--config FILE]: print a session
 * token for NAME (core/token.h), signed with auth.secretFile, valid for
 * SECONDS (default DEFAULT_TOKEN_TTL_S, at most BOUND_TOKEN_TTL_S). */
int cmd_auth(int argc, char **argv);
extern const char cmd_auth_usage[];

/* store migrate [--config FILE]: bring the run API's store up to this
 * program's schema (serve does it at start too). */
int cmd_store(int argc, char **argv);
extern const char cmd_store_usage[];

/* users set-trust NAME LEVEL [--config FILE]: a user's trust level for
 * the run API's policy (supervised, delegated, autonomous). */
int cmd_users(int argc, char **argv);
extern const char cmd_users_usage[];

/* chat [PROMPT] [-p] [--output-format ...] ...: the terminal client,
 * Claude Code's command line and stream-json protocol (src/term/). */
int cmd_chat(int argc, char **argv);
extern const char cmd_chat_usage[];

/* --- shared by the commands (cmd/common.c) -------------------------------- */

struct site;

/* Load the site for a command; prints fatal problems (all of them unless
 * quiet_ok) on stderr. NULL when it cannot be used. */
struct site *cmd_load_site(const char *path, bool quiet_ok);

/* Write `len` bytes to `path` through a temporary file and rename; 0/-1. */
int cmd_write_file(const char *path, const char *data, size_t len, mode_t mode);

/* mkdir -p DIR: every folder it creates gets `mode` (less the umask;
 * existing ones are left as they are); says why on stderr when it cannot. 0/-1. */
int cmd_make_dirs(const char *dir, mode_t mode);

#endif /* APP_COMMANDS_H */
