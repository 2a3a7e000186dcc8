/*
 * yamlout.c - JSON values written as block YAML for people to read.
 *
 * A printer for files we generate (actions-index.yaml), not a general YAML
 * emitter and not a parser (ydoc reads YAML): block mappings and sequences
 * indented by two spaces, `{}` and `[]` for empty collections, no anchors,
 * tags, flow collections or multi-document streams. A string is written
 * plain only when neither a YAML 1.1 nor a YAML 1.2 reader could take it for
 * anything else; otherwise it is double-quoted, the one style that can
 * escape every character, so one quoting path serves all cases.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/yamlout.h"
#include "core/bounds.h"
#include "core/sbuf.h"
#include "core/utf8.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every put_* helper returns 0 or -1 like sbuf_add(), so a line is written
 * as one `||` chain that stops at the first append over the cap.
 */

/* Spaces per nesting level. Every block level indents by exactly this, so
 * indent / YO_INDENT + 1 is the nesting depth of what is written there. */
#define YO_INDENT 2

/* Characters that give a plain scalar another meaning when they lead it. */
static const char yo_indicators[] = "-?:,[]{}#&*!|>'\"%@`";

/*
 * Plain words a YAML 1.1 or 1.2 reader resolves to something other than a
 * string (compared without regard to case): null, booleans including 1.1's
 * yes/no/on/off/y/n, 1.1's merge and value keys, and the special floats
 * whose leading `.` the number rule in needs_quotes() does not catch.
 */
static const char *const yo_reserved[] = {
    "null", "~", "true", "false", "yes", "no",   "on",
    "off",  "y", "n",    "<<",    "=",   ".inf", ".nan",
};

/* ---- strings ------------------------------------------------------------ */

/*
 * Code points written as escapes: controls (C0, DEL, C1), most of which
 * libyaml refuses raw even inside quotes (escaping tab and line feed too
 * keeps them visible); NEL, LS and PS, which YAML 1.1 reads as line
 * breaks; the BOM and the non-characters U+FFFE/U+FFFF.
 */
