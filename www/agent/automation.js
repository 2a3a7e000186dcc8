/**
 * automation.js — the AutomationAPI for plain HTML pages (README "Adding the agent to a page").
 *
 * Markup convention:
 *   data-ref="addBtn"          an interactive element the agent may use
 *   data-foreach="items"       a repeated container; its children carry data-id="<key>"
 *   data-description="..."     what the element does, for the agent
 *   data-agent="off"           this element and its whole subtree are invisible to the agent
 *
 * The page publishes its view state with `window.pageAgent.setViewState(obj)`.
 * Everything returned by getPageState() is plain JSON (no DOM nodes).
 */

const SKIPPED_INPUT_TYPES = new Set(['password', 'hidden', 'file']);
const CLICK_INPUT_TYPES = new Set(['button', 'submit', 'reset', 'image']);
const TOGGLE_INPUT_TYPES = new Set(['checkbox', 'radio']);

/** Events offered per kind of element. */
const EVENTS = {
  click: ['click'],
  text: ['input', 'change'],
  select: ['change'],
  toggle: ['change'],
};

/** Attributes whose change can alter the interactions; other attribute churn is ignored. */
const WATCHED_ATTRIBUTES = [
  'data-ref', 'data-id', 'data-foreach', 'data-description', 'data-agent', 'data-label',
  'disabled', 'hidden', 'inert', 'aria-disabled', 'aria-label', 'type', 'placeholder',
  'title', 'value', 'label', 'selected', 'multiple',
];

const LABEL_MAX = 80;
const VALUE_MAX = 200;
const OPTIONS_MAX = 100;

/**
 * @typedef {string[]} Coordinate
 *   `[ref]`, `[itemId, ref]`, `[outerId, innerId, ref]`; string form joins with "/".
 *
 * @typedef {object} InteractionItem
 * @property {Coordinate} coordinate
 * @property {string} element    tag-ish description: "button", "input[type=text]", "select", …
 * @property {string[]} events   "click" | "input" | "change"
 * @property {string} label      visible text / aria-label / field label / placeholder (≤ 80 chars)
 * @property {string} [itemLabel] for repeated items: a name for the item ("USB-C Hub")
 * @property {string} [value]    current value of text fields and selects
 * @property {boolean} [checked] current state of checkboxes and radios
 * @property {{value: string, label: string}[]} [options] enabled options of a select
 *
 * @typedef {object} Interaction
 * @property {string} refName
 * @property {string} [description]  from data-description, else the linked contract
 * @property {InteractionItem[]} items
 *
 * @typedef {object} PageState
 * @property {object} viewState
 * @property {Interaction[]} interactions
 * @property {{name: string}[]} customEvents
 */

/**
 * Create the AutomationAPI for a document (or an element subtree).
 *
 * @param {Document|Element} [root=document]
 * @returns {{
 *   getPageState(): PageState,
 *   triggerEvent(event: string, coordinate: Coordinate|string, value?: unknown): void,
 *   getInteraction(coordinate: Coordinate|string): (InteractionItem & {refName: string, description?: string, node: Element})|undefined,
 *   onStateChange(cb: (state: PageState) => void): () => void,
 *   setViewState(obj: object): void,
 *   getViewState(): object,
 *   loadContracts(): Promise<Map<string, string>>,
 * }}
 */
