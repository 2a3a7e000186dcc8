/*
 * chatsink.c - the chat's sink of the agent loop (see chatsink.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chatsink.h"
#include "core/arena.h"
#include "core/status.h"
#include "agent/toolbridge.h"
#include "agent/turn.h"
#include "gemini/gemini.h"
#include "registry/plugin.h"
#include "http/chatconv.h"
#include "http/chatin.h"
#include "http/chatout.h"
#include "http/chatwait.h"
#include "http/ndjson.h"
#include "http/site.h"

#include <jansson.h>

/* --- what the loop reports, gathered for the answer -------------------- */

static int
sink_tool_call(void *ctx, const struct loop_call *lc, bool handed_back,
               struct status_error *err)
{
    struct chatsink *s = ctx;
    const struct toolbridge_tool *tool;
    const char *id;

    if (!handed_back)
        return 0;
    /* The id and the name as the browser knows them: the turn's index in
     * the history it holds (which has no page state turn), and the tool's
     * own name (it may be declared under another, see toolbridge.h). */
    id = chatout_call_id(s->env->a, lc->call, lc->turn, lc->part);
    if (id == NULL)
        return status_oom(err);
    if (plugin_is_fn_name(lc->name)) /* an action waiting for approval */
        return chatwait_add(s->wait, id, lc->call, lc->turn, lc->part, err);
    tool = toolbridge_page_find(&s->env->page, lc->name);
    if (tool == NULL) /* chatwait_decide() found it: never */
        return status_set(err, ST_INTERNAL, "page tool '%s' lost", lc->name);
    return chatout_page_call(s->out, id, tool, lc->args, err);
}

static int
sink_tool_result(void *ctx, const struct loop_call *lc,
                 const struct loop_result *r, struct status_error *err)
{
    struct chatsink *s = ctx;

    if (r->action == NULL) /* no such function: the model was told */
        return 0;
    if (r->asks) { /* the visitor answers it (chatwait.c's questions) */
        const char *id = chatout_call_id(s->env->a, lc->call, lc->turn,
                                         lc->part);
        if (id == NULL ||
            chatwait_ask(s->wait, id, r->action, r->response, err))
            return status_oom(err);
    }
    return chatout_server_call(s->out, r->action, lc->args, r->ok, r->ms, err);
}

static int
sink_usage(void *ctx, const struct loop_usage *total, const char *model,
           struct status_error *err)
{
    struct chatsink *s = ctx;

    (void)err;
    s->out->usage = *total;
    if (model != NULL) /* the page shows it, e.g. "offline demo model" */
        s->out->model = model;
    return 0;
}

/* --- the answer the loop's end calls for -------------------------------- */

/* The answer that asks the visitor about the first waiting call: its
 * approval card. Page calls of the same turn go along in `calls`: the
 * browser runs them first. */
static int
approval_answer(struct chatsink *s, const char *text, struct status_error *err)
{
    json_t *card;

    if (chatwait_card(s->wait, s->conv->contents, &card, err) != 0)
        return -1;
    if (chatout_begin(s->out, s->env, s->conv, CHATOUT_APPROVAL, text, err) !=
        0) {
        json_decref(card);
        return -1;
    }
    if (chatout_add(s->out, "approval", card, err) != 0)
        return -1;
    return chatout_add(s->out, "calls", json_incref(s->out->page_calls), err);
}

/* The answer that asks the visitor the waiting question: a card of
 * its questions; page calls of the same turn go along in `calls` (the
 * browser runs them first, and sends their results with the answer). */
static int
question_answer(struct chatsink *s, const char *text, struct status_error *err)
{
    if (chatout_begin(s->out, s->env, s->conv, CHATOUT_QUESTION, text, err) !=
            0 ||
        chatout_add(s->out, "question", json_incref(s->wait->question), err) !=
            0)
        return -1;
    return chatout_add(s->out, "calls", json_incref(s->out->page_calls), err);
}

/* Gemini declined: the visitor's message and this request's turns stay
 * out of the history, or every later request would be blocked again. */
static int
blocked_answer(struct chatsink *s, const struct turn *t,
               struct status_error *err)
{
    json_t *contents = s->conv->contents;
    const char *text;

    while (json_array_size(contents) > s->conv->kept_turns)
        json_array_remove(contents, json_array_size(contents) - 1);
    text = arena_printf(s->env->a,
                        "Gemini declined to answer this (%s). Try "
                        "rephrasing your request.",
                        t->reason[0] ? t->reason : "blocked");
    if (text == NULL)
        return status_oom(err);
    return chatout_begin(s->out, s->env, s->conv, CHATOUT_BLOCKED, text, err);
}

/* A response, with the member `key: value` (NULL: none) that says how it
 * ended. */
static int
response(struct chatsink *s, const char *text, const char *key, json_t *value,
         struct status_error *err)
{
    if (chatout_begin(s->out, s->env, s->conv, CHATOUT_RESPONSE, text, err) !=
        0) {
        json_decref(value);
        return -1;
    }
    return key ? chatout_add(s->out, key, value, err) : 0;
}

