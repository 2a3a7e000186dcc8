/**
 * What the assistant page shows of an action and of an answer, in words a
 * person reads: an action's title ("shop.addReview" → "Add review"), its
 * arguments with labels ("productId" → "Product"), the approval card built
 * from them, and an answer's Markdown as plain text (thread previews, the
 * live region). DOM only through the `doc` it is given; no network.
 *
 * The card is the page's own until the widget's shared approval card
 * (www/agent/decision.js) can take its place: approvalCardParts() returns
 * the parts assistant.js wires, so the swap is one import.
 *
 * @module assistant/card
 */
import { renderMarkdown } from '../agent/markdown.js';

/** The words of a name: "shop.addReview" → ["add", "review"], "product_id" → ["product", "id"]. */
function words(name) {
  const s = String(name ?? '');
  const local = s.includes('.') ? s.slice(s.lastIndexOf('.') + 1) : s;
  return local
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_\-\s]+/g, ' ')
    .trim()
    .toLowerCase()
    .split(' ')
    .filter(Boolean);
}

const sentence = (list) => (list.length ? list[0][0].toUpperCase() + list.join(' ').slice(1) : '');

/**
 * An action's title from its registered name (`plugin.name`):
 * "shop.addReview" → "Add review". The name itself when it has no words.
 * @param {string} tool
 */
export function actionTitle(tool) {
  return sentence(words(tool)) || String(tool ?? '') || 'An action';
}

/**
 * An argument's label from its name: "productId" → "Product", "rating" →
 * "Rating", "max_price" → "Max price". A trailing "id" goes when other
 * words are left (the value is the id).
 * @param {string} name
 */
export function argLabel(name) {
  const w = words(name);
  if (w.length > 1 && w.at(-1) === 'id') w.pop();
  return sentence(w) || String(name ?? '');
}

