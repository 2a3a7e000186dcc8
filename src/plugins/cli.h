/*
 * cli.h - the built-in plugin `cli`: run a shell command in one folder
 * and answer its exit code and (capped) output.
 *
 * For the terminal client only (GEMINI_AGENT_TERMINAL_ONLY): the web
 * routes never expose it. Its tool and config are in docs/plugins/cli.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CLI_H
#define APP_CLI_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h): the plugin for `abi`
 * GEMINI_AGENT_PLUGIN_ABI, NULL for any other. */
const struct gemini_agent_plugin *builtin_cli(unsigned abi);

#endif /* APP_CLI_H */
