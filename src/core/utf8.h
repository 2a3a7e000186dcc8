/*
 * utf8.h - the one set of UTF-8 helpers: cut, decode, count, scrub.
 *
 * Text we write into messages, error envelopes, logs and generated files
 * comes from clients, from Gemini and from site files; some of it is cut
 * to fit a buffer. These keep a cut from splitting a character and keep
 * ill-formed bytes out of JSON strings (which jansson would refuse).
 * "Well-formed" is RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UTF8_H
#define APP_UTF8_H

#include "core/common.h"

/* What utf8_next() sets for a byte that starts no well-formed sequence;
 * outside Unicode, so it never collides with a real code point. */
#define UTF8_BAD 0x110000u

/* The length of the longest prefix of s[0..n) that does not end inside a
 * UTF-8 sequence: where s may be cut. */
size_t utf8_cut(const char *s, size_t n);

/* Decode the sequence at s[0..len) (len >= 1): its length, with *cp set;
 * or 1 with *cp = UTF8_BAD when it is not well-formed. */
size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp);

/*
 * The length (2 to 4) of the well-formed sequence at s[0..len) whose first
 * byte is >= 0x80, or 0 when it is not one (the same rules as utf8_next()).
 * Inline: the JSON scanner and writer call it for every non-ASCII
 * character.
 */
static inline size_t
utf8_seq_len(const unsigned char *s, size_t len)
{
    unsigned c = s[0];

    if (c >= 0xC2 && c <= 0xDF)
        return len >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (len < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        /* E0 80..9F is overlong; ED A0..BF encodes a surrogate */
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F))
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (len < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        /* F0 80..8F is overlong; F4 90..BF is past U+10FFFF */
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
            return 0;
        return 4;
    }
    return 0;
}

/* Code points in s[0..n) (well-formed text: continuation bytes do not
 * count). */
size_t utf8_count(const char *s, size_t n);

/* Replace every byte that starts no well-formed sequence with '?', in
 * place, so that the string can always be a JSON string. */
void utf8_scrub(char *s);

#endif /* APP_UTF8_H */
