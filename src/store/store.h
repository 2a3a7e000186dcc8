/*
 * store.h - what the run API keeps: users' settings, threads and their
 * messages, runs and their actions, approvals, the audit trail and
 * memories (docs/http-api.md); and what every worker shares of a
 * request's cost: the budget counters (http/budget.h) and the single-use
 * tickets of the chat's approvals (agent/seal.h).
 *
 * Callers see this interface only: an ops table behind `struct store`, so a
 * PostgreSQL backend (sites on several hosts) can be added without touching
 * them. No SQL is written outside src/store/. The SQLite backend is
 * store/sqlite.c ("sqlite:PATH").
 *
 * States (the tables below) are checked here, not trusted from callers: a
 * transition the tables below do not allow is refused (ST_CONFLICT) by the
 * UPDATE itself (`... WHERE status IN (allowed predecessors)`), so two
 * writers racing on one row cannot both win.
 *
 *   run:    queued -> planning | failed;  planning -> executing | awaiting_confirmation |
 *           completed | failed;  executing -> planning | awaiting_confirmation
 *           | completed | failed;  awaiting_confirmation -> executing |
 *           planning | failed
 *   action: planned -> awaiting_confirmation | executing | failed | rejected;
 *           awaiting_confirmation -> executing | rejected | failed;
 *           executing -> completed | failed
 *
 * Ownership: every read of a thread, run or approval names the user, and
 * another user's row is "not found" (ST_NOT_FOUND), never "forbidden":
 * existence does not leak.
 *
 * Memory: values returned as JSON are new references the caller owns
 * (pin them to a request arena); strings returned are malloc'd unless
 * said otherwise. Errors are ST_STORE (logged with SQLite's words, never
 * shown to visitors; "the store is busy" when another writer held it past
 * STORE_BUSY_MS), ST_NOT_FOUND, ST_CONFLICT, ST_SCHEMA_NEWER,
 * ST_NO_MEMORY, and ST_BAD_REQUEST for a value the store does not take (a
 * user id that is empty or longer than BOUND_STORE_USER_ID, a role or a
 * decision not in its list), and ST_TOO_LARGE where a function says so.
 * Texts are UTF-8, as every JSON string is.
 *
 * Threads: a `struct store` is one connection, used by one thread at a
 * time (SQLite's own mutex is off); each request thread opens its own
 * (after fork), and connections share the file through SQLite's WAL and a
 * busy timeout. A call returns 0 only after its writes are committed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_STORE_H
#define APP_STORE_H

#include "core/common.h"
#include "core/bounds.h" /* BOUND_STORE_USER_ID */
#include "store/bounds.h"

struct json_t;
struct status_error;

/* Ids are 22 characters of base64url from 16 random bytes, plus a NUL. */
#define STORE_ID_LEN 23

enum store_trust {
    STORE_SUPERVISED, /* every side effect needs approval (the default) */
    STORE_DELEGATED,  /* ... unless an allow rule matches */
    STORE_AUTONOMOUS, /* side effects run */
};

enum store_run_status {
    STORE_RUN_QUEUED,
    STORE_RUN_PLANNING,
    STORE_RUN_AWAITING, /* awaiting_confirmation */
    STORE_RUN_EXECUTING,
    STORE_RUN_COMPLETED,
    STORE_RUN_FAILED,
};

enum store_action_status {
    STORE_ACT_PLANNED,
    STORE_ACT_AWAITING, /* awaiting_confirmation */
    STORE_ACT_EXECUTING,
    STORE_ACT_COMPLETED,
    STORE_ACT_FAILED,
    STORE_ACT_REJECTED,
};

/* The wire names: "queued", "awaiting_confirmation", ... */
const char *store_run_status_name(enum store_run_status s);
const char *store_action_status_name(enum store_action_status s);
const char *store_trust_name(enum store_trust t);
/* "supervised" -> STORE_SUPERVISED; -1 when unknown. */
int store_trust_parse(const char *name);

/* Is `from` -> `to` allowed (the tables above)? */
bool store_run_can(enum store_run_status from, enum store_run_status to);
bool store_action_can(enum store_action_status from,
                      enum store_action_status to);

