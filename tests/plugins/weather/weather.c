/*
 * weather.c - the executor of tests/plugins/weather/plugin.yaml: a
 * declarative plugin's library. Its tools are declared by the folder's
 * .jay-action files, so declarations() gives none; execute() is called
 * with the entry's name ("forecast") and input its schema already passed.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

#include <stdio.h>
#include <string.h>

static const char *
weather_declarations(void *self)
{
    (void)self;
    return "[]";
}

static int
weather_execute(void *self, const struct gemini_agent_ctx *ctx,
                const char *tool, const char *args, size_t args_len,
                struct gemini_agent_out *out)
{
    const char *p, *q, *end = args + args_len;
    char text[160];
    int n;

    (void)self;
    if (strcmp(tool, "forecast") != 0) {
        gemini_agent_reply(ctx, out, "no such tool", 12);
        return GEMINI_AGENT_BAD_INPUT;
    }
    /* {"city":"..."}: the schema allows nothing else */
    p = strstr(args, "\"city\"");
    p = p ? memchr(p + 6, '"', (size_t)(end - p - 6)) : NULL;
    q = p ? memchr(p + 1, '"', (size_t)(end - p - 1)) : NULL;
    if (q == NULL)
        return GEMINI_AGENT_FAILED;
    n = snprintf(text, sizeof(text),
                 "{\"city\":\"%.*s\",\"forecast\":\"sunny\"}",
                 (int)(q - p - 1), p + 1);
    return gemini_agent_reply(ctx, out, text, (size_t)n);
}

static const struct gemini_agent_plugin weather = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "weather",
    .declarations = weather_declarations,
    .execute = weather_execute,
};

const struct gemini_agent_plugin *gemini_agent_plugin_create(unsigned host_abi);

const struct gemini_agent_plugin *
gemini_agent_plugin_create(unsigned host_abi)
{
    return host_abi == GEMINI_AGENT_PLUGIN_ABI ? &weather : NULL;
}
