/*
 * credentials.c - Google credentials for the terminal client: API keys,
 * Application Default Credentials and gcloud (see credentials.h).
 *
 * Three ways to a token, each one small: a service account signs an RS256
 * JWT with libcrypto and trades it at its token_uri (RFC 7523); an
 * authorized_user file trades its refresh token (RFC 6749 §6); gcloud is
 * run without a shell and its stdout read under a cap and a deadline.
 * Token requests go through a libcurl handle of their own, made for the
 * request and gone after it: they are rare (once an hour).
 *
 * Secrets are copied as few times as the libraries allow, into buffers
 * sized once (a growing buffer would leave old copies behind in freed
 * memory), and every copy we own is wiped with OPENSSL_cleanse before it
 * is freed. JSON is read with jscan into a local arena whose string
 * copies are wiped as soon as they are taken. jscan's own error text may
 * quote the input, so it never reaches our messages: they say where.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/credentials.h"
#include "gemini/cabundle.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "gemini/bounds.h"
#include "core/credenv.h"
#include "core/jscan.h"
#include "core/monotime.h"
#include "core/status.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

extern char **environ;

#define CRED_SCOPE        "https://www.googleapis.com/auth/cloud-platform"
#define CRED_JWT_GRANT    "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define CRED_ADC_NAME     "application_default_credentials.json"
#define CRED_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* --- small helpers ------------------------------------------------------ */

static const char *
env_get(const struct cred_opts *o, const char *name)
{
    const char *v = o->getenv != NULL ? o->getenv(o->env_ctx, name)
                                      : getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

static time_t
cred_now(const struct cred *c)
{
    return c->now != NULL ? c->now(c->now_ctx) : time(NULL);
}

/* Wipe a NUL-terminated secret and free it. */
static void
wipe_free(char *s)
{
    if (s != NULL) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

static void
wipe_free_n(char *s, size_t n)
{
    if (s != NULL) {
        OPENSSL_cleanse(s, n);
        free(s);
    }
}

/* A header value must be printable ASCII without spaces: anything else
 * would break the header line (or smuggle another one in). */
static bool
token_usable(const char *t, size_t n)
{
    if (n == 0 || n > CRED_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7F)
            return false;
    return true;
}

/* An OAuth `error` code fit to quote: [A-Za-z0-9_.-], at most
 * CRED_OAUTH_CODE_MAX bytes; anything else gives "" (never a piece of the
 * answer that might echo a secret). */
static void
oauth_code(const char *s, char *dst, size_t size)
{
    size_t n = s != NULL ? strlen(s) : 0;

    dst[0] = '\0';
    if (n == 0 || n > CRED_OAUTH_CODE_MAX || n >= size)
        return;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-'))
            return;
    }
    memcpy(dst, s, n + 1);
}

/*
 * Where a token may be fetched from: https://, or http:// on a loopback
 * host only (the tests' fake endpoint). A key file naming anything else
 * would send its signed assertion in the clear.
 */
static bool
url_allowed(const char *url)
{
    static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
    const char *h, *e;

    if (strncmp(url, "https://", 8) == 0)
        return url[8] != '\0';
    if (strncmp(url, "http://", 7) != 0)
        return false;
    h = url + 7;
    e = h[0] == '[' ? strchr(h, ']') : h + strcspn(h, ":/?#");
    if (e == NULL)
        return false;
    if (h[0] == '[')
        e++;
    for (size_t i = 0; i < ARRAY_SIZE(loopback); i++)
        if ((size_t)(e - h) == strlen(loopback[i]) &&
            strncmp(h, loopback[i], (size_t)(e - h)) == 0)
            return *e == '\0' || *e == ':' || *e == '/';
    return false;
}

/* --- reading an ADC file ------------------------------------------------ */

/* Read the whole file into a buffer sized once (*len bytes, NUL-ended). */
static char *
file_read(const char *path, size_t *len, int *errnum)
{
    struct stat st;
    char *buf = NULL;
    size_t have = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *errnum = 0;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *errnum = errno;
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        *errnum = EINVAL;
        goto fail;
    }
    if ((unsigned long long)st.st_size > CRED_FILE_MAX) {
        *errnum = EFBIG;
        goto fail;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        *errnum = ENOMEM;
        goto fail;
    }
    while (have < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + have, (size_t)st.st_size - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *errnum = r < 0 ? errno : EIO;
            goto fail;
        }
        have += (size_t)r;
    }
    buf[have] = '\0';
    close(fd);
    *len = have;
    return buf;
fail:
    if (fd >= 0)
        close(fd);
    wipe_free_n(buf, have);
    return NULL;
}

/* A parsed JSON object whose strings we take one at a time. */
struct jdoc {
    struct arena a;
    struct jscan_doc d;
};

/*
 * A string member of the root object, copied to the heap (free with
 * wipe_free), with the arena's copy wiped at once. NULL when absent, not
 * a string or empty (*oom tells out of memory apart).
 */
