/*
 * check_cabundle.c - the CA file given to libcurl: the environment's
 * SSL_CERT_FILE first; libcurl's own file kept when it exists. (A host
 * without libcurl's file, where the other places are tried, is
 * tests/deploy/t_bundle.sh's bare root.)
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/cabundle.h"

#include <check.h>
#include <stdlib.h>
#include <unistd.h>

START_TEST(environment_first)
{
    ck_assert_int_eq(setenv("SSL_CERT_FILE", "/nowhere/ca.pem", 1), 0);
    ck_assert_str_eq(cabundle_path(), "/nowhere/ca.pem");
    /* empty is unset */
    ck_assert_int_eq(setenv("SSL_CERT_FILE", "", 1), 0);
    ck_assert_ptr_eq(cabundle_path(),
                     cabundle_path()); /* stable, whatever it is */
}
END_TEST

START_TEST(curls_own_when_it_exists)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    CURL *c = curl_easy_init();

    unsetenv("SSL_CERT_FILE");
    if (v->cainfo != NULL && access(v->cainfo, R_OK) == 0)
        ck_assert_ptr_null(cabundle_path());
    else
        /* a host without it: another file, or none at all */
        ck_assert(cabundle_path() == NULL ||
                  access(cabundle_path(), R_OK) == 0);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(cabundle_apply(c), CURLE_OK);
    curl_easy_cleanup(c);
}
END_TEST

Suite *
cabundle_suite(void)
{
    Suite *s = suite_create("cabundle");
    TCase *tc = tcase_create("cabundle");

    tcase_add_test(tc, environment_first);
    tcase_add_test(tc, curls_own_when_it_exists);
    suite_add_tcase(s, tc);
    return s;
}
