/*
 * unit_diag.c - assertions on problem lists (see unit_diag.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "unit_diag.h"
#include "core/diag.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
unit_dump_diag(const struct diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    if (d->count == 0)
        fputs("(none)\n", f);
    diag_print(d, f, "    ");
    fclose(f);
    return buf;
}

void
unit_assert_problems(const struct diag *d, const struct want *w)
{
    size_t n = 0;
    bool used[16] = {false};
    char *all = unit_dump_diag(d);

    while (w[n].file != NULL)
        n++;
    ck_assert_msg(d->count == n, "%zu problems, expected %zu:\n%s", d->count,
                  n, all);
    ck_assert_uint_le(n, ARRAY_SIZE(used));
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < d->count &&
               (used[j] || strcmp(d->items[j].file, w[i].file) != 0 ||
                d->items[j].line != w[i].line ||
                strstr(d->items[j].msg, w[i].word) == NULL))
            j++;
        ck_assert_msg(j < d->count, "no problem %s:%d mentioning '%s' in:\n%s",
                      w[i].file, w[i].line, w[i].word, all);
        used[j] = true;
    }
    free(all);
}
