/*
 * prompt.c - one prompt of a terminal session (session.h,
 * session_int.h).
 *
 * Order of a prompt: system/init; then, per Gemini answer, an assistant
 * message per content block (its text, each tool_use) and a user message
 * per tool_result; then one result. The loop (agent/loop.h) asks
 * ts_decide() (calls.h) who answers each call.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session_int.h"
#include "core/bounds.h"
#include "core/monotime.h"
#include "core/status.h"
#include "term/streamjson.h"
#include "term/tty.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* One prompt: the session, and how the loop ended (when it did not fail). */
struct run {
    struct term_session *s;
    enum loop_end end;
};

/* What ended the prompt, for the result. */
struct outcome {
    const char *subtype;
    bool is_error;
    const char *error; /* the `errors` entry, or NULL */
    const char *stop;  /* stop_reason, or NULL */
};

/* --- the loop's sink ----------------------------------------------------- */

static int
on_delta(void *ctx, const char *text, size_t len, struct status_error *err)
{
    struct term_session *s = ((struct run *)ctx)->s;
    char id[32];
    const struct term_out_msg m = {id, s->conv.model, &s->conv.last};

    snprintf(id, sizeof(id), "msg_%d", s->conv.msg_seq + 1);
    return term_out_delta(&s->out, &m, text, len, err);
}

static int
on_status(void *ctx, enum loop_status st, const char *tool,
          struct status_error *err)
{
    struct term_session *s = ((struct run *)ctx)->s;

    (void)tool;
    (void)err;
    if (st == LOOP_THINKING)
        term_conv_thinking(&s->conv);
    return 0;
}

static int
on_usage(void *ctx, const struct loop_usage *total, const char *model,
         struct status_error *err)
{
    struct term_session *s = ((struct run *)ctx)->s;

