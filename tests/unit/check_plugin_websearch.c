/*
 * check_plugin_websearch.c - the built-in web_search plugin against
 * tests/mock/search_mock.py (a fake SearXNG on 127.0.0.1): its config
 * schema through the registry, the request it makes (query, safesearch,
 * region, headers), the results it hands on (capped, cleaned, non-http
 * urls dropped), and each failure as the tool's error, never a crash and
 * never a header value in the message.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/websearch.h"
#include "unit_plugin.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "plugins/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/memlimit.h"
#include "core/monotime.h"
#include "unit_webmock.h"

#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *websearch_clean(const char *s, size_t max); /* TESTABLE */

/* As the server runs: jansson through the memory bound, whose blocks
 * free() must never see. */
static void
setup(void)
{
    memlimit_install();
}

static const struct gemini_agent_plugin *
ops(void)
{
    const struct gemini_agent_plugin *p =
        builtin_web_search(GEMINI_AGENT_PLUGIN_ABI);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Run the tool: its return code, its answer in *out (arena memory). */
static int
ws_run(void *self, struct arena *a, const char *args, json_t **json,
       const char **text)
{
    struct gemini_agent_ctx ctx = {.abi = GEMINI_AGENT_PLUGIN_ABI,
                                   .data_dir = "/tmp",
                                   .alloc = unit_plugin_alloc,
                                   .host = a};
    struct gemini_agent_out out = {NULL, 0};
    int rc;

    /* as in a request: jansson's values come from the request's arena */
    memlimit_json_arena(a);
    rc = ops()->execute(self, &ctx, "search", args, strlen(args), &out);
    memlimit_json_arena(NULL);

    *text = out.text ? out.text : "";
    if (json != NULL) {
        json_error_t jerr;
        *json = rc == GEMINI_AGENT_OK ? json_loads(*text, 0, &jerr) : NULL;
        if (rc == GEMINI_AGENT_OK)
            ck_assert_msg(*json != NULL, "not JSON: %s", *text);
    }
    return rc;
}

/* A plugin on the mock's route `path` with `extra` config members. */
static void *
ws_on(const char *path, const char *extra)
{
    void *self;
    char err[256];

    ck_assert_msg(unit_plugin_init(ops(), "/tmp", &self, err, sizeof(err),
                          "{\"endpoint\":\"%s\"," UNIT_WEBMOCK_OUTBOUND "%s%s}",
                          unit_webmock_url(path),
                          *extra ? "," : "", extra) == 0,
                  "initialize: %s", err);
    return self;
}

/* --- the configuration ------------------------------------------------- */

static void
refused(const char *yaml, const char *why)
{
    struct config *cfg;
    struct diag d = DIAG_INIT;
    struct plugin_set *set = unit_builtin_set(yaml, builtin_web_search, &cfg,
                                              &d);

    ck_assert_msg(set->nso == 0, "accepted: %s", yaml);
    ck_assert_msg(unit_diag_has(&d, why), "%s: no problem says '%s'", yaml,
                  why);
    ck_assert_ptr_null(plugin_find(set, "web_search.search"));
    unit_builtin_done(set, cfg, &d);
}

START_TEST(schema_accepts_and_refuses)
{
    struct config *cfg;
    struct diag d = DIAG_INIT;
    struct plugin_set *set;

    /* everything set: exposed, its tool registered, read-only and
     * auto-approved, its instruction kept */
    set = unit_builtin_set(
        "actions: []\nplugins:\n  config:\n    web_search:\n"
        "      endpoint: https://searx.example.org/search\n"
        "      maxResults: 3\n      safesearch: 2\n      region: de-CH\n"
        "      timeoutMs: 500\n      headers: {X-Api-Key: k1}\n",
        builtin_web_search, &cfg, &d);
    ck_assert_msg(set->nso == 1, "refused: %s",
                  d.count ? d.items[0].msg : "");
    ck_assert_str_eq(set->so[0].path, SOPLUGIN_BUILTIN);
    ck_assert_ptr_nonnull(plugin_find(set, "web_search.search"));
    ck_assert(!plugin_find(set, "web_search.search")->side_effects);
    ck_assert_str_eq(set->so[0].auto_approved, "[\"search\"]");
    ck_assert_ptr_nonnull(strstr(set->so[0].instructions, "cite"));
    unit_builtin_done(set, cfg, &d);

    /* only the endpoint */
    set = unit_builtin_set("actions: []\nplugins:\n  config:\n    web_search:"
                           " {endpoint: 'http://127.0.0.1:9/search'}\n",
                           builtin_web_search, &cfg, &d);
    ck_assert_uint_eq(set->nso, 1);
    unit_builtin_done(set, cfg, &d);

    refused("actions: []\nplugins:\n  config:\n    web_search: {}\n",
            "plugins.config.web_search");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'ftp://x.example/search'}\n",
            "/endpoint");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', maxResults: 21}\n",
            "/maxResults");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', maxResults: 0}\n",
            "/maxResults");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', safesearch: 3}\n",
            "/safesearch");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', safesearch: strict}\n",
            "/safesearch");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', region: 'en US'}\n",
            "/region");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', colour: blue}\n",
            "colour");
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', headers: {X-Key: 5}}\n",
            "/headers");
    /* what the schema cannot say, initialize() does */
    refused("actions: []\nplugins:\n  config:\n    web_search: "
            "{endpoint: 'https://x.example/s', headers: {'Bad Name': v}}\n",
            "not a header name");
}
END_TEST

