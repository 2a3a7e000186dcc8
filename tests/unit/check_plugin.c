/*
 * check_plugin.c - plugin_load(): the real actions folder, the Gemini name
 * mapping, and every way a plugin folder can be broken. Fixture folders
 * live under data/plugins/<case>/; each case pins its problems by file,
 * line and a distinctive word, and the exact set of actions that still
 * load beside the broken ones.
 *
 * The binary has compiled-in handlers only for shop.searchProducts,
 * shop.getProductBySlug, shop.addReview and shop.listCategories, so the
 * fixture plugins are named `shop` to bind them, or otherwise on purpose.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/plugin.h"
#include "http/site.h"
#include "http/dispatch.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "unit_diag.h"
#include "gemini-agent/handler.h"

#include <check.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA "data/plugins"

static struct diag diag;
static struct plugin_set *set;

static void
setup(void)
{
    diag = (struct diag)DIAG_INIT;
    set = NULL;
}

static void
teardown(void)
{
    plugin_set_free(set);
    set = NULL;
    diag_release(&diag);
}

/* --- assertions ----------------------------------------------------------- */

/* Whether some problem is at file:line and mentions `word`. */
static bool
has_problem(const char *file, int line, const char *word)
{
    for (size_t i = 0; i < diag.count; i++)
        if (strcmp(diag.items[i].file, file) == 0 &&
            diag.items[i].line == line && strstr(diag.items[i].msg, word))
            return true;
    return false;
}

/*
 * What every loaded set must satisfy: sorted unique names, Gemini names
 * from the mapping, a bound handler (or a chat route instead, never
 * exposed), the fields of listed and HTTP-only entries, both lookups, and
 * a listing of exactly the listed actions.
 */
static void
assert_set_sound(const struct plugin_set *s)
{
    json_error_t jerr;
    json_t *root, *list;
    char *listing;
    size_t exposed = 0, k = 0, listing_len;

    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < s->count; i++) {
        const struct plugin_action *a = &s->actions[i];
        char fn[256];

        if (i > 0)
            ck_assert_int_lt(strcmp(s->actions[i - 1].name, a->name), 0);
        ck_assert_int_eq(plugin_fn_name(a->name, fn, sizeof(fn)), 0);
        ck_assert_str_eq(a->fn_name, fn);
        /* a handler, or a route that serves it instead; never both */
        if (a->route == PLUGIN_ROUTE_CHAT) {
            ck_assert_ptr_null(a->handler);
            ck_assert(!a->exposed);
            ck_assert(a->listed);
            ck_assert_ptr_null(plugin_find_fn(s, a->fn_name));
        } else {
            ck_assert_ptr_nonnull(a->handler);
            ck_assert_str_eq(a->handler->name, a->name);
            ck_assert_int_eq(a->exposed, a->listed);
        }
        ck_assert_ptr_nonnull(a->plugin_dir);
        ck_assert_ptr_eq(plugin_find(s, a->name), a);
        if (a->listed) {
            exposed++; /* counts what the listing must show */
            ck_assert_ptr_nonnull(a->source);
            ck_assert_ptr_nonnull(a->description);
            ck_assert_ptr_nonnull(a->input_schema);
            ck_assert_str_eq(
                json_string_value(json_object_get(a->input_schema, "type")),
                "object");
            if (a->exposed)
                ck_assert_ptr_eq(plugin_find_fn(s, a->fn_name), a);
        } else {
            ck_assert_ptr_null(a->source);
            ck_assert_ptr_null(a->description);
            ck_assert_ptr_null(a->input_schema);
            ck_assert_ptr_null(a->output_schema);
            ck_assert_ptr_null(plugin_find_fn(s, a->fn_name));
        }
    }
    /* what the site presents of it: GET /_jay/actions */
    listing = site_listing(s, &listing_len);
    ck_assert_ptr_nonnull(listing);
    ck_assert_uint_eq(strlen(listing), listing_len);
    root = json_loadb(listing, listing_len, JSON_REJECT_DUPLICATES, &jerr);
    free(listing);
    ck_assert_msg(root != NULL, "listing: %s", jerr.text);
    ck_assert_uint_eq(json_object_size(root), 1);
    list = json_object_get(root, "actions");
    ck_assert(json_is_array(list));
    ck_assert_uint_eq(json_array_size(list), exposed);
    for (size_t i = 0; i < s->count; i++) {
        const struct plugin_action *a = &s->actions[i];
        json_t *o, *out;
        if (!a->listed)
            continue;
        o = json_array_get(list, k++);
        ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
                         a->name);
        ck_assert_str_eq(json_string_value(json_object_get(o, "description")),
                         a->description);
        ck_assert(
            json_equal(json_object_get(o, "inputSchema"), a->input_schema));
        ck_assert(json_is_boolean(json_object_get(o, "sideEffects")));
        ck_assert_int_eq(json_is_true(json_object_get(o, "sideEffects")),
                         a->side_effects);
        out = json_object_get(o, "outputSchema");
        if (a->output_schema != NULL)
            ck_assert(json_equal(out, a->output_schema));
        else
            ck_assert(out == NULL || json_is_null(out));
    }
    json_decref(root);
}

