/*
 * saved.c - a terminal session as it is saved (saved.h, keep.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/saved.h"
#include "core/arena.h"
#include "core/jsonout.h"
#include "core/status.h"
#include "store/store.h"
#include "term/args.h"
#include "term/conv.h"
#include "term/keep.h"
#include "term/streamjson.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Called before the prompt's result is written, so what the host was
 * told is kept: the history, model, folder and usage so far (this
 * prompt's included).
 */
void
term_saved_save(struct term_saved *sv, struct term_conv *conv)
{
    struct status_error err = {0};
    struct loop_usage all;
    double cost;
    char *contents;
    json_t *usage;

    if (sv->keep == NULL || json_array_size(conv->contents) == 0)
        return;
    contents = jsonout_dumps(conv->contents, APP_JSON_FLAGS, JSONOUT_UNBOUNDED,
                             NULL);
    usage = term_conv_session_usage(conv, &all, &cost);
    const struct store_chat c = {
        .id = sv->session_id,
        .cwd = sv->cwd,
        .model = conv->model,
        .contents = contents,
        .usage = usage,
    };
    if (contents == NULL || usage == NULL)
        status_set(&err, ST_NO_MEMORY, "out of memory");
    else if (sv->keep->ops->chat_save(sv->keep, &c, &err) == 0) {
        sv->saved = true;
        term_conv_kept(conv, &all, cost);
    }
    if (err.code != ST_OK)
        fprintf(stderr, "gemini-agent chat: the session was not saved: %s\n",
                err.text);
    free(contents);
    json_decref(usage);
}

/* Carry on the saved session `c`: its conversation, folder and id. */
static int
adopt(struct term_saved *sv, const struct term_args *args,
      struct term_conv *conv, const struct store_chat *c, struct arena *a,
      const char **why)
{
    if (term_conv_restore(conv, c, args->model != NULL, a, why) != 0)
        return -1;
    /* the session's folder, unless --cwd names another */
    if (args->cwd == NULL && strcmp(c->cwd, sv->cwd) != 0 &&
        (chdir(c->cwd) != 0 || getcwd(sv->cwd, sizeof(sv->cwd)) == NULL)) {
        *why = arena_printf(a,
                            "cannot work in the session's folder "
                            "'%s': %s",
                            c->cwd, strerror(errno));
        return -1;
    }
    if (!args->fork)
        snprintf(sv->session_id, sizeof(sv->session_id), "%s", c->id);
    return 0;
}

/* --resume or --continue: the saved session they name, adopted. */
static int
resume(struct term_saved *sv, const struct term_args *args,
       struct term_conv *conv, struct arena *a, const char **why)
{
    struct store_chat c = {0};
    struct status_error err = {0};
    int rc = args->resume != NULL
                 ? sv->keep->ops->chat_load(sv->keep, args->resume, &c, &err)
                 : sv->keep->ops->chat_latest(sv->keep, sv->cwd, &c, &err);

    if (rc != 0 && err.code == ST_NOT_FOUND)
        *why = args->resume != NULL ? arena_printf(a,
                                                   "No conversation found with "
                                                   "session ID: %s",
                                                   args->resume)
                                    : "No conversation found to continue";
    else if (rc != 0)
        *why = arena_printf(a, "cannot read the saved sessions: %s", err.text);
    else
        rc = adopt(sv, args, conv, &c, a, why);
    store_chat_release(&c);
    return rc;
}

/* A new session's id must not be one already saved (Claude Code refuses
 * it too). */
static int
id_unused(struct term_saved *sv, const char *id, struct arena *a,
          const char **why)
{
    struct store_chat c = {0};
    struct status_error err = {0};
    int rc = sv->keep->ops->chat_load(sv->keep, id, &c, &err);

    store_chat_release(&c);
    if (rc == 0) {
        *why = arena_printf(a, "Session ID %s is already in use", id);
        return -1;
    }
    if (err.code != ST_NOT_FOUND) {
        *why = arena_printf(a, "cannot read the saved sessions: %s", err.text);
        return -1;
    }
    return 0;
}

/* The saved sessions, and the one --resume / --continue names. */
static int
open_store(struct term_saved *sv, const struct term_args *args,
           struct term_conv *conv, struct arena *a, const char **why)
{
    bool want = args->resume != NULL || args->cont;
    const char *new_id = want && !args->fork ? NULL : args->session_id;
    struct status_error err = {0};

    if (args->no_persist && !want)
        return 0;
    if ((sv->keep = term_keep_open(&err)) == NULL) {
        if (want) {
            *why = arena_printf(a, "cannot open the saved sessions: %s",
                                err.text);
            return -1;
        }
        fprintf(stderr,
                "gemini-agent chat: this session will not be "
                "saved: %s\n",
                err.text);
        return 0;
    }
    if (want && resume(sv, args, conv, a, why) != 0)
        return -1;
    if (new_id != NULL && id_unused(sv, new_id, a, why) != 0)
        return -1;
    if (args->no_persist) { /* resumed, but this run is not kept */
        sv->keep->ops->close(sv->keep);
        sv->keep = NULL;
    }
    return 0;
}

int
term_saved_open(struct term_saved *sv, const struct term_args *args,
                struct term_conv *conv, struct arena *a, const char **why)
{
    if (getcwd(sv->cwd, sizeof(sv->cwd)) == NULL) {
        *why = "cannot read the working folder";
        return -1;
    }
    if (open_store(sv, args, conv, a, why) != 0)
        return -1;
    if (sv->session_id[0] == '\0') {
        if (args->session_id != NULL)
            snprintf(sv->session_id, sizeof(sv->session_id), "%s",
                     args->session_id);
        else if (term_uuid(sv->session_id) != 0) {
            *why = NULL;
            return -1;
        }
    }
    return 0;
}

const char *
term_saved_id(const struct term_saved *sv)
{
    return sv->saved ? sv->session_id : NULL;
}

void
term_saved_close(struct term_saved *sv)
{
    if (sv->keep != NULL)
        sv->keep->ops->close(sv->keep);
    sv->keep = NULL;
}
