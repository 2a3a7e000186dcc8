/*
 * setup.c - `gemini-agent setup`: the site owner's own .gemini.yaml,
 * readable only by them, written from the template built into the
 * program, so it works from any folder, not only inside a checkout.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/bounds.h"
#include "core/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_setup_usage[] = "[--config-dir DIR]";

/* The folder of the default config file: $GEMINI_AGENT_CONFIG's, else
 * conf/ (config_default_path()), into buf[size]. */
static const char *
default_dir(char *buf, size_t size)
{
    const char *path = config_default_path(), *slash = strrchr(path, '/');

    if (slash == NULL)
        return ".";
    if (slash == path)
        return "/";
    if ((size_t)(slash - path) >= size)
        return NULL;
    memcpy(buf, path, (size_t)(slash - path));
    buf[slash - path] = '\0';
    return buf;
}

/* Write all of text to fd; 0/-1 (errno set). */
static int
write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, text, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        text += w;
        len -= (size_t)w;
    }
    return 0;
}

static int
setup(const char *config_dir)
{
    char dst[BOUND_PATH_LEN];
    int fd;

    if ((size_t)snprintf(dst, sizeof(dst), "%s/.gemini.yaml", config_dir) >=
        sizeof(dst)) {
        fprintf(stderr, "error: the folder name '%s' is too long\n",
                config_dir);
        return 1;
    }
    /* The folder will hold a key: only its owner may look inside. */
    if (cmd_make_dirs(config_dir, 0700) != 0)
        return 1;
    /* O_EXCL: an existing file holds someone's key; never overwrite it. */
    fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
              0600);
    if (fd < 0) {
        if (errno == EEXIST)
            fprintf(stderr,
                    "error: '%s' already exists; edit it, or remove it and "
                    "run setup again\n",
                    dst);
        else
            fprintf(stderr, "error: cannot create '%s': %s\n", dst,
                    strerror(errno));
        return 1;
    }
    /* 0600 whatever the umask said. */
    if (fchmod(fd, 0600) != 0 ||
        write_all(fd, cmd_setup_template, strlen(cmd_setup_template)) != 0 ||
        close(fd) != 0) {
        fprintf(stderr, "error: cannot write '%s': %s\n", dst,
                strerror(errno));
        close(fd);
        unlink(dst);
        return 1;
    }
    printf("wrote %s (mode 0600, readable only by you)\n"
           "next:\n"
           "  1. put your Gemini API key in apiKey in %s\n"
           "     (or leave it and set GEMINI_API_KEY in the server's "
           "environment)\n"
           "  2. run: gemini-agent check --config %s/agent.yaml\n"
           "     (agent.yaml's `gemini:` names this file; .gemini.yaml beside "
           "it is the default)\n",
           dst, dst, config_dir);
    return 0;
}

int
cmd_setup(int argc, char **argv)
{
    char buf[BOUND_PATH_LEN];
    const char *config_dir = NULL;
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--config-dir", &config_dir),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {.name = "setup", .usage = cmd_setup_usage,
                           .opts = opts};
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (config_dir == NULL && (config_dir = default_dir(buf, sizeof(buf))) == NULL)
        return cmdopt_fail(&c, "the config path in GEMINI_AGENT_CONFIG is too "
                               "long");
    if (config_dir[0] == '\0')
        return cmdopt_fail(&c, "--config-dir needs a folder name");
    return setup(config_dir);
}
