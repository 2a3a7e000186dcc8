/*
 * newsite.h - `gemini-agent setup DIR`: a complete site in DIR, from the
 * templates built into the program and the share folder (the checkout,
 * or PREFIX/share/gemini-agent once installed):
 *
 *     agent.yaml       0640  from conf/site-agent.yaml.template
 *     .gemini.yaml     0600  from conf/gemini.yaml.template (the key)
 *     .session-secret  0600  32 random bytes (core/token.h)
 *     actions/         0750  the site's plugins; _example/ is not loaded
 *     var/             0700  dataDir: the responder's state
 *     run/             0711  where the FastCGI socket goes
 *     www/             0755  index.html, agent/ and vendor/ (public files)
 *     server/          0755  the web server snippets, rendered for DIR
 *
 * DIR itself is made 0711 when missing: the web server may pass through
 * it to www/ and run/ but not list it. A file or folder that exists is
 * kept as it is, never overwritten nor re-moded.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_NEWSITE_H
#define APP_NEWSITE_H

#include "core/common.h"

#include <stddef.h>

struct sbuf;

/* What the placeholder paths of the shipped snippets become. */
struct newsite_paths {
    const char *dir;    /* the site's folder, absolute */
    const char *binary; /* the gemini-agent program, absolute */
};

/* The snippets `setup DIR` renders into DIR/server/, as paths under the
 * share folder (the Makefile's SITE_SNIPPETS), NULL-ended. */
extern const char *const newsite_snippets[];
/* conf/site-agent.yaml.template, made into this string by the Makefile. */
extern const char newsite_agent_template[];

/* Append `text` to `out` with every placeholder path replaced by the
 * site's (the table in newsite.c). 0, or -1 when `out` is full. */
int newsite_render(const char *text, const struct newsite_paths *p,
                   struct sbuf *out);

/* NULL when `path` can be written into nginx's and Apache's
 * configuration as it is; else why not. */
const char *newsite_path_problem(const char *path);

/* Make the site in `dir` from the share folder `share`; says what it
 * wrote and kept, then what to do next, on stdout (problems on stderr).
 * 0, or 1 when something could not be made. */
int newsite_create(const char *dir, const char *share);

/* The share folder this program was built with. */
const char *newsite_share_dir(void);

#endif /* APP_NEWSITE_H */
