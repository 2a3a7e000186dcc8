/*
 * bounds.h - the limits only src/agent/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_AGENT_BOUNDS_H
#define APP_AGENT_BOUNDS_H

/* --- chat protocol (used by the chat routes) --------------------------- */

/* A page tool's description, as declared to Gemini, keeps at most this
 * many bytes: it is page data sent with every step of every request (one
 * page sent 900 KB). */
#define BOUND_TOOL_DESCRIPTION 1024

/* The site's part of the system instruction (persona, rules, the server
 * actions' names). */
#define BOUND_PROMPT_FIXED_BYTES (256u * 1024)

/* A model turn the chat keeps may take at most this share of
 * limits.maxBodyBytes as JSON text (agent/turn.h): the history that
 * holds it must still fit in a later request beside the visitor's
 * message, the page state and the turns before it. */
#define BOUND_MODEL_TURN_SHARE 4

/* Names quoted back in messages are cut here: they come from the browser. */
#define BOUND_NAME_SHOWN 64

/* --- memory ------------------------------------------------------------ */

/* What a loop step's request gets beyond the texts it copies (the
 * conversation's new turns, the brackets), before its buffer grows. */
#define BOUND_LOOP_STEP_ROOM (16u * 1024)

/* --- approval tickets (agent/seal.h) ----------------------------------- */

/* A ticket, "t1.<expiry ms>.<MAC>", and a signature in `signatures`,
 * longer than this is no ticket or signature of ours. */
#define BOUND_TICKET_LEN 64

#endif /* APP_AGENT_BOUNDS_H */
