/*
 * args.c - the command line of `gemini-agent chat` (args.h).
 *
 * One table names every flag we read; a second names the Claude Code
 * flags that take a value but mean nothing here, so `--flag value` of
 * one of those does not swallow the prompt as a flag of its own.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/args.h"
#include "term/bounds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_EXIT 2 /* cmdopt.h's CMDOPT_EXIT_USAGE (a layer above) */

const char term_usage[] =
    "[PROMPT] [-p|--print] [--output-format text|json|stream-json]\n"
    "[--input-format text|stream-json] [--verbose]\n"
    "[--include-partial-messages] [--model M] [--cwd DIR]\n"
    "[--session-id ID] [--resume ID | --continue] [--fork-session]\n"
    "[--no-session-persistence] [--add-dir DIR]... [--max-turns N]\n"
    "[--permission-mode default|acceptEdits|bypassPermissions|plan|dontAsk]\n"
    "[--allowedTools LIST] [--disallowedTools LIST]\n"
    "[--append-system-prompt TEXT] [--permission-prompt-tool stdio]\n"
    "[--vertex] [--project P] [--location L] [-v|--version]";

enum flag_id {
    F_PRINT,
    F_OUT,
    F_IN,
    F_VERBOSE,
    F_PARTIAL,
    F_MODEL,
    F_CWD,
    F_SESSION,
    F_RESUME,
    F_CONTINUE,
    F_MAX_TURNS,
    F_MODE,
    F_ALLOWED,
    F_DENIED,
    F_SYSTEM,
    F_APPEND,
    F_PROMPT_TOOL,
    F_VERSION,
    F_HELP,
    F_BYPASS,
    F_FORK,
    F_NO_PERSIST,
    F_ADD_DIR,
    F_VERTEX,
    F_PROJECT,
    F_LOCATION,
};

struct flag {
    const char *name; /* long name with its dashes */
    char short_name;  /* 0: none */
    bool value;       /* takes a value */
    enum flag_id id;
};

static const struct flag flags[] = {
    {"--print", 'p', false, F_PRINT},
    {"--output-format", 0, true, F_OUT},
    {"--input-format", 0, true, F_IN},
    {"--verbose", 0, false, F_VERBOSE},
    {"--include-partial-messages", 0, false, F_PARTIAL},
    {"--model", 0, true, F_MODEL},
    {"--cwd", 0, true, F_CWD},
    {"--session-id", 0, true, F_SESSION},
    {"--resume", 'r', true, F_RESUME},
    {"--continue", 'c', false, F_CONTINUE},
    {"--max-turns", 0, true, F_MAX_TURNS},
    {"--permission-mode", 0, true, F_MODE},
    {"--allowedTools", 0, true, F_ALLOWED},
    {"--allowed-tools", 0, true, F_ALLOWED},
    {"--disallowedTools", 0, true, F_DENIED},
    {"--disallowed-tools", 0, true, F_DENIED},
    {"--system-prompt", 0, true, F_SYSTEM},
    {"--append-system-prompt", 0, true, F_APPEND},
    {"--permission-prompt-tool", 0, true, F_PROMPT_TOOL},
    {"--version", 'v', false, F_VERSION},
    {"--help", 'h', false, F_HELP},
    {"--dangerously-skip-permissions", 0, false, F_BYPASS},
    {"--fork-session", 0, false, F_FORK},
    {"--no-session-persistence", 0, false, F_NO_PERSIST},
    {"--add-dir", 0, true, F_ADD_DIR},
    {"--vertex", 0, false, F_VERTEX},
    {"--project", 0, true, F_PROJECT},
    {"--location", 0, true, F_LOCATION},
};

/* Claude Code flags with a value that we ignore (SDK 0.1 and 0.3 argv,
 * docs/internals/terminal.md). The others we do not know are taken as
 * flags without a value. */
static const char *const ignored_with_value[] = {
    "--agent",
    "--agents",
    "--betas",
    "--json-schema",
    "--permission-prompts",
    "--tools",
    "--mcp-config",
    "--setting-sources",
    "--settings",
    "--fallback-model",
    "--plugin-dir",
    "--resume-session-at",
    "--thinking",
    "--max-thinking-tokens",
    "--effort",
    "--debug-file",
    "--max-budget-usd",
    "--output-style",
    "--ide",
    "--replay-user-messages-from",
};

