/*
 * ndjson.c - the loop's events as NDJSON lines (see ndjson.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/ndjson.h"
#include "agent/loop.h"
#include "http/httpio.h"
#include "http/reply.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/monotime.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <jansson.h>
#include <string.h>

void
ndjson_init(struct ndjson *s, struct httpio *io, long heartbeat_ms)
{
    memset(s, 0, sizeof(*s));
    s->io = io;
    s->heartbeat_ms = heartbeat_ms;
    s->last_ms = monotime_ms();
    s->status = "thinking";
    /* a line is small; only a result is large, and it is written in
     * place, not built here */
    sbuf_init(&s->line, SIZE_MAX / 2);
}

void
ndjson_release(struct ndjson *s)
{
    sbuf_release(&s->line);
}

static int
gone(struct status_error *err)
{
    return status_set(err, ST_CLIENT_GONE,
                      "the visitor hung up; the stream was dropped");
}

/* Write bytes of the answer; the head first if it is not out yet. */
static int
put(struct ndjson *s, const char *p, size_t n, struct status_error *err)
{
    if (!s->started) {
        s->started = true;
        if (reply_stream_head(s->io, NDJSON_TYPE "; charset=utf-8") != 0)
            return gone(err);
    }
    return s->io->ops->write(s->io->ctx, p, n) == 0 ? 0 : gone(err);
}

/* The line built in s->line, ended, written and passed on. */
static int
send_line(struct ndjson *s, int rc, struct status_error *err)
{
    if (rc != 0 || sbuf_putc(&s->line, '\n') != 0)
        return status_oom(err);
    if (put(s, s->line.buf, s->line.len, err) != 0)
        return -1;
    if (s->io->ops->flush != NULL && s->io->ops->flush(s->io->ctx) != 0)
        return gone(err);
    s->last_ms = monotime_ms();
    return 0;
}

/* Start a line: {"type":"<type>" */
static int
begin(struct ndjson *s, const char *type)
{
    sbuf_reset(&s->line);
    return sbuf_adds(&s->line, "{\"type\":\"") | sbuf_adds(&s->line, type) |
           sbuf_putc(&s->line, '"');
}

/* ,"key": */
static int
key(struct ndjson *s, const char *k)
{
    return sbuf_adds(&s->line, ",\"") | sbuf_adds(&s->line, k) |
           sbuf_adds(&s->line, "\":");
}

static int
string(struct ndjson *s, const char *v)
{
    return jsonout_string(&s->line, v, strlen(v));
}

static int
write_status(struct ndjson *s, bool heartbeat, struct status_error *err)
{
    int rc = begin(s, "status") | key(s, "status") | string(s, s->status);

    if (s->tool[0] != '\0')
        rc |= key(s, "tool") | string(s, s->tool);
    if (s->thread != NULL)
        rc |= key(s, "threadId") | string(s, s->thread);
    if (heartbeat)
        rc |= key(s, "heartbeat") | sbuf_adds(&s->line, "true");
    rc |= sbuf_putc(&s->line, '}');
    s->pending = false;
    return send_line(s, rc, err);
}

/* Before any other line: the status it follows, if that waits. */
static int
flush_status(struct ndjson *s, struct status_error *err)
{
    return s->pending ? write_status(s, false, err) : 0;
}

int
ndjson_status(struct ndjson *s, const char *status, const char *tool,
              struct status_error *err)
{
    size_t n = tool ? strlen(tool) : 0;

    s->status = status;
    if (n >= sizeof(s->tool))
        n = 0; /* a name this long is not one of ours: say no name */
    memcpy(s->tool, tool ? tool : "", n);
    s->tool[n] = '\0';
    s->pending = true;
    /* the first one waits for something else to say (see ndjson.h) */
    return s->started ? write_status(s, false, err) : 0;
}

int
ndjson_tick(struct ndjson *s, struct status_error *err)
{
    if (monotime_ms() - s->last_ms < s->heartbeat_ms)
        return 0;
    return write_status(s, true, err);
}

int
ndjson_delta(struct ndjson *s, const char *text, size_t len,
             struct status_error *err)
{
    if (flush_status(s, err) != 0)
        return -1;
    return send_line(s,
                     begin(s, "delta") | key(s, "delta") |
                         jsonout_string(&s->line, text, len) |
                         sbuf_putc(&s->line, '}'),
                     err);
}

