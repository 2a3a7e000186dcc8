/*
 * perm.c - permission modes and tool rules of the terminal client
 * (perm.h).
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

/* One rule of text s[n]: `Name` or `Name(pattern)`. */
static int
parse_rule(const char *s, size_t n, struct arena *a, struct term_rule *r,
           struct status_error *err)
{
    const char *open = memchr(s, '(', n);
    size_t plen;

    memset(r, 0, sizeof(*r));
    if (open == NULL) {
        r->tool = arena_strndup(a, s, n);
        return r->tool ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
    }
    if (open == s || s[n - 1] != ')')
        return status_set(err, ST_BAD_REQUEST,
                          "cannot read the tool rule '%.*s' (expected Name "
                          "or Name(pattern))",
                          (int)(n > 200 ? 200 : n), s);
    r->tool = arena_strndup(a, s, (size_t)(open - s));
    plen = n - (size_t)(open - s) - 2;
    open++;
    if (plen >= 2 && strncmp(open + plen - 2, ":*", 2) == 0) {
        r->prefix = true;
        plen -= 2;
    } else if (plen >= 1 && open[plen - 1] == '*') {
        r->prefix = true;
        plen -= 1;
    }
    r->pattern = arena_strndup(a, open, plen);
    if (r->tool == NULL || r->pattern == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return 0;
}

/* Split one flag's value into rules appended to list[*n]. */
static int
parse_list(const char *v, struct arena *a, struct term_rule *list, size_t *n,
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
        if (*n == BOUND_TERM_RULES)
            return status_set(err, ST_BAD_REQUEST,
                              "more than %d tool rules", BOUND_TERM_RULES);
        if (parse_rule(v + start, i - start, a, &list[*n], err) != 0)
            return -1;
        (*n)++;
    }
    return 0;
}

int
term_rules_parse(const struct term_args *args, struct arena *a,
                 struct term_rules *r, struct status_error *err)
{
    r->nallow = r->ndeny = 0;
    for (size_t i = 0; i < args->nallowed; i++)
        if (parse_list(args->allowed[i], a, r->allow, &r->nallow, err) != 0)
            return -1;
    for (size_t i = 0; i < args->ndenied; i++)
        if (parse_list(args->denied[i], a, r->deny, &r->ndeny, err) != 0)
            return -1;
    return 0;
}

bool
term_rule_matches(const struct term_rule *rule, const char *tool,
                  const json_t *input)
{
    const char *cmd;
    size_t n;

    if (strcmp(rule->tool, tool) != 0)
        return false;
    if (rule->pattern == NULL)
        return true;
    cmd = json_string_value(json_object_get(input, "command"));
    if (cmd == NULL)
        return false;
    n = strlen(rule->pattern);
    return rule->prefix ? strncmp(cmd, rule->pattern, n) == 0
                        : strcmp(cmd, rule->pattern) == 0;
}

static bool
any(const struct term_rule *list, size_t n, const char *tool,
    const json_t *input)
{
    for (size_t i = 0; i < n; i++)
        if (term_rule_matches(&list[i], tool, input))
            return true;
    return false;
}

enum term_verdict
term_perm_decide(enum term_mode mode, const struct term_rules *r,
                 const char *tool, const json_t *input, bool side_effects,
                 bool edit)
{
    if (r != NULL && any(r->deny, r->ndeny, tool, input))
        return TERM_DENY;
    if (r != NULL && any(r->allow, r->nallow, tool, input))
        return TERM_ALLOW;
    if (mode == TERM_MODE_BYPASS || !side_effects)
        return TERM_ALLOW;
    switch (mode) {
    case TERM_MODE_PLAN:
    case TERM_MODE_DONT_ASK:
        return TERM_DENY;
    case TERM_MODE_ACCEPT_EDITS:
        return edit ? TERM_ALLOW : TERM_ASK;
    default:
        return TERM_ASK;
    }
}

int
term_perm_update(const json_t *updates, struct arena *a,
                 struct term_rules *r, enum term_mode *mode,
                 struct status_error *err)
{
    const json_t *u, *rule;
    size_t i, k;

    json_array_foreach(updates, i, u) {
        const char *type = json_string_value(json_object_get(u, "type"));
        const char *behavior =
            json_string_value(json_object_get(u, "behavior"));
        struct term_rule *list;
        size_t *n;

        if (type != NULL && strcmp(type, "setMode") == 0) {
            const char *m = json_string_value(json_object_get(u, "mode"));
            if (m == NULL || term_mode_parse(m, mode) != 0)
                return status_set(err, ST_BAD_REQUEST,
                                  "setMode: unknown permission mode '%.60s'",
                                  m ? m : "(none)");
            continue;
        }
        if (type == NULL || strcmp(type, "addRules") != 0 ||
            behavior == NULL)
            continue;
        if (strcmp(behavior, "allow") == 0) {
            list = r->allow;
            n = &r->nallow;
        } else if (strcmp(behavior, "deny") == 0) {
            list = r->deny;
            n = &r->ndeny;
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
            if (*n == BOUND_TERM_RULES)
                return status_set(err, ST_BAD_REQUEST,
                                  "more than %d tool rules", BOUND_TERM_RULES);
            if (parse_rule(text, strlen(text), a, &list[*n], err) != 0)
                return -1;
            (*n)++;
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
                         "addRules", "rules", "toolName", tool,
                         "ruleContent", content, "behavior", "allow",
                         "destination", "session");
    }
    return json_pack("[{s:s, s:[{s:s}], s:s, s:s}]", "type", "addRules",
                     "rules", "toolName", tool, "behavior", "allow",
                     "destination", "session");
}
