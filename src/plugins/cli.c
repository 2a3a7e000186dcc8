/*
 * cli.c - the built-in plugin `cli`: one tool, Claude Code's `Bash`
 * {command, timeout?, description?}, that runs a shell command for the
 * coding agent and answers what it did as Claude Code does: {"text": the
 * tool_result content, "stdout", "stderr", "interrupted", ...}; its tool
 * and config are in docs/plugins/cli.md.
 *
 * `/bin/sh -c <command>` starts in `root` with stdin on /dev/null, in a
 * process group of its own, with the server's environment less the
 * Gemini and Google credentials (core/credenv.h) plus the config's `env`
 * and `extraPaths` (prepended to PATH). It inherits none
 * of the server's file descriptors beyond 0-2 (posix_spawn's closefrom
 * action), and every signal is back at its default. Its stdout and stderr
 * are read until both close; each keeps at most maxOutputBytes (the rest
 * is read and dropped, so the command never blocks on a full pipe). When
 * the timeout passes, the whole process group is killed; when the shell
 * exits but something it left in the background still holds the pipes,
 * the group is killed after CLI_DRAIN_MS. When the host cancels the call
 * (ctx->cancelled, asked every CLI_CANCEL_CHECK_MS: the terminal's
 * interrupt), the group gets SIGTERM, then SIGKILL after
 * CLI_KILL_GRACE_MS, and the call fails with Claude Code's <error>.
 * Nothing it started outlives the call, and the shell is always reaped.
 *
 * Not a sandbox: it is the terminal client's (GEMINI_AGENT_TERMINAL_ONLY),
 * and each command runs with the user's rights after the user's approval
 * (sideEffects). Thread-safe: the instance is read-only after
 * initialize(); each call has its own pipes and child.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"
#include "plugins/cli.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "plugins/bounds.h"
#include "registry/bounds.h"
#include "core/credenv.h"
#include "core/memlimit.h"
#include "core/monotime.h"
#include "core/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct cli {
    char *root;        /* canonical folder commands start in */
    char **envp;       /* their environment, NULL-terminated */
    long timeout_ms;   /* timeoutMs */
    size_t max_output; /* maxOutputBytes, each of stdout and stderr */
};

/* What one stream of the command said. */
struct cli_stream {
    int fd;    /* the read end, -1 once closed */
    char *buf; /* max_output bytes */
    size_t len;
    bool cut;             /* more came than was kept */
    size_t dropped_lines; /* newlines in what was not kept */
};

/* --- answers ------------------------------------------------------------ */

/* The stream's bytes made UTF-8 in place: a cut never splits a
 * character (the cut point is moved back), and bytes that are not UTF-8
 * become '?'. */
static void
cli_sanitize(struct cli_stream *s)
{
    unsigned char *p = (unsigned char *)s->buf;

    if (s->cut)
        s->len = utf8_cut(s->buf, s->len);
    for (size_t i = 0; i < s->len;) {
        size_t n = p[i] < 0x80 ? 1 : utf8_seq_len(p + i, s->len - i);
        if (n == 0) {
            p[i] = '?';
            n = 1;
        }
        i += n;
    }
}

static bool
cli_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/*
 * Claude Code's form of one stream, into f: stdout without its leading
 * blank lines (`stdout`), stderr without leading white space, both
 * without trailing white space; then cut to CLI_BASH_OUTPUT_CHARS
 * characters with its "... [N lines truncated] ..." (N: the lines after
 * the cut, the ones not kept at all included). Returns the bytes written.
 */
