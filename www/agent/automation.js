/**
 * automation.js — the AutomationAPI for plain HTML pages (docs/widget.md "Adding the agent to a page").
 *
 * What the agent can use:
 *   data-ref="addBtn"          an element the agent may use, by that name (the ref)
 *   button, a[href], input, select, textarea, summary and elements with an
 *   interactive role (button, link, checkbox, switch, radio, tab, menuitem…)
 *                              are found without data-ref too, and named from
 *                              their name attribute, label or id (derivedRef)
 *   data-foreach="items"       a repeated container; its children carry data-id="<key>"
 *   data-description="..."     what the element does, for the agent (also aria-description, title)
 *   data-label="..."           a repeated item's name (else aria-label, the view state, its text)
 *   data-agent="off"           this element and its whole subtree are invisible to the agent
 *   data-agent="marked"        inside it, only data-ref elements are used (no discovery)
 *
 * The page publishes its view state with `window.pageAgent.setViewState(obj)`
 * (or updateViewState(patch)); calls made before this module loads are
 * queued by a one-line stub and applied by installPageAgent().
 *
 * Two readings of the page, both plain JSON (no DOM nodes):
 *   getInteractions()  every usable element, grouped by ref: what tools.js
 *                      builds tools from and what WebMCP lists;
 *   getPageState()     what the model reads each turn: the view state, the
 *                      values of fields and the items of lists, never the
 *                      interactions again (the tools carry those).
 */

const SKIPPED_INPUT_TYPES = new Set(['password', 'hidden', 'file']);
const CLICK_INPUT_TYPES = new Set(['button', 'submit', 'reset', 'image']);
const TOGGLE_INPUT_TYPES = new Set(['checkbox', 'radio']);

/** Elements used without data-ref (outside data-agent="marked"). */
const DISCOVERED =
  'button, input, select, textarea, a[href], summary, [role="button"], [role="link"], [role="checkbox"], ' +
  '[role="switch"], [role="radio"], [role="tab"], [role="menuitem"], [role="menuitemcheckbox"], [role="menuitemradio"]';
/** Discovered fields whose autocomplete says they hold secrets: only a data-ref makes them visible. */
const SECRET_AUTOCOMPLETE = /(^|\s)(cc-|one-time-code|current-password|new-password)/;
/** At most this many discovered refs (the server caps the tools per request); links go first. */
const DISCOVERED_MAX = 48;

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
  'disabled', 'hidden', 'inert', 'aria-disabled', 'aria-label', 'aria-description', 'type', 'placeholder',
  'title', 'value', 'label', 'selected', 'multiple', 'name', 'id', 'href', 'role', 'autocomplete',
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
 * @property {string} element      tag-ish description for messages: "button", "input[type=text]", "select", …
 * @property {string} elementType  the DOM interface name: "HTMLButtonElement", "HTMLInputElement", …
 * @property {string[]} events     "click" | "input" | "change"
 * @property {string} label        visible text / aria-label / field label / placeholder / title (≤ 80 chars)
 * @property {string} [itemLabel]  for repeated items: a name for the item ("USB-C Hub")
 * @property {string} [list]       for repeated items: the data-foreach name of the innermost item's list
 * @property {string} [value]      current value of text fields and selects
 * @property {boolean} [checked]   current state of checkboxes and radios
 * @property {{value: string, label: string}[]} [options] enabled options of a select
 *
 * @typedef {object} Interaction
 * @property {string} refName
 * @property {string} [description]  data-description, aria-description, the linked contract, else title
 * @property {InteractionItem[]} items
 *
 * @typedef {object} ListItem   one item of a repeated list, as the page state gives it
 * @property {string} id        the item's id path ("item-2", "o1/l2"): coordinates are "<id>/<ref>"
 * @property {string} [label]   its name
 * @property {string[]} refs    the refs usable on it right now (disabled ones left out)
 * @property {Record<string, string>} [labels]  element labels, only for refs whose labels differ per item
 *
 * @typedef {object} PageState
 * @property {object} viewState                        what the page published
 * @property {Record<string, string|boolean>} [fields] coordinate → current value of every usable
 *                                                     text field and select (string; empty ones left out),
 *                                                     checkbox and radio (boolean)
 * @property {Record<string, ListItem[]>} [lists]      data-foreach name → its items, in page order
 */

