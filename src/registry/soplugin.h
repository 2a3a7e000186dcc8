/*
 * soplugin.h - plugins built as shared objects (include/gemini-agent/
 * plugin.h): find, load, check, initialise, call, shut down.
 *
 * soplugin_load() takes the built-in plugins it is given (compiled in,
 * src/plugins/), then scans the folders of agent.yaml's `plugins.dirs` for
 * `*.so` files (name order), dlopen()s each, calls its factory and checks
 * its ABI and its operations; the exposed ones (`plugins.expose`) and the
 * enrichment-only ones (`plugins.enrichmentOnly`) are initialised with
 * their `plugins.config.<name>`, after it passed the plugin's
 * config_schema(). A built-in is exposed only when named, or with
 * `expose: all` when plugins.config has an entry for it. Any that fails is
 * reported to the diag list with its path and the reason and left out:
 * the others still load, and the server still starts. plugin.c turns the
 * loaded plugins' tools into registry entries (struct plugin_action);
 * action_run() calls them through soplugin_execute().
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SOPLUGIN_H
#define APP_SOPLUGIN_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

struct action_who;
struct arena;
struct config_plugins;
struct diag;
struct gemini_agent_out;
struct gemini_agent_plugin;
struct json_t;
struct netaddr;
struct status_error;

/* How a loaded plugin takes part (plugins.expose, plugins.enrichmentOnly;
 * register_plugin's `expose | enrichment_only` of the seed). */
enum so_role {
    SO_AVAILABLE,       /* found, not loaded: nothing of it is kept */
    SO_EXPOSED,         /* tools, commands, instructions, enrichment */
    SO_ENRICHMENT_ONLY, /* enrich_prompt() only */
};

/* The `path` of a plugin compiled into the binary. */
#define SOPLUGIN_BUILTIN "built-in"

/* What the loader is given besides agent.yaml. */
struct soplugin_env {
    const struct config_plugins *cfg; /* agent.yaml's plugins: */
    /* the built-in plugins' factories, NULL-terminated (NULL: none):
     * passed in, so the registry knows no plugin by name */
    const gemini_agent_plugin_factory *builtins;
    /* the built-ins that fetch from the network (plugins/builtin.h's
     * builtin_fetchers), NULL-terminated, or NULL: each gets the member
     * "outbound": {"allow": [outbound[0..noutbound), as text]} in its
     * configuration, the addresses it may reach besides the public
     * Internet (plugins/outbound.h; agent.yaml's outbound.allow) */
    const char *const *fetchers;
    const struct netaddr *outbound;
    size_t noutbound;
    /* loading for the terminal client: GEMINI_AGENT_TERMINAL_ONLY plugins
     * may be exposed; the web routes never set it */
    bool terminal;
    /* handed to initialize() (plugin.h's gemini_agent_init); NULL: "." */
    const char *config_dir; /* agent.yaml's folder */
    const char *data_dir;   /* dataDir */
    /* the plugins of the generation being replaced (a SIGHUP), or NULL:
     * one that is the same code with the same config keeps its instance
     * instead of being initialised again (soplugin_adopt) */
    const struct so_plugin *prev;
    size_t nprev;
    /* told of every valid plugin found, with how it takes part in the
     * end (SO_AVAILABLE: found, not loaded); NULL: not told */
    void (*found)(void *ctx, const char *name, const char *path,
                  enum so_role role);
    void *found_ctx;
    /* soplugin_add_library() only: the plugin.yaml whose library is
     * loaded (the plugin must have its name, and takes part as it does) */
    const char *library_of;
};

/* How a plugin named `name` that is not built in takes part, by
 * plugins.expose and plugins.enrichmentOnly (plugin.yaml folders too). */
enum so_role soplugin_role(const struct config_plugins *cfg, const char *name);

struct so_plugin {
    char *name; /* ops->name, copied */
    char *path; /* the .so file, or SOPLUGIN_BUILTIN */
    void *dl;   /* dlopen() handle; NULL for a built-in */
    enum so_role role;
    char *config; /* the JSON text initialize() was given */
    /* the instance is the previous generation's (env->prev), taken over
     * only by soplugin_adopt(): until then, never shut down from here */
    bool borrowed;
    /* a plugin.yaml's `library:`: its execute() runs that folder's
     * entries; its own declarations() are not read */
    bool library;
    const struct gemini_agent_plugin *ops; /* the plugin's, static */
    void *self;                            /* what initialize() set */
    char *instructions;  /* system_instructions(), copied; NULL for none */
    char *auto_approved; /* auto_approved_tools(), copied; NULL for none */
};

/*
 * Load, check and initialise the plugins of `env` that take part. Returns 0 with
 * `*out` a new array of `*n` plugins sorted by name (soplugin_free_all),
 * or -1 when out of memory. Problems go to `d`.
 */
int soplugin_load(const struct soplugin_env *env, struct so_plugin **out,
                  size_t *n, struct diag *d);

/* The plugin's declarations as a JSON array (a new reference), or NULL
 * after reporting to `d` why they are unusable. */
struct json_t *soplugin_declarations(const struct so_plugin *p, struct diag *d);

/*
 * Call `tool` of `p` with `input` (already validated), for `who` (its
 * user and conversation become ctx->user and ctx->conversation, its
 * cancelled() answers ctx->cancelled(); NULL: none). Returns 0 with
 * `*output` a new reference (an object), or -1 with `err` set:
 * ST_BAD_REQUEST for the plugin's "bad input", ST_ACTION_FAILED for its
 * failure or an answer that is not a JSON object. Answers live in `a`.
 * SOPLUGIN_ASKS_USER when the tool asks the user (GEMINI_AGENT_ASK_USER):
 * `*output` is then the question, normalised (registry/question.h); a
 * question that breaks its rules is ST_ACTION_FAILED.
 */
#define SOPLUGIN_ASKS_USER 1
int soplugin_execute(const struct so_plugin *p, const char *tool,
                     const char *data_dir, const struct action_who *who,
                     const struct json_t *input, struct arena *a,
                     struct json_t **output, struct status_error *err);

/* Call run_command / enrich_prompt of `p` (the host side of the ABI):
 * 0 with the answer in `o` (memory of `a`), or -1 with `err` set. */
int soplugin_run_command(const struct so_plugin *p, const char *command,
                         const char *data_dir, const char *arg, size_t len,
                         struct arena *a, struct gemini_agent_out *o,
                         struct status_error *err);
int soplugin_enrich(const struct so_plugin *p, const char *data_dir,
                    const char *prompt, size_t len, struct arena *a,
                    struct gemini_agent_out *prompt_out,
                    struct gemini_agent_out *meta_out,
                    struct status_error *err);

/*
 * Load the shared object at `path`, a plugin.yaml's `library:`, which must
 * be the plugin named `plugin`, and add it to `*list` (of `*n`, kept
 * sorted by name) as a library. Returns 1 added, 0 left out (reported),
 * -1 out of memory.
 */
int soplugin_add_library(const struct soplugin_env *env, const char *path,
                         const char *plugin, struct so_plugin **list, size_t *n,
                         struct diag *d);

/* The new generation `list` takes over the instances it borrowed from
 * `prev` (a reload that goes ahead): they are no longer prev's to shut
 * down. Not called when the new generation is discarded. */
void soplugin_adopt(struct so_plugin *list, size_t n, struct so_plugin *prev,
                    size_t nprev);

/* Shut down each plugin (not the borrowed), close it, free the array. */
void soplugin_free_all(struct so_plugin *list, size_t n);

#endif /* APP_SOPLUGIN_H */
