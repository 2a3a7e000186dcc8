/*
 * worker.c - a worker process: a pool of request threads over the
 * FastCGI socket; and the CGI one-shot.
 *
 * Why threads (docs/internals/concurrency.md): a chat costs microseconds
 * of CPU and seconds of waiting on Gemini, so what bounds a box is how
 * many chats can wait at once, not CPU. Each thread runs one request from
 * accept to answer with its own arena, Gemini client (one keep-alive
 * connection) and scoreboard slot; the site is immutable and shared.
 *
 * Threads take turns at the socket (leader/followers): one leader at a
 * time waits for a connection and accepts it, hands the lead to the
 * follower that went idle last, and reads and serves the request (the
 * head read after the lead has passed, so a silent peer holds one thread
 * for BOUND_FCGI_IO_MS, never the socket). Last-in first-out keeps a
 * light load on a few hot threads - their stacks, arenas and caches warm -
 * while the others stay untouched: a worker's memory follows its load, not
 * its thread count. A worker has `threads` threads that may serve at once,
 * `queue` more that may wait up to WORKER_QUEUE_WAIT_MS for one of them to
 * be free, and one spare: so some thread is always at the socket, and
 * once every serving thread is busy and the queue is full, the spare
 * answers a fast 503 with Retry-After instead of leaving connections to
 * age in the listen backlog. A worker that is full leaves a new
 * connection for WORKER_STEP_ASIDE_MS to workers that have a free thread
 * (the scoreboard says which) before it takes it itself.
 *
 * Signals: every thread blocks them all; the main thread takes SIGTERM
 * and SIGINT with sigtimedwait, stops the pool - the leader's wait wakes
 * on a pipe, threads finish the request they serve - and joins it. A
 * thread that ends the pool itself (maxRequestsPerWorker reached, or
 * libfcgi failing) wakes the main thread with SIGUSR1; a SIGUSR1 while
 * the pool runs is the master's (serve.c): the main thread opens the log
 * file again (logmsg_reopen), in normal code, no handler. Between signals,
 * every WATCH_TICK_MS, the main thread cuts request heads that are past
 * their time (cut_heads).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "proc/worker.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "gemini/bounds.h"
#include "proc/bounds.h"
#include "registry/bounds.h"
#include "core/config.h"
#include "http/site.h"
#include "http/dispatch.h"
#include "store/store.h"
#include "gemini/gemini.h"
#include "http/httpio.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "core/monotime.h"
#include "proc/scoreboard.h"
#include "http/reply.h"
#include "core/status.h"
#include "core/watch.h"

#include <errno.h>
#include <fastcgi.h> /* FCGI_RESPONDER */
#include <fcgiapp.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* How long a full worker leaves a waiting connection to others. */
#define WORKER_STEP_ASIDE_MS 20

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
        if (FCGX_PutStr(buf, chunk, r->out) != chunk) {
            /* the web server went away or read nothing for
             * BOUND_FCGI_IO_MS: nothing more can reach it, so libfcgi's
             * END_REQUEST and closing linger must not wait as long again */
            shutdown(r->ipcFd, SHUT_RDWR);
            return -1;
        }
        buf += chunk;
        n -= (size_t)chunk;
    }
    return 0;
}

/* libfcgi holds output until its buffer fills or the request ends. */
static int
fcgi_flush(void *ctx)
{
    FCGX_Request *r = ctx;

    if (FCGX_FFlush(r->out) == 0)
        return 0;
    shutdown(r->ipcFd, SHUT_RDWR); /* as in fcgi_write */
    return -1;
}

static const struct httpio_ops fcgi_ops = {fcgi_param, fcgi_read, fcgi_write,
                                           fcgi_flush};

/* Has the web server closed the request's connection? nginx does when its
 * visitor hangs up (fastcgi_ignore_client_abort off, the default); after
 * the body it sends nothing else, so anything readable is the end. */
