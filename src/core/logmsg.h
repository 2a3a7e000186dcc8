/*
 * logmsg.h - one-line diagnostics to stderr (nginx records them in its
 * error_log as "FastCGI sent in stderr").
 *
 * Each line: `gemini-agent[PID]: LEVEL: message`. Callers must never pass
 * the API key or a request body; messages name files, routes and statuses.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_LOGMSG_H
#define APP_LOGMSG_H

#include "core/common.h"

enum logmsg_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Lines below this level are dropped (set once at start-up, from env
 * GEMINI_AGENT_LOG=debug|info|warn|error; default info). */
void logmsg_set_level(enum logmsg_level lvl);

void logmsg(enum logmsg_level lvl, const char *fmt, ...) ATTR_FMT(2, 3);

/* Would a line at `lvl` be written? For work done only to be logged. */
bool logmsg_enabled(enum logmsg_level lvl);

#define log_err(...)   logmsg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  logmsg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  logmsg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) logmsg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* APP_LOGMSG_H */
