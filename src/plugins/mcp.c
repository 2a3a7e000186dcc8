/*
 * mcp.c - the built-in `mcp` plugin: an MCP client that offers the tools
 * of the MCP servers named in a .mcp.json as the agent's own.
 *
 * initialize() reads the file ({"mcpServers": {NAME: {"command", "args",
 * "env"} | {"url", "headers"}}}), connects to each server, runs the MCP
 * handshake, lists its tools (following nextCursor) and closes the
 * connection again: it runs in the loading process, whose children and
 * sockets the forked workers must not use. A server that cannot be
 * reached or listed is logged and left out, the others serve
 * (mcp_server_status()); a hostile one is bounded by the MCP_* caps of
 * core/bounds.h (docs/plugins/mcp.md, "A hostile server"). Each process
 * then connects lazily on its first execute() of a server's tool (a
 * connection is keyed by getpid()), one connection per server and process
 * behind a mutex: one call in flight per server and process. A call that finds its server
 * gone (EOF, EPIPE, a curl error, an expired session) reconnects and is
 * sent once more; a timeout is not retried (the server may still be
 * working on it, and the action watchdog is ticking). shutdown() closes
 * the connections this process opened (stdio children: EOF, SIGTERM,
 * SIGKILL, reaped).
 *
 * What it is not: no resources, prompts, sampling or elicitation; the
 * server's tool list is read once per load (SIGHUP reloads it), not
 * followed through notifications/tools/list_changed.
 *
 * mcp_stdio.c and mcp_http.c are the two transports (mcp_int.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp.h"

#include "core/bounds.h"
#include "core/jsonin.h"
#include "core/logmsg.h"
#include "core/memlimit.h"
#include "core/monotime.h"
#include "core/utf8.h"
#include "plugins/mcp_int.h"
#include "plugins/outbound.h"
#include "registry/jschema.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A bound in the config schema's text. */
#define MCP_STR_(x) #x
#define MCP_STR(x)  MCP_STR_(x)

/* What we ask for; a server may answer with another version it speaks. */
#define MCP_PROTOCOL_VERSION "2025-06-18"

/* --- errors and JSON-RPC ------------------------------------------------ */

void
mcp_err_set(struct mcp_err *e, enum mcp_fail kind, const char *fmt, ...)
{
    va_list ap;

    if (e == NULL || e->kind != MCP_OK)
        return;
    e->kind = kind;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof(e->text), fmt, ap);
    va_end(ap);
}

void
mcp_err_note_skipped(struct mcp_err *e, unsigned not_json, unsigned others)
{
    size_t n = strlen(e->text);

    if (e->kind == MCP_OK || (not_json == 0 && others == 0))
        return;
    snprintf(e->text + n, sizeof(e->text) - n,
             " (of what it sent, %u messages were not JSON and %u not the "
             "answer)",
             not_json, others);
}

char *
mcp_clean(char *dst, size_t size, const char *src, size_t len)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0, i = 0, room;

    if (size == 0)
        return dst;
    room = size - 1;
    /* every character but the last is written with room left for "..." */
    while (i < len) {
        size_t n = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, len - i);
        size_t w = n ? n : 1;

        if (o + w + (i + w < len ? 3 : 0) > room) {
            if (o + 3 <= room) {
                memcpy(dst + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (n > 1) {
            memcpy(dst + o, s + i, n);
            o += n;
        } else {
            dst[o++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
        }
        i += w;
    }
    dst[o] = '\0';
    return dst;
}

bool
mcp_is_answer(const json_t *msg, long id, char *reply, size_t size)
{
    const json_t *mid = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));

    reply[0] = '\0';
    if (!json_is_object(msg))
        return false;
    if (method == NULL)
        return json_is_integer(mid) && json_integer_value(mid) == id &&
               (json_object_get(msg, "result") != NULL ||
                json_object_get(msg, "error") != NULL);
    if (mid == NULL)
        return false; /* a notification: nothing owed */
    /* a request to us: ping is answered, the rest refused (we announce no
     * client capability); the id goes back as it came */
    {
        char idtext[100];
        size_t n = json_dumpb(mid, idtext, sizeof(idtext) - 1,
                              JSON_ENCODE_ANY | JSON_COMPACT);

        if (n == 0 || n >= sizeof(idtext))
            return false;
        idtext[n] = '\0';
        if (strcmp(method, "ping") == 0)
            snprintf(reply, size,
                     "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", idtext);
        else
            snprintf(reply, size,
                     "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":"
                     "-32601,\"message\":\"method not supported\"}}",
                     idtext);
    }
    return false;
}

