/*
 * check_plugin_references.c - the built-in references plugin: file
 * sources read at initialize() (relative to agent.yaml's folder, a
 * missing one named), the `get` tool and its declaration, @name prompt
 * enrichment (unknown names, repeats, addresses left alone), and URL
 * sources fetched from tests/mock/search_mock.py, cached, cut at
 * maxBytes, never followed to a non-http scheme.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/references.h"
#include "unit_plugin.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/memlimit.h"
#include "core/netaddr.h"
#include "plugins/builtin.h"
#include "unit_webmock.h"

#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ga-refs.XXXXXX";

static void
write_file(const char *name, const char *text, size_t len)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void
setup(void)
{
    /* as the server runs: jansson through the memory bound, whose blocks
     * free() must never see */
    memlimit_install();
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_file("faq.md", "FAQ: shipping takes 3 days.", 27);
    write_file("guide.txt", "Guide: press the big button.\n", 29);
    write_file("bad.bin", "\xff\x00ok\xc3", 5);
}

static void
teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/ga-refs.XXXXXX");
}

static const struct gemini_agent_plugin *
ops(void)
{
    const struct gemini_agent_plugin *p =
        builtin_references(GEMINI_AGENT_PLUGIN_ABI);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void *
refs_ok(const char *cfg)
{
    void *self;
    char err[512];

    ck_assert_msg(unit_plugin_init(ops(), dir, &self, err, sizeof(err), "%s", cfg) == 0,
                  "initialize: %s", err);
    return self;
}

static struct gemini_agent_ctx
ctx_of(struct arena *a)
{
    return (struct gemini_agent_ctx){.abi = GEMINI_AGENT_PLUGIN_ABI,
                                     .data_dir = "/tmp",
                                     .alloc = unit_plugin_alloc,
                                     .host = a};
}

/* get {name}: the return code, *text the answer. */
static int
get(void *self, struct arena *a, const char *name, const char **text)
{
    struct gemini_agent_ctx ctx = ctx_of(a);
    struct gemini_agent_out out = {NULL, 0};
    char args[200];
    int rc;

    snprintf(args, sizeof(args), "{\"name\":\"%s\"}", name);
    /* as in a request: jansson's values come from the request's arena */
    memlimit_json_arena(a);
    rc = ops()->execute(self, &ctx, "get", args, strlen(args), &out);
    memlimit_json_arena(NULL);
    *text = out.text ? out.text : "";
    return rc;
}

/* enrich `prompt`: *np the new prompt (NULL: unchanged), *md metadata. */
static int
enrich(void *self, struct arena *a, const char *prompt, const char **np,
       const char **md)
{
    struct gemini_agent_ctx ctx = ctx_of(a);
    struct gemini_agent_out o1 = {NULL, 0}, o2 = {NULL, 0};
    int rc;

    memlimit_json_arena(a);
    rc = ops()->enrich_prompt(self, &ctx, prompt, strlen(prompt), &o1, &o2);
    memlimit_json_arena(NULL);

    *np = o1.text;
    *md = o2.text;
    if (o1.text != NULL)
        ck_assert_uint_eq(strlen(o1.text), o1.len);
    return rc;
}

START_TEST(file_sources_and_the_tool)
{
    struct arena a;
    char cfg[512];
    const char *text;
    void *self;

    snprintf(cfg, sizeof(cfg),
             "{\"sources\":{\"guide\":{\"file\":\"%s/guide.txt\"},"
             "\"faq\":{\"file\":\"faq.md\",\"description\":\"Questions we "
             "are asked\"}}}",
             dir);
    self = refs_ok(cfg);
    /* the tool's enum: the names, sorted */
    ck_assert_ptr_nonnull(
        strstr(ops()->declarations(self), "\"enum\":[\"faq\",\"guide\"]"));
    ck_assert_ptr_nonnull(
        strstr(ops()->declarations(self), "\"sideEffects\":false"));
    ck_assert_str_eq(ops()->auto_approved_tools(self), "[\"get\"]");
    ck_assert_ptr_nonnull(strstr(ops()->system_instructions(self),
                                 " faq - Questions we are asked; guide."));
    arena_init(&a);
    ck_assert_int_eq(get(self, &a, "faq", &text), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"name\":\"faq\",\"content\":\"FAQ: shipping "
                           "takes 3 days.\"}");
    ck_assert_int_eq(get(self, &a, "guide", &text), GEMINI_AGENT_OK);
    ck_assert_ptr_nonnull(strstr(text, "press the big button.\\n"));
    ck_assert_int_eq(get(self, &a, "nope", &text), GEMINI_AGENT_BAD_INPUT);
    ck_assert_str_eq(text, "no reference by that name");
    arena_release(&a);
    ops()->shutdown(self);
}
END_TEST

START_TEST(cut_and_scrubbed)
{
    struct arena a;
    const char *text;
    void *self = refs_ok("{\"maxBytes\":10,\"sources\":{\"faq\":{\"file\":"
                         "\"faq.md\"},\"bad\":{\"file\":\"bad.bin\"}}}");

    arena_init(&a);
    ck_assert_int_eq(get(self, &a, "faq", &text), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"name\":\"faq\",\"content\":\"FAQ: shipp\","
                           "\"truncated\":true}");
    /* 0xff and NUL are no text; the lone lead byte at the end either */
    ck_assert_int_eq(get(self, &a, "bad", &text), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"name\":\"bad\",\"content\":\"??ok?\"}");
    arena_release(&a);
    ops()->shutdown(self);
}
END_TEST

START_TEST(missing_file_named)
{
    void *self;
    char err[512];

    ck_assert_int_ne(unit_plugin_init(ops(), dir, &self, err, sizeof(err),
                               "{\"sources\":{\"faq\":{\"file\":\"faq.md\"},"
                               "\"manual\":{\"file\":\"no/such.md\"}}}"),
                     0);
    ck_assert_ptr_null(self);
    ck_assert_msg(strstr(err, "source 'manual'") != NULL &&
                      strstr(err, "no/such.md") != NULL &&
                      strstr(err, "No such file") != NULL,
                  "%s", err);
    ck_assert_int_ne(unit_plugin_init(ops(), dir, &self, err, sizeof(err),
                               "{\"sources\":{\"a b\":{\"file\":\"faq.md\"}}}"),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "letters, digits"));
    ck_assert_int_ne(unit_plugin_init(ops(), dir, &self, err, sizeof(err),
                               "{\"sources\":{\"x\":{\"file\":\"faq.md\","
                               "\"url\":\"http://a/b\"}}}"),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "either file or url"));
    ck_assert_int_ne(unit_plugin_init(ops(), dir, &self, err, sizeof(err), "{\"sources\":{}}"),
                     0);
}
END_TEST

