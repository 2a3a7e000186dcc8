/*
 * unit_webmock.h - tests/mock/search_mock.py (a fake SearXNG endpoint and
 * document server) on 127.0.0.1 for the web_search and references suites:
 * started in a free port, read through its control routes, stopped by
 * its PID.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_UNIT_WEBMOCK_H
#define APP_UNIT_WEBMOCK_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

/* Start it (an unchecked fixture: it outlives the forked tests); aborts
 * the run when it does not come up. */
void unit_webmock_start(void);
/* Stop it (SIGTERM to its PID, then wait). */
void unit_webmock_stop(void);
/* Its port, and "http://127.0.0.1:PORT" + path in a static buffer. */
int unit_webmock_port(void);
const char *unit_webmock_url(const char *path);
/* GET path and decode the JSON answer (a new jansson reference; the test
 * fails when there is none). */
struct json_t *unit_webmock_json(const char *path);
/* The member of a plugin's configuration that lets it reach the mock on
 * loopback (plugins/outbound.h: refused otherwise). */
#define UNIT_WEBMOCK_OUTBOUND "\"outbound\":{\"allow\":[\"127.0.0.1\"]}"

/* A loopback port nothing listens on (bound, then closed). */
int unit_webmock_closed_port(void);

#endif /* APP_UNIT_WEBMOCK_H */

struct config;
struct diag;
struct plugin_set;

/*
 * Load the agent.yaml text `yaml` (written to a temporary folder, which
 * is also the config_dir handed to initialize()) with `factory` as the
 * only built-in plugin, through the registry: schema check, initialize(),
 * tools. The diag list holds the plugins' problems only. Free with
 * unit_builtin_done().
 */
struct plugin_set *unit_builtin_set(const char *yaml,
                                    const gemini_agent_plugin_factory factory,
                                    struct config **cfg, struct diag *d);
void unit_builtin_done(struct plugin_set *set, struct config *cfg,
                       struct diag *d);
/* Whether a problem of `d` holds `text`. */
bool unit_diag_has(const struct diag *d, const char *text);
