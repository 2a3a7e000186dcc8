/*
 * transport.h - the libcurl transport of the Gemini client (transport.c).
 *
 * Only gemini.c uses it: gemini_init() and gemini_release() are the
 * public face.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TRANSPORT_H
#define APP_TRANSPORT_H

#include "core/common.h"

struct gemini;
struct gemini_share;

/* Point g->t at libcurl and make its easy handle, joined to `share` when
 * not NULL. 0, or -1 (libcurl failed). */
int transport_init(struct gemini *g, struct gemini_share *share);

/* See gemini_share_new() in gemini.h. */
struct gemini_share *transport_share_new(void);
void transport_share_free(struct gemini_share *s);

/* Free the handle and any header list left. Safe after a failed init. */
void transport_release(struct gemini *g);

#endif /* APP_TRANSPORT_H */
