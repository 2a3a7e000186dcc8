/*
 * common.c - what more than one command needs: loading the
 * configuration for a person at a terminal, and writing generated files.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/commands.h"
#include "core/bounds.h"
#include "core/diag.h"
#include "http/site.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write `len` bytes to `path` through a temporary file and rename. */
int
cmd_write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    char tmp[4096];
    int fd;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int
cmd_make_dirs(const char *dir, mode_t mode)
{
    char path[BOUND_PATH_LEN];
    size_t len = strlen(dir);
    struct stat st;

    if (len >= sizeof(path)) {
        fprintf(stderr, "error: the folder name '%s' is too long\n", dir);
        return -1;
    }
    memcpy(path, dir, len + 1);
    /* Each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, mode) == 0) {
            /* made, with `mode` less the umask */
        } else if (errno != EEXIST) {
            goto fail;
        } else if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            goto fail;
        }
        path[i] = dir[i];
    }
    return 0;
fail:
    fprintf(stderr, "error: cannot create folder '%s': %s\n", path,
            strerror(errno));
    return -1;
}

/* Load the site for a command; prints problems. NULL when fatal. */
struct site *
cmd_load_site(const char *path, bool quiet_ok)
{
    struct diag d = DIAG_INIT;
    struct site *site = site_load(path, &d);

    if (!quiet_ok || site == NULL)
        diag_print(&d, stderr, "");
    diag_release(&d);
    if (site == NULL)
        fprintf(stderr, "error: the configuration in '%s' cannot be used\n",
                path);
    return site;
}