static bool
needs_escape(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

/* Locale-free: a locale's tolower() could fold bytes of UTF-8 text. */
static char
ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool
is_reserved(const char *s, size_t len)
{
    for (size_t i = 0; i < ARRAY_SIZE(yo_reserved); i++) {
        const char *w = yo_reserved[i];
        size_t j = 0;

        if (strlen(w) != len)
            continue;
        while (j < len && ascii_lower(s[j]) == w[j])
            j++;
        if (j == len)
            return true;
    }
    return false;
}

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool
needs_quotes(const char *s, size_t len)
{
    if (len == 0 || is_reserved(s, len) ||
        memchr(yo_indicators, s[0], sizeof(yo_indicators) - 1) != NULL ||
        s[0] == ' ' || s[len - 1] == ' ' || s[len - 1] == ':')
        return true;
    /* Anything that might be a number in either version (1_000, 0x1f, 1:30,
     * .5, +1, dates): a leading digit, or `+`/`.` before a digit or `.`. */
    if (is_digit(s[0]) || ((s[0] == '+' || s[0] == '.') && len > 1 &&
                           (is_digit(s[1]) || s[1] == '.')))
        return true;
    for (size_t i = 0; i < len;) {
        uint32_t cp;

        if (i + 1 < len && ((s[i] == ':' && s[i + 1] == ' ') ||
                            (s[i] == ' ' && s[i + 1] == '#')))
            return true;
        i += utf8_next((const unsigned char *)s + i, len - i, &cp);
        if (cp == UTF8_BAD || needs_escape(cp))
            return true;
    }
    return false;
}

/* Double-quoted. Invalid UTF-8 becomes U+FFFD: a YAML stream must be
 * valid UTF-8, and the escape `\xNN` means a code point, not a byte. */
static int
put_quoted(struct sbuf *out, const char *s, size_t len)
{
    if (sbuf_adds(out, "\""))
        return -1;
    for (size_t i = 0, n; i < len; i += n) {
        uint32_t cp;
        int rc;

        n = utf8_next((const unsigned char *)s + i, len - i, &cp);
        if (cp == '"')
            rc = sbuf_adds(out, "\\\"");
        else if (cp == '\\')
            rc = sbuf_adds(out, "\\\\");
        else if (cp == '\n')
            rc = sbuf_adds(out, "\\n");
        else if (cp == '\t')
            rc = sbuf_adds(out, "\\t");
        else if (cp == '\r')
            rc = sbuf_adds(out, "\\r");
        else if (cp == 0)
            rc = sbuf_adds(out, "\\0");
        else if (cp == UTF8_BAD)
            rc = sbuf_adds(out, "\\uFFFD");
        else if (needs_escape(cp))
            rc = cp <= 0xff ? sbuf_addf(out, "\\x%02X", (unsigned)cp)
                            : sbuf_addf(out, "\\u%04X", (unsigned)cp);
        else
            rc = sbuf_add(out, s + i, n);
        if (rc != 0)
            return -1;
    }
    return sbuf_adds(out, "\"");
}

static int
put_string(struct sbuf *out, const char *s, size_t len)
{
    if (needs_quotes(s, len))
        return put_quoted(out, s, len);
    return sbuf_add(out, s, len);
}

/*
 * The shortest of %.15g..%.17g that reads back as the same double, with a
 * `.` in the mantissa: YAML 1.1 floats need one, and without it 1.0 would
 * read back as the integer 1.
 */
static int
put_real(struct sbuf *out, double d)
{
    size_t start = out->len, m;
    char buf[40];

    /* Format in place, then make sure it reads as a real: "1" -> "1.0". */
    if (sbuf_add_real(out, d) != 0)
        return -1;
    snprintf(buf, sizeof(buf), "%s", out->buf + start);
    m = strcspn(buf, "e");
    if (memchr(buf, '.', m) != NULL)
        return 0;
    out->len = start;
    out->buf[start] = '\0';
    if (sbuf_add(out, buf, m) || sbuf_adds(out, ".0") ||
        sbuf_adds(out, buf + m))
        return -1;
    return 0;
}

/* ---- blocks ------------------------------------------------------------- */

static bool
is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static int put_block(struct sbuf *out, int indent, const json_t *v,
                     bool inline_first);

/* `key: value` (or, for a long key, `? key` then `: value` at `indent`),
 * the cursor already at the key's column. */
static int
put_member(struct sbuf *out, int indent, const char *key, const json_t *v)
{
    size_t len = strlen(key);

    if (len <= BOUND_YAML_KEY_INLINE) {
        if (put_string(out, key, len) || sbuf_adds(out, ":"))
            return -1;
    } else if (sbuf_adds(out, "? ") || put_string(out, key, len) ||
               sbuf_adds(out, "\n") || sbuf_add_spaces(out, indent) ||
               sbuf_adds(out, ":"))
        return -1;
    if (!is_block(v)) {
        if (sbuf_adds(out, " ") || yamlout_scalar(out, v) ||
            sbuf_adds(out, "\n"))
            return -1;
        return 0;
    }
    if (sbuf_adds(out, "\n") || put_block(out, indent + YO_INDENT, v, false))
        return -1;
    return 0;
}

/*
 * A non-empty mapping or sequence at `indent`. With `inline_first` its
 * first line continues the current one, after a sequence item's `- `.
 */
static int
put_block(struct sbuf *out, int indent, const json_t *v, bool inline_first)
{
    const char *key;
    json_t *m;
    size_t i;

    /* ydoc refuses documents nested deeper than this: do not write one */
    if (indent / YO_INDENT + 1 > BOUND_YAML_DEPTH)
        return -1;
    if (json_is_object(v)) {
        json_object_foreach(UNCONST(v), key, m) {
            if ((!inline_first && sbuf_add_spaces(out, indent)) ||
                put_member(out, indent, key, m))
                return -1;
            inline_first = false;
        }
        return 0;
    }
    json_array_foreach(v, i, m) {
        if (((!inline_first || i > 0) && sbuf_add_spaces(out, indent)) ||
            sbuf_adds(out, "- "))
            return -1;
        if (is_block(m) ? put_block(out, indent + YO_INDENT, m, true)
                        : (yamlout_scalar(out, m) || sbuf_adds(out, "\n")))
            return -1;
    }
    return 0;
}

/* ---- API ---------------------------------------------------------------- */

int
yamlout_entry(struct sbuf *out, int indent, const char *key, const json_t *v)
{
    if (key == NULL || indent < 0 || indent / YO_INDENT + 1 > BOUND_YAML_DEPTH)
        return -1;
    if (sbuf_add_spaces(out, indent) || put_member(out, indent, key, v))
        return -1;
    return 0;
}

/* A NULL value reads as an absent one, `null`; a non-empty collection is
 * no scalar and fails (yamlout_entry() writes those). */
int
yamlout_scalar(struct sbuf *out, const json_t *v)
{
    if (v == NULL)
        return sbuf_adds(out, "null");
    switch (json_typeof(v)) {
    case JSON_STRING:
        return put_string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return sbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return put_real(out, json_real_value(v));
    case JSON_TRUE:
        return sbuf_adds(out, "true");
    case JSON_FALSE:
        return sbuf_adds(out, "false");
    case JSON_NULL:
        return sbuf_adds(out, "null");
    case JSON_OBJECT:
        return json_object_size(v) != 0 ? -1 : sbuf_adds(out, "{}");
    case JSON_ARRAY:
        return json_array_size(v) != 0 ? -1 : sbuf_adds(out, "[]");
    }
    return -1;
}

int
yamlout_string(struct sbuf *out, const char *s)
{
    if (s == NULL)
        return -1;
    return put_string(out, s, strlen(s));
}
