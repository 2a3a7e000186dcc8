/*
 * chat.c - the browser chat protocol: geminiAgent.sendMessage and
 * geminiAgent.submitToolResults (see chat.h), as a caller of the loop.
 *
 * chat_handle() is the map of a chat request: decode -> bound -> the new
 * turn -> prompt + declarations -> the loop -> the answer. The history is
 * never copied: `contents` holds references to the turns the browser sent
 * and to the parts Gemini returned, so thought signatures and fields we
 * do not know go back exactly as they came.
 *
 * The loop reports to the chat sink (below), which gathers what the one
 * JSON answer needs: the server calls that ran, the usage, which model
 * answered, and how the loop ended.
 *
 * Call ids: the browser needs a handle per page call. It is Gemini's own
 * functionCall.id when there is one, else "call_<turn>_<part>" from the
 * call's position in the history the browser holds - unique within the
 * conversation, and derivable again when the results come back, so the
 * server needs no session.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chat.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "http/bounds.h"
#include "core/config.h"
#include "agent/convkey.h"
#include "agent/history.h"
#include "gemini/gemini.h"
#include "core/jscan.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "core/jsonin.h"
#include "agent/loop.h"
#include "registry/action.h"
#include "registry/jschema.h"
#include "registry/permission.h"
#include "registry/plugin.h"
#include "registry/question.h"
#include "agent/prompt.h"
#include "agent/seal.h"
#include "http/ndjson.h"
#include "http/site.h"
#include "core/status.h"
#include "store/store.h"
#include "agent/toolbridge.h"
#include "agent/turn.h"
#include "core/utf8.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

/* Everything one chat request works with. */
struct chat {
    struct arena *a;
    /* what a later request carries of the history (turn.h) */
    const struct turn_bounds *bounds;
    struct toolbridge_page page; /* the page's tools, read from the body */
    json_t *contents;  /* the history being built (references) */
    size_t kept_turns; /* turns that stay when Gemini blocks the request */
    bool truncated_history;
    size_t trim_start; /* the browser's turns cut from the front */
    /* the text in the body of contents[0..ntexts): turns as the browser
     * sent them, copied into the request and the answer, not rewritten */
    struct loop_text *texts;
    size_t ntexts;
    /* gathered by the sink */
    json_t *server_calls; /* [{name, args, ok, ms}] */
    json_t *page_calls;   /* [{id, name, args, category}] */
    struct loop_usage usage;
    const char *model; /* modelVersion of the last answer, or NULL */
    json_t *answer;    /* built when the loop is done */
    /* a streamed answer: the events go out as they happen (NULL: one
     * JSON answer at the end) */
    struct ndjson *stream;
    const struct plugin_set *actions;
    struct gemini *g;
    bool (*gone)(void *ctx); /* the request's own hang-up check */
    void *gone_ctx;
    /* approvals (issue 12 §1) and signatures (§2), see agent/seal.h */
    const struct site *site;
    struct store **store;   /* the thread's store, opened on use */
    struct seal_key key;    /* the site secret; len 0: none */
    json_t *approvals;      /* [{id, fn, args, turn, part}] waiting for the
                             * visitor, in call order */
    /* the first question waiting for the visitor's answer (a tool that
     * asks, plugin.h's GEMINI_AGENT_ASK_USER): {id, tool, questions}, or
     * NULL; see the questions section below */
    json_t *question;
    const json_t *sigs_in;  /* the request's `signatures`, or NULL */
    size_t sigs_reuse;      /* contents[0..sigs_reuse) keep those
                             * (verified) signatures */
    /* the conversation's key (agent/convkey.h): the token the answer
     * carries, and who runs the server actions (no user: the widget) */
    const char *conv_token;
    struct action_who who;
};

/* config.c reads history.allowParts into these bits; it cannot include
 * agent/history.h, so the values are held equal here. */
_Static_assert(HISTORY_PARTS_INLINE == 1 << 0 && HISTORY_PARTS_FILE == 1 << 1 &&
                   HISTORY_PARTS_CODE == 1 << 2 &&
                   HISTORY_PARTS_THOUGHT == 1 << 3,
               "history.allowParts bits differ between config.c and history.h");

/* The answer types, as chat_answer_types names them. */
enum answer_type {
    ANSWER_RESPONSE,
    ANSWER_TOOL_CALLS,
    ANSWER_BLOCKED,
    ANSWER_APPROVAL,
    ANSWER_QUESTION,
};

const char *const chat_answer_types[] = {
    [ANSWER_RESPONSE] = "response",
    [ANSWER_TOOL_CALLS] = "tool-calls",
    [ANSWER_BLOCKED] = "blocked",
    [ANSWER_APPROVAL] = "approval-required",
    [ANSWER_QUESTION] = "question",
    NULL,
};

/* --- small helpers ----------------------------------------------------- */

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

/* Is `act` named in the site's policy.actions with `approval: never`? */
static bool
approval_never(const struct chat *c, const struct plugin_action *act)
{
    for (char *const *name = c->site->cfg->run.approval_never; name && *name;
         name++)
        if (strcmp(*name, act->name) == 0)
            return true;
    return false;
}

/*
 * Run `act` with `args`, ask the visitor, or refuse? The permission
 * engine decides (registry/permission.h) on the site's policy
 * (plugins.config.permission; absent: default ask, no entries). An
 * action without side effects, one its plugin auto-approves and one
 * policy.actions says `approval: never` for are allowed unless a deny
 * entry matches: the engine's auto-approved step, which deny beats. So
 * without a policy it is as it always was: side effects ask, the rest
 * run. The kill switch (policy.sideEffects: false) is the caller's, and
 * wins over all of this.
 */
static enum permission_verdict
chat_verdict(const struct chat *c, const struct plugin_action *act,
             const json_t *args, struct permission_decision *why)
{
    static const struct permission_policy none = {PERMISSION_ASK, NULL,
                                                  NULL};
    const char *unasked[2] = {NULL, NULL};
    struct permission_call pc = {act->name, args};

    if (!act->side_effects || act->auto_approved || approval_never(c, act))
        unasked[0] = act->name;
    return permission_decide(c->site->has_permission ? &c->site->permission
                                                     : &none,
                             unasked, &pc, why);
}

/* The words the model reads for a call the permission policy denies. */
static json_t *
denied_response(struct arena *a, const struct permission_decision *why)
{
    return arena_take_json(
        a, json_pack("{s:s}", "error",
                     arena_printf(a, "not run: the site's permission "
                                     "policy denies this call (%s)",
                                  why->reason)));
}

/* The words the model reads for a side effect the site switched off. */
#define SWITCHED_OFF                                                           \
    "not run: actions with side effects are switched off on this site "     \
    "(policy.sideEffects)"

