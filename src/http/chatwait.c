/*
 * chatwait.c - the calls of a chat that wait for the visitor, and who
 * answers each call the model makes (see chatwait.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/bounds.h"
#include "http/chatwait.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/utf8.h"
#include "agent/loop.h"
#include "agent/pending.h"
#include "agent/seal.h"
#include "agent/toolbridge.h"
#include "agent/turn.h"
#include "registry/decide.h"
#include "registry/plugin.h"
#include "registry/question.h"
#include "store/store.h"
#include "http/chatin.h"
#include "http/chatout.h"
#include "http/ndjson.h"
#include "http/site.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

int
chatwait_init(struct chatwait *w, const struct chat_env *env,
              struct chatout *out, struct status_error *err)
{
    memset(w, 0, sizeof(*w));
    w->env = env;
    w->out = out;
    w->approvals = arena_take_json(env->a, json_array());
    return w->approvals ? 0 : status_oom(err);
}

/* --- who answers a call ---------------------------------------------- */

/*
 * The engine's judgement (registry/decide.h) on a call of the action
 * `act` with `args` (NULL: {}), or of the page tool `page` when act is
 * NULL. The chat gathers what the engine reads: the site's permission
 * policy and kill switch, the action's side effects, its plugin's
 * auto-approval, policy.actions' `approval: never`, and whether it can
 * ask at all (a secret to sign the ticket with).
 */
static enum decide_verdict
judge(const struct chatwait *w, const struct plugin_action *act,
      const char *page, const json_t *args, struct decide_result *d)
{
    const struct site *site = w->env->site;
    struct decide_input in = {
        .caller = DECIDE_CHAT,
        .call = {act ? act->name : page, args},
        .page_tool = act == NULL,
        .side_effects_off = !site->cfg->run.side_effects,
        .can_ask = w->env->key.len > 0,
        .policy = site->has_permission ? &site->permission : NULL,
    };

    if (act != NULL) {
        in.side_effects = act->side_effects;
        in.auto_approved = act->auto_approved;
        for (char *const *name = site->cfg->run.approval_never;
             name && *name && !in.approval_never; name++)
            in.approval_never = strcmp(*name, act->name) == 0;
    }
    return decide_judge(&in, d);
}

/* The model reads `text` for the call of `name` (the action's
 * registered name): an error, in the arena. */
static int
answer_with(struct arena *a, const char *name, const char *text,
            struct loop_result *r, struct status_error *err)
{
    r->action = name;
    r->response = arena_take_json(a, json_pack("{s:s}", "error", text));
    return r->response ? LOOP_ANSWER_IT : status_oom(err);
}

/* Who answers this call, as the engine judges it: the loop runs it, the
 * browser does (a page tool, or an action that waits for the visitor's
 * approval), or the model reads why not. A name that is neither a page
 * tool nor an action goes to the loop, which tells the model there is no
 * such tool, so it can correct itself. */
int
chatwait_decide(void *ctx, const struct loop_call *lc, struct loop_result *r,
                struct status_error *err)
{
    const struct chatwait *w = ctx;
    const struct chat_env *env = w->env;
    const struct plugin_action *act = NULL;
    struct decide_result d;

    if (!plugin_is_fn_name(lc->name)) {
        if (toolbridge_page_find(&env->page, lc->name) == NULL)
            return LOOP_RUN_IT;
    } else if ((act = plugin_find_fn(env->site->actions, lc->name)) == NULL) {
        return LOOP_RUN_IT;
    }
    switch (judge(w, act, lc->name, lc->args, &d)) {
    case DECIDE_RUN:
        return LOOP_RUN_IT;
    case DECIDE_DENY:
        return answer_with(env->a, act ? act->name : lc->name, d.text, r, err);
    case DECIDE_ASK:
    case DECIDE_ELSEWHERE:
        break;
    }
    return LOOP_HAND_BACK;
}

/* --- what waits -------------------------------------------------------- */

