/*
 * check_dispatch.c - the request path without a web server: routing,
 * methods, content type and length, strict JSON, schema violations, the
 * error envelope and its headers. A memory transport stands in for
 * FastCGI (httpio.h), so every case runs the exact code a worker runs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"
#include "http/chat.h"
#include "http/dispatch.h"
#include "http/httpio.h"
#include "unit_memio.h"
#include "core/jsonin.h"
#include "http/reply.h"
#include "http/request.h"
#include "http/site.h"
#include "store/store.h"
#include "registry/jschema.h"
#include "registry/plugin.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- fixture: the real shop plugin, data in a temp dir -------------------- */

static struct site *site;
#define OWNER "owner"
static char tmpdir[64];

static void
setup(void)
{
    char path[512];
    struct diag d = DIAG_INIT;
    FILE *f;

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ga-dispatch-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "actions: [%s/../../actions]\n"
            "dataDir: %s/var\n"
            "gemini: %s/.gemini.yaml\n"
            "limits: {maxBodyBytes: 4096}\n"
            /* the shop's addReview over the direct route: for a signed-in
             * user the policy lets act (OWNER, autonomous, below) */
            "http: {directActions: authenticated}\n"
            "auth: {remoteUser: {variable: REMOTE_USER, server: apache}}\n",
            getcwd((char[512]){0}, 512), tmpdir, tmpdir);
    fclose(f);
    site = site_load(path, &d);
    ck_assert_ptr_nonnull(site);
    diag_release(&d);
    {
        struct status_error err = {0};
        struct store *st = store_open_migrated(site->cfg->run.store, &err);
        ck_assert_msg(st != NULL, "%s", err.text);
        ck_assert_int_eq(
            st->ops->user_set_trust(st, OWNER, STORE_AUTONOMOUS, &err), 0);
        st->ops->close(st);
    }
}

static void
teardown(void)
{
    char cmd[600];
    site_free(site);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Run one request; returns the status and fills *body_out (caller frees)
 * and the raw head into head[]. */
struct result {
    int status;
    char head[1024];
    char raw[256]; /* the start of the body as written */
    json_t *body;
};

static struct result
run_as(const char *user, const char *method, const char *uri,
       const char *ctype, const char *clen, const char *body)
{
    const char *params[] = {"REQUEST_METHOD", method, "DOCUMENT_URI", uri,
                            "CONTENT_TYPE", ctype, "CONTENT_LENGTH", clen,
                            "REMOTE_USER", user, "REQUEST_ID", "unit-1",
                            NULL};
    static char out[1 << 20];
    /* At most 7 bytes a read: the reader must loop. */
    struct unit_memio m = {params, body ? body : "", body ? strlen(body) : 0, 0,
                           7, out, 0, sizeof(out)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct arena a;
    struct result r = {0};
    char lenbuf[32];

    if (clen == NULL && body != NULL) {
        snprintf(lenbuf, sizeof(lenbuf), "%zu", strlen(body));
        params[7] = lenbuf;
    }
    /* NULL values end the list early; keep the list dense instead. */
    const char *dense[14];
    size_t n = 0;
    for (size_t i = 0; i < 12; i += 2)
        if (params[i + 1] != NULL) {
            dense[n++] = params[i];
            dense[n++] = params[i + 1];
        }
    dense[n] = NULL;
    m.params = dense;
    out[0] = '\0';
    arena_init(&a);
    r.status = dispatch_request(site, NULL, &io, &a);
    arena_release(&a);
    const char *sep = strstr(out, "\r\n\r\n");
    ck_assert_ptr_nonnull(sep);
    snprintf(r.head, sizeof(r.head), "%.*s", (int)(sep - out), out);
    snprintf(r.raw, sizeof(r.raw), "%s", sep + 4);
    r.body = json_loads(sep + 4, 0, NULL);
    ck_assert_msg(r.body != NULL, "body is not JSON: %s", sep + 4);
    return r;
}

/* A request from the site's owner (REMOTE_USER, trusted; autonomous). */
static struct result
run(const char *method, const char *uri, const char *ctype, const char *clen,
    const char *body)
{
    return run_as(OWNER, method, uri, ctype, clen, body);
}

static const char *
err_code(const struct result *r)
{
    return json_string_value(
        json_object_get(json_object_get(r->body, "error"), "code"));
}

static const char *
err_field(const struct result *r, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(r->body, "error"), k));
}

/* --- table: every error status of the HTTP contract --------------------- */

struct http_case {
    const char *name, *method, *uri, *ctype, *clen, *body;
    int status;
    const char *code;
    const char *msg_has; /* substring of error.message, or NULL */
};

static const char *const J = "application/json";

