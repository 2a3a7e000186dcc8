/*
 * question.c - questions for the user and their answers (question.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/question.h"
#include "registry/bounds.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>

enum question_kind { Q_SINGLE, Q_MULTIPLE, Q_TEXT, Q_BAD };

static enum question_kind
kind_of(const char *s)
{
    if (s == NULL)
        return Q_BAD;
    if (strcmp(s, "single") == 0)
        return Q_SINGLE;
    if (strcmp(s, "multiple") == 0)
        return Q_MULTIPLE;
    return strcmp(s, "text") == 0 ? Q_TEXT : Q_BAD;
}

/* Is the string `v` one of `options`? */
static bool
among(const json_t *options, const json_t *v)
{
    size_t i;
    const json_t *o;

    json_array_foreach(options, i, o) {
        if (json_equal(o, v))
            return true;
    }
    return false;
}

/* An id the widget and a client can carry anywhere: [A-Za-z0-9_.-]. */
static bool
valid_id(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > BOUND_QUESTION_ID)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
            return false;
    }
    return true;
}

/* A non-empty string of at most `max` bytes? */
static bool
short_string(const json_t *v, size_t max)
{
    return json_is_string(v) && json_string_length(v) > 0 &&
           json_string_length(v) <= max;
}

/* The choices of question `i`: 1..BOUND_QUESTION_OPTIONS unique strings. */
static int
check_options(size_t i, const json_t *options, struct status_error *err)
{
    size_t k, j;
    const json_t *o;

    if (!json_is_array(options) || json_array_size(options) == 0 ||
        json_array_size(options) > BOUND_QUESTION_OPTIONS)
        return status_set(err, ST_BAD_REQUEST,
                          "questions[%zu]: a single or multiple choice needs "
                          "1 to %d options",
                          i, BOUND_QUESTION_OPTIONS);
    json_array_foreach(options, k, o) {
        if (!short_string(o, BOUND_QUESTION_OPTION))
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu].options[%zu]: a string of 1 to "
                              "%d bytes",
                              i, k, BOUND_QUESTION_OPTION);
        for (j = 0; j < k; j++)
            if (json_equal(json_array_get(options, j), o))
                return status_set(err, ST_BAD_REQUEST,
                                  "questions[%zu].options: '%s' twice", i,
                                  json_string_value(o));
    }
    return 0;
}

/* The default of question `i` of kind `kind`, when there is one. */
static int
check_default(size_t i, enum question_kind kind, const json_t *options,
              const json_t *def, struct status_error *err)
{
    size_t k, j;
    const json_t *v;

    switch (kind) {
    case Q_TEXT:
        if (!json_is_string(def) || json_string_length(def) > BOUND_ANSWER_TEXT)
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu].default: a string of at most "
                              "%d bytes",
                              i, BOUND_ANSWER_TEXT);
        return 0;
    case Q_SINGLE:
        if (!json_is_string(def) || !among(options, def))
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu].default: one of the options", i);
        return 0;
    case Q_MULTIPLE:
        if (!json_is_array(def))
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu].default: an array of options", i);
        json_array_foreach(def, k, v) {
            if (!json_is_string(v) || !among(options, v))
                return status_set(err, ST_BAD_REQUEST,
                                  "questions[%zu].default[%zu]: one of the "
                                  "options",
                                  i, k);
            for (j = 0; j < k; j++)
                if (json_equal(json_array_get(def, j), v))
                    return status_set(err, ST_BAD_REQUEST,
                                      "questions[%zu].default: '%s' twice", i,
                                      json_string_value(v));
        }
        return 0;
    case Q_BAD:
        break;
    }
    return status_set(err, ST_INTERNAL, "unknown question kind");
}

/* questions[i] is an object with only the members a question has:
 * 0, or -1 with err set. */
