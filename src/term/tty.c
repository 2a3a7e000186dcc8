/*
 * tty.c - the terminal client's human rendering and questions (tty.h).
 *
 * Everything shown comes from the stream-json messages the session
 * already builds, so what a person sees and what the Agent SDK reads
 * cannot drift apart. Text from the model and the tools is written with
 * its control characters replaced (an ESC in a file read must not drive
 * the terminal); only our own colour codes reach it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "term/tty.h"
#include "term/bounds.h"
#include "core/utf8.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define C_BOLD  "\033[1m"
#define C_DIM   "\033[2m"
#define C_RED   "\033[31m"
#define C_GREEN "\033[32m"
#define C_RESET "\033[0m"

struct tty {
    FILE *in, *out;
    bool color;
    bool at_bol;   /* the cursor is at the start of a line */
    bool streamed; /* the current answer's text came as deltas */
    bool failed;   /* a write failed */
    bool prompted; /* tty_read_prompt() ran: a blank line sets turns apart */
    char *line;    /* tty_ask()'s answer */
    size_t cap;
};

struct tty *
tty_new(FILE *in, FILE *out, bool color)
{
    struct tty *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->in = in;
    t->out = out;
    t->color = color;
    t->at_bol = true;
    return t;
}

void
tty_free(struct tty *t)
{
    if (t == NULL)
        return;
    free(t->line);
    free(t);
}

bool
tty_color_wanted(FILE *out)
{
    const char *no = getenv("NO_COLOR");

    return isatty(fileno(out)) && (no == NULL || no[0] == '\0');
}

bool
tty_can_ask(const struct tty *t)
{
    return t->in != NULL;
}

/* --- writing ------------------------------------------------------------- */

static void
put_raw(struct tty *t, const char *s)
{
    size_t n = strlen(s);

    if (n == 0)
        return;
    if (fwrite(s, 1, n, t->out) != n)
        t->failed = true;
    t->at_bol = s[n - 1] == '\n';
}

/* A colour code, when colours are on. */
static void
put_color(struct tty *t, const char *code)
{
    if (t->color && fputs(code, t->out) == EOF)
        t->failed = true;
}

/* Untrusted text: C0 controls but newline and tab, and DEL, become '?'
 * (UTF-8 passes: its bytes are all >= 0x80). */
static void
put_text(struct tty *t, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            c = '?';
        if (putc(c, t->out) == EOF)
            t->failed = true;
    }
    if (len > 0)
        t->at_bol = s[len - 1] == '\n';
}

static void
put_texts(struct tty *t, const char *s)
{
    put_text(t, s, strlen(s));
}

static void
end_line(struct tty *t)
{
    if (!t->at_bol)
        put_raw(t, "\n");
}

static int
flush(struct tty *t)
{
    if (fflush(t->out) != 0)
        t->failed = true;
    return t->failed ? -1 : 0;
}

/* --- summaries --------------------------------------------------------------- */

/* s[0, len) as one line into buf[size]: controls (newlines too) as
 * spaces, cut to `max` bytes with "…" when longer. */
static const char *
one_line(const char *s, size_t len, size_t max, char *buf, size_t size)
{
    size_t n, k;
    bool cut;

    if (size == 0)
        return buf;
    if (max > size - 1 - 3)
        max = size > 4 ? size - 1 - 3 : 0;
    n = utf8_cut(s, len < max ? len : max);
    cut = n < len;
    for (k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        buf[k] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    if (cut && size - k > 3) {
        memcpy(buf + k, "\xe2\x80\xa6", 3); /* … */
        k += 3;
    }
    buf[k] = '\0';
    return buf;
}

const char *
tty_summary(const json_t *input, char *buf, size_t size)
{
    static const char *const keys[] = {"file_path", "command", "pattern",
                                       "path",      "url",     "query"};

    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const json_t *v = json_object_get(input, keys[i]);
        if (json_is_string(v))
            return one_line(json_string_value(v), json_string_length(v),
                            BOUND_TTY_SUMMARY, buf, size);
    }
    return buf;
}

/* --- the messages --------------------------------------------------------- */

static void
tool_use(struct tty *t, const json_t *block)
{
    const char *name = json_string_value(json_object_get(block, "name"));
    char sum[BOUND_TTY_SUMMARY + 8];

    tty_summary(json_object_get(block, "input"), sum, sizeof(sum));
    end_line(t);
    put_color(t, C_GREEN);
    put_raw(t, "\xe2\x97\x8f "); /* ● */
    put_color(t, C_RESET);
    put_color(t, C_BOLD);
    put_texts(t, name ? name : "?");
    put_color(t, C_RESET);
    if (sum[0] != '\0') {
        put_raw(t, "(");
        put_texts(t, sum);
        put_raw(t, ")");
    }
    put_raw(t, "\n");
}

