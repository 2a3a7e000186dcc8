/*
 * check_policy.c - who may run an action with side effects (policy.h,
 * the run API's input to registry/decide.h): deny entries and the kill
 * switch first, then the trust level and the allow rules.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/policy.h"
#include "core/status.h"
#include "registry/permission.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

START_TEST(verdicts)
{
    json_t *site = json_loads("[{\"action\":\"shop.addReview\",\"arg\":"
                              "\"email\",\"pattern\":\"*@example.com\"}]",
                              0, NULL);
    json_t *mine = json_loads("[{\"action\":\"mail.send\"}]", 0, NULL);
    json_t *ok_args = json_loads("{\"email\":\"Ann@EXAMPLE.com\"}", 0, NULL);
    json_t *other = json_loads("{\"email\":\"ann@elsewhere.org\"}", 0, NULL);
    json_t *none = json_object();
    static const struct {
        bool enabled, side;
        enum store_trust trust;
        const char *action;
        int args; /* 0 ok_args, 1 other, 2 none */
        enum policy_verdict want;
    } cases[] = {
        /* no side effects: always */
        {false, false, STORE_SUPERVISED, "shop.search", 2, POLICY_ALLOW},
        /* the kill switch beats every trust level and rule */
        {false, true, STORE_AUTONOMOUS, "shop.addReview", 0, POLICY_DENY},
        {false, true, STORE_DELEGATED, "shop.addReview", 0, POLICY_DENY},
        {true, true, STORE_AUTONOMOUS, "shop.addReview", 1, POLICY_ALLOW},
        {true, true, STORE_SUPERVISED, "shop.addReview", 0, POLICY_APPROVE},
        {true, true, STORE_SUPERVISED, "mail.send", 2, POLICY_APPROVE},
        /* delegated: the site's rule on an argument, case folded */
        {true, true, STORE_DELEGATED, "shop.addReview", 0, POLICY_ALLOW},
        {true, true, STORE_DELEGATED, "shop.addReview", 1, POLICY_APPROVE},
        {true, true, STORE_DELEGATED, "shop.addReview", 2, POLICY_APPROVE},
        /* ... and the user's own rule, for every call of the action */
        {true, true, STORE_DELEGATED, "mail.send", 2, POLICY_ALLOW},
        {true, true, STORE_DELEGATED, "mail.delete", 2, POLICY_APPROVE},
    };
    const json_t *args[] = {ok_args, other, none};

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct policy_user u = {cases[i].trust, mine};
        struct policy_call c = {cases[i].action, cases[i].side,
                                args[cases[i].args], false};
        const char *reason = NULL;
        enum policy_verdict v =
            policy_decide(cases[i].enabled, site, NULL, &u, &c, &reason);
        ck_assert_msg(v == cases[i].want, "case %zu: %d, want %d", i, v,
                      cases[i].want);
        ck_assert_ptr_nonnull(reason);
    }
    json_decref(site);
    json_decref(mine);
    json_decref(ok_args);
    json_decref(other);
    json_decref(none);
}
END_TEST

START_TEST(half_rules_allow_nothing)
{
    json_t *args = json_loads("{\"email\":\"a@b.c\"}", 0, NULL);
    struct policy_call c = {"x.y", true, args, false};
    const char *reason;
    static const char *const rules[] = {
        "{\"action\":\"x.y\",\"arg\":\"email\"}",       /* no pattern */
        "{\"action\":\"x.y\",\"arg\":5,\"pattern\":\"*\"}", /* arg not text */
        "{\"arg\":\"email\",\"pattern\":\"*\"}",        /* no action */
        "{\"action\":\"x.y\",\"arg\":\"phone\",\"pattern\":\"*\"}",
    };

    for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
        json_t *r = json_pack("[o]", json_loads(rules[i], 0, NULL));
        struct policy_user delegated = {STORE_DELEGATED, r};

        /* as the site's rules and as the user's own: the user is asked */
        ck_assert_msg(policy_decide(true, r, NULL, &delegated, &c,
                                    &reason) == POLICY_APPROVE,
                      "%s", rules[i]);
        json_decref(r);
    }
    json_decref(args);
}
END_TEST

