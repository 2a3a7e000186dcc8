/*
 * toolbridge.c - function declarations for Gemini, and name checks.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/toolbridge.h"
#include "core/arena.h"
#include "core/jsonin.h"
#include "registry/plugin.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>

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

int
toolbridge_check(const json_t *tool_defs, long max_tools,
                 struct status_error *err)
{
    static const char *const tool_members[] = {"name", "description",
                                               "inputSchema", "category", NULL};
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
        if (!toolbridge_valid_name(name))
            return status_set(err, ST_BAD_REQUEST,
                              "toolDefinitions[%zu]: the name must match "
                              "^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$",
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
        /* Quadratic, but bounded by maxTools (128 by default). */
        for (j = 0; j < i; j++) {
            const char *other = json_string_value(
                json_object_get(json_array_get(tool_defs, j), "name"));
            if (strcmp(other, name) == 0)
                return status_set(err, ST_BAD_REQUEST,
                                  "toolDefinitions[%zu]: the name '%s' is "
                                  "used twice",
                                  i, name);
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
        json_t *d = toolbridge_declaration(
            json_string_value(json_object_get(t, "name")),
            json_string_value(json_object_get(t, "description")),
            json_object_get(t, "inputSchema"));
        if (json_array_append_new(decls, d) != 0)
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
toolbridge_page_tool(const json_t *tool_defs, const char *name)
{
    size_t i;
    json_t *t;

    json_array_foreach(tool_defs, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return t;
    }
    return NULL;
}
