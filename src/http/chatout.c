/*
 * chatout.c - the answer of a chat request (see chatout.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chatout.h"
#include "core/arena.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "agent/seal.h"
#include "agent/toolbridge.h"
#include "http/chat.h"
#include "http/chatconv.h"
#include "http/chatin.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char *const chat_answer_types[] = {
    [CHATOUT_RESPONSE] = "response", [CHATOUT_TOOL_CALLS] = "tool-calls",
    [CHATOUT_BLOCKED] = "blocked",   [CHATOUT_APPROVAL] = "approval-required",
    [CHATOUT_QUESTION] = "question", NULL,
};

int
chatout_init(struct chatout *o, struct arena *a, struct status_error *err)
{
    memset(o, 0, sizeof(*o));
    o->server_calls = arena_take_json(a, json_array());
    o->page_calls = arena_take_json(a, json_array());
    return o->server_calls && o->page_calls ? 0 : status_oom(err);
}

const char *
chatout_call_id(struct arena *a, const json_t *call, size_t turn, size_t part)
{
    const char *id = json_string_value(json_object_get(call, "id"));
    return id ? id : arena_printf(a, "call_%zu_%zu", turn, part);
}

int
chatout_server_call(struct chatout *o, const char *name, const json_t *args,
                    bool ok, long ms, struct status_error *err)
{
    if (json_array_append_new(o->server_calls,
                              json_pack("{s:s, s:O, s:b, s:I}", "name", name,
                                        "args", UNCONST(args), "ok", ok, "ms",
                                        (json_int_t)ms)) != 0)
        return status_oom(err);
    return 0;
}

int
chatout_page_call(struct chatout *o, const char *id,
                  const struct toolbridge_tool *tool, const json_t *args,
                  struct status_error *err)
{
    json_t *call = json_pack("{s:s, s:s, s:O}", "id", id, "name", tool->name,
                             "args", UNCONST(args));

    /* not json_pack's "s*", which drops the key when out of memory */
    if (call != NULL && tool->category != NULL &&
        json_object_set_new(call, "category", json_string(tool->category)) !=
            0) {
        json_decref(call);
        call = NULL;
    }
    if (json_array_append_new(o->page_calls, call) != 0)
        return status_oom(err);
    return 0;
}

/* Set `key` to the string `v` when there is one. Not json_pack's "s*":
 * that drops the key silently when the string cannot be allocated. */
static int
set_optional_string(json_t *obj, const char *key, const char *v)
{
    return v == NULL ? 0 : json_object_set_new(obj, key, json_string(v));
}

int
chatout_begin(struct chatout *o, const struct chat_env *env,
              const struct chatconv *conv, enum chatout_type type,
              const char *message, struct status_error *err)
{
    json_t *ans = json_pack("{s:s, s:O, s:o, s:O}", "type",
                            chat_answer_types[type], "history", conv->contents,
                            "usage", loop_usage_json(&o->usage), "serverCalls",
                            o->server_calls);

    o->answer = NULL;
    /* the turns as the server vouches for them, when it has a secret */
    if (ans != NULL && env->key.len > 0) {
        struct status_error serr = {0};
        json_t *sigs = seal_sign(&env->key, conv->contents, conv->sigs_in,
                                 conv->sigs_reuse, &serr);
        if (sigs == NULL || json_object_set_new(ans, "signatures", sigs) != 0) {
            json_decref(ans);
            return status_oom(err);
        }
    }
    if (ans != NULL &&
        (set_optional_string(ans, "message", message) != 0 ||
         set_optional_string(ans, "conversation", env->conv_token) != 0 ||
         set_optional_string(ans, "model", o->model) != 0 ||
         (conv->truncated &&
          json_object_set_new(ans, "historyTruncated", json_true()) != 0))) {
        json_decref(ans);
        return status_oom(err);
    }
    o->answer = arena_take_json(env->a, ans);
    return o->answer ? 0 : status_oom(err);
}

int
chatout_add(struct chatout *o, const char *key, json_t *value,
            struct status_error *err)
{
    if (o->answer == NULL) {
        json_decref(value);
        return status_oom(err);
    }
    return json_object_set_new(o->answer, key, value) == 0 ? 0
                                                           : status_oom(err);
}

int
chatout_write(const struct chatout *o, const struct chat_env *env,
              const struct chatconv *conv, const char **text, size_t *len,
              struct status_error *err)
{
    struct sbuf sb;
    const char *key;
    json_t *v;
    int rc = 0;
    bool first = true;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_putc(&sb, '{');
    json_object_foreach(o->answer, key, v) {
        if (!first)
            rc |= sbuf_putc(&sb, ',');
        first = false;
        rc |= jsonout_string(&sb, key, strlen(key));
        rc |= sbuf_putc(&sb, ':');
        rc |= v == conv->contents
                  ? loop_write_turns(v, conv->texts, conv->ntexts, &sb)
                  : jsonout_write(v, &sb);
    }
    rc |= sbuf_putc(&sb, '}');
    if (rc == 0) {
        char *buf = sbuf_detach(&sb, len);
        if (buf != NULL && arena_defer(env->a, free, buf) == 0) {
            *text = buf;
            return 0;
        }
    }
    sbuf_release(&sb);
    return status_set(err, ST_NO_MEMORY, "out of memory writing the answer");
}
