/*
 * budget.c - what a client may spend (see budget.h): its counters, the
 * reservation, the loop's gate, the settlement.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/budget.h"
#include "core/config.h"
#include "core/logmsg.h"
#include "core/status.h"
#include "http/httpio.h"
#include "http/bounds.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* --- who the client is ------------------------------------------------------ */

/* The last entry of the list h[0..*n) ("a, b, c"), trimmed, is
 * h[*start..*n'); *n becomes where the entry before it ends. */
static void
last_entry(const char *h, size_t *n, size_t *start, size_t *len)
{
    size_t e = *n, s;

    while (e > 0 && (h[e - 1] == ' ' || h[e - 1] == '\t'))
        e--;
    s = e;
    while (s > 0 && h[s - 1] != ',')
        s--;
    *n = s > 0 ? s - 1 : 0;
    while (s < e && (h[s] == ' ' || h[s] == '\t'))
        s++;
    *start = s;
    *len = e - s;
}

/*
 * The address the nearest trusted proxy saw: X-Forwarded-For read from
 * the right, each trusted proxy skipped. An entry that is not an address
 * ends the walk at the proxy that wrote it (the address before it, which
 * is trusted): garbage never names a client. All trusted: the left-most.
 */
static void
forwarded_client(const struct config_budget *cfg, const char *h,
                 struct netaddr *addr)
{
    size_t n = strlen(h);

    for (int hop = 0; n > 0 && hop < BOUND_FORWARDED_HOPS; hop++) {
        struct netaddr a;
        size_t start, len;

        last_entry(h, &n, &start, &len);
        if (!netaddr_parse(h + start, len, &a))
            return;
        *addr = a;
        if (!netaddr_in(cfg->trusted, cfg->ntrusted, &a))
            return;
    }
}

bool
budget_client(const struct config *cfg, struct httpio *io, struct netaddr *out)
{
    const char *remote = io->ops->param(io->ctx, "REMOTE_ADDR");
    const char *xff;

    if (remote == NULL || !netaddr_parse(remote, strlen(remote), out))
        return false;
    if (cfg->budget.ntrusted > 0 &&
        netaddr_in(cfg->budget.trusted, cfg->budget.ntrusted, out) &&
        (xff = io->ops->param(io->ctx, "HTTP_X_FORWARDED_FOR")) != NULL)
        forwarded_client(&cfg->budget, xff, out);
    if (!netaddr_is_v4(out))
        netaddr_mask(out, 64);
    return true;
}

/* --- the counters ------------------------------------------------------------- */

static void
add_counter(struct budget *b, const char *scope, const struct config_ceiling *c)
{
    b->counters[b->n++] = (struct store_budget){scope, c->requests_per_minute,
                                                c->tokens_per_day};
}

static bool
has_ceiling(const struct config_ceiling *c)
{
    return c->requests_per_minute > 0 || c->tokens_per_day > 0;
}

void
budget_init(struct budget *b, const struct config *cfg, struct store **slot,
            struct httpio *io, const char *user)
{
    const struct config_budget *bc = &cfg->budget;
    struct netaddr a;
    char text[NETADDR_TEXT_MAX];

    memset(b, 0, sizeof(*b));
    b->cfg = cfg;
    b->slot = slot;
    b->io = io;
    if (!bc->on)
        return;
    if (has_ceiling(&bc->per_ip)) {
        /* a host without REMOTE_ADDR (CGI): all such requests share one */
        if (budget_client(cfg, io, &a))
            netaddr_format(&a, text);
        else
            snprintf(text, sizeof(text), "unknown");
        snprintf(b->ip_scope, sizeof(b->ip_scope), "ip:%s", text);
        add_counter(b, b->ip_scope, &bc->per_ip);
    }
    if (user != NULL && has_ceiling(&bc->per_user)) {
        snprintf(b->user_scope, sizeof(b->user_scope), "user:%s", user);
        add_counter(b, b->user_scope, &bc->per_user);
    }
    add_counter(b, "site", &bc->site);
}

/* --- reserving ----------------------------------------------------------------- */

/* The wall clock: the windows are the minute and the UTC day. */
static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long
budget_estimate(const struct config *cfg, size_t bytes)
{
    return (long long)((bytes + 3) / 4) + cfg->limits.max_output_tokens;
}

