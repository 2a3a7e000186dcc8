/**
 * tools.js — one tool catalog, built from the page's interactions, used by the
 * embedded chat agent and by WebMCP alike (README "Adding the agent to a page").
 *
 * Semantic tools, one per ref:  click-<ref>, fill-<ref>, select-<ref>, toggle-<ref>
 * Generic tools:                trigger-interaction, fill-input
 * WebMCP only:                  get-page-state, list-interactions   (webmcpOnly: true)
 *
 * Every execute(args) validates its arguments against the page as it is NOW,
 * never throws, and answers `{ok: true, pageState}` or `{ok: false, error}`.
 */

import { coordinateKey } from './automation.js';

/** The category of every page tool (server actions have their own). */
export const CATEGORY = 'page-automation';

const GENERIC_NAMES = ['trigger-interaction', 'fill-input', 'get-page-state', 'list-interactions'];
const VERBS = { click: 'click', text: 'fill', select: 'select', toggle: 'toggle' };
const NAME_MAX = 64;
const LISTED_ITEMS_MAX = 25;
const LISTED_OPTIONS_MAX = 30;

/** Trailing words of a ref name that say what kind of element it is. */
const NOUN_SUFFIXES = {
  btn: 'button', button: 'button',
  link: 'link', lnk: 'link',
  input: 'field', field: 'field', box: 'field', textbox: 'field', textarea: 'field', area: 'field',
  select: 'dropdown', dropdown: 'dropdown', picker: 'dropdown',
  checkbox: 'checkbox', check: 'checkbox', cb: 'checkbox', toggle: 'switch', switch: 'switch',
  radio: 'option',
};

/**
 * @typedef {object} Tool
 * @property {string} name
 * @property {string} description
 * @property {{type: 'object', properties: object, required?: string[]}} inputSchema
 * @property {'page-automation'} category
 * @property {(args?: object) => Promise<{ok: true, pageState: object} | {ok: false, error: string} | object>} execute
 * @property {boolean} [webmcpOnly]  left out of the chat agent's declarations
 * @property {{readOnlyHint?: boolean}} [annotations]
 * @property {string} [ref]          semantic tools: the ref they act on
 * @property {'click'|'text'|'select'|'toggle'} [kind]
 * @property {boolean} [repeated]    semantic tools: takes a coordinate
 */

/** What the tools remember per automation, so describeCall can name items that are gone. */
const memory = new WeakMap();
const REMEMBERED_ITEMS_MAX = 500;

function memoryOf(automation) {
  let m = memory.get(automation);
  if (!m) memory.set(automation, (m = { tools: new Map(), items: new Map() }));
  return m;
}

function rememberItems(automation, interactions) {
  const { items } = memoryOf(automation);
  for (const group of interactions) {
    for (const item of group.items) {
      const key = coordinateKey(item.coordinate);
      items.delete(key);
      items.set(key, { ...item, refName: group.refName });
    }
  }
  while (items.size > REMEMBERED_ITEMS_MAX) items.delete(items.keys().next().value);
}

/**
 * Build the tool catalog for the page as it is now. Rebuild it when the page
 * changes (automation.onStateChange); execute() re-checks against the live page.
 *
 * @param {ReturnType<import('./automation.js').createAutomation>} automation
 * @returns {Tool[]}
 */
export function buildTools(automation) {
  const { interactions } = automation.getPageState();
  rememberItems(automation, interactions);
  const used = new Set(GENERIC_NAMES);
  const tools = [];
  for (const group of interactions) {
    const tool = semanticTool(automation, group, used);
    if (tool) tools.push(tool);
  }
  tools.push(...genericTools(automation));
  const { tools: known } = memoryOf(automation);
  for (const t of tools) if (t.ref) known.set(t.name, { ref: t.ref, kind: t.kind, repeated: t.repeated });
  return tools;
}

