/*
 * token.c - session tokens and the secret that signs them (see token.h).
 *
 * HMAC-SHA256 and the constant-time comparison come from OpenSSL's
 * libcrypto; base64url is small enough to write here, strictly: one
 * spelling per byte string, so a token cannot be altered and still pass.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/token.h"
#include "core/bounds.h"
#include "core/memlimit.h"
#include "core/status.h"
#include "core/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

/* SHA-256's output, and its base64url length without padding. */
#define MAC_BYTES         32
#define MAC_B64           43
/* The longest base64url name: BOUND_USER_NAME bytes. */
#define USER_B64_MAX      ((BOUND_USER_NAME * 4 + 2) / 3)
/* long long holds 19 digits (not all of them); the parser checks the
 * value. */
#define EXPIRY_DIGITS_MAX 19

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* --- base64url, no padding -------------------------------------------------- */

/* The encoded length of n bytes. */
static size_t
b64_len(size_t n)
{
    return n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

/* Encode in[0..n) at out (b64_len(n) bytes, no NUL). */
static void
b64_encode(const unsigned char *in, size_t n, char *out)
{
    size_t i = 0;

    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
                     in[i + 2];
        *out++ = b64url[v >> 18];
        *out++ = b64url[v >> 12 & 63];
        *out++ = b64url[v >> 6 & 63];
        *out++ = b64url[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        *out++ = b64url[v >> 18];
        *out++ = b64url[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        *out++ = b64url[v >> 18];
        *out++ = b64url[v >> 12 & 63];
        *out++ = b64url[v >> 6 & 63];
    }
}

static int
b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/*
 * Decode in[0..n) into out[0..cap): the byte count, or -1 when it is not
 * canonical base64url without padding (a character outside the alphabet,
 * a length of 4k+1, or set bits after the last byte: "AB" and "AC" would
 * otherwise both decode to one byte) or does not fit.
 */
static long
b64_decode(const char *in, size_t n, unsigned char *out, size_t cap)
{
    size_t full = n / 4 * 4, len = 0;
    uint32_t v = 0;

    if (n % 4 == 1 || n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > cap)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int d = b64_value(in[i]);
        if (d < 0)
            return -1;
        v = v << 6 | (uint32_t)d;
        if (i % 4 == 3) {
            out[len++] = (unsigned char)(v >> 16);
            out[len++] = (unsigned char)(v >> 8);
            out[len++] = (unsigned char)v;
            v = 0;
        }
    }
    if (n - full == 2) {
        if ((v & 0xF) != 0)
            return -1;
        out[len++] = (unsigned char)(v >> 4);
    } else if (n - full == 3) {
        if ((v & 0x3) != 0)
            return -1;
        out[len++] = (unsigned char)(v >> 10);
        out[len++] = (unsigned char)(v >> 2);
    }
    return (long)len;
}

/* --- the parts of a token --------------------------------------------------- */

bool
token_user_valid(const char *user, size_t len)
{
    const unsigned char *s = (const unsigned char *)user;

    if (len == 0 || len > BOUND_USER_NAME)
        return false;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = utf8_next(s + i, len - i, &cp);
        /* C0 (NUL included), DEL and C1: a name is shown in lists and
         * logs, where they would break lines or carry escapes */
        if (cp == UTF8_BAD || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
            return false;
        i += k;
    }
    return true;
}

/* Decimal digits, no sign, no leading zero, > 0 and within long long;
 * -1 otherwise. */
static long long
parse_expiry(const char *s, size_t n)
{
    long long v = 0;

    if (n == 0 || n > EXPIRY_DIGITS_MAX || s[0] == '0')
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v > (LLONG_MAX - (s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int
check_secret(size_t n, struct status_error *err)
{
    if (n < BOUND_SECRET_MIN || n > INT_MAX)
        return status_set(err, ST_CONFIG,
                          "the session secret must hold at least %d bytes",
                          BOUND_SECRET_MIN);
    return 0;
}

/* HMAC-SHA256(secret, msg[0..len)) into mac; 0/-1. */
static int
sign(const unsigned char *secret, size_t n, const char *msg, size_t len,
     unsigned char mac[MAC_BYTES], struct status_error *err)
{
    unsigned int maclen = 0;

    if (HMAC(EVP_sha256(), secret, (int)n, (const unsigned char *)msg, len, mac,
             &maclen) == NULL ||
        maclen != MAC_BYTES)
        return status_set(err, ST_INTERNAL, "cannot compute HMAC-SHA256");
    return 0;
}

/* --- issue and verify ------------------------------------------------------ */

int
token_issue(const unsigned char *secret, size_t n, const char *user,
            long long expiry, char *out, size_t cap, struct status_error *err)
{
    char tok[TOKEN_SIZE];
    unsigned char mac[MAC_BYTES];
    size_t ulen = strnlen(user, BOUND_USER_NAME + 1), len;
    int k;

    if (cap > 0)
        out[0] = '\0';
    if (check_secret(n, err) != 0)
        return -1;
    if (!token_user_valid(user, ulen))
        return status_set(err, ST_BAD_REQUEST,
                          "a user name is 1 to %d bytes of UTF-8 without "
                          "control characters",
                          BOUND_USER_NAME);
    if (expiry <= 0)
        return status_set(err, ST_BAD_REQUEST,
                          "a token's expiry must be a positive Unix time");
    memcpy(tok, "v1.", 3);
    b64_encode((const unsigned char *)user, ulen, tok + 3);
    len = 3 + b64_len(ulen);
    /* fits: bounds.h checks that the longest token fits TOKEN_SIZE */
    k = snprintf(tok + len, sizeof(tok) - len, ".%lld", expiry);
    if (k < 0 || (size_t)k >= sizeof(tok) - len)
        return status_set(err, ST_INTERNAL, "token buffer too small");
    len += (size_t)k;
    if (sign(secret, n, tok, len, mac, err) != 0)
        return -1;
    tok[len++] = '.';
    b64_encode(mac, MAC_BYTES, tok + len);
    len += MAC_B64;
    tok[len] = '\0';
    explicit_bzero(mac, sizeof(mac));
    if (len >= cap)
        return status_set(err, ST_INTERNAL, "token buffer too small");
    memcpy(out, tok, len + 1);
    explicit_bzero(tok, sizeof(tok));
    return 0;
}

/* The three reasons token_verify() gives; nothing more specific, so a
 * failed forgery learns nothing of what was wrong. */
static int
refuse(struct status_error *err, const char *why)
{
    return status_set(err, ST_UNAUTHORIZED, "session token rejected: %s", why);
}

int
token_verify(const unsigned char *secret, size_t n, const char *token,
             long long now, char *user, size_t cap, struct status_error *err)
{
    unsigned char mac[MAC_BYTES], sig[MAC_BYTES], name[BOUND_USER_NAME];
    const char *u, *e, *s, *dot;
    size_t len, ulen, elen;
    long long expiry;
    long nlen;
    int rc = -1;

    if (cap > 0)
        user[0] = '\0';
    if (check_secret(n, err) != 0)
        return -1;
    /* The shape: v1.<user>.<expiry>.<signature>, each part canonical. */
    len = strnlen(token, BOUND_TOKEN_LEN + 1);
    if (len > BOUND_TOKEN_LEN || strncmp(token, "v1.", 3) != 0)
        return refuse(err, "malformed");
    u = token + 3;
    if ((dot = memchr(u, '.', len - 3)) == NULL)
        return refuse(err, "malformed");
    ulen = (size_t)(dot - u);
    e = dot + 1;
    if ((dot = memchr(e, '.', (size_t)(token + len - e))) == NULL)
        return refuse(err, "malformed");
    elen = (size_t)(dot - e);
    s = dot + 1;
    if ((size_t)(token + len - s) != MAC_B64 || ulen > USER_B64_MAX)
        return refuse(err, "malformed");
    expiry = parse_expiry(e, elen);
    nlen = b64_decode(u, ulen, name, sizeof(name));
    if (expiry < 0 || nlen <= 0 ||
        !token_user_valid((char *)name, (size_t)nlen) ||
        b64_decode(s, MAC_B64, sig, sizeof(sig)) != MAC_BYTES) {
        refuse(err, "malformed");
        goto out;
    }
    /* The signature covers every byte before the last dot. */
    if (sign(secret, n, token, (size_t)(s - 1 - token), mac, err) != 0)
        goto out;
    if (CRYPTO_memcmp(mac, sig, MAC_BYTES) != 0) {
        refuse(err, "bad signature");
        goto out;
    }
    if (now > expiry) {
        refuse(err, "expired");
        goto out;
    }
    if ((size_t)nlen >= cap) {
        status_set(err, ST_INTERNAL, "user name buffer too small");
        goto out;
    }
    memcpy(user, name, (size_t)nlen);
    user[nlen] = '\0';
    rc = 0;
out:
    /* mac is a valid signature for whatever was sent: keep it nowhere */
    explicit_bzero(mac, sizeof(mac));
    return rc;
}

/* --- the site's other signatures ---------------------------------------------- */

int
token_mac(const unsigned char *secret, size_t n, const void *msg, size_t len,
          char out[TOKEN_MAC_SIZE], struct status_error *err)
{
    unsigned char mac[MAC_BYTES];

    out[0] = '\0';
    if (check_secret(n, err) != 0 || sign(secret, n, msg, len, mac, err) != 0)
        return -1;
    _Static_assert(TOKEN_MAC_BYTES <= MAC_BYTES, "a MAC is a part of HMAC");
    _Static_assert(TOKEN_MAC_LEN == (TOKEN_MAC_BYTES * 4 + 2) / 3,
                   "TOKEN_MAC_LEN is base64url of TOKEN_MAC_BYTES");
    b64_encode(mac, TOKEN_MAC_BYTES, out);
    out[TOKEN_MAC_LEN] = '\0';
    explicit_bzero(mac, sizeof(mac));
    return 0;
}

struct token_macer {
    EVP_MAC *mac;
    EVP_MAC_CTX *ctx;
};

struct token_macer *
token_macer_new(const unsigned char *secret, size_t n, struct status_error *err)
{
    /* one per signed request: charged to it (memlimit.h) */
    struct token_macer *m = memlimit_malloc(sizeof(*m));
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                         UNCONST("SHA256"), 0),
        OSSL_PARAM_construct_end(),
    };

    if (check_secret(n, err) != 0) {
        free(m);
        return NULL;
    }
    if (m != NULL)
        *m = (struct token_macer){NULL, NULL};
    if (m == NULL || (m->mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL ||
        (m->ctx = EVP_MAC_CTX_new(m->mac)) == NULL ||
        EVP_MAC_init(m->ctx, secret, n, params) != 1) {
        token_macer_free(m);
        status_set(err, ST_INTERNAL, "cannot set up HMAC-SHA256");
        return NULL;
    }
    return m;
}

int
token_macer_mac(struct token_macer *m, const void *msg, size_t len,
                char out[TOKEN_MAC_SIZE], struct status_error *err)
{
    unsigned char mac[MAC_BYTES];
    size_t maclen = 0;

    out[0] = '\0';
    /* a NULL key starts again with the key set up in token_macer_new() */
    if (EVP_MAC_init(m->ctx, NULL, 0, NULL) != 1 ||
        EVP_MAC_update(m->ctx, msg, len) != 1 ||
        EVP_MAC_final(m->ctx, mac, &maclen, sizeof(mac)) != 1 ||
        maclen != MAC_BYTES)
        return status_set(err, ST_INTERNAL, "cannot compute HMAC-SHA256");
    b64_encode(mac, TOKEN_MAC_BYTES, out);
    out[TOKEN_MAC_LEN] = '\0';
    explicit_bzero(mac, sizeof(mac));
    return 0;
}

void
token_macer_free(struct token_macer *m)
{
    if (m == NULL)
        return;
    EVP_MAC_CTX_free(m->ctx); /* cleanses the key */
    EVP_MAC_free(m->mac);
    free(m);
}

bool
token_mac_equal(const char *want, const char *given)
{
    /* the length is no secret: a wrong one is refused at once */
    return given != NULL && strnlen(given, TOKEN_MAC_SIZE) == TOKEN_MAC_LEN &&
           CRYPTO_memcmp(want, given, TOKEN_MAC_LEN) == 0;
}

/* --- the secret file -------------------------------------------------------- */

/* Is the open secret file fd one only its owner (this user, or root) can
 * read and write? Returns 0, or -1 with err set. */
static int
secret_file_safe(int fd, const char *path, struct status_error *err)
{
    struct stat st;

    if (fstat(fd, &st) != 0)
        return status_set(err, ST_CONFIG,
                          "cannot read the session secret '%s': %s", path,
                          strerror(errno));
    if (!S_ISREG(st.st_mode))
        return status_set(err, ST_CONFIG,
                          "the session secret '%s' is not a regular file",
                          path);
    /* Anyone else who can read it can sign in as anyone; anyone who can
     * write it can sign everyone out. */
    if ((st.st_mode & 077) != 0)
        return status_set(err, ST_CONFIG,
                          "the session secret '%s' is open to group or "
                          "others (mode %03o): run chmod 600 %s",
                          path, (unsigned)(st.st_mode & 0777), path);
    /* Another user who owns it can read or replace it at will. */
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return status_set(err, ST_CONFIG,
                          "the session secret '%s' belongs to user %u, who "
                          "can read or replace it: run chown %u %s",
                          path, (unsigned)st.st_uid, (unsigned)geteuid(), path);
    return 0;
}

/* Read the secret file fd into buf, at most max bytes, their count in
 * *got. Returns 0, or -1 with err set (a longer file too). */
static int
secret_read(int fd, const char *path, unsigned char *buf, size_t max,
            size_t *got, struct status_error *err)
{
    /* One byte past the limit tells a file that is too long. */
    for (;;) {
        unsigned char extra;
        ssize_t r = *got < max ? read(fd, buf + *got, max - *got)
                               : read(fd, &extra, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return status_set(err, ST_CONFIG,
                              "cannot read the session secret '%s': %s", path,
                              strerror(errno));
        if (r == 0)
            return 0;
        if (*got == max) {
            explicit_bzero(&extra, 1);
            return status_set(err, ST_CONFIG,
                              "the session secret '%s' is longer than %zu "
                              "bytes; is it the right file?",
                              path, max);
        }
        *got += (size_t)r;
    }
}

int
token_secret_load(const char *path, unsigned char *buf, size_t cap, size_t *n,
                  struct status_error *err)
{
    size_t max = cap < BOUND_SECRET_MAX ? cap : BOUND_SECRET_MAX, got = 0;
    int fd;

    *n = 0;
    /* O_NONBLOCK: a FIFO in its place is refused below, not waited on */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        explicit_bzero(buf, cap); /* whatever the caller had there */
        if (errno == ENOENT)
            return status_set(err, ST_CONFIG,
                              "the session secret '%s' does not exist; "
                              "`gemini-agent setup` creates one",
                              path);
        return status_set(err, ST_CONFIG,
                          "cannot read the session secret '%s': %s", path,
                          strerror(errno));
    }
    if (secret_file_safe(fd, path, err) != 0 ||
        secret_read(fd, path, buf, max, &got, err) != 0)
        goto fail;
    if (got < BOUND_SECRET_MIN) {
        status_set(err, ST_CONFIG,
                   "the session secret '%s' is %zu bytes; it must hold at "
                   "least %d random bytes (`gemini-agent setup` writes one)",
                   path, got, BOUND_SECRET_MIN);
        goto fail;
    }
    close(fd);
    *n = got;
    return 0;
fail:
    explicit_bzero(buf, cap);
    close(fd);
    return -1;
}

/* Fill buf with random bytes from the kernel; 0/-1 (errno set). */
static int
random_bytes(unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = getrandom(buf, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

static int
write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Move tmp to path unless path exists: renameat2's RENAME_NOREPLACE, or,
 * on a file system without it, a hard link (which never replaces either)
 * and the removal of tmp. 0/-1 (errno set; EEXIST when path exists). */
static int
place_no_replace(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (link(tmp, path) != 0)
        return -1;
    unlink(tmp);
    return 0;
}

/* fsync the folder of path, so the new name survives a crash; best
 * effort (the file itself is already synced). */
static void
sync_folder(const char *path)
{
    char dir[BOUND_PATH_LEN];
    const char *slash = strrchr(path, '/');
    int fd;

    if (slash == NULL) {
        memcpy(dir, ".", 2);
    } else {
        size_t k = slash == path ? 1 : (size_t)(slash - path);
        memcpy(dir, path, k);
        dir[k] = '\0';
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int
token_secret_create(const char *path, struct status_error *err)
{
    unsigned char secret[BOUND_SECRET_MIN];
    char tmp[BOUND_PATH_LEN];
    bool made = false; /* tmp exists and is ours to remove */
    int fd = -1, rc = -1;

    if (path[0] == '\0' ||
        (size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
        return status_set(err, ST_CONFIG,
                          "the session secret's file name '%s' is not usable",
                          path);
    if (access(path, F_OK) == 0)
        return status_set(err, ST_CONFIG,
                          "the session secret '%s' already exists; it is "
                          "kept (a new one would end every session)",
                          path);
    if (random_bytes(secret, sizeof(secret)) != 0)
        return status_set(err, ST_CONFIG,
                          "cannot get random bytes for '%s': %s", path,
                          strerror(errno));
    /* mkostemp creates the file 0600 (less the umask, which can only
     * narrow it); fchmod makes it exactly that. */
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        status_set(err, ST_CONFIG, "cannot create the session secret '%s': %s",
                   path, strerror(errno));
        goto out;
    }
    made = true;
    if (fchmod(fd, 0600) != 0 || write_all(fd, secret, sizeof(secret)) != 0 ||
        fsync(fd) != 0) {
        status_set(err, ST_CONFIG, "cannot write the session secret '%s': %s",
                   path, strerror(errno));
        goto out;
    }
    if (close(fd) != 0) {
        fd = -1;
        status_set(err, ST_CONFIG, "cannot write the session secret '%s': %s",
                   path, strerror(errno));
        goto out;
    }
    fd = -1;
    if (place_no_replace(tmp, path) != 0) {
        if (errno == EEXIST)
            status_set(err, ST_CONFIG,
                       "the session secret '%s' already exists; it is kept "
                       "(a new one would end every session)",
                       path);
        else
            status_set(err, ST_CONFIG,
                       "cannot create the session secret '%s': %s", path,
                       strerror(errno));
        goto out;
    }
    made = false; /* moved into place */
    sync_folder(path);
    rc = 0;
out:
    explicit_bzero(secret, sizeof(secret));
    if (fd >= 0)
        close(fd);
    if (made)
        unlink(tmp);
    return rc;
}
