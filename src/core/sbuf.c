/*
 * sbuf.c - bounded growable byte buffer.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/sbuf.h"
#include "core/memlimit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char sbuf_empty[1];

void
sbuf_init(struct sbuf *sb, size_t max)
{
    sb->buf = sbuf_empty;
    sb->len = 0;
    sb->alloc = 0;
    sb->max = max;
}

static int
sbuf_grow(struct sbuf *sb, size_t extra)
{
    size_t want, cap;

    if (extra > sb->max - sb->len)
        return -1;
    want = sb->len + extra + 1;
    if (want <= sb->alloc)
        return 0;
    cap = sb->alloc ? sb->alloc : 256;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    if (cap > sb->max + 1)
        cap = sb->max + 1;
    if (!memlimit_charge(cap - sb->alloc))
        return -1;
    char *p = realloc(sb->alloc ? sb->buf : NULL, cap);
    if (p == NULL)
        return -1;
    if (sb->alloc == 0)
        p[0] = '\0';
    sb->buf = p;
    sb->alloc = cap;
    return 0;
}

int
sbuf_reserve(struct sbuf *sb, size_t n)
{
    return sbuf_grow(sb, n);
}

int
sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
    if (n == 0)
        return 0;
    if (sbuf_grow(sb, n) != 0)
        return -1;
    memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
    return 0;
}

int
sbuf_adds(struct sbuf *sb, const char *s)
{
    return sbuf_add(sb, s, strlen(s));
}

int
sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sbuf_grow(sb, (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
    return 0;
}

int
sbuf_add_spaces(struct sbuf *sb, int n)
{
    static const char spaces[] = "                                ";
    const int chunk = (int)sizeof(spaces) - 1;

    for (; n > 0; n -= chunk)
        if (sbuf_add(sb, spaces, (size_t)(n < chunk ? n : chunk)) != 0)
            return -1;
    return 0;
}

int
sbuf_add_real(struct sbuf *sb, double d)
{
    char buf[40];

    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return sbuf_adds(sb, buf);
}

void
sbuf_truncate(struct sbuf *sb, size_t len)
{
    if (len < sb->len) {
        sb->len = len;
        sb->buf[len] = '\0';
    }
}

void
sbuf_reset(struct sbuf *sb)
{
    sb->len = 0;
    if (sb->alloc)
        sb->buf[0] = '\0';
}

char *
sbuf_detach(struct sbuf *sb, size_t *len)
{
    char *p = sb->alloc ? sb->buf : calloc(1, 1);

    /* what is handed out is kept a while (arena_defer): give back the
     * room it grew into (in place; a failed shrink keeps the block) */
    if (sb->alloc > sb->len + 1 + 4096) {
        char *q = realloc(p, sb->len + 1);
        if (q != NULL)
            p = q;
    }

    if (len)
        *len = sb->len;
    sbuf_init(sb, sb->max);
    return p;
}

void
sbuf_release(struct sbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    sbuf_init(sb, sb->max);
}
