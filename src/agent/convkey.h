/*
 * convkey.h - the key of a widget conversation, for plugins that keep
 * state per conversation (plugin.h's ctx->conversation).
 *
 * The chat is stateless: the browser holds the history and sends it back
 * on every request, so "this conversation" needs a name the server can
 * trust. A hash of the first turn would not do (two visitors who both
 * open with "hello" would share one), and the first turn's signature
 * (agent/seal.h) does not exist yet when the model calls a tool in its
 * very first answer. So the server mints one: on a request without one,
 *
 *     token = "c1." hex(16 random bytes) "." MAC("ga-conv-key/1\n" hex)
 *
 * goes back in the answer (`conversation`), the browser keeps it beside
 * the history and sends it with every later request of that
 * conversation. The key handed to plugins is "chat:" hex - a different
 * namespace from the run API's thread ids. A client cannot choose a key
 * (the MAC) nor guess another visitor's (128 random bits). Without a site
 * secret (history.verify: off and no auth.secretFile) the token is
 * "c1." hex alone and any such value is accepted: the key is then only as
 * good as the client, which may pick any name it likes.
 *
 * This is not a session: it names a conversation, it grants nothing
 * beyond the state plugins keep under it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CONVKEY_H
#define APP_CONVKEY_H

#include "core/common.h"

struct arena;
struct seal_key;
struct status_error;

/*
 * Resolve `given` (the request's `conversation`, or NULL: none) under
 * `k` (len 0: no secret). A NULL `given` mints a new token. Returns 0 with
 * `*token` (what the answer carries) and `*key` (what plugins see), both
 * in `a`; or -1 with `err`: ST_BAD_REQUEST for a token this server did
 * not issue, ST_NO_MEMORY, ST_INTERNAL (no randomness, MAC failed).
 */
int convkey_resolve(const struct seal_key *k, const char *given,
                    struct arena *a, const char **token, const char **key,
                    struct status_error *err) ATTR_WUR;

#endif /* APP_CONVKEY_H */
