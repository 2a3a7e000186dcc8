/*
 * check_outbound.c - the outbound policy (plugins/outbound.h) on real
 * transfers to tests/mock/search_mock.py on 127.0.0.1: what is allowed
 * connects, what is not is refused before any connection (the mock never
 * sees it), each redirect hop is checked, a name with two addresses
 * connects to the allowed one only, and the refusal is a plain sentence.
 * The ranges themselves are check_netaddr.c's.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/monotime.h"
#include "plugins/outbound.h"
#include "plugins/webget.h"
#include "unit_webmock.h"

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct outbound
policy(const char *json)
{
    struct outbound p;
    char err[200] = "";
    json_t *c = json_loads(json, 0, NULL);

    ck_assert_ptr_nonnull(c);
    ck_assert_msg(outbound_from_config(c, &p, err, sizeof(err)) == 0, "%s",
                  err);
    json_decref(c);
    return p;
}

static long
count_of(const char *path)
{
    json_t *c = unit_webmock_json("/__count");
    long n = (long)json_integer_value(json_object_get(c, path));

    json_decref(c);
    return n;
}

/* GET url under `p` (redirects followed): 0 or -1, with msg. */
static int
fetch(const char *url, const struct outbound *p, char *msg, size_t size)
{
    struct webget_res res;
    int rc = webget_fetch(&(struct webget_req){url, NULL, 5000, 1 << 16, true,
                                               false, p},
                          &res, msg, size);

    webget_free(&res);
    return rc;
}

START_TEST(config_is_read)
{
    struct outbound p;
    char err[200];
    json_t *c;

    p = policy("{}");
    ck_assert_uint_eq(p.nallow, 0);
    p = policy("{\"outbound\":{\"allow\":[\"127.0.0.2/32\",\"::1\"]}}");
    ck_assert_uint_eq(p.nallow, 2);
    c = json_loads("{\"outbound\":{\"allow\":[\"metadata.internal\"]}}", 0,
                   NULL);
    ck_assert_int_eq(outbound_from_config(c, &p, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "metadata.internal"));
    ck_assert_uint_eq(p.nallow, 0);
    json_decref(c);
    c = json_loads("{\"outbound\":{\"allow\":\"127.0.0.1\"}}", 0, NULL);
    ck_assert_int_eq(outbound_from_config(c, &p, err, sizeof(err)), -1);
    json_decref(c);
}
END_TEST