/* Exactly the registered names of `names` (NULL-terminated) loaded. */
static void
assert_loaded(const struct plugin_set *s, const char *const *names)
{
    size_t n = 0;

    while (names[n] != NULL) {
        ck_assert_msg(plugin_find(s, names[n]) != NULL, "'%s' is not loaded",
                      names[n]);
        n++;
    }
    ck_assert_uint_eq(s->count, n);
}

static struct plugin_set *
load_dirs(const char *const *dirs, size_t n)
{
    /* the chat routes' names, as the site passes them */
    set = plugin_load((char *const *)UNCONST(dirs), n, NULL, dispatch_chat_actions,
                      &diag);
    ck_assert_ptr_nonnull(set);
    assert_set_sound(set);
    return set;
}

/* --- the real actions folder ---------------------------------------------- */

START_TEST(real_actions_load_cleanly)
{
    static const char *const dirs[] = {"../../actions"};
    static const struct want none[] = {{NULL, 0, NULL}};
    static const struct {
        const char *name, *fn;
        bool listed, exposed, chat, side_effects;
    } rows[] = {
        /* the chat protocol: listed, served by the chat routes, never
         * offered to the model */
        {"geminiAgent.sendMessage", "action_geminiAgent_sendMessage", true,
         false, true, true},
        {"geminiAgent.submitToolResults",
         "action_geminiAgent_submitToolResults", true, false, true, true},
        {"shop.addReview", "action_shop_addReview", true, true, false, true},
        {"shop.getProductBySlug", "action_shop_getProductBySlug", true, true,
         false, false},
        {"shop.listCategories", "action_shop_listCategories", false, false,
         false, false},
        {"shop.searchProducts", "action_shop_searchProducts", true, true,
         false, false},
    };
    size_t exposed = 0, listed = 0;

    load_dirs(dirs, 1);
    unit_assert_problems(&diag, none);
    ck_assert_uint_eq(diag.nnotes, 0);
    ck_assert_uint_eq(set->count, ARRAY_SIZE(rows));
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        const struct plugin_action *a = &set->actions[i];
        ck_assert_str_eq(a->name, rows[i].name);
        ck_assert_str_eq(a->fn_name, rows[i].fn);
        ck_assert_int_eq(a->listed, rows[i].listed);
        ck_assert_int_eq(a->exposed, rows[i].exposed);
        ck_assert_int_eq(a->route, rows[i].chat ? PLUGIN_ROUTE_CHAT
                                                : PLUGIN_ROUTE_HANDLER);
        ck_assert_int_eq(a->side_effects, rows[i].side_effects);
        ck_assert_str_eq(a->plugin_dir, rows[i].chat
                                            ? "../../actions/geminiAgent"
                                            : "../../actions/shop");
        ck_assert_ptr_eq(plugin_find(set, rows[i].name), a);
        ck_assert_ptr_eq(plugin_find_fn(set, rows[i].fn),
                         rows[i].exposed ? a : NULL);
        ck_assert_ptr_eq(a->handler, rows[i].chat ? NULL
                                                  : handler_find(rows[i].name));
        if (a->listed)
            ck_assert_ptr_nonnull(a->output_schema);
        exposed += a->exposed;
        listed += a->listed;
    }
    ck_assert_uint_eq(exposed, 3);
    ck_assert_uint_eq(listed, 5);
    ck_assert_str_eq(set->actions[5].source,
                     "../../actions/shop/search-products.jay-action");
    ck_assert_ptr_nonnull(set->actions[5].output_schema);
    /* lookups miss cleanly */
    ck_assert_ptr_null(plugin_find(set, "shop.nope"));
    ck_assert_ptr_null(plugin_find(set, "shop"));
    ck_assert_ptr_null(plugin_find(set, ""));
    ck_assert_ptr_null(plugin_find_fn(set, "shop.searchProducts"));
    ck_assert_ptr_null(plugin_find_fn(set, "action_shop_searchproducts"));
    ck_assert_ptr_null(plugin_find_fn(set, "action_shop_"));
}
END_TEST