static char *
jdoc_take(struct jdoc *j, const char *key, bool *oom)
{
    size_t i = jscan_member(&j->d, 0, key), n = 0;
    const char *s;
    char *copy;

    if (i == JSCAN_NONE || jscan_type(&j->d, i) != JSCAN_STRING)
        return NULL;
    s = jscan_string(&j->d, i, &j->a, &n);
    if (s == NULL) {
        *oom = true;
        return NULL;
    }
    /* jscan refuses \u0000, so the copy is the whole string */
    copy = n > 0 ? strndup(s, n) : NULL;
    if (n > 0 && copy == NULL)
        *oom = true;
    OPENSSL_cleanse(UNCONST(s), n);
    return copy;
}

/* A service account's fields from j into c: the first required one that
 * is missing, or NULL. */
static const char *
adc_service_account(struct cred *c, struct jdoc *j, bool *oom)
{
    c->source = CRED_SERVICE_ACCOUNT;
    c->email = jdoc_take(j, "client_email", oom);
    c->secret = jdoc_take(j, "private_key", oom);
    c->key_id = jdoc_take(j, "private_key_id", oom);
    c->token_uri = jdoc_take(j, "token_uri", oom);
    c->project_id = jdoc_take(j, "project_id", oom);
    return c->email == NULL       ? "client_email"
           : c->secret == NULL    ? "private_key"
           : c->key_id == NULL    ? "private_key_id"
           : c->token_uri == NULL ? "token_uri"
                                  : NULL;
}

/* An authorized user's fields from j into c, the token URL from o: the
 * first required one that is missing, or NULL. */
static const char *
adc_authorized_user(struct cred *c, struct jdoc *j, const struct cred_opts *o,
                    bool *oom)
{
    c->source = CRED_AUTHORIZED_USER;
    c->client_id = jdoc_take(j, "client_id", oom);
    c->client_secret = jdoc_take(j, "client_secret", oom);
    c->secret = jdoc_take(j, "refresh_token", oom);
    c->quota_project_id = jdoc_take(j, "quota_project_id", oom);
    c->token_uri = strdup(o->token_url != NULL ? o->token_url
                                               : CRED_GOOGLE_TOKEN_URL);
    *oom = *oom || c->token_uri == NULL;
    return c->client_id == NULL       ? "client_id"
           : c->client_secret == NULL ? "client_secret"
           : c->secret == NULL        ? "refresh_token"
                                      : NULL;
}

/* The error for an ADC file whose `type` (NULL: none) is not one of
 * ours; `oom` when reading it ran out of memory. */
static void
adc_type_error(const char *type, bool oom, const char *what,
               struct status_error *err)
{
    char code[CRED_OAUTH_CODE_MAX + 1];

    oauth_code(type, code, sizeof(code));
    if (oom)
        status_set(err, ST_NO_MEMORY, "out of memory");
    else if (type == NULL)
        status_set(err, ST_CONFIG, "%s: type is missing", what);
    else if (code[0] != '\0')
        status_set(err, ST_CONFIG,
                   "%s: type \"%s\" is not supported (only "
                   "service_account and authorized_user are)",
                   what, code);
    else
        status_set(err, ST_CONFIG, "%s: type is not supported", what);
}

/* Fill `c` from an ADC file's JSON. `what` names it in messages. */
static int
adc_parse(struct cred *c, const char *buf, size_t len, const char *what,
          const struct cred_opts *o, struct status_error *err)
{
    struct status_error jerr = {0};
    struct jdoc j;
    char *type = NULL;
    const char *missing = NULL;
    bool oom = false;
    int rc = -1;

    arena_init(&j.a);
    if (jscan_parse(buf, len, 0, CRED_JSON_DEPTH, &j.a, &j.d, &jerr) != 0) {
        if (jerr.code == ST_NO_MEMORY)
            status_set(err, ST_NO_MEMORY, "out of memory");
        else /* jscan's text may quote the file: say only where */
            status_set(err, ST_CONFIG,
                       "%s: not valid JSON (line %d, column %d)", what,
                       j.d.fail.line, j.d.fail.column);
        goto out;
    }
    if (jscan_type(&j.d, 0) != JSCAN_OBJECT) {
        status_set(err, ST_CONFIG, "%s: not a JSON object", what);
        goto out;
    }
    type = jdoc_take(&j, "type", &oom);
    if (type != NULL && strcmp(type, "service_account") == 0) {
        missing = adc_service_account(c, &j, &oom);
    } else if (type != NULL && strcmp(type, "authorized_user") == 0) {
        missing = adc_authorized_user(c, &j, o, &oom);
    } else {
        adc_type_error(type, oom, what, err);
        goto out;
    }
    if (oom)
        status_set(err, ST_NO_MEMORY, "out of memory");
    else if (missing != NULL)
        status_set(err, ST_CONFIG, "%s: %s is missing (or not a string)", what,
                   missing);
    else if (!url_allowed(c->token_uri))
        status_set(err, ST_CONFIG, "%s: token_uri must be an https:// URL",
                   what);
    else
        rc = 0;
out:
    free(type);
    arena_release(&j.a);
    return rc;
}

