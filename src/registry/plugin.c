/*
 * plugin.c - load plugin folders into the server-action registry.
 *
 * Reads plugin.yaml and the .jay-action files it names (through ydoc, so
 * the YAML hardening rules apply), checks schemas (jschema), binds handlers
 * by registered name, and builds the maps the request path needs: name ->
 * action, Gemini function name -> action, and the GET /_jay/actions body.
 * Nothing here runs per request except the two lookups.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/plugin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/diag.h"
#include "core/jsonin.h"
#include "core/status.h"
#include "gemini-agent/handler.h"
#include "gemini-agent/plugin.h"
#include "registry/jschema.h"
#include "registry/soplugin.h"
#include "core/ydoc.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Plugin and action names: identifiers, dashes allowed (file-name style). */
static bool
valid_name(const char *s)
{
    size_t n = 0;

    if (s == NULL ||
        !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (; s[n] != '\0'; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return n <= BOUND_NAME_LEN;
}

bool
plugin_is_fn_name(const char *name)
{
    return strncmp(name, PLUGIN_FN_PREFIX, sizeof(PLUGIN_FN_PREFIX) - 1) == 0;
}

int
plugin_fn_name(const char *name, char *out, size_t size)
{
    size_t n = sizeof(PLUGIN_FN_PREFIX) - 1, len = strlen(name);

    if (len > SIZE_MAX - n - 1 || n + len + 1 > size)
        return -1;
    memcpy(out, PLUGIN_FN_PREFIX, n);
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                    (c >= '0' && c <= '9') || c == '_';
        out[n++] = keep ? c : '_';
    }
    out[n] = '\0';
    return 0;
}

/* --- loading state -------------------------------------------------------- */

/*
 * Entries that were reported stay in `actions` (with bad[i] set) until the
 * cross-entry checks have run: a compiled-in handler named by a broken
 * entry is not an orphan, and a name collision is worth reporting even
 * when both entries are broken for other reasons. plugin_load() then drops
 * them.
 */
struct loader {
    struct diag *d;
    const char *const *chat_routed; /* names a chat route serves, or NULL */
    /* plugins.expose and .enrichmentOnly (NULL: every folder is exposed) */
    const struct config_plugins *pcfg;
    struct plugin_set *set; /* where found plugins are recorded */
    /* plugin.yaml `library:` shared objects to load once the folders are
     * read: their executors run the entries no compiled-in handler
     * serves */
    struct loader_lib {
        char *plugin; /* plugin.yaml's name, which the library must have */
        char *path;
    } * libs;
    size_t nlibs;
    struct plugin_action *actions;
    bool *bad;
    size_t count, alloc;
};

static bool
chat_serves(const struct loader *l, const char *regname)
{
    for (const char *const *n = l->chat_routed; n != NULL && *n != NULL; n++)
        if (strcmp(*n, regname) == 0)
            return true;
    return false;
}

static void
action_release(struct plugin_action *a)
{
    free(a->name);
    free(a->fn_name);
    free(a->description);
    free(a->source);
    free(a->plugin_dir);
    free(a->tool);
    json_decref(a->input_schema);
    json_decref(a->output_schema);
    memset(a, 0, sizeof(*a));
}

static struct plugin_action *
loader_push(struct loader *l)
{
    if (l->count == l->alloc) {
        size_t n = l->alloc ? l->alloc * 2 : 16;
        struct plugin_action *p = realloc(l->actions, n * sizeof(*p));
        bool *b;
        if (p == NULL)
            return NULL;
        l->actions = p;
        if ((b = realloc(l->bad, n * sizeof(*b))) == NULL)
            return NULL;
        l->bad = b;
        l->alloc = n;
    }
    struct plugin_action *a = &l->actions[l->count];
    memset(a, 0, sizeof(*a));
    return a;
}

/* Report a jschema problem at the line of the keyword it names. */
struct schema_report {
    struct diag *d;
    const char *file;
    const struct ydoc_node *root;
    const char *base; /* "/inputSchema" or "/outputSchema" */
};

static void
report_schema_problem(void *ctx, const char *pointer, const char *msg)
{
    struct schema_report *r = ctx;
    char full[512];

    snprintf(full, sizeof(full), "%s%s", r->base, pointer);
    diag_add(r->d, r->file, ydoc_line_at(r->root, full), "%s: %s", full + 1,
             msg);
}

/*
 * Convert and check one schema of a .jay-action. Returns a new reference,
 * or NULL after reporting (absent schemas return NULL without a report).
 */
static json_t *
load_schema(const struct ydoc_node *root, const char *key, const char *file,
            bool must_be_object, struct diag *d)
{
    const struct ydoc_node *n = ydoc_get(root, key);
    struct schema_report r = {d, file, root,
                              key[0] == 'i' ? "/inputSchema" : "/outputSchema"};
    json_t *schema;

    if (n == NULL)
        return NULL;
    schema = ydoc_to_json(n, file, d);
    if (schema == NULL)
        return NULL;
    if (jschema_check(schema, report_schema_problem, &r) > 0)
        goto bad;
    if (must_be_object) {
        /* Gemini function parameters are always an object. */
        const char *t = json_string_value(json_object_get(schema, "type"));
        if (t == NULL || strcmp(t, "object") != 0) {
            diag_add(d, file, n->line,
                     "%s must have type: object (function arguments are an "
                     "object)",
                     key);
            goto bad;
        }
    }
    return schema;
bad:
    json_decref(schema);
    return NULL;
}

static char *
join_path(const char *dir, const char *rel)
{
    char *p = NULL;

    if (rel[0] == '/')
        return strdup(rel);
    if (strncmp(rel, "./", 2) == 0)
        rel += 2;
    if (asprintf(&p, "%s/%s", dir, rel) < 0)
        return NULL;
    return p;
}

/*
 * Fill `a` from the .jay-action at `path`, declared in plugin.yaml at
 * `line` under entry name `entry`. Returns 0, or -1 after reporting.
 */
static int
load_jay_action(struct plugin_action *a, const char *path, const char *entry,
                const char *plugin_file, int line, struct diag *d)
{
    static const char *const keys[] = {"name", "description", "inputSchema",
                                       "outputSchema", "sideEffects"};
    struct arena arena;
    const struct ydoc_node *root, *n;
    size_t before = d->count;
    bool side = false;
    const char *s;

    arena_init(&arena);
    root = ydoc_load_file(path, &arena, d);
    if (root == NULL) {
        diag_add(d, plugin_file, line, "cannot load action file '%s'", path);
        goto out;
    }
    if (root->kind != YDOC_MAP) {
        diag_add(d, path, root->line, "an action file must be a mapping");
        goto out;
    }
    for (size_t i = 0; i < root->count; i++) {
        const char *k = root->keys[i]->text;
        size_t j = 0;
        while (j < ARRAY_SIZE(keys) && strcmp(keys[j], k) != 0)
            j++;
        if (j == ARRAY_SIZE(keys))
            diag_add(d, path, root->keys[i]->line,
                     "unknown key '%s' (expected name, description, "
                     "inputSchema, outputSchema, sideEffects)",
                     k);
    }
    n = ydoc_get(root, "name");
    s = ydoc_string(n);
    if (s == NULL)
        diag_add(d, path, n ? n->line : root->line,
                 "'name' must be a string naming the action");
    else if (strcmp(s, entry) != 0)
        diag_add(d, path, n->line,
                 "name '%s' does not match the plugin.yaml entry '%s'", s,
                 entry);
    n = ydoc_get(root, "description");
    s = ydoc_string(n);
    if (s == NULL || s[0] == '\0')
        diag_add(d, path, n ? n->line : root->line,
                 "'description' must be a non-empty string: the model reads "
                 "it to decide when to call the action");
    else
        a->description = strdup(s);
    n = ydoc_get(root, "sideEffects");
    if (n != NULL && !ydoc_bool(n, &side))
        diag_add(d, path, n->line, "'sideEffects' must be true or false");
    a->side_effects = side;
    if (ydoc_get(root, "inputSchema") == NULL)
        diag_add(d, path, root->line, "'inputSchema' is required");
    else
        a->input_schema = load_schema(root, "inputSchema", path, true, d);
    a->output_schema = load_schema(root, "outputSchema", path, false, d);
out:
    arena_release(&arena);
    return d->count == before ? 0 : -1;
}

/* One entry of plugin.yaml's `actions` list as it is read. */
struct entry {
    const char *plugin, *dir, *file; /* its plugin, folder, plugin.yaml */
    const struct ydoc_node *e;
    bool library;                         /* the plugin names a library */
    const struct ydoc_node *nn, *an, *rn; /* name, action, route */
    const char *action_file;              /* NULL: an HTTP-only entry */
    bool chat;                            /* route: chat */
};

/* The keys of an entry written as a map (name, action, route), each
 * checked; a bad one is reported. */
static void
entry_keys(struct loader *l, struct entry *en)
{
    const struct ydoc_node *e = en->e;
    const char *route;

    for (size_t i = 0; i < e->count; i++) {
        const char *k = e->keys[i]->text;
        if (strcmp(k, "name") != 0 && strcmp(k, "action") != 0 &&
            strcmp(k, "route") != 0)
            diag_add(l->d, en->file, e->keys[i]->line,
                     "unknown key '%s' in an action entry (expected "
                     "name, action, route)",
                     k);
    }
    en->nn = ydoc_get(e, "name");
    en->an = ydoc_get(e, "action");
    /* reported, and the entry goes on as a bad HTTP-only one so that
     * it still names its handler */
    if (en->an == NULL || (en->action_file = ydoc_string(en->an)) == NULL)
        diag_add(l->d, en->file, en->an ? en->an->line : e->line,
                 "'action' must be the path of a .jay-action file");
    en->rn = ydoc_get(e, "route");
    route = ydoc_string(en->rn);
    if (en->rn != NULL && (route == NULL || strcmp(route, "chat") != 0))
        diag_add(l->d, en->file, en->rn->line,
                 "'route' must be chat (the only route an entry may "
                 "name)");
    en->chat = route != NULL && strcmp(route, "chat") == 0;
}

/* Who runs the action a, `regname` (the entry's `name` in its plugin):
 * the chat routes, a compiled-in handler, or its library. Returns 0, or
 * -1 out of memory (reported). */
static int
entry_runner(struct loader *l, const struct entry *en, struct plugin_action *a,
             const char *name, const char *regname)
{
    if (en->chat) {
        /* served by the chat routes: no handler, never for the model */
        a->route = PLUGIN_ROUTE_CHAT;
        if (!chat_serves(l, regname))
            diag_add(l->d, en->file, en->rn->line,
                     "'%s' says route: chat, but no chat route serves it",
                     regname);
        return 0;
    }
    a->handler = handler_find(regname);
    /* else its library's execute() runs it, by the entry's name (bound
     * once the library is loaded: bind_library()) */
    if (a->handler == NULL && en->library && (a->tool = strdup(name)) == NULL) {
        diag_add(l->d, en->file, en->e->line, "out of memory");
        return -1;
    }
    if (a->handler == NULL && !en->library)
        diag_add(l->d, en->file, en->e->line,
                 "no handler is compiled in for '%s' (add one under "
                 "actions/%s/*.c, or name a library: in plugin.yaml)",
                 regname, en->plugin);
    return 0;
}

/* One entry of plugin.yaml's `actions` list. */
static void
load_entry(struct loader *l, const char *plugin, const char *dir,
           const char *file, const struct ydoc_node *e, bool library)
{
    struct entry en = {plugin, dir,  file, e,    library,
                       e,      NULL, NULL, NULL, false};
    char regname[2 * BOUND_NAME_LEN + 2], fn[2 * BOUND_NAME_LEN + 16];
    struct plugin_action *a;
    size_t before = l->d->count;
    const char *name;

    if (e->kind == YDOC_MAP)
        entry_keys(l, &en);
    name = ydoc_string(en.nn);
    if (!valid_name(name)) {
        diag_add(l->d, file, en.nn ? en.nn->line : e->line,
                 "an action name must be an identifier of at most %d "
                 "characters (letters, digits, '_' or '-')",
                 BOUND_NAME_LEN);
        return;
    }
    snprintf(regname, sizeof(regname), "%s.%s", plugin, name);
    if (plugin_fn_name(regname, fn, sizeof(fn)) != 0)
        return;
    a = loader_push(l);
    if (a == NULL) {
        diag_add(l->d, file, e->line, "out of memory");
        return;
    }
    a->line = e->line;
    if (entry_runner(l, &en, a, name, regname) != 0) {
        action_release(a);
        return;
    }
    if (en.action_file != NULL) {
        a->source = join_path(dir, en.action_file);
        if (a->source != NULL)
            (void)load_jay_action(a, a->source, name, file, en.an->line, l->d);
        a->listed = true;
        a->exposed = !en.chat;
    }
    a->name = strdup(regname);
    a->fn_name = strdup(fn);
    a->plugin_dir = strdup(dir);
    if (a->name == NULL || a->fn_name == NULL || a->plugin_dir == NULL ||
        (en.action_file && a->source == NULL)) {
        diag_add(l->d, file, e->line, "out of memory");
        action_release(a);
        return;
    }
    /* reported: kept for the cross checks, then left out */
    l->bad[l->count++] = l->d->count != before;
}

/*
 * Top-level keys of a jay-stack plugin.yaml that gemini-agent has no use
 * for (jay-stack's plugin-structure guide: components and their contracts,
 * services, contexts, routes, the `setup` handler, reference data; and
 * `global`, `module`). A plugin written for jay-stack loads as it is: each
 * is accepted and noted, not reported as a problem.
 */
static const char *const jay_stack_keys[] = {
    "global",   "module", "contracts", "services",
    "contexts", "routes", "setup",     "references",
};

static bool
is_jay_stack_key(const char *k)
{
    for (size_t i = 0; i < ARRAY_SIZE(jay_stack_keys); i++)
        if (strcmp(jay_stack_keys[i], k) == 0)
            return true;
    return false;
}

/* Note a plugin found (out of memory: it is just not listed). */
static void
record(struct plugin_set *set, const char *name, const char *source,
       bool declarative, bool exposed)
{
    struct plugin_info *q, *e;

    if (set == NULL ||
        (q = realloc(set->plugins, (set->nplugins + 1) * sizeof(*q))) == NULL)
        return;
    set->plugins = q;
    e = &q[set->nplugins];
    e->name = strdup(name);
    e->source = strdup(source);
    e->declarative = declarative;
    e->exposed = exposed;
    if (e->name == NULL || e->source == NULL) {
        free(e->name);
        free(e->source);
        return;
    }
    set->nplugins++;
}

static void
free_infos(struct plugin_set *set)
{
    for (size_t i = 0; i < set->nplugins; i++) {
        free(set->plugins[i].name);
        free(set->plugins[i].source);
    }
    free(set->plugins);
}

/* Is `h` the handler of a plugin.yaml plugin found but not exposed? */
static bool
unexposed_handler(const struct plugin_set *set, const char *h)
{
    for (size_t i = 0; i < set->nplugins; i++) {
        size_t len = strlen(set->plugins[i].name);
        if (set->plugins[i].declarative && !set->plugins[i].exposed &&
            strncmp(h, set->plugins[i].name, len) == 0 && h[len] == '.')
            return true;
    }
    return false;
}

/* soplugin_env.found: a built-in or .so plugin found. */
static void
found_so(void *ctx, const char *name, const char *path, enum so_role role)
{
    record(ctx, name, path, false, role != SO_AVAILABLE);
}

static int
cmp_info(const void *a, const void *b)
{
    return strcmp(((const struct plugin_info *)a)->name,
                  ((const struct plugin_info *)b)->name);
}

/* Does the plugin.yaml plugin `name` take part? plugins.expose decides as
 * for any plugin - but the chat protocol's own plugin (the one whose
 * entries the chat routes serve) is the product, never a tool to unexpose. */
static bool
folder_exposed(const struct loader *l, const char *name)
{
    size_t len = strlen(name);

    if (l->pcfg == NULL)
        return true;
    for (const char *const *n = l->chat_routed; n != NULL && *n != NULL; n++)
        if (strncmp(*n, name, len) == 0 && (*n)[len] == '.')
            return true;
    return soplugin_role(l->pcfg, name) == SO_EXPOSED;
}

/* Names plugins.expose gives that no plugin has: a typo, most likely,
 * or a plugin reported already. The permission engine is configured,
 * never loaded (the site reads plugins.config.permission). */
static void
report_unknown_exposed(const struct plugin_set *set,
                       const struct config_plugins *cfg, struct diag *d)
{
    for (size_t i = 0; cfg != NULL && !cfg->expose_all && cfg->expose != NULL &&
                       cfg->expose[i] != NULL;
         i++) {
        size_t k = 0;
        while (k < set->nplugins &&
               strcmp(set->plugins[k].name, cfg->expose[i]) != 0)
            k++;
        if (k == set->nplugins && strcmp(cfg->expose[i], "permission") != 0)
            diag_add(d, cfg->file ? cfg->file : "agent.yaml", cfg->expose_line,
                     "plugins.expose names '%s', and no plugin of that name "
                     "was found (not built in, not in the actions folders or "
                     "plugins.dirs, or left out above)",
                     cfg->expose[i]);
    }
}

/* plugin.yaml's `library: FILE.so` (relative to its folder): noted, to be
 * loaded after the folders. The entry, or NULL after reporting. */
static const struct loader_lib *
want_library(struct loader *l, const char *plugin, const char *dir,
             const char *file, const struct ydoc_node *n)
{
    const char *rel = ydoc_string(n);
    struct loader_lib *q, *e;
    size_t len = rel ? strlen(rel) : 0;

    if (rel == NULL || len < 4 || strcmp(rel + len - 3, ".so") != 0) {
        diag_add(l->d, file, n->line,
                 "'library' must be the path of a shared object (.so) "
                 "built against include/gemini-agent/plugin.h");
        return NULL;
    }
    if ((q = realloc(l->libs, (l->nlibs + 1) * sizeof(*q))) == NULL)
        goto oom;
    l->libs = q;
    e = &q[l->nlibs];
    e->plugin = strdup(plugin);
    e->path = join_path(dir, rel);
    if (e->plugin == NULL || e->path == NULL) {
        free(e->plugin);
        free(e->path);
        goto oom;
    }
    return &l->libs[l->nlibs++];
oom:
    diag_add(l->d, file, n->line, "out of memory");
    return NULL;
}

static void
load_plugin(struct loader *l, const char *dir)
{
    struct arena arena;
    char *file = NULL;
    const struct ydoc_node *root, *n, *list;
    const struct loader_lib *lib = NULL;
    const char *plugin;
    bool exposed;

    arena_init(&arena);
    if (asprintf(&file, "%s/plugin.yaml", dir) < 0) {
        file = NULL;
        goto out;
    }
    root = ydoc_load_file(file, &arena, l->d);
    if (root == NULL)
        goto out;
    if (root->kind != YDOC_MAP) {
        diag_add(l->d, file, root->line, "plugin.yaml must be a mapping");
        goto out;
    }
    for (size_t i = 0; i < root->count; i++) {
        const char *k = root->keys[i]->text;
        if (strcmp(k, "name") == 0 || strcmp(k, "actions") == 0 ||
            strcmp(k, "description") == 0 || strcmp(k, "library") == 0)
            continue;
        if (is_jay_stack_key(k))
            diag_note(l->d, file, root->keys[i]->line,
                      "'%s' is a jay-stack key: accepted, and not used by "
                      "gemini-agent",
                      k);
        else
            diag_add(l->d, file, root->keys[i]->line,
                     "unknown key '%s' (expected name, description, actions, "
                     "library)",
                     k);
    }
    n = ydoc_get(root, "name");
    plugin = ydoc_string(n);
    if (!valid_name(plugin)) {
        diag_add(l->d, file, n ? n->line : root->line,
                 "'name' must be an identifier of at most %d characters "
                 "(letters, digits, '_' or '-')",
                 BOUND_NAME_LEN);
        goto out;
    }
    exposed = folder_exposed(l, plugin);
    record(l->set, plugin, dir, true, exposed);
    if (!exposed)
        goto out; /* available, not exposed: none of its entries load */
    if ((n = ydoc_get(root, "library")) != NULL &&
        (lib = want_library(l, plugin, dir, file, n)) == NULL)
        goto out; /* reported: its entries would have no executor */
    list = ydoc_get(root, "actions");
    if (list == NULL || list->kind != YDOC_SEQ) {
        diag_add(l->d, file, list ? list->line : root->line,
                 "'actions' must be a list of entries");
        goto out;
    }
    for (size_t i = 0; i < list->count; i++) {
        if (l->count >= BOUND_ACTIONS) {
            diag_add(l->d, file, list->values[i]->line,
                     "more than %d actions in all", BOUND_ACTIONS);
            break;
        }
        load_entry(l, plugin, dir, file, list->values[i], lib != NULL);
    }
out:
    free(file);
    arena_release(&arena);
}

/* --- shared-object plugins' tools ---------------------------------------- */

/* Report a jschema problem in a plugin's declaration (no lines: JSON). */
struct so_report {
    struct diag *d;
    const char *file;
    const char *tool;
};

static void
report_so_schema(void *ctx, const char *pointer, const char *msg)
{
    struct so_report *r = ctx;

    diag_add(r->d, r->file, 0, "tool '%s': parameters%s: %s", r->tool, pointer,
             msg);
}

/* Does the JSON array text `list` (auto_approved_tools()) name `tool`? */
static bool
names_tool(const char *list, const char *tool)
{
    json_t *a = list ? json_loads(list, 0, NULL) : NULL;
    json_t *v;
    size_t i;
    bool found = false;

    json_array_foreach(a, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), tool) == 0)
            found = true;
    json_decref(a);
    return found;
}

