/*
 * config.c - load agent.yaml and the Gemini settings file.
 *
 * Keys are described by tables (name, type, range, where to store), so the
 * key list of docs/configuration.md, the defaults and the range checks
 * cannot drift apart in code. Every problem names the file, line and key.
 * Range ceilings come from bounds.h: configuration may lower a bound, never
 * raise it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/config.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "core/ydoc.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- limits: one table row per key ---------------------------------------- */

struct limit_key {
    const char *name;
    size_t offset; /* into struct config: each module's part holds its own */
    long min, max, def;
};

#define LIMIT(n, field, lo, hi, d)                                             \
    {n, offsetof(struct config, field), lo, hi, d}

static const struct limit_key limit_keys[] = {
    LIMIT("maxBodyBytes", limits.max_body_bytes, 64, BOUND_BODY_BYTES,
          DEFAULT_BODY_BYTES),
    LIMIT("maxHistoryTurns", limits.max_history_turns, 2, BOUND_HISTORY_TURNS,
          DEFAULT_HISTORY_TURNS),
    LIMIT("maxTools", limits.max_tools, 0, BOUND_TOOLS, DEFAULT_TOOLS),
    LIMIT("maxPageStateBytes", limits.max_page_state_bytes, 2,
          BOUND_PAGE_STATE_BYTES, DEFAULT_PAGE_STATE_BYTES),
    LIMIT("maxLoopSteps", limits.max_loop_steps, 1, BOUND_LOOP_STEPS,
          DEFAULT_LOOP_STEPS),
    LIMIT("geminiTimeoutMs", gemini.timeout_ms, 1000, BOUND_GEMINI_TIMEOUT_MS,
          DEFAULT_GEMINI_TIMEOUT_MS),
    LIMIT("actionTimeoutMs", actions.timeout_ms, 100, BOUND_ACTION_TIMEOUT_MS,
          DEFAULT_ACTION_TIMEOUT_MS),
    LIMIT("requestTimeoutMs", limits.request_timeout_ms, 1000,
          BOUND_REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS),
    LIMIT("maxRequestsPerWorker", limits.max_requests_per_worker, 0,
          BOUND_REQUESTS_PER_WORKER, 0),
    LIMIT("maxCallsPerTurn", limits.max_calls_per_turn, 1,
          BOUND_CALLS_PER_TURN, DEFAULT_CALLS_PER_TURN),
    LIMIT("streamHeartbeatMs", limits.stream_heartbeat_ms,
          MIN_STREAM_HEARTBEAT_MS,
          BOUND_STREAM_HEARTBEAT_MS, DEFAULT_STREAM_HEARTBEAT_MS),
    LIMIT("maxOutputTokens", limits.max_output_tokens, 1, BOUND_OUTPUT_TOKENS,
          DEFAULT_OUTPUT_TOKENS),
    /* 0: not set, DEFAULT_UPSTREAM_PER_BODY x maxBodyBytes (config_load) */
    LIMIT("maxUpstreamBytes", limits.max_upstream_bytes, MIN_UPSTREAM_BYTES,
          BOUND_REQUEST_UPSTREAM, 0),
};

static long *
limit_slot(struct config *cfg, const struct limit_key *k)
{
    return (long *)(void *)((char *)cfg + k->offset);
}

/* --- small helpers ---------------------------------------------------------- */

static char *
resolve(const char *dir, const char *p)
{
    char *out = NULL;

    if (p[0] == '/')
        return strdup(p);
    if (asprintf(&out, "%s/%s", dir, p) < 0)
        return NULL;
    return out;
}

/* A required non-empty string value; reports and returns NULL otherwise. */
static const char *
want_string(const struct ydoc_node *v, const char *file, const char *key,
            struct diag *d)
{
    const char *s = ydoc_string(v);

    if (s == NULL || s[0] == '\0') {
        diag_add(d, file, v->line, "'%s' must be a non-empty string, not %s",
                 key, s ? "an empty string" : ydoc_type_name(v));
        return NULL;
    }
    return s;
}

static void
unknown_key(struct diag *d, const char *file, const struct ydoc_node *k,
            const char *where, const char *expected)
{
    diag_add(d, file, k->line, "unknown key '%s'%s (expected one of: %s)",
             k->text, where, expected);
}

/* --- agent.yaml ------------------------------------------------------------ */

static void
load_limits(struct config *cfg, const struct ydoc_node *map, const char *file,
            struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, "'limits' must be a mapping, not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        const struct limit_key *lk = NULL;
        long long val;

        for (size_t j = 0; j < ARRAY_SIZE(limit_keys); j++)
            if (strcmp(limit_keys[j].name, k->text) == 0)
                lk = &limit_keys[j];
        if (lk == NULL) {
            unknown_key(d, file, k, " in 'limits'",
                        "maxBodyBytes, maxHistoryTurns, maxTools, "
                        "maxPageStateBytes, maxLoopSteps, geminiTimeoutMs, "
                        "actionTimeoutMs, requestTimeoutMs, maxRequestsPerWorker, "
                        "maxCallsPerTurn, streamHeartbeatMs, maxOutputTokens, "
                        "maxUpstreamBytes");
            continue;
        }
        if (!ydoc_int(v, &val)) {
            diag_add(d, file, v->line, "'limits.%s' must be an integer, not %s",
                     lk->name, ydoc_type_name(v));
            continue;
        }
        if (val < lk->min || val > lk->max) {
            diag_add(d, file, v->line,
                     "'limits.%s' is %lld; it must be between %ld and %ld",
                     lk->name, val, lk->min, lk->max);
            continue;
        }
        *limit_slot(cfg, lk) = (long)val;
    }
}

static void
load_action_dirs(struct config *cfg, const struct ydoc_node *v,
                 const char *file, struct diag *d)
{
    size_t n = v->kind == YDOC_SEQ ? v->count : 1;

    if (v->kind == YDOC_MAP) {
        diag_add(d, file, v->line,
                 "'actions' must be a folder or a list of folders");
        return;
    }
    cfg->actions.dirs = calloc(n ? n : 1, sizeof(char *));
    if (cfg->actions.dirs == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct ydoc_node *e = v->kind == YDOC_SEQ ? v->values[i] : v;
        const char *s = want_string(e, file, "actions", d);
        if (s != NULL && (cfg->actions.dirs[cfg->actions.ndirs] =
                              resolve(cfg->dir, s)) != NULL)
            cfg->actions.ndirs++;
    }
}

static void set_string(char **slot, const char *s);
static void config_free_strings(char **list);

/* --- plugins: shared objects (the registry loads them) -------------------- */

/* A list of plugin names (plugins.expose, plugins.enrichmentOnly) into
 * *list, NULL-terminated. */
