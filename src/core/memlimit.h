/*
 * memlimit.h - the memory bound of one request, and why the JSON parser
 * never sees a failed allocation.
 *
 * Everything a request allocates goes through three doors: the arena's
 * blocks, an sbuf's growth, and jansson (whose allocator memlimit_install
 * replaces); the few plain heap blocks of the request path (a buffer
 * freed with free()) come from memlimit_malloc(), charged the same way.
 * Each door charges the bytes to the request; past the
 * request's budget (BOUND_REQUEST_MEMORY) the charge fails and the caller
 * sees an ordinary allocation failure, which the request path turns into
 * a 500 envelope. So a request that grows without end is stopped by our
 * own bound, long before the machine runs out.
 *
 * One place may not fail at all: jansson 2.14's lexer ignores a failed
 * allocation when it saves a token's bytes (lex_save), so a failure there
 * silently drops a byte - wrong data, an assert(0), or a read past the
 * buffer. The request path therefore reads JSON with jscan (jscan.h),
 * which checks every allocation. The parses jansson still makes (flags
 * jscan does not mirror, see jsonin.h) run between memlimit_parse_begin
 * and memlimit_parse_end: inside, the budget is not enforced, and the
 * bytes are checked right after (an over-budget parse is dropped as out
 * of memory, cleanly). A real malloc failure inside such a parse, which
 * only an exhausted machine produces under our bound, ends the process
 * with a log line instead of parsing on with corrupted data.
 *
 * A jansson value made while a request runs comes from the request's
 * arena (memlimit_json_arena), so its bytes are charged with the arena's
 * blocks; inside a parse those are counted but never refused either.
 * Which blocks are the arena's is told by their address (arena_owns), not
 * by a header, so a heap block stays malloc's own.
 *
 * The count is per thread: each of a worker's threads runs one request at
 * a time, and jansson's allocator (one per process) charges the thread
 * that calls it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_MEMLIMIT_H
#define APP_MEMLIMIT_H

#include "core/common.h"

struct arena;

/* Route jansson's allocations through the charge; once, at start-up. */
void memlimit_install(void);

/*
 * From now on, this thread's jansson values come from `a` (NULL: from the
 * heap again). A request's values then go with the arena's reset, without
 * a walk of every tree to free it node by node (arena_take_json() skips
 * the decref of a value from the current arena). Set around a request;
 * nothing made then may outlive the arena. Values from the heap (the
 * site's) may be referenced by a request's trees: their counts are then
 * never taken back, and they live as long as the process, as they do.
 */
void memlimit_json_arena(struct arena *a);

/* Is the jansson value `v` from `a`, set by memlimit_json_arena()? */
bool memlimit_json_in_arena(const void *v, const struct arena *a);

/* Called by the arena `a` as it resets, after its cleanups ran: jansson
 * goes back to the heap if it was using `a`. */
void memlimit_json_arena_gone(const struct arena *a);

/* A new request starts with `budget` bytes (0: no limit, as for the
 * command-line tools). */
void memlimit_reset(size_t budget);

/* Charge `n` bytes about to be allocated; false when the request is out
 * of budget (the caller fails the allocation). */
bool memlimit_charge(size_t n) ATTR_WUR;

/*
 * A block of `n` bytes from the heap, for the few places that want
 * malloc()'s own (freed with free()): charged to the request as the
 * doors' are, so a request's plain allocations stop at the same bound
 * and a suite's hook fails them too. NULL when out of budget or memory.
 */
void *memlimit_malloc(size_t n) ATTR_WUR;

/* Around a jansson parse (see above); they nest. */
void memlimit_parse_begin(void);
void memlimit_parse_end(void);

/* Has the request used more than its budget? (After a parse.) */
bool memlimit_exceeded(void);

/* Bytes charged to the request so far (what it allocated, not what it
 * still holds: frees are not counted back). */
size_t memlimit_used(void);

#ifdef TESTING
/* Set by a suite to fail chosen allocations that may fail (every one but
 * those inside a parse); returns true to fail the allocation. */
extern bool (*memlimit_fail_hook)(size_t n);
/* jansson's heap allocations not yet freed (since memlimit_install): a
 * suite compares it before and after a request to find leaks. (Those from
 * a request's arena cannot leak: they go with it.) */
extern _Thread_local long memlimit_json_live;
#endif

#endif /* APP_MEMLIMIT_H */
