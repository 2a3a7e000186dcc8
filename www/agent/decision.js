/**
 * The approval of a server action as a person reads it: the action's title
 * ("Add review") and its arguments with labels ("Product: p004, Rating: 5")
 * instead of the raw ids (`shop.addReview`, `productId`). Used by the chat
 * widget (chat.js: the card of an `approval-required` answer,
 * docs/chat-protocol.md) and by the assistant page (buildDecisionCard).
 *
 * Where the words come from, best first: a `title` the server sends with the
 * approval (and `labels`, name → label), the JSON Schema `title` of the
 * action's input properties when the caller has the action's schema (the
 * `inputSchema` of GET /_jay/actions), else the names themselves in words:
 * camelCase and snake_case split, a trailing "Id" dropped ("productId" →
 * "Product"), the plugin prefix dropped ("shop.addReview" → "Add review").
 * No network here.
 *
 * @module decision
 */
import { actionWords } from './describe.js';

/** @param {string} text */
function capitalise(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/**
 * The title of an action: `title` when given, else its name in words
 * ("shop.addReview" → "Add review"); "An action" without either.
 * @param {string} tool   `plugin.name`
 * @param {unknown} [title]
 */
export function actionTitle(tool, title) {
  if (typeof title === 'string' && title.trim()) return title.trim();
  const words = actionWords(String(tool ?? ''));
  return words.length ? capitalise(words.join(' ')) : 'An action';
}

/**
 * The label of one argument: `label` when given, else the name in words
 * ("productId" → "Product", "max_items" → "Max items", "url" → "Url").
 * @param {string} name
 * @param {unknown} [label]
 */
export function argLabel(name, label) {
  if (typeof label === 'string' && label.trim()) return label.trim();
  const words = String(name ?? '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  if (words.length > 1 && words[words.length - 1] === 'id') words.pop();
  return words.length ? capitalise(words.join(' ')) : String(name ?? '');
}

/** A value in words: text as it is, anything else as JSON. @param {unknown} value */
function valueText(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The labels the caller knows for an action's arguments: the server's
 * `labels` first, then the `title` of each property of `schema`.
 * @param {any} labels   {name: label} from the approval, or none
 * @param {any} schema   the action's inputSchema, or none
 * @returns {Record<string, string>}
 */
function knownLabels(labels, schema) {
  const out = {};
  const props = schema?.properties && typeof schema.properties === 'object' ? schema.properties : {};
  for (const [k, p] of Object.entries(props)) if (typeof p?.title === 'string') out[k] = p.title;
  if (labels && typeof labels === 'object' && !Array.isArray(labels))
    for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * The arguments as the card lists them: {id, name, label, value}.
 * @param {object} args
 * @param {Record<string, string>} [labels]
 */
export function argLines(args, labels = {}) {
  const list = args && typeof args === 'object' && !Array.isArray(args) ? args : {};
  return Object.entries(list).map(([k, v]) => ({
    id: k,
    name: k,
    label: argLabel(k, Object.hasOwn(labels, k) ? labels[k] : ''),
    value: valueText(v),
  }));
}

/**
 * The arguments in one line: "Product: p004, Rating: 5".
 * @param {{label: string, value: string}[]} lines
 */
export function argSummary(lines) {
  return lines.map((l) => `${l.label}: ${l.value}`).join(', ');
}

/**
 * The `approval` of an approval-required answer, checked: what the card
 * shows and what the decision must carry back. Null when the server sent
 * something the widget cannot use (no id or no ticket).
 * @param {any} approval  {id, tool, args, reason, preview, ticket, expiresAt; title?, labels?}
 * @param {any} [schema]  the action's inputSchema, when the caller has it
 */
export function readApproval(approval, schema) {
  if (!approval || typeof approval !== 'object') return null;
  const { id, ticket } = approval;
  if (typeof id !== 'string' || id === '' || typeof ticket !== 'string' || ticket === '') return null;
  const tool = typeof approval.tool === 'string' ? approval.tool : '';
  const expiry = Number.isFinite(approval.expiresAt) ? new Date(approval.expiresAt) : null;
  const words = tool ? actionWords(tool).join(' ') : 'an action';
  const preview = typeof approval.preview === 'string' && approval.preview.trim() ? approval.preview : '';
  return {
    id,
    ticket,
    tool,
    title: actionTitle(tool, approval.title),
    preview: preview || `Run ${words} (${tool || 'server action'}).`,
    reason: typeof approval.reason === 'string' ? approval.reason : '',
    args: argLines(approval.args, knownLabels(approval.labels, schema)),
    expires: expiry && !Number.isNaN(expiry.getTime()) ? expiry.toISOString() : '',
  };
}

/**
 * The decisions a card offers, in order: [value, label, hint, kind]. `kind`
 * primary is the one button that stands out; secondary ones look like links
 * (decision.css), so "Approve always" never looks like the plain "Approve".
 */
export const DECISIONS = [
  ['approve', 'Approve', 'Run it this once', 'primary'],
  ['reject', 'Reject', 'Do not run it', 'plain'],
];

/**
 * Build an approval card (DOM only; text always as textContent): the title,
 * the preview, why, the labelled arguments and one button per decision.
 * Classes `ga-decision…` (decision.css). `onDecide(value)` gets the clicked
 * decision's value; the caller disables or removes the buttons.
 * @param {Document} doc
 * @param {ReturnType<typeof readApproval>} a
 * @param {{decisions?: [string, string, string, string][], onDecide?: (value: string) => void, heading?: string}} [options]
 *   heading: the element of the title (h3 by default)
 * @returns {HTMLElement}
 */
export function buildDecisionCard(doc, a, { decisions = DECISIONS, onDecide, heading = 'h3' } = {}) {
  const el = (tag, cls, text) => {
    const n = doc.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  };
  const card = el('section', 'ga-decision');
  card.setAttribute('data-tool', a.tool);
  const title = el(heading, 'ga-decision__title', a.title);
  title.title = a.tool; /* the raw id stays one hover away */
  card.append(title, el('p', 'ga-decision__preview', a.preview));
  if (a.reason) card.append(el('p', 'ga-decision__reason', a.reason));
  if (a.args.length) {
    const dl = el('dl', 'ga-decision__args');
    for (const line of a.args) dl.append(el('dt', '', line.label), el('dd', '', line.value));
    card.append(dl);
  }
  const row = el('div', 'ga-decision__buttons');
  for (const [value, label, hint, kind] of decisions) {
    const b = el('button', `ga-decision__btn ga-decision__btn--${kind}`, label);
    b.type = 'button';
    b.title = hint;
    b.setAttribute('data-decision', value);
    b.addEventListener('click', () => onDecide?.(value));
    row.append(b);
  }
  card.append(row);
  return card;
}
