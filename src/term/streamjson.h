/*
 * streamjson.h - the messages of Claude Code's stream-json output, as
 * `gemini-agent chat` writes them (docs/internals/terminal.md has the
 * shapes and where they come from): one JSON object per line, flushed.
 *
 * The builders return new jansson references (NULL when out of memory);
 * term_sj_emit() adds session_id and a fresh uuid, writes the line and
 * takes the reference.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_STREAMJSON_H
#define APP_TERM_STREAMJSON_H

#include "core/common.h"

#include <stdio.h>

struct json_t;
struct loop_usage;

/* A random (v4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", into
 * out[37]. 0, or -1 when no randomness could be had. */
int term_uuid(char out[37]);

/* Write `msg` (stolen) with "session_id" and "uuid" added (unless it has
 * them) as one line on `out`, flushed. 0, or -1 when out of memory or
 * the write failed. */
int term_sj_emit(FILE *out, const char *session_id, struct json_t *msg);

/* Write `msg` as it is (a control_response, the one-object json output):
 * one line, flushed; takes the reference. 0 or -1. */
int term_sj_emit_raw(FILE *out, struct json_t *msg);

/* Claude's usage object of Gemini's counts: input_tokens (the prompt
 * less its cached part), output_tokens (candidates + thoughts),
 * cache_creation_input_tokens (0: Gemini has no such charge),
 * cache_read_input_tokens (cached). */
struct json_t *term_sj_usage(const struct loop_usage *u);

/* The price of `u` on `model`, in US dollars, from the table in
 * streamjson.c (0 for a model not in it). */
double term_sj_cost(const char *model, const struct loop_usage *u);

/* {"type":"assistant","message":{id, type, role, model, content:[block],
 * stop_reason:null, stop_sequence:null, usage}, "parent_tool_use_id":
 * null}; `block` and `usage` stolen. */
struct json_t *term_sj_assistant(const char *msg_id, const char *model,
                                 struct json_t *block, struct json_t *usage);

/* {"type":"user","message":{"role":"user","content":[{"type":
 * "tool_result","tool_use_id","content","is_error"}]},
 * "parent_tool_use_id":null, "tool_use_result": structured}; structured
 * borrowed, may be NULL. */
struct json_t *term_sj_tool_result(const char *tool_use_id, const char *content,
                                   bool is_error,
                                   const struct json_t *structured);

#endif /* APP_TERM_STREAMJSON_H */
