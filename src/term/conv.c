/*
 * conv.c - the conversation of a terminal session with Gemini (conv.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/conv.h"
#include "agent/turn.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/status.h"
#include "store/store.h"
#include "term/args.h"
#include "term/auth.h"
#include "term/compact.h"
#include "term/streamjson.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/* A long of `obj`'s member `key` (0 when absent). */
static long
member_long(const json_t *obj, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(obj, key));

    return v > 0 && v < LONG_MAX ? (long)v : 0;
}

int
term_conv_restore(struct term_conv *conv, const struct store_chat *c,
                  bool keep_model, struct arena *a, const char **why)
{
    const json_t *tokens = json_object_get(c->usage, "tokens");
    json_t *contents = json_loads(c->contents, 0, NULL);

    if (!json_is_array(contents)) {
        json_decref(contents);
        *why = arena_printf(a,
                            "the saved session %s is damaged "
                            "(its history is not a JSON array)",
                            c->id);
        return -1;
    }
    json_decref(conv->contents);
    conv->contents = contents;
    if (!keep_model && (conv->model = strdup(c->model)) == NULL) {
        *why = NULL;
        return -1;
    }
    conv->used.prompt = member_long(tokens, "promptTokens");
    conv->used.candidates = member_long(tokens, "candidatesTokens");
    conv->used.thoughts = member_long(tokens, "thoughtsTokens");
    conv->used.cached = member_long(tokens, "cachedTokens");
    conv->used.total = member_long(tokens, "totalTokens");
    conv->used.calls = (int)member_long(tokens, "geminiCalls");
    conv->cost = json_number_value(json_object_get(c->usage, "costUsd"));
    conv->context_tokens = member_long(c->usage, "contextTokens");
    return 0;
}

int
term_conv_configure(struct term_conv *conv, const struct term_args *args,
                    const struct config *cfg, const struct term_auth *auth)
{
    const char *base = getenv("GEMINI_BASE_URL");

    if (conv->model == NULL) /* not a resumed session's */
        conv->model = strdup(args->model ? args->model
                             : cfg       ? cfg->gemini.model
                                         : CONFIG_DEFAULT_MODEL);
    conv->compaction = cfg ? cfg->gemini.compaction
                           : (struct config_compaction)CONFIG_COMPACTION_INIT;
    /* Vertex AI without GEMINI_BASE_URL: the location's own host */
    conv->gemini.base_url = strdup(base != NULL && base[0] != '\0' ? base
                                   : auth->vertex                  ? ""
                                                  : CONFIG_DEFAULT_BASE_URL);
    conv->gemini.path = strdup("(terminal)");
    conv->gemini.system_prompt = strdup("");
    conv->gemini.timeout_ms = DEFAULT_GEMINI_TIMEOUT_MS;
    if (conv->contents == NULL)
        conv->contents = json_array();
    if (conv->model == NULL || conv->gemini.base_url == NULL ||
        conv->gemini.path == NULL || conv->gemini.system_prompt == NULL ||
        conv->contents == NULL)
        return -1;
    for (size_t n = strlen(conv->gemini.base_url);
         n > 0 && conv->gemini.base_url[n - 1] == '/';)
        conv->gemini.base_url[--n] = '\0';
    conv->gemini.model = conv->model;
    return 0;
}

int
term_conv_connect(struct term_conv *conv, struct term_auth *auth,
                  bool (*gone)(void *), void *gone_ctx, const char **why,
                  struct status_error *err)
{
    *why = NULL;
    if (gemini_init(&conv->g) != 0) {
        *why = "cannot start the HTTP client (libcurl)";
        return -1;
    }
    conv->g_ok = true;
    /* an interrupt drops the Gemini call in flight */
    conv->g.gone = gone;
    conv->g.gone_ctx = gone_ctx;
    if (conv->gemini.base_url[0] == '\0') {
        free(conv->gemini.base_url);
        conv->gemini.base_url = NULL;
    }
    return term_auth_attach(auth, &conv->g, &conv->gemini, err);
}

void
term_conv_release(struct term_conv *conv)
{
    if (conv->g_ok)
        gemini_release(&conv->g);
    json_decref(conv->contents);
    free(conv->system);
    free(conv->model);
    free(conv->next_model);
    if (conv->gemini.api_key != NULL) /* a secret: wiped, not just freed */
        OPENSSL_cleanse(conv->gemini.api_key, strlen(conv->gemini.api_key));
    free(conv->gemini.api_key);
    free(conv->gemini.base_url);
    free(conv->gemini.path);
    free(conv->gemini.system_prompt);
}

int
term_conv_set_model(struct term_conv *conv, const char *model, bool in_turn)
{
    char *copy = strdup(model == NULL || strcmp(model, "default") == 0
                            ? CONFIG_DEFAULT_MODEL
                            : model);

    if (copy == NULL)
        return -1;
    if (in_turn) { /* the prompt in flight keeps its model */
        free(conv->next_model);
        conv->next_model = copy;
    } else {
        free(conv->model);
        conv->model = copy;
    }
    return 0;
}

void
term_conv_reset_prompt(struct term_conv *conv)
{
    if (conv->next_model != NULL) { /* set_model came during the last one */
        free(conv->model);
        conv->model = conv->next_model;
        conv->next_model = NULL;
    }
    memset(&conv->total, 0, sizeof(conv->total));
    memset(&conv->last, 0, sizeof(conv->last));
    conv->num_turns = 0;
    /* an error before any answer still needs an id of its own */
    snprintf(conv->msg_id, sizeof(conv->msg_id), "msg_%d", conv->msg_seq + 1);
    conv->last_text = NULL;
    conv->api_ms = 0;
    conv->api_open = false;
    memset(&conv->extra, 0, sizeof(conv->extra));
    conv->gemini.model = conv->model; /* the prompt's, whatever comes */
}