/* ...and for one that needs the visitor's approval on a site that cannot
 * sign the ticket (history.verify: off and no auth.secretFile). */
#define NO_TICKETS                                                             \
    "not run: this action needs the visitor's approval, and this site has "  \
    "no auth.secretFile to sign it with"

/* Who answers this call? The browser runs the page tools it declared and
 * decides on actions with side effects (they wait for its approval); the
 * server answers everything else (actions, and unknown names with an
 * error, so the model can correct itself). */
static int
decide_call(void *ctx, const struct loop_call *lc, struct loop_result *r,
            struct status_error *err)
{
    const struct chat *c = ctx;
    const struct plugin_action *act;
    struct permission_decision why;

    if (!plugin_is_fn_name(lc->name))
        return toolbridge_page_find(&c->page, lc->name) != NULL
                   ? LOOP_HAND_BACK
                   : LOOP_RUN_IT;
    act = plugin_find_fn(c->actions, lc->name);
    if (act != NULL && act->side_effects && !c->site->cfg->run.side_effects) {
        r->action = act->name;
        r->response = arena_take_json(
            c->a, json_pack("{s:s}", "error", SWITCHED_OFF));
        return r->response ? LOOP_ANSWER_IT : oom(err);
    }
    if (act == NULL) /* the loop tells the model there is no such tool */
        return LOOP_RUN_IT;
    switch (chat_verdict(c, act, lc->args, &why)) {
    case PERMISSION_ALLOW:
        return LOOP_RUN_IT;
    case PERMISSION_DENY:
        r->action = act->name;
        r->response = denied_response(c->a, &why);
        return r->response ? LOOP_ANSWER_IT : oom(err);
    case PERMISSION_ASK:
        break;
    }
    if (c->key.len == 0) { /* no secret to sign a ticket with */
        r->action = act->name;
        r->response = arena_take_json(
            c->a, json_pack("{s:s}", "error", NO_TICKETS));
        return r->response ? LOOP_ANSWER_IT : oom(err);
    }
    return LOOP_HAND_BACK;
}

/* --- the pending turn -------------------------------------------------- */

/*
 * The last model turn's calls and what is known of their answers: a
 * model turn with calls that ends the history, optionally followed by a
 * user turn holding the answers the server already gave (a mixed turn).
 */
struct pending {
    size_t model;    /* index of the model turn in the received history */
    json_t *calls;   /* the functionCall parts' parent parts (borrowed) */
    json_t *partial; /* the server's answers so far, or NULL */
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

/* The browser's result for one call: {"result": v} or {"error": v}; or
 * an error saying the result was not kept when it nests deeper than a
 * functionResponse's `response` may in a later request (`b`). */
static int
browser_response(const json_t *r, const struct turn_bounds *b, json_t **resp,
                 struct status_error *err)
{
    json_t *v = json_object_get(r, "result");
    json_t *parsed = NULL;

