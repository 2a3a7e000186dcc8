/*
 * references.c - the built-in plugin `references` (references.h).
 *
 *     plugins:
 *       config:
 *         references:
 *           sources:
 *             faq:  {file: docs/faq.md, description: Questions we are asked}
 *             api:  {url: https://example.org/api.txt}
 *           maxBytes: 65536      # per source
 *           cacheSeconds: 300    # URL sources
 *
 * File sources are read once, in initialize() (a missing one fails it,
 * naming the source), so workers forked afterwards share the text and
 * never touch the disk for it. URL sources are fetched the first time a
 * worker needs one and kept for cacheSeconds in that process; each has
 * its own mutex, held across the fetch, so that concurrent requests for
 * one source wait for one fetch instead of each making their own, while
 * the other sources stay free. A failed refetch serves the text already
 * held for another cacheSeconds (a stale page beats none, and a dead
 * host is not waited for on every request); with none, the tool fails
 * with the reason. Content longer than maxBytes is cut at a character boundary;
 * bytes that are not UTF-8 become '?'. A URL is fetched only where the
 * outbound policy allows (plugins/outbound.h), each redirect hop checked.
 *
 * The loading process initialises and shuts down; only workers execute,
 * and no lock is held while the loading process forks them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/references.h"
#include "plugins/answer.h"
#include "plugins/outbound.h"
#include "plugins/webget.h"
#include "core/bounds.h"
#include "plugins/bounds.h"
#include "registry/bounds.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/utf8.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XSTR_(x) #x
#define XSTR(x)  XSTR_(x)

struct ref_source {
    char *name;
    char *description;    /* or NULL */
    char *url;            /* a URL source, or NULL: a file source */
    pthread_mutex_t lock; /* a URL source's: content, len, cut, fetched */
    char *content;        /* NULL until a URL source is first fetched */
    size_t len;
    bool cut;        /* longer than maxBytes */
    long fetched_ms; /* monotime_ms() of the fetch */
};

struct references {
    struct ref_source *src; /* sorted by name */
    size_t n;
    size_t max_bytes;
    long cache_ms;
    long timeout_ms;
    char *declarations;
    char *instructions;
    struct outbound outbound; /* where the URL sources may be fetched from */
};

static const char *
refs_schema(void)
{
    /* clang-format off */
    return "{\"type\":\"object\","
           "\"properties\":{"
           "\"sources\":{\"type\":\"object\","
           "\"additionalProperties\":{\"type\":\"object\","
           "\"properties\":{"
           "\"file\":{\"type\":\"string\",\"minLength\":1,"
           "\"maxLength\":" XSTR(BOUND_REFERENCES_LOCATION) "},"
           "\"url\":{\"type\":\"string\","
           "\"maxLength\":" XSTR(BOUND_REFERENCES_LOCATION) ","
           "\"pattern\":\"^https?://[^/?#]\"},"
           "\"description\":{\"type\":\"string\","
           "\"maxLength\":" XSTR(BOUND_REFERENCES_DESCRIPTION) "}},"
           "\"additionalProperties\":false,"
           "\"anyOf\":[{\"required\":[\"file\"]},{\"required\":[\"url\"]}]}},"
           "\"maxBytes\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":" XSTR(BOUND_REFERENCES_MAX_BYTES) "},"
           "\"cacheSeconds\":{\"type\":\"integer\",\"minimum\":0,"
           "\"maximum\":" XSTR(BOUND_REFERENCES_CACHE_SECONDS) "},"
           "\"timeoutMs\":{\"type\":\"integer\",\"minimum\":100,"
           "\"maximum\":" XSTR(BOUND_WEB_TIMEOUT_MS_MAX) "}},"
           "\"required\":[\"sources\"],"
           "\"additionalProperties\":false}";
    /* clang-format on */
}

static const char *
refs_declarations(void *self)
{
    const struct references *r = self;
    return r != NULL ? r->declarations : "[]";
}

static const char *
refs_instructions(void *self)
{
    const struct references *r = self;
    return r != NULL ? r->instructions : NULL;
}

static const char *
refs_auto_approved(void *self)
{
    (void)self;
    return "[\"get\"]";
}

static void
refs_free(struct references *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        struct ref_source *s = &r->src[i];
        if (s->url != NULL)
            pthread_mutex_destroy(&s->lock);
        free(s->name);
        free(s->description);
        free(s->url);
        free(s->content);
    }
    free(r->src);
    free(r->declarations);
    free(r->instructions);
    free(r);
}

static void
refs_shutdown(void *self)
{
    refs_free(self);
}

