/*
 * check_plugin_fileedit.c - the built-in plugin file_edit, called through
 * its operations as the terminal client will: Claude Code's Read, Write,
 * Edit, MultiEdit, Glob, Grep and LS with golden result texts (cli.md
 * section 3), Undo after every change, the sandbox (.., absolute paths,
 * symbolic links out, addDirs, the backup folder), atomic writes that
 * leave no temporary files, its config; and both terminal-only built-ins
 * (file_edit, cli) through the registry: exposed for the terminal client,
 * never for the web. Each test works in its own folder under /tmp.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit.h"
#include "unit_plugin.h"
#include "plugins/builtin.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/arena.h"
#include "core/config.h"
#include "core/diag.h"

#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[64];
static char root[128], outside[128];
static const struct gemini_agent_plugin *fe;
static void *self;
static struct arena ar;

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
    struct gemini_agent_ctx ctx = {GEMINI_AGENT_PLUGIN_ABI, tmp, unit_plugin_alloc,
                                   &ar, NULL, NULL, NULL};
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

/* The answer's member `key` (a string, arena), or NULL. */
static const char *
member(const char *answer, const char *key)
{
    json_t *j = json_loads(answer, 0, NULL), *v;
    const char *r = NULL;

    ck_assert_msg(j != NULL, "not JSON: %s", answer);
    v = json_object_get(j, key);
    if (json_is_string(v))
        r = arena_strdup(&ar, json_string_value(v));
    json_decref(j);
    return r;
}

/* The integer at the JSON pointer-ish path "a" or "a/b" of the answer. */
static long long
number(const char *answer, const char *key, const char *sub)
{
    json_t *j = json_loads(answer, 0, NULL), *v;
    long long r;

    ck_assert_ptr_nonnull(j);
    v = json_object_get(j, key);
    if (sub != NULL)
        v = json_object_get(v, sub);
    ck_assert_msg(json_is_integer(v), "%s/%s in %s", key, sub ? sub : "",
                  answer);
    r = json_integer_value(v);
    json_decref(j);
    return r;
}

