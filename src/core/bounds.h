/*
 * bounds.h - every limit of gemini-agent, in one place, with its reason.
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

#define BOUND_HISTORY_TURNS       2000
#define DEFAULT_HISTORY_TURNS     200
#define BOUND_TOOLS               512
#define DEFAULT_TOOLS             128
#define BOUND_PAGE_STATE_BYTES    (4u * 1024 * 1024)
#define DEFAULT_PAGE_STATE_BYTES  (256u * 1024)
/* Gemini calls per request: config and AGENT_MAX_LOOP_STEPS are clamped
 * to 1..15 (docs/configuration.md). */
#define BOUND_LOOP_STEPS          15
#define DEFAULT_LOOP_STEPS        8

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

/* A page tool's description, as declared to Gemini, keeps at most this
 * many bytes: it is page data sent with every step of every request (one
 * page sent 900 KB). */
#define BOUND_TOOL_DESCRIPTION    1024
/* The site's part of the system instruction (persona, rules, the server
 * actions' names). */
#define BOUND_PROMPT_FIXED_BYTES  (256u * 1024)
/* A model turn the chat keeps may take at most this share of
 * limits.maxBodyBytes as JSON text (agent/turn.h): the history that
 * holds it must still fit in a later request beside the visitor's
 * message, the page state and the turns before it. */
#define BOUND_MODEL_TURN_SHARE    4
/* Names quoted back in messages are cut here: they come from the browser. */
#define BOUND_NAME_SHOWN          64
/* A conversation key's token (agent/convkey.h), at most: the longest it
 * writes. */
#define BOUND_CONVKEY_TOKEN       64

/* --- memory ------------------------------------------------------------ */

/* Bytes one request may allocate in all (memlimit.h): the arena's blocks,
 * sbuf growth and jansson's allocations, counted as they are made. A
 * large honest request (an 8 MiB body, 15 Gemini steps) stays far below;
 * past it the request gets a 500, before the machine runs short. */
#define BOUND_REQUEST_MEMORY      (512u * 1024 * 1024)
/* Most requests fit in one arena block of this size, which
 * arena_reset() keeps between requests. */
#define BOUND_ARENA_BLOCK         (16u * 1024)
/* Later blocks are half as large as the arena so far, up to this: a
 * large request takes a handful of blocks. */
#define BOUND_ARENA_GROWTH        (1024u * 1024)
/* What a loop step's request gets beyond the texts it copies (the
 * conversation's new turns, the brackets), before its buffer grows. */
#define BOUND_LOOP_STEP_ROOM      (16u * 1024)

/* --- time -------------------------------------------------------------- */

/* Total deadline of one Gemini call, retries included. It must end before
 * nginx's fastcgi_read_timeout (nginx/gemini-agent.conf sets 300 s). */
#define BOUND_GEMINI_TIMEOUT_MS   280000
#define DEFAULT_GEMINI_TIMEOUT_MS 60000
#define BOUND_ACTION_TIMEOUT_MS   120000
#define DEFAULT_ACTION_TIMEOUT_MS 10000
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
#define BOUND_CALLS_PER_TURN      128
#define DEFAULT_CALLS_PER_TURN    16

/* A stream with no event for this long gets a status line: proxies cut a
 * silent response after their read timeout (Apache's FcgidIOTimeout is
 * 40 s, many proxies 60 s), and a model that thinks, or a chain of tools,
 * can be silent for longer (streamHeartbeatMs). */
#define BOUND_STREAM_HEARTBEAT_MS   60000
/* ... and at least this: libcurl asks about the wait on Gemini about once
 * a second, which is where the heartbeat is kept (streaming.md) */
#define MIN_STREAM_HEARTBEAT_MS     1000
#define DEFAULT_STREAM_HEARTBEAT_MS 15000

/* --- the run API's request (seed 001 §2): every cut is reported --------- */

/* The prompt, in bytes (cut at a character). */
#define RUN_PROMPT_MAX            16384
/* `conversation`: the newest turns kept, and each text's bytes. */
#define RUN_CONVERSATION_MAX      40
#define RUN_TEXT_MAX              4000
/* `attachedContext`: entries kept, bytes of each string (id, title,
 * snippet), and the depth and compact size of an entry's `meta`. */
