/*
 * unit_proc.c - the processes a suite left running (unit_proc.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "unit_proc.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The parent of process `name` (a /proc entry), or -1. */
static long
parent_of(const char *name)
{
    char path[320], buf[512], *rp;
    FILE *f;
    long ppid;

    snprintf(path, sizeof(path), "/proc/%s/stat", name);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    buf[0] = '\0';
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    /* pid (comm) state ppid: comm may hold spaces, so from its ')' */
    if ((rp = strrchr(buf, ')')) == NULL ||
        sscanf(rp + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

size_t
unit_children(pid_t *pids, size_t max)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    size_t n = 0;

    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
            parent_of(de->d_name) != (long)getpid())
            continue;
        if (n < max)
            pids[n] = (pid_t)strtol(de->d_name, NULL, 10);
        n++;
    }
    closedir(d);
    return n;
}
