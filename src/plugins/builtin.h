/*
 * builtin.h - the plugins compiled into the binary.
 *
 * Each is an ordinary plugin of include/gemini-agent/plugin.h - the same
 * operations a shared object exports, reached through a factory instead
 * of dlsym() - so the registry treats all plugins alike. The site hands
 * this table to the registry (registry/soplugin.h's soplugin_env): the
 * registry names no plugin.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_BUILTIN_H
#define APP_BUILTIN_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* The built-in plugins' factories, NULL-terminated. */
extern const gemini_agent_plugin_factory builtin_plugins[];

/* The names of those that fetch from the network, NULL-terminated: the
 * registry hands each the outbound policy (soplugin_env.fetchers), and
 * each fetches through plugins/webget.h or plugins/outbound.h's guard
 * with it. A new plugin that fetches joins this list. */
extern const char *const builtin_fetchers[];

#endif /* APP_BUILTIN_H */
