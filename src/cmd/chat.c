/*
 * chat.c - `gemini-agent chat [PROMPT]`: the terminal client, speaking
 * Claude Code's command line and stream-json protocol (src/term/,
 * docs/internals/terminal.md), so the Claude Agent SDK and tools built
 * for Claude Code can drive Gemini.
 *
 * Top to bottom: read the flags; -v/--help; refuse what is not served
 * yet; open the session; then either serve stream-json input until stdin
 * closes, or run the one prompt (the argument, else stdin) and exit, or -
 * a person at a terminal, no -p - run the REPL (term/tty.h): the
 * argument's prompt first, then a prompt a line until /exit or the end
 * of input; Ctrl-C stops the prompt in flight (or drops the line typed).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/logmsg.h"
#include "core/sbuf.h"
#include "term/args.h"
#include "term/session.h"
#include "term/tty.h"
#include "term/bounds.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_chat_usage[] =
    "[PROMPT] [-p] [--output-format text|json|stream-json]\n"
    "[--input-format text|stream-json] [--verbose] [--model M]\n"
    "[--cwd DIR] [--permission-mode MODE] [--allowedTools LIST] ...";

/* The prompt from stdin (print mode without one on the command line). */
static char *
read_stdin(void)
{
    struct sbuf sb;
    char buf[4096];
    size_t n;
    char *out = NULL;

    sbuf_init(&sb, BOUND_TERM_INPUT_LINE);
    while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
        if (sbuf_add(&sb, buf, n) != 0)
            goto done;
    while (sb.len > 0 && (sb.buf[sb.len - 1] == '\n'))
        sb.len--;
    if (sb.len > 0 && sbuf_putc(&sb, '\0') == 0)
        out = sbuf_detach(&sb, NULL);
done:
    sbuf_release(&sb);
    return out;
}

/*
 * Ctrl-C in the REPL: set by the handler, read by the session (it ends the
 * prompt in flight as an interrupt does; term_session_watch()). Static
 * because a signal handler can reach nothing else.
 */
static volatile sig_atomic_t repl_sigint;

static void
on_sigint(int sig)
{
    (void)sig;
    repl_sigint = 1;
}

/* Catch SIGINT without SA_RESTART, so a read at the prompt or at a
 * permission question returns (EINTR) instead of going on. A tool's
 * command runs in its own process group: the terminal's Ctrl-C never
 * reaches it, the session stops it. */
static int
catch_sigint(struct term_session *s)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0)
        return -1;
    term_session_watch(s, &repl_sigint);
    return 0;
}

/* Is `line` one of the REPL's ways out? */
static bool
is_exit(const char *line)
{
    return strcmp(line, "/exit") == 0 || strcmp(line, "/quit") == 0;
}

/*
 * The interactive mode: `first` (the command line's prompt, or NULL),
 * then each line read until /exit or the end of input. A prompt that
 * fails is shown and the REPL goes on; only a session that cannot go on
 * (the key refused, the output gone) ends it with 1.
 */
static int
repl(struct term_session *s, struct tty *t, const char *first)
{
    char *line = NULL;
    size_t cap = 0;
    long n;
    int rc = 0;

    if (first != NULL && term_session_prompt(s, first) < 0) {
        rc = 1;
        goto out;
    }
    while ((n = tty_read_prompt(t, &line, &cap)) >= 0) {
        const char *p = line;
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            line[--n] = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            continue;
        if ((size_t)n > BOUND_TERM_INPUT_LINE) {
            fprintf(stderr,
                    "gemini-agent chat: a prompt is longer than %u "
                    "bytes; skipped\n",
                    BOUND_TERM_INPUT_LINE);
            continue;
        }
        if (is_exit(p))
            break;
        if (term_session_prompt(s, p) < 0) {
            rc = 1;
            break;
        }
    }
out:
    free(line);
    if (term_session_saved_id(s) != NULL) { /* as Claude Code says it */
        char note[BOUND_TERM_SESSION_ID + 64];
        snprintf(note, sizeof(note),
                 "Resume this session with: gemini-agent chat --resume %s",
                 term_session_saved_id(s));
        tty_note(t, note);
    }
    return rc;
}

