/*
 * unit_fixture.c - the recorded Gemini payloads, read whole (see
 * unit_fixture.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "unit_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

char *
unit_fixture(const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    char *buf = NULL;
    long n;

    snprintf(path, sizeof(path), "%s/%s", UNIT_FIXTURES, name);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open fixture '%s'", path);
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
        buf[n] = '\0';
        *len = (size_t)n;
    }
    fclose(f);
    ck_assert_ptr_nonnull(buf);
    return buf;
}