/**
 * The declarations the server wants (README "The chat protocol", toolDefinitions): WebMCP-only tools left out.
 * @param {Tool[]} tools
 * @returns {{name: string, description: string, inputSchema: object, category: string}[]}
 */
export function toolDefinitions(tools) {
  return tools
    .filter((t) => !t.webmcpOnly)
    .map(({ name, description, inputSchema, category }) => ({
      name,
      description,
      inputSchema: JSON.parse(JSON.stringify(inputSchema)),
      category,
    }));
}

/**
 * A short human line for the chat's progress display, e.g.
 * "Clicked Remove on USB-C Hub" or 'Filled Name with "Desk lamp"'.
 * Works before or after the call ran (items that are gone are remembered).
 *
 * @param {string} name   tool name
 * @param {object|string} [args]
 * @param {ReturnType<import('./automation.js').createAutomation>} automation
 * @returns {string}
 */
export function describeCall(name, args, automation) {
  args = normalizeArgs(args);
  if (name === 'get-page-state') return 'Read the page state';
  if (name === 'list-interactions') return 'Listed the page interactions';

  const generic = name === 'trigger-interaction' || name === 'fill-input';
  let info = null;
  if (!generic) {
    try {
      const tool = buildTools(automation).find((t) => t.name === name);
      if (tool?.ref) info = { ref: tool.ref, kind: tool.kind, repeated: tool.repeated };
    } catch {
      /* fall back to what we remember */
    }
    info ??= memoryOf(automation).tools.get(name) ?? null;
    if (!info) return `Ran ${name}`;
  }

  let key;
  if (generic) key = coordinateKey(args.coordinate);
  else if (info.repeated) key = resolveKey(automation, info.ref, args.coordinate) ?? coordinateKey(args.coordinate);
  else key = info.ref;

  const item = safeGetInteraction(automation, key) ?? memoryOf(automation).items.get(key);
  const ref = info?.ref ?? item?.refName ?? key.split('/').pop();
  const kind = info?.kind ?? (item ? kindOfItem(item) : 'click');
  const label = meaningful(item?.label) ? item.label : humanName(ref);
  const on = item?.itemLabel ? ` on ${item.itemLabel}` : '';

  if (name === 'trigger-interaction') {
    const event = args.event ?? item?.events?.[0] ?? 'click';
    if (event !== 'click') return `Triggered ${event} on ${label}${on}`;
    return `Clicked ${label}${on}`;
  }
  switch (kind) {
    case 'text':
      return `Filled ${label}${on} with ${quote(args.value)}`;
    case 'select': {
      const option = item?.options?.find((o) => o.value === String(args.value));
      return `Selected ${quote(option?.label || args.value)} in ${label}${on}`;
    }
    case 'toggle':
      return `${toBoolean(args.value) === false ? 'Unchecked' : 'Checked'} ${label}${on}`;
    default:
      return `Clicked ${label}${on}`;
  }
}

/**
 * camelCase / snake_case / anything → kebab-case ("addToCartBtn" → "add-to-cart-btn").
 * @param {string} ref
 */
export function kebabCase(ref) {
  return String(ref)
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
}

// ---- semantic tools ------------------------------------------------------------

