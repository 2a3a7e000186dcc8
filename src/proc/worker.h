/*
 * worker.h - serve requests: a FastCGI worker loop, or one CGI request.
 *
 * A worker is a pool of request threads (worker.c says how they share
 * the socket); each owns an arena (reset after every request) and a Gemini
 * client, and all read the immutable site the worker was forked with.
 * SIGTERM/SIGINT stop it taking requests; the requests in flight are
 * finished first, so a stopping worker always finishes what it started.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_WORKER_H
#define APP_WORKER_H

#include "core/common.h"

struct site;
struct scoreboard;
struct scoreboard_block;

struct worker_opts {
    int threads; /* request threads that may serve at once */
    int queue;   /* requests that may wait for one */
    const struct scoreboard *board;
    struct scoreboard_block *block; /* this worker's */
};

/*
 * Accept and answer FastCGI requests on `listen_fd` (non-blocking, shared
 * with sibling workers) until SIGTERM/SIGINT or, when the config sets
 * maxRequestsPerWorker, until that many requests were served (the block
 * then says `retiring`). Returns the process exit code: 0 for a normal
 * stop or recycle.
 */
int worker_run(const struct site *site, int listen_fd,
               const struct worker_opts *o);

/* Answer the one CGI request described by the environment and stdin;
 * with `site` NULL (the config could not be loaded), a 500 config_error.
 * Returns the process exit code. */
int worker_cgi(const struct site *site);

#endif /* APP_WORKER_H */