#define RUN_CONTEXT_MAX           12
#define RUN_CONTEXT_STRING_MAX    500
#define RUN_CONTEXT_META_DEPTH    4
#define RUN_CONTEXT_META_BYTES    2048
/* How long an approval waits for the user (policy.approvalTtlMs). */
#define BOUND_APPROVAL_TTL_MS     (30L * 24 * 3600 * 1000)
#define DEFAULT_APPROVAL_TTL_MS   (24L * 3600 * 1000)
/* How long the chat's approval ticket stays good (issue 12 §1): the
 * visitor is looking at the card; a day-old one is not a decision. */
#define DEFAULT_TICKET_TTL_MS     (10L * 60 * 1000)
/* A ticket, "t1.<expiry ms>.<MAC>", and a signature in `signatures`,
 * longer than this is no ticket or signature of ours. */
#define BOUND_TICKET_LEN          64
/* The approval card's words (the action's description and arguments). */
#define BOUND_PREVIEW_BYTES       1000
/* Types of attachedContext a site may accept, and their length. */
#define BOUND_CONTEXT_TYPES       32
#define BOUND_CONTEXT_TYPE_LEN    64
/* A threadId is a store id; anything longer is not one. */
#define RUN_THREAD_ID_MAX         64

/* A CGI host that announces more body than it sends and keeps stdin open
 * must not hang the process: give up after this long without a byte. */
#define BOUND_CGI_READ_MS         10000
/* The same for a FastCGI connection, each way: a peer that sends nothing
 * (no head, a body that stops) or reads nothing of the answer for this
 * long is dropped and its thread freed (worker.c, take_connection). */
#define BOUND_FCGI_IO_MS          10000
/* ... and a FastCGI request's head (BEGIN_REQUEST and the params) must
 * have arrived whole this long after the connection was taken: a head
 * trickled in under the read timeout is cut then (nginx sends its head
 * at once). */
#define BOUND_FCGI_HEAD_MS        10000

/* --- the Gemini client ------------------------------------------------- */

/* Retries after the first attempt: at most 2 (wire §11). */
#define GEMINI_MAX_RETRIES     2
/* First back-off; doubles per retry, plus up to 50% jitter. */
#define GEMINI_BACKOFF_BASE_MS 500
/* Connecting to Gemini must not take longer than this. */
#define GEMINI_CONNECT_MS      5000
/* A response that started and then sent nothing for this long is a stall
 * (before the first byte only the deadline applies: thinking is slow). */
#define GEMINI_STALL_MS        15000
/* A retry is only worth making when at least this much time is left after
 * the wait; an attempt with less can only time out. */
#define GEMINI_MIN_ATTEMPT_MS  100
/* How often a call in flight asks whether its visitor is still there. */
#define GEMINI_GONE_CHECK_MS   200
/* Gemini's message quoted in our log line (visitors never see it). */
#define BOUND_GEMINI_QUOTE     200
/* The longest wait an upstream Retry-After or RetryInfo may ask for. It is
 * passed on in the visitor's Retry-After and may be waited out by a worker
 * before a retry, so a broken or hostile upstream sending 99999 must not
 * park either for a day; Gemini's own delays are tens of seconds. */
#define GEMINI_RETRY_HINT_MAX_MS 60000
/* Largest Gemini response body we keep; more is cut off (bad response). */
#define BOUND_UPSTREAM_BYTES   (16u * 1024 * 1024)

/* --- Google credentials (gemini/credentials.h) ------------------------- */

/* An ADC file (service-account key or authorized_user) is a few KB. */
#define CRED_FILE_MAX          (64u * 1024)
/* The token endpoint's answer: a token and a few fields. */
#define CRED_RESPONSE_MAX      (64u * 1024)
/* A token request, connect included; a token endpoint answers in ms. */
#define CRED_TIMEOUT_MS        15000
#define CRED_CONNECT_MS        5000
/* `gcloud auth print-access-token` may refresh its own token first (a
 * network round trip behind a Python start-up): give it longer. */
