/*
 * fileedit_journal.c - file_edit's undo journal and Undo: before a change,
 * a copy of what it replaces (or the note that there was none) in the
 * backup folder, and the journal of those entries, so that Undo steps
 * back change by change. The journal is taken under the instance's mutex
 * and flock() of the backup folder's lock file.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"
#include "plugins/bounds.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void
fe_entries_free(struct fe_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(e[i].rel);
    free(e);
}

static int
fe_path(char *buf, const struct fileedit *fe, const char *name)
{
    return snprintf(buf, PATH_MAX, "%s/%s", fe->backups, name) >= PATH_MAX ? -1
                                                                           : 0;
}

static void
fe_backup_name(char *buf, const struct fileedit *fe, long id)
{
    char name[32];

    snprintf(name, sizeof(name), "%ld", id);
    if (fe_path(buf, fe, name) != 0)
        buf[0] = '\0';
}

/* The journal's lines (text, changed) into t's entries. 0, or -1 (out
 * of memory). */
static int
fe_journal_parse(struct fe_txn *t, char *text)
{
    for (char *line = text; *line != '\0';) {
        char *nl = strchr(line, '\n');
        json_t *j;
        const char *rel;
        json_int_t id, m;
        int existed;
        if (nl != NULL)
            *nl = '\0';
        j = json_loads(line, 0, NULL);
        /* a line that is not ours is skipped: undo reaches less far */
        if (j != NULL &&
            json_unpack(j, "{s:I, s:s, s:b, s:I}", "id", &id, "path", &rel,
                        "existed", &existed, "mode", &m) == 0) {
            struct fe_entry *q = realloc(t->e, (t->n + 1) * sizeof(*q));
            char *r = NULL;
            if (q != NULL)
                t->e = q;
            if (q == NULL || (r = strdup(rel)) == NULL) {
                json_decref(j);
                return -1;
            }
            t->e[t->n++] = (struct fe_entry){(long)id, r, existed != 0,
                                             (unsigned)m & 07777};
        }
        json_decref(j);
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    return 0;
}

int
fe_begin(struct fileedit *fe, struct fe_txn *t)
{
    char path[PATH_MAX];
    char *text = NULL;
    size_t len;
    unsigned mode;

    memset(t, 0, sizeof(*t));
    t->lockfd = -1;
    pthread_mutex_lock(&fe->lock);
    if (fe_mkdirs(fe->backups, true) != 0 || fe_path(path, fe, ".lock") != 0)
        goto fail;
    t->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (t->lockfd < 0)
        goto fail;
    while (flock(t->lockfd, LOCK_EX) != 0)
        if (errno != EINTR)
            goto fail;
    if (fe_path(path, fe, "journal") != 0)
        goto fail;
    if (fe_read(path, (size_t)BOUND_FILEEDIT_UNDO * (PATH_MAX + 128), &text,
                &len, &mode) != 0) {
        if (errno == ENOENT)
            return 0;
        goto fail;
    }
    if (fe_journal_parse(t, text) != 0)
        goto fail;
    free(text);
    return 0;
fail:
    free(text);
    fe_entries_free(t->e, t->n);
    if (t->lockfd >= 0)
        close(t->lockfd);
    pthread_mutex_unlock(&fe->lock);
    return -1;
}

int
fe_save(struct fileedit *fe, struct fe_txn *t)
{
    char path[PATH_MAX];
    char *text = NULL;
    size_t len = 0, skip = 0;
    FILE *f;
    int rc = -1;

    while (t->n - skip > BOUND_FILEEDIT_UNDO) {
        if (t->e[skip].existed) {
            fe_backup_name(path, fe, t->e[skip].id);
            if (path[0] != '\0')
                unlink(path);
        }
        skip++;
    }
    if ((f = open_memstream(&text, &len)) == NULL)
        return -1;
    for (size_t i = skip; i < t->n; i++) {
        json_t *j = json_pack("{s:I, s:s, s:b, s:I}", "id",
                              (json_int_t)t->e[i].id, "path", t->e[i].rel,
                              "existed", t->e[i].existed, "mode",
                              (json_int_t)t->e[i].mode);
        if (j == NULL || json_dumpf(j, f, APP_JSON_FLAGS) != 0) {
            json_decref(j);
            fclose(f);
            free(text);
            return -1;
        }
        json_decref(j);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return -1;
    }
    if (fe_path(path, fe, "journal") == 0 &&
        fe_write_atomic(path, text, len, 0600) == 0)
        rc = 0;
    free(text);
    return rc;
}

void
fe_end(struct fileedit *fe, struct fe_txn *t)
{
    fe_entries_free(t->e, t->n);
    close(t->lockfd); /* and the flock with it */
    pthread_mutex_unlock(&fe->lock);
}

int
fe_note(struct fileedit *fe, struct fe_txn *t, const char *rel, bool existed,
        const char *old, size_t len, unsigned mode)
{
    char path[PATH_MAX];
    struct fe_entry *q;
    long id = t->n > 0 ? t->e[t->n - 1].id + 1 : 1;
    char *r = strdup(rel);

    if (r == NULL || (q = realloc(t->e, (t->n + 1) * sizeof(*q))) == NULL) {
        free(r);
        return -1;
    }
    t->e = q;
    if (existed) {
        fe_backup_name(path, fe, id);
        if (path[0] == '\0' || fe_write_atomic(path, old, len, 0600) != 0) {
            free(r);
            return -1;
        }
    }
    t->e[t->n++] = (struct fe_entry){id, r, existed, mode};
    return 0;
}

void
fe_unnote(struct fileedit *fe, struct fe_txn *t)
{
    char path[PATH_MAX];
    struct fe_entry *e = &t->e[--t->n];

    if (e->existed) {
        fe_backup_name(path, fe, e->id);
        if (path[0] != '\0')
            unlink(path);
    }
    free(e->rel);
}

/*
 * The journal entry Undo is to undo: the last one, or the last change of
 * the file `abs` when `path` (the argument) is given; its path resolved
 * again into eabs. Its index + 1, or 0 with the message in msg.
 */
static size_t
fe_undo_find(const struct fileedit *fe, const struct fe_txn *t,
             const char *path, const char *abs, char *eabs, char *msg,
             size_t size)
{
    size_t i;

    for (i = t->n; i > 0; i--) {
        /* the journal's path goes through the sandbox again: what lies
         * on the way may have changed since */
        if (fe_resolve(fe, t->e[i - 1].rel, strlen(t->e[i - 1].rel), true, eabs,
                       msg, size) != 0) {
            if (path == NULL)
                return 0;
            continue;
        }
        if (path == NULL || strcmp(eabs, abs) == 0)
            return i;
    }
    if (path != NULL)
        snprintf(msg, size, "There is no change of %.200s to undo.", path);
    else
        snprintf(msg, size, "There is no change to undo.");
    return 0;
}

/* Put eabs back as it was before the change `e`: its old content from
 * `backup`, or no file. 0, or -1 with *err an errno value. */
static int
fe_undo_restore(const struct fe_entry *e, const char *eabs, const char *backup,
                int *err)
{
    char *data = NULL;
    size_t len = 0;
    unsigned mode;

    if (!e->existed) {
        if (unlink(eabs) != 0 && errno != ENOENT) {
            *err = errno;
            return -1;
        }
        return 0;
    }
    if (backup[0] == '\0' ||
        fe_read(backup, BOUND_FILEEDIT_FILE_BYTES, &data, &len, &mode) != 0 ||
        fe_mkdirs(eabs, false) != 0 ||
        fe_write_atomic(eabs, data, len, e->mode) != 0) {
        *err = errno;
        free(data);
        return -1;
    }
    free(data);
    return 0;
}

int
fe_tool_undo(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], eabs[PATH_MAX], backup[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path = NULL;
    size_t plen = 0, i;
    json_error_t jerr;
    struct fe_entry *e;
    char *text = NULL;
    json_t *res;
    int rc, err;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s?s%}", "file_path", &path,
                       &plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (path != NULL &&
        fe_resolve(fe, path, plen, true, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if ((i = fe_undo_find(fe, t, path, abs, eabs, msg, sizeof(msg))) == 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    e = &t->e[i - 1];
    fe_backup_name(backup, fe, e->id);
    if (fe_undo_restore(e, eabs, backup, &err) != 0) {
        if (e->existed)
            return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                               "cannot restore %s: %s", eabs,
                               fe_errno_text(err));
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                           "cannot remove %s: %s", eabs, fe_errno_text(err));
    }
    if (asprintf(&text,
                 e->existed
                     ? "Restored %s to its content before the last change."
                     : "Removed %s, which the last change created.",
                 eabs) < 0)
        text = NULL;
    res = json_pack("{s:s, s:s}", "filePath", eabs, "undone",
                    e->existed ? "restored" : "removed");
    free(e->rel);
    memmove(e, e + 1, (t->n - i) * sizeof(*e));
    t->n--;
    rc = fe_save(fe, t);
    if (rc == 0 && backup[0] != '\0')
        unlink(backup); /* only once the journal no longer names it */
    if (rc != 0) {
        free(text);
        json_decref(res);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                           "undone, but the undo journal could not be "
                           "written");
    }
    return fe_answer(ctx, out, text, res);
}
