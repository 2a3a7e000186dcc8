/**
 * state.js on its own (no DOM, no network): the state, the tags computed
 * from it, and the named transitions on the signed history.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OFFLINE_NOTICE, absorbAnswer, createState, currentTurn, deriveView, rememberStopped, shareOutput, turnSucceeded } from '../../www/agent/state.js';
import { NOT_SET_UP } from '../../www/agent/errors.js';

const msg = (role, content, extra = {}) => ({ id: `${role}-${content}`, role, content, timestamp: '', ...extra });
const CTX = { failed: null, approval: null, launcherMode: false };
const ASK = { role: 'user', parts: [{ text: 'remove the hub' }] };
const CALL = { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'click-remove-btn', args: {} } }] };

describe('the conversation state', () => {
  test('a fresh state, or the saved one', () => {
    const s = createState(null, true);
    assert.deepEqual([s.messages, s.history, s.isExpanded, s.isLoading, s.isPeek], [[], [], true, false, false]);
    const saved = { messages: [msg('user', 'hi')], history: [ASK], signatures: [null], conversation: 'c', isExpanded: false, isOpen: true, model: 'm' };
    const t = createState(saved, true);
    assert.equal(t.isExpanded, false, 'the saved choice wins');
    assert.equal(t.conversation, 'c');
    assert.equal(t.isOpen, true);
  });

  test('the turn in compact mode: lines before the last answer, the answer, notes after it', () => {
    const msgs = [msg('user', 'a'), msg('assistant', 'old'), msg('user', 'b'), msg('action', 'clicked'), msg('assistant', 'part', { status: 'stopped' }), msg('system', 'Stopped.')];
    const turn = currentTurn(msgs);
    assert.equal(turn.user.content, 'b');
    assert.equal(turn.lastAnswer.content, 'part');
    assert.deepEqual(turn.activity.map((m) => m.content), ['clicked']);
    assert.deepEqual(turn.notesAfter.map((m) => m.content), ['Stopped.'], '"Stopped." after the text it stopped');
    assert.deepEqual(currentTurn([msg('user', 'x'), msg('system', 'note')]).activity.map((m) => m.content), ['note'], 'no answer: every line before');
  });

  test('Usage is a succeeded turn\'s only', () => {
    const s = createState(null, false);
    s.usage = { totalTokens: 3, geminiCalls: 1 };
    s.outcome = 'response';
    assert.match(deriveView(s, CTX).usageText, /^3 tokens/);
    assert.equal(turnSucceeded(s), true);
    for (const change of [{ error: 'x', outcome: 'error' }, { outcome: 'stopped' }, { isLoading: true }]) {
      const t = { ...s, ...change };
      assert.equal(deriveView(t, CTX).usageText, '', JSON.stringify(change));
    }
  });

  test('the notice: not set up, the offline demo model, or none', () => {
    const s = createState(null, false);
    assert.equal(deriveView(s, CTX).notice, '');
    s.server = { ready: false, model: '' };
    assert.equal(deriveView(s, CTX).notice, NOT_SET_UP);
    s.server = { ready: true, model: 'offline-demo' };
    assert.equal(deriveView(s, CTX).notice, OFFLINE_NOTICE);
  });

  test('canRetry, awaitingApproval and isOpen follow the context', () => {
    const s = createState(null, false);
    const v = deriveView(s, { failed: {}, approval: { id: 'a' }, launcherMode: true });
    assert.deepEqual([v.canRetry, v.awaitingApproval, v.isOpen, v.isLauncher], [true, true, false, true]);
  });

  test('absorbAnswer: the signed history, the key, the model; the server actions as lines', () => {
    const s = createState(null, false);
    s.server = { ready: false, model: '' };
    const lines = absorbAnswer(s, { history: [ASK, CALL], signatures: ['s0'], conversation: 'k', model: 'm', serverCalls: [{ name: 'shop.searchProducts', ok: false }] });
    assert.deepEqual(s.signatures, ['s0', null], 'aligned with the history');
    assert.deepEqual([s.conversation, s.model, s.server.ready], ['k', 'm', true]);
    assert.deepEqual(lines, [{ content: 'Searched products (shop.searchProducts) — failed', status: 'failed' }]);
    assert.equal(absorbAnswer(s, {}), null);
  });

  test('rememberStopped: the visitor\'s message goes in, never the model\'s partial text', () => {
    const s = createState(null, false);
    rememberStopped(s, { route: 'geminiAgent.sendMessage', payload: { message: 'hi' } }, 'Hel');
    assert.deepEqual(s.history, [{ role: 'user', parts: [{ text: 'hi' }] }]);
    assert.deepEqual(s.signatures, [null]);
    const t = createState(null, false);
    rememberStopped(t, { route: 'geminiAgent.sendMessage', payload: { message: 'hi' } }, '');
    assert.deepEqual(t.history, [], 'nothing shown: nothing kept');
  });

  test('rememberStopped after page calls: their results answer the calls', () => {
    const s = createState(null, false);
    s.history = [ASK, CALL];
    s.signatures = [null, 'S1'];
    rememberStopped(s, { route: 'geminiAgent.submitToolResults', payload: { results: [{ callId: 'c1', result: '{"ok":true}' }] } }, '');
    assert.deepEqual(s.history.at(-1), { role: 'user', parts: [{ functionResponse: { name: 'click-remove-btn', id: 'c1', response: { result: { ok: true } } } }] });
    assert.deepEqual(s.signatures, [null, 'S1', null]);
  });

  test('shareOutput: a command\'s output as a user turn, not while a server action waits', () => {
    const s = createState(null, false);
    assert.equal(shareOutput(s, 'time', '05:30'), true);
    assert.equal(s.history.length, 1);
    const t = createState(null, false);
    t.history = [ASK, { role: 'model', parts: [{ functionCall: { id: 'x', name: 'action_shop_addReview', args: {} } }] }];
    assert.equal(shareOutput(t, 'time', '05:30'), false);
    assert.equal(t.history.length, 2);
  });
});
