/*
 * bounds.h - the limits only src/gemini/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_GEMINI_BOUNDS_H
#define APP_GEMINI_BOUNDS_H

/* --- the Gemini client ------------------------------------------------- */

/* Retries after the first attempt: at most 2 (wire §11). */
#define GEMINI_MAX_RETRIES 2

/* First back-off; doubles per retry, plus up to 50% jitter. */
#define GEMINI_BACKOFF_BASE_MS 500

/* Connecting to Gemini must not take longer than this. */
#define GEMINI_CONNECT_MS 5000

/* A response that started and then sent nothing for this long is a stall
 * (before the first byte only the deadline applies: thinking is slow). */
#define GEMINI_STALL_MS 15000

/* A retry is only worth making when at least this much time is left after
 * the wait; an attempt with less can only time out. */
#define GEMINI_MIN_ATTEMPT_MS 100

/* How often a call in flight asks whether its visitor is still there. */
#define GEMINI_GONE_CHECK_MS 200

/* Gemini's message quoted in our log line (visitors never see it). */
#define BOUND_GEMINI_QUOTE 200

/* The longest wait an upstream Retry-After or RetryInfo may ask for. It is
 * passed on in the visitor's Retry-After and may be waited out by a worker
 * before a retry, so a broken or hostile upstream sending 99999 must not
 * park either for a day; Gemini's own delays are tens of seconds. */
#define GEMINI_RETRY_HINT_MAX_MS 60000

/* --- Google credentials (gemini/credentials.h) ------------------------- */

/* An ADC file (service-account key or authorized_user) is a few KB. */
#define CRED_FILE_MAX (64u * 1024)

/* The token endpoint's answer: a token and a few fields. */
#define CRED_RESPONSE_MAX (64u * 1024)

/* A token request, connect included; a token endpoint answers in ms. */
#define CRED_TIMEOUT_MS 15000
#define CRED_CONNECT_MS 5000

/* `gcloud auth print-access-token` may refresh its own token first (a
 * network round trip behind a Python start-up): give it longer. */
#define CRED_GCLOUD_TIMEOUT_MS 30000

/* What gcloud may print on stdout; a token is about 200 bytes. */
#define CRED_GCLOUD_OUTPUT_MAX (16u * 1024)

/* Longest access token we accept (Google documents up to 2048 bytes). */
#define CRED_TOKEN_MAX 4096

/* A token this close to its expiry is refreshed before use. */
#define CRED_REFRESH_MARGIN_S 60

/* A service account's assertion lives this long (Google's maximum). */
#define CRED_JWT_LIFETIME_S 3600

/* gcloud does not say when its token expires: ask it again after this. */
#define CRED_GCLOUD_CACHE_S 300

/* expires_in above this is taken as this (Google's tokens live 1 h). */
#define CRED_EXPIRES_MAX_S 86400

/* An OAuth `error` code quoted in an error ("invalid_grant"); a longer
 * or stranger one is not quoted. */
#define CRED_OAUTH_CODE_MAX 40

/* Nesting in an ADC file or a token answer (both are flat objects). */
#define CRED_JSON_DEPTH 16

/* A Vertex AI project, location or model id in a URL path. */
#define VERTEX_SEGMENT_MAX 128

/* Vertex AI's streamed function-call arguments (gemini/chunks.h, wire
 * §6.4): a partialArgs jsonPath's depth, one key in it, an array index
 * in it (arrays are filled up to the index, so it bounds them too). */
#define CHUNKS_PATH_DEPTH 32
#define CHUNKS_PATH_KEY   256
#define CHUNKS_PATH_INDEX 4096

/* --- request threads -------------------------------------------------- */

/* libcurl's upload buffer per request thread (its minimum, 16 KB; the
 * default is 64 KB): a request of 300 KB is sent in more writes, and a
 * worker's thousand threads keep 48 MB less. */
#define GEMINI_UPLOAD_BUFFER (16u * 1024)

/* ...and for one call with a large body, the most it grows to for that
 * call (transport.c upload_buffer) */
#define GEMINI_UPLOAD_BUFFER_MAX (256u * 1024)
/* malloc arenas per worker (glibc's M_ARENA_MAX). Its default is 8 per
 * core, each keeping what its threads freed; fewer hold less, but at 2 a
 * burst of 1,000 chats queued on the arenas' locks (measured). */
#define WORKER_MALLOC_ARENAS     8

#endif /* APP_GEMINI_BOUNDS_H */
