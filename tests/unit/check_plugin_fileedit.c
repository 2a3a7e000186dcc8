/*
 * check_plugin_fileedit.c - the built-in plugin file_edit, called through
 * its operations as the terminal client will: round trips of every tool
 * with undo, the sandbox (.., absolute paths, symbolic links out, the
 * backup folder), atomic writes that leave no temporary files, readFile's
 * paging, its config; and both terminal-only built-ins (file_edit, cli)
 * through the registry: exposed for the terminal client, never for the
 * web. Each test works in its own folder under /tmp.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit.h"
#include "plugins/builtin.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"

#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];
static char root[128], outside[128];
static const struct gemini_agent_plugin *fe;
static void *self;
static struct arena ar;
static pthread_mutex_t ar_lock = PTHREAD_MUTEX_INITIALIZER;

/* The arena is shared by the threads of concurrent_changes. */
static void *
t_alloc(const struct gemini_agent_ctx *ctx, size_t n)
{
    void *p;

    pthread_mutex_lock(&ar_lock);
    p = arena_alloc(ctx->host, n);
    pthread_mutex_unlock(&ar_lock);
    return p;
}

static void
put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The file's content (arena), or NULL when it cannot be read. */
static char *
get(const char *path)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return arena_strdup(&ar, buf);
}

static char *
at(const char *base, const char *name)
{
    return arena_printf(&ar, "%s/%s", base, name);
}

static int
init_with(const char *config, void **out, char *err, size_t n)
{
    struct gemini_agent_init init = {config, strlen(config), tmp, tmp};
    return fe->initialize(&init, out, err, n);
}

static void
setup(void)
{
    char err[300] = "", *conf;

    snprintf(tmp, sizeof(tmp), "/tmp/ga-fe.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(root, sizeof(root), "%s/root", tmp);
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    ck_assert_int_eq(mkdir(outside, 0755), 0);
    arena_init(&ar);
    fe = builtin_file_edit(GEMINI_AGENT_PLUGIN_ABI);
    ck_assert_ptr_nonnull(fe);
    conf = arena_printf(&ar, "{\"root\":\"%s\"}", root);
    ck_assert_msg(init_with(conf, &self, err, sizeof(err)) == 0, "%s", err);
}

static void
teardown(void)
{
    char cmd[128];

    fe->shutdown(self);
    self = NULL;
    arena_release(&ar);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    ck_assert_int_eq(system(cmd), 0);
}

/* Run `tool` with the JSON `args`: its return code, the answer in *text. */
static int
call(const char *tool, const char *args, const char **text)
{
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, tmp, t_alloc,
                                   &ar, NULL, NULL};
    struct gemini_agent_out out = {NULL, 0};
    int rc = fe->execute(self, &ctx, tool, args, strlen(args), &out);

    ck_assert_ptr_nonnull(out.text);
    *text = out.text;
    return rc;
}

/* Run it and expect success: the answer. */
static const char *
ok(const char *tool, const char *args)
{
    const char *t;
    int rc = call(tool, args, &t);
    ck_assert_msg(rc == GEMINI_AGENT_OK, "%s %s: %d %s", tool, args, rc, t);
    return t;
}

/* Run it and expect a refusal whose message says `says`. */
static void
refused(const char *tool, const char *args, const char *says)
{
    const char *t;
    int rc = call(tool, args, &t);
    ck_assert_msg(rc == GEMINI_AGENT_BAD_INPUT, "%s %s: %d %s", tool, args,
                  rc, t);
    ck_assert_msg(strstr(t, says) != NULL, "%s %s: '%s' lacks '%s'", tool,
                  args, t, says);
}

/* Files in `dir` whose name starts with ".": temporary ones would. */
static int
dot_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
             strcmp(e->d_name, "..") != 0 &&
             strcmp(e->d_name, ".gemini-agent") != 0;
    closedir(d);
    return n;
}

