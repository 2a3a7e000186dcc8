/*
 * turn.h - one Gemini answer (GenerateContentResponse), read.
 *
 * turn_parse() is pure: it reads the response JSON and says what the
 * model did: text, function calls, how it finished, tokens used. The
 * model's parts are kept exactly as received (thoughtSignature and fields
 * we do not know included), minus parts that carry nothing (`{}`), which
 * Gemini refuses when they are sent back (wire §3, §6.2).
 *
 * Nothing it keeps is refused when it comes back in a later request's
 * history: every kept part passes history_check()'s rules for a model
 * turn (a part that breaks them makes the answer ST_UPSTREAM_BAD; a part
 * of a kind it does not know is left out, its thoughtSignature kept on
 * an empty text), and, with bounds, no part nests or weighs more than a
 * request may carry. A call that does not fit keeps its name and id with
 * `args` {} and is marked refused: the loop answers it with an error, so
 * the model can try again smaller; a text that does not fit is cut;
 * any other part that does not fit is left out.
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TURN_H
#define APP_TURN_H

#include "core/common.h"
#include "agent/bounds.h"

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
    const char *name; /* functionCall.name (borrowed) */
    /* Why the call may not run (its arguments did not fit the bounds and
     * were replaced by {}), for the model to read; NULL: it may. */
    const char *refused;
    struct json_t *args; /* functionCall.args (borrowed); {} if absent */
    const char *id;      /* functionCall.id, NULL when Gemini sent none */
    size_t part;         /* index of the part in turn.parts */
};

struct turn {
    /* The model content to store in history: {"role":"model","parts":[...]}
     * with the parts as received (shared references). NULL when there is
     * nothing to store (no candidate, no content, only empty parts). */
    struct json_t *content;
    struct turn_call *calls; /* in part order; arena */
    size_t ncalls;
    const char *text; /* visible text (thought parts excluded), joined;
                         * "" when none; arena */
    enum turn_end end;
    const char *reason; /* the raw finishReason / blockReason, or "" */
    /* usageMetadata; missing counts are 0 */
    long prompt_tokens, candidates_tokens, thoughts_tokens, cached_tokens,
        total_tokens;
    long tool_use_prompt_tokens; /* toolUsePromptTokenCount: results of
                                  * Gemini-side tools, billed as prompt */
};

/* What a later request carries of a model turn (the chat's history). */
struct turn_bounds {
    /* Brackets of one part, itself included (0: any): BOUND_JSON_DEPTH
     * less HISTORY_PART_LEVELS for the chat's request bodies. */
    int depth;
    /* Bytes of the turn's parts as JSON text, at most (0: any). */
    size_t bytes;
};

/* Does `v` nest at most `levels` brackets, itself included? */
bool turn_depth_fits(const struct json_t *v, int levels);

/* The bounds of the chat's histories, whose requests carry at most
 * `max_body_bytes`: a part nests at most BOUND_JSON_DEPTH less
 * HISTORY_PART_LEVELS, a turn takes at most 1/BOUND_MODEL_TURN_SHARE of
 * the body. */
struct turn_bounds turn_bounds_of_body(long max_body_bytes);

/*
 * Read `response`. Returns 0 with `t` filled (references pinned to `a`),
 * or -1 with ST_UPSTREAM_BAD when it is not a GenerateContentResponse:
 * not an object, no `candidates` array and no `promptFeedback`, a
 * candidate that is not an object, a functionCall without a string name
 * or with non-object args, a part history_check() would refuse, or one
 * that cannot fit `b` even without its call's arguments. With `b` (NULL:
 * no bounds) the parts are bounded as said above; integers beyond 2^53
 * do not fit either (they do not survive the browser, canon.h).
 */
int turn_parse(const struct json_t *response, const struct turn_bounds *b,
               struct arena *a, struct turn *t, struct status_error *err);

#endif /* APP_TURN_H */
