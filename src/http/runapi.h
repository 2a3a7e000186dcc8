/*
 * runapi.h - the run API's routes (docs/http-api.md, "The run
 * API"):
 *
 *   POST /api/agent/run            a run; one JSON answer
 *   POST /api/agent/run/stream     the same, as NDJSON events
 *   GET  /api/agent/session        signed in or not, and as whom
 *   GET  /api/agent/threads        the user's threads, newest first
 *   GET  /api/agent/threads/{id}   {"thread": {...}, "messages": [...]}
 *   GET  /api/agent/runs/{id}      the run's state and actions
 *   GET  /api/agent/approvals      ?status=pending (or any status)
 *   POST /api/agent/approvals/{id} {decision, feedback?}: the run resumes;
 *                                  NDJSON when asked with Accept
 *
 * Every route but the session needs an identity (auth.h): without one,
 * 401. Another
 * user's thread, run or approval is "not found".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_RUNAPI_H
#define APP_RUNAPI_H

#include "core/common.h"

struct arena;
struct gemini;
struct httpio;
struct jscan_doc;
struct json_t;
struct plugin_action;
struct site;
struct status_error;
struct store;

/* What a run API route gets from dispatch. */
struct runapi_req {
    const struct site *site;
    struct gemini *g;
    struct store **store; /* the thread's connection, opened on first use */
    struct httpio *io;
    struct arena *a;
    const char *arg;              /* the path's {id}, or NULL */
    const struct jscan_doc *body; /* POST routes */
    int status;                   /* the HTTP status sent */
};

/*
 * May this request run `act`, an action with side effects, over POST
 * /_jay/actions/<name> (http.directActions)? readOnly: nobody may (the
 * assistant runs it, after asking); authenticated: a signed-in user whom
 * the policy (policy.h) lets act without an approval. 0, or -1 with `err`
 * set: 403 forbidden (with the reason), or 401 without an identity.
 */
int runapi_direct_allowed(const struct site *site, struct store **store,
                          struct httpio *io, const char *name,
                          const struct json_t *args, struct status_error *err);

int runapi_run(struct runapi_req *q, struct status_error *err);
int runapi_run_stream(struct runapi_req *q, struct status_error *err);
/* GET /api/agent/session: who the request's identity is, always 200:
 * {"signedIn": true, "user"} or {"signedIn": false, "reason"} (the 401's
 * words: none given, expired, ...). Any other failure is an error. */
int runapi_session(struct runapi_req *q, struct status_error *err);
int runapi_threads(struct runapi_req *q, struct status_error *err);
int runapi_thread(struct runapi_req *q, struct status_error *err);
/* GET /api/agent/threads/:id/todo: the thread's plan as the todo plugin's
 * `show` tool answers it ({"todo": {"steps": [...]}}), for the thread's
 * owner only (404 for another user's thread, as for the thread itself);
 * 404 when the site exposes no todo plugin. */
int runapi_thread_todo(struct runapi_req *q, struct status_error *err);
int runapi_get_run(struct runapi_req *q, struct status_error *err);
int runapi_approvals(struct runapi_req *q, struct status_error *err);
int runapi_decide(struct runapi_req *q, struct status_error *err);
int runapi_answer(struct runapi_req *q, struct status_error *err);

#endif /* APP_RUNAPI_H */
