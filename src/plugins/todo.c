/*
 * todo.c - the built-in `todo` plugin: a plan the model keeps for a
 * multi-step task (add, update, complete steps), shown to the user as a
 * checklist, stored per conversation.
 *
 * Tools (none has side effects: the plan is the agent's own notes):
 *   plan {steps: [title]}            replace the plan, every step pending
 *   add {title, after?}              a step at the end, or after step `after`
 *                                    (0: at the top)
 *   update {id, title?, status?}     status: pending | in_progress | done
 *   complete {id}                    status done
 *   show {}                          the plan as it is
 * Each answers the whole plan: {"todo": {"steps": [{id, title, status}]}}.
 *
 * Storage: one file per conversation (plugin.h's ctx->conversation),
 * `<data_dir>/todo/<sha256 hex of the conversation>.json` holding
 * {"version": 1, "next": <next id>, "steps": [...]}. Writers take an
 * flock(2) on `<hex>.lock` (workers are processes, requests threads: an
 * flock is per open file, so it serialises both), write `<hex>.tmp`,
 * fsync it and rename it over the plan: a reader (show) needs no lock and
 * never sees half a file. At most maxPlans plans are kept: creating one
 * past that removes the oldest by mtime (several workers creating at once
 * may pass the cap by one each - it is a bound on the disk, not a quota).
 * A lock file lives only beside its plan: an operation that leaves no
 * plan removes it again, so `show` from a public widget creates nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/todo.h"
#include "plugins/answer.h"
#include "core/jsonout.h"
#include "core/bounds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x)  STR_(x)

/* "<hex>.json": SHA-256 in hex */
#define HEX_LEN        64
/* A plan file, at most: every title escaped at its worst (\uXXXX per
 * byte) plus the members around it. */
#define PLAN_FILE_MAX  (BOUND_TODO_STEPS * (BOUND_TODO_TITLE * 6 + 64) + 64)
/* Plans removed per call when over the cap (after maxPlans was lowered,
 * the rest go on later calls): a call's time stays bounded. */
#define EVICT_PER_CALL 16

struct todo {
    /* <data_dir>/todo, short enough for "/<hex>.json" after it */
    char dir[BOUND_PATH_LEN - HEX_LEN - 8];
    long max_steps;
    long max_plans;
};

/* The paths of one conversation's files. */
struct todo_paths {
    char plan[BOUND_PATH_LEN];
    char lock[BOUND_PATH_LEN];
    char tmp[BOUND_PATH_LEN];
};

/* --- the plugin's texts ------------------------------------------------ */

#define STEP_ID "{\"type\":\"integer\",\"minimum\":1}"
/* clang-format off */
#define TITLE                                                        \
    "{\"type\":\"string\",\"minLength\":1,\"maxLength\":" STR(        \
        BOUND_TODO_TITLE) "}"
/* clang-format on */

/* clang-format off */
static const char decls_text[] =
    "["
    "{\"name\":\"plan\",\"description\":\"Replace the plan of this task "
    "with these steps, in order, all pending. Use it once a request needs "
    "several steps.\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"steps\":{\"type\":\"array\",\"maxItems\":" STR(BOUND_TODO_STEPS)
    ",\"items\":" TITLE "}},\"required\":[\"steps\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"add\",\"description\":\"Add a step to the plan: at the end, "
    "or after the step with id `after` (0: at the top).\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"title\":" TITLE ",\"after\":"
    "{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"title\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"update\",\"description\":\"Change a step's title or status "
    "(pending, in_progress, done).\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"id\":" STEP_ID ",\"title\":" TITLE ",\"status\":"
    "{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"done\"]}},"
    "\"required\":[\"id\"],\"additionalProperties\":false},"
    "\"sideEffects\":false},"
    "{\"name\":\"complete\",\"description\":\"Mark a step done.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"id\":" STEP_ID
    "},\"required\":[\"id\"],\"additionalProperties\":false},"
    "\"sideEffects\":false},"
    "{\"name\":\"show\",\"description\":\"The plan as it is now.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{},"
    "\"additionalProperties\":false},\"sideEffects\":false}"
    "]";
/* clang-format on */

static const char instructions_text[] =
    "For a request that takes several steps, keep a plan with the todo "
    "tools: action_todo_plan with the steps first, then mark each step "
    "in_progress when you start it (action_todo_update) and done when it "
    "is (action_todo_complete). The user sees the plan as a checklist. "
    "Skip the plan for a simple question.";

