/*
 * loop.c - the agent loop (see loop.h).
 *
 * loop_run() is the map: ask Gemini, read the turn, record it, run the
 * calls the loop answers, and go round again until something ends it.
 * Each Gemini call sends the same request: `contents` is the caller's
 * conversation, which grows by reference as turns are recorded, so
 * nothing is copied between steps. Its members are written in the order
 * Gemini reads them - instruction, tools, contents - so that each step's
 * request begins with the whole of the previous one; the instruction and
 * the tools are written once, and each step writes the contents after
 * them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/loop.h"
#include "registry/action.h"
#include "core/arena.h"
#include "agent/bounds.h"
#include "core/config.h"
#include "gemini/gemini.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "registry/plugin.h"
#include "core/status.h"
#include "agent/turn.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One run of the loop. */
struct loop {
    const struct loop_input *in;
    const struct loop_sink *sink;
    /* the generateContent body: its start (instruction, tools) written
     * once, `head` bytes; each step writes the contents after it */
    struct sbuf request;
    size_t head;
    struct loop_usage usage;
    struct gemini_usage calls;
    size_t upstream; /* bytes sent to Gemini so far, retries included */
};

/* Call a sink op that may be absent. */
#define EMIT(l, op, ...)                                                       \
    ((l)->sink->ops->op == NULL                                                \
         ? 0                                                                   \
         : (l)->sink->ops->op((l)->sink->ctx, __VA_ARGS__))

void
loop_usage_add(long *acc, long v)
{
    if (v <= 0)
        return;
    *acc = *acc > LONG_MAX - v ? LONG_MAX : *acc + v;
}

long
loop_usage_tokens(const struct loop_usage *u)
{
    long n = 0;

    loop_usage_add(&n, u->prompt);
    loop_usage_add(&n, u->candidates);
    loop_usage_add(&n, u->thoughts);
    loop_usage_add(&n, u->tool_use);
    return n;
}

json_t *
loop_usage_json(const struct loop_usage *u)
{
    return json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:i}", "promptTokens", (json_int_t)u->prompt,
        "candidatesTokens", (json_int_t)u->candidates, "thoughtsTokens",
        (json_int_t)u->thoughts, "cachedTokens", (json_int_t)u->cached,
        "totalTokens", (json_int_t)u->total, "geminiCalls", u->calls);
}

/* The `response` of a call that failed; the model reads `error`. */
static json_t *
error_response(struct arena *a, const char *msg)
{
    return arena_take_json(a,
                           json_pack("{s:s}", "error", msg ? msg : "failed"));
}

int
loop_run_action(const struct config_actions *env,
                const struct plugin_action *act, const struct action_who *who,
                const struct loop_call *c, struct arena *a,
                struct loop_result *r, struct status_error *err)
{
    struct status_error failed = {0};
    json_t *out = NULL;
    long t0 = monotime_ms();
    int rc;

    memset(r, 0, sizeof(*r));
    if (act == NULL) {
        const char *msg = arena_printf(a,
                                       "unknown function '%s': call only "
                                       "the functions you were given",
                                       c->name);
        r->response = msg ? error_response(a, msg) : NULL;
        return r->response ? 0 : status_oom(err);
    }
    r->action = act->name;
    rc = action_run(env, act, who, c->args, a, &out, &failed);
    r->ok = rc == 0 || rc == ACTION_ASKS_USER;
    r->asks = rc == ACTION_ASKS_USER;
    r->ms = monotime_ms() - t0;
    if (failed.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "%s", failed.text);
    if (r->asks)
        r->response = out; /* the question, already pinned */
    else if (r->ok)
        r->response = arena_take_json(a, json_pack("{s:O}", "result", out));
    else if (failed.code == ST_SCHEMA)
        r->response = error_response(
            a, arena_printf(a, "invalid arguments: %s; the action did not run",
                            failed.text));
    else
        r->response = error_response(a, failed.text);
    return r->response ? 0 : status_oom(err);
}

