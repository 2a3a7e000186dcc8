/*
 * answer.c - a built-in plugin's answer: JSON or a message, in host
 * memory.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/answer.h"
#include "core/jsonout.h"
#include "core/status.h"
#include "core/utf8.h"
#include "gemini-agent/plugin.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int
answer_json(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
            json_t *obj)
{
    size_t len;
    char *text;
    int rc;

    if (obj == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    text = jsonout_dumps(obj, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len);
    json_decref(obj);
    if (text == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    rc = gemini_agent_reply(ctx, out, text, len);
    free(text);
    return rc;
}

int
answer_fail(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
            int rc, const char *fmt, ...)
{
    char msg[STATUS_TEXT_MAX];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof(msg))
        n = (int)utf8_cut(msg, sizeof(msg) - 1);
    return gemini_agent_reply(ctx, out, msg, (size_t)n) == GEMINI_AGENT_OK
               ? rc
               : GEMINI_AGENT_FAILED;
}