static const struct http_case http_cases[] = {
    {"unknown route", "GET", "/nothing", NULL, NULL, NULL, 404, "not_found",
     "/nothing"},
    /* under a base path: the messages name the whole path */
    {"unknown action under a base", "POST", "/shop/_jay/actions/shop.nope",
     J, NULL, "{}", 404, "unknown_action", "shop.nope"},
    {"dot segment under a base", "GET", "/shop/../_jay/actions", NULL, NULL,
     NULL, 404, "not_found", "/shop/../_jay/actions"},
    {"second namespace is not a route", "GET",
     "/shop/_jay/actions/x/_jay/actions", NULL, NULL, NULL, 404, "not_found",
     NULL},
    {"GET on an action under a base", "GET",
     "/~alice/agent/_jay/actions/shop.searchProducts", NULL, NULL, NULL, 405,
     "method_not_allowed", "POST"},
    {"unknown api route", "POST", "/api/agent/nope", J, NULL, "{}", 404,
     "not_found", NULL},
    {"unknown action", "POST", "/_jay/actions/shop.nope", J, NULL, "{}", 404,
     "unknown_action", "shop.nope"},
    /* bytes jansson refuses in a string: the message still goes out */
    {"overlong UTF-8 in the name", "POST", "/_jay/actions/shop.\xe0\x80\x80",
     J, NULL, "{}", 404, "unknown_action", "'shop.???" "'"},
    {"surrogate in the name", "POST", "/_jay/actions/shop.\xed\xa0\x80", J,
     NULL, "{}", 404, "unknown_action", "'shop.???" "'"},
    {"nested path is not an action", "POST", "/_jay/actions/shop/x", J, NULL,
     "{}", 404, "not_found", NULL},
    {"GET on an action", "GET", "/_jay/actions/shop.searchProducts", NULL,
     NULL, NULL, 405, "method_not_allowed", "POST"},
    {"GET on a chat route", "GET", "/_jay/actions/geminiAgent.sendMessage",
     NULL, NULL, NULL, 405, "method_not_allowed", "POST"},
    {"POST on the list", "POST", "/_jay/actions", J, NULL, "{}", 405,
     "method_not_allowed", "GET"},
    /* an exact route owns its path: POST does not fall to the actions */
    {"POST on the status", "POST", "/_jay/actions/geminiAgent.status", J,
     NULL, "{}", 405, "method_not_allowed", "use GET"},
    {"DELETE on the list", "DELETE", "/_jay/actions", NULL, NULL, NULL, 405,
     "method_not_allowed", NULL},
    {"no content type", "POST", "/_jay/actions/shop.searchProducts", NULL,
     NULL, "{}", 415, "unsupported_media_type", "application/json"},
    {"text/plain", "POST", "/_jay/actions/shop.searchProducts", "text/plain",
     NULL, "{}", 415, "unsupported_media_type", NULL},
    {"json-ish prefix", "POST", "/_jay/actions/shop.searchProducts",
     "application/jsonx", NULL, "{}", 415, "unsupported_media_type", NULL},
    {"length garbage", "POST", "/_jay/actions/shop.searchProducts", J, "12abc",
     "{}", 400, "bad_content_length", NULL},
    {"length negative", "POST", "/_jay/actions/shop.searchProducts", J, "-1",
     "{}", 400, "bad_content_length", NULL},
    {"length overflow", "POST", "/_jay/actions/shop.searchProducts", J,
     "99999999999999999999999", "{}", 400, "bad_content_length", NULL},
    {"length with space", "POST", "/_jay/actions/shop.searchProducts", J,
     " 2", "{}", 400, "bad_content_length", NULL},
    {"too large by header", "POST", "/_jay/actions/shop.searchProducts", J,
     "4097", "{}", 413, "payload_too_large", "4096"},
    {"short body", "POST", "/_jay/actions/shop.searchProducts", J, "50",
     "{\"query\":\"x\"}", 400, "incomplete_body", "13 of 50"},
    {"empty body", "POST", "/_jay/actions/shop.searchProducts", J, "0", "",
     400, "invalid_json", "empty"},
    {"syntax", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":}", 400, "invalid_json", "line 1, column"},
    {"duplicate key", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":\"a\",\"query\":\"b\"}", 400, "invalid_json", "duplicate"},
    {"lone surrogate", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":\"\\ud800\"}", 400, "invalid_json", "Unicode"},
    {"NUL escape", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":\"a\\u0000\"}", 400, "invalid_json", "u0000"},
    {"invalid UTF-8", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":\"\xc3\x28\"}", 400, "invalid_json", "line 1"},
    {"too deep", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
     400, "invalid_json", "deeper than 32"},
    {"wrong type", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":5}", 422, "schema_violation", "/query"},
    {"missing required", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{}", 422, "schema_violation", "query"},
    {"extra property", "POST", "/_jay/actions/shop.searchProducts", J, NULL,
     "{\"query\":\"a\",\"colour\":1}", 422, "schema_violation", "colour"},
    {"rating too high", "POST", "/_jay/actions/shop.addReview", J, NULL,
     "{\"productId\":\"p001\",\"rating\":6,\"text\":\"x\"}", 422,
     "schema_violation", "/rating"},
    {"rating as string", "POST", "/_jay/actions/shop.addReview", J, NULL,
     "{\"productId\":\"p001\",\"rating\":\"5\",\"text\":\"x\"}", 422,
     "schema_violation", "/rating"},
    {"array where object wanted", "POST", "/_jay/actions/shop.searchProducts",
     J, NULL, "[]", 422, "schema_violation", NULL},
    {"unknown slug", "POST", "/_jay/actions/shop.getProductBySlug", J, NULL,
     "{\"slug\":\"no-such-thing\"}", 404, "not_found", "no-such-thing"},
    {"HTTP-only action wants an object", "POST",
     "/_jay/actions/shop.listCategories", J, NULL, "[1]", 400, "bad_request",
     NULL},
};

/* The detail of the cases above that have one, by name. */
static const struct {
    const char *name, *path, *rule;
} schema_details[] = {
    {"wrong type", "/query", "type"},
    {"missing required", "", "required"},
    {"extra property", "", "additionalProperties"},
    {"rating too high", "/rating", "maximum"},
    {"rating as string", "/rating", "type"},
    {"array where object wanted", "", "type"},
};

static const struct {
    const char *name, *allow;
} allow_headers[] = {
    {"GET on an action", "POST"},
    {"GET on a chat route", "POST"},
    {"POST on the list", "GET"},
    {"DELETE on the list", "GET"},
    {"POST on the status", "GET"},
    {"GET on an action under a base", "POST"},
};

START_TEST(http_errors)
{
    const struct http_case *c = &http_cases[_i];
    struct result r = run(c->method, c->uri, c->ctype, c->clen, c->body);
    const char *path = NULL, *rule = NULL, *allow = NULL;

    for (size_t i = 0; i < ARRAY_SIZE(schema_details); i++) {
        if (strcmp(c->name, schema_details[i].name) == 0) {
            path = schema_details[i].path;
            rule = schema_details[i].rule;
        }
    }
    for (size_t i = 0; i < ARRAY_SIZE(allow_headers); i++) {
        if (strcmp(c->name, allow_headers[i].name) == 0)
            allow = allow_headers[i].allow;
    }
    ck_assert_msg((rule != NULL) == (c->status == 422),
                  "%s: a schema violation needs its detail here", c->name);
    ck_assert_msg((allow != NULL) == (c->status == 405),
                  "%s: a 405 needs its Allow here", c->name);

    ck_assert_msg(r.status == c->status, "%s: status %d, want %d", c->name,
                  r.status, c->status);
    ck_assert_msg(err_code(&r) && strcmp(err_code(&r), c->code) == 0,
                  "%s: code %s, want %s", c->name, err_code(&r), c->code);
    const char *msg = err_field(&r, "message");
    ck_assert_msg(msg && msg[0], "%s: no message", c->name);
    if (c->msg_has)
        ck_assert_msg(strstr(msg, c->msg_has), "%s: message '%s' lacks '%s'",
                      c->name, msg, c->msg_has);
    /* Headers every JSON answer carries. */
    ck_assert(strstr(r.head, "Content-Type: application/json; charset=utf-8"));
    ck_assert(strstr(r.head, "X-Content-Type-Options: nosniff"));
    ck_assert(strstr(r.head, "Cache-Control: no-store"));
    /* path and rule only for a schema violation, and then both */
    if (rule != NULL) {
        ck_assert_str_eq(err_field(&r, "path"), path);
        ck_assert_str_eq(err_field(&r, "rule"), rule);
        ck_assert_int_eq(json_object_size(json_object_get(r.body, "error")),
                         4);
    } else {
        ck_assert_msg(json_object_size(json_object_get(r.body, "error")) == 2,
                      "%s: error has members besides code and message",
                      c->name);
    }
    if (allow != NULL) {
        char line[32];
        snprintf(line, sizeof(line), "\r\nAllow: %s", allow);
        ck_assert_msg(strstr(r.head, line) &&
                          strstr(r.head, line)[strlen(line)] == '\0',
                      "%s: want '%s' last in:\n%s", c->name, line + 2, r.head);
    } else {
        ck_assert_msg(strstr(r.head, "Allow:") == NULL, "%s: Allow", c->name);
    }
    ck_assert_msg(strstr(r.head, "Retry-After:") == NULL, "%s: Retry-After",
                  c->name);
    json_decref(r.body);
}
END_TEST

/* Clients parse these bytes: the whole answer, head and body, is fixed. */
START_TEST(schema_violation_answer_is_exact)
{
    static const char body[] =
        "{\"error\":{\"code\":\"schema_violation\",\"message\":\"/rating: "
        "must be <= 5 (maximum)\",\"path\":\"/rating\",\"rule\":"
        "\"maximum\"}}";
    struct result r = run("POST", "/_jay/actions/shop.addReview", J, NULL,
                          "{\"productId\":\"p001\",\"rating\":6,"
                          "\"text\":\"x\"}");
    char head[512];

    snprintf(head, sizeof(head),
             "Status: 422 Unprocessable Content\r\n"
             "Content-Type: application/json; charset=utf-8\r\n"
             "Content-Length: %zu\r\n"
             "X-Request-Id: unit-1\r\n"
             "X-Content-Type-Options: nosniff\r\n"
             "Cache-Control: no-store",
             sizeof(body) - 1);
    ck_assert_int_eq(r.status, 422);
    ck_assert_str_eq(r.head, head);
    ck_assert_str_eq(r.raw, body);
    json_decref(r.body);
}
END_TEST

/* --- the error writer's headers, directly ----------------------------------- */

/* reply_error() into memory; returns the whole answer (caller frees). */
static char *
reply_to_memory(const struct status_error *err, const char *allow)
{
    const char *none[] = {NULL};
    static char buf[1 << 16];
    struct unit_memio m = {none, "", 0, 0, 0, buf, 0, sizeof(buf)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    char *out;

    buf[0] = '\0';
    ck_assert_int_eq(reply_error(&io, err, allow), 0);
    ck_assert(io.replied);
    out = strdup(buf);
    ck_assert_ptr_nonnull(out);
    return out;
}

START_TEST(reply_error_headers)
{
    struct status_error err = {0};
    char *out;

    /* a retry hint becomes Retry-After; the body stays code + message */
    status_set_retry(&err, ST_UPSTREAM_RATE, 30, "try again in 30 s");
    out = reply_to_memory(&err, NULL);
    ck_assert_str_eq(out,
                     "Status: 503 Service Unavailable\r\n"
                     "Content-Type: application/json; charset=utf-8\r\n"
                     "Content-Length: 72\r\n"
                     "X-Content-Type-Options: nosniff\r\n"
                     "Cache-Control: no-store\r\n"
                     "Retry-After: 30\r\n"
                     "\r\n"
                     "{\"error\":{\"code\":\"upstream_rate_limited\","
                     "\"message\":\"try again in 30 s\"}}");
    free(out);

    /* no hint, no header */
    status_clear(&err);
    status_set_retry(&err, ST_UPSTREAM_DOWN, 0, "down");
    out = reply_to_memory(&err, NULL);
    ck_assert_ptr_null(strstr(out, "Retry-After"));
    ck_assert_ptr_nonnull(strstr(out, "Status: 503 "));
    free(out);

    /* the allowed method becomes Allow */
    status_clear(&err);
    status_set(&err, ST_METHOD, "use GET for /_jay/actions");
    out = reply_to_memory(&err, "GET");
    ck_assert_ptr_nonnull(
        strstr(out, "Cache-Control: no-store\r\nAllow: GET\r\n\r\n{"));
    free(out);

    /* only a method name ever reaches the head */
    out = reply_to_memory(&err, "GET\r\nX-Evil: 1");
    ck_assert_ptr_null(strstr(out, "X-Evil"));
    ck_assert_ptr_null(strstr(out, "Allow:"));
    ck_assert_ptr_nonnull(strstr(out, "Status: 405 "));
    free(out);
}
END_TEST

/* --- success paths ---------------------------------------------------------- */

/* The listing: every action with a .jay-action, the chat protocol's two
 * included, with their schemas; never an HTTP-only entry. */
START_TEST(list_shows_exposed_actions_only)
{
    struct result r = run("GET", "/_jay/actions", NULL, NULL, NULL);
    json_t *list = json_object_get(r.body, "actions");
    size_t i;
    json_t *a;
    bool search = false, review_side = false, send = false, submit = false;

    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(json_array_size(list), 5);
    json_array_foreach(list, i, a) {
        const char *n = json_string_value(json_object_get(a, "name"));
        ck_assert_str_ne(n, "shop.listCategories");
        ck_assert(json_is_object(json_object_get(a, "inputSchema")));
        ck_assert(json_is_object(json_object_get(a, "outputSchema")));
        search |= strcmp(n, "shop.searchProducts") == 0;
        send |= strcmp(n, "geminiAgent.sendMessage") == 0;
        submit |= strcmp(n, "geminiAgent.submitToolResults") == 0;
        if (strcmp(n, "shop.addReview") == 0)
            review_side = json_is_true(json_object_get(a, "sideEffects"));
    }
    ck_assert(search && send && submit);
    ck_assert(review_side);
    json_decref(r.body);
    /* trailing slash is the same list */
    r = run("GET", "/_jay/actions/", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    json_decref(r.body);
}
END_TEST

/*
 * The chat protocol's entries are listed, but never offered to the model:
 * not in the site's declarations, not in its part of the prompt, not
 * found as a function; and POST on their names reaches the chat routes
 * (the chat's own decoding answers, not the action runner).
 */
START_TEST(chat_entries_are_not_for_the_model)
{
    const char *const fns[] = {"action_geminiAgent_sendMessage",
                               "action_geminiAgent_submitToolResults"};
    char *decls = json_dumps(site->declarations, 0);
    struct result r;

    ck_assert_ptr_nonnull(decls);
    ck_assert_int_eq(json_array_size(site->declarations), 3);
    ck_assert_msg(strstr(decls, "geminiAgent") == NULL, "%s", decls);
    free(decls);
    ck_assert_ptr_null(strstr(site->prompt_head, "geminiAgent"));
    for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
        ck_assert_ptr_null(plugin_find_fn(site->actions, fns[i]));
    /* a schema violation (minLength) would be a 422 from the runner */
    r = run("POST", "/_jay/actions/geminiAgent.sendMessage", J, NULL,
            "{\"message\":\"\"}");
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(err_code(&r), "bad_request");
    ck_assert_str_eq(err_field(&r, "message"), "message must not be empty");
    json_decref(r.body);
    r = run("POST", "/_jay/actions/geminiAgent.submitToolResults", J, NULL,
            "{\"results\":5,\"history\":[]}");
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(err_field(&r, "message"), "results must be an array");
    json_decref(r.body);
}
END_TEST

/*
 * The chat protocol's schemas describe what the chat routes take and
 * give: requests and answers of every kind validate, and what the chat
 * refuses (an unknown member, an empty message) does not.
 */
START_TEST(chat_schemas_describe_the_protocol)
{
    static const struct {
        const char *action, *which, *json;
        bool valid;
    } cases[] = {
        {"geminiAgent.sendMessage", "in", "{'message':'hi'}", true},
        {"geminiAgent.sendMessage", "in",
         "{'message':'remove the hub','history':[{'role':'user','parts':"
         "[{'text':'hi'}]},{'role':'model','parts':[{'text':'Hello',"
         "'thoughtSignature':'c2ln','future':1}]}],'toolDefinitions':"
         "[{'name':'click-remove-btn','description':'Remove','inputSchema':"
         "{'type':'object','properties':{}},'category':'page-automation'},"
         "{'name':'toggle-dark-mode'}],'pageState':{'cart':[]}}",
         true},
        {"geminiAgent.sendMessage", "in", "{'message':''}", false},
        {"geminiAgent.sendMessage", "in", "{'message':'hi','extra':1}", false},
        {"geminiAgent.sendMessage", "in",
         "{'message':'hi','toolDefinitions':[{'name':'1bad'}]}", false},
        {"geminiAgent.sendMessage", "in",
         "{'message':'hi','history':[{'role':'system','parts':[{}]}]}", false},
        {"geminiAgent.submitToolResults", "in",
         "{'results':[{'callId':'c1','result':'{}','isError':false}],"
         "'history':[{'role':'user','parts':[{'text':'hi'}]},{'role':"
         "'model','parts':[{'functionCall':{'id':'c1','name':'x','args':"
         "{}}}]}]}",
         true},
        {"geminiAgent.submitToolResults", "in", "{'results':[]}", false},
        {"geminiAgent.sendMessage", "out",
         "{'type':'response','message':'Hello','history':[],'usage':"
         "{'promptTokens':1,'candidatesTokens':1,'thoughtsTokens':0,"
         "'cachedTokens':0,'totalTokens':2,'geminiCalls':1},'serverCalls':"
         "[{'name':'shop.searchProducts','args':{'query':'usb'},'ok':true,"
         "'ms':3}],'model':'offline-demo','truncated':true,"
         "'historyTruncated':true,'stopReason':'max_steps'}",
         true},
        {"geminiAgent.submitToolResults", "out",
         "{'type':'tool-calls','calls':[{'id':'call_1_0','name':'click',"
         "'args':{},'category':'page-automation'}],'history':[],'usage':"
         "{'promptTokens':1,'candidatesTokens':1,'thoughtsTokens':0,"
         "'cachedTokens':0,'totalTokens':2,'geminiCalls':1},'serverCalls':"
         "[]}",
         true},
        {"geminiAgent.sendMessage", "out",
         "{'type':'other','history':[],'usage':{},'serverCalls':[]}", false},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        const struct plugin_action *a =
            plugin_find(site->actions, cases[i].action);
        struct status_error e = {0};
        char text[2048];
        json_t *v;
        int rc;

        ck_assert_ptr_nonnull(a);
        snprintf(text, sizeof(text), "%s", cases[i].json);
        for (char *p = text; *p; p++)
            if (*p == '\'')
                *p = '"';
        v = json_loads(text, 0, NULL);
        ck_assert_msg(v != NULL, "%zu: not JSON", i);
        rc = jschema_validate(cases[i].which[0] == 'i' ? a->input_schema
                                                       : a->output_schema,
                              v, &e);
        ck_assert_msg((rc == 0) == cases[i].valid, "%zu: %s", i,
                      rc == 0 ? "valid" : e.text);
        json_decref(v);
    }
}
END_TEST

/* Is every name of the NULL-terminated `names` a key of `obj`, and every
 * key of `obj` one of them? */
static bool
same_names(const json_t *obj, const char *const *names)
{
    size_t n = 0;

    for (; names[n] != NULL; n++)
        if (json_object_get(obj, names[n]) == NULL)
            return false;
    return json_object_size(obj) == n;
}

/*
 * The .jay-action files are the chat route as it is: their
 * input members are the members the route reads, their answer types the
 * types it answers, the two answers one schema; and the route validates a
 * body against its file, so what the file refuses and the route's own
 * decoding would take (a signature that is no string, with history.verify
 * off; answers that are numbers) is a 400 bad_request naming the member.
 */
START_TEST(chat_route_is_its_schemas)
{
    static const struct {
        const char *uri, *body, *has;
    } refused[] = {
        {"/_jay/actions/" CHAT_ACTION_SEND,
         "{\"message\":\"hi\",\"signatures\":[5]}",
         "the request body: /signatures/0: "},
        {"/_jay/actions/" CHAT_ACTION_SUBMIT,
         "{\"answer\":{\"id\":\"c1\",\"answers\":{\"size\":5}},"
         "\"history\":[]}",
         "the request body: /answer/answers/size: "},
    };
    const struct plugin_action *send =
        plugin_find(site->actions, CHAT_ACTION_SEND);
    const struct plugin_action *submit =
        plugin_find(site->actions, CHAT_ACTION_SUBMIT);
    const json_t *types;
    size_t i, n = 0;

    ck_assert_ptr_nonnull(send);
    ck_assert_ptr_nonnull(submit);
    ck_assert_msg(same_names(json_object_get(send->input_schema, "properties"),
                             chat_request_members(CHAT_SEND_MESSAGE)),
                  "sendMessage: the schema's members are not the route's");
    ck_assert_msg(
        same_names(json_object_get(submit->input_schema, "properties"),
                   chat_request_members(CHAT_SUBMIT_RESULTS)),
        "submitToolResults: the schema's members are not the route's");
    ck_assert(json_equal(send->output_schema, submit->output_schema));
    types = json_object_get(
        json_object_get(json_object_get(send->output_schema, "properties"),
                        "type"),
        "enum");
    for (; chat_answer_types[n] != NULL; n++) {
        const json_t *t;
        bool found = false;
        json_array_foreach(types, i, t) found |=
            strcmp(json_string_value(t), chat_answer_types[n]) == 0;
        ck_assert_msg(found, "answer type '%s' not in the schema",
                      chat_answer_types[n]);
    }
    ck_assert_uint_eq(json_array_size(types), n);

    for (i = 0; i < ARRAY_SIZE(refused); i++) {
        struct result r = run("POST", refused[i].uri, J, NULL, refused[i].body);
        ck_assert_int_eq(r.status, 400);
        ck_assert_str_eq(err_code(&r), "bad_request");
        ck_assert_msg(strstr(err_field(&r, "message"), refused[i].has) != NULL,
                      "%zu: %s", i, err_field(&r, "message"));
        json_decref(r.body);
    }
}
END_TEST

/*
 * GET /_jay/actions/geminiAgent.status: {"ready", "model"} and nothing
 * else (no path, no key), for a site without a key and one with one.
 */
START_TEST(status_says_ready_and_model)
{
    static const struct {
        const char *gemini_yaml; /* NULL: no file */
        const char *want;
    } cases[] = {
        {NULL, "{\"ready\":false,\"model\":\"" CONFIG_DEFAULT_MODEL "\"}"},
        {"apiKey: '<your-gemini-api-key>'\nmodel: offline-demo\n",
         "{\"ready\":false,\"model\":\"offline-demo\"}"},
        {"apiKey: 'AIza-status-canary'\nmodel: offline-demo\n",
         "{\"ready\":true,\"model\":\"offline-demo\"}"},
    };
    struct site *keep = site;
    char path[600];

    unsetenv("GEMINI_API_KEY");
    unsetenv("GOOGLE_API_KEY");
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct diag d = DIAG_INIT;
        struct result r;

        snprintf(path, sizeof(path), "%s/.gemini.yaml", tmpdir);
        unlink(path);
        if (cases[i].gemini_yaml != NULL) {
            FILE *f = fopen(path, "w");
            ck_assert_ptr_nonnull(f);
            fputs(cases[i].gemini_yaml, f);
            fclose(f);
        }
        snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
        site = site_load(path, &d);
        ck_assert_ptr_nonnull(site);
        diag_release(&d);
        r = run("GET", "/_jay/actions/geminiAgent.status", NULL, NULL, NULL);
        ck_assert_int_eq(r.status, 200);
        ck_assert_msg(strcmp(r.raw, cases[i].want) == 0, "%zu: %s", i, r.raw);
        ck_assert(strstr(r.head, "Content-Type: application/json; "
                                 "charset=utf-8"));
        ck_assert(strstr(r.head, "X-Content-Type-Options: nosniff"));
        ck_assert(strstr(r.head, "Cache-Control: no-store"));
        ck_assert_ptr_null(strstr(r.raw, tmpdir));
        ck_assert_ptr_null(strstr(r.raw, "canary"));
        json_decref(r.body);
        site_free(site);
    }
    site = keep;
}
END_TEST

START_TEST(search_is_case_insensitive_and_limited)
{
    struct result r = run("POST", "/_jay/actions/shop.searchProducts",
                          "Application/JSON; charset=utf-8", NULL,
                          "{\"query\":\"KEYBOARD\",\"limit\":2}");
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.body, "products")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(r.body, "total")), 3);
    json_decref(r.body);
    /* prices are written as the catalog has them, not as 17-digit noise */
    ck_assert_msg(strstr(r.raw, "\"price\":89.99,") != NULL, "%s", r.raw);
    /* category matches too */
    r = run("POST", "/_jay/actions/shop.searchProducts", J, NULL,
            "{\"query\":\"hubs & adapters\"}");
    ck_assert_int_eq(json_integer_value(json_object_get(r.body, "total")), 3);
    json_decref(r.body);
}
END_TEST