void
term_conv_said(struct term_conv *conv, const char *text)
{
    conv->last_text = text;
}

void
term_conv_thinking(struct term_conv *conv)
{
    conv->api_start = monotime_ms();
    conv->api_open = true;
}

void
term_conv_answered(struct term_conv *conv, const struct loop_usage *total)
{
    conv->api_ms += term_minus(monotime_ms(), conv->api_start);
    conv->api_open = false;
    conv->last.prompt = term_minus(total->prompt, conv->total.prompt);
    conv->last.candidates = term_minus(total->candidates,
                                       conv->total.candidates);
    conv->last.thoughts = term_minus(total->thoughts, conv->total.thoughts);
    conv->last.cached = term_minus(total->cached, conv->total.cached);
    conv->total = *total;
    conv->context_tokens = 0; /* saturating: Gemini's counts are its own */
    loop_usage_add(&conv->context_tokens, conv->last.prompt);
    loop_usage_add(&conv->context_tokens, conv->last.candidates);
    conv->num_turns++;
    snprintf(conv->msg_id, sizeof(conv->msg_id), "msg_%d", ++conv->msg_seq);
}

void
term_conv_settle(struct term_conv *conv)
{
    if (conv->api_open)
        conv->api_ms += term_minus(monotime_ms(), conv->api_start);
}

json_t *
term_conv_last_usage(const struct term_conv *conv)
{
    return term_sj_usage(&conv->last);
}

/* *sum += u, each count saturating */
static void
usage_add(struct loop_usage *sum, const struct loop_usage *u)
{
    loop_usage_add(&sum->prompt, u->prompt);
    loop_usage_add(&sum->candidates, u->candidates);
    loop_usage_add(&sum->thoughts, u->thoughts);
    loop_usage_add(&sum->cached, u->cached);
    loop_usage_add(&sum->total, u->total);
    sum->calls += u->calls;
}

struct loop_usage
term_conv_prompt_usage(const struct term_conv *conv)
{
    struct loop_usage u = conv->total;

    usage_add(&u, &conv->extra);
    return u;
}

json_t *
term_conv_session_usage(const struct term_conv *conv, struct loop_usage *all,
                        double *cost)
{
    const struct loop_usage u = term_conv_prompt_usage(conv);

    *all = conv->used;
    usage_add(all, &u);
    *cost = conv->cost + term_sj_cost(conv->model, &u);
    return json_pack("{s:o, s:f, s:I}", "tokens", loop_usage_json(all),
                     "costUsd", *cost, "contextTokens",
                     (json_int_t)conv->context_tokens);
}

void
term_conv_kept(struct term_conv *conv, const struct loop_usage *all,
               double cost)
{
    conv->used = *all;
    conv->cost = cost;
}

bool
term_conv_compact_due(const struct term_conv *conv)
{
    return term_compact_due(&conv->compaction, conv->context_tokens);
}

/* Ask Gemini for the summary of contents[0..split): its answer in *t. */
static int
summarise(struct term_conv *conv, size_t split, const json_t *tools,
          struct arena *a, struct turn *t, struct status_error *err)
{
    struct gemini_usage gu = {0};
    json_t *req, *resp = NULL;
    char *body;

    req = term_compact_request(conv->contents, split, conv->system, tools);
    /* the whole history: as large as the window, past any output bound */
    body = req ? jsonout_dumps(req, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL)
               : NULL;
    json_decref(req);
    if (body == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    conv->gemini.model = conv->model;
    long t0 = monotime_ms();
    struct gemini_request rq = {&conv->gemini, body, strlen(body), a, &gu};
    int rc = gemini_generate(&conv->g, &rq, &resp, err);
    free(body);
    conv->api_ms += term_minus(monotime_ms(), t0);
    conv->extra.calls += gu.calls;
    if (rc != 0 || turn_parse(resp, NULL, a, t, err) != 0)
        return -1;
    loop_usage_add(&conv->extra.prompt, t->prompt_tokens);
    loop_usage_add(&conv->extra.candidates, t->candidates_tokens);
    loop_usage_add(&conv->extra.thoughts, t->thoughts_tokens);
    loop_usage_add(&conv->extra.cached, t->cached_tokens);
    loop_usage_add(&conv->extra.total, t->total_tokens);
    return 0;
}

/* The settings' last few turns are kept whole, or none when `manual`
 * (/compact): the rest is replaced by Gemini's summary of it. */
int
term_conv_compact(struct term_conv *conv, bool manual, const json_t *tools,
                  struct arena *a, long *pre, struct status_error *err)
{
    size_t split = term_compact_split(conv->contents,
                                      manual ? 0 : conv->compaction.keep_turns);
    json_t *next;
    struct turn t;

    *pre = conv->context_tokens;
    if (split == 0)
        return 0;
    if (summarise(conv, split, tools, a, &t, err) != 0)
        return -1;
    if (t.text[0] == '\0' || t.end != TURN_DONE)
        return status_set(err, ST_UPSTREAM_BAD, "Gemini wrote no summary (%s)",
                          t.reason[0] ? t.reason : "empty answer");
    if ((next = term_compact_apply(conv->contents, split, t.text)) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    json_decref(conv->contents);
    conv->contents = next;
    /* until the next call says, the summary is what the context holds */
    conv->context_tokens = t.candidates_tokens;
    return 1;
}