/* One declaration of plugin `p`: {name, description, parameters,
 * sideEffects?}. Reported and left out when malformed. */
static void
load_so_tool(struct loader *l, const struct so_plugin *p, const json_t *decl)
{
    const char *tool = json_string_value(json_object_get(decl, "name"));
    const char *desc = json_string_value(json_object_get(decl, "description"));
    json_t *params = json_object_get(decl, "parameters");
    json_t *side = json_object_get(decl, "sideEffects");
    const char *type = json_string_value(json_object_get(params, "type"));
    char regname[2 * BOUND_NAME_LEN + 2], fn[2 * BOUND_NAME_LEN + 16];
    struct so_report r = {l->d, p->path, tool};
    struct plugin_action *a;

    if (!valid_name(tool)) {
        diag_add(l->d, p->path, 0,
                 "plugin '%s': a tool's name must be an identifier of at most "
                 "%d characters (letters, digits, '_' or '-')",
                 p->name, BOUND_NAME_LEN);
        return;
    }
    if (desc == NULL || desc[0] == '\0' || !json_is_object(params) ||
        type == NULL || strcmp(type, "object") != 0 ||
        (side != NULL && !json_is_boolean(side))) {
        diag_add(l->d, p->path, 0,
                 "plugin '%s': tool '%s' must have a non-empty description, "
                 "parameters (a JSON Schema of type object) and sideEffects "
                 "true or false when given",
                 p->name, tool);
        return;
    }
    if (jschema_check(params, report_so_schema, &r) > 0)
        return;
    snprintf(regname, sizeof(regname), "%s.%s", p->name, tool);
    if (plugin_fn_name(regname, fn, sizeof(fn)) != 0)
        return;
    if (l->count >= BOUND_ACTIONS) {
        diag_add(l->d, p->path, 0, "more than %d actions in all",
                 BOUND_ACTIONS);
        return;
    }
    if ((a = loader_push(l)) == NULL) {
        diag_add(l->d, p->path, 0, "out of memory");
        return;
    }
    a->name = strdup(regname);
    a->fn_name = strdup(fn);
    a->description = strdup(desc);
    a->source = strdup(p->path);
    a->plugin_dir = strdup(p->path);
    a->tool = strdup(tool);
    a->input_schema = json_deep_copy(params);
    a->side_effects = json_is_true(side);
    a->auto_approved = names_tool(p->auto_approved, tool);
    a->needs_user = (p->ops->flags & GEMINI_AGENT_NEEDS_USER) != 0;
    /* the public catalog (GET /_jay/actions, the page's types): not for
     * tools about a signed-in user, which only the run API declares */
    a->listed = !a->needs_user;
    a->exposed = true;
    a->route = PLUGIN_ROUTE_HANDLER;
    a->so = p;
    if (a->name == NULL || a->fn_name == NULL || a->description == NULL ||
        a->source == NULL || a->plugin_dir == NULL || a->tool == NULL ||
        a->input_schema == NULL) {
        diag_add(l->d, p->path, 0, "out of memory");
        action_release(a);
        return;
    }
    l->bad[l->count++] = false;
}

