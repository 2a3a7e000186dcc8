/**
 * live.js on its own (no DOM, no network): what streamed events change in
 * the conversation while an answer arrives.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLiveAnswer, createLiveDisplay } from '../../www/agent/live.js';
import { createState } from '../../www/agent/state.js';

function display() {
  const s = createState(null, false);
  let renders = 0;
  const d = createLiveDisplay({ s, newId: () => `m${s.messages.length}`, set: (p) => Object.assign(s, p), renderSoon: () => renders++ });
  return { s, d, renders: () => renders };
}

describe('the streaming display', () => {
  test('deltas grow one streaming bubble, unfinished Markdown closed', () => {
    const { s, d, renders } = display();
    const live = createLiveAnswer();
    d.show(live, { type: 'delta', delta: 'Some **bo' });
    d.show(live, { type: 'delta', delta: 'ld' });
    assert.equal(s.messages.length, 1);
    assert.equal(s.messages[0].status, 'streaming');
    assert.equal(s.messages[0].content, 'Some **bold**');
    assert.equal(live.text, 'Some **bold');
    assert.equal(s.statusText, 'Writing…');
    assert.equal(renders(), 2, 'rendered at the next frame, not now');
  });

  test('a new step (thinking) replaces the text at its first delta; a heartbeat changes nothing', () => {
    const { s, d } = display();
    const live = createLiveAnswer();
    d.show(live, { type: 'delta', delta: 'first' });
    d.show(live, { type: 'status', status: 'thinking' });
    assert.equal(s.statusText, 'Thinking…');
    d.show(live, { type: 'status', status: 'tool', heartbeat: true });
    assert.equal(s.statusText, 'Thinking…');
    d.show(live, { type: 'delta', delta: 'second' });
    assert.equal(s.messages.length, 1);
    assert.equal(s.messages[0].content, 'second');
  });

  test('statuses in words, usage and model kept, unknown events ignored', () => {
    const { s, d } = display();
    const live = createLiveAnswer();
    d.show(live, { type: 'status', status: 'waiting' });
    assert.equal(s.statusText, 'Getting ready to act on the page…');
    d.show(live, { type: 'status', status: 'tool', tool: 'shop.search' });
    assert.match(s.statusText, /…$/);
    d.show(live, { type: 'usage', usage: { totalTokens: 5 }, model: 'm1' });
    assert.deepEqual(s.usage, { totalTokens: 5 });
    assert.equal(s.model, 'm1');
    d.show(live, { type: 'usage', usage: [1] });
    assert.deepEqual(s.usage, { totalTokens: 5 }, 'a usage that is no object is ignored');
    d.show(live, { type: 'tool-call', name: 'x' });
    d.show(live, { type: 'delta', delta: 42 });
    assert.equal(s.messages.length, 0);
  });

  test('drop takes the bubble away when the answer arrives', () => {
    const { s, d } = display();
    const live = createLiveAnswer();
    s.messages.push({ id: 'u', role: 'user', content: 'hi' });
    d.show(live, { type: 'delta', delta: 'x' });
    d.drop(live);
    assert.deepEqual(s.messages.map((m) => m.id), ['u']);
    assert.equal(live.msg, null);
    d.drop(null);
  });
});