/* A user's settings; a user never seen is supervised with no rules. */
struct store_user {
    enum store_trust trust;
    struct json_t *allow; /* [{"tool": "...", "arg": "...", "pattern":
                           * "*@example.com"}], owned */
};

/* One row of the audit trail (append only). */
struct store_audit {
    const char *user, *run, *action, *tool;
    const char *event;     /* policy_denied, approval_requested, approved,
                            * rejected, executed, failed */
    const char *args_hash; /* hex SHA-256 of the arguments' JSON text */
    const char *outcome;   /* a short word or sentence; may be NULL */
};

/* A new action (store_ops.action_create): call `part` of model turn
 * `turn` of `run`, its tool and arguments, its first state. */
struct store_action_new {
    const char *run;
    const char *tool;
    const struct json_t *args; /* may be NULL: {} */
    const struct json_t *call; /* the model's functionCall; may be NULL */
    long turn, part;
    enum store_action_status status;
};

/* A new approval (store_ops.approval_create): of `action` of `run`, a run
 * of `user`, by `tool`; what a person reads of it; when it expires. */
struct store_approval_new {
    const char *user, *run, *action, *tool;
    const char *reason;  /* may be NULL: "" */
    const char *preview; /* may be NULL: "" */
    long ttl_ms;
};

/* What an approval decision found (store_approval_decide). */
struct store_decided {
    char action[STORE_ID_LEN], run[STORE_ID_LEN];
};

/* One budget counter a request is charged to, and its ceilings (0: none;
 * the counter still counts, for the operator's status). `scope` names
 * it: "site", "ip:ADDR", "user:ID". */
struct store_budget {
    const char *scope;
    long long requests_per_minute;
    long long tokens_per_day;
};

/* Why a reservation was refused (store_ops.budget_reserve). */
struct store_budget_refusal {
    size_t counter;     /* the first counter refused (an index) */
    bool requests;      /* ... its requests this minute are spent */
    bool tokens;        /* ... its tokens today would be, with this one */
    long retry_after_s; /* when every refused window has rolled over */
};

/* What a counter holds (store_ops.budget_get). */
struct store_budget_use {
    long long requests; /* this minute */
    long long tokens;   /* today (UTC) */
};

/* A session of the terminal client (store_ops.chat_*). Loaded: every
 * string malloc'd and `usage` a new reference (store_chat_release frees
 * them); saved: all borrowed. */
struct store_chat {
    char *id;  /* the session id (its caller bounds it) */
    char *cwd; /* the folder it works in */
    char *model;
    char *contents;             /* JSON text of the Gemini contents */
    struct json_t *usage;       /* the session's totals; may be NULL */
    long long created, updated; /* ms since the epoch (loaded only) */
};

void store_chat_release(struct store_chat *c);

struct store;