static const char *const modes[] = {
    [TERM_MODE_DEFAULT] = "default",
    [TERM_MODE_ACCEPT_EDITS] = "acceptEdits",
    [TERM_MODE_BYPASS] = "bypassPermissions",
    [TERM_MODE_PLAN] = "plan",
    [TERM_MODE_DONT_ASK] = "dontAsk",
};

const char *
term_mode_name(enum term_mode m)
{
    return (size_t)m < ARRAY_SIZE(modes) ? modes[m] : "default";
}

int
term_mode_parse(const char *s, enum term_mode *m)
{
    for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
        if (strcmp(s, modes[i]) == 0) {
            *m = (enum term_mode)i;
            return 0;
        }
    return -1;
}

static int bad(FILE *err, const char *fmt, ...) ATTR_FMT(2, 3);

static int
bad(FILE *err, const char *fmt, ...)
{
    va_list ap;

    fputs("gemini-agent chat: ", err);
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputs("\n", err);
    return USAGE_EXIT;
}

/* A flag without a value: 1 when `f` is one (applied), else 0. */
static int
apply_switch(const struct flag *f, struct term_args *a)
{
    switch (f->id) {
    case F_PRINT:
        a->print = true;
        break;
    case F_VERBOSE:
        a->verbose = true;
        break;
    case F_PARTIAL:
        a->partial = true;
        break;
    case F_CONTINUE:
        a->cont = true;
        break;
    case F_VERSION:
        a->version = true;
        break;
    case F_HELP:
        a->help = true;
        break;
    case F_BYPASS:
        a->mode = TERM_MODE_BYPASS;
        break;
    case F_FORK:
        a->fork = true;
        break;
    case F_NO_PERSIST:
        a->no_persist = true;
        break;
    case F_VERTEX:
        a->vertex = true;
        break;
    default:
        return 0;
    }
    return 1;
}

/* A flag whose value is kept as it is (an empty one meaning the default
 * where it says so): 1 when `f` is one (applied), else 0. */
static int
apply_text(const struct flag *f, const char *v, struct term_args *a)
{
    const char *or_null = v != NULL && v[0] ? v : NULL;

    switch (f->id) {
    case F_MODEL:
        a->model = or_null; /* empty: the default */
        break;
    case F_CWD:
        a->cwd = or_null;
        break;
    case F_SESSION:
        a->session_id = or_null;
        break;
    case F_RESUME:
        a->resume = or_null;
        break;
    case F_PROJECT:
        a->project = or_null;
        break;
    case F_LOCATION:
        a->location = or_null;
        break;
    case F_SYSTEM:
        a->system_prompt = v;
        break;
    case F_APPEND:
        a->append_system = v;
        break;
    default:
        return 0;
    }
    return 1;
}

/* --output-format and --input-format. */
static int
apply_format(const struct flag *f, const char *v, struct term_args *a,
             FILE *err)
{
    if (f->id == F_IN) {
        if (strcmp(v, "text") == 0)
            a->in_stream = false;
        else if (strcmp(v, "stream-json") == 0)
            a->in_stream = true;
        else
            return bad(err, "%s must be text or stream-json, not '%s'", f->name,
                       v);
        return 0;
    }
    if (strcmp(v, "text") == 0)
        a->out = TERM_FMT_TEXT;
    else if (strcmp(v, "json") == 0)
        a->out = TERM_FMT_JSON;
    else if (strcmp(v, "stream-json") == 0)
        a->out = TERM_FMT_STREAM;
    else
        return bad(err, "%s must be text, json or stream-json, not '%s'",
                   f->name, v);
    return 0;
}

/* --allowedTools, --disallowedTools and --add-dir: a value more. */
static int
apply_list(const struct flag *f, const char *v, struct term_args *a, FILE *err)
{
    if (f->id == F_ADD_DIR) {
        if (v[0] == '\0') /* the SDK passes --add-dir= for none */
            return 0;
        if (a->nadd_dirs == BOUND_TERM_ADD_DIRS)
            return bad(err, "%s given more than %d times", f->name,
                       BOUND_TERM_ADD_DIRS);
        a->add_dirs[a->nadd_dirs++] = v;
        return 0;
    }
    const char **list = f->id == F_ALLOWED ? a->allowed : a->denied;
    size_t *n = f->id == F_ALLOWED ? &a->nallowed : &a->ndenied;
    if (*n == BOUND_TERM_RULE_FLAGS) {
        fprintf(err, "gemini-agent chat: %s given more than %d times\n",
                f->name, BOUND_TERM_RULE_FLAGS);
        return USAGE_EXIT;
    }
    list[(*n)++] = v;
    return 0;
}

