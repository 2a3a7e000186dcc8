/*
 * fileedit.c - the built-in plugin `file_edit`: the coding agent's hands
 * on the files of one folder (`root`).
 *
 * Tools: readFile, writeFile, updateFile (exact text replacement),
 * removeFile and undo. Every path is resolved inside root first - an
 * absolute path outside it, a `..` that climbs out and a symbolic link
 * that leads out are all refused - and the backup folder is out of the
 * tools' reach. Every change first saves what it replaces (a copy of the
 * old file, or the note that there was none) in the backup folder's
 * journal, so undo can step back change by change; files are replaced
 * atomically (a temporary file beside the target, fsync, rename).
 *
 * Not a sandbox against the machine: it is the terminal client's
 * (GEMINI_AGENT_TERMINAL_ONLY), run by the person whose files these are;
 * the checks keep the model's paths where that person pointed it. A race
 * with another program swapping a folder for a symbolic link between the
 * check and the write is not defended against beyond O_NOFOLLOW on the
 * file itself.
 *
 * Threads and processes: changes and undo run one at a time, under a
 * mutex (threads) and flock() on the backup folder's lock file
 * (processes), held from reading the old file to writing the new one, so
 * no update is lost; readFile takes no lock.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "core/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct fileedit {
    char *root;       /* canonical, no trailing '/' (but "/" itself) */
    char *backups;    /* canonical where it exists; created on first use */
    size_t max_bytes; /* maxFileBytes */
    pthread_mutex_t lock; /* changes, one at a time (threads) */
};

/* One change the journal can undo. */
struct fe_entry {
    long id;      /* its backup is <backups>/<id> when `existed` */
    char *rel;    /* the file, relative to root */
    bool existed; /* false: the change created it, undo removes it */
    unsigned mode;
};

/* The journal while a change holds it. */
struct fe_txn {
    int lockfd;
    struct fe_entry *e;
    size_t n;
};

/* --- answers ------------------------------------------------------------ */

/* --- paths -------------------------------------------------------------- */

/* `p` joined to `base` when relative, as a new string (NULL: no memory). */
static char *
fe_join(const char *base, const char *p)
{
    char *s = NULL;

    if (p[0] == '/')
        return strdup(p);
    if (asprintf(&s, "%s/%s", base, p) < 0)
        return NULL;
    return s;
}

/*
 * The canonical form of the absolute `path` into out[PATH_MAX]: realpath()
 * of its longest existing prefix, then the rest of its components. None of
 * those may be "..": they name nothing yet, so nothing says where ".."
 * would lead. Returns 0, or -1 with *why set.
 */
