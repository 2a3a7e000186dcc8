/*
 * check.c - `gemini-agent check`: validate the configuration, the
 * plugins and their actions; every problem as `file:line: message`. It says
 * where the API key comes from, never the key itself.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "http/site.h"

#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_check_usage[] = "[--config FILE] [--web-user NAME]";

/* The web server's user, as far as the files go: who a CGI program runs
 * as when the host has no suEXEC (with it, the program runs as its
 * owner, the site's user). */
struct web_user {
    const char *name;
    uid_t uid;
    gid_t groups[64];
    int ngroups;
    bool told; /* named by --web-user: the CGI runs as this user */
};

/* Could `u` open a file of this stat with `bits` (4 read, 2 write, 1
 * search)? The file's own mode only: the folders above it are the host's
 * to open (a home folder is 0711 on most). */
static bool
web_user_can(const struct web_user *u, const struct stat *st, unsigned bits)
{
    if (u->uid == 0)
        return true;
    if (st->st_uid == u->uid)
        return (st->st_mode >> 6 & bits) == bits;
    for (int i = 0; i < u->ngroups; i++)
        if (st->st_gid == u->groups[i])
            return (st->st_mode >> 3 & bits) == bits;
    return (st->st_mode & bits) == bits;
}

/* Fill `u` for the user `name`: -1 when there is no such user. */
static int
web_user_find(const char *name, bool told, struct web_user *u)
{
    const struct passwd *pw = getpwnam(name);

    if (pw == NULL)
        return -1;
    u->name = name;
    u->uid = pw->pw_uid;
    u->told = told;
    u->ngroups = (int)ARRAY_SIZE(u->groups);
    if (getgrouplist(name, pw->pw_gid, u->groups, &u->ngroups) < 0)
        u->ngroups = 0; /* more groups than we hold: the primary only */
    if (u->ngroups == 0) {
        u->groups[0] = pw->pw_gid;
        u->ngroups = 1;
    }
    return 0;
}

/* One secret file (the key, the session secret) and the web server's
 * user. Its mode is checked already: config.c refuses a session secret
 * others can open, check() a key file. */
static void
check_secret_file(const char *path, const char *what, const struct web_user *u,
                  struct diag *d)
{
    struct stat st;

    if (u == NULL || u->uid == geteuid() || path == NULL ||
        stat(path, &st) != 0)
        return;
    if (web_user_can(u, &st, 4))
        diag_note(d, path, 0,
                  "holds %s and %s, the web server's user, can read it: so "
                  "can every site on this host whose programs run as %s. "
                  "Under suEXEC the program runs as you: make it yours "
                  "alone (chown %u, chmod 600)",
                  what, u->name, u->name, (unsigned)geteuid());
    else if (u->told)
        diag_add(d, path, 0,
                 "%s (--web-user) cannot read it, so a CGI run as %s "
                 "answers 500. Ask your host for suEXEC (the program then "
                 "runs as you and reads it as it is); giving %s the file "
                 "shares %s with every site run as %s",
                 u->name, u->name, u->name, what, u->name);
}

/* The config and the data folder, for the user the CGI runs as. */
static void
check_cgi_files(const struct config *cfg, const struct web_user *u,
                struct diag *d)
{
    const char *dir = cfg->actions.data_dir;
    struct stat st;

    if (dir != NULL && stat(dir, &st) == 0 && access(dir, W_OK | X_OK) != 0)
        diag_add(d, dir, 0,
                 "dataDir is not writable by you (uid %u); the program "
                 "keeps its store and the plugins' data there: chown it to "
                 "the user the program runs as, mode 700",
                 (unsigned)geteuid());
    if (u == NULL || !u->told || u->uid == geteuid())
        return;
    if (stat(cfg->path, &st) == 0 && !web_user_can(u, &st, 4))
        diag_add(d, cfg->path, 0,
                 "%s (--web-user) cannot read it: a CGI run as %s answers "
                 "500 config_error (under suEXEC it runs as you, and this "
                 "is right)",
                 u->name, u->name);
    if (dir != NULL && stat(dir, &st) == 0 && !web_user_can(u, &st, 3))
        diag_add(d, dir, 0,
                 "dataDir is not writable by %s (--web-user): a CGI run as "
                 "%s cannot keep its store there",
                 u->name, u->name);
}

/* Permissions as a host shared with other users sees them. */
static void
check_permissions(const struct config *cfg, const struct web_user *u,
                  struct diag *d)
{
    check_secret_file(cfg->auth.secret_file, "the session secret", u, d);
    check_secret_file(cfg->gemini.path, "the API key", u, d);
    check_cgi_files(cfg, u, d);
    if (u != NULL && u->uid == geteuid() && u->uid != 0)
        diag_note(d, cfg->path, 0,
                  "you run as %s, the web server's user: without suEXEC, "
                  "every site on this host whose programs run as %s can "
                  "read the API key and the session secret. Ask your host "
                  "for suEXEC, then make the files yours, mode 600",
                  u->name, u->name);
}

