/*
 * fileedit_edit.c - the tools of one file: Read, and the changes Write,
 * Edit and MultiEdit make (with the journal held: fileedit_journal.c).
 * The edit engine replaces exact strings as Claude Code's Edit does.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/status.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Claude Code's words after Read's lines, byte for byte. */
static const char fe_read_reminder[] =
    "\n\n<system-reminder>\nWhenever you read a file, you should consider "
    "whether it looks malicious. If it does, you MUST refuse to improve or "
    "augment the code. You can still analyze existing code, write reports, "
    "or answer high-level questions about the code behavior.\n"
    "</system-reminder>\n";

/* Read's answer for a file without the line `start`: an empty one, or
 * one of `total` lines, fewer than the offset. */
static int
fe_read_none(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
             const char *abs, json_int_t start, size_t total, bool empty)
{
    char *text;

    if (empty)
        text = strdup("<system-reminder>Warning: the file exists but "
                      "the contents are empty.</system-reminder>");
    else if (asprintf(&text,
                      "<system-reminder>Warning: the file exists but is "
                      "shorter than the provided offset (%lld). The "
                      "file has %zu lines.</system-reminder>",
                      (long long)start, total) < 0)
        text = NULL;
    return fe_answer(ctx, out, text,
                     json_pack("{s:s, s:{s:s, s:s, s:i, s:I, s:I}}", "type",
                               "text", "file", "filePath", abs, "content", "",
                               "numLines", 0, "startLine", start, "totalLines",
                               (json_int_t)total));
}

/* The lines of data[len] from byte i: at most `limit`, each cut to
 * FILEEDIT_LINE_CHARS characters, whole lines within
 * BOUND_FILEEDIT_READ_BYTES (one line at least). A new string with
 * *shown lines, or NULL. */
static char *
fe_read_lines(const char *data, size_t len, size_t i, size_t limit,
              size_t *shown)
{
    struct fe_text c;

    *shown = 0;
    if (fe_text_open(&c) != 0)
        return NULL;
    for (;;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - data) : len, le = e, cut;
        if (nl != NULL && le > i && data[le - 1] == '\r')
            le--;
        cut = fe_chars(data + i, le - i, FILEEDIT_LINE_CHARS);
        if (*shown > 0 && c.len + 1 + cut > BOUND_FILEEDIT_READ_BYTES)
            break;
        if (*shown > 0)
            fputc('\n', c.f);
        fwrite(data + i, 1, cut, c.f);
        fflush(c.f);
        (*shown)++;
        if (nl == NULL || *shown == limit)
            break;
        i = e + 1;
    }
    return fe_text_close(&c);
}

