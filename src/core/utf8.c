/*
 * utf8.c - UTF-8 helpers (see utf8.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/utf8.h"

#include <string.h>

size_t
utf8_cut(const char *s, size_t n)
{
    size_t lead = n, need;
    unsigned char c;

    /* Step back over continuation bytes to the lead byte of the last
     * sequence; drop that sequence when it does not fit whole. */
    while (lead > 0 && ((unsigned char)s[lead - 1] & 0xC0) == 0x80)
        lead--;
    if (lead == 0)
        return 0;
    lead--;
    c = (unsigned char)s[lead];
    need = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    return n - lead >= need ? n : lead;
}

size_t
utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
    /* the least code point each length may encode: less is overlong */
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t c = s[0];
    size_t n;

    *cp = UTF8_BAD;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 1;
    if (n > len)
        return 1;
    c &= 0x7fu >> n; /* the lead byte's payload bits */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 1;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 1;
    *cp = c;
    return n;
}

size_t
utf8_count(const char *s, size_t n)
{
    size_t count = 0;

    for (size_t i = 0; i < n; i++)
        count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

void
utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t len = strlen(s);

    while (len > 0) {
        uint32_t cp;
        size_t n = utf8_next(p, len, &cp);

        if (cp == UTF8_BAD)
            *p = '?';
        p += n;
        len -= n;
    }
}
