/*
 * chatin.c - a chat request as it came: decoded, bounded and checked
 * (see chatin.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/chatin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/jscan.h"
#include "core/jsonin.h"
#include "core/status.h"
#include "agent/convkey.h"
#include "agent/history.h"
#include "registry/jschema.h"
#include "registry/plugin.h"
#include "http/site.h"

#include <jansson.h>
#include <string.h>

/* config.c reads history.allowParts into these bits; it cannot include
 * agent/history.h, so the values are held equal here. */
_Static_assert(HISTORY_PARTS_INLINE == 1 << 0 && HISTORY_PARTS_FILE == 1 << 1 &&
                   HISTORY_PARTS_CODE == 1 << 2 &&
                   HISTORY_PARTS_THOUGHT == 1 << 3,
               "history.allowParts bits differ between config.c and history.h");

static const char *const send_members[] = {
    "message",   "history",      "signatures", "toolDefinitions",
    "pageState", "conversation", NULL};
static const char *const results_members[] = {
    "results",         "approval",  "answer",       "history", "signatures",
    "toolDefinitions", "pageState", "conversation", NULL};

const char *const *
chat_request_members(enum chat_kind kind)
{
    return kind == CHAT_SEND_MESSAGE ? send_members : results_members;
}

/* submitToolResults' `answer`: {id, answers: {question id: value}}. */
static int
decode_answer(json_t *answer, struct chatin *in, struct status_error *err)
{
    json_t *answers = NULL;
    json_error_t jerr;
    int rc = json_unpack_ex(answer, &jerr, 0, "{s:s, s:o}", "id",
                            &in->answer.id, "answers", &answers);

    if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0 || json_object_size(answer) != 2 || !json_is_object(answers))
        return status_set(err, ST_BAD_REQUEST,
                          "answer must be {id, answers: {question id: "
                          "value}}");
    in->answer.answers = answers;
    in->has_answer = true;
    return 0;
}

/* submitToolResults' `approval`: {id, ticket, decision}. */
static int
decode_approval(json_t *approval, struct chatin *in, struct status_error *err)
{
    const char *decision = NULL;
    json_error_t jerr;
    int rc = json_unpack_ex(approval, &jerr, 0, "{s:s, s:s, s:s}", "id",
                            &in->approval.id, "ticket", &in->approval.ticket,
                            "decision", &decision);

    if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0 || json_object_size(approval) != 3 ||
        (strcmp(decision, "approve") != 0 && strcmp(decision, "reject") != 0))
        return status_set(err, ST_BAD_REQUEST,
                          "approval must be {id, ticket, decision: "
                          "approve | reject}");
    in->approval.approve = strcmp(decision, "approve") == 0;
    in->has_approval = true;
    return 0;
}

/* submitToolResults' `results`: [{callId, result, isError}]. */
static int
decode_results(const json_t *results, struct status_error *err)
{
    size_t i;
    json_t *r;

    if (!json_is_array(results))
        return status_set(err, ST_BAD_REQUEST, "results must be an array");
    json_array_foreach(results, i, r) {
        json_t *id, *res;
        int is_error = 0;
        json_error_t jerr;
        int rc = json_unpack_ex(r, &jerr, 0, "{s:o, s?o, s?b}", "callId", &id,
                                "result", &res, "isError", &is_error);

        if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        if (rc != 0 || !json_is_string(id))
            return status_set(err, ST_BAD_REQUEST,
                              "results[%zu] must be {callId, result, "
                              "isError}",
                              i);
    }
    return 0;
}

/* The members of the body's tree, by kind; `approval` and `answer`
 * (submitToolResults) are left for their own decoders. */
static int
unpack_body(json_t *body, struct chatin *in, json_t **approval, json_t **answer,
            struct status_error *err)
{
    json_error_t jerr;
    int rc;

    if (in->kind == CHAT_SEND_MESSAGE)
        rc = json_unpack_ex(body, &jerr, 0, "{s:s, s?o, s?o, s?s}", "message",
                            &in->message, "history", &in->history, "signatures",
                            &in->signatures, "conversation", &in->conversation);
    else
        rc = json_unpack_ex(body, &jerr, 0, "{s?o, s?o, s?o, s:o, s?o, s?s}",
                            "results", &in->results, "approval", approval,
                            "answer", answer, "history", &in->history,
                            "signatures", &in->signatures, "conversation",
                            &in->conversation);
    if (rc != 0 && json_error_code(&jerr) == json_error_out_of_memory)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0)
        return status_set(err, ST_BAD_REQUEST, "the request body: %s",
                          jerr.text);
    return 0;
}

