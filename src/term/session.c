/*
 * session.c - one `gemini-agent chat` session (session.h).
 *
 * Order of a prompt: system/init; then, per Gemini answer, an assistant
 * message per content block (its text, each tool_use) and a user message
 * per tool_result; then one result. The loop (agent/loop.h) asks decide()
 * who answers each call: we answer every one ourselves (LOOP_ANSWER_IT),
 * because the terminal's tools are declared under their own names
 * (`Read`, not `action_file_edit_Read`) and map back through our own
 * table, and because the permission check (perm.h, maybe a can_use_tool
 * round trip on stdin) comes between the call and its run.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session.h"
#include "agent/loop.h"
#include "agent/toolbridge.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "gemini/gemini.h"
#include "plugins/builtin.h"
#include "plugins/mcp.h"
#include "registry/action.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "store/store.h"
#include "agent/turn.h"
#include "term/compact.h"
#include "term/keep.h"
#include "term/input.h"
#include "term/auth.h"
#include "term/perm.h"
#include "term/streamjson.h"
#include "term/tty.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* The plugins the terminal exposes (README "Terminal client"). */
static char plugin_cli[] = "cli", plugin_file_edit[] = "file_edit";
static char *terminal_plugins[] = {plugin_cli, plugin_file_edit, NULL};

/* The one whose tools acceptEdits allows. */
#define EDIT_PLUGIN "file_edit"

#define BASE_INSTRUCTION                                                     \
    "You are gemini-agent, a coding agent working in the user's terminal, " \
    "in the folder %s. Use the tools you are given to read and change "      \
    "files and to run commands there; a call may be refused by the user's " \
    "permission settings, then say what you would have done. Answer "        \
    "briefly."

struct term_tool {
    const char *name; /* as declared to Gemini, e.g. "Read" */
    const struct plugin_action *act;
    bool edit;
};

struct term_session {
    const struct term_args *args;
    FILE *in, *out;
    enum term_mode mode;
    char *model; /* heap */
    char *next_model; /* set_model during a prompt: for the next (heap) */
    char session_id[BOUND_TERM_SESSION_ID + 1];
    char cwd[PATH_MAX];
    const char *key_source; /* apiKeySource */
    struct term_auth auth;  /* the credential (term/auth.h) */
    struct config *cfg;     /* agent.yaml, when there is one; or NULL */
    json_t *plugins_conf;   /* plugins.config as the terminal uses it */
    char **expose;          /* plugins.expose as the terminal uses it */
    struct term_rules rules;
    struct config_gemini gemini;
    struct config_actions actions_env;
    struct config_plugins plugins_cfg;
    struct plugin_set *set;
    struct term_tool *tools;
    size_t ntools;
    json_t *tools_json; /* [{"functionDeclarations": [...]}], or NULL */
    char *system;       /* heap */
    struct gemini g;
    bool g_ok;
    struct store *keep; /* the saved sessions (keep.h); NULL: not saved */
    bool saved;         /* ... and this one was, at least once */
    struct config_compaction compaction;
    long context_tokens; /* the last call's prompt and answer */
    struct loop_usage used; /* over the session, every prompt's */
    double cost;            /* ... and what it cost */
    struct arena a;    /* one prompt's (reset after each) */
    struct arena life; /* the session's: its rules, its data folder */
    json_t *contents;
    bool initialized; /* the initialize control request was answered */
    struct term_input input; /* stdin's lines (stream-json input) */
    volatile sig_atomic_t *sigflag; /* term_session_watch(); or NULL */
    const char *line;        /* the last one read (input's) */
    struct action_who who;   /* tools learn of an interrupt through it */
    long req_seq;

    /* one prompt */
    struct loop_usage total, last;
    struct loop_usage extra; /* a compaction's call, not the loop's */
    int num_turns, tool_seq;
    int msg_seq; /* over the session: message ids stay unique */
    char msg_id[32];
    char tool_id[32]; /* the id of the call being answered */
    /* The model turn whose calls are being answered: contents[a_turn];
     * its calls' tool_use ids are toolu_<a_first + 1 + their order>, and
     * the first a_done of them were written. */
    bool a_valid;
    size_t a_turn, a_done, a_cur; /* a_cur: the order of the call answered */
    int a_first;
    size_t st_part; /* the call whose tool_result is stashed (its part) */
    bool stashed; /* decide() left the tool_result's content here */
    const char *st_content;
    bool st_error;
    const json_t *st_structured;
    json_t *denials;
    const char *last_text;
    long api_ms, api_start;
    bool api_open; /* a Gemini call started and has not answered */
    bool interrupted;
    enum loop_end end; /* how the loop ended (when it did not fail) */
    bool block_open; /* --include-partial-messages: a text block */
    bool msg_open;   /* ... its message, not yet ended (end_message) */
    bool out_failed;
    struct tty *tty; /* a person at a terminal reads us (borrowed), or NULL */
};

/* --- writing ------------------------------------------------------------ */

/* A message of the stream: written only for stream-json output. */
static int
emit(struct term_session *s, json_t *msg)
{
    if (msg == NULL) {
        s->out_failed = true;
        return -1;
    }
    if (s->tty != NULL) { /* the same messages, rendered for a person */
        int rc = tty_message(s->tty, msg);
        json_decref(msg);
        if (rc != 0)
            s->out_failed = true;
        return rc;
    }
    if (s->args->out != TERM_FMT_STREAM) {
        json_decref(msg);
        return 0;
    }
    if (term_sj_emit(s->out, s->session_id, msg) != 0) {
        s->out_failed = true;
        return -1;
    }
    return 0;
}