static void
load_plugin_names(char ***list, const struct ydoc_node *v, const char *file,
                  const char *key, struct diag *d)
{
    if (v->kind != YDOC_SEQ) {
        diag_add(d, file, v->line, "'%s' must be a list of plugin names%s",
                 key, strcmp(key, "plugins.expose") == 0 ? " or all" : "");
        return;
    }
    config_free_strings(*list);
    *list = calloc(v->count + 1, sizeof(char *));
    if (*list == NULL)
        return;
    for (size_t i = 0, n = 0; i < v->count; i++) {
        const char *name = want_string(v->values[i], file, key, d);
        if (name != NULL && ((*list)[n] = strdup(name)) != NULL)
            n++;
    }
}

static void
load_plugin_expose(struct config *cfg, const struct ydoc_node *v,
                   const char *file, struct diag *d)
{
    const char *s = ydoc_string(v);

    cfg->plugins.expose_line = v->line;
    if (s != NULL && strcmp(s, "all") == 0) {
        cfg->plugins.expose_all = true;
        return;
    }
    cfg->plugins.expose_all = false;
    load_plugin_names(&cfg->plugins.expose, v, file, "plugins.expose", d);
}

static void
load_plugins(struct config *cfg, const struct ydoc_node *map, const char *file,
             struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line,
                 "'plugins' must be a mapping (dirs, expose, config), not %s",
                 ydoc_type_name(map));
        return;
    }
    bool dirs_given = false;

    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        if (strcmp(k->text, "dirs") == 0) {
            size_t n = v->kind == YDOC_SEQ ? v->count : 1;
            dirs_given = true;
            if (v->kind == YDOC_MAP) {
                diag_add(d, file, v->line,
                         "'plugins.dirs' must be a folder or a list of "
                         "folders");
                continue;
            }
            for (size_t j = 0; j < cfg->plugins.ndirs; j++)
                free(cfg->plugins.dirs[j]);
            free(cfg->plugins.dirs);
            cfg->plugins.ndirs = 0;
            cfg->plugins.dirs = calloc(n ? n : 1, sizeof(char *));
            if (cfg->plugins.dirs == NULL)
                continue;
            for (size_t j = 0; j < n; j++) {
                const struct ydoc_node *e = v->kind == YDOC_SEQ ? v->values[j]
                                                                : v;
                const char *s = want_string(e, file, "plugins.dirs", d);
                if (s != NULL && (cfg->plugins.dirs[cfg->plugins.ndirs] =
                                      resolve(cfg->dir, s)) != NULL)
                    cfg->plugins.ndirs++;
            }
        } else if (strcmp(k->text, "expose") == 0) {
            load_plugin_expose(cfg, v, file, d);
        } else if (strcmp(k->text, "config") == 0) {
            json_t *c = ydoc_to_json(v, file, d);
            if (c != NULL && !json_is_object(c)) {
                diag_add(d, file, v->line,
                         "'plugins.config' must be a mapping of plugin names "
                         "to their configuration");
                json_decref(c);
                continue;
            }
            json_decref(cfg->plugins.config);
            cfg->plugins.config = c;
            cfg->plugins.permission_line = 0;
            json_decref(cfg->plugins.config_lines);
            cfg->plugins.config_lines = json_object();
            for (size_t j = 0; c != NULL && j < v->count; j++) {
                if (strcmp(v->keys[j]->text, "permission") == 0)
                    cfg->plugins.permission_line = v->values[j]->line;
                if (cfg->plugins.config_lines != NULL)
                    json_object_set_new(cfg->plugins.config_lines,
                                        v->keys[j]->text,
                                        json_integer(v->values[j]->line));
            }
        } else if (strcmp(k->text, "enrichmentOnly") == 0) {
            load_plugin_names(&cfg->plugins.enrichment_only, v, file,
                              "plugins.enrichmentOnly", d);
        } else {
            unknown_key(d, file, k, " in 'plugins'",
                        "dirs, expose, enrichmentOnly, config");
        }
    }
    /* No dirs: the system plugin folder, where packages install plugins
     * (the seed's entry points); it need not exist. */
    if (!dirs_given && cfg->plugins.ndirs == 0 &&
        (cfg->plugins.dirs = calloc(1, sizeof(char *))) != NULL &&
        (cfg->plugins.dirs[0] = strdup(CONFIG_SYSTEM_PLUGIN_DIR)) != NULL) {
        cfg->plugins.ndirs = 1;
        cfg->plugins.dirs_default = true;
    }
}

/* --- the run API: store and policy ---------------------------------------- */

/* "sqlite:PATH", PATH relative to the config's folder. */
static void
load_store_spec(struct config *cfg, const char *s, const char *file, int line,
                struct diag *d)
{
    char *path;

    if (strncmp(s, "sqlite:", 7) != 0 || s[7] == '\0') {
        diag_add(d, file, line,
                 "'store' must be sqlite:PATH (the only backend so far), "
                 "not '%s'",
                 s);
        return;
    }
    path = resolve(cfg->dir, s + 7);
    free(cfg->run.store);
    cfg->run.store = NULL;
    if (path != NULL && asprintf(&cfg->run.store, "sqlite:%s", path) < 0)
        cfg->run.store = NULL;
    free(path);
}

static void
load_context_types(struct config *cfg, const struct ydoc_node *v,
                   const char *file, struct diag *d)
{
    char **types;

    if (v->kind != YDOC_SEQ || v->count > BOUND_CONTEXT_TYPES) {
        diag_add(d, file, v->line,
                 "'policy.contextTypes' must be a list of at most %d names",
                 BOUND_CONTEXT_TYPES);
        return;
    }
    types = calloc(v->count + 1, sizeof(*types));
    if (types == NULL)
        return;
    for (size_t i = 0; i < v->count; i++) {
        const char *t = ydoc_string(v->values[i]);
        if (t == NULL || t[0] == '\0' || strlen(t) > BOUND_CONTEXT_TYPE_LEN) {
            diag_add(d, file, v->values[i]->line,
                     "'policy.contextTypes' entries must be names of at most "
                     "%d characters",
                     BOUND_CONTEXT_TYPE_LEN);
            continue;
        }
        types[i] = strdup(t);
    }
    config_free_strings(cfg->run.context_types);
    cfg->run.context_types = types;
}

/* policy.allow: [{action, arg?, pattern?}] */
static void
load_allow(struct config *cfg, const struct ydoc_node *v, const char *file,
           struct diag *d)
{
    json_t *rules = ydoc_to_json(v, file, d);
    json_t *r;
    size_t i;

    if (rules == NULL)
        return;
    if (!json_is_array(rules)) {
        diag_add(d, file, v->line, "'policy.allow' must be a list of rules");
        json_decref(rules);
        return;
    }
    json_array_foreach(rules, i, r) {
        if (!json_is_string(json_object_get(r, "action")) ||
            (json_object_get(r, "arg") != NULL &&
             (!json_is_string(json_object_get(r, "arg")) ||
              !json_is_string(json_object_get(r, "pattern"))))) {
            diag_add(d, file, v->line,
                     "'policy.allow' rule %zu must be {action, arg?, "
                     "pattern?} with strings (pattern with arg)",
                     i + 1);
        }
    }
    json_decref(cfg->run.allow);
    cfg->run.allow = rules;
}