/* clang-format off */
static const char schema_text[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"maxSteps\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":" STR(
        BOUND_TODO_STEPS) "},"
    "\"maxPlans\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":" STR(
        BOUND_TODO_PLANS) "}},"
    "\"additionalProperties\":false}";
/* clang-format on */

static const char *
todo_declarations(void *self)
{
    (void)self;
    return decls_text;
}

static const char *
todo_instructions(void *self)
{
    (void)self;
    return instructions_text;
}

static const char *
todo_schema(void)
{
    return schema_text;
}

/* --- lifecycle --------------------------------------------------------- */

static int
todo_initialize(const struct gemini_agent_init *init, void **self, char *err,
                size_t errsize)
{
    struct todo *t = calloc(1, sizeof(*t));
    json_t *cfg = NULL, *v;
    json_error_t jerr;
    int n;

    if (t == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    t->max_steps = DEFAULT_TODO_STEPS;
    t->max_plans = DEFAULT_TODO_PLANS;
    /* the host checked the config against todo_schema() already */
    cfg = json_loadb(init->config, init->config_len, JSON_REJECT_DUPLICATES,
                     &jerr);
    if ((v = json_object_get(cfg, "maxSteps")) != NULL && json_is_integer(v))
        t->max_steps = (long)json_integer_value(v);
    if ((v = json_object_get(cfg, "maxPlans")) != NULL && json_is_integer(v))
        t->max_plans = (long)json_integer_value(v);
    json_decref(cfg);
    if (t->max_steps < 1 || t->max_steps > BOUND_TODO_STEPS ||
        t->max_plans < 1 || t->max_plans > BOUND_TODO_PLANS) {
        snprintf(err, errsize, "maxSteps or maxPlans out of range");
        free(t);
        return -1;
    }
    n = snprintf(t->dir, sizeof(t->dir), "%s/todo",
                 init->data_dir ? init->data_dir : ".");
    if (n < 0 || (size_t)n >= sizeof(t->dir)) {
        snprintf(err, errsize, "the data folder's path is too long");
        free(t);
        return -1;
    }
    *self = t;
    return 0;
}

static void
todo_shutdown(void *self)
{
    free(self);
}

/* --- files ------------------------------------------------------------- */

static void
conversation_hex(const char *conversation, char hex[HEX_LEN + 1])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)conversation, strlen(conversation), md);
    for (size_t i = 0; i < sizeof(md); i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static void
paths_of(const struct todo *t, const char *hex, struct todo_paths *p)
{
    /* todo_initialize() checked that these fit */
    snprintf(p->plan, sizeof(p->plan), "%s/%s.json", t->dir, hex);
    snprintf(p->lock, sizeof(p->lock), "%s/%s.lock", t->dir, hex);
    snprintf(p->tmp, sizeof(p->tmp), "%s/%s.tmp", t->dir, hex);
}

/*
 * Lock `path` (created when missing): the descriptor, or -1. The file may
 * be removed by whoever held it (eviction, or an operation that left no
 * plan): a lock on a removed file guards nothing, so take it again until
 * the locked file is the one at `path`. `wait` false: -1 at once when
 * someone holds it.
 */
static int
lock_file(const char *path, bool wait)
{
    for (;;) {
        struct stat held, now;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

        if (fd < 0)
            return -1;
        while (flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
            if (errno != EINTR) {
                close(fd);
                return -1;
            }
        }
        if (fstat(fd, &held) == 0 && stat(path, &now) == 0 &&
            held.st_ino == now.st_ino && held.st_dev == now.st_dev)
            return fd;
        close(fd);
    }
}

/* Read the plan at `path`: a new reference to {next, steps}, an empty
 * plan when there is none, or NULL (unreadable or not a plan). */
static json_t *
plan_read(const char *path)
{
    json_t *plan, *steps, *s;
    json_error_t jerr;
    size_t i;
    FILE *f = fopen(path, "re");

    if (f == NULL)
        return errno == ENOENT ? json_pack("{s:i, s:[]}", "next", 1, "steps")
                               : NULL;
    plan = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    fclose(f);
    steps = json_object_get(plan, "steps");
    if (!json_is_integer(json_object_get(plan, "next")) ||
        !json_is_array(steps) || json_array_size(steps) > BOUND_TODO_STEPS)
        goto bad;
    json_array_foreach(steps, i, s) {
        if (!json_is_integer(json_object_get(s, "id")) ||
            !json_is_string(json_object_get(s, "title")) ||
            !json_is_string(json_object_get(s, "status")))
            goto bad;
    }
    return plan;
bad:
    json_decref(plan);
    return NULL;
}

/* Write `plan` over `p->plan`: tmp, fsync, rename, fsync of the folder
 * (so the rename survives a crash too). 0, or -1. */
static int
plan_write(const struct todo *t, const struct todo_paths *p, const json_t *plan)
{
    size_t len = 0, off = 0;
    char *text = jsonout_dumps(plan, JSON_COMPACT, JSONOUT_UNBOUNDED, &len);
    int fd = -1, rc = -1, dfd;

    if (text == NULL || len > PLAN_FILE_MAX)
        goto out;
    fd = open(p->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        goto out;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
        off += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        goto out;
    }
    fd = -1;
    if (rename(p->tmp, p->plan) != 0)
        goto out;
    dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (rc != 0)
        unlink(p->tmp);
    free(text);
    return rc;
}

/* Is `name` a plan file ("<64 hex>.json")? */
static bool
is_plan_name(const char *name)
{
    size_t len = strlen(name);

    return len == HEX_LEN + 5 && strcmp(name + HEX_LEN, ".json") == 0;
}

/*
 * Make room for one more plan: while there are maxPlans or more, remove
 * the oldest (by mtime) other than `keep`, under its own lock (taken
 * without waiting: a plan in use is not the oldest for long).
 */
static void
evict(const struct todo *t, const char *keep)
{
    for (int round = 0; round < EVICT_PER_CALL; round++) {
        char oldest[HEX_LEN + 1] = "", path[BOUND_PATH_LEN];
        struct timespec when = {0, 0};
        struct todo_paths p;
        long count = 0;
        struct dirent *e;
        DIR *d = opendir(t->dir);
        int fd;

        if (d == NULL)
            return;
        while ((e = readdir(d)) != NULL) {
            struct stat st;
            if (!is_plan_name(e->d_name))
                continue;
            count++;
            if (strncmp(e->d_name, keep, HEX_LEN) == 0)
                continue;
            snprintf(path, sizeof(path), "%s/%.*s", t->dir, HEX_LEN + 5,
                     e->d_name);
            if (stat(path, &st) != 0)
                continue;
            if (oldest[0] == '\0' || st.st_mtim.tv_sec < when.tv_sec ||
                (st.st_mtim.tv_sec == when.tv_sec &&
                 st.st_mtim.tv_nsec < when.tv_nsec)) {
                memcpy(oldest, e->d_name, HEX_LEN);
                oldest[HEX_LEN] = '\0';
                when = st.st_mtim;
            }
        }
        closedir(d);
        if (count < t->max_plans || oldest[0] == '\0')
            return;
        paths_of(t, oldest, &p);
        fd = lock_file(p.lock, false);
        if (fd < 0)
            return; /* in use: it will be old again later */
        unlink(p.plan);
        unlink(p.tmp);
        unlink(p.lock);
        close(fd);
    }
}

/* --- the tools --------------------------------------------------------- */

enum todo_tool { T_PLAN, T_ADD, T_UPDATE, T_COMPLETE, T_SHOW };

static const char *const tool_names[] = {"plan", "add", "update", "complete",
                                         "show"};

/* A call's outcome: rc with a message for the model (BAD_INPUT, FAILED) */
struct todo_call {
    int rc;
    char msg[200];
};

static int
bad(struct todo_call *c, int rc, const char *msg)
{
    c->rc = rc;
    snprintf(c->msg, sizeof(c->msg), "%s", msg);
    return -1;
}

/* The index of step `id` in `steps`, or -1. */
static long
step_index(const json_t *steps, json_int_t id)
{
    size_t i;
    json_t *s;

    json_array_foreach(steps, i, s) {
        if (json_integer_value(json_object_get(s, "id")) == id)
            return (long)i;
    }
    return -1;
}

static json_t *
new_step(json_int_t id, const char *title)
{
    return json_pack("{s:I, s:s, s:s}", "id", id, "title", title, "status",
                     "pending");
}

/* The answer to a change that would make the plan longer than
 * maxSteps: -1 with `c`. */
static int
too_many(const struct todo *t, struct todo_call *c)
{
    snprintf(c->msg, sizeof(c->msg), "a plan holds at most %ld steps",
             t->max_steps);
    c->rc = GEMINI_AGENT_BAD_INPUT;
    return -1;
}

/* plan: the steps replaced by args' titles, numbered from 1. */
static int
apply_plan(const struct todo *t, const json_t *args, json_t *plan,
           struct todo_call *c)
{
    json_t *steps = json_object_get(plan, "steps");
    json_t *v = json_object_get(args, "steps");
    json_int_t next = 1;

    if ((long)json_array_size(v) > t->max_steps)
        return too_many(t, c);
    json_array_clear(steps);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const char *s = json_string_value(json_array_get(v, i));
        if (s == NULL || s[0] == '\0' || strlen(s) > BOUND_TODO_TITLE)
            return bad(c, GEMINI_AGENT_BAD_INPUT,
                       "each step must be a non-empty title");
        if (json_array_append_new(steps, new_step(next++, s)) != 0)
            return bad(c, GEMINI_AGENT_FAILED, "out of memory");
    }
    return json_object_set_new(plan, "next", json_integer(next)) == 0
               ? 0
               : bad(c, GEMINI_AGENT_FAILED, "out of memory");
}

