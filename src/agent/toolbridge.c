/*
 * toolbridge.c - function declarations for Gemini, and name checks.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/toolbridge.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "agent/bounds.h"
#include "core/jscan.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "registry/plugin.h"
#include "core/status.h"
#include "core/utf8.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool
name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
           c == '-';
}

/* Page tool names (WebMCP's rule is looser than Gemini's): 1 to 64 of
 * Gemini's name characters, in any order. */
static bool
page_name_ok(const char *s)
{
    size_t n = 0;

    while (s[n] != '\0' && name_char(s[n]))
        n++;
    return n > 0 && s[n] == '\0' && n <= 64;
}

int
toolbridge_fn_name(const char *page_name, char *out, size_t size)
{
    const char *prefix = toolbridge_valid_name(page_name)
                             ? ""
                             : TOOLBRIDGE_PAGE_PREFIX;
    size_t p = strlen(prefix), n;

    if (page_name == NULL)
        return -1;
    n = strlen(page_name);
    /* not snprintf: this runs for every page tool of every request */
    if (p + n >= size)
        return -1;
    memcpy(out, prefix, p);
    memcpy(out + p, page_name, n + 1);
    return toolbridge_valid_name(out) ? 0 : -1;
}

bool
toolbridge_valid_name(const char *s)
{
    size_t n;

    if (s == NULL ||
        !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (n = 1; s[n] != '\0'; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
              c == '-'))
            return false;
    }
    return n <= 64;
}

json_t *
toolbridge_declaration(const char *name, const char *description,
                       json_t *schema)
{
    json_t *props = schema ? json_object_get(schema, "properties") : NULL;
    /* Some endpoints reject an OBJECT with empty properties: no schema. */
    bool has_params = json_is_object(props) && json_object_size(props) > 0;

    return json_pack("{s:s, s:s, s:O*}", "name", name, "description",
                     description ? description : "", "parametersJsonSchema",
                     has_params ? schema : NULL);
}

/* Are page tools `a` and `b` declared under the same function name?
 * toolbridge_fn_name() of each, without writing either: the same name,
 * or one is the prefixed form of the other, which needs the prefix. */
static bool
declared_alike(const char *a, const char *b)
{
    const size_t n = sizeof(TOOLBRIDGE_PAGE_PREFIX) - 1;

    if (strcmp(a, b) == 0)
        return true;
    if (strncmp(a, TOOLBRIDGE_PAGE_PREFIX, n) == 0 && strcmp(a + n, b) == 0)
        return !toolbridge_valid_name(b);
    if (strncmp(b, TOOLBRIDGE_PAGE_PREFIX, n) == 0 && strcmp(b + n, a) == 0)
        return !toolbridge_valid_name(a);
    return false;
}

json_t *
toolbridge_action_declarations(const struct plugin_set *actions,
                               bool needs_user)
{
    json_t *decls = json_array();

    for (size_t i = 0; decls != NULL && i < actions->count; i++) {
        const struct plugin_action *act = &actions->actions[i];
        if (act->exposed && act->needs_user == needs_user &&
            json_array_append_new(
                decls, toolbridge_declaration(act->fn_name, act->description,
                                              act->input_schema)) != 0) {
            json_decref(decls);
            return NULL;
        }
    }
    return decls;
}

/* A page tool's description as declared: control characters (a `\r`
 * or `\n` could pose as structure) become spaces, and it is cut to
 * BOUND_TOOL_DESCRIPTION bytes at a character boundary. An arena string,
 * or NULL when out of memory. */
