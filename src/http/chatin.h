/*
 * chatin.h - a chat request as it came: its body decoded and checked
 * (the shape, the bounds, the protocol's schema, the signatures of the
 * turns the server wrote), and the request's environment every other
 * part of the chat reads (chat.c is the map).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHATIN_H
#define APP_CHATIN_H

#include "core/common.h"
#include "agent/seal.h"
#include "agent/toolbridge.h"
#include "agent/turn.h"
#include "http/chat.h"
#include "registry/action.h"

struct arena;
struct jscan_doc;
struct json_t;
struct ndjson;
struct site;
struct status_error;
struct store;

/* What one chat request works with, set before its body is read (the
 * first four) and while it is read (chatin_read): read by every part. */
struct chat_env {
    struct arena *a;
    const struct site *site;
    struct store **store;  /* the thread's store, opened on use */
    struct ndjson *stream; /* a streamed answer: the events go out as
                            * they happen (NULL: one JSON answer at the
                            * end) */
    struct seal_key key;   /* the site secret (agent/seal.h); len 0: none */
    /* what a later request carries of the history (turn.h) */
    struct turn_bounds bounds;
    struct toolbridge_page page; /* the page's tools, read from the body */
    /* the conversation's key (agent/convkey.h): the token the answer
     * carries, and who runs the server actions (no user: the widget) */
    const char *conv_token;
    struct action_who who;
};

/* The visitor's decision on one waiting call (submitToolResults'
 * `approval`). */
struct chat_approval {
    const char *id, *ticket;
    bool approve;
};

/* The visitor's answer to a waiting question (submitToolResults'
 * `answer`). */
struct chat_answer {
    const char *id;
    const struct json_t *answers;
};

/* The request's body, decoded: pointers into its tree (in the arena). */
struct chatin {
    enum chat_kind kind;
    const struct jscan_doc *doc; /* its bytes and tape, until the loop */
    /* the body's tree, less pageState and toolDefinitions */
    const struct json_t *body;
    const char *message;
    const char *conversation; /* the key's token (convkey.h), or NULL */
    struct json_t *history, *results, *signatures;
    struct chat_approval approval;
    bool has_approval;
    struct chat_answer answer;
    bool has_answer;
    /* the page state and the tools stay spans of the body: their nodes,
     * or JSCAN_NONE */
    size_t page_state, tool_defs;
};

/*
 * Read the body `doc` of a request of `kind` into `in`: decode its shape,
 * bound and check what the browser sent (the page's tools into
 * env->page, the history, the protocol's inputSchema, the signatures of
 * the server's turns) and resolve the conversation's key (env->who,
 * env->conv_token). env->a, site and key are set; env->bounds is set
 * here. Returns 0, or -1 with `err` set (400, invalid history, ...).
 */
int chatin_read(struct chat_env *env, enum chat_kind kind,
                const struct jscan_doc *doc, struct chatin *in,
                struct status_error *err);

#endif /* APP_CHATIN_H */
