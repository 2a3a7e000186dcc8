/*
 * mcp_http.c - an MCP server over Streamable HTTP (MCP 2025-06-18,
 * "Transports"), with libcurl.
 *
 * Each JSON-RPC message is one POST to the server's url with
 * `Accept: application/json, text/event-stream`; the answer is either a
 * JSON body or an SSE stream whose `data:` events carry JSON-RPC
 * messages, ours among them. The stream is read as it arrives and the
 * transfer ends as soon as our answer is in, so a server that keeps the
 * stream open costs nothing. The `Mcp-Session-Id` the server gives in its
 * initialize answer goes back on every later request (and a DELETE ends
 * the session on close); a 404 (or 400) on a session means it expired,
 * which the caller treats as a dead server: reconnect, retry once.
 *
 * Bounds: the whole exchange takes at most cfg->timeout_ms (connecting
 * included), the body or stream at most MCP_MESSAGE_BYTES; only http and
 * https, no redirects followed (a JSON-RPC POST has no business being
 * sent elsewhere); only to an address the outbound policy allows
 * (plugins/outbound.h), through no proxy.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp_int.h"
#include "plugins/outbound.h"
#include "gemini/cabundle.h"

#include "plugins/bounds.h"
#include "core/jsonin.h"
#include "core/sbuf.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* One POST's answer, read as it arrives. */
struct http_rx {
    struct mcp_conn *c;
    struct sbuf body;
    size_t pos;  /* SSE: bytes of body already split into events */
    size_t scan; /* SSE: bytes of body known to end no event */
    long id;
    unsigned not_json, others; /* messages that were not the answer */
    bool sse;
    bool oom;
    json_t *answer;
    char session[256];
};

static size_t
on_header(char *p, size_t size, size_t n, void *data)
{
    struct http_rx *rx = data;
    size_t len = size * n, vlen;
    const char *v;

    if (len > 13 && strncasecmp(p, "content-type:", 13) == 0) {
        for (v = p + 13; *v == ' ' || *v == '\t'; v++)
            ;
        rx->sse = strncasecmp(v, "text/event-stream", 17) == 0;
    } else if (len > 15 && strncasecmp(p, "mcp-session-id:", 15) == 0) {
        for (v = p + 15; *v == ' ' || *v == '\t'; v++)
            ;
        for (vlen = 0; v + vlen < p + len && v[vlen] > ' ' && v[vlen] < 0x7f;
             vlen++)
            ;
        /* visible ASCII by the spec; a longer one is not kept */
        if (vlen > 0 && vlen < sizeof(rx->session)) {
            memcpy(rx->session, v, vlen);
            rx->session[vlen] = '\0';
        }
    }
    return len;
}

/* One message of the answer: ours is kept, the others dropped. */
static void
take_message(struct http_rx *rx, const char *p, size_t len)
{
    char reply[256];
    json_error_t jerr;
    json_t *msg;

    if (rx->answer != NULL)
        return;
    msg = jsonin_parse(p, len, 0, &jerr, &rx->oom);
    /* a request to us on this stream would need a POST back: MCP servers
     * send them only for features we do not announce, so it is dropped */
    if (mcp_is_answer(msg, rx->id, reply, sizeof(reply))) {
        rx->answer = msg;
        return;
    }
    if (msg == NULL)
        rx->not_json++;
    else
        rx->others++;
    json_decref(msg);
}

/* Split the SSE bytes received since the last call into events. */
static void
scan_sse(struct http_rx *rx)
{
    for (;;) {
        const char *start = rx->body.buf + rx->pos;
        const char *end = rx->body.buf + rx->body.len;
        const char *ev = NULL, *q;
        size_t evlen = 0;
        struct sbuf data;

        /* an event ends at a blank line: "\n\n" or "\r\n\r\n"; a
         * stream that trickles in is scanned once (from where the last
         * scan stopped, less the 2 bytes a blank line may straddle) */
        q = rx->scan > rx->pos + 2 ? rx->body.buf + rx->scan - 2 : start;
        rx->scan = rx->body.len;
        for (; q + 1 < end; q++) {
            if (q[0] == '\n' && (q[1] == '\n' || (q[1] == '\r' && q + 2 < end &&
                                                  q[2] == '\n'))) {
                ev = start;
                evlen = (size_t)(q - start);
                rx->pos += evlen + (q[1] == '\n' ? 2 : 3);
                rx->scan = rx->pos;
                break;
            }
        }
        if (ev == NULL)
            return;
        sbuf_init(&data, MCP_MESSAGE_BYTES);
        for (const char *line = ev; line < ev + evlen;) {
            const char *nl = memchr(line, '\n', (size_t)(ev + evlen - line));
            size_t ll = nl ? (size_t)(nl - line) : (size_t)(ev + evlen - line);

            if (ll > 0 && line[ll - 1] == '\r')
                ll--;
            if (ll >= 5 && memcmp(line, "data:", 5) == 0) {
                size_t skip = ll > 5 && line[5] == ' ' ? 6 : 5;
                if ((data.len > 0 && sbuf_add(&data, "\n", 1) != 0) ||
                    sbuf_add(&data, line + skip, ll - skip) != 0)
                    rx->oom = true;
            }
            line = nl ? nl + 1 : ev + evlen;
        }
        if (data.len > 0)
            take_message(rx, data.buf, data.len);
        sbuf_release(&data);
    }
}

