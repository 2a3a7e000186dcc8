/*
 * budget.h - what a client may spend of the site's Gemini account
 * (docs/configuration.md "Budget": against "denial of wallet").
 *
 * A request that may call Gemini is charged to up to three counters in
 * the store (shared by every worker and process): its client's address,
 * its signed-in user (the run API), and the site. Each has ceilings on
 * requests per minute and tokens per UTC day (config `budget:`); a
 * counter is kept only for what has a ceiling, and the site's whenever
 * any ceiling is set (the operator's status shows it).
 *
 * Reserve, then settle:
 *
 *   budget_reserve  before the work: one request and an estimate of its
 *                   tokens (its bytes / 4 + maxOutputTokens) on every
 *                   counter, in one transaction that checks them all
 *                   first; over any ceiling: 429 budget_exhausted with
 *                   Retry-After, and Gemini is never called
 *   budget_gate     the loop asks it before every Gemini call: when the
 *                   tokens used so far plus the next step's estimate pass
 *                   what is reserved, the reservation grows (one more
 *                   transaction) or the step is refused (budget_exhausted)
 *   budget_settle   after the work, however it ended: the reservation is
 *                   replaced by what Gemini reported (prompt + candidates
 *                   + thoughts + tool-use prompt)
 *
 * Fail closed: a store that cannot be opened or answer (busy, broken) is
 * 503 budget_unavailable, and Gemini is not called. With no ceiling
 * configured nothing here touches the store.
 *
 * The client's address is REMOTE_ADDR, what the web server saw; the
 * X-Forwarded-For header only when REMOTE_ADDR is one of
 * budget.trustForwardedFor, and then its right-most address that is not
 * itself a trusted proxy (what the nearest trusted proxy saw). An IPv6
 * client counts by its /64: one host has all of those addresses.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_BUDGET_H
#define APP_BUDGET_H

#include "core/common.h"
#include "store/bounds.h"
#include "core/netaddr.h"
#include "agent/loop.h"
#include "store/store.h"

struct config;
struct httpio;
struct status_error;

struct budget {
    const struct config *cfg;
    struct store **slot; /* the thread's store connection, opened on use */
    struct httpio *io;   /* settling adds the usage to its counters */
    struct store_budget counters[3];
    size_t n; /* 0: no budget is configured */
    char ip_scope[sizeof("ip:") + NETADDR_TEXT_MAX];
    char user_scope[sizeof("user:") + BOUND_STORE_USER_ID];
    long long reserved;     /* tokens reserved so far */
    int64_t reserved_at_ms; /* when (the day they count on) */
    bool held;              /* a reservation waits to be settled */
    struct loop_gate gate;  /* the loop's: see budget_gate() */
};

/*
 * The client of the request on `io`, as the budget counts it (see the
 * file comment): its address, or false when REMOTE_ADDR is missing or
 * not an address (a CGI host that sets none).
 */
bool budget_client(const struct config *cfg, struct httpio *io,
                   struct netaddr *out);

/* The counters of one request: its client's, `user`'s (NULL: none, the
 * chat) and the site's, as far as budget: has ceilings for them. Touches
 * nothing. */
void budget_init(struct budget *b, const struct config *cfg,
                 struct store **slot, struct httpio *io, const char *user);

/*
 * Reserve one request and the tokens of `prompt_bytes` bytes sent to
 * Gemini (plus maxOutputTokens) on every counter. 0, also when no budget
 * is configured; -1 with `err`: ST_BUDGET_EXHAUSTED (retry_after_s
 * set), ST_BUDGET_UNAVAILABLE.
 */
int budget_reserve(struct budget *b, size_t prompt_bytes,
                   struct status_error *err);

/* The gate for the loop's input (loop.h). Its `used` is what
 * budget_settle() settles with, and adds to the request's counters (the
 * access line's); with no budget configured it lets every step through. */
struct loop_gate *budget_gate(struct budget *b);

/* Add what the loop used (b->gate.used) to the request's counters
 * (httpio.h), and replace the reservation by it; that, only when one is
 * held. A store that fails now leaves the reservation
 * counted (logged): the request is over, and the error is on the safe
 * side. */
void budget_settle(struct budget *b);

/* The tokens budget_reserve() counts for `bytes` sent to Gemini: one per
 * 4 bytes (rounded up), plus what one step may write. */
long long budget_estimate(const struct config *cfg, size_t bytes);

#endif /* APP_BUDGET_H */
