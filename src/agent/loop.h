/*
 * loop.h - the agent loop: prompt -> Gemini -> turn -> server calls ->
 * again, until the model answers, hands calls back, or runs out of steps.
 *
 * The loop knows nothing of who asked. It takes a conversation (Gemini
 * `contents`), the `tools` declarations and a system instruction, and
 * reports what happens to an event sink: the chat protocol of the widget
 * is one sink (it builds one JSON answer at the end); a stream, the run
 * API and the terminal client are others. Which calls the loop runs
 * itself (server actions) and which it hands back (tools the caller's
 * client runs, e.g. page tools) is the caller's choice, made per name.
 *
 * Memory: everything the loop makes is pinned to the caller's arena; the
 * conversation is extended in place, by reference. The request's start
 * (instruction and declarations) is written once per run; each step
 * writes only the conversation after it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_LOOP_H
#define APP_LOOP_H

#include "core/common.h"

struct action_who;
struct arena;
struct config_actions;
struct config_gemini;
struct gemini;
struct json_t;
struct plugin_action;
struct plugin_set;
struct sbuf;
struct status_error;
struct turn;
struct turn_bounds;

/* A value's JSON text, as our writer writes it (see loop_input.texts). */
struct loop_text {
    const char *p;
    size_t n;
};

/* One functionCall of a model turn, where it sits in the conversation. */
struct loop_call {
    const char *name;
    const struct json_t *args; /* {} when Gemini sent none */
    const struct json_t *call; /* the functionCall object (borrowed) */
    size_t turn, part;         /* contents[turn].parts[part] */
};

/* What running a call the loop answers itself gave. */
struct loop_result {
    const char *action;            /* the registered action name; NULL: no such
                         * function (the model is told so) */
    const struct json_t *response; /* the functionResponse.response */
    bool ok;
    long ms;
    /* The action asks the user first (registry/action.h's
     * ACTION_ASKS_USER): `response` is the question, not an answer. The
     * loop answers nothing of that call and ends after the turn, as for a
     * call handed back (LOOP_HANDED_BACK); the sink heard of the question
     * in tool_result. */
    bool asks;
};

/* Who answers a call: decide() returns one of these, or -1 with `err`
 * set to end the loop. */
enum loop_who {
    LOOP_RUN_IT,    /* the loop runs the server action of that name (or
                      * tells the model there is none) */
    LOOP_HAND_BACK, /* the caller's client runs it: the loop ends after
                      * this turn's other calls (LOOP_HANDED_BACK) */
    LOOP_ANSWER_IT, /* the caller answered it already: decide() filled
                      * `r` (its response pinned to the loop's arena) */
};

/* Token counts summed over the request's Gemini answers, saturating at
 * LONG_MAX (an upstream value cannot overflow them). */
struct loop_usage {
    long prompt, candidates, thoughts, cached, total;
    long tool_use; /* toolUsePromptTokenCount (not in loop_usage_json) */
    int calls;     /* HTTP attempts that reached Gemini, retries included */
};

/*
 * What a caller lets the loop spend, asked before every Gemini call: a
 * budget (http/budget.h) extends its reservation for the step or refuses
 * it. `step` gets the bytes of the request about to be sent and the
 * usage of the calls so far; it returns 0 to send it, or -1 with `err`
 * set to end the loop there (no call is made).
 */
struct loop_gate {
    int (*step)(void *ctx, size_t request_bytes,
                const struct loop_usage *so_far, struct status_error *err);
    void *ctx;
    /* The loop keeps this equal to its usage after every Gemini answer,
     * also when it then fails: what the caller settles with. */
    struct loop_usage used;
};

enum loop_end {
    LOOP_ANSWERED,    /* the model answered (text, maybe empty) */
    LOOP_TRUNCATED,   /* ... and the output limit cut the answer off */
    LOOP_HANDED_BACK, /* it called tools the caller's client runs */
    LOOP_BLOCKED,     /* Gemini declined; the blocked turn is not kept */
    LOOP_MAX_STEPS,   /* out of steps before an answer */
};

