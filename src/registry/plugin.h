/*
 * plugin.h - the server-action registry loaded from plugin folders.
 *
 * A plugin is a folder holding plugin.yaml (docs/plugins/README.md, "Server
 * actions"):
 *
 *     name: shop
 *     actions:
 *       - name: searchProducts
 *         action: ./search-products.jay-action   # listed, offered to the model
 *       - submitRating                           # HTTP only
 *
 * Each entry is bound to a compiled-in handler (handler.h) by its
 * registered name `<plugin>.<name>`. Entries with a .jay-action carry a
 * description and schemas and are "listed": GET /_jay/actions and the
 * commands show them with their schemas. Listed entries are also
 * "exposed": declared to Gemini as `action_<plugin>_<name>` (every
 * character outside [A-Za-z0-9_] mapped to '_'), resolved back through an
 * explicit map, never by rewriting the name.
 *
 * The exception is an entry that says `route: chat`: the chat protocol's
 * own actions (geminiAgent.sendMessage, .submitToolResults), which the
 * chat routes serve. Such an entry needs no handler, is listed with its
 * schemas, and is never exposed: plugin_find_fn() never returns it. Only
 * the names the caller says a chat route serves may say so.
 *
 * Loading never stops at the first problem: a bad entry or plugin is
 * reported to the diag list and left out; the others load.
 *
 * The set is immutable after plugin_load(); it belongs to the site, which
 * also builds what is presented of it (the HTTP listing, the Gemini
 * declarations, the prompt's summary): the registry knows none of them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PLUGIN_H
#define APP_PLUGIN_H

#include "core/common.h"

struct arena;
struct config_plugins;
struct diag;
struct status_error;
struct json_t;
struct handler_def;
struct so_plugin;
struct soplugin_env;

/* What serves an entry's POST /_jay/actions/<name>. */
enum plugin_route {
    PLUGIN_ROUTE_HANDLER, /* its compiled-in handler (registry/action) */
    PLUGIN_ROUTE_CHAT,    /* `route: chat`: the chat routes (http/chat) */
};

struct plugin_action {
    char *name;        /* registered: "<plugin>.<name>" */
    char *fn_name;     /* Gemini function name: "action_<plugin>_<name>" */
    char *description; /* NULL for HTTP-only entries */
    char *source;      /* the .jay-action path; NULL for HTTP-only entries */
    char *plugin_dir;
    int line; /* the entry's line in plugin_dir/plugin.yaml */
    struct json_t *input_schema;  /* owned; NULL for HTTP-only entries */
    struct json_t *output_schema; /* owned; NULL when not declared */
    bool side_effects;
    /* has a .jay-action: listed with its description and schemas by GET
     * /_jay/actions and by the commands (actions list/show/types,
     * agent-kit) */
    bool listed;
    /* listed and offered to the model: declared to Gemini, named in the
     * system prompt, found by plugin_find_fn(). Never for route entries. */
    bool exposed;
    enum plugin_route route;
    /* NULL for PLUGIN_ROUTE_CHAT and for a shared-object plugin's tool */
    const struct handler_def *handler;
    /* A tool of a shared-object plugin (soplugin.h): the plugin, and the
     * tool's own name it is called by; NULL for the others. */
    const struct so_plugin *so;
    char *tool;
    /* the plugin's auto_approved_tools() names it: the chat runs it
     * unasked unless the permission policy denies it (http/chat.c) */
    bool auto_approved;
    /* its plugin says GEMINI_AGENT_NEEDS_USER: declared only where a user
     * is signed in (the run API), never to the public widget */
    bool needs_user;
};

/* A user command of a shared-object plugin (plugin.h's user_commands()):
 * run by the user, without the model. */
struct plugin_command {
    char *name; /* unique over all plugins */
    char *description;
    /* its output goes into the history the model sees next */
    bool share_with_model;
    /* it changes data: POST /_jay/commands runs it only as
     * http.directActions lets side-effecting actions run */
    bool side_effects;
    const struct so_plugin *so;
};

