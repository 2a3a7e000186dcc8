/*
 * cmdopt.c - one command's options (see cmdopt.h). Deliberately small: no
 * short options but -h, no --name=value, no option bundling. Every command
 * of gemini-agent reads the same way, so a site owner learns it once.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
cmdopt_put_lines(FILE *f, const char *text, int col, int indent)
{
    for (const char *s = text; *s != '\0'; s++) {
        if (*s == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else {
            fputc(*s, f);
            col++;
        }
    }
    return col;
}

void
cmdopt_usage(const struct cmdopt_cmd *c, FILE *f)
{
    int col = fprintf(f, "usage: gemini-agent %s ", c->name);

    /* Continuation lines line up under the first option. */
    cmdopt_put_lines(f, c->usage, col, col);
    fputc('\n', f);
}

int
cmdopt_fail(const struct cmdopt_cmd *c, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "gemini-agent %s: ", c->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cmdopt_usage(c, stderr);
    return CMDOPT_EXIT_USAGE;
}

static const struct cmdopt_opt *
find_opt(const struct cmdopt_cmd *c, const char *name)
{
    for (const struct cmdopt_opt *o = c->opts; o != NULL && o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

/* Store `value` for the option o; 0/-1 (the error is printed). */
static int
set_value(const struct cmdopt_cmd *c, const struct cmdopt_opt *o,
          const char *value)
{
    char *end;
    long n;

    if (o->str != NULL) {
        *o->str = value;
        return 0;
    }
    errno = 0;
    n = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno != 0 || n < o->min ||
        n > o->max) {
        cmdopt_fail(c, "%s must be %d..%d, not '%s'", o->name, o->min, o->max,
                    value);
        return -1;
    }
    *o->num = (int)n;
    return 0;
}

static bool
is_help(const char *w)
{
    return strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0;
}

/* Is -h or --help one of the words (not an option's value)? Looked for
 * before anything else, so that help wins over any mistake beside it. */
static bool
wants_help(const struct cmdopt_cmd *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const struct cmdopt_opt *o = find_opt(c, argv[i]);

        if (is_help(argv[i]))
            return true;
        /* a value, as the main loop would take it */
        if (o != NULL && o->flag == NULL && i + 1 < argc &&
            strncmp(argv[i + 1], "--", 2) != 0)
            i++;
    }
    return false;
}

int
cmdopt_parse(struct cmdopt_cmd *c, int argc, char **argv, int *exit_code)
{
    *exit_code = CMDOPT_EXIT_USAGE;
    c->nwords = 0;
    if (wants_help(c, argc, argv)) {
        cmdopt_usage(c, stdout);
        *exit_code = 0;
        return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        const struct cmdopt_opt *o;

        if (w[0] != '-') {
            if (c->nwords == c->max_words) {
                cmdopt_fail(c, "unexpected argument '%s'", w);
                return -1;
            }
            c->words[c->nwords++] = w;
            continue;
        }
        o = find_opt(c, w);
        if (o == NULL) {
            cmdopt_fail(c, "unknown option '%s'", w);
            return -1;
        }
        if (o->flag != NULL) {
            *o->flag = true;
            continue;
        }
        if (i + 1 == argc || strncmp(argv[i + 1], "--", 2) == 0) {
            cmdopt_fail(c, "%s needs a value", w);
            return -1;
        }
        if (set_value(c, o, argv[++i]) != 0)
            return -1;
    }
    return 0;
}
