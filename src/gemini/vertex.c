/*
 * vertex.c - the URLs of Vertex AI's generateContent (see vertex.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini/vertex.h"
#include "core/arena.h"
#include "gemini/bounds.h"
#include "core/status.h"

#include <string.h>

/* One path segment and a safe host label part: nothing to escape. */
static bool
segment_ok(const char *s)
{
    if (s == NULL || s[0] == '\0' || strcmp(s, ".") == 0 ||
        strcmp(s, "..") == 0 || strlen(s) > VERTEX_SEGMENT_MAX)
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* A location is also part of a host name: a DNS label's letters. */
static bool
location_ok(const char *s)
{
    if (!segment_ok(s) || s[0] == '-')
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '-'))
            return false;
    return true;
}

const char *
vertex_url(struct arena *a, const char *base_url, const char *project,
           const char *location, const char *model, bool stream,
           struct status_error *err)
{
    const char *method = stream ? "streamGenerateContent?alt=sse"
                                : "generateContent";
    const char *bad = !segment_ok(project)     ? "project"
                      : !location_ok(location) ? "location"
                      : !segment_ok(model)     ? "model"
                                               : NULL;
    const char *url;
    size_t n;

    if (bad != NULL) {
        status_set(err, ST_CONFIG,
                   "vertex: the %s must be one path segment (letters, "
                   "digits, '.', '_', '-'; a location lowercase letters, "
                   "digits and '-')",
                   bad);
        return NULL;
    }
    if (base_url != NULL) {
        /* "http://h/" and "http://h" build the same URL */
        for (n = strlen(base_url); n > 0 && base_url[n - 1] == '/';)
            n--;
        url = arena_printf(a, "%.*s", (int)n, base_url);
    } else if (strcmp(location, "global") == 0) {
        url = VERTEX_GLOBAL_BASE;
    } else if (strcmp(location, "us") == 0 || strcmp(location, "eu") == 0) {
        url = arena_printf(a, "https://aiplatform.%s.rep.googleapis.com",
                           location);
    } else {
        url = arena_printf(a, "https://%s-aiplatform.googleapis.com", location);
    }
    if (url != NULL)
        url = arena_printf(a,
                           "%s/v1/projects/%s/locations/%s/publishers/google/"
                           "models/%s:%s",
                           url, project, location, model, method);
    if (url == NULL)
        status_set(err, ST_NO_MEMORY, "out of memory");
    return url;
}
