// Tests of the chat widget (www/agent/chat.js) and its Markdown rendering
// (www/agent/markdown.js) in jsdom: the tool loop against a scripted fake
// fetch, the round-trip cap, Stop, errors and Retry, Markdown sanitising,
// keyboard sending, sessionStorage, and template binding. No network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { DEFAULT_ENDPOINT } from '../../www/agent/origin.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import {
  mountChat,
  bindTemplate,
  describeServerCall,
  toJSONSafe,
  OFFLINE_NOTICE,
  NOT_SET_UP,
  ERROR_WORDS,
  explainError,
  retryAfterSeconds,
  resultForModel,
} from '../../www/agent/chat.js';
import { readFileSync } from 'node:fs';
import { renderMarkdown, markdownToSafeHTML } from '../../www/agent/markdown.js';
import { createAutomation } from '../../www/agent/automation.js';
import { buildTools, toolDefinitions, describeCall } from '../../www/agent/tools.js';

/* --- fixtures ---------------------------------------------------------------------- */

function page(body = '<div id="chat"></div>') {
  const dom = new JSDOM(`<!doctype html><html><head></head><body>${body}</body></html>`, {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true,
  });
  const { window } = dom;
  /* the widget logs the server's error text for developers: keep the test output quiet */
  const warn = window.console.warn.bind(window.console);
  window.console.warn = (...a) => (String(a[0]).startsWith('gemini-chat:') ? undefined : warn(...a));
  return { window, document: window.document, container: window.document.getElementById('chat') };
}

/** JSON answer as the server sends it. */
function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/**
 * A fake fetch that answers from a script, in order; each step is a Response,
 * a function (request) → Response | Promise, or an Error to throw.
 * The widget's start-up GET …/geminiAgent.status is kept apart (in
 * `fn.statusRequests`) and answered by `status` (same kinds), by default
 * as a server without that route answers: 405 method_not_allowed.
 */
function scriptedFetch(steps, { status } = {}) {
  const requests = [];
  const statusRequests = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) {
      statusRequests.push({ url, init });
      const answer = status ?? json({ error: { code: 'method_not_allowed', message: 'use POST' } }, 405);
      if (answer instanceof Error) throw answer;
      return typeof answer === 'function' ? answer({ url, init }) : answer;
    }
    const request = { url, init, body: init.body ? JSON.parse(init.body) : undefined, signal: init.signal };
    requests.push(request);
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request #${requests.length} to ${url}`);
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step(request) : step;
  };
  fn.requests = requests;
  fn.statusRequests = statusRequests;
  return fn;
}

/** A cart held in memory, with an automation-like API and a tool catalog. */
function fakeCart() {
  const items = [
    { id: 'item-1', name: 'Wireless Mouse', price: 29.99, quantity: 1 },
    { id: 'item-2', name: 'USB-C Hub', price: 49.99, quantity: 2 },
    { id: 'item-3', name: 'Mechanical Keyboard', price: 89.99, quantity: 1 },
  ];
  const executed = [];
  const automation = {
    getPageState() {
      return {
        viewState: { items: items.map((i) => ({ ...i })), total: items.reduce((s, i) => s + i.price * i.quantity, 0) },
        interactions: [
          {
            refName: 'removeBtn',
            items: items.map((i) => ({ coordinate: [i.id, 'removeBtn'], element: 'button', events: ['click'], label: 'Remove' })),
          },
        ],
        customEvents: [],
      };
    },
  };
  const state = () => ({ ok: true, pageState: automation.getPageState() });
  const tools = () => [
    {
      name: 'click-remove-btn',
      description: 'Remove this item',
      category: 'page-automation',
      inputSchema: {
        type: 'object',
        properties: { coordinate: { type: 'string', enum: items.map((i) => `${i.id}/removeBtn`) } },
        required: ['coordinate'],
      },
      async execute({ coordinate }) {
        executed.push(['click-remove-btn', coordinate]);
        const id = String(coordinate).split('/')[0];
        const at = items.findIndex((i) => i.id === id);
        if (at < 0) return { ok: false, error: `Unknown coordinate "${coordinate}"` };
        items.splice(at, 1);
        return state();
      },
    },
    {
      name: 'click-increase-btn',
      description: 'Increase quantity',
      category: 'page-automation',
      inputSchema: { type: 'object', properties: { coordinate: { type: 'string' } }, required: ['coordinate'] },
      async execute({ coordinate }) {
        executed.push(['click-increase-btn', coordinate]);
        const item = items.find((i) => i.id === String(coordinate).split('/')[0]);
        if (!item) return { ok: false, error: `Unknown coordinate "${coordinate}"` };
        item.quantity += 1;
        return state();
      },
    },
    {
      name: 'get-page-state',
      description: 'WebMCP only',
      category: 'page-automation',
      inputSchema: { type: 'object', properties: {} },
      webmcpOnly: true,
      async execute() {
        return state();
      },
    },
  ];
  const describe = (name, args) => {
    const id = String(args?.coordinate ?? '').split('/')[0];
    const item = items.find((i) => i.id === id);
    return `Clicked ${name === 'click-remove-btn' ? 'Remove' : 'Increase'} on ${item ? item.name : id}`;
  };
  return { items, executed, automation, tools, describe };
}

function mount(t, opts = {}) {
  const { window, document, container } = page(opts.body);
  const cart = fakeCart();
  const storage = opts.storage === undefined ? window.sessionStorage : opts.storage;
  const chat = mountChat(container, {
    automation: cart.automation,
    tools: cart.tools,
    describeCall: cart.describe,
    fetch: opts.fetch,
    storage,
    ...opts.chat,
  });
  t?.after?.(() => chat.destroy());
  return { window, document, container, cart, chat, root: container.querySelector('.gemini-chat') };
}

const ref = (root, name) => root.querySelector(`[data-ref="${name}"]`);
const visible = (el) => Boolean(el) && !el.closest('[hidden]');
const tick = () => new Promise((r) => setTimeout(r, 0));
const done = (container) => new Promise((r) => container.addEventListener('gemini-chat:done', (e) => r(e.detail), { once: true }));

function key(window, target, init) {
  const ev = new window.KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(ev);
  return ev;
}

function type(window, input, text) {
  input.value = text;
  input.dispatchEvent(new window.Event('input', { bubbles: true }));
}

/* --- the loop ------------------------------------------------------------------------ */

