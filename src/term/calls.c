/*
 * calls.c - who answers a call of the model (calls.h): its tool_use
 * blocks, the permission check (registry/decide.h, with the rules of
 * perm.h) and the question (over stdin or at the terminal), the run,
 * and its tool_result.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/calls.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "registry/plugin.h"
#include "term/args.h"
#include "term/control.h"
#include "term/conv.h"
#include "term/out.h"
#include "term/perm.h"
#include "term/streamjson.h"
#include "term/tools.h"
#include "term/tty.h"
#include "term/bounds.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_tool(struct term_calls *s, const struct term_tool *t,
                    const json_t *input, struct loop_result *r,
                    struct status_error *err);

void
term_calls_init(struct term_calls *k, const struct term_calls_env *env)
{
    *k = (struct term_calls){
        .args = env->args,
        .a = env->a,
        .out = env->out,
        .conv = env->conv,
        .tools = env->tools,
        .ctl = env->ctl,
    };
    k->who.cancelled = term_control_gone;
    k->who.cancelled_ctx = env->ctl;
}

void
term_calls_release(struct term_calls *k)
{
    json_decref(k->denials);
    k->denials = NULL;
}

int
term_calls_reset(struct term_calls *k)
{
    k->a_valid = k->stashed = false;
    json_decref(k->denials);
    k->denials = json_array();
    return k->denials ? 0 : -1;
}

/* The JSON text of `v` in the arena (NULL when out of memory). */
static const char *
json_text(struct arena *a, const json_t *v)
{
    struct sbuf sb;
    const char *s = NULL;

    sbuf_init(&sb, BOUND_ACTION_OUTPUT_BYTES * 2);
    if (jsonout_write(v, &sb) == 0)
        s = arena_strndup(a, sb.buf, sb.len);
    sbuf_release(&sb);
    return s;
}

/* The tool declared as `name`, or NULL. */
static const struct term_tool *
ts_find_tool(const struct term_calls *s, const char *name)
{
    return term_tools_find(s->tools, name);
}

/* Has the user interrupted the prompt? */
static bool
ts_interrupted(struct term_calls *s)
{
    return term_control_interrupted(s->ctl);
}

/* Ask the host over stdin (can_use_tool) about the call being answered. */
static int
ts_ask_stdio(struct term_calls *s, const struct term_tool *t,
             const json_t **input, const char **why, struct status_error *err)
{
    return term_control_ask(s->ctl, t, s->tool_id, input, why, err);
}

/* An assistant message of the turn being answered with `block` (taken). */
static json_t *
assistant(const struct term_calls *s, json_t *block)
{
    return term_sj_assistant(s->conv->msg_id, s->conv->model, block,
                             term_conv_last_usage(s->conv));
}

/* The order of call `c` among its turn's calls (its functionCall
 * parts before it). */
static size_t
call_order(const struct term_calls *s, const struct loop_call *c)
{
    const json_t *parts =
        json_object_get(json_array_get(s->conv->contents, c->turn), "parts");
    size_t n = 0;

    for (size_t i = 0; i < c->part && i < json_array_size(parts); i++)
        n += json_object_get(json_array_get(parts, i), "functionCall") != NULL;
    return n;
}

/*
 * Write the tool_use blocks of call `c`'s turn, up to `c`, or (`all`)
 * every call of the turn: Claude Code writes all the blocks of a message
 * before it runs any, so a host sees parallel calls as such; a person at
 * the terminal (tty.h) sees each call just before its result instead.
 * Then s->tool_id is `c`'s id.
 */
static int
announce(struct term_calls *s, const struct loop_call *c, bool all,
         struct status_error *err)
{
    const json_t *parts =
        json_object_get(json_array_get(s->conv->contents, c->turn), "parts");
    size_t order = call_order(s, c), k = 0, i;
    const json_t *p;

