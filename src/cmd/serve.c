/*
 * serve.c - `gemini-agent serve`: read its options, then hand over to
 * the master process (serve.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/bounds.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/config.h"
#include "proc/serve.h"

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
    struct cmdopt_cmd c = {.name = "serve", .usage = cmd_serve_usage,
                           .opts = opts};
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    if ((o.socket_path == NULL) == (o.listen == NULL))
        return cmdopt_fail(&c, "give exactly one of --socket PATH or "
                               "--listen HOST:PORT");
    return serve_run(&o);
}
