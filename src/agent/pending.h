/*
 * pending.h - the pending turn: the calls of a model turn, answered in
 * order, some now and some later.
 *
 * A model turn may hold calls that cannot all be answered at once: one
 * waits for a person's approval, one for an answer to a question, one
 * for a browser. What was answered so far sits in a partial answer turn
 * right after the model turn (in call order, as the loop writes it);
 * each later step answers more, and the partial turn gives way to the
 * whole one. The chat protocol (http/chatwait.c) answers the calls of
 * the history the browser sends this way; the run API (http/run.c),
 * which keeps its conversation, does the same at the turn it knows.
 *
 * The helper knows nothing of who answers: it reuses the answers already
 * given and asks the caller's `pending_answer_fn` for the rest.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PENDING_H
#define APP_PENDING_H

#include "core/common.h"

struct json_t;
struct status_error;

/* A model turn with calls, and what is known of their answers. */
struct pending_turn {
    size_t model;                 /* contents[model] is the model turn */
    const struct json_t *parts;   /* its parts (borrowed) */
    const struct json_t *partial; /* the parts of the answer turn after
                                   * it (borrowed), or NULL: none yet */
    bool after;                   /* a turn follows the model turn (the
                                   * partial answer turn) */
};

/*
 * The pending turn that ends `contents` (checked turns: each has a
 * `role` and `parts`): a model turn with calls that is the last turn, or
 * is followed by a user turn with fewer answers than it has calls.
 * Returns true and fills `p`, or false when nothing is pending.
 */
bool pending_find(const struct json_t *contents, struct pending_turn *p);

/* The model turn contents[model] as a pending turn, whatever it holds;
 * the turn after it, when there is one, is its partial answer turn. For
 * a caller that knows where its calls are (a saved run). */
void pending_at(const struct json_t *contents, size_t model,
                struct pending_turn *p);

/* One call of the pending turn that the partial turn does not answer. */
struct pending_call {
    const struct json_t *call; /* the functionCall object (borrowed) */
    const char *name;          /* its name */
    size_t turn, part;         /* contents[turn].parts[part] */
};

/*
 * Answer `c` now or leave it for later: 0 with *resp the
 * functionResponse's `response` (a new reference) or NULL (the call
 * stays unanswered), or -1 with `err` set, which ends the walk.
 */
typedef int (*pending_answer_fn)(void *ctx, const struct pending_call *c,
                                 struct json_t **resp,
                                 struct status_error *err);

/*
 * The answer turn of `p`, {"role": "user", "parts": [...]}: for each call
 * in order, the partial turn's answer when it gives one (matched by name
 * and id, loop_answers_call), else what `fn` answers (nothing for a call
 * it leaves). Returns 0 with *turn a new reference and *nparts its
 * number of answers, or -1 with `err` set (fn's, or out of memory).
 */
int pending_answer(const struct pending_turn *p, pending_answer_fn fn,
                   void *ctx, struct json_t **turn, size_t *nparts,
                   struct status_error *err);

/* Put the answer turn `turn` (the reference is taken, also on failure)
 * into `contents` in place of the partial turn, or after the model turn
 * when there is none. 0, or -1 when out of memory. */
int pending_place(struct json_t *contents, const struct pending_turn *p,
                  struct json_t *turn, struct status_error *err);

#endif /* APP_PENDING_H */
