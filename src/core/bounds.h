/*
 * bounds.h - the limits several layers share, each with its reason. A
 * limit that one layer alone uses is in that layer's bounds.h
 * (src/http/bounds.h, src/term/bounds.h, ...).
 *
 * The BOUND_* values are hard ceilings. Configuration (conf/agent.yaml) may
 * only lower the ones it names; config.c refuses a value above the ceiling.
 * The DEFAULT_* values are what a key that is absent from the config means.
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_BOUNDS_H
#define APP_BOUNDS_H

/* --- request bodies ---------------------------------------------------- */

/* Largest request body we ever accept: a long chat history plus page state
 * fits in a few hundred KB; 8 MiB is far past any honest client. */
#define BOUND_BODY_BYTES   (8u * 1024 * 1024)
#define DEFAULT_BODY_BYTES (1024u * 1024)

/* JSON nesting of request bodies. Page state and schemas are shallow; deep
 * nesting is only ever an attack on recursive code (ours or jansson's). */
#define BOUND_JSON_DEPTH 32

/* --- JSON scanning and writing (jscan.h, jsonout.h) --------------------- */

/* The deepest nesting jscan ever accepts, whatever the caller asks: jansson
 * 2.14's own parser limit (JSON_PARSER_MAX_DEPTH), which JSON from Gemini
 * has always been read under. It also bounds the recursion of
 * jscan_to_json() and jscan_write(). */
#define BOUND_JSCAN_DEPTH      2048
/* jscan's tape keeps offsets as 32-bit numbers: it reads at most this many
 * bytes (the body and upstream bounds below are far smaller). */
#define BOUND_JSCAN_BYTES      0xFFFFFFF0u
/* A parse error's message, with its NUL: jansson's JSON_ERROR_TEXT_LENGTH,
 * so jsonin can hand it on in a json_error_t unchanged. */
#define BOUND_JSCAN_MESSAGE    160
/* The deepest jansson value jsonout writes: it bounds the writer's
 * recursion. Trees we parse are at most BOUND_JSCAN_DEPTH deep and trees
 * we build far less. */
#define BOUND_JSON_WRITE_DEPTH (2 * BOUND_JSCAN_DEPTH)

/* --- chat protocol (used by the chat routes) --------------------------- */

#define BOUND_HISTORY_TURNS      2000
#define DEFAULT_HISTORY_TURNS    200
#define BOUND_TOOLS              512
#define DEFAULT_TOOLS            128
#define BOUND_PAGE_STATE_BYTES   (4u * 1024 * 1024)
#define DEFAULT_PAGE_STATE_BYTES (256u * 1024)
/* Gemini calls per request: config and AGENT_MAX_LOOP_STEPS are clamped
 * to 1..15 (docs/configuration.md). */
#define BOUND_LOOP_STEPS         15
#define DEFAULT_LOOP_STEPS       8

/* generationConfig.maxOutputTokens of every Gemini call (answer and
 * thinking of one step; limits.maxOutputTokens). Gemini's models stop at
 * 65536; a site's widget needs a few thousand, and what a step may write
 * is what the budget reserves for it. */
#define BOUND_OUTPUT_TOKENS       65536
#define DEFAULT_OUTPUT_TOKENS     8192
/* The bytes one request may send to Gemini over all its steps
 * (limits.maxUpstreamBytes): every step resends the conversation, so one
 * 685 KB request made 8 calls carrying 5.5 MB. The default is this many
 * times maxBodyBytes; the ceiling is 15 steps of the largest body. */
#define DEFAULT_UPSTREAM_PER_BODY 4
#define MIN_UPSTREAM_BYTES        (64u * 1024)
#define BOUND_REQUEST_UPSTREAM    (128u * 1024 * 1024)

/* A conversation key's token (agent/convkey.h), at most: the longest it
 * writes. */
#define BOUND_CONVKEY_TOKEN 64

/* --- memory ------------------------------------------------------------ */

/* Bytes one request may allocate in all (memlimit.h): the arena's blocks,
 * sbuf growth and jansson's allocations, counted as they are made. A
 * large honest request (an 8 MiB body, 15 Gemini steps) stays far below;
 * past it the request gets a 500, before the machine runs short. */
#define BOUND_REQUEST_MEMORY (512u * 1024 * 1024)
/* Most requests fit in one arena block of this size, which
 * arena_reset() keeps between requests. */
