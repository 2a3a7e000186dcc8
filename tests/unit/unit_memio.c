/*
 * unit_memio.c - the memory transport of the suites (see unit_memio.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "unit_memio.h"

#include <check.h>
#include <string.h>

static const char *
mem_param(void *ctx, const char *name)
{
    struct unit_memio *m = ctx;

    for (size_t i = 0; m->params[i]; i += 2)
        if (strcmp(m->params[i], name) == 0)
            return m->params[i + 1];
    return NULL;
}

static long
mem_read(void *ctx, char *buf, size_t n)
{
    struct unit_memio *m = ctx;
    size_t left = m->body_len - m->pos;
    size_t k = n < left ? n : left;

    if (m->chunk > 0 && k > m->chunk)
        k = m->chunk;
    memcpy(buf, m->body + m->pos, k);
    m->pos += k;
    return (long)k;
}

static int
mem_write(void *ctx, const char *buf, size_t n)
{
    struct unit_memio *m = ctx;

    ck_assert_msg(n < m->out_cap - m->out_len, "the answer is too long");
    memcpy(m->out + m->out_len, buf, n);
    m->out_len += n;
    m->out[m->out_len] = '\0';
    return 0;
}

const struct httpio_ops unit_memio_ops = {mem_param, mem_read, mem_write,
                                          NULL};
