/*
 * sse.h - an incremental parser of server-sent events, as Gemini sends them
 * on `streamGenerateContent?alt=sse` (wire §12 "Streaming").
 *
 * Bytes go in as they arrive, in chunks of any size (a libcurl write
 * callback); each whole event comes out through a callback. The events
 * are the same however the bytes were split, one at a time or all at once.
 * The framing is the WHATWG event-stream format: lines end at "\r\n",
 * "\n" or "\r"; a blank line ends an event; `data:` lines make its data;
 * lines starting with ':' are comments; a UTF-8 BOM at the very start of
 * the stream is skipped. On top of it, Gemini's one habit that is not SSE:
 * after a 200 an error can arrive as a bare JSON object with no `data:`
 * (fixture e500-internal.midstream-chunk.json), passed on as SSE_RAW.
 *
 * Bounded: an event's bytes (from its first byte up to the blank line that
 * ends it) may not pass `max_event`, and the buffer holds at most one
 * event plus a slice of input, so memory follows the largest event, never
 * the length of the stream. Linear: each byte is searched once for an
 * event end and read once more when its event is dispatched.
 *
 * Not here: reading the JSON of an event (turn.h), the HTTP transfer
 * (transport.h). One parser per stream; not thread-safe.
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SSE_H
#define APP_SSE_H

#include "core/common.h"
#include "core/sbuf.h"

enum sse_kind {
    SSE_DATA, /* the event's data: its `data:` lines' values joined by '\n'
               * (one space after the colon is dropped; a `data` line with
               * no colon is an empty value). An event with a data line is
               * SSE_DATA even when the data is empty. */
    SSE_RAW,  /* an event with no data line whose text starts (after
               * whitespace) with '{' or '[': a bare JSON object, e.g.
               * Gemini's mid-stream {"error":...}; passed whole, trimmed of
               * the whitespace around it. An event with a line SSE knows
               * (a comment, `event`, `id` or `retry`) is never SSE_RAW. */
};

/*
 * Called once per event, in stream order, with `data` NUL-terminated (len
 * bytes, which may hold NULs of their own; valid until the callback
 * returns). Returns 0, or -1 to stop the parser. Events with no data that
 * are not SSE_RAW (comments, other fields, whitespace) are dropped without
 * a call.
 */
typedef int (*sse_event_fn)(void *ctx, enum sse_kind kind, const char *data,
                            size_t len);

struct sse {
    struct sbuf buf;   /* bytes not yet part of a whole event; buf[0] is the
                        * first byte of the event being read */
    size_t scanned;    /* how much of buf was already searched for an event
                        * end: the next search starts here */
    size_t max_event;  /* the largest event, in bytes */
    int rc;            /* 0, or the non-zero result that stopped the parser */
    bool too_large;    /* rc -2 came from an event over max_event */
    unsigned char bom; /* bytes of a leading UTF-8 BOM seen so far, 0-2
                        * while the stream's start is undecided; 3 after */
};

/* Initialise for a new stream; an event of more than `max_event` bytes is
 * an error. Allocates nothing. */
void sse_init(struct sse *p, size_t max_event);

/*
 * Feed the next `n` bytes of the stream; `fn` is called for every event
 * they complete. Returns 0; -1 when the callback stopped the parser; -2
 * when an event passed max_event bytes or memory ran out (which of the
 * two: sse_too_large). After a non-zero return, do not feed again (a
 * further call returns the same value and calls nothing).
 */
int sse_feed(struct sse *p, const char *buf, size_t n, sse_event_fn fn,
             void *ctx) ATTR_WUR;

/*
 * The body ended: an unterminated last event that is not blank is
 * dispatched as if a blank line followed it (a "\r" at the very end is a
 * line end). Same returns as sse_feed. The parser is then empty, ready
 * for sse_release (or another stream).
 */
int sse_finish(struct sse *p, sse_event_fn fn, void *ctx) ATTR_WUR;

/* After a -2: true when an event was over max_event, false when memory ran
 * out. */
bool sse_too_large(const struct sse *p);

/* Free the buffer; the parser is left initialised for a new stream, with
 * the same max_event. */
void sse_release(struct sse *p);

#endif /* APP_SSE_H */
