/*
 * check_auth.c - identity: session tokens (core/token.h), the secret file,
 * the auth section of agent.yaml, and a request's user (http/auth.h)
 * through the memory transport.
 *
 * Known vectors were computed outside the program (Python's hmac and
 * base64), and crafted tokens are signed here with OpenSSL's EVP_Q_mac
 * and a base64url encoder of this file's own, so the code under test
 * never checks itself.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/bounds.h"
#include "core/config.h"
#include "core/diag.h"
#include "core/status.h"
#include "core/token.h"
#include "http/auth.h"
#include "http/httpio.h"
#include "http/site.h"
#include "unit_memio.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

/* The vectors' secret: the bytes 0x00..0x1f. */
static unsigned char secret[32];
static const long long vec_expiry = 1700000000;
static const char vec_alice[] =
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo";
static const char vec_zoe[] = /* "Zoë": base64url's '_' */
    "v1.Wm_Dqw.1700000000.4Hxr24mYQUR3aL9KZHCuJUfu6tL5qm1j50aL9p1QMP4";

static void
fill_secret(void)
{
    for (size_t i = 0; i < sizeof(secret); i++)
        secret[i] = (unsigned char)i;
}

/* --- an independent signer -------------------------------------------------- */

static void
b64url(const unsigned char *in, size_t n, char *out)
{
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    unsigned bits = 0, nbits = 0;

    for (size_t i = 0; i < n; i++) {
        bits = bits << 8 | in[i];
        nbits += 8;
        while (nbits >= 6) {
            nbits -= 6;
            out[o++] = a[(bits >> nbits) & 63];
        }
    }
    if (nbits > 0)
        out[o++] = a[(bits << (6 - nbits)) & 63];
    out[o] = '\0';
}

/* "v1.<b64 user>.<expiry text>.<sig>" signed with key[0..klen), into out. */
static void
craft(const unsigned char *key, size_t klen, const char *user, size_t ulen,
      const char *expiry, char *out, size_t cap)
{
    char u[512], sig[64];
    unsigned char mac[32];
    size_t maclen = 0;
    int k;

    b64url((const unsigned char *)user, ulen, u);
    k = snprintf(out, cap, "v1.%s.%s", u, expiry);
    ck_assert(k > 0 && (size_t)k < cap);
    ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key,
                                    klen, (const unsigned char *)out,
                                    (size_t)k, mac, sizeof(mac), &maclen));
    ck_assert_uint_eq(maclen, 32);
    b64url(mac, 32, sig);
    ck_assert((size_t)k + 1 + strlen(sig) < cap);
    snprintf(out + k, cap - (size_t)k, ".%s", sig);
}

/* token_verify must fail with 401 and `why` in the message. */
static void
assert_refused(const char *token, long long now, const char *why)
{
    struct status_error err = {0};
    char user[TOKEN_USER_SIZE] = "x";

    ck_assert_int_eq(token_verify(secret, sizeof(secret), token, now, user,
                                  sizeof(user), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_UNAUTHORIZED);
    ck_assert_int_eq(status_http(err.code), 401);
    ck_assert_msg(strstr(err.text, why) != NULL, "'%s': got '%s', want '%s'",
                  token, err.text, why);
    ck_assert_str_eq(user, "");
    /* the message never quotes the token */
    ck_assert(strlen(token) < 8 || strstr(err.text, token) == NULL);
}

/* --- tokens ----------------------------------------------------------------- */

START_TEST(known_vectors)
{
    struct status_error err = {0};
    char tok[TOKEN_SIZE], user[TOKEN_USER_SIZE], crafted[TOKEN_SIZE];

    fill_secret();
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "alice@example.com",
                                 vec_expiry, tok, sizeof(tok), &err),
                     0);
    ck_assert_str_eq(tok, vec_alice);
    craft(secret, sizeof(secret), "alice@example.com", 17, "1700000000",
          crafted, sizeof(crafted));
    ck_assert_str_eq(crafted, vec_alice);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "Zo\xc3\xab",
                                 vec_expiry, tok, sizeof(tok), &err),
                     0);
    ck_assert_str_eq(tok, vec_zoe);
    ck_assert_int_eq(token_verify(secret, sizeof(secret), vec_zoe, vec_expiry,
                                  user, sizeof(user), &err),
                     0);
    ck_assert_str_eq(user, "Zo\xc3\xab");
    ck_assert_int_eq(err.code, ST_OK);
}
END_TEST

/* Names of every length mod 3 (the base64 tails), UTF-8, the longest. */
START_TEST(round_trip)
{
    char names[6][TOKEN_USER_SIZE] = {
        "a", "ab", "abc", "Jos\xc3\xa9 \xe6\x97\xa5", "x@y.example"};
    struct status_error err = {0};
    char tok[TOKEN_SIZE], user[TOKEN_USER_SIZE];
    long long exp = 4102444800LL; /* 2100-01-01 */

    fill_secret();
    memset(names[5], 'n', BOUND_USER_NAME);
    names[5][BOUND_USER_NAME] = '\0';
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        ck_assert_int_eq(token_issue(secret, sizeof(secret), names[i], exp, tok,
                                     sizeof(tok), &err),
                         0);
        ck_assert_uint_le(strlen(tok), BOUND_TOKEN_LEN);
        ck_assert_int_eq(token_verify(secret, sizeof(secret), tok, exp - 1,
                                      user, sizeof(user), &err),
                         0);
        ck_assert_str_eq(user, names[i]);
        /* still valid at the expiry second itself, not one after */
        ck_assert_int_eq(token_verify(secret, sizeof(secret), tok, exp, user,
                                      sizeof(user), &err),
                         0);
        assert_refused(tok, exp + 1, "expired");
    }
    /* a different user gives a different token */
    ck_assert_int_eq(
        token_issue(secret, sizeof(secret), "bob", exp, tok, sizeof(tok), &err),
        0);
    ck_assert_str_ne(tok, vec_alice);
}
END_TEST

