/*
 * fileedit.c - the built-in plugin `file_edit`: the coding agent's hands
 * on the files of one folder (`root`, the terminal client's --cwd) and of
 * the `addDirs` folders beside it (--add-dir).
 *
 * Tools: Claude Code's Read, Write, Edit, MultiEdit, Glob, Grep and LS,
 * with its input fields and result texts (issue 14 section 3; the formats
 * are /work/shared/research/cli.md section 3, kept byte for byte), and
 * Undo, ours. Each answer is {"text": what Claude Code puts in the
 * tool_result, ...its structured tool_use_result fields}; a failure the
 * model should see is GEMINI_AGENT_BAD_INPUT with Claude Code's error
 * text. Removing a file is Bash's job, as in Claude Code.
 *
 * Every path is resolved first - an absolute path outside root and the
 * addDirs, a `..` that climbs out and a symbolic link that leads out are
 * all refused - and the backup folder is out of the write tools' reach.
 * Glob, Grep and LS walk folders without following symbolic links, so a
 * walk stays where its start was allowed. Every change first saves what
 * it replaces (a copy of the old file, or the note that there was none)
 * in the backup folder's journal, so Undo can step back change by
 * change; files are replaced atomically (a temporary file beside the
 * target, fsync, rename).
 *
 * Not a sandbox against the machine: it is the terminal client's
 * (GEMINI_AGENT_TERMINAL_ONLY), run by the person whose files these are;
 * the checks keep the model's paths where that person pointed it. A race
 * with another program swapping a folder for a symbolic link between the
 * check and the write is not defended against beyond O_NOFOLLOW on the
 * file itself.
 *
 * Threads and processes: changes and Undo run one at a time, under a
 * mutex (threads) and flock() on the backup folder's lock file
 * (processes), held from reading the old file to writing the new one, so
 * no update is lost; the reading tools take no lock.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "plugins/bounds.h"
#include "core/monotime.h"
#include "core/status.h"
#include "core/utf8.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct fileedit {
    char *root;       /* canonical, no trailing '/' (but "/" itself) */
    char **dirs;      /* addDirs, canonical: reachable beside root */
    size_t ndirs;
    char *backups;    /* canonical where it exists; created on first use */
    size_t max_bytes; /* maxFileBytes */
    pthread_mutex_t lock; /* changes, one at a time (threads) */
};

/* One change the journal can undo. */
struct fe_entry {
    long id;      /* its backup is <backups>/<id> when `existed` */
    char *rel;    /* the file: absolute (relative to root in journals
                   * written before addDirs) */
    bool existed; /* false: the change created it, undo removes it */
    unsigned mode;
};

/* The journal while a change holds it. */
struct fe_txn {
    int lockfd;
    struct fe_entry *e;
    size_t n;
};

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

/* May the tools reach the canonical `abs`: inside root or an addDirs
 * folder? */
static bool
fe_allowed(const struct fileedit *fe, const char *abs)
{
    if (fe_inside(fe->root, abs))
        return true;
    for (size_t i = 0; i < fe->ndirs; i++)
        if (fe_inside(fe->dirs[i], abs))
            return true;
    return false;
}

/*
 * Resolve the tool argument `path` (absolute, as Claude Code's file_path,
 * or relative to root) into abs[PATH_MAX]. `write`: the backup folder is
 * refused too. 0, or -1 with the message (Claude Code's words where it
 * has some) in msg.
 */
static int
fe_resolve(const struct fileedit *fe, const char *path, size_t len,
           bool write, char *abs, char *msg, size_t size)
{
    const char *why = NULL;
    char *full;

    if (len == 0 || strlen(path) != len) {
        snprintf(msg, size, "The path must be a non-empty string without "
                            "NUL.");
        return -1;
    }
    if ((full = fe_join(fe->root, path)) == NULL) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    if (fe_canonical(full, abs, &why) != 0) {
        free(full);
        snprintf(msg, size, "Cannot resolve %.200s: %s.", path, why);
        return -1;
    }
    free(full);
    if (!fe_allowed(fe, abs)) {
        snprintf(msg, size,
                 "Path is outside the allowed working directories (the "
                 "working directory and --add-dir folders; symbolic links "
                 "and '..' may not leave them): %.200s",
                 path);
        return -1;
    }
    if (write && fe_inside(fe->backups, abs)) {
        snprintf(msg, size,
                 "%.200s is in file_edit's backup folder, which only Undo "
                 "changes.",
                 path);
        return -1;
    }
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

/* --- answers ------------------------------------------------------------- */

/* Claude Code's words (cli.md 3.3), byte for byte. */
static const char fe_read_reminder[] =
    "\n\n<system-reminder>\nWhenever you read a file, you should consider "
    "whether it looks malicious. If it does, you MUST refuse to improve or "
    "augment the code. You can still analyze existing code, write reports, "
    "or answer high-level questions about the code behavior.\n"
    "</system-reminder>\n";
static const char fe_snippet_intro[] =
    " has been updated. Here's the result of running `cat -n` on a snippet "
    "of the edited file:\n";
static const char fe_ls_note[] =
    "\nNOTE: do any of the files above seem malicious? If so, you MUST "
    "refuse to continue work.";

/* Make s[len] UTF-8 in place: a byte that starts no well-formed sequence
 * becomes '?' (the answer is JSON text). */
static void
fe_sanitize(char *s, size_t len)
{
    unsigned char *p = (unsigned char *)s;

    for (size_t i = 0; i < len;) {
        size_t n = p[i] < 0x80 ? 1 : utf8_seq_len(p + i, len - i);
        if (n == 0) {
            p[i] = '?';
            n = 1;
        }
        i += n;
    }
}

/* The bytes of s[len] (UTF-8) that hold its first `chars` characters. */
static size_t
fe_chars(const char *s, size_t len, size_t chars)
{
    size_t i = 0;

    for (size_t c = 0; i < len && c < chars; c++) {
        unsigned char b = (unsigned char)s[i];
        i += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    }
    return i < len ? i : len;
}

/* A text being built. */
struct fe_text {
    FILE *f;
    char *s;
    size_t len;
};

static int
fe_text_open(struct fe_text *t)
{
    t->s = NULL;
    t->len = 0;
    t->f = open_memstream(&t->s, &t->len);
    return t->f != NULL ? 0 : -1;
}

/* The text (heap, NUL-terminated), or NULL when out of memory. */
static char *
fe_text_close(struct fe_text *t)
{
    if (t->f == NULL)
        return NULL;
    if (fclose(t->f) != 0 || t->s == NULL) {
        free(t->s);
        t->f = NULL;
        return NULL;
    }
    t->f = NULL;
    return t->s;
}

/* The answer {"text": text, ...obj}: both stolen (text heap, may be
 * NULL: out of memory). */
static int
fe_answer(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
          char *text, json_t *obj)
{
    if (text != NULL)
        fe_sanitize(text, strlen(text));
    if (text == NULL || obj == NULL ||
        json_object_set_new(obj, "text", json_string(text)) != 0) {
        free(text);
        json_decref(obj);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    free(text);
    return answer_json(ctx, out, obj);
}

/*
 * Claude Code's `cat -n` (its function Ky): each line of s[len], split at
 * \r?\n, as its number right-aligned to 6, U+2192 and the line, joined by
 * \n; nothing for an empty text.
 */
static void
fe_number(FILE *f, const char *s, size_t len, long start)
{
    size_t i = 0;

    if (len == 0)
        return;
    for (long n = start;; n++) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - s) : len, le = e;
        if (nl != NULL && le > i && s[le - 1] == '\r')
            le--;
        fprintf(f, "%6ld\xe2\x86\x92", n);
        fwrite(s + i, 1, le - i, f);
        if (nl == NULL)
            break;
        fputc('\n', f);
        i = e + 1;
    }
}

