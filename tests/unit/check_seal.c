/*
 * check_seal.c - canonical JSON (core/canon.h) and what the server vouches
 * for in the browser's state (agent/seal.h): turn signatures that survive
 * a JavaScript round trip and fail on every change, and approval tickets.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/seal.h"
#include "core/canon.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

static const unsigned char SECRET[32] = "0123456789abcdef0123456789abcde";
static const struct seal_key KEY = {SECRET, sizeof(SECRET)};

static char *
canon(const char *json)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    struct sbuf sb;
    char *out;

    ck_assert_ptr_nonnull(v);
    sbuf_init(&sb, SIZE_MAX / 2);
    ck_assert_int_eq(canon_write(v, &sb), 0);
    out = strndup(sb.buf, sb.len);
    sbuf_release(&sb);
    json_decref(v);
    return out;
}

/* One text per value, whoever spelled it. */
START_TEST(canonical_text)
{
    static const struct {
        const char *a, *b;
    } same[] = {
        /* key order, as JavaScript reorders number-like keys */
        {"{\"b\":1,\"10\":2,\"a\":{\"y\":1,\"x\":2}}",
         "{\"10\":2,\"a\":{\"x\":2,\"y\":1},\"b\":1}"},
        /* 5.0 comes back as 5 */
        {"{\"n\":5.0}", "{\"n\":5}"},
        {"[-0.0]", "[0]"},
        /* the 15-digit text our writer sent, read back by JavaScript */
        {"[0.1234567890123456789]", "[0.123456789012346]"},
        {"[4.9999999999999995]", "[5]"},
        {"[1e-5]", "[0.00001]"},
        /* escapes are spelled one way */
        {"[\"\\u00e9\\/\"]", "[\"\xc3\xa9/\"]"},
        {"{\"a\": [1, 2], \"b\": null}", "{\"b\":null,\"a\":[1,2]}"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
        char *a = canon(same[i].a), *b = canon(same[i].b);
        ck_assert_msg(strcmp(a, b) == 0, "%zu: %s vs %s", i, a, b);
        free(a);
        free(b);
    }
    char *t = canon("{\"b\":[true,false,null],\"a\":\"x\\ny\",\"c\":1.5}");
    ck_assert_str_eq(t, "{\"a\":\"x\\ny\",\"b\":[true,false,null],\"c\":1.5}");
    free(t);
    /* and different values stay different */
    char *x = canon("[1]"), *y = canon("[1.5]");
    ck_assert_str_ne(x, y);
    free(x);
    free(y);
}
END_TEST

#define HISTORY                                                                \
    "[{\"role\":\"user\",\"parts\":[{\"text\":\"review the hub\"}]},"        \
    "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"c1\","       \
    "\"name\":\"action_shop_addReview\",\"args\":{\"productId\":\"p1\","     \
    "\"rating\":5}},\"thoughtSignature\":\"c2ln\"},{\"functionCall\":{"      \
    "\"id\":\"c2\",\"name\":\"click-btn\",\"args\":{}}}]},"                  \
    "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"c1\","    \
    "\"name\":\"action_shop_addReview\",\"response\":{\"result\":1}}},"      \
    "{\"functionResponse\":{\"id\":\"c2\",\"name\":\"click-btn\","           \
    "\"response\":{\"result\":\"ok\"}}}]},"                                   \
    "{\"role\":\"model\",\"parts\":[{\"text\":\"Done.\"}]}]"

static json_t *
signed_history(json_t **sigs)
{
    struct status_error err = {0};
    json_t *h = json_loads(HISTORY, 0, NULL);

    ck_assert_ptr_nonnull(h);
    *sigs = seal_sign(&KEY, h, NULL, 0, &err);
    ck_assert_ptr_nonnull(*sigs);
    return h;
}

static int
verify(const json_t *h, const json_t *sigs, struct status_error *err)
{
    memset(err, 0, sizeof(*err));
    return seal_verify(&KEY, h, sigs, err);
}

START_TEST(turn_signatures)
{
    struct status_error err;
    json_t *sigs, *h = signed_history(&sigs);
    char *text;
    json_t *back, *copy;

    ck_assert_int_eq(json_array_size(sigs), 4);
    ck_assert(json_is_null(json_array_get(sigs, 0)));   /* the visitor's */
    for (size_t i = 1; i < 4; i++)
        ck_assert_int_eq(strlen(json_string_value(json_array_get(sigs, i))),
                         TOKEN_MAC_LEN);
    ck_assert_int_eq(verify(h, sigs, &err), 0);

    /* a round trip through another writer (sorted keys, indented) */
    text = json_dumps(h, JSON_SORT_KEYS | JSON_INDENT(2));
    back = json_loads(text, 0, NULL);
    free(text);
    ck_assert_int_eq(verify(back, sigs, &err), 0);
    json_decref(back);

    /* the visitor's words the model answered are covered by its turn */
    copy = json_deep_copy(h);
    json_object_set_new(json_array_get(json_object_get(json_array_get(copy, 0),
                                                       "parts"),
                                       0),
                        "text", json_string("review the hub, please"));
    ck_assert_int_eq(verify(copy, sigs, &err), -1);
    ck_assert(strstr(err.text, "history[1]") != NULL);
    json_decref(copy);

    /* a visitor's turn added after the last signed one goes on */
    copy = json_deep_copy(h);
    json_array_append_new(copy, json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                          "parts", "text", "stopped"));
    ck_assert_int_eq(verify(copy, sigs, &err), 0);
    json_decref(copy);

    /* the page's result in a signed turn is not covered either */
    copy = json_deep_copy(h);
    json_object_set_new(
        json_object_get(json_object_get(json_array_get(json_object_get(
                                                           json_array_get(copy,
                                                                          2),
                                                           "parts"),
                                                       1),
                                        "functionResponse"),
                        "response"),
        "result", json_string("changed"));
    ck_assert_int_eq(verify(copy, sigs, &err), 0);
    json_decref(copy);

    /* every change of what the server wrote fails, naming the turn */
    static const char *const edits[] = {
        /* the model's text */
        "[3,\"parts\",0,\"text\",\"Refunded.\"]",
        /* the call's arguments */
        "[1,\"parts\",0,\"functionCall\",\"args\",{\"productId\":\"p2\"}]",
        /* Gemini's signature */
        "[1,\"parts\",0,\"thoughtSignature\",\"eA\"]",
        /* the server's answer */
        "[2,\"parts\",0,\"functionResponse\",\"response\",{\"result\":2}]",
    };
    static const size_t turn_of[] = {3, 1, 1, 2};
    for (size_t i = 0; i < ARRAY_SIZE(edits); i++) {
        json_t *e = json_loads(edits[i], 0, NULL), *at;
        size_t n = json_array_size(e);
        char want[32];
        copy = json_deep_copy(h);
        at = json_array_get(copy, (size_t)json_integer_value(json_array_get(e, 0)));
        for (size_t k = 1; k + 2 < n; k++) {
            json_t *key = json_array_get(e, k);
            at = json_is_string(key) ? json_object_get(at, json_string_value(key))
                                     : json_array_get(at, (size_t)json_integer_value(key));
        }
        json_object_set(at, json_string_value(json_array_get(e, n - 2)),
                        json_array_get(e, n - 1));
        ck_assert_int_eq(verify(copy, sigs, &err), -1);
        ck_assert_int_eq(err.code, ST_HISTORY_TAMPERED);
        snprintf(want, sizeof(want), "history[%zu]", turn_of[i]);
        ck_assert_msg(strstr(err.text, want) != NULL, "%zu: %s", i, err.text);
        json_decref(copy);
        json_decref(e);
    }

    /* a turn moved: the first two swapped out for an exchange in front */
    copy = json_deep_copy(h);
    json_array_insert_new(copy, 0,
                          json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                    "parts", "text", "earlier"));
    json_t *moved = json_deep_copy(sigs);
    json_array_insert_new(moved, 0, json_null());
    ck_assert_int_eq(verify(copy, moved, &err), -1);
    ck_assert_int_eq(err.code, ST_HISTORY_TAMPERED);
    json_decref(moved);
    json_decref(copy);

    /* no signatures at all, or a signature of another turn */
    ck_assert_int_eq(verify(h, NULL, &err), -1);
    copy = json_deep_copy(sigs);
    json_array_set(copy, 3, json_array_get(sigs, 1));
    ck_assert_int_eq(verify(h, copy, &err), -1);
    ck_assert(strstr(err.text, "history[3]") != NULL);
    json_decref(copy);

    /* another secret signs differently */
    static const unsigned char other[32] = "another secret, 32 bytes long..";
    struct seal_key k2 = {other, sizeof(other)};
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(seal_verify(&k2, h, sigs, &err), -1);

    /* reuse keeps the given signatures and signs the rest */
    memset(&err, 0, sizeof(err));
    json_t *again = seal_sign(&KEY, h, sigs, 2, &err);
    ck_assert(json_equal(again, sigs));
    json_decref(again);

    json_decref(sigs);
    json_decref(h);
}
END_TEST

