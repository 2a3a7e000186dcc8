/*
 * decide.c - the one decision engine for a proposed call (decide.h).
 *
 * decide_judge() runs the rules of decide.h in order (each step a
 * function that returns true when it decided), then words the result in
 * the caller's own sentences (the tables at the end), which the HTTP and
 * terminal tests assert.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/decide.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const unsigned char verdict_of[] = {
    [DECIDE_BY_HOOK_DENY] = DECIDE_DENY,
    [DECIDE_BY_PAGE_TOOL] = DECIDE_ELSEWHERE,
    [DECIDE_BY_POLICY_DENY] = DECIDE_DENY,
    [DECIDE_BY_RULE_DENY] = DECIDE_DENY,
    [DECIDE_BY_KILL_SWITCH] = DECIDE_DENY,
    [DECIDE_BY_HOOK_ASK] = DECIDE_ASK,
    [DECIDE_BY_HOOK_ALLOW] = DECIDE_RUN,
    [DECIDE_BY_NO_SIDE_EFFECTS] = DECIDE_RUN,
    [DECIDE_BY_AUTO_APPROVED] = DECIDE_RUN,
    [DECIDE_BY_APPROVAL_NEVER] = DECIDE_RUN,
    [DECIDE_BY_RULE_ALLOW] = DECIDE_RUN,
    [DECIDE_BY_MODE_BYPASS] = DECIDE_RUN,
    [DECIDE_BY_POLICY_ALLOW] = DECIDE_RUN,
    [DECIDE_BY_AUTONOMOUS] = DECIDE_RUN,
    [DECIDE_BY_DELEGATED_RULE] = DECIDE_RUN,
    [DECIDE_BY_DELEGATED_ASK] = DECIDE_ASK,
    [DECIDE_BY_SUPERVISED] = DECIDE_ASK,
    [DECIDE_BY_MODE_PLAN] = DECIDE_DENY,
    [DECIDE_BY_MODE_DONT_ASK] = DECIDE_DENY,
    [DECIDE_BY_MODE_ACCEPT_EDITS] = DECIDE_RUN,
    [DECIDE_BY_MODE_ASK] = DECIDE_ASK,
    [DECIDE_BY_DEFAULT] = DECIDE_ASK, /* the policy's default says */
    [DECIDE_BY_CANNOT_ASK] = DECIDE_DENY,
};

const char *
decide_verdict_name(enum decide_verdict v)
{
    switch (v) {
    case DECIDE_RUN:
        return "run";
    case DECIDE_DENY:
        return "deny";
    case DECIDE_ASK:
        return "ask";
    case DECIDE_ELSEWHERE:
        break;
    }
    return "elsewhere";
}

const char *
decide_mode_name(enum decide_mode m)
{
    switch (m) {
    case DECIDE_MODE_ACCEPT_EDITS:
        return "acceptEdits";
    case DECIDE_MODE_BYPASS:
        return "bypassPermissions";
    case DECIDE_MODE_PLAN:
        return "plan";
    case DECIDE_MODE_DONT_ASK:
        return "dontAsk";
    case DECIDE_MODE_DEFAULT:
        break;
    }
    return "default";
}

/* Decided by `reason` (its verdict from the table). Always true. */
static bool
by(struct decide_result *out, enum decide_reason reason)
{
    out->reason = reason;
    out->verdict = (enum decide_verdict)verdict_of[reason];
    return true;
}

/* Decided by entry out->index of `list`. Always true. */
static bool
by_entry(struct decide_result *out, enum decide_reason reason,
         enum decide_list list)
{
    out->list = list;
    return by(out, reason);
}

static bool
match(const struct json_t *entries, const struct decide_input *in,
      enum permission_list which, size_t *index)
{
    return entries != NULL &&
           permission_list_match(entries, &in->call, which, index);
}

/* A run API rule must name its action by "action", as rules always did:
 * the other spellings of an entry are the permission policy's, and a
 * rule that allowed nothing before allows nothing now. */
static bool
rule_match(const struct json_t *rules, const struct decide_input *in,
           size_t *index)
{
    const struct json_t *rule;
    size_t i;

    json_array_foreach(rules, i, rule) {
        if (json_is_string(json_object_get(rule, "action")) &&
            permission_entry_matches(rule, &in->call, PERMISSION_ALLOW_LIST)) {
            *index = i;
            return true;
        }
    }
    return false;
}