START_TEST(real_listing_lists_exposed_actions)
{
    static const char *const dirs[] = {"../../actions"};
    static const char *const names[] = {
        "geminiAgent.sendMessage", "geminiAgent.submitToolResults",
        "shop.addReview", "shop.getProductBySlug", "shop.searchProducts"};
    json_t *root, *list;

    char *listing;

    load_dirs(dirs, 1);
    listing = site_listing(set, NULL);
    ck_assert_ptr_nonnull(listing);
    root = json_loads(listing, 0, NULL);
    ck_assert_ptr_nonnull(root);
    list = json_object_get(root, "actions");
    ck_assert_uint_eq(json_array_size(list), ARRAY_SIZE(names));
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        json_t *o = json_array_get(list, i), *in;
        ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
                         names[i]);
        in = json_object_get(o, "inputSchema");
        ck_assert(json_is_object(in));
        ck_assert_str_eq(json_string_value(json_object_get(in, "type")),
                         "object");
        ck_assert(json_is_object(json_object_get(in, "properties")));
        ck_assert(json_is_object(json_object_get(o, "outputSchema")));
        ck_assert(json_is_string(json_object_get(o, "description")));
    }
    ck_assert(
        json_is_true(json_object_get(json_array_get(list, 2), "sideEffects")));
    ck_assert_ptr_null(strstr(listing, "listCategories"));
    free(listing);
    json_decref(root);
}
END_TEST

/* --- Gemini function names ------------------------------------------------ */

#define X10  "xxxxxxxxxx"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10

static const struct {
    const char *name;
    size_t size;
    int rc;
    const char *fn; /* when rc is 0 */
} fn_cases[] = {
    {"shop.search-products", 64, 0, "action_shop_search_products"},
    {"shop.searchProducts", 64, 0, "action_shop_searchProducts"},
    {"shop.add-review", 64, 0, "action_shop_add_review"},
    {"a.b.c", 64, 0, "action_a_b_c"},
    {"a-b.c", 64, 0, "action_a_b_c"},
    {"a_b.c", 64, 0, "action_a_b_c"},
    {"A_z.0_9", 64, 0, "action_A_z_0_9"},
    {"a b/c", 64, 0, "action_a_b_c"},
    {"x\xc3\xa9", 64, 0, "action_x__"}, /* each UTF-8 byte maps alone */
    {"", 8, 0, "action_"},
    {"", 7, -1, NULL},
    {"shop.x", 14, 0, "action_shop_x"}, /* exactly fits */
    {"shop.x", 13, -1, NULL},
    {"shop.x", 0, -1, NULL},
    {X100 "." X100, 256, 0, "action_" X100 "_" X100},
    {X100 "." X100, 209, 0, "action_" X100 "_" X100},
    {X100 "." X100, 208, -1, NULL},
};

START_TEST(fn_names_map_to_gemini)
{
    char out[300];

    memcpy(out, "untouched", sizeof("untouched"));
    ck_assert_uint_le(fn_cases[_i].size, sizeof(out));
    ck_assert_int_eq(plugin_fn_name(fn_cases[_i].name, out, fn_cases[_i].size),
                     fn_cases[_i].rc);
    ck_assert_str_eq(out, fn_cases[_i].rc == 0 ? fn_cases[_i].fn : "untouched");
}
END_TEST

START_TEST(null_and_empty_sets)
{
    static const char *const dirs[] = {DATA "/empty"};

    ck_assert_ptr_null(plugin_find(NULL, "shop.addReview"));
    ck_assert_ptr_null(plugin_find_fn(NULL, "action_shop_addReview"));
    plugin_set_free(NULL);
    load_dirs(dirs, 1);
    ck_assert_uint_eq(set->count, 0);
    ck_assert_ptr_null(plugin_find(set, "shop.addReview"));
    ck_assert_ptr_null(plugin_find_fn(set, "action_shop_addReview"));
    char *listing = site_listing(set, NULL);
    ck_assert_str_eq(listing, "{\"actions\":[]}");
    free(listing);
}
END_TEST

