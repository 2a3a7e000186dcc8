// Tests of the widget's side of approvals (docs/widget.md "The chat widget",
// "Approvals"): the signed history (`signatures` kept aligned with `history`
// through answers, sessionStorage and Stop, and sent back with every
// request), and the approval card of an `approval-required` answer (what it
// shows, the request bodies of Approve and Reject, a new message instead of
// a decision, the errors, and that nothing but the visitor's click can
// decide). jsdom against a scripted fake fetch; no network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { DEFAULT_ENDPOINT } from '../../www/agent/origin.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import { mountChat, readApproval, DEFAULT_TEMPLATE } from '../../www/agent/chat.js';
import { createAutomation } from '../../www/agent/automation.js';
import { buildTools, toolDefinitions, describeCall } from '../../www/agent/tools.js';

/* --- fixtures ---------------------------------------------------------------------- */

function page(body = '<div id="chat"></div>') {
  const dom = new JSDOM(`<!doctype html><html><head></head><body>${body}</body></html>`, {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true,
  });
  const { window } = dom;
  const warn = window.console.warn.bind(window.console);
  window.console.warn = (...a) => (String(a[0]).startsWith('gemini-chat:') ? undefined : warn(...a));
  return { window, document: window.document, container: window.document.getElementById('chat') };
}

function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/** fetch answering from a script, in order (Response, function or Error); the status GET answers 405. */
function scriptedFetch(steps) {
  const requests = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) return json({ error: { code: 'method_not_allowed', message: 'use POST' } }, 405);
    const request = { url, init, body: JSON.parse(init.body), signal: init.signal };
    requests.push(request);
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request #${requests.length} to ${url}`);
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step(request) : step;
  };
  fn.requests = requests;
  return fn;
}

/** A page with one tool, remove-item. */
function mount(t, { fetch, storage = null, body, chat: options = {} } = {}) {
  const { window, document, container } = page(body);
  const executed = [];
  const tools = () => [
    {
      name: 'remove-item',
      description: 'Remove an item',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      async execute({ name }) {
        executed.push(name);
        return { ok: true };
      },
    },
  ];
  const chat = mountChat(container, {
    automation: { getPageState: () => ({ viewState: { cart: 'two items' } }) },
    tools,
    describeCall: (name, args) => `Removed ${args?.name}`,
    fetch,
    storage: storage === 'session' ? window.sessionStorage : storage,
    checkStatus: false,
    ...options,
  });
  t?.after?.(() => chat.destroy());
  return { window, document, container, chat, executed, root: container.querySelector('.gemini-chat') };
}

const visible = (el) => Boolean(el) && !el.closest('[hidden]');
const shown = (root, sel) => [...root.querySelectorAll(sel)].filter(visible);
const tick = () => new Promise((r) => setTimeout(r, 0));

/* the conversation of the mock's server-call scenario: the model calls
 * action_shop_addReview; the server asks the visitor first */
const ASK = { role: 'user', parts: [{ text: 'Review p1: 5 stars, great' }] };
const ARGS = { productId: 'p1', rating: 5, text: 'great' };
const CALL = { role: 'model', parts: [{ functionCall: { id: 'call-r', name: 'action_shop_addReview', args: ARGS }, thoughtSignature: 'c2ln' }] };
const APPROVAL = {
  id: 'call-r',
  tool: 'shop.addReview',
  args: ARGS,
  reason: 'It adds a review that everyone can read.',
  preview: 'Add a review of a product: productId p1, rating 5, text "great".',
  ticket: 'tk.opaque.1',
  expiresAt: Date.parse('2030-01-01T10:10:00Z'),
};
const SIGS = [null, 'sig-model-1'];

function approvalRequired(extra = {}) {
  return json({
    type: 'approval-required',
    approval: APPROVAL,
    calls: [],
    history: [ASK, CALL],
    signatures: SIGS,
    usage: { totalTokens: 12, geminiCalls: 1 },
    serverCalls: [],
    ...extra,
  });
}