static bool
is_web(const struct decide_input *in)
{
    return in->caller == DECIDE_CHAT || in->caller == DECIDE_RUN_API;
}

/* Rules 1-5: a hook's deny, a page tool, deny entries and rules, the
 * kill switch. */
static bool
denied_first(const struct decide_input *in, struct decide_result *out)
{
    const struct permission_policy *p = in->policy;

    if (in->hook == DECIDE_HOOK_DENY)
        return by(out, DECIDE_BY_HOOK_DENY);
    if (in->caller == DECIDE_CHAT && in->page_tool)
        return by(out, DECIDE_BY_PAGE_TOOL);
    if (is_web(in) && p != NULL &&
        match(p->deny, in, PERMISSION_DENY_LIST, &out->index))
        return by_entry(out, DECIDE_BY_POLICY_DENY, DECIDE_LIST_POLICY_DENY);
    if (in->caller == DECIDE_TERMINAL &&
        match(in->deny_rules, in, PERMISSION_DENY_LIST, &out->index))
        return by_entry(out, DECIDE_BY_RULE_DENY, DECIDE_LIST_TERM_DENY);
    if (is_web(in) && in->side_effects && in->side_effects_off)
        return by(out, DECIDE_BY_KILL_SWITCH);
    return false;
}

/* Rules 6-9: a hook's ask or allow, and the calls no one is asked of. */
static bool
unasked(const struct decide_input *in, struct decide_result *out)
{
    if (in->hook == DECIDE_HOOK_ASK)
        return by(out, DECIDE_BY_HOOK_ASK);
    if (in->hook == DECIDE_HOOK_ALLOW)
        return by(out, DECIDE_BY_HOOK_ALLOW);
    if (!in->side_effects)
        return by(out, DECIDE_BY_NO_SIDE_EFFECTS);
    if (is_web(in) && in->auto_approved)
        return by(out, DECIDE_BY_AUTO_APPROVED);
    if (in->caller == DECIDE_CHAT && in->approval_never)
        return by(out, DECIDE_BY_APPROVAL_NEVER);
    return false;
}

/* Rule 13: the run API's trust levels and allow rules. */
static void
run_api_rules(const struct decide_input *in, struct decide_result *out)
{
    const struct permission_policy *p = in->policy;

    switch (in->trust) {
    case DECIDE_AUTONOMOUS:
        by(out, DECIDE_BY_AUTONOMOUS);
        return;
    case DECIDE_DELEGATED:
        if (rule_match(in->site_rules, in, &out->index))
            by_entry(out, DECIDE_BY_DELEGATED_RULE, DECIDE_LIST_SITE_RULES);
        else if (rule_match(in->user_rules, in, &out->index))
            by_entry(out, DECIDE_BY_DELEGATED_RULE, DECIDE_LIST_USER_RULES);
        else if (p != NULL &&
                 match(p->allow, in, PERMISSION_ALLOW_LIST, &out->index))
            by_entry(out, DECIDE_BY_DELEGATED_RULE, DECIDE_LIST_POLICY_ALLOW);
        else
            by(out, DECIDE_BY_DELEGATED_ASK);
        return;
    case DECIDE_SUPERVISED:
        break;
    }
    by(out, DECIDE_BY_SUPERVISED);
}

/* Rules 10, 11 and 14: the terminal's allow rules and its mode. */
static void
terminal_rules(const struct decide_input *in, struct decide_result *out)
{
    if (match(in->allow_rules, in, PERMISSION_ALLOW_LIST, &out->index)) {
        by_entry(out, DECIDE_BY_RULE_ALLOW, DECIDE_LIST_TERM_ALLOW);
        return;
    }
    switch (in->mode) {
    case DECIDE_MODE_BYPASS:
        by(out, DECIDE_BY_MODE_BYPASS);
        return;
    case DECIDE_MODE_PLAN:
        by(out, DECIDE_BY_MODE_PLAN);
        return;
    case DECIDE_MODE_DONT_ASK:
        by(out, DECIDE_BY_MODE_DONT_ASK);
        return;
    case DECIDE_MODE_ACCEPT_EDITS:
        if (in->edit) {
            by(out, DECIDE_BY_MODE_ACCEPT_EDITS);
            return;
        }
        break;
    case DECIDE_MODE_DEFAULT:
        break;
    }
    by(out, DECIDE_BY_MODE_ASK);
}