static size_t
cli_format(FILE *f, const struct cli_stream *s, bool stdout_)
{
    const char *b = s->buf, *e = s->buf + s->len;
    size_t i = 0, chars = 0, rest;

    if (stdout_) {
        /* leading blank lines: up to the last \n before any text */
        const char *p = b;
        while (p < e && cli_space(*p)) {
            if (*p == '\n')
                b = p + 1;
            p++;
        }
    } else {
        while (b < e && cli_space(*b))
            b++;
    }
    while (e > b && cli_space(e[-1]))
        e--;
    for (; b + i < e && chars < CLI_BASH_OUTPUT_CHARS; chars++) {
        unsigned char c = (unsigned char)b[i];
        i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    }
    if (b + i > e)
        i = (size_t)(e - b);
    fwrite(b, 1, i, f);
    if (b + i == e && !s->cut)
        return i;
    rest = 1 + s->dropped_lines;
    for (const char *p = b + i; p < e; p++)
        rest += *p == '\n';
    fprintf(f, "\n\n... [%zu lines truncated] ...", rest);
    return i + 1;
}

/* The stream as Claude Code formats it, a new string (NULL: no memory). */
static char *
cli_stream_text(const struct cli_stream *s, bool stdout_)
{
    char *t = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&t, &len);

    if (f == NULL)
        return NULL;
    cli_format(f, s, stdout_);
    if (fclose(f) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

/* --- running a command ---------------------------------------------------- */

/* Read what `s` has (poll said it is readable): keep what fits. */
static void
cli_drain(struct cli_stream *s, size_t max)
{
    char chunk[8192];
    ssize_t r = read(s->fd, chunk, sizeof(chunk));

    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        close(s->fd);
        s->fd = -1;
        return;
    }
    {
        size_t take = s->len >= max              ? 0
                      : (size_t)r < max - s->len ? (size_t)r
                                                 : max - s->len;
        memcpy(s->buf + s->len, chunk, take);
        s->len += take;
        if (take < (size_t)r) {
            s->cut = true;
            for (size_t i = take; i < (size_t)r; i++)
                s->dropped_lines += chunk[i] == '\n';
        }
    }
}

/* Has `pid` exited? It stays a zombie (WNOWAIT), so its process group id
 * cannot be reused before we kill the group and reap it. */
static bool
cli_exited(pid_t pid)
{
    siginfo_t si;

    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return si.si_pid == pid;
}

/* Start the command; 0 with *pid and the read ends, or an errno value. */
static int
cli_spawn(const struct cli *c, const char *command, pid_t *pid, int *out_fd,
          int *err_fd)
{
    char *const argv[] = {(char *)UNCONST("sh"), (char *)UNCONST("-c"),
                          (char *)UNCONST(command), NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    sigset_t none, all;
    int rc;

    /* O_CLOEXEC: a command another thread starts meanwhile must not
     * inherit this one's pipes (it would hold them open) */
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
        rc = errno;
        if (po[0] >= 0) {
            close(po[0]);
            close(po[1]);
        }
        return rc;
    }
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
                                               0)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, po[1], 1)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, pe[1], 2)) != 0 ||
        (rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0 ||
        (rc = posix_spawn_file_actions_addchdir_np(&fa, c->root)) != 0 ||
        (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                                POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF)) != 0 ||
        (rc = posix_spawnattr_setpgroup(&at, 0)) != 0 ||
        (rc = posix_spawnattr_setsigmask(&at, &none)) != 0 ||
        (rc = posix_spawnattr_setsigdefault(&at, &all)) != 0)
        goto out;
    rc = posix_spawn(pid, "/bin/sh", &fa, &at, argv, c->envp);
out:
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    close(pe[1]);
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        return rc;
    }
    *out_fd = po[0];
    *err_fd = pe[0];
    return 0;
}

/* Has the caller given up on the call (ctx->cancelled, ABI 3)? A host
 * may leave it NULL (a test's ctx): nobody cancels. */
static bool
cli_cancelled(const struct gemini_agent_ctx *ctx)
{
    return ctx != NULL && ctx->cancelled != NULL && ctx->cancelled(ctx) != 0;
}

/* What one command did. */
struct cli_outcome {
    struct cli_stream so, se; /* its stdout and stderr */
    int status;               /* as waitpid() gave it */
    bool timed_out;           /* killed at its timeout */
    bool interrupted;         /* the caller cancelled the call */
};