int
chatwait_add(struct chatwait *w, const char *id, const json_t *call,
             size_t turn, size_t part, struct status_error *err)
{
    json_t *args = json_object_get(call, "args");
    /* "o" takes the reference, also when the pack fails */
    json_t *e = json_pack("{s:s, s:O, s:o, s:I, s:I}", "id", id, "fn",
                          json_object_get(call, "name"), "args",
                          args ? json_incref(args) : json_object(), "turn",
                          (json_int_t)turn, "part", (json_int_t)part);

    return json_array_append_new(w->approvals, e) == 0 ? 0 : status_oom(err);
}

int
chatwait_ask(struct chatwait *w, const char *id, const char *tool,
             const json_t *q, struct status_error *err)
{
    if (w->question != NULL)
        return 0; /* one card at a time: the next comes after this one */
    w->question = arena_take_json(
        w->env->a, json_pack("{s:s, s:s, s:O}", "id", id, "tool", tool,
                             "questions", json_object_get(q, "questions")));
    return w->question ? 0 : status_oom(err);
}

int
chatwait_shift(struct chatwait *w, size_t keep, struct status_error *err)
{
    size_t i;
    json_t *e;

    json_array_foreach(w->approvals, i, e) {
        json_t *turn = json_object_get(e, "turn");
        if (json_integer_set(turn, json_integer_value(turn) - (json_int_t)keep))
            return status_oom(err);
    }
    return 0;
}

/* Milliseconds since the epoch: tickets expire by the wall clock, which
 * every worker and host agrees on. */
static long long
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One walk of the pending turn (chatwait_answer): what the request
 * brings, and what it has answered so far. */
struct walk {
    struct chatwait *w;
    const json_t *contents;         /* the history as the browser sent it */
    const json_t *results;          /* the browser's, or NULL */
    const struct chat_approval *ap; /* the visitor's decision, or NULL */
    const struct chat_answer *qa;   /* the visitor's answer, or NULL */
    size_t used;                    /* results taken */
    bool first;                     /* no call waited for approval yet */
    bool decided, answered;         /* ap, qa taken */
};

/* --- the visitor's decision on a waiting call ------------------------- */

/* The ticket of the decision `ap` on the call `sc` must verify against
 * the history as sent (`contents`), be in time, and be used for the
 * first time (the store keeps used ids until they expire). */
static int
claim_ticket(const struct chatwait *w, const json_t *contents,
             const struct seal_call *sc, const struct chat_approval *ap,
             struct status_error *err)
{
    const struct chat_env *env = w->env;
    char tid[TOKEN_MAC_SIZE];
    long long now = wall_ms(), exp;

    if (seal_ticket_check(&env->key, contents, sc, ap->ticket, now, tid, &exp,
                          err) != 0)
        return -1;
    if (*env->store == NULL && (*env->store = store_open_migrated(
                                    env->site->cfg->run.store, err)) == NULL)
        return -1;
    if (store_ticket_claim(*env->store, tid, exp, now, err) != 0) {
        if (err->code != ST_CONFLICT)
            return -1;
        memset(err, 0, sizeof(*err));
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval has been used already");
    }
    return 0;
}

/* Run the approved action `act` for `lc`, as the loop would have: a
 * stream tells of it, the answer lists it. *resp is a new reference. */
static int
run_approved(const struct chatwait *w, const struct plugin_action *act,
             const struct loop_call *lc, json_t **resp,
             struct status_error *err)
{
    const struct chat_env *env = w->env;
    struct loop_result r = {0};

    if (env->stream != NULL &&
        ndjson_tool_call(env->stream, act->name, lc->args, false, NULL, err) !=
            0)
        return -1;
    if (loop_run_action(&env->site->cfg->actions, act, &env->who, lc, env->a,
                        &r, err) != 0)
        return -1;
    if (chatout_server_call(w->out, act->name, lc->args, r.ok, r.ms, err) != 0)
        return -1;
    if (env->stream != NULL &&
        ndjson_tool_result(env->stream, act->name, r.ok, r.ms, err) != 0)
        return -1;
    *resp = json_incref(UNCONST(r.response));
    return *resp ? 0 : status_oom(err);
}

/*
 * The visitor decided (k->ap) on the waiting call `pc`, whose handle is
 * `id`: once the ticket holds, the action runs (approve) or the model
 * hears why not. The engine judges the call again now: one it would run
 * waits for no one (the approval is refused at once); one it denies
 * since the card was shown is refused once the ticket is known to be
 * genuine - in the words of a policy that changed before the visitor's
 * own, of a kill switch after them. *resp is a new reference.
 */
