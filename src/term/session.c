/*
 * session.c - one `gemini-agent chat` session (session.h): open it from
 * its parts (session_int.h), serve stream-json input, close it. One
 * prompt is prompt.c's.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/session_int.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "term/keep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The configuration `serve` would read ($GEMINI_AGENT_CONFIG, else
 * conf/agent.yaml), when it is there: the key of its .gemini.yaml and
 * its plugins. Its problems are shown only with GEMINI_AGENT_LOG set:
 * the terminal works without it. */
static void
load_config(struct term_session *s)
{
    const char *path = config_default_path();
    struct diag d = DIAG_INIT;

    if (access(path, R_OK) != 0)
        return;
    s->cfg = config_load(path, &d);
    if (getenv("GEMINI_AGENT_LOG") != NULL)
        diag_print(&d, stderr, "gemini-agent chat: ");
    diag_release(&d);
}

/* What the session says when no credential works: the module's words
 * (they name sources, never a secret). */
static const char *
auth_failure(struct term_session *s, const struct status_error *err)
{
    char line[STATUS_TEXT_MAX + 64];

    if (err->code == ST_NO_MEMORY)
        return "out of memory";
    status_text(err, line, sizeof(line));
    return arena_strdup(&s->a, line);
}

/* The parts, each told what it borrows from the others. */
static void
wire(struct term_session *s, FILE *in, FILE *out)
{
    const struct term_args *args = s->args;

    term_out_init(&s->out, out, args->out, s->saved.session_id);
    term_control_init(&s->ctl, &(struct term_control_env){
                                   fileno(in), args->in_stream, &s->out,
                                   &s->conv, &s->tools, &s->a, &s->life});
    term_calls_init(&s->calls,
                    &(struct term_calls_env){args, &s->a, &s->out, &s->conv,
                                             &s->tools, &s->ctl});
}

/* Where the session works and which it is: the ids checked, --cwd, the
 * saved session carried on. -1 with *why (and *exit_code 2 for a bad
 * id). */
static int
open_place(struct term_session *s, const char **why, int *exit_code)
{
    const struct term_args *args = s->args;

    if ((args->session_id != NULL && !term_keep_id_ok(args->session_id)) ||
        (args->resume != NULL && !term_keep_id_ok(args->resume))) {
        *why = arena_printf(&s->a,
                            "a session id is 1 to %d printable characters, "
                            "without spaces",
                            BOUND_TERM_SESSION_ID);
        *exit_code = 2;
        return -1;
    }
    if (args->cwd != NULL && chdir(args->cwd) != 0) {
        *why = arena_printf(&s->a, "cannot work in '%s': %s", args->cwd,
                            strerror(errno));
        return -1;
    }
    return term_saved_open(&s->saved, args, &s->conv, &s->a, why);
}

/* The rules, the credential, the model and Gemini's settings, the tools,
 * the system instruction, the client. -1 with *why. */
static int
open_agent(struct term_session *s, const char **why, int *exit_code)
{
    const struct term_args *args = s->args;
    struct status_error err = {0};

    if (term_tools_init(&s->tools, args, &s->life, &err) != 0) {
        *why = arena_strdup(&s->a, err.text);
        *exit_code = 2;
        return -1;
    }
    s->key_source = "none";
    load_config(s);
    if (term_auth_open(&s->auth, args, s->cfg ? s->cfg->gemini.api_key : NULL,
                       &err) != 0) {
        *why = auth_failure(s, &err);
        return -1;
    }
    s->key_source = s->auth.source;
    *why = "out of memory";
    if (term_conv_configure(&s->conv, args, s->cfg, &s->auth) != 0 ||
        term_tools_load(&s->tools, args, s->cfg, s->saved.cwd, &s->life) != 0 ||
        (s->conv.system = term_tools_system(&s->tools, args, s->saved.cwd)) ==
            NULL)
        return -1;
    if (term_conv_connect(&s->conv, &s->auth, term_control_gone, &s->ctl, why,
                          &err) != 0) {
        if (*why == NULL)
            *why = auth_failure(s, &err);
        return -1;
    }
    return 0;
}

struct term_session *
term_session_open(const struct term_args *args, FILE *in, FILE *out,
                  int *exit_code)
{
    struct term_session *s = calloc(1, sizeof(*s));
    const char *why = NULL;

    *exit_code = 1;
    if (s == NULL) {
        fprintf(stderr, "gemini-agent chat: out of memory\n");
        return NULL;
    }
    s->args = args;
    arena_init(&s->a);
    arena_init(&s->life);
    wire(s, in, out);
    if (open_place(s, &why, exit_code) != 0 ||
        open_agent(s, &why, exit_code) != 0) {
        term_out_system_error(args->out, out, s->saved.session_id,
                              why ? why : "out of memory");
        term_session_close(s);
        return NULL;
    }
    *exit_code = 0;
    return s;
}

/* Each user message a prompt, until the input ends. */
int
term_session_serve(struct term_session *s)
{
    const char *text;
    int rc;

    while ((rc = term_control_next(&s->ctl, &text)) > 0)
        if (term_session_prompt(s, text) < 0)
            return 1;
    return rc < 0 ? 1 : 0;
}

const char *
term_session_saved_id(const struct term_session *s)
{
    return term_saved_id(&s->saved);
}

void
term_session_watch(struct term_session *s, volatile sig_atomic_t *flag)
{
    s->ctl.sigflag = flag;
}

void
term_session_set_tty(struct term_session *s, struct tty *t)
{
    s->out.tty = s->ctl.tty = s->calls.tty = t;
}

void
term_session_close(struct term_session *s)
{
    if (s == NULL)
        return;
    term_conv_release(&s->conv);
    term_saved_close(&s->saved);
    term_calls_release(&s->calls);
    arena_release(&s->a);
    arena_release(&s->life);
    term_tools_release(&s->tools);
    config_free(s->cfg);
    term_auth_close(&s->auth);
    term_control_release(&s->ctl);
    free(s);
}