static int
check_members(size_t i, const json_t *q, struct status_error *err)
{
    static const char *const known[] = {
        "id", "text", "kind", "options", "required", "default", NULL};
    const char *key;
    json_t *v;

    if (!json_is_object(q))
        return status_set(err, ST_BAD_REQUEST, "questions[%zu]: an object", i);
    json_object_foreach(UNCONST(q), key, v) {
        size_t n = 0;
        while (known[n] != NULL && strcmp(known[n], key) != 0)
            n++;
        if (known[n] == NULL)
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu]: unknown member '%s'", i, key);
    }
    return 0;
}

/* questions[i].id is an id, not one of the `earlier` questions': 0, or
 * -1 with err set. */
static int
check_id(size_t i, const json_t *id, const json_t *earlier,
         struct status_error *err)
{
    json_t *v;
    size_t k;

    if (!json_is_string(id) || !valid_id(json_string_value(id)))
        return status_set(err, ST_BAD_REQUEST,
                          "questions[%zu].id: 1 to %d letters, digits, '_', "
                          "'.' or '-'",
                          i, BOUND_QUESTION_ID);
    json_array_foreach(earlier, k, v) {
        if (json_equal(json_object_get(v, "id"), id))
            return status_set(err, ST_BAD_REQUEST,
                              "questions[%zu].id: '%s' is the id of an "
                              "earlier question too",
                              i, json_string_value(id));
    }
    return 0;
}

/* Question `i`, checked, as a new normalised object (NULL: see err). */
static json_t *
one_question(size_t i, const json_t *q, const json_t *earlier,
             struct status_error *err)
{
    const json_t *id = json_object_get(q, "id");
    const json_t *text = json_object_get(q, "text");
    const json_t *options = json_object_get(q, "options");
    const json_t *required = json_object_get(q, "required");
    const json_t *def = json_object_get(q, "default");
    enum question_kind kind;
    json_t *out;

    if (check_members(i, q, err) != 0 || check_id(i, id, earlier, err) != 0)
        return NULL;
    if (!short_string(text, BOUND_QUESTION_TEXT)) {
        status_set(err, ST_BAD_REQUEST,
                   "questions[%zu].text: a string of 1 to %d bytes", i,
                   BOUND_QUESTION_TEXT);
        return NULL;
    }
    kind = kind_of(json_string_value(json_object_get(q, "kind")));
    if (kind == Q_BAD) {
        status_set(err, ST_BAD_REQUEST,
                   "questions[%zu].kind: single, multiple or text", i);
        return NULL;
    }
    if (kind == Q_TEXT && options != NULL) {
        status_set(err, ST_BAD_REQUEST,
                   "questions[%zu]: a text question has no options", i);
        return NULL;
    }
    if (kind != Q_TEXT && check_options(i, options, err) != 0)
        return NULL;
    if (required != NULL && !json_is_boolean(required)) {
        status_set(err, ST_BAD_REQUEST, "questions[%zu].required: a boolean",
                   i);
        return NULL;
    }
    if (def != NULL && check_default(i, kind, options, def, err) != 0)
        return NULL;
    out = json_pack("{s:O, s:O, s:O, s:b}", "id", UNCONST(id), "text",
                    UNCONST(text), "kind", json_object_get(q, "kind"),
                    "required", required == NULL || json_is_true(required));
    if (out != NULL &&
        ((options != NULL &&
          json_object_set(out, "options", UNCONST(options)) != 0) ||
         (def != NULL && json_object_set(out, "default", UNCONST(def)) != 0))) {
        json_decref(out);
        out = NULL;
    }
    if (out == NULL)
        status_oom(err);
    return out;
}

json_t *
question_normalize(const json_t *q, struct status_error *err)
{
    const json_t *list = json_object_get(q, "questions");
    json_t *out = json_array(), *one;
    const json_t *v;
    size_t i;

    if (out == NULL) {
        status_oom(err);
        return NULL;
    }
    if (!json_is_object(q) || json_object_size(q) != 1 ||
        !json_is_array(list) || json_array_size(list) == 0 ||
        json_array_size(list) > BOUND_QUESTIONS) {
        json_decref(out);
        status_set(err, ST_BAD_REQUEST,
                   "the question must be {questions: [...]} with 1 to %d "
                   "questions",
                   BOUND_QUESTIONS);
        return NULL;
    }
    json_array_foreach(list, i, v) {
        if ((one = one_question(i, v, out, err)) == NULL ||
            json_array_append_new(out, one) != 0) {
            if (one != NULL)
                status_oom(err);
            json_decref(out);
            return NULL;
        }
    }
    return json_pack("{s:o}", "questions", out);
}

