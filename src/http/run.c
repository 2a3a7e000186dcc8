/*
 * run.c - one run of the run API (see run.h).
 *
 * The loop does the talking to Gemini; this file is its caller for the
 * run API: decide() is the policy step for each call, the sink keeps the
 * store in step with what happens (and streams it), and finish() turns
 * how the loop ended into the run's state and answer. run_start() and
 * run_decide() are the two ways in; both end in resume().
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/run.h"
#include "agent/loop.h"
#include "agent/pending.h"
#include "agent/turn.h"
#include "core/arena.h"
#include "http/bounds.h"
#include "store/bounds.h"
#include "core/config.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/utf8.h"
#include "http/ndjson.h"
#include "http/policy.h"
#include "http/runinput.h"
#include "http/site.h"
#include "registry/action.h"
#include "registry/decide.h"
#include "registry/jschema.h"
#include "registry/plugin.h"
#include "registry/question.h"
#include "store/store.h"

#include <jansson.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

/* How the assistant must behave, whatever the persona says. */
static const char reliability[] =
    "Rules: use only the tools you are given, and never claim an action "
    "happened unless its result says so. Some actions need the user's "
    "approval first: when a result says an action is waiting for approval "
    "or was declined or denied, tell the user plainly and do not retry it. "
    "Save a memory only for lasting facts the user tells you about "
    "themselves.";

/* An action of this run, by the call it answers. */
struct run_act {
    size_t turn, part;
    char id[STORE_ID_LEN];
    const struct plugin_action *act; /* NULL: unknown */
    const json_t *args;
    bool running; /* the loop runs it now: its result finishes the row */
    const json_t *output; /* how it ended, once it did: its output, or */
    const char *error;    /* ... its error */
    /* its tool asked the user (registry/question.h) and it waits for the
     * answer: the question, which the row keeps as its output meanwhile */
    const json_t *question;
};

struct run {
    const struct run_env *env;
    const struct config *cfg;
    struct store *st;
    char id[STORE_ID_LEN], thread[STORE_ID_LEN];
    const char *prompt;
    struct store_user user;
    json_t *contents;
    enum store_run_status status;
    struct run_act *acts;
    size_t nacts, cap;
    /* for the answer */
    struct loop_usage usage;
    const char *model;
    enum loop_end end;
    const char *text;           /* the final turn's text */
    const struct run_act *last; /* the last action that ran */
    json_t *last_output;
    json_t *approval;              /* the first approval this pass asked for */
    const struct run_act *waiting; /* ... and its action */
    json_t *question;              /* the first question waiting for the user:
                            * {id (its action's), tool, questions} */
    const struct run_act *asking;  /* ... and its action */
    const json_t *normalized;
    /* The run's own action, the answer's actionId when no tool call is shown: RUN_REPLY_TOOL, made
     * with the run at turn -1, planned while the run works or waits, then
     * completed with the reply's text (through executing, as the state
     * table has it) or failed.
     * "" for a run stored before runs had one. */
    char reply[STORE_ID_LEN];
    enum store_action_status reply_st;
};

#define RUN_REPLY_TOOL "reply"

/* --- small pieces ---------------------------------------------------------- */

static int
set_status(struct run *r, enum store_run_status to, struct status_error *err)
{
    if (r->status == to)
        return 0;
    if (r->st->ops->run_status(r->st, r->id, to, err) != 0)
        return -1;
    r->status = to;
    return 0;
}

/* The reply action to `to`, with its output or error; nothing when the
 * run has none, it is there already, or it has ended (a failure after
 * the reply was kept does not undo it). */
static int
reply_to(struct run *r, enum store_action_status to, const json_t *output,
         const char *error, struct status_error *err)
{
    if (r->reply[0] == '\0' || r->reply_st == to ||
        !store_action_can(r->reply_st, to))
        return 0;
    if (r->st->ops->action_status(r->st, r->reply, to, output, error, err))
        return -1;
    r->reply_st = to;
    return 0;
}

/* Hex SHA-256 of the arguments' compact JSON: the audit names what ran
 * without keeping what may be personal. */
