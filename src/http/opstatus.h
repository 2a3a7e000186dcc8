/*
 * opstatus.h - GET /_jay/status: the operator's view of a running site
 * (docs/configuration.md "Budget").
 *
 *   {"budget": {"perIp": {requestsPerMinute, tokensPerDay}, "perUser":
 *    {...}, "site": {...}, "used": {"site": {requests, tokens}, "top":
 *    [{scope, requests, tokens}]}},
 *    "limits": {maxOutputTokens, maxLoopSteps, maxCallsPerTurn,
 *    maxUpstreamBytes, maxBodyBytes},
 *    "workers": {busy, total}}
 *
 * A ceiling that is not configured is null (unlimited); `used` counts
 * this minute's requests and today's (UTC) tokens, and is null when no
 * budget is configured (the store is then not read), or {"error": ...}
 * when the store cannot say. `workers` is null where no server runs
 * (CGI).
 *
 * Off unless http.status.allow names addresses: 404 as for any unknown
 * path; from an address not listed (budget.h's client address), 403.
 * Nothing in it is a secret of the site (no key, no path).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_OPSTATUS_H
#define APP_OPSTATUS_H

#include "core/common.h"

struct arena;
struct httpio;
struct site;
struct status_error;
struct store;

/* What the server says of its request threads (dispatch.h's host). */
struct opstatus_workers {
    bool known; /* false: no server (CGI, tests) */
    int busy;   /* serving a request now, over every worker */
    int total;  /* that may serve at once */
};

/* Answer GET /_jay/status on `io`: 0 with *status the HTTP status sent,
 * or -1 with `err` set (404, 403, out of memory) and nothing sent. */
int opstatus_reply(const struct site *site, struct store **slot,
                   struct httpio *io, struct arena *a,
                   const struct opstatus_workers *w, int *status,
                   struct status_error *err);

#endif /* APP_OPSTATUS_H */
