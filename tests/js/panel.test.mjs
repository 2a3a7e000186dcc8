/**
 * panel.js on its own (a jsdom page with a stub matchMedia): launcher
 * mode, following the window's width, open/close with the focus, and the
 * phone's sheet peeking at the page.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createPanel } from '../../www/agent/panel.js';
import { createState } from '../../www/agent/state.js';

function setup(setting, { narrow = false, sheet = false } = {}) {
  const dom = new JSDOM('<!doctype html><body><div id="frame"><textarea></textarea></div><button id="launcher">L</button></body>');
  const doc = dom.window.document;
  const queries = [];
  const win = {
    matchMedia: (q) => {
      const m = { q, matches: q.includes('599.98') ? sheet : narrow, listeners: [], addEventListener: (t, f) => m.listeners.push(f), removeEventListener: (t, f) => m.listeners.splice(m.listeners.indexOf(f), 1) };
      queries.push(m);
      return m;
    },
  };
  const w = { s: createState(null, false), launcherMode: false, destroyed: false };
  let renders = 0;
  const ui = { frame: doc.getElementById('frame'), launcher: doc.getElementById('launcher'), inputEl: () => doc.querySelector('textarea') };
  const panel = createPanel({ w, win, doc, ui, setting, launcherBelow: 860, render: () => renders++, persist: () => {} });
  return { doc, w, panel, queries, renders: () => renders };
}

describe('the panel', () => {
  test('always / never / auto by the window\'s width, followed as it changes', () => {
    assert.equal(setup('always').w.launcherMode, true);
    assert.equal(setup('never', { narrow: true }).w.launcherMode, false);
    const auto = setup('auto', { narrow: true });
    assert.equal(auto.w.launcherMode, true);
    const width = auto.queries.find((m) => m.q.includes('859.98'));
    width.matches = false;
    width.listeners.forEach((f) => f());
    assert.equal(auto.w.launcherMode, false);
    assert.equal(auto.renders(), 1);
    auto.panel.destroy();
    assert.equal(width.listeners.length, 0);
  });

  test('open puts the cursor in the input, close gives the focus back to the launcher', () => {
    const { doc, w, panel } = setup('always');
    w.s.unread = true;
    panel.open();
    assert.equal(w.s.isOpen, true);
    assert.equal(w.s.unread, false);
    assert.equal(doc.activeElement, doc.querySelector('textarea'));
    assert.equal(panel.isPanelOpen(), true);
    panel.close();
    assert.equal(w.s.isOpen, false);
    assert.equal(doc.activeElement.id, 'launcher');
  });

  test('the sheet peeks only when open on a phone; opening again ends it', () => {
    const phone = setup('always', { sheet: true });
    phone.panel.peek();
    assert.equal(phone.w.s.isPeek, false, 'closed: nothing to peek from');
    phone.panel.open();
    phone.panel.peek();
    assert.equal(phone.w.s.isPeek, true);
    phone.panel.open();
    assert.equal(phone.w.s.isPeek, false);
    const wide = setup('always');
    wide.panel.open();
    wide.panel.peek();
    assert.equal(wide.w.s.isPeek, false);
  });
});
