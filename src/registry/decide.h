/*
 * decide.h - the one place that decides a proposed tool call: run it,
 * deny it (with the sentence the model reads), ask a person (with the
 * sentence the question shows), or leave it to the browser (a page
 * tool). The chat (http/chat.c), the run API (http/run.c, through
 * http/policy.h) and the terminal client (term/calls.c) each fill a
 * decide_input and keep only the transport of the answer: a signed
 * ticket, a store row, a terminal question or a can_use_tool request.
 *
 * The rules, in order; the first that applies decides. A rule applies to
 * the callers named after it (docs/internals/decisions.md has the table):
 *
 *   1. a hook denies                          deny   all
 *   2. a page tool                            elsewhere  chat
 *   3. a deny entry of the site's permission policy   deny  chat, run API
 *   4. a deny rule of the terminal (--disallowedTools) deny terminal
 *   5. the kill switch, for a call with side effects  deny  chat, run API
 *   6. a hook asks / a hook allows            ask / run   all
 *   7. no side effects                        run    all
 *   8. the plugin auto-approves the tool      run    chat, run API
 *   9. policy.actions says approval: never    run    chat
 *  10. an allow rule of the terminal          run    terminal
 *  11. the mode bypassPermissions             run    terminal
 *  12. an allow entry of the permission policy  run  chat
 *  13. the trust level: autonomous runs; delegated runs when a site rule,
 *      a user rule or an allow entry of the permission policy matches,
 *      else asks; supervised asks                      run API
 *  14. the mode: plan and dontAsk deny, acceptEdits runs a file edit;
 *      else ask                                        terminal
 *  15. the permission policy's default (ask when there is none)  chat
 *  16. an "ask" where the caller cannot ask    deny   chat, terminal
 *
 * So a hook's deny beats everything, and a hook's allow beats everything
 * but a deny (entries, rules, the kill switch); a deny entry beats every
 * allow. Each verdict is the one the three deciders gave before they
 * shared this engine; where two rules both deny, only the reason could
 * differ: the chat named the kill switch before a deny entry, and now
 * names the deny entry, as the run API always did.
 *
 * Pure: no I/O, no allocation, no global state; thread-safe.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_DECIDE_H
#define APP_DECIDE_H

#include "core/common.h"
#include "registry/permission.h"

struct json_t;

/* Who asks: the rules that apply and the words differ by caller. */
enum decide_caller {
    DECIDE_CHAT,     /* the web chat (http/chat.c) */
    DECIDE_RUN_API,  /* the run API (http/run.c, http/runapi.c) */
    DECIDE_TERMINAL, /* gemini-agent chat (term/calls.c) */
};

enum decide_verdict {
    DECIDE_RUN,       /* run it now */
    DECIDE_DENY,      /* never: the model reads decide_result.text */
    DECIDE_ASK,       /* a person decides; decide_result.text says why */
    DECIDE_ELSEWHERE, /* a page tool: the browser runs it */
};

/* The run API's trust levels (store_trust, in the same order). */
enum decide_trust {
    DECIDE_SUPERVISED,
    DECIDE_DELEGATED,
    DECIDE_AUTONOMOUS,
};

/* The terminal's permission modes (term_mode, in the same order). */
enum decide_mode {
    DECIDE_MODE_DEFAULT,
    DECIDE_MODE_ACCEPT_EDITS,
    DECIDE_MODE_BYPASS,
    DECIDE_MODE_PLAN,
    DECIDE_MODE_DONT_ASK,
};

/* A hook's answer on the call (none yet sets one: the engine is ready). */
enum decide_hook {
    DECIDE_HOOK_NONE,
    DECIDE_HOOK_ALLOW,
    DECIDE_HOOK_DENY,
    DECIDE_HOOK_ASK,
};

/* What decided: one code per rule above (and outcome, where a rule has
 * several). */