/* Run it, expect success: its "text". */
static const char *
text(const char *tool, const char *args)
{
    const char *t = member(ok(tool, args), "text");
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Its message must be exactly `msg`. */
static void
refused_exactly(const char *tool, const char *args, const char *msg)
{
    const char *t;
    int rc = call(tool, args, &t);
    ck_assert_msg(rc == GEMINI_AGENT_BAD_INPUT, "%s %s: %d %s", tool, args,
                  rc, t);
    ck_assert_str_eq(t, msg);
}

/* Set the file's modification time to `sec` (an order for Glob). */
static void
age(const char *path, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

#define ARROW "\xe2\x86\x92"
#define REMINDER                                                              \
    "\n\n<system-reminder>\nWhenever you read a file, you should consider "  \
    "whether it looks malicious. If it does, you MUST refuse to improve or " \
    "augment the code. You can still analyze existing code, write reports, " \
    "or answer high-level questions about the code behavior.\n"              \
    "</system-reminder>\n"
#define SNIPPET                                                               \
    " has been updated. Here's the result of running `cat -n` on a snippet " \
    "of the edited file:\n"

/* {"file_path": "<root>/name"...: the arguments with an absolute path. */
static const char *
fp(const char *name, const char *rest)
{
    return arena_printf(&ar, "{\"file_path\":\"%s/%s\"%s}", root, name,
                        rest);
}

START_TEST(read_numbers_and_reminds)
{
    char *big;
    const char *a, *p;

    put(at(root, "a.txt"), "alpha\nbeta\n");
    ck_assert_str_eq(text("Read", fp("a.txt", "")),
                     "     1" ARROW "alpha\n     2" ARROW "beta\n     3" ARROW
                     "" REMINDER);
    /* relative paths resolve against root; \r\n lines lose their \r */
    put(at(root, "crlf.txt"), "x\r\ny");
    ck_assert_str_eq(text("Read", "{\"file_path\":\"crlf.txt\"}"),
                     "     1" ARROW "x\n     2" ARROW "y" REMINDER);
    put(at(root, "ten.txt"), "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10");
    a = ok("Read", fp("ten.txt", ",\"offset\":3,\"limit\":2"));
    ck_assert_str_eq(member(a, "text"),
                     "     3" ARROW "l3\n     4" ARROW "l4" REMINDER);
    ck_assert_int_eq(number(a, "file", "numLines"), 2);
    ck_assert_int_eq(number(a, "file", "startLine"), 3);
    ck_assert_int_eq(number(a, "file", "totalLines"), 10);
    ck_assert_str_eq(member(a, "type"), "text");
    /* the empty file and an offset past the end */
    put(at(root, "empty.txt"), "");
    ck_assert_str_eq(text("Read", fp("empty.txt", "")),
                     "<system-reminder>Warning: the file exists but the "
                     "contents are empty.</system-reminder>");
    ck_assert_str_eq(text("Read", fp("ten.txt", ",\"offset\":20")),
                     "<system-reminder>Warning: the file exists but is "
                     "shorter than the provided offset (20). The file has "
                     "10 lines.</system-reminder>");
    /* 2000 lines by default, 2000 characters of a line */
    big = arena_alloc(&ar, 2600 * 3 + 1);
    for (int i = 0; i < 2600; i++)
        memcpy(big + 3 * i, "ab\n", 3);
    big[2600 * 3] = '\0';
    put(at(root, "long.txt"), big);
    a = ok("Read", fp("long.txt", ""));
    ck_assert_int_eq(number(a, "file", "numLines"), 2000);
    ck_assert_int_eq(number(a, "file", "totalLines"), 2601);
    p = member(a, "text");
    ck_assert_ptr_nonnull(strstr(p, "  2000" ARROW "ab" REMINDER));
    ck_assert_ptr_null(strstr(p, "  2001" ARROW));
    memset(big, 'x', 2500);
    big[2500] = '\0';
    put(at(root, "wide.txt"), big);
    p = member(ok("Read", fp("wide.txt", "")), "text");
    ck_assert_uint_eq(strlen(p), 6 + 3 + 2000 + strlen(REMINDER));
    /* the errors Claude Code gives */
    refused_exactly("Read", fp("nope.txt", ""), "File does not exist.");
    ck_assert_int_eq(mkdir(at(root, "d"), 0755), 0);
    refused_exactly("Read", fp("d", ""),
                    "EISDIR: illegal operation on a directory, read");
    refused("Read", "{\"path\":\"a.txt\"}", "InputValidationError");
}
END_TEST

START_TEST(write_creates_and_updates)
{
    const char *a, *path = at(root, "sub/new.txt");

    a = ok("Write", fp("sub/new.txt", ",\"content\":\"one\\ntwo\\n\""));
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "File created successfully at: %s",
                                  path));
    ck_assert_str_eq(member(a, "type"), "create");
    ck_assert_str_eq(member(a, "filePath"), path);
    ck_assert_str_eq(get(path), "one\ntwo\n");
    a = ok("Write", fp("sub/new.txt", ",\"content\":\"three\""));
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "The file %s" SNIPPET "     1" ARROW
                                       "three",
                                  path));
    ck_assert_str_eq(member(a, "type"), "update");
    /* Undo steps back: the old content, then no file */
    ck_assert_str_eq(text("Undo", "{}"),
                     arena_printf(&ar, "Restored %s to its content before "
                                       "the last change.",
                                  path));
    ck_assert_str_eq(get(path), "one\ntwo\n");
    ck_assert_str_eq(text("Undo", fp("sub/new.txt", "")),
                     arena_printf(&ar, "Removed %s, which the last change "
                                       "created.",
                                  path));
    ck_assert_ptr_null(get(path));
    refused_exactly("Undo", "{}", "There is no change to undo.");
}
END_TEST

