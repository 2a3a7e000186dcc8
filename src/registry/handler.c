/*
 * handler.c - find a compiled-in action handler by registered name.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini-agent/handler.h"

#include <string.h>

const struct handler_def *
handler_find(const char *name)
{
    for (size_t t = 0; handler_tables[t] != NULL; t++)
        for (const struct handler_def *h = handler_tables[t]; h->name; h++)
            if (strcmp(h->name, name) == 0)
                return h;
    return NULL;
}
