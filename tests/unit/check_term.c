/*
 * check_term.c - the terminal client's pure parts: its command line
 * (term/args.h) as the Claude Agent SDK writes it, the permission modes
 * and tool rules (term/perm.h), the usage and price mapping
 * (term/streamjson.h), compaction's cut and requests (term/compact.h)
 * and session ids (term/keep.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/loop.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/status.h"
#include "term/args.h"
#include "term/compact.h"
#include "term/conv.h"
#include "term/keep.h"
#include "term/input.h"
#include "term/perm.h"
#include "term/streamjson.h"
#include "term/bounds.h"

#include <check.h>
#include <limits.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Parse a NULL-terminated argv (argv[0] "chat"); stderr into err[]. */
static int
parse(struct term_args *a, char *err, size_t n, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;
    FILE *f = fmemopen(err, n, "w");
    int rc;

    argv[argc++] = UNCONST("chat");
    va_start(ap, n);
    for (char *s; (s = va_arg(ap, char *)) != NULL && argc < 63;)
        argv[argc++] = s;
    va_end(ap);
    argv[argc] = NULL;
    memset(err, 0, n);
    rc = term_args_parse(argc, argv, a, f);
    fclose(f);
    return rc;
}

START_TEST(sdk_argv_both_styles)
{
    struct term_args a;
    char err[1024];

    /* SDK 0.3.x: --flag=value, empty values, flags we ignore */
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--output-format",
                           "stream-json", "--verbose", "--input-format",
                           "stream-json", "--max-turns=5",
                           "--model=gemini-2.5-pro",
                           "--allowedTools=Read,Grep",
                           "--disallowedTools=Bash", "--setting-sources=",
                           "--permission-mode=acceptEdits",
                           "--include-partial-messages",
                           "--permission-prompt-tool=stdio", NULL),
                     0);
    ck_assert_int_eq(a.out, TERM_FMT_STREAM);
    ck_assert(a.in_stream && a.verbose && a.partial && a.prompt_stdio);
    ck_assert_int_eq(a.max_turns, 5);
    ck_assert_str_eq(a.model, "gemini-2.5-pro");
    ck_assert_int_eq(a.mode, TERM_MODE_ACCEPT_EDITS);
    ck_assert_uint_eq(a.nallowed, 1);
    ck_assert_str_eq(a.allowed[0], "Read,Grep");
    ck_assert_uint_eq(a.ndenied, 1);
    ck_assert_ptr_null(a.prompt);
    ck_assert_ptr_nonnull(strstr(err, "ignoring --setting-sources"));

    /* SDK 0.1.0: space-separated, with empty values */
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--output-format",
                           "stream-json", "--verbose", "--input-format",
                           "stream-json", "--system-prompt", "",
                           "--setting-sources", "", "--permission-mode",
                           "default", NULL),
                     0);
    ck_assert_str_eq(a.system_prompt, "");
    ck_assert_int_eq(a.mode, TERM_MODE_DEFAULT);
    ck_assert_ptr_null(a.prompt); /* the empty value was not the prompt */
}
END_TEST

START_TEST(print_and_prompt)
{
    struct term_args a;
    char err[512];

    ck_assert_int_eq(parse(&a, err, sizeof(err), "-p", "hello there",
                           "--output-format", "json", NULL),
                     0);
    ck_assert(a.print);
    ck_assert_str_eq(a.prompt, "hello there");
    ck_assert_int_eq(a.out, TERM_FMT_JSON);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--print", "--model", "m",
                           "why?", NULL),
                     0);
    ck_assert_str_eq(a.prompt, "why?");
    ck_assert_int_eq(parse(&a, err, sizeof(err), "-v", NULL), 0);
    ck_assert(a.version);
    /* an unknown Claude flag with a value does not eat the prompt */
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--betas", "x,y", "hi",
                           NULL),
                     0);
    ck_assert_str_eq(a.prompt, "hi");
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--", "-p is text", NULL),
                     0);
    ck_assert_str_eq(a.prompt, "-p is text");
}
END_TEST

