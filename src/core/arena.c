/*
 * arena.c - bump allocator in chained blocks, with LIFO cleanups.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/memlimit.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN _Alignof(max_align_t)

struct arena_block {
    struct arena_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    _Alignas(max_align_t) unsigned char data[];
};

struct arena_cleanup {
    struct arena_cleanup *next;
    arena_cleanup_fn fn;
    void *data;
};

void
arena_init(struct arena *a)
{
    a->head = NULL;
    a->defers = NULL;
    a->total = 0;
}

void *
arena_alloc(struct arena *a, size_t n)
{
    struct arena_block *b = a->head;
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

    if (need < n)
        return NULL; /* overflow */
    if (b == NULL || b->size - b->used < need) {
        /* Blocks grow with the arena, half its size so far (up to
         * BOUND_ARENA_GROWTH): a large request takes a few blocks, not
         * hundreds, arena_owns() looks through a few, and the last
         * block leaves at most a third of the arena unused. */
        size_t size = a->total / 2 < BOUND_ARENA_GROWTH ? a->total / 2
                                                        : BOUND_ARENA_GROWTH;
        if (size < BOUND_ARENA_BLOCK)
            size = BOUND_ARENA_BLOCK;
        if (size < need)
            size = need;
        if (size > SIZE_MAX - sizeof(*b) || !memlimit_charge(size))
            return NULL;
        b = malloc(sizeof(*b) + size);
        if (b == NULL)
            return NULL;
        b->size = size;
        b->used = 0;
        b->next = a->head;
        a->head = b;
        a->total += size;
    }
    void *p = b->data + b->used;
    b->used += need;
    return p;
}

void *
arena_calloc(struct arena *a, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *p = arena_alloc(a, count * size);
    if (p != NULL)
        memset(p, 0, count * size);
    return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = arena_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
    return s == NULL ? NULL : arena_strndup(a, s, strlen(s));
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (p == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

int
arena_defer(struct arena *a, arena_cleanup_fn fn, void *data)
{
    struct arena_cleanup *c = arena_alloc(a, sizeof(*c));

    if (c == NULL) {
        fn(data);
        return -1;
    }
    c->fn = fn;
    c->data = data;
    c->next = a->defers;
    a->defers = c;
    return 0;
}

static void
decref_cleanup(void *v)
{
    json_decref(v);
}

void *
arena_take_json(struct arena *a, void *v)
{
    if (v == NULL)
        return NULL;
    /* made from this arena: the reset takes it all back, no walk needed */
    if (memlimit_json_in_arena(v, a))
        return v;
    return arena_defer(a, decref_cleanup, v) == 0 ? v : NULL;
}

static void
run_cleanups(struct arena *a)
{
    /* A cleanup may not allocate from this arena: the list is detached. */
    struct arena_cleanup *c = a->defers;

    a->defers = NULL;
    while (c != NULL) {
        struct arena_cleanup *next = c->next;
        c->fn(c->data);
        c = next;
    }
}

bool
arena_owns(const struct arena *a, const void *p)
{
    const unsigned char *q = p;

    for (const struct arena_block *b = a->head; b != NULL; b = b->next)
        if (q >= b->data && q < b->data + b->size)
            return true;
    return false;
}

void
arena_reset(struct arena *a)
{
    struct arena_block *b, *keep = NULL;

    run_cleanups(a);
    memlimit_json_arena_gone(a);
    /* Keep the oldest block (the first allocated), free the rest. */
    for (b = a->head; b != NULL;) {
        struct arena_block *next = b->next;
        if (next == NULL && b->size == BOUND_ARENA_BLOCK) {
            keep = b;
        } else {
            free(b);
        }
        b = next;
    }
    a->head = keep;
    a->total = keep ? keep->size : 0;
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
}

void
arena_release(struct arena *a)
{
    run_cleanups(a);
    memlimit_json_arena_gone(a);
    while (a->head != NULL) {
        struct arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->total = 0;
}
