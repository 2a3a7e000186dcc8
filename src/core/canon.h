/*
 * canon.h - canonical JSON: one text per JSON value, whoever wrote it.
 *
 * What the server signs (history turns, approval tickets) comes back
 * from a browser that parsed it and wrote it again: JavaScript's
 * JSON.stringify keeps the values but not the text (key order for keys
 * that look like numbers, the spelling of numbers and of escapes). So a
 * signature covers this canonical text of the value, not the bytes sent:
 *
 *   - objects: members sorted by key (bytewise), no spaces;
 *   - strings: as our writer escapes them (jsonout_string);
 *   - numbers: a real whose 15-digit form is a whole number is written as
 *     that integer ("5.0" and "5" are one number once JavaScript has held
 *     it); other reals at 15 digits, as jsonout_real writes them (what the
 *     browser received); integers as they are.
 *
 * Integers beyond 2^53 do not survive JavaScript: a value holding one
 * fails its signature after a browser round trip. Gemini does not send
 * them in turns.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CANON_H
#define APP_CANON_H

#include "core/common.h"

struct json_t;
struct sbuf;

/* Append the canonical text of `v`. Returns 0, or -1 when out of memory
 * or room, or for a value our writer would refuse (nesting deeper than
 * BOUND_JSON_WRITE_DEPTH, a string that is not UTF-8). */
int canon_write(const struct json_t *v, struct sbuf *out) ATTR_WUR;

#endif