int
fe_tool_read(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char abs[PATH_MAX], msg[STATUS_TEXT_MAX];
    const char *path;
    size_t plen, len, total = 0, first, i = 0, shown;
    json_int_t offset = 0, limit = FILEEDIT_READ_LINES, start;
    json_error_t jerr;
    char *data = NULL, *content, *text;
    unsigned mode;
    struct fe_text txt;
    json_t *res;

    (void)t; /* reads take no lock */
    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s?I, s?I}", "file_path",
                       &path, &plen, "offset", &offset, "limit", &limit) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (offset < 0 || limit < 1)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "offset must be >= 0 and limit >= 1");
    if (fe_resolve(fe, path, plen, false, abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_read(abs, fe->max_bytes, &data, &len, &mode) != 0)
        return fe_read_fail(fe, ctx, out, path, errno);
    fe_sanitize(data, len);
    /* Claude Code's offset is the first line's number; 0 is the start */
    start = offset > 0 ? offset : 1;
    first = (size_t)start - 1;
    for (size_t k = 0; k < len; k++)
        total += data[k] == '\n';
    total += len > 0; /* split(): n newlines make n + 1 lines */
    if (len == 0 || first >= total) {
        free(data);
        return fe_read_none(ctx, out, abs, start, total, len == 0);
    }
    /* to the first line asked for */
    for (size_t l = 0; l < first; l++)
        i = (size_t)((char *)memchr(data + i, '\n', len - i) - data) + 1;
    content = fe_read_lines(data, len, i, (size_t)limit, &shown);
    free(data);
    if (content == NULL || fe_text_open(&txt) != 0) {
        free(content);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    fe_number(txt.f, content, strlen(content), (long)start);
    fputs(fe_read_reminder, txt.f);
    text = fe_text_close(&txt);
    res = json_pack("{s:s, s:{s:s, s:s, s:I, s:I, s:I}}", "type", "text",
                    "file", "filePath", abs, "content", content, "numLines",
                    (json_int_t)shown, "startLine", start, "totalLines",
                    (json_int_t)total);
    free(content);
    return fe_answer(ctx, out, text, res);
}

/* A file a write tool changes: where it is, what it held, and what it
 * is to hold. */
struct fe_change {
    char abs[PATH_MAX];
    bool existed; /* false: the change creates it */
    char *old;    /* its content before (heap; NULL when !existed) */
    size_t old_len;
    unsigned mode;    /* kept by the new content */
    const char *data; /* the new content (borrowed) */
    size_t len;
};

/* The file's old content for a change into c (c->abs set): 0; or -1
 * after answering why it may not change (*rc). */
static int
fe_old(struct fileedit *fe, const struct gemini_agent_ctx *ctx,
       struct gemini_agent_out *out, struct fe_change *c, int *rc)
{
    c->existed = true;
    if (fe_read(c->abs, fe->max_bytes, &c->old, &c->old_len, &c->mode) == 0)
        return 0;
    if (errno == ENOENT) {
        c->existed = false;
        c->old = NULL;
        c->old_len = 0;
        c->mode = 0644;
        return 0;
    }
    *rc = fe_read_fail(fe, ctx, out, c->abs, errno);
    return -1;
}

/* fe_old(), and a copy of the content for Edit and MultiEdit to change
 * (*copy NULL when the file does not exist yet). 0, or -1 after
 * answering (*rc). */
static int
fe_old_copy(struct fileedit *fe, const struct gemini_agent_ctx *ctx,
            struct gemini_agent_out *out, struct fe_change *c, char **copy,
            int *rc)
{
    *copy = NULL;
    if (fe_old(fe, ctx, out, c, rc) != 0)
        return -1;
    if (!c->existed)
        return 0;
    if ((*copy = malloc(c->old_len + 1)) == NULL) {
        free(c->old);
        c->old = NULL;
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
        return -1;
    }
    memcpy(*copy, c->old, c->old_len + 1);
    return 0;
}

/*
 * The change every write tool makes, with the journal `t` held: note the
 * old state in it, then put c->data in place of c->abs. 0, or -1 after
 * answering the error (*rc).
 */
static int
fe_apply(struct fileedit *fe, struct fe_txn *t,
         const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
         const struct fe_change *c, int *rc)
{
    int e;

    if (fe_note(fe, t, c->abs, c->existed, c->old, c->old_len, c->mode) != 0) {
        e = errno;
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                          "cannot back up %s: %s", c->abs, fe_errno_text(e));
        return -1;
    }
    if (fe_mkdirs(c->abs, false) != 0 ||
        fe_write_atomic(c->abs, c->data, c->len, c->mode) != 0) {
        e = errno;
        fe_unnote(fe, t);
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "Cannot write %s: %s", c->abs, fe_errno_text(e));
        return -1;
    }
    if (fe_save(fe, t) != 0) {
        /* changed, but Undo will not know: say so rather than hide it */
        *rc = answer_fail(ctx, out, GEMINI_AGENT_FAILED,
                          "%s changed, but the undo journal could not be "
                          "written",
                          c->abs);
        return -1;
    }
    return 0;
}

int
fe_tool_write(struct fileedit *fe, struct fe_txn *t,
              const struct gemini_agent_ctx *ctx, json_t *a,
              struct gemini_agent_out *out)
{
    char msg[STATUS_TEXT_MAX];
    const char *path;
    size_t plen;
    struct fe_change c;
    json_error_t jerr;
    char *text;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%}", "file_path",
                       &path, &plen, "content", &c.data, &c.len) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_resolve(fe, path, plen, true, c.abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (c.len > fe->max_bytes)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "The content is %zu bytes, more than maxFileBytes "
                           "(%zu).",
                           c.len, fe->max_bytes);
    if (fe_old(fe, ctx, out, &c, &rc) != 0)
        return rc;
    if (fe_apply(fe, t, ctx, out, &c, &rc) != 0) {
        free(c.old);
        return rc;
    }
    free(c.old);
    if (!c.existed) {
        if (asprintf(&text, "File created successfully at: %s", c.abs) < 0)
            text = NULL;
    } else {
        text = fe_snippet(c.abs, c.data, c.len, 0, FILEEDIT_READ_LINES);
    }
    return fe_answer(ctx, out, text,
                     json_pack("{s:s, s:s}", "type",
                               c.existed ? "update" : "create", "filePath",
                               c.abs));
}

