/*
 * references.h - the built-in plugin `references`: documentation the
 * site owner lists (files read at start, URLs fetched when first asked
 * and cached) that the model asks for by name with the read-only tool
 * `get`, and that `@name` in a user prompt appends to the prompt.
 * docs/plugins/references.md describes its configuration.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_REFERENCES_H
#define APP_REFERENCES_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h's gemini_agent_plugin_factory). */
const struct gemini_agent_plugin *builtin_references(unsigned abi);

#endif /* APP_REFERENCES_H */
