/*
 * permission.h - the permission policy (plugins.config.permission in
 * agent.yaml) and its entries: may this tool call run, must it not, or
 * must the face ask someone first? The one decision on a call, which
 * also weighs side effects, trust levels and the terminal's modes, is
 * registry/decide.h's; it matches entries here.
 *
 * A policy is {default: allow|deny|ask, allow: [entries], deny: [entries]}.
 * The engine weighs it (docs/internals/decisions.md): a deny entry that
 * matches denies, even a tool its plugin auto-approves; an allow entry
 * that matches allows; else the policy's default (ask when unset).
 *
 * An entry is one of:
 *
 *   "shop.search"                     the tool by name (exact)
 *   {"tool": "shop.search"}           the same
 *   {"signature": "mail.send(to=*@example.com*)"}
 *                                     a glob over the call's signature
 *   {"tool": "shop.addReview", "arg": "email", "pattern": "*@example.com"}
 *                                     one string argument's value
 *
 * "action" is accepted for "tool" (the run API's allow rules,
 * policy.allow, are entries of this kind: {action, arg?, pattern?}).
 *
 * The terminal's rules (`Bash(git:*)`, term/perm.h) compile to entries
 * of the argument kind with one more key, "match": "prefix" or "exact":
 * {"tool": "Bash", "arg": "command", "pattern": "git", "match": "prefix"}
 * compares the argument byte for byte, case and all, instead of as a
 * glob. The policy reader refuses "match": it is not a key of agent.yaml.
 *
 * The signature of a call is `tool(k1=v1, k2=v2)`: the tool's name, then
 * its arguments with keys in byte order (strcmp), each `key=value`,
 * separated by ", ". A string value is written as its bytes, unquoted and
 * unescaped; any other value as compact JSON with sorted keys (`5`,
 * `true`, `null`, `[1,2]`, `{"a":1,"b":"x"}`). No arguments: `tool()`.
 * So `mail.send({"to": "a@b.c", "cc": 2})` is `mail.send(cc=2, to=a@b.c)`.
 * Because strings are unquoted, a `*` may run across argument
 * boundaries: a deny glob catches more, never less, but an allow glob on
 * one argument is better written as an {arg, pattern} entry.
 *
 * Globs are fnmatch(3) patterns (`*`, `?`, `[...]`, `\` quotes; no
 * FNM_PATHNAME, so `*` crosses '/'), matched ignoring case, as the run
 * API's rules always were. An argument entry looks only at a string
 * argument; a missing or non-string argument does not match (use a
 * signature glob for numbers). A subject longer than
 * BOUND_PERMISSION_SUBJECT or holding a NUL byte is never allowed by a
 * glob and always caught by a deny glob: the engine fails closed.
 *
 * Pure: no I/O, no allocation, no global state; thread-safe. Not here:
 * asking anyone - ASK is handed to the face's approval channel (the
 * chat's approval card, the run API's approvals; http/chat.c, policy.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PERMISSION_H
#define APP_PERMISSION_H

#include "core/common.h"
#include "registry/bounds.h"

struct json_t;
struct status_error;

enum permission_verdict {
    PERMISSION_ALLOW, /* run it */
    PERMISSION_DENY,  /* never: the model is told why */
    PERMISSION_ASK,   /* the face's approval channel decides */
};

/* Which list an entry is matched for: it decides which way a subject the
 * engine cannot judge (too long, a NUL byte) falls. */
enum permission_list {
    PERMISSION_ALLOW_LIST,
    PERMISSION_DENY_LIST,
};

/*
 * A policy. `allow` and `deny` are JSON arrays of entries (or NULL: none),
 * borrowed from the JSON they were read from: valid while it lives.
 */
struct permission_policy {
    enum permission_verdict fallback; /* "default" */
    const struct json_t *allow;
    const struct json_t *deny;
};

struct permission_call {
    const char *tool;          /* registered name, "plugin.name" */
    const struct json_t *args; /* an object, or NULL for none */
};

/*
 * Read a policy from its config value, {default?, allow?, deny?} (the
 * value of plugins.config.permission in agent.yaml, as JSON). NULL reads
 * as the empty policy: default ask, no entries. Every entry is checked
 * against the shapes above (unknown keys, half entries, globs longer than
 * BOUND_PERMISSION_PATTERN, lists longer than BOUND_PERMISSION_ENTRIES
 * are errors). Returns 0 with `*out` borrowing from `cfg`, or -1 with
 * ST_CONFIG in `err` and a message naming the place, e.g. "permission:
 * deny[2]: 'arg' needs a 'pattern'" (no file:line: the caller adds it).
 */
int permission_policy_from_json(const struct json_t *cfg,
                                struct permission_policy *out,
                                struct status_error *err) ATTR_WUR;

/*
 * Does `entry` match `call`, matched for `list`? An entry that states no
 * condition, or half of one ({arg} without pattern, {arg, pattern}
 * without a tool), matches nothing; unknown keys are ignored here (the
 * policy reader refuses them).
 */
bool permission_entry_matches(const struct json_t *entry,
                              const struct permission_call *call,
                              enum permission_list list);

/*
 * Does an entry of `entries` (a JSON array of entries, or NULL: none)
 * match `call`, matched for `list`? Then `*index` (may be NULL) is the
 * first that does.
 */
bool permission_list_match(const struct json_t *entries,
                           const struct permission_call *call,
                           enum permission_list list, size_t *index);

/*
 * Write the signature of `call` (see above) into `buf` of `n` bytes.
 * Returns its length, or -1 when it does not fit (then `buf` holds a cut
 * prefix, always terminated when n > 0), has more than
 * BOUND_PERMISSION_ARGS arguments, or a string holding a NUL byte.
 */
int permission_signature(const struct permission_call *call, char *buf,
                         size_t n);

/* "allow", "deny" or "ask". Static. */
const char *permission_verdict_name(enum permission_verdict v);

#endif /* APP_PERMISSION_H */