/* The user commands of `p` (user_commands(): [{name, description,
 * shareWithModel?}]) appended to set->commands; a malformed one, or one
 * whose name another plugin took, is reported and left out. */
static void
load_so_commands(struct plugin_set *set, const struct so_plugin *p,
                 struct diag *d)
{
    const char *text = p->ops->user_commands ? p->ops->user_commands(p->self)
                                             : NULL;
    json_t *list, *c;
    size_t i;

    if (text == NULL)
        return;
    list = json_loadb(text, strnlen(text, BOUND_SO_TEXT_BYTES + 1), 0, NULL);
    if (!json_is_array(list)) {
        diag_add(d, p->path, 0,
                 "plugin '%s': its user commands must be a JSON array",
                 p->name);
        json_decref(list);
        return;
    }
    json_array_foreach(list, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *desc = json_string_value(json_object_get(c, "description"));
        json_t *share = json_object_get(c, "shareWithModel");
        json_t *effects = json_object_get(c, "sideEffects");
        struct plugin_command *cmds, *cmd;
        if (!valid_name(name) || desc == NULL ||
            (share != NULL && !json_is_boolean(share)) ||
            (effects != NULL && !json_is_boolean(effects))) {
            diag_add(d, p->path, 0,
                     "plugin '%s': user command %zu needs a name (an "
                     "identifier), a description, and shareWithModel and "
                     "sideEffects true or false when given",
                     p->name, i + 1);
            continue;
        }
        if (plugin_find_command(set, name) != NULL) {
            diag_add(d, p->path, 0,
                     "plugin '%s': the user command '%s' is taken by "
                     "another plugin",
                     p->name, name);
            continue;
        }
        cmds = realloc(set->commands, (set->ncommands + 1) * sizeof(*cmds));
        if (cmds == NULL)
            break;
        set->commands = cmds;
        cmd = &cmds[set->ncommands];
        cmd->name = strdup(name);
        cmd->description = strdup(desc);
        cmd->share_with_model = json_is_true(share);
        cmd->side_effects = json_is_true(effects);
        cmd->so = p;
        if (cmd->name == NULL || cmd->description == NULL) {
            free(cmd->name);
            free(cmd->description);
            break;
        }
        set->ncommands++;
    }
    json_decref(list);
}

