/*
 * turn.h - one Gemini answer (GenerateContentResponse), read.
 *
 * turn_parse() is pure: it reads the response JSON and says what the
 * model did: text, function calls, how it finished, tokens used. The
 * model's parts are kept exactly as received (thoughtSignature and fields
 * we do not know included), minus parts that carry nothing (`{}`), which
 * Gemini refuses when they are sent back (wire §3, §6.2).
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TURN_H
#define APP_TURN_H

#include "core/common.h"

struct arena;
struct json_t;
struct status_error;

enum turn_end {
    TURN_DONE,      /* STOP (also when the turn ends in calls) */
    TURN_TRUNCATED, /* MAX_TOKENS: the text so far is kept */
    TURN_BLOCKED,   /* promptFeedback.blockReason, or SAFETY, RECITATION,
                     * PROHIBITED_CONTENT, BLOCKLIST, SPII, LANGUAGE,
                     * IMAGE_* finish reasons */
    TURN_MALFORMED, /* MALFORMED_FUNCTION_CALL or UNEXPECTED_TOOL_CALL:
                     * nothing may run; the caller retries once */
    TURN_OTHER,     /* OTHER, TOO_MANY_TOOL_CALLS, unknown values */
};

struct turn_call {
    const char *name;      /* functionCall.name (borrowed) */
    struct json_t *args;   /* functionCall.args (borrowed); {} if absent */
    const char *id;        /* functionCall.id, NULL when Gemini sent none */
    size_t part;           /* index of the part in turn.parts */
};

struct turn {
    /* The model content to store in history: {"role":"model","parts":[...]}
     * with the parts as received (shared references). NULL when there is
     * nothing to store (no candidate, no content, only empty parts). */
    struct json_t *content;
    struct turn_call *calls; /* in part order; arena */
    size_t ncalls;
    const char *text;   /* visible text (thought parts excluded), joined;
                         * "" when none; arena */
    enum turn_end end;
    const char *reason; /* the raw finishReason / blockReason, or "" */
    /* usageMetadata; missing counts are 0 */
    long prompt_tokens, candidates_tokens, thoughts_tokens, cached_tokens,
        total_tokens;
    long tool_use_prompt_tokens; /* toolUsePromptTokenCount: results of
                                  * Gemini-side tools, billed as prompt */
};

/*
 * Read `response`. Returns 0 with `t` filled (references pinned to `a`),
 * or -1 with ST_UPSTREAM_BAD when it is not a GenerateContentResponse:
 * not an object, no `candidates` array and no `promptFeedback`, a
 * candidate that is not an object, a functionCall without a string name
 * or with non-object args.
 */
int turn_parse(const struct json_t *response, struct arena *a, struct turn *t,
               struct status_error *err);

#endif /* APP_TURN_H */
