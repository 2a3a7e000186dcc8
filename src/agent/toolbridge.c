/*
 * toolbridge.c - function declarations for Gemini, and name checks.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/toolbridge.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/jsonin.h"
#include "registry/plugin.h"
#include "core/status.h"
#include "core/utf8.h"

#include <jansson.h>
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
    bool as_is = toolbridge_valid_name(page_name);
    int n = snprintf(out, size, "%s%s", as_is ? "" : TOOLBRIDGE_PAGE_PREFIX,
                     page_name);

    return n < 0 || (size_t)n >= size || !toolbridge_valid_name(out) ? -1 : 0;
}

bool
toolbridge_valid_name(const char *s)
{
    size_t n;

    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                       *s == '_'))
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

int
toolbridge_check(const json_t *tool_defs, long max_tools,
                 struct status_error *err)
{
    static const char *const tool_members[] = {"name", "description",
                                               "inputSchema", "category", NULL};
    char fn[TOOLBRIDGE_NAME_MAX];
    size_t i, j;
    json_t *t;

    if (tool_defs == NULL)
        return 0;
    if (!json_is_array(tool_defs))
        return status_set(err, ST_BAD_REQUEST,
                          "toolDefinitions must be an array");
    if (json_array_size(tool_defs) > (size_t)max_tools)
        return status_set(err, ST_TOO_LARGE,
                          "%zu page tools; the limit is %ld",
                          json_array_size(tool_defs), max_tools);
    json_array_foreach(tool_defs, i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *desc = json_object_get(t, "description");
        json_t *cat = json_object_get(t, "category");
        json_t *schema = json_object_get(t, "inputSchema");
        const char *unknown;

        if (!json_is_object(t))
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu] must be an object", i);
        unknown = jsonin_unknown_member(t, tool_members);
        if (unknown != NULL)
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: unknown member '%s' "
                              "(expected name, description, inputSchema, "
                              "category)",
                              i, unknown);
        if (name == NULL || !page_name_ok(name) ||
            toolbridge_fn_name(name, fn, sizeof(fn)) != 0)
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: the name must be 1 to "
                              "64 of A-Z a-z 0-9 _ . : - (62 when it starts "
                              "with a digit, '.', ':' or '-')",
                              i);
        if (plugin_is_fn_name(name))
            return status_set(err, ST_TOOL_CONFLICT,
                              "toolDefinitions[%zu]: '%s' is named like a "
                              "server action; names starting with '%s' are "
                              "reserved",
                              i, name, PLUGIN_FN_PREFIX);
        if ((desc && !json_is_string(desc)) || (cat && !json_is_string(cat)))
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: description and category "
                              "must be strings",
                              i);
        if (schema != NULL) {
            const char *type =
                json_string_value(json_object_get(schema, "type"));
            json_t *props = json_object_get(schema, "properties");
            if (!json_is_object(schema) || type == NULL ||
                strcmp(type, "object") != 0 || (props && !json_is_object(props)))
                return status_set(err, ST_BAD_REQUEST,
                                  "toolDefinitions[%zu]: inputSchema must be "
                                  "an object schema (type \"object\")",
                                  i);
        }
        /* Quadratic, but bounded by maxTools (128 by default), and each
         * pair costs a string compare. Names are compared as declared:
         * "1x" is declared as "p_1x", so a tool named "p_1x" beside it is
         * a conflict. */
        for (j = 0; j < i; j++) {
            const char *other_name = json_string_value(
                json_object_get(json_array_get(tool_defs, j), "name"));
            if (!declared_alike(other_name, name))
                continue;
            if (strcmp(other_name, name) == 0)
                return status_set(err, ST_BAD_REQUEST,
                                  "toolDefinitions[%zu]: the name '%s' is "
                                  "used twice",
                                  i, name);
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: '%s' and '%s' would "
                              "both be declared as the function '%s'",
                              i, other_name, name, fn);
        }
    }
    return 0;
}

json_t *
toolbridge_action_declarations(const struct plugin_set *actions)
{
    json_t *decls = json_array();

    for (size_t i = 0; decls != NULL && i < actions->count; i++) {
        const struct plugin_action *act = &actions->actions[i];
        if (act->exposed &&
            json_array_append_new(decls, toolbridge_declaration(
                                             act->fn_name, act->description,
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

int
toolbridge_tools(const json_t *action_decls, const json_t *tool_defs,
                 struct arena *a, json_t **tools, struct status_error *err)
{
    json_t *decls = json_array();
    size_t i;
    json_t *t;

    *tools = NULL;
    if (decls == NULL)
        goto oom;
    /* Server actions first: they do not change between requests, so the
     * start of the request stays the same (implicit prompt caching). */
    if (action_decls != NULL &&
        json_array_extend(decls, UNCONST(action_decls)) != 0)
        goto oom;
    json_array_foreach(tool_defs, i, t) {
        char fn[TOOLBRIDGE_NAME_MAX];
        const char *desc = page_description(
            a, json_string_value(json_object_get(t, "description")));

        /* toolbridge_check() made sure every name maps */
        if (toolbridge_fn_name(json_string_value(json_object_get(t, "name")),
                               fn, sizeof(fn)) != 0 ||
            desc == NULL ||
            json_array_append_new(
                decls, toolbridge_declaration(
                           fn, desc, json_object_get(t, "inputSchema"))) != 0)
            goto oom;
    }
    if (json_array_size(decls) == 0) {
        json_decref(decls);
        return 0;
    }
    *tools = arena_take_json(a, json_pack("[{s:o}]", "functionDeclarations",
                                          decls));
    return *tools ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
oom:
    json_decref(decls);
    return status_set(err, ST_NO_MEMORY, "out of memory");
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
