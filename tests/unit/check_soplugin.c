/*
 * check_soplugin.c - shared-object plugins in the registry: hello.so, the
 * example built outside the tree (tests/plugins), and the broken ones
 * beside it; plugins.expose and plugins.config from agent.yaml; a tool run
 * through action_run() like any action (schema first). The Makefile builds
 * the plugins into $GA_TEST_PLUGINS before the unit tests run.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/plugin.h"
#include "registry/action.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/ga-soplugin.XXXXXX";

static const char *
plugins_dir(void)
{
    const char *d = getenv("GA_TEST_PLUGINS");
    return d != NULL ? d : "../../build-test/plugins";
}

static struct config *
load_yaml(const char *yaml, struct diag *d)
{
    char path[256];
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(yaml, f);
    fclose(f);
    return config_load(path, d);
}

/* What the registry is given: hello keeps its hello.log in dataDir,
 * the test's own folder (cleanup() removes it). */
static const struct soplugin_env *
so_env(const struct config *cfg)
{
    static struct soplugin_env env;

    env = (struct soplugin_env){.cfg = &cfg->plugins, .data_dir = tmpdir};
    return &env;
}

static void
cleanup(void)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/hello.log", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    strcpy(tmpdir, "/tmp/ga-soplugin.XXXXXX");
}

static bool
has(const struct diag *d, const char *a, const char *b)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->items[i].file, a) && strstr(d->items[i].msg, b))
            return true;
    return false;
}

/* The problems of the plugins (not the compiled-in handlers that no
 * actions folder names here). */
static size_t
so_problems(const struct diag *d)
{
    size_t n = 0;

    for (size_t i = 0; i < d->count; i++)
        n += strstr(d->items[i].file, ".so") != NULL;
    return n;
}

/* The agent.yaml text for the test plugins with `rest` after dirs. */
static struct config *
plugins_config(const char *rest, struct diag *d)
{
    char yaml[1024];

    struct config *cfg;

    snprintf(yaml, sizeof(yaml), "actions: []\nplugins:\n  dirs: ['%s']\n%s",
             plugins_dir(), rest);
    cfg = load_yaml(yaml, d);
    /* only the plugins' problems count here (no .gemini.yaml is one) */
    diag_release(d);
    *d = (struct diag)DIAG_INIT;
    return cfg;
}

START_TEST(hello_loads_broken_ones_reported)
{
    struct diag d = DIAG_INIT;
    struct config *cfg =
        plugins_config("  config: {hello: {greeting: Yo}}\n", &d);
    struct plugin_set *set;
    const struct plugin_action *a;

    ck_assert_ptr_nonnull(cfg);
    set = plugin_load(NULL, 0, so_env(cfg), NULL, &d);
    ck_assert_ptr_nonnull(set);
    ck_assert_msg(has(&d, "nosym.so", "gemini_agent_plugin_create"),
                  "missing factory not reported");
    ck_assert_msg(has(&d, "badabi.so", "ABI 999"), "wrong ABI not reported");
    /* baddecl's two malformed tools, each reported, its fine one kept */
    ck_assert_msg(has(&d, "baddecl.so", "tool 'noschema' must have"),
                  "a non-object schema not reported");
    ck_assert_msg(has(&d, "baddecl.so", "patternProperties"),
                  "a refused keyword not reported");
    ck_assert_uint_eq(so_problems(&d), 4);
    ck_assert_uint_eq(set->nso, 2); /* name order */
    ck_assert_str_eq(set->so[0].name, "baddecl");
    ck_assert_str_eq(set->so[1].name, "hello");
    ck_assert_ptr_null(set->so[0].instructions);
    ck_assert_ptr_nonnull(strstr(set->so[1].instructions, "HELLO-PLUGIN"));
    ck_assert_ptr_nonnull(plugin_find(set, "baddecl.fine"));
    ck_assert_ptr_null(plugin_find(set, "baddecl.noschema"));
    ck_assert_ptr_null(plugin_find(set, "baddecl.badschema"));
    ck_assert_uint_eq(set->count, 3); /* baddecl.fine, hello.greet, wave */
    ck_assert(plugin_find(set, "hello.wave")->side_effects);
    ck_assert(!plugin_find(set, "hello.wave")->auto_approved);
    a = plugin_find_fn(set, "action_hello_greet");
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->name, "hello.greet");
    ck_assert_ptr_eq(a->so, &set->so[1]);
    ck_assert(a->exposed && a->listed && !a->side_effects && a->auto_approved);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    cleanup();
}
END_TEST

