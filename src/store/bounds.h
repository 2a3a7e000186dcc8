/*
 * bounds.h - the limits only src/store/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_STORE_BOUNDS_H
#define APP_STORE_BOUNDS_H

/* --- the store (store/store.h) ----------------------------------------- */

/* How long a write waits for another connection's transaction before it
 * gives up with "the store is busy". Writes are a few rows each and take
 * microseconds to milliseconds, so only a stuck writer waits this long. */
#define STORE_BUSY_MS 5000

/* A user id, in bytes (without its NUL): identities are opaque strings
 * from the auth layer (a Firebase uid is at most 128). */
#define BOUND_STORE_USER_ID 255

/* Rows in one listing (threads, approvals): a page of a UI, not an
 * export. */
#define BOUND_STORE_LIST 100

/* Messages of one thread returned by thread_get (the newest ones): a
 * thread longer than this is shown from its recent end. */
#define BOUND_STORE_THREAD_MESSAGES 500

/* Characters of a thread's last message shown in the thread list. */
#define BOUND_STORE_PREVIEW_CHARS 200

/* Allow rules of one user (delegated trust): a short list a person
 * reads, checked on every side effect. */
#define BOUND_STORE_ALLOW_RULES 256

/* Memories one search returns: they go into a prompt. */
#define BOUND_STORE_MEMORY_HITS 50

/* Words of a memory search that count; more are ignored. */
#define BOUND_STORE_QUERY_WORDS 32

/* --- budgets (http/budget.h, docs/configuration.md "Budget") ------ */

/* Stale counters (a client not seen since an earlier day) deleted by one
 * reservation: the table stays the size of a day's clients, and no
 * request pays for more than a few rows. */
#define STORE_BUDGET_PRUNE 8

/* Single-use tickets (store_ticket_claim): an id is short ASCII, and
 * one claim deletes at most this many expired ones. */
#define STORE_TICKET_ID_MAX 64
#define STORE_TICKET_PRUNE  32

#endif /* APP_STORE_BOUNDS_H */
