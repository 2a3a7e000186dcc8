/*
 * newsite.c - `gemini-agent setup DIR`: a complete site (newsite.h).
 *
 * Every piece is made only when missing: a site owner may run setup again
 * after an upgrade, or after removing one file, and keeps every edit. The
 * web server snippets are the shipped ones (the Makefile's SITE_SNIPPETS)
 * with their placeholder paths replaced by this site's, so there is one
 * copy of each snippet's text and the rendered file differs from it only
 * in those paths and a first line saying so.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/newsite.h"
#include "cmd/commands.h"
#include "core/bounds.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/token.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NEWSITE_SHARE_DIR /* the Makefile sets it; a unit build may not */
#define NEWSITE_SHARE_DIR "/usr/local/share/gemini-agent"
#endif

/* The largest file copied into a site (the widget's biggest is ~100 KB). */
#define NEWSITE_FILE_MAX (4u << 20)
/* Where the socket goes, under DIR (the snippets and the hint agree). */
#define NEWSITE_SOCKET   "run/gemini-agent.sock"

const char *
newsite_share_dir(void)
{
    return NEWSITE_SHARE_DIR;
}

/* The placeholder paths every shipped snippet uses, and what each becomes:
 * DIR plus a suffix, or the program (suffix NULL). */
static const struct {
    const char *from, *suffix;
} placeholders[] = {
    {"/srv/gemini-agent/www", "/www"},
    {"/srv/gemini-agent/build/gemini-agent", NULL},
    {"/srv/gemini-agent/conf/agent.yaml", "/agent.yaml"},
    {"/run/gemini-agent/gemini-agent.sock", "/" NEWSITE_SOCKET},
};

int
newsite_render(const char *text, const struct newsite_paths *p,
               struct sbuf *out)
{
    while (*text != '\0') {
        size_t i, n = 0;

        for (i = 0; i < ARRAY_SIZE(placeholders); i++) {
            n = strlen(placeholders[i].from);
            if (strncmp(text, placeholders[i].from, n) == 0)
                break;
        }
        if (i == ARRAY_SIZE(placeholders)) {
            if (sbuf_putc(out, *text++) != 0)
                return -1;
            continue;
        }
        if (placeholders[i].suffix == NULL
                ? sbuf_adds(out, p->binary) != 0
                : sbuf_addf(out, "%s%s", p->dir, placeholders[i].suffix) != 0)
            return -1;
        text += n;
    }
    return 0;
}

const char *
newsite_path_problem(const char *path)
{
    if (path[0] != '/')
        return "it is not an absolute path";
    if (strlen(path) > BOUND_PATH_LEN / 2)
        return "it is too long";
    /* what nginx and Apache would read as the end of a word, a quote, a
     * variable, a comment or a block */
    for (const char *c = path; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return "it holds a control character";
        if (strchr(" \t'\"\\;{}$#`", *c) != NULL)
            return "it holds a space or one of ' \" \\ ; { } $ # `, which "
                   "a web server's configuration would misread";
    }
    return NULL;
}

/* --- making files and folders, never over what exists ------------------- */

/* Counts of what one step wrote and kept, for its line of output. */
struct tally {
    int wrote, kept;
};

/* DIR/NAME into buf[BOUND_PATH_LEN]; -1 (said why) when too long. */
static int
join(char *buf, const char *dir, const char *name)
{
    if ((size_t)snprintf(buf, BOUND_PATH_LEN, "%s/%s", dir, name) <
        BOUND_PATH_LEN)
        return 0;
    fprintf(stderr, "error: the path '%s/%s' is too long\n", dir, name);
    return -1;
}

/* Write `len` bytes to a new file `path` with exactly `mode`: 1 written,
 * 0 kept (it exists), -1 failed (said why). */
