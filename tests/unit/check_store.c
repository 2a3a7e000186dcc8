/*
 * check_store.c - the store over SQLite: the schema and its migration,
 * users, threads, runs and actions through every transition, approvals
 * decided once (also by 20 connections at once), the append-only audit
 * trail and memory search. Each test has its own database file in a
 * fresh folder under /tmp, removed after it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "store/store.h"
#include "store/store_int.h"
#include "core/status.h"
#include "store/bounds.h"

#include <check.h>
#include <limits.h>
#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the fixture: a folder, a file name, a migrated store ---------------- */

static char dir[64];
static char path[128];
static char spec[160];

static void
setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/check_store.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/store.db", dir);
    snprintf(spec, sizeof(spec), "sqlite:%s", path);
}

static void
teardown(void)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char p[160];

    /* only ever our own mkdtemp() folder */
    if (strncmp(dir, "/tmp/check_store.", 17) != 0)
        return;
    for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
        snprintf(p, sizeof(p), "%s%s", path, tails[i]);
        unlink(p);
    }
    rmdir(dir);
}

static struct store *
open_store(void)
{
    struct status_error err = {0};
    struct store *s = store_open_migrated(spec, &err);

    ck_assert_msg(s != NULL, "open: %s", err.text);
    return s;
}

/* Run `sql` through a connection of its own (not the store's): what
 * another program, or a person with the sqlite3 tool, could do. Returns
 * SQLite's code; the message, if any, goes to msg[128]. */
static int
raw_exec(const char *sql, char *msg)
{
    sqlite3 *db = NULL;
    char *m = NULL;
    int rc = sqlite3_open(path, &db);

    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &m);
    if (msg != NULL)
        snprintf(msg, 128, "%s", m != NULL ? m : "");
    sqlite3_free(m);
    sqlite3_close(db);
    return rc;
}

/* One text value from `sql` (with one ?1 bound to `arg`), into out[64]. */
static void
raw_text(const char *sql, const char *arg, char *out)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;

    out[0] = '\0';
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (arg != NULL)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
        snprintf(out, 64, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A user's thread and a run on it. */
static void
make_run(struct store *s, const char *user, char thread[STORE_ID_LEN],
         char run[STORE_ID_LEN])
{
    struct status_error err = {0};

    ck_assert_int_eq(s->ops->thread_create(s, user, "t", thread, &err), 0);
    ck_assert_int_eq(s->ops->run_create(s, user, thread, "hi", run, &err), 0);
}

/* --- pure helpers -------------------------------------------------------- */

START_TEST(names_and_ids)
{
    struct status_error err = {0};
    char a[STORE_ID_LEN], b[STORE_ID_LEN];

    ck_assert_str_eq(store_run_status_name(STORE_RUN_AWAITING),
                     "awaiting_confirmation");
    ck_assert_str_eq(store_action_status_name(STORE_ACT_REJECTED), "rejected");
    ck_assert_str_eq(store_trust_name(STORE_DELEGATED), "delegated");
    ck_assert_int_eq(store_trust_parse("autonomous"), STORE_AUTONOMOUS);
    ck_assert_int_eq(store_trust_parse("root"), -1);
    ck_assert_int_eq(store_trust_parse(NULL), -1);
    ck_assert(store_run_can(STORE_RUN_QUEUED, STORE_RUN_PLANNING));
    ck_assert(!store_run_can(STORE_RUN_COMPLETED, STORE_RUN_PLANNING));
    ck_assert(!store_run_can(STORE_RUN_QUEUED, (enum store_run_status)99));
    ck_assert(store_action_can(STORE_ACT_AWAITING, STORE_ACT_REJECTED));
    ck_assert(!store_action_can(STORE_ACT_EXECUTING, STORE_ACT_REJECTED));

    ck_assert_int_eq(store_new_id(a, &err), 0);
    ck_assert_int_eq(store_new_id(b, &err), 0);
    ck_assert_uint_eq(strlen(a), STORE_ID_LEN - 1);
    ck_assert_uint_eq(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
                                "rstuvwxyz0123456789-_"),
                      STORE_ID_LEN - 1);
    ck_assert_str_ne(a, b);
    /* the last character carries 2 bits: one of 4 */
    ck_assert_ptr_nonnull(strchr("AQgw", a[21]));
}
END_TEST

START_TEST(predecessor_lists)
{
    const char *from[STORE_RUN_STATES];
    const char *afrom[STORE_ACTION_STATES];

    ck_assert_uint_eq(store_run_from(STORE_RUN_QUEUED, from), 0);
    ck_assert_ptr_null(from[0]);
    ck_assert_uint_eq(store_run_from(STORE_RUN_FAILED, from), 4);
    ck_assert_str_eq(from[0], "queued"); /* a run that cannot even start */
    ck_assert_str_eq(from[1], "planning");
    ck_assert_str_eq(from[2], "awaiting_confirmation");
    ck_assert_str_eq(from[3], "executing");
    ck_assert_ptr_null(from[4]);
    ck_assert_uint_eq(store_action_from(STORE_ACT_EXECUTING, afrom), 2);
    ck_assert_str_eq(afrom[0], "planned");
    ck_assert_str_eq(afrom[1], "awaiting_confirmation");
}
END_TEST

/* --- opening and the schema ---------------------------------------------- */

START_TEST(open_migrates_an_empty_file)
{
    static const char *const tables[] = {
        "users",     "threads", "messages", "runs",         "actions",
        "approvals", "audit",   "memories", "memories_fts", "budget",
        "tickets",   "chats",
    };
    struct status_error err = {0};
    struct store *s = open_store();
    struct stat sb;
    char got[64];
    int v = -1;

    ck_assert_int_eq(s->ops->schema_version(s, &v, &err), 0);
    ck_assert_int_eq(v, STORE_SCHEMA_VERSION);
    ck_assert_int_eq(v, 3);
    for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
        raw_text("SELECT name FROM sqlite_master WHERE name = ?1", tables[i],
                 got);
        ck_assert_str_eq(got, tables[i]);
    }
    raw_text("PRAGMA journal_mode", NULL, got);
    ck_assert_str_eq(got, "wal");
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
    /* the WAL takes the database's mode (the store's writes are there) */
    snprintf(got, sizeof(got), "%.50s-wal", path);
    ck_assert_int_eq(stat(got, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
    s->ops->close(s);
}
END_TEST

START_TEST(migrate_is_idempotent)
{
    struct status_error err = {0};
    struct store *s = open_store();
    int v = 0;

    ck_assert_int_eq(s->ops->migrate(s, &err), 0);
    ck_assert_int_eq(s->ops->migrate(s, &err), 0);
    s->ops->close(s);
    s = open_store();
    ck_assert_int_eq(s->ops->schema_version(s, &v, &err), 0);
    ck_assert_int_eq(v, 3);
    s->ops->close(s);
}
END_TEST

/* A store of schema 1 (the run API's alone) gains the budget, the
 * tickets and the terminal's sessions, and keeps its rows. */
START_TEST(schema_1_is_migrated_to_3)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], got[64];
    int v = 0;

    ck_assert_int_eq(s->ops->thread_create(s, "alice", "kept", t, &err), 0);
    s->ops->close(s);
    ck_assert_int_eq(raw_exec("DROP TABLE budget; DROP TABLE tickets;"
                              " DROP TABLE chats; PRAGMA user_version = 1",
                              NULL),
                     SQLITE_OK);
    s = open_store();
    ck_assert_int_eq(s->ops->schema_version(s, &v, &err), 0);
    ck_assert_int_eq(v, 3);
    raw_text("SELECT name FROM sqlite_master WHERE name = ?1", "chats", got);
    ck_assert_str_eq(got, "chats");
    raw_text("SELECT name FROM sqlite_master WHERE name = ?1", "budget", got);
    ck_assert_str_eq(got, "budget");
    raw_text("SELECT name FROM sqlite_master WHERE name = ?1", "tickets", got);
    ck_assert_str_eq(got, "tickets");
    raw_text("SELECT title FROM threads WHERE id = ?1", t, got);
    ck_assert_str_eq(got, "kept");
    s->ops->close(s);
}
END_TEST

