/*
 * post-count.c - `make soak`'s client: an exact number of POSTs.
 *
 *   post-count URL BODY_FILE COUNT [PARALLEL]
 *
 * POSTs BODY_FILE (Content-Type: application/json) to URL
 * (http://127.0.0.1:PORT/path) COUNT times, PARALLEL at a time (default
 * 4): a thread each, every request on a connection of its own
 * (Connection: close), its answer read to the end. wrk runs for a time,
 * not a count; the soak compares memory after equal numbers of requests.
 * Prints "ok N failed M" (ok: a 2xx status; failed: any other status, a
 * connection error, or 30 s without a byte) and exits 0 when nothing
 * failed, 1 otherwise, 2 on bad arguments.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static struct sockaddr_in addr;
static char *head, *body;
static size_t head_len, body_len;
static atomic_long left, ok, failed;

static int
send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One request: 1 for a 2xx answer read to its end, 0 otherwise. */
static int
one(void)
{
    char buf[16384], status[16] = "";
    size_t got = 0;
    struct timeval tv = {30, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0), good = 0;

    if (fd < 0)
        return 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
        send_all(fd, head, head_len) == 0 &&
        send_all(fd, body, body_len) == 0) {
        for (;;) {
            ssize_t r = read(fd, buf, sizeof(buf));
            if (r < 0)
                break; /* timed out or reset: a failure */
            if (got < sizeof(status) - 1) {
                size_t k = sizeof(status) - 1 - got;
                memcpy(status + got, buf, (size_t)r < k ? (size_t)r : k);
            }
            got += (size_t)r;
            if (r == 0) {
                good = strncmp(status, "HTTP/1.1 2", 10) == 0;
                break;
            }
        }
    }
    close(fd);
    return good;
}

static void *
run(void *arg)
{
    (void)arg;
    while (atomic_fetch_sub(&left, 1) > 0)
        atomic_fetch_add(one() ? &ok : &failed, 1);
    return NULL;
}

int
main(int argc, char **argv)
{
    char host[64], *path;
    int port, parallel = argc > 4 ? atoi(argv[4]) : 4;
    long count = argc > 3 ? atol(argv[3]) : 0;
    FILE *f;

    if (argc < 4 || count <= 0 || parallel <= 0 || parallel > 1024 ||
        sscanf(argv[1], "http://%63[0-9.]:%d", host, &port) != 2 ||
        (path = strchr(argv[1] + 7, '/')) == NULL) {
        fprintf(stderr, "usage: post-count http://IP:PORT/PATH BODY_FILE "
                        "COUNT [PARALLEL]\n");
        return 2;
    }
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1 ||
        (f = fopen(argv[2], "rb")) == NULL) {
        fprintf(stderr, "post-count: bad address or unreadable %s\n", argv[2]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    body_len = (size_t)ftell(f);
    rewind(f);
    body = malloc(body_len + 1);
    if (body == NULL || fread(body, 1, body_len, f) != body_len) {
        fprintf(stderr, "post-count: cannot read %s\n", argv[2]);
        return 2;
    }
    fclose(f);
    if (asprintf(&head,
                 "POST %s HTTP/1.1\r\nHost: %s:%d\r\n"
                 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 path, host, port, body_len) < 0)
        return 2;
    head_len = strlen(head);
    atomic_store(&left, count);

    pthread_t t[1024];
    for (int i = 0; i < parallel; i++)
        if (pthread_create(&t[i], NULL, run, NULL) != 0) {
            fprintf(stderr, "post-count: cannot start a thread\n");
            return 2;
        }
    for (int i = 0; i < parallel; i++)
        pthread_join(t[i], NULL);
    printf("ok %ld failed %ld\n", atomic_load(&ok), atomic_load(&failed));
    return atomic_load(&failed) == 0 ? 0 : 1;
}
