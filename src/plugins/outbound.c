/*
 * outbound.c - where the server's own fetches may go (outbound.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/outbound.h"
#include "core/logmsg.h"

#include <curl/curl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int
outbound_from_config(const json_t *config, struct outbound *p, char *err,
                     size_t errsize)
{
    const json_t *o = json_object_get(config, "outbound");
    const json_t *allow = json_object_get(o, "allow");
    size_t i;
    const json_t *v;

    memset(p, 0, sizeof(*p));
    if (o == NULL)
        return 0;
    if (!json_is_array(allow) || json_array_size(allow) > BOUND_ADDRESS_LIST) {
        snprintf(err, errsize,
                 "outbound must be {\"allow\": [at most %d addresses]}",
                 BOUND_ADDRESS_LIST);
        return -1;
    }
    json_array_foreach(UNCONST(allow), i, v) {
        const char *s = json_string_value(v);
        if (s == NULL || !netaddr_parse(s, strlen(s), &p->allow[i])) {
            snprintf(err, errsize,
                     "outbound.allow entries are IP addresses or networks, "
                     "not %.64s",
                     s ? s : "a non-string");
            memset(p, 0, sizeof(*p));
            return -1;
        }
    }
    p->nallow = json_array_size(allow);
    return 0;
}

const char *
outbound_refuses(const struct outbound *p, const struct netaddr *a)
{
    const char *kind = netaddr_reserved(a);

    if (kind == NULL || (p != NULL && netaddr_in(p->allow, p->nallow, a)))
        return NULL;
    return kind;
}

/* The address of a socket curl is about to open, as a netaddr; false for
 * a family other than IPv4 and IPv6. */
static bool
address_of(const struct curl_sockaddr *sa, struct netaddr *out)
{
    const unsigned char *raw = (const unsigned char *)&sa->addr;

    memset(out, 0, sizeof(*out));
    out->bits = 128;
    if (sa->family == AF_INET && sa->addrlen >= sizeof(struct sockaddr_in)) {
        out->b[10] = out->b[11] = 0xff; /* the mapped form, as netaddr's */
        memcpy(out->b + 12, raw + offsetof(struct sockaddr_in, sin_addr), 4);
        return true;
    }
    if (sa->family == AF_INET6 && sa->addrlen >= sizeof(struct sockaddr_in6)) {
        memcpy(out->b, raw + offsetof(struct sockaddr_in6, sin6_addr), 16);
        return true;
    }
    return false;
}

/* CURLOPT_OPENSOCKETFUNCTION: a socket only for an address the policy
 * allows; CURL_SOCKET_BAD makes curl try the name's next address, or
 * fail the transfer with CURLE_COULDNT_CONNECT. */
static curl_socket_t
open_checked(void *arg, curlsocktype purpose, struct curl_sockaddr *sa)
{
    struct outbound_guard *g = arg;
    struct netaddr a;
    const char *kind = "not an IP address";

    if (purpose == CURLSOCKTYPE_IPCXN && address_of(sa, &a)) {
        kind = outbound_refuses(g->policy, &a);
        if (kind == NULL)
            /* close-on-exec: a child a plugin starts meanwhile (an MCP
             * server) must not inherit the connection */
            return socket(sa->family, sa->socktype | SOCK_CLOEXEC,
                          sa->protocol);
        if (g->refused == 0)
            netaddr_format(&a, g->addr);
    } else if (g->refused == 0) {
        snprintf(g->addr, sizeof(g->addr), "?");
    }
    if (g->refused++ == 0)
        g->kind = kind;
    return CURL_SOCKET_BAD;
}

int
outbound_guard(void *curl, struct outbound_guard *g,
               const struct outbound *policy)
{
    *g = (struct outbound_guard){.policy = policy};
    if (curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked) !=
            CURLE_OK ||
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, g) != CURLE_OK ||
        /* "": no proxy, whatever the environment says */
        curl_easy_setopt(curl, CURLOPT_PROXY, "") != CURLE_OK)
        return -1;
    return 0;
}

bool
outbound_refusal(void *curl, const struct outbound_guard *g, char *msg,
                 size_t msgsize)
{
    char *url = NULL, *host = NULL;
    CURLU *u;

    if (g->refused == 0)
        return false;
    u = curl_url();
    if (u != NULL &&
        curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK &&
        url != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK)
        (void)curl_url_get(u, CURLUPART_HOST, &host, 0);
    snprintf(msg, msgsize, "the address of %s is not allowed",
             host ? host : "the host");
    log_warn("outbound: a plugin's fetch from %s was refused: its address "
             "%s is %s; list it in agent.yaml's outbound.allow to allow it",
             host ? host : "a host", g->addr, g->kind);
    curl_free(host);
    curl_url_cleanup(u);
    return true;
}