static int
cmp_command(const void *a, const void *b)
{
    return strcmp(((const struct plugin_command *)a)->name,
                  ((const struct plugin_command *)b)->name);
}

const struct plugin_command *
plugin_find_command(const struct plugin_set *set, const char *name)
{
    /* Linear: a handful of commands, and loading appends unsorted. */
    for (size_t i = 0; set != NULL && i < set->ncommands; i++)
        if (strcmp(set->commands[i].name, name) == 0)
            return &set->commands[i];
    return NULL;
}

int
plugin_run_command(const struct plugin_command *c, const char *data_dir,
                   const char *arg, size_t len, struct arena *a,
                   const char **out, size_t *out_len, struct status_error *err)
{
    struct gemini_agent_out o;

    if (soplugin_run_command(c->so, c->name, data_dir, arg, len, a, &o, err) !=
        0)
        return -1;
    *out = o.text ? o.text : "";
    *out_len = o.text ? o.len : 0;
    return 0;
}

int
plugin_enrich_prompt(const struct plugin_set *set, const char *data_dir,
                     struct arena *a, const char **prompt_io, size_t *len_io,
                     json_t **metadata, struct status_error *err)
{
    json_t *meta = metadata ? json_object() : NULL;
    const char *prompt = *prompt_io;
    size_t len = *len_io;

    if (metadata != NULL) {
        *metadata = arena_take_json(a, meta);
        if (*metadata == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    /* set->so is sorted by name: the order is the registry's, stable */
    for (size_t i = 0; set != NULL && i < set->nso; i++) {
        const struct so_plugin *p = &set->so[i];
        struct gemini_agent_out np, md;
        if (p->ops->enrich_prompt == NULL)
            continue;
        if (soplugin_enrich(p, data_dir, prompt, len, a, &np, &md, err) != 0)
            return -1;
        if (np.text != NULL) {
            prompt = np.text;
            len = np.len;
        }
        if (meta != NULL && md.text != NULL && md.len > 0) {
            struct status_error jerr = {0};
            json_t *m = jsonin_decode(md.text, md.len, BOUND_JSON_DEPTH, &jerr);
            if (m != NULL && json_object_set_new(meta, p->name, m) != 0)
                return status_set(err, ST_NO_MEMORY, "out of memory");
        }
    }
    *prompt_io = prompt;
    *len_io = len;
    return 0;
}

static void
load_so_tools(struct loader *l, const struct so_plugin *p)
{
    json_t *decls = soplugin_declarations(p, l->d);
    const json_t *decl;
    size_t i;

    json_array_foreach(decls, i, decl) {
        if (!json_is_object(decl)) {
            diag_add(l->d, p->path, 0,
                     "plugin '%s': declaration %zu is not an object", p->name,
                     i + 1);
            continue;
        }
        load_so_tool(l, p, decl);
    }
    json_decref(decls);
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_action(const void *a, const void *b)
{
    return strcmp(((const struct plugin_action *)a)->name,
                  ((const struct plugin_action *)b)->name);
}

/* Each subfolder of `root` holding a plugin.yaml, in name order. */
static void
scan_dir(struct loader *l, const char *root)
{
    DIR *dp = opendir(root);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, alloc = 0;

    if (dp == NULL) {
        diag_add(l->d, root, 0, "cannot open actions folder: %s",
                 strerror(errno));
        return;
    }
    while ((de = readdir(dp)) != NULL) {
        char *sub = NULL, *py = NULL;
        struct stat st;
        if (de->d_name[0] == '.')
            continue;
        if (asprintf(&sub, "%s/%s", root, de->d_name) < 0)
            break;
        if (asprintf(&py, "%s/plugin.yaml", sub) < 0 || stat(py, &st) != 0) {
            free(sub);
            free(py);
            continue;
        }
        free(py);
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 8;
            char **p = realloc(names, alloc * sizeof(*p));
            if (p == NULL) {
                free(sub);
                break;
            }
            names = p;
        }
        names[n++] = sub;
    }
    closedir(dp);
    if (n > 0) /* qsort's base must not be NULL, even for no items */
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i < BOUND_PLUGINS)
            load_plugin(l, names[i]);
        else if (i == BOUND_PLUGINS)
            diag_add(l->d, root, 0,
                     "more than %d plugins: the rest are ignored",
                     BOUND_PLUGINS);
        free(names[i]);
    }
    free(names);
}

