/**
 * tools.js — one tool catalog, built from the page's interactions, used by the
 * embedded chat agent and by WebMCP alike (docs/widget.md "Adding the agent to a page").
 *
 * Semantic tools, one per ref:  click-<ref>, fill-<ref>, select-<ref>, toggle-<ref>
 * Generic tools:                trigger-interaction, fill-input
 * WebMCP only:                  get-page-state, list-interactions   (webmcpOnly: true)
 *
 * The declarations stay the same while the page changes, so that every
 * request of a conversation starts with the same bytes (Gemini's implicit
 * cache) and WebMCP clients are not told of changes that are none:
 *  - a repeated element's tool takes `coordinate` as a plain string; which
 *    items exist is data, in the page state's `lists` (automation.js), never
 *    an enum or a list in the description;
 *  - a tool keeps its name and its place in the catalog for the life of the
 *    page (first seen, first listed);
 *  - a repeated element's tool stays declared, unchanged, while its list is
 *    empty or all its items' elements are disabled (the page state shows no
 *    item to use; a call answers with a clear error). A single element's
 *    tool comes and goes with the element.
 *
 * WebMCP has no such cache and registers a tool again when its shape changes:
 * its copy of the catalog (webmcpTools) gives a repeated element's tool the
 * enum of its usable coordinates.
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
const LISTED_COORDINATES_MAX = 30;
const LISTED_OPTIONS_MAX = 30;
/** Past this many usable items WebMCP's coordinate enum is left off (a cut enum would refuse real items). */
const ENUM_COORDINATES_MAX = 200;
const REGISTRY_MAX = 300;

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
 *
 * @typedef {object} RegistryEntry   what the catalog keeps per semantic tool for the life of the page
 * @property {string} key            "<kind>:<ref>"
 * @property {string} ref
 * @property {'click'|'text'|'select'|'toggle'} kind
 * @property {string} name           assigned once, never changes
 * @property {boolean} repeated      seen inside a data-foreach item (sticky)
 * @property {string[]} lists        the lists its items were seen in (sticky)
 * @property {{description: string, inputSchema: object}|null} shape  the last declaration built
 */

/** What the tools remember per automation: the registry, and items that are gone (describeCall). */
const memory = new WeakMap();
const REMEMBERED_ITEMS_MAX = 500;

