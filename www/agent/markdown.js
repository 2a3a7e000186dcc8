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