/*
 * The bytes of lines [from, to) (0-based, split at \n: a text ending in
 * \n has an empty last line, as JavaScript's split() gives) of s[len]:
 * *b, *e. Cut to whole lines within BOUND_FILEEDIT_READ_BYTES (one line
 * at least, itself cut) so that a snippet stays within the answer bound.
 */
static void
fe_lines(const char *s, size_t len, size_t from, size_t to, size_t *b,
         size_t *e)
{
    size_t i = 0, line = 0;

    while (line < from && i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        if (nl == NULL) {
            i = len;
            line++;
            break;
        }
        i = (size_t)(nl - s) + 1;
        line++;
    }
    *b = *e = i;
    if (line < from)
        return; /* past the end */
    for (size_t j = i; line < to;) {
        const char *nl = memchr(s + j, '\n', len - j);
        size_t end = nl != NULL ? (size_t)(nl - s) : len;
        if (end - i > BOUND_FILEEDIT_READ_BYTES) {
            if (*e == i)
                *e = i + BOUND_FILEEDIT_READ_BYTES;
            return;
        }
        *e = end;
        line++;
        if (nl == NULL)
            return;
        j = end + 1;
    }
}

/* Claude Code's "The file P has been updated. Here's ...:\n" and lines
 * [from, to) of s[len] numbered: a new string, or NULL. */
static char *
fe_snippet(const char *path, const char *s, size_t len, size_t from,
           size_t to)
{
    struct fe_text t;
    size_t b, e;

    if (fe_text_open(&t) != 0)
        return NULL;
    fe_lines(s, len, from, to, &b, &e);
    fprintf(t.f, "The file %s%s", path, fe_snippet_intro);
    fe_number(t.f, s + b, e - b, (long)from + 1);
    return fe_text_close(&t);
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
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "InputValidationError: %s", jerr->text);
}

/* Why reading `path` failed, in Claude Code's words where it has some. */
static int
fe_read_fail(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
             struct gemini_agent_out *out, const char *path, int e)
{
    if (e == ENOENT || e == ENOTDIR)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "File does not exist.");
    if (e == EISDIR)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "EISDIR: illegal operation on a directory, read");
    if (e == EFBIG)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "File content exceeds maximum allowed size (%zuKB, "
                           "maxFileBytes): %.200s",
                           fe->max_bytes / 1024, path);
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "Cannot read %.200s: %s",
                       path, fe_errno_text(e));
}

static int
fe_tool_read(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path;
    size_t plen, len, total = 0, first, i = 0, shown = 0;
    json_int_t offset = 0, limit = FILEEDIT_READ_LINES, start;
    json_error_t jerr;
    char *data = NULL;
    unsigned mode;
    struct fe_text c, txt;
    char *content, *text;
    json_t *res;

    (void)t; /* reads take no lock */
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?I, s?I}",
                       "file_path", &path, &plen, "offset", &offset, "limit",
                       &limit) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (offset < 0 || limit < 1)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "offset must be >= 0 and limit >= 1");
    if (fe_resolve(fe, path, plen, false, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_read(abs, fe->max_bytes, &data, &len, &mode) != 0)
        return fe_read_fail(fe, ctx, out, path, errno);
    fe_sanitize(data, len);
    /* Claude Code's offset is the first line's number; 0 is the start */
    start = offset > 0 ? offset : 1;
    first = (size_t)start - 1;
    for (size_t k = 0; k < len; k++)
        total += data[k] == '\n';
    total += len > 0; /* split(): n newlines make n + 1 lines */
    if (len == 0 || first >= total) {
        free(data);
        if (len == 0)
            text = strdup("<system-reminder>Warning: the file exists but "
                          "the contents are empty.</system-reminder>");
        else if (asprintf(&text,
                          "<system-reminder>Warning: the file exists but is "
                          "shorter than the provided offset (%lld). The "
                          "file has %zu lines.</system-reminder>",
                          (long long)start, total) < 0)
            text = NULL;
        return fe_answer(ctx, out, text,
                         json_pack("{s:s, s:{s:s, s:s, s:i, s:I, s:I}}",
                                   "type", "text", "file", "filePath", abs,
                                   "content", "", "numLines", 0, "startLine",
                                   start, "totalLines", (json_int_t)total));
    }
    /* to the first line asked for */
    for (size_t l = 0; l < first; l++)
        i = (size_t)((char *)memchr(data + i, '\n', len - i) - data) + 1;
    if (fe_text_open(&c) != 0) {
        free(data);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    /* lines from there: at most `limit`, each cut to FILEEDIT_LINE_CHARS
     * characters, whole lines within BOUND_FILEEDIT_READ_BYTES */
    for (;;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - data) : len, le = e, cut;
        if (nl != NULL && le > i && data[le - 1] == '\r')
            le--;
        cut = fe_chars(data + i, le - i, FILEEDIT_LINE_CHARS);
        if (shown > 0 && c.len + 1 + cut > BOUND_FILEEDIT_READ_BYTES)
            break;
        if (shown > 0)
            fputc('\n', c.f);
        fwrite(data + i, 1, cut, c.f);
        fflush(c.f);
        shown++;
        if (nl == NULL || shown == (size_t)limit)
            break;
        i = e + 1;
    }
    free(data);
    if ((content = fe_text_close(&c)) == NULL || fe_text_open(&txt) != 0) {
        free(content);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    fe_number(txt.f, content, strlen(content), (long)start);
    fputs(fe_read_reminder, txt.f);
    text = fe_text_close(&txt);
    res = json_pack("{s:s, s:{s:s, s:s, s:I, s:I, s:I}}", "type", "text",
                    "file", "filePath", abs, "content", content, "numLines",
                    (json_int_t)shown, "startLine", start, "totalLines",
                    (json_int_t)total);
    free(content);
    return fe_answer(ctx, out, text, res);
}

/* The file's old content for a change: 0 with *existed; or -1 after
 * answering why it may not change. */
static int
fe_old(struct fileedit *fe, const struct gemini_agent_ctx *ctx,
       struct gemini_agent_out *out, const char *abs, char **data,
       size_t *len, unsigned *mode, bool *existed, int *rc)
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
    *rc = fe_read_fail(fe, ctx, out, abs, errno);
    return -1;
}

/* fe_old(), and a copy of the content for Edit and MultiEdit to change
 * (*copy NULL when the file does not exist yet). 0, or -1 after
 * answering (*rc). */
static int
fe_old_copy(struct fileedit *fe, const struct gemini_agent_ctx *ctx,
            struct gemini_agent_out *out, const char *abs, char **data,
            size_t *len, unsigned *mode, bool *existed, char **copy, int *rc)
{
    *copy = NULL;
    if (fe_old(fe, ctx, out, abs, data, len, mode, existed, rc) != 0)
        return -1;
    if (!*existed)
        return 0;
    if ((*copy = malloc(*len + 1)) == NULL) {
        free(*data);
        *data = NULL;
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
        return -1;
    }
    memcpy(*copy, *data, *len + 1);
    return 0;
}

/*
 * The change every write tool makes, with the journal `t` held: note the
 * old state in it, then put data[len] in place of `abs`. 0, or -1 after
 * answering the error (*rc).
 */
static int
fe_apply(struct fileedit *fe, struct fe_txn *t,
         const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
         const char *abs, bool existed, const char *old, size_t old_len,
         unsigned mode, const char *data, size_t len, int *rc)
{
    int e;

    if (fe_note(fe, t, abs, existed, old, old_len, mode) != 0) {
        e = errno;
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                          "cannot back up %s: %s", abs, fe_errno_text(e));
        return -1;
    }
    if (fe_mkdirs(abs, false) != 0 ||
        fe_write_atomic(abs, data, len, mode) != 0) {
        e = errno;
        fe_unnote(fe, t);
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "Cannot write %s: %s", abs, fe_errno_text(e));
        return -1;
    }
    if (fe_save(fe, t) != 0) {
        /* changed, but Undo will not know: say so rather than hide it */
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                          "%s changed, but the undo journal could not be "
                          "written",
                          abs);
        return -1;
    }
    return 0;
}