START_TEST(newer_schema_is_refused)
{
    struct status_error err = {0};
    struct store *s;
    int v = 0;

    ck_assert_int_eq(raw_exec("PRAGMA user_version = 99", NULL), SQLITE_OK);
    ck_assert_ptr_null(store_open_migrated(spec, &err));
    ck_assert_int_eq(err.code, ST_SCHEMA_NEWER);
    ck_assert_ptr_nonnull(strstr(err.text, "schema 99, this one knows 3"));
    ck_assert_ptr_nonnull(strstr(err.text, path));
    /* open without migrating still says what it is */
    status_clear(&err);
    s = store_open(spec, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->ops->schema_version(s, &v, &err), 0);
    ck_assert_int_eq(v, 99);
    ck_assert_int_eq(s->ops->migrate(s, &err), -1);
    ck_assert_int_eq(err.code, ST_SCHEMA_NEWER);
    s->ops->close(s);
}
END_TEST

START_TEST(open_failures)
{
    struct status_error err = {0};
    char bad[192];
    FILE *f;

    snprintf(bad, sizeof(bad), "sqlite:%s", dir); /* a folder */
    ck_assert_ptr_null(store_open_migrated(bad, &err));
    ck_assert_int_eq(err.code, ST_STORE);
    status_clear(&err);
    ck_assert_ptr_null(store_open("postgres://x", &err));
    ck_assert_int_eq(err.code, ST_CONFIG);
    status_clear(&err);
    ck_assert_ptr_null(store_open("sqlite:", &err));
    ck_assert_int_eq(err.code, ST_CONFIG);
    status_clear(&err);
    ck_assert_ptr_null(store_open(NULL, &err));
    ck_assert_int_eq(err.code, ST_CONFIG);
    /* a file that is not a database */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is not a database, it is a long enough text file ....\n"
          "and then some more text, so that SQLite reads a header\n",
          f);
    fclose(f);
    status_clear(&err);
    ck_assert_ptr_null(store_open_migrated(spec, &err));
    ck_assert_int_eq(err.code, ST_STORE);
    ck_assert_str_eq(err.text, "the store failed; see the error log");
}
END_TEST

/* --- users --------------------------------------------------------------- */

