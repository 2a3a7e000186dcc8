/*
 * policy.c - may this server action run now? (see policy.h)
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* FNM_CASEFOLD */
#include "core/common.h"
#include "http/policy.h"

#include <fnmatch.h>
#include <jansson.h>
#include <string.h>

bool
policy_rule_matches(const json_t *rule, const struct policy_call *call)
{
    const char *action = json_string_value(json_object_get(rule, "action"));
    const json_t *arg = json_object_get(rule, "arg");
    const char *pattern = json_string_value(json_object_get(rule, "pattern"));
    const char *value;

    if (action == NULL || strcmp(action, call->action) != 0)
        return false;
    if (arg == NULL)
        return true; /* every call of the action */
    if (!json_is_string(arg) || pattern == NULL)
        return false; /* half a rule allows nothing */
    value = json_string_value(json_object_get(call->args, json_string_value(arg)));
    return value != NULL && fnmatch(pattern, value, FNM_CASEFOLD) == 0;
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

enum policy_verdict
policy_decide(bool side_effects_enabled, const json_t *site_rules,
              const struct policy_user *user, const struct policy_call *call,
              const char **reason)
{
    if (!call->side_effects) {
        *reason = "no side effects";
        return POLICY_ALLOW;
    }
    if (!side_effects_enabled) {
        *reason = "actions with side effects are switched off on this site";
        return POLICY_DENY;
    }
    switch (user->trust) {
    case STORE_AUTONOMOUS:
        *reason = "the user lets the assistant act on their behalf";
        return POLICY_ALLOW;
    case STORE_DELEGATED:
        if (any_rule(site_rules, call) || any_rule(user->rules, call)) {
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