static bool
name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool
name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > BOUND_NAME_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i]))
            return false;
    return true;
}

/*
 * Keep at most `max` bytes of text[0..*len) as text: a cut falls on a
 * character boundary; NUL and bytes that start no well-formed UTF-8
 * sequence become '?'. In place; sets *len and returns whether it cut.
 */
static bool
as_text(char *text, size_t *len, size_t max)
{
    bool cut = false;
    size_t n = *len;

    if (n > max) {
        n = utf8_cut(text, max);
        cut = true;
    }
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next((const unsigned char *)text + i, n - i, &cp);
        if (cp == UTF8_BAD || cp == 0)
            text[i] = '?';
        i += k;
    }
    text[n] = '\0';
    *len = n;
    return cut;
}

/* Read the file source at `path` (at most max_bytes of it). */
static int
read_file(struct ref_source *s, const char *path, size_t max_bytes, char *err,
          size_t errsize)
{
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL) {
        snprintf(err, errsize, "source '%s': cannot read %s: %s", s->name, path,
                 strerror(errno));
        return -1;
    }
    /* one byte more than kept tells a cut from a file of exactly max */
    s->content = malloc(max_bytes + 2);
    if (s->content == NULL) {
        fclose(f);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    n = fread(s->content, 1, max_bytes + 1, f);
    if (ferror(f)) {
        snprintf(err, errsize, "source '%s': cannot read %s: %s", s->name, path,
                 strerror(errno));
        fclose(f);
        return -1;
    }
    fclose(f);
    s->cut = as_text(s->content, &n, max_bytes);
    s->len = n;
    return 0;
}

static int
source_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ref_source *)a)->name,
                  ((const struct ref_source *)b)->name);
}

static int
load_source(struct references *r, const struct gemini_agent_init *init,
            const char *name, const json_t *spec, char *err, size_t errsize)
{
    struct ref_source *s = &r->src[r->n];
    const char *file = json_string_value(json_object_get(spec, "file"));
    const char *url = json_string_value(json_object_get(spec, "url"));
    const char *desc = json_string_value(json_object_get(spec, "description"));

    if (!name_ok(name)) {
        snprintf(err, errsize,
                 "source '%.64s': a name is letters, digits, '_' or '-' "
                 "(at most %d)",
                 name, BOUND_NAME_LEN);
        return -1;
    }
    if ((file == NULL) == (url == NULL)) {
        snprintf(err, errsize, "source '%s': give either file or url", name);
        return -1;
    }
    if (url != NULL &&
        (!webget_is_http_url(url) || strpbrk(url, " \t\r\n") != NULL)) {
        snprintf(err, errsize, "source '%s': url must be http:// or https://",
                 name);
        return -1;
    }
    if (desc != NULL && strlen(desc) > BOUND_REFERENCES_DESCRIPTION) {
        snprintf(err, errsize, "source '%s': description is too long", name);
        return -1;
    }
    s->name = strdup(name);
    s->description = desc != NULL ? strdup(desc) : NULL;
    if (s->name == NULL || (desc != NULL && s->description == NULL))
        goto oom;
    r->n++; /* from here refs_free() frees it */
    if (url != NULL) {
        s->url = strdup(url);
        if (s->url == NULL)
            goto oom;
        if (pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s->url);
            s->url = NULL;
            goto oom;
        }
        return 0;
    }
    if (file[0] == '/') {
        return read_file(s, file, r->max_bytes, err, errsize);
    } else {
        const char *dir = init->config_dir ? init->config_dir : ".";
        size_t n = strlen(dir) + strlen(file) + 2;
        char *path = malloc(n);
        int rc;
        if (path == NULL)
            goto oom;
        snprintf(path, n, "%s/%s", dir, file);
        rc = read_file(s, path, r->max_bytes, err, errsize);
        free(path);
        return rc;
    }
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* The tool's declaration (its enum the names) and the instruction that
 * lists what there is to read. */