    /* Results usually come as JSON text; send the value, not the text
     * (text that is not JSON goes as it is). */
    if (json_is_string(v)) {
        struct status_error not_json = {0};
        parsed = jsonin_decode(json_string_value(v), json_string_length(v),
                               BOUND_JSON_DEPTH, &not_json);
        if (not_json.code == ST_NO_MEMORY)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    *resp = json_pack("{s:o}",
                      json_is_true(json_object_get(r, "isError")) ? "error"
                                                                  : "result",
                      parsed ? parsed : json_incref(v ? v : json_null()));
    /* part, functionResponse, response */
    if (*resp != NULL && b != NULL && b->depth > 2 &&
        !turn_depth_fits(*resp, b->depth - 2)) {
        json_decref(*resp);
        *resp = json_pack("{s:s}", "error",
                          "the page answered, but its result nests deeper "
                          "than a conversation can keep; it is not shown");
    }
    return *resp ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
}

/* The visitor's decision on one waiting call (submitToolResults'
 * `approval`). */
struct chat_approval {
    const char *id, *ticket;
    bool approve;
};

/* Milliseconds since the epoch: tickets expire by the wall clock, which
 * every worker and host agrees on. */
static long long
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Remember a call that waits for the visitor (see struct chat). */
static int
add_waiting(struct chat *c, const char *id, const json_t *call, size_t turn,
            size_t part, struct status_error *err)
{
    json_t *args = json_object_get(call, "args");
    /* "o" takes the reference, also when the pack fails */
    json_t *w = json_pack("{s:s, s:O, s:o, s:I, s:I}", "id", id, "fn",
                          json_object_get(call, "name"), "args",
                          args ? json_incref(args) : json_object(), "turn",
                          (json_int_t)turn, "part", (json_int_t)part);

    return json_array_append_new(c->approvals, w) == 0 ? 0 : oom(err);
}

/*
 * The visitor decided on the waiting call history[turn].parts[part]: the
 * ticket must verify against the history as sent, be in time, and be
 * used for the first time (the store keeps used ids until they expire).
 * Then the action runs (approve) or the model hears it was declined.
 * *resp is a new reference.
 */
static int
decide_waiting(struct chat *c, const json_t *call, const char *id,
               size_t turn, size_t part, const struct chat_approval *ap,
               json_t **resp, struct status_error *err)
{
    const char *fn = json_string_value(json_object_get(call, "name"));
    const struct plugin_action *act = plugin_find_fn(c->actions, fn);
    json_t *args = json_object_get(call, "args");
    struct loop_call lc = {fn, args, call, turn, part};
    struct loop_result r = {0};
    char tid[TOKEN_MAC_SIZE];
    long long now = wall_ms(), exp;
    struct permission_decision why;
    enum permission_verdict v = PERMISSION_ASK;

    /* Re-judged now: a policy that denies since the card was shown
     * refuses (below, once the ticket is known to be genuine); one that
     * allows means the call waits for no one, as before the engine. */
    if (act == NULL ||
        (v = chat_verdict(c, act, args, &why)) == PERMISSION_ALLOW)
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval names a call that does not wait "
                          "for one");
    if (args == NULL && (args = arena_take_json(c->a, json_object())) == NULL)
        return oom(err);
    lc.args = args;
    struct seal_call sc = {act->name, args, id, turn, part};
    if (seal_ticket_check(&c->key, c->contents, &sc, ap->ticket, now, tid, &exp,
                          err) != 0)
        return -1;
    if (*c->store == NULL &&
        (*c->store = store_open_migrated(c->site->cfg->run.store, err)) ==
            NULL)
        return -1;
    if (store_ticket_claim(*c->store, tid, exp, now, err) != 0) {
        if (err->code != ST_CONFLICT)
            return -1;
        memset(err, 0, sizeof(*err));
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval has been used already");
    }
    if (v == PERMISSION_DENY) { /* the policy changed since it asked */
        *resp = json_incref(denied_response(c->a, &why));
        return *resp ? 0 : oom(err);
    }
    if (!ap->approve) {
        *resp = json_pack("{s:s}", "error", "the user declined this action");
        return *resp ? 0 : oom(err);
    }
    if (!c->site->cfg->run.side_effects) {
        *resp = json_pack("{s:s}", "error", SWITCHED_OFF);
        return *resp ? 0 : oom(err);
    }
    if (c->stream != NULL &&
        ndjson_tool_call(c->stream, act->name, args, false, NULL, err) != 0)
        return -1;
    if (loop_run_action(&c->site->cfg->actions, act, &c->who, &lc, c->a, &r,
                        err) != 0)
        return -1;
    if (json_array_append_new(c->server_calls,
                              json_pack("{s:s, s:O, s:b, s:I}", "name",
                                        act->name, "args", args, "ok", r.ok,
                                        "ms", (json_int_t)r.ms)) != 0)
        return oom(err);
    if (c->stream != NULL &&
        ndjson_tool_result(c->stream, act->name, r.ok, r.ms, err) != 0)
        return -1;
    *resp = json_incref(UNCONST(r.response));
    return 0;
}

/* --- questions: a tool that asks the visitor (registry/question.h) ---- */

/*
 * The loop ran the call and its tool asked (loop_result.asks): the call
 * stays unanswered in the history, like one waiting for approval, and
 * the answer says "question". A call is known as one again by what it is:
 * a plugin's tool the verdict lets run unasked, yet unanswered, since the
 * loop answers every other call it runs. Its questions are asked again of
 * the tool (question tools keep no state: clarification's are the
 * model's arguments, normalised) and the visitor's answers are checked
 * against those, never against anything the browser sends.
 */

/* The words the model reads for a question the visitor left. */
#define NOT_ANSWERED                                                           \
    "not answered: the user sent a new message instead"

/* The visitor's answer to a waiting question (submitToolResults'
 * `answer`). */
struct chat_answer {
    const char *id;
    const json_t *answers;
};

/* Is the unanswered call `call` one whose tool asked the visitor? */
static bool
question_call(const struct chat *c, const json_t *call)
{
    const struct plugin_action *act = plugin_find_fn(
        c->actions, json_string_value(json_object_get(call, "name")));
    const json_t *args = json_object_get(call, "args");
    struct permission_decision why;

    if (act == NULL || act->so == NULL)
        return false;
    /* as the loop judged it: a call without args had {} */
    if (args == NULL && (args = arena_take_json(c->a, json_object())) == NULL)
        return false; /* out of memory: it waits as an approval, refused */
    return chat_verdict(c, act, args, &why) == PERMISSION_ALLOW;
}

/* The questions of the waiting call `call`, asked of its tool again:
 * pinned to the arena. A call whose tool no longer asks is the browser's
 * mistake (or a changed site): 400. */
static int
ask_again(struct chat *c, const json_t *call, size_t turn, size_t part,
          const json_t **questions, struct status_error *err)
{
    const char *fn = json_string_value(json_object_get(call, "name"));
    const struct plugin_action *act = plugin_find_fn(c->actions, fn);
    json_t *args = json_object_get(call, "args");
    struct loop_call lc = {fn, args, call, turn, part};
    struct loop_result r = {0};

    if (args == NULL && (args = arena_take_json(c->a, json_object())) == NULL)
        return oom(err);
    lc.args = args;
    if (loop_run_action(&c->site->cfg->actions, act, &c->who, &lc, c->a, &r,
                        err) != 0)
        return -1;
    if (!r.asks)
        return status_set(err, ST_BAD_REQUEST,
                          "the call '%s' waits for no answer", fn);
    *questions = r.response;
    return 0;
}

/* Remember the first question waiting for the visitor (struct chat). */
static int
set_question(struct chat *c, const char *id, const char *tool,
             const json_t *q, struct status_error *err)
{
    if (c->question != NULL)
        return 0; /* one card at a time: the next comes after this one */
    c->question = arena_take_json(
        c->a, json_pack("{s:s, s:s, s:O}", "id", id, "tool", tool,
                        "questions", json_object_get(q, "questions")));
    return c->question ? 0 : oom(err);
}

/* The visitor answered the waiting call `call`: the answers are checked
 * against its questions, and become its result. *resp is a new
 * reference. */
static int
answer_question(struct chat *c, const json_t *call, size_t turn, size_t part,
                const struct chat_answer *qa, json_t **resp,
                struct status_error *err)
{
    const json_t *q;
    json_t *answers;

    if (ask_again(c, call, turn, part, &q, err) != 0)
        return -1;
    if ((answers = question_answers(q, qa->answers, err)) == NULL)
        return -1;
    *resp = json_pack("{s:o}", "result", answers);
    return *resp ? 0 : oom(err);
}

/*
 * Answer the pending calls in call order: the answers given so far (the
 * partial turn), the browser's from `results` (NULL: the visitor moved
 * on, so every waiting call gets an error saying it did not run), and the
 * visitor's decision `ap` on the first call that waits for one. Calls
 * that still wait for a decision stay unanswered (in c->approvals). Replaces
 * the partial turn with the new one in c->contents.
 */
static int
answer_pending(struct chat *c, const struct pending *p, json_t *results,
               const struct chat_approval *ap, const struct chat_answer *qa,
               struct status_error *err)
{
    json_t *parts = json_array(), *part;
    size_t k, next_partial = 0, used = 0;
    bool decided = false, first = true, answered = false;