START_TEST(bad_flags)
{
    struct term_args a;
    char err[512];

    ck_assert_int_eq(parse(&a, err, sizeof(err), "--output-format", "xml",
                           NULL),
                     2);
    ck_assert_ptr_nonnull(strstr(err, "text, json or stream-json"));
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--input-format=yaml", NULL),
                     2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--max-turns", "0", NULL),
                     2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--max-turns=x", NULL), 2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--model", NULL), 2);
    ck_assert_ptr_nonnull(strstr(err, "needs a value"));
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--permission-mode=auto",
                           NULL),
                     2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--verbose=yes", NULL), 2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "-x", NULL), 2);
    ck_assert_int_eq(parse(&a, err, sizeof(err), "one", "two", NULL), 2);
    ck_assert_int_eq(parse(&a, err, sizeof(err),
                           "--permission-prompt-tool=mcp__x", NULL),
                     2);
    /* more turns than the bound are cut to it */
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--max-turns=100000", NULL),
                     0);
    ck_assert_int_eq(a.max_turns, BOUND_TERM_TURNS);
}
END_TEST

/* The engine's verdict (registry/decide.h) on a terminal call under the
 * rules `r`, as a term_verdict. */
static enum term_verdict
judge_rules(enum term_mode m, const struct term_rules *r, const char *tool,
            const json_t *in, bool side, bool edit)
{
    struct decide_input di = {.caller = DECIDE_TERMINAL,
                              .call = {tool, in},
                              .side_effects = side,
                              .edit = edit,
                              .mode = term_perm_mode(m),
                              .allow_rules = r->allow,
                              .deny_rules = r->deny,
                              .can_ask = true};
    struct decide_result d;

    switch (decide_judge(&di, &d)) {
    case DECIDE_RUN:
        return TERM_ALLOW;
    case DECIDE_ASK:
        return TERM_ASK;
    default:
        return TERM_DENY;
    }
}

static enum term_verdict
verdict(enum term_mode m, const char *allow, const char *deny,
        const char *tool, const char *command, bool side, bool edit)
{
    struct term_args args = {0};
    struct term_rules *r = calloc(1, sizeof(*r));
    struct status_error err = {0};
    struct arena a;
    json_t *in = command ? json_pack("{s:s}", "command", command)
                         : json_object();
    enum term_verdict v;

    arena_init(&a);
    if (allow)
        args.allowed[args.nallowed++] = allow;
    if (deny)
        args.denied[args.ndenied++] = deny;
    ck_assert_int_eq(term_rules_parse(&args, &a, r, &err), 0);
    v = judge_rules(m, r, tool, in, side, edit);
    json_decref(in);
    arena_release(&a);
    free(r);
    return v;
}

START_TEST(modes)
{
    /* read-only tools run in every mode */
    for (int m = TERM_MODE_DEFAULT; m <= TERM_MODE_DONT_ASK; m++)
        ck_assert_int_eq(verdict(m, NULL, NULL, "Read", NULL, false, true),
                         TERM_ALLOW);
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, NULL, NULL, "Bash", "ls",
                             true, false),
                     TERM_ASK);
    ck_assert_int_eq(verdict(TERM_MODE_ACCEPT_EDITS, NULL, NULL, "Write",
                             NULL, true, true),
                     TERM_ALLOW);
    ck_assert_int_eq(verdict(TERM_MODE_ACCEPT_EDITS, NULL, NULL, "Bash",
                             "ls", true, false),
                     TERM_ASK);
    ck_assert_int_eq(verdict(TERM_MODE_BYPASS, NULL, NULL, "Bash", "rm x",
                             true, false),
                     TERM_ALLOW);
    ck_assert_int_eq(verdict(TERM_MODE_PLAN, NULL, NULL, "Write", NULL, true,
                             true),
                     TERM_DENY);
    ck_assert_int_eq(verdict(TERM_MODE_DONT_ASK, NULL, NULL, "Bash", "ls",
                             true, false),
                     TERM_DENY);
    ck_assert_int_eq(verdict(TERM_MODE_DONT_ASK, "Bash", NULL, "Bash", "ls",
                             true, false),
                     TERM_ALLOW);
}
END_TEST

