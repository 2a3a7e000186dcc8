/*
 * unit_fixture.h - the recorded Gemini payloads (tests/data/gemini-fixtures),
 * read whole by the suites that replay them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_FIXTURE_H
#define APP_UNIT_FIXTURE_H

#include "core/common.h"

/* The folder, from tests/unit (where the suites run). */
#define UNIT_FIXTURES "../data/gemini-fixtures"

/* The fixture `name`, NUL-terminated (malloc'd; free it), its length in
 * *len; the test fails when it cannot be read. */
char *unit_fixture(const char *name, size_t *len);

#endif /* APP_UNIT_FIXTURE_H */
