/*
 * diag.c - problem lists for file loaders.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/diag.h"
#include "core/logmsg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
diag_add(struct diag *d, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[512];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (d->count == d->alloc) {
        size_t n = d->alloc ? d->alloc * 2 : 8;
        struct diag_item *p = realloc(d->items, n * sizeof(*p));
        if (p == NULL)
            goto oom;
        d->items = p;
        d->alloc = n;
    }
    struct diag_item *it = &d->items[d->count];
    it->file = strdup(file ? file : "-");
    it->msg = strdup(msg);
    it->line = line;
    if (it->file == NULL || it->msg == NULL) {
        free(it->file);
        free(it->msg);
        goto oom;
    }
    d->count++;
    return;
oom:
    log_err("out of memory recording: %s", msg);
}

void
diag_print(const struct diag *d, FILE *out, const char *prefix)
{
    for (size_t i = 0; i < d->count; i++) {
        const struct diag_item *it = &d->items[i];
        if (it->line > 0)
            fprintf(out, "%s%s:%d: %s\n", prefix ? prefix : "", it->file,
                    it->line, it->msg);
        else
            fprintf(out, "%s%s: %s\n", prefix ? prefix : "", it->file, it->msg);
    }
}

void
diag_log(const struct diag *d)
{
    for (size_t i = 0; i < d->count; i++) {
        const struct diag_item *it = &d->items[i];
        if (it->line > 0)
            log_warn("config: %s:%d: %s", it->file, it->line, it->msg);
        else
            log_warn("config: %s: %s", it->file, it->msg);
    }
}

void
diag_move(struct diag *to, struct diag *from)
{
    for (size_t i = 0; i < from->count; i++) {
        struct diag_item *it = &from->items[i];
        diag_add(to, it->file, it->line, "%s", it->msg);
    }
    diag_release(from);
}

void
diag_release(struct diag *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->items[i].file);
        free(d->items[i].msg);
    }
    free(d->items);
    d->items = NULL;
    d->count = d->alloc = 0;
}