START_TEST(tampering_is_refused)
{
    char t[TOKEN_SIZE], bob[TOKEN_SIZE];
    unsigned char other[32];

    fill_secret();
    /* another user under alice's signature */
    craft(secret, sizeof(secret), "bob", 3, "1700000000", bob, sizeof(bob));
    snprintf(t, sizeof(t), "v1.Ym9i.1700000000.%s",
             strrchr(vec_alice, '.') + 1);
    assert_refused(t, 0, "bad signature");
    /* a later expiry */
    snprintf(t, sizeof(t), "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000001.%s",
             strrchr(vec_alice, '.') + 1);
    assert_refused(t, 0, "bad signature");
    snprintf(t, sizeof(t), "v1.YWxpY2VAZXhhbXBsZS5jb20.9999999999.%s",
             strrchr(vec_alice, '.') + 1);
    assert_refused(t, 0, "bad signature");
    /* a changed signature (first character: still canonical) */
    snprintf(t, sizeof(t), "%s", vec_alice);
    *(strrchr(t, '.') + 1) = 'r';
    assert_refused(t, 0, "bad signature");
    /* bob's signature on alice's message */
    snprintf(t, sizeof(t), "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000.%s",
             strrchr(bob, '.') + 1);
    assert_refused(t, 0, "bad signature");
    /* the right shape signed with another secret */
    memset(other, 7, sizeof(other));
    craft(other, sizeof(other), "alice@example.com", 17, "1700000000", t,
          sizeof(t));
    assert_refused(t, 0, "bad signature");
    /* a forged token is "bad signature" even when it has expired too: its
     * expiry is never looked at */
    assert_refused(t, vec_expiry + 100, "bad signature");
    /* a good one that expired */
    assert_refused(vec_alice, vec_expiry + 1, "expired");
}
END_TEST

static const char *const malformed[] = {
    "",
    "v1",
    "v1.",
    "v1..",
    "v1...",
    "v2.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "V1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    /* missing parts */
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1..1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20..qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000.",
    /* one part too many */
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo.x",
    "v1.YWxp.Y2U.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    /* bad base64 in the name: a foreign character, padding, standard
     * base64's '+' and '/', a 4k+1 length, stray bits */
    "v1.YWxp!2U.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2U=.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.Wm/Dqw.1700000000.4Hxr24mYQUR3aL9KZHCuJUfu6tL5qm1j50aL9p1QMP4",
    "v1.YWxpY.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2V.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YR.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxp Y2U.1700000000.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    /* expiry that is not plain decimal */
    "v1.YWxpY2VAZXhhbXBsZS5jb20.0x65."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.-1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.+1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.01700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.0.qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.17e8."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20. 1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.9223372036854775808."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.99999999999999999999."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    /* signatures of the wrong length, padded, with stray bits */
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TD",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDoA",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo=",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDp",
    /* spaces around it */
    " v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo",
    "v1.YWxpY2VAZXhhbXBsZS5jb20.1700000000."
    "qasHEQepGlBTMhNb3I5pBw5vSO9tsR1gtXdU9Xq8TDo ",
};

START_TEST(malformed_tokens)
{
    fill_secret();
    assert_refused(malformed[_i], 0, "malformed");
}
END_TEST

/* Overlong in every part, and names that are signed right but are no
 * user name: the signer is trusted, the shape is still checked. */