#define CRED_GCLOUD_TIMEOUT_MS 30000
/* What gcloud may print on stdout; a token is about 200 bytes. */
#define CRED_GCLOUD_OUTPUT_MAX (16u * 1024)
/* Longest access token we accept (Google documents up to 2048 bytes). */
#define CRED_TOKEN_MAX         4096
/* A token this close to its expiry is refreshed before use. */
#define CRED_REFRESH_MARGIN_S  60
/* A service account's assertion lives this long (Google's maximum). */
#define CRED_JWT_LIFETIME_S    3600
/* gcloud does not say when its token expires: ask it again after this. */
#define CRED_GCLOUD_CACHE_S    300
/* expires_in above this is taken as this (Google's tokens live 1 h). */
#define CRED_EXPIRES_MAX_S     86400
/* An OAuth `error` code quoted in an error ("invalid_grant"); a longer
 * or stranger one is not quoted. */
#define CRED_OAUTH_CODE_MAX    40
/* Nesting in an ADC file or a token answer (both are flat objects). */
#define CRED_JSON_DEPTH        16
/* A Vertex AI project, location or model id in a URL path. */
#define VERTEX_SEGMENT_MAX     128
/* Vertex AI's streamed function-call arguments (gemini/chunks.h, wire
 * §6.4): a partialArgs jsonPath's depth, one key in it, an array index
 * in it (arrays are filled up to the index, so it bounds them too). */
#define CHUNKS_PATH_DEPTH      32
#define CHUNKS_PATH_KEY        256
#define CHUNKS_PATH_INDEX      4096

/* --- workers ----------------------------------------------------------- */

#define BOUND_WORKERS             64
#define DEFAULT_WORKERS           2
/* Request threads per worker (--threads). A chat spends seconds waiting
 * on Gemini and microseconds of CPU, so a thread per chat in flight is
 * what lets one box hold hundreds: the default pair of workers holds 256
 * chats at once. Each idle thread costs its stack's touched pages and a
 * 16 KB arena block. */
#define BOUND_THREADS             1024
#define DEFAULT_THREADS           128
/* Requests that may wait for a free thread, per worker (--queue), and how
 * long one waits before it is told to come back: past either the answer
 * is a fast 503 with Retry-After, not minutes in the listen backlog. */
#define BOUND_QUEUE               1024
#define DEFAULT_QUEUE             32
#define WORKER_QUEUE_WAIT_MS      5000
#define OVERLOAD_RETRY_AFTER_S    2
/* Stack of a request thread. Our deepest paths (schema validation, regex,
 * a TLS handshake, the resolver) use tens of KB; only touched pages count. */
#define WORKER_THREAD_STACK       (512u * 1024)
/* malloc arenas per worker (glibc's M_ARENA_MAX). Its default is 8 per
 * core, each keeping what its threads freed; fewer hold less, but at 2 a
 * burst of 1,000 chats queued on the arenas' locks (measured). */
/* libcurl's upload buffer per request thread (its minimum, 16 KB; the
 * default is 64 KB): a request of 300 KB is sent in more writes, and a
 * worker's thousand threads keep 48 MB less. */
#define GEMINI_UPLOAD_BUFFER      (16u * 1024)
/* ...and for one call with a large body, the most it grows to for that
 * call (transport.c upload_buffer) */
#define GEMINI_UPLOAD_BUFFER_MAX  (256u * 1024)
#define WORKER_MALLOC_ARENAS      8
/* Blocks below this come from malloc's arenas, not mmap, so a request's
 * large buffers (its body, the Gemini request, 1 MB arena blocks) reuse
 * memory; and an arena keeps up to WORKER_MALLOC_TRIM of free memory
 * rather than handing it back to be faulted in again by the next
 * request. glibc's own thresholds move with the load, and after a run of
 * small requests a large one paid ~50% more CPU in page faults (measured). */
#define WORKER_MALLOC_MMAP        (4u * 1024 * 1024)
#define WORKER_MALLOC_TRIM        (8u * 1024 * 1024)
/* ...and gives it back once it is idle: no request in flight and no new
 * connection for this long since the last one (malloc_trim). Without it a
 * worker kept what each arena's busiest moment left free, and its RSS
 * stepped up whenever a burst first put a thread on an arena nobody had
 * used (tests/bench/soak.sh: about 0.5 MB a step, 8 steps at most). */
#define WORKER_IDLE_TRIM_MS       1000
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