function memoryOf(automation) {
  let m = memory.get(automation);
  if (!m) memory.set(automation, (m = { registry: new Map(), names: new Set(GENERIC_NAMES), items: new Map() }));
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

/** The interactions of an automation (getPageState().interactions for older automation objects). */
function readInteractions(automation) {
  return automation.getInteractions?.() ?? automation.getPageState().interactions ?? [];
}

/** The registry entry for (ref, kind), created (and named) the first time it is seen. */
function registryEntry(mem, ref, kind) {
  const key = `${kind}:${ref}`;
  let entry = mem.registry.get(key);
  if (!entry) {
    const name = uniqueName(`${VERBS[kind]}-${kebabCase(ref) || 'element'}`, mem.names);
    entry = { key, ref, kind, name, repeated: false, lists: [], shape: null };
    mem.registry.set(key, entry);
  }
  return entry;
}

/** Forget the oldest entries that are not on the page, past REGISTRY_MAX. */
function trimRegistry(mem, present) {
  for (const [key, entry] of mem.registry) {
    if (mem.registry.size <= REGISTRY_MAX) break;
    if (present.has(key)) continue;
    mem.registry.delete(key);
    mem.names.delete(entry.name);
  }
}

/**
 * Build the tool catalog for the page as it is now. Rebuild it when the page
 * changes (automation.onStateChange); execute() re-checks against the live page.
 *
 * @param {ReturnType<import('./automation.js').createAutomation>} automation
 * @returns {Tool[]}
 */
export function buildTools(automation) {
  const interactions = readInteractions(automation);
  rememberItems(automation, interactions);
  const mem = memoryOf(automation);
  const present = new Map();
  for (const group of interactions) {
    if (!group.items.length) continue;
    const kind = kindOfItem(group.items[0]);
    const entry = registryEntry(mem, group.refName, kind);
    present.set(entry.key, { group, items: group.items.filter((i) => kindOfItem(i) === kind) });
  }
  const tools = [];
  for (const entry of mem.registry.values()) {
    const now = present.get(entry.key);
    if (now) tools.push(semanticTool(automation, entry, now.group, now.items));
    else if (entry.repeated && entry.shape) tools.push(toolOf(automation, entry));
  }
  tools.push(...genericTools(automation));
  trimRegistry(mem, present);
  return tools;
}

/**
 * The declarations the server wants (docs/chat-protocol.md, toolDefinitions): WebMCP-only tools left out.
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
 * The catalog as WebMCP registers it (webmcp.js). The chat's declarations keep
 * `coordinate` a plain string for Gemini's cache; WebMCP has no cache to keep,
 * so here a repeated element's tool takes the enum of the coordinates usable
 * now ("<id>/<ref>", disabled items left out). A repeated tool with
 * no usable item is left out: an empty enum admits no call. Past
 * ENUM_COORDINATES_MAX items the enum is left off and the page state names them.
 *
 * @param {Tool[]} tools  buildTools(automation)
 * @param {ReturnType<import('./automation.js').createAutomation>} automation
 * @returns {Tool[]}  the same tools, repeated ones with a fresh inputSchema
 */
export function webmcpTools(tools, automation) {
  const interactions = readInteractions(automation);
  const out = [];
  for (const tool of tools) {
    if (!tool.repeated || !tool.inputSchema?.properties?.coordinate) {
      out.push(tool);
      continue;
    }
    const keys = usableKeys(interactions, tool.ref, tool.kind);
    if (!keys.length) continue;
    if (keys.length > ENUM_COORDINATES_MAX) {
      out.push(tool);
      continue;
    }
    const inputSchema = JSON.parse(JSON.stringify(tool.inputSchema));
    inputSchema.properties.coordinate.enum = keys;
    out.push({ ...tool, inputSchema });
  }
  return out;
}

/** The coordinates of the enabled items of `ref` that a `kind` tool acts on, in page order. */
function usableKeys(interactions, ref, kind) {
  const group = interactions.find((g) => g.refName === ref);
  if (!group) return [];
  return group.items.filter((i) => kindOfItem(i) === kind).map((i) => coordinateKey(i.coordinate));
}

/**
 * The interactions as WebMCP gives them (list-interactions, state://interactions,
 * page-guide): coordinates as "/"-joined strings, the element's DOM type name,
 * and for an <input> its type ("checkbox", "radio", "number", "text"…), which
 * the DOM type name alone does not tell apart.
 *
 * @param {import('./automation.js').Interaction[]} interactions
 * @returns {{refName: string, description?: string, items: {coordinate: string, elementType: string,
 *   inputType?: string, events: string[], label?: string, itemLabel?: string, value?: string,
 *   checked?: boolean, options?: {value: string, label: string}[]}[]}[]}
 */
export function serializeInteractions(interactions) {
  return interactions.map(({ refName, description, items }) => ({
    refName,
    ...(description ? { description } : {}),
    items: items.map((i) => ({
      coordinate: coordinateKey(i.coordinate),
      elementType: i.elementType ?? 'HTMLElement',
      ...inputTypeOf(i),
      events: [...i.events],
      ...(i.label ? { label: i.label } : {}),
      ...(i.itemLabel ? { itemLabel: i.itemLabel } : {}),
      ...('value' in i ? { value: i.value } : {}),
      ...('checked' in i ? { checked: i.checked } : {}),
      ...(i.options ? { options: i.options.map((o) => ({ ...o })) } : {}),
    })),
  }));
}

/** {inputType} for an <input> item (the scanner's element is "input[type=<type>]"), else {}. */
function inputTypeOf(item) {
  const type = /^input\[type=([^\]]+)\]$/.exec(item.element ?? '')?.[1];
  return type ? { inputType: type } : {};
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
      buildTools(automation);
    } catch {
      /* fall back to what we remember */
    }
    info = [...memoryOf(automation).registry.values()].find((e) => e.name === name) ?? null;
    if (!info) return `Ran ${name}`;
  }

  let key;
  if (generic) key = coordinateKey(args.coordinate);
  else if (info.repeated) key = resolveKey(automation, info.ref, args.coordinate) ?? fullKey(info.ref, args.coordinate);
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

