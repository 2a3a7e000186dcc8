/*
 * credentials.h - where a terminal client's Google credential comes from,
 * and the bearer token it yields (docs/credentials.md).
 *
 * cred_resolve() walks the sources in a fixed order and keeps the first
 * that is there:
 *
 *   1. GEMINI_API_KEY, then GOOGLE_API_KEY: a Gemini API key (skipped with
 *      cred_opts.oauth_only, for Vertex AI);
 *   2. Application Default Credentials: the file named by
 *      GOOGLE_APPLICATION_CREDENTIALS, else gcloud's well-known file
 *      ($CLOUDSDK_CONFIG, else $HOME/.config/gcloud, joined with
 *      application_default_credentials.json). A "service_account" key is
 *      exchanged for a token with an RS256-signed JWT at its token_uri; an
 *      "authorized_user" file with its refresh token. A file that is there
 *      but cannot be used is an error, not a reason to try the next source;
 *   3. `gcloud auth print-access-token`: the gcloud named by the caller,
 *      else by $GEMINI_AGENT_GCLOUD, else the first in $PATH.
 *
 * cred_token() gives the token to send, cached in memory with its expiry
 * and fetched again CRED_REFRESH_MARGIN_S before it, or when the caller
 * forces it after a 401.
 *
 * No credential is written to disk, logged, or put in an error message:
 * errors name the source (and its file), the HTTP status and the OAuth
 * `error` code only. Every buffer that held a secret is wiped before it
 * is freed.
 *
 * Not thread-safe: a struct cred serves one thread (the terminal client
 * has one), or its user holds a lock around cred_token().
 *
 * Not here: the HTTP call to Gemini or Vertex (gemini.h, with
 * GEMINI_AUTH_BEARER for a token), nor Vertex's URLs (vertex.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CREDENTIALS_H
#define APP_CREDENTIALS_H

#include "core/common.h"
#include "gemini/bounds.h"

#include <time.h>

struct status_error;

/* Which source cred_resolve() chose; cred_source_name() names it. */
enum cred_source {
    CRED_NONE,
    CRED_GEMINI_API_KEY,  /* "GEMINI_API_KEY" */
    CRED_GOOGLE_API_KEY,  /* "GOOGLE_API_KEY" */
    CRED_SERVICE_ACCOUNT, /* "service_account" */
    CRED_AUTHORIZED_USER, /* "authorized_user" */
    CRED_GCLOUD,          /* "gcloud" */
};

/* The default token endpoint, which authorized_user files always use. */
#define CRED_GOOGLE_TOKEN_URL "https://oauth2.googleapis.com/token"

/* The environment variable that names the gcloud to run. */
#define CRED_GCLOUD_ENV "GEMINI_AGENT_GCLOUD"

/* How cred_resolve() looks around; zero-initialise, then set what
 * differs. Every field is optional. */
struct cred_opts {
    /* The environment: getenv(3) when NULL. Tests pass a table. */
    const char *(*getenv)(void *ctx, const char *name);
    void *env_ctx;
    /* Skip the API keys: Vertex AI wants an OAuth token. */
    bool oauth_only;
    /* The gcloud to run (a --gcloud flag); NULL: $GEMINI_AGENT_GCLOUD,
     * else "gcloud" in $PATH. */
    const char *gcloud;
    /* TESTS ONLY: the token endpoint of authorized_user files, which is
     * otherwise always CRED_GOOGLE_TOKEN_URL (as Google's libraries do).
     * A service-account key names its own (token_uri) and that is used. */
    const char *token_url;
    /* Deadlines: 0 for CRED_TIMEOUT_MS and CRED_GCLOUD_TIMEOUT_MS. */
    long timeout_ms;
    long gcloud_timeout_ms;
    /* The clock (seconds since the epoch): time(2) when NULL. Tests move
     * it to expire a token. */
    time_t (*now)(void *ctx);
    void *now_ctx;
};

/* A resolved credential. Its fields are private to credentials.c but for
 * the two below; it owns copies of everything it needs from the options
 * (but the getenv and clock callbacks and their contexts, which must
 * outlive it). */
struct cred {
    enum cred_source source;
    /* Not secret, may be NULL: the ADC file used (for messages), the
     * project of a service-account key or the quota project of an
     * authorized_user file (for Vertex AI's defaults). */
    char *file;
    char *project_id;
    char *quota_project_id;

    /* --- private -------------------------------------------------------- */
    char *secret;    /* the API key, the PEM key or the refresh token */
    char *client_id; /* authorized_user */
    char *client_secret;
    char *email; /* service_account: client_email, key id, token_uri */
    char *key_id;
    char *token_uri;
    char *gcloud; /* the gcloud to run */
    char *token;  /* the cached access token, or NULL */
    time_t expires_at;
    long timeout_ms, gcloud_timeout_ms;
    time_t (*now)(void *ctx);
    void *now_ctx;
};

/*
 * Find the credential, in the order above, and load it (a file is read
 * and checked, a gcloud is found; no token is fetched yet). Returns 0
 * with `out` filled (cred_release it), or -1 with `out` empty and `err`
 * set: ST_NOT_CONFIGURED when no source is there (the message lists what
 * to set), ST_CONFIG when one is there but unusable (a missing file, bad
 * JSON, a field missing, an unsupported type), ST_NO_MEMORY.
 */
int cred_resolve(const struct cred_opts *o, struct cred *out,
                 struct status_error *err) ATTR_WUR;

/* The source's name, for init.apiKeySource: "GEMINI_API_KEY",
 * "GOOGLE_API_KEY", "service_account", "authorized_user", "gcloud", or
 * "none". Static. */
const char *cred_source_name(enum cred_source s);

/* True when the credential is an OAuth token (Authorization: Bearer),
 * false for an API key (x-goog-api-key). */
bool cred_is_bearer(const struct cred *c);

/*
 * The secret to send: the API key, or the current access token, fetched
 * when there is none, when it is within CRED_REFRESH_MARGIN_S of its
 * expiry, or when `force_refresh` (after a 401). `*token` stays valid
 * until the next cred_token() or cred_release(). Returns 0, or -1 with
 * `err` set: ST_UPSTREAM_AUTH when the endpoint or gcloud refused (also
 * for a forced refresh of an API key, which cannot be refreshed),
 * ST_UPSTREAM_DOWN / ST_UPSTREAM_TIMEOUT when it could not be reached in
 * time, ST_UPSTREAM_BAD for an answer without a usable token,
 * ST_CONFIG for a private key that cannot sign, ST_NO_MEMORY.
 */
int cred_token(struct cred *c, bool force_refresh, const char **token,
               struct status_error *err) ATTR_WUR;

/* Wipe and free everything; `c` is left empty (CRED_NONE). Safe twice. */
void cred_release(struct cred *c);

#endif /* APP_CREDENTIALS_H */
