/*
 * jscan_fuzz.c - libFuzzer harness: jscan and jsonout against jansson.
 *
 * The first byte of an input picks the mode, the rest is the JSON text:
 *   bit 0  top level may be any value (JSCAN_ANY / JSON_DECODE_ANY)
 *   bit 1  keys may repeat (JSCAN_DUPLICATES_OK / no JSON_REJECT_DUPLICATES)
 *   bit 2  jansson's own depth limit (JSCAN_DEPTH_SCALARS, 2048); without
 *          it, the request path's: 32 levels of brackets, checked before
 *          jansson parses as jsonin.c did before jscan
 * (so a seed file that starts with '0'..'7' says its mode in ASCII).
 *
 * For every input it asserts that both accept or both refuse; that a
 * refusal says the same thing at the same place (text, line, column,
 * position, code), unless the depth pre-check refused it; and, when
 * accepted, that jscan_to_json() equals jansson's value (json_equal and
 * the same json_dumps text, which tells integers from reals and -0.0
 * from 0.0), that jscan_write() and jsonout_dumps() write that same text,
 * that every node's JSCAN_CANON span is that text for its subtree, and
 * that jscan_member() finds what json_object_getn() finds and
 * jscan_string_is() knows a key from a shorter one.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/jscan.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "too_deep.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_FLAGS    (APP_JSON_FLAGS | JSON_ENCODE_ANY)
/* Nodes checked one by one (each check writes its subtree again). */
#define NODES_CHECKED 300

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
die(const char *what, const char *in, size_t len)
{
    fprintf(stderr, "jscan_fuzz: %s\ninput (%zu bytes): '%.*s'\n", what, len,
            (int)(len > 400 ? 400 : len), in);
    abort();
}

/* json_dumps() of v, which must succeed. */
static char *
dump(const json_t *v, const char *in, size_t len)
{
    char *t = json_dumps(v, DUMP_FLAGS);

    if (t == NULL)
        die("json_dumps failed", in, len);
    return t;
}

