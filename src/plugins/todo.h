/*
 * todo.h - the built-in `todo` plugin: a plan the model keeps for a
 * multi-step task, stored per conversation (docs/plugins/todo.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TODO_H
#define APP_TODO_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h): the plugin when `abi` is ours, else NULL. */
const struct gemini_agent_plugin *builtin_todo(unsigned abi);

#endif /* APP_TODO_H */
