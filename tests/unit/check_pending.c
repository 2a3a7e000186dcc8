/*
 * check_pending.c - the pending turn: which model turn waits, the answers
 * already given kept in call order, the rest asked of the caller, and the
 * answer turn put in place of the partial one.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/pending.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

static json_t *
J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    ck_assert_msg(v != NULL, "bad test JSON: %s: %s", e.text, text);
    return v;
}

#define CALL(n) "{\"functionCall\":{\"name\":\"" n "\",\"args\":{}}}"
#define ANSWER(n)                                                              \
    "{\"functionResponse\":{\"name\":\"" n "\",\"response\":{\"ok\":1}}}"
#define MODEL(parts) "{\"role\":\"model\",\"parts\":[" parts "]}"
#define USER(parts) "{\"role\":\"user\",\"parts\":[" parts "]}"
#define HI USER("{\"text\":\"hi\"}")

/* --- which turn waits -------------------------------------------------- */

static const struct {
    const char *contents;
    bool pending;
    size_t model, npartial;
    bool after;
} finds[] = {
    {"[]", false, 0, 0, false},
    {"[" HI "]", false, 0, 0, false},
    {"[" HI "," MODEL("{\"text\":\"no calls\"}") "]", false, 0, 0, false},
    {"[" HI "," MODEL(CALL("a")) "]", true, 1, 0, false},
    {"[" HI "," MODEL("{\"text\":\"x\"}," CALL("a") "," CALL("b")) "]", true,
     1, 0, false},
    /* a partial answer turn after it */
    {"[" HI "," MODEL(CALL("a") "," CALL("b")) "," USER(ANSWER("a")) "]",
     true, 1, 1, true},
    /* a complete answer turn: nothing waits */
    {"[" HI "," MODEL(CALL("a") "," CALL("b")) "," USER(
         ANSWER("a") "," ANSWER("b")) "]",
     false, 0, 0, false},
    /* a user turn alone, or after a turn without calls */
    {"[" USER(ANSWER("a")) "]", false, 0, 0, false},
    {"[" HI "," USER(ANSWER("a")) "]", false, 0, 0, false},
};

START_TEST(find)
{
    json_t *contents = J(finds[_i].contents);
    struct pending_turn p;
    bool got = pending_find(contents, &p);

    ck_assert_msg(got == finds[_i].pending, "%s", finds[_i].contents);
    if (got) {
        ck_assert_uint_eq(p.model, finds[_i].model);
        ck_assert_uint_eq(json_array_size(p.partial), finds[_i].npartial);
        ck_assert(p.after == finds[_i].after);
        ck_assert_ptr_eq(p.parts,
                         json_object_get(json_array_get(contents, p.model),
                                         "parts"));
    } else {
        ck_assert_ptr_null(p.parts);
    }
    json_decref(contents);
}
END_TEST

START_TEST(at_a_known_turn)
{
    json_t *contents = J("[" HI "," MODEL(CALL("a")) "," USER(
        ANSWER("a")) "," MODEL(CALL("b") "," CALL("c")) "]");
    struct pending_turn p;

    pending_at(contents, 1, &p);
    ck_assert_uint_eq(p.model, 1);
    ck_assert(p.after);
    ck_assert_uint_eq(json_array_size(p.partial), 1);
    pending_at(contents, 3, &p);
    ck_assert(!p.after);
    ck_assert_ptr_null(p.partial);
    ck_assert_uint_eq(json_array_size(p.parts), 2);
    json_decref(contents);
}
END_TEST

/* --- answering --------------------------------------------------------- */

/* The test's answerer: calls named "wait*" stay, "fail" fails, the rest
 * get {"n": how many were asked before}; every call asked is noted. */
struct asked {
    char names[8][16];
    size_t turn[8], part[8];
    size_t n;
};

static int
answer_test(void *ctx, const struct pending_call *c, json_t **resp,
            struct status_error *err)
{
    struct asked *a = ctx;

    ck_assert_uint_lt(a->n, 8);
    snprintf(a->names[a->n], sizeof(a->names[0]), "%s", c->name);
    a->turn[a->n] = c->turn;
    a->part[a->n] = c->part;
    a->n++;
    if (strcmp(c->name, "fail") == 0)
        return status_set(err, ST_BAD_REQUEST, "the call '%s' failed",
                          c->name);
    *resp = strncmp(c->name, "wait", 4) == 0
                ? NULL
                : json_pack("{s:I}", "n", (json_int_t)(a->n - 1));
    return 0;
}

