/*
 * config.h - the loaded configuration: agent.yaml and .gemini.yaml.
 *
 * config_load() reads conf/agent.yaml (docs/configuration.md) and the
 * Gemini settings file it names into one immutable `struct config`. It is
 * a leaf: it loads no plugins (the site does, see site.h). Each module is
 * handed only its own part: the Gemini client `gemini` (with its
 * timeout), server actions `actions` (folders, data folder, timeout), the
 * request path `limits`, identity `auth`, what clients may spend
 * `budget`.
 *
 * Problems go to a `struct diag` as `file:line: message`. They come in two
 * weights: a broken agent.yaml is fatal (config_load returns NULL: there is
 * nothing sound to serve with); a missing API key is not (the rest still
 * loads and serves; `check` fails).
 *
 * Not here: plugins (plugin.h), YAML parsing (ydoc.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CONFIG_H
#define APP_CONFIG_H

#include "core/common.h"
#include "core/logmsg.h"

#include <stdio.h>

struct diag;
struct netaddr;

struct config_limits {
    long max_body_bytes;
    long max_history_turns;
    long max_tools;
    long max_page_state_bytes;
    long max_loop_steps; /* env AGENT_MAX_LOOP_STEPS wins, clamped 1..15 */
    long max_requests_per_worker; /* 0 = never recycle */
    long request_timeout_ms;      /* the whole request (requestTimeoutMs) */
    long max_calls_per_turn;      /* calls of one model turn that run */
    /* a stream with no event for this long gets a status line, so a
     * proxy's read timeout never cuts it (streamHeartbeatMs) */
    long stream_heartbeat_ms;
    /* generationConfig.maxOutputTokens of every Gemini call: answer and
     * thinking of one step (maxOutputTokens) */
    long max_output_tokens;
    /* the bytes one request may send to Gemini over all its steps
     * (maxUpstreamBytes; default 4 x maxBodyBytes) */
    long max_upstream_bytes;
};

/* Where the API key came from; the key itself is never printed. */
enum config_key_source {
    CONFIG_KEY_NONE,
    CONFIG_KEY_FILE,
    CONFIG_KEY_ENV_GEMINI, /* GEMINI_API_KEY */
    CONFIG_KEY_ENV_GOOGLE, /* GOOGLE_API_KEY */
};

/* The terminal client's automatic compaction (.gemini.yaml
 * `compaction:`, term/compact.h): when a conversation's last prompt
 * reached at_percent of the model's window, its oldest turns are
 * summarised, keeping the last keep_turns user turns whole. */
struct config_compaction {
    bool enabled;    /* enabled (default true) */
    long window;     /* contextWindow: tokens; 0 = the model's own */
    long at_percent; /* atPercent (DEFAULT_COMPACT_AT_PERCENT) */
    long keep_turns; /* keepTurns (DEFAULT_COMPACT_KEEP_TURNS) */
};

#define CONFIG_COMPACTION_INIT                                                 \
    {                                                                          \
        true, 0, DEFAULT_COMPACT_AT_PERCENT, DEFAULT_COMPACT_KEEP_TURNS        \
    }

struct config_gemini {
    char *path;    /* the .gemini.yaml file */
    char *api_key; /* NULL when missing, empty or a placeholder */
    enum config_key_source key_source;
    char *model;
    char *system_prompt; /* "" when unset */
    char *base_url;      /* no trailing slash; env GEMINI_BASE_URL wins */
    long timeout_ms;     /* one call, retries included (geminiTimeoutMs) */
    struct config_compaction compaction;
};

/* What running server actions needs. */
struct config_actions {
    char **dirs;     /* the folders that hold plugin folders */
    size_t ndirs;    /* may be 0: `actions: []` names none */
    char *data_dir;  /* writable state of the actions (dataDir) */
    long timeout_ms; /* one action's watchdog (actionTimeoutMs) */
};

/* Where packages install plugins (`make install` creates it): the
 * default plugins.dirs. The Makefile sets it from PREFIX. */
#ifndef CONFIG_SYSTEM_PLUGIN_DIR
#define CONFIG_SYSTEM_PLUGIN_DIR "/usr/local/lib/gemini-agent/plugins"
#endif

/* Shared-object plugins (plugins: in agent.yaml; include/gemini-agent/
 * plugin.h). Absent: none are loaded. */