int
chatsink_done(void *ctx, enum loop_end end, const struct turn *t,
              struct status_error *err)
{
    struct chatsink *s = ctx;
    const char *text = t && t->text[0] ? t->text : NULL;

    switch (end) {
    case LOOP_MAX_STEPS:
        return response(s,
                        "I stopped before finishing: this request reached "
                        "its limit of steps. Ask me to continue if you want "
                        "me to go on.",
                        "stopReason", json_string("max_steps"), err);
    case LOOP_BLOCKED:
        return blocked_answer(s, t, err);
    case LOOP_HANDED_BACK:
        if (json_array_size(s->wait->approvals) > 0)
            return approval_answer(s, text, err);
        if (s->wait->question != NULL)
            return question_answer(s, text, err);
        if (chatout_begin(s->out, s->env, s->conv, CHATOUT_TOOL_CALLS, text,
                          err) != 0)
            return -1;
        return chatout_add(s->out, "calls", json_incref(s->out->page_calls),
                           err);
    case LOOP_TRUNCATED:
        return response(s,
                        text ? text
                             : "The answer was cut off before any text (the "
                               "output limit was reached).",
                        "truncated", json_true(), err);
    case LOOP_ANSWERED:
        break;
    }
    return response(s, text ? text : "The model returned an empty answer.",
                    NULL, NULL, err);
}

static const struct loop_sink_ops chat_sink_ops = {
    .tool_call = sink_tool_call,
    .tool_result = sink_tool_result,
    .usage = sink_usage,
    .done = chatsink_done,
};

/* --- the streaming sink: the same, and each event on its way ------------ */

static int
stream_status(void *ctx, enum loop_status st, const char *tool,
              struct status_error *err)
{
    static const char *const names[] = {
        [LOOP_THINKING] = "thinking",
        [LOOP_TOOL] = "tool",
        [LOOP_WAITING] = "waiting",
    };
    struct chatsink *s = ctx;

    return ndjson_status(s->env->stream, names[st], tool, err);
}

static int
stream_delta(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct chatsink *s = ctx;

    return ndjson_delta(s->env->stream, text, len, err);
}

static int
stream_tool_call(void *ctx, const struct loop_call *lc, bool handed_back,
                 struct status_error *err)
{
    struct chatsink *s = ctx;
    const struct plugin_action *act;
    json_t *call;

    if (sink_tool_call(ctx, lc, handed_back, err) != 0)
        return -1;
    if (handed_back && plugin_is_fn_name(lc->name))
        return 0; /* waits for the visitor: the result line asks */
    if (handed_back) {
        /* as the answer's `calls` name it: just gathered */
        call = json_array_get(s->out->page_calls,
                              json_array_size(s->out->page_calls) - 1);
        return ndjson_tool_call(
            s->env->stream, json_string_value(json_object_get(call, "name")),
            lc->args, true, json_string_value(json_object_get(call, "id")),
            err);
    }
    act = plugin_find_fn(s->env->site->actions, lc->name);
    return ndjson_tool_call(s->env->stream, act ? act->name : lc->name,
                            lc->args, false, NULL, err);
}

static int
stream_tool_result(void *ctx, const struct loop_call *lc,
                   const struct loop_result *r, struct status_error *err)
{
    struct chatsink *s = ctx;

    if (sink_tool_result(ctx, lc, r, err) != 0)
        return -1;
    return ndjson_tool_result(s->env->stream, r->action ? r->action : lc->name,
                              r->ok, r->ms, err);
}

static int
stream_usage(void *ctx, const struct loop_usage *total, const char *model,
             struct status_error *err)
{
    struct chatsink *s = ctx;

    if (sink_usage(ctx, total, model, err) != 0)
        return -1;
    return ndjson_usage(s->env->stream, total, model, err);
}

static const struct loop_sink_ops chat_stream_ops = {
    .status = stream_status,
    .delta = stream_delta,
    .tool_call = stream_tool_call,
    .tool_result = stream_tool_result,
    .usage = stream_usage,
    .done = chatsink_done,
};

/* While the loop waits (on Gemini, between retries), the transport asks
 * this whether the visitor is gone: a stream also keeps its heartbeat
 * here, and a heartbeat that cannot be written means gone. */
static bool
stream_gone(void *ctx)
{
    struct chatsink *s = ctx;
    struct status_error err = {0};

    if (ndjson_tick(s->env->stream, &err) != 0)
        return true;
    return s->gone != NULL && s->gone(s->gone_ctx);
}

int
chatsink_run(struct chatsink *s, const struct loop_input *li,
             struct status_error *err)
{
    struct loop_sink sink = {&chat_sink_ops, s};
    struct gemini *g = li->g;
    int rc;

    if (s->env->stream == NULL)
        return loop_run(li, &sink, err);
    sink.ops = &chat_stream_ops;
    s->gone = g->gone;
    s->gone_ctx = g->gone_ctx;
    g->gone = stream_gone;
    g->gone_ctx = s;
    rc = loop_run(li, &sink, err);
    g->gone = s->gone;
    g->gone_ctx = s->gone_ctx;
    return rc;
}
