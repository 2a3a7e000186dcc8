/*
 * history.c - check the browser's history against Gemini's rules, and
 * find where to cut it.
 *
 * history_check() walks the turns once, part by part, and keeps only the
 * model turn whose calls await answers; the user turn after it is matched
 * against that turn's parts in place, so nothing is copied or counted
 * twice. The rules are wire §3 and §4, plus the pending
 * state a mixed page-tool/server-action turn leaves behind. Not here:
 * bounds on size (the caller trims with history_trim_start()) and thought
 * signatures (opaque; Gemini checks them).
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/history.h"
#include "agent/bounds.h"
#include "core/status.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* --- parts ---------------------------------------------------------------- */

enum part_kind {
    PART_NONE,
    PART_TEXT,
    PART_INLINE_DATA,
    PART_FILE_DATA,
    PART_FUNCTION_CALL,
    PART_FUNCTION_RESPONSE,
    PART_EXECUTABLE_CODE,
    PART_CODE_EXECUTION_RESULT,
};

/* The data fields of a Part: exactly one per part (wire §3). */
static const struct {
    const char *key;
    size_t len;
    enum part_kind kind;
} data_fields[] = {
#define FIELD(k, kind)                                                         \
    {                                                                          \
        k, sizeof(k) - 1, kind                                                 \
    }
    FIELD("text", PART_TEXT),
    FIELD("functionCall", PART_FUNCTION_CALL),
    FIELD("functionResponse", PART_FUNCTION_RESPONSE),
    FIELD("inlineData", PART_INLINE_DATA),
    FIELD("fileData", PART_FILE_DATA),
    FIELD("executableCode", PART_EXECUTABLE_CODE),
    FIELD("codeExecutionResult", PART_CODE_EXECUTION_RESULT),
#undef FIELD
};

static bool
key_is(const char *key, size_t len, const char *lit, size_t lit_len)
{
    return len == lit_len && memcmp(key, lit, len) == 0;
}

#define KEY_IS(key, len, lit) key_is(key, len, lit, sizeof(lit) - 1)

static enum part_kind
data_kind(const char *key, size_t len)
{
    for (size_t i = 0; i < ARRAY_SIZE(data_fields); i++)
        if (key_is(key, len, data_fields[i].key, data_fields[i].len))
            return data_fields[i].kind;
    return PART_NONE;
}

/* Where a problem is: "history[3]" or "history[3].parts[1]"; or, for a
 * part of Gemini's answer, "gemini part 1". */
struct where {
    size_t turn, part;
    bool in_part;
    bool upstream;
};

static int fail(struct status_error *err, const struct where *w,
                const char *fmt, ...) ATTR_FMT(3, 4);

