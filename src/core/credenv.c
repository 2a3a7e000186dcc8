/*
 * credenv.c - the credential variables kept from our children (see
 * credenv.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/credenv.h"

#include <stdlib.h>
#include <string.h>

/*
 * The one list. Each is read by gemini/credentials.c, term/auth.c or
 * core/config.c, or names a Google credential another tool in the child
 * would use: a key, a token, a credential file, or a folder of them.
 * `gcloud` marks gcloud's own settings (its properties come from
 * CLOUDSDK_<SECTION>_<NAME> variables), which the gcloud we run needs.
 */
static const struct {
    const char *name;
    bool gcloud;
} credenv_vars[] = {
    {"GEMINI_API_KEY", false},                 /* a Gemini API key */
    {"GOOGLE_API_KEY", false},                 /* the same, Google's name */
    {"GOOGLE_APPLICATION_CREDENTIALS", false}, /* the ADC file */
    {"GOOGLE_OAUTH_ACCESS_TOKEN", false},      /* a token as such */
    {"CLOUDSDK_CONFIG", true}, /* gcloud's folder: its ADC file */
    {"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", true},
    {"CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE", true},
};

/* The length of the name in "NAME=value" (or of a bare name). */
static size_t
name_len(const char *entry)
{
    return strcspn(entry, "=");
}

/* Which credential variable entry is: its index, or -1. */
static int
credenv_find(const char *entry)
{
    size_t n = name_len(entry);

    for (size_t i = 0; i < ARRAY_SIZE(credenv_vars); i++)
        if (strlen(credenv_vars[i].name) == n &&
            memcmp(credenv_vars[i].name, entry, n) == 0)
            return (int)i;
    return -1;
}

bool
credenv_is_credential(const char *name)
{
    return credenv_find(name) >= 0;
}

/* Does the pass list (names separated by spaces, tabs or commas) name
 * entry's variable? */
static bool
credenv_passed(const char *pass, const char *entry)
{
    static const char sep[] = " \t,";
    size_t n = name_len(entry);

    while (pass != NULL && *pass != '\0') {
        size_t k;
        pass += strspn(pass, sep);
        k = strcspn(pass, sep);
        if (k == n && k > 0 && memcmp(pass, entry, n) == 0)
            return true;
        pass += k;
    }
    return false;
}

bool
credenv_withheld(const char *entry, const char *pass, unsigned flags)
{
    int i = credenv_find(entry);

    if (i < 0)
        return false;
    if ((flags & CREDENV_GCLOUD) && credenv_vars[i].gcloud)
        return false;
    return !credenv_passed(pass, entry);
}

char **
credenv_clean(char *const *env, unsigned flags)
{
    const char *pass = getenv(CREDENV_PASS_VAR);
    size_t n = 0, k = 0;
    char **out;

    while (env != NULL && env[n] != NULL)
        n++;
    if ((out = calloc(n + 1, sizeof(*out))) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!credenv_withheld(env[i], pass, flags))
            out[k++] = env[i];
    return out;
}