function done(text, decision) {
  const answer = { functionResponse: { id: 'call-r', name: 'action_shop_addReview', response: decision } };
  return json({
    type: 'response',
    message: text,
    history: [ASK, CALL, { role: 'user', parts: [answer] }, { role: 'model', parts: [{ text }] }],
    signatures: [null, 'sig-model-1', 'sig-answer-2', 'sig-model-3'],
    serverCalls: decision.result ? [{ name: 'shop.addReview', args: ARGS, ok: true, ms: 3 }] : [],
  });
}

/* --- signed history ------------------------------------------------------------------ */

describe('signed history', () => {
  test('the signatures of every answer are kept with the history and sent back with the next request', async (t) => {
    const h1 = [ASK, { role: 'model', parts: [{ functionCall: { id: 'p1', name: 'remove-item', args: { name: 'Hub' } } }] }];
    const h2 = [...h1, { role: 'user', parts: [{ functionResponse: { id: 'p1', name: 'remove-item', response: { result: { ok: true } } } }] }, { role: 'model', parts: [{ text: 'Gone.' }] }];
    const fetch = scriptedFetch([
      json({ type: 'tool-calls', calls: [{ id: 'p1', name: 'remove-item', args: { name: 'Hub' } }], history: h1, signatures: [null, 'S1'] }),
      json({ type: 'response', message: 'Gone.', history: h2, signatures: [null, 'S1', null, 'S3'] }),
      json({ type: 'response', message: 'Hi.', history: [...h2, { role: 'user', parts: [{ text: 'hi' }] }, { role: 'model', parts: [{ text: 'Hi.' }] }] }),
    ]);
    const { chat } = mount(t, { fetch });
    await chat.send('remove the hub');
    const [first, second] = fetch.requests;
    assert.deepEqual(first.body.signatures, [], 'a new conversation: none');
    assert.deepEqual(second.body.history, h1);
    assert.deepEqual(second.body.signatures, [null, 'S1'], 'top-level, as long as history');
    assert.deepEqual(chat.state.signatures, [null, 'S1', null, 'S3']);
    await chat.send('hi');
    assert.deepEqual(fetch.requests[2].body.signatures, [null, 'S1', null, 'S3']);
    /* an answer without signatures (or a short list): null for every turn, never shifted */
    assert.deepEqual(chat.state.signatures, [null, null, null, null, null, null]);
  });

  test('sessionStorage keeps the signatures with the history; a conversation saved without them sends nulls', async (t) => {
    const history = [ASK, { role: 'model', parts: [{ text: 'Hello' }] }];
    const fetch = scriptedFetch([json({ type: 'response', message: 'Hello', history, signatures: [null, 'S1'] })]);
    const { window, document, chat } = mount(t, { fetch, storage: 'session', chat: { storageKey: 'k' } });
    await chat.send('hi');
    assert.deepEqual(JSON.parse(window.sessionStorage.getItem('k')).signatures, [null, 'S1']);
    chat.destroy();

    /* a reload: the same signatures go out */
    const reload = (steps) => {
      const c = document.createElement('div');
      document.body.append(c);
      const f = scriptedFetch(steps);
      const w = mountChat(c, { fetch: f, storage: window.sessionStorage, storageKey: 'k', checkStatus: false });
      t.after(() => w.destroy());
      return { w, f };
    };
    const one = reload([json({ type: 'response', message: 'ok', history: [...history, ASK, history[1]], signatures: [null, 'S1', null, 'S3'] })]);
    assert.deepEqual(one.w.state.signatures, [null, 'S1']);
    await one.w.send('again');
    assert.deepEqual(one.f.requests[0].body.signatures, [null, 'S1']);
    one.w.destroy();

    /* saved by an older widget: no signatures at all */
    const old = JSON.parse(window.sessionStorage.getItem('k'));
    delete old.signatures;
    window.sessionStorage.setItem('k', JSON.stringify(old));
    const two = reload([
      json({ error: { code: 'history_tampered', message: 'history[1]: a model turn without a valid signature' } }, 400),
    ]);
    assert.equal(two.w.state.history.length, 4);
    await two.w.send('more');
    assert.deepEqual(two.f.requests[0].body.signatures, [null, null, null, null]);
    assert.equal(two.w.state.errorCode, 'history_tampered');
    assert.match(two.w.state.error, /could not verify this conversation.*Start a new chat/);
    assert.equal(two.w.state.canRetry, false, 'the same history would be refused again');
  });
});

