/*
 * canon.c - canonical JSON (see canon.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/canon.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/sbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

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
        const char **keys, *key;
        json_t *m;
        int rc = 0;

        if (n == 0)
            return sbuf_put(out, "{}", 2);
        if ((keys = malloc(n * sizeof(*keys))) == NULL)
            return -1;
        json_object_foreach(UNCONST(v), key, m) {
            keys[i++] = key;
        }
        qsort(keys, n, sizeof(*keys), by_key);
        rc |= sbuf_putc(out, '{');
        for (k = 0; k < n && rc == 0; k++) {
            if (k > 0)
                rc |= sbuf_putc(out, ',');
            rc |= jsonout_string(out, keys[k], strlen(keys[k]));
            rc |= sbuf_putc(out, ':');
            if (rc == 0)
                rc |= write_value(json_object_get(v, keys[k]), out, depth + 1);
        }
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
    case JSON_STRING:
        return jsonout_string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return jsonout_integer(out, json_integer_value(v));
    case JSON_REAL:
        return write_real(json_real_value(v), out);
    case JSON_TRUE:
        return sbuf_put(out, "true", 4);
    case JSON_FALSE:
        return sbuf_put(out, "false", 5);
    case JSON_NULL:
        return sbuf_put(out, "null", 4);
    }
    return -1;
}

int
canon_write(const json_t *v, struct sbuf *out)
{
    return v == NULL ? -1 : write_value(v, out, 0);
}
