/*
 * fileedit.c - the built-in plugin `file_edit`: the coding agent's hands
 * on the files of one folder (`root`, the terminal client's --cwd) and of
 * the `addDirs` folders beside it (--add-dir).
 *
 * Tools: Claude Code's Read, Write, Edit, MultiEdit, Glob, Grep and LS,
 * with its input fields and result texts (kept byte for byte: the golden
 * texts of tests/unit/check_plugin_fileedit.c), and Undo, ours. Each
 * answer is {"text": what Claude Code puts in the tool_result, ...its
 * structured tool_use_result fields}; a failure the model should see is
 * GEMINI_AGENT_BAD_INPUT with Claude Code's error text. Removing a file
 * is Bash's job, as in Claude Code.
 *
 * This file is the plugin's config, declarations and tool table; the
 * tools and their parts are in the fileedit_*.c files fileedit_int.h
 * lists.
 *
 * Every path is resolved first - an absolute path outside root and the
 * addDirs, a `..` that climbs out and a symbolic link that leads out are
 * all refused - and the backup folder is out of the write tools' reach.
 * Glob, Grep and LS walk folders without following symbolic links, so a
 * walk stays where its start was allowed. Every change first saves what
 * it replaces (a copy of the old file, or the note that there was none)
 * in the backup folder's journal, so Undo can step back change by
 * change; files are replaced atomically (a temporary file beside the
 * target, fsync, rename).
 *
 * Not a sandbox against the machine: it is the terminal client's
 * (GEMINI_AGENT_TERMINAL_ONLY), run by the person whose files these are;
 * the checks keep the model's paths where that person pointed it. A race
 * with another program swapping a folder for a symbolic link between the
 * check and the write is not defended against beyond O_NOFOLLOW on the
 * file itself.
 *
 * Threads and processes: changes and Undo run one at a time, under a
 * mutex (threads) and flock() on the backup folder's lock file
 * (processes), held from reading the old file to writing the new one, so
 * no update is lost; the reading tools take no lock.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Claude Code's names and input fields; the descriptions
 * are shorter than its own. */
