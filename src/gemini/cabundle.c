/*
 * cabundle.c - the CA file for libcurl (cabundle.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/cabundle.h"

#include <stdlib.h>
#include <unistd.h>

/* Where distributions keep their CA bundle, most common first. */
static const char *const known[] = {
    "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Arch */
    "/etc/pki/tls/certs/ca-bundle.crt",   /* RHEL, Fedora, CentOS */
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL 7+ */
    "/etc/ssl/ca-bundle.pem",                            /* openSUSE */
    "/etc/ssl/cert.pem",                                 /* Alpine, macOS */
};

const char *
cabundle_path(void)
{
    const char *env = getenv("SSL_CERT_FILE");
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);

    if (env != NULL && env[0] != '\0')
        return env;
    if (v != NULL && v->cainfo != NULL && access(v->cainfo, R_OK) == 0)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(known); i++)
        if (access(known[i], R_OK) == 0)
            return known[i];
    return NULL;
}

CURLcode
cabundle_apply(CURL *c)
{
    const char *path = cabundle_path();

    return path == NULL ? CURLE_OK : curl_easy_setopt(c, CURLOPT_CAINFO, path);
}