/* Options that cannot go together: what to tell the user, or NULL. */
static const char *
args_conflict(const struct term_args *a)
{
    if (a->resume != NULL && a->cont)
        return "--resume and --continue name different sessions; give one";
    if ((a->resume != NULL || a->cont) && a->session_id != NULL &&
        !a->fork) /* as Claude Code: the new id is the fork's */
        return "--session-id with --resume or --continue needs "
               "--fork-session";
    if (a->in_stream && a->out != TERM_FMT_STREAM)
        return "--input-format stream-json needs --output-format "
               "stream-json";
    if (a->in_stream && a->prompt != NULL)
        return "with --input-format stream-json the prompts come on stdin, "
               "not as PROMPT";
    return NULL;
}

/*
 * Without a PROMPT, outside the interactive mode, the prompt is stdin's:
 * *prompt (malloc'd) and args->prompt. Returns 0, or the exit status
 * when there is none (reported).
 */
static int
prompt_from_stdin(struct term_args *args, bool interactive, char **prompt)
{
    if (args->in_stream || args->prompt != NULL || interactive)
        return 0;
    if (isatty(STDIN_FILENO)) {
        fprintf(stderr, "gemini-agent chat: no PROMPT (the interactive "
                        "mode needs a terminal on stdout too, and no "
                        "-p)\n");
        return CMDOPT_EXIT_USAGE;
    }
    if ((*prompt = read_stdin()) == NULL) {
        fprintf(stderr, "gemini-agent chat: no prompt on stdin\n");
        return CMDOPT_EXIT_USAGE;
    }
    args->prompt = *prompt;
    return 0;
}

/* The options read, -h and -V answered: -1 to go on, else the exit
 * status. */
static int
chat_options(int argc, char **argv, struct term_args *args)
{
    const char *conflict;
    int rc;

    if ((rc = term_args_parse(argc, argv, args, stderr)) != 0) {
        fputs("(`gemini-agent chat --help` shows the options)\n", stderr);
        return rc;
    }
    if (args->help) {
        printf("usage: gemini-agent chat ");
        cmdopt_put_lines(stdout, term_usage, 25, 4);
        putchar('\n');
        return 0;
    }
    if (args->version) {
        printf("%s (gemini-agent)\n", TERM_PROTOCOL_VERSION);
        return 0;
    }
    if ((conflict = args_conflict(args)) != NULL) {
        fprintf(stderr, "gemini-agent chat: %s\n", conflict);
        return CMDOPT_EXIT_USAGE;
    }
    return -1;
}

int
cmd_chat(int argc, char **argv)
{
    struct term_args args;
    struct term_session *s;
    struct tty *t = NULL;
    char *prompt = NULL;
    bool human, interactive;
    int rc;

    /* stderr is the user's (or the SDK's stderr callback): the server's
     * info lines (a store migrated, a call dropped on interrupt) only
     * when asked for with GEMINI_AGENT_LOG */
    if (getenv("GEMINI_AGENT_LOG") == NULL)
        logmsg_set_level(LOG_LVL_WARN);
    if ((rc = chat_options(argc, argv, &args)) >= 0)
        return rc;
    /* a person reads stdout: text rendered as it comes; and, without -p,
     * types the prompts on stdin and is asked before a call runs */
    human = args.out == TERM_FMT_TEXT && isatty(STDOUT_FILENO);
    interactive = human && !args.print && isatty(STDIN_FILENO);
    if ((rc = prompt_from_stdin(&args, interactive, &prompt)) != 0)
        return rc;
    s = term_session_open(&args, stdin, stdout, &rc);
    if (s == NULL) {
        free(prompt);
        return rc;
    }
    if (human) {
        t = tty_new(interactive ? stdin : NULL, stdout,
                    tty_color_wanted(stdout));
        if (t == NULL) {
            fprintf(stderr, "gemini-agent chat: out of memory\n");
            rc = 1;
            goto out;
        }
        term_session_set_tty(s, t);
    }
    if (args.in_stream)
        rc = term_session_serve(s);
    else if (interactive)
        rc = catch_sigint(s) == 0 ? repl(s, t, args.prompt) : 1;
    else
        rc = term_session_prompt(s, args.prompt) == 0 ? 0 : 1;
out:
    term_session_close(s);
    tty_free(t);
    free(prompt);
    return rc;
}
