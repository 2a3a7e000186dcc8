// Tests of streamed answers (docs/chat-protocol.md, streaming): the
// NDJSON reader (www/agent/ndjson.js), the live Markdown preview
// (closeOpenMarkdown in www/agent/markdown.js) and the chat widget
// (www/agent/chat.js) against a fake fetch whose answers are ReadableStreams
// the test feeds line by line, byte by byte, or all at once. No network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { DEFAULT_ENDPOINT } from '../../www/agent/origin.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import {
  mountChat,
  answerPendingCalls,
  answerPendingSigned,
  alignSignatures,
  waitingServerCall,
  describeServerAction,
  describeUsage,
  ERROR_WORDS,
} from '../../www/agent/chat.js';
import { readNdjson, isNdjson } from '../../www/agent/ndjson.js';
import { renderMarkdown, closeOpenMarkdown } from '../../www/agent/markdown.js';

/* --- fixtures ---------------------------------------------------------------------- */

function page() {
  const dom = new JSDOM('<!doctype html><html><head></head><body><div id="chat"></div></body></html>', {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true, /* requestAnimationFrame, which the widget renders streamed text with */
  });
  const { window } = dom;
  const warn = window.console.warn.bind(window.console);
  window.console.warn = (...a) => (String(a[0]).startsWith('gemini-chat:') ? undefined : warn(...a));
  return { window, document: window.document, container: window.document.getElementById('chat') };
}

const NDJSON = 'application/x-ndjson; charset=utf-8';
const enc = new TextEncoder();
const lines = (events) => events.map((e) => `${JSON.stringify(e)}\n`).join('');

/** JSON answer as the server sends it without streaming. */
function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
}

/**
 * A streamed answer the test feeds: `send(...events)` writes their lines in
 * one read, `raw(text|bytes)` any piece, `end()` closes, `fail()` breaks the
 * connection. `cancelled` is set when the reader lets go.
 */
function feed() {
  let ctrl;
  const body = new ReadableStream({
    start(c) {
      ctrl = c;
    },
    cancel() {
      f.cancelled = true;
    },
  });
  const f = {
    cancelled: false,
    response: new Response(body, { status: 200, headers: { 'Content-Type': NDJSON } }),
    send: (...events) => ctrl.enqueue(enc.encode(lines(events))),
    raw: (piece) => ctrl.enqueue(typeof piece === 'string' ? enc.encode(piece) : piece),
    end: () => ctrl.close(),
    fail: () => ctrl.error(new TypeError('network error')),
  };
  return f;
}

/** A streamed answer with all its bytes cut into pieces of `size` bytes (1: every byte apart). */
function chunked(text, size) {
  const bytes = enc.encode(text);
  const body = new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': NDJSON } });
}

/** fetch answering from a script, in order; the start-up status GET answers 405. */
function scriptedFetch(steps) {
  const requests = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) return json({ error: { code: 'method_not_allowed', message: 'use POST' } }, 405);
    const request = { url, init, body: JSON.parse(init.body), signal: init.signal };
    requests.push(request);
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request #${requests.length} to ${url}`);
    return typeof step === 'function' ? step(request) : step;
  };
  fn.requests = requests;
  return fn;
}

