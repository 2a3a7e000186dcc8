/*
 * check_history.c - history_check() on the recorded request histories and
 * on hand-made broken ones, the pending state of a mixed turn, the round
 * trip from turn_parse() back into a history, and history_trim_start().
 *
 * Hand-made JSON is written with ' for " (replaced before decoding) so
 * the tables stay readable. Server actions are a plugin_set built by hand
 * in which every name used below that starts with `action_` is exposed;
 * one case loads the real ../../actions folder instead.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/history.h"
#include "core/arena.h"
#include "core/diag.h"
#include "registry/plugin.h"
#include "core/status.h"
#include "agent/turn.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES "../data/gemini-fixtures"

/* --- helpers -------------------------------------------------------------- */

/* `text` with every ' turned into ", decoded. */
static json_t *
load_q(const char *text)
{
    json_error_t jerr;
    char *s = strdup(text);
    json_t *v;

    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '\'')
            *p = '"';
    v = json_loads(s, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    ck_assert_msg(v != NULL, "bad test JSON: %s: %s", jerr.text, s);
    free(s);
    return v;
}

static json_t *
load_file(const char *name)
{
    char path[512];
    json_error_t jerr;
    json_t *v;

    snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
    v = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    ck_assert_msg(v != NULL, "%s: %s (line %d)", path, jerr.text, jerr.line);
    return v;
}

/* Server actions of the hand-made cases: exposed, so plugin_find_fn sees
 * them; everything else a model calls is a page tool. */
static char fn_s[] = "action_s", fn_t[] = "action_t",
            fn_search[] = "action_shop_searchProducts";
static struct plugin_action server_actions[] = {
    { .fn_name = fn_s, .exposed = true },
    { .fn_name = fn_search, .exposed = true },
    { .fn_name = fn_t, .exposed = true },
};
static const struct plugin_set server_set = {
    .actions = server_actions,
    .count = ARRAY_SIZE(server_actions),
};

/* Check; on failure the message must start with `where` and hold `word`. */
static void
expect(const json_t *history, const struct plugin_set *actions,
       unsigned flags, const char *where, const char *word, const char *name)
{
    struct status_error err = { 0 };
    int rc = history_check(history, flags, &err);
    (void)actions;

    if (where == NULL) {
        ck_assert_msg(rc == 0, "%s: rejected: %s", name, err.text);
        ck_assert_int_eq(err.code, ST_OK);
        return;
    }
    ck_assert_msg(rc == -1, "%s: accepted, expected %s%s", name, where, word);
    ck_assert_int_eq(err.code, ST_INVALID_HISTORY);
    ck_assert_msg(strncmp(err.text, where, strlen(where)) == 0 &&
                      strstr(err.text, word) != NULL,
                  "%s: got '%s', expected '%s...%s'", name, err.text, where,
                  word);
}

/* --- recorded histories --------------------------------------------------- */

static const struct {
    const char *file;
    const char *where; /* NULL: valid */
    const char *word;
} recorded[] = {
    { "01-text-reply.request.json", NULL, NULL },
    { "02-max-tokens-truncated-text.request.json", NULL, NULL },
    { "03-function-call-single.request.json", NULL, NULL },
    { "04-function-call-any-mode-jsonschema-signature.request.json", NULL,
      NULL },
    { "05-parallel-calls-x3.request.json", NULL, NULL },
    { "06a-parallel-calls-signature.request.json", NULL, NULL },
    { "06b-parallel-function-responses.request.json", NULL, NULL },
    { "07b-sequential-history-with-signatures.request.json", NULL, NULL },
    { "08-thought-part-max-tokens.request.json", NULL, NULL },
    { "09a-stream-text-single-chunk.request.json", NULL, NULL },
    /* Gemini defaults a missing role to "user"; we do not: a history
     * that lost its roles did not come from us. */
    { "09b-stream-text-many-chunks.request.json", "history[0]: ",
      "role must be" },
    { "10a-stream-function-call-signature.request.json", NULL, NULL },
    /* snake_case function_call / function_response and role "tool": the
     * first problem met is the model part with no data field we know. */
    { "10b-stream-after-function-response.request.json",
      "history[1].parts[0]: ", "no data field" },
    { "11-vertex-stream-partial-args.request.json", NULL, NULL },
    { "12-count-tokens.request.json", NULL, NULL },
};

