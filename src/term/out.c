/*
 * out.c - what a terminal session writes (out.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/out.h"
#include "agent/loop.h"
#include "core/status.h"
#include "term/streamjson.h"
#include "term/tty.h"

#include <jansson.h>

void
term_out_init(struct term_out *o, FILE *f, enum term_format fmt,
              const char *session_id)
{
    *o = (struct term_out){.f = f, .fmt = fmt, .session_id = session_id};
}

int
term_out_emit(struct term_out *o, json_t *msg)
{
    if (msg == NULL) {
        o->failed = true;
        return -1;
    }
    if (o->tty != NULL) { /* the same messages, rendered for a person */
        int rc = tty_message(o->tty, msg);
        json_decref(msg);
        if (rc != 0)
            o->failed = true;
        return rc;
    }
    if (o->fmt != TERM_FMT_STREAM) {
        json_decref(msg);
        return 0;
    }
    if (term_sj_emit(o->f, o->session_id, msg) != 0) {
        o->failed = true;
        return -1;
    }
    return 0;
}

int
term_out_emit_err(struct term_out *o, json_t *msg, struct status_error *err)
{
    if (term_out_emit(o, msg) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

int
term_out_raw(struct term_out *o, json_t *msg)
{
    return term_sj_emit_raw(o->f, msg);
}

void
term_out_system_error(enum term_format fmt, FILE *f, const char *session_id,
                      const char *text)
{
    if (fmt == TERM_FMT_TEXT) {
        fprintf(stderr, "gemini-agent chat: %s\n", text);
        return;
    }
    term_sj_emit(f, session_id,
                 json_pack("{s:s, s:s, s:s}", "type", "system", "subtype",
                           "error", "error", text));
}

void
term_out_reset(struct term_out *o)
{
    o->block_open = o->msg_open = false;
}

static int
partial_event(struct term_out *o, json_t *event)
{
    return term_out_emit(o, json_pack("{s:s, s:o, s:n}", "type", "stream_event",
                                      "event", event, "parent_tool_use_id"));
}

/* A streamed message's start and its text block's. 0 or -1. */
static int
open_block(struct term_out *o, const struct term_out_msg *m)
{
    if (partial_event(
            o, json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:n, "
                         "s:o}}",
                         "type", "message_start", "message", "id", m->id,
                         "type", "message", "role", "assistant", "model",
                         m->model, "content", "stop_reason", "stop_sequence",
                         "usage", term_sj_usage(m->usage))) != 0 ||
        partial_event(o, json_pack("{s:s, s:i, s:{s:s, s:s}}", "type",
                                   "content_block_start", "index", 0,
                                   "content_block", "type", "text", "text",
                                   "")) != 0)
        return -1;
    o->block_open = true;
    return 0;
}

int
term_out_delta(struct term_out *o, const struct term_out_msg *m,
               const char *text, size_t len, struct status_error *err)
{
    if ((!o->block_open && open_block(o, m) != 0) ||
        partial_event(o, json_pack("{s:s, s:i, s:{s:s, s:s%}}", "type",
                                   "content_block_delta", "index", 0, "delta",
                                   "type", "text_delta", "text", text, len)) !=
            0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 0;
}

int
term_out_close_block(struct term_out *o)
{
    if (!o->block_open)
        return 0;
    o->block_open = false;
    o->msg_open = true;
    return partial_event(
        o, json_pack("{s:s, s:i}", "type", "content_block_stop", "index", 0));
}

/*
 * As Claude's stream ends a message, after its blocks' own messages:
 * message_delta with why it stopped ("end_turn", "tool_use",
 * "max_tokens"; NULL when it failed), then message_stop.
 */
int
term_out_end_message(struct term_out *o, const char *stop_reason,
                     const struct loop_usage *last)
{
    if (term_out_close_block(o) != 0)
        return -1;
    if (!o->msg_open)
        return 0;
    o->msg_open = false;
    if (partial_event(o, json_pack("{s:s, s:{s:s?, s:n}, s:o}", "type",
                                   "message_delta", "delta", "stop_reason",
                                   stop_reason, "stop_sequence", "usage",
                                   term_sj_usage(last))) != 0 ||
        partial_event(o, json_pack("{s:s}", "type", "message_stop")) != 0)
        return -1;
    return 0;
}

int
term_out_result(struct term_out *o, json_t *m, bool is_error, const char *text)
{
    switch (o->fmt) {
    case TERM_FMT_STREAM:
    case TERM_FMT_JSON:
        return term_sj_emit_raw(o->f, m);
    case TERM_FMT_TEXT:
        if (o->tty != NULL) {
            if (tty_message(o->tty, m) != 0)
                o->failed = true;
        } else if (is_error)
            fprintf(stderr, "gemini-agent chat: %s\n", text);
        else if (fprintf(o->f, "%s\n", text) < 0 || fflush(o->f) != 0)
            o->failed = true;
        json_decref(m);
        return o->failed ? -1 : 0;
    }
    json_decref(m);
    return 0;
}