/* Duplicates: registered names, and Gemini names that collide after the
 * character mapping ("a-b.c" and "a_b.c"). Later entries are dropped. */
static void
drop_duplicates(struct loader *l)
{
    for (size_t i = 0; i < l->count; i++) {
        for (size_t j = i + 1; j < l->count; j++) {
            struct plugin_action *a = &l->actions[i], *b = &l->actions[j];
            bool same = strcmp(a->name, b->name) == 0;
            char file[BOUND_PATH_LEN];
            if (!same && strcmp(a->fn_name, b->fn_name) != 0)
                continue;
            snprintf(file, sizeof(file), b->so ? "%s" : "%s/plugin.yaml",
                     b->plugin_dir);
            if (same)
                diag_add(l->d, file, b->line,
                         "action '%s' is declared twice (also in "
                         "%s/plugin.yaml:%d)",
                         b->name, a->plugin_dir, a->line);
            else
                diag_add(l->d, file, b->line,
                         "actions '%s' and '%s' both map to the function "
                         "name '%s'; rename one",
                         a->name, b->name, b->fn_name);
            action_release(b);
            memmove(b, b + 1, (l->count - j - 1) * sizeof(*b));
            memmove(&l->bad[j], &l->bad[j + 1],
                    (l->count - j - 1) * sizeof(*l->bad));
            l->count--;
            j--;
        }
    }
}

