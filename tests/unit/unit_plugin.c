/*
 * unit_plugin.c - the built-in plugins' suites' shared bench.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "unit_plugin.h"
#include "core/arena.h"

#include <check.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
unit_tmpdir(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "/tmp/ga-%s.XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void
unit_rmdir(const char *dir)
{
    char cmd[256];

    ck_assert_int_eq(strncmp(dir, "/tmp/ga-", 8), 0); /* never elsewhere */
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

void *
unit_plugin_alloc(const struct gemini_agent_ctx *ctx, size_t size)
{
    void *p;

    pthread_mutex_lock(&alloc_lock);
    p = arena_alloc(ctx->host, size ? size : 1);
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

void *
unit_plugin_start(const struct gemini_agent_plugin *p, const char *dir,
                  const char *config)
{
    char err[300];
    void *self;

    ck_assert_ptr_nonnull(p);
    ck_assert_msg(unit_plugin_init(p, dir, &self, err, sizeof(err), "%s",
                                   config) == 0,
                  "initialize: %s", err);
    return self;
}

void
unit_plugin_lock(void)
{
    pthread_mutex_lock(&alloc_lock);
}

void
unit_plugin_unlock(void)
{
    pthread_mutex_unlock(&alloc_lock);
}

int
unit_plugin_init(const struct gemini_agent_plugin *p, const char *dir,
                 void **self, char *err, size_t errsize, const char *fmt, ...)
{
    char cfg[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cfg, sizeof(cfg), fmt, ap);
    va_end(ap);
    *self = NULL;
    err[0] = '\0';
    return p->initialize(&(struct gemini_agent_init){cfg, strlen(cfg), dir,
                                                     dir},
                         self, err, errsize);
}

int
unit_plugin_exec(const struct gemini_agent_plugin *p, void *self,
                 const char *dir, struct arena *ar, const char *tool,
                 const char *args, char *text, size_t size)
{
    struct gemini_agent_ctx ctx = {.abi = GEMINI_AGENT_PLUGIN_ABI,
                                   .data_dir = dir,
                                   .alloc = unit_plugin_alloc,
                                   .host = ar};
    struct gemini_agent_out out = {NULL, 0};
    int rc = p->execute(self, &ctx, tool, args, strlen(args), &out);

    snprintf(text, size, "%.*s", (int)out.len, out.text ? out.text : "");
    return rc;
}
