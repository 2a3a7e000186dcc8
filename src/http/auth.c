/*
 * auth.c - the identity of a request: the web server's signed-in user
 * (auth.remoteUser), a Bearer token or the session cookie (see auth.h).
 *
 * Everything is read from CGI parameters, which the web server fills from
 * the request's headers (HTTP_AUTHORIZATION, HTTP_COOKIE, HTTP_ORIGIN,
 * HTTP_HOST) and from its own state (the signed-in user's variable,
 * HTTPS, REQUEST_METHOD).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/auth.h"
#include "core/bounds.h"
#include "http/bounds.h"
#include "core/config.h"
#include "core/status.h"
#include "core/token.h"
#include "http/httpio.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char msg_no_identity[] =
    "sign in first: this route needs a session token or a signed-in user";

static const char *
param(struct httpio *io, const char *name)
{
    return io->ops->param(io->ctx, name);
}

static bool
is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* The request came over HTTPS: nginx (fastcgi_params) and Apache set
 * HTTPS=on then. */
static bool
is_https(struct httpio *io)
{
    const char *v = param(io, "HTTPS");
    return v != NULL && strcasecmp(v, "on") == 0;
}

/* Copy p[0..n) into buf[TOKEN_SIZE] as a string; false when it is longer
 * than any token. */
static bool
copy_token(const char *p, size_t n, char buf[TOKEN_SIZE])
{
    if (n > BOUND_TOKEN_LEN)
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return true;
}

/*
 * The token of `Authorization: Bearer <token>` (RFC 6750 §2.1; the scheme
 * is case-insensitive, RFC 7235), into buf. 1 found, 0 no Bearer header
 * (none, or another scheme such as Basic from the web server's own
 * sign-in), -1 a Bearer header with no usable token.
 */
static int
bearer_token(struct httpio *io, char buf[TOKEN_SIZE])
{
    const char *h = param(io, "HTTP_AUTHORIZATION"), *p, *end;

    if (h == NULL || strncasecmp(h, "Bearer", 6) != 0 ||
        (h[6] != '\0' && !is_ows(h[6])))
        return 0;
    for (p = h + 6; is_ows(*p); p++)
        ;
    for (end = p + strlen(p); end > p && is_ows(end[-1]); end--)
        ;
    if (end == p)
        return -1;
    return copy_token(p, (size_t)(end - p), buf) ? 1 : -1;
}

/*
 * The value of cookie `name` in a Cookie header ("a=b; name=v; c=d",
 * RFC 6265 §4.2; a value may be in double quotes), the first if it comes
 * twice. Sets *v and *n and returns true, or false when it is absent or
 * empty.
 */
static bool
find_cookie(const char *h, const char *name, const char **v, size_t *n)
{
    size_t nlen = strlen(name);

    while (h != NULL && *h != '\0') {
        const char *end = strchr(h, ';'), *eq, *ke, *vs, *ve;
        if (end == NULL)
            end = h + strlen(h);
        while (h < end && is_ows(*h))
            h++;
        eq = memchr(h, '=', (size_t)(end - h));
        if (eq != NULL) {
            for (ke = eq; ke > h && is_ows(ke[-1]); ke--)
                ;
            for (vs = eq + 1; vs < end && is_ows(*vs); vs++)
                ;
            for (ve = end; ve > vs && is_ows(ve[-1]); ve--)
                ;
            if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
                vs++;
                ve--;
            }
            if ((size_t)(ke - h) == nlen && memcmp(h, name, nlen) == 0) {
                *v = vs;
                *n = (size_t)(ve - vs);
                return *n > 0;
            }
        }
        h = *end == ';' ? end + 1 : end;
    }
    return false;
}

/* GET and HEAD change nothing; every other method may. */
static bool
is_safe_method(struct httpio *io)
{
    const char *m = param(io, "REQUEST_METHOD");
    return m != NULL && (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0);
}

/*
 * Did the request come from one of the site's own pages? Its Origin must
 * be <scheme>://<host>[:<port>] (RFC 6454), the scheme being the one the
 * request came over. Host names are case-insensitive; a browser leaves the
 * default port out of Origin, so a Host that spells it (":443" over HTTPS,
 * ":80" over HTTP) matches without it too. Debian's fastcgi_params passes
 * HTTP_HOST as nginx's $host, which has no port: then the port is
 * SERVER_PORT, the one the request came to.
 */