json_t *
loop_answer_part(const json_t *call, const json_t *response)
{
    json_t *id = json_object_get(call, "id");

    /* Echo Gemini's id only when it sent one; never invent one. */
    return json_pack("{s:{s:O, s:O*, s:O}}", "functionResponse", "name",
                     json_object_get(call, "name"), "id",
                     json_is_string(id) ? id : NULL, "response",
                     UNCONST(response));
}

bool
loop_answers_call(const json_t *part, const json_t *call)
{
    const json_t *fr = json_object_get(part, "functionResponse");
    const json_t *id = json_object_get(call, "id");
    const char *name = json_string_value(json_object_get(fr, "name"));
    const char *want = json_string_value(json_object_get(call, "name"));

    return name != NULL && want != NULL && strcmp(name, want) == 0 &&
           (id == NULL || json_equal(id, json_object_get(fr, "id")));
}

/* Move in->last_turn (when there is one) to the end of `contents`: the
 * turns recorded since go before it. */
static int
keep_last(const struct loop_input *in, struct status_error *err)
{
    size_t n = json_array_size(in->contents), i = n;

    if (in->last_turn == NULL)
        return 0;
    while (i > 0 && json_array_get(in->contents, i - 1) != in->last_turn)
        i--;
    if (i == 0 || i == n)
        return 0; /* not there (a caller's choice), or already last */
    /* append first: removing drops the array's reference to it */
    if (json_array_append(in->contents, in->last_turn) != 0)
        return status_oom(err);
    return json_array_remove(in->contents, i - 1) == 0 ? 0 : status_oom(err);
}

/* The rest of the request, after the first `head` bytes of `sb` (its
 * start, written once): the contents, the last turn's text after them,
 * and the closing brace. */
static int
write_contents(const struct loop_input *in, struct sbuf *sb, size_t head)
{
    int rc = 0;

    sbuf_truncate(sb, head);
    rc |= loop_write_turns(in->contents, in->texts, in->ntexts, sb);
    if (in->last_turn_text != NULL) {
        /* in place of the array's closing bracket */
        sbuf_truncate(sb, sb->len - 1);
        if (json_array_size(in->contents) > 0)
            rc |= sbuf_putc(sb, ',');
        rc |= sbuf_add(sb, in->last_turn_text, in->last_turn_text_len);
        rc |= sbuf_putc(sb, ']');
    }
    rc |= sbuf_putc(sb, '}');
    return rc == 0 ? 0 : -1;
}

int
loop_write_turns(const json_t *turns, const struct loop_text *texts,
                 size_t ntexts, struct sbuf *sb)
{
    const json_t *turn;
    size_t i;
    int rc = 0;

    rc |= sbuf_putc(sb, '[');
    json_array_foreach(turns, i, turn) {
        if (i > 0)
            rc |= sbuf_putc(sb, ',');
        if (i < ntexts)
            rc |= sbuf_put(sb, texts[i].p, texts[i].n);
        else
            rc |= jsonout_write(turn, sb);
    }
    rc |= sbuf_putc(sb, ']');
    return rc == 0 ? 0 : -1;
}

/* A streamed text delta, on to the sink. */
static int
on_text(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct loop *l = ctx;
    return l->sink->ops->delta(l->sink->ctx, text, len, err);
}

static const struct gemini_stream_ops stream_ops = {on_text};

/*
 * May the step about to be sent go? Not when it would take the request's
 * bytes to Gemini past in->max_upstream_bytes, nor when the caller's gate
 * refuses it: either way no call is made.
 */
static int
may_send(struct loop *l, struct status_error *err)
{
    const struct loop_input *in = l->in;
    size_t n = l->request.len;

    if (in->max_upstream_bytes > 0 &&
        (n > (size_t)in->max_upstream_bytes ||
         l->upstream > (size_t)in->max_upstream_bytes - n))
        return status_set(err, ST_UPSTREAM_TOO_LARGE,
                          "this request would send more than %ld bytes to "
                          "Gemini in all (%zu sent, %zu more for the next "
                          "step; limits.maxUpstreamBytes): start a new "
                          "conversation or send less page state",
                          in->max_upstream_bytes, l->upstream, n);
    if (in->gate != NULL &&
        in->gate->step(in->gate->ctx, n, &l->usage, err) != 0)
        return -1;
    return 0;
}