/* Text of the JSON value `v` in malloc'd memory (not jansson's: values
 * made during a request live in its arena, and this text may outlive
 * them), or NULL. */
static char *
dump_text(const json_t *v, size_t *len)
{
    size_t n = json_dumpb(v, NULL, 0, APP_JSON_FLAGS);
    char *p = n > 0 ? memlimit_malloc(n + 1) : NULL;

    if (p == NULL)
        return NULL;
    if (json_dumpb(v, p, n, APP_JSON_FLAGS) != n) {
        free(p);
        return NULL;
    }
    p[n] = '\0';
    if (len != NULL)
        *len = n;
    return p;
}

/* Send one message: a request when `id` >= 0, else a notification. */
static int
conn_send(struct mcp_conn *c, const char *method, json_t *params, long id,
          json_t **answer, struct mcp_err *e)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
    char *text = NULL;
    size_t len = 0;
    int rc = -1;

    *answer = NULL;
    if (msg == NULL ||
        (id >= 0 && json_object_set_new(msg, "id", json_integer(id)) != 0) ||
        (params != NULL && json_object_set(msg, "params", params) != 0) ||
        (text = dump_text(msg, &len)) == NULL) {
        mcp_err_set(e, MCP_PROTO, "out of memory");
        goto out;
    }
    rc = c->cfg->url != NULL ? mcp_http_exchange(c, text, len, id, answer, e)
                             : mcp_stdio_exchange(c, text, len, id, answer, e);
out:
    free(text);
    json_decref(msg);
    return rc;
}

int
mcp_conn_request(struct mcp_conn *c, const char *method, json_t *params,
                 json_t **result, struct mcp_err *e)
{
    json_t *answer = NULL, *err;
    int rc = -1;

    *result = NULL;
    if (conn_send(c, method, params, c->next_id++, &answer, e) != 0) {
        /* the stream's state is unknown now: a late answer must not be
         * taken for the next call's */
        mcp_conn_close(c);
        goto out;
    }
    err = json_object_get(answer, "error");
    if (err != NULL) {
        const json_t *m = json_object_get(err, "message");
        char text[160];

        /* the server's words reach the log and the model: cut, cleaned */
        mcp_clean(text, sizeof(text), json_string_value(m),
                  json_string_length(m));
        mcp_err_set(e, MCP_RPC, "server '%s': %s", c->cfg->name,
                    text[0] ? text : "an error without a message");
        goto out;
    }
    *result = json_incref(json_object_get(answer, "result"));
    if (!json_is_object(*result)) {
        json_decref(*result);
        *result = NULL;
        mcp_err_set(e, MCP_PROTO,
                    "server '%s' answered %s without a result "
                    "object",
                    c->cfg->name, method);
        goto out;
    }
    rc = 0;
out:
    json_decref(answer);
    return rc;
}

int
mcp_conn_open(struct mcp_conn *c, const struct mcp_server_cfg *cfg,
              struct mcp_err *e)
{
    json_t *params = NULL, *result = NULL, *none = NULL;
    const char *version;
    int rc = -1;