/* --- the approval card ------------------------------------------------------------------ */

describe('the approval card', () => {
  test('shows what will happen, the arguments, Approve and Reject; the loop waits, idle, with the input usable', async (t) => {
    const fetch = scriptedFetch([approvalRequired({ message: 'I can add that review.' })]);
    const { chat, root, container, document } = mount(t, { fetch });
    const ended = new Promise((r) => container.addEventListener('gemini-chat:done', (e) => r(e.detail), { once: true }));
    await chat.send('Review p1: 5 stars, great');
    assert.deepEqual(await ended, { outcome: 'approval' });
    const s = chat.state;
    assert.equal(s.isLoading, false, 'no spinner while the visitor decides');
    assert.equal(s.awaitingApproval, true);
    assert.deepEqual(s.approval, { id: 'call-r', card: s.messages.at(-1).id }, 'the ticket is not in the state');
    assert.deepEqual(s.history, [ASK, CALL]);
    assert.deepEqual(s.signatures, SIGS);
    assert.deepEqual(
      s.messages.map((m) => [m.role, m.status]),
      [['user', undefined], ['assistant', undefined], ['approval', 'pending']],
    );

    /* compact mode: the card of this turn, in words */
    const [card] = shown(root, '[data-foreach="approvals"] > [data-role="approval"]');
    assert.ok(card, 'the card shows in compact mode');
    assert.equal(card.dataset.status, 'pending');
    assert.deepEqual(shown(card, '.gemini-chat__approval-title > *').map((e) => e.textContent), ['Needs your approval']);
    assert.equal(card.querySelector('[data-bind="content"]').textContent, APPROVAL.preview);
    assert.equal(card.querySelector('[data-bind="reason"]').textContent, APPROVAL.reason);
    assert.equal(card.querySelector('[data-bind="actionTitle"]').textContent, 'Add review', 'the action in words');
    const args = [...card.querySelectorAll('[data-foreach="args"] > *')].map((a) => [
      a.querySelector('[data-bind="label"]').textContent,
      a.querySelector('[data-bind="value"]').textContent,
    ]);
    assert.deepEqual(args, [['Product', 'p1'], ['Rating', '5'], ['Text', 'great']], 'labels, not the raw ids');
    const approve = card.querySelector('[data-ref="approveAction"]');
    const reject = card.querySelector('[data-ref="rejectAction"]');
    assert.ok(visible(approve) && visible(reject));
    assert.equal(approve.localName, 'button', 'a real button: Tab reaches it, Enter and Space press it');
    assert.equal(reject.localName, 'button');
    assert.equal(approve.type, 'button', 'never a form submit');
    assert.equal(approve.textContent, 'Approve');
    assert.equal(reject.textContent, 'Reject');
    assert.ok(!visible(card.querySelector('.gemini-chat__decision:not([hidden])')), 'no decision yet');

    /* compact mode: while it waits, the card comes after the model's words, next to the input */
    const said = root.querySelector('[data-bind="lastAssistantMessage"]');
    assert.equal(said.textContent.trim(), 'I can add that review.');
    assert.ok(said.compareDocumentPosition(card) & 4 /* FOLLOWING */, 'the card after the answer');

    /* the input stays usable: a new message is the way to move on without deciding */
    const input = root.querySelector('[data-ref="messageInput"]');
    assert.equal(input.disabled, false);
    assert.ok(!visible(root.querySelector('[data-ref="stopLoop"]')), 'nothing in flight, nothing to stop');

    /* focus: the card itself (not Approve: Enter pressed by habit must approve nothing), as the visitor was not typing */
    assert.equal(document.activeElement, card);
    assert.equal(card.getAttribute('tabindex'), '-1');

    /* the full history shows the same card */
    root.querySelector('[data-ref="toggleExpand"]').click();
    const [full] = shown(root, '[data-foreach="messages"] > [data-role="approval"]');
    assert.equal(full.dataset.id, card.dataset.id);
    assert.ok(visible(full.querySelector('[data-ref="approveAction"]')));
    assert.equal(shown(full, '[data-bind="content"]').map((e) => e.textContent).join('|'), APPROVAL.preview, 'the preview once');
  });

  test('the card does not take the focus from a visitor who is typing', async (t) => {
    let release;
    const fetch = scriptedFetch([() => new Promise((r) => (release = () => r(approvalRequired())))]);
    const { chat, root, document } = mount(t, { fetch });
    const finished = chat.send('Review p1');
    const input = root.querySelector('[data-ref="messageInput"]');
    input.focus();
    input.value = 'and also';
    await tick();
    release();
    await finished;
    assert.equal(document.activeElement, input);
    assert.equal(input.value, 'and also');
  });

  test('Approve: submitToolResults with the ticket and the decision; the card says Approved and loses its buttons', async (t) => {
    const fetch = scriptedFetch([approvalRequired(), done('Done: {"ok":true}', { result: { ok: true } })]);
    const { chat, root, document } = mount(t, { fetch });
    await chat.send('Review p1: 5 stars, great');
    const card = shown(root, '[data-role="approval"]')[0];
    card.querySelector('[data-ref="approveAction"]').click();
    assert.equal(document.activeElement, root.querySelector('[data-ref="messageInput"]'), 'the buttons are gone: focus goes to the input');
    await tick();
    await tick();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fetch.requests.length, 2);
    const { url, body } = fetch.requests[1];
    assert.equal(url, `${DEFAULT_ENDPOINT}/geminiAgent.submitToolResults`);
    assert.deepEqual(Object.keys(body).sort(), ['approval', 'history', 'pageState', 'signatures', 'toolDefinitions']);
    assert.deepEqual(body.approval, { id: 'call-r', ticket: 'tk.opaque.1', decision: 'approve' });
    assert.deepEqual(body.history, [ASK, CALL]);
    assert.deepEqual(body.signatures, SIGS);
    assert.deepEqual(body.pageState, { viewState: { cart: 'two items' } });
    assert.equal(chat.state.outcome, 'response');
    assert.equal(chat.state.lastAssistantMessage, 'Done: {"ok":true}');
    assert.equal(chat.state.approval, null);
    assert.equal(chat.state.awaitingApproval, false);
    assert.deepEqual(chat.state.signatures, [null, 'sig-model-1', 'sig-answer-2', 'sig-model-3']);
    assert.ok(chat.state.messages.some((m) => m.role === 'action' && m.content === 'Added review (shop.addReview)' && m.status === 'ok'));

    const after = shown(root, '[data-role="approval"]')[0];
    assert.equal(after.dataset.status, 'approved');
    assert.equal(after.querySelector('[data-ref="approveAction"]').closest('[hidden]') !== null, true, 'no buttons');
    assert.deepEqual(shown(after, '.gemini-chat__decision').map((e) => e.textContent), ['Approved']);
    assert.equal(after.querySelector('[data-bind="content"]').textContent, APPROVAL.preview, 'what was approved stays readable');
    assert.deepEqual(shown(after, '.gemini-chat__approval-title > *').map((e) => e.textContent), ['Asked for your approval']);
    /* decided, compact mode reads in order: the card, what was done, the answer */
    const line = shown(root, '[data-foreach="activity"] > *')[0];
    assert.equal(line.textContent, 'Added review (shop.addReview)');
    assert.ok(after.compareDocumentPosition(line) & 4, 'the card before what was done');
    assert.ok(line.compareDocumentPosition(root.querySelector('[data-bind="lastAssistantMessage"]')) & 4, 'and the answer last');

    /* a click on the old card's buttons (made visible by a page's CSS, say) decides nothing */
    after.querySelector('[data-ref="approveAction"]').click();
    await tick();
    assert.equal(fetch.requests.length, 2);
  });

  test('Reject: the same request with decision reject; the card says Declined', async (t) => {
    const fetch = scriptedFetch([approvalRequired(), done('I did not add the review.', { error: 'the user declined this action' })]);
    const { chat, root, container } = mount(t, { fetch });
    await chat.send('Review p1');
    const ended = new Promise((r) => container.addEventListener('gemini-chat:done', (e) => r(e.detail), { once: true }));
    shown(root, '[data-ref="rejectAction"]')[0].click();
    assert.deepEqual(await ended, { outcome: 'response' });
    const { body } = fetch.requests[1];
    assert.deepEqual(body.approval, { id: 'call-r', ticket: 'tk.opaque.1', decision: 'reject' });
    assert.equal(body.results, undefined, 'no page calls, no results');
    const card = shown(root, '[data-role="approval"]')[0];
    assert.equal(card.dataset.status, 'declined');
    assert.deepEqual(shown(card, '.gemini-chat__decision').map((e) => e.textContent), ['Declined']);
    assert.equal(shown(card, 'button').length, 0);
    assert.equal(chat.state.lastAssistantMessage, 'I did not add the review.');
    assert.ok(!chat.state.messages.some((m) => m.role === 'action'), 'nothing was done');
  });

  test('page calls of the same turn run first; their results go with the decision', async (t) => {
    const turn = {
      role: 'model',
      parts: [
        { functionCall: { id: 'p1', name: 'remove-item', args: { name: 'Hub' } } },
        { functionCall: { id: 'call-r', name: 'action_shop_addReview', args: ARGS } },
      ],
    };
    const fetch = scriptedFetch([
      approvalRequired({ calls: [{ id: 'p1', name: 'remove-item', args: { name: 'Hub' }, category: 'page-automation' }], history: [ASK, turn] }),
      json({ type: 'response', message: 'Both done.', history: [] }),
    ]);
    const { chat, root, executed } = mount(t, { fetch });
    await chat.send('remove the hub and review p1');
    assert.deepEqual(executed, ['Hub'], 'the page call ran before the card');
    assert.deepEqual(
      chat.state.messages.map((m) => [m.role, m.status]),
      [['user', undefined], ['action', 'ok'], ['approval', 'pending']],
    );
    assert.equal(fetch.requests.length, 1, 'nothing is sent until the visitor decides');
    shown(root, '[data-ref="approveAction"]')[0].click();
    await new Promise((r) => setTimeout(r, 20));
    const { body } = fetch.requests[1];
    assert.deepEqual(body.approval.decision, 'approve');
    assert.deepEqual(body.results, [{ callId: 'p1', result: '{"ok":true}', isError: false }]);
    assert.deepEqual(executed, ['Hub'], 'nothing ran twice');
  });

  test('a new message instead of a decision: the card is marked not decided and sendMessage goes as usual', async (t) => {
    const fetch = scriptedFetch([approvalRequired(), json({ type: 'response', message: 'Sure, what else?', history: [] })]);
    const { chat, root, window } = mount(t, { fetch });
    await chat.send('Review p1');
    const input = root.querySelector('[data-ref="messageInput"]');
    input.value = 'Actually, never mind';
    input.dispatchEvent(new window.Event('input', { bubbles: true }));
    assert.equal(root.querySelector('[data-ref="sendMessage"]').disabled, false);
    input.dispatchEvent(new window.KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    await new Promise((r) => setTimeout(r, 20));
    const { url, body } = fetch.requests[1];
    assert.equal(url, `${DEFAULT_ENDPOINT}/geminiAgent.sendMessage`);
    assert.equal(body.message, 'Actually, never mind');
    assert.equal(body.approval, undefined);
    assert.deepEqual(body.history, [ASK, CALL], 'the server answers the waiting call "not run"');
    assert.deepEqual(body.signatures, SIGS);
    const card = chat.state.messages.find((m) => m.role === 'approval');
    assert.equal(card.status, 'undecided');
    assert.equal(chat.state.approval, null);
    assert.deepEqual(chat.state.approvals, [], 'compact mode shows the new turn');
    root.querySelector('[data-ref="toggleExpand"]').click();
    const full = shown(root, '[data-foreach="messages"] > [data-role="approval"]')[0];
    assert.deepEqual(shown(full, '.gemini-chat__decision').map((e) => e.textContent), ['Not decided, so not done']);
    assert.equal(shown(full, 'button').length, 0);
  });

  test('approval_invalid: plain words, no Retry, and the card does not claim it was carried out', async (t) => {
    const fetch = scriptedFetch([
      approvalRequired(),
      json({ error: { code: 'approval_invalid', message: 'ticket expired at 1700000000000' } }, 403),
      json({ type: 'response', message: 'Want me to try again?', history: [] }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    shown(root, '[data-ref="approveAction"]')[0].click();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(chat.state.errorCode, 'approval_invalid');
    assert.match(chat.state.error, /^This approval has expired or was already used/);
    assert.doesNotMatch(root.textContent, /1700000000000/);
    assert.equal(chat.state.canRetry, false, 'a ticket is used once');
    const card = shown(root, '[data-role="approval"]')[0];
    assert.equal(card.dataset.status, 'invalid');
    assert.deepEqual(shown(card, '.gemini-chat__decision').map((e) => e.textContent), ['Not done: this approval had expired or was already used']);
    /* the conversation goes on */
    await chat.send('hmm');
    assert.equal(fetch.requests[2].body.approval, undefined);
    assert.equal(chat.state.lastAssistantMessage, 'Want me to try again?');
  });

  test('a failure after Approve that can be retried sends the same decision again', async (t) => {
    const fetch = scriptedFetch([
      approvalRequired(),
      json({ error: { code: 'budget_unavailable', message: 'the store is busy' } }, 503),
      done('Done.', { result: { ok: true } }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    shown(root, '[data-ref="approveAction"]')[0].click();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(chat.state.errorCode, 'budget_unavailable');
    assert.equal(chat.state.canRetry, true);
    await chat.retry();
    assert.deepEqual(fetch.requests[2].body.approval, fetch.requests[1].body.approval);
    assert.equal(chat.state.lastAssistantMessage, 'Done.');
  });

  test('the waiting approval survives a reload of the tab, and Approve still works', async (t) => {
    const fetch = scriptedFetch([approvalRequired()]);
    const { chat, window, document } = mount(t, { fetch, storage: 'session', chat: { storageKey: 'r' } });
    await chat.send('Review p1');
    chat.destroy();
    const c = document.createElement('div');
    document.body.append(c);
    const f2 = scriptedFetch([done('Done.', { result: { ok: true } })]);
    const again = mountChat(c, { fetch: f2, storage: window.sessionStorage, storageKey: 'r', checkStatus: false });
    t.after(() => again.destroy());
    assert.equal(again.state.awaitingApproval, true);
    assert.deepEqual(again.state.signatures, SIGS);
    const approve = [...c.querySelectorAll('[data-ref="approveAction"]')].find(visible);
    assert.ok(approve);
    approve.click();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(f2.requests[0].body.approval, { id: 'call-r', ticket: 'tk.opaque.1', decision: 'approve' });
    assert.deepEqual(f2.requests[0].body.signatures, SIGS);
  });

  test('Stop while the decision is on its way: the history is left as the server signed it', async (t) => {
    const fetch = scriptedFetch([
      approvalRequired(),
      (req) => new Promise((_, rej) => req.signal.addEventListener('abort', () => rej(Object.assign(new Error('aborted'), { name: 'AbortError' })))),
      json({ type: 'response', message: 'ok', history: [] }),
    ]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    shown(root, '[data-ref="approveAction"]')[0].click();
    await tick();
    assert.equal(chat.state.isLoading, true);
    chat.stop();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(chat.state.outcome, 'stopped');
    assert.deepEqual(chat.state.history, [ASK, CALL], 'the browser never answers the server action’s call');
    assert.deepEqual(chat.state.signatures, SIGS);
    await chat.send('what happened?');
    assert.deepEqual(fetch.requests[2].body.history, [ASK, CALL]);
  });

  test('Stop during a new message while the server action waits: the history is left alone', async (t) => {
    const enc = new TextEncoder();
    let ctrl;
    const streamed = new Response(new ReadableStream({ start: (c) => (ctrl = c) }), {
      status: 200,
      headers: { 'Content-Type': 'application/x-ndjson' },
    });
    const fetch = scriptedFetch([approvalRequired(), streamed]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    const finished = chat.send('no wait, tell me more');
    await tick();
    ctrl.enqueue(enc.encode('{"type":"delta","delta":"Sure: the review"}\n'));
    const answer = () => root.querySelector('[data-bind="lastAssistantMessage"]').textContent;
    for (let i = 0; i < 100 && !/Sure/.test(answer()); i++) await new Promise((r) => setTimeout(r, 5));
    chat.stop();
    await finished;
    assert.equal(chat.state.lastAssistantStatus, 'stopped');
    assert.deepEqual(chat.state.history, [ASK, CALL], 'no browser-made answer to the server’s call, no user turn after it');
    assert.deepEqual(chat.state.signatures, SIGS);
  });

  test('approval-required over the stream: the result line carries the same answer', async (t) => {
    const events = [
      { type: 'status', status: 'thinking' },
      { type: 'tool-call', name: 'action_shop_addReview', args: ARGS, side: 'server', id: 'call-r' },
      {
        type: 'result',
        result: { type: 'approval-required', approval: APPROVAL, calls: [], history: [ASK, CALL], signatures: SIGS, serverCalls: [] },
      },
    ];
    const body = events.map((e) => `${JSON.stringify(e)}\n`).join('');
    const fetch = scriptedFetch([new Response(body, { status: 200, headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8' } })]);
    const { chat } = mount(t, { fetch });
    await chat.send('Review p1');
    assert.equal(fetch.requests[0].init.headers.Accept, 'application/x-ndjson');
    assert.equal(chat.state.outcome, 'approval');
    assert.equal(chat.state.awaitingApproval, true);
    assert.deepEqual(chat.state.signatures, SIGS);
  });

  test('an approval without an id or a ticket is a bad answer: no card, nothing to approve', async (t) => {
    const fetch = scriptedFetch([approvalRequired({ approval: { ...APPROVAL, ticket: '' } })]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    assert.equal(chat.state.errorCode, 'bad_answer');
    assert.equal(chat.state.approval, null);
    assert.equal(root.querySelectorAll('[data-role="approval"]').length, 0);
    assert.equal(readApproval({ ...APPROVAL, id: 7 }), null);
    assert.equal(readApproval(null), null);
  });

  test('readApproval: what the card shows', () => {
    const a = readApproval({ ...APPROVAL, args: { productId: 'p1', tags: ['a', 'b'], note: null, nested: { x: 1 } } });
    assert.deepEqual(a.args, [
      { id: 'productId', name: 'productId', label: 'Product', value: 'p1' },
      { id: 'tags', name: 'tags', label: 'Tags', value: '["a","b"]' },
      { id: 'note', name: 'note', label: 'Note', value: 'null' },
      { id: 'nested', name: 'nested', label: 'Nested', value: '{"x":1}' },
    ]);
    assert.equal(a.title, 'Add review');
    assert.equal(a.expires, '2030-01-01T10:10:00.000Z');
    assert.equal(readApproval({ ...APPROVAL, expiresAt: 1e300 }).expires, '', 'a date past what Date holds is no date');
    /* no preview from the server: the action in words */
    assert.equal(readApproval({ id: 'x', ticket: 't', tool: 'shop.addReview' }).preview, 'Run add review (shop.addReview).');
  });

  test('a page template without approval buttons: the visitor is told, nothing is approved', async (t) => {
    const body = `<template id="gemini-chat"><div>
      <ol data-foreach="messages"><li data-bind="content"></li></ol>
      <textarea data-ref="messageInput"></textarea><button data-ref="sendMessage">Send</button></div></template>
      <div id="chat"></div>`;
    const fetch = scriptedFetch([approvalRequired()]);
    const { chat } = mount(t, { fetch, body });
    await chat.send('Review p1');
    assert.equal(chat.state.outcome, 'approval-unavailable');
    assert.equal(chat.state.approval, null);
    assert.match(chat.state.messages.at(-1).content, /needs your approval.*cannot ask for it, so it was not done/);
    assert.equal(fetch.requests.length, 1);
  });

  test('New chat forgets a waiting approval', async (t) => {
    const fetch = scriptedFetch([approvalRequired()]);
    const { chat, root } = mount(t, { fetch });
    await chat.send('Review p1');
    root.querySelector('[data-ref="clearChat"]').click();
    assert.equal(chat.state.approval, null);
    assert.deepEqual(chat.state.signatures, []);
    assert.equal(root.querySelectorAll('[data-role="approval"]').length, 0);
  });
});

/* --- nobody but the visitor decides ------------------------------------------------------------ */

describe('only the visitor approves', () => {
  test('the page automation (and so the model and WebMCP agents) never sees or reaches the card', async (t) => {
    const body = '<button data-ref="buyBtn">Buy</button><div id="chat"></div>';
    const { window, document, container } = page(body);
    const automation = createAutomation(document);
    const fetch = scriptedFetch([approvalRequired()]);
    const chat = mountChat(container, {
      automation,
      tools: () => buildTools(automation),
      toolDefinitions,
      describeCall,
      fetch,
      storage: null,
      checkStatus: false,
    });
    t.after(() => chat.destroy());
    await chat.send('Review p1');
    assert.equal(chat.state.awaitingApproval, true);
    assert.ok([...document.querySelectorAll('[data-ref="approveAction"]')].some(visible), 'the card shows');

    const refs = automation.getPageState().interactions.map((i) => i.refName);
    assert.deepEqual(refs, ['buyBtn'], 'the widget, card and all, is data-agent="off"');
    const tools = buildTools(automation);
    assert.doesNotMatch(JSON.stringify(tools.map((x) => [x.name, x.description])), /approve|reject/i);
    const trigger = tools.find((x) => x.name === 'trigger-interaction');
    for (const coordinate of ['approveAction', `${chat.state.approval.card}/approveAction`]) {
      const r = await trigger.execute({ coordinate });
      assert.equal(r.ok, false, `${coordinate} is not reachable`);
    }
    assert.equal(chat.state.awaitingApproval, true, 'still waiting for the visitor');
    assert.equal(fetch.requests.length, 1);
    assert.equal(typeof chat.approve, 'undefined', 'the handle has no way to approve');
    assert.ok(window);
  });

  test('the default template has the card in both modes, and the contract names its tags', async () => {
    const { readFileSync } = await import('node:fs');
    const contract = readFileSync(new URL('../../www/agent/gemini-chat.jay-contract', import.meta.url), 'utf8');
    for (const tag of ['approveAction', 'rejectAction', 'awaitingApproval', 'approvals', 'reason', 'args'])
      assert.match(contract, new RegExp(`tag: ${tag}\\b`), `the contract names ${tag}`);
    assert.match(contract, /approval/);
    /* the full history's, and compact mode's (last while it waits, first once decided) */
    assert.equal((DEFAULT_TEMPLATE.match(/data-ref="approveAction"/g) ?? []).length, 3);
    assert.equal((DEFAULT_TEMPLATE.match(/data-ref="rejectAction"/g) ?? []).length, 3);
    const css = readFileSync(new URL('../../www/agent/chat.css', import.meta.url), 'utf8');
    assert.match(css, /gemini-chat__btn--approve:focus-visible/, 'a clear focus ring on the buttons');
    assert.match(css, /@media \(max-width: 599\.98px\)[^@]*gemini-chat__approval-actions/, 'narrow screens: buttons share the width');
  });
});