describe('the tool loop', () => {
  test('two round trips of page calls, then the answer', async (t) => {
    const h1 = [{ role: 'user', parts: [{ text: 'Remove the hub' }] }, { role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'click-remove-btn' } }] }];
    const h2 = [...h1, { role: 'user', parts: [{ functionResponse: { id: 'call_1' } }] }, { role: 'model', parts: [{ text: 'two' }] }];
    const h3 = [...h2, { role: 'user', parts: [] }, { role: 'model', parts: [{ text: 'Done' }] }];
    const fetch = scriptedFetch([
      json({
        type: 'tool-calls',
        calls: [{ id: 'call_1', name: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' }, category: 'page-automation' }],
        history: h1,
        serverCalls: [{ name: 'shop.searchProducts', args: { query: 'hub' }, ok: true, ms: 2 }],
        model: 'gemini-3.8-flash',
        usage: { totalTokens: 10, geminiCalls: 1 },
      }),
      json({
        type: 'tool-calls',
        calls: [
          { id: 'call_2a', name: 'click-increase-btn', args: { coordinate: 'item-1/increaseBtn' }, category: 'page-automation' },
          { id: 'call_2b', name: 'click-remove-btn', args: { coordinate: 'item-9/removeBtn' }, category: 'page-automation' },
        ],
        history: h2,
      }),
      json({ type: 'response', message: 'Done — the **USB-C Hub** is gone.', history: h3, usage: { totalTokens: 30 }, serverCalls: [] }),
    ]);
    const { chat, cart, root } = mount(t, { fetch });

    await chat.send('Remove the hub');

    const [r1, r2, r3] = fetch.requests;
    assert.equal(fetch.requests.length, 3);
    assert.equal(r1.url, `${DEFAULT_ENDPOINT}/geminiAgent.sendMessage`);
    assert.equal(r1.init.method, 'POST');
    assert.equal(r1.init.headers['Content-Type'], 'application/json');
    assert.equal(r1.body.message, 'Remove the hub');
    assert.deepEqual(r1.body.history, []);
    assert.deepEqual(
      r1.body.toolDefinitions.map((d) => d.name),
      ['click-remove-btn', 'click-increase-btn'],
      'webmcpOnly tools are not declared to the server',
    );
    assert.ok(r1.body.toolDefinitions.every((d) => !('execute' in d) && d.category === 'page-automation'));
    assert.deepEqual(r1.body.toolDefinitions[0].inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-2/removeBtn', 'item-3/removeBtn']);
    assert.equal(r1.body.pageState.viewState.items.length, 3);

    assert.equal(r2.url, `${DEFAULT_ENDPOINT}/geminiAgent.submitToolResults`);
    assert.deepEqual(r2.body.history, h1, 'the history returned with the calls goes back');
    assert.equal(r2.body.results.length, 1);
    assert.equal(r2.body.results[0].callId, 'call_1');
    assert.equal(r2.body.results[0].isError, false);
    const res1 = JSON.parse(r2.body.results[0].result);
    assert.deepEqual(res1, { ok: true }, 'what happened, not the page again (the fresh page state travels as pageState)');
    assert.deepEqual(r2.body.toolDefinitions[0].inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-3/removeBtn'], 'fresh tool definitions');
    assert.deepEqual(r2.body.pageState.viewState.items.map((i) => i.id), ['item-1', 'item-3'], 'fresh page state');
    assert.equal(r2.body.message, undefined);

    assert.deepEqual(r3.body.history, h2);
    assert.deepEqual(r3.body.results.map((r) => [r.callId, r.isError]), [['call_2a', false], ['call_2b', true]], 'results in call order');
    assert.deepEqual(JSON.parse(r3.body.results[1].result), { ok: false, error: 'Unknown coordinate "item-9/removeBtn"' });
    assert.deepEqual(cart.executed, [['click-remove-btn', 'item-2/removeBtn'], ['click-increase-btn', 'item-1/increaseBtn'], ['click-remove-btn', 'item-9/removeBtn']]);

    const s = chat.state;
    assert.equal(s.isLoading, false);
    assert.deepEqual(s.history, h3);
    assert.deepEqual(s.usage, { totalTokens: 30 });
    assert.deepEqual(
      s.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Remove the hub'],
        ['action', 'Searched products (shop.searchProducts)'],
        ['action', 'Clicked Remove on USB-C Hub'],
        ['action', 'Clicked Increase on Wireless Mouse'],
        ['action', 'Clicked Remove on item-9 — failed: Unknown coordinate "item-9/removeBtn"'],
        ['assistant', 'Done — the **USB-C Hub** is gone.'],
      ],
    );
    assert.deepEqual(
      s.messages.map((m) => m.status),
      [undefined, 'ok', 'ok', 'ok', 'failed', undefined],
      'action lines say whether they were done',
    );
    assert.equal(s.lastUserMessage, 'Remove the hub');
    assert.equal(s.lastAssistantMessage, 'Done — the **USB-C Hub** is gone.');
    assert.equal(s.activity.length, 4);
    assert.ok(s.messages.every((m) => typeof m.id === 'string' && !Number.isNaN(Date.parse(m.timestamp))));

    // compact mode shows the answer as Markdown, and the progress lines
    const answer = root.querySelector('[data-bind="lastAssistantMessage"]');
    assert.ok(visible(answer));
    assert.equal(answer.querySelector('strong').textContent, 'USB-C Hub');
    const lines = [...root.querySelectorAll('[data-foreach="activity"] > li')].map((li) => li.textContent);
    assert.equal(lines[1], 'Clicked Remove on USB-C Hub');
    assert.equal(root.getAttribute('data-loading'), 'false');
    assert.equal(root.getAttribute('data-outcome'), 'response');
  });

  test('stops after maxRoundTrips browser round trips, with a visible message', async (t) => {
    let n = 0;
    const again = () => json({
      type: 'tool-calls',
      calls: [{ id: `c${++n}`, name: 'click-increase-btn', args: { coordinate: 'item-1/increaseBtn' } }],
      history: [{ role: 'model', parts: [{ text: String(n) }] }],
    });
    const fetch = scriptedFetch([again, again, again, again, again]);
    const { chat, cart, root } = mount(t, { fetch, chat: { maxRoundTrips: 3 } });

    await chat.send('Keep clicking');

    assert.equal(fetch.requests.length, 3, 'three requests, no more');
    assert.equal(cart.executed.length, 2, 'the calls of the last answer are not run');
    const last = chat.state.messages.at(-1);
    assert.equal(last.role, 'system');
    assert.match(last.content, /Stopped after 3 round trips/);
    assert.equal(chat.state.isLoading, false);
    assert.equal(chat.state.outcome, 'limit');
    assert.match(root.textContent, /Stopped after 3 round trips/);
  });

  test('the default cap is 15', async (t) => {
    const forever = () => json({ type: 'tool-calls', calls: [{ id: 'x', name: 'click-increase-btn', args: { coordinate: 'item-1/i' } }], history: [] });
    const fetch = scriptedFetch(Array(20).fill(forever));
    const { chat } = mount(t, { fetch });
    await chat.send('go');
    assert.equal(fetch.requests.length, 15);
  });

  test('Stop aborts the request in flight and ends the loop', async (t) => {
    let seen;
    const fetch = scriptedFetch([
      (req) =>
        new Promise((resolve, reject) => {
          seen = req.signal;
          req.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        }),
    ]);
    const { chat, root, container } = mount(t, { fetch });
    const finished = chat.send('Do something slow');
    await tick();
    assert.equal(chat.state.isLoading, true);
    assert.equal(root.getAttribute('data-loading'), 'true');
    const stopBtn = ref(root, 'stopLoop');
    assert.ok(visible(stopBtn), 'Stop is shown while loading');
    const ended = done(container);
    stopBtn.click();
    await finished;
    assert.ok(seen instanceof AbortSignal);
    assert.equal(seen.aborted, true, 'the signal passed to fetch is aborted');
    assert.deepEqual(await ended, { outcome: 'stopped' });
    assert.equal(chat.state.isLoading, false);
    assert.equal(chat.state.error, '', 'a stop is not an error');
    assert.equal(chat.state.messages.at(-1).content, 'Stopped.');
    assert.ok(!visible(ref(root, 'stopLoop')));
  });

  test('Stop between page calls: the rest are not run and nothing is submitted', async (t) => {
    const fetch = scriptedFetch([
      json({
        type: 'tool-calls',
        calls: [
          { id: 'a', name: 'slow', args: {} },
          { id: 'b', name: 'click-remove-btn', args: { coordinate: 'item-1/removeBtn' } },
        ],
        history: [],
      }),
    ]);
    const { container } = page();
    const cart = fakeCart();
    let release;
    const slow = { name: 'slow', description: '', inputSchema: { type: 'object', properties: {} }, execute: () => new Promise((r) => (release = r)) };
    const chat = mountChat(container, { automation: cart.automation, tools: () => [slow, ...cart.tools()], fetch, storage: null });
    t.after(() => chat.destroy());
    const finished = chat.send('two things');
    while (!release) await tick();
    chat.stop();
    release({ ok: true });
    await finished;
    assert.equal(fetch.requests.length, 1);
    assert.deepEqual(cart.executed, []);
    assert.equal(chat.state.messages.at(-1).content, 'Stopped.');
  });

  test('a blocked answer is shown as a note and ends the loop', async (t) => {
    const fetch = scriptedFetch([json({ type: 'blocked', message: 'Gemini declined to answer this (SAFETY). Try rephrasing your request.', history: [] })]);
    const { chat } = mount(t, { fetch });
    await chat.send('bad');
    assert.equal(chat.state.messages.at(-1).role, 'system');
    assert.match(chat.state.messages.at(-1).content, /SAFETY/);
    assert.equal(chat.state.outcome, 'blocked');
  });

  test('the offline demo model is announced', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'Hi', history: [], model: 'offline-demo-1' })]);
    const { chat, root } = mount(t, { fetch });
    const notice = root.querySelector('[data-bind="notice"]');
    assert.ok(!visible(notice));
    await chat.send('hi');
    assert.equal(chat.state.notice, OFFLINE_NOTICE);
    assert.ok(visible(notice));
    assert.equal(notice.textContent, 'Offline demo model — answers are scripted');
  });

  test('a real model shows no notice', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'Hi', history: [], model: 'gemini-3.8-flash-001' })]);
    const { chat } = mount(t, { fetch });
    await chat.send('hi');
    assert.equal(chat.state.notice, '');
  });
});

/* --- errors ----------------------------------------------------------------------------- */