/* Apply flag `f` with value `v` (NULL for a flag without one). */
static int
apply(const struct flag *f, const char *v, struct term_args *a, FILE *err)
{
    char *end;

    if (apply_switch(f, a) || apply_text(f, v, a))
        return 0;
    switch (f->id) {
    case F_OUT:
    case F_IN:
        return apply_format(f, v, a, err);
    case F_ALLOWED:
    case F_DENIED:
    case F_ADD_DIR:
        return apply_list(f, v, a, err);
    case F_MAX_TURNS:
        errno = 0;
        a->max_turns = strtol(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || a->max_turns < 1)
            return bad(err, "%s must be a whole number >= 1, not '%s'", f->name,
                       v);
        if (a->max_turns > BOUND_TERM_TURNS)
            a->max_turns = BOUND_TERM_TURNS;
        return 0;
    case F_MODE:
        if (v[0] != '\0' && term_mode_parse(v, &a->mode) != 0)
            return bad(err,
                       "%s must be default, acceptEdits, bypassPermissions, "
                       "plan or dontAsk, not '%s'",
                       f->name, v);
        return 0;
    case F_PROMPT_TOOL:
        if (strcmp(v, "stdio") != 0)
            return bad(err, "%s: only 'stdio' is served, not '%s'", f->name, v);
        a->prompt_stdio = true;
        return 0;
    default: /* the switches and texts above */
        return 0;
    }
}

static const struct flag *
find_long(const char *s, size_t n)
{
    for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
        if (strlen(flags[i].name) == n && strncmp(flags[i].name, s, n) == 0)
            return &flags[i];
    return NULL;
}

static const struct flag *
find_short(char c)
{
    for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
        if (flags[i].short_name == c)
            return &flags[i];
    return NULL;
}

static bool
ignored_takes_value(const char *s, size_t n)
{
    for (size_t i = 0; i < ARRAY_SIZE(ignored_with_value); i++)
        if (strlen(ignored_with_value[i]) == n &&
            strncmp(ignored_with_value[i], s, n) == 0)
            return true;
    return false;
}

int
term_args_parse(int argc, char **argv, struct term_args *a, FILE *err)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const struct flag *f;
        const char *eq, *v = NULL;
        size_t n;
        int rc;

        if (strcmp(s, "--") == 0) { /* the rest is the prompt */
            if (i + 1 < argc)
                a->prompt = argv[i + 1];
            if (i + 2 < argc)
                return bad(err, "one PROMPT only (quote it): '%s'",
                           argv[i + 2]);
            break;
        }
        if (s[0] != '-' || s[1] == '\0') {
            if (a->prompt != NULL)
                return bad(err, "one PROMPT only (quote it): '%s'", s);
            a->prompt = s;
            continue;
        }
        if (s[1] != '-') { /* -p, -v, ...: one letter, no bundling */
            if (s[2] != '\0' || (f = find_short(s[1])) == NULL)
                return bad(err, "unknown option '%s'", s);
        } else {
            eq = strchr(s, '=');
            n = eq ? (size_t)(eq - s) : strlen(s);
            if (eq != NULL)
                v = eq + 1;
            if ((f = find_long(s, n)) == NULL) {
                bool takes = ignored_takes_value(s, n);
                fprintf(err,
                        "gemini-agent chat: note: ignoring %.*s (no meaning "
                        "here)\n",
                        (int)n, s);
                if (takes && eq == NULL && i + 1 < argc)
                    i++; /* its value */
                continue;
            }
            if (v != NULL && !f->value)
                return bad(err, "%s takes no value (got '%s')", f->name, v);
        }
        if (f->value && v == NULL) {
            /* -p takes the prompt as its value only when one follows */
            if (i + 1 >= argc)
                return bad(err, "%s needs a value", f->name);
            v = argv[++i];
        }
        if (f->id == F_PRINT && v == NULL && i + 1 < argc &&
            argv[i + 1][0] != '-' && a->prompt == NULL)
            a->prompt = argv[++i];
        if ((rc = apply(f, v, a, err)) != 0)
            return rc;
    }
    return 0;
}
