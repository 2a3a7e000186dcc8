/*
 * control.c - stdin in stream-json mode (session_int.h): the control
 * protocol (initialize, interrupt, set_permission_mode, set_model,
 * mcp_status), can_use_tool round trips, and what comes while a prompt
 * runs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session_int.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "term/streamjson.h"
#include "term/tty.h"
#include "term/bounds.h"

#include <stdlib.h>
#include <string.h>

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
bool
ts_interrupted(struct term_session *s)
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

bool
ts_gone(void *ctx)
{
    return ts_interrupted(ctx);
}

/*
 * Ask the SDK whether `tool` may run with `*input`: a can_use_tool
 * control request, then stdin until its answer. Other control requests
 * are answered meanwhile; user messages wait for after the turn.
 * Returns TERM_ALLOW (with *input maybe replaced by updatedInput, pinned)
 * or TERM_DENY with *why; -1 with `err` when out of memory.
 */
int
ts_ask_stdio(struct term_session *s, const struct term_tool *t,
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
                                       ts_mcp_servers(s)),
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
