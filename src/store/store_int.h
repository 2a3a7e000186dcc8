/*
 * store_int.h - what store.c gives the backends, and their constructors.
 *
 * Private to src/store/: callers see store.h only. store.c holds the parts
 * every backend shares and that need no database: the one table of state
 * transitions (a backend builds its "WHERE status IN (...)" lists from it,
 * so the rules exist once), ids, the clock, and the checks of values the
 * store refuses.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_STORE_INT_H
#define APP_STORE_INT_H

#include "core/common.h"
#include "store/store.h"
#include "store/bounds.h"

#include <stdint.h>

struct status_error;

/* How many states there are (store.c checks them against the enums). */
#define STORE_RUN_STATES    6
#define STORE_ACTION_STATES 6

/*
 * The names of the states a run (an action) may leave for `to`, its
 * allowed predecessors, in enum order; the rest of `from` is set to NULL.
 * Returns how many there are.
 */
size_t store_run_from(enum store_run_status to,
                      const char *from[STORE_RUN_STATES]);
size_t store_action_from(enum store_action_status to,
                         const char *from[STORE_ACTION_STATES]);

/* A new id: 16 bytes from getrandom(), base64url without padding. Returns
 * 0, or -1 with `err` set (ST_STORE) when the kernel gives no bytes. */
int store_new_id(char id[STORE_ID_LEN], struct status_error *err) ATTR_WUR;

/* Milliseconds since the epoch (the wall clock: the rows outlive the
 * process, and approvals expire by it). */
int64_t store_now_ms(void);

/* 0 when `user` is a user id the store takes (1..BOUND_STORE_USER_ID
 * bytes), else -1 with `err` set (ST_BAD_REQUEST). */
int store_check_user(const char *user, struct status_error *err) ATTR_WUR;

/* The SQLite backend (sqlite.c): open the database file at `path`,
 * creating it (mode 0600) when missing. NULL with `err` set. */
struct store *store_sqlite_open(const char *path, struct status_error *err);

#endif /* APP_STORE_INT_H */