/* policy.actions: {<plugin>.<name>: {approval: never}}; whether the names
 * are actions is the site's to check (it has loaded them). */
static void
load_policy_actions(struct config *cfg, const struct ydoc_node *map,
                    const char *file, struct diag *d)
{
    size_t n = 0;

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line,
                 "'policy.actions' must be a mapping of action names to "
                 "{approval: never}");
        return;
    }
    config_free_strings(cfg->run.approval_never);
    cfg->run.approval_never = calloc(map->count + 1, sizeof(char *));
    if (cfg->run.approval_never == NULL) {
        diag_add(d, file, map->line, "out of memory");
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *v = map->values[i];
        const struct ydoc_node *ap = v->kind == YDOC_MAP
                                         ? ydoc_get(v, "approval")
                                         : NULL;
        const char *s = ydoc_string(ap);

        if (ap == NULL || v->count != 1 || s == NULL ||
            (strcmp(s, "never") != 0 && strcmp(s, "visitor") != 0)) {
            diag_add(d, file, v->line,
                     "'policy.actions.%s' must be {approval: never} or "
                     "{approval: visitor}",
                     map->keys[i]->text);
            continue;
        }
        if (strcmp(s, "never") == 0 &&
            (cfg->run.approval_never[n++] = strdup(map->keys[i]->text)) ==
                NULL)
            diag_add(d, file, v->line, "out of memory");
    }
}

static void
load_policy(struct config *cfg, const struct ydoc_node *map, const char *file,
            struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, "'policy' must be a mapping, not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        long long ms;
        const char *s;

        if (strcmp(k->text, "sideEffects") == 0) {
            if (!ydoc_bool(v, &cfg->run.side_effects))
                diag_add(d, file, v->line,
                         "'policy.sideEffects' must be true or false");
        } else if (strcmp(k->text, "approvalTtlMs") == 0) {
            if (!ydoc_int(v, &ms) || ms < 1000 || ms > BOUND_APPROVAL_TTL_MS)
                diag_add(d, file, v->line,
                         "'policy.approvalTtlMs' must be an integer from "
                         "1000 to %ld",
                         (long)BOUND_APPROVAL_TTL_MS);
            else
                cfg->run.approval_ttl_ms = (long)ms;
        } else if (strcmp(k->text, "ticketTtlMs") == 0) {
            if (!ydoc_int(v, &ms) || ms < 1000 || ms > BOUND_APPROVAL_TTL_MS)
                diag_add(d, file, v->line,
                         "'policy.ticketTtlMs' must be an integer from "
                         "1000 to %ld",
                         (long)BOUND_APPROVAL_TTL_MS);
            else
                cfg->run.ticket_ttl_ms = (long)ms;
        } else if (strcmp(k->text, "allow") == 0) {
            load_allow(cfg, v, file, d);
        } else if (strcmp(k->text, "persona") == 0) {
            if ((s = want_string(v, file, "policy.persona", d)) != NULL)
                set_string(&cfg->run.persona, s);
        } else if (strcmp(k->text, "contextTypes") == 0) {
            load_context_types(cfg, v, file, d);
        } else if (strcmp(k->text, "actions") == 0) {
            load_policy_actions(cfg, v, file, d);
        } else {
            unknown_key(d, file, k, " in 'policy'",
                        "sideEffects, approvalTtlMs, ticketTtlMs, allow, "
                        "persona, contextTypes, actions");
        }
    }
}

/* A cookie name is an RFC 6265 token: visible ASCII but separators. */
static bool
cookie_name_valid(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > BOUND_COOKIE_NAME)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7F ||
            strchr("()<>@,;:\\\"/[]?={}", s[i]) != NULL)
            return false;
    return true;
}

/*
 * Variables the web server fills from the request itself (RFC 3875 §4.1,
 * Debian's fastcgi_params, Apache's CGI variables): a client chooses
 * their values, so none can carry a signed-in user. HTTP_* (the client's
 * headers) and REDIRECT_* (Apache's copies of any of them after an
 * internal redirect) are refused by prefix.
 */
static const char *const request_vars[] = {
    "AUTH_TYPE", "CONTENT_LENGTH", "CONTENT_TYPE", "CONTEXT_DOCUMENT_ROOT",
    "CONTEXT_PREFIX", "DOCUMENT_ROOT", "DOCUMENT_URI", "GATEWAY_INTERFACE",
    "HTTPS", "PATH_INFO", "PATH_TRANSLATED", "QUERY_STRING", "REMOTE_ADDR",
    "REMOTE_HOST", "REMOTE_IDENT", "REMOTE_PORT", "REQUEST_METHOD",
    "REQUEST_SCHEME", "REQUEST_URI", "SCRIPT_FILENAME", "SCRIPT_NAME",
    "SCRIPT_URI", "SCRIPT_URL", "SERVER_ADDR", "SERVER_NAME", "SERVER_PORT",
    "SERVER_PROTOCOL", "SERVER_SOFTWARE",
};

static const char remote_user_forms[] =
    "write auth: {remoteUser: {variable: GA_REMOTE_USER, server: nginx}} "
    "with the fastcgi_param GA_REMOTE_USER line of nginx/gemini-agent.conf, "
    "or {variable: REMOTE_USER, server: apache} (docs/http-api.md, \"Identity\")";

/* A CGI variable name as web servers spell them: [A-Z_][A-Z0-9_]*. */
static bool
env_name_valid(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > BOUND_ENV_NAME || (s[0] >= '0' && s[0] <= '9'))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

/* Why the variable `var` cannot name the user behind `server`, or NULL
 * when it can. */
static const char *
remote_user_refusal(const char *var, enum config_web_server server)
{
    if (!env_name_valid(var))
        return "is not a variable name (A-Z, 0-9 and _)";
    if (strncmp(var, "HTTP_", 5) == 0 || strncmp(var, "REDIRECT_", 9) == 0)
        return "is set from the client's own headers: any client can name "
               "any user with it";
    for (size_t i = 0; i < ARRAY_SIZE(request_vars); i++)
        if (strcmp(var, request_vars[i]) == 0)
            return "is filled from the request, which the client chooses";
    if (server == CONFIG_SERVER_NGINX && strcmp(var, "REMOTE_USER") == 0)
        return "is what nginx's fastcgi_params fills from ANY client's "
               "'Authorization: Basic' header (checked only where "
               "auth_basic is on): set another variable from the sign-in, "
               "e.g. fastcgi_param GA_REMOTE_USER $remote_user";
    if (server == CONFIG_SERVER_APACHE && strcmp(var, "REMOTE_USER") != 0)
        return "is not one Apache's auth modules set: use REMOTE_USER";
    return NULL;
}

