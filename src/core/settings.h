/*
 * settings.h - read a YAML mapping into a struct through a key table.
 *
 * A section of a settings file (agent.yaml's `policy:`, .gemini.yaml's
 * `compaction:`, or a whole file) is described by one table: per key its
 * name, type, where the value goes (offsetof into the section's struct),
 * its default, its bounds and the sentence `gemini-agent check --settings`
 * prints for it. settings_read() reads any table and knows no feature:
 * every key, bound and message of a section is in the table that the code
 * using the section declares.
 *
 * Problems go to the context's `struct diag` as `file:line: message`,
 * naming the key by its dotted path ('budget.perIp.tokensPerDay'). The
 * messages' wording is chosen per row (enum settings_say), so a section
 * keeps the words its users and tests know.
 *
 * Not here: YAML parsing (ydoc.h), what a value means (the tables' owners).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SETTINGS_H
#define APP_SETTINGS_H

#include "core/common.h"

#include <stdio.h>

struct diag;
struct ydoc_node;
struct settings_key;

enum settings_type {
    SETTING_BOOL,    /* bool */
    SETTING_LONG,    /* long, min..max */
    SETTING_STRING,  /* char *, owned: a non-empty string */
    SETTING_PATH,    /* char *, owned: a non-empty string resolved against
                      * the file's folder */
    SETTING_ENUM,    /* int: one of `names` */
    SETTING_SWITCH,  /* bool named by words: `names` with values 0 and 1 */
    SETTING_SECTION, /* a nested mapping read with `section` */
    SETTING_CUSTOM,  /* an irregular shape: `read` reads it */
};

/* How a bad value is worded (the words each section has always used). */
enum settings_say {
    SAY_PLAIN,    /* 'k' must be true or false | must be an integer from
                   * MIN to MAX | must be a or b */
    SAY_TYPE,     /* ... , not <type> (bool); 'k' is a or b, not 'x' (enum) */
    SAY_BETWEEN,  /* long: 'k' must be an integer, not <type> | 'k' is N; it
                   * must be between MIN and MAX */
    SAY_NO_LIMIT, /* long: ... from MIN to MAX (leave it out for no limit) */
};

/* One name of an enum and the value it stores. */
struct settings_name {
    const char *name;
    int value;
};

/* Where a table is being read: messages name `file`; paths are relative
 * to `dir`; `user` is the custom readers' own state (may be NULL). */
struct settings_ctx {
    const char *file;
    const char *dir;
    struct diag *d;
    void *user;
};

/* A custom reader: the value `v` of key `path` (dotted) into `base`, the
 * section's struct (the row's offset not applied). */
typedef void settings_read_fn(void *base, const struct ydoc_node *v,
                              const char *path, const struct settings_ctx *cx);

/* A custom row's value for `check --settings`: writes at most size bytes
 * of text into buf. */
typedef void settings_show_fn(const void *base, char *buf, size_t size);

struct settings_table {
    /* when the section is not a mapping: "'PATH' must be <shape>", with
     * ", not <type>" when say_type */
    const char *shape;
    bool say_type;
    /* unknown keys are not echoed in the message (a secret pasted in the
     * wrong place would be) */
    bool quiet;
    const struct settings_key *keys;
    size_t nkeys;
    /* after the section was read (NULL: nothing to do) */
    void (*done)(void *base, const struct settings_ctx *cx);
};

struct settings_key {
    const char *name;
    enum settings_type type;
    size_t offset; /* into the section's struct */
    enum settings_say say;
    long min, max;        /* SETTING_LONG */
    long def;             /* LONG, BOOL, ENUM, SWITCH: the default */
    const char *def_text; /* STRING: the default (NULL: none) */
    const struct settings_name *names; /* ENUM, SWITCH */
    size_t nnames;
    const struct settings_table *section; /* SETTING_SECTION */
    settings_read_fn *read;               /* SETTING_CUSTOM */
    settings_show_fn *show;               /* CUSTOM: its value, or NULL */
    const char *help; /* what `check --settings` says of it */
    bool hidden;      /* an old key: read, but not offered in messages */
};

/*
 * Read the mapping `map` (the value of the key `path`, "" for a whole
 * file) into `base` with `t`. Problems are added to cx->d; a bad value
 * leaves the field as it was.
 */
void settings_read(const struct settings_table *t, void *base,
                   const struct ydoc_node *map, const char *path,
                   const struct settings_ctx *cx);

/* Set every default of `t` (and its sections) in `base`. Returns 0, or -1
 * when out of memory (a string default). */
int settings_defaults(const struct settings_table *t, void *base);

/*
 * Print every key of `t` read into `base`, one line each:
 * "  PATH: VALUE - HELP". `path` is the section's own ("" for a file).
 */
void settings_print(FILE *out, const struct settings_table *t, const void *base,
                    const char *path);

/* A string setting's slot: replace *slot with a copy of s (kept as it
 * was when out of memory). */
void settings_set_string(char **slot, const char *s);

/* A required non-empty string; reports "'KEY' must be a non-empty string,
 * not ..." and returns NULL otherwise. */
const char *settings_want_string(const struct ydoc_node *v, const char *key,
                                 const struct settings_ctx *cx);

/* `p` against `dir` unless absolute: a new string, NULL when out of
 * memory. */
char *settings_resolve(const char *dir, const char *p);

#endif /* APP_SETTINGS_H */
