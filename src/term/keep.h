/*
 * keep.h - where the terminal client keeps its sessions
 * (docs/internals/terminal.md §5), so `--resume ID` and `--continue`
 * carry on where a session stopped.
 *
 * The sessions are the user's own, never a site's: a SQLite store
 * (store.h, its `chats` table) at $GEMINI_AGENT_SESSIONS, else
 * $XDG_STATE_HOME/gemini-agent/sessions.db, else
 * ~/.local/state/gemini-agent/sessions.db; the folder is made 0700 and
 * the file is 0600 (store/sqlite.c). Each row holds the id, the working
 * folder, the model, the Gemini history exactly as sent and received
 * (thought signatures included) and the session's usage; it is written
 * in one transaction after every prompt, before that prompt's result is
 * written, so a result the host saw is never lost.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_KEEP_H
#define APP_TERM_KEEP_H

#include "core/common.h"
#include "term/bounds.h"

struct store;
struct status_error;

/* Open (creating it and its folder when missing) the sessions' store.
 * NULL with `err` set (the path in its text) when it cannot be. */
struct store *term_keep_open(struct status_error *err);

/* Is `id` usable as a session id: 1..BOUND_TERM_SESSION_ID printable
 * ASCII characters (Claude Code's are uuids)? */
bool term_keep_id_ok(const char *id);

#endif /* APP_TERM_KEEP_H */
