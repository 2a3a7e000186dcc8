/*
 * runapi.c - the run API's routes (see runapi.h).
 *
 * Each route reads top to bottom: who asks (auth.h), the store, the
 * request, the work (run.h or one store read), the answer.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/runapi.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "store/bounds.h"
#include "core/config.h"
#include "core/jscan.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/status.h"
#include "http/auth.h"
#include "http/budget.h"
#include "http/httpio.h"
#include "http/ndjson.h"
#include "http/policy.h"
#include "http/reply.h"
#include "http/run.h"
#include "http/runinput.h"
#include "http/site.h"
#include "registry/action.h"
#include "registry/plugin.h"
#include "store/store.h"

#include <jansson.h>
#include <string.h>

/* Who asks, and the store: what every route starts with. */
static int
identify(const struct site *site, struct httpio *io, struct store **slot,
         char *user, size_t cap, struct store **st, struct status_error *err)
{
    if (auth_identify(site->cfg, site->auth_secret, site->auth_secret_len, io,
                      user, cap, err) != 0)
        return -1;
    if (*slot == NULL &&
        (*slot = store_open_migrated(site->cfg->run.store, err)) == NULL)
        return -1;
    *st = *slot;
    return 0;
}

static int
begin(struct runapi_req *q, char *user, size_t cap, struct store **st,
      struct status_error *err)
{
    return identify(q->site, q->io, q->store, user, cap, st, err);
}

int
runapi_direct_allowed(const struct site *site, struct store **slot,
                      struct httpio *io, const char *name, const json_t *args,
                      struct status_error *err)
{
    const struct config *cfg = site->cfg;
    char user[BOUND_USER_NAME + 1];
    struct store_user u = {0};
    struct store *st;
    struct policy_call call = {name, true, args, false};
    struct policy_user pu;
    const char *reason;
    enum policy_verdict v;

    if (cfg->direct_actions == CONFIG_DIRECT_READ_ONLY)
        return status_set(err, ST_FORBIDDEN,
                          "%s changes data: this site runs it only through "
                          "its assistant, which asks first "
                          "(http.directActions: readOnly)",
                          name);
    if (identify(site, io, slot, user, sizeof(user), &st, err) != 0 ||
        st->ops->user_get(st, user, &u, err) != 0)
        return -1;
    pu = (struct policy_user){u.trust, u.allow};
    v = policy_decide(cfg->run.side_effects, cfg->run.allow,
                      site->has_permission ? &site->permission : NULL, &pu,
                      &call, &reason);
    json_decref(u.allow);
    if (v == POLICY_ALLOW)
        return 0;
    return status_set(err, ST_FORBIDDEN, "%s: %s%s", name, reason,
                      v == POLICY_APPROVE ? " (ask through the run API, "
                                            "which waits for it)"
                                          : "");
}