/* A worker that dies sooner than this after it started counts as a crash
 * loop; its replacement waits BACKOFF_MIN_MS, doubling to BACKOFF_MAX_MS. */
#define WORKER_CRASH_WINDOW_MS 1000
#define WORKER_BACKOFF_MIN_MS  100
#define WORKER_BACKOFF_MAX_MS  5000
/* How long a stopping master waits for workers to finish requests in
 * flight before it kills them: a whole Gemini call plus margin. */
#define WORKER_STOP_GRACE_MS   (BOUND_GEMINI_TIMEOUT_MS + 5000)

/* --- YAML files (agent.yaml, plugin.yaml, .jay-action) -------------------- */

/* libyaml 0.2.5 has no nesting limit of its own: we stop at this depth. */
#define BOUND_YAML_DEPTH  32
/* Nodes per YAML document: a .jay-action has tens; this refuses billions. */
#define BOUND_YAML_NODES  20000
/* Bytes per YAML file. */
#define BOUND_YAML_BYTES  (1024u * 1024)

/* --- server actions ---------------------------------------------------- */

#define BOUND_PLUGINS             64
#define BOUND_ACTIONS             512
/* What a shared-object plugin hands over at load time (declarations,
 * instructions, tool lists: JSON or text) and the message of a failed
 * call, cut there. */
#define BOUND_SO_TEXT_BYTES       (256u * 1024)
#define BOUND_SO_MESSAGE          300
/* Names: `<plugin>.<name>`; each part is an identifier of this length. */
#define BOUND_NAME_LEN            64
/* JSON Schema nesting in a .jay-action (also caps validator recursion). */
#define BOUND_SCHEMA_DEPTH        BOUND_JSON_DEPTH
/* Longest JSON pointer jschema builds while it walks an instance; a longer
 * one is cut (and the error says so). */
#define BOUND_JSON_POINTER        1024
/* Longest POSIX ERE `pattern` we compile. */
#define BOUND_PATTERN_LEN         1024
/* ... and the most it may grow to when glibc's regcomp expands counted
 * repetitions: `(((a{0,255}){0,255}){0,255})` is 30 bytes that regcomp
 * turns into gigabytes. Each atom counts 1, times the bounds of the
 * repetitions around it; and the optional copies of one repetition
 * ({n,m}: m - n of them) cost regcomp about their square in memory, so
 * they have a bound of their own (a{1,4000} alone takes 128 MB). Within
 * both, the costliest patterns measured compile in under 50 MB. */
#define BOUND_PATTERN_COST        10000
#define BOUND_PATTERN_RANGE       500
/* Serialized output of one action; more is a handler bug, not a result. */
#define BOUND_ACTION_OUTPUT_BYTES (1024u * 1024)
/* A schema violation's message, with its NUL: path, what was wrong, rule.
 * Longer ones end in "..."; a client or the model needs the start, and
 * it stays below STATUS_TEXT_MAX so the cut is this visible one. */
#define SCHEMA_MESSAGE_MAX        256

/* --- the mcp plugin (src/plugins/mcp*.c): MCP servers as tools -------- */

/* .mcp.json: a few servers of a few lines each. */
#define MCP_CONFIG_BYTES        (256u * 1024)
#define MCP_MAX_SERVERS         16
/* Arguments and environment entries of one stdio server's command. */
#define MCP_MAX_ARGS            64
#define MCP_MAX_ENV             64
/* Extra HTTP headers of one Streamable HTTP server. */
#define MCP_MAX_HEADERS         32
/* One JSON-RPC message (a stdio line, an HTTP body or SSE stream): a
 * tools/list page of a large server is tens of KB; results are cut far
 * below by MCP_RESULT_BYTES, so more is a runaway server. */
#define MCP_MESSAGE_BYTES       (4u * 1024 * 1024)
/* Non-answers (notifications, logs, requests to us) skipped while one
 * call waits for its answer; more is a server talking to itself. */
#define MCP_MAX_SKIPPED         1000
/* tools/list pages followed through nextCursor; a cursor longer than
 * this, or one seen before, ends the listing (a server that pages
 * forever). */
#define MCP_MAX_LIST_PAGES      32
#define MCP_CURSOR_BYTES        1024
/* Tools of one server: one greedy server must not take every action of
 * the site (BOUND_ACTIONS in all). */