START_TEST(malformed_long_and_signed)
{
    char big[4096], t[1024], name[BOUND_USER_NAME + 2];

    fill_secret();
    memset(big, 'A', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_refused(big, 0, "malformed");
    memcpy(big, "v1.", 3);
    assert_refused(big, 0, "malformed");
    /* a name one byte too long, signed */
    memset(name, 'n', BOUND_USER_NAME + 1);
    name[BOUND_USER_NAME + 1] = '\0';
    craft(secret, sizeof(secret), name, BOUND_USER_NAME + 1, "1700000000", t,
          sizeof(t));
    assert_refused(t, 0, "malformed");
    /* control characters, NUL, invalid UTF-8, signed */
    craft(secret, sizeof(secret), "a\nb", 3, "1700000000", t, sizeof(t));
    assert_refused(t, 0, "malformed");
    craft(secret, sizeof(secret), "a\0b", 3, "1700000000", t, sizeof(t));
    assert_refused(t, 0, "malformed");
    craft(secret, sizeof(secret), "\xc2\x85", 2, "1700000000", t, sizeof(t));
    assert_refused(t, 0, "malformed");
    craft(secret, sizeof(secret), "\xff", 1, "1700000000", t, sizeof(t));
    assert_refused(t, 0, "malformed");
    /* an expiry with a leading zero, signed as such */
    craft(secret, sizeof(secret), "ann", 3, "01700000000", t, sizeof(t));
    assert_refused(t, 0, "malformed");
    /* the longest legal expiry is fine */
    craft(secret, sizeof(secret), "ann", 3, "9223372036854775807", t,
          sizeof(t));
    {
        struct status_error err = {0};
        char user[TOKEN_USER_SIZE];
        ck_assert_int_eq(token_verify(secret, sizeof(secret), t, vec_expiry,
                                      user, sizeof(user), &err),
                         0);
        ck_assert_str_eq(user, "ann");
    }
}
END_TEST

static const struct {
    const char *name;
    size_t len; /* 0: strlen */
    bool valid;
} user_cases[] = {
    {"a", 0, true},
    {"ann@example.com", 0, true},
    {"Jos\xc3\xa9", 0, true},
    {"\xf0\x9f\x98\x80", 0, true},
    {"with space", 0, true},
    {"", 0, false},
    {"tab\there", 0, false},
    {"nl\n", 0, false},
    {"del\x7f", 0, false},
    {"c1\xc2\x80", 0, false},
    {"c1\xc2\x9f", 0, false},
    {"\xc2\xa0nbsp", 0, true},
    {"bad\xff", 0, false},
    {"overlong\xc0\xaf", 0, false},
    {"surrogate\xed\xa0\x80", 0, false},
    {"cut\xe6\x97", 0, false},
    {"nul\0x", 5, false},
};

START_TEST(user_names)
{
    const char *n = user_cases[_i].name;
    size_t len = user_cases[_i].len ? user_cases[_i].len : strlen(n);
    char longest[BOUND_USER_NAME + 2];

    ck_assert_msg(token_user_valid(n, len) == user_cases[_i].valid,
                  "case %d", _i);
    memset(longest, 'x', sizeof(longest));
    ck_assert(token_user_valid(longest, BOUND_USER_NAME));
    ck_assert(!token_user_valid(longest, BOUND_USER_NAME + 1));
}
END_TEST

START_TEST(issue_and_verify_errors)
{
    struct status_error err = {0};
    char tok[TOKEN_SIZE], user[TOKEN_USER_SIZE], longname[BOUND_USER_NAME + 2];

    fill_secret();
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "", 5, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ck_assert_int_eq(token_issue(secret, sizeof(secret), longname, 5, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "a\tb", 5, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "ann", 0, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "ann", -5, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    /* a secret below the bound signs nothing and checks nothing */
    ck_assert_int_eq(token_issue(secret, BOUND_SECRET_MIN - 1, "ann", 5, tok,
                                 sizeof(tok), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    status_clear(&err);
    ck_assert_int_eq(token_verify(secret, 0, vec_alice, 0, user, sizeof(user),
                                  &err),
                     -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    status_clear(&err);
    /* buffers too small */
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "ann", 5, tok, 20,
                                 &err),
                     -1);
    ck_assert_int_eq(err.code, ST_INTERNAL);
    ck_assert_str_eq(tok, "");
    status_clear(&err);
    ck_assert_int_eq(token_verify(secret, sizeof(secret), vec_alice, 0, user,
                                  5, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_INTERNAL);
}
END_TEST

/* --- the secret file -------------------------------------------------------- */

static char tmpdir[64];

static void
tmp_setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ga-auth-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
tmp_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static void
write_bytes(const char *path, const void *data, size_t n, unsigned mode)
{
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

static void
write_text(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text), 0644);
}

/* load `path` expecting ST_CONFIG with `word` and the path in the message */
static void
assert_secret_refused(const char *path, const char *word)
{
    unsigned char buf[BOUND_SECRET_MAX];
    struct status_error err = {0};
    size_t n = 99;

    memset(buf, 0xAA, sizeof(buf));
    ck_assert_int_eq(token_secret_load(path, buf, sizeof(buf), &n, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(strstr(err.text, path) != NULL, "no path in '%s'", err.text);
    ck_assert_msg(strstr(err.text, word) != NULL, "'%s' lacks '%s'", err.text,
                  word);
    for (size_t i = 0; i < sizeof(buf); i++)
        ck_assert_msg(buf[i] == 0, "buffer not wiped at %zu", i);
}

static const unsigned modes_refused[] = {0644, 0640, 0604, 0620, 0602,
                                         0610, 0601, 0660, 0666};

START_TEST(secret_file_refusals)
{
    char path[128];
    unsigned char bytes[BOUND_SECRET_MAX + 1];

    memset(bytes, 0x5A, sizeof(bytes));
    snprintf(path, sizeof(path), "%s/missing", tmpdir);
    assert_secret_refused(path, "does not exist");
    snprintf(path, sizeof(path), "%s/short", tmpdir);
    write_bytes(path, bytes, BOUND_SECRET_MIN - 1, 0600);
    assert_secret_refused(path, "at least 32");
    snprintf(path, sizeof(path), "%s/empty", tmpdir);
    write_bytes(path, bytes, 0, 0600);
    assert_secret_refused(path, "at least 32");
    snprintf(path, sizeof(path), "%s/long", tmpdir);
    write_bytes(path, bytes, BOUND_SECRET_MAX + 1, 0600);
    assert_secret_refused(path, "longer than");
    for (size_t i = 0; i < ARRAY_SIZE(modes_refused); i++) {
        snprintf(path, sizeof(path), "%s/mode%03o", tmpdir, modes_refused[i]);
        write_bytes(path, bytes, 32, modes_refused[i]);
        assert_secret_refused(path, "chmod 600");
    }
    assert_secret_refused(tmpdir, "not a regular file");
}
END_TEST

START_TEST(secret_file_accepted)
{
    char path[128];
    unsigned char bytes[64], buf[BOUND_SECRET_MAX], small[40];
    struct status_error err = {0};
    size_t n = 0;

    for (size_t i = 0; i < sizeof(bytes); i++)
        bytes[i] = (unsigned char)(i * 7);
    snprintf(path, sizeof(path), "%s/s32", tmpdir);
    write_bytes(path, bytes, 32, 0600);
    ck_assert_int_eq(token_secret_load(path, buf, sizeof(buf), &n, &err), 0);
    ck_assert_uint_eq(n, 32);
    ck_assert_mem_eq(buf, bytes, 32);
    /* read-only for the owner is fine too; so is a longer secret */
    snprintf(path, sizeof(path), "%s/s64", tmpdir);
    write_bytes(path, bytes, 64, 0400);
    ck_assert_int_eq(token_secret_load(path, buf, sizeof(buf), &n, &err), 0);
    ck_assert_uint_eq(n, 64);
    ck_assert_mem_eq(buf, bytes, 64);
    /* but not one longer than the caller's buffer */
    ck_assert_int_eq(token_secret_load(path, small, sizeof(small), &n, &err),
                     -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
}
END_TEST

/* The folder's entries other than . and .. */
static int
count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

START_TEST(secret_file_create)
{
    char path[128], other[128];
    unsigned char a[BOUND_SECRET_MAX], b[BOUND_SECRET_MAX];
    struct status_error err = {0};
    struct stat st;
    size_t na = 0, nb = 0;

    /* a wide umask must not widen the file */
    umask(0);
    snprintf(path, sizeof(path), "%s/.session-secret", tmpdir);
    ck_assert_int_eq(token_secret_create(path, &err), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(st.st_size, BOUND_SECRET_MIN);
    ck_assert_int_eq(count_entries(tmpdir), 1); /* no temporary file left */
    ck_assert_int_eq(token_secret_load(path, a, sizeof(a), &na, &err), 0);
    ck_assert_uint_eq(na, BOUND_SECRET_MIN);

    /* never replaced */
    ck_assert_int_eq(token_secret_create(path, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_msg(strstr(err.text, "already exists") != NULL, "%s", err.text);
    status_clear(&err);
    ck_assert_int_eq(token_secret_load(path, b, sizeof(b), &nb, &err), 0);
    ck_assert_mem_eq(a, b, na);
    ck_assert_int_eq(count_entries(tmpdir), 1);

    /* two secrets differ (they are random) */
    snprintf(other, sizeof(other), "%s/second", tmpdir);
    ck_assert_int_eq(token_secret_create(other, &err), 0);
    ck_assert_int_eq(token_secret_load(other, b, sizeof(b), &nb, &err), 0);
    ck_assert(memcmp(a, b, BOUND_SECRET_MIN) != 0);

    /* a folder that does not exist */
    snprintf(other, sizeof(other), "%s/no/such/secret", tmpdir);
    ck_assert_int_eq(token_secret_create(other, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_msg(strstr(err.text, other) != NULL, "%s", err.text);
    ck_assert_int_eq(count_entries(tmpdir), 2);
}
END_TEST

/* --- the auth section of agent.yaml ----------------------------------------- */

static struct config *
load_text(const char *text, struct diag *d)
{
    char path[128];

    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    write_text(path, text);
    return config_load(path, d);
}

START_TEST(config_auth_defaults)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = load_text("actions: []\n", &d);

    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_null(cfg->auth.remote_user_var);
    ck_assert_int_eq(cfg->auth.remote_user_server, CONFIG_SERVER_NONE);
    ck_assert_ptr_null(cfg->auth.secret_file);
    ck_assert_str_eq(cfg->auth.session_cookie, "ga_session");
    config_free(cfg);
    diag_release(&d);
}
END_TEST

START_TEST(config_auth_keys)
{
    struct diag d = DIAG_INIT;
    struct config *cfg;
    char want[160];

    cfg = load_text("actions: []\n"
                    "auth:\n"
                    "  remoteUser: {variable: GA_REMOTE_USER, server: nginx}\n"
                    "  trustRemoteUser: false\n"
                    "  secretFile: keys/.session-secret\n"
                    "  sessionCookie: __Host-sid\n",
                    &d);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_str_eq(cfg->auth.remote_user_var, "GA_REMOTE_USER");
    ck_assert_int_eq(cfg->auth.remote_user_server, CONFIG_SERVER_NGINX);
    snprintf(want, sizeof(want), "%s/keys/.session-secret", tmpdir);
    ck_assert_str_eq(cfg->auth.secret_file, want);
    ck_assert_str_eq(cfg->auth.session_cookie, "__Host-sid");
    config_free(cfg);
    diag_release(&d);
    d = (struct diag)DIAG_INIT;
    cfg = load_text("actions: []\nauth: {secretFile: /etc/ga/secret}\n", &d);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_str_eq(cfg->auth.secret_file, "/etc/ga/secret");
    config_free(cfg);
    diag_release(&d);
    /* Apache's auth modules alone set REMOTE_USER */
    d = (struct diag)DIAG_INIT;
    cfg = load_text("actions: []\nauth:\n  remoteUser:\n"
                    "    variable: REMOTE_USER\n    server: apache\n",
                    &d);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_str_eq(cfg->auth.remote_user_var, "REMOTE_USER");
    ck_assert_int_eq(cfg->auth.remote_user_server, CONFIG_SERVER_APACHE);
    config_free(cfg);
    diag_release(&d);
}
END_TEST

static const struct {
    const char *yaml;
    const char *word;
} config_bad[] = {
    {"auth: yes\n", "'auth' must be a mapping"},
    {"auth: [a]\n", "'auth' must be a mapping"},
    {"auth:\n  trustRemoteUser: maybe\n",
     "'auth.trustRemoteUser' must be true or false"},
    /* the old form, and every variable a client sets */
    {"auth:\n  trustRemoteUser: true\n",
     "'auth.trustRemoteUser: true' is refused: behind nginx, REMOTE_USER is "
     "the name in any client's 'Authorization: Basic' header, so anyone "
     "could sign in as anyone; name the variable your web server sets from "
     "its own sign-in instead: write auth: {remoteUser: {variable: "
     "GA_REMOTE_USER, server: nginx}}"},
    {"auth:\n  remoteUser: {variable: REMOTE_USER, server: nginx}\n",
     "'auth.remoteUser': REMOTE_USER behind nginx is what nginx's "
     "fastcgi_params fills from ANY client's 'Authorization: Basic' header"},
    {"auth:\n  remoteUser: {variable: HTTP_X_USER, server: nginx}\n",
     "HTTP_X_USER behind nginx is set from the client's own headers"},
    {"auth:\n  remoteUser: {variable: HTTP_X_REMOTE_USER, server: apache}\n",
     "HTTP_X_REMOTE_USER behind apache is set from the client's own headers"},
    {"auth:\n  remoteUser: {variable: REDIRECT_REMOTE_USER, server: apache}\n",
     "is set from the client's own headers"},
    {"auth:\n  remoteUser: {variable: QUERY_STRING, server: nginx}\n",
     "QUERY_STRING behind nginx is filled from the request"},
    {"auth:\n  remoteUser: {variable: GA_REMOTE_USER, server: apache}\n",
     "GA_REMOTE_USER behind apache is not one Apache's auth modules set"},
    {"auth:\n  remoteUser: {variable: ga-user, server: nginx}\n",
     "ga-user behind nginx is not a variable name"},
    {"auth:\n  remoteUser: {variable: GA_REMOTE_USER}\n",
     "'auth.remoteUser' needs the variable the web server sets from its own "
     "sign-in and the server, nginx or apache: write"},
    {"auth:\n  remoteUser: {variable: GA_REMOTE_USER, server: caddy}\n",
     "the server, nginx or apache (not 'caddy'): write"},
    {"auth:\n  remoteUser: {server: nginx}\n", "needs the variable"},
    {"auth:\n  remoteUser: GA_REMOTE_USER\n",
     "'auth.remoteUser' must be a mapping {variable, server}"},
    {"auth:\n  remoteUser: {variable: GA_REMOTE_USER, server: nginx, x: 1}\n",
     "unknown key 'x' in 'auth.remoteUser' (expected one of: variable, "
     "server)"},
    {"auth:\n  secretFile: ''\n", "'auth.secretFile' must be a non-empty"},
    {"auth:\n  secretFile: [a]\n", "'auth.secretFile' must be a non-empty"},
    {"auth:\n  sessionCookie: 'a b'\n",
     "'auth.sessionCookie' must be a cookie"},
    {"auth:\n  sessionCookie: 'a;b'\n",
     "'auth.sessionCookie' must be a cookie"},
    {"auth:\n  sessionCookie: 'a=b'\n",
     "'auth.sessionCookie' must be a cookie"},
    {"auth:\n  sessionCookie: 'caf\xc3\xa9'\n",
     "'auth.sessionCookie' must be a cookie"},
    {"auth:\n  secretfile: x\n",
     "unknown key 'secretfile' in 'auth' (expected one of: remoteUser, "
     "secretFile, sessionCookie)"},
    {"authz:\n  secretFile: x\n", "expected one of: gemini, actions, dataDir, "
                                  "limits, store, policy, auth, "
                                  "history, http, outbound, budget, "
                                  "plugins, log, allowReadableKeyFile"},
};

START_TEST(config_auth_refusals)
{
    struct diag d = DIAG_INIT;
    char text[256];
    struct config *cfg;

    snprintf(text, sizeof(text), "actions: []\n%s", config_bad[_i].yaml);
    cfg = load_text(text, &d);
    /* agent.yaml's own problems are fatal */
    ck_assert_ptr_null(cfg);
    ck_assert_uint_ge(d.count, 1);
    ck_assert_msg(strstr(d.items[0].msg, config_bad[_i].word) != NULL,
                  "'%s' lacks '%s'", d.items[0].msg, config_bad[_i].word);
    ck_assert_int_gt(d.items[0].line, 1);
    diag_release(&d);
}
END_TEST

static const char *
last_problem(const struct diag *d)
{
    return d->count > 0 ? d->items[d->count - 1].msg : "(no problem)";
}

/* The site loads the secret, or cannot be used at all. */
START_TEST(site_loads_the_secret)
{
    struct diag d = DIAG_INIT;
    struct site *s;
    char path[128], spath[128];
    unsigned char bytes[32];

    memset(bytes, 0x33, sizeof(bytes));
    snprintf(path, sizeof(path), "%s/agent.yaml", tmpdir);
    snprintf(spath, sizeof(spath), "%s/sec", tmpdir);
    write_text(path, "actions: []\nauth: {secretFile: sec}\n");

    s = site_load(path, &d); /* missing */
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(last_problem(&d), "does not exist") != NULL, "%s",
                  last_problem(&d));
    diag_release(&d);

    write_bytes(spath, bytes, 32, 0640);
    d = (struct diag)DIAG_INIT;
    s = site_load(path, &d); /* open to the group */
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(last_problem(&d), "chmod 600") != NULL, "%s",
                  last_problem(&d));
    diag_release(&d);

    ck_assert_int_eq(chmod(spath, 0600), 0);
    d = (struct diag)DIAG_INIT;
    s = site_load(path, &d);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->auth_secret_len, 32);
    ck_assert_mem_eq(s->auth_secret, bytes, 32);
    site_free(s);
    diag_release(&d);

    /* none configured: no secret, and the site still loads */
    write_text(path, "actions: []\n");
    d = (struct diag)DIAG_INIT;
    s = site_load(path, &d);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->auth_secret_len, 0);
    site_free(s);
    diag_release(&d);
}
END_TEST

/* --- a request's identity --------------------------------------------------- */

static char cookie_default[] = "ga_session";
static char cookie_custom[] = "sid";

/* Tokens the cases name: @A alice, @B bob (valid for an hour), @X alice's
 * expired one, @F alice's signed with another secret. */
static char tok_a[TOKEN_SIZE], tok_b[TOKEN_SIZE], tok_x[TOKEN_SIZE],
    tok_f[TOKEN_SIZE];

static void
make_tokens(void)
{
    struct status_error err = {0};
    unsigned char other[32];
    long long now = (long long)time(NULL);

    fill_secret();
    memset(other, 9, sizeof(other));
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "alice", now + 3600,
                                 tok_a, sizeof(tok_a), &err),
                     0);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "bob", now + 3600,
                                 tok_b, sizeof(tok_b), &err),
                     0);
    ck_assert_int_eq(token_issue(secret, sizeof(secret), "alice", now - 10,
                                 tok_x, sizeof(tok_x), &err),
                     0);
    ck_assert_int_eq(token_issue(other, sizeof(other), "alice", now + 3600,
                                 tok_f, sizeof(tok_f), &err),
                     0);
}

/* `s` with @A, @B, @X and @F replaced by the tokens, into out. */
static const char *
expand(const char *s, char *out, size_t cap)
{
    size_t o = 0;

    for (; *s != '\0'; s++) {
        const char *t = NULL;
        if (s[0] == '@' && s[1] != '\0')
            t = s[1] == 'A'   ? tok_a
                : s[1] == 'B' ? tok_b
                : s[1] == 'X' ? tok_x
                : s[1] == 'F' ? tok_f
                              : NULL;
        if (t != NULL) {
            ck_assert_uint_lt(o + strlen(t), cap);
            memcpy(out + o, t, strlen(t));
            o += strlen(t);
            s++;
        } else {
            ck_assert_uint_lt(o + 1, cap);
            out[o++] = *s;
        }
    }
    out[o] = '\0';
    return out;
}

static const struct identify_case {
    const char *label;
    bool trust;
    bool custom_cookie; /* sessionCookie: sid */
    bool no_secret;     /* auth.secretFile not set */
    const char *params[16]; /* name, value, ...; values may name @tokens */
    const char *user;       /* the identity, or NULL for a refusal... */
    const char *why;        /* ...with this in the message */
} identify_cases[] = {
    /* the web server's user: trust names GA_REMOTE_USER (auth.remoteUser) */
    {"trusted GA_REMOTE_USER", true, false, false,
     {"REQUEST_METHOD", "POST", "GA_REMOTE_USER", "carol"}, "carol", NULL},
    {"GA_REMOTE_USER not trusted", false, false, false,
     {"REQUEST_METHOD", "GET", "GA_REMOTE_USER", "carol"}, NULL,
     "sign in first"},
    {"REMOTE_USER not trusted, a token", false, false, false,
     {"REMOTE_USER", "carol", "HTTP_AUTHORIZATION", "Bearer @A"}, "alice",
     NULL},
    /* fastcgi_params passes REMOTE_USER from any
     * client's Basic header; only the named variable counts */
    {"REMOTE_USER from a Basic header is no one", true, false, false,
     {"REQUEST_METHOD", "GET", "REMOTE_USER", "victim",
      "HTTP_AUTHORIZATION", "Basic dmljdGltOng="},
     NULL, "sign in first"},
    {"REMOTE_USER beside a token: the token", true, false, false,
     {"REMOTE_USER", "victim", "HTTP_AUTHORIZATION", "Bearer @A"}, "alice",
     NULL},
    {"trusted GA_REMOTE_USER wins over a token", true, false, false,
     {"GA_REMOTE_USER", "carol", "HTTP_AUTHORIZATION", "Bearer @B"}, "carol",
     NULL},
    {"trusted but empty GA_REMOTE_USER: the token", true, false, false,
     {"GA_REMOTE_USER", "", "HTTP_AUTHORIZATION", "Bearer @B"}, "bob", NULL},
    {"trusted GA_REMOTE_USER that is no user name", true, false, false,
     {"GA_REMOTE_USER", "bad\nname"}, NULL, "user name cannot be used"},
    {"trusted, nothing set", true, false, false,
     {"REQUEST_METHOD", "GET"}, NULL, "sign in first"},
    /* Bearer */
    {"Bearer", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_AUTHORIZATION", "Bearer @A"}, "alice",
     NULL},
    {"Bearer POST without Origin", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_AUTHORIZATION", "Bearer @B"}, "bob",
     NULL},
    {"Bearer POST from another origin", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_AUTHORIZATION", "Bearer @B",
      "HTTP_ORIGIN", "https://evil.example", "HTTP_HOST", "shop.example"},
     "bob", NULL},
    {"bearer in lower case, extra spaces", false, false, false,
     {"HTTP_AUTHORIZATION", "bearer   @A  "}, "alice", NULL},
    {"Bearer wins over the cookie", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_AUTHORIZATION", "Bearer @A",
      "HTTP_COOKIE", "ga_session=@B"}, "alice", NULL},
    {"Bearer expired", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer @X"}, NULL, "expired"},
    {"Bearer signed elsewhere", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer @F"}, NULL, "bad signature"},
    {"Bearer garbage", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer hello"}, NULL, "malformed"},
    {"Bearer with nothing after it", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer  "}, NULL, "malformed"},
    {"two tokens run together", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer @A@A"}, NULL, "malformed"},
    {"two Bearer tokens", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearer @A, Bearer @B"}, NULL, "malformed"},
    {"Bearer when the site has no secret", false, false, true,
     {"HTTP_AUTHORIZATION", "Bearer @A"}, NULL, "accepts none"},
    {"Basic (the web server's) is not a token", false, false, false,
     {"HTTP_AUTHORIZATION", "Basic YWxpY2U6cHc="}, NULL, "sign in first"},
    {"Bearerx is not Bearer", false, false, false,
     {"HTTP_AUTHORIZATION", "Bearerx @A"}, NULL, "sign in first"},
    {"Basic and the cookie: the cookie", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_AUTHORIZATION", "Basic eDp5",
      "HTTP_COOKIE", "ga_session=@A"}, "alice", NULL},
    /* the cookie */
    {"cookie among others", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "a=b; ga_session=@A; c=d"},
     "alice", NULL},
    {"cookie first", false, false, false,
     {"REQUEST_METHOD", "HEAD", "HTTP_COOKIE", "ga_session=@B;theme=dark"},
     "bob", NULL},
    {"cookie quoted, spaces around", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "x=1;  ga_session = \"@A\" ;y"},
     "alice", NULL},
    {"names that only look alike", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE",
      "xga_session=@B; ga_session_old=@B; GA_SESSION=@B; ga_session=@A"},
     "alice", NULL},
    {"the first of two", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=@A; ga_session=@B"},
     "alice", NULL},
    {"an empty cookie is none", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=; a=b"}, NULL,
     "sign in first"},
    {"a cookie of another name", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "session=@A; sid=@A"}, NULL,
     "sign in first"},
    {"sessionCookie: sid", false, true, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=@B; sid=@A"},
     "alice", NULL},
    {"cookie expired", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=@X"}, NULL,
     "expired"},
    {"cookie garbage", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=%7B%7D"}, NULL,
     "malformed"},
    /* cookie requests that may change things: the site's own Origin */
    {"cookie POST, same origin", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example:8080", "HTTP_HOST", "shop.example:8080"},
     "alice", NULL},
    {"cookie POST, same origin over HTTPS", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "https://shop.example", "HTTP_HOST", "shop.example", "HTTPS", "on"},
     "alice", NULL},
    {"cookie POST, Host spells the default port", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "https://shop.example", "HTTP_HOST", "shop.example:443", "HTTPS", "on"},
     "alice", NULL},
    /* Debian's fastcgi_params: HTTP_HOST is nginx's $host, without the
     * port, which SERVER_PORT has */
    {"cookie POST, Host without its port, SERVER_PORT", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://127.0.0.1:8080", "HTTP_HOST", "127.0.0.1", "SERVER_PORT",
      "8080"},
     "alice", NULL},
    {"cookie POST, port 80 is another origin than SERVER_PORT's", false,
     false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://127.0.0.1", "HTTP_HOST", "127.0.0.1", "SERVER_PORT", "8080"},
     NULL, "cross-site request refused"},
    {"cookie POST, SERVER_PORT the default", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example", "HTTP_HOST", "shop.example", "SERVER_PORT",
      "80"},
     "alice", NULL},
    {"cookie POST, host in another case", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example", "HTTP_HOST", "Shop.Example"},
     "alice", NULL},
    {"cookie POST, another origin", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "https://evil.example", "HTTP_HOST", "shop.example", "HTTPS", "on"},
     NULL, "cross-site request refused"},
    {"cookie POST, without Origin", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_HOST",
      "shop.example"},
     NULL, "cross-site request refused"},
    {"cookie POST, Origin null", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "null", "HTTP_HOST", "shop.example"},
     NULL, "cross-site request refused"},
    {"cookie POST, http origin on an https site", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example", "HTTP_HOST", "shop.example", "HTTPS", "on"},
     NULL, "cross-site request refused"},
    {"cookie POST, a longer host", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example.evil", "HTTP_HOST", "shop.example"},
     NULL, "cross-site request refused"},
    {"cookie POST, an origin with a path", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example/", "HTTP_HOST", "shop.example"},
     NULL, "cross-site request refused"},
    {"cookie POST, no Host", false, false, false,
     {"REQUEST_METHOD", "POST", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://shop.example"},
     NULL, "cross-site request refused"},
    {"cookie DELETE, another origin", false, false, false,
     {"REQUEST_METHOD", "DELETE", "HTTP_COOKIE", "ga_session=@A",
      "HTTP_ORIGIN", "http://evil.example", "HTTP_HOST", "shop.example"},
     NULL, "cross-site request refused"},
    {"cookie without a method", false, false, false,
     {"HTTP_COOKIE", "ga_session=@A", "HTTP_HOST", "shop.example"}, NULL,
     "cross-site request refused"},
    {"cookie GET, another origin: reads are fine", false, false, false,
     {"REQUEST_METHOD", "GET", "HTTP_COOKIE", "ga_session=@A", "HTTP_ORIGIN",
      "http://evil.example", "HTTP_HOST", "shop.example"},
     "alice", NULL},
    /* nothing at all */
    {"nothing", false, false, false, {"REQUEST_METHOD", "GET"}, NULL,
     "sign in first: this route needs a session token or a signed-in user"},
    {"nothing, POST", false, false, false, {"REQUEST_METHOD", "POST"}, NULL,
     "sign in first"},
};