START_TEST(rules)
{
    /* Bash(git:*): a prefix of the command */
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, "Read Bash(git:*)", NULL,
                             "Bash", "git status", true, false),
                     TERM_ALLOW);
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, "Bash(git:*)", NULL, "Bash",
                             "rm -rf /", true, false),
                     TERM_ASK);
    /* an exact command, with spaces and commas inside the parentheses */
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, "Edit,Bash(echo a, b)",
                             NULL, "Bash", "echo a, b", true, false),
                     TERM_ALLOW);
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, "Bash(echo a, b)", NULL,
                             "Bash", "echo a, bc", true, false),
                     TERM_ASK);
    /* deny wins over allow and over bypass */
    ck_assert_int_eq(verdict(TERM_MODE_BYPASS, "Bash", "Bash(rm:*)", "Bash",
                             "rm x", true, false),
                     TERM_DENY);
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, NULL, "Read", "Read", NULL,
                             false, true),
                     TERM_DENY);
    /* a pattern needs a command: a tool without one never matches */
    ck_assert_int_eq(verdict(TERM_MODE_DEFAULT, "Write(x:*)", NULL, "Write",
                             NULL, true, true),
                     TERM_ASK);
}
END_TEST

START_TEST(bad_rules)
{
    struct term_args args = {0};
    struct term_rules *r = calloc(1, sizeof(*r));
    struct status_error err = {0};
    struct arena a;

    arena_init(&a);
    args.allowed[args.nallowed++] = "Bash(git:*";
    ck_assert_int_eq(term_rules_parse(&args, &a, r, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    arena_release(&a);
    free(r);
}
END_TEST

START_TEST(usage_and_cost)
{
    struct loop_usage u = {.prompt = 1000000, .candidates = 400000,
                           .thoughts = 100000, .cached = 200000};
    json_t *j = term_sj_usage(&u);

    ck_assert_int_eq(json_integer_value(json_object_get(j, "input_tokens")),
                     800000);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "output_tokens")),
                     500000);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         j, "cache_read_input_tokens")),
                     200000);
    json_decref(j);
    /* 0.8M * 1.25 + 0.5M * 10 + 0.2M * 0.31 = 1 + 5 + 0.062 */
    ck_assert_double_eq_tol(term_sj_cost("gemini-2.5-pro", &u), 6.062, 1e-9);
    /* -lite is not priced as its longer-named sibling's prefix */
    ck_assert_double_eq_tol(term_sj_cost("gemini-2.5-flash-lite", &u),
                            0.8 * 0.10 + 0.5 * 0.40 + 0.2 * 0.025, 1e-9);
    ck_assert(term_sj_cost("gemini-3.8-flash", &u) == 0);
    /* counts near LONG_MAX from Gemini: saturated, never
     * wrapped negative */
    u = (struct loop_usage){.prompt = LONG_MAX, .candidates = LONG_MAX,
                            .thoughts = 9223372036854775000L, .cached = 0};
    j = term_sj_usage(&u);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "output_tokens")),
                     LONG_MAX);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "input_tokens")),
                     LONG_MAX);
    json_decref(j);
    ck_assert(term_sj_cost("gemini-2.5-pro", &u) > 0);
}
END_TEST

