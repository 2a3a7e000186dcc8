/*
 * saved.c - the saved session and compaction (session_int.h, keep.h,
 * compact.h): saved after every prompt, carried on by --resume and
 * --continue, its oldest turns summarised when it nears the window.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session_int.h"
#include "agent/turn.h"
#include "core/jsonout.h"
#include "core/monotime.h"
#include "core/status.h"
#include "store/store.h"
#include "term/compact.h"
#include "term/keep.h"
#include "term/streamjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Save the session: its history, model, folder and usage so far (this
 * prompt's included). Called before the prompt's result is written, so
 * what the host was told is kept. A failure is said on stderr only: the
 * answer stands, only --resume would miss it.
 */
void
ts_keep_save(struct term_session *s)
{
    const struct loop_usage u = ts_prompt_usage(s);
    struct status_error err = {0};
    struct loop_usage all = s->used;
    char *contents;
    json_t *usage;

    if (s->keep == NULL || json_array_size(s->contents) == 0)
        return;
    loop_usage_add(&all.prompt, u.prompt);
    loop_usage_add(&all.candidates, u.candidates);
    loop_usage_add(&all.thoughts, u.thoughts);
    loop_usage_add(&all.cached, u.cached);
    contents = jsonout_dumps(s->contents, APP_JSON_FLAGS, JSONOUT_UNBOUNDED,
                             NULL);
    loop_usage_add(&all.total, u.total);
    all.calls += u.calls;
    usage = json_pack("{s:o, s:f, s:I}", "tokens", loop_usage_json(&all),
                      "costUsd", s->cost + term_sj_cost(s->model, &u),
                      "contextTokens", (json_int_t)s->context_tokens);
    const struct store_chat c = {
        .id = s->session_id,
        .cwd = s->cwd,
        .model = s->model,
        .contents = contents,
        .usage = usage,
    };
    if (contents == NULL || usage == NULL)
        status_set(&err, ST_NO_MEMORY, "out of memory");
    else if (s->keep->ops->chat_save(s->keep, &c, &err) == 0) {
        s->saved = true;
        s->used = all;
        s->cost += term_sj_cost(s->model, &u);
    }
    if (err.code != ST_OK)
        fprintf(stderr, "gemini-agent chat: the session was not saved: %s\n",
                err.text);
    free(contents);
    json_decref(usage);
}

/* Is `text` the /compact command (Claude Code's)? */
bool
ts_is_compact_command(const char *text)
{
    while (*text == ' ' || *text == '\t' || *text == '\n')
        text++;
    if (strncmp(text, "/compact", 8) != 0)
        return false;
    for (text += 8; *text == ' ' || *text == '\t' || *text == '\n';)
        text++;
    return *text == '\0';
}

/*
 * Replace the oldest turns by a summary Gemini writes of them (compact.h),
 * all of them when `manual` (/ts_compact), else all but the configured last
 * few. 1 when it compacted, 0 when there was nothing to ts_compact, -1 with
 * `err` when the call failed (the conversation is then unchanged).
 */
