/*
 * fastmock.c - a zero-latency stand-in for Gemini, for `make bench` only.
 *
 * Answers every POST with the same small generateContent text reply, at
 * once, on keep-alive connections (a thread per connection: the responder
 * keeps one connection per worker). It validates nothing; the real mock
 * (tests/mock) does that. Here the point is that the upstream costs ~0, so
 * the benchmark measures the responder and nginx.
 *
 *   fastmock PORTFILE      listens on 127.0.0.1:0, writes the port
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static const char reply[] =
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":"
    "\"Done: the USB-C Hub is gone from your cart.\"}]},\"finishReason\":"
    "\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5400,"
    "\"candidatesTokenCount\":12,\"totalTokenCount\":5412,"
    "\"cachedContentTokenCount\":4096},\"modelVersion\":"
    "\"gemini-3.8-flash\",\"responseId\":\"bench\"}";

/* Largest request kept; the bench's requests are about 60 KB. */
#define REQ_MAX (4u << 20)

static void *
serve(void *arg)
{
    int fd = (int)(long)arg;
    char *req = malloc(REQ_MAX);
    size_t have = 0;

    if (req == NULL)
        goto out;
    for (;;) {
        char *end;
        ssize_t n = read(fd, req + have, REQ_MAX - have - 1);
        if (n <= 0)
            break;
        have += (size_t)n;
        req[have] = '\0';
        /* one whole request: headers, then Content-Length bytes */
        while ((end = strstr(req, "\r\n\r\n")) != NULL) {
            char *cl = strcasestr(req, "\r\ncontent-length:");
            size_t body = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
            size_t total = (size_t)(end + 4 - req) + body;
            char out[1024];
            if (have < total)
                break;
            /* one write: two would meet Nagle and delayed ACKs (40 ms) */
            int n2 = snprintf(out, sizeof(out),
                              "HTTP/1.1 200 OK\r\nContent-Type: "
                              "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                              sizeof(reply) - 1, reply);
            if (write(fd, out, (size_t)n2) != n2)
                goto out;
            memmove(req, req + total, have - total);
            have -= total;
            req[have] = '\0';
        }
        if (have >= REQ_MAX - 1)
            break;
    }
out:
    free(req);
    close(fd);
    return NULL;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: fastmock PORTFILE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("fastmock");
        return 1;
    }
    f = fopen(argv[1], "w");
    if (f == NULL)
        return 1;
    fprintf(f, "%d\n", ntohs(sa.sin_port));
    fclose(f);
    for (;;) {
        pthread_t t;
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            continue;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (pthread_create(&t, NULL, serve, (void *)(long)c) == 0)
            pthread_detach(t);
        else
            close(c);
    }
}
