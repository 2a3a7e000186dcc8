/*
 * chat.c - the stateless chat turn loop.
 *
 * chat_handle() is the map of a chat request: decode -> bound -> the new
 * turn -> prompt + declarations -> Gemini -> actions -> answer. The history
 * is never copied: `contents` holds references to the turns the browser
 * sent and to the parts Gemini returned, so thought signatures and fields
 * we do not know go back exactly as they came.
 *
 * Call ids: the browser needs a handle per page call. It is Gemini's own
 * functionCall.id when there is one, else "call_<turn>_<part>" from the
 * call's position in the history the browser holds - unique within the
 * conversation, and derivable again when the results come back, so the
 * server needs no session.
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "chat.h"
#include "action.h"
#include "arena.h"
#include "config.h"
#include "gemini.h"
#include "history.h"
#include "jschema.h"
#include "jsonin.h"
#include "bounds.h"
#include "plugin.h"
#include "prompt.h"
#include "status.h"
#include "toolbridge.h"
#include "turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Everything one chat request works with. */
struct chat {
    const struct config *cfg;
    struct gemini *g;
    struct arena *a;
    json_t *tool_defs;    /* borrowed from the body; may be NULL */
    json_t *contents;     /* the history being built (references) */
    json_t *server_calls; /* [{name, args, ok, ms}] */
    const char *model;    /* modelVersion of the last answer, or NULL */
    struct gemini_usage usage;
    long prompt_tokens, candidates_tokens, thoughts_tokens, cached_tokens,
        total_tokens;
    bool truncated_history;
};

/* --- small helpers ---------------------------------------------------------- */

static long
now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int
oom(struct status_error *err)
{
    return status_set(err, ST_NO_MEMORY, "out of memory");
}

/* The page-tool call ids of the browser protocol (see the file comment). */
static const char *
call_id(struct arena *a, const json_t *call, size_t turn, size_t part)
{
    const char *id = json_string_value(json_object_get(call, "id"));
    return id ? id : arena_printf(a, "call_%zu_%zu", turn, part);
}

/* Does the browser run this call? Only page tools it declared do; the
 * server answers everything else (actions, and unknown names with an
 * error, so the model can correct itself). */
static bool
is_page_call(const struct chat *c, const char *name)
{
    return strncmp(name, "action_", 7) != 0 &&
           toolbridge_page_tool(c->tool_defs, name) != NULL;
}

static json_t *
function_response(const json_t *call, json_t *response)
{
    json_t *id = json_object_get(call, "id");
    /* Echo Gemini's id only when it sent one; never invent one. */
    return json_pack("{s:{s:O, s:O*, s:o}}", "functionResponse", "name",
                     json_object_get(call, "name"), "id",
                     json_is_string(id) ? id : NULL, "response", response);
}

/* The `response` of a call that failed; the model reads `msg`. */
static json_t *
error_response(const char *msg)
{
    return json_pack("{s:s}", "error", msg ? msg : "failed");
}

/* --- server calls ------------------------------------------------------------ */

/* Run one call the server answers; returns the `response` object. */
static json_t *
run_server_call(struct chat *c, const json_t *call)
{
    const char *fn = json_string_value(json_object_get(call, "name"));
    const struct plugin_action *act = plugin_find_fn(c->cfg->plugins, fn);
    json_t *args = json_object_get(call, "args"), *out = NULL;
    struct status_error err = {0};
    long t0 = now_ms();
    int rc;

    if (act == NULL)
        return error_response(arena_printf(c->a,
                                           "unknown function '%s': call only "
                                           "the functions you were given",
                                           fn));
    if (args == NULL)
        args = arena_take_json(c->a, json_object());
    rc = action_run(c->cfg, act, args, c->a, &out, &err);
    json_array_append_new(
        c->server_calls,
        json_pack("{s:s, s:O, s:b, s:I}", "name", act->name, "args", args,
                  "ok", rc == 0, "ms", (json_int_t)(now_ms() - t0)));
    if (rc == 0)
        return json_pack("{s:O}", "result", out);
    if (err.code == ST_SCHEMA)
        return error_response(arena_printf(c->a,
                                           "invalid arguments: %s; the "
                                           "action did not run",
                                           err.text));
    return error_response(err.text);
}