static int
carry_out(const struct walk *k, const struct pending_call *pc, const char *id,
          json_t **resp, struct status_error *err)
{
    const struct chatwait *w = k->w;
    const struct chat_env *env = w->env;
    const struct plugin_action *act = plugin_find_fn(env->site->actions,
                                                     pc->name);
    json_t *args = json_object_get(pc->call, "args");
    struct decide_result d;
    enum decide_verdict v;

    if (act == NULL || (v = judge(w, act, NULL, args, &d)) == DECIDE_RUN)
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval names a call that does not wait "
                          "for one");
    if (args == NULL && (args = arena_take_json(env->a, json_object())) == NULL)
        return status_oom(err);
    struct loop_call lc = {pc->name, args, pc->call, pc->turn, pc->part};
    struct seal_call sc = {act->name, args, id, pc->turn, pc->part};
    if (claim_ticket(w, k->contents, &sc, k->ap, err) != 0)
        return -1;
    if (v == DECIDE_DENY && d.reason != DECIDE_BY_KILL_SWITCH)
        *resp = json_pack("{s:s}", "error", d.text);
    else if (!k->ap->approve)
        *resp = json_pack("{s:s}", "error", "the user declined this action");
    else if (v == DECIDE_DENY)
        *resp = json_pack("{s:s}", "error", d.text);
    else
        return run_approved(w, act, &lc, resp, err);
    return *resp ? 0 : status_oom(err);
}

/* --- questions: a tool that asks the visitor (registry/question.h) ---- */

/*
 * The loop ran the call and its tool asked (loop_result.asks): the call
 * stays unanswered in the history, like one waiting for approval, and
 * the answer says "question". A call is known as one again by what it is:
 * a plugin's tool the engine lets run unasked, yet unanswered, since the
 * loop answers every other call it runs. Its questions are asked again of
 * the tool (question tools keep no state: clarification's are the
 * model's arguments, normalised) and the visitor's answers are checked
 * against those, never against anything the browser sends.
 */

/* The words the model reads for a question the visitor left. */
#define NOT_ANSWERED "not answered: the user sent a new message instead"

/* Is the unanswered call `call` one whose tool asked the visitor? */
static bool
question_call(const struct chatwait *w, const json_t *call)
{
    const struct plugin_action *act =
        plugin_find_fn(w->env->site->actions,
                       json_string_value(json_object_get(call, "name")));
    const json_t *args = json_object_get(call, "args");
    struct decide_result d;

    if (act == NULL || act->so == NULL)
        return false;
    /* as the loop judged it: a call without args had {} */
    if (args == NULL &&
        (args = arena_take_json(w->env->a, json_object())) == NULL)
        return false; /* out of memory: it waits as an approval, refused */
    return judge(w, act, NULL, args, &d) == DECIDE_RUN;
}

/* The questions of the waiting call `pc`, asked of its tool again:
 * pinned to the arena. A call whose tool no longer asks is the browser's
 * mistake (or a changed site): 400. */
static int
ask_again(const struct chatwait *w, const struct pending_call *pc,
          const json_t **questions, struct status_error *err)
{
    const struct chat_env *env = w->env;
    const struct plugin_action *act = plugin_find_fn(env->site->actions,
                                                     pc->name);
    json_t *args = json_object_get(pc->call, "args");
    struct loop_result r = {0};

    if (args == NULL && (args = arena_take_json(env->a, json_object())) == NULL)
        return status_oom(err);
    struct loop_call lc = {pc->name, args, pc->call, pc->turn, pc->part};
    if (loop_run_action(&env->site->cfg->actions, act, &env->who, &lc, env->a,
                        &r, err) != 0)
        return -1;
    if (!r.asks)
        return status_set(err, ST_BAD_REQUEST,
                          "the call '%s' waits for no answer", pc->name);
    *questions = r.response;
    return 0;
}

/* The visitor answered the waiting call `pc`: the answers are checked
 * against its questions, and become its result. *resp is a new
 * reference. */