static int
put_file(const char *path, const void *data, size_t len, mode_t mode)
{
    const char *p = data;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  mode);

    if (fd < 0 && errno == EEXIST)
        return 0;
    if (fd < 0) {
        fprintf(stderr, "error: cannot create '%s': %s\n", path,
                strerror(errno));
        return -1;
    }
    /* the mode whatever the umask said */
    if (fchmod(fd, mode) != 0)
        goto fail;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto fail;
        p += w;
        len -= (size_t)w;
    }
    if (close(fd) == 0)
        return 1;
    fd = -1;
fail:
    fprintf(stderr, "error: cannot write '%s': %s\n", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(path);
    return -1;
}

/* A folder with exactly `mode`: 1 made, 0 kept, -1 failed (said why). */
static int
put_dir(const char *path, mode_t mode)
{
    struct stat st;

    if (mkdir(path, mode) == 0)
        return chmod(path, mode) == 0 ? 1 : -1;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    fprintf(stderr, "error: cannot create folder '%s': %s\n", path,
            errno == EEXIST ? "a file of that name is in the way"
                            : strerror(errno));
    return -1;
}

/* Say what one piece came to (rc as put_file's); with a tally, count it
 * instead. A folder's path is said with a '/' after it. */
static int
report(struct tally *t, int rc, const char *path, const char *what)
{
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);

    if (rc < 0)
        return -1;
    if (t != NULL)
        *(rc ? &t->wrote : &t->kept) += 1;
    else
        printf("%s %s%s%s%s\n", rc ? (dir ? "made" : "wrote") : "kept", path,
               dir ? "/" : "", what[0] ? " " : "", what);
    return 0;
}

/* The whole of the file `path` into `out` (cap NEWSITE_FILE_MAX); 0/-1. */
static int
read_file(const char *path, struct sbuf *out)
{
    char buf[8192];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

    if (fd < 0) {
        fprintf(stderr, "error: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || sbuf_add(out, buf, (size_t)n) != 0) {
            fprintf(stderr, "error: cannot read '%s': %s\n", path,
                    n < 0 ? strerror(errno) : "too large or out of memory");
            rc = -1;
            break;
        }
    }
    close(fd);
    return rc;
}

/* Copy the file `src` to a new `dst` (mode `mode`): as put_file. */
static int
copy_file(const char *src, const char *dst, mode_t mode)
{
    struct sbuf sb;
    int rc;

    if (access(dst, F_OK) == 0)
        return 0;
    sbuf_init(&sb, NEWSITE_FILE_MAX);
    rc = read_file(src, &sb) == 0 ? put_file(dst, sb.buf, sb.len, mode) : -1;
    sbuf_release(&sb);
    return rc;
}

/* The regular files of the folder `src` into the folder `dst` (made
 * `dmode`), each `fmode`; a file named `plugin.yaml` would be loaded as a
 * plugin, so none is copied under that name. One line says how many
 * were written and kept. 0/-1. */