/** A value as the card shows it: strings as they are, the rest as JSON. */
export function argValue(v) {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * The arguments of an approval's preview ("tool {json}"), or null when the
 * preview is not that (cut short with "…", or plain words).
 * @param {{tool?: string, preview?: string}} a
 * @returns {object|null}
 */
export function approvalArgs(a) {
  const p = String(a?.preview ?? '');
  const rest = a?.tool && p.startsWith(`${a.tool} `) ? p.slice(a.tool.length + 1) : p;
  try {
    const args = JSON.parse(rest);
    return args && typeof args === 'object' && !Array.isArray(args) ? args : null;
  } catch {
    return null;
  }
}

/**
 * One line for a list of approvals: "Add review — Product: p004, Rating: 5".
 * @param {{tool?: string, preview?: string}} a
 */
export function approvalSummary(a) {
  const args = approvalArgs(a);
  const title = actionTitle(a?.tool);
  if (!args) {
    const p = String(a?.preview ?? '');
    const rest = a?.tool && p.startsWith(`${a.tool} `) ? p.slice(a.tool.length + 1) : p;
    return rest ? `${title} — ${rest}` : title;
  }
  const parts = Object.entries(args).map(([k, v]) => `${argLabel(k)}: ${argValue(v)}`);
  return parts.length ? `${title} — ${parts.join(', ')}` : title;
}

const BLOCKS = 'p, li, h1, h2, h3, h4, h5, h6, pre, blockquote, tr, td, th, br, hr';

/**
 * Markdown as the plain text it shows: "**USB-C Hub** — $49.99" →
 * "USB-C Hub — $49.99"; blocks are separated by one space.
 * @param {string} markdown
 * @param {Document} [doc]
 */
export function plainText(markdown, doc = globalThis.document) {
  const box = doc.createElement('div');
  box.append(renderMarkdown(String(markdown ?? ''), doc));
  for (const el of box.querySelectorAll(BLOCKS)) el.after(' ');
  return box.textContent.replace(/\s+/g, ' ').trim();
}

/**
 * The names of the things a run's actions answered with: {id → name} for
 * every object in their outputs with a string `_id` or `id` and a string
 * `name` (e.g. the products a search found), so that an argument that is
 * such an id can be shown with its name.
 * @param {{actions?: {output?: unknown}[]}} run  GET /api/agent/runs/{id}
 * @returns {Map<string, string>}
 */
export function namesFromRun(run) {
  const names = new Map();
  const seen = new Set();
  const walk = (v, depth) => {
    if (!v || typeof v !== 'object' || depth > 8 || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    const id = typeof v._id === 'string' ? v._id : typeof v.id === 'string' ? v.id : null;
    if (id && typeof v.name === 'string' && v.name) names.set(id, v.name);
    for (const x of Object.values(v)) walk(x, depth + 1);
  };
  for (const a of Array.isArray(run?.actions) ? run.actions : []) walk(a?.output, 0);
  return names;
}

/**
 * Show the name beside every argument value of `card` that is a known id:
 * "p004" → "USB-C Hub (p004)".
 * @param {HTMLElement} card  from approvalCardParts
 * @param {Map<string, string>} names  from namesFromRun
 */
export function nameIds(card, names) {
  for (const dd of card.querySelectorAll('dl.preview dd')) {
    const name = names.get(dd.textContent);
    if (name && !dd.dataset.id) {
      dd.dataset.id = dd.textContent;
      dd.textContent = `${name} (${dd.dataset.id})`;
    }
  }
}

/** The decisions, in the order the card shows them; "Approve always" is the secondary one. */
export const DECISIONS = [
  { decision: 'approve_once', label: 'Approve', kind: 'primary', title: 'Run it this once' },
  { decision: 'approve_and_always_allow', label: 'Approve always', kind: 'secondary',
    title: 'Run it, and let the assistant do this without asking from now on (for users whose trust level is delegated)' },
  { decision: 'reject', label: 'Reject', kind: '', title: 'Do not run it; the assistant is told you declined' },
];

/**
 * The approval card's parts for `a` ({id, tool, reason, preview}): the card
 * (a labelled section: the title, why, the labelled arguments, the
 * feedback field and the buttons), its buttons, the feedback input, the
 * decision form, and the outcome and error lines. `onDecide(decision)`
 * runs on a click.
 * @param {Document} doc
 * @param {{id: string, tool: string, reason?: string, preview?: string}} a
 * @param {{busy?: boolean, onDecide: (decision: string) => void}} options
 */
export function approvalCardParts(doc, a, { busy = false, onDecide }) {
  const el = (tag, props = {}, ...children) => {
    const e = doc.createElement(tag);
    Object.assign(e, props);
    e.append(...children.filter((c) => c !== null && c !== undefined && c !== ''));
    return e;
  };
  const titleId = `approval-${a.id}`;
  const feedbackId = `feedback-${a.id}`;
  const feedback = el('input', { type: 'text', id: feedbackId, name: 'feedback', autocomplete: 'off' });
  const buttons = DECISIONS.map((d) => {
    const b = el('button', { type: 'button', className: d.kind, title: d.title, disabled: busy,
      onclick: () => onDecide(d.decision) }, d.label);
    b.dataset.decision = d.decision;
    return b;
  });
  const form = el('div', { className: 'decide' },
    el('label', { htmlFor: feedbackId }, 'Feedback for the assistant (optional)'), feedback,
    el('div', { className: 'buttons' }, ...buttons));
  const outcome = el('p', { className: 'outcome', tabIndex: -1, hidden: true });
  const error = el('p', { className: 'error' });
  error.setAttribute('role', 'alert');
  const card = el('section', { className: 'approval' },
    el('h3', { id: titleId }, `Approval needed: ${actionTitle(a.tool)}`),
    a.reason ? el('p', { className: 'reason' }, `Why: ${a.reason}`) : null,
    argsBlock(el, a),
    form, outcome, error);
  card.dataset.approvalId = a.id;
  card.dataset.state = 'pending';
  card.dataset.tool = a.tool;
  card.setAttribute('aria-labelledby', titleId);
  return { card, buttons, feedback, form, outcome, error };
}

/** The arguments as a labelled list, or the preview as written. */
function argsBlock(el, a) {
  const args = approvalArgs(a);
  if (!args) {
    const p = String(a.preview ?? '');
    return el('pre', { className: 'preview' }, a.tool && p.startsWith(`${a.tool} `) ? p.slice(a.tool.length + 1) : p);
  }
  return el('dl', { className: 'preview' }, ...Object.entries(args).flatMap(([k, v]) =>
    [el('dt', {}, argLabel(k)), el('dd', {}, argValue(v))]));
}
