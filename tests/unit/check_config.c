/*
 * check_config.c - config_load(): defaults, path resolution, the key and
 * limit tables of agent.yaml, environment overrides, the Gemini settings
 * file, and the refusals. Fixtures live under data/config/; every problem
 * is pinned by file, line and a distinctive word of its message.
 *
 * A canary API key runs through every fixture and environment variable:
 * no problem message may ever contain it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/config.h"
#include "http/site.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "core/netaddr.h"
#include "unit_diag.h"
#include "registry/plugin.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DATA   "data/config"
#define CANARY "CANARY-KEY-12345"

static struct diag diag;
static struct site *site; /* config_load() and the plugins it names */
static struct config *cfg;   /* site->cfg */

static const char *const env_names[] = {
    "GEMINI_API_KEY",       "GOOGLE_API_KEY",      "GEMINI_BASE_URL",
    "AGENT_MAX_LOOP_STEPS", "GEMINI_AGENT_CONFIG",
};

/* The developer's own environment must not leak into the cases. */
static void
clear_env(void)
{
    for (size_t i = 0; i < ARRAY_SIZE(env_names); i++)
        unsetenv(env_names[i]);
}

static void
setup(void)
{
    clear_env();
    diag = (struct diag)DIAG_INIT;
    site = NULL;
    cfg = NULL;
}

static void
teardown(void)
{
    site_free(site);
    site = NULL;
    cfg = NULL;
    diag_release(&diag);
    clear_env();
}

static void
set_env(const char *name, const char *value)
{
    if (value != NULL)
        ck_assert_int_eq(setenv(name, value, 1), 0);
}

/* --- problem assertions --------------------------------------------------- */

/* The key never appears in a problem, whatever the case. */
static void
assert_no_canary(void)
{
    for (size_t i = 0; i < diag.count; i++) {
        ck_assert_msg(strstr(diag.items[i].msg, CANARY) == NULL,
                      "the API key leaked into: %s", diag.items[i].msg);
        ck_assert_msg(strstr(diag.items[i].file, CANARY) == NULL,
                      "the API key leaked into: %s", diag.items[i].file);
    }
}

static const struct want no_problems[] = {{NULL, 0, NULL}};

static struct config *
load(const char *path)
{
    site = site_load(path, &diag);
    cfg = site ? site->cfg : NULL;
    assert_no_canary();
    return cfg;
}

/* A temporary folder holding `agent.yaml` with `text`; *dir and *file are
 * heap strings the caller passes to remove_temp(). */
