// Tests of the assistant page's run API client (www/assistant/api.js)
// against a fake fetch: the Bearer header, streamed answers (events, the
// result line, the error line, a stream that breaks off, a plain JSON
// answer), error envelopes, errors in plain words, the stored demo
// session, the demo sign-in and "Attach this page"; what the page shows of
// an action (www/assistant/card.js): titles, labelled arguments, the
// approval card, Markdown as plain text. No network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import {
  API_BASE, ApiError, createClient, demoSignIn, explain, loadSession, pageContext, saveSession, SESSION_KEY, SNIPPET_CHARS,
} from '../../www/assistant/api.js';
import {
  actionTitle, approvalArgs, approvalCardParts, approvalSummary, argLabel, DECISIONS, nameIds, namesFromRun, plainText,
} from '../../www/assistant/card.js';

const NDJSON = 'application/x-ndjson';
const lines = (events) => events.map((e) => `${JSON.stringify(e)}\n`).join('');
const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
const ndjson = (text) => new Response(text, { status: 200, headers: { 'Content-Type': NDJSON } });

/** A fetch that records its calls and answers with `answer(url, init)`. */
function fakeFetch(answer) {
  const calls = [];
  const f = async (url, init = {}) => {
    calls.push({ url, init });
    return answer(url, init);
  };
  f.calls = calls;
  return f;
}

const RESULT = { ok: true, runId: 'r1', actionId: '', threadId: 't1', status: 'completed', summary: 'Hi', mode: 'assistant_text', model: 'm' };

describe('createClient', () => {
  test('sends the Bearer token when there is one, and none otherwise', async () => {
    let token = 'v1.abc.1.sig';
    const f = fakeFetch(() => json({ threads: [{ id: 't1' }] }));
    const api = createClient({ fetch: f, token: () => token });
    assert.deepEqual(await api.threads(), [{ id: 't1' }]);
    assert.equal(f.calls[0].url, `${API_BASE}api/agent/threads`);
    assert.equal(f.calls[0].init.headers.Authorization, 'Bearer v1.abc.1.sig');
    assert.equal(f.calls[0].init.credentials, 'same-origin');
    token = null;
    await api.threads();
    assert.equal('Authorization' in f.calls[1].init.headers, false);
  });

  test('paths: ids are encoded, approvals are the pending ones', async () => {
    const f = fakeFetch(() => json({ approvals: [] , thread: {}, messages: [] }));
    const api = createClient({ fetch: f, token: () => null });
    await api.thread('a/b');
    await api.run('r 1');
    await api.approvals();
    assert.deepEqual(f.calls.map((c) => c.url),
      [`${API_BASE}api/agent/threads/a%2Fb`, `${API_BASE}api/agent/runs/r%201`, `${API_BASE}api/agent/approvals?status=pending`]);
  });

  test('a streamed run: every event but the last, then the result', async () => {
    const f = fakeFetch(() => ndjson(lines([
      { type: 'status', status: 'planning', threadId: 't1' },
      { type: 'delta', delta: 'H' },
      { type: 'delta', delta: 'i' },
      { type: 'result', result: RESULT },
    ])));
    const api = createClient({ fetch: f, token: () => 'tok' });
    const seen = [];
    const result = await api.startRun({ prompt: 'hi', threadId: 't1' }, (ev) => seen.push(ev.type));
    assert.deepEqual(result, RESULT);
    assert.deepEqual(seen, ['status', 'delta', 'delta']);
    const { init } = f.calls[0];
    assert.equal(f.calls[0].url, `${API_BASE}api/agent/run/stream`);
    assert.equal(init.method, 'POST');
    assert.equal(init.headers.Accept, NDJSON);
    assert.equal(init.headers['Content-Type'], 'application/json');
    assert.deepEqual(JSON.parse(init.body), { prompt: 'hi', threadId: 't1' });
  });

  test('a decision: its body, and the resumed answer streamed', async () => {
    const f = fakeFetch(() => ndjson(lines([{ type: 'tool-result', name: 'shop.addReview', ok: true }, { type: 'result', result: RESULT }])));
    const api = createClient({ fetch: f, token: () => 'tok' });
    assert.deepEqual(await api.decide('ap 1', 'reject', 'not now'), RESULT);
    assert.equal(f.calls[0].url, `${API_BASE}api/agent/approvals/ap%201`);
    assert.deepEqual(JSON.parse(f.calls[0].init.body), { decision: 'reject', feedback: 'not now' });
    await api.decide('ap', 'approve_once', '');
    assert.deepEqual(JSON.parse(f.calls[1].init.body), { decision: 'approve_once' });
  });

  test('an error line is thrown with its code and message', async () => {
    const f = fakeFetch(() => ndjson(lines([{ type: 'delta', delta: 'x' }, { type: 'error', error: { code: 'upstream_unavailable', message: 'Gemini broke off' } }])));
    const api = createClient({ fetch: f, token: () => null });
    await assert.rejects(api.startRun({ prompt: 'x' }), (e) => e instanceof ApiError && e.code === 'upstream_unavailable' &&
      e.message === 'Gemini broke off' && explain(e) === 'Gemini broke off');
  });

  test('a stream that ends without a result is "broke off"', async () => {
    const f = fakeFetch(() => ndjson(lines([{ type: 'delta', delta: 'x' }])));
    const api = createClient({ fetch: f, token: () => null });
    await assert.rejects(api.startRun({ prompt: 'x' }), (e) => e.status === 0 && e.code === 'interrupted' &&
      /broke off/.test(explain(e)));
  });

  test('a plain JSON answer (no streaming on the way) is the answer', async () => {
    const api = createClient({ fetch: fakeFetch(() => json(RESULT)), token: () => null });
    assert.deepEqual(await api.startRun({ prompt: 'x' }), RESULT);
  });

  test('error envelopes become ApiErrors; a failed fetch is "could not reach"', async () => {
    const api = createClient({
      fetch: fakeFetch(() => json({ error: { code: 'conflict', message: 'approval x is already approved' } }, 409)),
      token: () => null,
    });
    await assert.rejects(api.decide('x', 'approve_once'), (e) => e.status === 409 && e.code === 'conflict' &&
      /already decided/.test(explain(e, 'approval')) && explain(e, 'run') === 'approval x is already approved');
    const down = createClient({ fetch: async () => { throw new TypeError('Failed to fetch'); }, token: () => null });
    await assert.rejects(down.threads(), (e) => e.status === 0 && /Could not reach the server/.test(explain(e)));
  });
});

