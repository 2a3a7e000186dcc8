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
#include "agent/history.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "agent/bounds.h"
#include "core/status.h"
#include "core/utf8.h"

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
    {"STOP", TURN_DONE},
    {"MAX_TOKENS", TURN_TRUNCATED},
    {"SAFETY", TURN_BLOCKED},
    {"RECITATION", TURN_BLOCKED},
    {"PROHIBITED_CONTENT", TURN_BLOCKED},
    {"BLOCKLIST", TURN_BLOCKED},
    {"SPII", TURN_BLOCKED},
    {"LANGUAGE", TURN_BLOCKED},
    {"MALFORMED_FUNCTION_CALL", TURN_MALFORMED},
    {"UNEXPECTED_TOOL_CALL", TURN_MALFORMED},
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

/* --- what a later request can carry ------------------------------------- */

/* Integers past this lose digits in a browser's JavaScript (canon.h). */
#define EXACT_INT_MAX 9007199254740992LL /* 2^53 */

/* One walk over a value: its JSON size, and whether it nests deeper than
 * `max_depth` brackets (the walk stops descending there) or holds an
 * integer a browser cannot keep. */
struct measure {
    int max_depth;
    bool deep, wide_int;
    size_t bytes;
};

/* A string's bytes as JSON text, at most (every control byte as \u00XX). */
static size_t
string_bytes(const char *s, size_t n)
{
    size_t out = 2;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out += c < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : 1;
    }
    return out;
}

