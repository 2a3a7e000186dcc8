/*
 * monotime.c - the monotonic clock (see monotime.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/monotime.h"

#include <time.h>

long
monotime_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
