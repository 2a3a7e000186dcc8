/*
 * diag.c - problem lists (and notes) for file loaders.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/diag.h"
#include "core/logmsg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Append one item to a list (problems or notes). */
static void
push(struct diag_item **items, size_t *count, size_t *alloc, const char *file,
     int line, const char *msg)
{
    struct diag_item *it;

    if (*count == *alloc) {
        size_t n = *alloc ? *alloc * 2 : 8;
        struct diag_item *p = realloc(*items, n * sizeof(*p));
        if (p == NULL)
            goto oom;
        *items = p;
        *alloc = n;
    }
    it = &(*items)[*count];
    it->file = strdup(file ? file : "-");
    it->msg = strdup(msg);
    it->line = line;
    if (it->file == NULL || it->msg == NULL) {
        free(it->file);
        free(it->msg);
        goto oom;
    }
    (*count)++;
    return;
oom:
    log_err("out of memory recording: %s", msg);
}

/* Format the message and push it onto one of the two lists. */
static void ATTR_FMT(6, 0)
    vpush(struct diag_item **items, size_t *count, size_t *alloc,
          const char *file, int line, const char *fmt, va_list ap)
{
    char msg[512];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    push(items, count, alloc, file, line, msg);
}

void
diag_add(struct diag *d, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vpush(&d->items, &d->count, &d->alloc, file, line, fmt, ap);
    va_end(ap);
}

void
diag_note(struct diag *d, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vpush(&d->notes, &d->nnotes, &d->notes_alloc, file, line, fmt, ap);
    va_end(ap);
}

static void
print_items(const struct diag_item *items, size_t n, FILE *out,
            const char *prefix)
{
    for (size_t i = 0; i < n; i++) {
        const struct diag_item *it = &items[i];
        if (it->line > 0)
            fprintf(out, "%s%s:%d: %s\n", prefix ? prefix : "", it->file,
                    it->line, it->msg);
        else
            fprintf(out, "%s%s: %s\n", prefix ? prefix : "", it->file, it->msg);
    }
}

void
diag_print(const struct diag *d, FILE *out, const char *prefix)
{
    print_items(d->items, d->count, out, prefix);
}

void
diag_print_notes(const struct diag *d, FILE *out)
{
    print_items(d->notes, d->nnotes, out, "note: ");
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
    for (size_t i = 0; i < d->nnotes; i++) {
        const struct diag_item *it = &d->notes[i];
        if (it->line > 0)
            log_info("config: note: %s:%d: %s", it->file, it->line, it->msg);
        else
            log_info("config: note: %s: %s", it->file, it->msg);
    }
}

void
diag_move(struct diag *to, struct diag *from)
{
    for (size_t i = 0; i < from->count; i++) {
        struct diag_item *it = &from->items[i];
        push(&to->items, &to->count, &to->alloc, it->file, it->line, it->msg);
    }
    for (size_t i = 0; i < from->nnotes; i++) {
        struct diag_item *it = &from->notes[i];
        push(&to->notes, &to->nnotes, &to->notes_alloc, it->file, it->line,
             it->msg);
    }
    diag_release(from);
}

static void
free_items(struct diag_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].file);
        free(items[i].msg);
    }
    free(items);
}

void
diag_release(struct diag *d)
{
    free_items(d->items, d->count);
    free_items(d->notes, d->nnotes);
    *d = (struct diag)DIAG_INIT;
}
