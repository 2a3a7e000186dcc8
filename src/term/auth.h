/*
 * auth.h - which Google credential and which endpoint `gemini-agent chat`
 * uses (docs/credentials.md, "In gemini-agent chat").
 *
 * The order: GEMINI_API_KEY, GOOGLE_API_KEY (the Gemini API, with
 * x-goog-api-key); the key of agent.yaml's Gemini settings, as before;
 * Application Default Credentials; `gcloud auth print-access-token`. An
 * OAuth token always goes to Vertex AI, with Authorization: Bearer, so
 * it needs a project: --project, else GOOGLE_CLOUD_PROJECT, else a
 * service-account key's own project_id. The location: --location, else
 * GOOGLE_CLOUD_LOCATION, else "global".
 *
 * --vertex (or GOOGLE_GENAI_USE_VERTEXAI=true) skips the API keys: Vertex
 * AI is asked with an OAuth token, whatever keys are set. Vertex AI's
 * express mode (an API key, no project) is not served: with only a key,
 * --vertex is refused with a message that says so.
 *
 * Nothing here writes a secret anywhere; error texts name sources only.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_AUTH_H
#define APP_TERM_AUTH_H

#include "core/common.h"
#include "gemini/credentials.h"
#include "term/args.h"

struct config_gemini;
struct gemini;
struct status_error;

/* TESTS ONLY: the token endpoint of authorized_user files (otherwise
 * Google's, always); http:// only on loopback, as credentials.h allows. */
#define TERM_TOKEN_URL_ENV "GEMINI_AGENT_TEST_TOKEN_URL"

struct term_auth {
    struct cred cred;   /* the credential (CRED_NONE for the config's key) */
    const char *source; /* init.apiKeySource: static text, never a secret */
    bool vertex;        /* Vertex AI with a Bearer token */
    char *project;      /* heap; Vertex AI only */
    char *location;
    const char *config_key; /* borrowed: the configuration's key, or NULL */
};

/*
 * Choose the credential for `args` (`config_key`: the key from the
 * configuration's Gemini settings, or NULL). No token is fetched yet.
 * Returns 0, or -1 with `err` set (ST_NOT_CONFIGURED: nothing usable,
 * the message says what to set; ST_CONFIG: a source is there but broken,
 * or a bad project or location; ST_NO_MEMORY).
 */
int term_auth_open(struct term_auth *t, const struct term_args *args,
                   const char *config_key, struct status_error *err) ATTR_WUR;

/*
 * Point the client at it: an API key into gc->api_key (heap, the caller
 * frees it as before), or, for a token, g's secret hook and Vertex AI's
 * project and location (borrowed from `t`, which must outlive g), with
 * gc->base_url left as it is (GEMINI_BASE_URL, or NULL for the
 * location's host). A token is fetched now, so a credential that does
 * not work stops the session before it starts. 0, or -1 with `err`.
 */
int term_auth_attach(struct term_auth *t, struct gemini *g,
                     struct config_gemini *gc,
                     struct status_error *err) ATTR_WUR;

/* Wipe and free. Safe twice, and after a failed open. */
void term_auth_close(struct term_auth *t);

#endif /* APP_TERM_AUTH_H */