static bool
fcgi_gone(void *ctx)
{
    FCGX_Request *r = ctx;
    struct pollfd p = {r->ipcFd, POLLIN | POLLRDHUP, 0};

    return poll(&p, 1, 0) == 1 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/* --- the pool -------------------------------------------------------------- */

struct pool {
    const struct site *site;
    int listen_fd;
    int wake[2]; /* readable once the pool stops */
    const struct scoreboard *board;
    struct scoreboard_block *me;
    struct gemini_share *share; /* the threads' Gemini connections */
    pthread_t main;
    pthread_mutex_t lead_mu; /* the lead and the idle followers: */
    bool led;                /* a thread leads */
    struct follower *idle;   /* followers, the last to go idle first */
    pthread_mutex_t mu;      /* the counts below */
    pthread_cond_t freed;    /* a serving thread finished */
    int working, waiting, capacity, queue;
    long refused;        /* 503s not yet logged */
    long refused_log_ms; /* when they were last logged */
    atomic_long served;
    atomic_int trim; /* a request came since malloc was last trimmed */
    atomic_int stop;
    int failed; /* a thread could not start or libfcgi failed */
};

/* A thread waiting for the lead. */
struct follower {
    pthread_cond_t wake;
    bool lead; /* handed the lead (or woken to stop) */
    struct follower *next;
};

struct thread {
    struct pool *p;
    int index;
    pthread_t tid;
    struct follower f;
    /* the connection whose head it reads (a descriptor of its own, -1
     * for none) and by when (monotonic ms): cut_heads() ends it then */
    pthread_mutex_t head_mu;
    int head_fd;
    long head_until;
};

/* Stop taking requests: wake the leader, the followers and the main
 * thread. */
static void
pool_stop(struct pool *p)
{
    if (atomic_exchange(&p->stop, 1) != 0)
        return;
    (void)!write(p->wake[1], "", 1);
    pthread_mutex_lock(&p->lead_mu);
    for (struct follower *f = p->idle; f != NULL; f = f->next) {
        f->lead = true;
        pthread_cond_signal(&f->wake);
    }
    p->idle = NULL;
    pthread_mutex_unlock(&p->lead_mu);
    pthread_kill(p->main, SIGUSR1);
}

/* Lead: at once when nobody does, else when handed the lead. */
static void
take_lead(struct pool *p, struct follower *me)
{
    pthread_mutex_lock(&p->lead_mu);
    if (p->led && !atomic_load(&p->stop)) {
        me->lead = false;
        me->next = p->idle;
        p->idle = me;
        while (!me->lead)
            pthread_cond_wait(&me->wake, &p->lead_mu);
    }
    p->led = true;
    pthread_mutex_unlock(&p->lead_mu);
}

/* Hand the lead to the follower that went idle last. */
static void
pass_lead(struct pool *p)
{
    pthread_mutex_lock(&p->lead_mu);
    struct follower *f = p->idle;
    if (f != NULL) {
        p->idle = f->next;
        f->lead = true;
        pthread_cond_signal(&f->wake);
    } else {
        p->led = false;
    }
    pthread_mutex_unlock(&p->lead_mu);
}

/* Wait up to `ms` (-1: no limit) for fds; false when the pool stops. */
static bool
wait_fds(struct pool *p, struct pollfd *fds, int n, int ms)
{
    for (;;) {
        if (atomic_load(&p->stop))
            return false;
        if (poll(fds, (nfds_t)n, ms) >= 0 || errno != EINTR)
            return !atomic_load(&p->stop) && (fds[n - 1].revents == 0);
    }
}

/* Is every serving thread busy? */
static bool
full(struct pool *p)
{
    return atomic_load(&p->me->busy) >= p->capacity;
}

/* The worker is idle (the leader waited WORKER_IDLE_TRIM_MS for a
 * connection): when no request is in flight either, give malloc's free
 * memory back to the system. Only the leader calls this, and no request
 * starts meanwhile (the leader accepts them), so the cost (a walk over
 * the arenas' free chunks, 0.1-0.4 ms measured) is paid by nobody's
 * request. */
static void
idle_trim(struct pool *p)
{
    struct timespec t0, t1;

    if (atomic_load(&p->me->busy) > 0)
        return; /* a request is in flight; the next wait tries again */
    atomic_store(&p->trim, 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int gave = malloc_trim(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    log_debug("idle: malloc_trim %s in %ld us",
              gave ? "gave memory back" : "found nothing to give back",
              (long)(t1.tv_sec - t0.tv_sec) * 1000000L +
                  (t1.tv_nsec - t0.tv_nsec) / 1000);
}

/* A connection we accepted: its reads and writes give up after
 * BOUND_FCGI_IO_MS without progress, so a peer that stalls frees its
 * thread (libfcgi's own reads and writes block without limit). */
static int
take_connection(int listen_fd)
{
    struct timeval tv = {BOUND_FCGI_IO_MS / 1000,
                         (BOUND_FCGI_IO_MS % 1000) * 1000};
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    int one = 1;
    int fd = accept4(listen_fd, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC);

    if (fd < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (sa.ss_family == AF_INET) /* answers are small: send at once */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Lead: wait for the next connection and accept it. The connection, or
 * -1 when the pool stops. The request's head is read after the lead has
 * passed on (read_head), so a peer that sends nothing holds one thread
 * for BOUND_FCGI_IO_MS, never the socket. */
static int
next_connection(struct pool *p, struct follower *me)
{
    int fd = -1;

    take_lead(p, me);
    for (;;) {
        struct pollfd fds[2] = {{p->listen_fd, POLLIN, 0},
                                {p->wake[0], POLLIN, 0}};
        if (full(p) && scoreboard_room_elsewhere(p->board, p->me)) {
            /* let a worker with a free thread take it; if it is still
             * waiting afterwards, nobody could */
            if (!wait_fds(p, &fds[1], 1, WORKER_STEP_ASIDE_MS) ||
                !wait_fds(p, fds, 2, 0) || !(fds[0].revents & POLLIN))
                continue;
        } else if (!wait_fds(p, fds, 2,
                             atomic_load(&p->trim) ? WORKER_IDLE_TRIM_MS
                                                   : -1)) {
            break;
        } else if (fds[0].revents == 0) {
            idle_trim(p); /* no connection for WORKER_IDLE_TRIM_MS */
            continue;
        }
        if (atomic_load(&p->stop))
            break;
        fd = take_connection(p->listen_fd);
        if (fd >= 0) {
            atomic_store(&p->trim, 1); /* served: trim when next idle */
            break;
        }
        if (fd == -EAGAIN || fd == -EWOULDBLOCK || fd == -EINTR ||
            fd == -ECONNABORTED || fd == -EPROTO)
            continue; /* another worker took it, or its peer left */
        log_err("accepting a connection failed: %s", strerror(-fd));
        p->failed = 1;
        pool_stop(p);
        fd = -1;
        break;
    }
    pass_lead(p);
    /* accepted just as the pool stops: still served (a reload drops
     * nothing); the thread leaves after it */
    return fd;
}

/*
 * Read the request's head (FCGI_BEGIN_REQUEST and the params) from the
 * connection `fd` with libfcgi, which closes it when the head is broken or
 * stalls. The request was set up with no listening socket (-1), so
 * libfcgi, which goes back to accept after closing, finds nothing there
 * and returns. keepConnection only keeps FCGX_Accept_r's opening
 * FCGX_Finish_r from closing the connection we hand it; the head sets it
 * again, and the thread closes the connection after every request.
 * A head that trickles in under the read timeout is cut when
 * BOUND_FCGI_HEAD_MS have passed in all (cut_heads, through a descriptor
 * of our own, so the number it shuts down is never one reused meanwhile).
 * 0, or -1 when libfcgi dropped the connection.
 */
static int
read_head(struct thread *t, FCGX_Request *req, int fd)
{
    int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0), rc;

    if (mine < 0) {
        close(fd);
        return -1;
    }
    pthread_mutex_lock(&t->head_mu);
    t->head_fd = mine;
    t->head_until = monotime_ms() + BOUND_FCGI_HEAD_MS;
    pthread_mutex_unlock(&t->head_mu);
    req->ipcFd = fd;
    req->keepConnection = 1;
    rc = FCGX_Accept_r(req);
    pthread_mutex_lock(&t->head_mu);
    t->head_fd = -1;
    pthread_mutex_unlock(&t->head_mu);
    close(mine);
    return rc == 0 ? 0 : -1;
}

/* The main thread's tick: shut down every connection whose head is past
 * its time; libfcgi then reads its end and lets it go. */
static void
cut_heads(struct thread *ts, int n)
{
    long now = monotime_ms();

    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&ts[i].head_mu);
        if (ts[i].head_fd >= 0 && now >= ts[i].head_until) {
            shutdown(ts[i].head_fd, SHUT_RDWR);
            ts[i].head_fd = -1;
        }
        pthread_mutex_unlock(&ts[i].head_mu);
    }
}

/* A serving thread for this request, now or after a short wait in the
 * queue; false when there is none (answer 503). */
static bool
admit(struct pool *p)
{
    bool ok;

    pthread_mutex_lock(&p->mu);
    if (p->working >= p->capacity && p->waiting < p->queue) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += WORKER_QUEUE_WAIT_MS / 1000;
        until.tv_nsec += (WORKER_QUEUE_WAIT_MS % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        p->waiting++;
        while (p->working >= p->capacity &&
               pthread_cond_timedwait(&p->freed, &p->mu, &until) == 0)
            ;
        p->waiting--;
    }
    ok = p->working < p->capacity;
    if (ok) {
        p->working++;
        atomic_store(&p->me->busy, p->working);
    } else {
        p->refused++;
    }
    pthread_mutex_unlock(&p->mu);
    return ok;
}

static void
release(struct pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->working--;
    atomic_store(&p->me->busy, p->working);
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

/* The fast 503: read the body away (the web server is still sending it
 * and must not see the connection drop under it), then say when to come
 * back. Refusals are logged at most once every 10 s, with their count. */
static void
refuse(struct pool *p, struct httpio *io)
{
    struct status_error err = {0};
    char sink[4096];
    long refused = 0, now = monotime_ms();

    while (io->ops->read(io->ctx, sink, sizeof(sink)) > 0)
        ;
    status_set_retry(&err, ST_OVERLOADED, OVERLOAD_RETRY_AFTER_S,
                     "the assistant is busy right now; try again in a few "
                     "seconds");
    reply_error(io, &err, NULL);
    pthread_mutex_lock(&p->mu);
    if (now - p->refused_log_ms >= 10000) {
        refused = p->refused;
        p->refused = 0;
        p->refused_log_ms = now;
    }
    pthread_mutex_unlock(&p->mu);
    if (refused > 0)
        log_warn("overloaded: %ld request%s answered 503 (all %d threads "
                 "busy, %d waiting); raise --threads or --workers",
                 refused, refused == 1 ? "" : "s", p->capacity, p->queue);
}

/* An authorizer's or a filter's request (FastCGI roles nginx never uses):
 * refused, never served as a page's request - an authorizer's 200 would
 * grant access to whatever the web server guards with it. */
static void
refuse_role(struct httpio *io)
{
    struct status_error err = {0};

    status_set(&err, ST_BAD_REQUEST,
               "this program answers FastCGI's RESPONDER role only");
    reply_error(io, &err, NULL);
}

/* What GET /_jay/status says of the threads: every worker's, from the
 * board they share. */
static void
host_workers(void *ctx, int *busy, int *total)
{
    scoreboard_load(ctx, busy, total);
}

/* One thread: lead, serve, repeat. */
static void *
serve_thread(void *arg)
{
    struct thread *t = arg;
    struct pool *p = t->p;
    const struct site *site = p->site;
    long max = site->cfg->limits.max_requests_per_worker;
    FCGX_Request req;
    struct arena arena;
    struct gemini gemini;
    /* the run API's and the budget's, opened on first use */
    struct store *store = NULL;
    struct dispatch_host host = {host_workers, UNCONST(p->board)};
    int fd;

    watch_bind(&p->me->slots[t->index]);
    /* no listening socket: read_head hands libfcgi each connection */
    if (FCGX_InitRequest(&req, -1, 0) != 0 ||
        gemini_init_shared(&gemini, p->share) != 0) {
        log_err("cannot start a request thread (out of memory)");
        p->failed = 1;
        pool_stop(p);
        return NULL;
    }
    arena_init(&arena);
    gemini.gone = fcgi_gone;
    gemini.gone_ctx = &req;
    while ((fd = next_connection(p, &t->f)) >= 0) {
        struct httpio io = {.ops = &fcgi_ops, .ctx = &req};

        if (read_head(t, &req, fd) != 0)
            continue; /* libfcgi closed it: a broken or stalled head */
        watch_request_begin(site->cfg->limits.request_timeout_ms);
        memlimit_reset(BOUND_REQUEST_MEMORY);
        if (req.role != FCGI_RESPONDER) {
            refuse_role(&io);
        } else if (admit(p)) {
            int status = dispatch_request_ex(site, &gemini, &store, &host, &io,
                                             &arena);
            release(p);
            log_debug("request: %d, %zu KB allocated", status,
                      memlimit_used() / 1024);
            if (max > 0 && atomic_fetch_add(&p->served, 1) + 1 >= max) {
                atomic_store(&p->me->retiring, 1);
                pool_stop(p); /* the master starts a fresh worker */
            }
        } else {
            refuse(p, &io);
        }
        /* one request a connection: a kept connection would be read for
         * the next head by whichever thread, with no lead to pass */
        req.keepConnection = 0;
        FCGX_Finish_r(&req);
        arena_reset(&arena);
        watch_request_end();
    }
    FCGX_Free(&req, 1);
    arena_release(&arena);
    gemini_release(&gemini);
    if (store != NULL)
        store->ops->close(store);
    return NULL;
}

static int
start_threads(struct pool *p, struct thread *ts, int n)
{
    pthread_attr_t attr;
    size_t stack = WORKER_THREAD_STACK;
    int started = 0;

#if defined(__SANITIZE_ADDRESS__)
    stack *= 8; /* ASan's redzones make every frame several times larger */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    stack *= 8;
#endif
#endif
    if (pthread_attr_init(&attr) != 0)
        return 0;
    pthread_attr_setstacksize(&attr, stack);
    for (; started < n; started++) {
        ts[started].p = p;
        ts[started].index = started;
        ts[started].head_fd = -1;
        if (pthread_mutex_init(&ts[started].head_mu, NULL) != 0)
            break;
        if (pthread_cond_init(&ts[started].f.wake, NULL) != 0) {
            pthread_mutex_destroy(&ts[started].head_mu);
            break;
        }
        if (pthread_create(&ts[started].tid, &attr, serve_thread,
                           &ts[started]) != 0) {
            log_err("cannot start request thread %d of %d: %s", started + 1, n,
                    strerror(errno));
            pthread_cond_destroy(&ts[started].f.wake);
            pthread_mutex_destroy(&ts[started].head_mu);
            break;
        }
    }
    pthread_attr_destroy(&attr);
    return started;
}

/* Has the environment set glibc's arena limit? glibc reads it at start;
 * a mallopt() after that would override it. */
static bool
arena_max_set_by_env(void)
{
    const char *t = getenv("GLIBC_TUNABLES");

    return getenv("MALLOC_ARENA_MAX") != NULL ||
           (t != NULL && strstr(t, "glibc.malloc.arena_max=") != NULL);
}

int
worker_run(const struct site *site, int listen_fd, const struct worker_opts *o)
{
    struct pool p = {.site = site,
                     .listen_fd = listen_fd,
                     .board = o->board,
                     .me = o->block,
                     .capacity = o->threads,
                     .queue = o->queue};
    int nthreads = o->threads + o->queue + 1, started;
    struct thread *ts = calloc((size_t)nthreads, sizeof(*ts));
    sigset_t all, stop;

    signal(SIGPIPE, SIG_IGN);
    /* glibc gives threads up to 8 malloc arenas per core, each keeping
     * what its requests freed; bounds.h says why this many. An operator's
     * own limit (MALLOC_ARENA_MAX, or the tunable) wins. */
    if (!arena_max_set_by_env())
        mallopt(M_ARENA_MAX, WORKER_MALLOC_ARENAS);
    mallopt(M_MMAP_THRESHOLD, WORKER_MALLOC_MMAP);
    mallopt(M_TRIM_THRESHOLD, WORKER_MALLOC_TRIM);
    /* Block everything before the threads exist: they inherit the mask. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGUSR1);
    p.main = pthread_self();
    p.share = gemini_share_new();
    if (ts == NULL || p.share == NULL || pipe2(p.wake, O_CLOEXEC) != 0 ||
        pthread_mutex_init(&p.lead_mu, NULL) != 0 ||
        pthread_mutex_init(&p.mu, NULL) != 0) {
        log_err("cannot start a worker: out of memory");
        gemini_share_free(p.share);
        free(ts);
        return 1;
    }
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&p.freed, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (FCGX_Init() != 0) {
        log_err("cannot initialise libfcgi");
        free(ts);
        return 1;
    }
    started = start_threads(&p, ts, nthreads);
    if (started < nthreads)
        pool_stop(&p);
    /* Wait for a stop: ours (SIGTERM/INT) or the pool's own (SIGUSR1). */
    /* ... and every WATCH_TICK_MS, cut the heads past their time. */
    while (!atomic_load(&p.stop)) {
        struct timespec tick = {0, WATCH_TICK_MS * 1000000L};
        int sig = sigtimedwait(&stop, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            pool_stop(&p);
        else if (sig == SIGUSR1 && !atomic_load(&p.stop) &&
                 logmsg_reopen() != 0)
            log_err("cannot reopen the log file: %s; writing on to the old "
                    "one",
                    strerror(errno));
        cut_heads(ts, started);
    }
    for (int i = 0; i < started; i++) {
        pthread_join(ts[i].tid, NULL);
        pthread_cond_destroy(&ts[i].f.wake);
        pthread_mutex_destroy(&ts[i].head_mu);
    }
    close(p.wake[0]);
    close(p.wake[1]);
    pthread_cond_destroy(&p.freed);
    pthread_mutex_destroy(&p.mu);
    pthread_mutex_destroy(&p.lead_mu);
    gemini_share_free(p.share); /* after every thread's client */
    free(ts);
    return p.failed ? 1 : 0;
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

/* cgi_write() is write(2): nothing to flush */
static const struct httpio_ops cgi_ops = {cgi_param, cgi_read, cgi_write, NULL};

int
worker_cgi(const struct site *site)
{
    struct arena arena;
    struct gemini gemini;
    struct httpio io = {.ops = &cgi_ops, .ctx = NULL};

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
        status_set(&err, ST_INTERNAL,
                   "the server could not start this "
                   "request; try again");
        reply_error(&io, &err, NULL);
        return 1;
    }
    arena_init(&arena);
    watch_request_begin(site->cfg->limits.request_timeout_ms);
    memlimit_reset(BOUND_REQUEST_MEMORY);
    dispatch_request(site, &gemini, &io, &arena);
    arena_release(&arena);
    gemini_release(&gemini);
    return 0;
}