static int
answer(struct runapi_req *q, json_t *v, struct status_error *err)
{
    if (v == NULL || arena_take_json(q->a, v) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    q->status = 200;
    return reply_json(q->io, 200, v);
}

/* The body as a tree (the run API's bodies are small). */
static json_t *
body_tree(struct runapi_req *q, struct status_error *err)
{
    return arena_take_json(q->a, jscan_to_json(q->body, 0, err));
}

/*
 * The work of a run route, one JSON answer or a stream. A stream that
 * failed after it started ends with its error line (and a 200 already
 * sent); before that, the failure is the ordinary error envelope.
 */
static int
deliver_work(struct runapi_req *q, struct run_env *env, bool stream,
             int (*work)(const struct run_env *env, void *arg, json_t **out,
                         struct status_error *err),
             void *arg, struct status_error *err)
{
    struct ndjson s;
    json_t *out = NULL;
    char *text;
    int rc;

    if (!stream) {
        if (work(env, arg, &out, err) != 0)
            return -1;
        q->status = 200;
        return reply_json(q->io, 200, out);
    }
    ndjson_init(&s, q->io, q->site->cfg->limits.stream_heartbeat_ms);
    env->stream = &s;
    rc = work(env, arg, &out, err);
    if (rc == 0) {
        text = jsonout_dumps(out, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL);
        rc = text ? ndjson_result(&s, text, strlen(text), err)
                  : status_set(err, ST_NO_MEMORY, "out of memory");
        free(text);
    }
    return ndjson_end(&s, rc, "run stream", err, &q->status);
}

/*
 * ... inside the budget of the user, their address and the site
 * (budget.h): reserved before the run is even created (a refusal leaves
 * nothing behind and calls Gemini never), settled with what the loop
 * used however the run ended. The estimate's bytes are the body and the
 * site's own part of every request (its declarations and persona).
 */
static int
deliver(struct runapi_req *q, struct run_env *env, bool stream,
        int (*work)(const struct run_env *env, void *arg, json_t **out,
                    struct status_error *err),
        void *arg, struct status_error *err)
{
    const struct site *site = q->site;
    struct budget b;
    int rc;

    budget_init(&b, site->cfg, q->store, q->io, env->user);
    if (budget_reserve(&b,
                       q->body->len + site->declarations_text_len +
                           site->user_declarations_text_len +
                           strlen(site->cfg->run.persona),
                       err) != 0)
        return -1;
    env->gate = budget_gate(&b);
    rc = deliver_work(q, env, stream, work, arg, err);
    budget_settle(&b);
    return rc;
}

/* --- POST /api/agent/run and /run/stream ---------------------------------- */

static int
start_work(const struct run_env *env, void *arg, json_t **out,
           struct status_error *err)
{
    return run_start(env, arg, out, err);
}

/* The start of a route that acts for the user: who they are (begin()),
 * the run environment for them, and the body as a tree. 0, or -1 with
 * `err` set. */
static int
begin_with_body(struct runapi_req *q, char *user, size_t size,
                struct run_env *env, json_t **body, struct status_error *err)
{
    struct store *st;

    if (begin(q, user, size, &st, err) != 0)
        return -1;
    *env = (struct run_env){q->site, q->g, st, q->a, user, NULL, NULL};
    return (*body = body_tree(q, err)) != NULL ? 0 : -1;
}

static int
run_route(struct runapi_req *q, bool stream, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct run_input in;
    json_t *body;
    struct run_env env;

    if (begin_with_body(q, user, sizeof(user), &env, &body, err) != 0 ||
        runinput_read(body,
                      (const char *const *)q->site->cfg->run.context_types,
                      q->a, &in, err) != 0)
        return -1;
    return deliver(q, &env, stream, start_work, &in, err);
}

int
runapi_run(struct runapi_req *q, struct status_error *err)
{
    return run_route(q, false, err);
}

int
runapi_run_stream(struct runapi_req *q, struct status_error *err)
{
    return run_route(q, true, err);
}

/* --- POST /api/agent/approvals/{id} --------------------------------------- */

struct decision {
    const char *id, *decision, *feedback;
};

static int
decide_work(const struct run_env *env, void *arg, json_t **out,
            struct status_error *err)
{
    const struct decision *d = arg;
    return run_decide(env, d->id, d->decision, d->feedback, out, err);
}

int
runapi_decide(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct decision d = {q->arg, NULL, NULL};
    json_error_t jerr;
    json_t *body;
    struct run_env env;
    int rc;

    if (begin_with_body(q, user, sizeof(user), &env, &body, err) != 0)
        return -1;
    rc = json_unpack_ex(body, &jerr, 0, "{s:s, s?s}", "decision", &d.decision,
                        "feedback", &d.feedback);
    /* jansson needs memory to unpack: a failure there is not the body's */
    if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0)
        return status_set(err, ST_BAD_REQUEST,
                          "the body must be {decision, feedback?}: %s",
                          jerr.text);
    return deliver(q, &env, ndjson_wanted(q->io), decide_work, &d, err);
}

/* --- POST /api/agent/answers/{run} ---------------------------------------- */

struct given_answer {
    const char *run;
    const json_t *answers;
};

static int
answer_work(const struct run_env *env, void *arg, json_t **out,
            struct status_error *err)
{
    const struct given_answer *g = arg;
    return run_answer(env, g->run, g->answers, out, err);
}