static int
fe_canonical(const char *path, char *out, const char **why)
{
    char buf[PATH_MAX];
    size_t n = strlen(path), keep, olen;
    const char *tail, *c;
    bool first = true;

    if (n == 0 || path[0] != '/' || n >= sizeof(buf)) {
        *why = "the path is too long";
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (;;) {
        char *slash;
        if (realpath(buf, out) != NULL)
            break;
        if (errno != ENOENT) {
            *why = errno == ENOTDIR  ? "a part of the path is not a folder"
                   : errno == ELOOP  ? "too many symbolic links"
                   : errno == EACCES ? "permission denied"
                                     : "the path cannot be resolved";
            return -1;
        }
        /* drop the last component (and the slashes before it) */
        slash = strrchr(buf, '/');
        while (slash != NULL && slash > buf && slash[-1] == '/')
            slash--;
        if (slash == NULL || slash == buf) {
            buf[1] = '\0'; /* "/" always resolves */
            continue;
        }
        *slash = '\0';
    }
    keep = strlen(buf);
    tail = path + keep;
    olen = strlen(out);
    for (c = tail; *c != '\0';) {
        size_t len;
        while (*c == '/')
            c++;
        len = strcspn(c, "/");
        if (len == 0)
            break;
        if (len == 2 && c[0] == '.' && c[1] == '.') {
            *why = "'..' after a folder that does not exist";
            return -1;
        }
        if (!(len == 1 && c[0] == '.')) {
            bool slash = !(olen == 1 && out[0] == '/');
            struct stat st;
            if (olen + slash + len >= PATH_MAX) {
                *why = "the path is too long";
                return -1;
            }
            if (slash)
                out[olen++] = '/';
            memcpy(out + olen, c, len);
            olen += len;
            out[olen] = '\0';
            /* realpath() said this name does not exist; if lstat()
             * finds it, it is a symbolic link to nowhere: where a
             * write through it lands is not ours to guess */
            if (first && lstat(out, &st) == 0) {
                *why = "a symbolic link whose target does not exist";
                return -1;
            }
            first = false;
        }
        c += len;
    }
    return 0;
}

/* Is `path` the folder `dir` or inside it? (both canonical) */
static bool
fe_inside(const char *dir, const char *path)
{
    size_t n = strlen(dir);

    if (n == 1 && dir[0] == '/')
        return true;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Resolve the tool argument `path` (relative to root, or absolute) into
 * abs[PATH_MAX]; *rel points into abs at the part below root. `write`:
 * the backup folder is refused too. 0, or -1 with the message in msg.
 */
static int
fe_resolve(const struct fileedit *fe, const char *path, size_t len,
           bool write, char *abs, const char **rel, char *msg, size_t size)
{
    const char *why = NULL;
    char *full;
    size_t n = strlen(fe->root);

    if (len == 0 || strlen(path) != len) {
        snprintf(msg, size, "path must be a non-empty string without NUL");
        return -1;
    }
    if ((full = fe_join(fe->root, path)) == NULL) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    if (fe_canonical(full, abs, &why) != 0) {
        free(full);
        snprintf(msg, size, "'%.200s': %s", path, why);
        return -1;
    }
    free(full);
    if (!fe_inside(fe->root, abs)) {
        snprintf(msg, size,
                 "'%.200s' is outside the working folder (symbolic links "
                 "and '..' may not leave it)",
                 path);
        return -1;
    }
    if (write && fe_inside(fe->backups, abs)) {
        snprintf(msg, size,
                 "'%.200s' is in file_edit's backup folder, which only "
                 "undo changes",
                 path);
        return -1;
    }
    if (strcmp(abs, fe->root) == 0)
        *rel = ".";
    else
        *rel = abs + n + (n == 1 ? 0 : 1);
    return 0;
}

/* mkdir -p of the folders above the file `abs` (from / down). */
static int
fe_mkdirs(const char *abs, bool self)
{
    char buf[PATH_MAX];
    size_t n = strlen(abs);

    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, abs, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && !(self && buf[i] == '\0'))
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        if (i < n)
            buf[i] = '/';
    }
    return 0;
}

/* --- files -------------------------------------------------------------- */

/*
 * Read the regular file `abs` whole when at most `max` bytes: 0 with
 * *data (heap, NUL-terminated) and *len, *mode; -1 with errno (ENOENT,
 * EISDIR for a non-regular file, EFBIG for one too large, ...).
 */
static int
fe_read(const char *abs, size_t max, char **data, size_t *len,
        unsigned *mode)
{
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    int fd, e;

    *data = NULL;
    fd = open(abs, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        errno = EISDIR;
        goto fail;
    }
    if ((uintmax_t)st.st_size > max) {
        errno = EFBIG;
        goto fail;
    }
    if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
        goto fail;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            goto fail;
        if (r == 0)
            break; /* it shrank meanwhile: what is there */
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    *mode = (unsigned)st.st_mode & 07777;
    return 0;
fail:
    e = errno;
    free(buf);
    close(fd);
    errno = e;
    return -1;
}

/* Write all of data[len] to fd: 0, or -1. */
static int
fe_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/*
 * Replace (or create) `abs` with data[len] atomically: a temporary file
 * in the same folder, fsync, rename over the target, fsync the folder.
 * A crash leaves the old file or the new one, never half of one; a
 * failure leaves no temporary file. 0, or -1 with errno.
 */
static int
fe_write_atomic(const char *abs, const char *data, size_t len, unsigned mode)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    const char *slash = strrchr(abs, '/');
    size_t dlen = (size_t)(slash - abs);
    int fd, e, dfd;

    if (dlen == 0)
        dlen = 1; /* a file in "/" */
    if (snprintf(tmp, sizeof(tmp), "%.*s/.%s.ga-XXXXXX", (int)dlen, abs,
                 slash + 1) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
        return -1;
    if (fe_write_all(fd, data, len) != 0 || fchmod(fd, mode) != 0 ||
        fsync(fd) != 0) {
        e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, abs) != 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    /* the rename itself must reach the disk too */
    snprintf(dir, sizeof(dir), "%.*s", (int)dlen, abs);
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* A message for errno after reading or writing `rel`. */
static const char *
fe_errno_text(int e)
{
    switch (e) {
    case ENOENT:
        return "no such file";
    case EISDIR:
        return "not a regular file";
    case EFBIG:
        return "larger than maxFileBytes";
    case ELOOP:
        return "a symbolic link";
    case EACCES:
    case EPERM:
        return "permission denied";
    case ENOSPC:
        return "no space left on the device";
    default:
        return strerror(e);
    }
}

static bool
fe_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_next((const unsigned char *)s + i, len - i, &cp);
        if (cp == UTF8_BAD)
            return false;
        i += n;
    }
    return true;
}