/* auth.remoteUser: {variable: NAME, server: nginx | apache}. */
static void
load_remote_user(struct config_auth *a, const struct ydoc_node *map,
                 const char *file, struct diag *d)
{
    const char *var = NULL, *server = NULL, *why;
    enum config_web_server ws = CONFIG_SERVER_NONE;
    int line = map->line;

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, line,
                 "'auth.remoteUser' must be a mapping {variable, server}, "
                 "not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        if (strcmp(k->text, "variable") == 0)
            var = want_string(v, file, "auth.remoteUser.variable", d);
        else if (strcmp(k->text, "server") == 0)
            server = want_string(v, file, "auth.remoteUser.server", d);
        else
            unknown_key(d, file, k, " in 'auth.remoteUser'",
                        "variable, server");
    }
    if (server != NULL && strcmp(server, "nginx") == 0)
        ws = CONFIG_SERVER_NGINX;
    else if (server != NULL && strcmp(server, "apache") == 0)
        ws = CONFIG_SERVER_APACHE;
    if (var == NULL || server == NULL || ws == CONFIG_SERVER_NONE) {
        bool other = server != NULL && ws == CONFIG_SERVER_NONE;
        diag_add(d, file, line,
                 "'auth.remoteUser' needs the variable the web server sets "
                 "from its own sign-in and the server, nginx or apache%s%s"
                 "%s: %s",
                 other ? " (not '" : "", other ? server : "",
                 other ? "')" : "", remote_user_forms);
        return;
    }
    if ((why = remote_user_refusal(var, ws)) != NULL) {
        diag_add(d, file, line,
                 "'auth.remoteUser': %s behind %s %s; %s", var,
                 server, why, remote_user_forms);
        return;
    }
    set_string(&a->remote_user_var, var);
    a->remote_user_server = ws;
}

/* auth.trustRemoteUser, the old form: true trusted REMOTE_USER behind any
 * server, which behind nginx is any client's word. false still means what
 * it said. */
static void
load_trust_remote_user(const struct ydoc_node *v, const char *file,
                       struct diag *d)
{
    bool on = false;

    if (!ydoc_bool(v, &on))
        diag_add(d, file, v->line,
                 "'auth.trustRemoteUser' must be true or false, not %s",
                 ydoc_type_name(v));
    else if (on)
        diag_add(d, file, v->line,
                 "'auth.trustRemoteUser: true' is refused: behind nginx, "
                 "REMOTE_USER is the name in any client's 'Authorization: "
                 "Basic' header, so anyone could sign in as anyone; name "
                 "the variable your web server sets from its own sign-in "
                 "instead: %s",
                 remote_user_forms);
}

static void
load_auth(struct config *cfg, const struct ydoc_node *map, const char *file,
          struct diag *d)
{
    struct config_auth *a = &cfg->auth;
    const char *s;

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, "'auth' must be a mapping, not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        if (strcmp(k->text, "remoteUser") == 0) {
            load_remote_user(a, v, file, d);
        } else if (strcmp(k->text, "trustRemoteUser") == 0) {
            load_trust_remote_user(v, file, d);
        } else if (strcmp(k->text, "secretFile") == 0) {
            if ((s = want_string(v, file, "auth.secretFile", d)) != NULL) {
                free(a->secret_file);
                a->secret_file = resolve(cfg->dir, s);
            }
        } else if (strcmp(k->text, "sessionCookie") == 0) {
            if ((s = want_string(v, file, "auth.sessionCookie", d)) == NULL)
                continue;
            if (!cookie_name_valid(s))
                diag_add(d, file, v->line,
                         "'auth.sessionCookie' must be a cookie name: 1 to %d "
                         "letters, digits or !#$%%&'*+-.^_`|~",
                         BOUND_COOKIE_NAME);
            else
                set_string(&a->session_cookie, s);
        } else {
            unknown_key(d, file, k, " in 'auth'",
                        "remoteUser, secretFile, sessionCookie");
        }
    }
}

/* history: {verify: strict | off, allowParts: [inlineData, fileData,
 * executableCode, codeExecutionResult, thought]} -> the bits of
 * agent/history.h (which core cannot include: the values are repeated
 * there and checked by the chat's unit test) */
static void
load_allow_parts(struct config *cfg, const struct ydoc_node *list,
                 const char *file, struct diag *d)
{
    static const struct {
        const char *name;
        unsigned bit;
    } parts[] = {{"inlineData", 1u << 0},
                 {"fileData", 1u << 1},
                 {"executableCode", 1u << 2},
                 {"codeExecutionResult", 1u << 2},
                 {"thought", 1u << 3}};

    if (list->kind != YDOC_SEQ) {
        diag_add(d, file, list->line,
                 "'history.allowParts' must be a list of part names");
        return;
    }
    for (size_t i = 0; i < list->count; i++) {
        const char *name = ydoc_string(list->values[i]);
        size_t k = 0;
        while (k < ARRAY_SIZE(parts) &&
               (name == NULL || strcmp(name, parts[k].name) != 0))
            k++;
        if (k == ARRAY_SIZE(parts))
            diag_add(d, file, list->values[i]->line,
                     "'history.allowParts' names inlineData, fileData, "
                     "executableCode, codeExecutionResult or thought");
        else
            cfg->history.allow_parts |= parts[k].bit;
    }
}

static void
load_history(struct config *cfg, const struct ydoc_node *map, const char *file,
             struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line,
                 "'history' must be {verify, allowParts}, not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        const char *s;

        if (strcmp(k->text, "allowParts") == 0) {
            load_allow_parts(cfg, v, file, d);
        } else if (strcmp(k->text, "verify") == 0) {
            s = ydoc_string(v);
            if (s != NULL && strcmp(s, "strict") == 0)
                cfg->history.verify = true;
            else if (s != NULL && strcmp(s, "off") == 0)
                cfg->history.verify = false;
            else
                diag_add(d, file, v->line,
                         "'history.verify' must be strict or off");
        } else {
            unknown_key(d, file, k, " in 'history'", "verify, allowParts");
        }
    }
}

/*
 * A list of addresses or networks (budget.trustForwardedFor,
 * http.status.allow, outbound.allow) into a new array in *list (NULL when empty or on a
 * problem, which is reported). `what` names the key in messages.
 */
static void
load_addresses(const struct ydoc_node *v, const char *file, const char *what,
               struct netaddr **list, size_t *n, struct diag *d)
{
    struct netaddr *out;

    free(*list);
    *list = NULL;
    *n = 0;
    if (v->kind != YDOC_SEQ || v->count > BOUND_ADDRESS_LIST) {
        diag_add(d, file, v->line,
                 "'%s' must be a list of at most %d addresses", what,
                 BOUND_ADDRESS_LIST);
        return;
    }
    if (v->count == 0)
        return;
    out = calloc(v->count, sizeof(*out));
    if (out == NULL)
        return;
    for (size_t i = 0; i < v->count; i++) {
        const char *s = ydoc_string(v->values[i]);
        if (s == NULL || !netaddr_parse(s, strlen(s), &out[*n])) {
            diag_add(d, file, v->values[i]->line,
                     "'%s' entries are IP addresses or networks "
                     "(127.0.0.1, ::1, 10.0.0.0/8), not %s%s%s",
                     what, s ? "'" : "", s ? s : ydoc_type_name(v->values[i]),
                     s ? "'" : "");
            continue;
        }
        (*n)++;
    }
    *list = out;
}