/* The refusal in words a visitor can act on; the counter is theirs, the
 * user's or the whole site's. */
static int
refused(const struct budget *b, const struct store_budget_refusal *why,
        struct status_error *err)
{
    const struct store_budget *c = &b->counters[why->counter];
    const char *who = strncmp(c->scope, "ip:", 3) == 0     ? "your address"
                      : strncmp(c->scope, "user:", 5) == 0 ? "your account"
                                                           : "this site";

    if (why->requests)
        return status_set_retry(err, ST_BUDGET_EXHAUSTED, why->retry_after_s,
                                "%s made its %lld requests to the assistant "
                                "this minute; try again in %ld s",
                                who, c->requests_per_minute,
                                why->retry_after_s);
    return status_set_retry(err, ST_BUDGET_EXHAUSTED, why->retry_after_s,
                            "%s used its %lld tokens of the assistant for "
                            "today (UTC); try again tomorrow",
                            who, c->tokens_per_day);
}

/* Add `requests` and `tokens` to every counter, or say why not. */
static int
charge(struct budget *b, long long requests, long long tokens,
       struct status_error *err)
{
    struct status_error e = {0};
    struct store_budget_refusal why;
    int64_t now = now_ms();

    if (*b->slot == NULL &&
        (*b->slot = store_open_migrated(b->cfg->run.store, &e)) == NULL)
        goto unavailable;
    if ((*b->slot)->ops->budget_reserve(*b->slot, b->counters, b->n, requests,
                                        tokens, now, &why, &e) == 0) {
        b->held = true;
        b->reserved_at_ms = now;
        b->reserved += tokens;
        return 0;
    }
    if (e.code == ST_BUDGET_EXHAUSTED)
        return refused(b, &why, err);
unavailable:
    log_warn("budget: the counters cannot be read: %s", e.text);
    return status_set(err, ST_BUDGET_UNAVAILABLE,
                      "the assistant cannot check its budget right now, so "
                      "it does not answer; try again later");
}

int
budget_reserve(struct budget *b, size_t prompt_bytes, struct status_error *err)
{
    if (b->n == 0)
        return 0;
    return charge(b, 1, budget_estimate(b->cfg, prompt_bytes), err);
}

/*
 * The loop's gate: the step about to be sent needs what was used so far
 * plus its own estimate. Within the reservation it goes; past it the
 * reservation grows by the difference, if every counter has room.
 */
static int
gate_step(void *ctx, size_t request_bytes, const struct loop_usage *so_far,
          struct status_error *err)
{
    struct budget *b = ctx;
    long long used = (long long)loop_usage_tokens(so_far);
    long long est = budget_estimate(b->cfg, request_bytes);
    /* saturating: counts from Gemini may be near LONG_MAX, and a wrapped
     * sum would let the step through uncharged */
    long long need = used > LLONG_MAX - est ? LLONG_MAX : used + est;

    if (b->n == 0 || need <= b->reserved)
        return 0;
    return charge(b, 0, need - b->reserved, err);
}

struct loop_gate *
budget_gate(struct budget *b)
{
    b->gate.step = gate_step;
    b->gate.ctx = b;
    return &b->gate;
}

/* --- settling ------------------------------------------------------------------ */

void
budget_settle(struct budget *b)
{
    struct status_error e = {0};
    const struct loop_usage *u = &b->gate.used;
    long in = 0, out = 0;
    long long delta;

    if (b->io != NULL) {
        loop_usage_add(&in, u->prompt);
        loop_usage_add(&in, u->tool_use);
        loop_usage_add(&out, u->candidates);
        loop_usage_add(&out, u->thoughts);
        loop_usage_add(&b->io->tokens_in, in);
        loop_usage_add(&b->io->tokens_out, out);
        if (u->calls > 0 && b->io->gemini_calls <= INT_MAX - u->calls)
            b->io->gemini_calls += u->calls;
    }
    if (!b->held)
        return;
    b->held = false;
    delta = (long long)loop_usage_tokens(&b->gate.used) - b->reserved;
    if ((*b->slot)->ops->budget_settle(*b->slot, b->counters, b->n, delta,
                                       b->reserved_at_ms, &e) != 0)
        log_warn("budget: a reservation of %lld tokens stays counted (%lld "
                 "were used): %s",
                 b->reserved, b->reserved + delta, e.text);
}
