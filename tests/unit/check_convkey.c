/*
 * check_convkey.c - widget conversation keys (agent/convkey.h): minted
 * when there is none, the same key for the token given back, refused
 * when forged or changed; without a secret, any well-formed token.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/convkey.h"
#include "agent/seal.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/status.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static const unsigned char secret[] = "0123456789abcdef0123456789abcdef";

START_TEST(minted_and_given_back)
{
    struct seal_key k = {secret, sizeof(secret) - 1};
    struct status_error err = {0};
    struct arena a;
    const char *tok, *key, *tok2, *key2, *tok3, *key3;
    char forged[128];

    arena_init(&a);
    ck_assert_int_eq(convkey_resolve(&k, NULL, &a, &tok, &key, &err), 0);
    ck_assert_int_eq(strncmp(tok, "c1.", 3), 0);
    ck_assert_int_eq(strncmp(key, "chat:", 5), 0);
    ck_assert_uint_le(strlen(tok), BOUND_CONVKEY_TOKEN);
    /* the same token: the same key */
    ck_assert_int_eq(convkey_resolve(&k, tok, &a, &tok2, &key2, &err), 0);
    ck_assert_str_eq(key2, key);
    ck_assert_str_eq(tok2, tok);
    /* another conversation: another key */
    ck_assert_int_eq(convkey_resolve(&k, NULL, &a, &tok3, &key3, &err), 0);
    ck_assert_str_ne(key3, key);
    /* a changed id, a missing MAC, garbage: refused */
    snprintf(forged, sizeof(forged), "%s", tok);
    forged[3] = forged[3] == 'a' ? 'b' : 'a';
    ck_assert_int_eq(convkey_resolve(&k, forged, &a, &tok2, &key2, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    memset(&err, 0, sizeof(err));
    snprintf(forged, sizeof(forged), "%.35s", tok);
    ck_assert_int_eq(convkey_resolve(&k, forged, &a, &tok2, &key2, &err), -1);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(convkey_resolve(&k, "thread-1", &a, &tok2, &key2, &err),
                     -1);
    arena_release(&a);
}
END_TEST

START_TEST(without_a_secret)
{
    struct seal_key none = {NULL, 0};
    struct status_error err = {0};
    struct arena a;
    const char *tok, *key;
    const char *mine = "c1.00112233445566778899aabbccddeeff";

    arena_init(&a);
    ck_assert_int_eq(convkey_resolve(&none, NULL, &a, &tok, &key, &err), 0);
    ck_assert_uint_eq(strlen(tok), 3 + 32);
    /* the client may pick any well-formed one (documented) */
    ck_assert_int_eq(convkey_resolve(&none, mine, &a, &tok, &key, &err), 0);
    ck_assert_str_eq(key, "chat:00112233445566778899aabbccddeeff");
    ck_assert_int_eq(convkey_resolve(&none, "c1.xyz", &a, &tok, &key, &err),
                     -1);
    arena_release(&a);
}
END_TEST

Suite *
convkey_suite(void)
{
    Suite *s = suite_create("convkey");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, minted_and_given_back);
    tcase_add_test(tc, without_a_secret);
    suite_add_tcase(s, tc);
    return s;
}
