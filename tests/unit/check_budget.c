/*
 * check_budget.c - what a client may spend (http/budget.h): who the
 * client is (REMOTE_ADDR, X-Forwarded-For only from a trusted proxy),
 * which counters a request is charged to, and reserve -> gate -> settle
 * against a real store; refusals and an unavailable store; no store at
 * all when no budget is configured.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/budget.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "store/store.h"
#include "unit_memio.h"
#include "http/bounds.h"

#include <check.h>
#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static struct config *cfg;
static struct store *store; /* the request thread's connection slot */

/* A config of `yaml` (its store in the test's folder). */
static void
load(const char *yaml)
{
    char path[128];
    struct diag d = DIAG_INIT;
    FILE *f;

    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "actions: []\ndataDir: %s\n%s", dir, yaml);
    fclose(f);
    config_free(cfg);
    cfg = config_load(path, &d);
    diag_release(&d); /* no Gemini key here: not this suite's problem */
    ck_assert_ptr_nonnull(cfg);
}

static void
setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/check_budget.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cfg = NULL;
    store = NULL;
}

static void
teardown(void)
{
    char cmd[128];

    if (store != NULL)
        store->ops->close(store);
    config_free(cfg);
    if (strncmp(dir, "/tmp/check_budget.", 18) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}

/* The client of a request with these params, as text ("" when none). */
static const char *
client_of(const char *remote, const char *xff)
{
    static char text[NETADDR_TEXT_MAX];
    const char *params[] = {"REMOTE_ADDR", remote, "HTTP_X_FORWARDED_FOR", xff,
                            NULL};
    struct unit_memio m = {.params = remote ? params : params + 2};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct netaddr a;

    if (xff == NULL)
        params[2] = NULL;
    if (!budget_client(cfg, &io, &a))
        return "";
    netaddr_format(&a, text);
    return text;
}

START_TEST(client_is_remote_addr_unless_a_proxy_is_trusted)
{
    load("budget: {perIp: {requestsPerMinute: 5}}\n");
    ck_assert_str_eq(client_of("192.0.2.1", NULL), "192.0.2.1");
    /* no proxy trusted: the header is the client's own words */
    ck_assert_str_eq(client_of("192.0.2.1", "203.0.113.9"), "192.0.2.1");
    ck_assert_str_eq(client_of(NULL, "203.0.113.9"), "");
    ck_assert_str_eq(client_of("not-an-address", NULL), "");
    /* an IPv6 client counts by its /64 */
    ck_assert_str_eq(client_of("2001:db8:1:2:3:4:5:6", NULL),
                     "2001:db8:1:2::/64");
    ck_assert_str_eq(client_of("::ffff:192.0.2.1", NULL), "192.0.2.1");

    load("budget:\n"
         "  perIp: {requestsPerMinute: 5}\n"
         "  trustForwardedFor: [127.0.0.1, '10.0.0.0/8']\n");
    /* from a trusted proxy: the right-most address that is not one */
    ck_assert_str_eq(client_of("127.0.0.1", "203.0.113.9"), "203.0.113.9");
    ck_assert_str_eq(client_of("127.0.0.1", "203.0.113.9, 10.1.1.1"),
                     "203.0.113.9");
    ck_assert_str_eq(client_of("127.0.0.1", " 203.0.113.9 ,\t10.1.1.1 "),
                     "203.0.113.9");
    /* what a client writes in front of it changes nothing */
    ck_assert_str_eq(client_of("127.0.0.1", "1.1.1.1, 203.0.113.9"),
                     "203.0.113.9");
    /* not from a trusted proxy: ignored */
    ck_assert_str_eq(client_of("192.0.2.1", "203.0.113.9"), "192.0.2.1");
    /* no header: the proxy itself */
    ck_assert_str_eq(client_of("127.0.0.1", NULL), "127.0.0.1");
    ck_assert_str_eq(client_of("127.0.0.1", ""), "127.0.0.1");
    /* garbage is never a client: the trusted hop that wrote it is */
    ck_assert_str_eq(client_of("127.0.0.1", "203.0.113.9, bogus, 10.2.2.2"),
                     "10.2.2.2");
    ck_assert_str_eq(client_of("127.0.0.1", "bogus"), "127.0.0.1");
    ck_assert_str_eq(client_of("127.0.0.1", "203.0.113.9,,"), "127.0.0.1");
    /* every hop trusted: the left-most */
    ck_assert_str_eq(client_of("127.0.0.1", "10.3.3.3, 10.4.4.4"), "10.3.3.3");
    /* an IPv6 client behind the proxy counts by its /64 too */
    ck_assert_str_eq(client_of("127.0.0.1", "2001:db8::1"), "2001:db8::/64");
    /* a long chain of trusted hops is read only so far from the right */
    {
        char xff[1024];
        size_t n = (size_t)snprintf(xff, sizeof(xff), "203.0.113.9");
        for (int i = 0; i < BOUND_FORWARDED_HOPS; i++)
            n += (size_t)snprintf(xff + n, sizeof(xff) - n, ", 10.0.0.1");
        ck_assert_str_eq(client_of("127.0.0.1", xff), "10.0.0.1");
    }
}
END_TEST

/* The counters: only those with a ceiling, and the site's always. */
START_TEST(counters_of_a_request)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.7", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct budget b;

    load("http: {directActions: readOnly}\n");
    budget_init(&b, cfg, &store, &io, "ann");
    ck_assert_uint_eq(b.n, 0);
    /* no budget: the gate still counts the usage (the access line) */
    ck_assert_ptr_nonnull(budget_gate(&b));

    load("budget:\n"
         "  perIp: {requestsPerMinute: 5, tokensPerDay: 100000}\n"
         "  perUser: {tokensPerDay: 200000}\n");
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_uint_eq(b.n, 2);
    ck_assert_str_eq(b.counters[0].scope, "ip:192.0.2.7");
    ck_assert_int_eq(b.counters[0].requests_per_minute, 5);
    ck_assert_int_eq(b.counters[0].tokens_per_day, 100000);
    ck_assert_str_eq(b.counters[1].scope, "site");
    ck_assert_int_eq(b.counters[1].requests_per_minute, 0);
    ck_assert_int_eq(b.counters[1].tokens_per_day, 0);
    budget_init(&b, cfg, &store, &io, "ann");
    ck_assert_uint_eq(b.n, 3);
    ck_assert_str_eq(b.counters[1].scope, "user:ann");
    ck_assert_int_eq(b.counters[1].tokens_per_day, 200000);
    ck_assert_ptr_nonnull(budget_gate(&b));
    /* nothing touched the store yet */
    ck_assert_ptr_null(store);
    /* a host without REMOTE_ADDR: one shared counter */
    params[0] = NULL;
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_str_eq(b.counters[0].scope, "ip:unknown");
}
END_TEST