/** A page with one tool, remove-item, over a list of three names. */
function mount(t, { fetch, chat: options = {} } = {}) {
  const { window, document, container } = page();
  const items = ['Wireless Mouse', 'USB-C Hub', 'Mechanical Keyboard'];
  const executed = [];
  const tools = () => [
    {
      name: 'remove-item',
      description: 'Remove an item',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      async execute({ name }) {
        executed.push(name);
        const at = items.indexOf(name);
        if (at < 0) return { ok: false, error: `no item "${name}"` };
        items.splice(at, 1);
        return { ok: true };
      },
    },
  ];
  const chat = mountChat(container, {
    automation: { getPageState: () => ({ viewState: { items: [...items] } }) },
    tools,
    describeCall: (name, args) => `Removed ${args?.name}`,
    fetch,
    storage: null,
    checkStatus: false,
    ...options,
  });
  t?.after?.(() => chat.destroy());
  return { window, document, container, chat, items, executed, root: container.querySelector('.gemini-chat') };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const visible = (el) => Boolean(el) && !el.closest('[hidden]');
const ref = (root, name) => root.querySelector(`[data-ref="${name}"]`);
const answerEl = (root) => root.querySelector('[data-bind="lastAssistantMessage"]');
/** The compact answer's text as shown (the Markdown's trailing newline aside). */
const text = (root) => answerEl(root).textContent.trim();

/** Poll until `cond()` holds (the widget renders streamed text at animation frames). */
async function until(cond, what = 'condition', ms = 2000) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const H0 = [{ role: 'user', parts: [{ text: 'earlier' }] }, { role: 'model', parts: [{ text: 'Earlier answer.' }] }];

/* --- the NDJSON reader --------------------------------------------------------------- */

describe('readNdjson', () => {
  const events = [
    { type: 'status', status: 'thinking' },
    { type: 'delta', delta: 'Grüße, 世界 🌍 — "quoted" \\ back' },
    { type: 'delta', delta: 'line\nbreak inside a string' },
    { type: 'usage', usage: { totalTokens: 12 }, model: 'gemini-3.8-flash' },
    { type: 'result', result: { type: 'response', message: 'Grüße 🌍', history: [] } },
  ];
  const text = lines(events);

  async function collect(response) {
    const got = [];
    const ended = await readNdjson(response.body, (e) => {
      got.push(e);
      return e.type === 'result';
    });
    return { got, ended };
  }

  test('split at every byte boundary, or one byte a read, or all in one read: the same events', async () => {
    const whole = await collect(chunked(text, text.length * 4));
    assert.deepEqual(whole.got, events);
    assert.equal(whole.ended, true);
    assert.deepEqual((await collect(chunked(text, 1))).got, events, 'one byte a read (UTF-8 characters split too)');
    const bytes = enc.encode(text);
    for (let k = 1; k < bytes.length; k++) {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(bytes.slice(0, k));
          c.enqueue(bytes.slice(k));
          c.close();
        },
      });
      const { got } = await collect({ body });
      assert.deepEqual(got, events, `split at byte ${k}`);
    }
  });

  test('CRLF, blank and broken lines, a last line without its newline', async () => {
    const got = [];
    const body = chunked('{"a":1}\r\n\n  \nnot json\n[1,2]\n"text"\n{"b":2}', 3).body;
    const ended = await readNdjson(body, (e) => void got.push(e));
    assert.deepEqual(got, [{ a: 1 }, { b: 2 }]);
    assert.equal(ended, false, 'the body ended without the callback ending it');
  });

  test('the callback ends the reading: the rest of the body is cancelled', async () => {
    const f = feed();
    f.send({ n: 1 }, { n: 2 }, { n: 3 });
    const got = [];
    assert.equal(await readNdjson(f.response.body, (e) => (got.push(e.n), e.n === 2)), true);
    assert.deepEqual(got, [1, 2]);
    await tick();
    assert.equal(f.cancelled, true);
  });

  test('aborting cancels a pending read at once', async () => {
    const f = feed();
    const controller = new AbortController();
    const reading = readNdjson(f.response.body, () => {}, controller.signal);
    f.send({ n: 1 });
    await tick();
    controller.abort();
    await assert.rejects(reading, { name: 'AbortError' });
    assert.equal(f.cancelled, true);
  });

  test('a broken connection rejects', async () => {
    const f = feed();
    const reading = readNdjson(f.response.body, () => {});
    f.send({ n: 1 });
    f.fail();
    await assert.rejects(reading, TypeError);
  });

  test('isNdjson', () => {
    assert.equal(isNdjson('application/x-ndjson'), true);
    assert.equal(isNdjson('Application/X-NDJSON; charset=utf-8'), true);
    assert.equal(isNdjson('application/json; charset=utf-8'), false);
    assert.equal(isNdjson(null), false);
  });
});

/* --- the live preview ------------------------------------------------------------------ */

describe('closeOpenMarkdown', () => {
  const { document } = page();
  const shown = (md) => {
    const box = document.createElement('div');
    box.append(renderMarkdown(closeOpenMarkdown(md), document));
    return box;
  };

  test('open constructs are closed or held back', () => {
    const cases = [
      ['Here is **', 'Here is'],
      ['Here is **bo', 'Here is **bo**'],
      ['**done**', '**done**'],
      ['I *really', 'I *really*'],
      ['text `co', 'text `co`'],
      ['```js\nconst a', '```js\nconst a\n```'],
      ['```js\nx\n```\nafter **x', '```js\nx\n```\nafter **x**'],
      ['see [the docs](http://exa', 'see the docs'],
      ['x ~~gone', 'x ~~gone~~'],
      ['**bold `code', '**bold `code`**'],
      ['a\n\n* item\n* it', 'a\n\n* item\n* it'],
      ['use \\*stars', 'use \\*stars'],
      ['plain', 'plain'],
    ];
    for (const [input, want] of cases) assert.equal(closeOpenMarkdown(input), want, JSON.stringify(input));
  });

  test('every prefix of an answer renders without raw markers', () => {
    const answer = [
      'Here is **bold**, *emphasis*, `code` and ~~old~~ text.',
      '',
      '- one **important** item',
      '- a [link](https://example.com/docs) here',
      '',
      '```js',
      'const total = items.reduce((s, i) => s + i.price, 0);',
      '```',
      '',
      'Done: the **USB-C Hub** is *gone*.',
    ].join('\n');
    for (let n = 1; n <= answer.length; n++) {
      const prefix = answer.slice(0, n);
      const box = shown(prefix);
      const outsideCode = [...box.childNodes].filter((el) => el.nodeName !== 'PRE').map((el) => el.textContent).join('\n');
      assert.doesNotMatch(outsideCode, /\*|`|~~|\]\(/, `raw marker shown for ${JSON.stringify(prefix)}: ${outsideCode}`);
      for (const pre of box.querySelectorAll('pre')) assert.doesNotMatch(pre.textContent, /```/, `fence shown for ${JSON.stringify(prefix)}`);
    }
    assert.equal(closeOpenMarkdown(answer), answer, 'the complete answer is left as it is');
  });
});

/* --- helpers ------------------------------------------------------------------------------ */

