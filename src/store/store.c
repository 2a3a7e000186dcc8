/*
 * store.c - the parts of the store that need no database: opening a store
 * by its spec, the state names and the one table of transitions, ids, the
 * clock. No SQL here; that is the backends' (sqlite.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "store/store.h"
#include "store/store_int.h"
#include "core/status.h"
#include "store/bounds.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* --- names --------------------------------------------------------------- */

static const char *const run_names[] = {
    [STORE_RUN_QUEUED] = "queued",
    [STORE_RUN_PLANNING] = "planning",
    [STORE_RUN_AWAITING] = "awaiting_confirmation",
    [STORE_RUN_EXECUTING] = "executing",
    [STORE_RUN_COMPLETED] = "completed",
    [STORE_RUN_FAILED] = "failed",
};

static const char *const action_names[] = {
    [STORE_ACT_PLANNED] = "planned",
    [STORE_ACT_AWAITING] = "awaiting_confirmation",
    [STORE_ACT_EXECUTING] = "executing",
    [STORE_ACT_COMPLETED] = "completed",
    [STORE_ACT_FAILED] = "failed",
    [STORE_ACT_REJECTED] = "rejected",
};

static const char *const trust_names[] = {
    [STORE_SUPERVISED] = "supervised",
    [STORE_DELEGATED] = "delegated",
    [STORE_AUTONOMOUS] = "autonomous",
};

_Static_assert(ARRAY_SIZE(run_names) == STORE_RUN_STATES &&
                   STORE_RUN_FAILED + 1 == STORE_RUN_STATES,
               "STORE_RUN_STATES is the number of run states");
_Static_assert(ARRAY_SIZE(action_names) == STORE_ACTION_STATES &&
                   STORE_ACT_REJECTED + 1 == STORE_ACTION_STATES,
               "STORE_ACTION_STATES is the number of action states");

const char *
store_run_status_name(enum store_run_status s)
{
    return (unsigned)s < ARRAY_SIZE(run_names) ? run_names[s] : "unknown";
}

const char *
store_action_status_name(enum store_action_status s)
{
    return (unsigned)s < ARRAY_SIZE(action_names) ? action_names[s] : "unknown";
}

const char *
store_trust_name(enum store_trust t)
{
    return (unsigned)t < ARRAY_SIZE(trust_names) ? trust_names[t] : "unknown";
}

int
store_trust_parse(const char *name)
{
    for (size_t i = 0; name != NULL && i < ARRAY_SIZE(trust_names); i++)
        if (strcmp(name, trust_names[i]) == 0)
            return (int)i;
    return -1;
}

/* --- transitions (seed §5; the tables of store.h) ------------------------ */

#define TO(s) (1u << (s))

/* run_next[from]: the states a run in `from` may become. */
static const unsigned run_next[STORE_RUN_STATES] = {
    [STORE_RUN_QUEUED] = TO(STORE_RUN_PLANNING) | TO(STORE_RUN_FAILED),
    [STORE_RUN_PLANNING] = TO(STORE_RUN_EXECUTING) | TO(STORE_RUN_AWAITING) |
                           TO(STORE_RUN_COMPLETED) | TO(STORE_RUN_FAILED),
    [STORE_RUN_EXECUTING] = TO(STORE_RUN_PLANNING) | TO(STORE_RUN_AWAITING) |
                            TO(STORE_RUN_COMPLETED) | TO(STORE_RUN_FAILED),
    [STORE_RUN_AWAITING] = TO(STORE_RUN_EXECUTING) | TO(STORE_RUN_PLANNING) |
                           TO(STORE_RUN_FAILED),
    [STORE_RUN_COMPLETED] = 0,
    [STORE_RUN_FAILED] = 0,
};

/* action_next[from]: the states an action in `from` may become. */
static const unsigned action_next[STORE_ACTION_STATES] = {
    [STORE_ACT_PLANNED] = TO(STORE_ACT_AWAITING) | TO(STORE_ACT_EXECUTING) |
                          TO(STORE_ACT_FAILED) | TO(STORE_ACT_REJECTED),
    [STORE_ACT_AWAITING] = TO(STORE_ACT_EXECUTING) | TO(STORE_ACT_REJECTED) |
                           TO(STORE_ACT_FAILED),
    /* ... or waits for the user's answer: its tool asked (plugin.h's
     * GEMINI_AGENT_ASK_USER); the answer takes it back to executing */
    [STORE_ACT_EXECUTING] = TO(STORE_ACT_COMPLETED) | TO(STORE_ACT_FAILED) |
                            TO(STORE_ACT_AWAITING),
    [STORE_ACT_COMPLETED] = 0,
    [STORE_ACT_FAILED] = 0,
    [STORE_ACT_REJECTED] = 0,
};

