/*
 * perm.h - the terminal client's permission settings: Claude Code's
 * permission modes and its --allowedTools / --disallowedTools rules
 * (docs/internals/terminal.md "Permissions"), read into the decision
 * engine's forms (registry/decide.h decides; docs/internals/decisions.md
 * has its rules in order).
 *
 * A rule is a tool name (`Read`), or a name with a pattern for the tool's
 * `command` argument (the shell tool's): `Bash(git:*)` matches a command
 * that starts with "git", `Bash(git status)` only that command. Each
 * compiles to a permission entry (registry/permission.h): `Read` to
 * {"tool": "Read"}, `Bash(git:*)` to {"tool": "Bash", "arg": "command",
 * "pattern": "git", "match": "prefix"} ("exact" without the `:*` or `*`),
 * compared byte for byte, case and all.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_PERM_H
#define APP_TERM_PERM_H

#include "core/common.h"
#include "registry/decide.h"
#include "term/args.h"
#include "term/bounds.h"

struct arena;
struct json_t;
struct status_error;

/* The session's rules as permission entries: JSON arrays pinned to the
 * arena they were read into (NULL: none yet). */
struct term_rules {
    struct json_t *allow, *deny;
};

/* What a question at the terminal or over stdin answered. */
enum term_verdict {
    TERM_ALLOW,
    TERM_DENY,
    TERM_ASK,
};

/* Read the flags' values (`Read,Edit Bash(git:*)`: commas or spaces
 * between rules, but not inside parentheses) into `r`, its lists
 * pinned to `a`. 0, or -1 with `err` set (ST_BAD_REQUEST: a rule that cannot be read,
 * too many rules; ST_NO_MEMORY). */
int term_rules_parse(const struct term_args *args, struct arena *a,
                     struct term_rules *r, struct status_error *err);

/* Allow every call of `tool` for the rest of the session ("always" at
 * the terminal). 0, or -1 when there are BOUND_TERM_RULES already or
 * memory ran out (the call was allowed once all the same). */
int term_rules_allow_tool(struct term_rules *r, struct arena *a,
                          const char *tool);

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

/* The engine's spelling of a mode. */
enum decide_mode term_perm_mode(enum term_mode m);

#endif /* APP_TERM_PERM_H */