/* Ask Gemini once and read its answer into `t`: streamed when the sink
 * takes deltas. */
static int
ask(struct loop *l, struct turn *t, struct status_error *err)
{
    const struct loop_input *in = l->in;
    json_t *resp = NULL;
    const char *model;
    int rc, calls = l->calls.calls;

    if (keep_last(in, err) != 0)
        return -1;
    if (write_contents(in, &l->request, l->head) != 0)
        return status_oom(err);
    if (may_send(l, err) != 0)
        return -1;
    if (EMIT(l, status, LOOP_THINKING, NULL, err) != 0)
        return -1;
    struct gemini_request rq = {.gc = in->gemini,
                                .body = l->request.buf,
                                .len = l->request.len,
                                .a = in->a,
                                .usage = &l->calls};
    for (long retries = 0;; retries++) {
        if (l->sink->ops->delta != NULL)
            rc = gemini_stream(in->g, &rq, &stream_ops, l, &resp, err);
        else
            rc = gemini_generate(in->g, &rq, &resp, err);
        l->usage.calls = l->calls.calls;
        /* every attempt sent the whole request (at least the first did) */
        l->upstream += l->request.len * (size_t)(l->calls.calls > calls
                                                     ? l->calls.calls - calls
                                                     : 1);
        calls = l->calls.calls;
        if (rc == 0 || !in->g->broke || retries >= in->broke_retries)
            break;
        /* the answer broke off: once more (the sink takes back what it
         * showed of it), within the same bounds as any step */
        struct status_error why = *err;
        memset(err, 0, sizeof(*err));
        if (EMIT(l, retry, (int)retries + 1, (int)in->broke_retries, &why,
                 err) != 0 ||
            may_send(l, err) != 0)
            return -1;
    }
    if (rc == 0)
        rc = turn_parse(resp, in->bounds, in->a, t, err);
    if (rc == 0) {
        loop_usage_add(&l->usage.prompt, t->prompt_tokens);
        loop_usage_add(&l->usage.candidates, t->candidates_tokens);
        loop_usage_add(&l->usage.thoughts, t->thoughts_tokens);
        loop_usage_add(&l->usage.cached, t->cached_tokens);
        loop_usage_add(&l->usage.total, t->total_tokens);
        loop_usage_add(&l->usage.tool_use, t->tool_use_prompt_tokens);
    }
    /* what the caller settles with, whatever happens next */
    if (in->gate != NULL)
        in->gate->used = l->usage;
    if (rc != 0)
        return -1;
    /* Which model answered: an alias may name another. */
    model = json_string_value(json_object_get(resp, "modelVersion"));
    return EMIT(l, usage, &l->usage, model, err);
}

/* Append the model turn to the conversation and tell the sink of it. */
static int
record(struct loop *l, const struct turn *t, size_t *index,
       struct status_error *err)
{
    *index = json_array_size(l->in->contents);
    if (t->content != NULL &&
        json_array_append(l->in->contents, t->content) != 0)
        return status_oom(err);
    return t->text[0] ? EMIT(l, text, t->text, err) : 0;
}

/*
 * A result the conversation cannot keep (it nests past in->bounds as a
 * functionResponse's `response`: part, functionResponse, response) is
 * replaced by an error saying so: the action ran, but a later request
 * would refuse the history that held its result.
 */
static int
fit_result(const struct loop_input *in, struct loop_result *r,
           struct status_error *err)
{
    int levels = in->bounds != NULL ? in->bounds->depth - 2 : 0;
    const char *msg;

    if (levels <= 0 || r->asks || turn_depth_fits(r->response, levels))
        return 0;
    msg = arena_printf(in->a,
                       "the call ran, but its result nests deeper than %d "
                       "levels, more than a conversation can keep; it is "
                       "not shown",
                       levels - 1);
    r->response = msg ? error_response(in->a, msg) : NULL;
    return r->response ? 0 : status_oom(err);
}

/* The loop's own calls run now, in call order, and their answers become
 * one user turn; the client's calls are only reported. `*handed` counts
 * those. */
