/*
 * check_newsite.c - `setup DIR`'s pieces: the snippets rendered with the
 * site's paths (every placeholder replaced, nothing else touched), the
 * paths a web server's configuration could misread refused, and a site
 * made twice keeping what it found.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "cmd/newsite.h"
#include "core/sbuf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The unit tests run in tests/unit: the checkout is the share folder. */
#define REPO "../.."

static const struct newsite_paths site = {"/home/alice/site",
                                          "/opt/ga/bin/gemini-agent"};

static char *
rendered(const char *text)
{
    struct sbuf out;

    sbuf_init(&out, 1 << 20);
    ck_assert_int_eq(newsite_render(text, &site, &out), 0);
    return sbuf_detach(&out, NULL);
}

START_TEST(render_replaces_each_placeholder)
{
    char *got = rendered(
        "root /srv/gemini-agent/www;\n"
        "ScriptAlias /x /srv/gemini-agent/build/gemini-agent\n"
        "SetEnv GEMINI_AGENT_CONFIG /srv/gemini-agent/conf/agent.yaml\n"
        "fastcgi_pass unix:/run/gemini-agent/gemini-agent.sock; # twice: "
        "/run/gemini-agent/gemini-agent.sock\n"
        "kept: /srv/gemini-agent/other /run/gemini-agent /etc/x\n");

    ck_assert_str_eq(
        got, "root /home/alice/site/www;\n"
             "ScriptAlias /x /opt/ga/bin/gemini-agent\n"
             "SetEnv GEMINI_AGENT_CONFIG /home/alice/site/agent.yaml\n"
             "fastcgi_pass unix:/home/alice/site/run/gemini-agent.sock; # "
             "twice: /home/alice/site/run/gemini-agent.sock\n"
             "kept: /srv/gemini-agent/other /run/gemini-agent /etc/x\n");
    free(got);
    got = rendered("");
    ck_assert_str_eq(got, "");
    free(got);
}
END_TEST

START_TEST(render_full_buffer_fails)
{
    struct sbuf out;

    sbuf_init(&out, 20);
    ck_assert_int_eq(newsite_render("root /srv/gemini-agent/www;", &site, &out),
                     -1);
    ck_assert_uint_le(out.len, 20);
    sbuf_release(&out);
}
END_TEST

static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text;
    long n;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    rewind(f);
    text = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Every snippet of the Makefile's list uses the placeholders and no
 * other path of them: rendered, none is left. The .htaccess names no
 * path at all (it works in whatever folder it is copied to), so it is
 * the one that may come out as it went in. */
START_TEST(shipped_snippets_render_whole)
{
    ck_assert_ptr_nonnull(newsite_snippets[0]);
    for (size_t i = 0; newsite_snippets[i] != NULL; i++) {
        char path[512], *text, *got;

        snprintf(path, sizeof(path), REPO "/%s", newsite_snippets[i]);
        text = slurp(path);
        got = rendered(text);
        bool relative = strcmp(newsite_snippets[i], "conf/htaccess") == 0;

        ck_assert_msg(relative || strcmp(got, text) != 0,
                      "%s has no placeholder", path);
        ck_assert_msg(strstr(got, "/srv/gemini-agent") == NULL &&
                          strstr(got, "/run/gemini-agent/") == NULL,
                      "%s keeps a path that is not a placeholder", path);
        ck_assert_msg(relative || strstr(got, "/home/alice/site/") != NULL,
                      "%s", path);
        free(text);
        free(got);
        /* each is written as DIR/server/<its file name> */
        for (size_t j = 0; j < i; j++) {
            const char *a = strrchr(newsite_snippets[i], '/'),
                       *b = strrchr(newsite_snippets[j], '/');
            ck_assert_msg(strcmp(a ? a + 1 : newsite_snippets[i],
                                 b ? b + 1 : newsite_snippets[j]) != 0,
                          "%s and %s share a file name", newsite_snippets[i],
                          newsite_snippets[j]);
        }
    }
}
END_TEST