#define BOUND_ARENA_BLOCK    (16u * 1024)
/* Later blocks are half as large as the arena so far, up to this: a
 * large request takes a handful of blocks. */
#define BOUND_ARENA_GROWTH   (1024u * 1024)

/* --- time -------------------------------------------------------------- */

/* Total deadline of one Gemini call, retries included. It must end before
 * nginx's fastcgi_read_timeout (nginx/gemini-agent.conf sets 300 s). */
#define BOUND_GEMINI_TIMEOUT_MS    280000
#define DEFAULT_GEMINI_TIMEOUT_MS  60000
#define BOUND_ACTION_TIMEOUT_MS    120000
#define DEFAULT_ACTION_TIMEOUT_MS  10000
/* A whole request, every Gemini call and action included
 * (requestTimeoutMs). Gemini calls are cut to what is left of it, so a
 * request only outlives it when something hangs - and then the master's
 * watchdog replaces the worker (docs/internals/concurrency.md). It ends
 * before nginx's fastcgi_read_timeout (300 s), so the visitor hears from
 * us, not from nginx. */
#define BOUND_REQUEST_TIMEOUT_MS   290000
#define DEFAULT_REQUEST_TIMEOUT_MS 120000

/* Calls of one model turn that run (limits.maxCallsPerTurn): a turn that
 * asks for 200 side effects must not get 200; the rest are answered with
 * an error the model reads. */
#define BOUND_CALLS_PER_TURN   128
#define DEFAULT_CALLS_PER_TURN 16

/* A stream with no event for this long gets a status line: proxies cut a
 * silent response after their read timeout (Apache's FcgidIOTimeout is
 * 40 s, many proxies 60 s), and a model that thinks, or a chain of tools,
 * can be silent for longer (streamHeartbeatMs). */
#define BOUND_STREAM_HEARTBEAT_MS   60000
/* ... and at least this: libcurl asks about the wait on Gemini about once
 * a second, which is where the heartbeat is kept (streaming.md) */
#define MIN_STREAM_HEARTBEAT_MS     1000
#define DEFAULT_STREAM_HEARTBEAT_MS 15000

/* --- the run API (docs/http-api.md) ------------------------------------ */

/* How long an approval waits for the user (policy.approvalTtlMs). */
#define BOUND_APPROVAL_TTL_MS   (30L * 24 * 3600 * 1000)
#define DEFAULT_APPROVAL_TTL_MS (24L * 3600 * 1000)
/* How long the chat's approval ticket stays good: the
 * visitor is looking at the card; a day-old one is not a decision. */
#define DEFAULT_TICKET_TTL_MS   (10L * 60 * 1000)
/* Types of attachedContext a site may accept, and their length. */
#define BOUND_CONTEXT_TYPES     32
#define BOUND_CONTEXT_TYPE_LEN  64

/* --- the Gemini client ------------------------------------------------- */

/* Largest Gemini response body we keep; more is cut off (bad response). */
#define BOUND_UPSTREAM_BYTES (16u * 1024 * 1024)

/* --- workers ----------------------------------------------------------- */

/* The master's watchdog looks at every worker's requests this often; a
 * request past requestTimeoutMs + WORKER_HANG_SLACK_MS, or an action past
 * actionTimeoutMs, gets its worker killed and replaced. */
#define WATCH_TICK_MS             250
/* The listening socket's backlog: connections the kernel holds until a
 * worker's leader thread accepts them (a burst of 1,000 chats opens 1,000
 * at once; a full backlog is nginx's 502). */
#define LISTEN_BACKLOG            4096
#define WORKER_HANG_SLACK_MS      5000
#define BOUND_REQUESTS_PER_WORKER 100000000L

/* --- YAML files (agent.yaml, plugin.yaml, .jay-action) -------------------- */

/* libyaml 0.2.5 has no nesting limit of its own: we stop at this depth. */
#define BOUND_YAML_DEPTH 32
/* Nodes per YAML document: a .jay-action has tens; this refuses billions. */
#define BOUND_YAML_NODES 20000
/* Bytes per YAML file. */
#define BOUND_YAML_BYTES (1024u * 1024)

/* --- server actions ---------------------------------------------------- */