struct store_ops {
    void (*close)(struct store *s);
    /* schema */
    int (*migrate)(struct store *s, struct status_error *err);
    int (*schema_version)(struct store *s, int *version,
                          struct status_error *err);
    /* users */
    int (*user_get)(struct store *s, const char *user, struct store_user *out,
                    struct status_error *err);
    int (*user_set_trust)(struct store *s, const char *user, enum store_trust t,
                          struct status_error *err);
    /* append `rule` to the user's allow list (ST_TOO_LARGE past
     * BOUND_STORE_ALLOW_RULES) */
    int (*user_add_rule)(struct store *s, const char *user,
                         const struct json_t *rule, struct status_error *err);
    /* threads and messages */
    int (*thread_create)(struct store *s, const char *user, const char *title,
                         char id[STORE_ID_LEN], struct status_error *err);
    /* 0 when the thread is the user's, else ST_NOT_FOUND */
    int (*thread_check)(struct store *s, const char *user, const char *id,
                        struct status_error *err);
    /* the user's threads, last updated first, at most `limit` (<= 0 or
     * more than BOUND_STORE_LIST: that bound): [{id, title, createdAt,
     * updatedAt, lastMessage: {role, text (its first
     * BOUND_STORE_PREVIEW_CHARS characters)} or null}] */
    int (*threads_list)(struct store *s, const char *user, long limit,
                        struct json_t **out, struct status_error *err);
    /* *thread = {id, title, createdAt, updatedAt}; *messages = [{role,
     * text, runId (null when none), createdAt}], oldest first, the last
     * BOUND_STORE_THREAD_MESSAGES of them */
    int (*thread_get)(struct store *s, const char *user, const char *id,
                      struct json_t **thread, struct json_t **messages,
                      struct status_error *err);
    /* role "user" or "assistant"; run may be NULL; the thread's
     * updatedAt becomes now. The caller has checked the thread's owner. */
    int (*message_add)(struct store *s, const char *thread, const char *run,
                       const char *role, const char *text,
                       struct status_error *err);
    /* runs */
    /* a queued run; thread may be NULL, and another user's thread is
     * ST_NOT_FOUND */
    int (*run_create)(struct store *s, const char *user, const char *thread,
                      const char *prompt, char id[STORE_ID_LEN],
                      struct status_error *err);
    int (*run_status)(struct store *s, const char *run,
                      enum store_run_status to, struct status_error *err);
    /* The run's own record: its answer (the JSON object the route
     * answered), its conversation (JSON text of the Gemini contents, for a
     * run that waits on approvals) and its usage. NULL leaves a field. */
    int (*run_save)(struct store *s, const char *run, const char *answer,
                    const char *contents, const struct json_t *usage,
                    struct status_error *err);
    /* {id, threadId, status, prompt, createdAt, updatedAt, answer?,
     *  actions: [{id, tool, args, status, output?, error?}]} */
    int (*run_get)(struct store *s, const char *user, const char *run,
                   struct json_t **out, struct status_error *err);
    /* the conversation saved by run_save, malloc'd (NULL when none), and
     * the run's owner/thread */
    int (*run_resume)(struct store *s, const char *run, char **contents,
                      char user[BOUND_STORE_USER_ID + 1],
                      char thread[STORE_ID_LEN], struct status_error *err);
    /* actions */
    /* an action of a->run (ST_NOT_FOUND when there is no such run), in
     * state a->status, after the run's other actions in call order */
    int (*action_create)(struct store *s, const struct store_action_new *a,
                         char id[STORE_ID_LEN], struct status_error *err);
    /* to `to`, with its output or error (NULL: unchanged) */
    int (*action_status)(struct store *s, const char *action,
                         enum store_action_status to,
                         const struct json_t *output, const char *error,
                         struct status_error *err);
    /* a run's actions in call order: [{id, tool, args, call, turn, part,
     * status, output?, error?}] */
    int (*actions_of)(struct store *s, const char *run, struct json_t **out,
                      struct status_error *err);
    /* approvals */
    /* a pending approval of ap->action, which must be an action of
     * ap->run, a run of ap->user (else ST_NOT_FOUND); it expires
     * ap->ttl_ms from now (<= 0: already expired). An action has at most
     * one (else ST_CONFLICT). */
    int (*approval_create)(struct store *s, const struct store_approval_new *ap,
                           char id[STORE_ID_LEN], struct status_error *err);
    /* [{id, runId, actionId, tool, reason, preview, status, createdAt,
     *   expiresAt}], newest first, at most BOUND_STORE_LIST; status is
     * "pending", "approved", "rejected" or "expired" (pending past its
     * time); `status` NULL: all, else only those in that status */
    int (*approvals_list)(struct store *s, const char *user, const char *status,
                          struct json_t **out, struct status_error *err);
    /* Decide a pending approval, atomically: one UPDATE ... WHERE status =
     * 'pending' AND user = ? AND expires > now. 0: this call decided it
     * (`out` names the action and run); ST_NOT_FOUND: no such approval of
     * this user; ST_CONFLICT: already decided, or expired. decision:
     * "approved" or "rejected". */
    int (*approval_decide)(struct store *s, const char *user, const char *id,
                           const char *decision, const char *feedback,
                           struct store_decided *out, struct status_error *err);
    /* pending approvals of a run that are still waiting */
    int (*approvals_pending)(struct store *s, const char *run, long *count,
                             struct status_error *err);
    /* audit */
    int (*audit_add)(struct store *s, const struct store_audit *row,
                     struct status_error *err);
    /* [{id, at, user, run, action, tool, event, argsHash, outcome}] of a
     * run, in order (tests and operators) */
    int (*audit_of)(struct store *s, const char *run, struct json_t **out,
                    struct status_error *err);
    /* memories */
    int (*memory_save)(struct store *s, const char *user, const char *text,
                       const char *tags, long *id, struct status_error *err);
    /* The user's memories that match `query`, best first (bm25):
     * [{id, text, tags, createdAt}]. The query is plain words, never FTS
     * syntax: each word (at most BOUND_STORE_QUERY_WORDS) is searched as
     * itself and a memory matching any of them is found, more matches
     * ranking higher. An empty query lists the newest. `limit` is clamped
     * to 1..BOUND_STORE_MEMORY_HITS (<= 0: the bound). */
    int (*memory_search)(struct store *s, const char *user, const char *query,
                         long limit, struct json_t **out,
                         struct status_error *err);
    /* budgets: fixed windows, the minute (since the epoch) and the UTC day
     * of `now_ms`; a counter last written in an earlier window counts 0 */
    /* Reserve `requests` (0 or 1) more this minute and `tokens` more
     * today on each of counters[0..n), in one transaction, if every
     * counter stays within its ceilings; else nothing changes and -1 with
     * ST_BUDGET_EXHAUSTED, `why` saying which and until when. A few
     * counters of earlier days go (STORE_BUDGET_PRUNE). */
    int (*budget_reserve)(struct store *s, const struct store_budget *counters,
                          size_t n, long long requests, long long tokens,
                          int64_t now_ms, struct store_budget_refusal *why,
                          struct status_error *err);
    /* Settle: add `delta` tokens (< 0 gives back) to each counter's count
     * of the UTC day of `day_ms` (the reservation's), when the counter
     * still counts that day; never below 0. One transaction. */
    int (*budget_settle)(struct store *s, const struct store_budget *counters,
                         size_t n, long long delta, int64_t day_ms,
                         struct status_error *err);
    /* What the counter `scope` holds at `now_ms` (zeros when none). */
    int (*budget_get)(struct store *s, const char *scope, int64_t now_ms,
                      struct store_budget_use *out, struct status_error *err);
    /* The `limit` (1..BOUND_STORE_LIST) counters that spent most tokens
     * today: [{scope, requests, tokens}], most first. */
    int (*budget_top)(struct store *s, int64_t now_ms, long limit,
                      struct json_t **out, struct status_error *err);
    /* single-use tickets: see store_ticket_claim() */
    int (*ticket_claim)(struct store *s, const char *id,
                        long long expires_at_ms, long long now_ms,
                        struct status_error *err);
    /* the terminal client's sessions */
    /* create or overwrite the session `c->id` (its `created` kept) */
    int (*chat_save)(struct store *s, const struct store_chat *c,
                     struct status_error *err);
    /* the session `id` (ST_NOT_FOUND when there is none) */
    int (*chat_load)(struct store *s, const char *id, struct store_chat *out,
                     struct status_error *err);
    /* the session of `cwd` saved last (ST_NOT_FOUND when there is none) */
    int (*chat_latest)(struct store *s, const char *cwd, struct store_chat *out,
                       struct status_error *err);
};

