/*
 * bounds.h - the limits only src/http/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_HTTP_BOUNDS_H
#define APP_HTTP_BOUNDS_H

/* --- the run API's request (docs/http-api.md): every cut is reported --- */

/* The prompt, in bytes (cut at a character). */
#define RUN_PROMPT_MAX 16384

/* `conversation`: the newest turns kept, and each text's bytes. */
#define RUN_CONVERSATION_MAX 40
#define RUN_TEXT_MAX         4000

/* `attachedContext`: entries kept, bytes of each string (id, title,
 * snippet), and the depth and compact size of an entry's `meta`. */
#define RUN_CONTEXT_MAX        12
#define RUN_CONTEXT_STRING_MAX 500
#define RUN_CONTEXT_META_DEPTH 4
#define RUN_CONTEXT_META_BYTES 2048

/* The approval card's words (the action's description and arguments). */
#define BOUND_PREVIEW_BYTES 1000

/* A threadId is a store id; anything longer is not one. */
#define RUN_THREAD_ID_MAX 64

/* --- budgets (http/budget.h, docs/configuration.md "Budget") ------ */

/* X-Forwarded-For entries read, from the right: each trusted proxy adds
 * one, so a longer chain is a client's padding. */
#define BOUND_FORWARDED_HOPS 16

/* --- identity (token.h, auth.h) ---------------------------------------- */

/* A Host header we compare an Origin with: a DNS name is at most 253. */
#define BOUND_HOST_LEN 255

#endif /* APP_HTTP_BOUNDS_H */