/* One replacement of Edit or MultiEdit: `from` -> `to`, every
 * occurrence when `all`. */
struct fe_edit {
    const char *from;
    size_t flen;
    const char *to;
    size_t tlen;
    bool all;
};

/* The text the edits change: s[len] (heap, replaced by each edit; NULL
 * and `exists` false for a file that does not exist yet), which may grow
 * to `max` bytes. */
struct fe_buf {
    char *s;
    size_t len;
    bool exists;
    size_t max;
};

/* Put the heap text neu[len] in place of b's. */
static void
fe_buf_take(struct fe_buf *b, char *neu, size_t len)
{
    free(b->s);
    b->s = neu;
    b->len = len;
}

static int
fe_edit_big(const struct fe_buf *b, char *msg, size_t size)
{
    snprintf(msg, size,
             "The result would be larger than maxFileBytes "
             "(%zu bytes).",
             b->max);
    return -1;
}

/* An empty old_string: it creates the file (or fills an empty one). */
static int
fe_edit_create(struct fe_buf *b, const struct fe_edit *ed, char *msg,
               size_t size)
{
    char *neu;

    if (b->exists && b->len > 0) {
        snprintf(msg, size, "Cannot create new file - file already exists.");
        return -1;
    }
    if (ed->tlen > b->max)
        return fe_edit_big(b, msg, size);
    if ((neu = malloc(ed->tlen + 1)) == NULL) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    memcpy(neu, ed->to, ed->tlen);
    neu[ed->tlen] = '\0';
    fe_buf_take(b, neu, ed->tlen);
    return 0;
}

/* How many times ed->from occurs in b (*first: where the first starts):
 * at least 1, or 0 with Claude Code's message in msg (none, or several
 * when not all are to be replaced). */
static size_t
fe_edit_count(const struct fe_buf *b, const struct fe_edit *ed, size_t *first,
              char *msg, size_t size)
{
    const char *p, *end = b->s + b->len;
    size_t count = 0;

    for (p = b->s;
         (p = memmem(p, (size_t)(end - p), ed->from, ed->flen)) != NULL;
         p += ed->flen) {
        if (count++ == 0)
            *first = (size_t)(p - b->s);
    }
    if (count == 0) {
        snprintf(msg, size,
                 "String to replace not found in file.\nString: %.*s",
                 (int)ed->flen, ed->from);
        return 0;
    }
    if (count > 1 && !ed->all) {
        snprintf(msg, size,
                 "Found %zu matches of the string to replace, but "
                 "replace_all is false. To replace all occurrences, set "
                 "replace_all to true. To replace only one occurrence, "
                 "please provide more context to uniquely identify the "
                 "instance.\nString: %.*s",
                 count, (int)ed->flen, ed->from);
        return 0;
    }
    return count;
}

/* Replace the `count` occurrences of ed->from in b. 0, or -1 with msg. */
static int
fe_edit_replace(struct fe_buf *b, const struct fe_edit *ed, size_t count,
                char *msg, size_t size)
{
    const char *p, *end = b->s + b->len;
    size_t newlen, max = b->max;
    char *neu, *w;

    /* count <= len / flen, so this cannot overflow */
    newlen = b->len - count * ed->flen;
    if (ed->tlen > 0 &&
        count > (max - (newlen < max ? newlen : max)) / ed->tlen)
        return fe_edit_big(b, msg, size);
    newlen += count * ed->tlen;
    if (newlen > max)
        return fe_edit_big(b, msg, size);
    if ((neu = malloc(newlen + 1)) == NULL) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    w = neu;
    for (p = b->s;;) {
        const char *m = memmem(p, (size_t)(end - p), ed->from, ed->flen);
        if (m == NULL)
            break;
        memcpy(w, p, (size_t)(m - p));
        w += m - p;
        memcpy(w, ed->to, ed->tlen);
        w += ed->tlen;
        p = m + ed->flen;
    }
    memcpy(w, p, (size_t)(end - p));
    neu[newlen] = '\0';
    fe_buf_take(b, neu, newlen);
    return 0;
}

