/*
 * permission.c - the permission policy engine (see permission.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/permission.h"

#include "core/bounds.h"
#include "registry/bounds.h"
#include "core/status.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char *
permission_verdict_name(enum permission_verdict v)
{
    switch (v) {
    case PERMISSION_ALLOW:
        return "allow";
    case PERMISSION_DENY:
        return "deny";
    case PERMISSION_ASK:
        break;
    }
    return "ask";
}

/* --- globs ------------------------------------------------------------- */

/*
 * Does `pattern` match the subject? `judgeable` is false for a subject
 * the engine will not hand to fnmatch (too long, a NUL byte inside, which
 * fnmatch would read as its end): it then falls the safe way for `list`,
 * as does a pattern over its bound (only an unchecked rule has one).
 */
static bool
glob_matches(const char *pattern, const char *subject, bool judgeable,
             enum permission_list list)
{
    int rc;

    if (!judgeable || strlen(pattern) > BOUND_PERMISSION_PATTERN)
        return list == PERMISSION_DENY_LIST;
    rc = fnmatch(pattern, subject, FNM_CASEFOLD);
    if (rc != 0 && rc != FNM_NOMATCH) /* fnmatch failed: fail closed */
        return list == PERMISSION_DENY_LIST;
    return rc == 0;
}

/* --- the signature ----------------------------------------------------- */

struct sigbuf {
    char *p;
    size_t n, len;
    bool ok;
};

static void
put(struct sigbuf *b, const char *s, size_t len)
{
    if (!b->ok || len >= b->n - b->len) { /* keep room for the NUL */
        b->ok = false;
        return;
    }
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

static void
put_value(struct sigbuf *b, const json_t *v)
{
    size_t room, need;

    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);

        if (memchr(s, '\0', len) != NULL)
            b->ok = false; /* fnmatch would stop at it */
        put(b, s, len);
        return;
    }
    if (!b->ok)
        return;
    room = b->n - b->len;
    need = json_dumpb(v, b->p + b->len, room,
                      JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (need == 0 || need >= room) { /* an error, or no room for the NUL */
        b->ok = false;
        b->p[b->len] = '\0';
        return;
    }
    b->len += need;
    b->p[b->len] = '\0';
}

static int
cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
permission_signature(const struct permission_call *call, char *buf, size_t n)
{
    struct sigbuf b = {buf, n, 0, n > 0};
    const char *keys[BOUND_PERMISSION_ARGS];
    size_t nkeys = 0, key_len;
    const char *key;
    json_t *v;

    if (n > 0)
        buf[0] = '\0';
    json_object_keylen_foreach(UNCONST(call->args), key, key_len, v) {
        if (nkeys == ARRAY_SIZE(keys) || strlen(key) != key_len)
            return -1; /* too many, or a NUL inside a key */
        keys[nkeys++] = key;
    }
    qsort(keys, nkeys, sizeof(keys[0]), cmp_keys);
    put(&b, call->tool, strlen(call->tool));
    put(&b, "(", 1);
    for (size_t i = 0; i < nkeys; i++) {
        if (i > 0)
            put(&b, ", ", 2);
        put(&b, keys[i], strlen(keys[i]));
        put(&b, "=", 1);
        put_value(&b, json_object_get(call->args, keys[i]));
    }
    put(&b, ")", 1);
    return b.ok && b.len <= (size_t)BOUND_PERMISSION_SUBJECT ? (int)b.len : -1;
}

/* --- entries ----------------------------------------------------------- */

/* A call's signature, written at most once per decision and only when an
 * entry asks for it. */
struct sigcache {
    const struct permission_call *call;
    bool done, ok;
    char text[BOUND_PERMISSION_SUBJECT + 1];
};

static const char *
signature_of(struct sigcache *c, bool *ok)
{
    if (!c->done) {
        c->ok = permission_signature(c->call, c->text, sizeof(c->text)) >= 0;
        c->done = true;
    }
    *ok = c->ok;
    return c->text;
}

/*
 * A compiled terminal rule's "match": "prefix" or "exact", compared byte
 * for byte (case matters) as C strings, as the terminal's rules always
 * were; no bound applies, since no glob runs. An unknown kind falls the
 * safe way for `list`.
 */
static bool
literal_matches(const char *kind, const char *pattern, const char *value,
                enum permission_list list)
{
    if (strcmp(kind, "prefix") == 0)
        return strncmp(value, pattern, strlen(pattern)) == 0;
    if (strcmp(kind, "exact") == 0)
        return strcmp(value, pattern) == 0;
    return list == PERMISSION_DENY_LIST;
}