static int
copy_folder(const char *src, const char *dst, mode_t dmode, mode_t fmode)
{
    struct tally t = {0, 0};
    DIR *d;
    struct dirent *de;
    int rc = put_dir(dst, dmode);

    if (rc < 0)
        return -1;
    if ((d = opendir(src)) == NULL) {
        fprintf(stderr, "error: cannot read the folder '%s': %s\n", src,
                strerror(errno));
        return -1;
    }
    while (rc >= 0 && (de = readdir(d)) != NULL) {
        char from[BOUND_PATH_LEN], to[BOUND_PATH_LEN];
        struct stat st;

        if (de->d_name[0] == '.' || strcmp(de->d_name, "plugin.yaml") == 0 ||
            join(from, src, de->d_name) != 0 || stat(from, &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (join(to, dst, de->d_name) != 0)
            rc = -1;
        else
            rc = report(&t, copy_file(from, to, fmode), to, "");
    }
    closedir(d);
    if (rc < 0)
        return -1;
    printf("%s %s/ (%d file%s", t.wrote ? "wrote" : "kept", dst,
           t.wrote + t.kept, t.wrote + t.kept == 1 ? "" : "s");
    if (t.wrote && t.kept)
        printf(", %d kept as they were", t.kept);
    printf(")\n");
    return 0;
}

/* --- the pieces of a site ------------------------------------------------ */

/* The session secret (core/token.h), unless one is there. 0/-1. */
static int
make_secret(const char *dir)
{
    char path[BOUND_PATH_LEN];
    struct status_error err = {0};

    if (join(path, dir, ".session-secret") != 0)
        return -1;
    if (access(path, F_OK) == 0)
        return report(NULL, 0, path, "(a new one would end every session)");
    if (token_secret_create(path, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.text);
        return -1;
    }
    return report(NULL, 1, path, "(mode 0600: signs session tokens)");
}

/* Each snippet of the list, rendered into DIR/server/ under its own
 * file name, with a first line that says for which site. 0/-1. */
static int
render_snippets(const struct newsite_paths *p, const char *share)
{
    char server[BOUND_PATH_LEN];
    int rc = 0;

    if (join(server, p->dir, "server") != 0 ||
        report(NULL, put_dir(server, 0755), server, "") != 0)
        return -1;
    for (size_t i = 0; newsite_snippets[i] != NULL && rc == 0; i++) {
        const char *name = strrchr(newsite_snippets[i], '/');
        char src[BOUND_PATH_LEN], dst[BOUND_PATH_LEN];
        struct sbuf text, out;

        name = name ? name + 1 : newsite_snippets[i];
        if (join(src, share, newsite_snippets[i]) != 0 ||
            join(dst, server, name) != 0)
            return -1;
        if (access(dst, F_OK) == 0) {
            rc = report(NULL, 0, dst, "");
            continue;
        }
        sbuf_init(&text, NEWSITE_FILE_MAX);
        sbuf_init(&out, 2 * NEWSITE_FILE_MAX);
        rc = read_file(src, &text);
        if (rc == 0 &&
            (sbuf_addf(&out,
                       "# %s, rendered by `gemini-agent setup` for the "
                       "site in %s\n",
                       newsite_snippets[i], p->dir) != 0 ||
             newsite_render(text.buf, p, &out) != 0)) {
            fprintf(stderr, "error: cannot render '%s': out of memory\n", src);
            rc = -1;
        }
        if (rc == 0)
            rc = report(NULL, put_file(dst, out.buf, out.len, 0644), dst, "");
        sbuf_release(&text);
        sbuf_release(&out);
    }
    return rc;
}

/* www/: the widget (agent/, vendor/) and a first page. 0/-1. */
static int
make_www(const char *dir, const char *share)
{
    char www[BOUND_PATH_LEN], src[BOUND_PATH_LEN], dst[BOUND_PATH_LEN];
    static const char *const parts[] = {"agent", "vendor"};

    if (join(www, dir, "www") != 0 ||
        report(NULL, put_dir(www, 0755), www, "") != 0)
        return -1;
    for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
        char from[BOUND_PATH_LEN];
        if (join(from, share, "www") != 0 || join(src, from, parts[i]) != 0 ||
            join(dst, www, parts[i]) != 0 ||
            copy_folder(src, dst, 0755, 0644) != 0)
            return -1;
    }
    if (join(src, share, "conf/site-index.html") != 0 ||
        join(dst, www, "index.html") != 0)
        return -1;
    return report(NULL, copy_file(src, dst, 0644), dst,
                  "(a page with the assistant in it)");
}

/* agent.yaml, .gemini.yaml and the secret. 0/-1. */
static int
make_config(const char *dir)
{
    char path[BOUND_PATH_LEN];

    if (join(path, dir, "agent.yaml") != 0 ||
        report(NULL,
               put_file(path, newsite_agent_template,
                        strlen(newsite_agent_template), 0640),
               path, "") != 0)
        return -1;
    if (join(path, dir, ".gemini.yaml") != 0 ||
        report(NULL,
               put_file(path, cmd_setup_template, strlen(cmd_setup_template),
                        0600),
               path, "(mode 0600: your API key goes here)") != 0)
        return -1;
    return make_secret(dir);
}

/* actions/ with the example, var/ and run/. 0/-1. */
static int
make_folders(const char *dir, const char *share)
{
    char path[BOUND_PATH_LEN], src[BOUND_PATH_LEN];
    static const struct {
        const char *name, *what;
        mode_t mode;
    } dirs[] = {
        {"actions", "(your plugins)", 0750},
        {"var", "(the responder's state)", 0700},
        {"run", "(the FastCGI socket's folder)", 0711},
    };

    for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
        if (join(path, dir, dirs[i].name) != 0 ||
            report(NULL, put_dir(path, dirs[i].mode), path, dirs[i].what) != 0)
            return -1;
    if (join(path, dir, "actions/_example") != 0 ||
        join(src, share, "conf/example-plugin") != 0)
        return -1;
    return copy_folder(src, path, 0750, 0640);
}

/* What to do next, with this site's real paths. */
static void
say_next(const struct newsite_paths *p)
{
    printf("next:\n"
           "  1. put your Gemini API key in apiKey in %s/.gemini.yaml\n"
           "     (or set GEMINI_API_KEY in the responder's environment)\n"
           "  2. check the site:\n"
           "       %s check --config %s/agent.yaml\n"
           "  3. start the responder, as a user in the web server's group "
           "(nginx opens its\n"
           "     socket, mode 0660):\n"
           "       %s serve --config %s/agent.yaml --socket %s/" NEWSITE_SOCKET
           "\n"
           "  4. nginx: copy %s/server/gemini-agent.conf to "
           "/etc/nginx/sites-enabled/,\n"
           "     set its listen line, then: nginx -t && systemctl reload "
           "nginx\n"
           "     (Apache: the other files in %s/server/; each says how to "
           "install it)\n",
           p->dir, p->binary, p->dir, p->binary, p->dir, p->dir, p->dir,
           p->dir);
}

/* The running program's own path, for the snippets and the hints. */
static const char *
own_binary(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);

    if (n <= 0 || (size_t)n >= size - 1)
        return "gemini-agent";
    buf[n] = '\0';
    return buf;
}

