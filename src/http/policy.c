/*
 * policy.c - may this server action run now? (see policy.h)
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/policy.h"

#include "registry/permission.h"

#include <jansson.h>

/*
 * A rule is a permission entry of the {action, arg?, pattern?} kind
 * (registry/permission.h), matched as an allow entry. It must name its
 * action by "action", as rules always did: the engine's other spellings
 * ("tool", a bare name) are for the permission policy, and a rule that
 * allowed nothing before allows nothing now.
 */
bool
policy_rule_matches(const json_t *rule, const struct policy_call *call)
{
    struct permission_call pc = {call->action, call->args};

    if (!json_is_string(json_object_get(rule, "action")))
        return false;
    return permission_entry_matches(rule, &pc, PERMISSION_ALLOW_LIST);
}

static bool
any_rule(const json_t *rules, const struct policy_call *call)
{
    const json_t *rule;
    size_t i;

    json_array_foreach(rules, i, rule) {
        if (policy_rule_matches(rule, call))
            return true;
    }
    return false;
}

/* Does an entry of `list` (the site's permission policy) match `call`? */
static bool
any_entry(const json_t *list, const struct policy_call *call,
          enum permission_list which)
{
    struct permission_call pc = {call->action, call->args};
    const json_t *e;
    size_t i;

    json_array_foreach(list, i, e) {
        if (permission_entry_matches(e, &pc, which))
            return true;
    }
    return false;
}

enum policy_verdict
policy_decide(bool side_effects_enabled, const json_t *site_rules,
              const struct permission_policy *site_policy,
              const struct policy_user *user, const struct policy_call *call,
              const char **reason)
{
    if (site_policy != NULL &&
        any_entry(site_policy->deny, call, PERMISSION_DENY_LIST)) {
        *reason = "a deny entry of the site's permission policy covers this "
                  "call";
        return POLICY_DENY;
    }
    if (!call->side_effects) {
        *reason = "no side effects";
        return POLICY_ALLOW;
    }
    if (!side_effects_enabled) {
        *reason = "actions with side effects are switched off on this site";
        return POLICY_DENY;
    }
    if (call->auto_approved) {
        *reason = "its plugin says it needs no approval";
        return POLICY_ALLOW;
    }
    switch (user->trust) {
    case STORE_AUTONOMOUS:
        *reason = "the user lets the assistant act on their behalf";
        return POLICY_ALLOW;
    case STORE_DELEGATED:
        if (any_rule(site_rules, call) || any_rule(user->rules, call) ||
            (site_policy != NULL &&
             any_entry(site_policy->allow, call, PERMISSION_ALLOW_LIST))) {
            *reason = "an allow rule covers this call";
            return POLICY_ALLOW;
        }
        *reason = "no allow rule covers this call; the user must approve it";
        return POLICY_APPROVE;
    case STORE_SUPERVISED:
        break;
    }
    *reason = "every action with side effects needs the user's approval";
    return POLICY_APPROVE;
}