export function createAutomation(root = document) {
  const doc = root.nodeType === 9 ? root : root.ownerDocument;
  const win = doc.defaultView;
  /** @type {Map<string, string>} tag → description, from linked .jay-contract files */
  const contractDescriptions = new Map();
  const listeners = new Set();
  let viewState = {};
  let observer = null;
  let pending = false;

  // ---- scanning -------------------------------------------------------------

  /** One pass over the DOM: every usable data-ref element, in document order. */
  function scan() {
    const found = new Map(); // coordinate key → {item, node, refName}
    const disabled = new Set(); // keys of elements that exist but are disabled
    const itemLabels = new Map(); // repeated item element → label
    for (const node of root.querySelectorAll('[data-ref]')) {
      const refName = node.getAttribute('data-ref').trim();
      if (!refName || isOff(node)) continue;
      const kind = kindOf(node);
      if (!kind || isHiddenFromUsers(node)) continue;
      const path = itemPath(node);
      const coordinate = [...path.map((p) => p.id), refName];
      const key = coordinate.join('/');
      if (isDisabled(node)) {
        disabled.add(key);
        continue;
      }
      if (found.has(key)) continue; // duplicate coordinate: the first element wins
      const item = { coordinate, element: describeElement(node), events: [...EVENTS[kind]], label: labelOf(node, kind) };
      if (path.length) {
        const inner = path[path.length - 1];
        if (!itemLabels.has(inner.node)) itemLabels.set(inner.node, itemLabelOf(inner.node, inner.id));
        const itemLabel = itemLabels.get(inner.node);
        if (itemLabel) item.itemLabel = itemLabel;
      }
      addCurrentValue(item, node, kind);
      found.set(key, { item, node, refName, kind });
    }
    return { found, disabled };
  }

  /** Group scanned entries by ref name, in order of first appearance. */
  function group(found) {
    const groups = new Map();
    for (const { item, node, refName } of found.values()) {
      let g = groups.get(refName);
      if (!g) groups.set(refName, (g = { refName, description: undefined, items: [] }));
      g.description ||= node.getAttribute('data-description')?.trim() || undefined;
      g.items.push(item);
    }
    return [...groups.values()].map(({ refName, description, items }) => {
      description ||= contractDescriptions.get(refName);
      return description ? { refName, description, items } : { refName, items };
    });
  }

  function itemPath(node) {
    const path = [];
    const stop = root.nodeType === 9 ? null : root.parentElement;
    for (let n = node; n && n !== stop; n = n.parentElement) {
      if (n.hasAttribute('data-id') && n.parentElement?.hasAttribute('data-foreach')) {
        path.unshift({ id: n.getAttribute('data-id'), node: n });
      }
    }
    return path;
  }

  function itemLabelOf(itemNode, id) {
    return clip(
      itemNode.getAttribute('data-label') ||
        itemNode.getAttribute('aria-label') ||
        labelFromViewState(viewState, id) ||
        firstPlainText(itemNode),
    );
  }

  function lookup(coordinate) {
    const key = coordinateKey(coordinate);
    const { found, disabled } = scan();
    return { key, entry: found.get(key), disabled: disabled.has(key), found };
  }

  // ---- the API --------------------------------------------------------------

  function getPageState() {
    return { viewState, interactions: group(scan().found), customEvents: [] };
  }

  function getInteraction(coordinate) {
    const { entry } = lookup(coordinate);
    if (!entry) return undefined;
    const description = entry.node.getAttribute('data-description')?.trim() || contractDescriptions.get(entry.refName);
    return { refName: entry.refName, ...(description ? { description } : {}), ...entry.item, node: entry.node };
  }

  function triggerEvent(event, coordinate, value) {
    const { key, entry, disabled, found } = lookup(coordinate);
    if (!entry) {
      if (disabled) throw new Error(`"${key}" is disabled right now`);
      const known = [...found.keys()];
      const hint = known.length ? ` Known coordinates: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}` : '';
      throw new Error(`Unknown coordinate "${key}".${hint}`);
    }
    const { node, item, kind } = entry;
    if (!item.events.includes(event)) {
      throw new Error(`"${key}" (${item.element}) does not take "${event}"; it takes ${item.events.join(', ')}`);
    }
    switch (kind) {
      case 'click':
        node.click();
        return;
      case 'text':
        if (value === undefined) return fire(node, event);
        setNative(node, 'value', String(value));
        fire(node, 'input');
        fire(node, 'change');
        return;
      case 'select': {
        if (value === undefined) return fire(node, 'change');
        const wanted = String(value);
        const allowed = enabledOptions(node).map((o) => o.value);
        if (!allowed.includes(wanted)) {
          throw new Error(`"${wanted}" is not an option of "${key}"; options: ${allowed.join(', ')}`);
        }
        setNative(node, 'value', wanted);
        fire(node, 'input');
        fire(node, 'change');
        return;
      }
      case 'toggle': {
        if (value === undefined) return node.click(); // a plain "change" toggles, like a user's click
        const wanted = toBoolean(value);
        if (wanted === undefined) throw new Error(`"${key}" takes true or false, not "${value}"`);
        if (node.checked === wanted) return;
        if (wanted || node.type === 'checkbox') {
          node.click(); // a real click: toggles and fires input + change
          if (node.checked === wanted) return;
        }
        // unchecking a radio (no user gesture does that) or a click that was prevented
        setNative(node, 'checked', wanted);
        fire(node, 'input');
        fire(node, 'change');
        return;
      }
    }
  }

  function onStateChange(cb) {
    listeners.add(cb);
    startObserving();
    return () => {
      listeners.delete(cb);
      if (!listeners.size) stopObserving();
    };
  }

  function setViewState(obj) {
    viewState = obj ?? {};
    schedule();
  }

  function getViewState() {
    return viewState;
  }

  /**
   * Fetch every `<link rel="jay-contract" href>` of the document and read the
   * descriptions of its `interactive` tags; they describe refs of the same name.
   * Failures are skipped quietly. Resolves with the tag → description map.
   */
  async function loadContracts() {
    const links = [...doc.querySelectorAll('link[rel~="jay-contract"][href]')];
    const fetchFn = win?.fetch ?? globalThis.fetch;
    await Promise.all(
      links.map(async (link) => {
        try {
          const res = await fetchFn(link.href);
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          for (const [tag, description] of parseContract(await res.text())) {
            if (!contractDescriptions.has(tag)) contractDescriptions.set(tag, description);
          }
        } catch (err) {
          console.debug(`[gemini-agent] contract ${link.getAttribute('href')} not loaded: ${err.message}`);
        }
      }),
    );
    if (links.length) schedule();
    return contractDescriptions;
  }

  // ---- change notification --------------------------------------------------

  /** Coalesce bursts (a render plus setViewState in one task) into one call. */
  function schedule() {
    if (pending || !listeners.size) return;
    pending = true;
    // two hops: mutation records of the same task arrive in the first one
    queueMicrotask(() => queueMicrotask(flush));
  }

  function flush() {
    pending = false;
    if (!listeners.size) return;
    const state = getPageState();
    for (const cb of [...listeners]) {
      try {
        cb(state);
      } catch (err) {
        console.error('[gemini-agent] onStateChange callback failed', err);
      }
    }
  }

  function startObserving() {
    if (observer || !win?.MutationObserver) return;
    observer = new win.MutationObserver((records) => {
      if (records.some(isRelevant)) schedule();
    });
    observer.observe(root, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
      attributeFilter: WATCHED_ATTRIBUTES,
    });
  }

  function stopObserving() {
    observer?.disconnect();
    observer = null;
  }

  function isRelevant(record) {
    const target = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    return !target || !isOff(target);
  }

  // ---- DOM helpers that need the window --------------------------------------

  function fire(node, type) {
    node.dispatchEvent(new win.Event(type, { bubbles: true, composed: type === 'input' }));
  }

  /** Set value/checked with the prototype's native setter, as a user's edit would. */
  function setNative(node, prop, value) {
    const proto =
      node.localName === 'textarea' ? win.HTMLTextAreaElement.prototype
      : node.localName === 'select' ? win.HTMLSelectElement.prototype
      : win.HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, prop)?.set;
    if (setter) setter.call(node, value);
    else node[prop] = value;
  }

  return { getPageState, triggerEvent, getInteraction, onStateChange, setViewState, getViewState, loadContracts };
}

