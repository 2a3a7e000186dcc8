/*
 * websearch.h - the built-in plugin `web_search`: one read-only tool,
 * `search`, that asks a SearXNG-style JSON search endpoint and hands the
 * model a short, bounded list of {title, url, snippet}.
 * docs/plugins/web_search.md describes its configuration.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_WEBSEARCH_H
#define APP_WEBSEARCH_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h's gemini_agent_plugin_factory). */
const struct gemini_agent_plugin *builtin_web_search(unsigned abi);

#endif /* APP_WEBSEARCH_H */
