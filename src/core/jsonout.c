/*
 * jsonout.c - our writer for jansson values, and dumps whose failures
 * stick (see jsonout.h).
 *
 * What "byte for byte jansson's" takes, from jansson 2.14's dump.c and
 * strconv.c: members in the object's iteration order (insertion order),
 * no whitespace with JSON_COMPACT, integers with "%lld", reals with
 * jsonp_dtostr() at precision 15, strings escaped as in dump_string()
 * (which refuses ill-formed UTF-8), and a failure for a container that
 * holds itself.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/jsonout.h"
#include "core/bounds.h"
#include "core/sbuf.h"
#include "core/utf8.h"

#include <jansson.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

/* --- pieces --------------------------------------------------------------- */

/* Input bytes escaped per reservation of the output: each may take six
 * ("\u00XX"), and the copy below writes eight at a time past the end. */
#define STRING_CHUNK 4096
#define STRING_SLACK 16

/* Write the character at *pp that is not plain (see jsonout_plain_run)
 * to o, as jansson's dump_string() does: at most six bytes. Returns how
 * many, or 0 for ill-formed UTF-8; moves *pp past it. */
static inline size_t
escape_char(const unsigned char **pp, const unsigned char *end, char *o)
{
    static const char short_esc[32] = {
        ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
    const unsigned char *p = *pp;
    unsigned char c = *p;
    size_t n;

    if (c >= 0x80) {
        n = utf8_seq_len(p, (size_t)(end - p));
        memcpy(o, p, n);
        *pp = p + n;
        return n;
    }
    o[0] = '\\';
    if (c == '"' || c == '\\') {
        o[1] = (char)c;
        n = 2;
    } else if (c < 0x20 && short_esc[c] != 0) {
        o[1] = short_esc[c];
        n = 2;
    } else if (c < 0x20) {
        jsonout_control(o, c);
        n = 6;
    } else {
        o[0] = (char)c; /* plain after all */
        n = 1;
    }
    *pp = p + 1;
    return n;
}

int
jsonout_string(struct sbuf *out, const char *s, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;

    if (sbuf_putc(out, '"') != 0)
        return -1;
    while (p < end) {
        size_t room = out->max - out->len, chunk;
        const unsigned char *stop;
        char *o, one[8];

        size_t need = (size_t)(end - p) < STRING_CHUNK ? (size_t)(end - p)
                                                       : STRING_CHUNK;

        need = need * 6 + STRING_SLACK;
        if (room > need)
            room = need;
        chunk = room > 6 + STRING_SLACK ? (room - STRING_SLACK) / 6 : 0;
        if (chunk == 0) {
            /* near the sbuf's cap: a character at a time, so the cap
             * refuses exactly what would not fit */
            size_t n = escape_char(&p, end, one);
            if (n == 0 || sbuf_put(out, one, n) != 0)
                return -1;
            continue;
        }
        /* Written straight into the buffer: one reservation per chunk,
         * not a call per run and per escape. */
        if (sbuf_reserve(out, room) != 0)
            return -1;
        stop = (size_t)(end - p) > chunk ? p + chunk : end;
        o = out->buf + out->len;
        while (p < stop) {
            /* eight plain bytes at a time, stored before they are known
             * to be plain (the slack allows it) */
            while (stop - p >= 8) {
                uint64_t w, quote, bslash, m;

                memcpy(&w, p, 8);
                memcpy(o, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                w = __builtin_bswap64(w);
#endif
                quote = w ^ (ones * '"');
                bslash = w ^ (ones * '\\');
                /* as in jsonout_plain_run(): the lowest flagged byte is
                 * the first that needs a look */
                m = ((w - ones * 0x20) | w | ((quote - ones) & ~quote) |
                     ((bslash - ones) & ~bslash)) &
                    high;
                if (m != 0) {
                    size_t n = (size_t)__builtin_ctzll(m) >> 3;
                    o += n;
                    p += n;
                    break;
                }
                o += 8;
                p += 8;
            }
            if (p == stop)
                break;
            /* a UTF-8 sequence may end three bytes past `stop`: the
             * slack has room for them */
            size_t n = escape_char(&p, end, o);
            if (n == 0)
                return -1; /* dump_string() stops here too */
            o += n;
        }
        out->len = (size_t)(o - out->buf);
        out->buf[out->len] = '\0';
    }
    return sbuf_putc(out, '"');
}

int
jsonout_integer(struct sbuf *out, long long v)
{
    char buf[24], *end = buf + sizeof(buf), *q = end;
    /* the magnitude in unsigned arithmetic, which LLONG_MIN needs */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
                                 : (unsigned long long)v;

    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--q = '-';
    return sbuf_put(out, q, (size_t)(end - q));
}

int
jsonout_real(struct sbuf *out, double d)
{
    char buf[100], *e;
    const char *point;
    int n = snprintf(buf, sizeof(buf), "%.15g", d);
    size_t len;

    if (n < 0 || (size_t)n >= sizeof(buf) - 3)
        return -1;
    len = (size_t)n;
    /* as jansson: the locale's decimal point goes back to '.' */
    point = localeconv()->decimal_point;
    if (*point != '.') {
        char *pos = strchr(buf, *point);
        if (pos != NULL)
            *pos = '.';
    }
    /* a real must not read back as an integer */
    if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL) {
        memcpy(buf + len, ".0", 3);
        len += 2;
    }
    /* "1e+20" -> "1e20", "1e-05" -> "1e-5" */
    e = strchr(buf, 'e');
    if (e != NULL) {
        char *digits = e + 1, *from = e + 2;

        if (*digits == '-')
            digits++;
        while (*from == '0')
            from++;
        if (from != digits) {
            memmove(digits, from, len - (size_t)(from - buf));
            len -= (size_t)(from - digits);
        }
    }
    return sbuf_put(out, buf, len);
}

/* --- values --------------------------------------------------------------- */

/* The containers being written, innermost first: a container found here
 * again holds itself, and jansson refuses to write it. */
struct path {
    const json_t *v;
    const struct path *up;
};

static int write_value(const json_t *v, struct sbuf *out, const struct path *up,
                       int depth);

static bool
on_path(const struct path *p, const json_t *v)
{
    for (; p != NULL; p = p->up)
        if (p->v == v)
            return true;
    return false;
}

static int
write_object(const json_t *v, struct sbuf *out, const struct path *here,
             int depth)
{
    void *it = json_object_iter(UNCONST(v));

    if (sbuf_putc(out, '{') != 0)
        return -1;
    for (bool first = true; it != NULL; first = false) {
        if (!first && sbuf_putc(out, ',') != 0)
            return -1;
        if (jsonout_string(out, json_object_iter_key(it),
                           json_object_iter_key_len(it)) != 0 ||
            sbuf_putc(out, ':') != 0 ||
            write_value(json_object_iter_value(it), out, here, depth + 1) != 0)
            return -1;
        it = json_object_iter_next(UNCONST(v), it);
    }
    return sbuf_putc(out, '}');
}

static int
write_array(const json_t *v, struct sbuf *out, const struct path *here,
            int depth)
{
    size_t n = json_array_size(v);

    if (sbuf_putc(out, '[') != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && sbuf_putc(out, ',') != 0)
            return -1;
        if (write_value(json_array_get(v, i), out, here, depth + 1) != 0)
            return -1;
    }
    return sbuf_putc(out, ']');
}

