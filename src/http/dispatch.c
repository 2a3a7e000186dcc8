/*
 * dispatch.c - routing table and the request path.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/dispatch.h"
#include "core/arena.h"
#include "registry/action.h"
#include "http/budget.h"
#include "http/chat.h"
#include "http/cors.h"
#include "core/config.h"
#include "http/httpio.h"
#include "http/ndjson.h"
#include "http/opstatus.h"
#include "core/jscan.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "core/monotime.h"
#include "registry/plugin.h"
#include "http/reply.h"
#include "http/request.h"
#include "http/runapi.h"
#include "http/site.h"
#include "core/status.h"
#include "store/store.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* What a route's work needs; lives for one request. */
struct exchange {
    const struct site *site;
    struct gemini *g;
    struct store **store; /* the thread's store connection, opened on use */
    const struct dispatch_host *host; /* may be NULL */
    struct httpio *io;
    struct arena *arena;
    const char *arg;       /* the path after a prefix route, e.g. "shop.x" */
    struct jscan_doc body; /* the scanned request body (routes that take one) */
    struct arena *scanned; /* its bytes and tape, which a route may drop */
    const char *allow;     /* for a 405: the method the path takes */
    int status;            /* HTTP status of the answer */
};

typedef int (*route_fn)(struct exchange *x, struct status_error *err);

struct route {
    /* exact; or a prefix when it ends with '/'; or with one segment
     * that is a star ("/threads/STAR/todo"): any one segment there, the
     * rest exact (`arg` is "<segment>/<rest>") */
    const char *path;
    const char *method;
    bool takes_body;
    route_fn run;
    /* or a run API route (runapi.h) */
    int (*api)(struct runapi_req *q, struct status_error *err);
};

/* GET /_jay/actions: the listing is built once when plugins load. */
static int
route_list_actions(struct exchange *x, struct status_error *err)
{
    const struct site *s = x->site;

    (void)err;
    x->status = 200;
    return reply_raw(x->io, 200, NULL, s->listing, s->listing_len);
}

/*
 * GET /_jay/actions/geminiAgent.status: what the page may say before the
 * first message: is a key configured, and which model answers (the
 * offline demo model is "offline-demo"). No path, no key material.
 */