/** The tool of a registry entry whose elements are on the page now; its shape is remembered. */
function semanticTool(automation, entry, group, items) {
  const { ref, kind } = entry;
  if (items.some((i) => i.coordinate.length > 1)) entry.repeated = true;
  for (const i of items) if (i.list !== undefined && !entry.lists.includes(i.list)) entry.lists.push(i.list);

  const properties = {};
  const required = [];
  if (entry.repeated) {
    properties.coordinate = {
      type: 'string',
      description: `"<id>/${ref}" for an item of the page state's ${listsPhrase(entry.lists)} with "${ref}" in its refs`,
    };
    required.push('coordinate');
  }
  const options = kind === 'select' ? unionOptions(items) : [];
  if (kind === 'text') {
    properties.value = { type: 'string', description: 'The text to enter (replaces the current text)' };
  } else if (kind === 'select') {
    const values = options.map((o) => o.value).filter((v) => v !== '');
    properties.value = { type: 'string', description: 'The value of the option to choose', ...(values.length ? { enum: values } : {}) };
  } else if (kind === 'toggle') {
    properties.value = { type: 'string', enum: ['true', 'false'], description: '"true" to check it, "false" to uncheck it' };
  }
  if (kind !== 'click') required.push('value');

  let description = group.description || defaultDescription(kind, ref, items[0]);
  const label = commonLabel(items);
  if (label && !description.toLowerCase().includes(label.toLowerCase())) {
    description = `${sentence(description)} Label: ${JSON.stringify(label)}.`;
  }
  if (kind === 'select' && options.length) description = `${sentence(description)} ${optionsSentence(options)}`.trim();

  entry.shape = { description, inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) } };
  return toolOf(automation, entry);
}

/** A tool from an entry's (current or remembered) shape, with a fresh execute. */
function toolOf(automation, entry) {
  const { name, ref, kind, repeated, lists } = entry;
  return {
    name,
    description: entry.shape.description,
    inputSchema: JSON.parse(JSON.stringify(entry.shape.inputSchema)),
    category: CATEGORY,
    ref,
    kind,
    repeated,
    execute: (args) =>
      guarded(automation, async () => {
        args = normalizeArgs(args);
        let key = ref;
        if (repeated) {
          const found = findItemOf(automation, ref, name, lists, args.coordinate);
          if (found.error) return fail(found.error);
          key = found.key;
        }
        const item = automation.getInteraction(key);
        if (!item) {
          return fail(safeIsDisabled(automation, key) ? `"${key}" is disabled right now` : `"${key}" is not on the page right now`);
        }
        rememberItems(automation, [{ refName: ref, items: [item] }]);
        return act(automation, kind, key, item, args.value);
      }),
  };
}

/**
 * The coordinate of a current, usable item of `ref`, or an error that names
 * the valid coordinates: missing, unknown, disabled or of another ref.
 */