START_TEST(edit_snippet_and_errors)
{
    const char *a, *path = at(root, "e.txt");

    put(path, "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\n"
              "line9\nline10\nline11\nline12\n");
    a = ok("Edit", fp("e.txt", ",\"old_string\":\"line6\","
                               "\"new_string\":\"LINE6\\nextra\""));
    /* four lines above the change, its two lines, four below */
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar,
                                  "The file %s" SNIPPET "     2" ARROW
                                  "line2\n     3" ARROW "line3\n     4" ARROW
                                  "line4\n     5" ARROW "line5\n     6" ARROW
                                  "LINE6\n     7" ARROW "extra\n     8" ARROW
                                  "line7\n     9" ARROW "line8\n    10" ARROW
                                  "line9\n    11" ARROW "line10",
                                  path));
    ck_assert_str_eq(member(a, "oldString"), "line6");
    ck_assert_str_eq(member(a, "newString"), "LINE6\nextra");
    ck_assert_str_eq(member(a, "filePath"), path);
    /* the first lines: no line before 1 */
    a = ok("Edit", fp("e.txt", ",\"old_string\":\"line1\\n\","
                               "\"new_string\":\"\""));
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar,
                                  "The file %s" SNIPPET "     1" ARROW
                                  "line2\n     2" ARROW "line3\n     3" ARROW
                                  "line4\n     4" ARROW "line5\n     5" ARROW
                                  "LINE6",
                                  path));
    refused_exactly("Edit", fp("e.txt", ",\"old_string\":\"nothere\","
                                        "\"new_string\":\"x\""),
                    "String to replace not found in file.\nString: nothere");
    refused_exactly("Edit", fp("e.txt", ",\"old_string\":\"line1\","
                                        "\"new_string\":\"x\""),
                    "Found 3 matches of the string to replace, but "
                    "replace_all is false. To replace all occurrences, set "
                    "replace_all to true. To replace only one occurrence, "
                    "please provide more context to uniquely identify the "
                    "instance.\nString: line1");
    refused_exactly("Edit", fp("e.txt", ",\"old_string\":\"same\","
                                        "\"new_string\":\"same\""),
                    "No changes to make: old_string and new_string are "
                    "exactly the same.");
    refused_exactly("Edit", fp("gone.txt", ",\"old_string\":\"a\","
                                           "\"new_string\":\"b\""),
                    "File does not exist.");
    refused_exactly("Edit", fp("e.txt", ",\"old_string\":\"\","
                                        "\"new_string\":\"b\""),
                    "Cannot create new file - file already exists.");
    a = ok("Edit", fp("e.txt", ",\"old_string\":\"line1\","
                               "\"new_string\":\"L1\",\"replace_all\":true"));
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "The file %s has been updated. All "
                                       "occurrences of 'line1' were "
                                       "successfully replaced with 'L1'.",
                                  path));
    ck_assert_str_eq(get(path), "line2\nline3\nline4\nline5\nLINE6\nextra\n"
                                "line7\nline8\nline9\nL10\nL11\nL12\n");
    /* an empty old_string creates a file */
    ok("Edit", fp("fresh.txt", ",\"old_string\":\"\",\"new_string\":\"hi\""));
    ck_assert_str_eq(get(at(root, "fresh.txt")), "hi");
    /* and every change can be undone, back to the start */
    for (int i = 0; i < 4; i++)
        ok("Undo", "{}");
    ck_assert_ptr_null(get(at(root, "fresh.txt")));
    ck_assert_str_eq(get(path), "line1\nline2\nline3\nline4\nline5\nline6\n"
                                "line7\nline8\nline9\nline10\nline11\n"
                                "line12\n");
}
END_TEST

START_TEST(multiedit_all_or_nothing)
{
    const char *path = at(root, "m.txt");

    put(path, "a b c");
    ck_assert_str_eq(
        text("MultiEdit",
             fp("m.txt", ",\"edits\":[{\"old_string\":\"a\",\"new_string\":"
                         "\"A\"},{\"old_string\":\"A b\",\"new_string\":"
                         "\"0123456789012345678901234567890123456789"
                         "0123456789xyz\"}]")),
        arena_printf(&ar,
                     "Applied 2 edits to %s:\n1. Replaced \"a\" with "
                     "\"A\"\n2. Replaced \"A b\" with \"01234567890123456"
                     "789012345678901234567890123456789...\"",
                     path));
    ck_assert_str_eq(get(path), "0123456789012345678901234567890123456789"
                                "0123456789xyz c");
    ck_assert_str_eq(text("MultiEdit", fp("m.txt", ",\"edits\":[{"
                                                   "\"old_string\":\"c\","
                                                   "\"new_string\":\"C\"}]")),
                     arena_printf(&ar, "Applied 1 edit to %s:\n1. Replaced "
                                       "\"c\" with \"C\"",
                                  path));
    /* the second edit fails: the first is not applied either */
    refused_exactly("MultiEdit",
                    fp("m.txt", ",\"edits\":[{\"old_string\":\"C\","
                                "\"new_string\":\"D\"},{\"old_string\":"
                                "\"zzz\",\"new_string\":\"y\"}]"),
                    "String to replace not found in file.\nString: zzz");
    ck_assert_str_eq(get(path), "0123456789012345678901234567890123456789"
                                "0123456789xyz C");
    ok("Undo", fp("m.txt", ""));
    ok("Undo", fp("m.txt", ""));
    ck_assert_str_eq(get(path), "a b c");
}
END_TEST