START_TEST(recorded_history)
{
    json_t *req = load_file(recorded[_i].file);
    const json_t *contents = json_object_get(req, "contents");

    ck_assert(json_is_array(contents));
    expect(contents, &server_set, 0, recorded[_i].where, recorded[_i].word,
           recorded[_i].file);
    expect(contents, &server_set, HISTORY_ALLOW_PENDING, recorded[_i].where,
           recorded[_i].word, recorded[_i].file);
    expect(contents, NULL, 0, recorded[_i].where, recorded[_i].word,
           recorded[_i].file);
    json_decref(req);
}
END_TEST

/* 10b's other faults, each alone, are caught too. */
START_TEST(tool_role_and_snake_case_are_rejected)
{
    json_t *h = load_q("[{'role':'user','parts':[{'text':'q'}]},"
                       "{'role':'model','parts':[{'functionCall':"
                       "{'name':'getWeather','args':{}}}]},"
                       "{'role':'tool','parts':[{'functionResponse':"
                       "{'name':'getWeather','response':{}}}]}]");

    expect(h, NULL, 0, "history[2]: ", "role must be \"user\" or \"model\"",
           "role tool");
    json_decref(h);
    h = load_q("[{'role':'user','parts':[{'function_response':"
               "{'name':'f','response':{}}}]}]");
    expect(h, NULL, 0, "history[0].parts[0]: ",
           "unknown member \"function_response\"", "snake_case user part");
    json_decref(h);
}
END_TEST

/*
 * What turn_parse() keeps must go back in unchanged: each recorded
 * request's contents plus the model content parsed from its response.
 * With calls, that history is pending; answered, it is complete.
 */
static const struct {
    const char *request, *response;
    size_t ncalls;
} round_trips[] = {
    { "01-text-reply.request.json", "01-text-reply.response.json", 0 },
    { "02-max-tokens-truncated-text.request.json",
      "02-max-tokens-truncated-text.response.json", 0 },
    { "03-function-call-single.request.json",
      "03-function-call-single.response.json", 1 },
    { "04-function-call-any-mode-jsonschema-signature.request.json",
      "04-function-call-any-mode-jsonschema-signature.response.json", 1 },
    { "05-parallel-calls-x3.request.json", "05-parallel-calls-x3.response.json",
      3 },
    { "06a-parallel-calls-signature.request.json",
      "06a-parallel-calls-signature.response.json", 2 },
    { "06b-parallel-function-responses.request.json",
      "06b-parallel-function-responses.response.json", 0 },
    { "08-thought-part-max-tokens.request.json",
      "08-thought-part-max-tokens.response.json", 0 },
};

START_TEST(parsed_turns_go_back_unchanged)
{
    json_t *req = load_file(round_trips[_i].request);
    json_t *resp = load_file(round_trips[_i].response);
    json_t *h = json_copy(json_object_get(req, "contents")), *answer;
    struct status_error err = { 0 };
    struct arena a;
    struct turn t;

    arena_init(&a);
    ck_assert_int_eq(turn_parse(resp, NULL, &a, &t, &err), 0);
    ck_assert_ptr_nonnull(t.content);
    ck_assert_uint_eq(t.ncalls, round_trips[_i].ncalls);
    ck_assert_int_eq(json_array_append(h, t.content), 0);
    if (t.ncalls == 0) {
        expect(h, &server_set, 0, NULL, NULL, round_trips[_i].response);
        goto out;
    }
    expect(h, &server_set, HISTORY_ALLOW_PENDING, NULL, NULL,
           round_trips[_i].response);
    expect(h, &server_set, 0, "history[1]: ", "no turn answers",
           round_trips[_i].response);
    answer = json_pack("{s:s, s:[]}", "role", "user", "parts");
    for (size_t i = 0; i < t.ncalls; i++)
        ck_assert_int_eq(
            json_array_append_new(json_object_get(answer, "parts"),
                                  json_pack("{s:{s:s, s:{s:i}}}",
                                            "functionResponse", "name",
                                            t.calls[i].name, "response",
                                            "output", 1)),
            0);
    ck_assert_int_eq(json_array_append_new(h, answer), 0);
    expect(h, &server_set, 0, NULL, NULL, round_trips[_i].response);

out:
    json_decref(h);
    arena_release(&a);
    json_decref(resp);
    json_decref(req);
}
END_TEST