/*
 * One edit of b. *first: where the first replacement starts. 0, or -1
 * with Claude Code's message in msg.
 */
static int
fe_edit_buf(struct fe_buf *b, const struct fe_edit *ed, size_t *first,
            char *msg, size_t size)
{
    size_t count;

    *first = 0;
    if (ed->flen == ed->tlen && memcmp(ed->from, ed->to, ed->flen) == 0) {
        snprintf(msg, size,
                 "No changes to make: old_string and new_string "
                 "are exactly the same.");
        return -1;
    }
    if (ed->flen == 0)
        return fe_edit_create(b, ed, msg, size);
    if (!b->exists) {
        snprintf(msg, size, "File does not exist.");
        return -1;
    }
    if ((count = fe_edit_count(b, ed, first, msg, size)) == 0)
        return -1;
    return fe_edit_replace(b, ed, count, msg, size);
}

/* The \n in s[len]. */
static size_t
fe_newlines(const char *s, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

/* Edit's answer text after the edit `ed` of c->old into c->data, its
 * first replacement at `first` (a new string, or NULL). */
static char *
fe_edit_text(const struct fe_change *c, const struct fe_edit *ed, size_t first)
{
    char *text;
    size_t line;

    if (ed->all) {
        if (asprintf(&text,
                     "The file %s has been updated. All occurrences of "
                     "'%s' were successfully replaced with '%s'.",
                     c->abs, ed->from, ed->to) < 0)
            text = NULL;
        return text;
    }
    /* Claude Code's snippet: from FILEEDIT_SNIPPET_LINES lines above the
     * replacement to as many below its new text */
    line = c->old != NULL ? fe_newlines(c->old, first) : 0;
    return fe_snippet(
        c->abs, c->data, c->len,
        line > FILEEDIT_SNIPPET_LINES ? line - FILEEDIT_SNIPPET_LINES : 0,
        line + fe_newlines(ed->to, ed->tlen) + 1 + FILEEDIT_SNIPPET_LINES);
}

int
fe_tool_edit(struct fileedit *fe, struct fe_txn *t,
             const struct gemini_agent_ctx *ctx, json_t *a,
             struct gemini_agent_out *out)
{
    char msg[STATUS_TEXT_MAX];
    const char *path;
    size_t plen, first;
    struct fe_change c;
    struct fe_edit ed;
    struct fe_buf b;
    json_error_t jerr;
    int all = 0, rc;
    char *text;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:s%, s:s%, s?b}",
                       "file_path", &path, &plen, "old_string", &ed.from,
                       &ed.flen, "new_string", &ed.to, &ed.tlen, "replace_all",
                       &all) != 0)
        return fe_bad_args(ctx, out, &jerr);
    ed.all = all != 0;
    if (fe_resolve(fe, path, plen, true, c.abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old_copy(fe, ctx, out, &c, &b.s, &rc) != 0)
        return rc;
    b.len = c.old_len;
    b.exists = c.existed;
    b.max = fe->max_bytes;
    if (fe_edit_buf(&b, &ed, &first, msg, sizeof(msg)) != 0) {
        rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
        goto out;
    }
    c.data = b.s;
    c.len = b.len;
    if (fe_apply(fe, t, ctx, out, &c, &rc) != 0)
        goto out;
    text = fe_edit_text(&c, &ed, first);
    rc = fe_answer(ctx, out, text,
                   json_pack("{s:s, s:s%, s:s%, s:b, s:b}", "filePath", c.abs,
                             "oldString", ed.from, ed.flen, "newString", ed.to,
                             ed.tlen, "userModified", 0, "replaceAll", all));
out:
    free(c.old);
    free(b.s);
    return rc;
}

/* The first 50 characters of s[len], and "..." when there were more. */
static void
fe_put50(FILE *f, const char *s, size_t len)
{
    size_t n = fe_chars(s, len, 50);

    fwrite(s, 1, n, f);
    if (n < len)
        fputs("...", f);
}

/* Are MultiEdit's `edits` 1 to BOUND_FILEEDIT_EDITS edits of the right
 * shape? 0, or -1 after answering (*rc). */