START_TEST(round_trip_with_undo)
{
    const char *t;

    t = ok("writeFile", "{\"path\":\"a.txt\",\"content\":\"hello\\nworld\\n\"}");
    ck_assert_str_eq(t, "{\"path\":\"a.txt\",\"bytes\":12,\"created\":true}");
    ck_assert_str_eq(get(at(root, "a.txt")), "hello\nworld\n");
    t = ok("readFile", "{\"path\":\"a.txt\"}");
    ck_assert_ptr_nonnull(strstr(t, "\"content\":\"hello\\nworld\\n\""));
    ck_assert_ptr_nonnull(strstr(t, "\"totalLines\":2"));
    ck_assert_ptr_nonnull(strstr(t, "\"truncated\":false"));

    t = ok("updateFile", "{\"path\":\"a.txt\",\"oldText\":\"world\","
                         "\"newText\":\"there\"}");
    ck_assert_str_eq(t, "{\"path\":\"a.txt\",\"replacements\":1}");
    ck_assert_str_eq(get(at(root, "a.txt")), "hello\nthere\n");

    /* missing folders are made; an absolute path inside root is fine */
    ok("writeFile", arena_printf(&ar, "{\"path\":\"%s/sub/dir/b.txt\","
                                      "\"content\":\"B\"}",
                                 root));
    ck_assert_str_eq(get(at(root, "sub/dir/b.txt")), "B");
    ok("removeFile", "{\"path\":\"a.txt\"}");
    ck_assert_ptr_null(get(at(root, "a.txt")));
    refused("readFile", "{\"path\":\"a.txt\"}", "no such file");

    /* undo a.txt: back through remove, update and its creation */
    t = ok("undo", "{\"path\":\"a.txt\"}");
    ck_assert_str_eq(t, "{\"path\":\"a.txt\",\"undone\":\"restored\"}");
    ck_assert_str_eq(get(at(root, "a.txt")), "hello\nthere\n");
    ok("undo", "{\"path\":\"./a.txt\"}");
    ck_assert_str_eq(get(at(root, "a.txt")), "hello\nworld\n");
    t = ok("undo", "{\"path\":\"a.txt\"}");
    ck_assert_str_eq(t, "{\"path\":\"a.txt\",\"undone\":\"removed\"}");
    ck_assert_ptr_null(get(at(root, "a.txt")));
    refused("undo", "{\"path\":\"a.txt\"}", "no change of 'a.txt' to undo");
    /* the last change overall: b.txt's creation */
    t = ok("undo", "{}");
    ck_assert_str_eq(t, "{\"path\":\"sub/dir/b.txt\",\"undone\":\"removed\"}");
    ck_assert_ptr_null(get(at(root, "sub/dir/b.txt")));
    refused("undo", "{}", "no change to undo");

    /* writeFile over a file: undo brings the old content back */
    put(at(root, "c.txt"), "old");
    chmod(at(root, "c.txt"), 0600);
    t = ok("writeFile", "{\"path\":\"c.txt\",\"content\":\"new\"}");
    ck_assert_ptr_nonnull(strstr(t, "\"created\":false"));
    ok("undo", "{}");
    ck_assert_str_eq(get(at(root, "c.txt")), "old");
    {
        struct stat st;
        ck_assert_int_eq(stat(at(root, "c.txt"), &st), 0);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
    }
}
END_TEST

START_TEST(update_needs_one_match)
{
    const char *t;

    put(at(root, "u.txt"), "x = 1;\ny = 1;\n");
    refused("updateFile",
            "{\"path\":\"u.txt\",\"oldText\":\"z\",\"newText\":\"w\"}",
            "oldText was not found in 'u.txt'");
    refused("updateFile",
            "{\"path\":\"u.txt\",\"oldText\":\"1;\",\"newText\":\"2;\"}",
            "oldText occurs 2 times in 'u.txt'");
    ck_assert_str_eq(get(at(root, "u.txt")), "x = 1;\ny = 1;\n");
    t = ok("updateFile", "{\"path\":\"u.txt\",\"oldText\":\"1;\","
                         "\"newText\":\"2;\",\"replaceAll\":true}");
    ck_assert_str_eq(t, "{\"path\":\"u.txt\",\"replacements\":2}");
    ck_assert_str_eq(get(at(root, "u.txt")), "x = 2;\ny = 2;\n");
    refused("updateFile",
            "{\"path\":\"none.txt\",\"oldText\":\"a\",\"newText\":\"b\"}",
            "no such file");
    refused("updateFile",
            "{\"path\":\"u.txt\",\"oldText\":\"\",\"newText\":\"b\"}",
            "oldText must not be empty");
    refused("removeFile", "{\"path\":\"none.txt\"}", "no such file");
    refused("writeFile", "{\"path\":\"u.txt\"}", "bad arguments");
    refused("nope", "{}", "unknown tool");
}
END_TEST