#define BOUND_PLUGINS             64
#define BOUND_ACTIONS             512
/* Names: `<plugin>.<name>`; each part is an identifier of this length. */
#define BOUND_NAME_LEN            64
/* JSON Schema nesting in a .jay-action (also caps validator recursion). */
#define BOUND_SCHEMA_DEPTH        BOUND_JSON_DEPTH
/* Serialized output of one action; more is a handler bug, not a result. */
#define BOUND_ACTION_OUTPUT_BYTES (1024u * 1024)

/* --- the mcp plugin (src/plugins/mcp*.c): MCP servers as tools -------- */

/* The text of one tools/call result handed to the model, cut there:
 * under BOUND_ACTION_OUTPUT_BYTES even when every byte is escaped. */
#define MCP_RESULT_BYTES     (128u * 1024)
/* Each exchange with a server (start and handshake, or one call) ends by
 * then; plugins.config.mcp.timeoutMs may lower or raise it up to the
 * bound. The default stays under DEFAULT_ACTION_TIMEOUT_MS, so a slow
 * server is a tool error before the action watchdog ends the worker. */
#define MCP_TIMEOUT_MS       8000
#define BOUND_MCP_TIMEOUT_MS BOUND_ACTION_TIMEOUT_MS
/* --- built-in plugins file_edit and cli (plugins/fileedit.c, cli.c) ---- */

/* file_edit's maxFileBytes: the largest file it reads whole or changes
 * (each change keeps a copy of the old content, in memory and as a
 * backup). A source file of 1 MiB is already unusual. */
#define DEFAULT_FILEEDIT_FILE_BYTES (1024u * 1024)
#define BOUND_FILEEDIT_FILE_BYTES   (16u * 1024 * 1024)
/* Content one Read returns (the rest with offset/limit): the answer
 * carries it twice (numbered `text`, and file.content), JSON may escape
 * a byte into 6, and it must stay within BOUND_ACTION_OUTPUT_BYTES. */
#define BOUND_FILEEDIT_READ_BYTES   (64u * 1024)
/* cli: timeoutMs of a command (default and ceiling) and maxOutputBytes
 * of each of its stdout and stderr; both must fit one answer after JSON
 * escaping (6 bytes a byte at worst). */
#define DEFAULT_CLI_TIMEOUT_MS      120000
#define BOUND_CLI_TIMEOUT_MS        600000
#define DEFAULT_CLI_OUTPUT_BYTES    (64u * 1024)
#define BOUND_CLI_OUTPUT_BYTES      (64u * 1024)
/* Claude Code's tools (docs/plugins/file_edit.md):
 * its own limits, kept as it states them. Read: lines by default and
 * characters of one line; Glob: files listed; Grep: head_limit's
 * default; LS: characters of the tree (and entries walked for it); the
 * lines around an Edit's snippet; Bash: characters of stdout and of
 * stderr. */
#define FILEEDIT_READ_LINES         2000
#define FILEEDIT_LINE_CHARS         2000
#define FILEEDIT_GLOB_FILES         100
#define FILEEDIT_GREP_HEAD          250
#define FILEEDIT_LS_CHARS           40000
#define FILEEDIT_LS_ENTRIES         1000
#define FILEEDIT_SNIPPET_LINES      4
#define CLI_BASH_OUTPUT_CHARS       30000
/* Ours: the bytes of a Glob, Grep or LS listing (carried twice in one
 * answer, 6 bytes a byte escaped at worst); the entries one walk of a
 * folder tree looks at and how deep it goes; the addDirs folders; the
 * edits of one MultiEdit. */
#define BOUND_FILEEDIT_LIST_BYTES   (64u * 1024)
#define BOUND_FILEEDIT_WALK_ENTRIES 200000
#define BOUND_FILEEDIT_WALK_DEPTH   64
#define BOUND_FILEEDIT_ADD_DIRS     32
#define BOUND_FILEEDIT_EDITS        100

/* --- built-in plugin: todo (src/plugins/todo.c) ------------------------- */

/* Steps in one plan: a plan the model keeps for a task, not a backlog;
 * plugins.config.todo.maxSteps may lower it (default = the bound). */
#define BOUND_TODO_STEPS   100
#define DEFAULT_TODO_STEPS 30
/* Bytes of one step's title: a line of a checklist. */
#define BOUND_TODO_TITLE   300
/* Plans kept on disk (one file per conversation): a public widget must
 * not be able to fill the disk, so the oldest (by mtime) go past this;
 * plugins.config.todo.maxPlans may lower it. A plan file is at most about
 * BOUND_TODO_STEPS * (BOUND_TODO_TITLE * 6 + 64) bytes (escaped titles). */
