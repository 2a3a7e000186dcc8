/*
 * sqlite.c - the store over SQLite (Debian's libsqlite3): one database
 * file, one connection per `struct store`.
 *
 * Every statement is a row of the query table below, prepared once per
 * connection and kept; values are always bound (?N), never written into
 * SQL. A write that takes more than one statement runs in BEGIN IMMEDIATE
 * ... COMMIT, so it is whole or absent, and so is a check followed by a
 * write: the write lock is taken before the first read. A function
 * returns 0 only after its COMMIT.
 *
 * Errors: SQLite's words go to the error log, with the query's name; the
 * caller gets ST_STORE and a plain sentence ("the store failed; see the
 * error log", or "the store is busy" once STORE_BUSY_MS has passed).
 *
 * Not here: state names, the transition table, ids (store.c).
 *
 * Needs SQLite 3.31 or later: FTS5, the JSON functions, UPSERT and
 * json_insert's '$[#]'. Debian 12 has 3.40.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "store/store_int.h"
#include "store/store.h"
#include "core/bounds.h"
#include "store/bounds.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --- the schema ---------------------------------------------------------- */

/*
 * Version 1: the run API's schema. Times are milliseconds since the epoch.
 * JSON columns hold JSON text (checked by json_valid). Status columns take
 * the names of store.c's tables only. The audit trail refuses UPDATE and
 * DELETE, so it is append only for every connection, not only ours. The
 * memories' full-text index (FTS5, external content) follows the table
 * through triggers; the porter stemmer lets "emails" find "email".
 */
static const char schema_v1[] =
    "CREATE TABLE users (\n"
    "    id      TEXT PRIMARY KEY,\n"
    "    trust   TEXT NOT NULL DEFAULT 'supervised'\n"
    "            CHECK (trust IN ('supervised', 'delegated', 'autonomous')),\n"
    "    allow   TEXT NOT NULL DEFAULT '[]'\n"
    "            CHECK (json_valid(allow) AND json_type(allow) = 'array'),\n"
    "    updated INTEGER NOT NULL\n"
    ");\n"
    "CREATE TABLE threads (\n"
    "    id      TEXT PRIMARY KEY,\n"
    "    user_id TEXT NOT NULL,\n"
    "    title   TEXT NOT NULL DEFAULT '',\n"
    "    created INTEGER NOT NULL,\n"
    "    updated INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX threads_by_user ON threads (user_id, updated);\n"
    "CREATE TABLE messages (\n"
    "    id        INTEGER PRIMARY KEY,\n"
    "    thread_id TEXT NOT NULL REFERENCES threads (id),\n"
    "    run_id    TEXT,\n"
    "    role      TEXT NOT NULL CHECK (role IN ('user', 'assistant')),\n"
    "    text      TEXT NOT NULL,\n"
    "    created   INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX messages_by_thread ON messages (thread_id, id);\n"
    "CREATE TABLE runs (\n"
    "    id        TEXT PRIMARY KEY,\n"
    "    user_id   TEXT NOT NULL,\n"
    "    thread_id TEXT REFERENCES threads (id),\n"
    "    status    TEXT NOT NULL DEFAULT 'queued'\n"
    "              CHECK (status IN ('queued', 'planning',\n"
    "                     'awaiting_confirmation', 'executing', 'completed',\n"
    "                     'failed')),\n"
    "    prompt    TEXT NOT NULL DEFAULT '',\n"
    "    answer    TEXT CHECK (answer IS NULL OR json_valid(answer)),\n"
    "    contents  TEXT CHECK (contents IS NULL OR json_valid(contents)),\n"
    "    usage     TEXT CHECK (usage IS NULL OR json_valid(usage)),\n"
    "    created   INTEGER NOT NULL,\n"
    "    updated   INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX runs_by_thread ON runs (thread_id);\n"
    "CREATE INDEX runs_by_user ON runs (user_id, created);\n"
    "CREATE TABLE actions (\n"
    "    id      TEXT PRIMARY KEY,\n"
    "    run_id  TEXT NOT NULL REFERENCES runs (id),\n"
    "    seq     INTEGER NOT NULL,\n"
    "    tool    TEXT NOT NULL,\n"
    "    args    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(args)),\n"
    "    call    TEXT CHECK (call IS NULL OR json_valid(call)),\n"
    "    turn    INTEGER NOT NULL,\n"
    "    part    INTEGER NOT NULL,\n"
    "    status  TEXT NOT NULL\n"
    "            CHECK (status IN ('planned', 'awaiting_confirmation',\n"
    "                   'executing', 'completed', 'failed', 'rejected')),\n"
    "    output  TEXT CHECK (output IS NULL OR json_valid(output)),\n"
    "    error   TEXT,\n"
    "    created INTEGER NOT NULL,\n"
    "    updated INTEGER NOT NULL,\n"
    "    UNIQUE (run_id, seq)\n"
    ");\n"
    "CREATE TABLE approvals (\n"
    "    id        TEXT PRIMARY KEY,\n"
    "    user_id   TEXT NOT NULL,\n"
    "    run_id    TEXT NOT NULL REFERENCES runs (id),\n"
    "    action_id TEXT NOT NULL UNIQUE REFERENCES actions (id),\n"
    "    tool      TEXT NOT NULL,\n"
    "    reason    TEXT NOT NULL DEFAULT '',\n"
    "    preview   TEXT NOT NULL DEFAULT '',\n"
    "    status    TEXT NOT NULL DEFAULT 'pending'\n"
    "              CHECK (status IN ('pending', 'approved', 'rejected')),\n"
    "    feedback  TEXT,\n"
    "    created   INTEGER NOT NULL,\n"
    "    expires   INTEGER NOT NULL,\n"
    "    decided   INTEGER,\n"
    "    CHECK ((status = 'pending') = (decided IS NULL))\n"
    ");\n"
    "CREATE INDEX approvals_by_user ON approvals (user_id, created);\n"
    "CREATE INDEX approvals_by_run ON approvals (run_id, status);\n"
    "CREATE TABLE audit (\n"
    "    id        INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "    at        INTEGER NOT NULL,\n"
    "    user_id   TEXT,\n"
    "    run_id    TEXT,\n"
    "    action_id TEXT,\n"
    "    tool      TEXT,\n"
    "    event     TEXT NOT NULL,\n"
    "    args_hash TEXT,\n"
    "    outcome   TEXT\n"
    ");\n"
    "CREATE INDEX audit_by_run ON audit (run_id, id);\n"
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN\n"
    "    SELECT RAISE(ABORT, 'the audit trail is append only');\n"
    "END;\n"
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN\n"
    "    SELECT RAISE(ABORT, 'the audit trail is append only');\n"
    "END;\n"
    "CREATE TABLE memories (\n"
    "    id      INTEGER PRIMARY KEY,\n"
    "    user_id TEXT NOT NULL,\n"
    "    text    TEXT NOT NULL,\n"
    "    tags    TEXT NOT NULL DEFAULT '',\n"
    "    created INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX memories_by_user ON memories (user_id, id);\n"
    "CREATE VIRTUAL TABLE memories_fts USING fts5 (\n"
    "    text, tags, content = 'memories', content_rowid = 'id',\n"
    "    tokenize = 'porter unicode61 remove_diacritics 2'\n"
    ");\n"
    "CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN\n"
    "    INSERT INTO memories_fts (rowid, text, tags)\n"
    "        VALUES (new.id, new.text, new.tags);\n"
    "END;\n"
    "CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN\n"
    "    INSERT INTO memories_fts (memories_fts, rowid, text, tags)\n"
    "        VALUES ('delete', old.id, old.text, old.tags);\n"
    "END;\n"
    "CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN\n"
    "    INSERT INTO memories_fts (memories_fts, rowid, text, tags)\n"
    "        VALUES ('delete', old.id, old.text, old.tags);\n"
    "    INSERT INTO memories_fts (rowid, text, tags)\n"
    "        VALUES (new.id, new.text, new.tags);\n"
    "END;\n"
    "PRAGMA user_version = 1;\n";

/*
 * Version 2: what every worker shares of a request's cost. `budget` has
 * one row per counter (the site, a client address, a user): its requests
 * in one fixed minute and its tokens in one UTC day, both numbered since
 * the epoch; a row of an earlier window counts 0 and is overwritten, and
 * rows of earlier days are deleted a few at a time (budget_by_day finds
 * them). `tickets` holds the ids of single-use tickets until they expire.
 */
static const char schema_v2[] =
    "CREATE TABLE budget (\n"
    "    scope    TEXT PRIMARY KEY,\n"
    "    minute   INTEGER NOT NULL,\n"
    "    requests INTEGER NOT NULL CHECK (requests >= 0),\n"
    "    day      INTEGER NOT NULL,\n"
    "    tokens   INTEGER NOT NULL CHECK (tokens >= 0)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX budget_by_day ON budget (day);\n"
    "CREATE TABLE tickets (\n"
    "    id      TEXT PRIMARY KEY,\n"
    "    expires INTEGER NOT NULL\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX tickets_by_expiry ON tickets (expires);\n"
    "PRAGMA user_version = 2;\n";

/*
 * Version 3: the terminal client's sessions (`gemini-agent chat`,
 * term/keep.h): one row a session, its Gemini history whole (the JSON text
 * of the contents, thought signatures included), rewritten after every
 * prompt. --continue finds the newest of a folder (chats_by_cwd).
 */
static const char schema_v3[] =
    "CREATE TABLE chats (\n"
    "    id       TEXT PRIMARY KEY,\n"
    "    cwd      TEXT NOT NULL,\n"
    "    model    TEXT NOT NULL,\n"
    "    contents TEXT NOT NULL,\n"
    "    usage    TEXT,\n"
    "    created  INTEGER NOT NULL,\n"
    "    updated  INTEGER NOT NULL\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX chats_by_cwd ON chats (cwd, updated);\n"
    "PRAGMA user_version = 3;\n";