describe('explain', () => {
  test('plain words by status', () => {
    assert.match(explain(new ApiError(401, 'unauthorized', 'session token rejected: expired')), /not signed in/);
    assert.match(explain(new ApiError(409, 'conflict', 'x'), 'approval'), /already decided/);
    assert.equal(explain(new ApiError(404, 'not_found', 'thread not found')), 'thread not found');
    assert.equal(explain(new ApiError(502, 'http_error', '')), 'The server answered HTTP 502.');
    assert.match(explain(new Error('boom')), /boom/);
  });
});

describe('the demo session', () => {
  const memory = () => {
    const m = new Map();
    return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), m };
  };

  test('kept for the tab until it expires', () => {
    const s = memory();
    saveSession(s, { user: 'demo', token: 'tok', expiresAt: 2000 });
    assert.deepEqual(loadSession(s, 1000), { user: 'demo', token: 'tok', expiresAt: 2000 });
    assert.equal(loadSession(s, 2001), null);
    assert.equal(s.m.has(SESSION_KEY), false, 'an expired one is forgotten');
    s.setItem(SESSION_KEY, '{not json');
    assert.equal(loadSession(s), null);
    assert.equal(loadSession(undefined), null);
  });

  test('demoSignIn reads the demo file; a site without one says so', async () => {
    const f = fakeFetch(() => json({ user: 'demo', token: 'v1.ZGVtbw.9.s', expiresAt: 9 }));
    assert.deepEqual(await demoSignIn(f), { user: 'demo', token: 'v1.ZGVtbw.9.s', expiresAt: 9 });
    /* next to the page's module, wherever the site put www/ */
    assert.equal(f.calls[0].url, new URL('../../www/assistant/demo-session.json', import.meta.url).href);
    for (const status of [404, 403]) {
      await assert.rejects(demoSignIn(fakeFetch(() => new Response('no', { status }))),
        (e) => e.code === 'no_demo_sign_in' && /site's own login/.test(explain(e, 'signin')));
    }
    await assert.rejects(demoSignIn(fakeFetch(() => json({ user: 'demo' }))), (e) => e.code === 'bad_session');
  });
});

describe('pageContext', () => {
  test('type page, the path, the title and the start of the main text', () => {
    const long = 'word '.repeat(200);
    const { window } = new JSDOM(`<!doctype html><title>A page</title><nav>skip me</nav><main><h1>Hello</h1>
      <p>  some   text\n here ${long}</p></main>`, { url: 'http://127.0.0.1:8080/assistant/?x=1#t=abc' });
    const ctx = pageContext(window.document);
    assert.equal(ctx.type, 'page');
    assert.equal(ctx.id, '/assistant/');
    assert.equal(ctx.title, 'A page');
    assert.ok(ctx.snippet.startsWith('Hello some text here word word'), ctx.snippet);
    assert.equal([...ctx.snippet].length, SNIPPET_CHARS);
    assert.equal(ctx.snippet.includes('skip me'), false);
  });
});

describe('session', () => {
  test('GET api/agent/session: signed in or not, from a 200 answer', async () => {
    const f = fakeFetch((url, init) => json(init.headers.Authorization
      ? { signedIn: true, user: 'demo' } : { signedIn: false, reason: 'sign in first' }));
    let token = 'v1.abc.1.sig';
    const api = createClient({ fetch: f, token: () => token });
    assert.deepEqual(await api.session(), { signedIn: true, user: 'demo' });
    assert.equal(f.calls[0].url, `${API_BASE}api/agent/session`);
    token = null;
    assert.deepEqual(await api.session(), { signedIn: false, reason: 'sign in first' });
    /* anything but signedIn: true is signed out */
    const odd = createClient({ fetch: fakeFetch(() => json({ signedIn: 'yes' })), token: () => null });
    assert.deepEqual(await odd.session(), { signedIn: false });
  });
});