static bool
same_origin(struct httpio *io)
{
    const char *origin = param(io, "HTTP_ORIGIN");
    const char *host = param(io, "HTTP_HOST");
    const char *port = param(io, "SERVER_PORT");
    const char *scheme = is_https(io) ? "https" : "http";
    const char *dport = is_https(io) ? "443" : "80";
    char site[BOUND_HOST_LEN + 8];
    size_t slen = strlen(scheme), hlen, dlen = strlen(dport) + 1;
    const char *colon;

    if (origin == NULL || host == NULL || host[0] == '\0' ||
        strlen(host) > BOUND_HOST_LEN)
        return false;
    /* the host with its port: "[::1]:8080", "example.com:8080" */
    colon = strrchr(host, ':');
    if ((colon == NULL || strchr(colon, ']') != NULL) && port != NULL &&
        port[0] != '\0' && strcmp(port, dport) != 0 &&
        strspn(port, "0123456789") == strlen(port) && strlen(port) <= 5)
        snprintf(site, sizeof(site), "%s:%s", host, port);
    else
        snprintf(site, sizeof(site), "%s", host);
    hlen = strlen(site);
    if (strncasecmp(origin, scheme, slen) != 0 ||
        strncmp(origin + slen, "://", 3) != 0)
        return false;
    origin += slen + 3;
    if (strcasecmp(origin, site) == 0)
        return true;
    return hlen > dlen && site[hlen - dlen] == ':' &&
           strcmp(site + hlen - dlen + 1, dport) == 0 &&
           strlen(origin) == hlen - dlen &&
           strncasecmp(origin, site, hlen - dlen) == 0;
}

static int
from_remote_user(const char *ru, char *user, size_t cap,
                 struct status_error *err)
{
    size_t len = strnlen(ru, BOUND_USER_NAME + 1);

    if (!token_user_valid(ru, len))
        return status_set(err, ST_UNAUTHORIZED,
                          "the web server's user name cannot be used here");
    if (len >= cap)
        return status_set(err, ST_INTERNAL, "user name buffer too small");
    memcpy(user, ru, len + 1);
    return 0;
}

int
auth_identify(const struct config *cfg, const unsigned char *secret, size_t n,
              struct httpio *io, char *user, size_t cap,
              struct status_error *err)
{
    char token[TOKEN_SIZE];
    const char *ru, *v;
    size_t vlen;
    bool cookie = false;
    int found, rc;

    if (cap > 0)
        user[0] = '\0';
    /* auth.remoteUser names a variable only the web server's sign-in
     * sets (config.c refuses the others) */
    if (cfg->auth.remote_user_var != NULL &&
        (ru = param(io, cfg->auth.remote_user_var)) != NULL && ru[0] != '\0')
        return from_remote_user(ru, user, cap, err);

    found = bearer_token(io, token);
    if (found == 0 && find_cookie(param(io, "HTTP_COOKIE"),
                                  cfg->auth.session_cookie, &v, &vlen)) {
        cookie = true;
        found = copy_token(v, vlen, token) ? 1 : -1;
    }
    if (found == 0)
        return status_set(err, ST_UNAUTHORIZED, "%s", msg_no_identity);
    /* The cookie rides along with requests other sites make the browser
     * send; only the site's own pages may use it to change things. */
    if (cookie && !is_safe_method(io) && !same_origin(io))
        return status_set(err, ST_UNAUTHORIZED, "cross-site request refused");
    if (found < 0)
        return status_set(err, ST_UNAUTHORIZED,
                          "session token rejected: malformed");
    if (n == 0)
        return status_set(err, ST_UNAUTHORIZED,
                          "session token rejected: this site accepts none "
                          "(auth.secretFile is not set)");
    /* Wall-clock time: an expiry is a Unix time. */
    rc = token_verify(secret, n, token, (long long)time(NULL), user, cap, err);
    explicit_bzero(token, sizeof(token));
    return rc;
}

/* Characters a token is made of (token.h): base64url, digits and dots;
 * all of them cookie-octets (RFC 6265 §4.1.1). */
static bool
token_chars(const char *t)
{
    for (; *t != '\0'; t++)
        if (!((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') ||
              (*t >= '0' && *t <= '9') || *t == '-' || *t == '_' || *t == '.'))
            return false;
    return true;
}

int
auth_cookie_header(const struct config *cfg, struct httpio *io,
                   const char *token, long long max_age, char *out, size_t cap,
                   struct status_error *err)
{
    int k;

    if (cap > 0)
        out[0] = '\0';
    if (strlen(token) > BOUND_TOKEN_LEN || !token_chars(token))
        return status_set(err, ST_BAD_REQUEST,
                          "a session cookie holds a session token");
    if (max_age < 0)
        return status_set(err, ST_BAD_REQUEST,
                          "a session cookie's Max-Age cannot be negative");
    k = snprintf(out, cap,
                 "%s=%s; Path=/; HttpOnly; SameSite=Lax; Max-Age=%lld%s",
                 cfg->auth.session_cookie, token, max_age,
                 is_https(io) ? "; Secure" : "");
    if (k < 0 || (size_t)k >= cap) {
        if (cap > 0)
            out[0] = '\0';
        return status_set(err, ST_INTERNAL, "cookie buffer too small");
    }
    return 0;
}