/* migrations[v] takes a store from version v to v + 1, and sets
 * user_version itself. */
static const char *const migrations[] = {schema_v1, schema_v2, schema_v3};

_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION,
               "one migration per schema version");

/* --- the queries --------------------------------------------------------- */

enum query {
    Q_BEGIN,
    Q_BEGIN_READ,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_VERSION,
    Q_USER_GET,
    Q_USER_TRUST,
    Q_USER_RULE,
    Q_THREAD_NEW,
    Q_THREAD_CHECK,
    Q_THREADS_LIST,
    Q_THREAD_GET,
    Q_MESSAGES,
    Q_THREAD_TOUCH,
    Q_MESSAGE_NEW,
    Q_RUN_NEW,
    Q_RUN_STATUS,
    Q_RUN_STATE,
    Q_RUN_SAVE,
    Q_RUN_GET,
    Q_RUN_RESUME,
    Q_ACTION_NEW,
    Q_ACTION_STATUS,
    Q_ACTION_STATE,
    Q_ACTIONS_OF,
    Q_APPROVAL_NEW,
    Q_APPROVALS_LIST,
    Q_APPROVAL_DECIDE,
    Q_APPROVAL_STATE,
    Q_APPROVALS_PENDING,
    Q_AUDIT_NEW,
    Q_AUDIT_OF,
    Q_MEMORY_NEW,
    Q_MEMORY_MATCH,
    Q_MEMORY_NEWEST,
    Q_SYNC_NORMAL,
    Q_SYNC_FULL,
    Q_BUDGET_GET,
    Q_BUDGET_ADD,
    Q_BUDGET_PRUNE,
    Q_BUDGET_SETTLE,
    Q_BUDGET_TOP,
    Q_TICKET_PRUNE,
    Q_TICKET_CLAIM,
    Q_CHAT_SAVE,
    Q_CHAT_LOAD,
    Q_CHAT_LATEST,
    Q__COUNT
};

static const struct {
    const char *name; /* for the log */
    const char *sql;
} queries[Q__COUNT] = {
    [Q_BEGIN] = {"begin", "BEGIN IMMEDIATE"},
    [Q_BEGIN_READ] = {"begin read", "BEGIN"},
    [Q_COMMIT] = {"commit", "COMMIT"},
    [Q_ROLLBACK] = {"rollback", "ROLLBACK"},
    [Q_VERSION] = {"schema version", "PRAGMA user_version"},
    [Q_USER_GET] = {"user get", "SELECT trust, allow FROM users WHERE id = ?1"},
    [Q_USER_TRUST] =
        {"user trust",
         "INSERT INTO users (id, trust, updated) VALUES (?1, ?2, ?3)"
         " ON CONFLICT (id) DO UPDATE"
         " SET trust = excluded.trust, updated = excluded.updated"},
    /* the rule is appended unless the list is full (no row changes) */
    [Q_USER_RULE] = {"user rule",
                     "INSERT INTO users (id, allow, updated)"
                     " VALUES (?1, json_array(json(?2)), ?3)"
                     " ON CONFLICT (id) DO UPDATE"
                     " SET allow = json_insert(allow, '$[#]', json(?2)),"
                     " updated = ?3 WHERE json_array_length(allow) < ?4"},
    [Q_THREAD_NEW] =
        {"thread create",
         "INSERT INTO threads (id, user_id, title, created, updated)"
         " VALUES (?1, ?2, ?3, ?4, ?4)"},
    [Q_THREAD_CHECK] = {"thread check", "SELECT 1 FROM threads"
                                        " WHERE id = ?1 AND user_id = ?2"},
    /* the last message is the one with the highest id (the index
     * messages_by_thread finds it at once) */
    [Q_THREADS_LIST] = {"threads list",
                        "SELECT t.id, t.title, t.created, t.updated,"
                        " m.role, substr(m.text, 1, ?3)"
                        " FROM threads t LEFT JOIN messages m ON m.id ="
                        " (SELECT max(id) FROM messages WHERE thread_id = t.id)"
                        " WHERE t.user_id = ?1"
                        " ORDER BY t.updated DESC, t.id LIMIT ?2"},
    [Q_THREAD_GET] = {"thread get",
                      "SELECT id, title, created, updated FROM threads"
                      " WHERE id = ?1 AND user_id = ?2"},
    [Q_MESSAGES] = {"thread messages",
                    "SELECT role, text, run_id, created FROM"
                    " (SELECT * FROM messages WHERE thread_id = ?1"
                    " ORDER BY id DESC LIMIT ?2) ORDER BY id"},
    [Q_THREAD_TOUCH] = {"thread touch",
                        "UPDATE threads SET updated = ?2 WHERE id = ?1"},
    [Q_MESSAGE_NEW] = {"message add",
                       "INSERT INTO messages (thread_id, run_id, role, text,"
                       " created) VALUES (?1, ?2, ?3, ?4, ?5)"},
    /* a run on a thread of another user inserts nothing */
    [Q_RUN_NEW] = {"run create",
                   "INSERT INTO runs (id, user_id, thread_id, prompt, created,"
                   " updated) SELECT ?1, ?2, ?3, ?4, ?5, ?5"
                   " WHERE ?3 IS NULL OR EXISTS (SELECT 1 FROM threads"
                   " WHERE id = ?3 AND user_id = ?2)"},
    /* A transition's UPDATE lists the states that may precede the new one
     * (store_run_from), up to six; the unused places are bound to NULL,
     * which IN never matches. So one text serves every transition. */
    [Q_RUN_STATUS] = {"run status",
                      "UPDATE runs SET status = ?2, updated = ?3 WHERE id = ?1"
                      " AND status IN (?4, ?5, ?6, ?7, ?8, ?9)"},
    [Q_RUN_STATE] = {"run state", "SELECT status FROM runs WHERE id = ?1"},
    [Q_RUN_SAVE] = {"run save",
                    "UPDATE runs SET answer = coalesce(?2, answer),"
                    " contents = coalesce(?3, contents),"
                    " usage = coalesce(?4, usage), updated = ?5 WHERE id = ?1"},
    [Q_RUN_GET] = {"run get",
                   "SELECT id, thread_id, status, prompt, created, updated,"
                   " answer FROM runs WHERE id = ?1 AND user_id = ?2"},
    [Q_RUN_RESUME] = {"run resume", "SELECT contents, user_id, thread_id"
                                    " FROM runs WHERE id = ?1"},
    /* seq is the next in the run: one statement, under the write lock */
    [Q_ACTION_NEW] = {"action create",
                      "INSERT INTO actions (id, run_id, seq, tool, args, call,"
                      " turn, part, status, created, updated)"
                      " SELECT ?1, ?2, coalesce((SELECT max(seq) FROM actions"
                      " WHERE run_id = ?2), 0) + 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
                      " ?9 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?2)"},
    [Q_ACTION_STATUS] = {"action status",
                         "UPDATE actions SET status = ?2,"
                         " output = coalesce(?3, output),"
                         " error = coalesce(?4, error), updated = ?5"
                         " WHERE id = ?1"
                         " AND status IN (?6, ?7, ?8, ?9, ?10, ?11)"},
    [Q_ACTION_STATE] = {"action state",
                        "SELECT status FROM actions WHERE id = ?1"},
    [Q_ACTIONS_OF] = {"actions of run",
                      "SELECT id, tool, args, call, turn, part, status, output,"
                      " error FROM actions WHERE run_id = ?1 ORDER BY seq"},
    /* only for an action of that run, of that user */
    [Q_APPROVAL_NEW] = {"approval create",
                        "INSERT INTO approvals (id, user_id, run_id, action_id,"
                        " tool, reason, preview, created, expires)"
                        " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9"
                        " WHERE EXISTS (SELECT 1 FROM actions a JOIN runs r"
                        " ON r.id = a.run_id WHERE a.id = ?4 AND a.run_id = ?3"
                        " AND r.user_id = ?2)"},
    [Q_APPROVALS_LIST] = {"approvals list",
                          "SELECT * FROM (SELECT id, run_id, action_id, tool,"
                          " reason, preview, CASE WHEN status = 'pending'"
                          " AND expires <= ?2 THEN 'expired' ELSE status END"
                          " AS state, created, expires FROM approvals"
                          " WHERE user_id = ?1)"
                          " WHERE ?3 IS NULL OR state = ?3"
                          " ORDER BY created DESC, id LIMIT ?4"},
    /* the one statement that decides: whoever changes the row won */
    [Q_APPROVAL_DECIDE] = {"approval decide",
                           "UPDATE approvals SET status = ?4, feedback = ?5,"
                           " decided = ?3 WHERE id = ?1 AND user_id = ?2"
                           " AND status = 'pending' AND expires > ?3"},
    [Q_APPROVAL_STATE] = {"approval state",
                          "SELECT status, action_id, run_id FROM approvals"
                          " WHERE id = ?1 AND user_id = ?2"},
    [Q_APPROVALS_PENDING] = {"approvals pending",
                             "SELECT count(*) FROM approvals WHERE run_id = ?1"
                             " AND status = 'pending' AND expires > ?2"},
    [Q_AUDIT_NEW] = {"audit add",
                     "INSERT INTO audit (at, user_id, run_id, action_id, tool,"
                     " event, args_hash, outcome)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"},
    [Q_AUDIT_OF] = {"audit of run",
                    "SELECT id, at, user_id, run_id, action_id, tool, event,"
                    " args_hash, outcome FROM audit WHERE run_id = ?1"
                    " ORDER BY id"},
    [Q_MEMORY_NEW] = {"memory save",
                      "INSERT INTO memories (user_id, text, tags, created)"
                      " VALUES (?1, ?2, ?3, ?4)"},
    [Q_MEMORY_MATCH] = {"memory search",
                        "SELECT m.id, m.text, m.tags, m.created"
                        " FROM memories_fts JOIN memories m"
                        " ON m.id = memories_fts.rowid"
                        " WHERE memories_fts MATCH ?1 AND m.user_id = ?2"
                        " ORDER BY bm25(memories_fts), m.id DESC LIMIT ?3"},
    [Q_MEMORY_NEWEST] = {"memory newest",
                         "SELECT id, text, tags, created FROM memories"
                         " WHERE user_id = ?1 ORDER BY id DESC LIMIT ?2"},
    /* the budget's transactions (see budget_sync) */
    [Q_SYNC_NORMAL] = {"synchronous normal", "PRAGMA synchronous = NORMAL"},
    [Q_SYNC_FULL] = {"synchronous full", "PRAGMA synchronous = FULL"},
    [Q_BUDGET_GET] = {"budget get", "SELECT minute, requests, day, tokens"
                                    " FROM budget WHERE scope = ?1"},
    /* SET reads the row as it was: a window that rolled over starts at
     * what this reservation adds */
    [Q_BUDGET_ADD] = {"budget add",
                      "INSERT INTO budget (scope, minute, requests, day,"
                      " tokens) VALUES (?1, ?2, ?3, ?4, ?5)"
                      " ON CONFLICT (scope) DO UPDATE SET"
                      " requests = CASE WHEN minute = excluded.minute"
                      " THEN requests + excluded.requests"
                      " ELSE excluded.requests END,"
                      " minute = excluded.minute,"
                      " tokens = CASE WHEN day = excluded.day"
                      " THEN tokens + excluded.tokens"
                      " ELSE excluded.tokens END,"
                      " day = excluded.day"},
    [Q_BUDGET_PRUNE] = {"budget prune",
                        "DELETE FROM budget WHERE scope IN (SELECT scope"
                        " FROM budget WHERE day < ?1 LIMIT ?2)"},
    [Q_BUDGET_SETTLE] = {"budget settle",
                         "UPDATE budget SET tokens = max(0, tokens + ?2)"
                         " WHERE scope = ?1 AND day = ?3"},
    [Q_BUDGET_TOP] = {"budget top",
                      "SELECT scope, CASE WHEN minute = ?2 THEN requests"
                      " ELSE 0 END, tokens FROM budget WHERE day = ?1"
                      " ORDER BY tokens DESC, scope LIMIT ?3"},
    [Q_TICKET_PRUNE] = {"ticket prune",
                        "DELETE FROM tickets WHERE id IN (SELECT id"
                        " FROM tickets WHERE expires <= ?1 LIMIT ?2)"},
    /* a record that has expired is claimed again; a live one changes
     * nothing (no row changed: the ticket was used) */
    [Q_TICKET_CLAIM] = {"ticket claim",
                        "INSERT INTO tickets (id, expires) VALUES (?1, ?2)"
                        " ON CONFLICT (id) DO UPDATE"
                        " SET expires = excluded.expires"
                        " WHERE tickets.expires <= ?3"},
    /* created stays what the first save wrote */
    [Q_CHAT_SAVE] = {"chat save",
                     "INSERT INTO chats (id, cwd, model, contents, usage,"
                     " created, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
                     " ON CONFLICT (id) DO UPDATE SET cwd = excluded.cwd,"
                     " model = excluded.model, contents = excluded.contents,"
                     " usage = excluded.usage, updated = excluded.updated"},
    [Q_CHAT_LOAD] = {"chat load",
                     "SELECT id, cwd, model, contents, usage, created, updated"
                     " FROM chats WHERE id = ?1"},
    [Q_CHAT_LATEST] = {"chat latest",
                       "SELECT id, cwd, model, contents, usage, created,"
                       " updated FROM chats WHERE cwd = ?1"
                       " ORDER BY updated DESC, id LIMIT 1"},
};

