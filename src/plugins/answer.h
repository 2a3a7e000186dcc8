/*
 * answer.h - how a built-in plugin writes its answer (plugin.h's
 * gemini_agent_out): a JSON object, or a message with a return code.
 *
 * One place for the two rules every plugin must keep: the text goes into
 * host memory (ctx->alloc), and JSON is written with jsonout_dumps(), not
 * json_dumps() - the server gives jansson its own allocator
 * (core/memlimit.h), so what json_dumps() returns must not meet free().
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_ANSWER_H
#define APP_ANSWER_H

#include "core/common.h"

struct gemini_agent_ctx;
struct gemini_agent_out;
struct json_t;

/* `obj` (a reference stolen; NULL: out of memory) as the answer:
 * GEMINI_AGENT_OK, or GEMINI_AGENT_FAILED with a message. */
int answer_json(const struct gemini_agent_ctx *ctx,
                struct gemini_agent_out *out, struct json_t *obj);

/* The message (printf-style, cut at a character boundary to a status
 * text's length) as the answer; returns `rc`, or GEMINI_AGENT_FAILED
 * when even that cannot be written. */
int answer_fail(const struct gemini_agent_ctx *ctx,
                struct gemini_agent_out *out, int rc, const char *fmt, ...)
    ATTR_FMT(4, 5);

#endif /* APP_ANSWER_H */
