/*
 * fileedit_text.c - file_edit's answers: Claude Code's texts, `cat -n`
 * numbering, the snippet after a change, and the answer object
 * {"text": ..., ...} every tool gives.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "plugins/fileedit_int.h"
#include "plugins/answer.h"
#include "core/bounds.h"
#include "core/utf8.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Claude Code's words after a change, byte for byte. */
static const char fe_snippet_intro[] =
    " has been updated. Here's the result of running `cat -n` on a snippet "
    "of the edited file:\n";

void
fe_sanitize(char *s, size_t len)
{
    unsigned char *p = (unsigned char *)s;

    for (size_t i = 0; i < len;) {
        size_t n = p[i] < 0x80 ? 1 : utf8_seq_len(p + i, len - i);
        if (n == 0) {
            p[i] = '?';
            n = 1;
        }
        i += n;
    }
}

size_t
fe_chars(const char *s, size_t len, size_t chars)
{
    size_t i = 0;

    for (size_t c = 0; i < len && c < chars; c++) {
        unsigned char b = (unsigned char)s[i];
        i += b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    }
    return i < len ? i : len;
}

int
fe_text_open(struct fe_text *t)
{
    t->s = NULL;
    t->len = 0;
    t->f = open_memstream(&t->s, &t->len);
    return t->f != NULL ? 0 : -1;
}

char *
fe_text_close(struct fe_text *t)
{
    if (t->f == NULL)
        return NULL;
    if (fclose(t->f) != 0 || t->s == NULL) {
        free(t->s);
        t->f = NULL;
        return NULL;
    }
    t->f = NULL;
    return t->s;
}

int
fe_answer(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
          char *text, json_t *obj)
{
    if (text != NULL)
        fe_sanitize(text, strlen(text));
    if (text == NULL || obj == NULL ||
        json_object_set_new(obj, "text", json_string(text)) != 0) {
        free(text);
        json_decref(obj);
        return answer_fail(ctx, out, GEMINI_AGENT_FAILED, "out of memory");
    }
    free(text);
    return answer_json(ctx, out, obj);
}

void
fe_number(FILE *f, const char *s, size_t len, long start)
{
    size_t i = 0;

    if (len == 0)
        return;
    for (long n = start;; n++) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - s) : len, le = e;
        if (nl != NULL && le > i && s[le - 1] == '\r')
            le--;
        fprintf(f, "%6ld\xe2\x86\x92", n);
        fwrite(s + i, 1, le - i, f);
        if (nl == NULL)
            break;
        fputc('\n', f);
        i = e + 1;
    }
}

/*
 * The bytes of lines [from, to) (0-based, split at \n: a text ending in
 * \n has an empty last line, as JavaScript's split() gives) of s[len]:
 * *b, *e. Cut to whole lines within BOUND_FILEEDIT_READ_BYTES (one line
 * at least, itself cut) so that a snippet stays within the answer bound.
 */
static void
fe_lines(const char *s, size_t len, size_t from, size_t to, size_t *b,
         size_t *e)
{
    size_t i = 0, line = 0;

    while (line < from && i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        if (nl == NULL) {
            i = len;
            line++;
            break;
        }
        i = (size_t)(nl - s) + 1;
        line++;
    }
    *b = *e = i;
    if (line < from)
        return; /* past the end */
    for (size_t j = i; line < to;) {
        const char *nl = memchr(s + j, '\n', len - j);
        size_t end = nl != NULL ? (size_t)(nl - s) : len;
        if (end - i > BOUND_FILEEDIT_READ_BYTES) {
            if (*e == i)
                *e = i + BOUND_FILEEDIT_READ_BYTES;
            return;
        }
        *e = end;
        line++;
        if (nl == NULL)
            return;
        j = end + 1;
    }
}

char *
fe_snippet(const char *path, const char *s, size_t len, size_t from, size_t to)
{
    struct fe_text t;
    size_t b, e;

    if (fe_text_open(&t) != 0)
        return NULL;
    fe_lines(s, len, from, to, &b, &e);
    fprintf(t.f, "The file %s%s", path, fe_snippet_intro);
    fe_number(t.f, s + b, e - b, (long)from + 1);
    return fe_text_close(&t);
}

int
fe_bad_args(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
            const json_error_t *jerr)
{
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "InputValidationError: %s", jerr->text);
}

int
fe_read_fail(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
             struct gemini_agent_out *out, const char *path, int e)
{
    if (e == ENOENT || e == ENOTDIR)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "File does not exist.");
    if (e == EISDIR)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "EISDIR: illegal operation on a directory, read");
    if (e == EFBIG)
        return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                           "File content exceeds maximum allowed size (%zuKB, "
                           "maxFileBytes): %.200s",
                           fe->max_bytes / 1024, path);
    return answer_fail(ctx, out, GEMINI_AGENT_BAD_INPUT,
                       "Cannot read %.200s: %s", path, fe_errno_text(e));
}
