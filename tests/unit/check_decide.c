/*
 * check_decide.c - the one decision engine (registry/decide.h): one
 * table, each row a proposed call as one caller sees it and the verdict
 * and reason the engine must give; then the sentences each caller's
 * tests assert.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/decide.h"

#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

/* Flags of a row. */
enum {
    SIDE = 1 << 0,  /* the action has side effects */
    AUTO = 1 << 1,  /* its plugin auto-approves it */
    NEVER = 1 << 2, /* policy.actions: approval: never */
    OFF = 1 << 3,   /* the kill switch: policy.sideEffects: false */
    ASKS = 1 << 4,  /* the caller can ask (a ticket key, a prompt) */
    PAGE = 1 << 5,  /* a page tool */
    EDIT = 1 << 6,  /* a file_edit tool */
};

#define CHAT DECIDE_CHAT
#define RUN DECIDE_RUN_API
#define TERM DECIDE_TERMINAL

struct row {
    int line;
    enum decide_caller caller;
    const char *tool;
    const char *args;   /* JSON, or NULL: {} */
    unsigned flags;
    const char *policy; /* plugins.config.permission as JSON, or NULL */
    enum decide_trust trust;
    const char *site_rules, *user_rules; /* JSON arrays, or NULL */
    enum decide_mode mode;
    const char *allow, *deny; /* compiled terminal rules, or NULL */
    enum decide_hook hook;
    enum decide_verdict want;
    enum decide_reason why;
};

/* A terminal rule `Bash(git:*)` and `Bash(git status)`, compiled. */
#define GIT_PREFIX                                                           \
    "[{\"tool\":\"Bash\",\"arg\":\"command\",\"pattern\":\"git\","           \
    "\"match\":\"prefix\"}]"
#define GIT_STATUS                                                           \
    "[{\"tool\":\"Bash\",\"arg\":\"command\",\"pattern\":\"git status\","    \
    "\"match\":\"exact\"}]"
#define DENY_ADD "{\"deny\":[\"shop.add\"]}"
#define ALLOW_ADD "{\"allow\":[\"shop.add\"]}"
#define SITE_RULE                                                            \
    "[{\"action\":\"shop.add\",\"arg\":\"email\",\"pattern\":\"*@ex.com\"}]"
#define EMAIL "{\"email\":\"Ann@EX.com\"}"
#define GIT "{\"command\":\"git status\"}"
#define GITX "{\"command\":\"git status -s\"}"
#define RM "{\"command\":\"rm -rf x\"}"
#define R(...) {__LINE__, __VA_ARGS__}

