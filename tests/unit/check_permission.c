/*
 * check_permission.c - the permission policy engine (permission.h): deny
 * beats allow, each kind of entry, the signature, defaults, auto-approved
 * tools, bounded globs and the policy reader's errors.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/decide.h"
#include "registry/permission.h"

#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

static json_t *
load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

    ck_assert_msg(j != NULL, "%s: %s", text, jerr.text);
    return j;
}

/* What decided a verdict, as these tests read the engine's answer. */
enum source { BY_DENY, BY_AUTO, BY_ALLOW, BY_DEFAULT, BY_OTHER };

struct why {
    enum source source;
    size_t index;
};

static enum permission_verdict
verdict_of(const struct decide_result *d)
{
    switch (d->verdict) {
    case DECIDE_DENY:
        return PERMISSION_DENY;
    case DECIDE_ASK:
        return PERMISSION_ASK;
    case DECIDE_RUN:
    case DECIDE_ELSEWHERE:
        break;
    }
    return PERMISSION_ALLOW;
}

static enum source
source_of(enum decide_reason r)
{
    switch (r) {
    case DECIDE_BY_POLICY_DENY:
        return BY_DENY;
    case DECIDE_BY_AUTO_APPROVED:
        return BY_AUTO;
    case DECIDE_BY_POLICY_ALLOW:
        return BY_ALLOW;
    case DECIDE_BY_DEFAULT:
        return BY_DEFAULT;
    default:
        return BY_OTHER;
    }
}

/* The verdict of `policy_text` on tool(args_text), with what decided it:
 * the engine (registry/decide.h) judging a chat call with side effects,
 * which the site's permission policy alone decides. */
static enum permission_verdict
judge(const char *policy_text, const char *const *auto_approved,
      const char *tool, const char *args_text, struct why *why)
{
    json_t *cfg = load(policy_text);
    json_t *args = load(args_text);
    struct permission_policy p;
    struct status_error err = {0};
    struct decide_result d;
    struct decide_input in = {.caller = DECIDE_CHAT,
                              .call = {tool, args},
                              .side_effects = true,
                              .can_ask = true,
                              .policy = &p};

    ck_assert_msg(permission_policy_from_json(cfg, &p, &err) == 0, "%s: %s",
                  policy_text, err.text);
    for (const char *const *t = auto_approved; t && *t; t++)
        in.auto_approved = in.auto_approved || strcmp(*t, tool) == 0;
    decide_judge(&in, &d);
    ck_assert_ptr_nonnull(d.detail);
    if (why != NULL)
        *why = (struct why){source_of(d.reason), d.index};
    json_decref(args);
    json_decref(cfg);
    return verdict_of(&d);
}

START_TEST(deny_beats_allow)
{
    struct why why;
    static const char *const autos[] = {"mail.send", NULL};

    /* the same tool in both lists, by each kind of entry */
    ck_assert_int_eq(judge("{\"default\":\"allow\",\"allow\":[\"mail.send\"],"
                           "\"deny\":[\"mail.send\"]}",
                           NULL, "mail.send", "{}", &why),
                     PERMISSION_DENY);
    ck_assert_int_eq(why.source, BY_DENY);
    ck_assert_int_eq(why.index, 0);
    ck_assert_int_eq(
        judge("{\"allow\":[{\"signature\":\"mail.*\"}],"
              "\"deny\":[\"x\",{\"tool\":\"mail.send\",\"arg\":\"to\","
              "\"pattern\":\"*@evil.org\"}]}",
              NULL, "mail.send", "{\"to\":\"Bob@EVIL.org\"}", &why),
        PERMISSION_DENY);
    ck_assert_int_eq(why.index, 1);
    /* ... and over a tool its plugin auto-approves */
    ck_assert_int_eq(judge("{\"deny\":[{\"signature\":\"mail.send(*)\"}]}",
                           autos, "mail.send", "{\"to\":\"a\"}", &why),
                     PERMISSION_DENY);
    /* the deny entry does not cover this call: the allow list decides */
    ck_assert_int_eq(
        judge("{\"allow\":[{\"signature\":\"mail.*\"}],"
              "\"deny\":[{\"tool\":\"mail.send\",\"arg\":\"to\","
              "\"pattern\":\"*@evil.org\"}]}",
              NULL, "mail.send", "{\"to\":\"bob@good.org\"}", &why),
        PERMISSION_ALLOW);
    ck_assert_int_eq(why.source, BY_ALLOW);
}
END_TEST

