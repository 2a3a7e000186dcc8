/*
 * control.c - stdin in stream-json mode and interrupts (control.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/control.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "term/args.h"
#include "term/conv.h"
#include "term/out.h"
#include "term/perm.h"
#include "term/tools.h"
#include "term/tty.h"
#include "term/bounds.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPACT_DESCRIPTION                                                    \
    "Summarise the conversation so far, to free its context"

void
term_control_init(struct term_control *c, const struct term_control_env *env)
{
    *c = (struct term_control){
        .in_stream = env->in_stream,
        .out = env->out,
        .conv = env->conv,
        .tools = env->tools,
        .a = env->a,
        .life = env->life,
    };
    term_input_init(&c->input, env->fd);
}

void
term_control_release(struct term_control *c)
{
    json_decref(c->msg);
    c->msg = NULL;
    term_input_release(&c->input);
}

void
term_control_reset(struct term_control *c)
{
    if (c->sigflag != NULL) /* a Ctrl-C before the prompt is not for it */
        *c->sigflag = 0;
    c->interrupted = false;
}

/* Wait for the next line of the input, into c->line; its length, or -1
 * at the end (or a line past the bound: said on stderr). */
static long
read_line(struct term_control *c)
{
    long n = term_input_line(&c->input, -1, &c->line);

    return n < 0 ? -1 : n;
}

/* --- control requests --------------------------------------------------- */

static int
control_reply(struct term_control *c, const char *id, json_t *payload,
              const char *error)
{
    json_t *r = error ? json_pack("{s:s, s:{s:s, s:s, s:s}}", "type",
                                  "control_response", "response", "subtype",
                                  "error", "request_id", id, "error", error)
                      : json_pack("{s:s, s:{s:s, s:s, s:o}}", "type",
                                  "control_response", "response", "subtype",
                                  "success", "request_id", id, "response",
                                  payload);
    return term_out_raw(c->out, r);
}

/* One control request: its id, its body, and whether a prompt runs. */
struct request {
    const char *id;
    const json_t *req;
    bool in_turn;
};

static int
on_initialize(struct term_control *c, const struct request *r)
{
    if (c->initialized)
        return control_reply(c, r->id, NULL, "Already initialized");
    c->initialized = true;
    return control_reply(
        c, r->id,
        json_pack("{s:[{s:s, s:s, s:s}], s:[], s:s, s:[s], s:[], s:{}}",
                  "commands", "name", "compact", "description",
                  COMPACT_DESCRIPTION, "argumentHint", "", "agents",
                  "output_style", "default", "available_output_styles",
                  "default", "models", "account"),
        NULL);
}

static int
on_interrupt(struct term_control *c, const struct request *r)
{
    /* Between prompts there is nothing to stop; during one (a tool
     * waiting for permission) the prompt ends with an error result. */
    if (r->in_turn)
        c->interrupted = true;
    return control_reply(c, r->id, json_pack("{s:[]}", "still_queued"), NULL);
}

static int
on_set_permission_mode(struct term_control *c, const struct request *r)
{
    const char *m = json_string_value(json_object_get(r->req, "mode"));
    enum term_mode mode;
    char buf[160];

    if (m == NULL || term_mode_parse(m, &mode) != 0) {
        snprintf(buf, sizeof(buf), "Unknown permission mode: %.100s",
                 m ? m : "(none)");
        return control_reply(c, r->id, NULL, buf);
    }
    term_tools_set_mode(c->tools, mode);
    return control_reply(c, r->id, json_pack("{s:s}", "mode", m), NULL);
}

static int
on_set_model(struct term_control *c, const struct request *r)
{
    const char *m = json_string_value(json_object_get(r->req, "model"));

    if (term_conv_set_model(c->conv, m, r->in_turn) != 0)
        return control_reply(c, r->id, NULL, "out of memory");
    return control_reply(c, r->id, json_object(), NULL);
}

static int
on_mcp_status(struct term_control *c, const struct request *r)
{
    return control_reply(
        c, r->id,
        json_pack("{s:o}", "mcpServers", term_tools_mcp_servers(c->tools)),
        NULL);
}

static const struct {
    const char *subtype;
    int (*answer)(struct term_control *c, const struct request *r);
} requests[] = {
    {"initialize", on_initialize},
    {"interrupt", on_interrupt},
    {"set_permission_mode", on_set_permission_mode},
    {"set_model", on_set_model},
    {"mcp_status", on_mcp_status},
};

/* Answer the control request `msg`. 0, or -1 when the answer could not
 * be written. */
