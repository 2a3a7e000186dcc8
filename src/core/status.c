/*
 * status.c - the one table from status to wire code and HTTP status, and
 * the one writer of an error's JSON and text shapes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"
#include "core/utf8.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *code;
    int http;
} status_table[ST__COUNT] = {
    [ST_OK] = {"ok", 200},
    [ST_INTERNAL] = {"internal_error", 500},
    [ST_NO_MEMORY] = {"internal_error", 500},
    [ST_INVALID_JSON] = {"invalid_json", 400},
    [ST_BAD_REQUEST] = {"bad_request", 400},
    [ST_BAD_LENGTH] = {"bad_content_length", 400},
    [ST_SHORT_BODY] = {"incomplete_body", 400},
    [ST_NOT_FOUND] = {"not_found", 404},
    [ST_UNKNOWN_ACTION] = {"unknown_action", 404},
    [ST_METHOD] = {"method_not_allowed", 405},
    [ST_TOO_LARGE] = {"payload_too_large", 413},
    [ST_MEDIA_TYPE] = {"unsupported_media_type", 415},
    [ST_SCHEMA] = {"schema_violation", 422},
    [ST_ACTION_FAILED] = {"action_failed", 500},
    [ST_CONFIG] = {"config_error", 500},
    [ST_NOT_CONFIGURED] = {"not_configured", 503},
    [ST_INVALID_HISTORY] = {"invalid_history", 400},
    [ST_TOOL_CONFLICT] = {"tool_name_conflict", 400},
    [ST_UPSTREAM_AUTH] = {"upstream_auth", 502},
    [ST_UPSTREAM_REJECTED] = {"upstream_rejected", 502},
    [ST_UPSTREAM_RATE] = {"upstream_rate_limited", 503},
    [ST_UPSTREAM_DOWN] = {"upstream_unavailable", 503},
    [ST_UPSTREAM_TIMEOUT] = {"upstream_timeout", 504},
    [ST_UPSTREAM_BAD] = {"upstream_bad_response", 502},
    [ST_PAGE_STATE_TOO_LARGE] = {"page_state_too_large", 413},
    [ST_OVERLOADED] = {"overloaded", 503},
    [ST_CLIENT_GONE] = {"client_gone", 499},
    [ST_UNAUTHORIZED] = {"unauthorized", 401},
    [ST_CONFLICT] = {"conflict", 409},
    [ST_STORE] = {"store_error", 500},
    [ST_SCHEMA_NEWER] = {"store_schema_newer", 500},
    [ST_FORBIDDEN] = {"forbidden", 403},
    [ST_BUDGET_EXHAUSTED] = {"budget_exhausted", 429},
    [ST_BUDGET_UNAVAILABLE] = {"budget_unavailable", 503},
    [ST_UPSTREAM_TOO_LARGE] = {"upstream_too_large", 413},
    [ST_HISTORY_TAMPERED] = {"history_tampered", 400},
    [ST_APPROVAL_INVALID] = {"approval_invalid", 403},
    [ST_ORIGIN_NOT_ALLOWED] = {"origin_not_allowed", 403},
};

/* Cut `s` so that it does not end inside a UTF-8 sequence. */
static void
trim_utf8_tail(char *s)
{
    s[utf8_cut(s, strlen(s))] = '\0';
}

/*
 * Record `code` and the message, with empty detail, when `e` holds no error
 * yet. Returns true when it did, so the caller may add its detail: the
 * detail of a later error must never land on the first one.
 */
static bool ATTR_FMT(3, 0) status_vset(struct status_error *e, enum status code,
                                       const char *fmt, va_list ap)
{
    int n;

    if (e == NULL || e->code != ST_OK)
        return false;
    e->code = code == ST_OK ? ST_INTERNAL : code;
    n = vsnprintf(e->text, sizeof(e->text), fmt, ap);
    if (n < 0)
        e->text[0] = '\0';
    else if ((size_t)n >= sizeof(e->text))
        trim_utf8_tail(e->text);
    e->rule = NULL;
    e->path[0] = '\0';
    e->retry_after_s = 0;
    return true;
}

int
status_set(struct status_error *e, enum status code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    status_vset(e, code, fmt, ap);
    va_end(ap);
    return -1;
}

int
status_set_schema(struct status_error *e, const char *path, const char *rule,
                  const char *fmt, ...)
{
    va_list ap;
    bool set;

    va_start(ap, fmt);
    set = status_vset(e, ST_SCHEMA, fmt, ap);
    va_end(ap);
    if (set) {
        size_t n = strnlen(path, sizeof(e->path) - 1);

        memcpy(e->path, path, n);
        e->path[n] = '\0';
        if (path[n] != '\0')
            trim_utf8_tail(e->path);
        e->rule = rule != NULL ? rule : "";
    }
    return -1;
}

int
status_oom(struct status_error *e)
{
    return status_set(e, ST_NO_MEMORY, "out of memory");
}

int
status_set_retry(struct status_error *e, enum status code, long retry_after_s,
                 const char *fmt, ...)
{
    va_list ap;
    bool set;

    va_start(ap, fmt);
    set = status_vset(e, code, fmt, ap);
    va_end(ap);
    if (set && retry_after_s > 0)
        e->retry_after_s = retry_after_s;
    return -1;
}

void
status_clear(struct status_error *e)
{
    if (e != NULL) {
        e->code = ST_OK;
        e->text[0] = '\0';
        e->rule = NULL;
        e->path[0] = '\0';
        e->retry_after_s = 0;
    }
}

const char *
status_code(enum status code)
{
    if ((unsigned)code >= ST__COUNT || status_table[code].code == NULL)
        return "internal_error";
    return status_table[code].code;
}

int
status_http(enum status code)
{
    if ((unsigned)code >= ST__COUNT || status_table[code].http == 0)
        return 500;
    return status_table[code].http;
}

const char *
status_reason(int http)
{
    switch (http) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 413:
        return "Payload Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 499:
        return "Client Closed Request"; /* nginx's; never read */
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Unknown";
    }
}

/* Copy `src` into dst[size] (cut if need be) with utf8_scrub() applied. */
static void
copy_scrubbed(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
    utf8_scrub(dst);
}

json_t *
status_json(const struct status_error *e)
{
    enum status code = e->code == ST_OK ? ST_INTERNAL : e->code;
    char msg[sizeof(e->text)];
    char path[sizeof(e->path)];

    copy_scrubbed(msg, sizeof(msg), e->text[0] ? e->text : "internal error");
    if (e->rule == NULL)
        return json_pack("{s:s, s:s}", "code", status_code(code), "message",
                         msg);
    copy_scrubbed(path, sizeof(path), e->path);
    return json_pack("{s:s, s:s, s:s, s:s}", "code", status_code(code),
                     "message", msg, "path", path, "rule", e->rule);
}

int
status_text(const struct status_error *e, char *buf, size_t n)
{
    enum status code = e->code == ST_OK ? ST_INTERNAL : e->code;
    int len;

    if (n == 0)
        return -1;
    len = snprintf(buf, n, "%s: %s", status_code(code),
                   e->text[0] ? e->text : "internal error");
    if (len < 0) {
        buf[0] = '\0';
        return -1;
    }
    if ((size_t)len >= n)
        trim_utf8_tail(buf);
    utf8_scrub(buf);
    /* One line, and nothing a terminal would act on: messages may quote
     * client input (a URL path, a JSON key). */
    for (char *p = buf; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = '?';
    }
    return (size_t)len < n ? 0 : -1;
}