static int
answer_question(const struct chatwait *w, const struct pending_call *pc,
                const struct chat_answer *qa, json_t **resp,
                struct status_error *err)
{
    const json_t *q;
    json_t *answers;

    if (ask_again(w, pc, &q, err) != 0)
        return -1;
    if ((answers = question_answers(q, qa->answers, err)) == NULL)
        return -1;
    *resp = json_pack("{s:o}", "result", answers);
    return *resp ? 0 : status_oom(err);
}

/* --- the pending turn, answered --------------------------------------- */

/* A call that waits for the visitor's answer: any question may be
 * answered, one per request; the first left waiting is asked. */
static int
walk_question(struct walk *k, const struct pending_call *pc, const char *id,
              json_t **resp, struct status_error *err)
{
    const json_t *q;

    if (k->qa == NULL || k->answered || strcmp(k->qa->id, id) != 0) {
        if (k->w->question == NULL &&
            (ask_again(k->w, pc, &q, err) != 0 ||
             chatwait_ask(
                 k->w, id,
                 plugin_find_fn(k->w->env->site->actions, pc->name)->name, q,
                 err) != 0))
            return -1;
        return 0;
    }
    if (answer_question(k->w, pc, k->qa, resp, err) != 0)
        return -1;
    k->answered = true;
    return 0;
}

/* A call that waits for the visitor's approval: only the first such call
 * can be decided now, so decisions come in call order. */
static int
walk_approval(struct walk *k, const struct pending_call *pc, const char *id,
              json_t **resp, struct status_error *err)
{
    bool mine = k->ap != NULL && k->first && strcmp(k->ap->id, id) == 0;

    k->first = false;
    if (!mine)
        return chatwait_add(k->w, id, pc->call, pc->turn, pc->part, err);
    if (carry_out(k, pc, id, resp, err) != 0)
        return -1;
    k->decided = true;
    return 0;
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
            return status_oom(err);
    }
    *resp = json_pack("{s:o}",
                      json_is_true(json_object_get(r, "isError")) ? "error"
                                                                  : "result",
                      parsed ? parsed : json_incref(v ? v : json_null()));
    /* part, functionResponse, response */
    if (*resp != NULL && b->depth > 2 &&
        !turn_depth_fits(*resp, b->depth - 2)) {
        json_decref(*resp);
        *resp = json_pack("{s:s}", "error",
                          "the page answered, but its result nests deeper "
                          "than a conversation can keep; it is not shown");
    }
    return *resp ? 0 : status_oom(err);
}

/* A page call: the browser's result for it must be in `results`. */
static int
walk_result(struct walk *k, const struct pending_call *pc, const char *id,
            json_t **resp, struct status_error *err)
{
    size_t i;
    json_t *r;

    json_array_foreach(k->results, i, r) {
        const char *cid = json_string_value(json_object_get(r, "callId"));
        if (cid != NULL && strcmp(cid, id) == 0) {
            k->used++;
            return browser_response(r, &k->w->env->bounds, resp, err);
        }
    }
    return status_set(err, ST_BAD_REQUEST,
                      "results: no result for the call '%s' (%s)", id,
                      pc->name);
}

/* The pending_answer_fn of the walk: who answers the call `pc` now. */
static int
walk_call(void *ctx, const struct pending_call *pc, json_t **resp,
          struct status_error *err)
{
    struct walk *k = ctx;
    const char *id = chatout_call_id(k->w->env->a, pc->call, pc->turn,
                                     pc->part);
    bool asks;
    int rc;

    if (id == NULL)
        return status_oom(err);
    asks = plugin_is_fn_name(pc->name) && question_call(k->w, pc->call);
    if (k->results == NULL && k->ap == NULL && k->qa == NULL) {
        *resp = json_pack("{s:s}", "error",
                          asks ? NOT_ANSWERED
                               : "not run: the visitor sent a new "
                                 "message instead");
        return *resp ? 0 : status_oom(err);
    }
    if (asks)
        rc = walk_question(k, pc, id, resp, err);
    else if (plugin_is_fn_name(pc->name))
        rc = walk_approval(k, pc, id, resp, err);
    else
        rc = walk_result(k, pc, id, resp, err);
    return rc;
}

