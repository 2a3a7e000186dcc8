/*
 * check_runinput.c - the run API's request is normalised, and every cut
 * is reported (docs/http-api.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/runinput.h"
#include "core/arena.h"
#include "http/bounds.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const types[] = {"email", "calendar_event", "document",
                                    "page", NULL};

struct got {
    struct arena a;
    struct run_input in;
    struct status_error err;
    int rc;
    json_t *body;
};

static void
read_json(struct got *g, json_t *body)
{
    memset(g, 0, sizeof(*g));
    arena_init(&g->a);
    g->body = body;
    ck_assert_ptr_nonnull(body);
    g->rc = runinput_read(body, types, &g->a, &g->in, &g->err);
}

static void
read_text(struct got *g, const char *text)
{
    json_error_t je;
    json_t *body = json_loads(text, 0, &je);

    ck_assert_msg(body != NULL, "%s: %s", text, je.text);
    read_json(g, body);
}

static void
done(struct got *g)
{
    arena_release(&g->a);
    json_decref(g->body);
}

/* The report as compact sorted JSON ("null" when nothing was cut). */
static char *
report(const struct got *g)
{
    return g->in.normalized ? json_dumps(g->in.normalized,
                                         JSON_COMPACT | JSON_SORT_KEYS)
                            : strdup("null");
}

START_TEST(minimal_request)
{
    struct got g;
    char *r;

    read_text(&g, "{\"prompt\":\"hello\"}");
    ck_assert_int_eq(g.rc, 0);
    ck_assert_str_eq(g.in.prompt, "hello");
    ck_assert_ptr_null(g.in.thread);
    ck_assert_uint_eq(json_array_size(g.in.conversation), 0);
    ck_assert_uint_eq(json_array_size(g.in.context), 0);
    r = report(&g);
    ck_assert_str_eq(r, "null"); /* nothing cut, nothing said */
    free(r);
    done(&g);
}
END_TEST

START_TEST(refusals)
{
    static const struct {
        const char *body;
        enum status code;
    } cases[] = {
        {"[]", ST_BAD_REQUEST},
        {"{}", ST_BAD_REQUEST},
        {"{\"prompt\":5}", ST_BAD_REQUEST},
        {"{\"prompt\":\"  \\n\"}", ST_BAD_REQUEST},
        {"{\"prompt\":\"\\u0001\\u0002\"}", ST_BAD_REQUEST},
        {"{\"prompt\":\"x\",\"threadId\":7}", ST_BAD_REQUEST},
        {"{\"prompt\":\"x\",\"threadId\":\"\"}", ST_BAD_REQUEST},
        {"{\"prompt\":\"x\",\"conversation\":{}}", ST_BAD_REQUEST},
        {"{\"prompt\":\"x\",\"attachedContext\":\"a\"}", ST_BAD_REQUEST},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct got g;
        read_text(&g, cases[i].body);
        ck_assert_msg(g.rc == -1 && g.err.code == cases[i].code,
                      "%s: rc %d code %d (%s)", cases[i].body, g.rc,
                      g.err.code, g.err.text);
        done(&g);
    }
}
END_TEST

START_TEST(prompt_too_long_is_413)
{
    struct got g;
    char *p = malloc(RUN_PROMPT_MAX + 2);

    memset(p, 'a', RUN_PROMPT_MAX + 1);
    p[RUN_PROMPT_MAX + 1] = '\0';
    read_json(&g, json_pack("{s:s}", "prompt", p));
    ck_assert_int_eq(g.rc, -1);
    ck_assert_int_eq(g.err.code, ST_TOO_LARGE);
    done(&g);
    p[RUN_PROMPT_MAX] = '\0'; /* exactly the limit: fine */
    read_json(&g, json_pack("{s:s}", "prompt", p));
    ck_assert_int_eq(g.rc, 0);
    done(&g);
    free(p);
}
END_TEST

/* Unknown fields go, control characters go (newlines and tabs stay in
 * texts), and both are counted. */
START_TEST(fields_and_control_characters)
{
    struct got g;
    char *r;

    read_text(&g, "{\"prompt\":\"a\\u0001b\\nc\\td\\u001b[31m\","
                  "\"model\":\"x\",\"tools\":[],\"threadId\":\"t1\"}");
    ck_assert_int_eq(g.rc, 0);
    ck_assert_str_eq(g.in.prompt, "ab\nc\td[31m");
    ck_assert_str_eq(g.in.thread, "t1");
    r = report(&g);
    ck_assert_str_eq(r, "{\"controlCharacters\":2,"
                        "\"droppedFields\":[\"model\",\"tools\"]}");
    free(r);
    done(&g);
}
END_TEST

