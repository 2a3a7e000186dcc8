/*
 * common.h - first include of every .c file in gemini-agent.
 *
 * Feature-test macros, compiler attributes and a few tiny helpers that every
 * module uses. It holds no state and declares no functions of its own.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_COMMON_H
#define APP_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* ppoll, accept4, memmem; glibc only, like our deploys */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#if defined(__GNUC__) || defined(__clang__)
#define ATTR_FMT(f, a) __attribute__((format(printf, f, a)))
#define ATTR_WUR       __attribute__((warn_unused_result))
#define NORETURN       __attribute__((noreturn))
#define UNUSED         __attribute__((unused))
#else
#define ATTR_FMT(f, a)
#define ATTR_WUR
#define NORETURN
#define UNUSED
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Drop `const` from a pointer, for APIs that take a non-const pointer but
 * only read through it (jansson's object iterators and json_object_update
 * source). The uintptr_t step keeps -Wcast-qual quiet on purpose: every use
 * is such a read-only call.
 */
#define UNCONST(p) ((void *)(uintptr_t)(p))

/*
 * How we write JSON (with jansson.h included): compact, and reals with 15
 * significant digits. That writes every decimal of up to 15 digits back
 * exactly as it came (49.99 stays 49.99, where jansson's default 17 digits
 * write 49.990000000000002, which a model would read out to visitors).
 */
#define APP_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

/*
 * TESTABLE marks functions that are static in the program but visible to the
 * Check suites, so tests reach parser internals without widening the API.
 */
#ifdef TESTING
#define TESTABLE
#else
#define TESTABLE static
#endif

#endif /* APP_COMMON_H */
