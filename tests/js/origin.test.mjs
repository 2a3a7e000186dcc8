// Tests of the widget's URLs and its cross-origin diagnosis
// (www/agent/origin.js), through mountChat and the assistant page's client
// (www/assistant/api.js): the default URLs follow the module, not the page;
// an explicit endpoint is used as given; a request to another origin that
// fails as a network error says whether the server refused this page's
// origin, is down behind nginx, or could not be reached. No network: the
// fetch is a script that behaves as Chromium does (a cross-origin answer
// without Access-Control-Allow-Origin is a TypeError; mode 'no-cors' gets
// an opaque answer).
//
// Run: node --test tests/js/
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import { DEFAULT_ENDPOINT, UNREACHABLE, diagnoseNetworkError, foreignOrigin, originRefused, routeUrl } from '../../www/agent/origin.js';
import { mountChat } from '../../www/agent/chat.js';
import { API_BASE, createClient, explain } from '../../www/assistant/api.js';

const PAGE = 'https://shop.example';
const AGENT = 'https://agent.example.org';

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/**
 * A fetch as the browser at PAGE sees a server: `server(url, init)` gives
 * the server's answer and whether it allows PAGE (`{res, cors}`), or null
 * when nothing listens. A cross-origin answer without the header throws
 * (mode 'cors', the default), is opaque with mode 'no-cors'.
 */
function browserFetch(server) {
  const calls = [];
  const fn = async (url, init = {}) => {
    calls.push({ url: String(url), init });
    const got = server(String(url), init);
    if (!got) throw new TypeError('Failed to fetch');
    const same = new URL(url, PAGE).origin === PAGE;
    if (init.mode === 'no-cors' && !same) return new Response(null, { status: 200 }); /* opaque: status 0 in a browser */
    if (!same && !got.cors) throw new TypeError('Failed to fetch');
    return got.res;
  };
  fn.calls = calls;
  return fn;
}

function mount(t, fetch, chat = {}) {
  const dom = new JSDOM('<!doctype html><html><body><div id="chat"></div></body></html>', {
    url: `${PAGE}/products/`,
    pretendToBeVisual: true,
  });
  const { window } = dom;
  window.console.warn = () => {};
  const c = mountChat(window.document.getElementById('chat'), { fetch, storage: null, checkStatus: false, ...chat });
  t.after(() => c.destroy());
  return c;
}

describe('URLs follow the module', () => {
  test('routeUrl: the folder above the module, any prefix kept', () => {
    assert.equal(routeUrl('_jay/actions', 'https://x.org/agent/chat.js'), 'https://x.org/_jay/actions');
    assert.equal(routeUrl('_jay/actions', 'https://x.org/~alice/agent/index.js'), 'https://x.org/~alice/_jay/actions');
    assert.equal(routeUrl('/api/agent/threads', 'http://127.0.0.1:8081/shop/assistant/api.js'),
      'http://127.0.0.1:8081/shop/api/agent/threads');
    assert.equal(routeUrl('', 'https://x.org/shop/assistant/api.js'), 'https://x.org/shop/');
  });

  test('the defaults are next to www/agent/ and www/assistant/, not at the page\'s root', () => {
    assert.equal(DEFAULT_ENDPOINT, new URL('../../www/_jay/actions', import.meta.url).href);
    assert.equal(API_BASE, new URL('../../www/', import.meta.url).href);
  });

  test('the widget posts to the default endpoint; an explicit one is used as given', async (t) => {
    const seen = [];
    const fetch = async (url) => {
      seen.push(url);
      return json({ type: 'response', message: 'ok', history: [] });
    };
    await mount(t, fetch, { stream: false }).send('hi');
    assert.equal(seen[0], `${DEFAULT_ENDPOINT}/geminiAgent.sendMessage`);
    await mount(t, fetch, { stream: false, endpoint: '/_jay/actions' }).send('hi');
    assert.equal(seen[1], '/_jay/actions/geminiAgent.sendMessage', 'a page-relative endpoint stays as written');
    await mount(t, fetch, { stream: false, endpoint: `${AGENT}/_jay/actions` }).send('hi');
    assert.equal(seen[2], `${AGENT}/_jay/actions/geminiAgent.sendMessage`);
  });

  test('the assistant page\'s client: its base, or the one given', async () => {
    const seen = [];
    const fetch = async (url) => {
      seen.push(url);
      return json({ threads: [] });
    };
    await createClient({ fetch, token: () => 't' }).threads();
    await createClient({ fetch, token: () => 't', base: `${AGENT}/` }).threads();
    assert.deepEqual(seen, [`${API_BASE}api/agent/threads`, `${AGENT}/api/agent/threads`]);
  });
});