START_TEST(match_kinds)
{
    struct why why;
    static const struct {
        const char *entry, *tool, *args;
        bool want;
    } cases[] = {
        /* by name, exact (no glob, case kept) */
        {"\"shop.search\"", "shop.search", "{}", true},
        {"\"shop.search\"", "shop.searchAll", "{}", false},
        {"\"shop.*\"", "shop.search", "{}", false},
        {"\"shop.search\"", "Shop.Search", "{}", false},
        {"{\"tool\":\"shop.search\"}", "shop.search", "{\"q\":1}", true},
        {"{\"action\":\"shop.search\"}", "shop.search", "{}", true},
        /* by argument value: a string argument, glob, case folded */
        {"{\"tool\":\"shop.addReview\",\"arg\":\"email\","
         "\"pattern\":\"*@example.com\"}",
         "shop.addReview", "{\"email\":\"Ann@EXAMPLE.com\"}", true},
        {"{\"tool\":\"shop.addReview\",\"arg\":\"email\","
         "\"pattern\":\"*@example.com\"}",
         "shop.addReview", "{\"email\":\"ann@example.org\"}", false},
        {"{\"tool\":\"shop.addReview\",\"arg\":\"email\","
         "\"pattern\":\"*@example.com\"}",
         "shop.other", "{\"email\":\"ann@example.com\"}", false},
        {"{\"tool\":\"shop.addReview\",\"arg\":\"email\",\"pattern\":\"*\"}",
         "shop.addReview", "{}", false},      /* missing */
        {"{\"tool\":\"shop.addReview\",\"arg\":\"n\",\"pattern\":\"*\"}",
         "shop.addReview", "{\"n\":5}", false}, /* not a string */
        {"{\"tool\":\"t\",\"arg\":\"c\",\"pattern\":\"[ab]?\"}", "t",
         "{\"c\":\"bz\"}", true},
        {"{\"tool\":\"t\",\"arg\":\"c\",\"pattern\":\"[!ab]?\"}", "t",
         "{\"c\":\"bz\"}", false},
        /* by signature glob */
        {"{\"signature\":\"mail.send(*to=*@example.com*)\"}", "mail.send",
         "{\"to\":\"a@example.com\",\"body\":\"hi\"}", true},
        {"{\"signature\":\"mail.send(body=hi, to=a@example.com)\"}",
         "mail.send", "{\"to\":\"a@example.com\",\"body\":\"hi\"}", true},
        {"{\"signature\":\"mail.send(to=a@example.com, body=hi)\"}",
         "mail.send", "{\"to\":\"a@example.com\",\"body\":\"hi\"}", false},
        {"{\"signature\":\"mail.send()\"}", "mail.send", "{}", true},
        {"{\"signature\":\"shop.*(*limit=5*)\"}", "shop.search",
         "{\"limit\":5,\"q\":\"x\"}", true},
        {"{\"signature\":\"shop.*(*limit=5*)\"}", "shop.search",
         "{\"limit\":\"50\"}", true}, /* a glob sees text: "5" starts "50" */
        {"{\"signature\":\"shop.*(*limit=5)\"}", "shop.search",
         "{\"limit\":50}", false},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char policy[512];

        snprintf(policy, sizeof(policy), "{\"allow\":[%s]}", cases[i].entry);
        ck_assert_msg(judge(policy, NULL, cases[i].tool, cases[i].args,
                            &why) ==
                          (cases[i].want ? PERMISSION_ALLOW : PERMISSION_ASK),
                      "case %zu: %s on %s%s", i, cases[i].entry,
                      cases[i].tool, cases[i].args);
    }
}
END_TEST

