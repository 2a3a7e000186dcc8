/*
 * gemini-agent/plugin.h - the public ABI of a gemini-agent plugin.
 *
 * The one header a plugin author needs: it includes only <stddef.h> and
 * asks for no library (no jansson: JSON crosses the boundary as text with
 * explicit lengths). A plugin is a shared object that exports
 *
 *     const struct gemini_agent_plugin *
 *     gemini_agent_plugin_create(unsigned host_abi);
 *
 * and lies in a folder named by agent.yaml (or in the system plugin
 * folder, PREFIX/lib/gemini-agent/plugins, where a package installs it):
 *
 *     plugins:
 *       dirs: [plugins]          # scanned for *.so, in name order
 *       expose: all              # or a list of plugin names
 *       enrichmentOnly: []       # plugins that only enrich prompts
 *       config:
 *         hello: {greeting: Hi}  # handed to that plugin's initialize()
 *
 * The server's built-in plugins (src/plugins/: mcp, web_search, ...) are
 * this same struct compiled in, so everything below holds for them too.
 *
 * The server loads each `*.so` (dlopen RTLD_NOW | RTLD_LOCAL), calls the
 * factory with GEMINI_AGENT_PLUGIN_ABI and checks the `abi` member of what
 * it returns: a plugin built against another ABI is reported and left
 * out, as is one whose factory is missing, whose config does not match
 * its config_schema(), or whose initialize() fails;
 * the others still load and the server starts. `gemini-agent check` and
 * the serve log name each such file with the reason.
 *
 * Model tools and what happens to them
 * ------------------------------------
 * `declarations()` returns a JSON array, one object per tool:
 *
 *     [{"name": "greet",
 *       "description": "Greet someone by name",
 *       "parameters": {"type": "object",
 *                      "properties": {"who": {"type": "string"}},
 *                      "required": ["who"]},
 *       "sideEffects": false}]
 *
 * Each tool joins the server's one registry of actions beside the
 * `.jay-action` ones: registered as "<plugin>.<tool>", declared to Gemini
 * as `action_<plugin>_<tool>` (characters outside [A-Za-z0-9_] become
 * '_'), listed by GET /_jay/actions. The arguments the model sends are
 * validated against `parameters` (a JSON Schema, type object) before
 * execute() sees them. A tool with "sideEffects": true goes through the
 * same approval as any action that changes data (the chat asks the
 * visitor, the run API's policy decides), unless auto_approved_tools()
 * names it. system_instructions() of every exposed plugin are added to
 * the model's system instruction in plugin-name order (a stable prefix).
 *
 * The operations (the seed's Python ToolPlugin protocol, in C)
 * -----------------------------------------------------------
 *   name                 unique: letters, digits, '_' or '-', leading
 *                        letter or '_', at most 64 bytes. Required.
 *   declarations()       the tools, as above. Required (may be "[]").
 *                        Called after initialize(), so a plugin may
 *                        offer tools its configuration decides.
 *   execute()            run one tool. Required.
 *   initialize(init)     called once when the plugin is exposed, with
 *                        its `plugins.config.<name>` as JSON text ("{}"
 *                        when none), the folder of agent.yaml (the base
 *                        of relative paths in that config) and the data
 *                        folder; may set *self to its instance.
 *                        Return 0, or non-zero with a reason in
 *                        err[errsize]: the plugin is then left out (and
 *                        shutdown() is not called).
 *   shutdown(self)       called when the plugin is unexposed, its config
 *                        changed (after the new instance started) or the
 *                        server stops: free the instance. A reload that
 *                        changes neither the plugin nor its config keeps
 *                        the instance: neither call happens.
 *   system_instructions()  text for the model about the tools, or NULL.
 *   auto_approved_tools()  JSON array of tool names that need no
 *                        approval even with side effects, or NULL.
 *   user_commands()      JSON array [{"name", "description",
 *                        "shareWithModel": bool, "sideEffects": bool}]
 *                        of commands the user runs directly, without
 *                        the model, or NULL (one with side effects runs
 *                        over HTTP only as http.directActions lets an
 *                        action with side effects run);
 *   run_command()        ... and how one runs (argument string in, text
 *                        out). Both NULL when there are none.
 *   enrich_prompt()      subscribe to every user prompt: return it,
 *                        possibly changed, and metadata (a JSON object),
 *                        or NULL to take no part.
 *   config_schema()      the JSON Schema of its plugins.config entry.
 *   flags                GEMINI_AGENT_TERMINAL_ONLY for tools that reach
 *                        files or a shell; GEMINI_AGENT_NEEDS_USER for
 *                        tools about the signed-in user.
 * Every member after `abi` and `name` except declarations and execute is
 * optional and may be NULL.
 *
 * Results, errors and who frees what
 * ----------------------------------
 * execute(), run_command() and enrich_prompt() write their answer into a
 * `struct gemini_agent_out` with ctx->alloc() (or gemini_agent_reply(),
 * which copies). That memory belongs to the host: it lives as long as
 * the request and is freed with it - never free it, never keep it. On
 * success (GEMINI_AGENT_OK) execute's text is the result, a JSON object;
 * with GEMINI_AGENT_ASK_USER it is a question for the user (see the
 * enum); on an error code it is a message for the visitor (no paths, no
 * internals). Strings the plugin returns from declarations(),
 * system_instructions(), auto_approved_tools() and user_commands() stay
 * the plugin's: they must stay valid and unchanged until shutdown(); the
 * host copies what it keeps. Input strings (`tool`, `args`, `prompt`)
 * are the host's, valid during the call only.
 *
 * Threads and time
 * ----------------
 * execute() runs in the worker's request threads, several at once: it
 * must be thread-safe, touch no signal, and keep state only where it
 * locks it (files under ctx->data_dir, say). It runs under the action
 * watchdog (limits.actionTimeoutMs): a tool that hangs takes its worker
 * down, as a built-in action's would. A long one polls
 * ctx->cancelled() (ABI 3) and stops when it says so.
 * initialize() and shutdown() run in the process that loads the site
 * (at start and on SIGHUP: the new instance is initialised before the
 * old one is shut down, and two may live at once); worker processes are
 * forked from it and inherit the initialised instance, so threads and
 * sockets made in initialize() do not follow into them.
 *
 * A minimal plugin (tests/plugins/hello/hello.c is a complete one):
 *
 *     #include <gemini-agent/plugin.h>
 *     #include <string.h>
 *
 *     static const char *decls(void *self) {
 *         (void)self;
 *         return "[{\"name\":\"ping\",\"description\":\"Answer pong\","
 *                "\"parameters\":{\"type\":\"object\"}}]";
 *     }
 *     static int run(void *self, const struct gemini_agent_ctx *ctx,
 *                    const char *tool, const char *args, size_t args_len,
 *                    struct gemini_agent_out *out) {
 *         (void)self; (void)tool; (void)args; (void)args_len;
 *         return gemini_agent_reply(ctx, out, "{\"pong\":true}", 13);
 *     }
 *     static const struct gemini_agent_plugin ping = {
 *         .abi = GEMINI_AGENT_PLUGIN_ABI, .name = "ping",
 *         .declarations = decls, .execute = run,
 *     };
 *     const struct gemini_agent_plugin *
 *     gemini_agent_plugin_create(unsigned host_abi) {
 *         return host_abi == GEMINI_AGENT_PLUGIN_ABI ? &ping : NULL;
 *     }
 *
 * built with `cc -shared -fPIC -I<gemini-agent>/include -o ping.so ping.c`.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef GEMINI_AGENT_PLUGIN_H
#define GEMINI_AGENT_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a member is added, removed or changes meaning: the
 * server loads only plugins built against its own number. */
