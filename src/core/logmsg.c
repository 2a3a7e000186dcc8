/*
 * logmsg.c - stderr diagnostics, one write(2) per line so lines from
 * several workers sharing stderr never interleave.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/logmsg.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Set once in main() before any worker starts; read-only afterwards. */
static enum logmsg_level logmsg_threshold = LOG_LVL_INFO;

void
logmsg_set_level(enum logmsg_level lvl)
{
    logmsg_threshold = lvl;
}

bool
logmsg_enabled(enum logmsg_level lvl)
{
    return lvl <= logmsg_threshold;
}

void
logmsg(enum logmsg_level lvl, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char line[1024];
    va_list ap;
    int n, m;

    if (lvl > logmsg_threshold)
        return;
    n = snprintf(line, sizeof(line), "gemini-agent[%ld]: %s: ", (long)getpid(),
                 names[lvl]);
    if (n < 0)
        return;
    va_start(ap, fmt);
    m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    n += m;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing sensible to do: stderr is gone */
    }
}