/* No budget configured: reserve, gate and settle never open the store. */
START_TEST(no_budget_no_store)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.7", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    struct budget b;

    struct loop_gate *gate;
    struct loop_usage none = {0};

    load("store: sqlite:/nonexistent/dir/agent.db\n");
    budget_init(&b, cfg, &store, &io, "ann");
    ck_assert_int_eq(budget_reserve(&b, 100000, &err), 0);
    gate = budget_gate(&b);
    ck_assert_int_eq(gate->step(gate->ctx, 1 << 20, &none, &err), 0);
    /* what the loop used reaches the request's counters all the same */
    gate->used.calls = 2;
    gate->used.prompt = 100;
    gate->used.tool_use = 5;
    gate->used.candidates = 30;
    gate->used.thoughts = 7;
    budget_settle(&b);
    ck_assert_ptr_null(store);
    ck_assert_int_eq(err.code, ST_OK);
    ck_assert_int_eq(io.gemini_calls, 2);
    ck_assert_int_eq(io.tokens_in, 105);
    ck_assert_int_eq(io.tokens_out, 37);
}
END_TEST

static struct store_budget_use
use_of(const char *scope)
{
    struct status_error err = {0};
    struct store_budget_use u = {-1, -1};
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ck_assert_ptr_nonnull(store);
    ck_assert_int_eq(store->ops->budget_get(store, scope,
                                            (int64_t)ts.tv_sec * 1000, &u,
                                            &err),
                     0);
    return u;
}

/* Reserve the estimate, let the gate grow it step by step, settle with
 * what was used: the counters end at the real use. */
START_TEST(reserve_gate_settle)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.7", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    struct loop_usage so_far = {0};
    struct loop_gate *gate;
    struct budget b;
    long long est;

    load("limits: {maxOutputTokens: 1000}\n"
         "budget: {perIp: {tokensPerDay: 10000}}\n");
    ck_assert_int_eq(budget_estimate(cfg, 4000), 1000 + 1000);
    ck_assert_int_eq(budget_estimate(cfg, 1), 1 + 1000);
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_int_eq(budget_reserve(&b, 4000, &err), 0);
    est = budget_estimate(cfg, 4000);
    ck_assert_int_eq(use_of("ip:192.0.2.7").tokens, est);
    ck_assert_int_eq(use_of("ip:192.0.2.7").requests, 1);
    ck_assert_int_eq(use_of("site").tokens, est);
    gate = budget_gate(&b);
    /* step 0 fits in the reservation: no more is asked */
    ck_assert_int_eq(gate->step(gate->ctx, 3000, &so_far, &err), 0);
    ck_assert_int_eq(use_of("site").tokens, est);
    /* step 1: 1500 used, and 6000 bytes more to send: 1500 + 1500 + 1000 */
    so_far.prompt = 1000;
    so_far.candidates = 100;
    so_far.thoughts = 300;
    so_far.tool_use = 100;
    ck_assert_int_eq(gate->step(gate->ctx, 6000, &so_far, &err), 0);
    ck_assert_int_eq(use_of("site").tokens, 4000);
    /* step 2 would need 4000 + 2500 + 1000 + ... past 10000: refused */
    so_far.prompt = 4000;
    ck_assert_int_eq(gate->step(gate->ctx, 20000, &so_far, &err), -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    ck_assert_int_gt(err.retry_after_s, 0);
    ck_assert_int_le(err.retry_after_s, 86400);
    ck_assert_ptr_nonnull(strstr(err.text, "your address used its 10000 "
                                           "tokens"));
    ck_assert_int_eq(use_of("site").tokens, 4000);
    /* settle: what the loop left in the gate replaces the reservation */
    gate->used = so_far; /* 4000 + 100 + 300 + 100 */
    budget_settle(&b);
    ck_assert_int_eq(use_of("ip:192.0.2.7").tokens, 4500);
    ck_assert_int_eq(use_of("site").tokens, 4500);
    /* settling twice changes nothing */
    budget_settle(&b);
    ck_assert_int_eq(use_of("site").tokens, 4500);
}
END_TEST