/* add: a step `title` at the end, or after the step `after` (0: first). */
static int
apply_add(const struct todo *t, const json_t *args, json_t *plan,
          struct todo_call *c)
{
    json_t *steps = json_object_get(plan, "steps"), *v;
    json_int_t next = json_integer_value(json_object_get(plan, "next"));
    const char *title = json_string_value(json_object_get(args, "title"));
    long at;

    if (title == NULL || title[0] == '\0')
        return bad(c, GEMINI_AGENT_BAD_INPUT, "a step needs a title");
    if ((long)json_array_size(steps) >= t->max_steps)
        return too_many(t, c);
    at = (long)json_array_size(steps);
    if ((v = json_object_get(args, "after")) != NULL) {
        json_int_t after = json_integer_value(v);
        at = after == 0 ? 0 : step_index(steps, after);
        if (at < 0)
            return bad(c, GEMINI_AGENT_BAD_INPUT,
                       "there is no step with that id to add after");
        at += after != 0;
    }
    if (json_array_insert_new(steps, (size_t)at, new_step(next, title)) != 0 ||
        json_object_set_new(plan, "next", json_integer(next + 1)) != 0)
        return bad(c, GEMINI_AGENT_FAILED, "out of memory");
    return 0;
}

/* update, complete: the step `id`'s title and status (complete: done). */
static int
apply_update(enum todo_tool tool, const json_t *args, json_t *plan,
             struct todo_call *c)
{
    json_t *steps = json_object_get(plan, "steps"), *s;
    const char *title = json_string_value(json_object_get(args, "title"));
    json_int_t id = json_integer_value(json_object_get(args, "id"));
    const char *status =
        tool == T_COMPLETE ? "done"
                           : json_string_value(json_object_get(args, "status"));
    long at = step_index(steps, id);

