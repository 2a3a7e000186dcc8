/*
 * badabi.c - a broken plugin for t_plugins.sh: it says it was built for
 * plugin ABI 999. The server must report it and go on.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

#include <stddef.h>

static const char *
decls(void *self)
{
    (void)self;
    return "[]";
}

static int
run(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
    const char *args, size_t args_len, struct gemini_agent_out *out)
{
    (void)self; (void)ctx; (void)tool; (void)args; (void)args_len; (void)out;
    return GEMINI_AGENT_FAILED;
}

static const struct gemini_agent_plugin badabi = {
    .abi = 999,
    .name = "badabi",
    .declarations = decls,
    .execute = run,
};

const struct gemini_agent_plugin *gemini_agent_plugin_create(unsigned host_abi);

const struct gemini_agent_plugin *
gemini_agent_plugin_create(unsigned host_abi)
{
    (void)host_abi;
    return &badabi;
}
