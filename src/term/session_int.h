/*
 * session_int.h - one terminal session as its two files see it (other
 * layers use session.h): session.c opens, serves and closes it,
 * prompt.c runs one prompt. The session is the parts below, each a
 * struct owned by its own file, which borrow from each other only
 * downwards (docs/internals/terminal.md, "The code"):
 *
 *   out      what is written (out.h)
 *   conv     the conversation with Gemini: client, model, history,
 *            usage (conv.h)
 *   tools    the tools and the permission state (tools.h)
 *   saved    the id, the working folder, the saved sessions (saved.h)
 *   ctl      stdin's control protocol and interrupts (control.h)
 *   calls    who answers the model's calls (calls.h)
 *
 * One thread.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_SESSION_INT_H
#define APP_TERM_SESSION_INT_H

#include "core/common.h"
#include "term/session.h"
#include "core/arena.h"
#include "term/auth.h"
#include "term/calls.h"
#include "term/control.h"
#include "term/conv.h"
#include "term/out.h"
#include "term/saved.h"
#include "term/tools.h"

struct config;

struct term_session {
    const struct term_args *args;
    struct arena a;         /* one prompt's (reset after each) */
    struct arena life;      /* the session's: its rules, its data folder */
    struct config *cfg;     /* agent.yaml, when there is one; or NULL */
    struct term_auth auth;  /* the credential (term/auth.h) */
    const char *key_source; /* apiKeySource */
    struct term_out out;
    struct term_conv conv;
    struct term_tools tools;
    struct term_saved saved;
    struct term_control ctl;
    struct term_calls calls;
};

#endif /* APP_TERM_SESSION_INT_H */