    if (parts == NULL || !arena_take_json(c->a, parts))
        return oom(err);
    json_array_foreach(p->calls, k, part) {
        json_t *call = json_object_get(part, "functionCall");
        const char *name, *id;
        json_t *resp = NULL;

        if (call == NULL)
            continue;
        name = json_string_value(json_object_get(call, "name"));
        /* Answered when the turn ran, or in an earlier decision? The
         * partial turn says so (history_check made sure it follows call
         * order); the page may since have lost the tool, so names cannot
         * tell. */
        json_t *given = json_array_get(p->partial, next_partial);
        if (loop_answers_call(given, call)) {
            next_partial++;
            if (json_array_append(parts, given) != 0)
                return oom(err);
            continue;
        }
        if ((id = call_id(c->a, call, p->model, k)) == NULL)
            return oom(err);
        bool asks = plugin_is_fn_name(name) && question_call(c, call);
        if (results == NULL && ap == NULL && qa == NULL) {
            resp = json_pack("{s:s}", "error",
                             asks ? NOT_ANSWERED
                                  : "not run: the visitor sent a new "
                                    "message instead");
        } else if (asks) {
            /* waits for the visitor's answer: any question may be
             * answered, one per request; the first left waiting is asked */
            const json_t *q;
            if (qa == NULL || answered || strcmp(qa->id, id) != 0) {
                if (c->question == NULL &&
                    (ask_again(c, call, p->model, k, &q, err) != 0 ||
                     set_question(c, id,
                                  plugin_find_fn(c->actions, name)->name, q,
                                  err) != 0))
                    return -1;
                continue;
            }
            if (answer_question(c, call, p->model, k, qa, &resp, err) != 0)
                return -1;
            answered = true;
        } else if (plugin_is_fn_name(name)) {
            /* waits for the visitor: only the first such call can be
             * decided now, so decisions come in call order */
            bool mine = ap != NULL && first && strcmp(ap->id, id) == 0;
            first = false;
            if (!mine) {
                if (add_waiting(c, id, call, p->model, k, err) != 0)
                    return -1;
                continue;
            }
            if (decide_waiting(c, call, id, p->model, k, ap, &resp, err) != 0)
                return -1;
            decided = true;
        } else {
            size_t i;
            json_t *r;
            json_array_foreach(results, i, r) {
                const char *cid =
                    json_string_value(json_object_get(r, "callId"));
                if (cid != NULL && strcmp(cid, id) == 0) {
                    if (browser_response(r, c->bounds, &resp, err) != 0)
                        return -1;
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
        if (resp == NULL ||
            json_array_append_new(parts, loop_answer_part(call, resp)) != 0) {
            json_decref(resp);
            return oom(err);
        }
        json_decref(resp);
    }
    if (ap != NULL && !decided)
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval names no call waiting for it");
    if (qa != NULL && !answered)
        return status_set(err, ST_BAD_REQUEST,
                          "the answer names no question waiting for one "
                          "('%s')",
                          qa->id);
    if (json_array_size(parts) == 0) /* results: [] for an approval */
        return status_set(err, ST_BAD_REQUEST,
                          "the waiting call needs the visitor's decision "
                          "(approval) or answer, not results");
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
        return json_array_set_new(c->contents, json_array_size(c->contents) - 1,
                                  turn) == 0
                   ? 0
                   : oom(err);
    return json_array_append_new(c->contents, turn) == 0 ? 0 : oom(err);
}

/* --- request decoding -------------------------------------------------- */

struct chat_input {
    /* the body's tree, less pageState and toolDefinitions */
    const json_t *body;
    const char *message;
    const char *conversation; /* the key's token (convkey.h), or NULL */
    json_t *history, *results, *signatures;
    struct chat_approval approval;
    bool has_approval;
    struct chat_answer answer;
    bool has_answer;
    /* the page state and the tools stay spans of the body: their nodes,
     * or JSCAN_NONE */
    size_t page_state, tool_defs;
};

static const char *const send_members[] = {
    "message", "history", "signatures", "toolDefinitions", "pageState",
    "conversation", NULL};
static const char *const results_members[] = {
    "results", "approval", "answer", "history", "signatures",
    "toolDefinitions", "pageState", "conversation", NULL};

const char *const *
chat_request_members(enum chat_kind kind)
{
    return kind == CHAT_SEND_MESSAGE ? send_members : results_members;
}

static int
decode(enum chat_kind kind, const struct jscan_doc *doc, struct arena *a,
       struct chat_input *in, struct status_error *err)
{
    json_t *approval = NULL, *answer = NULL;
    json_error_t jerr;
    const char *unknown;
    json_t *body;
    int rc;

    memset(in, 0, sizeof(*in));
    /* Trees for what the request reads; the page state and the tools
     * (most of a large body) are read from the tape and copied into the
     * request, so they never become trees. */
    static const char *const spans[] = {"pageState", "toolDefinitions", NULL};
    size_t nodes[2];

    body = arena_take_json(a, jsonin_tree_except(doc, spans, nodes, a, err));
    if (body == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    in->body = body;
    in->page_state = nodes[0];
    in->tool_defs = nodes[1];
    if (kind == CHAT_SEND_MESSAGE)
        rc = json_unpack_ex(body, &jerr, 0, "{s:s, s?o, s?o, s?s}", "message",
                            &in->message, "history", &in->history,
                            "signatures", &in->signatures, "conversation",
                            &in->conversation);
    else
        rc = json_unpack_ex(body, &jerr, 0, "{s?o, s?o, s?o, s:o, s?o, s?s}",
                            "results", &in->results, "approval", &approval,
                            "answer", &answer, "history", &in->history,
                            "signatures", &in->signatures, "conversation",
                            &in->conversation);
    if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0)
        return status_set(err, ST_BAD_REQUEST, "the request body: %s",
                          jerr.text);
    /* Our own check, not JSON_STRICT: jansson's needs memory for it and
     * reports a failed allocation as a member "left unpacked". */
    unknown = jsonin_unknown_member(body, chat_request_members(kind));
    if (unknown != NULL)
        return status_set(err, ST_BAD_REQUEST,
                          "the request body: unknown member '%s'", unknown);
    if (kind == CHAT_SUBMIT_RESULTS && in->results == NULL &&
        approval == NULL && answer == NULL)
        return status_set(err, ST_BAD_REQUEST,
                          "the request body: results, approval or answer "
                          "is required");
    if (answer != NULL) {
        json_t *answers = NULL;
        rc = json_unpack_ex(answer, &jerr, 0, "{s:s, s:o}", "id",
                            &in->answer.id, "answers", &answers);
        if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        if (rc != 0 || json_object_size(answer) != 2 ||
            !json_is_object(answers))
            return status_set(err, ST_BAD_REQUEST,
                              "answer must be {id, answers: {question id: "
                              "value}}");
        in->answer.answers = answers;
        in->has_answer = true;
    }
    if (in->signatures != NULL && !json_is_array(in->signatures) &&
        !json_is_null(in->signatures))
        return status_set(err, ST_BAD_REQUEST,
                          "signatures must be an array (the one the last "
                          "answer gave)");
    if (approval != NULL) {
        const char *decision = NULL;
        rc = json_unpack_ex(approval, &jerr, 0, "{s:s, s:s, s:s}", "id",
                            &in->approval.id, "ticket", &in->approval.ticket,
                            "decision", &decision);
        if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        if (rc != 0 || json_object_size(approval) != 3 ||
            (strcmp(decision, "approve") != 0 &&
             strcmp(decision, "reject") != 0))
            return status_set(err, ST_BAD_REQUEST,
                              "approval must be {id, ticket, decision: "
                              "approve | reject}");
        in->approval.approve = strcmp(decision, "approve") == 0;
        in->has_approval = true;
    }
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
            rc = json_unpack_ex(r, &jerr, 0, "{s:o, s?o, s?b}", "callId", &id,
                                "result", &res, "isError", &is_error);
            if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
                return status_set(err, ST_NO_MEMORY, "out of memory");
            if (rc != 0 || !json_is_string(id))
                return status_set(err, ST_BAD_REQUEST,
                                  "results[%zu] must be {callId, result, "
                                  "isError}",
                                  i);
        }
    }
    return 0;
}

/*
 * The body against the inputSchema of its action (chat.h), when the site
 * loaded the geminiAgent plugin: the route takes nothing its description
 * does not allow. decode() and the history's checks come first, as their
 * messages say more; this comes before anything runs. The page state and
 * the tools are not in the tree (toolbridge_scan checks the tools).
 *
 * The history is left out: history_check() has already walked every turn
 * with rules stricter than the schema's, and walking a 200-turn history a
 * second time here was a quarter of the whole request's instructions
 * (callgrind, tests/bench/make-request.py large). The schema still sees
 * every other member, and an empty history in its place.
 */
static int
validate_body(const struct site *site, enum chat_kind kind,
              const json_t *body, struct status_error *err)
{
    const struct plugin_action *act = plugin_find(
        site->actions,
        kind == CHAT_SEND_MESSAGE ? CHAT_ACTION_SEND : CHAT_ACTION_SUBMIT);
    struct status_error v = {0};
    json_t *top;
    int rc = 0;

    if (act == NULL || act->input_schema == NULL)
        return 0;
    /* decode() refused other members; this shares their values */
    if ((top = json_object()) == NULL)
        return oom(err);
    for (const char *const *m = chat_request_members(kind); *m && rc == 0;
         m++) {
        json_t *val = json_object_get(body, *m);
        if (val != NULL)
            rc = strcmp(*m, "history") == 0
                     ? json_object_set_new(top, *m, json_array())
                     : json_object_set(top, *m, val);
    }
    if (rc != 0) {
        json_decref(top);
        return oom(err);
    }
    rc = jschema_validate(act->input_schema, top, &v);
    json_decref(top);
    if (rc == 0)
        return 0;
    if (v.code == ST_NO_MEMORY)
        return oom(err);
    return status_set(err,
                      strncmp(v.path, "/history", 8) == 0 ? ST_INVALID_HISTORY
                                                          : ST_BAD_REQUEST,
                      "the request body: %s", v.text);
}

/* --- the chat sink: what the loop reports, gathered for the answer ----- */

static int
sink_tool_call(void *ctx, const struct loop_call *lc, bool handed_back,
               struct status_error *err)
{
    struct chat *c = ctx;
    const struct toolbridge_tool *tool;
    const char *id;
    json_t *call;