/**
 * Create the AutomationAPI for a document (or an element subtree).
 *
 * @param {Document|Element} [root=document]
 * @returns {{
 *   getPageState(): PageState,
 *   getInteractions(): Interaction[],
 *   triggerEvent(event: string, coordinate: Coordinate|string, value?: unknown): void,
 *   getInteraction(coordinate: Coordinate|string): (InteractionItem & {refName: string, description?: string, node: Element})|undefined,
 *   isDisabled(coordinate: Coordinate|string): boolean,
 *   onStateChange(cb: (state: PageState) => void): () => void,
 *   setViewState(obj: object): void,
 *   updateViewState(patch: object): void,
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

  /**
   * One pass over the DOM: every usable element with its coordinate. data-ref
   * elements first (in document order), then the discovered ones, whose names
   * never take a data-ref's coordinate.
   */
  function scan() {
    const found = new Map(); // coordinate key → {item, node, refName, kind, itemNode}
    const disabled = new Set(); // keys of elements that exist but are disabled
    const taken = new Set(); // every key handed out, disabled ones included
    const itemLabels = new Map(); // repeated item element → label
    const marked = [];
    const discovered = [];
    for (const node of root.querySelectorAll(`[data-ref], ${DISCOVERED}`)) {
      if (node.hasAttribute('data-ref')) marked.push(node);
      else discovered.push(node);
    }

    const add = (node, refName, kind) => {
      const path = itemPath(node);
      const coordinate = [...path.map((p) => p.id), refName];
      const key = coordinate.join('/');
      taken.add(key);
      if (isDisabled(node)) {
        disabled.add(key);
        return;
      }
      if (found.has(key)) return; // duplicate coordinate: the first element wins
      const item = {
        coordinate,
        element: describeElement(node),
        elementType: domTypeName(node),
        events: [...EVENTS[kind]],
        label: labelOf(node, kind),
      };
      let itemNode = null;
      if (path.length) {
        const inner = path[path.length - 1];
        itemNode = inner.node;
        if (!itemLabels.has(itemNode)) itemLabels.set(itemNode, itemLabelOf(itemNode, inner.id));
        const itemLabel = itemLabels.get(itemNode);
        if (itemLabel) item.itemLabel = itemLabel;
        item.list = itemNode.parentElement.getAttribute('data-foreach').trim();
      }
      addCurrentValue(item, node, kind);
      found.set(key, { item, node, refName, kind, itemNode });
    };

    for (const node of marked) {
      const refName = node.getAttribute('data-ref').trim();
      if (!refName || isOff(node)) continue;
      const kind = kindOf(node);
      if (!kind || isHiddenFromUsers(node)) continue;
      add(node, refName, kind);
    }

    // Discovered elements: named, deduplicated per coordinate, capped.
    const candidates = [];
    for (const node of discovered) {
      if (isOff(node) || node.closest('[data-agent="marked"]')) continue;
      const kind = kindOf(node);
      if (!kind || isHiddenFromUsers(node) || !isRendered(node)) continue;
      if (SECRET_AUTOCOMPLETE.test(node.getAttribute('autocomplete') ?? '')) continue;
      candidates.push({ node, kind, base: derivedRef(node, kind) });
    }
    for (const c of candidates) {
      const prefix = itemPath(c.node).map((p) => `${p.id}/`).join('');
      let refName = c.base;
      for (let n = 2; taken.has(prefix + refName); n++) refName = `${c.base}-${n}`;
      taken.add(prefix + refName);
      c.refName = refName;
    }
    const allowed = allowedDiscoveredRefs(candidates);
    for (const { node, kind, refName } of candidates) if (allowed.has(refName)) add(node, refName, kind);
    return { found, disabled };
  }

  /** Group scanned entries by ref name, in order of first appearance. */
  function group(found) {
    const groups = new Map();
    for (const { item, node, refName } of found.values()) {
      let g = groups.get(refName);
      if (!g) groups.set(refName, (g = { refName, description: undefined, items: [] }));
      g.description ||= descriptionOf(node, refName, item.label);
      g.items.push(item);
    }
    return [...groups.values()].map(({ refName, description, items }) =>
      description ? { refName, description, items } : { refName, items },
    );
  }

  function descriptionOf(node, refName, label) {
    const title = node.getAttribute('title')?.trim();
    return (
      node.getAttribute('data-description')?.trim() ||
      node.getAttribute('aria-description')?.trim() ||
      contractDescriptions.get(refName) ||
      (title && clip(title) !== label ? title : undefined)
    );
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

  function getInteractions() {
    return group(scan().found);
  }

  function getPageState() {
    const { found } = scan();
    const state = { viewState };
    const fields = {};
    const lists = new Map(); // list name → Map(id → {entry, node})
    const labelsByRef = new Map(); // repeated ref → Set of its element labels
    for (const { item, refName, kind, itemNode } of found.values()) {
      const key = coordinateKey(item.coordinate);
      // an empty field says nothing its tool does not (it is sent with
      // every request: each byte counts)
      if ((kind === 'text' || kind === 'select') && item.value !== '') fields[key] = item.value;
      else if (kind === 'toggle') fields[key] = item.checked;
      if (!itemNode) continue;
      const id = item.coordinate.slice(0, -1).join('/');
      let list = lists.get(item.list);
      if (!list) lists.set(item.list, (list = new Map()));
      let row = list.get(id);
      if (!row) {
        // the label only when the view state does not say it already (it
        // names the item with the same id): the page state goes with every
        // request, so it says each thing once
        const said = item.itemLabel && clip(labelFromViewState(viewState, id) ?? '') === item.itemLabel;
        row = { entry: { id, ...(item.itemLabel && !said ? { label: item.itemLabel } : {}), refs: [] }, node: itemNode, labels: {} };
        list.set(id, row);
      }
      row.entry.refs.push(refName);
      row.labels[refName] = item.label;
      if (!labelsByRef.has(refName)) labelsByRef.set(refName, new Set());
      labelsByRef.get(refName).add(item.label);
    }
    if (Object.keys(fields).length) state.fields = fields;
    if (lists.size) {
      state.lists = {};
      for (const [name, rows] of lists) {
        const ordered = [...rows.values()].sort((a, b) => documentOrder(a.node, b.node));
        state.lists[name] = ordered.map(({ entry, labels }) => {
          // element labels only where they differ per item (else the tool's description has it)
          const differing = Object.entries(labels).filter(([ref, label]) => label && labelsByRef.get(ref).size > 1);
          return differing.length ? { ...entry, labels: Object.fromEntries(differing) } : entry;
        });
      }
    }
    // Deprecated: callers written against the old shape read getPageState().interactions;
    // it never serialises (not enumerable). Use getInteractions().
    Object.defineProperty(state, 'interactions', { get: () => group(found), enumerable: false, configurable: true });
    return state;
  }

  function getInteraction(coordinate) {
    const { entry } = lookup(coordinate);
    if (!entry) return undefined;
    const description = descriptionOf(entry.node, entry.refName, entry.item.label);
    return { refName: entry.refName, ...(description ? { description } : {}), ...entry.item, node: entry.node };
  }

  function isDisabledAt(coordinate) {
    return lookup(coordinate).disabled;
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

  /** Shallow-merge `patch` into the view state (a key set to undefined is removed). */
  function updateViewState(patch) {
    const next = { ...viewState };
    for (const [k, v] of Object.entries(patch ?? {})) {
      if (v === undefined) delete next[k];
      else next[k] = v;
    }
    setViewState(next);
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

  return {
    getPageState,
    getInteractions,
    triggerEvent,
    getInteraction,
    isDisabled: isDisabledAt,
    onStateChange,
    setViewState,
    updateViewState,
    getViewState,
    loadContracts,
  };
}

/** Methods a page may call on `window.pageAgent` before the agent loads (queued by the stub). */
const QUEUEABLE = new Set(['setViewState', 'updateViewState']);

/**
 * Publish the page-facing API as `win.pageAgent = { setViewState, updateViewState, getPageState, automation }`.
 *
 * A page's scripts may run before this module (a classic inline script always
 * does). The documented one-line stub
 *   window.pageAgent = window.pageAgent || { q: [], setViewState(v) { this.q.push(['setViewState', v]) } };
 * queues those calls as `[method, ...args]` in `q`; they are applied here, in
 * order. A bare early `window.pageAgent = { viewState }` is adopted too.
 * Fires `pageagent:ready` on the window afterwards.
 *
 * @param {ReturnType<typeof createAutomation>} automation
 * @param {Window} [win=window]
 */
export function installPageAgent(automation, win = window) {
  const early = win.pageAgent;
  const agent = {
    setViewState: (obj) => automation.setViewState(obj),
    updateViewState: (patch) => automation.updateViewState(patch),
    getPageState: () => automation.getPageState(),
    automation,
  };
  if (early && typeof early === 'object') {
    if (early.viewState && typeof early.viewState === 'object') automation.setViewState(early.viewState);
    const queue = Array.isArray(early.q) ? early.q : [];
    for (const call of queue) {
      const [method, ...args] = Array.isArray(call) ? call : [];
      if (!QUEUEABLE.has(method)) {
        console.debug(`[gemini-agent] pageAgent: queued call "${method}" ignored`);
        continue;
      }
      try {
        agent[method](...args);
      } catch (err) {
        console.error(`[gemini-agent] pageAgent.${method} (queued) failed`, err);
      }
    }
    queue.length = 0;
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

/**
 * The ref of an element found without data-ref: a form field's name
 * (a radio's name-value), else its label as camelCase words ("Add to cart" →
 * "addToCart"), else its id, else a noun for its kind ("button", "field").
 * Several elements with the same name at the same place get "-2", "-3"… in
 * document order (scan()).
 */
export function derivedRef(node, kind) {
  const tag = node.localName;
  const isField = tag === 'input' || tag === 'select' || tag === 'textarea';
  const name = isField ? node.getAttribute('name')?.trim() : '';
  if (name) return safeRef(node.type === 'radio' ? `${name}-${node.value}` : name);
  const fromLabel = camelWords(labelOf(node, kind) || node.getAttribute('title') || '');
  if (fromLabel) return fromLabel;
  const id = safeRef(node.id ?? '');
  if (id) return id;
  if (kind === 'text') return 'field';
  if (kind === 'select') return 'dropdown';
  if (kind === 'toggle') return 'checkbox';
  return tag === 'a' || node.getAttribute('role') === 'link' ? 'link' : 'button';
}

/** Keep the discovered refs under DISCOVERED_MAX, giving up links before other controls. */
function allowedDiscoveredRefs(candidates) {
  const order = [];
  const isLink = new Map();
  for (const { node, refName } of candidates) {
    const link = node.localName === 'a' || node.getAttribute('role') === 'link';
    if (!isLink.has(refName)) {
      isLink.set(refName, link);
      order.push(refName);
    } else if (!link) isLink.set(refName, false);
  }
  if (order.length <= DISCOVERED_MAX) return new Set(order);
  const kept = [...order.filter((b) => !isLink.get(b)), ...order.filter((b) => isLink.get(b))].slice(0, DISCOVERED_MAX);
  console.debug(`[gemini-agent] ${order.length - kept.length} controls without data-ref left out (at most ${DISCOVERED_MAX})`);
  return new Set(kept);
}

function safeRef(s) {
  return String(s).replace(/[^A-Za-z0-9_.:-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48);
}

/** "Add to cart" → "addToCart" (at most five words; counts are dropped unless that is all there is). */
function camelWords(text) {
  const all = String(text).normalize('NFKD').replace(/[\u0300-\u036f]/g, '').match(/[A-Za-z0-9]+/g) ?? [];
  const words = all.some((w) => /[A-Za-z]/.test(w)) ? all.filter((w) => /[A-Za-z]/.test(w)) : all;
  return words
    .slice(0, 5)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase()))
    .join('')
    .slice(0, 48);
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

/** The element's DOM interface name, as WebMCP and the .jay-contract elementType say it. */
function domTypeName(node) {
  return Object.getPrototypeOf(node)?.constructor?.name || 'HTMLElement';
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

/** False only where the browser can tell the element is not rendered (display: none, visibility: hidden…). */
function isRendered(node) {
  return typeof node.checkVisibility !== 'function' || node.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
}

function documentOrder(a, b) {
  if (a === b) return 0;
  return a.compareDocumentPosition(b) & 4 /* DOCUMENT_POSITION_FOLLOWING */ ? -1 : 1;
}

function clip(text, max = LABEL_MAX) {
  const s = String(text ?? '').replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function meaningful(text) {
  return /[\p{L}\p{N}]/u.test(String(text ?? ''));
}

function labelOf(node, kind) {
  const aria = node.getAttribute('aria-label') || labelledBy(node);
  if (kind === 'click') {
    const candidates = [
      aria,
      node.textContent,
      node.localName === 'input' ? node.value : '',
      node.getAttribute('title'),
      node.querySelector?.('img[alt]')?.getAttribute('alt'),
    ].map((t) => clip(t));
    // text without a letter or digit ("×", "+") only when nothing says more
    return candidates.find(meaningful) ?? candidates.find(Boolean) ?? '';
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
