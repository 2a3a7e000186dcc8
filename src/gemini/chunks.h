/*
 * chunks.h - one Gemini answer assembled from the chunks of its stream
 * (wire §12).
 *
 * Each chunk of `streamGenerateContent` is a GenerateContentResponse
 * holding only what is new: some parts, and on the last one the
 * finishReason. chunks_add() folds them into one response of the shape
 * `generateContent` answers, so everything after the call (turn.c) reads
 * a streamed answer exactly as a whole one:
 *
 *   - neighbouring text parts are joined when neither carries a
 *     thoughtSignature and both are thoughts or both are not; a signed
 *     part is never joined to another, so a signature stays on the part
 *     (and the text) it came with, whether it came on the first delta,
 *     the last one or a part of its own. Fields we do not know that a
 *     later delta brings are kept on the joined part;
 *   - a functionCall whose arguments arrive in parts (Vertex AI's
 *     `partialArgs` with `willContinue`, wire §6.4) is held until the
 *     part that completes it (a functionCall without willContinue), then
 *     given whole, at the place it began, as one part: the first
 *     fragment's members (name, id, thoughtSignature), `args` built from
 *     every fragment's jsonPath and value (string fragments of one path
 *     joined), and `partialArgs`, every fragment as received, in order,
 *     so the history carries what Vertex sent as well as the args the
 *     loop runs. An answer that ends with a call still open is an error
 *     (upstream_bad), never a call with half its arguments;
 *   - every other part (a functionCall arrives whole) is kept as it came;
 *   - the candidate's other members (finishReason, finishMessage, ...)
 *     and the response's (usageMetadata, modelVersion, promptFeedback,
 *     ...) are the last chunk's: usage is cumulative, never summed.
 *
 * Memory: the response and the chunks it keeps parts of are pinned to
 * the caller's arena.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHUNKS_H
#define APP_CHUNKS_H

#include "core/common.h"
#include "core/sbuf.h"

struct arena;
struct json_t;
struct status_error;

struct chunks {
    struct arena *a;
    struct json_t *response;  /* what generateContent would have answered */
    struct json_t *candidate; /* its candidates[0], or NULL so far */
    struct json_t *parts;     /* its content.parts */
    /* the text part being joined: parts[open], its text in `text` (written
     * into the part by chunks_end) */
    struct json_t *open;
    struct sbuf text;
    /* a functionCall still arriving in parts: its part (already in
     * `parts`), its args so far, its fragments as received, and the path
     * whose string the next fragment continues (or NULL) */
    struct json_t *call;
    struct json_t *call_args;
    struct json_t *call_frags;
    struct json_t *call_cont;
    bool finished; /* a chunk said the answer is complete */
    size_t texts;  /* visible text deltas reported */
};

void chunks_init(struct chunks *c, struct arena *a);

/*
 * Fold one chunk in. Each visible (non-thought, non-empty) text delta is
 * first reported to `text` (when not NULL), which returns 0, or -1 to stop
 * with `err` set. Returns 0, or -1 with `err` set (out of memory, or what
 * `text` said).
 */
int chunks_add(struct chunks *c, struct json_t *chunk,
               int (*text)(void *ctx, const char *s, size_t len,
                           struct status_error *err),
               void *ctx, struct status_error *err);

/* The assembled response, pinned to the arena (NULL when out of memory,
 * with `err` set). Call once, after the last chunk. */
struct json_t *chunks_end(struct chunks *c, struct status_error *err);

/* Free what chunks_end() did not take (safe to call twice). */
void chunks_release(struct chunks *c);

#endif /* APP_CHUNKS_H */