START_TEST(hello_runs_through_action_run)
{
    struct diag d = DIAG_INIT;
    struct config *cfg =
        plugins_config("  config: {hello: {greeting: Yo}}\n", &d);
    struct plugin_set *set = plugin_load(NULL, 0, so_env(cfg), NULL, &d);
    const struct plugin_action *a = plugin_find(set, "hello.greet");
    struct status_error err = {0};
    struct arena ar;
    json_t *in, *out = NULL;

    arena_init(&ar);
    ck_assert_ptr_nonnull(a);
    in = json_pack("{s:s}", "who", "Zed");
    ck_assert_int_eq(action_run(&cfg->actions, a, NULL, in, &ar, &out, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(out, "greeting")),
                     "Yo, Zed!");
    json_decref(in);
    /* the schema, before the plugin */
    in = json_pack("{s:i}", "who", 5);
    ck_assert_int_eq(action_run(&cfg->actions, a, NULL, in, &ar, &out, &err), -1);
    ck_assert_int_eq(err.code, ST_SCHEMA);
    json_decref(in);
    /* a plugin's answer that is not JSON: the action failed */
    a = plugin_find(set, "baddecl.fine");
    ck_assert_ptr_nonnull(a);
    in = json_pack("{s:b}", "garbage", 1);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(action_run(&cfg->actions, a, NULL, in, &ar, &out, &err), -1);
    ck_assert_int_eq(err.code, ST_ACTION_FAILED);
    ck_assert_msg(strstr(err.text, "did not return a JSON object") != NULL,
                  "%s", err.text);
    json_decref(in);
    arena_release(&ar);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    cleanup();
}
END_TEST

/* A plugin.yaml folder whose `library:` runs its entries: tests/plugins/
 * weather (built into $GA_TEST_PLUGINS/declarative); and two broken
 * ones written here - a library of another name, a missing one. */
