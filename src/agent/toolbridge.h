/*
 * toolbridge.h - page tools and server actions as Gemini function
 * declarations, and function names back to what they mean.
 *
 * Two kinds of function reach the model:
 *   - server actions, declared as `action_<plugin>_<name>` from the
 *     plugin set built at load time (plugin.h holds the explicit map);
 *   - page tools from the request's `toolDefinitions`, run by the browser.
 * The `action_` prefix is reserved: a page tool may not use it (400
 * tool_name_conflict), so a name the model calls is unambiguous, and the
 * model can only ever reach server actions that the server's own files
 * expose.
 *
 * Page tool names may be looser than Gemini's rule (WebMCP allows a name
 * that starts with a digit, '.', ':' or '-'): those are declared as
 * "p_<name>" and found again through toolbridge_page_tool(), an explicit
 * map, never by rewriting the name the model calls. A page tool's
 * description is page data: it is declared with control characters made
 * spaces and cut to BOUND_TOOL_DESCRIPTION bytes, and never enters the
 * system instruction.
 *
 * Declarations use `parametersJsonSchema` (the schema passed as JSON
 * Schema, wire §2.3); a function without parameters is declared
 * with no schema at all, never an object with empty `properties`.
 *
 * "wire §N" is section N of docs/internals/gemini-wire.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TOOLBRIDGE_H
#define APP_TOOLBRIDGE_H

#include "core/common.h"
#include "agent/bounds.h"

struct arena;
struct jscan_doc;
struct json_t;
struct plugin_set;
struct status_error;

/* The prefix of page tools whose own names Gemini would refuse. */
#define TOOLBRIDGE_PAGE_PREFIX "p_"
/* Room for a function name (64) and its NUL. */
#define TOOLBRIDGE_NAME_MAX    65

/* Gemini's function-name rule, ^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$. */
bool toolbridge_valid_name(const char *name);

/* The function name a page tool is declared as, into out[size]: its own
 * name when Gemini accepts it, else TOOLBRIDGE_PAGE_PREFIX + name. -1 when
 * that is no valid function name either. */
int toolbridge_fn_name(const char *page_name, char *out, size_t size);

/*
 * One function declaration (a new reference): {name, description,
 * parametersJsonSchema?}. `schema` (borrowed, may be NULL) is left out
 * when it declares no properties.
 */
struct json_t *toolbridge_declaration(const char *name, const char *description,
                                      struct json_t *schema);

/*
 * Check the request's toolDefinitions (a JSON array, or NULL for none):
 * each an object {name, description?, inputSchema?, category?} with a
 * name of 1 to 64 name characters that is unique as declared and outside
 * the `action_` namespace and, when present,
 * an inputSchema object of type "object"; at most `max_tools` of them.
 * Errors: ST_BAD_REQUEST, ST_TOOL_CONFLICT, ST_TOO_LARGE.
 */
int toolbridge_check(const struct json_t *tool_defs, long max_tools,
                     struct status_error *err);

/*
 * The exposed server actions as function declarations (a new array, empty
 * when there are none), or NULL when out of memory: those for everyone
 * (`needs_user` false), or those only a signed-in user's face declares
 * (true: GEMINI_AGENT_NEEDS_USER plugins). Built once, when the site
 * loads: every request sends them unchanged.
 */
struct json_t *toolbridge_action_declarations(const struct plugin_set *actions,
                                              bool needs_user);

/*
 * The `tools` member of a Gemini request: [{"functionDeclarations":[...]}]
 * with the server actions' declarations (`action_decls`, may be NULL)
 * first and the page tools after them, pinned to the arena; NULL when
 * there are none. Returns 0, or -1 with err set (out of memory). The chat
 * passes no `action_decls`: the site's are spliced in as text
 * (loop_input.fixed_decls), so no request tree holds the site's values.
 */
int toolbridge_tools(const struct json_t *action_decls,
                     const struct json_t *tool_defs, struct arena *a,
                     struct json_t **tools, struct status_error *err);

/* One page tool of a scanned body, checked: its own name, the function
 * it is declared as and its category (NULL: none), which outlive the
 * tape; and its nodes (JSCAN_NONE when absent; `schema` also when it
 * declares no properties, so it is left out of the declaration). */
struct toolbridge_tool {
    char fn[TOOLBRIDGE_NAME_MAX];
    const char *name, *category; /* in the arena */
    size_t node, description, schema;
};

/* The page's tools, read from a scanned body: no jansson tree of them is
 * built, their declarations are written from the body's bytes. `doc`
 * (and the nodes) serve toolbridge_page_decls() only; the rest holds
 * once the tape is gone. */
struct toolbridge_page {
    const struct jscan_doc *doc;
    struct toolbridge_tool *tools; /* in the arena */
    size_t count;
};

/*
 * toolbridge_check() of node `node` of a scanned body (JSCAN_NONE: the
 * request has none), recording each tool in `out`. The same rules and
 * messages: toolbridge_check() runs this on a jansson value's text.
 */
int toolbridge_scan(const struct jscan_doc *d, size_t node, long max_tools,
                    struct arena *a, struct toolbridge_page *out,
                    struct status_error *err);

/*
 * The page tools' function declarations as JSON text, as
 * toolbridge_declaration() builds them: the elements of a
 * functionDeclarations array without its brackets ("" for none), in the
 * arena. Schemas are copied from the body when compact. Returns 0, or -1
 * with `err` set (out of memory).
 */
int toolbridge_page_decls(const struct toolbridge_page *pt, struct arena *a,
                          const char **text, size_t *len,
                          struct status_error *err);

/* The page tool declared as the function `fn_name`, or NULL. */
const struct toolbridge_tool *
toolbridge_page_find(const struct toolbridge_page *pt, const char *fn_name);

/* The page tool definition declared as the function `fn_name`
 * (borrowed), or NULL. */
const struct json_t *toolbridge_page_tool(const struct json_t *tool_defs,
                                          const char *fn_name);

#endif /* APP_TOOLBRIDGE_H */