describe('helpers', () => {
  test('describeUsage says what a request cost', () => {
    assert.equal(describeUsage(null), '');
    assert.equal(
      describeUsage({ promptTokens: 1000, cachedTokens: 800, candidatesTokens: 200, thoughtsTokens: 34, totalTokens: 1234, geminiCalls: 2 }, 'gemini-3.8-flash'),
      '1,234 tokens: 1,000 in (800 cached), 200 out, 34 thinking; 2 Gemini calls; gemini-3.8-flash',
    );
    assert.equal(describeUsage({ totalTokens: 5, promptTokens: 4, candidatesTokens: 1, geminiCalls: 1 }), '5 tokens: 4 in, 1 out; 1 Gemini call');
  });

  test('describeServerAction: what the server is doing, from the action name', () => {
    assert.equal(describeServerAction('shop.searchProducts'), 'Searching products (shop.searchProducts)');
    assert.equal(describeServerAction('shop.getProductBySlug'), 'Getting product by slug (shop.getProductBySlug)');
    assert.equal(describeServerAction('shop.addReview'), 'Adding review (shop.addReview)');
    assert.equal(describeServerAction('crm.createTicket'), 'Creating ticket (crm.createTicket)');
    assert.equal(describeServerAction('weather.forecast'), 'Running forecast (weather.forecast)');
  });

  test('answerPendingCalls completes the waiting model turn as the server does', () => {
    const sig = 'c2ln';
    const model = {
      role: 'model',
      parts: [
        { functionCall: { id: 'a1', name: 'action_shop_searchProducts', args: { query: 'hub' } }, thoughtSignature: sig },
        { functionCall: { id: 'p1', name: 'remove-item', args: { name: 'USB-C Hub' } } },
        { functionCall: { name: 'p_9lives', args: {} } },
      ],
    };
    const serverAnswer = { functionResponse: { id: 'a1', name: 'action_shop_searchProducts', response: { result: { products: [] } } } };
    const history = [...H0, { role: 'user', parts: [{ text: 'go' }] }, model, { role: 'user', parts: [serverAnswer] }];
    const done = answerPendingCalls(history, [
      { callId: 'p1', result: '{"ok":true}', isError: false },
      { callId: 'call_3_2', result: 'not JSON at all', isError: true },
    ]);
    assert.deepEqual(done.slice(0, 4), history.slice(0, 4), 'the turns before stay, the model turn untouched');
    assert.equal(done.length, 5, 'the partial answer turn is replaced, not followed');
    assert.deepEqual(done[4], {
      role: 'user',
      parts: [
        serverAnswer,
        { functionResponse: { name: 'remove-item', id: 'p1', response: { result: { ok: true } } } },
        { functionResponse: { name: 'p_9lives', response: { error: 'not JSON at all' } } },
      ],
    });
    /* without results: "not run", as the server says when the visitor moves on */
    const waiting = [{ role: 'user', parts: [{ text: 'go' }] }, { role: 'model', parts: [{ functionCall: { id: 'x', name: 'remove-item', args: {} } }] }];
    assert.deepEqual(answerPendingCalls(waiting).at(-1).parts[0].functionResponse.response, { error: 'not run: the visitor sent a new message instead' });
    /* nothing waits */
    assert.equal(answerPendingCalls(H0), null);
    assert.equal(answerPendingCalls([]), null);
    assert.equal(answerPendingCalls([...waiting, { role: 'user', parts: [{ functionResponse: { id: 'x', name: 'remove-item', response: {} } }] }]), null);
  });

  test("answerPendingCalls never answers a server action's call: that answer is the server's to give and sign", () => {
    const model = {
      role: 'model',
      parts: [
        { functionCall: { id: 'p1', name: 'remove-item', args: {} } },
        { functionCall: { id: 'a1', name: 'action_shop_addReview', args: { productId: 'p1', rating: 5, text: 'great' } } },
      ],
    };
    const history = [{ role: 'user', parts: [{ text: 'review it' }] }, model];
    assert.equal(waitingServerCall(history), 'action_shop_addReview', 'it waits for the visitor’s approval');
    assert.equal(answerPendingCalls(history, [{ callId: 'p1', result: '{"ok":true}' }]), null, 'not even with the page results');
    assert.equal(answerPendingSigned(history, [null, 'sig-m'], [{ callId: 'p1', result: '{"ok":true}' }]), null);
    /* answered by the server: nothing waits for it */
    const served = { functionResponse: { id: 'a1', name: 'action_shop_addReview', response: { result: { ok: true } } } };
    const swapped = { role: 'model', parts: [model.parts[1], model.parts[0]] };
    assert.equal(waitingServerCall([history[0], swapped, { role: 'user', parts: [served] }]), '');
    assert.equal(waitingServerCall(H0), '');
    assert.equal(waitingServerCall([]), '');
  });

  test('answerPendingSigned keeps the signatures aligned with the turns', () => {
    const call = { role: 'model', parts: [{ functionCall: { id: 'p1', name: 'remove-item', args: {} } }] };
    const mixed = {
      role: 'model',
      parts: [
        { functionCall: { id: 'a1', name: 'action_shop_searchProducts', args: { query: 'hub' } } },
        { functionCall: { id: 'p1', name: 'remove-item', args: {} } },
        { functionCall: { id: 'a2', name: 'action_shop_searchProducts', args: { query: 'mouse' } } },
      ],
    };
    const a1 = { functionResponse: { id: 'a1', name: 'action_shop_searchProducts', response: { result: { products: [] } } } };
    const a2 = { functionResponse: { id: 'a2', name: 'action_shop_searchProducts', response: { result: { products: [] } } } };
    const p1 = { functionResponse: { name: 'remove-item', id: 'p1', response: { result: { ok: true } } } };
    const ask = { role: 'user', parts: [{ text: 'go' }] };

    /* page calls only: a new answer turn, which needs no signature */
    const one = answerPendingSigned([...H0, ask, call], ['s0', 's1', null, 's3'], [{ callId: 'p1', result: '{"ok":true}' }]);
    assert.deepEqual(one.history.at(-1), { role: 'user', parts: [p1] });
    assert.deepEqual(one.signatures, ['s0', 's1', null, 's3', null]);
    assert.equal(one.signatures.length, one.history.length);

    /* a mixed turn: the server's partial answers, signed; the page's result goes between them
     * and the completed turn keeps the partial turn's signature */
    const partial = { role: 'user', parts: [a1, a2] };
    const two = answerPendingSigned([ask, mixed, partial], [null, 's-model', 's-answers'], [{ callId: 'p1', result: '{"ok":true}' }]);
    assert.deepEqual(two.history, [ask, mixed, { role: 'user', parts: [a1, p1, a2] }]);
    assert.deepEqual(two.signatures, [null, 's-model', 's-answers']);

    /* signatures missing or short (a conversation saved before they existed): null, never shifted */
    const three = answerPendingSigned([ask, call], undefined, []);
    assert.deepEqual(three.signatures, [null, null, null]);
    assert.deepEqual(alignSignatures(['a', 7, null], 4), ['a', null, null, null]);
    assert.deepEqual(alignSignatures(['a', 'b', 'c'], 2), ['a', 'b']);
    assert.deepEqual(alignSignatures('nope', 1), [null]);
    assert.equal(answerPendingSigned(H0, ['s0', 's1']), null, 'nothing waits');
  });
});

