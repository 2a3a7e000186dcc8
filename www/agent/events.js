/**
 * The event handlers of the widget: clicks on its `data-ref` elements,
 * keys (Enter sends, Esc closes the panel, Tab stays inside the phone's
 * sheet), typing (the command list) and form submits. Delegated on the
 * widget's root, so any template works; every action is one of the
 * `actions` the widget gives. install() returns the function that removes
 * them all.
 *
 * @module events
 */

/**
 * @typedef {object} EventActions
 * @property {() => void} sendFromInput
 * @property {() => void} toggleExpand
 * @property {() => void} stop
 * @property {() => void} retry
 * @property {() => void} clear
 * @property {(decision: 'approve'|'reject') => void} decide
 * @property {() => string|null} waitingCard  the id of the waiting approval's card
 * @property {() => void} open
 * @property {() => void} close
 * @property {() => boolean} isPanelOpen  launcher mode with the panel open
 * @property {() => boolean} isSheet  the open panel fills the screen (a phone)
 * @property {() => void} render
 * @property {() => void} showCommands
 * @property {{isOpen: boolean, handleKey: Function, close: Function}|null} menu  the command list
 */

/**
 * The click on a `data-ref` element.
 * @param {{root: HTMLElement, inputEl: () => HTMLElement|null}} ui
 * @param {EventActions} a
 */
function clickHandler(ui, a) {
  const focusInput = () => ui.inputEl()?.focus();
  const byRef = {
    sendMessage: (ev) => {
      ev.preventDefault();
      a.sendFromInput();
    },
    toggleExpand: () => a.toggleExpand(),
    stopLoop: () => a.stop(),
    retry: () => a.retry(),
    clearChat: () => {
      a.clear();
      focusInput();
    },
    openChat: () => (a.isPanelOpen() ? a.close() : a.open()),
    closeChat: () => a.close(),
  };
  /* only the waiting approval's own card decides */
  const decideOn = (el, decision) => {
    const card = a.waitingCard();
    if (!card || el.closest('[data-id]')?.getAttribute('data-id') !== card) return;
    a.decide(decision);
    focusInput(); /* the buttons are gone */
  };
  byRef.approveAction = (ev, el) => decideOn(el, 'approve');
  byRef.rejectAction = (ev, el) => decideOn(el, 'reject');
  return (ev) => {
    const el = ev.target?.closest?.('[data-ref]');
    if (!el || !ui.root.contains(el)) return;
    const ref = el.getAttribute('data-ref');
    if (Object.hasOwn(byRef, ref)) byRef[ref](ev, el);
  };
}

/** Tab at either end of the full-screen sheet wraps to the other end. */
function trapTab(ev, doc, ui) {
  const list = ui.focusables();
  if (list.length === 0) return;
  const first = list[0];
  const last = list[list.length - 1];
  if (ev.shiftKey && doc.activeElement === first) {
    ev.preventDefault();
    last.focus();
  } else if (!ev.shiftKey && doc.activeElement === last) {
    ev.preventDefault();
    first.focus();
  }
}

/** Keys: the command list first, then Esc, Tab in the sheet, Enter in the input. */
function keyHandler(doc, ui, a) {
  return (ev) => {
    if (a.menu?.isOpen && ev.target === ui.inputEl() && a.menu.handleKey(ev)) return;
    if (ev.key === 'Escape' && a.isPanelOpen() && !ev.isComposing) {
      ev.preventDefault();
      a.close();
      return;
    }
    /* the full-screen sheet covers the page: Tab stays inside it */
    if (ev.key === 'Tab' && a.isPanelOpen() && a.isSheet() && ui.frame.contains(ev.target)) {
      trapTab(ev, doc, ui);
      return;
    }
    if (ev.key !== 'Enter' || ev.shiftKey || ev.isComposing || ev.keyCode === 229) return;
    const el = ev.target?.closest?.('[data-ref="messageInput"]');
    if (!el || !ui.root.contains(el)) return;
    ev.preventDefault();
    a.sendFromInput();
  };
}

/**
 * Listen on the widget's root.
 * @param {Document} doc
 * @param {{root: HTMLElement, frame: HTMLElement, inputEl: Function, focusables: Function}} ui
 * @param {EventActions} a
 * @param {HTMLElement|null} menuInput  the input the command list belongs to
 * @returns {() => void}  removes every listener
 */
export function installEvents(doc, ui, a, menuInput) {
  const handlers = {
    click: clickHandler(ui, a),
    keydown: keyHandler(doc, ui, a),
    input: (ev) => {
      if (!ev.target?.closest?.('[data-ref="messageInput"]')) return;
      a.render();
      a.showCommands();
    },
    submit: (ev) => {
      ev.preventDefault();
      a.sendFromInput();
    },
    focusout: (ev) => {
      if (ev.target === menuInput) a.menu?.close();
    },
  };
  for (const [type, f] of Object.entries(handlers)) ui.root.addEventListener(type, f);
  return () => {
    for (const [type, f] of Object.entries(handlers)) ui.root.removeEventListener(type, f);
  };
}
