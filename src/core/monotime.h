/*
 * monotime.h - the one monotonic clock of gemini-agent.
 *
 * Durations and deadlines (action timings, Gemini deadlines, worker
 * back-off) are measured on CLOCK_MONOTONIC, which wall-clock changes do
 * not move.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_MONOTIME_H
#define APP_MONOTIME_H

#include "core/common.h"

/* Milliseconds on the monotonic clock (an arbitrary, fixed origin). */
long monotime_ms(void);

#endif /* APP_MONOTIME_H */