describe('errors', () => {
  test('the error envelope is shown in plain words, and Retry sends the message again', async (t) => {
    const fetch = scriptedFetch([
      json({ error: { code: 'upstream_unavailable', message: 'Gemini answered 503 UNAVAILABLE after 3 attempts' } }, 503),
      json({ type: 'response', message: 'Hello!', history: [{ role: 'user', parts: [{ text: 'hi' }] }, { role: 'model', parts: [{ text: 'Hello!' }] }] }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('hi');

    const s = chat.state;
    assert.equal(s.isLoading, false);
    assert.equal(s.errorCode, 'upstream_unavailable');
    assert.equal(s.error, 'The AI service is not available right now. Retry in a moment.');
    assert.doesNotMatch(s.error, /Gemini answered|503/, "our words, not the server's");
    const box = root.querySelector('[data-bind="error"]');
    assert.ok(visible(box));
    assert.equal(box.textContent, s.error);
    assert.equal(root.querySelector('[role="alert"]').hidden, false);
    assert.equal(root.getAttribute('data-outcome'), 'error');
    const retry = ref(root, 'retry');
    assert.ok(visible(retry));

    const ended = done(root.parentElement);
    retry.click();
    await ended;
    assert.equal(fetch.requests.length, 2);
    assert.equal(fetch.requests[1].url, `${DEFAULT_ENDPOINT}/geminiAgent.sendMessage`);
    assert.equal(fetch.requests[1].body.message, 'hi');
    assert.equal(chat.state.error, '');
    assert.ok(!visible(box));
    assert.equal(chat.state.lastAssistantMessage, 'Hello!');
    assert.equal(chat.state.messages.filter((m) => m.role === 'user').length, 1, 'a retry does not repeat the user message');
  });

  test('a network failure and a non-JSON answer are explained; the chat stays usable', async (t) => {
    const fetch = scriptedFetch([
      new TypeError('Failed to fetch'),
      new Response('<html><body>502 Bad Gateway</body></html>', { status: 502, headers: { 'Content-Type': 'text/html' } }),
      new Response('not json', { status: 200 }),
      json({ error: { code: 'upstream_rate_limited', message: 'Gemini is rate limiting' } }, 503, { 'Retry-After': '7' }),
      json({ type: 'response', message: 'ok', history: [] }),
    ]);
    const { chat } = mount(t, { fetch });
    await chat.send('one');
    assert.equal(chat.state.errorCode, 'network');
    assert.match(chat.state.error, /Could not reach the server/);
    await chat.send('two');
    assert.equal(chat.state.errorCode, 'http_502');
    assert.match(chat.state.error, /HTTP 502/);
    await chat.send('three');
    assert.equal(chat.state.errorCode, 'bad_answer');
    await chat.send('four');
    assert.match(chat.state.error, /busy.*7 s/);
    await chat.send('five');
    assert.equal(chat.state.error, '');
    assert.equal(chat.state.lastAssistantMessage, 'ok');
  });

  test('Retry after a failed submitToolResults re-sends the same results without re-running tools', async (t) => {
    const h1 = [{ role: 'model', parts: [{ functionCall: { name: 'click-remove-btn' } }] }];
    const fetch = scriptedFetch([
      json({ type: 'tool-calls', calls: [{ id: 'k1', name: 'click-remove-btn', args: { coordinate: 'item-3/removeBtn' } }], history: h1 }),
      json({ error: { code: 'upstream_timeout', message: 'Gemini did not answer in time' } }, 504),
      json({ type: 'response', message: 'Removed.', history: [...h1, { role: 'model', parts: [{ text: 'Removed.' }] }] }),
    ]);
    const { chat, cart } = mount(t, { fetch });
    await chat.send('remove the keyboard');
    assert.match(chat.state.error, /took too long/);
    assert.equal(chat.state.canRetry, true);
    await chat.retry();
    assert.equal(cart.executed.length, 1, 'the tool ran once');
    const [, failed, retried] = fetch.requests;
    assert.equal(retried.url, `${DEFAULT_ENDPOINT}/geminiAgent.submitToolResults`);
    assert.deepEqual(retried.body.results, failed.body.results);
    assert.deepEqual(retried.body.history, h1);
    assert.equal(chat.state.lastAssistantMessage, 'Removed.');
  });

  test('a tool that throws becomes an error result for the model', async (t) => {
    const fetch = scriptedFetch([
      json({ type: 'tool-calls', calls: [{ id: 'z', name: 'boom', args: {} }, { id: 'y', name: 'no-such-tool', args: {} }], history: [] }),
      json({ type: 'response', message: 'Sorry', history: [] }),
    ]);
    const { container } = page();
    const boom = { name: 'boom', description: '', inputSchema: { type: 'object', properties: {} }, execute: async () => { throw new Error('kaput'); } };
    const chat = mountChat(container, { tools: () => [boom], fetch, storage: null });
    t.after(() => chat.destroy());
    await chat.send('x');
    const results = fetch.requests[1].body.results;
    assert.deepEqual(results.map((r) => [r.callId, r.isError]), [['z', true], ['y', true]]);
    assert.equal(JSON.parse(results[0].result).error, 'kaput');
    assert.match(JSON.parse(results[1].result).error, /no page tool named "no-such-tool"/);
  });
});

/* --- Markdown ------------------------------------------------------------------------------ */

describe('Markdown from the model is inert', () => {
  const { window, document } = page();
  const nasty = [
    'Hi <script>alert(1)</script>',
    '<img src=x onerror="alert(2)">',
    '[click me](javascript:alert(3))',
    '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCg0KTwvc2NyaXB0Pg==)',
    '![tracker](https://evil.example/pixel.png)',
    '<a href="https://ok.example/" onclick="alert(5)">raw link</a>',
    '<iframe src="https://evil.example/"></iframe>',
    '<svg onload="alert(6)"></svg>',
    '[fine](https://example.com/docs) and [local](/help) and **bold** `code`',
    '- [x] done\n- [ ] todo',
  ].join('\n\n');

  test('no script, no handlers, no javascript: or data: links, no images', () => {
    const box = document.createElement('div');
    box.append(renderMarkdown(nasty, document));
    for (const sel of ['script', 'img', 'iframe', 'svg', 'input', 'style', '[onerror]', '[onclick]', '[onload]', '[style]'])
      assert.equal(box.querySelector(sel), null, `${sel} must not survive`);
    for (const a of box.querySelectorAll('a[href]')) {
      assert.match(a.getAttribute('href'), /^(https:|\/)/, `href ${a.getAttribute('href')}`);
      assert.equal(a.getAttribute('target'), '_blank');
      assert.equal(a.getAttribute('rel'), 'noopener noreferrer');
    }
    const hrefs = [...box.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'));
    assert.deepEqual(hrefs, ['https://evil.example/pixel.png', 'https://example.com/docs', '/help'], 'images become links');
    // raw HTML is shown as text, so the reader sees what the model wrote
    assert.match(box.textContent, /<script>alert\(1\)<\/script>/);
    assert.match(box.textContent, /<img src=x onerror="alert\(2\)">/);
    assert.equal(box.querySelector('strong').textContent, 'bold');
    assert.equal(box.querySelector('code').textContent, 'code');
    assert.match(box.textContent, /\[x\] done/);
  });

  test('markdownToSafeHTML gives the same inert HTML', () => {
    const html = markdownToSafeHTML('[x](javascript:alert(1)) <b onmouseover=alert(1)>b</b>', window);
    assert.doesNotMatch(html, /javascript:|<b[\s>]/i, 'no link target, no <b> element');
    assert.match(html, /&lt;b onmouseover=alert\(1\)&gt;/, 'the raw tag is shown as text');
    assert.match(html, /<a>x<\/a>/);
  });

  test('in the widget, a hostile answer executes nothing', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: nasty, history: [] })]);
    const { chat, root } = mount(t, { fetch, chat: { expanded: true } });
    await chat.send('show me');
    assert.equal(root.querySelector('script, img, iframe, svg, [onerror], [onclick], [onload]'), null);
    assert.equal(root.querySelector('a[href^="javascript"]'), null);
    const shown = root.querySelector('.gemini-chat__messages [data-role="assistant"] .gemini-chat__content:not([hidden])');
    assert.ok(shown.querySelector('a[href="https://example.com/docs"]'));
  });

  test('user messages are never parsed as Markdown or HTML', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'ok', history: [] })]);
    const { chat, root } = mount(t, { fetch, chat: { expanded: true } });
    await chat.send('<img src=x onerror=alert(1)> **not bold**');
    const user = root.querySelector('.gemini-chat__messages [data-role="user"]');
    const shown = user.querySelector('.gemini-chat__content:not([hidden])');
    assert.equal(shown.querySelector('*'), null, 'plain text only');
    assert.equal(shown.textContent, '<img src=x onerror=alert(1)> **not bold**');
    assert.equal(user.querySelector('img, script, [onerror]'), null, 'not even in the hidden branch');
    assert.equal(root.querySelector('[data-bind="lastUserMessage"]').textContent, '<img src=x onerror=alert(1)> **not bold**');
  });
});

/* --- input ---------------------------------------------------------------------------------- */