    (void)model; /* the model asked for names the messages, as Claude's do */
    term_conv_answered(&s->conv, total);
    if (term_out_close_block(&s->out) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static int
on_text(void *ctx, const char *text, struct status_error *err)
{
    struct term_session *s = ((struct run *)ctx)->s;
    const char *copy = arena_strdup(&s->a, text);

    if (copy == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    term_conv_said(&s->conv, copy);
    return term_out_emit_err(
        &s->out,
        term_sj_assistant(s->conv.msg_id, s->conv.model,
                          json_pack("{s:s, s:s}", "type", "text", "text", text),
                          term_conv_last_usage(&s->conv)),
        err);
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
 * Gemini's answer broke off and the loop asks again: Claude Code's
 * system/api_retry. A streamed text block of the broken answer is
 * closed there; its text is not part of the conversation (the loop
 * records only whole answers) and no assistant message repeats it.
 */
static int
on_retry(void *ctx, int attempt, int max, const struct status_error *why,
         struct status_error *err)
{
    struct term_session *s = ((struct run *)ctx)->s;
    const char *kind = api_error_kind(why->code);

    if (term_out_end_message(&s->out, NULL, &s->conv.last) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return term_out_emit_err(&s->out,
                             json_pack("{s:s, s:s, s:i, s:i, s:i, s:n, s:s}",
                                       "type", "system", "subtype", "api_retry",
                                       "attempt", attempt, "max_retries", max,
                                       "retry_delay_ms", 0, "error_status",
                                       "error", kind ? kind : "server_error"),
                             err);
}

static int
on_done(void *ctx, enum loop_end end, const struct turn *last,
        struct status_error *err)
{
    struct run *run = ctx;

    (void)last;
    run->end = end;
    if (term_out_end_message(&run->s->out,
                             end == LOOP_ANSWERED    ? "end_turn"
                             : end == LOOP_TRUNCATED ? "max_tokens"
                                                     : NULL,
                             &run->s->conv.last) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

static int
on_tool_call(void *ctx, const struct loop_call *c, bool handed_back,
             struct status_error *err)
{
    (void)handed_back;
    return term_calls_on_call(&((struct run *)ctx)->s->calls, c, err);
}

static int
on_tool_result(void *ctx, const struct loop_call *c,
               const struct loop_result *r, struct status_error *err)
{
    return term_calls_on_result(&((struct run *)ctx)->s->calls, c, r, err);
}

/* The loop's sink; run_loop() adds on_delta when the text is to stream
 * (a sink with a delta op makes the loop call Gemini streamed). */
static const struct loop_sink_ops sink_ops = {
    .retry = on_retry,
    .done = on_done,
    .text = on_text,
    .tool_call = on_tool_call,
    .tool_result = on_tool_result,
    .usage = on_usage,
    .status = on_status,
};

/* --- the prompt's start and end ----------------------------------------- */

static json_t *
init_message(struct term_session *s)
{
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:[s], s:s, s:s, s:s, "
        "s:[], s:[], s:[]}",
        "type", "system", "subtype", "init", "cwd", s->saved.cwd, "session_id",
        s->saved.session_id, "tools", term_tools_names(&s->tools),
        "mcp_servers", term_tools_mcp_servers(&s->tools), "model",
        s->conv.model, "permissionMode", term_mode_name(s->tools.mode),
        "slash_commands", "compact", "apiKeySource", s->key_source,
        "claude_code_version", TERM_PROTOCOL_VERSION, "output_style", "default",
        "agents", "skills", "plugins");
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

    term_out_end_message(&s->out, NULL, &s->conv.last);
    if (s->ctl.interrupted)
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
        if (s->out.tty == NULL) /* at a terminal the result shows it once */
            term_out_system_error(s->out.fmt, s->out.f, s->saved.session_id,
                                  msg);
        return msg;
    }
    am = term_sj_assistant(s->conv.msg_id, s->conv.model,
                           json_pack("{s:s, s:s}", "type", "text", "text", msg),
                           term_conv_last_usage(&s->conv));
    if (am != NULL &&
        json_object_set_new(am, "error", json_string(kind)) != 0) {
        json_decref(am);
        am = NULL;
    }
    term_out_emit(&s->out, am);
    return msg;
}

/* The result message of the prompt (started at t0); NULL: out of memory. */
static json_t *
result_message(struct term_session *s, const struct outcome *o, long t0,
               const char *text)
{
    const struct loop_usage used = term_conv_prompt_usage(&s->conv);
    const struct loop_usage *u = &used;
    double cost = term_sj_cost(s->conv.model, u);
    json_t *mu = json_pack(
        "{s:{s:I, s:I, s:I, s:I, s:i, s:f}}", s->conv.model, "inputTokens",
        (json_int_t)term_minus(u->prompt, u->cached), "outputTokens",
        (json_int_t)(u->candidates + u->thoughts), "cacheReadInputTokens",
        (json_int_t)u->cached, "cacheCreationInputTokens", (json_int_t)0,
        "webSearchRequests", 0, "costUSD", cost);
    json_t *m = json_pack(
        "{s:s, s:s, s:b, s:I, s:I, s:i, s:s, s:s?, s:s, s:f, s:o, s:o, "
        "s:O}",
        "type", "result", "subtype", o->subtype, "is_error", o->is_error,
        "duration_ms", (json_int_t)(monotime_ms() - t0), "duration_api_ms",
        (json_int_t)s->conv.api_ms, "num_turns", s->conv.num_turns, "result",
        text, "stop_reason", o->stop, "session_id", s->saved.session_id,
        "total_cost_usd", cost, "usage", term_sj_usage(u), "modelUsage", mu,
        "permission_denials", s->calls.denials);
    char uuid[37];

    if (m != NULL && o->error != NULL)
        json_object_set_new(m, "errors", json_pack("[s]", o->error));
    if (m == NULL || term_uuid(uuid) != 0 ||
        json_object_set_new(m, "uuid", json_string(uuid)) != 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* Write the prompt's result (started at t0). 0, or -1. */
static int
write_result(struct term_session *s, const struct outcome *o, long t0)
{
    const char *last = s->conv.last_text;
    const char *text = o->error && !last ? o->error : last ? last : "";
    json_t *m = result_message(s, o, t0, text);

    if (m == NULL)
        return -1;
    return term_out_result(&s->out, m, o->is_error,
                           o->is_error && o->error ? o->error : text);
}

/* --- compaction ---------------------------------------------------------- */

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

/* Compact the conversation (conv.h) and say so: compact_boundary. 1
 * compacted, 0 nothing to compact, -1 with `err`. */
static int
compact(struct term_session *s, bool manual, struct status_error *err)
{
    long pre;
    int rc = term_conv_compact(&s->conv, manual, s->tools.decls, &s->a, &pre,
                               err);

    if (rc <= 0)
        return rc;
    if (term_out_emit(&s->out, json_pack("{s:s, s:s, s:{s:s, s:I}}", "type",
                                         "system", "subtype",
                                         "compact_boundary", "compact_metadata",
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

    if (s->out.failed)
        return -1;
    if (rc < 0) {
        o = (struct outcome){"error_during_execution", true, NULL, NULL};
        o.error = failure(s, &err);
    } else {
        term_conv_said(&s->conv, rc > 0 ? "Compacted the conversation."
                                        : "Nothing to compact yet.");
        term_saved_save(&s->saved, &s->conv);
    }
    if (write_result(s, &o, t0) != 0)
        return -1;
    return o.is_error ? 1 : 0;
}

/* Compaction due before the prompt: a failure is said, and the prompt
 * carries on whole (Gemini may still take it). 0, or -1 when the output
 * failed. */
static int
compact_if_due(struct term_session *s)
{
    struct status_error err = {0};
    char line[STATUS_TEXT_MAX + 64];

    if (!term_conv_compact_due(&s->conv) || compact(s, false, &err) >= 0)
        return 0;
    status_text(&err, line, sizeof(line));
    fprintf(stderr, "gemini-agent chat: compaction failed: %s\n", line);
    return s->out.failed ? -1 : 0;
}

/* --- one prompt ---------------------------------------------------------- */

/* What ended the loop, when it did not fail. */
static void
loop_outcome(struct term_session *s, enum loop_end end, long max_steps,
             struct outcome *o)
{
    static const char *const during = "error_during_execution";

    switch (end) {
    case LOOP_ANSWERED:
        o->stop = "end_turn";
        break;
    case LOOP_TRUNCATED:
        o->stop = "max_tokens";
        break;
    case LOOP_MAX_STEPS:
        *o = (struct outcome){"error_max_turns", true, NULL, NULL};
        o->error = arena_printf(
            &s->a, "Reached the maximum number of turns (%ld)", max_steps);
        break;
    case LOOP_BLOCKED:
        *o = (struct outcome){during, true,
                              "Gemini declined to answer (blocked by its "
                              "safety settings)",
                              NULL};
        break;
    case LOOP_HANDED_BACK:
        *o = (struct outcome){during, true,
                              "a tool asked for an answer the terminal "
                              "cannot give",
                              NULL};
        break;
    }
}

/* Run the agent loop on the history (the user's text last): 0, or -1
 * with `err`; *max_steps: its bound. */
static int
run_loop(struct term_session *s, struct run *run, long *max_steps,
         struct status_error *err)
{
    struct loop_sink_ops ops = sink_ops;
    struct loop_sink sink = {&ops, run};

    if (s->args->partial || s->out.tty) /* a person reads it as it comes */
        ops.delta = on_delta;
    *max_steps = s->args->max_turns > 0 ? s->args->max_turns : BOUND_TERM_TURNS;
    struct loop_input in = {
        .g = &s->conv.g,
        .gemini = &s->conv.gemini,
        .actions = s->tools.set,
        .action_env = &s->tools.actions_env,
        .a = &s->a,
        .contents = s->conv.contents,
        .tools = s->tools.decls,
        .system = s->conv.system,
        .max_steps = *max_steps,
        .max_calls = DEFAULT_CALLS_PER_TURN,
        /* a stream that drops mid-answer: once more, then the error */
        .broke_retries = 1,
        .decide = ts_decide,
        .decide_ctx = &s->calls,
    };
    return loop_run(&in, &sink, err);
}

/* A new prompt: its counts, its state, init. 0, or -1. */
static int
start_prompt(struct term_session *s)
{
    term_conv_reset_prompt(&s->conv);
    term_control_reset(&s->ctl);
    term_out_reset(&s->out);
    if (term_calls_reset(&s->calls) != 0 ||
        term_out_emit(&s->out, init_message(s)) != 0)
        return -1;
    return 0;
}

static int
prompt(struct term_session *s, const char *text)
{
    struct status_error err = {0};
    struct outcome o = {"success", false, NULL, NULL};
    struct run run = {s, LOOP_ANSWERED};
    long t0 = monotime_ms(), max_steps;
    json_t *contents;

    if (start_prompt(s) != 0)
        return -1;
    if (is_compact_command(text))
        return compact_command(s, t0);
    if (compact_if_due(s) != 0)
        return -1;
    /* where this prompt's turns start: a prompt that fails is taken back
     * whole, so no call is left without its answer for the next one */
    contents = s->conv.contents;
    size_t start = json_array_size(contents);
    if (json_array_append_new(contents,
                              json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                        "parts", "text", text)) != 0)
        return -1;
    int rc = run_loop(s, &run, &max_steps, &err);
    if (s->out.failed)
        return -1;
    term_conv_settle(&s->conv);
    if (rc != 0) {
        while (json_array_size(contents) > start)
            json_array_remove(contents, json_array_size(contents) - 1);
        o = (struct outcome){"error_during_execution", true, failure(s, &err),
                             NULL};
    } else if (s->ctl.interrupted) {
        o = (struct outcome){"error_during_execution", true,
                             "interrupted by the user", NULL};
    } else {
        loop_outcome(s, run.end, max_steps, &o);
    }
    term_saved_save(&s->saved, &s->conv);
    if (write_result(s, &o, t0) != 0)
        return -1;
    return rc != 0 && err.code == ST_UPSTREAM_AUTH ? -1 : o.is_error ? 1 : 0;
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