/* --- hand-made histories -------------------------------------------------- */

#define U(text) "{'role':'user','parts':[{'text':'" text "'}]}"
#define M(text) "{'role':'model','parts':[{'text':'" text "'}]}"
#define CALL(name) "{'functionCall':{'name':'" name "','args':{}}}"
#define CALL_ID(name, id) "{'functionCall':{'name':'" name "','id':'" id "'}}"
#define RESP(name) "{'functionResponse':{'name':'" name "','response':{}}}"
#define RESP_ID(name, id)                                                     \
    "{'functionResponse':{'name':'" name "','id':'" id "','response':{}}}"
#define MODEL(parts) "{'role':'model','parts':[" parts "]}"
#define USER(parts) "{'role':'user','parts':[" parts "]}"

struct hcase {
    const char *name;
    const char *json;
    unsigned flags;
    const char *where; /* NULL: valid */
    const char *word;
};

#define P HISTORY_ALLOW_PENDING

static const struct hcase valid_cases[] = {
    { "empty", "[]", 0, NULL, NULL },
    { "one user turn", "[" U("hi") "]", 0, NULL, NULL },
    { "same role twice in a row (streamed chunks)",
      "[" U("a") "," U("b") "," M("c") "," M("d") "]", 0, NULL, NULL },
    { "model part with members we do not know",
      "[" U("a") "," MODEL("{'text':'x','futureField':{'k':1},"
                           "'thoughtSignature':'S'}") "]",
      0, NULL, NULL },
    { "signature-only model part",
      "[" U("a") "," MODEL("{'text':'x'},{'text':'','thoughtSignature':'S'}")
      "]",
      0, NULL, NULL },
    { "empty text with a thought flag",
      "[" U("a") "," MODEL("{'text':'','thought':true}") "]", 0, NULL, NULL },
    { "thought part", "[" U("a") "," MODEL("{'text':'hm','thought':true}") "]",
      0, NULL, NULL },
    { "user media",
      "[" USER("{'text':'look'},{'inlineData':{'mimeType':'image/png',"
               "'data':'AA=='}},{'fileData':{'fileUri':'gs://b/f'}}") "]",
      0, NULL, NULL },
    { "code execution parts",
      "[" U("a") "," MODEL("{'executableCode':{'code':'1'}},"
                           "{'codeExecutionResult':{'outcome':'OK'}}") "]",
      0, NULL, NULL },
    { "calls answered in order with ids and media results",
      "[" U("a") "," MODEL("{'text':'ok'}," CALL_ID("f", "c1") ","
                           CALL_ID("g", "c2"))
      "," USER(RESP_ID("f", "c1") ",{'functionResponse':{'name':'g','id':"
               "'c2','response':{'output':1},'parts':[{'inlineData':{}}]}}")
      "," M("done") "]",
      0, NULL, NULL },
    { "id on the response only (the call had none)",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP_ID("f", "x")) "]", 0, NULL,
      NULL },
    { "sequential steps",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP("f")) ","
      MODEL(CALL("g")) "," USER(RESP("g")) "," M("b") "," U("c") "]",
      0, NULL, NULL },
    { "pending: calls not answered yet",
      "[" U("a") "," MODEL(CALL("f") "," CALL("action_s")) "]", P, NULL,
      NULL },
    { "pending: only the server action answered",
      "[" U("a") "," MODEL(CALL("pageA") "," CALL("action_s") ","
                           CALL("pageB")) "," USER(RESP("action_s")) "]",
      P, NULL, NULL },
    { "pending: two server actions answered in call order",
      "[" U("a") "," MODEL(CALL("action_t") "," CALL("pageA") ","
                           CALL_ID("action_s", "i9"))
      "," USER(RESP("action_t") "," RESP_ID("action_s", "i9")) "]",
      P, NULL, NULL },
    { "pending: every call answered",
      "[" U("a") "," MODEL(CALL("pageA") "," CALL("action_s")) ","
      USER(RESP("pageA") "," RESP("action_s")) "]",
      P, NULL, NULL },
    { "pending: after earlier complete rounds",
      "[" U("a") "," MODEL(CALL("action_s")) "," USER(RESP("action_s")) ","
      M("so") "," U("b") "," MODEL(CALL("p") "," CALL("action_t")) ","
      USER(RESP("action_t")) "]",
      P, NULL, NULL },
};