/* Side effects over the direct route (http.directActions): a signed-in
 * user the policy lets act may; anyone else gets 401/403 and nothing is
 * written; and by default (readOnly) nobody may. */
START_TEST(direct_side_effects_need_a_user_the_policy_allows)
{
    static const char review[] =
        "{\"productId\":\"p004\",\"rating\":5,\"text\":\"x\"}";
    char path[600];
    struct result r;
    struct stat st;

    snprintf(path, sizeof(path), "%s/var/shop-reviews.jsonl", tmpdir);
    r = run_as(NULL, "POST", "/_jay/actions/shop.addReview", J, NULL, review);
    ck_assert_int_eq(r.status, 401);
    json_decref(r.body);
    r = run_as("stranger", "POST", "/_jay/actions/shop.addReview", J, NULL,
               review); /* supervised: every side effect approved first */
    ck_assert_int_eq(r.status, 403);
    ck_assert_str_eq(err_code(&r), "forbidden");
    json_decref(r.body);
    ck_assert_int_ne(stat(path, &st), 0); /* nothing written */
    /* actions without side effects stay open to all */
    r = run_as(NULL, "POST", "/_jay/actions/shop.searchProducts", J, NULL,
               "{\"query\":\"hub\"}");
    ck_assert_int_eq(r.status, 200);
    json_decref(r.body);
    r = run("POST", "/_jay/actions/shop.addReview", J, NULL, review);
    ck_assert_int_eq(r.status, 200);
    json_decref(r.body);
    ck_assert_int_eq(stat(path, &st), 0);

    /* the default: readOnly */
    {
        char cfg[600], cmd[700];
        struct diag d = DIAG_INIT;
        struct site *ro;
        FILE *f;
        snprintf(cfg, sizeof(cfg), "%s/ro.yaml", tmpdir);
        f = fopen(cfg, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "actions: [%s/../../actions]\ndataDir: %s/var\n"
                   "auth: {remoteUser: {variable: REMOTE_USER, server: apache}}\n",
                getcwd((char[512]){0}, 512), tmpdir);
        fclose(f);
        ro = site_load(cfg, &d);
        ck_assert_ptr_nonnull(ro);
        diag_release(&d);
        struct site *saved = site;
        site = ro;
        r = run("POST", "/_jay/actions/shop.addReview", J, NULL, review);
        site = saved;
        ck_assert_int_eq(r.status, 403);
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
                                         json_object_get(r.body, "error"),
                                         "message")),
                                     "readOnly"));
        json_decref(r.body);
        site_free(ro);
        snprintf(cmd, sizeof(cmd), "test \"$(wc -l < '%s')\" -eq 1", path);
        ck_assert_int_eq(system(cmd), 0); /* still the owner's one line */
    }
}
END_TEST