describe('sending from the input', () => {
  test('Enter sends, Shift+Enter does not, blank input does not, no double send while loading', async (t) => {
    let answer;
    const fetch = scriptedFetch([() => new Promise((r) => (answer = r)), json({ type: 'response', message: 'second', history: [] })]);
    const { window, chat, root, container } = mount(t, { fetch });
    const input = ref(root, 'messageInput');
    const send = ref(root, 'sendMessage');
    assert.equal(input.localName, 'textarea');
    assert.equal(send.disabled, true, 'Send is disabled while the input is blank');

    type(window, input, '   ');
    assert.equal(key(window, input).defaultPrevented, true);
    assert.equal(fetch.requests.length, 0, 'blank input is not sent');

    type(window, input, 'first line');
    assert.equal(send.disabled, false);
    const shift = key(window, input, { shiftKey: true });
    assert.equal(shift.defaultPrevented, false, 'Shift+Enter keeps its new line');
    assert.equal(fetch.requests.length, 0);

    const ended = done(container);
    key(window, input);
    await tick();
    assert.equal(fetch.requests.length, 1);
    assert.equal(fetch.requests[0].body.message, 'first line');
    assert.equal(input.value, '', 'the input is cleared once sent');
    assert.equal(chat.state.isLoading, true);

    type(window, input, 'second');
    assert.equal(send.disabled, true, 'Send is disabled while a request is in flight');
    key(window, input);
    send.click();
    await chat.send('third');
    assert.equal(fetch.requests.length, 1, 'nothing else is sent while loading');
    assert.equal(input.value, 'second', 'the draft is kept');

    answer(json({ type: 'response', message: 'first', history: [] }));
    await ended;
    assert.equal(send.disabled, false);
    const ended2 = done(container);
    send.click();
    await ended2;
    assert.equal(fetch.requests.length, 2);
    assert.equal(fetch.requests[1].body.message, 'second');
  });

  test('the Send button submits without reloading the page', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'ok', history: [] })]);
    const { window, root, container } = mount(t, { fetch });
    type(window, ref(root, 'messageInput'), 'hello');
    const ended = done(container);
    const form = root.querySelector('form');
    let submitted = 0;
    form.addEventListener('submit', (e) => { submitted += e.defaultPrevented ? 0 : 1; });
    ref(root, 'sendMessage').click();
    await ended;
    assert.equal(fetch.requests.length, 1);
    assert.equal(submitted, 0, 'no native form submission');
  });
});

/* --- modes, persistence ------------------------------------------------------------------------ */

describe('modes and persistence', () => {
  test('compact by default; toggleExpand shows the whole history', async (t) => {
    const fetch = scriptedFetch([
      json({ type: 'response', message: 'A1', history: [1] }),
      json({ type: 'response', message: 'A2', history: [1, 2] }),
      json({ type: 'response', message: 'A3', history: [1, 2, 3] }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Q1');
    await chat.send('Q2');
    const list = root.querySelector('[data-foreach="messages"]');
    const compact = root.querySelector('.gemini-chat__compact');
    assert.ok(!visible(list) && visible(compact));
    assert.equal(root.querySelector('[data-bind="lastUserMessage"]').textContent, 'Q2');
    assert.equal(root.querySelector('[data-bind="lastAssistantMessage"]').textContent.trim(), 'A2');
    const toggle = ref(root, 'toggleExpand');
    assert.equal(toggle.getAttribute('aria-expanded'), 'false');
    toggle.click();
    assert.equal(chat.state.isExpanded, true);
    assert.equal(toggle.getAttribute('aria-expanded'), 'true');
    assert.equal(root.getAttribute('data-expanded'), 'true');
    assert.ok(visible(list) && !visible(compact));
    assert.deepEqual([...list.children].map((li) => li.getAttribute('data-role')), ['user', 'assistant', 'user', 'assistant']);
    assert.deepEqual([...list.children].map((li) => li.getAttribute('data-id')), chat.state.messages.map((m) => m.id));
    assert.equal(list.getAttribute('aria-live'), 'polite');
    await chat.send('Q3');
    assert.equal(root.querySelector('[data-bind="lastAssistantMessage"]').textContent.trim(), 'A3', 'hidden bindings follow the state too');
    const shownAnswer = list.children[1].querySelector('.gemini-chat__content:not([hidden])');
    assert.equal(shownAnswer.textContent.trim(), 'A1', 'Markdown is rendered once the list is shown');
  });

  test('history and messages survive a reload of the tab (sessionStorage)', async (t) => {
    const history = [{ role: 'user', parts: [{ text: 'hi' }] }, { role: 'model', parts: [{ text: 'Hello', thoughtSignature: 'c2ln' }] }];
    const fetch = scriptedFetch([json({ type: 'response', message: 'Hello', history, model: 'offline-demo' })]);
    const { window, document, chat, root } = mount(t, { fetch, chat: { storageKey: 'k' } });
    await chat.send('hi');
    root.querySelector('[data-ref="toggleExpand"]').click();
    const saved = JSON.parse(window.sessionStorage.getItem('k'));
    assert.deepEqual(saved.history, history);
    assert.deepEqual(saved.messages.map((m) => m.content), ['hi', 'Hello']);

    // "reload": a new widget on the same storage
    chat.destroy();
    const container2 = document.createElement('div');
    document.body.append(container2);
    const fetch2 = scriptedFetch([json({ type: 'response', message: 'Again', history: [...history, 1, 2] })]);
    const again = mountChat(container2, { fetch: fetch2, storageKey: 'k', storage: window.sessionStorage });
    t.after(() => again.destroy());
    assert.deepEqual(again.state.messages.map((m) => m.content), ['hi', 'Hello']);
    assert.deepEqual(again.state.history, history);
    assert.equal(again.state.isExpanded, true, 'the mode is kept too');
    assert.equal(again.state.notice, OFFLINE_NOTICE);
    assert.equal(container2.querySelectorAll('[data-foreach="messages"] > li').length, 2);
    await again.send('more');
    assert.deepEqual(fetch2.requests[0].body.history, history, 'the restored history is sent');
  });

  test('clearChat forgets the conversation', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'x', history: [1] })]);
    const { window, chat, root } = mount(t, { fetch, chat: { storageKey: 'c' } });
    await chat.send('q');
    ref(root, 'clearChat').click();
    assert.deepEqual(chat.state.messages, []);
    assert.deepEqual(chat.state.history, []);
    assert.deepEqual(JSON.parse(window.sessionStorage.getItem('c')).messages, []);
  });

  test('broken or foreign storage content is ignored', (t) => {
    const { window, container } = page();
    window.sessionStorage.setItem('gemini-agent:history', '{not json');
    const chat = mountChat(container, { fetch: scriptedFetch([]) });
    t.after(() => chat.destroy());
    assert.deepEqual(chat.state.messages, []);
  });
});

/* --- templates ---------------------------------------------------------------------------- */

