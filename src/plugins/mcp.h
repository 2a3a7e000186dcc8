/*
 * mcp.h - the built-in `mcp` plugin: the tools of MCP (Model Context
 * Protocol) servers, named in a .mcp.json, as the agent's tools.
 *
 * Config (plugins.config.mcp): configFile (default ".mcp.json", relative
 * to agent.yaml's folder) and timeoutMs. Each server's tool <tool> is
 * declared as `<server>_<tool>` (Gemini sees action_mcp_<server>_<tool>).
 * docs/plugins/mcp.md is the user's documentation.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_MCP_H
#define APP_MCP_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The factory (plugin.h): the plugin for GEMINI_AGENT_PLUGIN_ABI, else
 * NULL. */
const struct gemini_agent_plugin *builtin_mcp(unsigned abi);

/*
 * The name of server `i` of `self`, an instance of this plugin (the
 * `self` its initialize() set), in its .mcp.json's order; NULL past the
 * last. Borrowed from the instance.
 */
const char *mcp_server_name(const void *self, size_t i);

/*
 * How server `i` of `self` fared at load: "connected" (reached, its tools
 * listed) or "failed" (left out, the log says why: an instance loads while
 * one of its servers answers); NULL past the last. The terminal client
 * reports it (init's mcp_servers, mcp_status).
 */
const char *mcp_server_status(const void *self, size_t i);

#endif /* APP_MCP_H */
