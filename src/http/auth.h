/*
 * auth.h - who is asking: the identity of a request to the run API.
 *
 * A request names its user in one of two ways (docs/http-api.md "Identity"):
 *
 *   1. the web server signed the user in (nginx auth_request or
 *      auth_basic, Apache's auth modules) and passed the user's name in
 *      the variable auth.remoteUser names (GA_REMOTE_USER behind nginx,
 *      REMOTE_USER behind Apache); trusted only then, because only the
 *      site owner knows whether the server sets it itself, and only a
 *      variable no client can set is accepted there (core/config.h);
 *   2. a session token (core/token.h) in `Authorization: Bearer <token>`
 *      or, failing that, in the session cookie (auth.sessionCookie,
 *      default ga_session). A browser sends a cookie with requests other
 *      sites make it send, so a cookie-authenticated request that may
 *      change something (any method but GET and HEAD) must come from the
 *      site's own pages: its Origin must be <scheme>://<Host>. A Bearer
 *      token is only ever attached by script that holds it: no such check.
 *
 * A trusted, non-empty signed-in user wins over a token. Every failure is
 * ST_UNAUTHORIZED (401) with a short reason that helps nobody forge a
 * token; no token, cookie or secret is ever logged or echoed.
 *
 * Not here: the token format and the secret (core/token.h), which routes
 * need an identity (the run API's routes ask).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_AUTH_H
#define APP_AUTH_H

#include "core/common.h"

struct config;
struct httpio;
struct status_error;

/*
 * The user of the request on `io`, into user[0..cap) (TOKEN_USER_SIZE,
 * from core/token.h, is always enough). secret[0..n) is the site's
 * session secret (site->auth_secret); n == 0 means tokens are not
 * accepted. Returns 0, or -1 with ST_UNAUTHORIZED:
 *   "sign in first: ..."           no identity at all
 *   "session token rejected: ..."  malformed, bad signature, expired, or
 *                                  tokens not accepted here
 *   "cross-site request refused"   a cookie-authenticated request that may
 *                                  change something, without the site's
 *                                  own Origin
 * (ST_INTERNAL when `user` is too small). `user` is "" after a failure.
 */
int auth_identify(const struct config *cfg, const unsigned char *secret,
                  size_t n, struct httpio *io, char *user, size_t cap,
                  struct status_error *err) ATTR_WUR;

/*
 * The value of a Set-Cookie header that stores `token` in the session
 * cookie for max_age seconds (>= 0; 0 with token "" signs out):
 *
 *     ga_session=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=N
 *
 * plus "; Secure" when the request came over HTTPS (HTTPS=on), into
 * out[0..cap). HttpOnly keeps the token from the page's scripts;
 * SameSite=Lax keeps other sites' forms and scripts from sending it
 * (auth_identify's Origin check is the second line). Returns 0, or -1
 * with ST_BAD_REQUEST (not a token's characters, a negative max_age) or
 * ST_INTERNAL (`out` too small).
 */
int auth_cookie_header(const struct config *cfg, struct httpio *io,
                       const char *token, long long max_age, char *out,
                       size_t cap, struct status_error *err) ATTR_WUR;

#endif /* APP_AUTH_H */