static void
write_temp_config(const char *text, size_t len, char **dir, char **file)
{
    FILE *f;

    *dir = strdup("/tmp/check_config.XXXXXX");
    ck_assert_ptr_nonnull(*dir);
    ck_assert_ptr_nonnull(mkdtemp(*dir));
    ck_assert_int_ge(asprintf(file, "%s/agent.yaml", *dir), 0);
    f = fopen(*file, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void
remove_temp(char *dir, char *file)
{
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}

static double
seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
assert_default_limits(const struct config_limits *l)
{
    ck_assert_int_eq(l->max_body_bytes, DEFAULT_BODY_BYTES);
    ck_assert_int_eq(l->max_history_turns, DEFAULT_HISTORY_TURNS);
    ck_assert_int_eq(l->max_tools, DEFAULT_TOOLS);
    ck_assert_int_eq(l->max_page_state_bytes, DEFAULT_PAGE_STATE_BYTES);
    ck_assert_int_eq(l->max_loop_steps, DEFAULT_LOOP_STEPS);
    ck_assert_int_eq(l->max_requests_per_worker, 0);
    ck_assert_int_eq(l->max_output_tokens, DEFAULT_OUTPUT_TOKENS);
    ck_assert_int_eq(l->max_upstream_bytes,
                     DEFAULT_UPSTREAM_PER_BODY * DEFAULT_BODY_BYTES);
}

/* --- defaults and paths --------------------------------------------------- */

/* Comments only, a zero-byte file and a bare `~` all mean "every default". */
static const char *const default_cases[] = {"defaults", "empty", "tilde"};

START_TEST(absent_keys_take_defaults)
{
    const char *c = default_cases[_i];
    char dir[64], path[128], want[192];

    snprintf(dir, sizeof(dir), DATA "/%s", c);
    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    ck_assert_ptr_nonnull(load(path));
    unit_assert_problems(&diag, no_problems);
    ck_assert_str_eq(cfg->path, path);
    ck_assert_str_eq(cfg->dir, dir);
    assert_default_limits(&cfg->limits);
    ck_assert_int_eq(cfg->gemini.timeout_ms, DEFAULT_GEMINI_TIMEOUT_MS);
    ck_assert_int_eq(cfg->actions.timeout_ms, DEFAULT_ACTION_TIMEOUT_MS);
    snprintf(want, sizeof(want), "%s/.gemini.yaml", dir);
    ck_assert_str_eq(cfg->gemini.path, want);
    ck_assert_uint_eq(cfg->actions.ndirs, 1);
    snprintf(want, sizeof(want), "%s/../actions", dir);
    ck_assert_str_eq(cfg->actions.dirs[0], want);
    snprintf(want, sizeof(want), "%s/../var", dir);
    ck_assert_str_eq(cfg->actions.data_dir, want);
    ck_assert_str_eq(cfg->gemini.model, "gemini-3.8-flash");
    ck_assert_str_eq(cfg->gemini.model, CONFIG_DEFAULT_MODEL);
    ck_assert_str_eq(cfg->gemini.base_url,
                     "https://generativelanguage.googleapis.com");
    ck_assert_str_eq(cfg->gemini.system_prompt, "");
    ck_assert_str_eq(cfg->gemini.api_key, CANARY);
    ck_assert_int_eq(cfg->gemini.key_source, CONFIG_KEY_FILE);
    ck_assert_ptr_nonnull(site->actions);
    /* the folder's four, and the memory plugin's two (on by default) */
    ck_assert_uint_eq(site->actions->count, 6);
}
END_TEST

START_TEST(every_key_is_read)
{
    const struct config_limits *l;
    static const struct want w[] = {
        {"/nonexistent/gemini-agent-actions", 0, "cannot open actions folder"},
        {NULL, 0, NULL},
    };

    /* The missing absolute folder is a problem, not a fatal one. */
    ck_assert_ptr_nonnull(load(DATA "/full/agent.yaml"));
    unit_assert_problems(&diag, w);
    l = &cfg->limits;
    ck_assert_int_eq(l->max_body_bytes, 65536);
    ck_assert_int_eq(l->max_history_turns, 50);
    ck_assert_int_eq(l->max_tools, 16);
    ck_assert_int_eq(l->max_page_state_bytes, 4096);
    ck_assert_int_eq(l->max_loop_steps, 3);
    ck_assert_int_eq(cfg->gemini.timeout_ms, 30000);
    ck_assert_int_eq(cfg->actions.timeout_ms, 2000);
    ck_assert_int_eq(l->max_requests_per_worker, 1000);
    /* not set: a multiple of the body bound the file sets */
    ck_assert_int_eq(l->max_upstream_bytes, DEFAULT_UPSTREAM_PER_BODY * 65536);
    /* relative paths hang off the config's folder, absolute ones stay */
    ck_assert_str_eq(cfg->gemini.path, DATA "/full/keys/gemini.yaml");
    ck_assert_uint_eq(cfg->actions.ndirs, 2);
    ck_assert_str_eq(cfg->actions.dirs[0], DATA "/full/../actions");
    ck_assert_str_eq(cfg->actions.dirs[1], "/nonexistent/gemini-agent-actions");
    ck_assert_str_eq(cfg->actions.data_dir, "/srv/gemini-agent/var");
    ck_assert_str_eq(cfg->gemini.model, "gemini-test-model");
    ck_assert_str_eq(cfg->gemini.system_prompt, "You sell hubs.");
    ck_assert_str_eq(cfg->gemini.base_url, "http://127.0.0.1:8089");
    ck_assert_int_eq(cfg->gemini.key_source, CONFIG_KEY_FILE);
    ck_assert_uint_eq(site->actions->count, 6); /* + memory.save, .search */
}
END_TEST

START_TEST(actions_may_be_one_folder)
{
    ck_assert_ptr_nonnull(load(DATA "/scalar/agent.yaml"));
    unit_assert_problems(&diag, no_problems);
    ck_assert_uint_eq(cfg->actions.ndirs, 1);
    ck_assert_str_eq(cfg->actions.dirs[0], DATA "/scalar/../actions");
    ck_assert_str_eq(cfg->actions.data_dir, DATA "/scalar/state");
    ck_assert_str_eq(cfg->gemini.path, DATA "/scalar/.gemini.yaml");
}
END_TEST

/* A config named without a folder resolves against ".". */
START_TEST(bare_file_name_resolves_against_cwd)
{
    char cwd[PATH_MAX];

    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    ck_assert_int_eq(chdir(DATA "/defaults"), 0);
    cfg = load("agent.yaml");
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_ptr_nonnull(cfg);
    unit_assert_problems(&diag, no_problems);
    ck_assert_str_eq(cfg->dir, ".");
    ck_assert_str_eq(cfg->gemini.path, "./.gemini.yaml");
    ck_assert_str_eq(cfg->actions.dirs[0], "./../actions");
    ck_assert_str_eq(cfg->actions.data_dir, "./../var");
}
END_TEST

START_TEST(absolute_config_path_gives_absolute_paths)
{
    char *abs = realpath(DATA "/defaults/agent.yaml", NULL), *want = NULL;
    size_t n;

    ck_assert_ptr_nonnull(abs);
    ck_assert_ptr_nonnull(load(abs));
    unit_assert_problems(&diag, no_problems);
    n = strlen(abs) - strlen("/agent.yaml");
    ck_assert_int_eq(strncmp(cfg->dir, abs, n), 0);
    ck_assert_uint_eq(strlen(cfg->dir), n);
    ck_assert_int_ge(asprintf(&want, "%s/.gemini.yaml", cfg->dir), 0);
    ck_assert_str_eq(cfg->gemini.path, want);
    ck_assert_int_eq(cfg->actions.dirs[0][0], '/');
    ck_assert_int_eq(cfg->actions.data_dir[0], '/');
    free(want);
    free(abs);
}
END_TEST

/* `actions: []` loads no plugin, and is no problem: the compiled-in
 * handlers of a plugin the site does not load are simply not used. */
START_TEST(empty_action_list_loads_no_plugin)
{
    static const struct want w[] = {{NULL, 0, NULL}};

    ck_assert_ptr_nonnull(load(DATA "/noactions/agent.yaml"));
    unit_assert_problems(&diag, w);
    ck_assert_uint_eq(cfg->actions.ndirs, 0);
    ck_assert_ptr_nonnull(site->actions);
    /* none from a folder: only the memory plugin's, on by default and
     * not in the public listing */
    ck_assert_uint_eq(site->actions->count, 2);
    ck_assert_ptr_nonnull(plugin_find(site->actions, "memory.save"));
    ck_assert_str_eq(site->listing, "{\"actions\":[]}");
}
END_TEST

static const struct {
    const char *env; /* NULL: unset */
    const char *want;
} default_path_cases[] = {
    {NULL, "conf/agent.yaml"},
    {"", "conf/agent.yaml"},
    {"/etc/gemini-agent/agent.yaml", "/etc/gemini-agent/agent.yaml"},
};

START_TEST(default_path_follows_env)
{
    set_env("GEMINI_AGENT_CONFIG", default_path_cases[_i].env);
    ck_assert_str_eq(config_default_path(), default_path_cases[_i].want);
}
END_TEST

/* --- agent.yaml refusals: all fatal --------------------------------------- */

static const struct {
    const char *path;
    struct want w; /* w.file NULL: the same as path */
} fatal_cases[] = {
    {DATA "/bad/unknown-key.yaml", {NULL, 3, "unknown key 'gemeni'"}},
    {DATA "/bad/unknown-limit.yaml", {NULL, 3, "'maxBody' in 'limits'"}},
    {DATA "/bad/limit-string.yaml",
     {NULL, 2, "must be an integer, not string"}},
    {DATA "/bad/limit-word.yaml", {NULL, 2, "must be an integer, not string"}},
    {DATA "/bad/limit-real.yaml", {NULL, 2, "must be an integer, not number"}},
    {DATA "/bad/limit-above.yaml",
     {NULL, 3, "is 16; it must be between 1 and 15"}},
    {DATA "/bad/limit-below.yaml",
     {NULL, 3, "'limits.geminiTimeoutMs' is 999; it must be between 1000"}},
    {DATA "/bad/limits-list.yaml", {NULL, 1, "'limits' must be a mapping"}},
    {DATA "/bad/actions-map.yaml", {NULL, 3, "a list of folders"}},
    {DATA "/bad/actions-int.yaml",
     {NULL, 3, "'actions' must be a non-empty string, not integer"}},
    {DATA "/bad/gemini-empty.yaml", {NULL, 1, "not an empty string"}},
    {DATA "/bad/datadir-null.yaml",
     {NULL, 1, "'dataDir' must be a non-empty string, not null"}},
    {DATA "/bad/not-mapping.yaml", {NULL, 2, "must be a mapping"}},
    {DATA "/bad/scalar-root.yaml", {NULL, 1, "must be a mapping"}},
    {DATA "/bad/anchor-alias.yaml", {NULL, 1, "anchors are not allowed"}},
    {DATA "/bad/alias.yaml", {NULL, 2, "aliases are not allowed"}},
    {DATA "/bad/tag.yaml", {NULL, 2, "tags are not allowed"}},
    {DATA "/bad/duplicate.yaml", {NULL, 3, "duplicate key 'dataDir'"}},
    {DATA "/bad/syntax.yaml", {NULL, 3, "syntax error"}},
    {DATA "/bad/two-docs.yaml", {NULL, 2, "one document"}},
    {DATA "/bad/nowhere.yaml", {NULL, 0, "cannot read config"}},
    /* a folder opens but does not read */
    {DATA, {NULL, 0, "Is a directory"}},
    {"", {".", 0, "Is a directory"}},
};

START_TEST(broken_agent_yaml_is_fatal)
{
    struct want w[2] = {fatal_cases[_i].w, {NULL, 0, NULL}};

    if (w[0].file == NULL)
        w[0].file = fatal_cases[_i].path;
    ck_assert_ptr_null(load(fatal_cases[_i].path));
    unit_assert_problems(&diag, w);
}
END_TEST

/* --- limits --------------------------------------------------------------- */

static const struct {
    const char *key;
    size_t offset;
    long min, max;
} limit_rows[] = {
    {"maxBodyBytes", offsetof(struct config, limits.max_body_bytes), 64,
     BOUND_BODY_BYTES},
    {"maxHistoryTurns", offsetof(struct config, limits.max_history_turns), 2,
     BOUND_HISTORY_TURNS},
    {"maxTools", offsetof(struct config, limits.max_tools), 0, BOUND_TOOLS},
    {"maxPageStateBytes", offsetof(struct config, limits.max_page_state_bytes),
     2, BOUND_PAGE_STATE_BYTES},
    {"maxLoopSteps", offsetof(struct config, limits.max_loop_steps), 1,
     BOUND_LOOP_STEPS},
    {"geminiTimeoutMs", offsetof(struct config, gemini.timeout_ms), 1000,
     BOUND_GEMINI_TIMEOUT_MS},
    {"actionTimeoutMs", offsetof(struct config, actions.timeout_ms), 100,
     BOUND_ACTION_TIMEOUT_MS},
    {"maxRequestsPerWorker",
     offsetof(struct config, limits.max_requests_per_worker), 0,
     BOUND_REQUESTS_PER_WORKER},
    {"requestTimeoutMs", offsetof(struct config, limits.request_timeout_ms),
     1000, BOUND_REQUEST_TIMEOUT_MS},
    {"maxOutputTokens", offsetof(struct config, limits.max_output_tokens), 1,
     BOUND_OUTPUT_TOKENS},
    {"maxUpstreamBytes", offsetof(struct config, limits.max_upstream_bytes),
     MIN_UPSTREAM_BYTES, BOUND_REQUEST_UPSTREAM},
};

/* Loop index i: row i / 4, and one of min-1, min, max, max+1. */
START_TEST(limits_are_range_checked)
{
    const size_t row = (size_t)_i / 4, which = (size_t)_i % 4;
    const long lo = limit_rows[row].min, hi = limit_rows[row].max;
    const long value = which == 0   ? lo - 1
                       : which == 1 ? lo
                       : which == 2 ? hi
                                    : hi + 1;
    const bool ok = which == 1 || which == 2;
    char *data = realpath(DATA, NULL), *text = NULL, *dir, *file;
    char word[96];
    int len;

    ck_assert_ptr_nonnull(data);
    len = asprintf(&text,
                   "gemini: %s/defaults/.gemini.yaml\n"
                   "actions: [%s/actions]\n"
                   "limits:\n"
                   "  %s: %ld\n",
                   data, data, limit_rows[row].key, value);
    ck_assert_int_gt(len, 0);
    write_temp_config(text, (size_t)len, &dir, &file);
    load(file);
    if (ok) {
        ck_assert_ptr_nonnull(cfg);
        unit_assert_problems(&diag, no_problems);
        ck_assert_int_eq(
            *(const long *)(const void *)((const char *)cfg +
                                          limit_rows[row].offset),
            value);
    } else {
        struct want w[] = {{file, 4, word}, {NULL, 0, NULL}};
        snprintf(word, sizeof(word),
                 "'limits.%s' is %ld; it must be between %ld and %ld",
                 limit_rows[row].key, value, lo, hi);
        ck_assert_ptr_null(cfg);
        unit_assert_problems(&diag, w);
    }
    remove_temp(dir, file);
    free(text);
    free(data);
}
END_TEST

static const struct {
    const char *env;  /* NULL: unset */
    long steps;       /* the file says 3 */
    const char *word; /* the problem, NULL for none */
} loop_env_cases[] = {
    {NULL, 3, NULL},
    {"", 3, NULL},
    {"20", 15, NULL},
    {"15", 15, NULL},
    {"5", 5, NULL},
    {"1", 1, NULL},
    {"0", 1, NULL},
    {"-3", 1, NULL},
    {"abc", 3, "must be an integer; using 3"},
    {"7x", 3, "must be an integer; using 3"},
    {"99999999999999999999", 3, "must be an integer; using 3"},
};

START_TEST(loop_steps_env_wins_clamped)
{
    struct want w[] = {{"AGENT_MAX_LOOP_STEPS", 0, loop_env_cases[_i].word},
                       {NULL, 0, NULL}};

    set_env("AGENT_MAX_LOOP_STEPS", loop_env_cases[_i].env);
    ck_assert_ptr_nonnull(load(DATA "/loop/agent.yaml"));
    unit_assert_problems(&diag, loop_env_cases[_i].word != NULL ? w : no_problems);
    ck_assert_int_eq(cfg->limits.max_loop_steps, loop_env_cases[_i].steps);
    unsetenv("AGENT_MAX_LOOP_STEPS");
}
END_TEST

/* libyaml has no nesting limit: a 100 000-deep file must fail fast. */
START_TEST(deep_yaml_is_refused_fast)
{
    const size_t depth = 100000;
    static const char head[] = "limits: ";
    size_t len = sizeof(head) - 1 + depth + 1;
    char *text = malloc(len), *dir, *file;
    struct timespec t0;
    double secs;

    ck_assert_ptr_nonnull(text);
    memcpy(text, head, sizeof(head) - 1);
    memset(text + sizeof(head) - 1, '[', depth);
    text[len - 1] = '\n';
    write_temp_config(text, len, &dir, &file);
    {
        struct want w[] = {{file, 1, "nesting deeper than"}, {NULL, 0, NULL}};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        load(file);
        secs = seconds_since(&t0);
        ck_assert_ptr_null(cfg);
        unit_assert_problems(&diag, w);
    }
    ck_assert_msg(secs < 0.5, "refusing took %.3f s", secs);
    remove_temp(dir, file);
    free(text);
}
END_TEST

/* --- the Gemini settings file and the key --------------------------------- */

#define DEFAULT_URL CONFIG_DEFAULT_BASE_URL
#define KEYS        DATA "/gemini/keys/"

/* clang-format off */
static const struct gemini_case {
    const char *config;  /* DATA/gemini/<c>.yaml, naming keys/<c>.yaml */
    const char *env_gemini, *env_google, *env_base; /* NULL: unset */
    enum config_key_source source;
    const char *key;     /* NULL: no usable key */
    const char *base_url;
    const char *model;   /* NULL: the default */
    struct want w[3];    /* ended by a NULL file */
} gemini_cases[] = {
    {"real", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY, DEFAULT_URL, NULL,
     {{0}}},
    {"missing", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "missing.yaml", 0, "run `gemini-agent setup`"}}},
    {"missing", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "missing.yaml", 0, "the file does not exist"}}},
    {"placeholder", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "placeholder.yaml", 2, "apiKey is still the placeholder"}}},
    {"empty-key", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "empty-key.yaml", 1, "apiKey is empty"}}},
    {"null-key", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "null-key.yaml", 1, "apiKey is missing"}}},
    {"empty-file", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "empty-file.yaml", 0, "apiKey is missing"}}},
    {"list-key", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "list-key.yaml", 2, "'apiKey' must be a string"},
      {KEYS "list-key.yaml", 2, "apiKey is missing"}}},
    {"list-root", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "list-root.yaml", 1, "must be a mapping"},
      {KEYS "list-root.yaml", 0, "apiKey is missing"}}},
    {"syntax", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "syntax.yaml", 3, "syntax error"},
      {KEYS "syntax.yaml", 0, "no Gemini API key"}}},
    /* a key pasted as a mapping key is not echoed back */
    {"unknown", NULL, NULL, NULL, CONFIG_KEY_NONE, NULL, DEFAULT_URL, NULL,
     {{KEYS "unknown.yaml", 2, "unknown key"},
      {KEYS "unknown.yaml", 1, "placeholder"}}},
    {"ftp", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY, DEFAULT_URL, NULL,
     {{KEYS "ftp.yaml", 2, "'baseUrl' must start with https://"}}},
    {"slash", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY,
     "http://127.0.0.1:8089", NULL, {{0}}},
    {"settings", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY,
     "https://example.test/gemini", "gemini-test-model", {{0}}},
    {"empty-model", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY, DEFAULT_URL,
     NULL, {{KEYS "empty-model.yaml", 2, "'model' must be a non-empty"}}},
    {"prompt-int", NULL, NULL, NULL, CONFIG_KEY_FILE, CANARY, DEFAULT_URL, NULL,
     {{KEYS "prompt-int.yaml", 2, "'systemPrompt' must be a string"}}},
    /* the environment wins over the file */
    {"real", CANARY "-gemini", NULL, NULL, CONFIG_KEY_ENV_GEMINI,
     CANARY "-gemini", DEFAULT_URL, NULL, {{0}}},
    {"real", NULL, CANARY "-google", NULL, CONFIG_KEY_ENV_GOOGLE,
     CANARY "-google", DEFAULT_URL, NULL, {{0}}},
    {"real", CANARY "-gemini", CANARY "-google", NULL, CONFIG_KEY_ENV_GEMINI,
     CANARY "-gemini", DEFAULT_URL, NULL, {{0}}},
    {"real", "", CANARY "-google", NULL, CONFIG_KEY_ENV_GOOGLE,
     CANARY "-google", DEFAULT_URL, NULL, {{0}}},
    {"placeholder", CANARY "-gemini", NULL, NULL, CONFIG_KEY_ENV_GEMINI,
     CANARY "-gemini", DEFAULT_URL, NULL, {{0}}},
    {"missing", NULL, CANARY "-google", NULL, CONFIG_KEY_ENV_GOOGLE,
     CANARY "-google", DEFAULT_URL, NULL, {{0}}},
    /* a placeholder in the environment is no key at all */
    {"real", "<" CANARY ">", NULL, NULL, CONFIG_KEY_NONE, NULL,
     DEFAULT_URL, NULL,
     {{KEYS "real.yaml", 0, "GEMINI_API_KEY is a placeholder"}}},
    {"real", NULL, "<" CANARY ">", NULL, CONFIG_KEY_NONE, NULL,
     DEFAULT_URL, NULL,
     {{KEYS "real.yaml", 0, "GOOGLE_API_KEY is a placeholder"}}},
    {"real", NULL, NULL, "http://localhost:9999/", CONFIG_KEY_FILE, CANARY,
     "http://localhost:9999", NULL, {{0}}},
    {"settings", NULL, NULL, "http://localhost:9999", CONFIG_KEY_FILE, CANARY,
     "http://localhost:9999", "gemini-test-model", {{0}}},
    {"ftp", NULL, NULL, "http://localhost:9999", CONFIG_KEY_FILE, CANARY,
     "http://localhost:9999", NULL,
     {{KEYS "ftp.yaml", 2, "'baseUrl' must start with https://"}}},
    /* a bad URL in the environment is reported and the file's stays */
    {"settings", NULL, NULL, "ftp://localhost:9999", CONFIG_KEY_FILE, CANARY,
     "https://example.test/gemini", "gemini-test-model",
     {{"GEMINI_BASE_URL", 0, "must start with https://"}}},
};
/* clang-format on */