/* Does the site load any entry of the plugin that `handler` ("<plugin>.
 * <name>") belongs to? */
static bool
plugin_in_use(const struct loader *l, const char *handler)
{
    const char *dot = strchr(handler, '.');
    size_t n = dot != NULL ? (size_t)(dot - handler) + 1 : 0;

    for (size_t i = 0; n > 0 && i < l->count; i++)
        if (strncmp(l->actions[i].name, handler, n) == 0)
            return true;
    return false;
}

/* Handlers compiled in that no plugin.yaml entry names, in the plugins
 * the site loads: a plugin it does not load (the demo shop, built into a
 * checkout's binary, on a site of its own) is simply not used. */
static void
report_orphan_handlers(struct loader *l)
{
    for (size_t t = 0; handler_tables[t] != NULL; t++) {
        for (const struct handler_def *h = handler_tables[t]; h->name; h++) {
            size_t i = 0;
            while (i < l->count && l->actions[i].handler != h)
                i++;
            if (i == l->count && plugin_in_use(l, h->name) &&
                !unexposed_handler(l->set, h->name))
                diag_add(l->d, "actions", 0,
                         "handler '%s' is compiled in but no plugin.yaml "
                         "entry names it",
                         h->name);
        }
    }
}

/* Load the plugin.yaml libraries the folders named, then give each entry
 * that waits for one (no compiled-in handler: a->tool set, a->so not) its
 * plugin's library; an entry whose library did not load is left out.
 * 0, or -1 out of memory. */
