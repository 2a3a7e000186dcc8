/*
 * greet.c - the library of the example plugin: its tools are declared by
 * the folder's .jay-action files, so declarations() gives none, and
 * execute() is called with the entry's name ("hello") and an input its
 * schema has already checked: {"name": "..."}.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

#include <stdio.h>
#include <string.h>

static const char *
greet_declarations(void *self)
{
    (void)self;
    return "[]";
}

static int
greet_execute(void *self, const struct gemini_agent_ctx *ctx,
              const char *tool, const char *args, size_t args_len,
              struct gemini_agent_out *out)
{
    const char *p, *q, *end = args + args_len;
    char text[512];
    int n;

    (void)self;
    if (strcmp(tool, "hello") != 0) {
        gemini_agent_reply(ctx, out, "no such tool", 12);
        return GEMINI_AGENT_BAD_INPUT;
    }
    /* the value of "name", copied as it is: it is a JSON string already */
    p = strstr(args, "\"name\"");
    p = p ? memchr(p + 6, '"', (size_t)(end - p - 6)) : NULL;
    for (q = p ? p + 1 : NULL; q != NULL && q < end && *q != '"'; q++)
        if (*q == '\\' && q + 1 < end)
            q++;
    if (q == NULL || q >= end)
        return GEMINI_AGENT_FAILED;
    n = snprintf(text, sizeof(text), "{\"greeting\":\"Hello, %.*s!\"}",
                 (int)(q - p - 1), p + 1);
    if (n < 0 || (size_t)n >= sizeof(text))
        return GEMINI_AGENT_FAILED;
    return gemini_agent_reply(ctx, out, text, (size_t)n);
}

static const struct gemini_agent_plugin greet = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "greet",
    .declarations = greet_declarations,
    .execute = greet_execute,
};

const struct gemini_agent_plugin *gemini_agent_plugin_create(unsigned host_abi);

const struct gemini_agent_plugin *
gemini_agent_plugin_create(unsigned host_abi)
{
    return host_abi == GEMINI_AGENT_PLUGIN_ABI ? &greet : NULL;
}