START_TEST(read_pages_by_line)
{
    const char *t;

    put(at(root, "l.txt"), "l1\nl2\nl3\nl4\nl5");
    t = ok("readFile", "{\"path\":\"l.txt\",\"offset\":2,\"limit\":2}");
    ck_assert_str_eq(t, "{\"path\":\"l.txt\",\"content\":\"l2\\nl3\\n\","
                        "\"startLine\":2,\"lines\":2,\"totalLines\":5,"
                        "\"truncated\":true,\"nextOffset\":4}");
    t = ok("readFile", "{\"path\":\"l.txt\",\"offset\":4}");
    ck_assert_ptr_nonnull(strstr(t, "\"content\":\"l4\\nl5\""));
    ck_assert_ptr_nonnull(strstr(t, "\"truncated\":false"));
    refused("readFile", "{\"path\":\"l.txt\",\"offset\":9}",
            "offset 9 is past the end of 'l.txt' (5 lines)");
    put(at(root, "empty.txt"), "");
    t = ok("readFile", "{\"path\":\"empty.txt\"}");
    ck_assert_ptr_nonnull(strstr(t, "\"content\":\"\""));
    put(at(root, "bin"), "\xff\xfe\x01");
    refused("readFile", "{\"path\":\"bin\"}", "'bin' is not UTF-8 text");
    refused("readFile", "{\"path\":\".\"}", "not a regular file");
}
END_TEST

START_TEST(escapes_refused)
{
    const char *t;

    put(at(outside, "secret"), "s3cret");
    refused("readFile", "{\"path\":\"../outside/secret\"}",
            "outside the working folder");
    refused("readFile",
            arena_printf(&ar, "{\"path\":\"%s/secret\"}", outside),
            "outside the working folder");
    refused("readFile", "{\"path\":\"/etc/passwd\"}",
            "outside the working folder");
    refused("writeFile", "{\"path\":\"../outside/new\",\"content\":\"x\"}",
            "outside the working folder");
    refused("writeFile", "{\"path\":\"nodir/../../outside/new\","
                         "\"content\":\"x\"}",
            "'..' after a folder that does not exist");
    ck_assert_ptr_null(get(at(outside, "new")));

    /* symbolic links that lead out: to a folder, to a file, to nowhere */
    ck_assert_int_eq(symlink(outside, at(root, "out")), 0);
    ck_assert_int_eq(symlink(at(outside, "secret"), at(root, "sec")), 0);
    ck_assert_int_eq(symlink(at(outside, "nothing"), at(root, "dangling")),
                     0);
    refused("readFile", "{\"path\":\"out/secret\"}",
            "outside the working folder");
    refused("readFile", "{\"path\":\"sec\"}", "outside the working folder");
    refused("writeFile", "{\"path\":\"sec\",\"content\":\"x\"}",
            "outside the working folder");
    refused("updateFile", "{\"path\":\"sec\",\"oldText\":\"s\","
                          "\"newText\":\"x\"}",
            "outside the working folder");
    refused("removeFile", "{\"path\":\"sec\"}", "outside the working folder");
    refused("writeFile", "{\"path\":\"out/new\",\"content\":\"x\"}",
            "outside the working folder");
    refused("writeFile", "{\"path\":\"dangling\",\"content\":\"x\"}",
            "symbolic link whose target does not exist");
    ck_assert_ptr_null(get(at(outside, "new")));
    ck_assert_ptr_null(get(at(outside, "nothing")));
    ck_assert_str_eq(get(at(outside, "secret")), "s3cret");
    refused("undo", "{\"path\":\"../outside/secret\"}",
            "outside the working folder");

    /* a link that stays inside is followed */
    put(at(root, "real.txt"), "r");
    ck_assert_int_eq(symlink("real.txt", at(root, "alias")), 0);
    t = ok("readFile", "{\"path\":\"alias\"}");
    ck_assert_ptr_nonnull(strstr(t, "\"path\":\"real.txt\""));

    /* the backup folder is out of reach */
    ok("writeFile", "{\"path\":\"w.txt\",\"content\":\"1\"}");
    refused("writeFile", "{\"path\":\".gemini-agent/backups/journal\","
                         "\"content\":\"x\"}",
            "backup folder");
    refused("removeFile", "{\"path\":\".gemini-agent/backups/journal\"}",
            "backup folder");
    refused("readFile", "{\"path\":\"\"}", "non-empty");
}
END_TEST