static const char fe_declarations[] =
    "[{\"name\":\"Read\",\"description\":\"Reads a file from the local "
    "filesystem. file_path must be an absolute path. By default it reads up "
    "to 2000 lines from the start; offset (the line number to start from) "
    "and limit (the number of lines) read a part. Lines longer than 2000 "
    "characters are truncated. Results come numbered like cat -n, from 1.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the file "
    "to read\"},\"offset\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"The line number to start reading from\"},\"limit\":"
    "{\"type\":\"integer\",\"minimum\":1,\"description\":\"The number of "
    "lines to read\"}},\"required\":[\"file_path\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Write\",\"description\":\"Writes a file to the local "
    "filesystem, replacing it if it exists (missing folders are created). "
    "file_path must be absolute. Prefer Edit for changes to an existing "
    "file.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"The absolute path "
    "to the file to write (must be absolute, not relative)\"},\"content\":"
    "{\"type\":\"string\",\"description\":\"The content to write to the "
    "file\"}},\"required\":[\"file_path\",\"content\"],"
    "\"additionalProperties\":false},\"sideEffects\":true},"
    "{\"name\":\"Edit\",\"description\":\"Performs exact string replacements "
    "in files. old_string must occur exactly once (whitespace included) "
    "unless replace_all is true; an empty old_string creates a new file.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the file "
    "to modify\"},\"old_string\":{\"type\":\"string\",\"description\":"
    "\"The text to replace\"},\"new_string\":{\"type\":\"string\","
    "\"description\":\"The text to replace it with (must be different from "
    "old_string)\"},\"replace_all\":{\"type\":\"boolean\",\"description\":"
    "\"Replace all occurrences of old_string (default false)\"}},"
    "\"required\":[\"file_path\",\"old_string\",\"new_string\"],"
    "\"additionalProperties\":false},\"sideEffects\":true},"
    "{\"name\":\"MultiEdit\",\"description\":\"Makes several Edit "
    "replacements in one file, in order, each on the result of the ones "
    "before; all of them or none are applied.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"file_path\":{\"type\":\"string\","
    "\"description\":\"The absolute path to the file to modify\"},"
    "\"edits\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":100,"
    "\"items\":{\"type\":\"object\",\"properties\":{\"old_string\":"
    "{\"type\":\"string\"},\"new_string\":{\"type\":\"string\"},"
    "\"replace_all\":{\"type\":\"boolean\"}},\"required\":[\"old_string\","
    "\"new_string\"],\"additionalProperties\":false}}},\"required\":"
    "[\"file_path\",\"edits\"],\"additionalProperties\":false},"
    "\"sideEffects\":true},"
    "{\"name\":\"Glob\",\"description\":\"Fast file pattern matching (\\\"**"
    "/*.js\\\", \\\"src/**/*.{c,h}\\\"). Returns matching file paths, most "
    "recently modified first, at most 100.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"pattern\":{\"type\":\"string\","
    "\"description\":\"The glob pattern to match files against\"},\"path\":"
    "{\"type\":\"string\",\"description\":\"The directory to search in. "
    "Omit this field to use the default directory.\"}},\"required\":"
    "[\"pattern\"],\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Grep\",\"description\":\"Searches file contents with a "
    "POSIX extended regular expression. Filter files with glob; "
    "output_mode content shows matching lines (-n, -A, -B, -C), "
    "files_with_matches (the default) the files, count the matches per "
    "file. head_limit (default 250, 0 for all) cuts the output.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":"
    "{\"type\":\"string\",\"description\":\"The regular expression pattern "
    "to search for in file contents\"},\"path\":{\"type\":\"string\","
    "\"description\":\"File or directory to search in. Defaults to the "
    "current working directory.\"},\"glob\":{\"type\":\"string\","
    "\"description\":\"Glob pattern to filter files (e.g. \\\"*.js\\\", "
    "\\\"*.{ts,tsx}\\\")\"},\"output_mode\":{\"type\":\"string\",\"enum\":"
    "[\"content\",\"files_with_matches\",\"count\"]},\"-B\":{\"type\":"
    "\"integer\",\"minimum\":0},\"-A\":{\"type\":\"integer\",\"minimum\":0},"
    "\"-C\":{\"type\":\"integer\",\"minimum\":0},\"context\":{\"type\":"
    "\"integer\",\"minimum\":0},\"-n\":{\"type\":\"boolean\","
    "\"description\":\"Show line numbers (content mode; default true)\"},"
    "\"-i\":{\"type\":\"boolean\",\"description\":\"Case insensitive "
    "search\"},\"head_limit\":{\"type\":\"integer\",\"minimum\":0}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false},"
    "\"sideEffects\":false},"
    "{\"name\":\"LS\",\"description\":\"Lists files and directories in a "
    "given path (absolute) as a tree; ignore takes glob patterns to leave "
    "out.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":"
    "{\"type\":\"string\",\"description\":\"The absolute path to the "
    "directory to list\"},\"ignore\":{\"type\":\"array\",\"maxItems\":100,"
    "\"items\":{\"type\":\"string\"}}},\"required\":[\"path\"],"
    "\"additionalProperties\":false},\"sideEffects\":false},"
    "{\"name\":\"Undo\",\"description\":\"Undo the last change Write, Edit "
    "or MultiEdit made to file_path, or the last change of all without it "
    "(a file they created is removed). Repeat to go further back.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"file_path\":"
    "{\"type\":\"string\"}},\"additionalProperties\":false},"
    "\"sideEffects\":true}]";
#if BOUND_FILEEDIT_EDITS != 100
#error "fe_declarations' edits maxItems is not BOUND_FILEEDIT_EDITS"
#endif

static const char *
fe_decls(void *self)
{
    (void)self;
    return fe_declarations;
}

static const char *
fe_auto(void *self)
{
    (void)self;
    return "[\"Read\",\"Glob\",\"Grep\",\"LS\"]";
}

static const char *
fe_instructions(void *self)
{
    (void)self;
    return "The file tools (Read, Write, Edit, MultiEdit, Glob, Grep, LS) "
           "work on the files of the user's working directory and the "
           "folders added to it; give absolute paths. Read a file before "
           "you edit it, and give Edit an old_string that occurs exactly "
           "once. Every change can be undone with Undo.";
}

/* maxFileBytes' maximum is BOUND_FILEEDIT_FILE_BYTES (checked below). */
static const char *
fe_schema(void)
{
    return "{\"type\":\"object\",\"properties\":{"
           "\"root\":{\"type\":\"string\",\"minLength\":1},"
           "\"addDirs\":{\"type\":\"array\",\"maxItems\":32,\"items\":"
           "{\"type\":\"string\",\"minLength\":1}},"
           "\"backupDir\":{\"type\":\"string\",\"minLength\":1},"
           "\"maxFileBytes\":{\"type\":\"integer\",\"minimum\":1,"
           "\"maximum\":16777216}},\"additionalProperties\":false}";
}
#if BOUND_FILEEDIT_FILE_BYTES != 16777216 || BOUND_FILEEDIT_ADD_DIRS != 32
#error "fe_schema() must state BOUND_FILEEDIT_FILE_BYTES and _ADD_DIRS"
#endif

