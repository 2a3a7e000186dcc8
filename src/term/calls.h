/*
 * calls.h - who answers a call of the model in a terminal session: its
 * tool_use blocks, the permission check (perm.h) and the question (over
 * stdin: control.h; or at the terminal: tty.h), the run, and its
 * tool_result. The agent loop (agent/loop.h) asks ts_decide() for every
 * call; the session answers each one itself (LOOP_ANSWER_IT), because the
 * terminal's tools are declared under their own names and map back
 * through tools.h's table, and because the permission check comes
 * between the call and its run.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_CALLS_H
#define APP_TERM_CALLS_H

#include "core/common.h"
#include "agent/loop.h"
#include "registry/action.h"

#include <stddef.h>

struct arena;
struct json_t;
struct status_error;
struct term_args;
struct term_control;
struct term_conv;
struct term_out;
struct term_tools;
struct tty;

struct term_calls {
    /* borrowed for the session's life */
    const struct term_args *args;
    struct arena *a; /* the prompt's */
    struct tty *tty; /* a person at the terminal, or NULL */
    struct term_out *out;
    struct term_conv *conv;
    struct term_tools *tools;
    struct term_control *ctl;
    struct action_who who; /* tools learn of an interrupt through it */
    int tool_seq;          /* tool_use ids given, over the session */
    char tool_id[32];      /* the id of the call being answered */
    /* The model turn whose calls are being answered: contents[a_turn];
     * its calls' tool_use ids are toolu_<a_first + 1 + their order>, and
     * the first a_done of them were written. */
    bool a_valid;
    size_t a_turn, a_done, a_cur; /* a_cur: the order of the call answered */
    int a_first;
    size_t st_part; /* the call whose tool_result is stashed (its part) */
    bool stashed;   /* ts_decide() left the tool_result's content here */
    const char *st_content;
    bool st_error;
    const struct json_t *st_structured;
    struct json_t *denials; /* the prompt's permission_denials */
};

/* Where the calls' answers go and what they read (all borrowed). */
struct term_calls_env {
    const struct term_args *args;
    struct arena *a;
    struct term_out *out;
    struct term_conv *conv;
    struct term_tools *tools;
    struct term_control *ctl;
};

void term_calls_init(struct term_calls *k, const struct term_calls_env *env);
void term_calls_release(struct term_calls *k);

/* A new prompt: no turn's calls announced, no denial. 0, or -1 (out of
 * memory). */
int term_calls_reset(struct term_calls *k);

/* loop_input.decide (`ctx`: the struct term_calls): the permission check,
 * maybe a question, the run */
int ts_decide(void *ctx, const struct loop_call *c, struct loop_result *r,
              struct status_error *err);

/* The loop's sink ops for calls: their tool_use, their tool_result. */
int term_calls_on_call(struct term_calls *k, const struct loop_call *c,
                       struct status_error *err);
int term_calls_on_result(struct term_calls *k, const struct loop_call *c,
                         const struct loop_result *r, struct status_error *err);

#endif /* APP_TERM_CALLS_H */
