/*
 * commands.c - the site owner's commands: setup, check, actions, agent-kit.
 *
 * Each command loads what it needs, prints for a person (problems as
 * `file:line: message`, one per line, on stderr) and returns an exit code.
 * None of them ever prints the API key: at most where it came from.
 *
 * SPDX-License-Identifier: MIT
 */
#include "common.h"
#include "commands.h"
#include "config.h"
#include "diag.h"
#include "plugin.h"
#include "sbuf.h"
#include "tsgen.h"
#include "yamlout.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Generated files are small; this cap only stops a runaway. */
#define GENERATED_MAX (4u * 1024 * 1024)

/* Write `len` bytes to `path` through a temporary file and rename. */
static int
write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    char tmp[4096];
    int fd;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int
make_dir(const char *dir)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "error: cannot create folder '%s': %s\n", dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* Load the config for a command; prints problems. NULL when fatal. */
static struct config *
load_for_command(const char *path, bool quiet_ok)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = config_load(path, &d);

    if (!quiet_ok || cfg == NULL)
        diag_print(&d, stderr, "");
    diag_release(&d);
    if (cfg == NULL)
        fprintf(stderr, "error: the configuration in '%s' cannot be used\n",
                path);
    return cfg;
}

/* --- setup ---------------------------------------------------------------- */

int
cmd_setup(const char *config_dir)
{
    char src[4096], dst[4096];
    FILE *in;
    struct sbuf text;
    char chunk[4096];
    size_t n;
    int fd, rc = 1;

    snprintf(dst, sizeof(dst), "%s/.gemini.yaml", config_dir);
    snprintf(src, sizeof(src), "%s/gemini.yaml.template", config_dir);
    in = fopen(src, "r");
    if (in == NULL && strcmp(config_dir, "conf") != 0) {
        snprintf(src, sizeof(src), "conf/gemini.yaml.template");
        in = fopen(src, "r");
    }
    if (in == NULL) {
        fprintf(stderr,
                "error: cannot read the template '%s/gemini.yaml.template': "
                "%s\n",
                config_dir, strerror(errno));
        return 1;
    }
    sbuf_init(&text, 64 * 1024);
    while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
        if (sbuf_add(&text, chunk, n) != 0)
            break;
    fclose(in);
    /* O_EXCL: an existing file holds someone's key; never overwrite it. */
    fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            fprintf(stderr,
                    "error: '%s' already exists; edit it, or remove it and "
                    "run setup again\n",
                    dst);
        else
            fprintf(stderr, "error: cannot create '%s': %s\n", dst,
                    strerror(errno));
        goto out;
    }
    if (fchmod(fd, 0600) != 0 || write(fd, text.buf, text.len) != (ssize_t)text.len) {
        fprintf(stderr, "error: cannot write '%s': %s\n", dst, strerror(errno));
        close(fd);
        unlink(dst);
        goto out;
    }
    close(fd);
    printf("wrote %s (mode 0600, readable only by you)\n"
           "next:\n"
           "  1. put your Gemini API key in apiKey in %s\n"
           "     (or leave it and set GEMINI_API_KEY in the server's "
           "environment)\n"
           "  2. run: gemini-agent check --config %s/agent.yaml\n",
           dst, dst, config_dir);
    rc = 0;
out:
    sbuf_release(&text);
    return rc;
}

/* --- check ---------------------------------------------------------------- */

int
cmd_check(const char *config_path)
{
    struct diag d = DIAG_INIT;
    struct config *cfg = config_load(config_path, &d);
    size_t exposed = 0;
    struct stat st;
    int rc;

    diag_print(&d, stdout, "");
    rc = d.count == 0 && cfg != NULL ? 0 : 1;
    if (cfg != NULL) {
        const struct config_gemini *g = &cfg->gemini;
        if (g->key_source == CONFIG_KEY_ENV_GEMINI ||
            g->key_source == CONFIG_KEY_ENV_GOOGLE)
            printf("note: the API key comes from %s (it overrides apiKey in "
                   "%s)\n",
                   g->key_source == CONFIG_KEY_ENV_GEMINI ? "GEMINI_API_KEY"
                                                          : "GOOGLE_API_KEY",
                   g->path);
        else if (g->key_source == CONFIG_KEY_FILE)
            printf("note: the API key comes from %s\n", g->path);
        if (stat(g->path, &st) == 0 && (st.st_mode & 077) != 0)
            printf("note: %s can be read by other users; run chmod 600 on "
                   "it\n",
                   g->path);
        for (size_t i = 0; i < cfg->plugins->count; i++)
            exposed += cfg->plugins->actions[i].exposed;
        printf("%s: %zu actions (%zu exposed to the model), model %s\n",
               config_path, cfg->plugins->count, exposed, g->model);
    }
    printf("%s\n", rc == 0 ? "ok" : "problems found");
    diag_release(&d);
    config_free(cfg);
    return rc;
}