static int
fe_multi_check(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
               json_t *edits, int *rc)
{
    size_t n = json_array_size(edits), i;
    const char *f1, *f2;
    json_error_t jerr;
    json_t *e;
    int all;

    if (!json_is_array(edits) || n == 0 || n > BOUND_FILEEDIT_EDITS) {
        *rc = answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                          "edits must be a list of 1 to %d edits",
                          BOUND_FILEEDIT_EDITS);
        return -1;
    }
    json_array_foreach(edits, i, e) {
        if (json_unpack_ex(e, &jerr, JSON_STRICT, "{s:s, s:s, s?b}",
                           "old_string", &f1, "new_string", &f2, "replace_all",
                           &all) != 0) {
            *rc = fe_bad_args(ctx, out, &jerr);
            return -1;
        }
    }
    return 0;
}

/* The edits (checked) in order on b, each on the result of the ones
 * before. 0, or -1 with the first failure's message in msg. */
static int
fe_multi_apply(struct fe_buf *b, json_t *edits, char *msg, size_t size)
{
    size_t i, first;
    json_t *e;

    json_array_foreach(edits, i, e) {
        struct fe_edit ed;
        int all = 0;
        (void)json_unpack(e, "{s:s%, s:s%, s?b}", "old_string", &ed.from,
                          &ed.flen, "new_string", &ed.to, &ed.tlen,
                          "replace_all", &all);
        ed.all = all != 0;
        if (fe_edit_buf(b, &ed, &first, msg, size) != 0)
            return -1;
        b->exists = true;
    }
    return 0;
}

/* MultiEdit's answer text: each edit's first 50 characters (a new
 * string, or NULL). */
static char *
fe_multi_text(const char *abs, json_t *edits)
{
    size_t n = json_array_size(edits), i;
    struct fe_text txt;
    json_t *e;

    if (fe_text_open(&txt) != 0)
        return NULL;
    fprintf(txt.f, "Applied %zu edit%s to %s:\n", n, n == 1 ? "" : "s", abs);
    json_array_foreach(edits, i, e) {
        const json_t *f = json_object_get(e, "old_string"),
                     *g = json_object_get(e, "new_string");
        if (i > 0)
            fputc('\n', txt.f);
        fprintf(txt.f, "%zu. Replaced \"", i + 1);
        fe_put50(txt.f, json_string_value(f), json_string_length(f));
        fputs("\" with \"", txt.f);
        fe_put50(txt.f, json_string_value(g), json_string_length(g));
        fputc('"', txt.f);
    }
    return fe_text_close(&txt);
}

int
fe_tool_multiedit(struct fileedit *fe, struct fe_txn *t,
                  const struct gemini_agent_ctx *ctx, json_t *a,
                  struct gemini_agent_out *out)
{
    char msg[STATUS_TEXT_MAX], *text;
    const char *path;
    size_t plen;
    struct fe_change c;
    struct fe_buf b;
    json_error_t jerr;
    json_t *edits;
    int rc;

    if (json_unpack_ex(a, &jerr, JSON_STRICT, "{s:s%, s:o}", "file_path", &path,
                       &plen, "edits", &edits) != 0)
        return fe_bad_args(ctx, out, &jerr);
    if (fe_multi_check(ctx, out, edits, &rc) != 0)
        return rc;
    if (fe_resolve(fe, path, plen, true, c.abs, msg, sizeof(msg)) != 0)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    if (fe_old_copy(fe, ctx, out, &c, &b.s, &rc) != 0)
        return rc;
    b.len = c.old_len;
    b.exists = c.existed;
    b.max = fe->max_bytes;
    /* in order, each on the result of the ones before; all or nothing */
    if (fe_multi_apply(&b, edits, msg, sizeof(msg)) != 0) {
        free(c.old);
        free(b.s);
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT, "%s", msg);
    }
    c.data = b.s;
    c.len = b.len;
    if (fe_apply(fe, t, ctx, out, &c, &rc) != 0) {
        free(c.old);
        free(b.s);
        return rc;
    }
    free(c.old);
    free(b.s);
    if ((text = fe_multi_text(c.abs, edits)) == NULL)
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    return fe_answer(ctx, out, text,
                     json_pack("{s:s, s:O, s:b}", "filePath", c.abs, "edits",
                               edits, "userModified", 0));
}
