/*
 * chunks.c - one Gemini answer assembled from its stream (see chunks.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/chunks.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>

static int
oom(struct status_error *err)
{
    return status_set(err, ST_NO_MEMORY,
                      "out of memory reading Gemini's answer");
}

void
chunks_init(struct chunks *c, struct arena *a)
{
    memset(c, 0, sizeof(*c));
    c->a = a;
    sbuf_init(&c->text, BOUND_UPSTREAM_BYTES);
}

void
chunks_release(struct chunks *c)
{
    sbuf_release(&c->text);
    c->open = NULL;
}

/* Write the joined text into the open part; then no part is open. */
static int
close_open(struct chunks *c)
{
    json_t *part = c->open;

    if (part == NULL)
        return 0;
    c->open = NULL;
    return json_object_set_new(part, "text",
                               json_stringn(c->text.buf ? c->text.buf : "",
                                            c->text.len)) == 0
               ? 0
               : -1;
}

/* A member of `obj` made on first use: an object, or an array. */
static json_t *
member(json_t *obj, const char *key, bool array)
{
    json_t *v = json_object_get(obj, key);

    if (v != NULL)
        return v;
    v = array ? json_array() : json_object();
    return json_object_set_new(obj, key, v) == 0 ? v : NULL;
}

/* A text part that may be joined to its neighbours: unsigned text. */
static bool
joinable(const json_t *part)
{
    return json_is_string(json_object_get(part, "text")) &&
           json_object_get(part, "thoughtSignature") == NULL;
}

static bool
is_thought(const json_t *part)
{
    return json_is_true(json_object_get(part, "thought"));
}

/* Fold one part: joined to the open text part, or kept as it came. */
static int
add_part(struct chunks *c, json_t *part)
{
    const char *key;
    json_t *v;

    if (c->open != NULL && joinable(part) &&
        is_thought(part) == is_thought(c->open)) {
        json_t *t = json_object_get(part, "text");
        if (sbuf_add(&c->text, json_string_value(t), json_string_length(t)))
            return -1;
        /* a member only a later delta has (Google adds fields) */
        json_object_foreach(part, key, v) {
            if (strcmp(key, "text") != 0 &&
                json_object_get(c->open, key) == NULL &&
                json_object_set(c->open, key, v) != 0)
                return -1;
        }
        return 0;
    }
    if (close_open(c) != 0)
        return -1;
    if (!joinable(part))
        return json_array_append(c->parts, part);
    /* a copy: its text is rewritten when it closes */
    json_t *copy = json_copy(part);
    json_t *t = json_object_get(part, "text");
    if (copy == NULL || json_array_append_new(c->parts, copy) != 0)
        return -1;
    c->open = copy;
    sbuf_reset(&c->text);
    return sbuf_add(&c->text, json_string_value(t), json_string_length(t));
}

/* Report a part's visible text, as the stream brings it. */
static int
report(const json_t *part,
       int (*text)(void *ctx, const char *s, size_t len,
                   struct status_error *err),
       void *ctx, struct status_error *err)
{
    const json_t *t = json_object_get(part, "text");

    if (text == NULL || !json_is_string(t) || json_string_length(t) == 0 ||
        is_thought(part))
        return 0;
    return text(ctx, json_string_value(t), json_string_length(t), err);
}

/* Fold candidates[0] of a chunk into c->candidate. */
static int
add_candidate(struct chunks *c, json_t *cand,
              int (*text)(void *ctx, const char *s, size_t len,
                          struct status_error *err),
              void *ctx, struct status_error *err)
{
    const char *key, *ckey;
    json_t *v, *cv;

    if (c->candidate == NULL) {
        json_t *list = member(c->response, "candidates", true);
        c->candidate = json_object();
        if (list == NULL || json_array_append_new(list, c->candidate) != 0)
            return oom(err);
    }
    json_object_foreach(cand, key, v) {
        if (strcmp(key, "content") != 0 || !json_is_object(v)) {
            if (json_object_set(c->candidate, key, v) != 0)
                return oom(err);
            continue;
        }
        json_t *content = member(c->candidate, "content", false);
        if (content == NULL)
            return oom(err);
        json_object_foreach(v, ckey, cv) {
            if (strcmp(ckey, "parts") != 0 || !json_is_array(cv)) {
                if (json_object_set(content, ckey, cv) != 0)
                    return oom(err);
                continue;
            }
            if (c->parts == NULL &&
                (c->parts = member(content, "parts", true)) == NULL)
                return oom(err);
            size_t i;
            json_t *part;
            json_array_foreach(cv, i, part) {
                if (report(part, text, ctx, err) != 0)
                    return -1;
                if (!json_is_object(part)) {
                    /* not ours to judge here: turn.c reads it */
                    if (close_open(c) != 0 ||
                        json_array_append(c->parts, part) != 0)
                        return oom(err);
                    continue;
                }
                if (add_part(c, part) != 0)
                    return oom(err);
            }
        }
    }
    if (json_is_string(json_object_get(cand, "finishReason")))
        c->finished = true;
    return 0;
}

int
chunks_add(struct chunks *c, json_t *chunk,
           int (*text)(void *ctx, const char *s, size_t len,
                       struct status_error *err),
           void *ctx, struct status_error *err)
{
    const char *key;
    json_t *v;

    if (c->response == NULL &&
        (c->response = arena_take_json(c->a, json_object())) == NULL)
        return oom(err);
    json_object_foreach(chunk, key, v) {
        if (strcmp(key, "candidates") == 0 && json_is_array(v)) {
            json_t *cand = json_array_get(v, 0);
            if (json_is_object(cand) &&
                add_candidate(c, cand, text, ctx, err) != 0)
                return -1;
            continue;
        }
        /* usage is cumulative: the last chunk's is the answer's */
        if (json_object_set(c->response, key, v) != 0)
            return oom(err);
    }
    /* a refused prompt has no candidate to finish */
    if (json_object_get(json_object_get(chunk, "promptFeedback"),
                        "blockReason") != NULL)
        c->finished = true;
    return 0;
}

json_t *
chunks_end(struct chunks *c, struct status_error *err)
{
    if (c->response == NULL &&
        (c->response = arena_take_json(c->a, json_object())) == NULL) {
        oom(err);
        return NULL;
    }
    if (close_open(c) != 0) {
        oom(err);
        return NULL;
    }
    return c->response;
}
