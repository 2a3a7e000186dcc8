/*
 * auth.c - the credential and endpoint of `gemini-agent chat` (auth.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/auth.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/status.h"
#include "gemini/gemini.h"
#include "gemini/vertex.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *
env(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* GOOGLE_GENAI_USE_VERTEXAI as Google's SDKs read it: "true" or "1". */
static bool
env_true(const char *name)
{
    const char *v = env(name);

    return v != NULL && (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

static bool
have_env_key(void)
{
    return env("GEMINI_API_KEY") != NULL || env("GOOGLE_API_KEY") != NULL;
}

/* Where Vertex AI is asked, checked now rather than at the first call. */
static int
vertex_where(struct term_auth *t, const struct term_args *args, bool asked,
             struct status_error *err)
{
    const char *project = args->project;
    const char *location = args->location;
    struct arena a;
    int rc = 0;

    if (project == NULL)
        project = env("GOOGLE_CLOUD_PROJECT");
    if (project == NULL)
        project = t->cred.project_id;
    if (location == NULL)
        location = env("GOOGLE_CLOUD_LOCATION");
    if (location == NULL)
        location = "global";
    if (project == NULL)
        return status_set(
            err, ST_NOT_CONFIGURED,
            "%s credentials (%s) are used with Vertex AI, which needs a "
            "project: pass --project or set GOOGLE_CLOUD_PROJECT%s",
            asked ? "--vertex: the Google"
                  : "no Gemini API key is set; the "
                    "Google",
            t->source,
            asked ? "" : " (or set GEMINI_API_KEY for the Gemini API)");
    arena_init(&a);
    if (vertex_url(&a, NULL, project, location, "m", true, err) == NULL)
        rc = -1;
    arena_release(&a);
    if (rc != 0)
        return -1;
    t->project = strdup(project);
    t->location = strdup(location);
    if (t->project == NULL || t->location == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    t->vertex = true;
    return 0;
}

int
term_auth_open(struct term_auth *t, const struct term_args *args,
               const char *config_key, struct status_error *err)
{
    bool asked = args->vertex || env_true("GOOGLE_GENAI_USE_VERTEXAI");
    struct cred_opts o = {
        .oauth_only = asked,
        .token_url = env(TERM_TOKEN_URL_ENV),
    };

    memset(t, 0, sizeof(*t));
    t->source = "none";
    /* the configuration's key comes after the environment's, before ADC:
     * a key the user set up for this folder wins over machine-wide
     * credentials, as it did before ADC was looked at */
    if (!asked && !have_env_key() && config_key != NULL) {
        t->source = "apiKeyHelper"; /* a settings file, not env */
        t->config_key = config_key;
        return 0;
    }
    if (cred_resolve(&o, &t->cred, err) != 0) {
        if (asked && err->code == ST_NOT_CONFIGURED && have_env_key()) {
            memset(err, 0, sizeof(*err)); /* the first error would win */
            return status_set(err, ST_NOT_CONFIGURED,
                              "--vertex needs Google OAuth credentials "
                              "(GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth "
                              "application-default login`, or gcloud); an "
                              "API key is not used with it (Vertex AI "
                              "express mode is not supported): drop --vertex "
                              "to use the key with the Gemini API");
        }
        return -1;
    }
    t->source = cred_source_name(t->cred.source);
    if (!cred_is_bearer(&t->cred))
        return 0;
    if (vertex_where(t, args, asked, err) != 0) {
        term_auth_close(t);
        return -1;
    }
    return 0;
}

static int
secret(void *ctx, bool force, const char **out, struct status_error *err)
{
    struct term_auth *t = ctx;

    return cred_token(&t->cred, force, out, err);
}

int
term_auth_attach(struct term_auth *t, struct gemini *g,
                 struct config_gemini *gc, struct status_error *err)
{
    const char *key;

    if (!t->vertex) {
        if (t->cred.source == CRED_NONE) /* the configuration's key */
            key = t->config_key;
        else if (cred_token(&t->cred, false, &key, err) != 0)
            return -1;
        gc->api_key = strdup(key);
        return gc->api_key != NULL
                   ? 0
                   : status_set(err, ST_NO_MEMORY, "out of memory");
    }
    /* the first token now: a credential that cannot give one ends the
     * session before it starts, not its first prompt */
    if (cred_token(&t->cred, false, &key, err) != 0)
        return -1;
    g->auth = GEMINI_AUTH_BEARER;
    g->secret = secret;
    g->secret_ctx = t;
    g->vertex_project = t->project;
    g->vertex_location = t->location;
    return 0;
}

void
term_auth_close(struct term_auth *t)
{
    cred_release(&t->cred);
    free(t->project);
    free(t->location);
    t->project = t->location = NULL;
    t->vertex = false;
}