static const char *
page_description(struct arena *a, const char *desc)
{
    size_t n = desc ? strlen(desc) : 0;
    char *out;

    if (n > BOUND_TOOL_DESCRIPTION)
        n = utf8_cut(desc, BOUND_TOOL_DESCRIPTION);
    out = arena_strndup(a, desc ? desc : "", n);
    for (size_t i = 0; out != NULL && i < n; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            out[i] = ' ';
    return out;
}

/* --- the page's tools, read from the scanned body ------------------------- */

/* The string at node i (decoded, in the arena), or NULL when it is none. */
static const char *
string_at(const struct jscan_doc *d, size_t i, struct arena *a)
{
    return i != JSCAN_NONE && jscan_type(d, i) == JSCAN_STRING
               ? jscan_string(d, i, a, NULL)
               : NULL;
}

/* The first member of object `obj` not among `known` (decoded, in the
 * arena), or NULL; `*oom` when it could not be decoded. */
static const char *
unknown_member(const struct jscan_doc *d, size_t obj, const char *const *known,
               struct arena *a, bool *oom)
{
    for (size_t k = jscan_child(d, obj); k != JSCAN_NONE;
         k = jscan_next(d, obj, k + 1)) {
        const char *key;
        size_t i = 0;

        while (known[i] != NULL && !jscan_string_is(d, k, known[i]))
            i++;
        if (known[i] != NULL)
            continue;
        key = jscan_string(d, k, a, NULL);
        *oom = key == NULL;
        return key;
    }
    return NULL;
}

/* One page tool's rules (see toolbridge_check()); fills `t`. */
static int
scan_tool(const struct jscan_doc *d, size_t node, size_t i,
          struct toolbridge_tool *t, struct arena *a, struct status_error *err)
{
    static const char *const tool_members[] = {"name", "description",
                                               "inputSchema", "category", NULL};
    size_t desc = jscan_member(d, node, "description");
    size_t cat = jscan_member(d, node, "category");
    size_t schema = jscan_member(d, node, "inputSchema");
    const char *unknown;
    bool oom = false;

    t->node = node;
    t->name = string_at(d, jscan_member(d, node, "name"), a);
    if (jscan_type(d, node) != JSCAN_OBJECT)
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions[%zu] must be an object", i);
    unknown = unknown_member(d, node, tool_members, a, &oom);
    if (oom)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (unknown != NULL)
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions[%zu]: unknown member '%s' "
                          "(expected name, description, inputSchema, "
                          "category)",
                          i, unknown);
    if (t->name == NULL || !page_name_ok(t->name) ||
        toolbridge_fn_name(t->name, t->fn, sizeof(t->fn)) != 0)
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions[%zu]: the name must be 1 to "
                          "64 of A-Z a-z 0-9 _ . : - (62 when it starts "
                          "with a digit, '.', ':' or '-')",
                          i);
    if (plugin_is_fn_name(t->name))
        return status_set(err, ST_TOOL_CONFLICT,
                          "toolDefinitions[%zu]: '%s' is named like a "
                          "server action; names starting with '%s' are "
                          "reserved",
                          i, t->name, PLUGIN_FN_PREFIX);
    if ((desc != JSCAN_NONE && jscan_type(d, desc) != JSCAN_STRING) ||
        (cat != JSCAN_NONE && jscan_type(d, cat) != JSCAN_STRING))
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions[%zu]: description and category "
                          "must be strings",
                          i);
    if (schema != JSCAN_NONE) {
        size_t type = jscan_member(d, schema, "type");
        size_t props = jscan_member(d, schema, "properties");
        const char *tname = string_at(d, type, a);
        if (jscan_type(d, schema) != JSCAN_OBJECT || tname == NULL ||
            strcmp(tname, "object") != 0 ||
            (props != JSCAN_NONE && jscan_type(d, props) != JSCAN_OBJECT))
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: inputSchema must be "
                              "an object schema (type \"object\")",
                              i);
        /* Some endpoints reject an OBJECT with empty properties: no
         * schema (as toolbridge_declaration()). */
        if (props != JSCAN_NONE && jscan_count(d, props) > 0)
            t->schema = schema;
    }
    t->description = desc;
    if (cat != JSCAN_NONE && (t->category = string_at(d, cat, a)) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return 0;
}

int
toolbridge_scan(const struct jscan_doc *d, size_t node, long max_tools,
                struct arena *a, struct toolbridge_page *out,
                struct status_error *err)
{
    size_t i, n, k;

    memset(out, 0, sizeof(*out));
    out->doc = d;
    if (node == JSCAN_NONE)
        return 0;
    if (jscan_type(d, node) != JSCAN_ARRAY)
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions must be an array");
    n = jscan_count(d, node);
    if (n > (size_t)max_tools)
        return status_set(err, ST_TOO_LARGE, "%zu page tools; the limit is %ld",
                          n, max_tools);
    out->tools = arena_calloc(a, n ? n : 1, sizeof(*out->tools));
    if (out->tools == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    for (i = 0, k = jscan_child(d, node); k != JSCAN_NONE;
         i++, k = jscan_next(d, node, k)) {
        struct toolbridge_tool *t = &out->tools[i];

        if (scan_tool(d, k, i, t, a, err) != 0)
            return -1;
        /* Quadratic, but bounded by maxTools (128 by default), and each
         * pair costs a string compare. Names are compared as declared:
         * "1x" is declared as "p_1x", so a tool named "p_1x" beside it is
         * a conflict. */
        for (size_t j = 0; j < i; j++) {
            const char *other = out->tools[j].name;
            if (!declared_alike(other, t->name))
                continue;
            if (strcmp(other, t->name) == 0)
                return status_set(err, ST_BAD_REQUEST,
                                  "toolDefinitions[%zu]: the name '%s' is "
                                  "used twice",
                                  i, t->name);
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: '%s' and '%s' would "
                              "both be declared as the function '%s'",
                              i, other, t->name, t->fn);
        }
        out->count = i + 1;
    }
    return 0;
}