    memset(c, 0, sizeof(*c));
    c->cfg = cfg;
    c->fd = c->errfd = -1;
    c->owner = getpid();
    c->next_id = 1;
    if ((cfg->url != NULL ? mcp_http_start(c, e) : mcp_stdio_start(c, e)) != 0)
        goto out;
    params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
                       MCP_PROTOCOL_VERSION, "capabilities", "clientInfo",
                       "name", "gemini-agent", "version", "1");
    if (params == NULL) {
        mcp_err_set(e, MCP_PROTO, "out of memory");
        goto out;
    }
    if (mcp_conn_request(c, "initialize", params, &result, e) != 0)
        goto out;
    version = json_string_value(json_object_get(result, "protocolVersion"));
    /* it goes back in a header: a short token, nothing else */
    if (version == NULL || strlen(version) >= sizeof(c->protocol) ||
        version[0] == '\0' ||
        strspn(version, "0123456789-.abcdefghijklmnopqrstuvwxyz"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(version)) {
        mcp_err_set(e, MCP_PROTO, "server '%s' named no protocol version",
                    cfg->name);
        goto out;
    }
    snprintf(c->protocol, sizeof(c->protocol), "%s", version);
    if (conn_send(c, "notifications/initialized", NULL, -1, &none, e) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        mcp_conn_close(c);
    json_decref(params);
    json_decref(result);
    json_decref(none);
    return rc;
}

void
mcp_conn_close(struct mcp_conn *c)
{
    if (c->cfg == NULL)
        return;
    if (c->cfg->url != NULL)
        mcp_http_stop(c);
    else
        mcp_stdio_stop(c);
    c->owner = 0;
    c->protocol[0] = '\0';
}

/* --- the instance ------------------------------------------------------- */

struct mcp_server {
    struct mcp_server_cfg cfg;
    bool failed;          /* not reached, or its tools not listed, at load */
    pthread_mutex_t lock; /* guards conn */
    struct mcp_conn conn;
};

/* A tool as declared (`<server>_<tool>`) and as the server names it. */
struct mcp_tool {
    char *declared;
    char *name;
    size_t server;
};

struct mcp {
    struct mcp_server *servers;
    size_t nservers;
    struct mcp_tool *tools;
    size_t ntools;
    char *declarations;       /* the JSON array declarations() returns */
    size_t decl_bytes;        /* ... its length so far, while it is built */
    struct outbound outbound; /* where servers over HTTP may be */
};

static void
mcp_free(struct mcp *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nservers; i++) {
        struct mcp_server *s = &m->servers[i];

        pthread_mutex_lock(&s->lock);
        mcp_conn_close(&s->conn);
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_destroy(&s->lock);
        mcp_cfg_release(&s->cfg);
    }
    free(m->servers);
    for (size_t i = 0; i < m->ntools; i++) {
        free(m->tools[i].declared);
        free(m->tools[i].name);
    }
    free(m->tools);
    free(m->declarations);
    free(m);
}

/* --- .mcp.json (one entry: mcp_config.c) ------------------------------ */

