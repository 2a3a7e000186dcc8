/*
 * settings.c - read a YAML mapping into a struct through a key table
 * (settings.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/settings.h"
#include "core/diag.h"
#include "core/ydoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest dotted key path a table names ('budget.perIp.tokensPerDay'
 * and the like): longer paths are cut in messages. */
#define SETTINGS_PATH_MAX 128

/* The characters of a string value `check --settings` shows. */
#define SETTINGS_SHOW_MAX 60

static void *
slot(void *base, const struct settings_key *k)
{
    return (char *)base + k->offset;
}

static const void *
cslot(const void *base, const struct settings_key *k)
{
    return (const char *)base + k->offset;
}

void
settings_set_string(char **slot_, const char *s)
{
    char *copy = strdup(s);

    if (copy != NULL) {
        free(*slot_);
        *slot_ = copy;
    }
}

char *
settings_resolve(const char *dir, const char *p)
{
    char *out = NULL;

    if (p[0] == '/')
        return strdup(p);
    if (asprintf(&out, "%s/%s", dir, p) < 0)
        return NULL;
    return out;
}

const char *
settings_want_string(const struct ydoc_node *v, const char *key,
                     const struct settings_ctx *cx)
{
    const char *s = ydoc_string(v);

    if (s == NULL || s[0] == '\0') {
        diag_add(cx->d, cx->file, v->line,
                 "'%s' must be a non-empty string, not %s", key,
                 s ? "an empty string" : ydoc_type_name(v));
        return NULL;
    }
    return s;
}

