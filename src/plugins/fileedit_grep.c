/*
 * fileedit_grep.c - the Grep tool: POSIX extended regular expressions
 * over a file or a folder tree, with rg's output modes (content,
 * files_with_matches, count), context lines and head_limit.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"

#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum fe_grep_mode { FE_CONTENT, FE_FILES, FE_COUNT };

struct fe_grep {
    const struct fileedit *fe;
    regex_t re;
    enum fe_grep_mode mode;
    char **seg; /* the glob filter, or n == 0 */
    size_t n;
    bool slash;
    bool single; /* one file asked for: no name before its lines */
    bool num;    /* -n */
    size_t before, after;
    size_t limit; /* head_limit, 0: none */
    size_t lines; /* output lines so far */
    size_t matches, files;
    bool limited, cut;
    struct fe_text txt;
    struct fe_hits hits;
};

/* One output line of content or count mode; false once a limit is
 * reached. */
static bool
fe_grep_line(struct fe_grep *g)
{
    fflush(g->txt.f);
    if (g->limit > 0 && g->lines >= g->limit) {
        g->limited = true;
        return false;
    }
    if (g->txt.len > BOUND_FILEEDIT_LIST_BYTES) {
        g->cut = true;
        return false;
    }
    if (g->lines++ > 0)
        fputc('\n', g->txt.f);
    return true;
}

/* The lines of one file in content mode, as rg prints them:
 * "path:n:line" for a match, "path-n-line" around it, "--" between
 * groups that do not touch. The file's lines start at start[nlines];
 * hit[l]: line l matches. */
static void
fe_grep_content(struct fe_grep *g, const char *abs, const char *data,
                const size_t *start, const bool *hit, size_t nlines)
{
    size_t last = 0;
    bool any_out = false;

    for (size_t l = 0; l < nlines; l++) {
        /* shown: a match at most `after` lines above, or `before` lines
         * below */
        size_t from = l > g->after ? l - g->after : 0;
        bool show = hit[l];
        for (size_t k = from; !show && k <= l + g->before && k < nlines; k++)
            show = hit[k];
        if (!show)
            continue;
        if ((g->before > 0 || g->after > 0) && g->lines > 0 &&
            (!any_out || l > last + 1)) {
            if (!fe_grep_line(g))
                break;
            fputs("--", g->txt.f);
        }
        if (!fe_grep_line(g))
            break;
        if (!g->single)
            fprintf(g->txt.f, "%s%c", abs, hit[l] ? ':' : '-');
        if (g->num)
            fprintf(g->txt.f, "%zu%c", l + 1, hit[l] ? ':' : '-');
        fputs(data + start[l], g->txt.f);
        any_out = true;
        last = l;
    }
}

/* Search the file `abs` (its data[len], NUL-terminated, changed). */
static void
fe_grep_data(struct fe_grep *g, const char *abs, char *data, size_t len,
             const struct stat *st)
{
    size_t nlines = 0, count = 0;
    size_t *start;
    bool *hit;

    for (size_t i = 0; i < len; i++)
        nlines += data[i] == '\n';
    nlines += len > 0 && data[len - 1] != '\n';
    start = calloc(nlines + 1, sizeof(*start));
    hit = calloc(nlines + 1, sizeof(*hit));
    if (start == NULL || hit == NULL) {
        g->hits.oom = true;
        goto out;
    }
    for (size_t l = 0, i = 0; l < nlines; l++) {
        char *nl = memchr(data + i, '\n', len - i);
        start[l] = i;
        if (nl != NULL)
            *nl = '\0';
        hit[l] = regexec(&g->re, data + i, 0, NULL, 0) == 0;
        count += hit[l];
        i = nl != NULL ? (size_t)(nl - data) + 1 : len;
    }
    if (count == 0)
        goto out;
    g->matches += count;
    g->files++;
    if (g->mode == FE_FILES) {
        fe_hits_add(&g->hits, abs, st, count);
    } else if (g->mode == FE_COUNT) {
        if (fe_grep_line(g)) {
            if (!g->single)
                fprintf(g->txt.f, "%s:", abs);
            fprintf(g->txt.f, "%zu", count);
        }
    } else {
        fe_grep_content(g, abs, data, start, hit, nlines);
    }
out:
    free(start);
    free(hit);
}

static void
fe_grep_file(struct fe_grep *g, const char *abs, const struct stat *st)
{
    char *data = NULL;
    size_t len;
    unsigned mode;

    /* too large or unreadable: skipped, as binary files are */
    if (fe_read(abs, g->fe->max_bytes, &data, &len, &mode) != 0)
        return;
    if (memchr(data, '\0', len) == NULL) {
        fe_sanitize(data, len);
        fe_grep_data(g, abs, data, len, st);
    }
    free(data);
}

