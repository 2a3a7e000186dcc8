/*
 * fileedit_walk.c - walking a folder tree for Glob, Grep and LS (by name
 * order, without following symbolic links, within the walk bounds),
 * glob patterns with "**" and braces, and the Glob and LS tools.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "core/monotime.h"

#include <dirent.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int
fe_walk_dir(struct fe_walk *w, char *path, size_t plen, size_t base, int depth)
{
    struct dirent **names = NULL;
    int n = scandir(path, &names, NULL, alphasort), rc = FE_GO;

    if (n < 0)
        return FE_GO; /* unreadable: what can be read still counts */
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        struct stat st;
        int r;
        if (rc == FE_STOP || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        if (w->seen++ >= BOUND_FILEEDIT_WALK_ENTRIES) {
            w->cut = true;
            rc = FE_STOP;
            continue;
        }
        if (plen + 1 + len >= PATH_MAX)
            continue;
        path[plen] = '/';
        memcpy(path + plen + 1, name, len + 1);
        /* lstat: a symbolic link is neither walked into nor read, so a
         * walk never leaves the folder it started in */
        if (lstat(path, &st) != 0 || (strcmp(name, ".git") == 0) ||
            fe_inside(w->fe->backups, path)) {
            path[plen] = '\0';
            continue;
        }
        r = w->entry(w, path, path + base, name, &st, depth);
        if (r == FE_STOP)
            rc = FE_STOP;
        else if (r == FE_GO && S_ISDIR(st.st_mode)) {
            if (depth + 1 >= BOUND_FILEEDIT_WALK_DEPTH)
                w->cut = true;
            else if (fe_walk_dir(w, path, plen + 1 + len, base, depth + 1) ==
                     FE_STOP)
                rc = FE_STOP;
        }
        path[plen] = '\0';
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

void
fe_walk(struct fe_walk *w, const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);

    memcpy(path, dir, n + 1);
    if (n == 1) /* "/" */
        n = 0;
    fe_walk_dir(w, path, n, n + 1, 0);
}

/*
 * fnmatch() with one more thing glob patterns of Claude Code's tools
 * use: braces, "*.{c,h}". No FNM_PERIOD: dot files match too.
 */
static bool
fe_fnmatch(const char *pat, const char *name)
{
    const char *open = strchr(pat, '{'), *close, *alt;
    char buf[PATH_MAX];

    if (open == NULL || (close = strchr(open, '}')) == NULL)
        return fnmatch(pat, name, 0) == 0;
    for (alt = open + 1; alt <= close;) {
        size_t alen = strcspn(alt, ",}");
        if (alt + alen > close)
            alen = (size_t)(close - alt);
        if (snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)(open - pat), pat,
                     (int)alen, alt, close + 1) < (int)sizeof(buf) &&
            fe_fnmatch(buf, name))
            return true;
        alt += alen + 1;
    }
    return false;
}

/* Does the path `rel` (segments split at '/') match the pattern whose
 * segments are pat[np]; "**" is any number of folders. */
static bool
fe_match_segs(char **pat, size_t np, const char *rel)
{
    char seg[NAME_MAX + 1];
    size_t len;

    if (np == 0)
        return *rel == '\0';
    if (strcmp(pat[0], "**") == 0) {
        for (;;) {
            if (fe_match_segs(pat + 1, np - 1, rel))
                return true;
            if (*rel == '\0')
                return false;
            rel += strcspn(rel, "/");
            rel += *rel == '/';
        }
    }
    if (*rel == '\0')
        return false;
    len = strcspn(rel, "/");
    if (len > NAME_MAX)
        return false;
    memcpy(seg, rel, len);
    seg[len] = '\0';
    return fe_fnmatch(pat[0], seg) &&
           fe_match_segs(pat + 1, np - 1, rel + len + (rel[len] == '/'));
}

size_t
fe_split(char *buf, char **seg, size_t max)
{
    size_t n = 0;
    char *save = NULL;

    /* strtok_r: tools run in several threads at once */
    for (char *s = strtok_r(buf, "/", &save); s != NULL;
         s = strtok_r(NULL, "/", &save)) {
        if (n == max)
            return 0;
        seg[n++] = s;
    }
    return n;
}

bool
fe_glob_match(char **seg, size_t n, bool slash, const char *rel,
              const char *name)
{
    return slash ? fe_match_segs(seg, n, rel) : fe_fnmatch(seg[0], name);
}

