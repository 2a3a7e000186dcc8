/**
 * Markdown for the chat widget: the model's text in, an inert DOM fragment out.
 *
 * Two layers, so that neither alone has to be perfect:
 *  1. marked turns Markdown into HTML with every piece of raw HTML the model
 *     wrote escaped (it is shown as text, never parsed), images turned into
 *     plain links (nothing loads by itself) and task-list checkboxes into text;
 *  2. DOMPurify parses that HTML against a short allow-list of formatting
 *     tags and attributes, drops any URL that is not http(s), mailto or
 *     relative, and makes every remaining link open in a new tab with
 *     rel="noopener noreferrer".
 *
 * The result is a DocumentFragment (DOMPurify's RETURN_DOM_FRAGMENT), so the
 * caller appends nodes and never assigns innerHTML.
 *
 * This module is not a general-purpose sanitiser for the page: its DOMPurify
 * instance and its marked instance are private (the page's own copies, if it
 * has any, are left untouched).
 *
 * @module markdown
 */
import DOMPurify from '../vendor/dompurify.js';
import { Marked } from '../vendor/marked.js';

/** Tags the widget renders; anything else is removed with its content kept. */
const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'strong', 'em', 'b', 'i', 'del', 's', 'code', 'pre', 'kbd',
  'blockquote', 'ul', 'ol', 'li', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span',
];

/** Attributes kept; target and rel are added to links by the hook below. */
const ALLOWED_ATTR = ['href', 'title', 'start', 'align'];

/**
 * URLs allowed in href: http, https, mailto, and scheme-less ones (relative
 * paths, #fragments, ?queries). "javascript:", "data:", "vbscript:" and every
 * other scheme fail the test and DOMPurify drops the attribute.
 */
export const ALLOWED_URI_REGEXP =
  /^(?:(?:https?|mailto):|[^a-z]|[a-z0-9+.-]+(?:[^a-z0-9+.\-:]|$))/i;

const PURIFY_CONFIG = Object.freeze({
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  KEEP_CONTENT: true,
  RETURN_DOM_FRAGMENT: true,
});

/** @param {string} s */
function escapeHTML(s) {
  return String(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * One marked instance for the widget. Raw HTML tokens (block and inline) are
 * escaped so they read as text; images become links so nothing is fetched
 * without a click; GFM task boxes become "[ ]" / "[x]".
 */
const md = new Marked({ gfm: true, breaks: true, async: false });
md.use({
  renderer: {
    html(token) {
      return escapeHTML(token.text);
    },
    image(token) {
      const label = token.text || token.title || 'image';
      return `<a href="${escapeHTML(token.href)}">${escapeHTML(label)}</a>`;
    },
    checkbox(token) {
      return token.checked ? '[x] ' : '[ ] ';
    },
  },
});

/** DOMPurify instances, one per window (the page's, or a test's jsdom). */
const purifiers = new WeakMap();

/**
 * @param {Window} win
 * @returns {ReturnType<typeof DOMPurify>}
 */
function purifierFor(win) {
  let p = purifiers.get(win);
  if (p) return p;
  p = DOMPurify(win);
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      if (node.hasAttribute('href')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      } else {
        node.removeAttribute('target');
      }
    }
  });
  purifiers.set(win, p);
  return p;
}

/**
 * Markdown to sanitised HTML text. For callers that need a string (tests,
 * logs); the widget itself uses {@link renderMarkdown}.
 *
 * @param {string} text  Markdown written by the model
 * @param {Window} [win] the window whose DOM DOMPurify should use
 * @returns {string} HTML that contains only the allow-listed tags
 */
export function markdownToSafeHTML(text, win = globalThis.window) {
  const frag = renderMarkdown(text, win.document);
  const box = win.document.createElement('div');
  box.append(frag);
  return box.innerHTML;
}

/**
 * Render the model's Markdown into an inert DocumentFragment owned by `doc`.
 *
 * @param {string} text           Markdown written by the model
 * @param {Document} [doc]        target document (defaults to the page's)
 * @returns {DocumentFragment}    sanitised nodes, ready to append
 */
export function renderMarkdown(text, doc = globalThis.document) {
  const win = doc.defaultView;
  let html;
  try {
    html = md.parse(String(text ?? ''));
  } catch {
    /* marked gave up on this input: show it as plain text */
    const frag = doc.createDocumentFragment();
    frag.append(doc.createTextNode(String(text ?? '')));
    return frag;
  }
  const frag = purifierFor(win).sanitize(html, PURIFY_CONFIG);
  return frag.ownerDocument === doc ? frag : doc.importNode(frag, true);
}