int
toolbridge_page_decls(const struct toolbridge_page *pt, struct arena *a,
                      const char **text, size_t *len, struct status_error *err)
{
    const struct jscan_doc *d = pt->doc;
    struct sbuf sb;
    int rc = 0;

    *text = "";
    *len = 0;
    if (pt->count == 0)
        return 0;
    sbuf_init(&sb, SIZE_MAX / 2);
    for (size_t i = 0; rc == 0 && i < pt->count; i++) {
        const struct toolbridge_tool *t = &pt->tools[i];
        const char *desc = page_description(a, string_at(d, t->description, a));

        if (desc == NULL) {
            rc = -1;
            break;
        }
        /* toolbridge_declaration()'s members, in its order */
        rc |= sbuf_adds(&sb, i ? ",{\"name\":" : "{\"name\":");
        rc |= jsonout_string(&sb, t->fn, strlen(t->fn));
        rc |= sbuf_adds(&sb, ",\"description\":");
        rc |= jsonout_string(&sb, desc, strlen(desc));
        if (t->schema != JSCAN_NONE) {
            rc |= sbuf_adds(&sb, ",\"parametersJsonSchema\":");
            rc |= jscan_write(d, t->schema, &sb);
        }
        rc |= sbuf_putc(&sb, '}');
    }
    if (rc == 0) {
        char *buf = sbuf_detach(&sb, len);
        if (buf != NULL && arena_defer(a, free, buf) == 0) {
            *text = buf;
            return 0;
        }
    }
    sbuf_release(&sb);
    *text = "";
    *len = 0;
    return status_set(err, ST_NO_MEMORY, "out of memory");
}

const struct toolbridge_tool *
toolbridge_page_find(const struct toolbridge_page *pt, const char *fn_name)
{
    for (size_t i = 0; i < pt->count; i++)
        if (strcmp(pt->tools[i].fn, fn_name) == 0)
            return &pt->tools[i];
    return NULL;
}

/* --- the same for jansson values ------------------------------------------- */

/* The tape of [v] (written and scanned again), for the functions above:
 * one implementation of the rules, whichever way the tools come. `v` is
 * node 1 (the root, node 0, doubles as JSCAN_NONE). */
static int
scan_value(const json_t *v, struct arena *a, struct jscan_doc *d,
           struct status_error *err)
{
    struct sbuf sb;
    char *text;
    size_t len;
    int rc = 0;

    sbuf_init(&sb, SIZE_MAX / 2);
    rc |= sbuf_putc(&sb, '[');
    rc |= jsonout_write(v, &sb);
    rc |= sbuf_putc(&sb, ']');
    text = rc == 0 ? sbuf_detach(&sb, &len) : NULL;
    sbuf_release(&sb);
    if (text == NULL || arena_defer(a, free, text) != 0)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return jscan_parse(text, len, 0, BOUND_JSCAN_DEPTH, a, d, err);
}

int
toolbridge_check(const json_t *tool_defs, long max_tools,
                 struct status_error *err)
{
    struct toolbridge_page pt;
    struct jscan_doc d;
    struct arena a;
    int rc;

    if (tool_defs == NULL)
        return 0;
    arena_init(&a);
    rc = scan_value(tool_defs, &a, &d, err) != 0
             ? -1
             : toolbridge_scan(&d, 1, max_tools, &a, &pt, err);
    arena_release(&a);
    return rc;
}

int
toolbridge_tools(const json_t *action_decls, const json_t *tool_defs,
                 struct arena *a, json_t **tools, struct status_error *err)
{
    struct toolbridge_page pt;
    struct jscan_doc d;
    const char *text;
    char *list;
    size_t len;
    json_t *decls = NULL;

    *tools = NULL;
    memset(&pt, 0, sizeof(pt));
    if (tool_defs != NULL &&
        (scan_value(tool_defs, a, &d, err) != 0 ||
         toolbridge_scan(&d, 1, LONG_MAX, a, &pt, err) != 0))
        return -1;
    if (toolbridge_page_decls(&pt, a, &text, &len, err) != 0)
        return -1;
    list = arena_printf(a, "[%s]", text);
    decls = list ? jsonin_decode(list, strlen(list), BOUND_JSON_DEPTH, err)
                 : NULL;
    if (decls == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    /* Server actions first: they do not change between requests, so the
     * start of the request stays the same (implicit prompt caching). */
    if (action_decls != NULL) {
        json_t *all = json_copy(UNCONST(action_decls));
        if (all == NULL || json_array_extend(all, decls) != 0) {
            json_decref(all);
            json_decref(decls);
            return status_set(err, ST_NO_MEMORY, "out of memory");
        }
        json_decref(decls);
        decls = all;
    }
    if (json_array_size(decls) == 0) {
        json_decref(decls);
        return 0;
    }
    *tools =
        arena_take_json(a, json_pack("[{s:o}]", "functionDeclarations", decls));
    return *tools ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
}

const json_t *
toolbridge_page_tool(const json_t *tool_defs, const char *fn_name)
{
    size_t i;
    json_t *t;

    json_array_foreach(tool_defs, i, t) {
        char fn[TOOLBRIDGE_NAME_MAX];
        if (toolbridge_fn_name(json_string_value(json_object_get(t, "name")),
                               fn, sizeof(fn)) == 0 &&
            strcmp(fn, fn_name) == 0)
            return t;
    }
    return NULL;
}
