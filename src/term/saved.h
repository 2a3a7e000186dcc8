/*
 * saved.h - a terminal session as it is saved (keep.h): its id, its
 * working folder, and the sessions' store it is written to after every
 * prompt, so --resume and --continue carry it on. The conversation
 * itself (conv.h) is what is saved and restored.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_SAVED_H
#define APP_TERM_SAVED_H

#include "core/common.h"
#include "term/bounds.h"

#include <limits.h>

struct arena;
struct store;
struct term_args;
struct term_conv;

struct term_saved {
    char session_id[BOUND_TERM_SESSION_ID + 1];
    char cwd[PATH_MAX];
    struct store *keep; /* the saved sessions; NULL: not saved */
    bool saved;         /* ... and this one was, at least once */
};

/*
 * In the working folder: open the saved sessions (unless
 * --no-session-persistence), and with --resume or --continue carry on
 * the one they name into `conv` (its folder too, unless --cwd names
 * another); then the session's id (--session-id's, the saved one's, or
 * a new uuid). -1 with *why in `a` (NULL: out of memory) when the
 * session cannot start.
 */
int term_saved_open(struct term_saved *sv, const struct term_args *args,
                    struct term_conv *conv, struct arena *a, const char **why);

/* Save `conv` (before the prompt's result); a failure is said on stderr
 * only: the answer stands, only --resume would miss it. */
void term_saved_save(struct term_saved *sv, struct term_conv *conv);

/* The id when the session was saved at least once, else NULL. */
const char *term_saved_id(const struct term_saved *sv);

void term_saved_close(struct term_saved *sv);

#endif /* APP_TERM_SAVED_H */
