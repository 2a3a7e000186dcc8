/*
 * session.c - one `gemini-agent chat` session (session.h).
 *
 * Order of a prompt: system/init; then, per Gemini answer, an assistant
 * message per content block (its text, each tool_use) and a user message
 * per tool_result; then one result. The loop (agent/loop.h) asks
 * ts_decide() (calls.c) who answers each call: we answer every one
 * ourselves (LOOP_ANSWER_IT), because the terminal's tools are declared
 * under their own names (`Read`, not `action_file_edit_Read`) and map back
 * through our own table, and because the permission check (perm.h, maybe
 * a can_use_tool round trip on stdin) comes between the call and its run.
 * The files of a session: session_int.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session_int.h"
#include "agent/toolbridge.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "plugins/builtin.h"
#include "plugins/mcp.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "store/store.h"
#include "term/compact.h"
#include "term/keep.h"
#include "term/streamjson.h"
#include "term/tty.h"
#include "term/bounds.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* The plugins the terminal exposes (docs/commands.md, "chat"). */
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

/* --- writing ------------------------------------------------------------ */

/* A message of the stream: written only for stream-json output. */
int
ts_emit(struct term_session *s, json_t *msg)
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

int
ts_emit_err(struct term_session *s, json_t *msg, struct status_error *err)
{
    if (ts_emit(s, msg) != 0)
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
const char *
ts_json_text(struct arena *a, const json_t *v)
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

json_t *
ts_last_usage(const struct term_session *s)
{
    return term_sj_usage(&s->last);
}

static int
partial_event(struct term_session *s, json_t *event)
{
    return ts_emit(s, json_pack("{s:s, s:o, s:n}", "type", "stream_event",
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
int
ts_end_message(struct term_session *s, const char *stop_reason)
{
    if (close_block(s) != 0)
        return -1;
    if (!s->msg_open)
        return 0;
    s->msg_open = false;
    if (partial_event(s, json_pack("{s:s, s:{s:s?, s:n}, s:o}", "type",
                                   "message_delta", "delta", "stop_reason",
                                   stop_reason, "stop_sequence", "usage",
                                   ts_last_usage(s))) != 0 ||
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
                             ts_last_usage(s))) != 0 ||
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

static int
on_usage(void *ctx, const struct loop_usage *total, const char *model,
         struct status_error *err)
{
    struct term_session *s = ctx;

    (void)model; /* the model asked for names the messages, as Claude's do */
    s->api_ms += ts_minus(monotime_ms(), s->api_start);
    s->api_open = false;
    s->last.prompt = ts_minus(total->prompt, s->total.prompt);
    s->last.candidates = ts_minus(total->candidates, s->total.candidates);
    s->last.thoughts = ts_minus(total->thoughts, s->total.thoughts);
    s->last.cached = ts_minus(total->cached, s->total.cached);
    s->total = *total;
    s->context_tokens = 0; /* saturating: Gemini's counts are its own */
    loop_usage_add(&s->context_tokens, s->last.prompt);
    loop_usage_add(&s->context_tokens, s->last.candidates);
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
    return ts_emit_err(s,
                    term_sj_assistant(s->msg_id, s->model,
                                      json_pack("{s:s, s:s}", "type", "text",
                                                "text", text),
                                      ts_last_usage(s)),
                    err);
}

/* --- one prompt ---------------------------------------------------------- */

/* init's mcp_servers and mcp_status's mcpServers: [{name, status}] of
 * the servers of the built-in mcp plugin, when it takes part (a new
 * reference; NULL when out of memory). */
json_t *
ts_mcp_servers(const struct term_session *s)
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
                                                "status",
                                                mcp_server_status(p->self,
                                                                  k))) !=
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
                  ts_mcp_servers(s), "model", s->model, "permissionMode",
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
const char *
ts_failure(struct term_session *s, const struct status_error *err)
{
    char line[STATUS_TEXT_MAX + 64];
    const char *kind = api_error_kind(err->code);
    const char *msg;
    json_t *am;

    ts_end_message(s, NULL);
    if (s->interrupted)
        return "interrupted by the user";
    status_text(err, line, sizeof(line));
    if (kind == NULL) {
        msg = arena_strdup(&s->a, line);
        return msg ? msg : "out of memory";
    }
    /* the client's words are the web visitor's ("the site's API key"):
     * here the user is the owner of the credential, so name its source */
    if (err->code == ST_UPSTREAM_AUTH)
        msg = arena_printf(&s->a,
                           "API Error: upstream_auth: Gemini refused the "
                           "credential (%s); check it",
                           s->key_source);
    else
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
                           ts_last_usage(s));
    if (am != NULL &&
        json_object_set_new(am, "error", json_string(kind)) != 0) {
        json_decref(am);
        am = NULL;
    }
    ts_emit(s, am);
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

    if (ts_end_message(s, NULL) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return ts_emit_err(s,
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
    if (ts_end_message(s, end == LOOP_ANSWERED    ? "end_turn"
                       : end == LOOP_TRUNCATED ? "max_tokens"
                                               : NULL) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

/* The loop's sink; prompt() adds on_delta when the text is to stream
 * (a sink with a delta op makes the loop call Gemini streamed). */
static const struct loop_sink_ops sink_ops = {
    .retry = on_retry,
    .done = on_done,
    .text = on_text,
    .tool_call = ts_on_tool_call,
    .tool_result = ts_on_tool_result,
    .usage = on_usage,
    .status = on_status,
};

/* The prompt's usage: the loop's calls and a compaction's. */
struct loop_usage
ts_prompt_usage(const struct term_session *s)
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

int
ts_write_result(struct term_session *s, const struct outcome *o, long t0)
{
    const struct loop_usage used = ts_prompt_usage(s);
    const struct loop_usage *u = &used;
    double cost = term_sj_cost(s->model, u);
    const char *text = o->error && !s->last_text ? o->error
                       : s->last_text            ? s->last_text
                                                 : "";
    json_t *mu = json_pack(
        "{s:{s:I, s:I, s:I, s:I, s:i, s:f}}", s->model, "inputTokens",
        (json_int_t)ts_minus(u->prompt, u->cached), "outputTokens",
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

static int
prompt(struct term_session *s, const char *text)
{
    struct status_error err = {0};
    struct loop_sink_ops ops = sink_ops;
    struct loop_sink sink = {&ops, s};
    struct outcome o = {"success", false, NULL, NULL};
    long t0 = monotime_ms();
    bool auth = false;
    int rc;

    if (s->args->partial || s->tty) /* a person reads the answer as it comes */
        ops.delta = on_delta;

    reset_prompt(s);
    if (s->denials == NULL || ts_emit(s, init_message(s)) != 0)
        return -1;
    if (ts_is_compact_command(text))
        return ts_compact_command(s, t0);
    if (term_compact_due(&s->compaction, s->context_tokens) &&
        ts_compact(s, false, &err) < 0) {
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
        .decide = ts_decide,
        .decide_ctx = s,
    };
    s->gemini.model = s->model;
    rc = loop_run(&in, &sink, &err);
    if (s->out_failed)
        return -1;
    if (s->api_open) /* the call that failed (or was dropped) took time */
        s->api_ms += ts_minus(monotime_ms(), s->api_start);
    if (rc != 0) {
        while (json_array_size(s->contents) > start)
            json_array_remove(s->contents, json_array_size(s->contents) - 1);
        auth = err.code == ST_UPSTREAM_AUTH;
        o.subtype = "error_during_execution";
        o.is_error = true;
        o.error = ts_failure(s, &err);
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
    ts_keep_save(s);
    if (ts_write_result(s, &o, t0) != 0)
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

/* The terminal's tools: the registry's entries of the exposed plugins,
 * declared under their own names. */
static int
load_tools(struct term_session *s)
{
    struct diag d = DIAG_INIT;
    json_t *decls;

    /* ::/0: the terminal's user fetches from their own machine, their
     * MCP servers on localhost among it, as any tool they run would; the
     * outbound policy guards a server's network from its visitors */
    static const struct netaddr anywhere = {{0}, 0};

    if (plugins_config(s) != 0)
        return -1;
    const struct soplugin_env env = {
        .cfg = &s->plugins_cfg,
        .builtins = builtin_plugins,
        .fetchers = builtin_fetchers,
        .outbound = &anywhere,
        .noutbound = 1,
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
        if (ts_find_tool(s, name) != NULL) {
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
    s->who.cancelled = ts_gone;
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
    if (ts_open_saved(s, &why) != 0)
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
    s->g.gone = ts_gone;
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