/* What the loop is doing, for a status line. */
enum loop_status {
    LOOP_THINKING, /* waiting on Gemini */
    LOOP_TOOL,     /* running a server action */
    LOOP_WAITING,  /* handing calls to the caller's client */
};

/*
 * The event sink. Any op may be NULL (not interested). An op returns 0,
 * or -1 with `err` set to stop the loop (out of memory, client gone).
 * `error` is told of every failure, the sink's own included, just before
 * loop_run returns -1.
 */
struct loop_sink_ops {
    /* A model turn's visible text (non-empty), as it is recorded. */
    int (*text)(void *ctx, const char *text, struct status_error *err);
    /* A call of a recorded model turn; `handed_back`: the client runs it. */
    int (*tool_call)(void *ctx, const struct loop_call *c, bool handed_back,
                     struct status_error *err);
    /* A call the loop ran, with its result. */
    int (*tool_result)(void *ctx, const struct loop_call *c,
                       const struct loop_result *r, struct status_error *err);
    /* After each Gemini answer: the totals so far and which model
     * answered (modelVersion, or NULL when Gemini did not say). */
    int (*usage)(void *ctx, const struct loop_usage *total, const char *model,
                 struct status_error *err);
    /* The end. `last` is the final turn (NULL for LOOP_MAX_STEPS). */
    int (*done)(void *ctx, enum loop_end end, const struct turn *last,
                struct status_error *err);
    void (*error)(void *ctx, const struct status_error *err);
    /* What the loop starts doing: LOOP_THINKING before each Gemini call,
     * LOOP_TOOL before a server action runs (`tool` its registered name,
     * else the function's), LOOP_WAITING before it hands calls back. */
    int (*status)(void *ctx, enum loop_status st, const char *tool,
                  struct status_error *err);
    /* Visible text of the answer as Gemini streams it. A sink with this
     * op makes the loop stream (gemini_stream); the deltas of one Gemini
     * call add up to the text of its turn. */
    int (*delta)(void *ctx, const char *text, size_t len,
                 struct status_error *err);
    /* The answer broke off (`why`) and the step is asked again, retry
     * number `attempt` of `max` (loop_input.broke_retries): the deltas
     * since the last usage were of an answer that is discarded. */
    int (*retry)(void *ctx, int attempt, int max,
                 const struct status_error *why, struct status_error *err);
};

struct loop_sink {
    const struct loop_sink_ops *ops;
    void *ctx;
};