    if (!s->a_valid || s->a_turn != c->turn) {
        s->a_valid = true;
        s->a_turn = c->turn;
        s->a_done = 0;
        s->a_first = s->tool_seq;
    }
    json_array_foreach(parts, i, p) {
        const json_t *fc = json_object_get(p, "functionCall");
        const json_t *args = json_object_get(fc, "args");
        char id[32];

        if (fc == NULL)
            continue;
        if (k > order && !all)
            break;
        if (k++ < s->a_done)
            continue;
        snprintf(id, sizeof(id), "toolu_%d", s->a_first + (int)k);
        s->a_done = k;
        if (s->a_first + (int)k > s->tool_seq)
            s->tool_seq = s->a_first + (int)k;
        if (term_out_emit_err(
                s->out,
                assistant(
                    s,
                    json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
                              id, "name",
                              json_string_value(json_object_get(fc, "name")),
                              "input",
                              json_is_object(args) ? json_incref(UNCONST(args))
                                                   : json_object())),
                err) != 0)
            return -1;
    }
    s->a_cur = order;
    snprintf(s->tool_id, sizeof(s->tool_id), "toolu_%d",
             s->a_first + (int)order + 1);
    if (term_out_end_message(s->out, "tool_use", &s->conv->last) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

int
term_calls_on_call(struct term_calls *s, const struct loop_call *c,
                   struct status_error *err)
{
    return announce(s, c, s->tty == NULL, err);
}

int
term_calls_on_result(struct term_calls *s, const struct loop_call *c,
                     const struct loop_result *r, struct status_error *err)
{
    const char *content;
    bool is_error;

    snprintf(s->tool_id, sizeof(s->tool_id), "toolu_%d",
             s->a_first + (int)call_order(s, c) + 1);
    if (s->stashed && s->st_part == c->part) {
        content = s->st_content;
        is_error = s->st_error;
    } else { /* answered by the loop itself (past the calls' cap) */
        const json_t *e = json_object_get(r->response, "error");
        content = json_is_string(e) ? json_string_value(e)
                                    : json_text(s->a, r->response);
        is_error = !r->ok;
        if (content == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    s->stashed = false;
    return term_out_emit_err(
        s->out,
        term_sj_tool_result(s->tool_id, content, is_error,
                            is_error ? NULL : s->st_structured),
        err);
}

/* Answer call `c` with an error the model reads and the transcript shows. */
static int
refuse(struct term_calls *s, const char *shown, const char *to_model,
       struct loop_result *r, struct status_error *err)
{
    r->response = arena_take_json(
        s->a, json_pack("{s:s}", "error", to_model ? to_model : shown));
    if (r->response == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    r->ok = false;
    s->stashed = true;
    s->st_content = shown;
    s->st_error = true;
    s->st_structured = NULL;
    return LOOP_ANSWER_IT;
}

static int
deny(struct term_calls *s, const struct loop_call *c, const char *why,
     struct loop_result *r, struct status_error *err)
{
    if (json_array_append_new(s->denials,
                              json_pack("{s:s, s:s, s:O}", "tool_name", c->name,
                                        "tool_use_id", s->tool_id, "tool_input",
                                        UNCONST(c->args))) != 0)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return refuse(s, why, NULL, r, err);
}

/*
 * Why our own policy denied a call (a rule, or the mode), for the
 * tool_result; and, as SDK 0.3's Claude Code does, the advisory system
 * message `permission_denied` saying so (a host that asked nothing learns
 * it was not asked). NULL when out of memory.
 */
static const char *
denial_text(struct term_calls *s, const char *tool,
            const struct decide_result *d)
{
    bool rule = d->reason == DECIDE_BY_RULE_DENY;
    const char *why = arena_strdup(s->a, d->text);

    if (why != NULL &&
        term_out_emit(s->out,
                      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type",
                                "system", "subtype", "permission_denied",
                                "tool_name", tool, "tool_use_id", s->tool_id,
                                "message", why, "decision_reason_type",
                                rule ? "rule" : "mode", "decision_reason",
                                rule ? "--disallowedTools"
                                     : term_mode_name(s->tools->mode))) != 0)
        return NULL;
    return why;
}

/* What the model reads when the user answers no at the terminal. */
#define TTY_DENIED                                                             \
    "The user denied this call of %s at the terminal: it did not run. Do "     \
    "not try it again another way; say what you wanted to do and wait "        \
    "for the user."

/* Ask the person at the terminal; "always" adds the tool to the session's
 * allow rules, so its next calls are not asked again. */
static int
ask_tty(struct term_calls *s, const struct term_tool *t, const json_t *input,
        const char **why)
{
    switch (tty_ask(s->tty, t->name, input)) {
    case TTY_ALWAYS: /* past the rules' bound, or out of memory: once */
        term_tools_allow(s->tools, t->name);
        return TERM_ALLOW;
    case TTY_YES:
        return TERM_ALLOW;
    case TTY_NO:
        break;
    }
    /* Ctrl-C at the question: no, and the prompt ends */
    *why = ts_interrupted(s) ? "interrupted by the user"
                             : arena_printf(s->a, TTY_DENIED, t->name);
    return TERM_DENY;
}

/*
 * The turn was interrupted with call `c` answered (stashed): the loop
 * will not tell of that answer, so we do; then the loop ends (and the
 * prompt with an error result: term_session_prompt()).
 */
static int
stop_turn(struct term_calls *s, struct status_error *err)
{
    if (term_out_emit_err(
            s->out,
            term_sj_tool_result(s->tool_id, s->st_content, s->st_error,
                                s->st_error ? NULL : s->st_structured),
            err) != 0)
        return -1;
    s->stashed = false;
    /* the turn's later calls were announced (all the blocks of a message
     * come first): each gets a tool_result, so none is left pending */
    for (size_t k = s->a_cur + 2; k <= s->a_done; k++) {
        char id[32];
        snprintf(id, sizeof(id), "toolu_%d", s->a_first + (int)k);
        if (term_out_emit_err(
                s->out,
                term_sj_tool_result(id, "interrupted by the user", true, NULL),
                err) != 0)
            return -1;
    }
    return status_set(err, ST_CLIENT_GONE, "interrupted by the user");
}

int
ts_decide(void *ctx, const struct loop_call *c, struct loop_result *r,
          struct status_error *err)
{
    struct term_calls *s = ctx;
    const struct term_tool *t = ts_find_tool(s, c->name);
    const json_t *input = c->args;
    const char *why = NULL;
    bool over_stdio = s->args->prompt_stdio && s->args->in_stream;
    struct decide_result d;
    int v = TERM_ALLOW, rc;

    if (announce(s, c, s->tty == NULL, err) != 0)
        return -1;
    s->st_part = c->part;
    if (t == NULL)
        return refuse(
            s, arena_printf(s->a, "Error: No such tool available: %s", c->name),
            NULL, r, err);
    /* the engine decides (registry/decide.h); a question goes over stdin
     * (--permission-prompt-tool stdio) or to the terminal */
    struct decide_input in = {
        .caller = DECIDE_TERMINAL,
        .call = {t->name, input},
        .side_effects = t->act->side_effects,
        .edit = t->edit,
        .mode = term_perm_mode(s->tools->mode),
        .allow_rules = s->tools->rules.allow,
        .deny_rules = s->tools->rules.deny,
        .can_ask = over_stdio || (s->tty != NULL && tty_can_ask(s->tty)),
    };
    switch (decide_judge(&in, &d)) {
    case DECIDE_ASK:
        v = over_stdio ? ts_ask_stdio(s, t, &input, &why, err)
                       : ask_tty(s, t, input, &why);
        break;
    case DECIDE_RUN:
        break;
    default:
        v = TERM_DENY;
        why = denial_text(s, t->name, &d);
    }
    if (v < 0)
        return -1;
    if (v != TERM_ALLOW && why == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (v != TERM_ALLOW && s->ctl->interrupted) {
        /* the call is denied and the prompt ends here: no more steps */
        if (deny(s, c, why, r, err) < 0)
            return -1;
        return stop_turn(s, err);
    }
    if (v != TERM_ALLOW)
        return deny(s, c, why, r, err);
    if (ts_interrupted(s)) { /* came after the permission, before the run */
        if (refuse(s, "interrupted by the user", NULL, r, err) < 0)
            return -1;
        return stop_turn(s, err);
    }
    rc = run_tool(s, t, input, r, err);
    if (rc >= 0 && s->ctl->interrupted) /* while it ran: it stopped, or ended */
        return stop_turn(s, err);
    return rc;
}

/* Run tool `t` on `input` (permitted): its answer in `r` and stashed. */
static int
run_tool(struct term_calls *s, const struct term_tool *t, const json_t *input,
         struct loop_result *r, struct status_error *err)
{
    struct status_error failed = {0};
    json_t *out = NULL;
    int rc;

    r->action = t->act->name;
    long t0 = monotime_ms();
    rc = action_run(&s->tools->actions_env, t->act, &s->who, input, s->a, &out,
                    &failed);
    r->ms = monotime_ms() - t0;
    if (failed.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "%s", failed.text);
    if (rc == 0) {
        const json_t *text = json_object_get(out, "text");
        r->ok = true;
        r->response = arena_take_json(s->a, json_pack("{s:O}", "result", out));
        s->stashed = true;
        s->st_error = false;
        s->st_structured = out;
        s->st_content = json_is_string(text) ? json_string_value(text)
                                             : json_text(s->a, out);
        if (r->response == NULL || s->st_content == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        return LOOP_ANSWER_IT;
    }
    if (rc == ACTION_ASKS_USER) /* no one to ask in the terminal yet */
        return refuse(s,
                      "Error: this tool asks the user a question, which "
                      "the terminal client cannot relay",
                      NULL, r, err);
    if (failed.code == ST_SCHEMA) {
        /* details on stderr and to the model; the transcript says which */
        char line[STATUS_TEXT_MAX + 64];
        status_text(&failed, line, sizeof(line));
        fprintf(stderr, "gemini-agent chat: %s: %s\n", t->name, line);
        return refuse(
            s,
            arena_printf(s->a,
                         "InputValidationError: %s failed: the arguments do "
                         "not match its input schema",
                         t->name),
            arena_printf(s->a, "invalid arguments: %s; the tool did not run",
                         line),
            r, err);
    }
    return refuse(s, arena_strdup(s->a, failed.text), NULL, r, err);
}
