/*
 * jscan.c - the strict scanner and its tape (see jscan.h).
 *
 * The fast path reads the input once, left to right, with a stack of the
 * open containers instead of recursion, and scans strings eight bytes at
 * a time (jsonout_plain_run); escapes and non-ASCII characters take the
 * slow path, which checks and decodes them one by one.
 *
 * Errors take a path of their own. jansson reports the first problem its
 * lexer meets, at its stream position, with the text of the token it was
 * reading ("near '...'"). When the fast path finds something wrong, the
 * token there is lexed again the way jansson's lexer reads it (lex_token),
 * so the message, line and column come out as jansson's. The rules are
 * jansson 2.14's load.c; the surprising ones are noted where they apply.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/jscan.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/jsonout.h"
#include "core/sbuf.h"
#include "core/status.h"
#include "core/utf8.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* Objects up to this many members find a repeated key by comparing with
 * each earlier one; larger ones keep a hash set of their keys. */
#define KEYS_LINEAR  8
/* Open containers the stack has room for before it grows. */
#define FRAMES_FIRST 16

/* With reals evaluated in double precision, m * 10^e (m < 2^53, |e| <=
 * 22) is one correctly rounded operation on exact values: what strtod()
 * returns, without calling it. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define FAST_REALS 1
#else
#define FAST_REALS 0
#endif

/* Repeated keys of one large object: key node indexes (0: empty slot)
 * and their hashes, open addressing. */
struct keyset {
    uint32_t *slot;
    uint32_t *hash;
    uint32_t mask;
    uint32_t used;
};

/* An open container. */
struct frame {
    uint32_t node;  /* its tape index */
    uint32_t count; /* elements, or members, so far */
    bool object;
    bool canon; /* no whitespace inside, every child canonical so far */
    bool dups;  /* a key repeated (JSCAN_DUPLICATES_OK) */
    struct keyset *keys;
};

/* One parse: the input, the tape so far, the open containers. */
struct scan {
    const unsigned char *buf;
    size_t len;
    unsigned flags;
    int max_depth;
    struct arena *a;
    struct jscan_doc *doc;
    struct jscan_node *tape;
    size_t n, cap;
    struct frame *stack;
    int depth, frames;
    unsigned char *scratch; /* decoded keys, long numbers */
    size_t scratch_cap;
    uint64_t seed[2]; /* the key hash's, drawn at the first key set */
    bool seeded;
    uint32_t *nuls; /* offsets of the NUL bytes jansson skipped (below) */
    size_t nnul, nul_cap;
};

/* A string's scan. */
struct strinfo {
    size_t end;    /* one past the closing quote */
    size_t dlen;   /* decoded bytes */
    uint8_t flags; /* JSCAN_ESCAPED, JSCAN_CANON */
    bool nul;      /* it decodes to a NUL byte */
};

/* A number's scan. */
struct numinfo {
    size_t end;
    uint8_t type, flags;
    uint64_t bits; /* the long long or the double */
};

/* The result of lexing one token on the error path. */
enum tok {
    TOK_FAILED = -1, /* lexing it is the error, and it is recorded */
    TOK_EOF,
    TOK_PUNCT,   /* { } [ ] : , */
    TOK_VALUE,   /* a string, number or literal */
    TOK_INVALID, /* anything else: jansson's TOKEN_INVALID */
};

static bool
is_digit(unsigned c)
{
    return c - '0' < 10;
}

static bool
is_alpha(unsigned c)
{
    return (c | 0x20) - 'a' < 26;
}

static bool
is_ws(unsigned c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* --- errors --------------------------------------------------------------- */

/*
 * jansson's line, column and position after reading buf[0..pos): lines
 * start at 1, columns count characters, the newline itself ending the
 * line. A NUL byte jansson skipped (skip_nul) counts in neither.
 */
static void
where(const struct scan *s, size_t pos, struct jscan_fail *f)
{
    const unsigned char *p = s->buf, *end = s->buf + pos, *nl;
    size_t lines = 1, cols, skipped = 0;

    while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        lines++;
        p = nl + 1;
    }
    cols = utf8_count((const char *)p, (size_t)(end - p));
    for (size_t i = 0; i < s->nnul && s->nuls[i] < pos; i++) {
        skipped++;
        cols -= s->buf + s->nuls[i] >= p;
    }
    f->line = lines > INT_MAX ? INT_MAX : (int)lines;
    f->column = cols > INT_MAX ? INT_MAX : (int)cols;
    f->offset = pos - skipped;
}

/*
 * Record the first error. `pos` is where jansson's stream stood (bytes
 * read); `tok` where the token it was reading began. With `context`, the
 * message ends as jansson's does: " near '<token so far>'" when that is
 * 1 to 20 bytes (printed up to a NUL byte, and empty when it starts with
 * one), nothing when longer, and " near end of file" when empty (but for
 * bad UTF-8, which never gets a context). Returns -1.
 */
static int fail(struct scan *s, enum jscan_error code, size_t pos, size_t tok,
                bool context, const char *fmt, ...) ATTR_FMT(6, 7);

static int
fail(struct scan *s, enum jscan_error code, size_t pos, size_t tok,
     bool context, const char *fmt, ...)
{
    struct jscan_fail *f = &s->doc->fail;
    char msg[BOUND_JSCAN_MESSAGE], text[BOUND_JSCAN_MESSAGE + 40];
    size_t n;
    va_list ap;

    if (f->code != JSCAN_E_NONE)
        return -1; /* the first error stands, as in jansson */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!context) {
        snprintf(text, sizeof(text), "%s", msg);
    } else if (pos > tok && s->buf[tok] != '\0') {
        char near[21];

        n = strnlen((const char *)s->buf + tok, pos - tok);
        if (pos - tok <= 20) {
            memcpy(near, s->buf + tok, n);
            near[n] = '\0';
            snprintf(text, sizeof(text), "%s near '%s'", msg, near);
        } else {
            snprintf(text, sizeof(text), "%s", msg);
        }
    } else {
        if (code == JSCAN_E_SYNTAX)
            code = JSCAN_E_PREMATURE;
        snprintf(text, sizeof(text),
                 code == JSCAN_E_UTF8 ? "%s" : "%s near end of file", msg);
    }
    /* jansson keeps 158 bytes of it */
    n = strlen(text);
    if (n > BOUND_JSCAN_MESSAGE - 2)
        n = BOUND_JSCAN_MESSAGE - 2;
    memcpy(f->what, text, n);
    f->what[n] = '\0';
    f->code = code;
    where(s, pos, f);
    return -1;
}

static int
fail_memory(struct scan *s)
{
    struct jscan_fail *f = &s->doc->fail;

    if (f->code == JSCAN_E_NONE) {
        f->code = JSCAN_E_MEMORY;
        f->line = f->column = -1;
        snprintf(f->what, sizeof(f->what), "out of memory");
    }
    return -1;
}

/* Memory for n bytes of passing use (a decoded key, a number's text). */
static unsigned char *
scratch(struct scan *s, size_t n)
{
    if (n > s->scratch_cap) {
        size_t cap = n < 256 ? 256 : n * 2;
        unsigned char *p = arena_alloc(s->a, cap);

        if (p == NULL) {
            fail_memory(s);
            return NULL;
        }
        s->scratch = p;
        s->scratch_cap = cap;
    }
    return s->scratch;
}

/* --- numbers -------------------------------------------------------------- */

/* The integer t[0..n) ('-'? digits, as the grammar has it) in *v; false
 * when it is out of range, where strtoll() says ERANGE. */
