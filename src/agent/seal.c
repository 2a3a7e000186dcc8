/*
 * seal.c - signatures of history turns and approval tickets (seal.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "agent/seal.h"
#include "core/canon.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/token.h"
#include "registry/plugin.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
is_model(const json_t *turn)
{
    const char *role = json_string_value(json_object_get(turn, "role"));
    return role != NULL && strcmp(role, "model") == 0;
}

/* Is `part` the answer of a server action (the server wrote it)? */
static bool
server_answer(const json_t *part)
{
    const char *name = json_string_value(
        json_object_get(json_object_get(part, "functionResponse"), "name"));
    return name != NULL && plugin_is_fn_name(name);
}

bool
seal_needed(const json_t *turn)
{
    size_t i;
    json_t *part;

    if (is_model(turn))
        return true;
    json_array_foreach(json_object_get(turn, "parts"), i, part) {
        if (server_answer(part))
            return true;
    }
    return false;
}

/*
 * The signature of history[index] (turns[index]), after the signed turn
 * whose signature is `prev` and the unsigned turns turns[gap..index) that
 * came between: those are the visitor's words and the page's results,
 * which nobody signs but which cannot change once the model answered
 * them, nor be moved to another conversation.
 */
static int
turn_mac(struct token_macer *m, const json_t *turns, size_t gap, size_t index,
         const char *prev, char out[TOKEN_MAC_SIZE], struct status_error *err)
{
    const json_t *turn = json_array_get(turns, index);
    const json_t *parts = json_object_get(turn, "parts");
    json_t *mine = NULL, *between = json_array(), *part;
    struct sbuf sb;
    size_t i;
    int rc = -1;

    sbuf_init(&sb, SIZE_MAX / 2);
    if (between == NULL)
        goto nomem;
    for (i = gap; i < index; i++)
        if (json_array_append(between, json_array_get(turns, i)) != 0)
            goto nomem;
    if (!is_model(turn)) {
        /* only the server's answers: the page's may sit between them */
        if ((mine = json_array()) == NULL)
            goto nomem;
        json_array_foreach(parts, i, part) {
            if (server_answer(part) && json_array_append(mine, part) != 0)
                goto nomem;
        }
        parts = mine;
    }
    if (sbuf_addf(&sb, "ga-turn/1\n%zu\n%s\n", index, prev) != 0 ||
        canon_write(between, &sb) != 0 ||
        sbuf_addf(&sb, "\n%s\n", is_model(turn) ? "model" : "user") != 0 ||
        canon_write(parts, &sb) != 0)
        goto nomem;
    rc = token_macer_mac(m, sb.buf, sb.len, out, err);
    goto out;
nomem:
    status_oom(err);
out:
    sbuf_release(&sb);
    json_decref(mine);
    json_decref(between);
    return rc;
}

int
seal_verify(const struct seal_key *k, const json_t *history,
            const json_t *signatures, struct status_error *err)
{
    char prev[TOKEN_MAC_SIZE] = "-", mac[TOKEN_MAC_SIZE];
    struct token_macer *m = NULL;
    size_t i, gap = 0;
    json_t *turn;
    int rc = 0;

    json_array_foreach(history, i, turn) {
        if (!seal_needed(turn))
            continue;
        if ((m == NULL &&
             (m = token_macer_new(k->secret, k->len, err)) == NULL) ||
            turn_mac(m, history, gap, i, prev, mac, err) != 0) {
            rc = -1;
            break;
        }
        if (!token_mac_equal(
                mac, json_string_value(json_array_get(signatures, i)))) {
            rc = status_set(
                err, ST_HISTORY_TAMPERED,
                "history[%zu]: this %s, or the conversation before it, is "
                "not as the server wrote it (changed, moved, or written "
                "elsewhere), so the conversation cannot go on",
                i, is_model(turn) ? "model turn" : "answer of a server action");
            break;
        }
        memcpy(prev, mac, sizeof(prev));
        gap = i + 1;
    }
    token_macer_free(m);
    return rc;
}