#define MCP_MAX_SERVER_TOOLS    256
/* Tools left out of one server's listing that are logged one by one; the
 * rest are counted in one line. */
#define MCP_LOG_LEFT_OUT        8
/* A tool's inputSchema nested deeper than this (JSON levels) is declared
 * as any object: the declarations and the Gemini request wrap it in a
 * few more levels, and BOUND_JSON_DEPTH applies to both. */
#define MCP_SCHEMA_DEPTH        24
/* A structuredContent nested deeper than this is not the answer (its
 * text content is): the answer is kept in the conversation's history,
 * which a later request sends back under BOUND_JSON_DEPTH. */
#define MCP_RESULT_DEPTH        16
/* A stdio server's stderr goes to the log line by line, each cut at
 * this many bytes, at most MCP_STDERR_LINES lines a minute (the rest
 * are counted and dropped: a server that writes without end must not
 * fill the serve log). */
#define MCP_STDERR_LINE_BYTES   200
#define MCP_STDERR_LINES        50
/* A tool's description as declared to the model, cut there. */
#define MCP_DESCRIPTION_BYTES   2048
/* The text of one tools/call result handed to the model, cut there:
 * under BOUND_ACTION_OUTPUT_BYTES even when every byte is escaped. */
#define MCP_RESULT_BYTES        (128u * 1024)
/* Each exchange with a server (start and handshake, or one call) ends by
 * then; plugins.config.mcp.timeoutMs may lower or raise it up to the
 * bound. The default stays under DEFAULT_ACTION_TIMEOUT_MS, so a slow
 * server is a tool error before the action watchdog ends the worker. */
#define MCP_TIMEOUT_MS          8000
#define BOUND_MCP_TIMEOUT_MS    BOUND_ACTION_TIMEOUT_MS
/* How long a stopping stdio server has after SIGTERM before SIGKILL. */
#define MCP_STOP_GRACE_MS       1000
/* --- questions for the user (registry/question.h; plugin `clarification`)
 * A tool that asks (GEMINI_AGENT_ASK_USER) asks a few short questions; the
 * widget shows them all on one card, so these keep it readable. */
#define BOUND_QUESTIONS           8    /* questions in one call */
#define BOUND_QUESTION_OPTIONS    12   /* choices of one question */
#define BOUND_QUESTION_ID         64   /* bytes of a question's id */
#define BOUND_QUESTION_TEXT       500  /* bytes of a question's text */
#define BOUND_QUESTION_OPTION     200  /* bytes of one choice */
#define BOUND_ANSWER_TEXT         2000 /* bytes of a free-text answer */
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
/* Changes file_edit can undo; older backups are deleted. */
#define BOUND_FILEEDIT_UNDO         100
/* cli: timeoutMs of a command (default and ceiling) and maxOutputBytes
 * of each of its stdout and stderr; both must fit one answer after JSON
 * escaping (6 bytes a byte at worst). */
#define DEFAULT_CLI_TIMEOUT_MS      120000
#define BOUND_CLI_TIMEOUT_MS        600000
#define DEFAULT_CLI_OUTPUT_BYTES    (64u * 1024)
#define BOUND_CLI_OUTPUT_BYTES      (64u * 1024)
/* extraPaths and env entries of the cli config: a short list a person
 * writes. */
#define BOUND_CLI_CONFIG_ENTRIES    64
/* After the shell exits, how long its output pipes may stay open (held
 * by something it left running in the background) before the rest of
 * its process group is killed. */
#define CLI_DRAIN_MS                200
/* Claude Code's tools (issue 14 section 3; /work/shared/research/cli.md):
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
/* --- built-in plugins: web_search and references (src/plugins/) --------- */

/* webget.c: redirects a references URL may take (web_search takes none). */
#define BOUND_WEBGET_REDIRECTS          3
/* A timeoutMs either plugin accepts. The default stays under the action
 * watchdog's (DEFAULT_ACTION_TIMEOUT_MS), so a slow endpoint ends as the
 * tool's error, not as a killed worker; a longer one needs a longer
 * limits.actionTimeoutMs (the plugin docs say so). */