/* "  ⎿  " and the result in one line: "Read 3 lines" for a file read,
 * else the first line of its content and how many more there are. */
static void
tool_result(struct tty *t, const json_t *block, const json_t *structured)
{
    const char *content = json_string_value(json_object_get(block, "content"));
    bool is_error = json_is_true(json_object_get(block, "is_error"));
    const json_t *lines = json_object_get(json_object_get(structured, "file"),
                                          "numLines");
    char buf[BOUND_TTY_SUMMARY + 64];

    if (content == NULL)
        content = "";
    end_line(t);
    put_raw(t, "  \xe2\x8e\xbf  "); /* ⎿ */
    put_color(t, is_error ? C_RED : C_DIM);
    if (!is_error && json_is_integer(lines)) {
        snprintf(buf, sizeof(buf), "Read %lld line%s",
                 (long long)json_integer_value(lines),
                 json_integer_value(lines) == 1 ? "" : "s");
        put_raw(t, buf);
    } else {
        const char *nl = strchr(content, '\n');
        size_t first = nl ? (size_t)(nl - content) : strlen(content);
        size_t more = 0;
        for (const char *p = nl; p != NULL && p[1] != '\0';
             p = strchr(p + 1, '\n'))
            more++;
        if (first == 0 && more == 0)
            put_raw(t, is_error ? "Error" : "(no output)");
        put_texts(
            t, one_line(content, first, BOUND_TTY_SUMMARY, buf, sizeof(buf)));
        if (more > 0) {
            snprintf(buf, sizeof(buf), " \xe2\x80\xa6 +%zu line%s", more,
                     more == 1 ? "" : "s");
            put_raw(t, buf);
        }
    }
    put_color(t, C_RESET);
    put_raw(t, "\n");
}

static void
stream_event(struct tty *t, const json_t *ev)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    const json_t *delta = json_object_get(ev, "delta");
    const json_t *text = json_object_get(delta, "text");

    if (type == NULL)
        return;
    if (strcmp(type, "content_block_delta") == 0 && json_is_string(text)) {
        put_text(t, json_string_value(text), json_string_length(text));
        t->streamed = true;
    } else if (strcmp(type, "message_stop") == 0) {
        end_line(t);
    }
}

static void
assistant(struct tty *t, const json_t *msg)
{
    const json_t *m = json_object_get(msg, "message");
    const json_t *b;
    size_t i;

    /* an API error: the result that follows tells of it */
    if (json_object_get(msg, "error") != NULL)
        return;
    json_array_foreach(json_object_get(m, "content"), i, b) {
        const char *type = json_string_value(json_object_get(b, "type"));
        const json_t *text = json_object_get(b, "text");
        if (type == NULL)
            continue;
        if (strcmp(type, "tool_use") == 0) {
            tool_use(t, b);
        } else if (strcmp(type, "text") == 0 && json_is_string(text)) {
            if (t->streamed) { /* shown as it came */
                t->streamed = false;
                continue;
            }
            end_line(t);
            put_text(t, json_string_value(text), json_string_length(text));
            end_line(t);
        }
    }
}

static void
user(struct tty *t, const json_t *msg)
{
    const json_t *b;
    size_t i;

    json_array_foreach(
        json_object_get(json_object_get(msg, "message"), "content"), i, b) {
        const char *type = json_string_value(json_object_get(b, "type"));
        if (type != NULL && strcmp(type, "tool_result") == 0)
            tool_result(t, b, json_object_get(msg, "tool_use_result"));
    }
}

static void
result(struct tty *t, const json_t *msg)
{
    const char *e =
        json_string_value(json_array_get(json_object_get(msg, "errors"), 0));

    t->streamed = false;
    end_line(t);
    if (!json_is_true(json_object_get(msg, "is_error")))
        return;
    if (e == NULL)
        e = json_string_value(json_object_get(msg, "result"));
    put_color(t, C_RED);
    put_raw(t, "\xe2\x9c\x97 "); /* ✗ */
    put_texts(t, e && e[0] ? e : "error");
    put_color(t, C_RESET);
    put_raw(t, "\n");
}

void
tty_note(struct tty *t, const char *text)
{
    end_line(t);
    put_color(t, C_DIM);
    put_texts(t, text);
    put_color(t, C_RESET);
    put_raw(t, "\n");
    flush(t);
}