START_TEST(writes_are_atomic)
{
    const char *t;
    struct stat st;

    for (int i = 0; i < 5; i++)
        ok("writeFile", arena_printf(&ar, "{\"path\":\"f.txt\","
                                          "\"content\":\"v%d\"}",
                                     i));
    ok("updateFile", "{\"path\":\"f.txt\",\"oldText\":\"v4\","
                     "\"newText\":\"v5\"}");
    ck_assert_str_eq(get(at(root, "f.txt")), "v5");
    ck_assert_int_eq(dot_files(root), 0);
    /* a write that fails (a folder is in the way) leaves nothing either */
    ck_assert_int_eq(mkdir(at(root, "d"), 0755), 0);
    refused("writeFile", "{\"path\":\"d\",\"content\":\"x\"}",
            "not a regular file");
    ck_assert_int_eq(dot_files(root), 0);
    ck_assert_int_eq(stat(at(root, "d"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    /* the backups and the journal are where the docs say */
    ck_assert_int_eq(stat(at(root, ".gemini-agent/backups/journal"), &st),
                     0);
    t = get(at(root, ".gemini-agent/backups/journal"));
    ck_assert_ptr_nonnull(strstr(t, "\"path\":\"f.txt\""));
}
END_TEST

START_TEST(config_checked)
{
    char err[300] = "";
    void *s2 = NULL;
    const char *t;

    ck_assert_int_ne(init_with("{\"root\":\"/nonexistent/x\"}", &s2, err,
                               sizeof(err)),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "is not a folder"));
    ck_assert_int_ne(init_with("{\"rooot\":\"x\"}", &s2, err, sizeof(err)),
                     0);
    ck_assert_int_ne(init_with("{\"maxFileBytes\":0}", &s2, err,
                               sizeof(err)),
                     0);
    ck_assert_int_ne(init_with(arena_printf(&ar, "{\"root\":\"%s\","
                                                 "\"backupDir\":\"%s\"}",
                                            root, tmp),
                               &s2, err, sizeof(err)),
                     0);

    /* relative root and backupDir: against agent.yaml's folder (tmp) */
    fe->shutdown(self);
    self = NULL;
    ck_assert_msg(init_with("{\"root\":\"root\",\"backupDir\":\"bk\","
                            "\"maxFileBytes\":8}",
                            &self, err, sizeof(err)) == 0,
                  "%s", err);
    ok("writeFile", "{\"path\":\"m.txt\",\"content\":\"12345678\"}");
    ck_assert_str_eq(get(at(root, "m.txt")), "12345678");
    refused("writeFile", "{\"path\":\"m.txt\",\"content\":\"123456789\"}",
            "maxFileBytes");
    t = get(at(tmp, "bk/journal"));
    ck_assert_ptr_nonnull(t);
    put(at(root, "big.txt"), "123456789");
    refused("readFile", "{\"path\":\"big.txt\"}", "larger than maxFileBytes");
}
END_TEST

/* Ten writes of its own file, then ten updates of a shared one. */
static void *
writer(void *arg)
{
    int n = (int)(intptr_t)arg;
    const char *t;

    for (int i = 0; i < 10; i++) {
        char args[128];
        snprintf(args, sizeof(args),
                 "{\"path\":\"t%d.txt\",\"content\":\"%d-%d\"}", n, n, i);
        if (call("writeFile", args, &t) != GEMINI_AGENT_OK)
            return (void *)1;
        snprintf(args, sizeof(args),
                 "{\"path\":\"shared.txt\",\"oldText\":\"END\","
                 "\"newText\":\"xEND\"}");
        if (call("updateFile", args, &t) != GEMINI_AGENT_OK)
            return (void *)1;
    }
    return NULL;
}

START_TEST(concurrent_changes)
{
    pthread_t th[4];
    const char *t;
    void *r;
    int undone = 0;

    put(at(root, "shared.txt"), "END");
    for (intptr_t i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, writer, (void *)i), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(th[i], &r), 0);
        ck_assert_ptr_null(r);
    }
    /* every update saw the one before: none was lost */
    t = get(at(root, "shared.txt"));
    ck_assert_uint_eq(strlen(t), 43);
    ck_assert_int_eq(dot_files(root), 0);
    /* all 80 changes are in the journal, and undo takes them all back */
    while (call("undo", "{}", &t) == GEMINI_AGENT_OK)
        undone++;
    ck_assert_int_eq(undone, 80);
    ck_assert_str_eq(get(at(root, "shared.txt")), "END");
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_null(get(at(root, arena_printf(&ar, "t%d.txt", i))));
}
END_TEST