/*
 * Why `o` is not an origin as a browser sends it in Origin (RFC 6454
 * §6.2: "scheme://host[:port]", lower case, the default port left out),
 * or NULL when it is one. Only such text is ever echoed in a header.
 */
static const char *
cors_origin_problem(const char *o)
{
    const char *host, *end, *port;
    size_t slen;

    if (strcmp(o, "*") == 0)
        return "'*' would let every site's pages in: list the origins";
    if (strncmp(o, "https://", 8) == 0)
        slen = 5;
    else if (strncmp(o, "http://", 7) == 0)
        slen = 4;
    else
        return "an origin starts with https:// or http://";
    if (strlen(o) > BOUND_CORS_ORIGIN_BYTES)
        return "too long for an origin";
    host = o + slen + 3;
    if (host[0] == '[') { /* an IPv6 literal */
        end = host + 1 + strspn(host + 1, "0123456789abcdef:.");
        if (*end != ']' || end == host + 1)
            return "a bracketed IPv6 address is lower-case hex and ':'";
        end++;
    } else {
        end = host + strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-");
        if (end == host)
            return "an origin names a host (lower case)";
    }
    if (*end == '\0')
        return NULL;
    if (*end != ':')
        return "an origin is scheme://host[:port]: no path, no '/' at the "
               "end, no user, no upper case";
    port = end + 1;
    if (port[0] == '\0' || port[0] == '0' ||
        port[strspn(port, "0123456789")] != '\0' || strlen(port) > 5 ||
        atol(port) > 65535)
        return "the port is a number from 1 to 65535";
    if ((slen == 5 && strcmp(port, "443") == 0) ||
        (slen == 4 && strcmp(port, "80") == 0))
        return "browsers leave the default port out of Origin: drop it";
    return NULL;
}

/* http.cors: {allowOrigins: [origins]} into cfg->cors (off when empty) */
static void
load_cors(struct config *cfg, const struct ydoc_node *v, const char *file,
          struct diag *d)
{
    const struct ydoc_node *list =
        v->kind == YDOC_MAP ? ydoc_get(v, "allowOrigins") : NULL;
    char **out;

    config_free_strings(cfg->cors.origins);
    cfg->cors.origins = NULL;
    cfg->cors.norigins = 0;
    if (list == NULL || v->count != 1 || list->kind != YDOC_SEQ ||
        list->count > BOUND_CORS_ORIGINS) {
        diag_add(d, file, v->line,
                 "'http.cors' must be {allowOrigins: [at most %d origins "
                 "like https://www.example.org]}",
                 BOUND_CORS_ORIGINS);
        return;
    }
    if (list->count == 0)
        return;
    out = calloc(list->count + 1, sizeof(*out));
    if (out == NULL)
        return;
    for (size_t i = 0; i < list->count; i++) {
        const struct ydoc_node *e = list->values[i];
        const char *s = ydoc_string(e);
        const char *why = s ? cors_origin_problem(s) : "not a string";
        if (why != NULL) {
            diag_add(d, file, e->line,
                     "'http.cors.allowOrigins' entry %s%s%s: %s",
                     s ? "'" : "", s ? s : ydoc_type_name(e), s ? "'" : "",
                     why);
            continue;
        }
        if ((out[cfg->cors.norigins] = strdup(s)) == NULL)
            break;
        cfg->cors.norigins++;
    }
    cfg->cors.origins = out;
}

/* http: {directActions: readOnly | authenticated, status: {allow: [...]}} */
static void
load_http(struct config *cfg, const struct ydoc_node *map, const char *file,
          struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line,
                 "'http' must be {directActions: readOnly | authenticated, "
                 "status: {allow: [addresses]}, cors: {allowOrigins: "
                 "[origins]}}");
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        const char *s = ydoc_string(v);
        if (strcmp(k->text, "directActions") == 0) {
            if (s != NULL && strcmp(s, "readOnly") == 0)
                cfg->direct_actions = CONFIG_DIRECT_READ_ONLY;
            else if (s != NULL && strcmp(s, "authenticated") == 0)
                cfg->direct_actions = CONFIG_DIRECT_AUTHENTICATED;
            else
                diag_add(d, file, v->line,
                         "'http.directActions' is readOnly or authenticated, "
                         "not %s%s%s",
                         s ? "'" : "", s ? s : ydoc_type_name(v), s ? "'" : "");
        } else if (strcmp(k->text, "status") == 0) {
            const struct ydoc_node *allow =
                v->kind == YDOC_MAP ? ydoc_get(v, "allow") : NULL;
            if (allow == NULL || v->count != 1) {
                diag_add(d, file, v->line,
                         "'http.status' must be {allow: [addresses]}");
                continue;
            }
            load_addresses(allow, file, "http.status.allow",
                           &cfg->status.allow, &cfg->status.nallow, d);
            cfg->status.on = cfg->status.nallow > 0;
        } else if (strcmp(k->text, "cors") == 0) {
            load_cors(cfg, v, file, d);
        } else {
            unknown_key(d, file, k, " in 'http'",
                        "directActions, status, cors");
        }
    }
}

/* outbound: {allow: [addresses]} - the non-public addresses the built-in
 * plugins may fetch from (plugins/outbound.h) */
static void
load_outbound(struct config *cfg, const struct ydoc_node *v, const char *file,
              struct diag *d)
{
    const struct ydoc_node *allow =
        v->kind == YDOC_MAP ? ydoc_get(v, "allow") : NULL;

    if (allow == NULL || v->count != 1) {
        diag_add(d, file, v->line,
                 "'outbound' must be {allow: [addresses or networks]}");
        return;
    }
    load_addresses(allow, file, "outbound.allow", &cfg->outbound.allow,
                   &cfg->outbound.nallow, d);
}

/* log: {format: text | json, file: PATH} */
static void
load_log(struct config *cfg, const struct ydoc_node *map, const char *file,
         struct diag *d)
{
    static const char shape[] = "'log' must be {format: text | json, file: "
                                "PATH}";

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, shape);
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        const char *s = ydoc_string(v);

        if (strcmp(k->text, "format") == 0) {
            if (s != NULL && strcmp(s, "text") == 0)
                cfg->log.format = LOG_FMT_TEXT;
            else if (s != NULL && strcmp(s, "json") == 0)
                cfg->log.format = LOG_FMT_JSON;
            else
                diag_add(d, file, v->line,
                         "'log.format' must be text or json");
        } else if (strcmp(k->text, "file") == 0) {
            if ((s = want_string(v, file, "log.file", d)) != NULL) {
                free(cfg->log.file);
                cfg->log.file = resolve(cfg->dir, s);
            }
        } else {
            unknown_key(d, file, k, " in 'log'", "format, file");
        }
    }
}

/* --- budget: what a client may spend --------------------------------------- */

