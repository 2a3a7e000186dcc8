/*
 * serve.c - the master process: bind, fork workers, keep them alive.
 *
 * A small process manager in the php-fpm mould. The master never serves a
 * request; it binds the socket, forks the workers, and then only waits for
 * signals, synchronously (sigtimedwait on a blocked set: no handlers, no
 * races):
 *   SIGCHLD        a worker ended: start a replacement at once, or after
 *                  a doubling back-off when workers keep dying young;
 *   SIGHUP         load the config again; if it is sound, start a new
 *                  generation of workers with it and ask the old ones to
 *                  finish their requests and leave; if not, say why and
 *                  keep the old one (the socket stays open throughout, so
 *                  no connection is refused);
 *   SIGTERM/INT    ask every worker to finish and leave, wait, clean up;
 *   SIGUSR1        open the log file (log.file) again, after logrotate
 *                  moved it: the master reopens its own and passes the
 *                  signal on to every worker, whose main thread takes it
 *                  the same way (worker.c) and reopens theirs;
 * and every WATCH_TICK_MS it reads the scoreboard (scoreboard.h): a worker
 * whose request ran past requestTimeoutMs + WORKER_HANG_SLACK_MS, or whose
 * server action ran past actionTimeoutMs, is hung - it is killed, logged
 * and replaced; a worker that reached maxRequestsPerWorker is replaced at
 * once while it finishes its last requests.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "proc/serve.h"
#include "core/bounds.h"
#include "proc/bounds.h"
#include "http/site.h"
#include "core/status.h"
#include "store/store.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/logmsg.h"
#include "core/monotime.h"
#include "proc/scoreboard.h"
#include "proc/worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct slot {
    pid_t pid; /* 0 when empty */
    struct scoreboard_block *block;
    long started_ms; /* monotonic */
    long respawn_at; /* monotonic ms when an empty slot may be refilled */
};

struct master {
    const struct serve_opts *opts;
    struct site *site; /* swapped whole on SIGHUP */
    int fd;
    struct slot slots[BOUND_WORKERS];
    int nslots;
    int crashes;                       /* consecutive young deaths */
    pid_t retiring[BOUND_WORKERS * 4]; /* old generations still finishing */
    int nretiring;
    struct scoreboard board; /* a block per live worker, shared */
};

/* --- the listening socket --------------------------------------------------- */

