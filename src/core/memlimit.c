/*
 * memlimit.c - the request's memory budget (see memlimit.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/memlimit.h"
#include "core/arena.h"
#include "core/logmsg.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

/* The allocator's own bookkeeping, per thread (each thread of a worker
 * runs its own request): bytes charged since the request began, the
 * budget, and how deep in parses we are. */
static _Thread_local size_t charged, budget;
static _Thread_local int parsing;
/* Where jansson's allocations go while a request runs (NULL: the heap). */
static _Thread_local struct arena *json_arena;

#ifdef TESTING
bool (*memlimit_fail_hook)(size_t n);
#define HOOK_FAILS(n) (memlimit_fail_hook != NULL && memlimit_fail_hook(n))
#else
#define HOOK_FAILS(n) false
#endif

void
memlimit_reset(size_t b)
{
    charged = 0;
    budget = b;
}

bool
memlimit_exceeded(void)
{
    return budget != 0 && charged > budget;
}

size_t
memlimit_used(void)
{
    return charged;
}

/* Count n more bytes, saturating. */
static void
add_charge(size_t n)
{
    charged = n > SIZE_MAX - charged ? SIZE_MAX : charged + n;
}

bool
memlimit_charge(size_t n)
{
    if (parsing > 0) { /* counted, never refused (see memlimit.h) */
        add_charge(n);
        return true;
    }
    if (HOOK_FAILS(n))
        return false;
    add_charge(n);
    return !memlimit_exceeded();
}

void *
memlimit_malloc(size_t n)
{
    return memlimit_charge(n) ? malloc(n) : NULL;
}

void
memlimit_json_arena(struct arena *a)
{
    json_arena = a;
}

bool
memlimit_json_in_arena(const void *v, const struct arena *a)
{
    return a != NULL && json_arena == a && arena_owns(a, v);
}

void
memlimit_json_arena_gone(const struct arena *a)
{
    if (json_arena == a)
        json_arena = NULL;
}

void
memlimit_parse_begin(void)
{
    parsing++;
}

void
memlimit_parse_end(void)
{
    parsing--;
}

/* A jansson block of n bytes from the request's arena, or the heap. No
 * header: jansson's callers may free what it returns (json_dumps()'s
 * text) with free(), so a heap block must be malloc's own. */
static void *
json_block(size_t n)
{
    void *p;

    if (json_arena != NULL)
        /* the arena charges its own blocks; a suite's hook still fails
         * each value, as it would on the heap */
        return parsing == 0 && HOOK_FAILS(n) ? NULL
                                             : arena_alloc(json_arena, n);
    p = memlimit_charge(n) ? malloc(n) : NULL;
#ifdef TESTING
    memlimit_json_live += p != NULL;
#endif
    return p;
}

static void *
json_alloc(size_t n)
{
    void *p = json_block(n);

    /* Inside a parse: counted, never refused (see memlimit.h). */
    if (p == NULL && parsing > 0) {
        static const char msg[] = "gemini-agent: out of memory inside the "
                                  "JSON parser; stopping this process\n";
        /* No allocation, no stdio: write what we can and stop. */
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(70);
    }
    return p;
}

#ifdef TESTING
_Thread_local long memlimit_json_live;
#endif

/* A block of the request's arena stays where it is: the arena's reset
 * takes it back with the rest. */
static void
json_release(void *p)
{
    if (p == NULL || (json_arena != NULL && arena_owns(json_arena, p)))
        return;
#ifdef TESTING
    memlimit_json_live--;
#endif
    free(p);
}

void
memlimit_install(void)
{
    json_set_alloc_funcs(json_alloc, json_release);
}
