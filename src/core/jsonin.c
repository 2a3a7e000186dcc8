/*
 * jsonin.c - strict JSON decoding for request bodies.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/jsonin.h"
#include "core/memlimit.h"
#include "core/status.h"

#include "core/sbuf.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

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
jsonin_parse(const char *buf, size_t len, size_t flags, json_error_t *jerr,
             bool *oom)
{
    json_t *v;

    memlimit_parse_begin();
    v = json_loadb(buf, len, flags, jerr);
    memlimit_parse_end();
    *oom = memlimit_exceeded() ||
           (v == NULL && json_error_code(jerr) == json_error_out_of_memory);
    if (*oom) {
        json_decref(v);
        return NULL;
    }
    return v;
}

json_t *
jsonin_load_file(const char *path, size_t max_bytes, size_t flags,
                 json_error_t *jerr, bool *oom)
{
    struct sbuf sb;
    char chunk[8192];
    size_t n;
    json_t *v = NULL;
    FILE *f = fopen(path, "rb");

    *oom = false;
    if (f == NULL) {
        snprintf(jerr->text, sizeof(jerr->text), "%s", strerror(errno));
        return NULL;
    }
    sbuf_init(&sb, max_bytes);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (sbuf_add(&sb, chunk, n) != 0) {
            /* over the cap, or out of memory: the cap is the likely one */
            *oom = sb.len + n <= max_bytes;
            snprintf(jerr->text, sizeof(jerr->text), "%s",
                     *oom ? "out of memory" : "the file is too large");
            goto out;
        }
    }
    if (ferror(f)) {
        snprintf(jerr->text, sizeof(jerr->text), "read error");
        goto out;
    }
    v = jsonin_parse(sb.buf, sb.len, flags, jerr, oom);
out:
    fclose(f);
    sbuf_release(&sb);
    return v;
}

json_t *
jsonin_decode(const char *buf, size_t len, int max_depth,
              struct status_error *err)
{
    json_error_t jerr;
    json_t *v;
    bool oom;

    if (len == 0) {
        status_set(err, ST_INVALID_JSON,
                   "the request body is empty; send a JSON value");
        return NULL;
    }
    if (check_depth(buf, len, max_depth, err) != 0)
        return NULL;
    v = jsonin_parse(buf, len, JSON_REJECT_DUPLICATES, &jerr, &oom);
    if (oom) {
        status_set(err, ST_NO_MEMORY, "out of memory reading the request");
        return NULL;
    }
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

const char *
jsonin_unknown_member(const json_t *obj, const char *const *known)
{
    const char *key;
    json_t *v;

    json_object_foreach(UNCONST(obj), key, v) {
        size_t i = 0;
        while (known[i] != NULL && strcmp(known[i], key) != 0)
            i++;
        if (known[i] == NULL)
            return key;
    }
    return NULL;
}
