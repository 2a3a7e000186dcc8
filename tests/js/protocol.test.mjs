/**
 * client.js on its own (no DOM): one request of the chat protocol, a
 * streamed (NDJSON) answer, errors in the visitor's words with Retry-After,
 * a stream cut short, Stop, and the status route.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createChatClient } from '../../www/agent/client.js';
import { ChatError } from '../../www/agent/errors.js';

const ENDPOINT = 'http://127.0.0.1:9/_jay/actions';

/** A fetch answering `answers` in order; it records each request. */
function fakeFetch(answers) {
  const requests = [];
  const fn = async (url, init = {}) => {
    requests.push({ url, init, body: init.body ? JSON.parse(init.body) : undefined });
    const a = answers.shift();
    if (a instanceof Error) throw a;
    return a;
  };
  fn.requests = requests;
  return fn;
}

function json(body, status = 200, headers = {}) {
  const h = new Headers({ 'Content-Type': 'application/json', ...headers });
  return new Response(JSON.stringify(body), { status, headers: h });
}

function ndjson(lines) {
  const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  return new Response(text, { status: 200, headers: { 'Content-Type': 'application/x-ndjson' } });
}

const signal = () => new AbortController().signal;

describe('the protocol client', () => {
  test('posts JSON to <endpoint>/<route>, asks for NDJSON, and returns the answer', async () => {
    const fetch = fakeFetch([json({ type: 'response', message: 'hi' })]);
    const client = createChatClient({ endpoint: `${ENDPOINT}/`, fetch });
    const answer = await client.post('geminiAgent.sendMessage', { message: 'hello' }, signal());
    assert.deepEqual(answer, { type: 'response', message: 'hi' });
    const [r] = fetch.requests;
    assert.equal(r.url, `${ENDPOINT}/geminiAgent.sendMessage`);
    assert.equal(r.init.method, 'POST');
    assert.equal(r.init.headers.Accept, 'application/x-ndjson');
    assert.deepEqual(r.body, { message: 'hello' });
  });

  test('fetch is called as a plain function, as the browser\'s fetch must be', async () => {
    const fetch = function (url) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      return Promise.resolve(json({ type: 'response', message: url.endsWith('status') ? '' : 'ok' }));
    };
    const client = createChatClient({ endpoint: ENDPOINT, fetch });
    assert.equal((await client.post('r', {}, signal())).message, 'ok');
    assert.notEqual(await client.status(), null);
  });

  test('without streaming it asks for one JSON answer', async () => {
    const fetch = fakeFetch([json({ type: 'response', message: 'hi' })]);
    await createChatClient({ endpoint: ENDPOINT, fetch, stream: false }).post('r', {}, signal());
    assert.equal(fetch.requests[0].init.headers.Accept, 'application/json');
  });

  test('a stream: each event goes to onEvent, the result line is the answer', async () => {
    const fetch = fakeFetch([
      ndjson([{ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Hel' }, { type: 'result', result: { type: 'response', message: 'Hello' } }]),
    ]);
    const events = [];
    const answer = await createChatClient({ endpoint: ENDPOINT, fetch }).post('r', {}, signal(), (e) => events.push(e.type));
    assert.deepEqual(events, ['status', 'delta']);
    assert.equal(answer.message, 'Hello');
  });

  test('a stream cut before its result is "interrupted"; an error line is the code in words', async () => {
    const cut = createChatClient({ endpoint: ENDPOINT, fetch: fakeFetch([ndjson([{ type: 'delta', delta: 'a' }])]) });
    await assert.rejects(cut.post('r', {}, signal()), (e) => e instanceof ChatError && e.code === 'interrupted');
    const failed = createChatClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch([ndjson([{ type: 'error', error: { code: 'budget_exhausted', retryAfter: 90 } }])]),
    });
    await assert.rejects(failed.post('r', {}, signal()), (e) => e.code === 'budget_exhausted' && /Try again in 90 s\./.test(e.message));
  });

  test('an error envelope: the visitor\'s words, Retry-After, retry or not', async () => {
    const client = createChatClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch([
        json({ error: { code: 'overloaded', message: 'busy' } }, 503, { 'Retry-After': '7' }),
        json({ error: { code: 'history_tampered', message: 'x' } }, 400),
        new Response('<html>bad gateway</html>', { status: 200, headers: { 'Content-Type': 'text/html' } }),
      ]),
    });
    await assert.rejects(client.post('r', { history: [1] }, signal()), (e) => e.code === 'overloaded' && /Try again in 7 s\./.test(e.message) && e.retry);
    await assert.rejects(client.post('r', {}, signal()), (e) => e.code === 'history_tampered' && e.retry === false);
    await assert.rejects(client.post('r', {}, signal()), (e) => e.code === 'bad_answer');
  });

  test('a request too large with no history yet is the page\'s doing (page_state_too_large)', async () => {
    const client = createChatClient({ endpoint: ENDPOINT, fetch: fakeFetch([json({}, 413)]) });
    await assert.rejects(client.post('r', { history: [] }, signal()), (e) => /This page sends more state than the server accepts/.test(e.message) && e.retry === false);
  });

  test('Stop: an aborted request is an AbortError, not an error to show', async () => {
    const ctl = new AbortController();
    const fetch = async (url, init) => {
      ctl.abort();
      throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    };
    await assert.rejects(createChatClient({ endpoint: ENDPOINT, fetch }).post('r', {}, ctl.signal), (e) => e.name === 'AbortError');
  });

  test('status: {ready, model}, or null for anything else; never rejects', async () => {
    const fetch = fakeFetch([json({ ready: false, model: 'offline-demo' }), json({}, 404), new Error('offline')]);
    const client = createChatClient({ endpoint: ENDPOINT, fetch });
    assert.deepEqual(await client.status(), { ready: false, model: 'offline-demo' });
    assert.equal(fetch.requests[0].url, `${ENDPOINT}/geminiAgent.status`);
    assert.equal(await client.status(), null);
    assert.equal(await client.status(), null);
  });
});
