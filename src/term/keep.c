/*
 * keep.c - the terminal client's sessions store (keep.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/keep.h"
#include "term/bounds.h"
#include "core/status.h"
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SESSIONS_FILE "sessions.db"

/* mkdir -p `path` (its own mode 0700; existing folders are left as they
 * are). 0, or -1 with errno. */
static int
make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = c;
        if (rc != 0 && errno != EEXIST)
            return -1;
        if (c == '\0')
            return 0;
    }
}

/* The sessions' folder is made 0700; one that group or others can write
 * (an existing one, or a symlink to one) would let them swap the
 * sessions under us: refused. 0, or -1 with `err`. */
static int
folder_shared(const char *dir, struct status_error *err)
{
    struct stat st;

    if (stat(dir, &st) != 0)
        return status_set(err, ST_STORE, "cannot use '%s': %s", dir,
                          strerror(errno));
    if ((st.st_mode & 022) == 0)
        return 0;
    return status_set(err, ST_STORE,
                      "the sessions' folder '%s' is open to group or "
                      "others (mode %04o): run chmod 700 %s",
                      dir, (unsigned)(st.st_mode & 07777), dir);
}

/* The store's spec ("sqlite:PATH") in spec[n], its folder made. 0, or -1
 * with `err`. */
static int
sessions_spec(char *spec, size_t size, struct status_error *err)
{
    const char *env = getenv("GEMINI_AGENT_SESSIONS");
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char dir[PATH_MAX];
    int n;

    if (env != NULL && env[0] != '\0') {
        n = snprintf(spec, size, "sqlite:%s", env);
        return n >= 0 && (size_t)n < size
                   ? 0
                   : status_set(err, ST_CONFIG,
                                "GEMINI_AGENT_SESSIONS is "
                                "too long");
    }
    if (state != NULL && state[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/gemini-agent", state);
    else if (home != NULL && home[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/.local/state/gemini-agent", home);
    else
        return status_set(err, ST_CONFIG,
                          "no folder for the sessions: set HOME, "
                          "XDG_STATE_HOME or GEMINI_AGENT_SESSIONS");
    if (n < 0 || (size_t)n >= sizeof(dir))
        return status_set(err, ST_CONFIG,
                          "the sessions' folder path is too long");
    if (make_dirs(dir) != 0)
        return status_set(err, ST_STORE, "cannot make '%s': %s", dir,
                          strerror(errno));
    if (folder_shared(dir, err) != 0)
        return -1;
    n = snprintf(spec, size, "sqlite:%s/%s", dir, SESSIONS_FILE);
    return n >= 0 && (size_t)n < size
               ? 0
               : status_set(err, ST_CONFIG,
                            "the sessions' store path is too long");
}

struct store *
term_keep_open(struct status_error *err)
{
    char spec[PATH_MAX + 16];

    if (sessions_spec(spec, sizeof(spec), err) != 0)
        return NULL;
    return store_open_migrated(spec, err);
}

bool
term_keep_id_ok(const char *id)
{
    size_t n = id != NULL ? strnlen(id, BOUND_TERM_SESSION_ID + 1) : 0;

    if (n == 0 || n > BOUND_TERM_SESSION_ID)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id[i] <= 0x20 || id[i] >= 0x7f)
            return false;
    return true;
}