/* Load the ADC file at `path`: -1 with `err` set when it cannot be used. */
static int
adc_load(struct cred *c, const char *path, const char *via,
         const struct cred_opts *o, struct status_error *err)
{
    size_t len = 0;
    int errnum;
    char what[BOUND_PATH_LEN + 64];
    char *buf;
    int rc;

    snprintf(what, sizeof(what), "%s %s", via, path);
    c->file = strdup(path);
    if (c->file == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    buf = file_read(path, &len, &errnum);
    if (buf == NULL)
        return status_set(err, errnum == ENOMEM ? ST_NO_MEMORY : ST_CONFIG,
                          "%s: %s", what,
                          errnum == EFBIG    ? "larger than 64 KB"
                          : errnum == EINVAL ? "not a regular file"
                                             : strerror(errnum));
    rc = adc_parse(c, buf, len, what, o, err);
    wipe_free_n(buf, len);
    return rc;
}

/* The well-known file: $CLOUDSDK_CONFIG, else $HOME/.config/gcloud. NULL
 * (nothing to look at) without either. */
static char *
adc_well_known(const struct cred_opts *o)
{
    const char *dir = env_get(o, "CLOUDSDK_CONFIG");
    const char *home = env_get(o, "HOME");
    char *p = NULL;
    int n;

    if (dir != NULL)
        n = asprintf(&p, "%s/%s", dir, CRED_ADC_NAME);
    else if (home != NULL)
        n = asprintf(&p, "%s/.config/gcloud/%s", home, CRED_ADC_NAME);
    else
        return NULL;
    return n < 0 ? NULL : p;
}

/* --- gcloud: found, then run -------------------------------------------- */

static bool
is_executable(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

/* `name` with a slash is a path; without one it is looked up in $PATH.
 * A malloc'd path, or NULL. */
static char *
gcloud_find(const struct cred_opts *o, const char *name)
{
    const char *path = env_get(o, "PATH");
    const char *p, *e;

    if (strchr(name, '/') != NULL)
        return is_executable(name) ? strdup(name) : NULL;
    for (p = path != NULL ? path : CRED_DEFAULT_PATH;; p = e + 1) {
        char *cand = NULL;
        e = strchr(p, ':');
        if (e == NULL)
            e = p + strlen(p);
        /* an empty entry is the current folder, as in execvp */
        if (asprintf(&cand, "%.*s%s%s", (int)(e - p), p, e == p ? "" : "/",
                     name) >= 0) {
            if (is_executable(cand))
                return cand;
            free(cand);
        }
        if (*e == '\0')
            return NULL;
    }
}

/*
 * Start `gcloud auth print-access-token` with stdout on out_fd: no shell,
 * stdin and stderr on /dev/null, in a process group of its own (so its
 * own children can be killed with it), default signal handling, and the
 * environment core/credenv.h cleans for it. Returns 0 with *pid set, -1
 * when the spawn settings cannot be made (out of memory), or the errno
 * value of the step that failed.
 */
static int
gcloud_spawn(const char *gcloud, int out_fd, pid_t *pid)
{
    char *const argv[] = {UNCONST(gcloud), UNCONST("auth"),
                          UNCONST("print-access-token"), NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char **envp = NULL;
    sigset_t none, dfl;
    int rc;

    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    rc = posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
                                              O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
                                              O_WRONLY, 0);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                                 POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &dfl);
    /* gcloud gets its own settings, no API key (core/credenv.h) */
    if (rc == 0 && (envp = credenv_clean(environ, CREDENV_GCLOUD)) == NULL)
        rc = ENOMEM;
    if (rc == 0)
        rc = posix_spawn(pid, gcloud, &fa, &attr, argv, envp);
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* One run of gcloud: its output so far and how it ended. */
struct gcloud_child {
    pid_t pid;
    long deadline; /* monotime_ms() */
    char *out;     /* CRED_GCLOUD_OUTPUT_MAX + 1 bytes */
    size_t len;
    int status;     /* waitpid()'s, when reaped */
    bool timed_out; /* the deadline passed */
    bool too_long;  /* it printed CRED_GCLOUD_OUTPUT_MAX bytes */
    bool reaped;
    bool no_child; /* it was reaped by someone else (SIGCHLD ignored) */
};

/* Read the child's stdout from fd until EOF, the deadline or the limit. */
static void
gcloud_read(int fd, struct gcloud_child *c)
{
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        long left = c->deadline - monotime_ms();
        ssize_t r;
        int rc;

        if (left <= 0) {
            c->timed_out = true;
            return;
        }
        rc = poll(&p, 1, (int)(left < INT_MAX ? left : INT_MAX));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue; /* the deadline check above ends it */
        r = read(fd, c->out + c->len, CRED_GCLOUD_OUTPUT_MAX - c->len);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return; /* EOF (or a read error: the exit status decides) */
        c->len += (size_t)r;
        if (c->len == CRED_GCLOUD_OUTPUT_MAX) {
            c->too_long = true;
            return;
        }
    }
}

/* Reap the child: stdout closed, its exit may lag a little, so wait until
 * the deadline; then kill its process group unless it is gone. */
static void
gcloud_reap(struct gcloud_child *c)
{
    while (!c->timed_out && !c->too_long) {
        pid_t w = waitpid(c->pid, &c->status, WNOHANG);
        if (w == c->pid) {
            c->reaped = true;
            break;
        }
        if (w < 0 && errno != EINTR) {
            /* ECHILD: SIGCHLD is ignored and the child reaped itself; its
             * pid may be another's by now, so nothing is killed */
            c->no_child = true;
            break;
        }
        if (monotime_ms() >= c->deadline) {
            c->timed_out = true;
            break;
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!c->reaped && !c->no_child) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
            ;
    }
}

/* How the child ended, as an error in err; false when it succeeded. */
static bool
gcloud_failed(const struct gcloud_child *c, long timeout_ms,
              struct status_error *err)
{
    if (c->timed_out) {
        status_set(err, ST_UPSTREAM_TIMEOUT,
                   "gcloud: auth print-access-token did not finish in "
                   "%ld ms",
                   timeout_ms);
        return true;
    }
    if (c->too_long) {
        status_set(err, ST_UPSTREAM_BAD,
                   "gcloud: auth print-access-token printed more than "
                   "%u bytes",
                   CRED_GCLOUD_OUTPUT_MAX);
        return true;
    }
    if (!c->reaped || (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0))
        return false;
    if (WIFEXITED(c->status))
        status_set(err, ST_UPSTREAM_AUTH,
                   "gcloud: auth print-access-token failed (exit "
                   "status %d); run `gcloud auth login`",
                   WEXITSTATUS(c->status));
    else
        status_set(err, ST_UPSTREAM_AUTH,
                   "gcloud: auth print-access-token was killed by "
                   "signal %d",
                   WTERMSIG(c->status));
    return true;
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The token gcloud printed: out[0..len) trimmed of the white space around
 * it (malloc'd), or NULL with err set. */
static char *
gcloud_token(const char *out, size_t len, struct status_error *err)
{
    size_t a = 0, b = len;
    char *tok;

    while (a < len && is_blank(out[a]))
        a++;
    while (b > a && is_blank(out[b - 1]))
        b--;
    if (!token_usable(out + a, b - a)) {
        status_set(err, ST_UPSTREAM_BAD,
                   b == a ? "gcloud: auth print-access-token printed no token"
                          : "gcloud: auth print-access-token printed "
                            "something that is not a token");
        return NULL;
    }
    tok = strndup(out + a, b - a);
    if (tok == NULL)
        status_set(err, ST_NO_MEMORY, "out of memory");
    return tok;
}

/*
 * Run `gcloud auth print-access-token` (see gcloud_spawn): stdout read up
 * to CRED_GCLOUD_OUTPUT_MAX bytes until `timeout_ms`, the child killed at
 * the deadline and always reaped. Returns the trimmed token (malloc'd), or
 * NULL with `err` set.
 */
static char *
gcloud_run(const char *gcloud, long timeout_ms, struct status_error *err)
{
    struct gcloud_child c = {.pid = -1, .deadline = monotime_ms() + timeout_ms};
    int fds[2] = {-1, -1}, rc;
    char *tok = NULL;

    c.out = malloc(CRED_GCLOUD_OUTPUT_MAX + 1);
    if (c.out == NULL || pipe2(fds, O_CLOEXEC) != 0) {
        status_set(err, c.out == NULL ? ST_NO_MEMORY : ST_INTERNAL,
                   "gcloud: cannot make a pipe: %s", strerror(errno));
        goto out;
    }
    rc = gcloud_spawn(gcloud, fds[1], &c.pid);
    close(fds[1]);
    if (rc != 0) {
        if (rc < 0)
            status_set(err, ST_NO_MEMORY, "out of memory");
        else
            status_set(err, ST_UPSTREAM_AUTH, "gcloud: cannot run %s: %s",
                       gcloud, strerror(rc));
        goto out;
    }
    gcloud_read(fds[0], &c);
    gcloud_reap(&c);
    if (!gcloud_failed(&c, timeout_ms, err))
        tok = gcloud_token(c.out, c.len, err);
out:
    if (fds[0] >= 0)
        close(fds[0]);
    wipe_free_n(c.out, c.len);
    return tok;
}

/* --- the JWT of a service account --------------------------------------- */

/* base64url without padding of p[0..n) appended at dst; returns the
 * bytes written (dst must hold (n * 4 + 2) / 3). */
static size_t
b64url(char *dst, const unsigned char *p, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i = 0;

    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        dst[o++] = tab[v >> 18 & 63];
        dst[o++] = tab[v >> 12 & 63];
        dst[o++] = tab[v >> 6 & 63];
        dst[o++] = tab[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        dst[o++] = tab[v >> 18 & 63];
        dst[o++] = tab[v >> 12 & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        dst[o++] = tab[v >> 18 & 63];
        dst[o++] = tab[v >> 12 & 63];
        dst[o++] = tab[v >> 6 & 63];
    }
    return o;
}

#define B64LEN(n) (((n)*4 + 2) / 3)

/* Never ask for a passphrase: a key file's key is not encrypted, and a
 * prompt on the terminal would hang the client. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return 0;
}

/* The JWT's header and claims for the service account c at iat, as
 * compact JSON texts (malloc'd). Returns 0, or -1 with err set. */
static int
jwt_texts(const struct cred *c, time_t iat, char **h, char **cl,
          struct status_error *err)
{
    json_t *hdr, *claims;

    hdr = json_pack("{s:s, s:s, s:s}", "alg", "RS256", "typ", "JWT", "kid",
                    c->key_id);
    claims = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", c->email, "scope",
                       CRED_SCOPE, "aud", c->token_uri, "iat", (json_int_t)iat,
                       "exp", (json_int_t)iat + CRED_JWT_LIFETIME_S);
    *h = hdr != NULL ? json_dumps(hdr, JSON_COMPACT) : NULL;
    *cl = claims != NULL ? json_dumps(claims, JSON_COMPACT) : NULL;
    json_decref(hdr);
    json_decref(claims);
    if (*h == NULL || *cl == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return 0;
}

/* The service account's private key, which must be RSA; NULL with err
 * set. */
static EVP_PKEY *
rsa_key(const struct cred *c, struct status_error *err)
{
    BIO *bio = BIO_new_mem_buf(c->secret, -1);
    EVP_PKEY *pkey;

    if (bio == NULL) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        return NULL;
    }
    pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (pkey == NULL || !EVP_PKEY_is_a(pkey, "RSA")) {
        EVP_PKEY_free(pkey);
        status_set(err, ST_CONFIG,
                   "service_account %s: private_key is not a PEM RSA key",
                   c->file != NULL ? c->file : "");
        return NULL;
    }
    return pkey;
}

/*
 * The signed assertion: base64url(header).base64url(claims).base64url(
 * RSASSA-PKCS1-v1_5 SHA-256 signature), malloc'd, NULL with `err` set.
 */
TESTABLE char *cred_jwt(const struct cred *c, time_t iat,
                        struct status_error *err);

TESTABLE char *
cred_jwt(const struct cred *c, time_t iat, struct status_error *err)
{
    char *h = NULL, *cl = NULL, *jwt = NULL;
    unsigned char *sig = NULL;
    size_t hl, cll, siglen = 0, o, cap = 0;
    EVP_PKEY *pkey = NULL;
    EVP_MD_CTX *md = NULL;
    bool ok = false;

    if (jwt_texts(c, iat, &h, &cl, err) != 0 ||
        (pkey = rsa_key(c, err)) == NULL)
        goto out;
    hl = strlen(h);
    cll = strlen(cl);
    /* header.claims.signature, the signature at most the modulus */
    cap = B64LEN(hl) + 1 + B64LEN(cll) + 1 +
          B64LEN((size_t)EVP_PKEY_get_size(pkey)) + 1;
    jwt = malloc(cap);
    sig = malloc((size_t)EVP_PKEY_get_size(pkey));
    md = EVP_MD_CTX_new();
    if (jwt == NULL || sig == NULL || md == NULL) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        goto out;
    }
    o = b64url(jwt, (const unsigned char *)h, hl);
    jwt[o++] = '.';
    o += b64url(jwt + o, (const unsigned char *)cl, cll);
    siglen = (size_t)EVP_PKEY_get_size(pkey);
    if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pkey) != 1 ||
        EVP_DigestSign(md, sig, &siglen, (const unsigned char *)jwt, o) != 1) {
        status_set(err, ST_CONFIG,
                   "service_account %s: private_key cannot sign",
                   c->file != NULL ? c->file : "");
        goto out;
    }
    jwt[o++] = '.';
    o += b64url(jwt + o, sig, siglen);
    jwt[o] = '\0';
    ok = true;
out:
    ERR_clear_error(); /* OpenSSL's queue must not outlive the call */
    if (!ok && jwt != NULL) {
        wipe_free_n(jwt, cap);
        jwt = NULL;
    }
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pkey);
    free(sig);
    free(h);
    free(cl);
    return jwt;
}