static int
bind_unix(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    mode_t old;
    int fd, rc;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        log_err("socket path '%s' is too long", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* A socket file left by a dead master is removed; a live one is not. */
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            log_err("'%s' is in use by another server", path);
            close(fd);
            return -1;
        }
        unlink(path);
        close(fd);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
    }
    /* Created 0660 from the start: no window where others could connect. */
    old = umask(0117);
    rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (rc != 0) {
        log_err("cannot bind '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int
bind_tcp(const char *hostport)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    const char *colon = strrchr(hostport, ':');
    char host[64];
    char *end;
    long port;
    int fd, one = 1;

    if (colon == NULL || (size_t)(colon - hostport) >= sizeof(host)) {
        log_err("--listen wants HOST:PORT, e.g. 127.0.0.1:9000");
        return -1;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || port < 1 || port > 65535 ||
        inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        log_err("--listen wants an IPv4 address and a port, e.g. "
                "127.0.0.1:9000");
        return -1;
    }
    if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127) /* not 127.0.0.0/8 */
        log_warn("listening on %s: FastCGI has no authentication; keep the "
                 "port closed to everything but the web server",
                 hostport);
    sa.sin_port = htons((uint16_t)port);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        log_err("cannot bind %s: %s", hostport, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static const char *
listener_name(const struct serve_opts *o)
{
    if (o->listen_stdin)
        return "the socket the web server passed (descriptor 0)";
    return o->socket_path ? o->socket_path : o->listen;
}

static int
open_listener(const struct serve_opts *o)
{
    int fd = o->listen_stdin  ? STDIN_FILENO
             : o->socket_path ? bind_unix(o->socket_path)
                              : bind_tcp(o->listen);
    int fl;

    if (fd < 0)
        return -1;
    fl = fcntl(fd, F_GETFL);
    /* A burst of chats arrives faster than one thread per worker accepts
     * them: the backlog holds it (the kernel caps it at somaxconn). The
     * queue that matters is ours, bounded (worker.c). */
    if (listen(fd, LISTEN_BACKLOG) != 0 || fl < 0 ||
        fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        log_err("cannot listen: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* --- the key file ---------------------------------------------------------- */

/*
 * The file holding the API key must be its owner's alone: anyone else who
 * can read it has the site's Gemini account, and anyone who can write it
 * can point the site at their own. A site that breaks the rule is refused
 * (at start and on SIGHUP) unless agent.yaml says allowReadableKeyFile:
 * true; then it is served with a warning on every start and reload.
 *
 * Started by the web server (listen_stdin, mod_fcgid) the program runs as
 * the web server's user, as a CGI does: the site's owner keeps the file
 * and shares it with that user's group alone (chgrp + mode 0640, the
 * recipe docs/deploy/apache-cgi.md), which is then the rule.
 */
static bool
key_file_shared_with_server(const struct serve_opts *o,
                            const struct config *cfg)
{
    struct stat st;

    return o->listen_stdin && cfg->gemini.key_source == CONFIG_KEY_FILE &&
           stat(cfg->gemini.path, &st) == 0 && st.st_gid == getegid() &&
           (st.st_mode & 027) == 0;
}

static bool
key_file_allowed(const struct serve_opts *o, const struct site *s)
{
    const struct config *cfg = s->cfg;
    unsigned mode, uid;

    if (key_file_shared_with_server(o, cfg))
        return true;

    if (config_key_file_foreign(cfg, &uid)) {
        log_err("%s holds the Gemini API key and belongs to user %u, who "
                "can change it at will: run chown %u %s",
                cfg->gemini.path, uid, (unsigned)geteuid(), cfg->gemini.path);
        return false;
    }
    if (!config_key_file_exposed(cfg, &mode))
        return true;
    if (cfg->allow_readable_key_file) {
        log_warn("WARNING: %s holds the Gemini API key and other users can "
                 "read or write it (mode %03o); serving anyway because "
                 "allowReadableKeyFile is true in %s. Run chmod 600 %s",
                 cfg->gemini.path, mode, cfg->path, cfg->gemini.path);
        return true;
    }
    log_err("%s holds the Gemini API key and other users can read or write "
            "it (mode %03o): run chmod 600 %s (or set allowReadableKeyFile: "
            "true in %s to serve anyway)",
            cfg->gemini.path, mode, cfg->gemini.path, cfg->path);
    return false;
}

/* --- workers ----------------------------------------------------------------- */

static void
write_pid_file(const struct master *m)
{
    char line[32 * BOUND_WORKERS + 64], tmp[BOUND_PATH_LEN];
    size_t n = 0;
    FILE *f;

    n += (size_t)snprintf(line, sizeof(line), "workers:");
    for (int i = 0; i < m->nslots && n < sizeof(line); i++)
        if (m->slots[i].pid > 0)
            n += (size_t)snprintf(line + n, sizeof(line) - n, " %ld",
                                  (long)m->slots[i].pid);
    log_info("%s", line);
    if (m->opts->pid_file == NULL)
        return;
    snprintf(tmp, sizeof(tmp), "%s.tmp", m->opts->pid_file);
    f = fopen(tmp, "w");
    if (f == NULL) {
        log_err("cannot write '%s': %s", tmp, strerror(errno));
        return;
    }
    fprintf(f, "%ld\n%s\n", (long)getpid(), line);
    if (fclose(f) != 0 || rename(tmp, m->opts->pid_file) != 0)
        log_err("cannot write '%s': %s", m->opts->pid_file, strerror(errno));
}

static pid_t
spawn(struct master *m, int i)
{
    struct scoreboard_block *b = scoreboard_claim(&m->board, m->opts->threads);
    pid_t pid = b != NULL ? fork() : -1;

    if (pid < 0) {
        log_err("cannot start a worker: %s",
                b != NULL ? strerror(errno) : "too many still finishing");
        if (b != NULL)
            scoreboard_free(b);
        m->slots[i].respawn_at = monotime_ms() + WORKER_BACKOFF_MIN_MS;
        return -1;
    }
    if (pid == 0) {
        struct worker_opts wo = {m->opts->threads, m->opts->queue, &m->board,
                                 b};
        signal(SIGCHLD, SIG_DFL);
        _exit(worker_run(m->site, m->fd, &wo));
    }
    scoreboard_own(b, pid);
    m->slots[i].block = b;
    m->slots[i].pid = pid;
    m->slots[i].started_ms = monotime_ms();
    m->slots[i].respawn_at = 0;
    return pid;
}

/* Fill every empty slot whose back-off has passed. */
static void
fill_slots(struct master *m)
{
    long now = monotime_ms();
    bool changed = false;

    for (int i = 0; i < m->nslots; i++)
        if (m->slots[i].pid == 0 && m->slots[i].respawn_at <= now &&
            spawn(m, i) > 0)
            changed = true;
    if (changed)
        write_pid_file(m);
}

/* Milliseconds until the next slot may be refilled, or -1 for none. */
static long
next_respawn_in(const struct master *m)
{
    long best = -1, now = monotime_ms();

    for (int i = 0; i < m->nslots; i++)
        if (m->slots[i].pid == 0) {
            long d = m->slots[i].respawn_at - now;
            d = d < 0 ? 0 : d;
            if (best < 0 || d < best)
                best = d;
        }
    return best;
}

static void
reap(struct master *m)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        struct scoreboard_block *b = scoreboard_find(&m->board, pid);
        bool young, crashed;
        int i;

        if (b != NULL)
            scoreboard_free(b);
        for (i = 0; i < m->nretiring; i++)
            if (m->retiring[i] == pid) {
                m->retiring[i] = m->retiring[--m->nretiring];
                break;
            }
        for (i = 0; i < m->nslots && m->slots[i].pid != pid; i++)
            ;
        if (i == m->nslots)
            continue; /* an old generation's worker finished */
        crashed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        young = monotime_ms() - m->slots[i].started_ms < WORKER_CRASH_WINDOW_MS;
        if (crashed)
            log_warn("worker %ld %s %d", (long)pid,
                     WIFSIGNALED(status) ? "killed by signal" : "exited with",
                     WIFSIGNALED(status) ? WTERMSIG(status)
                                         : WEXITSTATUS(status));
        m->slots[i].pid = 0;
        m->slots[i].block = NULL;
        m->slots[i].respawn_at = monotime_ms();
        if (crashed && young) {
            /* Dying as soon as they start: do not spin. */
            long d = WORKER_BACKOFF_MIN_MS;
            for (int k = 1; k < m->crashes && d < WORKER_BACKOFF_MAX_MS; k++)
                d *= 2;
            m->crashes++;
            m->slots[i].respawn_at += d < WORKER_BACKOFF_MAX_MS
                                          ? d
                                          : WORKER_BACKOFF_MAX_MS;
        } else {
            m->crashes = 0;
        }
    }
}

static void
signal_all(const struct master *m, int sig)
{
    for (int i = 0; i < m->nslots; i++)
        if (m->slots[i].pid > 0)
            kill(m->slots[i].pid, sig);
    for (int i = 0; i < m->nretiring; i++)
        kill(m->retiring[i], sig);
}

/*
 * Bring the run API's store up to this program's schema before any worker
 * opens it, and refuse a store a newer gemini-agent wrote (its tables may
 * mean what this one cannot know). A store that cannot be opened at all
 * (dataDir missing) is only a warning: the chat does not need it (unless
 * a budget is configured: then it answers budget_unavailable), and the
 * run API answers store_error until it is fixed.
 */
static bool
store_ready(const struct site *site)
{
    struct status_error err = {0};
    struct store *st = store_open_migrated(site->cfg->run.store, &err);

    if (st != NULL) {
        st->ops->close(st);
        return true;
    }
    if (err.code == ST_SCHEMA_NEWER) {
        log_err("%s", err.text);
        return false;
    }
    log_warn("the run API's store %s is not usable: %s", site->cfg->run.store,
             err.text);
    /* the budget fails closed: say what that means before a visitor
     * finds out */
    if (site->cfg->budget.on)
        log_warn("a budget is configured and its counters live in that "
                 "store: chat and run requests are answered 503 "
                 "budget_unavailable until it can be opened");
    return true;
}

/* log: in agent.yaml, for this process and the workers it forks. 0, or
 * -1 (logged: where the lines were going, they still go). */
static int
open_log(const struct config *cfg)
{
    if (logmsg_set_output(cfg->log.format, cfg->log.file) == 0)
        return 0;
    log_err("cannot open the log file '%s': %s", cfg->log.file,
            strerror(errno));
    return -1;
}

/* SIGUSR1: this process's log file again, then every worker's. */
static void
reopen_log(const struct master *m)
{
    if (logmsg_reopen() != 0)
        log_err("cannot reopen the log file: %s; writing on to the old one",
                strerror(errno));
    else
        log_info("SIGUSR1: the log file is open again");
    signal_all(m, SIGUSR1);
}

static void
reload(struct master *m)
{
    struct diag d = DIAG_INIT;
    struct site *site;

    log_info("reloading the configuration from '%s'", m->opts->config_path);
    site = site_reload(m->opts->config_path, m->site, &d);
    if (site != NULL && site_check_serving(site, &d) != 0) {
        site_free(site);
        site = NULL;
    }
    diag_log(&d);
    diag_release(&d);
    if (site == NULL) {
        log_err("config reload failed; keeping the old configuration");
        return;
    }
    if (!key_file_allowed(m->opts, site) || !store_ready(site)) {
        log_err("config reload refused; keeping the old configuration");
        site_free(site);
        return;
    }
    /* The old generation finishes its requests with the site it was
     * forked with; the new one starts at once on the same socket. */
    for (int i = 0; i < m->nslots; i++) {
        if (m->slots[i].pid > 0 &&
            m->nretiring < (int)ARRAY_SIZE(m->retiring)) {
            kill(m->slots[i].pid, SIGTERM);
            m->retiring[m->nretiring++] = m->slots[i].pid;
        } else if (m->slots[i].pid > 0) {
            kill(m->slots[i].pid, SIGKILL);
        }
        m->slots[i].pid = 0;
        m->slots[i].block = NULL;
        m->slots[i].respawn_at = 0;
    }
    /* before the fork: the new generation inherits the output */
    if (open_log(site->cfg) != 0)
        log_err("keeping the log output as it was");
    site_adopt(site, m->site); /* unchanged plugins keep their instance */
    site_free(m->site);
    m->site = site;
    m->crashes = 0;
    fill_slots(m);
    log_info("configuration reloaded");
}

/* Kill a hung worker: SIGKILL also ends a stopped one. Its SIGCHLD brings
 * the replacement. */
static void
kill_hung(struct scoreboard_block *b, const char *why, long ran_ms,
          long limit_ms)
{
    pid_t pid = atomic_load(&b->pid);

    if (atomic_exchange(&b->killed, 1))
        return;
    log_err("worker %ld is hung: %s has run for %ld ms, past its %ld ms; "
            "killing it (its requests in flight fail) and starting another",
            (long)pid, why, ran_ms, limit_ms);
    kill(pid, SIGKILL);
}

/* One worker's requests and actions against their deadlines. */
static void
watch_worker(const struct master *m, struct scoreboard_block *b, long now)
{
    for (int t = 0; t < m->board.nslots && !atomic_load(&b->killed); t++) {
        struct watch_slot *w = &b->slots[t];
        long started = atomic_load(&w->started_ms);
        long deadline = atomic_load(&w->deadline_ms);

        switch (scoreboard_overdue(w, now, WORKER_HANG_SLACK_MS)) {
        case SCOREBOARD_ACTION_OVERDUE:
            kill_hung(b, "a server action", now - started,
                      m->site->cfg->actions.timeout_ms);
            break;
        case SCOREBOARD_REQUEST_OVERDUE:
            kill_hung(b, "a request", now - started,
                      deadline - started + WORKER_HANG_SLACK_MS);
            break;
        case SCOREBOARD_ON_TIME:
            break;
        }
    }
}

/* The watchdog's round: hung workers, and workers that retire. */
static void
watch_all(struct master *m)
{
    long now = monotime_ms();
    bool retired = false;

    for (int i = 0; i < m->board.nblocks; i++) {
        struct scoreboard_block *b = scoreboard_block(&m->board, i);
        if (atomic_load(&b->pid) > 0)
            watch_worker(m, b, now);
    }
    /* A worker past maxRequestsPerWorker finishes its requests as an old
     * generation would; its slot is filled now, not when it is gone. */
    for (int i = 0; i < m->nslots; i++) {
        struct slot *s = &m->slots[i];
        if (s->pid <= 0 || s->block == NULL ||
            !atomic_load(&s->block->retiring) ||
            m->nretiring >= (int)ARRAY_SIZE(m->retiring))
            continue;
        m->retiring[m->nretiring++] = s->pid;
        s->pid = 0;
        s->block = NULL;
        s->respawn_at = now;
        retired = true;
    }
    if (retired)
        fill_slots(m);
}

/* Ask everyone to finish, wait up to the grace period, then insist. */
static void
stop_all(struct master *m, const sigset_t *set)
{
    long deadline = monotime_ms() + WORKER_STOP_GRACE_MS;

    signal_all(m, SIGTERM);
    for (;;) {
        bool any = m->nretiring > 0;
        for (int i = 0; i < m->nslots; i++) {
            m->slots[i].respawn_at = deadline + 1; /* never refill now */
            any = any || m->slots[i].pid > 0;
        }
        if (!any)
            break;
        long left = deadline - monotime_ms();
        if (left <= 0) {
            log_warn("workers did not finish in time; killing them");
            signal_all(m, SIGKILL);
            deadline = monotime_ms() + 1000;
            left = 1000;
        }
        struct timespec ts = {left / 1000, (left % 1000) * 1000000};
        (void)sigtimedwait(set, NULL, &ts); /* a SIGCHLD or the timeout */
        reap(m);
    }
}

/* The site loaded and checked for serving: its log open, its key file
 * private, its store one this program can read. false when it cannot
 * start (logged). */
static bool
master_site(struct master *m)
{
    const struct serve_opts *o = m->opts;
    struct diag d = DIAG_INIT;

    m->site = site_load(o->config_path, &d);
    if (m->site != NULL && site_check_serving(m->site, &d) != 0) {
        site_free(m->site);
        m->site = NULL;
    }
    diag_log(&d);
    diag_release(&d);
    if (m->site == NULL) {
        log_err("cannot start: the configuration has errors");
        return false;
    }
    if (open_log(m->site->cfg) != 0)
        return false;
    if (!key_file_allowed(o, m->site)) {
        log_err("cannot start: the API key file is not private");
        return false;
    }
    if (!store_ready(m->site)) {
        log_err("cannot start: the store was written by a newer "
                "gemini-agent");
        return false;
    }
    return true;
}

/* Keep the workers going, taking the signals in `set` as they come,
 * until SIGTERM or SIGINT. */
static void
master_loop(struct master *m, const sigset_t *set)
{
    for (;;) {
        long wait = next_respawn_in(m);
        if (wait < 0 || wait > WATCH_TICK_MS)
            wait = WATCH_TICK_MS;
        struct timespec ts = {wait / 1000, (wait % 1000) * 1000000};
        int sig = sigtimedwait(set, NULL, &ts);

        if (sig == SIGTERM || sig == SIGINT) {
            log_info("stopping: finishing requests in flight");
            stop_all(m, set);
            return;
        }
        if (sig == SIGHUP)
            reload(m);
        else if (sig == SIGUSR1)
            reopen_log(m);
        else if (sig == SIGCHLD)
            reap(m);
        watch_all(m);
        fill_slots(m);
    }
}

int
serve_run(const struct serve_opts *o)
{
    struct master *m = calloc(1, sizeof(*m));
    sigset_t set;
    int rc = 1;

    if (m == NULL)
        return 1;
    m->opts = o;
    m->fd = -1;
    m->nslots = o->workers;
    signal(SIGPIPE, SIG_IGN);
    if (!master_site(m))
        goto out;
    /* Signals are taken synchronously; block them before any fork. */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    m->fd = open_listener(o);
    if (m->fd < 0)
        goto out;
    if (scoreboard_open(&m->board, m->nslots + (int)ARRAY_SIZE(m->retiring),
                        o->threads + o->queue + 1) != 0) {
        log_err("cannot map the scoreboard: %s", strerror(errno));
        goto out;
    }
    log_info("serving on %s with %d worker%s of %d threads (and %d queued)",
             listener_name(o), o->workers, o->workers == 1 ? "" : "s",
             o->threads, o->queue);
    fill_slots(m);
    master_loop(m, &set);
    rc = 0;
out:
    if (m->fd >= 0) {
        close(m->fd);
        if (o->socket_path)
            unlink(o->socket_path);
    }
    if (o->pid_file && rc == 0)
        unlink(o->pid_file);
    site_free(m->site);
    scoreboard_close(&m->board);
    free(m);
    return rc;
}
