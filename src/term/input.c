/*
 * input.c - the session's own line reader (input.h).
 *
 * Not stdio: a FILE reads ahead into a buffer poll() cannot see, so a
 * line already read would look like no input at all. read(2) into our
 * buffer instead; poll() then tells the truth about the rest. The
 * descriptor stays blocking (it is shared with whoever started us):
 * read() follows a poll() that said there is something, so it never
 * waits.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/input.h"
#include "term/bounds.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes asked of one read(). */
#define INPUT_CHUNK 65536

void
term_input_init(struct term_input *in, int fd)
{
    memset(in, 0, sizeof(*in));
    in->fd = fd;
}

void
term_input_release(struct term_input *in)
{
    for (size_t i = 0; i < in->nqueued; i++)
        free(in->queued[i]);
    free(in->buf);
    memset(in, 0, sizeof(*in));
    in->fd = -1;
}

/* Drop the line handed out last. */
static void
forget_taken(struct term_input *in)
{
    if (in->taken == 0)
        return;
    memmove(in->buf, in->buf + in->taken, in->len - in->taken);
    in->len -= in->taken;
    in->scanned = in->scanned > in->taken ? in->scanned - in->taken : 0;
    in->taken = 0;
}

/* Hand out buf[0..n) (n <= len; buf[n] is the newline or the end). */
static long
hand_out(struct term_input *in, size_t n, size_t skip, const char **line)
{
    size_t l = n;

    if (l > 0 && in->buf[l - 1] == '\r')
        l--;
    in->buf[l] = '\0';
    in->taken = n + skip;
    in->scanned = 0;
    *line = in->buf;
    return (long)l;
}

/* Read once (poll said there is something, or we may wait). 0, or -1 at
 * the end / on a failure. */
static int
fill(struct term_input *in)
{
    ssize_t r;

    if (in->cap - in->len < INPUT_CHUNK + 1) {
        size_t cap = in->len + INPUT_CHUNK + 1;
        char *b = realloc(in->buf, cap);
        if (b == NULL) {
            fprintf(stderr, "gemini-agent chat: out of memory reading the "
                            "input; stopping\n");
            return -1;
        }
        in->buf = b;
        in->cap = cap;
    }
    do
        r = read(in->fd, in->buf + in->len, INPUT_CHUNK);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return -1;
    in->len += (size_t)r;
    return 0;
}

long
term_input_line(struct term_input *in, int timeout_ms, const char **line)
{
    if (in->stopped)
        return -1;
    forget_taken(in);
    for (;;) {
        char *nl = in->len > in->scanned ? memchr(in->buf + in->scanned, '\n',
                                                  in->len - in->scanned)
                                         : NULL;
        if (nl != NULL && (size_t)(nl - in->buf) <= BOUND_TERM_INPUT_LINE)
            return hand_out(in, (size_t)(nl - in->buf), 1, line);
        in->scanned = in->len;
        if (in->len > BOUND_TERM_INPUT_LINE) {
            fprintf(stderr,
                    "gemini-agent chat: an input line is longer than %u "
                    "bytes; stopping\n",
                    BOUND_TERM_INPUT_LINE);
            in->stopped = true;
            return -1;
        }
        if (in->eof) {
            if (in->len == 0)
                return -1;
            return hand_out(in, in->len, 0, line); /* no newline at the end */
        }
        struct pollfd pf = {.fd = in->fd, .events = POLLIN};
        int n = poll(&pf, 1, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return TERM_INPUT_NONE;
        if (n < 0 || fill(in) != 0)
            in->eof = true;
    }
}

int
term_input_defer(struct term_input *in, const char *line)
{
    char *copy;

    if (in->nqueued >= BOUND_TERM_QUEUED) {
        fprintf(stderr, "gemini-agent chat: too many queued messages; one "
                        "dropped\n");
        return -1;
    }
    copy = strdup(line);
    if (copy == NULL) {
        fprintf(stderr, "gemini-agent chat: out of memory; a queued message "
                        "dropped\n");
        return -1;
    }
    in->queued[in->nqueued++] = copy;
    return 0;
}

char *
term_input_undefer(struct term_input *in)
{
    char *q;

    if (in->nqueued == 0)
        return NULL;
    q = in->queued[0];
    memmove(in->queued, in->queued + 1,
            (in->nqueued - 1) * sizeof(*in->queued));
    in->nqueued--;
    return q;
}