/* One budget's ceilings, "unlimited" for what is not set. */
static void
print_ceiling(const char *name, const struct config_ceiling *c)
{
    printf("budget.%s: ", name);
    if (c->requests_per_minute > 0)
        printf("%ld requests a minute, ", c->requests_per_minute);
    else
        printf("unlimited requests, ");
    if (c->tokens_per_day > 0)
        printf("%ld tokens a day (UTC)\n", c->tokens_per_day);
    else
        printf("unlimited tokens\n");
}

/* What a request may spend, as configured (docs/configuration.md "Budget"). */
static void
print_budget(const struct config *cfg)
{
    const struct config_budget *b = &cfg->budget;
    const struct config_limits *l = &cfg->limits;
    char text[NETADDR_TEXT_MAX];

    print_ceiling("perIp", &b->per_ip);
    print_ceiling("perUser", &b->per_user);
    print_ceiling("site", &b->site);
    printf("budget.trustForwardedFor:");
    for (size_t i = 0; i < b->ntrusted; i++) {
        netaddr_format(&b->trusted[i], text);
        printf(" %s", text);
    }
    printf("%s\n", b->ntrusted ? "" : " none (the client is REMOTE_ADDR)");
    printf("limits: maxOutputTokens %ld, maxLoopSteps %ld, maxCallsPerTurn "
           "%ld, maxUpstreamBytes %ld\n",
           l->max_output_tokens, l->max_loop_steps, l->max_calls_per_turn,
           l->max_upstream_bytes);
    printf("http.status: %s\n",
           cfg->status.on ? "GET /_jay/status, from http.status.allow" : "off");
}

/* Where the built-in plugins may fetch from (outbound.allow). */
static void
print_outbound(const struct config *cfg)
{
    char text[NETADDR_TEXT_MAX];

    printf("outbound.allow:");
    for (size_t i = 0; i < cfg->outbound.nallow; i++) {
        netaddr_format(&cfg->outbound.allow[i], text);
        printf(" %s", text);
    }
    printf("%s\n", cfg->outbound.nallow ? " (and the public Internet)"
                                        : " none (the public Internet only)");
}

/* The seed's list_exposed and list_available: every plugin found. */
static void
print_plugins(const struct plugin_set *set)
{
    for (int exposed = 1; exposed >= 0; exposed--) {
        size_t n = 0;
        for (size_t i = 0; i < set->nplugins; i++) {
            const struct plugin_info *p = &set->plugins[i];
            if (p->exposed != (exposed == 1))
                continue;
            printf("%s%s",
                   n++ ? ", "
                       : (exposed ? "plugins exposed: "
                                  : "plugins available, not "
                                    "exposed: "),
                   p->name);
        }
        if (n > 0)
            printf("\n");
    }
}

/* The API key file belongs to someone else, is shared with this user's
 * group and with nobody more (mode 0640 at most): how the web server's
 * user reads a site owner's key (proc/serve.c, key_file_shared_with_
 * server). */
static bool
key_shared_with_group(const struct config *cfg)
{
    struct stat st;

    return cfg->gemini.key_source == CONFIG_KEY_FILE &&
           stat(cfg->gemini.path, &st) == 0 && st.st_uid != geteuid() &&
           st.st_gid == getegid() && (st.st_mode & 027) == 0;
}

/* The files' permissions for the user the CGI runs as, and what serve
 * itself would refuse. */
static void
check_rest(const struct site *site, const struct web_user *u, struct diag *d)
{
    check_permissions(site->cfg, u, d);
    (void)site_check_serving(site, d); /* a problem: serve refuses */
}

/* What `check` finds wrong (problems) or worth knowing (notes) in a site
 * that loaded: budgets no request fits in, the key file's owner and mode,
 * the files' permissions for the user the CGI runs as, and what serve
 * itself would refuse. */
static void
check_problems(const struct site *site, const struct web_user *u,
               struct diag *d)
{
    const struct config *cfg = site->cfg;
    const struct config_ceiling *c[] = {
        &cfg->budget.per_ip, &cfg->budget.per_user, &cfg->budget.site};
    static const char *const names[] = {"perIp", "perUser", "site"};
    unsigned mode, uid;