static const struct hcase invalid_cases[] = {
    /* shape of the history and its turns */
    { "not an array", "{}", 0, "history must be an array", "" },
    { "turn not an object", "[" U("a") ",[]]", 0, "history[1]: ",
      "must be an object" },
    { "missing role", "[{'parts':[{'text':'a'}]}]", 0, "history[0]: ",
      "role must be \"user\" or \"model\"" },
    { "role system", "[{'role':'system','parts':[{'text':'a'}]}]", 0,
      "history[0]: ", "role must be" },
    { "role function",
      "[" U("a") ",{'role':'function','parts':[{'text':'a'}]}]", 0,
      "history[1]: ", "role must be" },
    { "role not a string", "[{'role':1,'parts':[{'text':'a'}]}]", 0,
      "history[0]: ", "role must be" },
    { "parts missing", "[{'role':'user'}]", 0, "history[0]: ",
      "parts must be a non-empty array" },
    { "parts empty", "[" U("a") ",{'role':'model','parts':[]}]", 0,
      "history[1]: ", "parts must be a non-empty array" },
    { "parts an object", "[{'role':'user','parts':{'text':'a'}}]", 0,
      "history[0]: ", "parts must be a non-empty array" },
    { "unknown turn member",
      "[{'role':'user','parts':[{'text':'a'}],'ts':1}]", 0, "history[0]: ",
      "unknown member \"ts\"" },
    /* parts */
    { "part not an object", "[{'role':'user','parts':['hi']}]", 0,
      "history[0].parts[0]: ", "must be an object" },
    { "part {}", "[" U("a") "," MODEL("{'text':'b'},{}") "]", 0,
      "history[1].parts[1]: ", "no data field" },
    { "signature without data", "[" U("a") ","
      MODEL("{'thoughtSignature':'S'}") "]", 0, "history[1].parts[0]: ",
      "no data field" },
    { "empty text part", "[" USER("{'text':''}") "]", 0,
      "history[0].parts[0]: ", "text must not be empty" },
    { "empty model text part", "[" U("a") "," MODEL("{'text':''}") "]", 0,
      "history[1].parts[0]: ", "text must not be empty" },
    { "two data fields",
      "[" USER("{'text':'a','inlineData':{'data':''}}") "]", 0,
      "history[0].parts[0]: ", "holds both \"text\" and \"inlineData\"" },
    { "text not a string", "[" USER("{'text':5}") "]", 0,
      "history[0].parts[0]: ", "text must be a string" },
    { "thought not a boolean", "[" USER("{'text':'a','thought':'yes'}") "]",
      0, "history[0].parts[0]: ", "thought must be a boolean" },
    { "signature not a string",
      "[" U("a") "," MODEL("{'text':'a','thoughtSignature':1}") "]", 0,
      "history[1].parts[0]: ", "thoughtSignature must be a string" },
    { "unknown member in a user part",
      "[" U("a") "," M("b") "," USER("{'text':'a','cache':true}") "]", 0,
      "history[2].parts[0]: ", "unknown member \"cache\"" },
    { "inlineData not an object", "[" USER("{'inlineData':'AA=='}") "]", 0,
      "history[0].parts[0]: ", "inlineData must be an object" },
    { "fileData not an object", "[" USER("{'fileData':[]}") "]", 0,
      "history[0].parts[0]: ", "fileData must be an object" },
    { "executableCode not an object",
      "[" U("a") "," MODEL("{'executableCode':'1+1'}") "]", 0,
      "history[1].parts[0]: ", "executableCode must be an object" },
    /* function calls and responses */
    { "functionCall in a user turn", "[" USER(CALL("f")) "]", 0,
      "history[0].parts[0]: ", "functionCall is only allowed in model turns" },
    { "functionResponse in a model turn",
      "[" U("a") "," MODEL(RESP("f")) "]", 0, "history[1].parts[0]: ",
      "functionResponse is only allowed in user turns" },
    { "functionCall not an object",
      "[" U("a") "," MODEL("{'functionCall':'f()'}") "]", 0,
      "history[1].parts[0]: ", "functionCall must be an object" },
    { "functionCall without name",
      "[" U("a") "," MODEL("{'functionCall':{'args':{}}}") "]", 0,
      "history[1].parts[0]: ", "functionCall.name must be a non-empty string" },
    { "functionCall name empty",
      "[" U("a") "," MODEL("{'functionCall':{'name':''}}") "]", 0,
      "history[1].parts[0]: ", "functionCall.name must be a non-empty string" },
    { "functionCall args a string",
      "[" U("a") "," MODEL("{'functionCall':{'name':'f','args':'{}'}}") "]", 0,
      "history[1].parts[0]: ", "functionCall.args must be an object" },
    { "functionCall id a number",
      "[" U("a") "," MODEL("{'functionCall':{'name':'f','id':1}}") "]", 0,
      "history[1].parts[0]: ", "functionCall.id must be a string" },
    { "functionResponse without name",
      "[" U("a") "," MODEL(CALL("f")) ","
      USER("{'functionResponse':{'response':{}}}") "]",
      0, "history[2].parts[0]: ",
      "functionResponse.name must be a non-empty string" },
    { "functionResponse.response a string",
      "[" U("a") "," MODEL(CALL("f") "," CALL("g")) ","
      USER(RESP("f") ",{'functionResponse':{'name':'g','response':'ok'}}")
      "]",
      0, "history[2].parts[1]: ",
      "functionResponse.response must be an object" },
    { "functionResponse.response missing",
      "[" U("a") "," MODEL(CALL("f")) ","
      USER("{'functionResponse':{'name':'f'}}") "]",
      0, "history[2].parts[0]: ",
      "functionResponse.response must be an object" },
    { "functionResponse not an object",
      "[" USER("{'functionResponse':[]}") "]", 0, "history[0].parts[0]: ",
      "functionResponse must be an object" },
    /* pairing */
    { "fewer responses than calls",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP("f")) "," M("b") ","
      MODEL(CALL("g") "," CALL("h")) "," USER(RESP("g")) "]",
      0, "history[5]: ",
      "the model turn history[4] made 2 function calls but this turn "
      "answers 1" },
    { "the brief's example",
      "[" U("a") "," M("b") "," U("c") "," MODEL(CALL("g") "," CALL("h")) ","
      USER(RESP("g")) "]",
      0, "history[4]: ",
      "the model turn history[3] made 2 function calls but this turn "
      "answers 1" },
    { "more responses than calls",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP("f") "," RESP("f")) "]", 0,
      "history[2]: ", "made 1 function calls but this turn answers 2" },
    { "responses out of order",
      "[" U("a") "," MODEL(CALL("f") "," CALL("g")) ","
      USER(RESP("g") "," RESP("f")) "]",
      0, "history[2].parts[0]: ",
      "functionResponse.name \"g\" does not match the call \"f\" of "
      "history[1].parts[0]" },
    { "response id differs",
      "[" U("a") "," MODEL(CALL_ID("f", "c1")) "," USER(RESP_ID("f", "c2")) "]",
      0, "history[2].parts[0]: ", "functionResponse.id must be \"c1\"" },
    { "response id missing",
      "[" U("a") "," MODEL(CALL("x") "," CALL_ID("f", "c1")) ","
      USER(RESP("x") "," RESP("f")) "]",
      0, "history[2].parts[1]: ", "functionResponse.id must be \"c1\"" },
    { "calls answered by text",
      "[" U("a") "," MODEL(CALL("f")) "," U("never mind") "]", 0,
      "history[2]: ", "made 1 function calls but this turn answers 0" },
    { "calls followed by a model turn",
      "[" U("a") "," MODEL(CALL("f")) "," M("b") "]", 0, "history[2]: ",
      "made 1 function calls but this turn answers 0" },
    { "calls never answered",
      "[" U("a") "," MODEL(CALL("f") "," CALL("g")) "]", 0, "history[1]: ",
      "the model turn made 2 function calls that no turn answers" },
    { "response without a call",
      "[" U("a") "," USER(RESP("f")) "]", 0, "history[1]: ",
      "functionResponse parts must answer the function calls" },
    { "response after a text model turn",
      "[" U("a") "," M("b") "," USER(RESP("f")) "]", 0, "history[2]: ",
      "functionResponse parts must answer" },
    { "response turn answered twice",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP("f")) ","
      USER(RESP("f")) "]",
      0, "history[3]: ", "functionResponse parts must answer" },
    { "text beside the responses",
      "[" U("a") "," MODEL(CALL("f")) "," USER(RESP("f") ",{'text':'and'}")
      "]",
      0, "history[2].parts[1]: ", "only functionResponse parts" },
    /* the pending rule */
    { "partial answer without the pending flag",
      "[" U("a") "," MODEL(CALL("p") "," CALL("action_s")) ","
      USER(RESP("action_s")) "]",
      0, "history[2]: ", "made 2 function calls but this turn answers 1" },
    { "pending answer that is not the last turn",
      "[" U("a") "," MODEL(CALL("p") "," CALL("action_s")) ","
      USER(RESP("action_s")) "," M("b") "]",
      P, "history[2]: ", "made 2 function calls but this turn answers 1" },
    { "pending calls followed by a model turn",
      "[" U("a") "," MODEL(CALL("p")) "," M("b") "]", P, "history[2]: ",
      "made 1 function calls but this turn answers 0" },
    { "pending calls in an earlier turn",
      "[" U("a") "," MODEL(CALL("action_s")) "," U("b") "]", P, "history[2]: ",
      "answers 0" },
    { "pending answer to nothing that was called",
      "[" U("a") "," MODEL(CALL("pageA") "," CALL("action_s")) ","
      USER(RESP("other")) "]",
      P, "history[2].parts[0]: ",
      "functionResponse \"other\" answers no remaining call" },
    { "pending server answers out of order",
      "[" U("a") "," MODEL(CALL("action_s") "," CALL("p") ","
                           CALL("action_t")) ","
      USER(RESP("action_t") "," RESP("action_s")) "]",
      P, "history[2].parts[1]: ",
      "\"action_s\" answers no remaining call of history[1], in call order" },
    { "pending answer with a wrong id",
      "[" U("a") "," MODEL(CALL("p") "," CALL_ID("action_s", "k")) ","
      USER(RESP_ID("action_s", "j")) "]",
      P, "history[2].parts[0]: ", "answers no remaining call" },
};

