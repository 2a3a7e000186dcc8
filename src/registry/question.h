/*
 * question.h - the questions a tool asks the user, and the user's answers
 * (plugin.h's GEMINI_AGENT_ASK_USER channel).
 *
 * A tool that needs the user's answer returns a question object
 *
 *     {"questions": [{"id", "text", "kind": "single" | "multiple" | "text",
 *                     "options"?: [string], "required"?: bool,
 *                     "default"?: string | [string]}, ...]}
 *
 * and the host asks: the widget shows a card, the run API pauses the run.
 * Both check the questions when the tool returns them and the answer
 * against them when it comes back, here, so a plugin, a page and a client
 * all meet one set of rules. The answer the model reads is
 * {"answers": {"<id>": value, ...}}: a string for single and text, an
 * array of strings for multiple; an optional question left unanswered is
 * left out.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_QUESTION_H
#define APP_QUESTION_H

#include "core/common.h"
#include "registry/bounds.h"

struct json_t;
struct status_error;

/*
 * Check the question object `q` (borrowed) and write it out normalised:
 * every question with its `required` (default true), `options` only for
 * single and multiple, `default` only when given. Returns a new
 * reference, or NULL with `err` set: ST_BAD_REQUEST saying what is wrong
 * (ids unique, options for the choices, defaults among them, at most
 * BOUND_QUESTIONS ...), or ST_NO_MEMORY.
 */
struct json_t *question_normalize(const struct json_t *q,
                                  struct status_error *err);

/*
 * Check the user's `answers` (an object: question id -> value) against
 * the normalised question object `q`. Returns a new reference,
 * {"answers": {...}} in the order of the questions, or NULL with `err`
 * set: ST_BAD_REQUEST ("answers: ..."), or ST_NO_MEMORY.
 */
struct json_t *question_answers(const struct json_t *q,
                                const struct json_t *answers,
                                struct status_error *err);

#endif /* APP_QUESTION_H */
