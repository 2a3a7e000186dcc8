/*
 * tools.h - the terminal session's tools and what may run them: the
 * registry's plugins loaded for the terminal (cli and file_edit always,
 * rooted at the working folder, and agent.yaml's), declared to Gemini
 * under their own names (`Read`, not `action_file_edit_Read`); and the
 * permission state a call is checked against (perm.h): the mode and the
 * allow and deny rules, which grow during the session.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TERM_TOOLS_H
#define APP_TERM_TOOLS_H

#include "core/common.h"
#include "core/config.h"
#include "term/args.h"
#include "term/perm.h"

#include <stddef.h>

struct arena;
struct json_t;
struct plugin_action;
struct plugin_set;
struct status_error;

struct term_tool {
    const char *name; /* as declared to Gemini, e.g. "Read" */
    const struct plugin_action *act;
    bool edit; /* a file_edit tool (acceptEdits allows it) */
};

struct term_tools {
    struct plugin_set *set;
    struct term_tool *tools;
    size_t ntools;
    struct json_t *decls; /* [{"functionDeclarations": [...]}], or NULL */
    struct config_plugins plugins_cfg; /* as the terminal uses it */
    struct json_t *plugins_conf;       /* its `config` (ours) */
    char **expose;                     /* its `expose` (ours) */
    struct config_actions actions_env; /* how a tool runs */
    /* the permission state */
    enum term_mode mode;
    struct term_rules rules; /* JSON lists kept in `life` */
    struct arena *life;      /* the session's: the rules grow in it */
};

/* The mode and the rules of `args` (strings in `life`). 0, or -1 with
 * `err` (ST_BAD_REQUEST: a rule that cannot be read). */
int term_tools_init(struct term_tools *t, const struct term_args *args,
                    struct arena *life, struct status_error *err);

/* Load the plugins for working folder `cwd` with agent.yaml's `cfg` (NULL:
 * none), and declare their tools. 0, or -1 (out of memory, no plugin
 * set: what failed is said on stderr with GEMINI_AGENT_LOG set). */
int term_tools_load(struct term_tools *t, const struct term_args *args,
                    const struct config *cfg, const char *cwd,
                    struct arena *life);

void term_tools_release(struct term_tools *t);

/* The tool declared as `name`, or NULL. */
const struct term_tool *term_tools_find(const struct term_tools *t,
                                        const char *name);

/* The tools' names (init's `tools`): a new reference, NULL: out of
 * memory. */
struct json_t *term_tools_names(const struct term_tools *t);

/* init's mcp_servers and mcp_status's mcpServers: [{name, status}] of the
 * servers of the built-in mcp plugin, when it takes part (a new
 * reference; NULL when out of memory). */
struct json_t *term_tools_mcp_servers(const struct term_tools *t);

/* The system instruction: --system-prompt or ours for `cwd`, each exposed
 * plugin's instructions, --append-system-prompt. Heap, NULL: out of
 * memory. */
char *term_tools_system(const struct term_tools *t,
                        const struct term_args *args, const char *cwd);

/* The host's permission updates (a can_use_tool answer's
 * updatedPermissions, perm.h): the rules grow, the mode may change. 0,
 * or -1 with `err`. */
int term_tools_update(struct term_tools *t, const struct json_t *updates,
                      struct arena *life, struct status_error *err);

/* set_permission_mode. */
void term_tools_set_mode(struct term_tools *t, enum term_mode mode);

/* "Always" at the terminal: the tool's next calls are allowed (while the
 * rules have room and memory lasts; else this call alone). */
void term_tools_allow(struct term_tools *t, const char *name);

#endif /* APP_TERM_TOOLS_H */
