/*
 * worker.h - serve requests: a FastCGI worker loop, or one CGI request.
 *
 * A worker owns one arena (reset after every request) and reads the
 * immutable site it was forked with. It handles one request at a time;
 * SIGTERM/SIGINT are held while a request is in flight and only acted on
 * between requests, so a stopping worker always finishes what it started.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_WORKER_H
#define APP_WORKER_H

#include "core/common.h"

struct site;

/*
 * Accept and answer FastCGI requests on `listen_fd` (non-blocking, shared
 * with sibling workers) until SIGTERM/SIGINT or, when the config sets
 * maxRequestsPerWorker, until that many requests were served. Returns the
 * process exit code: 0 for a normal stop or recycle.
 */
int worker_run(const struct site *site, int listen_fd);

/* Answer the one CGI request described by the environment and stdin;
 * with `site` NULL (the config could not be loaded), a 500 config_error.
 * Returns the process exit code. */
int worker_cgi(const struct site *site);

#endif /* APP_WORKER_H */
