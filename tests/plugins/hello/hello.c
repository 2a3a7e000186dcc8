/*
 * hello.c - the example plugin built outside the tree: a shared object
 * that needs nothing of gemini-agent but include/gemini-agent/plugin.h
 * (tests/plugins/Makefile compiles it with -I<repo>/include only).
 *
 * Two tools: greet {who} answers {"greeting": "<greeting>, <who>!"}, with
 * `greeting` from plugins.config.hello (default "Hello"); wave {} says it
 * has side effects (so the chat asks the visitor first) and answers
 * {"waved": true}. A user command, greeting [ARG], says the configured
 * greeting (shared with the model); another, forget, says it has side
 * effects (so only a user the policy lets act may run it over HTTP); and it subscribes to prompts: one that
 * says "@hello" gets " [hello was here]" appended, with metadata
 * {"mentions": 1}. Each initialize() and shutdown() appends a line,
 * "init <greeting>" or "shutdown <greeting>", to <dataDir>/hello.log.
 * It parses its JSON by hand to show that a plugin
 * needs no JSON library: the host has validated the arguments against the
 * schema, so "who" is a string.
 *
 * SPDX-License-Identifier: MIT
 */
#include <gemini-agent/plugin.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hello {
    char greeting[64];
    char log[512]; /* <dataDir>/hello.log: its initialize and shutdown */
};

/* One line to hello.log: lets a test see which instances live (a reload
 * that changes nothing of hello must neither shut it down nor start it). */
static void
note(const struct hello *h, const char *what)
{
    FILE *f = fopen(h->log, "a");

    if (f != NULL) {
        fprintf(f, "%s %s\n", what, h->greeting);
        fclose(f);
    }
}

/* The string value of "key" in the JSON object text js[len] (escapes
 * are copied as they are, which is still valid JSON string content), into
 * out[size]; 0, or -1 when absent or too long. */
static int
string_member(const char *js, size_t len, const char *key, char *out,
              size_t size)
{
    char pat[80];
    const char *p, *end = js + len;
    size_t n = 0;

    snprintf(pat, sizeof(pat), "\"%s\"", key);
    for (p = js; p + strlen(pat) <= end; p++) {
        if (memcmp(p, pat, strlen(pat)) != 0)
            continue;
        p += strlen(pat);
        while (p < end && (*p == ' ' || *p == ':'))
            p++;
        if (p >= end || *p != '"')
            return -1;
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\\' && p + 1 < end) {
                if (n + 2 >= size)
                    return -1;
                out[n++] = *p++;
            }
            if (n + 1 >= size)
                return -1;
            out[n++] = *p;
        }
        out[n] = '\0';
        return 0;
    }
    return -1;
}