static void
check_node(const struct jscan_doc *doc, size_t i, const char *in, size_t len)
{
    struct status_error err = {0};
    json_t *v = jscan_to_json(doc, i, &err);
    struct sbuf sb;
    const struct jscan_node *n = &doc->nodes[i];
    char *want;

    if (v == NULL)
        die("jscan_to_json of a node failed", in, len);
    want = dump(v, in, len);
    sbuf_init(&sb, JSONOUT_UNBOUNDED);
    if (jscan_write(doc, i, &sb) != 0 || strcmp(sb.buf, want) != 0) {
        fprintf(stderr, "node %zu: jscan_write '%s', json_dumps '%s'\n", i,
                sb.buf, want);
        die("jscan_write differs for a node", in, len);
    }
    if ((n->flags & JSCAN_CANON) &&
        (strlen(want) != n->len || memcmp(want, in + n->off, n->len) != 0)) {
        fprintf(stderr, "node %zu: span '%.*s', json_dumps '%s'\n", i,
                (int)n->len, in + n->off, want);
        die("a JSCAN_CANON span is not what jansson writes", in, len);
    }
    if (n->type == JSCAN_OBJECT) {
        struct arena a;
        arena_init(&a);
        for (size_t k = jscan_child(doc, i); k != JSCAN_NONE;
             k = jscan_next(doc, i, k + 1)) {
            size_t klen;
            const char *key = jscan_string(doc, k, &a, &klen);
            size_t m;
            json_t *got, *want_v;

            if (key == NULL)
                die("jscan_string failed", in, len);
            /* the decoded compare, on a key's own bytes and one less */
            if (!jscan_string_is(doc, k, key) ||
                (klen > 0 && strlen(key) == klen &&
                 jscan_string_is(doc, k, arena_strndup(&a, key, klen - 1))))
                die("jscan_string_is is wrong about a key", in, len);
            m = jscan_member(doc, i, key);
            want_v = json_object_getn(v, key, klen);
            got = m == JSCAN_NONE ? NULL : jscan_to_json(doc, m, &err);
            if (want_v == NULL || got == NULL || !json_equal(got, want_v))
                die("jscan_member differs from json_object_getn", in, len);
            json_decref(got);
        }
        arena_release(&a);
    }
    sbuf_release(&sb);
    free(want);
    json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    unsigned mode, sflags = 0;
    size_t jflags = 0;
    bool deep_refused = false;
    json_error_t jerr;
    json_t *jv = NULL, *sv;
    struct status_error err = {0};
    struct jscan_doc doc;
    struct arena a;
    int rc, max_depth;

    if (size == 0)
        return 0;
    mode = data[0];
    if (mode & 1) {
        sflags |= JSCAN_ANY;
        jflags |= JSON_DECODE_ANY;
    }
    if (mode & 2)
        sflags |= JSCAN_DUPLICATES_OK;
    else
        jflags |= JSON_REJECT_DUPLICATES;
    if (mode & 4) {
        sflags |= JSCAN_DEPTH_SCALARS;
        max_depth = JSON_PARSER_MAX_DEPTH;
    } else {
        max_depth = BOUND_JSON_DEPTH;
        deep_refused = too_deep(in, len, max_depth);
    }
    if (!deep_refused)
        jv = json_loadb(in, len, jflags, &jerr);

    arena_init(&a);
    rc = jscan_parse(in, len, sflags, max_depth, &a, &doc, &err);
    if ((rc == 0) != (jv != NULL)) {
        fprintf(stderr, "mode %u: jansson %s (%s), jscan %s (%s)\n", mode & 7,
                jv ? "accepts" : "refuses", jv ? "" : jerr.text,
                rc == 0 ? "accepts" : "refuses", rc == 0 ? "" : err.text);
        die("jscan and jansson disagree", in, len);
    }
    if (rc != 0) {
        const struct jscan_fail *f = &doc.fail;
        if (err.code != ST_INVALID_JSON)
            die("jscan refused with a code other than invalid_json", in, len);
        if (!deep_refused &&
            (strcmp(f->what, jerr.text) != 0 || f->line != jerr.line ||
             f->column != jerr.column || (int)f->offset != jerr.position)) {
            fprintf(stderr,
                    "mode %u: jansson '%s' at %d:%d (%d), jscan '%s' at "
                    "%d:%d (%zu)\n",
                    mode & 7, jerr.text, jerr.line, jerr.column, jerr.position,
                    f->what, f->line, f->column, f->offset);
            die("the refusals differ", in, len);
        }
        arena_release(&a);
        return 0;
    }

    sv = jscan_to_json(&doc, 0, &err);
    if (sv == NULL)
        die("jscan_to_json failed", in, len);
    if (!json_equal(jv, sv))
        die("jscan_to_json is not json_equal to jansson's value", in, len);
    {
        char *want = dump(jv, in, len), *got = dump(sv, in, len), *out;
        struct sbuf sb;
        size_t n;

        if (strcmp(want, got) != 0) {
            fprintf(stderr, "jansson '%s'\njscan   '%s'\n", want, got);
            die("the two values write differently", in, len);
        }
        sbuf_init(&sb, JSONOUT_UNBOUNDED);
        if (jscan_write(&doc, 0, &sb) != 0 || strcmp(sb.buf, want) != 0) {
            fprintf(stderr, "json_dumps  '%s'\njscan_write '%s'\n", want,
                    sb.buf);
            die("jscan_write differs from json_dumps", in, len);
        }
        sbuf_release(&sb);
        out = jsonout_dumps(jv, DUMP_FLAGS, JSONOUT_UNBOUNDED, &n);
        if (out == NULL || strcmp(out, want) != 0 || n != strlen(want)) {
            fprintf(stderr, "json_dumps    '%s'\njsonout_dumps '%s'\n", want,
                    out ? out : "(null)");
            die("jsonout_dumps differs from json_dumps", in, len);
        }
        free(out);
        free(want);
        free(got);
    }
    for (size_t i = 0; i < doc.count && i < NODES_CHECKED; i++)
        check_node(&doc, i, in, len);
    json_decref(sv);
    json_decref(jv);
    arena_release(&a);
    return 0;
}
