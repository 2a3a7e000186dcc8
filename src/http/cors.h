/*
 * cors.h - cross-origin calls (CORS), decided in one place.
 *
 * Off unless agent.yaml lists http.cors.allowOrigins: then nothing
 * changes (an OPTIONS is a 405, like any method a route does not take).
 * On, a request whose Origin is one of them gets, on every answer it is
 * given (errors and streams included), Access-Control-Allow-Origin: that
 * origin and Vary: Origin (reply.c writes them from io->cors_origin).
 * Never `*`, never Access-Control-Allow-Credentials: the session cookie
 * stays same-site (auth.c refuses it cross-site on what changes things),
 * so another origin's page calls the run API with a Bearer token.
 *
 * A preflight (OPTIONS with Access-Control-Request-Method) to a path a
 * route serves: 204 with the methods and headers the routes take, from
 * a listed origin; 403 origin_not_allowed, without CORS headers, from any
 * other. A request from an origin not listed is answered as without
 * CORS, so the browser keeps the answer from that page.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CORS_H
#define APP_CORS_H

#include "core/common.h"

struct config;
struct httpio;
struct status_error;

/* Set io->cors_origin when CORS is on and the request's Origin is listed. */
void cors_decide(const struct config *cfg, struct httpio *io);

/* Is this request a CORS preflight the responder answers (CORS on, an
 * OPTIONS carrying Access-Control-Request-Method)? */
bool cors_is_preflight(const struct config *cfg, struct httpio *io,
                       const char *method);

/* Answer a preflight for a path a route serves: 0 with the 204 written,
 * or -1 with origin_not_allowed in `err` (or a failed write). */
int cors_preflight(struct httpio *io, struct status_error *err);

#endif /* APP_CORS_H */