/* budget.perIp / perUser / site: {requestsPerMinute, tokensPerDay} */
static void
load_ceiling(struct config_ceiling *c, const char *name,
             const struct ydoc_node *map, const char *file, struct diag *d)
{
    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line,
                 "'budget.%s' must be {requestsPerMinute, tokensPerDay}, not "
                 "%s",
                 name, ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        bool rpm = strcmp(k->text, "requestsPerMinute") == 0;
        long max = rpm ? BOUND_BUDGET_REQUESTS_PER_MINUTE
                       : BOUND_BUDGET_TOKENS_PER_DAY;
        long long val;

        if (!rpm && strcmp(k->text, "tokensPerDay") != 0) {
            char where[32];
            snprintf(where, sizeof(where), " in 'budget.%s'", name);
            unknown_key(d, file, k, where, "requestsPerMinute, tokensPerDay");
            continue;
        }
        if (!ydoc_int(v, &val) || val < 1 || val > max) {
            diag_add(d, file, v->line,
                     "'budget.%s.%s' must be an integer from 1 to %ld "
                     "(leave it out for no limit)",
                     name, k->text, max);
            continue;
        }
        if (rpm)
            c->requests_per_minute = (long)val;
        else
            c->tokens_per_day = (long)val;
    }
}

static void
load_budget(struct config *cfg, const struct ydoc_node *map, const char *file,
            struct diag *d)
{
    struct config_budget *b = &cfg->budget;

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, "'budget' must be a mapping, not %s",
                 ydoc_type_name(map));
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        if (strcmp(k->text, "perIp") == 0)
            load_ceiling(&b->per_ip, "perIp", v, file, d);
        else if (strcmp(k->text, "perUser") == 0)
            load_ceiling(&b->per_user, "perUser", v, file, d);
        else if (strcmp(k->text, "site") == 0)
            load_ceiling(&b->site, "site", v, file, d);
        else if (strcmp(k->text, "trustForwardedFor") == 0)
            load_addresses(v, file, "budget.trustForwardedFor", &b->trusted,
                           &b->ntrusted, d);
        else
            unknown_key(d, file, k, " in 'budget'",
                        "perIp, perUser, site, trustForwardedFor");
    }
    b->on = b->per_ip.requests_per_minute || b->per_ip.tokens_per_day ||
            b->per_user.requests_per_minute || b->per_user.tokens_per_day ||
            b->site.requests_per_minute || b->site.tokens_per_day;
}

/* Returns 0, or -1 when agent.yaml is unusable (problems reported). */
static int
load_agent_yaml(struct config *cfg, struct diag *d)
{
    struct arena arena;
    const struct ydoc_node *root;
    const char *file = cfg->path, *s;
    size_t before = d->count;

    arena_init(&arena);
    root = ydoc_load_file(file, &arena, d);
    if (root == NULL)
        goto out;
    if (ydoc_is_null(root))
        goto out; /* an empty file means all defaults */
    if (root->kind != YDOC_MAP) {
        diag_add(d, file, root->line, "the file must be a mapping of keys");
        goto out;
    }
    for (size_t i = 0; i < root->count; i++) {
        const struct ydoc_node *k = root->keys[i], *v = root->values[i];
        if (strcmp(k->text, "gemini") == 0) {
            if ((s = want_string(v, file, "gemini", d)) != NULL) {
                free(cfg->gemini.path);
                cfg->gemini.path = resolve(cfg->dir, s);
            }
        } else if (strcmp(k->text, "actions") == 0) {
            load_action_dirs(cfg, v, file, d);
        } else if (strcmp(k->text, "dataDir") == 0) {
            if ((s = want_string(v, file, "dataDir", d)) != NULL) {
                free(cfg->actions.data_dir);
                cfg->actions.data_dir = resolve(cfg->dir, s);
            }
        } else if (strcmp(k->text, "limits") == 0) {
            load_limits(cfg, v, file, d);
        } else if (strcmp(k->text, "store") == 0) {
            if ((s = want_string(v, file, "store", d)) != NULL)
                load_store_spec(cfg, s, file, v->line, d);
        } else if (strcmp(k->text, "policy") == 0) {
            load_policy(cfg, v, file, d);
        } else if (strcmp(k->text, "auth") == 0) {
            load_auth(cfg, v, file, d);
        } else if (strcmp(k->text, "history") == 0) {
            load_history(cfg, v, file, d);
        } else if (strcmp(k->text, "http") == 0) {
            load_http(cfg, v, file, d);
        } else if (strcmp(k->text, "outbound") == 0) {
            load_outbound(cfg, v, file, d);
        } else if (strcmp(k->text, "budget") == 0) {
            load_budget(cfg, v, file, d);
        } else if (strcmp(k->text, "plugins") == 0) {
            load_plugins(cfg, v, file, d);
        } else if (strcmp(k->text, "log") == 0) {
            load_log(cfg, v, file, d);
        } else if (strcmp(k->text, "allowReadableKeyFile") == 0) {
            if (!ydoc_bool(v, &cfg->allow_readable_key_file))
                diag_add(d, file, v->line,
                         "'allowReadableKeyFile' must be true or false, not "
                         "%s",
                         ydoc_type_name(v));
        } else {
            unknown_key(d, file, k, "",
                        "gemini, actions, dataDir, limits, store, policy, "
                        "auth, history, http, outbound, budget, plugins, "
                        "log, allowReadableKeyFile");
        }
    }
out:
    arena_release(&arena);
    return d->count == before ? 0 : -1;
}

/* --- .gemini.yaml ---------------------------------------------------------- */

/* Gemini is reached over https (http only for a local test server). */
static bool
is_http_url(const char *s)
{
    return strncmp(s, "https://", 8) == 0 || strncmp(s, "http://", 7) == 0;
}

/* A key that is missing, empty or still the template's `<...>` text. */
static bool
key_is_placeholder(const char *k)
{
    return k == NULL || k[0] == '\0' || k[0] == '<';
}

static void
set_string(char **slot, const char *s)
{
    char *copy = strdup(s);
    if (copy != NULL) {
        free(*slot);
        *slot = copy;
    }
}

/* .gemini.yaml `compaction:` (struct config_compaction). */
static void
load_compaction(struct config_compaction *c, const struct ydoc_node *map,
                const char *file, struct diag *d)
{
    static const struct {
        const char *key;
        size_t off;
        long min, max;
    } limits[] = {
        {"contextWindow", offsetof(struct config_compaction, window), 0,
         BOUND_CONTEXT_WINDOW},
        {"atPercent", offsetof(struct config_compaction, at_percent), 10, 100},
        {"keepTurns", offsetof(struct config_compaction, keep_turns), 0,
         BOUND_COMPACT_KEEP_TURNS},
    };

    if (map->kind != YDOC_MAP) {
        diag_add(d, file, map->line, "'compaction' must be a mapping");
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        long long val;
        size_t l;

        if (strcmp(k->text, "enabled") == 0) {
            if (!ydoc_bool(v, &c->enabled))
                diag_add(d, file, v->line,
                         "'compaction.enabled' must be true or false");
            continue;
        }
        for (l = 0; l < ARRAY_SIZE(limits); l++)
            if (strcmp(k->text, limits[l].key) == 0)
                break;
        if (l == ARRAY_SIZE(limits)) {
            diag_add(d, file, k->line,
                     "unknown key in 'compaction' (expected one of: "
                     "enabled, contextWindow, atPercent, keepTurns)");
        } else if (!ydoc_int(v, &val) || val < limits[l].min ||
                   val > limits[l].max) {
            diag_add(d, file, v->line,
                     "'compaction.%s' must be an integer from %ld to %ld",
                     limits[l].key, limits[l].min, limits[l].max);
        } else {
            *(long *)(void *)((char *)c + limits[l].off) = (long)val;
        }
    }
}

