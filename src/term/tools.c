/*
 * tools.c - the terminal session's tools and permission state (tools.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/tools.h"
#include "agent/toolbridge.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "core/sbuf.h"
#include "plugins/builtin.h"
#include "plugins/mcp.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugins the terminal exposes (docs/commands.md, "chat"). */
static char plugin_cli[] = "cli", plugin_file_edit[] = "file_edit";
static char *terminal_plugins[] = {plugin_cli, plugin_file_edit, NULL};

/* The one whose tools acceptEdits allows. */
#define EDIT_PLUGIN "file_edit"

#define BASE_INSTRUCTION                                                       \
    "You are gemini-agent, a coding agent working in the user's terminal, "    \
    "in the folder %s. Use the tools you are given to read and change "        \
    "files and to run commands there; a call may be refused by the user's "    \
    "permission settings, then say what you would have done. Answer "          \
    "briefly."

int
term_tools_init(struct term_tools *t, const struct term_args *args,
                struct arena *life, struct status_error *err)
{
    t->mode = args->mode;
    t->life = life;
    return term_rules_parse(args, life, &t->rules, err);
}

/* plugins.config's entries of the terminal's own plugins: rooted at the
 * working folder, file_edit reaching --add-dir's folders too. */
static int
root_own_plugins(json_t *conf, const struct term_args *args, const char *cwd)
{
    for (size_t i = 0; terminal_plugins[i] != NULL; i++) {
        json_t *c = json_object_get(conf, terminal_plugins[i]);
        if (!json_is_object(c) && json_object_set_new(conf, terminal_plugins[i],
                                                      c = json_object()) != 0)
            return -1;
        if (json_object_set_new(c, "root", json_string(cwd)) != 0)
            return -1;
    }
    if (args->nadd_dirs > 0) { /* --add-dir: beside the cwd */
        json_t *dirs = json_array();
        for (size_t i = 0; dirs != NULL && i < args->nadd_dirs; i++)
            if (json_array_append_new(dirs, json_string(args->add_dirs[i])) !=
                0)
                break;
        if (json_object_set_new(json_object_get(conf, EDIT_PLUGIN), "addDirs",
                                dirs) != 0)
            return -1;
    }
    return 0;
}

/* plugins.expose: the configuration's, and the terminal's own. */
static int
expose_own_plugins(struct term_tools *t)
{
    size_t n = 0;

    if (t->plugins_cfg.expose_all) /* a config entry exposes a built-in */
        return 0;
    for (char **e = t->plugins_cfg.expose; e != NULL && *e != NULL; e++)
        n++;
    t->expose = calloc(n + ARRAY_SIZE(terminal_plugins), sizeof(char *));
    if (t->expose == NULL)
        return -1;
    if (n > 0)
        memcpy(t->expose, t->plugins_cfg.expose, n * sizeof(char *));
    for (size_t i = 0; terminal_plugins[i] != NULL; i++) {
        bool named = false;
        for (size_t k = 0; k < n && !named; k++)
            named = strcmp(t->expose[k], terminal_plugins[i]) == 0;
        if (!named)
            t->expose[n++] = terminal_plugins[i];
    }
    t->plugins_cfg.expose = t->expose;
    return 0;
}

/*
 * Which plugins take part: the configuration's (plugins.dirs, expose,
 * config), plus the terminal's own (cli, file_edit), always exposed and
 * always rooted at the working folder whatever the configuration says of
 * them. Without a configuration, only the terminal's own.
 */
static int
plugins_config(struct term_tools *t, const struct term_args *args,
               const struct config *cfg, const char *cwd)
{
    const struct config_plugins *base = cfg ? &cfg->plugins : NULL;
    json_t *conf = base && base->config ? json_deep_copy(base->config)
                                        : json_object();

    if (base != NULL)
        t->plugins_cfg = *base;
    else
        t->plugins_cfg.file = "(terminal)";
    t->plugins_conf = conf;
    t->plugins_cfg.config = conf;
    if (conf == NULL || root_own_plugins(conf, args, cwd) != 0)
        return -1;
    return expose_own_plugins(t);
}

/* Declare the exposed actions as tools under their own names. */
static int
declare_tools(struct term_tools *t)
{
    json_t *decls = json_array();

    t->tools = calloc(t->set->count + 1, sizeof(*t->tools));
    if (t->tools == NULL || decls == NULL) {
        json_decref(decls);
        return -1;
    }
    for (size_t i = 0; i < t->set->count; i++) {
        const struct plugin_action *act = &t->set->actions[i];
        const char *name = act->tool ? act->tool : act->fn_name;
        /* no one is signed in at a terminal: a plugin that needs a user
         * (GEMINI_AGENT_NEEDS_USER) would refuse every call */
        if (!act->exposed || act->needs_user || name == NULL)
            continue;
        if (term_tools_find(t, name) != NULL) {
            fprintf(stderr,
                    "gemini-agent chat: two tools are named '%s'; %s is "
                    "left out\n",
                    name, act->name);
            continue;
        }
        t->tools[t->ntools] = (struct term_tool){
            name, act,
            act->so != NULL && strcmp(act->so->name, EDIT_PLUGIN) == 0};
        if (json_array_append_new(
                decls, toolbridge_declaration(name, act->description,
                                              act->input_schema)) != 0) {
            json_decref(decls);
            return -1;
        }
        t->ntools++;
    }
    if (t->ntools == 0) {
        json_decref(decls);
        return 0;
    }
    t->decls = json_pack("[{s:o}]", "functionDeclarations", decls);
    return t->decls ? 0 : -1;
}

