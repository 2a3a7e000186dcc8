/*
 * auth.c - `gemini-agent auth issue --user NAME [--ttl SECONDS]`: print a
 * session token (core/token.h) signed with the site's secret, for a
 * script, a test or an operator standing in for the site's own login.
 *
 * `gemini-agent auth sign-history < body.json`: the chat's signatures
 * (agent/seal.h) for a history the server did not write - an imported
 * conversation, a benchmark's - so that it passes history.verify:
 * strict. Reads a history (a JSON array) or a chat body (an object with
 * `history`) and writes the body with `signatures` set (or, for an
 * array, the signatures alone).
 *
 * Only the token goes to stdout, so `TOKEN=$(gemini-agent auth issue
 * --user ann)` works; everything else goes to stderr. The secret is
 * never printed.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "core/token.h"
#include "agent/history.h"
#include "agent/seal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char cmd_auth_usage[] =
    "issue --user NAME [--ttl SECONDS] [--config FILE] | "
    "sign-history [--config FILE] < BODY.json";

/* The site secret of the config at `path` into secret[0..*n); 0, or 1
 * after saying why. Only what stops us: a missing API key does not
 * matter here. */
static int
load_secret(const char *path, unsigned char *secret, size_t cap, size_t *n)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = config_load(path, &d);
    struct status_error err = {0};
    int rc = 1;

    if (cfg == NULL) {
        diag_print(&d, stderr, "");
        fprintf(stderr, "error: the configuration in '%s' cannot be used\n",
                path);
    } else if (cfg->auth.secret_file == NULL) {
        fprintf(stderr,
                "error: '%s' names no session secret: add\n"
                "    auth:\n"
                "      secretFile: .session-secret\n"
                "to it, and run `gemini-agent setup` to create the file\n",
                path);
    } else if (token_secret_load(cfg->auth.secret_file, secret, cap, n, &err) !=
               0) {
        fprintf(stderr, "error: %s\n", err.text);
    } else {
        rc = 0;
    }
    diag_release(&d);
    config_free(cfg);
    return rc;
}

static int
issue(const char *config_path, const char *user, int ttl)
{
    struct status_error err = {0};
    unsigned char secret[BOUND_SECRET_MAX];
    char token[TOKEN_SIZE];
    size_t n = 0;
    int rc = 1;

    if (load_secret(config_path, secret, sizeof(secret), &n) != 0)
        goto out;
    if (token_issue(secret, n, user, (long long)time(NULL) + ttl, token,
                    sizeof(token), &err) != 0) {
        fprintf(stderr, "error: %s\n", err.text);
        goto out;
    }
    printf("%s\n", token);
    rc = fflush(stdout) == 0 ? 0 : 1;
    explicit_bzero(token, sizeof(token));
out:
    explicit_bzero(secret, sizeof(secret));
    return rc;
}

static int
sign_history(const char *config_path)
{
    struct status_error err = {0};
    unsigned char secret[BOUND_SECRET_MAX];
    struct seal_key key = {secret, 0};
    json_error_t jerr;
    json_t *body = NULL, *history, *sigs = NULL;
    int rc = 1;

    if (load_secret(config_path, secret, sizeof(secret), &key.len) != 0)
        goto out;
    body = json_loadf(stdin, 0, &jerr);
    if (body == NULL) {
        fprintf(stderr, "error: standard input, line %d: %s\n", jerr.line,
                jerr.text);
        goto out;
    }
    history = json_is_array(body) ? body : json_object_get(body, "history");
    if (history == NULL ||
        history_check(history, HISTORY_ALLOW_PENDING, &err) != 0) {
        fprintf(stderr, "error: %s\n",
                history ? err.text
                        : "the input is neither a history (an array) nor a "
                          "body with one");
        goto out;
    }
    if ((sigs = seal_sign(&key, history, NULL, 0, &err)) == NULL) {
        fprintf(stderr, "error: %s\n", err.text);
        goto out;
    }
    if (!json_is_array(body) &&
        json_object_set(body, "signatures", sigs) != 0) {
        fprintf(stderr, "error: out of memory\n");
        goto out;
    }
    if (json_dumpf(json_is_array(body) ? sigs : body, stdout, JSON_COMPACT) !=
            0 ||
        putchar('\n') == EOF || fflush(stdout) != 0)
        goto out;
    rc = 0;
out:
    explicit_bzero(secret, sizeof(secret));
    json_decref(sigs);
    json_decref(body);
    return rc;
}

int
cmd_auth(int argc, char **argv)
{
    const char *config = config_default_path(), *user = NULL, *words[1];
    int ttl = (int)DEFAULT_TOKEN_TTL_S, rc;
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--user", &user),
        CMDOPT_INT("--ttl", &ttl, 1, (int)BOUND_TOKEN_TTL_S),
        CMDOPT_STR("--config", &config),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {.name = "auth",
                           .usage = cmd_auth_usage,
                           .opts = opts,
                           .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (c.nwords == 1 && strcmp(words[0], "sign-history") == 0)
        return user != NULL ? cmdopt_fail(&c, "sign-history takes no --user")
                            : sign_history(config);
    if (c.nwords == 0 || strcmp(words[0], "issue") != 0)
        return cmdopt_fail(&c, "use issue --user NAME, or sign-history");
    if (user == NULL)
        return cmdopt_fail(&c, "issue needs --user NAME");
    if (!token_user_valid(user, strnlen(user, BOUND_USER_NAME + 1)))
        return cmdopt_fail(&c,
                           "a user name is 1 to %d bytes of UTF-8 "
                           "without control characters",
                           BOUND_USER_NAME);
    return issue(config, user, ttl);
}
