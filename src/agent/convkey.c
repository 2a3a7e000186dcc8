/*
 * convkey.c - mint and check widget conversation keys (see convkey.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/convkey.h"
#include "agent/seal.h"
#include "core/arena.h"
#include "core/status.h"
#include "core/token.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define ID_BYTES 16
#define ID_HEX   (2 * ID_BYTES)
#define PREFIX   "c1."

/* The MAC of id[0..ID_HEX) under the site secret. */
static int
id_mac(const struct seal_key *k, const char *id, char mac[TOKEN_MAC_SIZE],
       struct status_error *err)
{
    char msg[sizeof("ga-conv-key/1\n") + ID_HEX];
    int n = snprintf(msg, sizeof(msg), "ga-conv-key/1\n%.*s", ID_HEX, id);

    return token_mac(k->secret, k->len, msg, (size_t)n, mac, err);
}

static bool
is_hex_id(const char *s)
{
    for (size_t i = 0; i < ID_HEX; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* A new id: 16 bytes of getrandom(), lowercase hex. */
static int
new_id(char id[ID_HEX + 1], struct status_error *err)
{
    unsigned char raw[ID_BYTES];
    size_t got = 0;

    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0)
            return status_set(err, ST_INTERNAL, "no randomness for a key");
        got += (size_t)n;
    }
    for (size_t i = 0; i < ID_BYTES; i++)
        snprintf(id + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int
convkey_resolve(const struct seal_key *k, const char *given, struct arena *a,
                const char **token, const char **key, struct status_error *err)
{
    char id[ID_HEX + 1], mac[TOKEN_MAC_SIZE];
    bool signed_ = k != NULL && k->len > 0;

    *token = *key = NULL;
    if (given == NULL) {
        if (new_id(id, err) != 0 || (signed_ && id_mac(k, id, mac, err) != 0))
            return -1;
        *token = signed_ ? arena_printf(a, PREFIX "%s.%s", id, mac)
                         : arena_printf(a, PREFIX "%s", id);
    } else {
        size_t len = strlen(given), plen = sizeof(PREFIX) - 1;
        bool ok = len >= plen + ID_HEX && memcmp(given, PREFIX, plen) == 0 &&
                  is_hex_id(given + plen);
        if (ok) {
            memcpy(id, given + plen, ID_HEX);
            id[ID_HEX] = '\0';
        }
        if (ok && signed_) {
            const char *m = given + plen + ID_HEX;
            if (id_mac(k, id, mac, err) != 0)
                return -1;
            ok = m[0] == '.' && token_mac_equal(mac, m + 1);
        } else if (ok) {
            ok = len == plen + ID_HEX;
        }
        if (!ok)
            return status_set(err, ST_BAD_REQUEST,
                              "conversation: not a key this server gave "
                              "(start a new conversation)");
        *token = arena_strdup(a, given);
    }
    *key = arena_printf(a, "chat:%s", id);
    if (*token == NULL || *key == NULL)
        return status_set(err, ST_NO_MEMORY, "out of memory");
    return 0;
}
