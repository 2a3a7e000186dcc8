/*
 * logmsg.c - diagnostics and access lines, one write(2) per line so lines
 * from several threads and workers sharing the output never interleave.
 *
 * It stands alone (the fuzzers link it with a few core files only): the
 * JSON escaping below is its own, on a stack buffer, allocation-free.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/logmsg.h"
#include "core/utf8.h" /* utf8_seq_len only: inline */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A message is cut at this many bytes; its line, escaped for JSON (six
 * bytes a byte at worst) with the head and the access members, fits
 * LOGMSG_LINE_MAX. */
#define LOGMSG_MSG_MAX  1024
#define LOGMSG_LINE_MAX (LOGMSG_MSG_MAX * 6 + 1024)

/* Set in main() and by serve's master before it forks (logmsg.h);
 * read-only while threads run. The descriptor's number never changes
 * once a file is open: logmsg_reopen() puts the new file under it. */
static struct {
    enum logmsg_level threshold;
    enum logmsg_format format;
    int fd; /* the log file; -1: stderr */
    char path[PATH_MAX];
} logmsg_out = {LOG_LVL_INFO, LOG_FMT_TEXT, -1, ""};

void
logmsg_set_level(enum logmsg_level lvl)
{
    logmsg_out.threshold = lvl;
}

bool
logmsg_enabled(enum logmsg_level lvl)
{
    return lvl <= logmsg_out.threshold;
}

static int
open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
                0640);
}

/* Put the file `nfd` under logmsg_out.fd (or make it that), closing nfd. */
static int
install_fd(int nfd)
{
    int e;

    if (logmsg_out.fd < 0) {
        logmsg_out.fd = nfd;
        return 0;
    }
    if (dup3(nfd, logmsg_out.fd, O_CLOEXEC) < 0) {
        e = errno;
        close(nfd);
        errno = e;
        return -1;
    }
    close(nfd);
    return 0;
}

