/*
 * mcp_stdio.c - an MCP server as a child process: newline-delimited
 * JSON-RPC on its stdin and stdout.
 *
 * The child's stdin and stdout are one end of a socketpair, not pipes, so
 * that a write to a dead server fails with EPIPE through send(...,
 * MSG_NOSIGNAL) instead of raising SIGPIPE in a worker. It runs in
 * agent.yaml's folder with the environment initialize() built, its
 * stderr is ours (the serve log), and it inherits no other descriptor:
 * ours are opened close-on-exec and the child closes every one above 2
 * before exec (the FastCGI listen socket among them). An exec failure
 * comes back over a close-on-exec pipe, so "no such program" is an error
 * of mcp_stdio_start(), not a silent EOF later.
 *
 * Every wait is a poll() against a deadline (cfg->timeout_ms), and a line
 * longer than MCP_MESSAGE_BYTES ends the connection.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp_int.h"

#include "core/bounds.h"
#include "core/jsonin.h"
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
child_exec(const struct mcp_server_cfg *cfg, int fd, int errfd)
{
    sigset_t none;
    int e;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* workers block some */
    signal(SIGPIPE, SIG_DFL);              /* and ignore this one */
    if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
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
    int sv[2] = {-1, -1}, ep[2] = {-1, -1}, child_errno = 0;
    ssize_t n;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(ep, O_CLOEXEC) != 0) {
        mcp_err_set(e, MCP_START, "cannot start server '%s': %s",
                    c->cfg->name, strerror(errno));
        goto fail;
    }
    pid = fork();
    if (pid < 0) {
        mcp_err_set(e, MCP_START, "cannot start server '%s': %s",
                    c->cfg->name, strerror(errno));
        goto fail;
    }
    if (pid == 0)
        child_exec(c->cfg, sv[1], ep[1]);
    close(sv[1]);
    close(ep[1]);
    sv[1] = ep[1] = -1;
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
    c->rlen = 0;
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    return -1;
}

void
mcp_stdio_stop(struct mcp_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->rbuf);
    c->rbuf = NULL;
    c->rlen = c->rcap = 0;
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

/* Wait until `fd` is ready for `events` or `deadline` passes: 1 ready,
 * 0 timed out, -1 error. */
static int
wait_fd(int fd, short events, long deadline)
{
    for (;;) {
        long left = deadline - monotime_ms();
        struct pollfd p = {fd, events, 0};
        int r;

        if (left <= 0)
            return 0;
        r = poll(&p, 1, (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
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
            int r = wait_fd(c->fd, POLLOUT, deadline);
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
        char *nl = c->rlen ? memchr(c->rbuf, '\n', c->rlen) : NULL;
        ssize_t n;
        int r;

        if (nl != NULL) {
            *nl = '\0';
            *len = (size_t)(nl - c->rbuf);
            return 0;
        }
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
        r = wait_fd(c->fd, POLLIN, deadline);
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
}

int
mcp_stdio_exchange(struct mcp_conn *c, const char *text, size_t len, long id,
                   struct json_t **answer, struct mcp_err *e)
{
    long deadline = monotime_ms() + c->cfg->timeout_ms;

    *answer = NULL;
    if (send_all(c, text, len, deadline, e) != 0 ||
        send_all(c, "\n", 1, deadline, e) != 0)
        return -1;
    if (id < 0)
        return 0;
    for (int skipped = 0; skipped <= MCP_MAX_SKIPPED; skipped++) {
        char reply[256];
        json_error_t jerr;
        json_t *msg;
        size_t n;
        bool oom = false;

        if (read_line(c, &n, deadline, e) != 0)
            return -1;
        /* a line that is not JSON is a server's stray log: skipped */
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
        json_decref(msg);
        if (reply[0] != '\0' &&
            (send_all(c, reply, strlen(reply), deadline, e) != 0 ||
             send_all(c, "\n", 1, deadline, e) != 0))
            return -1;
    }
    mcp_err_set(e, MCP_PROTO, "server '%s' sent too many other messages",
                c->cfg->name);
    return -1;
}
