/*
 * request.h - read and check an HTTP request's head and body.
 *
 * The strict part of the HTTP contract (docs/http-api.md) lives here: the
 * route path, the method, `Content-Type: application/json` (else 415), a
 * CONTENT_LENGTH parsed with overflow checks (garbage -> 400, over the
 * limit -> 413 before a byte of the body is read), a body that must arrive
 * whole (short -> 400, never a hang: the web server closes the stream) and
 * strict JSON decoding (jsonin.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_REQUEST_H
#define APP_REQUEST_H

#include "core/common.h"

struct arena;
struct httpio;
struct jscan_doc;
struct status_error;

struct request_head {
    const char *method; /* "GET", "POST", ... ("" when missing) */
    const char *path;   /* the whole path without the query string */
    const char *route;  /* its part the routes match (request_route), or
                         * NULL when it can be no route */
};

/*
 * The part of `path` that the routes match, a suffix of it, or NULL.
 *
 * A site may live under any base path: `/shop/_jay/actions/x` (a
 * subfolder) and `/~alice/agent/_jay/actions/x` (Apache's userdir) are
 * the route `/_jay/actions/x`, as `/_jay/actions/x` itself is. The route
 * starts at the first segment that begins one of the route namespaces,
 * `/_jay/` or `/api/agent/`; what comes before it is the base, ignored.
 * The first one, so a namespace later in the path is only a part of the
 * route (`/_jay/actions/x/_jay/status` is no route). No namespace: the
 * whole path (it matches no route). A path with a `.` or `..` segment is
 * never a route (NULL): what the web server resolved and what the
 * responder would read could differ. Nothing is %-decoded here: nginx's
 * DOCUMENT_URI and CGI's PATH_INFO come decoded, Apache's REQUEST_URI
 * raw, where an escape (`%2F`, `%5F`) only ever makes a path match no
 * route, since no route holds a '%'.
 */
const char *request_route(const char *path);

/* Fill `head` from the CGI parameters. Borrowed strings, or arena copies. */
int request_head(struct httpio *io, struct arena *a, struct request_head *head,
                 struct status_error *err);

/*
 * Parse a CONTENT_LENGTH value: decimal digits only, no sign, no spaces,
 * no overflow. Returns 0 with *out set, or -1 with err (ST_BAD_LENGTH).
 */
int request_parse_length(const char *s, size_t *out, struct status_error *err);

/*
 * Check the content type and length, read the body (at most `max_bytes`)
 * into the arena `a`, and scan it strictly (jsonin_scan): `*body` gets
 * its tape, in `a` too. The route builds jansson values of the parts it
 * reads as values, elsewhere, and may drop `a` once it has read what it
 * needs. Returns 0, or -1 with err set.
 */
int request_json_body(struct httpio *io, size_t max_bytes, struct arena *a,
                      struct jscan_doc *body, struct status_error *err);

#endif /* APP_REQUEST_H */
