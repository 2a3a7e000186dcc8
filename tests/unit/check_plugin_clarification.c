/*
 * check_plugin_clarification.c - the built-in plugin `clarification` and
 * the rules of questions and answers it shares with the host
 * (registry/question.c): normalising, refusing, answers checked against
 * the questions, and the ASK_USER channel through soplugin and action_run.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/jsonin.h"
#include "core/status.h"
#include "plugins/clarification.h"
#include "registry/action.h"
#include "registry/plugin.h"
#include "registry/question.h"
#include "registry/soplugin.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *
parse(const char *text)
{
    struct status_error err = {0};
    json_t *v = jsonin_decode(text, strlen(text), 32, &err);

    ck_assert_msg(v != NULL, "bad test JSON: %s", err.text);
    return v;
}

/* question_normalize() of `text`: NULL with err's message in `why`. */
static json_t *
normalize(const char *text, char *why, size_t size)
{
    struct status_error err = {0};
    json_t *in = parse(text), *out = question_normalize(in, &err);

    json_decref(in);
    snprintf(why, size, "%s", err.text);
    if (out == NULL)
        ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    return out;
}

#define GOOD                                                                   \
    "{\"questions\":[{\"id\":\"size\",\"text\":\"Which size?\",\"kind\":"    \
    "\"single\",\"options\":[\"S\",\"M\"],\"default\":\"M\"},"               \
    "{\"id\":\"extras\",\"text\":\"Extras?\",\"kind\":\"multiple\","         \
    "\"options\":[\"a\",\"b\"],\"required\":false,\"default\":[\"b\"]},"     \
    "{\"id\":\"note\",\"text\":\"Note?\",\"kind\":\"text\",\"required\":"    \
    "false}]}"

START_TEST(questions_normalised)
{
    char why[STATUS_TEXT_MAX];
    json_t *q = normalize(GOOD, why, sizeof(why)), *one;

    ck_assert_msg(q != NULL, "%s", why);
    one = json_array_get(json_object_get(q, "questions"), 0);
    ck_assert(json_is_true(json_object_get(one, "required")));
    ck_assert_str_eq(json_string_value(json_object_get(one, "default")), "M");
    one = json_array_get(json_object_get(q, "questions"), 2);
    ck_assert(json_is_false(json_object_get(one, "required")));
    ck_assert_ptr_null(json_object_get(one, "options"));
    ck_assert_ptr_null(json_object_get(one, "default"));
    json_decref(q);
}
END_TEST

static void
refused(const char *text, const char *words)
{
    char why[STATUS_TEXT_MAX];
    json_t *q = normalize(text, why, sizeof(why));

    ck_assert_msg(q == NULL, "accepted: %s", text);
    ck_assert_msg(strstr(why, words) != NULL, "'%s' does not say '%s'", why,
                  words);
}

START_TEST(questions_refused)
{
    refused("{\"questions\":[]}", "1 to 8 questions");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"single\""
            "}]}",
            "needs 1 to 12 options");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"text\","
            "\"options\":[\"x\"]}]}",
            "a text question has no options");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"single\","
            "\"options\":[\"x\"],\"default\":\"y\"}]}",
            "default: one of the options");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":"
            "\"multiple\",\"options\":[\"x\"],\"default\":\"x\"}]}",
            "default: an array of options");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"text\"},"
            "{\"id\":\"a\",\"text\":\"B\",\"kind\":\"text\"}]}",
            "questions[1].id: 'a' is the id of an earlier question too");
    refused("{\"questions\":[{\"id\":\"a b\",\"text\":\"A\",\"kind\":"
            "\"text\"}]}",
            "questions[0].id");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"radio\""
            "}]}",
            "single, multiple or text");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"single\","
            "\"options\":[\"x\",\"x\"]}]}",
            "'x' twice");
    refused("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":\"text\","
            "\"hint\":1}]}",
            "unknown member 'hint'");
}
END_TEST

/* question_answers() of `answers` against GOOD: the answers' JSON text,
 * or NULL with the message in why. */
static char *
answer(const char *answers, char *why, size_t size)
{
    char dummy[STATUS_TEXT_MAX];
    struct status_error err = {0};
    json_t *q = normalize(GOOD, dummy, sizeof(dummy));
    json_t *a = parse(answers), *out = question_answers(q, a, &err);
    char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;

    snprintf(why, size, "%s", err.text);
    json_decref(q);
    json_decref(a);
    json_decref(out);
    return text;
}