static int
fe_grep_entry(struct fe_walk *w, const char *abs, const char *rel,
              const char *name, const struct stat *st, int depth)
{
    struct fe_grep *g = w->u;

    (void)depth;
    if (S_ISDIR(st->st_mode))
        return strcmp(name, "node_modules") == 0 ? FE_SKIP : FE_GO;
    if (!S_ISREG(st->st_mode) ||
        (g->n > 0 && !fe_glob_match(g->seg, g->n, g->slash, rel, name)))
        return FE_GO;
    fe_grep_file(g, abs, st);
    return g->hits.oom || g->limited || g->cut ? FE_STOP : FE_GO;
}

/* What Grep was asked besides the options fe_grep keeps, and the
 * storage of its glob filter. */
struct fe_grep_ask {
    const char *pattern;
    const char *glob;
    bool icase;
    struct fe_where where;
    char globbuf[PATH_MAX];
    char *seg[BOUND_FILEEDIT_WALK_DEPTH + 1];
};

/* Grep's arguments into g and ask. 0, or -1 after answering (*rc). */
static int
fe_grep_options(const struct gemini_agent_ctx *ctx,
                struct gemini_agent_out *out, json_t *a, struct fe_grep *g,
                struct fe_grep_ask *ask, int *rc)
{
    const char *mode = NULL;
    json_int_t b = -1, af = -1, c = -1, ctxl = -1, head = FILEEDIT_GREP_HEAD;
    int num = 1, icase = 0;
    json_error_t jerr;

    if (json_unpack_ex(a, &jerr, JSON_STRICT,
                       "{s:s, s?s%, s?s, s?s, s?I, s?I, s?I, s?I, s?b, s?b, "
                       "s?I}",
                       "pattern", &ask->pattern, "path", &ask->where.path,
                       &ask->where.plen, "glob", &ask->glob, "output_mode",
                       &mode, "-B", &b, "-A", &af, "-C", &c, "context", &ctxl,
                       "-n", &num, "-i", &icase, "head_limit", &head) != 0) {
        *rc = fe_bad_args(ctx, out, &jerr);
        return -1;
    }
    if (mode == NULL || strcmp(mode, "files_with_matches") == 0)
        g->mode = FE_FILES;
    else if (strcmp(mode, "content") == 0)
        g->mode = FE_CONTENT;
    else if (strcmp(mode, "count") == 0)
        g->mode = FE_COUNT;
    else {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "output_mode must be content, files_with_matches "
                          "or count");
        return -1;
    }
    if (head < 0 || b > INT_MAX || af > INT_MAX || c > INT_MAX ||
        ctxl > INT_MAX) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "head_limit and the context lines must be >= 0");
        return -1;
    }
    /* context (or -C) for both sides; -B and -A for one each */
    if (ctxl < 0)
        ctxl = c;
    g->before = (size_t)(b >= 0 ? b : ctxl > 0 ? ctxl : 0);
    g->after = (size_t)(af >= 0 ? af : ctxl > 0 ? ctxl : 0);
    g->num = num != 0;
    g->limit = (size_t)head;
    ask->icase = icase != 0;
    return 0;
}

/* The glob filter, the regular expression and the output text of g.
 * 0, or -1 after answering (*rc), with nothing of g left to free. */
static int
fe_grep_setup(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
              struct fe_grep *g, struct fe_grep_ask *ask, int *rc)
{
    char err[256];
    int e;

    if (ask->glob != NULL) {
        snprintf(ask->globbuf, sizeof(ask->globbuf), "%s", ask->glob);
        g->slash = strchr(ask->globbuf, '/') != NULL;
        g->seg = ask->seg;
        if ((g->n = fe_split(ask->globbuf, ask->seg, ARRAY_SIZE(ask->seg))) ==
            0) {
            *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                              "glob must have 1 to %d parts",
                              BOUND_FILEEDIT_WALK_DEPTH + 1);
            return -1;
        }
    }
    if ((e = regcomp(&g->re, ask->pattern,
                     REG_EXTENDED | REG_NOSUB |
                         (ask->icase ? REG_ICASE : 0))) != 0) {
        regerror(e, &g->re, err, sizeof(err));
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "Invalid regular expression: %s", err);
        return -1;
    }
    if (fe_text_open(&g->txt) != 0) {
        regfree(&g->re);
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
        return -1;
    }
    return 0;
}

/* files_with_matches: the files, newest first, into names and *text
 * (NULL: no memory); returns the result object (NULL: no memory). */