#define BOUND_WEB_TIMEOUT_MS_MAX        60000
#define WEBSEARCH_TIMEOUT_MS_DEFAULT    8000
/* Results handed to the model: SearXNG returns about 20 a page, and each
 * one costs the model ~200 tokens of input. */
#define BOUND_WEBSEARCH_RESULTS         20
#define WEBSEARCH_RESULTS_DEFAULT       5
/* The query the model sends (bytes, schema maxLength in characters). */
#define BOUND_WEBSEARCH_QUERY           512
/* Per result, after whitespace is collapsed; longer text is cut at a
 * character boundary and ends in "...". A longer url is dropped (a url
 * cut short is a wrong url). */
#define BOUND_WEBSEARCH_TITLE           200
#define BOUND_WEBSEARCH_SNIPPET         600
#define BOUND_WEBSEARCH_URL             2048
/* The endpoint's whole answer: 20 results with content are ~50 KiB;
 * infoboxes and suggestions can add some. */
#define BOUND_WEBSEARCH_RESPONSE_BYTES  (2u * 1024 * 1024)
/* The endpoint URL, a region code, the optional headers (count and one
 * "Name: value" line). */
#define BOUND_WEBSEARCH_ENDPOINT        2048
#define BOUND_WEBSEARCH_REGION          32
#define BOUND_WEBSEARCH_HEADERS         16
#define BOUND_WEBSEARCH_HEADER_LINE     4096
/* references: sources per site, one source's content (maxBytes: default
 * and ceiling; escaped as JSON it stays well under
 * BOUND_ACTION_OUTPUT_BYTES), its description, its file/url text, and
 * the cache lifetime of a URL source (cacheSeconds: default, ceiling).
 * Bounds a config schema quotes are plain numbers (the schema text is
 * made by stringizing them). */
#define BOUND_REFERENCES_SOURCES        64
#define REFERENCES_MAX_BYTES_DEFAULT    (64u * 1024)
#define BOUND_REFERENCES_MAX_BYTES      262144 /* 256 KiB */
#define BOUND_REFERENCES_DESCRIPTION    300
#define BOUND_REFERENCES_LOCATION       2048
#define REFERENCES_CACHE_SECONDS_DEFAULT 300
#define BOUND_REFERENCES_CACHE_SECONDS  86400
#define REFERENCES_TIMEOUT_MS_DEFAULT   8000
/* What @name enrichment may add to one prompt, all sources together: a
 * source that would pass it is left out (and named in the metadata). */
#define BOUND_REFERENCES_PROMPT_BYTES   (512u * 1024)
/* --- built-in plugin: todo (src/plugins/todo.c) ------------------------- */

/* Steps in one plan: a plan the model keeps for a task, not a backlog;
 * plugins.config.todo.maxSteps may lower it (default = the bound). */
#define BOUND_TODO_STEPS          100
#define DEFAULT_TODO_STEPS        30
/* Bytes of one step's title: a line of a checklist. */
#define BOUND_TODO_TITLE          300
/* Plans kept on disk (one file per conversation): a public widget must
 * not be able to fill the disk, so the oldest (by mtime) go past this;
 * plugins.config.todo.maxPlans may lower it. A plan file is at most about
 * BOUND_TODO_STEPS * (BOUND_TODO_TITLE * 6 + 64) bytes (escaped titles). */
#define BOUND_TODO_PLANS          1000000
#define DEFAULT_TODO_PLANS        10000

/* cli, interrupted (issue 14 section 2): how often a running command
 * asks whether the call was cancelled (ctx->cancelled), and how long its
 * process group has after SIGTERM before SIGKILL. */
#define CLI_CANCEL_CHECK_MS         100
#define CLI_KILL_GRACE_MS           500

/* --- the terminal client (src/term/, `gemini-agent chat`) -------------- */
/* --allowedTools / --disallowedTools flags kept (each may list many). */
#define BOUND_TERM_RULE_FLAGS    32
/* Rules over all those flags together (a name or `Bash(prefix:*)`). */
#define BOUND_TERM_RULES         256
/* Gemini answers of one prompt when --max-turns says nothing; a larger
 * --max-turns is cut to it. */
#define BOUND_TERM_TURNS         100
/* One line of --input-format stream-json (a user message, a control
 * request); a longer line is an error and ends the session. */