START_TEST(answers_in_call_order)
{
    /* a, then b answered already, then wait, then c */
    json_t *contents = J("[" HI "," MODEL(
        "{\"text\":\"x\"}," CALL("a") "," CALL("b") "," CALL("wait") "," CALL(
            "c")) "," USER(ANSWER("a") "," ANSWER("b")) "]");
    struct pending_turn p;
    struct asked asked = {0};
    struct status_error err = {0};
    json_t *turn, *want;
    size_t n;

    ck_assert(pending_find(contents, &p));
    ck_assert_int_eq(pending_answer(&p, answer_test, &asked, &turn, &n, &err),
                     0);
    /* only the calls the partial turn does not answer were asked */
    ck_assert_uint_eq(asked.n, 2);
    ck_assert_str_eq(asked.names[0], "wait");
    ck_assert_str_eq(asked.names[1], "c");
    ck_assert_uint_eq(asked.turn[1], 1);
    ck_assert_uint_eq(asked.part[0], 3);
    ck_assert_uint_eq(asked.part[1], 4);
    ck_assert_uint_eq(n, 3);
    want = J(USER(ANSWER("a") "," ANSWER(
        "b") ",{\"functionResponse\":{\"name\":\"c\",\"response\":{\"n\":1}}}"));
    ck_assert_msg(json_equal(turn, want), "%s",
                  json_dumps(turn, JSON_COMPACT));
    /* it takes the partial turn's place */
    ck_assert_int_eq(pending_place(contents, &p, turn, &err), 0);
    ck_assert_uint_eq(json_array_size(contents), 3);
    ck_assert(json_equal(json_array_get(contents, 2), want));
    json_decref(want);
    json_decref(contents);
}
END_TEST

START_TEST(an_answer_out_of_order_is_not_reused)
{
    /* the partial turn answers b, but a comes first: a is asked, and the
     * answer to b is taken for b only when it is next in line */
    json_t *contents = J("[" HI "," MODEL(CALL("a") "," CALL(
        "b")) "," USER(ANSWER("b")) "]");
    struct pending_turn p;
    struct asked asked = {0};
    struct status_error err = {0};
    json_t *turn;
    size_t n;

    ck_assert(pending_find(contents, &p));
    ck_assert_int_eq(pending_answer(&p, answer_test, &asked, &turn, &n, &err),
                     0);
    ck_assert_uint_eq(asked.n, 1);
    ck_assert_str_eq(asked.names[0], "a");
    ck_assert_uint_eq(n, 2);
    json_decref(turn);
    json_decref(contents);
}
END_TEST

START_TEST(an_id_must_match)
{
    json_t *contents = J(
        "[" HI "," MODEL("{\"functionCall\":{\"name\":\"a\",\"id\":\"1\"}},"
                         "{\"functionCall\":{\"name\":\"a\",\"id\":\"2\"}}") ","
        USER("{\"functionResponse\":{\"name\":\"a\",\"id\":\"2\","
             "\"response\":{}}}") "]");
    struct pending_turn p;
    struct asked asked = {0};
    struct status_error err = {0};
    json_t *turn;
    size_t n;

    ck_assert(pending_find(contents, &p));
    ck_assert_int_eq(pending_answer(&p, answer_test, &asked, &turn, &n, &err),
                     0);
    /* the answer to id 2 is not the first call's */
    ck_assert_uint_eq(asked.n, 1);
    ck_assert_uint_eq(asked.part[0], 0);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(json_object_get(
                                                            turn, "parts"),
                                                        0),
                                         "functionResponse"),
                         "id")),
                     "1");
    json_decref(turn);
    json_decref(contents);
}
END_TEST

START_TEST(all_wait)
{
    json_t *contents = J("[" HI "," MODEL(CALL("wait1") "," CALL("wait2")) "]");
    struct pending_turn p;
    struct asked asked = {0};
    struct status_error err = {0};
    json_t *turn;
    size_t n;

    ck_assert(pending_find(contents, &p));
    ck_assert_int_eq(pending_answer(&p, answer_test, &asked, &turn, &n, &err),
                     0);
    ck_assert_uint_eq(asked.n, 2);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(json_array_size(json_object_get(turn, "parts")), 0);
    /* no partial turn: it goes after the model turn */
    ck_assert_int_eq(pending_place(contents, &p, turn, &err), 0);
    ck_assert_uint_eq(json_array_size(contents), 3);
    json_decref(contents);
}
END_TEST

START_TEST(a_failure_ends_the_walk)
{
    json_t *contents = J("[" HI "," MODEL(CALL("a") "," CALL("fail") "," CALL(
        "c")) "]");
    struct pending_turn p;
    struct asked asked = {0};
    struct status_error err = {0};
    json_t *turn = (json_t *)1;
    size_t n = 9;

    ck_assert(pending_find(contents, &p));
    ck_assert_int_eq(pending_answer(&p, answer_test, &asked, &turn, &n, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_str_eq(err.text, "the call 'fail' failed");
    ck_assert_uint_eq(asked.n, 2); /* c was never asked */
    ck_assert_ptr_null(turn);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(json_array_size(contents), 2);
    json_decref(contents);
}
END_TEST

Suite *
pending_suite(void)
{
    Suite *s = suite_create("pending");
    TCase *tc = tcase_create("find");

    tcase_add_loop_test(tc, find, 0, (int)ARRAY_SIZE(finds));
    tcase_add_test(tc, at_a_known_turn);
    suite_add_tcase(s, tc);
    tc = tcase_create("answer");
    tcase_add_test(tc, answers_in_call_order);
    tcase_add_test(tc, an_answer_out_of_order_is_not_reused);
    tcase_add_test(tc, an_id_must_match);
    tcase_add_test(tc, all_wait);
    tcase_add_test(tc, a_failure_ends_the_walk);
    suite_add_tcase(s, tc);
    return s;
}
