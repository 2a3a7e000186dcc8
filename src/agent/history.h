/*
 * history.h - the conversation the browser sends back, checked and bounded.
 *
 * The server keeps no session: every request carries the whole history in
 * Gemini's `contents` form. Before any of it reaches Gemini it must be a
 * history Gemini accepts (wire §3, §4):
 *   - roles "user" and "model" only; every turn has a non-empty `parts`;
 *   - every part is an object of a known kind: text, inlineData, fileData,
 *     functionCall, functionResponse, executableCode, codeExecutionResult
 *     (thought / thoughtSignature ride along on those);
 *   - functionCall only in model turns, functionResponse only in user
 *     turns, `functionResponse.response` an object;
 *   - each model turn with N calls is followed by a user turn with exactly
 *     N responses (same names, same order). With `pending` allowed, the
 *     LAST model turn may instead be followed by nothing, or by a user
 *     turn answering some of its calls, in call order: those the server
 *     answered when the turn ran (the state a mixed turn leaves for
 *     submitToolResults).
 * A violation is ST_INVALID_HISTORY with a message naming the turn
 * ("history[3]: ...").
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_HISTORY_H
#define APP_HISTORY_H

#include "core/common.h"

struct json_t;
struct status_error;

enum history_flags {
    HISTORY_ALLOW_PENDING = 1 << 0, /* the last calls may be unanswered */
};

/* The kinds of part a browser may send in its user turns besides text and
 * functionResponse (history.allowParts). Without them, what a visitor
 * sends under the site owner's key is text: no media or files (a fileUri
 * could name the owner's own Gemini files), no code, no thoughts. */
enum history_parts {
    HISTORY_PARTS_INLINE = 1 << 0,  /* inlineData, also in functionResponse */
    HISTORY_PARTS_FILE = 1 << 1,    /* fileData */
    HISTORY_PARTS_CODE = 1 << 2,    /* executableCode, codeExecutionResult */
    HISTORY_PARTS_THOUGHT = 1 << 3, /* parts flagged thought: true */
};

/* After history_check(): refuse a part of a user turn of a kind `allowed`
 * (history_parts) does not name. 0, or -1 with err set (invalid_history,
 * naming the turn and part). */
int history_check_user_parts(const struct json_t *history, unsigned allowed,
                             struct status_error *err);

/* Does the part object `part` hold a data field of a kind above? */
bool history_part_known(const struct json_t *part);

/*
 * Check part number `index` of a model turn Gemini answered as
 * history_check() will check it when it comes back: 0, or -1 with
 * ST_UPSTREAM_BAD ("gemini part N: ..."). turn_parse() keeps nothing
 * that a later request would refuse (turn.h).
 */
int history_check_model_part(const struct json_t *part, size_t index,
                             struct status_error *err);

/*
 * Brackets above a part in a chat request body: the body, `history`, the
 * turn and its `parts`. A part may nest BOUND_JSON_DEPTH minus these.
 */
#define HISTORY_PART_LEVELS 4

/* Check `history` (a JSON array). Returns 0, or -1 with err set. */
int history_check(const struct json_t *history, unsigned flags,
                  struct status_error *err);

/*
 * The index of the first turn to keep so that at most `max_turns` turns
 * remain, cut only where a user turn with text begins (never between a
 * call and its response). 0 when nothing needs to go; when no such cut
 * fits, the latest text user turn (so a single over-long tool chain is
 * kept whole rather than broken).
 */
size_t history_trim_start(const struct json_t *history, size_t max_turns);

#endif /* APP_HISTORY_H */