/* --- both terminal-only built-ins in the registry --------------------- */

static struct plugin_set *
load(const char *yaml, bool terminal, struct config **cfg, struct diag *d)
{
    char *path = at(tmp, "agent.yaml");

    put(path, yaml);
    *cfg = config_load(path, d);
    ck_assert_ptr_nonnull(*cfg);
    diag_release(d);
    *d = (struct diag)DIAG_INIT;
    return plugin_load(NULL, 0,
                       &(struct soplugin_env){.cfg = &(*cfg)->plugins,
                                              .builtins = builtin_plugins,
                                              .terminal = terminal,
                                              .config_dir = tmp,
                                              .data_dir = tmp},
                       NULL, d);
}

static bool
said(const struct diag *d, const char *what)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->items[i].msg, what))
            return true;
    return false;
}

START_TEST(terminal_only_in_the_registry)
{
    struct diag d = DIAG_INIT;
    struct config *cfg;
    struct plugin_set *set;
    const struct plugin_action *a;
    char *yaml;

    yaml = arena_printf(&ar,
                        "actions: []\nplugins:\n  expose: [cli, file_edit]\n"
                        "  config:\n    file_edit: {root: root}\n"
                        "    cli: {root: root, timeoutMs: 5000}\n");
    /* the web: neither, and named ones are reported */
    set = load(yaml, false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_ptr_null(plugin_find(set, "cli.run"));
    ck_assert_ptr_null(plugin_find(set, "file_edit.readFile"));
    ck_assert_msg(said(&d, "plugin 'cli' is for the terminal client only") &&
                      said(&d, "plugin 'file_edit' is for the terminal "
                               "client only"),
                  "terminal-only plugins refused in silence");
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);

    /* the terminal client: both, write tools with side effects */
    set = load(yaml, true, &cfg, &d);
    ck_assert_uint_eq(set->nso, 2);
    ck_assert_ptr_nonnull(a = plugin_find(set, "file_edit.readFile"));
    ck_assert(!a->side_effects);
    ck_assert_ptr_nonnull(a = plugin_find(set, "file_edit.writeFile"));
    ck_assert(a->side_effects);
    ck_assert_ptr_nonnull(a = plugin_find(set, "file_edit.undo"));
    ck_assert(a->side_effects);
    ck_assert_ptr_nonnull(a = plugin_find(set, "cli.run"));
    ck_assert(a->side_effects);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);

    /* expose: all with their config: still never on the web */
    set = load("actions: []\nplugins:\n  expose: all\n  config:\n"
               "    cli: {timeoutMs: 5000}\n    file_edit: {}\n",
               false, &cfg, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_uint_eq(set->count, 0);
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);

    /* a config their schema refuses: reported, left out */
    set = load("actions: []\nplugins:\n  expose: [cli]\n  config:\n"
               "    cli: {timeoutMs: 0}\n",
               true, &cfg, &d);
    ck_assert_uint_eq(set->nso, 0);
    ck_assert_msg(said(&d, "plugins.config.cli: /timeoutMs"), "not reported");
    plugin_set_free(set);
    config_free(cfg);
    diag_release(&d);
}
END_TEST

Suite *
plugin_fileedit_suite(void)
{
    Suite *s = suite_create("plugin_fileedit");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip_with_undo);
    tcase_add_test(tc, update_needs_one_match);
    tcase_add_test(tc, read_pages_by_line);
    tcase_add_test(tc, escapes_refused);
    tcase_add_test(tc, writes_are_atomic);
    tcase_add_test(tc, config_checked);
    tcase_add_test(tc, concurrent_changes);
    tcase_add_test(tc, terminal_only_in_the_registry);
    suite_add_tcase(s, tc);
    return s;
}