static int
fe_tool_write(struct fileedit *fe, struct fe_txn *t,
              const struct gemini_agent_ctx *ctx, json_t *a,
              struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *content;
    size_t plen, clen, old_len;
    json_error_t jerr;
    char *old = NULL, *text;
    unsigned mode;
    bool existed;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%}", "file_path",
                       &path, &plen, "content", &content, &clen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_resolve(fe, path, plen, true, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (clen > fe->max_bytes)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "The content is %zu bytes, more than maxFileBytes "
                           "(%zu).",
                           clen, fe->max_bytes);
    if (fe_old(fe, ctx, out, abs, &old, &old_len, &mode, &existed, &rc) != 0)
        return rc;
    if (fe_apply(fe, t, ctx, out, abs, existed, old, old_len, mode, content,
                 clen, &rc) != 0) {
        free(old);
        return rc;
    }
    free(old);
    if (!existed) {
        if (asprintf(&text, "File created successfully at: %s", abs) < 0)
            text = NULL;
    } else {
        text = fe_snippet(abs, content, clen, 0, FILEEDIT_READ_LINES);
    }
    return fe_answer(ctx, out, text,
                     json_pack("{s:s, s:s}", "type",
                               existed ? "update" : "create", "filePath",
                               abs));
}

/*
 * One edit of buf[*len] (heap, replaced; NULL and `exists` false for a
 * file that does not exist): `from` -> `to`, every occurrence when `all`.
 * *first: where the first replacement starts. 0, or -1 with Claude Code's
 * message in msg.
 */
static int
fe_edit_buf(char **buf, size_t *len, bool exists, const char *from,
            size_t flen, const char *to, size_t tlen, bool all, size_t max,
            size_t *first, char *msg, size_t size)
{
    size_t count = 0, newlen;
    const char *p, *end;
    char *neu, *w;

    *first = 0;
    if (flen == tlen && memcmp(from, to, flen) == 0) {
        snprintf(msg, size, "No changes to make: old_string and new_string "
                            "are exactly the same.");
        return -1;
    }
    if (flen == 0) {
        /* an empty old_string creates the file (or fills an empty one) */
        if (exists && *len > 0) {
            snprintf(msg, size,
                     "Cannot create new file - file already exists.");
            return -1;
        }
        if (tlen > max)
            goto big;
        if ((neu = malloc(tlen + 1)) == NULL)
            goto oom;
        memcpy(neu, to, tlen);
        neu[tlen] = '\0';
        free(*buf);
        *buf = neu;
        *len = tlen;
        return 0;
    }
    if (!exists) {
        snprintf(msg, size, "File does not exist.");
        return -1;
    }
    end = *buf + *len;
    for (p = *buf; (p = memmem(p, (size_t)(end - p), from, flen)) != NULL;
         p += flen) {
        if (count++ == 0)
            *first = (size_t)(p - *buf);
    }
    if (count == 0) {
        snprintf(msg, size, "String to replace not found in file.\nString: %.*s",
                 (int)flen, from);
        return -1;
    }
    if (count > 1 && !all) {
        snprintf(msg, size,
                 "Found %zu matches of the string to replace, but "
                 "replace_all is false. To replace all occurrences, set "
                 "replace_all to true. To replace only one occurrence, "
                 "please provide more context to uniquely identify the "
                 "instance.\nString: %.*s",
                 count, (int)flen, from);
        return -1;
    }
    /* count <= len / flen, so this cannot overflow */
    newlen = *len - count * flen;
    if (tlen > 0 && count > (max - (newlen < max ? newlen : max)) / tlen)
        goto big;
    newlen += count * tlen;
    if (newlen > max)
        goto big;
    if ((neu = malloc(newlen + 1)) == NULL)
        goto oom;
    w = neu;
    for (p = *buf;;) {
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
    neu[newlen] = '\0';
    free(*buf);
    *buf = neu;
    *len = newlen;
    return 0;
big:
    snprintf(msg, size, "The result would be larger than maxFileBytes "
                        "(%zu bytes).",
             max);
    return -1;
oom:
    snprintf(msg, size, "out of memory");
    return -1;
}

/* The \n in s[len]. */
static size_t
fe_newlines(const char *s, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

static int
fe_tool_edit(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path, *from, *to;
    size_t plen, flen, tlen, old_len, len, first, line;
    json_error_t jerr;
    int all = 0, rc;
    char *old = NULL, *buf = NULL, *text;
    unsigned mode;
    bool existed;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%, s:s%, s?b}",
                       "file_path", &path, &plen, "old_string", &from, &flen,
                       "new_string", &to, &tlen, "replace_all", &all) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_resolve(fe, path, plen, true, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old_copy(fe, ctx, out, abs, &old, &old_len, &mode, &existed, &buf,
                    &rc) != 0)
        return rc;
    len = old_len;
    if (fe_edit_buf(&buf, &len, existed, from, flen, to, tlen, all != 0,
                    fe->max_bytes, &first, msg, sizeof(msg)) != 0) {
        free(old);
        free(buf);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    }
    if (fe_apply(fe, t, ctx, out, abs, existed, old, old_len, mode, buf, len,
                 &rc) != 0) {
        free(old);
        free(buf);
        return rc;
    }
    if (all) {
        if (asprintf(&text,
                     "The file %s has been updated. All occurrences of "
                     "'%s' were successfully replaced with '%s'.",
                     abs, from, to) < 0)
            text = NULL;
    } else {
        /* Claude Code's snippet: from FILEEDIT_SNIPPET_LINES lines above
         * the replacement to as many below its new text */
        line = old != NULL ? fe_newlines(old, first) : 0;
        text = fe_snippet(abs, buf, len,
                          line > FILEEDIT_SNIPPET_LINES
                              ? line - FILEEDIT_SNIPPET_LINES
                              : 0,
                          line + fe_newlines(to, tlen) + 1 +
                              FILEEDIT_SNIPPET_LINES);
    }
    free(old);
    free(buf);
    return fe_answer(ctx, out, text,
                     json_pack("{s:s, s:s%, s:s%, s:b, s:b}", "filePath", abs,
                               "oldString", from, flen, "newString", to, tlen,
                               "userModified", 0, "replaceAll", all));
}

/* The first 50 characters of s[len], and "..." when there were more. */
static void
fe_put50(FILE *f, const char *s, size_t len)
{
    size_t n = fe_chars(s, len, 50);

    fwrite(s, 1, n, f);
    if (n < len)
        fputs("...", f);
}

