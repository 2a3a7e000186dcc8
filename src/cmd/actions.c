/*
 * actions.c - `gemini-agent actions list | show NAME | types`: the
 * server actions, one line each, one as JSON, or as TypeScript types.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "core/bounds.h"
#include "core/config.h"
#include "registry/plugin.h"
#include "http/site.h"
#include "core/sbuf.h"
#include "registry/tsgen.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

const char cmd_actions_usage[] =
    "list|show NAME|types [--out DIR] [--config FILE]";

static json_t *
action_json(const struct plugin_action *a)
{
    return json_pack("{s:s, s:s, s:s?, s:b, s:b, s:s?, s:O*, s:O*}", "name",
                     a->name, "functionName", a->fn_name, "description",
                     a->description, "exposed", a->exposed, "sideEffects",
                     a->side_effects, "source", a->source, "inputSchema",
                     a->input_schema, "outputSchema", a->output_schema);
}

static int
actions_list(const struct plugin_set *ps)
{
    for (size_t i = 0; i < ps->count; i++) {
        const struct plugin_action *a = &ps->actions[i];
        const char *desc = a->description ? a->description : "";
        int dlen = (int)strcspn(desc, "\n");
        printf("%-28s %s%.*s\n", a->name,
               !a->exposed ? "[http only] "
               : a->side_effects ? "[side effects] "
                                 : "",
               dlen > 100 ? 100 : dlen, desc);
    }
    return 0;
}

static int
actions_show(const struct plugin_set *ps, const char *name)
{
    const struct plugin_action *a = plugin_find(ps, name);
    json_t *v;

    if (a == NULL) {
        fprintf(stderr, "error: no action named '%s'; see `gemini-agent "
                        "actions list`\n",
                name);
        return 1;
    }
    v = action_json(a);
    if (v == NULL || json_dumpf(v, stdout, JSON_INDENT(2)) != 0) {
        json_decref(v);
        return 1;
    }
    putchar('\n');
    json_decref(v);
    return 0;
}

static const char *
base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int
actions_types(const struct plugin_set *ps, const char *out_dir)
{
    int rc = 0;

    if (out_dir != NULL && cmd_make_dirs(out_dir, 0755) != 0)
        return 1;
    for (size_t i = 0; i < ps->count; i++) {
        const struct plugin_action *a = &ps->actions[i];
        const char *shortname = strchr(a->name, '.') + 1;
        char path[4096];
        struct sbuf ts;

        if (!a->exposed)
            continue;
        if (out_dir != NULL)
            snprintf(path, sizeof(path), "%s/%s.d.ts", out_dir,
                     base_name(a->source));
        else
            snprintf(path, sizeof(path), "%s.d.ts", a->source);
        sbuf_init(&ts, BOUND_GENERATED_BYTES);
        if (tsgen_action(&ts, shortname, a->description, a->source,
                         a->input_schema, a->output_schema) != 0 ||
            cmd_write_file(path, ts.buf, ts.len, 0644) != 0) {
            fprintf(stderr, "error: cannot write '%s'\n", path);
            rc = 1;
        } else {
            printf("wrote %s\n", path);
        }
        sbuf_release(&ts);
    }
    return rc;
}

/* sub is list, show (arg = NAME) or types (arg = DIR, or NULL: next to
 * each .jay-action). */
static int
actions(const char *config_path, const char *sub, const char *arg)
{
    struct site *site = cmd_load_site(config_path, true);
    int rc;

    if (site == NULL)
        return 1;
    if (strcmp(sub, "list") == 0)
        rc = actions_list(site->actions);
    else if (strcmp(sub, "show") == 0)
        rc = actions_show(site->actions, arg);
    else
        rc = actions_types(site->actions, arg);
    site_free(site);
    return rc;
}

int
cmd_actions(int argc, char **argv)
{
    const char *config = config_default_path(), *out = NULL, *words[2];
    const struct cmdopt_opt opts[] = {
        CMDOPT_STR("--out", &out),
        CMDOPT_STR("--config", &config),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {.name = "actions", .usage = cmd_actions_usage,
                           .opts = opts, .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};
    const char *sub;
    int rc;

    if (cmdopt_parse(&c, argc, argv, &rc) != 0)
        return rc;
    sub = c.nwords > 0 ? words[0] : "";
    if (!((strcmp(sub, "list") == 0 && c.nwords == 1) ||
          (strcmp(sub, "show") == 0 && c.nwords == 2) ||
          (strcmp(sub, "types") == 0 && c.nwords == 1)))
        return cmdopt_fail(&c, "use list, show NAME or types [--out DIR]");
    /* Accepted and ignored, it would let a typo'd script believe it wrote
     * files somewhere. */
    if (out != NULL && strcmp(sub, "types") != 0)
        return cmdopt_fail(&c, "--out is for 'actions types' only");
    return actions(config, sub, c.nwords == 2 ? words[1] : out);
}