/* "action" first: the run API's rules spell it so, and only they can
 * hold both (the policy reader refuses that) */
static const char *
entry_tool(const json_t *entry)
{
    const char *t = json_string_value(json_object_get(entry, "action"));

    return t ? t : json_string_value(json_object_get(entry, "tool"));
}

static bool
entry_matches(const json_t *entry, struct sigcache *sc,
              enum permission_list list)
{
    const struct permission_call *call = sc->call;
    const char *tool, *sig, *pattern, *value, *match;
    const json_t *arg, *v;
    bool ok;

    if (json_is_string(entry))
        return strcmp(json_string_value(entry), call->tool) == 0;
    if (!json_is_object(entry))
        return false;
    tool = entry_tool(entry);
    sig = json_string_value(json_object_get(entry, "signature"));
    arg = json_object_get(entry, "arg");
    pattern = json_string_value(json_object_get(entry, "pattern"));
    if (tool == NULL && sig == NULL)
        return false; /* no condition, or an argument of no tool */
    if (tool != NULL && strcmp(tool, call->tool) != 0)
        return false;
    if (sig != NULL) {
        const char *text = signature_of(sc, &ok);
        if (!glob_matches(sig, text, ok, list))
            return false;
    }
    if (arg == NULL)
        return true;
    if (!json_is_string(arg) || pattern == NULL)
        return false; /* half a condition matches nothing */
    v = json_object_get(call->args, json_string_value(arg));
    if (!json_is_string(v))
        return false;
    value = json_string_value(v);
    match = json_string_value(json_object_get(entry, "match"));
    if (match != NULL)
        return literal_matches(match, pattern, value, list);
    ok = json_string_length(v) <= BOUND_PERMISSION_SUBJECT &&
         strlen(value) == json_string_length(v);
    return glob_matches(pattern, value, ok, list);
}

bool
permission_entry_matches(const json_t *entry,
                         const struct permission_call *call,
                         enum permission_list list)
{
    /* 8 KiB on a worker's 512 KiB stack (WORKER_THREAD_STACK) */
    struct sigcache sc = {.call = call};

    return entry_matches(entry, &sc, list);
}

static bool
first_match(const json_t *entries, struct sigcache *sc,
            enum permission_list list, size_t *index)
{
    const json_t *e;
    size_t i;

    json_array_foreach(entries, i, e) {
        if (entry_matches(e, sc, list)) {
            *index = i;
            return true;
        }
    }
    return false;
}

bool
permission_list_match(const json_t *entries, const struct permission_call *call,
                      enum permission_list list, size_t *index)
{
    struct sigcache sc = {.call = call};
    size_t unused;

    return first_match(entries, &sc, list, index ? index : &unused);
}

/* --- reading a policy -------------------------------------------------- */

static int
bad(struct status_error *err, const char *list, size_t i, const char *what)
{
    return status_set(err, ST_CONFIG, "permission: %s[%zu]: %s", list, i, what);
}

static int
check_glob(const json_t *g, const char *key, const char *list, size_t i,
           struct status_error *err)
{
    if (!json_is_string(g))
        return status_set(err, ST_CONFIG,
                          "permission: %s[%zu]: '%s' must be text", list, i,
                          key);
    if (json_string_length(g) > BOUND_PERMISSION_PATTERN ||
        strlen(json_string_value(g)) != json_string_length(g))
        return status_set(err, ST_CONFIG,
                          "permission: %s[%zu]: '%s' is longer than %d "
                          "bytes or holds a NUL byte",
                          list, i, key, BOUND_PERMISSION_PATTERN);
    return 0;
}

static int
check_entry(const json_t *e, const char *list, size_t i,
            struct status_error *err)
{
    static const char *const known[] = {"tool", "action", "signature", "arg",
                                        "pattern"};
    const char *key;
    const json_t *v;
    const json_t *tool;

