/*
 * fastmock.c - a stand-in for Gemini, for `make bench` only.
 *
 * Answers every POST with the same small generateContent text reply, on
 * keep-alive connections, DELAY_MS after the request has arrived (0: at
 * once). A thread per connection, so a delayed answer holds up nothing
 * but its own connection: the responder keeps one connection per request
 * thread, and the concurrency bench holds 1000 and more at a time. Each
 * thread has a small stack and a 16 KB buffer; the request body is read
 * and dropped, never kept, so 1000 connections cost a few MB. It
 * validates nothing; the real mock (tests/mock) does that. Here the point
 * is that the upstream costs ~0, so the benchmark measures the responder
 * and nginx.
 *
 *   fastmock PORTFILE [DELAY_MS]   listens on 127.0.0.1:0, writes the port
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char reply[] =
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":"
    "\"Done: the USB-C Hub is gone from your cart.\"}]},\"finishReason\":"
    "\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5400,"
    "\"candidatesTokenCount\":12,\"totalTokenCount\":5412,"
    "\"cachedContentTokenCount\":4096},\"modelVersion\":"
    "\"gemini-3.8-flash\",\"responseId\":\"bench\"}";

/* Largest request head kept (the body is read and dropped). */
#define HEAD_MAX (16u << 10)

static long delay_ms;

static void
delay(void)
{
    struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};

    while (delay_ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *
serve(void *arg)
{
    int fd = (int)(long)arg;
    char buf[HEAD_MAX + 1], out[1024];
    size_t have = 0, skip = 0; /* bytes in buf; body bytes still to drop */
    int n2 = snprintf(out, sizeof(out),
                      "HTTP/1.1 200 OK\r\nContent-Type: "
                      "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                      sizeof(reply) - 1, reply);

    for (;;) {
        char *end;
        ssize_t n = read(fd, buf + have, HEAD_MAX - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        for (;;) {
            if (skip > 0) { /* the rest of a body: drop what we have */
                size_t k = skip < have ? skip : have;
                memmove(buf, buf + k, have - k);
                have -= k;
                skip -= k;
                if (skip > 0)
                    break; /* more body to come */
                /* whole request in: answer it */
                delay();
                /* one write: two would meet Nagle and delayed ACKs (40 ms) */
                if (write(fd, out, (size_t)n2) != n2)
                    goto out;
            }
            buf[have] = '\0';
            end = strstr(buf, "\r\n\r\n");
            if (end == NULL) {
                if (have >= HEAD_MAX)
                    goto out; /* a head this long is not ours */
                break;
            }
            char *cl = strcasestr(buf, "\r\ncontent-length:");
            size_t head = (size_t)(end + 4 - buf);
            skip = (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0) + head;
            if (skip == head) { /* no body: answer at once */
                memmove(buf, buf + head, have - head);
                have -= head;
                skip = 0;
                delay();
                if (write(fd, out, (size_t)n2) != n2)
                    goto out;
                continue;
            }
            /* drop the head with the body, by the same path */
        }
    }
out:
    close(fd);
    return NULL;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    pthread_attr_t attr;
    FILE *f;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fastmock PORTFILE [DELAY_MS]\n");
        return 2;
    }
    delay_ms = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    signal(SIGPIPE, SIG_IGN);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* A burst of thousands of connects must not overflow the queue (the
     * kernel caps the backlog at net.core.somaxconn). */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, 8192) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("fastmock");
        return 1;
    }
    f = fopen(argv[1], "w");
    if (f == NULL)
        return 1;
    fprintf(f, "%d\n", ntohs(sa.sin_port));
    fclose(f);
    /* 64 KB stacks: 1000 threads reserve 64 MB and touch a few pages each */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64u << 10);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (;;) {
        pthread_t t;
        int c = accept(fd, NULL, NULL);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                perror("fastmock: accept");
                usleep(10000);
            }
            continue;
        }
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (pthread_create(&t, &attr, serve, (void *)(long)c) != 0) {
            perror("fastmock: pthread_create");
            close(c);
        }
    }
}