START_TEST(valid_history)
{
    json_t *h = load_q(valid_cases[_i].json);

    expect(h, &server_set, valid_cases[_i].flags, NULL, NULL,
           valid_cases[_i].name);
    json_decref(h);
}
END_TEST

START_TEST(invalid_history)
{
    json_t *h = load_q(invalid_cases[_i].json);

    expect(h, &server_set, invalid_cases[_i].flags, invalid_cases[_i].where,
           invalid_cases[_i].word, invalid_cases[_i].name);
    json_decref(h);
}
END_TEST

/* Which calls the server answered is read from the partial turn itself,
 * not from names: no plugin set is needed, and any call-order
 * subsequence is a valid partial answer (a page tool that has left the
 * page changes nothing). */
START_TEST(pending_without_actions)
{
    json_t *h = load_q("[" U("a") "," MODEL(CALL("action_s") "," CALL("p"))
                       "]");

    expect(h, NULL, P, NULL, NULL, "unanswered");
    json_decref(h);
    h = load_q("[" U("a") "," MODEL(CALL("action_s") "," CALL("p")) ","
               USER(RESP("action_s")) "]");
    expect(h, NULL, P, NULL, NULL, "server part answered");
    json_decref(h);
    h = load_q("[" U("a") "," MODEL(CALL("p") "," CALL("q") "," CALL("r"))
               "," USER(RESP("q")) "]");
    expect(h, NULL, P, NULL, NULL, "any subsequence");
    expect(h, NULL, 0, "history[2]: ", "answers 1", "not without the flag");
    json_decref(h);
}
END_TEST