static int
build_texts(struct references *r)
{
    json_t *names = json_array(), *decl;
    struct sbuf sb;

    for (size_t i = 0; i < r->n; i++)
        if (json_array_append_new(names, json_string(r->src[i].name)) != 0)
            break;
    decl =
        json_pack("[{s:s,s:s,s:{s:s,s:{s:{s:s,s:o}},s:[s],s:b},s:b}]", "name",
                  "get", "description",
                  "Read one of the site's reference documents by name; returns "
                  "{name, content}.",
                  "parameters", "type", "object", "properties", "name", "type",
                  "string", "enum", names, "required", "name",
                  "additionalProperties", 0, "sideEffects", 0);
    if (decl == NULL)
        return -1;
    r->declarations = jsonout_dumps(decl, APP_JSON_FLAGS, JSONOUT_UNBOUNDED,
                                    NULL);
    json_decref(decl);
    if (r->declarations == NULL)
        return -1;
    sbuf_init(&sb, BOUND_SO_TEXT_BYTES);
    if (sbuf_adds(&sb, "REFERENCES: documents you can read with "
                       "action_references_get when a question needs them "
                       "(the user may also attach one by writing @name):") != 0)
        goto fail;
    for (size_t i = 0; i < r->n; i++) {
        const struct ref_source *s = &r->src[i];
        if (sbuf_addf(&sb, "%s %s%s%s", i ? ";" : "", s->name,
                      s->description ? " - " : "",
                      s->description ? s->description : "") != 0)
            goto fail;
    }
    if (sbuf_adds(&sb, ".") != 0)
        goto fail;
    r->instructions = sbuf_detach(&sb, NULL);
    return r->instructions != NULL ? 0 : -1;
fail:
    sbuf_release(&sb);
    return -1;
}

/* maxBytes, cacheSeconds and timeoutMs of the config into r, when given.
 * 0, or -1 with err set. */
static int
refs_limits(struct references *r, const json_t *cfg, char *err, size_t errsize)
{
    const json_t *v;

    /* the host checked the schema; the ranges again for a bare call */
    if ((v = json_object_get(cfg, "maxBytes")) != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > BOUND_REFERENCES_MAX_BYTES) {
            snprintf(err, errsize, "maxBytes must be 1 to %d",
                     BOUND_REFERENCES_MAX_BYTES);
            return -1;
        }
        r->max_bytes = (size_t)json_integer_value(v);
    }
    if ((v = json_object_get(cfg, "cacheSeconds")) != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > BOUND_REFERENCES_CACHE_SECONDS) {
            snprintf(err, errsize, "cacheSeconds must be 0 to %d",
                     BOUND_REFERENCES_CACHE_SECONDS);
            return -1;
        }
        r->cache_ms = (long)json_integer_value(v) * 1000L;
    }
    if ((v = json_object_get(cfg, "timeoutMs")) != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) < 100 ||
            json_integer_value(v) > BOUND_WEB_TIMEOUT_MS_MAX) {
            snprintf(err, errsize, "timeoutMs must be 100 to %d",
                     BOUND_WEB_TIMEOUT_MS_MAX);
            return -1;
        }
        r->timeout_ms = (long)json_integer_value(v);
    }
    return 0;
}

static int
refs_initialize(const struct gemini_agent_init *init, void **self, char *err,
                size_t errsize)
{
    struct references *r = calloc(1, sizeof(*r));
    json_error_t jerr;
    json_t *cfg;
    const json_t *sources, *spec;
    const char *name;

    if (r == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    r->max_bytes = REFERENCES_MAX_BYTES_DEFAULT;
    r->cache_ms = REFERENCES_CACHE_SECONDS_DEFAULT * 1000L;
    r->timeout_ms = REFERENCES_TIMEOUT_MS_DEFAULT;
    cfg = json_loadb(init->config, init->config_len, 0, &jerr);
    sources = json_object_get(cfg, "sources");
    if (!json_is_object(sources) || json_object_size(sources) == 0) {
        snprintf(err, errsize, "sources must name at least one source");
        goto fail;
    }
    if (json_object_size(sources) > BOUND_REFERENCES_SOURCES) {
        snprintf(err, errsize, "at most %d sources", BOUND_REFERENCES_SOURCES);
        goto fail;
    }
    if (refs_limits(r, cfg, err, errsize) != 0)
        goto fail;
    if (outbound_from_config(cfg, &r->outbound, err, errsize) != 0)
        goto fail;
    r->src = calloc(json_object_size(sources), sizeof(*r->src));
    if (r->src == NULL) {
        snprintf(err, errsize, "out of memory");
        goto fail;
    }
    json_object_foreach(UNCONST(sources), name, spec) {
        if (!json_is_object(spec)) {
            snprintf(err, errsize, "source '%.64s' must be an object", name);
            goto fail;
        }
        if (load_source(r, init, name, spec, err, errsize) != 0)
            goto fail;
    }
    qsort(r->src, r->n, sizeof(*r->src), source_cmp);
    if (build_texts(r) != 0) {
        snprintf(err, errsize, "out of memory");
        goto fail;
    }
    json_decref(cfg);
    *self = r;
    return 0;
fail:
    json_decref(cfg);
    refs_free(r);
    return -1;
}

static struct ref_source *
find_source(const struct references *r, const char *name, size_t len)
{
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->src[i].name) == len &&
            memcmp(r->src[i].name, name, len) == 0)
            return &r->src[i];
    return NULL;
}

