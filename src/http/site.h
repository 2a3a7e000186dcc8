/*
 * site.h - the site: everything a request reads, built once.
 *
 * A site is the loaded configuration, the registry of server actions, and
 * what is presented of that registry, prebuilt so that no request pays for
 * it: the Gemini declarations of the exposed actions, the start of every
 * system instruction, and the body of GET /_jay/actions. It is built at
 * start-up and again on SIGHUP, and is immutable in between: a reload
 * builds a new site and swaps it whole (workers are forked with it), so a
 * request never sees half of one and half of another. It is the only
 * shared state of the program.
 *
 * It lives with the request path that reads it; the process layer above
 * builds, swaps and frees it, and the commands load it to inspect.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_SITE_H
#define APP_SITE_H

#include "core/common.h"
#include "core/bounds.h" /* BOUND_SECRET_MAX */
#include "registry/permission.h"

struct arena;
struct config;
struct status_error;
struct diag;
struct json_t;
struct plugin_set;

struct site {
    struct config *cfg;          /* owned */
    struct plugin_set *actions;  /* owned: the registry */
    struct json_t *declarations; /* the exposed actions' declarations */
    /* ... as JSON text: the array's elements without its brackets ("" for
     * none), spliced into every Gemini request, never put in its tree */
    char *declarations_text;
    size_t declarations_text_len;
    /* ... and those of the plugins that need a signed-in user
     * (GEMINI_AGENT_NEEDS_USER): the run API sends them too, the widget
     * never; "" when none */
    char *user_declarations_text;
    size_t user_declarations_text_len;
    char *prompt_head;      /* the site's part of the instruction */
    char *instruction_json; /* ... as the systemInstruction value */
    char *listing;          /* GET /_jay/actions */
    size_t listing_len;
    char *commands; /* GET /_jay/commands */
    size_t commands_len;
    /* plugins.config.permission read by the permission engine, borrowing
     * from cfg; has_permission false when it is absent (each face then
     * keeps its own defaults: see chat.c and policy.h) */
    struct permission_policy permission;
    bool has_permission;
    /* The secret that signs session tokens (auth.secretFile, token.h),
     * for auth_identify(); auth_secret_len is 0 when none is configured
     * (tokens are then not accepted). A configured secret that cannot be
     * used - missing, short, open to others - makes the site unusable, so
     * `serve` refuses to start and a SIGHUP keeps the old site. */
    unsigned char auth_secret[BOUND_SECRET_MAX];
    size_t auth_secret_len;
};

/*
 * Load the configuration at `config_path`, the session secret and the
 * plugins it names, and build their presentation. Returns a new site (site_free), or NULL when
 * the configuration is unusable or memory ran out. Every problem found,
 * fatal or not, is added to `d` (see config.h for the two weights).
 */
struct site *site_load(const char *config_path, struct diag *d);

/*
 * site_load() for a reload (SIGHUP) while `prev` serves: a plugin whose
 * code and config are unchanged keeps its instance (no shutdown, no
 * initialize); the others are initialised anew. If the new site is used,
 * call site_adopt(new, prev) before site_free(prev); if it is dropped,
 * site_free(new) leaves prev's instances alone.
 */
struct site *site_reload(const char *config_path, const struct site *prev,
                         struct diag *d);
void site_adopt(struct site *next, struct site *prev);

/* Can the site answer requests as it is configured (beyond loading)? 0, or
 * -1 with the reason added to `d`: what `serve`, CGI and `check` refuse,
 * and the other commands do not need. */
int site_check_serving(const struct site *s, struct diag *d);

void site_free(struct site *s);

/*
 * A new user prompt msg[len] (the chat's `message`, the run API's input
 * text) through the exposed plugins' enrichment pipeline (plugin.h's
 * plugin_enrich_prompt, registry order): *out / *out_len get what goes
 * into the user turn - `msg` itself, not copied, when no plugin changed
 * it. The plugins' metadata is logged at debug level only. 0, or -1 with
 * `err` set when a plugin failed (the prompt is then not sent).
 */
int site_enrich_prompt(const struct site *s, struct arena *a, const char *msg,
                       size_t len, const char **out, size_t *out_len,
                       struct status_error *err) ATTR_WUR;

/* The body of GET /_jay/actions: {"actions": [{name, description,
 * inputSchema, outputSchema?, sideEffects}]} for the listed actions of
 * `set` (those with a .jay-action, the chat protocol's included). A heap string (free it) with its length, or NULL when out of
 * memory. */
char *site_listing(const struct plugin_set *set, size_t *len);

#endif /* APP_SITE_H */