function semanticTool(automation, group, used) {
  if (!group.items.length) return null;
  const kind = kindOfItem(group.items[0]);
  const items = group.items.filter((i) => kindOfItem(i) === kind);
  const ref = group.refName;
  const repeated = items.length > 1 || items.some((i) => i.coordinate.length > 1);
  const name = uniqueName(`${VERBS[kind]}-${kebabCase(ref) || 'element'}`, used);

  const properties = {};
  const required = [];
  if (repeated) {
    properties.coordinate = {
      type: 'string',
      description: 'Which item: its coordinate ("<itemId>/' + ref + '")',
      enum: items.map((i) => coordinateKey(i.coordinate)),
    };
    required.push('coordinate');
  }
  const options = kind === 'select' ? unionOptions(items) : [];
  if (kind === 'text') {
    properties.value = { type: 'string', description: 'The text to enter; it replaces the current text' };
  } else if (kind === 'select') {
    const values = options.map((o) => o.value).filter((v) => v !== '');
    properties.value = { type: 'string', description: 'The value of the option to choose', ...(values.length ? { enum: values } : {}) };
  } else if (kind === 'toggle') {
    properties.value = { type: 'string', enum: ['true', 'false'], description: '"true" to check it, "false" to uncheck it' };
  }
  if (kind !== 'click') required.push('value');

  let description = group.description || defaultDescription(kind, ref, items[0]);
  if (kind === 'select' && options.length) description = sentence(description) + ' ' + optionsSentence(options);
  if (repeated) description = sentence(description) + ' ' + itemsSentence(items);

  return {
    name,
    description,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) },
    category: CATEGORY,
    ref,
    kind,
    repeated,
    execute: (args) =>
      guarded(automation, async () => {
        args = normalizeArgs(args);
        let key = ref;
        if (repeated) {
          if (args.coordinate === undefined || args.coordinate === null || args.coordinate === '') {
            return fail(`coordinate is required; one of: ${currentKeys(automation, ref).join(', ') || '(no items now)'}`);
          }
          key = resolveKey(automation, ref, args.coordinate);
          if (!key) {
            const now = currentKeys(automation, ref);
            return fail(`Unknown coordinate "${coordinateKey(args.coordinate)}" for ${name}; current items: ${now.join(', ') || '(none)'}`);
          }
        }
        const item = automation.getInteraction(key);
        if (!item) return fail(`"${key}" is not available right now (gone or disabled)`);
        rememberItems(automation, [{ refName: ref, items: [item] }]);
        return act(automation, kind, key, item, args.value);
      }),
  };
}

/** Validate the value for this kind of element, then act. */
async function act(automation, kind, key, item, value) {
  switch (kind) {
    case 'click':
      automation.triggerEvent('click', key);
      break;
    case 'text':
      if (value === undefined || value === null) return fail('value is required: the text to enter');
      if (typeof value === 'object') return fail('value must be a string');
      automation.triggerEvent('input', key, String(value));
      break;
    case 'select': {
      if (value === undefined || value === null) return fail('value is required: the option to choose');
      const allowed = (item.options ?? []).map((o) => o.value);
      if (!allowed.includes(String(value))) {
        return fail(`"${value}" is not an option of ${key}; options: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`);
      }
      automation.triggerEvent('change', key, String(value));
      break;
    }
    case 'toggle': {
      const wanted = toBoolean(value);
      if (wanted === undefined) return fail('value must be "true" or "false"');
      automation.triggerEvent('change', key, wanted);
      break;
    }
    default:
      return fail(`${key} cannot be used`);
  }
  await settle();
  return { ok: true, pageState: automation.getPageState() };
}

function defaultDescription(kind, ref, sample) {
  const { name, noun } = nameAndNoun(ref, kind, sample);
  switch (kind) {
    case 'text':
      return `Fill the ${name} ${noun} with text (replaces what is there).`;
    case 'select':
      return `Choose an option in the ${name} ${noun}.`;
    case 'toggle':
      return `Check or uncheck the ${name} ${noun}.`;
    default:
      return `Click the ${name} ${noun}.`;
  }
}

function itemsSentence(items) {
  const listed = items.slice(0, LISTED_ITEMS_MAX).map((i) => {
    const key = coordinateKey(i.coordinate);
    return i.itemLabel ? `${key} = ${i.itemLabel}` : key;
  });
  const more = items.length > LISTED_ITEMS_MAX ? `, and ${items.length - LISTED_ITEMS_MAX} more` : '';
  return `Acts on one item; pass its coordinate. Items: ${listed.join(', ')}${more}.`;
}

