/**
 * storage.js on its own: the tab's saved conversation, read back checked.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSaved, saveConversation, tabStorage, MAX_STORED_MESSAGES } from '../../www/agent/storage.js';
import { createState } from '../../www/agent/state.js';

function memory() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), map: m };
}

const msg = (id, role, extra = {}) => ({ id, role, content: id, timestamp: '2030-01-01T00:00:00Z', ...extra });

describe('the saved conversation', () => {
  test('what is saved is read back', () => {
    const store = memory();
    const s = createState(null, false);
    s.messages = [msg('m1', 'user'), msg('m2', 'assistant')];
    s.history = [{ role: 'user', parts: [{ text: 'hi' }] }];
    s.signatures = [null];
    s.conversation = 'c1';
    s.isOpen = true;
    saveConversation(store, 'k', s, null);
    const back = loadSaved(store, 'k');
    assert.deepEqual(back.messages, s.messages);
    assert.deepEqual(back.history, s.history);
    assert.deepEqual(back.signatures, [null]);
    assert.equal(back.conversation, 'c1');
    assert.equal(back.isOpen, true);
    assert.equal(back.approval, null);
  });

  test('only the newest messages are kept', () => {
    const store = memory();
    const s = createState(null, false);
    s.messages = Array.from({ length: MAX_STORED_MESSAGES + 5 }, (_, i) => msg(`m${i}`, 'user'));
    saveConversation(store, 'k', s, null);
    assert.equal(loadSaved(store, 'k').messages.length, MAX_STORED_MESSAGES);
  });

  test('a streaming answer is read back incomplete; a card without its approval undecided', () => {
    const store = memory();
    const s = createState(null, false);
    s.messages = [msg('a', 'assistant', { status: 'streaming' }), msg('c', 'approval', { status: 'pending' })];
    saveConversation(store, 'k', s, null);
    const back = loadSaved(store, 'k');
    assert.deepEqual(back.messages.map((m) => m.status), ['incomplete', 'undecided']);
  });

  test('the approval that waits comes back with its card', () => {
    const store = memory();
    const s = createState(null, false);
    s.messages = [msg('c', 'approval', { status: 'pending' })];
    const approval = { msgId: 'c', id: 'call-1', ticket: 't', results: [] };
    saveConversation(store, 'k', s, approval);
    assert.deepEqual(loadSaved(store, 'k').approval, approval);
  });

  test('nothing, another version, or unreadable text: null', () => {
    const store = memory();
    assert.equal(loadSaved(store, 'k'), null);
    store.setItem('k', JSON.stringify({ v: 99, messages: [] }));
    assert.equal(loadSaved(store, 'k'), null);
    store.setItem('k', '{not json');
    assert.equal(loadSaved(store, 'k'), null);
    assert.equal(loadSaved(null, 'k'), null);
  });

  test('a full or refused storage is no error; a window whose storage throws has none', () => {
    const full = { setItem() { throw new Error('QuotaExceededError'); } };
    assert.doesNotThrow(() => saveConversation(full, 'k', createState(null, false), null));
    const win = Object.defineProperty({}, 'sessionStorage', { get() { throw new Error('SecurityError'); } });
    assert.equal(tabStorage(win), null);
  });
});