/* clang-format off */
static const struct row rows[] = {
    /* --- the chat ------------------------------------------------------ */
    R(CHAT, "shop.search", NULL, ASKS, .want = DECIDE_RUN,
      .why = DECIDE_BY_NO_SIDE_EFFECTS),
    R(CHAT, "shop.add", NULL, SIDE | ASKS, .want = DECIDE_ASK,
      .why = DECIDE_BY_DEFAULT),
    R(CHAT, "page.cart", NULL, SIDE | PAGE | ASKS, DENY_ADD,
      .want = DECIDE_ELSEWHERE, .why = DECIDE_BY_PAGE_TOOL),
    R(CHAT, "shop.add", NULL, SIDE, .want = DECIDE_DENY,
      .why = DECIDE_BY_CANNOT_ASK),
    R(CHAT, "shop.add", NULL, SIDE | ASKS | OFF, .want = DECIDE_DENY,
      .why = DECIDE_BY_KILL_SWITCH),
    R(CHAT, "shop.add", NULL, SIDE | ASKS | OFF | AUTO | NEVER,
      .want = DECIDE_DENY, .why = DECIDE_BY_KILL_SWITCH),
    /* the kill switch stops side effects only */
    R(CHAT, "shop.search", NULL, ASKS | OFF, .want = DECIDE_RUN,
      .why = DECIDE_BY_NO_SIDE_EFFECTS),
    /* a deny entry beats every allow, and is named before the switch */
    R(CHAT, "shop.add", NULL, SIDE | ASKS | OFF, DENY_ADD,
      .want = DECIDE_DENY, .why = DECIDE_BY_POLICY_DENY),
    R(CHAT, "shop.add", NULL, ASKS | AUTO | NEVER, DENY_ADD,
      .want = DECIDE_DENY, .why = DECIDE_BY_POLICY_DENY),
    R(CHAT, "shop.add", NULL, SIDE | ASKS | AUTO, .want = DECIDE_RUN,
      .why = DECIDE_BY_AUTO_APPROVED),
    R(CHAT, "shop.add", NULL, SIDE | ASKS | NEVER, .want = DECIDE_RUN,
      .why = DECIDE_BY_APPROVAL_NEVER),
    R(CHAT, "shop.add", NULL, SIDE, ALLOW_ADD, .want = DECIDE_RUN,
      .why = DECIDE_BY_POLICY_ALLOW),
    R(CHAT, "shop.add", NULL, SIDE | ASKS, "{\"default\":\"allow\"}",
      .want = DECIDE_RUN, .why = DECIDE_BY_DEFAULT),
    R(CHAT, "shop.add", NULL, SIDE | ASKS, "{\"default\":\"deny\"}",
      .want = DECIDE_DENY, .why = DECIDE_BY_DEFAULT),
    R(CHAT, "shop.add", NULL, SIDE | ASKS, "{\"default\":\"ask\"}",
      .want = DECIDE_ASK, .why = DECIDE_BY_DEFAULT),
    /* a default deny stops side effects only: the rest is unasked */
    R(CHAT, "shop.search", NULL, ASKS, "{\"default\":\"deny\"}",
      .want = DECIDE_RUN, .why = DECIDE_BY_NO_SIDE_EFFECTS),
    /* the run API's and the terminal's rules are not the chat's */
    R(CHAT, "shop.add", EMAIL, SIDE | ASKS, .trust = DECIDE_AUTONOMOUS,
      .site_rules = SITE_RULE, .mode = DECIDE_MODE_BYPASS,
      .allow = "[\"shop.add\"]", .want = DECIDE_ASK,
      .why = DECIDE_BY_DEFAULT),
    R(CHAT, "shop.search", NULL, ASKS, .deny = "[\"shop.search\"]",
      .want = DECIDE_RUN, .why = DECIDE_BY_NO_SIDE_EFFECTS),

    /* --- the run API --------------------------------------------------- */
    R(RUN, "shop.search", NULL, 0, .want = DECIDE_RUN,
      .why = DECIDE_BY_NO_SIDE_EFFECTS),
    R(RUN, "shop.search", NULL, 0, "{\"deny\":[\"shop.search\"]}",
      .want = DECIDE_DENY, .why = DECIDE_BY_POLICY_DENY),
    R(RUN, "shop.add", NULL, SIDE | OFF, .trust = DECIDE_AUTONOMOUS,
      .want = DECIDE_DENY, .why = DECIDE_BY_KILL_SWITCH),
    R(RUN, "shop.add", NULL, SIDE | OFF | AUTO, .want = DECIDE_DENY,
      .why = DECIDE_BY_KILL_SWITCH),
    R(RUN, "shop.add", NULL, SIDE | OFF, DENY_ADD, .want = DECIDE_DENY,
      .why = DECIDE_BY_POLICY_DENY),
    R(RUN, "shop.add", NULL, SIDE | AUTO, DENY_ADD, .want = DECIDE_DENY,
      .why = DECIDE_BY_POLICY_DENY),
    R(RUN, "shop.add", NULL, SIDE | AUTO, .want = DECIDE_RUN,
      .why = DECIDE_BY_AUTO_APPROVED),
    /* approval: never is the chat's: the run API asks */
    R(RUN, "shop.add", NULL, SIDE | NEVER, .want = DECIDE_ASK,
      .why = DECIDE_BY_SUPERVISED),
    /* the run API can always ask */
    R(RUN, "shop.add", NULL, SIDE, .want = DECIDE_ASK,
      .why = DECIDE_BY_SUPERVISED),
    R(RUN, "shop.add", EMAIL, SIDE, ALLOW_ADD, .site_rules = SITE_RULE,
      .want = DECIDE_ASK, .why = DECIDE_BY_SUPERVISED),
    R(RUN, "shop.add", NULL, SIDE, .trust = DECIDE_AUTONOMOUS,
      .want = DECIDE_RUN, .why = DECIDE_BY_AUTONOMOUS),
    R(RUN, "shop.add", NULL, SIDE, .trust = DECIDE_DELEGATED,
      .want = DECIDE_ASK, .why = DECIDE_BY_DELEGATED_ASK),
    /* a site rule on an argument, case folded */
    R(RUN, "shop.add", EMAIL, SIDE, .trust = DECIDE_DELEGATED,
      .site_rules = SITE_RULE, .want = DECIDE_RUN,
      .why = DECIDE_BY_DELEGATED_RULE),
    R(RUN, "shop.add", "{\"email\":\"a@other.org\"}", SIDE,
      .trust = DECIDE_DELEGATED, .site_rules = SITE_RULE,
      .want = DECIDE_ASK, .why = DECIDE_BY_DELEGATED_ASK),
    R(RUN, "shop.add", NULL, SIDE, .trust = DECIDE_DELEGATED,
      .user_rules = "[{\"action\":\"shop.add\"}]", .want = DECIDE_RUN,
      .why = DECIDE_BY_DELEGATED_RULE),
    /* a rule must say "action": another spelling allows nothing */
    R(RUN, "shop.add", NULL, SIDE, .trust = DECIDE_DELEGATED,
      .user_rules = "[{\"tool\":\"shop.add\"},\"shop.add\"]",
      .want = DECIDE_ASK, .why = DECIDE_BY_DELEGATED_ASK),
    R(RUN, "shop.add", NULL, SIDE, ALLOW_ADD, .trust = DECIDE_DELEGATED,
      .want = DECIDE_RUN, .why = DECIDE_BY_DELEGATED_RULE),
    /* the policy's default is not the run API's: trust levels are */
    R(RUN, "shop.add", NULL, SIDE, "{\"default\":\"allow\"}",
      .want = DECIDE_ASK, .why = DECIDE_BY_SUPERVISED),
    R(RUN, "shop.add", NULL, SIDE | ASKS, "{\"default\":\"deny\"}",
      .trust = DECIDE_AUTONOMOUS, .want = DECIDE_RUN,
      .why = DECIDE_BY_AUTONOMOUS),

    /* --- the terminal -------------------------------------------------- */
    R(TERM, "Read", NULL, EDIT, .mode = DECIDE_MODE_DEFAULT,
      .want = DECIDE_RUN, .why = DECIDE_BY_NO_SIDE_EFFECTS),
    R(TERM, "Read", NULL, 0, .mode = DECIDE_MODE_PLAN, .want = DECIDE_RUN,
      .why = DECIDE_BY_NO_SIDE_EFFECTS),
    R(TERM, "Read", NULL, 0, .mode = DECIDE_MODE_DONT_ASK,
      .want = DECIDE_RUN, .why = DECIDE_BY_NO_SIDE_EFFECTS),
    R(TERM, "Bash", RM, SIDE | ASKS, .mode = DECIDE_MODE_DEFAULT,
      .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    R(TERM, "Bash", RM, SIDE, .mode = DECIDE_MODE_DEFAULT,
      .want = DECIDE_DENY, .why = DECIDE_BY_CANNOT_ASK),
    R(TERM, "Write", NULL, SIDE | EDIT, .mode = DECIDE_MODE_ACCEPT_EDITS,
      .want = DECIDE_RUN, .why = DECIDE_BY_MODE_ACCEPT_EDITS),
    R(TERM, "Bash", RM, SIDE | ASKS, .mode = DECIDE_MODE_ACCEPT_EDITS,
      .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    R(TERM, "Bash", RM, SIDE, .mode = DECIDE_MODE_BYPASS,
      .want = DECIDE_RUN, .why = DECIDE_BY_MODE_BYPASS),
    R(TERM, "Write", NULL, SIDE | EDIT | ASKS, .mode = DECIDE_MODE_PLAN,
      .want = DECIDE_DENY, .why = DECIDE_BY_MODE_PLAN),
    R(TERM, "Bash", RM, SIDE | ASKS, .mode = DECIDE_MODE_DONT_ASK,
      .want = DECIDE_DENY, .why = DECIDE_BY_MODE_DONT_ASK),
    R(TERM, "Bash", RM, SIDE, .mode = DECIDE_MODE_DONT_ASK,
      .allow = "[\"Bash\"]", .want = DECIDE_RUN,
      .why = DECIDE_BY_RULE_ALLOW),
    /* a prefix rule, case-sensitive */
    R(TERM, "Bash", GIT, SIDE, .mode = DECIDE_MODE_DONT_ASK,
      .allow = GIT_PREFIX, .want = DECIDE_RUN, .why = DECIDE_BY_RULE_ALLOW),
    R(TERM, "Bash", "{\"command\":\"GIT status\"}", SIDE | ASKS,
      .allow = GIT_PREFIX, .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    R(TERM, "Bash", RM, SIDE | ASKS, .allow = GIT_PREFIX,
      .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    /* an exact rule: that command only */
    R(TERM, "Bash", GIT, SIDE | ASKS, .allow = GIT_STATUS,
      .want = DECIDE_RUN, .why = DECIDE_BY_RULE_ALLOW),
    R(TERM, "Bash", GITX, SIDE | ASKS, .allow = GIT_STATUS,
      .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    /* a pattern needs a command: a tool without one never matches */
    R(TERM, "Write", NULL, SIDE | EDIT | ASKS,
      .allow = "[{\"tool\":\"Write\",\"arg\":\"command\",\"pattern\":\"x\","
               "\"match\":\"prefix\"}]",
      .want = DECIDE_ASK, .why = DECIDE_BY_MODE_ASK),
    /* deny beats allow and bypass, and side-effect-free tools too */
    R(TERM, "Bash", GIT, SIDE, .mode = DECIDE_MODE_BYPASS,
      .allow = "[\"Bash\"]", .deny = GIT_PREFIX, .want = DECIDE_DENY,
      .why = DECIDE_BY_RULE_DENY),
    R(TERM, "Read", NULL, 0, .deny = "[\"Read\"]", .want = DECIDE_DENY,
      .why = DECIDE_BY_RULE_DENY),
    /* the site's policy, kill switch and trust are not the terminal's */
    R(TERM, "Bash", RM, SIDE | OFF | AUTO | NEVER | ASKS,
      "{\"deny\":[\"Bash\"],\"default\":\"allow\"}",
      .trust = DECIDE_AUTONOMOUS, .want = DECIDE_ASK,
      .why = DECIDE_BY_MODE_ASK),

    /* --- hooks: for every caller ------------------------------------- */
    R(TERM, "Bash", RM, SIDE, .mode = DECIDE_MODE_BYPASS,
      .allow = "[\"Bash\"]", .hook = DECIDE_HOOK_DENY, .want = DECIDE_DENY,
      .why = DECIDE_BY_HOOK_DENY),
    R(TERM, "Read", NULL, 0, .hook = DECIDE_HOOK_DENY, .want = DECIDE_DENY,
      .why = DECIDE_BY_HOOK_DENY),
    R(CHAT, "shop.add", NULL, SIDE | AUTO | PAGE, ALLOW_ADD,
      .hook = DECIDE_HOOK_DENY, .want = DECIDE_DENY,
      .why = DECIDE_BY_HOOK_DENY),
    R(RUN, "shop.add", NULL, SIDE, .trust = DECIDE_AUTONOMOUS,
      .hook = DECIDE_HOOK_DENY, .want = DECIDE_DENY,
      .why = DECIDE_BY_HOOK_DENY),
    /* a hook's allow beats the mode, not a deny rule or the switch */
    R(TERM, "Bash", RM, SIDE, .mode = DECIDE_MODE_PLAN,
      .hook = DECIDE_HOOK_ALLOW, .want = DECIDE_RUN,
      .why = DECIDE_BY_HOOK_ALLOW),
    R(TERM, "Bash", RM, SIDE, .deny = "[\"Bash\"]",
      .hook = DECIDE_HOOK_ALLOW, .want = DECIDE_DENY,
      .why = DECIDE_BY_RULE_DENY),
    R(CHAT, "shop.add", NULL, SIDE | OFF, .hook = DECIDE_HOOK_ALLOW,
      .want = DECIDE_DENY, .why = DECIDE_BY_KILL_SWITCH),
    R(RUN, "shop.add", NULL, SIDE, DENY_ADD, .hook = DECIDE_HOOK_ALLOW,
      .want = DECIDE_DENY, .why = DECIDE_BY_POLICY_DENY),
    R(RUN, "shop.add", NULL, SIDE, .hook = DECIDE_HOOK_ALLOW,
      .want = DECIDE_RUN, .why = DECIDE_BY_HOOK_ALLOW),
    /* a hook's ask asks even of a call that would run; no one to ask:
     * deny */
    R(TERM, "Read", NULL, ASKS, .mode = DECIDE_MODE_BYPASS,
      .allow = "[\"Read\"]", .hook = DECIDE_HOOK_ASK, .want = DECIDE_ASK,
      .why = DECIDE_BY_HOOK_ASK),
    R(TERM, "Read", NULL, 0, .hook = DECIDE_HOOK_ASK, .want = DECIDE_DENY,
      .why = DECIDE_BY_CANNOT_ASK),
    R(CHAT, "shop.search", NULL, ASKS, .hook = DECIDE_HOOK_ASK,
      .want = DECIDE_ASK, .why = DECIDE_BY_HOOK_ASK),
    R(RUN, "shop.add", NULL, SIDE | AUTO, .hook = DECIDE_HOOK_ASK,
      .want = DECIDE_ASK, .why = DECIDE_BY_HOOK_ASK),
};
/* clang-format on */

static json_t *
load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);

    ck_assert_msg(j != NULL, "%s: %s", text, jerr.text);
    return j;
}

static json_t *
load_or_null(const char *text)
{
    return text ? load(text) : NULL;
}

/* The input a row describes; its JSON in `own` (freed by the caller). */
static void
input_of(const struct row *r, struct decide_input *in,
         struct permission_policy *p, json_t *own[6])
{
    struct status_error err = {0};

    own[0] = r->args ? load(r->args) : json_object();
    own[1] = load_or_null(r->policy);
    own[2] = load_or_null(r->site_rules);
    own[3] = load_or_null(r->user_rules);
    own[4] = load_or_null(r->allow);
    own[5] = load_or_null(r->deny);
    ck_assert_int_eq(permission_policy_from_json(own[1], p, &err), 0);
    *in = (struct decide_input){
        .caller = r->caller,
        .call = {r->tool, own[0]},
        .page_tool = r->flags & PAGE,
        .side_effects = r->flags & SIDE,
        .auto_approved = r->flags & AUTO,
        .approval_never = r->flags & NEVER,
        .side_effects_off = r->flags & OFF,
        .can_ask = r->flags & ASKS,
        .policy = r->policy ? p : NULL,
        .trust = r->trust,
        .site_rules = own[2],
        .user_rules = own[3],
        .mode = r->mode,
        .edit = r->flags & EDIT,
        .allow_rules = own[4],
        .deny_rules = own[5],
        .hook = r->hook,
    };
}

START_TEST(table)
{
    const struct row *r = &rows[_i];
    struct decide_input in;
    struct decide_result out;
    struct permission_policy p;
    json_t *own[6];

    input_of(r, &in, &p, own);
    ck_assert_int_eq(decide_judge(&in, &out), out.verdict);
    ck_assert_msg(out.verdict == r->want && out.reason == r->why,
                  "row at line %d: %s by %d, want %s by %d", r->line,
                  decide_verdict_name(out.verdict), out.reason,
                  decide_verdict_name(r->want), r->why);
    ck_assert_ptr_nonnull(out.detail);
    ck_assert_int_gt(strlen(out.text), 0);
    for (size_t k = 0; k < ARRAY_SIZE(own); k++)
        json_decref(own[k]);
}
END_TEST

/* One call judged: its sentence. */
static const char *
say(struct decide_input *in, struct decide_result *out)
{
    json_t *args = json_object();

    in->call.args = args;
    decide_judge(in, out);
    json_decref(args);
    return out->text;
}

/* The sentences the chat's HTTP tests and its browser read. */
START_TEST(chat_words)
{
    struct decide_input in = {.caller = DECIDE_CHAT,
                              .call = {"shop.add", NULL},
                              .side_effects = true,
                              .can_ask = true};
    struct decide_result out;
    json_t *cfg = load("{\"default\":\"deny\",\"deny\":[\"x\",\"shop.add\"]}");
    struct permission_policy p;
    struct status_error err = {0};

    ck_assert_str_eq(say(&in, &out), "shop.add changes something on this "
                                     "site, so it runs only when you "
                                     "approve it");
    in.can_ask = false;
    ck_assert_str_eq(say(&in, &out),
                     "not run: this action needs the visitor's approval, "
                     "and this site has no auth.secretFile to sign it with");
    in.side_effects_off = true;
    ck_assert_str_eq(say(&in, &out),
                     "not run: actions with side effects are switched off "
                     "on this site (policy.sideEffects)");
    ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), 0);
    in.policy = &p;
    ck_assert_str_eq(say(&in, &out),
                     "not run: the site's permission policy denies this "
                     "call (a deny entry of the permission policy covers "
                     "this call)");
    ck_assert_int_eq(out.list, DECIDE_LIST_POLICY_DENY);
    ck_assert_uint_eq(out.index, 1);
    in.call.tool = "shop.remove";
    in.side_effects_off = false;
    ck_assert_str_eq(say(&in, &out),
                     "not run: the site's permission policy denies this "
                     "call (no entry covers this call; the policy denies "
                     "by default)");
    json_decref(cfg);
}
END_TEST

/* The run API's: the model's sentence quotes the audit's reason. */
START_TEST(run_api_words)
{
    struct decide_input in = {.caller = DECIDE_RUN_API,
                              .call = {"shop.add", NULL},
                              .side_effects = true,
                              .side_effects_off = true};
    struct decide_result out;

    ck_assert_str_eq(say(&in, &out),
                     "denied by the site's policy: actions with side "
                     "effects are switched off on this site; the action "
                     "did not run");
    ck_assert_str_eq(out.detail, "actions with side effects are switched "
                                 "off on this site");
    in.side_effects_off = false;
    in.trust = DECIDE_DELEGATED;
    ck_assert_str_eq(say(&in, &out), "no allow rule covers this call; the "
                                     "user must approve it");
    in.trust = DECIDE_SUPERVISED;
    ck_assert_str_eq(say(&in, &out), "every action with side effects needs "
                                     "the user's approval");
    in.auto_approved = true;
    say(&in, &out);
    ck_assert_str_eq(out.detail, "its plugin says it needs no approval");
}
END_TEST

/* The terminal's: the tool_result and its permission_denied message. */
START_TEST(terminal_words)
{
    json_t *deny = load("[\"Bash\"]");
    struct decide_input in = {.caller = DECIDE_TERMINAL,
                              .call = {"Bash", NULL},
                              .side_effects = true,
                              .mode = DECIDE_MODE_ACCEPT_EDITS};
    struct decide_result out;

    ck_assert_str_eq(say(&in, &out),
                     "Permission to use Bash denied: it has side effects "
                     "and the permission mode acceptEdits does not allow it "
                     "without asking (allow it with --allowedTools or "
                     "--permission-mode).");
    in.mode = DECIDE_MODE_PLAN;
    ck_assert_str_eq(say(&in, &out), "Permission to use Bash denied: plan "
                                     "mode runs nothing with side effects.");
    in.deny_rules = deny;
    ck_assert_str_eq(say(&in, &out), "Permission to use Bash denied: "
                                     "--disallowedTools forbids this call.");
    ck_assert_int_eq(out.list, DECIDE_LIST_TERM_DENY);
    in.hook = DECIDE_HOOK_DENY;
    in.hook_reason = "the hook says no";
    ck_assert_str_eq(say(&in, &out),
                     "Permission to use Bash denied: the hook says no.");
    json_decref(deny);
}
END_TEST

/* Compiled rules compare as the terminal always did: byte for byte, no
 * glob, no bound on the command's length; an unknown kind fails closed. */
START_TEST(literal_entries)
{
    json_t *prefix = load("{\"tool\":\"Bash\",\"arg\":\"command\","
                          "\"pattern\":\"a*\",\"match\":\"prefix\"}");
    json_t *odd = load("{\"tool\":\"Bash\",\"arg\":\"command\","
                       "\"pattern\":\"a\",\"match\":\"regex\"}");
    json_t *star = json_pack("{s:s}", "command", "a*b");
    json_t *plain = json_pack("{s:s}", "command", "ab");
    struct permission_call c = {"Bash", star};
    struct status_error err = {0};
    struct permission_policy p;
    json_t *cfg = load("{\"allow\":[{\"tool\":\"Bash\",\"arg\":\"command\","
                       "\"pattern\":\"a\",\"match\":\"prefix\"}]}");

    ck_assert(permission_entry_matches(prefix, &c, PERMISSION_ALLOW_LIST));
    c.args = plain;
    ck_assert(!permission_entry_matches(prefix, &c, PERMISSION_ALLOW_LIST));
    ck_assert(!permission_entry_matches(odd, &c, PERMISSION_ALLOW_LIST));
    ck_assert(permission_entry_matches(odd, &c, PERMISSION_DENY_LIST));
    /* agent.yaml has no "match": the policy reader refuses it */
    ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "'match'"));
    json_decref(prefix);
    json_decref(odd);
    json_decref(star);
    json_decref(plain);
    json_decref(cfg);
}
END_TEST

Suite *
decide_suite(void)
{
    Suite *s = suite_create("decide");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, table, 0, (int)ARRAY_SIZE(rows));
    tcase_add_test(tc, chat_words);
    tcase_add_test(tc, run_api_words);
    tcase_add_test(tc, terminal_words);
    tcase_add_test(tc, literal_entries);
    suite_add_tcase(s, tc);
    return s;
}
