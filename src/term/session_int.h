/*
 * session_int.h - what the files of one terminal session share (not for
 * other layers: they use session.h). The session is split by job:
 *
 *   session.c  open and close, one prompt (the loop and its sink), the
 *              stream-json output;
 *   calls.c    who answers a call: the tool_use blocks, the permission
 *              check and the question, the run, the tool_result;
 *   control.c  stdin in stream-json mode: control requests, can_use_tool,
 *              an interrupt seen while Gemini answers or a tool runs;
 *   saved.c    the saved session (--resume, --continue) and compaction.
 *
 * One thread. Names shared between the files start with ts_.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_SESSION_INT_H
#define APP_TERM_SESSION_INT_H

#include "core/common.h"
#include "term/session.h"
#include "agent/loop.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "term/bounds.h"
#include "core/config.h"
#include "gemini/gemini.h"
#include "registry/action.h"
#include "term/auth.h"
#include "term/input.h"
#include "term/perm.h"

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>

struct plugin_action;
struct plugin_set;
struct store;
struct tty;

struct term_tool {
    const char *name; /* as declared to Gemini, e.g. "Read" */
    const struct plugin_action *act;
    bool edit;
};

struct term_session {
    const struct term_args *args;
    FILE *in, *out;
    enum term_mode mode;
    char *model; /* heap */
    char *next_model; /* set_model during a prompt: for the next (heap) */
    char session_id[BOUND_TERM_SESSION_ID + 1];
    char cwd[PATH_MAX];
    const char *key_source; /* apiKeySource */
    struct term_auth auth;  /* the credential (term/auth.h) */
    struct config *cfg;     /* agent.yaml, when there is one; or NULL */
    json_t *plugins_conf;   /* plugins.config as the terminal uses it */
    char **expose;          /* plugins.expose as the terminal uses it */
    struct term_rules rules;
    struct config_gemini gemini;
    struct config_actions actions_env;
    struct config_plugins plugins_cfg;
    struct plugin_set *set;
    struct term_tool *tools;
    size_t ntools;
    json_t *tools_json; /* [{"functionDeclarations": [...]}], or NULL */
    char *system;       /* heap */
    struct gemini g;
    bool g_ok;
    struct store *keep; /* the saved sessions (keep.h); NULL: not saved */
    bool saved;         /* ... and this one was, at least once */
    struct config_compaction compaction;
    long context_tokens; /* the last call's prompt and answer */
    struct loop_usage used; /* over the session, every prompt's */
    double cost;            /* ... and what it cost */
    struct arena a;    /* one prompt's (reset after each) */
    struct arena life; /* the session's: its rules, its data folder */
    json_t *contents;
    bool initialized; /* the initialize control request was answered */
    struct term_input input; /* stdin's lines (stream-json input) */
    volatile sig_atomic_t *sigflag; /* term_session_watch(); or NULL */
    const char *line;        /* the last one read (input's) */
    struct action_who who;   /* tools learn of an interrupt through it */
    long req_seq;

    /* one prompt */
    struct loop_usage total, last;
    struct loop_usage extra; /* a compaction's call, not the loop's */
    int num_turns, tool_seq;
    int msg_seq; /* over the session: message ids stay unique */
    char msg_id[32];
    char tool_id[32]; /* the id of the call being answered */
    /* The model turn whose calls are being answered: contents[a_turn];
     * its calls' tool_use ids are toolu_<a_first + 1 + their order>, and
     * the first a_done of them were written. */
    bool a_valid;
    size_t a_turn, a_done, a_cur; /* a_cur: the order of the call answered */
    int a_first;
    size_t st_part; /* the call whose tool_result is stashed (its part) */
    bool stashed; /* ts_decide() left the tool_result's content here */
    const char *st_content;
    bool st_error;
    const json_t *st_structured;
    json_t *denials;
    const char *last_text;
    long api_ms, api_start;
    bool api_open; /* a Gemini call started and has not answered */
    bool interrupted;
    enum loop_end end; /* how the loop ended (when it did not fail) */
    bool block_open; /* --include-partial-messages: a text block */
    bool msg_open;   /* ... its message, not yet ended (ts_end_message) */
    bool out_failed;
    struct tty *tty; /* a person at a terminal reads us (borrowed), or NULL */
};