START_TEST(path_problems)
{
    static const char *const good[] = {"/", "/srv/www", "/home/a-b/c_d.e+f",
                                       "/home/ünï/site"};
    static const char *const bad[] = {
        "site",       "./site",     "/a b",    "/a\tb",   "/a'b",
        "/a\"b",      "/a\\b",      "/a;b",    "/a{b",    "/a}b",
        "/a$b",       "/a#b",       "/a`b",    "/a\nb",   "/a\x7f" "b",
    };
    char long_path[4096];

    for (size_t i = 0; i < ARRAY_SIZE(good); i++)
        ck_assert_msg(newsite_path_problem(good[i]) == NULL, "%s: %s", good[i],
                      newsite_path_problem(good[i]));
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        ck_assert_msg(newsite_path_problem(bad[i]) != NULL, "'%s' passed",
                      bad[i]);
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[0] = '/';
    long_path[sizeof(long_path) - 1] = '\0';
    ck_assert_ptr_nonnull(newsite_path_problem(long_path));
}
END_TEST

static mode_t
mode_of(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_msg(lstat(path, &st) == 0, "%s is missing", path);
    return st.st_mode & 07777;
}

/* A whole site from the checkout; run again, it keeps an edited file. */
START_TEST(create_twice_keeps)
{
    char dir[] = "/tmp/check-newsite.XXXXXX", path[1024], cmd[1200];
    FILE *f;
    char *text;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout)); /* its report */
    ck_assert_int_eq(chmod(dir, 0700), 0);
    ck_assert_int_eq(newsite_create(dir, REPO), 0);
    ck_assert_uint_eq(mode_of(dir, "agent.yaml"), 0640);
    ck_assert_uint_eq(mode_of(dir, ".gemini.yaml"), 0600);
    ck_assert_uint_eq(mode_of(dir, ".session-secret"), 0600);
    ck_assert_uint_eq(mode_of(dir, "var"), 0700);
    ck_assert_uint_eq(mode_of(dir, "actions"), 0750);
    ck_assert_uint_eq(mode_of(dir, "www/agent/index.js"), 0644);
    ck_assert_uint_eq(mode_of(dir, "server/gemini-agent.conf"), 0644);
    /* the example is there, and is not a plugin */
    ck_assert_uint_eq(mode_of(dir, "actions/_example/plugin.yaml.example"),
                      0640);
    snprintf(path, sizeof(path), "%s/actions/_example/plugin.yaml", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* existing folders keep their mode */
    ck_assert_uint_eq(mode_of(dir, ""), 0700);

    snprintf(path, sizeof(path), "%s/agent.yaml", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("dataDir: mine\n", f);
    fclose(f);
    ck_assert_int_eq(newsite_create(dir, REPO), 0);
    text = slurp(path);
    ck_assert_str_eq(text, "dataDir: mine\n");
    free(text);

    /* a file where a folder goes: said, and 1 */
    snprintf(path, sizeof(path), "%s/run", dir);
    ck_assert_int_eq(rmdir(path), 0);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(newsite_create(dir, REPO), 1);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A share folder without the widget: 1, not a half-made site said ok. */
START_TEST(create_without_share_fails)
{
    char dir[] = "/tmp/check-newsite.XXXXXX", cmd[1200];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout)); /* its report */
    ck_assert_int_eq(newsite_create(dir, "/nonexistent-share"), 1);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *
newsite_suite(void)
{
    Suite *s = suite_create("newsite");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, render_replaces_each_placeholder);
    tcase_add_test(tc, render_full_buffer_fails);
    tcase_add_test(tc, shipped_snippets_render_whole);
    tcase_add_test(tc, path_problems);
    tcase_add_test(tc, create_twice_keeps);
    tcase_add_test(tc, create_without_share_fails);
    suite_add_tcase(s, tc);
    return s;
}