/* --- the journal of changes ---------------------------------------------- */

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
    return snprintf(buf, PATH_MAX, "%s/%s", fe->backups, name) >= PATH_MAX
               ? -1
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

/*
 * Take the journal: the mutex, then flock() of the backup folder's lock
 * file (created with the folder), then its entries. 0, or -1 with the
 * mutex released.
 */
static int
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
                goto fail;
            }
            t->e[t->n++] = (struct fe_entry){(long)id, r, existed != 0,
                                             (unsigned)m & 07777};
        }
        json_decref(j);
        if (nl == NULL)
            break;
        line = nl + 1;
    }
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

/* Write the journal back (atomically, dropping the oldest entries past
 * BOUND_FILEEDIT_UNDO with their backups): 0, or -1. */
static int
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

static void
fe_end(struct fileedit *fe, struct fe_txn *t)
{
    fe_entries_free(t->e, t->n);
    close(t->lockfd); /* and the flock with it */
    pthread_mutex_unlock(&fe->lock);
}

/*
 * Note in the journal that `rel` is about to change: a copy of its old
 * content old[len] when `existed`. 0, or -1 (nothing noted).
 */
static int
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

/* Forget the last entry (the change it noted failed). */
static void
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

/* --- the tools ----------------------------------------------------------- */

/* Decode args into `j` (caller decrefs). 0, or -1 after answering. */
static int
fe_args(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
        const char *args, size_t len, json_t **j, int *rc)
{
    json_error_t jerr;

    *j = json_loadb(args, len, JSON_REJECT_DUPLICATES, &jerr);
    if (*j == NULL || !json_is_object(*j)) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                      "the arguments must be a JSON object");
        return -1;
    }
    return 0;
}

static int
fe_bad_args(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
            const json_error_t *jerr)
{
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "bad arguments: %s",
                   jerr->text);
}

static int
fe_read_file(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *rel;
    size_t plen, len, total = 0, start = 0, end, shown = 0;
    json_int_t offset = 1, limit = 0;
    json_error_t jerr;
    char *data = NULL;
    unsigned mode;
    bool cut = false;
    json_t *content, *res;

    (void)t; /* reads take no lock */
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?I, s?I}", "path",
                       &path, &plen, "offset", &offset, "limit",
                       &limit) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (offset < 1 || (json_object_get(a, "limit") != NULL && limit < 1))
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "offset must be >= 1 and limit >= 1");
    if (fe_resolve(fe, path, plen, false, abs, &rel, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_read(abs, fe->max_bytes, &data, &len, &mode) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "cannot read '%s': %s",
                       rel, fe_errno_text(errno));
    /* lines: count them, find the first asked for */
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            total++;
            if (total + 1 == (size_t)offset)
                start = i + 1;
        }
    }
    if (len > 0 && data[len - 1] != '\n')
        total++; /* a last line without its newline */
    if ((size_t)offset > total && !(offset == 1 && total == 0)) {
        free(data);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "offset %lld is past the end of '%s' (%zu lines)",
                       (long long)offset, rel, total);
    }
    /* whole lines from start, up to limit and BOUND_FILEEDIT_READ_BYTES */
    for (end = start; end < len;) {
        char *nl = memchr(data + end, '\n', len - end);
        size_t next = nl != NULL ? (size_t)(nl - data) + 1 : len;
        if (limit > 0 && shown == (size_t)limit)
            break;
        if (next - start > BOUND_FILEEDIT_READ_BYTES) {
            cut = true;
            if (shown == 0) { /* one huge line: its start, counted */
                end = start + utf8_cut(data + start,
                                       BOUND_FILEEDIT_READ_BYTES);
                shown = 1;
            }
            break;
        }
        end = next;
        shown++;
    }
    if (!fe_utf8(data + start, end - start)) {
        free(data);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "'%s' is not UTF-8 text", rel);
    }
    content = json_stringn(data + start, end - start);
    free(data);
    res = json_pack("{s:s, s:o, s:I, s:I, s:I, s:b}", "path", rel, "content",
                    content, "startLine", offset, "lines", (json_int_t)shown,
                    "totalLines", (json_int_t)total, "truncated",
                    cut || (size_t)offset - 1 + shown < total);
    if (res != NULL && (cut || (size_t)offset - 1 + shown < total))
        json_object_set_new(res, "nextOffset",
                            json_integer(offset + (json_int_t)shown));
    return answer_json(ctx, out, res);
}

