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
#include "registry/question.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/netaddr.h"
#include "core/status.h"
#include "gemini-agent/plugin.h"
#include "registry/action.h"
#include "registry/jschema.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Plugin names: as plugin.yaml names (plugin.c's valid_name). */
static bool
valid_name(const char *s)
{
    size_t n = 0;

    if (s == NULL ||
        !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
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
names(char *const *list, const char *name)
{
    for (size_t i = 0; list != NULL && list[i] != NULL; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* How `name` takes part: plugins.enrichmentOnly names it, plugins.expose
 * names it, or `expose: all` takes it - every shared object, but a
 * built-in only when plugins.config has an entry for it (a built-in the
 * owner never mentioned is not offered to visitors). */
static enum so_role
role_of(const struct config_plugins *cfg, const char *name, bool builtin)
{
    if (names(cfg->enrichment_only, name))
        return SO_ENRICHMENT_ONLY;
    if (names(cfg->expose, name))
        return SO_EXPOSED;
    if (cfg->expose_all &&
        (!builtin || json_object_get(cfg->config, name) != NULL))
        return SO_EXPOSED;
    return SO_AVAILABLE;
}

enum so_role
soplugin_role(const struct config_plugins *cfg, const char *name)
{
    return role_of(cfg, name, false);
}

/* The line of plugins.config.<name> in agent.yaml, or 0. */
static int
config_line(const struct config_plugins *cfg, const char *name)
{
    return (int)json_integer_value(json_object_get(cfg->config_lines, name));
}

static void
so_release(struct so_plugin *p)
{
    free(p->name);
    free(p->path);
    free(p->instructions);
    free(p->auto_approved);
    free(p->config);
    if (p->dl != NULL)
        dlclose(p->dl);
    memset(p, 0, sizeof(*p));
}

/* Shut down one plugin (unless borrowed) and release it. */
static void
so_free_one(struct so_plugin *p)
{
    if (p->ops != NULL && p->ops->shutdown != NULL && !p->borrowed)
        p->ops->shutdown(p->self);
    so_release(p);
}

/* Is `name` one of the built-ins that fetch (soplugin_env.fetchers)? */
static bool
fetches(const struct soplugin_env *env, const char *name)
{
    for (size_t i = 0; env->fetchers != NULL && env->fetchers[i] != NULL; i++)
        if (strcmp(env->fetchers[i], name) == 0)
            return true;
    return false;
}

/* The host's outbound policy as the member "outbound" of the built-in
 * fetcher's configuration `c` (a copy of plugins.config.<name> or {}),
 * after its schema was checked: the owner cannot write it per plugin. */
static char *
with_outbound(const struct soplugin_env *env, const json_t *c, size_t *len)
{
    json_t *o = c != NULL ? json_copy(UNCONST(c)) : json_object();
    json_t *allow = json_array();
    char *text = NULL;

    if (o == NULL || allow == NULL || !json_is_object(o))
        goto out;
    for (size_t i = 0; i < env->noutbound; i++) {
        char a[NETADDR_TEXT_MAX];
        netaddr_format(&env->outbound[i], a);
        if (json_array_append_new(allow, json_string(a)) != 0)
            goto out;
    }
    if (json_object_set_new(o, "outbound",
                            json_pack("{s:O}", "allow", allow)) != 0)
        goto out;
    text = jsonout_dumps(o, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, len);
out:
    json_decref(allow);
    json_decref(o);
    return text;
}

/* The plugin's configuration text: plugins.config.<name>, or "{}"; a
 * built-in that fetches gets the outbound policy in it too. */
static char *
config_text(const struct soplugin_env *env, const struct config_plugins *cfg,
            const char *name, bool builtin, size_t *len)
{
    const json_t *c = cfg->config ? json_object_get(cfg->config, name) : NULL;

    if (builtin && fetches(env, name))
        return with_outbound(env, c, len);
    if (c == NULL) {
        *len = 2;
        return strdup("{}");
    }
    return jsonout_dumps(c, APP_JSON_FLAGS | JSON_ENCODE_ANY, JSONOUT_UNBOUNDED,
                         len);
}

/* Validate plugins.config.<name> against the plugin's config_schema():
 * 0 fine, 1 reported (the plugin is left out), -1 out of memory. */
static int
check_config(const struct config_plugins *cfg, const char *path,
             const struct gemini_agent_plugin *ops, struct diag *d)
{
    const char *text = ops->config_schema ? ops->config_schema() : NULL;
    const json_t *conf = json_object_get(cfg->config, ops->name);
    struct status_error err = {0};
    json_t *schema, *empty = NULL;
    int rc = 0;

    if (text == NULL)
        return 0;
    schema = jsonin_decode(text, strnlen(text, BOUND_SO_TEXT_BYTES),
                           BOUND_JSON_DEPTH, &err);
    if (schema == NULL && err.code == ST_NO_MEMORY)
        return -1;
    if (schema == NULL || !json_is_object(schema) ||
        jschema_check(schema, NULL, NULL) != 0) {
        diag_add(d, path, 0,
                 "plugin left out: '%s' declares a config schema this "
                 "server cannot use",
                 ops->name);
        json_decref(schema);
        return 1;
    }
    if (conf == NULL && (conf = empty = json_object()) == NULL) {
        json_decref(schema);
        return -1;
    }
    if (jschema_validate(schema, conf, &err) != 0) {
        diag_add(d, cfg->file ? cfg->file : "agent.yaml",
                 config_line(cfg, ops->name),
                 "plugins.config.%s: %s; the plugin '%s' is left out",
                 ops->name, err.text, ops->name);
        rc = 1;
    }
    json_decref(empty);
    json_decref(schema);
    return rc;
}

/* The previous generation's plugin that `p` is unchanged from: the same
 * operations (the same code: dlopen() of a replaced file gives other
 * ones), the same role and the same config text; or NULL. */
static const struct so_plugin *
unchanged(const struct soplugin_env *env, const struct so_plugin *p)
{
    for (size_t i = 0; i < env->nprev; i++) {
        const struct so_plugin *q = &env->prev[i];
        if (q->ops == p->ops && q->role == p->role &&
            strcmp(q->name, p->name) == 0 && strcmp(q->config, p->config) == 0)
            return q;
    }
    return NULL;
}

/*
 * Is `ops` (from `path`) a plugin this server can take, named apart from
 * the nseen loaded before it? Reports why not, and returns false.
 */
static bool
so_valid(const struct soplugin_env *env, const char *path,
         const struct gemini_agent_plugin *ops, const struct so_plugin *seen,
         size_t nseen, struct diag *d)
{
    if (ops == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: its factory declined ABI %d (built for "
                 "another gemini-agent?)",
                 GEMINI_AGENT_PLUGIN_ABI);
        return false;
    }
    if (ops->abi != GEMINI_AGENT_PLUGIN_ABI) {
        diag_add(d, path, 0,
                 "plugin left out: built for plugin ABI %u, this "
                 "gemini-agent has ABI %d; rebuild it against this "
                 "include/gemini-agent/plugin.h",
                 ops->abi, GEMINI_AGENT_PLUGIN_ABI);
        return false;
    }
    if (!valid_name(ops->name)) {
        diag_add(d, path, 0,
                 "plugin left out: its name must be an identifier of at most "
                 "%d characters (letters, digits, '_' or '-')",
                 BOUND_NAME_LEN);
        return false;
    }
    if (env->library_of != NULL && strcmp(ops->name, env->library_of) != 0) {
        diag_add(d, path, 0,
                 "library left out: it is the plugin '%s', and its "
                 "plugin.yaml is '%s'",
                 ops->name, env->library_of);
        return false;
    }
    if (ops->declarations == NULL || ops->execute == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: '%s' has no declarations or no execute "
                 "operation",
                 ops->name);
        return false;
    }
    for (size_t i = 0; i < nseen; i++) {
        if (strcmp(seen[i].name, ops->name) == 0) {
            diag_add(d, path, 0,
                     "plugin left out: the name '%s' is taken by %s", ops->name,
                     seen[i].path);
            return false;
        }
    }
    return true;
}

/* A plugin for the terminal client only is left out of the web routes;
 * named on purpose, the reason is reported (`all` just skips it). Returns
 * true when `ops` is left out so. */
static bool
terminal_only(const struct soplugin_env *env,
              const struct gemini_agent_plugin *ops, struct diag *d)
{
    const struct config_plugins *cfg = env->cfg;

    if (!(ops->flags & GEMINI_AGENT_TERMINAL_ONLY) || env->terminal)
        return false;
    if (names(cfg->expose, ops->name) || names(cfg->enrichment_only, ops->name))
        diag_add(d, cfg->file ? cfg->file : "agent.yaml", cfg->expose_line,
                 "plugin '%s' is for the terminal client only (it "
                 "reaches files or a shell): the web routes never "
                 "expose it",
                 ops->name);
    return true;
}

/*
 * Start the plugin p (its config text conf_len bytes): the previous
 * generation's instance when it is unchanged, else a new one from its
 * initialize(). Returns 0, or 1 when it failed to initialise (reported).
 */
static int
so_start(const struct soplugin_env *env, struct so_plugin *p, size_t conf_len,
         struct diag *d)
{
    const struct so_plugin *kept = unchanged(env, p);
    char err[BOUND_SO_MESSAGE] = "";

    if (kept != NULL) {
        /* same code, same config: nothing to re-expose */
        p->self = kept->self;
        p->borrowed = true;
        return 0;
    }
    if (p->ops->initialize == NULL)
        return 0;
    const struct gemini_agent_init init = {
        p->config, conf_len, env->config_dir ? env->config_dir : ".",
        env->data_dir ? env->data_dir : "."};
    if (p->ops->initialize(&init, &p->self, err, sizeof(err)) == 0)
        return 0;
    err[sizeof(err) - 1] = '\0';
    diag_add(d, p->path, 0, "plugin left out: '%s' failed to initialise: %s",
             p->name, err[0] ? err : "no reason given");
    p->ops = NULL; /* initialize failed: no shutdown */
    return 1;
}

/* The exposed plugin p's system instructions and auto-approved tools. */
static void
so_read_texts(struct so_plugin *p, struct diag *d)
{
    const struct gemini_agent_plugin *ops = p->ops;
    bool too_long;

    if (ops->system_instructions != NULL) {
        p->instructions = copy_text(ops->system_instructions(p->self),
                                    &too_long);
        if (too_long) {
            diag_add(d, p->path, 0,
                     "plugin '%s': its system instructions are over %u "
                     "bytes and are left out",
                     p->name, BOUND_SO_TEXT_BYTES);
        }
    }
    if (ops->auto_approved_tools != NULL)
        p->auto_approved = copy_text(ops->auto_approved_tools(p->self),
                                     &too_long);
}

/*
 * Check the plugin `ops` (from the file `path` and its handle `dl`, or
 * built in with dl NULL) and, when it takes part, initialise it into
 * list[count], which owns `dl` from here on; list[0..count) are the
 * plugins loaded before (names unique). Returns 1 loaded, 0 left out
 * (reported, or not exposed), -1 out of memory.
 */
static int
so_admit(const struct soplugin_env *env, const char *path, void *dl,
         const struct gemini_agent_plugin *ops, struct so_plugin *list,
         size_t count, struct diag *d)
{
    struct so_plugin *p = &list[count];
    const char *found = NULL; /* a valid plugin: listed as available */
    size_t conf_len;
    enum so_role role;
    int rc;

    memset(p, 0, sizeof(*p));
    p->dl = dl;
    if (!so_valid(env, path, ops, list, count, d))
        goto out;
    found = ops->name;
    /* a library takes part as its folder does, which is exposed */
    role = env->library_of ? SO_EXPOSED
                           : role_of(env->cfg, ops->name, dl == NULL);
    if (role == SO_AVAILABLE || terminal_only(env, ops, d))
        goto out; /* available, not exposed: nothing of it is kept */
    if ((rc = check_config(env->cfg, path, ops, d)) != 0) {
        if (rc < 0)
            goto oom;
        goto out;
    }
    p->ops = ops;
    p->role = role;
    p->name = strdup(ops->name);
    p->path = strdup(path);
    p->config = config_text(env, env->cfg, ops->name, dl == NULL, &conf_len);
    if (p->name == NULL || p->path == NULL || p->config == NULL)
        goto oom;
    if (so_start(env, p, conf_len, d) != 0)
        goto out;
    if (env->found != NULL)
        env->found(env->found_ctx, p->name, path, role);
    /* enrichment only: its tools, commands and instructions are not read */
    if (role != SO_ENRICHMENT_ONLY)
        so_read_texts(p, d);
    return 1;
oom:
    diag_add(d, path, 0, "out of memory"); /* before initialize() */
    p->ops = NULL;
    so_release(p);
    return -1;
out:
    if (found != NULL && env->found != NULL)
        env->found(env->found_ctx, found, path, SO_AVAILABLE);
    so_release(p);
    return 0;
}

/*
 * Can someone other than its owner write what `st` describes? Others'
 * write bit always counts; the group's does unless the group is the
 * owner's own (the user-private group a umask of 002 is meant for: a
 * group named as its owner, whom alone it holds by that convention).
 */
static bool
open_to_others(const struct stat *st)
{
    char pb[1024], gb[1024];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;

    if ((st->st_mode & 002) != 0)
        return true;
    if ((st->st_mode & 020) == 0)
        return false;
    if (getpwuid_r(st->st_uid, &pw, pb, sizeof(pb), &pwp) != 0 || pwp == NULL ||
        getgrgid_r(st->st_gid, &gr, gb, sizeof(gb), &grp) != 0 || grp == NULL)
        return true;
    return strcmp(pwp->pw_name, grp->gr_name) != 0 ||
           (grp->gr_mem[0] != NULL &&
            (strcmp(grp->gr_mem[0], pwp->pw_name) != 0 ||
             grp->gr_mem[1] != NULL));
}

/* Can group or others write the folder that holds `file`? Its mode in
 * *mode. */
static bool
folder_open(const char *file, unsigned *mode)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(file, '/');
    size_t n = slash == NULL ? 1 : slash == file ? 1 : (size_t)(slash - file);
    struct stat st;

    if (n >= sizeof(dir))
        return false;
    memcpy(dir, slash == NULL ? "." : file, n);
    dir[n] = '\0';
    if (stat(dir, &st) != 0)
        return false;
    *mode = (unsigned)(st.st_mode & 07777);
    return open_to_others(&st);
}

/*
 * Anyone who can write a plugin, or the folder it is listed in or lives
 * in (a symlink's), runs their code in the server: such a plugin is left
 * out, with the reason (open_to_others). Owners are not checked: a plugin
 * readable by the serving user and written by the one who deploys it is
 * the usual case.
 * true when it may be loaded.
 */
static bool
so_file_safe(const char *path, struct diag *d)
{
    char real[PATH_MAX];
    struct stat st;
    unsigned mode;

    if (stat(path, &st) != 0 || realpath(path, real) == NULL)
        return true; /* dlopen() says why it cannot load it */
    if (!S_ISREG(st.st_mode)) {
        diag_add(d, path, 0, "plugin left out: it is not a regular file");
        return false;
    }
    if (open_to_others(&st)) {
        diag_add(d, path, 0,
                 "plugin left out: group or others can write it (mode "
                 "%03o): run chmod go-w on it",
                 (unsigned)(st.st_mode & 0777));
        return false;
    }
    if (folder_open(path, &mode) || folder_open(real, &mode)) {
        diag_add(d, path, 0,
                 "plugin left out: group or others can write its folder "
                 "(mode %04o): run chmod go-w on the folder",
                 mode);
        return false;
    }
    return true;
}

/* dlopen() the file at `path` and admit what its factory gives into
 * list[count] (see so_admit). */
static int
so_open(const struct soplugin_env *env, const char *path,
        struct so_plugin *list, size_t count, struct diag *d)
{
    gemini_agent_plugin_factory factory;
    void *dl, *sym;

    if (!so_file_safe(path, d))
        return 0;
    /* RTLD_NOW: an unresolved symbol is found here, not in a request;
     * RTLD_LOCAL: a plugin's symbols never satisfy another's. */
    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl == NULL) {
        const char *why = dlerror();
        diag_add(d, path, 0, "plugin left out: cannot load it: %s",
                 why ? why : "unknown reason");
        return 0;
    }
    sym = dlsym(dl, GEMINI_AGENT_PLUGIN_FACTORY);
    if (sym == NULL) {
        diag_add(d, path, 0,
                 "plugin left out: it has no '%s' symbol (see "
                 "include/gemini-agent/plugin.h)",
                 GEMINI_AGENT_PLUGIN_FACTORY);
        dlclose(dl);
        return 0;
    }
    /* POSIX: a data pointer from dlsym() may be converted to a function
     * pointer; memcpy says so without a pedantic warning. */
    memcpy(&factory, &sym, sizeof(factory));
    return so_admit(env, path, dl, factory(GEMINI_AGENT_PLUGIN_ABI), list,
                    count, d);
}

/* Make room for one more plugin in *list: 0, or -1 out of memory. */
static int
grow(struct so_plugin **list, size_t count)
{
    struct so_plugin *q = realloc(*list, (count + 1) * sizeof(*q));

    if (q == NULL)
        return -1;
    *list = q;
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
list_so(const char *dir, bool optional, size_t *n, struct diag *d)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t alloc = 0;

    *n = 0;
    if (dp == NULL && optional && errno == ENOENT)
        return NULL;
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
soplugin_load(const struct soplugin_env *env, struct so_plugin **out, size_t *n,
              struct diag *d)
{
    const struct config_plugins *cfg = env->cfg;
    struct so_plugin *list = NULL;
    size_t count = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    /* built-ins first: a file can never take a built-in's name */
    for (size_t i = 0;
         rc == 0 && env->builtins != NULL && env->builtins[i] != NULL; i++) {
        int got;
        if (grow(&list, count) != 0)
            rc = -1;
        else if ((got = so_admit(env, SOPLUGIN_BUILTIN, NULL,
                                 env->builtins[i](GEMINI_AGENT_PLUGIN_ABI),
                                 list, count, d)) < 0)
            rc = -1;
        else
            count += (size_t)got;
    }
    for (size_t i = 0; rc == 0 && i < cfg->ndirs; i++) {
        size_t nfiles;
        char **files = list_so(cfg->dirs[i], cfg->dirs_default, &nfiles, d);
        for (size_t j = 0; j < nfiles; j++) {
            if (rc == 0 && count >= BOUND_PLUGINS) {
                diag_add(d, files[j], 0,
                         "plugin left out: more than %d plugins",
                         BOUND_PLUGINS);
            } else if (rc == 0) {
                int got;
                if (grow(&list, count) != 0)
                    rc = -1;
                else if ((got = so_open(env, files[j], list, count, d)) < 0)
                    rc = -1;
                else
                    count += (size_t)got;
            }
            free(files[j]);
        }
        free(files);
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

int
soplugin_add_library(const struct soplugin_env *env, const char *path,
                     const char *plugin, struct so_plugin **list, size_t *n,
                     struct diag *d)
{
    struct soplugin_env quiet = *env;
    struct so_plugin *p;
    int got;

    quiet.found = NULL; /* the plugin.yaml folder is what is listed */
    quiet.library_of = plugin;
    if (grow(list, *n) != 0)
        return -1;
    p = &(*list)[*n];
    if ((got = so_open(&quiet, path, *list, *n, d)) <= 0)
        return got;
    p->library = true;
    (*n)++;
    qsort(*list, *n, sizeof(**list), cmp_plugin);
    return 1;
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

/* The host's side of a call: the plugin's ctx first, so cancelled()
 * finds the rest from the ctx it is given. */
struct host_call {
    struct gemini_agent_ctx ctx;
    const struct action_who *who; /* or NULL */
};

/* ctx->cancelled: what the caller of action_run says, else 0. */
static int
ctx_cancelled(const struct gemini_agent_ctx *ctx)
{
    const struct host_call *hc = (const struct host_call *)(const void *)ctx;

    return hc->who != NULL && hc->who->cancelled != NULL &&
           hc->who->cancelled(hc->who->cancelled_ctx);
}

/* Fill `hc` for a call. Who and where (ctx.user, .conversation,
 * .cancelled) reach execute() only (action_run's who); commands and
 * enrichment are not tied to a conversation yet: NULL, as plugin.h
 * allows, and nobody cancels them. */
static void
host_ctx(struct host_call *hc, const char *data_dir, struct arena *a,
         const struct action_who *who)
{
    hc->ctx = (struct gemini_agent_ctx){GEMINI_AGENT_PLUGIN_ABI,
                                        data_dir,
                                        ctx_alloc,
                                        a,
                                        who ? who->user : NULL,
                                        who ? who->conversation : NULL,
                                        ctx_cancelled};
    hc->who = who;
}

/* The plugin's message for a failed call, bounded, or a default. */
static int
call_failed(struct status_error *err, enum status code,
            const struct gemini_agent_out *o, const char *plugin,
            const char *tool)
{
    if (o->text != NULL && o->len > 0)
        return status_set(
            err, code, "%.*s",
            (int)(o->len < BOUND_SO_MESSAGE ? o->len : BOUND_SO_MESSAGE),
            o->text);
    return status_set(err, code, "the action '%s.%s' failed", plugin, tool);
}

/* execute() asked the user (GEMINI_AGENT_ASK_USER): the question, checked
 * and normalised as the host asks it (registry/question.h). A question
 * the host cannot ask is the plugin's failure, not the model's. */
static int
asked(const struct so_plugin *p, const char *tool,
      const struct gemini_agent_out *o, json_t **output,
      struct status_error *err)
{
    struct status_error bad = {0};
    json_t *q = NULL;

    if (o->text != NULL && o->len <= BOUND_ACTION_OUTPUT_BYTES)
        q = jsonin_decode(o->text, o->len, BOUND_JSON_DEPTH, &bad);
    if (q != NULL)
        *output = question_normalize(q, &bad);
    json_decref(q);
    if (bad.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (*output == NULL)
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s.%s' asked the user an invalid "
                          "question: %s",
                          p->name, tool,
                          bad.text[0] ? bad.text : "not a JSON object");
    return SOPLUGIN_ASKS_USER;
}

int
soplugin_execute(const struct so_plugin *p, const char *tool,
                 const char *data_dir, const struct action_who *who,
                 const json_t *input, struct arena *a, json_t **output,
                 struct status_error *err)
{
    struct host_call hc;
    const struct gemini_agent_ctx *ctx = &hc.ctx;
    struct gemini_agent_out o = {NULL, 0};
    size_t len;
    char *args;
    json_t *out;
    int rc;

    host_ctx(&hc, data_dir, a, who);
    *output = NULL;
    args = jsonout_dumps(input, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len);
    if (args == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    rc = p->ops->execute(p->self, ctx, tool, args, len, &o);
    free(args);
    if (rc == GEMINI_AGENT_BAD_INPUT)
        return call_failed(err, ST_BAD_REQUEST, &o, p->name, tool);
    if (rc == GEMINI_AGENT_ASK_USER)
        return asked(p, tool, &o, output, err);
    if (rc != GEMINI_AGENT_OK)
        return call_failed(err, ST_ACTION_FAILED, &o, p->name, tool);
    if (o.text == NULL)
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s.%s' returned nothing", p->name, tool);
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
    struct host_call hc;
    int rc;

    host_ctx(&hc, data_dir, a, NULL);
    *o = (struct gemini_agent_out){NULL, 0};
    if (p->ops->run_command == NULL)
        return status_set(err, ST_UNKNOWN_ACTION,
                          "the plugin '%s' runs no commands", p->name);
    rc = p->ops->run_command(p->self, &hc.ctx, command, arg, len, o);
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
    struct host_call hc;
    int rc;

    host_ctx(&hc, data_dir, a, NULL);
    *prompt_out = (struct gemini_agent_out){NULL, 0};
    *meta_out = (struct gemini_agent_out){NULL, 0};
    rc = p->ops->enrich_prompt(p->self, &hc.ctx, prompt, len, prompt_out,
                               meta_out);
    if (rc != GEMINI_AGENT_OK)
        return call_failed(err, ST_ACTION_FAILED, prompt_out, p->name,
                           "enrich_prompt");
    return 0;
}

void
soplugin_adopt(struct so_plugin *list, size_t n, struct so_plugin *prev,
               size_t nprev)
{
    for (size_t i = 0; i < n; i++) {
        if (!list[i].borrowed)
            continue;
        for (size_t j = 0; j < nprev; j++)
            if (prev[j].ops == list[i].ops && prev[j].self == list[i].self &&
                strcmp(prev[j].name, list[i].name) == 0)
                prev[j].borrowed = true; /* now the new one's */
        list[i].borrowed = false;
    }
}

void
soplugin_free_all(struct so_plugin *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        so_free_one(&list[i]);
    free(list);
}
