/*
 * conv.h - the conversation of a terminal session with Gemini: the
 * client and its settings, the model, the history (Gemini's contents,
 * exactly as sent and received), the system instruction, and what the
 * calls used, over the session and in one prompt. Compaction
 * (compact.h) rewrites the history here.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_CONV_H
#define APP_TERM_CONV_H

#include "core/common.h"
#include "agent/loop.h"
#include "core/config.h"
#include "gemini/gemini.h"

struct arena;
struct json_t;
struct status_error;
struct store_chat;
struct term_args;
struct term_auth;

struct term_conv {
    char *model;      /* heap */
    char *next_model; /* set_model during a prompt: for the next (heap) */
    struct json_t *contents;
    char *system; /* heap */
    struct gemini g;
    bool g_ok;
    struct config_gemini gemini;
    struct config_compaction compaction;
    long context_tokens;    /* the last call's prompt and answer */
    struct loop_usage used; /* over the session, every prompt's */
    double cost;            /* ... and what it cost */

    /* one prompt */
    struct loop_usage total, last;
    struct loop_usage extra; /* a compaction's call, not the loop's */
    int num_turns;
    int msg_seq; /* over the session: message ids stay unique */
    char msg_id[32];
    const char *last_text; /* the answer's last text (the prompt arena) */
    long api_ms, api_start;
    bool api_open; /* a Gemini call started and has not answered */
};

/* a - b, or 0 when b is larger (durations, token counts) */
static inline long
term_minus(long a, long b)
{
    return a > b ? a - b : 0;
}

/* Carry on the saved conversation `c`: its history, its model (unless
 * `keep_model`), its usage. -1 with *why in `a` (NULL: out of memory). */
int term_conv_restore(struct term_conv *conv, const struct store_chat *c,
                      bool keep_model, struct arena *a, const char **why);

/* The model, the compaction and the client's settings for `args` and
 * agent.yaml's `cfg` (NULL: none), the credential's `auth`. 0 or -1 (out
 * of memory). */
int term_conv_configure(struct term_conv *conv, const struct term_args *args,
                        const struct config *cfg, const struct term_auth *auth);

/* Start the HTTP client; an interrupt (`gone`) drops the call in flight;
 * the credential is attached. -1 with *why (`err` holds the detail). */
int term_conv_connect(struct term_conv *conv, struct term_auth *auth,
                      bool (*gone)(void *), void *gone_ctx, const char **why,
                      struct status_error *err);

void term_conv_release(struct term_conv *conv);

/* set_model: now, or during a prompt for the next one. 0 or -1 (out of
 * memory). */
int term_conv_set_model(struct term_conv *conv, const char *model,
                        bool in_turn);

/* A new prompt: the model set meanwhile (the client's for the prompt),
 * the prompt's counts zeroed. */
void term_conv_reset_prompt(struct term_conv *conv);

/* The answer's last text so far (borrowed: the prompt's arena, or
 * static). */
void term_conv_said(struct term_conv *conv, const char *text);

/* A Gemini call starts. */
void term_conv_thinking(struct term_conv *conv);
/* Gemini answered, the loop's usage so far `total`: the last answer's
 * share, the context, the next message id. */
void term_conv_answered(struct term_conv *conv, const struct loop_usage *total);
/* The call in flight (that failed or was dropped) took time too. */
void term_conv_settle(struct term_conv *conv);

/* The usage of the last Gemini answer, Claude's shape (a new reference). */
struct json_t *term_conv_last_usage(const struct term_conv *conv);
/* The prompt's usage: the loop's calls and a compaction's. */
struct loop_usage term_conv_prompt_usage(const struct term_conv *conv);

/* The session's usage with this prompt's (*all, *cost), as saved: a new
 * reference, NULL when out of memory. */
struct json_t *term_conv_session_usage(const struct term_conv *conv,
                                       struct loop_usage *all, double *cost);
/* The session was saved with usage `all` and `cost`. */
void term_conv_kept(struct term_conv *conv, const struct loop_usage *all,
                    double cost);

/* Is compaction due by the settings and the context so far? */
bool term_conv_compact_due(const struct term_conv *conv);

/* Summarise the oldest turns (all of them when `manual`), declaring
 * `tools` (may be NULL) as the history names them; the answer in arena
 * `a`. 1 compacted (*pre: the context before), 0 nothing to compact, -1
 * with `err` (the history is then unchanged). */
int term_conv_compact(struct term_conv *conv, bool manual,
                      const struct json_t *tools, struct arena *a, long *pre,
                      struct status_error *err);

#endif /* APP_TERM_CONV_H */