function optionsSentence(options) {
  const listed = options
    .filter((o) => o.value !== '')
    .slice(0, LISTED_OPTIONS_MAX)
    .map((o) => (o.label && o.label !== o.value ? `${o.value} = ${o.label}` : o.value));
  return listed.length ? `Options: ${listed.join(', ')}.` : '';
}

function unionOptions(items) {
  const seen = new Map();
  for (const item of items) for (const o of item.options ?? []) if (!seen.has(o.value)) seen.set(o.value, o);
  return [...seen.values()];
}

// ---- generic tools -------------------------------------------------------------

function genericTools(automation) {
  const coordinateProp = {
    type: 'string',
    description: 'The element\'s coordinate: "<ref>" for a single element, "<itemId>/<ref>" for an element of a repeated item',
  };
  return [
    {
      name: 'trigger-interaction',
      description:
        'Trigger an event on any interactive element of the page, found by its coordinate. ' +
        'event defaults to the element\'s first event (click for buttons and links).',
      inputSchema: {
        type: 'object',
        properties: {
          coordinate: coordinateProp,
          event: { type: 'string', enum: ['click', 'input', 'change'], description: 'The event to trigger' },
        },
        required: ['coordinate'],
      },
      category: CATEGORY,
      execute: (args) =>
        guarded(automation, async () => {
          args = normalizeArgs(args);
          const found = findItem(automation, args.coordinate);
          if (found.error) return fail(found.error);
          const { key, item } = found;
          const event = args.event ?? item.events[0];
          if (!item.events.includes(event)) {
            return fail(`${key} (${item.element}) does not take "${event}"; it takes ${item.events.join(', ')}`);
          }
          automation.triggerEvent(event, key);
          await settle();
          return { ok: true, pageState: automation.getPageState() };
        }),
    },
    {
      name: 'fill-input',
      description:
        'Set the value of a text field, dropdown or checkbox, found by its coordinate, the way a user would ' +
        '(fires input and change). Dropdowns take an option value; checkboxes take "true" or "false".',
      inputSchema: {
        type: 'object',
        properties: {
          coordinate: coordinateProp,
          value: { type: 'string', description: 'The text, option value, or "true"/"false"' },
        },
        required: ['coordinate', 'value'],
      },
      category: CATEGORY,
      execute: (args) =>
        guarded(automation, async () => {
          args = normalizeArgs(args);
          const found = findItem(automation, args.coordinate);
          if (found.error) return fail(found.error);
          const { key, item } = found;
          const kind = kindOfItem(item);
          if (kind === 'click') return fail(`${key} is a ${item.element}, not a field; use trigger-interaction to click it`);
          return act(automation, kind, key, item, args.value);
        }),
    },
    {
      name: 'get-page-state',
      description:
        'Get the current page state: the data the page shows (viewState) and the available interactions. ' +
        'The first parts of a repeated element\'s coordinate are item ids, the same ids as the items in viewState arrays.',
      inputSchema: { type: 'object', properties: {} },
      category: CATEGORY,
      webmcpOnly: true,
      annotations: { readOnlyHint: true },
      execute: () => guarded(automation, async () => ({ ok: true, pageState: automation.getPageState() })),
    },
    {
      name: 'list-interactions',
      description: 'List the interactive elements of the page, grouped by ref, with their coordinates, events and labels.',
      inputSchema: { type: 'object', properties: {} },
      category: CATEGORY,
      webmcpOnly: true,
      annotations: { readOnlyHint: true },
      execute: () => guarded(automation, async () => ({ ok: true, interactions: automation.getPageState().interactions })),
    },
  ];
}

function findItem(automation, coordinate) {
  if (coordinate === undefined || coordinate === null || coordinate === '') return { error: 'coordinate is required' };
  const key = coordinateKey(coordinate);
  const item = safeGetInteraction(automation, key);
  if (item) return { key, item };
  const known = automation
    .getPageState()
    .interactions.flatMap((g) => g.items.map((i) => coordinateKey(i.coordinate)));
  const shown = known.slice(0, 30).join(', ') + (known.length > 30 ? ', …' : '');
  return { error: `Unknown coordinate "${key}"; current coordinates: ${shown || '(none)'}` };
}

