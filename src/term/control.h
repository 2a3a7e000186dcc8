/*
 * control.h - what comes in on stdin with --input-format stream-json, and
 * an interrupt from anywhere: the control protocol (initialize,
 * interrupt, set_permission_mode, set_model, mcp_status), the
 * can_use_tool round trip that asks the host whether a call may run, the
 * user messages (each a prompt, those that come during a prompt queued
 * for after it), and the terminal's Ctrl-C.
 *
 * A control request is answered when it is read, during a prompt too:
 * what it changes belongs to the conversation (conv.h: the model) or to
 * the tools (tools.h: the permission mode), which this file borrows.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_CONTROL_H
#define APP_TERM_CONTROL_H

#include "core/common.h"
#include "term/input.h"

#include <signal.h>

struct arena;
struct json_t;
struct status_error;
struct term_conv;
struct term_out;
struct term_tool;
struct term_tools;
struct tty;

struct term_control {
    struct term_input input; /* stdin's lines (stream-json input) */
    bool in_stream;          /* --input-format stream-json */
    const char *line;        /* the last one read (input's) */
    struct json_t *msg;      /* the user message being answered, or NULL */
    bool initialized;        /* the initialize control request was answered */
    long req_seq;            /* can_use_tool requests sent */
    volatile sig_atomic_t *sigflag; /* term_session_watch(); or NULL */
    bool interrupted;               /* the prompt in flight is to stop */
    /* borrowed */
    struct term_out *out;
    struct term_conv *conv;
    struct term_tools *tools;
    struct arena *a;    /* the prompt's */
    struct arena *life; /* the session's (the rules that grow) */
    struct tty *tty;    /* a person at the terminal, or NULL */
};

/* What control requests change, and where answers go (all borrowed). */
struct term_control_env {
    int fd; /* stdin's */
    bool in_stream;
    struct term_out *out;
    struct term_conv *conv;
    struct term_tools *tools;
    struct arena *a, *life;
};

void term_control_init(struct term_control *c,
                       const struct term_control_env *env);
void term_control_release(struct term_control *c);

/* A new prompt: not interrupted; a Ctrl-C before it is not for it. */
void term_control_reset(struct term_control *c);

/* Has the user interrupted the prompt (an interrupt control request, the
 * terminal's Ctrl-C)? Reads what stdin has meanwhile, without waiting. */
bool term_control_interrupted(struct term_control *c);
/* term_control_interrupted() as the Gemini client's `gone` and a tool's
 * cancel (`ctx`: the struct term_control) */
bool term_control_gone(void *ctx);

/* Ask the host over stdin (can_use_tool) whether `t` may run with *input
 * as call `tool_use_id`: TERM_ALLOW (*input maybe updated, the rules maybe
 * grown) or TERM_DENY with *why; -1 with `err`. */
int term_control_ask(struct term_control *c, const struct term_tool *t,
                     const char *tool_use_id, const struct json_t **input,
                     const char **why, struct status_error *err);

/* Between prompts: read stdin, answering control requests, until a user
 * message (those queued during the last prompt first): 1 with *text (the
 * message's text, valid until the next call), 0 at the end of the input,
 * -1 when an answer could not be written. */
int term_control_next(struct term_control *c, const char **text);

#endif /* APP_TERM_CONTROL_H */
