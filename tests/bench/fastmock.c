/*
 * fastmock.c - a stand-in for Gemini, for `make bench` only.
 *
 * Answers every POST with the same small generateContent text reply, on
 * keep-alive connections, DELAY_MS after the request has arrived (0: at
 * once). A POST whose path holds ":streamGenerateContent" gets a stream
 * instead (text/event-stream, chunked, headers at once): the first SSE
 * event STREAM_FIRST_MS after the request arrived, its text
 * "t=<CLOCK_MONOTONIC ns read just before its write()> ", then at once a
 * second with the rest of the text, finishReason STOP and usageMetadata
 * (the unary reply's). `make bench` reads the t= back from the delta line
 * the responder streams on, for the latency of one chunk from here to the
 * client. A thread per connection, so a delayed answer holds up nothing
 * but its own connection: the responder keeps one connection per request
 * thread, and the concurrency bench holds 1000 and more at a time. Each
 * thread has a small stack and a 16 KB buffer; the request body is read
 * and dropped, never kept, so 1000 connections cost a few MB. It
 * validates nothing; the real mock (tests/mock) does that. Here the point
 * is that the upstream costs ~0, so the benchmark measures the responder
 * and nginx.
 *
 *   fastmock PORTFILE [DELAY_MS [STREAM_FIRST_MS]]
 *       listens on 127.0.0.1:0, writes the port; STREAM_FIRST_MS defaults to 50
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

/* The stream's events: the second ends it (finishReason, usage). */
#define EVENT_USAGE                                                       \
    "\"usageMetadata\":{\"promptTokenCount\":5400,"                        \
    "\"candidatesTokenCount\":12,\"totalTokenCount\":5412,"                \
    "\"cachedContentTokenCount\":4096},\"modelVersion\":"                  \
    "\"gemini-3.8-flash\",\"responseId\":\"bench\"}"
static const char event1_fmt[] =
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{"
    "\"text\":\"t=%lld \"}]},\"index\":0}]," EVENT_USAGE "\r\n\r\n";
static const char event2[] =
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{"
    "\"text\":\"Done: the USB-C Hub is gone from your cart.\"}]},"
    "\"finishReason\":\"STOP\",\"index\":0}]," EVENT_USAGE "\r\n\r\n";
static const char stream_head[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

/* Largest request head kept (the body is read and dropped). */
#define HEAD_MAX (16u << 10)

static long delay_ms, first_ms = 50;

static void
delay(void)
{
    struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};

    while (delay_ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int
write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The stream answer to a request that arrived at ARRIVED (CLOCK_MONOTONIC). */
static int
stream_reply(int fd, struct timespec arrived)
{
    char out[2048], ev[1024];
    size_t n = 0;
    struct timespec at = arrived, now;
    int k;

    if (first_ms > 0) { /* headers at once, the first event later */
        if (write_all(fd, stream_head, sizeof(stream_head) - 1) != 0)
            return -1;
        at.tv_sec += first_ms / 1000;
        at.tv_nsec += (first_ms % 1000) * 1000000L;
        if (at.tv_nsec >= 1000000000L) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000L;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
            ;
    } else {
        memcpy(out, stream_head, sizeof(stream_head) - 1);
        n = sizeof(stream_head) - 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    k = snprintf(ev, sizeof(ev), event1_fmt,
                 (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    n += (size_t)snprintf(out + n, sizeof(out) - n, "%x\r\n%s\r\n", k, ev);
    if (write_all(fd, out, n) != 0)
        return -1;
    n = (size_t)snprintf(out, sizeof(out), "%zx\r\n%s\r\n0\r\n\r\n",
                         sizeof(event2) - 1, event2);
    return write_all(fd, out, n);
}

static void *
serve(void *arg)
{
    int fd = (int)(long)arg;
    char buf[HEAD_MAX + 1], out[1024];
    size_t have = 0, skip = 0; /* bytes in buf; body bytes still to drop */
    int stream = 0;            /* the request being read wants a stream */
    struct timespec arrived = {0, 0};
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
                if (stream) {
                    if (stream_reply(fd, arrived) != 0)
                        goto out;
                    continue;
                }
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
            char *eol = strstr(buf, "\r\n");
            size_t head = (size_t)(end + 4 - buf);
            char *sg = strstr(buf, ":streamGenerateContent");
            stream = sg != NULL && sg < eol; /* in the request line */
            clock_gettime(CLOCK_MONOTONIC, &arrived);
            skip = (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0) + head;
            if (skip == head) { /* no body: answer at once */
                memmove(buf, buf + head, have - head);
                have -= head;
                skip = 0;
                if (stream ? stream_reply(fd, arrived) != 0
                           : (delay(), write(fd, out, (size_t)n2) != n2))
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

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: fastmock PORTFILE [DELAY_MS [STREAM_FIRST_MS]]\n");
        return 2;
    }
    delay_ms = argc >= 3 ? strtol(argv[2], NULL, 10) : 0;
    if (argc == 4)
        first_ms = strtol(argv[3], NULL, 10);
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
