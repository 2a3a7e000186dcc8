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
static const unsigned char v4_prefix[12] = {0, 0, 0, 0, 0, 0,
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
        unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * i : 0;
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
