/*
 * config.c - load agent.yaml and the Gemini settings file.
 *
 * Each section of both files is a key table (core/settings.h: name, type,
 * range, default, where to store, what `check --settings` says), read by
 * the one table reader, so the key list of docs/configuration.md, the
 * defaults and the range checks cannot drift apart in code. Every problem
 * names the file, line and key. Range ceilings come from bounds.h:
 * configuration may lower a bound, never raise it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/config.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "core/settings.h"
#include "core/ydoc.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void config_free_strings(char **list);

/* A row of a table: one macro per type keeps each row on a line or two. */
#define KEY_LONG(n, st, f, lo, hi, d, how, h)                                  \
    {                                                                          \
        .name = n, .type = SETTING_LONG, .offset = offsetof(st, f),            \
        .say = how, .min = lo, .max = hi, .def = d, .help = h                  \
    }
#define KEY_BOOL(n, st, f, d, how, h)                                          \
    {                                                                          \
        .name = n, .type = SETTING_BOOL, .offset = offsetof(st, f),            \
        .say = how, .def = d, .help = h                                        \
    }
#define KEY_STRING(n, st, f, d, h)                                             \
    {                                                                          \
        .name = n, .type = SETTING_STRING, .offset = offsetof(st, f),          \
        .def_text = d, .help = h                                               \
    }
#define KEY_PATH(n, st, f, h)                                                  \
    {                                                                          \
        .name = n, .type = SETTING_PATH, .offset = offsetof(st, f), .help = h  \
    }
#define KEY_ENUM(t, n, st, f, names_, d, how, h)                               \
    {                                                                          \
        .name = n, .type = t, .offset = offsetof(st, f), .say = how,           \
        .names = names_, .nnames = ARRAY_SIZE(names_), .def = d, .help = h     \
    }
#define KEY_SECTION(n, st, f, table)                                           \
    {                                                                          \
        .name = n, .type = SETTING_SECTION, .offset = offsetof(st, f),         \
        .section = &table                                                      \
    }
#define KEY_CUSTOM(n, fn, sh, h)                                               \
    {                                                                          \
        .name = n, .type = SETTING_CUSTOM, .read = fn, .show = sh, .help = h   \
    }
#define TABLE_KEYS(rows) .keys = rows, .nkeys = ARRAY_SIZE(rows)