    if (json_is_string(e)) {
        if (json_string_length(e) == 0)
            return bad(err, list, i, "empty tool name");
        if (strlen(json_string_value(e)) != json_string_length(e))
            return bad(err, list, i, "a NUL byte in the tool name");
        return 0;
    }
    if (!json_is_object(e))
        return bad(err, list, i,
                   "must be a tool name, {tool}, {signature} or {tool, "
                   "arg, pattern}");
    json_object_foreach(UNCONST(e), key, v) {
        size_t k = 0;

        while (k < ARRAY_SIZE(known) && strcmp(known[k], key) != 0)
            k++;
        if (k == ARRAY_SIZE(known))
            return status_set(err, ST_CONFIG,
                              "permission: %s[%zu]: unknown key '%s'", list, i,
                              key);
        if (!json_is_string(v))
            return status_set(err, ST_CONFIG,
                              "permission: %s[%zu]: '%s' must be text", list, i,
                              key);
        /* a name cut at a NUL would compare as its prefix */
        if (strlen(json_string_value(v)) != json_string_length(v))
            return status_set(err, ST_CONFIG,
                              "permission: %s[%zu]: a NUL byte in '%s'", list,
                              i, key);
    }
    if (json_object_get(e, "tool") && json_object_get(e, "action"))
        return bad(err, list, i, "give 'tool' or 'action', not both");
    tool = json_object_get(e, "tool") ? json_object_get(e, "tool")
                                      : json_object_get(e, "action");
    if (json_object_get(e, "signature")) {
        if (json_object_size(e) != 1)
            return bad(err, list, i, "'signature' stands alone");
        return check_glob(json_object_get(e, "signature"), "signature", list, i,
                          err);
    }
    if (tool == NULL)
        return bad(err, list, i, "needs a 'tool' or a 'signature'");
    if (json_string_length(tool) == 0)
        return bad(err, list, i, "empty tool name");
    if ((json_object_get(e, "arg") == NULL) !=
        (json_object_get(e, "pattern") == NULL))
        return bad(err, list, i, "'arg' and 'pattern' go together");
    if (json_object_get(e, "pattern"))
        return check_glob(json_object_get(e, "pattern"), "pattern", list, i,
                          err);
    return 0;
}

static int
check_list(const json_t *l, const char *name, struct status_error *err)
{
    const json_t *e;
    size_t i;

    if (l == NULL || json_is_null(l))
        return 0;
    if (!json_is_array(l))
        return status_set(err, ST_CONFIG, "permission: '%s' must be a list",
                          name);
    if (json_array_size(l) > BOUND_PERMISSION_ENTRIES)
        return status_set(err, ST_CONFIG,
                          "permission: '%s' has more than %d entries", name,
                          BOUND_PERMISSION_ENTRIES);
    json_array_foreach(l, i, e) {
        if (check_entry(e, name, i, err) != 0)
            return -1;
    }
    return 0;
}

int
permission_policy_from_json(const json_t *cfg, struct permission_policy *out,
                            struct status_error *err)
{
    static const struct {
        const char *name;
        enum permission_verdict v;
    } defaults[] = {{"allow", PERMISSION_ALLOW},
                    {"deny", PERMISSION_DENY},
                    {"ask", PERMISSION_ASK}};
    const json_t *def, *allow, *deny, *v;
    const char *key;
    size_t k;

    *out = (struct permission_policy){PERMISSION_ASK, NULL, NULL};
    if (cfg == NULL || json_is_null(cfg))
        return 0;
    if (!json_is_object(cfg))
        return status_set(err, ST_CONFIG,
                          "permission: must be a mapping {default, allow, "
                          "deny}");
    json_object_foreach(UNCONST(cfg), key, v) {
        if (strcmp(key, "default") != 0 && strcmp(key, "allow") != 0 &&
            strcmp(key, "deny") != 0)
            return status_set(err, ST_CONFIG,
                              "permission: unknown key '%s' (default, allow, "
                              "deny)",
                              key);
    }
    def = json_object_get(cfg, "default");
    allow = json_object_get(cfg, "allow");
    deny = json_object_get(cfg, "deny");
    if (def != NULL) {
        const char *s = json_string_value(def);

        for (k = 0; s && k < ARRAY_SIZE(defaults); k++)
            if (strcmp(s, defaults[k].name) == 0)
                break;
        if (s == NULL || k == ARRAY_SIZE(defaults))
            return status_set(err, ST_CONFIG,
                              "permission: 'default' must be allow, deny or "
                              "ask");
        out->fallback = defaults[k].v;
    }
    if (check_list(allow, "allow", err) != 0 ||
        check_list(deny, "deny", err) != 0)
        return -1;
    out->allow = json_is_array(allow) ? allow : NULL;
    out->deny = json_is_array(deny) ? deny : NULL;
    return 0;
}