START_TEST(review_is_appended)
{
    char path[600], line[512];
    struct result r = run(
        "POST", "/_jay/actions/shop.addReview", J, NULL,
        "{\"productId\":\"p004\",\"rating\":5,\"text\":\"Great hub \\u00e9\"}");
    FILE *f;
    int lines = 0;

    ck_assert_int_eq(r.status, 200);
    ck_assert(json_is_true(json_object_get(r.body, "ok")));
    json_decref(r.body);
    /* a rejected review adds nothing */
    r = run("POST", "/_jay/actions/shop.addReview", J, NULL,
            "{\"productId\":\"nope\",\"rating\":5,\"text\":\"x\"}");
    ck_assert_int_eq(r.status, 404);
    json_decref(r.body);
    snprintf(path, sizeof(path), "%s/var/shop-reviews.jsonl", tmpdir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof(line), f)) {
        json_t *v = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(v);
        ck_assert_str_eq(json_string_value(json_object_get(v, "productId")),
                         "p004");
        json_decref(v);
        lines++;
    }
    fclose(f);
    ck_assert_int_eq(lines, 1);
}
END_TEST

START_TEST(route_from_request_uri_and_script_name)
{
    const char *p1[] = {"REQUEST_METHOD", "GET", "REQUEST_URI",
                        "/_jay/actions?x=/y", NULL};
    const char *p2[] = {"REQUEST_METHOD", "GET", "SCRIPT_NAME", "/_jay",
                        "PATH_INFO", "/actions", NULL};
    /* a site under a base path: Apache's userdir (the CGI's REQUEST_URI
     * after a rewrite), a subfolder behind nginx */
    const char *p3[] = {"REQUEST_METHOD", "GET", "REQUEST_URI",
                        "/~alice/agent/_jay/actions?x=1", "SCRIPT_NAME",
                        "/~alice/agent/gemini-agent.cgi", NULL};
    const char *p4[] = {"REQUEST_METHOD", "GET", "DOCUMENT_URI",
                        "/shop/_jay/actions", NULL};
    const char *const *sets[] = {p1, p2, p3, p4};

    for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
        static char buf[1 << 20];
        struct unit_memio m = {sets[i], "", 0, 0, 0, buf, 0, sizeof(buf)};
        struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
        struct arena a;
        arena_init(&a);
        ck_assert_int_eq(dispatch_request(site, NULL, &io, &a), 200);
        arena_release(&a);
    }
}
END_TEST

