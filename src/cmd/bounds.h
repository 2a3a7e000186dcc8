/*
 * bounds.h - the limits only src/cmd/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CMD_BOUNDS_H
#define APP_CMD_BOUNDS_H

/* --- workers ----------------------------------------------------------- */

/* Request threads per worker (--threads). A chat spends seconds waiting
 * on Gemini and microseconds of CPU, so a thread per chat in flight is
 * what lets one box hold hundreds: the default pair of workers holds 256
 * chats at once. Each idle thread costs its stack's touched pages and a
 * 16 KB arena block. */
#define BOUND_THREADS   1024
#define DEFAULT_THREADS 128

/* --- generated files --------------------------------------------------- */

/* Files the commands generate (types, agent kit) are small; this cap
 * only stops a runaway. */
#define BOUND_GENERATED_BYTES (4u * 1024 * 1024)

#endif /* APP_CMD_BOUNDS_H */
