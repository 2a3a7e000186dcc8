/*
 * prompt.h - the system instruction and the page state's turn.
 *
 * Order matters for cost: Gemini bills a repeated request prefix at a
 * discount (implicit caching), so a request reads from what changes least
 * to what changes most: the system instruction (the persona - config
 * systemPrompt, or ours - the working rules and the server actions; the
 * same for the whole site, built once by prompt_head() when the site
 * loads), the tools, the history, and last the page state, which changes
 * after every action (prompt_page_state()).
 *
 * Page-provided text never enters the instruction: the page tools' names
 * and descriptions travel only in their declarations, and the page state
 * is untrusted data in a user turn of its own, as compact JSON between
 * <page-state> markers with every '<' inside it written as \u003c, so no
 * page content can close the block early or pose as instructions.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PROMPT_H
#define APP_PROMPT_H

#include "core/common.h"

struct arena;
struct jscan_doc;
struct json_t;
struct plugin_set;
struct status_error;

/*
 * The start of every system instruction: `system_prompt` (the site's
 * persona; ours when NULL or empty), how to work, the exposed server
 * actions, and the system instructions of the shared-object plugins in
 * plugin-name order. A heap string (free it), or NULL when out of memory.
 */
char *prompt_head(const char *system_prompt, const struct plugin_set *actions);

/*
 * The page's current state as the last turn of a request (a new user
 * turn, pinned to the arena): one line saying what it is, then the compact
 * JSON between <page-state> markers, every '<' inside written as \u003c.
 * It goes last because it changes after every action: whatever follows it
 * could not be served from Gemini's prefix cache. A state whose JSON
 * exceeds `max_page_state` bytes is refused with ST_PAGE_STATE_TOO_LARGE,
 * never cut. Made by prompt_page_turn_text() (below), the request path's
 * way, from the value's text, and read back as a jansson value.
 */
struct json_t *prompt_page_state(const struct json_t *page_state,
                                 long max_page_state, struct arena *a,
                                 struct status_error *err);

/*
 * The page state's turn (as prompt_page_state() describes it) of node
 * `node` of a scanned body, as the JSON text of the turn object (`*text`,
 * `*len`, in the arena) for loop_input.last_turn_text. The state is
 * never built into a tree: its bytes in the body, already compact as a
 * rule, are escaped into the turn's text in one pass. Returns 0, or -1 with `err` set
 * (ST_PAGE_STATE_TOO_LARGE, ST_NO_MEMORY).
 */
int prompt_page_turn_text(const struct jscan_doc *d, size_t node,
                          long max_page_state, struct arena *a,
                          const char **text, size_t *len,
                          struct status_error *err);

#endif /* APP_PROMPT_H */
