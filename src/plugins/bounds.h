/*
 * bounds.h - the limits only src/plugins/ uses, each with its reason. The
 * limits several layers share are in core/bounds.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_PLUGINS_BOUNDS_H
#define APP_PLUGINS_BOUNDS_H

#include "core/bounds.h"

/* --- the mcp plugin (src/plugins/mcp*.c): MCP servers as tools -------- */

/* .mcp.json: a few servers of a few lines each. */
#define MCP_CONFIG_BYTES (256u * 1024)
#define MCP_MAX_SERVERS  16

/* Arguments and environment entries of one stdio server's command. */
#define MCP_MAX_ARGS 64
#define MCP_MAX_ENV  64

/* Extra HTTP headers of one Streamable HTTP server. */
#define MCP_MAX_HEADERS 32

/* One JSON-RPC message (a stdio line, an HTTP body or SSE stream): a
 * tools/list page of a large server is tens of KB; results are cut far
 * below by MCP_RESULT_BYTES, so more is a runaway server. */
#define MCP_MESSAGE_BYTES (4u * 1024 * 1024)

/* Non-answers (notifications, logs, requests to us) skipped while one
 * call waits for its answer; more is a server talking to itself. */
#define MCP_MAX_SKIPPED 1000

/* tools/list pages followed through nextCursor; a cursor longer than
 * this, or one seen before, ends the listing (a server that pages
 * forever). */
#define MCP_MAX_LIST_PAGES 32
#define MCP_CURSOR_BYTES   1024

/* Tools of one server: one greedy server must not take every action of
 * the site (BOUND_ACTIONS in all). */
#define MCP_MAX_SERVER_TOOLS 256

/* Tools left out of one server's listing that are logged one by one; the
 * rest are counted in one line. */
#define MCP_LOG_LEFT_OUT 8

/* A tool's inputSchema nested deeper than this (JSON levels) is declared
 * as any object: the declarations and the Gemini request wrap it in a
 * few more levels, and BOUND_JSON_DEPTH applies to both. */
#define MCP_SCHEMA_DEPTH 24

/* A structuredContent nested deeper than this is not the answer (its
 * text content is): the answer is kept in the conversation's history,
 * which a later request sends back under BOUND_JSON_DEPTH. */
#define MCP_RESULT_DEPTH 16

/* A stdio server's stderr goes to the log line by line, each cut at
 * this many bytes, at most MCP_STDERR_LINES lines a minute (the rest
 * are counted and dropped: a server that writes without end must not
 * fill the serve log). */
#define MCP_STDERR_LINE_BYTES 200
#define MCP_STDERR_LINES      50

/* A tool's description as declared to the model, cut there. */
#define MCP_DESCRIPTION_BYTES 2048

/* How long a stopping stdio server has after SIGTERM before SIGKILL. */
#define MCP_STOP_GRACE_MS 1000

/* --- built-in plugins file_edit and cli (plugins/fileedit.c, cli.c) ---- */

/* Changes file_edit can undo; older backups are deleted. */
#define BOUND_FILEEDIT_UNDO 100

/* extraPaths and env entries of the cli config: a short list a person
 * writes. */
#define BOUND_CLI_CONFIG_ENTRIES 64

/* After the shell exits, how long its output pipes may stay open (held
 * by something it left running in the background) before the rest of
 * its process group is killed. */
#define CLI_DRAIN_MS 200

/* --- built-in plugins: web_search and references (src/plugins/) --------- */

/* webget.c: redirects a references URL may take (web_search takes none). */
#define BOUND_WEBGET_REDIRECTS 3

/* A timeoutMs either plugin accepts. The default stays under the action
 * watchdog's (DEFAULT_ACTION_TIMEOUT_MS), so a slow endpoint ends as the
 * tool's error, not as a killed worker; a longer one needs a longer
 * limits.actionTimeoutMs (the plugin docs say so). */
#define BOUND_WEB_TIMEOUT_MS_MAX     60000
#define WEBSEARCH_TIMEOUT_MS_DEFAULT 8000

/* Results handed to the model: SearXNG returns about 20 a page, and each
 * one costs the model ~200 tokens of input. */
#define BOUND_WEBSEARCH_RESULTS   20
#define WEBSEARCH_RESULTS_DEFAULT 5

/* The query the model sends (bytes, schema maxLength in characters). */
#define BOUND_WEBSEARCH_QUERY 512

/* Per result, after whitespace is collapsed; longer text is cut at a
 * character boundary and ends in "...". A longer url is dropped (a url
 * cut short is a wrong url). */
#define BOUND_WEBSEARCH_TITLE   200
#define BOUND_WEBSEARCH_SNIPPET 600
#define BOUND_WEBSEARCH_URL     2048

/* The endpoint's whole answer: 20 results with content are ~50 KiB;
 * infoboxes and suggestions can add some. */
#define BOUND_WEBSEARCH_RESPONSE_BYTES (2u * 1024 * 1024)

/* The endpoint URL, a region code, the optional headers (count and one
 * "Name: value" line). */
#define BOUND_WEBSEARCH_ENDPOINT    2048
#define BOUND_WEBSEARCH_REGION      32
#define BOUND_WEBSEARCH_HEADERS     16
#define BOUND_WEBSEARCH_HEADER_LINE 4096

/* references: sources per site, one source's content (maxBytes: default
 * and ceiling; escaped as JSON it stays well under
 * BOUND_ACTION_OUTPUT_BYTES), its description, its file/url text, and
 * the cache lifetime of a URL source (cacheSeconds: default, ceiling).
 * Bounds a config schema quotes are plain numbers (the schema text is
 * made by stringizing them). */
#define BOUND_REFERENCES_SOURCES         64
#define REFERENCES_MAX_BYTES_DEFAULT     (64u * 1024)
#define BOUND_REFERENCES_MAX_BYTES       262144 /* 256 KiB */
#define BOUND_REFERENCES_DESCRIPTION     300
#define BOUND_REFERENCES_LOCATION        2048
#define REFERENCES_CACHE_SECONDS_DEFAULT 300
#define BOUND_REFERENCES_CACHE_SECONDS   86400
#define REFERENCES_TIMEOUT_MS_DEFAULT    8000

/* What @name enrichment may add to one prompt, all sources together: a
 * source that would pass it is left out (and named in the metadata). */
#define BOUND_REFERENCES_PROMPT_BYTES (512u * 1024)

/* --- built-in plugin: cli (src/plugins/cli.c) -------------------------- */

/* cli, interrupted: how often a running command
 * asks whether the call was cancelled (ctx->cancelled), and how long its
 * process group has after SIGTERM before SIGKILL. */
#define CLI_CANCEL_CHECK_MS 100
#define CLI_KILL_GRACE_MS   500

#endif /* APP_PLUGINS_BOUNDS_H */