START_TEST(gemini_settings_and_key)
{
    const struct gemini_case *c = &gemini_cases[_i];
    char path[128], gpath[128];

    snprintf(path, sizeof(path), DATA "/gemini/%s.yaml", c->config);
    set_env("GEMINI_API_KEY", c->env_gemini);
    set_env("GOOGLE_API_KEY", c->env_google);
    set_env("GEMINI_BASE_URL", c->env_base);
    /* the Gemini file's problems are never fatal */
    ck_assert_ptr_nonnull(load(path));
    unit_assert_problems(&diag, c->w);
    snprintf(gpath, sizeof(gpath), KEYS "%s.yaml", c->config);
    ck_assert_str_eq(cfg->gemini.path, gpath);
    ck_assert_int_eq(cfg->gemini.key_source, c->source);
    if (c->key == NULL)
        ck_assert_ptr_null(cfg->gemini.api_key);
    else
        ck_assert_str_eq(cfg->gemini.api_key, c->key);
    ck_assert_str_eq(cfg->gemini.base_url, c->base_url);
    ck_assert_str_eq(cfg->gemini.model,
                     c->model ? c->model : CONFIG_DEFAULT_MODEL);
    ck_assert_str_eq(cfg->gemini.system_prompt,
                     strcmp(c->config, "settings") == 0 ? "You sell hubs.\n"
                                                        : "");
    /* the Gemini file never stops the plugins from loading (the
     * folder's four, the memory plugin's two) */
    ck_assert_uint_eq(site->actions->count, 6);
}
END_TEST

