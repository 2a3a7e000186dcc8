/*
 * opstatus.c - GET /_jay/status (see opstatus.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/opstatus.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/netaddr.h"
#include "core/status.h"
#include "http/budget.h"
#include "http/reply.h"
#include "http/site.h"
#include "store/store.h"

#include <jansson.h>
#include <time.h>

/* Top counters shown: the clients (and users) that spent most today. */
#define OPSTATUS_TOP 10

/* A ceiling, or null for none. */
static json_t *
ceiling_value(long v)
{
    return v > 0 ? json_integer(v) : json_null();
}

static json_t *
ceiling(const struct config_ceiling *c)
{
    return json_pack("{s:o, s:o}", "requestsPerMinute",
                     ceiling_value(c->requests_per_minute), "tokensPerDay",
                     ceiling_value(c->tokens_per_day));
}

/* What the counters hold now: the site's, and the top spenders'. */
static json_t *
used(const struct site *site, struct store **slot)
{
    struct status_error e = {0};
    struct store_budget_use u;
    struct timespec ts;
    json_t *top = NULL;
    int64_t now;

    clock_gettime(CLOCK_REALTIME, &ts);
    now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if ((*slot == NULL &&
         (*slot = store_open_migrated(site->cfg->run.store, &e)) == NULL) ||
        (*slot)->ops->budget_get(*slot, "site", now, &u, &e) != 0 ||
        (*slot)->ops->budget_top(*slot, now, OPSTATUS_TOP, &top, &e) != 0)
        return json_pack("{s:s}", "error", e.text);
    return json_pack("{s:{s:I, s:I}, s:o}", "site", "requests",
                     (json_int_t)u.requests, "tokens", (json_int_t)u.tokens,
                     "top", top);
}

int
opstatus_reply(const struct site *site, struct store **slot, struct httpio *io,
               struct arena *a, const struct opstatus_workers *w, int *status,
               struct status_error *err)
{
    const struct config *cfg = site->cfg;
    const struct config_budget *b = &cfg->budget;
    struct netaddr client;
    json_t *v;

    if (!cfg->status.on)
        return status_set(err, ST_NOT_FOUND, "no route for /_jay/status");
    if (!budget_client(cfg, io, &client) ||
        !netaddr_in(cfg->status.allow, cfg->status.nallow, &client))
        return status_set(err, ST_FORBIDDEN,
                          "the status is not shown to this address "
                          "(http.status.allow)");
    v = json_pack(
        "{s:{s:o, s:o, s:o, s:o}, s:{s:I, s:I, s:I, s:I, s:I}, s:o}", "budget",
        "perIp", ceiling(&b->per_ip), "perUser", ceiling(&b->per_user), "site",
        ceiling(&b->site), "used", b->on ? used(site, slot) : json_null(),
        "limits", "maxOutputTokens", (json_int_t)cfg->limits.max_output_tokens,
        "maxLoopSteps", (json_int_t)cfg->limits.max_loop_steps,
        "maxCallsPerTurn", (json_int_t)cfg->limits.max_calls_per_turn,
        "maxUpstreamBytes", (json_int_t)cfg->limits.max_upstream_bytes,
        "maxBodyBytes", (json_int_t)cfg->limits.max_body_bytes, "workers",
        w != NULL && w->known
            ? json_pack("{s:i, s:i}", "busy", w->busy, "total", w->total)
            : json_null());
    if (v == NULL || arena_take_json(a, v) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    *status = 200;
    return reply_json(io, 200, v);
}
