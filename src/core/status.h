/*
 * status.h - what went wrong, as a value: status codes and error detail.
 *
 * Every failure in gemini-agent is an `enum status` plus a message a user can
 * act on. status.c holds the one table that maps a status to its wire code
 * (the snake_case `error.code` of the JSON envelope) and its HTTP status;
 * nothing else decides between 400, 413 or 502.
 *
 * An error may carry detail a client can act on: where in the input and
 * which schema rule (a schema violation), and when to come back (upstream
 * rate limit or outage). status_json() and status_text() are the one way
 * an error is written out, so an HTTP envelope, the last line of a stream
 * and a terminal message say the same thing.
 *
 * Not here: writing the error to the client (see reply.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_STATUS_H
#define APP_STATUS_H

#include "core/common.h"

/* Longest error message we keep; longer ones are cut at a UTF-8 boundary. */
#define STATUS_TEXT_MAX 384
/* Longest JSON pointer kept as an error's `path` (with its NUL). Schema
 * violations are as deep as BOUND_SCHEMA_DEPTH (core/bounds.h); 255 bytes
 * name every honest path, and jschema marks a longer one as cut with
 * "...". */
#define STATUS_PATH_MAX 256

struct json_t;

/* Append only: values may be logged or tested by number. */
enum status {
    ST_OK = 0,
    ST_INTERNAL,        /* 500 internal_error: our bug or the OS failed */
    ST_NO_MEMORY,       /* 500 internal_error */
    ST_INVALID_JSON,    /* 400 invalid_json: syntax, UTF-8, duplicates, depth */
    ST_BAD_REQUEST,     /* 400 bad_request: JSON of the wrong shape */
    ST_BAD_LENGTH,      /* 400 bad_content_length: garbage CONTENT_LENGTH */
    ST_SHORT_BODY,      /* 400 incomplete_body: fewer bytes than announced */
    ST_NOT_FOUND,       /* 404 not_found: no such route */
    ST_UNKNOWN_ACTION,  /* 404 unknown_action */
    ST_METHOD,          /* 405 method_not_allowed */
    ST_TOO_LARGE,       /* 413 payload_too_large */
    ST_MEDIA_TYPE,      /* 415 unsupported_media_type */
    ST_SCHEMA,          /* 422 schema_violation */
    ST_ACTION_FAILED,   /* 500 action_failed: a handler reported failure */
    ST_CONFIG,          /* 500 config_error: the config cannot be loaded */
    ST_NOT_CONFIGURED,  /* 503 not_configured: e.g. no API key */
    ST_INVALID_HISTORY, /* 400 invalid_history */
    ST_TOOL_CONFLICT,   /* 400 tool_name_conflict */
    ST_UPSTREAM_AUTH,   /* 502 upstream_auth */
    ST_UPSTREAM_REJECTED,    /* 502 upstream_rejected */
    ST_UPSTREAM_RATE,        /* 503 upstream_rate_limited */
    ST_UPSTREAM_DOWN,        /* 503 upstream_unavailable */
    ST_UPSTREAM_TIMEOUT,     /* 504 upstream_timeout */
    ST_UPSTREAM_BAD,         /* 502 upstream_bad_response */
    ST_PAGE_STATE_TOO_LARGE, /* 413 page_state_too_large */
    ST_OVERLOADED,           /* 503 overloaded: every thread busy, queue full */
    ST_CLIENT_GONE,          /* 499 client_gone: the visitor hung up */
    ST_UNAUTHORIZED,         /* 401 unauthorized: no identity, or a bad one */
    ST_CONFLICT,           /* 409 conflict: e.g. an approval already decided */
    ST_STORE,              /* 500 store_error: the database failed */
    ST_SCHEMA_NEWER,       /* 500 store_schema_newer: a newer program's store */
    ST_FORBIDDEN,          /* 403 forbidden: not for this caller, by policy */
    ST_BUDGET_EXHAUSTED,   /* 429 budget_exhausted: a client's, a user's or
                           * the site's budget is spent (Retry-After) */
    ST_BUDGET_UNAVAILABLE, /* 503 budget_unavailable: the counters cannot
                            * be read, so nothing is spent (fail closed) */
    ST_UPSTREAM_TOO_LARGE, /* 413 upstream_too_large: the request would send
                            * more than maxUpstreamBytes to Gemini */
    ST_HISTORY_TAMPERED,   /* 400 history_tampered: a turn the server did
                           * not sign where its signature must be */
    ST_APPROVAL_INVALID,   /* 403 approval_invalid: a ticket that does not
                           * verify, has expired or was used */
    ST_ORIGIN_NOT_ALLOWED, /* 403 origin_not_allowed: a CORS preflight from
                            * an origin not in http.cors.allowOrigins */
    ST__COUNT
};