/* Read the servers of `path` into m->servers. 0, or -1 with err set. */
static int
load_servers(struct mcp *m, const char *path, const char *config_dir,
             int timeout_ms, char *err, size_t errsize)
{
    json_error_t jerr;
    bool oom = false;
    json_t *root = jsonin_load_file(path, MCP_CONFIG_BYTES,
                                    JSON_REJECT_DUPLICATES, &jerr, &oom);
    json_t *servers = json_object_get(root, "mcpServers");
    const char *name;
    json_t *v;
    int rc = -1;

    if (root == NULL) {
        snprintf(err, errsize, "cannot read '%s': %s", path,
                 oom ? "out of memory" : jerr.text);
        goto out;
    }
    if (!json_is_object(servers) || json_object_size(servers) == 0 ||
        json_object_size(servers) > MCP_MAX_SERVERS) {
        snprintf(err, errsize,
                 "'%s' must have \"mcpServers\": an object of 1 to %d servers",
                 path, MCP_MAX_SERVERS);
        goto out;
    }
    m->servers = calloc(json_object_size(servers), sizeof(*m->servers));
    if (m->servers == NULL) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    json_object_foreach(servers, name, v) {
        struct mcp_server *s = &m->servers[m->nservers];

        if (!mcp_cfg_name_ok(name)) {
            snprintf(err, errsize,
                     "'%s': server name '%s' must be letters, digits, '_' or "
                     "'-', at most %d",
                     path, name, BOUND_NAME_LEN / 2);
            goto out;
        }
        pthread_mutex_init(&s->lock, NULL);
        s->conn.fd = s->conn.errfd = -1;
        m->nservers++;
        if (mcp_cfg_from_json(&s->cfg, name, v, config_dir, timeout_ms, err,
                              errsize) != 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* --- tools ---------------------------------------------------------------- */

static void
count_problem(void *ctx, const char *pointer, const char *msg)
{
    (void)pointer;
    (void)msg;
    (*(int *)ctx)++;
}

/* Is `v` nested deeper than `max` levels ({} and [] are 1, a scalar 0)?
 * The recursion stops at `max`. */
static bool
deeper_than(const json_t *v, int max)
{
    const char *key;
    const json_t *sub;
    size_t i;

    if (!json_is_object(v) && !json_is_array(v))
        return false;
    if (max <= 0)
        return true;
    if (json_is_array(v)) {
        json_array_foreach(UNCONST(v), i, sub)
            if (deeper_than(sub, max - 1))
                return true;
        return false;
    }
    json_object_foreach(UNCONST(v), key, sub)
        if (deeper_than(sub, max - 1))
            return true;
    return false;
}

/*
 * The parameters we declare for a server's inputSchema: a copy without
 * `$schema` (the dialect's name, no constraint). A schema our subset
 * (registry/jschema.c) cannot check, or one nested deeper than
 * MCP_SCHEMA_DEPTH, becomes {"type": "object"}: the model still gets the
 * tool, its arguments are then checked by the server only, and `*loose`
 * says so for the description.
 */
static json_t *
tool_parameters(const json_t *input, bool *loose)
{
    json_t *p = json_is_object(input) && !deeper_than(input, MCP_SCHEMA_DEPTH)
                    ? json_deep_copy(input)
                    : NULL;
    const char *type = json_string_value(json_object_get(p, "type"));
    int problems = 0;

    *loose = false;
    if (p != NULL) {
        json_object_del(p, "$schema");
        if (type != NULL && strcmp(type, "object") == 0 &&
            jschema_check(p, count_problem, &problems) == 0)
            return p;
    }
    json_decref(p);
    *loose = true;
    return json_pack("{s:s}", "type", "object");
}

/* One server's listing while its pages are read. */
struct listing {
    size_t server;
    size_t ntools;     /* its tools kept */
    unsigned left_out; /* its tools left out */
    bool full;         /* no room for more of its tools */
};

/* Tool `name` (the server's JSON value) is left out `why`: logged, the
 * first MCP_LOG_LEFT_OUT of a server one by one, the rest counted
 * (list_server() logs how many). */
static void
left_out(const struct mcp *m, struct listing *l, const json_t *name,
         const char *why)
{
    char clean[80];

    if (l->left_out++ >= MCP_LOG_LEFT_OUT)
        return;
    mcp_clean(clean, sizeof(clean), json_string_value(name),
              json_string_length(name));
    log_warn("mcp: server '%s': tool '%s' left out: %s",
             m->servers[l->server].cfg.name, clean, why);
}

/* The declaration of tool `t` named `declared`: a new reference, or NULL
 * when out of memory. */
static json_t *
tool_declaration(const struct mcp_server_cfg *cfg, const json_t *t,
                 const char *name, const char *declared)
{
    const char *desc = json_string_value(json_object_get(t, "description"));
    const json_t *ro = json_object_get(json_object_get(t, "annotations"),
                                       "readOnlyHint");
    char *text = NULL, clean[80];
    json_t *params, *d;
    bool loose;

    if (desc == NULL || desc[0] == '\0')
        desc = json_string_value(json_object_get(t, "title"));
    if ((params = tool_parameters(json_object_get(t, "inputSchema"), &loose)) ==
        NULL)
        return NULL;
    if (asprintf(&text, "%.*s%s",
                 desc && desc[0]
                     ? (int)utf8_cut(desc, strnlen(desc, MCP_DESCRIPTION_BYTES))
                     : 0,
                 desc && desc[0] ? desc : "",
                 loose ? " (arguments checked by the MCP server)" : "") < 0) {
        json_decref(params);
        return NULL;
    }
    if (text[0] == '\0' || text[0] == ' ') {
        char *t2 = NULL;

        mcp_clean(clean, sizeof(clean), name, strlen(name));
        if (asprintf(&t2, "Tool '%s' of the MCP server '%s'%s", clean,
                     cfg->name, text) < 0) {
            free(text);
            json_decref(params);
            return NULL;
        }
        free(text);
        text = t2;
    }
    d = json_pack("{s:s, s:s, s:o, s:b}", "name", declared, "description", text,
                  "parameters", params, "sideEffects", !json_is_true(ro));
    free(text);
    return d;
}

/* Keep tool `name`, declared as `declared` with `d` (taken), in m and
 * `decls`. 0, or -1 when out of memory. */
static int
keep_tool(struct mcp *m, struct listing *l, const char *name,
          const char *declared, json_t *d, json_t *decls)
{
    struct mcp_tool *grown = realloc(m->tools,
                                     (m->ntools + 1) * sizeof(*m->tools));

    if (grown == NULL) {
        json_decref(d);
        return -1;
    }
    m->tools = grown;
    if (json_array_append_new(decls, d) != 0)
        return -1;
    m->tools[m->ntools].server = l->server;
    m->tools[m->ntools].declared = strdup(declared);
    m->tools[m->ntools].name = strdup(name);
    m->ntools++;
    l->ntools++;
    return m->tools[m->ntools - 1].declared != NULL &&
                   m->tools[m->ntools - 1].name != NULL
               ? 0
               : -1;
}

/* Add the tools of one tools/list page to m and `decls`. Ones without a
 * name, whose declared name would be too long or taken, or past the
 * bounds, are logged and left out. 0, or -1 when out of memory. */
static int
add_tools(struct mcp *m, struct listing *l, const json_t *list, json_t *decls)
{
    const struct mcp_server_cfg *cfg = &m->servers[l->server].cfg;
    size_t i;
    json_t *t;

    json_array_foreach(list, i, t) {
        const json_t *jname = json_object_get(t, "name");
        const char *name = json_string_value(jname);
        char declared[2 * BOUND_NAME_LEN], why[160];
        bool taken = false;
        json_t *d;
        size_t n;

        if (l->ntools >= MCP_MAX_SERVER_TOOLS || m->ntools >= BOUND_ACTIONS) {
            log_warn("mcp: server '%s': %zu tools left out: more than %d of "
                     "one server or %d in all",
                     cfg->name, json_array_size(list) - i, MCP_MAX_SERVER_TOOLS,
                     BOUND_ACTIONS);
            l->full = true;
            return 0;
        }
        if (name == NULL || name[0] == '\0') {
            left_out(m, l, jname, "it has no name");
            continue;
        }
        n = (size_t)snprintf(declared, sizeof(declared), "%s_%s", cfg->name,
                             name);
        if (n > BOUND_NAME_LEN) {
            left_out(m, l, jname, "its name is too long");
            continue;
        }
        for (char *c = declared; *c; c++)
            if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
                *c = '_';
        for (size_t k = 0; k < m->ntools && !taken; k++)
            taken = strcmp(m->tools[k].declared, declared) == 0;
        if (taken) {
            snprintf(why, sizeof(why), "'%s' is taken", declared);
            left_out(m, l, jname, why);
            continue;
        }
        if ((d = tool_declaration(cfg, t, name, declared)) == NULL)
            return -1;
        /* the host takes at most BOUND_SO_TEXT_BYTES of declarations */
        n = json_dumpb(d, NULL, 0, APP_JSON_FLAGS) + 1;
        if (m->decl_bytes + n + 2 > BOUND_SO_TEXT_BYTES) {
            snprintf(why, sizeof(why),
                     "the tools' declarations would pass "
                     "%u bytes",
                     BOUND_SO_TEXT_BYTES);
            left_out(m, l, jname, why);
            json_decref(d);
            continue;
        }
        m->decl_bytes += n;
        if (keep_tool(m, l, name, declared, d, decls) != 0)
            return -1;
    }
    return 0;
}

/* After `npages` pages, may the listing ask for the one at `cursor`? Not
 * when the cursor is too long or was seen before, past
 * MCP_MAX_LIST_PAGES, or when the listing has taken its time; the reason
 * is logged. */
static bool
next_page(const struct mcp_server_cfg *cfg, const char *cursor,
          char *const *seen, int npages, long start)
{
    const char *why = NULL;

    if (strlen(cursor) > MCP_CURSOR_BYTES)
        why = "its nextCursor is too long";
    /* seen: the cursors of pages 2 to npages */
    for (int k = 0; k + 1 < npages && why == NULL; k++)
        if (strcmp(seen[k], cursor) == 0)
            why = "its nextCursor repeats an earlier one";
    if (why == NULL && npages >= MCP_MAX_LIST_PAGES)
        why = "more than " MCP_STR(MCP_MAX_LIST_PAGES) " pages";
    if (why == NULL && monotime_ms() - start > cfg->timeout_ms)
        why = "the listing took longer than timeoutMs";
    if (why != NULL)
        log_warn("mcp: server '%s': tools past page %d left out: %s", cfg->name,
                 npages, why);
    return why == NULL;
}

/*
 * Connect to server `si`, list its tools into m and `decls`, disconnect.
 * 0; 1 when the server cannot be reached or its first page not read
 * (err says why); -1 when out of memory. A later page that fails ends
 * the listing with the tools read so far.
 */
static int
list_server(struct mcp *m, size_t si, json_t *decls, char *err, size_t errsize)
{
    struct mcp_server *s = &m->servers[si];
    struct listing l = {.server = si};
    struct mcp_err e = {0};
    json_t *result = NULL, *params = NULL;
    char *seen[MCP_MAX_LIST_PAGES] = {NULL};
    long start = monotime_ms();
    int rc = 1, page = 0;

    if (mcp_conn_open(&s->conn, &s->cfg, &e) != 0)
        goto out;
    for (;;) {
        const char *cursor;

        if (mcp_conn_request(&s->conn, "tools/list", params, &result, &e) !=
            0) {
            if (page == 0)
                goto out;
            log_warn("mcp: server '%s': tools past page %d left out: %s",
                     s->cfg.name, page, e.text);
            break;
        }
        rc = -1;
        if (add_tools(m, &l, json_object_get(result, "tools"), decls) != 0)
            goto oom;
        cursor = json_string_value(json_object_get(result, "nextCursor"));
        if (cursor == NULL || l.full ||
            !next_page(&s->cfg, cursor, seen, page + 1, start))
            break;
        json_decref(params);
        params = json_pack("{s:s}", "cursor", cursor);
        seen[page++] = strdup(cursor);
        json_decref(result);
        result = NULL;
        if (params == NULL || seen[page - 1] == NULL)
            goto oom;
    }
    if (l.left_out > MCP_LOG_LEFT_OUT)
        log_warn("mcp: server '%s': %u more of its tools left out", s->cfg.name,
                 l.left_out - MCP_LOG_LEFT_OUT);
    rc = 0;
out:
    if (rc == 1)
        snprintf(err, errsize, "%s", e.text);
    /* the loading process's connection is not for the workers */
    mcp_conn_close(&s->conn);
    json_decref(result);
    json_decref(params);
    for (int k = 0; k < page; k++)
        free(seen[k]);
    return rc;
oom:
    snprintf(err, errsize, "out of memory");
    rc = -1;
    goto out;
}

/* List every server's tools. A server that cannot be reached or listed
 * is logged and left out (mcp_server_status() says "failed"), the others
 * serve; only when none could be is the load refused, with the first
 * one's reason. 0, or -1 with err set. */
static int
list_servers(struct mcp *m, json_t *decls, char *err, size_t errsize)
{
    char first[256] = "";
    size_t failed = 0;

    for (size_t i = 0; i < m->nservers; i++) {
        int rc = list_server(m, i, decls, err, errsize);

        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        m->servers[i].failed = true;
        log_warn("mcp: %s; its tools are left out", err);
        if (failed++ == 0)
            snprintf(first, sizeof(first), "%s", err);
    }
    if (failed < m->nservers)
        return 0;
    if (m->nservers == 1)
        snprintf(err, errsize, "%s", first);
    else
        snprintf(err, errsize,
                 "none of the %zu servers could be listed; "
                 "the first: %s",
                 m->nservers, first);
    return -1;
}

/* --- the plugin's operations ------------------------------------------ */

static int
mcp_initialize(const struct gemini_agent_init *init, void **self, char *err,
               size_t errsize)
{
    json_error_t jerr;
    bool oom = false;
    json_t *conf = jsonin_parse(init->config, init->config_len, 0, &jerr, &oom);
    const char *file = json_string_value(json_object_get(conf, "configFile"));
    json_t *tmo = json_object_get(conf, "timeoutMs");
    json_t *decls = json_array();
    struct mcp *m = calloc(1, sizeof(*m));
    int timeout_ms = MCP_TIMEOUT_MS;
    char *path = NULL;
    int rc = -1;

    if (m == NULL || decls == NULL || oom) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    if (json_is_integer(tmo)) {
        json_int_t v = json_integer_value(tmo);
        timeout_ms = v < 100                    ? 100
                     : v > BOUND_MCP_TIMEOUT_MS ? BOUND_MCP_TIMEOUT_MS
                                                : (int)v;
    }
    if (outbound_from_config(conf, &m->outbound, err, errsize) != 0)
        goto out;
    path = mcp_cfg_path(init->config_dir, file ? file : ".mcp.json");
    if (path == NULL) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    if (load_servers(m, path, init->config_dir, timeout_ms, err, errsize) != 0)
        goto out;
    for (size_t i = 0; i < m->nservers; i++)
        m->servers[i].cfg.outbound = &m->outbound;
    if (list_servers(m, decls, err, errsize) != 0)
        goto out;
    if ((m->declarations = dump_text(decls, NULL)) == NULL) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    *self = m;
    m = NULL;
    rc = 0;
out:
    mcp_free(m);
    free(path);
    json_decref(decls);
    json_decref(conf);
    return rc;
}

static void
mcp_shutdown(void *self)
{
    mcp_free(self);
}

const char *
mcp_server_name(const void *self, size_t i)
{
    const struct mcp *m = self;

    return m != NULL && i < m->nservers ? m->servers[i].cfg.name : NULL;
}

const char *
mcp_server_status(const void *self, size_t i)
{
    const struct mcp *m = self;

    if (m == NULL || i >= m->nservers)
        return NULL;
    return m->servers[i].failed ? "failed" : "connected";
}

static const char *
mcp_declarations(void *self)
{
    const struct mcp *m = self;

    return m != NULL ? m->declarations : "[]";
}

/* tools/call on server `s`, this process's connection, under its lock:
 * connect when there is none, once more when the server died. */
static int
call_locked(struct mcp_server *s, json_t *params, json_t **result,
            struct mcp_err *e)
{
    for (int attempt = 0;; attempt++) {
        if (s->conn.owner != getpid()) {
            mcp_conn_close(&s->conn); /* another process's, or none */
            if (mcp_conn_open(&s->conn, &s->cfg, e) != 0)
                return -1;
        }
        if (mcp_conn_request(&s->conn, "tools/call", params, result, e) == 0)
            return 0;
        if (e->kind != MCP_DEAD || attempt > 0)
            return -1;
        log_warn("mcp: %s; reconnecting", e->text);
        memset(e, 0, sizeof(*e));
    }
}

/* The text of a tools/call result's content, joined with newlines and
 * cut at MCP_RESULT_BYTES; what is not text is named, not inlined. */
static json_t *
content_text(const json_t *content)
{
    char *buf = NULL;
    size_t len = 0, i;
    json_t *c, *s;
    FILE *f = open_memstream(&buf, &len);

    if (f == NULL)
        return NULL;
    json_array_foreach(content, i, c) {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *text = json_string_value(json_object_get(c, "text"));
        const json_t *res = json_object_get(c, "resource");

        if (i > 0)
            fputc('\n', f);
        if (type != NULL && strcmp(type, "text") == 0 && text != NULL)
            fputs(text, f);
        else if (type != NULL && strcmp(type, "resource") == 0 &&
                 json_string_value(json_object_get(res, "text")))
            fputs(json_string_value(json_object_get(res, "text")), f);
        else if (type != NULL && strcmp(type, "resource_link") == 0)
            fprintf(f, "[resource %s]",
                    json_string_value(json_object_get(c, "uri"))
                        ? json_string_value(json_object_get(c, "uri"))
                        : "");
        else
            fprintf(f, "[%s%s%s]", type ? type : "content",
                    json_string_value(json_object_get(c, "mimeType")) ? " "
                                                                      : "",
                    json_string_value(json_object_get(c, "mimeType"))
                        ? json_string_value(json_object_get(c, "mimeType"))
                        : "");
        if (ftell(f) > (long)MCP_RESULT_BYTES)
            break;
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    if (len > MCP_RESULT_BYTES) {
        size_t n = utf8_cut(buf,
                            len < MCP_RESULT_BYTES ? len : MCP_RESULT_BYTES);
        s = json_sprintf("%.*s\n[cut at %u bytes]", (int)n, buf,
                         MCP_RESULT_BYTES);
    } else {
        s = json_stringn(buf, len);
    }
    free(buf);
    return s;
}

/* A tools/call result of server `name` as the model reads it: the
 * structuredContent when there is one (no error, within MCP_RESULT_BYTES
 * and MCP_RESULT_DEPTH), else {"content": text, "isError": bool}. */
static json_t *
call_answer(const char *name, const json_t *result)
{
    const json_t *sc = json_object_get(result, "structuredContent");
    bool is_error = json_is_true(json_object_get(result, "isError"));
    json_t *text;

    if (json_is_object(sc) && !is_error &&
        json_dumpb(sc, NULL, 0, APP_JSON_FLAGS) <= MCP_RESULT_BYTES) {
        if (!deeper_than(sc, MCP_RESULT_DEPTH))
            return json_incref(UNCONST(sc));
        log_warn("mcp: server '%s': a structuredContent nested deeper than "
                 "%d levels: its text content is the answer",
                 name, MCP_RESULT_DEPTH);
    }
    text = content_text(json_object_get(result, "content"));
    if (text == NULL)
        return NULL;
    return json_pack("{s:o, s:b}", "content", text, "isError", is_error);
}

static int
reply_text(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
           int rc, const char *msg)
{
    if (gemini_agent_reply(ctx, out, msg, strlen(msg)) != GEMINI_AGENT_OK)
        return GEMINI_AGENT_FAILED;
    return rc;
}

static int
mcp_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
            const char *args, size_t args_len, struct gemini_agent_out *out)
{
    struct mcp *m = self;
    const struct mcp_tool *t = NULL;
    struct mcp_server *s;
    struct mcp_err e = {0};
    json_error_t jerr;
    bool oom = false;
    json_t *in = NULL, *params = NULL, *result = NULL, *answer = NULL;
    size_t n;
    int rc = GEMINI_AGENT_FAILED;

    for (size_t i = 0; m != NULL && i < m->ntools && t == NULL; i++)
        if (strcmp(m->tools[i].declared, tool) == 0)
            t = &m->tools[i];
    if (t == NULL)
        return reply_text(ctx, out, GEMINI_AGENT_BAD_INPUT, "no such tool");
    in = jsonin_parse(args, args_len, 0, &jerr, &oom);
    if (!json_is_object(in)) {
        rc = reply_text(ctx, out, GEMINI_AGENT_BAD_INPUT,
                        "the arguments must be a JSON object");
        goto out;
    }
    params = json_pack("{s:s, s:O}", "name", t->name, "arguments", in);
    if (params == NULL)
        goto out;
    s = &m->servers[t->server];
    pthread_mutex_lock(&s->lock);
    if (call_locked(s, params, &result, &e) != 0) {
        pthread_mutex_unlock(&s->lock);
        log_warn("mcp: tool '%s': %s", tool, e.text);
        rc = reply_text(ctx, out, GEMINI_AGENT_FAILED, e.text);
        goto out;
    }
    pthread_mutex_unlock(&s->lock);
    if ((answer = call_answer(s->cfg.name, result)) == NULL)
        goto out;
    n = json_dumpb(answer, NULL, 0, APP_JSON_FLAGS);
    out->text = n > 0 ? ctx->alloc(ctx, n + 1) : NULL;
    if (out->text == NULL)
        goto out;
    out->len = json_dumpb(answer, out->text, n, APP_JSON_FLAGS);
    out->text[out->len] = '\0';
    rc = GEMINI_AGENT_OK;
out:
    json_decref(in);
    json_decref(params);
    json_decref(result);
    json_decref(answer);
    return rc;
}

static const char *
mcp_config_schema(void)
{
    /* clang-format off */
    return "{\"type\":\"object\",\"additionalProperties\":false,"
           "\"properties\":{"
           "\"configFile\":{\"type\":\"string\",\"minLength\":1,"
               "\"description\":\"the .mcp.json, relative to agent.yaml's "
               "folder\"},"
           "\"timeoutMs\":{\"type\":\"integer\",\"minimum\":100,"
               "\"maximum\":" MCP_STR(BOUND_MCP_TIMEOUT_MS) ","
               "\"description\":\"each exchange with a server\"}}}";
    /* clang-format on */
}

static const struct gemini_agent_plugin mcp_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "mcp",
    .declarations = mcp_declarations,
    .execute = mcp_execute,
    .initialize = mcp_initialize,
    .shutdown = mcp_shutdown,
    .config_schema = mcp_config_schema,
};

const struct gemini_agent_plugin *
builtin_mcp(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &mcp_plugin : NULL;
}