START_TEST(users_trust_and_rules)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_user u;
    char longid[BOUND_STORE_USER_ID + 2];
    json_t *rule = json_pack("{s:s, s:s, s:s}", "tool", "gmail_send", "arg",
                             "to", "pattern", "*@example.com");

    ck_assert_int_eq(s->ops->user_get(s, "alice", &u, &err), 0);
    ck_assert_int_eq(u.trust, STORE_SUPERVISED);
    ck_assert(json_is_array(u.allow) && json_array_size(u.allow) == 0);
    json_decref(u.allow);

    ck_assert_int_eq(s->ops->user_set_trust(s, "alice", STORE_DELEGATED, &err),
                     0);
    ck_assert_int_eq(s->ops->user_add_rule(s, "alice", rule, &err), 0);
    ck_assert_int_eq(s->ops->user_add_rule(s, "alice", rule, &err), 0);
    ck_assert_int_eq(s->ops->user_get(s, "alice", &u, &err), 0);
    ck_assert_int_eq(u.trust, STORE_DELEGATED);
    ck_assert_uint_eq(json_array_size(u.allow), 2);
    ck_assert(json_equal(json_array_get(u.allow, 1), rule));
    json_decref(u.allow);

    /* a rule for a user never seen creates the user, supervised */
    ck_assert_int_eq(s->ops->user_add_rule(s, "bob", rule, &err), 0);
    ck_assert_int_eq(s->ops->user_get(s, "bob", &u, &err), 0);
    ck_assert_int_eq(u.trust, STORE_SUPERVISED);
    ck_assert_uint_eq(json_array_size(u.allow), 1);
    json_decref(u.allow);

    /* values the store does not take */
    json_t *not_object = json_array();
    ck_assert_int_eq(s->ops->user_add_rule(s, "alice", not_object, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    json_decref(not_object);
    status_clear(&err);
    memset(longid, 'x', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    ck_assert_int_eq(s->ops->user_set_trust(s, longid, STORE_AUTONOMOUS, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(s->ops->user_set_trust(s, "", STORE_AUTONOMOUS, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    longid[BOUND_STORE_USER_ID] = '\0'; /* the longest that is taken */
    ck_assert_int_eq(s->ops->user_set_trust(s, longid, STORE_AUTONOMOUS, &err),
                     0);
    json_decref(rule);
    s->ops->close(s);
}
END_TEST

START_TEST(user_rules_are_bounded)
{
    struct status_error err = {0};
    struct store *s = open_store();
    json_t *rule = json_pack("{s:s}", "tool", "gmail_send");

    for (int i = 0; i < BOUND_STORE_ALLOW_RULES; i++)
        ck_assert_int_eq(s->ops->user_add_rule(s, "alice", rule, &err), 0);
    ck_assert_int_eq(s->ops->user_add_rule(s, "alice", rule, &err), -1);
    ck_assert_int_eq(err.code, ST_TOO_LARGE);
    json_decref(rule);
    s->ops->close(s);
}
END_TEST

/* --- threads and messages ------------------------------------------------ */

START_TEST(threads_are_their_users)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t1[STORE_ID_LEN], t2[STORE_ID_LEN];
    json_t *list = NULL, *thread = NULL, *msgs = NULL;

    ck_assert_int_eq(s->ops->thread_create(s, "alice", "first", t1, &err), 0);
    ck_assert_uint_eq(strlen(t1), 22);
    ck_assert_int_eq(s->ops->thread_create(s, "alice", NULL, t2, &err), 0);
    ck_assert_int_eq(s->ops->thread_check(s, "alice", t1, &err), 0);
    ck_assert_int_eq(s->ops->thread_check(s, "bob", t1, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_str_eq(err.text, "thread not found");
    status_clear(&err);

    usleep(2000); /* the first thread's update comes later */
    ck_assert_int_eq(s->ops->message_add(s, t1, NULL, "user", "hello", &err),
                     0);
    ck_assert_int_eq(
        s->ops->message_add(s, t1, "run1", "assistant", "hi there", &err), 0);
    ck_assert_int_eq(s->ops->message_add(s, t1, NULL, "system", "x", &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(s->ops->message_add(s, "nope", NULL, "user", "x", &err),
                     -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    status_clear(&err);

    ck_assert_int_eq(s->ops->threads_list(s, "alice", 10, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 2);
    json_t *first = json_array_get(list, 0);
    ck_assert_str_eq(json_string_value(json_object_get(first, "id")), t1);
    ck_assert_str_eq(json_string_value(json_object_get(first, "title")),
                     "first");
    json_t *last = json_object_get(first, "lastMessage");
    ck_assert_str_eq(json_string_value(json_object_get(last, "role")),
                     "assistant");
    ck_assert_str_eq(json_string_value(json_object_get(last, "text")),
                     "hi there");
    ck_assert(
        json_is_null(json_object_get(json_array_get(list, 1), "lastMessage")));
    ck_assert(json_is_integer(json_object_get(first, "createdAt")));
    json_decref(list);
    ck_assert_int_eq(s->ops->threads_list(s, "alice", 1, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 1);
    json_decref(list);
    ck_assert_int_eq(s->ops->threads_list(s, "bob", 10, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 0);
    json_decref(list);

    ck_assert_int_eq(s->ops->thread_get(s, "alice", t1, &thread, &msgs, &err),
                     0);
    ck_assert_str_eq(json_string_value(json_object_get(thread, "title")),
                     "first");
    ck_assert_uint_eq(json_array_size(msgs), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(msgs, 0), "text")),
        "hello");
    ck_assert(json_is_null(json_object_get(json_array_get(msgs, 0), "runId")));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(msgs, 1), "runId")),
        "run1");
    json_decref(thread);
    json_decref(msgs);
    ck_assert_int_eq(s->ops->thread_get(s, "bob", t1, &thread, &msgs, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_ptr_null(thread);
    ck_assert_ptr_null(msgs);
    s->ops->close(s);
}
END_TEST

START_TEST(thread_preview_is_cut_at_a_character)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], text[2 * 300 + 1];
    json_t *list = NULL;

    for (int i = 0; i < 300; i++)
        memcpy(text + 2 * i, "\xc3\xa9", 2); /* é */
    text[2 * 300] = '\0';
    ck_assert_int_eq(s->ops->thread_create(s, "alice", "t", t, &err), 0);
    ck_assert_int_eq(s->ops->message_add(s, t, NULL, "user", text, &err), 0);
    ck_assert_int_eq(s->ops->threads_list(s, "alice", 0, &list, &err), 0);
    const char *p = json_string_value(json_object_get(
        json_object_get(json_array_get(list, 0), "lastMessage"), "text"));
    ck_assert_uint_eq(strlen(p), 2 * BOUND_STORE_PREVIEW_CHARS);
    ck_assert_int_eq(strncmp(p, text, strlen(p)), 0);
    json_decref(list);
    s->ops->close(s);
}
END_TEST

/* --- runs and actions ---------------------------------------------------- */

START_TEST(run_lifecycle)
{
    static const enum store_run_status path_of_run[] = {
        STORE_RUN_PLANNING,  STORE_RUN_EXECUTING, STORE_RUN_AWAITING,
        STORE_RUN_EXECUTING, STORE_RUN_PLANNING,  STORE_RUN_COMPLETED,
    };
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], other[STORE_ID_LEN], got[64];

    make_run(s, "alice", t, r);
    raw_text("SELECT status FROM runs WHERE id = ?1", r, got);
    ck_assert_str_eq(got, "queued");
    for (size_t i = 0; i < ARRAY_SIZE(path_of_run); i++)
        ck_assert_int_eq(s->ops->run_status(s, r, path_of_run[i], &err), 0);
    raw_text("SELECT status FROM runs WHERE id = ?1", r, got);
    ck_assert_str_eq(got, "completed");

    ck_assert_int_eq(s->ops->run_status(s, r, STORE_RUN_PLANNING, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    char want[128];
    snprintf(want, sizeof(want),
             "run %s is completed; it cannot become planning", r);
    ck_assert_str_eq(err.text, want);
    status_clear(&err);
    ck_assert_int_eq(s->ops->run_status(s, "nope", STORE_RUN_PLANNING, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    status_clear(&err);

    /* a run on another user's thread is refused; one on no thread is not */
    ck_assert_int_eq(s->ops->run_create(s, "bob", t, "x", other, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_str_eq(other, "");
    status_clear(&err);
    ck_assert_int_eq(s->ops->run_create(s, "bob", NULL, "x", other, &err), 0);
    s->ops->close(s);
}
END_TEST

/* Put a row in a state behind the store's back (the tables must agree
 * whatever state a row is found in). */
static void
force_state(const char *sql, const char *id, const char *state)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;

    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    ck_assert_int_eq(sqlite3_changes(db), 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

START_TEST(run_transitions_match_the_table)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], got[64];

    make_run(s, "alice", t, r);
    for (int from = 0; from < STORE_RUN_STATES; from++)
        for (int to = 0; to < STORE_RUN_STATES; to++) {
            const char *fname = store_run_status_name(from);
            bool can = store_run_can(from, to);
            force_state("UPDATE runs SET status = ?1 WHERE id = ?2", r, fname);
            status_clear(&err);
            int rc = s->ops->run_status(s, r, to, &err);
            raw_text("SELECT status FROM runs WHERE id = ?1", r, got);
            ck_assert_msg(rc == (can ? 0 : -1), "%s -> %s: %d", fname,
                          store_run_status_name(to), rc);
            ck_assert_str_eq(got, can ? store_run_status_name(to) : fname);
            if (!can)
                ck_assert_int_eq(err.code, ST_CONFLICT);
        }
    s->ops->close(s);
}
END_TEST

START_TEST(action_transitions_match_the_table)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], a[STORE_ID_LEN], got[64];

    make_run(s, "alice", t, r);
    ck_assert_int_eq(s->ops->action_create(s,
                                           &(struct store_action_new){
                                               r, "save_memory", NULL, NULL, 0,
                                               0, STORE_ACT_PLANNED},
                                           a, &err),
                     0);
    for (int from = 0; from < STORE_ACTION_STATES; from++)
        for (int to = 0; to < STORE_ACTION_STATES; to++) {
            const char *fname = store_action_status_name(from);
            bool can = store_action_can(from, to);
            force_state("UPDATE actions SET status = ?1 WHERE id = ?2", a,
                        fname);
            status_clear(&err);
            int rc = s->ops->action_status(s, a, to, NULL, NULL, &err);
            raw_text("SELECT status FROM actions WHERE id = ?1", a, got);
            ck_assert_msg(rc == (can ? 0 : -1), "%s -> %s: %d", fname,
                          store_action_status_name(to), rc);
            ck_assert_str_eq(got, can ? store_action_status_name(to) : fname);
            if (!can)
                ck_assert_int_eq(err.code, ST_CONFLICT);
        }
    status_clear(&err);
    ck_assert_int_eq(
        s->ops->action_status(s, "nope", STORE_ACT_FAILED, NULL, NULL, &err),
        -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_str_eq(err.text, "action not found");
    s->ops->close(s);
}
END_TEST

START_TEST(run_save_get_resume)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], user[BOUND_STORE_USER_ID + 1],
        thread[STORE_ID_LEN];
    json_t *usage = json_pack("{s:i}", "totalTokenCount", 42), *out = NULL;
    char *contents = NULL;

    make_run(s, "alice", t, r);
    ck_assert_int_eq(s->ops->run_save(s, r, "{\"ok\":true}",
                                      "[{\"role\":\"user\"}]", usage, &err),
                     0);
    /* NULL leaves a field as it was */
    ck_assert_int_eq(s->ops->run_save(s, r, NULL, NULL, NULL, &err), 0);
    ck_assert_int_eq(s->ops->run_get(s, "alice", r, &out, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(out, "id")), r);
    ck_assert_str_eq(json_string_value(json_object_get(out, "threadId")), t);
    ck_assert_str_eq(json_string_value(json_object_get(out, "status")),
                     "queued");
    ck_assert_str_eq(json_string_value(json_object_get(out, "prompt")), "hi");
    ck_assert(
        json_is_true(json_object_get(json_object_get(out, "answer"), "ok")));
    ck_assert_uint_eq(json_array_size(json_object_get(out, "actions")), 0);
    json_decref(out);

    ck_assert_int_eq(s->ops->run_get(s, "bob", r, &out, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_ptr_null(out);
    status_clear(&err);
    ck_assert_int_eq(s->ops->run_save(s, "nope", NULL, NULL, NULL, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    status_clear(&err);

    ck_assert_int_eq(s->ops->run_resume(s, r, &contents, user, thread, &err),
                     0);
    ck_assert_str_eq(contents, "[{\"role\":\"user\"}]");
    ck_assert_str_eq(user, "alice");
    ck_assert_str_eq(thread, t);
    free(contents);
    ck_assert_int_eq(
        s->ops->run_resume(s, "nope", &contents, user, thread, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_ptr_null(contents);
    json_decref(usage);
    s->ops->close(s);
}
END_TEST

START_TEST(actions_in_creation_order)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], a[3][STORE_ID_LEN];
    json_t *args = json_pack("{s:s}", "to", "a@example.com");
    json_t *call = json_pack("{s:s}", "name", "gmail_send");
    json_t *output = json_pack("{s:b}", "sent", 1), *list = NULL, *run = NULL;

    make_run(s, "alice", t, r);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(
            s->ops->action_create(
                s,
                &(struct store_action_new){r, i == 1 ? "b" : "a", args, call, 1,
                                           i, STORE_ACT_PLANNED},
                a[i], &err),
            0);
    ck_assert_int_eq(
        s->ops->action_status(s, a[0], STORE_ACT_EXECUTING, NULL, NULL, &err),
        0);
    ck_assert_int_eq(
        s->ops->action_status(s, a[0], STORE_ACT_COMPLETED, output, NULL, &err),
        0);
    ck_assert_int_eq(s->ops->action_status(s, a[1], STORE_ACT_FAILED, NULL,
                                           "no credentials", &err),
                     0);
    ck_assert_int_eq(s->ops->actions_of(s, r, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 3);
    for (int i = 0; i < 3; i++) {
        json_t *x = json_array_get(list, i);
        ck_assert_str_eq(json_string_value(json_object_get(x, "id")), a[i]);
        ck_assert_int_eq(json_integer_value(json_object_get(x, "part")), i);
        ck_assert(json_equal(json_object_get(x, "args"), args));
        ck_assert(json_equal(json_object_get(x, "call"), call));
    }
    ck_assert(
        json_equal(json_object_get(json_array_get(list, 0), "output"), output));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 1), "error")),
        "no credentials");
    ck_assert_ptr_null(json_object_get(json_array_get(list, 2), "output"));
    json_decref(list);

    ck_assert_int_eq(s->ops->run_get(s, "alice", r, &run, &err), 0);
    list = json_object_get(run, "actions");
    ck_assert_uint_eq(json_array_size(list), 3);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 0), "status")),
        "completed");
    ck_assert_ptr_null(json_object_get(json_array_get(list, 0), "call"));
    json_decref(run);

    ck_assert_int_eq(s->ops->action_create(
                         s,
                         &(struct store_action_new){"nope", "a", args, NULL, 0,
                                                    0, STORE_ACT_PLANNED},
                         a[0], &err),
                     -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_str_eq(a[0], "");
    json_decref(args);
    json_decref(call);
    json_decref(output);
    s->ops->close(s);
}
END_TEST

/* --- approvals ----------------------------------------------------------- */

/* A run of alice's with one action awaiting an approval of `ttl_ms`. */
static void
make_approval(struct store *s, long ttl_ms, char run[STORE_ID_LEN],
              char action[STORE_ID_LEN], char id[STORE_ID_LEN])
{
    struct status_error err = {0};
    char t[STORE_ID_LEN];

    make_run(s, "alice", t, run);
    ck_assert_int_eq(s->ops->action_create(s,
                                           &(struct store_action_new){
                                               run, "gmail_send", NULL, NULL, 0,
                                               0, STORE_ACT_AWAITING},
                                           action, &err),
                     0);
    ck_assert_int_eq(
        s->ops->approval_create(s,
                                &(struct store_approval_new){
                                    "alice", run, action, "gmail_send",
                                    "sends mail", "To: a@example.com", ttl_ms},
                                id, &err),
        0);
}

START_TEST(approvals_are_decided_once)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char r[STORE_ID_LEN], a[STORE_ID_LEN], id[STORE_ID_LEN], id2[STORE_ID_LEN];
    struct store_decided d;
    json_t *list = NULL;
    long n = -1;

    make_approval(s, 60000, r, a, id);
    ck_assert_int_eq(s->ops->approvals_pending(s, r, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(s->ops->approvals_list(s, "alice", "pending", &list, &err),
                     0);
    ck_assert_uint_eq(json_array_size(list), 1);
    json_t *x = json_array_get(list, 0);
    ck_assert_str_eq(json_string_value(json_object_get(x, "id")), id);
    ck_assert_str_eq(json_string_value(json_object_get(x, "actionId")), a);
    ck_assert_str_eq(json_string_value(json_object_get(x, "preview")),
                     "To: a@example.com");
    json_decref(list);
    ck_assert_int_eq(s->ops->approvals_list(s, "bob", NULL, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 0);
    json_decref(list);

    /* another user's approval does not exist for them */
    ck_assert_int_eq(
        s->ops->approval_decide(s, "bob", id, "approved", NULL, &d, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    status_clear(&err);
    ck_assert_int_eq(
        s->ops->approval_decide(s, "alice", id, "maybe", NULL, &d, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);

    ck_assert_int_eq(
        s->ops->approval_decide(s, "alice", id, "approved", "ok", &d, &err), 0);
    ck_assert_str_eq(d.action, a);
    ck_assert_str_eq(d.run, r);
    ck_assert_int_eq(
        s->ops->approval_decide(s, "alice", id, "rejected", NULL, &d, &err),
        -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    ck_assert_ptr_nonnull(strstr(err.text, "already approved"));
    ck_assert_str_eq(d.action, "");
    status_clear(&err);
    ck_assert_int_eq(s->ops->approvals_pending(s, r, &n, &err), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(
        s->ops->approvals_list(s, "alice", "approved", &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 1);
    json_decref(list);

    /* one approval per action; none for another user's action */
    ck_assert_int_eq(s->ops->approval_create(
                         s,
                         &(struct store_approval_new){
                             "alice", r, a, "gmail_send", NULL, NULL, 1000},
                         id2, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    status_clear(&err);
    ck_assert_int_eq(s->ops->approval_create(
                         s,
                         &(struct store_approval_new){"bob", r, a, "gmail_send",
                                                      NULL, NULL, 1000},
                         id2, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_str_eq(id2, "");
    s->ops->close(s);
}
END_TEST

START_TEST(expired_approvals_cannot_be_decided)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char r[STORE_ID_LEN], a[STORE_ID_LEN], id[STORE_ID_LEN];
    char r2[STORE_ID_LEN], a2[STORE_ID_LEN], id2[STORE_ID_LEN];
    struct store_decided d;
    json_t *list = NULL;
    long n = -1;

    make_approval(s, 0, r, a, id);
    make_approval(s, -5000, r2, a2, id2);
    ck_assert_int_eq(
        s->ops->approval_decide(s, "alice", id, "approved", NULL, &d, &err),
        -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    ck_assert_ptr_nonnull(strstr(err.text, "expired"));
    status_clear(&err);
    ck_assert_int_eq(
        s->ops->approval_decide(s, "alice", id2, "rejected", NULL, NULL, &err),
        -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    status_clear(&err);
    ck_assert_int_eq(s->ops->approvals_pending(s, r, &n, &err), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(s->ops->approvals_list(s, "alice", "pending", &list, &err),
                     0);
    ck_assert_uint_eq(json_array_size(list), 0);
    json_decref(list);
    ck_assert_int_eq(s->ops->approvals_list(s, "alice", NULL, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 0), "status")),
        "expired");
    json_decref(list);
    s->ops->close(s);
}
END_TEST

#define DECIDERS 20

struct decider {
    const char *approval;
    pthread_barrier_t *start;
    int rc;
    enum status code;
    char text[STATUS_TEXT_MAX];
};

/* One connection of its own, deciding when all are ready. */
static void *
decide_thread(void *arg)
{
    struct decider *d = arg;
    struct status_error err = {0};
    struct store_decided out;
    struct store *s = store_open_migrated(spec, &err);

    pthread_barrier_wait(d->start);
    d->rc = s == NULL ? -2
                      : s->ops->approval_decide(s, "alice", d->approval,
                                                "approved", NULL, &out, &err);
    d->code = err.code;
    snprintf(d->text, sizeof(d->text), "%s", err.text);
    if (s != NULL)
        s->ops->close(s);
    return NULL;
}

START_TEST(concurrent_deciders_one_wins)
{
    struct store *s = open_store();
    char r[STORE_ID_LEN], a[STORE_ID_LEN], id[STORE_ID_LEN];
    struct decider d[DECIDERS];
    pthread_t th[DECIDERS];
    pthread_barrier_t start;
    int won = 0, lost = 0;

    make_approval(s, 60000, r, a, id);
    s->ops->close(s);
    pthread_barrier_init(&start, NULL, DECIDERS);
    for (int i = 0; i < DECIDERS; i++) {
        d[i] = (struct decider){.approval = id, .start = &start};
        ck_assert_int_eq(pthread_create(&th[i], NULL, decide_thread, &d[i]), 0);
    }
    for (int i = 0; i < DECIDERS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < DECIDERS; i++) {
        if (d[i].rc == 0)
            won++;
        else if (d[i].rc == -1 && d[i].code == ST_CONFLICT)
            lost++;
        else
            ck_abort_msg("decider %d: %d %s", i, d[i].rc, d[i].text);
    }
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(lost, DECIDERS - 1);
}
END_TEST

START_TEST(busy_store_says_so)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN];
    json_t *list = NULL;
    sqlite3 *other = NULL;

    ck_assert_int_eq(s->ops->thread_create(s, "alice", "t", t, &err), 0);
    ck_assert_int_eq(sqlite3_open(path, &other), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                     SQLITE_OK);
    /* readers do not wait for a writer (WAL) */
    ck_assert_int_eq(s->ops->threads_list(s, "alice", 10, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 1);
    json_decref(list);
    /* a writer waits STORE_BUSY_MS, then gives up */
    ck_assert_int_eq(s->ops->thread_create(s, "alice", "u", t, &err), -1);
    ck_assert_int_eq(err.code, ST_STORE);
    ck_assert_str_eq(err.text, "the store is busy");
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    status_clear(&err);
    ck_assert_int_eq(s->ops->thread_create(s, "alice", "u", t, &err), 0);
    s->ops->close(s);
}
END_TEST


/* --- budgets ---------------------------------------------------------------- */

/* 2024-05-01 12:00:30 UTC: 30 s into a minute, 12 h 30 s into a day */
#define T0 ((int64_t)1714564830000)
#define MIN_MS ((int64_t)60000)
#define DAY_MS ((int64_t)86400000)

static struct store_budget_use
use_of(struct store *s, const char *scope, int64_t now)
{
    struct status_error err = {0};
    struct store_budget_use u = {-1, -1};

    ck_assert_int_eq(s->ops->budget_get(s, scope, now, &u, &err), 0);
    return u;
}

START_TEST(budget_reserve_checks_every_counter)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_budget c[] = {{"site", 0, 1000},
                               {"ip:10.0.0.1", 2, 0},
                               {"user:alice", 0, 0}};
    struct store_budget_refusal why;
    struct store_budget_use u;

    /* nothing spent yet: zeros, for a counter never written */
    u = use_of(s, "site", T0);
    ck_assert_int_eq(u.requests, 0);
    ck_assert_int_eq(u.tokens, 0);
    /* two requests of this address pass, and are counted everywhere */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 1, 100, T0, &why, &err),
                     0);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 1, 100, T0 + 1000, &why,
                                            &err),
                     0);
    u = use_of(s, "ip:10.0.0.1", T0);
    ck_assert_int_eq(u.requests, 2);
    ck_assert_int_eq(u.tokens, 200);
    u = use_of(s, "user:alice", T0);
    ck_assert_int_eq(u.requests, 2);
    u = use_of(s, "site", T0);
    ck_assert_int_eq(u.tokens, 200);
    /* the third in the same minute is refused: 30 s left of the minute,
     * and nothing changed anywhere (one transaction) */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 1, 100, T0 + 2000, &why,
                                            &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    ck_assert_int_eq(err.retry_after_s, 28);
    ck_assert_uint_eq(why.counter, 1);
    ck_assert(why.requests);
    ck_assert(!why.tokens);
    ck_assert_int_eq(why.retry_after_s, 28);
    u = use_of(s, "site", T0);
    ck_assert_int_eq(u.requests, 2);
    ck_assert_int_eq(u.tokens, 200);
    /* an extension (no request) is not refused for the minute... */
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 0, 700, T0 + 2000, &why,
                                            &err),
                     0);
    u = use_of(s, "site", T0);
    ck_assert_int_eq(u.tokens, 900);
    /* ... but for the day: 900 + 101 > 1000, until midnight (11:59:28) */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 0, 101, T0 + 2000, &why,
                                            &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    ck_assert_uint_eq(why.counter, 0);
    ck_assert(why.tokens);
    ck_assert_int_eq(why.retry_after_s, 12 * 3600 - 32);
    ck_assert_int_eq(err.retry_after_s, 12 * 3600 - 32);
    /* the request and the tokens both over: the later window says when */
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 3, 1, 500, T0 + 2000, &why,
                                            &err),
                     -1);
    ck_assert_uint_eq(why.counter, 0);
    ck_assert_int_eq(why.retry_after_s, 12 * 3600 - 32);
    /* no counters: nothing to check, nothing written */
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 0, 1, 1, T0, &why, &err), 0);
    s->ops->close(s);
}
END_TEST

START_TEST(budget_settle_replaces_the_reservation)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_budget c[] = {{"site", 0, 10000}, {"ip:::1", 5, 5000}};
    struct store_budget_use u;

    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 4000, T0, NULL, &err),
                     0);
    /* the real use was 1234: the reservation gives way to it */
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, 1234 - 4000, T0, &err), 0);
    u = use_of(s, "ip:::1", T0);
    ck_assert_int_eq(u.tokens, 1234);
    ck_assert_int_eq(u.requests, 1);
    u = use_of(s, "site", T0);
    ck_assert_int_eq(u.tokens, 1234);
    /* more than reserved (the estimate was low): added */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 100, T0, NULL, &err),
                     0);
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, 400 - 100, T0, &err), 0);
    ck_assert_int_eq(use_of(s, "site", T0).tokens, 1634);
    /* a failed request used nothing: all of it given back, never below 0 */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 3000, T0, NULL, &err),
                     0);
    ck_assert_int_eq(use_of(s, "site", T0).tokens, 4634);
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, -3000, T0, &err), 0);
    ck_assert_int_eq(use_of(s, "site", T0).tokens, 1634);
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, -999999, T0, &err), 0);
    ck_assert_int_eq(use_of(s, "site", T0).tokens, 0);
    /* requests are never given back: they happened */
    ck_assert_int_eq(use_of(s, "ip:::1", T0).requests, 3);
    /* a settle of yesterday's reservation leaves today's count alone */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 50, T0 + DAY_MS, NULL,
                                            &err),
                     0);
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, 7777, T0, &err), 0);
    ck_assert_int_eq(use_of(s, "site", T0 + DAY_MS).tokens, 50);
    s->ops->close(s);
}
END_TEST

