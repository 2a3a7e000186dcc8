/**
 * Words for what the server does: a server action's name as a status
 * ("Searching products…") or a done line ("Searched products"), and what a
 * request cost. No DOM, no network.
 *
 * @module describe
 */

const PAST = {
  get: 'Got', find: 'Found', send: 'Sent', make: 'Made', run: 'Ran', set: 'Set', put: 'Put',
  read: 'Read', write: 'Wrote', buy: 'Bought', pay: 'Paid', build: 'Built', submit: 'Submitted',
  stop: 'Stopped', ship: 'Shipped', drop: 'Dropped', plan: 'Planned', ask: 'Asked',
};
const REGULAR = new Set([
  'search', 'list', 'add', 'create', 'update', 'delete', 'remove', 'fetch', 'check', 'load',
  'save', 'look', 'query', 'compute', 'calculate', 'count', 'validate', 'book', 'cancel',
  'place', 'rate', 'apply', 'estimate', 'reserve', 'track', 'convert', 'lookup',
]);

/** @param {string} verb  lower case */
function pastTense(verb) {
  if (PAST[verb]) return PAST[verb];
  const cap = verb[0].toUpperCase() + verb.slice(1);
  if (verb.endsWith('e')) return `${cap}d`;
  if (/[^aeiou]y$/.test(verb)) return `${cap.slice(0, -1)}ied`;
  return `${cap}ed`;
}

/** Present participles the rule in presentParticiple() gets wrong. */
const ING = {
  get: 'Getting', set: 'Setting', put: 'Putting', run: 'Running', stop: 'Stopping', ship: 'Shipping',
  drop: 'Dropping', plan: 'Planning', submit: 'Submitting', lookup: 'Looking up',
};

/** @param {string} verb  lower case */
function presentParticiple(verb) {
  if (ING[verb]) return ING[verb];
  const cap = verb[0].toUpperCase() + verb.slice(1);
  if (/[^e]e$/.test(verb)) return `${cap.slice(0, -1)}ing`;
  return `${cap}ing`;
}

/**
 * The words of an action's name without its plugin: "shop.searchProducts"
 * → ["search", "products"].
 * @param {string} name
 */
export function actionWords(name) {
  const local = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
  return local
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * What the server is doing while one of its actions runs (a streamed
 * `status: tool` event), e.g. "Searching products (shop.searchProducts)";
 * the widget adds "…". Exported for tests.
 * @param {string} name  the action's registered name, `plugin.name`
 */
export function describeServerAction(name) {
  const full = String(name ?? '') || 'action';
  const words = actionWords(full);
  const text =
    words.length && (PAST[words[0]] || REGULAR.has(words[0]))
      ? [presentParticiple(words[0]), ...words.slice(1)].join(' ')
      : `Running ${words.join(' ') || 'an action'}`;
  return `${text} (${full})`;
}

/**
 * One progress line for a server action the server ran during the request,
 * e.g. "Searched products (shop.searchProducts)".
 * @param {{name: string, args?: object, ok?: boolean}} call  an entry of `serverCalls`
 */
export function describeServerCall(call) {
  const name = String(call?.name ?? 'action');
  const words = actionWords(name);
  let text;
  if (words.length && (PAST[words[0]] || REGULAR.has(words[0])))
    text = [pastTense(words[0]), ...words.slice(1)].join(' ');
  else text = `Ran ${words.join(' ')}`;
  text += ` (${name})`;
  return call?.ok === false ? `${text} — failed` : text;
}

/**
 * What a request cost, in words, from the answer's (or the stream's last)
 * `usage`: "1,234 tokens: 1,000 in (800 cached), 200 out, 34 thinking;
 * 2 Gemini calls; gemini-3.8-flash". Empty without usage. Exported for tests.
 * @param {any} usage  {promptTokens, candidatesTokens, thoughtsTokens, cachedTokens, totalTokens, geminiCalls}
 * @param {string} [model]
 */
export function describeUsage(usage, model) {
  if (!usage || typeof usage !== 'object') return '';
  const n = (k) => (Number.isFinite(usage[k]) ? usage[k] : 0);
  const f = (v) => v.toLocaleString('en-US');
  let text = `${f(n('totalTokens'))} tokens: ${f(n('promptTokens'))} in`;
  if (n('cachedTokens') > 0) text += ` (${f(n('cachedTokens'))} cached)`;
  text += `, ${f(n('candidatesTokens'))} out`;
  if (n('thoughtsTokens') > 0) text += `, ${f(n('thoughtsTokens'))} thinking`;
  const calls = n('geminiCalls');
  text += `; ${calls} Gemini call${calls === 1 ? '' : 's'}`;
  if (typeof model === 'string' && model) text += `; ${model}`;
  return text;
}