/**
 * Publish the page-facing API as `win.pageAgent = { setViewState, getPageState, automation }`.
 * A page that ran before the agent may have set `window.pageAgent = { viewState }`;
 * that view state is adopted. Fires `pageagent:ready` on the window afterwards.
 *
 * @param {ReturnType<typeof createAutomation>} automation
 * @param {Window} [win=window]
 */
export function installPageAgent(automation, win = window) {
  const early = win.pageAgent;
  const agent = {
    setViewState: (obj) => automation.setViewState(obj),
    getPageState: () => automation.getPageState(),
    automation,
  };
  if (early && typeof early === 'object' && early.viewState && typeof early.viewState === 'object') {
    automation.setViewState(early.viewState);
  }
  win.pageAgent = agent;
  if (typeof win.CustomEvent === 'function') {
    win.dispatchEvent(new win.CustomEvent('pageagent:ready', { detail: agent }));
  }
  return agent;
}

/**
 * Read the interactive tags' descriptions from a .jay-contract (YAML) text.
 * A small line-based reader: it understands `- tag: X` list entries at any
 * depth, `type:` (scalar or `[a, b]`) and `description:` (plain, quoted, or a
 * `>` / `|` block). Entries without type `interactive` are ignored.
 *
 * @param {string} text
 * @returns {Map<string, string>} tag → description
 */