static int
write_value(const json_t *v, struct sbuf *out, const struct path *up, int depth)
{
    struct path here = {v, up};

    if (v == NULL)
        return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        if (depth >= BOUND_JSON_WRITE_DEPTH || on_path(up, v))
            return -1;
        return json_is_object(v) ? write_object(v, out, &here, depth)
                                 : write_array(v, out, &here, depth);
    case JSON_STRING:
        return jsonout_string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return jsonout_integer(out, json_integer_value(v));
    case JSON_REAL:
        return jsonout_real(out, json_real_value(v));
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
jsonout_write(const json_t *v, struct sbuf *out)
{
    size_t start = out->len;

    if (write_value(v, out, NULL, 0) != 0) {
        sbuf_truncate(out, start);
        return -1;
    }
    return 0;
}

/* --- dumps ---------------------------------------------------------------- */

/* jansson's dumper, for flags our writer does not serve. */
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

static char *
dumps_jansson(const json_t *v, size_t flags, size_t max, size_t *len)
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

char *
jsonout_dumps(const json_t *v, size_t flags, size_t max, size_t *len)
{
    struct sbuf sb;
    char *out;

    if ((flags & ~(size_t)JSON_ENCODE_ANY) != APP_JSON_FLAGS)
        return dumps_jansson(v, flags, max, len);
    if (!(flags & JSON_ENCODE_ANY) && !json_is_array(v) && !json_is_object(v))
        return NULL;
    sbuf_init(&sb, max);
    if (jsonout_write(v, &sb) != 0) {
        sbuf_release(&sb);
        return NULL;
    }
    out = sbuf_detach(&sb, len);
    sbuf_release(&sb);
    return out;
}