describe('templates', () => {
  test('a page template with the same tags gets the same behaviour', async (t) => {
    const body = `
      <template id="gemini-chat">
        <div class="my-chat">
          <ul class="log" data-foreach="messages"><li><b data-bind="role"></b>: <span data-bind="content"></span></li></ul>
          <p class="answer" data-bind="lastAssistantMessage" data-format="markdown"></p>
          <em class="busy" data-if="isLoading">working…</em>
          <span class="idle" data-if="!isLoading">idle</span>
          <strong class="oops" data-if="error" data-bind="error"></strong>
          <input data-ref="messageInput" aria-label="Ask">
          <button data-ref="sendMessage">Ask</button>
        </div>
      </template>
      <div id="chat"></div>`;
    let answer;
    const fetch = scriptedFetch([() => new Promise((r) => (answer = r))]);
    const { window, container } = page(body);
    const chat = mountChat(container, { fetch, storage: null });
    t.after(() => chat.destroy());
    const root = container.querySelector('.gemini-chat');
    assert.ok(root.querySelector('.my-chat'), 'the page template is used');
    assert.equal(root.querySelector('.gemini-chat__panel'), null, 'not the default one');
    assert.equal(root.getAttribute('data-agent'), 'off');
    assert.ok(visible(root.querySelector('.idle')) && !visible(root.querySelector('.busy')));

    const input = root.querySelector('input');
    type(window, input, 'Hi *there*');
    const ended = done(container);
    key(window, input);
    await tick();
    assert.ok(visible(root.querySelector('.busy')) && !visible(root.querySelector('.idle')));
    answer(json({ type: 'response', message: 'Hello *you*', history: [] }));
    await ended;
    assert.equal(root.querySelector('.answer em').textContent, 'you');
    const rows = [...root.querySelectorAll('.log > li')];
    assert.deepEqual(rows.map((li) => li.textContent), ['user: Hi *there*', 'assistant: Hello *you*']);
    assert.deepEqual(rows.map((li) => li.dataset.role), ['user', 'assistant']);
    assert.ok(!visible(root.querySelector('.oops')));
  });

  test('a <template> inside the container wins over the default', (t) => {
    const { container } = page('<div id="chat"><template><p class="mine" data-bind="lastUserMessage"></p></template>fallback</div>');
    const chat = mountChat(container, { fetch: scriptedFetch([]), storage: null });
    t.after(() => chat.destroy());
    assert.ok(container.querySelector('.gemini-chat .mine'));
    assert.doesNotMatch(container.textContent, /fallback/);
  });

  test('bindTemplate: data-if expressions, keyed data-foreach, text binding', () => {
    const { document } = page();
    const root = document.createElement('div');
    const tpl = document.createElement('template');
    tpl.innerHTML = `
      <p class="a" data-if="flag">on</p><p class="b" data-if="!flag">off</p>
      <p class="c" data-if="mode==full">full</p><p class="d" data-if="mode!=full">not full</p>
      <p class="e" data-if="list">has items</p>
      <ol data-foreach="list"><li><span data-bind="content"></span><i data-if="role==user">u</i><time data-bind="timestamp"></time><em data-bind="outer"></em></li></ol>`;
    root.append(tpl.content.cloneNode(true));
    const view = bindTemplate(root);
    const shown = (sel) => !root.querySelector(sel).hidden;

    view.update({ flag: true, mode: 'full', list: [], outer: 'O' });
    assert.ok(shown('.a') && !shown('.b') && shown('.c') && !shown('.d') && !shown('.e'));

    const ts = '2025-01-02T03:04:05.000Z';
    view.update({ flag: false, mode: 'compact', outer: 'O', list: [{ id: 'x', content: '<b>X</b>', role: 'user', timestamp: ts }, { id: 'y', content: 'Y', role: 'assistant' }] });
    assert.ok(!shown('.a') && shown('.b') && !shown('.c') && shown('.d') && shown('.e'));
    const ol = root.querySelector('ol');
    const [x, y] = ol.children;
    assert.equal(x.dataset.id, 'x');
    assert.equal(x.querySelector('span').textContent, '<b>X</b>', 'text, never HTML');
    assert.equal(x.querySelector('b'), null);
    assert.equal(x.querySelector('i').hidden, false);
    assert.equal(y.querySelector('i').hidden, true);
    assert.equal(x.querySelector('time').getAttribute('datetime'), ts);
    assert.equal(x.querySelector('em').textContent, 'O', 'item scope falls back to the root state');

    view.update({ list: [{ id: 'z', content: 'Z' }, { id: 'y', content: 'Y2', role: 'assistant' }] });
    assert.deepEqual([...ol.children].map((li) => li.dataset.id), ['z', 'y']);
    assert.equal(ol.children[1], y, 'kept items keep their node');
    assert.equal(y.querySelector('span').textContent, 'Y2');
    assert.equal(x.isConnected, false);
  });

  test('the widget root is invisible to the page automation', (t) => {
    const { window, container } = page('<button data-ref="buyBtn">Buy</button><div id="chat"></div>');
    const chat = mountChat(container, { fetch: scriptedFetch([]), storage: null });
    t.after(() => chat.destroy());
    const refs = createAutomation(window.document).getPageState().interactions.map((i) => i.refName);
    assert.deepEqual(refs, ['buyBtn']);
  });
});

/* --- with the real automation and tools ------------------------------------------------------- */