struct config_plugins {
    char **dirs; /* plugins.dirs: folders scanned for *.so */
    size_t ndirs;
    /* dirs is the default, CONFIG_SYSTEM_PLUGIN_DIR: a folder that need
     * not exist (no package installed a plugin yet) */
    bool dirs_default;
    bool expose_all; /* plugins.expose: all (the default) */
    char **expose;   /* ... or these names, NULL-terminated */
    /* plugins.enrichmentOnly: names loaded only to enrich prompts (no
     * tools, commands or instructions), NULL-terminated, or NULL */
    char **enrichment_only;
    struct json_t *config; /* plugins.config: {NAME: {...}}, owned, or NULL */
    const char *file;      /* agent.yaml (the config's path, borrowed) and */
    int expose_line; /* where plugins.expose is, for the registry's reports */
    /* where each plugins.config.<name> is: {name: line}, owned, or NULL */
    struct json_t *config_lines;
    /* where plugins.config.permission is (0: absent): the site reads it
     * with the permission engine (registry/permission.h, a layer above
     * this one) and reports its errors at this line */
    int permission_line;
};

/* The run API (policy: and store: in agent.yaml). */
struct config_run {
    char *store;          /* "sqlite:PATH"; default sqlite:<dataDir>/agent.db */
    bool side_effects;    /* policy.sideEffects; env
                            * AGENT_SIDE_EFFECTS_ENABLED=false wins */
    long approval_ttl_ms; /* policy.approvalTtlMs */
    long ticket_ttl_ms;   /* policy.ticketTtlMs: the chat's approval
                            * tickets (agent/seal.h) */
    struct json_t *allow; /* policy.allow: the site's allow rules, owned */
    char *persona;        /* policy.persona: the run API's instruction */
    char **context_types; /* policy.contextTypes, NULL-terminated */
    /* policy.actions: {<name>: {approval: never}}: actions with side
     * effects the chat runs without asking the visitor (the owner takes
     * the risk, e.g. for an idempotent one); NULL-terminated, or NULL */
    char **approval_never;
};

/* The web server in front of the responder, as auth.remoteUser.server
 * names it: which variables it sets from its own sign-in. */
enum config_web_server {
    CONFIG_SERVER_NONE,   /* auth.remoteUser absent: trust no variable */
    CONFIG_SERVER_NGINX,  /* sets what a fastcgi_param line says */
    CONFIG_SERVER_APACHE, /* its auth modules set REMOTE_USER */
};

/* Who a request is (the `auth:` section; http/auth.h reads it). */
struct config_auth {
    /* remoteUser: {variable, server}: the CGI variable (FastCGI param)
     * that the web server sets from its own sign-in and that names the
     * user, or NULL: none is trusted. Only names no client can set are
     * accepted (config.c, load_remote_user): never HTTP_*, nor
     * REMOTE_USER behind nginx, whose fastcgi_params fills it from any
     * client's Basic header. The old trustRemoteUser: true is refused. */
    char *remote_user_var;
    enum config_web_server remote_user_server;
    /* secretFile: the file of the secret that signs session tokens
     * (token.h); NULL = tokens are not accepted. The site loads it. */
    char *secret_file;
    char *session_cookie; /* sessionCookie: the cookie that carries one */
};

#define CONFIG_DEFAULT_SESSION_COOKIE "ga_session"

/* Who may run an action with side effects over POST /_jay/actions/<name>
 * (http.directActions). */
enum config_direct {
    CONFIG_DIRECT_READ_ONLY,     /* nobody: side effects go through the
                                  * assistant, which asks first (default) */
    CONFIG_DIRECT_AUTHENTICATED, /* a signed-in user the policy allows */
};

/* One budget's ceilings (budget.perIp, budget.perUser, budget.site):
 * 0 = unlimited. */
struct config_ceiling {
    long requests_per_minute;
    long tokens_per_day;
};

/* What a client may spend (budget:, docs/configuration.md "Budget"). */
struct config_budget {
    struct config_ceiling per_ip, per_user, site;
    /* trustForwardedFor: the proxies whose X-Forwarded-For names the
     * client; owned */
    struct netaddr *trusted;
    size_t ntrusted;
    /* any ceiling is set: requests are counted (in the store); else the
     * request path never touches the store for a budget */
    bool on;
};

/* GET /_jay/status (http.status): off unless `allow` names addresses. */
struct config_status {
    struct netaddr *allow; /* owned */
    size_t nallow;
    bool on;
};

/* Where the built-in plugins may fetch from besides the public Internet
 * (outbound.allow; plugins/outbound.h): loopback, private, link-local
 * and other reserved addresses are refused unless listed here. */
struct config_outbound {
    struct netaddr *allow; /* owned */
    size_t nallow;
};