static bool
int_value(const unsigned char *t, size_t n, long long *v)
{
    bool neg = t[0] == '-';
    uint64_t u = 0, lim = neg ? (uint64_t)LLONG_MAX + 1 : (uint64_t)LLONG_MAX;

    for (size_t i = neg; i < n; i++) {
        unsigned d = t[i] - '0';
        if (u > (lim - d) / 10)
            return false;
        u = u * 10 + d;
    }
    if (!neg)
        *v = (long long)u;
    else
        *v = u == (uint64_t)LLONG_MAX + 1 ? LLONG_MIN : -(long long)u;
    return true;
}

/* strtod() on t[0..n) as jansson's jsonp_strtod() calls it, with the
 * locale's decimal point. Returns 0, 1 when it overflows (underflow is
 * fine, as for jansson), -1 when out of memory. */
static int
real_value(struct scan *s, const unsigned char *t, size_t n, double *v)
{
    char local[64], *copy = local, *dot, *endp;
    const char *point;

    if (n >= sizeof(local) && (copy = (char *)scratch(s, n + 1)) == NULL)
        return -1;
    memcpy(copy, t, n);
    copy[n] = '\0';
    point = localeconv()->decimal_point;
    if (*point != '.' && (dot = strchr(copy, '.')) != NULL)
        *dot = *point;
    errno = 0;
    *v = strtod(copy, &endp);
    return (*v == HUGE_VAL || *v == -HUGE_VAL) && errno == ERANGE ? 1 : 0;
}

/*
 * Is the real written "I.F" (no exponent) what "%.15g" writes back for
 * it? Then it has at most 15 significant digits (a double reproduces
 * those), "%.15g" keeps fixed notation (the first digit between 10^14
 * and 10^-4), and nothing is dropped: no trailing zero in F, except "I.0"
 * which jansson writes with the ".0" it adds.
 */
static bool
real_canonical(size_t nint, bool int_zero, const unsigned char *f, size_t nf)
{
    size_t lead = 0;

    if (nf == 1 && f[0] == '0')
        return nint <= 15;
    if (f[nf - 1] == '0')
        return false;
    if (!int_zero)
        return nint + nf <= 15;
    while (f[lead] == '0')
        lead++;
    return lead <= 3 && nf - lead <= 15;
}

/*
 * A number's digits as read so far: the first 19 significant ones in
 * mant, the value of the others and of the point in exp10.
 */
struct digits {
    uint64_t mant;
    int ndig;
    long exp10;
    bool cut; /* a non-zero digit did not fit in mant */
};

/* The integer part's digits from p (one at least, checked); past them. */
static inline const unsigned char *
read_int_digits(const unsigned char *p, const unsigned char *end,
                struct digits *dg)
{
    do {
        unsigned v = *p - '0';
        if (dg->ndig < 19) {
            dg->mant = dg->mant * 10 + v;
            dg->ndig++;
        } else {
            dg->exp10++;
            dg->cut |= v != 0;
        }
    } while (++p < end && is_digit(*p));
    return p;
}

/* The fraction's digits from p (one at least, checked); past them. */
static inline const unsigned char *
read_fraction(const unsigned char *p, const unsigned char *end,
              struct digits *dg)
{
    do {
        unsigned v = *p - '0';
        if (dg->mant == 0 && v == 0) {
            dg->exp10--; /* a leading zero */
        } else if (dg->ndig < 19) {
            dg->mant = dg->mant * 10 + v;
            dg->ndig++;
            dg->exp10--;
        } else {
            dg->cut |= v != 0;
        }
    } while (++p < end && is_digit(*p));
    return p;
}

/* The exponent after the 'e' at p, added to exp10; past it, or NULL when
 * no digit follows. */
static inline const unsigned char *
read_exponent(const unsigned char *p, const unsigned char *end,
              struct digits *dg)
{
    bool eneg = false;
    long e = 0;

    if (++p < end && (*p == '+' || *p == '-'))
        eneg = *p++ == '-';
    if (p == end || !is_digit(*p))
        return NULL;
    do {
        if (e < 100000) /* far past any double either way */
            e = e * 10 + (*p - '0');
    } while (++p < end && is_digit(*p));
    dg->exp10 += eneg ? -e : e;
    return p;
}

/*
 * The double the number t[0..n) with digits dg reads as: exactly from
 * mant when it and the power of ten are exact doubles, else as strtod()
 * reads it. Returns what real_value() does.
 */
static inline int
real_of_digits(struct scan *s, const struct digits *dg, bool neg,
               const unsigned char *t, size_t n, double *d)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    long e = dg->exp10;

    if (dg->mant == 0) {
        *d = neg ? -0.0 : 0.0;
        return 0;
    }
    if (FAST_REALS && !dg->cut && dg->mant <= (uint64_t)1 << 53 && e >= -22 &&
        e <= 22) {
        *d = e >= 0 ? (double)dg->mant * p10[e] : (double)dg->mant / p10[-e];
        if (neg)
            *d = -*d;
        return 0;
    }
    return real_value(s, t, n, d);
}

/* The integer t[0..n), nint digits, in *ni; 1 when out of range. */
static inline int
integer_number(const unsigned char *t, size_t n, size_t nint,
               struct numinfo *ni)
{
    long long v;

    if (nint > 19 || !int_value(t, n, &v))
        return 1;
    ni->type = JSCAN_INTEGER;
    ni->flags = t[0] == '-' && v == 0 ? 0 : JSCAN_CANON; /* "-0" is 0 */
    ni->bits = (uint64_t)v;
    return 0;
}

/*
 * Read the number at `at` on the fast path. Returns 0 with *ni filled, 1
 * when jansson would not read it as a number (malformed, or out of range:
 * the caller reports it through the lexer), -1 when out of memory.
 */
static int
scan_number(struct scan *s, size_t at, struct numinfo *ni)
{
    const unsigned char *b = s->buf, *p = b + at, *end = b + s->len;
    const unsigned char *ip, *fp = NULL;
    struct digits dg = {0, 0, 0, false};
    bool neg = *p == '-', has_exp = false;
    size_t nint, nf = 0;
    double d;
    int rc;

    p += neg;
    if (p == end || !is_digit(*p))
        return 1;
    ip = p;
    if (*p != '0')
        p = read_int_digits(p, end, &dg);
    else if (++p < end && is_digit(*p))
        return 1; /* no leading zeros */
    nint = (size_t)(p - ip);
    ni->end = (size_t)(p - b);
    if (p == end || (*p != '.' && *p != 'e' && *p != 'E'))
        return integer_number(b + at, ni->end - at, nint, ni);
    if (*p == '.') {
        if (++p == end || !is_digit(*p))
            return 1;
        fp = p;
        p = read_fraction(p, end, &dg);
        nf = (size_t)(p - fp);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        has_exp = true;
        if ((p = read_exponent(p, end, &dg)) == NULL)
            return 1;
    }
    ni->end = (size_t)(p - b);
    if ((rc = real_of_digits(s, &dg, neg, b + at, ni->end - at, &d)) != 0)
        return rc;
    ni->type = JSCAN_REAL;
    ni->flags = !has_exp && real_canonical(nint, *ip == '0', fp, nf)
                    ? JSCAN_CANON
                    : 0;
    memcpy(&ni->bits, &d, sizeof(d));
    return 0;
}

/* --- strings -------------------------------------------------------------- */