/* The answer `v` to question `q` (normalised): 1 valid, 0 absent (null
 * counts as absent), -1 with `err` set. */
static int
one_answer(const json_t *q, const json_t *v, struct status_error *err)
{
    const char *id = json_string_value(json_object_get(q, "id"));
    const json_t *options = json_object_get(q, "options");
    bool required = json_is_true(json_object_get(q, "required"));
    size_t k, j;
    const json_t *x;

    if (v == NULL || json_is_null(v))
        return required ? status_set(err, ST_BAD_REQUEST,
                                     "answers: '%s' is required", id)
                        : 0;
    switch (kind_of(json_string_value(json_object_get(q, "kind")))) {
    case Q_TEXT:
        if (!json_is_string(v) || json_string_length(v) > BOUND_ANSWER_TEXT)
            return status_set(err, ST_BAD_REQUEST,
                              "answers: '%s' must be a string of at most %d "
                              "bytes",
                              id, BOUND_ANSWER_TEXT);
        if (json_string_length(v) == 0)
            return required ? status_set(err, ST_BAD_REQUEST,
                                         "answers: '%s' is required", id)
                            : 0;
        return 1;
    case Q_SINGLE:
        if (!json_is_string(v) || !among(options, v))
            return status_set(err, ST_BAD_REQUEST,
                              "answers: '%s' must be one of its options", id);
        return 1;
    case Q_MULTIPLE:
        if (!json_is_array(v))
            return status_set(err, ST_BAD_REQUEST,
                              "answers: '%s' must be an array of its options",
                              id);
        json_array_foreach(v, k, x) {
            if (!json_is_string(x) || !among(options, x))
                return status_set(err, ST_BAD_REQUEST,
                                  "answers: '%s'[%zu] is not one of its "
                                  "options",
                                  id, k);
            for (j = 0; j < k; j++)
                if (json_equal(json_array_get(v, j), x))
                    return status_set(err, ST_BAD_REQUEST,
                                      "answers: '%s' names '%s' twice", id,
                                      json_string_value(x));
        }
        if (json_array_size(v) == 0)
            return required ? status_set(err, ST_BAD_REQUEST,
                                         "answers: '%s' is required (choose "
                                         "at least one)",
                                         id)
                            : 0;
        return 1;
    case Q_BAD:
        break;
    }
    return status_set(err, ST_INTERNAL, "unknown question kind");
}

json_t *
question_answers(const json_t *q, const json_t *answers,
                 struct status_error *err)
{
    const json_t *list = json_object_get(q, "questions"), *one, *v;
    json_t *out;
    const char *key;
    size_t i;

    if (!json_is_object(answers)) {
        status_set(err, ST_BAD_REQUEST,
                   "answers must be an object: question id -> answer");
        return NULL;
    }
    json_object_foreach(UNCONST(answers), key, v) {
        bool known = false;
        json_array_foreach(list, i, one) {
            known |= strcmp(json_string_value(json_object_get(one, "id")),
                            key) == 0;
        }
        if (!known) {
            status_set(err, ST_BAD_REQUEST,
                       "answers: '%s' is no question of this call", key);
            return NULL;
        }
    }
    if ((out = json_object()) == NULL) {
        status_oom(err);
        return NULL;
    }
    json_array_foreach(list, i, one) {
        const char *id = json_string_value(json_object_get(one, "id"));
        int rc;

        v = json_object_get(answers, id);
        if ((rc = one_answer(one, v, err)) < 0) {
            json_decref(out);
            return NULL;
        }
        if (rc > 0 && json_object_set(out, id, UNCONST(v)) != 0) {
            json_decref(out);
            status_oom(err);
            return NULL;
        }
    }
    return json_pack("{s:o}", "answers", out);
}