START_TEST(identify)
{
    const struct identify_case *c = &identify_cases[_i];
    char values[8][2 * TOKEN_SIZE + 128], user[TOKEN_USER_SIZE] = "junk";
    const char *params[17] = {NULL};
    struct config cfg = {0};
    char out[64];
    struct unit_memio m = {params, "", 0, 0, 0, out, 0, sizeof(out)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    int rc;

    make_tokens();
    cfg.auth.remote_user_var = c->trust ? UNCONST("GA_REMOTE_USER") : NULL;
    cfg.auth.session_cookie = c->custom_cookie ? cookie_custom : cookie_default;
    for (size_t i = 0; i < ARRAY_SIZE(c->params) && c->params[i]; i += 2) {
        params[i] = c->params[i];
        params[i + 1] = expand(c->params[i + 1], values[i / 2],
                               sizeof(values[i / 2]));
    }
    rc = auth_identify(&cfg, secret, c->no_secret ? 0 : sizeof(secret), &io,
                       user, sizeof(user), &err);
    if (c->user != NULL) {
        ck_assert_msg(rc == 0, "%s: refused: %s", c->label, err.text);
        ck_assert_str_eq(user, c->user);
        ck_assert_int_eq(err.code, ST_OK);
    } else {
        ck_assert_msg(rc == -1, "%s: accepted as '%s'", c->label, user);
        ck_assert_int_eq(err.code, ST_UNAUTHORIZED);
        ck_assert_msg(strstr(err.text, c->why) != NULL, "%s: '%s' lacks '%s'",
                      c->label, err.text, c->why);
        ck_assert_str_eq(user, "");
        /* no token in the message */
        ck_assert(strstr(err.text, "v1.") == NULL);
    }
    ck_assert_uint_eq(m.out_len, 0); /* it writes no answer */
}
END_TEST

START_TEST(identify_small_buffer)
{
    const char *params[] = {"HTTP_AUTHORIZATION", NULL, NULL};
    char bearer[TOKEN_SIZE + 16], user[4], out[8];
    struct config cfg = {0};
    struct unit_memio m = {params, "", 0, 0, 0, out, 0, sizeof(out)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};

    make_tokens();
    cfg.auth.session_cookie = cookie_default;
    snprintf(bearer, sizeof(bearer), "Bearer %s", tok_a);
    params[1] = bearer;
    ck_assert_int_eq(auth_identify(&cfg, secret, sizeof(secret), &io, user,
                                   sizeof(user), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_INTERNAL);
}
END_TEST

/* Tokens far past the bound, in either place, are refused unread. */
START_TEST(identify_overlong)
{
    static char big[8192];
    const char *params[] = {"REQUEST_METHOD", "GET", "HTTP_AUTHORIZATION",
                            big, NULL};
    char user[TOKEN_USER_SIZE], out[8];
    struct config cfg = {0};
    struct unit_memio m = {params, "", 0, 0, 0, out, 0, sizeof(out)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};

    fill_secret();
    cfg.auth.session_cookie = cookie_default;
    memset(big, 'A', sizeof(big) - 1);
    memcpy(big, "Bearer v1.", 10);
    ck_assert_int_eq(auth_identify(&cfg, secret, sizeof(secret), &io, user,
                                   sizeof(user), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_UNAUTHORIZED);
    ck_assert_msg(strstr(err.text, "malformed") != NULL, "%s", err.text);
    status_clear(&err);
    params[2] = "HTTP_COOKIE";
    memcpy(big, "ga_session=", 11);
    ck_assert_int_eq(auth_identify(&cfg, secret, sizeof(secret), &io, user,
                                   sizeof(user), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_UNAUTHORIZED);
    ck_assert_msg(strstr(err.text, "malformed") != NULL, "%s", err.text);
}
END_TEST

/* --- the Set-Cookie value --------------------------------------------------- */

START_TEST(cookie_header)
{
    const char *plain[] = {"REQUEST_METHOD", "POST", NULL};
    const char *tls[] = {"HTTPS", "on", NULL};
    char out[512], small[40], ob[8];
    struct config cfg = {0};
    struct unit_memio m = {plain, "", 0, 0, 0, ob, 0, sizeof(ob)};
    struct httpio io = {.ops = &unit_memio_ops, .ctx = &m};
    struct status_error err = {0};
    char want[600];

    make_tokens();
    cfg.auth.session_cookie = cookie_default;
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, tok_a, 3600, out,
                                        sizeof(out), &err),
                     0);
    snprintf(want, sizeof(want),
             "ga_session=%s; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600",
             tok_a);
    ck_assert_str_eq(out, want);

    m.params = tls;
    cfg.auth.session_cookie = cookie_custom;
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, tok_b, 60, out, sizeof(out),
                                        &err),
                     0);
    snprintf(want, sizeof(want),
             "sid=%s; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure",
             tok_b);
    ck_assert_str_eq(out, want);

    /* signing out: an empty value that expires at once */
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, "", 0, out, sizeof(out),
                                        &err),
                     0);
    ck_assert_str_eq(out,
                     "sid=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");

    /* what is not a token never reaches the header */
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, "a;b", 60, out, sizeof(out),
                                        &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    ck_assert_str_eq(out, "");
    status_clear(&err);
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, "a\r\nSet-Cookie: x=y", 60,
                                        out, sizeof(out), &err),
                     -1);
    status_clear(&err);
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, tok_a, -1, out, sizeof(out),
                                        &err),
                     -1);
    ck_assert_int_eq(err.code, ST_BAD_REQUEST);
    status_clear(&err);
    ck_assert_int_eq(auth_cookie_header(&cfg, &io, tok_a, 60, small,
                                        sizeof(small), &err),
                     -1);
    ck_assert_int_eq(err.code, ST_INTERNAL);
    ck_assert_str_eq(small, "");
}
END_TEST