static size_t
on_body(char *p, size_t size, size_t n, void *data)
{
    struct http_rx *rx = data;
    size_t len = size * n;

    if (sbuf_add(&rx->body, p, len) != 0)
        return 0; /* over MCP_MESSAGE_BYTES: the transfer stops */
    if (rx->sse) {
        scan_sse(rx);
        if (rx->answer != NULL || rx->oom)
            return 0; /* ours is in: no need to wait for the stream's end */
    }
    return len;
}

int
mcp_http_start(struct mcp_conn *c, struct mcp_err *e)
{
    c->curl = curl_easy_init();
    if (c->curl == NULL || cabundle_apply(c->curl) != CURLE_OK) {
        mcp_err_set(e, MCP_START, "cannot reach server '%s': out of memory",
                    c->cfg->name);
        return -1;
    }
    return 0;
}

/* The headers of one request: the configured ones, then ours. */
static struct curl_slist *
request_headers(const struct mcp_conn *c, bool post)
{
    struct curl_slist *h = NULL, *t;
    char line[320];

    for (const struct curl_slist *s = c->cfg->headers; s; s = s->next)
        if ((t = curl_slist_append(h, s->data)) == NULL)
            goto oom;
        else
            h = t;
    if (post) {
        if ((t = curl_slist_append(h, "Content-Type: application/json")) ==
            NULL)
            goto oom;
        h = t;
        if ((t = curl_slist_append(
                 h, "Accept: application/json, text/event-stream")) == NULL)
            goto oom;
        h = t;
    }
    if (c->session != NULL) {
        snprintf(line, sizeof(line), "Mcp-Session-Id: %s", c->session);
        if ((t = curl_slist_append(h, line)) == NULL)
            goto oom;
        h = t;
    }
    if (c->protocol[0] != '\0') {
        snprintf(line, sizeof(line), "MCP-Protocol-Version: %s", c->protocol);
        if ((t = curl_slist_append(h, line)) == NULL)
            goto oom;
        h = t;
    }
    return h;
oom:
    curl_slist_free_all(h);
    return NULL;
}

/* The options of every exchange; `guard` must live until the transfer
 * ends. Only curl_easy_setopt's out of memory fails them, and then the
 * guard may be missing: -1, and nothing is sent. */
