/*
 * clarification.h - the built-in plugin `clarification`: the model asks
 * the user structured questions (docs/plugins/clarification.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CLARIFICATION_H
#define APP_CLARIFICATION_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory of plugin.h: the plugin, or NULL for another ABI. */
const struct gemini_agent_plugin *builtin_clarification(unsigned abi);

#endif /* APP_CLARIFICATION_H */