int
logmsg_set_output(enum logmsg_format fmt, const char *path)
{
    int nfd;

    if (path == NULL) {
        if (logmsg_out.fd >= 0)
            close(logmsg_out.fd);
        logmsg_out.fd = -1;
        logmsg_out.path[0] = '\0';
        logmsg_out.format = fmt;
        return 0;
    }
    if (strlen(path) >= sizeof(logmsg_out.path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    nfd = open_log(path);
    if (nfd < 0 || install_fd(nfd) != 0)
        return -1;
    memmove(logmsg_out.path, path, strlen(path) + 1);
    logmsg_out.format = fmt;
    return 0;
}

int
logmsg_reopen(void)
{
    int nfd;

    if (logmsg_out.fd < 0)
        return 0;
    nfd = open_log(logmsg_out.path);
    return nfd < 0 ? -1 : install_fd(nfd);
}

/* --- rendering ------------------------------------------------------------- */

/* Where the line goes: `end` is where the reserved tail starts. Once a
 * piece does not fit, end = p: nothing after it fits either, so a cut
 * line is a prefix of the whole one. */
struct out {
    char *p, *end;
};

static void
put(struct out *o, const char *s, size_t n)
{
    if ((size_t)(o->end - o->p) < n) {
        o->end = o->p;
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

static void putf(struct out *o, const char *fmt, ...) ATTR_FMT(2, 3);

static void
putf(struct out *o, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        o->end = o->p;
        return;
    }
    put(o, tmp, (size_t)n);
}

/* Text: a control byte would break the line in two (or forge one): '?'. */
static void
put_text(struct out *o, const char *s)
{
    for (; *s != '\0' && o->p < o->end; s++) {
        unsigned char c = (unsigned char)*s;
        *o->p++ = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
    }
}

/* A JSON string: escaped, ill-formed UTF-8 as U+FFFD; the closing quote
 * always fits (the caller left room for `""`). */
static void
put_json(struct out *o, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t left = strlen(s);

    put(o, "\"", 1);
    o->end--; /* the closing quote's room */
    while (left > 0 && o->p < o->end) {
        unsigned c = u[0];
        size_t n = 1;
        char esc[8];

        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(o, esc, 2);
        } else if (c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\', esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            put(o, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(o, esc, 6);
        } else if (c < 0x80) {
            put(o, (const char *)u, 1);
        } else if ((n = utf8_seq_len(u, left)) != 0) {
            put(o, (const char *)u, n);
        } else {
            n = 1;
            put(o, "\\ufffd", 6);
        }
        u += n;
        left -= n;
    }
    o->end++;
    put(o, "\"", 1);
}

/* `,"key":"value"` whole, or (no room for the key and "") nothing more. */
static void
put_json_member(struct out *o, const char *key, const char *value)
{
    size_t k = strlen(key);

    if ((size_t)(o->end - o->p) < k + 6) {
        o->end = o->p;
        return;
    }
    putf(o, ",\"%s\":", key);
    put_json(o, value ? value : "");
}

static void
put_time(struct out *o, const struct timespec *now)
{
    struct tm tm;
    char t[64];
    size_t n;

    if (gmtime_r(&now->tv_sec, &tm) == NULL ||
        (n = strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
        put(o, "-", 1);
        return;
    }
    snprintf(t + n, sizeof(t) - n, ".%03ldZ", now->tv_nsec / 1000000 % 1000);
    put(o, t, strlen(t));
}

static void
render_text(struct out *o, const char *level, long pid, const char *msg,
            const struct logmsg_access *a)
{
    putf(o, " gemini-agent[%ld]: %s: ", pid, level);
    if (a == NULL) {
        put_text(o, msg);
        return;
    }
    put_text(o, "access id=");
    put_text(o, a->id);
    put_text(o, " method=");
    put_text(o, a->method);
    put_text(o, " route=");
    put_text(o, a->route);
    putf(o, " status=%d ms=%ld gemini_calls=%d tokens_in=%ld tokens_out=%ld",
         a->status, a->ms, a->gemini_calls, a->tokens_in, a->tokens_out);
}

static void
render_json(struct out *o, const char *level, long pid, const char *msg,
            const struct logmsg_access *a)
{
    putf(o, "\",\"level\":\"%s\",\"pid\":%ld", level, pid);
    put_json_member(o, "msg", a != NULL ? "access" : msg);
    if (a == NULL)
        return;
    put_json_member(o, "id", a->id);
    put_json_member(o, "method", a->method);
    put_json_member(o, "route", a->route);
    putf(o,
         ",\"status\":%d,\"ms\":%ld,\"gemini_calls\":%d,\"tokens_in\":%ld,"
         "\"tokens_out\":%ld",
         a->status, a->ms, a->gemini_calls, a->tokens_in, a->tokens_out);
}

size_t
logmsg_render(char *buf, size_t size, enum logmsg_format fmt,
              enum logmsg_level lvl, const struct timespec *now, long pid,
              const char *msg, const struct logmsg_access *a)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *level = (unsigned)lvl < ARRAY_SIZE(names) ? names[lvl] : "?";
    struct out o = {buf, buf + size};

    if (size < LOGMSG_RENDER_MIN) {
        if (size > 0)
            buf[0] = '\0';
        return 0;
    }
    o.end -= 3; /* the tail: "}\n" or "\n", and a NUL */
    if (fmt == LOG_FMT_JSON) {
        put(&o, "{\"time\":\"", 9);
        put_time(&o, now);
        render_json(&o, level, pid, msg ? msg : "", a);
        *o.p++ = '}';
    } else {
        put_time(&o, now);
        render_text(&o, level, pid, msg ? msg : "", a);
    }
    *o.p++ = '\n';
    *o.p = '\0';
    return (size_t)(o.p - buf);
}

/* --- writing --------------------------------------------------------------- */

static void
emit(enum logmsg_level lvl, const char *msg, const struct logmsg_access *a)
{
    char line[LOGMSG_LINE_MAX];
    struct timespec now = {0, 0};
    size_t n;

    clock_gettime(CLOCK_REALTIME, &now);
    n = logmsg_render(line, sizeof(line), logmsg_out.format, lvl, &now,
                      (long)getpid(), msg, a);
    if (write(logmsg_out.fd >= 0 ? logmsg_out.fd : STDERR_FILENO, line, n) <
        0) {
        /* nothing sensible to do: the log is gone */
    }
}

void
logmsg(enum logmsg_level lvl, const char *fmt, ...)
{
    char msg[LOGMSG_MSG_MAX];
    va_list ap;

    if (lvl > logmsg_out.threshold)
        return;
    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    emit(lvl, msg, NULL);
}

void
logmsg_access(const struct logmsg_access *a)
{
    if (LOG_LVL_INFO <= logmsg_out.threshold)
        emit(LOG_LVL_INFO, NULL, a);
}