struct sqlite_store {
    struct store base; /* first: the callers' struct store * is this */
    sqlite3 *db;
    char *path;                 /* for messages */
    sqlite3_stmt *st[Q__COUNT]; /* prepared on first use */
};

static struct sqlite_store *
sq(struct store *base)
{
    return (struct sqlite_store *)base;
}

/* --- statements ---------------------------------------------------------- */

/* A failed SQLite call: the log gets SQLite's words, `err` a plain
 * sentence. Returns -1. */
static int
fail(struct sqlite_store *s, int rc, const char *what, struct status_error *err)
{
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db)
                                    : sqlite3_errstr(rc);

    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        log_warn("store '%s': %s: %s", s->path, what, msg);
        return status_set(err, ST_STORE, "the store is busy");
    case SQLITE_NOMEM:
        return status_set(err, ST_NO_MEMORY, "out of memory in the store");
    default:
        log_err("store '%s': %s: %s", s->path, what, msg);
        return status_set(err, ST_STORE, "the store failed; see the error log");
    }
}

static int
nomem(struct status_error *err)
{
    return status_set(err, ST_NO_MEMORY, "out of memory in the store");
}

/* Done with a statement: its read ends, and its bound pointers (bound
 * SQLITE_STATIC: valid only during the call) are forgotten. */
static void
done(sqlite3_stmt *st)
{
    if (st != NULL) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
}

/*
 * The statement of `q`, prepared on first use, with ?1, ?2, ... bound from
 * `fmt`: 's' a string (NULL binds NULL), 'I' an int64_t (pass exactly
 * that type). Strings are not copied. NULL with `err` set on failure.
 */
static sqlite3_stmt *
prep_va(struct sqlite_store *s, enum query q, struct status_error *err,
        const char *fmt, va_list ap)
{
    int rc = SQLITE_OK;

    if (s->st[q] == NULL) {
        rc = sqlite3_prepare_v3(s->db, queries[q].sql, -1,
                                SQLITE_PREPARE_PERSISTENT, &s->st[q], NULL);
        if (rc != SQLITE_OK) {
            fail(s, rc, queries[q].name, err);
            return NULL;
        }
    }
    sqlite3_stmt *st = s->st[q];
    assert(strlen(fmt) == (size_t)sqlite3_bind_parameter_count(st));
    for (int i = 0; fmt[i] != '\0' && rc == SQLITE_OK; i++) {
        if (fmt[i] == 's') {
            const char *v = va_arg(ap, const char *);
            rc = v != NULL ? sqlite3_bind_text(st, i + 1, v, -1, SQLITE_STATIC)
                           : sqlite3_bind_null(st, i + 1);
        } else {
            rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        }
    }
    if (rc != SQLITE_OK) {
        fail(s, rc, queries[q].name, err);
        done(st);
        return NULL;
    }
    return st;
}

static sqlite3_stmt *
prep(struct sqlite_store *s, enum query q, struct status_error *err,
     const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;

    va_start(ap, fmt);
    st = prep_va(s, q, err, fmt, ap);
    va_end(ap);
    return st;
}

/* Step `st` of query `q`: 1 with a row, 0 at the end, -1 with `err` set. */
static int
step(struct sqlite_store *s, enum query q, sqlite3_stmt *st,
     struct status_error *err)
{
    int rc = sqlite3_step(st);

    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return fail(s, rc, queries[q].name, err);
}

/* Run a statement to its end (prep's arguments): 0 or -1. How many rows
 * it changed is then sqlite3_changes(). */
static int
run(struct sqlite_store *s, enum query q, struct status_error *err,
    const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    int r;

    va_start(ap, fmt);
    st = prep_va(s, q, err, fmt, ap);
    va_end(ap);
    if (st == NULL)
        return -1;
    while ((r = step(s, q, st, err)) == 1)
        ;
    done(st);
    return r;
}

/* Does the statement find a row (prep's arguments)? 1, 0, or -1. */
static int
found(struct sqlite_store *s, enum query q, struct status_error *err,
      const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    int r;

    va_start(ap, fmt);
    st = prep_va(s, q, err, fmt, ap);
    va_end(ap);
    if (st == NULL)
        return -1;
    r = step(s, q, st, err);
    done(st);
    return r;
}

/* --- transactions -------------------------------------------------------- */

/* BEGIN IMMEDIATE takes the write lock first (waiting up to STORE_BUSY_MS),
 * so a transaction never fails half-way on another writer. */
static int
tx_begin(struct sqlite_store *s, struct status_error *err)
{
    return run(s, Q_BEGIN, err, "");
}

/* A consistent snapshot for reads of several statements (WAL readers
 * never wait). */
static int
tx_read(struct sqlite_store *s, struct status_error *err)
{
    return run(s, Q_BEGIN_READ, err, "");
}

/* End the transaction: COMMIT when `rc` is 0, else (or when COMMIT fails)
 * ROLLBACK. Returns 0 once committed, else -1. */
static int
tx_end(struct sqlite_store *s, int rc, struct status_error *err)
{
    if (rc == 0 && run(s, Q_COMMIT, err, "") == 0)
        return 0;
    if (!sqlite3_get_autocommit(s->db)) {
        struct status_error ignored = {0};
        (void)run(s, Q_ROLLBACK, &ignored, "");
    }
    return -1;
}

/* --- columns ------------------------------------------------------------- */

/* Column `i` as text; NULL for SQL NULL. Valid until the next step. */
static const char *
col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static json_int_t
col_int(sqlite3_stmt *st, int i)
{
    return (json_int_t)sqlite3_column_int64(st, i);
}

/* The JSON text of column `i` as a new value in *out (NULL for SQL NULL),
 * read with jsonin (safe under a request's memory bound). 0 or -1. */
static int
col_json(struct sqlite_store *s, sqlite3_stmt *st, int i, json_t **out,
         struct status_error *err)
{
    const char *text = col_text(st, i);
    json_error_t jerr;
    bool oom = false;

