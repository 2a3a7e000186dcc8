/*
 * commands.h - the command-line commands other than `serve` (DESIGN §3).
 * Each returns the process exit code.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_COMMANDS_H
#define APP_COMMANDS_H

#include "common.h"

#include <sys/types.h>

struct config;

/* Write DIR/.gemini.yaml from DIR/gemini.yaml.template, mode 0600; never
 * overwrites. */
int cmd_setup(const char *config_dir);

/* Validate everything; problems as `file:line: message`; 1 on problems. */
int cmd_check(const char *config_path);

/* `actions list`, `actions show NAME` (arg = NAME), `actions types [--out
 * DIR]` (arg = DIR or NULL: next to each .jay-action). */
int cmd_actions(const char *config_path, const char *sub, const char *arg);

/* Write OUT/actions-index.yaml describing every exposed action. */
int cmd_agent_kit(const char *config_path, const char *out_dir);

/* --- shared by the commands (cmd_common.c) -------------------------------- */

/* Generated files are small; this cap only stops a runaway. */
#define CMD_GENERATED_MAX (4u * 1024 * 1024)

/* Load the config for a command; prints fatal problems (all of them unless
 * quiet_ok) on stderr. NULL when it cannot be used. */
struct config *cmd_load_config(const char *path, bool quiet_ok);

/* Write `len` bytes to `path` through a temporary file and rename; 0/-1. */
int cmd_write_file(const char *path, const char *data, size_t len,
                   mode_t mode);

/* mkdir DIR unless it exists; says why on stderr when it cannot. 0/-1. */
int cmd_make_dir(const char *dir);

#endif /* APP_COMMANDS_H */