/* What the walk must have taken of the request. */
static int
walk_check(const struct walk *k, size_t nparts, struct status_error *err)
{
    if (k->ap != NULL && !k->decided)
        return status_set(err, ST_APPROVAL_INVALID,
                          "the approval names no call waiting for it");
    if (k->qa != NULL && !k->answered)
        return status_set(err, ST_BAD_REQUEST,
                          "the answer names no question waiting for one "
                          "('%s')",
                          k->qa->id);
    if (nparts == 0) /* results: [] for an approval */
        return status_set(err, ST_BAD_REQUEST,
                          "the waiting call needs the visitor's decision "
                          "(approval) or answer, not results");
    if (k->results != NULL && k->used != json_array_size(k->results))
        return status_set(err, ST_BAD_REQUEST,
                          "results: %zu of them name no waiting call (or "
                          "name one twice)",
                          json_array_size(k->results) - k->used);
    return 0;
}

int
chatwait_answer(struct chatwait *w, json_t *contents, const struct chatin *in,
                struct status_error *err)
{
    bool submit = in->kind == CHAT_SUBMIT_RESULTS;
    struct walk k = {.w = w,
                     .contents = contents,
                     .results = submit ? in->results : NULL,
                     .ap = in->has_approval ? &in->approval : NULL,
                     .qa = in->has_answer ? &in->answer : NULL,
                     .first = true};
    struct pending_turn p;
    json_t *turn;
    size_t nparts;

    if (!pending_find(contents, &p))
        return submit ? status_set(err, ST_BAD_REQUEST,
                                   "there are no tool calls waiting for "
                                   "results at the end of history")
                      : 0;
    if (pending_answer(&p, walk_call, &k, &turn, &nparts, err) != 0)
        return -1;
    if (walk_check(&k, nparts, err) != 0) {
        json_decref(turn);
        return -1;
    }
    return pending_place(contents, &p, turn, err);
}

/* --- the approval card ------------------------------------------------- */

/* "<description>: name: value, ...", at most BOUND_PREVIEW_BYTES: what
 * the approval card says will happen. In `a`; NULL when out of memory. */
static const char *
preview(struct arena *a, const struct plugin_action *act, const json_t *args)
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
    if (rc == 0 && sb.len > BOUND_PREVIEW_BYTES) {
        sb.len = utf8_cut(sb.buf, BOUND_PREVIEW_BYTES - 3);
        rc |= sbuf_adds(&sb, "...");
    }
    text = rc == 0 ? arena_strndup(a, sb.buf, sb.len) : NULL;
    sbuf_release(&sb);
    return text;
}

int
chatwait_card(const struct chatwait *w, const json_t *contents, json_t **card,
              struct status_error *err)
{
    const struct chat_env *env = w->env;
    const json_t *e = json_array_get(w->approvals, 0);
    const struct plugin_action *act = plugin_find_fn(
        env->site->actions, json_string_value(json_object_get(e, "fn")));
    const json_t *args = json_object_get(e, "args");
    long long exp = wall_ms() + env->site->cfg->run.ticket_ttl_ms;
    char ticket[SEAL_TICKET_SIZE];
    struct decide_result d;
    const char *words;

    *card = NULL;
    if (act == NULL) /* chatwait_decide() found it: never */
        return status_set(err, ST_INTERNAL, "waiting action lost");
    struct seal_call sc = {
        act->name, args, json_string_value(json_object_get(e, "id")),
        (size_t)json_integer_value(json_object_get(e, "turn")),
        (size_t)json_integer_value(json_object_get(e, "part"))};
    if (seal_ticket(&env->key, contents, &sc, exp, ticket, err) != 0)
        return -1;
    /* the reason is the engine's sentence for the call (decide.h) */
    judge(w, act, NULL, args, &d);
    words = preview(env->a, act, args);
    if (words == NULL)
        return status_oom(err);
    *card = json_pack("{s:s, s:s, s:O, s:s, s:s, s:s, s:I}", "id", sc.id,
                      "tool", act->name, "args", UNCONST(args), "reason",
                      d.text, "preview", words, "ticket", ticket, "expiresAt",
                      (json_int_t)exp);
    return *card ? 0 : status_oom(err);
}