/* "a, b, c": the keys a message offers (old, hidden keys left out). */
static void
key_list(const struct settings_table *t, char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < t->nkeys && n < size; i++) {
        if (t->keys[i].hidden)
            continue;
        int w = snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
                         t->keys[i].name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static void
unknown_key(const struct settings_table *t, const struct ydoc_node *k,
            const char *path, const struct settings_ctx *cx)
{
    char expected[512], where[SETTINGS_PATH_MAX + 8] = "";

    key_list(t, expected, sizeof(expected));
    if (path[0] != '\0')
        snprintf(where, sizeof(where), " in '%s'", path);
    if (t->quiet)
        diag_add(cx->d, cx->file, k->line,
                 "unknown key%s (expected one of: %s)", where, expected);
    else
        diag_add(cx->d, cx->file, k->line,
                 "unknown key '%s'%s (expected one of: %s)", k->text, where,
                 expected);
}

static void
read_bool(const struct settings_key *k, void *base, const struct ydoc_node *v,
          const char *path, const struct settings_ctx *cx)
{
    if (ydoc_bool(v, slot(base, k)))
        return;
    if (k->say == SAY_TYPE)
        diag_add(cx->d, cx->file, v->line, "'%s' must be true or false, not %s",
                 path, ydoc_type_name(v));
    else
        diag_add(cx->d, cx->file, v->line, "'%s' must be true or false", path);
}

static void
read_long(const struct settings_key *k, void *base, const struct ydoc_node *v,
          const char *path, const struct settings_ctx *cx)
{
    long long val;
    bool is_int = ydoc_int(v, &val);

    if (is_int && val >= k->min && val <= k->max) {
        *(long *)slot(base, k) = (long)val;
        return;
    }
    if (k->say == SAY_BETWEEN && !is_int)
        diag_add(cx->d, cx->file, v->line, "'%s' must be an integer, not %s",
                 path, ydoc_type_name(v));
    else if (k->say == SAY_BETWEEN)
        diag_add(cx->d, cx->file, v->line,
                 "'%s' is %lld; it must be between %ld and %ld", path, val,
                 k->min, k->max);
    else
        diag_add(cx->d, cx->file, v->line,
                 "'%s' must be an integer from %ld to %ld%s", path, k->min,
                 k->max,
                 k->say == SAY_NO_LIMIT ? " (leave it out for no limit)" : "");
}

/* "a or b" / "a, b or c": an enum's names in a message. */
static void
name_list(const struct settings_key *k, char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < k->nnames && n < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == k->nnames ? " or " : ", ";
        int w = snprintf(buf + n, size - n, "%s%s", sep, k->names[i].name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static void
read_enum(const struct settings_key *k, void *base, const struct ydoc_node *v,
          const char *path, const struct settings_ctx *cx)
{
    const char *s = ydoc_string(v);
    char names[256];

    for (size_t i = 0; s != NULL && i < k->nnames; i++)
        if (strcmp(s, k->names[i].name) == 0) {
            if (k->type == SETTING_SWITCH)
                *(bool *)slot(base, k) = k->names[i].value != 0;
            else
                *(int *)slot(base, k) = k->names[i].value;
            return;
        }
    name_list(k, names, sizeof(names));
    if (k->say == SAY_TYPE)
        diag_add(cx->d, cx->file, v->line, "'%s' is %s, not %s%s%s", path,
                 names, s ? "'" : "", s ? s : ydoc_type_name(v), s ? "'" : "");
    else
        diag_add(cx->d, cx->file, v->line, "'%s' must be %s", path, names);
}

static void
read_string(const struct settings_key *k, void *base, const struct ydoc_node *v,
            const char *path, const struct settings_ctx *cx)
{
    const char *s = settings_want_string(v, path, cx);
    char **sl = slot(base, k);
    char *p;

    if (s == NULL)
        return;
    if (k->type == SETTING_STRING) {
        settings_set_string(sl, s);
    } else if ((p = settings_resolve(cx->dir, s)) != NULL) {
        free(*sl);
        *sl = p;
    }
}

static void
read_value(const struct settings_key *k, void *base, const struct ydoc_node *v,
           const char *path, const struct settings_ctx *cx)
{
    switch (k->type) {
    case SETTING_BOOL:
        read_bool(k, base, v, path, cx);
        break;
    case SETTING_LONG:
        read_long(k, base, v, path, cx);
        break;
    case SETTING_STRING:
    case SETTING_PATH:
        read_string(k, base, v, path, cx);
        break;
    case SETTING_ENUM:
    case SETTING_SWITCH:
        read_enum(k, base, v, path, cx);
        break;
    case SETTING_SECTION:
        settings_read(k->section, slot(base, k), v, path, cx);
        break;
    case SETTING_CUSTOM:
        k->read(base, v, path, cx);
        break;
    }
}

static const struct settings_key *
find_key(const struct settings_table *t, const char *name)
{
    for (size_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i].name, name) == 0)
            return &t->keys[i];
    return NULL;
}

static void
join_path(char *buf, size_t size, const char *path, const char *name)
{
    snprintf(buf, size, "%s%s%s", path, path[0] ? "." : "", name);
}

void
settings_read(const struct settings_table *t, void *base,
              const struct ydoc_node *map, const char *path,
              const struct settings_ctx *cx)
{
    if (map->kind != YDOC_MAP) {
        diag_add(cx->d, cx->file, map->line, "'%s' must be %s%s%s", path,
                 t->shape, t->say_type ? ", not " : "",
                 t->say_type ? ydoc_type_name(map) : "");
        return;
    }
    for (size_t i = 0; i < map->count; i++) {
        const struct ydoc_node *k = map->keys[i], *v = map->values[i];
        const struct settings_key *key = find_key(t, k->text);
        char sub[SETTINGS_PATH_MAX];

        if (key == NULL) {
            unknown_key(t, k, path, cx);
            continue;
        }
        join_path(sub, sizeof(sub), path, key->name);
        read_value(key, base, v, sub, cx);
    }
    if (t->done != NULL)
        t->done(base, cx);
}

int
settings_defaults(const struct settings_table *t, void *base)
{
    for (size_t i = 0; i < t->nkeys; i++) {
        const struct settings_key *k = &t->keys[i];
        char **sl;

        switch (k->type) {
        case SETTING_BOOL:
            *(bool *)slot(base, k) = k->def != 0;
            break;
        case SETTING_LONG:
            *(long *)slot(base, k) = k->def;
            break;
        case SETTING_ENUM:
            *(int *)slot(base, k) = (int)k->def;
            break;
        case SETTING_SWITCH:
            *(bool *)slot(base, k) = k->def != 0;
            break;
        case SETTING_STRING:
        case SETTING_PATH:
            sl = slot(base, k);
            if (k->def_text != NULL && *sl == NULL &&
                (*sl = strdup(k->def_text)) == NULL)
                return -1;
            break;
        case SETTING_SECTION:
            if (settings_defaults(k->section, slot(base, k)) != 0)
                return -1;
            break;
        case SETTING_CUSTOM:
            break;
        }
    }
    return 0;
}

/* A row's value as text for `check --settings`. */
static void
show_value(const struct settings_key *k, const void *base, char *buf,
           size_t size)
{
    const char *s;

    snprintf(buf, size, "-");
    switch (k->type) {
    case SETTING_BOOL:
        snprintf(buf, size, "%s",
                 *(const bool *)cslot(base, k) ? "true" : "false");
        break;
    case SETTING_LONG:
        snprintf(buf, size, "%ld", *(const long *)cslot(base, k));
        break;
    case SETTING_STRING:
    case SETTING_PATH:
        s = *(char *const *)cslot(base, k);
        /* a long text (an instruction) by its start */
        if (s != NULL && strlen(s) > SETTINGS_SHOW_MAX)
            snprintf(buf, size, "%.*s...", SETTINGS_SHOW_MAX, s);
        else
            snprintf(buf, size, "%s", s ? s : "(none)");
        break;
    case SETTING_ENUM:
    case SETTING_SWITCH:
        for (size_t i = 0; i < k->nnames; i++)
            if (k->names[i].value == (k->type == SETTING_SWITCH
                                          ? *(const bool *)cslot(base, k)
                                          : *(const int *)cslot(base, k)))
                snprintf(buf, size, "%s", k->names[i].name);
        break;
    case SETTING_CUSTOM:
        if (k->show != NULL)
            k->show(base, buf, size);
        break;
    case SETTING_SECTION:
        break;
    }
}

void
settings_print(FILE *out, const struct settings_table *t, const void *base,
               const char *path)
{
    for (size_t i = 0; i < t->nkeys; i++) {
        const struct settings_key *k = &t->keys[i];
        char sub[SETTINGS_PATH_MAX], value[256];

        if (k->hidden)
            continue;
        join_path(sub, sizeof(sub), path, k->name);
        if (k->type == SETTING_SECTION) {
            settings_print(out, k->section, cslot(base, k), sub);
            continue;
        }
        show_value(k, base, value, sizeof(value));
        fprintf(out, "  %s: %s%s%s\n", sub, value, k->help ? " - " : "",
                k->help ? k->help : "");
    }
}