START_TEST(enrichment)
{
    struct arena a;
    const char *np, *md;
    void *self = refs_ok("{\"sources\":{\"faq\":{\"file\":\"faq.md\"},"
                         "\"guide\":{\"file\":\"guide.txt\"}}}");

    arena_init(&a);
    /* no @ at all, an unknown name, an address: unchanged, no metadata */
    ck_assert_int_eq(enrich(self, &a, "hello there", &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_ptr_null(np);
    ck_assert_ptr_null(md);
    ck_assert_int_eq(enrich(self, &a, "see @nope and bob@faq.com or x.@faq",
                            &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_ptr_null(np);
    ck_assert_ptr_null(md);
    /* @faq twice and an unknown name: one block, in the order named */
    ck_assert_int_eq(enrich(self, &a, "@faq what about @nope, and @faq?",
                            &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(np, "@faq what about @nope, and @faq?"
                         "\n\n[reference faq]\nFAQ: shipping takes 3 days."
                         "\n[/reference faq]");
    ck_assert_str_eq(md, "{\"references\":[\"faq\"]}");
    ck_assert_int_eq(enrich(self, &a, "(@guide) then @faq.", &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(np, "(@guide) then @faq."
                         "\n\n[reference guide]\nGuide: press the big "
                         "button.\n\n[/reference guide]"
                         "\n\n[reference faq]\nFAQ: shipping takes 3 days."
                         "\n[/reference faq]");
    ck_assert_str_eq(md, "{\"references\":[\"guide\",\"faq\"]}");
    /* a longer name is another name: @faqs is not @faq */
    ck_assert_int_eq(enrich(self, &a, "@faqs @faq-x", &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_ptr_null(np);
    arena_release(&a);
    ops()->shutdown(self);
}
END_TEST

static long
count_of(const char *path)
{
    json_t *c = unit_webmock_json("/__count");
    long n = (long)json_integer_value(json_object_get(c, path));

    json_decref(c);
    return n;
}

START_TEST(url_sources)
{
    struct arena a;
    const char *text, *np, *md;
    char cfg[1024];
    void *self;
    long before;

    snprintf(cfg, sizeof(cfg),
             "{\"sources\":{\"api\":{\"url\":\"%s\"},"
             "\"gone\":{\"url\":\"http://127.0.0.1:%d/x\"},",
             unit_webmock_url("/doc/api"), unit_webmock_closed_port());
    snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg),
             "\"missing\":{\"url\":\"%s\"},", unit_webmock_url("/nope"));
    snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg),
             "\"moved\":{\"url\":\"%s\"},", unit_webmock_url("/redirect"));
    snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg),
             "\"big\":{\"url\":\"%s\"}},\"maxBytes\":100,"
             "\"timeoutMs\":2000," UNIT_WEBMOCK_OUTBOUND "}",
             unit_webmock_url("/big"));
    before = count_of("/doc/api");
    self = refs_ok(cfg);
    /* lazily: nothing fetched at initialize() */
    ck_assert_int_eq(count_of("/doc/api"), before);
    arena_init(&a);
    ck_assert_int_eq(get(self, &a, "api", &text), GEMINI_AGENT_OK);
    ck_assert_str_eq(text, "{\"name\":\"api\",\"content\":\"Document api: "
                           "the mock's text for api.\\n\"}");
    ck_assert_int_eq(get(self, &a, "api", &text), GEMINI_AGENT_OK);
    ck_assert_int_eq(enrich(self, &a, "@api", &np, &md), GEMINI_AGENT_OK);
    ck_assert_ptr_nonnull(strstr(np, "[reference api]\nDocument api: "));
    /* one fetch for the three: the cache (cacheSeconds 300) */
    ck_assert_int_eq(count_of("/doc/api"), before + 1);

    /* failures: the tool's error, with the reason but not the URL */
    ck_assert_int_eq(get(self, &a, "gone", &text), GEMINI_AGENT_FAILED);
    ck_assert_str_eq(text, "reference 'gone' could not be fetched: could "
                           "not connect");
    ck_assert_int_eq(get(self, &a, "missing", &text), GEMINI_AGENT_FAILED);
    ck_assert_str_eq(text, "reference 'missing' could not be fetched: "
                           "HTTP 404");
    ck_assert_int_eq(get(self, &a, "moved", &text), GEMINI_AGENT_FAILED);
    ck_assert_msg(strstr(text, "could not be fetched") != NULL &&
                      strstr(text, "passwd") == NULL,
                  "%s", text);
    /* ... and @name of one leaves the prompt alone, saying so */
    ck_assert_int_eq(enrich(self, &a, "@gone @api", &np, &md),
                     GEMINI_AGENT_OK);
    ck_assert_str_eq(md, "{\"references\":[\"api\"],\"failed\":[\"gone\"]}");
    ck_assert_ptr_null(strstr(np, "[reference gone]"));
    ck_assert_ptr_nonnull(strstr(np, "\n\n[reference gone not read: could "
                                     "not be fetched: could not connect]"));
    /* a large page: its first maxBytes */
    ck_assert_int_eq(get(self, &a, "big", &text), GEMINI_AGENT_OK);
    ck_assert_ptr_nonnull(strstr(text, "\"truncated\":true"));
    ck_assert_uint_eq(strlen(text),
                      strlen("{\"name\":\"big\",\"content\":\"\","
                             "\"truncated\":true}") +
                          100);
    arena_release(&a);
    ops()->shutdown(self);

    /* cacheSeconds 0: every use fetches */
    snprintf(cfg, sizeof(cfg),
             "{\"sources\":{\"api\":{\"url\":\"%s\"}},\"cacheSeconds\":0,"
             UNIT_WEBMOCK_OUTBOUND "}",
             unit_webmock_url("/doc/api"));
    self = refs_ok(cfg);
    before = count_of("/doc/api");
    arena_init(&a);
    ck_assert_int_eq(get(self, &a, "api", &text), GEMINI_AGENT_OK);
    ck_assert_int_eq(get(self, &a, "api", &text), GEMINI_AGENT_OK);
    ck_assert_int_eq(count_of("/doc/api"), before + 2);
    arena_release(&a);
    ops()->shutdown(self);
}
END_TEST

static void
refused(const char *yaml, const char *why)
{
    struct config *cfg;
    struct diag d = DIAG_INIT;
    struct plugin_set *set = unit_builtin_set(yaml, builtin_references, &cfg,
                                              &d);

    ck_assert_msg(set->nso == 0, "accepted: %s", yaml);
    ck_assert_msg(unit_diag_has(&d, why), "%s: no problem says '%s' (%s)",
                  yaml, why, d.count ? d.items[0].msg : "no problem");
    unit_builtin_done(set, cfg, &d);
}

START_TEST(through_the_registry)
{
    struct config *cfg;
    struct diag d = DIAG_INIT;
    struct plugin_set *set;

    /* relative to agent.yaml's folder: none there, so it is reported */
    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {faq: {file: faq.md}}\n",
            "source 'faq': cannot read");
    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {faq: {description: nothing to read}}\n",
            "plugins.config.references");
    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {faq: {file: a.md, size: 3}}\n",
            "size");
    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {faq: {url: 'ftp://x.example/f'}}\n",
            "/sources/faq");
    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {faq: {file: /etc/hostname}}\n"
            "      maxBytes: 999999999\n",
            "/maxBytes");
    /* an absolute file: loaded, its tool registered, read-only */
    write_file("doc.txt", "hi", 2);
    {
        char yaml[512];
        snprintf(yaml, sizeof(yaml),
                 "actions: []\nplugins:\n  config:\n    references:\n"
                 "      sources: {doc: {file: '%s/doc.txt'}}\n",
                 dir);
        set = unit_builtin_set(yaml, builtin_references, &cfg, &d);
    }
    ck_assert_msg(set->nso == 1, "%s", d.count ? d.items[0].msg : "");
    ck_assert_ptr_nonnull(plugin_find(set, "references.get"));
    ck_assert(!plugin_find(set, "references.get")->side_effects);
    unit_builtin_done(set, cfg, &d);
}
END_TEST

