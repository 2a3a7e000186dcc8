/*
 * canon.c - canonical JSON (see canon.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/canon.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/memlimit.h"
#include "core/sbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects in turns have a handful of members: sort them in place. */
static void
sort_keys(const char **keys, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const char *k = keys[i];
        size_t j = i;
        for (; j > 0 && strcmp(keys[j - 1], k) > 0; j--)
            keys[j] = keys[j - 1];
        keys[j] = k;
    }
}

static int
by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many members are sorted on the stack (and by insertion). */
#define CANON_SMALL 16

/* A real as the browser will send it back (see canon.h). */
static int
write_real(double d, struct sbuf *out)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.15g", d);

    if (n <= 0 || (size_t)n >= sizeof(buf))
        return -1;
    if (strspn(buf, "-0123456789") != (size_t)n)
        return jsonout_real(out, d);
    /* a whole number: "-0" is 0 to JavaScript */
    return strcmp(buf, "-0") == 0 ? sbuf_putc(out, '0')
                                  : sbuf_put(out, buf, (size_t)n);
}

static int
write_value(const json_t *v, struct sbuf *out, int depth)
{
    if (depth > BOUND_JSON_WRITE_DEPTH)
        return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0, k;
        const char *small[CANON_SMALL], **keys = small, *key;
        json_t *m;
        int rc = 0;

        if (n == 0)
            return sbuf_put(out, "{}", 2);
        if (n > CANON_SMALL &&
            (keys = memlimit_malloc(n * sizeof(*keys))) == NULL)
            return -1;
        json_object_foreach(UNCONST(v), key, m) {
            keys[i++] = key;
        }
        if (n > CANON_SMALL)
            qsort(keys, n, sizeof(*keys), by_key);
        else
            sort_keys(keys, n);
        rc |= sbuf_putc(out, '{');
        for (k = 0; k < n && rc == 0; k++) {
            if (k > 0)
                rc |= sbuf_putc(out, ',');
            rc |= jsonout_string(out, keys[k], strlen(keys[k]));
            rc |= sbuf_putc(out, ':');
            if (rc == 0)
                rc |= write_value(json_object_get(v, keys[k]), out, depth + 1);
        }
        if (keys != small)
            free(keys);
        return rc != 0 ? -1 : sbuf_putc(out, '}');
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *m;
        int rc = sbuf_putc(out, '[');

        json_array_foreach(v, i, m) {
            if (i > 0)
                rc |= sbuf_putc(out, ',');
            if (rc == 0)
                rc |= write_value(m, out, depth + 1);
        }
        return rc != 0 ? -1 : sbuf_putc(out, ']');
    }
    case JSON_REAL:
        return write_real(json_real_value(v), out);
    default: /* strings, integers, true, false, null: as our writer does */
        return jsonout_write(v, out);
    }
}

int
canon_write(const json_t *v, struct sbuf *out)
{
    return v == NULL ? -1 : write_value(v, out, 0);
}