#define BOUND_TERM_INPUT_LINE    (8u * 1024 * 1024)
/* User messages that arrive while a tool waits for permission, kept
 * for after the turn. */
#define BOUND_TERM_QUEUED        64
/* --add-dir folders (the file_edit plugin's addDirs take as many). */
#define BOUND_TERM_ADD_DIRS      32
/* A session id (--session-id, --resume): Claude Code's are uuids. */
#define BOUND_TERM_SESSION_ID    127
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
/* The summary a compaction asks for, at most (maxOutputTokens). */
#define BOUND_COMPACT_SUMMARY_TOKENS 8192
/* Bytes of a tool call's one-line summary in the interactive terminal
 * (`Read(a.txt)`, `Bash(ls -l)`): a long command is cut with "…" so the
 * call stays one line of a terminal. */
#define BOUND_TTY_SUMMARY        160

/* --- the permission policy (registry/permission.h) --------------------- */

/* A glob in a permission entry (`pattern`, `signature`). fnmatch(3)
 * backtracks, so both sides of every match are bounded: glibc 2.36 answers
 * `*a*a*a*a*a*a*a*b` against a subject of the longest kind in microseconds,
 * and these caps keep it so on any libc. */
#define BOUND_PERMISSION_PATTERN   512
/* The text a glob is matched against: a call signature `tool(k=v, ...)` or
 * one argument's value. A longer one is never allowed by a glob and always
 * caught by a deny glob (fail closed). */
#define BOUND_PERMISSION_SUBJECT   8192
/* Arguments in one signature (sorted on the stack); more, and the
 * signature counts as too long. */
#define BOUND_PERMISSION_ARGS      64
/* Entries in one allow or deny list of the site's policy. */
#define BOUND_PERMISSION_ENTRIES   256

/* --- generated files --------------------------------------------------- */

/* Files the commands generate (types, agent kit) are small; this cap
 * only stops a runaway. */
#define BOUND_GENERATED_BYTES (4u * 1024 * 1024)
/* TypeScript type names come from registered names `<plugin>.<name>`, each
 * part at most BOUND_NAME_LEN; a leading digit costs one `_`. */
#define BOUND_TS_TYPE_NAME    (2 * BOUND_NAME_LEN + 8)
/* libyaml refuses implicit (`key:`) keys longer than 1024 characters; a
 * quoted key may take 4 characters per byte (`\x01`), so keys longer than
 * this are written in the explicit `? key` form. */
#define BOUND_YAML_KEY_INLINE 200

/* --- the store (store/store.h) ----------------------------------------- */

/* How long a write waits for another connection's transaction before it
 * gives up with "the store is busy". Writes are a few rows each and take
 * microseconds to milliseconds, so only a stuck writer waits this long. */
#define STORE_BUSY_MS                5000
/* A user id, in bytes (without its NUL): identities are opaque strings
 * from the auth layer (a Firebase uid is at most 128). */
#define BOUND_STORE_USER_ID          255
/* Rows in one listing (threads, approvals): a page of a UI, not an
 * export. */
#define BOUND_STORE_LIST             100
/* Messages of one thread returned by thread_get (the newest ones): a
 * thread longer than this is shown from its recent end. */
#define BOUND_STORE_THREAD_MESSAGES  500
/* Characters of a thread's last message shown in the thread list. */
#define BOUND_STORE_PREVIEW_CHARS    200
/* Allow rules of one user (delegated trust): a short list a person
 * reads, checked on every side effect. */
#define BOUND_STORE_ALLOW_RULES      256
/* Memories one search returns: they go into a prompt. */
#define BOUND_STORE_MEMORY_HITS      50
/* Words of a memory search that count; more are ignored. */
#define BOUND_STORE_QUERY_WORDS      32

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
/* X-Forwarded-For entries read, from the right: each trusted proxy adds
 * one, so a longer chain is a client's padding. */
#define BOUND_FORWARDED_HOPS             16
/* Stale counters (a client not seen since an earlier day) deleted by one
 * reservation: the table stays the size of a day's clients, and no
 * request pays for more than a few rows. */
#define STORE_BUDGET_PRUNE               8
/* Single-use tickets (store_ticket_claim): an id is short ASCII, and
 * one claim deletes at most this many expired ones. */
