/*
 * fileedit.h - the built-in plugin `file_edit`: read and change files
 * under one folder, with a backup of every change so that it can be
 * undone.
 *
 * For the terminal client only (GEMINI_AGENT_TERMINAL_ONLY): the web
 * routes never expose it. Its tools and config are in
 * docs/plugins/file_edit.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_FILEEDIT_H
#define APP_FILEEDIT_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h): the plugin for `abi`
 * GEMINI_AGENT_PLUGIN_ABI, NULL for any other. */
const struct gemini_agent_plugin *builtin_file_edit(unsigned abi);

#endif /* APP_FILEEDIT_H */