/* The newest 40 turns are kept; bad turns are dropped; long texts cut at
 * a character. */
START_TEST(conversation_bounded)
{
    json_t *conv = json_array(), *body;
    struct got g;
    char *r, *big = malloc(RUN_TEXT_MAX + 10);

    /* "é" is 2 bytes: a cut at an odd byte would split one */
    for (size_t i = 0; i + 1 < RUN_TEXT_MAX + 10; i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    big[RUN_TEXT_MAX + 9 - ((RUN_TEXT_MAX + 9) % 2)] = '\0';
    for (int i = 0; i < 45; i++)
        json_array_append_new(conv,
                              json_pack("{s:s, s:s}", "role",
                                        i % 2 ? "assistant" : "user", "text",
                                        i == 44 ? big : "turn"));
    json_array_append_new(conv, json_pack("{s:s, s:s}", "role", "system",
                                          "text", "sneaky"));
    json_array_append_new(conv, json_pack("{s:s, s:i}", "role", "user",
                                          "text", 5));
    body = json_pack("{s:s, s:o}", "prompt", "p", "conversation", conv);
    read_json(&g, body);
    ck_assert_int_eq(g.rc, 0);
    /* 47 turns: the first 7 fall outside the newest 40, and 2 of the 40
     * are not turns */
    ck_assert_uint_eq(json_array_size(g.in.conversation), 38);
    const char *last = json_string_value(json_object_get(
        json_array_get(g.in.conversation, 37), "text"));
    ck_assert_uint_le(strlen(last), RUN_TEXT_MAX);
    ck_assert_uint_eq(strlen(last) % 2, 0);
    r = report(&g);
    ck_assert_str_eq(r, "{\"conversation\":{\"cut\":1,\"dropped\":9}}");
    free(r);
    free(big);
    done(&g);
}
END_TEST

START_TEST(context_bounded)
{
    json_t *ctx = json_array(), *body;
    struct got g;
    char *r, long_title[RUN_CONTEXT_STRING_MAX + 20];

    memset(long_title, 't', sizeof(long_title) - 1);
    long_title[sizeof(long_title) - 1] = '\0';
    json_array_append_new(ctx, json_pack("{s:s, s:s, s:s, s:s, s:{s:i}}",
                                         "type", "email", "id", "m1", "title",
                                         long_title, "extra", "x", "meta",
                                         "n", 1));
    json_array_append_new(ctx, json_pack("{s:s, s:s}", "type", "tweet", "id",
                                         "t1")); /* unknown type */
    json_array_append_new(ctx, json_pack("{s:s}", "type", "page")); /* no id */
    json_array_append_new(
        ctx, json_pack("{s:s, s:s, s:{s:{s:{s:{s:{s:i}}}}}}", "type", "page",
                       "id", "p1", "meta", "a", "b", "c", "d", "e", 1));
    for (int i = 0; i < 15; i++)
        json_array_append_new(ctx, json_pack("{s:s, s:s}", "type", "document",
                                             "id", "d"));
    body = json_pack("{s:s, s:o}", "prompt", "p", "attachedContext", ctx);
    read_json(&g, body);
    ck_assert_int_eq(g.rc, 0);
    ck_assert_uint_eq(json_array_size(g.in.context), RUN_CONTEXT_MAX);
    json_t *first = json_array_get(g.in.context, 0);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(first,
                                                               "title"))),
                      RUN_CONTEXT_STRING_MAX);
    ck_assert_ptr_null(json_object_get(first, "extra"));
    ck_assert_ptr_nonnull(json_object_get(first, "meta"));
    /* the deep meta went, its entry stayed */
    ck_assert_ptr_null(json_object_get(json_array_get(g.in.context, 1),
                                       "meta"));
    r = report(&g);
    /* 2 invalid + 5 over the cap dropped; 1 title cut; 1 meta dropped */
    ck_assert_str_eq(r, "{\"attachedContext\":{\"cut\":1,\"dropped\":7},"
                        "\"metaDropped\":1}");
    free(r);
    done(&g);
}
END_TEST

Suite *
runinput_suite(void)
{
    Suite *s = suite_create("runinput");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, minimal_request);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, prompt_too_long_is_413);
    tcase_add_test(tc, fields_and_control_characters);
    tcase_add_test(tc, conversation_bounded);
    tcase_add_test(tc, context_bounded);
    suite_add_tcase(s, tc);
    return s;
}