/* What ended the prompt, for the result. */
struct outcome {
    const char *subtype;
    bool is_error;
    const char *error; /* the `errors` entry, or NULL */
    const char *stop;  /* stop_reason, or NULL */
};

#define COMPACT_DESCRIPTION                                                  \
    "Summarise the conversation so far, to free its context"

/* a - b, or 0 when b is larger (durations, token counts) */
static inline long
ts_minus(long a, long b)
{
    return a > b ? a - b : 0;
}

/* --- session.c: writing ------------------------------------------------- */

/* Write `msg` (taken; NULL: out of memory) when the output is stream-json;
 * -1 when it could not be (s->out_failed is then set). */
int ts_emit(struct term_session *s, json_t *msg);
/* ts_emit(), with `err` set when it failed. */
int ts_emit_err(struct term_session *s, json_t *msg, struct status_error *err);
/* The JSON text of `v` in the arena (NULL when out of memory). */
const char *ts_json_text(struct arena *a, const json_t *v);
/* The usage of the last Gemini answer, Claude's shape (a new reference). */
json_t *ts_last_usage(const struct term_session *s);
/* End the streamed message (--include-partial-messages) with its
 * stop_reason (NULL when it failed); 0, or -1 when the output failed. */
int ts_end_message(struct term_session *s, const char *stop_reason);
/* init's mcp_servers: [{name, status}] (a new reference, NULL: out of
 * memory). */
json_t *ts_mcp_servers(const struct term_session *s);
/* The loop failed with `err`: tell of it; the text for `errors`. */
const char *ts_failure(struct term_session *s, const struct status_error *err);
/* The prompt's usage: the loop's calls and a compaction's. */
struct loop_usage ts_prompt_usage(const struct term_session *s);
/* Write the prompt's result (started at t0). 0, or -1. */
int ts_write_result(struct term_session *s, const struct outcome *o, long t0);

/* --- calls.c: who answers a call ---------------------------------------- */

const struct term_tool *ts_find_tool(const struct term_session *s,
                                     const char *name);
/* loop_input.decide: the permission check, maybe a question, the run */
int ts_decide(void *ctx, const struct loop_call *c, struct loop_result *r,
              struct status_error *err);
/* the loop's sink ops for calls (their tool_use and tool_result) */
int ts_on_tool_call(void *ctx, const struct loop_call *c, bool handed_back,
                    struct status_error *err);
int ts_on_tool_result(void *ctx, const struct loop_call *c,
                      const struct loop_result *r, struct status_error *err);

/* --- control.c: stdin in stream-json mode ------------------------------- */

/* Has the user interrupted the prompt (an interrupt control request, the
 * terminal's Ctrl-C)? Reads what stdin has meanwhile, without waiting. */
bool ts_interrupted(struct term_session *s);
/* ts_interrupted() as the Gemini client's `gone` and a tool's cancel */
bool ts_gone(void *ctx);
/* Ask the host over stdin (can_use_tool) whether `t` may run with
 * *input: TERM_ALLOW (*input maybe updated) or TERM_DENY with *why; -1
 * with `err`. */
int ts_ask_stdio(struct term_session *s, const struct term_tool *t,
                 const json_t **input, const char **why,
                 struct status_error *err);

/* --- saved.c: the saved session and compaction -------------------------- */

/* Open the saved sessions, carry on the one --resume / --continue names.
 * -1 with *why when the session cannot start. */
int ts_open_saved(struct term_session *s, const char **why);
/* Save the session (before the prompt's result); a failure is said on
 * stderr only. */
void ts_keep_save(struct term_session *s);
bool ts_is_compact_command(const char *text);
/* Summarise the oldest turns (all of them when `manual`): 1 compacted, 0
 * nothing to compact, -1 with `err`. */
int ts_compact(struct term_session *s, bool manual, struct status_error *err);
/* The /compact prompt, whole (started at t0): its exit as a prompt's. */
int ts_compact_command(struct term_session *s, long t0);

#endif /* APP_TERM_SESSION_INT_H */