START_TEST(initialize_alone_checks_too)
{
    void *self;
    char err[256];

    ck_assert_int_ne(unit_plugin_init(ops(), "/tmp", &self, err, sizeof(err), "{}"), 0);
    ck_assert_ptr_nonnull(strstr(err, "endpoint"));
    ck_assert_int_ne(unit_plugin_init(ops(), "/tmp", &self, err, sizeof(err),
                             "{\"endpoint\":\"file:///etc/passwd\"}"),
                     0);
    ck_assert_int_ne(unit_plugin_init(ops(), "/tmp", &self, err, sizeof(err),
                             "{\"endpoint\":\"https://x/s\",\"headers\":"
                             "{\"X-Key\":\"a\\r\\nInjected: 1\"}}"),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "one line"));
    ck_assert_ptr_null(strstr(err, "Injected"));
    ck_assert_int_ne(unit_plugin_init(ops(), "/tmp", &self, err, sizeof(err),
                             "{\"endpoint\":\"https://x/s\",\"maxResults\":"
                             "99}"),
                     0);
    ck_assert_ptr_null(self);
}
END_TEST

/* --- searching ------------------------------------------------------- */

START_TEST(results_capped_and_cleaned)
{
    struct arena a;
    void *self = ws_on("/search", "\"maxResults\":3");
    json_t *j, *list;
    const char *text;

    arena_init(&a);
    ck_assert_int_eq(ws_run(self, &a, "{\"query\":\"cats\"}", &j, &text),
                     GEMINI_AGENT_OK);
    list = json_object_get(j, "results");
    ck_assert_msg(json_array_size(list) == 3, "%s", text);
    /* whitespace collapsed and trimmed */
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 0), "title")),
        "Result 1 for cats");
    /* javascript:, ftp: and a missing url are dropped: 1, 5, 6 */
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 1), "url")),
        "https://example.org/r5?q=cats");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 2), "title")),
        "Result 6 for cats");
    ck_assert_str_eq(
        json_string_value(
            json_object_get(json_array_get(list, 2), "snippet")),
        "Snippet 6 about cats.");
    /* result 5's 1000 'é' (2000 bytes): cut at a character, "..." */
    {
        const char *sn = json_string_value(
            json_object_get(json_array_get(list, 1), "snippet"));
        size_t n = strlen(sn);
        ck_assert_uint_le(n, BOUND_WEBSEARCH_SNIPPET + 3);
        ck_assert_uint_ge(n, BOUND_WEBSEARCH_SNIPPET - 1);
        ck_assert_str_eq(sn + n - 3, "...");
    }
    /* exactly the keys of the contract */
    ck_assert_uint_eq(json_object_size(json_array_get(list, 0)), 3);
    ck_assert_uint_eq(json_object_size(j), 1);
    json_decref(j);

    /* the model may ask for fewer, not for more */
    ck_assert_int_eq(ws_run(self, &a, "{\"query\":\"cats\",\"maxResults\":2}",
                            &j, &text),
                     GEMINI_AGENT_OK);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "results")), 2);
    json_decref(j);
    ck_assert_int_eq(ws_run(self, &a,
                            "{\"query\":\"cats\",\"maxResults\":20}", &j,
                            &text),
                     GEMINI_AGENT_OK);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "results")), 3);
    json_decref(j);
    ops()->shutdown(self);

    /* the default is 5 */
    self = ws_on("/search", "");
    ck_assert_int_eq(ws_run(self, &a, "{\"query\":\"dogs\"}", &j, &text),
                     GEMINI_AGENT_OK);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "results")),
                      WEBSEARCH_RESULTS_DEFAULT);
    json_decref(j);
    ops()->shutdown(self);
    arena_release(&a);
}
END_TEST

