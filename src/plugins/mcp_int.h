/*
 * mcp_int.h - what the mcp plugin's files share: one MCP server's
 * configuration, one connection to it, and the two transports.
 *
 * mcp.c reads .mcp.json (each entry: mcp_config.c), lists the tools and
 * runs the calls; it speaks JSON-RPC 2.0 through mcp_conn_request(),
 * which hands the message to the connection's transport: mcp_stdio.c (a
 * child process, newline-delimited JSON on its stdin/stdout) or
 * mcp_http.c (Streamable HTTP over libcurl).
 * Not an API of the project: only src/plugins/mcp*.c include it.
 *
 * A connection belongs to the process that opened it (`owner`): a worker
 * forked from the loading process must not talk over its parent's pipes or
 * sockets, so it drops an inherited connection (closing only its copies of
 * the descriptors) and opens its own. A connection is not thread-safe: the
 * caller holds the server's lock around every use.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_MCP_INT_H
#define APP_MCP_INT_H

#include "core/common.h"

#include "core/bounds.h"
#include "plugins/bounds.h"

#include <sys/types.h>

struct json_t;
struct curl_slist;
struct outbound;

/* How an exchange failed; only MCP_DEAD is worth a reconnect and retry. */
enum mcp_fail {
    MCP_OK = 0,
    MCP_DEAD,    /* the server went away: EOF, EPIPE, curl error, 404 */
    MCP_TIMEOUT, /* no answer in time: the connection is closed */
    MCP_PROTO,   /* an answer that is not JSON-RPC, or too large */
    MCP_RPC,     /* the server answered with a JSON-RPC error */
    MCP_START,   /* the server cannot be started or reached at all */
};

/* First failure wins; text is a lowercase sentence for the log and the
 * model (no paths of ours). */
struct mcp_err {
    enum mcp_fail kind;
    char text[256];
};

void mcp_err_set(struct mcp_err *e, enum mcp_fail kind, const char *fmt, ...)
    ATTR_FMT(3, 4);

/* Add what the server sent besides an answer to a failure's text ("; it
 * sent 3 lines that are not JSON"), so the log says what was wrong
 * without quoting the server. */
void mcp_err_note_skipped(struct mcp_err *e, unsigned not_json,
                          unsigned others);

/*
 * Text from a server (an error's message, a tool's name, a stderr line)
 * made safe for the log and the model: at most size - 1 bytes of
 * src[len], cut at a character and then ending in "...", every control
 * character, DEL and byte that is not UTF-8 a '?'. Returns dst.
 */
char *mcp_clean(char *dst, size_t size, const char *src, size_t len);

/* One entry of .mcp.json's mcpServers, immutable after initialize(). */
struct mcp_server_cfg {
    char *name;
    /* stdio: the resolved program, its argv (argv[0] as configured,
     * NULL-terminated) and the whole environment (ours plus `env`) */
    char *program;
    char **argv;
    char **envp;
    char *cwd; /* agent.yaml's folder: where the child runs */
    /* Streamable HTTP */
    char *url;
    struct curl_slist *headers; /* from `headers`, "Name: value" */
    /* where url may be (plugins/outbound.h); the plugin's, borrowed */
    const struct outbound *outbound;
    int timeout_ms;
};

/* --- .mcp.json's entries: mcp_config.c ------------------------------ */

/* Server names become part of tool names: identifiers with '-', at most
 * BOUND_NAME_LEN / 2. */
bool mcp_cfg_name_ok(const char *s);

/* `path` relative to `dir` unless absolute (or dir NULL or ""): a new
 * string, or NULL. */
char *mcp_cfg_path(const char *dir, const char *path);

/*
 * The mcpServers entry `v` named `name` into `s` (zeroed; `timeout_ms`:
 * the plugin's, unless the entry has its own; `config_dir`: where
 * relative paths start, and the child's folder). 0, or -1 with err set;
 * either way mcp_cfg_release() frees what s holds.
 */
int mcp_cfg_from_json(struct mcp_server_cfg *s, const char *name,
                      const struct json_t *v, const char *config_dir,
                      int timeout_ms, char *err, size_t errsize);

/* Free what `s` holds. */
void mcp_cfg_release(struct mcp_server_cfg *s);

/* One live connection (see above); zeroed = closed. */
struct mcp_conn {
    const struct mcp_server_cfg *cfg;
    pid_t owner; /* getpid() of the opener; 0 when closed */
    long next_id;
    char protocol[32]; /* what the server agreed to in initialize */
    /* stdio */
    pid_t child;
    int fd; /* our end of the socketpair that is the child's stdin/stdout */
    char *rbuf;
    size_t rlen, rcap;
    size_t rscan; /* bytes of rbuf known to hold no newline */
    /* the child's stderr, relayed to the log (mcp_stdio.c): the read end
     * of its pipe (-1: none), the line being read, and this minute's
     * count of lines logged and dropped */
    int errfd;
    char eline[MCP_STDERR_LINE_BYTES];
    size_t elen;
    bool ecut;
    long ewindow;
    unsigned elogged, edropped;
    /* http */
    void *curl;    /* CURL * */
    char *session; /* Mcp-Session-Id */
};

/*
 * Open `c` to `cfg` and run the MCP handshake (initialize, then the
 * notifications/initialized notification). 0, or -1 with `e` set (the
 * connection is then closed).
 */
int mcp_conn_open(struct mcp_conn *c, const struct mcp_server_cfg *cfg,
                  struct mcp_err *e);

/* Close `c`: a stdio child of this process gets EOF, then SIGTERM, then
 * SIGKILL, and is reaped; one inherited from another process is only
 * let go of. Safe on a closed connection. */
void mcp_conn_close(struct mcp_conn *c);

/*
 * Send the request `method` with `params` (borrowed; NULL for none) and
 * wait for its answer. 0 with `*result` a new reference, or -1 with `e`
 * set; on MCP_DEAD and MCP_TIMEOUT the connection is closed.
 */
int mcp_conn_request(struct mcp_conn *c, const char *method,
                     struct json_t *params, struct json_t **result,
                     struct mcp_err *e);

/* --- the transports: mcp_stdio.c and mcp_http.c ----------------------- */

/* Start the child / prepare the curl handle. 0, or -1 with `e` set. */
int mcp_stdio_start(struct mcp_conn *c, struct mcp_err *e);
int mcp_http_start(struct mcp_conn *c, struct mcp_err *e);

/*
 * Send one JSON-RPC message (text[len]); when `id` >= 0, wait for the
 * answer with that id and return it in `*answer` (a new reference; NULL
 * for a notification). Messages from the server that are not the answer
 * are skipped (requests to us get a JSON-RPC error or, for ping, {}).
 * 0, or -1 with `e` set.
 */
int mcp_stdio_exchange(struct mcp_conn *c, const char *text, size_t len,
                       long id, struct json_t **answer, struct mcp_err *e);
int mcp_http_exchange(struct mcp_conn *c, const char *text, size_t len, long id,
                      struct json_t **answer, struct mcp_err *e);

void mcp_stdio_stop(struct mcp_conn *c);
void mcp_http_stop(struct mcp_conn *c);

/*
 * Is `msg` the answer to request `id`? Else, when it is a request from
 * the server, write the JSON-RPC reply we owe into reply[size] (a line
 * without newline; "" when none is owed). Shared by both transports.
 */
bool mcp_is_answer(const struct json_t *msg, long id, char *reply, size_t size);

#endif /* APP_MCP_INT_H */