/* --- Content-Length parsing, directly -------------------------------------- */

START_TEST(content_length_table)
{
    static const struct {
        const char *in;
        int rc;
        size_t want;
    } t[] = {
        {NULL, 0, 0},          {"", 0, 0},
        {"0", 0, 0},           {"17", 0, 17},
        {"00017", 0, 17},      {"18446744073709551615", 0, SIZE_MAX},
        {"18446744073709551616", -1, 0},
        {"+1", -1, 0},         {"1 ", -1, 0},
        {"0x10", -1, 0},       {"1e3", -1, 0},
        {"999999999999999999999999999", -1, 0},
    };
    for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
        struct status_error e = {0};
        size_t v = 99;
        int rc = request_parse_length(t[i].in, &v, &e);
        ck_assert_msg(rc == t[i].rc, "'%s'", t[i].in ? t[i].in : "(null)");
        if (rc == 0)
            ck_assert_uint_eq(v, t[i].want);
        else
            ck_assert_int_eq(e.code, ST_BAD_LENGTH);
    }
}
END_TEST

/* --- jsonin: depth is counted outside strings only ------------------------ */

START_TEST(jsonin_depth_and_positions)
{
    struct status_error e = {0};
    char deep[80];
    json_t *v;

    /* brackets inside strings do not nest */
    const char *in_string = "{\"a\":\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}";
    v = jsonin_decode(in_string, strlen(in_string), 32, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    /* an escaped quote does not end a string */
    v = jsonin_decode("[\"\\\"[[[[\"]", 10, 2, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    /* exactly 32 levels pass, 33 fail, with the column of the 33rd */
    memset(deep, '[', 32);
    memset(deep + 32, ']', 32);
    v = jsonin_decode(deep, 64, 32, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    memset(deep, '[', 33);
    memset(deep + 33, ']', 33);
    ck_assert_ptr_null(jsonin_decode(deep, 66, 32, &e));
    ck_assert_int_eq(e.code, ST_INVALID_JSON);
    ck_assert_ptr_nonnull(strstr(e.text, "column 33"));
    /* positions on later lines */
    status_clear(&e);
    ck_assert_ptr_null(jsonin_decode("{\n  \"a\": 1,\n  \"a\": 2\n}", 22, 32,
                                     &e));
    ck_assert_ptr_nonnull(strstr(e.text, "line 3"));
    /* not NUL-terminated input is fine */
    status_clear(&e);
    v = jsonin_decode("{}garbage", 2, 32, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
}
END_TEST

Suite *
dispatch_suite(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("http");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, http_errors, 0, (int)ARRAY_SIZE(http_cases));
    tcase_add_test(tc, schema_violation_answer_is_exact);
    tcase_add_test(tc, list_shows_exposed_actions_only);
    tcase_add_test(tc, status_says_ready_and_model);
    tcase_add_test(tc, chat_entries_are_not_for_the_model);
    tcase_add_test(tc, chat_schemas_describe_the_protocol);
    tcase_add_test(tc, chat_route_is_its_schemas);
    tcase_add_test(tc, search_is_case_insensitive_and_limited);
    tcase_add_test(tc, review_is_appended);
    tcase_add_test(tc, direct_side_effects_need_a_user_the_policy_allows);
    tcase_add_test(tc, route_from_request_uri_and_script_name);
    suite_add_tcase(s, tc);
    tc = tcase_create("decode");
    tcase_add_test(tc, content_length_table);
    tcase_add_test(tc, reply_error_headers);
    tcase_add_test(tc, jsonin_depth_and_positions);
    suite_add_tcase(s, tc);
    return s;
}