START_TEST(uuid_v4)
{
    char a[37], b[37];

    ck_assert_int_eq(term_uuid(a), 0);
    ck_assert_int_eq(term_uuid(b), 0);
    ck_assert_uint_eq(strlen(a), 36);
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(a[14], '4');
    ck_assert_ptr_nonnull(strchr("89ab", a[19]));
    ck_assert(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
}
END_TEST

/* A conversation: u = a user's text, m = the model, c = the model's
 * call, r = the function's response. */
static json_t *
conversation(const char *shape)
{
    json_t *c = json_array();

    for (const char *p = shape; *p; p++) {
        json_t *x = NULL;
        switch (*p) {
        case 'u':
            x = json_pack("{s:s, s:[{s:s}]}", "role", "user", "parts",
                          "text", "q");
            break;
        case 'm':
            x = json_pack("{s:s, s:[{s:s}]}", "role", "model", "parts",
                          "text", "a");
            break;
        case 'c':
            x = json_pack("{s:s, s:[{s:{s:s}, s:s}]}", "role", "model",
                          "parts", "functionCall", "name", "Read",
                          "thoughtSignature", "sig");
            break;
        case 'r':
            x = json_pack("{s:s, s:[{s:{s:s}}]}", "role", "user", "parts",
                          "functionResponse", "name", "Read");
            break;
        }
        json_array_append_new(c, x);
    }
    return c;
}

START_TEST(compaction_cut)
{
    json_t *c = conversation("ucrmucrmum");

    /* keep 1: the last user turn (index 8); keep 2: the one at 4; never
     * inside a call and its response */
    ck_assert_uint_eq(term_compact_split(c, 1), 8);
    ck_assert_uint_eq(term_compact_split(c, 2), 4);
    ck_assert_uint_eq(term_compact_split(c, 3), 0); /* the first: nothing */
    ck_assert_uint_eq(term_compact_split(c, 9), 0);
    ck_assert_uint_eq(term_compact_split(c, 0), 10); /* /compact: all */
    json_decref(c);
    c = conversation("");
    ck_assert_uint_eq(term_compact_split(c, 0), 0);
    ck_assert_uint_eq(term_compact_split(c, 1), 0);
    json_decref(c);
    c = conversation("rm"); /* no user turn at all */
    ck_assert_uint_eq(term_compact_split(c, 0), 0);
    json_decref(c);
}
END_TEST

START_TEST(compaction_due)
{
    struct config_compaction c = CONFIG_COMPACTION_INIT;

    ck_assert(!term_compact_due(&c, 0));
    ck_assert(!term_compact_due(&c, DEFAULT_CONTEXT_WINDOW / 2));
    ck_assert(term_compact_due(&c, DEFAULT_CONTEXT_WINDOW));
    ck_assert(term_compact_due(&c, 838861)); /* 80% of 1048576 */
    ck_assert(!term_compact_due(&c, 838860));
    c.window = 1000;
    c.at_percent = 50;
    ck_assert(term_compact_due(&c, 500));
    ck_assert(!term_compact_due(&c, 499));
    c.enabled = false;
    ck_assert(!term_compact_due(&c, 1000000));
    ck_assert(!term_compact_due(NULL, 1000000));
}
END_TEST

START_TEST(compaction_request_and_result)
{
    json_t *c = conversation("ucrmum");
    json_t *tools = json_pack("[{s:[]}]", "functionDeclarations");
    json_t *req = term_compact_request(c, 4, "sys", tools);
    json_t *head = json_object_get(req, "contents"), *next;

    /* the old part whole (the signed call kept), then the ask */
    ck_assert_uint_eq(json_array_size(head), 5);
    ck_assert(json_equal(json_array_get(head, 1), json_array_get(c, 1)));
    ck_assert(strncmp(json_string_value(json_object_get(
                          json_array_get(
                              json_object_get(json_array_get(head, 4), "parts"),
                              0),
                          "text")),
                      "Summarise the conversation", 26) == 0);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(json_object_get(
                                                            req,
                                                            "systemInstruction"),
                                                        "parts"),
                                        0),
                         "text")),
                     "sys");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(req, "toolConfig"),
                                         "functionCallingConfig"),
                         "mode")),
                     "NONE");
    ck_assert_ptr_eq(json_object_get(req, "tools"), tools);
    json_decref(req);
    req = term_compact_request(c, 4, NULL, NULL);
    ck_assert_ptr_null(json_object_get(req, "tools"));
    ck_assert_ptr_null(json_object_get(req, "toolConfig"));
    json_decref(req);

    next = term_compact_apply(c, 4, "the gist");
    ck_assert_uint_eq(json_array_size(next), 4);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(json_array_get(next, 0),
                                                        "parts"),
                                        0),
                         "text")),
                     TERM_COMPACT_PREFIX "the gist");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(next, 1),
                                                       "role")),
                     "model");
    /* the kept turns are the same values */
    ck_assert_ptr_eq(json_array_get(next, 2), json_array_get(c, 4));
    ck_assert_ptr_eq(json_array_get(next, 3), json_array_get(c, 5));
    json_decref(next);
    json_decref(tools);
    json_decref(c);
}
END_TEST