    if (!handed_back)
        return 0;
    /* The id and the name as the browser knows them: the turn's index in
     * the history it holds (which has no page state turn), and the tool's
     * own name (it may be declared under another, see toolbridge.h). */
    id = call_id(c->a, lc->call, lc->turn, lc->part);
    if (id == NULL)
        return oom(err);
    if (plugin_is_fn_name(lc->name)) /* an action waiting for approval */
        return add_waiting(c, id, lc->call, lc->turn, lc->part, err);
    tool = toolbridge_page_find(&c->page, lc->name);
    if (tool == NULL) /* decide_call() found it: never */
        return status_set(err, ST_INTERNAL, "page tool '%s' lost", lc->name);
    call = json_pack("{s:s, s:s, s:O}", "id", id, "name", tool->name, "args",
                     UNCONST(lc->args));
    /* not json_pack's "s*", which drops the key when out of memory */
    if (call != NULL && tool->category != NULL &&
        json_object_set_new(call, "category", json_string(tool->category)) !=
            0) {
        json_decref(call);
        call = NULL;
    }
    if (json_array_append_new(c->page_calls, call) != 0)
        return oom(err);
    return 0;
}

static int
sink_tool_result(void *ctx, const struct loop_call *lc,
                 const struct loop_result *r, struct status_error *err)
{
    struct chat *c = ctx;

    if (r->action == NULL) /* no such function: the model was told */
        return 0;
    if (r->asks) { /* the visitor answers it: see the questions section */
        const char *id = call_id(c->a, lc->call, lc->turn, lc->part);
        if (id == NULL || set_question(c, id, r->action, r->response, err))
            return oom(err);
    }
    if (json_array_append_new(c->server_calls,
                              json_pack("{s:s, s:O, s:b, s:I}", "name",
                                        r->action, "args", UNCONST(lc->args),
                                        "ok", r->ok, "ms",
                                        (json_int_t)r->ms)) != 0)
        return oom(err);
    return 0;
}

static int
sink_usage(void *ctx, const struct loop_usage *total, const char *model,
           struct status_error *err)
{
    struct chat *c = ctx;

