/*
 * too_deep.h - the request path's depth rule as jsonin.c applied it
 * before jscan: brackets outside strings, counted over the whole text
 * before jansson parsed. The reference jscan's bracket depth is held to,
 * by the differential fuzzer and by check_jscan.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef TESTS_TOO_DEEP_H
#define TESTS_TOO_DEEP_H

#include <stdbool.h>
#include <stddef.h>

static inline bool
too_deep(const char *buf, size_t len, int max_depth)
{
    int depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if ((c == '[' || c == '{') && ++depth > max_depth)
            return true;
        else if (c == ']' || c == '}')
            depth--;
    }
    return false;
}

#endif /* TESTS_TOO_DEEP_H */