START_TEST(parameters_passed_through)
{
    struct arena a;
    void *self = ws_on("/search",
                       "\"safesearch\":2,\"region\":\"de-CH\","
                       "\"headers\":{\"X-Api-Key\":\"secret-key-1\"}");
    json_t *j, *last, *params;
    const char *text;

    arena_init(&a);
    ck_assert_int_eq(
        ws_run(self, &a, "{\"query\":\"cats & dogs? 100%\"}", &j, &text),
        GEMINI_AGENT_OK);
    json_decref(j);
    last = unit_webmock_json("/__last");
    params = json_object_get(last, "params");
    ck_assert_str_eq(json_string_value(json_object_get(last, "path")),
                     "/search");
    ck_assert_str_eq(json_string_value(json_object_get(params, "q")),
                     "cats & dogs? 100%");
    ck_assert_str_eq(json_string_value(json_object_get(params, "format")),
                     "json");
    ck_assert_str_eq(
        json_string_value(json_object_get(params, "safesearch")), "2");
    ck_assert_str_eq(json_string_value(json_object_get(params, "language")),
                     "de-CH");
    ck_assert_str_eq(json_string_value(json_object_get(params, "pageno")),
                     "1");
    ck_assert_uint_eq(json_object_size(params), 5);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(last, "headers"), "x-api-key")),
                     "secret-key-1");
    json_decref(last);
    ops()->shutdown(self);

    /* no region: no language; safesearch's default is moderate (1) */
    self = ws_on("/search", "");
    ck_assert_int_eq(ws_run(self, &a, "{\"query\":\"x\"}", &j, &text),
                     GEMINI_AGENT_OK);
    json_decref(j);
    last = unit_webmock_json("/__last");
    params = json_object_get(last, "params");
    ck_assert_ptr_null(json_object_get(params, "language"));
    ck_assert_str_eq(
        json_string_value(json_object_get(params, "safesearch")), "1");
    json_decref(last);
    ops()->shutdown(self);
    arena_release(&a);
}
END_TEST

/* The tool's error for the mock's `path` (or a closed port when NULL),
 * checked to hold `want` and no header value. */
static void
fails_with(const char *path, const char *extra, const char *want)
{
    struct arena a;
    char url[128], err[256], cfg[512];
    void *self;
    const char *text;

    if (path == NULL)
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/search",
                 unit_webmock_closed_port());
    else
        snprintf(url, sizeof(url), "%s", unit_webmock_url(path));
    snprintf(cfg, sizeof(cfg),
             "{\"endpoint\":\"%s\",\"headers\":{\"X-Api-Key\":"
             "\"secret-key-2\"}," UNIT_WEBMOCK_OUTBOUND "%s%s}",
             url, *extra ? "," : "", extra);
    ck_assert_int_eq(ops()->initialize(&(struct gemini_agent_init){cfg,
                                           strlen(cfg), "/tmp", "/tmp"},
                                       &self, err, sizeof(err)),
                     0);
    arena_init(&a);
    ck_assert_int_eq(ws_run(self, &a, "{\"query\":\"q\"}", NULL, &text),
                     GEMINI_AGENT_FAILED);
    ck_assert_msg(strstr(text, want) != NULL, "'%s' lacks '%s'", text, want);
    ck_assert_msg(strncmp(text, "web search failed: ", 19) == 0, "%s", text);
    ck_assert_ptr_null(strstr(text, "secret-key-2"));
    ck_assert_ptr_null(strstr(text, "X-Api-Key"));
    arena_release(&a);
    ops()->shutdown(self);
}

START_TEST(failures_are_clean_errors)
{
    long t0;

    fails_with(NULL, "", "could not connect");
    fails_with("/html/search", "", "not JSON");
    fails_with("/fail/search", "", "answered HTTP 500");
    fails_with("/shape/search", "", "no results list");
    fails_with("/nowhere", "", "answered HTTP 404");
    t0 = monotime_ms();
    fails_with("/slow/search", "\"timeoutMs\":300", "timed out after 300 ms");
    ck_assert_int_lt(monotime_ms() - t0, 2500);
}
END_TEST

START_TEST(clean_cuts_at_characters)
{
    json_t *j = websearch_clean("\xc3\xa9\xc3\xa9\xc3\xa9", 3);

    ck_assert_str_eq(json_string_value(j), "\xc3\xa9...");
    json_decref(j);
    j = websearch_clean(" a \n\t b ", 10);
    ck_assert_str_eq(json_string_value(j), "a b");
    json_decref(j);
    j = websearch_clean("", 10);
    ck_assert_str_eq(json_string_value(j), "");
    json_decref(j);
}
END_TEST

Suite *
plugin_websearch_suite(void)
{
    Suite *s = suite_create("plugin_websearch");
    TCase *tc = tcase_create("core");

    tcase_add_unchecked_fixture(tc, unit_webmock_start, unit_webmock_stop);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, schema_accepts_and_refuses);
    tcase_add_test(tc, initialize_alone_checks_too);
    tcase_add_test(tc, results_capped_and_cleaned);
    tcase_add_test(tc, parameters_passed_through);
    tcase_add_test(tc, failures_are_clean_errors);
    tcase_add_test(tc, clean_cuts_at_characters);
    suite_add_tcase(s, tc);
    return s;
}
