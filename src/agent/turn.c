/*
 * turn.c - read one GenerateContentResponse into a struct turn.
 *
 * One walk over candidates[0].content.parts: empty parts are dropped, every
 * other part is kept by reference (never copied, so thoughtSignature and
 * fields newer than this code survive), function calls are collected and
 * the visible text is joined. How the turn ended comes from a table of
 * finishReason values (wire §6.3) or from promptFeedback (§7).
 * Not here: streaming (each chunk is a response of its own to this code)
 * and deciding what to do about the end (the chat loop does).
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/turn.h"
#include "core/arena.h"
#include "core/status.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* --- finishReason --------------------------------------------------------- */

struct finish_map {
    const char *reason;
    enum turn_end end;
};

/*
 * Values from wire §6.3. Anything not listed is TURN_OTHER,
 * except the IMAGE_* family, matched by prefix because image models keep
 * adding members to it.
 */
static const struct finish_map finish_table[] = {
    { "STOP", TURN_DONE },
    { "MAX_TOKENS", TURN_TRUNCATED },
    { "SAFETY", TURN_BLOCKED },
    { "RECITATION", TURN_BLOCKED },
    { "PROHIBITED_CONTENT", TURN_BLOCKED },
    { "BLOCKLIST", TURN_BLOCKED },
    { "SPII", TURN_BLOCKED },
    { "LANGUAGE", TURN_BLOCKED },
    { "MALFORMED_FUNCTION_CALL", TURN_MALFORMED },
    { "UNEXPECTED_TOOL_CALL", TURN_MALFORMED },
};

static enum turn_end
finish_end(const char *reason)
{
    for (size_t i = 0; i < ARRAY_SIZE(finish_table); i++)
        if (strcmp(finish_table[i].reason, reason) == 0)
            return finish_table[i].end;
    if (strncmp(reason, "IMAGE_", 6) == 0)
        return TURN_BLOCKED;
    return TURN_OTHER;
}

/* --- helpers -------------------------------------------------------------- */

/*
 * A token count as a long. Counts are integers on the wire, but a proxy
 * may re-encode them as reals; anything else, negative or non-finite is
 * 0, and a count past LONG_MAX is clamped rather than overflowing.
 */
static long
count_value(const json_t *usage, const char *key)
{
    const json_t *v = json_object_get(usage, key);
    double d;

    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (n <= 0)
            return 0;
        return n > LONG_MAX ? LONG_MAX : (long)n;
    }
    if (!json_is_real(v))
        return 0;
    d = json_real_value(v);
    if (!isfinite(d) || d <= 0)
        return 0;
    return d >= (double)LONG_MAX ? LONG_MAX : (long)d;
}

static void
read_usage(const json_t *response, struct turn *t)
{
    const json_t *u = json_object_get(response, "usageMetadata");

    if (!json_is_object(u))
        return;
    t->prompt_tokens = count_value(u, "promptTokenCount");
    t->candidates_tokens = count_value(u, "candidatesTokenCount");
    t->thoughts_tokens = count_value(u, "thoughtsTokenCount");
    t->cached_tokens = count_value(u, "cachedContentTokenCount");
    t->total_tokens = count_value(u, "totalTokenCount");
    t->tool_use_prompt_tokens = count_value(u, "toolUsePromptTokenCount");
}

/*
 * Whether a part carries nothing Gemini would accept back: not an object,
 * `{}`, or `{"text": ""}` alone. A signature-only part has a second member
 * and is kept (wire §5.2).
 */
static bool
part_is_empty(const json_t *part)
{
    const json_t *text;

    if (!json_is_object(part) || json_object_size(part) == 0)
        return true;
    if (json_object_size(part) != 1)
        return false;
    text = json_object_get(part, "text");
    return json_is_string(text) && json_string_length(text) == 0;
}

/* Visible text of a kept part: its `text` unless it is a thought. */
static const json_t *
visible_text(const json_t *part)
{
    const json_t *text = json_object_get(part, "text");

    if (!json_is_string(text) || json_string_length(text) == 0 ||
        json_is_true(json_object_get(part, "thought")))
        return NULL;
    return text;
}

/*
 * Record the functionCall of kept part number `index`. The name and args
 * stay borrowed from the part, which t->content holds until the arena is
 * reset; only a missing args gets a new `{}`, pinned.
 */
