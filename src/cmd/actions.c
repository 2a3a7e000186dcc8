/*
 * actions.c - `gemini-agent actions list | show NAME | types`: the
 * server actions, one line each, one as JSON, or as TypeScript types.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/cmdopt.h"
#include "cmd/commands.h"
#include "cmd/bounds.h"
#include "core/config.h"
#include "registry/plugin.h"
#include "http/site.h"
#include "core/sbuf.h"
#include "registry/tsgen.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_actions_usage[] =
    "list|show NAME|types [--out DIR] [--config FILE]";

/* functionName only for what the model is offered; route only for the
 * entries a route serves (the chat protocol). */
static json_t *
action_json(const struct plugin_action *a)
{
    return json_pack(
        "{s:s, s:s*, s:s?, s:b, s:b, s:s*, s:b, s:s?, s:O*, "
        "s:O*}",
        "name", a->name, "functionName", a->exposed ? a->fn_name : NULL,
        "description", a->description, "listed", a->listed, "exposed",
        a->exposed, "route", a->route == PLUGIN_ROUTE_CHAT ? "chat" : NULL,
        "sideEffects", a->side_effects, "source", a->source, "inputSchema",
        a->input_schema, "outputSchema", a->output_schema);
}

static int
actions_list(const struct plugin_set *ps)
{
    for (size_t i = 0; i < ps->count; i++) {
        const struct plugin_action *a = &ps->actions[i];
        const char *desc = a->description ? a->description : "";
        int dlen = (int)strcspn(desc, "\n");
        printf("%-30s %s%.*s\n", a->name,
               a->route == PLUGIN_ROUTE_CHAT ? "[chat route] "
               : !a->listed                  ? "[http only] "
               : a->side_effects             ? "[side effects] "
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
        fprintf(stderr,
                "error: no action named '%s'; see `gemini-agent "
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

        if (!a->listed)
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

/* One subcommand: its own name, usage and options, so that
 * `actions types --help` shows what `types` takes and `actions list --out`
 * is an unknown option rather than a special rule. */
struct actions_sub {
    const char *word;  /* after "actions" */
    const char *name;  /* as messages say it: "actions types" */
    const char *usage; /* what follows the name */
    int words;         /* positional words it takes (NAME) */
    bool takes_out;    /* --out DIR */
};

static const struct actions_sub actions_subs[] = {
    {"list", "actions list", "[--config FILE]", 0, false},
    {"show", "actions show", "NAME [--config FILE]", 1, false},
    {"types", "actions types", "[--out DIR] [--config FILE]", 0, true},
};

/* Load the site and run the subcommand; `arg` is NAME (show) or DIR
 * (types; NULL: next to each .jay-action). */
static int
actions(const char *config_path, const struct actions_sub *sub, const char *arg)
{
    struct site *site = cmd_load_site(config_path, true);
    int rc;

    if (site == NULL)
        return 1;
    if (strcmp(sub->word, "list") == 0)
        rc = actions_list(site->actions);
    else if (strcmp(sub->word, "show") == 0)
        rc = actions_show(site->actions, arg);
    else
        rc = actions_types(site->actions, arg);
    site_free(site);
    return rc;
}

/* The index in argv of the subcommand: the first word that is neither an
 * option nor an option's value; 0 when there is none. */
static int
find_sub(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--config") == 0)
            i++; /* its value */
        else if (argv[i][0] != '-')
            return i;
    }
    return 0;
}

int
cmd_actions(int argc, char **argv)
{
    const char *config = config_default_path(), *out = NULL, *words[2];
    const struct actions_sub *sub = NULL;
    const struct cmdopt_opt all_opts[] = {
        CMDOPT_STR("--out", &out),
        CMDOPT_STR("--config", &config),
        CMDOPT_END,
    };
    const struct cmdopt_opt config_only[] = {
        CMDOPT_STR("--config", &config),
        CMDOPT_END,
    };
    struct cmdopt_cmd c = {.name = "actions",
                           .usage = cmd_actions_usage,
                           .opts = all_opts,
                           .words = words,
                           .max_words = (int)ARRAY_SIZE(words)};
    char **rest;
    int at = find_sub(argc, argv), n = 1, rc;
    bool stop;

    for (size_t i = 0; at > 0 && i < ARRAY_SIZE(actions_subs); i++)
        if (strcmp(argv[at], actions_subs[i].word) == 0)
            sub = &actions_subs[i];
    if (sub == NULL) {
        /* `actions --help` (the whole usage), or a wrong command line */
        if (cmdopt_parse(&c, argc, argv, &rc) != 0)
            return rc;
        return cmdopt_fail(&c, "use list, show NAME or types [--out DIR]");
    }
    c = (struct cmdopt_cmd){.name = sub->name,
                            .usage = sub->usage,
                            .opts = sub->takes_out ? all_opts : config_only,
                            .words = words,
                            .max_words = sub->words};
    /* The subcommand's own command line: argv without its word. */
    rest = calloc((size_t)argc, sizeof(*rest));
    if (rest == NULL)
        return 1;
    rest[0] = argv[at];
    for (int i = 1; i < argc; i++)
        if (i != at)
            rest[n++] = argv[i];
    stop = cmdopt_parse(&c, n, rest, &rc) != 0;
    free(rest);
    if (stop)
        return rc;
    if (c.nwords < sub->words)
        return cmdopt_fail(&c, "needs the NAME of an action (see "
                               "`gemini-agent actions list`)");
    return actions(config, sub, sub->words > 0 ? words[0] : out);
}