/* Wait at most `wait` ms for output on r's open streams and read it. */
static void
cli_read_some(const struct cli *c, struct cli_outcome *r, long wait)
{
    struct pollfd pf[2];
    struct cli_stream *of[2];
    nfds_t n = 0;

    if (r->so.fd >= 0) {
        pf[n] = (struct pollfd){.fd = r->so.fd, .events = POLLIN};
        of[n++] = &r->so;
    }
    if (r->se.fd >= 0) {
        pf[n] = (struct pollfd){.fd = r->se.fd, .events = POLLIN};
        of[n++] = &r->se;
    }
    if (poll(pf, n, (int)wait) < 0)
        return; /* EINTR */
    for (nfds_t i = 0; i < n; i++)
        if (pf[i].revents != 0)
            cli_drain(of[i], c->max_output);
}

/*
 * Run `command` for at most timeout_ms: its output, status and why it
 * stopped in r (whose streams' buffers are set). When the caller cancels
 * the call (asked every CLI_CANCEL_CHECK_MS), the process group gets
 * SIGTERM, then SIGKILL after CLI_KILL_GRACE_MS at most, and
 * r->interrupted is set. 0, or an errno value when it could not start.
 */
static int
cli_run(const struct cli *c, const struct gemini_agent_ctx *ctx,
        const char *command, long timeout_ms, struct cli_outcome *r)
{
    long deadline, exited_at = -1, asked_at, term_at = -1;
    pid_t pid;
    int rc;

    r->timed_out = r->interrupted = false;
    if ((rc = cli_spawn(c, command, &pid, &r->so.fd, &r->se.fd)) != 0)
        return rc;
    deadline = monotime_ms() + timeout_ms;
    asked_at = monotime_ms();
    for (;;) {
        long now = monotime_ms();

        if (exited_at < 0 && cli_exited(pid))
            exited_at = now;
        if (exited_at >= 0 && r->so.fd < 0 && r->se.fd < 0)
            break; /* done */
        if (now >= deadline && term_at < 0) {
            r->timed_out = true;
            break;
        }
        if (exited_at >= 0 && now - exited_at >= CLI_DRAIN_MS)
            break; /* the shell is gone; its leftovers hold the pipes */
        if (term_at >= 0 && now - term_at >= CLI_KILL_GRACE_MS)
            break; /* it ignored SIGTERM: SIGKILL below */
        if (term_at < 0 && now - asked_at >= CLI_CANCEL_CHECK_MS) {
            asked_at = now;
            if (cli_cancelled(ctx)) {
                /* a chance to clean up, as a shell's Ctrl-C gives one;
                 * the group: the shell and whatever it started */
                r->interrupted = true;
                (void)kill(-pid, SIGTERM);
                term_at = now;
                continue;
            }
        }
        /* wake up now and then to notice the shell's exit */
        cli_read_some(c, r, deadline - now > 20 ? 20 : deadline - now);
    }
    /* the whole group, whether it is still running or not: the leader is
     * at most a zombie, so the group id is still ours */
    (void)kill(-pid, SIGKILL);
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* Claude Code's words for a command stopped before its end. */
#define CLI_ABORTED "<error>Command was aborted before completion</error>"

/* One Bash call. */
struct cli_call {
    json_t *args; /* the decoded arguments, which command borrows */
    const char *command;
    json_int_t timeout; /* ms */
    struct cli_outcome r;
};

/* Bash's arguments args[len] into call->command and call->timeout (the
 * config's when not given). 0, or -1 with the model's message in msg. */
static int
cli_args(const struct cli *c, const char *args, size_t len,
         struct cli_call *call, char *msg, size_t size)
{
    const char *description = NULL;
    json_error_t jerr;
    size_t clen;

    call->timeout = c->timeout_ms;
    call->args = json_loadb(args, len, JSON_REJECT_DUPLICATES, &jerr);
    if (call->args == NULL ||
        json_unpack_ex(call->args, &jerr, JSON_STRICT, "{s:s%, s?I, s?s}",
                       "command", &call->command, &clen, "timeout",
                       &call->timeout, "description", &description) != 0) {
        snprintf(msg, size, "InputValidationError: %s", jerr.text);
        return -1;
    }
    if (clen == 0 || strlen(call->command) != clen) {
        snprintf(msg, size, "command must be a non-empty string without NUL");
        return -1;
    }
    if (call->timeout < 1 || call->timeout > BOUND_CLI_TIMEOUT_MS) {
        snprintf(msg, size, "timeout must be 1 to %d milliseconds",
                 BOUND_CLI_TIMEOUT_MS);
        return -1;
    }
    return 0;
}

/*
 * Claude Code's tool_result: a failed command's exit code first, then
 * stdout and stderr, the empty ones left out, joined by \n; one killed at
 * its timeout ends with its <error>. A new string, or NULL.
 */
static char *
cli_result_text(const struct cli_outcome *r, int code, const char *sout,
                const char *serr)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);

    if (f == NULL)
        return NULL;
    if (code != 0 && !r->timed_out && !r->interrupted)
        fprintf(f, "Exit code %d", code);
    if (sout[0] != '\0')
        fprintf(f, "%s%s", ftell(f) > 0 ? "\n" : "", sout);
    if (serr[0] != '\0')
        fprintf(f, "%s%s", ftell(f) > 0 ? "\n" : "", serr);
    if (r->timed_out)
        fprintf(f, "%s" CLI_ABORTED, ftell(f) > 0 ? "\n" : "");
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Claude Code's interrupted Bash is an error (is_error): the output so
 * far (text), as much as the host keeps of a plugin's error message,
 * then the <error>. */
