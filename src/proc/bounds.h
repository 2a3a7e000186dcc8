/*
 * bounds.h - the limits only src/proc/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PROC_BOUNDS_H
#define APP_PROC_BOUNDS_H

#include "core/bounds.h"

/* --- reading a request (CGI, FastCGI) ---------------------------------- */

/* A CGI host that announces more body than it sends and keeps stdin open
 * must not hang the process: give up after this long without a byte. */
#define BOUND_CGI_READ_MS 10000

/* The same for a FastCGI connection, each way: a peer that sends nothing
 * (no head, a body that stops) or reads nothing of the answer for this
 * long is dropped and its thread freed (worker.c, take_connection). */
#define BOUND_FCGI_IO_MS 10000

/* ... and a FastCGI request's head (BEGIN_REQUEST and the params) must
 * have arrived whole this long after the connection was taken: a head
 * trickled in under the read timeout is cut then (nginx sends its head
 * at once). */
#define BOUND_FCGI_HEAD_MS 10000

/* --- workers ----------------------------------------------------------- */

#define BOUND_WORKERS   64
#define DEFAULT_WORKERS 2

/* Requests that may wait for a free thread, per worker (--queue), and how
 * long one waits before it is told to come back: past either the answer
 * is a fast 503 with Retry-After, not minutes in the listen backlog. */
#define BOUND_QUEUE            1024
#define DEFAULT_QUEUE          32
#define WORKER_QUEUE_WAIT_MS   5000
#define OVERLOAD_RETRY_AFTER_S 2

/* Blocks below this come from malloc's arenas, not mmap, so a request's
 * large buffers (its body, the Gemini request, 1 MB arena blocks) reuse
 * memory; and an arena keeps up to WORKER_MALLOC_TRIM of free memory
 * rather than handing it back to be faulted in again by the next
 * request. glibc's own thresholds move with the load, and after a run of
 * small requests a large one paid ~50% more CPU in page faults (measured). */
#define WORKER_MALLOC_MMAP (4u * 1024 * 1024)
#define WORKER_MALLOC_TRIM (8u * 1024 * 1024)

/* ...and gives it back once it is idle: no request in flight and no new
 * connection for this long since the last one (malloc_trim). Without it a
 * worker kept what each arena's busiest moment left free, and its RSS
 * stepped up whenever a burst first put a thread on an arena nobody had
 * used (tests/bench/soak.sh: about 0.5 MB a step, 8 steps at most). */
#define WORKER_IDLE_TRIM_MS 1000

/* A worker that dies sooner than this after it started counts as a crash
 * loop; its replacement waits BACKOFF_MIN_MS, doubling to BACKOFF_MAX_MS. */
#define WORKER_CRASH_WINDOW_MS 1000
#define WORKER_BACKOFF_MIN_MS  100
#define WORKER_BACKOFF_MAX_MS  5000

/* How long a stopping master waits for workers to finish requests in
 * flight before it kills them: a whole Gemini call plus margin. */
#define WORKER_STOP_GRACE_MS (BOUND_GEMINI_TIMEOUT_MS + 5000)

#endif /* APP_PROC_BOUNDS_H */