/*
 * Call `use` with the source's text: a file's at once, a URL's from the
 * cache or fetched now (under the source's lock, held until `use`
 * returns). Returns use()'s answer, or -1 with a reason in msg.
 */
typedef int (*use_fn)(void *arg, const char *text, size_t len, bool cut);

static int
with_text(const struct references *r, struct ref_source *s, use_fn use,
          void *arg, char *msg, size_t msgsize)
{
    struct webget_res res;
    char why[160];
    long now;
    int rc;

    if (s->url == NULL)
        return use(arg, s->content, s->len, s->cut);
    pthread_mutex_lock(&s->lock);
    now = monotime_ms();
    if (s->content == NULL || now - s->fetched_ms >= r->cache_ms) {
        /* redirects followed: each hop's address is checked again */
        if (webget_fetch(&(struct webget_req){s->url, NULL, r->timeout_ms,
                                              r->max_bytes + 1, true, true,
                                              &r->outbound},
                         &res, why, sizeof(why)) != 0) {
            snprintf(msg, msgsize, "could not be fetched: %s", why);
        } else if (res.status != 200) {
            snprintf(msg, msgsize, "could not be fetched: HTTP %ld",
                     res.status);
            webget_free(&res);
        } else {
            free(s->content);
            s->content = res.body;
            s->len = res.len;
            s->cut = as_text(s->content, &s->len, r->max_bytes);
            s->fetched_ms = now;
            msg[0] = '\0';
        }
        if (s->content == NULL) {
            pthread_mutex_unlock(&s->lock);
            return -1;
        }
        /* a failed refetch: the stale text serves another cacheSeconds
         * rather than every request waiting for a dead host */
        s->fetched_ms = now;
    }
    rc = use(arg, s->content, s->len, s->cut);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

struct get_answer {
    const char *name;
    char *json; /* malloc'd by jansson */
};

static int
get_use(void *arg, const char *text, size_t len, bool cut)
{
    struct get_answer *a = arg;
    json_t *o = json_pack("{s:s,s:s%}", "name", a->name, "content", text, len);

    if (o != NULL && cut &&
        json_object_set_new(o, "truncated", json_true()) != 0) {
        json_decref(o);
        o = NULL;
    }
    /* jsonout_dumps(), not json_dumps(): the text is free()d, and the
     * server's jansson allocator (memlimit.c) is not malloc */
    a->json = o != NULL ? jsonout_dumps(o, APP_JSON_FLAGS,
                                        BOUND_ACTION_OUTPUT_BYTES, NULL)
                        : NULL;
    json_decref(o);
    return a->json != NULL ? 0 : -1;
}

static int
refs_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
             const char *args, size_t args_len, struct gemini_agent_out *out)
{
    const struct references *r = self;
    struct status_error jerr = {0};
    struct get_answer a = {NULL, NULL};
    struct ref_source *s;
    json_t *in;
    char why[200] = "out of memory";
    int rc;

    if (strcmp(tool, "get") != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "no such tool");
    in = jsonin_decode(args, args_len, BOUND_JSON_DEPTH, &jerr);
    a.name = json_string_value(json_object_get(in, "name"));
    s = a.name ? find_source(r, a.name, strlen(a.name)) : NULL;
    if (s == NULL) {
        json_decref(in);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "no reference by that name");
    }
    if (with_text(r, s, get_use, &a, why, sizeof(why)) != 0) {
        json_decref(in);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "reference '%s' %s",
                           s->name, why);
    }
    json_decref(in);
    rc = gemini_agent_reply(ctx, out, a.json, strlen(a.json));
    free(a.json);
    return rc;
}

/* --- @name in a prompt ---------------------------------------------------- */

struct enrich {
    struct sbuf *prompt;
    const char *name;
    size_t limit; /* the prompt's length it may grow to */
    bool skipped;
};

static int
enrich_use(void *arg, const char *text, size_t len, bool cut)
{
    struct enrich *e = arg;
    size_t start = e->prompt->len;

    (void)cut;
    if (sbuf_addf(e->prompt, "\n\n[reference %s]\n", e->name) != 0 ||
        sbuf_add(e->prompt, text, len) != 0 ||
        sbuf_addf(e->prompt, "\n[/reference %s]", e->name) != 0 ||
        e->prompt->len > e->limit) {
        /* too much for one prompt: this one stays out, the rest may fit */
        sbuf_truncate(e->prompt, start);
        e->skipped = true;
    }
    return 0;
}