static int
handle_control(struct term_control *c, const json_t *msg, bool in_turn)
{
    const char *id = json_string_value(json_object_get(msg, "request_id"));
    const json_t *req = json_object_get(msg, "request");
    const char *sub = json_string_value(json_object_get(req, "subtype"));
    const struct request r = {id ? id : "", req, in_turn};
    char buf[160];

    if (sub == NULL)
        return control_reply(c, r.id, NULL, "Missing request subtype");
    for (size_t i = 0; i < ARRAY_SIZE(requests); i++)
        if (strcmp(sub, requests[i].subtype) == 0)
            return requests[i].answer(c, &r);
    snprintf(buf, sizeof(buf), "Unsupported control request subtype: %.100s",
             sub);
    return control_reply(c, r.id, NULL, buf);
}

/* --- during a prompt ----------------------------------------------------- */

/*
 * A line that came while a turn runs: a control request is answered at
 * once (an interrupt marks the turn interrupted), a user message waits
 * for after the turn. Anything else is returned, parsed (the caller's:
 * a control_response), or NULL.
 */
static json_t *
turn_line(struct term_control *c, const char *line)
{
    json_t *m = json_loads(line, 0, NULL);
    const char *type = json_string_value(json_object_get(m, "type"));

    if (type != NULL && strcmp(type, "control_request") == 0) {
        handle_control(c, m, true);
    } else if (type != NULL && strcmp(type, "user") == 0) {
        term_input_defer(&c->input, line);
    } else if (type != NULL) {
        return m;
    }
    json_decref(m);
    return NULL;
}

/*
 * With stream-json input, first take what came on stdin meanwhile
 * (without waiting: turn_line()). Asked while Gemini answers (the
 * client's `gone`, so the transfer is dropped) and while a tool runs
 * (ctx->cancelled).
 */
bool
term_control_interrupted(struct term_control *c)
{
    const char *line;

    if (c->sigflag != NULL && *c->sigflag) { /* Ctrl-C at the terminal */
        *c->sigflag = 0;
        c->interrupted = true;
        if (c->tty != NULL)
            tty_echoed(c->tty); /* its ^C */
    }
    if (!c->in_stream)
        return c->interrupted;
    while (!c->interrupted && term_input_line(&c->input, 0, &line) >= 0)
        json_decref(turn_line(c, line)); /* no answer is awaited now */
    return c->interrupted;
}

bool
term_control_gone(void *ctx)
{
    return term_control_interrupted(ctx);
}

/* --- can_use_tool -------------------------------------------------------- */

/* Send the can_use_tool request `id` for `t` on `input`. 0, or -1. */
static int
send_ask(struct term_control *c, const char *id, const struct term_tool *t,
         const char *tool_use_id, const json_t *input)
{
    return term_out_raw(
        c->out,
        json_pack("{s:s, s:s, s:{s:s, s:s, s:O, s:s, s:o}}", "type",
                  "control_request", "request_id", id, "request", "subtype",
                  "can_use_tool", "tool_name", t->name, "input", UNCONST(input),
                  "tool_use_id", tool_use_id, "permission_suggestions",
                  term_perm_suggest(t->name, input, t->edit)));
}

/* The answer `res` allows the call: updatedInput replaces *input (pinned
 * in the prompt's arena), updatedPermissions grow the session's rules (a
 * bad update is said, the call still allowed). */
static int
allowed(struct term_control *c, const json_t *res, const json_t **input,
        struct status_error *err)
{
    json_t *upd = json_object_get(res, "updatedInput");
    struct status_error uerr = {0};

    if (json_is_object(upd))
        *input = arena_take_json(c->a, json_incref(upd));
    if (term_tools_update(c->tools, json_object_get(res, "updatedPermissions"),
                          c->life, &uerr) != 0)
        fprintf(stderr,
                "gemini-agent chat: updatedPermissions: %s; the rest "
                "ignored\n",
                uerr.text);
    return *input ? TERM_ALLOW : status_set(err, ST_NO_MEMORY, "out of memory");
}

/* The control_response `resp` to our request: the verdict. */
static int
answered(struct term_control *c, const json_t *resp, const json_t **input,
         const char **why, struct status_error *err)
{
    const char *sub = json_string_value(json_object_get(resp, "subtype"));
    const json_t *res = json_object_get(resp, "response");
    const char *behavior = json_string_value(json_object_get(res, "behavior"));
    const char *msg = json_string_value(json_object_get(res, "message"));

    if (sub != NULL && strcmp(sub, "success") == 0) {
        if (behavior != NULL && strcmp(behavior, "allow") == 0)
            return allowed(c, res, input, err);
        *why = arena_strdup(c->a, msg ? msg : "denied by the user");
        if (json_is_true(json_object_get(res, "interrupt")))
            c->interrupted = true;
    } else {
        const char *e = json_string_value(json_object_get(resp, "error"));
        *why = arena_printf(c->a, "Tool permission request failed: %s",
                            e ? e : "no answer");
    }
    return *why ? TERM_DENY : status_set(err, ST_NO_MEMORY, "out of memory");
}