START_TEST(session_ids)
{
    char big[BOUND_TERM_SESSION_ID + 2];

    ck_assert(term_keep_id_ok("8f14e45f-ceea-4e67-a1b2-0c2d3e4f5a6b"));
    ck_assert(term_keep_id_ok("x"));
    ck_assert(!term_keep_id_ok(""));
    ck_assert(!term_keep_id_ok(NULL));
    ck_assert(!term_keep_id_ok("has space"));
    ck_assert(!term_keep_id_ok("tab\there"));
    ck_assert(!term_keep_id_ok("caf\xc3\xa9"));
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert(!term_keep_id_ok(big));
    big[sizeof(big) - 2] = '\0';
    ck_assert(term_keep_id_ok(big));
}
END_TEST
/* The session's line reader: whole lines out of any split of the bytes,
 * nothing (not a wait) when nothing is there, the last line without a
 * newline, the queue in order. */
START_TEST(input_lines)
{
    struct term_input in;
    const char *line;
    char *q;
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    term_input_init(&in, p[0]);
    ck_assert_int_eq(term_input_line(&in, 0, &line), TERM_INPUT_NONE);
    ck_assert_int_eq(write(p[1], "{\"a\":1}\r\n{\"b\"", 13), 13);
    ck_assert_int_eq(term_input_line(&in, 0, &line), 7);
    ck_assert_str_eq(line, "{\"a\":1}");
    /* half a line is not a line */
    ck_assert_int_eq(term_input_line(&in, 0, &line), TERM_INPUT_NONE);
    ck_assert_int_eq(write(p[1], ":2}\n\nlast", 9), 9);
    ck_assert_int_eq(term_input_line(&in, 0, &line), 7);
    ck_assert_str_eq(line, "{\"b\":2}");
    ck_assert_int_eq(term_input_line(&in, 0, &line), 0);
    ck_assert_str_eq(line, "");
    ck_assert_int_eq(term_input_line(&in, 0, &line), TERM_INPUT_NONE);
    close(p[1]);
    ck_assert_int_eq(term_input_line(&in, -1, &line), 4);
    ck_assert_str_eq(line, "last");
    ck_assert_int_eq(term_input_line(&in, -1, &line), -1);
    ck_assert_int_eq(term_input_line(&in, 0, &line), -1);

    ck_assert_ptr_null(term_input_undefer(&in));
    for (int i = 0; i < BOUND_TERM_QUEUED; i++)
        ck_assert_int_eq(term_input_defer(&in, i ? "later" : "first"), 0);
    ck_assert_int_eq(term_input_defer(&in, "one too many"), -1);
    q = term_input_undefer(&in);
    ck_assert_str_eq(q, "first");
    free(q);
    q = term_input_undefer(&in);
    ck_assert_str_eq(q, "later");
    free(q);
    term_input_release(&in); /* frees the rest */
    close(p[0]);
}
END_TEST


/* The host's updatedPermissions: rules added, the mode set, the rest
 * ignored; a rule that cannot be read is an error. */
