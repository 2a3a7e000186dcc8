/*
 * cabundle.h - which CA certificates libcurl verifies TLS servers with.
 *
 * libcurl carries the path of its build machine's CA file (Debian's
 * /etc/ssl/certs/ca-certificates.crt). A copy of the program running
 * elsewhere (the portable bundle on a Red Hat family host, docs/deploy/
 * portable-bundle.md) would find no such file and fail every HTTPS call.
 * So: SSL_CERT_FILE when the environment names one; else libcurl's own
 * file when it exists; else the first that exists of the places other
 * distributions keep theirs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CABUNDLE_H
#define APP_CABUNDLE_H

#include "core/common.h"

#include <curl/curl.h>

/* The CA file to give libcurl, or NULL to keep its own (it exists, or
 * nothing better does). */
const char *cabundle_path(void);

/* CURLOPT_CAINFO on `c` when cabundle_path() names a file. */
CURLcode cabundle_apply(CURL *c);

#endif /* APP_CABUNDLE_H */