/* The control_response of `m` when it answers request `id`, else NULL. */
static const json_t *
response_to(const json_t *m, const char *id)
{
    const char *type = json_string_value(json_object_get(m, "type"));
    const json_t *resp = json_object_get(m, "response");
    const char *rid = json_string_value(json_object_get(resp, "request_id"));

    if (type == NULL || strcmp(type, "control_response") != 0 || rid == NULL ||
        strcmp(rid, id) != 0)
        return NULL;
    return resp;
}

/*
 * A can_use_tool control request, then stdin until its answer. Other
 * control requests are answered meanwhile; user messages wait for after
 * the turn.
 */
int
term_control_ask(struct term_control *c, const struct term_tool *t,
                 const char *tool_use_id, const json_t **input,
                 const char **why, struct status_error *err)
{
    char id[48];

    snprintf(id, sizeof(id), "perm_%ld", ++c->req_seq);
    if (send_ask(c, id, t, tool_use_id, *input) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    for (;;) {
        const json_t *resp;
        json_t *m;
        int v;

        if (read_line(c) < 0) {
            *why = "the permission prompt got no answer (input closed)";
            return TERM_DENY;
        }
        m = turn_line(c, c->line);
        if (c->interrupted) {
            json_decref(m);
            *why = "interrupted by the user";
            return TERM_DENY;
        }
        if ((resp = response_to(m, id)) == NULL) {
            json_decref(m);
            continue;
        }
        v = answered(c, resp, input, why, err);
        json_decref(m);
        return v;
    }
}

/* --- between prompts ----------------------------------------------------- */

/* A user message's text: `content` a string, or the text of its text
 * blocks joined by newlines. NULL when it has none (or out of memory). */
static const char *
user_text(struct term_control *c, const json_t *msg)
{
    const json_t *content = json_object_get(json_object_get(msg, "message"),
                                            "content");
    const json_t *b;
    struct sbuf sb;
    const char *out = NULL;
    size_t i;

    if (json_is_string(content))
        return json_string_length(content) > 0 ? json_string_value(content)
                                               : NULL;
    sbuf_init(&sb, BOUND_TERM_INPUT_LINE);
    json_array_foreach(content, i, b) {
        const char *t = json_string_value(json_object_get(b, "text"));
        const char *type = json_string_value(json_object_get(b, "type"));
        if (t == NULL || type == NULL || strcmp(type, "text") != 0)
            continue;
        if ((sb.len > 0 && sbuf_putc(&sb, '\n') != 0) || sbuf_adds(&sb, t) != 0)
            break;
    }
    if (sb.len > 0)
        out = arena_strndup(c->a, sb.buf, sb.len);
    sbuf_release(&sb);
    return out;
}

/* One line of input between prompts: 1 a user message's text (*text; the
 * message kept in c->msg), 0 to go on, -1 to stop. */
static int
serve_line(struct term_control *c, const char *line, const char **text)
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
        rc = handle_control(c, m, false) != 0 ? -1 : 0;
    } else if (strcmp(type, "user") == 0) {
        if ((*text = user_text(c, m)) != NULL) {
            c->msg = m;
            return 1;
        }
        fprintf(stderr, "gemini-agent chat: a user message without "
                        "text; skipped\n");
    } else if (strcmp(type, "keep_alive") != 0 &&
               strcmp(type, "control_response") != 0 &&
               strcmp(type, "control_cancel_request") != 0) {
        fprintf(stderr,
                "gemini-agent chat: expected a user message or a control "
                "request, got '%.40s'; skipped\n",
                type);
    }
    json_decref(m);
    return rc;
}

int
term_control_next(struct term_control *c, const char **text)
{
    json_decref(c->msg); /* the last prompt's */
    c->msg = NULL;
    for (;;) {
        char *q = term_input_undefer(&c->input);
        int rc;

        if (q != NULL) { /* what came during the turn, in order */
            rc = serve_line(c, q, text);
            free(q);
        } else if (read_line(c) < 0) {
            return 0; /* stdin closed after the last result: done */
        } else if (c->line[0] == '\0') {
            continue;
        } else {
            rc = serve_line(c, c->line, text);
        }
        if (rc != 0)
            return rc;
    }
}