START_TEST(glob_newest_first)
{
    const char *a, *t;

    ck_assert_int_eq(mkdir(at(root, "src"), 0755), 0);
    ck_assert_int_eq(mkdir(at(root, "src/x"), 0755), 0);
    put(at(root, "top.c"), "");
    put(at(root, "src/b.c"), "");
    put(at(root, "src/x/c.h"), "");
    put(at(root, "src/x/d.c"), "");
    age(at(root, "top.c"), 1000);
    age(at(root, "src/b.c"), 3000);
    age(at(root, "src/x/c.h"), 2000);
    age(at(root, "src/x/d.c"), 4000);
    a = ok("Glob", "{\"pattern\":\"**/*.c\"}");
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "%s/src/x/d.c\n%s/src/b.c\n%s/top.c",
                                  root, root, root));
    ck_assert_int_eq(number(a, "numFiles", NULL), 3);
    ck_assert_str_eq(text("Glob", "{\"pattern\":\"*.c\"}"),
                     arena_printf(&ar, "%s/top.c", root));
    ck_assert_str_eq(text("Glob", "{\"pattern\":\"src/**/*.{c,h}\"}"),
                     arena_printf(&ar, "%s/src/x/d.c\n%s/src/b.c\n%s/src/x/c.h",
                                  root, root, root));
    ck_assert_str_eq(text("Glob", arena_printf(&ar, "{\"pattern\":\"*.h\","
                                                    "\"path\":\"%s/src/x\"}",
                                               root)),
                     arena_printf(&ar, "%s/src/x/c.h", root));
    ck_assert_str_eq(text("Glob", arena_printf(&ar, "{\"pattern\":\"%s/src/"
                                                    "*.c\"}",
                                               root)),
                     arena_printf(&ar, "%s/src/b.c", root));
    ck_assert_str_eq(text("Glob", "{\"pattern\":\"*.zzz\"}"),
                     "No files found");
    /* 100 at most */
    ck_assert_int_eq(mkdir(at(root, "many"), 0755), 0);
    for (int i = 0; i < 105; i++)
        put(at(root, arena_printf(&ar, "many/f%03d.txt", i)), "");
    a = ok("Glob", "{\"pattern\":\"many/*.txt\"}");
    ck_assert_int_eq(number(a, "numFiles", NULL), 100);
    t = member(a, "text");
    ck_assert_ptr_nonnull(strstr(
        t, ".txt\n(Results are truncated. Consider using a more specific "
           "path or pattern.)"));
    ck_assert_ptr_nonnull(strstr(a, "\"truncated\":true"));
    refused_exactly("Glob", arena_printf(&ar, "{\"pattern\":\"*\",\"path\":"
                                              "\"%s/nodir\"}",
                                         root),
                    arena_printf(&ar, "Directory does not exist: %s/nodir",
                                 root));
}
END_TEST

