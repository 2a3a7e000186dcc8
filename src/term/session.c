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
#include "term/lines.h"
#include "term/perm.h"
#include "term/streamjson.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* heap: a set_model that came during a prompt, whose calls still use
     * `model` (s->gemini.model points at it): the next prompt's model */
    char *next_model;
    char session_id[128];
    char cwd[PATH_MAX];
    const char *key_source; /* apiKeySource */
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
    struct arena a;
    json_t *contents;
    bool initialized; /* the initialize control request was answered */
    char *queued[BOUND_TERM_QUEUED]; /* lines read while a tool waited */
    size_t nqueued;
    struct term_lines lines; /* stdin (stream-json input) */
    char *line; /* the line read last, in `lines`: valid until the next */
    long req_seq;

    /* one prompt */
    struct loop_usage total, last;
    int num_turns, tool_seq;
    int msg_seq; /* over the session: message ids stay unique */
    char msg_id[32];
    char tool_id[32];
    bool announced; /* the call (turn, part) was written by decide() */
    size_t a_turn, a_part;
    bool stashed; /* decide() left the tool_result's content here */
    const char *st_content;
    bool st_error;
    const json_t *st_structured;
    json_t *denials;
    const char *last_text;
    long api_ms, api_start;
    bool interrupted;
    enum loop_end end; /* how the loop ended (when it did not fail) */
    bool block_open; /* --include-partial-messages: a text block */
    bool out_failed;
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
    if (partial_event(s, json_pack("{s:s, s:i}", "type",
                                   "content_block_stop", "index", 0)) != 0 ||
        partial_event(s, json_pack("{s:s, s:{s:n, s:n}, s:o}", "type",
                                   "message_delta", "delta", "stop_reason",
                                   "stop_sequence", "usage",
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
    if (st == LOOP_THINKING)
        s->api_start = monotime_ms();
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
    s->last.prompt = minus(total->prompt, s->total.prompt);
    s->last.candidates = minus(total->candidates, s->total.candidates);
    s->last.thoughts = minus(total->thoughts, s->total.thoughts);
    s->last.cached = minus(total->cached, s->total.cached);
    s->total = *total;
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

/* The assistant message of call `c`'s tool_use block. */
static int
announce(struct term_session *s, const struct loop_call *c,
         struct status_error *err)
{
    snprintf(s->tool_id, sizeof(s->tool_id), "toolu_%d", ++s->tool_seq);
    s->announced = true;
    s->a_turn = c->turn;
    s->a_part = c->part;
    return emit_err(
        s,
        term_sj_assistant(s->msg_id, s->model,
                          json_pack("{s:s, s:s, s:s, s:O}", "type",
                                    "tool_use", "id", s->tool_id, "name",
                                    c->name, "input", UNCONST(c->args)),
                          last_usage(s)),
        err);
}

static bool
is_announced(const struct term_session *s, const struct loop_call *c)
{
    return s->announced && s->a_turn == c->turn && s->a_part == c->part;
}

static int
on_tool_call(void *ctx, const struct loop_call *c, bool handed_back,
             struct status_error *err)
{
    struct term_session *s = ctx;

    (void)handed_back;
    return is_announced(s, c) ? 0 : announce(s, c, err);
}

static int
on_tool_result(void *ctx, const struct loop_call *c,
               const struct loop_result *r, struct status_error *err)
{
    struct term_session *s = ctx;
    const char *content;
    bool is_error;

    if (s->stashed && is_announced(s, c)) {
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

/* Read one line of stdin into s->line, waiting for it or (!wait) only
 * when one is there now. Its length; -1 when none is there (!wait), at
 * the end, or after a line past the bound (said on stderr, once). */
static long
next_line(struct term_session *s, bool wait)
{
    bool was_long = s->lines.too_long;
    long n = term_lines_next(&s->lines, wait, &s->line);

    if (n == -2 && s->lines.too_long && !was_long)
        fprintf(stderr,
                "gemini-agent chat: an input line is longer than %u "
                "bytes; stopping\n",
                BOUND_TERM_INPUT_LINE);
    return n < 0 ? -1 : n;
}

static long
read_line(struct term_session *s)
{
    return next_line(s, true);
}

/*
 * A line read during a prompt (s->line, parsed as `m` of type `type`): a
 * control request is answered now (an interrupt ends the prompt), a user
 * message kept for after it. Returns true when it was one of those.
 */
static bool
take_in_turn(struct term_session *s, const json_t *m, const char *type)
{
    if (strcmp(type, "control_request") == 0) {
        handle_control(s, m, true);
        return true;
    }
    if (strcmp(type, "user") != 0)
        return false;
    if (s->nqueued < BOUND_TERM_QUEUED) {
        s->queued[s->nqueued] = strdup(s->line);
        if (s->queued[s->nqueued] != NULL)
            s->nqueued++;
    } else {
        fprintf(stderr, "gemini-agent chat: too many queued "
                        "messages; one dropped\n");
    }
    return true;
}

/*
 * Has an interrupt come? What stdin holds now is taken in without
 * waiting (take_in_turn). The Gemini client asks this while a call is in
 * flight (struct gemini `gone`), and decide() before each tool call, so
 * that the Agent SDK's interrupt() stops a prompt that is not waiting for
 * a permission answer too.
 */
static bool
interrupt_came(void *ctx)
{
    struct term_session *s = ctx;

    for (int i = 0; i < BOUND_TERM_QUEUED && !s->interrupted; i++) {
        json_t *m;
        const char *type;

        if (next_line(s, false) < 0)
            break;
        m = json_loads(s->line, 0, NULL);
        type = json_string_value(json_object_get(m, "type"));
        if (type != NULL)
            take_in_turn(s, m, type);
        json_decref(m);
    }
    return s->interrupted;
}

/*
 * Ask the SDK whether `tool` may run with `*input`: a can_use_tool
 * control request, then stdin until its answer. Other control requests
 * are answered meanwhile; user messages wait for after the turn.
 * Returns TERM_ALLOW (with *input maybe replaced by updatedInput, pinned)
 * or TERM_DENY with *why; -1 with `err` when out of memory.
 */
static int
ask_stdio(struct term_session *s, const char *tool, const json_t **input,
          const char **why, struct status_error *err)
{
    char id[48];

    snprintf(id, sizeof(id), "perm_%ld", ++s->req_seq);
    if (term_sj_emit_raw(
            s->out,
            json_pack("{s:s, s:s, s:{s:s, s:s, s:O, s:s}}", "type",
                      "control_request", "request_id", id, "request",
                      "subtype", "can_use_tool", "tool_name", tool, "input",
                      UNCONST(*input), "tool_use_id", s->tool_id)) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    for (;;) {
        json_t *m, *resp;
        const char *type, *sub, *rid;

        if (read_line(s) < 0) {
            *why = "the permission prompt got no answer (input closed)";
            return TERM_DENY;
        }
        m = json_loads(s->line, 0, NULL);
        type = json_string_value(json_object_get(m, "type"));
        if (type == NULL) {
            json_decref(m);
            continue;
        }
        if (take_in_turn(s, m, type)) {
            json_decref(m);
            if (s->interrupted) {
                *why = "interrupted by the user";
                return TERM_DENY;
            }
            continue;
        }
        resp = json_object_get(m, "response");
        rid = json_string_value(json_object_get(resp, "request_id"));
        if (strcmp(type, "control_response") != 0 || rid == NULL ||
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
                if (json_is_object(upd))
                    *input = arena_take_json(&s->a, json_incref(upd));
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

static const char *
denial_text(struct term_session *s, const char *tool)
{
    if (s->mode == TERM_MODE_PLAN)
        return arena_printf(&s->a,
                            "Permission to use %s denied: plan mode runs "
                            "nothing with side effects.",
                            tool);
    return arena_printf(&s->a,
                        "Permission to use %s denied: it has side effects "
                        "and the permission mode %s does not allow it "
                        "without asking (allow it with --allowedTools or "
                        "--permission-mode).",
                        tool, term_mode_name(s->mode));
}

static int
decide(void *ctx, const struct loop_call *c, struct loop_result *r,
       struct status_error *err)
{
    struct term_session *s = ctx;
    const struct term_tool *t = find_tool(s, c->name);
    const json_t *input = c->args;
    struct status_error failed = {0};
    json_t *out = NULL;
    const char *why = NULL;
    int v, rc;

    if (announce(s, c, err) != 0)
        return -1;
    if (t == NULL)
        return refuse(s,
                      arena_printf(&s->a, "Error: No such tool available: %s",
                                   c->name),
                      NULL, r, err);
    v = term_perm_decide(s->mode, &s->rules, t->name, input,
                         t->act->side_effects, t->edit);
    if (s->args->in_stream && interrupt_came(s)) {
        v = TERM_DENY;
        why = "interrupted by the user";
    } else if (v == TERM_ASK && s->args->prompt_stdio && s->args->in_stream)
        v = ask_stdio(s, t->name, &input, &why, err);
    else if (v != TERM_ALLOW)
        why = denial_text(s, t->name);
    if (v < 0)
        return -1;
    if (v != TERM_ALLOW && why == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (v != TERM_ALLOW && s->interrupted) {
        /* the call is denied and the prompt ends here: no more steps;
         * the loop will not tell of this answer, so we do */
        if (deny(s, c, why, r, err) < 0 ||
            emit_err(s, term_sj_tool_result(s->tool_id, why, true, NULL),
                     err) != 0)
            return -1;
        s->stashed = false;
        return status_set(err, ST_CLIENT_GONE, "interrupted by the user");
    }
    if (v != TERM_ALLOW)
        return deny(s, c, why, r, err);

    r->action = t->act->name;
    long t0 = monotime_ms();
    rc = action_run(&s->actions_env, t->act, NULL, input, &s->a, &out,
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
    m = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:[], s:s, "
                  "s:s, s:s, s:[], s:[], s:[]}",
                  "type", "system", "subtype", "init", "cwd", s->cwd,
                  "session_id", s->session_id, "tools", tools, "mcp_servers",
                  mcp_servers(s), "model", s->model, "permissionMode",
                  term_mode_name(s->mode), "slash_commands", "apiKeySource",
                  s->key_source, "claude_code_version",
                  TERM_PROTOCOL_VERSION, "output_style", "default", "agents",
                  "skills", "plugins");
    return m;
}

static void
reset_prompt(struct term_session *s)
{
    if (s->next_model != NULL) { /* now no call of a prompt holds it */
        free(s->model);
        s->model = s->next_model;
        s->next_model = NULL;
    }
    memset(&s->total, 0, sizeof(s->total));
    memset(&s->last, 0, sizeof(s->last));
    s->num_turns = 0;
    /* an error before any answer still needs an id of its own */
    snprintf(s->msg_id, sizeof(s->msg_id), "msg_%d", s->msg_seq + 1);
    s->announced = s->stashed = false;
    s->last_text = NULL;
    s->api_ms = 0;
    s->interrupted = false;
    s->block_open = false;
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

    close_block(s);
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

static int
on_done(void *ctx, enum loop_end end, const struct turn *last,
        struct status_error *err)
{
    struct term_session *s = ctx;

    (void)last;
    (void)err;
    s->end = end;
    return 0;
}

static const struct loop_sink_ops sink_ops = {
    .done = on_done,
    .text = on_text,
    .tool_call = on_tool_call,
    .tool_result = on_tool_result,
    .usage = on_usage,
    .status = on_status,
};
static const struct loop_sink_ops partial_ops = {
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

static int
write_result(struct term_session *s, const struct outcome *o, long t0)
{
    double cost = term_sj_cost(s->model, &s->total);
    const char *text = o->error && !s->last_text ? o->error
                       : s->last_text            ? s->last_text
                                                 : "";
    json_t *mu = json_pack(
        "{s:{s:I, s:I, s:I, s:I, s:i, s:f}}", s->model, "inputTokens",
        (json_int_t)minus(s->total.prompt, s->total.cached), "outputTokens",
        (json_int_t)(s->total.candidates + s->total.thoughts),
        "cacheReadInputTokens", (json_int_t)s->total.cached,
        "cacheCreationInputTokens", (json_int_t)0, "webSearchRequests", 0,
        "costUSD", cost);
    json_t *m = json_pack(
        "{s:s, s:s, s:b, s:I, s:I, s:i, s:s, s:s?, s:s, s:f, s:o, s:o, "
        "s:O}",
        "type", "result", "subtype", o->subtype, "is_error", o->is_error,
        "duration_ms", (json_int_t)(monotime_ms() - t0), "duration_api_ms",
        (json_int_t)s->api_ms, "num_turns", s->num_turns, "result", text,
        "stop_reason", o->stop, "session_id", s->session_id,
        "total_cost_usd", cost, "usage", term_sj_usage(&s->total),
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
        if (o->is_error)
            fprintf(stderr, "gemini-agent chat: %s\n", o->error ? o->error : text);
        else if (fprintf(s->out, "%s\n", text) < 0 || fflush(s->out) != 0)
            s->out_failed = true;
        json_decref(m);
        return s->out_failed ? -1 : 0;
    }
    json_decref(m);
    return 0;
}

int
term_session_prompt(struct term_session *s, const char *text)
{
    struct status_error err = {0};
    struct loop_sink sink = {s->args->partial ? &partial_ops : &sink_ops, s};
    struct outcome o = {"success", false, NULL, NULL};
    long t0 = monotime_ms();
    bool auth = false;
    int rc;

    reset_prompt(s);
    /* where this prompt's turns start: a prompt that fails is taken back
     * whole, so no call is left without its answer for the next one */
    size_t start = json_array_size(s->contents);
    if (s->denials == NULL ||
        json_array_append_new(s->contents,
                              json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                        "parts", "text", text)) != 0)
        return -1;
    if (emit(s, init_message(s)) != 0)
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
        .decide = decide,
        .decide_ctx = s,
    };
    s->gemini.model = s->model;
    rc = loop_run(&in, &sink, &err);
    if (s->out_failed)
        return -1;
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
    if (write_result(s, &o, t0) != 0)
        return -1;
    return auth ? -1 : o.is_error ? 1 : 0;
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
            json_pack("{s:[], s:[], s:s, s:[s], s:[], s:{}}", "commands",
                      "agents", "output_style", "default",
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
        if (in_turn) { /* the prompt's calls go on with the old one */
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
        if (s->nqueued > 0) { /* what came while a tool waited, in order */
            char *q = s->queued[0];
            memmove(s->queued, s->queued + 1,
                    (s->nqueued - 1) * sizeof(*s->queued));
            s->nqueued--;
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

/* The key: GEMINI_API_KEY, GOOGLE_API_KEY, or the configuration's. */
static int
find_key(struct term_session *s)
{
    const char *env = getenv("GEMINI_API_KEY");

    if (env != NULL && env[0] != '\0') {
        s->key_source = "GEMINI_API_KEY";
        s->gemini.api_key = strdup(env);
        return s->gemini.api_key ? 0 : -1;
    }
    env = getenv("GOOGLE_API_KEY");
    if (env != NULL && env[0] != '\0') {
        s->key_source = "GOOGLE_API_KEY";
        s->gemini.api_key = strdup(env);
        return s->gemini.api_key ? 0 : -1;
    }
    if (s->cfg != NULL && s->cfg->gemini.api_key != NULL) {
        s->key_source = "apiKeyHelper"; /* a settings file, not env */
        s->gemini.api_key = strdup(s->cfg->gemini.api_key);
    }
    return s->gemini.api_key ? 0 : -1;
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
    term_lines_init(&s->lines, fileno(in), BOUND_TERM_INPUT_LINE);
    s->mode = args->mode;
    arena_init(&s->a);
    if (args->session_id != NULL)
        snprintf(s->session_id, sizeof(s->session_id), "%s",
                 args->session_id);
    else if (term_uuid(s->session_id) != 0)
        goto fail;
    if (args->cwd != NULL && chdir(args->cwd) != 0) {
        why = arena_printf(&s->a, "cannot work in '%s': %s", args->cwd,
                           strerror(errno));
        goto fail;
    }
    if (getcwd(s->cwd, sizeof(s->cwd)) == NULL) {
        why = "cannot read the working folder";
        goto fail;
    }
    if (term_rules_parse(args, &s->a, &s->rules, &err) != 0) {
        why = arena_strdup(&s->a, err.text);
        *exit_code = 2;
        goto fail;
    }
    s->key_source = "none";
    load_config(s);
    if (find_key(s) != 0) {
        why = "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), "
              "or run `gemini-agent setup` and put the key in apiKey";
        goto fail;
    }
    s->model = strdup(args->model ? args->model : CONFIG_DEFAULT_MODEL);
    s->gemini.base_url = strdup(base != NULL && base[0] != '\0'
                                    ? base
                                    : CONFIG_DEFAULT_BASE_URL);
    s->gemini.path = strdup("(terminal)");
    s->gemini.system_prompt = strdup("");
    s->gemini.timeout_ms = DEFAULT_GEMINI_TIMEOUT_MS;
    /* the shell tool may run up to its own bound; the watchdog must not
     * end the process first */
    s->actions_env.timeout_ms = BOUND_CLI_TIMEOUT_MS + DEFAULT_ACTION_TIMEOUT_MS;
    s->actions_env.data_dir =
        s->cfg ? arena_strdup(&s->a, s->cfg->actions.data_dir)
               : arena_printf(&s->a, "%s/.gemini-agent", s->cwd);
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
    if (args->in_stream) { /* read stdin while a call waits: interrupts */
        s->g.gone = interrupt_came;
        s->g.gone_ctx = s;
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

void
term_session_close(struct term_session *s)
{
    if (s == NULL)
        return;
    if (s->g_ok)
        gemini_release(&s->g);
    json_decref(s->contents);
    json_decref(s->denials);
    json_decref(s->tools_json);
    arena_release(&s->a);
    plugin_set_free(s->set);
    json_decref(s->plugins_conf);
    free(s->expose);
    config_free(s->cfg);
    free(s->tools);
    free(s->system);
    free(s->model);
    free(s->next_model);
    free(s->gemini.api_key);
    free(s->gemini.base_url);
    free(s->gemini.path);
    free(s->gemini.system_prompt);
    for (size_t i = 0; i < s->nqueued; i++)
        free(s->queued[i]);
    term_lines_release(&s->lines);
    free(s);
}