#define BOUND_TODO_PLANS   1000000
#define DEFAULT_TODO_PLANS 10000

/* Compaction (.gemini.yaml `compaction:`, term/compact.h): it starts when
 * a prompt reached this share of the model's window ... */
#define DEFAULT_COMPACT_AT_PERCENT 80
/* ... and keeps this many of the last user turns whole. */
#define DEFAULT_COMPACT_KEEP_TURNS 2
#define BOUND_COMPACT_KEEP_TURNS   64
/* The largest window `contextWindow` may claim (tokens), and the window of
 * a model the price table (term/streamjson.c) does not know. */
#define BOUND_CONTEXT_WINDOW       (16L * 1024 * 1024)
#define DEFAULT_CONTEXT_WINDOW     1048576L

/* --- the permission policy (registry/permission.h) --------------------- */

/* A glob in a permission entry (`pattern`, `signature`). fnmatch(3)
 * backtracks, so both sides of every match are bounded: glibc 2.36 answers
 * `*a*a*a*a*a*a*a*b` against a subject of the longest kind in microseconds,
 * and these caps keep it so on any libc. */
#define BOUND_PERMISSION_PATTERN 512
/* The text a glob is matched against: a call signature `tool(k=v, ...)` or
 * one argument's value. A longer one is never allowed by a glob and always
 * caught by a deny glob (fail closed). */
#define BOUND_PERMISSION_SUBJECT 8192

/* --- generated files --------------------------------------------------- */

/* libyaml refuses implicit (`key:`) keys longer than 1024 characters; a
 * quoted key may take 4 characters per byte (`\x01`), so keys longer than
 * this are written in the explicit `? key` form. */
#define BOUND_YAML_KEY_INLINE 200

/* --- budgets (http/budget.h, docs/configuration.md "Budget") ------ */

/* budget.*.requestsPerMinute and tokensPerDay: at most these (a site's
 * whole day at Gemini's highest paid quota fits in the second). */
#define BOUND_BUDGET_REQUESTS_PER_MINUTE 1000000L
#define BOUND_BUDGET_TOKENS_PER_DAY      1000000000000L
/* Addresses in budget.trustForwardedFor and http.status.allow: proxies
 * and operators, a short list read on every request. */
#define BOUND_ADDRESS_LIST               64
/* Origins in http.cors.allowOrigins (compared on every request), and the
 * length of one: a DNS name is at most 253 bytes, with scheme and port. */
#define BOUND_CORS_ORIGINS               64
#define BOUND_CORS_ORIGIN_BYTES          300

/* --- identity (token.h, auth.h) ---------------------------------------- */

/* A user name, in bytes (without its NUL): e-mail addresses and directory
 * names fit. The name is stored with every thread and run and written in
 * the audit, so it is bounded like any other client text. */
#define BOUND_USER_NAME     128
/* The session secret's least length: 32 bytes, SHA-256's output. RFC 2104
 * advises a key no shorter than the hash's output; a shorter one makes
 * forging tokens easier than breaking the hash. */
#define BOUND_SECRET_MIN    32
/* The most of a secret file we read. HMAC hashes a key longer than 64
 * bytes down to 32 anyway; this only keeps a wrong file (a log, an image)
 * from being read into memory whole. */
#define BOUND_SECRET_MAX    1024
/* The longest token (without its NUL): "v1." + base64url of a
 * BOUND_USER_NAME-byte name (171) + "." + the expiry (19 digits at most) +
 * "." + the signature (43) is 239; anything longer is malformed, read no
 * further. */
#define BOUND_TOKEN_LEN     255
/* `auth issue --ttl`: a week by default, at most 90 days - a token cannot
 * be revoked before it expires (short of changing the secret, which ends
 * every session at once). */
#define DEFAULT_TOKEN_TTL_S (7L * 24 * 3600)
#define BOUND_TOKEN_TTL_S   (90L * 24 * 3600)
/* The session cookie's name (sessionCookie). */
#define BOUND_COOKIE_NAME   64
/* The variable of auth.remoteUser: a CGI variable name, short by habit. */
#define BOUND_ENV_NAME      64

/* --- paths ------------------------------------------------------------- */

#define BOUND_PATH_LEN 4096

