/*
 * token.h - session tokens: who a request is, signed by the site.
 *
 * A session token says "this is user U until time T", signed with the
 * site's secret, so any worker (or any host sharing the secret) can check
 * it without a session table. The format is plain so that a site's own
 * login code, in any language, can mint one:
 *
 *     v1.<user>.<expiry>.<signature>
 *
 *   <user>       the user name, base64url without padding (RFC 4648 §5);
 *                the name is 1..BOUND_USER_NAME (128) bytes of UTF-8 with
 *                no control characters
 *   <expiry>     Unix time in seconds, decimal, no sign, no leading zero;
 *                the token is accepted while now <= expiry
 *   <signature>  base64url without padding of
 *                HMAC-SHA256(secret, "v1.<user>.<expiry>"): the key is
 *                every byte of the secret file, the message the exact
 *                bytes before the last dot
 *
 * In Python: b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=");
 * m = b"v1." + b(user.encode()) + b"." + str(expiry).encode();
 * token = m + b"." + b(hmac.new(secret, m, "sha256").digest()).
 *
 * Verifying is strict (one spelling per token: no padding, no stray
 * bits, no spaces) and compares the signature in constant time. Nothing
 * here logs; a token or a secret never enters an error message.
 *
 * The secret file holds at least BOUND_SECRET_MIN random bytes and is its
 * owner's alone (token_secret_load refuses it otherwise); `gemini-agent
 * setup` writes one with token_secret_create.
 *
 * Not here: where a request's token comes from (http/auth.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TOKEN_H
#define APP_TOKEN_H

#include "core/common.h"
#include "core/bounds.h"

struct status_error;

/* Room for a token and its NUL, and for a user name and its NUL. */
#define TOKEN_SIZE      (BOUND_TOKEN_LEN + 1)
#define TOKEN_USER_SIZE (BOUND_USER_NAME + 1)

/*
 * Is user[0..len) a valid user name: 1..BOUND_USER_NAME bytes of
 * well-formed UTF-8 without control characters (C0, DEL, C1)? The same
 * rule holds for names from tokens and from the web server (REMOTE_USER).
 */
bool token_user_valid(const char *user, size_t len);

/*
 * Mint a token for `user` valid until `expiry` (Unix seconds, > 0) with
 * the secret[0..n) (n >= BOUND_SECRET_MIN) into out[0..cap) (TOKEN_SIZE
 * is always enough). Returns 0, or -1 with ST_BAD_REQUEST (the name or
 * the expiry is not valid), ST_CONFIG (the secret is too short) or
 * ST_INTERNAL (`out` too small, or the HMAC failed).
 */
int token_issue(const unsigned char *secret, size_t n, const char *user,
                long long expiry, char *out, size_t cap,
                struct status_error *err) ATTR_WUR;

/*
 * Check `token` at time `now` (Unix seconds) against secret[0..n). Returns
 * 0 with the user name in user[0..cap) (TOKEN_USER_SIZE is always
 * enough), or -1 with ST_UNAUTHORIZED and one of the reasons "malformed",
 * "bad signature" or "expired" in the message (in that order of checks:
 * the expiry of a forged token is never looked at). ST_CONFIG when the
 * secret is too short, ST_INTERNAL when `user` is too small. `user` is ""
 * after a failure.
 */
int token_verify(const unsigned char *secret, size_t n, const char *token,
                 long long now, char *user, size_t cap,
                 struct status_error *err) ATTR_WUR;

/*
 * The site's other signatures (history turns, approval tickets): the
 * base64url of the first TOKEN_MAC_BYTES of HMAC-SHA256(secret, msg).
 * Callers start `msg` with a label of their own ("ga-turn/1\n", ...) so
 * that no signature is valid for another kind of thing, a session token
 * ("v1.") included. 128 bits: a forger must guess, and every guess costs
 * a request.
 */
#define TOKEN_MAC_BYTES 16
#define TOKEN_MAC_LEN   22 /* base64url of TOKEN_MAC_BYTES, no padding */
#define TOKEN_MAC_SIZE  (TOKEN_MAC_LEN + 1)

/* Write the MAC of msg[0..len) into out (NUL-terminated). 0, or -1 with
 * ST_CONFIG (secret too short) or ST_INTERNAL. */
int token_mac(const unsigned char *secret, size_t n, const void *msg,
              size_t len, char out[TOKEN_MAC_SIZE],
              struct status_error *err) ATTR_WUR;

/*
 * The same MAC for many messages under one secret: the key is set up once
 * (OpenSSL's HMAC setup costs more than hashing a turn), each message then
 * costs its hashing. For one caller at a time; free it when done.
 */
struct token_macer;

struct token_macer *token_macer_new(const unsigned char *secret, size_t n,
                                    struct status_error *err);
int token_macer_mac(struct token_macer *m, const void *msg, size_t len,
                    char out[TOKEN_MAC_SIZE],
                    struct status_error *err) ATTR_WUR;
void token_macer_free(struct token_macer *m);

/* Is `given` (any string, maybe not a MAC at all) the MAC `want`? Takes
 * the same time whatever the answer. */
bool token_mac_equal(const char *want, const char *given);

/*
 * Read the secret file at `path` into buf[0..cap) and its length into *n.
 * Refuses, with ST_CONFIG and a message naming the path, a file that is
 * missing, not a regular file, shorter than BOUND_SECRET_MIN bytes,
 * longer than `cap` (or BOUND_SECRET_MAX), or that group or others may
 * read, write or execute (st_mode & 077). `buf` is wiped on failure.
 */
int token_secret_load(const char *path, unsigned char *buf, size_t cap,
                      size_t *n, struct status_error *err) ATTR_WUR;

/*
 * Create the secret file at `path`: BOUND_SECRET_MIN bytes from
 * getrandom(), written to a temporary file in the same folder (mode 0600),
 * synced, then linked into place, so the file appears whole or not at all.
 * Never replaces an existing file: that is ST_CONFIG "already exists"
 * (tokens signed with it would all stop working). 0, or -1 with ST_CONFIG.
 */
int token_secret_create(const char *path, struct status_error *err) ATTR_WUR;

#endif /* APP_TOKEN_H */
