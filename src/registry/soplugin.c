/*
 * soplugin.c - shared-object plugins: dlopen, check, initialise, call.
 *
 * Everything that crosses the boundary is text with a length (plugin.h):
 * the plugin needs no jansson, and what it hands over is parsed and
 * bounded here like any other untrusted input before the registry keeps
 * it. The plugin runs in-process all the same: a check here protects the
 * registry from a careless plugin, not the server from a hostile one.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/status.h"
#include "gemini-agent/plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plugin names: as plugin.yaml names (plugin.c's valid_name). */
static bool
valid_name(const char *s)
{
    size_t n = 0;

    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                       *s == '_'))
        return false;
    for (; s[n] != '\0' && n <= BOUND_NAME_LEN; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return n <= BOUND_NAME_LEN;
}

/* A copy of a string the plugin returned, or NULL for none; *too_long when
 * it runs past the bound (then NULL too). */
static char *
copy_text(const char *s, bool *too_long)
{
    size_t n;

    *too_long = false;
    if (s == NULL)
        return NULL;
    n = strnlen(s, BOUND_SO_TEXT_BYTES + 1);
    if (n > BOUND_SO_TEXT_BYTES) {
        *too_long = true;
        return NULL;
    }
    return strndup(s, n);
}

static bool
is_exposed(const struct config_plugins *cfg, const char *name)
{
    if (cfg->expose_all)
        return true;
    for (size_t i = 0; cfg->expose != NULL && cfg->expose[i] != NULL; i++)
        if (strcmp(cfg->expose[i], name) == 0)
            return true;
    return false;
}

static void
so_release(struct so_plugin *p)
{
    free(p->name);
    free(p->path);
    free(p->instructions);
    free(p->auto_approved);
    if (p->dl != NULL)
        dlclose(p->dl);
    memset(p, 0, sizeof(*p));
}

/* The plugin's configuration text: plugins.config.<name>, or "{}". */
static char *
config_text(const struct config_plugins *cfg, const char *name, size_t *len)
{
    const json_t *c = cfg->config ? json_object_get(cfg->config, name) : NULL;

    if (c == NULL) {
        *len = 2;
        return strdup("{}");
    }
    return jsonout_dumps(c, APP_JSON_FLAGS | JSON_ENCODE_ANY,
                         JSONOUT_UNBOUNDED, len);
}

/*
 * Open, check and (when exposed) initialise the plugin at `path` into `p`.
 * Returns 1 loaded, 0 left out (reported, or not exposed), -1 out of
 * memory. `seen`/`nseen` are the plugins loaded before (names unique).
 */
static int
so_open(const struct config_plugins *cfg, const char *path,
        struct so_plugin *p, const struct so_plugin *seen, size_t nseen,
        struct diag *d)
{
    gemini_agent_plugin_factory factory;
    const struct gemini_agent_plugin *ops;
    char err[BOUND_SO_MESSAGE] = "";
    char *conf;
    size_t conf_len;
    bool too_long;
    void *sym;
    int rc;

    memset(p, 0, sizeof(*p));
    /* RTLD_NOW: an unresolved symbol is found here, not in a request;
     * RTLD_LOCAL: a plugin's symbols never satisfy another's. */
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (p->dl == NULL) {
        const char *why = dlerror();
        diag_add(d, path, 0, "plugin left out: cannot load it: %s",
                 why ? why : "unknown reason");
        return 0;
    }
    sym = dlsym(p->dl, GEMINI_AGENT_PLUGIN_FACTORY);
    if (sym == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: it has no '%s' symbol (see "
                 "include/gemini-agent/plugin.h)",
                 GEMINI_AGENT_PLUGIN_FACTORY);
        goto out;
    }
    /* POSIX: a data pointer from dlsym() may be converted to a function
     * pointer; memcpy says so without a pedantic warning. */
    memcpy(&factory, &sym, sizeof(factory));
    ops = factory(GEMINI_AGENT_PLUGIN_ABI);
    if (ops == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: its factory declined ABI %d (built for "
                 "another gemini-agent?)",
                 GEMINI_AGENT_PLUGIN_ABI);
        goto out;
    }
    if (ops->abi != GEMINI_AGENT_PLUGIN_ABI) {
        diag_add(d, path, 0,
                 "plugin left out: built for plugin ABI %u, this "
                 "gemini-agent has ABI %d; rebuild it against this "
                 "include/gemini-agent/plugin.h",
                 ops->abi, GEMINI_AGENT_PLUGIN_ABI);
        goto out;
    }
    if (!valid_name(ops->name)) {
        diag_add(d, path, 0,
                 "plugin left out: its name must be an identifier of at most "
                 "%d characters (letters, digits, '_' or '-')",
                 BOUND_NAME_LEN);
        goto out;
    }
    if (ops->declarations == NULL || ops->execute == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: '%s' has no declarations or no execute "
                 "operation",
                 ops->name);
        goto out;
    }
    for (size_t i = 0; i < nseen; i++) {
        if (strcmp(seen[i].name, ops->name) == 0) {
            diag_add(d, path, 0,
                     "plugin left out: the name '%s' is taken by %s",
                     ops->name, seen[i].path);
            goto out;
        }
    }
    if (!is_exposed(cfg, ops->name))
        goto out; /* available, not exposed: nothing of it is kept */
    p->ops = ops;
    p->name = strdup(ops->name);
    p->path = strdup(path);
    if (p->name == NULL || p->path == NULL)
        goto oom;
    if (ops->initialize != NULL) {
        if ((conf = config_text(cfg, ops->name, &conf_len)) == NULL)
            goto oom;
        rc = ops->initialize(conf, conf_len, &p->self, err, sizeof(err));
        free(conf);
        if (rc != 0) {
            err[sizeof(err) - 1] = '\0';
            diag_add(d, path, 0,
                     "plugin left out: '%s' failed to initialise: %s",
                     ops->name, err[0] ? err : "no reason given");
            p->ops = NULL; /* initialize failed: no shutdown */
            goto out;
        }
    }
    if (ops->system_instructions != NULL) {
        p->instructions = copy_text(ops->system_instructions(p->self),
                                    &too_long);
        if (too_long) {
            diag_add(d, path, 0,
                     "plugin '%s': its system instructions are over %u "
                     "bytes and are left out",
                     p->name, BOUND_SO_TEXT_BYTES);
        }
    }
    if (ops->auto_approved_tools != NULL)
        p->auto_approved = copy_text(ops->auto_approved_tools(p->self),
                                     &too_long);
    return 1;
