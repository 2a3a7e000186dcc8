/*
 * diag.h - a list of problems found in files, printed as `file:line: message`.
 *
 * Loading config, plugin.yaml and .jay-action files does not stop at the
 * first problem: `gemini-agent check` must show them all. Loaders add to a
 * `struct diag`; the caller prints and releases it. Heap-allocated (it lives
 * at load time, not per request). Line 0 means "the file as a whole".
 *
 * Beside the problems it keeps notes: things worth telling the site owner
 * that are not wrong (a key another framework uses, accepted and ignored).
 * Notes are not counted in `count`, so "no new problems" stays
 * `count == before`, and `check` still passes with notes.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_DIAG_H
#define APP_DIAG_H

#include "core/common.h"

#include <stdio.h>

struct diag_item {
    char *file; /* heap */
    int line;   /* 1-based; 0 = whole file */
    char *msg;  /* heap */
};

struct diag {
    struct diag_item *items; /* the problems */
    size_t count;
    size_t alloc;
    struct diag_item *notes; /* informational, not problems */
    size_t nnotes;
    size_t notes_alloc;
};

#define DIAG_INIT                                                              \
    {                                                                          \
        NULL, 0, 0, NULL, 0, 0                                                 \
    }

/* Record a problem. Out of memory is reported on stderr and otherwise
 * ignored: a lost diagnostic must not turn into a crash. */
void diag_add(struct diag *d, const char *file, int line, const char *fmt, ...)
    ATTR_FMT(4, 5);

/* Record a note (see above); out of memory as for diag_add. */
void diag_note(struct diag *d, const char *file, int line, const char *fmt, ...)
    ATTR_FMT(4, 5);

/* Print each problem on its own line: `file:line: message` (or `file:
 * message` when line is 0), optionally prefixed, e.g. "error: ". */
void diag_print(const struct diag *d, FILE *out, const char *prefix);

/* Print each note the same way, prefixed "note: ". */
void diag_print_notes(const struct diag *d, FILE *out);

/* Log each problem as a warning line and each note as an info line
 * (logmsg.h), for the server's log. */
void diag_log(const struct diag *d);

/* Move all problems and notes of `from` to the end of `to`'s; `from` is
 * left empty. */
void diag_move(struct diag *to, struct diag *from);

void diag_release(struct diag *d);

#endif /* APP_DIAG_H */
