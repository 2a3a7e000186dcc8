/*
 * websearch.c - the built-in plugin `web_search` (websearch.h).
 *
 * One call of the tool is one GET of
 *
 *     {endpoint}?q=QUERY&format=json&safesearch=N[&language=REGION]&pageno=1
 *
 * (SearXNG's search API; any endpoint that answers the same JSON shape
 * will do), its `results` read into at most maxResults entries of
 * {title, url, snippet}: whitespace collapsed, each field cut to its
 * bound in bounds.h, results whose url is not http(s) dropped. Failures
 * (timeout, an HTTP status other than 200, an answer that is not that
 * JSON) are the tool's error with a sentence the model can pass on; the
 * configured headers (an API key, say) never appear in one. The endpoint
 * is reached only where the outbound policy allows (plugins/outbound.h),
 * and no redirect is followed: a search API has no reason to send one.
 *
 * The instance is read-only after initialize(), so execute() needs no
 * lock; webget.c makes a curl handle per call, so nothing made in the
 * loading process is used in a forked worker.
 *
 * Not here: paging, categories, engines, time ranges (the model asks
 * again with other words instead); POST.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/websearch.h"
#include "plugins/answer.h"
#include "plugins/outbound.h"
#include "plugins/webget.h"
#include "core/bounds.h"
#include "plugins/bounds.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/utf8.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XSTR_(x) #x
#define XSTR(x)  XSTR_(x)

struct websearch {
    char *endpoint;
    int max_results;
    int safesearch; /* SearXNG's 0 off, 1 moderate, 2 strict */
    char *region;   /* language=, or NULL: the instance's default */
    long timeout_ms;
    char **headers; /* "Name: value", NULL-terminated */
    size_t nheaders;
    /* where the endpoint may be (outbound.h); no redirect is followed */
    struct outbound outbound;
};

static const char *
ws_schema(void)
{
    /* safesearch takes SearXNG's own numbers, so what the site owner
     * writes is what the endpoint receives */
    /* clang-format off */
    return "{\"type\":\"object\","
           "\"properties\":{"
           "\"endpoint\":{\"type\":\"string\",\"maxLength\":" XSTR(
               BOUND_WEBSEARCH_ENDPOINT) ","
           "\"pattern\":\"^https?://[^/?#]\"},"
           "\"maxResults\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":" XSTR(BOUND_WEBSEARCH_RESULTS) "},"
           "\"safesearch\":{\"type\":\"integer\",\"minimum\":0,"
           "\"maximum\":2},"
           "\"region\":{\"type\":\"string\",\"minLength\":1,"
           "\"maxLength\":" XSTR(BOUND_WEBSEARCH_REGION) ","
           "\"pattern\":\"^[A-Za-z0-9_-]+$\"},"
           "\"timeoutMs\":{\"type\":\"integer\",\"minimum\":100,"
           "\"maximum\":" XSTR(BOUND_WEB_TIMEOUT_MS_MAX) "},"
           "\"headers\":{\"type\":\"object\","
           "\"additionalProperties\":{\"type\":\"string\","
           "\"maxLength\":" XSTR(BOUND_WEBSEARCH_HEADER_LINE) "}}},"
           "\"required\":[\"endpoint\"],"
           "\"additionalProperties\":false}";
    /* clang-format on */
}

static const char *
ws_declarations(void *self)
{
    (void)self;
    /* clang-format off */
    return "[{\"name\":\"search\","
           "\"description\":\"Search the web. Returns up to maxResults "
           "results, each {title, url, snippet}.\","
           "\"parameters\":{\"type\":\"object\","
           "\"properties\":{"
           "\"query\":{\"type\":\"string\",\"minLength\":1,"
           "\"maxLength\":" XSTR(BOUND_WEBSEARCH_QUERY) ","
           "\"description\":\"what to search for\"},"
           "\"maxResults\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":" XSTR(BOUND_WEBSEARCH_RESULTS) "}},"
           "\"required\":[\"query\"],\"additionalProperties\":false},"
           "\"sideEffects\":false}]";
    /* clang-format on */
}

static const char *
ws_instructions(void *self)
{
    (void)self;
    return "WEB-SEARCH: for current events or facts this site does not "
           "hold, call action_web_search_search, and cite the urls of the "
           "results you use.";
}

static const char *
ws_auto_approved(void *self)
{
    (void)self;
    return "[\"search\"]";
}