enum decide_reason {
    DECIDE_BY_HOOK_DENY,
    DECIDE_BY_PAGE_TOOL,
    DECIDE_BY_POLICY_DENY, /* list DECIDE_LIST_POLICY_DENY */
    DECIDE_BY_RULE_DENY,   /* list DECIDE_LIST_TERM_DENY */
    DECIDE_BY_KILL_SWITCH,
    DECIDE_BY_HOOK_ASK,
    DECIDE_BY_HOOK_ALLOW,
    DECIDE_BY_NO_SIDE_EFFECTS,
    DECIDE_BY_AUTO_APPROVED,
    DECIDE_BY_APPROVAL_NEVER,
    DECIDE_BY_RULE_ALLOW, /* list DECIDE_LIST_TERM_ALLOW */
    DECIDE_BY_MODE_BYPASS,
    DECIDE_BY_POLICY_ALLOW, /* list DECIDE_LIST_POLICY_ALLOW */
    DECIDE_BY_AUTONOMOUS,
    DECIDE_BY_DELEGATED_RULE, /* list: site rules, user rules or policy */
    DECIDE_BY_DELEGATED_ASK,
    DECIDE_BY_SUPERVISED,
    DECIDE_BY_MODE_PLAN,
    DECIDE_BY_MODE_DONT_ASK,
    DECIDE_BY_MODE_ACCEPT_EDITS,
    DECIDE_BY_MODE_ASK,   /* default mode, or acceptEdits on a non-edit */
    DECIDE_BY_DEFAULT,    /* the permission policy's default */
    DECIDE_BY_CANNOT_ASK, /* it would ask, and no one can be asked */
};

/* The list whose entry decided, with decide_result.index. */
enum decide_list {
    DECIDE_LIST_NONE,
    DECIDE_LIST_POLICY_DENY,
    DECIDE_LIST_POLICY_ALLOW,
    DECIDE_LIST_SITE_RULES,
    DECIDE_LIST_USER_RULES,
    DECIDE_LIST_TERM_DENY,
    DECIDE_LIST_TERM_ALLOW,
};

/*
 * One proposed call and all a caller knows of it. Fields a caller does
 * not use stay zero (a zeroed input with a caller and a call is valid).
 * Every pointer is borrowed for the call of decide() only.
 */
struct decide_input {
    enum decide_caller caller;
    struct permission_call call; /* the tool's name and its arguments */
    bool page_tool;              /* a page tool the browser declared */
    bool side_effects;           /* its declaration says so */
    bool auto_approved;          /* its plugin's auto_approved_tools() */
    bool approval_never;         /* policy.actions: approval: never */
    bool side_effects_off;       /* the kill switch (policy.sideEffects) */
    bool can_ask;                /* a ticket key / a prompt channel */
    /* the site's permission policy (plugins.config.permission); NULL:
     * none, which asks by default */
    const struct permission_policy *policy;
    /* the run API: the user's trust, the site's rules (policy.allow) and
     * the user's own, JSON arrays of {action, arg?, pattern?} or NULL */
    enum decide_trust trust;
    const struct json_t *site_rules, *user_rules;
    /* the terminal: its mode, whether the tool edits files, and its rules
     * compiled to permission entries (term/perm.h), arrays or NULL */
    enum decide_mode mode;
    bool edit;
    const struct json_t *allow_rules, *deny_rules;
    /* a hook's answer and its reason (NULL: none given) */
    enum decide_hook hook;
    const char *hook_reason;
};

/* Room for decide_result.text: the longest sentence with a tool name. */
#define DECIDE_TEXT_SIZE 1024

struct decide_result {
    enum decide_verdict verdict;
    enum decide_reason reason; /* what decided it */
    enum decide_list list;     /* the list whose entry decided, or NONE */
    size_t index;              /* ... and the entry's index in it */
    /* a short static sentence: the audit trail, the run API's card */
    const char *detail;
    /* the sentence the model reads (deny) or a person reads (ask), in
     * the caller's words; for run and elsewhere, `detail` again */
    char text[DECIDE_TEXT_SIZE];
};

/* Decide on `in` into `out` (fully written); returns out->verdict. */
enum decide_verdict decide_judge(const struct decide_input *in,
                                 struct decide_result *out);

/* "run", "deny", "ask" or "elsewhere". Static. */
const char *decide_verdict_name(enum decide_verdict v);

/* The mode's flag spelling: "default", "acceptEdits", "bypassPermissions",
 * "plan" or "dontAsk". Static. */
const char *decide_mode_name(enum decide_mode m);

#endif /* APP_DECIDE_H */
