/*
 * dispatch.h - one HTTP request, from the first byte read to the last
 * byte written.
 *
 * dispatch_request() is the map of the request path: route -> method ->
 * body (content type, length, strict JSON) -> the route's work -> reply.
 * Every route is a row in one table; every failure becomes one JSON error
 * through reply_error(). It is transport-agnostic (httpio.h), so FastCGI
 * workers, CGI and the unit tests all run exactly this code.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_DISPATCH_H
#define APP_DISPATCH_H

#include "core/common.h"

struct arena;
struct gemini;
struct httpio;
struct site;
struct store;

/*
 * The registered names of the actions the chat routes serve
 * (geminiAgent.sendMessage, geminiAgent.submitToolResults), NULL-ended:
 * the plugin entries that say `route: chat` (plugin.h) must be among them.
 */
extern const char *const dispatch_chat_actions[];

/*
 * Answer the request on `io`. Memory comes from `a`, which the caller
 * resets afterwards; `g` is the worker's Gemini client (its connection
 * outlives the request). Returns the HTTP status sent (0 when the client
 * went away before the answer was written).
 */
int dispatch_request(const struct site *site, struct gemini *g,
                     struct httpio *io, struct arena *a);

/*
 * What the routes may ask of the server that runs them (GET
 * /_jay/status): the process layer above fills it in, since http/ cannot
 * include it. A member may be NULL.
 */
struct dispatch_host {
    /* threads serving a request now and threads that may, over every
     * worker of the server */
    void (*workers)(void *ctx, int *busy, int *total);
    void *ctx;
};

/* The same, with the caller's store connection: *store is opened by the
 * first request that needs it (the run API, a budget) and kept for the
 * next (a worker thread keeps one; the caller closes it). `host` may be
 * NULL. */
int dispatch_request_ex(const struct site *site, struct gemini *g,
                        struct store **store, const struct dispatch_host *host,
                        struct httpio *io, struct arena *a);

#endif /* APP_DISPATCH_H */