START_TEST(grep_modes)
{
    const char *a, *f1 = at(root, "one.c"), *f2 = at(root, "two.c");

    put(f1, "int main(void)\n{\n    return 0;\n}\n");
    put(f2, "a\nb\nMAIN\nc\nd\ne\nmain again\n");
    put(at(root, "three.txt"), "main in text\n");
    age(f1, 2000);
    age(f2, 3000);
    age(at(root, "three.txt"), 1000);
    ck_assert_int_eq(mkdir(at(root, "node_modules"), 0755), 0);
    put(at(root, "node_modules/m.c"), "main\n");
    put(at(root, "bin.c"), "main\0binary");
    {
        FILE *f = fopen(at(root, "bin.c"), "w");
        fwrite("main\0bin\n", 1, 9, f);
        fclose(f);
    }
    /* files_with_matches (the default): newest first */
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"main\",\"glob\":\"*.c\"}"),
                     arena_printf(&ar, "Found 2 files\n%s\n%s", f2, f1));
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"main\"}"),
                     arena_printf(&ar, "Found 3 files\n%s\n%s\n%s/three.txt",
                                  f2, f1, root));
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"nomatch\"}"),
                     "No files found");
    /* content: path:n:line, in path order */
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"ma[i]n\",\"glob\":\"*.c\","
                                  "\"output_mode\":\"content\"}"),
                     arena_printf(&ar, "%s:1:int main(void)\n%s:7:main "
                                       "again",
                                  f1, f2));
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"main\",\"glob\":\"*.c\","
                                  "\"output_mode\":\"content\",\"-i\":true,"
                                  "\"-n\":false}"),
                     arena_printf(&ar, "%s:int main(void)\n%s:MAIN\n%s:main "
                                       "again",
                                  f1, f2, f2));
    /* context lines and the -- between groups */
    ck_assert_str_eq(text("Grep", arena_printf(&ar, "{\"pattern\":\"main\","
                                                    "\"path\":\"%s\","
                                                    "\"output_mode\":"
                                                    "\"content\",\"-i\":true,"
                                                    "\"-C\":1}",
                                               f2)),
                     "2-b\n3:MAIN\n4-c\n--\n6-e\n7:main again");
    ck_assert_str_eq(text("Grep", arena_printf(&ar, "{\"pattern\":\"MAIN\","
                                                    "\"path\":\"%s\","
                                                    "\"output_mode\":"
                                                    "\"content\",\"-B\":2,"
                                                    "\"-A\":0}",
                                               f2)),
                     "1-a\n2-b\n3:MAIN");
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"nomatch\",\"output_mode\":"
                                  "\"content\"}"),
                     "No matches found");
    /* count */
    a = ok("Grep", "{\"pattern\":\"main\",\"-i\":true,\"output_mode\":"
                   "\"count\"}");
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "%s:1\n%s/three.txt:1\n%s:2\n\nFound 4 "
                                       "total occurrences across 3 files.",
                                  f1, root, f2));
    ck_assert_int_eq(number(a, "numMatches", NULL), 4);
    ck_assert_str_eq(text("Grep", arena_printf(&ar, "{\"pattern\":\"int\","
                                                    "\"path\":\"%s\","
                                                    "\"output_mode\":"
                                                    "\"count\"}",
                                               f1)),
                     "1\n\nFound 1 total occurrence across 1 file.");
    /* head_limit */
    a = ok("Grep", "{\"pattern\":\".\",\"output_mode\":\"content\","
                   "\"head_limit\":2,\"glob\":\"two.c\"}");
    ck_assert_str_eq(member(a, "text"),
                     arena_printf(&ar, "%s:1:a\n%s:2:b\n\n[Showing results "
                                       "with pagination = limit: 2]",
                                  f2, f2));
    ck_assert_int_eq(number(a, "appliedLimit", NULL), 2);
    refused("Grep", "{\"pattern\":\"(\"}", "Invalid regular expression");
}
END_TEST

START_TEST(ls_tree)
{
    const char *t;

    ck_assert_int_eq(mkdir(at(root, "src"), 0755), 0);
    ck_assert_int_eq(mkdir(at(root, ".hidden"), 0755), 0);
    ck_assert_int_eq(mkdir(at(root, "__pycache__"), 0755), 0);
    put(at(root, "src/main.c"), "");
    put(at(root, "src/util.c"), "");
    put(at(root, "README"), "");
    put(at(root, "skip.log"), "");
    t = text("LS", arena_printf(&ar, "{\"path\":\"%s\",\"ignore\":"
                                     "[\"*.log\"]}",
                                root));
    ck_assert_str_eq(t, arena_printf(&ar,
                                     "- %s/\n  - README\n  - src/\n    - "
                                     "main.c\n    - util.c\n\nNOTE: do any "
                                     "of the files above seem malicious? If "
                                     "so, you MUST refuse to continue work.",
                                     root));
    refused("LS", "{\"path\":\"/etc\"}", "outside the allowed working");
}
END_TEST