struct loop_input {
    struct gemini *g;
    const struct config_gemini *gemini;      /* model, key, timeout */
    const struct plugin_set *actions;        /* the server actions */
    const struct config_actions *action_env; /* their data dir, timeout */
    /* who runs them, where (registry/action.h), or NULL: none */
    const struct action_who *who;
    struct arena *a;
    struct json_t *contents; /* the conversation; the loop appends to it */
    struct json_t *tools;    /* the request's `tools`, or NULL */
    const char *system;      /* the system instruction */
    /* ... or, when not NULL, the systemInstruction value already written
     * as JSON text (a site writes its own once) */
    const char *system_json;
    /* The JSON text of contents[0..ntexts) as it came (turns copied from
     * a request body, already compact), written as it is in every request
     * instead of their trees; ntexts 0: none. */
    const struct loop_text *texts;
    size_t ntexts;
    /* Declarations already written as JSON text, or ndecls 0: each the
     * elements of a functionDeclarations array without the brackets ("" for
     * none), e.g. a site's server actions (written once) and a request's
     * page tools. They go first, in order, then those of `tools`, which
     * must then be [{"functionDeclarations": [...]}]. */
    const struct loop_text *decls;
    size_t ndecls;
    long max_steps; /* Gemini answers at most */
    long max_calls; /* calls of one model turn that are run or
                              * handed back; the rest are answered with an
                              * error (0: no limit) */
    /* generationConfig.maxOutputTokens of every call (0: not sent) */
    long max_output_tokens;
    /* The bytes of all the requests the loop sends (0: no bound): a step
     * that would pass it is not sent, and the loop ends with
     * ST_UPSTREAM_TOO_LARGE. The Gemini client's retries of a step count
     * too, once they are made. */
    long max_upstream_bytes;
    /* What a later request can carry of a model turn (turn.h), or NULL:
     * Gemini's parts are kept whatever they weigh. A call that does not
     * fit is answered with an error the model reads, never run. */
    const struct turn_bounds *bounds;
    /* Asked before every Gemini call (see struct loop_gate), or NULL. */
    struct loop_gate *gate;
    /* How often a step whose answer broke off mid-way (gemini.h's
     * `broke`: a stream cut short) is asked again, its partial answer
     * discarded (the sink's `retry` is told first); 0: the step fails.
     * The terminal client retries once (Claude Code's api_retry); the
     * web routes do not - a visitor who saw half an answer asks again. */
    long broke_retries;
    /* A turn of `contents` that must stay the last of every request (the
     * page state: it changes after every action, so whatever follows it
     * could not come from Gemini's prefix cache), or NULL. The loop moves
     * it behind the turns it records before each Gemini call. */
    struct json_t *last_turn;
    /* Or the last turn as JSON text (NULL: none), written after the
     * conversation in every request and never part of `contents`: a
     * large page state is escaped once, not at every step. */
    const char *last_turn_text;
    size_t last_turn_text_len;
    /* Who answers a call (see enum loop_who). Called for each call of a
     * model turn, in order, with `r` zeroed. */
    int (*decide)(void *ctx, const struct loop_call *c, struct loop_result *r,
                  struct status_error *err);
    void *decide_ctx;
};

/* Run the loop. Returns 0 after the sink's `done`, or -1 with `err` set
 * (after the sink's `error`). */
int loop_run(const struct loop_input *in, const struct loop_sink *sink,
             struct status_error *err);

/* The part that answers `call` (a functionCall object) with `response`:
 * {"functionResponse": {name, id?, response}}. A new reference, or NULL
 * when out of memory. */
struct json_t *loop_answer_part(const struct json_t *call,
                                const struct json_t *response);

/*
 * Run the server action `act` (NULL: there is none, and the model is told
 * so) for call `c`, as the loop runs the calls it answers itself: the
 * response is pinned to `a`. `who` as action_run's (NULL: none). Also for a call the loop handed back and the
 * caller now runs (an approved one). -1 only when out of memory.
 */
int loop_run_action(const struct config_actions *env,
                    const struct plugin_action *act,
                    const struct action_who *who, const struct loop_call *c,
                    struct arena *a, struct loop_result *r,
                    struct status_error *err) ATTR_WUR;

/* Is `part` the functionResponse to `call` (a functionCall object): the
 * same name, and the same id when the call had one? */
bool loop_answers_call(const struct json_t *part, const struct json_t *call);

/* Append the array `turns` as our writer writes it, copying texts[i]
 * for turns[i] with i < ntexts (see loop_input.texts). 0, or -1 when out
 * of memory. */
int loop_write_turns(const struct json_t *turns, const struct loop_text *texts,
                     size_t ntexts, struct sbuf *sb);

/* The usage as callers report it: {promptTokens, candidatesTokens,
 * thoughtsTokens, cachedTokens, totalTokens, geminiCalls}. A new
 * reference, or NULL when out of memory. */
struct json_t *loop_usage_json(const struct loop_usage *u);

/* Add `v` to `*acc`, saturating at LONG_MAX; negative `v` counts as 0. */
void loop_usage_add(long *acc, long v);

/* The tokens a budget counts of `u`: prompt + candidates + thoughts +
 * tool-use prompt, as Gemini reported them (saturating). */
long loop_usage_tokens(const struct loop_usage *u);

#endif /* APP_LOOP_H */