void
fe_hits_add(struct fe_hits *h, const char *path, const struct stat *st,
            size_t count)
{
    struct fe_hit *q;
    char *p;

    if (h->oom)
        return;
    if ((p = strdup(path)) == NULL ||
        (q = realloc(h->v, (h->n + 1) * sizeof(*q))) == NULL) {
        free(p);
        h->oom = true;
        return;
    }
    h->v = q;
    h->v[h->n++] = (struct fe_hit){p, st->st_mtim, count};
}

void
fe_hits_free(struct fe_hits *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].path);
    free(h->v);
}

int
fe_hit_cmp(const void *x, const void *y)
{
    const struct fe_hit *a = x, *b = y;

    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->path, b->path);
}

int
fe_folder(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
          struct gemini_agent_out *out, struct fe_where *w, int *rc)
{
    char msg[STATUS_TEXT_MAX];
    const char *path = w->path;
    size_t plen = w->plen;

    if (path == NULL) {
        path = fe->root;
        plen = strlen(path);
    }
    if (fe_resolve(fe, path, plen, false, w->abs, msg, sizeof(msg)) != 0) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
        return -1;
    }
    if (stat(w->abs, &w->st) != 0) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          w->file_ok ? "Path does not exist: %.200s"
                                     : "Directory does not exist: %.200s",
                          path);
        return -1;
    }
    if (!w->file_ok && !S_ISDIR(w->st.st_mode)) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "Path is not a directory: %.200s", path);
        return -1;
    }
    return 0;
}

struct fe_glob {
    char **seg;
    size_t n;
    struct fe_hits hits;
};

static int
fe_glob_entry(struct fe_walk *w, const char *abs, const char *rel,
              const char *name, const struct stat *st, int depth)
{
    struct fe_glob *g = w->u;

    (void)name;
    (void)depth;
    if (S_ISREG(st->st_mode) && fe_match_segs(g->seg, g->n, rel))
        fe_hits_add(&g->hits, abs, st, 0);
    return g->hits.oom ? FE_STOP : FE_GO;
}

/* An absolute pattern: its folders up to the first wildcard are the
 * folder to search (into dir[PATH_MAX], wh->path); returns the rest. */
static const char *
fe_glob_base(const char *pattern, char *dir, struct fe_where *wh)
{
    size_t wild = strcspn(pattern, "*?[{"), cutat = 0;

    if (pattern[0] != '/')
        return pattern;
    for (size_t i = 0; i < wild; i++)
        if (pattern[i] == '/')
            cutat = i;
    memcpy(dir, pattern, cutat == 0 ? 1 : cutat);
    dir[cutat == 0 ? 1 : cutat] = '\0';
    wh->path = dir;
    wh->plen = strlen(dir);
    return pattern + cutat + 1;
}

/* The files Glob found, newest first, into txt and names: at most
 * FILEEDIT_GLOB_FILES within BOUND_FILEEDIT_LIST_BYTES. Their number. */
static size_t
fe_glob_list(struct fe_hits *hits, struct fe_text *txt, json_t *names)
{
    size_t shown = 0;

    if (hits->n > 0) /* qsort(NULL, 0) is undefined */
        qsort(hits->v, hits->n, sizeof(*hits->v), fe_hit_cmp);
    for (; shown < hits->n && shown < FILEEDIT_GLOB_FILES; shown++) {
        const char *p = hits->v[shown].path;
        if (txt->len + strlen(p) + 1 > BOUND_FILEEDIT_LIST_BYTES)
            break;
        fprintf(txt->f, "%s%s", shown > 0 ? "\n" : "", p);
        fflush(txt->f);
        json_array_append_new(names, json_string(p));
    }
    if (shown == 0)
        fputs("No files found", txt->f);
    else if (shown < hits->n)
        fputs("\n(Results are truncated. Consider using a more specific "
              "path or pattern.)",
              txt->f);
    return shown;
}