START_TEST(requests_per_minute_refused)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.8", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    struct budget b;

    load("budget: {perUser: {requestsPerMinute: 2}}\n");
    for (int i = 0; i < 2; i++) {
        budget_init(&b, cfg, &store, &io, "ann");
        ck_assert_int_eq(budget_reserve(&b, 10, &err), 0);
        budget_settle(&b);
    }
    budget_init(&b, cfg, &store, &io, "ann");
    ck_assert_int_eq(budget_reserve(&b, 10, &err), -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    ck_assert_int_ge(err.retry_after_s, 1);
    ck_assert_int_le(err.retry_after_s, 60);
    ck_assert_ptr_nonnull(strstr(err.text, "your account made its 2 "
                                           "requests"));
    /* nothing held: nothing to settle */
    ck_assert(!b.held);
    /* another user has a budget of their own */
    status_clear(&err);
    budget_init(&b, cfg, &store, &io, "bob");
    ck_assert_int_eq(budget_reserve(&b, 10, &err), 0);
    budget_settle(&b);
    ck_assert_int_eq(use_of("site").requests, 3);
}
END_TEST

/* Gemini's counts near LONG_MAX: the gate's sum saturates,
 * so the next step is refused, never let through by a wrapped sum; the
 * counters settle at a bounded amount and keep refusing. */
START_TEST(huge_counts_saturate)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.10", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    struct loop_usage so_far = {0};
    struct loop_gate *gate;
    struct budget b;

    load("budget: {perIp: {tokensPerDay: 100000}, site: {requestsPerMinute: "
         "1000}}\n");
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_int_eq(budget_reserve(&b, 100, &err), 0);
    gate = budget_gate(&b);
    so_far.prompt = LONG_MAX;
    so_far.thoughts = LONG_MAX;
    so_far.tool_use = 9223372036854775000L;
    ck_assert_int_eq(loop_usage_tokens(&so_far), LONG_MAX);
    ck_assert_int_eq(gate->step(gate->ctx, SIZE_MAX / 2, &so_far, &err), -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    gate->used = so_far;
    budget_settle(&b);
    ck_assert_int_gt(use_of("ip:192.0.2.10").tokens, 100000);
    ck_assert_int_gt(use_of("site").tokens, 100000);
    /* the next request of that address is refused, another's is not */
    status_clear(&err);
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_int_eq(budget_reserve(&b, 100, &err), -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    /* settling a huge count again leaves the counter positive */
    budget_init(&b, cfg, &store, &io, NULL);
    b.held = true;
    b.reserved_at_ms = (long long)time(NULL) * 1000;
    b.gate.used = so_far;
    budget_settle(&b);
    ck_assert_int_gt(use_of("site").tokens, 100000);
}
END_TEST

/* A store that cannot be opened: 503, nothing spent. */
START_TEST(unavailable_store_fails_closed)
{
    const char *params[] = {"REMOTE_ADDR", "192.0.2.9", NULL};
    struct unit_memio m = {.params = params};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    struct budget b;

    load("store: sqlite:/nonexistent/dir/agent.db\n"
         "budget: {site: {tokensPerDay: 100000}}\n");
    budget_init(&b, cfg, &store, &io, NULL);
    ck_assert_int_eq(budget_reserve(&b, 10, &err), -1);
    ck_assert_int_eq(err.code, ST_BUDGET_UNAVAILABLE);
    ck_assert_int_eq(status_http(err.code), 503);
    ck_assert(!b.held);
    budget_settle(&b); /* nothing held: no store needed */
    ck_assert_ptr_null(store);
}
END_TEST

Suite *
budget_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, client_is_remote_addr_unless_a_proxy_is_trusted);
    tcase_add_test(tc, counters_of_a_request);
    tcase_add_test(tc, no_budget_no_store);
    tcase_add_test(tc, reserve_gate_settle);
    tcase_add_test(tc, requests_per_minute_refused);
    tcase_add_test(tc, huge_counts_saturate);
    tcase_add_test(tc, unavailable_store_fails_closed);
    suite_add_tcase(s, tc);
    return s;
}
