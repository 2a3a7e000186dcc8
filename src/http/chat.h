/*
 * chat.h - the chat protocol: geminiAgent.sendMessage and
 * geminiAgent.submitToolResults (docs/chat-protocol.md), a caller of
 * the agent loop.
 *
 * The browser sends the whole history with every request; the answer
 * carries it back with the new turns. Between the two, chat_handle() runs
 * up to maxLoopSteps Gemini calls: server actions the model asks for run
 * here at once; page-tool calls end the request and go to the browser,
 * whose results come back with submitToolResults.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHAT_H
#define APP_CHAT_H

#include "core/common.h"

struct arena;
struct gemini;
struct jscan_doc;
struct loop_gate;
struct ndjson;
struct json_t;
struct site;
struct status_error;
struct store;

enum chat_kind { CHAT_SEND_MESSAGE, CHAT_SUBMIT_RESULTS };

/* The registered names of the two (actions/geminiAgent/plugin.yaml):
 * their .jay-action files describe the protocol, and a request's body is
 * validated against the inputSchema of its kind when the site loaded it. */
#define CHAT_ACTION_SEND   "geminiAgent.sendMessage"
#define CHAT_ACTION_SUBMIT "geminiAgent.submitToolResults"

/* The members a request body of `kind` may have, NULL-terminated: what
 * the route reads, which its inputSchema describes (chatin.c). */
const char *const *chat_request_members(enum chat_kind kind);

/* Every `type` an answer can have, NULL-terminated: the outputSchema's
 * enum (chatout.c). */
extern const char *const chat_answer_types[];

/* One chat request, as the route hands it over. */
struct chat_request {
    const struct site *site;
    struct gemini *g;
    struct store **store; /* the thread's store, opened on use */
    struct arena *a;      /* the request's */
    enum chat_kind kind;
    const struct jscan_doc *body; /* the scanned body */
    struct arena *scanned;        /* its bytes and tape, released once read,
                            * before the first Gemini call */
    struct ndjson *stream;        /* NULL: one JSON answer */
    /* asked before every Gemini call (the budget's, budget.h), or NULL:
     * none; what the calls used is left in it, whatever happens */
    struct loop_gate *gate;
};

/*
 * Answer the chat request `rq`. Returns 0 with `*answer` (`*answer_len`
 * bytes, in rq->a) the JSON text of the answer, or -1 with `err` set
 * (its retry_after_s set for a rate limit). With a stream the events go
 * out as they happen and the answer is already written as its last line;
 * without, the caller sends it with 200. A stream that failed
 * (stream->started) needs its error line.
 *
 * The request's parts, each in its file: chatin.c reads the body,
 * chatconv.c builds the conversation, chatwait.c answers what waits for
 * the visitor and decides who answers each call, chatsink.c gathers
 * what the loop reports, chatout.c writes the answer.
 */
int chat_handle(const struct chat_request *rq, const char **answer,
                size_t *answer_len, struct status_error *err);

#endif /* APP_CHAT_H */
