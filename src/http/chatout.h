/*
 * chatout.h - the answer of a chat request: what ran and what was
 * handed back (gathered as the loop goes), the usage, and the one JSON
 * answer built from them and the conversation (chat.h's answer types,
 * docs/chat-protocol.md), written as text.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHATOUT_H
#define APP_CHATOUT_H

#include "core/common.h"
#include "agent/loop.h"

struct arena;
struct chat_env;
struct chatconv;
struct json_t;
struct status_error;
struct toolbridge_tool;

/* The answer types, as chat_answer_types names them. */
enum chatout_type {
    CHATOUT_RESPONSE,
    CHATOUT_TOOL_CALLS,
    CHATOUT_BLOCKED,
    CHATOUT_APPROVAL,
    CHATOUT_QUESTION,
};

/* The answer's members as they are gathered; all in the arena. */
struct chatout {
    struct json_t *server_calls; /* [{name, args, ok, ms}] */
    struct json_t *page_calls;   /* [{id, name, args, category}] */
    struct loop_usage usage;
    const char *model;     /* modelVersion of the last answer, or NULL */
    struct json_t *answer; /* built when the loop is done */
};

/* Empty lists of calls, pinned to `a`. 0, or -1 when out of memory. */
int chatout_init(struct chatout *o, struct arena *a, struct status_error *err);

/*
 * The browser's handle of the call contents[turn].parts[part]: Gemini's
 * own functionCall.id when there is one, else "call_<turn>_<part>" from
 * the call's position in the history the browser holds - unique within
 * the conversation, and derivable again when the results come back, so
 * the server needs no session. In `a`; NULL when out of memory.
 */
const char *chatout_call_id(struct arena *a, const struct json_t *call,
                            size_t turn, size_t part);

/* A server action that ran: its registered `name`, `args`, whether it
 * succeeded, how long it took. */
int chatout_server_call(struct chatout *o, const char *name,
                        const struct json_t *args, bool ok, long ms,
                        struct status_error *err);

/* A page call handed to the browser: its handle `id`, and `tool` as the
 * page declared it. */
int chatout_page_call(struct chatout *o, const char *id,
                      const struct toolbridge_tool *tool,
                      const struct json_t *args, struct status_error *err);

/* Begin the answer of `type`, with the members every answer has (the
 * conversation, its signatures when the site has a secret, usage, the
 * server calls) and `message` (NULL: none). 0, or -1 when out of
 * memory. */
int chatout_begin(struct chatout *o, const struct chat_env *env,
                  const struct chatconv *conv, enum chatout_type type,
                  const char *message, struct status_error *err);

/* Add `key: value` to the answer begun; the reference to `value` is
 * taken, also when there is no answer (it could not be begun). */
int chatout_add(struct chatout *o, const char *key, struct json_t *value,
                struct status_error *err);

/* The answer as JSON text: our writer's bytes for o->answer, with the
 * history's turns from the browser copied (loop_write_turns). *text is
 * in the arena. */
int chatout_write(const struct chatout *o, const struct chat_env *env,
                  const struct chatconv *conv, const char **text, size_t *len,
                  struct status_error *err);

#endif /* APP_CHATOUT_H */
