/*
 * auth.c - `gemini-agent auth issue --user NAME [--ttl SECONDS]`: print a
 * session token (core/token.h) signed with the site's secret, for a
 * script, a test or an operator standing in for the site's own login.
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

#include <stdio.h>
#include <string.h>
#include <time.h>

const char cmd_auth_usage[] =
    "issue --user NAME [--ttl SECONDS] [--config FILE]";

static int
issue(const char *config_path, const char *user, int ttl)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = config_load(config_path, &d);
    struct status_error err = {0};
    unsigned char secret[BOUND_SECRET_MAX];
    char token[TOKEN_SIZE];
    size_t n = 0;
    int rc = 1;

    /* Only what stops us: a missing API key does not matter here. */
    if (cfg == NULL) {
        diag_print(&d, stderr, "");
        fprintf(stderr, "error: the configuration in '%s' cannot be used\n",
                config_path);
        goto out;
    }
    if (cfg->auth.secret_file == NULL) {
        fprintf(stderr,
                "error: '%s' names no session secret: add\n"
                "    auth:\n"
                "      secretFile: .session-secret\n"
                "to it, and run `gemini-agent setup` to create the file\n",
                config_path);
        goto out;
    }
    if (token_secret_load(cfg->auth.secret_file, secret, sizeof(secret), &n,
                          &err) != 0 ||
        token_issue(secret, n, user, (long long)time(NULL) + ttl, token,
                    sizeof(token), &err) != 0) {
        fprintf(stderr, "error: %s\n", err.text);
        goto out;
    }
    printf("%s\n", token);
    rc = fflush(stdout) == 0 ? 0 : 1;
    explicit_bzero(token, sizeof(token));
out:
    explicit_bzero(secret, sizeof(secret));
    diag_release(&d);
    config_free(cfg);
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
    struct cmdopt_cmd c = {.name = "auth", .usage = cmd_auth_usage,
                           .opts = opts, .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (c.nwords == 0 || strcmp(words[0], "issue") != 0)
        return cmdopt_fail(&c, "use issue --user NAME");
    if (user == NULL)
        return cmdopt_fail(&c, "issue needs --user NAME");
    if (!token_user_valid(user, strnlen(user, BOUND_USER_NAME + 1)))
        return cmdopt_fail(&c, "a user name is 1 to %d bytes of UTF-8 "
                               "without control characters",
                           BOUND_USER_NAME);
    return issue(config, user, ttl);
}