/* Counters near overflow: a reservation or a settle of
 * LLONG_MAX tokens is bounded, a counter already at INT64_MAX (another
 * program's write) refuses, and nothing wraps below 0. */
START_TEST(budget_counters_near_overflow)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_budget c[] = {{"site", 0, 1000000000000LL},
                               {"ip:::2", 1000000, 0}};
    struct store_budget_refusal why;
    char sql[256];

    /* huge reservations are refused by the counter that has a ceiling */
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, LLONG_MAX, T0, &why,
                                            &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    ck_assert(why.tokens);
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 10, T0, &why, &err),
                     0);
    /* settles of any size: bounded, the counter stays a count */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(s->ops->budget_settle(s, c, 2, LLONG_MAX, T0, &err),
                         0);
    ck_assert_int_gt(use_of(s, "site", T0).tokens, 1000000000000LL);
    ck_assert_int_gt(use_of(s, "ip:::2", T0).tokens, 0);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 1, T0, &why, &err),
                     -1);
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_settle(s, c, 2, LLONG_MIN, T0, &err), 0);
    ck_assert_int_ge(use_of(s, "site", T0).tokens, 0);
    /* a counter at INT64_MAX: its next reservation is refused, never let
     * through by a wrapped sum */
    snprintf(sql, sizeof(sql),
             "UPDATE budget SET tokens = 9223372036854775807 WHERE day = %lld",
             (long long)(T0 / DAY_MS));
    ck_assert_int_eq(raw_exec(sql, NULL), SQLITE_OK);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 2, 1, 1000000000000000LL,
                                            T0, &why, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    status_clear(&err);
    /* the counter without a token ceiling adds on, saturating in SQLite */
    ck_assert_int_eq(s->ops->budget_settle(s, c + 1, 1, LLONG_MAX, T0, &err),
                     0);
    ck_assert_int_gt(use_of(s, "ip:::2", T0).tokens, 0);
    s->ops->close(s);
}
END_TEST