// ---- helpers -------------------------------------------------------------------

/** Run a tool body; any exception becomes {ok: false, error}. */
async function guarded(automation, body) {
  try {
    return await body();
  } catch (err) {
    return fail(err?.message ?? String(err));
  }
}

function fail(error) {
  return { ok: false, error };
}

/** Let the page react: a microtask, then an animation frame (or a timer where there is none). */
function settle() {
  return new Promise((resolve) => {
    queueMicrotask(() => {
      let done = false;
      const finish = () => {
        if (!done) {
          done = true;
          resolve();
        }
      };
      if (typeof globalThis.requestAnimationFrame === 'function') {
        globalThis.requestAnimationFrame(finish);
        setTimeout(finish, 100); // background tabs get no frames
      } else {
        setTimeout(finish, 0);
      }
    });
  });
}

function normalizeArgs(args) {
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return {};
    }
  }
  return args && typeof args === 'object' ? args : {};
}

/** The coordinate key of a current item of `ref`, accepting "itemId" for "itemId/ref". */
function resolveKey(automation, ref, coordinate) {
  if (coordinate === undefined || coordinate === null || typeof coordinate === 'object' && !Array.isArray(coordinate)) return null;
  const key = coordinateKey(coordinate);
  for (const candidate of [key, `${key}/${ref}`]) {
    if (safeGetInteraction(automation, candidate)?.refName === ref) return candidate;
  }
  return null;
}

function currentKeys(automation, ref) {
  const group = automation.getPageState().interactions.find((g) => g.refName === ref);
  return group ? group.items.map((i) => coordinateKey(i.coordinate)) : [];
}

function safeGetInteraction(automation, key) {
  try {
    return automation.getInteraction(key);
  } catch {
    return undefined;
  }
}

/** click | text | select | toggle, from a page-state item. */
function kindOfItem(item) {
  if (item.element.startsWith('select')) return 'select';
  if (/^input\[type=(checkbox|radio)\]$/.test(item.element)) return 'toggle';
  if (item.events.includes('input')) return 'text';
  return 'click';
}

function uniqueName(base, used) {
  let name = base.slice(0, NAME_MAX).replace(/-+$/, '');
  for (let n = 2; used.has(name); n++) {
    const suffix = `-${n}`;
    name = base.slice(0, NAME_MAX - suffix.length).replace(/-+$/, '') + suffix;
  }
  used.add(name);
  return name;
}

/** "addToCartBtn" → {name: "Add To Cart", noun: "button"}. */
function nameAndNoun(ref, kind, sample) {
  const words = kebabCase(ref).split('-').filter(Boolean);
  let noun = words.length > 1 ? NOUN_SUFFIXES[words.at(-1)] : undefined;
  if (noun) words.pop();
  noun ??= defaultNoun(kind, sample);
  const name = words.map((w) => w[0].toUpperCase() + w.slice(1)).join(' ') || ref;
  return { name, noun };
}

function defaultNoun(kind, sample) {
  if (kind === 'text') return 'field';
  if (kind === 'select') return 'dropdown';
  if (kind === 'toggle') return sample?.element === 'input[type=radio]' ? 'option' : 'checkbox';
  if (sample?.element === 'a') return 'link';
  return 'button';
}

/** The ref as words without its kind suffix: "removeBtn" → "Remove". */
function humanName(ref) {
  return nameAndNoun(String(ref ?? ''), 'click').name;
}

function meaningful(label) {
  return typeof label === 'string' && /[\p{L}\p{N}]/u.test(label);
}

function sentence(text) {
  const s = String(text).trim();
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

function quote(value) {
  const s = String(value ?? '');
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 59)}…` : s);
}

function toBoolean(value) {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}