/* --- the widget ------------------------------------------------------------------------------ */

describe('streamed answers in the widget', () => {
  test('asks for NDJSON, shows the text as it arrives, then the answer exactly', async (t) => {
    const f = feed();
    const fetch = scriptedFetch([f.response]);
    const { chat, root, window } = mount(t, { fetch });
    const finished = chat.send('Hello?');
    await tick();
    const [req] = fetch.requests;
    assert.equal(req.init.headers.Accept, 'application/x-ndjson');
    assert.equal(req.init.headers['Content-Type'], 'application/json');
    assert.equal(req.body.message, 'Hello?');

    f.send({ type: 'status', status: 'thinking' });
    await until(() => chat.state.statusText === 'Thinking…', 'Thinking…');
    assert.equal(root.querySelector('[data-bind="statusText"]').textContent, 'Thinking…');
    assert.equal(text(root), '', 'no bubble before the first text');

    f.send({ type: 'delta', delta: 'Hello ' });
    await until(() => text(root) === 'Hello', 'first delta shown');
    assert.equal(chat.state.isLoading, true);
    const live = root.querySelector('[aria-live]');
    assert.equal(live.getAttribute('aria-busy'), 'true', 'the live region waits for the complete answer');

    f.send({ type: 'delta', delta: '**wor' });
    await until(() => text(root) === 'Hello wor', 'second delta shown');
    assert.equal(answerEl(root).querySelector('strong')?.textContent, 'wor', 'half-written bold is already bold, no raw **');
    assert.doesNotMatch(text(root), /\*/);

    f.raw('{"type":"delta","del'); /* half a line: nothing yet */
    await new Promise((r) => window.requestAnimationFrame(r));
    assert.equal(text(root), 'Hello wor');
    f.raw('ta":"ld**"}\n');
    await until(() => text(root) === 'Hello world', 'the line completed by the next read');
    assert.equal(chat.state.messages.at(-1).status, 'streaming');

    const history = [...H0, { role: 'user', parts: [{ text: 'Hello?' }] }, { role: 'model', parts: [{ text: 'Hello **world**!' }] }];
    f.send(
      { type: 'usage', usage: { totalTokens: 40, geminiCalls: 1 }, model: 'gemini-3.8-flash' },
      { type: 'result', result: { type: 'response', message: 'Hello **world**!', history, usage: { totalTokens: 41 }, serverCalls: [] } },
    );
    await finished;
    assert.equal(answerEl(root).innerHTML.trim(), '<p>Hello <strong>world</strong>!</p>', 'the final message, rendered as without streaming');
    assert.deepEqual(chat.state.history, history);
    assert.deepEqual(chat.state.usage, { totalTokens: 41 }, "the result's usage wins, as without streaming");
    assert.equal(chat.state.isLoading, false);
    assert.equal(chat.state.outcome, 'response');
    assert.deepEqual(chat.state.messages.map((m) => [m.role, m.content, m.status]), [
      ['user', 'Hello?', undefined],
      ['assistant', 'Hello **world**!', undefined],
    ]);
    assert.equal(live.hasAttribute('aria-busy'), false);
    assert.equal(f.cancelled, true, 'the connection is let go after the result line');
    /* the cost of the turn, on request: a closed <details> */
    const usage = root.querySelector('details.gemini-chat__usage');
    assert.ok(usage, 'a usage disclosure after the answer');
    assert.equal(usage.open, false, 'shown only on request');
    assert.equal(usage.querySelector('[data-bind="usageText"]').textContent, '41 tokens: 0 in, 0 out; 0 Gemini calls; gemini-3.8-flash');
  });

  test('one byte a read and everything in one read give the same widget', async () => {
    const history = [{ role: 'user', parts: [{ text: 'q' }] }, { role: 'model', parts: [{ text: 'Ünïcødé 🌍 **ok**' }] }];
    const text = lines([
      { type: 'status', status: 'thinking' },
      { type: 'delta', delta: 'Ünïcødé ' },
      { type: 'delta', delta: '🌍 **ok**' },
      { type: 'result', result: { type: 'response', message: 'Ünïcødé 🌍 **ok**', history } },
    ]);
    const states = [];
    for (const size of [1, 2, 5, text.length]) {
      const { chat, root } = mount(null, { fetch: scriptedFetch([chunked(text, size)]) });
      await chat.send('q');
      states.push([chat.state.history, chat.state.messages.map((m) => [m.role, m.content, m.status]), answerEl(root).innerHTML.trim(), chat.state.error]);
      chat.destroy();
    }
    for (const s of states.slice(1)) assert.deepEqual(s, states[0]);
    assert.equal(states[0][2], '<p>Ünïcødé 🌍 <strong>ok</strong></p>');
  });

  test('the final DOM is the same streamed and not streamed', async () => {
    const history = [...H0, { role: 'user', parts: [{ text: 'find a hub' }] }, { role: 'model', parts: [{ text: 'x' }] }];
    const result = {
      type: 'response',
      message: 'Found **2 hubs**:\n\n- USB-C Hub\n- `USB-A Hub`',
      history,
      usage: { totalTokens: 9 },
      serverCalls: [{ name: 'shop.searchProducts', args: { query: 'hub' }, ok: true, ms: 3 }],
      model: 'gemini-3.8-flash',
    };
    const events = [
      { type: 'status', status: 'thinking' },
      { type: 'delta', delta: 'Let me search.' },
      { type: 'tool-call', name: 'shop.searchProducts', args: { query: 'hub' }, side: 'server' },
      { type: 'status', status: 'tool', tool: 'shop.searchProducts' },
      { type: 'tool-result', name: 'shop.searchProducts', ok: true, ms: 3 },
      { type: 'status', status: 'thinking' },
      { type: 'delta', delta: 'Found **2 hu' },
      { type: 'result', result },
    ];
    const normal = (root) =>
      root.innerHTML
        .replace(/data-id="[^"]*"/g, 'data-id=""')
        .replace(/gemini-chat-panel-\d+/g, 'gemini-chat-panel')
        .replace(/<time([^>]*) datetime="[^"]*">[^<]*<\/time>/g, '<time$1></time>');
    const run = async (stream, response, expanded) => {
      const { chat, root } = mount(null, { fetch: scriptedFetch([response]), chat: { stream, expanded } });
      await chat.send('find a hub');
      const html = normal(root);
      const state = chat.state;
      chat.destroy();
      return { html, messages: state.messages.map((m) => [m.role, m.content, m.status]), history: state.history };
    };
    for (const expanded of [false, true]) {
      const streamed = await run(true, chunked(lines(events), 7), expanded);
      const single = await run(false, json(result), expanded);
      assert.deepEqual(streamed.messages, single.messages);
      assert.deepEqual(streamed.history, single.history);
      assert.equal(streamed.html, single.html, `the widget's DOM (${expanded ? 'expanded' : 'compact'})`);
      assert.match(streamed.html, /<strong>2 hubs<\/strong>/);
    }
  });

  test('statuses: thinking, a server action, waiting for the page; heartbeats change nothing; a new step starts the text over', async (t) => {
    const f = feed();
    const { chat, root } = mount(t, { fetch: scriptedFetch([f.response]) });
    const finished = chat.send('hub price?');
    const status = () => chat.state.statusText;
    f.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Let me look that up.' });
    await until(() => text(root) === 'Let me look that up.', 'step 1 text');
    assert.equal(status(), 'Writing…');
    f.send({ type: 'status', status: 'tool', tool: 'shop.searchProducts' });
    await until(() => status() === 'Searching products (shop.searchProducts)…', 'the server action');
    f.send({ type: 'status', status: 'tool', tool: 'shop.searchProducts', heartbeat: true });
    f.send({ type: 'status', status: 'thinking' });
    await until(() => status() === 'Thinking…', 'step 2 thinking');
    f.send({ type: 'status', status: 'thinking', heartbeat: true });
    await tick();
    assert.equal(text(root), 'Let me look that up.', 'the last text stays until the new step writes');
    f.send({ type: 'delta', delta: 'The hub costs ' });
    await until(() => text(root) === 'The hub costs', 'step 2 text replaces step 1');
    f.send({ type: 'status', status: 'thinking', heartbeat: true });
    f.send({ type: 'delta', delta: '49.99.' });
    await until(() => text(root) === 'The hub costs 49.99.', 'a heartbeat does not start a new step');
    assert.equal(chat.state.messages.filter((m) => m.role === 'assistant').length, 1, 'one bubble for the request');
    f.send({ type: 'status', status: 'waiting' });
    await until(() => status() === 'Getting ready to act on the page…', 'waiting');
    f.send({ type: 'result', result: { type: 'response', message: 'The hub costs 49.99.', history: [] } });
    await finished;
    assert.equal(chat.state.statusText, '');
  });

  test('unknown event kinds and fields are ignored; usage and model are kept as they come', async (t) => {
    const f = feed();
    const { chat, root } = mount(t, { fetch: scriptedFetch([f.response]) });
    const finished = chat.send('hi');
    f.send(
      { type: 'status', status: 'thinking', future: { x: 1 } },
      { type: 'thought-summary', text: 'NOT SHOWN' },
      { type: 'status', status: 'pondering' },
      { type: 'delta', delta: 'Hi', lang: 'en' },
      { type: 'delta', delta: 987654321 },
      { type: 'usage', usage: { totalTokens: 5, geminiCalls: 1 }, model: 'offline-demo', extra: true },
      { delta: 'no type' },
    );
    await until(() => text(root) === 'Hi', 'the delta');
    assert.deepEqual(chat.state.usage, { totalTokens: 5, geminiCalls: 1 });
    assert.equal(chat.state.model, 'offline-demo');
    await until(() => /Offline demo model/.test(root.textContent), 'the notice from the streamed model');
    f.send({ type: 'result', result: { type: 'response', message: 'Hi!', history: [], newField: 1 }, more: 2 });
    await finished;
    assert.equal(chat.state.error, '');
    assert.equal(chat.state.lastAssistantMessage, 'Hi!');
    assert.doesNotMatch(root.textContent, /NOT SHOWN|no type|987654321/);
  });

  test('an error line: the text so far stays, marked incomplete, the error in plain words, Retry works', async (t) => {
    const f = feed();
    const fetch = scriptedFetch([f.response, json({ type: 'response', message: 'Second try.', history: [] })]);
    const { chat, root, container } = mount(t, { fetch });
    const finished = chat.send('tell me');
    f.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'The first half' });
    f.send({ type: 'error', error: { code: 'upstream_unavailable', message: 'Gemini answered 503 after 3 attempts' } });
    await finished;
    assert.equal(chat.state.outcome, 'error');
    assert.equal(chat.state.errorCode, 'upstream_unavailable');
    assert.equal(chat.state.error, ERROR_WORDS.upstream_unavailable.text);
    assert.doesNotMatch(root.textContent, /Gemini answered/);
    assert.equal(text(root), 'The first half');
    assert.equal(chat.state.lastAssistantStatus, 'incomplete');
    const mark = [...root.querySelectorAll('.gemini-chat__mark')].filter(visible);
    assert.deepEqual(mark.map((m) => m.textContent), ['(incomplete)']);
    assert.deepEqual(chat.state.history, [], 'no answer, no new history');
    assert.equal(chat.state.canRetry, true);

    const ended = new Promise((r) => container.addEventListener('gemini-chat:done', r, { once: true }));
    ref(root, 'retry').click();
    await ended;
    assert.equal(fetch.requests[1].body.message, 'tell me');
    assert.equal(chat.state.lastAssistantMessage, 'Second try.');
    assert.equal(chat.state.messages.filter((m) => m.role === 'user').length, 1);
    /* the expanded history keeps the incomplete text, marked */
    ref(root, 'toggleExpand').click();
    const bubbles = [...root.querySelectorAll('[data-foreach="messages"] > [data-role="assistant"]')];
    assert.deepEqual(bubbles.map((b) => [b.dataset.status ?? null, b.querySelector('[data-bind="content"]').textContent.trim()]), [
      ['incomplete', 'The first half'],
      [null, 'Second try.'],
    ]);
  });

  test('an unknown error code still reads as plain words', async (t) => {
    const f = feed();
    const { chat } = mount(t, { fetch: scriptedFetch([f.response]) });
    const finished = chat.send('x');
    f.send({ type: 'error', error: { code: 'something_new', message: 'internal detail /etc/x' } });
    await finished;
    assert.equal(chat.state.errorCode, 'something_new');
    assert.match(chat.state.error, /cut off by a problem on the server/);
    assert.doesNotMatch(chat.state.error, /etc/);
  });

  test('a budget spent at a later step: its words, and when to try again from the error line\'s retryAfter', async (t) => {
    const f = feed();
    const { chat } = mount(t, { fetch: scriptedFetch([f.response]) });
    const finished = chat.send('x');
    f.send(
      { type: 'status', status: 'thinking' },
      { type: 'error', error: { code: 'budget_exhausted', message: 'perIp tokensPerDay 200000', retryAfter: 90 } },
    );
    await finished;
    assert.equal(chat.state.errorCode, 'budget_exhausted');
    assert.equal(chat.state.error, 'The assistant has reached its usage limit for now. Try again in 90 s.');
    assert.equal(chat.state.canRetry, true);
  });

  for (const [how, finish] of [
    ['ends', (f) => f.end()],
    ['breaks', (f) => f.fail()],
  ]) {
    test(`a stream that ${how} without its result: "interrupted", the partial text kept`, async (t) => {
      const f = feed();
      const { chat, root } = mount(t, { fetch: scriptedFetch([f.response]) });
      const finished = chat.send('x');
      f.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Partial **answ' });
      await until(() => text(root) === 'Partial answ', 'the partial text');
      f.raw('{"type":"result","result":{"type":"respo'); /* a result line cut short */
      finish(f);
      await finished;
      assert.equal(chat.state.errorCode, 'interrupted');
      assert.match(chat.state.error, /connection was interrupted/);
      assert.equal(text(root), 'Partial answ');
      assert.equal(chat.state.messages.at(-1).status, 'incomplete');
      assert.equal(chat.state.canRetry, true);
      assert.equal(chat.state.isLoading, false);
    });
  }

  test('a JSON answer while the stream was asked for is read as before', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'Not **streamed**.', history: H0 })]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('hi');
    assert.equal(fetch.requests[0].init.headers.Accept, 'application/x-ndjson');
    assert.equal(answerEl(root).innerHTML.trim(), '<p>Not <strong>streamed</strong>.</p>');
    assert.deepEqual(chat.state.history, H0);
    assert.equal(chat.state.error, '');
  });

  test('an error envelope before the stream starts is explained as before', async (t) => {
    const fetch = scriptedFetch([
      new Response(JSON.stringify({ error: { code: 'rate_limited', message: 'Too many requests.' } }), {
        status: 429,
        headers: { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '3' },
      }),
    ]);
    const { chat } = mount(t, { fetch });
    await chat.send('hi');
    assert.equal(chat.state.errorCode, 'rate_limited');
    assert.match(chat.state.error, /Too many requests from here right now\. Try again in 3 s\./);
    assert.equal(chat.state.messages.filter((m) => m.role === 'assistant').length, 0);
  });

  test('stream: false asks for one JSON answer (no NDJSON in Accept), and data-stream="false" too', async (t) => {
    const fetch = scriptedFetch([json({ type: 'response', message: 'ok', history: [] })]);
    const { chat } = mount(t, { fetch, chat: { stream: false } });
    await chat.send('hi');
    assert.equal(fetch.requests[0].init.headers.Accept, 'application/json');
    assert.equal(chat.state.lastAssistantMessage, 'ok');

    const { window, container } = page();
    container.setAttribute('data-stream', 'false');
    const fetch2 = scriptedFetch([json({ type: 'response', message: 'ok', history: [] })]);
    const chat2 = mountChat(container, { fetch: fetch2, storage: null, checkStatus: false });
    t.after(() => chat2.destroy());
    await chat2.send('hi');
    assert.doesNotMatch(fetch2.requests[0].init.headers.Accept, /ndjson/);
    assert.ok(window);
  });
});