    *out = NULL;
    if (text == NULL)
        return 0;
    *out = jsonin_parse(text, (size_t)sqlite3_column_bytes(st, i),
                        JSON_DECODE_ANY, &jerr, &oom);
    if (*out != NULL)
        return 0;
    if (oom)
        return nomem(err);
    log_err("store '%s': column %s holds no JSON: %s", s->path,
            sqlite3_column_name(st, i), jerr.text);
    return status_set(err, ST_STORE, "the store failed; see the error log");
}

/* Column `i` copied into buf[n]: -1 (ST_STORE) when it does not fit. */
static int
col_copy(struct sqlite_store *s, sqlite3_stmt *st, int i, char *buf, size_t n,
         struct status_error *err)
{
    const char *text = col_text(st, i);
    size_t len = text != NULL ? (size_t)sqlite3_column_bytes(st, i) : 0;

    if (len >= n) {
        log_err("store '%s': column %s is %zu bytes, more than %zu", s->path,
                sqlite3_column_name(st, i), len, n - 1);
        return status_set(err, ST_STORE, "the store failed; see the error log");
    }
    if (len > 0)
        memcpy(buf, text, len);
    buf[len] = '\0';
    return 0;
}

/* Append `item` (a new reference, may be NULL: out of memory) to `arr`. */
static int
append(json_t *arr, json_t *item, struct status_error *err)
{
    if (item == NULL || json_array_append_new(arr, item) != 0)
        return nomem(err);
    return 0;
}

/* The rows `st` gives (prepared for `q`; NULL after a failed prep, `err`
 * set), each made by `row`, in a new array; NULL with `err` set when
 * anything failed. The statement is done with either way. */
static json_t *
rows(struct sqlite_store *s, enum query q, sqlite3_stmt *st,
     json_t *(*row)(sqlite3_stmt *st), struct status_error *err)
{
    json_t *arr = st != NULL ? json_array() : NULL;
    int r = -1;

    if (st != NULL && arr == NULL)
        nomem(err);
    while (arr != NULL && (r = step(s, q, st, err)) == 1)
        if (append(arr, row(st), err) != 0) {
            r = -1;
            break;
        }
    done(st);
    if (r < 0) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* The JSON text of `v` for a column (NULL for NULL), malloc'd in *text. */
static int
dump(const json_t *v, char **text, struct status_error *err)
{
    *text = NULL;
    if (v == NULL)
        return 0;
    *text = jsonout_dumps(v, APP_JSON_FLAGS | JSON_ENCODE_ANY,
                          JSONOUT_UNBOUNDED, NULL);
    if (*text == NULL)
        return status_set(err, ST_NO_MEMORY,
                          "cannot write a JSON value for the store");
    return 0;
}

static int64_t
clamp(long v, long max)
{
    return v <= 0 || v > max ? (int64_t)max : (int64_t)v;
}

/* --- opening, closing, the schema ---------------------------------------- */

static const struct store_ops sqlite_ops;

static void
sq_close(struct store *base)
{
    struct sqlite_store *s = sq(base);

    if (s == NULL)
        return;
    for (size_t i = 0; i < ARRAY_SIZE(s->st); i++)
        sqlite3_finalize(s->st[i]);
    if (sqlite3_close(s->db) != SQLITE_OK)
        log_err("store '%s': close: %s", s->path, sqlite3_errmsg(s->db));
    free(s->path);
    free(s);
}

/*
 * A database file this connection created is made its owner's alone,
 * before anything is written to it (SQLite creates it 0644, and its -wal
 * and -shm files take the database's mode when they are made, later).
 * Never open() and close() the file ourselves: closing any descriptor of a
 * file drops every POSIX lock the process holds on it, the locks of its
 * other connections included, and another process could then delete the
 * WAL they write to (SQLite's "How To Corrupt", §2.2). umask is not
 * touched either: it belongs to the whole process and its other threads.
 */
static int
private_file(struct sqlite_store *s, bool existed, struct status_error *err)
{
    if (existed || chmod(s->path, 0600) == 0)
        return 0;
    log_err("store '%s': cannot make it private: %s", s->path, strerror(errno));
    return status_set(err, ST_STORE,
                      "the store cannot be opened; see the error log");
}

/* Can anyone write the folder of `path` (sticky or not: they could
 * still make the names SQLite is about to create)? Its stat in *st. */
static bool
folder_public(const char *path, struct stat *st)
{
    char dir[BOUND_PATH_LEN];
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL ? 1 : slash == path ? 1 : (size_t)(slash - path);

    if (n >= sizeof(dir))
        return false;
    memcpy(dir, slash == NULL ? "." : path, n);
    dir[n] = '\0';
    return stat(dir, st) == 0 && (st->st_mode & 002) != 0;
}

/*
 * A store file that exists (a symlink's target) must be a regular file no
 * other user can change: one that group or others can write, or that
 * another user owns, could have its runs, budgets or sessions rewritten
 * under us. A symlink to nothing is refused too: SQLite would create the
 * store wherever it points; and a folder anyone can write. Checked
 * before SQLite opens it.
 */
static int
safe_path(struct sqlite_store *s, const struct stat *st, bool existed,
          struct status_error *err)
{
    struct stat l;
    const char *why = NULL;
    char buf[160];

    if (folder_public(s->path, &l)) {
        snprintf(buf, sizeof(buf),
                 "others can write its folder (mode %04o), and plant its "
                 "-wal and -shm files: run chmod o-w on the folder",
                 (unsigned)(l.st_mode & 07777));
        why = buf;
    } else if (!existed) {
        if (lstat(s->path, &l) == 0 && S_ISLNK(l.st_mode))
            why = "it is a symlink to nothing";
    } else if (!S_ISREG(st->st_mode)) {
        why = "it is not a regular file";
    } else if ((st->st_mode & 022) != 0) {
        snprintf(buf, sizeof(buf),
                 "group or others can write it (mode %03o): run chmod 600",
                 (unsigned)(st->st_mode & 0777));
        why = buf;
    } else if (st->st_uid != geteuid() && st->st_uid != 0) {
        snprintf(buf, sizeof(buf), "it belongs to user %u: run chown %u",
                 (unsigned)st->st_uid, (unsigned)geteuid());
        why = buf;
    }
    if (why == NULL)
        return 0;
    log_err("store '%s': refused: %s", s->path, why);
    return status_set(err, ST_STORE,
                      "the store cannot be opened; see the error log");
}

/* One PRAGMA that answers one row (journal_mode), or none. */
static int
pragma(struct sqlite_store *s, const char *sql, const char *want,
       struct status_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && want != NULL &&
        sqlite3_stricmp(col_text(st, 0) ? col_text(st, 0) : "", want) != 0)
        log_warn("store '%s': %s gave '%s'", s->path, sql, col_text(st, 0));
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fail(s, rc, sql, err);
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

/*
 * WAL mode. Once set it stays in the file; switching a new file to it needs
 * the exclusive lock, which SQLite asks for without its busy handler, so
 * the first connections to a new store (CGI requests at once; serve sets
 * it at start) can find it taken: try again for up to STORE_BUSY_MS.
 */
static int
wal(struct sqlite_store *s, struct status_error *err)
{
    for (long waited = 0;; waited += 20) {
        struct status_error busy = {0};
        struct timespec ts = {0, 20 * 1000 * 1000};

        if (pragma(s, "PRAGMA journal_mode = WAL", "wal", &busy) == 0)
            return 0;
        if (busy.code != ST_STORE || strcmp(busy.text, "the store is busy") ||
            waited >= STORE_BUSY_MS) {
            *err = busy;
            return -1;
        }
        nanosleep(&ts, NULL);
    }
}

/*
 * The connection: no SQLite mutex (one thread at a time uses it: one
 * request thread owns it), extended result codes (a UNIQUE violation is
 * told apart), a busy timeout, and:
 *
 * - WAL: readers never wait for the writer, and writers for readers;
 * - synchronous=FULL: each COMMIT is on the disk before we return. WAL
 *   with NORMAL already survives a crash of the process; FULL also keeps
 *   the last commits through a power loss or a kernel crash. We take the
 *   fsync (one per transaction, a few per run, next to Gemini's seconds)
 *   because what is committed here is acted on outside: an approval
 *   decided and then lost would be asked again, and an email already sent
 *   would be missing from the audit trail;
 * - foreign keys on (SQLite's default is off, per connection).
 */
static int
connect_db(struct sqlite_store *s, struct status_error *err)
{
    struct stat st;
    bool existed = stat(s->path, &st) == 0;
    char *slash = strrchr(s->path, '/');
    int rc;

    /* dataDir may not exist yet (the plugins make it on first use too):
     * make the store's folder, one level, its owner's */
    if (!existed && slash != NULL && slash != s->path) {
        *slash = '\0';
        if (mkdir(s->path, 0750) != 0 && errno != EEXIST)
            log_warn("store '%s': cannot make its folder: %s", s->path,
                     strerror(errno));
        *slash = '/';
    }
    if (safe_path(s, &st, existed, err) != 0)
        return -1;
    if (sqlite3_libversion_number() < 3031000) {
        log_err("store '%s': SQLite %s is too old (3.31 or later is needed)",
                s->path, sqlite3_libversion());
        return status_set(err, ST_STORE,
                          "the store cannot be opened; see the error log");
    }
    rc = sqlite3_open_v2(
        s->path, &s->db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "open", err);
    if (private_file(s, existed, err) != 0)
        return -1;
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
    if (wal(s, err) != 0 ||
        pragma(s, "PRAGMA synchronous = FULL", NULL, err) != 0 ||
        pragma(s, "PRAGMA foreign_keys = ON", NULL, err) != 0)
        return -1;
    return 0;
}

struct store *
store_sqlite_open(const char *path, struct status_error *err)
{
    struct sqlite_store *s = calloc(1, sizeof(*s));

    if (s == NULL || (s->path = strdup(path)) == NULL) {
        free(s);
        nomem(err);
        return NULL;
    }
    s->base.ops = &sqlite_ops;
    if (connect_db(s, err) != 0) {
        sq_close(&s->base);
        return NULL;
    }
    return &s->base;
}

static int
sq_schema_version(struct store *base, int *version, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    sqlite3_stmt *st = prep(s, Q_VERSION, err, "");
    int r;

    *version = 0;
    if (st == NULL)
        return -1;
    r = step(s, Q_VERSION, st, err);
    if (r == 1)
        *version = sqlite3_column_int(st, 0);
    done(st);
    return r < 0 ? -1 : 0;
}

static int
newer(struct sqlite_store *s, int v, struct status_error *err)
{
    return status_set(err, ST_SCHEMA_NEWER,
                      "the store %s was written by a newer gemini-agent "
                      "(schema %d, this one knows %d)",
                      s->path, v, STORE_SCHEMA_VERSION);
}

/* The scripts are our own constant SQL, with no values in them. */
static int
migrate_from(struct sqlite_store *s, int v, struct status_error *err)
{
    for (; v < STORE_SCHEMA_VERSION; v++) {
        char *msg = NULL;
        int rc = sqlite3_exec(s->db, migrations[v], NULL, NULL, &msg);
        if (rc != SQLITE_OK) {
            log_err("store '%s': migration to schema %d: %s", s->path, v + 1,
                    msg != NULL ? msg : sqlite3_errstr(rc));
            sqlite3_free(msg);
            return status_set(
                err, (rc & 0xff) == SQLITE_NOMEM ? ST_NO_MEMORY : ST_STORE,
                "the store cannot be migrated; see the error "
                "log");
        }
        log_info("store '%s': schema %d", s->path, v + 1);
    }
    return 0;
}

/* Up to STORE_SCHEMA_VERSION, under the write lock: the version is read
 * again inside, so two processes starting at once migrate once. */
static int
sq_migrate(struct store *base, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int v, rc;

    if (sq_schema_version(base, &v, err) != 0)
        return -1;
    if (v > STORE_SCHEMA_VERSION)
        return newer(s, v, err);
    if (v == STORE_SCHEMA_VERSION)
        return 0;
    if (tx_begin(s, err) != 0)
        return -1;
    rc = sq_schema_version(base, &v, err);
    if (rc == 0 && v > STORE_SCHEMA_VERSION)
        rc = newer(s, v, err);
    if (rc == 0)
        rc = migrate_from(s, v, err);
    return tx_end(s, rc, err);
}

/* --- users --------------------------------------------------------------- */

static int
sq_user_get(struct store *base, const char *user, struct store_user *out,
            struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    sqlite3_stmt *st = prep(s, Q_USER_GET, err, "s", user);
    int r;

    out->trust = STORE_SUPERVISED;
    out->allow = NULL;
    if (st == NULL)
        return -1;
    r = step(s, Q_USER_GET, st, err);
    if (r == 1) {
        /* the CHECK keeps other words out; were one there, the safe
         * reading is the default */
        int t = store_trust_parse(col_text(st, 0));
        out->trust = t >= 0 ? (enum store_trust)t : STORE_SUPERVISED;
        r = col_json(s, st, 1, &out->allow, err);
    }
    done(st);
    if (r >= 0 && out->allow == NULL && (out->allow = json_array()) == NULL)
        r = nomem(err);
    return r < 0 ? -1 : 0;
}

static int
sq_user_set_trust(struct store *base, const char *user, enum store_trust t,
                  struct status_error *err)
{
    if (store_check_user(user, err) != 0)
        return -1;
    if ((unsigned)t > STORE_AUTONOMOUS)
        return status_set(err, ST_BAD_REQUEST, "unknown trust level %d", t);
    return run(sq(base), Q_USER_TRUST, err, "ssI", user, store_trust_name(t),
               store_now_ms());
}

static int
sq_user_add_rule(struct store *base, const char *user, const json_t *rule,
                 struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    char *text = NULL;
    int rc;

    if (store_check_user(user, err) != 0)
        return -1;
    if (!json_is_object(rule))
        return status_set(err, ST_BAD_REQUEST, "an allow rule is an object");
    if (dump(rule, &text, err) != 0)
        return -1;
    rc = run(s, Q_USER_RULE, err, "ssII", user, text, store_now_ms(),
             (int64_t)BOUND_STORE_ALLOW_RULES);
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = status_set(err, ST_TOO_LARGE, "a user has at most %d allow rules",
                        BOUND_STORE_ALLOW_RULES);
    free(text);
    return rc;
}

/* --- threads and messages ------------------------------------------------ */

static int
sq_thread_create(struct store *base, const char *user, const char *title,
                 char id[STORE_ID_LEN], struct status_error *err)
{
    id[0] = '\0';
    if (store_check_user(user, err) != 0 || store_new_id(id, err) != 0)
        return -1;
    return run(sq(base), Q_THREAD_NEW, err, "sssI", id, user,
               title != NULL ? title : "", store_now_ms());
}

static int
sq_thread_check(struct store *base, const char *user, const char *id,
                struct status_error *err)
{
    int r = found(sq(base), Q_THREAD_CHECK, err, "ss", id, user);

    if (r == 0)
        return status_set(err, ST_NOT_FOUND, "thread not found");
    return r < 0 ? -1 : 0;
}

/* One row of the thread list; lastMessage is null for an empty thread. */
static json_t *
thread_row(sqlite3_stmt *st)
{
    json_t *last = json_null();

    if (sqlite3_column_type(st, 4) != SQLITE_NULL)
        last = json_pack("{s:s, s:s}", "role", col_text(st, 4), "text",
                         col_text(st, 5) != NULL ? col_text(st, 5) : "");
    if (last == NULL)
        return NULL;
    return json_pack("{s:s, s:s, s:I, s:I, s:o}", "id", col_text(st, 0),
                     "title", col_text(st, 1), "createdAt", col_int(st, 2),
                     "updatedAt", col_int(st, 3), "lastMessage", last);
}

static int
sq_threads_list(struct store *base, const char *user, long limit, json_t **out,
                struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    *out = rows(s, Q_THREADS_LIST,
                prep(s, Q_THREADS_LIST, err, "sII", user,
                     clamp(limit, BOUND_STORE_LIST),
                     (int64_t)BOUND_STORE_PREVIEW_CHARS),
                thread_row, err);
    return *out != NULL ? 0 : -1;
}

static json_t *
message_row(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:s, s:s?, s:I}", "role", col_text(st, 0), "text",
                     col_text(st, 1), "runId", col_text(st, 2), "createdAt",
                     col_int(st, 3));
}

