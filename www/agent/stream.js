/**
 * Reading a streamed answer that ends in one last line: every event goes to
 * `onEvent` until the `result` line (the answer) or the `error` line (the
 * failure). The chat routes (docs/chat-protocol.md) and the run API
 * (docs/http-api.md) stream this way; each caller says what the end means
 * in its own words (client.js for the widget, assistant/api.js for the
 * assistant page), so nothing here is worded for either.
 *
 * @module stream
 */
import { readNdjson } from './ndjson.js';

/**
 * @typedef {object} StreamEnd
 * @property {{type: 'result', result: any}|{type: 'error', error: any}|null} last
 *   the line that ended the stream; null when it ended, or broke, before one
 * @property {Error|null} broken  what broke the reading (a lost connection,
 *   an `onEvent` that threw); null when it ended by itself
 */

/**
 * Read `body` (NDJSON, ndjson.js) up to its result or error line.
 * @param {ReadableStream<Uint8Array>} body
 * @param {((event: object) => void)|undefined} onEvent  each event before the last line
 * @param {AbortSignal} [signal]
 * @returns {Promise<StreamEnd>}
 * @throws the AbortError of readNdjson when `signal` stops the reading
 */
export async function readResultStream(body, onEvent, signal) {
  let last = null;
  let broken = null;
  try {
    await readNdjson(
      body,
      (event) => {
        if (event.type === 'result' || event.type === 'error') {
          last = event;
          return true;
        }
        onEvent?.(event);
        return false;
      },
      signal,
    );
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    broken = e;
  }
  return { last, broken };
}