/* --- the token request -------------------------------------------------- */

/* Percent-encode for application/x-www-form-urlencoded (RFC 3986's
 * unreserved set left as is). Writes to dst, returns the length; with
 * dst NULL only counts. */
static size_t
form_escape(char *dst, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
            ch == '~') {
            if (dst != NULL)
                dst[o] = (char)ch;
            o++;
        } else {
            if (dst != NULL) {
                dst[o] = '%';
                dst[o + 1] = hex[ch >> 4];
                dst[o + 2] = hex[ch & 15];
            }
            o += 3;
        }
    }
    return o;
}

/* name=value&... from pairs (NULL-terminated), in a buffer sized once.
 * *len is the buffer's length for wipe_free_n. */
static char *
form_build(const char *const *kv, size_t *len)
{
    size_t n = 0, o = 0;
    char *buf;

    for (size_t i = 0; kv[i] != NULL; i += 2)
        n += form_escape(NULL, kv[i]) + 1 + form_escape(NULL, kv[i + 1]) + 1;
    buf = malloc(n + 1);
    if (buf == NULL)
        return NULL;
    for (size_t i = 0; kv[i] != NULL; i += 2) {
        if (o > 0)
            buf[o++] = '&';
        o += form_escape(buf + o, kv[i]);
        buf[o++] = '=';
        o += form_escape(buf + o, kv[i + 1]);
    }
    buf[o] = '\0';
    *len = n + 1;
    return buf;
}

