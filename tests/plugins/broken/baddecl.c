/*
 * baddecl.c - a half-broken plugin for the tests: of its three tools only
 * `fine` is well declared; `noschema` has parameters that are not an
 * object schema, and `badschema` a keyword the schema subset refuses.
 * The registry reports the two and keeps the plugin with `fine`.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

#include <stddef.h>

static const char *
decls(void *self)
{
    (void)self;
    return "[{\"name\":\"fine\",\"description\":\"A fine tool\","
           "\"parameters\":{\"type\":\"object\"}},"
           "{\"name\":\"noschema\",\"description\":\"No object schema\","
           "\"parameters\":{\"type\":\"string\"}},"
           "{\"name\":\"badschema\",\"description\":\"A refused keyword\","
           "\"parameters\":{\"type\":\"object\",\"patternProperties\":{}}}]";
}

static int
run(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
    const char *args, size_t args_len, struct gemini_agent_out *out)
{
    (void)self; (void)tool;
    /* {"garbage": ...}: an answer that is not JSON, which the host must
     * call the action's failure, not the request's */
    for (size_t i = 0; i + 9 <= args_len; i++)
        if (args[i] == '"' && args[i + 1] == 'g' && args[i + 8] == '"')
            return gemini_agent_reply(ctx, out, "not json", 8);
    return gemini_agent_reply(ctx, out, "{\"ok\":true}", 11);
}

static const struct gemini_agent_plugin baddecl = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "baddecl",
    .declarations = decls,
    .execute = run,
};

const struct gemini_agent_plugin *gemini_agent_plugin_create(unsigned host_abi);

const struct gemini_agent_plugin *
gemini_agent_plugin_create(unsigned host_abi)
{
    return host_abi == GEMINI_AGENT_PLUGIN_ABI ? &baddecl : NULL;
}