static int
fe_tool_multiedit(struct fileedit *fe, struct fe_txn *t,
                  const struct gemini_agent_ctx *ctx, json_t *a,
                  struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path;
    size_t plen, old_len, len, first, n, i;
    json_error_t jerr;
    const char *f1, *f2;
    json_t *edits, *e;
    char *old = NULL, *buf = NULL;
    unsigned mode;
    bool existed, exists;
    struct fe_text txt;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:o}", "file_path",
                       &path, &plen, "edits", &edits) != 0)
        return fe_bad_args(ctx, out, &jerr);
    n = json_array_size(edits);
    if (!json_is_array(edits) || n == 0 || n > BOUND_FILEEDIT_EDITS)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "edits must be a list of 1 to %d edits",
                           BOUND_FILEEDIT_EDITS);
    json_array_foreach(edits, i, e) {
        if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s:s, s:s, s?b}",
                           "old_string", &f1, "new_string", &f2,
                           "replace_all", &rc) != 0)
            return fe_bad_args(ctx, out, &jerr);
    }
    if (fe_resolve(fe, path, plen, true, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old_copy(fe, ctx, out, abs, &old, &old_len, &mode, &existed, &buf,
                    &rc) != 0)
        return rc;
    len = old_len;
    exists = existed;
    /* in order, each on the result of the ones before; all or nothing */
    json_array_foreach(edits, i, e) {
        const char *from, *to;
        size_t flen, tlen;
        int all = 0;
        (void)json_unpack(e, "{s:s%, s:s%, s?b}", "old_string", &from, &flen,
                          "new_string", &to, &tlen, "replace_all", &all);
        if (fe_edit_buf(&buf, &len, exists, from, flen, to, tlen, all != 0,
                        fe->max_bytes, &first, msg, sizeof(msg)) != 0) {
            free(old);
            free(buf);
            return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
        }
        exists = true;
    }
    if (fe_apply(fe, t, ctx, out, abs, existed, old, old_len, mode, buf, len,
                 &rc) != 0) {
        free(old);
        free(buf);
        return rc;
    }
    free(old);
    free(buf);
    if (fe_text_open(&txt) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    fprintf(txt.f, "Applied %zu edit%s to %s:\n", n, n == 1 ? "" : "s", abs);
    json_array_foreach(edits, i, e) {
        const json_t *f = json_object_get(e, "old_string"),
                     *g = json_object_get(e, "new_string");
        if (i > 0)
            fputc('\n', txt.f);
        fprintf(txt.f, "%zu. Replaced \"", i + 1);
        fe_put50(txt.f, json_string_value(f), json_string_length(f));
        fputs("\" with \"", txt.f);
        fe_put50(txt.f, json_string_value(g), json_string_length(g));
        fputc('"', txt.f);
    }
    return fe_answer(ctx, out, fe_text_close(&txt),
                     json_pack("{s:s, s:O, s:b}", "filePath", abs, "edits",
                               edits, "userModified", 0));
}

/* --- walking a folder tree ---------------------------------------------- */

/* What a walk sees of one entry: return FE_GO (and into a folder),
 * FE_SKIP (not into it) or FE_STOP. */
enum { FE_GO, FE_SKIP, FE_STOP };

struct fe_walk {
    const struct fileedit *fe;
    size_t seen; /* entries looked at, up to BOUND_FILEEDIT_WALK_ENTRIES */
    bool cut;    /* a bound stopped it */
    void *u;
    int (*entry)(struct fe_walk *w, const char *abs, const char *rel,
                 const char *name, const struct stat *st, int depth);
};

static int
fe_walk_dir(struct fe_walk *w, char *path, size_t plen, size_t base,
            int depth)
{
    struct dirent **names = NULL;
    int n = scandir(path, &names, NULL, alphasort), rc = FE_GO;

    if (n < 0)
        return FE_GO; /* unreadable: what can be read still counts */
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        struct stat st;
        int r;
        if (rc == FE_STOP || strcmp(name, ".") == 0 ||
            strcmp(name, "..") == 0)
            continue;
        if (w->seen++ >= BOUND_FILEEDIT_WALK_ENTRIES) {
            w->cut = true;
            rc = FE_STOP;
            continue;
        }
        if (plen + 1 + len >= PATH_MAX)
            continue;
        path[plen] = '/';
        memcpy(path + plen + 1, name, len + 1);
        /* lstat: a symbolic link is neither walked into nor read, so a
         * walk never leaves the folder it started in */
        if (lstat(path, &st) != 0 || (strcmp(name, ".git") == 0) ||
            fe_inside(w->fe->backups, path)) {
            path[plen] = '\0';
            continue;
        }
        r = w->entry(w, path, path + base, name, &st, depth);
        if (r == FE_STOP)
            rc = FE_STOP;
        else if (r == FE_GO && S_ISDIR(st.st_mode)) {
            if (depth + 1 >= BOUND_FILEEDIT_WALK_DEPTH)
                w->cut = true;
            else if (fe_walk_dir(w, path, plen + 1 + len, base, depth + 1) ==
                     FE_STOP)
                rc = FE_STOP;
        }
        path[plen] = '\0';
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* Walk the folder `dir` (canonical): entry() sees every entry below it,
 * by name order, with its path relative to dir. */
static void
fe_walk(struct fe_walk *w, const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);

    memcpy(path, dir, n + 1);
    if (n == 1) /* "/" */
        n = 0;
    fe_walk_dir(w, path, n, n + 1, 0);
}

/*
 * fnmatch() with one more thing glob patterns of Claude Code's tools
 * use: braces, "*.{c,h}". No FNM_PERIOD: dot files match too.
 */
static bool
fe_fnmatch(const char *pat, const char *name)
{
    const char *open = strchr(pat, '{'), *close, *alt;
    char buf[PATH_MAX];

    if (open == NULL || (close = strchr(open, '}')) == NULL)
        return fnmatch(pat, name, 0) == 0;
    for (alt = open + 1; alt <= close;) {
        size_t alen = strcspn(alt, ",}");
        if (alt + alen > close)
            alen = (size_t)(close - alt);
        if (snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)(open - pat), pat,
                     (int)alen, alt, close + 1) < (int)sizeof(buf) &&
            fe_fnmatch(buf, name))
            return true;
        alt += alen + 1;
    }
    return false;
}

/* Does the path `rel` (segments split at '/') match the pattern whose
 * segments are pat[np]; "**" is any number of folders. */
static bool
fe_match_segs(char **pat, size_t np, const char *rel)
{
    char seg[NAME_MAX + 1];
    size_t len;

    if (np == 0)
        return *rel == '\0';
    if (strcmp(pat[0], "**") == 0) {
        for (;;) {
            if (fe_match_segs(pat + 1, np - 1, rel))
                return true;
            if (*rel == '\0')
                return false;
            rel += strcspn(rel, "/");
            rel += *rel == '/';
        }
    }
    if (*rel == '\0')
        return false;
    len = strcspn(rel, "/");
    if (len > NAME_MAX)
        return false;
    memcpy(seg, rel, len);
    seg[len] = '\0';
    return fe_fnmatch(pat[0], seg) &&
           fe_match_segs(pat + 1, np - 1, rel + len + (rel[len] == '/'));
}

/* A glob pattern split into segments (in `buf`, which it changes): their
 * number, or 0 for too many. */
static size_t
fe_split(char *buf, char **seg, size_t max)
{
    size_t n = 0;
    char *save = NULL;

    /* strtok_r: tools run in several threads at once */
    for (char *s = strtok_r(buf, "/", &save); s != NULL;
         s = strtok_r(NULL, "/", &save)) {
        if (n == max)
            return 0;
        seg[n++] = s;
    }
    return n;
}

/* Does `pattern` (split into seg[n]) match the file: its path `rel` when
 * the pattern has a '/', else its name (as rg's --glob). */
static bool
fe_glob_match(char **seg, size_t n, bool slash, const char *rel,
              const char *name)
{
    return slash ? fe_match_segs(seg, n, rel) : fe_fnmatch(seg[0], name);
}

/* A file a walk found. */
struct fe_hit {
    char *path;
    struct timespec mtime;
    size_t count;
};

struct fe_hits {
    struct fe_hit *v;
    size_t n;
    bool oom;
};

static void
fe_hits_add(struct fe_hits *h, const char *path, const struct stat *st,
            size_t count)
{
    struct fe_hit *q;
    char *p;

    if (h->oom)
        return;
    if ((p = strdup(path)) == NULL ||
        (q = realloc(h->v, (h->n + 1) * sizeof(*q))) == NULL) {
        free(p);
        h->oom = true;
        return;
    }
    h->v = q;
    h->v[h->n++] = (struct fe_hit){p, st->st_mtim, count};
}