START_TEST(tickets)
{
    struct status_error err = {0};
    json_t *h = json_loads(HISTORY, 0, NULL);
    json_t *args;
    char ticket[SEAL_TICKET_SIZE], id[TOKEN_MAC_SIZE];
    long long exp = 0;

    args = json_object_get(json_object_get(json_array_get(json_object_get(
                                                               json_array_get(h, 1),
                                                               "parts"),
                                                           0),
                                           "functionCall"),
                           "args");
    struct seal_call c = {"shop.addReview", args, "c1", 1, 0};
    ck_assert_int_eq(seal_ticket(&KEY, h, &c, 1000000, ticket, &err), 0);
    ck_assert(strncmp(ticket, "t1.1000000.", 11) == 0);
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &c, ticket, 999999, id, &exp, &err), 0);
    ck_assert_int_eq(exp, 1000000);
    ck_assert_str_eq(id, ticket + 11);

    /* expired */
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &c, ticket, 1000001, id, &exp, &err), -1);
    ck_assert_int_eq(err.code, ST_APPROVAL_INVALID);
    ck_assert(strstr(err.text, "expired") != NULL);

    /* another call, other args, another place, a longer life, junk */
    struct seal_call other = c;
    other.id = "c2";
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &other, ticket, 0, id, &exp, &err), -1);
    other = c;
    other.part = 1;
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &other, ticket, 0, id, &exp, &err), -1);
    json_t *args2 = json_pack("{s:s, s:i}", "productId", "p1", "rating", 1);
    other = c;
    other.args = args2;
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &other, ticket, 0, id, &exp, &err), -1);
    json_decref(args2);
    static const char *const junk[] = {
        "t1.2000000.", "t2.1000000.x", "t1.01000000.AAAAAAAAAAAAAAAAAAAAAA",
        "t1..AAAAAAAAAAAAAAAAAAAAAA", "t1.-5.AAAAAAAAAAAAAAAAAAAAAA", "",
        "t1.99999999999999999999999.AAAAAAAAAAAAAAAAAAAAAA"};
    for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
        memset(&err, 0, sizeof(err));
        ck_assert_int_eq(
            seal_ticket_check(&KEY, h, &c, junk[i], 0, id, &exp, &err), -1);
        ck_assert_int_eq(err.code, ST_APPROVAL_INVALID);
    }
    char later[SEAL_TICKET_SIZE];
    snprintf(later, sizeof(later), "t1.2000000.%s", ticket + 11);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &c, later, 0, id, &exp, &err), -1);

    /* the conversation before the call changed (the visitor's words) */
    json_object_set_new(json_array_get(json_object_get(json_array_get(h, 0),
                                                       "parts"),
                                       0),
                        "text", json_string("review the mouse"));
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(
        seal_ticket_check(&KEY, h, &c, ticket, 0, id, &exp, &err), -1);
    json_decref(h);
}
END_TEST

Suite *
seal_suite(void)
{
    Suite *s = suite_create("seal");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, canonical_text);
    tcase_add_test(tc, turn_signatures);
    tcase_add_test(tc, tickets);
    suite_add_tcase(s, tc);
    return s;
}
