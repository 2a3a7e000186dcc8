/**
 * screen.js on its own (a stub view and storage): the named state written
 * to the view and the tab's storage, the snapshot without the ticket.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createScreen } from '../../www/agent/screen.js';
import { createState } from '../../www/agent/state.js';

function setup(win = null) {
  const w = { s: createState(null, false), failed: null, approval: null, question: null, launcherMode: false, destroyed: false };
  const shown = [];
  const saved = new Map();
  const storage = { getItem: (k) => saved.get(k) ?? null, setItem: (k, v) => saved.set(k, v), removeItem: (k) => saved.delete(k) };
  const screen = createScreen({ w, view: { render: (snap, flags) => shown.push({ snap, flags }) }, win, storage, storageKey: 'k' });
  return { w, screen, shown, saved };
}

describe('the screen', () => {
  test('a message is added, saved and shown; unread while the launcher is closed', () => {
    const { w, screen, shown, saved } = setup();
    screen.addMessage('user', 'hi');
    assert.equal(shown.length, 1);
    assert.equal(shown[0].snap.lastUserMessage, 'hi');
    assert.match(saved.get('k'), /"hi"/);
    w.launcherMode = true;
    screen.addMessage('assistant', 'hello');
    assert.equal(w.s.unread, true);
    assert.notEqual(w.s.messages[0].id, w.s.messages[1].id);
  });

  test('the snapshot names the waiting approval without its ticket', () => {
    const { w, screen } = setup();
    w.approval = { msgId: 'm1', id: 'c1', ticket: 'SECRET', results: [] };
    const snap = screen.snapshot();
    assert.deepEqual(snap.approval, { id: 'c1', card: 'm1' });
    assert.equal(JSON.stringify(snap).includes('SECRET'), false);
  });

  test('renderSoon renders once a frame; nothing after destroy', () => {
    const frames = [];
    const { w, screen, shown } = setup({ requestAnimationFrame: (f) => frames.push(f) });
    screen.renderSoon();
    screen.renderSoon();
    assert.equal(frames.length, 1);
    frames[0]();
    assert.equal(shown.length, 1);
    w.destroyed = true;
    screen.set({ statusText: 'x' });
    screen.renderSoon();
    assert.equal(shown.length, 1);
    assert.equal(w.s.statusText, 'x');
  });
});