static void
args_hash(const json_t *args, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    char *text = jsonout_dumps(args, APP_JSON_FLAGS | JSON_ENCODE_ANY,
                               JSONOUT_UNBOUNDED, NULL);

    SHA256((const unsigned char *)(text ? text : ""), text ? strlen(text) : 0,
           md);
    free(text);
    for (size_t i = 0; i < sizeof(md); i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int
audit(struct run *r, const struct run_act *a, const char *event,
      const char *outcome, struct status_error *err)
{
    char hash[65];
    struct store_audit row = {
        r->env->user, r->id, a->id,  a->act ? a->act->name : "?",
        event,        hash,  outcome};

    args_hash(a->args, hash);
    return r->st->ops->audit_add(r->st, &row, err);
}

/* Remember the action answering contents[turn].parts[part]. */
static struct run_act *
add_act(struct run *r, size_t turn, size_t part,
        const struct plugin_action *act, const json_t *args)
{
    if (r->nacts == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        struct run_act *n = arena_alloc(r->env->a, cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        if (r->nacts)
            memcpy(n, r->acts, r->nacts * sizeof(*n));
        r->acts = n;
        r->cap = cap;
    }
    r->acts[r->nacts] = (struct run_act){turn,  part, "",   act, args,
                                         false, NULL, NULL, NULL};
    return &r->acts[r->nacts++];
}

static struct run_act *
find_act(struct run *r, size_t turn, size_t part)
{
    for (size_t i = r->nacts; i-- > 0;)
        if (r->acts[i].turn == turn && r->acts[i].part == part)
            return &r->acts[i];
    return NULL;
}

/* {"error": msg}, pinned. */
static json_t *
error_response(struct arena *a, const char *msg)
{
    return arena_take_json(a, json_pack("{s:s}", "error", msg));
}

/* "shop.addReview {\"rating\":5,...}", cut: what the approval card shows. */
static const char *
preview(struct arena *a, const char *tool, const json_t *args)
{
    char *text = jsonout_dumps(args, APP_JSON_FLAGS | JSON_ENCODE_ANY,
                               JSONOUT_UNBOUNDED, NULL);
    const char *out;
    size_t n = text ? strlen(text) : 0;

    if (n > 300)
        n = utf8_cut(text, 300);
    out = arena_printf(a, "%s %.*s%s", tool, (int)n, text ? text : "{}",
                       text && strlen(text) > n ? "…" : "");
    free(text);
    return out;
}

/* --- the policy step: who answers each call -------------------------------- */

/* Invalid arguments fail fast: the action never runs, the model hears
 * exactly what was wrong. 1 when they are valid, else what decide()
 * returns. */
static int
check_args(struct run *r, struct run_act *ra, const struct loop_call *c,
           struct loop_result *res, struct status_error *err)
{
    struct status_error invalid = {0};
    const char *msg;

    if (ra->act->input_schema == NULL ||
        jschema_validate(ra->act->input_schema, c->args, &invalid) == 0)
        return 1;
    msg = arena_printf(r->env->a,
                       "invalid arguments: %s; the action did "
                       "not run",
                       invalid.text);
    if (msg == NULL ||
        r->st->ops->action_status(r->st, ra->id, STORE_ACT_FAILED, NULL, msg,
                                  err) != 0 ||
        (ra->act->side_effects && audit(r, ra, "failed", msg, err) != 0))
        return msg ? -1 : status_oom(err);
    res->response = error_response(r->env->a, msg);
    return res->response ? LOOP_ANSWER_IT : status_oom(err);
}

/* The engine denied the call: its row, its audit, the model's words. */
static int
refuse_act(struct run *r, struct run_act *ra, const struct decide_result *d,
           struct loop_result *res, struct status_error *err)
{
    if (r->st->ops->action_status(r->st, ra->id, STORE_ACT_REJECTED, NULL,
                                  d->text, err) != 0 ||
        audit(r, ra, "policy_denied", d->detail, err) != 0)
        return -1;
    res->response = error_response(r->env->a, d->text);
    return res->response ? LOOP_ANSWER_IT : status_oom(err);
}

/* The call waits for the user's approval: a row in the store; the first
 * of this pass goes in the answer. */
static int
await_approval(struct run *r, struct run_act *ra, const char *reason,
               struct status_error *err)
{
    struct arena *a = r->env->a;
    const char *name = ra->act->name;
    const char *pv = preview(a, name, ra->args);
    char id[STORE_ID_LEN];

    if (pv == NULL)
        return status_oom(err);
    if (r->st->ops->action_status(r->st, ra->id, STORE_ACT_AWAITING, NULL, NULL,
                                  err) != 0 ||
        r->st->ops->approval_create(
            r->st,
            &(struct store_approval_new){r->env->user, r->id, ra->id, name,
                                         reason, pv,
                                         r->cfg->run.approval_ttl_ms},
            id, err) != 0 ||
        audit(r, ra, "approval_requested", reason, err) != 0)
        return -1;
    if (r->approval == NULL) {
        r->approval = arena_take_json(a, json_pack("{s:s, s:s, s:s, s:s}", "id",
                                                   id, "tool", name, "reason",
                                                   reason, "preview", pv));
        if (r->approval == NULL)
            return status_oom(err);
        r->waiting = ra;
    }
    return LOOP_HAND_BACK;
}

/* The engine's verdict on the call of `ra` (registry/decide.h). */
static enum policy_verdict
judge(const struct run *r, const struct run_act *ra, struct decide_result *d)
{
    struct policy_site site = {
        r->cfg->run.side_effects, r->cfg->run.allow,
        r->env->site->has_permission ? &r->env->site->permission : NULL};
    struct policy_user pu = {r->user.trust, r->user.allow};
    struct policy_call pc = {ra->act->name, ra->act->side_effects, ra->args,
                             ra->act->auto_approved};

    return policy_judge(&site, &pu, &pc, d);
}

static int
decide(void *ctx, const struct loop_call *c, struct loop_result *res,
       struct status_error *err)
{
    struct run *r = ctx;
    const struct plugin_action *act;
    struct decide_result d;
    struct run_act *ra;
    int rc;

    act = plugin_find_fn(r->env->site->actions, c->name);
    if (act == NULL)
        return LOOP_RUN_IT; /* the loop tells the model there is no such tool */
    if ((ra = add_act(r, c->turn, c->part, act, c->args)) == NULL)
        return status_oom(err);
    if (r->st->ops->action_create(
            r->st,
            &(struct store_action_new){r->id, act->name, c->args, c->call,
                                       (long)c->turn, (long)c->part,
                                       STORE_ACT_PLANNED},
            ra->id, err) != 0)
        return -1;
    res->action = act->name;
    if ((rc = check_args(r, ra, c, res, err)) != 1)
        return rc;
    switch (judge(r, ra, &d)) {
    case POLICY_DENY:
        return refuse_act(r, ra, &d, res, err);
    case POLICY_APPROVE:
        return await_approval(r, ra, d.detail, err);
    case POLICY_ALLOW:
        break;
    }
    if (r->st->ops->action_status(r->st, ra->id, STORE_ACT_EXECUTING, NULL,
                                  NULL, err) != 0 ||
        set_status(r, STORE_RUN_EXECUTING, err) != 0)
        return -1;
    ra->running = true;
    return LOOP_RUN_IT;
}

/* An action ran (the loop ran it, or an approval did): its row, its audit,
 * and what the answer says of the last one. */
static int
record_result(struct run *r, struct run_act *ra, bool ok,
              const json_t *response, struct status_error *err)
{
    const json_t *out = json_object_get(response, "result");
    const char *msg = json_string_value(json_object_get(response, "error"));

    if (r->st->ops->action_status(
            r->st, ra->id, ok ? STORE_ACT_COMPLETED : STORE_ACT_FAILED,
            ok ? out : NULL, ok ? NULL : (msg ? msg : "failed"), err) != 0)
        return -1;
    if (ra->act->side_effects &&
        audit(r, ra, ok ? "executed" : "failed", ok ? "ok" : msg, err) != 0)
        return -1;
    r->last = ra;
    r->last_output = ok ? UNCONST(out) : NULL;
    ra->output = ok ? (out ? out : json_null()) : NULL;
    ra->error = ok ? NULL : (msg ? msg : "failed");
    return 0;
}

/* --- questions: a tool that asks the user (registry/question.h) ----------- */

/*
 * The run waits for the user's answer as it waits for an approval (the
 * run awaiting_confirmation, the conversation saved), with the action
 * awaiting_confirmation too and its question kept as its output until
 * POST /api/agent/answers/{run} answers it (run_answer). The answer says
 * mode "input_required" and carries `question`; GET of the run shows both.
 */

/* Remember the first question waiting (struct run). */
static int
note_question(struct run *r, const struct run_act *ra, struct status_error *err)
{
    if (r->question != NULL)
        return 0;
    r->question = arena_take_json(
        r->env->a,
        json_pack("{s:s, s:s, s:O}", "id", ra->id, "tool", ra->act->name,
                  "questions", json_object_get(ra->question, "questions")));
    r->asking = ra;
    return r->question ? 0 : status_oom(err);
}

/* The tool of `ra` asked `question` (pinned): the action waits for the
 * answer. */
static int
ask_user(struct run *r, struct run_act *ra, const json_t *question,
         struct status_error *err)
{
    if (r->st->ops->action_status(r->st, ra->id, STORE_ACT_AWAITING, question,
                                  NULL, err) != 0)
        return -1;
    ra->question = question;
    return note_question(r, ra, err);
}

/* --- the sink: the store in step, and the stream --------------------------- */

static int
sink_status(void *ctx, enum loop_status st, const char *tool,
            struct status_error *err)
{
    static const char *const names[] = {
        [LOOP_THINKING] = "planning",
        [LOOP_TOOL] = "executing",
        [LOOP_WAITING] = "awaiting_confirmation"};
    struct run *r = ctx;
    /* waiting on a question alone: the user's answer, not an approval */
    const char *name = st == LOOP_WAITING && r->approval == NULL &&
                               r->question != NULL
                           ? "awaiting_input"
                           : names[st];

    if (st == LOOP_THINKING && set_status(r, STORE_RUN_PLANNING, err) != 0)
        return -1;
    return r->env->stream ? ndjson_status(r->env->stream, name, tool, err) : 0;
}

static int
sink_delta(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct run *r = ctx;
    return ndjson_delta(r->env->stream, text, len, err);
}

static int
sink_tool_call(void *ctx, const struct loop_call *c, bool back,
               struct status_error *err)
{
    struct run *r = ctx;
    const struct plugin_action *act = plugin_find_fn(r->env->site->actions,
                                                     c->name);

    (void)back;
    return r->env->stream
               ? ndjson_tool_call(r->env->stream, act ? act->name : c->name,
                                  c->args, false, NULL, err)
               : 0;
}

static int
sink_tool_result(void *ctx, const struct loop_call *c,
                 const struct loop_result *res, struct status_error *err)
{
    struct run *r = ctx;
    struct run_act *ra = find_act(r, c->turn, c->part);

    /* only a call the loop ran still needs its row finished */
    if (ra != NULL && ra->running && res->asks) {
        ra->running = false;
        if (ask_user(r, ra, res->response, err) != 0)
            return -1;
    } else if (ra != NULL && ra->running) {
        ra->running = false;
        if (record_result(r, ra, res->ok, res->response, err) != 0)
            return -1;
    }
    return r->env->stream
               ? ndjson_tool_result(r->env->stream,
                                    res->action ? res->action : c->name,
                                    res->ok, res->ms, err)
               : 0;
}

static int
sink_usage(void *ctx, const struct loop_usage *u, const char *model,
           struct status_error *err)
{
    struct run *r = ctx;

    r->usage = *u;
    if (model != NULL)
        r->model = arena_strdup(r->env->a, model);
    return r->env->stream ? ndjson_usage(r->env->stream, u, model, err) : 0;
}
static int
sink_done(void *ctx, enum loop_end end, const struct turn *t,
          struct status_error *err)
{
    struct run *r = ctx;

    (void)err;
    r->end = end;
    r->text = t && t->text[0] ? arena_strdup(r->env->a, t->text) : NULL;
    return 0;
}

static const struct loop_sink_ops run_sink = {
    .tool_call = sink_tool_call,
    .tool_result = sink_tool_result,
    .usage = sink_usage,
    .done = sink_done,
    .status = sink_status,
};

static const struct loop_sink_ops run_stream_sink = {
    .tool_call = sink_tool_call,
    .tool_result = sink_tool_result,
    .usage = sink_usage,
    .done = sink_done,
    .status = sink_status,
    .delta = sink_delta,
};

/* --- the prompt ------------------------------------------------------------ */

/*
 * persona, the rules, [ABOUT THE USER] (who, and the memories most like
 * the prompt) and [ATTACHED CONTEXT]. Memories are a help, not a need: a
 * store that cannot search them leaves them out.
 */
static const char *
instruction(struct run *r, const json_t *context)
{
    struct status_error ignored = {0};
    json_t *mem = NULL;
    struct sbuf sb;
    const json_t *m;
    size_t i;
    char *out;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_adds(&sb, r->cfg->run.persona);
    rc |= sbuf_adds(&sb, "\n\n");
    rc |= sbuf_adds(&sb, reliability);
    rc |= sbuf_adds(&sb, "\n\n[ABOUT THE USER]\nUser: ");
    rc |= sbuf_adds(&sb, r->env->user);
    rc |= sbuf_adds(&sb, "\nTrust level: ");
    rc |= sbuf_adds(&sb, store_trust_name(r->user.trust));
    if (r->st->ops->memory_search(r->st, r->env->user, r->prompt, 5, &mem,
                                  &ignored) != 0)
        log_info("run %s: no memories: %s", r->id, ignored.text);
    json_array_foreach(mem, i, m) {
        rc |= sbuf_adds(&sb, i == 0 ? "\nWhat you remember:" : "");
        rc |= sbuf_adds(&sb, "\n- ");
        rc |= sbuf_adds(&sb, json_string_value(json_object_get(m, "text")));
    }
    json_decref(mem);
    if (json_array_size(context) > 0) {
        rc |= sbuf_adds(&sb, "\n\n[ATTACHED CONTEXT]\n");
        rc |= jsonout_write(context, &sb);
    }
    if (rc != 0 || (out = sbuf_detach(&sb, NULL)) == NULL ||
        arena_defer(r->env->a, free, out) != 0) {
        sbuf_release(&sb);
        return NULL;
    }
    return out;
}

/* --- the answer ------------------------------------------------------------ */

static const char *
summary_of(const struct run *r)
{
    switch (r->end) {
    case LOOP_HANDED_BACK:
        if (r->text != NULL)
            return r->text;
        return r->approval == NULL && r->question != NULL
                   ? "This needs your answer before it goes on."
                   : "This needs your approval before it runs.";
    case LOOP_MAX_STEPS:
        return "I stopped before finishing: this run reached its limit of "
               "steps.";
    case LOOP_BLOCKED:
        return "Gemini declined to answer this. Try rephrasing it.";
    case LOOP_TRUNCATED:
    case LOOP_ANSWERED:
        break;
    }
    return r->text ? r->text : "The model returned an empty answer.";
}

/* The run's answer (docs/http-api.md "The run API"): its ids, status,
 * summary and mode, the action shown, what waits, and the usage (and
 * what normalisation cut). */
static json_t *
answer(struct run *r)
{
    bool waiting = r->status == STORE_RUN_AWAITING;
    bool asks = waiting && r->approval == NULL && r->question != NULL;
    const struct run_act *shown = asks      ? r->asking
                                  : waiting ? r->waiting
                                            : r->last;
    const char *mode = asks      ? "input_required"
                       : waiting ? "approval_required"
                       : r->last ? "tool_call"
                                 : "assistant_text";
    json_t *ans = json_pack(
        "{s:b, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "ok", 1, "runId",
        r->id, "actionId", shown ? shown->id : r->reply, "threadId", r->thread,
        "status", store_run_status_name(r->status), "summary", summary_of(r),
        "mode", mode, "model", r->model ? r->model : r->cfg->gemini.model,
        "usage", loop_usage_json(&r->usage));

    if (ans == NULL)
        return NULL;
    if (shown != NULL &&
        (json_object_set_new(ans, "tool", json_string(shown->act->name)) ||
         json_object_set(ans, "toolArgs", UNCONST(shown->args))))
        goto fail;
    if (waiting && r->approval != NULL &&
        json_object_set(ans, "approval", r->approval) != 0)
        goto fail;
    if (waiting && r->question != NULL &&
        json_object_set(ans, "question", r->question) != 0)
        goto fail;
    if (!waiting && r->last_output != NULL &&
        json_object_set(ans, "output", r->last_output) != 0)
        goto fail;
    if (r->normalized != NULL &&
        json_object_set(ans, "normalized", UNCONST(r->normalized)) != 0)
        goto fail;
    return arena_take_json(r->env->a, ans);
fail:
    json_decref(ans);
    return NULL;
}

/* The reply action as the run ended: completed with the summary the
 * thread keeps, or failed with it (Gemini declined). */
static int
finish_reply(struct run *r, struct status_error *err)
{
    const char *text = summary_of(r);
    json_t *out;
    int rc;

    if (r->end == LOOP_BLOCKED)
        return reply_to(r, STORE_ACT_FAILED, NULL, text, err);
    if ((out = json_pack("{s:s}", "text", text)) == NULL)
        return status_oom(err);
    rc = reply_to(r, STORE_ACT_EXECUTING, NULL, NULL, err);
    if (rc == 0)
        rc = reply_to(r, STORE_ACT_COMPLETED, out, NULL, err);
    json_decref(out);
    return rc;
}

/* How the loop ended, kept: the run's state, the thread's message, the
 * answer and (when it waits) the conversation to resume. */
static int
finish(struct run *r, json_t **out, struct status_error *err)
{
    char *contents = NULL, *text;
    size_t len;
    int rc;

    if (r->end == LOOP_HANDED_BACK) {
        struct sbuf sb;
        sbuf_init(&sb, SIZE_MAX / 2);
        if (jsonout_write(r->contents, &sb) != 0 ||
            (contents = sbuf_detach(&sb, &len)) == NULL) {
            sbuf_release(&sb);
            return status_oom(err);
        }
        rc = set_status(r, STORE_RUN_AWAITING, err);
    } else {
        rc = set_status(
            r, r->end == LOOP_BLOCKED ? STORE_RUN_FAILED : STORE_RUN_COMPLETED,
            err);
        if (rc == 0)
            rc = finish_reply(r, err);
    }
    if (rc == 0 && r->end != LOOP_HANDED_BACK)
        rc = r->st->ops->message_add(r->st, r->thread, r->id, "assistant",
                                     summary_of(r), err);
    if (rc == 0 && (*out = answer(r)) == NULL)
        rc = status_oom(err);
    text = rc == 0
               ? jsonout_dumps(*out, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL)
               : NULL;
    if (rc == 0 && text == NULL)
        rc = status_oom(err);
    if (rc == 0)
        rc = r->st->ops->run_save(r->st, r->id, text, contents,
                                  json_object_get(*out, "usage"), err);
    free(text);
    free(contents);
    return rc;
}

/* A run that cannot go on: failed in the store (best effort: the store
 * may be what failed), and the caller answers the error. */
static int
fail(struct run *r, struct status_error *err)
{
    struct status_error again = {0};

    if (err->code == ST_OK) /* every path here set it; be sure */
        status_set(err, ST_INTERNAL, "the run failed");
    if (r->id[0] != '\0' && r->status != STORE_RUN_FAILED &&
        r->st->ops->run_status(r->st, r->id, STORE_RUN_FAILED, &again) != 0)
        log_warn("run %s: cannot mark it failed: %s", r->id, again.text);
    else if (reply_to(r, STORE_ACT_FAILED, NULL, err->text, &again) != 0)
        log_warn("run %s: cannot mark its reply failed: %s", r->id, again.text);
    return -1;
}

/* --- the loop, for a new run or a resumed one ------------------------------ */

static int
resume(struct run *r, const json_t *context, json_t **out,
       struct status_error *err)
{
    const struct site *site = r->env->site;
    struct loop_text decls[2] = {
        {site->declarations_text, site->declarations_text_len},
        {site->user_declarations_text, site->user_declarations_text_len}};
    struct loop_sink sink = {r->env->stream ? &run_stream_sink : &run_sink, r};
    /* plugins keep per-conversation state under the thread (plugin.h) */
    struct action_who who = {.user = r->env->user, .conversation = r->thread};
    /* the chat's bounds: a run's turns are shown and continued as one */
    struct turn_bounds bounds =
        turn_bounds_of_body(site->cfg->limits.max_body_bytes);
    struct loop_input li = {
        .g = r->env->g,
        .gemini = &site->cfg->gemini,
        .actions = site->actions,
        .action_env = &site->cfg->actions,
        .who = &who,
        .a = r->env->a,
        .contents = r->contents,
        .decls = decls,
        .ndecls = ARRAY_SIZE(decls),
        .max_steps = site->cfg->limits.max_loop_steps,
        .max_calls = site->cfg->limits.max_calls_per_turn,
        .max_output_tokens = site->cfg->limits.max_output_tokens,
        .max_upstream_bytes = site->cfg->limits.max_upstream_bytes,
        .bounds = &bounds,
        .gate = r->env->gate,
        .decide = decide,
        .decide_ctx = r,
    };

    if (r->env->stream != NULL)
        r->env->stream->thread = r->thread;
    if ((li.system = instruction(r, context)) == NULL)
        return status_oom(err);
    if (set_status(r, STORE_RUN_PLANNING, err) != 0 ||
        loop_run(&li, &sink, err) != 0)
        return -1;
    return finish(r, out, err);
}

/* The Gemini conversation of a new run: the client's conversation (or,
 * without one, the thread's last messages), then the prompt. */
static int
first_contents(struct run *r, const struct run_input *in,
               struct status_error *err)
{
    json_t *conv = in->conversation, *thread = NULL, *messages = NULL, *m;
    size_t i, from = 0;

    r->contents = arena_take_json(r->env->a, json_array());
    if (r->contents == NULL)
        return status_oom(err);
    if (json_array_size(conv) == 0 && in->thread != NULL) {
        if (r->st->ops->thread_get(r->st, r->env->user, r->thread, &thread,
                                   &messages, err) != 0)
            return -1;
        arena_take_json(r->env->a, thread);
        conv = arena_take_json(r->env->a, messages);
        if (json_array_size(conv) > RUN_CONVERSATION_MAX)
            from = json_array_size(conv) - RUN_CONVERSATION_MAX;
    }
    for (i = from; i < json_array_size(conv); i++) {
        const char *role, *text;
        m = json_array_get(conv, i);
        role = json_string_value(json_object_get(m, "role"));
        text = json_string_value(json_object_get(m, "text"));
        if (role == NULL || text == NULL || text[0] == '\0')
            continue;
        if (json_array_append_new(
                r->contents,
                json_pack("{s:s, s:[{s:s}]}", "role",
                          strcmp(role, "assistant") == 0 ? "model" : "user",
                          "parts", "text", text)) != 0)
            return status_oom(err);
    }
    /* the plugins' enrichment: what they make of the prompt is what
     * Gemini reads and the run's contents keep; the thread keeps the
     * user's own words */
    const char *prompt;
    size_t len;
    if (site_enrich_prompt(r->env->site, r->env->a, r->prompt,
                           strlen(r->prompt), &prompt, &len, err) != 0)
        return -1;
    return json_array_append_new(r->contents,
                                 json_pack("{s:s, s:[{s:s%}]}", "role", "user",
                                           "parts", "text", prompt, len)) == 0
               ? 0
               : status_oom(err);
}

static void
run_init(struct run *r, const struct run_env *env)
{
    memset(r, 0, sizeof(*r));
    r->env = env;
    r->cfg = env->site->cfg;
    r->st = env->store;
    r->status = STORE_RUN_QUEUED;
}

int
run_start(const struct run_env *env, const struct run_input *in, json_t **out,
          struct status_error *err)
{
    struct run r;
    const char *title;

    run_init(&r, env);
    r.prompt = in->prompt;
    r.normalized = in->normalized;
    *out = NULL;
    /* who, and where: the user's settings, their thread (another user's
     * is not found), the run */
    if (r.st->ops->user_get(r.st, env->user, &r.user, err) != 0)
        return -1;
    arena_take_json(env->a, r.user.allow);
    if (in->thread != NULL) {
        if (r.st->ops->thread_check(r.st, env->user, in->thread, err) != 0)
            return -1;
        snprintf(r.thread, sizeof(r.thread), "%s", in->thread);
    } else {
        size_t n = utf8_cut(in->prompt, 80);
        title = arena_printf(env->a, "%.*s", (int)n, in->prompt);
        if (title == NULL)
            return status_oom(err);
        if (r.st->ops->thread_create(r.st, env->user, title, r.thread, err))
            return -1;
    }
    /* the thread's messages before this prompt joins them */
    if (r.st->ops->run_create(r.st, env->user, r.thread, in->prompt, r.id,
                              err) != 0)
        return -1;
    if (r.st->ops->action_create(
            r.st,
            &(struct store_action_new){r.id, RUN_REPLY_TOOL, NULL, NULL, -1, -1,
                                       STORE_ACT_PLANNED},
            r.reply, err) != 0)
        return fail(&r, err);
    r.reply_st = STORE_ACT_PLANNED;
    if (first_contents(&r, in, err) != 0 ||
        r.st->ops->message_add(r.st, r.thread, r.id, "user", in->prompt, err) !=
            0 ||
        resume(&r, in->context, out, err) != 0)
        return fail(&r, err);
    return 0;
}

/* --- an approval decided, and the run resumed ------------------------------ */

/*
 * A call of the waiting model turn that the loop left unanswered, as its
 * action ended (completed: its output; failed or rejected: its error);
 * "not run" when no action answers it.
 */
static int
answer_waited(void *ctx, const struct pending_call *pc, json_t **resp,
              struct status_error *err)
{
    const struct run_act *ra = find_act(ctx, pc->turn, pc->part);

    *resp = ra == NULL ? json_pack("{s:s}", "error", "not run")
            : ra->output != NULL
                ? json_pack("{s:O}", "result", ra->output)
                : json_pack("{s:s}", "error", ra->error ? ra->error : "failed");
    return *resp ? 0 : status_oom(err);
}

/* Run or reject the decided action, as the loop would have. */
static int
carry_out(struct run *r, struct run_act *ra, bool approve, const char *feedback,
          struct status_error *err)
{
    struct status_error failed = {0};
    json_t *out = NULL, *resp;
    const char *msg;

    if (!approve) {
        msg = arena_printf(r->env->a, "the user declined this action%s%s",
                           feedback ? ": " : "", feedback ? feedback : "");
        ra->error = msg;
        return msg == NULL ? status_oom(err)
                           : r->st->ops->action_status(r->st, ra->id,
                                                       STORE_ACT_REJECTED, NULL,
                                                       msg, err);
    }
    if (r->st->ops->action_status(r->st, ra->id, STORE_ACT_EXECUTING, NULL,
                                  NULL, err) != 0 ||
        set_status(r, STORE_RUN_EXECUTING, err) != 0)
        return -1;
    /* action_run() validates the arguments again before the handler */
    struct action_who who = {.user = r->env->user, .conversation = r->thread};
    int rc = action_run(&r->cfg->actions, ra->act, &who, ra->args, r->env->a,
                        &out, &failed);
    if (rc == ACTION_ASKS_USER) {
        /* a question belongs before an approval, not after it */
        out = NULL;
        resp = error_response(r->env->a,
                              "the action asked the user a question after "
                              "its approval, which cannot be answered");
    } else if (rc != 0) {
        if (failed.code == ST_NO_MEMORY)
            return status_oom(err);
        resp = error_response(r->env->a, failed.text);
    } else {
        resp = arena_take_json(r->env->a, json_pack("{s:O}", "result", out));
    }
    if (resp == NULL)
        return status_oom(err);
    if (r->env->stream != NULL &&
        ndjson_tool_result(r->env->stream, ra->act->name, out != NULL, 0,
                           err) != 0)
        return -1;
    return record_result(r, ra, out != NULL, resp, err);
}

/* The run's reply action, as load_waiting reads it. */
static void
keep_reply(struct run *r, const json_t *a, const char *status)
{
    snprintf(r->reply, sizeof(r->reply), "%s",
             json_string_value(json_object_get(a, "id")));
    r->reply_st = STORE_ACT_PLANNED;
    for (int s = STORE_ACT_PLANNED; s <= STORE_ACT_REJECTED; s++)
        if (status != NULL &&
            strcmp(status,
                   store_action_status_name((enum store_action_status)s)) == 0)
            r->reply_st = (enum store_action_status)s;
}

/* The run's actions as the store lists them (`actions`), into r->acts:
 * see load_waiting(). */
static int
load_acts(struct run *r, const json_t *actions, const char *want,
          struct run_act **found, long *last_turn, struct status_error *err)
{
    const json_t *a;
    size_t i;

    json_array_foreach(actions, i, a) {
        const char *tool = json_string_value(json_object_get(a, "tool"));
        const char *st = json_string_value(json_object_get(a, "status"));
        json_int_t turn = json_integer_value(json_object_get(a, "turn"));
        if (turn < 0) {
            keep_reply(r, a, st);
            continue;
        }
        const struct plugin_action *act = plugin_find(r->env->site->actions,
                                                      tool ? tool : "");
        struct run_act *x =
            add_act(r, (size_t)turn,
                    (size_t)json_integer_value(json_object_get(a, "part")), act,
                    json_object_get(a, "args"));
        if (x == NULL)
            return status_oom(err);
        snprintf(x->id, sizeof(x->id), "%s",
                 json_string_value(json_object_get(a, "id")));
        x->output = json_object_get(a, "output");
        x->error = json_string_value(json_object_get(a, "error"));
        /* waiting with an output: the question its tool asked */
        if (x->output != NULL && st != NULL &&
            strcmp(st, store_action_status_name(STORE_ACT_AWAITING)) == 0) {
            x->question = x->output;
            x->output = NULL;
        }
        if (want != NULL && found != NULL && strcmp(x->id, want) == 0)
            *found = x;
        *last_turn = (long)turn;
    }
    return 0;
}

/*
 * The run r->id as it waits, for going on with it: its prompt, its
 * conversation, its actions (r->acts; an action whose tool asked keeps
 * its question, not an output) and the turn of the last one. The action
 * `want` (NULL: none) is *found. A run of another user is ST_NOT_FOUND;
 * with `must_wait`, one that does not wait for its user is ST_CONFLICT.
 */
static int
load_waiting(struct run *r, const char *want, struct run_act **found,
             long *last_turn, bool must_wait, struct status_error *err)
{
    const struct run_env *env = r->env;
    char *contents = NULL, owner[BOUND_STORE_USER_ID + 1];
    json_t *actions = NULL, *info = NULL;
    json_error_t jerr;
    bool nomem = false;
    int rc = -1;

    *last_turn = -1;
    if (found != NULL)
        *found = NULL;
    if (r->st->ops->user_get(r->st, env->user, &r->user, err) != 0)
        return -1;
    arena_take_json(env->a, r->user.allow);
    if (r->st->ops->run_get(r->st, env->user, r->id, &info, err) != 0 ||
        r->st->ops->run_resume(r->st, r->id, &contents, owner, r->thread,
                               err) != 0 ||
        r->st->ops->actions_of(r->st, r->id, &actions, err) != 0)
        goto out;
    arena_take_json(env->a, info);
    arena_take_json(env->a, actions);
    const char *now = json_string_value(json_object_get(info, "status"));
    if (must_wait &&
        (now == NULL ||
         strcmp(now, store_run_status_name(STORE_RUN_AWAITING)) != 0)) {
        status_set(err, ST_CONFLICT, "run %s is %s: it waits for no answer",
                   r->id, now ? now : "gone");
        goto out;
    }
    r->prompt = json_string_value(json_object_get(info, "prompt"));
    /* read as the request path reads JSON (jsonin.h): a failed
     * allocation is said as such, never taken for a missing conversation */
    r->contents = contents == NULL
                      ? NULL
                      : arena_take_json(env->a,
                                        jsonin_parse(contents, strlen(contents),
                                                     0, &jerr, &nomem));
    if (nomem) {
        status_oom(err);
        goto out;
    }
    if (r->contents == NULL || r->prompt == NULL) {
        status_set(err, ST_STORE,
                   "run %s cannot be resumed: its "
                   "conversation is missing",
                   r->id);
        goto out;
    }
    if (load_acts(r, actions, want, found, last_turn, err) != 0)
        goto out;
    rc = 0;
out:
    free(contents);
    return rc;
}

/*
 * An approval was decided or a question answered: while anything else of
 * the step waits (an approval, a question) the run waits on and says for
 * what; else every call of the step is answered, the partial answer turn
 * the loop left (if any) gives way to the whole one, and the loop goes on.
 */
static int
go_on(struct run *r, long last_turn, json_t **out, struct status_error *err)
{
    const struct run_env *env = r->env;
    long pending = 0;
    struct pending_turn p;
    json_t *turn, *a;
    size_t i, nparts;

    if (r->st->ops->approvals_pending(r->st, r->id, &pending, err) != 0)
        return fail(r, err);
    r->approval = NULL;
    r->waiting = NULL;
    r->question = NULL;
    r->asking = NULL;
    for (i = 0; i < r->nacts; i++)
        if (r->acts[i].question != NULL &&
            note_question(r, &r->acts[i], err) != 0)
            return fail(r, err);
    if (pending > 0 || r->question != NULL) {
        /* another approval or question of this step still waits: say so */
        json_t *list = NULL;
        char *text;
        r->end = LOOP_HANDED_BACK;
        if (set_status(r, STORE_RUN_AWAITING, err) != 0)
            return fail(r, err);
        if (pending > 0 && r->st->ops->approvals_list(
                               r->st, env->user, "pending", &list, err) != 0)
            return fail(r, err);
        arena_take_json(env->a, list);
        json_array_foreach(list, i, a) {
            if (strcmp(json_string_value(json_object_get(a, "runId")), r->id) !=
                0)
                continue;
            r->approval = a;
            for (size_t k = 0; k < r->nacts; k++)
                if (strcmp(r->acts[k].id, json_string_value(json_object_get(
                                              a, "actionId"))) == 0)
                    r->waiting = &r->acts[k];
            break;
        }
        if ((*out = answer(r)) == NULL)
            return status_oom(err);
        /* what GET of the run shows is what waits now */
        text = jsonout_dumps(*out, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL);
        int rc = text
                     ? r->st->ops->run_save(r->st, r->id, text, NULL, NULL, err)
                     : status_oom(err);
        free(text);
        return rc;
    }
    /* every call is answered now: the whole answer turn takes the place
     * of the partial one the loop left, and the loop goes on */
    pending_at(r->contents, (size_t)last_turn, &p);
    if (pending_answer(&p, answer_waited, r, &turn, &nparts, err) != 0 ||
        pending_place(r->contents, &p, turn, err) != 0 ||
        resume(r, NULL, out, err) != 0)
        return fail(r, err);
    return 0;
}

int
run_decide(const struct run_env *env, const char *id, const char *decision,
           const char *feedback, json_t **out, struct status_error *err)
{
    struct run r;
    struct store_decided d;
    struct run_act *ra = NULL;
    bool approve = strcmp(decision, "reject") != 0;
    long last_turn = -1;

    run_init(&r, env);
    *out = NULL;
    if (strcmp(decision, "approve_once") != 0 &&
        strcmp(decision, "approve_and_always_allow") != 0 && approve)
        return status_set(err, ST_BAD_REQUEST,
                          "decision must be approve_once, "
                          "approve_and_always_allow or reject");
    /* once: of concurrent decisions exactly one gets here */
    if (r.st->ops->approval_decide(r.st, env->user, id,
                                   approve ? "approved" : "rejected", feedback,
                                   &d, err) != 0)
        return -1;
    memcpy(r.id, d.run, sizeof(r.id));
    r.status = STORE_RUN_AWAITING;
    if (load_waiting(&r, d.action, &ra, &last_turn, false, err) != 0)
        return fail(&r, err);
    if (ra == NULL || ra->act == NULL) {
        status_set(err, ST_STORE, "the action of approval %s is gone", id);
        return fail(&r, err);
    }
    if (audit(&r, ra, approve ? "approved" : "rejected", feedback, err) != 0)
        return fail(&r, err);
    /* a stream says first where the run is now, with its thread */
    if (env->stream != NULL) {
        env->stream->thread = r.thread;
        if (ndjson_status(env->stream, approve ? "executing" : "planning",
                          approve ? ra->act->name : NULL, err) != 0)
            return fail(&r, err);
    }
    if (strcmp(decision, "approve_and_always_allow") == 0) {
        json_t *rule = json_pack("{s:s}", "action", ra->act->name);
        int rc = rule ? r.st->ops->user_add_rule(r.st, env->user, rule, err)
                      : status_oom(err);
        json_decref(rule);
        if (rc != 0)
            return fail(&r, err);
    }
    if (carry_out(&r, ra, approve, feedback, err) != 0)
        return fail(&r, err);
    return go_on(&r, last_turn, out, err);
}

int
run_answer(const struct run_env *env, const char *run_id, const json_t *answers,
           json_t **out, struct status_error *err)
{
    struct run r;
    struct run_act *ra = NULL;
    long last_turn = -1;
    json_t *given;

    run_init(&r, env);
    *out = NULL;
    if (strlen(run_id) >= sizeof(r.id))
        return status_set(err, ST_NOT_FOUND, "run not found");
    snprintf(r.id, sizeof(r.id), "%s", run_id);
    r.status = STORE_RUN_AWAITING;
    /* the user's own run only (another's is not found), as it waits */
    if (load_waiting(&r, NULL, NULL, &last_turn, true, err) != 0)
        return -1;
    for (size_t i = 0; i < r.nacts && ra == NULL; i++)
        if (r.acts[i].question != NULL && r.acts[i].act != NULL)
            ra = &r.acts[i];
    if (ra == NULL)
        return status_set(err, ST_CONFLICT,
                          "run %s waits for no answer (answered already, "
                          "or it never asked)",
                          r.id);
    /* checked against the question the tool asked, kept by the server */
    if ((given = arena_take_json(
             env->a, question_answers(ra->question, answers, err))) == NULL)
        return err->code == ST_OK ? status_oom(err) : -1;
    /* once: of concurrent answers exactly one moves it on (409 else) */
    if (r.st->ops->action_status(r.st, ra->id, STORE_ACT_EXECUTING, NULL, NULL,
                                 err) != 0)
        return -1;
    if (env->stream != NULL) {
        env->stream->thread = r.thread;
        if (ndjson_status(env->stream, "executing", ra->act->name, err) != 0)
            return fail(&r, err);
    }
    if (r.st->ops->action_status(r.st, ra->id, STORE_ACT_COMPLETED, given, NULL,
                                 err) != 0)
        return fail(&r, err);
    ra->question = NULL;
    ra->output = given;
    r.last = ra;
    r.last_output = given;
    if (env->stream != NULL &&
        ndjson_tool_result(env->stream, ra->act->name, true, 0, err) != 0)
        return fail(&r, err);
    return go_on(&r, last_turn, out, err);
}
