/*
 * ndjson.h - the loop's events as an NDJSON answer: one JSON object per
 * line, each passed on as it is written (docs/chat-protocol.md "Streaming").
 *
 *   {"type":"status","status":"thinking"}        (also "tool", "waiting")
 *   {"type":"delta","delta":"..."}
 *   {"type":"tool-call","name":...,"args":{...},"side":"server"|"page"}
 *   {"type":"tool-result","name":...,"ok":true,"ms":12}
 *   {"type":"usage","usage":{...},"model":"..."}
 *   {"type":"result","result":{...the answer the single-JSON mode sends}}
 *   {"type":"error","error":{"code":...,"message":...,"retryAfter"?:s}}
 *
 * The answer starts late on purpose: a status line waits until something
 * else is said (or a heartbeat is due), so a request that fails before
 * Gemini said anything still gets the ordinary JSON error with its HTTP
 * status (a 429 with Retry-After, say) instead of a 200 stream that
 * holds only an error.
 *
 * A stream with nothing to say for `heartbeat_ms` repeats its status with
 * "heartbeat":true (ndjson_tick), so proxies never time it out.
 *
 * Only this file knows the encoding: another one (the AI SDK's UI message
 * stream, AG-UI) would be a sibling taking the same calls.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_NDJSON_H
#define APP_NDJSON_H

#include "core/common.h"
#include "core/sbuf.h"

struct httpio;
struct json_t;
struct loop_usage;
struct status_error;

/* The media type of the answer, and what a client asks for it with. */
#define NDJSON_TYPE "application/x-ndjson"

struct ndjson {
    struct httpio *io;
    long heartbeat_ms;
    long last_ms;       /* when the last line went out (or the stream began) */
    const char *status; /* the status now: "thinking", "tool", "waiting" */
    char tool[128];     /* ... and its tool, or "" */
    bool pending;       /* that status is not written yet */
    const char *thread; /* a run's thread, said in every status line, or
                         * NULL (the run API's stream) */
    bool started;       /* the head is out */
    struct sbuf line;   /* the line being written */
};

void ndjson_init(struct ndjson *s, struct httpio *io, long heartbeat_ms);
void ndjson_release(struct ndjson *s);

/*
 * Each returns 0, or -1 with `err` set: client_gone when a write failed
 * (the visitor hung up), or out of memory. `status` values are static
 * strings; `tool` may be NULL.
 */
int ndjson_status(struct ndjson *s, const char *status, const char *tool,
                  struct status_error *err);
int ndjson_delta(struct ndjson *s, const char *text, size_t len,
                 struct status_error *err);
int ndjson_tool_call(struct ndjson *s, const char *name,
                     const struct json_t *args, bool page, const char *id,
                     struct status_error *err);
int ndjson_tool_result(struct ndjson *s, const char *name, bool ok, long ms,
                       struct status_error *err);
/* the usage as loop_usage_json() writes it */
int ndjson_usage(struct ndjson *s, const struct loop_usage *u,
                 const char *model, struct status_error *err);
/* The last line: the answer (JSON text of `len` bytes), or the error. */
int ndjson_result(struct ndjson *s, const char *answer, size_t len,
                  struct status_error *err);
int ndjson_error(struct ndjson *s, const struct status_error *e);

/* Does the request ask for a stream? Its Accept names NDJSON_TYPE. */
bool ndjson_wanted(struct httpio *io);

/*
 * The end of a streamed answer whose work returned `rc`. Once the stream
 * started (200 is out), a failure is its last line - logged like the JSON
 * error would have been, `what` naming the route - and the answer is
 * done: 0, with *status 200. Before that, `rc` stands: the caller answers
 * the ordinary error. The stream is released either way.
 */
int ndjson_end(struct ndjson *s, int rc, const char *what,
               const struct status_error *err, int *status);

/* A heartbeat when one is due. */
int ndjson_tick(struct ndjson *s, struct status_error *err);

#endif /* APP_NDJSON_H */