    (void)err;
    c->usage = *total;
    if (model != NULL) /* the page shows it, e.g. "offline demo model" */
        c->model = model;
    return 0;
}

/* Set `key` to the string `v` when there is one. Not json_pack's "s*":
 * that drops the key silently when the string cannot be allocated. */
static int
set_optional_string(json_t *obj, const char *key, const char *v)
{
    return v == NULL ? 0 : json_object_set_new(obj, key, json_string(v));
}

/* The members every answer has, plus `type` and `message`. */
static json_t *
answer_base(struct chat *c, enum answer_type type, const char *message)
{
    json_t *ans = json_pack("{s:s, s:O, s:o, s:O}", "type",
                            chat_answer_types[type], "history",
                            c->contents, "usage", loop_usage_json(&c->usage),
                            "serverCalls", c->server_calls);

    /* the turns as the server vouches for them, when it has a secret */
    if (ans != NULL && c->key.len > 0) {
        struct status_error err = {0};
        json_t *sigs = seal_sign(&c->key, c->contents, c->sigs_in,
                                 c->sigs_reuse, &err);
        if (sigs == NULL || json_object_set_new(ans, "signatures", sigs) != 0) {
            json_decref(ans);
            return NULL;
        }
    }
    if (ans != NULL &&
        (set_optional_string(ans, "message", message) != 0 ||
         set_optional_string(ans, "conversation", c->conv_token) != 0 ||
         set_optional_string(ans, "model", c->model) != 0 ||
         (c->truncated_history &&
          json_object_set_new(ans, "historyTruncated", json_true()) != 0))) {
        json_decref(ans);
        return NULL;
    }
    return arena_take_json(c->a, ans);
}

/* Add `key: value` to the answer being built; the reference to `value`
 * is taken, also when there is no answer (it could not be built). */
static int
answer_add(struct chat *c, const char *key, json_t *value,
           struct status_error *err)
{
    if (c->answer == NULL) {
        json_decref(value);
        return oom(err);
    }
    return json_object_set_new(c->answer, key, value) == 0 ? 0 : oom(err);
}

/* "<description>: name: value, ...", at most BOUND_PREVIEW_BYTES: what
 * the approval card says will happen. */
static const char *
preview(struct chat *c, const struct plugin_action *act, const json_t *args)
{
    struct sbuf sb;
    const char *key, *text;
    json_t *v;
    bool first = true;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_adds(&sb, act->description ? act->description : act->name);
    json_object_foreach(UNCONST(args), key, v) {
        rc |= sbuf_adds(&sb, first ? " (" : ", ");
        rc |= sbuf_adds(&sb, key);
        rc |= sbuf_adds(&sb, ": ");
        rc |= json_is_string(v) ? sbuf_adds(&sb, json_string_value(v))
                                : jsonout_write(v, &sb);
        first = false;
    }
    if (!first)
        rc |= sbuf_putc(&sb, ')');
    if (rc != 0) {
        sbuf_release(&sb);
        return NULL;
    }
    if (sb.len > BOUND_PREVIEW_BYTES) {
        size_t n = utf8_cut(sb.buf, BOUND_PREVIEW_BYTES - 3);
        sb.len = n;
        if (sbuf_adds(&sb, "...") != 0) {
            sbuf_release(&sb);
            return NULL;
        }
    }
    text = arena_strndup(c->a, sb.buf, sb.len);
    sbuf_release(&sb);
    return text;
}

/* The answer that asks the visitor about the first waiting call: with a
 * ticket bound to the history this answer gives (seal.h). Page calls of
 * the same turn go along in `calls`: the browser runs them first. */
static int
approval_answer(struct chat *c, const char *text, struct status_error *err)
{
    const json_t *w = json_array_get(c->approvals, 0);
    const struct plugin_action *act = plugin_find_fn(
        c->actions, json_string_value(json_object_get(w, "fn")));
    const json_t *args = json_object_get(w, "args");
    long long exp = wall_ms() + c->site->cfg->run.ticket_ttl_ms;
    char ticket[SEAL_TICKET_SIZE];
    const char *words, *reason;
    json_t *approval;

    if (act == NULL) /* decide_call() found it: never */
        return status_set(err, ST_INTERNAL, "waiting action lost");
    struct seal_call sc = {
        act->name, args, json_string_value(json_object_get(w, "id")),
        (size_t)json_integer_value(json_object_get(w, "turn")),
        (size_t)json_integer_value(json_object_get(w, "part"))};
    if (seal_ticket(&c->key, c->contents, &sc, exp, ticket, err) != 0)
        return -1;
    words = preview(c, act, args);
    reason = arena_printf(c->a,
                          "%s changes something on this site, so it runs "
                          "only when you approve it",
                          act->name);
    if (words == NULL || reason == NULL)
        return oom(err);
    approval = json_pack("{s:s, s:s, s:O, s:s, s:s, s:s, s:I}", "id", sc.id,
                         "tool", act->name, "args", UNCONST(args), "reason",
                         reason, "preview", words, "ticket", ticket,
                         "expiresAt", (json_int_t)exp);
    c->answer = answer_base(c, ANSWER_APPROVAL, text);
    if (answer_add(c, "approval", approval, err) != 0)
        return -1;
    return answer_add(c, "calls", json_incref(c->page_calls), err);
}

/* The answer that asks the visitor the waiting question: a card of
 * its questions; page calls of the same turn go along in `calls` (the
 * browser runs them first, and sends their results with the answer). */
static int
question_answer(struct chat *c, const char *text, struct status_error *err)
{
    c->answer = answer_base(c, ANSWER_QUESTION, text);
    if (answer_add(c, "question", json_incref(c->question), err) != 0)
        return -1;
    return answer_add(c, "calls", json_incref(c->page_calls), err);
}

static int
sink_done(void *ctx, enum loop_end end, const struct turn *t,
          struct status_error *err)
{
    struct chat *c = ctx;
    const char *text = t && t->text[0] ? t->text : NULL;

    switch (end) {
    case LOOP_MAX_STEPS:
        c->answer = answer_base(c, ANSWER_RESPONSE,
                                "I stopped before finishing: this request "
                                "reached its limit of steps. Ask me to "
                                "continue if you want me to go on.");
        return answer_add(c, "stopReason", json_string("max_steps"), err);
    case LOOP_BLOCKED:
        /* Keep the visitor's message and this request's turns out of
         * the history, or every later request would be blocked again. */
        while (json_array_size(c->contents) > c->kept_turns)
            json_array_remove(c->contents, json_array_size(c->contents) - 1);
        text = arena_printf(c->a,
                            "Gemini declined to answer this (%s). Try "
                            "rephrasing your request.",
                            t->reason[0] ? t->reason : "blocked");
        c->answer = text ? answer_base(c, ANSWER_BLOCKED, text) : NULL;
        return c->answer ? 0 : oom(err);
    case LOOP_HANDED_BACK:
        if (json_array_size(c->approvals) > 0)
            return approval_answer(c, text, err);
        if (c->question != NULL)
            return question_answer(c, text, err);
        c->answer = answer_base(c, ANSWER_TOOL_CALLS, text);
        return answer_add(c, "calls", json_incref(c->page_calls), err);
    case LOOP_TRUNCATED:
        c->answer = answer_base(c, ANSWER_RESPONSE,
                                text ? text
                                     : "The answer was cut off before any "
                                       "text (the output limit was "
                                       "reached).");
        return answer_add(c, "truncated", json_true(), err);
    case LOOP_ANSWERED:
        break;
    }
    c->answer = answer_base(c, ANSWER_RESPONSE,
                            text ? text
                                 : "The model returned an empty answer.");
    return c->answer ? 0 : oom(err);
}

static const struct loop_sink_ops chat_sink_ops = {
    .tool_call = sink_tool_call,
    .tool_result = sink_tool_result,
    .usage = sink_usage,
    .done = sink_done,
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
    struct chat *c = ctx;

    return ndjson_status(c->stream, names[st], tool, err);
}

static int
stream_delta(void *ctx, const char *text, size_t len,
             struct status_error *err)
{
    struct chat *c = ctx;

    return ndjson_delta(c->stream, text, len, err);
}

static int
stream_tool_call(void *ctx, const struct loop_call *lc, bool handed_back,
                 struct status_error *err)
{
    struct chat *c = ctx;
    const struct plugin_action *act;
    json_t *call;