START_TEST(signature_sorted)
{
    json_t *args = load("{\"zeta\":\"last, unquoted\",\"alpha\":[1,2],"
                        "\"mid\":{\"b\":true,\"a\":null},\"num\":1.5}");
    struct permission_call call = {"x.tool", args};
    char buf[256];
    const char *want = "x.tool(alpha=[1,2], mid={\"a\":null,\"b\":true}, "
                       "num=1.5, zeta=last, unquoted)";
    int n = permission_signature(&call, buf, sizeof(buf));

    ck_assert_str_eq(buf, want);
    ck_assert_int_eq(n, (int)strlen(want));
    /* too small a buffer: -1, and a terminated prefix */
    ck_assert_int_eq(permission_signature(&call, buf, 10), -1);
    ck_assert_uint_lt(strlen(buf), 10);
    /* no arguments */
    call.args = NULL;
    ck_assert_int_eq(permission_signature(&call, buf, sizeof(buf)), 8);
    ck_assert_str_eq(buf, "x.tool()");
    json_decref(args);

    /* a NUL inside a string: the signature cannot be judged */
    args = json_object();
    json_object_set_new(args, "s", json_stringn("a\0b", 3));
    call.args = args;
    ck_assert_int_eq(permission_signature(&call, buf, sizeof(buf)), -1);
    json_decref(args);
}
END_TEST

START_TEST(defaults)
{
    struct why why;
    struct permission_policy p;
    struct status_error err = {0};
    struct decide_result d;
    struct decide_input in = {.caller = DECIDE_CHAT,
                              .call = {"a.b", NULL},
                              .side_effects = true,
                              .can_ask = true};

    ck_assert_int_eq(judge("{\"default\":\"allow\"}", NULL, "a.b", "{}", &why),
                     PERMISSION_ALLOW);
    ck_assert_int_eq(why.source, BY_DEFAULT);
    ck_assert_int_eq(judge("{\"default\":\"deny\",\"allow\":[\"x.y\"]}", NULL,
                           "a.b", "{}", &why),
                     PERMISSION_DENY);
    ck_assert_int_eq(judge("{\"default\":\"ask\"}", NULL, "a.b", "{}", &why),
                     PERMISSION_ASK);
    /* unset: ask; and no config at all is the same empty policy */
    ck_assert_int_eq(judge("{}", NULL, "a.b", "{}", &why), PERMISSION_ASK);
    ck_assert_int_eq(permission_policy_from_json(NULL, &p, &err), 0);
    in.policy = &p;
    ck_assert_int_eq(decide_judge(&in, &d), DECIDE_ASK);
    ck_assert_str_eq(permission_verdict_name(PERMISSION_ALLOW), "allow");
    ck_assert_str_eq(permission_verdict_name(PERMISSION_DENY), "deny");
    ck_assert_str_eq(permission_verdict_name(PERMISSION_ASK), "ask");
}
END_TEST

START_TEST(auto_approved)
{
    struct why why;
    static const char *const autos[] = {"web.search", "todo.list", NULL};

    ck_assert_int_eq(judge("{\"default\":\"deny\"}", autos, "web.search",
                           "{\"q\":\"x\"}", &why),
                     PERMISSION_ALLOW);
    ck_assert_int_eq(why.source, BY_AUTO);
    /* exact names only */
    ck_assert_int_eq(judge("{\"default\":\"deny\"}", autos, "web.searchAll",
                           "{}", &why),
                     PERMISSION_DENY);
    /* denied by an entry: denied */
    ck_assert_int_eq(
        judge("{\"deny\":[{\"tool\":\"web.search\",\"arg\":\"q\","
              "\"pattern\":\"*secret*\"}]}",
              autos, "web.search", "{\"q\":\"the SECRET plan\"}", &why),
        PERMISSION_DENY);
}
END_TEST

/* A backtracking glob against the longest subject answers at once, and a
 * subject past the bound falls the safe way for its list. */