/* The file's old content for a change: 0 with *existed; or -1 after
 * answering why it may not change. */
static int
fe_old(struct fileedit *fe, const struct gemini_agent_ctx *ctx,
       struct gemini_agent_out *out, const char *abs, const char *rel,
       char **data, size_t *len, unsigned *mode, bool *existed, int *rc)
{
    *existed = true;
    if (fe_read(abs, fe->max_bytes, data, len, mode) == 0)
        return 0;
    if (errno == ENOENT) {
        *existed = false;
        *data = NULL;
        *len = 0;
        *mode = 0644;
        return 0;
    }
    *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "cannot change '%s': %s",
                  rel, fe_errno_text(errno));
    return -1;
}

/*
 * The change every write tool makes, with the journal `t` held: note the
 * old state in it, then put data[len] in place of `abs` (or remove it when
 * data is NULL). The answer is `res` (stolen) or the error.
 */
static int
fe_apply(struct fileedit *fe, struct fe_txn *t,
         const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
         const char *abs, const char *rel, bool existed, const char *old,
         size_t old_len, unsigned mode, const char *data, size_t len,
         json_t *res)
{
    int e;

    if (fe_note(fe, t, rel, existed, old, old_len, mode) != 0) {
        e = errno;
        json_decref(res);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                       "cannot back up '%s': %s", rel, fe_errno_text(e));
    }
    if ((data != NULL && (fe_mkdirs(abs, false) != 0 ||
                          fe_write_atomic(abs, data, len, mode) != 0)) ||
        (data == NULL && unlink(abs) != 0)) {
        e = errno;
        fe_unnote(fe, t);
        json_decref(res);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "cannot %s '%s': %s",
                       data != NULL ? "write" : "remove", rel,
                       fe_errno_text(e));
    }
    if (fe_save(fe, t) != 0) {
        /* changed, but undo will not know: say so rather than hide it */
        json_decref(res);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                       "'%s' changed, but the undo journal could not be "
                       "written",
                       rel);
    }
    return answer_json(ctx, out, res);
}

static int
fe_write_file(struct fileedit *fe, struct fe_txn *t,
              const struct gemini_agent_ctx *ctx, json_t *a,
              struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *rel, *content;
    size_t plen, clen, old_len;
    json_error_t jerr;
    char *old = NULL;
    unsigned mode;
    bool existed;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%}", "path", &path,
                       &plen, "content", &content, &clen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_resolve(fe, path, plen, true, abs, &rel, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (clen > fe->max_bytes)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "the content is %zu bytes, more than maxFileBytes "
                       "(%zu)",
                       clen, fe->max_bytes);
    if (fe_old(fe, ctx, out, abs, rel, &old, &old_len, &mode, &existed,
               &rc) != 0)
        return rc;
    rc = fe_apply(fe, t, ctx, out, abs, rel, existed, old, old_len, mode,
                  content, clen,
                  json_pack("{s:s, s:I, s:b}", "path", rel, "bytes",
                            (json_int_t)clen, "created", !existed));
    free(old);
    return rc;
}