int
term_tools_load(struct term_tools *t, const struct term_args *args,
                const struct config *cfg, const char *cwd, struct arena *life)
{
    struct diag d = DIAG_INIT;
    /* ::/0: the terminal's user fetches from their own machine, their
     * MCP servers on localhost among it, as any tool they run would; the
     * outbound policy guards a server's network from its visitors */
    static const struct netaddr anywhere = {{0}, 0};

    /* the shell tool may run up to its own bound; the watchdog must not
     * end the process first */
    t->actions_env.timeout_ms = BOUND_CLI_TIMEOUT_MS +
                                DEFAULT_ACTION_TIMEOUT_MS;
    t->actions_env.data_dir = cfg ? arena_strdup(life, cfg->actions.data_dir)
                                  : arena_printf(life, "%s/.gemini-agent", cwd);
    if (t->actions_env.data_dir == NULL ||
        plugins_config(t, args, cfg, cwd) != 0)
        return -1;
    const struct soplugin_env env = {
        .cfg = &t->plugins_cfg,
        .builtins = builtin_plugins,
        .fetchers = builtin_fetchers,
        .outbound = &anywhere,
        .noutbound = 1,
        .terminal = true,
        .config_dir = cfg ? cfg->dir : cwd,
        .data_dir = t->actions_env.data_dir,
    };
    t->set = plugin_load(NULL, 0, &env, NULL, &d);
    if (getenv("GEMINI_AGENT_LOG") != NULL)
        diag_print(&d, stderr, "gemini-agent chat: ");
    diag_release(&d);
    if (t->set == NULL)
        return -1;
    return declare_tools(t);
}

void
term_tools_release(struct term_tools *t)
{
    json_decref(t->decls);
    plugin_set_free(t->set);
    json_decref(t->plugins_conf);
    free(t->expose);
    free(t->tools);
}

const struct term_tool *
term_tools_find(const struct term_tools *t, const char *name)
{
    for (size_t i = 0; i < t->ntools; i++)
        if (strcmp(t->tools[i].name, name) == 0)
            return &t->tools[i];
    return NULL;
}

json_t *
term_tools_names(const struct term_tools *t)
{
    json_t *names = json_array();

    for (size_t i = 0; names != NULL && i < t->ntools; i++)
        json_array_append_new(names, json_string(t->tools[i].name));
    return names;
}

json_t *
term_tools_mcp_servers(const struct term_tools *t)
{
    const struct gemini_agent_plugin *mcp =
        builtin_mcp(GEMINI_AGENT_PLUGIN_ABI);
    json_t *list = json_array();
    const char *name;

    for (size_t i = 0; list != NULL && i < t->set->nso; i++) {
        const struct so_plugin *p = &t->set->so[i];
        if (p->ops != mcp || p->role != SO_EXPOSED)
            continue;
        for (size_t k = 0; (name = mcp_server_name(p->self, k)) != NULL; k++) {
            if (json_array_append_new(
                    list, json_pack("{s:s, s:s}", "name", name, "status",
                                    mcp_server_status(p->self, k))) != 0) {
                json_decref(list);
                return NULL;
            }
        }
    }
    return list;
}

char *
term_tools_system(const struct term_tools *t, const struct term_args *args,
                  const char *cwd)
{
    struct sbuf sb;
    const char *base = args->system_prompt;
    char *system = NULL;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    if (base != NULL && base[0] != '\0')
        rc |= sbuf_adds(&sb, base);
    else
        rc |= sbuf_addf(&sb, BASE_INSTRUCTION, cwd);
    for (size_t i = 0; i < t->set->nso; i++)
        if (t->set->so[i].instructions != NULL &&
            t->set->so[i].role == SO_EXPOSED)
            rc |= sbuf_addf(&sb, "\n\n%s", t->set->so[i].instructions);
    if (args->append_system != NULL && args->append_system[0])
        rc |= sbuf_addf(&sb, "\n\n%s", args->append_system);
    if (rc == 0)
        system = sbuf_detach(&sb, NULL);
    sbuf_release(&sb);
    return system;
}

int
term_tools_update(struct term_tools *t, const json_t *updates,
                  struct arena *life, struct status_error *err)
{
    return term_perm_update(updates, life, &t->rules, &t->mode, err);
}

void
term_tools_set_mode(struct term_tools *t, enum term_mode mode)
{
    t->mode = mode;
}

void
term_tools_allow(struct term_tools *t, const char *name)
{
    (void)term_rules_allow_tool(&t->rules, t->life, name);
}
