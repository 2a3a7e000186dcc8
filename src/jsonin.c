/*
 * jsonin.c - strict JSON decoding for request bodies.
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "jsonin.h"
#include "status.h"

#include <jansson.h>

/*
 * Refuse nesting deeper than max_depth. Strings are skipped so brackets
 * inside them do not count; everything else is left to jansson, which sees
 * the same bytes next. Returns 0 or -1 with err set.
 */
static int
check_depth(const char *buf, size_t len, int max_depth,
                   struct status_error *err)
{
    int depth = 0, line = 1;
    size_t col0 = 0; /* offset where the current line starts */
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (c == '\\')
                i++; /* the escaped byte cannot end the string */
            else if (c == '"')
                in_string = false;
            else if (c == '\n') /* invalid, but keep positions right */
                line++, col0 = i + 1;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            break;
        case '[':
        case '{':
            if (++depth > max_depth)
                return status_set(err, ST_INVALID_JSON,
                                  "invalid JSON at line %d, column %zu: "
                                  "nesting deeper than %d levels",
                                  line, i - col0 + 1, max_depth);
            break;
        case ']':
        case '}':
            depth--;
            break;
        case '\n':
            line++;
            col0 = i + 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

json_t *
jsonin_decode(const char *buf, size_t len, int max_depth,
              struct status_error *err)
{
    json_error_t jerr;
    json_t *v;

    if (len == 0) {
        status_set(err, ST_INVALID_JSON,
                   "the request body is empty; send a JSON value");
        return NULL;
    }
    if (check_depth(buf, len, max_depth, err) != 0)
        return NULL;
    v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (v == NULL) {
        /* jansson names its own flag here; say it in the API's terms. */
        const char *what = json_error_code(&jerr) == json_error_null_character
                               ? "strings must not contain \\u0000"
                               : jerr.text;
        status_set(err, ST_INVALID_JSON,
                   "invalid JSON at line %d, column %d: %s", jerr.line,
                   jerr.column, what);
    }
    return v;
}
