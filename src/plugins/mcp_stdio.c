/*
 * mcp_stdio.c - an MCP server as a child process: newline-delimited
 * JSON-RPC on its stdin and stdout.
 *
 * The child's stdin and stdout are one end of a socketpair, not pipes, so
 * that a write to a dead server fails with EPIPE through send(...,
 * MSG_NOSIGNAL) instead of raising SIGPIPE in a worker. It runs in
 * agent.yaml's folder with the environment initialize() built, and it
 * inherits no other descriptor: ours are opened close-on-exec and the
 * child closes every one above 2 before exec (the FastCGI listen socket
 * among them). An exec failure comes back over a close-on-exec pipe, so
 * "no such program" is an error of mcp_stdio_start(), not a silent EOF
 * later.
 *
 * Its stderr is a pipe we read while we wait for it, relayed to the log
 * line by line: each line cut and cleaned (mcp_clean), at most
 * MCP_STDERR_LINES a minute, so a server that writes without end neither
 * fills the serve log nor reaches it with its raw bytes. Between calls
 * nobody reads the pipe: a server that writes more than it holds waits
 * until the next call.
 *
 * Every wait is a poll() against a deadline (cfg->timeout_ms), and a line
 * longer than MCP_MESSAGE_BYTES ends the connection.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp_int.h"

#include "plugins/bounds.h"
#include "core/jsonin.h"
#include "core/logmsg.h"
#include "core/monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child, between fork and exec: async-signal-safe calls only. */
static void NORETURN
child_exec(const struct mcp_server_cfg *cfg, int fd, int stderr_fd, int errfd)
{
    sigset_t none;
    int e;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* workers block some */
    signal(SIGPIPE, SIG_DFL);              /* and ignore this one */
    if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(stderr_fd, 2) < 0)
        goto fail;
    /* the error pipe to fd 3 (still close-on-exec), all others closed */
    if (errfd != 3 && dup3(errfd, 3, O_CLOEXEC) < 0)
        goto fail;
    errfd = 3;
    if (close_range(4, ~0U, 0) != 0) {
        for (int i = 4; i < 65536; i++)
            close(i);
    }
    if (cfg->cwd != NULL && chdir(cfg->cwd) != 0)
        goto fail;
    execve(cfg->program, cfg->argv, cfg->envp);
fail:
    e = errno;
    if (write(errfd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

int
mcp_stdio_start(struct mcp_conn *c, struct mcp_err *e)
{
    int sv[2] = {-1, -1}, ep[2] = {-1, -1}, er[2] = {-1, -1};
    int child_errno = 0;
    ssize_t n;
    pid_t pid;

    /* only our end of the stderr pipe is non-blocking: the child's
     * writes wait when it is full */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(ep, O_CLOEXEC) != 0 || pipe2(er, O_CLOEXEC) != 0 ||
        fcntl(er[0], F_SETFL, O_NONBLOCK) != 0) {
        mcp_err_set(e, MCP_START, "cannot start server '%s': %s", c->cfg->name,
                    strerror(errno));
        goto fail;
    }
    pid = fork();
    if (pid < 0) {
        mcp_err_set(e, MCP_START, "cannot start server '%s': %s", c->cfg->name,
                    strerror(errno));
        goto fail;
    }
    if (pid == 0)
        child_exec(c->cfg, sv[1], er[1], ep[1]);
    close(sv[1]);
    close(ep[1]);
    close(er[1]);
    sv[1] = ep[1] = er[1] = -1;
    /* EOF: exec succeeded (the pipe closed on exec); else its errno */
    do
        n = read(ep[0], &child_errno, sizeof(child_errno));
    while (n < 0 && errno == EINTR);
    close(ep[0]);
    ep[0] = -1;
    if (n > 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        mcp_err_set(e, MCP_START, "cannot run server '%s' ('%s'): %s",
                    c->cfg->name, c->cfg->argv[0], strerror(child_errno));
        goto fail;
    }
    c->child = pid;
    c->fd = sv[0];
    c->errfd = er[0];
    c->rlen = c->rscan = c->elen = 0;
    c->ecut = false;
    c->ewindow = monotime_ms();
    c->elogged = c->edropped = 0;
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (ep[i] >= 0)
            close(ep[i]);
        if (er[i] >= 0)
            close(er[i]);
    }
    return -1;
}

