/*
 * chatconv.h - the conversation of a chat request: the history the
 * browser sent, the calls it left waiting answered as far as they can
 * be, the new turn, cut to the newest maxHistoryTurns turns.
 *
 * The history is never copied: `contents` holds references to the turns
 * the browser sent and to the parts Gemini returns, so thought signatures
 * and fields we do not know go back exactly as they came. The turns that
 * come unchanged from the body are also kept as their text, which every
 * Gemini request and the answer copy instead of writing them again.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CHATCONV_H
#define APP_CHATCONV_H

#include "core/common.h"

struct chat_env;
struct chatin;
struct chatwait;
struct json_t;
struct loop_text;
struct status_error;

struct chatconv {
    struct json_t *contents; /* the history being built (references) */
    size_t kept_turns; /* turns that stay when Gemini blocks the request */
    bool truncated;    /* the browser's turns were cut from the front */
    size_t trim_start; /* ... this many */
    /* the text in the body of contents[0..ntexts): turns as the browser
     * sent them, copied into the request and the answer, not rewritten */
    struct loop_text *texts;
    size_t ntexts;
    const struct json_t *sigs_in; /* the request's `signatures`, or NULL */
    size_t sigs_reuse; /* contents[0..sigs_reuse) keep those (verified)
                        * signatures */
};

/*
 * Build the conversation of the request `in` (read by chatin_read): the
 * history, then the new turn: the browser's results, the visitor's
 * decision or answer, or the visitor's message (which first closes any
 * calls left waiting), all through `w` (chatwait.h); then cut. Returns
 * 0, or -1 with `err` set (a request that answers no waiting call, an
 * invalid approval, ...).
 */
int chatconv_build(struct chatconv *conv, const struct chat_env *env,
                   struct chatwait *w, const struct chatin *in,
                   struct status_error *err);

#endif /* APP_CHATCONV_H */