static int
cli_answer_interrupted(const struct gemini_agent_ctx *ctx,
                       struct gemini_agent_out *out, const char *text)
{
    size_t n = strlen(text), room = BOUND_SO_MESSAGE - sizeof(CLI_ABORTED);

    if (n > room)
        n = utf8_cut(text, room);
    return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "%.*s%s" CLI_ABORTED,
                       (int)n, text, n > 0 ? "\n" : "");
}

/* The answer to a command that ran: r's streams are made UTF-8. */
static int
cli_answer(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
           struct cli_outcome *r)
{
    /* the shell's convention: a signal N is exit code 128 + N */
    int code = WIFEXITED(r->status)     ? WEXITSTATUS(r->status)
               : WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status)
                                        : -1;
    char *sout, *serr, *text = NULL;
    json_t *res;
    int rc;

    cli_sanitize(&r->so);
    cli_sanitize(&r->se);
    sout = cli_stream_text(&r->so, true);
    serr = cli_stream_text(&r->se, false);
    if (sout == NULL || serr == NULL ||
        (text = cli_result_text(r, code, sout, serr)) == NULL) {
        rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    } else if (r->interrupted) {
        rc = cli_answer_interrupted(ctx, out, text);
    } else {
        res = json_pack("{s:s, s:s, s:s, s:b, s:b, s:i, s:b, s:b}", "text",
                        text, "stdout", sout, "stderr", serr, "interrupted",
                        r->timed_out, "isImage", 0, "exitCode", code,
                        "timedOut", r->timed_out, "truncated",
                        r->so.cut || r->se.cut);
        rc = answer_json(ctx, out, res);
    }
    free(sout);
    free(serr);
    free(text);
    return rc;
}

static void
cli_call_release(struct cli_call *call)
{
    if (call->r.so.fd >= 0)
        close(call->r.so.fd);
    if (call->r.se.fd >= 0)
        close(call->r.se.fd);
    free(call->r.so.buf);
    free(call->r.se.buf);
    json_decref(call->args);
}