/* --- broken plugins ------------------------------------------------------- */

#define SHOP_REST "shop.getProductBySlug", "shop.listCategories"
#define ALL_SHOP                                                               \
    "shop.addReview", "shop.getProductBySlug", "shop.listCategories",          \
        "shop.searchProducts"
/* clang-format off */
#define ORPHAN(n)                                                              \
    {"actions", 0,                                                             \
     "handler 'shop." n "' is compiled in but no plugin.yaml entry names it"}
/* clang-format on */

/* data/plugins/<c>/shop/plugin.yaml and its add-review.jay-action */
#define PY(c) DATA "/" c "/shop/plugin.yaml"
#define JA(c) DATA "/" c "/shop/add-review.jay-action"

static const struct plugin_case {
    const char *dirs[3]; /* NULL-terminated */
    struct want w[7];    /* ended by a NULL file */
    const char *loaded[6];
} cases[] = {
    /* .jay-action files; line 7 of plugin.yaml names the broken one */
    {{DATA "/jay-missing"},
     {{DATA "/jay-missing/shop/nowhere.jay-action", 0, "cannot open file"},
      {PY("jay-missing"), 7, "cannot load action file"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-unknown-key"},
     {{JA("jay-unknown-key"), 3, "unknown key 'sideEffect'"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-name-mismatch"},
     {{JA("jay-name-mismatch"), 2,
       "name 'add-review' does not match the plugin.yaml entry 'addReview'"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-no-name"},
     {{JA("jay-no-name"), 2, "'name' must be a string"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-no-description"},
     {{JA("jay-no-description"), 2, "'description' must be a non-empty"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-empty-description"},
     {{JA("jay-empty-description"), 2, "'description' must be a non-empty"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-no-input-schema"},
     {{JA("jay-no-input-schema"), 2, "'inputSchema' is required"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-input-array"},
     {{JA("jay-input-array"), 4, "inputSchema must have type: object"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-input-scalar"},
     {{JA("jay-input-scalar"), 3, "inputSchema: schema must be an object"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-oneof"},
     {{JA("jay-oneof"), 9,
       "inputSchema/properties/rating/oneOf: unsupported keyword 'oneOf'"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-output-ref"},
     {{JA("jay-output-ref"), 8, "unsupported keyword '$ref'"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-side-effects"},
     {{JA("jay-side-effects"), 3, "'sideEffects' must be true or false"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-not-mapping"},
     {{JA("jay-not-mapping"), 2, "an action file must be a mapping"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-syntax"},
     {{JA("jay-syntax"), 4, "syntax error"},
      {PY("jay-syntax"), 7, "cannot load action file"}},
     {"shop.searchProducts", SHOP_REST}},
    {{DATA "/jay-alias"},
     {{JA("jay-alias"), 2, "anchors are not allowed"},
      {PY("jay-alias"), 7, "cannot load action file"}},
     {"shop.searchProducts", SHOP_REST}},
    /* plugin.yaml entries */
    {{DATA "/no-handler"},
     {{PY("no-handler"), 7,
       "no handler is compiled in for 'shop.deleteEverything'"}},
     {ALL_SHOP}},
    {{DATA "/entries"},
     {{PY("entries"), 6, "unknown key 'hidden' in an action entry"},
      {PY("entries"), 7, "'action' must be the path of a .jay-action file"},
      {PY("entries"), 8, "an action name must be an identifier"},
      {PY("entries"), 9, "an action name must be an identifier"},
      {PY("entries"), 11, "an action name must be an identifier"}},
     {SHOP_REST}},
    /* route: chat only for what the chat routes serve, and no other */
    {{DATA "/route"},
     {{DATA "/route/geminiAgent/plugin.yaml", 10,
       "'geminiAgent.other' says route: chat, but no chat route serves it"},
      {DATA "/route/geminiAgent/plugin.yaml", 13, "'route' must be chat"},
      {DATA "/route/geminiAgent/plugin.yaml", 11,
       "no handler is compiled in for 'geminiAgent.submitToolResults'"}},
     {"geminiAgent.sendMessage", ALL_SHOP}},
    /* whole plugins: the broken one (aaa) sorts first, shop still loads */
    {{DATA "/plugin-not-mapping"},
     {{DATA "/plugin-not-mapping/aaa/plugin.yaml", 2,
       "plugin.yaml must be a mapping"}},
     {ALL_SHOP}},
    {{DATA "/plugin-syntax"},
     {{DATA "/plugin-syntax/aaa/plugin.yaml", 3, "syntax error"}},
     {ALL_SHOP}},
    {{DATA "/plugin-empty"},
     {{DATA "/plugin-empty/aaa/plugin.yaml", 1,
       "plugin.yaml must be a mapping"}},
     {ALL_SHOP}},
    {{DATA "/plugin-unknown-key"},
     {{PY("plugin-unknown-key"), 3, "unknown key 'version'"}},
     {ALL_SHOP}},
    {{DATA "/plugin-bad-name"},
     {{DATA "/plugin-bad-name/aaa/plugin.yaml", 2,
       "'name' must be an identifier"}},
     {ALL_SHOP}},
    {{DATA "/plugin-no-name"},
     {{DATA "/plugin-no-name/aaa/plugin.yaml", 2,
       "'name' must be an identifier"}},
     {ALL_SHOP}},
    {{DATA "/plugin-actions-scalar"},
     {{DATA "/plugin-actions-scalar/aaa/plugin.yaml", 2,
       "'actions' must be a list of entries"}},
     {ALL_SHOP}},
    /* names across plugins */
    {{DATA "/duplicate"},
     {{DATA "/duplicate/shop2/plugin.yaml", 4,
       "action 'shop.searchProducts' is declared twice (also in "
       "data/plugins/duplicate/shop/plugin.yaml:"},
      {DATA "/duplicate/shop2/plugin.yaml", 6,
       "action 'shop.listCategories' is declared twice"}},
     {ALL_SHOP}},
    {{DATA "/fn-collision"},
     {{DATA "/fn-collision/a-b/plugin.yaml", 4,
       "no handler is compiled in for 'a-b.c'"},
      {DATA "/fn-collision/a_b/plugin.yaml", 4,
       "no handler is compiled in for 'a_b.c'"},
      {DATA "/fn-collision/a_b/plugin.yaml", 4,
       "actions 'a-b.c' and 'a_b.c' both map to the function name "
       "'action_a_b_c'"}},
     {ALL_SHOP}},
    /* compiled-in handlers no entry names */
    {{DATA "/orphans"},
     {ORPHAN("getProductBySlug"), ORPHAN("addReview")},
     {"shop.searchProducts", "shop.listCategories"}},
    /* ...but not when the site loads none of their plugin's entries */
    {{DATA "/empty"}, {{NULL, 0, NULL}}, {NULL}},
    {{DATA "/nowhere"},
     {{DATA "/nowhere", 0, "cannot open actions folder"}},
     {NULL}},
    {{NULL}, {{NULL, 0, NULL}}, {NULL}},
    /* several folders */
    {{DATA "/split/one", DATA "/split/two"}, {{NULL, 0, NULL}}, {ALL_SHOP}},
    {{DATA "/orphans", DATA "/nowhere"},
     {{DATA "/nowhere", 0, "cannot open actions folder"},
      ORPHAN("getProductBySlug"),
      ORPHAN("addReview")},
     {"shop.searchProducts", "shop.listCategories"}},
};

START_TEST(broken_plugins_are_reported_and_skipped)
{
    const struct plugin_case *c = &cases[_i];
    size_t n = 0;

    while (n < ARRAY_SIZE(c->dirs) && c->dirs[n] != NULL)
        n++;
    load_dirs(c->dirs, n);
    unit_assert_problems(&diag, c->w);
    assert_loaded(set, c->loaded);
}
END_TEST

/*
 * The chat protocol's entries stand only where a chat route serves them:
 * loaded without the routes' names, they are reported and left out, and
 * the rest loads. Loaded with them, nothing finds them as functions.
 */
START_TEST(chat_entries_need_their_routes)
{
    static const char *const dirs[] = {"../../actions"};
    static const struct want w[] = {
        {"../../actions/geminiAgent/plugin.yaml", 11,
         "'geminiAgent.sendMessage' says route: chat, but no chat route"},
        {"../../actions/geminiAgent/plugin.yaml", 14,
         "'geminiAgent.submitToolResults' says route: chat, but no chat"},
        {NULL, 0, NULL},
    };
    static const char *const loaded[] = {ALL_SHOP, NULL};
    const char *const fns[] = {"action_geminiAgent_sendMessage",
                               "action_geminiAgent_submitToolResults"};

    set = plugin_load((char *const *)UNCONST(dirs), 1, NULL, NULL, &diag);
    ck_assert_ptr_nonnull(set);
    unit_assert_problems(&diag, w);
    assert_loaded(set, loaded);
    plugin_set_free(set);
    diag_release(&diag);

    load_dirs(dirs, 1);
    for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
        ck_assert_ptr_null(plugin_find_fn(set, fns[i]));
    ck_assert_ptr_nonnull(plugin_find(set, "geminiAgent.sendMessage"));
}
END_TEST

/* Loaded entries keep what their own files say, not a twin's. */
START_TEST(first_declaration_wins)
{
    static const char *const dirs[] = {DATA "/duplicate"};
    const struct plugin_action *a;

    load_dirs(dirs, 1);
    a = plugin_find(set, "shop.searchProducts");
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->plugin_dir, DATA "/duplicate/shop");
    ck_assert_str_eq(a->source, DATA
                     "/duplicate/shop/../../shared/search-products.jay-action");
    ck_assert_str_eq(plugin_find(set, "shop.listCategories")->plugin_dir,
                     DATA "/duplicate/shop");
}
END_TEST

/*
 * When the keyword's value is a block on the lines below, the problem
 * still points at the keyword (line 7), not at the value's first line (8):
 * ydoc_line_at() locates mapping entries by their keys.
 */
START_TEST(unsupported_keyword_in_block_style)
{
    static const char *const dirs[] = {DATA "/jay-oneof-block"};
    static const struct want w[] = {
        {JA("jay-oneof-block"), 7, "unsupported keyword 'oneOf'"},
        {NULL, 0, NULL},
    };
    static const char *const loaded[] = {"shop.searchProducts", SHOP_REST,
                                         NULL};

    load_dirs(dirs, 1);
    unit_assert_problems(&diag, w);
    assert_loaded(set, loaded);
}
END_TEST

/*
 * A plugin.yaml written for jay-stack: its `global`, `contracts` and
 * `setup` keys are accepted, each with a note at its line, and none is a
 * problem; its actions load as usual.
 */
START_TEST(jay_stack_keys_are_notes)
{
    static const char *const dirs[] = {DATA "/jay-stack"};
    static const struct want none[] = {{NULL, 0, NULL}};
    static const char *const loaded[] = {ALL_SHOP, NULL};
    static const struct {
        int line;
        const char *key;
    } notes[] = {{4, "'global'"}, {5, "'contracts'"}, {10, "'setup'"}};

    load_dirs(dirs, 1);
    unit_assert_problems(&diag, none);
    assert_loaded(set, loaded);
    ck_assert_uint_eq(diag.nnotes, ARRAY_SIZE(notes));
    for (size_t i = 0; i < ARRAY_SIZE(notes); i++) {
        const struct diag_item *n = &diag.notes[i];
        ck_assert_str_eq(n->file, DATA "/jay-stack/shop/plugin.yaml");
        ck_assert_int_eq(n->line, notes[i].line);
        ck_assert_msg(strstr(n->msg, notes[i].key) != NULL &&
                          strstr(n->msg, "jay-stack") != NULL,
                      "note %zu: %s", i, n->msg);
    }
    ck_assert(plugin_find(set, "shop.searchProducts")->exposed);
}
END_TEST

/* An unknown key is still a problem, and a note is never one. */
START_TEST(notes_are_not_problems)
{
    struct diag d = DIAG_INIT, to = DIAG_INIT;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    diag_note(&d, "a.yaml", 3, "worth %s", "knowing");
    diag_add(&d, "a.yaml", 4, "wrong");
    ck_assert_uint_eq(d.count, 1);
    ck_assert_uint_eq(d.nnotes, 1);
    f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    diag_print(&d, f, "");
    diag_print_notes(&d, f);
    fclose(f);
    ck_assert_str_eq(buf, "a.yaml:4: wrong\nnote: a.yaml:3: worth knowing\n");
    free(buf);
    diag_move(&to, &d);
    ck_assert_uint_eq(d.count + d.nnotes, 0);
    ck_assert_uint_eq(to.count, 1);
    ck_assert_uint_eq(to.nnotes, 1);
    ck_assert_str_eq(to.notes[0].msg, "worth knowing");
    diag_release(&to);
    ck_assert_ptr_null(to.notes);
}
END_TEST

/* --- bounds --------------------------------------------------------------- */

/* A temporary actions folder; remove_tree() cleans it. */
static char *
make_temp_dir(void)
{
    char *dir = strdup("/tmp/check_plugin.XXXXXX");

    ck_assert_ptr_nonnull(dir);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

static void
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void
remove_tree(char *dir)
{
    /* only ever our own mkdtemp() folder under /tmp */
    ck_assert_int_eq(strncmp(dir, "/tmp/check_plugin.", 18), 0);
    ck_assert_int_eq(nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
    free(dir);
}

START_TEST(plugin_count_is_bounded)
{
    char *dir = make_temp_dir(), path[128], text[64];
    const char *dirs[] = {dir};

    for (int i = 0; i <= BOUND_PLUGINS; i++) {
        snprintf(path, sizeof(path), "%s/p%03d", dir, i);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/p%03d/plugin.yaml", dir, i);
        snprintf(text, sizeof(text), "name: p%03d\nactions: []\n", i);
        write_file(path, text);
    }
    load_dirs(dirs, 1);
    {
        const struct want w[] = {
            {dir, 0, "more than 64 plugins: the rest are ignored"},
            {NULL, 0, NULL},
        };
        unit_assert_problems(&diag, w);
    }
    ck_assert_uint_eq(set->count, 0);
    remove_tree(dir);
}
END_TEST

/* Every declared entry counts, the broken ones too: the bound is on the
 * work done, not on what ends up loaded. */
START_TEST(action_count_is_bounded)
{
    char *dir = make_temp_dir(), path[128], *text = NULL;
    const char *dirs[] = {dir};
    size_t len = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/zz", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    fputs("name: zz\nactions:\n", f);
    for (int i = 0; i <= BOUND_ACTIONS; i++)
        fprintf(f, "  - a%d\n", i);
    fclose(f);
    snprintf(path, sizeof(path), "%s/zz/plugin.yaml", dir);
    write_file(path, text);
    load_dirs(dirs, 1);
    ck_assert_uint_eq(diag.count, BOUND_ACTIONS + 1);
    ck_assert(has_problem(path, 3, "no handler is compiled in for 'zz.a0'"));
    ck_assert(has_problem(path, 2 + BOUND_ACTIONS,
                          "no handler is compiled in for 'zz.a511'"));
    ck_assert(
        has_problem(path, 3 + BOUND_ACTIONS, "more than 512 actions in all"));
    ck_assert(!has_problem(path, 3 + BOUND_ACTIONS, "zz.a512"));
    /* the site loads no shop entry: its handlers are not orphans */
    ck_assert(!has_problem("actions", 0, "'shop.addReview' is compiled in"));
    ck_assert_uint_eq(set->count, 0);
    free(text);
    remove_tree(dir);
}
END_TEST

Suite *
plugin_suite(void)
{
    Suite *s = suite_create("plugin");
    TCase *tc;

    tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, real_actions_load_cleanly);
    tcase_add_test(tc, real_listing_lists_exposed_actions);
    tcase_add_loop_test(tc, fn_names_map_to_gemini, 0,
                        (int)ARRAY_SIZE(fn_cases));
    tcase_add_test(tc, null_and_empty_sets);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, broken_plugins_are_reported_and_skipped, 0,
                        (int)ARRAY_SIZE(cases));
    tcase_add_test(tc, first_declaration_wins);
    tcase_add_test(tc, unsupported_keyword_in_block_style);
    tcase_add_test(tc, jay_stack_keys_are_notes);
    tcase_add_test(tc, chat_entries_need_their_routes);
    tcase_add_test(tc, notes_are_not_problems);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, plugin_count_is_bounded);
    tcase_add_test(tc, action_count_is_bounded);
    suite_add_tcase(s, tc);
    return s;
}