describe('a request to another origin that fails', () => {
  test('foreignOrigin: only an http(s) URL on another origin', () => {
    const loc = new URL(`${PAGE}/a/b`);
    assert.equal(foreignOrigin(`${AGENT}/_jay/actions`, loc), AGENT);
    assert.equal(foreignOrigin('/_jay/actions', loc), '');
    assert.equal(foreignOrigin(`${PAGE}/_jay/actions`, loc), '');
    assert.equal(foreignOrigin('http://shop.example/_jay/actions', loc), 'http://shop.example', 'the scheme counts');
    assert.equal(foreignOrigin('file:///www/_jay/actions', loc), '');
    assert.equal(foreignOrigin(`${AGENT}/x`, undefined), '');
  });

  test('the server is there but does not list this origin: the widget says so, not "check your connection"', async (t) => {
    const fetch = browserFetch(() => ({ res: json({ ready: true }), cors: false }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'origin_not_allowed');
    assert.equal(chat.state.error, originRefused(AGENT, PAGE));
    assert.match(chat.state.error, /https:\/\/agent\.example\.org.*does not accept requests from this page \(https:\/\/shop\.example\)/);
    assert.match(chat.state.error, /http\.cors\.allowOrigins/);
    assert.doesNotMatch(chat.state.error, /connection/);
    /* the probes: a CORS GET, then a no-cors GET of the status route, no cookies */
    const probes = fetch.calls.slice(1);
    assert.deepEqual(probes.map((c) => [c.url, c.init.method, c.init.mode, c.init.credentials]), [
      [`${AGENT}/_jay/actions/geminiAgent.status`, 'GET', 'cors', 'omit'],
      [`${AGENT}/_jay/actions/geminiAgent.status`, 'GET', 'no-cors', 'omit'],
    ]);
  });

  test('nothing answers at all: "Could not reach the server", as on the same origin', async (t) => {
    const fetch = browserFetch(() => null);
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'network');
    assert.equal(chat.state.error, UNREACHABLE);
    assert.equal(fetch.calls.length, 3, 'the request and both probes');
  });

  test('the same origin: no probe, "Could not reach the server"', async (t) => {
    const fetch = browserFetch(() => null);
    const chat = mount(t, fetch, { endpoint: '/_jay/actions' });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'network');
    assert.equal(chat.state.error, UNREACHABLE);
    assert.equal(fetch.calls.length, 1, 'no probe');
  });

  test('the origin is allowed but the POST failed (nginx\'s 502, readable, where the preflight was not): its words', async (t) => {
    const down = json({ error: { code: 'responder_unavailable', message: 'The agent service is not running.' } }, 502);
    const fetch = browserFetch((url, init) => (init.method === 'POST' ? null : { res: down, cors: true }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'responder_unavailable');
    assert.doesNotMatch(chat.state.error, /allowOrigins/);
    assert.equal(fetch.calls.length, 2, 'the readable CORS probe was enough');
  });

  test('the origin is allowed and the server answers the probe: "Could not reach the server"', async (t) => {
    const fetch = browserFetch((url, init) => (init.method === 'POST' ? null : { res: json({ ready: true }), cors: true }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'network');
    assert.equal(chat.state.error, UNREACHABLE);
  });

  test('a probe answer that does not explain the failure (a 404 here) is no diagnosis: "Could not reach the server"', async (t) => {
    const fetch = browserFetch((url, init) => (init.method === 'POST' ? null : { res: json({ error: { code: 'not_found' } }, 404), cors: true }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'network');
    assert.equal(chat.state.error, UNREACHABLE);
  });

  test('nginx\'s 429 to the preflight: the rate limit\'s words', async (t) => {
    const busy = json({ error: { code: 'rate_limited', message: 'Too many requests.' } }, 429);
    const fetch = browserFetch((url, init) => (init.method === 'POST' ? null : { res: busy, cors: true }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('hello');
    assert.equal(chat.state.errorCode, 'rate_limited');
  });

  test('a user command refused the same way', async (t) => {
    const fetch = browserFetch(() => ({ res: json({}), cors: false }));
    const chat = mount(t, fetch, { endpoint: `${AGENT}/_jay/actions` });
    await chat.send('/greeting');
    assert.equal(chat.state.errorCode, 'origin_not_allowed');
    assert.equal(fetch.calls[0].url, `${AGENT}/_jay/commands`, 'the listing first');
  });

  test('the assistant page: the refused origin, and the unreachable server, in its words', async () => {
    const loc = new URL(`${PAGE}/assistant/`);
    const refused = createClient({ fetch: browserFetch(() => ({ res: json({}), cors: false })), token: () => 't', base: `${AGENT}/`, location: loc });
    await assert.rejects(refused.threads(), (e) => e.status === 0 && e.code === 'origin_not_allowed' &&
      explain(e) === originRefused(AGENT, PAGE));
    const gone = createClient({ fetch: browserFetch(() => null), token: () => 't', base: `${AGENT}/`, location: loc });
    await assert.rejects(gone.threads(), (e) => e.code === 'network' && /Could not reach the server/.test(explain(e)));
    const down = json({ error: { code: 'responder_unavailable', message: 'The agent service is not running. Try again later.' } }, 502);
    const behind = createClient({ fetch: browserFetch((url, init) => (init.mode === 'cors' ? { res: down, cors: true } : null)),
      token: () => 't', base: `${AGENT}/`, location: loc });
    await assert.rejects(behind.startRun({ prompt: 'x' }), (e) => e.status === 502 && e.code === 'responder_unavailable' &&
      /not running/.test(explain(e)));
  });

  test('diagnoseNetworkError without a page location or fetch: unreachable', async () => {
    assert.deepEqual(await diagnoseNetworkError({ fetch: async () => new Response(''), url: `${AGENT}/x`, probeUrl: `${AGENT}/y` }),
      { kind: 'unreachable', message: UNREACHABLE });
  });
});
