/*
 * compact.h - automatic compaction of a terminal session's conversation
 * (docs/internals/terminal.md §5): when a prompt nears the model's context window, the
 * oldest turns are replaced by a summary Gemini writes of them, and the
 * last few user turns are kept whole (their calls, results and thought
 * signatures untouched).
 *
 * The cut is always made where a user turn begins - a "user" content
 * with text, never one carrying functionResponse parts - so no function
 * call loses its response. The summary then stands as one user content
 * and the model's short acknowledgement, so the conversation still
 * alternates. These functions are pure; the Gemini call is the
 * conversation's (term/conv.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_COMPACT_H
#define APP_TERM_COMPACT_H

#include "core/common.h"

struct json_t;
struct config_compaction;

/* What the compacted conversation starts with, before the summary. */
#define TERM_COMPACT_PREFIX                                                    \
    "This session continues an earlier conversation that was compacted to "    \
    "save context. Summary of the earlier part:\n\n"
#define TERM_COMPACT_ACK "Understood. I will continue from that summary."

/* Is compaction due after a call whose prompt and answer took
 * `context_tokens`, by `c` (its window, else DEFAULT_CONTEXT_WINDOW:
 * every Gemini model of 2025-26 takes 1,048,576 input tokens)? */
bool term_compact_due(const struct config_compaction *c, long context_tokens);

/*
 * Where the kept part of `contents` starts: the beginning of the
 * keep-th user turn from the end (keep 0: nothing is kept, the cut is
 * at the end). 0 when there is nothing before it to summarise.
 */
size_t term_compact_split(const struct json_t *contents, long keep);

/*
 * The generateContent body asking for a summary of contents[0..split),
 * with the session's `system` instruction and `tools` (may be NULL; the
 * history names them) and function calling off, so the answer is text.
 * A new reference, NULL when out of memory.
 */
struct json_t *term_compact_request(const struct json_t *contents, size_t split,
                                    const char *system,
                                    const struct json_t *tools);

/* A new conversation: the summary and its acknowledgement, then
 * contents[split..] (shared references). NULL when out of memory. */
struct json_t *term_compact_apply(const struct json_t *contents, size_t split,
                                  const char *summary);

#endif /* APP_TERM_COMPACT_H */
