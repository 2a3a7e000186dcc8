/*
 * chunks.c - one Gemini answer assembled from its stream (see chunks.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/chunks.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "gemini/bounds.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void
chunks_init(struct chunks *c, struct arena *a)
{
    memset(c, 0, sizeof(*c));
    c->a = a;
    sbuf_init(&c->text, BOUND_UPSTREAM_BYTES);
}

/* Drop the state of a call in parts (its part stays in `parts`). */
static void
call_forget(struct chunks *c)
{
    json_decref(c->call_args);
    json_decref(c->call_frags);
    json_decref(c->call_cont);
    c->call = c->call_args = c->call_frags = c->call_cont = NULL;
}

void
chunks_release(struct chunks *c)
{
    sbuf_release(&c->text);
    c->open = NULL;
    call_forget(c);
}

/* Write the joined text into the open part; then no part is open. */
static int
close_open(struct chunks *c)
{
    json_t *part = c->open;

    if (part == NULL)
        return 0;
    c->open = NULL;
    return json_object_set_new(
               part, "text",
               json_stringn(c->text.buf ? c->text.buf : "", c->text.len)) == 0
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

/* --- function calls in parts (wire §6.4) --------------------------------- */

/* One step of a jsonPath: a member's name, or an array index. */
struct path_step {
    bool is_index;
    size_t index;
    char key[CHUNKS_PATH_KEY + 1];
};

/*
 * Read an RFC 9535 path of names and indexes: $.a.b[0]['c d']["e"].
 * Filters, wildcards, slices and escapes are not what Vertex sends for an
 * argument, and are refused. The number of steps (at least one), or -1.
 */
static int
path_parse(const char *p, struct path_step *steps)
{
    int n = 0;

    if (p == NULL || *p++ != '$')
        return -1;
    while (*p != '\0') {
        struct path_step *st = &steps[n];
        size_t len = 0;
        const char *start;
        char quote;

        if (n == CHUNKS_PATH_DEPTH)
            return -1;
        memset(st, 0, sizeof(*st));
        if (*p == '.') {
            start = ++p;
            while (*p != '\0' && *p != '.' && *p != '[')
                p++;
            len = (size_t)(p - start);
        } else if (*p == '[' && (p[1] == '\'' || p[1] == '"')) {
            quote = p[1];
            start = p += 2;
            while (*p != '\0' && *p != quote && *p != '\\')
                p++;
            if (*p != quote || p[1] != ']')
                return -1;
            len = (size_t)(p - start);
            p += 2;
        } else if (*p == '[') {
            st->is_index = true;
            if (*++p < '0' || *p > '9')
                return -1;
            while (*p >= '0' && *p <= '9') {
                st->index = st->index * 10 + (size_t)(*p++ - '0');
                if (st->index > CHUNKS_PATH_INDEX)
                    return -1;
            }
            if (*p++ != ']')
                return -1;
            n++;
            continue;
        } else {
            return -1;
        }
        if (len == 0 || len > CHUNKS_PATH_KEY)
            return -1;
        memcpy(st->key, start, len);
        st->key[len] = '\0';
        n++;
    }
    return n > 0 ? n : -1;
}

/* The value at `st` in `parent` (borrowed), or NULL. */
static json_t *
step_get(json_t *parent, const struct path_step *st)
{
    if (st->is_index)
        return json_is_array(parent) ? json_array_get(parent, st->index) : NULL;
    return json_is_object(parent) ? json_object_get(parent, st->key) : NULL;
}

/* Put `v` (a new reference, taken) at `st` in `parent`; an array is
 * filled with nulls up to the index. 0, or -1. */
static int
step_set(json_t *parent, const struct path_step *st, json_t *v)
{
    if (v == NULL)
        return -1;
    if (!st->is_index) {
        if (!json_is_object(parent)) {
            json_decref(v);
            return -1;
        }
        return json_object_set_new(parent, st->key, v);
    }
    if (!json_is_array(parent)) {
        json_decref(v);
        return -1;
    }
    while (json_array_size(parent) < st->index)
        if (json_array_append_new(parent, json_null()) != 0) {
            json_decref(v);
            return -1;
        }
    if (st->index < json_array_size(parent))
        return json_array_set_new(parent, st->index, v);
    return json_array_append_new(parent, v);
}

/*
 * Fold one partialArgs entry into c->call_args: its value at its path,
 * made on the way; a stringValue after one that said willContinue for
 * the same path is appended to it. 0, 1 for a malformed entry, -1 when
 * out of memory.
 */
static int
call_fold(struct chunks *c, const json_t *frag)
{
    struct path_step steps[CHUNKS_PATH_DEPTH];
    const json_t *jpath = json_object_get(frag, "jsonPath");
    const char *path = json_string_value(jpath);
    const json_t *sv = json_object_get(frag, "stringValue");
    json_t *parent = c->call_args, *v;
    int n = path_parse(path, steps);

    if (n < 0)
        return 1;
    for (int i = 0; i + 1 < n; i++) {
        json_t *next = step_get(parent, &steps[i]);
        if (next == NULL) {
            next = steps[i + 1].is_index ? json_array() : json_object();
            if (step_set(parent, &steps[i], json_incref(next)) != 0) {
                json_decref(next);
                return 1;
            }
            json_decref(next);
        }
        parent = next;
    }
    if (json_is_string(sv)) {
        json_t *old = step_get(parent, &steps[n - 1]);
        bool joins = c->call_cont != NULL && json_is_string(old) &&
                     json_equal(c->call_cont, jpath);
        if (joins) {
            size_t a = json_string_length(old), b = json_string_length(sv);
            char *buf = memlimit_malloc(a + b + 1);
            if (buf == NULL)
                return -1;
            memcpy(buf, json_string_value(old), a);
            memcpy(buf + a, json_string_value(sv), b);
            v = json_stringn_nocheck(buf, a + b);
            free(buf);
        } else {
            v = json_incref(UNCONST(sv));
        }
    } else if ((v = json_object_get(frag, "numberValue")) != NULL &&
               json_is_number(v)) {
        json_incref(v);
    } else if ((v = json_object_get(frag, "boolValue")) != NULL &&
               json_is_boolean(v)) {
        json_incref(v);
    } else if (json_object_get(frag, "nullValue") != NULL) {
        v = json_null();
    } else {
        return 1; /* no value we know */
    }
    if (step_set(parent, &steps[n - 1], v) != 0)
        return 1;
    json_decref(c->call_cont);
    c->call_cont = json_is_string(sv) &&
                           json_is_true(json_object_get(frag, "willContinue"))
                       ? json_incref(UNCONST(jpath))
                       : NULL;
    return 0;
}

/* The call is complete: its args and fragments go into its part. */
static int
call_close(struct chunks *c)
{
    json_t *fc = json_object_get(c->call, "functionCall");
    int rc = 0;

    if (json_object_set(fc, "args", c->call_args) != 0 ||
        (json_array_size(c->call_frags) > 0 &&
         json_object_set(fc, "partialArgs", c->call_frags) != 0))
        rc = -1;
    call_forget(c);
    return rc;
}

static bool
call_in_parts(const struct chunks *c, const json_t *fc)
{
    return c->call != NULL ||
           json_is_true(json_object_get(fc, "willContinue")) ||
           json_object_get(fc, "partialArgs") != NULL;
}

/*
 * A functionCall part of a call that arrives in parts. The first part
 * makes the call's own part (its members but partialArgs and
 * willContinue) at this place; each part's fragments are folded in; a
 * part without willContinue completes it. A part naming a call while one
 * is open completes that one first. 0, 1 malformed, -1 out of memory.
 */
static int
call_part(struct chunks *c, json_t *part, json_t *fc)
{
    const json_t *list = json_object_get(fc, "partialArgs");
    const json_t *frag, *args = json_object_get(fc, "args");
    const char *key;
    json_t *v;
    size_t i;
    int rc;

    if (list != NULL && !json_is_array(list))
        return 1;
    if (args != NULL && !json_is_object(args))
        return 1;
    if (c->call != NULL && json_object_get(fc, "name") != NULL &&
        call_close(c) != 0)
        return -1;
    if (c->call == NULL) {
        json_t *copy = json_copy(part), *fcopy = json_copy(fc);
        c->call_args = json_object();
        c->call_frags = json_array();
        if (copy == NULL || fcopy == NULL || c->call_args == NULL ||
            c->call_frags == NULL) {
            json_decref(copy);
            json_decref(fcopy);
            return -1;
        }
        if (json_object_set_new(copy, "functionCall", fcopy) != 0) {
            json_decref(copy); /* fcopy went with the failed set */
            return -1;
        }
        json_object_del(fcopy, "partialArgs");
        json_object_del(fcopy, "willContinue");
        json_object_del(fcopy, "args");
        if (json_array_append_new(c->parts, copy) != 0)
            return -1;
        c->call = copy;
    } else {
        /* a member only a later part has (a signature, an id) */
        json_t *cfc = json_object_get(c->call, "functionCall");
        json_object_foreach(part, key, v) {
            if (strcmp(key, "functionCall") != 0 &&
                json_object_get(c->call, key) == NULL &&
                json_object_set(c->call, key, v) != 0)
                return -1;
        }
        json_object_foreach(fc, key, v) {
            if (strcmp(key, "partialArgs") != 0 &&
                strcmp(key, "willContinue") != 0 && strcmp(key, "args") != 0 &&
                json_object_get(cfc, key) == NULL &&
                json_object_set(cfc, key, v) != 0)
                return -1;
        }
    }
    if (args != NULL && json_object_update(c->call_args, UNCONST(args)) != 0)
        return -1;
    json_array_foreach(list, i, frag) {
        if (!json_is_object(frag))
            return 1;
        if ((rc = call_fold(c, frag)) != 0)
            return rc;
        if (json_array_append(c->call_frags, UNCONST(frag)) != 0)
            return -1;
    }
    if (!json_is_true(json_object_get(fc, "willContinue")))
        return call_close(c);
    return 0;
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
            return status_oom(err);
    }
    json_object_foreach(cand, key, v) {
        if (strcmp(key, "content") != 0 || !json_is_object(v)) {
            if (json_object_set(c->candidate, key, v) != 0)
                return status_oom(err);
            continue;
        }
        json_t *content = member(c->candidate, "content", false);
        if (content == NULL)
            return status_oom(err);
        json_object_foreach(v, ckey, cv) {
            if (strcmp(ckey, "parts") != 0 || !json_is_array(cv)) {
                if (json_object_set(content, ckey, cv) != 0)
                    return status_oom(err);
                continue;
            }
            if (c->parts == NULL &&
                (c->parts = member(content, "parts", true)) == NULL)
                return status_oom(err);
            size_t i;
            json_t *part;
            json_array_foreach(cv, i, part) {
                if (report(part, text, ctx, err) != 0)
                    return -1;
                if (!json_is_object(part)) {
                    /* not ours to judge here: turn.c reads it */
                    if (close_open(c) != 0 ||
                        json_array_append(c->parts, part) != 0)
                        return status_oom(err);
                    continue;
                }
                json_t *fc = json_object_get(part, "functionCall");
                if (json_is_object(fc) && call_in_parts(c, fc)) {
                    int rc = close_open(c) != 0 ? -1 : call_part(c, part, fc);
                    if (rc > 0)
                        return status_set(err, ST_UPSTREAM_BAD,
                                          "Gemini sent a function call's "
                                          "arguments in a form we cannot "
                                          "read");
                    if (rc < 0)
                        return status_oom(err);
                    continue;
                }
                if (add_part(c, part) != 0)
                    return status_oom(err);
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
        return status_oom(err);
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
            return status_oom(err);
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
        status_oom(err);
        return NULL;
    }
    if (close_open(c) != 0) {
        status_oom(err);
        return NULL;
    }
    if (c->call != NULL) {
        /* never a call with part of its arguments */
        call_forget(c);
        status_set(err, ST_UPSTREAM_BAD,
                   "Gemini's answer ended in the middle of a function "
                   "call's arguments");
        return NULL;
    }
    return c->response;
}
