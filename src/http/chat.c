/*
 * chat.c - the browser chat protocol: geminiAgent.sendMessage and
 * geminiAgent.submitToolResults (see chat.h), as a caller of the loop.
 *
 * chat_handle() is the map of a chat request: read the body (chatin.c)
 * -> the conversation with the new turn (chatconv.c, which answers what
 * waited through chatwait.c) -> prompt + declarations -> the loop, whose
 * sink (chatsink.c) gathers what the answer needs -> the answer
 * (chatout.c). Each part owns the struct it fills; struct chat below
 * only holds them together. The files call downwards only: chat ->
 * chatsink -> chatconv -> chatwait -> chatout -> chatin.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chat.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/jscan.h"
#include "core/status.h"
#include "agent/loop.h"
#include "agent/prompt.h"
#include "agent/toolbridge.h"
#include "http/chatconv.h"
#include "http/chatin.h"
#include "http/chatout.h"
#include "http/chatsink.h"
#include "http/chatwait.h"
#include "http/ndjson.h"
#include "http/site.h"

#include <jansson.h>

/* Everything one chat request works with, by part. */
struct chat {
    struct chat_env env;  /* chatin.h: set once, read by all */
    struct chatin in;     /* the body, decoded */
    struct chatout out;   /* the answer's members */
    struct chatwait wait; /* the calls that wait for the visitor */
    struct chatconv conv; /* the conversation */
    struct chatsink sink; /* the loop's sink */
};

/* The loop's input for the request: the conversation, the site's
 * limits, who decides and who runs the calls. */
static void
loop_input_of(struct chat *c, const struct chat_request *rq,
              struct loop_input *li)
{
    const struct site *site = rq->site;
    const struct config_limits *lim = &site->cfg->limits;

    *li = (struct loop_input){.g = rq->g,
                              .gemini = &site->cfg->gemini,
                              .actions = site->actions,
                              .action_env = &site->cfg->actions,
                              .who = &c->env.who,
                              .a = rq->a,
                              .contents = c->conv.contents,
                              .texts = c->conv.texts,
                              .ntexts = c->conv.ntexts,
                              .max_steps = lim->max_loop_steps,
                              .max_calls = lim->max_calls_per_turn,
                              .max_output_tokens = lim->max_output_tokens,
                              .max_upstream_bytes = lim->max_upstream_bytes,
                              .bounds = &c->env.bounds,
                              .gate = rq->gate,
                              .decide = chatwait_decide,
                              .decide_ctx = &c->wait};
}

/*
 * The declarations and the page state, once for every step; the
 * instruction and the server actions' declarations are the site's,
 * written when it loaded. `decls` holds two: the site's server actions,
 * the page's tools.
 */
static int
prompt_of(struct chat *c, const struct chat_request *rq,
          struct loop_text decls[2], struct loop_input *li,
          struct status_error *err)
{
    const struct site *site = rq->site;

    li->system = site->prompt_head;
    li->system_json = site->instruction_json;
    decls[0].p = site->declarations_text;
    decls[0].n = site->declarations_text_len;
    if (toolbridge_page_decls(&c->env.page, rq->a, &decls[1].p, &decls[1].n,
                              err) != 0)
        return -1;
    li->decls = decls;
    li->ndecls = 2;
    /* The page state, when the browser sent one, goes after every turn:
     * it changes after every action, so nothing may follow it that a
     * cache could serve (see prompt.h). It is never part of the history
     * the browser gets back. */
    if (c->in.page_state != JSCAN_NONE &&
        prompt_page_turn_text(
            rq->body, c->in.page_state, site->cfg->limits.max_page_state_bytes,
            rq->a, &li->last_turn_text, &li->last_turn_text_len, err) != 0)
        return -1;
    return 0;
}

/* The request's environment, and the sink wired to the parts. */
static void
chat_init(struct chat *c, const struct chat_request *rq)
{
    const struct site *site = rq->site;

    c->env =
        (struct chat_env){.a = rq->a,
                          .site = site,
                          .store = rq->store,
                          .stream = rq->stream,
                          .key = {site->auth_secret, site->auth_secret_len}};
    c->sink = (struct chatsink){
        .env = &c->env, .conv = &c->conv, .wait = &c->wait, .out = &c->out};
}

int
chat_handle(const struct chat_request *rq, const char **answer,
            size_t *answer_len, struct status_error *err)
{
    struct chat c = {0};
    struct loop_text decls[2];
    struct loop_input li;

    *answer = NULL;
    chat_init(&c, rq);
    /* read and check what the browser sent; then the conversation with
     * the new turn */
    if (chatin_read(&c.env, rq->kind, rq->body, &c.in, err) != 0 ||
        chatout_init(&c.out, rq->a, err) != 0 ||
        chatwait_init(&c.wait, &c.env, &c.out, err) != 0 ||
        chatconv_build(&c.conv, &c.env, &c.wait, &c.in, err) != 0)
        return -1;
    loop_input_of(&c, rq, &li);
    if (prompt_of(&c, rq, decls, &li, err) != 0)
        return -1;

    /* Everything the request needs of the body is read or copied: drop
     * its bytes and its tape, so a chat waiting on Gemini holds neither. */
    arena_release(rq->scanned);
    c.env.page.doc = NULL;

    /* The loop: server calls run here, page calls and approvals end the
     * request; with approvals still to decide after the one the visitor
     * gave (chatwait_answer), Gemini waits too. */
    if (json_array_size(c.wait.approvals) > 0 || c.wait.question != NULL
            ? chatsink_done(&c.sink, LOOP_HANDED_BACK, NULL, err) != 0
            : chatsink_run(&c.sink, &li, err) != 0)
        return -1;
    if (chatout_write(&c.out, &c.env, &c.conv, answer, answer_len, err) != 0)
        return -1;
    return rq->stream ? ndjson_result(rq->stream, *answer, *answer_len, err)
                      : 0;
}