/* --- the pending turn ----------------------------------------------------------- */

/*
 * The last model turn's calls and what is known of their answers: a
 * model turn with calls that ends the history, optionally followed by a
 * user turn holding the answers the server already gave (a mixed turn).
 */
struct pending {
    size_t model;      /* index of the model turn in the received history */
    json_t *calls;     /* the functionCall parts' parent parts (borrowed) */
    json_t *partial;   /* the server's answers so far, or NULL */
    bool any;
};

static void
find_pending(json_t *history, struct pending *p)
{
    size_t n = json_array_size(history), i;
    json_t *last, *parts, *part;

    memset(p, 0, sizeof(*p));
    if (n == 0)
        return;
    last = json_array_get(history, n - 1);
    i = n - 1;
    if (strcmp(json_string_value(json_object_get(last, "role")), "user") == 0) {
        /* a partial answer only counts right after a model call turn */
        if (n < 2)
            return;
        p->partial = json_object_get(last, "parts");
        i = n - 2;
    }
    json_t *model = json_array_get(history, i);
    if (strcmp(json_string_value(json_object_get(model, "role")), "model") != 0)
        return;
    parts = json_object_get(model, "parts");
    size_t k, ncalls = 0;
    json_array_foreach(parts, k, part) {
        ncalls += json_object_get(part, "functionCall") != NULL;
    }
    if (ncalls == 0)
        return;
    /* A complete answer turn is not pending. */
    if (p->partial != NULL && json_array_size(p->partial) == ncalls)
        return;
    p->model = i;
    p->calls = parts;
    p->any = true;
}

/* Is `part` the functionResponse to `call` (same name; same id when the
 * call had one)? */
static bool
answers_call(const json_t *part, const json_t *call)
{
    const json_t *fr = json_object_get(part, "functionResponse");
    const json_t *id = json_object_get(call, "id");
    const char *name = json_string_value(json_object_get(fr, "name"));

    return name != NULL &&
           strcmp(name, json_string_value(json_object_get(call, "name"))) ==
               0 &&
           (id == NULL || json_equal(id, json_object_get(fr, "id")));
}

/* The browser's result for one call: {"result": v} or {"error": v}. */
static json_t *
browser_response(const json_t *r)
{
    json_t *v = json_object_get(r, "result");
    json_t *parsed = NULL;

    /* Results usually come as JSON text; send the value, not the text. */
    if (json_is_string(v)) {
        struct status_error ignored = {0};
        parsed = jsonin_decode(json_string_value(v), json_string_length(v),
                               BOUND_JSON_DEPTH, &ignored);
    }
    return json_pack("{s:o}", json_is_true(json_object_get(r, "isError"))
                                  ? "error"
                                  : "result",
                     parsed ? parsed : json_incref(v ? v : json_null()));
}

/*
 * Answer the pending calls in call order: the server's answers from the
 * partial turn, the browser's from `results` (NULL: the visitor moved on,
 * so page calls get an error saying they did not run). Replaces the
 * partial turn with the complete one in c->contents.
 */
static int
answer_pending(struct chat *c, const struct pending *p, json_t *results,
               struct status_error *err)
{
    json_t *parts = json_array(), *part;
    size_t k, next_partial = 0, used = 0;