/* http.cors: the other origins whose pages may call the responder
 * (http/cors.h). Each is exact, as a browser sends it in Origin:
 * lower-case "scheme://host[:port]", no default port, no path. */
struct config_cors {
    char **origins; /* NULL-terminated, owned; NULL: off */
    size_t norigins;
};

/* log: how log lines look and where they go (core/logmsg.h,
 * docs/logging.md); serve and CGI apply them, other commands do not. */
struct config_log {
    enum logmsg_format format; /* format: text (the default) | json */
    char *file; /* file: PATH (relative to agent.yaml's folder), owned;
                 * NULL: stderr, the web server's error log */
};

/* What the chat accepts in the history a browser sends (history:). */
struct config_history {
    unsigned allow_parts; /* allowParts, as agent/history.h's bits */
    /* verify: strict (true, the default): model turns and the server's
     * answers must carry the server's signature (agent/seal.h); off:
     * the browser's history is taken as it is (imported conversations) */
    bool verify;
};

struct config {
    char *path; /* agent.yaml as given */
    char *dir;  /* its folder: the base of relative paths */
    struct config_limits limits;
    struct config_gemini gemini;
    struct config_actions actions;
    struct config_plugins plugins;
    struct config_run run;
    struct config_history history;
    enum config_direct direct_actions;
    struct config_budget budget;
    struct config_status status;
    struct config_outbound outbound;
    struct config_cors cors;
    struct config_log log;

    struct config_auth auth;
    /* allowReadableKeyFile: serve even when the file holding the key is
     * open to group or others (config_key_file_exposed) */
    bool allow_readable_key_file;
};

/* The default model when .gemini.yaml names none
 * (docs/internals/gemini-wire.md §9). */
#define CONFIG_DEFAULT_MODEL    "gemini-3.8-flash"
#define CONFIG_DEFAULT_BASE_URL "https://generativelanguage.googleapis.com"
/* The run API's instruction when policy.persona says none. */
#define CONFIG_DEFAULT_PERSONA                                                 \
    "You are a personal assistant. You act for the signed-in user with the "   \
    "tools you are given, and answer in plain, short sentences."

/*
 * Load the configuration rooted at `path` (agent.yaml). Returns a new
 * config (free with config_free) or NULL when agent.yaml itself is unusable.
 * Every problem found, fatal or not, is added to `d`.
 */
struct config *config_load(const char *path, struct diag *d);

/*
 * Does the API key come from the Gemini settings file (gemini.path), and
 * can group or others read or write that file? Then true, with its
 * permission bits (st_mode & 0777) in *mode. False when the key comes from
 * the environment or nowhere, or the file is the owner's alone. `serve`
 * refuses such a file unless allow_readable_key_file is set.
 */
bool config_key_file_exposed(const struct config *cfg, unsigned *mode);

/*
 * Does the API key come from the Gemini settings file, and does that file
 * (a symlink's target) belong to a user other than the one running and
 * root? Its owner can change its mode and contents at will: `serve`
 * refuses it as it refuses an exposed file. The owner's uid in *uid.
 */
bool config_key_file_foreign(const struct config *cfg, unsigned *uid);

/* The config file to use when none is given: $GEMINI_AGENT_CONFIG, else
 * "conf/agent.yaml". Static storage or the environment's; do not free. */
const char *config_default_path(void);

/*
 * The config file of a CGI run (the one decision, main.c asks it):
 * $GEMINI_AGENT_CONFIG; else `agent.yaml` in the folder of the program
 * the web server ran, $SCRIPT_FILENAME (absolute), when that file exists;
 * else config_default_path(). A shared host's suEXEC drops the SetEnv
 * that would name the config but keeps SCRIPT_FILENAME, so a site that is
 * a folder holding gemini-agent.cgi and agent.yaml needs no setting.
 * SCRIPT_FILENAME rather than /proc/self/exe: where a host links one
 * installed binary into each site (no suEXEC, which refuses symlinks),
 * only the script's path names the site's folder. Writes into buf[size]
 * when it builds the path; returns buf, the environment's or static text.
 */
const char *config_cgi_path(char *buf, size_t size);

/*
 * Print every setting of agent.yaml and of the Gemini settings file with
 * the value `cfg` holds, one "  key.path: value - what it is" line each,
 * from the tables the files are read with (`check --settings`). The API
 * key is never printed, only where it came from.
 */
void config_print_settings(const struct config *cfg, FILE *out);

void config_free(struct config *cfg);

#endif /* APP_CONFIG_H */