static int
route_status(struct exchange *x, struct status_error *err)
{
    const struct config_gemini *g = &x->site->cfg->gemini;
    json_t *v = json_pack("{s:b, s:s}", "ready",
                          g->api_key != NULL && g->api_key[0] != '\0', "model",
                          g->model);

    if (v == NULL || arena_take_json(x->arena, v) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    x->status = 200;
    return reply_json(x->io, 200, v);
}

/* POST /_jay/actions/<plugin>.<name>: the body is the action's input. */
static int
route_run_action(struct exchange *x, struct status_error *err)
{
    const struct plugin_action *act = plugin_find(x->site->actions, x->arg);
    json_t *in, *out;
    int rc;

    if (act == NULL)
        return status_set(err, ST_UNKNOWN_ACTION,
                          "there is no action named '%s'; GET /_jay/actions "
                          "lists them",
                          x->arg);
    in = arena_take_json(x->arena, jscan_to_json(&x->body, 0, err));
    if (in == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    /* side effects: not for anyone who can reach the URL */
    if (act->side_effects && runapi_direct_allowed(x->site, x->store, x->io,
                                                   act->name, in, err) != 0)
        return -1;
    /* a schema violation's path and rule travel in `err`; nobody in
     * particular runs it, in no conversation (who: NULL) */
    rc = action_run(&x->site->cfg->actions, act, NULL, in, x->arena, &out, err);
    if (rc == ACTION_ASKS_USER) /* there is no one to ask on this route */
        return status_set(err, ST_BAD_REQUEST,
                          "'%s' asks the user a question: only the model "
                          "calls it, in the chat or a run",
                          act->name);
    if (rc != 0)
        return -1;
    x->status = 200;
    return reply_json(x->io, 200, out);
}

/* GET /_jay/commands: the plugins' user commands, built once. */
static int
route_list_commands(struct exchange *x, struct status_error *err)
{
    (void)err;
    x->status = 200;
    return reply_raw(x->io, 200, NULL, x->site->commands,
                     x->site->commands_len);
}

/* POST /_jay/commands/<name> {"args": "..."}: run a user command, without
 * the model. The answer says whether its output belongs in the history
 * the model sees (the client adds it there). */
static int
route_run_command(struct exchange *x, struct status_error *err)
{
    const struct plugin_command *c = plugin_find_command(x->site->actions,
                                                         x->arg);
    const json_t *args;
    const char *text;
    size_t len;
    json_t *in, *out;

    if (c == NULL)
        return status_set(err, ST_UNKNOWN_ACTION,
                          "there is no command named '%s'; GET "
                          "/_jay/commands lists them",
                          x->arg);
    in = arena_take_json(x->arena, jscan_to_json(&x->body, 0, err));
    if (in == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    args = json_object_get(in, "args");
    if (!json_is_object(in) || (args != NULL && !json_is_string(args)))
        return status_set(err, ST_BAD_REQUEST,
                          "the body must be {\"args\": a string}");
    /* a command that changes data: as guarded as such an action */
    if (c->side_effects &&
        runapi_direct_allowed(x->site, x->store, x->io, c->name, in, err) != 0)
        return -1;
    if (plugin_run_command(c, x->site->cfg->actions.data_dir,
                           args ? json_string_value(args) : "",
                           args ? json_string_length(args) : 0, x->arena, &text,
                           &len, err) != 0)
        return -1;
    out = arena_take_json(
        x->arena, json_pack("{s:s, s:s%, s:b}", "command", c->name, "output",
                            text, len, "shareWithModel", c->share_with_model));
    if (out == NULL)
        return status_set(err, ST_ACTION_FAILED,
                          "the command '%s' did not answer UTF-8 text",
                          c->name);
    x->status = 200;
    return reply_json(x->io, 200, out);
}

/* GET /_jay/status: the operator's view (opstatus.h), when configured
 * and asked from an address it names. */
static int
route_opstatus(struct exchange *x, struct status_error *err)
{
    struct opstatus_workers w = {false, 0, 0};

    if (x->host != NULL && x->host->workers != NULL) {
        x->host->workers(x->host->ctx, &w.busy, &w.total);
        w.known = true;
    }
    return opstatus_reply(x->site, x->store, x->io, x->arena, &w, &x->status,
                          err);
}

/* The chat's work: one JSON answer, or its events as they happen
 * (ndjson.h); the loop asks `gate` before every Gemini call. */
static int
chat_work(struct exchange *x, enum chat_kind kind, struct loop_gate *gate,
          struct status_error *err)
{
    struct ndjson stream;
    struct chat_request rq = {.site = x->site,
                              .g = x->g,
                              .store = x->store,
                              .a = x->arena,
                              .kind = kind,
                              .body = &x->body,
                              .scanned = x->scanned,
                              .gate = gate};
    const char *answer;
    size_t len;
    int rc;

    if (!ndjson_wanted(x->io)) {
        /* a retry hint (rate limit, outage) travels in `err` */
        if (chat_handle(&rq, &answer, &len, err) != 0)
            return -1;
        x->status = 200;
        return reply_raw(x->io, 200, NULL, answer, len);
    }
    ndjson_init(&stream, x->io, x->site->cfg->limits.stream_heartbeat_ms);
    rq.stream = &stream;
    rc = chat_handle(&rq, &answer, &len, err);
    return ndjson_end(&stream, rc, "chat stream", err, &x->status);
}

/*
 * The chat protocol: both routes share one loop (chat.c), inside the
 * visitor's budget (budget.h): reserved before anything is asked of
 * Gemini (a refusal is the plain 429, a stream included), settled with
 * what was used however the request ended. The estimate's bytes are the
 * body and the site's own part of every request.
 */
static int
route_chat(struct exchange *x, enum chat_kind kind, struct status_error *err)
{
    const struct site *s = x->site;
    struct budget b;
    int rc;

    budget_init(&b, s->cfg, x->store, x->io, NULL);
    if (budget_reserve(
            &b,
            x->body.len + s->declarations_text_len +
                (s->instruction_json ? strlen(s->instruction_json) : 0),
            err) != 0)
        return -1;
    rc = chat_work(x, kind, budget_gate(&b), err);
    budget_settle(&b);
    return rc;
}

static int
route_send_message(struct exchange *x, struct status_error *err)
{
    return route_chat(x, CHAT_SEND_MESSAGE, err);
}

static int
route_submit_results(struct exchange *x, struct status_error *err)
{
    return route_chat(x, CHAT_SUBMIT_RESULTS, err);
}

/* The chat protocol's two actions: their routes below, and the plugin
 * entries (actions/geminiAgent) that describe them. */
#define CHAT_SEND   CHAT_ACTION_SEND
#define CHAT_SUBMIT CHAT_ACTION_SUBMIT

const char *const dispatch_chat_actions[] = {CHAT_SEND, CHAT_SUBMIT, NULL};

/* Every route, first match wins. Paths ending in '/' match as prefixes
 * (the rest is `arg`); a path an exact route owns never falls to a prefix
 * route, whatever the method. The geminiAgent routes share the actions
 * namespace with the jay-stack plugin they replace. */
static const struct route routes[] = {
    {"/_jay/actions", "GET", false, route_list_actions, NULL},
    {"/_jay/actions/" CHAT_SEND, "POST", true, route_send_message, NULL},
    {"/_jay/actions/" CHAT_SUBMIT, "POST", true, route_submit_results, NULL},
    {"/_jay/actions/geminiAgent.status", "GET", false, route_status, NULL},
    {"/_jay/actions/", "POST", true, route_run_action, NULL},
    {"/_jay/status", "GET", false, route_opstatus, NULL},
    {"/_jay/commands", "GET", false, route_list_commands, NULL},
    {"/_jay/commands/", "POST", true, route_run_command, NULL},
    {"/api/agent/run", "POST", true, NULL, runapi_run},
    {"/api/agent/run/stream", "POST", true, NULL, runapi_run_stream},
    {"/api/agent/session", "GET", false, NULL, runapi_session},
    {"/api/agent/threads", "GET", false, NULL, runapi_threads},
    {"/api/agent/threads/", "GET", false, NULL, runapi_thread},
    {"/api/agent/threads/*/todo", "GET", false, NULL, runapi_thread_todo},
    {"/api/agent/runs/", "GET", false, NULL, runapi_get_run},
    {"/api/agent/approvals", "GET", false, NULL, runapi_approvals},
    {"/api/agent/approvals/", "POST", true, NULL, runapi_decide},
    {"/api/agent/answers/", "POST", true, NULL, runapi_answer},
};

/* A run API route, with what it needs of the exchange. */
static int
run_api(struct exchange *x, const struct route *r, struct status_error *err)
{
    struct runapi_req q = {x->site,  x->g,   x->store, x->io,
                           x->arena, x->arg, &x->body, 0};
    int rc = r->api(&q, err);

    x->status = q.status;
    return rc;
}

/*
 * Find the route for `path`. A path that exists with another method sets
 * *allow to that method (for 405); no route at all returns NULL too.
 */
static const struct route *
route_find(const char *method, const char *path, const char **arg,
           const char **allow)
{
    bool exact_path = false; /* an exact route owns this path */

    *allow = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
        const struct route *r = &routes[i];
        size_t n = strlen(r->path);
        bool prefix = r->path[n - 1] == '/';
        const char *star = strstr(r->path, "/*/");
        bool hit;

        if (star != NULL) {
            /* prefix, one segment, the exact rest */
            size_t head = (size_t)(star - r->path) + 1;
            const char *seg = path + head, *end;
            if (strncmp(path, r->path, head) != 0)
                continue;
            end = strchr(seg, '/');
            if (end == NULL || end == seg || strcmp(end, star + 2) != 0)
                continue;
            if (strcmp(method, r->method) != 0) {
                *allow = r->method;
                continue;
            }
            *arg = seg; /* "<segment>/<rest>": the route cuts it */
            return r;
        }
        if (prefix)
            hit = !exact_path && strncmp(path, r->path, n) == 0 &&
                  path[n] != '\0' && strchr(path + n, '/') == NULL;
        else
            hit = strcmp(path, r->path) == 0 ||
                  (strncmp(path, r->path, n) == 0 &&
                   strcmp(path + n, "/") == 0);
        if (!hit)
            continue;
        exact_path = exact_path || !prefix;
        if (strcmp(method, r->method) != 0) {
            *allow = r->method;
            continue;
        }
        *arg = prefix ? path + n : NULL;
        return r;
    }
    return NULL;
}

/* --- the access line -------------------------------------------------------- */

/* An id the web server gave is kept when it is 1 to DISPATCH_ID_MAX of
 * these (nginx's $request_id is hex, Apache's UNIQUE_ID adds '@' and
 * '-'); it is echoed in a header and the log, so nothing else is. */
#define DISPATCH_ID_MAX 64
#define DISPATCH_ID_CHARS                                                      \
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@-"

/* The request's id into id[DISPATCH_ID_MAX + 1]: REQUEST_ID (nginx:
 * fastcgi_param REQUEST_ID $request_id) or UNIQUE_ID (Apache's
 * mod_unique_id) when sound, else 32 random hex digits, as nginx's. */
static void
request_id(struct httpio *io, char *id)
{
    static const char *const params[] = {"REQUEST_ID", "UNIQUE_ID"};
    unsigned char r[16] = {0};

    for (size_t i = 0; i < ARRAY_SIZE(params); i++) {
        const char *v = io->ops->param(io->ctx, params[i]);
        size_t n = v ? strlen(v) : 0;
        if (n > 0 && n <= DISPATCH_ID_MAX &&
            strspn(v, DISPATCH_ID_CHARS) == n) {
            memcpy(id, v, n + 1);
            return;
        }
    }
    if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        /* no entropy yet (early boot): unique enough for a log */
        long t = monotime_ms();
        memcpy(r, &t, sizeof(t));
        memcpy(r + sizeof(t), &io, sizeof(io));
    }
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(id + 2 * i, 3, "%02x", r[i]);
}

/*
 * What the access line calls the route, into out[size]: the routing
 * table's pattern; a prefix route's action or command name with it (the
 * names GET /_jay/actions lists), but the run API's ids are a user's
 * runs, threads and approvals: `*` for them. With no route, the path
 * (never a query: request.h), its bytes outside printable ASCII and
 * '%' as %XX, cut at `size`.
 */
static void
route_label(const struct route *r, const char *arg, const char *path, char *out,
            size_t size)
{
    const char *tail = path;
    size_t n = 0;

    if (r != NULL && (arg == NULL || strstr(r->path, "/*/") != NULL)) {
        snprintf(out, size, "%s", r->path);
        return;
    }
    if (r != NULL) {
        n = (size_t)snprintf(out, size, "%s", r->path);
        tail = r->api != NULL ? "*" : arg;
    }
    for (const unsigned char *p = (const unsigned char *)tail;
         *p != '\0' && n + 4 < size; p++) {
        if (*p > 0x20 && *p < 0x7f && *p != '%')
            out[n++] = (char)*p;
        else
            n += (size_t)snprintf(out + n, size - n, "%%%02X", *p);
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "-");
}

/* The request's access line (logmsg.h): what it asked, how it ended. */
static void
access_line(const struct httpio *io, const char *method, const struct route *r,
            const char *arg, const char *path, int status, long start_ms)
{
    char route[256], meth[17];
    size_t n = strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    struct logmsg_access a = {.id = io->request_id,
                              .method = meth,
                              .route = route,
                              .status = status,
                              .ms = monotime_ms() - start_ms,
                              .gemini_calls = io->gemini_calls,
                              .tokens_in = io->tokens_in,
                              .tokens_out = io->tokens_out};

    if (!logmsg_enabled(LOG_LVL_INFO))
        return;
    /* a method is a token of capitals (reply.c's Allow); else "-" */
    snprintf(meth, sizeof(meth), "%s",
             n > 0 && n < sizeof(meth) && method[n] == '\0' ? method : "-");
    route_label(r, arg, path, route, sizeof(route));
    logmsg_access(&a);
}

int
dispatch_request(const struct site *site, struct gemini *g, struct httpio *io,
                 struct arena *a)
{
    struct store *store = NULL;
    int status = dispatch_request_ex(site, g, &store, NULL, io, a);

    if (store != NULL)
        store->ops->close(store);
    return status;
}

int
dispatch_request_ex(const struct site *site, struct gemini *g,
                    struct store **store, const struct dispatch_host *host,
                    struct httpio *io, struct arena *a)
{
    struct arena scanned;
    struct exchange x = {.site = site,
                         .g = g,
                         .store = store,
                         .host = host,
                         .io = io,
                         .arena = a,
                         .scanned = &scanned};
    struct status_error err = {0};
    struct request_head head = {"", "", NULL};
    const struct route *r = NULL;
    const char *allow = NULL;
    char id[DISPATCH_ID_MAX + 1];
    long start_ms = monotime_ms();
    int rc;

    /* the request's jansson values live in its arena, and go with it */
    memlimit_json_arena(a);
    arena_init(&scanned);
    request_id(io, id);
    io->request_id = id;

    /* 1: which route, and is the method right; a listed origin is
     * allowed on every answer from here on (cors.h) */
    cors_decide(site->cfg, io);
    rc = request_head(io, a, &head, &err);
    if (rc != 0)
        goto out;
    /* under any base path (request_route); the messages name it whole */
    r = head.route != NULL ? route_find(head.method, head.route, &x.arg, &allow)
                           : NULL;
    if (r == NULL && allow != NULL &&
        cors_is_preflight(site->cfg, io, head.method)) {
        rc = cors_preflight(io, &err);
        x.status = rc == 0 ? 204 : 0;
        goto out;
    }
    if (r == NULL) {
        if (allow != NULL) {
            x.allow = allow;
            rc = status_set(&err, ST_METHOD, "use %s for %s", allow, head.path);
        } else {
            rc = status_set(&err, ST_NOT_FOUND, "no route for %s", head.path);
        }
        goto out;
    }
    /* 2: the body: content type, length, bytes, strict JSON */
    if (r->takes_body) {
        rc = request_json_body(io, (size_t)site->cfg->limits.max_body_bytes,
                               &scanned, &x.body, &err);
        if (rc != 0)
            goto out;
    }
    /* 3: the route's own work, which writes the answer on success */
    rc = r->run != NULL ? r->run(&x, &err) : run_api(&x, r, &err);
out:
    if (rc != 0 && !io->replied) {
        x.status = status_http(err.code);
        if (x.status >= 500)
            log_err("%s %s: %s: %s", head.method, head.path,
                    status_code(err.code), err.text);
        reply_error(io, &err, x.allow);
    }
    access_line(io, head.method, r, x.arg, head.path,
                io->replied ? x.status : 0, start_ms);
    io->request_id = NULL; /* `id` goes with this frame */
    arena_release(&scanned);
    memlimit_json_arena(NULL);
    return io->replied ? x.status : 0;
}