static void
ws_free(struct websearch *w)
{
    if (w == NULL)
        return;
    free(w->endpoint);
    free(w->region);
    for (size_t i = 0; i < w->nheaders; i++)
        free(w->headers[i]);
    free(w->headers);
    free(w);
}

static void
ws_shutdown(void *self)
{
    ws_free(self);
}

/* An HTTP header name: a token of RFC 9110 (no ':' nor space). */
static bool
header_name_ok(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s)))
            return false;
    return true;
}

static int
load_headers(struct websearch *w, const json_t *hdrs, char *err, size_t errsize)
{
    const char *name;
    const json_t *v;

    if (hdrs == NULL)
        return 0;
    if (!json_is_object(hdrs)) {
        snprintf(err, errsize, "headers must be an object");
        return -1;
    }
    if (json_object_size(hdrs) > BOUND_WEBSEARCH_HEADERS) {
        snprintf(err, errsize, "at most %d headers", BOUND_WEBSEARCH_HEADERS);
        return -1;
    }
    w->headers = calloc(json_object_size(hdrs) + 1, sizeof(*w->headers));
    if (w->headers == NULL)
        goto oom;
    json_object_foreach(UNCONST(hdrs), name, v) {
        const char *val = json_string_value(v);
        size_t n;

        /* the name is safe to quote; a value may be a key, never quoted */
        if (!header_name_ok(name)) {
            snprintf(err, errsize, "headers: '%.64s' is not a header name",
                     name);
            return -1;
        }
        if (val == NULL || strpbrk(val, "\r\n") != NULL) {
            snprintf(err, errsize,
                     "headers: the value of '%.64s' must be one line of text",
                     name);
            return -1;
        }
        n = strlen(name) + strlen(val) + 3;
        if (n > BOUND_WEBSEARCH_HEADER_LINE) {
            snprintf(err, errsize, "headers: '%.64s' is too long", name);
            return -1;
        }
        w->headers[w->nheaders] = malloc(n);
        if (w->headers[w->nheaders] == NULL)
            goto oom;
        snprintf(w->headers[w->nheaders], n, "%s: %s", name, val);
        w->nheaders++;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* Integer member `key` of `cfg` in [lo, hi], or `def` when absent. */
static int
int_member(const json_t *cfg, const char *key, long lo, long hi, long def,
           long *out, char *err, size_t errsize)
{
    const json_t *v = json_object_get(cfg, key);

    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo ||
        json_integer_value(v) > hi) {
        snprintf(err, errsize, "%s must be an integer from %ld to %ld", key, lo,
                 hi);
        return -1;
    }
    *out = (long)json_integer_value(v);
    return 0;
}

/* The config's region into w->region, when given. 0, or -1 with err. */
static int
ws_region(struct websearch *w, const json_t *cfg, char *err, size_t errsize)
{
    const char *region = json_string_value(json_object_get(cfg, "region"));

    if (json_object_get(cfg, "region") == NULL)
        return 0;
    if (region == NULL || *region == '\0' ||
        strlen(region) > BOUND_WEBSEARCH_REGION ||
        strspn(region,
               "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
               "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(region)) {
        snprintf(err, errsize,
                 "region must be a language code such as en or de-CH");
        return -1;
    }
    if ((w->region = strdup(region)) == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    return 0;
}

static int
ws_initialize(const struct gemini_agent_init *init, void **self, char *err,
              size_t errsize)
{
    struct websearch *w = calloc(1, sizeof(*w));
    json_error_t jerr;
    json_t *cfg = NULL;
    const char *endpoint;
    long n;

    if (w == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    cfg = json_loadb(init->config, init->config_len, 0, &jerr);
    if (!json_is_object(cfg)) {
        snprintf(err, errsize, "the configuration must be an object");
        goto fail;
    }
    /* The host checked the schema; these checks keep the plugin safe
     * when called without it (tests, a future host). */
    endpoint = json_string_value(json_object_get(cfg, "endpoint"));
    if (endpoint == NULL || !webget_is_http_url(endpoint) ||
        strlen(endpoint) > BOUND_WEBSEARCH_ENDPOINT ||
        strpbrk(endpoint, " \t\r\n#") != NULL) {
        snprintf(err, errsize,
                 "endpoint must be an http:// or https:// URL (the search "
                 "address, e.g. https://searx.example.org/search)");
        goto fail;
    }
    if (outbound_from_config(cfg, &w->outbound, err, errsize) != 0)
        goto fail;
    w->endpoint = strdup(endpoint);
    if (w->endpoint == NULL)
        goto oom;
    if (int_member(cfg, "maxResults", 1, BOUND_WEBSEARCH_RESULTS,
                   WEBSEARCH_RESULTS_DEFAULT, &n, err, errsize) != 0)
        goto fail;
    w->max_results = (int)n;
    if (int_member(cfg, "safesearch", 0, 2, 1, &n, err, errsize) != 0)
        goto fail;
    w->safesearch = (int)n;
    if (int_member(cfg, "timeoutMs", 100, BOUND_WEB_TIMEOUT_MS_MAX,
                   WEBSEARCH_TIMEOUT_MS_DEFAULT, &w->timeout_ms, err,
                   errsize) != 0)
        goto fail;
    if (ws_region(w, cfg, err, errsize) != 0)
        goto fail;
    if (load_headers(w, json_object_get(cfg, "headers"), err, errsize) != 0)
        goto fail;
    json_decref(cfg);
    *self = w;
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
fail:
    json_decref(cfg);
    ws_free(w);
    return -1;
}

/* Append s[0..n) percent-encoded for a query string (RFC 3986 unreserved
 * characters as they are). */
static int
add_escaped(struct sbuf *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~') {
            if (sbuf_add(sb, &s[i], 1) != 0)
                return -1;
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            if (sbuf_add(sb, e, 3) != 0)
                return -1;
        }
    }
    return 0;
}

/* The request URL for `query` (malloc'd), or NULL when out of memory. */
static char *
websearch_url(const struct websearch *w, const char *query, size_t len)
{
    struct sbuf sb;

    sbuf_init(&sb, BOUND_WEBSEARCH_ENDPOINT + 3 * len + 256);
    if (sbuf_adds(&sb, w->endpoint) != 0 ||
        sbuf_adds(&sb, strchr(w->endpoint, '?') ? "&q=" : "?q=") != 0 ||
        add_escaped(&sb, query, len) != 0 ||
        sbuf_addf(&sb, "&format=json&safesearch=%d", w->safesearch) != 0 ||
        (w->region != NULL &&
         (sbuf_adds(&sb, "&language=") != 0 ||
          add_escaped(&sb, w->region, strlen(w->region)) != 0)) ||
        sbuf_adds(&sb, "&pageno=1") != 0) {
        sbuf_release(&sb);
        return NULL;
    }
    return sbuf_detach(&sb, NULL);
}

TESTABLE struct json_t *websearch_clean(const char *s, size_t max);

/*
 * s as one line: runs of whitespace and control characters become one
 * space, none at either end; longer than `max` bytes, cut at a character
 * boundary with "..." appended. A new jansson string, or NULL.
 */
TESTABLE json_t *
websearch_clean(const char *s, size_t max)
{
    char *buf = memlimit_malloc(max + 4);
    size_t n = 0;
    bool space = false, cut = false;
    json_t *j;

    if (buf == NULL)
        return NULL;
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= 0x20 || c == 0x7f) {
            space = n > 0;
            continue;
        }
        if (n + space + 1 > max) {
            cut = true;
            break;
        }
        if (space)
            buf[n++] = ' ';
        space = false;
        buf[n++] = (char)c;
    }
    if (cut) {
        n = utf8_cut(buf, n);
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    j = json_stringn(buf, n);
    free(buf);
    return j;
}

/* Read the endpoint's answer into {"results":[...]}: a new reference, or
 * NULL with msg set. */
static json_t *
websearch_results(const char *body, size_t len, int max, char *msg,
                  size_t msgsize)
{
    struct status_error jerr = {0};
    json_t *doc = jsonin_decode(body, len, BOUND_JSON_DEPTH, &jerr);
    json_t *out = NULL, *list;
    const json_t *results, *r;
    size_t i;

    results = json_object_get(doc, "results");
    if (doc == NULL || !json_is_array(results)) {
        snprintf(msg, msgsize,
                 doc == NULL ? "the search endpoint's answer is not JSON"
                             : "the search endpoint's answer has no results "
                               "list");
        json_decref(doc);
        return NULL;
    }
    list = json_array();
    out = json_pack("{s:o}", "results", list);
    if (out == NULL)
        goto oom;
    json_array_foreach(results, i, r) {
        const char *url = json_string_value(json_object_get(r, "url"));
        const char *title = json_string_value(json_object_get(r, "title"));
        const char *content = json_string_value(json_object_get(r, "content"));
        json_t *item;

        if ((int)json_array_size(list) >= max)
            break;
        /* a cut url is a wrong one; a javascript: or file: one is no
         * page to cite */
        if (url == NULL || strlen(url) > BOUND_WEBSEARCH_URL ||
            !webget_is_http_url(url) || strpbrk(url, " \t\r\n") != NULL)
            continue;
        item = json_pack(
            "{s:o*,s:s,s:o*}", "title",
            websearch_clean(title ? title : "", BOUND_WEBSEARCH_TITLE), "url",
            url, "snippet",
            websearch_clean(content ? content : "", BOUND_WEBSEARCH_SNIPPET));
        if (item == NULL || json_array_append_new(list, item) != 0)
            goto oom;
    }
    json_decref(doc);
    return out;
oom:
    snprintf(msg, msgsize, "out of memory");
    json_decref(out);
    json_decref(doc);
    return NULL;
}

/* Ask the search endpoint for `query`: its first `max` results as JSON
 * text (a new string), or NULL with the model's message in msg. */
static char *
ws_search(const struct websearch *w, const char *query, int max, char *msg,
          size_t size)
{
    struct webget_res res;
    char why[160];
    json_t *found;
    char *url, *text;

    url = websearch_url(w, query, strlen(query));
    if (url == NULL) {
        snprintf(msg, size, "web search failed: out of memory");
        return NULL;
    }
    if (webget_fetch(&(struct webget_req){url, (const char *const *)w->headers,
                                          w->timeout_ms,
                                          BOUND_WEBSEARCH_RESPONSE_BYTES, false,
                                          false, &w->outbound},
                     &res, why, sizeof(why)) != 0) {
        snprintf(msg, size, "web search failed: %s", why);
        free(url);
        return NULL;
    }
    free(url);
    if (res.status != 200) {
        snprintf(msg, size,
                 "web search failed: the search endpoint answered HTTP %ld",
                 res.status);
        webget_free(&res);
        return NULL;
    }
    found = websearch_results(res.body, res.len, max, why, sizeof(why));
    webget_free(&res);
    if (found == NULL) {
        snprintf(msg, size, "web search failed: %s", why);
        return NULL;
    }
    /* jsonout_dumps(), not json_dumps(): the text is free()d, and the
     * server's jansson allocator (memlimit.c) is not malloc */
    text = jsonout_dumps(found, APP_JSON_FLAGS, BOUND_ACTION_OUTPUT_BYTES,
                         NULL);
    json_decref(found);
    if (text == NULL)
        snprintf(msg, size, "web search failed: out of memory");
    return text;
}

static int
ws_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
           const char *args, size_t args_len, struct gemini_agent_out *out)
{
    const struct websearch *w = self;
    struct status_error jerr = {0};
    char msg[256];
    json_t *in = NULL;
    const char *query;
    char *text = NULL;
    int max, rc = GEMINI_AGENT_FAILED;

    if (strcmp(tool, "search") != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "no such tool");
    in = jsonin_decode(args, args_len, BOUND_JSON_DEPTH, &jerr);
    query = json_string_value(json_object_get(in, "query"));
    if (query == NULL || *query == '\0') {
        json_decref(in);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "'query' must be a non-empty string");
    }
    max = w->max_results;
    if (json_is_integer(json_object_get(in, "maxResults"))) {
        json_int_t m = json_integer_value(json_object_get(in, "maxResults"));
        if (m >= 1 && m < max)
            max = (int)m; /* the model may ask for fewer, never for more */
    }
    text = ws_search(w, query, max, msg, sizeof(msg));
    if (text == NULL)
        answer_fail(ctx, out, rc, "%s", msg);
    else
        rc = gemini_agent_reply(ctx, out, text, strlen(text));
    free(text);
    json_decref(in);
    return rc;
}

static const struct gemini_agent_plugin web_search_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "web_search",
    .declarations = ws_declarations,
    .execute = ws_execute,
    .initialize = ws_initialize,
    .shutdown = ws_shutdown,
    .system_instructions = ws_instructions,
    .auto_approved_tools = ws_auto_approved,
    .config_schema = ws_schema,
};

const struct gemini_agent_plugin *
builtin_web_search(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &web_search_plugin : NULL;
}