/**
 * Markdown that is still arriving, made safe to show: the text so far with
 * its unfinished constructs closed or held back, so that rendering it shows
 * no raw markers. For the live preview of a streamed answer only; the final
 * answer is rendered as the model wrote it.
 *
 *  - an open code fence (``` or ~~~) is closed;
 *  - in the last paragraph, an open inline code span, `**`, `*`, `~~` or
 *    `__` is closed, or dropped when nothing follows it yet;
 *  - a marker cut in half at the very end (a lone "*", "`", "~~", "[") and a
 *    link whose target is still arriving ("[text](http://exa") show only
 *    what is already readable.
 *
 * @param {string} text  Markdown received so far
 * @returns {string}     Markdown to render for now
 */
export function closeOpenMarkdown(text) {
  const src = String(text ?? '');
  /* 1. code fences, line by line: inside an open fence, everything is code */
  const lines = src.split('\n');
  let fence = null; /* the open fence's marker, e.g. "```" */
  let after = 0; /* index of the first line after the last closed fence */
  lines.forEach((line, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) return;
    if (!fence) {
      if (m[1][0] === '`' && m[2].includes('`')) return; /* not a fence: ``` followed by a backtick */
      fence = m[1];
    } else if (m[1][0] === fence[0] && m[1].length >= fence.length && !m[2].trim()) {
      fence = null;
      after = i + 1;
    }
  });
  if (fence) return `${src}${src.endsWith('\n') ? '' : '\n'}${fence}`;

  /* 2. the last paragraph (after the last blank line or closed fence) */
  let start = after;
  for (let i = lines.length - 1; i >= after; i--) {
    if (!lines[i].trim()) {
      start = i + 1;
      break;
    }
  }
  const head = lines.slice(0, start).join('\n');
  let para = lines.slice(start).join('\n').replace(/\s+$/, '');
  /* a link whose target is still arriving: show its text */
  para = para.replace(/\[([^\]\n]*)\]\([^)\s]*$/, '$1');
  /* a marker cut at the very end: hold it back until the next delta */
  para = para.replace(/(^|[^\\])(\[|`{1,2}|~{1,2}|\*{1,3}|_{1,3})$/, (all, before, marker) =>
    /* "**bold**" ends in a closing marker: keep what closes something */
    closesSomething(para, marker) ? all : before,
  ).replace(/\s+$/, '');
  para = balance(para);
  return head ? `${head}\n${para}` : para;
}

/**
 * Would the marker at the end of `para` close an earlier one? (An odd count
 * of the same marker before it, outside code.)
 * @param {string} para
 * @param {string} marker
 */
function closesSomething(para, marker) {
  if (marker === '[') return false;
  const body = para.slice(0, para.length - marker.length);
  if (marker[0] === '`') return (mask(body, false).match(/`/g) || []).length % 2 === 1;
  return count(mask(body, true), marker) % 2 === 1;
}

/**
 * The paragraph with what cannot be a delimiter blanked out (same length, so
 * indexes still match): escaped characters, list bullets, rules, and (with
 * `code`) the inside of complete inline code spans.
 * @param {string} s
 * @param {boolean} code
 */
function mask(s, code) {
  let m = s.replace(/\\[\\`*_~[\]]/g, '  ');
  m = m.replace(/^( {0,3})([*+-])(?= )/gm, '$1 ');
  m = m.replace(/^ {0,3}([*_-])( *\1){2,} *$/gm, (r) => ' '.repeat(r.length));
  if (code) m = m.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (r) => ' '.repeat(r.length));
  return m;
}

/** Non-overlapping occurrences of `marker` in `s`, left to right. */
function count(s, marker) {
  let n = 0;
  for (let i = s.indexOf(marker); i >= 0; i = s.indexOf(marker, i + marker.length)) n++;
  return n;
}

/**
 * Close what the last paragraph left open: an inline code span, then
 * strong, emphasis and strike markers, innermost last opened first.
 * @param {string} para
 */
function balance(para) {
  let out = para;
  /* an open code span: close it (or drop its lone opening backtick) */
  if ((mask(out, false).match(/`/g) || []).length % 2 === 1) {
    const open = mask(out, true).lastIndexOf('`');
    if (open >= 0) out = open === out.length - 1 ? out.slice(0, -1).replace(/\s+$/, '') : `${out}\``;
  }
  const closers = [];
  let m = mask(out, true);
  for (const marker of ['**', '__', '~~']) {
    if (count(m, marker) % 2 === 1) {
      const at = m.lastIndexOf(marker);
      closers.push({ at, marker });
    }
    m = m.split(marker).join(' '.repeat(marker.length));
  }
  /* single "*" (not "_": snake_case words are common and never emphasis) */
  if (count(m, '*') % 2 === 1) closers.push({ at: m.lastIndexOf('*'), marker: '*' });
  closers.sort((a, b) => b.at - a.at);
  for (const { at, marker } of closers) {
    if (!out.slice(at + marker.length).trim()) out = out.slice(0, at).replace(/\s+$/, '');
    else out = `${out}${marker}`;
  }
  return out;
}
