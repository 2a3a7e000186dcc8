/*
 * unit_proc.h - the processes a suite started and left running, for the
 * suites that start servers (the mcp plugin's stdio servers) and must see
 * each one gone.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_PROC_H
#define APP_UNIT_PROC_H

#include "core/common.h"

#include <sys/types.h>

/* The processes whose parent is this one, from /proc: how many there are,
 * the first `max` of them in pids[] (pids may be NULL when max is 0). */
size_t unit_children(pid_t *pids, size_t max);

#endif /* APP_UNIT_PROC_H */
