/*
 * run.h - one run of the run API (docs/http-api.md): the agent loop with a
 * policy step, every state kept in the store, and approvals that resume
 * the loop where it stopped.
 *
 *   start:  persist the prompt and a queued run -> planning -> the loop;
 *           for every call of a step: an action row, its arguments
 *           validated (invalid: failed, the model is told), the policy
 *           (policy.h): run it (executing -> completed | failed, its
 *           result back to the model as a functionResponse), deny it (the
 *           model is told why), or stop for the user's approval
 *           (awaiting_confirmation, with the conversation saved);
 *   decide: an approval is decided once (the store's atomic update); the
 *           action runs (approved, arguments validated again) or is
 *           rejected, and when no other approval of the run waits, the
 *           loop resumes with every answer of that step, to a final
 *           answer or the next approval.
 *
 * The answer (seed §3) is the same object for both, and for the stream's
 * `result` line: {ok, runId, actionId, threadId, status, summary, mode,
 * model, tool?, toolArgs?, approval?, output?, usage, normalized?}.
 * actionId is the action the answer shows (the tool that waits or ran
 * last) or else the run's own "reply" action, made with the run (its
 * bootstrap state, seed §6), which ends completed with the reply's text:
 * every run answers an id that GET /api/agent/runs/{id} lists.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_RUN_H
#define APP_RUN_H

#include "core/common.h"

struct arena;
struct gemini;
struct json_t;
struct loop_gate;
struct ndjson;
struct run_input;
struct site;
struct status_error;
struct store;

/* What one run request works with. */
struct run_env {
    const struct site *site;
    struct gemini *g;
    struct store *store;
    struct arena *a;
    const char *user;       /* who asked (auth.h) */
    struct ndjson *stream;  /* the events as they happen, or NULL */
    struct loop_gate *gate; /* the budget's (budget.h), or NULL */
};

/* A new run from a normalised request. 0 with `*answer` (pinned to the
 * arena), or -1 with `err` set (the run, when it was created, is failed). */
int run_start(const struct run_env *env, const struct run_input *in,
              struct json_t **answer, struct status_error *err);

/* Decide the approval `id` ("approve_once", "approve_and_always_allow" or
 * "reject", with the user's `feedback` or NULL) and resume its run. */
int run_decide(const struct run_env *env, const char *id, const char *decision,
               const char *feedback, struct json_t **answer,
               struct status_error *err);

/* Answer the question run `run` waits for (its first, when several do:
 * a tool's GEMINI_AGENT_ASK_USER) with `answers` {question id: value},
 * checked against it (400 with what is wrong), once (409 when nothing
 * waits: answered already, also concurrently), and resume the run. A run
 * of another user is not found (404). */
int run_answer(const struct run_env *env, const char *run,
               const struct json_t *answers, struct json_t **answer,
               struct status_error *err);

#endif /* APP_RUN_H */