static int
run_calls(struct loop *l, const struct turn *t, size_t index, size_t *handed,
          struct status_error *err)
{
    const struct loop_input *in = l->in;
    json_t *parts = json_object_get(t->content, "parts");
    json_t *answers = arena_take_json(in->a, json_array());

    *handed = 0;
    if (answers == NULL)
        return status_oom(err);
    for (size_t i = 0; i < t->ncalls; i++) {
        struct loop_call c = {
            t->calls[i].name, t->calls[i].args,
            json_object_get(json_array_get(parts, t->calls[i].part),
                            "functionCall"),
            index, t->calls[i].part};
        struct loop_result r = {0};
        int who;

        if (t->calls[i].refused != NULL ||
            (in->max_calls > 0 && i >= (size_t)in->max_calls)) {
            /* refused, or past the cap: not run, not handed back; the
             * model reads why */
            const char *msg =
                t->calls[i].refused != NULL
                    ? t->calls[i].refused
                    : arena_printf(in->a,
                                   "not run: a turn may make at most %ld "
                                   "calls; ask again for the rest",
                                   in->max_calls);
            r.response = msg ? error_response(in->a, msg) : NULL;
            if (r.response == NULL)
                return status_oom(err);
            if (EMIT(l, tool_call, &c, false, err) != 0 ||
                EMIT(l, tool_result, &c, &r, err) != 0)
                return -1;
            if (json_array_append_new(answers,
                                      loop_answer_part(c.call, r.response)))
                return status_oom(err);
            continue;
        }
        who = in->decide(in->decide_ctx, &c, &r, err);

        if (who < 0 || EMIT(l, tool_call, &c, who == LOOP_HAND_BACK, err) != 0)
            return -1;
        if (who == LOOP_HAND_BACK) {
            (*handed)++;
            continue;
        }
        if (who == LOOP_RUN_IT) {
            const struct plugin_action *act = plugin_find_fn(in->actions,
                                                             c.name);
            if (EMIT(l, status, LOOP_TOOL, act ? act->name : c.name, err) !=
                    0 ||
                loop_run_action(in->action_env, act, in->who, &c, in->a, &r,
                                err) != 0)
                return -1;
        } else if (r.response == NULL) {
            return status_set(err, ST_INTERNAL,
                              "the call '%s' was answered without a response",
                              c.name);
        }
        if (fit_result(in, &r, err) != 0 ||
            EMIT(l, tool_result, &c, &r, err) != 0)
            return -1;
        if (r.asks) { /* the user answers it: as a call handed back */
            (*handed)++;
            continue;
        }
        if (json_array_append_new(answers,
                                  loop_answer_part(c.call, r.response)))
            return status_oom(err);
    }
    if (json_array_size(answers) > 0 &&
        json_array_append_new(
            in->contents,
            json_pack("{s:s, s:O}", "role", "user", "parts", answers)) != 0)
        return status_oom(err);
    return 0;
}

/* Every failure ends here: the sink hears of it, the caller gets -1. */
static int
fail(struct loop *l, struct status_error *err)
{
    if (err->code == ST_OK)
        status_set(err, ST_INTERNAL, "the agent loop failed");
    if (l->sink->ops->error != NULL)
        l->sink->ops->error(l->sink->ctx, err);
    return -1;
}

static int
finish(struct loop *l, enum loop_end end, const struct turn *last,
       struct status_error *err)
{
    return EMIT(l, done, end, last, err) == 0 ? 0 : fail(l, err);
}

/*
 * The request up to its contents, as json_pack("{s:{s:[{s:s}]}, s:O*,
 * s:O*, s:O}", "systemInstruction", ..., "tools", ...,
 * "generationConfig", ..., "contents", ...) would write it:
 * `{"systemInstruction":...,"tools":...,"generationConfig":...,"contents":`.
 */