static json_t *
fe_grep_files_result(struct fe_grep *g, json_t *names, char **text)
{
    size_t shown = 0;
    char *list, *all = NULL;

    if (g->hits.n > 0) /* qsort(NULL, 0) is undefined */
        qsort(g->hits.v, g->hits.n, sizeof(*g->hits.v), fe_hit_cmp);
    for (; shown < g->hits.n; shown++) {
        if (g->limit > 0 && shown == g->limit) {
            g->limited = true;
            break;
        }
        if (g->txt.len + strlen(g->hits.v[shown].path) >
            BOUND_FILEEDIT_LIST_BYTES) {
            g->cut = true;
            break;
        }
        fprintf(g->txt.f, "\n%s", g->hits.v[shown].path);
        fflush(g->txt.f);
        json_array_append_new(names, json_string(g->hits.v[shown].path));
    }
    list = fe_text_close(&g->txt);
    if (list != NULL) {
        if (shown == 0)
            all = strdup("No files found");
        else if (asprintf(&all, "Found %zu file%s%s", shown,
                          shown == 1 ? "" : "s", list) < 0)
            all = NULL;
        free(list);
    }
    *text = all;
    return json_pack("{s:s, s:I, s:o}", "mode", "files_with_matches",
                     "numFiles", (json_int_t)shown, "filenames", names);
}

/* count's text (freed) with rg's summary after it: a new string, or
 * NULL. */
static char *
fe_grep_count_total(const struct fe_grep *g, char *text)
{
    char *all = NULL;

    if (asprintf(&all, "%s\n\nFound %zu total %s across %zu %s.", text,
                 g->matches, g->matches == 1 ? "occurrence" : "occurrences",
                 g->files, g->files == 1 ? "file" : "files") < 0)
        all = NULL;
    free(text);
    return all;
}

/* content and count: the lines into *text (NULL: no memory); returns
 * the result object (NULL: no memory). */
static json_t *
fe_grep_lines_result(struct fe_grep *g, json_t *names, char **text)
{
    size_t lines = g->lines;
    char *t = fe_text_close(&g->txt);
    json_t *res;

    if (t != NULL && lines == 0) {
        free(t);
        t = strdup(g->mode == FE_COUNT && g->files > 0 ? ""
                                                       : "No matches found");
    }
    res = json_pack("{s:s, s:I, s:o}", "mode",
                    g->mode == FE_COUNT ? "count" : "content", "numFiles",
                    (json_int_t)g->files, "filenames", names);
    if (res != NULL && g->mode == FE_CONTENT)
        json_object_set_new(res, "numLines", json_integer((json_int_t)lines));
    if (res != NULL && g->mode == FE_COUNT)
        json_object_set_new(res, "numMatches",
                            json_integer((json_int_t)g->matches));
    if (res != NULL && t != NULL && g->mode == FE_CONTENT) {
        fe_sanitize(t, strlen(t));
        json_object_set_new(res, "content", json_string(t));
    }
    if (t != NULL && g->mode == FE_COUNT && g->files > 0)
        t = fe_grep_count_total(g, t);
    *text = t;
    return res;
}

/* What a limit cut: appliedLimit and truncated in res, and the
 * pagination note after the text (*text replaced). */
static void
fe_grep_note_limits(const struct fe_grep *g, bool walk_cut, json_t *res,
                    char **text)
{
    char *all = NULL;

    if (res != NULL && g->limited)
        json_object_set_new(res, "appliedLimit",
                            json_integer((json_int_t)g->limit));
    if (res != NULL && (g->cut || walk_cut))
        json_object_set_new(res, "truncated", json_true());
    if (*text == NULL || !g->limited)
        return;
    if (asprintf(&all,
                 "%s\n\n[Showing results with pagination = limit: "
                 "%zu]",
                 *text, g->limit) < 0)
        all = NULL;
    free(*text);
    *text = all;
}

int
fe_tool_grep(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    struct fe_grep g;
    struct fe_grep_ask ask = {.glob = NULL, .where = {.file_ok = true}};
    struct fe_walk w = {fe, 0, false, &g, fe_grep_entry};
    json_t *res, *names;
    char *text;
    int rc;

    (void)t;
    memset(&g, 0, sizeof(g));
    g.fe = fe;
    if (fe_grep_options(ctx, out, a, &g, &ask, &rc) != 0 ||
        fe_folder(fe, ctx, out, &ask.where, &rc) != 0 ||
        fe_grep_setup(ctx, out, &g, &ask, &rc) != 0)
        return rc;
    if (S_ISDIR(ask.where.st.st_mode)) {
        fe_walk(&w, ask.where.abs);
    } else {
        g.single = true;
        fe_grep_file(&g, ask.where.abs, &ask.where.st);
    }
    regfree(&g.re);
    if (g.hits.oom || (names = json_array()) == NULL) {
        free(fe_text_close(&g.txt));
        fe_hits_free(&g.hits);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    if (g.mode == FE_FILES)
        res = fe_grep_files_result(&g, names, &text);
    else
        res = fe_grep_lines_result(&g, names, &text);
    fe_grep_note_limits(&g, w.cut, res, &text);
    fe_hits_free(&g.hits);
    return fe_answer(ctx, out, text, res);
}
