/*
 * cmdopt.h - the command line of one command: the `--name VALUE` options
 * and `--name` flags it takes, its positional words, and one way to say
 * what is wrong with it.
 *
 * A command lists what it accepts and where each value goes, then parses:
 *
 *     const char *config = config_default_path();
 *     const struct cmdopt_opt opts[] = {
 *         CMDOPT_STR("--config", &config),
 *         CMDOPT_END,
 *     };
 *     struct cmdopt_cmd c = {.name = "check", .usage = cmd_check_usage,
 *                            .opts = opts};
 *     int rc;
 *
 *     if (cmdopt_parse(&c, argc, argv, &rc) != 0)
 *         return rc;
 *
 * Anything it did not list is an error: "gemini-agent check: unknown option
 * '--workers'", then the command's usage, on stderr, exit code 2. `-h` or
 * `--help` anywhere (but as an option's value) prints the usage on stdout
 * instead, exit code 0, whatever else is wrong with the command line.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CMDOPT_H
#define APP_CMDOPT_H

#include "core/common.h"

#include <stdio.h>

/* The exit code of a command line that is wrong (0 ok, 1 the work failed). */
#define CMDOPT_EXIT_USAGE 2

/* One option. Exactly one of str, num and flag is set. An option given
 * twice keeps the last value, so a wrapper script can put defaults first. */
struct cmdopt_opt {
    const char *name; /* with its dashes: "--config" */
    const char **str; /* --name VALUE: VALUE is stored here */
    int *num;         /* --name N: N, an integer in min..max, is stored here */
    int min, max;
    bool *flag; /* --name: set to true */
};

#define CMDOPT_STR(n, p)                                                       \
    {                                                                          \
        .name = (n), .str = (p)                                                \
    }
#define CMDOPT_FLAG(n, p)                                                      \
    {                                                                          \
        .name = (n), .flag = (p)                                               \
    }
#define CMDOPT_END                                                             \
    {                                                                          \
        .name = NULL                                                           \
    }
#define CMDOPT_INT(n, p, lo, hi)                                               \
    {                                                                          \
        .name = (n), .num = (p), .min = (lo), .max = (hi)                      \
    }

/* One command's command line. */
struct cmdopt_cmd {
    const char *name;              /* "check", as typed after gemini-agent */
    const char *usage;             /* what follows the name in its usage;
                                      a '\n' starts an aligned new line */
    const struct cmdopt_opt *opts; /* ends with CMDOPT_END; NULL: none */
    const char **words;            /* positional words go here... */
    int max_words;                 /* ...at most this many */
    int nwords;                    /* set by cmdopt_parse */
};

/*
 * Parse argv[1..argc) (argv[0] is the command's name) into the places
 * c->opts and c->words name. A word after a value option that starts with
 * "--" is taken for the next option, so `--config --out x` says --config
 * needs a value instead of reading a file called "--out".
 * Returns 0 when the command should run; -1 when it should stop and return
 * *exit_code: 0 after --help, CMDOPT_EXIT_USAGE after an error (printed).
 */
int cmdopt_parse(struct cmdopt_cmd *c, int argc, char **argv, int *exit_code);

/* Print "gemini-agent NAME: <message>" and the command's usage on stderr;
 * returns CMDOPT_EXIT_USAGE, for `return cmdopt_fail(...)`. For the rules
 * a table cannot say (serve needs one of --socket and --listen). */
int cmdopt_fail(const struct cmdopt_cmd *c, const char *fmt, ...)
    ATTR_FMT(2, 3);

/* "usage: gemini-agent NAME USAGE\n" on f. */
void cmdopt_usage(const struct cmdopt_cmd *c, FILE *f);

/* Write text on f, starting at column col; each '\n' in it starts a new
 * line indented by `indent` spaces. Returns the column where it ended. */
int cmdopt_put_lines(FILE *f, const char *text, int col, int indent);

#endif /* APP_CMDOPT_H */