/* The members' values, each by its own rule. */
static int
check_members(struct chatin *in, json_t *approval, json_t *answer,
              struct status_error *err)
{
    if (in->kind == CHAT_SUBMIT_RESULTS && in->results == NULL &&
        approval == NULL && answer == NULL)
        return status_set(err, ST_BAD_REQUEST,
                          "the request body: results, approval or answer "
                          "is required");
    if (answer != NULL && decode_answer(answer, in, err) != 0)
        return -1;
    if (in->signatures != NULL && !json_is_array(in->signatures) &&
        !json_is_null(in->signatures))
        return status_set(err, ST_BAD_REQUEST,
                          "signatures must be an array (the one the last "
                          "answer gave)");
    if (approval != NULL && decode_approval(approval, in, err) != 0)
        return -1;
    if (in->message != NULL && in->message[0] == '\0')
        return status_set(err, ST_BAD_REQUEST, "message must not be empty");
    if (in->history != NULL && !json_is_array(in->history))
        return status_set(err, ST_INVALID_HISTORY, "history must be an array");
    return in->results != NULL ? decode_results(in->results, err) : 0;
}

static int
decode(enum chat_kind kind, const struct jscan_doc *doc, struct arena *a,
       struct chatin *in, struct status_error *err)
{
    json_t *approval = NULL, *answer = NULL;
    const char *unknown;
    json_t *body;

    memset(in, 0, sizeof(*in));
    in->kind = kind;
    in->doc = doc;
    /* Trees for what the request reads; the page state and the tools
     * (most of a large body) are read from the tape and copied into the
     * request, so they never become trees. */
    static const char *const spans[] = {"pageState", "toolDefinitions", NULL};
    size_t nodes[2];

    body = arena_take_json(a, jsonin_tree_except(doc, spans, nodes, a, err));
    if (body == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    in->body = body;
    in->page_state = nodes[0];
    in->tool_defs = nodes[1];
    if (unpack_body(body, in, &approval, &answer, err) != 0)
        return -1;
    /* Our own check, not JSON_STRICT: jansson's needs memory for it and
     * reports a failed allocation as a member "left unpacked". */
    unknown = jsonin_unknown_member(body, chat_request_members(kind));
    if (unknown != NULL)
        return status_set(err, ST_BAD_REQUEST,
                          "the request body: unknown member '%s'", unknown);
    return check_members(in, approval, answer, err);
}

/*
 * The body against the inputSchema of its action (chat.h), when the site
 * loaded the geminiAgent plugin: the route takes nothing its description
 * does not allow. decode() and the history's checks come first, as their
 * messages say more; this comes before anything runs. The page state and
 * the tools are not in the tree (toolbridge_scan checks the tools).
 *
 * The history is left out: history_check() has already walked every turn
 * with rules stricter than the schema's, and walking a 200-turn history a
 * second time here was a quarter of the whole request's instructions
 * (callgrind, tests/bench/make-request.py large). The schema still sees
 * every other member, and an empty history in its place.
 */
static int
validate_body(const struct site *site, enum chat_kind kind, const json_t *body,
              struct status_error *err)
{
    const struct plugin_action *act = plugin_find(
        site->actions,
        kind == CHAT_SEND_MESSAGE ? CHAT_ACTION_SEND : CHAT_ACTION_SUBMIT);
    struct status_error v = {0};
    json_t *top;
    int rc = 0;

    if (act == NULL || act->input_schema == NULL)
        return 0;
    /* decode() refused other members; this shares their values */
    if ((top = json_object()) == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    for (const char *const *m = chat_request_members(kind); *m && rc == 0;
         m++) {
        json_t *val = json_object_get(body, *m);
        if (val != NULL)
            rc = strcmp(*m, "history") == 0
                     ? json_object_set_new(top, *m, json_array())
                     : json_object_set(top, *m, val);
    }
    if (rc != 0) {
        json_decref(top);
        return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    rc = jschema_validate(act->input_schema, top, &v);
    json_decref(top);
    if (rc == 0)
        return 0;
    if (v.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return status_set(err,
                      strncmp(v.path, "/history", 8) == 0 ? ST_INVALID_HISTORY
                                                          : ST_BAD_REQUEST,
                      "the request body: %s", v.text);
}

int
chatin_read(struct chat_env *env, enum chat_kind kind,
            const struct jscan_doc *doc, struct chatin *in,
            struct status_error *err)
{
    const struct site *site = env->site;
    const struct config_limits *lim = &site->cfg->limits;

    env->bounds = turn_bounds_of_body(lim->max_body_bytes);
    /* the shape of the body */
    if (decode(kind, doc, env->a, in, err) != 0)
        return -1;
    /* bound and check what the browser sent */
    if (toolbridge_scan(doc, in->tool_defs, lim->max_tools, env->a, &env->page,
                        err) != 0)
        return -1;
    if (in->history != NULL &&
        (history_check(in->history, HISTORY_ALLOW_PENDING, err) != 0 ||
         history_check_user_parts(in->history, site->cfg->history.allow_parts,
                                  err) != 0))
        return -1;
    /* ...and against the protocol's own description */
    if (validate_body(site, kind, in->body, err) != 0)
        return -1;
    /* ...and that the turns the server wrote are as it wrote them */
    if (site->cfg->history.verify && in->history != NULL &&
        seal_verify(&env->key, in->history, in->signatures, err) != 0)
        return -1;
    /* ...and the conversation's key: plugins keep their state under it
     * (set before any action runs, an approved one included) */
    return convkey_resolve(&env->key, in->conversation, env->a,
                           &env->conv_token, &env->who.conversation, err);
}