static void
measure(const json_t *v, int level, struct measure *m)
{
    const char *key;
    size_t len, i;
    json_t *child;

    if (json_is_object(v) || json_is_array(v)) {
        if (m->max_depth > 0 && level + 1 > m->max_depth) {
            m->deep = true;
            return;
        }
        m->bytes += 2;
    }
    if (json_is_object(v)) {
        json_object_keylen_foreach(UNCONST(v), key, len, child) {
            m->bytes += string_bytes(key, len) + 2; /* ':' and ',' */
            measure(child, level + 1, m);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child) {
            m->bytes += 1;
            measure(child, level + 1, m);
        }
    } else if (json_is_string(v)) {
        m->bytes += string_bytes(json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        m->wide_int |= n > EXACT_INT_MAX || n < -EXACT_INT_MAX;
        m->bytes += 20;
    } else {
        m->bytes += 24; /* a real at 17 digits, or a literal */
    }
}

/*
 * A copy of part `p` with only its thought flag, `key`: `v` (a new
 * reference, consumed) and `sig` as its thoughtSignature (NULL: none).
 * Pinned to `a`; NULL when out of memory.
 */
static json_t *
part_with(const json_t *p, const char *key, json_t *v, const char *sig,
          struct arena *a)
{
    json_t *out = arena_take_json(a, json_object());
    const json_t *thought = json_object_get(p, "thought");

    if (out == NULL) {
        json_decref(v);
        return NULL;
    }
    if (json_object_set_new(out, key, v) != 0 ||
        (sig != NULL &&
         json_object_set_new(out, "thoughtSignature", json_string(sig)) != 0) ||
        (json_is_boolean(thought) &&
         json_object_set(out, "thought", UNCONST(thought)) != 0))
        return NULL;
    return out;
}

/* A signature that a changed part may not keep: Gemini answers "Corrupted
 * thought signature" for a signed part whose name, args or text changed
 * (tests/mock/README.md). A call that had one gets gemini-cli's sentinel
 * instead (wire §4.6): Gemini 3 wants a signature on a step's first call. */
#define SIGNATURE_SENTINEL "skip_thought_signature_validator"

/* The call of `part`, kept with {} for its arguments (a name longer than
 * any function's is cut), and why it may not run. */
static int
refuse_call(const json_t *part, const struct measure *m, size_t room,
            const struct turn_bounds *b, struct arena *a, const json_t **use,
            const char **why, struct status_error *err)
{
    const json_t *fc = json_object_get(part, "functionCall");
    const char *name = json_string_value(json_object_get(fc, "name"));
    const json_t *id = json_object_get(fc, "id");
    size_t n = name ? strlen(name) : 0;

    if (n > 2 * BOUND_NAME_LEN + 1)
        n = utf8_cut(name, 2 * BOUND_NAME_LEN + 1);
    if (m->deep)
        *why = arena_printf(a,
                            "not run: the arguments nest deeper than %d "
                            "levels, more than a conversation can keep; "
                            "call it again with flatter arguments",
                            b->depth - 2);
    else if (m->wide_int)
        *why = "not run: the arguments hold an integer beyond 2^53, which "
               "a conversation cannot keep exactly; send it as a string";
    else
        *why = arena_printf(a,
                            "not run: the arguments take about %zu bytes, "
                            "more than the %zu this conversation has "
                            "room for; call it again with less",
                            m->bytes, room);
    *use = part_with(part, "functionCall",
                     json_pack("{s:s%, s:O*, s:{}}", "name", name ? name : "",
                               n, "id", json_is_string(id) ? id : NULL, "args"),
                     json_object_get(part, "thoughtSignature") != NULL
                         ? SIGNATURE_SENTINEL
                         : NULL,
                     a);
    return *use != NULL && *why != NULL
               ? 0
               : status_set(err, ST_NO_MEMORY, "out of memory");
}

/* Part `part`'s text cut to fit `room` bytes of JSON, with "…" at the
 * cut and without its signature (`*use` NULL when not even a character
 * fits). */
static int
cut_text(const json_t *part, size_t room, struct arena *a, const json_t **use,
         struct status_error *err)
{
    const json_t *text = json_object_get(part, "text");
    const char *s = json_string_value(text);
    size_t n = 0, len = json_string_length(text), cost;
    struct measure m = {0};
    json_t *bare = part_with(part, "text", json_string(""), NULL, a);
    char *buf;

    *use = NULL;
    if (bare == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    measure(bare, 0, &m);
    for (cost = m.bytes + 3; n < len; n++) {
        cost += string_bytes(s + n, 1) - 2;
        if (cost > room)
            break;
    }
    n = utf8_cut(s, n);
    if (n == 0)
        return 0;
    buf = arena_printf(a, "%.*s\xe2\x80\xa6", (int)n, s);
    if (buf == NULL || json_object_set_new(bare, "text", json_string(buf)))
        return status_set(err, ST_NO_MEMORY, "out of memory");
    *use = bare;
    return 0;
}

/* What fit_part() keeps of a part that does not fit: a call refused, a
 * text cut, or nothing. */
static int
shrink(const json_t *part, const struct measure *m, size_t room,
       const struct turn_bounds *b, struct arena *a, const json_t **use,
       const char **why, struct status_error *err)
{
    const json_t *text = json_object_get(part, "text");

    *use = NULL;
    if (json_object_get(part, "functionCall") != NULL)
        return refuse_call(part, m, room, b, a, use, why, err);
    if (json_is_string(text) && !m->deep && !m->wide_int)
        return cut_text(part, room, a, use, err);
    return 0;
}

/*
 * Part `part` as the turn keeps it, within what is left of the turn's
 * bytes (`*used` so far): itself, a copy that fits (a refused call, a cut
 * text, an unknown kind's signature on an empty text), or NULL (left
 * out). `*why` says why a call may not run.
 */
static int
fit_part(const json_t *part, const struct turn_bounds *b, size_t *used,
         struct arena *a, const json_t **use, const char **why,
         struct status_error *err)
{
    struct measure m = {.max_depth = b ? b->depth : 0};
    size_t room = b && b->bytes ? b->bytes - *used : SIZE_MAX;
    const json_t *sig = json_object_get(part, "thoughtSignature");

    *use = part;
    *why = NULL;
    if (!history_part_known(part)) {
        /* a kind newer than history_check: only its signature can go back */
        if (!json_is_string(sig)) {
            *use = NULL;
            return 0;
        }
        *use = part_with(part, "text", json_string(""), json_string_value(sig),
                         a);
        if (*use == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    if (b == NULL)
        return 0;
    measure(*use, 0, &m);
    if (m.deep || m.wide_int || m.bytes > room) {
        if (shrink(*use, &m, room, b, a, use, why, err) != 0)
            return -1;
        if (*use == NULL)
            return 0;
        m = (struct measure){.max_depth = b->depth};
        measure(*use, 0, &m);
        if (m.bytes > room)
            return status_set(err, ST_UPSTREAM_BAD,
                              "gemini answer: a part of about %zu bytes does "
                              "not fit in the %zu a conversation has room for",
                              m.bytes, room);
    }
    *used += m.bytes;
    return 0;
}

/* The parts array of the turn's new content object (t->content). */
static json_t *
new_content(struct arena *a, struct turn *t)
{
    /* Pinned first, so every later failure leaks nothing;
     * json_object_set_new() consumes `kept` even when it fails. */
    json_t *content = arena_take_json(a, json_object());
    json_t *kept;

    if (content == NULL ||
        json_object_set_new(content, "role", json_string("model")))
        return NULL;
    kept = json_array();
    if (json_object_set_new(content, "parts", kept) != 0)
        return NULL;
    t->content = content;
    return kept;
}

/*
 * Keep the non-empty parts of `parts` in a new content object, each as
 * fit_part() makes it fit `b`, and collect calls and text length. A
 * malformed turn is kept as it came, without its calls: nothing in it may
 * run, it is never recorded, and its broken calls are why it is malformed.
 */
static int
read_parts(const json_t *parts, const struct turn_bounds *b, struct arena *a,
           struct turn *t, struct status_error *err)
{
    size_t i, text_len = 0, used = 0, n = json_array_size(parts);
    json_t *part, *kept = NULL;
    bool malformed = t->end == TURN_MALFORMED;

    json_array_foreach(parts, i, part) {
        const json_t *fc, *text, *use = part;
        const char *why = NULL;

        if (part_is_empty(part))
            continue;
        if (!malformed && fit_part(part, b, &used, a, &use, &why, err) != 0)
            return -1;
        if (use == NULL)
            continue;
        if (kept == NULL && (kept = new_content(a, t)) == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        if (json_array_append(kept, UNCONST(use)) != 0)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        if (malformed)
            continue;
        fc = json_object_get(use, "functionCall");
        if (fc != NULL) {
            if (add_call(fc, json_array_size(kept) - 1, a, t, n, err) != 0)
                return -1;
            t->calls[t->ncalls - 1].refused = why;
        }
        if (history_check_model_part(use, i, err) != 0)
            return -1;
        text = visible_text(use);
        if (text != NULL)
            text_len += json_string_length(text);
    }
    return join_text(kept, text_len, a, t, err);
}

bool
turn_depth_fits(const json_t *v, int levels)
{
    struct measure m = {.max_depth = levels};

    measure(v, 0, &m);
    return !m.deep;
}

struct turn_bounds
turn_bounds_of_body(long max_body_bytes)
{
    struct turn_bounds b = {BOUND_JSON_DEPTH - HISTORY_PART_LEVELS, 0};

    if (max_body_bytes > 0)
        b.bytes = (size_t)max_body_bytes / BOUND_MODEL_TURN_SHARE;
    return b;
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
parse(const json_t *response, const struct turn_bounds *b, struct arena *a,
      struct turn *t, struct status_error *err)
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
    if (json_is_array(parts) && read_parts(parts, b, a, t, err) != 0)
        return -1;

    /* A candidate without finishReason (a stream chunk) that brought
     * nothing is not a finished turn. */
    if (t->reason[0] == '\0' && t->content == NULL)
        t->end = TURN_OTHER;
    return 0;
}

int
turn_parse(const json_t *response, const struct turn_bounds *b, struct arena *a,
           struct turn *t, struct status_error *err)
{
    memset(t, 0, sizeof(*t));
    t->text = "";
    t->reason = "";
    t->end = TURN_DONE;
    if (parse(response, b, a, t, err) != 0)
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