/* The real actions folder: its exposed names are server actions. */
START_TEST(pending_with_real_actions)
{
    static const char *const dirs[] = { "../../actions" };
    struct diag d = DIAG_INIT;
    struct plugin_set *set = plugin_load((char *const *)UNCONST(dirs), 1, NULL, NULL, &d);
    json_t *h;

    ck_assert_ptr_nonnull(set);
    ck_assert_ptr_nonnull(plugin_find_fn(set, "action_shop_searchProducts"));
    h = load_q("[" U("find a hub") ","
               MODEL(CALL("click-remove-btn") ","
                     "{'functionCall':{'name':'action_shop_searchProducts',"
                     "'args':{'query':'hub'}}}")
               "," USER(RESP("action_shop_searchProducts")) "]");
    expect(h, set, P, NULL, NULL, "real actions");
    expect(h, set, 0, "history[2]: ", "answers 1", "real actions, no flag");
    json_decref(h);
    plugin_set_free(set);
    diag_release(&d);
}
END_TEST

/* A long history is checked in one go (and fast). */
START_TEST(long_history)
{
    json_t *h = json_array(), *round;
    size_t i;

    round = load_q("[" U("q") "," MODEL("{'text':'t'}," CALL("f") ","
                                        CALL("action_s"))
                   "," USER(RESP("f") "," RESP("action_s")) "," M("a") "]");
    for (i = 0; i < 500; i++)
        ck_assert_int_eq(json_array_extend(h, round), 0);
    expect(h, &server_set, 0, NULL, NULL, "2000 turns");
    ck_assert_uint_eq(history_trim_start(h, 200), 1800);
    ck_assert_uint_eq(history_trim_start(h, 199), 1804);
    json_decref(round);
    json_decref(h);
}
END_TEST

