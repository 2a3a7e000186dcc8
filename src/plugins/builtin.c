/*
 * builtin.c - the table of plugins compiled into the binary.
 *
 * Adding a built-in plugin: its file in this folder defines
 * `const struct gemini_agent_plugin *builtin_<name>(unsigned abi)` (the
 * factory of plugin.h), and one line here names it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/builtin.h"
#include "plugins/clarification.h"
#include "plugins/cli.h"
#include "plugins/fileedit.h"
#include "plugins/mcp.h"
#include "plugins/memory.h"
#include "plugins/references.h"
#include "plugins/todo.h"
#include "plugins/websearch.h"

const gemini_agent_plugin_factory builtin_plugins[] = {
    builtin_clarification, builtin_cli,        builtin_file_edit,
    builtin_mcp,           builtin_memory,     builtin_references,
    builtin_todo,          builtin_web_search, NULL,
};

const char *const builtin_fetchers[] = {"mcp", "references", "web_search",
                                        NULL};
