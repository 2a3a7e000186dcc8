/*
 * fileedit_fs.c - file_edit's paths and files: a tool's path resolved and
 * checked against root, the addDirs and the backup folder (the sandbox
 * fileedit.c describes), and a whole file read, or replaced atomically.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *
fe_join(const char *base, const char *p)
{
    char *s = NULL;

    if (p[0] == '/')
        return strdup(p);
    if (asprintf(&s, "%s/%s", base, p) < 0)
        return NULL;
    return s;
}

/* realpath() of the longest existing prefix of the absolute path in buf
 * (cut to that prefix) into out[PATH_MAX]. 0, or -1 with *why set. */
static int
fe_real_prefix(char *buf, char *out, const char **why)
{
    for (;;) {
        char *slash;
        if (realpath(buf, out) != NULL)
            return 0;
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
}

int
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
    if (fe_real_prefix(buf, out, why) != 0)
        return -1;
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

bool
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

int
fe_resolve(const struct fileedit *fe, const char *path, size_t len, bool write,
           char *abs, char *msg, size_t size)
{
    const char *why = NULL;
    char *full;

    if (len == 0 || strlen(path) != len) {
        snprintf(msg, size,
                 "The path must be a non-empty string without "
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

int
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

int
fe_read(const char *abs, size_t max, char **data, size_t *len, unsigned *mode)
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

int
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

const char *
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