/* --- Stop ------------------------------------------------------------------------------------ */

describe('Stop while an answer streams', () => {
  test('the text so far stays on screen, marked stopped; idle at once; the history gets the message, not the text', async (t) => {
    const f = feed();
    const fetch = scriptedFetch([f.response, json({ type: 'response', message: 'And they lived happily.', history: [] })]);
    const { chat, root, container } = mount(t, { fetch });
    const finished = chat.send('Write a long story');
    f.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Once upon a **time' });
    await until(() => text(root) === 'Once upon a time', 'the partial text');

    const ended = new Promise((r) => container.addEventListener('gemini-chat:done', (e) => r(e.detail), { once: true }));
    ref(root, 'stopLoop').click();
    await finished; /* resolves although the server never ends the stream */
    assert.deepEqual(await ended, { outcome: 'stopped' });
    assert.equal(fetch.requests[0].signal.aborted, true);
    assert.equal(f.cancelled, true, 'the body is cancelled');
    assert.equal(chat.state.isLoading, false);
    assert.equal(chat.state.error, '');
    assert.ok(!visible(ref(root, 'stopLoop')));
    assert.equal(text(root), 'Once upon a time', 'the text received stays');
    assert.equal(chat.state.lastAssistantStatus, 'stopped');
    assert.deepEqual([...root.querySelectorAll('.gemini-chat__mark')].filter(visible).map((m) => m.textContent), ['(stopped)']);
    assert.equal(chat.state.messages.at(-1).content, 'Stopped.');
    /* a model turn needs the server's signature: the browser never writes one */
    assert.deepEqual(chat.state.history, [{ role: 'user', parts: [{ text: 'Write a long story' }] }], 'the message, not the text');
    assert.deepEqual(chat.state.signatures, [null], 'a user turn of text needs no signature');
    ref(root, 'toggleExpand').click();
    assert.equal(root.querySelector('[data-foreach="messages"] > [data-role="assistant"]').dataset.status, 'stopped');

    /* later deltas of the aborted stream change nothing */
    try {
      f.send({ type: 'delta', delta: ' LATE' });
    } catch {
      /* the stream is cancelled */
    }
    await tick();
    assert.doesNotMatch(root.textContent, /LATE/);

    await chat.send('Go on');
    assert.equal(fetch.requests.length, 2);
    assert.deepEqual(fetch.requests[1].body.history, [{ role: 'user', parts: [{ text: 'Write a long story' }] }]);
    assert.deepEqual(fetch.requests[1].body.signatures, [null]);
    assert.equal(fetch.requests[1].body.message, 'Go on');
  });

  test('Stop before any text: the history does not change (the message stays on screen only)', async (t) => {
    const f = feed();
    const fetch = scriptedFetch([f.response, json({ type: 'response', message: 'Hi.', history: [] })]);
    const { chat } = mount(t, { fetch });
    const finished = chat.send('First');
    f.send({ type: 'status', status: 'thinking' });
    await until(() => chat.state.statusText === 'Thinking…', 'thinking');
    chat.stop();
    await finished;
    assert.deepEqual(chat.state.history, []);
    assert.deepEqual(chat.state.signatures, []);
    assert.equal(chat.state.messages.filter((m) => m.role === 'assistant').length, 0, 'no empty bubble');
    assert.equal(chat.state.messages[0].content, 'First');
    await chat.send('Second');
    assert.deepEqual(fetch.requests[1].body.history, []);
    assert.deepEqual(fetch.requests[1].body.signatures, []);
  });
});

