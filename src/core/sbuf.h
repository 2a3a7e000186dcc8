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

#include <string.h>

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

/* Append `n` spaces (none when n <= 0): the indentation of YAML and
 * TypeScript writers. */
int sbuf_add_spaces(struct sbuf *sb, int n) ATTR_WUR;

/* Append the shortest of %.15g..%.17g that reads back as exactly `d`
 * (0.1 stays "0.1", not "0.10000000000000001"). */
int sbuf_add_real(struct sbuf *sb, double d) ATTR_WUR;

/*
 * sbuf_add() with the common case - the room is already there - inline,
 * for writers that append many small pieces (jsonout, jscan). Same
 * result and same invariants as sbuf_add().
 */
static inline int ATTR_WUR
sbuf_put(struct sbuf *sb, const void *data, size_t n)
{
    /* alloc - len >= n + 1 leaves room for the NUL; alloc <= max + 1
     * keeps len <= max */
    if (n < sb->alloc - sb->len) {
        memcpy(sb->buf + sb->len, data, n);
        sb->len += n;
        sb->buf[sb->len] = '\0';
        return 0;
    }
    return sbuf_add(sb, data, n);
}

static inline int ATTR_WUR
sbuf_putc(struct sbuf *sb, char c)
{
    if (1 < sb->alloc - sb->len) {
        sb->buf[sb->len++] = c;
        sb->buf[sb->len] = '\0';
        return 0;
    }
    return sbuf_add(sb, &c, 1);
}

/* Make room for `n` more bytes (and the NUL) without writing them: a
 * writer may then fill buf[len..len+n) itself and move `len`, keeping
 * buf[len] a NUL. 0, or -1 when over the cap or out of memory. */
int sbuf_reserve(struct sbuf *sb, size_t n) ATTR_WUR;

/* Cut the contents back to `len` bytes (nothing happens when they are
 * not longer), keeping the memory: how a writer takes back a half-written
 * piece. */
void sbuf_truncate(struct sbuf *sb, size_t len);

/* Empty the buffer, keeping its memory. */
void sbuf_reset(struct sbuf *sb);

/* Hand out the heap string (caller frees) and re-initialise the buffer.
 * Returns a malloc'd empty string for an untouched buffer; NULL on OOM. */
char *sbuf_detach(struct sbuf *sb, size_t *len);

/* Free the memory; the buffer is left initialised and empty. */
void sbuf_release(struct sbuf *sb);

#endif /* APP_SBUF_H */