START_TEST(permission_updates)
{
    struct arena a;
    struct term_rules r = {0};
    enum term_mode mode = TERM_MODE_DEFAULT;
    struct status_error err = {0};
    json_t *git = json_pack("{s:s}", "command", "git status");
    json_t *rm = json_pack("{s:s}", "command", "rm -rf x");
    json_t *u = json_loads(
        "[{\"type\":\"addRules\",\"rules\":[{\"toolName\":\"Bash\","
        "\"ruleContent\":\"git:*\"},{\"toolName\":\"Glob\"}],"
        "\"behavior\":\"allow\",\"destination\":\"session\"},"
        "{\"type\":\"addRules\",\"rules\":[{\"toolName\":\"Bash\","
        "\"ruleContent\":\"rm:*\"}],\"behavior\":\"deny\"},"
        "{\"type\":\"addRules\",\"rules\":[{\"toolName\":\"Write\"}],"
        "\"behavior\":\"ask\"},"
        "{\"type\":\"removeRules\",\"rules\":[]},"
        "{\"type\":\"setMode\",\"mode\":\"acceptEdits\"}]",
        0, NULL);
    json_t *bad = json_loads("[{\"type\":\"setMode\",\"mode\":\"auto\"}]",
                             0, NULL);
    json_t *sug;

    arena_init(&a);
    ck_assert_int_eq(term_perm_update(NULL, &a, &r, &mode, &err), 0);
    ck_assert_int_eq(term_perm_update(u, &a, &r, &mode, &err), 0);
    ck_assert_uint_eq(json_array_size(r.allow), 2);
    ck_assert_uint_eq(json_array_size(r.deny), 1);
    ck_assert_int_eq(mode, TERM_MODE_ACCEPT_EDITS);
    ck_assert_int_eq(judge_rules(mode, &r, "Bash", git, true, false),
                     TERM_ALLOW);
    ck_assert_int_eq(judge_rules(mode, &r, "Bash", rm, true, false),
                     TERM_DENY);
    ck_assert_int_eq(term_perm_update(bad, &a, &r, &mode, &err), -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_int_eq(mode, TERM_MODE_ACCEPT_EDITS);

    sug = term_perm_suggest("Bash", git, false);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(json_array_get(sug, 0),
                                                        "rules"),
                                        0),
                         "ruleContent")),
                     "git:*");
    json_decref(sug);
    sug = term_perm_suggest("Write", NULL, true);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(sug, 0),
                                                       "mode")),
                     "acceptEdits");
    json_decref(sug);
    sug = term_perm_suggest("WebFetch", NULL, false);
    ck_assert_ptr_null(json_object_get(
        json_array_get(json_object_get(json_array_get(sug, 0), "rules"), 0),
        "ruleContent"));
    json_decref(sug);
    json_decref(git);
    json_decref(rm);
    json_decref(u);
    json_decref(bad);
    arena_release(&a);
}
END_TEST

/* Every flag the table reads lands in its field (args.c's apply and the
 * helpers it hands each kind of flag to). */
START_TEST(every_flag)
{
    struct term_args a;
    char err[512];

    ck_assert_int_eq(
        parse(&a, err, sizeof(err), "-p", "--verbose",
              "--include-partial-messages", "--continue", "--fork-session",
              "--no-session-persistence", "--vertex", "--help", "-v",
              "--cwd=/tmp", "--session-id", "s1", "--resume=r1",
              "--project", "p", "--location=l", "--system-prompt=S",
              "--append-system-prompt", "A", "--add-dir=/a", "--add-dir=",
              "--add-dir", "/b", "--allowed-tools", "Read",
              "--disallowed-tools=Bash", "--permission-mode=plan",
              "--output-format=json", "--input-format=text", NULL),
        0);
    ck_assert(a.print && a.verbose && a.partial && a.cont && a.fork &&
              a.no_persist && a.vertex && a.help && a.version);
    ck_assert_str_eq(a.cwd, "/tmp");
    ck_assert_str_eq(a.session_id, "s1");
    ck_assert_str_eq(a.resume, "r1");
    ck_assert_str_eq(a.project, "p");
    ck_assert_str_eq(a.location, "l");
    ck_assert_str_eq(a.system_prompt, "S");
    ck_assert_str_eq(a.append_system, "A");
    ck_assert_uint_eq(a.nadd_dirs, 2); /* --add-dir= adds none */
    ck_assert_str_eq(a.add_dirs[1], "/b");
    ck_assert_str_eq(a.allowed[0], "Read");
    ck_assert_str_eq(a.denied[0], "Bash");
    ck_assert_int_eq(a.mode, TERM_MODE_PLAN);
    ck_assert_int_eq(a.out, TERM_FMT_JSON);
    ck_assert(!a.in_stream);
    ck_assert_ptr_null(a.prompt);
    /* empty values: the default; --dangerously-skip-permissions */
    ck_assert_int_eq(parse(&a, err, sizeof(err), "--model=", "--cwd=",
                           "--resume=", "--project=",
                           "--dangerously-skip-permissions", NULL),
                     0);
    ck_assert(a.model == NULL && a.cwd == NULL && a.resume == NULL &&
              a.project == NULL);
    ck_assert_int_eq(a.mode, TERM_MODE_BYPASS);
}
END_TEST