/* --- page tools over the stream ---------------------------------------------------------------- */

describe('a page-tool round trip over the stream', () => {
  const h1 = [
    { role: 'user', parts: [{ text: 'Remove the hub' }] },
    { role: 'model', parts: [{ text: 'Let me remove it.' }, { functionCall: { id: 'call-1', name: 'remove-item', args: { name: 'USB-C Hub' } }, thoughtSignature: 'c2ln' }] },
  ];
  const first = [
    { type: 'status', status: 'thinking' },
    { type: 'delta', delta: 'Let me ' },
    { type: 'delta', delta: 'remove it.' },
    { type: 'tool-call', name: 'remove-item', args: { name: 'USB-C Hub' }, side: 'page', id: 'call-1' },
    { type: 'usage', usage: { totalTokens: 10, geminiCalls: 1 }, model: 'gemini-3.8-flash' },
    { type: 'status', status: 'waiting' },
    {
      type: 'result',
      result: {
        type: 'tool-calls',
        message: 'Let me remove it.',
        calls: [{ id: 'call-1', name: 'remove-item', args: { name: 'USB-C Hub' }, category: 'page-automation' }],
        history: h1,
        signatures: [null, 'sig-m1'],
        usage: { totalTokens: 10, geminiCalls: 1 },
        serverCalls: [],
      },
    },
  ];

  test('tool-calls → the page tool runs → submitToolResults streamed → the answer', async (t) => {
    const h2 = [
      ...h1,
      { role: 'user', parts: [{ functionResponse: { id: 'call-1', name: 'remove-item', response: { result: { ok: true } } } }] },
      { role: 'model', parts: [{ text: 'Done: the hub is gone.' }] },
    ];
    const second = feed();
    const fetch = scriptedFetch([chunked(lines(first), 11), second.response]);
    const { chat, root, executed, items } = mount(t, { fetch });
    const finished = chat.send('Remove the hub');
    await until(() => fetch.requests.length === 2, 'submitToolResults');
    const [r1, r2] = fetch.requests;
    assert.equal(r1.url, `${DEFAULT_ENDPOINT}/geminiAgent.sendMessage`);
    assert.equal(r2.url, `${DEFAULT_ENDPOINT}/geminiAgent.submitToolResults`);
    assert.equal(r2.init.headers.Accept, 'application/x-ndjson');
    assert.deepEqual(executed, ['USB-C Hub']);
    assert.deepEqual(items, ['Wireless Mouse', 'Mechanical Keyboard']);
    assert.deepEqual(r2.body.history, h1);
    assert.deepEqual(r2.body.signatures, [null, 'sig-m1'], 'the signatures go back with the history');
    assert.deepEqual(r2.body.results, [{ callId: 'call-1', result: '{"ok":true}', isError: false }]);
    assert.deepEqual(r2.body.pageState.viewState.items, ['Wireless Mouse', 'Mechanical Keyboard'], 'the fresh page state');

    second.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Done: the hub' });
    await until(() => text(root) === 'Done: the hub', 'the second request streams');
    second.send(
      { type: 'delta', delta: ' is gone.' },
      { type: 'result', result: { type: 'response', message: 'Done: the hub is gone.', history: h2, serverCalls: [] } },
    );
    await finished;
    assert.deepEqual(chat.state.messages.map((m) => [m.role, m.content, m.status]), [
      ['user', 'Remove the hub', undefined],
      ['assistant', 'Let me remove it.', undefined],
      ['action', 'Removed USB-C Hub', 'ok'],
      ['assistant', 'Done: the hub is gone.', undefined],
    ]);
    assert.deepEqual(chat.state.history, h2);
  });

  test('Stop while submitToolResults streams: the calls are answered with what the page did; the text stays on screen only', async (t) => {
    const second = feed();
    const fetch = scriptedFetch([chunked(lines(first), 64), second.response, json({ type: 'response', message: 'ok', history: [] })]);
    const { chat, root, executed } = mount(t, { fetch });
    const finished = chat.send('Remove the hub');
    await until(() => fetch.requests.length === 2, 'submitToolResults');
    second.send({ type: 'status', status: 'thinking' }, { type: 'delta', delta: 'Removed. Anything' });
    await until(() => text(root) === 'Removed. Anything', 'partial text');
    chat.stop();
    await finished;
    assert.equal(chat.state.outcome, 'stopped');
    assert.equal(chat.state.messages.find((m) => m.content === 'Removed. Anything')?.status, 'stopped');
    const answered = [
      ...h1,
      { role: 'user', parts: [{ functionResponse: { name: 'remove-item', id: 'call-1', response: { result: { ok: true } } } }] },
    ];
    assert.deepEqual(chat.state.history, answered, 'the call answered; no model turn the server did not sign');
    assert.deepEqual(chat.state.signatures, [null, 'sig-m1', null], 'the turns kept keep theirs; the new answers need none');
    await chat.send('Thanks');
    assert.deepEqual(fetch.requests[2].body.history, answered);
    assert.deepEqual(fetch.requests[2].body.signatures, [null, 'sig-m1', null]);
    assert.deepEqual(executed, ['USB-C Hub'], 'nothing ran twice');
  });
});
