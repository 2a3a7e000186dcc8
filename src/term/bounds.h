/*
 * bounds.h - the limits only src/term/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_BOUNDS_H
#define APP_TERM_BOUNDS_H

/* --- the terminal client (src/term/, `gemini-agent chat`) -------------- */
/* --allowedTools / --disallowedTools flags kept (each may list many). */
#define BOUND_TERM_RULE_FLAGS 32

/* Rules over all those flags together (a name or `Bash(prefix:*)`). */
#define BOUND_TERM_RULES 256

/* Gemini answers of one prompt when --max-turns says nothing; a larger
 * --max-turns is cut to it. */
#define BOUND_TERM_TURNS 100

/* One line of --input-format stream-json (a user message, a control
 * request); a longer line is an error and ends the session. */
#define BOUND_TERM_INPUT_LINE (8u * 1024 * 1024)

/* User messages that arrive while a tool waits for permission, kept
 * for after the turn. */
#define BOUND_TERM_QUEUED 64

/* --add-dir folders (the file_edit plugin's addDirs take as many). */
#define BOUND_TERM_ADD_DIRS 32

/* A session id (--session-id, --resume): Claude Code's are uuids. */
#define BOUND_TERM_SESSION_ID 127

/* The summary a compaction asks for, at most (maxOutputTokens). */
#define BOUND_COMPACT_SUMMARY_TOKENS 8192

/* Bytes of a tool call's one-line summary in the interactive terminal
 * (`Read(a.txt)`, `Bash(ls -l)`): a long command is cut with "…" so the
 * call stays one line of a terminal. */
#define BOUND_TTY_SUMMARY 160

#endif /* APP_TERM_BOUNDS_H */
