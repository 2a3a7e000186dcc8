/**
 * turn.js on its own (no DOM, no network): the protocol loop of one visitor
 * turn against a scripted client, reporting through the callbacks it is
 * given.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTurnDriver } from '../../www/agent/turn.js';
import { createLiveDisplay } from '../../www/agent/live.js';
import { createState } from '../../www/agent/state.js';
import { ChatError } from '../../www/agent/errors.js';

const APPROVAL = { id: 'c1', ticket: 'T', tool: 'shop.order', preview: 'Order 2 mugs', args: {} };

/** A driver with a client that answers from `answers` (a function: it is called with the request). */
function harness(answers, extra = {}) {
  const w = { s: createState(null, false), failed: null, run: null, generation: 0, destroyed: false };
  const seen = { posts: [], messages: [], asked: [], done: [], ran: [] };
  let n = 0;
  const client = {
    post: async (route, body, signal, onEvent) => {
      seen.posts.push({ route, body });
      const next = answers[n++];
      return typeof next === 'function' ? next({ route, body, signal, onEvent }) : next;
    },
  };
  const set = (patch) => Object.assign(w.s, patch);
  const addMessage = (role, content, x = {}) => {
    seen.messages.push({ role, content, ...x });
    w.s.messages.push({ id: `m${w.s.messages.length}`, role, content });
  };
  const driver = createTurnDriver({
    w,
    client,
    maxRoundTrips: 3,
    pageNow: () => ({ toolDefinitions: [{ name: 'click-a' }], pageState: { url: '/' } }),
    runCalls: async (calls) => {
      seen.ran.push(...calls.map((c) => c.name));
      return calls.map((c) => ({ callId: c.id, result: { ok: true }, isError: false }));
    },
    live: createLiveDisplay({ s: w.s, newId: () => 'live', set, renderSoon: () => {} }),
    addMessage,
    set,
    render: () => {},
    persist: () => {},
    canApprove: true,
    askApproval: (a, results) => seen.asked.push({ kind: 'approval', id: a.id, results }),
    askQuestion: (q, results) => seen.asked.push({ kind: 'question', id: q.id, results }),
    onDone: (outcome) => seen.done.push(outcome),
    log: { error: () => {} },
    ...extra,
  });
  return { w, seen, drive: driver.drive };
}

const history = (n) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'model' : 'user', parts: [{ text: `t${i}` }] }));

describe('the turn driver', () => {
  test('page calls run, their results are the next request, the answer ends the turn', async () => {
    const { w, seen, drive } = harness([
      { type: 'tool-calls', calls: [{ id: 'a', name: 'click-a', args: {} }], history: history(2), signatures: [null, 's'] },
      { type: 'response', message: 'Done.', history: history(4), signatures: [null, 's', null, 's2'], conversation: 'k1' },
    ]);
    await drive('geminiAgent.sendMessage', { message: 'go' });
    assert.deepEqual(seen.posts.map((p) => p.route), ['geminiAgent.sendMessage', 'geminiAgent.submitToolResults']);
    assert.deepEqual(seen.posts[0].body.toolDefinitions, [{ name: 'click-a' }], 'the page goes with every request');
    assert.deepEqual(seen.posts[1].body.results, [{ callId: 'a', result: { ok: true }, isError: false }]);
    assert.equal(seen.posts[1].body.history.length, 2, 'the history the server returned is sent back');
    assert.deepEqual(seen.ran, ['click-a']);
    assert.deepEqual(seen.done, ['response']);
    assert.equal(w.s.conversation, 'k1');
    assert.equal(w.s.isLoading, false);
    assert.equal(w.run, null);
    assert.equal(seen.messages.at(-1).content, 'Done.');
  });

  test('the round-trip budget stops the loop with a note', async () => {
    const calls = { type: 'tool-calls', calls: [{ id: 'a', name: 'click-a' }] };
    const { seen, drive } = harness([calls, calls, calls, calls]);
    await drive('geminiAgent.sendMessage', { message: 'go' });
    assert.equal(seen.posts.length, 3);
    assert.deepEqual(seen.done, ['limit']);
    assert.match(seen.messages.at(-1).content, /Stopped after 3 round trips/);
  });

  test('an approval asks the visitor with the results of the same turn; no card, no approval', async () => {
    const answer = { type: 'approval-required', approval: APPROVAL, calls: [{ id: 'p', name: 'click-a' }] };
    const { seen, drive } = harness([answer]);
    await drive('geminiAgent.sendMessage', { message: 'buy' });
    assert.deepEqual(seen.asked, [{ kind: 'approval', id: 'c1', results: [{ callId: 'p', result: { ok: true }, isError: false }] }]);
    assert.deepEqual(seen.done, ['approval']);

    const without = harness([answer], { canApprove: false });
    await without.drive('geminiAgent.sendMessage', { message: 'buy' });
    assert.deepEqual(without.seen.asked, []);
    assert.deepEqual(without.seen.done, ['approval-unavailable']);
    assert.match(without.seen.messages.at(-1).content, /cannot ask for it/);
  });

  test('an error is shown and kept for Retry unless retrying cannot help', async () => {
    const { w, seen, drive } = harness([
      () => {
        throw new ChatError('upstream_unavailable', 'Not available.');
      },
    ]);
    await drive('geminiAgent.sendMessage', { message: 'hi' });
    assert.deepEqual(seen.done, ['error']);
    assert.equal(w.s.error, 'Not available.');
    assert.equal(w.failed.route, 'geminiAgent.sendMessage', 'Retry re-sends it');

    const bad = harness([{ type: 'nonsense' }]);
    await bad.drive('geminiAgent.sendMessage', { message: 'hi' });
    assert.equal(bad.w.s.errorCode, 'bad_answer');
  });

  test('a refused ticket marks the decided card invalid', async () => {
    const { w, drive } = harness([
      () => {
        throw new ChatError('approval_invalid', 'Expired.', { retry: false });
      },
    ]);
    w.s.messages.push({ id: 'card1', role: 'approval', status: 'approved' });
    await drive('geminiAgent.submitToolResults', { approval: { id: 'c1', ticket: 'T', decision: 'approve' } }, 'card1');
    assert.equal(w.s.messages[0].status, 'invalid');
    assert.equal(w.failed, null, 'no Retry for a refused ticket');
  });

  test('Stop keeps the streamed text marked stopped, and the message in the history', async () => {
    let release;
    const { w, seen, drive } = harness([
      ({ signal, onEvent }) => {
        onEvent({ type: 'delta', delta: 'Half an ans' });
        return new Promise((resolve, reject) => {
          release = resolve;
          signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
        });
      },
    ]);
    const turn = drive('geminiAgent.sendMessage', { message: 'tell me' });
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(w.s.messages.at(-1).status, 'streaming');
    w.run.controller.abort();
    await turn;
    assert.ok(release);
    assert.equal(w.s.messages.find((m) => m.id === 'live').status, 'stopped');
    assert.deepEqual(seen.done, ['stopped']);
    assert.deepEqual(w.s.history, [{ role: 'user', parts: [{ text: 'tell me' }] }]);
  });

  test('a turn whose conversation was cleared meanwhile drops its late answer', async () => {
    const h = harness([
      () => {
        h.w.generation++;
        return { type: 'response', message: 'late', history: history(2) };
      },
    ]);
    await h.drive('geminiAgent.sendMessage', { message: 'hi' });
    assert.deepEqual(h.seen.done, [], 'the widget is not told');
    assert.deepEqual(h.w.s.history, []);
    assert.equal(h.w.s.isLoading, false);
  });
});
