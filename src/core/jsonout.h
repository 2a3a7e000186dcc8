/*
 * jsonout.h - JSON text out: our own writer, byte for byte jansson's.
 *
 * Everything we send is written compact with reals at 15 digits
 * (APP_JSON_FLAGS). jansson's dumper is slow on the request path (it
 * decodes every character, formats every number with snprintf and hashes
 * every container's address to find cycles), and it ignores the result
 * of writing an object's key, so when the buffer behind json_dumps()
 * cannot grow the key's bytes go missing and broken JSON goes out. This
 * writer produces exactly the bytes json_dumps(v, APP_JSON_FLAGS |
 * JSON_ENCODE_ANY) produces, into an sbuf, and the first failed write
 * fails the whole text: a failed write is never dropped.
 *
 * The string escaper here is the one jscan_write() uses too, so a span
 * copied from a request and a value built in memory come out alike.
 *
 * Not here: reading JSON (jsonin.h, jscan.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSONOUT_H
#define APP_JSONOUT_H

#include "core/common.h"

#include <string.h>

struct json_t;
struct sbuf;

/* No cap of our own: the text is as large as what it writes. */
#define JSONOUT_UNBOUNDED (SIZE_MAX / 2)

/*
 * The text of `v` written with `flags` (at most `max` bytes). Returns a
 * NUL-terminated heap string (free it), with its length in `*len` (may be
 * NULL), or NULL when out of memory, over `max`, or when jansson would
 * not write it either (a scalar without JSON_ENCODE_ANY, a value inside
 * itself, a string that is not UTF-8). Our own writer serves APP_JSON_FLAGS
 * with or without JSON_ENCODE_ANY; other flags go through jansson's
 * dumper, with the failures still sticking.
 */
char *jsonout_dumps(const struct json_t *v, size_t flags, size_t max,
                    size_t *len);

/*
 * Append the text of `v` as json_dumps(v, APP_JSON_FLAGS | JSON_ENCODE_ANY)
 * writes it. Returns 0, or -1 with `out` as it was (out of memory, over
 * the sbuf's cap, or a value jansson would refuse to write: a cycle, a
 * string that is not UTF-8, nesting past BOUND_JSON_WRITE_DEPTH).
 */
int jsonout_write(const struct json_t *v, struct sbuf *out) ATTR_WUR;

/*
 * Append s[0..len) as a JSON string, quoted and escaped as jansson does:
 * \" \\ \b \f \n \r \t, \u00XX (upper-case hex) for the other control
 * characters, everything else as it is ('/' and non-ASCII included).
 * Returns 0, or -1 when out of room or memory, or when s is not UTF-8
 * (jansson refuses those too); on -1 a part of the string may have been
 * appended (jsonout_write() takes it back).
 */
int jsonout_string(struct sbuf *out, const char *s, size_t len) ATTR_WUR;

/* Append an integer as jansson writes it ("%lld"). */
int jsonout_integer(struct sbuf *out, long long v) ATTR_WUR;

/* Append a real as jansson writes it with JSON_REAL_PRECISION(15): "%.15g",
 * ".0" added when that looks like an integer, the exponent without '+'
 * or leading zeros ("1e-5", "1e20"). */
int jsonout_real(struct sbuf *out, double d) ATTR_WUR;

/* Write the control character c (< 0x20) as jansson escapes it when it
 * has no short form: "\u00XX", upper-case hex, six bytes at o. */
static inline void
jsonout_control(char *o, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";

    memcpy(o, "\\u00", 4);
    o[4] = hex[c >> 4];
    o[5] = hex[c & 15];
}

/*
 * The number of bytes from p (at most end - p) before the first one a
 * JSON string cannot hold as it is: '"', '\\', a control character, or a
 * byte >= 0x80 (non-ASCII needs its UTF-8 checked). Eight bytes at a time
 * (SWAR); inline, as it is the inner loop of the scanner and the writer.
 */
static inline size_t
jsonout_plain_run(const unsigned char *p, const unsigned char *end)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    const unsigned char *q = p;

    while (end - q >= 8) {
        uint64_t w, quote, bslash, m;

        memcpy(&w, q, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w); /* the first byte in the low bits */
#endif
        quote = w ^ (ones * '"');
        bslash = w ^ (ones * '\\');
        /* bit 7 of a byte ends up set when the byte is < 0x20 (the
         * subtraction borrows), >= 0x80 (w itself), or zero after the
         * xor ('"' or '\\'). A borrow only flags bytes above a byte
         * already flagged, so the lowest flag is exact. */
        m = ((w - ones * 0x20) | w | ((quote - ones) & ~quote) |
             ((bslash - ones) & ~bslash)) &
            high;
        if (m != 0)
            return (size_t)(q - p) + ((size_t)__builtin_ctzll(m) >> 3);
        q += 8;
    }
    while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
        q++;
    return (size_t)(q - p);
}

#endif /* APP_JSONOUT_H */