/* The thread's newest messages, oldest first. */
static json_t *
thread_messages(struct sqlite_store *s, const char *id,
                struct status_error *err)
{
    return rows(s, Q_MESSAGES,
                prep(s, Q_MESSAGES, err, "sI", id,
                     (int64_t)BOUND_STORE_THREAD_MESSAGES),
                message_row, err);
}

/* The thread's own record; ST_NOT_FOUND when it is not the user's. */
static json_t *
thread_record(struct sqlite_store *s, const char *user, const char *id,
              struct status_error *err)
{
    sqlite3_stmt *st = prep(s, Q_THREAD_GET, err, "ss", id, user);
    json_t *t = NULL;
    int r;

    if (st == NULL)
        return NULL;
    r = step(s, Q_THREAD_GET, st, err);
    if (r == 0)
        status_set(err, ST_NOT_FOUND, "thread not found");
    if (r == 1) {
        t = json_pack("{s:s, s:s, s:I, s:I}", "id", col_text(st, 0), "title",
                      col_text(st, 1), "createdAt", col_int(st, 2), "updatedAt",
                      col_int(st, 3));
        if (t == NULL)
            nomem(err);
    }
    done(st);
    return t;
}

static int
sq_thread_get(struct store *base, const char *user, const char *id,
              json_t **thread, json_t **messages, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int rc;

    *thread = *messages = NULL;
    if (tx_read(s, err) != 0)
        return -1;
    *thread = thread_record(s, user, id, err);
    if (*thread != NULL)
        *messages = thread_messages(s, id, err);
    rc = tx_end(s, *messages != NULL ? 0 : -1, err);
    if (rc != 0) {
        json_decref(*thread);
        json_decref(*messages);
        *thread = *messages = NULL;
    }
    return rc;
}