static void
fe_hits_free(struct fe_hits *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].path);
    free(h->v);
}

/* Newest first (Claude Code sorts by modification time), then by name. */
static int
fe_hit_cmp(const void *x, const void *y)
{
    const struct fe_hit *a = x, *b = y;

    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->path, b->path);
}

/* Resolve a folder argument (default root) for Glob, Grep and LS into
 * abs; `file_ok`: a file will do too. 0, or -1 after answering. */
static int
fe_folder(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
          struct gemini_agent_out *out, const char *path, size_t plen,
          bool file_ok, char *abs, struct stat *st, int *rc)
{
    char msg[STATUS_TEXT_MAX];

    if (path == NULL) {
        path = fe->root;
        plen = strlen(path);
    }
    if (fe_resolve(fe, path, plen, false, abs, msg, sizeof(msg)) != 0) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
        return -1;
    }
    if (stat(abs, st) != 0) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          file_ok ? "Path does not exist: %.200s"
                                  : "Directory does not exist: %.200s",
                          path);
        return -1;
    }
    if (!file_ok && !S_ISDIR(st->st_mode)) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "Path is not a directory: %.200s", path);
        return -1;
    }
    return 0;
}

/* --- Glob --------------------------------------------------------------- */

struct fe_glob {
    char **seg;
    size_t n;
    struct fe_hits hits;
};

static int
fe_glob_entry(struct fe_walk *w, const char *abs, const char *rel,
              const char *name, const struct stat *st, int depth)
{
    struct fe_glob *g = w->u;

    (void)name;
    (void)depth;
    if (S_ISREG(st->st_mode) && fe_match_segs(g->seg, g->n, rel))
        fe_hits_add(&g->hits, abs, st, 0);
    return g->hits.oom ? FE_STOP : FE_GO;
}

static int
fe_tool_glob(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], pat[PATH_MAX], dir[PATH_MAX];
    char *seg[BOUND_FILEEDIT_WALK_DEPTH + 1];
    const char *pattern, *path = NULL;
    size_t plen = 0, patlen, shown = 0;
    long started = monotime_ms();
    struct fe_glob g = {seg, 0, {NULL, 0, false}};
    struct fe_walk w = {fe, 0, false, &g, fe_glob_entry};
    json_error_t jerr;
    struct fe_text txt;
    struct stat st;
    json_t *names;
    bool cut;
    int rc;

    (void)t;
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?s%}", "pattern",
                       &pattern, &patlen, "path", &path, &plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (patlen == 0 || patlen >= sizeof(pat))
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "pattern must be 1 to %d bytes", PATH_MAX - 1);
    /* an absolute pattern: its folders up to the first wildcard are the
     * path to search */
    if (pattern[0] == '/') {
        size_t wild = strcspn(pattern, "*?[{"), cutat = 0;
        for (size_t i = 0; i < wild; i++)
            if (pattern[i] == '/')
                cutat = i;
        memcpy(dir, pattern, cutat == 0 ? 1 : cutat);
        dir[cutat == 0 ? 1 : cutat] = '\0';
        path = dir;
        plen = strlen(dir);
        pattern += cutat + 1;
    }
    snprintf(pat, sizeof(pat), "%s", pattern);
    if (fe_folder(fe, ctx, out, path, plen, false, abs, &st, &rc) != 0)
        return rc;
    if ((g.n = fe_split(pat, seg, ARRAY_SIZE(seg))) == 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "pattern must have 1 to %d parts",
                           BOUND_FILEEDIT_WALK_DEPTH + 1);
    fe_walk(&w, abs);
    if (g.hits.oom || fe_text_open(&txt) != 0 ||
        (names = json_array()) == NULL) {
        fe_hits_free(&g.hits);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    if (g.hits.n > 0) /* qsort(NULL, 0) is undefined */
        qsort(g.hits.v, g.hits.n, sizeof(*g.hits.v), fe_hit_cmp);
    for (; shown < g.hits.n && shown < FILEEDIT_GLOB_FILES; shown++) {
        const char *p = g.hits.v[shown].path;
        if (txt.len + strlen(p) + 1 > BOUND_FILEEDIT_LIST_BYTES)
            break;
        fprintf(txt.f, "%s%s", shown > 0 ? "\n" : "", p);
        fflush(txt.f);
        json_array_append_new(names, json_string(p));
    }
    cut = shown < g.hits.n;
    if (shown == 0)
        fputs("No files found", txt.f);
    else if (cut)
        fputs("\n(Results are truncated. Consider using a more specific "
              "path or pattern.)",
              txt.f);
    fe_hits_free(&g.hits);
    return fe_answer(ctx, out, fe_text_close(&txt),
                     json_pack("{s:I, s:I, s:o, s:b}", "durationMs",
                               (json_int_t)(monotime_ms() - started),
                               "numFiles", (json_int_t)shown, "filenames",
                               names, "truncated", cut));
}

/* --- Grep --------------------------------------------------------------- */

enum fe_grep_mode { FE_CONTENT, FE_FILES, FE_COUNT };

struct fe_grep {
    const struct fileedit *fe;
    regex_t re;
    enum fe_grep_mode mode;
    char **seg; /* the glob filter, or n == 0 */
    size_t n;
    bool slash;
    bool single; /* one file asked for: no name before its lines */
    bool num;    /* -n */
    size_t before, after;
    size_t limit;  /* head_limit, 0: none */
    size_t lines;  /* output lines so far */
    size_t matches, files;
    bool limited, cut;
    struct fe_text txt;
    struct fe_hits hits;
};

/* One output line of content or count mode; false once a limit is
 * reached. */
static bool
fe_grep_line(struct fe_grep *g)
{
    fflush(g->txt.f);
    if (g->limit > 0 && g->lines >= g->limit) {
        g->limited = true;
        return false;
    }
    if (g->txt.len > BOUND_FILEEDIT_LIST_BYTES) {
        g->cut = true;
        return false;
    }
    if (g->lines++ > 0)
        fputc('\n', g->txt.f);
    return true;
}

/* Search the file `abs` (its data[len], NUL-terminated, changed). */
static void
fe_grep_data(struct fe_grep *g, const char *abs, char *data, size_t len,
             const struct stat *st)
{
    size_t nlines = 0, count = 0, last = 0;
    size_t *start;
    bool *hit, any_out = false;

    for (size_t i = 0; i < len; i++)
        nlines += data[i] == '\n';
    nlines += len > 0 && data[len - 1] != '\n';
    start = calloc(nlines + 1, sizeof(*start));
    hit = calloc(nlines + 1, sizeof(*hit));
    if (start == NULL || hit == NULL) {
        g->hits.oom = true;
        goto out;
    }
    for (size_t l = 0, i = 0; l < nlines; l++) {
        char *nl = memchr(data + i, '\n', len - i);
        start[l] = i;
        if (nl != NULL)
            *nl = '\0';
        hit[l] = regexec(&g->re, data + i, 0, NULL, 0) == 0;
        count += hit[l];
        i = nl != NULL ? (size_t)(nl - data) + 1 : len;
    }
    if (count == 0)
        goto out;
    g->matches += count;
    g->files++;
    if (g->mode == FE_FILES) {
        fe_hits_add(&g->hits, abs, st, count);
    } else if (g->mode == FE_COUNT) {
        if (fe_grep_line(g)) {
            if (!g->single)
                fprintf(g->txt.f, "%s:", abs);
            fprintf(g->txt.f, "%zu", count);
        }
    } else {
        /* rg's output: "path:n:line" for a match, "path-n-line" around
         * it, "--" between groups that do not touch */
        for (size_t l = 0; l < nlines; l++) {
            /* shown: a match at most `after` lines above, or `before`
             * lines below */
            size_t from = l > g->after ? l - g->after : 0;
            bool show = hit[l];
            for (size_t k = from; !show && k <= l + g->before && k < nlines;
                 k++)
                show = hit[k];
            if (!show)
                continue;
            if ((g->before > 0 || g->after > 0) && g->lines > 0 &&
                (!any_out || l > last + 1)) {
                if (!fe_grep_line(g))
                    break;
                fputs("--", g->txt.f);
            }
            if (!fe_grep_line(g))
                break;
            if (!g->single)
                fprintf(g->txt.f, "%s%c", abs, hit[l] ? ':' : '-');
            if (g->num)
                fprintf(g->txt.f, "%zu%c", l + 1, hit[l] ? ':' : '-');
            fputs(data + start[l], g->txt.f);
            any_out = true;
            last = l;
        }
    }
out:
    free(start);
    free(hit);
}

