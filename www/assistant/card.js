/**
 * What the assistant page shows of an action and of an answer, in words a
 * person reads: an approval as the shared approval card of
 * www/agent/decision.js (the widget's too: the action's title, "shop.addReview"
 * → "Add review", its arguments with labels, "productId" → "Product", "Approve
 * always" secondary) with the run API's parts added (feedback, the outcome);
 * an id the run found shown with its name; an answer's Markdown as plain
 * text (thread previews, the live region). DOM only through the `doc` it is
 * given; no network.
 *
 * @module assistant/card
 */
import { actionTitle, argLines, argSummary, buildDecisionCard } from '../agent/decision.js';
import { renderMarkdown } from '../agent/markdown.js';

export { actionTitle, argLabel } from '../agent/decision.js';

/** The preview without the tool's name in front ("shop.addReview {…}" → "{…}"). */
function previewRest(a) {
  const p = String(a?.preview ?? '');
  return a?.tool && p.startsWith(`${a.tool} `) ? p.slice(a.tool.length + 1) : p;
}

/**
 * The arguments of an approval's preview ("tool {json}"), or null when the
 * preview is not that (cut short with "…", or plain words).
 * @param {{tool?: string, preview?: string}} a
 * @returns {object|null}
 */
export function approvalArgs(a) {
  try {
    const args = JSON.parse(previewRest(a));
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
  const rest = args ? argSummary(argLines(args)) : previewRest(a);
  return rest ? `${actionTitle(a?.tool)} — ${rest}` : actionTitle(a?.tool);
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

/**
 * The decisions of the run API, in the card's order: [value, label, hint,
 * kind] as decision.js takes them; "Approve always" is the secondary one.
 */
export const DECISIONS = [
  ['approve_once', 'Approve', 'Run it this once', 'primary'],
  ['approve_and_always_allow', 'Approve always',
    'Run it, and let the assistant do this without asking from now on (for users whose trust level is delegated)', 'secondary'],
  ['reject', 'Reject', 'Do not run it; the assistant is told you declined', 'plain'],
];

/**
 * The approval card's parts for `a` ({id, tool, reason, preview} of the run
 * API): the card (decision.js's, labelled by its title: the action's title,
 * why, the labelled arguments; then the feedback field and the buttons),
 * its buttons, the feedback input, the decision form, and the outcome and
 * error lines. `onDecide(decision)` runs on a click.
 * @param {Document} doc
 * @param {{id: string, tool: string, reason?: string, preview?: string}} a
 * @param {{busy?: boolean, onDecide: (decision: string) => void}} options
 */
export function approvalCardParts(doc, a, { busy = false, onDecide }) {
  const args = approvalArgs(a);
  const card = buildDecisionCard(doc, {
    tool: a.tool,
    title: `Approval needed: ${actionTitle(a.tool)}`,
    preview: args ? '' : previewRest(a), /* cut short: as written */
    reason: a.reason ? `Why: ${a.reason}` : '',
    args: args ? argLines(args) : [],
  }, { decisions: DECISIONS, onDecide });
  const el = (tag, props = {}) => Object.assign(doc.createElement(tag), props);
  const title = card.querySelector('.ga-decision__title');
  title.id = `approval-${a.id}`;
  const preview = card.querySelector('.ga-decision__preview');
  if (args) preview.remove();
  else preview.classList.add('preview');
  card.querySelector('.ga-decision__reason')?.classList.add('reason');
  card.querySelector('.ga-decision__args')?.classList.add('preview');
  const row = card.querySelector('.ga-decision__buttons');
  const buttons = [...row.querySelectorAll('button')];
  for (const b of buttons) b.disabled = busy;
  const feedback = el('input', { type: 'text', id: `feedback-${a.id}`, name: 'feedback', autocomplete: 'off' });
  const form = el('div', { className: 'decide' });
  form.append(el('label', { htmlFor: feedback.id, textContent: 'Feedback for the assistant (optional)' }),
    feedback, row);
  const outcome = el('p', { className: 'outcome', tabIndex: -1, hidden: true });
  const error = el('p', { className: 'error' });
  error.setAttribute('role', 'alert');
  card.append(form, outcome, error);
  card.classList.add('approval');
  card.dataset.approvalId = a.id;
  card.dataset.state = 'pending';
  card.setAttribute('aria-labelledby', title.id);
  return { card, buttons, feedback, form, outcome, error };
}