export function parseContract(text) {
  const out = new Map();
  const lines = String(text).split(/\r?\n/);
  /** @type {{indent: number, fields: Record<string, string>}[]} */
  const entries = [];
  const stack = []; // open entries, innermost last

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim() || line.trim().startsWith('#')) continue;
    let m = /^(\s*)-\s+([\w-]+):\s*(.*)$/.exec(line);
    let indent;
    let key;
    let raw;
    if (m) {
      indent = m[1].length + 2;
      while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
      const entry = { indent, fields: {} };
      entries.push(entry);
      stack.push(entry);
      [, , key, raw] = m;
    } else if ((m = /^(\s*)([\w-]+):\s*(.*)$/.exec(line))) {
      indent = m[1].length;
      while (stack.length && stack[stack.length - 1].indent > indent) stack.pop();
      [, , key, raw] = m;
    } else {
      continue;
    }
    const entry = stack[stack.length - 1];
    // a block scalar or plain continuation lines: everything indented deeper
    let value = raw.trim();
    const block = /^([>|])[+-]?$/.exec(value);
    const more = [];
    while (i + 1 < lines.length && (!lines[i + 1].trim() || leading(lines[i + 1]) > indent)) {
      if (!block && /^\s*-?\s*[\w-]+:(\s|$)/.test(lines[i + 1])) break;
      more.push(lines[++i].trim());
    }
    if (block) value = (block[1] === '>' ? more.filter(Boolean).join(' ') : more.join('\n')).trim();
    else if (more.length) value = [value, ...more].filter(Boolean).join(' ');
    if (entry && entry.indent === indent) entry.fields[key] = unquote(value);
  }

  for (const { fields } of entries) {
    if (!fields.tag || !fields.description) continue;
    const types = (fields.type ?? '').replace(/^\[|\]$/g, '').split(',').map((t) => t.trim());
    if (types.includes('interactive') && !out.has(fields.tag)) out.set(fields.tag, fields.description);
  }
  return out;

  function leading(s) {
    return s.length - s.trimStart().length;
  }
}

// ---- pure helpers ------------------------------------------------------------

/**
 * The string form of a coordinate ("item-1/removeBtn").
 * @param {string[]|string} coordinate
 */
export function coordinateKey(coordinate) {
  if (Array.isArray(coordinate)) return coordinate.map(String).join('/');
  return String(coordinate ?? '');
}

function kindOf(node) {
  switch (node.localName) {
    case 'input': {
      const type = node.type;
      if (SKIPPED_INPUT_TYPES.has(type)) return null;
      if (TOGGLE_INPUT_TYPES.has(type)) return 'toggle';
      if (CLICK_INPUT_TYPES.has(type)) return 'click';
      return 'text';
    }
    case 'textarea':
      return 'text';
    case 'select':
      return 'select';
    default:
      return 'click';
  }
}

function describeElement(node) {
  const tag = node.localName;
  if (tag === 'input') return `input[type=${node.type}]`;
  if (tag === 'select') return node.multiple ? 'select[multiple]' : 'select';
  const role = node.getAttribute('role');
  return role && tag !== 'button' && tag !== 'a' ? `${tag}[role=${role}]` : tag;
}

function isOff(node) {
  return node.closest('[data-agent="off"]') !== null;
}