void
mcp_stdio_stop(struct mcp_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->errfd >= 0)
        close(c->errfd); /* a child still writing gets EPIPE */
    c->errfd = -1;
    free(c->rbuf);
    c->rbuf = NULL;
    c->rlen = c->rcap = c->rscan = 0;
    if (c->child <= 0)
        return;
    if (c->owner == getpid()) {
        /* EOF on stdin asks it to go; then SIGTERM, then SIGKILL */
        long until = monotime_ms() + MCP_STOP_GRACE_MS;
        bool termed = false;

        for (;;) {
            pid_t r = waitpid(c->child, NULL, WNOHANG);

            if (r == c->child || (r < 0 && errno != EINTR))
                break; /* reaped, or not ours to reap (ECHILD) */
            if (monotime_ms() >= until) {
                if (termed) {
                    kill(c->child, SIGKILL);
                    while (waitpid(c->child, NULL, 0) < 0 && errno == EINTR)
                        ;
                    break;
                }
                kill(c->child, SIGTERM);
                termed = true;
                until = monotime_ms() + MCP_STOP_GRACE_MS;
            }
            usleep(10000);
        }
    }
    c->child = 0;
}

/* One whole line of the child's stderr (c->eline) to the log, within
 * this minute's MCP_STDERR_LINES. */
static void
stderr_line(struct mcp_conn *c)
{
    long now = monotime_ms();
    char clean[MCP_STDERR_LINE_BYTES + 4];

    if (now - c->ewindow >= 60000) {
        if (c->edropped > 0)
            log_warn("mcp: server '%s': %u more lines of its stderr were "
                     "dropped",
                     c->cfg->name, c->edropped);
        c->ewindow = now;
        c->elogged = c->edropped = 0;
    }
    if (c->elogged < MCP_STDERR_LINES) {
        mcp_clean(clean, sizeof(clean), c->eline, c->elen);
        log_info("mcp: server '%s' (stderr): %s%s", c->cfg->name, clean,
                 c->ecut ? " [cut]" : "");
        c->elogged++;
    } else if (c->edropped++ == 0) {
        log_warn("mcp: server '%s' writes more than %d lines a minute to "
                 "its stderr: the rest of this minute's are dropped",
                 c->cfg->name, MCP_STDERR_LINES);
    }
    c->elen = 0;
    c->ecut = false;
}

/* Read what the child's stderr holds (at most 64 KiB a call, so its
 * stdout is not starved) into lines for the log. */
static void
drain_stderr(struct mcp_conn *c)
{
    char buf[4096];

    for (int round = 0; round < 16 && c->errfd >= 0; round++) {
        ssize_t n = read(c->errfd, buf, sizeof(buf));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) { /* closed, or broken: nothing more to relay */
            if (c->elen > 0)
                stderr_line(c);
            close(c->errfd);
            c->errfd = -1;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n')
                stderr_line(c);
            else if (c->elen < sizeof(c->eline))
                c->eline[c->elen++] = buf[i];
            else
                c->ecut = true;
        }
    }
}

/* Wait until c->fd is ready for `events` or `deadline` passes, relaying
 * the child's stderr meanwhile: 1 ready, 0 timed out, -1 error. */
static int
wait_fd(struct mcp_conn *c, short events, long deadline)
{
    for (;;) {
        long left = deadline - monotime_ms();
        struct pollfd p[2] = {{c->fd, events, 0}, {c->errfd, POLLIN, 0}};
        int r;

        if (left <= 0)
            return 0;
        r = poll(p, c->errfd >= 0 ? 2 : 1, (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && c->errfd >= 0 && p[1].revents != 0)
            drain_stderr(c);
        if (r > 0 && p[0].revents != 0)
            return 1;
    }
}

static int
send_all(struct mcp_conn *c, const char *p, size_t len, long deadline,
         struct mcp_err *e)
{
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_fd(c, POLLOUT, deadline);
            if (r == 0) {
                mcp_err_set(e, MCP_TIMEOUT,
                            "server '%s' does not read its input",
                            c->cfg->name);
                return -1;
            }
            if (r > 0)
                continue;
        }
        mcp_err_set(e, MCP_DEAD, "server '%s' is gone: %s", c->cfg->name,
                    n < 0 ? strerror(errno) : "short write");
        return -1;
    }
    return 0;
}

