/*
 * worker.c - the FastCGI accept loop and the CGI one-shot.
 *
 * Signals: the worker keeps SIGTERM and SIGINT blocked at all times except
 * inside ppoll(), where it waits for the next connection. A stop request
 * therefore either wakes that wait (and the worker exits) or stays pending
 * until the request in flight has been answered - never in between, and
 * never inside libfcgi's reads and writes, which do not retry on EINTR.
 * The listening socket is non-blocking: when several workers wake for one
 * connection, the losers get EAGAIN from accept and go back to waiting
 * instead of blocking where a stop signal could not reach them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "proc/worker.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "http/site.h"
#include "http/dispatch.h"
#include "gemini/gemini.h"
#include "http/httpio.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "http/reply.h"
#include "core/status.h"

#include <errno.h>
#include <fcgiapp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set by the signal handler; read between requests. */
static volatile sig_atomic_t worker_stop;

static void
on_stop(int sig)
{
    (void)sig;
    worker_stop = 1;
}

/* --- FastCGI transport ----------------------------------------------------- */

static const char *
fcgi_param(void *ctx, const char *name)
{
    FCGX_Request *r = ctx;
    return FCGX_GetParam(name, r->envp);
}

static long
fcgi_read(void *ctx, char *buf, size_t n)
{
    FCGX_Request *r = ctx;
    int want = n > (size_t)1 << 30 ? 1 << 30 : (int)n;
    int got = FCGX_GetStr(buf, want, r->in);
    return got < 0 ? -1 : got;
}

static int
fcgi_write(void *ctx, const char *buf, size_t n)
{
    FCGX_Request *r = ctx;

    while (n > 0) {
        int chunk = n > (size_t)1 << 30 ? 1 << 30 : (int)n;
        if (FCGX_PutStr(buf, chunk, r->out) != chunk)
            return -1; /* the client or the web server went away */
        buf += chunk;
        n -= (size_t)chunk;
    }
    return 0;
}

static const struct httpio_ops fcgi_ops = {fcgi_param, fcgi_read, fcgi_write};

int
worker_run(const struct site *site, int listen_fd)
{
    struct sigaction sa;
    sigset_t block, waitmask;
    FCGX_Request req;
    struct arena arena;
    struct gemini gemini;
    long served = 0, max = site->cfg->limits.max_requests_per_worker;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop; /* no SA_RESTART: ppoll must return */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGHUP, SIG_IGN); /* reloads are the master's business */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &waitmask);
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGINT);

    if (FCGX_Init() != 0 || FCGX_InitRequest(&req, listen_fd, 0) != 0) {
        log_err("cannot initialise libfcgi");
        return 1;
    }
    /* One Gemini client per worker: its connection serves every request. */
    if (gemini_init(&gemini) != 0) {
        log_err("cannot initialise the Gemini client");
        return 1;
    }
    arena_init(&arena);
    while (!worker_stop && (max == 0 || served < max)) {
        struct pollfd p = {listen_fd, POLLIN, 0};
        int rc = ppoll(&p, 1, NULL, &waitmask);

        if (rc < 0) {
            if (errno == EINTR)
                continue;
            log_err("waiting for connections failed: %s", strerror(errno));
            break;
        }
        rc = FCGX_Accept_r(&req);
        if (rc < 0) {
            if (rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -EINTR ||
                rc == -ECONNABORTED)
                continue; /* another worker took it */
            log_err("accepting a connection failed: %s", strerror(-rc));
            break;
        }
        struct httpio io = {&fcgi_ops, &req, false};
        memlimit_reset(BOUND_REQUEST_MEMORY);
        dispatch_request(site, &gemini, &io, &arena);
        FCGX_Finish_r(&req);
        arena_reset(&arena);
        served++;
    }
    FCGX_Free(&req, 1);
    arena_release(&arena);
    gemini_release(&gemini);
    return 0;
}

/* --- CGI transport --------------------------------------------------------- */


static const char *
cgi_param(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static long
cgi_read(void *ctx, char *buf, size_t n)
{
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    ssize_t got;

    (void)ctx;
    for (;;) {
        int rc = poll(&p, 1, BOUND_CGI_READ_MS);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        got = read(STDIN_FILENO, buf, n);
        if (got < 0 && errno == EINTR)
            continue;
        return got < 0 ? -1 : (long)got;
    }
}

static int
cgi_write(void *ctx, const char *buf, size_t n)
{
    (void)ctx;
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static const struct httpio_ops cgi_ops = {cgi_param, cgi_read, cgi_write};

int
worker_cgi(const struct site *site)
{
    struct arena arena;
    struct gemini gemini;
    struct httpio io = {&cgi_ops, NULL, false};

    struct status_error err = {0};

    signal(SIGPIPE, SIG_IGN);
    if (site == NULL) {
        /* The visitor learns nothing about our files; the log does. */
        status_set(&err, ST_CONFIG,
                   "the server is not configured correctly; see its error "
                   "log");
        reply_error(&io, &err, NULL);
        return 0;
    }
    if (gemini_init(&gemini) != 0) {
        /* Only an allocation inside libcurl fails here: the visitor still
         * gets an answer, and the web server a Status line. */
        log_err("cannot initialise the Gemini client");
        status_set(&err, ST_INTERNAL, "the server could not start this "
                                      "request; try again");
        reply_error(&io, &err, NULL);
        return 1;
    }
    arena_init(&arena);
    memlimit_reset(BOUND_REQUEST_MEMORY);
    dispatch_request(site, &gemini, &io, &arena);
    arena_release(&arena);
    gemini_release(&gemini);
    return 0;
}
