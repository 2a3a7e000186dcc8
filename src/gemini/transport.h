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

/* Point g->t at libcurl and make its easy handle. 0, or -1 (libcurl
 * failed). */
int transport_init(struct gemini *g);

/* Free the handle and any header list left. Safe after a failed init. */
void transport_release(struct gemini *g);

#endif /* APP_TRANSPORT_H */