struct store {
    const struct store_ops *ops;
};

/*
 * Open the store named by `spec` ("sqlite:PATH"), without migrating.
 * NULL with `err` set when it cannot be opened (ST_STORE) or the spec is
 * unknown (ST_CONFIG). Close it with s->ops->close(s).
 */
struct store *store_open(const char *spec, struct status_error *err);

/* Open and bring the schema up to date: refuses (ST_SCHEMA_NEWER) a store
 * written by a newer program. */
struct store *store_open_migrated(const char *spec, struct status_error *err);

/*
 * Claim the single-use ticket `ticket_id` (1..STORE_TICKET_ID_MAX bytes
 * of printable ASCII, else ST_BAD_REQUEST): 0 when it was not claimed
 * before, and it is then recorded until `expires_at_ms`; -1 with
 * ST_CONFLICT when it was claimed and its record has not expired. In the
 * same transaction, up to STORE_TICKET_PRUNE expired records are deleted.
 * Times are milliseconds since the epoch (the caller's clock, so tests
 * can move it).
 */
int store_ticket_claim(struct store *st, const char *ticket_id,
                       long long expires_at_ms, long long now_ms,
                       struct status_error *err);

/* The schema version this program writes. */
#define STORE_SCHEMA_VERSION 3

#endif /* APP_STORE_H */