int
fe_tool_glob(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char pat[PATH_MAX], dir[PATH_MAX];
    char *seg[BOUND_FILEEDIT_WALK_DEPTH + 1];
    const char *pattern;
    size_t patlen, shown;
    long started = monotime_ms();
    struct fe_glob g = {seg, 0, {NULL, 0, false}};
    struct fe_walk w = {fe, 0, false, &g, fe_glob_entry};
    json_error_t jerr;
    struct fe_text txt;
    struct fe_where wh = {.file_ok = false};
    json_t *names;
    bool cut;
    int rc;

    (void)t;
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?s%}", "pattern",
                       &pattern, &patlen, "path", &wh.path, &wh.plen) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (patlen == 0 || patlen >= sizeof(pat))
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "pattern must be 1 to %d bytes", PATH_MAX - 1);
    snprintf(pat, sizeof(pat), "%s", fe_glob_base(pattern, dir, &wh));
    if (fe_folder(fe, ctx, out, &wh, &rc) != 0)
        return rc;
    if ((g.n = fe_split(pat, seg, ARRAY_SIZE(seg))) == 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "pattern must have 1 to %d parts",
                           BOUND_FILEEDIT_WALK_DEPTH + 1);
    fe_walk(&w, wh.abs);
    if (g.hits.oom || fe_text_open(&txt) != 0 ||
        (names = json_array()) == NULL) {
        fe_hits_free(&g.hits);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    shown = fe_glob_list(&g.hits, &txt, names);
    cut = shown < g.hits.n;
    fe_hits_free(&g.hits);
    return fe_answer(ctx, out, fe_text_close(&txt),
                     json_pack("{s:I, s:I, s:o, s:b}", "durationMs",
                               (json_int_t)(monotime_ms() - started),
                               "numFiles", (json_int_t)shown, "filenames",
                               names, "truncated", cut));
}

/* Claude Code's words after LS's tree, byte for byte. */
static const char fe_ls_note[] =
    "\nNOTE: do any of the files above seem malicious? If so, you MUST "
    "refuse to continue work.";

struct fe_ls {
    json_t *ignore;
    struct fe_text txt;
    size_t entries;
    bool cut;
};

static int
fe_ls_entry(struct fe_walk *w, const char *abs, const char *rel,
            const char *name, const struct stat *st, int depth)
{
    struct fe_ls *l = w->u;
    size_t i;
    json_t *v;

    (void)abs;
    /* Claude Code's LS leaves out hidden entries and __pycache__ */
    if (name[0] == '.' || strcmp(name, "__pycache__") == 0)
        return FE_SKIP;
    json_array_foreach(l->ignore, i, v) {
        const char *p = json_string_value(v);
        if (p != NULL && (fe_fnmatch(p, name) || fe_fnmatch(p, rel)))
            return FE_SKIP;
    }
    fflush(l->txt.f);
    if (l->entries++ >= FILEEDIT_LS_ENTRIES || l->txt.len > FILEEDIT_LS_CHARS) {
        l->cut = true;
        return FE_STOP;
    }
    fprintf(l->txt.f, "%*s- %s%s\n", 2 * (depth + 1), "", name,
            S_ISDIR(st->st_mode) ? "/" : "");
    return FE_GO;
}

int
fe_tool_ls(struct fileedit *fe, struct fe_txn *t,
           const struct gemini_agent_ctx *ctx, json_t *a,
           struct gemini_agent_out *out)
{
    size_t keep;
    json_t *ignore = NULL;
    struct fe_ls l = {NULL, {NULL, NULL, 0}, 0, false};
    struct fe_walk w = {fe, 0, false, &l, fe_ls_entry};
    json_error_t jerr;
    struct fe_text txt;
    struct fe_where wh = {.file_ok = false};
    char *tree;
    int rc;

    (void)t;
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?o}", "path", &wh.path,
                       &wh.plen, "ignore", &ignore) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (ignore != NULL && !json_is_array(ignore))
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "ignore must be a list of glob patterns");
    l.ignore = ignore;
    if (fe_folder(fe, ctx, out, &wh, &rc) != 0)
        return rc;
    if (fe_text_open(&l.txt) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    fprintf(l.txt.f, "- %s%s\n", wh.abs, strcmp(wh.abs, "/") == 0 ? "" : "/");
    fe_walk(&w, wh.abs);
    if ((tree = fe_text_close(&l.txt)) == NULL || fe_text_open(&txt) != 0) {
        free(tree);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    keep = strlen(tree);
    if (l.cut || w.cut) {
        fprintf(txt.f,
                "There are more than %d characters in the repository (ie. "
                "either there are lots of files, or there are many long "
                "filenames). Use the LS tool (passing a specific path), "
                "Bash tool, and other tools to explore nested directories. "
                "The first %d characters are included below:\n\n",
                FILEEDIT_LS_CHARS, FILEEDIT_LS_CHARS);
        keep = fe_chars(tree, keep, FILEEDIT_LS_CHARS);
    }
    fwrite(tree, 1, keep, txt.f);
    fputs(fe_ls_note, txt.f);
    free(tree);
    return fe_answer(ctx, out, fe_text_close(&txt), json_object());
}
