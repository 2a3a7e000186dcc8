/*
 * memory.h - the built-in plugin `memory`: what the assistant remembers
 * about the signed-in user (docs/plugins/memory.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_MEMORY_H
#define APP_MEMORY_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory of plugin.h: the plugin, or NULL for another ABI. */
const struct gemini_agent_plugin *builtin_memory(unsigned abi);

#endif /* APP_MEMORY_H */