START_TEST(bounded)
{
    static char value[BOUND_PERMISSION_SUBJECT + 2];
    const char *pattern = "*a*a*a*a*a*a*a*b";
    json_t *args = json_object();
    json_t *entry_sig = json_pack("{s:s}", "signature", pattern);
    json_t *entry_arg =
        json_pack("{s:s, s:s, s:s}", "tool", "t", "arg", "v", "pattern", "*");
    json_t *entry_sig_all = json_pack("{s:s}", "signature", "*");
    struct permission_call call = {"t", args};
    struct timespec t0, t1;
    double ms;

    /* just within the bound: "t(v=" + value + ")" */
    memset(value, 'a', BOUND_PERMISSION_SUBJECT - 5);
    json_object_set_new(args, "v", json_string(value));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 100; i++) {
        ck_assert(!permission_entry_matches(entry_sig, &call,
                                            PERMISSION_ALLOW_LIST));
        ck_assert(!permission_entry_matches(entry_sig, &call,
                                            PERMISSION_DENY_LIST));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    ck_assert_msg(ms < 2000, "200 pathological matches took %.0f ms", ms);
    ck_assert(permission_entry_matches(entry_sig_all, &call,
                                       PERMISSION_ALLOW_LIST));

    /* one byte more: no glob allows it, every deny glob catches it */
    memset(value, 'a', BOUND_PERMISSION_SUBJECT - 4);
    json_object_set_new(args, "v", json_string(value));
    ck_assert(!permission_entry_matches(entry_sig_all, &call,
                                        PERMISSION_ALLOW_LIST));
    ck_assert(permission_entry_matches(entry_sig, &call,
                                       PERMISSION_DENY_LIST));
    /* the same for one argument's value */
    memset(value, 'a', BOUND_PERMISSION_SUBJECT + 1);
    json_object_set_new(args, "v", json_string(value));
    ck_assert(!permission_entry_matches(entry_arg, &call,
                                        PERMISSION_ALLOW_LIST));
    ck_assert(permission_entry_matches(entry_arg, &call,
                                       PERMISSION_DENY_LIST));
    /* a NUL byte hides nothing from a deny glob */
    json_object_set_new(args, "v", json_stringn("ok\0rm -rf /", 11));
    ck_assert(!permission_entry_matches(entry_arg, &call,
                                        PERMISSION_ALLOW_LIST));
    ck_assert(permission_entry_matches(entry_arg, &call,
                                       PERMISSION_DENY_LIST));
    json_decref(entry_sig_all);
    json_decref(entry_arg);
    json_decref(entry_sig);
    json_decref(args);
}
END_TEST