/* --- actions list | show | types ------------------------------------------- */

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

    if (out_dir != NULL && make_dir(out_dir) != 0)
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
        sbuf_init(&ts, GENERATED_MAX);
        if (tsgen_action(&ts, shortname, a->description, a->source,
                         a->input_schema, a->output_schema) != 0 ||
            write_file(path, ts.buf, ts.len, 0644) != 0) {
            fprintf(stderr, "error: cannot write '%s'\n", path);
            rc = 1;
        } else {
            printf("wrote %s\n", path);
        }
        sbuf_release(&ts);
    }
    return rc;
}

int
cmd_actions(const char *config_path, const char *sub, const char *arg)
{
    struct config *cfg = load_for_command(config_path, true);
    int rc;

    if (cfg == NULL)
        return 1;
    if (strcmp(sub, "list") == 0)
        rc = actions_list(cfg->plugins);
    else if (strcmp(sub, "show") == 0)
        rc = actions_show(cfg->plugins, arg);
    else
        rc = actions_types(cfg->plugins, arg);
    config_free(cfg);
    return rc;
}

/* --- agent-kit ----------------------------------------------------------- */

int
cmd_agent_kit(const char *config_path, const char *out_dir)
{
    struct config *cfg = load_for_command(config_path, true);
    struct sbuf y;
    char path[4096];
    int rc = 1;

    if (cfg == NULL)
        return 1;
    sbuf_init(&y, GENERATED_MAX);
    if (make_dir(out_dir) != 0)
        goto out;
    if (sbuf_adds(&y, "# actions-index.yaml - generated by `gemini-agent "
                      "agent-kit`; do not edit.\n"
                      "# Every server action exposed to the model: call "
                      "it over HTTP as\n"
                      "# POST /_jay/actions/<name> with the input as the "
                      "JSON body;\n"
                      "# the model sees it as the function <functionName>.\n"
                      "actions:\n") != 0)
        goto out;
    for (size_t i = 0; i < cfg->plugins->count; i++) {
        const struct plugin_action *a = &cfg->plugins->actions[i];
        json_t *v;
        int bad;

        if (!a->exposed)
            continue;
        v = json_pack("{s:s, s:s, s:s, s:b, s:s, s:O, s:O*}", "name", a->name,
                      "functionName", a->fn_name, "description",
                      a->description, "sideEffects", a->side_effects,
                      "source", a->source, "inputSchema", a->input_schema,
                      "outputSchema", a->output_schema);
        /* Each action is one list item: "- name: ..." then the rest. */
        bad = v == NULL || sbuf_adds(&y, "  -") != 0;
        const char *key;
        json_t *val;
        bool first = true;
        json_object_foreach(v, key, val) {
            if (bad)
                break;
            if (first) {
                /* yamlout_entry indents; the first key sits after "-". */
                bad = yamlout_entry(&y, 1, key, val) != 0;
                first = false;
            } else {
                bad = yamlout_entry(&y, 4, key, val) != 0;
            }
        }
        json_decref(v);
        if (bad)
            goto out;
    }
    snprintf(path, sizeof(path), "%s/actions-index.yaml", out_dir);
    if (write_file(path, y.buf, y.len, 0644) != 0) {
        fprintf(stderr, "error: cannot write '%s': %s\n", path,
                strerror(errno));
        goto out;
    }
    printf("wrote %s\n", path);
    rc = 0;
out:
    sbuf_release(&y);
    config_free(cfg);
    return rc;
}
