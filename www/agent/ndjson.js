/**
 * Reading a streamed chat answer: NDJSON (one JSON object per line, each
 * line ending in "\n"), the format the chat routes answer in when asked with
 * `Accept: application/x-ndjson` (docs/chat-protocol.md).
 *
 * Bytes arrive in reads of any size: a line may come in several reads, a
 * read may hold several lines, and a UTF-8 character may be split between
 * two reads (TextDecoder's `stream` mode keeps the half). A body that a
 * proxy buffered whole reads the same way.
 *
 * This module knows nothing of the chat's event kinds: it hands each parsed
 * object to a callback, and stops when the callback says the answer is
 * complete. chat.js gives the kinds their meaning.
 *
 * @module ndjson
 */

/** Media type of a streamed answer. */
export const NDJSON_TYPE = 'application/x-ndjson';

/**
 * Does a Content-Type header name NDJSON (parameters such as charset aside)?
 * @param {string|null|undefined} contentType
 */
export function isNdjson(contentType) {
  return String(contentType ?? '').split(';')[0].trim().toLowerCase() === NDJSON_TYPE;
}

/**
 * Read an NDJSON body and call `onLine` with each line's object, in order.
 * Blank lines, lines that are not JSON and lines that are not JSON objects
 * are skipped (the stream's end tells whether anything that mattered was lost).
 * A line without its final "\n" at the end of the body still counts.
 *
 * When `onLine` returns true the answer is complete: reading stops there and
 * the rest of the body is cancelled. Aborting `signal` cancels the body at
 * once (a pending read ends without waiting for the server) and rejects with
 * an AbortError.
 *
 * @param {ReadableStream<Uint8Array>} body      the response body
 * @param {(event: object) => boolean|void} onLine
 * @param {AbortSignal} [signal]
 * @returns {Promise<boolean>} true when `onLine` ended the reading, false
 *   when the body ended first
 * @throws {DOMException|Error} AbortError when aborted; otherwise what the
 *   body's reads threw (a broken connection)
 */
export async function readNdjson(body, onLine, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  const aborted = () => {
    const e = new Error('The request was stopped');
    e.name = 'AbortError';
    return e;
  };
  /* cancel() makes a read in progress resolve with done: true at once */
  const onAbort = () => reader.cancel().catch(() => {});
  if (signal?.aborted) {
    onAbort();
    throw aborted();
  }
  signal?.addEventListener('abort', onAbort, { once: true });

  /** @returns {boolean} true when onLine ended the answer */
  const take = (line) => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (!text.trim()) return false;
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return false;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
    return onLine(value) === true;
  };

  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (signal?.aborted) throw aborted();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (take(line)) return true;
      }
    }
    pending += decoder.decode();
    return take(pending);
  } catch (e) {
    if (signal?.aborted) throw aborted();
    throw e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    /* done, failed or stopped: let go of the connection (a no-op when the
     * body has ended) */
    reader.cancel().catch(() => {});
  }
}
