/*
 * policy.h - may this server action run now, wait for the user's
 * approval, or not run at all? (docs/http-api.md "The run API").
 *
 * The run API's input to the one decision engine (registry/decide.h;
 * docs/internals/decisions.md has its rules in the run API's column):
 * the site's permission policy (plugins.config.permission) and kill
 * switch (policy.sideEffects, or the environment's
 * AGENT_SIDE_EFFECTS_ENABLED=false), the site's allow rules
 * (policy.allow), and the user's trust level and own rules ("always
 * allow"). In short: a deny entry denies any call; then the kill switch
 * denies calls with side effects; calls without side effects and tools
 * their plugin auto-approves run; an autonomous user's calls run; a
 * delegated user's run when an allow rule or an allow entry of the
 * permission policy matches, else wait; a supervised user's wait.
 *
 * A rule is {"action": "shop.addReview", "arg": "email", "pattern":
 * "*@example.com"}: the action by its registered name, and optionally one
 * string argument that must match a shell pattern (fnmatch, case
 * folded); without "arg" it allows every call of the action. Rules are
 * matched by the permission engine (registry/permission.h) as allow
 * entries, with its bounds: a value longer than BOUND_PERMISSION_SUBJECT
 * or holding a NUL byte, or a pattern longer than
 * BOUND_PERMISSION_PATTERN, is allowed by no rule (the user is asked).
 *
 * Pure: no store, no I/O; the caller brings the user's settings.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_POLICY_H
#define APP_POLICY_H

#include "core/common.h"
#include "store/store.h"

struct decide_result;
struct json_t;
struct permission_policy;

enum policy_verdict {
    POLICY_ALLOW,   /* run it */
    POLICY_APPROVE, /* wait for the user's approval */
    POLICY_DENY,    /* never: the model is told why */
};

struct policy_call {
    const char *action;        /* registered name, "plugin.name" */
    bool side_effects;         /* from its .jay-action */
    const struct json_t *args; /* the call's arguments */
    /* its plugin's auto_approved_tools() names it: it needs no approval
     * (a deny entry and the kill switch still stop it) */
    bool auto_approved;
};

struct policy_user {
    enum store_trust trust;
    const struct json_t *rules; /* the user's allow rules, or NULL */
};

/* The site's side of a decision: `site_rules` (policy.allow) and
 * `site_policy` (its permission policy; its default is not used here:
 * trust levels are the run API's default) may be NULL. */
struct policy_site {
    bool side_effects_enabled;
    const struct json_t *site_rules;
    const struct permission_policy *site_policy;
};

/* The engine's decision on `call` by `user` on `site`, in `*out` (its
 * text: what the model reads of a denial; its detail: the audit's and
 * the approval card's reason). */
enum policy_verdict policy_judge(const struct policy_site *site,
                                 const struct policy_user *user,
                                 const struct policy_call *call,
                                 struct decide_result *out);

/* The same, with `*reason` the static detail. */
enum policy_verdict policy_decide(bool side_effects_enabled,
                                  const struct json_t *site_rules,
                                  const struct permission_policy *site_policy,
                                  const struct policy_user *user,
                                  const struct policy_call *call,
                                  const char **reason);

#endif /* APP_POLICY_H */
