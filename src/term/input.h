/*
 * input.h - the lines of `gemini-agent chat --input-format stream-json`,
 * read from the input's file descriptor by the session itself, so that
 * they can be watched while a turn runs: a blocking read between turns
 * (and while a tool waits for permission), and a check that takes only
 * what is already there (poll with timeout 0) while Gemini answers or a
 * tool runs - one thread, no signal. Lines that must wait for after the
 * turn (user messages) are queued here.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_INPUT_H
#define APP_TERM_INPUT_H

#include "core/common.h"
#include "term/bounds.h"

#include <stddef.h>

struct term_input {
    int fd;
    char *buf; /* what was read and not yet handed out */
    size_t len, cap;
    size_t taken;   /* buf[0..taken): the line handed out last */
    size_t scanned; /* buf[taken..scanned) has no newline */
    bool eof;       /* read() said end (or failed) */
    bool stopped;   /* a line past BOUND_TERM_INPUT_LINE: no more input */
    char *queued[BOUND_TERM_QUEUED]; /* lines for after the turn (heap) */
    size_t nqueued;
};

/* Nothing came within the timeout. */
#define TERM_INPUT_NONE (-2)

void term_input_init(struct term_input *in, int fd);
void term_input_release(struct term_input *in);

/*
 * The next line, without its end of line (\n, \r\n), NUL-terminated in
 * *line, valid until the next call: its length. Waits at most
 * `timeout_ms` for it (-1: until it comes; 0: only what is there).
 * TERM_INPUT_NONE when none came in time; -1 at the end of the input
 * (a last line without a newline is still handed out first), when
 * reading failed, or after a line longer than BOUND_TERM_INPUT_LINE
 * (said on stderr).
 */
long term_input_line(struct term_input *in, int timeout_ms, const char **line);

/* Queue a copy of `line` for after the turn: 0, or -1 when the queue is
 * full or out of memory (the line is dropped, said on stderr). */
int term_input_defer(struct term_input *in, const char *line);

/* The oldest queued line (the caller frees it), or NULL. */
char *term_input_undefer(struct term_input *in);

#endif /* APP_TERM_INPUT_H */
