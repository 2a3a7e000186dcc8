/*
 * outbound.h - where the server's own fetches for a plugin may go: the
 * one door of web_search, references, MCP over HTTP and any later plugin
 * that reads the network.
 *
 * The policy: an address of the public Internet is fine; one that is not
 * (core/netaddr.h's netaddr_reserved: loopback, private, shared, link-
 * local with the cloud metadata address 169.254.169.254, multicast,
 * unspecified, broadcast, reserved; IPv4 and IPv6, the IPv6 forms of an
 * IPv4 address judged by it) is refused unless the owner lists it in
 * agent.yaml's `outbound.allow`. The host hands that list to the built-in
 * plugins that fetch (plugins/builtin.h's builtin_outbound_plugins) as
 * the member "outbound" of their configuration; outbound_from_config()
 * reads it back. The terminal client hands "allow everything" (its user
 * fetches from their own machine, as any tool they run would).
 *
 * The check is made on the address curl is about to connect to, in its
 * CURLOPT_OPENSOCKETFUNCTION: after curl's one lookup, before a socket
 * exists. So what is checked is what is connected to (no second lookup a
 * rebinding DNS could answer differently), for every connection of the
 * transfer (each redirect hop's included), and for each address of a
 * name that has several: a refused one is skipped and the next tried.
 * Proxies from the environment (http_proxy, https_proxy, ALL_PROXY) are
 * switched off: through a proxy curl connects to the proxy, which would
 * resolve and reach the target unchecked.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_OUTBOUND_H
#define APP_OUTBOUND_H

#include "core/common.h"
#include "core/bounds.h"
#include "core/netaddr.h"

struct json_t;

/* What a plugin may reach besides the public Internet; zeroed: nothing. */
struct outbound {
    struct netaddr allow[BOUND_ADDRESS_LIST];
    size_t nallow;
};

/*
 * Read the member "outbound", {"allow": ["127.0.0.2/32", "fd00::/8"]}, of
 * a plugin's configuration `config` into *p. Absent (a host that passes
 * none, a test): nothing beyond the public Internet. Returns 0, or -1
 * with a reason in err[errsize].
 */
int outbound_from_config(const struct json_t *config, struct outbound *p,
                         char *err, size_t errsize) ATTR_WUR;

/* May `a` be connected to? NULL when it may; else the kind of range it
 * lies in (netaddr_reserved's names). */
const char *outbound_refuses(const struct outbound *p, const struct netaddr *a);

/* One transfer's check: the policy, and what it refused. */
struct outbound_guard {
    const struct outbound *policy; /* NULL: the zeroed policy */
    unsigned refused;              /* addresses refused so far */
    char addr[NETADDR_TEXT_MAX];   /* the first one */
    const char *kind;              /* ... and its range */
};

/*
 * Make the curl easy handle `curl` (a CURL *) connect only where
 * `policy` allows, and through no proxy, reporting into *g (which must
 * outlive every transfer of the handle with these options; curl_easy_
 * reset() removes them). Returns 0, or -1 when curl refused an option.
 */
int outbound_guard(void *curl, struct outbound_guard *g,
                   const struct outbound *policy) ATTR_WUR;

/*
 * After a transfer of `curl` that failed: did the guard refuse an
 * address? Then write "the address of HOST is not allowed" (HOST: of the
 * URL the transfer had reached, a redirect's target included) into
 * msg[msgsize], log a warning for the owner naming the host, the address,
 * its range and outbound.allow, and return true. The URL's path and
 * query (a visitor's words) are never in either.
 */
bool outbound_refusal(void *curl, const struct outbound_guard *g, char *msg,
                      size_t msgsize);

#endif /* APP_OUTBOUND_H */