#define GEMINI_AGENT_PLUGIN_ABI 3

/* The factory's name, for the host's dlsym(). */
#define GEMINI_AGENT_PLUGIN_FACTORY "gemini_agent_plugin_create"

/* What execute(), run_command() and enrich_prompt() return. */
enum gemini_agent_rc {
    GEMINI_AGENT_OK = 0,
    /* the caller's mistake (e.g. an unknown id): out holds the message */
    GEMINI_AGENT_BAD_INPUT = 1,
    /* the plugin's own failure: out holds the message, or is empty */
    GEMINI_AGENT_FAILED = 2,
    /* execute() only: the call needs the user's answer before it has a
     * result. `out` holds the question, a JSON object
     *     {"questions": [{"id", "text", "kind": "single" | "multiple" |
     *                     "text", "options"?: [string], "required"?: bool,
     *                     "default"?: string | [string]}, ...]}
     * (the host checks it: an invalid one is the plugin's failure). The
     * host runs nothing more of that call: the widget or the run API asks
     * the user, checks the answer against the questions, and the answer,
     * {"answers": {"<id>": value, ...}}, becomes the call's result - the
     * functionResponse the model reads. A user who moves on instead
     * leaves the call answered with an error ("not answered").
     * docs/plugins/clarification.md describes the channel. */
    GEMINI_AGENT_ASK_USER = 3,
};