static int
common_options(CURL *curl, const struct mcp_server_cfg *cfg, char *errbuf,
               long timeout_ms, struct outbound_guard *guard)
{
    curl_easy_reset(curl);
    if (outbound_guard(curl, guard, cfg->outbound) != 0)
        return -1;
    curl_easy_setopt(curl, CURLOPT_URL, cfg->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    errbuf[0] = '\0';
    return 0;
}

/* Did the POST fail before an HTTP answer (rc, errbuf: curl's word)?
 * Then -1 with `e` set. */
static int
transfer_failed(const struct mcp_conn *c, const struct http_rx *rx, CURLcode rc,
                const char *errbuf, struct outbound_guard *guard,
                struct mcp_err *e)
{
    char why[160];

    if (rx->oom) {
        mcp_err_set(e, MCP_PROTO, "out of memory");
        return -1;
    }
    if (rx->answer == NULL && rc == CURLE_WRITE_ERROR) {
        mcp_err_set(e, MCP_PROTO, "server '%s' sent an answer over %u bytes",
                    c->cfg->name, MCP_MESSAGE_BYTES);
        return -1;
    }
    if (rx->answer == NULL && rc == CURLE_COULDNT_CONNECT &&
        outbound_refusal(c->curl, guard, why, sizeof(why))) {
        /* MCP_START: no reconnect would be let through either */
        mcp_err_set(e, MCP_START, "server '%s' is unreachable: %s",
                    c->cfg->name, why);
        return -1;
    }
    if (rx->answer == NULL && rc != CURLE_OK) {
        mcp_err_set(e, rc == CURLE_OPERATION_TIMEDOUT ? MCP_TIMEOUT : MCP_DEAD,
                    "server '%s' is unreachable: %s", c->cfg->name,
                    errbuf[0] ? errbuf : curl_easy_strerror(rc));
        mcp_err_note_skipped(e, rx->not_json, rx->others);
        return -1;
    }
    return 0;
}

/* Is the HTTP status a failure? Then -1 with `e` set. */
static int
status_failed(const struct mcp_conn *c, long status, struct mcp_err *e)
{
    /* 404 is the spec's "session expired"; some servers (the SDK's
     * examples among them) say 400 to a session they do not know, as
     * after a restart. With a fresh session neither comes back. */
    if ((status == 404 || status == 400) && c->session != NULL) {
        mcp_err_set(e, MCP_DEAD, "server '%s' ended the session (HTTP %ld)",
                    c->cfg->name, status);
        return -1;
    }
    if (status < 200 || status > 299) {
        mcp_err_set(e, MCP_PROTO, "server '%s' answered HTTP %ld", c->cfg->name,
                    status);
        return -1;
    }
    return 0;
}

/* The Mcp-Session-Id the answer gave, kept for the next requests. 0, or
 * -1 with `e` set. */
static int
keep_session(struct mcp_conn *c, const struct http_rx *rx, struct mcp_err *e)
{
    if (rx->session[0] == '\0' ||
        (c->session != NULL && strcmp(c->session, rx->session) == 0))
        return 0;
    free(c->session);
    if ((c->session = strdup(rx->session)) == NULL) {
        mcp_err_set(e, MCP_PROTO, "out of memory");
        return -1;
    }
    return 0;
}

int
mcp_http_exchange(struct mcp_conn *c, const char *text, size_t len, long id,
                  struct json_t **answer, struct mcp_err *e)
{
    struct http_rx rx = {.c = c, .id = id};
    struct outbound_guard guard;
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *h = request_headers(c, true);
    CURLcode rc;
    long status = 0;
    int ret = -1;

    *answer = NULL;
    sbuf_init(&rx.body, MCP_MESSAGE_BYTES);
    if (h == NULL || common_options(c->curl, c->cfg, errbuf, c->cfg->timeout_ms,
                                    &guard) != 0) {
        mcp_err_set(e, MCP_PROTO, "out of memory");
        goto out;
    }
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, &rx);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &rx);
    rc = curl_easy_perform(c->curl);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (transfer_failed(c, &rx, rc, errbuf, &guard, e) != 0 ||
        status_failed(c, status, e) != 0 || keep_session(c, &rx, e) != 0)
        goto out;
    if (id < 0) {
        ret = 0; /* a notification: 202 Accepted, no body */
        goto out;
    }
    if (!rx.sse && rx.body.len > 0)
        take_message(&rx, rx.body.buf, rx.body.len);
    if (rx.answer == NULL) {
        mcp_err_set(e, MCP_PROTO, "server '%s' sent no answer to request %ld",
                    c->cfg->name, id);
        mcp_err_note_skipped(e, rx.not_json, rx.others);
        goto out;
    }
    *answer = rx.answer;
    rx.answer = NULL;
    ret = 0;
out:
    json_decref(rx.answer);
    curl_slist_free_all(h);
    sbuf_release(&rx.body);
    return ret;
}

void
mcp_http_stop(struct mcp_conn *c)
{
    if (c->curl != NULL && c->session != NULL && c->owner == getpid()) {
        /* end the session politely; the server drops it anyway in time */
        char errbuf[CURL_ERROR_SIZE];
        struct curl_slist *h = request_headers(c, false);
        struct outbound_guard guard;

        if (common_options(c->curl, c->cfg, errbuf, MCP_STOP_GRACE_MS,
                           &guard) == 0) {
            curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, "DELETE");
            curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
            curl_easy_setopt(c->curl, CURLOPT_NOBODY, 1L);
            (void)curl_easy_perform(c->curl);
        }
        curl_slist_free_all(h);
    }
    /* in a forked worker the handle's socket is the parent's: cleaning
     * up closes only our copy of it */
    if (c->curl != NULL)
        curl_easy_cleanup(c->curl);
    c->curl = NULL;
    free(c->session);
    c->session = NULL;
}
