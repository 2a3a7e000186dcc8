/*
 * bounds.h - the limits only src/registry/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_REGISTRY_BOUNDS_H
#define APP_REGISTRY_BOUNDS_H

#include "core/bounds.h"

/* --- workers ----------------------------------------------------------- */

/* Stack of a request thread. Our deepest paths (schema validation, regex,
 * a TLS handshake, the resolver) use tens of KB; only touched pages count. */
#define WORKER_THREAD_STACK (512u * 1024)

/* --- server actions ---------------------------------------------------- */

/* What a shared-object plugin hands over at load time (declarations,
 * instructions, tool lists: JSON or text) and the message of a failed
 * call, cut there. */
#define BOUND_SO_TEXT_BYTES (256u * 1024)
#define BOUND_SO_MESSAGE    300

/* Longest JSON pointer jschema builds while it walks an instance; a longer
 * one is cut (and the error says so). */
#define BOUND_JSON_POINTER 1024

/* Longest POSIX ERE `pattern` we compile. */
#define BOUND_PATTERN_LEN 1024

/* ... and the most it may grow to when glibc's regcomp expands counted
 * repetitions: `(((a{0,255}){0,255}){0,255})` is 30 bytes that regcomp
 * turns into gigabytes. Each atom counts 1, times the bounds of the
 * repetitions around it; and the optional copies of one repetition
 * ({n,m}: m - n of them) cost regcomp about their square in memory, so
 * they have a bound of their own (a{1,4000} alone takes 128 MB). Within
 * both, the costliest patterns measured compile in under 50 MB. */
#define BOUND_PATTERN_COST  10000
#define BOUND_PATTERN_RANGE 500

/* A schema violation's message, with its NUL: path, what was wrong, rule.
 * Longer ones end in "..."; a client or the model needs the start, and
 * it stays below STATUS_TEXT_MAX so the cut is this visible one. */
#define SCHEMA_MESSAGE_MAX 256

/* --- questions for the user (registry/question.h; plugin `clarification`)
 * A tool that asks (GEMINI_AGENT_ASK_USER) asks a few short questions; the
 * widget shows them all on one card, so these keep it readable. */
#define BOUND_QUESTIONS        8    /* questions in one call */
#define BOUND_QUESTION_OPTIONS 12   /* choices of one question */
#define BOUND_QUESTION_ID      64   /* bytes of a question's id */
#define BOUND_QUESTION_TEXT    500  /* bytes of a question's text */
#define BOUND_QUESTION_OPTION  200  /* bytes of one choice */
#define BOUND_ANSWER_TEXT      2000 /* bytes of a free-text answer */

/* --- the permission policy (registry/permission.h) --------------------- */

/* Arguments in one signature (sorted on the stack); more, and the
 * signature counts as too long. */
#define BOUND_PERMISSION_ARGS 64

/* Entries in one allow or deny list of the site's policy. */
#define BOUND_PERMISSION_ENTRIES 256

/* --- generated files --------------------------------------------------- */

/* TypeScript type names come from registered names `<plugin>.<name>`, each
 * part at most BOUND_NAME_LEN; a leading digit costs one `_`. */
#define BOUND_TS_TYPE_NAME (2 * BOUND_NAME_LEN + 8)

#endif /* APP_REGISTRY_BOUNDS_H */
