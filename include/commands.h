/*
 * commands.h - the command-line commands other than `serve` (DESIGN §3).
 * Each returns the process exit code.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_COMMANDS_H
#define APP_COMMANDS_H

#include "common.h"

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

#endif /* APP_COMMANDS_H */