    if (sink_tool_call(ctx, lc, handed_back, err) != 0)
        return -1;
    if (handed_back && plugin_is_fn_name(lc->name))
        return 0; /* waits for the visitor: the result line asks */
    if (handed_back) {
        /* as the answer's `calls` name it: just gathered */
        call = json_array_get(c->page_calls,
                              json_array_size(c->page_calls) - 1);
        return ndjson_tool_call(
            c->stream, json_string_value(json_object_get(call, "name")),
            lc->args, true, json_string_value(json_object_get(call, "id")),
            err);
    }
    act = plugin_find_fn(c->actions, lc->name);
    return ndjson_tool_call(c->stream, act ? act->name : lc->name, lc->args,
                            false, NULL, err);
}

static int
stream_tool_result(void *ctx, const struct loop_call *lc,
                   const struct loop_result *r, struct status_error *err)
{
    struct chat *c = ctx;

    if (sink_tool_result(ctx, lc, r, err) != 0)
        return -1;
    return ndjson_tool_result(c->stream, r->action ? r->action : lc->name,
                              r->ok, r->ms, err);
}

static int
stream_usage(void *ctx, const struct loop_usage *total, const char *model,
             struct status_error *err)
{
    struct chat *c = ctx;

    if (sink_usage(ctx, total, model, err) != 0)
        return -1;
    return ndjson_usage(c->stream, total, model, err);
}
static const struct loop_sink_ops chat_stream_ops = {
    .status = stream_status,
    .delta = stream_delta,
    .tool_call = stream_tool_call,
    .tool_result = stream_tool_result,
    .usage = stream_usage,
    .done = sink_done,
};

/* While the loop waits (on Gemini, between retries), the transport asks
 * this whether the visitor is gone: a stream also keeps its heartbeat
 * here, and a heartbeat that cannot be written means gone. */
static bool
stream_gone(void *ctx)
{
    struct chat *c = ctx;
    struct status_error err = {0};

    if (ndjson_tick(c->stream, &err) != 0)
        return true;
    return c->gone != NULL && c->gone(c->gone_ctx);
}

/* --- the conversation with the new turn -------------------------------- */

/*
 * The history the browser sent, then the new turn: the browser's results,
 * or the visitor's message (which first closes any calls left waiting),
 * cut to the newest maxHistoryTurns turns.
 */
static int
conversation(struct chat *c, enum chat_kind kind, const struct chat_input *in,
             long max_turns, struct status_error *err)
{
    struct pending pend;
    size_t keep;

    c->contents = arena_take_json(c->a, json_array());
    if (c->contents == NULL ||
        (in->history && json_array_extend(c->contents, in->history) != 0))
        return oom(err);
    find_pending(c->contents, &pend);
    if (kind == CHAT_SUBMIT_RESULTS && !pend.any)
        return status_set(err, ST_BAD_REQUEST,
                          "there are no tool calls waiting for results at "
                          "the end of history");
    if (pend.any &&
        answer_pending(c, &pend,
                       kind == CHAT_SUBMIT_RESULTS ? in->results : NULL,
                       in->has_approval ? &in->approval : NULL,
                       in->has_answer ? &in->answer : NULL, err) != 0)
        return -1;
    c->kept_turns = json_array_size(c->contents);
    if (kind == CHAT_SEND_MESSAGE) {
        /* the plugins' enrichment: what they make of the message is what
         * Gemini reads and the history keeps */
        const char *msg;
        size_t len;
        if (site_enrich_prompt(c->site, c->a, in->message,
                               strlen(in->message), &msg, &len, err) != 0)
            return -1;
        if (json_array_append_new(
                c->contents, json_pack("{s:s, s:[{s:s%}]}", "role", "user",
                                       "parts", "text", msg, len)) != 0)
            return oom(err);
    }
    keep = history_trim_start(c->contents, (size_t)max_turns);
    if (keep == 0)
        return 0;
    json_t *trimmed = arena_take_json(c->a, json_array());
    if (trimmed == NULL)
        return oom(err);
    for (size_t i = keep; i < json_array_size(c->contents); i++)
        if (json_array_append(trimmed, json_array_get(c->contents, i)) != 0)
            return oom(err);
    c->contents = trimmed;
    c->kept_turns = c->kept_turns > keep ? c->kept_turns - keep : 0;
    /* the waiting calls sit where the history the browser gets has them */
    size_t i;
    json_t *w;
    json_array_foreach(c->approvals, i, w) {
        json_t *turn = json_object_get(w, "turn");
        if (json_integer_set(turn, json_integer_value(turn) - (json_int_t)keep))
            return oom(err);
    }
    c->truncated_history = true;
    c->trim_start = keep;
    return 0;
}

/*
 * The texts of the turns that begin `contents` as the browser sent them:
 * the same tree as history[trim_start + j], and compact in the body (as
 * our writer writes it: JSCAN_CANON), so copying the span writes the same
 * bytes. The first turn that is not ends the run. The texts are copied
 * into the request's arena: the body does not outlive the loop's start.
 */
static int
turn_texts(struct chat *c, const struct jscan_doc *body, const json_t *history,
           struct status_error *err)
{
    size_t hist = jscan_member(body, 0, "history"), node, n, j;