static int
cli_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
            const char *args, size_t args_len, struct gemini_agent_out *out)
{
    const struct cli *c = self;
    struct cli_call call = {.r = {.so = {.fd = -1}, .se = {.fd = -1}}};
    char msg[STATUS_TEXT_MAX];
    int rc;

    if (c == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "not initialised");
    if (strcmp(tool, "Bash") != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "Error: No such tool available: %.64s", tool);
    if (cli_args(c, args, args_len, &call, msg, sizeof(msg)) != 0) {
        rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
        goto out;
    }
    call.r.so.buf = memlimit_malloc(c->max_output + 1);
    call.r.se.buf = memlimit_malloc(c->max_output + 1);
    if (call.r.so.buf == NULL || call.r.se.buf == NULL) {
        rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
        goto out;
    }
    if ((rc = cli_run(c, ctx, call.command, (long)call.timeout, &call.r)) !=
        0) {
        rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                         "cannot run the command: %s", strerror(rc));
        goto out;
    }
    rc = cli_answer(ctx, out, &call.r);
out:
    cli_call_release(&call);
    return rc;
}

/* --- configuration --------------------------------------------------------- */

static void
cli_free(struct cli *c)
{
    if (c == NULL)
        return;
    free(c->root);
    if (c->envp != NULL)
        for (char **e = c->envp; *e != NULL; e++)
            free(*e);
    free(c->envp);
    free(c);
}

static bool
cli_env_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s != '\0'; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* `p` made absolute against `base` (itself absolute): a new string. */
static char *
cli_abs(const char *base, const char *p)
{
    char *s = NULL;

    if (p[0] == '/')
        return strdup(p);
    return asprintf(&s, "%s/%s", base, p) < 0 ? NULL : s;
}

/* Is `name` (NAME=...) the entry `e`'s name? */
static bool
cli_env_is(const char *e, const char *name)
{
    size_t n = strlen(name);

    return strncmp(e, name, n) == 0 && e[n] == '=';
}

/* "PATH=<extra 1>:<extra 2>:...:<path>" into *entry (heap), the `extra`
 * folders made absolute against `base`. 0, or -1 with err set. */
