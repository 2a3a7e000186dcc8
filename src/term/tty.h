/*
 * tty.h - `gemini-agent chat` for a person at a terminal: the session's
 * stream-json messages (streamjson.h) rendered as text as they come (the
 * answer streamed, a line per tool call and one for its result, errors),
 * the permission question ("Allow Bash(ls)? [y]es, [n]o, [a]lways: ")
 * and the REPL's prompt (docs/internals/terminal.md "Interactive mode").
 *
 * It is not the session: out.c hands it each message it would have
 * written as stream-json, and calls.c asks it when a call needs the
 * user's word; cmd/chat.c reads the prompts with it. Colours only when
 * asked for (tty_color_wanted()). One thread.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_TTY_H
#define APP_TERM_TTY_H

#include "core/common.h"
#include "term/bounds.h"

#include <stdio.h>

struct json_t;

struct tty;

/* What the user answered a permission question. */
enum tty_answer {
    TTY_NO,     /* deny this call (also: the input closed) */
    TTY_YES,    /* allow this call */
    TTY_ALWAYS, /* allow this tool for the rest of the session */
};

/*
 * A renderer writing on `out` and, when `in` is not NULL, asking (and
 * reading prompts) on `in`; both borrowed for its life. `color`: ANSI
 * colours. Returns NULL when out of memory. Free with tty_free().
 */
struct tty *tty_new(FILE *in, FILE *out, bool color);

void tty_free(struct tty *t);

/* Colours on `out`: it is a terminal and NO_COLOR is unset or empty
 * (https://no-color.org). */
bool tty_color_wanted(FILE *out);

/* Can the user be asked (tty_new() was given an input)? */
bool tty_can_ask(const struct tty *t);

/*
 * Render one stream-json message (borrowed): stream_event text deltas,
 * assistant text and tool_use blocks, user tool_result blocks, the
 * result (only its error: its text was shown as it came). Messages it
 * has nothing to show for (system init, ...) are skipped. 0, or -1 when
 * writing failed.
 */
int tty_message(struct tty *t, const struct json_t *msg);

/*
 * Ask whether `tool` may run with `input` (borrowed): the question on
 * out, the answer a line of `in`. A bad answer asks again; the end of
 * input is TTY_NO.
 */
enum tty_answer tty_ask(struct tty *t, const char *tool,
                        const struct json_t *input);

/*
 * The REPL's next prompt: "> " on out, then one line of `in` (without
 * its newline) into *line (heap, reused; the caller frees it). Its
 * length, or -1 at the end of input (a newline is written then, so the
 * shell's prompt starts on a line of its own).
 */
long tty_read_prompt(struct tty *t, char **line, size_t *cap);

/* A line of ours for the person, dimmed (the session's id at the end). */
void tty_note(struct tty *t, const char *text);

/* The terminal echoed something of its own (`^C` after Ctrl-C): what
 * comes next starts on a new line. */
void tty_echoed(struct tty *t);

/* The one-line summary of a tool call's input (`a.txt` of {"file_path":
 * "a.txt"}: its file_path, command, pattern, path, url or query), control
 * characters replaced and cut to BOUND_TTY_SUMMARY bytes, into
 * buf[size]. Returns buf. */
const char *tty_summary(const struct json_t *input, char *buf, size_t size);

#endif /* APP_TERM_TTY_H */