static int
fe_update_file(struct fileedit *fe, struct fe_txn *t,
               const struct gemini_agent_ctx *ctx, json_t *a,
               struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *rel, *from, *to;
    size_t plen, flen, tlen, old_len, count = 0, newlen;
    json_error_t jerr;
    int all = 0, rc;
    char *old = NULL, *neu = NULL, *w;
    unsigned mode;
    bool existed;
    const char *p, *end;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%, s:s%, s?b}",
                       "path", &path, &plen, "oldText", &from, &flen,
                       "newText", &to, &tlen, "replaceAll", &all) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (flen == 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "oldText must not be empty");
    if (fe_resolve(fe, path, plen, true, abs, &rel, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old(fe, ctx, out, abs, rel, &old, &old_len, &mode, &existed,
               &rc) != 0)
        return rc;
    if (!existed)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "cannot update '%s': no such file", rel);
    end = old + old_len;
    for (p = old; (p = memmem(p, (size_t)(end - p), from, flen)) != NULL;
         p += flen)
        count++;
    if (count == 0 || (count > 1 && !all)) {
        free(old);
        if (count == 0)
            return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "oldText was not found in '%s' (it must match "
                           "exactly, whitespace included)",
                           rel);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "oldText occurs %zu times in '%s': give more "
                       "context to make it unique, or set replaceAll",
                       count, rel);
    }
    /* count <= old_len / flen, so this cannot overflow */
    newlen = old_len - count * flen;
    if (tlen > 0 && count > (fe->max_bytes - newlen) / tlen) {
        free(old);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "the result would be larger than maxFileBytes");
    }
    newlen += count * tlen;
    if (newlen > fe->max_bytes) {
        free(old);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "the result would be larger than maxFileBytes");
    }
    if ((neu = malloc(newlen + 1)) == NULL) {
        free(old);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    w = neu;
    for (p = old;;) {
        const char *m = memmem(p, (size_t)(end - p), from, flen);
        if (m == NULL)
            break;
        memcpy(w, p, (size_t)(m - p));
        w += m - p;
        memcpy(w, to, tlen);
        w += tlen;
        p = m + flen;
    }
    memcpy(w, p, (size_t)(end - p));
    rc = fe_apply(fe, t, ctx, out, abs, rel, true, old, old_len, mode, neu,
                  newlen,
                  json_pack("{s:s, s:I}", "path", rel, "replacements",
                            (json_int_t)count));
    free(neu);
    free(old);
    return rc;
}

static int
fe_remove_file(struct fileedit *fe, struct fe_txn *t,
               const struct gemini_agent_ctx *ctx, json_t *a,
               struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *rel;
    size_t plen, old_len;
    json_error_t jerr;
    char *old = NULL;
    unsigned mode;
    bool existed;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%}", "path", &path,
                       &plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_resolve(fe, path, plen, true, abs, &rel, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old(fe, ctx, out, abs, rel, &old, &old_len, &mode, &existed,
               &rc) != 0)
        return rc;
    if (!existed)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "cannot remove '%s': no such file", rel);
    rc = fe_apply(fe, t, ctx, out, abs, rel, true, old, old_len, mode, NULL, 0,
                  json_pack("{s:s, s:b}", "path", rel, "removed", 1));
    free(old);
    return rc;
}

static int
fe_undo(struct fileedit *fe, struct fe_txn *t,
        const struct gemini_agent_ctx *ctx, json_t *a,
        struct gemini_agent_out *out)
{
    char abs[PATH_MAX], backup[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path = NULL, *rel = NULL;
    size_t plen = 0, i, len = 0;
    json_error_t jerr;
    struct fe_entry *e;
    char *data = NULL;
    unsigned mode;
    json_t *res;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s?s%}", "path", &path,
                       &plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (path != NULL &&
        fe_resolve(fe, path, plen, true, abs, &rel, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    for (i = t->n; i > 0; i--)
        if (rel == NULL || strcmp(t->e[i - 1].rel, rel) == 0)
            break;
    if (i == 0) {
        if (rel != NULL)
            return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "there is no change of '%s' to undo", rel);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "there is no change to undo");
    }
    e = &t->e[i - 1];
    /* the journal's path goes through the sandbox again: what lies on
     * the way may have changed since */
    if (fe_resolve(fe, e->rel, strlen(e->rel), true, abs, &rel, msg,
                   sizeof(msg)) != 0) {
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    }
    fe_backup_name(backup, fe, e->id);
    if (e->existed) {
        if (backup[0] == '\0' ||
            fe_read(backup, BOUND_FILEEDIT_FILE_BYTES, &data, &len, &mode) !=
                0 ||
            fe_mkdirs(abs, false) != 0 ||
            fe_write_atomic(abs, data, len, e->mode) != 0) {
            int err = errno;
            free(data);
                return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                           "cannot restore '%s': %s", rel,
                           fe_errno_text(err));
        }
        free(data);
    } else if (unlink(abs) != 0 && errno != ENOENT) {
        int err = errno;
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "cannot remove '%s': %s",
                       rel, fe_errno_text(err));
    }
    res = json_pack("{s:s, s:s}", "path", e->rel, "undone",
                    e->existed ? "restored" : "removed");
    free(e->rel);
    memmove(e, e + 1, (t->n - i) * sizeof(*e));
    t->n--;
    rc = fe_save(fe, t);
    if (rc == 0 && backup[0] != '\0')
        unlink(backup); /* only once the journal no longer names it */
    if (rc != 0) {
        json_decref(res);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                       "undone, but the undo journal could not be written");
    }
    return answer_json(ctx, out, res);
}

