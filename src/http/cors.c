/*
 * cors.c - cross-origin calls (see cors.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "http/cors.h"
#include "core/config.h"
#include "http/httpio.h"
#include "http/reply.h"
#include "core/status.h"

#include <string.h>

void
cors_decide(const struct config *cfg, struct httpio *io)
{
    const char *origin;

    io->cors_origin = NULL;
    if (cfg->cors.norigins == 0)
        return;
    origin = io->ops->param(io->ctx, "HTTP_ORIGIN");
    if (origin == NULL)
        return;
    /* exact: config.c keeps the origins in the form browsers send, and
     * only a listed entry (never the request's text) reaches the head */
    for (size_t i = 0; i < cfg->cors.norigins; i++)
        if (strcmp(origin, cfg->cors.origins[i]) == 0) {
            io->cors_origin = cfg->cors.origins[i];
            return;
        }
}

bool
cors_is_preflight(const struct config *cfg, struct httpio *io,
                  const char *method)
{
    return cfg->cors.norigins > 0 && strcmp(method, "OPTIONS") == 0 &&
           io->ops->param(io->ctx, "HTTP_ACCESS_CONTROL_REQUEST_METHOD") !=
               NULL;
}

int
cors_preflight(struct httpio *io, struct status_error *err)
{
    if (io->cors_origin == NULL)
        return status_set(err, ST_ORIGIN_NOT_ALLOWED,
                          "this origin may not call the responder from its "
                          "pages: it is not in http.cors.allowOrigins");
    return reply_preflight(io);
}