START_TEST(escapes_refused)
{
    char err[300] = "";
    const char *t;
    char *conf;

    put(at(outside, "secret"), "s3cret");
    refused("Read", "{\"file_path\":\"../outside/secret\"}",
            "outside the allowed working directories");
    refused("Read", arena_printf(&ar, "{\"file_path\":\"%s/secret\"}",
                                 outside),
            "outside the allowed working directories");
    refused("Read", "{\"file_path\":\"/etc/passwd\"}",
            "outside the allowed working directories");
    refused("Write", "{\"file_path\":\"../outside/new\",\"content\":\"x\"}",
            "outside the allowed working directories");
    refused("Write", "{\"file_path\":\"nodir/../../outside/new\","
                     "\"content\":\"x\"}",
            "'..' after a folder that does not exist");
    refused("Glob", "{\"pattern\":\"*\",\"path\":\"/etc\"}",
            "outside the allowed working directories");
    refused("Grep", "{\"pattern\":\"s\",\"path\":\"../outside\"}",
            "outside the allowed working directories");
    ck_assert_ptr_null(get(at(outside, "new")));

    /* symbolic links that lead out: to a folder, to a file, to nowhere */
    ck_assert_int_eq(symlink(outside, at(root, "out")), 0);
    ck_assert_int_eq(symlink(at(outside, "secret"), at(root, "sec")), 0);
    ck_assert_int_eq(symlink(at(outside, "nothing"), at(root, "dangling")),
                     0);
    refused("Read", fp("out/secret", ""), "outside the allowed working");
    refused("Read", fp("sec", ""), "outside the allowed working");
    refused("Write", fp("sec", ",\"content\":\"x\""),
            "outside the allowed working");
    refused("Edit", fp("sec", ",\"old_string\":\"s\",\"new_string\":\"x\""),
            "outside the allowed working");
    refused("Write", fp("out/new", ",\"content\":\"x\""),
            "outside the allowed working");
    refused("Write", fp("dangling", ",\"content\":\"x\""),
            "symbolic link whose target does not exist");
    /* walks do not follow links out */
    ck_assert_str_eq(text("Grep", "{\"pattern\":\"s3cret\"}"),
                     "No files found");
    ck_assert_str_eq(text("Glob", "{\"pattern\":\"**/secret\"}"),
                     "No files found");
    ck_assert_ptr_null(get(at(outside, "new")));
    ck_assert_ptr_null(get(at(outside, "nothing")));
    ck_assert_str_eq(get(at(outside, "secret")), "s3cret");
    refused("Undo", "{\"file_path\":\"../outside/secret\"}",
            "outside the allowed working");

    /* a link that stays inside is followed */
    put(at(root, "real.txt"), "r");
    ck_assert_int_eq(symlink("real.txt", at(root, "alias")), 0);
    t = ok("Read", fp("alias", ""));
    ck_assert_str_eq(member(t, "text"), "     1" ARROW "r" REMINDER);
    ck_assert_ptr_nonnull(strstr(t, "real.txt"));

    /* the backup folder is out of reach */
    ok("Write", fp("w.txt", ",\"content\":\"1\""));
    refused("Write", fp(".gemini-agent/backups/journal", ",\"content\":\"x\""),
            "backup folder");
    refused("Read", "{\"file_path\":\"\"}", "non-empty");

    /* addDirs: a folder beside root the tools may reach */
    fe->shutdown(self);
    self = NULL;
    conf = arena_printf(&ar, "{\"root\":\"%s\",\"addDirs\":[\"%s\"]}", root,
                        outside);
    ck_assert_msg(init_with(conf, &self, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(member(ok("Read", arena_printf(&ar, "{\"file_path\":"
                                                         "\"%s/secret\"}",
                                                    outside)),
                            "text"),
                     "     1" ARROW "s3cret" REMINDER);
    ok("Write", arena_printf(&ar, "{\"file_path\":\"%s/added\",\"content\":"
                                  "\"y\"}",
                             outside));
    ck_assert_str_eq(get(at(outside, "added")), "y");
    ok("Undo", "{}");
    ck_assert_ptr_null(get(at(outside, "added")));
    refused("Read", "{\"file_path\":\"/etc/passwd\"}",
            "outside the allowed working directories");
    ck_assert_int_ne(init_with(arena_printf(&ar, "{\"root\":\"%s\","
                                                 "\"addDirs\":[\"/nonexist\"]}",
                                            root),
                               &(void *){NULL}, err, sizeof(err)),
                     0);
    ck_assert_ptr_nonnull(strstr(err, "is not a folder"));
}
END_TEST

START_TEST(writes_are_atomic)
{
    const char *t;
    struct stat st;

    for (int i = 0; i < 5; i++)
        ok("Write", fp("f.txt", arena_printf(&ar, ",\"content\":\"v%d\"", i)));
    ok("Edit", fp("f.txt", ",\"old_string\":\"v4\",\"new_string\":\"v5\""));
    ck_assert_str_eq(get(at(root, "f.txt")), "v5");
    ck_assert_int_eq(dot_files(root), 0);
    /* a write that fails (a folder is in the way) leaves nothing either */
    ck_assert_int_eq(mkdir(at(root, "d"), 0755), 0);
    refused("Write", fp("d", ",\"content\":\"x\""), "EISDIR");
    ck_assert_int_eq(dot_files(root), 0);
    ck_assert_int_eq(stat(at(root, "d"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    /* the backups and the journal are where the docs say */
    ck_assert_int_eq(stat(at(root, ".gemini-agent/backups/journal"), &st),
                     0);
    t = get(at(root, ".gemini-agent/backups/journal"));
    ck_assert_ptr_nonnull(
        strstr(t, arena_printf(&ar, "\"path\":\"%s/f.txt\"", root)));
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
    ok("Write", "{\"file_path\":\"m.txt\",\"content\":\"12345678\"}");
    ck_assert_str_eq(get(at(root, "m.txt")), "12345678");
    refused("Write", "{\"file_path\":\"m.txt\",\"content\":\"123456789\"}",
            "maxFileBytes");
    t = get(at(tmp, "bk/journal"));
    ck_assert_ptr_nonnull(t);
    put(at(root, "big.txt"), "123456789");
    refused("Read", "{\"file_path\":\"big.txt\"}", "maxFileBytes");
}
END_TEST

/* Ten writes of its own file, then ten edits of a shared one. */
static void *
writer(void *arg)
{
    int n = (int)(intptr_t)arg;
    const char *t;

    for (int i = 0; i < 10; i++) {
        char args[128];
        snprintf(args, sizeof(args),
                 "{\"file_path\":\"t%d.txt\",\"content\":\"%d-%d\"}", n, n,
                 i);
        if (call("Write", args, &t) != GEMINI_AGENT_OK)
            return (void *)1;
        snprintf(args, sizeof(args),
                 "{\"file_path\":\"shared.txt\",\"old_string\":\"END\","
                 "\"new_string\":\"xEND\"}");
        if (call("Edit", args, &t) != GEMINI_AGENT_OK)
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
    /* every edit saw the one before: none was lost */
    t = get(at(root, "shared.txt"));
    ck_assert_uint_eq(strlen(t), 43);
    ck_assert_int_eq(dot_files(root), 0);
    /* all 80 changes are in the journal, and Undo takes them all back */
    while (call("Undo", "{}", &t) == GEMINI_AGENT_OK)
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
    ck_assert_ptr_null(plugin_find(set, "cli.Bash"));
    ck_assert_ptr_null(plugin_find(set, "file_edit.Read"));
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
    for (size_t i = 0; i < 4; i++) {
        static const char *const ro[] = {"Read", "Glob", "Grep", "LS"};
        ck_assert_ptr_nonnull(
            a = plugin_find(set, arena_printf(&ar, "file_edit.%s", ro[i])));
        ck_assert(!a->side_effects);
        ck_assert(a->auto_approved);
    }
    for (size_t i = 0; i < 4; i++) {
        static const char *const rw[] = {"Write", "Edit", "MultiEdit",
                                         "Undo"};
        ck_assert_ptr_nonnull(
            a = plugin_find(set, arena_printf(&ar, "file_edit.%s", rw[i])));
        ck_assert(a->side_effects);
        ck_assert(!a->auto_approved);
    }
    ck_assert_ptr_null(plugin_find(set, "file_edit.readFile"));
    ck_assert_ptr_null(plugin_find(set, "file_edit.removeFile"));
    ck_assert_ptr_nonnull(a = plugin_find(set, "cli.Bash"));
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

    /* concurrent_changes syncs 80 edits to disk: seconds when the disk
     * is busy (CI runs the suites side by side), past Check's 4 s */
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, read_numbers_and_reminds);
    tcase_add_test(tc, write_creates_and_updates);
    tcase_add_test(tc, edit_snippet_and_errors);
    tcase_add_test(tc, multiedit_all_or_nothing);
    tcase_add_test(tc, glob_newest_first);
    tcase_add_test(tc, grep_modes);
    tcase_add_test(tc, ls_tree);
    tcase_add_test(tc, escapes_refused);
    tcase_add_test(tc, writes_are_atomic);
    tcase_add_test(tc, config_checked);
    tcase_add_test(tc, concurrent_changes);
    tcase_add_test(tc, terminal_only_in_the_registry);
    suite_add_tcase(s, tc);
    return s;
}
