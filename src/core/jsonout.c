/*
 * jsonout.c - dumps whose failures stick (see jsonout.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/jsonout.h"
#include "core/sbuf.h"

#include <jansson.h>

struct sticky {
    struct sbuf sb;
    bool failed;
};

static int
write_sticky(const char *buf, size_t size, void *data)
{
    struct sticky *w = data;

    if (!w->failed && sbuf_add(&w->sb, buf, size) != 0)
        w->failed = true;
    return w->failed ? -1 : 0;
}

char *
jsonout_dumps(const json_t *v, size_t flags, size_t max, size_t *len)
{
    struct sticky w = {.failed = false};
    char *out;

    sbuf_init(&w.sb, max);
    if (json_dump_callback(v, write_sticky, &w, flags) != 0 || w.failed) {
        sbuf_release(&w.sb);
        return NULL;
    }
    out = sbuf_detach(&w.sb, len);
    sbuf_release(&w.sb);
    return out;
}