/* The answer's body, in a buffer allocated once at its cap. */
struct cred_body {
    char *buf;
    size_t len;
    bool too_large;
};

static size_t
body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct cred_body *b = userdata;
    size_t n = size * nmemb;

    if (n > CRED_RESPONSE_MAX - b->len) {
        b->too_large = true;
        return 0;
    }
    memcpy(b->buf + b->len, ptr, n);
    b->len += n;
    return n;
}

/* Set cu to POST form to url with headers hdrs, the answer into body. */
static bool
token_setopts(CURL *cu, const char *url, const char *form, long timeout,
              struct curl_slist *hdrs, struct cred_body *body)
{
    /* http://127.0.0.1 for tests, https:// otherwise (url_allowed); no
     * redirects (libcurl's default): a token goes where it was asked. */
    return curl_easy_setopt(cu, CURLOPT_URL, url) == CURLE_OK &&
           cabundle_apply(cu) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "http,https") ==
               CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_USERAGENT, "gemini-agent") ==
               CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_TIMEOUT_MS, timeout) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT_MS,
                            timeout < CRED_CONNECT_MS
                                ? timeout
                                : CRED_CONNECT_MS) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hdrs) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_POSTFIELDS, form) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE,
                            (curl_off_t)strlen(form)) == CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, body_write) ==
               CURLE_OK &&
           curl_easy_setopt(cu, CURLOPT_WRITEDATA, body) == CURLE_OK;
}

