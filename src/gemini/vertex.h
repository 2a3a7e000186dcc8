/*
 * vertex.h - the URLs of Vertex AI's generateContent (docs/credentials.md).
 *
 * Vertex AI serves the same request and answer bodies as the Gemini API
 * under another path, and takes an OAuth token (Authorization: Bearer,
 * see credentials.h and GEMINI_AUTH_BEARER) instead of an API key.
 *
 * Not here: where the project and location come from (flags or the
 * environment: the caller's business), nor the call itself (gemini.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_VERTEX_H
#define APP_VERTEX_H

#include "core/common.h"

struct arena;
struct status_error;

/* Vertex AI's endpoint for the `global` location. */
#define VERTEX_GLOBAL_BASE "https://aiplatform.googleapis.com"

/*
 * The URL of one call:
 *   {base}/v1/projects/{project}/locations/{location}/publishers/google/
 *   models/{model}:generateContent
 * or, with `stream`, ...:streamGenerateContent?alt=sse. {base} is
 * `base_url` when it is not NULL (GEMINI_BASE_URL, as for `serve`: tests
 * point it at the mock; trailing slashes are dropped), else by location:
 * "global" -> https://aiplatform.googleapis.com, the multi-regions "us"
 * and "eu" -> https://aiplatform.{us,eu}.rep.googleapis.com, any other ->
 * https://{location}-aiplatform.googleapis.com.
 *
 * project and model must each be one URL path segment (letters, digits,
 * '.', '_', '-'; not "." or ".."), the location a host name's label
 * (lowercase letters, digits, '-'). Returns the URL in `a`, or
 * NULL with `err` set: ST_CONFIG naming the bad value, ST_NO_MEMORY.
 */
const char *vertex_url(struct arena *a, const char *base_url,
                       const char *project, const char *location,
                       const char *model, bool stream,
                       struct status_error *err);

#endif /* APP_VERTEX_H */