describe('with automation.js and tools.js', () => {
  test('page calls act on the page; data-agent="off" never reaches the server', async (t) => {
    const body = `
      <table><tbody data-foreach="items">
        <tr data-id="item-1"><td>Wireless Mouse</td><td><button data-ref="removeBtn">Remove</button></td></tr>
        <tr data-id="item-2"><td>USB-C Hub</td><td><button data-ref="removeBtn">Remove</button></td></tr>
      </tbody></table>
      <button data-ref="applyCouponBtn" disabled>Apply coupon</button>
      <fieldset data-agent="off"><input data-ref="cardNumberInput" value="4242424242424242"></fieldset>
      <div id="chat"></div>`;
    const { document, container } = page(body);
    const automation = createAutomation(document);
    automation.setViewState({ items: [{ id: 'item-1', name: 'Wireless Mouse' }, { id: 'item-2', name: 'USB-C Hub' }] });
    for (const btn of document.querySelectorAll('[data-ref="removeBtn"]'))
      btn.addEventListener('click', () => btn.closest('tr').remove());
    const fetch = scriptedFetch([
      json({ type: 'tool-calls', calls: [{ id: 'c1', name: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' } }], history: [] }),
      json({ type: 'response', message: 'Removed the hub.', history: [] }),
    ]);
    const chat = mountChat(container, {
      automation,
      tools: () => buildTools(automation),
      toolDefinitions,
      describeCall,
      fetch,
      storage: null,
    });
    t.after(() => chat.destroy());
    await chat.send('remove the hub');

    assert.equal(document.querySelector('[data-id="item-2"]'), null, 'the page changed');
    const line = chat.state.messages.find((m) => m.role === 'action');
    assert.equal(line.content, 'Clicked Remove on USB-C Hub');
    const sent = JSON.stringify(fetch.requests.map((r) => r.body));
    assert.doesNotMatch(sent, /4242424242424242|cardNumberInput/);
    assert.doesNotMatch(sent, /apply-coupon|applyCouponBtn/, 'disabled buttons are not offered');
    assert.doesNotMatch(sent, /sendMessage|messageInput|toggleExpand/, "the widget's own controls are not offered");
    assert.ok(fetch.requests[0].body.toolDefinitions.some((d) => d.name === 'click-remove-btn'));
    assert.deepEqual(fetch.requests[1].body.results.map((r) => r.isError), [false]);
  });
});

/* --- the one-script-tag entry ------------------------------------------------------------------ */

describe('index.js', () => {
  test('start() wires automation, tools, the widget and the styles', async () => {
    const { window, document } = page('<button data-ref="buyBtn">Buy</button><div data-gemini-chat data-max-round-trips="2"></div>');
    const { start } = await import('../../www/agent/index.js');
    let n = 0;
    const fetch = async (url, init) =>
      init?.method === 'GET' ? json({ ready: true, model: 'gemini-3.8-flash' }) : json({ type: 'tool-calls', calls: [{ id: `c${++n}`, name: 'click-buy-btn', args: {} }], history: [] });
    const agent = start({ doc: document, chat: { fetch } });
    try {
      assert.equal(start({ doc: document }), agent, 'a second start returns the running agent');
      assert.equal(window.geminiAgent, agent);
      assert.equal(typeof window.pageAgent.setViewState, 'function');
      const root = document.querySelector('[data-gemini-chat] > .gemini-chat');
      assert.equal(root.getAttribute('data-agent'), 'off');
      assert.ok(!root.classList.contains('gemini-chat--floating'));
      assert.match(document.querySelector('link[rel="stylesheet"][data-gemini-chat-css]').href, /\/www\/agent\/chat\.css$/);
      assert.ok(agent.tools().some((t) => t.name === 'click-buy-btn'));
      await agent.chat.send('buy');
      assert.equal(n, 2, 'data-max-round-trips is honoured');
      assert.match(agent.chat.state.messages.find((m) => m.role === 'action').content, /Clicked Buy/);
    } finally {
      agent.dispose();
    }
    assert.equal(window.geminiAgent, undefined);
    assert.equal(document.querySelector('.gemini-chat'), null);
  });

  test('without a container the widget floats', async () => {
    const { document } = page('<p>no container</p>');
    const { start } = await import('../../www/agent/index.js');
    const agent = start({ doc: document });
    try {
      assert.ok(document.querySelector('body > [data-gemini-chat][data-floating] > .gemini-chat.gemini-chat--floating'));
    } finally {
      agent.dispose();
    }
  });
});

/* --- small helpers ---------------------------------------------------------------------------- */

describe('helpers', () => {
  test('describeServerCall', () => {
    assert.equal(describeServerCall({ name: 'shop.searchProducts', ok: true }), 'Searched products (shop.searchProducts)');
    assert.equal(describeServerCall({ name: 'clarification.ask', ok: true }), 'Asked (clarification.ask)', 'a question waits: it was asked, not run');
    assert.equal(describeServerCall({ name: 'shop.getProductBySlug' }), 'Got product by slug (shop.getProductBySlug)');
    assert.equal(describeServerCall({ name: 'shop.addReview', ok: false }), 'Added review (shop.addReview) — failed');
    assert.equal(describeServerCall({ name: 'shop.listCategories' }), 'Listed categories (shop.listCategories)');
    assert.equal(describeServerCall({ name: 'moodTracker.submitMood' }), 'Submitted mood (moodTracker.submitMood)');
    assert.equal(describeServerCall({ name: 'weather.forecast' }), 'Ran forecast (weather.forecast)');
  });

  test('toJSONSafe drops DOM nodes and functions', () => {
    const { document } = page();
    const out = toJSONSafe({ a: 1, el: document.body, f() {}, list: [{ element: document.createElement('b'), x: 2 }] });
    assert.deepEqual(out, { a: 1, list: [{ x: 2 }] });
  });
});

/* --- every error code in plain words ------------------------------------------------------------ */

describe('error words', () => {
  /* every code the server sends: the responder's, then nginx's own (nginx/gemini-agent.conf) */
  const CODES = [
    ['invalid_json', 400], ['bad_request', 400], ['bad_content_length', 400], ['incomplete_body', 400],
    ['not_found', 404], ['unknown_action', 404], ['method_not_allowed', 405], ['payload_too_large', 413],
    ['page_state_too_large', 413], ['unsupported_media_type', 415], ['schema_violation', 422],
    ['action_failed', 500], ['config_error', 500], ['not_configured', 503], ['invalid_history', 400],
    ['tool_name_conflict', 400], ['upstream_auth', 502], ['upstream_rejected', 502],
    ['upstream_rate_limited', 503], ['upstream_unavailable', 503], ['upstream_timeout', 504],
    ['upstream_bad_response', 502], ['internal_error', 500], ['overloaded', 503],
    ['rate_limited', 429], ['responder_unavailable', 502], ['service_unavailable', 503], ['responder_timeout', 504],
    /* signed history, approvals and the budget */
    ['history_tampered', 400], ['approval_invalid', 403], ['budget_exhausted', 429], ['budget_unavailable', 503],
  ];
  const SERVER_SAID = 'SERVER-TEXT /etc/gemini-agent/.gemini.yaml Gemini said 503 UNAVAILABLE';
  const explain = (code, status, retryAfter = null) =>
    explainError(status, { error: { code, message: SERVER_SAID } }, retryAfter, Date.parse('2030-01-01T00:00:00Z'));

  test('each code has its own words, never the server text, never a generic fallback', () => {
    const seen = new Map();
    for (const [code, status] of CODES) {
      assert.ok(Object.hasOwn(ERROR_WORDS, code), `${code} is in the table`);
      const err = explain(code, status);
      assert.equal(err.code, code);
      assert.ok(err.message.length > 20, `${code}: ${err.message}`);
      assert.doesNotMatch(err.message, /SERVER-TEXT|\.yaml|\/etc\/|HTTP \d{3}|UNAVAILABLE/, `${code}: our words only`);
      assert.match(err.message, /\.$/, `${code}: a sentence`);
      assert.ok(!seen.has(err.message), `${code} shares its words with ${seen.get(err.message)}`);
      seen.set(err.message, code);
    }
    assert.deepEqual(Object.keys(ERROR_WORDS).sort(), CODES.map(([c]) => c).sort(), 'no stale codes in the table');
  });

  test('the page state over the limit is not the conversation over the limit', () => {
    const state = explain('page_state_too_large', 413);
    assert.match(state.message, /this page sends more state than the server accepts/i);
    assert.doesNotMatch(state.message, /new chat/i, 'a new chat cannot help');
    assert.equal(state.retry, false);
    const body = explain('payload_too_large', 413);
    assert.match(body.message, /conversation has grown too large/);
    assert.match(body.message, /Start a new chat/);
    assert.equal(body.retry, false);
    /* a 413 without our envelope (another proxy) is read as the body */
    assert.match(explainError(413, undefined).message, /conversation has grown too large/);
    /* too large with no conversation yet: the page's doing, a new chat cannot help */
    const first = explainError(413, { error: { code: 'payload_too_large' } }, null, 0, { emptyHistory: true });
    assert.equal(first.code, 'payload_too_large');
    assert.equal(first.message, state.message);
    assert.equal(first.retry, false);
  });

  test('in the widget: too large on the first message is the page, later the conversation', async (t) => {
    const big = () => json({ error: { code: 'payload_too_large', message: 'The request body is too large.' } }, 413);
    const fetch = scriptedFetch([big(), json({ type: 'response', message: 'ok', history: [{ role: 'user', parts: [{ text: 'a' }] }] }), big()]);
    const { chat } = mount(t, { fetch });
    await chat.send('first');
    assert.match(chat.state.error, /this page sends more state/i);
    await chat.send('second');
    assert.equal(chat.state.error, '');
    await chat.send('third');
    assert.match(chat.state.error, /conversation has grown too large.*new chat/);
  });

  test('not_configured: the owner can fix it; no server path', () => {
    const err = explain('not_configured', 503);
    assert.equal(err.message, 'The assistant is not set up yet. The site owner can fix this.');
    assert.equal(err.message, NOT_SET_UP);
    assert.equal(err.retry, false);
  });

  test('rate limits say when to try again (Retry-After in seconds or as a date)', () => {
    assert.equal(explain('upstream_rate_limited', 503, '7').message, 'The AI service is busy right now. Try again in 7 s.');
    assert.equal(explain('rate_limited', 429, '30').message, 'Too many requests from here right now. Try again in 30 s.');
    assert.equal(explain('rate_limited', 429, 'Tue, 01 Jan 2030 00:00:12 GMT').message, 'Too many requests from here right now. Try again in 12 s.');
    assert.equal(explain('upstream_rate_limited', 503, '600').message, 'The AI service is busy right now. Try again in 10 min.');
    assert.equal(explain('rate_limited', 429).message, 'Too many requests from here right now. Wait a moment, then retry.');
    assert.equal(explain('rate_limited', 429, 'soon').message, 'Too many requests from here right now. Wait a moment, then retry.');
    assert.match(explainError(429, undefined, '3').message, /Try again in 3 s\./, 'a 429 without the envelope');
    assert.equal(explain('upstream_rate_limited', 503, '7').retry, true);
    assert.equal(retryAfterSeconds(''), null);
    assert.equal(retryAfterSeconds('0'), 0);
  });

  test('signed history, approvals and the budget have their own words', () => {
    const tampered = explain('history_tampered', 400);
    assert.match(tampered.message, /could not verify this conversation.*Start a new chat/);
    assert.equal(tampered.retry, false, 'the same history would be refused again');
    const ticket = explain('approval_invalid', 403);
    assert.match(ticket.message, /^This approval has expired or was already used/);
    assert.equal(ticket.retry, false, 'a ticket is used once');
    /* a budget: when to try again, from Retry-After, up to a day away */
    assert.equal(explain('budget_exhausted', 429, '42').message, 'The assistant has reached its usage limit for now. Try again in 42 s.');
    assert.equal(explain('budget_exhausted', 429, '1800').message, 'The assistant has reached its usage limit for now. Try again in 30 min.');
    assert.equal(explain('budget_exhausted', 429, String(5 * 3600 + 60)).message, 'The assistant has reached its usage limit for now. Try again in 6 h.');
    assert.equal(explain('budget_exhausted', 429).message, 'The assistant has reached its usage limit for now. Wait a moment, then retry.');
    assert.equal(explain('budget_exhausted', 429, '42').retry, true);
    assert.notEqual(explain('budget_exhausted', 429).message, explain('rate_limited', 429).message, 'not the nginx limit');
    const down = explain('budget_unavailable', 503);
    assert.match(down.message, /cannot check its usage limits/);
    assert.equal(down.retry, true);
  });

  test('in the widget: budget_exhausted says when, from the Retry-After header', async (t) => {
    const fetch = scriptedFetch([
      json({ error: { code: 'budget_exhausted', message: 'perIp tokensPerDay 200000 used' } }, 429, { 'Retry-After': '7200' }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('hi');
    assert.equal(chat.state.errorCode, 'budget_exhausted');
    assert.equal(chat.state.error, 'The assistant has reached its usage limit for now. Try again in 2 h.');
    assert.ok(visible(ref(root, 'retry')));
    assert.doesNotMatch(root.textContent, /perIp|200000/);
  });

  test('answers without the envelope, and unknown codes, by status', () => {
    assert.match(explainError(502, undefined).message, /could not answer \(HTTP 502\)/);
    assert.equal(explainError(502, undefined).code, 'http_502');
    assert.match(explainError(418, { error: { code: 'teapot', message: 'short and stout' } }).message, /did not accept .* \(HTTP 418\)/);
    assert.doesNotMatch(explainError(500, { error: { code: 'new_code', message: 'secret detail' } }).message, /secret/);
  });

  test('in the widget: no Retry where it cannot help, the server text only in the console', async (t) => {
    const warned = [];
    const fetch = scriptedFetch([
      json({ error: { code: 'page_state_too_large', message: 'page state is 300000 bytes, over maxPageStateBytes 262144' } }, 413),
      json({ error: { code: 'upstream_timeout', message: 'Gemini did not answer in 120000 ms' } }, 504),
    ]);
    const { window, chat, root } = mount(t, { fetch });
    window.console.warn = (...a) => warned.push(a.join(' '));
    await chat.send('one');
    assert.equal(chat.state.errorCode, 'page_state_too_large');
    assert.equal(chat.state.canRetry, false);
    assert.ok(!visible(ref(root, 'retry')), 'no Retry: the same request would fail the same way');
    assert.doesNotMatch(root.textContent, /maxPageStateBytes/);
    assert.ok(warned.some((w) => /page_state_too_large.*maxPageStateBytes/.test(w)), `console: ${warned}`);
    await chat.send('two');
    assert.equal(chat.state.errorCode, 'upstream_timeout');
    assert.equal(chat.state.canRetry, true);
    assert.ok(visible(ref(root, 'retry')));
    assert.doesNotMatch(root.textContent, /120000/);
  });
});

/* --- what the widget says about the actions ------------------------------------------------------------ */

describe('actions done and failed', () => {
  test('a failed page action is marked failed, with its reason; a done one is marked done', async (t) => {
    const fetch = scriptedFetch([
      json({
        type: 'tool-calls',
        calls: [
          { id: 'a', name: 'click-remove-btn', args: { coordinate: 'item-1/removeBtn' } },
          { id: 'b', name: 'click-remove-btn', args: { coordinate: 'item-7/removeBtn' } },
        ],
        history: [],
        serverCalls: [{ name: 'shop.searchProducts', ok: false }],
      }),
      json({ type: 'response', message: 'One of them was not there.', history: [] }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('remove the mouse and item 7');
    const lines = [...root.querySelectorAll('[data-foreach="activity"] > li')];
    assert.deepEqual(
      lines.map((li) => [li.dataset.role, li.dataset.status, li.textContent]),
      [
        ['action', 'failed', 'Searched products (shop.searchProducts) — failed'],
        ['action', 'ok', 'Clicked Remove on Wireless Mouse'],
        ['action', 'failed', 'Clicked Remove on item-7 — failed: Unknown coordinate "item-7/removeBtn"'],
      ],
    );
    root.querySelector('[data-ref="toggleExpand"]').click();
    const shown = [...root.querySelectorAll('[data-foreach="messages"] > [data-role="action"]')];
    assert.deepEqual(shown.map((li) => li.dataset.status), ['failed', 'ok', 'failed'], 'the same marks in the whole history');
  });

  test('chat.css draws a cross for a failed action and the check mark only for the others', () => {
    const css = readFileSync(new URL('../../www/agent/chat.css', import.meta.url), 'utf8');
    assert.match(css, /\[data-role="action"\]\[data-status="failed"\]::before\s*\{[^}]*content:\s*"\\2717"/);
    assert.match(css, /\[data-role="action"\]::before\s*\{[^}]*content:\s*"\\2713"/);
  });

  test('a page call without an id is a protocol error: nothing runs, nothing is sent', async (t) => {
    const fetch = scriptedFetch([
      json({
        type: 'tool-calls',
        calls: [
          { id: 'ok-1', name: 'click-remove-btn', args: { coordinate: 'item-1/removeBtn' } },
          { name: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' } },
        ],
        history: [{ role: 'model', parts: [] }],
      }),
    ]);
    const { chat, cart, root } = mount(t, { fetch });
    await chat.send('remove two');
    assert.equal(fetch.requests.length, 1, 'no results are sent');
    assert.deepEqual(cart.executed, [], 'no call runs, not even the one with an id');
    assert.equal(chat.state.errorCode, 'protocol_error');
    assert.match(chat.state.error, /without a call id/);
    assert.match(chat.state.error, /Nothing was done on the page/);
    assert.equal(chat.state.canRetry, false);
    assert.ok(visible(root.querySelector('[data-bind="error"]')));
    assert.equal(chat.state.outcome, 'error');
    assert.equal(chat.state.messages.filter((m) => m.role === 'action').length, 0);
  });

  test('an empty id is no id', async (t) => {
    const fetch = scriptedFetch([json({ type: 'tool-calls', calls: [{ id: '', name: 'click-remove-btn', args: {} }], history: [] })]);
    const { chat, cart } = mount(t, { fetch });
    await chat.send('x');
    assert.equal(chat.state.errorCode, 'protocol_error');
    assert.deepEqual(cart.executed, []);
  });
});

describe('results sent to the model', () => {
  test('what happened, never the view state', async (t) => {
    const fetch = scriptedFetch([
      json({ type: 'tool-calls', calls: [{ id: 'a', name: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' } }], history: [] }),
      json({ type: 'response', message: 'ok', history: [] }),
    ]);
    const { chat } = mount(t, { fetch });
    await chat.send('remove the hub');
    const [sent] = fetch.requests[1].body.results;
    assert.equal(sent.result, '{"ok":true}');
    assert.doesNotMatch(sent.result, /viewState|pageState|Wireless Mouse/);
    assert.ok(fetch.requests[1].body.pageState.viewState, 'the fresh page state travels with the request');
  });

  test('resultForModel keeps what the tool reports besides the page', () => {
    const { document } = page();
    const pageState = { viewState: { items: [1, 2, 3] }, interactions: [{ refName: 'x', items: [{ element: document.body }] }] };
    assert.equal(resultForModel({ ok: true, pageState }), '{"ok":true}');
    assert.deepEqual(JSON.parse(resultForModel({ ok: true, pageState, changed: { 'item-2': 'removed' } })), { ok: true, changed: { 'item-2': 'removed' } });
    assert.deepEqual(JSON.parse(resultForModel({ ok: true, result: 42, viewState: { a: 1 } })), { ok: true, result: 42 });
    assert.deepEqual(JSON.parse(resultForModel({ ok: false, error: 'Unknown coordinate "x"', pageState })), { ok: false, error: 'Unknown coordinate "x"' });
    assert.deepEqual(JSON.parse(resultForModel({ ok: false })), { ok: false, error: 'unknown error' });
    assert.deepEqual(JSON.parse(resultForModel({ ok: true, el: document.body, f() {} })), { ok: true });
  });
});

/* --- GET geminiAgent.status on start ------------------------------------------------------------ */

describe('the server status on start', () => {
  const settled = async () => {
    for (let i = 0; i < 5; i++) await tick();
  };

  test('the offline demo model is announced before any message', async (t) => {
    const fetch = scriptedFetch([], { status: json({ ready: true, model: 'offline-demo' }) });
    const { chat, root } = mount(t, { fetch });
    assert.equal(fetch.statusRequests.length, 1, 'asked at once');
    const [{ url, init }] = fetch.statusRequests;
    assert.equal(url, `${DEFAULT_ENDPOINT}/geminiAgent.status`);
    assert.equal(init.method, 'GET');
    assert.equal(init.credentials, 'same-origin');
    await settled();
    assert.equal(chat.state.notice, OFFLINE_NOTICE);
    const notice = root.querySelector('[data-bind="notice"]');
    assert.ok(visible(notice));
    assert.equal(notice.textContent, 'Offline demo model — answers are scripted');
    assert.equal(chat.state.messages.length, 0);
    assert.equal(fetch.requests.length, 0, 'nothing else was sent');
  });

  test('next to a custom endpoint', async (t) => {
    const fetch = scriptedFetch([], { status: json({ ready: true, model: 'gemini-3.8-flash' }) });
    const { chat } = mount(t, { fetch, chat: { endpoint: '/shop/api/actions/' } });
    assert.equal(fetch.statusRequests[0].url, '/shop/api/actions/geminiAgent.status');
    await settled();
    assert.equal(chat.state.notice, '', 'a real model: no notice');
  });

  test('ready: false says up front that the assistant is not set up', async (t) => {
    const fetch = scriptedFetch(
      [json({ type: 'response', message: 'Hello', history: [] })],
      { status: json({ ready: false, model: 'gemini-3.8-flash' }) },
    );
    const { chat, root } = mount(t, { fetch });
    await settled();
    assert.equal(chat.state.notice, NOT_SET_UP);
    assert.ok(visible(root.querySelector('[data-bind="notice"]')));
    assert.equal(chat.state.error, '', 'a notice, not an error');
    /* the owner fixed it meanwhile: an answer clears the notice */
    await chat.send('hi');
    assert.equal(chat.state.notice, '');
  });

  for (const [what, status] of [
    ['a 405 (no such route yet)', undefined],
    ['a 404', json({ error: { code: 'unknown_action', message: 'no' } }, 404)],
    ['a network failure', new TypeError('Failed to fetch')],
    ['an answer that is not JSON', new Response('<html>hi</html>', { status: 200 })],
    ['JSON of another shape', json(['offline-demo'])],
    ['a 503', json({ error: { code: 'not_configured', message: 'no key in /etc/x' } }, 503)],
  ]) {
    test(`${what} is silent`, async (t) => {
      const fetch = scriptedFetch([], status === undefined ? {} : { status });
      const { chat, root } = mount(t, { fetch });
      await settled();
      assert.equal(fetch.statusRequests.length, 1);
      assert.equal(chat.state.notice, '');
      assert.equal(chat.state.error, '');
      assert.ok(!visible(root.querySelector('[role="alert"]')));
      assert.ok(!visible(root.querySelector('[data-bind="notice"]')));
    });
  }

  test('an answer after destroy is dropped; checkStatus: false asks nothing', async () => {
    let answer;
    const fetch = scriptedFetch([], { status: () => new Promise((r) => (answer = r)) });
    const { chat } = mount(null, { fetch });
    chat.destroy();
    answer(json({ ready: false, model: 'offline-demo' }));
    await settled();
    const quiet = scriptedFetch([]);
    const second = mount(null, { fetch: quiet, chat: { checkStatus: false } });
    assert.equal(quiet.statusRequests.length, 0);
    second.chat.destroy();
  });
});

/* --- launcher mode ------------------------------------------------------------------------------- */

/** A matchMedia stand-in: `set(width)` changes the window width and fires change events. */
function fakeMedia(window, width) {
  const lists = [];
  const test = (q, w) => {
    const m = /max-width:\s*([\d.]+)px/.exec(q);
    return m ? w <= Number(m[1]) : false;
  };
  window.matchMedia = (query) => {
    const listeners = new Set();
    const mql = {
      media: query,
      get matches() {
        return test(query, width);
      },
      addEventListener: (type, fn) => listeners.add(fn),
      removeEventListener: (type, fn) => listeners.delete(fn),
      listeners,
    };
    lists.push(mql);
    return mql;
  };
  return {
    lists,
    set(w) {
      width = w;
      for (const l of lists) for (const fn of l.listeners) fn({ matches: l.matches });
    },
  };
}

describe('launcher mode', () => {
  const launcherOf = (root) => root.querySelector('.gemini-chat__launcher');
  const frameOf = (root) => root.querySelector('.gemini-chat__frame');
  const esc = (window, target) => {
    const ev = new window.KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
    target.dispatchEvent(ev);
    return ev;
  };

  test('a launcher button opens the panel, focus goes to the input; Esc closes and focus returns', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'Hello', history: [] })]);
    const { window, document, chat, root } = mount(t, { fetch, chat: { launcher: 'always' } });
    const launcher = launcherOf(root);
    const frame = frameOf(root);
    assert.equal(launcher.localName, 'button');
    assert.equal(launcher.type, 'button');
    assert.equal(launcher.textContent.replace(/\(new answer\)/, '').trim(), 'Assistant', 'an accessible name');
    assert.equal(launcher.getAttribute('aria-expanded'), 'false');
    assert.equal(launcher.getAttribute('aria-controls'), frame.id);
    assert.ok(visible(launcher));
    assert.ok(!visible(frame), 'closed at first');
    assert.equal(root.getAttribute('data-launcher'), 'true');
    assert.equal(root.getAttribute('data-open'), 'false');
    assert.equal(chat.state.isLauncher, true);
    assert.equal(chat.state.isOpen, false);

    launcher.focus();
    launcher.click();
    assert.ok(visible(frame));
    assert.equal(frame.getAttribute('role'), 'dialog');
    assert.ok(frame.getAttribute('aria-label'));
    assert.equal(launcher.getAttribute('aria-expanded'), 'true');
    const input = ref(root, 'messageInput');
    assert.equal(document.activeElement, input, 'focus moves into the panel');

    /* it works inside: send, compact and expanded */
    type(window, input, 'hi');
    const ended = done(root.parentElement);
    key(window, input);
    await ended;
    assert.equal(chat.state.lastAssistantMessage, 'Hello');
    ref(root, 'toggleExpand').click();
    assert.ok(visible(root.querySelector('[data-foreach="messages"]')));
    ref(root, 'toggleExpand').click();

    assert.equal(esc(window, input).defaultPrevented, true);
    assert.ok(!visible(frame));
    assert.equal(launcher.getAttribute('aria-expanded'), 'false');
    assert.equal(document.activeElement, launcher, 'focus returns to the launcher');
    assert.equal(chat.state.messages.length, 2, 'closing keeps the conversation');

    /* the launcher toggles; the panel's own close button closes */
    launcher.click();
    assert.ok(visible(frame));
    launcher.click();
    assert.ok(!visible(frame));
    launcher.click();
    const close = ref(root, 'closeChat');
    assert.ok(visible(close));
    assert.equal(close.getAttribute('aria-label'), 'Close the assistant');
    close.click();
    assert.ok(!visible(frame));
    assert.equal(document.activeElement, launcher);
  });

  test('in place (no launcher): no launcher, no close button, Esc does nothing', (t) => {
    const { window, chat, root } = mount(t, { fetch: scriptedFetch([]) });
    assert.ok(!visible(launcherOf(root)));
    assert.ok(visible(frameOf(root)));
    assert.equal(frameOf(root).getAttribute('role'), null);
    assert.ok(!visible(ref(root, 'closeChat')));
    assert.equal(root.getAttribute('data-launcher'), 'false');
    assert.equal(esc(window, ref(root, 'messageInput')).defaultPrevented, false);
    assert.ok(visible(frameOf(root)));
    assert.equal(chat.state.isOpen, true);
  });

  test("'auto' follows the window width", (t) => {
    const { window, container } = page();
    const media = fakeMedia(window, 1280);
    const chat = mountChat(container, { fetch: scriptedFetch([]), storage: null });
    t.after(() => chat.destroy());
    const root = container.querySelector('.gemini-chat');
    assert.equal(chat.state.isLauncher, false, 'wide: in place');
    assert.ok(visible(frameOf(root)));
    media.set(390);
    assert.equal(chat.state.isLauncher, true, 'a phone: a launcher');
    assert.ok(visible(launcherOf(root)) && !visible(frameOf(root)));
    launcherOf(root).click();
    assert.ok(visible(frameOf(root)));
    media.set(1000);
    assert.equal(chat.state.isLauncher, false);
    assert.ok(visible(frameOf(root)) && !visible(launcherOf(root)));
    assert.ok(media.lists.some((l) => l.media === '(max-width: 859.98px)'));
    assert.ok(media.lists.some((l) => l.media === '(max-width: 599.98px)'));
  });

  test('data-launcher and data-launcher-below on the container', (t) => {
    const { window, container } = page('<div id="chat" data-launcher-below="1400"></div>');
    fakeMedia(window, 1280);
    const chat = mountChat(container, { fetch: scriptedFetch([]), storage: null });
    t.after(() => chat.destroy());
    assert.equal(chat.state.isLauncher, true);
    const other = page('<div id="chat" data-floating data-launcher="never"></div>');
    fakeMedia(other.window, 390);
    const never = mountChat(other.container, { fetch: scriptedFetch([]), storage: null });
    t.after(() => never.destroy());
    assert.equal(never.state.isLauncher, false);
  });

  test('an answer that arrives while the panel is closed is flagged on the launcher', async (t) => {
    let answer;
    const fetch = scriptedFetch([() => new Promise((r) => (answer = r))]);
    const { chat, root } = mount(t, { fetch, chat: { launcher: 'always' } });
    chat.open();
    const finished = chat.send('slow one');
    chat.close();
    answer(json({ type: 'response', message: 'Here it is', history: [] }));
    await finished;
    assert.equal(root.getAttribute('data-unread'), 'true');
    launcherOf(root).click();
    assert.equal(root.getAttribute('data-unread'), 'false');
  });

  test('the open panel is kept across a reload', (t) => {
    const { window, document, container } = page();
    const first = mountChat(container, { fetch: scriptedFetch([]), storage: window.sessionStorage, launcher: 'always' });
    first.open();
    first.destroy();
    const again = mountChat(container, { fetch: scriptedFetch([]), storage: window.sessionStorage, launcher: 'always' });
    t.after(() => again.destroy());
    assert.equal(again.state.isOpen, true);
    assert.notEqual(document.activeElement, container.querySelector('[data-ref="messageInput"]'), 'a reload does not steal focus');
  });

  test('several widgets get their own panel ids', (t) => {
    const { window, document } = page('<div id="a"></div><div id="b"></div>');
    const a = mountChat(document.getElementById('a'), { fetch: scriptedFetch([]), storage: null, launcher: 'always' });
    const b = mountChat(document.getElementById('b'), { fetch: scriptedFetch([]), storage: null, launcher: 'always' });
    t.after(() => (a.destroy(), b.destroy()));
    const ids = [...document.querySelectorAll('.gemini-chat__frame')].map((f) => f.id);
    assert.equal(new Set(ids).size, 2);
    void window;
  });
});