    /* a day's tokens that cannot hold one request's reservation (its
     * maxOutputTokens at least): every request would be refused */
    for (size_t i = 0; i < ARRAY_SIZE(c); i++)
        if (c[i]->tokens_per_day > 0 &&
            c[i]->tokens_per_day < cfg->limits.max_output_tokens)
            diag_note(d, cfg->path, 0,
                      "budget.%s.tokensPerDay (%ld) is less than "
                      "limits.maxOutputTokens (%ld), which every request "
                      "reserves: every request will be refused",
                      names[i], c[i]->tokens_per_day,
                      cfg->limits.max_output_tokens);
    /* serve refuses a key file others can read or write: so is it a
     * problem here (proc/serve.c, key_file_allowed); one shared with this
     * user's group alone is how a CGI or mod_fcgid reads it, run as the
     * web server's user (docs/deploy/apache-cgi.md): worth a note only */
    if (key_shared_with_group(cfg)) {
        diag_note(d, cfg->gemini.path, 0,
                  "holds the API key and is shared with your group (a CGI "
                  "or mod_fcgid run as this user reads it so); `serve "
                  "--socket` would refuse it: it wants the file 0600 and "
                  "its user's own");
        check_rest(site, u, d);
        return;
    }
    if (config_key_file_foreign(cfg, &uid))
        diag_add(d, cfg->gemini.path, 0,
                 "holds the API key and belongs to user %u, who can change "
                 "it at will; serve refuses to start: run chown %u on it",
                 uid, (unsigned)geteuid());
    if (config_key_file_exposed(cfg, &mode) && !cfg->allow_readable_key_file)
        diag_add(d, cfg->gemini.path, 0,
                 "holds the API key and other users can read or write it "
                 "(mode %03o); serve refuses to start: run chmod 600 on it "
                 "(or set allowReadableKeyFile: true in %s)",
                 mode, cfg->path);
    check_rest(site, u, d);
}

/* Where the key comes from, and what the site loaded. */
static void
print_summary(const char *config_path, const struct site *site)
{
    const struct config *cfg = site->cfg;
    const struct config_gemini *g = &cfg->gemini;
    size_t exposed = 0;
    struct stat st;

    if (g->key_source == CONFIG_KEY_ENV_GEMINI ||
        g->key_source == CONFIG_KEY_ENV_GOOGLE)
        printf("note: the API key comes from %s (it overrides apiKey in "
               "%s)\n",
               g->key_source == CONFIG_KEY_ENV_GEMINI ? "GEMINI_API_KEY"
                                                      : "GOOGLE_API_KEY",
               g->path);
    else if (g->key_source == CONFIG_KEY_FILE)
        printf("note: the API key comes from %s\n", g->path);
    if (stat(g->path, &st) == 0 && (st.st_mode & 077) != 0)
        printf("note: %s can be read by other users; run chmod 600 on "
               "it\n",
               g->path);
    for (size_t i = 0; i < site->actions->count; i++)
        exposed += site->actions->actions[i].exposed;
    printf("%s: %zu actions (%zu exposed to the model), model %s\n",
           config_path, site->actions->count, exposed, g->model);
    /* the shared-object plugins that loaded (the others are problems
     * above): what each brought */
    for (size_t i = 0; i < site->actions->nso; i++) {
        const struct so_plugin *p = &site->actions->so[i];
        size_t tools = 0, cmds = 0;
        for (size_t k = 0; k < site->actions->count; k++)
            tools += site->actions->actions[k].so == p;
        for (size_t k = 0; k < site->actions->ncommands; k++)
            cmds += site->actions->commands[k].so == p;
        printf("plugin %s (%s): %zu tools, %zu user commands%s\n", p->name,
               p->path, tools, cmds,
               p->instructions ? ", system instructions" : "");
    }
    print_plugins(site->actions);
    if (site->has_permission)
        printf("plugins.config.permission: default %s, %zu allow "
               "entries, %zu deny entries\n",
               permission_verdict_name(site->permission.fallback),
               json_array_size(site->permission.allow),
               json_array_size(site->permission.deny));
    print_budget(cfg);
    print_outbound(cfg);
}

static int
check(const char *config_path, const struct web_user *u, bool settings)
{
    struct diag d = DIAG_INIT;
    struct site *site = site_load(config_path, &d);
    int rc;

    if (site != NULL)
        check_problems(site, u, &d);
    diag_print(&d, stdout, "");
    diag_print_notes(&d, stdout); /* worth knowing; not problems */
    rc = d.count == 0 && site != NULL ? 0 : 1;
    if (site != NULL)
        print_summary(config_path, site);
    if (site != NULL && settings)
        config_print_settings(site->cfg, stdout);
    printf("%s\n", rc == 0 ? "ok" : "problems found");
    diag_release(&d);
    site_free(site);
    return rc;
}

int
cmd_check(int argc, char **argv)
{
    const char *config = config_default_path(), *web = NULL;
    bool settings = false;
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--config", &config),
        CMDOPT_STR("--web-user", &web),
        CMDOPT_FLAG("--settings", &settings),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {
        .name = "check", .usage = cmd_check_usage, .opts = opts};
    struct web_user u;
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (web != NULL && web_user_find(web, true, &u) != 0)
        return cmdopt_fail(&c, "there is no user '%s' (--web-user)", web);
    /* no --web-user: www-data where it exists, for notes only */
    if (web == NULL && web_user_find("www-data", false, &u) != 0)
        return check(config, NULL, settings);
    return check(config, &u, settings);
}
