/*
 * runinput.c - the run API's request, normalised (see runinput.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/runinput.h"
#include "core/arena.h"
#include "http/bounds.h"
#include "core/jsonout.h"
#include "core/memlimit.h"
#include "core/status.h"
#include "core/utf8.h"

#include <jansson.h>
#include <string.h>

/* What was cut, counted as we go. */
struct cuts {
    json_t *fields; /* top-level names dropped */
    long controls;  /* control characters stripped */
    long conv_dropped, conv_cut;
    long ctx_dropped, ctx_cut, meta_dropped;
};

/*
 * `s` without control characters (newlines and tabs kept when `text`),
 * cut to `max` bytes at a character. A new string value, or NULL when
 * out of memory; `*cut` set when it was cut.
 */
static json_t *
clean(const char *s, size_t len, size_t max, bool text, struct cuts *c,
      bool *cut)
{
    char *buf = memlimit_malloc(len + 1);
    size_t n = 0;
    json_t *v;

    if (buf == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch < 0x20 && !(text && (ch == '\n' || ch == '\t'))) ||
            ch == 0x7F) {
            c->controls++;
            continue;
        }
        buf[n++] = (char)ch;
    }
    *cut = n > max;
    if (*cut)
        n = utf8_cut(buf, max);
    v = json_stringn(buf, n);
    free(buf);
    return v;
}

/* The string member `key` of `obj`, cleaned: 0 (absent: *out NULL, unless
 * `need`), or -1 (not a string, or out of memory). */
static int
member_string(const json_t *obj, const char *key, size_t max, bool text,
              struct cuts *c, bool *cut, json_t **out, struct status_error *err)
{
    const json_t *v = json_object_get(obj, key);

    *out = NULL;
    *cut = false;
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return status_set(err, ST_BAD_REQUEST, "%s must be a string", key);
    *out = clean(json_string_value(v), json_string_length(v), max, text, c,
                 cut);
    return *out ? 0 : status_oom(err);
}