START_TEST(budget_windows_roll_over)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_budget c[] = {{"ip:10.0.0.2", 1, 100}};
    json_t *top = NULL;
    char got[64];

    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 100, T0, NULL, &err),
                     0);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 0, T0 + 29999, NULL,
                                            &err),
                     -1);
    ck_assert_int_eq(err.retry_after_s, 1);
    /* the next minute: a request may come, but today's tokens are spent */
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 0, T0 + 30000, NULL,
                                            &err),
                     0);
    ck_assert_int_eq(use_of(s, c[0].scope, T0 + 30000).requests, 1);
    ck_assert_int_eq(use_of(s, c[0].scope, T0 + MIN_MS + 30000).requests, 0);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 1, T0 + 2 * MIN_MS,
                                            NULL, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BUDGET_EXHAUSTED);
    /* the next UTC day: both windows are new */
    status_clear(&err);
    ck_assert_int_eq(use_of(s, c[0].scope, T0 + DAY_MS).tokens, 0);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 100, T0 + DAY_MS,
                                            NULL, &err),
                     0);
    ck_assert_int_eq(use_of(s, c[0].scope, T0 + DAY_MS).tokens, 100);
    /* the counters of earlier days go, a few per reservation */
    {
        struct store_budget old[] = {{"ip:10.9.0.1", 0, 0},
                                     {"ip:10.9.0.2", 0, 0}};
        ck_assert_int_eq(s->ops->budget_reserve(s, old, 2, 1, 5, T0, NULL,
                                                &err),
                         0);
        raw_text("SELECT count(*) FROM budget", NULL, got);
        ck_assert_str_eq(got, "3");
        ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 0, 0, T0 + DAY_MS,
                                                NULL, &err),
                         0);
        raw_text("SELECT count(*) FROM budget", NULL, got);
        ck_assert_str_eq(got, "1");
    }
    /* the top of today */
    ck_assert_int_eq(s->ops->budget_top(s, T0 + DAY_MS, 10, &top, &err), 0);
    ck_assert_uint_eq(json_array_size(top), 1);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(top, 0), "scope")),
                     "ip:10.0.0.2");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_array_get(top, 0), "tokens")),
                     100);
    json_decref(top);
    s->ops->close(s);
}
END_TEST