/* Rules 12 and 15: the chat's allow entries, then the policy's default. */
static void
chat_rules(const struct decide_input *in, struct decide_result *out)
{
    const struct permission_policy *p = in->policy;

    if (p != NULL && match(p->allow, in, PERMISSION_ALLOW_LIST, &out->index)) {
        by_entry(out, DECIDE_BY_POLICY_ALLOW, DECIDE_LIST_POLICY_ALLOW);
        return;
    }
    by(out, DECIDE_BY_DEFAULT);
    if (p != NULL)
        out->verdict = p->fallback == PERMISSION_ALLOW  ? DECIDE_RUN
                       : p->fallback == PERMISSION_DENY ? DECIDE_DENY
                                                        : DECIDE_ASK;
}

/* --- the words ----------------------------------------------------------- */

/* The chat's short reasons: the permission engine's own sentences
 * (registry/permission.c), which the chat's denials quote. */
static const char *
chat_detail(const struct decide_input *in, const struct decide_result *out)
{
    switch (out->reason) {
    case DECIDE_BY_POLICY_DENY:
        return "a deny entry of the permission policy covers this call";
    case DECIDE_BY_POLICY_ALLOW:
        return "an allow entry of the permission policy covers this call";
    case DECIDE_BY_NO_SIDE_EFFECTS:
    case DECIDE_BY_AUTO_APPROVED:
    case DECIDE_BY_APPROVAL_NEVER:
        return "its plugin declares this tool safe to run unasked";
    case DECIDE_BY_DEFAULT:
        if (in->policy != NULL && in->policy->fallback == PERMISSION_ALLOW)
            return "no entry covers this call; the policy allows by default";
        if (in->policy != NULL && in->policy->fallback == PERMISSION_DENY)
            return "no entry covers this call; the policy denies by default";
        return "no entry covers this call; the policy asks by default";
    case DECIDE_BY_KILL_SWITCH:
        return "actions with side effects are switched off on this site "
               "(policy.sideEffects)";
    case DECIDE_BY_CANNOT_ASK:
        return "this action needs the visitor's approval, and this site has "
               "no auth.secretFile to sign it with";
    default:
        return NULL;
    }
}

/* The run API's short reasons (the audit trail and the approval card). */
static const char *
run_api_detail(const struct decide_result *out)
{
    switch (out->reason) {
    case DECIDE_BY_POLICY_DENY:
        return "a deny entry of the site's permission policy covers this "
               "call";
    case DECIDE_BY_NO_SIDE_EFFECTS:
        return "no side effects";
    case DECIDE_BY_KILL_SWITCH:
        return "actions with side effects are switched off on this site";
    case DECIDE_BY_AUTO_APPROVED:
        return "its plugin says it needs no approval";
    case DECIDE_BY_AUTONOMOUS:
        return "the user lets the assistant act on their behalf";
    case DECIDE_BY_DELEGATED_RULE:
        return "an allow rule covers this call";
    case DECIDE_BY_DELEGATED_ASK:
        return "no allow rule covers this call; the user must approve it";
    case DECIDE_BY_SUPERVISED:
        return "every action with side effects needs the user's approval";
    default:
        return NULL;
    }
}

/* The terminal's short reasons. */
static const char *
terminal_detail(const struct decide_result *out)
{
    switch (out->reason) {
    case DECIDE_BY_RULE_DENY:
        return "--disallowedTools forbids this call";
    case DECIDE_BY_RULE_ALLOW:
        return "--allowedTools allows this call";
    case DECIDE_BY_NO_SIDE_EFFECTS:
        return "no side effects";
    case DECIDE_BY_MODE_BYPASS:
        return "the permission mode bypassPermissions allows every call";
    case DECIDE_BY_MODE_PLAN:
        return "plan mode runs nothing with side effects";
    case DECIDE_BY_MODE_ACCEPT_EDITS:
        return "the permission mode acceptEdits allows file edits";
    case DECIDE_BY_MODE_DONT_ASK:
    case DECIDE_BY_MODE_ASK:
    case DECIDE_BY_CANNOT_ASK:
        return "it has side effects and the permission mode does not allow "
               "it without asking";
    default:
        return NULL;
    }
}