START_TEST(answers_checked)
{
    char why[STATUS_TEXT_MAX];
    char *t;

    t = answer("{\"note\":\"hi\",\"size\":\"S\",\"extras\":[]}", why,
               sizeof(why));
    ck_assert_msg(t != NULL, "%s", why);
    /* in the order of the questions; an empty optional left out */
    ck_assert_str_eq(t, "{\"answers\":{\"size\":\"S\",\"note\":\"hi\"}}");
    free(t);
    static const char *const bad[][2] = {
        {"{}", "'size' is required"},
        {"{\"size\":null}", "'size' is required"},
        {"{\"size\":\"XL\"}", "'size' must be one of its options"},
        {"{\"size\":\"S\",\"extras\":\"a\"}", "'extras' must be an array"},
        {"{\"size\":\"S\",\"extras\":[\"a\",\"a\"]}", "names 'a' twice"},
        {"{\"size\":\"S\",\"extras\":[\"z\"]}", "is not one of its options"},
        {"{\"size\":\"S\",\"note\":1}", "'note' must be a string"},
        {"{\"size\":\"S\",\"x\":1}", "'x' is no question of this call"},
        {"[]", "answers must be an object"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        t = answer(bad[i][0], why, sizeof(why));
        ck_assert_msg(t == NULL, "accepted: %s", bad[i][0]);
        ck_assert_msg(strstr(why, bad[i][1]) != NULL, "%s: '%s'", bad[i][0],
                      why);
    }
}
END_TEST

/* --- the plugin, loaded as the site loads it ---------------------------- */

static char tmpdir[] = "/tmp/ga-clarify.XXXXXX";

static const gemini_agent_plugin_factory table[] = {builtin_clarification,
                                                    NULL};

START_TEST(plugin_asks_through_action_run)
{
    char path[256];
    struct diag d = DIAG_INIT;
    struct status_error err = {0};
    struct arena ar;
    struct config *cfg;
    struct plugin_set *set;
    const struct plugin_action *act;
    json_t *in, *out = NULL;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("actions: []\nplugins: {expose: [clarification]}\n", f);
    fclose(f);
    cfg = config_load(path, &d);
    ck_assert_ptr_nonnull(cfg);
    set = plugin_load(
        NULL, 0,
        &(struct soplugin_env){.cfg = &cfg->plugins, .builtins = table},
        NULL, &d);
    ck_assert_ptr_nonnull(set);
    act = plugin_find(set, "clarification.ask");
    ck_assert_ptr_nonnull(act);
    ck_assert(!act->side_effects);
    ck_assert_str_eq(act->fn_name, "action_clarification_ask");
    ck_assert_ptr_nonnull(set->so[0].instructions);
    ck_assert_ptr_nonnull(strstr(set->so[0].instructions,
                                 "Ask only when the answer really changes"));

    arena_init(&ar);
    in = parse(GOOD);
    ck_assert_int_eq(action_run(&cfg->actions, act, NULL, in, &ar, &out, &err),
                     ACTION_ASKS_USER);
    ck_assert_int_eq(err.code, ST_OK);
    ck_assert_int_eq(json_array_size(json_object_get(out, "questions")), 3);
    ck_assert(json_is_true(json_object_get(
        json_array_get(json_object_get(out, "questions"), 0), "required")));
    json_decref(in);

    /* the rules the schema cannot say: the model's mistake, with why */
    in = parse("{\"questions\":[{\"id\":\"a\",\"text\":\"A\",\"kind\":"
               "\"single\"}]}");
    ck_assert_int_eq(action_run(&cfg->actions, act, NULL, in, &ar, &out, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(err.text, "needs 1 to 12 options"));
    json_decref(in);

    /* the schema, before the plugin */
    memset(&err, 0, sizeof(err));
    in = parse("{\"questions\":[{\"id\":\"a\",\"kind\":\"text\"}]}");
    ck_assert_int_eq(action_run(&cfg->actions, act, NULL, in, &ar, &out, &err), -1);
    ck_assert_int_eq(err.code, ST_SCHEMA);
    json_decref(in);

    arena_release(&ar);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
    unlink(path);
    rmdir(tmpdir);
    strcpy(tmpdir, "/tmp/ga-clarify.XXXXXX");
}
END_TEST

Suite *plugin_clarification_suite(void);

Suite *
plugin_clarification_suite(void)
{
    Suite *s = suite_create("plugin_clarification");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, questions_normalised);
    tcase_add_test(tc, questions_refused);
    tcase_add_test(tc, answers_checked);
    tcase_add_test(tc, plugin_asks_through_action_run);
    suite_add_tcase(s, tc);
    return s;
}