/* --- the plugin's operations --------------------------------------------- */

static const char fe_declarations[] =
    "[{\"name\":\"readFile\",\"description\":\"Read a text file under the "
    "working folder. Lines from `offset` (1-based, default 1), at most "
    "`limit` of them (default all); a long answer is cut at a line and "
    "says nextOffset.\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"path\":{\"type\":\"string\",\"description\":\"relative to the "
    "working folder\"},\"offset\":{\"type\":\"integer\",\"minimum\":1},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1}},\"required\":[\"path\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"writeFile\",\"description\":\"Create a file, or replace all "
    "of its content (missing folders are created).\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"content\":"
    "{\"type\":\"string\"}},\"required\":[\"path\",\"content\"],"
    "\"additionalProperties\":false},\"sideEffects\":true},"
    "{\"name\":\"updateFile\",\"description\":\"Replace the exact text "
    "oldText of a file with newText. oldText must occur exactly once "
    "(whitespace included) unless replaceAll is true.\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"oldText\":{\"type\":\"string\",\"minLength\":1},\"newText\":{\"type\":"
    "\"string\"},\"replaceAll\":{\"type\":\"boolean\"}},\"required\":"
    "[\"path\",\"oldText\",\"newText\"],\"additionalProperties\":false},"
    "\"sideEffects\":true},"
    "{\"name\":\"removeFile\",\"description\":\"Remove a file.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\"}},\"required\":[\"path\"],\"additionalProperties\":false},"
    "\"sideEffects\":true},"
    "{\"name\":\"undo\",\"description\":\"Undo the last change file_edit "
    "made to `path`, or the last change of all without it (a file "
    "writeFile created is removed). Repeat to go further back.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
    "\"string\"}},\"additionalProperties\":false},\"sideEffects\":true}]";

static const char *
fe_decls(void *self)
{
    (void)self;
    return fe_declarations;
}

static const char *
fe_instructions(void *self)
{
    (void)self;
    return "The file_edit tools work on the files of the user's working "
           "folder; give paths relative to it. Read a file before you "
           "update it, and give updateFile an oldText that occurs exactly "
           "once. Every change can be undone with undo.";
}

/* maxFileBytes' maximum is BOUND_FILEEDIT_FILE_BYTES (checked below). */
static const char *
fe_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{"
           "\"root\":{\"type\":\"string\",\"minLength\":1},"
           "\"backupDir\":{\"type\":\"string\",\"minLength\":1},"
           "\"maxFileBytes\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":16777216}},\"additionalProperties\":false}";
}
#if BOUND_FILEEDIT_FILE_BYTES != 16777216
#error "fe_schema()'s maxFileBytes maximum is not BOUND_FILEEDIT_FILE_BYTES"
#endif

static void
fe_free(struct fileedit *fe)
{
    if (fe == NULL)
        return;
    free(fe->root);
    free(fe->backups);
    pthread_mutex_destroy(&fe->lock);
    free(fe);
}

