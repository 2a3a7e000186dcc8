/*
 * unit_webmock.c - tests/mock/search_mock.py for the suites (unit_webmock.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "unit_webmock.h"
#include "plugins/builtin.h"
#include "plugins/outbound.h"
#include "plugins/webget.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/config.h"
#include "core/diag.h"

#include <arpa/inet.h>
#include <check.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t mock_pid = -1;
static int mock_port;
static char port_file[] = "/tmp/ga-webmock.XXXXXX";

static void
nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void
unit_webmock_start(void)
{
    int fd = mkstemp(port_file);
    const char *py;
    FILE *f;

    if (fd < 0) {
        perror("webmock: mkstemp");
        abort();
    }
    close(fd);
    unlink(port_file); /* the mock renames its file into place */
    /* as tests/http/lib.sh: GA_PYTHON, else the system's python3 - a
     * pyenv shim on PATH is a shell script, and the PID we stop must be
     * the server's own */
    py = getenv("GA_PYTHON");
    if (py == NULL || *py == '\0')
        py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                   : "python3";
    mock_pid = fork();
    if (mock_pid == 0) {
        execlp(py, py, "../mock/search_mock.py", "--port", "0",
               "--port-file", port_file, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && mock_port == 0; i++) {
        nap_ms(25);
        f = fopen(port_file, "r");
        if (f != NULL) {
            if (fscanf(f, "%d", &mock_port) != 1)
                mock_port = 0;
            fclose(f);
        }
    }
    if (mock_port == 0) {
        fprintf(stderr, "webmock: search_mock.py did not start\n");
        unit_webmock_stop();
        abort();
    }
}

void
unit_webmock_stop(void)
{
    if (mock_pid > 0) {
        kill(mock_pid, SIGTERM);
        waitpid(mock_pid, NULL, 0);
    }
    mock_pid = -1;
    mock_port = 0;
    unlink(port_file);
    strcpy(port_file, "/tmp/ga-webmock.XXXXXX");
}

int
unit_webmock_port(void)
{
    return mock_port;
}

const char *
unit_webmock_url(const char *path)
{
    static char url[512];

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", mock_port, path);
    return url;
}

struct json_t *
unit_webmock_json(const char *path)
{
    struct webget_res res;
    char msg[200];
    json_error_t jerr;
    json_t *j;
    struct outbound loopback = {.nallow = 1};

    /* the mock is on loopback: the test's own reads are allowed there */
    ck_assert(netaddr_parse("127.0.0.1", 9, &loopback.allow[0]));
    ck_assert_msg(webget_fetch(&(struct webget_req){unit_webmock_url(path),
                                                    NULL, 5000, 1 << 20,
                                                    false, false, &loopback},
                               &res, msg, sizeof(msg)) == 0,
                  "webmock %s: %s", path, msg);
    j = json_loadb(res.body, res.len, 0, &jerr);
    webget_free(&res);
    ck_assert_msg(j != NULL, "webmock %s: not JSON", path);
    return j;
}

int
unit_webmock_closed_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    ck_assert_int_ge(fd, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static char cfg_dir[] = "/tmp/ga-builtin.XXXXXX";

struct plugin_set *
unit_builtin_set(const char *yaml, const gemini_agent_plugin_factory factory,
                 struct config **cfg, struct diag *d)
{
    static gemini_agent_plugin_factory table[2];
    char path[256];
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(cfg_dir));
    snprintf(path, sizeof(path), "%s/agent.yaml", cfg_dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(yaml, f);
    fclose(f);
    *cfg = config_load(path, d);
    ck_assert_ptr_nonnull(*cfg);
    /* only the plugins' problems count here (no .gemini.yaml is one) */
    diag_release(d);
    *d = (struct diag)DIAG_INIT;
    table[0] = factory;
    table[1] = NULL;
    return plugin_load(NULL, 0,
                       &(struct soplugin_env){.cfg = &(*cfg)->plugins,
                                              .builtins = table,
                                              .fetchers = builtin_fetchers,
                                              .outbound =
                                                  (*cfg)->outbound.allow,
                                              .noutbound =
                                                  (*cfg)->outbound.nallow,
                                              .config_dir = cfg_dir,
                                              .data_dir = cfg_dir},
                       NULL, d);
}

void
unit_builtin_done(struct plugin_set *set, struct config *cfg, struct diag *d)
{
    char path[256];

    plugin_set_free(set);
    config_free(cfg);
    diag_release(d);
    snprintf(path, sizeof(path), "%s/agent.yaml", cfg_dir);
    unlink(path);
    rmdir(cfg_dir);
    strcpy(cfg_dir, "/tmp/ga-builtin.XXXXXX");
}

bool
unit_diag_has(const struct diag *d, const char *text)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->items[i].msg, text) != NULL)
            return true;
    return false;
}