#define STORE_TICKET_ID_MAX              64
#define STORE_TICKET_PRUNE               32

/* --- identity (token.h, auth.h) ---------------------------------------- */

/* A user name, in bytes (without its NUL): e-mail addresses and directory
 * names fit. The name is stored with every thread and run and written in
 * the audit, so it is bounded like any other client text. */
#define BOUND_USER_NAME       128
/* The session secret's least length: 32 bytes, SHA-256's output. RFC 2104
 * advises a key no shorter than the hash's output; a shorter one makes
 * forging tokens easier than breaking the hash. */
#define BOUND_SECRET_MIN      32
/* The most of a secret file we read. HMAC hashes a key longer than 64
 * bytes down to 32 anyway; this only keeps a wrong file (a log, an image)
 * from being read into memory whole. */
#define BOUND_SECRET_MAX      1024
/* The longest token (without its NUL): "v1." + base64url of a
 * BOUND_USER_NAME-byte name (171) + "." + the expiry (19 digits at most) +
 * "." + the signature (43) is 239; anything longer is malformed, read no
 * further. */
#define BOUND_TOKEN_LEN       255
/* `auth issue --ttl`: a week by default, at most 90 days - a token cannot
 * be revoked before it expires (short of changing the secret, which ends
 * every session at once). */
#define DEFAULT_TOKEN_TTL_S   (7L * 24 * 3600)
#define BOUND_TOKEN_TTL_S     (90L * 24 * 3600)
/* A Host header we compare an Origin with: a DNS name is at most 253. */
#define BOUND_HOST_LEN        255
/* The session cookie's name (sessionCookie). */
#define BOUND_COOKIE_NAME     64
/* The variable of auth.remoteUser: a CGI variable name, short by habit. */
#define BOUND_ENV_NAME        64

/* --- errors ------------------------------------------------------------ */

/* Longest error message we keep; longer ones are cut at a UTF-8 boundary. */
#define STATUS_TEXT_MAX 384
/* Longest JSON pointer kept as an error's `path` (with its NUL). Schema
 * violations are as deep as BOUND_SCHEMA_DEPTH; 255 bytes name every honest
 * path, and jschema marks a longer one as cut with "...". */
#define STATUS_PATH_MAX 256

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
#if BOUND_BODY_BYTES > BOUND_JSCAN_BYTES || BOUND_UPSTREAM_BYTES > BOUND_JSCAN_BYTES
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
#error "an MCP result, escaped (\\u00XX: 6 bytes a byte), may outgrow the action output bound"
#endif
#if 2 * 6 * BOUND_FILEEDIT_READ_BYTES + 16 * FILEEDIT_READ_LINES + 4096 > \
    BOUND_ACTION_OUTPUT_BYTES
#error "a Read answer may not exceed the action output bound"
#endif
#if 2 * 6 * BOUND_FILEEDIT_LIST_BYTES + 4096 > BOUND_ACTION_OUTPUT_BYTES
#error "a Glob, Grep or LS answer may not exceed the action output bound"
#endif
#if 4 * 6 * CLI_BASH_OUTPUT_CHARS + 4096 > BOUND_ACTION_OUTPUT_BYTES
#error "a Bash answer (text and stdout, stderr) may not exceed the action output bound"
#endif
#if 2 * 6 * BOUND_CLI_OUTPUT_BYTES + 4096 > BOUND_ACTION_OUTPUT_BYTES
#error "a cli answer may not exceed the action output bound"
#endif
#if DEFAULT_FILEEDIT_FILE_BYTES > BOUND_FILEEDIT_FILE_BYTES || \
    DEFAULT_CLI_TIMEOUT_MS > BOUND_CLI_TIMEOUT_MS || \
    DEFAULT_CLI_OUTPUT_BYTES > BOUND_CLI_OUTPUT_BYTES
#error "a file_edit or cli default exceeds its bound"
#endif
#if BOUND_SCHEMA_DEPTH > BOUND_JSON_DEPTH
#error "a schema may not nest deeper than the JSON that carries it"
#endif

#if DEFAULT_TODO_STEPS > BOUND_TODO_STEPS || DEFAULT_TODO_PLANS > BOUND_TODO_PLANS
#error "a todo default exceeds its bound"
#endif

#endif /* APP_BOUNDS_H */