static int
write_head(const struct loop_input *in, struct sbuf *sb)
{
    static const char open_decls[] = "[{\"functionDeclarations\":[";
    const json_t *decls = json_object_get(json_array_get(in->tools, 0),
                                          "functionDeclarations");
    const json_t *d;
    size_t i, k;
    bool texts = false, any = false;
    int rc = 0;

    rc |= sbuf_adds(sb, "{\"systemInstruction\":");
    if (in->system_json != NULL) {
        rc |= sbuf_adds(sb, in->system_json);
    } else {
        rc |= sbuf_adds(sb, "{\"parts\":[{\"text\":");
        rc |= in->system ? jsonout_string(sb, in->system, strlen(in->system))
                         : -1;
        rc |= sbuf_adds(sb, "}]}");
    }
    for (k = 0; k < in->ndecls; k++)
        texts |= in->decls[k].n > 0;
    if (texts) {
        rc |= sbuf_adds(sb, ",\"tools\":");
        rc |= sbuf_adds(sb, open_decls);
        for (k = 0; k < in->ndecls; k++) {
            if (in->decls[k].n == 0)
                continue;
            if (any)
                rc |= sbuf_putc(sb, ',');
            rc |= sbuf_add(sb, in->decls[k].p, in->decls[k].n);
            any = true;
        }
        json_array_foreach(decls, i, d) {
            rc |= sbuf_putc(sb, ',');
            rc |= jsonout_write(d, sb);
        }
        rc |= sbuf_adds(sb, "]}]");
    } else if (in->tools != NULL) {
        rc |= sbuf_adds(sb, ",\"tools\":");
        rc |= jsonout_write(in->tools, sb);
    }
    /* the same for every step, so before the contents that grow */
    if (in->max_output_tokens > 0)
        rc |= sbuf_addf(sb, ",\"generationConfig\":{\"maxOutputTokens\":%ld}",
                        in->max_output_tokens);
    rc |= sbuf_adds(sb, ",\"contents\":");
    return rc == 0 ? 0 : -1;
}

/* --- the loop, top to bottom --------------------------------------------- */

static int
run(struct loop *l, struct status_error *err)
{
    bool retried_malformed = false;

    size_t room = l->in->last_turn_text_len + BOUND_LOOP_STEP_ROOM;

    /* room for what every step writes, so the buffer does not grow
     * (and copy) a large request in steps */
    for (size_t i = 0; i < l->in->ntexts; i++)
        room += l->in->texts[i].n + 1;
    if (write_head(l->in, &l->request) != 0 ||
        sbuf_reserve(&l->request, room) != 0) {
        status_oom(err);
        return fail(l, err);
    }
    l->head = l->request.len;
    for (long step = 0;; step++) {
        struct turn t;
        size_t index, handed;

        if (step == l->in->max_steps) /* say so rather than loop on */
            return finish(l, LOOP_MAX_STEPS, NULL, err);
        if (ask(l, &t, err) != 0)
            return fail(l, err);
        if (t.end == TURN_BLOCKED) /* never recorded: it would block again */
            return finish(l, LOOP_BLOCKED, &t, err);
        if (t.end == TURN_MALFORMED) {
            /* Nothing may run; the same request usually works again. */
            if (!retried_malformed) {
                retried_malformed = true;
                continue;
            }
            status_set(err, ST_UPSTREAM_BAD,
                       "Gemini produced an invalid function call twice (%s); "
                       "try rephrasing",
                       t.reason);
            return fail(l, err);
        }
        if (record(l, &t, &index, err) != 0)
            return fail(l, err);
        if (t.ncalls == 0)
            return finish(
                l, t.end == TURN_TRUNCATED ? LOOP_TRUNCATED : LOOP_ANSWERED, &t,
                err);
        if (run_calls(l, &t, index, &handed, err) != 0)
            return fail(l, err);
        if (handed > 0) {
            if (EMIT(l, status, LOOP_WAITING, NULL, err) != 0)
                return fail(l, err);
            return finish(l, LOOP_HANDED_BACK, &t, err);
        }
        /* every call was the loop's own: straight back to Gemini */
    }
}

int
loop_run(const struct loop_input *in, const struct loop_sink *sink,
         struct status_error *err)
{
    struct loop l = {.in = in, .sink = sink};
    int rc;

    sbuf_init(&l.request, SIZE_MAX / 2);
    rc = run(&l, err);
    sbuf_release(&l.request);
    return rc;
}