/*
 * Problems here are never fatal: actions still serve without Gemini. The
 * key's value never appears in a message, only where it came from.
 */
static void
load_gemini_yaml(struct config *cfg, struct diag *d)
{
    struct config_gemini *g = &cfg->gemini;
    const char *file = g->path, *env;
    struct arena arena;
    const struct ydoc_node *root = NULL;
    char *file_key = NULL;
    int key_line = 0; /* where apiKey is, for problems about it */
    bool file_exists;

    arena_init(&arena);
    file_exists = access(file, F_OK) == 0;
    if (file_exists)
        root = ydoc_load_file(file, &arena, d);
    if (root != NULL && !ydoc_is_null(root) && root->kind != YDOC_MAP) {
        diag_add(d, file, root->line, "the file must be a mapping of keys");
        root = NULL;
    }
    for (size_t i = 0; root != NULL && i < root->count; i++) {
        const struct ydoc_node *k = root->keys[i], *v = root->values[i];
        const char *s = ydoc_string(v);
        if (strcmp(k->text, "apiKey") == 0) {
            key_line = v->line;
            if (s == NULL && !ydoc_is_null(v))
                diag_add(d, file, v->line, "'apiKey' must be a string");
            else if (s != NULL)
                file_key = strdup(s);
        } else if (strcmp(k->text, "model") == 0) {
            if (want_string(v, file, "model", d) != NULL)
                set_string(&g->model, s);
        } else if (strcmp(k->text, "systemPrompt") == 0) {
            if (s == NULL && !ydoc_is_null(v))
                diag_add(d, file, v->line, "'systemPrompt' must be a string");
            else if (s != NULL)
                set_string(&g->system_prompt, s);
        } else if (strcmp(k->text, "compaction") == 0) {
            load_compaction(&g->compaction, v, file, d);
        } else if (strcmp(k->text, "baseUrl") == 0) {
            if (want_string(v, file, "baseUrl", d) == NULL)
                continue;
            if (!is_http_url(s))
                diag_add(d, file, v->line,
                         "'baseUrl' must start with https:// (or http:// "
                         "for a local test server)");
            else
                set_string(&g->base_url, s);
        } else {
            /* Not echoed: a key pasted in the wrong place would be. */
            diag_add(d, file, k->line,
                     "unknown key (expected one of: apiKey, model, "
                     "systemPrompt, baseUrl, compaction)");
        }
    }

    /* The environment wins over the file (docs/configuration.md). */
    if ((env = getenv("GEMINI_API_KEY")) != NULL && env[0] != '\0') {
        g->api_key = strdup(env);
        g->key_source = CONFIG_KEY_ENV_GEMINI;
    } else if ((env = getenv("GOOGLE_API_KEY")) != NULL && env[0] != '\0') {
        g->api_key = strdup(env);
        g->key_source = CONFIG_KEY_ENV_GOOGLE;
    } else if (!key_is_placeholder(file_key)) {
        g->api_key = file_key;
        file_key = NULL;
        g->key_source = CONFIG_KEY_FILE;
    }
    if (g->key_source != CONFIG_KEY_NONE && key_is_placeholder(g->api_key)) {
        diag_add(d, file, 0,
                 "the API key in %s is a placeholder; set a real key",
                 g->key_source == CONFIG_KEY_ENV_GEMINI ? "GEMINI_API_KEY"
                                                        : "GOOGLE_API_KEY");
        free(g->api_key);
        g->api_key = NULL;
        g->key_source = CONFIG_KEY_NONE; /* no usable key came from anywhere */
    } else if (g->api_key == NULL) {
        diag_add(d, file, key_line,
                 "no Gemini API key: %s; run `gemini-agent setup` and put "
                 "your key in apiKey, or set GEMINI_API_KEY",
                 !file_exists ? "the file does not exist"
                 : file_key == NULL ? "apiKey is missing"
                 : file_key[0] == '\0' ? "apiKey is empty"
                                       : "apiKey is still the placeholder");
    }
    if ((env = getenv("GEMINI_BASE_URL")) != NULL && env[0] != '\0') {
        if (is_http_url(env))
            set_string(&g->base_url, env);
        else
            diag_add(d, "GEMINI_BASE_URL", 0,
                     "must start with https:// (or http:// for a local test "
                     "server); using %s",
                     g->base_url);
    }
    /* "https://host/" and "https://host" must build the same URLs. */
    for (size_t n = strlen(g->base_url); n > 0 && g->base_url[n - 1] == '/';)
        g->base_url[--n] = '\0';
    free(file_key);
    arena_release(&arena);
}

/* --- public ---------------------------------------------------------------- */

bool
config_key_file_exposed(const struct config *cfg, unsigned *mode)
{
    struct stat st;

    if (cfg->gemini.key_source != CONFIG_KEY_FILE ||
        stat(cfg->gemini.path, &st) != 0)
        return false;
    *mode = (unsigned)(st.st_mode & 0777);
    /* read or write by group or others; an execute bit alone shows
     * nothing */
    return (st.st_mode & 066) != 0;
}

bool
config_key_file_foreign(const struct config *cfg, unsigned *uid)
{
    struct stat st;

    if (cfg->gemini.key_source != CONFIG_KEY_FILE ||
        stat(cfg->gemini.path, &st) != 0)
        return false;
    *uid = (unsigned)st.st_uid;
    return st.st_uid != geteuid() && st.st_uid != 0;
}

const char *
config_default_path(void)
{
    const char *env = getenv("GEMINI_AGENT_CONFIG");
    return env && env[0] ? env : "conf/agent.yaml";
}

const char *
config_cgi_path(char *buf, size_t size)
{
    const char *env = getenv("GEMINI_AGENT_CONFIG");
    const char *script = getenv("SCRIPT_FILENAME"), *slash;
    struct stat st;
    int n;

    if (env != NULL && env[0] != '\0')
        return env;
    if (script == NULL || script[0] != '/' ||
        (slash = strrchr(script, '/')) == NULL)
        return config_default_path();
    n = snprintf(buf, size, "%.*s/agent.yaml", (int)(slash - script), script);
    if (n < 0 || (size_t)n >= size || stat(buf, &st) != 0)
        return config_default_path();
    return buf;
}