static int
add_call(const json_t *fc, size_t index, struct arena *a, struct turn *t,
         size_t max_calls, struct status_error *err)
{
    const json_t *name, *id;
    json_t *args;
    struct turn_call *c;

    if (!json_is_object(fc))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini part %zu: functionCall is not an object",
                          index);
    name = json_object_get(fc, "name");
    if (!json_is_string(name) || json_string_length(name) == 0)
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini part %zu: functionCall has no name", index);
    args = json_object_get(fc, "args");
    if (args == NULL) {
        args = arena_take_json(a, json_object());
        if (args == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    } else if (!json_is_object(args)) {
        /* not naming the call: the name is Gemini's text, and visitors
         * read this message */
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini part %zu: a functionCall's args is not an "
                          "object",
                          index);
    }
    if (t->calls == NULL) {
        /* Sized for the worst case once: parts are few, calls fewer. */
        t->calls = arena_calloc(a, max_calls, sizeof(*t->calls));
        if (t->calls == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    id = json_object_get(fc, "id");
    c = &t->calls[t->ncalls++];
    c->name = json_string_value(name);
    c->args = args;
    c->id = json_is_string(id) ? json_string_value(id) : NULL;
    c->part = index;
    return 0;
}

/* t->text: the visible text of the kept parts, joined into the arena. */
static int
join_text(const json_t *parts, size_t len, struct arena *a, struct turn *t,
          struct status_error *err)
{
    size_t i, off = 0;
    const json_t *part;
    char *buf;

    if (len == 0) {
        t->text = "";
        return 0;
    }
    buf = arena_alloc(a, len + 1);
    if (buf == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    json_array_foreach(parts, i, part) {
        const json_t *text = visible_text(part);
        if (text != NULL) {
            size_t n = json_string_length(text);
            memcpy(buf + off, json_string_value(text), n);
            off += n;
        }
    }
    buf[off] = '\0';
    t->text = buf;
    return 0;
}

/*
 * Keep the non-empty parts of `parts` in a new content object and collect
 * calls and text length. Calls are not collected for a malformed turn:
 * nothing in it may run, and its broken calls are why it is malformed.
 */
static int
read_parts(const json_t *parts, struct arena *a, struct turn *t,
           struct status_error *err)
{
    size_t i, text_len = 0, n = json_array_size(parts);
    json_t *part, *kept = NULL;

    json_array_foreach(parts, i, part) {
        const json_t *fc, *text;

        if (part_is_empty(part))
            continue;
        if (kept == NULL) {
            /* Pinned first, so every later failure leaks nothing;
             * json_object_set_new() consumes `kept` even when it fails. */
            json_t *content = arena_take_json(a, json_object());
            if (content == NULL ||
                json_object_set_new(content, "role", json_string("model")))
                return status_set(err, ST_NO_MEMORY, "out of memory");
            kept = json_array();
            if (json_object_set_new(content, "parts", kept) != 0)
                return status_set(err, ST_NO_MEMORY, "out of memory");
            t->content = content;
        }
        if (json_array_append(kept, part) != 0)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        fc = json_object_get(part, "functionCall");
        if (fc != NULL && t->end != TURN_MALFORMED &&
            add_call(fc, json_array_size(kept) - 1, a, t, n, err) != 0)
            return -1;
        text = visible_text(part);
        if (text != NULL)
            text_len += json_string_length(text);
    }
    return join_text(kept, text_len, a, t, err);
}

/* --- the entry point ------------------------------------------------------ */

/* The end of a candidate and its raw reason. */
static int
read_finish(const json_t *cand, struct turn *t, struct status_error *err)
{
    const json_t *finish = json_object_get(cand, "finishReason");

    if (finish == NULL)
        return 0;
    if (!json_is_string(finish))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: finishReason is not a string");
    t->reason = json_string_value(finish);
    t->end = finish_end(t->reason);
    return 0;
}

static int
parse(const json_t *response, struct arena *a, struct turn *t,
      struct status_error *err)
{
    const json_t *cands, *feedback, *block, *cand, *content, *parts;

    if (!json_is_object(response))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response is not a JSON object");
    cands = json_object_get(response, "candidates");
    feedback = json_object_get(response, "promptFeedback");
    if (cands != NULL && !json_is_array(cands))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: candidates is not an array");
    if (feedback != NULL && !json_is_object(feedback))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: promptFeedback is not an object");
    if (cands == NULL && feedback == NULL)
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response has neither candidates nor "
                          "promptFeedback");
    read_usage(response, t);

    /* A blocked prompt produced nothing to keep or run (wire §7). */
    block = json_object_get(feedback, "blockReason");
    if (block != NULL) {
        if (!json_is_string(block))
            return status_set(err, ST_UPSTREAM_BAD,
                              "gemini response: blockReason is not a string");
        t->end = TURN_BLOCKED;
        t->reason = json_string_value(block);
        return 0;
    }

    cand = json_array_get(cands, 0);
    if (cand == NULL) {
        /* No candidate and no block reason: nothing happened, no cause. */
        t->end = TURN_OTHER;
        return 0;
    }
    if (!json_is_object(cand))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: candidate is not an object");
    if (read_finish(cand, t, err) != 0)
        return -1;

    /* content and parts may be missing or null (wire §6.2): nothing to
     * keep. */
    content = json_object_get(cand, "content");
    if (content != NULL && !json_is_null(content) && !json_is_object(content))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: content is not an object");
    parts = json_object_get(content, "parts");
    if (parts != NULL && !json_is_null(parts) && !json_is_array(parts))
        return status_set(err, ST_UPSTREAM_BAD,
                          "gemini response: content.parts is not an array");
    if (json_is_array(parts) && read_parts(parts, a, t, err) != 0)
        return -1;

    /* A candidate without finishReason (a stream chunk) that brought
     * nothing is not a finished turn. */
    if (t->reason[0] == '\0' && t->content == NULL)
        t->end = TURN_OTHER;
    return 0;
}

int
turn_parse(const json_t *response, struct arena *a, struct turn *t,
           struct status_error *err)
{
    memset(t, 0, sizeof(*t));
    t->text = "";
    t->reason = "";
    t->end = TURN_DONE;
    if (parse(response, a, t, err) != 0)
        goto fail;
    /* The reason points into `response`, which is only borrowed. */
    if (t->reason[0] != '\0') {
        t->reason = arena_strdup(a, t->reason);
        if (t->reason == NULL) {
            status_set(err, ST_NO_MEMORY, "out of memory");
            goto fail;
        }
    }
    return 0;

fail:
    /* Nothing half-read escapes: what was pinned dies with the arena. */
    memset(t, 0, sizeof(*t));
    t->text = "";
    t->reason = "";
    t->end = TURN_OTHER;
    return -1;
}