function isDisabled(node) {
  return (
    node.disabled === true ||
    node.closest('fieldset[disabled]') !== null ||
    node.getAttribute('aria-disabled') === 'true'
  );
}

/** Elements a user cannot reach: inside [hidden] or [inert]. */
function isHiddenFromUsers(node) {
  return node.closest('[hidden], [inert]') !== null;
}

function clip(text, max = LABEL_MAX) {
  const s = String(text ?? '').replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function labelOf(node, kind) {
  const aria = node.getAttribute('aria-label') || labelledBy(node);
  if (kind === 'click') {
    return clip(
      aria ||
        node.textContent ||
        (node.localName === 'input' ? node.value : '') ||
        node.getAttribute('title') ||
        node.querySelector?.('img[alt]')?.getAttribute('alt'),
    );
  }
  return clip(aria || labelText(node) || node.getAttribute('placeholder') || node.getAttribute('title'));
}

function labelledBy(node) {
  const ids = node.getAttribute('aria-labelledby');
  if (!ids) return '';
  const doc = node.ownerDocument;
  return ids
    .split(/\s+/)
    .map((id) => doc.getElementById(id)?.textContent ?? '')
    .join(' ');
}

/** Text of the <label>s of a form control, without the control's own content. */
function labelText(node) {
  const labels = node.labels ? [...node.labels] : [];
  return labels
    .map((label) => {
      const copy = label.cloneNode(true);
      for (const inner of copy.querySelectorAll('select, textarea, option, input')) inner.remove();
      return copy.textContent;
    })
    .join(' ');
}

function enabledOptions(select) {
  return [...select.options]
    .filter((o) => !o.disabled && !o.parentElement?.closest('optgroup[disabled]'))
    .map((o) => ({ value: o.value, label: clip(o.label || o.textContent) }));
}

function addCurrentValue(item, node, kind) {
  if (kind === 'text') item.value = clip(node.value, VALUE_MAX);
  else if (kind === 'select') {
    item.value = node.value;
    item.options = enabledOptions(node).slice(0, OPTIONS_MAX);
  } else if (kind === 'toggle') item.checked = node.checked;
}

/** The first piece of visible plain text of an item, outside its controls. */
function firstPlainText(itemNode) {
  const doc = itemNode.ownerDocument;
  const walker = doc.createTreeWalker(itemNode, 4 /* NodeFilter.SHOW_TEXT */);
  const skip = 'button, a, select, option, textarea, script, style, template, [data-ref], [hidden], [data-agent="off"]';
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const text = t.data.trim();
    if (!/\p{L}/u.test(text)) continue;
    let skipped = false;
    for (let n = t.parentElement; n && n !== itemNode; n = n.parentElement) {
      if (n.matches(skip)) {
        skipped = true;
        break;
      }
    }
    if (!skipped) return text;
  }
  return '';
}

/** Find the object with this id in the view state's arrays and name it. */
function labelFromViewState(state, id, depth = 0) {
  if (!state || typeof state !== 'object' || depth > 5) return '';
  const values = Array.isArray(state) ? state : Object.values(state);
  if (Array.isArray(state)) {
    for (const v of values) {
      if (v && typeof v === 'object' && !Array.isArray(v) && [v.id, v.key, v._id].some((k) => k !== undefined && String(k) === id)) {
        const name = ['name', 'title', 'label', 'text'].map((k) => v[k]).find((x) => typeof x === 'string' && x.trim());
        return name ?? Object.values(v).find((x) => typeof x === 'string' && x.trim() && x !== id) ?? '';
      }
    }
  }
  for (const v of values) {
    const found = labelFromViewState(v, id, depth + 1);
    if (found) return found;
  }
  return '';
}

function toBoolean(value) {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

function unquote(value) {
  const s = value.trim();
  if (s.length >= 2 && s[0] === "'" && s.at(-1) === "'") return s.slice(1, -1).replace(/''/g, "'");
  if (s.length >= 2 && s[0] === '"' && s.at(-1) === '"') {
    return s.slice(1, -1).replace(/\\(["\\n])/g, (_, c) => (c === 'n' ? '\n' : c));
  }
  return s.replace(/\s+#.*$/, '');
}