int
newsite_create(const char *dir, const char *share)
{
    char abs[PATH_MAX], bin[PATH_MAX];
    struct newsite_paths p = {abs, own_binary(bin, sizeof(bin))};
    const char *why = NULL;
    bool made = access(dir, F_OK) != 0;

    /* a folder to make is judged before it is made */
    if (made) {
        char cwd[PATH_MAX];
        if (dir[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL)
            cwd[0] = '\0';
        if ((size_t)snprintf(abs, sizeof(abs), "%s%s%s",
                             dir[0] == '/' ? "" : cwd, dir[0] == '/' ? "" : "/",
                             dir) >= sizeof(abs) ||
            (why = newsite_path_problem(abs)) != NULL) {
            fprintf(stderr, "error: the site cannot be in '%s': %s\n", dir,
                    why ? why : "the path is too long");
            return 1;
        }
    }
    if (made && (cmd_make_dirs(dir, 0755) != 0 || chmod(dir, 0711) != 0))
        return 1;
    if (realpath(dir, abs) == NULL) {
        fprintf(stderr, "error: cannot use the folder '%s': %s\n", dir,
                strerror(errno));
        return 1;
    }
    if ((why = newsite_path_problem(abs)) != NULL ||
        (why = newsite_path_problem(p.binary)) != NULL) {
        fprintf(stderr,
                "error: the site cannot be in '%s' (the program: '%s'): %s\n",
                abs, p.binary, why);
        return 1;
    }
    printf("%s %s/ (the site)\n", made ? "made" : "kept", abs);
    if (make_config(abs) != 0 || make_folders(abs, share) != 0 ||
        make_www(abs, share) != 0 || render_snippets(&p, share) != 0) {
        fprintf(stderr,
                "error: the site in %s is not complete; fix the "
                "above and run setup again (it keeps what exists)\n",
                abs);
        return 1;
    }
    say_next(&p);
    return 0;
}
