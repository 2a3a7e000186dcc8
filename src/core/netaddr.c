/*
 * netaddr.c - IP addresses and networks (see netaddr.h), over inet_pton
 * and inet_ntop.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/netaddr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* The 12 bytes that make an IPv6 address an IPv4-mapped one. */
static const unsigned char v4_prefix[12] = {0, 0, 0, 0, 0,    0,
                                            0, 0, 0, 0, 0xff, 0xff};

bool
netaddr_is_v4(const struct netaddr *a)
{
    return memcmp(a->b, v4_prefix, sizeof(v4_prefix)) == 0 && a->bits >= 96;
}

void
netaddr_mask(struct netaddr *a, unsigned bits)
{
    if (bits > a->bits)
        bits = a->bits;
    for (unsigned i = 0; i < 16; i++) {
        unsigned keep = bits >= 8 * (i + 1) ? 8
                        : bits > 8 * i      ? bits - 8 * i
                                            : 0;
        a->b[i] &= (unsigned char)(0xff00u >> keep);
    }
    a->bits = bits;
}

/* A prefix length: 1 to 3 decimal digits, no sign, no leading zero. */
static bool
prefix_value(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;

    if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

bool
netaddr_parse(const char *s, size_t n, struct netaddr *out)
{
    char text[NETADDR_TEXT_MAX];
    const char *slash = memchr(s, '/', n);
    size_t alen = slash ? (size_t)(slash - s) : n;
    unsigned prefix = 0;
    bool v4;

    memset(out, 0, sizeof(*out));
    if (alen == 0 || alen >= sizeof(text) || memchr(s, '\0', n) != NULL)
        return false;
    memcpy(text, s, alen);
    text[alen] = '\0';
    v4 = inet_pton(AF_INET, text, out->b + 12) == 1;
    if (v4)
        memcpy(out->b, v4_prefix, sizeof(v4_prefix));
    else if (inet_pton(AF_INET6, text, out->b) != 1)
        goto bad;
    out->bits = 128;
    if (slash != NULL) {
        if (!prefix_value(slash + 1, n - alen - 1, &prefix) ||
            prefix > (v4 ? 32u : 128u))
            goto bad;
        netaddr_mask(out, v4 ? 96 + prefix : prefix);
    }
    return true;
bad:
    memset(out, 0, sizeof(*out));
    return false;
}

bool
netaddr_match(const struct netaddr *net, const struct netaddr *addr)
{
    struct netaddr a = *addr;

    if (addr->bits < net->bits)
        return false; /* a wider network is not inside a narrower one */
    netaddr_mask(&a, net->bits);
    return memcmp(a.b, net->b, sizeof(a.b)) == 0;
}

bool
netaddr_in(const struct netaddr *list, size_t n, const struct netaddr *addr)
{
    for (size_t i = 0; i < n; i++)
        if (netaddr_match(&list[i], addr))
            return true;
    return false;
}

void
netaddr_format(const struct netaddr *a, char out[NETADDR_TEXT_MAX])
{
    bool v4 = netaddr_is_v4(a);
    size_t len;

    if (inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? a->b + 12 : a->b, out,
                  NETADDR_TEXT_MAX) == NULL) {
        snprintf(out, NETADDR_TEXT_MAX, "?");
        return;
    }
    len = strlen(out);
    if (a->bits < 128)
        snprintf(out + len, NETADDR_TEXT_MAX - len, "/%u",
                 v4 ? a->bits - 96 : a->bits);
}

/* --- the ranges that are not the public Internet ------------------------- */

/* RFC 6890's special-purpose registries (IPv4 and IPv6) and RFC 6598's
 * shared space, most specific first: the first match names the kind.
 * Read with netaddr_parse on each use: a fetch asks a few times per
 * connection, and a table of text is one that can be checked by eye. */
static const struct {
    const char *net;
    const char *kind;
} reserved_nets[] = {
    {"0.0.0.0/8", "unspecified"},
    {"10.0.0.0/8", "private"},
    {"100.64.0.0/10", "shared"},
    {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local"},
    {"172.16.0.0/12", "private"},
    {"192.0.0.0/24", "reserved"},
    {"192.0.2.0/24", "documentation"},
    {"192.88.99.0/24", "reserved"},
    {"192.168.0.0/16", "private"},
    {"198.18.0.0/15", "reserved"},
    {"198.51.100.0/24", "documentation"},
    {"203.0.113.0/24", "documentation"},
    {"224.0.0.0/4", "multicast"},
    {"255.255.255.255/32", "broadcast"},
    {"240.0.0.0/4", "reserved"},
    {"::/128", "unspecified"},
    {"::1/128", "loopback"},
    {"::/96", "reserved"},          /* IPv4-compatible, deprecated */
    {"64:ff9b:1::/48", "reserved"}, /* NAT64 for local use */
    {"100::/64", "reserved"},       /* discard */
    {"2001:db8::/32", "documentation"},
    {"2001::/23", "reserved"}, /* protocol assignments, Teredo */
    {"fc00::/7", "private"},
    {"fec0::/10", "private"}, /* site-local, deprecated */
    {"fe80::/10", "link-local"},
    {"ff00::/8", "multicast"},
};

/* IPv6 ranges whose address carries an IPv4 one at byte `at`. */
static const struct {
    const char *net;
    unsigned at;
} embedding_nets[] = {
    {"64:ff9b::/96", 12}, /* NAT64 (RFC 6052) */
    {"2002::/16", 2},     /* 6to4 (RFC 3056) */
};

static bool
in_text_net(const char *text, const struct netaddr *a)
{
    struct netaddr net;

    return netaddr_parse(text, strlen(text), &net) && netaddr_match(&net, a);
}

const char *
netaddr_reserved(const struct netaddr *a)
{
    struct netaddr global;

    for (size_t i = 0; i < ARRAY_SIZE(reserved_nets); i++)
        if (in_text_net(reserved_nets[i].net, a))
            return reserved_nets[i].kind;
    if (netaddr_is_v4(a))
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(embedding_nets); i++) {
        if (in_text_net(embedding_nets[i].net, a)) {
            struct netaddr v4 = {{0}, 128};
            memcpy(v4.b, v4_prefix, sizeof(v4_prefix));
            memcpy(v4.b + 12, a->b + embedding_nets[i].at, 4);
            return netaddr_reserved(&v4);
        }
    }
    /* global unicast is 2000::/3; the rest is not handed out */
    netaddr_parse("2000::/3", 8, &global);
    return netaddr_match(&global, a) ? NULL : "reserved";
}