static int
fe_initialize(const struct gemini_agent_init *init, void **self, char *err,
              size_t errsize)
{
    const char *root = NULL, *backups = NULL, *why = NULL;
    json_int_t max = DEFAULT_FILEEDIT_FILE_BYTES;
    char buf[PATH_MAX], cwd[PATH_MAX];
    const char *base = init->config_dir ? init->config_dir : ".";
    json_error_t jerr;
    struct fileedit *fe = NULL;
    char *p = NULL;
    struct stat st;
    json_t *c;

    c = json_loadb(init->config, init->config_len, JSON_REJECT_DUPLICATES,
                   &jerr);
    if (c == NULL || json_unpack_ex(c, &jerr, JSON_STRICT,
                                    "{s?s, s?s, s?I}", "root", &root,
                                    "backupDir", &backups, "maxFileBytes",
                                    &max) != 0) {
        snprintf(err, errsize, "bad config: %s", jerr.text);
        goto fail;
    }
    if (max < 1 || max > BOUND_FILEEDIT_FILE_BYTES) {
        snprintf(err, errsize, "maxFileBytes must be 1 to %u",
                 BOUND_FILEEDIT_FILE_BYTES);
        goto fail;
    }
    if ((fe = calloc(1, sizeof(*fe))) == NULL)
        goto oom;
    pthread_mutex_init(&fe->lock, NULL);
    fe->max_bytes = (size_t)max;
    /* the base of a relative path: agent.yaml's folder, or the cwd */
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        snprintf(err, errsize, "cannot read the working folder: %s",
                 strerror(errno));
        goto fail;
    }
    if (base[0] != '/') {
        p = fe_join(cwd, base);
        if (p == NULL)
            goto oom;
        base = p;
    }
    if (root == NULL)
        fe->root = strdup(cwd);
    else
        fe->root = fe_join(base, root);
    if (fe->root == NULL)
        goto oom;
    if (realpath(fe->root, buf) == NULL || stat(buf, &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
        snprintf(err, errsize, "root '%.200s' is not a folder", fe->root);
        goto fail;
    }
    free(fe->root);
    if ((fe->root = strdup(buf)) == NULL)
        goto oom;
    if (backups == NULL) {
        if (asprintf(&fe->backups, "%s/.gemini-agent/backups", fe->root) < 0)
            fe->backups = NULL;
    } else {
        fe->backups = fe_join(base, backups);
    }
    if (fe->backups == NULL)
        goto oom;
    if (fe_canonical(fe->backups, buf, &why) != 0) {
        snprintf(err, errsize, "backupDir '%.200s': %s", fe->backups, why);
        goto fail;
    }
    free(fe->backups);
    if ((fe->backups = strdup(buf)) == NULL)
        goto oom;
    if (strcmp(fe->backups, fe->root) == 0 ||
        fe_inside(fe->backups, fe->root)) {
        snprintf(err, errsize, "backupDir may not be root or a folder above "
                               "it");
        goto fail;
    }
    json_decref(c);
    free(p);
    *self = fe;
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
fail:
    json_decref(c);
    free(p);
    fe_free(fe);
    return -1;
}

static void
fe_shutdown(void *self)
{
    fe_free(self);
}

static int
fe_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
           const char *args, size_t args_len, struct gemini_agent_out *out)
{
    /* `change`: the tool runs with the journal held, from before it
     * reads the file to after it wrote it, so that two changes of one
     * file never interleave (no lost update) */
    static const struct {
        const char *name;
        bool change;
        int (*run)(struct fileedit *, struct fe_txn *,
                   const struct gemini_agent_ctx *, json_t *,
                   struct gemini_agent_out *);
    } tools[] = {
        {"readFile", false, fe_read_file},
        {"writeFile", true, fe_write_file},
        {"updateFile", true, fe_update_file},
        {"removeFile", true, fe_remove_file},
        {"undo", true, fe_undo},
    };
    struct fe_txn t;
    json_t *a;
    int rc;

    if (self == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "not initialised");
    for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
        if (strcmp(tool, tools[i].name) != 0)
            continue;
        if (fe_args(ctx, out, args, args_len, &a, &rc) != 0) {
            json_decref(a);
            return rc;
        }
        if (tools[i].change && fe_begin(self, &t) != 0) {
            json_decref(a);
            return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                           "cannot open the backup folder: %s",
                           strerror(errno));
        }
        rc = tools[i].run(self, tools[i].change ? &t : NULL, ctx, a, out);
        if (tools[i].change)
            fe_end(self, &t);
        json_decref(a);
        return rc;
    }
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "unknown tool '%.64s'",
                   tool);
}

static const struct gemini_agent_plugin fe_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "file_edit",
    .declarations = fe_decls,
    .execute = fe_execute,
    .initialize = fe_initialize,
    .shutdown = fe_shutdown,
    .system_instructions = fe_instructions,
    .config_schema = fe_schema,
    .flags = GEMINI_AGENT_TERMINAL_ONLY,
};

const struct gemini_agent_plugin *
builtin_file_edit(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &fe_plugin : NULL;
}