/* Many connections reserving at once never take more than the ceiling. */
struct reserver {
    int granted;
};

static void *
reserve_some(void *arg)
{
    struct reserver *r = arg;
    struct status_error err = {0};
    struct store *s = store_open(spec, &err);
    struct store_budget c[] = {{"site", 25, 0}};

    for (int i = 0; s != NULL && i < 10; i++) {
        status_clear(&err);
        if (s->ops->budget_reserve(s, c, 1, 1, 0, T0, NULL, &err) == 0)
            r->granted++;
        else if (err.code != ST_BUDGET_EXHAUSTED)
            r->granted = -1000;
    }
    if (s != NULL)
        s->ops->close(s);
    return NULL;
}

START_TEST(budget_reservations_race_to_the_ceiling)
{
    struct store *s = open_store(); /* migrated before the threads start */
    pthread_t t[8];
    struct reserver r[8] = {{0}};
    int total = 0;

    /* 8 connections, 80 attempts at once, a ceiling of 25 a minute: the
     * check and the add are one transaction, so exactly 25 pass */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, reserve_some, &r[i]), 0);
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        total += r[i].granted;
    }
    ck_assert_int_eq(total, 25);
    ck_assert_int_eq(use_of(s, "site", T0).requests, 25);
    s->ops->close(s);
}
END_TEST

