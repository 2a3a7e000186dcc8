/*
 * credenv.h - the Gemini and Google credentials in our environment, kept
 * from every process we start.
 *
 * The terminal client runs shell commands (plugins/cli.c), MCP servers
 * (plugins/mcp.c) and gcloud (gemini/credentials.c). A child that sees
 * GEMINI_API_KEY can print it, and what a command prints goes to Gemini
 * and into the saved session. So each child's environment is ours less
 * the credential variables (credenv.c holds the one list: API keys,
 * tokens, credential file paths and folders), unless the user names a
 * variable in GEMINI_AGENT_PASS_ENV: names separated by spaces or commas,
 * each passed on as it is. Values a config sets for a child by name (the
 * cli plugin's or a .mcp.json server's `env`) are the user's own choice
 * and are not touched.
 *
 * gcloud is the one child that needs gcloud's own settings (its config
 * folder, an access-token file): CREDENV_GCLOUD keeps those for it; it
 * still gets no API key.
 *
 * Thread-safe: nothing is kept; getenv() is read at each call (no thread
 * of ours sets the environment).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_CREDENV_H
#define APP_CREDENV_H

#include "core/common.h"

/* The variable that passes credentials on by name. */
#define CREDENV_PASS_VAR "GEMINI_AGENT_PASS_ENV"

enum credenv_flags {
    /* the child is gcloud: keep gcloud's own settings (CLOUDSDK_*) */
    CREDENV_GCLOUD = 1 << 0,
};

/* Is `name` (a bare name, or an entry "NAME=value") one of the credential
 * variables, whatever the flags and the pass list? */
bool credenv_is_credential(const char *name);

/*
 * Must the entry "NAME=value" be kept from a child? True for a credential
 * variable that `pass` (a GEMINI_AGENT_PASS_ENV value, or NULL) does not
 * name and, with CREDENV_GCLOUD, that is not one of gcloud's own.
 */
bool credenv_withheld(const char *entry, const char *pass, unsigned flags);

/*
 * The entries of `env` (NULL-terminated, e.g. environ) a child may have,
 * with the pass list read from GEMINI_AGENT_PASS_ENV now: a new
 * NULL-terminated array of borrowed pointers into `env` (valid while env
 * is unchanged); free() the array alone. NULL when out of memory.
 */
char **credenv_clean(char *const *env, unsigned flags) ATTR_WUR;

#endif /* APP_CREDENV_H */