START_TEST(bad_policies)
{
    static char long_glob[BOUND_PERMISSION_PATTERN + 64];
    static const struct {
        const char *json, *msg;
    } cases[] = {
        {"[]", "permission: must be a mapping"},
        {"{\"defualt\":\"ask\"}", "unknown key 'defualt'"},
        {"{\"default\":\"maybe\"}", "'default' must be allow, deny or ask"},
        {"{\"default\":true}", "'default' must be allow, deny or ask"},
        {"{\"allow\":\"x\"}", "'allow' must be a list"},
        {"{\"deny\":[5]}", "deny[0]: must be a tool name"},
        {"{\"deny\":[\"\"]}", "deny[0]: empty tool name"},
        {"{\"allow\":[\"a\",{}]}", "allow[1]: needs a 'tool' or a 'signature'"},
        {"{\"allow\":[{\"tool\":\"a\",\"arg\":\"x\"}]}",
         "allow[0]: 'arg' and 'pattern' go together"},
        {"{\"allow\":[{\"tool\":\"a\",\"pattern\":\"*\"}]}",
         "allow[0]: 'arg' and 'pattern' go together"},
        {"{\"allow\":[{\"arg\":\"x\",\"pattern\":\"*\"}]}",
         "allow[0]: needs a 'tool' or a 'signature'"},
        {"{\"allow\":[{\"tool\":\"a\",\"action\":\"a\"}]}",
         "allow[0]: give 'tool' or 'action', not both"},
        {"{\"allow\":[{\"tool\":\"a\",\"signature\":\"a()\"}]}",
         "allow[0]: 'signature' stands alone"},
        {"{\"allow\":[{\"tool\":\"a\",\"why\":\"x\"}]}",
         "allow[0]: unknown key 'why'"},
        {"{\"allow\":[{\"tool\":7}]}", "allow[0]: 'tool' must be text"},
        {"{\"allow\":[\"a\\u0000b\"]}",
         "allow[0]: a NUL byte in the tool name"},
        {"{\"deny\":[{\"tool\":\"a\\u0000b\"}]}",
         "deny[0]: a NUL byte in 'tool'"},
    };
    struct permission_policy p;
    json_t *cfg, *list;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct status_error err = {0};

        cfg = load(cases[i].json);
        ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), -1);
        ck_assert_int_eq(err.code, ST_CONFIG);
        ck_assert_msg(strstr(err.text, cases[i].msg) != NULL,
                      "%s: got \"%s\", want \"%s\"", cases[i].json, err.text,
                      cases[i].msg);
        json_decref(cfg);
    }

    /* a glob over its bound */
    memset(long_glob, '*', sizeof(long_glob) - 1);
    cfg = json_pack("{s:[{s:s}]}", "deny", "signature", long_glob);
    {
        struct status_error err = {0};
        ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.text, "deny[0]: 'signature' is "
                                               "longer than"));
    }
    json_decref(cfg);

    /* a list over its bound */
    list = json_array();
    for (int i = 0; i <= BOUND_PERMISSION_ENTRIES; i++)
        json_array_append_new(list, json_string("t"));
    cfg = json_pack("{s:o}", "allow", list);
    {
        struct status_error err = {0};
        ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.text, "'allow' has more than"));
    }
    json_decref(cfg);

    /* the good shapes together, null lists included */
    cfg = load("{\"default\":\"deny\",\"deny\":null,\"allow\":[\"a\","
               "{\"tool\":\"a\"},{\"action\":\"a\",\"arg\":\"x\","
               "\"pattern\":\"*\"},{\"signature\":\"a(*)\"}]}");
    {
        struct status_error err = {0};
        ck_assert_int_eq(permission_policy_from_json(cfg, &p, &err), 0);
        ck_assert_int_eq(p.fallback, PERMISSION_DENY);
        ck_assert_ptr_null(p.deny);
        ck_assert_int_eq(json_array_size(p.allow), 4);
    }
    json_decref(cfg);
}
END_TEST

/* Entries the reader would refuse still match nothing at match time (the
 * run API's rules reach the matcher unchecked). */
START_TEST(half_entries_match_nothing)
{
    json_t *args = load("{\"email\":\"a@b.c\"}");
    struct permission_call c = {"x.y", args};
    static const char *const entries[] = {
        "{}",
        "{\"tool\":\"x.y\",\"arg\":\"email\"}",
        "{\"tool\":\"x.y\",\"arg\":5,\"pattern\":\"*\"}",
        "{\"arg\":\"email\",\"pattern\":\"*\"}",
        "{\"tool\":\"x.y\",\"arg\":\"phone\",\"pattern\":\"*\"}",
        "42",
    };

    for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
        json_t *e = load(entries[i]);
        ck_assert_msg(!permission_entry_matches(e, &c, PERMISSION_ALLOW_LIST),
                      "%s", entries[i]);
        ck_assert_msg(!permission_entry_matches(e, &c, PERMISSION_DENY_LIST),
                      "%s", entries[i]);
        json_decref(e);
    }
    json_decref(args);
}
END_TEST

Suite *
permission_suite(void)
{
    Suite *s = suite_create("permission");
    TCase *tc = tcase_create("core");
    TCase *lim = tcase_create("limits");
    TCase *errs = tcase_create("errors");

    tcase_add_test(tc, deny_beats_allow);
    tcase_add_test(tc, match_kinds);
    tcase_add_test(tc, signature_sorted);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, auto_approved);
    tcase_add_test(lim, bounded);
    tcase_add_test(errs, bad_policies);
    tcase_add_test(errs, half_entries_match_nothing);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, lim);
    suite_add_tcase(s, errs);
    return s;
}
