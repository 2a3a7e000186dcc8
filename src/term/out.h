/*
 * out.h - what a terminal session writes: Claude Code's stream-json
 * messages (streamjson.h), or, when a person at a terminal reads them,
 * tty.h's rendering of the same messages; the partial-message events of
 * --include-partial-messages; the lines of the control protocol; and the
 * prompt's result in every output format.
 *
 * A failed write is remembered (`failed`): the session cannot go on.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_OUT_H
#define APP_TERM_OUT_H

#include "core/common.h"
#include "term/args.h"

#include <stddef.h>
#include <stdio.h>

struct json_t;
struct loop_usage;
struct status_error;
struct tty;

struct term_out {
    FILE *f;
    enum term_format fmt;
    const char *session_id; /* borrowed: the saved session's (saved.h) */
    struct tty *tty;        /* a person reads us (borrowed), or NULL */
    bool block_open;        /* --include-partial-messages: a text block */
    bool msg_open;          /* ... its message, not yet ended */
    bool failed;            /* a write failed */
};

void term_out_init(struct term_out *o, FILE *f, enum term_format fmt,
                   const char *session_id);

/* Write `msg` (taken; NULL: out of memory) when the output is stream-json
 * or a person reads it; -1 when it could not be (o->failed is then set). */
int term_out_emit(struct term_out *o, struct json_t *msg);
/* term_out_emit(), with `err` set when it failed. */
int term_out_emit_err(struct term_out *o, struct json_t *msg,
                      struct status_error *err);
/* Write `msg` as it is (a control request or response), taken. 0 or -1. */
int term_out_raw(struct term_out *o, struct json_t *msg);

/* A system message of subtype "error" (stream-json and json), else a
 * line on stderr: for failures before a session exists, and a key
 * Gemini refused. */
void term_out_system_error(enum term_format fmt, FILE *f,
                           const char *session_id, const char *text);

/* A new prompt: no streamed block or message is open. */
void term_out_reset(struct term_out *o);

/* The assistant message being streamed (all borrowed). */
struct term_out_msg {
    const char *id;
    const char *model;
    const struct loop_usage *usage; /* so far */
};

/* Stream `text` (len bytes) of the answer: message `m`'s message_start
 * and a text block first when none is open. 0, or -1 with `err`. */
int term_out_delta(struct term_out *o, const struct term_out_msg *m,
                   const char *text, size_t len, struct status_error *err);

/* Close the streamed text block (its message stays open). 0 or -1. */
int term_out_close_block(struct term_out *o);

/* End the streamed message with its stop_reason (NULL when it failed) and
 * usage `last`; 0, or -1 when the output failed. */
int term_out_end_message(struct term_out *o, const char *stop_reason,
                         const struct loop_usage *last);

/* Write the prompt's result `m` (taken) as the format wants it: the
 * object (stream-json, json), the rendering (a person), else `text` on
 * the output or, for an error (`is_error`), on stderr. 0 or -1. */
int term_out_result(struct term_out *o, struct json_t *m, bool is_error,
                    const char *text);

#endif /* APP_TERM_OUT_H */
