/*
 * setup.c - `gemini-agent setup`: the site owner's own .gemini.yaml,
 * from the template, readable only by them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/sbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_setup_usage[] = "[--config-dir DIR]";

static int
setup(const char *config_dir)
{
    char src[4096], dst[4096];
    FILE *in;
    struct sbuf text;
    char chunk[4096];
    size_t n;
    int fd, rc = 1;

    snprintf(dst, sizeof(dst), "%s/.gemini.yaml", config_dir);
    snprintf(src, sizeof(src), "%s/gemini.yaml.template", config_dir);
    in = fopen(src, "r");
    if (in == NULL && strcmp(config_dir, "conf") != 0) {
        snprintf(src, sizeof(src), "conf/gemini.yaml.template");
        in = fopen(src, "r");
    }
    if (in == NULL) {
        fprintf(stderr,
                "error: cannot read the template '%s/gemini.yaml.template': "
                "%s\n",
                config_dir, strerror(errno));
        return 1;
    }
    sbuf_init(&text, 64 * 1024);
    while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
        if (sbuf_add(&text, chunk, n) != 0)
            break;
    fclose(in);
    /* O_EXCL: an existing file holds someone's key; never overwrite it. */
    fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            fprintf(stderr,
                    "error: '%s' already exists; edit it, or remove it and "
                    "run setup again\n",
                    dst);
        else
            fprintf(stderr, "error: cannot create '%s': %s\n", dst,
                    strerror(errno));
        goto out;
    }
    if (fchmod(fd, 0600) != 0 || write(fd, text.buf, text.len) != (ssize_t)text.len) {
        fprintf(stderr, "error: cannot write '%s': %s\n", dst, strerror(errno));
        close(fd);
        unlink(dst);
        goto out;
    }
    close(fd);
    printf("wrote %s (mode 0600, readable only by you)\n"
           "next:\n"
           "  1. put your Gemini API key in apiKey in %s\n"
           "     (or leave it and set GEMINI_API_KEY in the server's "
           "environment)\n"
           "  2. run: gemini-agent check --config %s/agent.yaml\n",
           dst, dst, config_dir);
    rc = 0;
out:
    sbuf_release(&text);
    return rc;
}

int
cmd_setup(int argc, char **argv)
{
    const char *config_dir = "conf";
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--config-dir", &config_dir),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {.name = "setup", .usage = cmd_setup_usage,
                           .opts = opts};
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    return setup(config_dir);
}
