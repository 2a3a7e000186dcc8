/*
 * watch.c - the request's clock, seen by the watchdog (see watch.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/watch.h"
#include "core/monotime.h"

#include <sys/time.h>

/* This thread's slot: the shared one, or a private one when alone. */
static _Thread_local struct watch_slot own;
static _Thread_local struct watch_slot *slot;

static struct watch_slot *
mine(void)
{
    return slot != NULL ? slot : &own;
}

void
watch_bind(struct watch_slot *s)
{
    slot = s;
}

void
watch_request_begin(long timeout_ms)
{
    struct watch_slot *w = mine();
    long now = monotime_ms();

    /* deadline first: the master reads started_ms as "in flight" */
    atomic_store(&w->deadline_ms, now + timeout_ms);
    atomic_store(&w->action_ms, 0);
    atomic_store(&w->started_ms, now);
}

void
watch_request_end(void)
{
    struct watch_slot *w = mine();

    atomic_store(&w->started_ms, 0);
    atomic_store(&w->action_ms, 0);
    atomic_store(&w->deadline_ms, 0);
}

long
watch_deadline_ms(void)
{
    return atomic_load(&mine()->deadline_ms);
}

/* Alone in the process: arm (ms > 0) or disarm (0) SIGALRM. */
static void
alarm_ms(long ms)
{
    struct itimerval t = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &t, NULL);
}

void
watch_action_begin(long timeout_ms)
{
    if (slot == NULL)
        alarm_ms(timeout_ms);
    else
        atomic_store(&slot->action_ms, monotime_ms() + timeout_ms);
}

void
watch_action_end(void)
{
    if (slot == NULL)
        alarm_ms(0);
    else
        atomic_store(&slot->action_ms, 0);
}