function findItemOf(automation, ref, name, lists, coordinate) {
  const valid = () => {
    const now = currentKeys(automation, ref);
    if (!now.length) return `none: no item in the page state's ${listsPhrase(lists)} has a usable ${ref} right now`;
    const shown = now.slice(0, LISTED_COORDINATES_MAX).join(', ');
    return now.length > LISTED_COORDINATES_MAX ? `${shown}, … (${now.length} in all)` : shown;
  };
  if (coordinate === undefined || coordinate === null || coordinate === '') {
    return { error: `coordinate is required ("<id>/${ref}"); valid coordinates now: ${valid()}` };
  }
  if (typeof coordinate === 'object' && !Array.isArray(coordinate)) {
    return { error: `coordinate must be a string like "<id>/${ref}"; valid coordinates now: ${valid()}` };
  }
  const key = resolveKey(automation, ref, coordinate);
  if (key) return { key };
  const given = coordinateKey(coordinate);
  const full = fullKey(ref, coordinate);
  if (safeIsDisabled(automation, full)) {
    return { error: `"${full}" is disabled right now; valid coordinates for ${name} now: ${valid()}` };
  }
  return { error: `Unknown coordinate "${given}" for ${name}; valid coordinates now: ${valid()}` };
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

/** The label every element of the ref shares ('' when they differ: the page state gives them per item). */
function commonLabel(items) {
  const labels = new Set(items.map((i) => i.label ?? ''));
  return labels.size === 1 ? [...labels][0] : '';
}

/** "lists.items", "lists.items or lists.results", or "lists" when none is known. */
function listsPhrase(lists) {
  if (!lists?.length) return 'lists';
  return lists.map((l) => (/^[A-Za-z_$][\w$]*$/.test(l) ? `lists.${l}` : `lists[${JSON.stringify(l)}]`)).join(' or ');
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
    description:
      '"<ref>", or "<id>/<ref>" for an item of the page state\'s lists',
  };
  return [
    {
      name: 'trigger-interaction',
      description:
        'Trigger an event on an element found by its coordinate (by default its first event: click for buttons).',
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
        'Set a field found by its coordinate, as a user would: text, an option value, or "true"/"false" for a checkbox.',
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
        'Get the current page state: the data the page shows (viewState), the values of its fields (by coordinate) ' +
        'and the items of its repeated lists (lists: id, label and the refs usable on each item; an element of an ' +
        'item has the coordinate "<id>/<ref>"). Item ids are the same ids as in viewState arrays.',
      inputSchema: { type: 'object', properties: {} },
      category: CATEGORY,
      webmcpOnly: true,
      annotations: { readOnlyHint: true },
      execute: () => guarded(automation, async () => ({ ok: true, pageState: automation.getPageState() })),
    },
    {
      name: 'list-interactions',
      description:
        'List the interactive elements of the page, grouped by ref, with their coordinates ("<ref>" or ' +
        '"<id>/<ref>"), DOM element types (and input types), events, labels and current values.',
      inputSchema: { type: 'object', properties: {} },
      category: CATEGORY,
      webmcpOnly: true,
      annotations: { readOnlyHint: true },
      execute: () => guarded(automation, async () => ({ ok: true, interactions: serializeInteractions(readInteractions(automation)) })),
    },
  ];
}

function findItem(automation, coordinate) {
  if (coordinate === undefined || coordinate === null || coordinate === '') return { error: 'coordinate is required' };
  const key = coordinateKey(coordinate);
  const item = safeGetInteraction(automation, key);
  if (item) return { key, item };
  if (safeIsDisabled(automation, key)) return { error: `"${key}" is disabled right now` };
  const known = readInteractions(automation).flatMap((g) => g.items.map((i) => coordinateKey(i.coordinate)));
  const shown = known.slice(0, LISTED_COORDINATES_MAX).join(', ') + (known.length > LISTED_COORDINATES_MAX ? ', …' : '');
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
  if (coordinate === undefined || coordinate === null || (typeof coordinate === 'object' && !Array.isArray(coordinate))) return null;
  const key = coordinateKey(coordinate);
  for (const candidate of [key, `${key}/${ref}`]) {
    if (safeGetInteraction(automation, candidate)?.refName === ref) return candidate;
  }
  return null;
}

/** "item-2" → "item-2/removeBtn"; a coordinate that already ends with the ref stays. */
function fullKey(ref, coordinate) {
  const key = coordinateKey(coordinate);
  return key === ref || key.endsWith(`/${ref}`) ? key : `${key}/${ref}`;
}

function currentKeys(automation, ref) {
  const group = readInteractions(automation).find((g) => g.refName === ref);
  return group ? group.items.map((i) => coordinateKey(i.coordinate)) : [];
}

function safeGetInteraction(automation, key) {
  try {
    return automation.getInteraction(key);
  } catch {
    return undefined;
  }
}

function safeIsDisabled(automation, key) {
  try {
    return automation.isDisabled?.(key) === true;
  } catch {
    return false;
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