    if (parts == NULL || !arena_take_json(c->a, parts))
        return oom(err);
    json_array_foreach(p->calls, k, part) {
        json_t *call = json_object_get(part, "functionCall");
        const char *name;
        json_t *resp = NULL;

        if (call == NULL)
            continue;
        name = json_string_value(json_object_get(call, "name"));
        /* Answered by the server when the turn ran? The partial turn says
         * so (history_check made sure it follows call order); the page
         * may since have lost the tool, so names cannot tell. */
        json_t *given = json_array_get(p->partial, next_partial);
        if (answers_call(given, call)) {
            next_partial++;
            if (json_array_append(parts, given) != 0)
                return oom(err);
            continue;
        }
        if (results == NULL) {
            resp = error_response("not run: the visitor sent a new message "
                                  "instead");
        } else {
            const char *id = call_id(c->a, call, p->model, k);
            size_t i;
            json_t *r;
            json_array_foreach(results, i, r) {
                const char *cid =
                    json_string_value(json_object_get(r, "callId"));
                if (cid != NULL && strcmp(cid, id) == 0) {
                    resp = browser_response(r);
                    used++;
                    break;
                }
            }
            if (resp == NULL)
                return status_set(err, ST_BAD_REQUEST,
                                  "results: no result for the call '%s' "
                                  "(%s)",
                                  id, name);
        }
        if (json_array_append_new(parts, function_response(call, resp)) != 0)
            return oom(err);
    }
    if (results != NULL && used != json_array_size(results))
        return status_set(err, ST_BAD_REQUEST,
                          "results: %zu of them name no waiting call (or "
                          "name one twice)",
                          json_array_size(results) - used);
    json_t *turn = json_pack("{s:s, s:O}", "role", "user", "parts", parts);
    if (turn == NULL)
        return oom(err);
    /* the partial turn, if any, is the last one: replace it */
    if (p->partial != NULL)
        json_array_remove(c->contents, json_array_size(c->contents) - 1);
    return json_array_append_new(c->contents, turn) == 0 ? 0 : oom(err);
}

/* --- request decoding ------------------------------------------------------------ */

struct chat_input {
    const char *message;
    json_t *history, *tool_defs, *page_state, *results;
};

static int
decode(enum chat_kind kind, json_t *body, struct chat_input *in,
       struct status_error *err)
{
    json_error_t jerr;
    int rc;

    memset(in, 0, sizeof(*in));
    if (kind == CHAT_SEND_MESSAGE)
        rc = json_unpack_ex(body, &jerr, JSON_STRICT, "{s:s, s?o, s?o, s?o}",
                            "message", &in->message, "history", &in->history,
                            "toolDefinitions", &in->tool_defs, "pageState",
                            &in->page_state);
    else
        rc = json_unpack_ex(body, &jerr, JSON_STRICT, "{s:o, s:o, s?o, s?o}",
                            "results", &in->results, "history", &in->history,
                            "toolDefinitions", &in->tool_defs, "pageState",
                            &in->page_state);
    if (rc != 0)
        return status_set(err, ST_BAD_REQUEST, "the request body: %s",
                          jerr.text);
    if (in->message != NULL && in->message[0] == '\0')
        return status_set(err, ST_BAD_REQUEST, "message must not be empty");
    if (in->history != NULL && !json_is_array(in->history))
        return status_set(err, ST_INVALID_HISTORY, "history must be an array");
    if (in->results != NULL) {
        size_t i;
        json_t *r;
        if (!json_is_array(in->results))
            return status_set(err, ST_BAD_REQUEST, "results must be an array");
        json_array_foreach(in->results, i, r) {
            json_t *id, *res;
            int is_error = 0;
            if (json_unpack_ex(r, &jerr, 0, "{s:o, s?o, s?b}", "callId", &id,
                               "result", &res, "isError", &is_error) != 0 ||
                !json_is_string(id))
                return status_set(err, ST_BAD_REQUEST,
                                  "results[%zu] must be {callId, result, "
                                  "isError}",
                                  i);
        }
    }
    return 0;
}

/* --- the answer ------------------------------------------------------------------- */

static json_t *
usage_json(const struct chat *c)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:i}", "promptTokens",
                     (json_int_t)c->prompt_tokens, "candidatesTokens",
                     (json_int_t)c->candidates_tokens, "thoughtsTokens",
                     (json_int_t)c->thoughts_tokens, "cachedTokens",
                     (json_int_t)c->cached_tokens, "totalTokens",
                     (json_int_t)c->total_tokens, "geminiCalls",
                     c->usage.calls);
}

/* The common members of every answer; `type` and the rest added by the
 * caller. */
static json_t *
answer_base(struct chat *c, const char *type, const char *message)
{
    json_t *ans = json_pack("{s:s, s:s*, s:O, s:o, s:O, s:s*}", "type", type,
                            "message", message, "history", c->contents,
                            "usage", usage_json(c), "serverCalls",
                            c->server_calls, "model", c->model);
    if (ans != NULL && c->truncated_history)
        json_object_set_new(ans, "historyTruncated", json_true());
    return arena_take_json(c->a, ans);
}

