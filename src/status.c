/*
 * status.c - the one table from status to wire code and HTTP status.
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "status.h"

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
};

/* Cut `s` so that it does not end inside a UTF-8 sequence. */
static void
trim_utf8_tail(char *s)
{
    size_t n = strlen(s);
    size_t i = n;

    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > 0 && ((unsigned char)s[i - 1] & 0x80)) {
        unsigned char lead = (unsigned char)s[i - 1];
        size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (n - (i - 1) < want)
            s[i - 1] = '\0';
    }
}

int
status_set(struct status_error *e, enum status code, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (e == NULL || e->code != ST_OK)
        return -1;
    e->code = code == ST_OK ? ST_INTERNAL : code;
    va_start(ap, fmt);
    n = vsnprintf(e->text, sizeof(e->text), fmt, ap);
    va_end(ap);
    if (n < 0)
        e->text[0] = '\0';
    else if ((size_t)n >= sizeof(e->text))
        trim_utf8_tail(e->text);
    return -1;
}

void
status_clear(struct status_error *e)
{
    if (e != NULL) {
        e->code = ST_OK;
        e->text[0] = '\0';
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
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}
