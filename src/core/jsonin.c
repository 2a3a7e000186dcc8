/*
 * jsonin.c - strict JSON decoding for request bodies, through jscan.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/jsonin.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/jscan.h"
#include "core/memlimit.h"
#include "core/sbuf.h"
#include "core/status.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* json_error_t's code for each of jscan's. */
static const enum json_error_code jerr_codes[] = {
    [JSCAN_E_NONE] = json_error_unknown,
    [JSCAN_E_SYNTAX] = json_error_invalid_syntax,
    [JSCAN_E_PREMATURE] = json_error_premature_end_of_input,
    [JSCAN_E_UTF8] = json_error_invalid_utf8,
    [JSCAN_E_OVERFLOW] = json_error_numeric_overflow,
    [JSCAN_E_NUL] = json_error_null_character,
    [JSCAN_E_NUL_KEY] = json_error_null_byte_in_key,
    [JSCAN_E_DUPLICATE] = json_error_duplicate_key,
    [JSCAN_E_DEPTH] = json_error_stack_overflow,
    [JSCAN_E_END] = json_error_end_of_input_expected,
    [JSCAN_E_MEMORY] = json_error_out_of_memory,
    [JSCAN_E_TOO_LARGE] = json_error_invalid_argument,
};

_Static_assert(JSON_PARSER_MAX_DEPTH <= BOUND_JSCAN_DEPTH,
               "jscan cannot mirror jansson's depth limit");

/* Fill `jerr` as json_loadb() fills it on the same failure. */
static void
set_jerr(json_error_t *jerr, const struct jscan_fail *f)
{
    jerr->line = f->line;
    jerr->column = f->column;
    jerr->position = f->offset > INT_MAX ? INT_MAX : (int)f->offset;
    snprintf(jerr->source, sizeof(jerr->source), "<buffer>");
    snprintf(jerr->text, sizeof(jerr->text), "%s", f->what);
    jerr->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)jerr_codes[f->code];
}

/* json_loadb() itself, kept from failed allocations (memlimit.h). */
static json_t *
parse_jansson(const char *buf, size_t len, size_t flags, json_error_t *jerr,
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
jsonin_parse(const char *buf, size_t len, size_t flags, json_error_t *jerr,
             bool *oom)
{
    /* json_loadb()'s depth limit counts every value, scalars too */
    unsigned jflags = JSCAN_DEPTH_SCALARS;
    struct status_error err = {0};
    struct jscan_doc doc;
    struct arena a;
    json_t *v = NULL;

    if ((flags & ~(size_t)(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)) != 0)
        return parse_jansson(buf, len, flags, jerr, oom);
    if (!(flags & JSON_REJECT_DUPLICATES))
        jflags |= JSCAN_DUPLICATES_OK;
    if (flags & JSON_DECODE_ANY)
        jflags |= JSCAN_ANY;
    arena_init(&a);
    if (jscan_parse(buf, len, jflags, JSON_PARSER_MAX_DEPTH, &a, &doc, &err) ==
        0) {
        v = jscan_to_json(&doc, 0, &err);
        if (v == NULL) {
            doc.fail.code = JSCAN_E_MEMORY;
            doc.fail.line = doc.fail.column = -1;
            snprintf(doc.fail.what, sizeof(doc.fail.what), "out of memory");
        }
    }
    if (v == NULL)
        set_jerr(jerr, &doc.fail);
    else
        jerr->position = (int)(len > INT_MAX ? INT_MAX : len);
    arena_release(&a);
    *oom = err.code == ST_NO_MEMORY;
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

int
jsonin_scan(const char *buf, size_t len, int max_depth, struct arena *a,
            struct jscan_doc *doc, struct status_error *err)
{
    struct status_error e = {0};

    if (jscan_parse(buf, len, 0, max_depth, a, doc, &e) == 0)
        return 0;
    if (e.code == ST_NO_MEMORY)
        return status_set(err, ST_NO_MEMORY,
                          "out of memory reading the request");
    return status_set(err, e.code, "%s", e.text);
}

json_t *
jsonin_tree_except(const struct jscan_doc *d, const char *const *keys,
                   size_t *skipped, struct arena *a, struct status_error *err)
{
    json_t *v;
    size_t k, i;
    bool any = false;

    for (i = 0; keys[i] != NULL; i++) {
        skipped[i] = jscan_type(d, 0) == JSCAN_OBJECT
                         ? jscan_member(d, 0, keys[i])
                         : JSCAN_NONE;
        any |= skipped[i] != JSCAN_NONE;
    }
    if (!any) {
        v = jscan_to_json(d, 0, NULL);
        goto out;
    }
    v = json_object();
    /* keys are unique (jscan refused repeats), so set order is kept */
    for (k = jscan_child(d, 0); v != NULL && k != JSCAN_NONE;
         k = jscan_next(d, 0, k + 1)) {
        size_t klen;
        const char *name;
        json_t *m;

        for (i = 0; keys[i] != NULL && skipped[i] != k + 1; i++)
            ;
        if (keys[i] != NULL)
            continue;
        name = jscan_string(d, k, a, &klen);
        m = name ? jscan_to_json(d, k + 1, NULL) : NULL;
        if (m == NULL || json_object_setn_new_nocheck(v, name, klen, m) != 0) {
            json_decref(v);
            v = NULL;
        }
    }
out:
    if (v == NULL)
        status_set(err, ST_NO_MEMORY, "out of memory reading the request");
    return v;
}

json_t *
jsonin_decode(const char *buf, size_t len, int max_depth,
              struct status_error *err)
{
    struct jscan_doc doc;
    struct arena a;
    json_t *v = NULL;

    arena_init(&a);
    if (jsonin_scan(buf, len, max_depth, &a, &doc, err) == 0) {
        v = jscan_to_json(&doc, 0, NULL);
        if (v == NULL)
            status_set(err, ST_NO_MEMORY, "out of memory reading the request");
    }
    arena_release(&a);
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
