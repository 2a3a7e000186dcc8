/*
 * setup.c - `gemini-agent setup [DIR]`: a complete site in DIR (the
 * current folder by default; newsite.c makes it). With --config-dir or
 * --config, what it made before it made whole sites: the site owner's own
 * .gemini.yaml, readable only by them, written from the template built into the
 * program, so it works from any folder, not only inside a checkout; and
 * the session secret that signs sign-in tokens (core/token.h).
 *
 * The secret goes where the config's auth.secretFile says, or, when it
 * names none, to .session-secret beside it: agent.yaml must then name it
 * (`auth: {secretFile: .session-secret}`) before tokens are accepted, so
 * that turning sign-in on stays the site owner's explicit choice. An
 * existing secret is never replaced: every session signed with it would
 * end.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "cmd/newsite.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "core/token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_setup_usage[] = "[DIR | --config-dir DIR | --config FILE]";

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

/* mkdir -p the folder of `file` (0700: it holds a secret); 0/-1. */
static int
make_parent(const char *file)
{
    char dir[BOUND_PATH_LEN];
    const char *slash = strrchr(file, '/');
    size_t n;

    if (slash == NULL || slash == file)
        return 0;
    n = (size_t)(slash - file);
    if (n >= sizeof(dir))
        return -1;
    memcpy(dir, file, n);
    dir[n] = '\0';
    return cmd_make_dirs(dir, 0700);
}

/*
 * The session secret for the config at `config_path` (in `config_dir`):
 * created when missing, kept when present. 0, or 1 when it could not be
 * made (said why on stderr).
 */
static int
setup_secret(const char *config_dir, const char *config_path)
{
    struct diag d = DIAG_INIT;
    struct status_error err = {0};
    struct config *cfg = NULL;
    char path[BOUND_PATH_LEN];
    const char *secret = path; /* where it goes */
    bool named = false;        /* ...as auth.secretFile says */
    int rc = 1;

    /* A config that exists says where the secret goes; a broken one
     * cannot, and guessing could make a secret nothing reads. */
    if (access(config_path, F_OK) == 0) {
        cfg = config_load(config_path, &d);
        if (cfg == NULL) {
            diag_print(&d, stderr, "");
            fprintf(stderr,
                    "error: '%s' cannot be read, so the session secret was "
                    "not made; fix it and run setup again\n",
                    config_path);
            goto out;
        }
        if (cfg->auth.secret_file != NULL) {
            secret = cfg->auth.secret_file;
            named = true;
        }
    }
    if (!named && (size_t)snprintf(path, sizeof(path), "%s/.session-secret",
                                   config_dir) >= sizeof(path)) {
        fprintf(stderr, "error: the folder name '%s' is too long\n",
                config_dir);
        goto out;
    }
    if (access(secret, F_OK) == 0) {
        unsigned char buf[BOUND_SECRET_MAX];
        size_t n;

        printf("kept %s (the session secret; a new one would end every "
               "session)\n",
               secret);
        /* kept, but serve would refuse it: say so now */
        rc = token_secret_load(secret, buf, sizeof(buf), &n, &err) == 0 ? 0 : 1;
        explicit_bzero(buf, sizeof(buf));
        if (rc != 0)
            fprintf(stderr, "error: %s\n", err.text);
        goto out;
    }
    /* auth.secretFile may name a folder of its own (keys/, /etc/...) */
    if (named && make_parent(secret) != 0)
        goto out;
    if (token_secret_create(secret, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.text);
        goto out;
    }
    printf("wrote %s (mode 0600: %d random bytes that sign session tokens)\n",
           secret, BOUND_SECRET_MIN);
    if (!named)
        printf("  to accept session tokens (the run API's sign-in), add to "
               "%s:\n"
               "    auth:\n"
               "      secretFile: .session-secret\n",
               config_path);
    rc = 0;
out:
    config_free(cfg);
    diag_release(&d);
    return rc;
}

/* DIR/.gemini.yaml from the template: 0, or 1 (said why on stderr). */
static int
write_settings(const char *config_dir)
{
    char dst[BOUND_PATH_LEN];
    int fd;

    if ((size_t)snprintf(dst, sizeof(dst), "%s/.gemini.yaml", config_dir) >=
        sizeof(dst)) {
        fprintf(stderr, "error: the folder name '%s' is too long\n",
                config_dir);
        return 1;
    }
    /* O_EXCL: an existing file holds someone's key; never overwrite it. */
    fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
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
        fprintf(stderr, "error: cannot write '%s': %s\n", dst, strerror(errno));
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

/* Both files; the secret is made (or kept) even when .gemini.yaml
 * exists already, so that a site set up before sign-in existed gets one
 * by running setup again. */
static int
setup(const char *config_dir, const char *config_path)
{
    int rc;

    /* The folder will hold a key: only its owner may look inside. */
    if (cmd_make_dirs(config_dir, 0700) != 0)
        return 1;
    rc = write_settings(config_dir);
    return setup_secret(config_dir, config_path) | rc;
}

int
cmd_setup(int argc, char **argv)
{
    char buf[BOUND_PATH_LEN], cfg_buf[BOUND_PATH_LEN];
    const char *config_dir = NULL, *config_file = NULL;
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--config-dir", &config_dir),
        /* like every command: the config, whose folder is DIR */
        CMDOPT_STR("--config", &config_file),
        CMDOPT_END,
    };
    const char *site_dir = ".";
    struct cmdopt_cmd c = {.name = "setup",
                           .usage = cmd_setup_usage,
                           .opts = opts,
                           .words = &site_dir,
                           .max_words = 1};
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if (config_file == NULL && config_dir == NULL) {
        if (site_dir[0] == '\0')
            return cmdopt_fail(&c, "DIR needs a folder name");
        return newsite_create(site_dir, newsite_share_dir());
    }
    if (c.nwords > 0)
        return cmdopt_fail(&c, "give DIR, --config-dir or --config, not two");
    if (config_file != NULL) {
        const char *slash = strrchr(config_file, '/');
        if (config_dir != NULL)
            return cmdopt_fail(&c, "give --config-dir or --config, not both");
        if (config_file[0] == '\0')
            return cmdopt_fail(&c, "--config needs a file name");
        if (slash == NULL)
            config_dir = ".";
        else if ((size_t)(slash - config_file) >= sizeof(buf))
            return cmdopt_fail(&c, "the config path '%s' is too long",
                               config_file);
        else if (slash == config_file)
            config_dir = "/";
        else {
            memcpy(buf, config_file, (size_t)(slash - config_file));
            buf[slash - config_file] = '\0';
            config_dir = buf;
        }
        return setup(config_dir, config_file);
    }
    if (config_dir[0] == '\0')
        return cmdopt_fail(&c, "--config-dir needs a folder name");
    /* The config that says where the secret goes: DIR's agent.yaml. */
    if ((size_t)snprintf(cfg_buf, sizeof(cfg_buf), "%s/agent.yaml",
                         config_dir) >= sizeof(cfg_buf))
        return cmdopt_fail(&c, "the folder name '%s' is too long", config_dir);
    return setup(config_dir, cfg_buf);
}
