/**
 * pagecalls.js on its own (no DOM: the watcher is injected): the page
 * calls of one model turn, run in order, each said before and after.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultDescribeCall, runPageCalls } from '../../www/agent/pagecalls.js';

function deps(tools, extra = {}) {
  const seen = { started: [], ended: [], watched: 0 };
  return {
    seen,
    deps: {
      tools: () => tools,
      describeCall: (name) => `Did ${name}`,
      automation: null,
      watch: () => {
        seen.watched++;
        return { stop: () => ['el'] };
      },
      settle: async () => {},
      onStart: (line) => seen.started.push(line),
      onEnd: (line, ok, changed) => seen.ended.push({ line, ok, changed }),
      ...extra,
    },
  };
}

const live = () => true;

describe('the page calls', () => {
  test('run in order with their tools; failures, throws and missing tools answered as errors', async () => {
    const order = [];
    const tools = [
      { name: 'a', execute: async (args) => (order.push(['a', args]), { ok: true, result: 1 }) },
      { name: 'b', execute: async () => ({ ok: false, error: 'sold out' }) },
      { name: 'c', execute: () => { throw new Error('boom'); } },
      { name: 'd', execute: () => 'plain' },
      { name: 'w', webmcpOnly: true, execute: () => ({ ok: true }) },
    ];
    const { seen, deps: d } = deps(tools);
    const calls = ['a', 'b', 'c', 'd', 'w'].map((name, i) => ({ id: `c${i}`, name, args: name === 'a' ? { x: 1 } : undefined }));
    const results = await runPageCalls(d, calls, new AbortController().signal, live);
    assert.deepEqual(order, [['a', { x: 1 }]]);
    assert.deepEqual(results.map((r) => [r.callId, r.isError]), [['c0', false], ['c1', true], ['c2', true], ['c3', false], ['c4', true]]);
    assert.deepEqual(seen.started, ['Did a', 'Did b', 'Did c', 'Did d', 'Did w']);
    assert.deepEqual(seen.ended.map((e) => e.line), ['Did a', 'Did b — failed: sold out', 'Did c — failed: boom', 'Did d', 'Did w — failed: There is no page tool named "w" on this page now.']);
    assert.deepEqual(seen.ended[0].changed, ['el'], 'what the call changed goes with its end');
    assert.equal(seen.watched, 5);
  });

  test('a call without an id: nothing runs', async () => {
    let ran = false;
    const { deps: d } = deps([{ name: 'a', execute: () => (ran = true) }]);
    await assert.rejects(runPageCalls(d, [{ id: 'x', name: 'a' }, { name: 'a' }], new AbortController().signal, live), { code: 'protocol_error' });
    assert.equal(ran, false);
  });

  test('Stop before a call, or a cleared conversation after one, ends the run', async () => {
    const { deps: d, seen } = deps([{ name: 'a', execute: () => ({ ok: true }) }]);
    const stopped = new AbortController();
    stopped.abort();
    await assert.rejects(runPageCalls(d, [{ id: '1', name: 'a' }], stopped.signal, live), { name: 'AbortError' });
    await assert.rejects(runPageCalls(d, [{ id: '1', name: 'a' }], new AbortController().signal, () => false), { name: 'AbortError' });
    assert.deepEqual(seen.ended, [], 'no line for a call whose conversation is gone');
  });

  test('a describer that throws or says nothing gets the fallback line', async () => {
    const { deps: d, seen } = deps([{ name: 'a', execute: () => ({ ok: true }) }], { describeCall: () => { throw new Error('x'); } });
    await runPageCalls(d, [{ id: '1', name: 'a', args: { coordinate: 'e3' } }], new AbortController().signal, live);
    assert.deepEqual(seen.started, ['Ran a on e3']);
    assert.equal(defaultDescribeCall('b', {}), 'Ran b');
  });
});