static int
emit_err(struct term_session *s, json_t *msg, struct status_error *err)
{
    if (emit(s, msg) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

/* A system message of subtype "error": no key, Gemini refused the key. */
static void
system_error(const struct term_args *args, FILE *out, const char *session_id,
             const char *text)
{
    if (args->out == TERM_FMT_TEXT) {
        fprintf(stderr, "gemini-agent chat: %s\n", text);
        return;
    }
    term_sj_emit(out, session_id,
                 json_pack("{s:s, s:s, s:s}", "type", "system", "subtype",
                           "error", "error", text));
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

/* --- the sink ------------------------------------------------------------ */

static json_t *
last_usage(const struct term_session *s)
{
    return term_sj_usage(&s->last);
}

static int
partial_event(struct term_session *s, json_t *event)
{
    return emit(s, json_pack("{s:s, s:o, s:n}", "type", "stream_event",
                             "event", event, "parent_tool_use_id"));
}

/* The end of a streamed text block and of its message. */
static int
close_block(struct term_session *s)
{
    if (!s->block_open)
        return 0;
    s->block_open = false;
    s->msg_open = true;
    return partial_event(s, json_pack("{s:s, s:i}", "type",
                                      "content_block_stop", "index", 0));
}

/*
 * The end of a streamed message, after its blocks' own messages, as
 * Claude's stream ends one: message_delta with why it stopped ("end_turn",
 * "tool_use", "max_tokens"; NULL when it failed), then message_stop.
 */
static int
end_message(struct term_session *s, const char *stop_reason)
{
    if (close_block(s) != 0)
        return -1;
    if (!s->msg_open)
        return 0;
    s->msg_open = false;
    if (partial_event(s, json_pack("{s:s, s:{s:s?, s:n}, s:o}", "type",
                                   "message_delta", "delta", "stop_reason",
                                   stop_reason, "stop_sequence", "usage",
                                   last_usage(s))) != 0 ||
        partial_event(s, json_pack("{s:s}", "type", "message_stop")) != 0)
        return -1;
    return 0;
}

static int
on_delta(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct term_session *s = ctx;

    if (!s->block_open) {
        char id[32];
        snprintf(id, sizeof(id), "msg_%d", s->msg_seq + 1);
        if (partial_event(
                s, json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:n, "
                             "s:o}}",
                             "type", "message_start", "message", "id", id,
                             "type", "message", "role", "assistant", "model",
                             s->model, "content", "stop_reason",
                             "stop_sequence", "usage",
                             last_usage(s))) != 0 ||
            partial_event(s, json_pack("{s:s, s:i, s:{s:s, s:s}}", "type",
                                       "content_block_start", "index", 0,
                                       "content_block", "type", "text",
                                       "text", "")) != 0)
            return status_set(err, ST_INTERNAL, "cannot write the output");
        s->block_open = true;
    }
    if (partial_event(s, json_pack("{s:s, s:i, s:{s:s, s:s%}}", "type",
                                   "content_block_delta", "index", 0, "delta",
                                   "type", "text_delta", "text", text,
                                   len)) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static int
on_status(void *ctx, enum loop_status st, const char *tool,
          struct status_error *err)
{
    struct term_session *s = ctx;

    (void)tool;
    (void)err;
    if (st == LOOP_THINKING) {
        s->api_start = monotime_ms();
        s->api_open = true;
    }
    return 0;
}

static long
minus(long a, long b)
{
    return a > b ? a - b : 0;
}

static int
on_usage(void *ctx, const struct loop_usage *total, const char *model,
         struct status_error *err)
{
    struct term_session *s = ctx;

    (void)model; /* the model asked for names the messages, as Claude's do */
    s->api_ms += minus(monotime_ms(), s->api_start);
    s->api_open = false;
    s->last.prompt = minus(total->prompt, s->total.prompt);
    s->last.candidates = minus(total->candidates, s->total.candidates);
    s->last.thoughts = minus(total->thoughts, s->total.thoughts);
    s->last.cached = minus(total->cached, s->total.cached);
    s->total = *total;
    s->context_tokens = s->last.prompt + s->last.candidates;
    s->num_turns++;
    snprintf(s->msg_id, sizeof(s->msg_id), "msg_%d", ++s->msg_seq);
    if (close_block(s) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static int
on_text(void *ctx, const char *text, struct status_error *err)
{
    struct term_session *s = ctx;

    s->last_text = arena_strdup(&s->a, text);
    if (s->last_text == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return emit_err(s,
                    term_sj_assistant(s->msg_id, s->model,
                                      json_pack("{s:s, s:s}", "type", "text",
                                                "text", text),
                                      last_usage(s)),
                    err);
}

/* The order of call `c` among its turn's calls (its functionCall
 * parts before it). */
static size_t
call_order(const struct term_session *s, const struct loop_call *c)
{
    const json_t *parts = json_object_get(
        json_array_get(s->contents, c->turn), "parts");
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
announce(struct term_session *s, const struct loop_call *c, bool all,
         struct status_error *err)
{
    const json_t *parts = json_object_get(
        json_array_get(s->contents, c->turn), "parts");
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
        if (emit_err(s,
                     term_sj_assistant(
                         s->msg_id, s->model,
                         json_pack("{s:s, s:s, s:s, s:o}", "type",
                                   "tool_use", "id", id, "name",
                                   json_string_value(
                                       json_object_get(fc, "name")),
                                   "input",
                                   json_is_object(args)
                                       ? json_incref(UNCONST(args))
                                       : json_object()),
                         last_usage(s)),
                     err) != 0)
            return -1;
    }
    s->a_cur = order;
    snprintf(s->tool_id, sizeof(s->tool_id), "toolu_%d",
             s->a_first + (int)order + 1);
    if (end_message(s, "tool_use") != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static int
on_tool_call(void *ctx, const struct loop_call *c, bool handed_back,
             struct status_error *err)
{
    struct term_session *s = ctx;

    (void)handed_back;
    return announce(s, c, s->tty == NULL, err);
}

static int
on_tool_result(void *ctx, const struct loop_call *c,
               const struct loop_result *r, struct status_error *err)
{
    struct term_session *s = ctx;
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
                                    : json_text(&s->a, r->response);
        is_error = !r->ok;
        if (content == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    s->stashed = false;
    return emit_err(s,
                    term_sj_tool_result(s->tool_id, content, is_error,
                                        is_error ? NULL : s->st_structured),
                    err);
}

/* --- permission over stdin (can_use_tool) ------------------------------- */

static int handle_control(struct term_session *s, const json_t *msg,
                          bool in_turn);

/* Wait for the next line of the input, into s->line; its length, or -1
 * at the end (or a line past the bound: said on stderr). */
static long
read_line(struct term_session *s)
{
    long n = term_input_line(&s->input, -1, &s->line);

    return n < 0 ? -1 : n;
}

/*
 * A line that came while a turn runs: a control request is answered at
 * once (an interrupt marks the turn interrupted), a user message waits
 * for after the turn. Anything else is returned, parsed (the caller's:
 * a control_response), or NULL.
 */
static json_t *
turn_line(struct term_session *s, const char *line)
{
    json_t *m = json_loads(line, 0, NULL);
    const char *type = json_string_value(json_object_get(m, "type"));

    if (type != NULL && strcmp(type, "control_request") == 0) {
        handle_control(s, m, true);
    } else if (type != NULL && strcmp(type, "user") == 0) {
        term_input_defer(&s->input, line);
    } else if (type != NULL) {
        return m;
    }
    json_decref(m);
    return NULL;
}

/*
 * Has the user interrupted the turn? With stream-json input, first take
 * what came on stdin meanwhile (without waiting: turn_line()). Asked
 * while Gemini answers (the client's `gone`, so the transfer is dropped)
 * and while a tool runs (ctx->cancelled).
 */
static bool
interrupted(struct term_session *s)
{
    const char *line;

    if (s->sigflag != NULL && *s->sigflag) { /* Ctrl-C at the terminal */
        *s->sigflag = 0;
        s->interrupted = true;
        if (s->tty != NULL)
            tty_echoed(s->tty); /* its ^C */
    }
    if (!s->args->in_stream)
        return s->interrupted;
    while (!s->interrupted &&
           term_input_line(&s->input, 0, &line) >= 0)
        json_decref(turn_line(s, line)); /* no answer is awaited now */
    return s->interrupted;
}

static bool
gone_cb(void *ctx)
{
    return interrupted(ctx);
}

/*
 * Ask the SDK whether `tool` may run with `*input`: a can_use_tool
 * control request, then stdin until its answer. Other control requests
 * are answered meanwhile; user messages wait for after the turn.
 * Returns TERM_ALLOW (with *input maybe replaced by updatedInput, pinned)
 * or TERM_DENY with *why; -1 with `err` when out of memory.
 */
static int
ask_stdio(struct term_session *s, const struct term_tool *t,
          const json_t **input, const char **why, struct status_error *err)
{
    const char *tool = t->name;
    char id[48];

    snprintf(id, sizeof(id), "perm_%ld", ++s->req_seq);
    if (term_sj_emit_raw(
            s->out,
            json_pack("{s:s, s:s, s:{s:s, s:s, s:O, s:s, s:o}}", "type",
                      "control_request", "request_id", id, "request",
                      "subtype", "can_use_tool", "tool_name", tool, "input",
                      UNCONST(*input), "tool_use_id", s->tool_id,
                      "permission_suggestions",
                      term_perm_suggest(tool, *input, t->edit))) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    for (;;) {
        json_t *m, *resp;
        const char *type, *sub, *rid;

        if (read_line(s) < 0) {
            *why = "the permission prompt got no answer (input closed)";
            return TERM_DENY;
        }
        m = turn_line(s, s->line);
        if (s->interrupted) {
            json_decref(m);
            *why = "interrupted by the user";
            return TERM_DENY;
        }
        if (m == NULL)
            continue;
        type = json_string_value(json_object_get(m, "type"));
        resp = json_object_get(m, "response");
        rid = json_string_value(json_object_get(resp, "request_id"));
        if (type == NULL || strcmp(type, "control_response") != 0 || rid == NULL ||
            strcmp(rid, id) != 0) {
            json_decref(m);
            continue;
        }
        sub = json_string_value(json_object_get(resp, "subtype"));
        if (sub != NULL && strcmp(sub, "success") == 0) {
            const json_t *res = json_object_get(resp, "response");
            const char *behavior =
                json_string_value(json_object_get(res, "behavior"));
            if (behavior != NULL && strcmp(behavior, "allow") == 0) {
                json_t *upd = json_object_get(res, "updatedInput");
                struct status_error uerr = {0};
                if (json_is_object(upd))
                    *input = arena_take_json(&s->a, json_incref(upd));
                /* "always allow" and the like: the session's rules grow
                 * (a bad update is said, the call still allowed) */
                if (term_perm_update(json_object_get(res,
                                                     "updatedPermissions"),
                                     &s->life, &s->rules, &s->mode,
                                     &uerr) != 0)
                    fprintf(stderr,
                            "gemini-agent chat: updatedPermissions: %s; "
                            "the rest ignored\n",
                            uerr.text);
                json_decref(m);
                return *input ? TERM_ALLOW
                              : status_set(err, ST_NO_MEMORY,
                                           "out of memory");
            }
            *why = arena_strdup(
                &s->a, json_string_value(json_object_get(res, "message"))
                           ? json_string_value(json_object_get(res, "message"))
                           : "denied by the user");
            if (json_is_true(json_object_get(res, "interrupt")))
                s->interrupted = true;
        } else {
            const char *e = json_string_value(json_object_get(resp, "error"));
            *why = arena_printf(&s->a, "Tool permission request failed: %s",
                                e ? e : "no answer");
        }
        json_decref(m);
        return *why ? TERM_DENY
                    : status_set(err, ST_NO_MEMORY, "out of memory");
    }
}

/* --- who answers a call -------------------------------------------------- */

static const struct term_tool *
find_tool(const struct term_session *s, const char *name)
{
    for (size_t i = 0; i < s->ntools; i++)
        if (strcmp(s->tools[i].name, name) == 0)
            return &s->tools[i];
    return NULL;
}

/* Answer call `c` with an error the model reads and the transcript shows. */
static int
refuse(struct term_session *s, const char *shown, const char *to_model,
       struct loop_result *r, struct status_error *err)
{
    r->response = arena_take_json(
        &s->a, json_pack("{s:s}", "error", to_model ? to_model : shown));
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
deny(struct term_session *s, const struct loop_call *c, const char *why,
     struct loop_result *r, struct status_error *err)
{
    if (json_array_append_new(
            s->denials,
            json_pack("{s:s, s:s, s:O}", "tool_name", c->name, "tool_use_id",
                      s->tool_id, "tool_input", UNCONST(c->args))) != 0)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return refuse(s, why, NULL, r, err);
}

/* Did a --disallowedTools rule deny this call (not the mode)? */
static bool
denied_by_rule(const struct term_session *s, const char *tool,
               const json_t *input)
{
    for (size_t i = 0; i < s->rules.ndeny; i++)
        if (term_rule_matches(&s->rules.deny[i], tool, input))
            return true;
    return false;
}

/*
 * Why our own policy denied a call (a rule, or the mode), for the
 * tool_result; and, as SDK 0.3's Claude Code does, the advisory system
 * message `permission_denied` saying so (a host that asked nothing learns
 * it was not asked). NULL when out of memory.
 */
static const char *
denial_text(struct term_session *s, const char *tool, const json_t *input)
{
    bool rule = denied_by_rule(s, tool, input);
    const char *why;

    if (rule)
        why = arena_printf(&s->a,
                           "Permission to use %s denied: --disallowedTools "
                           "forbids this call.",
                           tool);
    else if (s->mode == TERM_MODE_PLAN)
        why = arena_printf(&s->a,
                           "Permission to use %s denied: plan mode runs "
                           "nothing with side effects.",
                           tool);
    else
        why = arena_printf(&s->a,
                           "Permission to use %s denied: it has side effects "
                           "and the permission mode %s does not allow it "
                           "without asking (allow it with --allowedTools or "
                           "--permission-mode).",
                           tool, term_mode_name(s->mode));
    if (why != NULL &&
        emit(s, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type",
                          "system", "subtype", "permission_denied",
                          "tool_name", tool, "tool_use_id", s->tool_id,
                          "message", why, "decision_reason_type",
                          rule ? "rule" : "mode", "decision_reason",
                          rule ? "--disallowedTools"
                               : term_mode_name(s->mode))) != 0)
        return NULL;
    return why;
}

/* What the model reads when the user answers no at the terminal. */
#define TTY_DENIED                                                          \
    "The user denied this call of %s at the terminal: it did not run. Do " \
    "not try it again another way; say what you wanted to do and wait "    \
    "for the user."

/* Ask the person at the terminal; "always" adds the tool to the session's
 * allow rules, so its next calls are not asked again. */
static int
ask_tty(struct term_session *s, const struct term_tool *t,
        const json_t *input, const char **why)
{
    switch (tty_ask(s->tty, t->name, input)) {
    case TTY_ALWAYS:
        if (s->rules.nallow < BOUND_TERM_RULES)
            s->rules.allow[s->rules.nallow++] =
                (struct term_rule){t->name, NULL, false};
        return TERM_ALLOW;
    case TTY_YES:
        return TERM_ALLOW;
    case TTY_NO:
        break;
    }
    /* Ctrl-C at the question: no, and the prompt ends */
    *why = interrupted(s) ? "interrupted by the user"
                          : arena_printf(&s->a, TTY_DENIED, t->name);
    return TERM_DENY;
}

/*
 * The turn was interrupted with call `c` answered (stashed): the loop
 * will not tell of that answer, so we do; then the loop ends (and the
 * prompt with an error result: term_session_prompt()).
 */
static int
stop_turn(struct term_session *s, struct status_error *err)
{
    if (emit_err(s,
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
        if (emit_err(s,
                     term_sj_tool_result(id, "interrupted by the user", true,
                                         NULL),
                     err) != 0)
            return -1;
    }
    return status_set(err, ST_CLIENT_GONE, "interrupted by the user");
}

static int run_tool(struct term_session *s, const struct term_tool *t,
                    const json_t *input, struct loop_result *r,
                    struct status_error *err);

static int
decide(void *ctx, const struct loop_call *c, struct loop_result *r,
       struct status_error *err)
{
    struct term_session *s = ctx;
    const struct term_tool *t = find_tool(s, c->name);
    const json_t *input = c->args;
    const char *why = NULL;
    int v, rc;

    if (announce(s, c, s->tty == NULL, err) != 0)
        return -1;
    s->st_part = c->part;
    if (t == NULL)
        return refuse(s,
                      arena_printf(&s->a, "Error: No such tool available: %s",
                                   c->name),
                      NULL, r, err);
    v = term_perm_decide(s->mode, &s->rules, t->name, input,
                         t->act->side_effects, t->edit);
    if (v == TERM_ASK && s->args->prompt_stdio && s->args->in_stream)
        v = ask_stdio(s, t, &input, &why, err);
    else if (v == TERM_ASK && s->tty != NULL && tty_can_ask(s->tty))
        v = ask_tty(s, t, input, &why);
    else if (v != TERM_ALLOW)
        why = denial_text(s, t->name, input);
    if (v < 0)
        return -1;
    if (v != TERM_ALLOW && why == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (v != TERM_ALLOW && s->interrupted) {
        /* the call is denied and the prompt ends here: no more steps */
        if (deny(s, c, why, r, err) < 0)
            return -1;
        return stop_turn(s, err);
    }
    if (v != TERM_ALLOW)
        return deny(s, c, why, r, err);
    if (interrupted(s)) { /* came after the permission, before the run */
        if (refuse(s, "interrupted by the user", NULL, r, err) < 0)
            return -1;
        return stop_turn(s, err);
    }
    rc = run_tool(s, t, input, r, err);
    if (rc >= 0 && s->interrupted) /* while it ran: it stopped, or ended */
        return stop_turn(s, err);
    return rc;
}

/* Run tool `t` on `input` (permitted): its answer in `r` and stashed. */
static int
run_tool(struct term_session *s, const struct term_tool *t,
         const json_t *input, struct loop_result *r, struct status_error *err)
{
    struct status_error failed = {0};
    json_t *out = NULL;
    int rc;

    r->action = t->act->name;
    long t0 = monotime_ms();
    rc = action_run(&s->actions_env, t->act, &s->who, input, &s->a, &out,
                    &failed);
    r->ms = monotime_ms() - t0;
    if (failed.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "%s", failed.text);
    if (rc == 0) {
        const json_t *text = json_object_get(out, "text");
        r->ok = true;
        r->response = arena_take_json(&s->a,
                                      json_pack("{s:O}", "result", out));
        s->stashed = true;
        s->st_error = false;
        s->st_structured = out;
        s->st_content = json_is_string(text) ? json_string_value(text)
                                             : json_text(&s->a, out);
        if (r->response == NULL || s->st_content == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        return LOOP_ANSWER_IT;
    }
    if (rc == ACTION_ASKS_USER) /* no one to ask in the terminal yet */
        return refuse(s, "Error: this tool asks the user a question, which "
                         "the terminal client cannot relay",
                      NULL, r, err);
    if (failed.code == ST_SCHEMA) {
        /* details on stderr and to the model; the transcript says which */
        char line[STATUS_TEXT_MAX + 64];
        status_text(&failed, line, sizeof(line));
        fprintf(stderr, "gemini-agent chat: %s: %s\n", t->name, line);
        return refuse(
            s,
            arena_printf(&s->a,
                         "InputValidationError: %s failed: the arguments do "
                         "not match its input schema",
                         t->name),
            arena_printf(&s->a, "invalid arguments: %s; the tool did not run",
                         line),
            r, err);
    }
    return refuse(s, arena_strdup(&s->a, failed.text), NULL, r, err);
}

/* --- one prompt ---------------------------------------------------------- */

/* init's mcp_servers and mcp_status's mcpServers: [{name, status}] of
 * the servers of the built-in mcp plugin, when it takes part (a new
 * reference; NULL when out of memory). */
static json_t *
mcp_servers(const struct term_session *s)
{
    const struct gemini_agent_plugin *mcp =
        builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    json_t *list = json_array();
    const char *name;

    for (size_t i = 0; list != NULL && i < s->set->nso; i++) {
        const struct so_plugin *p = &s->set->so[i];
        if (p->ops != mcp || p->role != SO_EXPOSED)
            continue;
        for (size_t k = 0; (name = mcp_server_name(p->self, k)) != NULL;
             k++) {
            if (json_array_append_new(list,
                                      json_pack("{s:s, s:s}", "name", name,
                                                "status", "connected")) !=
                0) {
                json_decref(list);
                return NULL;
            }
        }
    }
    return list;
}

static json_t *
init_message(struct term_session *s)
{
    json_t *tools = json_array();
    json_t *m;

    for (size_t i = 0; tools != NULL && i < s->ntools; i++)
        json_array_append_new(tools, json_string(s->tools[i].name));
    m = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:[s], s:s, "
                  "s:s, s:s, s:[], s:[], s:[]}",
                  "type", "system", "subtype", "init", "cwd", s->cwd,
                  "session_id", s->session_id, "tools", tools, "mcp_servers",
                  mcp_servers(s), "model", s->model, "permissionMode",
                  term_mode_name(s->mode), "slash_commands", "compact",
                  "apiKeySource",
                  s->key_source, "claude_code_version",
                  TERM_PROTOCOL_VERSION, "output_style", "default", "agents",
                  "skills", "plugins");
    return m;
}

static void
reset_prompt(struct term_session *s)
{
    if (s->next_model != NULL) { /* set_model came during the last one */
        free(s->model);
        s->model = s->next_model;
        s->next_model = NULL;
    }
    memset(&s->total, 0, sizeof(s->total));
    memset(&s->last, 0, sizeof(s->last));
    s->num_turns = 0;
    /* an error before any answer still needs an id of its own */
    snprintf(s->msg_id, sizeof(s->msg_id), "msg_%d", s->msg_seq + 1);
    s->a_valid = s->stashed = false;
    if (s->sigflag != NULL) /* a Ctrl-C before the prompt is not for it */
        *s->sigflag = 0;
    s->last_text = NULL;
    s->api_ms = 0;
    s->api_open = false;
    s->interrupted = false;
    s->block_open = s->msg_open = false;
    memset(&s->extra, 0, sizeof(s->extra));
    json_decref(s->denials);
    s->denials = json_array();
}

/* Claude's assistant `error` for a failed Gemini call. */
static const char *
api_error_kind(enum status code)
{
    switch (code) {
    case ST_UPSTREAM_AUTH:
        return "authentication_failed";
    case ST_UPSTREAM_RATE:
        return "rate_limit";
    case ST_UPSTREAM_REJECTED:
        return "invalid_request";
    case ST_UPSTREAM_DOWN:
    case ST_UPSTREAM_TIMEOUT:
    case ST_UPSTREAM_BAD:
        return "server_error";
    default:
        return NULL; /* not Gemini's answer: our own failure */
    }
}

/*
 * The loop failed with `err`: tell of it as Claude Code tells of an API
 * error (an assistant message with the text and `error`), or, when
 * Gemini refused the key, with a system error message. Returns the text
 * for the result's `errors`.
 */
static const char *
failure(struct term_session *s, const struct status_error *err)
{
    char line[STATUS_TEXT_MAX + 64];
    const char *kind = api_error_kind(err->code);
    const char *msg;
    json_t *am;

    end_message(s, NULL);
    if (s->interrupted)
        return "interrupted by the user";
    status_text(err, line, sizeof(line));
    if (kind == NULL) {
        msg = arena_strdup(&s->a, line);
        return msg ? msg : "out of memory";
    }
    msg = arena_printf(&s->a, "API Error: %s", line);
    if (msg == NULL)
        return "out of memory";
    if (err->code == ST_UPSTREAM_AUTH) {
        if (s->tty == NULL) /* at a terminal the result shows it once */
            system_error(s->args, s->out, s->session_id, msg);
        return msg;
    }
    am = term_sj_assistant(s->msg_id, s->model,
                           json_pack("{s:s, s:s}", "type", "text", "text",
                                     msg),
                           last_usage(s));
    if (am != NULL &&
        json_object_set_new(am, "error", json_string(kind)) != 0) {
        json_decref(am);
        am = NULL;
    }
    emit(s, am);
    return msg;
}

/*
 * Gemini's answer broke off and the loop asks again: Claude Code's
 * system/api_retry. A streamed text block of the broken answer is
 * closed there; its text is not part of the conversation (the loop
 * records only whole answers) and no assistant message repeats it.
 */
static int
on_retry(void *ctx, int attempt, int max, const struct status_error *why,
         struct status_error *err)
{
    struct term_session *s = ctx;
    const char *kind = api_error_kind(why->code);

    if (end_message(s, NULL) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return emit_err(s,
                    json_pack("{s:s, s:s, s:i, s:i, s:i, s:n, s:s}", "type",
                              "system", "subtype", "api_retry", "attempt",
                              attempt, "max_retries", max, "retry_delay_ms",
                              0, "error_status", "error",
                              kind ? kind : "server_error"),
                    err);
}

static int
on_done(void *ctx, enum loop_end end, const struct turn *last,
        struct status_error *err)
{
    struct term_session *s = ctx;

    (void)last;
    s->end = end;
    if (end_message(s, end == LOOP_ANSWERED    ? "end_turn"
                       : end == LOOP_TRUNCATED ? "max_tokens"
                                               : NULL) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static const struct loop_sink_ops sink_ops = {
    .retry = on_retry,
    .done = on_done,
    .text = on_text,
    .tool_call = on_tool_call,
    .tool_result = on_tool_result,
    .usage = on_usage,
    .status = on_status,
};
static const struct loop_sink_ops partial_ops = {
    .retry = on_retry,
    .done = on_done,
    .text = on_text,
    .tool_call = on_tool_call,
    .tool_result = on_tool_result,
    .usage = on_usage,
    .status = on_status,
    .delta = on_delta,
};

/* What ended the prompt, for the result. */
struct outcome {
    const char *subtype;
    bool is_error;
    const char *error; /* the `errors` entry, or NULL */
    const char *stop;  /* stop_reason, or NULL */
};

/* The prompt's usage: the loop's calls and a compaction's. */
static struct loop_usage
prompt_usage(const struct term_session *s)
{
    struct loop_usage u = s->total;

    loop_usage_add(&u.prompt, s->extra.prompt);
    loop_usage_add(&u.candidates, s->extra.candidates);
    loop_usage_add(&u.thoughts, s->extra.thoughts);
    loop_usage_add(&u.cached, s->extra.cached);
    loop_usage_add(&u.total, s->extra.total);
    u.calls += s->extra.calls;
    return u;
}

static int
write_result(struct term_session *s, const struct outcome *o, long t0)
{
    const struct loop_usage used = prompt_usage(s);
    const struct loop_usage *u = &used;
    double cost = term_sj_cost(s->model, u);
    const char *text = o->error && !s->last_text ? o->error
                       : s->last_text            ? s->last_text
                                                 : "";
    json_t *mu = json_pack(
        "{s:{s:I, s:I, s:I, s:I, s:i, s:f}}", s->model, "inputTokens",
        (json_int_t)minus(u->prompt, u->cached), "outputTokens",
        (json_int_t)(u->candidates + u->thoughts),
        "cacheReadInputTokens", (json_int_t)u->cached,
        "cacheCreationInputTokens", (json_int_t)0, "webSearchRequests", 0,
        "costUSD", cost);
    json_t *m = json_pack(
        "{s:s, s:s, s:b, s:I, s:I, s:i, s:s, s:s?, s:s, s:f, s:o, s:o, "
        "s:O}",
        "type", "result", "subtype", o->subtype, "is_error", o->is_error,
        "duration_ms", (json_int_t)(monotime_ms() - t0), "duration_api_ms",
        (json_int_t)s->api_ms, "num_turns", s->num_turns, "result", text,
        "stop_reason", o->stop, "session_id", s->session_id,
        "total_cost_usd", cost, "usage", term_sj_usage(u),
        "modelUsage", mu, "permission_denials", s->denials);
    char uuid[37];

    if (m != NULL && o->error != NULL)
        json_object_set_new(m, "errors", json_pack("[s]", o->error));
    if (m == NULL || term_uuid(uuid) != 0 ||
        json_object_set_new(m, "uuid", json_string(uuid)) != 0) {
        json_decref(m);
        return -1;
    }
    switch (s->args->out) {
    case TERM_FMT_STREAM:
    case TERM_FMT_JSON:
        return term_sj_emit_raw(s->out, m);
    case TERM_FMT_TEXT:
        if (s->tty != NULL) {
            if (tty_message(s->tty, m) != 0)
                s->out_failed = true;
        } else if (o->is_error)
            fprintf(stderr, "gemini-agent chat: %s\n", o->error ? o->error : text);
        else if (fprintf(s->out, "%s\n", text) < 0 || fflush(s->out) != 0)
            s->out_failed = true;
        json_decref(m);
        return s->out_failed ? -1 : 0;
    }
    json_decref(m);
    return 0;
}

/* --- keeping the session (keep.h) and compacting it (compact.h) ------- */

/*
 * Save the session: its history, model, folder and usage so far (this
 * prompt's included). Called before the prompt's result is written, so
 * what the host was told is kept. A failure is said on stderr only: the
 * answer stands, only --resume would miss it.
 */
static void
keep_save(struct term_session *s)
{
    const struct loop_usage u = prompt_usage(s);
    struct status_error err = {0};
    struct loop_usage all = s->used;
    char *contents;
    json_t *usage;

    if (s->keep == NULL || json_array_size(s->contents) == 0)
        return;
    loop_usage_add(&all.prompt, u.prompt);
    loop_usage_add(&all.candidates, u.candidates);
    loop_usage_add(&all.thoughts, u.thoughts);
    loop_usage_add(&all.cached, u.cached);
    contents = jsonout_dumps(s->contents, APP_JSON_FLAGS, JSONOUT_UNBOUNDED,
                             NULL);
    loop_usage_add(&all.total, u.total);
    all.calls += u.calls;
    usage = json_pack("{s:o, s:f, s:I}", "tokens", loop_usage_json(&all),
                      "costUsd", s->cost + term_sj_cost(s->model, &u),
                      "contextTokens", (json_int_t)s->context_tokens);
    const struct store_chat c = {
        .id = s->session_id,
        .cwd = s->cwd,
        .model = s->model,
        .contents = contents,
        .usage = usage,
    };
    if (contents == NULL || usage == NULL)
        status_set(&err, ST_NO_MEMORY, "out of memory");
    else if (s->keep->ops->chat_save(s->keep, &c, &err) == 0) {
        s->saved = true;
        s->used = all;
        s->cost += term_sj_cost(s->model, &u);
    }
    if (err.code != ST_OK)
        fprintf(stderr, "gemini-agent chat: the session was not saved: %s\n",
                err.text);
    free(contents);
    json_decref(usage);
}

#define COMPACT_DESCRIPTION                                                  \
    "Summarise the conversation so far, to free its context"

/* Is `text` the /compact command (Claude Code's)? */
static bool
is_compact_command(const char *text)
{
    while (*text == ' ' || *text == '\t' || *text == '\n')
        text++;
    if (strncmp(text, "/compact", 8) != 0)
        return false;
    for (text += 8; *text == ' ' || *text == '\t' || *text == '\n';)
        text++;
    return *text == '\0';
}

/*
 * Replace the oldest turns by a summary Gemini writes of them (compact.h),
 * all of them when `manual` (/compact), else all but the configured last
 * few. 1 when it compacted, 0 when there was nothing to compact, -1 with
 * `err` when the call failed (the conversation is then unchanged).
 */
static int
compact(struct term_session *s, bool manual, struct status_error *err)
{
    size_t split = term_compact_split(
        s->contents, manual ? 0 : s->compaction.keep_turns);
    struct gemini_usage gu = {0};
    char *body;
    json_t *req, *resp = NULL, *next;
    struct turn t;
    long pre = s->context_tokens;

    if (split == 0)
        return 0;
    req = term_compact_request(s->contents, split, s->system, s->tools_json);
    /* the whole history: as large as the window, past any output bound */
    body = req ? jsonout_dumps(req, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL)
               : NULL;
    json_decref(req);
    if (body == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    s->gemini.model = s->model;
    long t0 = monotime_ms();
    int rc = gemini_generate(&s->g, &s->gemini, body, strlen(body), &s->a,
                             &resp, &gu, err);
    free(body);
    s->api_ms += minus(monotime_ms(), t0);
    s->extra.calls += gu.calls;
    if (rc != 0 || turn_parse(resp, &s->a, &t, err) != 0)
        return -1;
    loop_usage_add(&s->extra.prompt, t.prompt_tokens);
    loop_usage_add(&s->extra.candidates, t.candidates_tokens);
    loop_usage_add(&s->extra.thoughts, t.thoughts_tokens);
    loop_usage_add(&s->extra.cached, t.cached_tokens);
    loop_usage_add(&s->extra.total, t.total_tokens);
    if (t.text[0] == '\0' || t.end != TURN_DONE)
        return status_set(err, ST_UPSTREAM_BAD,
                          "Gemini wrote no summary (%s)",
                          t.reason[0] ? t.reason : "empty answer");
    if ((next = term_compact_apply(s->contents, split, t.text)) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    json_decref(s->contents);
    s->contents = next;
    /* until the next call says, the summary is what the context holds */
    s->context_tokens = t.candidates_tokens;
    if (emit(s, json_pack("{s:s, s:s, s:{s:s, s:I}}", "type", "system",
                          "subtype", "compact_boundary", "compact_metadata",
                          "trigger", manual ? "manual" : "auto",
                          "pre_tokens", (json_int_t)pre)) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 1;
}

/* /compact: init, the compaction, a result saying what it did. */
static int
compact_command(struct term_session *s, long t0)
{
    struct status_error err = {0};
    struct outcome o = {"success", false, NULL, "end_turn"};
    int rc = compact(s, true, &err);

    if (s->out_failed)
        return -1;
    if (rc < 0) {
        o = (struct outcome){"error_during_execution", true, NULL, NULL};
        o.error = failure(s, &err);
    } else {
        s->last_text = rc > 0 ? "Compacted the conversation."
                              : "Nothing to compact yet.";
        keep_save(s);
    }
    if (write_result(s, &o, t0) != 0)
        return -1;
    return o.is_error ? 1 : 0;
}

static int
prompt(struct term_session *s, const char *text)
{
    struct status_error err = {0};
    /* a person reads the answer as it comes */
    struct loop_sink sink = {
        s->args->partial || s->tty ? &partial_ops : &sink_ops, s};
    struct outcome o = {"success", false, NULL, NULL};
    long t0 = monotime_ms();
    bool auth = false;
    int rc;

    reset_prompt(s);
    if (s->denials == NULL || emit(s, init_message(s)) != 0)
        return -1;
    if (is_compact_command(text))
        return compact_command(s, t0);
    if (term_compact_due(&s->compaction, s->context_tokens) &&
        compact(s, false, &err) < 0) {
        /* carry on whole: Gemini may still take it */
        char line[STATUS_TEXT_MAX + 64];
        status_text(&err, line, sizeof(line));
        fprintf(stderr, "gemini-agent chat: compaction failed: %s\n", line);
        if (s->out_failed)
            return -1;
        err = (struct status_error){0};
    }
    /* where this prompt's turns start: a prompt that fails is taken back
     * whole, so no call is left without its answer for the next one */
    size_t start = json_array_size(s->contents);
    if (json_array_append_new(s->contents,
                              json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                        "parts", "text", text)) != 0)
        return -1;
    struct loop_input in = {
        .g = &s->g,
        .gemini = &s->gemini,
        .actions = s->set,
        .action_env = &s->actions_env,
        .a = &s->a,
        .contents = s->contents,
        .tools = s->tools_json,
        .system = s->system,
        .max_steps = s->args->max_turns > 0 ? s->args->max_turns
                                            : BOUND_TERM_TURNS,
        .max_calls = DEFAULT_CALLS_PER_TURN,
        /* a stream that drops mid-answer: once more, then the error */
        .broke_retries = 1,
        .decide = decide,
        .decide_ctx = s,
    };
    s->gemini.model = s->model;
    rc = loop_run(&in, &sink, &err);
    if (s->out_failed)
        return -1;
    if (s->api_open) /* the call that failed (or was dropped) took time */
        s->api_ms += minus(monotime_ms(), s->api_start);
    if (rc != 0) {
        while (json_array_size(s->contents) > start)
            json_array_remove(s->contents, json_array_size(s->contents) - 1);
        auth = err.code == ST_UPSTREAM_AUTH;
        o.subtype = "error_during_execution";
        o.is_error = true;
        o.error = failure(s, &err);
    } else if (s->interrupted) {
        o = (struct outcome){"error_during_execution", true,
                             "interrupted by the user", NULL};
    }
    if (o.error == NULL) {
        switch (s->end) {
        case LOOP_ANSWERED:
            o.stop = "end_turn";
            break;
        case LOOP_TRUNCATED:
            o.stop = "max_tokens";
            break;
        case LOOP_MAX_STEPS:
            o.subtype = "error_max_turns";
            o.is_error = true;
            o.error = arena_printf(&s->a,
                                   "Reached the maximum number of turns (%ld)",
                                   in.max_steps);
            break;
        case LOOP_BLOCKED:
            o.subtype = "error_during_execution";
            o.is_error = true;
            o.error = "Gemini declined to answer (blocked by its safety "
                      "settings)";
            break;
        case LOOP_HANDED_BACK:
            o.subtype = "error_during_execution";
            o.is_error = true;
            o.error = "a tool asked for an answer the terminal cannot give";
            break;
        }
    }
    keep_save(s);
    if (write_result(s, &o, t0) != 0)
        return -1;
    return auth ? -1 : o.is_error ? 1 : 0;
}

int
term_session_prompt(struct term_session *s, const char *text)
{
    int rc = prompt(s, text);

    /* what the prompt allocated (its tool outputs, messages, the text of
     * a stream-json user message) goes with it: a long session stays the
     * size of its conversation */
    arena_reset(&s->a);
    return rc;
}

/* --- control requests (--input-format stream-json) ---------------------- */

static int
control_reply(struct term_session *s, const char *id, json_t *payload,
              const char *error)
{
    json_t *r = error ? json_pack("{s:s, s:{s:s, s:s, s:s}}", "type",
                                  "control_response", "response", "subtype",
                                  "error", "request_id", id, "error", error)
                      : json_pack("{s:s, s:{s:s, s:s, s:o}}", "type",
                                  "control_response", "response", "subtype",
                                  "success", "request_id", id, "response",
                                  payload);
    return term_sj_emit_raw(s->out, r);
}

static int
handle_control(struct term_session *s, const json_t *msg, bool in_turn)
{
    const char *id = json_string_value(json_object_get(msg, "request_id"));
    const json_t *req = json_object_get(msg, "request");
    const char *sub = json_string_value(json_object_get(req, "subtype"));
    char buf[160];

    if (id == NULL)
        id = "";
    if (sub == NULL)
        return control_reply(s, id, NULL, "Missing request subtype");
    if (strcmp(sub, "initialize") == 0) {
        if (s->initialized)
            return control_reply(s, id, NULL, "Already initialized");
        s->initialized = true;
        return control_reply(
            s, id,
            json_pack("{s:[{s:s, s:s, s:s}], s:[], s:s, s:[s], s:[], s:{}}",
                      "commands", "name", "compact", "description",
                      COMPACT_DESCRIPTION, "argumentHint", "", "agents",
                      "output_style", "default",
                      "available_output_styles", "default", "models",
                      "account"),
            NULL);
    }
    if (strcmp(sub, "interrupt") == 0) {
        /* Between prompts there is nothing to stop; during one (a tool
         * waiting for permission) the prompt ends with an error result. */
        if (in_turn)
            s->interrupted = true;
        return control_reply(s, id, json_pack("{s:[]}", "still_queued"),
                             NULL);
    }
    if (strcmp(sub, "set_permission_mode") == 0) {
        const char *m = json_string_value(json_object_get(req, "mode"));
        enum term_mode mode;
        if (m == NULL || term_mode_parse(m, &mode) != 0) {
            snprintf(buf, sizeof(buf), "Unknown permission mode: %.100s",
                     m ? m : "(none)");
            return control_reply(s, id, NULL, buf);
        }
        s->mode = mode;
        return control_reply(s, id, json_pack("{s:s}", "mode", m), NULL);
    }
    if (strcmp(sub, "set_model") == 0) {
        const char *m = json_string_value(json_object_get(req, "model"));
        char *copy = strdup(m == NULL || strcmp(m, "default") == 0
                                ? CONFIG_DEFAULT_MODEL
                                : m);
        if (copy == NULL)
            return control_reply(s, id, NULL, "out of memory");
        if (in_turn) { /* the prompt in flight keeps its model */
            free(s->next_model);
            s->next_model = copy;
        } else {
            free(s->model);
            s->model = copy;
        }
        return control_reply(s, id, json_object(), NULL);
    }
    if (strcmp(sub, "mcp_status") == 0)
        return control_reply(s, id,
                             json_pack("{s:o}", "mcpServers",
                                       mcp_servers(s)),
                             NULL);
    snprintf(buf, sizeof(buf), "Unsupported control request subtype: %.100s",
             sub);
    return control_reply(s, id, NULL, buf);
}

/* A user message's text: `content` a string, or the text of its text
 * blocks joined by newlines. NULL when it has none (or out of memory). */
static const char *
user_text(struct term_session *s, const json_t *msg)
{
    const json_t *c = json_object_get(json_object_get(msg, "message"),
                                      "content");
    const json_t *b;
    struct sbuf sb;
    const char *out = NULL;
    size_t i;

    if (json_is_string(c))
        return json_string_length(c) > 0 ? json_string_value(c) : NULL;
    sbuf_init(&sb, BOUND_TERM_INPUT_LINE);
    json_array_foreach(c, i, b) {
        const char *t = json_string_value(json_object_get(b, "text"));
        const char *type = json_string_value(json_object_get(b, "type"));
        if (t == NULL || type == NULL || strcmp(type, "text") != 0)
            continue;
        if ((sb.len > 0 && sbuf_putc(&sb, '\n') != 0) ||
            sbuf_adds(&sb, t) != 0)
            break;
    }
    if (sb.len > 0)
        out = arena_strndup(&s->a, sb.buf, sb.len);
    sbuf_release(&sb);
    return out;
}

/* One line of input: 0 to go on, -1 to stop (exit code in *code). */
static int
serve_line(struct term_session *s, const char *line, int *code)
{
    json_error_t jerr;
    json_t *m = json_loads(line, 0, &jerr);
    const char *type = json_string_value(json_object_get(m, "type"));
    int rc = 0;

    if (m == NULL || type == NULL) {
        fprintf(stderr,
                "gemini-agent chat: error parsing streaming input line "
                "(%s); skipped\n",
                m == NULL ? jerr.text : "no type");
    } else if (strcmp(type, "control_request") == 0) {
        if (handle_control(s, m, false) != 0)
            rc = -1;
    } else if (strcmp(type, "user") == 0) {
        const char *text = user_text(s, m);
        if (text == NULL) {
            fprintf(stderr, "gemini-agent chat: a user message without "
                            "text; skipped\n");
        } else if (term_session_prompt(s, text) < 0) {
            rc = -1;
        }
    } else if (strcmp(type, "keep_alive") != 0 &&
               strcmp(type, "control_response") != 0 &&
               strcmp(type, "control_cancel_request") != 0) {
        fprintf(stderr,
                "gemini-agent chat: expected a user message or a control "
                "request, got '%.40s'; skipped\n",
                type);
    }
    json_decref(m);
    if (rc != 0)
        *code = 1;
    return rc;
}

int
term_session_serve(struct term_session *s)
{
    int code = 0;

    for (;;) {
        char *q = term_input_undefer(&s->input);
        if (q != NULL) { /* what came during the turn, in order */
            int rc = serve_line(s, q, &code);
            free(q);
            if (rc != 0)
                return code;
            continue;
        }
        if (read_line(s) < 0)
            return code; /* stdin closed after the last result: done */
        if (s->line[0] == '\0')
            continue;
        if (serve_line(s, s->line, &code) != 0)
            return code;
    }
}

/* --- open and close ------------------------------------------------------ */

/* The configuration `serve` would read ($GEMINI_AGENT_CONFIG, else
 * conf/agent.yaml), when it is there: the key of its .gemini.yaml and
 * its plugins. Its problems are shown only with GEMINI_AGENT_LOG set:
 * the terminal works without it. */
static void
load_config(struct term_session *s)
{
    const char *path = config_default_path();
    struct diag d = DIAG_INIT;

    if (access(path, R_OK) != 0)
        return;
    s->cfg = config_load(path, &d);
    if (getenv("GEMINI_AGENT_LOG") != NULL)
        diag_print(&d, stderr, "gemini-agent chat: ");
    diag_release(&d);
}

/* What the session says when no credential works: the module's words
 * (they name sources, never a secret). */
static const char *
auth_failure(struct term_session *s, const struct status_error *err)
{
    char line[STATUS_TEXT_MAX + 64];

    if (err->code == ST_NO_MEMORY)
        return "out of memory";
    status_text(err, line, sizeof(line));
    return arena_strdup(&s->a, line);
}

/*
 * Which plugins take part: the configuration's (plugins.dirs, expose,
 * config), plus the terminal's own (cli, file_edit), always exposed and
 * always rooted at the working folder whatever the configuration says of
 * them. Without a configuration, only the terminal's own.
 */
static int
plugins_config(struct term_session *s)
{
    const struct config_plugins *base = s->cfg ? &s->cfg->plugins : NULL;
    json_t *conf = base && base->config ? json_deep_copy(base->config)
                                        : json_object();
    size_t n = 0;

    if (base != NULL)
        s->plugins_cfg = *base;
    else
        s->plugins_cfg.file = "(terminal)";
    s->plugins_conf = conf;
    s->plugins_cfg.config = conf;
    if (conf == NULL)
        return -1;
    for (size_t i = 0; terminal_plugins[i] != NULL; i++) {
        json_t *c = json_object_get(conf, terminal_plugins[i]);
        if (!json_is_object(c) &&
            json_object_set_new(conf, terminal_plugins[i],
                                c = json_object()) != 0)
            return -1;
        if (json_object_set_new(c, "root", json_string(s->cwd)) != 0)
            return -1;
    }
    if (s->args->nadd_dirs > 0) { /* --add-dir: beside the cwd */
        json_t *dirs = json_array();
        for (size_t i = 0; dirs != NULL && i < s->args->nadd_dirs; i++)
            if (json_array_append_new(dirs,
                                      json_string(s->args->add_dirs[i])) != 0)
                break;
        if (json_object_set_new(json_object_get(conf, EDIT_PLUGIN), "addDirs",
                                dirs) != 0)
            return -1;
    }
    if (s->plugins_cfg.expose_all) /* a config entry exposes a built-in */
        return 0;
    for (char **e = s->plugins_cfg.expose; e != NULL && *e != NULL; e++)
        n++;
    s->expose = calloc(n + ARRAY_SIZE(terminal_plugins), sizeof(char *));
    if (s->expose == NULL)
        return -1;
    if (n > 0)
        memcpy(s->expose, s->plugins_cfg.expose, n * sizeof(char *));
    for (size_t i = 0; terminal_plugins[i] != NULL; i++) {
        bool named = false;
        for (size_t k = 0; k < n && !named; k++)
            named = strcmp(s->expose[k], terminal_plugins[i]) == 0;
        if (!named)
            s->expose[n++] = terminal_plugins[i];
    }
    s->plugins_cfg.expose = s->expose;
    return 0;
}

/* --- a saved session (keep.h) ------------------------------------------ */

/* A long of `obj`'s member `key` (0 when absent). */
static long
member_long(const json_t *obj, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(obj, key));

    return v > 0 && v < LONG_MAX ? (long)v : 0;
}

/* Carry on the saved session `c`: its history, model, folder, usage. */
static int
adopt(struct term_session *s, const struct store_chat *c, const char **why)
{
    const json_t *tokens = json_object_get(c->usage, "tokens");
    json_t *contents = json_loads(c->contents, 0, NULL);

    if (!json_is_array(contents)) {
        json_decref(contents);
        *why = arena_printf(&s->a, "the saved session %s is damaged "
                                   "(its history is not a JSON array)",
                            c->id);
        return -1;
    }
    json_decref(s->contents);
    s->contents = contents;
    /* the session's folder, unless --cwd names another */
    if (s->args->cwd == NULL && strcmp(c->cwd, s->cwd) != 0 &&
        (chdir(c->cwd) != 0 || getcwd(s->cwd, sizeof(s->cwd)) == NULL)) {
        *why = arena_printf(&s->a, "cannot work in the session's folder "
                                   "'%s': %s",
                            c->cwd, strerror(errno));
        return -1;
    }
    if (s->args->model == NULL && (s->model = strdup(c->model)) == NULL)
        return -1;
    if (!s->args->fork)
        snprintf(s->session_id, sizeof(s->session_id), "%s", c->id);
    s->used.prompt = member_long(tokens, "promptTokens");
    s->used.candidates = member_long(tokens, "candidatesTokens");
    s->used.thoughts = member_long(tokens, "thoughtsTokens");
    s->used.cached = member_long(tokens, "cachedTokens");
    s->used.total = member_long(tokens, "totalTokens");
    s->used.calls = (int)member_long(tokens, "geminiCalls");
    s->cost = json_number_value(json_object_get(c->usage, "costUsd"));
    s->context_tokens = member_long(c->usage, "contextTokens");
    return 0;
}

/*
 * Open the saved sessions (unless --no-session-persistence), and with
 * --resume or --continue carry on the one they name. A new session's id
 * must not be one already saved (Claude Code refuses it too). -1 with
 * *why (NULL: out of memory) when the session cannot start.
 */
static int
open_saved(struct term_session *s, const char **why)
{
    const struct term_args *args = s->args;
    bool want = args->resume != NULL || args->cont;
    struct store_chat c = {0};
    struct status_error err = {0};
    const char *new_id = want && !args->fork ? NULL : args->session_id;
    int rc;

    if (args->no_persist && !want)
        return 0;
    if ((s->keep = term_keep_open(&err)) == NULL) {
        if (want) {
            *why = arena_printf(&s->a, "cannot open the saved sessions: %s",
                                err.text);
            return -1;
        }
        fprintf(stderr, "gemini-agent chat: this session will not be "
                        "saved: %s\n", err.text);
        return 0;
    }
    if (want) {
        rc = args->resume != NULL
                 ? s->keep->ops->chat_load(s->keep, args->resume, &c, &err)
                 : s->keep->ops->chat_latest(s->keep, s->cwd, &c, &err);
        if (rc != 0 && err.code == ST_NOT_FOUND)
            *why = args->resume != NULL
                       ? arena_printf(&s->a, "No conversation found with "
                                             "session ID: %s",
                                      args->resume)
                       : "No conversation found to continue";
        else if (rc != 0)
            *why = arena_printf(&s->a, "cannot read the saved sessions: %s",
                                err.text);
        else
            rc = adopt(s, &c, why);
        store_chat_release(&c);
        if (rc != 0)
            return -1;
    }
    if (new_id != NULL) {
        rc = s->keep->ops->chat_load(s->keep, new_id, &c, &err);
        store_chat_release(&c);
        if (rc == 0) {
            *why = arena_printf(&s->a, "Session ID %s is already in use",
                                new_id);
            return -1;
        }
        if (err.code != ST_NOT_FOUND) {
            *why = arena_printf(&s->a, "cannot read the saved sessions: %s",
                                err.text);
            return -1;
        }
    }
    if (args->no_persist) { /* resumed, but this run is not kept */
        s->keep->ops->close(s->keep);
        s->keep = NULL;
    }
    return 0;
}

/* The terminal's tools: the registry's entries of the exposed plugins,
 * declared under their own names. */
static int
load_tools(struct term_session *s)
{
    struct diag d = DIAG_INIT;
    json_t *decls;

    if (plugins_config(s) != 0)
        return -1;
    const struct soplugin_env env = {
        .cfg = &s->plugins_cfg,
        .builtins = builtin_plugins,
        .terminal = true,
        .config_dir = s->cfg ? s->cfg->dir : s->cwd,
        .data_dir = s->actions_env.data_dir,
    };
    s->set = plugin_load(NULL, 0, &env, NULL, &d);
    if (getenv("GEMINI_AGENT_LOG") != NULL)
        diag_print(&d, stderr, "gemini-agent chat: ");
    diag_release(&d);
    if (s->set == NULL)
        return -1;
    s->tools = calloc(s->set->count + 1, sizeof(*s->tools));
    decls = json_array();
    if (s->tools == NULL || decls == NULL) {
        json_decref(decls);
        return -1;
    }
    for (size_t i = 0; i < s->set->count; i++) {
        const struct plugin_action *act = &s->set->actions[i];
        const char *name = act->tool ? act->tool : act->fn_name;
        /* no one is signed in at a terminal: a plugin that needs a user
         * (GEMINI_AGENT_NEEDS_USER) would refuse every call */
        if (!act->exposed || act->needs_user || name == NULL)
            continue;
        if (find_tool(s, name) != NULL) {
            fprintf(stderr,
                    "gemini-agent chat: two tools are named '%s'; %s is "
                    "left out\n",
                    name, act->name);
            continue;
        }
        s->tools[s->ntools].name = name;
        s->tools[s->ntools].act = act;
        s->tools[s->ntools].edit =
            act->so != NULL && strcmp(act->so->name, EDIT_PLUGIN) == 0;
        if (json_array_append_new(decls,
                                  toolbridge_declaration(
                                      name, act->description,
                                      act->input_schema)) != 0) {
            json_decref(decls);
            return -1;
        }
        s->ntools++;
    }
    if (s->ntools == 0) {
        json_decref(decls);
        return 0;
    }
    s->tools_json = json_pack("[{s:o}]", "functionDeclarations", decls);
    return s->tools_json ? 0 : -1;
}

static int
build_system(struct term_session *s)
{
    struct sbuf sb;
    const char *base = s->args->system_prompt;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    if (base != NULL && base[0] != '\0')
        rc |= sbuf_adds(&sb, base);
    else
        rc |= sbuf_addf(&sb, BASE_INSTRUCTION, s->cwd);
    for (size_t i = 0; i < s->set->nso; i++)
        if (s->set->so[i].instructions != NULL &&
            s->set->so[i].role == SO_EXPOSED)
            rc |= sbuf_addf(&sb, "\n\n%s", s->set->so[i].instructions);
    if (s->args->append_system != NULL && s->args->append_system[0])
        rc |= sbuf_addf(&sb, "\n\n%s", s->args->append_system);
    if (rc == 0)
        s->system = sbuf_detach(&sb, NULL);
    sbuf_release(&sb);
    return s->system ? 0 : -1;
}

struct term_session *
term_session_open(const struct term_args *args, FILE *in, FILE *out,
                  int *exit_code)
{
    struct term_session *s = calloc(1, sizeof(*s));
    const char *base = getenv("GEMINI_BASE_URL");
    struct status_error err = {0};
    const char *why = "out of memory";

    *exit_code = 1;
    if (s == NULL)
        goto fail_quiet;
    s->args = args;
    s->in = in;
    s->out = out;
    term_input_init(&s->input, fileno(in));
    s->who.cancelled = gone_cb;
    s->who.cancelled_ctx = s;
    s->mode = args->mode;
    arena_init(&s->a);
    arena_init(&s->life);
    if ((args->session_id != NULL && !term_keep_id_ok(args->session_id)) ||
        (args->resume != NULL && !term_keep_id_ok(args->resume))) {
        why = arena_printf(&s->a,
                           "a session id is 1 to %d printable characters, "
                           "without spaces",
                           BOUND_TERM_SESSION_ID);
        *exit_code = 2;
        goto fail;
    }
    if (args->cwd != NULL && chdir(args->cwd) != 0) {
        why = arena_printf(&s->a, "cannot work in '%s': %s", args->cwd,
                           strerror(errno));
        goto fail;
    }
    if (getcwd(s->cwd, sizeof(s->cwd)) == NULL) {
        why = "cannot read the working folder";
        goto fail;
    }
    if (open_saved(s, &why) != 0)
        goto fail;
    if (s->session_id[0] == '\0') {
        if (args->session_id != NULL)
            snprintf(s->session_id, sizeof(s->session_id), "%s",
                     args->session_id);
        else if (term_uuid(s->session_id) != 0)
            goto fail;
    }
    if (term_rules_parse(args, &s->life, &s->rules, &err) != 0) {
        why = arena_strdup(&s->a, err.text);
        *exit_code = 2;
        goto fail;
    }
    s->key_source = "none";
    load_config(s);
    if (term_auth_open(&s->auth, args,
                       s->cfg ? s->cfg->gemini.api_key : NULL, &err) != 0) {
        why = auth_failure(s, &err);
        goto fail;
    }
    s->key_source = s->auth.source;
    if (s->model == NULL) /* not a resumed session's */
        s->model = strdup(args->model  ? args->model
                          : s->cfg     ? s->cfg->gemini.model
                                       : CONFIG_DEFAULT_MODEL);
    s->compaction = s->cfg ? s->cfg->gemini.compaction
                           : (struct config_compaction)CONFIG_COMPACTION_INIT;
    /* Vertex AI without GEMINI_BASE_URL: the location's own host */
    s->gemini.base_url = strdup(base != NULL && base[0] != '\0' ? base
                                : s->auth.vertex ? ""
                                                 : CONFIG_DEFAULT_BASE_URL);
    s->gemini.path = strdup("(terminal)");
    s->gemini.system_prompt = strdup("");
    s->gemini.timeout_ms = DEFAULT_GEMINI_TIMEOUT_MS;
    /* the shell tool may run up to its own bound; the watchdog must not
     * end the process first */
    s->actions_env.timeout_ms = BOUND_CLI_TIMEOUT_MS + DEFAULT_ACTION_TIMEOUT_MS;
    s->actions_env.data_dir =
        s->cfg ? arena_strdup(&s->life, s->cfg->actions.data_dir)
               : arena_printf(&s->life, "%s/.gemini-agent", s->cwd);
    if (s->contents == NULL)
        s->contents = json_array();
    if (s->model == NULL || s->gemini.base_url == NULL ||
        s->gemini.path == NULL || s->gemini.system_prompt == NULL ||
        s->actions_env.data_dir == NULL || s->contents == NULL)
        goto fail;
    for (size_t n = strlen(s->gemini.base_url);
         n > 0 && s->gemini.base_url[n - 1] == '/';)
        s->gemini.base_url[--n] = '\0';
    s->gemini.model = s->model;
    if (load_tools(s) != 0 || build_system(s) != 0)
        goto fail;
    if (gemini_init(&s->g) != 0) {
        why = "cannot start the HTTP client (libcurl)";
        goto fail;
    }
    s->g_ok = true;
    /* an interrupt drops the Gemini call in flight */
    s->g.gone = gone_cb;
    s->g.gone_ctx = s;
    if (s->gemini.base_url[0] == '\0') {
        free(s->gemini.base_url);
        s->gemini.base_url = NULL;
    }
    if (term_auth_attach(&s->auth, &s->g, &s->gemini, &err) != 0) {
        why = auth_failure(s, &err);
        goto fail;
    }
    *exit_code = 0;
    return s;
fail:
    system_error(args, out, s && s->session_id[0] ? s->session_id : "",
                 why ? why : "out of memory");
    term_session_close(s);
    return NULL;
fail_quiet:
    fprintf(stderr, "gemini-agent chat: out of memory\n");
    return NULL;
}

const char *
term_session_saved_id(const struct term_session *s)
{
    return s->saved ? s->session_id : NULL;
}

void
term_session_watch(struct term_session *s, volatile sig_atomic_t *flag)
{
    s->sigflag = flag;
}

void
term_session_set_tty(struct term_session *s, struct tty *t)
{
    s->tty = t;
}

void
term_session_close(struct term_session *s)
{
    if (s == NULL)
        return;
    if (s->g_ok)
        gemini_release(&s->g);
    if (s->keep != NULL)
        s->keep->ops->close(s->keep);
    json_decref(s->contents);
    json_decref(s->denials);
    json_decref(s->tools_json);
    arena_release(&s->a);
    arena_release(&s->life);
    plugin_set_free(s->set);
    json_decref(s->plugins_conf);
    free(s->expose);
    config_free(s->cfg);
    free(s->tools);
    free(s->system);
    free(s->model);
    free(s->next_model);
    if (s->gemini.api_key != NULL) /* a secret: wiped, not just freed */
        OPENSSL_cleanse(s->gemini.api_key, strlen(s->gemini.api_key));
    free(s->gemini.api_key);
    term_auth_close(&s->auth);
    free(s->gemini.base_url);
    free(s->gemini.path);
    free(s->gemini.system_prompt);
    term_input_release(&s->input);
    free(s);
}