/* One POST to the token endpoint: where, what, and what came back. */
struct token_post {
    const char *src; /* names the source in messages */
    const char *url;
    const char *form;
    long timeout_ms;
    struct cred_body body; /* CRED_RESPONSE_MAX + 1 bytes, NUL-ended */
    long status;           /* the HTTP status */
};

/* POST tp->form to tp->url; the answer in tp->body and tp->status.
 * Returns 0, or -1 with err set. */
static int
token_post(struct token_post *tp, struct status_error *err)
{
    struct curl_slist *hdrs, *n;
    CURL *cu = curl_easy_init();
    CURLcode res;
    int rc = -1;

    hdrs = curl_slist_append(NULL, "Content-Type: "
                                   "application/x-www-form-urlencoded");
    n = hdrs != NULL ? curl_slist_append(hdrs, "Accept: application/json")
                     : NULL;
    if (cu == NULL || n == NULL ||
        !token_setopts(cu, tp->url, tp->form, tp->timeout_ms, hdrs,
                       &tp->body)) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        goto out;
    }
    res = curl_easy_perform(cu);
    if (res != CURLE_OK) {
        if (tp->body.too_large)
            status_set(err, ST_UPSTREAM_BAD,
                       "%s: the token endpoint's answer is larger than "
                       "%u bytes",
                       tp->src, CRED_RESPONSE_MAX);
        else
            status_set(err,
                       res == CURLE_OPERATION_TIMEDOUT ? ST_UPSTREAM_TIMEOUT
                                                       : ST_UPSTREAM_DOWN,
                       "%s: the token endpoint cannot be reached (%s)", tp->src,
                       curl_easy_strerror(res));
        goto out;
    }
    curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &tp->status);
    tp->body.buf[tp->body.len] = '\0';
    rc = 0;
out:
    curl_easy_cleanup(cu);
    curl_slist_free_all(hdrs);
    return rc;
}

/* The endpoint answered `status`, not 2xx: the error, with the OAuth code
 * of the answer d (NULL when it is not a JSON object) when it has one. */
static void
token_refused(const struct jscan_doc *d, struct arena *a, long status,
              const char *src, struct status_error *err)
{
    char code[CRED_OAUTH_CODE_MAX + 1] = "";
    size_t i;

    if (d != NULL) {
        i = jscan_member(d, 0, "error");
        if (i != JSCAN_NONE && jscan_type(d, i) == JSCAN_STRING) {
            const char *s = jscan_string(d, i, a, NULL);
            oauth_code(s, code, sizeof(code));
        }
    }
    /* 400 invalid_grant, 401 invalid_client: the credential; 429
     * and 5xx: try later; anything else: not a token endpoint */
    status_set(
        err,
        status == 400 || status == 401 || status == 403   ? ST_UPSTREAM_AUTH
        : status == 408 || status == 429 || status >= 500 ? ST_UPSTREAM_DOWN
                                                          : ST_UPSTREAM_BAD,
        "%s: the token endpoint answered %ld%s%s%s", src, status,
        code[0] ? " (" : "", code, code[0] ? ")" : "");
}

/* The access_token and expires_in of the answer d into c->token and
 * c->expires_at. Returns 0, or -1 with err set. */
