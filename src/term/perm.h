/*
 * perm.h - may the terminal client run this tool call? Claude Code's
 * permission modes and its --allowedTools / --disallowedTools rules
 * (docs/internals/terminal.md "Permissions").
 *
 * In order, the first that applies decides:
 *   1. a --disallowedTools rule that matches: deny;
 *   2. a --allowedTools rule that matches: allow;
 *   3. the mode: bypassPermissions allows everything; a tool without side
 *      effects (its declaration's sideEffects: false) is allowed in every
 *      mode; plan denies the rest (nothing with side effects runs while
 *      planning); acceptEdits allows the file_edit plugin's tools and asks
 *      for the others; dontAsk denies what is not pre-allowed; default
 *      asks.
 * "Ask" is the caller's: it asks over the prompt channel
 * (--permission-prompt-tool stdio), or, without one, denies.
 *
 * A rule is a tool name (`Read`), or a name with a pattern for the tool's
 * `command` argument (the shell tool's): `Bash(git:*)` matches a command
 * that starts with "git", `Bash(git status)` only that command.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_PERM_H
#define APP_TERM_PERM_H

#include "core/common.h"
#include "term/args.h"
#include "term/bounds.h"

struct arena;
struct json_t;
struct status_error;

struct term_rule {
    const char *tool;    /* the tool's name */
    const char *pattern; /* for its `command`; NULL: any call */
    bool prefix;         /* `pattern:*` (or `pattern*`): a prefix */
};

struct term_rules {
    struct term_rule allow[BOUND_TERM_RULES], deny[BOUND_TERM_RULES];
    size_t nallow, ndeny;
};

enum term_verdict {
    TERM_ALLOW,
    TERM_DENY,
    TERM_ASK,
};

/* Read the flags' values (`Read,Edit Bash(git:*)`: commas or spaces
 * between rules, but not inside parentheses) into `r`, strings in `a`.
 * 0, or -1 with `err` set (ST_BAD_REQUEST: a rule that cannot be read,
 * too many rules; ST_NO_MEMORY). */
int term_rules_parse(const struct term_args *args, struct arena *a,
                     struct term_rules *r, struct status_error *err);

/* Does `rule` match a call of `tool` with `input`? */
bool term_rule_matches(const struct term_rule *rule, const char *tool,
                       const struct json_t *input);

/*
 * Apply the host's permission updates: the `updatedPermissions` of a
 * can_use_tool answer (the SDK's PermissionUpdate[]). `addRules` with
 * behavior `allow` or `deny` adds its rules ({toolName, ruleContent?},
 * read as `toolName(ruleContent)`) to `r` for the rest of the session;
 * `setMode` sets *mode; the others (replaceRules, removeRules, the
 * directories) are ignored - the session's rules only grow. 0, or -1
 * with `err` (ST_BAD_REQUEST: a rule that cannot be read, more than
 * BOUND_TERM_RULES; ST_NO_MEMORY).
 */
int term_perm_update(const struct json_t *updates, struct arena *a,
                     struct term_rules *r, enum term_mode *mode,
                     struct status_error *err);

/*
 * The permission_suggestions of a can_use_tool request for a call of
 * `tool` with `input`: what a host may offer as "always": the shell's
 * command by its first word (`Bash(git:*)`), a file edit by the mode
 * acceptEdits, another tool by its name. A new reference (NULL when out
 * of memory).
 */
struct json_t *term_perm_suggest(const char *tool, const struct json_t *input,
                                 bool edit);

/* The verdict on a call of `tool` with `input`. `side_effects`: its
 * declaration says so; `edit`: it is a file_edit tool. */
enum term_verdict term_perm_decide(enum term_mode mode,
                                   const struct term_rules *r,
                                   const char *tool,
                                   const struct json_t *input,
                                   bool side_effects, bool edit);

#endif /* APP_TERM_PERM_H */
