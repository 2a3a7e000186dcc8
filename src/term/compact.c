/*
 * compact.c - automatic compaction (compact.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/compact.h"
#include "core/bounds.h"
#include "term/bounds.h"
#include "core/config.h"

#include <jansson.h>
#include <string.h>

#define SUMMARY_INSTRUCTION                                                    \
    "Summarise the conversation so far so that it can be continued from "      \
    "the summary alone. Keep: the user's requests and intent; decisions "      \
    "made; files read, created or changed (with their paths) and what "        \
    "changed; commands run and what they showed; errors met and how they "     \
    "were solved; and the work still pending. Be precise and brief, and "      \
    "call no tools."

bool
term_compact_due(const struct config_compaction *c, long context_tokens)
{
    long window;

    if (c == NULL || !c->enabled || context_tokens <= 0)
        return false;
    window = c->window > 0 ? c->window : DEFAULT_CONTEXT_WINDOW;
    /* context * 100 >= window * percent, without overflow */
    return context_tokens / (double)window * 100.0 >= (double)c->at_percent;
}

/* Does content `c` start a user turn (a user's text, not a function's
 * response)? */
static bool
starts_turn(const json_t *c)
{
    const char *role = json_string_value(json_object_get(c, "role"));
    const json_t *parts = json_object_get(c, "parts"), *p;
    size_t i;

    if (role == NULL || strcmp(role, "user") != 0)
        return false;
    json_array_foreach(parts, i, p) {
        if (json_object_get(p, "functionResponse") != NULL)
            return false;
    }
    return json_array_size(parts) > 0;
}

size_t
term_compact_split(const json_t *contents, long keep)
{
    size_t n = json_array_size(contents), i = n;
    long seen = 0;

    if (keep <= 0) {
        /* everything goes; but only up to the last whole exchange: a
         * trailing user turn (the prompt being answered) is not cut */
        while (i > 0 && !starts_turn(json_array_get(contents, i - 1)))
            i--;
        return i > 0 ? n : 0;
    }
    while (i > 0) {
        i--;
        if (starts_turn(json_array_get(contents, i)) && ++seen == keep)
            return i;
    }
    return 0; /* fewer turns than `keep`: nothing to summarise */
}

json_t *
term_compact_request(const json_t *contents, size_t split, const char *system,
                     const json_t *tools)
{
    json_t *head = json_array(), *body;

    for (size_t i = 0; head != NULL && i < split; i++)
        if (json_array_append(head, json_array_get(contents, i)) != 0) {
            json_decref(head);
            return NULL;
        }
    if (head == NULL ||
        json_array_append_new(head, json_pack("{s:s, s:[{s:s}]}", "role",
                                              "user", "parts", "text",
                                              SUMMARY_INSTRUCTION)) != 0) {
        json_decref(head);
        return NULL;
    }
    body = json_pack("{s:o, s:{s:[{s:s}]}, s:{s:i}}", "contents", head,
                     "systemInstruction", "parts", "text",
                     system != NULL ? system : "", "generationConfig",
                     "maxOutputTokens", BOUND_COMPACT_SUMMARY_TOKENS);
    if (body != NULL && tools != NULL &&
        (json_object_set(body, "tools", UNCONST(tools)) != 0 ||
         json_object_set_new(body, "toolConfig",
                             json_pack("{s:{s:s}}", "functionCallingConfig",
                                       "mode", "NONE")) != 0)) {
        json_decref(body);
        return NULL;
    }
    return body;
}

json_t *
term_compact_apply(const json_t *contents, size_t split, const char *summary)
{
    json_t *out = json_pack("[{s:s, s:[{s:s+}]}, {s:s, s:[{s:s}]}]", "role",
                            "user", "parts", "text", TERM_COMPACT_PREFIX,
                            summary, "role", "model", "parts", "text",
                            TERM_COMPACT_ACK);

    for (size_t i = split; out != NULL && i < json_array_size(contents); i++)
        if (json_array_append(out, json_array_get(contents, i)) != 0) {
            json_decref(out);
            return NULL;
        }
    return out;
}
