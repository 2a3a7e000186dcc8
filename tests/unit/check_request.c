/*
 * check_request.c - which part of a request's path the routes match
 * (request_route): a site under any base path, and the tricks a path can
 * play on that rule.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/request.h"

#include <check.h>
#include <string.h>

/* `want` is the route found, "=" for the whole path, NULL for none. */
static const struct {
    const char *path;
    const char *want;
} route_cases[] = {
    /* at the root, as before */
    {"/_jay/actions", "="},
    {"/_jay/actions/shop.searchProducts", "="},
    {"/api/agent/run", "="},
    {"/api/agent/threads/t1/todo", "="},
    /* under a base: a subfolder, Apache's userdir, two levels */
    {"/shop/_jay/actions/x.y", "/_jay/actions/x.y"},
    {"/~alice/agent/_jay/actions/x.y", "/_jay/actions/x.y"},
    {"/~alice/agent/api/agent/run/stream", "/api/agent/run/stream"},
    {"/a/b/c/_jay/actions", "/_jay/actions"},
    /* the CGI program in the path (PATH_INFO style) */
    {"/~alice/agent/gemini-agent.cgi/_jay/actions", "/_jay/actions"},
    /* the first namespace wins: a later one is only part of the route */
    {"/_jay/actions/x/_jay/status", "="},
    {"/shop/_jay/actions/x/_jay/status", "/_jay/actions/x/_jay/status"},
    {"/api/agent/run/_jay/status", "="},
    {"/shop/_jay/x/api/agent/run", "/_jay/x/api/agent/run"},
    /* no namespace: the whole path, which matches no route */
    {"/shop/actions", "="},
    {"/x_jay/actions", "="},
    {"/_jayx/actions", "="},
    {"/_jay", "="},
    {"", "="},
    /* escapes are not decoded: an encoded slash or underscore hides
     * nothing and reveals nothing */
    {"/shop%2F_jay/actions/x", "="},
    {"/shop/%5Fjay/actions/x", "="},
    {"/%7Ealice/_jay/actions", "/_jay/actions"},
    /* dot segments: never a route, in the base or in the route */
    {"/a/../_jay/actions", NULL},
    {"/_jay/actions/../status", NULL},
    {"/./_jay/actions", NULL},
    {"/_jay/actions/..", NULL},
    {"..", NULL},
    {"/_jay/actions/.x", "="},
    {"/_jay/actions/x..y", "="},
    {"/_jay/actions/...", "="},
};

START_TEST(route_under_any_base)
{
    const char *path = route_cases[_i].path, *want = route_cases[_i].want;
    const char *got = request_route(path);

    if (want == NULL) {
        ck_assert_msg(got == NULL, "'%s': no route, got '%s'", path,
                      got ? got : "");
        return;
    }
    ck_assert_msg(got != NULL, "'%s': a route, got none", path);
    if (strcmp(want, "=") == 0)
        ck_assert_ptr_eq(got, path);
    else
        ck_assert_str_eq(got, want);
    /* always a suffix of the path itself */
    ck_assert_ptr_eq(got + strlen(got), path + strlen(path));
}
END_TEST

Suite *
request_suite(void)
{
    Suite *s = suite_create("request");
    TCase *tc = tcase_create("route");

    tcase_add_loop_test(tc, route_under_any_base, 0,
                        (int)ARRAY_SIZE(route_cases));
    suite_add_tcase(s, tc);
    return s;
}