json_t *
seal_sign(const struct seal_key *k, const json_t *turns, const json_t *known,
          size_t reuse, struct status_error *err)
{
    char prev[TOKEN_MAC_SIZE] = "-", mac[TOKEN_MAC_SIZE];
    struct token_macer *m = NULL;
    json_t *out = json_array(), *turn, *sig;
    size_t i, gap = 0;

    if (out == NULL) {
        status_oom(err);
        return NULL;
    }
    json_array_foreach(turns, i, turn) {
        const char *given = json_string_value(json_array_get(known, i));

        if (!seal_needed(turn)) {
            if (json_array_append_new(out, json_null()) != 0)
                goto nomem;
            continue;
        }
        if (i < reuse && given != NULL && strlen(given) == TOKEN_MAC_LEN)
            memcpy(mac, given, sizeof(mac));
        else if ((m == NULL &&
                  (m = token_macer_new(k->secret, k->len, err)) == NULL) ||
                 turn_mac(m, turns, gap, i, prev, mac, err) != 0)
            goto fail;
        if ((sig = json_string(mac)) == NULL ||
            json_array_append_new(out, sig) != 0)
            goto nomem;
        memcpy(prev, mac, sizeof(prev));
        gap = i + 1;
    }
    token_macer_free(m);
    return out;
nomem:
    status_oom(err);
fail:
    token_macer_free(m);
    json_decref(out);
    return NULL;
}

/* --- tickets ------------------------------------------------------------ */

/* The MAC of the ticket for `c` expiring at expires_ms. */
static int
ticket_mac(const struct seal_key *k, const json_t *history,
           const struct seal_call *c, long long expires_ms,
           char out[TOKEN_MAC_SIZE], struct status_error *err)
{
    char conv[TOKEN_MAC_SIZE];
    json_t *upto = json_array(), *call = NULL;
    struct sbuf sb;
    int rc = -1;

    sbuf_init(&sb, SIZE_MAX / 2);
    if (upto == NULL)
        goto nomem;
    for (size_t i = 0; i <= c->turn && i < json_array_size(history); i++)
        if (json_array_append(upto, json_array_get(history, i)) != 0)
            goto nomem;
    if (sbuf_adds(&sb, "ga-conv/1\n") != 0 || canon_write(upto, &sb) != 0)
        goto nomem;
    if (token_mac(k->secret, k->len, sb.buf, sb.len, conv, err) != 0)
        goto out;
    call = json_pack("{s:s, s:O, s:s, s:I, s:I}", "action", c->action, "args",
                     UNCONST(c->args), "id", c->id, "turn", (json_int_t)c->turn,
                     "part", (json_int_t)c->part);
    sbuf_release(&sb);
    if (call == NULL ||
        sbuf_addf(&sb, "ga-ticket/1\n%lld\n%s\n", expires_ms, conv) != 0 ||
        canon_write(call, &sb) != 0)
        goto nomem;
    rc = token_mac(k->secret, k->len, sb.buf, sb.len, out, err);
    goto out;
nomem:
    status_oom(err);
out:
    sbuf_release(&sb);
    json_decref(upto);
    json_decref(call);
    return rc;
}

int
seal_ticket(const struct seal_key *k, const json_t *history,
            const struct seal_call *c, long long expires_ms,
            char out[SEAL_TICKET_SIZE], struct status_error *err)
{
    char mac[TOKEN_MAC_SIZE];

    if (ticket_mac(k, history, c, expires_ms, mac, err) != 0)
        return -1;
    if (snprintf(out, SEAL_TICKET_SIZE, "t1.%lld.%s", expires_ms, mac) >=
        SEAL_TICKET_SIZE)
        return status_set(err, ST_INTERNAL, "ticket too long");
    return 0;
}

static int
invalid(struct status_error *err, const char *why)
{
    return status_set(err, ST_APPROVAL_INVALID, "the approval %s", why);
}

int
seal_ticket_check(const struct seal_key *k, const json_t *history,
                  const struct seal_call *c, const char *ticket,
                  long long now_ms, char id[TOKEN_MAC_SIZE],
                  long long *expires_ms, struct status_error *err)
{
    char mac[TOKEN_MAC_SIZE];
    const char *p, *dot;
    long long exp = 0;

    id[0] = '\0';
    if (ticket == NULL ||
        strnlen(ticket, SEAL_TICKET_SIZE) >= SEAL_TICKET_SIZE ||
        strncmp(ticket, "t1.", 3) != 0)
        return invalid(err, "does not match this conversation");
    /* the expiry: digits, no sign, no leading zero, then the MAC */
    p = ticket + 3;
    dot = strchr(p, '.');
    if (dot == NULL || dot == p || (*p == '0' && dot - p > 1) || dot - p > 18)
        return invalid(err, "does not match this conversation");
    for (; p < dot; p++) {
        if (*p < '0' || *p > '9')
            return invalid(err, "does not match this conversation");
        exp = exp * 10 + (*p - '0');
    }
    if (ticket_mac(k, history, c, exp, mac, err) != 0)
        return -1;
    if (!token_mac_equal(mac, dot + 1))
        return invalid(err, "does not match this conversation");
    if (now_ms > exp)
        return invalid(err, "has expired");
    memcpy(id, mac, TOKEN_MAC_SIZE);
    *expires_ms = exp;
    return 0;
}
