/*
 * store.c - the run API's store for operators:
 *
 *   gemini-agent store migrate [--config FILE]
 *       bring the store (`store:` in agent.yaml) up to this program's
 *       schema; refuses a store written by a newer gemini-agent
 *   gemini-agent users set-trust NAME LEVEL [--config FILE]
 *       supervised | delegated | autonomous (policy.h)
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "store/store.h"

#include <stdio.h>
#include <string.h>

const char cmd_store_usage[] = "migrate [--config FILE]";
const char cmd_users_usage[] = "set-trust NAME LEVEL [--config FILE]";

/* The store named by the config, migrated; NULL after a message. */
static struct store *
open_store(const char *config_path, struct config **cfg)
{
    struct diag d = DIAG_INIT;
    struct status_error err = {0};
    struct store *st = NULL;

    *cfg = config_load(config_path, &d);
    if (*cfg == NULL) {
        diag_print(&d, stderr, "");
        fprintf(stderr, "error: the configuration in '%s' cannot be used\n",
                config_path);
    } else if ((st = store_open_migrated((*cfg)->run.store, &err)) == NULL) {
        fprintf(stderr, "error: %s: %s\n", (*cfg)->run.store, err.text);
    }
    diag_release(&d);
    return st;
}

int
cmd_store(int argc, char **argv)
{
    const char *config = config_default_path(), *words[1];
    const struct cmdopt_opt opts[] = {CMDOPT_STR("--config", &config),
                                      CMDOPT_END};
    struct cmdopt_cmd c = {.name = "store",
                           .usage = cmd_store_usage,
                           .opts = opts,
                           .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};
    struct status_error err = {0};
    struct config *cfg = NULL;
    struct store *st;
    int rc, version = 0;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (c.nwords != 1 || strcmp(words[0], "migrate") != 0)
        return cmdopt_fail(&c, "use migrate");
    st = open_store(config, &cfg);
    rc = st == NULL;
    if (st != NULL && st->ops->schema_version(st, &version, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.text);
        rc = 1;
    } else if (st != NULL) {
        printf("%s: schema %d\n", cfg->run.store, version);
    }
    if (st != NULL)
        st->ops->close(st);
    config_free(cfg);
    return rc;
}

int
cmd_users(int argc, char **argv)
{
    const char *config = config_default_path(), *words[3];
    const struct cmdopt_opt opts[] = {CMDOPT_STR("--config", &config),
                                      CMDOPT_END};
    struct cmdopt_cmd c = {.name = "users",
                           .usage = cmd_users_usage,
                           .opts = opts,
                           .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};
    struct status_error err = {0};
    struct config *cfg = NULL;
    struct store *st;
    int rc, trust;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (c.nwords != 3 || strcmp(words[0], "set-trust") != 0)
        return cmdopt_fail(&c, "use set-trust NAME LEVEL");
    if ((trust = store_trust_parse(words[2])) < 0)
        return cmdopt_fail(&c,
                           "LEVEL is supervised, delegated or "
                           "autonomous, not '%s'",
                           words[2]);
    if ((st = open_store(config, &cfg)) == NULL) {
        config_free(cfg);
        return 1;
    }
    rc = st->ops->user_set_trust(st, words[1], (enum store_trust)trust, &err);
    if (rc != 0)
        fprintf(stderr, "error: %s\n", err.text);
    else
        printf("%s: %s\n", words[1], store_trust_name((enum store_trust)trust));
    st->ops->close(st);
    config_free(cfg);
    return rc == 0 ? 0 : 1;
}