/* The depth of `v`: 0 for a scalar. */
static size_t
depth(const json_t *v)
{
    size_t d = 0, i;
    const char *k;
    json_t *m;

    if (json_is_object(v)) {
        json_object_foreach(UNCONST(v), k, m) {
            size_t e = depth(m);
            d = e > d ? e : d;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        json_array_foreach(v, i, m) {
            size_t e = depth(m);
            d = e > d ? e : d;
        }
        return d + 1;
    }
    return 0;
}

static int
read_conversation(const json_t *list, struct arena *a, struct run_input *in,
                  struct cuts *c, struct status_error *err)
{
    size_t n = json_array_size(list), first, i;
    const json_t *turn;

    if (list != NULL && !json_is_array(list))
        return status_set(err, ST_BAD_REQUEST, "conversation must be an array");
    in->conversation = arena_take_json(a, json_array());
    if (in->conversation == NULL)
        return status_oom(err);
    /* the newest turns are the ones that matter */
    first = n > RUN_CONVERSATION_MAX ? n - RUN_CONVERSATION_MAX : 0;
    c->conv_dropped += (long)first;
    for (i = first; i < n; i++) {
        const char *role;
        json_t *text;
        bool cut;

        turn = json_array_get(list, i);
        role = json_string_value(json_object_get(turn, "role"));
        if (role == NULL ||
            (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0) ||
            !json_is_string(json_object_get(turn, "text"))) {
            c->conv_dropped++;
            continue;
        }
        if (member_string(turn, "text", RUN_TEXT_MAX, true, c, &cut, &text,
                          err) != 0)
            return -1;
        c->conv_cut += cut;
        if (json_array_append_new(
                in->conversation,
                json_pack("{s:s, s:o}", "role", role, "text", text)) != 0)
            return status_oom(err);
    }
    return 0;
}

static bool
known_type(const char *type, const char *const *types)
{
    for (; type != NULL && *types != NULL; types++)
        if (strcmp(type, *types) == 0)
            return true;
    return false;
}

/* One attachedContext entry, or NULL (dropped) with *fail -1 on error. */
static int
read_entry(const json_t *e, const char *const *types, struct cuts *c,
           json_t **out, struct status_error *err)
{
    static const char *const strings[] = {"id", "title", "snippet"};
    json_t *entry, *v;
    const json_t *meta;
    bool cut, any_cut = false;

    *out = NULL;
    if (!known_type(json_string_value(json_object_get(e, "type")), types) ||
        !json_is_string(json_object_get(e, "id")))
        return 0;
    entry = json_pack("{s:O}", "type", json_object_get(e, "type"));
    if (entry == NULL)
        return status_oom(err);
    for (size_t i = 0; i < ARRAY_SIZE(strings); i++) {
        if (!json_is_string(json_object_get(e, strings[i])))
            continue; /* absent, or not text: left out */
        if (member_string(e, strings[i], RUN_CONTEXT_STRING_MAX, i == 2, c,
                          &cut, &v, err) != 0 ||
            json_object_set_new(entry, strings[i], v) != 0) {
            json_decref(entry);
            return err->code ? -1 : status_oom(err);
        }
        any_cut |= cut;
    }
    meta = json_object_get(e, "meta");
    if (meta != NULL) {
        char *text = jsonout_dumps(meta, JSON_COMPACT | JSON_ENCODE_ANY,
                                   RUN_CONTEXT_META_BYTES + 1, NULL);
        if (depth(meta) > RUN_CONTEXT_META_DEPTH || text == NULL ||
            strlen(text) > RUN_CONTEXT_META_BYTES)
            c->meta_dropped++;
        else if (json_object_set(entry, "meta", UNCONST(meta)) != 0) {
            free(text);
            json_decref(entry);
            return status_oom(err);
        }
        free(text);
    }
    c->ctx_cut += any_cut;
    *out = entry;
    return 0;
}

static int
read_context(const json_t *list, const char *const *types, struct arena *a,
             struct run_input *in, struct cuts *c, struct status_error *err)
{
    const json_t *e;
    size_t i;

    if (list != NULL && !json_is_array(list))
        return status_set(err, ST_BAD_REQUEST,
                          "attachedContext must be an array");
    in->context = arena_take_json(a, json_array());
    if (in->context == NULL)
        return status_oom(err);
    json_array_foreach(list, i, e) {
        json_t *entry;
        if (json_array_size(in->context) == RUN_CONTEXT_MAX) {
            c->ctx_dropped += (long)(json_array_size(list) - i);
            break;
        }
        if (read_entry(e, types, c, &entry, err) != 0)
            return -1;
        if (entry == NULL) {
            c->ctx_dropped++;
            continue;
        }
        if (json_array_append_new(in->context, entry) != 0)
            return status_oom(err);
    }
    return 0;
}

/* `{"dropped": d, "cut": k}` with the zero counts left out; NULL: none. */
static int
report(json_t *r, const char *key, long dropped, long cut)
{
    json_t *o;

    if (dropped == 0 && cut == 0)
        return 0;
    o = json_object();
    if (o == NULL ||
        (dropped &&
         json_object_set_new(o, "dropped", json_integer(dropped)) != 0) ||
        (cut && json_object_set_new(o, "cut", json_integer(cut)) != 0)) {
        json_decref(o);
        return -1;
    }
    return json_object_set_new(r, key, o);
}

static int
write_report(struct cuts *c, struct arena *a, struct run_input *in)
{
    json_t *r = arena_take_json(a, json_object());
    int rc = 0;

    if (r == NULL)
        return -1;
    if (json_array_size(c->fields) > 0)
        rc |= json_object_set(r, "droppedFields", c->fields);
    rc |= report(r, "conversation", c->conv_dropped, c->conv_cut);
    rc |= report(r, "attachedContext", c->ctx_dropped, c->ctx_cut);
    if (c->meta_dropped)
        rc |= json_object_set_new(r, "metaDropped",
                                  json_integer(c->meta_dropped));
    if (c->controls)
        rc |= json_object_set_new(r, "controlCharacters",
                                  json_integer(c->controls));
    in->normalized = json_object_size(r) > 0 ? r : NULL;
    return rc == 0 ? 0 : -1;
}

int
runinput_read(const json_t *body, const char *const *types, struct arena *a,
              struct run_input *in, struct status_error *err)
{
    static const char *const known[] = {"prompt", "threadId", "conversation",
                                        "attachedContext"};
    struct cuts c = {0};
    const char *key;
    json_t *v, *prompt;
    bool cut;

    memset(in, 0, sizeof(*in));
    if (!json_is_object(body))
        return status_set(err, ST_BAD_REQUEST,
                          "the request body must be a JSON object");
    if ((c.fields = arena_take_json(a, json_array())) == NULL)
        return status_oom(err);
    json_object_foreach(UNCONST(body), key, v) {
        size_t i = 0;
        while (i < ARRAY_SIZE(known) && strcmp(key, known[i]) != 0)
            i++;
        if (i == ARRAY_SIZE(known) &&
            json_array_append_new(c.fields, json_string(key)) != 0)
            return status_oom(err);
    }
    if (!json_is_string(json_object_get(body, "prompt")))
        return status_set(err, ST_BAD_REQUEST,
                          "prompt is required and must be a string");
    if (member_string(body, "prompt", RUN_PROMPT_MAX, true, &c, &cut, &prompt,
                      err) != 0)
        return -1;
    arena_take_json(a, prompt);
    in->prompt = json_string_value(prompt);
    if (in->prompt[strspn(in->prompt, " \t\n")] == '\0')
        return status_set(err, ST_BAD_REQUEST, "prompt must not be empty");
    if (cut)
        return status_set(err, ST_TOO_LARGE, "prompt is longer than %d bytes",
                          RUN_PROMPT_MAX);
    v = json_object_get(body, "threadId");
    if (v != NULL && !json_is_null(v)) {
        const char *t = json_string_value(v);
        if (t == NULL || t[0] == '\0' || strlen(t) > RUN_THREAD_ID_MAX)
            return status_set(err, ST_BAD_REQUEST,
                              "threadId must be a thread's id");
        in->thread = t;
    }
    if (read_conversation(json_object_get(body, "conversation"), a, in, &c,
                          err) != 0 ||
        read_context(json_object_get(body, "attachedContext"), types, a, in, &c,
                     err) != 0)
        return -1;
    return write_report(&c, a, in) == 0 ? 0 : status_oom(err);
}
