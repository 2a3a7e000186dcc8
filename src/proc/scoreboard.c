/*
 * scoreboard.c - the master's and workers' shared blocks (see
 * scoreboard.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "proc/scoreboard.h"

#include <string.h>
#include <sys/mman.h>

int
scoreboard_open(struct scoreboard *sb, int nblocks, int nslots)
{
    size_t stride = sizeof(struct scoreboard_block) +
                    (size_t)nslots * sizeof(struct watch_slot);
    void *p;

    stride = (stride + 63) & ~(size_t)63; /* a block per cache line run */
    p = mmap(NULL, stride * (size_t)nblocks, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    sb->base = p;
    sb->stride = stride;
    sb->nblocks = nblocks;
    sb->nslots = nslots;
    return 0;
}

void
scoreboard_close(struct scoreboard *sb)
{
    if (sb->base != NULL)
        munmap(sb->base, sb->stride * (size_t)sb->nblocks);
    sb->base = NULL;
}

struct scoreboard_block *
scoreboard_block(const struct scoreboard *sb, int i)
{
    return (struct scoreboard_block *)(void *)(sb->base +
                                               sb->stride * (size_t)i);
}

struct scoreboard_block *
scoreboard_claim(const struct scoreboard *sb, int capacity)
{
    for (int i = 0; i < sb->nblocks; i++) {
        struct scoreboard_block *b = scoreboard_block(sb, i);
        if (atomic_load(&b->pid) != 0)
            continue;
        /* free blocks are nobody's: plain stores are fine before the
         * fork that hands it over */
        memset((void *)b, 0, sb->stride);
        atomic_store(&b->capacity, capacity);
        atomic_store(&b->pid, -1);
        return b;
    }
    return NULL;
}

void
scoreboard_own(struct scoreboard_block *b, pid_t pid)
{
    atomic_store(&b->pid, pid);
}

struct scoreboard_block *
scoreboard_find(const struct scoreboard *sb, pid_t pid)
{
    for (int i = 0; i < sb->nblocks; i++) {
        struct scoreboard_block *b = scoreboard_block(sb, i);
        if (atomic_load(&b->pid) == pid)
            return b;
    }
    return NULL;
}

void
scoreboard_free(struct scoreboard_block *b)
{
    atomic_store(&b->pid, 0);
}

enum scoreboard_overdue
scoreboard_overdue(struct watch_slot *w, long now, long slack_ms)
{
    long deadline = atomic_load(&w->deadline_ms);
    long action = atomic_load(&w->action_ms);

    if (atomic_load(&w->started_ms) == 0)
        return SCOREBOARD_ON_TIME; /* idle */
    if (action != 0 && now > action)
        return SCOREBOARD_ACTION_OVERDUE;
    if (deadline != 0 && now > deadline + slack_ms)
        return SCOREBOARD_REQUEST_OVERDUE;
    return SCOREBOARD_ON_TIME;
}

bool
scoreboard_room_elsewhere(const struct scoreboard *sb,
                          const struct scoreboard_block *self)
{
    for (int i = 0; i < sb->nblocks; i++) {
        struct scoreboard_block *b = scoreboard_block(sb, i);
        if (b == self || atomic_load(&b->pid) <= 0 ||
            atomic_load(&b->retiring) || atomic_load(&b->killed))
            continue;
        if (atomic_load(&b->busy) < atomic_load(&b->capacity))
            return true;
    }
    return false;
}

void
scoreboard_load(const struct scoreboard *sb, int *busy, int *capacity)
{
    *busy = *capacity = 0;
    for (int i = 0; i < sb->nblocks; i++) {
        struct scoreboard_block *b = scoreboard_block(sb, i);
        if (atomic_load(&b->pid) <= 0)
            continue;
        /* a retiring worker still finishes its requests: they are busy,
         * but its threads take no new ones */
        *busy += atomic_load(&b->busy);
        if (!atomic_load(&b->retiring) && !atomic_load(&b->killed))
            *capacity += atomic_load(&b->capacity);
    }
}