/* The next line from the child (without its newline, NUL-terminated, in
 * c->rbuf; `*len` its length; consumed by the next call). */
static int
read_line(struct mcp_conn *c, size_t *len, long deadline, struct mcp_err *e)
{
    for (;;) {
        char *nl = c->rlen > c->rscan
                       ? memchr(c->rbuf + c->rscan, '\n', c->rlen - c->rscan)
                       : NULL;
        ssize_t n;
        int r;

        if (nl != NULL) {
            *nl = '\0';
            *len = (size_t)(nl - c->rbuf);
            return 0;
        }
        c->rscan = c->rlen; /* a line that trickles in is scanned once */
        if (c->rlen >= MCP_MESSAGE_BYTES) {
            mcp_err_set(e, MCP_PROTO, "server '%s' sent a line over %u bytes",
                        c->cfg->name, MCP_MESSAGE_BYTES);
            return -1;
        }
        if (c->rcap - c->rlen < 4096) {
            size_t cap = c->rcap ? c->rcap * 2 : 16384;
            char *p;

            if (cap > MCP_MESSAGE_BYTES + 1)
                cap = MCP_MESSAGE_BYTES + 1;
            if ((p = realloc(c->rbuf, cap)) == NULL) {
                mcp_err_set(e, MCP_PROTO, "out of memory");
                return -1;
            }
            c->rbuf = p;
            c->rcap = cap;
        }
        r = wait_fd(c, POLLIN, deadline);
        if (r == 0) {
            mcp_err_set(e, MCP_TIMEOUT, "server '%s' did not answer in time",
                        c->cfg->name);
            return -1;
        }
        n = r > 0 ? recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen - 1,
                         MSG_DONTWAIT)
                  : -1;
        if (n > 0) {
            c->rlen += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        mcp_err_set(e, MCP_DEAD, "server '%s' is gone: %s", c->cfg->name,
                    n == 0 ? "end of its output" : strerror(errno));
        return -1;
    }
}

/* Drop the line read_line() returned (and its newline). */
static void
consume_line(struct mcp_conn *c, size_t len)
{
    memmove(c->rbuf, c->rbuf + len + 1, c->rlen - len - 1);
    c->rlen -= len + 1;
    c->rscan = 0;
}

int
mcp_stdio_exchange(struct mcp_conn *c, const char *text, size_t len, long id,
                   struct json_t **answer, struct mcp_err *e)
{
    long deadline = monotime_ms() + c->cfg->timeout_ms;
    unsigned not_json = 0, others = 0;

    *answer = NULL;
    if (send_all(c, text, len, deadline, e) != 0 ||
        send_all(c, "\n", 1, deadline, e) != 0)
        return -1;
    if (id < 0)
        return 0;
    while (not_json + others <= MCP_MAX_SKIPPED) {
        char reply[256];
        json_error_t jerr;
        json_t *msg;
        size_t n;
        bool oom = false;

        if (read_line(c, &n, deadline, e) != 0) {
            mcp_err_note_skipped(e, not_json, others);
            return -1;
        }
        /* a line that is not JSON is a server's stray log: skipped (and
         * counted: a server that answers only such lines is told so) */
        msg = jsonin_parse(c->rbuf, n, 0, &jerr, &oom);
        consume_line(c, n);
        if (oom) {
            mcp_err_set(e, MCP_PROTO, "out of memory");
            return -1;
        }
        if (mcp_is_answer(msg, id, reply, sizeof(reply))) {
            *answer = msg;
            return 0;
        }
        if (msg == NULL)
            not_json++;
        else
            others++;
        json_decref(msg);
        if (reply[0] != '\0' &&
            (send_all(c, reply, strlen(reply), deadline, e) != 0 ||
             send_all(c, "\n", 1, deadline, e) != 0))
            return -1;
    }
    mcp_err_set(e, MCP_PROTO, "server '%s' sent too many other messages",
                c->cfg->name);
    mcp_err_note_skipped(e, not_json, others);
    return -1;
}
