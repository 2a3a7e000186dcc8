/*
 * seal.h - what the server vouches for in the state a browser holds: the
 * turns of the chat history and the tickets of approvals
 * (docs/chat-protocol.md).
 *
 * The chat is stateless, so the history comes back from the browser on
 * every request; left alone, a client could write the model's turns
 * itself (say, one calling action_shop_addReview) or invent what a
 * server action returned. So each turn the server wrote carries a
 * signature (a MAC with the site secret, core/token.h), kept by the
 * browser in `signatures` beside `history` (Gemini refuses any member of
 * a turn but role and parts, and the turns go to Gemini as the browser
 * sent them):
 *
 *   signatures[i] = MAC("ga-turn/1\n" i "\n" prev "\n"
 *                       canonical(the unsigned turns since prev) "\n"
 *                       role "\n" canonical(signed parts of history[i]))
 *
 * where prev is the signature of the signed turn before it ("-" for the
 * first): a turn cannot move, turns of two conversations cannot be mixed,
 * and what came before a signed turn cannot change under it. The signed
 * parts of a model turn are all of them; of a user turn, the answers of
 * server actions (functionResponse with an action_ name). The visitor's
 * own words and the page tools' results are the browser's to give: a
 * user turn of those needs no signature of its own (its entry is null) -
 * the browser adds one when Stop ends a request - and page results can
 * only answer the calls of a signed model turn (history_check pairs calls
 * and answers); once the model answered them, its turn covers them. The
 * page's results inside a user turn with server answers are not covered
 * (the browser completes such a turn when Stop ends a request). The
 * canonical text (core/canon.h) survives JavaScript's JSON round trip.
 *
 * An approval ticket binds one waiting call of a side-effect action to
 * the conversation it was asked in:
 *
 *   "t1." expiry_ms "." MAC("ga-ticket/1\n" expiry_ms "\n"
 *        MAC("ga-conv/1\n" canonical(history[0..turn])) "\n"
 *        canonical({action, args, id, turn, part}))
 *
 * Its MAC is also its id, which the store keeps until the expiry so that
 * it works once.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SEAL_H
#define APP_SEAL_H

#include "core/common.h"
#include "agent/bounds.h"
#include "core/token.h"

struct json_t;
struct status_error;

/* The site secret (auth.secretFile). */
struct seal_key {
    const unsigned char *secret;
    size_t len;
};

#define SEAL_TICKET_SIZE (BOUND_TICKET_LEN + 1)

/* Does history turn `turn` need a signature (see above)? */
bool seal_needed(const struct json_t *turn);

/*
 * Check every turn of `history` that needs a signature against
 * `signatures` (an array as long as the history, or NULL: none given).
 * 0, or -1 with ST_HISTORY_TAMPERED naming the first turn that fails
 * (ST_NO_MEMORY, ST_INTERNAL when the MAC cannot be computed).
 */
int seal_verify(const struct seal_key *k, const struct json_t *history,
                const struct json_t *signatures,
                struct status_error *err) ATTR_WUR;

/*
 * The signatures of `turns` (a new array, an entry per turn: a string or
 * null), or NULL with `err`. The first `reuse` entries are taken from
 * `known` (signatures seal_verify() accepted for the same turns at the
 * same places) instead of being computed again.
 */
struct json_t *seal_sign(const struct seal_key *k, const struct json_t *turns,
                         const struct json_t *known, size_t reuse,
                         struct status_error *err);

/* One waiting call of an action with side effects. */
struct seal_call {
    const char *action;        /* registered name, "shop.addReview" */
    const struct json_t *args; /* its arguments, exactly */
    const char *id;            /* the call id the browser knows */
    size_t turn, part;         /* history[turn].parts[part] */
};

/* The ticket for `c` in `history` (turns 0..c->turn count), good until
 * expires_ms, into out. 0, or -1 with `err`. */
int seal_ticket(const struct seal_key *k, const struct json_t *history,
                const struct seal_call *c, long long expires_ms,
                char out[SEAL_TICKET_SIZE], struct status_error *err) ATTR_WUR;

/*
 * Does `ticket` approve `c` in `history` at now_ms? 0 with the ticket's id
 * (its MAC) and expiry, or -1 with ST_APPROVAL_INVALID ("does not match"
 * or "expired"; nothing more specific).
 */
int seal_ticket_check(const struct seal_key *k, const struct json_t *history,
                      const struct seal_call *c, const char *ticket,
                      long long now_ms, char id[TOKEN_MAC_SIZE],
                      long long *expires_ms, struct status_error *err) ATTR_WUR;

#endif
