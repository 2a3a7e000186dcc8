/**
 * Template binding (the view's only DOM-writing engine): a template's
 * elements name contract tags (data-bind, data-if, data-foreach,
 * data-checked, data-format; chat.js's header lists them) and `update`
 * writes a state object into them, keeping the nodes of repeated items.
 *
 * @module template
 */
import { renderMarkdown } from './markdown.js';

/** @param {unknown} v */
function truthy(v) {
  return Array.isArray(v) ? v.length > 0 : Boolean(v);
}

/**
 * Compile a data-if expression into a predicate over a lookup function.
 * @param {string} expr
 * @returns {(look: (key: string) => unknown) => boolean}
 */
function parseCondition(expr) {
  const e = expr.trim();
  const m = /^([\w.-]+)\s*(==|!=)\s*(.*)$/.exec(e);
  if (m) {
    const [, key, op, raw] = m;
    const want = raw.trim().replace(/^(['"])(.*)\1$/, '$2');
    return (look) => (String(look(key) ?? '') === want) === (op === '==');
  }
  if (e.startsWith('!')) {
    const inner = parseCondition(e.slice(1));
    return (look) => !inner(look);
  }
  return (look) => truthy(look(e));
}

/**
 * @typedef {object} Scope  bindings found in one subtree (the root, or one
 *   repeated item), not descending into nested data-foreach containers
 * @property {{el: HTMLElement, test: Function}[]} ifs
 * @property {{el: HTMLElement, key: string, format: string, last?: string}[]} binds
 * @property {{el: HTMLElement, key: string}[]} checks  data-checked: aria-checked from a tag
 * @property {{el: HTMLElement, key: string, template: Element, entries: Map<string, {node: Element, scope: Scope}>}[]} lists
 */

/**
 * @param {ParentNode} node   the subtree root
 * @param {boolean} self      also read the root element's own attributes
 * @returns {Scope}
 */
function compileScope(node, self) {
  /** @type {Scope} */
  const scope = { ifs: [], binds: [], lists: [], checks: [] };
  const visit = (el) => {
    if (el.hasAttribute('data-if'))
      scope.ifs.push({ el, test: parseCondition(el.getAttribute('data-if')) });
    if (el.hasAttribute('data-foreach')) {
      const template = el.firstElementChild;
      el.replaceChildren();
      if (template)
        scope.lists.push({ el, key: el.getAttribute('data-foreach').trim(), template, entries: new Map() });
      return; /* the item template is compiled per copy */
    }
    if (el.hasAttribute('data-checked')) scope.checks.push({ el, key: el.getAttribute('data-checked').trim() });
    if (el.hasAttribute('data-bind')) {
      scope.binds.push({
        el,
        key: el.getAttribute('data-bind').trim(),
        format: (el.getAttribute('data-format') || 'text').trim(),
      });
    }
    for (const child of [...el.children]) visit(child);
  };
  if (self) visit(/** @type {Element} */ (node));
  else for (const child of [...node.children]) visit(child);
  return scope;
}

/** @param {string} iso */
function formatTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/**
 * @param {Scope} scope
 * @param {(key: string) => unknown} look
 * @param {{doc: Document, markdown: typeof renderMarkdown}} ctx
 */
function updateScope(scope, look, ctx) {
  for (const b of scope.ifs) {
    const show = b.test(look);
    if (b.el.hidden === show) b.el.hidden = !show;
  }
  for (const b of scope.binds) {
    const v = look(b.key);
    const text = v == null ? '' : String(v);
    if (b.format === 'markdown') {
      if (b.last !== text) {
        b.last = text;
        b.el.replaceChildren(ctx.markdown(text, ctx.doc));
      }
    } else if (b.el.localName === 'time') {
      if (b.last !== text) {
        b.last = text;
        b.el.setAttribute('datetime', text);
        b.el.textContent = formatTime(text);
      }
    } else if (b.el.textContent !== text) {
      b.el.textContent = text;
    }
  }
  for (const c of scope.checks) {
    const v = String(look(c.key) ?? 'false');
    if (c.el.getAttribute('aria-checked') !== v) c.el.setAttribute('aria-checked', v);
  }
  for (const list of scope.lists) updateList(list, look, ctx);
}

/** Keyed update of one data-foreach container: keeps nodes, moves, removes. */
function updateList(list, look, ctx) {
  const value = look(list.key);
  const items = Array.isArray(value) ? value : [];
  const seen = new Set();
  let cursor = list.el.firstChild;
  items.forEach((item, i) => {
    const id = String(item?.id ?? i);
    if (seen.has(id)) return;
    seen.add(id);
    let entry = list.entries.get(id);
    if (!entry) {
      const node = list.template.cloneNode(true);
      node.setAttribute('data-id', id);
      entry = { node, scope: compileScope(node, true) };
      list.entries.set(id, entry);
    }
    if (item && typeof item.role === 'string' && entry.node.getAttribute('data-role') !== item.role)
      entry.node.setAttribute('data-role', item.role);
    if (item && typeof item.status === 'string') {
      if (entry.node.getAttribute('data-status') !== item.status) entry.node.setAttribute('data-status', item.status);
    } else if (entry.node.hasAttribute('data-status')) {
      entry.node.removeAttribute('data-status');
    }
    if (entry.node === cursor) cursor = cursor.nextSibling;
    else list.el.insertBefore(entry.node, cursor);
    const itemLook = (key) => (item && typeof item === 'object' && key in item ? item[key] : look(key));
    updateScope(entry.scope, itemLook, ctx);
  });
  for (const [id, entry] of list.entries) {
    if (!seen.has(id)) {
      entry.node.remove();
      list.entries.delete(id);
    }
  }
}

/**
 * Bind a template's content to view-state objects. Exported for tests and
 * for pages that want the binding without the chat behaviour.
 *
 * @param {Element} root   an element holding the (already cloned) template content
 * @param {{markdown?: typeof renderMarkdown}} [options]
 * @returns {{update(state: object): void, lists(key: string): Element[]}}
 *   `update` applies a state object; `lists(key)` returns the data-foreach
 *   containers bound to `key` (the widget scrolls them).
 */
export function bindTemplate(root, { markdown = renderMarkdown } = {}) {
  const scope = compileScope(root, false);
  const ctx = { doc: root.ownerDocument, markdown };
  return {
    update(state) {
      updateScope(scope, (key) => state[key], ctx);
    },
    lists(key) {
      return scope.lists.filter((l) => l.key === key).map((l) => l.el);
    },
  };
}
