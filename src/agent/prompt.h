/*
 * prompt.h - the system instruction.
 *
 * Order matters for cost: Gemini bills a repeated request prefix at a
 * discount (implicit caching), so everything that stays the same between
 * turns comes first - the persona (config systemPrompt, or ours), the
 * working instructions, the server actions, the page's interactions - and
 * the page state, which changes on every turn, comes last. The part that
 * depends only on the site (persona, instructions, server actions) is
 * built once, by prompt_head() when the site loads; each request adds its
 * page's part with prompt_system().
 *
 * The page state is untrusted data from the page. It is embedded as
 * compact JSON between <page-state> markers, with every '<' inside it
 * written as \u003c, so no page content can close the block early or
 * pose as instructions outside it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PROMPT_H
#define APP_PROMPT_H

#include "core/common.h"

struct arena;
struct json_t;
struct plugin_set;
struct status_error;

/*
 * The start of every system instruction: `system_prompt` (the site's
 * persona; ours when NULL or empty), how to work, and the exposed server
 * actions. A heap string (free it), or NULL when out of memory.
 */
char *prompt_head(const char *system_prompt, const struct plugin_set *actions);

/*
 * The system instruction text (arena string): `head`, then the page
 * tools and the page state, which may be NULL. A page state whose compact
 * JSON exceeds `max_page_state` bytes is refused with ST_TOO_LARGE, never
 * cut.
 */
char *prompt_system(const char *head, long max_page_state,
                    const struct json_t *tool_defs,
                    const struct json_t *page_state, struct arena *a,
                    struct status_error *err);

#endif /* APP_PROMPT_H */