static void
fe_grep_file(struct fe_grep *g, const char *abs, const struct stat *st)
{
    char *data = NULL;
    size_t len;
    unsigned mode;

    /* too large or unreadable: skipped, as binary files are */
    if (fe_read(abs, g->fe->max_bytes, &data, &len, &mode) != 0)
        return;
    if (memchr(data, '\0', len) == NULL) {
        fe_sanitize(data, len);
        fe_grep_data(g, abs, data, len, st);
    }
    free(data);
}

static int
fe_grep_entry(struct fe_walk *w, const char *abs, const char *rel,
              const char *name, const struct stat *st, int depth)
{
    struct fe_grep *g = w->u;

    (void)depth;
    if (S_ISDIR(st->st_mode))
        return strcmp(name, "node_modules") == 0 ? FE_SKIP : FE_GO;
    if (!S_ISREG(st->st_mode) ||
        (g->n > 0 && !fe_glob_match(g->seg, g->n, g->slash, rel, name)))
        return FE_GO;
    fe_grep_file(g, abs, st);
    return g->hits.oom || g->limited || g->cut ? FE_STOP : FE_GO;
}

static int
fe_tool_grep(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], globbuf[PATH_MAX], err[256];
    char *seg[BOUND_FILEEDIT_WALK_DEPTH + 1];
    const char *pattern, *path = NULL, *glob = NULL, *mode = NULL;
    size_t plen = 0;
    json_int_t b = -1, af = -1, c = -1, ctxl = -1, head = FILEEDIT_GREP_HEAD;
    int num = 1, icase = 0, rc;
    struct fe_grep g;
    struct fe_walk w = {fe, 0, false, &g, fe_grep_entry};
    json_error_t jerr;
    struct stat st;
    json_t *res, *names;
    char *text;

    (void)t;
    memset(&g, 0, sizeof(g));
    if (json_unpack_ex(a, &jerr, JSON_STRICT,
                       "{s:s, s?s%, s?s, s?s, s?I, s?I, s?I, s?I, s?b, s?b, "
                       "s?I}",
                       "pattern", &pattern, "path", &path, &plen, "glob",
                       &glob, "output_mode", &mode, "-B", &b, "-A", &af, "-C",
                       &c, "context", &ctxl, "-n", &num, "-i", &icase,
                       "head_limit", &head) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (mode == NULL || strcmp(mode, "files_with_matches") == 0)
        g.mode = FE_FILES;
    else if (strcmp(mode, "content") == 0)
        g.mode = FE_CONTENT;
    else if (strcmp(mode, "count") == 0)
        g.mode = FE_COUNT;
    else
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "output_mode must be content, files_with_matches "
                           "or count");
    if (head < 0 || b > INT_MAX || af > INT_MAX || c > INT_MAX ||
        ctxl > INT_MAX)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "head_limit and the context lines must be >= 0");
    /* context (or -C) for both sides; -B and -A for one each */
    if (ctxl < 0)
        ctxl = c;
    g.before = (size_t)(b >= 0 ? b : ctxl > 0 ? ctxl : 0);
    g.after = (size_t)(af >= 0 ? af : ctxl > 0 ? ctxl : 0);
    g.num = num != 0;
    g.limit = (size_t)head;
    g.fe = fe;
    if (fe_folder(fe, ctx, out, path, plen, true, abs, &st, &rc) != 0)
        return rc;
    if (glob != NULL) {
        snprintf(globbuf, sizeof(globbuf), "%s", glob);
        g.slash = strchr(globbuf, '/') != NULL;
        g.seg = seg;
        if ((g.n = fe_split(globbuf, seg, ARRAY_SIZE(seg))) == 0)
            return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                               "glob must have 1 to %d parts",
                               BOUND_FILEEDIT_WALK_DEPTH + 1);
    }
    if ((rc = regcomp(&g.re, pattern,
                      REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0))) !=
        0) {
        regerror(rc, &g.re, err, sizeof(err));
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "Invalid regular expression: %s", err);
    }
    if (fe_text_open(&g.txt) != 0) {
        regfree(&g.re);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    if (S_ISDIR(st.st_mode)) {
        fe_walk(&w, abs);
    } else {
        g.single = true;
        fe_grep_file(&g, abs, &st);
    }
    regfree(&g.re);
    if (g.hits.oom || (names = json_array()) == NULL) {
        free(fe_text_close(&g.txt));
        fe_hits_free(&g.hits);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    if (g.mode == FE_FILES) {
        size_t shown = 0;
        if (g.hits.n > 0) /* qsort(NULL, 0) is undefined */
            qsort(g.hits.v, g.hits.n, sizeof(*g.hits.v), fe_hit_cmp);
        for (; shown < g.hits.n; shown++) {
            if (g.limit > 0 && shown == g.limit) {
                g.limited = true;
                break;
            }
            if (g.txt.len + strlen(g.hits.v[shown].path) >
                BOUND_FILEEDIT_LIST_BYTES) {
                g.cut = true;
                break;
            }
            fprintf(g.txt.f, "\n%s", g.hits.v[shown].path);
            fflush(g.txt.f);
            json_array_append_new(names, json_string(g.hits.v[shown].path));
        }
        text = fe_text_close(&g.txt);
        if (text != NULL) {
            char *all = NULL;
            if (shown == 0)
                all = strdup("No files found");
            else if (asprintf(&all, "Found %zu file%s%s", shown,
                              shown == 1 ? "" : "s", text) < 0)
                all = NULL;
            free(text);
            text = all;
        }
        res = json_pack("{s:s, s:I, s:o}", "mode", "files_with_matches",
                        "numFiles", (json_int_t)shown, "filenames", names);
    } else {
        size_t lines = g.lines;
        text = fe_text_close(&g.txt);
        if (text != NULL && lines == 0) {
            free(text);
            text = strdup(g.mode == FE_COUNT && g.files > 0 ? ""
                                                            : "No matches found");
        }
        res = json_pack("{s:s, s:I, s:o}", "mode",
                        g.mode == FE_COUNT ? "count" : "content", "numFiles",
                        (json_int_t)g.files, "filenames", names);
        if (res != NULL && g.mode == FE_CONTENT)
            json_object_set_new(res, "numLines", json_integer((json_int_t)lines));
        if (res != NULL && g.mode == FE_COUNT)
            json_object_set_new(res, "numMatches",
                                json_integer((json_int_t)g.matches));
        if (res != NULL && text != NULL && g.mode == FE_CONTENT) {
            fe_sanitize(text, strlen(text));
            json_object_set_new(res, "content", json_string(text));
        }
        if (text != NULL && g.mode == FE_COUNT && g.files > 0) {
            char *all = NULL;
            if (asprintf(&all,
                         "%s\n\nFound %zu total %s across %zu %s.", text,
                         g.matches, g.matches == 1 ? "occurrence"
                                                   : "occurrences",
                         g.files, g.files == 1 ? "file" : "files") < 0)
                all = NULL;
            free(text);
            text = all;
        }
    }
    if (res != NULL && g.limited)
        json_object_set_new(res, "appliedLimit",
                            json_integer((json_int_t)g.limit));
    if (res != NULL && (g.cut || w.cut))
        json_object_set_new(res, "truncated", json_true());
    if (text != NULL && g.limited) {
        char *all = NULL;
        if (asprintf(&all, "%s\n\n[Showing results with pagination = limit: "
                           "%zu]",
                     text, g.limit) < 0)
            all = NULL;
        free(text);
        text = all;
    }
    fe_hits_free(&g.hits);
    return fe_answer(ctx, out, text, res);
}

/* --- LS ----------------------------------------------------------------- */

struct fe_ls {
    json_t *ignore;
    struct fe_text txt;
    size_t entries;
    bool cut;
};

static int
fe_ls_entry(struct fe_walk *w, const char *abs, const char *rel,
            const char *name, const struct stat *st, int depth)
{
    struct fe_ls *l = w->u;
    size_t i;
    json_t *v;

    (void)abs;
    /* Claude Code's LS leaves out hidden entries and __pycache__ */
    if (name[0] == '.' || strcmp(name, "__pycache__") == 0)
        return FE_SKIP;
    json_array_foreach(l->ignore, i, v) {
        const char *p = json_string_value(v);
        if (p != NULL && (fe_fnmatch(p, name) || fe_fnmatch(p, rel)))
            return FE_SKIP;
    }
    fflush(l->txt.f);
    if (l->entries++ >= FILEEDIT_LS_ENTRIES ||
        l->txt.len > FILEEDIT_LS_CHARS) {
        l->cut = true;
        return FE_STOP;
    }
    fprintf(l->txt.f, "%*s- %s%s\n", 2 * (depth + 1), "", name,
            S_ISDIR(st->st_mode) ? "/" : "");
    return FE_GO;
}

static int
fe_tool_ls(struct fileedit *fe, struct fe_txn *t,
           const struct gemini_agent_ctx *ctx, json_t *a,
           struct gemini_agent_out *out)
{
    char abs[PATH_MAX];
    const char *path;
    size_t plen, keep;
    json_t *ignore = NULL;
    struct fe_ls l = {NULL, {NULL, NULL, 0}, 0, false};
    struct fe_walk w = {fe, 0, false, &l, fe_ls_entry};
    json_error_t jerr;
    struct fe_text txt;
    struct stat st;
    char *tree;
    int rc;

    (void)t;
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?o}", "path", &path,
                       &plen, "ignore", &ignore) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (ignore != NULL && !json_is_array(ignore))
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "ignore must be a list of glob patterns");
    l.ignore = ignore;
    if (fe_folder(fe, ctx, out, path, plen, false, abs, &st, &rc) != 0)
        return rc;
    if (fe_text_open(&l.txt) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    fprintf(l.txt.f, "- %s%s\n", abs, strcmp(abs, "/") == 0 ? "" : "/");
    fe_walk(&w, abs);
    if ((tree = fe_text_close(&l.txt)) == NULL || fe_text_open(&txt) != 0) {
        free(tree);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    keep = strlen(tree);
    if (l.cut || w.cut) {
        fprintf(txt.f,
                "There are more than %d characters in the repository (ie. "
                "either there are lots of files, or there are many long "
                "filenames). Use the LS tool (passing a specific path), "
                "Bash tool, and other tools to explore nested directories. "
                "The first %d characters are included below:\n\n",
                FILEEDIT_LS_CHARS, FILEEDIT_LS_CHARS);
        keep = fe_chars(tree, keep, FILEEDIT_LS_CHARS);
    }
    fwrite(tree, 1, keep, txt.f);
    fputs(fe_ls_note, txt.f);
    free(tree);
    return fe_answer(ctx, out, fe_text_close(&txt), json_object());
}

/* --- Undo --------------------------------------------------------------- */

static int
fe_tool_undo(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], eabs[PATH_MAX], backup[PATH_MAX],
        msg[STATUS_TEXT_MAX];
    const char *path = NULL;
    size_t plen = 0, i, len = 0;
    json_error_t jerr;
    struct fe_entry *e;
    char *data = NULL, *text = NULL;
    unsigned mode;
    json_t *res;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s?s%}", "file_path", &path,
                       &plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (path != NULL &&
        fe_resolve(fe, path, plen, true, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    for (i = t->n; i > 0; i--) {
        /* the journal's path goes through the sandbox again: what lies
         * on the way may have changed since */
        if (fe_resolve(fe, t->e[i - 1].rel, strlen(t->e[i - 1].rel), true,
                       eabs, msg, sizeof(msg)) != 0) {
            if (path == NULL)
                return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s",
                                   msg);
            continue;
        }
        if (path == NULL || strcmp(eabs, abs) == 0)
            break;
    }
    if (i == 0) {
        if (path != NULL)
            return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                               "There is no change of %.200s to undo.", path);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "There is no change to undo.");
    }
    e = &t->e[i - 1];
    fe_backup_name(backup, fe, e->id);
    if (e->existed) {
        if (backup[0] == '\0' ||
            fe_read(backup, BOUND_FILEEDIT_FILE_BYTES, &data, &len, &mode) !=
                0 ||
            fe_mkdirs(eabs, false) != 0 ||
            fe_write_atomic(eabs, data, len, e->mode) != 0) {
            int err = errno;
            free(data);
            return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                               "cannot restore %s: %s", eabs,
                               fe_errno_text(err));
        }
        free(data);
    } else if (unlink(eabs) != 0 && errno != ENOENT) {
        int err = errno;
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

/* --- the plugin's operations --------------------------------------------- */

/* Claude Code's names and input fields (cli.md 3.2); the descriptions
 * are shorter than its own. */
static const char fe_declarations[] =
    "[{\"name\":\"Read\",\"description\":\"Reads a file from the local "
    "filesystem. file_path must be an absolute path. By default it reads up "
    "to 2000 lines from the start; offset (the line number to start from) "
    "and limit (the number of lines) read a part. Lines longer than 2000 "
    "characters are truncated. Results come numbered like cat -n, from 1.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the file "
    "to read\"},\"offset\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"The line number to start reading from\"},\"limit\":"
    "{\"type\":\"integer\",\"minimum\":1,\"description\":\"The number of "
    "lines to read\"}},\"required\":[\"file_path\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Write\",\"description\":\"Writes a file to the local "
    "filesystem, replacing it if it exists (missing folders are created). "
    "file_path must be absolute. Prefer Edit for changes to an existing "
    "file.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"The absolute path "
    "to the file to write (must be absolute, not relative)\"},\"content\":"
    "{\"type\":\"string\",\"description\":\"The content to write to the "
    "file\"}},\"required\":[\"file_path\",\"content\"],"
    "\"additionalProperties\":false},\"sideEffects\":true},"
    "{\"name\":\"Edit\",\"description\":\"Performs exact string replacements "
    "in files. old_string must occur exactly once (whitespace included) "
    "unless replace_all is true; an empty old_string creates a new file.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the file "
    "to modify\"},\"old_string\":{\"type\":\"string\",\"description\":"
    "\"The text to replace\"},\"new_string\":{\"type\":\"string\","
    "\"description\":\"The text to replace it with (must be different from "
    "old_string)\"},\"replace_all\":{\"type\":\"boolean\",\"description\":"
    "\"Replace all occurrences of old_string (default false)\"}},"
    "\"required\":[\"file_path\",\"old_string\",\"new_string\"],"
    "\"additionalProperties\":false},\"sideEffects\":true},"
    "{\"name\":\"MultiEdit\",\"description\":\"Makes several Edit "
    "replacements in one file, in order, each on the result of the ones "
    "before; all of them or none are applied.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"file_path\":{\"type\":\"string\","
    "\"description\":\"The absolute path to the file to modify\"},"
    "\"edits\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":100,"
    "\"items\":{\"type\":\"object\",\"properties\":{\"old_string\":"
    "{\"type\":\"string\"},\"new_string\":{\"type\":\"string\"},"
    "\"replace_all\":{\"type\":\"boolean\"}},\"required\":[\"old_string\","
    "\"new_string\"],\"additionalProperties\":false}}},\"required\":"
    "[\"file_path\",\"edits\"],\"additionalProperties\":false},"
    "\"sideEffects\":true},"
    "{\"name\":\"Glob\",\"description\":\"Fast file pattern matching (\\\"**"
    "/*.js\\\", \\\"src/**/*.{c,h}\\\"). Returns matching file paths, most "
    "recently modified first, at most 100.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"pattern\":{\"type\":\"string\","
    "\"description\":\"The glob pattern to match files against\"},\"path\":"
    "{\"type\":\"string\",\"description\":\"The directory to search in. "
    "Omit this field to use the default directory.\"}},\"required\":"
    "[\"pattern\"],\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Grep\",\"description\":\"Searches file contents with a "
    "POSIX extended regular expression. Filter files with glob; "
    "output_mode content shows matching lines (-n, -A, -B, -C), "
    "files_with_matches (the default) the files, count the matches per "
    "file. head_limit (default 250, 0 for all) cuts the output.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":"
    "{\"type\":\"string\",\"description\":\"The regular expression pattern "
    "to search for in file contents\"},\"path\":{\"type\":\"string\","
    "\"description\":\"File or directory to search in. Defaults to the "
    "current working directory.\"},\"glob\":{\"type\":\"string\","
    "\"description\":\"Glob pattern to filter files (e.g. \\\"*.js\\\", "
    "\\\"*.{ts,tsx}\\\")\"},\"output_mode\":{\"type\":\"string\",\"enum\":"
    "[\"content\",\"files_with_matches\",\"count\"]},\"-B\":{\"type\":"
    "\"integer\",\"minimum\":0},\"-A\":{\"type\":\"integer\",\"minimum\":0},"
    "\"-C\":{\"type\":\"integer\",\"minimum\":0},\"context\":{\"type\":"
    "\"integer\",\"minimum\":0},\"-n\":{\"type\":\"boolean\","
    "\"description\":\"Show line numbers (content mode; default true)\"},"
    "\"-i\":{\"type\":\"boolean\",\"description\":\"Case insensitive "
    "search\"},\"head_limit\":{\"type\":\"integer\",\"minimum\":0}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false},"
    "\"sideEffects\":false},"
    "{\"name\":\"LS\",\"description\":\"Lists files and directories in a "
    "given path (absolute) as a tree; ignore takes glob patterns to leave "
    "out.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the "
    "directory to list\"},\"ignore\":{\"type\":\"array\",\"maxItems\":100,"
    "\"items\":{\"type\":\"string\"}}},\"required\":[\"path\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Undo\",\"description\":\"Undo the last change Write, Edit "
    "or MultiEdit made to file_path, or the last change of all without it "
    "(a file they created is removed). Repeat to go further back.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\"}},\"additionalProperties\":false},"
    "\"sideEffects\":true}]";
#if BOUND_FILEEDIT_EDITS != 100
#error "fe_declarations' edits maxItems is not BOUND_FILEEDIT_EDITS"
#endif

static const char *
fe_decls(void *self)
{
    (void)self;
    return fe_declarations;
}

static const char *
fe_auto(void *self)
{
    (void)self;
    return "[\"Read\",\"Glob\",\"Grep\",\"LS\"]";
}

static const char *
fe_instructions(void *self)
{
    (void)self;
    return "The file tools (Read, Write, Edit, MultiEdit, Glob, Grep, LS) "
           "work on the files of the user's working directory and the "
           "folders added to it; give absolute paths. Read a file before "
           "you edit it, and give Edit an old_string that occurs exactly "
           "once. Every change can be undone with Undo.";
}

/* maxFileBytes' maximum is BOUND_FILEEDIT_FILE_BYTES (checked below). */
static const char *
fe_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{"
           "\"root\":{\"type\":\"string\",\"minLength\":1},"
           "\"addDirs\":{\"type\":\"array\",\"maxItems\":32,\"items\":"
           "{\"type\":\"string\",\"minLength\":1}},"
           "\"backupDir\":{\"type\":\"string\",\"minLength\":1},"
           "\"maxFileBytes\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":16777216}},\"additionalProperties\":false}";
}
#if BOUND_FILEEDIT_FILE_BYTES != 16777216 || BOUND_FILEEDIT_ADD_DIRS != 32
#error "fe_schema() must state BOUND_FILEEDIT_FILE_BYTES and _ADD_DIRS"
#endif