int
ts_compact(struct term_session *s, bool manual, struct status_error *err)
{
    size_t split = term_compact_split(
        s->contents, manual ? 0 : s->compaction.keep_turns);
    struct gemini_usage gu = {0};
    char *body;
    json_t *req, *resp = NULL, *next;
    struct turn t;
    long pre = s->context_tokens;

    if (split == 0)
        return 0;
    req = term_compact_request(s->contents, split, s->system, s->tools_json);
    /* the whole history: as large as the window, past any output bound */
    body = req ? jsonout_dumps(req, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, NULL)
               : NULL;
    json_decref(req);
    if (body == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    s->gemini.model = s->model;
    long t0 = monotime_ms();
    struct gemini_request rq = {&s->gemini, body, strlen(body), &s->a, &gu};
    int rc = gemini_generate(&s->g, &rq, &resp, err);
    free(body);
    s->api_ms += ts_minus(monotime_ms(), t0);
    s->extra.calls += gu.calls;
    if (rc != 0 || turn_parse(resp, NULL, &s->a, &t, err) != 0)
        return -1;
    loop_usage_add(&s->extra.prompt, t.prompt_tokens);
    loop_usage_add(&s->extra.candidates, t.candidates_tokens);
    loop_usage_add(&s->extra.thoughts, t.thoughts_tokens);
    loop_usage_add(&s->extra.cached, t.cached_tokens);
    loop_usage_add(&s->extra.total, t.total_tokens);
    if (t.text[0] == '\0' || t.end != TURN_DONE)
        return status_set(err, ST_UPSTREAM_BAD,
                          "Gemini wrote no summary (%s)",
                          t.reason[0] ? t.reason : "empty answer");
    if ((next = term_compact_apply(s->contents, split, t.text)) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    json_decref(s->contents);
    s->contents = next;
    /* until the next call says, the summary is what the context holds */
    s->context_tokens = t.candidates_tokens;
    if (ts_emit(s, json_pack("{s:s, s:s, s:{s:s, s:I}}", "type", "system",
                          "subtype", "compact_boundary", "compact_metadata",
                          "trigger", manual ? "manual" : "auto",
                          "pre_tokens", (json_int_t)pre)) != 0)
        return status_set(err, ST_INTERNAL, "cannot write the output");
    return 1;
}

/* /compact: init, the compaction, a result saying what it did. */
int
ts_compact_command(struct term_session *s, long t0)
{
    struct status_error err = {0};
    struct outcome o = {"success", false, NULL, "end_turn"};
    int rc = ts_compact(s, true, &err);

    if (s->out_failed)
        return -1;
    if (rc < 0) {
        o = (struct outcome){"error_during_execution", true, NULL, NULL};
        o.error = ts_failure(s, &err);
    } else {
        s->last_text = rc > 0 ? "Compacted the conversation."
                              : "Nothing to compact yet.";
        ts_keep_save(s);
    }
    if (ts_write_result(s, &o, t0) != 0)
        return -1;
    return o.is_error ? 1 : 0;
}

/* A long of `obj`'s member `key` (0 when absent). */
static long
member_long(const json_t *obj, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(obj, key));

    return v > 0 && v < LONG_MAX ? (long)v : 0;
}

/* Carry on the saved session `c`: its history, model, folder, usage. */
static int
adopt(struct term_session *s, const struct store_chat *c, const char **why)
{
    const json_t *tokens = json_object_get(c->usage, "tokens");
    json_t *contents = json_loads(c->contents, 0, NULL);

    if (!json_is_array(contents)) {
        json_decref(contents);
        *why = arena_printf(&s->a, "the saved session %s is damaged "
                                   "(its history is not a JSON array)",
                            c->id);
        return -1;
    }
    json_decref(s->contents);
    s->contents = contents;
    /* the session's folder, unless --cwd names another */
    if (s->args->cwd == NULL && strcmp(c->cwd, s->cwd) != 0 &&
        (chdir(c->cwd) != 0 || getcwd(s->cwd, sizeof(s->cwd)) == NULL)) {
        *why = arena_printf(&s->a, "cannot work in the session's folder "
                                   "'%s': %s",
                            c->cwd, strerror(errno));
        return -1;
    }
    if (s->args->model == NULL && (s->model = strdup(c->model)) == NULL)
        return -1;
    if (!s->args->fork)
        snprintf(s->session_id, sizeof(s->session_id), "%s", c->id);
    s->used.prompt = member_long(tokens, "promptTokens");
    s->used.candidates = member_long(tokens, "candidatesTokens");
    s->used.thoughts = member_long(tokens, "thoughtsTokens");
    s->used.cached = member_long(tokens, "cachedTokens");
    s->used.total = member_long(tokens, "totalTokens");
    s->used.calls = (int)member_long(tokens, "geminiCalls");
    s->cost = json_number_value(json_object_get(c->usage, "costUsd"));
    s->context_tokens = member_long(c->usage, "contextTokens");
    return 0;
}

/*
 * Open the saved sessions (unless --no-session-persistence), and with
 * --resume or --continue carry on the one they name. A new session's id
 * must not be one already saved (Claude Code refuses it too). -1 with
 * *why (NULL: out of memory) when the session cannot start.
 */
int
ts_open_saved(struct term_session *s, const char **why)
{
    const struct term_args *args = s->args;
    bool want = args->resume != NULL || args->cont;
    struct store_chat c = {0};
    struct status_error err = {0};
    const char *new_id = want && !args->fork ? NULL : args->session_id;
    int rc;

    if (args->no_persist && !want)
        return 0;
    if ((s->keep = term_keep_open(&err)) == NULL) {
        if (want) {
            *why = arena_printf(&s->a, "cannot open the saved sessions: %s",
                                err.text);
            return -1;
        }
        fprintf(stderr, "gemini-agent chat: this session will not be "
                        "saved: %s\n", err.text);
        return 0;
    }
    if (want) {
        rc = args->resume != NULL
                 ? s->keep->ops->chat_load(s->keep, args->resume, &c, &err)
                 : s->keep->ops->chat_latest(s->keep, s->cwd, &c, &err);
        if (rc != 0 && err.code == ST_NOT_FOUND)
            *why = args->resume != NULL
                       ? arena_printf(&s->a, "No conversation found with "
                                             "session ID: %s",
                                      args->resume)
                       : "No conversation found to continue";
        else if (rc != 0)
            *why = arena_printf(&s->a, "cannot read the saved sessions: %s",
                                err.text);
        else
            rc = adopt(s, &c, why);
        store_chat_release(&c);
        if (rc != 0)
            return -1;
    }
    if (new_id != NULL) {
        rc = s->keep->ops->chat_load(s->keep, new_id, &c, &err);
        store_chat_release(&c);
        if (rc == 0) {
            *why = arena_printf(&s->a, "Session ID %s is already in use",
                                new_id);
            return -1;
        }
        if (err.code != ST_NOT_FOUND) {
            *why = arena_printf(&s->a, "cannot read the saved sessions: %s",
                                err.text);
            return -1;
        }
    }
    if (args->no_persist) { /* resumed, but this run is not kept */
        s->keep->ops->close(s->keep);
        s->keep = NULL;
    }
    return 0;
}
