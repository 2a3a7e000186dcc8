/*
 * memory.c - the built-in plugin `memory`: what the assistant remembers
 * about the signed-in user, across conversations (once the run API's own
 * save_memory / search_memory).
 *
 * Two tools, `save` {text, tags?} and `search` {query, limit?}, on the
 * store's memories of ctx->user. The plugin says
 * GEMINI_AGENT_NEEDS_USER: the run API declares its tools, the public
 * widget never does, and a call without a user (a direct POST, a model
 * naming an undeclared tool) is refused.
 *
 * Config: {store: "sqlite:PATH"}. The site fills it in with the run
 * API's own store (agent.yaml's `store:`) unless plugins.config.memory
 * names one, so the memories the run API's instruction recalls are the
 * ones these tools keep. Each call opens the store and closes it:
 * memory calls are a few per run, and a connection kept per process
 * would have to be guarded across the worker's request threads.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/memory.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "core/jsonin.h"
#include "core/status.h"
#include "store/store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct memory {
    char *store; /* "sqlite:PATH" */
};

static const char decls_text[] =
    "[{\"name\":\"save\",\"description\":\"Remember a fact about the user "
    "for later conversations.\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"text\":{\"type\":\"string\",\"minLength\":1,"
    "\"description\":\"the fact, in one sentence\"},\"tags\":{\"type\":"
    "\"string\",\"description\":\"words to find it by\"}},"
    "\"required\":[\"text\"]},\"sideEffects\":false},"
    "{\"name\":\"search\",\"description\":\"Search what you remembered "
    "about the user.\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"query\":{\"type\":\"string\"},\"limit\":{\"type\":\"integer\","
    "\"minimum\":1}},\"required\":[\"query\"]},\"sideEffects\":false}]";

static const char *
decls(void *self)
{
    (void)self;
    return decls_text;
}

static const char *
config_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{\"store\":{\"type\":"
           "\"string\",\"pattern\":\"^sqlite:.\"}},"
           "\"additionalProperties\":false}";
}

static int
memory_initialize(const struct gemini_agent_init *init, void **self, char *err,
                  size_t errsize)
{
    struct status_error bad = {0};
    json_t *conf = jsonin_decode(init->config, init->config_len,
                                 BOUND_JSON_DEPTH, &bad);
    const char *store = json_string_value(json_object_get(conf, "store"));
    struct memory *m = calloc(1, sizeof(*m));
    int rc = -1;

    if (m == NULL)
        goto out;
    if (store != NULL)
        m->store = strdup(store);
    else if (asprintf(&m->store, "sqlite:%s/agent.db", init->data_dir) < 0)
        m->store = NULL;
    if (m->store == NULL)
        goto out;
    *self = m;
    m = NULL;
    rc = 0;
out:
    if (rc != 0)
        snprintf(err, errsize, "out of memory");
    free(m);
    json_decref(conf);
    return rc;
}

static void
memory_shutdown(void *self)
{
    struct memory *m = self;

    if (m != NULL)
        free(m->store);
    free(m);
}

static const char *
auto_approved(void *self)
{
    (void)self;
    return "[\"save\",\"search\"]"; /* the user's own notes, nothing more */
}

static int
memory_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
               const char *args, size_t args_len, struct gemini_agent_out *out)
{
    const struct memory *m = self;
    struct status_error err = {0};
    json_t *in, *found = NULL;
    struct store *st;
    long id = 0;
    int rc;

    if (ctx->user == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "memory is only for a signed-in user");
    in = jsonin_decode(args, args_len, BOUND_JSON_DEPTH, &err);
    if (in == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    if ((st = store_open_migrated(m->store, &err)) == NULL) {
        json_decref(in);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                           "memory is unavailable right now");
    }
    if (strcmp(tool, "save") == 0) {
        rc = st->ops->memory_save(
            st, ctx->user, json_string_value(json_object_get(in, "text")),
            json_string_value(json_object_get(in, "tags")), &id, &err);
        if (rc == 0)
            rc = answer_json(
                ctx, out,
                json_pack("{s:b, s:I}", "saved", 1, "id", (json_int_t)id));
        else
            rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                             "memory is unavailable right now");
    } else if (strcmp(tool, "search") == 0) {
        json_int_t limit = json_integer_value(json_object_get(in, "limit"));
        rc = st->ops->memory_search(
            st, ctx->user, json_string_value(json_object_get(in, "query")),
            limit > 0 ? (long)limit : 5, &found, &err);
        if (rc == 0)
            rc = answer_json(ctx, out, json_pack("{s:o}", "memories", found));
        else
            rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                             "memory is unavailable right now");
    } else {
        rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "no such tool");
    }
    st->ops->close(st);
    json_decref(in);
    return rc;
}

static const struct gemini_agent_plugin memory_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "memory",
    .declarations = decls,
    .execute = memory_execute,
    .initialize = memory_initialize,
    .shutdown = memory_shutdown,
    .auto_approved_tools = auto_approved,
    .config_schema = config_schema,
    .flags = GEMINI_AGENT_NEEDS_USER,
};

const struct gemini_agent_plugin *
builtin_memory(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &memory_plugin : NULL;
}