static int
load_libraries(struct loader *l, const struct soplugin_env *env,
               struct plugin_set *set)
{
    int rc = 0;

    for (size_t i = 0; i < l->nlibs; i++) {
        if (rc == 0 && env->cfg != NULL &&
            soplugin_add_library(env, l->libs[i].path, l->libs[i].plugin,
                                 &set->so, &set->nso, l->d) < 0)
            rc = -1;
        free(l->libs[i].plugin);
        free(l->libs[i].path);
    }
    free(l->libs);
    l->libs = NULL;
    l->nlibs = 0;
    for (size_t i = 0; rc == 0 && i < l->count; i++) {
        struct plugin_action *a = &l->actions[i];
        const char *dot = strchr(a->name ? a->name : "", '.');
        const struct so_plugin *lib = NULL;
        if (a->tool == NULL || a->so != NULL || a->handler != NULL ||
            a->route != PLUGIN_ROUTE_HANDLER || dot == NULL)
            continue;
        for (size_t k = 0; k < set->nso && lib == NULL; k++)
            if (set->so[k].library &&
                strncmp(set->so[k].name, a->name, (size_t)(dot - a->name)) ==
                    0 &&
                set->so[k].name[dot - a->name] == '\0')
                lib = &set->so[k];
        if (lib == NULL) {
            diag_add(l->d, a->plugin_dir, a->line,
                     "'%s' is left out: its plugin's library did not load "
                     "(see above)",
                     a->name);
            l->bad[i] = true;
            continue;
        }
        a->so = lib;
        a->auto_approved = names_tool(lib->auto_approved, a->tool);
    }
    return rc;
}

