/*
 * pending.c - the pending turn: the calls of a model turn, answered in
 * order, some now and some later (see pending.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/pending.h"
#include "agent/loop.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>

/* Does contents[i] have the role `role`? */
static bool
has_role(const json_t *contents, size_t i, const char *role)
{
    const char *r =
        json_string_value(json_object_get(json_array_get(contents, i), "role"));

    return r != NULL && strcmp(r, role) == 0;
}

static size_t
count_calls(const json_t *parts)
{
    size_t k, n = 0;
    json_t *part;

    json_array_foreach(parts, k, part) {
        n += json_object_get(part, "functionCall") != NULL;
    }
    return n;
}

void
pending_at(const json_t *contents, size_t model, struct pending_turn *p)
{
    memset(p, 0, sizeof(*p));
    p->model = model;
    p->parts = json_object_get(json_array_get(contents, model), "parts");
    p->after = model + 1 < json_array_size(contents);
    if (p->after)
        p->partial = json_object_get(json_array_get(contents, model + 1),
                                     "parts");
}

bool
pending_find(const json_t *contents, struct pending_turn *p)
{
    size_t n = json_array_size(contents), i, ncalls;

    memset(p, 0, sizeof(*p));
    if (n == 0)
        return false;
    i = n - 1;
    if (has_role(contents, i, "user")) {
        /* a partial answer only counts right after a model call turn */
        if (n < 2)
            return false;
        i = n - 2;
    }
    if (!has_role(contents, i, "model"))
        return false;
    pending_at(contents, i, p);
    ncalls = count_calls(p->parts);
    /* no calls, or a complete answer turn: nothing is pending */
    if (ncalls == 0 ||
        (p->partial != NULL && json_array_size(p->partial) == ncalls)) {
        memset(p, 0, sizeof(*p));
        return false;
    }
    return true;
}

/* Answer the call parts[k] into `parts`: from the partial turn at
 * *next when that answers it, else as `fn` says. */
static int
answer_one(const struct pending_turn *p, size_t k, const json_t *call,
           size_t *next, pending_answer_fn fn, void *ctx, json_t *parts,
           struct status_error *err)
{
    /* Answered when the turn ran, or in an earlier step? The partial
     * turn says so, in call order (its callers check that order); what
     * would answer the call now cannot tell (a page may since have lost
     * its tool). */
    json_t *given = json_array_get(p->partial, *next);
    struct pending_call pc = {
        call, json_string_value(json_object_get(call, "name")), p->model, k};
    json_t *resp = NULL;

    if (given != NULL && loop_answers_call(given, call)) {
        (*next)++;
        return json_array_append(parts, given) == 0
                   ? 0
                   : status_set(err, ST_NO_MEMORY, "out of memory");
    }
    if (fn(ctx, &pc, &resp, err) != 0)
        return -1;
    if (resp == NULL) /* it waits */
        return 0;
    if (json_array_append_new(parts, loop_answer_part(call, resp)) != 0) {
        json_decref(resp);
        return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    json_decref(resp);
    return 0;
}

int
pending_answer(const struct pending_turn *p, pending_answer_fn fn, void *ctx,
               json_t **turn, size_t *nparts, struct status_error *err)
{
    json_t *parts = json_array(), *part;
    size_t k, next = 0;

    *turn = NULL;
    *nparts = 0;
    if (parts == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    json_array_foreach(p->parts, k, part) {
        const json_t *call = json_object_get(part, "functionCall");

        if (call != NULL &&
            answer_one(p, k, call, &next, fn, ctx, parts, err) != 0) {
            json_decref(parts);
            return -1;
        }
    }
    *nparts = json_array_size(parts);
    /* "o" takes the reference, also when the pack fails */
    *turn = json_pack("{s:s, s:o}", "role", "user", "parts", parts);
    return *turn ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
}

int
pending_place(json_t *contents, const struct pending_turn *p, json_t *turn,
              struct status_error *err)
{
    int rc = p->after ? json_array_set_new(contents, p->model + 1, turn)
                      : json_array_append_new(contents, turn);

    return rc == 0 ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
}