/* The site's permission policy (plugins.config.permission): its deny
 * entries beat every trust level and the kill switch's absence, also for
 * a call without side effects; its allow entries are site allow rules
 * for a delegated user; its default is not the run API's. */
START_TEST(site_permission_policy)
{
    json_t *cfg = json_loads(
        "{\"default\":\"allow\",\"deny\":[\"shop.addReview\","
        "{\"signature\":\"mail.send(to=*@evil.example)\"}],"
        "\"allow\":[{\"tool\":\"mail.send\",\"arg\":\"to\","
        "\"pattern\":\"*@example.com\"}]}",
        0, NULL);
    json_t *ok = json_loads("{\"to\":\"ann@example.com\"}", 0, NULL);
    json_t *evil = json_loads("{\"to\":\"eve@evil.example\"}", 0, NULL);
    json_t *other = json_loads("{\"to\":\"bob@other.org\"}", 0, NULL);
    struct permission_policy pol;
    struct status_error err = {0};
    const char *reason;
    struct policy_user autonomous = {STORE_AUTONOMOUS, NULL};
    struct policy_user delegated = {STORE_DELEGATED, NULL};
    struct policy_user supervised = {STORE_SUPERVISED, NULL};
    struct policy_call review = {"shop.addReview", false, NULL, false};
    struct policy_call to_ok = {"mail.send", true, ok, false};
    struct policy_call to_evil = {"mail.send", true, evil, false};
    struct policy_call to_other = {"mail.send", true, other, false};

    ck_assert_int_eq(permission_policy_from_json(cfg, &pol, &err), 0);
    /* deny beats trust, and a read-only call */
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &autonomous, &review,
                                   &reason),
                     POLICY_DENY);
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &autonomous, &to_evil,
                                   &reason),
                     POLICY_DENY);
    ck_assert_ptr_nonnull(strstr(reason, "deny entry"));
    /* allow entries: a delegated user's site rule, not a supervised's */
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &delegated, &to_ok,
                                   &reason),
                     POLICY_ALLOW);
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &delegated, &to_other,
                                   &reason),
                     POLICY_APPROVE);
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &supervised, &to_ok,
                                   &reason),
                     POLICY_APPROVE);
    /* the kill switch still denies what an allow entry covers */
    ck_assert_int_eq(policy_decide(false, NULL, &pol, &delegated, &to_ok,
                                   &reason),
                     POLICY_DENY);
    json_decref(cfg);
    json_decref(ok);
    json_decref(evil);
    json_decref(other);
}
END_TEST

/* A tool its plugin auto-approves needs no approval at any trust level;
 * the kill switch and a deny entry still stop it. */
START_TEST(auto_approved_tools)
{
    json_t *cfg = json_loads("{\"deny\":[\"todo.plan\"]}", 0, NULL);
    struct permission_policy pol;
    struct status_error err = {0};
    const char *reason;
    struct policy_user supervised = {STORE_SUPERVISED, NULL};
    struct policy_call wave = {"hello.wave", true, NULL, true};
    struct policy_call plain = {"hello.wave", true, NULL, false};
    struct policy_call plan = {"todo.plan", true, NULL, true};

    ck_assert_int_eq(permission_policy_from_json(cfg, &pol, &err), 0);
    ck_assert_int_eq(policy_decide(true, NULL, NULL, &supervised, &wave,
                                   &reason),
                     POLICY_ALLOW);
    ck_assert_ptr_nonnull(strstr(reason, "needs no approval"));
    ck_assert_int_eq(policy_decide(true, NULL, NULL, &supervised, &plain,
                                   &reason),
                     POLICY_APPROVE);
    ck_assert_int_eq(policy_decide(false, NULL, NULL, &supervised, &wave,
                                   &reason),
                     POLICY_DENY);
    ck_assert_int_eq(policy_decide(true, NULL, &pol, &supervised, &plan,
                                   &reason),
                     POLICY_DENY);
    json_decref(cfg);
}
END_TEST

Suite *
policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, verdicts);
    tcase_add_test(tc, half_rules_allow_nothing);
    tcase_add_test(tc, site_permission_policy);
    tcase_add_test(tc, auto_approved_tools);
    suite_add_tcase(s, tc);
    return s;
}
