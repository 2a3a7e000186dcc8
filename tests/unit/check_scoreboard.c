/*
 * check_scoreboard.c - what the master's watchdog reads: a thread's slot
 * (core/watch) as its request and actions run, the verdict on it, and the
 * blocks workers claim and free (proc/scoreboard).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/monotime.h"
#include "core/watch.h"
#include "proc/scoreboard.h"

#include <check.h>
#include <stdatomic.h>
#include <unistd.h>

START_TEST(slot_follows_request_and_action)
{
    struct watch_slot w = {0};
    long t0 = monotime_ms(), deadline;

    watch_bind(&w);
    ck_assert_int_eq(watch_deadline_ms(), 0);
    watch_request_begin(1000);
    deadline = watch_deadline_ms();
    ck_assert_int_ge(atomic_load(&w.started_ms), t0);
    ck_assert_int_eq(deadline, atomic_load(&w.started_ms) + 1000);
    ck_assert_int_eq(atomic_load(&w.action_ms), 0);
    watch_action_begin(300);
    ck_assert_int_ge(atomic_load(&w.action_ms), t0 + 300);
    watch_action_end();
    ck_assert_int_eq(atomic_load(&w.action_ms), 0);
    watch_request_end();
    ck_assert_int_eq(atomic_load(&w.started_ms), 0);
    ck_assert_int_eq(watch_deadline_ms(), 0);
    watch_bind(NULL);
}
END_TEST

START_TEST(overdue_verdicts)
{
    struct watch_slot w = {0};

    /* idle: never overdue, whatever the clock */
    ck_assert_int_eq(scoreboard_overdue(&w, 1000000, 0), SCOREBOARD_ON_TIME);
    atomic_store(&w.started_ms, 1000);
    atomic_store(&w.deadline_ms, 2000);
    ck_assert_int_eq(scoreboard_overdue(&w, 2000, 500), SCOREBOARD_ON_TIME);
    ck_assert_int_eq(scoreboard_overdue(&w, 2500, 500), SCOREBOARD_ON_TIME);
    ck_assert_int_eq(scoreboard_overdue(&w, 2501, 500),
                     SCOREBOARD_REQUEST_OVERDUE);
    /* an action has no slack: its own timeout is the limit */
    atomic_store(&w.action_ms, 1500);
    ck_assert_int_eq(scoreboard_overdue(&w, 1500, 500), SCOREBOARD_ON_TIME);
    ck_assert_int_eq(scoreboard_overdue(&w, 1501, 500),
                     SCOREBOARD_ACTION_OVERDUE);
    ck_assert_int_eq(scoreboard_overdue(&w, 9999, 500),
                     SCOREBOARD_ACTION_OVERDUE);
}
END_TEST

START_TEST(blocks_claimed_owned_freed)
{
    struct scoreboard sb;
    struct scoreboard_block *a, *b, *c;

    ck_assert_int_eq(scoreboard_open(&sb, 2, 3), 0);
    a = scoreboard_claim(&sb, 3);
    b = scoreboard_claim(&sb, 3);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_null(scoreboard_claim(&sb, 3)); /* all taken */
    /* claimed but not yet forked: nobody's room */
    ck_assert(!scoreboard_room_elsewhere(&sb, a));
    scoreboard_own(a, 100);
    scoreboard_own(b, 200);
    ck_assert_ptr_eq(scoreboard_find(&sb, 200), b);
    ck_assert_ptr_null(scoreboard_find(&sb, 300));
    /* b has free threads; once all are busy, or it retires, no room */
    ck_assert(scoreboard_room_elsewhere(&sb, a));
    atomic_store(&b->busy, 3);
    ck_assert(!scoreboard_room_elsewhere(&sb, a));
    atomic_store(&b->busy, 1);
    atomic_store(&b->retiring, 1);
    ck_assert(!scoreboard_room_elsewhere(&sb, a));
    /* the last thread slot is usable */
    atomic_store(&b->slots[2].started_ms, 5);
    scoreboard_free(b);
    c = scoreboard_claim(&sb, 3);
    ck_assert_ptr_eq(c, b);
    ck_assert_int_eq(atomic_load(&c->retiring), 0); /* zeroed */
    ck_assert_int_eq(atomic_load(&c->slots[2].started_ms), 0);
    scoreboard_close(&sb);
}
END_TEST

/* What GET /_jay/status reports: busy threads of every live worker, and
 * the threads that may take a request (not a retiring worker's). */
START_TEST(load_over_every_worker)
{
    struct scoreboard sb;
    struct scoreboard_block *a, *b;
    int busy = -1, total = -1;

    ck_assert_int_eq(scoreboard_open(&sb, 3, 2), 0);
    scoreboard_load(&sb, &busy, &total);
    ck_assert_int_eq(busy, 0);
    ck_assert_int_eq(total, 0);
    a = scoreboard_claim(&sb, 4);
    b = scoreboard_claim(&sb, 6);
    /* claimed, not forked yet: not counted */
    scoreboard_load(&sb, &busy, &total);
    ck_assert_int_eq(total, 0);
    scoreboard_own(a, 100);
    scoreboard_own(b, 200);
    atomic_store(&a->busy, 1);
    atomic_store(&b->busy, 5);
    scoreboard_load(&sb, &busy, &total);
    ck_assert_int_eq(busy, 6);
    ck_assert_int_eq(total, 10);
    atomic_store(&b->retiring, 1);
    scoreboard_load(&sb, &busy, &total);
    ck_assert_int_eq(busy, 6);
    ck_assert_int_eq(total, 4);
    scoreboard_free(b);
    scoreboard_load(&sb, &busy, &total);
    ck_assert_int_eq(busy, 1);
    ck_assert_int_eq(total, 4);
    scoreboard_close(&sb);
}
END_TEST

Suite *
scoreboard_suite(void)
{
    Suite *s = suite_create("scoreboard");
    TCase *tc = tcase_create("watch");

    tcase_add_test(tc, slot_follows_request_and_action);
    tcase_add_test(tc, overdue_verdicts);
    tcase_add_test(tc, blocks_claimed_owned_freed);
    tcase_add_test(tc, load_over_every_worker);
    suite_add_tcase(s, tc);
    return s;
}
