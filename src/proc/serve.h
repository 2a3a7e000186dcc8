/*
 * serve.h - `gemini-agent serve`: the master process (see serve.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SERVE_H
#define APP_SERVE_H

#include "core/common.h"

struct serve_opts {
    const char *config_path;
    const char *socket_path; /* unix socket, or NULL */
    const char *listen;      /* "HOST:PORT", or NULL */
    /* Neither: accept on descriptor 0, a socket the web server opened and
     * listens on (FastCGI's FCGI_LISTENSOCK_FILENO; mod_fcgid starts the
     * program so). */
    bool listen_stdin;
    const char *pid_file; /* or NULL */
    int workers;
    int threads; /* request threads per worker */
    int queue;   /* requests that may wait for a thread, per worker */
};

/*
 * Bind, start the workers and supervise them until SIGTERM/SIGINT.
 * The pid file (if any) holds the master's PID on line 1 and
 * "workers: PID PID ..." on line 2, rewritten atomically whenever the set
 * changes; the same "workers:" line is logged to stderr.
 * Returns the exit code.
 */
int serve_run(const struct serve_opts *opts);

#endif /* APP_SERVE_H */
