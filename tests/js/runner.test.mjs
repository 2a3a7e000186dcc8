/**
 * runner.js on its own (no DOM, no network: a stub client): the user
 * commands, listed once, run without the model, their output shared with
 * the model only when they say so and may.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCommandRunner } from '../../www/agent/runner.js';
import { createState } from '../../www/agent/state.js';
import { ChatError } from '../../www/agent/errors.js';

function runner(client, url = '/_jay/commands') {
  const w = { s: createState(null, false), failed: null, run: null, generation: 0, destroyed: false };
  const done = [];
  let n = 0;
  const r = createCommandRunner({
    w,
    client,
    url,
    newId: () => `m${n++}`,
    addMessage: (role, content) => w.s.messages.push({ id: `m${n++}`, role, content }),
    set: (p) => Object.assign(w.s, p),
    persist: () => {},
    onDone: (outcome) => done.push(outcome),
    log: { error: () => {} },
  });
  return { w, r, done };
}

describe('the command runner', () => {
  test('the list is asked for once; a server not reached is asked again', async () => {
    let asked = 0;
    const answers = [null, [{ name: 'help' }]];
    const { r } = runner({ commands: async () => answers[asked++] });
    assert.deepEqual(await r.load(), []);
    assert.deepEqual(await r.load(), [{ name: 'help' }]);
    assert.deepEqual(await r.load(), [{ name: 'help' }]);
    assert.equal(asked, 2);
    const none = runner({ commands: async () => assert.fail('no url, no request') }, '');
    assert.deepEqual(await none.r.load(), []);
  });

  test('a run shows the line and the output; a shared output joins the history', async () => {
    const { w, r, done } = runner({ command: async (url, name, args) => ({ output: `${name}:${args}`, shareWithModel: true }) });
    await r.run('plan', 'today', '/plan today');
    assert.deepEqual(w.s.messages.map((m) => m.role), ['user', 'command']);
    const out = w.s.messages[1];
    assert.equal(out.content, 'plan:today');
    assert.equal(out.shared, true);
    assert.equal(out.commandTitle, 'Output of /plan (the assistant sees it with your next message)');
    assert.equal(w.s.history.length, 1);
    assert.deepEqual(done, ['command']);
    assert.equal(w.failed, null);
    assert.equal(w.s.isLoading, false);
  });

  test('a failure is shown and kept for Retry; Stop says stopped', async () => {
    const { w, r, done } = runner({
      command: async (url, name, args, signal) => {
        if (name === 'slow') {
          return new Promise((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('a'), { name: 'AbortError' }))));
        }
        throw new ChatError('command_failed', 'It failed.');
      },
    });
    await r.run('x', '', '/x');
    assert.equal(w.s.error, 'It failed.');
    assert.deepEqual(w.failed, { command: { name: 'x', args: '' } });
    const slow = r.run('slow', '', null);
    w.run.controller.abort();
    await slow;
    assert.equal(w.s.messages.at(-1).content, 'Stopped.');
    assert.deepEqual(done, ['error', 'stopped']);
    assert.equal(w.failed, null);
  });
});
