/*
 * prompt.h - the system instruction, rebuilt for every request.
 *
 * Order matters for cost: Gemini bills a repeated request prefix at a
 * discount (implicit caching), so everything that stays the same between
 * turns comes first - the persona (config systemPrompt, or ours), the
 * working instructions, the server actions, the page's interactions - and
 * the page state, which changes on every turn, comes last.
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

#include "common.h"

struct arena;
struct config;
struct json_t;
struct status_error;

/*
 * The system instruction text (arena string). `tool_defs` (page tools) and
 * `page_state` may be NULL. A page state whose compact JSON exceeds
 * maxPageStateBytes is refused with ST_TOO_LARGE, never cut.
 */
char *prompt_system(const struct config *cfg, const struct json_t *tool_defs,
                    const struct json_t *page_state, struct arena *a,
                    struct status_error *err);

#endif /* APP_PROMPT_H */
