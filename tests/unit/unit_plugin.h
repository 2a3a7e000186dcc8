/*
 * unit_plugin.h - what the built-in plugins' suites share: a temporary
 * folder per test, the host's allocator for answers, and initialize()
 * with a printf-style config.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_PLUGIN_H
#define APP_UNIT_PLUGIN_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* mkdtemp() of /tmp/ga-<name>.XXXXXX into dir[size] (the test fails
 * when it cannot), and its removal with all it holds. */
void unit_tmpdir(char *dir, size_t size, const char *name);
void unit_rmdir(const char *dir);

/* ctx->alloc for tests: memory of the arena in ctx->host, under a lock
 * (suites call plugins from several threads). */
void *unit_plugin_alloc(const struct gemini_agent_ctx *ctx, size_t size);
/* That lock, for a suite's own use of the same arena beside the calls. */
void unit_plugin_lock(void);
void unit_plugin_unlock(void);

/* p->initialize() with the config printf'd from fmt, agent.yaml's folder
 * and dataDir both `dir`: its return value, *self and err as it left
 * them. */
int unit_plugin_init(const struct gemini_agent_plugin *p, const char *dir,
                     void **self, char *err, size_t errsize,
                     const char *fmt, ...) ATTR_FMT(6, 7);

/* p->execute(self, tool, args) as a host calls it (ctx: `dir`, answers in
 * the arena `ar`): its rc, and the answer's text copied into text[size]
 * (cut to fit). */
struct arena;
int unit_plugin_exec(const struct gemini_agent_plugin *p, void *self,
                     const char *dir, struct arena *ar, const char *tool,
                     const char *args, char *text, size_t size);

/* unit_plugin_init() with `config` as it is, which must succeed (the
 * test fails with the plugin's reason otherwise): the instance. */
void *unit_plugin_start(const struct gemini_agent_plugin *p, const char *dir,
                        const char *config);

#endif /* APP_UNIT_PLUGIN_H */
