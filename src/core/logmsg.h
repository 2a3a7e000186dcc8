/*
 * logmsg.h - one-line diagnostics, and one access line per request.
 *
 * By default lines go to stderr (nginx records them in its error_log as
 * "FastCGI sent in stderr", Apache in its ErrorLog); agent.yaml's
 * `log.file` sends them to a file of their own, which SIGUSR1 reopens
 * (docs/logging.md). Each line is one write(2), so lines from several
 * threads and workers never interleave, and starts with the time in UTC:
 *
 *   text: `2026-11-29T08:01:02.345Z gemini-agent[PID]: LEVEL: message`
 *   json: {"time":"2026-11-29T08:01:02.345Z","level":"info","pid":PID,
 *          "msg":"message"}
 *
 * Callers must never pass the API key, a token, a cookie or a request
 * body; messages name files, routes and statuses.
 *
 * The settings are process-wide: set once at start-up (serve's master
 * sets them again on a reload, before it forks the new workers), read by
 * every thread afterwards.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_LOGMSG_H
#define APP_LOGMSG_H

#include "core/common.h"

#include <time.h>

enum logmsg_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

enum logmsg_format { LOG_FMT_TEXT, LOG_FMT_JSON };

/* Lines below this level are dropped (set once at start-up, from env
 * GEMINI_AGENT_LOG=debug|info|warn|error; default info). */
void logmsg_set_level(enum logmsg_level lvl);

void logmsg(enum logmsg_level lvl, const char *fmt, ...) ATTR_FMT(2, 3);

/* Would a line at `lvl` be written? For work done only to be logged. */
bool logmsg_enabled(enum logmsg_level lvl);

/*
 * Where lines go and how they look: `path` NULL is stderr; else the file
 * is opened for appending (created 0640). 0; or -1 with errno, and the
 * output is left as it was. A file already open is replaced in place (its
 * descriptor number stays), so a thread writing meanwhile writes whole
 * lines to the old file or the new.
 */
int logmsg_set_output(enum logmsg_format fmt, const char *path);

/* Open the log file again by its name (after logrotate moved it): 0,
 * also when lines go to stderr; or -1 with errno (the old file stays). */
int logmsg_reopen(void);

/* One request, as its access line says it (an `info` line). Strings are
 * borrowed; `id`, `method` and `route` hold no space or control byte. */
struct logmsg_access {
    const char *id; /* the request id (X-Request-Id) */
    const char *method;
    const char *route; /* the route's pattern, or the path: no query */
    int status;        /* 0: the client left before the answer */
    long ms;           /* from the head read to the last byte written */
    int gemini_calls;  /* HTTP attempts that reached Gemini */
    long tokens_in;    /* prompt tokens (with the tool-use prompt) */
    long tokens_out;   /* candidates + thoughts tokens */
};

/* Write `a`'s access line (nothing when info lines are dropped). */
void logmsg_access(const struct logmsg_access *a);

/*
 * Render one line into buf[0..size) as logmsg() would at time `now`
 * (CLOCK_REALTIME) for process `pid`: the message `msg` (NULL with `a`:
 * the access line), with its newline. The length written; the line is cut
 * to fit, inside the message and never in a JSON escape: a JSON line stays
 * one valid object. `size` below LOGMSG_RENDER_MIN: nothing (0). For the
 * unit tests and logmsg() itself.
 */
#define LOGMSG_RENDER_MIN 128
size_t logmsg_render(char *buf, size_t size, enum logmsg_format fmt,
                     enum logmsg_level lvl, const struct timespec *now,
                     long pid, const char *msg, const struct logmsg_access *a);

#define log_err(...)   logmsg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  logmsg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  logmsg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) logmsg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* APP_LOGMSG_H */