    if (at < 0)
        return bad(c, GEMINI_AGENT_BAD_INPUT,
                   "there is no step with that id: call "
                   "action_todo_show for the plan");
    s = json_array_get(steps, (size_t)at);
    if ((title != NULL &&
         json_object_set_new(s, "title", json_string(title)) != 0) ||
        (status != NULL &&
         json_object_set_new(s, "status", json_string(status)) != 0))
        return bad(c, GEMINI_AGENT_FAILED, "out of memory");
    return 0;
}

/* Apply `tool` with `args` to `plan` ({next, steps}). 0, or -1 with `c`. */
static int
apply(const struct todo *t, enum todo_tool tool, const json_t *args,
      json_t *plan, struct todo_call *c)
{
    const char *title = json_string_value(json_object_get(args, "title"));

    /* the host validated the arguments against the declarations; the
     * configured bounds and the ids are the plugin's to check */
    if (title != NULL && strlen(title) > BOUND_TODO_TITLE)
        return bad(c, GEMINI_AGENT_BAD_INPUT, "a step's title is too long");
    switch (tool) {
    case T_PLAN:
        return apply_plan(t, args, plan, c);
    case T_ADD:
        return apply_add(t, args, plan, c);
    case T_UPDATE:
    case T_COMPLETE:
        return apply_update(tool, args, plan, c);
    case T_SHOW:
        break;
    }
    return 0;
}

/* {"todo": {"steps": [...]}} as text in host memory. */
static int
answer(const struct gemini_agent_ctx *ctx, const json_t *plan,
       struct gemini_agent_out *out)
{
    return answer_json(ctx, out,
                       json_pack("{s:{s:O}}", "todo", "steps",
                                 json_object_get(plan, "steps")));
}

