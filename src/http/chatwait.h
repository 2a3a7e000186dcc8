/*
 * chatwait.h - the calls of a chat that wait for the visitor, and who
 * answers each call the model makes.
 *
 * Whether a call runs, waits or is refused is the decision engine's
 * (registry/decide.h); the chat gathers what the engine reads and
 * carries its decision: the browser runs the page tools it declared; an
 * action the engine asks about waits for the visitor's approval, carried
 * by a ticket the server signs (agent/seal.h) and checks when the
 * decision comes back; a tool that asks the visitor (registry/question.h)
 * waits for the answer. The server answers everything else. The chat keeps no session:
 * what waits is known again from the history the browser sends back
 * (agent/pending.h answers the calls of that turn in order).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHATWAIT_H
#define APP_CHATWAIT_H

#include "core/common.h"

struct chat_env;
struct chatin;
struct chatout;
struct json_t;
struct loop_call;
struct loop_result;
struct status_error;

struct chatwait {
    const struct chat_env *env;
    struct chatout *out; /* told of an approved action that ran */
    /* [{id, fn, args, turn, part}] waiting for the visitor, in call
     * order, in the arena */
    struct json_t *approvals;
    /* the first question waiting for the visitor's answer (a tool that
     * asks, plugin.h's GEMINI_AGENT_ASK_USER): {id, tool, questions}, or
     * NULL */
    struct json_t *question;
};

/* Nothing waits yet. 0, or -1 when out of memory. */
int chatwait_init(struct chatwait *w, const struct chat_env *env,
                  struct chatout *out, struct status_error *err);

/* Who answers the call `lc`, as the engine judges it: the loop's
 * decide() (agent/loop.h), `ctx` a struct chatwait. */
int chatwait_decide(void *ctx, const struct loop_call *lc,
                    struct loop_result *r, struct status_error *err);

/* Remember the call contents[turn].parts[part], `call` with the handle
 * `id`, as waiting for the visitor's approval. */
int chatwait_add(struct chatwait *w, const char *id, const struct json_t *call,
                 size_t turn, size_t part, struct status_error *err);

/* Remember the question `q` ({questions}) the tool `tool` asked in the
 * call `id`, unless one waits already (one card at a time). */
int chatwait_ask(struct chatwait *w, const char *id, const char *tool,
                 const struct json_t *q, struct status_error *err);

/*
 * Answer the calls waiting at the end of `contents` (the history as the
 * browser sent it) in call order: the answers given so far, the browser's
 * `results` (a message instead: every waiting call gets an error saying
 * it did not run), the visitor's decision on the first call that waits
 * for one, the visitor's answer to a question. Calls that still wait
 * stay unanswered (w->approvals, w->question); the answer turn replaces
 * the partial one in `contents`. A submitToolResults with nothing
 * waiting is a 400.
 */
int chatwait_answer(struct chatwait *w, struct json_t *contents,
                    const struct chatin *in, struct status_error *err);

/* The conversation lost its first `keep` turns: the waiting calls sit
 * where the history the browser gets has them. */
int chatwait_shift(struct chatwait *w, size_t keep, struct status_error *err);

/*
 * The approval card of the first waiting call (*card, a new reference):
 * {id, tool, args, reason, preview, ticket, expiresAt}: the engine's
 * reason, and a ticket bound to `contents`, the history the answer
 * gives (seal.h).
 */
int chatwait_card(const struct chatwait *w, const struct json_t *contents,
                  struct json_t **card, struct status_error *err);

#endif /* APP_CHATWAIT_H */