static void
fe_free(struct fileedit *fe)
{
    if (fe == NULL)
        return;
    free(fe->root);
    for (size_t i = 0; i < fe->ndirs; i++)
        free(fe->dirs[i]);
    free(fe->dirs);
    free(fe->backups);
    pthread_mutex_destroy(&fe->lock);
    free(fe);
}

/* The addDirs folders, canonical, into fe->dirs. 0, or -1 with err. */
static int
fe_add_dirs(struct fileedit *fe, const json_t *dirs, const char *base,
            char *err, size_t errsize)
{
    char buf[PATH_MAX];
    struct stat st;
    size_t i;
    json_t *v;

    if (dirs == NULL)
        return 0;
    if (!json_is_array(dirs) ||
        json_array_size(dirs) > BOUND_FILEEDIT_ADD_DIRS) {
        snprintf(err, errsize, "addDirs must be a list of at most %d folders",
                 BOUND_FILEEDIT_ADD_DIRS);
        return -1;
    }
    if ((fe->dirs = calloc(json_array_size(dirs) + 1, sizeof(char *))) ==
        NULL)
        goto oom;
    json_array_foreach(dirs, i, v) {
        const char *d = json_string_value(v);
        char *p;
        if (d == NULL || d[0] == '\0') {
            snprintf(err, errsize, "addDirs: each entry must be a folder");
            return -1;
        }
        if ((p = fe_join(base, d)) == NULL)
            goto oom;
        if (realpath(p, buf) == NULL || stat(buf, &st) != 0 ||
            !S_ISDIR(st.st_mode)) {
            snprintf(err, errsize, "addDirs: '%.200s' is not a folder", p);
            free(p);
            return -1;
        }
        free(p);
        if ((fe->dirs[fe->ndirs] = strdup(buf)) == NULL)
            goto oom;
        fe->ndirs++;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
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
    json_t *c, *dirs = NULL;

    c = json_loadb(init->config, init->config_len, JSON_REJECT_DUPLICATES,
                   &jerr);
    if (c == NULL || json_unpack_ex(c, &jerr, JSON_STRICT,
                                    "{s?s, s?o, s?s, s?I}", "root", &root,
                                    "addDirs", &dirs, "backupDir", &backups,
                                    "maxFileBytes", &max) != 0) {
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
    if (fe_add_dirs(fe, dirs, base, err, errsize) != 0)
        goto fail;
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
        {"Read", false, fe_tool_read},
        {"Write", true, fe_tool_write},
        {"Edit", true, fe_tool_edit},
        {"MultiEdit", true, fe_tool_multiedit},
        {"Glob", false, fe_tool_glob},
        {"Grep", false, fe_tool_grep},
        {"LS", false, fe_tool_ls},
        {"Undo", true, fe_tool_undo},
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
    .auto_approved_tools = fe_auto,
    .config_schema = fe_schema,
    .flags = GEMINI_AGENT_TERMINAL_ONLY,
};

const struct gemini_agent_plugin *
builtin_file_edit(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &fe_plugin : NULL;
}