static int
token_take(struct cred *c, const struct jscan_doc *d, struct arena *a,
           const char *src, struct status_error *err)
{
    long long expires_in = 3600;
    size_t i, tl = 0;
    const char *tok;

    i = jscan_member(d, 0, "access_token");
    tok = i != JSCAN_NONE ? jscan_string(d, i, a, &tl) : NULL;
    if (tok == NULL || !token_usable(tok, tl)) {
        status_set(err, ST_UPSTREAM_BAD,
                   tok == NULL ? "%s: the token endpoint's answer has no "
                                 "access_token"
                               : "%s: the token endpoint's access_token is "
                                 "not a usable header value",
                   src);
        if (tok != NULL)
            OPENSSL_cleanse(UNCONST(tok), tl);
        return -1;
    }
    i = jscan_member(d, 0, "expires_in");
    if (i != JSCAN_NONE && jscan_type(d, i) == JSCAN_INTEGER)
        expires_in = jscan_integer(d, i);
    if (expires_in < 0)
        expires_in = 0;
    if (expires_in > CRED_EXPIRES_MAX_S)
        expires_in = CRED_EXPIRES_MAX_S;
    c->token = strndup(tok, tl);
    OPENSSL_cleanse(UNCONST(tok), tl);
    if (c->token == NULL) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        return -1;
    }
    c->expires_at = cred_now(c) + (time_t)expires_in;
    return 0;
}

/*
 * POST the form to `url` and read the token out of the answer into
 * c->token and c->expires_at. `src` names the source in messages.
 */
static int
token_request(struct cred *c, const char *src, const char *url,
              const char *form, struct status_error *err)
{
    struct token_post tp = {.src = src,
                            .url = url,
                            .form = form,
                            .timeout_ms = c->timeout_ms > 0 ? c->timeout_ms
                                                            : CRED_TIMEOUT_MS};
    struct status_error jerr = {0};
    struct arena a;
    struct jscan_doc d;
    bool parsed, ok;
    int rc = -1;

    arena_init(&a);
    tp.body.buf = malloc(CRED_RESPONSE_MAX + 1);
    if (tp.body.buf == NULL) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        goto out;
    }
    if (token_post(&tp, err) != 0)
        goto out;
    parsed = jscan_parse(tp.body.buf, tp.body.len, 0, CRED_JSON_DEPTH, &a, &d,
                         &jerr) == 0 &&
             jscan_type(&d, 0) == JSCAN_OBJECT;
    ok = tp.status >= 200 && tp.status < 300;
    if (ok && !parsed)
        status_set(err, ST_UPSTREAM_BAD,
                   "%s: the token endpoint's answer is not a JSON object", src);
    else if (!ok) /* an error page when not parsed: the status says it */
        token_refused(parsed ? &d : NULL, &a, tp.status, src, err);
    else
        rc = token_take(c, &d, &a, src, err);
out:
    if (tp.body.buf != NULL)
        wipe_free_n(tp.body.buf, CRED_RESPONSE_MAX + 1);
    arena_release(&a);
    return rc;
}

