/*
 * chat.c - `gemini-agent chat [PROMPT]`: the terminal client, speaking
 * Claude Code's command line and stream-json protocol (src/term/,
 * docs/internals/terminal.md), so the Claude Agent SDK and tools built
 * for Claude Code can drive Gemini.
 *
 * Top to bottom: read the flags; -v/--help; refuse what is not served
 * yet; open the session; then either serve stream-json input until stdin
 * closes, or run the one prompt (the argument, else stdin) and exit.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/sbuf.h"
#include "term/args.h"
#include "term/session.h"

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

int
cmd_chat(int argc, char **argv)
{
    struct term_args args;
    struct term_session *s;
    char *prompt = NULL;
    int rc;

    if ((rc = term_args_parse(argc, argv, &args, stderr)) != 0) {
        fputs("(`gemini-agent chat --help` shows the options)\n", stderr);
        return rc;
    }
    if (args.help) {
        printf("usage: gemini-agent chat ");
        cmdopt_put_lines(stdout, term_usage, 25, 4);
        putchar('\n');
        return 0;
    }
    if (args.version) {
        printf("%s (gemini-agent)\n", TERM_PROTOCOL_VERSION);
        return 0;
    }
    if (args.resume != NULL && args.cont) {
        fprintf(stderr, "gemini-agent chat: --resume and --continue name "
                        "different sessions; give one\n");
        return CMDOPT_EXIT_USAGE;
    }
    if ((args.resume != NULL || args.cont) && args.session_id != NULL &&
        !args.fork) { /* as Claude Code: the new id is the fork's */
        fprintf(stderr, "gemini-agent chat: --session-id with --resume or "
                        "--continue needs --fork-session\n");
        return CMDOPT_EXIT_USAGE;
    }
    if (args.in_stream && args.out != TERM_FMT_STREAM) {
        fprintf(stderr, "gemini-agent chat: --input-format stream-json "
                        "needs --output-format stream-json\n");
        return CMDOPT_EXIT_USAGE;
    }
    if (args.in_stream && args.prompt != NULL) {
        fprintf(stderr, "gemini-agent chat: with --input-format stream-json "
                        "the prompts come on stdin, not as PROMPT\n");
        return CMDOPT_EXIT_USAGE;
    }
    if (!args.in_stream && args.prompt == NULL) {
        if (isatty(STDIN_FILENO)) {
            fprintf(stderr, "gemini-agent chat: no PROMPT (the interactive "
                            "mode is not served yet)\n");
            return CMDOPT_EXIT_USAGE;
        }
        if ((prompt = read_stdin()) == NULL) {
            fprintf(stderr, "gemini-agent chat: no prompt on stdin\n");
            return CMDOPT_EXIT_USAGE;
        }
        args.prompt = prompt;
    }
    s = term_session_open(&args, stdin, stdout, &rc);
    if (s == NULL) {
        free(prompt);
        return rc;
    }
    if (args.in_stream)
        rc = term_session_serve(s);
    else
        rc = term_session_prompt(s, args.prompt) == 0 ? 0 : 1;
    term_session_close(s);
    free(prompt);
    return rc;
}