/*
 * The caller owns the detail. First error wins: once `code` is set, later
 * status_set*() calls leave all of it alone (text and detail), so the root
 * cause survives cleanup. Zero-initialise (`struct status_error err =
 * {0};`) before first use.
 *
 * The detail is zero/empty when it does not apply. `rule != NULL` is the
 * one signal that `path` applies: "" is a valid path (the instance root),
 * so the path alone cannot say it.
 */
struct status_error {
    enum status code;
    char text[STATUS_TEXT_MAX];
    /* a schema violation: the keyword broken (static), or NULL */
    const char *rule;
    /* with `rule`: JSON pointer into the instance, "" for the root */
    char path[STATUS_PATH_MAX];
    /* seconds after which a retry makes sense (Retry-After); 0 = none */
    long retry_after_s;
};

/*
 * Record `code` and a printf-style message in `e` unless it already holds
 * an error; the detail is left empty. `e` may be NULL. Always returns -1,
 * so callers can write `return status_set(err, ST_X, "...");`.
 */
int status_set(struct status_error *e, enum status code, const char *fmt, ...)
    ATTR_FMT(3, 4);

/*
 * status_set(e, ST_SCHEMA, ...) with the violation's `path` (cut at a UTF-8
 * boundary to fit) and `rule` (a static string; NULL is taken as "").
 */
int status_set_schema(struct status_error *e, const char *path,
                      const char *rule, const char *fmt, ...) ATTR_FMT(4, 5);

/*
 * status_set(e, code, ...) with a retry hint of `retry_after_s` seconds
 * (<= 0: none), for failures that pass when the caller waits.
 */
int status_set_retry(struct status_error *e, enum status code,
                     long retry_after_s, const char *fmt, ...) ATTR_FMT(4, 5);

/* status_set(e, ST_NO_MEMORY, "out of memory"): the one way every module
 * reports a failed allocation. Always returns -1. */
int status_oom(struct status_error *e);

/* Forget a recorded error and its detail (used where a failure is expected
 * and handled). */
void status_clear(struct status_error *e);

/*
 * The error as the JSON object every writer sends: {"code": <wire code>,
 * "message": <text, invalid UTF-8 replaced by '?'>} plus "path" and "rule"
 * when `rule` is set. ST_OK is written as an internal error. Returns a new
 * reference, or NULL when out of memory.
 */
struct json_t *status_json(const struct status_error *e);

/*
 * The error as one line of plain text for a terminal or a log, e.g.
 * "schema_violation: /limit: must be <= 50 (maximum)". Invalid UTF-8 and
 * control characters become '?', so the line cannot break or carry escape
 * sequences. Returns 0, or -1 when `buf` was too small (the line is then
 * cut at a UTF-8 boundary; with n > 0 it is always terminated).
 */
int status_text(const struct status_error *e, char *buf, size_t n);

/* The snake_case wire code of `code`, e.g. "payload_too_large". Static. */
const char *status_code(enum status code);

/* The HTTP status for `code`, e.g. 413. ST_OK maps to 200. */
int status_http(enum status code);

/* The HTTP reason phrase for an HTTP status, e.g. "Payload Too Large". */
const char *status_reason(int http);

#endif /* APP_STATUS_H */