START_TEST(loopback_refused_unless_allowed)
{
    struct outbound none = policy("{}");
    struct outbound lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    char msg[200];
    long before = count_of("/doc/api");

    /* no policy given and the empty one: the same, nothing reached */
    ck_assert_int_eq(fetch(unit_webmock_url("/doc/api"), NULL, msg,
                           sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of 127.0.0.1 is not allowed");
    ck_assert_int_eq(fetch(unit_webmock_url("/doc/api"), &none, msg,
                           sizeof(msg)), -1);
    ck_assert_int_eq(count_of("/doc/api"), before);
    ck_assert_int_eq(fetch(unit_webmock_url("/doc/api"), &lo, msg,
                           sizeof(msg)), 0);
    ck_assert_int_eq(count_of("/doc/api"), before + 1);
}
END_TEST

/* allowed -> allowed -> refused: the third hop never connects */
START_TEST(every_redirect_hop_is_checked)
{
    struct outbound lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    char inner[300], outer[700], msg[200];
    long to = count_of("/to");

    snprintf(inner, sizeof(inner), "%s",
             unit_webmock_url("/to?url=http://127.0.0.2:9/latest/"));
    /* the inner URL is the outer's query value: percent-encoded */
    {
        CURL *c = curl_easy_init();
        char *enc = curl_easy_escape(c, inner, 0);
        snprintf(outer, sizeof(outer), "%s%s", unit_webmock_url("/to?url="),
                 enc);
        curl_free(enc);
        curl_easy_cleanup(c);
    }
    ck_assert_int_eq(fetch(outer, &lo, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of 127.0.0.2 is not allowed");
    ck_assert_int_eq(count_of("/to"), to + 2);
    /* the last hop allowed too: it is reached (and refuses: port 9) */
    lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.0/8\"]}}");
    ck_assert_int_eq(fetch(outer, &lo, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "could not connect");
}
END_TEST

/* the cloud metadata address: refused at once, not after a timeout */
START_TEST(metadata_address_refused_before_connecting)
{
    struct outbound lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    char msg[200];
    long t0 = monotime_ms();

    ck_assert_int_eq(fetch("http://169.254.169.254/latest/meta-data/", &lo,
                           msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of 169.254.169.254 is not allowed");
    ck_assert_int_lt(monotime_ms() - t0, 1000);
    ck_assert_int_eq(fetch("http://[fd00::1]/", &lo, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of [fd00::1] is not allowed");
}
END_TEST

/* IPv6 literals; the mapped form of an IPv4 address is that address */
START_TEST(ipv6_forms)
{
    struct outbound lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    struct outbound v6 = policy("{\"outbound\":{\"allow\":[\"::1\"]}}");
    char url[200], msg[200];

    snprintf(url, sizeof(url), "http://[::1]:%d/doc/api", unit_webmock_port());
    ck_assert_int_eq(fetch(url, &lo, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of [::1] is not allowed");
    /* allowed, it connects (nothing listens on ::1: refused by the kernel) */
    ck_assert_int_eq(fetch(url, &v6, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "could not connect");
    snprintf(url, sizeof(url), "http://[::ffff:127.0.0.1]:%d/doc/api",
             unit_webmock_port());
    ck_assert_int_eq(fetch(url, &v6, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of [::ffff:127.0.0.1] is not allowed");
    ck_assert_int_eq(fetch(url, &lo, msg, sizeof(msg)), 0);
    snprintf(url, sizeof(url), "http://[64:ff9b::7f00:1]:%d/doc/api",
             unit_webmock_port());
    ck_assert_int_eq(fetch(url, NULL, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "the address of [64:ff9b::7f00:1] is not allowed");
}
END_TEST

/* a proxy from the environment is not used: it would resolve and reach
 * the target unchecked */
START_TEST(environment_proxy_ignored)
{
    struct outbound lo = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    char msg[200];
    long before = count_of("/doc/direct");

    /* the forked test's own environment: nothing listens on port 1 */
    setenv("http_proxy", "http://127.0.0.1:1", 1);
    setenv("ALL_PROXY", "http://127.0.0.1:1", 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    ck_assert_int_eq(fetch(unit_webmock_url("/doc/direct"), &lo, msg,
                           sizeof(msg)), 0);
    ck_assert_int_eq(count_of("/doc/direct"), before + 1);
}
END_TEST

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* GET http://two.test:PORT/doc/api, the name resolving to 127.0.0.2 and
 * 127.0.0.1 (CURLOPT_RESOLVE: no DNS server needed), through the guard
 * as mcp_http.c uses it. Returns curl's code; the guard's report in *g. */
static CURLcode
two_addresses(const struct outbound *p, struct outbound_guard *g)
{
    CURL *c = curl_easy_init();
    struct curl_slist *r;
    char entry[100], url[100];
    CURLcode rc;

    snprintf(entry, sizeof(entry), "two.test:%d:127.0.0.2,127.0.0.1",
             unit_webmock_port());
    snprintf(url, sizeof(url), "http://two.test:%d/doc/two",
             unit_webmock_port());
    r = curl_slist_append(NULL, entry);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(outbound_guard(c, g, p), 0);
    curl_easy_setopt(c, CURLOPT_RESOLVE, r);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        char msg[200];
        ck_assert(outbound_refusal(c, g, msg, sizeof(msg)) == (g->refused > 0));
        if (g->refused > 0)
            ck_assert_str_eq(msg, "the address of two.test is not allowed");
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(r);
    return rc;
}

START_TEST(name_with_two_addresses)
{
    struct outbound one = policy("{\"outbound\":{\"allow\":[\"127.0.0.1\"]}}");
    struct outbound two = policy("{\"outbound\":{\"allow\":[\"127.0.0.2\"]}}");
    struct outbound_guard g;
    long before = count_of("/doc/two");

    /* 127.0.0.2 refused, 127.0.0.1 connected: the mock answers */
    ck_assert_int_eq(two_addresses(&one, &g), CURLE_OK);
    ck_assert_uint_eq(g.refused, 1);
    ck_assert_str_eq(g.addr, "127.0.0.2");
    ck_assert_int_eq(count_of("/doc/two"), before + 1);
    /* 127.0.0.2 allowed (nothing there), 127.0.0.1 refused: never reached */
    ck_assert_int_eq(two_addresses(&two, &g), CURLE_COULDNT_CONNECT);
    ck_assert_uint_eq(g.refused, 1);
    ck_assert_str_eq(g.addr, "127.0.0.1");
    ck_assert_str_eq(g.kind, "loopback");
    ck_assert_int_eq(count_of("/doc/two"), before + 1);
}
END_TEST

Suite *
outbound_suite(void)
{
    Suite *s = suite_create("outbound");
    TCase *tc = tcase_create("core");

    tcase_add_unchecked_fixture(tc, unit_webmock_start, unit_webmock_stop);
    tcase_add_test(tc, config_is_read);
    tcase_add_test(tc, loopback_refused_unless_allowed);
    tcase_add_test(tc, every_redirect_hop_is_checked);
    tcase_add_test(tc, metadata_address_refused_before_connecting);
    tcase_add_test(tc, ipv6_forms);
    tcase_add_test(tc, name_with_two_addresses);
    tcase_add_test(tc, environment_proxy_ignored);
    suite_add_tcase(s, tc);
    return s;
}