static int
fail(struct status_error *err, const struct where *w, const char *fmt, ...)
{
    char what[STATUS_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (w->upstream)
        return status_set(err, ST_UPSTREAM_BAD, "gemini part %zu: %s", w->part,
                          what);
    if (w->in_part)
        return status_set(err, ST_INVALID_HISTORY,
                          "history[%zu].parts[%zu]: %s", w->turn, w->part,
                          what);
    return status_set(err, ST_INVALID_HISTORY, "history[%zu]: %s", w->turn,
                      what);
}

static bool
nonempty_string(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

/* `id`, when present, is a string (Gemini refuses anything else). */
static int
check_id(const json_t *obj, const char *field, const struct where *w,
         struct status_error *err)
{
    const json_t *id = json_object_get(obj, "id");

    if (id != NULL && !json_is_string(id))
        return fail(err, w, "%s.id must be a string", field);
    return 0;
}

static int
check_call(const json_t *fc, bool model, const struct where *w,
           struct status_error *err)
{
    const json_t *args;

    if (!model)
        return fail(err, w, "functionCall is only allowed in model turns");
    if (!json_is_object(fc))
        return fail(err, w, "functionCall must be an object");
    if (!nonempty_string(json_object_get(fc, "name")))
        return fail(err, w, "functionCall.name must be a non-empty string");
    args = json_object_get(fc, "args");
    if (args != NULL && !json_is_object(args))
        return fail(err, w, "functionCall.args must be an object");
    return check_id(fc, "functionCall", w, err);
}

static int
check_response(const json_t *fr, bool model, const struct where *w,
               struct status_error *err)
{
    if (model)
        return fail(err, w, "functionResponse is only allowed in user turns");
    if (!json_is_object(fr))
        return fail(err, w, "functionResponse must be an object");
    if (!nonempty_string(json_object_get(fr, "name")))
        return fail(err, w, "functionResponse.name must be a non-empty string");
    if (!json_is_object(json_object_get(fr, "response")))
        return fail(err, w, "functionResponse.response must be an object");
    return check_id(fr, "functionResponse", w, err);
}

/*
 * One part: an object with exactly one data field, the thought flags
 * beside it, and, in model turns only, members we do not know (Gemini
 * adds fields; what it sent must go back). Sets *kind.
 */
static int
check_part(const json_t *part, bool model, const struct where *w,
           enum part_kind *kind, struct status_error *err)
{
    const char *key, *data_key = NULL;
    size_t len, data_len = 0;
    const json_t *v, *data = NULL;

    *kind = PART_NONE;
    if (!json_is_object(part))
        return fail(err, w, "must be an object");
    json_object_keylen_foreach(UNCONST(part), key, len, v) {
        enum part_kind k = data_kind(key, len);

        if (k != PART_NONE) {
            if (data != NULL)
                return fail(err, w,
                            "holds both \"%.*s\" and \"%.*s\"; a part has "
                            "exactly one data field",
                            (int)data_len, data_key, (int)len, key);
            *kind = k;
            data = v;
            data_key = key;
            data_len = len;
        } else if (KEY_IS(key, len, "thought")) {
            if (!json_is_boolean(v))
                return fail(err, w, "thought must be a boolean");
        } else if (KEY_IS(key, len, "thoughtSignature")) {
            if (!json_is_string(v))
                return fail(err, w, "thoughtSignature must be a string");
        } else if (!model) {
            return fail(err, w, "unknown member \"%.*s\"",
                        len > BOUND_NAME_SHOWN ? BOUND_NAME_SHOWN : (int)len,
                        key);
        }
    }

    switch (*kind) {
    case PART_NONE:
        return fail(err, w,
                    "has no data field (text, inlineData, fileData, "
                    "functionCall, functionResponse, executableCode or "
                    "codeExecutionResult)");
    case PART_TEXT:
        if (!json_is_string(data))
            return fail(err, w, "text must be a string");
        /* `{"text": ""}` alone is the empty part Gemini refuses (wire §3);
         * with a signature or a flag beside it, it is what Gemini sent. */
        if (json_string_length(data) == 0 && json_object_size(part) == 1)
            return fail(err, w, "text must not be empty");
        return 0;
    case PART_FUNCTION_CALL:
        return check_call(data, model, w, err);
    case PART_FUNCTION_RESPONSE:
        return check_response(data, model, w, err);
    case PART_INLINE_DATA:
    case PART_FILE_DATA:
    case PART_EXECUTABLE_CODE:
    case PART_CODE_EXECUTION_RESULT:
        if (!json_is_object(data))
            return fail(err, w, "%.*s must be an object", (int)data_len,
                        data_key);
        return 0;
    }
    return 0;
}

bool
history_part_known(const json_t *part)
{
    const char *key;
    size_t len;
    const json_t *v;

    json_object_keylen_foreach(UNCONST(part), key, len, v) {
        if (data_kind(key, len) != PART_NONE)
            return true;
    }
    return false;
}

int
history_check_model_part(const json_t *part, size_t index,
                         struct status_error *err)
{
    struct where w = {.part = index, .in_part = true, .upstream = true};
    enum part_kind kind;

    return check_part(part, true, &w, &kind, err);
}

/* --- pairing calls with responses ----------------------------------------- */

/* The model turn whose function calls the next turn must answer. */
struct open_calls {
    const json_t *parts; /* its parts; NULL when no calls are open */
    size_t turn;
    size_t ncalls;
};

static const char *
call_name(const json_t *fc)
{
    return json_string_value(json_object_get(fc, "name"));
}

/* Does functionResponse `fr` answer call `fc`: the same name, and the
 * call's id when it had one? */
static bool
answers(const json_t *fr, const json_t *fc)
{
    const json_t *call_id = json_object_get(fc, "id");

    return strcmp(call_name(fr), call_name(fc)) == 0 &&
           (call_id == NULL || json_equal(call_id, json_object_get(fr, "id")));
}

/*
 * Match the functionResponse parts `resp` of turn `turn` against the calls
 * of `oc`, in order: the same name, and the call's id when it had one.
 * With `partial` (the pending state of a mixed turn) the answers cover a
 * subsequence of the calls, in call order: the ones the server answered
 * when the turn ran; the browser's answers come with submitToolResults.
 * Which calls those were is read from the answers themselves, not from
 * names, so a page tool that has since left the page changes nothing.
 */
static int
match_answers(const struct open_calls *oc, const json_t *resp, size_t turn,
              bool partial, struct status_error *err)
{
    struct where w = {.turn = turn};
    size_t i = 0, r, nresp = json_array_size(resp);
    const json_t *part;

    if (!partial && nresp != oc->ncalls)
        return fail(err, &w,
                    "the model turn history[%zu] made %zu function calls "
                    "but this turn answers %zu",
                    oc->turn, oc->ncalls, nresp);
    w.in_part = true;
    for (r = 0; r < nresp; r++) {
        const json_t *fr = json_object_get(json_array_get(resp, r),
                                           "functionResponse");
        const json_t *fc = NULL;

        w.part = r;
        /* the next call this response can answer (partial: skip others) */
        for (; i < json_array_size(oc->parts); i++) {
            part = json_array_get(oc->parts, i);
            fc = json_object_get(part, "functionCall");
            if (fc == NULL)
                continue;
            if (!partial || answers(fr, fc))
                break;
        }
        if (i == json_array_size(oc->parts))
            return fail(err, &w,
                        "functionResponse \"%.*s\" answers no remaining call "
                        "of history[%zu], in call order",
                        BOUND_NAME_SHOWN, call_name(fr), oc->turn);
        if (strcmp(call_name(fr), call_name(fc)) != 0)
            return fail(err, &w,
                        "functionResponse.name \"%.*s\" does not match the "
                        "call \"%.*s\" of history[%zu].parts[%zu]",
                        BOUND_NAME_SHOWN, call_name(fr), BOUND_NAME_SHOWN,
                        call_name(fc), oc->turn, i);
        if (!answers(fr, fc))
            return fail(err, &w,
                        "functionResponse.id must be \"%.*s\", the id of the "
                        "call in history[%zu].parts[%zu]",
                        BOUND_NAME_SHOWN,
                        json_string_value(json_object_get(fc, "id")), oc->turn,
                        i);
        i++;
    }
    return 0;
}

/*
 * A user turn made only of functionResponse parts answers `oc`: in full,
 * or, when `pending_ok` (the last turn, with HISTORY_ALLOW_PENDING) and it
 * answers fewer calls than were made, in part.
 */
static int
check_answers(const struct open_calls *oc, const json_t *resp, size_t turn,
              bool pending_ok, struct status_error *err)
{
    bool partial = pending_ok && json_array_size(resp) < oc->ncalls;

    return match_answers(oc, resp, turn, partial, err);
}

/* --- turns ---------------------------------------------------------------- */

/* What the parts of one turn hold, for the pairing rules. */
struct turn_parts {
    size_t ncalls, nresp;
    size_t other; /* index of the first part that is not a response */
    bool has_other;
};

static int
check_turn(const json_t *turn, size_t index, bool *model, struct turn_parts *tp,
           const json_t **parts_out, struct status_error *err)
{
    struct where w = {.turn = index};
    const json_t *role = NULL, *parts = NULL, *v, *part;
    const char *key;
    size_t len, j;

    if (!json_is_object(turn))
        return fail(err, &w, "must be an object");
    /* A Content is {role, parts}; Gemini refuses any other member. */
    json_object_keylen_foreach(UNCONST(turn), key, len, v) {
        if (KEY_IS(key, len, "role"))
            role = v;
        else if (KEY_IS(key, len, "parts"))
            parts = v;
        else
            return fail(err, &w, "unknown member \"%.*s\"",
                        len > BOUND_NAME_SHOWN ? BOUND_NAME_SHOWN : (int)len,
                        key);
    }
    /* No default role: Gemini would take a missing one as "user", and a
     * history that lost its roles is not one we wrote. */
    if (json_is_string(role) && strcmp(json_string_value(role), "model") == 0)
        *model = true;
    else if (json_is_string(role) &&
             strcmp(json_string_value(role), "user") == 0)
        *model = false;
    else
        return fail(err, &w, "role must be \"user\" or \"model\"");
    if (!json_is_array(parts) || json_array_size(parts) == 0)
        return fail(err, &w, "parts must be a non-empty array");

    memset(tp, 0, sizeof(*tp));
    w.in_part = true;
    json_array_foreach(parts, j, part) {
        enum part_kind kind;

        w.part = j;
        if (check_part(part, *model, &w, &kind, err) != 0)
            return -1;
        if (kind == PART_FUNCTION_CALL) {
            tp->ncalls++;
        } else if (kind == PART_FUNCTION_RESPONSE) {
            tp->nresp++;
        } else if (!tp->has_other) {
            tp->has_other = true;
            tp->other = j;
        }
    }
    *parts_out = parts;
    return 0;
}

int
history_check_user_parts(const json_t *history, unsigned allowed,
                         struct status_error *err)
{
    static const struct {
        const char *key;
        unsigned bit;
    } kinds[] = {
        {"inlineData", HISTORY_PARTS_INLINE},
        {"fileData", HISTORY_PARTS_FILE},
        {"executableCode", HISTORY_PARTS_CODE},
        {"codeExecutionResult", HISTORY_PARTS_CODE},
    };
    const json_t *turn, *part, *inner;
    size_t i, j, k;

    json_array_foreach(history, i, turn) {
        struct where w = {.turn = i, .in_part = true};
        if (strcmp(json_string_value(json_object_get(turn, "role")), "user") !=
            0)
            continue; /* model turns are Gemini's */
        json_array_foreach(json_object_get(turn, "parts"), j, part) {
            w.part = j;
            if (json_is_true(json_object_get(part, "thought")) &&
                !(allowed & HISTORY_PARTS_THOUGHT))
                return fail(err, &w,
                            "a thought part is not accepted from "
                            "the browser (history.allowParts)");
            for (k = 0; k < ARRAY_SIZE(kinds); k++)
                if (json_object_get(part, kinds[k].key) != NULL &&
                    !(allowed & kinds[k].bit))
                    return fail(err, &w,
                                "%s is not accepted from the browser "
                                "(history.allowParts)",
                                kinds[k].key);
            /* a function's media result */
            inner = json_object_get(json_object_get(part, "functionResponse"),
                                    "parts");
            if (json_array_size(inner) > 0 && !(allowed & HISTORY_PARTS_INLINE))
                return fail(err, &w,
                            "functionResponse.parts is not accepted from the "
                            "browser (history.allowParts)");
        }
    }
    return 0;
}

int
history_check(const json_t *history, unsigned flags, struct status_error *err)
{
    struct open_calls oc = {0};
    size_t i, n;
    const json_t *turn;

    if (!json_is_array(history))
        return status_set(err, ST_INVALID_HISTORY, "history must be an array");
    n = json_array_size(history);
    json_array_foreach(history, i, turn) {
        struct where w = {.turn = i};
        struct turn_parts tp;
        const json_t *parts = NULL;
        bool model = false;

        if (check_turn(turn, i, &model, &tp, &parts, err) != 0)
            return -1;
        if (oc.parts != NULL && (model || tp.nresp == 0))
            return fail(err, &w,
                        "the model turn history[%zu] made %zu function "
                        "calls but this turn answers 0",
                        oc.turn, oc.ncalls);
        if (model) {
            if (tp.ncalls > 0)
                oc = (struct open_calls){parts, i, tp.ncalls};
            continue;
        }
        if (tp.nresp == 0)
            continue;
        if (oc.parts == NULL)
            return fail(err, &w,
                        "functionResponse parts must answer the function "
                        "calls of the model turn just before");
        if (tp.has_other) {
            w.in_part = true;
            w.part = tp.other;
            return fail(err, &w,
                        "a turn that answers function calls holds only "
                        "functionResponse parts");
        }
        if (check_answers(&oc, parts, i,
                          (flags & HISTORY_ALLOW_PENDING) && i + 1 == n,
                          err) != 0)
            return -1;
        oc.parts = NULL;
    }
    if (oc.parts != NULL && !(flags & HISTORY_ALLOW_PENDING)) {
        struct where w = {.turn = oc.turn};
        return fail(err, &w,
                    "the model turn made %zu function calls that no turn "
                    "answers",
                    oc.ncalls);
    }
    return 0;
}

/* --- trimming ------------------------------------------------------------- */

/*
 * Whether a history may start at this turn: a user turn with text and no
 * function responses. Gemini starts "the current turn" at such a message
 * (wire §4), so cutting there splits no call from its answer.
 */
static bool
is_cut_point(const json_t *turn)
{
    const json_t *parts = json_object_get(turn, "parts"), *part;
    const json_t *role = json_object_get(turn, "role");
    bool text = false;
    size_t j;

    if (!json_is_string(role) || strcmp(json_string_value(role), "user") != 0)
        return false;
    json_array_foreach(parts, j, part) {
        if (json_object_get(part, "functionResponse") != NULL)
            return false;
        if (json_is_string(json_object_get(part, "text")))
            text = true;
    }
    return text;
}

size_t
history_trim_start(const json_t *history, size_t max_turns)
{
    size_t n = json_array_size(history), lo, i;

    if (n <= max_turns)
        return 0;
    lo = n - max_turns;
    for (i = lo; i < n; i++)
        if (is_cut_point(json_array_get(history, i)))
            return i;
    /* No cut fits: keep the latest whole exchange rather than break one. */
    for (i = lo; i-- > 0;)
        if (is_cut_point(json_array_get(history, i)))
            return i;
    return 0;
}