Suite *
auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *tc;

    tc = tcase_create("token");
    tcase_add_test(tc, known_vectors);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, tampering_is_refused);
    tcase_add_loop_test(tc, malformed_tokens, 0, (int)ARRAY_SIZE(malformed));
    tcase_add_test(tc, malformed_long_and_signed);
    tcase_add_loop_test(tc, user_names, 0, (int)ARRAY_SIZE(user_cases));
    tcase_add_test(tc, issue_and_verify_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("secret");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, secret_file_refusals);
    tcase_add_test(tc, secret_file_accepted);
    tcase_add_test(tc, secret_file_create);
    suite_add_tcase(s, tc);

    tc = tcase_create("config");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, config_auth_defaults);
    tcase_add_test(tc, config_auth_keys);
    tcase_add_loop_test(tc, config_auth_refusals, 0,
                        (int)ARRAY_SIZE(config_bad));
    tcase_add_test(tc, site_loads_the_secret);
    suite_add_tcase(s, tc);

    tc = tcase_create("identify");
    tcase_add_loop_test(tc, identify, 0, (int)ARRAY_SIZE(identify_cases));
    tcase_add_test(tc, identify_small_buffer);
    tcase_add_test(tc, identify_overlong);
    tcase_add_test(tc, cookie_header);
    suite_add_tcase(s, tc);
    return s;
}
