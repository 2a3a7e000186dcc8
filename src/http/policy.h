/*
 * policy.h - may this server action run now, wait for the user's
 * approval, or not run at all? (docs/http-api.md "The run API").
 *
 * Only actions with side effects (`sideEffects: true` in their
 * .jay-action) are judged; the others always run. In order:
 *
 *   0. a deny entry of the site's permission policy
 *      (plugins.config.permission, registry/permission.h) denies any
 *      call, with side effects or not, whatever the user's trust;
 *   1. the site's kill switch (policy.sideEffects: false, or the
 *      environment's AGENT_SIDE_EFFECTS_ENABLED=false) denies them all;
 *   1b. a tool its plugin auto-approves (auto_approved_tools()) runs;
 *   2. an autonomous user's run;
 *   3. a delegated user's run when an allow rule matches - the site's
 *      (policy.allow, or an allow entry of its permission policy) or the
 *      user's own ("always allow") - else wait;
 *   4. a supervised user's always wait.
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

struct json_t;
struct permission_policy;

enum policy_verdict {
    POLICY_ALLOW,   /* run it */
    POLICY_APPROVE, /* wait for the user's approval */
    POLICY_DENY,    /* never: the model is told why */
};

struct policy_call {
    const char *action;         /* registered name, "plugin.name" */
    bool side_effects;          /* from its .jay-action */
    const struct json_t *args;  /* the call's arguments */
    /* its plugin's auto_approved_tools() names it: it needs no approval
     * (a deny entry and the kill switch still stop it) */
    bool auto_approved;
};

struct policy_user {
    enum store_trust trust;
    const struct json_t *rules; /* the user's allow rules, or NULL */
};

/* The verdict, with `*reason` a static sentence for the model, the
 * approval card and the audit trail. `site_rules` and `site_policy` (the
 * site's permission policy; its default is not used here: trust levels
 * are the run API's default) may be NULL. */
enum policy_verdict policy_decide(bool side_effects_enabled,
                                  const struct json_t *site_rules,
                                  const struct permission_policy *site_policy,
                                  const struct policy_user *user,
                                  const struct policy_call *call,
                                  const char **reason);

/* Does `rule` allow `call`? (exposed for the tests) */
bool policy_rule_matches(const struct json_t *rule,
                         const struct policy_call *call);

#endif /* APP_POLICY_H */
