/**
 * What a page action changed, found by watching the page's DOM while the
 * action runs (a MutationObserver), and marked for a moment so the visitor
 * sees it: the attribute `data-gemini-changed` that chat.css outlines (a
 * short pulse; a still outline under prefers-reduced-motion). Watching works
 * for any page, whatever its framework: the tool only clicks or fills, and
 * the page itself re-renders what changed.
 *
 * DOM only; no state of the chat.
 *
 * @module changes
 */

/** The attribute chat.css outlines. */
export const CHANGED_ATTR = 'data-gemini-changed';
/** How long an element stays marked (ms). */
export const MARK_MS = 2000;
/** At most this many elements are marked for one action. */
const MAX_MARKED = 6;

/** @param {NodeList} nodes */
function onlyText(nodes) {
  return [...nodes].every((n) => n.nodeType === 3);
}

/**
 * Whether a mutation left things as they were: a page that re-renders every
 * row writes the same text and attributes again, and those rows did not change.
 * @param {MutationRecord} m
 */
function sameAsBefore(m) {
  if (m.type === 'attributes') return m.target.getAttribute(m.attributeName) === m.oldValue;
  if (m.type === 'characterData') return m.target.data === m.oldValue;
  if (!onlyText(m.addedNodes) || !onlyText(m.removedNodes)) return false;
  return [...m.removedNodes].map((n) => n.data).join('') === m.target.textContent;
}

/**
 * The element a mutation changed: the element whose attribute or children
 * changed, or a changed text's parent; null when nothing really changed.
 * @param {MutationRecord} m
 */
function changedElement(m) {
  if (m.type === 'attributes' && m.attributeName === CHANGED_ATTR) return null;
  if (sameAsBefore(m)) return null;
  const node = m.type === 'characterData' ? m.target.parentNode : m.target;
  return node && node.nodeType === 1 ? /** @type {Element} */ (node) : null;
}

/**
 * The elements to mark from a list: still in the page, not the page's
 * body or root, not inside `ignore` (the widget), and the innermost ones
 * only (an element that holds another changed one is left out).
 * @param {Element[]} found
 * @param {Element|null} ignore
 */
export function pickChanged(found, ignore) {
  const doc = found[0]?.ownerDocument;
  const ok = [...new Set(found)].filter(
    (el) => el.isConnected && el !== doc?.body && el !== doc?.documentElement && !(ignore && ignore.contains(el)),
  );
  return ok.filter((el) => !ok.some((o) => o !== el && el.contains(o))).slice(0, MAX_MARKED);
}

/**
 * Start watching `doc` for changes outside `ignore`; `stop()` ends it and
 * returns the changed elements (pickChanged). Without MutationObserver,
 * nothing is found.
 * @param {Document} doc
 * @param {Element|null} ignore
 * @returns {{stop(): Element[]}}
 */
export function watchChanges(doc, ignore) {
  const Observer = doc.defaultView?.MutationObserver;
  if (typeof Observer !== 'function' || !doc.body) return { stop: () => [] };
  const found = [];
  const keep = (list) => {
    for (const m of list) {
      const el = changedElement(m);
      if (el) found.push(el);
    }
  };
  const observer = new Observer(keep);
  observer.observe(doc.body, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeOldValue: true,
    characterData: true,
    characterDataOldValue: true,
  });
  return {
    stop() {
      keep(observer.takeRecords());
      observer.disconnect();
      return pickChanged(found, ignore);
    },
  };
}

/**
 * Mark `elements` for `ms` (chat.css draws the mark); a mark already there
 * restarts. Returns a function that takes the marks away at once.
 * @param {Element[]} elements
 * @param {{ms?: number, setTimeout?: typeof setTimeout}} [options]
 */
export function markChanged(elements, { ms = MARK_MS, setTimeout: later = setTimeout } = {}) {
  for (const el of elements) {
    el.removeAttribute(CHANGED_ATTR);
    void (/** @type {HTMLElement} */ (el).offsetWidth); /* restart the pulse */
    el.setAttribute(CHANGED_ATTR, '');
  }
  const clear = () => {
    for (const el of elements) el.removeAttribute(CHANGED_ATTR);
  };
  later(clear, ms);
  return clear;
}