START_TEST(budget_store_unavailable_is_an_error)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_budget c[] = {{"site", 10, 0}};
    sqlite3 *other = NULL;

    ck_assert_int_eq(sqlite3_open(path, &other), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 1, T0, NULL, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_STORE);
    ck_assert_str_eq(err.text, "the store is busy");
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    /* and the connection still works, at synchronous FULL again */
    status_clear(&err);
    ck_assert_int_eq(s->ops->budget_reserve(s, c, 1, 1, 1, T0, NULL, &err), 0);
    s->ops->close(s);
}
END_TEST

/* --- single-use tickets ------------------------------------------------------- */

START_TEST(ticket_claimed_once_until_it_expires)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char got[64];

    ck_assert_int_eq(store_ticket_claim(s, "t-1", T0 + 600000, T0, &err), 0);
    /* used: a second claim, the same or another connection, conflicts */
    ck_assert_int_eq(store_ticket_claim(s, "t-1", T0 + 600000, T0 + 1, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_CONFLICT);
    {
        struct store *s2 = open_store();
        status_clear(&err);
        ck_assert_int_eq(
            store_ticket_claim(s2, "t-1", T0 + 600000, T0 + 2, &err), -1);
        ck_assert_int_eq(err.code, ST_CONFLICT);
        s2->ops->close(s2);
    }
    /* another id is its own */
    status_clear(&err);
    ck_assert_int_eq(store_ticket_claim(s, "t-2", T0 + 1000, T0, &err), 0);
    /* once its record expires, it is forgotten (the ticket's own expiry
     * keeps it from being used: the caller checks that first) */
    ck_assert_int_eq(store_ticket_claim(s, "t-1", T0 + 700000, T0 + 600000,
                                        &err),
                     0);
    /* expired records are deleted by the claims that come after them */
    raw_text("SELECT count(*) FROM tickets", NULL, got);
    ck_assert_str_eq(got, "1");
    /* ids: short printable ASCII */
    ck_assert_int_eq(store_ticket_claim(s, "", T0 + 1, T0, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(store_ticket_claim(s, NULL, T0 + 1, T0, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(store_ticket_claim(s, "a b", T0 + 1, T0, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    {
        char id[STORE_TICKET_ID_MAX + 2];
        memset(id, 'x', sizeof(id) - 1);
        id[sizeof(id) - 1] = '\0';
        ck_assert_int_eq(store_ticket_claim(s, id, T0 + 1, T0, &err), -1);
        ck_assert_int_eq(err.code, ST_BAD_REQUEST);
        status_clear(&err);
        id[STORE_TICKET_ID_MAX] = '\0';
        ck_assert_int_eq(store_ticket_claim(s, id, T0 + 1, T0, &err), 0);
    }
    s->ops->close(s);
}
END_TEST

START_TEST(ticket_prune_is_bounded)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char id[16], got[64];

    for (int i = 0; i < STORE_TICKET_PRUNE + 10; i++) {
        snprintf(id, sizeof(id), "old-%d", i);
        ck_assert_int_eq(store_ticket_claim(s, id, T0 + 10, T0, &err), 0);
    }
    /* one claim after they expired deletes STORE_TICKET_PRUNE of them */
    ck_assert_int_eq(store_ticket_claim(s, "new", T0 + 99999, T0 + 10, &err),
                     0);
    raw_text("SELECT count(*) FROM tickets", NULL, got);
    ck_assert_int_eq(atoi(got), 10 + 1);
    s->ops->close(s);
}
END_TEST

/* --- the audit trail ----------------------------------------------------- */

START_TEST(audit_is_append_only)
{
    struct status_error err = {0};
    struct store *s = open_store();
    char t[STORE_ID_LEN], r[STORE_ID_LEN], msg[128];
    struct store_audit row = {.user = "alice",
                              .tool = "gmail_send",
                              .event = "approval_requested",
                              .args_hash = "ab12"};
    json_t *list = NULL;

    make_run(s, "alice", t, r);
    row.run = r;
    ck_assert_int_eq(s->ops->audit_add(s, &row, &err), 0);
    row.event = "executed";
    row.outcome = "sent";
    ck_assert_int_eq(s->ops->audit_add(s, &row, &err), 0);
    row.event = NULL;
    ck_assert_int_eq(s->ops->audit_add(s, &row, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);

    ck_assert_int_eq(s->ops->audit_of(s, r, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 0), "event")),
        "approval_requested");
    ck_assert(
        json_is_null(json_object_get(json_array_get(list, 0), "outcome")));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 1), "outcome")),
        "sent");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(list, 1), "argsHash")),
        "ab12");
    json_decref(list);

    ck_assert_int_ne(raw_exec("UPDATE audit SET outcome = 'x'", msg),
                     SQLITE_OK);
    ck_assert_ptr_nonnull(strstr(msg, "append only"));
    ck_assert_int_ne(raw_exec("DELETE FROM audit", msg), SQLITE_OK);
    ck_assert_ptr_nonnull(strstr(msg, "append only"));
    ck_assert_int_eq(s->ops->audit_of(s, r, &list, &err), 0);
    ck_assert_uint_eq(json_array_size(list), 2);
    json_decref(list);
    s->ops->close(s);
}
END_TEST

/* --- memories ------------------------------------------------------------ */

static size_t
search(struct store *s, const char *user, const char *q, long limit,
       json_t **out)
{
    struct status_error err = {0};

    ck_assert_msg(s->ops->memory_search(s, user, q, limit, out, &err) == 0,
                  "'%s': %s", q, err.text);
    return json_array_size(*out);
}