/* The page calls of the last model turn, for the browser. */
static json_t *
page_calls(struct chat *c, const struct turn *t, size_t turn_index)
{
    json_t *calls = json_array();

    for (size_t i = 0; calls != NULL && i < t->ncalls; i++) {
        const struct turn_call *tc = &t->calls[i];
        const json_t *def;
        json_t *call = json_object_get(
            json_array_get(json_object_get(t->content, "parts"), tc->part),
            "functionCall");
        if (!is_page_call(c, tc->name))
            continue;
        def = toolbridge_page_tool(c->tool_defs, tc->name);
        json_array_append_new(
            calls, json_pack("{s:s, s:s, s:O, s:O*}", "id",
                             call_id(c->a, call, turn_index, tc->part),
                             "name", tc->name, "args", tc->args, "category",
                             json_object_get(def, "category")));
    }
    return calls;
}

/* --- one request, top to bottom ---------------------------------------------------- */

int
chat_handle(const struct config *cfg, struct gemini *g, struct arena *a,
            enum chat_kind kind, json_t *body, json_t **answer,
            struct status_error *err)
{
    struct chat c = {.cfg = cfg, .g = g, .a = a};
    struct chat_input in;
    struct pending pend;
    json_t *request = NULL, *tools;
    char *system, *payload;
    size_t keep, sent_turns;
    bool retried_malformed = false;

    *answer = NULL;
    /* 1: decode: the shape of the body */
    if (decode(kind, body, &in, err) != 0)
        return -1;
    c.tool_defs = in.tool_defs;

    /* 2: bound and check what the browser sent */
    if (toolbridge_check(in.tool_defs, cfg->limits.max_tools, err) != 0)
        return -1;
    if (in.history != NULL &&
        history_check(in.history, HISTORY_ALLOW_PENDING, err) != 0)
        return -1;
    c.contents = arena_take_json(a, json_array());
    c.server_calls = arena_take_json(a, json_array());
    if (c.contents == NULL || c.server_calls == NULL ||
        (in.history && json_array_extend(c.contents, in.history) != 0))
        return oom(err);

