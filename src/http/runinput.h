/*
 * runinput.h - the run API's request, normalised (docs/http-api.md).
 *
 *   {prompt, threadId?, conversation?: [{role: user|assistant, text}],
 *    attachedContext?: [{type, id, title?, snippet?, meta?}]}
 *
 * Unknown fields are dropped, control characters stripped (newlines and
 * tabs stay in texts), `conversation` keeps its newest RUN_CONVERSATION_MAX
 * turns with each text cut to RUN_TEXT_MAX bytes, `attachedContext` keeps
 * RUN_CONTEXT_MAX entries of the configured types with their strings cut
 * and a `meta` too deep or too large dropped. Nothing is cut silently:
 * each kind of cut is counted in `normalized`, which the answer carries.
 * Only what cannot be a run is refused (400): no prompt, or values of the
 * wrong type.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_RUNINPUT_H
#define APP_RUNINPUT_H

#include "core/common.h"
#include "http/bounds.h"

struct arena;
struct json_t;
struct status_error;

struct run_input {
    const char *prompt;
    const char *thread;          /* NULL: a new thread */
    struct json_t *conversation; /* [{role, text}], in order */
    struct json_t *context;      /* [{type, id, title?, snippet?, meta?}] */
    /* what was cut or dropped, e.g. {"droppedFields": ["x"],
     * "conversation": {"dropped": 3, "cut": 1}, "controlCharacters": 2};
     * NULL when nothing was */
    struct json_t *normalized;
};

/* Normalise `body` (an object). `types` is the NULL-terminated list of
 * attachedContext types the site accepts. Everything is pinned to `a`.
 * 0, or -1 with `err` set (ST_BAD_REQUEST, ST_NO_MEMORY). */
int runinput_read(const struct json_t *body, const char *const *types,
                  struct arena *a, struct run_input *in,
                  struct status_error *err);

#endif /* APP_RUNINPUT_H */