/* The host's outbound policy (agent.yaml's outbound.allow) reaches the
 * built-in as "outbound" in its configuration, which the owner cannot
 * write per plugin; a reload that changes it initialises the plugin
 * again, one that keeps it keeps the instance. */
START_TEST(outbound_from_the_host)
{
    static const gemini_agent_plugin_factory table[] = {builtin_references,
                                                        NULL};
    struct config *cfg;
    struct diag d = DIAG_INIT;
    struct plugin_set *set;
    struct so_plugin *next;
    struct netaddr other;
    size_t n;
    struct arena a;
    const char *text;
    char yaml[512];

    refused("actions: []\nplugins:\n  config:\n    references:\n"
            "      sources: {api: {url: 'http://docs.example/'}}\n"
            "      outbound: {allow: ['0.0.0.0/0']}\n",
            "outbound");
    snprintf(yaml, sizeof(yaml),
             "actions: []\noutbound: {allow: [127.0.0.1]}\n"
             "plugins:\n  config:\n    references:\n"
             "      sources: {api: {url: '%s'}}\n",
             unit_webmock_url("/doc/api"));
    set = unit_builtin_set(yaml, builtin_references, &cfg, &d);
    ck_assert_msg(set->nso == 1, "%s", d.count ? d.items[0].msg : "");
    ck_assert_ptr_nonnull(strstr(set->so[0].config,
                                 "\"outbound\":{\"allow\":[\"127.0.0.1\"]}"));
    arena_init(&a);
    ck_assert_int_eq(get(set->so[0].self, &a, "api", &text), GEMINI_AGENT_OK);
    arena_release(&a);
    /* a reload with the same policy keeps the instance ... */
    struct soplugin_env env = {.cfg = &cfg->plugins,
                               .builtins = table,
                               .fetchers = builtin_fetchers,
                               .outbound = cfg->outbound.allow,
                               .noutbound = cfg->outbound.nallow,
                               .prev = set->so,
                               .nprev = set->nso};
    ck_assert_int_eq(soplugin_load(&env, &next, &n, &d), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert(next[0].borrowed && next[0].self == set->so[0].self);
    soplugin_free_all(next, n);
    /* ... another one does not: the new instance is refused loopback */
    ck_assert(netaddr_parse("10.0.0.0/8", 10, &other));
    env.outbound = &other;
    env.noutbound = 1;
    ck_assert_int_eq(soplugin_load(&env, &next, &n, &d), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert(!next[0].borrowed && next[0].self != set->so[0].self);
    arena_init(&a);
    ck_assert_int_eq(get(next[0].self, &a, "api", &text),
                     GEMINI_AGENT_FAILED);
    ck_assert_str_eq(text, "reference 'api' could not be fetched: the "
                           "address of 127.0.0.1 is not allowed");
    arena_release(&a);
    soplugin_free_all(next, n);
    unit_builtin_done(set, cfg, &d);
}
END_TEST

Suite *
plugin_references_suite(void)
{
    Suite *s = suite_create("plugin_references");
    TCase *tc = tcase_create("core");

    tcase_add_unchecked_fixture(tc, unit_webmock_start, unit_webmock_stop);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, file_sources_and_the_tool);
    tcase_add_test(tc, cut_and_scrubbed);
    tcase_add_test(tc, missing_file_named);
    tcase_add_test(tc, enrichment);
    tcase_add_test(tc, url_sources);
    tcase_add_test(tc, through_the_registry);
    tcase_add_test(tc, outbound_from_the_host);
    suite_add_tcase(s, tc);
    return s;
}