START_TEST(memories_are_searched)
{
    static const char *const odd[] = {
        "\"",         "*",       "OR",   "(",           "a\"b",
        "NEAR(x y)",  "-x",      "^",    "text:coffee", "\"unterminated",
        "AND OR NOT", "coffee*", "))((", "{}",          "'",
    };
    struct status_error err = {0};
    struct store *s = open_store();
    json_t *out = NULL;
    long id = 0, last = 0;

    ck_assert_int_eq(s->ops->memory_save(s, "alice", "Likes dark roast coffee",
                                         "food", &id, &err),
                     0);
    ck_assert_int_gt(id, 0);
    ck_assert_int_eq(s->ops->memory_save(s, "alice", "Email is a@example.com",
                                         "contact", &id, &err),
                     0);
    ck_assert_int_eq(s->ops->memory_save(s, "alice",
                                         "Prefers tea, not coffee, "
                                         "after noon; coffee in the morning",
                                         NULL, &last, &err),
                     0);
    ck_assert_int_eq(
        s->ops->memory_save(s, "bob", "Bob drinks coffee", "", &id, &err), 0);
    ck_assert_int_eq(s->ops->memory_save(s, "bob", "", "", &id, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);

    ck_assert_uint_eq(search(s, "alice", "coffee", 10, &out), 2);
    json_t *best = json_array_get(out, 0);
    ck_assert_int_eq(json_integer_value(json_object_get(best, "id")), last);
    json_decref(out);
    ck_assert_uint_eq(search(s, "alice", "emails", 10, &out), 1);
    json_decref(out);
    ck_assert_uint_eq(search(s, "alice", "contact", 10, &out), 1);
    json_decref(out);
    ck_assert_uint_eq(search(s, "alice", "xyzzy", 10, &out), 0);
    json_decref(out);
    ck_assert_uint_eq(search(s, "alice", "coffee email", 1, &out), 1);
    json_decref(out);
    ck_assert_uint_eq(search(s, "bob", "coffee", 10, &out), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(out, 0), "text")),
        "Bob drinks coffee");
    json_decref(out);
    ck_assert_uint_eq(search(s, "carol", "coffee", 10, &out), 0);
    json_decref(out);

    for (size_t i = 0; i < ARRAY_SIZE(odd); i++) {
        search(s, "alice", odd[i], 10, &out);
        json_decref(out);
    }
    ck_assert_uint_eq(search(s, "alice", "coffee*", 10, &out), 2);
    json_decref(out);

    /* no words: the newest */
    ck_assert_uint_eq(search(s, "alice", "  \t", 2, &out), 2);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_array_get(out, 0), "id")),
        last);
    json_decref(out);
    ck_assert_uint_eq(search(s, "alice", NULL, 0, &out), 3);
    json_decref(out);
    s->ops->close(s);
}
END_TEST

/* --- the terminal client's sessions ------------------------------------- */

START_TEST(chats_saved_loaded_and_latest)
{
    struct status_error err = {0};
    struct store *s = open_store();
    struct store_chat c = {0};
    json_t *usage = json_pack("{s:I}", "contextTokens", (json_int_t)42);
    const struct store_chat a = {.id = UNCONST("a"), .cwd = UNCONST("/w"),
                                 .model = UNCONST("m1"),
                                 .contents = UNCONST("[]"), .usage = usage};
    struct store_chat b = {.id = UNCONST("b"), .cwd = UNCONST("/w"),
                           .model = UNCONST("m2"),
                           .contents = UNCONST("[{\"role\":\"user\"}]")};
    long long created;

    ck_assert_int_eq(s->ops->chat_load(s, "a", &c, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_int_eq(s->ops->chat_latest(s, "/w", &c, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    ck_assert_int_eq(s->ops->chat_save(s, &a, &err), 0);
    ck_assert_int_eq(s->ops->chat_load(s, "a", &c, &err), 0);
    ck_assert_str_eq(c.cwd, "/w");
    ck_assert_str_eq(c.model, "m1");
    ck_assert_str_eq(c.contents, "[]");
    ck_assert_int_eq(json_integer_value(json_object_get(c.usage,
                                                        "contextTokens")),
                     42);
    created = c.created;
    ck_assert(created > 0 && c.updated == created);
    store_chat_release(&c);
    ck_assert_ptr_null(c.id);

    /* b is saved later: the folder's latest; then a again, with a new
     * history, keeps its creation time and becomes the latest */
    usleep(2000);
    ck_assert_int_eq(s->ops->chat_save(s, &b, &err), 0);
    ck_assert_int_eq(s->ops->chat_latest(s, "/w", &c, &err), 0);
    ck_assert_str_eq(c.id, "b");
    ck_assert_ptr_null(c.usage);
    store_chat_release(&c);
    usleep(2000);
    b.id = UNCONST("a");
    ck_assert_int_eq(s->ops->chat_save(s, &b, &err), 0);
    ck_assert_int_eq(s->ops->chat_latest(s, "/w", &c, &err), 0);
    ck_assert_str_eq(c.id, "a");
    ck_assert_str_eq(c.model, "m2");
    ck_assert_str_eq(c.contents, "[{\"role\":\"user\"}]");
    ck_assert(c.created == created && c.updated > created);
    store_chat_release(&c);
    ck_assert_int_eq(s->ops->chat_latest(s, "/elsewhere", &c, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_FOUND);
    json_decref(usage);
    s->ops->close(s);
}
END_TEST

Suite *
store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *pure = tcase_create("pure");
    TCase *db = tcase_create("sqlite");

    tcase_add_test(pure, names_and_ids);
    tcase_add_test(pure, predecessor_lists);
    suite_add_tcase(s, pure);

    tcase_add_checked_fixture(db, setup, teardown);
    tcase_set_timeout(db, 60);
    tcase_add_test(db, open_migrates_an_empty_file);
    tcase_add_test(db, migrate_is_idempotent);
    tcase_add_test(db, schema_1_is_migrated_to_3);
    tcase_add_test(db, newer_schema_is_refused);
    tcase_add_test(db, open_failures);
    tcase_add_test(db, users_trust_and_rules);
    tcase_add_test(db, user_rules_are_bounded);
    tcase_add_test(db, threads_are_their_users);
    tcase_add_test(db, thread_preview_is_cut_at_a_character);
    tcase_add_test(db, run_lifecycle);
    tcase_add_test(db, run_transitions_match_the_table);
    tcase_add_test(db, action_transitions_match_the_table);
    tcase_add_test(db, run_save_get_resume);
    tcase_add_test(db, actions_in_creation_order);
    tcase_add_test(db, approvals_are_decided_once);
    tcase_add_test(db, expired_approvals_cannot_be_decided);
    tcase_add_test(db, concurrent_deciders_one_wins);
    tcase_add_test(db, busy_store_says_so);
    tcase_add_test(db, audit_is_append_only);
    tcase_add_test(db, memories_are_searched);
    tcase_add_test(db, budget_reserve_checks_every_counter);
    tcase_add_test(db, budget_settle_replaces_the_reservation);
    tcase_add_test(db, budget_counters_near_overflow);
    tcase_add_test(db, budget_windows_roll_over);
    tcase_add_test(db, budget_reservations_race_to_the_ceiling);
    tcase_add_test(db, budget_store_unavailable_is_an_error);
    tcase_add_test(db, ticket_claimed_once_until_it_expires);
    tcase_add_test(db, ticket_prune_is_bounded);
    tcase_add_test(db, chats_saved_loaded_and_latest);
    suite_add_tcase(s, db);
    return s;
}