/* `check --settings`: a list of strings as "a, b" (or "(none)"). */
static void
show_list(char *const *list, size_t n, char *buf, size_t size)
{
    size_t used = 0;

    snprintf(buf, size, "(none)");
    for (size_t i = 0; list != NULL && i < n && list[i] && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                         list[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static size_t
count_strings(char *const *list)
{
    size_t n = 0;

    while (list != NULL && list[n] != NULL)
        n++;
    return n;
}

/* --- limits ----------------------------------------------------------------- */

/* Each module's part holds its own limits: the rows address struct config
 * (gemini.timeout_ms, actions.timeout_ms) rather than config_limits. */
#define LIMIT(n, f, lo, hi, d, h)                                              \
    KEY_LONG(n, struct config, f, lo, hi, d, SAY_BETWEEN, h)

static const struct settings_key limit_keys[] = {
    LIMIT("maxBodyBytes", limits.max_body_bytes, 64, BOUND_BODY_BYTES,
          DEFAULT_BODY_BYTES, "the largest request body, in bytes"),
    LIMIT("maxHistoryTurns", limits.max_history_turns, 2, BOUND_HISTORY_TURNS,
          DEFAULT_HISTORY_TURNS, "turns of history a request may carry"),
    LIMIT("maxTools", limits.max_tools, 0, BOUND_TOOLS, DEFAULT_TOOLS,
          "page tools a request may declare"),
    LIMIT("maxPageStateBytes", limits.max_page_state_bytes, 2,
          BOUND_PAGE_STATE_BYTES, DEFAULT_PAGE_STATE_BYTES,
          "the largest page state, in bytes"),
    LIMIT("maxLoopSteps", limits.max_loop_steps, 1, BOUND_LOOP_STEPS,
          DEFAULT_LOOP_STEPS,
          "model calls of one request (env AGENT_MAX_LOOP_STEPS wins)"),
    LIMIT("geminiTimeoutMs", gemini.timeout_ms, 1000, BOUND_GEMINI_TIMEOUT_MS,
          DEFAULT_GEMINI_TIMEOUT_MS, "one Gemini call, retries included"),
    LIMIT("actionTimeoutMs", actions.timeout_ms, 100, BOUND_ACTION_TIMEOUT_MS,
          DEFAULT_ACTION_TIMEOUT_MS, "one server action's watchdog"),
    LIMIT("requestTimeoutMs", limits.request_timeout_ms, 1000,
          BOUND_REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS,
          "the whole request"),
    LIMIT("maxRequestsPerWorker", limits.max_requests_per_worker, 0,
          BOUND_REQUESTS_PER_WORKER, 0,
          "requests before a worker is recycled (0: never)"),
    LIMIT("maxCallsPerTurn", limits.max_calls_per_turn, 1, BOUND_CALLS_PER_TURN,
          DEFAULT_CALLS_PER_TURN, "calls of one model turn that run"),
    LIMIT("streamHeartbeatMs", limits.stream_heartbeat_ms,
          MIN_STREAM_HEARTBEAT_MS, BOUND_STREAM_HEARTBEAT_MS,
          DEFAULT_STREAM_HEARTBEAT_MS,
          "a quiet stream gets a status line this often"),
    LIMIT("maxOutputTokens", limits.max_output_tokens, 1, BOUND_OUTPUT_TOKENS,
          DEFAULT_OUTPUT_TOKENS, "maxOutputTokens of every Gemini call"),
    /* 0: not set, DEFAULT_UPSTREAM_PER_BODY x maxBodyBytes (config_load) */
    LIMIT("maxUpstreamBytes", limits.max_upstream_bytes, MIN_UPSTREAM_BYTES,
          BOUND_REQUEST_UPSTREAM, 0,
          "bytes one request may send to Gemini (default 4 x maxBodyBytes)"),
};

static const struct settings_table limits_table = {
    .shape = "a mapping", .say_type = true, TABLE_KEYS(limit_keys)};

/* --- actions: the folders of plugin folders ---------------------------------- */

static void
read_action_dirs(void *base, const struct ydoc_node *v, const char *path,
                 const struct settings_ctx *cx)
{
    struct config *cfg = base;
    size_t n = v->kind == YDOC_SEQ ? v->count : 1;

    (void)path;
    if (v->kind == YDOC_MAP) {
        diag_add(cx->d, cx->file, v->line,
                 "'actions' must be a folder or a list of folders");
        return;
    }
    cfg->actions.dirs = calloc(n ? n : 1, sizeof(char *));
    if (cfg->actions.dirs == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct ydoc_node *e = v->kind == YDOC_SEQ ? v->values[i] : v;
        const char *s = settings_want_string(e, "actions", cx);
        if (s != NULL && (cfg->actions.dirs[cfg->actions.ndirs] =
                              settings_resolve(cx->dir, s)) != NULL)
            cfg->actions.ndirs++;
    }
}

static void
show_action_dirs(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    show_list(cfg->actions.dirs, cfg->actions.ndirs, buf, size);
}

/* --- plugins: shared objects (the registry loads them) -------------------- */

/* A list of plugin names (plugins.expose, plugins.enrichmentOnly) into
 * *list, NULL-terminated; `or_all`: the key also takes `all`. */
static void
load_plugin_names(char ***list, const struct ydoc_node *v, const char *key,
                  bool or_all, const struct settings_ctx *cx)
{
    if (v->kind != YDOC_SEQ) {
        diag_add(cx->d, cx->file, v->line,
                 "'%s' must be a list of plugin names%s", key,
                 or_all ? " or all" : "");
        return;
    }
    config_free_strings(*list);
    *list = calloc(v->count + 1, sizeof(char *));
    if (*list == NULL)
        return;
    for (size_t i = 0, n = 0; i < v->count; i++) {
        const char *name = settings_want_string(v->values[i], key, cx);
        if (name != NULL && ((*list)[n] = strdup(name)) != NULL)
            n++;
    }
}

static void
read_plugin_expose(void *base, const struct ydoc_node *v, const char *path,
                   const struct settings_ctx *cx)
{
    struct config_plugins *p = base;
    const char *s = ydoc_string(v);

    p->expose_line = v->line;
    if (s != NULL && strcmp(s, "all") == 0) {
        p->expose_all = true;
        return;
    }
    p->expose_all = false;
    load_plugin_names(&p->expose, v, path, true, cx);
}

static void
show_plugin_expose(const void *base, char *buf, size_t size)
{
    const struct config_plugins *p = base;

    if (p->expose_all)
        snprintf(buf, size, "all");
    else
        show_list(p->expose, count_strings(p->expose), buf, size);
}

static void
read_enrichment_only(void *base, const struct ydoc_node *v, const char *path,
                     const struct settings_ctx *cx)
{
    struct config_plugins *p = base;
    load_plugin_names(&p->enrichment_only, v, path, false, cx);
}

static void
show_enrichment_only(const void *base, char *buf, size_t size)
{
    const struct config_plugins *p = base;
    show_list(p->enrichment_only, count_strings(p->enrichment_only), buf, size);
}

static void
read_plugin_dirs(void *base, const struct ydoc_node *v, const char *path,
                 const struct settings_ctx *cx)
{
    struct config_plugins *p = base;
    size_t n = v->kind == YDOC_SEQ ? v->count : 1;

    if (v->kind == YDOC_MAP) {
        diag_add(cx->d, cx->file, v->line,
                 "'plugins.dirs' must be a folder or a list of folders");
        return;
    }
    for (size_t j = 0; j < p->ndirs; j++)
        free(p->dirs[j]);
    free(p->dirs);
    p->ndirs = 0;
    p->dirs_default = false;
    p->dirs = calloc(n ? n : 1, sizeof(char *));
    if (p->dirs == NULL)
        return;
    for (size_t j = 0; j < n; j++) {
        const struct ydoc_node *e = v->kind == YDOC_SEQ ? v->values[j] : v;
        const char *s = settings_want_string(e, path, cx);
        if (s != NULL &&
            (p->dirs[p->ndirs] = settings_resolve(cx->dir, s)) != NULL)
            p->ndirs++;
    }
}

static void
show_plugin_dirs(const void *base, char *buf, size_t size)
{
    const struct config_plugins *p = base;
    show_list(p->dirs, p->ndirs, buf, size);
}

/* plugins.config: {NAME: {...}}, and the line of each NAME */
static void
read_plugin_config(void *base, const struct ydoc_node *v, const char *path,
                   const struct settings_ctx *cx)
{
    struct config_plugins *p = base;
    json_t *c = ydoc_to_json(v, cx->file, cx->d);

    (void)path;
    if (c != NULL && !json_is_object(c)) {
        diag_add(cx->d, cx->file, v->line,
                 "'plugins.config' must be a mapping of plugin names "
                 "to their configuration");
        json_decref(c);
        return;
    }
    json_decref(p->config);
    p->config = c;
    p->permission_line = 0;
    json_decref(p->config_lines);
    p->config_lines = json_object();
    for (size_t j = 0; c != NULL && j < v->count; j++) {
        if (strcmp(v->keys[j]->text, "permission") == 0)
            p->permission_line = v->values[j]->line;
        if (p->config_lines != NULL)
            json_object_set_new(p->config_lines, v->keys[j]->text,
                                json_integer(v->values[j]->line));
    }
}

static void
show_plugin_config(const void *base, char *buf, size_t size)
{
    const struct config_plugins *p = base;
    const char *name;
    json_t *value;
    size_t used = 0;

    snprintf(buf, size, "(none)");
    json_object_foreach(p->config, name, value) {
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         name);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

/* No dirs: the system plugin folder, where packages install plugins; it
 * need not exist. */
static void
plugins_done(void *base, const struct settings_ctx *cx)
{
    struct config_plugins *p = base;

    (void)cx;
    if (p->dirs == NULL && (p->dirs = calloc(1, sizeof(char *))) != NULL &&
        (p->dirs[0] = strdup(CONFIG_SYSTEM_PLUGIN_DIR)) != NULL) {
        p->ndirs = 1;
        p->dirs_default = true;
    }
}

static const struct settings_key plugin_keys[] = {
    KEY_CUSTOM("dirs", read_plugin_dirs, show_plugin_dirs,
               "folders scanned for plugins (*.so)"),
    KEY_CUSTOM("expose", read_plugin_expose, show_plugin_expose,
               "the plugins whose tools the model sees: all or names"),
    KEY_CUSTOM("enrichmentOnly", read_enrichment_only, show_enrichment_only,
               "plugins loaded only to enrich prompts"),
    KEY_CUSTOM("config", read_plugin_config, show_plugin_config,
               "each plugin's own configuration, by name"),
};

static const struct settings_table plugins_table = {
    .shape = "a mapping (dirs, expose, config)",
    .say_type = true,
    TABLE_KEYS(plugin_keys),
    .done = plugins_done};

/* --- the run API: store and policy ---------------------------------------- */

/* store: "sqlite:PATH", PATH relative to the config's folder. */
static void
read_store(void *base, const struct ydoc_node *v, const char *path,
           const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const char *s = settings_want_string(v, path, cx);
    char *file;

    if (s == NULL)
        return;
    if (strncmp(s, "sqlite:", 7) != 0 || s[7] == '\0') {
        diag_add(cx->d, cx->file, v->line,
                 "'store' must be sqlite:PATH (the only backend so far), "
                 "not '%s'",
                 s);
        return;
    }
    file = settings_resolve(cx->dir, s + 7);
    free(cfg->run.store);
    cfg->run.store = NULL;
    if (file != NULL && asprintf(&cfg->run.store, "sqlite:%s", file) < 0)
        cfg->run.store = NULL;
    free(file);
}

static void
show_store(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    snprintf(buf, size, "%s", cfg->run.store ? cfg->run.store : "(none)");
}

static void
read_context_types(void *base, const struct ydoc_node *v, const char *path,
                   const struct settings_ctx *cx)
{
    struct config_run *run = base;
    char **types;

    (void)path;
    if (v->kind != YDOC_SEQ || v->count > BOUND_CONTEXT_TYPES) {
        diag_add(cx->d, cx->file, v->line,
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
            diag_add(cx->d, cx->file, v->values[i]->line,
                     "'policy.contextTypes' entries must be names of at most "
                     "%d characters",
                     BOUND_CONTEXT_TYPE_LEN);
            continue;
        }
        types[i] = strdup(t);
    }
    config_free_strings(run->context_types);
    run->context_types = types;
}

static void
show_context_types(const void *base, char *buf, size_t size)
{
    const struct config_run *run = base;
    show_list(run->context_types, count_strings(run->context_types), buf, size);
}

/* policy.allow: [{action, arg?, pattern?}] */
static void
read_allow(void *base, const struct ydoc_node *v, const char *path,
           const struct settings_ctx *cx)
{
    struct config_run *run = base;
    json_t *rules = ydoc_to_json(v, cx->file, cx->d);
    json_t *r;
    size_t i;

    (void)path;
    if (rules == NULL)
        return;
    if (!json_is_array(rules)) {
        diag_add(cx->d, cx->file, v->line,
                 "'policy.allow' must be a list of rules");
        json_decref(rules);
        return;
    }
    json_array_foreach(rules, i, r) {
        if (!json_is_string(json_object_get(r, "action")) ||
            (json_object_get(r, "arg") != NULL &&
             (!json_is_string(json_object_get(r, "arg")) ||
              !json_is_string(json_object_get(r, "pattern"))))) {
            diag_add(cx->d, cx->file, v->line,
                     "'policy.allow' rule %zu must be {action, arg?, "
                     "pattern?} with strings (pattern with arg)",
                     i + 1);
        }
    }
    json_decref(run->allow);
    run->allow = rules;
}

static void
show_allow(const void *base, char *buf, size_t size)
{
    const struct config_run *run = base;
    snprintf(buf, size, "%zu rules", json_array_size(run->allow));
}

/* The approvals an action of policy.actions may name: only `never` is
 * kept (`visitor` is the default, said for clarity). */
static const struct settings_name approval_names[] = {
    {"never", 1},
    {"visitor", 0},
};

/* policy.actions: {<plugin>.<name>: {approval: never}}; whether the names
 * are actions is the site's to check (it has loaded them). */
static void
read_policy_actions(void *base, const struct ydoc_node *map, const char *path,
                    const struct settings_ctx *cx)
{
    struct config_run *run = base;
    size_t n = 0;

    (void)path;
    if (map->kind != YDOC_MAP) {
        diag_add(cx->d, cx->file, map->line,
                 "'policy.actions' must be a mapping of action names to "
                 "{approval: never}");
        return;
    }
    config_free_strings(run->approval_never);
    run->approval_never = calloc(map->count + 1, sizeof(char *));
    if (run->approval_never == NULL) {
        diag_add(cx->d, cx->file, map->line, "out of memory");
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *v = map->values[i];
        const struct ydoc_node *ap = v->kind == YDOC_MAP
                                         ? ydoc_get(v, "approval")
                                         : NULL;
        const char *s = ydoc_string(ap);
        size_t a = 0;

        while (s != NULL && a < ARRAY_SIZE(approval_names) &&
               strcmp(s, approval_names[a].name) != 0)
            a++;
        if (ap == NULL || v->count != 1 || s == NULL ||
            a == ARRAY_SIZE(approval_names)) {
            diag_add(cx->d, cx->file, v->line,
                     "'policy.actions.%s' must be {approval: never} or "
                     "{approval: visitor}",
                     map->keys[i]->text);
            continue;
        }
        if (approval_names[a].value &&
            (run->approval_never[n++] = strdup(map->keys[i]->text)) == NULL)
            diag_add(cx->d, cx->file, v->line, "out of memory");
    }
}

static void
show_policy_actions(const void *base, char *buf, size_t size)
{
    const struct config_run *run = base;
    show_list(run->approval_never, count_strings(run->approval_never), buf,
              size);
}

#define TTL(n, f, d, h)                                                        \
    KEY_LONG(n, struct config_run, f, 1000, BOUND_APPROVAL_TTL_MS, d,          \
             SAY_PLAIN, h)

static const struct settings_key policy_keys[] = {
    KEY_BOOL("sideEffects", struct config_run, side_effects, true, SAY_PLAIN,
             "actions with side effects may run (env "
             "AGENT_SIDE_EFFECTS_ENABLED=false wins)"),
    TTL("approvalTtlMs", approval_ttl_ms, DEFAULT_APPROVAL_TTL_MS,
        "how long a run API approval stays open"),
    TTL("ticketTtlMs", ticket_ttl_ms, DEFAULT_TICKET_TTL_MS,
        "how long the chat's approval tickets are good"),
    KEY_CUSTOM("allow", read_allow, show_allow,
               "the site's allow rules {action, arg?, pattern?}"),
    KEY_STRING("persona", struct config_run, persona, CONFIG_DEFAULT_PERSONA,
               "the run API's instruction"),
    KEY_CUSTOM("contextTypes", read_context_types, show_context_types,
               "the kinds of context a run may carry"),
    KEY_CUSTOM("actions", read_policy_actions, show_policy_actions,
               "actions the chat runs without asking (approval: never)"),
};

static const struct settings_table policy_table = {
    .shape = "a mapping", .say_type = true, TABLE_KEYS(policy_keys)};
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
    "AUTH_TYPE",       "CONTENT_LENGTH",
    "CONTENT_TYPE",    "CONTEXT_DOCUMENT_ROOT",
    "CONTEXT_PREFIX",  "DOCUMENT_ROOT",
    "DOCUMENT_URI",    "GATEWAY_INTERFACE",
    "HTTPS",           "PATH_INFO",
    "PATH_TRANSLATED", "QUERY_STRING",
    "REMOTE_ADDR",     "REMOTE_HOST",
    "REMOTE_IDENT",    "REMOTE_PORT",
    "REQUEST_METHOD",  "REQUEST_SCHEME",
    "REQUEST_URI",     "SCRIPT_FILENAME",
    "SCRIPT_NAME",     "SCRIPT_URI",
    "SCRIPT_URL",      "SERVER_ADDR",
    "SERVER_NAME",     "SERVER_PORT",
    "SERVER_PROTOCOL", "SERVER_SOFTWARE",
};

static const char remote_user_forms[] =
    "write auth: {remoteUser: {variable: GA_REMOTE_USER, server: nginx}} "
    "with the fastcgi_param GA_REMOTE_USER line of nginx/gemini-agent.conf, "
    "or {variable: REMOTE_USER, server: apache} (docs/http-api.md, "
    "\"Identity\")";

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

static const struct settings_name web_server_names[] = {
    {"nginx", CONFIG_SERVER_NGINX},
    {"apache", CONFIG_SERVER_APACHE},
};

/* auth.remoteUser's own keys, read as strings: what they say together is
 * checked after (load_remote_user). */
struct remote_user_keys {
    const char *variable, *server;
};

static void
read_ru_variable(void *base, const struct ydoc_node *v, const char *path,
                 const struct settings_ctx *cx)
{
    ((struct remote_user_keys *)base)->variable = settings_want_string(v, path,
                                                                       cx);
}

static void
read_ru_server(void *base, const struct ydoc_node *v, const char *path,
               const struct settings_ctx *cx)
{
    ((struct remote_user_keys *)base)->server = settings_want_string(v, path,
                                                                     cx);
}

static const struct settings_key remote_user_keys[] = {
    KEY_CUSTOM("variable", read_ru_variable, NULL, NULL),
    KEY_CUSTOM("server", read_ru_server, NULL, NULL),
};

static const struct settings_table remote_user_table = {
    .shape = "a mapping {variable, server}",
    .say_type = true,
    TABLE_KEYS(remote_user_keys)};

/* auth.remoteUser: {variable: NAME, server: nginx | apache}. */
static void
read_remote_user(void *base, const struct ydoc_node *map, const char *path,
                 const struct settings_ctx *cx)
{
    struct config_auth *a = base;
    struct remote_user_keys got = {NULL, NULL};
    enum config_web_server ws = CONFIG_SERVER_NONE;
    const char *var, *server, *why;
    int line = map->line;

    settings_read(&remote_user_table, &got, map, path, cx);
    if (map->kind != YDOC_MAP)
        return;
    var = got.variable;
    server = got.server;
    for (size_t i = 0; server != NULL && i < ARRAY_SIZE(web_server_names); i++)
        if (strcmp(server, web_server_names[i].name) == 0)
            ws = (enum config_web_server)web_server_names[i].value;
    if (var == NULL || server == NULL || ws == CONFIG_SERVER_NONE) {
        bool other = server != NULL && ws == CONFIG_SERVER_NONE;
        diag_add(cx->d, cx->file, line,
                 "'auth.remoteUser' needs the variable the web server sets "
                 "from its own sign-in and the server, nginx or apache%s%s"
                 "%s: %s",
                 other ? " (not '" : "", other ? server : "", other ? "')" : "",
                 remote_user_forms);
        return;
    }
    if ((why = remote_user_refusal(var, ws)) != NULL) {
        diag_add(cx->d, cx->file, line,
                 "'auth.remoteUser': %s behind %s %s; %s", var, server, why,
                 remote_user_forms);
        return;
    }
    settings_set_string(&a->remote_user_var, var);
    a->remote_user_server = ws;
}

static void
show_remote_user(const void *base, char *buf, size_t size)
{
    const struct config_auth *a = base;

    if (a->remote_user_var == NULL)
        snprintf(buf, size, "(none)");
    else
        snprintf(buf, size, "%s behind %s", a->remote_user_var,
                 a->remote_user_server == CONFIG_SERVER_NGINX ? "nginx"
                                                              : "apache");
}

/* auth.trustRemoteUser, the old form: true trusted REMOTE_USER behind any
 * server, which behind nginx is any client's word. false still means what
 * it said. */
static void
read_trust_remote_user(void *base, const struct ydoc_node *v, const char *path,
                       const struct settings_ctx *cx)
{
    bool on = false;

    (void)base;
    (void)path;
    if (!ydoc_bool(v, &on))
        diag_add(cx->d, cx->file, v->line,
                 "'auth.trustRemoteUser' must be true or false, not %s",
                 ydoc_type_name(v));
    else if (on)
        diag_add(cx->d, cx->file, v->line,
                 "'auth.trustRemoteUser: true' is refused: behind nginx, "
                 "REMOTE_USER is the name in any client's 'Authorization: "
                 "Basic' header, so anyone could sign in as anyone; name "
                 "the variable your web server sets from its own sign-in "
                 "instead: %s",
                 remote_user_forms);
}

static void
read_session_cookie(void *base, const struct ydoc_node *v, const char *path,
                    const struct settings_ctx *cx)
{
    struct config_auth *a = base;
    const char *s = settings_want_string(v, path, cx);

    if (s == NULL)
        return;
    if (!cookie_name_valid(s))
        diag_add(cx->d, cx->file, v->line,
                 "'auth.sessionCookie' must be a cookie name: 1 to %d "
                 "letters, digits or !#$%%&'*+-.^_`|~",
                 BOUND_COOKIE_NAME);
    else
        settings_set_string(&a->session_cookie, s);
}

static void
show_session_cookie(const void *base, char *buf, size_t size)
{
    const struct config_auth *a = base;
    snprintf(buf, size, "%s", a->session_cookie ? a->session_cookie : "");
}

static const struct settings_key auth_keys[] = {
    KEY_CUSTOM("remoteUser", read_remote_user, show_remote_user,
               "the variable the web server sets from its own sign-in"),
    {.name = "trustRemoteUser",
     .type = SETTING_CUSTOM,
     .read = read_trust_remote_user,
     .hidden = true},
    KEY_PATH("secretFile", struct config_auth, secret_file,
             "the secret that signs session tokens"),
    KEY_CUSTOM("sessionCookie", read_session_cookie, show_session_cookie,
               "the cookie that carries a session token"),
};

static const struct settings_table auth_table = {
    .shape = "a mapping", .say_type = true, TABLE_KEYS(auth_keys)};

/* --- history: what the chat accepts from a browser ---------------------- */

/* The parts of history.allowParts -> the bits of agent/history.h (which
 * core cannot include: the values are repeated there and checked by the
 * chat's unit test) */
static const struct settings_name part_names[] = {
    {"inlineData", 1u << 0},     {"fileData", 1u << 1},
    {"executableCode", 1u << 2}, {"codeExecutionResult", 1u << 2},
    {"thought", 1u << 3},
};

static void
read_allow_parts(void *base, const struct ydoc_node *list, const char *path,
                 const struct settings_ctx *cx)
{
    struct config_history *h = base;

    (void)path;
    if (list->kind != YDOC_SEQ) {
        diag_add(cx->d, cx->file, list->line,
                 "'history.allowParts' must be a list of part names");
        return;
    }
    for (size_t i = 0; i < list->count; i++) {
        const char *name = ydoc_string(list->values[i]);
        size_t k = 0;
        while (k < ARRAY_SIZE(part_names) &&
               (name == NULL || strcmp(name, part_names[k].name) != 0))
            k++;
        if (k == ARRAY_SIZE(part_names))
            diag_add(cx->d, cx->file, list->values[i]->line,
                     "'history.allowParts' names inlineData, fileData, "
                     "executableCode, codeExecutionResult or thought");
        else
            h->allow_parts |= (unsigned)part_names[k].value;
    }
}

static void
show_allow_parts(const void *base, char *buf, size_t size)
{
    const struct config_history *h = base;
    size_t used = 0;

    snprintf(buf, size, "(none)");
    for (size_t k = 0; k < ARRAY_SIZE(part_names); k++) {
        if (!(h->allow_parts & (unsigned)part_names[k].value))
            continue;
        int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         part_names[k].name);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

static const struct settings_name verify_names[] = {
    {"strict", 1},
    {"off", 0},
};

static const struct settings_key history_keys[] = {
    KEY_ENUM(SETTING_SWITCH, "verify", struct config_history, verify,
             verify_names, 1, SAY_PLAIN,
             "model turns must carry the server's signature (strict)"),
    KEY_CUSTOM("allowParts", read_allow_parts, show_allow_parts,
               "the kinds of part a browser's history may hold"),
};

static const struct settings_table history_table = {
    .shape = "{verify, allowParts}",
    .say_type = true,
    TABLE_KEYS(history_keys)};
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
read_cors(void *base, const struct ydoc_node *v, const char *path,
          const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const struct ydoc_node *list = v->kind == YDOC_MAP
                                       ? ydoc_get(v, "allowOrigins")
                                       : NULL;
    char **out;

    (void)path;
    config_free_strings(cfg->cors.origins);
    cfg->cors.origins = NULL;
    cfg->cors.norigins = 0;
    if (list == NULL || v->count != 1 || list->kind != YDOC_SEQ ||
        list->count > BOUND_CORS_ORIGINS) {
        diag_add(cx->d, cx->file, v->line,
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
            diag_add(cx->d, cx->file, e->line,
                     "'http.cors.allowOrigins' entry %s%s%s: %s", s ? "'" : "",
                     s ? s : ydoc_type_name(e), s ? "'" : "", why);
            continue;
        }
        if ((out[cfg->cors.norigins] = strdup(s)) == NULL)
            break;
        cfg->cors.norigins++;
    }
    cfg->cors.origins = out;
}

static void
show_cors(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    show_list(cfg->cors.origins, cfg->cors.norigins, buf, size);
}

/* http.status: {allow: [addresses]} */
static void
read_status(void *base, const struct ydoc_node *v, const char *path,
            const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const struct ydoc_node *allow = v->kind == YDOC_MAP ? ydoc_get(v, "allow")
                                                        : NULL;

    (void)path;
    if (allow == NULL || v->count != 1) {
        diag_add(cx->d, cx->file, v->line,
                 "'http.status' must be {allow: [addresses]}");
        return;
    }
    load_addresses(allow, cx->file, "http.status.allow", &cfg->status.allow,
                   &cfg->status.nallow, cx->d);
    cfg->status.on = cfg->status.nallow > 0;
}

static void
show_status(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    snprintf(buf, size, "%zu addresses", cfg->status.nallow);
}

static const struct settings_name direct_names[] = {
    {"readOnly", CONFIG_DIRECT_READ_ONLY},
    {"authenticated", CONFIG_DIRECT_AUTHENTICATED},
};

/* http: {directActions, status, cors}: rows address struct config */
static const struct settings_key http_keys[] = {
    KEY_ENUM(SETTING_ENUM, "directActions", struct config, direct_actions,
             direct_names, CONFIG_DIRECT_READ_ONLY, SAY_TYPE,
             "who may run an action with side effects over POST "
             "/_jay/actions/<name>"),
    KEY_CUSTOM("status", read_status, show_status,
               "who may read GET /_jay/status"),
    KEY_CUSTOM("cors", read_cors, show_cors,
               "the other origins whose pages may call the responder"),
};

static const struct settings_table http_table = {
    .shape = "{directActions: readOnly | authenticated, status: {allow: "
             "[addresses]}, cors: {allowOrigins: [origins]}}",
    TABLE_KEYS(http_keys)};

/* outbound: {allow: [addresses]} - the non-public addresses the built-in
 * plugins may fetch from (plugins/outbound.h) */
static void
read_outbound(void *base, const struct ydoc_node *v, const char *path,
              const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const struct ydoc_node *allow = v->kind == YDOC_MAP ? ydoc_get(v, "allow")
                                                        : NULL;

    (void)path;
    if (allow == NULL || v->count != 1) {
        diag_add(cx->d, cx->file, v->line,
                 "'outbound' must be {allow: [addresses or networks]}");
        return;
    }
    load_addresses(allow, cx->file, "outbound.allow", &cfg->outbound.allow,
                   &cfg->outbound.nallow, cx->d);
}

static void
show_outbound(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    snprintf(buf, size, "%zu addresses", cfg->outbound.nallow);
}

/* --- log: how log lines look and where they go ---------------------------- */

static const struct settings_name log_format_names[] = {
    {"text", LOG_FMT_TEXT},
    {"json", LOG_FMT_JSON},
};

static const struct settings_key log_keys[] = {
    KEY_ENUM(SETTING_ENUM, "format", struct config_log, format,
             log_format_names, LOG_FMT_TEXT, SAY_PLAIN, "how log lines look"),
    KEY_PATH("file", struct config_log, file,
             "where log lines go (none: stderr, the web server's log)"),
};

static const struct settings_table log_table = {
    .shape = "{format: text | json, file: PATH}", TABLE_KEYS(log_keys)};

/* --- budget: what a client may spend --------------------------------------- */

#define CEILING(n, f, hi, h)                                                   \
    KEY_LONG(n, struct config_ceiling, f, 1, hi, 0, SAY_NO_LIMIT, h)

static const struct settings_key ceiling_keys[] = {
    CEILING("requestsPerMinute", requests_per_minute,
            BOUND_BUDGET_REQUESTS_PER_MINUTE,
            "requests a minute (0: no limit)"),
    CEILING("tokensPerDay", tokens_per_day, BOUND_BUDGET_TOKENS_PER_DAY,
            "Gemini tokens a day (0: no limit)"),
};

static const struct settings_table ceiling_table = {
    .shape = "{requestsPerMinute, tokensPerDay}",
    .say_type = true,
    TABLE_KEYS(ceiling_keys)};

static void
read_trusted(void *base, const struct ydoc_node *v, const char *path,
             const struct settings_ctx *cx)
{
    struct config_budget *b = base;
    load_addresses(v, cx->file, path, &b->trusted, &b->ntrusted, cx->d);
}

static void
show_trusted(const void *base, char *buf, size_t size)
{
    const struct config_budget *b = base;
    snprintf(buf, size, "%zu addresses", b->ntrusted);
}

/* any ceiling is set: requests are counted */
static void
budget_done(void *base, const struct settings_ctx *cx)
{
    struct config_budget *b = base;

    (void)cx;
    b->on = b->per_ip.requests_per_minute || b->per_ip.tokens_per_day ||
            b->per_user.requests_per_minute || b->per_user.tokens_per_day ||
            b->site.requests_per_minute || b->site.tokens_per_day;
}

static const struct settings_key budget_keys[] = {
    KEY_SECTION("perIp", struct config_budget, per_ip, ceiling_table),
    KEY_SECTION("perUser", struct config_budget, per_user, ceiling_table),
    KEY_SECTION("site", struct config_budget, site, ceiling_table),
    KEY_CUSTOM("trustForwardedFor", read_trusted, show_trusted,
               "the proxies whose X-Forwarded-For names the client"),
};

static const struct settings_table budget_table = {.shape = "a mapping",
                                                   .say_type = true,
                                                   TABLE_KEYS(budget_keys),
                                                   .done = budget_done};

/* --- agent.yaml ------------------------------------------------------------ */

static const struct settings_key agent_keys[] = {
    KEY_PATH("gemini", struct config, gemini.path,
             "the Gemini settings file (.gemini.yaml)"),
    KEY_CUSTOM("actions", read_action_dirs, show_action_dirs,
               "the folders that hold plugin folders"),
    KEY_PATH("dataDir", struct config, actions.data_dir,
             "writable state of the actions"),
    /* limits' and http's rows address struct config itself */
    {.name = "limits", .type = SETTING_SECTION, .section = &limits_table},
    KEY_CUSTOM("store", read_store, show_store, "the run API's store"),
    KEY_SECTION("policy", struct config, run, policy_table),
    KEY_SECTION("auth", struct config, auth, auth_table),
    KEY_SECTION("history", struct config, history, history_table),
    {.name = "http", .type = SETTING_SECTION, .section = &http_table},
    KEY_CUSTOM("outbound", read_outbound, show_outbound,
               "non-public addresses the built-in plugins may fetch from"),
    KEY_SECTION("budget", struct config, budget, budget_table),
    KEY_SECTION("plugins", struct config, plugins, plugins_table),
    KEY_SECTION("log", struct config, log, log_table),
    KEY_BOOL("allowReadableKeyFile", struct config, allow_readable_key_file,
             false, SAY_TYPE,
             "serve even when the key file is open to group or others"),
};

static const struct settings_table agent_table = {.shape = "a mapping of keys",
                                                  TABLE_KEYS(agent_keys)};

/* Returns 0, or -1 when agent.yaml is unusable (problems reported). */
static int
load_agent_yaml(struct config *cfg, struct diag *d)
{
    struct arena arena;
    const struct ydoc_node *root;
    struct settings_ctx cx = {cfg->path, cfg->dir, d, cfg};
    size_t before = d->count;

    arena_init(&arena);
    root = ydoc_load_file(cfg->path, &arena, d);
    if (root == NULL || ydoc_is_null(root)) /* empty: all defaults */
        goto out;
    if (root->kind != YDOC_MAP) {
        diag_add(d, cfg->path, root->line,
                 "the file must be a mapping of keys");
        goto out;
    }
    settings_read(&agent_table, cfg, root, "", &cx);
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

/* The compaction of the terminal client (term/compact.h). */
static const struct settings_key compaction_keys[] = {
    KEY_BOOL("enabled", struct config_compaction, enabled, true, SAY_PLAIN,
             "the terminal compacts a long conversation"),
    KEY_LONG("contextWindow", struct config_compaction, window, 0,
             BOUND_CONTEXT_WINDOW, 0, SAY_PLAIN,
             "the model's window in tokens (0: the model's own)"),
    KEY_LONG("atPercent", struct config_compaction, at_percent, 10, 100,
             DEFAULT_COMPACT_AT_PERCENT, SAY_PLAIN,
             "compact when the last prompt reached this share of the window"),
    KEY_LONG("keepTurns", struct config_compaction, keep_turns, 0,
             BOUND_COMPACT_KEEP_TURNS, DEFAULT_COMPACT_KEEP_TURNS, SAY_PLAIN,
             "the last user turns kept whole"),
};

static const struct settings_table compaction_table = {
    .shape = "a mapping", .quiet = true, TABLE_KEYS(compaction_keys)};

/* What apiKey said, kept until the environment has had its say. */
struct key_read {
    char *file_key;
    int key_line; /* where apiKey is, for problems about it */
};

static void
read_api_key(void *base, const struct ydoc_node *v, const char *path,
             const struct settings_ctx *cx)
{
    struct key_read *kr = cx->user;
    const char *s = ydoc_string(v);

    (void)base;
    (void)path;
    kr->key_line = v->line;
    if (s == NULL && !ydoc_is_null(v))
        diag_add(cx->d, cx->file, v->line, "'apiKey' must be a string");
    else if (s != NULL && (free(kr->file_key), 1))
        kr->file_key = strdup(s);
}

/* Never the key: where it came from. */
static void
show_api_key(const void *base, char *buf, size_t size)
{
    static const char *const sources[] = {
        [CONFIG_KEY_NONE] = "(none)",
        [CONFIG_KEY_FILE] = "set in the file",
        [CONFIG_KEY_ENV_GEMINI] = "from GEMINI_API_KEY",
        [CONFIG_KEY_ENV_GOOGLE] = "from GOOGLE_API_KEY",
    };
    const struct config *cfg = base;
    snprintf(buf, size, "%s", sources[cfg->gemini.key_source]);
}

static void
read_system_prompt(void *base, const struct ydoc_node *v, const char *path,
                   const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const char *s = ydoc_string(v);

    (void)path;
    if (s == NULL && !ydoc_is_null(v))
        diag_add(cx->d, cx->file, v->line, "'systemPrompt' must be a string");
    else if (s != NULL)
        settings_set_string(&cfg->gemini.system_prompt, s);
}

static void
show_system_prompt(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    snprintf(buf, size, "%zu characters", strlen(cfg->gemini.system_prompt));
}

static void
read_base_url(void *base, const struct ydoc_node *v, const char *path,
              const struct settings_ctx *cx)
{
    struct config *cfg = base;
    const char *s = settings_want_string(v, path, cx);

    if (s == NULL)
        return;
    if (!is_http_url(s))
        diag_add(cx->d, cx->file, v->line,
                 "'baseUrl' must start with https:// (or http:// "
                 "for a local test server)");
    else
        settings_set_string(&cfg->gemini.base_url, s);
}

static void
show_base_url(const void *base, char *buf, size_t size)
{
    const struct config *cfg = base;
    snprintf(buf, size, "%s", cfg->gemini.base_url);
}

/* .gemini.yaml: rows address struct config */
static const struct settings_key gemini_keys[] = {
    KEY_CUSTOM("apiKey", read_api_key, show_api_key,
               "the Gemini API key (env GEMINI_API_KEY, GOOGLE_API_KEY win)"),
    KEY_STRING("model", struct config, gemini.model, CONFIG_DEFAULT_MODEL,
               "the model every call uses"),
    KEY_CUSTOM("systemPrompt", read_system_prompt, show_system_prompt,
               "the site's instruction to the model"),
    KEY_CUSTOM("baseUrl", read_base_url, show_base_url,
               "where Gemini is (env GEMINI_BASE_URL wins)"),
    KEY_SECTION("compaction", struct config, gemini.compaction,
                compaction_table),
};

static const struct settings_table gemini_table = {
    .shape = "a mapping of keys", .quiet = true, TABLE_KEYS(gemini_keys)};

/* The environment wins over the file (docs/configuration.md); a key that
 * is still a placeholder counts as none. */
static void
choose_api_key(struct config_gemini *g, struct key_read *kr, bool file_exists,
               struct diag *d)
{
    const char *env, *file = g->path;

    if ((env = getenv("GEMINI_API_KEY")) != NULL && env[0] != '\0') {
        g->api_key = strdup(env);
        g->key_source = CONFIG_KEY_ENV_GEMINI;
    } else if ((env = getenv("GOOGLE_API_KEY")) != NULL && env[0] != '\0') {
        g->api_key = strdup(env);
        g->key_source = CONFIG_KEY_ENV_GOOGLE;
    } else if (!key_is_placeholder(kr->file_key)) {
        g->api_key = kr->file_key;
        kr->file_key = NULL;
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
        diag_add(d, file, kr->key_line,
                 "no Gemini API key: %s; run `gemini-agent setup` and put "
                 "your key in apiKey, or set GEMINI_API_KEY",
                 !file_exists              ? "the file does not exist"
                 : kr->file_key == NULL    ? "apiKey is missing"
                 : kr->file_key[0] == '\0' ? "apiKey is empty"
                                           : "apiKey is still the placeholder");
    }
}

/* GEMINI_BASE_URL wins over the file; "https://host/" and "https://host"
 * build the same URLs. */
static void
choose_base_url(struct config_gemini *g, struct diag *d)
{
    const char *env = getenv("GEMINI_BASE_URL");

    if (env != NULL && env[0] != '\0') {
        if (is_http_url(env))
            settings_set_string(&g->base_url, env);
        else
            diag_add(d, "GEMINI_BASE_URL", 0,
                     "must start with https:// (or http:// for a local test "
                     "server); using %s",
                     g->base_url);
    }
    for (size_t n = strlen(g->base_url); n > 0 && g->base_url[n - 1] == '/';)
        g->base_url[--n] = '\0';
}

/*
 * Problems here are never fatal: actions still serve without Gemini. The
 * key's value never appears in a message, only where it came from.
 */
static void
load_gemini_yaml(struct config *cfg, struct diag *d)
{
    struct config_gemini *g = &cfg->gemini;
    struct key_read kr = {NULL, 0};
    struct settings_ctx cx = {g->path, cfg->dir, d, &kr};
    struct arena arena;
    const struct ydoc_node *root = NULL;
    bool file_exists;

    arena_init(&arena);
    file_exists = access(g->path, F_OK) == 0;
    if (file_exists)
        root = ydoc_load_file(g->path, &arena, d);
    if (root != NULL && !ydoc_is_null(root) && root->kind != YDOC_MAP) {
        diag_add(d, g->path, root->line, "the file must be a mapping of keys");
        root = NULL;
    }
    if (root != NULL && !ydoc_is_null(root))
        settings_read(&gemini_table, cfg, root, "", &cx);
    choose_api_key(g, &kr, file_exists, d);
    choose_base_url(g, d);
    free(kr.file_key);
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
        diag_add(d, "AGENT_MAX_LOOP_STEPS", 0, "must be an integer; using %ld",
                 cfg->limits.max_loop_steps);
        return;
    }
    cfg->limits.max_loop_steps = v < 1                  ? 1
                                 : v > BOUND_LOOP_STEPS ? BOUND_LOOP_STEPS
                                                        : v;
}

/* The run API's defaults, after agent.yaml: the store in dataDir, the
 * seed's context types, and the kill switch from the environment. */
static int
run_defaults(struct config *cfg)
{
    static const char *const types[] = {"email", "calendar_event", "document",
                                        "page"};
    const char *env = getenv("AGENT_SIDE_EFFECTS_ENABLED");

    if (env != NULL && (strcmp(env, "false") == 0 || strcmp(env, "0") == 0))
        cfg->run.side_effects = false;
    if (cfg->run.store == NULL &&
        asprintf(&cfg->run.store, "sqlite:%s/agent.db", cfg->actions.data_dir) <
            0) {
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

/* What agent.yaml leaves to be worked out: the environment's say, the
 * defaults that depend on other settings, the layout of a checkout
 * (conf/ beside actions/ and var/). Returns -1 when out of memory. */
static int
config_finish(struct config *cfg, struct diag *d)
{
    apply_env_limits(cfg, d);
    /* read after the body bound it is a multiple of */
    if (cfg->limits.max_upstream_bytes == 0)
        cfg->limits.max_upstream_bytes = DEFAULT_UPSTREAM_PER_BODY *
                                         cfg->limits.max_body_bytes;
    if (cfg->gemini.path == NULL)
        cfg->gemini.path = settings_resolve(cfg->dir, ".gemini.yaml");
    if (cfg->actions.data_dir == NULL)
        cfg->actions.data_dir = settings_resolve(cfg->dir, "../var");
    if (cfg->gemini.path == NULL || cfg->actions.data_dir == NULL ||
        run_defaults(cfg) != 0)
        return -1;
    /* ndirs may be 0: `actions: []` names no folder */
    if (cfg->actions.dirs == NULL) {
        cfg->actions.dirs = calloc(1, sizeof(char *));
        if (cfg->actions.dirs == NULL ||
            (cfg->actions.dirs[0] = settings_resolve(cfg->dir, "../actions")) ==
                NULL)
            return -1;
        cfg->actions.ndirs = 1;
    }
    return 0;
}

struct config *
config_load(const char *path, struct diag *d)
{
    struct config *cfg = calloc(1, sizeof(*cfg));

    if (cfg == NULL)
        return NULL;
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
    cfg->gemini.base_url = strdup(CONFIG_DEFAULT_BASE_URL);
    cfg->gemini.system_prompt = strdup("");
    cfg->auth.session_cookie = strdup(CONFIG_DEFAULT_SESSION_COOKIE);
    cfg->plugins.expose_all = true;
    cfg->plugins.file = cfg->path;
    if (settings_defaults(&agent_table, cfg) != 0 ||
        settings_defaults(&gemini_table, cfg) != 0 || cfg->path == NULL ||
        cfg->dir == NULL || cfg->gemini.base_url == NULL ||
        cfg->gemini.system_prompt == NULL || cfg->auth.session_cookie == NULL)
        goto fail;
    if (access(path, R_OK) != 0) {
        diag_add(d, path, 0, "cannot read config: %s", strerror(errno));
        goto fail;
    }
    if (load_agent_yaml(cfg, d) != 0 || config_finish(cfg, d) != 0)
        goto fail;
    load_gemini_yaml(cfg, d);
    return cfg;
fail:
    config_free(cfg);
    return NULL;
}

void
config_print_settings(const struct config *cfg, FILE *out)
{
    fprintf(out, "settings of %s:\n", cfg->path);
    settings_print(out, &agent_table, cfg, "");
    fprintf(out, "settings of %s:\n", cfg->gemini.path);
    settings_print(out, &gemini_table, cfg, "");
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
