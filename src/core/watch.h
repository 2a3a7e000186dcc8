/*
 * watch.h - what the watchdog can see of the request this thread runs.
 *
 * A worker thread owns one `struct watch_slot`, which lives in memory the
 * master shares with its workers (proc/scoreboard.h). The thread writes
 * when its request began, the request's deadline (requestTimeoutMs), and
 * while a server action runs, when that action must have ended; the
 * master reads the slots every WATCH_TICK_MS and replaces a worker whose
 * request or action ran past its time (a stuck library call, a handler in
 * an endless loop, a SIGSTOP). Killing the whole worker is the only safe
 * stop for a thread stuck in C code; docs/internals/concurrency.md.
 *
 * A thread with no slot (the CGI responder, the command-line tools) runs
 * alone in its process: its action deadline is a SIGALRM timer, whose
 * default action ends the process, as a runaway must.
 *
 * The request's deadline also bounds every Gemini call (gemini.c asks
 * watch_deadline_ms()), so an honest request never outlives it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_WATCH_H
#define APP_WATCH_H

#include "core/common.h"

#include <stdatomic.h>

/* Monotonic milliseconds (monotime.h); 0 = nothing. Written by one
 * thread, read by the master: each field is one lock-free atomic. */
struct watch_slot {
    _Atomic long started_ms;  /* the request in flight began */
    _Atomic long deadline_ms; /* ... and must end by then */
    _Atomic long action_ms;   /* a server action must end by then */
};

/* Give this thread its slot (NULL: alone, see above). */
void watch_bind(struct watch_slot *slot);

/* A request begins now, with `timeout_ms` to run; and it ended. */
void watch_request_begin(long timeout_ms);
void watch_request_end(void);

/* The request's deadline (monotonic ms), or 0 when none was set. */
long watch_deadline_ms(void);

/* A server action starts with `timeout_ms` to run; and it returned. */
void watch_action_begin(long timeout_ms);
void watch_action_end(void);

#endif /* APP_WATCH_H */
