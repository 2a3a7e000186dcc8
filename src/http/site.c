/*
 * site.c - load a site and prebuild what requests read (see site.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/site.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/token.h"
#include "http/dispatch.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "plugins/builtin.h"
#include "agent/prompt.h"
#include "agent/toolbridge.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* {"<key>": list} as JSON text, taking the reference to `list` (NULL: it
 * could not be built). A heap string, or NULL when out of memory. */
static char *
listing_text(const char *key, json_t *list, size_t *len)
{
    json_t *root = list ? json_pack("{s:o}", key, list) : NULL;
    char *out = root ? jsonout_dumps(root, APP_JSON_FLAGS, JSONOUT_UNBOUNDED,
                                     len)
                     : NULL;

    json_decref(root);
    return out;
}

char *
site_listing(const struct plugin_set *set, size_t *len)
{
    json_t *list = json_array();

    for (size_t i = 0; list != NULL && i < set->count; i++) {
        const struct plugin_action *a = &set->actions[i];
        if (a->listed &&
            json_array_append_new(
                list,
                json_pack("{s:s, s:s, s:O, s:O*, s:b}", "name", a->name,
                          "description", a->description, "inputSchema",
                          a->input_schema, "outputSchema", a->output_schema,
                          "sideEffects", a->side_effects)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return listing_text("actions", list, len);
}

/* The body of GET /_jay/commands: {"commands": [{name, description,
 * shareWithModel}]} of the exposed plugins' user commands. A heap string,
 * or NULL when out of memory. */
static char *
commands_listing(const struct plugin_set *set, size_t *len)
{
    json_t *list = json_array();

    for (size_t i = 0; list != NULL && i < set->ncommands; i++) {
        const struct plugin_command *c = &set->commands[i];
        if (json_array_append_new(
                list, json_pack("{s:s, s:s, s:b, s:b}", "name", c->name,
                                "description", c->description, "shareWithModel",
                                c->share_with_model, "sideEffects",
                                c->side_effects)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return listing_text("commands", list, len);
}

/* The declarations, written once: "[a,b]" less its brackets. A heap
 * string, or NULL when out of memory. */
static char *
declarations_text(const json_t *decls, size_t *len)
{
    char *out = jsonout_dumps(decls, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, len);

    if (out != NULL) {
        *len -= 2;
        memmove(out, out + 1, *len);
        out[*len] = '\0';
    }
    return out;
}

/* {"parts":[{"text":<the instruction>}]}, written once. A heap string,
 * or NULL when out of memory. */
static char *
instruction_json(const char *text)
{
    struct sbuf sb;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_adds(&sb, "{\"parts\":[{\"text\":");
    rc |= jsonout_string(&sb, text, strlen(text));
    rc |= sbuf_adds(&sb, "}]}");
    if (rc != 0) {
        sbuf_release(&sb);
        return NULL;
    }
    return sbuf_detach(&sb, NULL);
}

/* The memory plugin keeps what the run API's instruction recalls: unless
 * plugins.config.memory names a store, it is the run API's (agent.yaml's
 * `store:`). Writing the entry also makes `expose: all` take memory, as
 * the run API always offered it; a plugins.expose list decides as for
 * any plugin. 0, or -1 out of memory. */
static int
memory_store(struct config *cfg)
{
    json_t *conf, *mem;

    if (cfg->plugins.config == NULL &&
        (cfg->plugins.config = json_object()) == NULL)
        return -1;
    conf = cfg->plugins.config;
    mem = json_object_get(conf, "memory");
    if (mem == NULL) {
        if (json_object_set_new(conf, "memory", mem = json_object()) != 0)
            return -1;
    }
    if (!json_is_object(mem) || json_object_get(mem, "store") != NULL)
        return 0; /* the plugin's schema reports a wrong entry */
    return json_object_set_new(mem, "store", json_string(cfg->run.store));
}

struct site *
site_load(const char *config_path, struct diag *d)
{
    return site_reload(config_path, NULL, d);
}

void
site_adopt(struct site *next, struct site *prev)
{
    soplugin_adopt(next->actions->so, next->actions->nso, prev->actions->so,
                   prev->actions->nso);
}

struct site *
site_reload(const char *config_path, const struct site *prev, struct diag *d)
{
    struct site *s = calloc(1, sizeof(*s));

    if (s == NULL)
        goto oom;
    s->cfg = config_load(config_path, d);
    if (s->cfg == NULL) {
        free(s);
        return NULL;
    }
    if (s->cfg->auth.secret_file != NULL) {
        struct status_error err = {0};
        if (token_secret_load(s->cfg->auth.secret_file, s->auth_secret,
                              sizeof(s->auth_secret), &s->auth_secret_len,
                              &err) != 0) {
            diag_add(d, s->cfg->path, 0, "auth.secretFile: %s", err.text);
            site_free(s);
            return NULL;
        }
    }
    /* A policy that cannot be read is fatal, as a broken agent.yaml is:
     * serving without the deny entries the owner wrote would fail open. */
    const json_t *perm = json_object_get(s->cfg->plugins.config, "permission");
    if (perm != NULL) {
        struct status_error err = {0};
        if (permission_policy_from_json(perm, &s->permission, &err) != 0) {
            diag_add(d, s->cfg->path, s->cfg->plugins.permission_line,
                     "plugins.config.%s", err.text);
            site_free(s);
            return NULL;
        }
        s->has_permission = true;
    }
    if (memory_store(s->cfg) != 0)
        goto oom;
    const struct soplugin_env env = {
        .cfg = &s->cfg->plugins,
        .builtins = builtin_plugins,
        .fetchers = builtin_fetchers,
        .outbound = s->cfg->outbound.allow,
        .noutbound = s->cfg->outbound.nallow,
        .config_dir = s->cfg->dir,
        .data_dir = s->cfg->actions.data_dir,
        .prev = prev ? prev->actions->so : NULL,
        .nprev = prev ? prev->actions->nso : 0,
    };
    s->actions = plugin_load(s->cfg->actions.dirs, s->cfg->actions.ndirs, &env,
                             dispatch_chat_actions, d);
    if (s->actions == NULL)
        goto oom;
    s->declarations = toolbridge_action_declarations(s->actions, false);
    json_t *user_decls = toolbridge_action_declarations(s->actions, true);
    s->user_declarations_text =
        user_decls
            ? declarations_text(user_decls, &s->user_declarations_text_len)
            : NULL;
    json_decref(user_decls);
    s->declarations_text = s->declarations
                               ? declarations_text(s->declarations,
                                                   &s->declarations_text_len)
                               : NULL;
    s->prompt_head = prompt_head(s->cfg->gemini.system_prompt, s->actions);
    s->instruction_json = s->prompt_head ? instruction_json(s->prompt_head)
                                         : NULL;
    s->listing = site_listing(s->actions, &s->listing_len);
    s->commands = commands_listing(s->actions, &s->commands_len);
    if (s->declarations_text == NULL || s->user_declarations_text == NULL ||
        s->instruction_json == NULL || s->listing == NULL ||
        s->commands == NULL)
        goto oom;
    return s;
oom:
    diag_add(d, config_path, 0, "out of memory loading the site");
    site_free(s);
    return NULL;
}

int
site_check_serving(const struct site *s, struct diag *d)
{
    /* A signed history needs the secret (agent/seal.h); without one every
     * conversation would end at its second message. */
    if (s->cfg->history.verify && s->auth_secret_len == 0) {
        diag_add(d, s->cfg->path, 0,
                 "history.verify is strict (the default): the chat signs the "
                 "turns it writes with the site secret, and auth.secretFile "
                 "names none. Run `gemini-agent setup` and set "
                 "auth.secretFile, or set history.verify: off");
        return -1;
    }
    return 0;
}

void
site_free(struct site *s)
{
    if (s == NULL)
        return;
    config_free(s->cfg);
    plugin_set_free(s->actions);
    json_decref(s->declarations);
    free(s->declarations_text);
    free(s->user_declarations_text);
    free(s->prompt_head);
    free(s->instruction_json);
    free(s->listing);
    free(s->commands);
    explicit_bzero(s->auth_secret, sizeof(s->auth_secret));
    free(s);
}

int
site_enrich_prompt(const struct site *s, struct arena *a, const char *msg,
                   size_t len, const char **out, size_t *out_len,
                   struct status_error *err)
{
    bool debug = logmsg_enabled(LOG_LVL_DEBUG);
    json_t *meta = NULL;

    *out = msg;
    *out_len = len;
    /* the metadata is built only for someone to read it */
    if (plugin_enrich_prompt(s->actions, s->cfg->actions.data_dir, a, out,
                             out_len, debug ? &meta : NULL, err) != 0)
        return -1;
    if (debug && json_object_size(meta) > 0) {
        size_t n;
        char *text = jsonout_dumps(meta, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &n);
        log_debug("prompt enrichment: %s%s", text ? text : "(out of memory)",
                  *out != msg ? " (the prompt changed)" : "");
        free(text);
    }
    return 0;
}