#if DEFAULT_BODY_BYTES > BOUND_BODY_BYTES
#error "DEFAULT_BODY_BYTES exceeds BOUND_BODY_BYTES"
#endif
#if DEFAULT_LOOP_STEPS > BOUND_LOOP_STEPS
#error "DEFAULT_LOOP_STEPS exceeds BOUND_LOOP_STEPS"
#endif
#if DEFAULT_OUTPUT_TOKENS > BOUND_OUTPUT_TOKENS
#error "DEFAULT_OUTPUT_TOKENS exceeds BOUND_OUTPUT_TOKENS"
#endif
#if DEFAULT_UPSTREAM_PER_BODY * BOUND_BODY_BYTES > BOUND_REQUEST_UPSTREAM
#error "the default upstream bound of the largest body exceeds its ceiling"
#endif
#if DEFAULT_GEMINI_TIMEOUT_MS > BOUND_GEMINI_TIMEOUT_MS
#error "DEFAULT_GEMINI_TIMEOUT_MS exceeds BOUND_GEMINI_TIMEOUT_MS"
#endif
#if BOUND_JSON_DEPTH > BOUND_JSCAN_DEPTH
#error "request bodies may not nest deeper than jscan reads"
#endif
#if BOUND_BODY_BYTES > BOUND_JSCAN_BYTES ||                                    \
    BOUND_UPSTREAM_BYTES > BOUND_JSCAN_BYTES
#error "jscan cannot hold offsets into a body this large"
#endif
#if 3 + (BOUND_USER_NAME * 4 + 2) / 3 + 1 + 19 + 1 + 43 > BOUND_TOKEN_LEN
#error "BOUND_TOKEN_LEN cannot hold a token for the longest user name"
#endif
#if DEFAULT_TOKEN_TTL_S > BOUND_TOKEN_TTL_S
#error "DEFAULT_TOKEN_TTL_S exceeds BOUND_TOKEN_TTL_S"
#endif
#if BOUND_PERMISSION_PATTERN > BOUND_PERMISSION_SUBJECT
#error "a permission glob may not be longer than what it is matched against"
#endif
#if MCP_TIMEOUT_MS > DEFAULT_ACTION_TIMEOUT_MS
#error "MCP_TIMEOUT_MS must stay under the default action watchdog"
#endif
#if MCP_RESULT_BYTES * 6 + 4096 > BOUND_ACTION_OUTPUT_BYTES
/* clang-format off */
#error "an MCP result, escaped (\\u00XX: 6 bytes a byte), may outgrow the action output bound"
/* clang-format on */
#endif
#if 2 * 6 * BOUND_FILEEDIT_READ_BYTES + 16 * FILEEDIT_READ_LINES + 4096 >      \
    BOUND_ACTION_OUTPUT_BYTES
#error "a Read answer may not exceed the action output bound"
#endif
#if 2 * 6 * BOUND_FILEEDIT_LIST_BYTES + 4096 > BOUND_ACTION_OUTPUT_BYTES
#error "a Glob, Grep or LS answer may not exceed the action output bound"
#endif
#if 4 * 6 * CLI_BASH_OUTPUT_CHARS + 4096 > BOUND_ACTION_OUTPUT_BYTES
/* clang-format off */
#error "a Bash answer (text and stdout, stderr) may not exceed the action output bound"
/* clang-format on */
#endif
#if 2 * 6 * BOUND_CLI_OUTPUT_BYTES + 4096 > BOUND_ACTION_OUTPUT_BYTES
#error "a cli answer may not exceed the action output bound"
#endif
#if DEFAULT_FILEEDIT_FILE_BYTES > BOUND_FILEEDIT_FILE_BYTES ||                 \
    DEFAULT_CLI_TIMEOUT_MS > BOUND_CLI_TIMEOUT_MS ||                           \
    DEFAULT_CLI_OUTPUT_BYTES > BOUND_CLI_OUTPUT_BYTES
#error "a file_edit or cli default exceeds its bound"
#endif
#if BOUND_SCHEMA_DEPTH > BOUND_JSON_DEPTH
#error "a schema may not nest deeper than the JSON that carries it"
#endif

#if DEFAULT_TODO_STEPS > BOUND_TODO_STEPS ||                                   \
    DEFAULT_TODO_PLANS > BOUND_TODO_PLANS
#error "a todo default exceeds its bound"
#endif

#endif /* APP_BOUNDS_H */
