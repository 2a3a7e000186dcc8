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

/* Code points in s[0..n) (well-formed text: continuation bytes do not
 * count). */
size_t utf8_count(const char *s, size_t n);

/* Replace every byte that starts no well-formed sequence with '?', in
 * place, so that the string can always be a JSON string. */
void utf8_scrub(char *s);

#endif /* APP_UTF8_H */