    if (history == NULL || jscan_type(body, hist) != JSCAN_ARRAY)
        return 0;
    n = json_array_size(c->contents);
    c->texts = arena_calloc(c->a, n ? n : 1, sizeof(*c->texts));
    if (c->texts == NULL)
        return oom(err);
    node = jscan_child(body, hist);
    for (j = 0; j < c->trim_start && node != JSCAN_NONE; j++)
        node = jscan_next(body, hist, node);
    for (j = 0; j < n && node != JSCAN_NONE;
         j++, node = jscan_next(body, hist, node)) {
        if (json_array_get(c->contents, j) !=
                json_array_get(history, c->trim_start + j) ||
            !(jscan_flags(body, node) & JSCAN_CANON))
            break;
        c->texts[j].p = body->buf + body->nodes[node].off;
        c->texts[j].n = body->nodes[node].len;
    }
    c->ntexts = j;
    /* copied out: the body goes before the loop (chat_handle) */
    for (j = 0; j < c->ntexts; j++)
        if ((c->texts[j].p = arena_strndup(c->a, c->texts[j].p,
                                           c->texts[j].n)) == NULL)
            return oom(err);
    return 0;
}

/* The answer as JSON text: our writer's bytes for c->answer, with the
 * history's turns from the browser copied (loop_write_turns). */
static int
write_answer(const struct chat *c, const char **text, size_t *len,
             struct status_error *err)
{
    struct sbuf sb;
    const char *key;
    json_t *v;
    int rc = 0;
    bool first = true;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_putc(&sb, '{');
    json_object_foreach(c->answer, key, v) {
        if (!first)
            rc |= sbuf_putc(&sb, ',');
        first = false;
        rc |= jsonout_string(&sb, key, strlen(key));
        rc |= sbuf_putc(&sb, ':');
        rc |= v == c->contents
                  ? loop_write_turns(v, c->texts, c->ntexts, &sb)
                  : jsonout_write(v, &sb);
    }
    rc |= sbuf_putc(&sb, '}');
    if (rc == 0) {
        char *buf = sbuf_detach(&sb, len);
        if (buf != NULL && arena_defer(c->a, free, buf) == 0) {
            *text = buf;
            return 0;
        }
    }
    sbuf_release(&sb);
    return status_set(err, ST_NO_MEMORY,
                      "out of memory writing the answer");
}

/* --- one request, top to bottom ---------------------------------------- */

/* The loop, with the sink the answer's mode needs. */
static int
run_loop(struct chat *c, const struct loop_input *li, struct status_error *err)
{
    struct loop_sink sink = {&chat_sink_ops, c};
    struct gemini *g = c->g;
    int rc;

    if (c->stream == NULL)
        return loop_run(li, &sink, err);
    sink.ops = &chat_stream_ops;
    c->gone = g->gone;
    c->gone_ctx = g->gone_ctx;
    g->gone = stream_gone;
    g->gone_ctx = c;
    rc = loop_run(li, &sink, err);
    g->gone = c->gone;
    g->gone_ctx = c->gone_ctx;
    return rc;
}

int
chat_handle(const struct site *site, struct gemini *g, struct store **store,
            struct arena *a, enum chat_kind kind, const struct jscan_doc *body,
            struct arena *scanned, struct ndjson *stream,
            struct loop_gate *gate, const char **answer, size_t *answer_len,
            struct status_error *err)
{
    const struct config_limits *lim = &site->cfg->limits;
    struct chat c = {.a = a,
                     .stream = stream,
                     .actions = site->actions,
                     .g = g,
                     .site = site,
                     .store = store,
                     .key = {site->auth_secret, site->auth_secret_len}};
    struct chat_input in;
    struct loop_text decls[2]; /* the site's server actions, the page's tools */
    /* what the browser can send back of a model turn */
    struct turn_bounds bounds = turn_bounds_of_body(lim->max_body_bytes);
    struct loop_input li = {.g = g,
                            .gemini = &site->cfg->gemini,
                            .actions = site->actions,
                            .action_env = &site->cfg->actions,
                            .a = a,
                            .max_steps = lim->max_loop_steps,
                            .max_calls = lim->max_calls_per_turn,
                            .max_output_tokens = lim->max_output_tokens,
                            .max_upstream_bytes = lim->max_upstream_bytes,
                            .bounds = &bounds,
                            .gate = gate,
                            .decide = decide_call,
                            .decide_ctx = &c};

    *answer = NULL;
    c.bounds = &bounds;
    /* 1: decode: the shape of the body */
    if (decode(kind, body, a, &in, err) != 0)
        return -1;

    /* 2: bound and check what the browser sent */
    if (toolbridge_scan(body, in.tool_defs, lim->max_tools, a, &c.page,
                        err) != 0)
        return -1;
    if (in.history != NULL &&
        (history_check(in.history, HISTORY_ALLOW_PENDING, err) != 0 ||
         history_check_user_parts(in.history,
                                  site->cfg->history.allow_parts, err) != 0))
        return -1;
    /* ...and against the protocol's own description */
    if (validate_body(site, kind, in.body, err) != 0)
        return -1;
    /* ...and that the turns the server wrote are as it wrote them */
    if (site->cfg->history.verify && in.history != NULL &&
        seal_verify(&c.key, in.history, in.signatures, err) != 0)
        return -1;

    /* ...and the conversation's key: plugins keep their state under it
     * (set before any action runs, an approved one included) */
    if (convkey_resolve(&c.key, in.conversation, a, &c.conv_token,
                        &c.who.conversation, err) != 0)
        return -1;

    /* 3: the conversation with the new turn */
    c.server_calls = arena_take_json(a, json_array());
    c.page_calls = arena_take_json(a, json_array());
    c.approvals = arena_take_json(a, json_array());
    if (c.server_calls == NULL || c.page_calls == NULL || c.approvals == NULL)
        return oom(err);
    if (conversation(&c, kind, &in, lim->max_history_turns, err) != 0 ||
        turn_texts(&c, body, in.history, err) != 0)
        return -1;
    if (site->cfg->history.verify && c.trim_start == 0) {
        c.sigs_in = in.signatures;
        while (c.sigs_reuse < json_array_size(in.history) &&
               json_array_get(c.contents, c.sigs_reuse) ==
                   json_array_get(in.history, c.sigs_reuse))
            c.sigs_reuse++;
    }
    li.who = &c.who;
    li.contents = c.contents;
    li.texts = c.texts;
    li.ntexts = c.ntexts;

    /* 4: the declarations and the page state, once for every step; the
     * instruction and the server actions' declarations are the site's,
     * written when it loaded */
    li.system = site->prompt_head;
    li.system_json = site->instruction_json;
    decls[0].p = site->declarations_text;
    decls[0].n = site->declarations_text_len;
    if (toolbridge_page_decls(&c.page, a, &decls[1].p, &decls[1].n, err) != 0)
        return -1;
    li.decls = decls;
    li.ndecls = ARRAY_SIZE(decls);
    /* The page state, when the browser sent one, goes after every turn:
     * it changes after every action, so nothing may follow it that a
     * cache could serve (see prompt.h). It is never part of the history
     * the browser gets back. */
    if (in.page_state != JSCAN_NONE &&
        prompt_page_turn_text(body, in.page_state, lim->max_page_state_bytes,
                              a, &li.last_turn_text, &li.last_turn_text_len,
                              err) != 0)
        return -1;

    /* Everything the request needs of the body is read or copied: drop
     * its bytes and its tape, so a chat waiting on Gemini holds neither. */
    arena_release(scanned);
    c.page.doc = NULL;

    /* 5: the loop: server calls run here, page calls and approvals end
     * the request; with approvals still to decide after the one the
     * visitor gave (answer_pending), Gemini waits too */
    if (json_array_size(c.approvals) > 0 || c.question != NULL
            ? sink_done(&c, LOOP_HANDED_BACK, NULL, err) != 0
            : run_loop(&c, &li, err) != 0)
        return -1;
    if (write_answer(&c, answer, answer_len, err) != 0)
        return -1;
    return stream ? ndjson_result(stream, *answer, *answer_len, err) : 0;
}
