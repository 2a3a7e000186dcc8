/*
 * streamjson.c - Claude Code stream-json messages (streamjson.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/streamjson.h"
#include "agent/loop.h"

#include <fcntl.h>
#include <jansson.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

int
term_uuid(char out[37])
{
    unsigned char b[16];

    if (RAND_bytes(b, sizeof(b)) != 1)
        return -1;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
             b[11], b[12], b[13], b[14], b[15]);
    return 0;
}

int
term_sj_emit_raw(FILE *out, json_t *msg)
{
    int rc = -1;

    if (msg != NULL && json_dumpf(msg, out, JSON_COMPACT) == 0 &&
        fputc('\n', out) != EOF && fflush(out) == 0)
        rc = 0;
    json_decref(msg);
    return rc;
}

int
term_sj_emit(FILE *out, const char *session_id, json_t *msg)
{
    char uuid[37];

    if (msg == NULL)
        return -1;
    if (json_object_get(msg, "session_id") == NULL &&
        json_object_set_new(msg, "session_id", json_string(session_id)) != 0)
        goto fail;
    if (json_object_get(msg, "uuid") == NULL &&
        (term_uuid(uuid) != 0 ||
         json_object_set_new(msg, "uuid", json_string(uuid)) != 0))
        goto fail;
    return term_sj_emit_raw(out, msg);
fail:
    json_decref(msg);
    return -1;
}

json_t *
term_sj_usage(const struct loop_usage *u)
{
    long input = u->prompt - u->cached;
    long output = 0;

    /* Gemini's counts may be near LONG_MAX: the sum saturates */
    loop_usage_add(&output, u->candidates);
    loop_usage_add(&output, u->thoughts);
    return json_pack("{s:I, s:I, s:I, s:I}", "input_tokens",
                     (json_int_t)(input > 0 ? input : 0), "output_tokens",
                     (json_int_t)output, "cache_creation_input_tokens",
                     (json_int_t)0, "cache_read_input_tokens",
                     (json_int_t)u->cached);
}

/*
 * US dollars per million tokens, Gemini API paid tier, prompts up to 200k
 * tokens (ai.google.dev/gemini-api/docs/pricing, as of 2025-10; thinking
 * tokens are billed as output). A model not listed costs 0 here: the
 * number is an estimate for the result message, never a bill. Matched by
 * prefix, longest first, so "gemini-2.5-flash-lite" is not priced as
 * "gemini-2.5-flash".
 */
static const struct price {
    const char *model;
    double input, output, cached;
} prices[] = {
    {"gemini-2.5-flash-lite", 0.10, 0.40, 0.025},
    {"gemini-2.5-flash", 0.30, 2.50, 0.075},
    {"gemini-2.5-pro", 1.25, 10.00, 0.31},
    {"gemini-2.0-flash-lite", 0.075, 0.30, 0.01875},
    {"gemini-2.0-flash", 0.10, 0.40, 0.025},
};

double
term_sj_cost(const char *model, const struct loop_usage *u)
{
    if (model == NULL)
        return 0;
    for (size_t i = 0; i < ARRAY_SIZE(prices); i++) {
        const struct price *p = &prices[i];
        if (strncmp(model, p->model, strlen(p->model)) == 0) {
            double in = (double)(u->prompt - u->cached);
            double out = (double)u->candidates + (double)u->thoughts;
            return (in * p->input + out * p->output +
                    (double)u->cached * p->cached) /
                   1e6;
        }
    }
    return 0;
}

json_t *
term_sj_assistant(const char *msg_id, const char *model, json_t *block,
                  json_t *usage)
{
    return json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[o], s:n, s:n, s:o}, "
                     "s:n}",
                     "type", "assistant", "message", "id", msg_id, "type",
                     "message", "role", "assistant", "model", model, "content",
                     block, "stop_reason", "stop_sequence", "usage", usage,
                     "parent_tool_use_id");
}

json_t *
term_sj_tool_result(const char *tool_use_id, const char *content, bool is_error,
                    const json_t *structured)
{
    json_t *m = json_pack("{s:s, s:{s:s, s:[{s:s, s:s, s:s, s:b}]}, s:n}",
                          "type", "user", "message", "role", "user", "content",
                          "type", "tool_result", "tool_use_id", tool_use_id,
                          "content", content, "is_error", is_error,
                          "parent_tool_use_id");

    if (m != NULL && structured != NULL &&
        json_object_set(m, "tool_use_result", UNCONST(structured)) != 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}