bool
store_run_can(enum store_run_status from, enum store_run_status to)
{
    return (unsigned)from < STORE_RUN_STATES &&
           (unsigned)to < STORE_RUN_STATES && (run_next[from] & TO(to)) != 0;
}

bool
store_action_can(enum store_action_status from, enum store_action_status to)
{
    return (unsigned)from < STORE_ACTION_STATES &&
           (unsigned)to < STORE_ACTION_STATES &&
           (action_next[from] & TO(to)) != 0;
}

size_t
store_run_from(enum store_run_status to, const char *from[STORE_RUN_STATES])
{
    size_t n = 0;

    for (int s = 0; s < STORE_RUN_STATES; s++)
        from[s] = NULL;
    for (int s = 0; s < STORE_RUN_STATES; s++)
        if (store_run_can((enum store_run_status)s, to))
            from[n++] = run_names[s];
    return n;
}

size_t
store_action_from(enum store_action_status to,
                  const char *from[STORE_ACTION_STATES])
{
    size_t n = 0;

    for (int s = 0; s < STORE_ACTION_STATES; s++)
        from[s] = NULL;
    for (int s = 0; s < STORE_ACTION_STATES; s++)
        if (store_action_can((enum store_action_status)s, to))
            from[n++] = action_names[s];
    return n;
}

/* --- ids, the clock, user ids ------------------------------------------- */

int
store_new_id(char id[STORE_ID_LEN], struct status_error *err)
{
    static const char b64url[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char raw[16];
    size_t got = 0, o = 0;

    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return status_set(err, ST_STORE, "cannot make an id: %s",
                              n < 0 ? strerror(errno) : "no random bytes");
        got += (size_t)n;
    }
    /* 5 groups of 3 bytes make 20 characters; the last byte makes 2 */
    for (size_t i = 0; i + 3 <= sizeof(raw); i += 3) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 |
                     raw[i + 2];
        id[o++] = b64url[v >> 18];
        id[o++] = b64url[(v >> 12) & 63];
        id[o++] = b64url[(v >> 6) & 63];
        id[o++] = b64url[v & 63];
    }
    id[o++] = b64url[raw[15] >> 2];
    id[o++] = b64url[(raw[15] & 3) << 4];
    id[o] = '\0';
    return 0;
}

int64_t
store_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
store_check_user(const char *user, struct status_error *err)
{
    size_t n = user != NULL ? strnlen(user, BOUND_STORE_USER_ID + 1) : 0;

    if (n == 0 || n > BOUND_STORE_USER_ID)
        return status_set(err, ST_BAD_REQUEST,
                          "a user id is 1 to %d bytes long",
                          BOUND_STORE_USER_ID);
    return 0;
}

/* --- tickets -------------------------------------------------------------- */

int
store_ticket_claim(struct store *st, const char *ticket_id,
                   long long expires_at_ms, long long now_ms,
                   struct status_error *err)
{
    size_t n = ticket_id != NULL ? strnlen(ticket_id, STORE_TICKET_ID_MAX + 1)
                                 : 0;

    if (n == 0 || n > STORE_TICKET_ID_MAX)
        return status_set(err, ST_BAD_REQUEST,
                          "a ticket id is 1 to %d characters",
                          STORE_TICKET_ID_MAX);
    for (size_t i = 0; i < n; i++)
        if (ticket_id[i] <= 0x20 || ticket_id[i] >= 0x7f)
            return status_set(err, ST_BAD_REQUEST,
                              "a ticket id is printable ASCII");
    return st->ops->ticket_claim(st, ticket_id, expires_at_ms, now_ms, err);
}

/* --- the terminal client's sessions -------------------------------------- */

void
store_chat_release(struct store_chat *c)
{
    if (c == NULL)
        return;
    free(c->id);
    free(c->cwd);
    free(c->model);
    free(c->contents);
    json_decref(c->usage);
    memset(c, 0, sizeof(*c));
}

/* --- opening ------------------------------------------------------------- */

struct store *
store_open(const char *spec, struct status_error *err)
{
    static const char sqlite_prefix[] = "sqlite:";
    const size_t n = sizeof(sqlite_prefix) - 1;

    if (spec != NULL && strncmp(spec, sqlite_prefix, n) == 0 && spec[n] != '\0')
        return store_sqlite_open(spec + n, err);
    status_set(err, ST_CONFIG, "unknown store '%s' (expected sqlite:PATH)",
               spec != NULL ? spec : "");
    return NULL;
}

struct store *
store_open_migrated(const char *spec, struct status_error *err)
{
    struct store *s = store_open(spec, err);

    if (s != NULL && s->ops->migrate(s, err) != 0) {
        s->ops->close(s);
        s = NULL;
    }
    return s;
}
