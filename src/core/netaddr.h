/*
 * netaddr.h - IP addresses and networks: the proxies whose
 * X-Forwarded-For is believed, the addresses that may read the operator
 * status, and the client a budget counts.
 *
 * An address is IPv4 or IPv6, kept as 16 bytes: an IPv4 address as its
 * IPv4-mapped IPv6 form (::ffff:a.b.c.d), so one comparison serves both
 * families and "::ffff:127.0.0.1" is 127.0.0.1. A network is an address
 * and a prefix length over those 128 bits ("10.0.0.0/8" is /104 of them);
 * a bare address is a network of one (/32, /128).
 *
 * Not here: where an address comes from (http/budget.h reads REMOTE_ADDR
 * and X-Forwarded-For). Pure functions, no allocation.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_NETADDR_H
#define APP_NETADDR_H

#include "core/common.h"

/* Room for any address's text with its prefix ("ffff:...:ffff/128"),
 * and its NUL. */
#define NETADDR_TEXT_MAX 64

struct netaddr {
    unsigned char b[16];
    unsigned bits; /* prefix length over the 128 bits: 128 for one address */
};

/*
 * Read s[0..n): an IPv4 or IPv6 address, optionally followed by
 * "/PREFIX" (0..32 for IPv4, 0..128 for IPv6). Nothing else is accepted:
 * no spaces, no zone ("%eth0"), no leading zeros in the prefix. Bits past
 * the prefix are cleared, so "10.1.2.3/8" is 10.0.0.0/8. Returns true
 * with *out set; false (and *out zeroed) otherwise.
 */
bool netaddr_parse(const char *s, size_t n, struct netaddr *out);

/* Is `addr` (its first net->bits bits) inside `net`? */
bool netaddr_match(const struct netaddr *net, const struct netaddr *addr);

/* ... inside any of list[0..n)? */
bool netaddr_in(const struct netaddr *list, size_t n,
                const struct netaddr *addr);

/* Keep the first `bits` bits (at most a->bits) and clear the rest. */
void netaddr_mask(struct netaddr *a, unsigned bits);

/* Is it an IPv4 address (in its mapped form)? */
bool netaddr_is_v4(const struct netaddr *a);

/*
 * Is `a` (one address) outside the public Internet, and which kind? NULL
 * for a public address; else a short name for the range it lies in:
 * "unspecified", "loopback", "private" (RFC 1918, ULA fc00::/7 and the
 * deprecated site-local fec0::/10), "shared" (100.64.0.0/10, carrier NAT),
 * "link-local" (169.254.0.0/16 with the cloud metadata address, fe80::/10),
 * "multicast", "broadcast", "documentation" or "reserved" (any other
 * special-purpose range of RFC 6890's registries, IPv6 outside 2000::/3).
 * An IPv6 form that carries an IPv4 address (mapped ::ffff:0:0/96, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) is judged by that address; the deprecated
 * IPv4-compatible ::/96 and Teredo are reserved. Static strings.
 */
const char *netaddr_reserved(const struct netaddr *a);

/* The text of `a`: dotted IPv4 or RFC 5952 IPv6, with "/PREFIX" (in its
 * own family's bits) when it is a network of more than one address. */
void netaddr_format(const struct netaddr *a, char out[NETADDR_TEXT_MAX]);

#endif /* APP_NETADDR_H */