/* The tool named `name`: 0 with *tool, or -1 when it is none of ours. */
static int
tool_of(const char *name, enum todo_tool *tool)
{
    for (size_t i = 0; i < ARRAY_SIZE(tool_names); i++) {
        if (strcmp(name, tool_names[i]) == 0) {
            *tool = (enum todo_tool)i;
            return 0;
        }
    }
    return -1;
}

/* A tool that changes the plan (all but show), under the plan's lock:
 * returns the plan after it (a new reference) with c's outcome, or NULL
 * with c's failure. */
static json_t *
change_plan(const struct todo *t, enum todo_tool tool, const json_t *args,
            const char *hex, const struct todo_paths *p, struct todo_call *c)
{
    json_t *plan;
    bool existed;
    int fd;

    if (mkdir(t->dir, 0700) != 0 && errno != EEXIST) {
        bad(c, GEMINI_AGENT_FAILED, "cannot keep the plan");
        return NULL;
    }
    fd = lock_file(p->lock, true);
    if (fd < 0) {
        bad(c, GEMINI_AGENT_FAILED, "cannot lock the plan");
        return NULL;
    }
    existed = access(p->plan, F_OK) == 0;
    /* `plan` replaces whatever was there, also a file it cannot read */
    plan = tool == T_PLAN ? json_pack("{s:i, s:[]}", "next", 1, "steps")
                          : plan_read(p->plan);
    if (plan == NULL) {
        bad(c, GEMINI_AGENT_FAILED, "the stored plan is unreadable");
    } else if (apply(t, tool, args, plan, c) == 0) {
        if (!existed)
            evict(t, hex);
        if (plan_write(t, p, plan) != 0) {
            bad(c, GEMINI_AGENT_FAILED, "cannot keep the plan");
            existed = access(p->plan, F_OK) == 0;
        } else {
            existed = true;
        }
    }
    /* a lock file lives only beside a plan */
    if (!existed)
        unlink(p->lock);
    close(fd);
    return plan;
}

static int
todo_execute(void *self, const struct gemini_agent_ctx *ctx,
             const char *tool_name, const char *args_text, size_t args_len,
             struct gemini_agent_out *out)
{
    const struct todo *t = self;
    struct todo_call c = {GEMINI_AGENT_OK, ""};
    struct todo_paths p;
    char hex[HEX_LEN + 1];
    json_t *args = NULL, *plan = NULL;
    json_error_t jerr;
    enum todo_tool tool = T_SHOW;
    int rc;

    if (tool_of(tool_name, &tool) != 0)
        return gemini_agent_reply(ctx, out, "no such tool", 12) ==
                       GEMINI_AGENT_OK
                   ? GEMINI_AGENT_BAD_INPUT
                   : GEMINI_AGENT_FAILED;
    if (ctx->conversation == NULL || ctx->conversation[0] == '\0') {
        bad(&c, GEMINI_AGENT_BAD_INPUT,
            "the todo plan belongs to a conversation (the chat, or a run "
            "API thread), and this call has none");
        goto out;
    }
    args = json_loadb(args_text, args_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(args)) {
        bad(&c, GEMINI_AGENT_BAD_INPUT, "the arguments must be an object");
        goto out;
    }
    conversation_hex(ctx->conversation, hex);
    paths_of(t, hex, &p);
    /* show reads without a lock: writers rename whole files */
    if (tool == T_SHOW) {
        plan = plan_read(p.plan);
        if (plan == NULL)
            bad(&c, GEMINI_AGENT_FAILED, "the stored plan is unreadable");
    } else {
        plan = change_plan(t, tool, args, hex, &p, &c);
    }
out:
    if (c.rc == GEMINI_AGENT_OK)
        rc = answer(ctx, plan, out);
    else
        rc = gemini_agent_reply(ctx, out, c.msg, strlen(c.msg)) ==
                     GEMINI_AGENT_OK
                 ? c.rc
                 : GEMINI_AGENT_FAILED;
    json_decref(plan);
    json_decref(args);
    return rc;
}

static const struct gemini_agent_plugin todo_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "todo",
    .declarations = todo_declarations,
    .execute = todo_execute,
    .initialize = todo_initialize,
    .shutdown = todo_shutdown,
    .system_instructions = todo_instructions,
    .config_schema = todo_schema,
    .flags = 0,
};

const struct gemini_agent_plugin *
builtin_todo(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &todo_plugin : NULL;
}
