/*
 * arena.h - per-request memory: allocate freely, free everything at once.
 *
 * A request allocates from its worker's arena and never frees piecemeal;
 * arena_reset() after the response runs the registered cleanups (LIFO) and
 * returns the memory. Cleanups let jansson values and other heap objects
 * share the arena's lifetime (`arena_defer(a, json_decref_fn, v)`).
 *
 * Not thread-safe: one arena per worker. Allocation failure returns NULL.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_ARENA_H
#define APP_ARENA_H

#include "core/common.h"

struct arena_block;
struct arena_cleanup;

struct arena {
    struct arena_block *head;     /* current block, chained to older ones */
    struct arena_cleanup *defers; /* LIFO list of cleanups */
    size_t total;                 /* bytes held in blocks */
};

typedef void (*arena_cleanup_fn)(void *data);

/* Initialise an empty arena; allocates nothing. */
void arena_init(struct arena *a);

/* Memory for `n` bytes aligned for any type; NULL on failure. */
void *arena_alloc(struct arena *a, size_t n) ATTR_WUR;

/* Zeroed memory for `count` items of `size` bytes, overflow-checked. */
void *arena_calloc(struct arena *a, size_t count, size_t size) ATTR_WUR;

/* A NUL-terminated copy of `s[0..n)`; NULL on failure. */
char *arena_strndup(struct arena *a, const char *s, size_t n) ATTR_WUR;

/* A NUL-terminated copy of `s`; NULL on failure or when s is NULL. */
char *arena_strdup(struct arena *a, const char *s) ATTR_WUR;

/* printf into the arena; NULL on failure. */
char *arena_printf(struct arena *a, const char *fmt, ...)
    ATTR_FMT(2, 3) ATTR_WUR;

/*
 * Run fn(data) at the next arena_reset()/arena_release(), after every
 * cleanup registered later. Returns 0, or -1 when out of memory, in which
 * case fn(data) has already been called so nothing leaks.
 */
int arena_defer(struct arena *a, arena_cleanup_fn fn, void *data);

/*
 * Pin a jansson value (json_t *) to the arena: it is decref'd at reset,
 * or, when it was made from this very arena (memlimit_json_arena), simply
 * goes with it. Returns `v`, or NULL (after the decref) when out of
 * memory. Takes the caller's reference. Declared with void * to keep jansson out of this header.
 */
void *arena_take_json(struct arena *a, void *v);

/* Was `p` allocated from `a` (and not yet reset)? A walk over its blocks,
 * which are few: they grow with the arena. */
bool arena_owns(const struct arena *a, const void *p);

/* Run the cleanups and free all but the first block, for reuse. */
void arena_reset(struct arena *a);

/* Run the cleanups and free everything. The arena may be re-initialised. */
void arena_release(struct arena *a);

#endif /* APP_ARENA_H */