/* One plugin the registry found, of whichever kind (list_available and
 * list_exposed of the seed: `gemini-agent check` prints them). */
struct plugin_info {
    char *name;
    char *source;     /* its folder (plugin.yaml), .so file, or "built-in" */
    bool declarative; /* a plugin.yaml folder */
    bool exposed;     /* takes part (for a .so or built-in: loaded, its
                       * tools or only its enrichment); else available */
};

struct plugin_set {
    struct plugin_action *actions; /* sorted by name */
    size_t count;
    struct plugin_command *commands; /* sorted by name */
    size_t ncommands;
    /* the exposed shared-object plugins, sorted by name: owned, shut down
     * and closed by plugin_set_free() */
    struct so_plugin *so;
    size_t nso;
    /* every plugin found, exposed or not, sorted by name */
    struct plugin_info *plugins;
    size_t nplugins;
};

/*
 * Load every plugin found in the given folders (each folder's subfolders
 * that hold a plugin.yaml, in name order), then the built-in and
 * shared-object plugins of `so_env` (soplugin.h; NULL: none) with their
 * tools. `chat_routed` lists the registered names the chat routes serve (NULL-terminated; NULL: none):
 * only those entries may say `route: chat`. Returns a new set (possibly
 * empty) or NULL when out of memory. Problems are added to `d`, including
 * compiled-in handlers that no plugin.yaml entry names.
 */
struct plugin_set *plugin_load(char *const *dirs, size_t ndirs,
                               const struct soplugin_env *so_env,
                               const char *const *chat_routed, struct diag *d);

/* The action with registered name `name`, or NULL. */
const struct plugin_action *plugin_find(const struct plugin_set *set,
                                        const char *name);

/* The exposed action declared to Gemini as `fn_name`, or NULL (never a
 * route entry). */
const struct plugin_action *plugin_find_fn(const struct plugin_set *set,
                                           const char *fn_name);

/* The namespace of server actions as Gemini sees them. It is reserved:
 * nothing else (no page tool) may have a function name that starts so,
 * which keeps every name the model calls unambiguous. */
#define PLUGIN_FN_PREFIX "action_"

/* Does `name` lie in the server actions' namespace? */
bool plugin_is_fn_name(const char *name);

/* "shop.add-review" -> "action_shop_add_review" into out[size]; -1 if it
 * does not fit. */
int plugin_fn_name(const char *name, char *out, size_t size);

/* The user command named `name`, or NULL. */
const struct plugin_command *plugin_find_command(const struct plugin_set *set,
                                                 const char *name);

/*
 * Run command `c` with the argument string arg[len]. Returns 0 with its
 * output (text, in `a`) in *out / *out_len, or -1 with `err` set
 * (ST_BAD_REQUEST: the plugin refused the argument; ST_ACTION_FAILED).
 */
int plugin_run_command(const struct plugin_command *c, const char *data_dir,
                       const char *arg, size_t len, struct arena *a,
                       const char **out, size_t *out_len,
                       struct status_error *err);

/*
 * The enrichment pipeline: every plugin that subscribes (enrich_prompt),
 * in plugin-name order, gets the prompt the one before it returned.
 * *prompt / *len are the prompt in and, on success, the final prompt out
 * (in `a`, or the same text when none changed it); *metadata (may be
 * NULL) gets a new object, pinned to `a`, of each subscriber's metadata
 * by plugin name. Returns 0, or -1 with `err` set when a plugin fails
 * (the prompt is then not sent).
 */
int plugin_enrich_prompt(const struct plugin_set *set, const char *data_dir,
                         struct arena *a, const char **prompt, size_t *len,
                         struct json_t **metadata, struct status_error *err);

void plugin_set_free(struct plugin_set *set);

#endif /* APP_PLUGIN_H */