/* The four hex digits at h as a number (checked already). */
static uint32_t
hex_value(const unsigned char *h)
{
    uint32_t v = 0;

    for (int k = 0; k < 4; k++) {
        unsigned c = h[k];
        v = v << 4 | (is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* UTF-8 for code point v at out; its length. */
static size_t
utf8_put(uint32_t v, unsigned char *out)
{
    if (v < 0x80) {
        out[0] = (unsigned char)v;
        return 1;
    }
    if (v < 0x800) {
        out[0] = (unsigned char)(0xC0 | v >> 6);
        out[1] = (unsigned char)(0x80 | (v & 0x3F));
        return 2;
    }
    if (v < 0x10000) {
        out[0] = (unsigned char)(0xE0 | v >> 12);
        out[1] = (unsigned char)(0x80 | (v >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (v & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | v >> 18);
    out[1] = (unsigned char)(0x80 | (v >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (v >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (v & 0x3F));
    return 4;
}

/* Decode the escape at *pp (a checked one: '\\' then the rest) into out
 * (up to 4 bytes); *pp moves past it. Returns the bytes written. */
static size_t
decode_escape(const unsigned char **pp, unsigned char *out)
{
    const unsigned char *p = *pp + 1;
    uint32_t v;

    *pp = p + 1;
    switch (*p) {
    case 'b':
        *out = '\b';
        return 1;
    case 'f':
        *out = '\f';
        return 1;
    case 'n':
        *out = '\n';
        return 1;
    case 'r':
        *out = '\r';
        return 1;
    case 't':
        *out = '\t';
        return 1;
    case 'u':
        break;
    default: /* '"', '\\', '/' */
        *out = *p;
        return 1;
    }
    v = hex_value(p + 1);
    *pp = p + 5;
    if (v >= 0xD800 && v <= 0xDBFF) { /* a checked pair */
        v = 0x10000 + ((v - 0xD800) << 10) + (hex_value(p + 7) - 0xDC00);
        *pp = p + 11;
    }
    return utf8_put(v, out);
}

/* Append the decoded text of the checked string content p[0..end). */
static int
decode_append(struct sbuf *sb, const unsigned char *p, const unsigned char *end)
{
    while (p < end) {
        const unsigned char *bs = memchr(p, '\\', (size_t)(end - p));
        unsigned char tmp[4];
        size_t n;

        if (bs == NULL)
            return sbuf_put(sb, p, (size_t)(end - p));
        if (bs > p && sbuf_put(sb, p, (size_t)(bs - p)) != 0)
            return -1;
        p = bs;
        n = decode_escape(&p, tmp);
        if (sbuf_put(sb, tmp, n) != 0)
            return -1;
    }
    return 0;
}

/* Does the checked string content p[0..end) decode to s[0..n)? */
static bool
decoded_equals(const unsigned char *p, const unsigned char *end,
               const unsigned char *s, size_t n)
{
    const unsigned char *se = s + n;

    while (p < end) {
        const unsigned char *bs = memchr(p, '\\', (size_t)(end - p));
        size_t run = (size_t)((bs ? bs : end) - p), k;
        unsigned char tmp[4];

        if ((size_t)(se - s) < run || memcmp(p, s, run) != 0)
            return false;
        s += run;
        if (bs == NULL)
            break;
        p = bs;
        k = decode_escape(&p, tmp);
        if ((size_t)(se - s) < k || memcmp(tmp, s, k) != 0)
            return false;
        s += k;
    }
    return s == se;
}

/*
 * A wrong character where an escape needs one, at q: jansson reads it
 * whatever it is, so a byte that starts no UTF-8 character is reported as
 * such (before it is read), end of input as "invalid escape" there, and
 * anything else as "invalid escape" just after its first byte.
 */
static int
escape_fail(struct scan *s, size_t at, size_t q)
{
    const unsigned char *b = s->buf;

    if (q == s->len)
        return fail(s, JSCAN_E_SYNTAX, q, at, true, "invalid escape");
    if (b[q] >= 0x80 && utf8_seq_len(b + q, s->len - q) == 0)
        return fail(s, JSCAN_E_UTF8, q, at, true, "unable to decode byte 0x%x",
                    b[q]);
    return fail(s, JSCAN_E_SYNTAX, q + 1, at, true, "invalid escape");
}

/* Check the four hex digits of a \u escape at q; their value in *v. */
static int
check_hex4(struct scan *s, size_t at, size_t q, uint32_t *v)
{
    for (size_t k = 0; k < 4; k++) {
        unsigned c = q + k < s->len ? s->buf[q + k] : 0x100;
        if (!is_digit(c) && (c | 0x20) - 'a' >= 6)
            return escape_fail(s, at, q + k);
    }
    *v = hex_value(s->buf + q);
    return 0;
}

/* A string being read on the slow path. */
struct strscan {
    size_t i;    /* the next byte */
    size_t dlen; /* decoded bytes so far */
    bool canon, nul;
    /* the first bad surrogate: jansson decodes a string after lexing it
     * whole, so this is reported after the closing quote, unless a
     * lexing error comes first */
    char bad[40];
};

/* The escape at ss->i (a backslash) of the string that starts at `at`. */
static int
scan_escape(struct scan *s, size_t at, struct strscan *ss)
{
    const unsigned char *b = s->buf;
    size_t i = ss->i;
    uint32_t v, v2;

    if (i + 1 == s->len)
        return escape_fail(s, at, i + 1);
    switch (b[i + 1]) {
    case '/':
        ss->canon = false; /* jansson writes '/' as it is */
        /* fall through */
    case '"':
    case '\\':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        ss->dlen++;
        ss->i = i + 2;
        return 0;
    case 'u':
        break;
    default:
        return escape_fail(s, at, i + 1);
    }
    if (check_hex4(s, at, i + 2, &v) != 0)
        return -1;
    i += 6;
    if (v >= 0xD800 && v <= 0xDBFF) {
        if (i + 1 < s->len && b[i] == '\\' && b[i + 1] == 'u') {
            if (check_hex4(s, at, i + 2, &v2) != 0)
                return -1;
            i += 6;
            if (v2 >= 0xDC00 && v2 <= 0xDFFF) {
                ss->dlen += 4;
                ss->canon = false; /* jansson writes it as UTF-8 */
            } else if (ss->bad[0] == '\0') {
                snprintf(ss->bad, sizeof(ss->bad),
                         "invalid Unicode '\\u%04X\\u%04X'", (unsigned)v,
                         (unsigned)v2);
            }
        } else if (ss->bad[0] == '\0') {
            snprintf(ss->bad, sizeof(ss->bad), "invalid Unicode '\\u%04X'",
                     (unsigned)v);
        }
    } else if (v >= 0xDC00 && v <= 0xDFFF) {
        if (ss->bad[0] == '\0')
            snprintf(ss->bad, sizeof(ss->bad), "invalid Unicode '\\u%04X'",
                     (unsigned)v);
    } else {
        /* jansson writes \u escapes only for control characters without
         * a short form, as \u00XX in upper case */
        if (v >= 0x20 || v == '\b' || v == '\f' || v == '\n' || v == '\r' ||
            v == '\t' || b[i - 1] >= 'a')
            ss->canon = false;
        ss->nul |= v == 0;
        ss->dlen += v < 0x80 ? 1 : v < 0x800 ? 2 : 3;
    }
    ss->i = i;
    return 0;
}

/* The rest of the string that starts at `at`, from i, where the fast scan
 * stopped: escapes, non-ASCII, and the errors. */
static int
scan_string_slow(struct scan *s, size_t at, size_t i, struct strinfo *si)
{
    const unsigned char *b = s->buf;
    struct strscan ss = {.i = i, .dlen = i - at - 1, .canon = true};
    bool escaped = false;

    for (;;) {
        unsigned c;

        if (ss.i == s->len)
            return fail(s, JSCAN_E_PREMATURE, s->len, at, true,
                        "premature end of input");
        c = b[ss.i];
        if (c == '"')
            break;
        if (c == '\\') {
            escaped = true;
            if (scan_escape(s, at, &ss) != 0)
                return -1;
        } else if (c == '\n') {
            return fail(s, JSCAN_E_SYNTAX, ss.i, at, true,
                        "unexpected newline");
        } else if (c < 0x20) {
            return fail(s, JSCAN_E_SYNTAX, ss.i, at, true,
                        "control character 0x%x", c);
        } else {
            size_t n = utf8_seq_len(b + ss.i, s->len - ss.i);
            if (n == 0)
                return fail(s, JSCAN_E_UTF8, ss.i, at, true,
                            "unable to decode byte 0x%x", c);
            ss.i += n;
            ss.dlen += n;
        }
        i = jsonout_plain_run(b + ss.i, b + s->len);
        ss.i += i;
        ss.dlen += i;
    }
    if (ss.bad[0] != '\0')
        return fail(s, JSCAN_E_SYNTAX, ss.i + 1, at, true, "%s", ss.bad);
    si->end = ss.i + 1;
    si->dlen = ss.dlen;
    si->flags = (uint8_t)((escaped ? JSCAN_ESCAPED : 0) |
                          (ss.canon ? JSCAN_CANON : 0));
    si->nul = ss.nul;
    return 0;
}

/* The string whose opening quote is at `at`. */
static inline int
scan_string(struct scan *s, size_t at, struct strinfo *si)
{
    const unsigned char *b = s->buf;
    size_t i = at + 1;

    i += jsonout_plain_run(b + i, b + s->len);
    if (i < s->len && b[i] == '"') {
        si->end = i + 1;
        si->dlen = i - at - 1;
        si->flags = JSCAN_CANON;
        si->nul = false;
        return 0;
    }
    return scan_string_slow(s, at, i, si);
}

/* --- jansson's lexer, for the error path ---------------------------------- */

/* jansson reads one character ahead after a number or a name, and that
 * read is where a byte that starts no UTF-8 character is reported, near
 * the token so far. True (and recorded) when the byte at p is one. */
static bool
bad_lookahead(struct scan *s, size_t p, size_t tok)
{
    if (p < s->len && s->buf[p] >= 0x80 &&
        utf8_seq_len(s->buf + p, s->len - p) == 0) {
        fail(s, JSCAN_E_UTF8, p, tok, true, "unable to decode byte 0x%x",
             s->buf[p]);
        return true;
    }
    return false;
}

/* lex_scan_number(): a malformed number is an invalid token that ends
 * where jansson stopped reading; an out of range one is an error. */
static enum tok
lex_number(struct scan *s, size_t at, size_t *endp)
{
    const unsigned char *b = s->buf;
    size_t p = at, len = s->len;
    long long iv;
    double rv;

    if (b[p] == '-' && bad_lookahead(s, ++p, at))
        return TOK_FAILED;
    *endp = p;
    if (p < len && b[p] == '0') {
        if (bad_lookahead(s, ++p, at))
            return TOK_FAILED;
        *endp = p;
        if (p < len && is_digit(b[p]))
            return TOK_INVALID;
    } else if (p < len && is_digit(b[p])) {
        while (p < len && is_digit(b[p]))
            p++;
        if (bad_lookahead(s, p, at))
            return TOK_FAILED;
    } else {
        return TOK_INVALID;
    }
    *endp = p;
    if (p == len || (b[p] != '.' && b[p] != 'e' && b[p] != 'E')) {
        if (int_value(b + at, p - at, &iv))
            return TOK_VALUE;
        fail(s, JSCAN_E_OVERFLOW, p, at, true,
             b[at] == '-' ? "too big negative integer" : "too big integer");
        return TOK_FAILED;
    }
    if (b[p] == '.') {
        if (bad_lookahead(s, ++p, at))
            return TOK_FAILED;
        *endp = p;
        if (p == len || !is_digit(b[p]))
            return TOK_INVALID;
        while (p < len && is_digit(b[p]))
            p++;
        if (bad_lookahead(s, p, at))
            return TOK_FAILED;
    }
    if (p < len && (b[p] == 'e' || b[p] == 'E')) {
        if (bad_lookahead(s, ++p, at))
            return TOK_FAILED;
        if (p < len && (b[p] == '+' || b[p] == '-') &&
            bad_lookahead(s, ++p, at))
            return TOK_FAILED;
        *endp = p;
        if (p == len || !is_digit(b[p]))
            return TOK_INVALID;
        while (p < len && is_digit(b[p]))
            p++;
        if (bad_lookahead(s, p, at))
            return TOK_FAILED;
    }
    *endp = p;
    switch (real_value(s, b + at, p - at, &rv)) {
    case 0:
        return TOK_VALUE;
    case 1:
        fail(s, JSCAN_E_OVERFLOW, p, at, true, "real number overflow");
        return TOK_FAILED;
    default:
        return TOK_FAILED;
    }
}

/* A name: jansson reads a whole run of letters, then compares. */
static enum tok
lex_name(struct scan *s, size_t at, size_t *endp)
{
    const unsigned char *b = s->buf;
    size_t p = at, n;

    while (p < s->len && is_alpha(b[p]))
        p++;
    if (bad_lookahead(s, p, at))
        return TOK_FAILED;
    *endp = p;
    n = p - at;
    if ((n == 4 &&
         (memcmp(b + at, "true", 4) == 0 || memcmp(b + at, "null", 4) == 0)) ||
        (n == 5 && memcmp(b + at, "false", 5) == 0))
        return TOK_VALUE;
    return TOK_INVALID;
}

/* The token at `at` (whitespace skipped), as jansson's lex_scan() reads
 * it: its kind and where jansson's stream stands after it, or TOK_FAILED
 * with the lexer's own error recorded. */
static enum tok
lex_token(struct scan *s, size_t at, size_t *endp)
{
    const unsigned char *b = s->buf;
    struct strinfo si;
    unsigned c;
    size_t n;

    *endp = at;
    if (at == s->len)
        return TOK_EOF;
    c = b[at];
    switch (c) {
    case '{':
    case '}':
    case '[':
    case ']':
    case ':':
    case ',':
        *endp = at + 1;
        return TOK_PUNCT;
    case '"':
        if (scan_string(s, at, &si) != 0)
            return TOK_FAILED;
        *endp = si.end;
        return TOK_VALUE;
    default:
        break;
    }
    if (c == '-' || is_digit(c))
        return lex_number(s, at, endp);
    if (is_alpha(c))
        return lex_name(s, at, endp);
    if (c >= 0x80) {
        n = utf8_seq_len(b + at, s->len - at);
        if (n == 0) {
            /* right after a number or a name, jansson met this byte as
             * its lookahead: near that token */
            size_t tok = at;
            if (tok > 0 && (is_alpha(b[tok - 1]) || is_digit(b[tok - 1])))
                while (tok > 0 && (is_alpha(b[tok - 1]) ||
                                   is_digit(b[tok - 1]) || b[tok - 1] == '.' ||
                                   b[tok - 1] == '+' || b[tok - 1] == '-'))
                    tok--;
            fail(s, JSCAN_E_UTF8, at, tok, true, "unable to decode byte 0x%x",
                 c);
            return TOK_FAILED;
        }
        *endp = at + n;
        return TOK_INVALID;
    }
    *endp = at + 1; /* a control character or a stray one */
    return TOK_INVALID;
}

/* The token at `at` is not what the grammar wants there: report `what`
 * after it (NULL: jansson's parse_value() words, "invalid token" or
 * "unexpected token"), unless lexing it is the error. */
static int
bad_token(struct scan *s, size_t at, enum jscan_error code, const char *what)
{
    size_t end;
    enum tok t = lex_token(s, at, &end);

    if (t == TOK_FAILED)
        return -1;
    if (what == NULL)
        what = t == TOK_INVALID ? "invalid token" : "unexpected token";
    return fail(s, code, end, at, true, "%s", what);
}

/* A value at `at` would nest too deep. jansson lexes the token before it
 * counts the level, so the token's own errors come first. */
static int
depth_fail(struct scan *s, size_t at)
{
    size_t end;

    if (lex_token(s, at, &end) == TOK_FAILED)
        return -1;
    if (s->flags & JSCAN_DEPTH_SCALARS)
        return fail(s, JSCAN_E_DEPTH, end, at, true,
                    "maximum parsing depth reached");
    return fail(s, JSCAN_E_DEPTH, end, at, false,
                "nesting deeper than %d levels", s->max_depth);
}

/* --- repeated keys -------------------------------------------------------- */

static uint64_t
load_le64(const unsigned char *p)
{
    uint64_t w;

    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static uint64_t
rotl(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

#define SIPROUND                                                               \
    do {                                                                       \
        v0 += v1;                                                              \
        v1 = rotl(v1, 13);                                                     \
        v1 ^= v0;                                                              \
        v0 = rotl(v0, 32);                                                     \
        v2 += v3;                                                              \
        v3 = rotl(v3, 16);                                                     \
        v3 ^= v2;                                                              \
        v0 += v3;                                                              \
        v3 = rotl(v3, 21);                                                     \
        v3 ^= v0;                                                              \
        v2 += v1;                                                              \
        v1 = rotl(v1, 17);                                                     \
        v1 ^= v2;                                                              \
        v2 = rotl(v2, 32);                                                     \
    } while (0)

/* SipHash-1-3 of m[0..n) under a secret seed: a browser that sends an
 * object of 100000 keys cannot make them collide on purpose. */
static uint32_t
siphash(const uint64_t k[2], const unsigned char *m, size_t n)
{
    uint64_t v0 = k[0] ^ 0x736f6d6570736575u, v1 = k[1] ^ 0x646f72616e646f6du;
    uint64_t v2 = k[0] ^ 0x6c7967656e657261u, v3 = k[1] ^ 0x7465646279746573u;
    uint64_t w;
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        w = load_le64(m + i);
        v3 ^= w;
        SIPROUND;
        v0 ^= w;
    }
    w = (uint64_t)n << 56;
    for (size_t j = 0; i + j < n; j++)
        w |= (uint64_t)m[i + j] << (8 * j);
    v3 ^= w;
    SIPROUND;
    v0 ^= w;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    w = v0 ^ v1 ^ v2 ^ v3;
    return (uint32_t)(w ^ w >> 32);
}

/* The tape index past node i's subtree, while parsing. */
static size_t
tape_end(const struct scan *s, size_t i)
{
    return s->tape[i].type >= JSCAN_ARRAY ? s->tape[i].x : i + 1;
}

/* Are key nodes i and j the same decoded bytes? 1 yes, 0 no, -1 out of
 * memory. */
static int
keys_equal(struct scan *s, size_t i, size_t j)
{
    const struct jscan_node *x = &s->tape[i], *y = &s->tape[j];
    const unsigned char *b = s->buf;
    unsigned char *tmp;

    if (x->x != y->x)
        return 0;
    if (!((x->flags | y->flags) & JSCAN_ESCAPED))
        return memcmp(b + x->off + 1, b + y->off + 1, x->x) == 0;
    if (!(x->flags & JSCAN_ESCAPED)) {
        const struct jscan_node *t = x;
        x = y;
        y = t;
    }
    if (!(y->flags & JSCAN_ESCAPED))
        return decoded_equals(b + x->off + 1, b + x->off + x->len - 1,
                              b + y->off + 1, y->x);
    if ((tmp = scratch(s, y->x)) == NULL)
        return -1;
    {
        const unsigned char *p = b + y->off + 1, *end = p + y->len - 2;
        unsigned char *o = tmp;
        while (p < end) {
            if (*p == '\\')
                o += decode_escape(&p, o);
            else
                *o++ = *p++;
        }
    }
    return decoded_equals(b + x->off + 1, b + x->off + x->len - 1, tmp, y->x);
}

/* The hash of key node k's decoded bytes in *h; -1 when out of memory. */
static int
key_hash(struct scan *s, size_t k, uint32_t *h)
{
    const struct jscan_node *n = &s->tape[k];
    const unsigned char *p = s->buf + n->off + 1, *end = p + n->len - 2;
    unsigned char *tmp, *o;

    if (!s->seeded) {
        if (getrandom(s->seed, sizeof(s->seed), GRND_NONBLOCK) !=
            (ssize_t)sizeof(s->seed)) {
            /* no entropy yet (early boot): addresses still differ from
             * one process to the next (ASLR) */
            s->seed[0] = (uint64_t)(uintptr_t)s ^ 0x9e3779b97f4a7c15u;
            s->seed[1] = (uint64_t)(uintptr_t)s->tape ^ (uint64_t)s->len;
        }
        s->seeded = true;
    }
    if (!(n->flags & JSCAN_ESCAPED)) {
        *h = siphash(s->seed, p, n->x);
        return 0;
    }
    if ((tmp = scratch(s, n->x)) == NULL)
        return -1;
    for (o = tmp; p < end;)
        if (*p == '\\')
            o += decode_escape(&p, o);
        else
            *o++ = *p++;
    *h = siphash(s->seed, tmp, n->x);
    return 0;
}

/* Add key node k with hash h: 1 when an equal key is in the set (k is
 * not added), 0 when added, -1 out of memory. */
static int
keyset_add(struct scan *s, struct keyset *ks, size_t k, uint32_t h)
{
    uint32_t i;

    if ((ks->used + 1) * 2 > ks->mask + 1) {
        struct keyset bigger = {.mask = ks->mask * 2 + 1, .used = ks->used};
        size_t cap = (size_t)bigger.mask + 1;

        bigger.slot = arena_calloc(s->a, cap, sizeof(uint32_t));
        bigger.hash = arena_alloc(s->a, cap * sizeof(uint32_t));
        if (bigger.slot == NULL || bigger.hash == NULL)
            return fail_memory(s);
        for (uint32_t j = 0; j <= ks->mask; j++) {
            if (ks->slot[j] == 0)
                continue;
            for (i = ks->hash[j] & bigger.mask; bigger.slot[i] != 0;
                 i = (i + 1) & bigger.mask)
                ;
            bigger.slot[i] = ks->slot[j];
            bigger.hash[i] = ks->hash[j];
        }
        *ks = bigger;
    }
    for (i = h & ks->mask; ks->slot[i] != 0; i = (i + 1) & ks->mask) {
        if (ks->hash[i] == h) {
            int eq = keys_equal(s, ks->slot[i], k);
            if (eq != 0)
                return eq;
        }
    }
    ks->slot[i] = (uint32_t)k;
    ks->hash[i] = h;
    ks->used++;
    return 0;
}

/*
 * Does key node k, the newest member of object f (f->count counts it),
 * repeat an earlier key? 1 yes, 0 no, -1 out of memory. Small objects
 * compare with each key; past KEYS_LINEAR members the keys go into a set.
 */
static int
key_repeats(struct scan *s, struct frame *f, size_t k)
{
    uint32_t h;

    if (f->keys == NULL) {
        size_t j = (size_t)f->node + 1;

        if (f->count <= KEYS_LINEAR) {
            for (uint32_t m = 1; m < f->count; m++) {
                int eq = keys_equal(s, j, k);
                if (eq != 0)
                    return eq;
                j = tape_end(s, j + 1);
            }
            return 0;
        }
        f->keys = arena_alloc(s->a, sizeof(*f->keys));
        if (f->keys == NULL)
            return fail_memory(s);
        f->keys->mask = 4 * KEYS_LINEAR - 1;
        f->keys->used = 0;
        f->keys->slot = arena_calloc(s->a, 4 * KEYS_LINEAR, sizeof(uint32_t));
        f->keys->hash = arena_alloc(s->a, 4 * KEYS_LINEAR * sizeof(uint32_t));
        if (f->keys->slot == NULL || f->keys->hash == NULL)
            return fail_memory(s);
        /* the earlier keys are all different: they were compared */
        for (uint32_t m = 1; m < f->count; m++) {
            if (key_hash(s, j, &h) != 0 || keyset_add(s, f->keys, j, h) < 0)
                return -1;
            j = tape_end(s, j + 1);
        }
    }
    if (key_hash(s, k, &h) != 0)
        return -1;
    return keyset_add(s, f->keys, k, h);
}

/* --- the tape ------------------------------------------------------------- */

static struct jscan_node *
grow_tape(struct scan *s)
{
    /* every node takes at least one byte of input: len + 1 is plenty */
    size_t cap = s->cap * 2 > s->len + 1 ? s->len + 1 : s->cap * 2;
    struct jscan_node *t;

    if (cap <= s->n || (t = arena_alloc(s->a, cap * sizeof(*t))) == NULL) {
        fail_memory(s);
        return NULL;
    }
    memcpy(t, s->tape, s->n * sizeof(*t));
    s->tape = t;
    s->cap = cap;
    return &t[s->n++];
}

static inline struct jscan_node *
new_node(struct scan *s)
{
    if (s->n < s->cap)
        return &s->tape[s->n++];
    return grow_tape(s);
}

static inline void
set_node(struct jscan_node *nd, unsigned type, unsigned flags, size_t off,
         size_t len, uint64_t bits)
{
    nd->off = (uint32_t)off;
    nd->len = (uint32_t)len;
    nd->x = (uint32_t)bits;
    nd->y = (uint32_t)(bits >> 32);
    nd->type = (uint8_t)type;
    nd->flags = (uint8_t)flags;
}

/* Open a container: NULL when out of memory. */
static struct frame *
push_frame(struct scan *s)
{
    if (s->depth == s->frames) {
        int n = s->frames * 2 > s->max_depth ? s->max_depth : s->frames * 2;
        struct frame *f = arena_alloc(s->a, (size_t)n * sizeof(*f));

        if (f == NULL) {
            fail_memory(s);
            return NULL;
        }
        memcpy(f, s->stack, (size_t)s->depth * sizeof(*f));
        s->stack = f;
        s->frames = n;
    }
    return &s->stack[s->depth++];
}

/*
 * jansson 2.14 reads one character past a number or a name and puts it
 * back; when that character is a NUL byte, its stream takes the NUL left
 * in its buffer for "empty" and reads on, so the byte is skipped as if it
 * were not there, and counts in no later position or column. The same
 * input must pass here: skip it and remember where it was. Returns the
 * new position, or NULL when out of memory.
 */
static const unsigned char *
skip_nul(struct scan *s, const unsigned char *p)
{
    if (s->nnul == s->nul_cap) {
        size_t cap = s->nul_cap ? s->nul_cap * 2 : 8;
        uint32_t *n = arena_alloc(s->a, cap * sizeof(*n));

        if (n == NULL) {
            fail_memory(s);
            return NULL;
        }
        if (s->nnul > 0)
            memcpy(n, s->nuls, s->nnul * sizeof(*n));
        s->nuls = n;
        s->nul_cap = cap;
    }
    s->nuls[s->nnul++] = (uint32_t)(p - s->buf);
    return p + 1;
}

/* --- the scan ------------------------------------------------------------- */

static bool
is_name(const unsigned char *p, const unsigned char *end, const char *name,
        size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, name, n) == 0 &&
           ((size_t)(end - p) == n || !is_alpha(p[n]));
}

/* Whitespace; inside a container it makes the container non-canonical. */
#define SKIP_WS()                                                              \
    do {                                                                       \
        if (p < end && *p <= ' ') {                                            \
            const unsigned char *ws_ = p;                                      \
            while (p < end && is_ws(*p))                                       \
                p++;                                                           \
            if (p != ws_ && top != NULL)                                       \
                top->canon = false;                                            \
        }                                                                      \
    } while (0)

#define AT ((size_t)(p - b))

/* A value in the container top (NULL at the top level) that is not
 * canonical makes top non-canonical too. */
static inline void
note_child(struct frame *top, const struct jscan_node *nd)
{
    if (top != NULL && !(nd->flags & JSCAN_CANON))
        top->canon = false;
}

/* The literal true, false or null at p on the tape; past it, or NULL on
 * failure. */
static const unsigned char *
scan_literal(struct scan *s, const unsigned char *p, struct jscan_node **nd)
{
    static const struct {
        const char *name;
        size_t len;
        unsigned type;
    } lit[] = {{"true", 4, JSCAN_TRUE},
               {"false", 5, JSCAN_FALSE},
               {"null", 4, JSCAN_NULL}};
    const unsigned char *b = s->buf, *end = b + s->len;
    size_t k = *p == 't' ? 0 : *p == 'f' ? 1 : 2;

    if (!is_name(p, end, lit[k].name, lit[k].len)) {
        bad_token(s, AT, JSCAN_E_SYNTAX, NULL);
        return NULL;
    }
    if ((*nd = new_node(s)) == NULL)
        return NULL;
    set_node(*nd, lit[k].type, JSCAN_CANON, AT, lit[k].len, 0);
    return p + lit[k].len;
}

/*
 * The string, number or literal at p (p < end) on the tape as *nd; past
 * it, or NULL on failure.
 */
static const unsigned char *
scan_token(struct scan *s, const unsigned char *p, struct jscan_node **nd)
{
    const unsigned char *b = s->buf;
    struct strinfo si;
    struct numinfo ni;
    int rc;

    if (*p == '"') {
        if (scan_string(s, AT, &si) != 0)
            return NULL;
        if (si.nul) {
            fail(s, JSCAN_E_NUL, si.end, AT, true,
                 "\\u0000 is not allowed without JSON_ALLOW_NUL");
            return NULL;
        }
        if ((*nd = new_node(s)) == NULL)
            return NULL;
        set_node(*nd, JSCAN_STRING, si.flags, AT, si.end - AT, si.dlen);
        return b + si.end;
    }
    if (*p == '-' || is_digit(*p)) {
        if ((rc = scan_number(s, AT, &ni)) != 0) {
            if (rc > 0)
                bad_token(s, AT, JSCAN_E_SYNTAX, NULL);
            return NULL;
        }
        if ((*nd = new_node(s)) == NULL)
            return NULL;
        set_node(*nd, ni.type, ni.flags, AT, ni.end - AT, ni.bits);
        return b + ni.end;
    }
    if (*p == 't' || *p == 'f' || *p == 'n')
        return scan_literal(s, p, nd);
    bad_token(s, AT, JSCAN_E_SYNTAX, NULL);
    return NULL;
}

/*
 * A scalar value at p (p < end) inside top (NULL at the top level); past
 * it and past a NUL byte that jansson skips after a number or a name
 * (see skip_nul), or NULL on failure.
 */
static const unsigned char *
scan_scalar(struct scan *s, struct frame *top, const unsigned char *p)
{
    const unsigned char *end = s->buf + s->len;
    struct jscan_node *nd;

    if ((p = scan_token(s, p, &nd)) == NULL)
        return NULL;
    note_child(top, nd);
    if (p < end && *p == '\0' && nd->type != JSCAN_STRING) {
        if ((p = skip_nul(s, p)) == NULL)
            return NULL;
        if (top != NULL)
            top->canon = false;
    }
    return p;
}

/* Open the object or array at p: its frame, NULL on failure. */
static struct frame *
open_container(struct scan *s, const unsigned char *p)
{
    const unsigned char *b = s->buf;
    struct jscan_node *nd;
    struct frame *top;

    if ((nd = new_node(s)) == NULL || (top = push_frame(s)) == NULL)
        return NULL;
    nd->off = (uint32_t)AT;
    nd->type = *p == '{' ? JSCAN_OBJECT : JSCAN_ARRAY;
    top->node = (uint32_t)(s->n - 1);
    top->count = 0;
    top->object = *p == '{';
    top->canon = true;
    top->dups = false;
    top->keys = NULL;
    return top;
}

/*
 * The member key at p (whitespace skipped) of the object top, the ':' and
 * the whitespace after it; returns the position of the value, NULL on
 * failure.
 */
static const unsigned char *
scan_key(struct scan *s, struct frame *top, const unsigned char *p)
{
    const unsigned char *b = s->buf, *end = b + s->len;
    struct jscan_node *nd;
    struct strinfo si;
    int rc;

    if (p == end || *p != '"') {
        bad_token(s, AT, JSCAN_E_SYNTAX, "string or '}' expected");
        return NULL;
    }
    if (scan_string(s, AT, &si) != 0)
        return NULL;
    if (si.nul) {
        fail(s, JSCAN_E_NUL_KEY, si.end, AT, true,
             "NUL byte in object key not supported");
        return NULL;
    }
    if ((nd = new_node(s)) == NULL)
        return NULL;
    set_node(nd, JSCAN_STRING, si.flags, AT, si.end - AT, si.dlen);
    top->count++;
    note_child(top, nd);
    if (!top->dups && (rc = key_repeats(s, top, s->n - 1)) != 0) {
        if (rc < 0)
            return NULL;
        if (!(s->flags & JSCAN_DUPLICATES_OK)) {
            fail(s, JSCAN_E_DUPLICATE, si.end, AT, true,
                 "duplicate object key");
            return NULL;
        }
        top->dups = true;
    }
    p = b + si.end;
    SKIP_WS();
    if (p == end || *p != ':') {
        bad_token(s, AT, JSCAN_E_SYNTAX, "':' expected");
        return NULL;
    }
    p++;
    SKIP_WS();
    return p;
}

/* Close top, its closing bracket ending just before `at`: the container
 * it is in, NULL at the top level. */
static struct frame *
close_container(struct scan *s, struct frame *top, size_t at)
{
    struct jscan_node *nd = &s->tape[top->node];
    bool canon = top->canon && !top->dups;

    nd->len = (uint32_t)(at - nd->off);
    nd->x = (uint32_t)s->n;
    nd->y = top->count;
    nd->flags = (uint8_t)((canon ? JSCAN_CANON : 0) |
                          (top->dups ? JSCAN_DUPKEYS : 0));
    s->depth--;
    top = s->depth > 0 ? &s->stack[s->depth - 1] : NULL;
    if (top != NULL && !canon)
        top->canon = false;
    return top;
}

/*
 * The document, as a state machine over the value grammar: each label is
 * a point in it, the helpers above read one token each.
 */
static int
scan_doc(struct scan *s)
{
    const unsigned char *b = s->buf, *p = b, *end = b + s->len;
    struct frame *top = NULL;

    SKIP_WS();
    if (!(s->flags & JSCAN_ANY) && (p == end || (*p != '[' && *p != '{')))
        return bad_token(s, AT, JSCAN_E_SYNTAX, "'[' or '{' expected");
value: /* whitespace skipped */
    if (s->depth >= s->max_depth && ((s->flags & JSCAN_DEPTH_SCALARS) ||
                                     (p < end && (*p == '[' || *p == '{'))))
        return depth_fail(s, AT);
    if (p == end)
        return bad_token(s, AT, JSCAN_E_SYNTAX, NULL);
    if (*p == '{' || *p == '[') {
        if ((top = open_container(s, p++)) == NULL)
            return -1;
        SKIP_WS();
        if (p < end && *p == (top->object ? '}' : ']'))
            goto close;
        if (top->object)
            goto key;
        goto element;
    }
    if ((p = scan_scalar(s, top, p)) == NULL)
        return -1;
after: /* a value ended at p */
    if (top == NULL)
        goto done;
    SKIP_WS();
    if (p < end && *p == ',') {
        p++;
        SKIP_WS();
        if (top->object)
            goto key;
        goto element;
    }
    if (p < end && *p == (top->object ? '}' : ']'))
        goto close;
    return bad_token(s, AT, JSCAN_E_SYNTAX,
                     top->object ? "'}' expected" : "']' expected");
element: /* whitespace skipped */
    if (p == end)
        return bad_token(s, AT, JSCAN_E_SYNTAX, "']' expected");
    top->count++;
    goto value;
key: /* whitespace skipped */
    if ((p = scan_key(s, top, p)) == NULL)
        return -1;
    goto value;
close: /* p at the closing bracket */
    top = close_container(s, top, AT + 1);
    p++;
    goto after;
done:
    SKIP_WS();
    if (p != end)
        return bad_token(s, AT, JSCAN_E_END, "end of file expected");
    return 0;
}

int
jscan_parse(const char *buf, size_t len, unsigned flags, int max_depth,
            struct arena *a, struct jscan_doc *doc, struct status_error *err)
{
    struct scan s;
    const struct jscan_fail *f = &doc->fail;

    memset(doc, 0, sizeof(*doc));
    doc->buf = buf;
    doc->len = len;
    doc->flags = flags;
    if (len > BOUND_JSCAN_BYTES) {
        doc->fail.code = JSCAN_E_TOO_LARGE;
        snprintf(doc->fail.what, sizeof(doc->fail.what), "too large");
        return status_set(err, ST_TOO_LARGE,
                          "the JSON text is %zu bytes; at most %u are read",
                          len, BOUND_JSCAN_BYTES);
    }
    memset(&s, 0, sizeof(s));
    s.buf = (const unsigned char *)buf;
    s.len = len;
    s.flags = flags;
    s.max_depth = max_depth > BOUND_JSCAN_DEPTH ? BOUND_JSCAN_DEPTH : max_depth;
    s.a = a;
    s.doc = doc;
    /* a guess that fits most bodies (chat bodies run 14 to 18 bytes a
     * value); the tape doubles when it does not */
    s.cap = len / 12 + 16 > len + 1 ? len + 1 : len / 12 + 16;
    s.frames = s.max_depth < FRAMES_FIRST ? s.max_depth : FRAMES_FIRST;
    if (s.frames < 1)
        s.frames = 1;
    s.tape = arena_alloc(a, s.cap * sizeof(*s.tape));
    s.stack = arena_alloc(a, (size_t)s.frames * sizeof(*s.stack));
    if (s.tape == NULL || s.stack == NULL)
        fail_memory(&s);
    else if (scan_doc(&s) == 0) {
        doc->nodes = s.tape;
        doc->count = s.n;
        return 0;
    }
    if (f->code == JSCAN_E_MEMORY)
        return status_set(err, ST_NO_MEMORY, "out of memory reading JSON");
    if (len == 0)
        return status_set(err, ST_INVALID_JSON,
                          "the request body is empty; send a JSON value");
    return status_set(
        err, ST_INVALID_JSON, "invalid JSON at line %d, column %d: %s", f->line,
        f->column,
        f->code == JSCAN_E_NUL ? "strings must not contain \\u0000" : f->what);
}

/* --- navigation ----------------------------------------------------------- */

size_t
jscan_child(const struct jscan_doc *d, size_t i)
{
    const struct jscan_node *n = &d->nodes[i];

    return n->type >= JSCAN_ARRAY && n->x > i + 1 ? i + 1 : JSCAN_NONE;
}

size_t
jscan_next(const struct jscan_doc *d, size_t parent, size_t i)
{
    size_t next = jscan_end(d, i);

    return next < jscan_end(d, parent) ? next : JSCAN_NONE;
}

size_t
jscan_count(const struct jscan_doc *d, size_t i)
{
    return d->nodes[i].type >= JSCAN_ARRAY ? d->nodes[i].y : 0;
}

bool
jscan_string_is(const struct jscan_doc *d, size_t i, const char *s)
{
    const struct jscan_node *n = &d->nodes[i];
    const unsigned char *raw = (const unsigned char *)d->buf + n->off + 1;
    size_t len = strlen(s);

    if (n->type != JSCAN_STRING || n->x != len)
        return false;
    return n->flags & JSCAN_ESCAPED
               ? decoded_equals(raw, raw + n->len - 2, (const unsigned char *)s,
                                len)
               : memcmp(raw, s, len) == 0;
}

size_t
jscan_member(const struct jscan_doc *d, size_t obj, const char *key)
{
    const struct jscan_node *o = &d->nodes[obj];
    size_t n = strlen(key), found = JSCAN_NONE;

    if (o->type != JSCAN_OBJECT)
        return JSCAN_NONE;
    for (size_t k = obj + 1; k < o->x; k = jscan_end(d, k + 1)) {
        const struct jscan_node *kn = &d->nodes[k];
        const unsigned char *raw = (const unsigned char *)d->buf + kn->off + 1;

        if (kn->x != n)
            continue;
        if (kn->flags & JSCAN_ESCAPED
                ? decoded_equals(raw, raw + kn->len - 2,
                                 (const unsigned char *)key, n)
                : memcmp(raw, key, n) == 0) {
            found = k + 1;
            if (!(o->flags & JSCAN_DUPKEYS))
                break; /* else the last one counts */
        }
    }
    return found;
}

const char *
jscan_string(const struct jscan_doc *d, size_t i, struct arena *a, size_t *len)
{
    const struct jscan_node *n = &d->nodes[i];
    const unsigned char *p = (const unsigned char *)d->buf + n->off + 1;
    const unsigned char *end = p + n->len - 2;
    unsigned char *out, *o;

    if (n->type != JSCAN_STRING ||
        (out = arena_alloc(a, (size_t)n->x + 1)) == NULL)
        return NULL;
    if (!(n->flags & JSCAN_ESCAPED)) {
        memcpy(out, p, n->x);
        o = out + n->x;
    } else {
        for (o = out; p < end;)
            if (*p == '\\')
                o += decode_escape(&p, o);
            else
                *o++ = *p++;
    }
    *o = '\0';
    if (len != NULL)
        *len = n->x;
    return (const char *)out;
}

static uint64_t
node_bits(const struct jscan_node *n)
{
    return (uint64_t)n->y << 32 | n->x;
}

long long
jscan_integer(const struct jscan_doc *d, size_t i)
{
    return d->nodes[i].type == JSCAN_INTEGER
               ? (long long)node_bits(&d->nodes[i])
               : 0;
}

double
jscan_real(const struct jscan_doc *d, size_t i)
{
    uint64_t bits = node_bits(&d->nodes[i]);
    double v = 0.0;

    if (d->nodes[i].type == JSCAN_REAL)
        memcpy(&v, &bits, sizeof(v));
    return v;
}

/* --- jansson values ------------------------------------------------------- */

/* A string node's decoded bytes: the input itself when it has no escape,
 * else decoded into `scratch` (valid until its next use). */
static const char *
decoded(const struct jscan_doc *d, size_t i, struct sbuf *scratch, size_t *len)
{
    const struct jscan_node *n = &d->nodes[i];
    const unsigned char *p = (const unsigned char *)d->buf + n->off + 1;

    *len = n->x;
    if (!(n->flags & JSCAN_ESCAPED))
        return (const char *)p;
    sbuf_reset(scratch);
    if (decode_append(scratch, p, p + n->len - 2) != 0)
        return NULL;
    return scratch->buf;
}

static json_t *
build(const struct jscan_doc *d, size_t i, struct sbuf *scratch)
{
    const struct jscan_node *n = &d->nodes[i];
    json_t *c;
    const char *s;
    size_t len;

    switch (n->type) {
    case JSCAN_NULL:
        return json_null();
    case JSCAN_TRUE:
        return json_true();
    case JSCAN_FALSE:
        return json_false();
    case JSCAN_INTEGER:
        return json_integer(jscan_integer(d, i));
    case JSCAN_REAL:
        return json_real(jscan_real(d, i));
    case JSCAN_STRING:
        s = decoded(d, i, scratch, &len);
        return s != NULL ? json_stringn_nocheck(s, len) : NULL;
    case JSCAN_ARRAY:
        if ((c = json_array()) == NULL)
            return NULL;
        for (size_t e = i + 1; e < n->x; e = jscan_end(d, e)) {
            /* append_new takes the element, NULL or not */
            if (json_array_append_new(c, build(d, e, scratch)) != 0) {
                json_decref(c);
                return NULL;
            }
        }
        return c;
    default:
        if ((c = json_object()) == NULL)
            return NULL;
        for (size_t k = i + 1; k < n->x; k = jscan_end(d, k + 1)) {
            /* the value first: building it reuses the scratch. A repeated
             * key replaces the value in place, as json_loadb() does. */
            json_t *v = build(d, k + 1, scratch);

            s = v != NULL ? decoded(d, k, scratch, &len) : NULL;
            if (s == NULL) {
                json_decref(v);
                json_decref(c);
                return NULL;
            }
            if (json_object_setn_new_nocheck(c, s, len, v) != 0) {
                json_decref(c);
                return NULL;
            }
        }
        return c;
    }
}

json_t *
jscan_to_json(const struct jscan_doc *d, size_t i, struct status_error *err)
{
    struct sbuf scratch;
    json_t *v;

    sbuf_init(&scratch, JSONOUT_UNBOUNDED);
    v = build(d, i, &scratch);
    sbuf_release(&scratch);
    if (v == NULL)
        status_set(err, ST_NO_MEMORY, "out of memory reading JSON");
    return v;
}

/* --- text ----------------------------------------------------------------- */

static int
write_node(const struct jscan_doc *d, size_t i, struct sbuf *out,
           struct sbuf *scratch)
{
    const struct jscan_node *n = &d->nodes[i];
    const unsigned char *span = (const unsigned char *)d->buf + n->off;

    if (n->flags & JSCAN_CANON)
        return sbuf_put(out, span, n->len);
    switch (n->type) {
    case JSCAN_INTEGER:
        return jsonout_integer(out, jscan_integer(d, i));
    case JSCAN_REAL:
        return jsonout_real(out, jscan_real(d, i));
    case JSCAN_STRING:
        sbuf_reset(scratch);
        if (decode_append(scratch, span + 1, span + n->len - 1) != 0)
            return -1;
        return jsonout_string(out, scratch->buf, scratch->len);
    case JSCAN_ARRAY:
        if (sbuf_putc(out, '[') != 0)
            return -1;
        for (size_t e = i + 1; e < n->x; e = jscan_end(d, e))
            if ((e > i + 1 && sbuf_putc(out, ',') != 0) ||
                write_node(d, e, out, scratch) != 0)
                return -1;
        return sbuf_putc(out, ']');
    case JSCAN_OBJECT:
        if (n->flags & JSCAN_DUPKEYS) {
            /* which value a repeated key keeps, and where: jansson's
             * rule, written once (in build), not twice */
            json_t *v = jscan_to_json(d, i, NULL);
            int rc = v != NULL ? jsonout_write(v, out) : -1;
            json_decref(v);
            return rc;
        }
        if (sbuf_putc(out, '{') != 0)
            return -1;
        for (size_t k = i + 1; k < n->x; k = jscan_end(d, k + 1))
            if ((k > i + 1 && sbuf_putc(out, ',') != 0) ||
                write_node(d, k, out, scratch) != 0 ||
                sbuf_putc(out, ':') != 0 ||
                write_node(d, k + 1, out, scratch) != 0)
                return -1;
        return sbuf_putc(out, '}');
    default: /* literals are always canonical */
        return sbuf_put(out, span, n->len);
    }
}

int
jscan_write(const struct jscan_doc *d, size_t i, struct sbuf *out)
{
    struct sbuf scratch;
    size_t start = out->len;
    int rc;

    sbuf_init(&scratch, JSONOUT_UNBOUNDED);
    rc = write_node(d, i, out, &scratch);
    sbuf_release(&scratch);
    if (rc != 0)
        sbuf_truncate(out, start);
    return rc;
}
