/*
 * args.h - the command line of `gemini-agent chat` (docs/commands.md,
 * docs/internals/terminal.md), as Claude Code reads it, so the Claude Agent
 * SDK can start us.
 *
 * Both `--flag value` and `--flag=value` are taken, and values may be
 * empty (the SDK passes `--setting-sources=`). Claude Code flags that mean
 * nothing here are ignored with a note on stderr: the SDK passes many,
 * and refusing one would stop it from starting us. A value we do read and
 * cannot use (an unknown output format, a bad number) is an error.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_ARGS_H
#define APP_TERM_ARGS_H

#include "core/common.h"
#include "term/bounds.h"

#include <stdio.h>

/* What `-v` prints first: the Claude Code version whose protocol we speak.
 * The Python Agent SDK matches /[0-9]+\.[0-9]+\.[0-9]+/ against it and
 * wants at least 2.0.0 (docs/internals/terminal.md). */
#define TERM_PROTOCOL_VERSION "2.1.0"

enum term_format {
    TERM_FMT_TEXT,   /* the answer's text only */
    TERM_FMT_JSON,   /* the result object only */
    TERM_FMT_STREAM, /* every message, one JSON object a line */
};

/* --permission-mode (term/perm.h says what each allows). */
enum term_mode {
    TERM_MODE_DEFAULT,
    TERM_MODE_ACCEPT_EDITS,
    TERM_MODE_BYPASS,
    TERM_MODE_PLAN,
    TERM_MODE_DONT_ASK,
};

struct term_args {
    const char *prompt; /* -p's value or the positional PROMPT; NULL */
    bool print;         /* -p/--print: one prompt, then exit */
    enum term_format out;
    bool in_stream; /* --input-format stream-json */
    bool verbose;
    bool partial;      /* --include-partial-messages */
    const char *model; /* NULL: the default model */
    const char *cwd;   /* NULL: the working folder */
    const char *session_id;
    const char *resume; /* --resume ID: carry on that saved session */
    bool cont;          /* --continue: the folder's last session */
    bool fork;          /* --fork-session: resumed under a new id */
    bool no_persist;    /* --no-session-persistence: nothing saved */
    /* --add-dir: folders the file tools may reach beside the cwd */
    const char *add_dirs[BOUND_TERM_ADD_DIRS];
    size_t nadd_dirs;
    long max_turns; /* 0: BOUND_TERM_TURNS */
    enum term_mode mode;
    /* --allowedTools / --disallowedTools, each value as given (a list
     * separated by commas or spaces), in order */
    const char *allowed[BOUND_TERM_RULE_FLAGS];
    size_t nallowed;
    const char *denied[BOUND_TERM_RULE_FLAGS];
    size_t ndenied;
    const char *system_prompt; /* --system-prompt (""/NULL: ours) */
    const char *append_system; /* --append-system-prompt */
    bool prompt_stdio;         /* --permission-prompt-tool stdio */
    /* Vertex AI (docs/credentials.md, "In gemini-agent chat"): --vertex,
     * and where: --project, --location (NULL: the environment's) */
    bool vertex;
    const char *project;
    const char *location;
    bool version; /* -v/--version */
    bool help;    /* -h/--help */
};

/*
 * Read argv[1..argc) (argv[0] is the command's name) into `a`. Returns 0,
 * or CMDOPT_EXIT_USAGE (2) after saying why on `err`. Notes about
 * ignored flags go to `err` too.
 */
int term_args_parse(int argc, char **argv, struct term_args *a, FILE *err);

/* The mode's name as Claude Code writes it ("acceptEdits"). Static. */
const char *term_mode_name(enum term_mode m);

/* "acceptEdits" -> TERM_MODE_ACCEPT_EDITS: 0, or -1 for no such mode. */
int term_mode_parse(const char *s, enum term_mode *m);

extern const char term_usage[];

#endif /* APP_TERM_ARGS_H */
