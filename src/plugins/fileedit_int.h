/*
 * fileedit_int.h - what the file_edit plugin's files share: the instance,
 * the undo journal, the answer texts and the folder walk. Not an API of
 * the project: only src/plugins/fileedit*.c include it.
 *
 *   fileedit.c          the plugin: its config, declarations, tool table
 *   fileedit_fs.c       paths (the sandbox), whole-file reads and writes
 *   fileedit_journal.c  the undo journal, and Undo
 *   fileedit_text.c     the answers: Claude Code's texts, cat -n, snippets
 *   fileedit_edit.c     Read, Write, Edit and MultiEdit: one file's tools
 *   fileedit_walk.c     walking a folder tree, glob patterns, Glob and LS
 *   fileedit_grep.c     Grep
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_FILEEDIT_INT_H
#define APP_FILEEDIT_INT_H

#include "core/common.h"
#include "gemini-agent/plugin.h"

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

struct fileedit {
    char *root;  /* canonical, no trailing '/' (but "/" itself) */
    char **dirs; /* addDirs, canonical: reachable beside root */
    size_t ndirs;
    char *backups;        /* canonical where it exists; created on first use */
    size_t max_bytes;     /* maxFileBytes */
    pthread_mutex_t lock; /* changes, one at a time (threads) */
};

/* One change the journal can undo. */
struct fe_entry {
    long id;      /* its backup is <backups>/<id> when `existed` */
    char *rel;    /* the file: absolute (relative to root in journals
                   * written before addDirs) */
    bool existed; /* false: the change created it, undo removes it */
    unsigned mode;
};

/* The journal while a change holds it. */
struct fe_txn {
    int lockfd;
    struct fe_entry *e;
    size_t n;
};

/* A text being built (fe_text_open, then fe_text_close). */
struct fe_text {
    FILE *f;
    char *s;
    size_t len;
};

/* What a walk sees of one entry: return FE_GO (and into a folder),
 * FE_SKIP (not into it) or FE_STOP. */
enum { FE_GO, FE_SKIP, FE_STOP };

/* A walk (fe_walk): entry() is called for each entry, `u` its data. */
struct fe_walk {
    const struct fileedit *fe;
    size_t seen; /* entries looked at, up to BOUND_FILEEDIT_WALK_ENTRIES */
    bool cut;    /* a bound stopped it */
    void *u;
    int (*entry)(struct fe_walk *w, const char *abs, const char *rel,
                 const char *name, const struct stat *st, int depth);
};

/* A file a walk found. */
struct fe_hit {
    char *path;
    struct timespec mtime;
    size_t count;
};

/* The files a walk found (Glob, Grep's files_with_matches); `oom`: one
 * could not be kept. */
struct fe_hits {
    struct fe_hit *v;
    size_t n;
    bool oom;
};

/* A folder argument of Glob, Grep and LS (path NULL: root); `file_ok`:
 * a file will do too. fe_folder() fills abs and st. */
struct fe_where {
    const char *path;
    size_t plen;
    bool file_ok;
    char abs[PATH_MAX];
    struct stat st;
};

/*
 * The tools, fe_tool_*() (fileedit.c's table): each answers the call
 * (ctx, out) with the arguments `a` (a JSON object). `t`: the journal,
 * held for the tools that change files (Write, Edit, MultiEdit, Undo),
 * NULL for the others. Returns what the answer returned.
 */

/* --- fileedit_fs.c ----------------------------------------------------- */

/* `p` joined to `base` when relative, as a new string (NULL: no memory). */
char *fe_join(const char *base, const char *p);

/*
 * The canonical form of the absolute `path` into out[PATH_MAX]: realpath()
 * of its longest existing prefix, then the rest of its components. None of
 * those may be "..": they name nothing yet, so nothing says where ".."
 * would lead. Returns 0, or -1 with *why set.
 */
int fe_canonical(const char *path, char *out, const char **why);

/* Is `path` the folder `dir` or inside it? (both canonical) */
bool fe_inside(const char *dir, const char *path);

/*
 * Resolve the tool argument `path` (absolute, as Claude Code's file_path,
 * or relative to root) into abs[PATH_MAX]. `write`: the backup folder is
 * refused too. 0, or -1 with the message (Claude Code's words where it
 * has some) in msg.
 */
int fe_resolve(const struct fileedit *fe, const char *path, size_t len,
               bool write, char *abs, char *msg, size_t size);

/* mkdir -p of the folders above the file `abs` (from / down). */
int fe_mkdirs(const char *abs, bool self);

/*
 * Read the regular file `abs` whole when at most `max` bytes: 0 with
 * *data (heap, NUL-terminated) and *len, *mode; -1 with errno (ENOENT,
 * EISDIR for a non-regular file, EFBIG for one too large, ...).
 */
int fe_read(const char *abs, size_t max, char **data, size_t *len,
            unsigned *mode);

/*
 * Replace (or create) `abs` with data[len] atomically: a temporary file
 * in the same folder, fsync, rename over the target, fsync the folder.
 * A crash leaves the old file or the new one, never half of one; a
 * failure leaves no temporary file. 0, or -1 with errno.
 */
int fe_write_atomic(const char *abs, const char *data, size_t len,
                    unsigned mode);

/* A message for errno after reading or writing `rel`. */
const char *fe_errno_text(int e);

/* --- fileedit_text.c --------------------------------------------------- */

/* Make s[len] UTF-8 in place: a byte that starts no well-formed sequence
 * becomes '?' (the answer is JSON text). */