static void
fe_free(struct fileedit *fe)
{
    if (fe == NULL)
        return;
    free(fe->root);
    for (size_t i = 0; i < fe->ndirs; i++)
        free(fe->dirs[i]);
    free(fe->dirs);
    free(fe->backups);
    pthread_mutex_destroy(&fe->lock);
    free(fe);
}

/* The addDirs folders, canonical, into fe->dirs. 0, or -1 with err. */
static int
fe_add_dirs(struct fileedit *fe, const json_t *dirs, const char *base,
            char *err, size_t errsize)
{
    char buf[PATH_MAX];
    struct stat st;
    size_t i;
    json_t *v;

    if (dirs == NULL)
        return 0;
    if (!json_is_array(dirs) ||
        json_array_size(dirs) > BOUND_FILEEDIT_ADD_DIRS) {
        snprintf(err, errsize, "addDirs must be a list of at most %d folders",
                 BOUND_FILEEDIT_ADD_DIRS);
        return -1;
    }
    if ((fe->dirs = calloc(json_array_size(dirs) + 1, sizeof(char *))) == NULL)
        goto oom;
    json_array_foreach(dirs, i, v) {
        const char *d = json_string_value(v);
        char *p;
        if (d == NULL || d[0] == '\0') {
            snprintf(err, errsize, "addDirs: each entry must be a folder");
            return -1;
        }
        if ((p = fe_join(base, d)) == NULL)
            goto oom;
        if (realpath(p, buf) == NULL || stat(buf, &st) != 0 ||
            !S_ISDIR(st.st_mode)) {
            snprintf(err, errsize, "addDirs: '%.200s' is not a folder", p);
            free(p);
            return -1;
        }
        free(p);
        if ((fe->dirs[fe->ndirs] = strdup(buf)) == NULL)
            goto oom;
        fe->ndirs++;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* fe->root: `root` against `base` (the cwd when not given), canonical.
 * 0, or -1 with err. */
static int
fe_set_root(struct fileedit *fe, const char *root, const char *base,
            const char *cwd, char *err, size_t errsize)
{
    char buf[PATH_MAX];
    struct stat st;

    fe->root = root == NULL ? strdup(cwd) : fe_join(base, root);
    if (fe->root == NULL)
        goto oom;
    if (realpath(fe->root, buf) == NULL || stat(buf, &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
        snprintf(err, errsize, "root '%.200s' is not a folder", fe->root);
        return -1;
    }
    free(fe->root);
    if ((fe->root = strdup(buf)) == NULL)
        goto oom;
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

/* fe->backups: `backups` against `base` (root's .gemini-agent/backups
 * when not given), canonical, neither root nor above it. 0, or -1 with
 * err. */
static int
fe_set_backups(struct fileedit *fe, const char *backups, const char *base,
               char *err, size_t errsize)
{
    char buf[PATH_MAX];
    const char *why = NULL;

    if (backups == NULL) {
        if (asprintf(&fe->backups, "%s/.gemini-agent/backups", fe->root) < 0)
            fe->backups = NULL;
    } else {
        fe->backups = fe_join(base, backups);
    }
    if (fe->backups == NULL)
        goto oom;
    if (fe_canonical(fe->backups, buf, &why) != 0) {
        snprintf(err, errsize, "backupDir '%.200s': %s", fe->backups, why);
        return -1;
    }
    free(fe->backups);
    if ((fe->backups = strdup(buf)) == NULL)
        goto oom;
    if (strcmp(fe->backups, fe->root) == 0 ||
        fe_inside(fe->backups, fe->root)) {
        snprintf(err, errsize,
                 "backupDir may not be root or a folder above "
                 "it");
        return -1;
    }
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
    return -1;
}

static int
fe_initialize(const struct gemini_agent_init *init, void **self, char *err,
              size_t errsize)
{
    const char *root = NULL, *backups = NULL;
    json_int_t max = DEFAULT_FILEEDIT_FILE_BYTES;
    char cwd[PATH_MAX];
    const char *base = init->config_dir ? init->config_dir : ".";
    json_error_t jerr;
    struct fileedit *fe = NULL;
    char *p = NULL;
    json_t *c, *dirs = NULL;

    c = json_loadb(init->config, init->config_len, JSON_REJECT_DUPLICATES,
                   &jerr);
    if (c == NULL ||
        json_unpack_ex(c, &jerr, JSON_STRICT, "{s?s, s?o, s?s, s?I}", "root",
                       &root, "addDirs", &dirs, "backupDir", &backups,
                       "maxFileBytes", &max) != 0) {
        snprintf(err, errsize, "bad config: %s", jerr.text);
        goto fail;
    }
    if (max < 1 || max > BOUND_FILEEDIT_FILE_BYTES) {
        snprintf(err, errsize, "maxFileBytes must be 1 to %u",
                 BOUND_FILEEDIT_FILE_BYTES);
        goto fail;
    }
    if ((fe = calloc(1, sizeof(*fe))) == NULL)
        goto oom;
    pthread_mutex_init(&fe->lock, NULL);
    fe->max_bytes = (size_t)max;
    /* the base of a relative path: agent.yaml's folder, or the cwd */
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        snprintf(err, errsize, "cannot read the working folder: %s",
                 strerror(errno));
        goto fail;
    }
    if (base[0] != '/') {
        if ((p = fe_join(cwd, base)) == NULL)
            goto oom;
        base = p;
    }
    if (fe_set_root(fe, root, base, cwd, err, errsize) != 0 ||
        fe_add_dirs(fe, dirs, base, err, errsize) != 0 ||
        fe_set_backups(fe, backups, base, err, errsize) != 0)
        goto fail;
    json_decref(c);
    free(p);
    *self = fe;
    return 0;
oom:
    snprintf(err, errsize, "out of memory");
fail:
    json_decref(c);
    free(p);
    fe_free(fe);
    return -1;
}

static void
fe_shutdown(void *self)
{
    fe_free(self);
}

/* Decode args into `j` (caller decrefs). 0, or -1 after answering. */
static int
fe_args(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
        const char *args, size_t len, json_t **j, int *rc)
{
    json_error_t jerr;

    *j = json_loadb(args, len, JSON_REJECT_DUPLICATES, &jerr);
    if (*j == NULL || !json_is_object(*j)) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "the arguments must be a JSON object");
        return -1;
    }
    return 0;
}

static int
fe_execute(void *self, const struct gemini_agent_ctx *ctx, const char *tool,
           const char *args, size_t args_len, struct gemini_agent_out *out)
{
    /* `change`: the tool runs with the journal held, from before it
     * reads the file to after it wrote it, so that two changes of one
     * file never interleave (no lost update) */
    static const struct {
        const char *name;
        bool change;
        int (*run)(struct fileedit *, struct fe_txn *,
                   const struct gemini_agent_ctx *, json_t *,
                   struct gemini_agent_out *);
    } tools[] = {
        {"Read", false, fe_tool_read}, {"Write", true, fe_tool_write},
        {"Edit", true, fe_tool_edit},  {"MultiEdit", true, fe_tool_multiedit},
        {"Glob", false, fe_tool_glob}, {"Grep", false, fe_tool_grep},
        {"LS", false, fe_tool_ls},     {"Undo", true, fe_tool_undo},
    };
    struct fe_txn t;
    json_t *a;
    int rc;

    if (self == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "not initialised");
    for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
        if (strcmp(tool, tools[i].name) != 0)
            continue;
        if (fe_args(ctx, out, args, args_len, &a, &rc) != 0) {
            json_decref(a);
            return rc;
        }
        if (tools[i].change && fe_begin(self, &t) != 0) {
            json_decref(a);
            return answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                               "cannot open the backup folder: %s",
                               strerror(errno));
        }
        rc = tools[i].run(self, tools[i].change ? &t : NULL, ctx, a, out);
        if (tools[i].change)
            fe_end(self, &t);
        json_decref(a);
        return rc;
    }
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "unknown tool '%.64s'",
                       tool);
}

static const struct gemini_agent_plugin fe_plugin = {
    .abi = GEMINI_AGENT_PLUGIN_ABI,
    .name = "file_edit",
    .declarations = fe_decls,
    .execute = fe_execute,
    .initialize = fe_initialize,
    .shutdown = fe_shutdown,
    .system_instructions = fe_instructions,
    .auto_approved_tools = fe_auto,
    .config_schema = fe_schema,
    .flags = GEMINI_AGENT_TERMINAL_ONLY,
};

const struct gemini_agent_plugin *
builtin_file_edit(unsigned abi)
{
    return abi == GEMINI_AGENT_PLUGIN_ABI ? &fe_plugin : NULL;
}