START_TEST(declarative_plugin_with_a_library)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = plugins_config("", &d);
    char decl[256], broken[300], path[400];
    const char *dirs[2] = {decl, broken};
    struct plugin_set *set;
    const struct plugin_action *a;
    struct status_error err = {0};
    struct arena ar;
    json_t *in, *out = NULL;
    FILE *f;

    snprintf(decl, sizeof(decl), "%s/declarative", plugins_dir());
    snprintf(broken, sizeof(broken), "%s/broken", tmpdir);
    ck_assert_int_eq(mkdir(broken, 0700), 0);
    snprintf(path, sizeof(path), "%s/other", broken);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/other/plugin.yaml", broken);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "name: other\nlibrary: %s/hello.so\nactions: [thing]\n",
            plugins_dir());
    fclose(f);
    snprintf(path, sizeof(path), "%s/gone", broken);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/gone/plugin.yaml", broken);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("name: gone\nlibrary: ./gone.so\nactions: [thing]\n", f);
    fclose(f);

    set = plugin_load((char *const *)UNCONST(dirs), 2, so_env(cfg), NULL, &d);
    ck_assert_ptr_nonnull(set);
    a = plugin_find(set, "weather.forecast");
    ck_assert_ptr_nonnull(a);
    ck_assert(a->exposed && a->listed);
    ck_assert_ptr_nonnull(a->so);
    ck_assert(a->so->library);
    ck_assert_str_eq(a->description, "Tomorrow's weather in a city.");
    /* its declarations() gave none: the entry is the only tool */
    ck_assert_ptr_null(plugin_find(set, "weather.nothing"));
    arena_init(&ar);
    in = json_pack("{s:s}", "city", "Oslo");
    ck_assert_int_eq(action_run(&cfg->actions, a, NULL, in, &ar, &out, &err),
                     0);
    ck_assert_str_eq(json_string_value(json_object_get(out, "forecast")),
                     "sunny");
    ck_assert_str_eq(json_string_value(json_object_get(out, "city")), "Oslo");
    json_decref(in);
    /* the .jay-action's schema, before the library */
    in = json_pack("{s:s, s:i}", "city", "Oslo", "days", 3);
    ck_assert_int_eq(action_run(&cfg->actions, a, NULL, in, &ar, &out, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_SCHEMA);
    json_decref(in);
    arena_release(&ar);
    /* a library that is another plugin, and one that is not there: both
     * reported, their entries left out, the rest loaded */
    ck_assert_msg(has(&d, "hello.so", "it is the plugin 'hello', and its "
                                      "plugin.yaml is 'other'"),
                  "a library of another name not reported");
    ck_assert_msg(has(&d, "gone.so", "cannot load it"),
                  "a missing library not reported");
    ck_assert_msg(has(&d, "other", "'other.thing' is left out"),
                  "an entry without its library kept");
    ck_assert_ptr_null(plugin_find(set, "other.thing"));
    ck_assert_ptr_null(plugin_find(set, "gone.thing"));
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    snprintf(path, sizeof(path), "rm -rf '%s'", broken);
    ck_assert_int_eq(system(path), 0);
    cleanup();
}
END_TEST

START_TEST(user_commands_and_enrichment)
{
    struct diag d = DIAG_INIT;
    struct config *cfg =
        plugins_config("  config: {hello: {greeting: Yo}}\n", &d);
    struct plugin_set *set = plugin_load(NULL, 0, so_env(cfg), NULL, &d);
    const struct plugin_command *c;
    struct status_error err = {0};
    struct arena ar;
    const char *out;
    size_t len;
    json_t *meta = NULL;

    arena_init(&ar);
    ck_assert_uint_eq(set->ncommands, 2);
    c = plugin_find_command(set, "forget");
    ck_assert_ptr_nonnull(c);
    ck_assert(c->side_effects && !c->share_with_model);
    c = plugin_find_command(set, "greeting");
    ck_assert_ptr_nonnull(c);
    ck_assert(c->share_with_model && !c->side_effects);
    ck_assert_str_eq(c->description, "Say the configured greeting");
    ck_assert_ptr_null(plugin_find_command(set, "nope"));
    ck_assert_int_eq(plugin_run_command(c, cfg->actions.data_dir, "x", 1, &ar,
                                        &out, &len, &err),
                     0);
    ck_assert_uint_eq(len, strlen("Yo (x)"));
    ck_assert(memcmp(out, "Yo (x)", len) == 0);

    /* a prompt it subscribes to: changed, with its metadata */
    out = "hi @hello";
    len = 9;
    ck_assert_int_eq(plugin_enrich_prompt(set, cfg->actions.data_dir, &ar, &out,
                                          &len, &meta, &err),
                     0);
    ck_assert_uint_eq(len, strlen("hi @hello [hello was here]"));
    ck_assert(memcmp(out, "hi @hello [hello was here]", len) == 0);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(meta, "hello"), "mentions")),
                     1);
    /* one it leaves alone: the same text, no metadata */
    out = "hi";
    len = 2;
    ck_assert_int_eq(plugin_enrich_prompt(set, cfg->actions.data_dir, &ar, &out,
                                          &len, &meta, &err),
                     0);
    ck_assert_uint_eq(len, 2);
    ck_assert_uint_eq(json_object_size(meta), 0);
    arena_release(&ar);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    cleanup();
}
END_TEST