/* --- trimming ------------------------------------------------------------- */

/*
 * A history from letters: U user text (a cut point), M model text, C
 * model call, R its answer, I user media without text, X user text beside
 * a response (never a cut point, even though the check refuses it).
 */
static json_t *
history_of(const char *spec)
{
    json_t *h = json_array();

    for (const char *s = spec; *s != '\0'; s++) {
        const char *t = NULL;
        switch (*s) {
        case 'U': t = U("u"); break;
        case 'M': t = M("m"); break;
        case 'C': t = MODEL(CALL("f")); break;
        case 'R': t = USER(RESP("f")); break;
        case 'I': t = USER("{'inlineData':{'data':''}}"); break;
        case 'X': t = USER(RESP("f") ",{'text':'x'}"); break;
        default: ck_abort_msg("bad spec letter %c", *s);
        }
        ck_assert_int_eq(json_array_append_new(h, load_q(t)), 0);
    }
    return h;
}

static const struct {
    const char *spec;
    size_t max_turns, start;
} trims[] = {
    { "", 0, 0 },
    { "UM", 2, 0 },
    { "UM", 10, 0 },
    { "UMUMUM", 6, 0 },
    { "UMUMUM", 4, 2 },
    { "UMUMUM", 3, 4 },
    { "UMUMUM", 2, 4 },
    { "UMUMUM", 1, 4 },   /* nothing fits: the latest text turn */
    { "UMUMUM", 0, 4 },
    { "UCRMUM", 3, 4 },
    { "UCRMUM", 5, 4 },   /* a call and its answer are never split */
    { "UCRCRM", 3, 0 },   /* one long tool chain: kept whole */
    { "UMUCRCRCRM", 4, 2 },
    { "UMUCRCRCRM", 9, 2 },
    { "MMMM", 2, 0 },     /* no cut point at all */
    { "UMIMUM", 4, 4 },   /* media without text starts nothing */
    { "UMXMUM", 4, 4 },
    { "CRUM", 1, 2 },
};

START_TEST(trim_start)
{
    json_t *h = history_of(trims[_i].spec);

    ck_assert_msg(history_trim_start(h, trims[_i].max_turns) ==
                      trims[_i].start,
                  "'%s' max %zu: %zu, expected %zu", trims[_i].spec,
                  trims[_i].max_turns,
                  history_trim_start(h, trims[_i].max_turns), trims[_i].start);
    json_decref(h);
}
END_TEST

START_TEST(trim_not_an_array)
{
    json_t *v = json_object();

    ck_assert_uint_eq(history_trim_start(NULL, 0), 0);
    ck_assert_uint_eq(history_trim_start(v, 0), 0);
    json_decref(v);
}
END_TEST