void fe_sanitize(char *s, size_t len);

/* The bytes of s[len] (UTF-8) that hold its first `chars` characters. */
size_t fe_chars(const char *s, size_t len, size_t chars);

/* Start a text: 0, or -1 (out of memory). */
int fe_text_open(struct fe_text *t);

/* The text (heap, NUL-terminated), or NULL when out of memory. */
char *fe_text_close(struct fe_text *t);

/* The answer {"text": text, ...obj}: both stolen (text heap, may be
 * NULL: out of memory). */
int fe_answer(const struct gemini_agent_ctx *ctx, struct gemini_agent_out *out,
              char *text, json_t *obj);

/*
 * Claude Code's `cat -n` (its function Ky): each line of s[len], split at
 * \r?\n, as its number right-aligned to 6, U+2192 and the line, joined by
 * \n; nothing for an empty text.
 */
void fe_number(FILE *f, const char *s, size_t len, long start);

/* Claude Code's "The file P has been updated. Here's ...:\n" and lines
 * [from, to) of s[len] numbered: a new string, or NULL. */
char *fe_snippet(const char *path, const char *s, size_t len, size_t from,
                 size_t to);

/* The answer to arguments of the wrong shape (jerr: what jansson said). */
int fe_bad_args(const struct gemini_agent_ctx *ctx,
                struct gemini_agent_out *out, const json_error_t *jerr);

/* Why reading `path` failed, in Claude Code's words where it has some. */
int fe_read_fail(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
                 struct gemini_agent_out *out, const char *path, int e);

/* --- fileedit_journal.c ------------------------------------------------ */

/*
 * Take the journal: the mutex, then flock() of the backup folder's lock
 * file (created with the folder), then its entries. 0, or -1 with the
 * mutex released.
 */
int fe_begin(struct fileedit *fe, struct fe_txn *t);

/* Write the journal back (atomically, dropping the oldest entries past
 * BOUND_FILEEDIT_UNDO with their backups): 0, or -1. */
int fe_save(struct fileedit *fe, struct fe_txn *t);

/* Let the journal go: its entries, the flock, the mutex. */
void fe_end(struct fileedit *fe, struct fe_txn *t);

/*
 * Note in the journal that `rel` is about to change: a copy of its old
 * content old[len] when `existed`. 0, or -1 (nothing noted).
 */
int fe_note(struct fileedit *fe, struct fe_txn *t, const char *rel,
            bool existed, const char *old, size_t len, unsigned mode);

/* Forget the last entry (the change it noted failed). */
void fe_unnote(struct fileedit *fe, struct fe_txn *t);

int fe_tool_undo(struct fileedit *fe, struct fe_txn *t,
                 const struct gemini_agent_ctx *ctx, json_t *a,
                 struct gemini_agent_out *out);

/* --- fileedit_edit.c --------------------------------------------------- */

int fe_tool_read(struct fileedit *fe, struct fe_txn *t,
                 const struct gemini_agent_ctx *ctx, json_t *a,
                 struct gemini_agent_out *out);

int fe_tool_write(struct fileedit *fe, struct fe_txn *t,
                  const struct gemini_agent_ctx *ctx, json_t *a,
                  struct gemini_agent_out *out);

int fe_tool_edit(struct fileedit *fe, struct fe_txn *t,
                 const struct gemini_agent_ctx *ctx, json_t *a,
                 struct gemini_agent_out *out);

int fe_tool_multiedit(struct fileedit *fe, struct fe_txn *t,
                      const struct gemini_agent_ctx *ctx, json_t *a,
                      struct gemini_agent_out *out);

/* --- fileedit_walk.c --------------------------------------------------- */

/* Walk the folder `dir` (canonical): entry() sees every entry below it,
 * by name order, with its path relative to dir. */
void fe_walk(struct fe_walk *w, const char *dir);

/* A glob pattern split into segments (in `buf`, which it changes): their
 * number, or 0 for too many. */
size_t fe_split(char *buf, char **seg, size_t max);

/* Does `pattern` (split into seg[n]) match the file: its path `rel` when
 * the pattern has a '/', else its name (as rg's --glob). */
bool fe_glob_match(char **seg, size_t n, bool slash, const char *rel,
                   const char *name);

/* Keep a copy of `path` with its mtime (h->oom when out of memory). */
void fe_hits_add(struct fe_hits *h, const char *path, const struct stat *st,
                 size_t count);

/* The hits' contents (h itself is the caller's). */
void fe_hits_free(struct fe_hits *h);

/* Newest first (Claude Code sorts by modification time), then by name. */
int fe_hit_cmp(const void *x, const void *y);

/* Resolve w's folder argument. 0, or -1 after answering (*rc). */
int fe_folder(const struct fileedit *fe, const struct gemini_agent_ctx *ctx,
              struct gemini_agent_out *out, struct fe_where *w, int *rc);

int fe_tool_glob(struct fileedit *fe, struct fe_txn *t,
                 const struct gemini_agent_ctx *ctx, json_t *a,
                 struct gemini_agent_out *out);

int fe_tool_ls(struct fileedit *fe, struct fe_txn *t,
               const struct gemini_agent_ctx *ctx, json_t *a,
               struct gemini_agent_out *out);

/* --- fileedit_grep.c --------------------------------------------------- */

int fe_tool_grep(struct fileedit *fe, struct fe_txn *t,
                 const struct gemini_agent_ctx *ctx, json_t *a,
                 struct gemini_agent_out *out);

#endif /* APP_FILEEDIT_INT_H */