/* The conversation's counts: the last answer's share of the loop's
 * totals, the message ids, a model set during a prompt, the usage
 * saved. */
START_TEST(conv_counts)
{
    struct term_conv c = {0};
    struct loop_usage t1 = {.prompt = 100, .candidates = 20, .calls = 1};
    struct loop_usage t2 = {.prompt = 250, .candidates = 50, .calls = 2};
    struct loop_usage all;
    double cost;
    json_t *u;

    ck_assert_int_eq(term_conv_set_model(&c, "default", false), 0);
    ck_assert_str_eq(c.model, CONFIG_DEFAULT_MODEL);
    term_conv_reset_prompt(&c);
    ck_assert_str_eq(c.msg_id, "msg_1");
    term_conv_thinking(&c);
    term_conv_answered(&c, &t1);
    term_conv_answered(&c, &t2);
    ck_assert_int_eq(c.last.prompt, 150);
    ck_assert_int_eq(c.last.candidates, 30);
    ck_assert_int_eq(c.context_tokens, 180);
    ck_assert_int_eq(c.num_turns, 2);
    ck_assert_str_eq(c.msg_id, "msg_2");
    /* during a prompt the model is for the next one */
    ck_assert_int_eq(term_conv_set_model(&c, "m2", true), 0);
    ck_assert_str_eq(c.model, CONFIG_DEFAULT_MODEL);
    c.used.prompt = 1000;
    u = term_conv_session_usage(&c, &all, &cost);
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(all.prompt, 1250);
    ck_assert_int_eq(all.calls, 2);
    ck_assert_int_eq(c.used.prompt, 1000); /* kept only once saved */
    term_conv_kept(&c, &all, cost);
    ck_assert_int_eq(c.used.prompt, 1250);
    json_decref(u);
    term_conv_reset_prompt(&c);
    ck_assert_str_eq(c.model, "m2");
    ck_assert_ptr_null(c.next_model);
    ck_assert_str_eq(c.msg_id, "msg_3");
    ck_assert_int_eq(c.num_turns, 0);
    term_conv_release(&c);
}
END_TEST

Suite *
term_suite(void)
{
    Suite *s = suite_create("term");
    TCase *tc = tcase_create("term");

    tcase_add_test(tc, sdk_argv_both_styles);
    tcase_add_test(tc, print_and_prompt);
    tcase_add_test(tc, bad_flags);
    tcase_add_test(tc, modes);
    tcase_add_test(tc, rules);
    tcase_add_test(tc, bad_rules);
    tcase_add_test(tc, usage_and_cost);
    tcase_add_test(tc, uuid_v4);
    tcase_add_test(tc, compaction_cut);
    tcase_add_test(tc, compaction_due);
    tcase_add_test(tc, compaction_request_and_result);
    tcase_add_test(tc, session_ids);
    tcase_add_test(tc, permission_updates);
    tcase_add_test(tc, input_lines);
    tcase_add_test(tc, every_flag);
    tcase_add_test(tc, conv_counts);
    suite_add_tcase(s, tc);
    return s;
}
