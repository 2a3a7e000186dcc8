/*
 * scoreboard.h - what the master and its workers share: one block per
 * worker process, in memory mapped before the first fork.
 *
 * A block holds a watch_slot per thread of the worker (core/watch.h: when
 * its request began, its deadline, its running action's deadline) and
 * how many of its threads are busy. The master reads the blocks for its
 * watchdog and to see a worker retiring (maxRequestsPerWorker); workers
 * read each other's `busy` only to leave a connection to a worker with a
 * free thread (worker.c). Nothing a request computes lives here: the
 * board is the process manager's state, not the requests'.
 *
 * Every field is a lock-free atomic, which is address-free, so it works
 * across processes. A block is claimed by the master before the fork and
 * freed when the worker has been reaped.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SCOREBOARD_H
#define APP_SCOREBOARD_H

#include "core/common.h"
#include "core/watch.h"

#include <stdatomic.h>
#include <sys/types.h>

struct scoreboard_block {
    _Atomic pid_t pid;         /* the worker; 0 when the block is free */
    _Atomic int busy;          /* threads serving a request (not waiting) */
    _Atomic int capacity;      /* threads that may serve at once */
    _Atomic int retiring;      /* the worker takes no more requests */
    _Atomic int killed;        /* the watchdog killed it (logged once) */
    struct watch_slot slots[]; /* one per thread: nslots */
};

struct scoreboard {
    char *base;    /* the shared mapping */
    size_t stride; /* bytes per block */
    int nblocks;
    int nslots; /* threads per worker */
};

/* Map a board of `nblocks` blocks of `nslots` thread slots (shared,
 * zeroed). Returns 0, or -1 with errno set. */
int scoreboard_open(struct scoreboard *sb, int nblocks, int nslots);
void scoreboard_close(struct scoreboard *sb);

/* Block number i. */
struct scoreboard_block *scoreboard_block(const struct scoreboard *sb, int i);

/* Claim a free block for a worker about to be forked (zeroed, pid set to
 * -1 until scoreboard_own names it), or NULL when every block is taken. */
struct scoreboard_block *scoreboard_claim(const struct scoreboard *sb,
                                          int capacity);
void scoreboard_own(struct scoreboard_block *b, pid_t pid);

/* The block of `pid`, or NULL. */
struct scoreboard_block *scoreboard_find(const struct scoreboard *sb,
                                         pid_t pid);

/* The worker is reaped: its block is free again. */
void scoreboard_free(struct scoreboard_block *b);

/* What a thread's slot says at `now`: a request past its deadline plus
 * `slack_ms`, or an action past its own, is overdue. */
enum scoreboard_overdue {
    SCOREBOARD_ON_TIME,
    SCOREBOARD_REQUEST_OVERDUE,
    SCOREBOARD_ACTION_OVERDUE,
};
enum scoreboard_overdue scoreboard_overdue(struct watch_slot *w, long now,
                                           long slack_ms);

/* Does a worker other than `self`, taking requests, have a free thread? */
bool scoreboard_room_elsewhere(const struct scoreboard *sb,
                               const struct scoreboard_block *self);

/* Over every live worker: threads serving a request now (*busy) and
 * threads that may take one (*capacity; not those of a worker that
 * retires or was killed). What GET /_jay/status reports. */
void scoreboard_load(const struct scoreboard *sb, int *busy, int *capacity);

#endif /* APP_SCOREBOARD_H */
