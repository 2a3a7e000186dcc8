/*
 * sbuf.h - a bounded, growable byte buffer.
 *
 * Invariants: `buf` is never NULL (it points at a static empty string until
 * the first append) and is always NUL-terminated; `len` never exceeds
 * `max`. An append past `max` fails and leaves the buffer unchanged, so a
 * runaway producer (an upstream body, a generated file) is cut off instead
 * of eating the worker's memory.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SBUF_H
#define APP_SBUF_H

#include "core/common.h"

struct sbuf {
    char *buf;
    size_t len;
    size_t alloc; /* 0 while buf points at the static empty string */
    size_t max;   /* largest len allowed */
};

/* Initialise with a cap of `max` bytes; allocates nothing. */
void sbuf_init(struct sbuf *sb, size_t max);

/* Append bytes; -1 (buffer unchanged) when over the cap or out of memory. */
int sbuf_add(struct sbuf *sb, const void *data, size_t n) ATTR_WUR;

/* Append a NUL-terminated string. */
int sbuf_adds(struct sbuf *sb, const char *s) ATTR_WUR;

/* Append printf output. */
int sbuf_addf(struct sbuf *sb, const char *fmt, ...) ATTR_FMT(2, 3) ATTR_WUR;

/* Append the shortest of %.15g..%.17g that reads back as exactly `d`
 * (0.1 stays "0.1", not "0.10000000000000001"). */
int sbuf_add_real(struct sbuf *sb, double d) ATTR_WUR;

/* Empty the buffer, keeping its memory. */
void sbuf_reset(struct sbuf *sb);

/* Hand out the heap string (caller frees) and re-initialise the buffer.
 * Returns a malloc'd empty string for an untouched buffer; NULL on OOM. */
char *sbuf_detach(struct sbuf *sb, size_t *len);

/* Free the memory; the buffer is left initialised and empty. */
void sbuf_release(struct sbuf *sb);

#endif /* APP_SBUF_H */