static int
sq_message_add(struct store *base, const char *thread, const char *run_id,
               const char *role, const char *text, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int64_t now = store_now_ms();
    int rc;

    if (role == NULL ||
        (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
        return status_set(err, ST_BAD_REQUEST,
                          "a message's role is user or assistant");
    if (tx_begin(s, err) != 0)
        return -1;
    rc = run(s, Q_THREAD_TOUCH, err, "sI", thread, now);
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = status_set(err, ST_NOT_FOUND, "thread not found");
    if (rc == 0)
        rc = run(s, Q_MESSAGE_NEW, err, "ssssI", thread, run_id, role,
                 text != NULL ? text : "", now);
    return tx_end(s, rc, err);
}

/* --- runs and actions ---------------------------------------------------- */

static int
sq_run_create(struct store *base, const char *user, const char *thread,
              const char *prompt, char id[STORE_ID_LEN],
              struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int rc;

    id[0] = '\0';
    if (store_check_user(user, err) != 0 || store_new_id(id, err) != 0)
        return -1;
    rc = run(s, Q_RUN_NEW, err, "ssssI", id, user, thread,
             prompt != NULL ? prompt : "", store_now_ms());
    if (rc == 0 && sqlite3_changes(s->db) == 0) {
        id[0] = '\0';
        return status_set(err, ST_NOT_FOUND, "thread not found");
    }
    return rc;
}

/*
 * After a transition's UPDATE changed nothing: ST_NOT_FOUND when there is
 * no such row, else ST_CONFLICT naming both states ("run X is completed;
 * it cannot become planning"). In the UPDATE's transaction, so the state
 * named is the one that refused.
 */
static int
refused(struct sqlite_store *s, enum query state_q, const char *kind,
        const char *id, const char *to, struct status_error *err)
{
    sqlite3_stmt *st = prep(s, state_q, err, "s", id);
    int r;

    if (st == NULL)
        return -1;
    r = step(s, state_q, st, err);
    if (r == 0)
        status_set(err, ST_NOT_FOUND, "%s not found", kind);
    else if (r == 1 && col_text(st, 0) == NULL)
        nomem(err);
    else if (r == 1)
        status_set(err, ST_CONFLICT, "%s %s is %s; it cannot become %s", kind,
                   id, col_text(st, 0), to);
    done(st);
    return -1;
}

static int
sq_run_status(struct store *base, const char *run_id, enum store_run_status to,
              struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    const char *f[STORE_RUN_STATES];
    const char *name = store_run_status_name(to);
    int rc;

    if ((unsigned)to >= STORE_RUN_STATES)
        return status_set(err, ST_BAD_REQUEST, "unknown run state %d", to);
    store_run_from(to, f);
    if (tx_begin(s, err) != 0)
        return -1;
    rc = run(s, Q_RUN_STATUS, err, "ssIssssss", run_id, name, store_now_ms(),
             f[0], f[1], f[2], f[3], f[4], f[5]);
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = refused(s, Q_RUN_STATE, "run", run_id, name, err);
    return tx_end(s, rc, err);
}

static int
sq_run_save(struct store *base, const char *run_id, const char *answer,
            const char *contents, const json_t *usage, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    char *usage_text = NULL;
    int rc;

    if (dump(usage, &usage_text, err) != 0)
        return -1;
    rc = run(s, Q_RUN_SAVE, err, "ssssI", run_id, answer, contents, usage_text,
             store_now_ms());
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = status_set(err, ST_NOT_FOUND, "run not found");
    free(usage_text);
    return rc;
}

/* One action as run_get shows it, or (full) as actions_of does. */
static json_t *
action_row(struct sqlite_store *s, sqlite3_stmt *st, bool full,
           struct status_error *err)
{
    json_t *args = NULL, *call = NULL, *output = NULL, *a;

    if (col_json(s, st, 2, &args, err) != 0 ||
        col_json(s, st, 3, &call, err) != 0 ||
        col_json(s, st, 7, &output, err) != 0) {
        json_decref(args);
        json_decref(call);
        return NULL;
    }
    if (full) {
        a = json_pack("{s:s, s:s, s:o, s:o?, s:I, s:I, s:s, s:o*, s:s*}", "id",
                      col_text(st, 0), "tool", col_text(st, 1), "args", args,
                      "call", call, "turn", col_int(st, 4), "part",
                      col_int(st, 5), "status", col_text(st, 6), "output",
                      output, "error", col_text(st, 8));
    } else {
        json_decref(call);
        a = json_pack("{s:s, s:s, s:o, s:s, s:o*, s:s*}", "id", col_text(st, 0),
                      "tool", col_text(st, 1), "args", args, "status",
                      col_text(st, 6), "output", output, "error",
                      col_text(st, 8));
    }
    if (a == NULL)
        nomem(err);
    return a;
}

static json_t *
actions_list(struct sqlite_store *s, const char *run_id, bool full,
             struct status_error *err)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    int r = -1;

    if (arr == NULL) {
        nomem(err);
        return NULL;
    }
    st = prep(s, Q_ACTIONS_OF, err, "s", run_id);
    while (st != NULL && (r = step(s, Q_ACTIONS_OF, st, err)) == 1) {
        json_t *a = action_row(s, st, full, err);
        if (a == NULL || append(arr, a, err) != 0) {
            r = -1;
            break;
        }
    }
    done(st);
    if (r < 0) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* The run's own row, without its actions; ST_NOT_FOUND when it is not
 * the user's. */
static json_t *
run_record(struct sqlite_store *s, const char *user, const char *run_id,
           struct status_error *err)
{
    sqlite3_stmt *st = prep(s, Q_RUN_GET, err, "ss", run_id, user);
    json_t *answer = NULL, *r = NULL;
    int found_row;

    if (st == NULL)
        return NULL;
    found_row = step(s, Q_RUN_GET, st, err);
    if (found_row == 0)
        status_set(err, ST_NOT_FOUND, "run not found");
    if (found_row == 1 && col_json(s, st, 6, &answer, err) == 0) {
        r = json_pack("{s:s, s:s?, s:s, s:s, s:I, s:I, s:o*}", "id",
                      col_text(st, 0), "threadId", col_text(st, 1), "status",
                      col_text(st, 2), "prompt", col_text(st, 3), "createdAt",
                      col_int(st, 4), "updatedAt", col_int(st, 5), "answer",
                      answer);
        if (r == NULL)
            nomem(err);
    }
    done(st);
    return r;
}

static int
sq_run_get(struct store *base, const char *user, const char *run_id,
           json_t **out, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    json_t *actions = NULL;
    int rc = -1;

    *out = NULL;
    if (tx_read(s, err) != 0)
        return -1;
    *out = run_record(s, user, run_id, err);
    if (*out != NULL)
        actions = actions_list(s, run_id, false, err);
    if (actions != NULL)
        rc = json_object_set_new(*out, "actions", actions) == 0 ? 0
                                                                : nomem(err);
    rc = tx_end(s, rc, err);
    if (rc != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

static int
sq_run_resume(struct store *base, const char *run_id, char **contents,
              char user[BOUND_STORE_USER_ID + 1], char thread[STORE_ID_LEN],
              struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    int r;

    *contents = NULL;
    user[0] = thread[0] = '\0';
    if ((st = prep(s, Q_RUN_RESUME, err, "s", run_id)) == NULL)
        return -1;
    r = step(s, Q_RUN_RESUME, st, err);
    if (r == 0)
        r = status_set(err, ST_NOT_FOUND, "run not found");
    if (r == 1 && col_text(st, 0) != NULL) {
        /* charged to the request: the conversation may be large */
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        if ((*contents = memlimit_malloc(n + 1)) == NULL)
            r = nomem(err);
        else
            memcpy(*contents, col_text(st, 0), n + 1);
    }
    if (r == 1 &&
        (col_copy(s, st, 1, user, BOUND_STORE_USER_ID + 1, err) != 0 ||
         col_copy(s, st, 2, thread, STORE_ID_LEN, err) != 0))
        r = -1;
    done(st);
    if (r < 0) {
        free(*contents);
        *contents = NULL;
        return -1;
    }
    return 0;
}

static int
sq_action_create(struct store *base, const struct store_action_new *a,
                 char id[STORE_ID_LEN], struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    char *args_text = NULL, *call_text = NULL;
    int rc;

    id[0] = '\0';
    if ((unsigned)a->status >= STORE_ACTION_STATES)
        return status_set(err, ST_BAD_REQUEST, "unknown action state %d",
                          a->status);
    if (store_new_id(id, err) != 0 || dump(a->args, &args_text, err) != 0 ||
        dump(a->call, &call_text, err) != 0) {
        rc = -1;
        goto out;
    }
    rc = run(s, Q_ACTION_NEW, err, "sssssIIsI", id, a->run, a->tool,
             args_text != NULL ? args_text : "{}", call_text, (int64_t)a->turn,
             (int64_t)a->part, store_action_status_name(a->status),
             store_now_ms());
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = status_set(err, ST_NOT_FOUND, "run not found");
out:
    if (rc != 0)
        id[0] = '\0';
    free(args_text);
    free(call_text);
    return rc;
}

static int
sq_action_status(struct store *base, const char *action,
                 enum store_action_status to, const json_t *output,
                 const char *error, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    const char *f[STORE_ACTION_STATES];
    const char *name = store_action_status_name(to);
    char *output_text = NULL;
    int rc;

    if ((unsigned)to >= STORE_ACTION_STATES)
        return status_set(err, ST_BAD_REQUEST, "unknown action state %d", to);
    store_action_from(to, f);
    if (dump(output, &output_text, err) != 0)
        return -1;
    if (tx_begin(s, err) != 0) {
        free(output_text);
        return -1;
    }
    rc = run(s, Q_ACTION_STATUS, err, "ssssIssssss", action, name, output_text,
             error, store_now_ms(), f[0], f[1], f[2], f[3], f[4], f[5]);
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = refused(s, Q_ACTION_STATE, "action", action, name, err);
    rc = tx_end(s, rc, err);
    free(output_text);
    return rc;
}

static int
sq_actions_of(struct store *base, const char *run_id, json_t **out,
              struct status_error *err)
{
    *out = actions_list(sq(base), run_id, true, err);
    return *out != NULL ? 0 : -1;
}

/* --- approvals ----------------------------------------------------------- */

/* now + ttl_ms without overflow; ttl <= 0 is already expired */
static int64_t
expiry(int64_t now, long ttl_ms)
{
    if (ttl_ms <= 0)
        return now;
    return (int64_t)ttl_ms > INT64_MAX - now ? INT64_MAX : now + ttl_ms;
}

static int
sq_approval_create(struct store *base, const struct store_approval_new *ap,
                   char id[STORE_ID_LEN], struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int64_t now = store_now_ms();
    sqlite3_stmt *st;
    int rc, ret = -1;

    id[0] = '\0';
    if (store_check_user(ap->user, err) != 0 || store_new_id(id, err) != 0)
        return -1;
    st = prep(s, Q_APPROVAL_NEW, err, "sssssssII", id, ap->user, ap->run,
              ap->action, ap->tool, ap->reason != NULL ? ap->reason : "",
              ap->preview != NULL ? ap->preview : "", now,
              expiry(now, ap->ttl_ms));
    if (st == NULL)
        goto out;
    /* stepped here, not by run(): a second approval of one action is a
     * conflict, told by the UNIQUE constraint's own code */
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE && sqlite3_changes(s->db) == 1)
        ret = 0;
    else if (rc == SQLITE_DONE)
        status_set(err, ST_NOT_FOUND, "action not found");
    else if (rc == SQLITE_CONSTRAINT_UNIQUE)
        status_set(err, ST_CONFLICT, "action %s already has an approval",
                   ap->action);
    else
        fail(s, rc, queries[Q_APPROVAL_NEW].name, err);
    done(st);
out:
    if (ret != 0)
        id[0] = '\0';
    return ret;
}

static json_t *
approval_row(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "id",
                     col_text(st, 0), "runId", col_text(st, 1), "actionId",
                     col_text(st, 2), "tool", col_text(st, 3), "reason",
                     col_text(st, 4), "preview", col_text(st, 5), "status",
                     col_text(st, 6), "createdAt", col_int(st, 7), "expiresAt",
                     col_int(st, 8));
}

static int
sq_approvals_list(struct store *base, const char *user, const char *status,
                  json_t **out, struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    *out = rows(s, Q_APPROVALS_LIST,
                prep(s, Q_APPROVALS_LIST, err, "sIsI", user, store_now_ms(),
                     status, (int64_t)BOUND_STORE_LIST),
                approval_row, err);
    return *out != NULL ? 0 : -1;
}

/*
 * After the deciding UPDATE: on success, which action and run; when it
 * changed nothing, why (no such approval of this user, already decided,
 * or expired). Same transaction, so the reason is the one that held.
 */
static int
decide_outcome(struct sqlite_store *s, const char *user, const char *id,
               bool decided, struct store_decided *out,
               struct status_error *err)
{
    sqlite3_stmt *st = prep(s, Q_APPROVAL_STATE, err, "ss", id, user);
    int r;

    if (st == NULL)
        return -1;
    r = step(s, Q_APPROVAL_STATE, st, err);
    const char *state = r == 1 ? col_text(st, 0) : NULL;
    if (r == 0)
        r = status_set(err, ST_NOT_FOUND, "approval not found");
    else if (r == 1 && state == NULL)
        r = nomem(err);
    else if (r == 1 && !decided && strcmp(state, "pending") != 0)
        r = status_set(err, ST_CONFLICT, "approval %s is already %s", id,
                       state);
    else if (r == 1 && !decided)
        r = status_set(err, ST_CONFLICT, "approval %s has expired", id);
    else if (r == 1 && out != NULL &&
             (col_copy(s, st, 1, out->action, sizeof(out->action), err) != 0 ||
              col_copy(s, st, 2, out->run, sizeof(out->run), err) != 0))
        r = -1;
    done(st);
    return r < 0 ? -1 : 0;
}

static int
sq_approval_decide(struct store *base, const char *user, const char *id,
                   const char *decision, const char *feedback,
                   struct store_decided *out, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int rc;

    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (decision == NULL || (strcmp(decision, "approved") != 0 &&
                             strcmp(decision, "rejected") != 0))
        return status_set(err, ST_BAD_REQUEST,
                          "a decision is approved or rejected");
    if (tx_begin(s, err) != 0)
        return -1;
    rc = run(s, Q_APPROVAL_DECIDE, err, "ssIss", id, user, store_now_ms(),
             decision, feedback);
    if (rc == 0)
        rc = decide_outcome(s, user, id, sqlite3_changes(s->db) == 1, out, err);
    rc = tx_end(s, rc, err);
    if (rc != 0 && out != NULL)
        memset(out, 0, sizeof(*out));
    return rc;
}

static int
sq_approvals_pending(struct store *base, const char *run_id, long *count,
                     struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    int r;

    *count = 0;
    st = prep(s, Q_APPROVALS_PENDING, err, "sI", run_id, store_now_ms());
    if (st == NULL)
        return -1;
    r = step(s, Q_APPROVALS_PENDING, st, err);
    if (r == 1)
        *count = (long)sqlite3_column_int64(st, 0);
    done(st);
    return r < 0 ? -1 : 0;
}

/* --- the audit trail ----------------------------------------------------- */

static int
sq_audit_add(struct store *base, const struct store_audit *row,
             struct status_error *err)
{
    if (row->event == NULL || row->event[0] == '\0')
        return status_set(err, ST_BAD_REQUEST, "an audit row needs an event");
    return run(sq(base), Q_AUDIT_NEW, err, "Isssssss", store_now_ms(),
               row->user, row->run, row->action, row->tool, row->event,
               row->args_hash, row->outcome);
}

static json_t *
audit_row(sqlite3_stmt *st)
{
    return json_pack("{s:I, s:I, s:s?, s:s?, s:s?, s:s?, s:s, s:s?, s:s?}",
                     "id", col_int(st, 0), "at", col_int(st, 1), "user",
                     col_text(st, 2), "run", col_text(st, 3), "action",
                     col_text(st, 4), "tool", col_text(st, 5), "event",
                     col_text(st, 6), "argsHash", col_text(st, 7), "outcome",
                     col_text(st, 8));
}

static int
sq_audit_of(struct store *base, const char *run_id, json_t **out,
            struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    *out = rows(s, Q_AUDIT_OF, prep(s, Q_AUDIT_OF, err, "s", run_id), audit_row,
                err);
    return *out != NULL ? 0 : -1;
}

/* --- memories ------------------------------------------------------------ */

static int
sq_memory_save(struct store *base, const char *user, const char *text,
               const char *tags, long *id, struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    *id = 0;
    if (store_check_user(user, err) != 0)
        return -1;
    if (text == NULL || text[0] == '\0')
        return status_set(err, ST_BAD_REQUEST, "a memory needs a text");
    if (run(s, Q_MEMORY_NEW, err, "sssI", user, text, tags != NULL ? tags : "",
            store_now_ms()) != 0)
        return -1;
    *id = (long)sqlite3_last_insert_rowid(s->db);
    return 0;
}

/*
 * The FTS5 query for words a person (or the model) typed: each word, cut
 * at ASCII white space, becomes a quoted string with its quotes doubled,
 * so nothing in it is FTS syntax ("*", "OR", "(", ":" and "^" are plain
 * text inside quotes), and the strings are joined by OR: a memory that
 * has any of the words is found, and bm25 ranks those with more of them,
 * and rarer ones, first. Returns the number of words (0: none), or -1.
 */
static int
fts_query(const char *q, struct sbuf *out)
{
    static const char space[] = " \t\n\r\f\v";
    int words = 0;
    bool ok = true;

    while (q != NULL && ok && words < BOUND_STORE_QUERY_WORDS) {
        q += strspn(q, space);
        size_t n = strcspn(q, space);
        if (n == 0)
            break;
        ok = (words == 0 || sbuf_adds(out, " OR ") == 0) &&
             sbuf_putc(out, '"') == 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = sbuf_putc(out, q[i]) == 0 &&
                 (q[i] != '"' || sbuf_putc(out, '"') == 0);
        ok = ok && sbuf_putc(out, '"') == 0;
        words++;
        q += n;
    }
    return ok ? words : -1;
}

static json_t *
memory_row(sqlite3_stmt *st)
{
    return json_pack("{s:I, s:s, s:s, s:I}", "id", col_int(st, 0), "text",
                     col_text(st, 1), "tags", col_text(st, 2), "createdAt",
                     col_int(st, 3));
}

static int
sq_memory_search(struct store *base, const char *user, const char *query,
                 long limit, json_t **out, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int64_t n = clamp(limit, BOUND_STORE_MEMORY_HITS);
    struct sbuf match;
    enum query q;
    int words;

    *out = NULL;
    sbuf_init(&match, JSONOUT_UNBOUNDED);
    if ((words = fts_query(query, &match)) < 0) {
        sbuf_release(&match);
        return nomem(err);
    }
    q = words > 0 ? Q_MEMORY_MATCH : Q_MEMORY_NEWEST;
    /* the match is bound, not copied: released after rows() is done */
    *out = rows(s, q,
                words > 0 ? prep(s, q, err, "ssI", match.buf, user, n)
                          : prep(s, q, err, "sI", user, n),
                memory_row, err);
    sbuf_release(&match);
    return *out != NULL ? 0 : -1;
}

/* --- budgets -------------------------------------------------------------- */

#define MINUTE_MS (60 * (int64_t)1000)
#define DAY_MS    (24 * 60 * MINUTE_MS)

/* Whole seconds from `now_ms` to the end of its window of `len_ms`
 * (at least 1: a Retry-After of 0 means "now"). */
static long
window_left_s(int64_t now_ms, int64_t len_ms)
{
    int64_t left = len_ms - now_ms % len_ms;

    return (long)((left + 999) / 1000);
}

/*
 * The budget's writes are counters, checked on every request: they run
 * with synchronous=NORMAL, which in WAL mode commits without an fsync
 * (what a crash of the machine can lose is the last few counts; a crash
 * of the process loses nothing). The connection's other writes keep FULL
 * (connect_db says why), so it is put back after each.
 */
static int
budget_sync(struct sqlite_store *s, bool normal, struct status_error *err)
{
    return run(s, normal ? Q_SYNC_NORMAL : Q_SYNC_FULL, err, "");
}

/* Counter `scope` as it counts at (minute, day): *req and *tok. */
static int
budget_row(struct sqlite_store *s, const char *scope, int64_t minute,
           int64_t day, long long *req, long long *tok,
           struct status_error *err)
{
    sqlite3_stmt *st = prep(s, Q_BUDGET_GET, err, "s", scope);
    int r;

    *req = *tok = 0;
    if (st == NULL)
        return -1;
    r = step(s, Q_BUDGET_GET, st, err);
    if (r == 1) {
        if (sqlite3_column_int64(st, 0) == minute)
            *req = sqlite3_column_int64(st, 1);
        if (sqlite3_column_int64(st, 2) == day)
            *tok = sqlite3_column_int64(st, 3);
    }
    done(st);
    /* another writer's negative count counts as none (reserve_in_tx
     * subtracts these from a ceiling) */
    *req = *req < 0 ? 0 : *req;
    *tok = *tok < 0 ? 0 : *tok;
    return r < 0 ? -1 : 0;
}

/* Check every counter, then add to every one: under the write lock, so
 * two requests cannot both take the last of a budget. */
static int
reserve_in_tx(struct sqlite_store *s, const struct store_budget *c, size_t n,
              int64_t requests, int64_t tokens, int64_t now_ms,
              struct store_budget_refusal *why, struct status_error *err)
{
    int64_t minute = now_ms / MINUTE_MS, day = now_ms / DAY_MS;
    bool refused = false;

    if (run(s, Q_BUDGET_PRUNE, err, "II", day, (int64_t)STORE_BUDGET_PRUNE) !=
        0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        long long req, tok;
        bool over_req, over_tok;

        if (budget_row(s, c[i].scope, minute, day, &req, &tok, err) != 0)
            return -1;
        /* compared as "more than what is left": a counter another
         * writer left near INT64_MAX must not wrap the sum */
        over_req = requests > 0 && c[i].requests_per_minute > 0 &&
                   requests > c[i].requests_per_minute - req;
        over_tok = c[i].tokens_per_day > 0 &&
                   tokens > c[i].tokens_per_day - tok;
        if (!over_req && !over_tok)
            continue;
        if (!refused) {
            why->counter = i;
            why->requests = over_req;
            why->tokens = over_tok;
        }
        refused = true;
        /* every refused window must roll over before a retry can pass */
        if (over_req && why->retry_after_s < window_left_s(now_ms, MINUTE_MS))
            why->retry_after_s = window_left_s(now_ms, MINUTE_MS);
        if (over_tok && why->retry_after_s < window_left_s(now_ms, DAY_MS))
            why->retry_after_s = window_left_s(now_ms, DAY_MS);
    }
    if (refused)
        return status_set_retry(err, ST_BUDGET_EXHAUSTED, why->retry_after_s,
                                "the budget of %s is spent",
                                c[why->counter].scope);
    for (size_t i = 0; i < n; i++)
        if (run(s, Q_BUDGET_ADD, err, "sIIII", c[i].scope, minute, requests,
                day, tokens) != 0)
            return -1;
    return 0;
}

/* What a reservation may ask: no negative counts, and no sum that could
 * overflow a counter (past any ceiling anyway). */
static int64_t
budget_amount(long long v)
{
    const long long max = 1000000000000000LL;

    return v < 0 ? 0 : v > max ? max : (int64_t)v;
}

static int
sq_budget_reserve(struct store *base, const struct store_budget *c, size_t n,
                  long long requests, long long tokens, int64_t now_ms,
                  struct store_budget_refusal *why, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    struct status_error ignored = {0};
    struct store_budget_refusal local;
    int rc;

    if (why == NULL)
        why = &local;
    memset(why, 0, sizeof(*why));
    if (n == 0)
        return 0;
    if (budget_sync(s, true, err) != 0)
        return -1;
    rc = tx_begin(s, err);
    if (rc == 0) {
        rc = reserve_in_tx(s, c, n, budget_amount(requests),
                           budget_amount(tokens), now_ms, why, err);
        rc = tx_end(s, rc, err);
    }
    (void)budget_sync(s, false, &ignored);
    return rc;
}

static int
sq_budget_settle(struct store *base, const struct store_budget *c, size_t n,
                 long long delta, int64_t day_ms, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    struct status_error ignored = {0};
    const long long max = 1000000000000000LL;
    int64_t d = delta > max ? max : delta < -max ? -max : (int64_t)delta;
    int rc;

    if (n == 0 || d == 0)
        return 0;
    if (budget_sync(s, true, err) != 0)
        return -1;
    rc = tx_begin(s, err);
    if (rc == 0) {
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = run(s, Q_BUDGET_SETTLE, err, "sII", c[i].scope, d,
                     day_ms / DAY_MS);
        rc = tx_end(s, rc, err);
    }
    (void)budget_sync(s, false, &ignored);
    return rc;
}

static int
sq_budget_get(struct store *base, const char *scope, int64_t now_ms,
              struct store_budget_use *out, struct status_error *err)
{
    return budget_row(sq(base), scope, now_ms / MINUTE_MS, now_ms / DAY_MS,
                      &out->requests, &out->tokens, err);
}

static json_t *
budget_top_row(sqlite3_stmt *st)
{
    return json_pack("{s:s, s:I, s:I}", "scope", col_text(st, 0), "requests",
                     col_int(st, 1), "tokens", col_int(st, 2));
}

static int
sq_budget_top(struct store *base, int64_t now_ms, long limit, json_t **out,
              struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    *out = rows(s, Q_BUDGET_TOP,
                prep(s, Q_BUDGET_TOP, err, "III", now_ms / DAY_MS,
                     now_ms / MINUTE_MS, clamp(limit, BOUND_STORE_LIST)),
                budget_top_row, err);
    return *out != NULL ? 0 : -1;
}

/* --- single-use tickets --------------------------------------------------- */

/* Checked by store_ticket_claim() (store.c). Keeps synchronous=FULL: a
 * claim lost with the machine would let its ticket be used again. */
static int
sq_ticket_claim(struct store *base, const char *id, long long expires_at_ms,
                long long now_ms, struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    int rc;
    bool claimed = false;

    if (tx_begin(s, err) != 0)
        return -1;
    rc = run(s, Q_TICKET_PRUNE, err, "II", (int64_t)now_ms,
             (int64_t)STORE_TICKET_PRUNE);
    if (rc == 0)
        rc = run(s, Q_TICKET_CLAIM, err, "sII", id, (int64_t)expires_at_ms,
                 (int64_t)now_ms);
    if (rc == 0)
        claimed = sqlite3_changes(s->db) == 1;
    if (rc == 0 && !claimed)
        rc = status_set(err, ST_CONFLICT, "this ticket was used already");
    return tx_end(s, rc, err);
}

/* --- the terminal client's sessions -------------------------------------- */

static int
sq_chat_save(struct store *base, const struct store_chat *c,
             struct status_error *err)
{
    struct sqlite_store *s = sq(base);
    char *usage_text = NULL;
    int rc;

    if (dump(c->usage, &usage_text, err) != 0)
        return -1;
    rc = run(s, Q_CHAT_SAVE, err, "sssssI", c->id, c->cwd, c->model,
             c->contents, usage_text, store_now_ms());
    free(usage_text);
    return rc;
}

/* One row of chat_load / chat_latest into `out` (malloc'd copies). */
static int
chat_row(struct sqlite_store *s, enum query q, sqlite3_stmt *st,
         struct store_chat *out, struct status_error *err)
{
    int r;

    if (st == NULL)
        return -1;
    r = step(s, q, st, err);
    if (r == 0)
        r = status_set(err, ST_NOT_FOUND, "no such session");
    if (r == 1) {
        out->id = strdup(col_text(st, 0));
        out->cwd = strdup(col_text(st, 1));
        out->model = strdup(col_text(st, 2));
        out->contents = strdup(col_text(st, 3));
        out->created = (long long)col_int(st, 5);
        out->updated = (long long)col_int(st, 6);
        r = col_json(s, st, 4, &out->usage, err) == 0 ? 1 : -1;
        if (r == 1 && (out->id == NULL || out->cwd == NULL ||
                       out->model == NULL || out->contents == NULL))
            r = nomem(err);
    }
    done(st);
    if (r < 0) {
        store_chat_release(out);
        return -1;
    }
    return 0;
}

static int
sq_chat_load(struct store *base, const char *id, struct store_chat *out,
             struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    return chat_row(s, Q_CHAT_LOAD, prep(s, Q_CHAT_LOAD, err, "s", id), out,
                    err);
}

static int
sq_chat_latest(struct store *base, const char *cwd, struct store_chat *out,
               struct status_error *err)
{
    struct sqlite_store *s = sq(base);

    return chat_row(s, Q_CHAT_LATEST, prep(s, Q_CHAT_LATEST, err, "s", cwd),
                    out, err);
}

/* --- the table ----------------------------------------------------------- */

static const struct store_ops sqlite_ops = {
    .close = sq_close,
    .migrate = sq_migrate,
    .schema_version = sq_schema_version,
    .user_get = sq_user_get,
    .user_set_trust = sq_user_set_trust,
    .user_add_rule = sq_user_add_rule,
    .thread_create = sq_thread_create,
    .thread_check = sq_thread_check,
    .threads_list = sq_threads_list,
    .thread_get = sq_thread_get,
    .message_add = sq_message_add,
    .run_create = sq_run_create,
    .run_status = sq_run_status,
    .run_save = sq_run_save,
    .run_get = sq_run_get,
    .run_resume = sq_run_resume,
    .action_create = sq_action_create,
    .action_status = sq_action_status,
    .actions_of = sq_actions_of,
    .approval_create = sq_approval_create,
    .approvals_list = sq_approvals_list,
    .approval_decide = sq_approval_decide,
    .approvals_pending = sq_approvals_pending,
    .audit_add = sq_audit_add,
    .audit_of = sq_audit_of,
    .memory_save = sq_memory_save,
    .memory_search = sq_memory_search,
    .budget_reserve = sq_budget_reserve,
    .budget_settle = sq_budget_settle,
    .budget_get = sq_budget_get,
    .budget_top = sq_budget_top,
    .ticket_claim = sq_ticket_claim,
    .chat_save = sq_chat_save,
    .chat_load = sq_chat_load,
    .chat_latest = sq_chat_latest,
};