struct plugin_set *
plugin_load(char *const *dirs, size_t ndirs, const struct soplugin_env *so_env,
            const char *const *chat_routed, struct diag *d)
{
    struct loader l = {d,    chat_routed, so_env ? so_env->cfg : NULL,
                       NULL, NULL,        0,
                       NULL, NULL,        0,
                       0};
    struct plugin_set *set = calloc(1, sizeof(*set));
    size_t kept = 0;

    if (set == NULL)
        return NULL;
    l.set = set;
    for (size_t i = 0; i < ndirs; i++)
        scan_dir(&l, dirs[i]);
    struct soplugin_env env = so_env ? *so_env : (struct soplugin_env){0};
    env.found = found_so;
    env.found_ctx = set;
    if (so_env != NULL && soplugin_load(&env, &set->so, &set->nso, d) != 0) {
        for (size_t i = 0; i < l.count; i++)
            action_release(&l.actions[i]);
        free(l.actions);
        free(l.bad);
        free_infos(set);
        free(set);
        return NULL;
    }
    if (load_libraries(&l, &env, set) != 0) {
        for (size_t i = 0; i < l.count; i++)
            action_release(&l.actions[i]);
        free(l.actions);
        free(l.bad);
        plugin_set_free(set);
        return NULL;
    }
    /* after the folders': a .so tool that takes a declared name is the
     * one drop_duplicates() leaves out */
    for (size_t i = 0; i < set->nso; i++) {
        if (set->so[i].role != SO_EXPOSED)
            continue;            /* enrichment only: no tools, no commands */
        if (!set->so[i].library) /* a library's tools are its entries */
            load_so_tools(&l, &set->so[i]);
        load_so_commands(set, &set->so[i], d);
    }
    if (set->ncommands > 0)
        qsort(set->commands, set->ncommands, sizeof(*set->commands),
              cmp_command);
    if (set->nplugins > 0)
        qsort(set->plugins, set->nplugins, sizeof(*set->plugins), cmp_info);
    report_unknown_exposed(set, so_env ? so_env->cfg : NULL, d);
    drop_duplicates(&l);
    report_orphan_handlers(&l);
    for (size_t i = 0; i < l.count; i++) {
        if (l.bad[i])
            action_release(&l.actions[i]);
        else
            l.actions[kept++] = l.actions[i];
    }
    l.count = kept;
    free(l.bad);
    if (l.count > 0)
        qsort(l.actions, l.count, sizeof(*l.actions), cmp_action);
    set->actions = l.actions;
    set->count = l.count;
    return set;
}

const struct plugin_action *
plugin_find(const struct plugin_set *set, const char *name)
{
    struct plugin_action key = {.name = UNCONST(name)};

    if (set == NULL || set->count == 0)
        return NULL;
    return bsearch(&key, set->actions, set->count, sizeof(key), cmp_action);
}

const struct plugin_action *
plugin_find_fn(const struct plugin_set *set, const char *fn_name)
{
    /* Linear: a handful of actions, and names differ early. */
    for (size_t i = 0; set != NULL && i < set->count; i++)
        if (set->actions[i].exposed &&
            set->actions[i].route == PLUGIN_ROUTE_HANDLER &&
            strcmp(set->actions[i].fn_name, fn_name) == 0)
            return &set->actions[i];
    return NULL;
}

void
plugin_set_free(struct plugin_set *set)
{
    if (set == NULL)
        return;
    for (size_t i = 0; i < set->count; i++)
        action_release(&set->actions[i]);
    free(set->actions);
    for (size_t i = 0; i < set->ncommands; i++) {
        free(set->commands[i].name);
        free(set->commands[i].description);
    }
    free(set->commands);
    soplugin_free_all(set->so, set->nso);
    free_infos(set);
    free(set);
}
