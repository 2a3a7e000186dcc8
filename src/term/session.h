/*
 * session.h - one `gemini-agent chat` session: the terminal's tools (the
 * registry's plugins loaded for the terminal), the Gemini client, the
 * conversation, and the agent loop driven once per user message, its
 * events written as Claude Code stream-json (streamjson.h).
 *
 * The session is saved after every prompt (term/keep.h), so --resume and
 * --continue carry it on; when it nears the model's window its oldest
 * turns are summarised (term/compact.h). One thread.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_SESSION_H
#define APP_TERM_SESSION_H

#include "core/common.h"
#include "term/args.h"

#include <signal.h>
#include <stdio.h>

struct term_session;
struct tty;

/*
 * Open a session for `args` (borrowed for its life): the working folder,
 * the key, the plugins, the Gemini client. On failure returns NULL after
 * reporting it (a system message of subtype "error" on `out` for
 * stream-json and json, else a line on stderr); `*exit_code` is then what
 * the process should exit with.
 */
struct term_session *term_session_open(const struct term_args *args, FILE *in,
                                       FILE *out, int *exit_code);

/* One user message of text `text`: init, the loop's messages, the
 * result (what args->out writes of them). Returns 0 when the result was
 * a success, 1 when it was an error, -1 when the session cannot go on
 * (an auth failure, the output gone, out of memory). */
int term_session_prompt(struct term_session *s, const char *text);

/* --input-format stream-json: read `in` until it closes, answering
 * control requests and running each user message. The exit code. */
int term_session_serve(struct term_session *s);

/* A person at a terminal reads the session (term/tty.h): `t` (borrowed
 * for the session's life) renders the messages stream-json would carry,
 * and asks when a call needs permission and it can (tty_can_ask()).
 * Only for --output-format text. */
void term_session_set_tty(struct term_session *s, struct tty *t);

/* `flag` (a signal handler's, e.g. SIGINT's at the terminal) interrupts
 * the prompt in flight when it becomes non-zero, as an `interrupt`
 * control request does; it is cleared when a prompt starts. */
void term_session_watch(struct term_session *s, volatile sig_atomic_t *flag);

/* The session's id when it was saved at least once (--resume takes it),
 * else NULL. */
const char *term_session_saved_id(const struct term_session *s);

void term_session_close(struct term_session *s);

#endif /* APP_TERM_SESSION_H */