/* A source that could not be read: "[reference NAME not read: WHY]" in
 * the prompt where it fits (a message for the visitor, never the URL). */
static void
note_failure(struct enrich *e, const char *why)
{
    size_t start = e->prompt->len;

    if (sbuf_addf(e->prompt, "\n\n[reference %s not read: %s]", e->name, why) !=
            0 ||
        e->prompt->len > e->limit)
        sbuf_truncate(e->prompt, start);
}

/* The next @name of prompt[*i..len) that names a source: the source, with
 * *i past it; NULL at the end. '@' counts at the start or after a
 * character that cannot be in a name or an address ("bob@faq" is mail). */
static struct ref_source *
next_mention(const struct references *r, const char *p, size_t len, size_t *i)
{
    while (*i < len) {
        size_t at = *i, end;
        *i = at + 1;
        if (p[at] != '@' ||
            (at > 0 && (name_char(p[at - 1]) || p[at - 1] == '.')))
            continue;
        for (end = at + 1; end < len && name_char(p[end]); end++)
            ;
        *i = end;
        struct ref_source *s = find_source(r, p + at + 1, end - at - 1);
        if (s != NULL)
            return s;
    }
    return NULL;
}

static int
refs_enrich(void *self, const struct gemini_agent_ctx *ctx, const char *prompt,
            size_t prompt_len, struct gemini_agent_out *new_prompt,
            struct gemini_agent_out *metadata)
{
    const struct references *r = self;
    bool seen[BOUND_REFERENCES_SOURCES] = {false};
    json_t *meta = NULL, *used, *skipped, *failed;
    struct sbuf sb;
    struct ref_source *s;
    char *text = NULL;
    size_t i = 0;
    int rc = GEMINI_AGENT_FAILED;

    /* most prompts name nothing: find out before allocating anything */
    if (r == NULL || memchr(prompt, '@', prompt_len) == NULL)
        return GEMINI_AGENT_OK;
    if (next_mention(r, prompt, prompt_len, &i) == NULL)
        return GEMINI_AGENT_OK; /* nothing set: the prompt goes on as is */
    used = json_array();
    skipped = json_array();
    failed = json_array();
    meta = json_pack("{s:o}", "references", used);
    sbuf_init(&sb, prompt_len + BOUND_REFERENCES_PROMPT_BYTES + 1);
    if (meta == NULL || skipped == NULL || failed == NULL ||
        sbuf_add(&sb, prompt, prompt_len) != 0)
        goto out;
    i = 0;
    while ((s = next_mention(r, prompt, prompt_len, &i)) != NULL) {
        size_t k = (size_t)(s - r->src);
        struct enrich e = {&sb, s->name,
                           prompt_len + BOUND_REFERENCES_PROMPT_BYTES, false};
        char why[200];
        if (seen[k])
            continue;
        seen[k] = true;
        /* a source that cannot be fetched now is not in the prompt, but
         * why is: the model can tell the visitor (or ask with the tool) */
        if (with_text(r, s, enrich_use, &e, why, sizeof(why)) != 0) {
            if (json_array_append_new(failed, json_string(s->name)) != 0)
                goto out;
            note_failure(&e, why);
            continue;
        }
        if (json_array_append_new(e.skipped ? skipped : used,
                                  json_string(s->name)) != 0)
            goto out;
    }
    if ((json_array_size(skipped) > 0 &&
         json_object_set(meta, "skipped", skipped) != 0) ||
        (json_array_size(failed) > 0 &&
         json_object_set(meta, "failed", failed) != 0))
        goto out;
    text = jsonout_dumps(meta, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL);
    if (text == NULL)
        goto out;
    if (sb.len > prompt_len) {
        rc = gemini_agent_reply(ctx, new_prompt, sb.buf, sb.len);
        if (rc != GEMINI_AGENT_OK)
            goto out;
    }
    rc = gemini_agent_reply(ctx, metadata, text, strlen(text));
out:
    free(text);
    sbuf_release(&sb);
    json_decref(meta);
    json_decref(skipped);
    json_decref(failed);
    return rc;
}

static const struct gemini_agent_plugin references_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "references",
    .declarations = refs_declarations,
    .execute = refs_execute,
    .initialize = refs_initialize,
    .shutdown = refs_shutdown,
    .system_instructions = refs_instructions,
    .auto_approved_tools = refs_auto_approved,
    .enrich_prompt = refs_enrich,
    .config_schema = refs_schema,
};

const struct gemini_agent_plugin *
builtin_references(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &references_plugin : NULL;
}
