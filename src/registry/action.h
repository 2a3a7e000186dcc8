/*
 * action.h - run one server action: validate, call the handler, bound.
 *
 * The single way any caller (the HTTP route now, the model's function
 * calls next) runs an action, so validation and limits cannot be skipped:
 *   1. the input must satisfy the action's inputSchema (jschema), else
 *      ST_SCHEMA with the path and rule in the error; the handler never
 *      runs;
 *   2. the handler runs under a watchdog of actionTimeoutMs (core/watch.h):
 *      a handler that hangs takes the worker down - the master's watchdog
 *      kills it and starts a fresh one; alone (CGI) SIGALRM ends the
 *      process - instead of a request that never ends;
 *   3. its output must serialise within BOUND_ACTION_OUTPUT_BYTES.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_ACTION_H
#define APP_ACTION_H

#include "core/common.h"

struct arena;
struct config_actions;
struct json_t;
struct plugin_action;
struct status_error;

/*
 * Who runs an action and in which conversation, handed to a plugin's
 * execute() as plugin.h's ctx->user and ctx->conversation (borrowed,
 * valid during the call; either may be NULL). The run API passes the
 * authenticated user and the thread id; the widget's chat no user and
 * the conversation key it derives (http/chat.c); a direct POST
 * /_jay/actions/<name> passes no who at all (NULL).
 */
struct action_who {
    const char *user;
    const char *conversation;
    /* Has the caller given up on the call (ctx->cancelled, ABI 3)? The
     * terminal client's interrupt; NULL: nobody cancels (the web routes),
     * and the plugin is told 0. */
    bool (*cancelled)(void *ctx);
    void *cancelled_ctx;
};

/*
 * Run `act` on `input` (borrowed) for `who` (NULL: nobody in particular). Returns 0 with `*output` a new
 * reference pinned to the arena (do not decref), or -1 with `err` set; on
 * ST_SCHEMA err->path and err->rule say where and which rule. Or
 * ACTION_ASKS_USER: the action (a plugin's tool, GEMINI_AGENT_ASK_USER)
 * needs the user's answer first; `*output` is the question (pinned,
 * normalised by registry/question.h) and `err` is untouched. A caller
 * that cannot ask anyone treats it as a failure of its own words.
 */
#define ACTION_ASKS_USER 1

int action_run(const struct config_actions *env,
               const struct plugin_action *act, const struct action_who *who,
               const struct json_t *input, struct arena *a,
               struct json_t **output, struct status_error *err);

#endif /* APP_ACTION_H */