oom:
    diag_add(d, path, 0, "out of memory"); /* before initialize() */
    so_release(p);
    return -1;
out:
    so_release(p);
    return 0;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_plugin(const void *a, const void *b)
{
    return strcmp(((const struct so_plugin *)a)->name,
                  ((const struct so_plugin *)b)->name);
}

/* The *.so files of `dir`, as paths in name order: a heap array of heap
 * strings (count in *n), or NULL for none or after reporting. */
static char **
list_so(const char *dir, size_t *n, struct diag *d)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t alloc = 0;

    *n = 0;
    if (dp == NULL) {
        diag_add(d, dir, 0, "cannot open the plugins folder: %s",
                 strerror(errno));
        return NULL;
    }
    while ((de = readdir(dp)) != NULL) {
        size_t len = strlen(de->d_name);
        char *path = NULL;
        if (de->d_name[0] == '.' || len < 4 ||
            strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        if (*n == alloc) {
            char **q;
            alloc = alloc ? alloc * 2 : 8;
            if ((q = realloc(names, alloc * sizeof(*q))) == NULL)
                break;
            names = q;
        }
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
            break;
        names[(*n)++] = path;
    }
    closedir(dp);
    if (*n > 0)
        qsort(names, *n, sizeof(*names), cmp_str);
    return names;
}

int
soplugin_load(const struct config_plugins *cfg, struct so_plugin **out,
              size_t *n, struct diag *d)
{
    struct so_plugin *list = NULL;
    size_t count = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    for (size_t i = 0; rc == 0 && i < cfg->ndirs; i++) {
        size_t nfiles;
        char **files = list_so(cfg->dirs[i], &nfiles, d);
        for (size_t j = 0; j < nfiles; j++) {
            if (rc == 0 && count >= BOUND_PLUGINS) {
                diag_add(d, files[j], 0,
                         "plugin left out: more than %d plugins",
                         BOUND_PLUGINS);
            } else if (rc == 0) {
                struct so_plugin *q = realloc(list, (count + 1) * sizeof(*q));
                int got;
                if (q == NULL) {
                    rc = -1;
                } else {
                    list = q;
                    got = so_open(cfg, files[j], &list[count], list, count, d);
                    if (got < 0)
                        rc = -1;
                    else
                        count += (size_t)got;
                }
            }
            free(files[j]);
        }
        free(files);
    }
    /* Names the expose list gives that no folder has: a typo, most likely. */
    for (size_t i = 0; !cfg->expose_all && cfg->expose != NULL &&
                       cfg->expose[i] != NULL;
         i++) {
        size_t k = 0;
        while (k < count && strcmp(list[k].name, cfg->expose[i]) != 0)
            k++;
        if (k == count)
            diag_add(d, cfg->file ? cfg->file : "agent.yaml",
                     cfg->expose_line,
                     "plugins.expose names '%s', and no plugin of that name "
                     "was loaded from plugins.dirs",
                     cfg->expose[i]);
    }
    if (rc != 0) {
        soplugin_free_all(list, count);
        return -1;
    }
    if (count > 0)
        qsort(list, count, sizeof(*list), cmp_plugin);
    *out = list;
    *n = count;
    return 0;
}