/* The printed form of every case is clean too (diag_print adds nothing
 * of its own, but this is the text `check` shows). */
START_TEST(key_is_never_printed)
{
    char *all;

    for (size_t i = 0; i < ARRAY_SIZE(gemini_cases); i++) {
        const struct gemini_case *c = &gemini_cases[i];
        char path[128];

        clear_env();
        snprintf(path, sizeof(path), DATA "/gemini/%s.yaml", c->config);
        set_env("GEMINI_API_KEY", c->env_gemini);
        set_env("GOOGLE_API_KEY", c->env_google);
        set_env("GEMINI_BASE_URL", c->env_base);
        load(path);
        site_free(site);
        site = NULL;
        cfg = NULL;
    }
    ck_assert_uint_gt(diag.count, 10);
    assert_no_canary();
    all = unit_dump_diag(&diag);
    ck_assert_msg(strstr(all, CANARY) == NULL, "the API key leaked:\n%s", all);
    free(all);
}
END_TEST

/* --- the key file's permissions (serve refuses an exposed one) ------------ */

static const struct {
    unsigned mode;       /* of .gemini.yaml */
    const char *env_key; /* GEMINI_API_KEY, or NULL */
    const char *extra;   /* more agent.yaml, or "" */
    bool exposed, allow;
} key_file_cases[] = {
    {0600, NULL, "", false, false},
    {0400, NULL, "", false, false},
    {0644, NULL, "", true, false},
    {0640, NULL, "", true, false},  /* group may read */
    {0620, NULL, "", true, false},  /* group may write */
    {0602, NULL, "", true, false},  /* others may write */
    {0711, NULL, "", false, false}, /* execute alone shows nothing */
    /* the key is not taken from the file: nothing to guard */
    {0644, "env-key-123", "", false, false},
    {0644, NULL, "allowReadableKeyFile: true\n", true, true},
    {0644, NULL, "allowReadableKeyFile: false\n", true, false},
};

