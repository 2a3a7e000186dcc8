/*
 * chatsink.h - the chat's sink of the agent loop (agent/loop.h): what
 * the loop reports, gathered for the answer (chatout.h), and with a
 * streamed answer each event on its way as it happens; at the end, the
 * answer its ending calls for.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHATSINK_H
#define APP_CHATSINK_H

#include "core/common.h"
#include "agent/loop.h"

struct chat_env;
struct chatconv;
struct chatout;
struct chatwait;
struct status_error;
struct turn;

struct chatsink {
    const struct chat_env *env;
    struct chatconv *conv;
    struct chatwait *wait;
    struct chatout *out;
    /* while streaming: the request's own hang-up check, which the
     * stream's wraps */
    bool (*gone)(void *ctx);
    void *gone_ctx;
};

/* Run the loop `li` (its g, decide and the rest set) with the sink the
 * answer's mode needs; the answer is begun when it ends. */
int chatsink_run(struct chatsink *s, const struct loop_input *li,
                 struct status_error *err);

/* The loop's end `end` with the final turn `last` (NULL: none): the
 * answer it calls for, in s->out->answer. Also for a request that ends
 * before the loop (LOOP_HANDED_BACK: calls still wait). */
int chatsink_done(void *ctx, enum loop_end end, const struct turn *last,
                  struct status_error *err);

#endif /* APP_CHATSINK_H */