json_t *
soplugin_declarations(const struct so_plugin *p, struct diag *d)
{
    const char *text = p->ops->declarations(p->self);
    struct status_error err = {0};
    size_t len;
    json_t *decls;

    if (text == NULL) {
        diag_add(d, p->path, 0, "plugin '%s' declares no tools (NULL)",
                 p->name);
        return NULL;
    }
    len = strnlen(text, BOUND_SO_TEXT_BYTES + 1);
    if (len > BOUND_SO_TEXT_BYTES) {
        diag_add(d, p->path, 0,
                 "plugin '%s': its declarations are over %u bytes", p->name,
                 BOUND_SO_TEXT_BYTES);
        return NULL;
    }
    decls = jsonin_decode(text, len, BOUND_JSON_DEPTH, &err);
    if (decls == NULL || !json_is_array(decls)) {
        diag_add(d, p->path, 0,
                 "plugin '%s': its declarations must be a JSON array: %s",
                 p->name, decls ? "not an array" : err.text);
        json_decref(decls);
        return NULL;
    }
    return decls;
}

/* ctx->alloc: the request's arena. */
static void *
ctx_alloc(const struct gemini_agent_ctx *ctx, size_t size)
{
    return arena_alloc(ctx->host, size ? size : 1);
}

/* The plugin's message for a failed call, bounded, or a default. */
static int
call_failed(struct status_error *err, enum status code,
            const struct gemini_agent_out *o, const char *plugin,
            const char *tool)
{
    if (o->text != NULL && o->len > 0)
        return status_set(err, code, "%.*s",
                          (int)(o->len < BOUND_SO_MESSAGE ? o->len
                                                          : BOUND_SO_MESSAGE),
                          o->text);
    return status_set(err, code, "the action '%s.%s' failed", plugin, tool);
}

int
soplugin_execute(const struct so_plugin *p, const char *tool,
                 const char *data_dir, const json_t *input, struct arena *a,
                 json_t **output, struct status_error *err)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, data_dir,
                                   ctx_alloc, a};
    struct gemini_agent_out o = {NULL, 0};
    size_t len;
    char *args;
    json_t *out;
    int rc;

    *output = NULL;
    args = jsonout_dumps(input, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len);
    if (args == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    rc = p->ops->execute(p->self, &ctx, tool, args, len, &o);
    free(args);
    if (rc == GEMINI_AGENT_BAD_INPUT)
        return call_failed(err, ST_BAD_REQUEST, &o, p->name, tool);
    if (rc != GEMINI_AGENT_OK)
        return call_failed(err, ST_ACTION_FAILED, &o, p->name, tool);
    if (o.text == NULL)
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s.%s' returned nothing", p->name,
                          tool);
    if (o.len > BOUND_ACTION_OUTPUT_BYTES)
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s.%s' returned too much data", p->name,
                          tool);
    /* the plugin's text is not the request's: its parse error is ours */
    struct status_error bad = {0};
    out = jsonin_decode(o.text, o.len, BOUND_JSON_DEPTH, &bad);
    if (out == NULL && bad.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (out == NULL || !json_is_object(out)) {
        json_decref(out);
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s.%s' did not return a JSON object",
                          p->name, tool);
    }
    *output = out;
    return 0;
}

int
soplugin_run_command(const struct so_plugin *p, const char *command,
                     const char *data_dir, const char *arg, size_t len,
                     struct arena *a, struct gemini_agent_out *o,
                     struct status_error *err)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, data_dir,
                                   ctx_alloc, a};
    int rc;

    *o = (struct gemini_agent_out){NULL, 0};
    if (p->ops->run_command == NULL)
        return status_set(err, ST_UNKNOWN_ACTION,
                          "the plugin '%s' runs no commands", p->name);
    rc = p->ops->run_command(p->self, &ctx, command, arg, len, o);
    if (rc == GEMINI_AGENT_BAD_INPUT)
        return call_failed(err, ST_BAD_REQUEST, o, p->name, command);
    if (rc != GEMINI_AGENT_OK)
        return call_failed(err, ST_ACTION_FAILED, o, p->name, command);
    if (o->len > BOUND_ACTION_OUTPUT_BYTES)
        return status_set(err, ST_ACTION_FAILED,
                          "the command '%s' returned too much data", command);
    return 0;
}

int
soplugin_enrich(const struct so_plugin *p, const char *data_dir,
                const char *prompt, size_t len, struct arena *a,
                struct gemini_agent_out *prompt_out,
                struct gemini_agent_out *meta_out, struct status_error *err)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, data_dir,
                                   ctx_alloc, a};
    int rc;

    *prompt_out = (struct gemini_agent_out){NULL, 0};
    *meta_out = (struct gemini_agent_out){NULL, 0};
    rc = p->ops->enrich_prompt(p->self, &ctx, prompt, len, prompt_out,
                               meta_out);
    if (rc != GEMINI_AGENT_OK)
        return call_failed(err, ST_ACTION_FAILED, prompt_out, p->name,
                           "enrich_prompt");
    return 0;
}

void
soplugin_free_all(struct so_plugin *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (list[i].ops != NULL && list[i].ops->shutdown != NULL)
            list[i].ops->shutdown(list[i].self);
        so_release(&list[i]);
    }
    free(list);
}
