/*
 * serve.c - `gemini-agent serve`: read its options, then hand over to
 * the master process (proc/serve.c); and the same responder started by a
 * web server with the listening socket as its stdin (mod_fcgid).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/bounds.h"
#include "proc/bounds.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/config.h"
#include "proc/serve.h"

#include <sys/socket.h>
#include <unistd.h>

const char cmd_serve_usage[] =
    "[--config FILE] (--socket PATH | --listen HOST:PORT)\n"
    "[--workers N] [--threads N] [--queue N] [--pid-file FILE]";

int
cmd_serve(int argc, char **argv)
{
    struct serve_opts o = {.config_path = config_default_path(),
                           .workers = DEFAULT_WORKERS,
                           .threads = DEFAULT_THREADS,
                           .queue = DEFAULT_QUEUE};
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--config", &o.config_path),
        CMDOPT_STR("--socket", &o.socket_path),
        CMDOPT_STR("--listen", &o.listen),
        CMDOPT_INT("--workers", &o.workers, 1, BOUND_WORKERS),
        CMDOPT_INT("--threads", &o.threads, 1, BOUND_THREADS),
        CMDOPT_INT("--queue", &o.queue, 0, BOUND_QUEUE),
        CMDOPT_STR("--pid-file", &o.pid_file),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {
        .name = "serve", .usage = cmd_serve_usage, .opts = opts};
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if ((o.socket_path == NULL) == (o.listen == NULL))
        return cmdopt_fail(&c, "give exactly one of --socket PATH or "
                               "--listen HOST:PORT");
    return serve_run(&o);
}

bool
cmd_serve_stdin_listens(void)
{
    int on = 0;
    socklen_t len = sizeof(on);

    /* A CGI's stdin is a pipe or a connected socket (mod_cgid): only a
     * FastCGI application is handed one that accepts connections. */
    return getsockopt(STDIN_FILENO, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) ==
               0 &&
           on != 0;
}

int
cmd_serve_stdin(void)
{
    /* The web server counts this process as one application instance and
     * sends it one request at a time; it starts more instances itself. */
    struct serve_opts o = {.config_path = config_default_path(),
                           .listen_stdin = true,
                           .workers = 1,
                           .threads = DEFAULT_THREADS,
                           .queue = DEFAULT_QUEUE};
    return serve_run(&o);
}