    /* 3: the new turn: the browser's results, or the visitor's message
     * (which first closes any calls left waiting) */
    find_pending(c.contents, &pend);
    if (kind == CHAT_SUBMIT_RESULTS && !pend.any)
        return status_set(err, ST_BAD_REQUEST,
                          "there are no tool calls waiting for results at "
                          "the end of history");
    if (pend.any &&
        answer_pending(&c, &pend, kind == CHAT_SUBMIT_RESULTS ? in.results
                                                             : NULL,
                       err) != 0)
        return -1;
    sent_turns = json_array_size(c.contents);
    if (kind == CHAT_SEND_MESSAGE &&
        json_array_append_new(c.contents,
                              json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                        "parts", "text", in.message)) != 0)
        return oom(err);
    keep = history_trim_start(c.contents,
                              (size_t)cfg->limits.max_history_turns);
    if (keep > 0) {
        json_t *trimmed = arena_take_json(a, json_array());
        if (trimmed == NULL)
            return oom(err);
        for (size_t i = keep; i < json_array_size(c.contents); i++)
            json_array_append(trimmed, json_array_get(c.contents, i));
        c.contents = trimmed;
        sent_turns = sent_turns > keep ? sent_turns - keep : 0;
        c.truncated_history = true;
    }

    /* 4: prompt + declarations, built once for every step */
    system = prompt_system(cfg, in.tool_defs, in.page_state, a, err);
    if (system == NULL)
        return -1;
    tools = toolbridge_tools(cfg->plugins, in.tool_defs, a);
    request = arena_take_json(
        a, json_pack("{s:{s:[{s:s}]}, s:O, s:O*}", "systemInstruction",
                     "parts", "text", system, "contents", c.contents, "tools",
                     tools));
    if (request == NULL)
        return oom(err);

    for (long step = 0;; step++) {
        struct turn t;
        json_t *resp = NULL, *answers;
        size_t npage = 0, model_index;
        int rc;

        if (step == cfg->limits.max_loop_steps) {
            /* 7: out of steps: say so rather than loop on */
            *answer = answer_base(&c, "response",
                                  "I stopped before finishing: this request "
                                  "reached its limit of steps. Ask me to "
                                  "continue if you want me to go on.");
            if (*answer == NULL)
                return oom(err);
            json_object_set_new(*answer, "stopReason", json_string("max_steps"));
            return 0;
        }
        /* 5: Gemini */
        payload = json_dumps(request, APP_JSON_FLAGS);
        if (payload == NULL)
            return oom(err);
        rc = gemini_generate(g, cfg, payload, strlen(payload), a, &resp,
                             &c.usage, err);
        free(payload);
        if (rc != 0 || turn_parse(resp, a, &t, err) != 0)
            return -1;
        /* Which model answered (an alias may name another); the page
         * shows it, e.g. to say it is talking to the offline demo model. */
        if (json_is_string(json_object_get(resp, "modelVersion")))
            c.model = json_string_value(json_object_get(resp, "modelVersion"));
        c.prompt_tokens += t.prompt_tokens;
        c.candidates_tokens += t.candidates_tokens;
        c.thoughts_tokens += t.thoughts_tokens;
        c.cached_tokens += t.cached_tokens;
        c.total_tokens += t.total_tokens;

        if (t.end == TURN_BLOCKED) {
            /* Keep the blocked message out of the history, or every
             * later request would be blocked again. */
            while (json_array_size(c.contents) > sent_turns)
                json_array_remove(c.contents, json_array_size(c.contents) - 1);
            char *msg = arena_printf(a,
                                     "Gemini declined to answer this (%s). "
                                     "Try rephrasing your request.",
                                     t.reason[0] ? t.reason : "blocked");
            *answer = answer_base(&c, "blocked", msg);
            return *answer ? 0 : oom(err);
        }
        if (t.end == TURN_MALFORMED) {
            /* Nothing may run; the same request usually works again. */
            if (!retried_malformed) {
                retried_malformed = true;
                continue;
            }
            return status_set(err, ST_UPSTREAM_BAD,
                              "Gemini produced an invalid function call "
                              "twice (%s); try rephrasing",
                              t.reason);
        }
        model_index = json_array_size(c.contents);
        if (t.content != NULL &&
            json_array_append(c.contents, t.content) != 0)
            return oom(err);
        if (t.ncalls == 0) {
            const char *text = t.text[0] ? t.text
                               : t.end == TURN_TRUNCATED
                                   ? "The answer was cut off before any "
                                     "text (the output limit was reached)."
                                   : "The model returned an empty answer.";
            *answer = answer_base(&c, "response", text);
            if (*answer == NULL)
                return oom(err);
            if (t.end == TURN_TRUNCATED)
                json_object_set_new(*answer, "truncated", json_true());
            return 0;
        }

        /* 6: server calls run now; page calls go to the browser */
        answers = arena_take_json(a, json_array());
        if (answers == NULL)
            return oom(err);
        for (size_t i = 0; i < t.ncalls; i++) {
            json_t *call = json_object_get(
                json_array_get(json_object_get(t.content, "parts"),
                               t.calls[i].part),
                "functionCall");
            if (is_page_call(&c, t.calls[i].name)) {
                npage++;
                continue;
            }
            if (json_array_append_new(
                    answers,
                    function_response(call, run_server_call(&c, call))) != 0)
                return oom(err);
        }
        if (json_array_size(answers) > 0 &&
            json_array_append_new(c.contents,
                                  json_pack("{s:s, s:O}", "role", "user",
                                            "parts", answers)) != 0)
            return oom(err);
        if (npage == 0)
            continue; /* every call was the server's: straight back */
        *answer = answer_base(&c, "tool-calls", t.text[0] ? t.text : NULL);
        if (*answer == NULL ||
            json_object_set_new(*answer, "calls",
                                page_calls(&c, &t, model_index)) != 0)
            return oom(err);
        return 0;
    }
}