/* The user's answer to the question their run waits for (run_answer). */
int
runapi_answer(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct given_answer g = {q->arg, NULL};
    json_t *body;
    struct run_env env;

    if (begin_with_body(q, user, sizeof(user), &env, &body, err) != 0)
        return -1;
    g.answers = json_object_get(body, "answers");
    if (!json_is_object(body) || json_object_size(body) != 1 ||
        !json_is_object(g.answers))
        return status_set(err, ST_BAD_REQUEST,
                          "the body must be {answers: {question id: "
                          "value}}");
    return deliver(q, &env, ndjson_wanted(q->io), answer_work, &g, err);
}

/* --- the reads ------------------------------------------------------------- */

int
runapi_session(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct status_error why = {0};

    /* Signed out is an answer here, not an error: a page asks this on
     * every load, and a 401 would be logged as a failure each time. */
    if (auth_identify(q->site->cfg, q->site->auth_secret,
                      q->site->auth_secret_len, q->io, user, sizeof(user),
                      &why) == 0)
        return answer(q, json_pack("{s:b,s:s}", "signedIn", 1, "user", user),
                      err);
    if (why.code != ST_UNAUTHORIZED) {
        *err = why;
        return -1;
    }
    return answer(q, json_pack("{s:b,s:s}", "signedIn", 0, "reason", why.text),
                  err);
}

int
runapi_threads(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct store *st;
    json_t *list;

    if (begin(q, user, sizeof(user), &st, err) != 0 ||
        st->ops->threads_list(st, user, BOUND_STORE_LIST, &list, err))
        return -1;
    return answer(q, json_pack("{s:o}", "threads", list), err);
}

/* The plugin tool that shows a thread's plan: http/ reads the plan
 * through the registry, as the model would, and knows nothing of how the
 * plugin stores it. */
#define TODO_SHOW "todo.show"

int
runapi_thread_todo(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    const struct plugin_action *act = plugin_find(q->site->actions, TODO_SHOW);
    /* the route's arg is "<id>/todo" */
    const char *id = arena_strndup(q->a, q->arg, strcspn(q->arg, "/"));
    struct action_who who = {.user = user, .conversation = id};
    struct store *st;
    json_t *in, *out;

    if (id == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (begin(q, user, sizeof(user), &st, err) != 0 ||
        st->ops->thread_check(st, user, id, err) != 0)
        return -1;
    if (act == NULL)
        return status_set(err, ST_NOT_FOUND,
                          "this site keeps no plans (the todo plugin is not "
                          "exposed)");
    in = arena_take_json(q->a, json_object());
    if (in == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (action_run(&q->site->cfg->actions, act, &who, in, q->a, &out, err) != 0)
        return -1;
    return answer(q, json_incref(out), err);
}

int
runapi_thread(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct store *st;
    json_t *thread, *messages;

    if (begin(q, user, sizeof(user), &st, err) != 0 ||
        st->ops->thread_get(st, user, q->arg, &thread, &messages, err) != 0)
        return -1;
    return answer(
        q, json_pack("{s:o, s:o}", "thread", thread, "messages", messages),
        err);
}

int
runapi_get_run(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1];
    struct store *st;
    json_t *run;

    if (begin(q, user, sizeof(user), &st, err) != 0 ||
        st->ops->run_get(st, user, q->arg, &run, err) != 0)
        return -1;
    return answer(q, run, err);
}

/* ?status=pending (the default) or another status, or "all" */
static const char *
status_param(struct httpio *io, char *buf, size_t cap)
{
    const char *qs = io->ops->param(io->ctx, "QUERY_STRING");
    const char *p = qs ? strstr(qs, "status=") : NULL;
    size_t n;

    if (p == NULL || (p != qs && p[-1] != '&'))
        return "pending";
    p += 7;
    n = strcspn(p, "&");
    if (n == 0 || n >= cap)
        return "pending";
    memcpy(buf, p, n);
    buf[n] = '\0';
    return strcmp(buf, "all") == 0 ? NULL : buf;
}

int
runapi_approvals(struct runapi_req *q, struct status_error *err)
{
    char user[BOUND_USER_NAME + 1], status[32];
    struct store *st;
    json_t *list;

    if (begin(q, user, sizeof(user), &st, err) != 0 ||
        st->ops->approvals_list(st, user,
                                status_param(q->io, status, sizeof(status)),
                                &list, err) != 0)
        return -1;
    return answer(q, json_pack("{s:o}", "approvals", list), err);
}
