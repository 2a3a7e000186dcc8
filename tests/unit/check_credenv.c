/*
 * check_credenv.c - the credentials kept from our children (core/credenv.h):
 * the one list, the pass list, gcloud's own settings.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/credenv.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(the_list)
{
    static const char *const creds[] = {
        "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_OAUTH_ACCESS_TOKEN", "CLOUDSDK_CONFIG",
        "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE", "GEMINI_API_KEY=k",
    };
    static const char *const others[] = {
        "PATH", "HOME", "GEMINI_API_KEYS", "GEMINI_API", "gemini_api_key",
        "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GEMINI_BASE_URL",
        "GEMINI_AGENT_PASS_ENV", "", "=GEMINI_API_KEY",
    };

    for (size_t i = 0; i < ARRAY_SIZE(creds); i++)
        ck_assert_msg(credenv_is_credential(creds[i]), "%s", creds[i]);
    for (size_t i = 0; i < ARRAY_SIZE(others); i++)
        ck_assert_msg(!credenv_is_credential(others[i]), "%s", others[i]);
}
END_TEST

START_TEST(withheld_and_passed)
{
    ck_assert(credenv_withheld("GEMINI_API_KEY=k", NULL, 0));
    ck_assert(credenv_withheld("GEMINI_API_KEY=", "", 0));
    ck_assert(!credenv_withheld("PATH=/bin", NULL, 0));
    /* by name, separated by spaces, tabs or commas; whole names only */
    ck_assert(!credenv_withheld("GEMINI_API_KEY=k", "GEMINI_API_KEY", 0));
    ck_assert(!credenv_withheld("GOOGLE_API_KEY=k", " X,\tGOOGLE_API_KEY ",
                                0));
    ck_assert(credenv_withheld("GOOGLE_API_KEY=k", "GOOGLE_API", 0));
    ck_assert(credenv_withheld("GOOGLE_API_KEY=k", "GOOGLE_API_KEYS", 0));
    ck_assert(credenv_withheld("GOOGLE_API_KEY=k", "GOOGLE_API_KEY=k", 0));
    ck_assert(credenv_withheld("GOOGLE_API_KEY=k", ",,", 0));
    /* gcloud keeps its own settings, never a key */
    ck_assert(!credenv_withheld("CLOUDSDK_CONFIG=/c", NULL, CREDENV_GCLOUD));
    ck_assert(!credenv_withheld("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE=/t", NULL,
                                CREDENV_GCLOUD));
    ck_assert(credenv_withheld("CLOUDSDK_CONFIG=/c", NULL, 0));
    ck_assert(credenv_withheld("GEMINI_API_KEY=k", NULL, CREDENV_GCLOUD));
    ck_assert(credenv_withheld("GOOGLE_APPLICATION_CREDENTIALS=/a", NULL,
                               CREDENV_GCLOUD));
}
END_TEST

START_TEST(clean_copies_pointers)
{
    char e0[] = "PATH=/bin", e1[] = "GEMINI_API_KEY=k1", e2[] = "HOME=/h",
         e3[] = "GOOGLE_API_KEY=k2", e4[] = "CLOUDSDK_CONFIG=/c";
    char *env[] = {e0, e1, e2, e3, e4, NULL};
    char **out;

    unsetenv(CREDENV_PASS_VAR);
    out = credenv_clean(env, 0);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_eq(out[0], env[0]);
    ck_assert_ptr_eq(out[1], env[2]);
    ck_assert_ptr_null(out[2]);
    free(out);
    out = credenv_clean(env, CREDENV_GCLOUD);
    ck_assert_ptr_eq(out[2], env[4]);
    ck_assert_ptr_null(out[3]);
    free(out);
    ck_assert_int_eq(setenv(CREDENV_PASS_VAR, "GOOGLE_API_KEY", 1), 0);
    out = credenv_clean(env, 0);
    ck_assert_ptr_eq(out[1], env[2]);
    ck_assert_ptr_eq(out[2], env[3]);
    ck_assert_ptr_null(out[3]);
    free(out);
    unsetenv(CREDENV_PASS_VAR);
    out = credenv_clean(NULL, 0);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_null(out[0]);
    free(out);
}
END_TEST

Suite *
credenv_suite(void)
{
    Suite *s = suite_create("credenv");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, the_list);
    tcase_add_test(tc, withheld_and_passed);
    tcase_add_test(tc, clean_copies_pointers);
    suite_add_tcase(s, tc);
    return s;
}