static void
write_text(const char *path, const char *text, unsigned mode)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(key_file_permissions)
{
    char dir[] = "/tmp/check_config.XXXXXX", path[128], gpath[128],
         text[256], cmd[160];
    struct diag d = DIAG_INIT;
    struct config *c;
    unsigned mode = 0;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    snprintf(gpath, sizeof(gpath), "%s/.gemini.yaml", dir);
    snprintf(text, sizeof(text), "actions: []\n%s",
             key_file_cases[_i].extra);
    write_text(path, text, 0644);
    write_text(gpath, "apiKey: '" CANARY "'\n", key_file_cases[_i].mode);
    set_env("GEMINI_API_KEY", key_file_cases[_i].env_key);
    c = config_load(path, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(d.count == 0, "%s", d.count ? d.items[0].msg : "");
    ck_assert_int_eq(c->allow_readable_key_file, key_file_cases[_i].allow);
    ck_assert_int_eq(config_key_file_exposed(c, &mode),
                     key_file_cases[_i].exposed);
    if (key_file_cases[_i].exposed)
        ck_assert_uint_eq(mode, key_file_cases[_i].mode);
    config_free(c);
    diag_release(&d);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A CGI run's config: the environment's, else agent.yaml beside the
 * program the web server ran (SCRIPT_FILENAME), else the old default. */
START_TEST(cgi_config_beside_the_program)
{
    char dir[] = "/tmp/check_config.XXXXXX", path[128], script[128], buf[256],
         cmd[160];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    snprintf(script, sizeof(script), "%s/gemini-agent.cgi", dir);
    unsetenv("GEMINI_AGENT_CONFIG");
    setenv("SCRIPT_FILENAME", script, 1);
    /* no agent.yaml there yet: the old default */
    ck_assert_str_eq(config_cgi_path(buf, sizeof(buf)), "conf/agent.yaml");
    write_text(path, "actions: []\n", 0600);
    ck_assert_str_eq(config_cgi_path(buf, sizeof(buf)), path);
    /* the environment wins */
    setenv("GEMINI_AGENT_CONFIG", "/elsewhere/agent.yaml", 1);
    ck_assert_str_eq(config_cgi_path(buf, sizeof(buf)),
                     "/elsewhere/agent.yaml");
    unsetenv("GEMINI_AGENT_CONFIG");
    /* a relative or missing SCRIPT_FILENAME names no folder */
    setenv("SCRIPT_FILENAME", "gemini-agent.cgi", 1);
    ck_assert_str_eq(config_cgi_path(buf, sizeof(buf)), "conf/agent.yaml");
    unsetenv("SCRIPT_FILENAME");
    ck_assert_str_eq(config_cgi_path(buf, sizeof(buf)), "conf/agent.yaml");
    /* a path longer than the buffer is not cut short */
    setenv("SCRIPT_FILENAME", script, 1);
    ck_assert_str_eq(config_cgi_path(buf, 8), "conf/agent.yaml");
    unsetenv("SCRIPT_FILENAME");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* .gemini.yaml `compaction:` (the terminal client's): its keys read,
 * bad values reported and left at their defaults. */
START_TEST(compaction_settings)
{
    char dir[] = "/tmp/check_config.XXXXXX", path[128], gpath[128], cmd[160];
    struct diag d = DIAG_INIT;
    struct config *c;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    snprintf(gpath, sizeof(gpath), "%s/.gemini.yaml", dir);
    write_text(path, "actions: []\n", 0644);
    set_env("GEMINI_API_KEY", NULL);

    /* absent: the defaults */
    write_text(gpath, "apiKey: k\n", 0600);
    c = config_load(path, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->gemini.compaction.enabled);
    ck_assert_int_eq(c->gemini.compaction.window, 0);
    ck_assert_int_eq(c->gemini.compaction.at_percent,
                     DEFAULT_COMPACT_AT_PERCENT);
    ck_assert_int_eq(c->gemini.compaction.keep_turns,
                     DEFAULT_COMPACT_KEEP_TURNS);
    config_free(c);

    write_text(gpath,
               "apiKey: k\ncompaction:\n  enabled: false\n"
               "  contextWindow: 200000\n  atPercent: 90\n  keepTurns: 0\n",
               0600);
    c = config_load(path, &d);
    ck_assert_msg(d.count == 0, "%s", d.count ? d.items[0].msg : "");
    ck_assert(!c->gemini.compaction.enabled);
    ck_assert_int_eq(c->gemini.compaction.window, 200000);
    ck_assert_int_eq(c->gemini.compaction.at_percent, 90);
    ck_assert_int_eq(c->gemini.compaction.keep_turns, 0);
    config_free(c);

    write_text(gpath,
               "apiKey: k\ncompaction:\n  enabled: maybe\n"
               "  atPercent: 5\n  keepTurns: -1\n  window: 3\n",
               0600);
    c = config_load(path, &d);
    ck_assert_ptr_nonnull(c); /* never fatal */
    ck_assert_uint_eq(d.count, 4);
    ck_assert_ptr_nonnull(strstr(d.items[0].msg, "'compaction.enabled'"));
    ck_assert_ptr_nonnull(
        strstr(d.items[1].msg, "'compaction.atPercent' must be an integer "
                               "from 10 to 100"));
    ck_assert_ptr_nonnull(strstr(d.items[2].msg, "'compaction.keepTurns'"));
    ck_assert_ptr_nonnull(strstr(d.items[3].msg, "unknown key in "
                                                 "'compaction'"));
    ck_assert(c->gemini.compaction.enabled);
    ck_assert_int_eq(c->gemini.compaction.at_percent,
                     DEFAULT_COMPACT_AT_PERCENT);
    config_free(c);
    diag_release(&d);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* allowReadableKeyFile takes true or false only. */
START_TEST(allow_readable_key_file_is_a_bool)
{
    char dir[] = "/tmp/check_config.XXXXXX", path[128], cmd[160];
    struct diag d = DIAG_INIT;
    static const struct want w[] = {
        {NULL, 2, "'allowReadableKeyFile' must be true or false"},
        {NULL, 0, NULL},
    };
    struct want ww[2];
    struct config *c;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    write_text(path, "actions: []\nallowReadableKeyFile: sometimes\n", 0644);
    c = config_load(path, &d);
    ck_assert_ptr_null(c); /* agent.yaml's own problems are fatal */
    memcpy(ww, w, sizeof(ww));
    ww[0].file = path;
    /* and the missing .gemini.yaml is not reached: agent.yaml failed */
    unit_assert_problems(&d, ww);
    diag_release(&d);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The run API's keys: defaults, every key read, the kill switch from the
 * environment, and bad values refused with the key's name. */
START_TEST(run_api_policy_and_store)
{
    char *dir, *file;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char good[] =
        "actions: []\n"
        "store: sqlite:db/agent.db\n"
        "policy:\n"
        "  sideEffects: false\n"
        "  approvalTtlMs: 60000\n"
        "  persona: You help Ann.\n"
        "  contextTypes: [email, note]\n"
        "  allow:\n"
        "    - {action: shop.addReview, arg: email, pattern: '*@example.com'}\n"
        "    - {action: shop.searchProducts}\n";
    static const char bad[] = "actions: []\nstore: postgres://x\n"
                              "policy: {approvalTtlMs: 5, colour: red}\n";

    unsetenv("AGENT_SIDE_EFFECTS_ENABLED");
    write_temp_config("actions: []\n", 12, &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->run.side_effects);
    ck_assert_int_eq(c->run.approval_ttl_ms, DEFAULT_APPROVAL_TTL_MS);
    ck_assert_ptr_nonnull(strstr(c->run.store, "sqlite:"));
    ck_assert_ptr_nonnull(strstr(c->run.store, "/agent.db"));
    ck_assert_str_eq(c->run.context_types[0], "email");
    ck_assert_str_eq(c->run.context_types[3], "page");
    ck_assert_ptr_null(c->run.context_types[4]);
    ck_assert_str_eq(c->run.persona, CONFIG_DEFAULT_PERSONA);
    config_free(c);
    /* the environment's kill switch */
    setenv("AGENT_SIDE_EFFECTS_ENABLED", "false", 1);
    c = config_load(file, &d);
    ck_assert(!c->run.side_effects);
    config_free(c);
    unsetenv("AGENT_SIDE_EFFECTS_ENABLED");
    diag_release(&d);
    remove_temp(dir, file);

    d = (struct diag)DIAG_INIT;
    write_temp_config(good, strlen(good), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(!c->run.side_effects);
    ck_assert_int_eq(c->run.approval_ttl_ms, 60000);
    ck_assert_str_eq(c->run.persona, "You help Ann.");
    ck_assert_str_eq(c->run.context_types[1], "note");
    ck_assert_ptr_null(c->run.context_types[2]);
    ck_assert_uint_eq(json_array_size(c->run.allow), 2);
    {
        char want[256];
        snprintf(want, sizeof(want), "sqlite:%s/db/agent.db", dir);
        ck_assert_str_eq(c->run.store, want);
    }
    config_free(c);
    diag_release(&d);
    remove_temp(dir, file);

    d = (struct diag)DIAG_INIT;
    write_temp_config(bad, strlen(bad), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(d.count, 3);
    diag_release(&d);
    remove_temp(dir, file);
}
END_TEST


/* budget: and http.status: the ceilings, the trusted proxies, the
 * operators' addresses; absent means unlimited (and off) */
START_TEST(budget_and_status)
{
    char *dir, *file;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char good[] =
        "actions: []\n"
        "budget:\n"
        "  perIp:   {requestsPerMinute: 20, tokensPerDay: 200000}\n"
        "  perUser: {requestsPerMinute: 30, tokensPerDay: 500000}\n"
        "  site:    {tokensPerDay: 5000000}\n"
        "  trustForwardedFor: [127.0.0.1, '10.0.0.0/8', '::1']\n"
        "http:\n"
        "  directActions: authenticated\n"
        "  status: {allow: [127.0.0.1, '2001:db8::/32']}\n"
        "outbound: {allow: ['127.0.0.2/32', 'fd00::/8']}\n";
    static const char only_site[] = "actions: []\n"
                                    "budget: {site: {requestsPerMinute: 5}}\n";
    struct netaddr a;

    write_temp_config("actions: []\n", 12, &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(!c->budget.on);
    ck_assert_int_eq(c->budget.per_ip.requests_per_minute, 0);
    ck_assert_int_eq(c->budget.site.tokens_per_day, 0);
    ck_assert_uint_eq(c->budget.ntrusted, 0);
    ck_assert(!c->status.on);
    ck_assert_uint_eq(c->outbound.nallow, 0);
    ck_assert_int_eq(c->direct_actions, CONFIG_DIRECT_READ_ONLY);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(good, strlen(good), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->budget.on);
    ck_assert_int_eq(c->budget.per_ip.requests_per_minute, 20);
    ck_assert_int_eq(c->budget.per_ip.tokens_per_day, 200000);
    ck_assert_int_eq(c->budget.per_user.requests_per_minute, 30);
    ck_assert_int_eq(c->budget.per_user.tokens_per_day, 500000);
    ck_assert_int_eq(c->budget.site.requests_per_minute, 0);
    ck_assert_int_eq(c->budget.site.tokens_per_day, 5000000);
    ck_assert_uint_eq(c->budget.ntrusted, 3);
    ck_assert(netaddr_parse("10.9.8.7", 8, &a));
    ck_assert(netaddr_in(c->budget.trusted, c->budget.ntrusted, &a));
    ck_assert(netaddr_parse("11.0.0.1", 8, &a));
    ck_assert(!netaddr_in(c->budget.trusted, c->budget.ntrusted, &a));
    ck_assert(c->status.on);
    ck_assert_uint_eq(c->status.nallow, 2);
    ck_assert_uint_eq(c->outbound.nallow, 2);
    ck_assert(netaddr_parse("fd12::1", 7, &a));
    ck_assert(netaddr_in(c->outbound.allow, c->outbound.nallow, &a));
    ck_assert(netaddr_parse("127.0.0.1", 9, &a));
    ck_assert(!netaddr_in(c->outbound.allow, c->outbound.nallow, &a));
    ck_assert_int_eq(c->direct_actions, CONFIG_DIRECT_AUTHENTICATED);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(only_site, strlen(only_site), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->budget.on);
    ck_assert_int_eq(c->budget.site.requests_per_minute, 5);
    config_free(c);
    remove_temp(dir, file);
    diag_release(&d); /* the loads had no key: not this case's */
}
END_TEST

/* budget:, http: and outbound: problems, each at its line */
START_TEST(budget_and_status_problems)
{
    char *dir, *file;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char bad[] =
        "actions: []\n"                                     /* 1 */
        "budget:\n"                                         /* 2 */
        "  perIp: {requestsPerMinute: 0, tokensPerDay: x}\n" /* 3 */
        "  perUser: {tokensPerDay: 1000000000001}\n"        /* 4 */
        "  site: {requestsPerHour: 5}\n"                    /* 5 */
        "  trustForwardedFor: [127.0.0.1, proxy.local]\n"   /* 6 */
        "  perDomain: {}\n"                                 /* 7 */
        "http:\n"                                           /* 8 */
        "  status: {allow: ['10.0.0.0/33']}\n"              /* 9 */
        "  statuses: on\n"                                  /* 10 */
        "outbound: {allow: [metadata.internal]}\n";        /* 11 */

    write_temp_config(bad, strlen(bad), &dir, &file);
    {
        const struct want w[] = {
            {file, 3, "'budget.perIp.requestsPerMinute' must be an integer "
                      "from 1"},
            {file, 3, "'budget.perIp.tokensPerDay' must be an integer"},
            {file, 4, "'budget.perUser.tokensPerDay' must be an integer from "
                      "1 to 1000000000000"},
            {file, 5, "unknown key 'requestsPerHour' in 'budget.site'"},
            {file, 6, "'budget.trustForwardedFor' entries are IP addresses "
                      "or networks (127.0.0.1, ::1, 10.0.0.0/8), not "
                      "'proxy.local'"},
            {file, 7, "unknown key 'perDomain' in 'budget'"},
            {file, 9, "'http.status.allow' entries are IP addresses"},
            {file, 10, "unknown key 'statuses' in 'http'"},
            {file, 11, "'outbound.allow' entries are IP addresses or "
                       "networks (127.0.0.1, ::1, 10.0.0.0/8), not "
                       "'metadata.internal'"},
            {NULL, 0, NULL},
        };
        c = config_load(file, &d);
        ck_assert_ptr_null(c);
        unit_assert_problems(&d, w);
    }
    diag_release(&d);
    remove_temp(dir, file);
}
END_TEST

/* http.cors.allowOrigins: exact origins as browsers send them, checked
 * at load with the line of a bad one; absent or empty means off */
START_TEST(cors_origins)
{
    char *dir, *file;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char good[] =
        "actions: []\n"
        "http:\n"
        "  cors:\n"
        "    allowOrigins: [https://www.example.org, 'http://127.0.0.1:8080',\n"
        "                   'https://[::1]:8443']\n";
    static const char empty[] = "actions: []\n"
                                "http: {cors: {allowOrigins: []}}\n";
    static const char bad[] =
        "actions: []\n"                                   /* 1 */
        "http:\n"                                         /* 2 */
        "  cors:\n"                                       /* 3 */
        "    allowOrigins:\n"                             /* 4 */
        "      - '*'\n"                                   /* 5 */
        "      - https://www.example.org/\n"              /* 6 */
        "      - www.example.org\n"                       /* 7 */
        "      - https://WWW.example.org\n"               /* 8 */
        "      - https://www.example.org:443\n"           /* 9 */
        "      - 'http://localhost:99999'\n"              /* 10 */
        "      - https://ok.example.org\n"                /* 11 */
        "      - {a: 1}\n";                               /* 12 */
    static const char bad_shape[] = "actions: []\n"
                                    "http: {cors: [https://a.example]}\n";

    write_temp_config("actions: []\n", 12, &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->cors.norigins, 0);
    ck_assert_ptr_null(c->cors.origins);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(empty, strlen(empty), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->cors.norigins, 0);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(good, strlen(good), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->cors.norigins, 3);
    ck_assert_str_eq(c->cors.origins[0], "https://www.example.org");
    ck_assert_str_eq(c->cors.origins[1], "http://127.0.0.1:8080");
    ck_assert_str_eq(c->cors.origins[2], "https://[::1]:8443");
    ck_assert_ptr_null(c->cors.origins[3]);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(bad, strlen(bad), &dir, &file);
    diag_release(&d);
    d = (struct diag)DIAG_INIT;
    {
        const struct want w[] = {
            {file, 5, "'http.cors.allowOrigins' entry '*': '*' would let "
                      "every site's pages in"},
            {file, 6, "entry 'https://www.example.org/': an origin is "
                      "scheme://host[:port]: no path"},
            {file, 7, "entry 'www.example.org': an origin starts with "
                      "https:// or http://"},
            {file, 8, "an origin names a host (lower case)"},
            {file, 9, "browsers leave the default port out of Origin"},
            {file, 10, "the port is a number from 1 to 65535"},
            {file, 12, "entry mapping: not a string"},
            {NULL, 0, NULL},
        };
        c = config_load(file, &d);
        ck_assert_ptr_null(c);
        unit_assert_problems(&d, w);
    }
    diag_release(&d);
    remove_temp(dir, file);

    write_temp_config(bad_shape, strlen(bad_shape), &dir, &file);
    d = (struct diag)DIAG_INIT;
    {
        const struct want w[] = {
            {file, 2, "'http.cors' must be {allowOrigins: [at most 64 "
                      "origins like https://www.example.org]}"},
            {NULL, 0, NULL},
        };
        c = config_load(file, &d);
        ck_assert_ptr_null(c);
        unit_assert_problems(&d, w);
    }
    diag_release(&d);
    remove_temp(dir, file);
}
END_TEST

/* log: format and file (relative to agent.yaml's folder); its mistakes. */
START_TEST(log_section)
{
    char *dir, *file, *want;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char good[] = "actions: []\n"
                               "log: {format: json, file: var/agent.log}\n";
    static const char bad[] = "actions: []\n"            /* 1 */
                              "log:\n"                   /* 2 */
                              "  format: yaml\n"         /* 3 */
                              "  file: ''\n"             /* 4 */
                              "  level: debug\n";        /* 5 */

    write_temp_config("actions: []\n", 12, &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->log.format, LOG_FMT_TEXT);
    ck_assert_ptr_null(c->log.file);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(good, strlen(good), &dir, &file);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->log.format, LOG_FMT_JSON);
    ck_assert_int_ge(asprintf(&want, "%s/var/agent.log", dir), 0);
    ck_assert_str_eq(c->log.file, want);
    free(want);
    config_free(c);
    remove_temp(dir, file);

    write_temp_config(bad, strlen(bad), &dir, &file);
    diag_release(&d);
    d = (struct diag)DIAG_INIT;
    {
        const struct want w[] = {
            {file, 3, "'log.format' must be text or json"},
            {file, 4, "'log.file' must be a non-empty string"},
            {file, 5, "unknown key 'level' in 'log' (expected one of: "
                      "format, file)"},
            {NULL, 0, NULL},
        };
        c = config_load(file, &d);
        ck_assert_ptr_null(c);
        unit_assert_problems(&d, w);
    }
    diag_release(&d);
    remove_temp(dir, file);
}
END_TEST

/* check --settings: every key of both files from the tables, with the
 * value loaded; where the key came from, never the key. */
START_TEST(settings_are_printed)
{
    char *dir, *file, *gem, *text = NULL;
    size_t len = 0;
    FILE *out, *g;
    struct diag d = DIAG_INIT;
    struct config *c;
    static const char yaml[] = "actions: []\n"
                               "limits: {maxBodyBytes: 4096}\n"
                               "budget: {perIp: {requestsPerMinute: 5}}\n"
                               "history: {verify: off}\n";

    write_temp_config(yaml, strlen(yaml), &dir, &file);
    ck_assert_int_ge(asprintf(&gem, "%s/.gemini.yaml", dir), 0);
    ck_assert_ptr_nonnull(g = fopen(gem, "w"));
    fprintf(g, "apiKey: %s\ncompaction: {atPercent: 90}\n", CANARY);
    ck_assert_int_eq(fclose(g), 0);
    c = config_load(file, &d);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(out = open_memstream(&text, &len));
    config_print_settings(c, out);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_ptr_null(strstr(text, CANARY));
    ck_assert_ptr_nonnull(strstr(text, "  limits.maxBodyBytes: 4096 - "));
    ck_assert_ptr_nonnull(strstr(text, "  limits.maxUpstreamBytes: 16384 - "));
    ck_assert_ptr_nonnull(
        strstr(text, "  budget.perIp.requestsPerMinute: 5 - "));
    ck_assert_ptr_nonnull(strstr(text, "  budget.site.tokensPerDay: 0 - "));
    ck_assert_ptr_nonnull(strstr(text, "  history.verify: off - "));
    ck_assert_ptr_nonnull(strstr(text, "  http.directActions: readOnly - "));
    ck_assert_ptr_nonnull(strstr(text, "  apiKey: set in the file - "));
    ck_assert_ptr_nonnull(strstr(text, "  compaction.atPercent: 90 - "));
    ck_assert_ptr_nonnull(strstr(text, "  model: " CONFIG_DEFAULT_MODEL));
    ck_assert_ptr_null(strstr(text, "trustRemoteUser"));
    free(text);
    config_free(c);
    diag_release(&d);
    unlink(gem);
    free(gem);
    remove_temp(dir, file);
}
END_TEST

Suite *
config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc;

    tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, absent_keys_take_defaults, 0,
                        (int)ARRAY_SIZE(default_cases));
    tcase_add_test(tc, every_key_is_read);
    tcase_add_test(tc, actions_may_be_one_folder);
    tcase_add_test(tc, bare_file_name_resolves_against_cwd);
    tcase_add_test(tc, absolute_config_path_gives_absolute_paths);
    tcase_add_test(tc, empty_action_list_loads_no_plugin);
    tcase_add_loop_test(tc, default_path_follows_env, 0,
                        (int)ARRAY_SIZE(default_path_cases));
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, broken_agent_yaml_is_fatal, 0,
                        (int)ARRAY_SIZE(fatal_cases));
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, limits_are_range_checked, 0,
                        (int)(4 * ARRAY_SIZE(limit_rows)));
    tcase_add_loop_test(tc, loop_steps_env_wins_clamped, 0,
                        (int)ARRAY_SIZE(loop_env_cases));
    tcase_add_test(tc, deep_yaml_is_refused_fast);
    suite_add_tcase(s, tc);

    tc = tcase_create("gemini");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, gemini_settings_and_key, 0,
                        (int)ARRAY_SIZE(gemini_cases));
    tcase_add_test(tc, key_is_never_printed);
    tcase_add_loop_test(tc, key_file_permissions, 0,
                        (int)ARRAY_SIZE(key_file_cases));
    tcase_add_test(tc, allow_readable_key_file_is_a_bool);
    tcase_add_test(tc, compaction_settings);
    tcase_add_test(tc, run_api_policy_and_store);
    tcase_add_test(tc, budget_and_status);
    tcase_add_test(tc, budget_and_status_problems);
    tcase_add_test(tc, cors_origins);
    tcase_add_test(tc, log_section);
    tcase_add_test(tc, settings_are_printed);
    tcase_add_test(tc, cgi_config_beside_the_program);
    suite_add_tcase(s, tc);
    return s;
}
