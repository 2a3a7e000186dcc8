/*
 * perm.c - the terminal client's tool rules, read into permission
 * entries, and its permission updates (perm.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/perm.h"
#include "core/arena.h"
#include "core/status.h"
#include "term/bounds.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The list `*slot` of the rules, made (pinned to `a`) when missing;
 * NULL when out of memory. */
static json_t *
list_of(json_t **slot, struct arena *a)
{
    if (*slot == NULL)
        *slot = arena_take_json(a, json_array());
    return *slot;
}

/* The entry of rule text s[n] (perm.h), a new reference; NULL with
 * `err` set. */
static json_t *
rule_entry(const char *s, size_t n, struct status_error *err)
{
    const char *open = memchr(s, '(', n), *kind = "exact";
    size_t plen;
    json_t *e;

    if (open == NULL) {
        e = json_pack("{s:s%}", "tool", s, n);
        goto out;
    }
    if (open == s || s[n - 1] != ')') {
        status_set(err, ST_BAD_REQUEST,
                   "cannot read the tool rule '%.*s' (expected Name or "
                   "Name(pattern))",
                   (int)(n > 200 ? 200 : n), s);
        return NULL;
    }
    plen = n - (size_t)(open - s) - 2;
    if (plen >= 2 && strncmp(open + 1 + plen - 2, ":*", 2) == 0) {
        kind = "prefix";
        plen -= 2;
    } else if (plen >= 1 && open[plen] == '*') {
        kind = "prefix";
        plen -= 1;
    }
    e = json_pack("{s:s%, s:s, s:s%, s:s}", "tool", s, (size_t)(open - s),
                  "arg", "command", "pattern", open + 1, plen, "match", kind);
out:
    if (e == NULL)
        status_set(err, ST_NO_MEMORY, "out of memory");
    return e;
}

/* Add rule text s[n] to the list `*slot`. */
static int
add_rule(json_t **slot, struct arena *a, const char *s, size_t n,
         struct status_error *err)
{
    json_t *list = list_of(slot, a), *e;

    if (list == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (json_array_size(list) == BOUND_TERM_RULES)
        return status_set(err, ST_BAD_REQUEST, "more than %d tool rules",
                          BOUND_TERM_RULES);
    if ((e = rule_entry(s, n, err)) == NULL)
        return -1;
    if (json_array_append_new(list, e) != 0)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return 0;
}

/* Split one flag's value into rules added to the list `*slot`. */
static int
parse_list(const char *v, struct arena *a, json_t **slot,
           struct status_error *err)
{
    size_t i = 0, len = strlen(v);

    while (i < len) {
        size_t start, depth = 0;

        while (i < len && (v[i] == ',' || v[i] == ' '))
            i++;
        if (i == len)
            break;
        start = i;
        for (; i < len; i++) {
            if (v[i] == '(')
                depth++;
            else if (v[i] == ')' && depth > 0)
                depth--;
            else if (depth == 0 && (v[i] == ',' || v[i] == ' '))
                break;
        }
        if (add_rule(slot, a, v + start, i - start, err) != 0)
            return -1;
    }
    return 0;
}

int
term_rules_parse(const struct term_args *args, struct arena *a,
                 struct term_rules *r, struct status_error *err)
{
    r->allow = r->deny = NULL;
    if (list_of(&r->allow, a) == NULL || list_of(&r->deny, a) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < args->nallowed; i++)
        if (parse_list(args->allowed[i], a, &r->allow, err) != 0)
            return -1;
    for (size_t i = 0; i < args->ndenied; i++)
        if (parse_list(args->denied[i], a, &r->deny, err) != 0)
            return -1;
    return 0;
}

int
term_rules_allow_tool(struct term_rules *r, struct arena *a, const char *tool)
{
    struct status_error err = {0};

    return add_rule(&r->allow, a, tool, strlen(tool), &err);
}

enum decide_mode
term_perm_mode(enum term_mode m)
{
    switch (m) {
    case TERM_MODE_ACCEPT_EDITS:
        return DECIDE_MODE_ACCEPT_EDITS;
    case TERM_MODE_BYPASS:
        return DECIDE_MODE_BYPASS;
    case TERM_MODE_PLAN:
        return DECIDE_MODE_PLAN;
    case TERM_MODE_DONT_ASK:
        return DECIDE_MODE_DONT_ASK;
    case TERM_MODE_DEFAULT:
        break;
    }
    return DECIDE_MODE_DEFAULT;
}

int
term_perm_update(const json_t *updates, struct arena *a, struct term_rules *r,
                 enum term_mode *mode, struct status_error *err)
{
    const json_t *u, *rule;
    size_t i, k;

    json_array_foreach(updates, i, u) {
        const char *type = json_string_value(json_object_get(u, "type"));
        const char *behavior =
            json_string_value(json_object_get(u, "behavior"));
        json_t **list;

        if (type != NULL && strcmp(type, "setMode") == 0) {
            const char *m = json_string_value(json_object_get(u, "mode"));
            if (m == NULL || term_mode_parse(m, mode) != 0)
                return status_set(err, ST_BAD_REQUEST,
                                  "setMode: unknown permission mode '%.60s'",
                                  m ? m : "(none)");
            continue;
        }
        if (type == NULL || strcmp(type, "addRules") != 0 || behavior == NULL)
            continue;
        if (strcmp(behavior, "allow") == 0) {
            list = &r->allow;
        } else if (strcmp(behavior, "deny") == 0) {
            list = &r->deny;
        } else {
            continue; /* "ask": asking is what happens anyway */
        }
        json_array_foreach(json_object_get(u, "rules"), k, rule) {
            const char *tool =
                json_string_value(json_object_get(rule, "toolName"));
            const char *content =
                json_string_value(json_object_get(rule, "ruleContent"));
            const char *text;
            if (tool == NULL || tool[0] == '\0')
                return status_set(err, ST_BAD_REQUEST,
                                  "addRules: a rule without toolName");
            text = content && content[0]
                       ? arena_printf(a, "%s(%s)", tool, content)
                       : tool;
            if (text == NULL)
                return status_set(err, ST_NO_MEMORY, "out of memory");
            if (add_rule(list, a, text, strlen(text), err) != 0)
                return -1;
        }
    }
    return 0;
}

json_t *
term_perm_suggest(const char *tool, const json_t *input, bool edit)
{
    const char *cmd = json_string_value(json_object_get(input, "command"));
    size_t w = 0;

    if (edit)
        return json_pack("[{s:s, s:s, s:s}]", "type", "setMode", "mode",
                         "acceptEdits", "destination", "session");
    if (cmd != NULL) {
        while (cmd[0] == ' ')
            cmd++;
        while (cmd[w] != '\0' && cmd[w] != ' ' && cmd[w] != '\t' &&
               cmd[w] != ';' && cmd[w] != '&' && cmd[w] != '|')
            w++;
    }
    if (w > 0 && w < 100) { /* the command's first word: `git:*` */
        char content[104];
        snprintf(content, sizeof(content), "%.*s:*", (int)w, cmd);
        return json_pack("[{s:s, s:[{s:s, s:s}], s:s, s:s}]", "type",
                         "addRules", "rules", "toolName", tool, "ruleContent",
                         content, "behavior", "allow", "destination",
                         "session");
    }
    return json_pack("[{s:s, s:[{s:s}], s:s, s:s}]", "type", "addRules",
                     "rules", "toolName", tool, "behavior", "allow",
                     "destination", "session");
}