static int
fetch_service_account(struct cred *c, struct status_error *err)
{
    char *jwt = cred_jwt(c, cred_now(c), err);
    const char *kv[] = {"grant_type", CRED_JWT_GRANT, "assertion", jwt, NULL};
    size_t flen = 0;
    char *form;
    int rc;

    if (jwt == NULL)
        return -1;
    form = form_build(kv, &flen);
    wipe_free(jwt);
    if (form == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    rc = token_request(c, "service_account", c->token_uri, form, err);
    wipe_free_n(form, flen);
    return rc;
}

static int
fetch_authorized_user(struct cred *c, struct status_error *err)
{
    const char *kv[] = {"grant_type",    "refresh_token", "client_id",
                        c->client_id,    "client_secret", c->client_secret,
                        "refresh_token", c->secret,       NULL};
    size_t flen = 0;
    char *form = form_build(kv, &flen);
    int rc;

    if (form == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    rc = token_request(c, "authorized_user", c->token_uri, form, err);
    wipe_free_n(form, flen);
    return rc;
}

/* 1. the Gemini API's keys: 1 found into out, 0 none set, -1 with err
 * set when one cannot be used. */
static int
resolve_api_key(const struct cred_opts *o, struct cred *out,
                struct status_error *err)
{
    static const struct {
        const char *env;
        enum cred_source src;
    } keys[] = {{"GEMINI_API_KEY", CRED_GEMINI_API_KEY},
                {"GOOGLE_API_KEY", CRED_GOOGLE_API_KEY}};

    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const char *v = env_get(o, keys[i].env);
        if (v == NULL)
            continue;
        if (!token_usable(v, strlen(v)))
            return status_set(err, ST_CONFIG,
                              "%s contains spaces or control characters",
                              keys[i].env);
        out->secret = strdup(v);
        if (out->secret == NULL)
            return status_set(err, ST_NO_MEMORY, "out of memory");
        out->source = keys[i].src;
        return 1;
    }
    return 0;
}

/* 2. Application Default Credentials: the named file, else gcloud's.
 * 1 loaded into out, 0 none there, -1 with err set. */
static int
resolve_adc(const struct cred_opts *o, struct cred *out,
            struct status_error *err)
{
    const char *v = env_get(o, "GOOGLE_APPLICATION_CREDENTIALS");
    struct stat st;
    char *well;
    int rc = 0;

    if (v != NULL)
        return adc_load(out, v, "GOOGLE_APPLICATION_CREDENTIALS", o, err) != 0
                   ? -1
                   : 1;
    well = adc_well_known(o);
    if (well != NULL && stat(well, &st) == 0)
        rc = adc_load(out, well, "the ADC file", o, err) != 0 ? -1 : 1;
    free(well);
    return rc;
}

/* 3. gcloud, named or from $PATH: 0 found into out, -1 with err set. */
static int
resolve_gcloud(const struct cred_opts *o, struct cred *out,
               struct status_error *err)
{
    const char *name = o->gcloud != NULL ? o->gcloud
                                         : env_get(o, CRED_GCLOUD_ENV);

    out->gcloud = gcloud_find(o, name != NULL ? name : "gcloud");
    if (out->gcloud != NULL) {
        out->source = CRED_GCLOUD;
        return 0;
    }
    if (name != NULL)
        return status_set(err, ST_CONFIG, "%s: %s is not an executable file",
                          o->gcloud != NULL ? "gcloud" : CRED_GCLOUD_ENV, name);
    return status_set(err, ST_NOT_CONFIGURED,
                      "no Google credential found: %sset "
                      "GOOGLE_APPLICATION_CREDENTIALS to a key file, run "
                      "`gcloud auth application-default login`, or install "
                      "gcloud",
                      o->oauth_only ? "" : "set GEMINI_API_KEY, or ");
}

/* --- public ------------------------------------------------------------- */

const char *
cred_source_name(enum cred_source s)
{
    switch (s) {
    case CRED_GEMINI_API_KEY:
        return "GEMINI_API_KEY";
    case CRED_GOOGLE_API_KEY:
        return "GOOGLE_API_KEY";
    case CRED_SERVICE_ACCOUNT:
        return "service_account";
    case CRED_AUTHORIZED_USER:
        return "authorized_user";
    case CRED_GCLOUD:
        return "gcloud";
    case CRED_NONE:
        break;
    }
    return "none";
}

bool
cred_is_bearer(const struct cred *c)
{
    return c->source == CRED_SERVICE_ACCOUNT ||
           c->source == CRED_AUTHORIZED_USER || c->source == CRED_GCLOUD;
}

int
cred_resolve(const struct cred_opts *o, struct cred *out,
             struct status_error *err)
{
    static const struct cred_opts none = {0};
    int rc = 0;

    if (o == NULL)
        o = &none;
    memset(out, 0, sizeof(*out));
    out->timeout_ms = o->timeout_ms;
    out->gcloud_timeout_ms = o->gcloud_timeout_ms;
    out->now = o->now;
    out->now_ctx = o->now_ctx;
    if (!o->oauth_only)
        rc = resolve_api_key(o, out, err);
    if (rc == 0)
        rc = resolve_adc(o, out, err);
    if (rc == 0)
        rc = resolve_gcloud(o, out, err);
    if (rc < 0) {
        cred_release(out);
        return -1;
    }
    return 0;
}

int
cred_token(struct cred *c, bool force_refresh, const char **token,
           struct status_error *err)
{
    int rc;

    *token = NULL;
    switch (c->source) {
    case CRED_GEMINI_API_KEY:
    case CRED_GOOGLE_API_KEY:
        if (force_refresh)
            return status_set(err, ST_UPSTREAM_AUTH,
                              "%s: the API key was refused; a key cannot "
                              "be refreshed",
                              cred_source_name(c->source));
        *token = c->secret;
        return 0;
    case CRED_SERVICE_ACCOUNT:
    case CRED_AUTHORIZED_USER:
    case CRED_GCLOUD:
        break;
    case CRED_NONE:
    default:
        return status_set(err, ST_NOT_CONFIGURED, "no Google credential");
    }
    if (c->token != NULL && !force_refresh &&
        cred_now(c) < c->expires_at - CRED_REFRESH_MARGIN_S) {
        *token = c->token;
        return 0;
    }
    wipe_free(c->token);
    c->token = NULL;
    c->expires_at = 0;
    if (c->source == CRED_SERVICE_ACCOUNT) {
        rc = fetch_service_account(c, err);
    } else if (c->source == CRED_AUTHORIZED_USER) {
        rc = fetch_authorized_user(c, err);
    } else {
        c->token = gcloud_run(c->gcloud,
                              c->gcloud_timeout_ms > 0 ? c->gcloud_timeout_ms
                                                       : CRED_GCLOUD_TIMEOUT_MS,
                              err);
        rc = c->token != NULL ? 0 : -1;
        if (rc == 0)
            c->expires_at = cred_now(c) + CRED_GCLOUD_CACHE_S;
    }
    if (rc == 0)
        *token = c->token;
    return rc;
}

void
cred_release(struct cred *c)
{
    free(c->file);
    free(c->project_id);
    free(c->quota_project_id);
    wipe_free(c->secret);
    wipe_free(c->client_id);
    wipe_free(c->client_secret);
    free(c->email);
    free(c->key_id);
    free(c->token_uri);
    free(c->gcloud);
    wipe_free(c->token);
    memset(c, 0, sizeof(*c));
}