/* The system messages a person needs to see: the conversation was
 * compacted; an answer broke off and is asked for again. */
static void
sys_note(struct tty *t, const json_t *msg)
{
    const char *sub = json_string_value(json_object_get(msg, "subtype"));
    char line[96];

    if (sub != NULL && strcmp(sub, "compact_boundary") == 0)
        snprintf(line, sizeof(line),
                 "\xc2\xb7 the conversation was compacted (%lld tokens "
                 "summarised)",
                 (long long)json_integer_value(json_object_get(
                     json_object_get(msg, "compact_metadata"), "pre_tokens")));
    else if (sub != NULL && strcmp(sub, "api_retry") == 0)
        snprintf(line, sizeof(line),
                 "\xc2\xb7 Gemini's answer broke off; asking again");
    else
        return;
    tty_note(t, line);
}

int
tty_message(struct tty *t, const json_t *msg)
{
    const char *type = json_string_value(json_object_get(msg, "type"));

    if (type == NULL)
        return 0;
    if (strcmp(type, "stream_event") == 0)
        stream_event(t, json_object_get(msg, "event"));
    else if (strcmp(type, "assistant") == 0)
        assistant(t, msg);
    else if (strcmp(type, "user") == 0)
        user(t, msg);
    else if (strcmp(type, "result") == 0)
        result(t, msg);
    else if (strcmp(type, "system") == 0)
        sys_note(t, msg);
    return flush(t);
}

/* --- input --------------------------------------------------------------- */

/* One line of `in` into *line without its line end; -1 at the end, -2
 * when a signal (Ctrl-C: SIGINT, caught without SA_RESTART) cut the read
 * short - the stream is then usable again. */
static long
read_line(FILE *in, char **line, size_t *cap)
{
    ssize_t n;

    errno = 0;
    n = getline(line, cap, in);
    if (n < 0 && errno == EINTR) {
        clearerr(in);
        return -2;
    }
    if (n < 0)
        return -1;
    while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
        (*line)[--n] = '\0';
    return (long)n;
}

void
tty_echoed(struct tty *t)
{
    t->at_bol = false;
}

enum tty_answer
tty_ask(struct tty *t, const char *tool, const json_t *input)
{
    char sum[BOUND_TTY_SUMMARY + 8];

    if (t->in == NULL)
        return TTY_NO;
    tty_summary(input, sum, sizeof(sum));
    for (;;) {
        const char *a;
        end_line(t);
        put_color(t, C_BOLD);
        put_raw(t, "Allow ");
        put_texts(t, tool);
        if (sum[0] != '\0') {
            put_raw(t, "(");
            put_texts(t, sum);
            put_raw(t, ")");
        }
        put_raw(t, "?");
        put_color(t, C_RESET);
        put_raw(t, " [y]es, [n]o, [a]lways: ");
        if (flush(t) != 0)
            return TTY_NO;
        if (read_line(t->in, &t->line, &t->cap) < 0) {
            put_raw(t, "\n");
            flush(t);
            return TTY_NO;
        }
        t->at_bol = true; /* the terminal echoed the newline */
        a = t->line;
        while (*a == ' ' || *a == '\t')
            a++;
        if (strcasecmp(a, "y") == 0 || strcasecmp(a, "yes") == 0)
            return TTY_YES;
        if (strcasecmp(a, "n") == 0 || strcasecmp(a, "no") == 0)
            return TTY_NO;
        if (strcasecmp(a, "a") == 0 || strcasecmp(a, "always") == 0)
            return TTY_ALWAYS;
        put_raw(t, "Please answer y, n or a.\n");
    }
}

long
tty_read_prompt(struct tty *t, char **line, size_t *cap)
{
    long n;

    if (t->in == NULL)
        return -1;
    end_line(t);
    if (t->prompted)
        put_raw(t, "\n");
    t->prompted = true;
    put_color(t, C_BOLD);
    put_raw(t, "> ");
    put_color(t, C_RESET);
    if (flush(t) != 0)
        return -1;
    n = read_line(t->in, line, cap);
    if (n == -2) { /* Ctrl-C at the prompt: the line is dropped */
        if (*line == NULL) {
            if ((*line = malloc(1)) == NULL)
                return -1;
            *cap = 1;
        }
        (*line)[0] = '\0';
        t->at_bol = false;
        return 0;
    }
    if (n < 0) {
        put_raw(t, "\n");
        flush(t);
        return -1;
    }
    t->at_bol = true;
    return n;
}
