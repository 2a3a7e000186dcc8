/*
 * mcp_config.c - one entry of .mcp.json's mcpServers read into a
 * struct mcp_server_cfg: a server run as a child ({"command", "args",
 * "env"}: the program found as a shell would, the environment ours less
 * the credentials plus `env`) or one over Streamable HTTP ({"url",
 * "headers"}), each with its own "timeout". mcp.c reads the file and
 * keeps the servers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/mcp_int.h"

#include "core/bounds.h"
#include "core/credenv.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

bool
mcp_cfg_name_ok(const char *s)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (!((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '-'))
            return false;
    return n > 0 && n <= BOUND_NAME_LEN / 2;
}

char *
mcp_cfg_path(const char *dir, const char *path)
{
    char *p = NULL;

    if (path[0] == '/' || dir == NULL || dir[0] == '\0')
        return strdup(path);
    if (asprintf(&p, "%s/%s", dir, path) < 0)
        return NULL;
    return p;
}

static bool
is_program(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

/* Where `command` is: a path with '/' relative to `dir`, else looked up
 * in `search` (PATH). malloc'd, or NULL when not found. */
static char *
resolve_program(const char *command, const char *dir, const char *search)
{
    const char *p = search ? search : "/usr/local/bin:/usr/bin:/bin";

    if (strchr(command, '/') != NULL) {
        char *full = mcp_cfg_path(dir, command);
        if (full != NULL && is_program(full))
            return full;
        free(full);
        return NULL;
    }
    while (*p != '\0') {
        size_t n = strcspn(p, ":");
        char *full = NULL;

        if (n > 0 && asprintf(&full, "%.*s/%s", (int)n, p, command) >= 0) {
            if (is_program(full))
                return full;
            free(full);
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return NULL;
}

/* Our environment with `env`'s entries set over it. */
static char **
build_env(const json_t *env, char *err, size_t errsize, const char *name)
{
    size_t n = 0, extra = json_object_size(env), k = 0;
    const char *key;
    json_t *v;
    char **out = NULL;
    /* ours less the credentials (core/credenv.h): a server's answers go to
     * Gemini, and the server is someone else's code */
    char **base = credenv_clean(environ, 0);

    if (base == NULL)
        goto oom;
    while (base[n])
        n++;
    if ((out = calloc(n + extra + 1, sizeof(*out))) == NULL)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(base[i], '=');
        size_t kl = eq ? (size_t)(eq - base[i]) : strlen(base[i]);
        bool overridden = false;

        json_object_foreach(UNCONST(env), key, v)
            if (strlen(key) == kl && memcmp(key, base[i], kl) == 0)
                overridden = true;
        if (!overridden && (out[k++] = strdup(base[i])) == NULL)
            goto oom;
    }
    free(base);
    base = NULL;
    json_object_foreach(UNCONST(env), key, v) {
        if (!json_is_string(v) || key[0] == '\0' || strchr(key, '=')) {
            snprintf(err, errsize, "server '%s': env must map names to strings",
                     name);
            goto fail;
        }
        if (asprintf(&out[k++], "%s=%s", key, json_string_value(v)) < 0) {
            out[--k] = NULL;
            goto oom;
        }
    }
    return out;
oom:
    snprintf(err, errsize, "out of memory");
fail:
    free(base);
    for (size_t i = 0; out && out[i]; i++)
        free(out[i]);
    free(out);
    return NULL;
}

/* The entry v's own "timeout" (as Gemini CLI's mcpServers name it)
 * into s->timeout_ms when it has one. 0, or -1 with err set. */
static int
server_timeout(struct mcp_server_cfg *s, const json_t *v, char *err,
               size_t errsize)
{
    const json_t *tmo = json_object_get(v, "timeout");
    json_int_t t = json_integer_value(tmo);

    if (tmo == NULL)
        return 0;
    if (!json_is_integer(tmo) || t < 100 || t > BOUND_MCP_TIMEOUT_MS) {
        snprintf(err, errsize,
                 "server '%s': timeout must be milliseconds from 100 to "
                 "%d",
                 s->name, BOUND_MCP_TIMEOUT_MS);
        return -1;
    }
    s->timeout_ms = (int)t;
    return 0;
}

/* A Streamable HTTP server: its url and headers into s. 0, or -1 with
 * err set. */
static int
server_http(struct mcp_server_cfg *s, const char *url, const json_t *headers,
            char *err, size_t errsize)
{
    const char *k;
    json_t *hv;
    struct curl_slist *t;

    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        snprintf(err, errsize, "server '%s': url must be http(s)://", s->name);
        return -1;
    }
    if ((s->url = strdup(url)) == NULL)
        goto oom;
    if (headers != NULL && (!json_is_object(headers) ||
                            json_object_size(headers) > MCP_MAX_HEADERS)) {
        snprintf(err, errsize,
                 "server '%s': headers must be an object of at most %d "
                 "strings",
                 s->name, MCP_MAX_HEADERS);
        return -1;
    }
    json_object_foreach(UNCONST(headers), k, hv) {
        char *line = NULL;
        const char *hs = json_string_value(hv);

        if (hs == NULL || k[0] == '\0' || strpbrk(k, ":\r\n ") ||
            strpbrk(hs, "\r\n")) {
            snprintf(err, errsize,
                     "server '%s': header '%s' must be a one-line string",
                     s->name, k);
            return -1;
        }
        if (asprintf(&line, "%s: %s", k, hs) < 0)
            goto oom;
        t = curl_slist_append(s->headers, line);
        free(line);
        if (t == NULL)
            goto oom;
        s->headers = t;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* s->argv: `command` then the entry's args. 0, or -1 with err set. */
static int
server_argv(struct mcp_server_cfg *s, const char *command, const json_t *args,
            char *err, size_t errsize)
{
    size_t i;
    json_t *a;

    if ((s->argv = calloc(json_array_size(args) + 2, sizeof(char *))) == NULL ||
        (s->argv[0] = strdup(command)) == NULL)
        goto oom;
    json_array_foreach(args, i, a) {
        if (!json_is_string(a)) {
            snprintf(err, errsize, "server '%s': args must be strings",
                     s->name);
            return -1;
        }
        if ((s->argv[i + 1] = strdup(json_string_value(a))) == NULL)
            goto oom;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* A server run as a child: its program, argv, environment and folder
 * into s, from the entry v. 0, or -1 with err set. */
static int
server_stdio(struct mcp_server_cfg *s, const char *command, const json_t *v,
             const char *config_dir, char *err, size_t errsize)
{
    const json_t *args = json_object_get(v, "args");
    const json_t *env = json_object_get(v, "env");
    const char *search = NULL;

    if ((args != NULL &&
         (!json_is_array(args) || json_array_size(args) > MCP_MAX_ARGS)) ||
        (env != NULL &&
         (!json_is_object(env) || json_object_size(env) > MCP_MAX_ENV))) {
        snprintf(err, errsize,
                 "server '%s': args must be an array of at most %d strings, "
                 "env an object of at most %d",
                 s->name, MCP_MAX_ARGS, MCP_MAX_ENV);
        return -1;
    }
    if (server_argv(s, command, args, err, errsize) != 0)
        return -1;
    if ((s->envp = build_env(env, err, errsize, s->name)) == NULL)
        return -1;
    for (size_t i = 0; s->envp[i]; i++)
        if (strncmp(s->envp[i], "PATH=", 5) == 0)
            search = s->envp[i] + 5;
    if ((s->program = resolve_program(command, config_dir, search)) == NULL) {
        snprintf(
            err, errsize, "server '%s': cannot run '%s': %s", s->name, command,
            strchr(command, '/') ? "no such program" : "not found in PATH");
        return -1;
    }
    if ((s->cwd = strdup(config_dir ? config_dir : ".")) == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    return 0;
}

int
mcp_cfg_from_json(struct mcp_server_cfg *s, const char *name, const json_t *v,
                  const char *config_dir, int timeout_ms, char *err,
                  size_t errsize)
{
    const char *command = json_string_value(json_object_get(v, "command"));
    const char *url = json_string_value(json_object_get(v, "url"));
    const char *type = json_string_value(json_object_get(v, "type"));

    s->timeout_ms = timeout_ms;
    if ((s->name = strdup(name)) == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    if (!json_is_object(v) || (command == NULL) == (url == NULL)) {
        snprintf(err, errsize,
                 "server '%s' needs either \"command\" or \"url\" (a string)",
                 name);
        return -1;
    }
    if (server_timeout(s, v, err, errsize) != 0)
        return -1;
    if (type != NULL && strcmp(type, "stdio") != 0 &&
        strcmp(type, "http") != 0 && strcmp(type, "streamable-http") != 0) {
        snprintf(err, errsize,
                 "server '%s': type '%s' is not supported (stdio or http)",
                 name, type);
        return -1;
    }
    if (url != NULL)
        return server_http(s, url, json_object_get(v, "headers"), err, errsize);
    return server_stdio(s, command, v, config_dir, err, errsize);
}

void
mcp_cfg_release(struct mcp_server_cfg *s)
{
    free(s->name);
    free(s->program);
    for (size_t i = 0; s->argv && s->argv[i]; i++)
        free(s->argv[i]);
    free(s->argv);
    for (size_t i = 0; s->envp && s->envp[i]; i++)
        free(s->envp[i]);
    free(s->envp);
    free(s->cwd);
    free(s->url);
    curl_slist_free_all(s->headers);
}