int
ndjson_tool_call(struct ndjson *s, const char *name, const json_t *args,
                 bool page, const char *id, struct status_error *err)
{
    int rc;

    if (flush_status(s, err) != 0)
        return -1;
    rc = begin(s, "tool-call") | key(s, "name") | string(s, name) |
         key(s, "args") | jsonout_write(args, &s->line) | key(s, "side") |
         string(s, page ? "page" : "server");
    if (id != NULL)
        rc |= key(s, "id") | string(s, id);
    return send_line(s, rc | sbuf_putc(&s->line, '}'), err);
}

int
ndjson_tool_result(struct ndjson *s, const char *name, bool ok, long ms,
                   struct status_error *err)
{
    if (flush_status(s, err) != 0)
        return -1;
    return send_line(s,
                     begin(s, "tool-result") | key(s, "name") |
                         string(s, name) | key(s, "ok") |
                         sbuf_adds(&s->line, ok ? "true" : "false") |
                         key(s, "ms") | jsonout_integer(&s->line, ms) |
                         sbuf_putc(&s->line, '}'),
                     err);
}

int
ndjson_usage(struct ndjson *s, const struct loop_usage *u, const char *model,
             struct status_error *err)
{
    json_t *usage;
    int rc;

    if (flush_status(s, err) != 0)
        return -1;
    if ((usage = loop_usage_json(u)) == NULL)
        return status_oom(err);
    rc = begin(s, "usage") | key(s, "usage") | jsonout_write(usage, &s->line);
    json_decref(usage);
    if (model != NULL)
        rc |= key(s, "model") | string(s, model);
    return send_line(s, rc | sbuf_putc(&s->line, '}'), err);
}

int
ndjson_result(struct ndjson *s, const char *answer, size_t len,
              struct status_error *err)
{
    static const char open[] = "{\"type\":\"result\",\"result\":";

    /* the answer is written in place, not copied into a line; nor is its
     * end, which then needs no memory: once the answer's first byte is
     * out, only a client gone can stop the line */
    if (flush_status(s, err) != 0 || put(s, open, sizeof(open) - 1, err) != 0 ||
        put(s, answer, len, err) != 0 || put(s, "}\n", 2, err) != 0)
        return -1;
    if (s->io->ops->flush != NULL && s->io->ops->flush(s->io->ctx) != 0)
        return gone(err);
    s->last_ms = monotime_ms();
    return 0;
}

int
ndjson_error(struct ndjson *s, const struct status_error *e)
{
    /* When even the error line cannot be built: a fixed one, so that the
     * stream still ends with an error, never just stops. */
    static const char oom_line[] = "{\"type\":\"error\",\"error\":{\"code\":"
                                   "\"internal_error\",\"message\":"
                                   "\"out of memory\"}}\n";
    struct status_error err = {0};
    json_t *inner = status_json(e);
    int rc = inner == NULL;

    /* the Retry-After a JSON error would have had, when a heartbeat
     * started the stream before the failure (a long retry wait) */
    if (rc == 0 && e->retry_after_s > 0)
        rc = json_object_set_new(inner, "retryAfter",
                                 json_integer(e->retry_after_s));
    if (rc == 0)
        rc = begin(s, "error") | key(s, "error") |
             jsonout_write(inner, &s->line) | sbuf_adds(&s->line, "}\n");
    json_decref(inner);
    rc = rc == 0 ? put(s, s->line.buf, s->line.len, &err)
                 : put(s, oom_line, sizeof(oom_line) - 1, &err);
    if (rc == 0 && s->io->ops->flush != NULL)
        rc = s->io->ops->flush(s->io->ctx);
    return rc;
}

bool
ndjson_wanted(struct httpio *io)
{
    const char *accept = io->ops->param(io->ctx, "HTTP_ACCEPT");

    return accept != NULL && strstr(accept, NDJSON_TYPE) != NULL;
}

int
ndjson_end(struct ndjson *s, int rc, const char *what,
           const struct status_error *err, int *status)
{
    if (s->started) {
        *status = 200;
        if (rc != 0) {
            if (status_http(err->code) >= 500)
                log_err("%s: %s: %s", what, status_code(err->code), err->text);
            ndjson_error(s, err);
            rc = 0;
        }
    }
    ndjson_release(s);
    return rc;
}