START_TEST(expose_list_and_failing_initialize)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = plugins_config("  expose: [other]\n", &d);
    struct plugin_set *set = plugin_load(NULL, 0, so_env(cfg), NULL, &d);

    ck_assert_uint_eq(set->nso, 0);
    ck_assert_uint_eq(set->count, 0);
    ck_assert_msg(has(&d, "agent.yaml", "'other'"), "unknown expose name");
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    cleanup();

    d = (struct diag)DIAG_INIT;
    cfg = plugins_config("  expose: [hello]\n  config: {hello: {greeting: "
                         "fail}}\n",
                         &d);
    set = plugin_load(NULL, 0, so_env(cfg), NULL, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_msg(has(&d, "hello.so", "asked me to fail"),
                  "initialize's reason not reported");
    /* and nosym.so, badabi.so: reported whatever the expose list says */
    ck_assert_uint_eq(so_problems(&d), 3);
    ck_assert_msg(!has(&d, "baddecl.so", "tool"),
                  "an unexposed plugin's tools are not read");
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    cleanup();
}
END_TEST

START_TEST(config_problems_have_lines)
{
    struct diag d = DIAG_INIT;
    struct config *cfg =
        load_yaml("plugins:\n  dirs: [x]\n  expose: some\n  config: [1]\n"
                  "  other: 1\n",
                  &d);

    ck_assert_ptr_null(cfg);
    ck_assert_msg(has(&d, "agent.yaml", "plugins.expose"), "expose");
    ck_assert_msg(has(&d, "agent.yaml", "plugins.config"), "config");
    ck_assert_msg(has(&d, "agent.yaml", "unknown key 'other'"), "key");
    for (size_t i = 0; i < d.count; i++)
        ck_assert_int_gt(d.items[i].line, 0);
    diag_release(&d);
    cleanup();
}
END_TEST

/* --- built-in plugins: the same operations, reached through a table --- */

static int shutdowns;

static const char *
bi_decls(void *self)
{
    (void)self;
    return "[{\"name\":\"now\",\"description\":\"The time\","
           "\"parameters\":{\"type\":\"object\"}}]";
}

static int
bi_run(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
       const char *args, size_t len, struct gemini_agent_out *out)
{
    (void)self; (void)tool; (void)args; (void)len;
    return gemini_agent_reply(ctx, out, "{\"t\":1}", 7);
}

static int
bi_init(const struct gemini_agent_init *init, void **self, char *err,
        size_t n)
{
    (void)err; (void)n;
    /* kept: the instance is its config */
    *self = strndup(init->config, init->config_len);
    return 0;
}

static void
bi_shutdown(void *self)
{
    shutdowns++;
    free(self);
}

static const char *
bi_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{\"max\":{\"type\":"
           "\"integer\",\"minimum\":1}},\"additionalProperties\":false}";
}

static int
bi_enrich(void *self, const struct gemini_agent_ctx *ctx, const char *p,
          size_t len, struct gemini_agent_out *np, struct gemini_agent_out *md)
{
    (void)self; (void)md;
    char buf[256];
    int n = snprintf(buf, sizeof(buf), "%.*s [clock]", (int)len, p);
    return gemini_agent_reply(ctx, np, buf, (size_t)n);
}

static const struct gemini_agent_plugin clock_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI, .name = "clock",
    .declarations = bi_decls, .execute = bi_run, .initialize = bi_init,
    .shutdown = bi_shutdown, .config_schema = bi_schema,
    .enrich_prompt = bi_enrich,
};
static const struct gemini_agent_plugin shell_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI, .name = "shell",
    .declarations = bi_decls, .execute = bi_run,
    .flags = GEMINI_AGENT_TERMINAL_ONLY,
};

static const struct gemini_agent_plugin *
clock_create(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &clock_plugin : NULL;
}

static const struct gemini_agent_plugin *
shell_create(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &shell_plugin : NULL;
}