describe('card: what the page shows of an action', () => {
  const { window } = new JSDOM('<!doctype html><body></body>');
  const doc = window.document;
  const REVIEW = { id: 'ap1', tool: 'shop.addReview', reason: 'it changes data',
    preview: 'shop.addReview {"productId":"p004","rating":5,"text":"Great"}' };

  test('titles and labels, not raw ids', () => {
    assert.equal(actionTitle('shop.addReview'), 'Add review');
    assert.equal(actionTitle('shop.searchProducts'), 'Search products');
    assert.equal(actionTitle('todo.set_step'), 'Set step');
    assert.equal(actionTitle(''), 'An action');
    assert.equal(argLabel('productId'), 'Product');
    assert.equal(argLabel('rating'), 'Rating');
    assert.equal(argLabel('max_price'), 'Max price');
    assert.equal(argLabel('id'), 'Id');
  });

  test('the arguments of a preview, and one line for a list', () => {
    assert.deepEqual(approvalArgs(REVIEW), { productId: 'p004', rating: 5, text: 'Great' });
    assert.equal(approvalArgs({ tool: 'x.y', preview: 'x.y {"a":"cut sho…' }), null);
    assert.equal(approvalSummary(REVIEW), 'Add review — Product: p004, Rating: 5, Text: Great');
    assert.equal(approvalSummary({ tool: 'x.doIt', preview: 'x.doIt {"a":"cut…' }), 'Do it — {"a":"cut…');
  });

  test('the card: title, labelled arguments, "Approve always" secondary', () => {
    const decided = [];
    const { card, buttons, outcome } = approvalCardParts(doc, REVIEW, { onDecide: (d) => decided.push(d) });
    assert.equal(card.querySelector('h3').textContent, 'Approval needed: Add review');
    assert.equal(card.getAttribute('aria-labelledby'), card.querySelector('h3').id);
    assert.deepEqual([...card.querySelectorAll('dt')].map((e) => e.textContent), ['Product', 'Rating', 'Text']);
    assert.deepEqual([...card.querySelectorAll('dd')].map((e) => e.textContent), ['p004', '5', 'Great']);
    assert.equal(card.textContent.includes('shop.addReview'), false, 'no raw id in the text');
    assert.equal(card.textContent.includes('productId'), false, 'no raw argument name');
    assert.deepEqual(buttons.map((b) => [b.textContent, b.className.replace('ga-decision__btn ga-decision__btn--', '')]),
      [['Approve', 'primary'], ['Approve always', 'secondary'], ['Reject', 'plain']]);
    /* decision.js's card, with the run API's parts */
    assert.ok(card.classList.contains('ga-decision') && card.classList.contains('approval'));
    assert.equal(card.querySelector('h3').title, 'shop.addReview', 'the raw id one hover away');
    assert.equal(card.querySelector('.reason').textContent, 'Why: it changes data');
    assert.ok(card.querySelector('.decide input[name="feedback"]'));
    buttons[1].click();
    assert.deepEqual(decided, ['approve_and_always_allow']);
    assert.equal(outcome.hidden, true);
    assert.deepEqual(DECISIONS.map((d) => d[0]), ['approve_once', 'approve_and_always_allow', 'reject']);
  });

  test('an id a run found shows with its name', () => {
    const run = { actions: [
      { tool: 'reply' },
      { tool: 'shop.searchProducts', output: { products: [{ _id: 'p004', name: 'USB-C Hub' }, { _id: 'p005' }], total: 2 } },
      { tool: 'x.y', output: { result: { items: [{ id: 'i1', name: 'Lamp' }] } } },
    ] };
    const names = namesFromRun(run);
    assert.deepEqual([...names], [['p004', 'USB-C Hub'], ['i1', 'Lamp']]);
    assert.deepEqual([...namesFromRun(null)], []);
    const { card } = approvalCardParts(doc, REVIEW, { onDecide() {} });
    nameIds(card, names);
    nameIds(card, names); /* once only */
    assert.deepEqual([...card.querySelectorAll('dd')].map((e) => e.textContent), ['USB-C Hub (p004)', '5', 'Great']);
  });

  test('a preview that is not JSON shows as written', () => {
    const { card } = approvalCardParts(doc, { id: 'a', tool: 'x.y', preview: 'x.y {"a":"cut…' }, { onDecide() {} });
    assert.equal(card.querySelector('p.preview').textContent, '{"a":"cut…');
  });

  test('Markdown as plain text (thread previews)', () => {
    assert.equal(plainText('Done: your **5-star** review of *USB-C Hub* is `posted`.', doc),
      'Done: your 5-star review of USB-C Hub is posted.');
    assert.equal(plainText('In your cart:\n- Mouse — $29.99\n- Hub\n\n# Total', doc), 'In your cart: Mouse — $29.99 Hub Total');
    assert.equal(plainText('[a link](https://example.org) and <b>raw</b>', doc), 'a link and <b>raw</b>');
    assert.equal(plainText('', doc), '');
  });
});