/* AGENT_MAX_LOOP_STEPS overrides the file, clamped to 1..BOUND_LOOP_STEPS. */
static void
apply_env_limits(struct config *cfg, struct diag *d)
{
    const char *env = getenv("AGENT_MAX_LOOP_STEPS");
    char *end;
    long v;

    if (env == NULL || env[0] == '\0')
        return;
    errno = 0;
    v = strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || end == env) {
        diag_add(d, "AGENT_MAX_LOOP_STEPS", 0,
                 "must be an integer; using %ld", cfg->limits.max_loop_steps);
        return;
    }
    cfg->limits.max_loop_steps = v < 1 ? 1 : v > BOUND_LOOP_STEPS
                                                  ? BOUND_LOOP_STEPS
                                                  : v;
}

/* The run API's defaults, after agent.yaml: the store in dataDir, the
 * seed's context types, and the kill switch from the environment. */
static int
run_defaults(struct config *cfg)
{
    static const char *const types[] = {"email", "calendar_event",
                                        "document", "page"};
    const char *env = getenv("AGENT_SIDE_EFFECTS_ENABLED");

    if (env != NULL && (strcmp(env, "false") == 0 || strcmp(env, "0") == 0))
        cfg->run.side_effects = false;
    if (cfg->run.store == NULL &&
        asprintf(&cfg->run.store, "sqlite:%s/agent.db",
                 cfg->actions.data_dir) < 0) {
        cfg->run.store = NULL;
        return -1;
    }
    if (cfg->run.persona == NULL &&
        (cfg->run.persona = strdup(CONFIG_DEFAULT_PERSONA)) == NULL)
        return -1;
    if (cfg->run.context_types == NULL) {
        cfg->run.context_types = calloc(ARRAY_SIZE(types) + 1, sizeof(char *));
        if (cfg->run.context_types == NULL)
            return -1;
        for (size_t i = 0; i < ARRAY_SIZE(types); i++)
            if ((cfg->run.context_types[i] = strdup(types[i])) == NULL)
                return -1;
    }
    return 0;
}

struct config *
config_load(const char *path, struct diag *d)
{
    struct config *cfg = calloc(1, sizeof(*cfg));
    bool oom;

    if (cfg == NULL)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(limit_keys); i++)
        *limit_slot(cfg, &limit_keys[i]) = limit_keys[i].def;
    if (path[0] == '\0')
        path = "."; /* fails the access() check below with a clear message */
    cfg->path = strdup(path);
    cfg->dir = strdup(path);
    if (cfg->dir != NULL) {
        char *slash = strrchr(cfg->dir, '/');
        if (slash == NULL)
            memcpy(cfg->dir, ".", 2); /* fits: an empty path fails below */
        else if (slash == cfg->dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    cfg->gemini.model = strdup(CONFIG_DEFAULT_MODEL);
    cfg->gemini.base_url = strdup(CONFIG_DEFAULT_BASE_URL);
    cfg->gemini.system_prompt = strdup("");
    cfg->gemini.compaction = (struct config_compaction)CONFIG_COMPACTION_INIT;
    cfg->auth.session_cookie = strdup(CONFIG_DEFAULT_SESSION_COOKIE);
    cfg->run.side_effects = true;
    cfg->plugins.expose_all = true;
    cfg->plugins.file = cfg->path;
    cfg->history.verify = true;
    cfg->run.approval_ttl_ms = DEFAULT_APPROVAL_TTL_MS;
    cfg->run.ticket_ttl_ms = DEFAULT_TICKET_TTL_MS;
    if (cfg->path == NULL || cfg->dir == NULL || cfg->gemini.model == NULL ||
        cfg->gemini.base_url == NULL || cfg->gemini.system_prompt == NULL ||
        cfg->auth.session_cookie == NULL)
        goto fail;
    if (access(path, R_OK) != 0) {
        diag_add(d, path, 0, "cannot read config: %s", strerror(errno));
        goto fail;
    }
    if (load_agent_yaml(cfg, d) != 0)
        goto fail;
    apply_env_limits(cfg, d);
    /* read after the body bound it is a multiple of */
    if (cfg->limits.max_upstream_bytes == 0)
        cfg->limits.max_upstream_bytes =
            DEFAULT_UPSTREAM_PER_BODY * cfg->limits.max_body_bytes;
    /* Defaults for the paths: the layout of a checkout (conf/ beside
     * actions/ and var/). */
    if (cfg->gemini.path == NULL)
        cfg->gemini.path = resolve(cfg->dir, ".gemini.yaml");
    if (cfg->actions.data_dir == NULL)
        cfg->actions.data_dir = resolve(cfg->dir, "../var");
    if (run_defaults(cfg) != 0)
        goto fail;
    if (cfg->actions.dirs == NULL) {
        cfg->actions.dirs = calloc(1, sizeof(char *));
        if (cfg->actions.dirs == NULL ||
            (cfg->actions.dirs[0] = resolve(cfg->dir, "../actions")) == NULL)
            goto fail;
        cfg->actions.ndirs = 1;
    }
    /* n_action_dirs may be 0: `actions: []` names no folder */
    oom = cfg->gemini.path == NULL || cfg->actions.data_dir == NULL;
    if (oom)
        goto fail;
    load_gemini_yaml(cfg, d);
    return cfg;
fail:
    config_free(cfg);
    return NULL;
}

void
config_free(struct config *cfg)
{
    if (cfg == NULL)
        return;
    for (size_t i = 0; i < cfg->actions.ndirs; i++)
        free(cfg->actions.dirs[i]);
    free(cfg->actions.dirs);
    for (size_t i = 0; i < cfg->plugins.ndirs; i++)
        free(cfg->plugins.dirs[i]);
    free(cfg->plugins.dirs);
    config_free_strings(cfg->plugins.expose);
    config_free_strings(cfg->plugins.enrichment_only);
    json_decref(cfg->plugins.config);
    json_decref(cfg->plugins.config_lines);
    free(cfg->path);
    free(cfg->dir);
    free(cfg->actions.data_dir);
    free(cfg->gemini.path);
    if (cfg->gemini.api_key != NULL) {
        /* Do not leave the key in freed heap memory (core dumps). */
        explicit_bzero(cfg->gemini.api_key, strlen(cfg->gemini.api_key));
        free(cfg->gemini.api_key);
    }
    free(cfg->gemini.model);
    free(cfg->gemini.system_prompt);
    free(cfg->gemini.base_url);
    free(cfg->auth.remote_user_var);
    free(cfg->auth.secret_file);
    free(cfg->auth.session_cookie);
    free(cfg->budget.trusted);
    free(cfg->status.allow);
    free(cfg->outbound.allow);
    config_free_strings(cfg->cors.origins);
    free(cfg->log.file);
    free(cfg->run.store);
    free(cfg->run.persona);
    json_decref(cfg->run.allow);
    config_free_strings(cfg->run.context_types);
    config_free_strings(cfg->run.approval_never);
    free(cfg);
}

/* Free a NULL-terminated list of strings (holes from failed copies are
 * skipped by the list's own end: a NULL). */
static void
config_free_strings(char **list)
{
    for (size_t i = 0; list != NULL && list[i] != NULL; i++)
        free(list[i]);
    free(list);
}
