/*
 * floor.c - the floor of our deployment model, for `make bench`: a
 * FastCGI responder that does nothing but what every responder must -
 * read the request, POST its body to the upstream over one kept-alive
 * libcurl handle, and write the answer back. No JSON is parsed or
 * written. gemini-agent's CPU per request is reported as a multiple of
 * this one's.
 *
 *   floor SOCKET UPSTREAM_URL WORKERS PIDFILE
 *
 * It forks WORKERS processes on SOCKET (as gemini-agent serve does) and
 * writes "workers: PID ..." to line 2 of PIDFILE, which the bench reads to
 * measure their CPU time and to stop them.
 * Bench tooling, not part of the program.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <fcgiapp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct buf {
    char *p;
    size_t len, cap;
};

static int
buf_add(struct buf *b, const char *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static size_t
on_data(char *ptr, size_t size, size_t n, void *ud)
{
    return buf_add(ud, ptr, size * n) == 0 ? size * n : 0;
}

static int
serve(int fd, const char *url)
{
    FCGX_Request req;
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    struct buf in = {0}, out = {0};
    char chunk[65536];

    if (c == NULL || FCGX_InitRequest(&req, fd, 0) != 0)
        return 1;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "x-goog-api-key: bench-key");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    while (FCGX_Accept_r(&req) >= 0) {
        int got;

        in.len = out.len = 0;
        while ((got = FCGX_GetStr(chunk, sizeof(chunk), req.in)) > 0)
            if (buf_add(&in, chunk, (size_t)got) != 0)
                break;
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, in.p);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)in.len);
        if (curl_easy_perform(c) == CURLE_OK) {
            FCGX_FPrintF(req.out, "Status: 200 OK\r\nContent-Type: "
                                  "application/json\r\n\r\n");
            FCGX_PutStr(out.p, (int)out.len, req.out);
        } else {
            FCGX_FPrintF(req.out, "Status: 502 Bad Gateway\r\n\r\n");
        }
        FCGX_Finish_r(&req);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    int fd, n;
    FILE *pf;

    if (argc != 5 || (n = atoi(argv[3])) < 1)
        return fprintf(stderr, "usage: floor SOCKET URL WORKERS PIDFILE\n"), 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    FCGX_Init();
    fd = FCGX_OpenSocket(argv[1], 128);
    if (fd < 0)
        return fprintf(stderr, "floor: cannot listen on %s\n", argv[1]), 1;
    pf = fopen(argv[4], "w");
    if (pf == NULL)
        return 1;
    fprintf(pf, "%d\nworkers:", (int)getpid());
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(serve(fd, argv[2]));
        fprintf(pf, " %d", (int)pid);
    }
    fclose(pf);
    /* the bench stops the workers (their PIDs are in PIDFILE), then us */
    while (wait(NULL) > 0)
        ;
    return 0;
}