/* What a browser may send in its user turns (history.allowParts). */
START_TEST(user_parts_from_the_browser)
{
    static const struct {
        const char *history;
        unsigned allowed;
        const char *error; /* NULL: accepted */
    } cases[] = {
        {"[" U("hi") "," M("ok") "]", 0, NULL},
        /* the model's own parts are Gemini's, thoughts and code included */
        {"[" U("a") "," MODEL("{'text':'hm','thought':true},"
                              "{'executableCode':{'code':'1'}}") "]",
         0, NULL},
        {"[" U("a") "," USER("{'inlineData':{'mimeType':'image/png','data':"
                             "'AA=='}}") "]",
         0, "history[1].parts[0]: inlineData is not accepted"},
        {"[" USER("{'text':'x'},{'fileData':{'fileUri':'gs://b/f'}}") "]", 0,
         "history[0].parts[1]: fileData is not accepted"},
        {"[" USER("{'executableCode':{'code':'1'}}") "]", 0,
         "executableCode is not accepted"},
        {"[" USER("{'codeExecutionResult':{'outcome':'OK'}}") "]", 0,
         "codeExecutionResult is not accepted"},
        {"[" USER("{'text':'x','thought':true}") "]", 0,
         "a thought part is not accepted"},
        {"[" U("a") "," MODEL(CALL("f")) ","
         USER("{'functionResponse':{'name':'f','response':{},'parts':"
              "[{'inlineData':{}}]}}") "]",
         0, "functionResponse.parts is not accepted"},
        /* what the site allows */
        {"[" USER("{'inlineData':{'data':''}},{'fileData':{}}") "]",
         HISTORY_PARTS_INLINE | HISTORY_PARTS_FILE, NULL},
        {"[" USER("{'inlineData':{'data':''}},{'fileData':{}}") "]",
         HISTORY_PARTS_INLINE, "fileData is not accepted"},
        {"[" USER("{'text':'x','thought':true}") "]", HISTORY_PARTS_THOUGHT,
         NULL},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct status_error err = {0};
        char *text = strdup(cases[i].history);
        json_t *h;
        int rc;

        for (char *p = text; *p; p++)
            if (*p == '\'')
                *p = '"';
        h = json_loads(text, 0, NULL);
        ck_assert_msg(h != NULL, "case %zu: %s", i, text);
        ck_assert_int_eq(history_check(h, 0, &err), 0);
        rc = history_check_user_parts(h, cases[i].allowed, &err);
        if (cases[i].error == NULL) {
            ck_assert_msg(rc == 0, "case %zu: %s", i, err.text);
        } else {
            ck_assert_msg(rc == -1 && err.code == ST_INVALID_HISTORY &&
                              strstr(err.text, cases[i].error) != NULL,
                          "case %zu: rc %d: %s", i, rc, err.text);
        }
        json_decref(h);
        free(text);
    }
}
END_TEST

Suite *
history_suite(void)
{
    Suite *s = suite_create("history");
    TCase *tc;

    tc = tcase_create("recorded");
    tcase_add_loop_test(tc, recorded_history, 0, (int)ARRAY_SIZE(recorded));
    tcase_add_test(tc, tool_role_and_snake_case_are_rejected);
    tcase_add_loop_test(tc, parsed_turns_go_back_unchanged, 0,
                        (int)ARRAY_SIZE(round_trips));
    suite_add_tcase(s, tc);

    tc = tcase_create("core");
    tcase_add_loop_test(tc, valid_history, 0, (int)ARRAY_SIZE(valid_cases));
    tcase_add_test(tc, pending_without_actions);
    tcase_add_test(tc, pending_with_real_actions);
    tcase_add_test(tc, long_history);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_loop_test(tc, invalid_history, 0, (int)ARRAY_SIZE(invalid_cases));
    suite_add_tcase(s, tc);

    tc = tcase_create("trim");
    tcase_add_loop_test(tc, trim_start, 0, (int)ARRAY_SIZE(trims));
    tcase_add_test(tc, trim_not_an_array);
    tcase_add_test(tc, user_parts_from_the_browser);
    suite_add_tcase(s, tc);
    return s;
}