/* zeta enriches after clock (name order): it tags what clock gave it,
 * and says in its metadata whether clock's tag was there. */
static int
zeta_enrich(void *self, const struct gemini_agent_ctx *ctx, const char *p,
            size_t len, struct gemini_agent_out *np,
            struct gemini_agent_out *md)
{
    char buf[256];
    bool after_clock = len >= 7 && memcmp(p + len - 7, "[clock]", 7) == 0;
    int n = snprintf(buf, sizeof(buf), "%.*s [zeta]", (int)len, p);

    (void)self;
    if (gemini_agent_reply(ctx, np, buf, (size_t)n) != GEMINI_AGENT_OK)
        return GEMINI_AGENT_FAILED;
    const char *m = after_clock ? "{\"sawClock\":true}"
                                : "{\"sawClock\":false}";
    return gemini_agent_reply(ctx, md, m, strlen(m));
}

static const struct gemini_agent_plugin zeta_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI, .name = "zeta",
    .declarations = bi_decls, .execute = bi_run,
    .enrich_prompt = zeta_enrich,
};

static const struct gemini_agent_plugin *
zeta_create(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &zeta_plugin : NULL;
}

/* zeta first in the table: the pipeline's order is the names', not the
 * table's */
static const gemini_agent_plugin_factory test_builtins[] = {
    zeta_create, clock_create, shell_create, NULL,
};

/* Load the built-ins above with the agent.yaml `yaml`, for the web
 * (terminal false) or the terminal client. */
static struct plugin_set *
builtin_set(const char *yaml, bool terminal, struct config **cfg,
            struct diag *d)
{
    *cfg = load_yaml(yaml, d);
    ck_assert_ptr_nonnull(*cfg);
    diag_release(d);
    *d = (struct diag)DIAG_INIT;
    return plugin_load(NULL, 0,
                       &(struct soplugin_env){.cfg = &(*cfg)->plugins,
                                              .builtins = test_builtins,
                                              .terminal = terminal},
                       NULL, d);
}

static void
builtin_done(struct plugin_set *set, struct config *cfg, struct diag *d)
{
    plugin_set_free(set);
    config_free(cfg);
    diag_release(d);
    cleanup();
}

