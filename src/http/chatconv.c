/*
 * chatconv.c - the conversation of a chat request (see chatconv.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chatconv.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/jscan.h"
#include "core/status.h"
#include "agent/history.h"
#include "agent/loop.h"
#include "http/chatin.h"
#include "http/chatwait.h"
#include "http/site.h"

#include <jansson.h>
#include <string.h>

/* The history the browser sent, then the new turn: the browser's
 * results, or the visitor's message (which first closes any calls left
 * waiting). */
static int
with_new_turn(struct chatconv *conv, const struct chat_env *env,
              struct chatwait *w, const struct chatin *in,
              struct status_error *err)
{
    const char *msg;
    size_t len;

    conv->contents = arena_take_json(env->a, json_array());
    if (conv->contents == NULL ||
        (in->history && json_array_extend(conv->contents, in->history) != 0))
        return status_oom(err);
    if (chatwait_answer(w, conv->contents, in, err) != 0)
        return -1;
    conv->kept_turns = json_array_size(conv->contents);
    if (in->kind != CHAT_SEND_MESSAGE)
        return 0;
    /* the plugins' enrichment: what they make of the message is what
     * Gemini reads and the history keeps */
    if (site_enrich_prompt(env->site, env->a, in->message, strlen(in->message),
                           &msg, &len, err) != 0)
        return -1;
    if (json_array_append_new(conv->contents,
                              json_pack("{s:s, s:[{s:s%}]}", "role", "user",
                                        "parts", "text", msg, len)) != 0)
        return status_oom(err);
    return 0;
}

/* Cut to the newest `max_turns` turns (history_trim_start). */
static int
trim(struct chatconv *conv, const struct chat_env *env, struct chatwait *w,
     long max_turns, struct status_error *err)
{
    size_t keep = history_trim_start(conv->contents, (size_t)max_turns);
    json_t *trimmed;

    if (keep == 0)
        return 0;
    if ((trimmed = arena_take_json(env->a, json_array())) == NULL)
        return status_oom(err);
    for (size_t i = keep; i < json_array_size(conv->contents); i++)
        if (json_array_append(trimmed, json_array_get(conv->contents, i)) != 0)
            return status_oom(err);
    conv->contents = trimmed;
    conv->kept_turns = conv->kept_turns > keep ? conv->kept_turns - keep : 0;
    if (chatwait_shift(w, keep, err) != 0)
        return -1;
    conv->truncated = true;
    conv->trim_start = keep;
    return 0;
}

/*
 * The texts of the turns that begin `contents` as the browser sent them:
 * the same tree as history[trim_start + j], and compact in the body (as
 * our writer writes it: JSCAN_CANON), so copying the span writes the same
 * bytes. The first turn that is not ends the run. The texts are copied
 * into the request's arena: the body does not outlive the loop's start.
 */
static int
turn_texts(struct chatconv *conv, struct arena *a, const struct jscan_doc *body,
           const json_t *history, struct status_error *err)
{
    size_t hist = jscan_member(body, 0, "history"), node, n, j;

    if (history == NULL || jscan_type(body, hist) != JSCAN_ARRAY)
        return 0;
    n = json_array_size(conv->contents);
    conv->texts = arena_calloc(a, n ? n : 1, sizeof(*conv->texts));
    if (conv->texts == NULL)
        return status_oom(err);
    node = jscan_child(body, hist);
    for (j = 0; j < conv->trim_start && node != JSCAN_NONE; j++)
        node = jscan_next(body, hist, node);
    for (j = 0; j < n && node != JSCAN_NONE;
         j++, node = jscan_next(body, hist, node)) {
        if (json_array_get(conv->contents, j) !=
                json_array_get(history, conv->trim_start + j) ||
            !(jscan_flags(body, node) & JSCAN_CANON))
            break;
        conv->texts[j].p = body->buf + body->nodes[node].off;
        conv->texts[j].n = body->nodes[node].len;
    }
    conv->ntexts = j;
    /* copied out: the body goes before the loop (chat_handle) */
    for (j = 0; j < conv->ntexts; j++)
        if ((conv->texts[j].p = arena_strndup(a, conv->texts[j].p,
                                              conv->texts[j].n)) == NULL)
            return status_oom(err);
    return 0;
}

int
chatconv_build(struct chatconv *conv, const struct chat_env *env,
               struct chatwait *w, const struct chatin *in,
               struct status_error *err)
{
    const struct config *cfg = env->site->cfg;

    memset(conv, 0, sizeof(*conv));
    if (with_new_turn(conv, env, w, in, err) != 0 ||
        trim(conv, env, w, cfg->limits.max_history_turns, err) != 0 ||
        turn_texts(conv, env->a, in->doc, in->history, err) != 0)
        return -1;
    /* the turns the browser sent unchanged keep their signatures */
    if (cfg->history.verify && conv->trim_start == 0) {
        conv->sigs_in = in->signatures;
        while (conv->sigs_reuse < json_array_size(in->history) &&
               json_array_get(conv->contents, conv->sigs_reuse) ==
                   json_array_get(in->history, conv->sigs_reuse))
            conv->sigs_reuse++;
    }
    return 0;
}
