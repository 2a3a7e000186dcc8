/*
 * clarification.c - the built-in plugin `clarification`.
 *
 * One tool, `ask` {questions: [...]}: the model asks the user one to
 * BOUND_QUESTIONS questions (single choice, multiple choice, free text;
 * required or optional; defaults). execute() checks them and returns
 * GEMINI_AGENT_ASK_USER with the questions normalised: the host asks the
 * user (a card in the widget, a paused run in the run API) and the
 * user's answers, {"answers": {id: value}}, become the call's result.
 * The rules live in registry/question.c, which the host applies to any
 * plugin's question and to every answer: this plugin is the model's way
 * in, and tells the model what is wrong with a question it cannot ask.
 *
 * It keeps no state (no initialize()), so it is thread-safe and the same
 * in every worker.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/clarification.h"
#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/status.h"
#include "registry/question.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x)  STR_(x)

/* The schema says the shape; the rules the schema cannot say (options
 * for the choices, defaults among them, unique ids) are question.c's. */
/* clang-format off */
static const char decls_text[] =
    "[{\"name\":\"ask\","
    "\"description\":\"Ask the user 1 to " STR(BOUND_QUESTIONS)
    " short questions and wait for the answers, which come back as this "
    "call's result {answers: {id: value}}. kind single: pick one of "
    "options (answer: a string); multiple: pick any of options (answer: "
    "an array of strings); text: free text (answer: a string). required "
    "defaults to true; default preselects an answer (a string, or an "
    "array for multiple). Ids must be unique.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"questions\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":" STR(
        BOUND_QUESTIONS) ",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"id\":{\"type\":\"string\",\"description\":\"unique, letters, "
    "digits, _ . -\"},"
    "\"text\":{\"type\":\"string\",\"description\":\"the question\"},"
    "\"kind\":{\"type\":\"string\",\"enum\":[\"single\",\"multiple\","
    "\"text\"]},"
    "\"options\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"description\":\"the choices (single and multiple only)\"},"
    "\"required\":{\"type\":\"boolean\"},"
    "\"default\":{\"description\":\"a string, or an array of strings for "
    "multiple\"}},"
    "\"required\":[\"id\",\"text\",\"kind\"]}}},"
    "\"required\":[\"questions\"]},"
    "\"sideEffects\":false}]";
/* clang-format on */

static const char *
decls(void *self)
{
    (void)self;
    return decls_text;
}

static const char *
instructions(void *self)
{
    (void)self;
    return "action_clarification_ask asks the user questions and waits for "
           "the answers. Ask only when the answer really changes what you "
           "do next and you cannot find it out yourself (from the page, "
           "the tools or the conversation); never to confirm what the "
           "user already said. Ask everything you need in one call, with "
           "options when the answers are few, and a default when one is "
           "likely. An answer of {\"error\": \"not answered ...\"} means "
           "the user moved on: follow their new message instead.";
}

static const char *
auto_approved(void *self)
{
    (void)self;
    return "[\"ask\"]";
}

static const char *
config_schema(void)
{
    return "{\"type\":\"object\",\"additionalProperties\":false}";
}

/* The reply for a question the model cannot ask: what is wrong. */
static int
bad_input(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
          const char *text, size_t len)
{
    int rc = gemini_agent_reply(ctx, out, text, len);

    return rc == GEMINI_AGENT_OK ? GEMINI_AGENT_BAD_INPUT : rc;
}

static int
execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
        const char *args, size_t args_len, struct gemini_agent_out *out)
{
    struct status_error err = {0};
    json_t *in, *q = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc;

    (void)self;
    if (strcmp(tool, "ask") != 0) {
        static const char msg[] = "clarification has only the tool 'ask'";
        return bad_input(ctx, out, msg, sizeof(msg) - 1);
    }
    in = jsonin_decode(args, args_len, BOUND_JSON_DEPTH, &err);
    if (in != NULL)
        q = question_normalize(in, &err);
    if (q != NULL)
        text = jsonout_dumps(q, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len);
    json_decref(in);
    json_decref(q);
    if (q != NULL && text == NULL)
        return GEMINI_AGENT_FAILED; /* out of memory */
    if (text == NULL)
        return err.code == ST_NO_MEMORY
                   ? GEMINI_AGENT_FAILED
                   : bad_input(ctx, out, err.text, strlen(err.text));
    rc = gemini_agent_reply(ctx, out, text, len);
    free(text);
    return rc == GEMINI_AGENT_OK ? GEMINI_AGENT_ASK_USER : rc;
}

static const struct gemini_agent_plugin clarification = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "clarification",
    .declarations = decls,
    .execute = execute,
    .system_instructions = instructions,
    .auto_approved_tools = auto_approved,
    .config_schema = config_schema,
};

const struct gemini_agent_plugin *
builtin_clarification(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &clarification : NULL;
}
