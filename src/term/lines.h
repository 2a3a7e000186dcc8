/*
 * lines.h - the lines of --input-format stream-json, read from a file
 * descriptor with our own buffer, so that whether a whole line is
 * waiting can be asked without blocking: stdio's buffer may hold lines
 * that poll() on the descriptor no longer sees, and it has no call that
 * says so. The session asks while a Gemini call is in flight, for an
 * interrupt (docs/internals/terminal.md, "Control requests").
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_LINES_H
#define APP_TERM_LINES_H

#include "core/common.h"

#include <stddef.h>

struct term_lines {
    int fd;
    size_t max;       /* the longest line accepted, its newline included */
    char *buf;        /* heap: bytes read and not yet handed out */
    size_t start, len, cap; /* the unread bytes are buf[start..len) */
    size_t scanned;   /* buf[start..scanned) holds no newline */
    bool eof;         /* read() said end of input (or failed) */
    bool too_long;    /* a line passed `max`: nothing more is read */
};

void term_lines_init(struct term_lines *l, int fd, size_t max);
void term_lines_release(struct term_lines *l);

/*
 * The next line, its newline (and a CR before it) cut, NUL-terminated in
 * *line until the next call; a last line without a newline counts. With
 * `wait`, reads until one is whole; without, reads at most once and only
 * when the descriptor has bytes now. Returns its length; -1 when there
 * is no line (yet, without `wait`); -2 at the end of input, or when a
 * line is longer than `max` (l->too_long: the input is not read again).
 */
long term_lines_next(struct term_lines *l, bool wait, char **line);

#endif /* APP_TERM_LINES_H */