static int
cli_path_entry(const json_t *extra, const char *base, const char *path,
               char **entry, char *err, size_t errsize)
{
    char *newpath = NULL;
    size_t plen = 0, i;
    const json_t *v;
    FILE *f;

    if ((f = open_memstream(&newpath, &plen)) == NULL)
        goto oom;
    fputs("PATH=", f);
    json_array_foreach(extra, i, v) {
        const char *d = json_string_value(v);
        char *a;
        if (d == NULL || d[0] == '\0' || strchr(d, ':') != NULL) {
            fclose(f);
            free(newpath);
            snprintf(err, errsize,
                     "extraPaths: each entry must be a folder name without "
                     "':'");
            return -1;
        }
        if ((a = cli_abs(base, d)) == NULL) {
            fclose(f);
            free(newpath);
            goto oom;
        }
        fprintf(f, "%s:", a);
        free(a);
    }
    fputs(path, f);
    if (fclose(f) != 0) {
        free(newpath);
        goto oom;
    }
    *entry = newpath;
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/*
 * The commands' environment: the server's less the credentials, with
 * `env`'s entries in place of (or beside) its own and `extra` folders in
 * front of PATH. 0, or -1 with err set.
 */
static int
cli_environment(struct cli *c, const json_t *env, const json_t *extra,
                const char *base, char *err, size_t errsize)
{
    size_t n = 0, k = 0;
    const char *key, *path = "/usr/local/bin:/usr/bin:/bin";
    const json_t *v;
    /* ours less the credentials (core/credenv.h): a command's output goes
     * to Gemini and into the saved session */
    char **base_env = credenv_clean(environ, 0);

    if (base_env == NULL)
        goto oom;
    for (char **e = base_env; *e != NULL; e++)
        n++;
    n += (env ? json_object_size(env) : 0) + 2;
    if ((c->envp = calloc(n, sizeof(*c->envp))) == NULL)
        goto oom;
    for (char **e = base_env; *e != NULL; e++) {
        bool over = cli_env_is(*e, "PATH");
        json_object_foreach(UNCONST(env), key, v)
            over = over || cli_env_is(*e, key);
        if (cli_env_is(*e, "PATH") && !(env && json_object_get(env, "PATH")))
            path = *e + 5;
        if (over)
            continue;
        if ((c->envp[k++] = strdup(*e)) == NULL)
            goto oom;
    }
    json_object_foreach(UNCONST(env), key, v) {
        if (!cli_env_name(key) || !json_is_string(v)) {
            snprintf(err, errsize,
                     "env: '%.64s' must be a variable name with a string "
                     "value",
                     key);
            free(base_env);
            return -1;
        }
        if (strcmp(key, "PATH") == 0) {
            path = json_string_value(v);
            continue;
        }
        if (asprintf(&c->envp[k], "%s=%s", key, json_string_value(v)) < 0) {
            c->envp[k] = NULL;
            goto oom;
        }
        k++;
    }
    if (cli_path_entry(extra, base, path, &c->envp[k], err, errsize) != 0) {
        free(base_env);
        return -1;
    }
    free(base_env);
    return 0;
oom:
    free(base_env);
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* Are the config's timeoutMs, maxOutputBytes, extraPaths and env within
 * their bounds? 0, or -1 with err set. */
static int
cli_check_config(json_int_t timeout, json_int_t max, const json_t *extra,
                 const json_t *env, char *err, size_t errsize)
{
    if (timeout < 1 || timeout > BOUND_CLI_TIMEOUT_MS || max < 1 ||
        max > BOUND_CLI_OUTPUT_BYTES) {
        snprintf(err, errsize,
                 "timeoutMs must be 1 to %d and maxOutputBytes 1 to %u",
                 BOUND_CLI_TIMEOUT_MS, BOUND_CLI_OUTPUT_BYTES);
        return -1;
    }
    if ((extra != NULL &&
         (!json_is_array(extra) ||
          json_array_size(extra) > BOUND_CLI_CONFIG_ENTRIES)) ||
        (env != NULL && (!json_is_object(env) ||
                         json_object_size(env) > BOUND_CLI_CONFIG_ENTRIES))) {
        snprintf(err, errsize,
                 "extraPaths must be a list and env a map, of at most %d "
                 "entries",
                 BOUND_CLI_CONFIG_ENTRIES);
        return -1;
    }
    return 0;
}

/* c->root: `root` against `base` (the cwd when not given), canonical.
 * 0, or -1 with err set. */
static int
cli_set_root(struct cli *c, const char *root, const char *base, const char *cwd,
             char *err, size_t errsize)
{
    char buf[PATH_MAX];
    struct stat st;
    char *r = root ? cli_abs(base, root) : strdup(cwd);
    int rc = -1;

    if (r == NULL)
        snprintf(err, errsize, "out of memory");
    else if (realpath(r, buf) == NULL || stat(buf, &st) != 0 ||
             !S_ISDIR(st.st_mode))
        snprintf(err, errsize, "root '%.200s' is not a folder", r);
    else if ((c->root = strdup(buf)) == NULL)
        snprintf(err, errsize, "out of memory");
    else
        rc = 0;
    free(r);
    return rc;
}

static int
cli_initialize(const struct gemini_agent_init *init, void **self, char *err,
               size_t errsize)
{
    const char *root = NULL;
    const char *base = init->config_dir ? init->config_dir : ".";
    json_int_t timeout = DEFAULT_CLI_TIMEOUT_MS, max = DEFAULT_CLI_OUTPUT_BYTES;
    json_t *c = NULL, *env = NULL, *extra = NULL;
    char cwd[PATH_MAX];
    char *b = NULL;
    struct cli *cl = NULL;
    json_error_t jerr;

    c = json_loadb(init->config, init->config_len, JSON_REJECT_DUPLICATES,
                   &jerr);
    if (c == NULL ||
        json_unpack_ex(c, &jerr, JSON_STRICT, "{s?s, s?o, s?I, s?I, s?o}",
                       "root", &root, "extraPaths", &extra, "timeoutMs",
                       &timeout, "maxOutputBytes", &max, "env", &env) != 0) {
        snprintf(err, errsize, "bad config: %s", jerr.text);
        goto fail;
    }
    if (cli_check_config(timeout, max, extra, env, err, errsize) != 0)
        goto fail;
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        snprintf(err, errsize, "cannot read the working folder: %s",
                 strerror(errno));
        goto fail;
    }
    /* relative paths of the config: against agent.yaml's folder */
    if ((b = cli_abs(cwd, base)) == NULL ||
        (cl = calloc(1, sizeof(*cl))) == NULL) {
        snprintf(err, errsize, "out of memory");
        goto fail;
    }
    if (cli_set_root(cl, root, b, cwd, err, errsize) != 0)
        goto fail;
    cl->timeout_ms = (long)timeout;
    cl->max_output = (size_t)max;
    if (cli_environment(cl, env, extra, b, err, errsize) != 0)
        goto fail;
    json_decref(c);
    free(b);
    *self = cl;
    return 0;
fail:
    json_decref(c);
    free(b);
    cli_free(cl);
    return -1;
}

static void
cli_shutdown(void *self)
{
    cli_free(self);
}

static const char *
cli_decls(void *self)
{
    (void)self;
    return "[{\"name\":\"Bash\",\"description\":\"Executes a bash command "
           "(/bin/sh -c) in the working directory with an optional timeout "
           "in milliseconds (default 120000, at most 600000), stdin empty. "
           "Output longer than 30000 characters is truncated. Answers "
           "stdout and stderr; a failed command's exit code comes "
           "first.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
           "\"command\":{\"type\":\"string\",\"minLength\":1,"
           "\"description\":\"The command to execute\"},\"timeout\":{"
           "\"type\":\"integer\",\"minimum\":1,\"maximum\":600000,"
           "\"description\":\"Optional timeout in milliseconds (max "
           "600000)\"},\"description\":{\"type\":\"string\","
           "\"description\":\"Clear, concise description of what this "
           "command does in 5-10 words\"}},\"required\":[\"command\"],"
           "\"additionalProperties\":false},\"sideEffects\":true}]";
}

static const char *
cli_instructions(void *self)
{
    (void)self;
    return "Bash runs a shell command in the user's working directory with "
           "no input and a timeout; prefer short, non-interactive commands "
           "and read their exit code. Remove files with Bash (rm).";
}

static const char *
cli_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{"
           "\"root\":{\"type\":\"string\",\"minLength\":1},"
           "\"extraPaths\":{\"type\":\"array\",\"maxItems\":64,\"items\":"
           "{\"type\":\"string\",\"minLength\":1}},"
           "\"timeoutMs\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":600000},"
           "\"maxOutputBytes\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":65536},"
           "\"env\":{\"type\":\"object\",\"additionalProperties\":"
           "{\"type\":\"string\"}}},\"additionalProperties\":false}";
}
#if BOUND_CLI_TIMEOUT_MS != 600000 || BOUND_CLI_OUTPUT_BYTES != 65536 ||       \
    BOUND_CLI_CONFIG_ENTRIES != 64
#error "cli_schema() and cli_decls() must state the cli bounds"
#endif

static const struct gemini_agent_plugin cli_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "cli",
    .declarations = cli_decls,
    .execute = cli_execute,
    .initialize = cli_initialize,
    .shutdown = cli_shutdown,
    .system_instructions = cli_instructions,
    .config_schema = cli_schema,
    .flags = GEMINI_AGENT_TERMINAL_ONLY,
};

const struct gemini_agent_plugin *
builtin_cli(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &cli_plugin : NULL;
}