/* What every caller says the same way. */
static const char *
common_detail(const struct decide_input *in, const struct decide_result *out)
{
    switch (out->reason) {
    case DECIDE_BY_HOOK_DENY:
        return in->hook_reason ? in->hook_reason : "a hook denies this call";
    case DECIDE_BY_HOOK_ASK:
        return in->hook_reason ? in->hook_reason : "a hook asks first";
    case DECIDE_BY_HOOK_ALLOW:
        return in->hook_reason ? in->hook_reason : "a hook allows this call";
    case DECIDE_BY_PAGE_TOOL:
        return "a page tool: the browser runs it";
    default:
        return "the permission rules decide so";
    }
}

static const char *
detail_of(const struct decide_input *in, const struct decide_result *out)
{
    const char *d = NULL;

    switch (in->caller) {
    case DECIDE_CHAT:
        d = chat_detail(in, out);
        break;
    case DECIDE_RUN_API:
        d = run_api_detail(out);
        break;
    case DECIDE_TERMINAL:
        d = terminal_detail(out);
        break;
    }
    return d ? d : common_detail(in, out);
}

#define PRINT(out, ...) snprintf((out)->text, sizeof((out)->text), __VA_ARGS__)

/* The chat's sentences: a denial the model reads, the approval card's. */
static void
chat_text(const struct decide_input *in, struct decide_result *out)
{
    if (out->verdict == DECIDE_ASK)
        PRINT(out,
              "%s changes something on this site, so it runs only when "
              "you approve it",
              in->call.tool);
    else if (out->reason == DECIDE_BY_KILL_SWITCH ||
             out->reason == DECIDE_BY_CANNOT_ASK)
        PRINT(out, "not run: %s", out->detail);
    else if (out->reason == DECIDE_BY_HOOK_DENY)
        PRINT(out, "not run: a hook denies this call (%s)", out->detail);
    else
        PRINT(out,
              "not run: the site's permission policy denies this call "
              "(%s)",
              out->detail);
}

/* The terminal's denials: the tool_result, and the permission_denied
 * message's text. */
static void
terminal_text(const struct decide_input *in, struct decide_result *out)
{
    const char *tool = in->call.tool;

    switch (out->reason) {
    case DECIDE_BY_RULE_DENY:
    case DECIDE_BY_MODE_PLAN:
    case DECIDE_BY_HOOK_DENY:
        PRINT(out, "Permission to use %s denied: %s.", tool, out->detail);
        return;
    default:
        PRINT(out,
              "Permission to use %s denied: it has side effects and the "
              "permission mode %s does not allow it without asking (allow "
              "it with --allowedTools or --permission-mode).",
              tool, decide_mode_name(in->mode));
    }
}

static void
word(const struct decide_input *in, struct decide_result *out)
{
    out->detail = detail_of(in, out);
    if (out->verdict != DECIDE_DENY && out->verdict != DECIDE_ASK) {
        PRINT(out, "%s", out->detail);
        return;
    }
    switch (in->caller) {
    case DECIDE_CHAT:
        chat_text(in, out);
        return;
    case DECIDE_RUN_API:
        if (out->verdict == DECIDE_DENY)
            PRINT(out,
                  "denied by the site's policy: %s; the action did not "
                  "run",
                  out->detail);
        else
            PRINT(out, "%s", out->detail);
        return;
    case DECIDE_TERMINAL:
        if (out->verdict == DECIDE_DENY)
            terminal_text(in, out);
        else
            PRINT(out, "%s", out->detail);
        return;
    }
}

enum decide_verdict
decide_judge(const struct decide_input *in, struct decide_result *out)
{
    memset(out, 0, sizeof(*out));
    if (!denied_first(in, out) && !unasked(in, out)) {
        switch (in->caller) {
        case DECIDE_CHAT:
            chat_rules(in, out);
            break;
        case DECIDE_RUN_API:
            run_api_rules(in, out);
            break;
        case DECIDE_TERMINAL:
            terminal_rules(in, out);
            break;
        }
    }
    /* rule 16: the run API can always ask (its approvals wait in the
     * store) */
    if (out->verdict == DECIDE_ASK && !in->can_ask &&
        in->caller != DECIDE_RUN_API) {
        out->list = DECIDE_LIST_NONE;
        by(out, DECIDE_BY_CANNOT_ASK);
    }
    word(in, out);
    return out->verdict;
}