START_TEST(builtins_expose_rules)
{
    struct diag d = DIAG_INIT;
    struct config *cfg;
    struct plugin_set *set;

    /* expose: all takes no built-in the owner never mentioned */
    set = builtin_set("actions: []\nplugins: {expose: all}\n", false, &cfg,
                      &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_msg(!has(&d, "", "clock") && !has(&d, "", "shell"),
                  "an unmentioned built-in reported");
    /* no dirs: the system plugin folder, which need not exist */
    ck_assert(cfg->plugins.dirs_default);
    ck_assert_uint_eq(cfg->plugins.ndirs, 1);
    ck_assert_str_eq(cfg->plugins.dirs[0], CONFIG_SYSTEM_PLUGIN_DIR);
    ck_assert_msg(!has(&d, "", "cannot open the plugins folder"),
                  "a missing system plugin folder reported");
    builtin_done(set, cfg, &d);

    /* ... and does take one that plugins.config configures */
    shutdowns = 0;
    set = builtin_set("actions: []\nplugins:\n  config: {clock: {max: 3}}\n",
                      false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 1);
    ck_assert_str_eq(set->so[0].path, SOPLUGIN_BUILTIN);
    ck_assert_ptr_null(set->so[0].dl);
    ck_assert_str_eq((const char *)set->so[0].self, "{\"max\":3}");
    ck_assert_ptr_nonnull(plugin_find(set, "clock.now"));
    builtin_done(set, cfg, &d);
    ck_assert_int_eq(shutdowns, 1);

    /* a config its schema refuses: reported at its line, left out */
    set = builtin_set("actions: []\nplugins:\n  config:\n    clock: {max: 0}"
                      "\n",
                      false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_msg(has(&d, "agent.yaml", "plugins.config.clock: /max"),
                  "a config the schema refuses is not reported");
    for (size_t i = 0; i < d.count; i++)
        if (strstr(d.items[i].msg, "plugins.config.clock"))
            ck_assert_int_eq(d.items[i].line, 4);
    builtin_done(set, cfg, &d);
}
END_TEST

START_TEST(enrichment_runs_in_name_order_each_feeding_the_next)
{
    struct diag d = DIAG_INIT;
    struct config *cfg;
    struct plugin_set *set;
    struct status_error err = {0};
    struct arena ar;
    const char *out;
    size_t out_len;
    json_t *meta = NULL;

    /* zeta exposed, clock only for enrichment: both take part */
    set = builtin_set("actions: []\nplugins: {expose: [zeta], "
                      "enrichmentOnly: [clock]}\n",
                      false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 2);
    arena_init(&ar);
    out = "hi";
    out_len = 2;
    ck_assert_int_eq(
        plugin_enrich_prompt(set, "/tmp", &ar, &out, &out_len, &meta, &err), 0);
    ck_assert_str_eq(out, "hi [clock] [zeta]");
    ck_assert_uint_eq(out_len, strlen("hi [clock] [zeta]"));
    ck_assert(json_is_true(json_object_get(json_object_get(meta, "zeta"),
                                           "sawClock")));
    arena_release(&ar);
    builtin_done(set, cfg, &d);
}
END_TEST

START_TEST(builtins_terminal_only_and_enrichment_only)
{
    struct diag d = DIAG_INIT;
    struct config *cfg;
    struct plugin_set *set;
    struct arena ar;
    const char *out;
    size_t out_len;
    struct status_error err = {0};

    /* the web refuses a terminal-only plugin, and says so when named */
    set = builtin_set("actions: []\nplugins: {expose: [shell]}\n", false,
                      &cfg, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_msg(has(&d, "agent.yaml", "terminal client only"),
                  "a terminal-only plugin refused in silence");
    builtin_done(set, cfg, &d);
    /* the terminal client exposes it */
    set = builtin_set("actions: []\nplugins: {expose: [shell]}\n", true, &cfg,
                      &d);
    ck_assert_uint_eq(set->nso, 1);
    ck_assert_ptr_nonnull(plugin_find(set, "shell.now"));
    builtin_done(set, cfg, &d);

    /* enrichment only: it enriches, its tool is not in the registry */
    set = builtin_set("actions: []\nplugins: {expose: [], enrichmentOnly: "
                      "[clock]}\n",
                      false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 1);
    ck_assert_int_eq(set->so[0].role, SO_ENRICHMENT_ONLY);
    ck_assert_ptr_null(plugin_find(set, "clock.now"));
    ck_assert_uint_eq(set->count, 0);
    arena_init(&ar);
    out = "hi";
    out_len = 2;
    ck_assert_int_eq(
        plugin_enrich_prompt(set, "/tmp", &ar, &out, &out_len, NULL, &err), 0);
    ck_assert_str_eq(out, "hi [clock]");
    arena_release(&ar);
    builtin_done(set, cfg, &d);
}
END_TEST

Suite *
soplugin_suite(void)
{
    Suite *s = suite_create("soplugin");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, hello_loads_broken_ones_reported);
    tcase_add_test(tc, hello_runs_through_action_run);
    tcase_add_test(tc, user_commands_and_enrichment);
    tcase_add_test(tc, declarative_plugin_with_a_library);
    tcase_add_test(tc, expose_list_and_failing_initialize);
    tcase_add_test(tc, config_problems_have_lines);
    tcase_add_test(tc, builtins_expose_rules);
    tcase_add_test(tc, builtins_terminal_only_and_enrichment_only);
    tcase_add_test(tc, enrichment_runs_in_name_order_each_feeding_the_next);
    suite_add_tcase(s, tc);
    return s;
}
