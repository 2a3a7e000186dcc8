/*
 * nosym.c - a broken plugin for t_plugins.sh: a shared object without the
 * gemini_agent_plugin_create factory. The server must report it and go on.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

int nosym_not_a_factory(void);

int
nosym_not_a_factory(void)
{
    return GEMINI_AGENT_PLUGIN_ABI;
}
