/*
 * unit_diag.h - assertions on problem lists (struct diag), shared by the
 * suites of the file loaders.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_DIAG_H
#define APP_UNIT_DIAG_H

#include "core/common.h"

struct diag;

/* One expected problem; `word` must occur in the message. */
struct want {
    const char *file;
    int line;
    const char *word;
};

/* All problems as `file:line: message` lines, for failure messages
 * (malloc'd; free it). */
char *unit_dump_diag(const struct diag *d);

/* Exactly the problems of `w` (ended by a NULL file), in any order. */
void unit_assert_problems(const struct diag *d, const struct want *w);

#endif /* APP_UNIT_DIAG_H */