static int
hello_initialize(const struct gemini_agent_init *init, void **self,
                 char *err, size_t errsize)
{
    struct hello *h = calloc(1, sizeof(*h));

    if (h == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    if (string_member(init->config, init->config_len, "greeting", h->greeting,
                      sizeof(h->greeting)) != 0)
        strcpy(h->greeting, "Hello");
    if (strcmp(h->greeting, "fail") == 0) {
        /* lets a test see a failing initialize() reported */
        snprintf(err, errsize, "greeting 'fail' asked me to fail");
        free(h);
        return -1;
    }
    snprintf(h->log, sizeof(h->log), "%s/hello.log", init->data_dir);
    note(h, "init");
    *self = h;
    return 0;
}

static void
hello_shutdown(void *self)
{
    note(self, "shutdown");
    free(self);
}

static const char *
hello_declarations(void *self)
{
    (void)self;
    return "[{\"name\":\"greet\","
           "\"description\":\"Greet someone by name\","
           "\"parameters\":{\"type\":\"object\","
           "\"properties\":{\"who\":{\"type\":\"string\",\"maxLength\":40}},"
           "\"required\":[\"who\"],\"additionalProperties\":false},"
           "\"sideEffects\":false},"
           "{\"name\":\"wave\","
           "\"description\":\"Wave at the visitor (a side effect)\","
           "\"parameters\":{\"type\":\"object\"},"
           "\"sideEffects\":true}]";
}

static const char *
hello_instructions(void *self)
{
    (void)self;
    return "HELLO-PLUGIN: when the visitor says hello, greet them with "
           "action_hello_greet.";
}

static const char *
hello_auto_approved(void *self)
{
    (void)self;
    return "[\"greet\"]";
}

static int
hello_execute(void *self, const struct gemini_agent_ctx *ctx,
              const char *tool, const char *args, size_t args_len,
              struct gemini_agent_out *out)
{
    const struct hello *h = self;
    char who[128], text[256];
    int n;

    if (strcmp(tool, "wave") == 0)
        return gemini_agent_reply(ctx, out, "{\"waved\":true}", 15);
    if (strcmp(tool, "greet") != 0) {
        static const char msg[] = "no such tool";
        gemini_agent_reply(ctx, out, msg, sizeof(msg) - 1);
        return GEMINI_AGENT_BAD_INPUT;
    }
    if (string_member(args, args_len, "who", who, sizeof(who)) != 0) {
        static const char msg[] = "'who' must be a short string";
        gemini_agent_reply(ctx, out, msg, sizeof(msg) - 1);
        return GEMINI_AGENT_BAD_INPUT;
    }
    n = snprintf(text, sizeof(text), "{\"greeting\":\"%s, %s!\"}",
                 h->greeting, who);
    if (n < 0 || (size_t)n >= sizeof(text))
        return GEMINI_AGENT_FAILED;
    return gemini_agent_reply(ctx, out, text, (size_t)n);
}

static const char *
hello_user_commands(void *self)
{
    (void)self;
    return "[{\"name\":\"greeting\","
           "\"description\":\"Say the configured greeting\","
           "\"shareWithModel\":true},"
           "{\"name\":\"forget\","
           "\"description\":\"Forget what hello knows (a side effect)\","
           "\"sideEffects\":true}]";
}

static int
hello_run_command(void *self, const struct gemini_agent_ctx *ctx,
                  const char *command, const char *arg, size_t arg_len,
                  struct gemini_agent_out *out)
{
    const struct hello *h = self;
    char text[256];
    int n;

    if (strcmp(command, "forget") == 0)
        return gemini_agent_reply(ctx, out, "forgotten", 9);
    if (strcmp(command, "greeting") != 0)
        return GEMINI_AGENT_BAD_INPUT;
    n = snprintf(text, sizeof(text), "%s (%.*s)", h->greeting,
                 (int)(arg_len < 100 ? arg_len : 100), arg);
    if (n < 0 || (size_t)n >= sizeof(text))
        return GEMINI_AGENT_FAILED;
    return gemini_agent_reply(ctx, out, text, (size_t)n);
}

static int
hello_enrich(void *self, const struct gemini_agent_ctx *ctx,
             const char *prompt, size_t prompt_len,
             struct gemini_agent_out *new_prompt,
             struct gemini_agent_out *metadata)
{
    static const char tag[] = " [hello was here]";
    char *p;
    bool seen = false;

    (void)self;
    for (size_t i = 0; i + 6 <= prompt_len && !seen; i++)
        seen = memcmp(prompt + i, "@hello", 6) == 0;
    if (!seen)
        return GEMINI_AGENT_OK; /* nothing set: the prompt goes on as it is */
    p = ctx->alloc(ctx, prompt_len + sizeof(tag));
    if (p == NULL)
        return GEMINI_AGENT_FAILED;
    memcpy(p, prompt, prompt_len);
    memcpy(p + prompt_len, tag, sizeof(tag));
    new_prompt->text = p;
    new_prompt->len = prompt_len + sizeof(tag) - 1;
    return gemini_agent_reply(ctx, metadata, "{\"mentions\":1}", 14);
}

static const struct gemini_agent_plugin hello_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "hello",
    .declarations = hello_declarations,
    .execute = hello_execute,
    .initialize = hello_initialize,
    .shutdown = hello_shutdown,
    .system_instructions = hello_instructions,
    .auto_approved_tools = hello_auto_approved,
    .user_commands = hello_user_commands,
    .run_command = hello_run_command,
    .enrich_prompt = hello_enrich,
};

const struct gemini_agent_plugin *gemini_agent_plugin_create(unsigned host_abi);

const struct gemini_agent_plugin *
gemini_agent_plugin_create(unsigned host_abi)
{
    return host_abi == GEMINI_AGENT_PLUGIN_ABI ? &hello_plugin : NULL;
}