/* The host's side of one call. */
struct gemini_agent_ctx {
    unsigned abi;         /* GEMINI_AGENT_PLUGIN_ABI of the host */
    const char *data_dir; /* writable folder for state (dataDir) */
    /* Memory for an answer, freed by the host when the request ends;
     * NULL when out of memory. */
    void *(*alloc)(const struct gemini_agent_ctx *ctx, size_t size);
    void *host; /* the host's, opaque */
    /* Who and where (ABI 2), passed to execute() only; either may be
     * NULL. `user` is the authenticated user of the run API (NULL on the
     * public widget); `conversation` a stable key of the conversation:
     * the run API's thread id, or in the widget "chat:<id>", a key the
     * server minted for that conversation (signed with the site secret,
     * so a client can neither choose it nor guess another's; see
     * docs/plugins/todo.md); NULL for a direct POST /_jay/actions call.
     * Keep per-conversation state under it - hashed: it is any string. */
    const char *user;
    const char *conversation;
    /* Should the call stop now (ABI 3)? Non-zero once whoever asked for
     * it has given up on it: the terminal client's user interrupted the
     * turn. Never NULL in a call from the host; it answers 0 where nobody
     * can cancel (the web routes) and outside execute(). A tool that
     * runs long (a command, a download) asks now and then - it is cheap,
     * but not free: at most every 100 ms or so - and when told to stop,
     * stops what it started and answers an error (e.g. Bash: "Command
     * was aborted before completion"). Call it from the thread that runs
     * execute() only. */
    int (*cancelled)(const struct gemini_agent_ctx *ctx);
};

/* flags (ABI 2) */
/* Only the terminal client may expose it (file and shell tools): the
 * web routes refuse to, and `gemini-agent check` says so. */
#define GEMINI_AGENT_TERMINAL_ONLY 0x1u
/* Its tools are about the signed-in user (ctx->user): declared where a
 * user is known - the run API, the terminal client - and never to the
 * public widget. execute() must still refuse a call without a user (a
 * direct POST /_jay/actions, a model that names an undeclared tool). */
#define GEMINI_AGENT_NEEDS_USER    0x2u

/* What initialize() is given; the strings are the host's, valid during
 * the call only (copy what you keep). */
struct gemini_agent_init {
    const char *config; /* plugins.config.<name>, JSON text, or "{}" */
    size_t config_len;
    const char *config_dir; /* agent.yaml's folder: resolve relative paths
                             * of the config against it */
    const char *data_dir;   /* writable folder for state (dataDir) */
};

/* An answer: text[len] (need not be NUL-terminated), from ctx->alloc. */
struct gemini_agent_out {
    char *text;
    size_t len;
};

struct gemini_agent_plugin {
    unsigned abi;     /* GEMINI_AGENT_PLUGIN_ABI the plugin was built for */
    const char *name; /* see above */

    /* `self` is what initialize() set (NULL when it is NULL or set none):
     * one instance per exposure, so a reload can initialise the new one
     * before it shuts the old one down. */
    const char *(*declarations)(void *self);
    int (*execute)(void *self, const struct gemini_agent_ctx *ctx,
                   const char *tool, const char *args, size_t args_len,
                   struct gemini_agent_out *out);

    int (*initialize)(const struct gemini_agent_init *init, void **self,
                      char *err, size_t errsize);
    void (*shutdown)(void *self);
    const char *(*system_instructions)(void *self);
    const char *(*auto_approved_tools)(void *self);
    const char *(*user_commands)(void *self);
    int (*run_command)(void *self, const struct gemini_agent_ctx *ctx,
                       const char *command, const char *arg, size_t arg_len,
                       struct gemini_agent_out *out);
    int (*enrich_prompt)(void *self, const struct gemini_agent_ctx *ctx,
                         const char *prompt, size_t prompt_len,
                         struct gemini_agent_out *new_prompt,
                         struct gemini_agent_out *metadata);

    /* ABI 2 */
    /* A JSON Schema (the subset the server validates .jay-action inputs
     * with) of plugins.config.<name>: the host validates the config
     * against it before initialize(), and a config that fails is
     * reported with its agent.yaml line (`gemini-agent check`) and the
     * plugin left out. NULL: any object. */
    const char *(*config_schema)(void);
    unsigned flags; /* GEMINI_AGENT_TERMINAL_ONLY | GEMINI_AGENT_NEEDS_USER */
};

/* The factory every plugin exports. Returns the plugin (static storage
 * is fine: it is never freed by the host), or NULL to decline, e.g. when
 * host_abi is not the one it was built for. */
typedef const struct gemini_agent_plugin *(*gemini_agent_plugin_factory)(
    unsigned host_abi);

/* Copy text[len] into host memory as `out`: GEMINI_AGENT_OK, or
 * GEMINI_AGENT_FAILED when out of memory. */
static inline int
gemini_agent_reply(const struct gemini_agent_ctx *ctx,
                   struct gemini_agent_out *out, const char *text, size_t len)
{
    char *p = (char *)ctx->alloc(ctx, len + 1);

    if (p == NULL)
        return GEMINI_AGENT_FAILED;
    for (size_t i = 0; i < len; i++)
        p[i] = text[i];
    p[len] = '\0';
    out->text = p;
    out->len = len;
    return GEMINI_AGENT_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* GEMINI_AGENT_PLUGIN_H */
