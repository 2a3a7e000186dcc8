/*
 * lines.c - the lines of --input-format stream-json (lines.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/lines.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes asked of read() at a time: a user message is one line, and the
 * SDK writes each line whole. */
#define LINES_CHUNK 65536

void
term_lines_init(struct term_lines *l, int fd, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->fd = fd;
    l->max = max;
}

void
term_lines_release(struct term_lines *l)
{
    free(l->buf);
    memset(l, 0, sizeof(*l));
    l->fd = -1;
}

/* Hand out buf[start..end) as a line (end at its newline or at len). */
static long
take(struct term_lines *l, size_t end, size_t next, char **line)
{
    char *p = l->buf + l->start;
    size_t n = end - l->start;

    if (n > 0 && p[n - 1] == '\r')
        n--;
    p[n] = '\0';
    *line = p;
    l->start = l->scanned = next;
    return (long)n;
}

/* Room for LINES_CHUNK more bytes (the unread ones moved to the front),
 * or -1 when out of memory. */
static int
room(struct term_lines *l)
{
    if (l->start > 0) {
        memmove(l->buf, l->buf + l->start, l->len - l->start);
        l->len -= l->start;
        l->scanned -= l->start;
        l->start = 0;
    }
    if (l->cap - l->len < LINES_CHUNK + 1) {
        size_t cap = l->len + LINES_CHUNK + 1;
        char *b = realloc(l->buf, cap);
        if (b == NULL)
            return -1;
        l->buf = b;
        l->cap = cap;
    }
    return 0;
}

/* One read(): 1 with bytes, 0 when none are there now (no `wait`), -1
 * at the end of input (or when it failed, or out of memory). */
static int
fill(struct term_lines *l, bool wait)
{
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    ssize_t n;

    if (!wait) {
        int r;
        do
            r = poll(&p, 1, 0);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            return 0;
        /* r < 0 or POLLHUP/POLLERR: read() says which */
    }
    if (room(l) != 0)
        return -1;
    do
        n = read(l->fd, l->buf + l->len, l->cap - l->len - 1);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    l->len += (size_t)n;
    return 1;
}

long
term_lines_next(struct term_lines *l, bool wait, char **line)
{
    *line = NULL;
    if (l->too_long)
        return -2;
    for (bool tried = false;;) {
        char *nl = l->scanned < l->len
                       ? memchr(l->buf + l->scanned, '\n',
                                l->len - l->scanned)
                       : NULL;
        if (nl != NULL) {
            size_t end = (size_t)(nl - l->buf);
            if (end + 1 - l->start > l->max)
                break;
            return take(l, end, end + 1, line);
        }
        l->scanned = l->len;
        if (l->len - l->start > l->max)
            break;
        if (l->eof) {
            if (l->len == l->start)
                return -2;
            return take(l, l->len, l->len, line); /* the last, unended */
        }
        if (!wait && tried)
            return -1;
        tried = true;
        int r = fill(l, wait);
        if (r == 0)
            return -1;
        if (r < 0)
            l->eof = true;
    }
    l->too_long = true;
    return -2;
}
