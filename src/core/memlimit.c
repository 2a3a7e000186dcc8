/*
 * memlimit.c - the request's memory budget (see memlimit.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/memlimit.h"
#include "core/logmsg.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

/* The allocator's own bookkeeping, per thread (each thread of a worker
 * runs its own request): bytes charged since the request began, the
 * budget, and how deep in parses we are. */
static _Thread_local size_t charged, budget;
static _Thread_local int parsing;

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
    if (HOOK_FAILS(n))
        return false;
    add_charge(n);
    return !memlimit_exceeded();
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

static void *
json_alloc(size_t n)
{
    void *p;

#ifdef TESTING
    memlimit_json_live++; /* undone below when nothing is allocated */
#endif
    if (parsing == 0) {
        p = memlimit_charge(n) ? malloc(n) : NULL;
#ifdef TESTING
        memlimit_json_live -= p == NULL;
#endif
        return p;
    }
    /* Inside a parse: counted, never refused (see memlimit.h). */
    add_charge(n);
    p = malloc(n);
    if (p == NULL) {
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

static void
json_release(void *p)
{
    memlimit_json_live -= p != NULL;
    free(p);
}
#define JSON_FREE json_release
#else
#define JSON_FREE free
#endif

void
memlimit_install(void)
{
    json_set_alloc_funcs(json_alloc, JSON_FREE);
}
