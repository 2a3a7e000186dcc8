/**
 * stream.js on its own: a streamed answer read up to its result or error
 * line, with no words of its own (client.js and assistant/api.js word
 * what the end means).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readResultStream } from '../../www/agent/stream.js';

const body = (text) => new Response(text).body;
const lines = (...events) => events.map((e) => `${JSON.stringify(e)}\n`).join('');

/** A body that sends `text`, then breaks. */
function breaking(text) {
  return new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.error(new Error('connection reset'));
    },
  });
}

describe('the result stream', () => {
  test('every event before the result line, then the result; nothing after it', async () => {
    const seen = [];
    const end = await readResultStream(
      body(lines({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'hi' }, { type: 'result', result: { a: 1 } }, { type: 'delta', delta: 'late' })),
      (e) => seen.push(e.type),
    );
    assert.deepEqual(seen, ['status', 'delta']);
    assert.deepEqual(end, { last: { type: 'result', result: { a: 1 } }, broken: null });
  });

  test('an error line ends it as it came', async () => {
    const end = await readResultStream(body(lines({ type: 'error', error: { code: 'x', message: 'y' } })));
    assert.deepEqual(end.last, { type: 'error', error: { code: 'x', message: 'y' } });
  });

  test('a stream that ends or breaks before its last line has none', async () => {
    assert.deepEqual(await readResultStream(body(lines({ type: 'delta', delta: 'x' }))), { last: null, broken: null });
    const broke = await readResultStream(breaking(lines({ type: 'delta', delta: 'x' })), () => {});
    assert.equal(broke.last, null);
    assert.equal(broke.broken.message, 'connection reset');
    const threw = await readResultStream(body(lines({ type: 'delta', delta: 'x' })), () => {
      throw new Error('cannot show');
    });
    assert.equal(threw.broken.message, 'cannot show', 'an onEvent that throws breaks the reading');
  });

  test('Stop rejects with an AbortError', async () => {
    const c = new AbortController();
    c.abort();
    await assert.rejects(readResultStream(body(lines({ type: 'result', result: {} })), undefined, c.signal), { name: 'AbortError' });
  });
});
