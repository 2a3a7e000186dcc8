/*
 * policy.c - the run API's input to the decision engine (see policy.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/policy.h"

#include "registry/decide.h"
#include "registry/permission.h"

enum policy_verdict
policy_judge(const struct policy_site *site, const struct policy_user *user,
             const struct policy_call *call, struct decide_result *out)
{
    struct decide_input in = {
        .caller = DECIDE_RUN_API,
        .call = {call->action, call->args},
        .side_effects = call->side_effects,
        .auto_approved = call->auto_approved,
        .side_effects_off = !site->side_effects_enabled,
        .can_ask = true,
        .policy = site->site_policy,
        .trust = user->trust == STORE_AUTONOMOUS  ? DECIDE_AUTONOMOUS
                 : user->trust == STORE_DELEGATED ? DECIDE_DELEGATED
                                                  : DECIDE_SUPERVISED,
        .site_rules = site->site_rules,
        .user_rules = user->rules,
    };

    switch (decide_judge(&in, out)) {
    case DECIDE_DENY:
        return POLICY_DENY;
    case DECIDE_ASK:
        return POLICY_APPROVE;
    case DECIDE_RUN:
    case DECIDE_ELSEWHERE: /* not the run API's: no page tools */
        break;
    }
    return POLICY_ALLOW;
}

enum policy_verdict
policy_decide(bool side_effects_enabled, const struct json_t *site_rules,
              const struct permission_policy *site_policy,
              const struct policy_user *user, const struct policy_call *call,
              const char **reason)
{
    struct policy_site site = {side_effects_enabled, site_rules, site_policy};
    struct decide_result out;
    enum policy_verdict v = policy_judge(&site, user, call, &out);

    *reason = out.detail; /* static: the run API sets no hook reason */
    return v;
}
