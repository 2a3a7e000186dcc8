// Tests of the widget's side of the todo plugin (www/agent/chat.js) in
// jsdom: latestPlan() reading the plan from the history the server
// returns, the checklist above the last answer (a list of read-only
// checkboxes with their checked state) updated as answers arrive, and the
// conversation key kept, sent back and forgotten with the conversation.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import { mountChat, latestPlan } from '../../www/agent/chat.js';

function page() {
  const dom = new JSDOM('<!doctype html><html><head></head><body><div id="chat"></div></body></html>', {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true,
  });
  return { window: dom.window, container: dom.window.document.getElementById('chat') };
}

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** A fetch answering from `steps` in order (the status probe: 405). */
function scriptedFetch(steps) {
  const requests = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) return json({ error: { code: 'method_not_allowed', message: 'POST' } }, 405);
    requests.push({ url, body: init.body ? JSON.parse(init.body) : undefined });
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request to ${url}`);
    return typeof step === 'function' ? step() : step;
  };
  fn.requests = requests;
  return fn;
}

/** The text a reader gets: hidden parts left out. */
const shownText = (el) => [...el.childNodes].filter((n) => !n.hidden).map((n) => (n.nodeType === 1 ? shownText(n) : n.textContent)).join('');

const step = (id, title, status) => ({ id, title, status });
/** A user turn with the answer of a todo action, as the server writes it. */
const todoTurn = (tool, steps) => ({
  role: 'user',
  parts: [{ functionResponse: { name: `action_todo_${tool}`, response: { result: { todo: { steps } } } } }],
});
const callTurn = (tool) => ({ role: 'model', parts: [{ functionCall: { name: `action_todo_${tool}`, args: {} } }] });

describe('latestPlan', () => {
  test('the newest todo answer wins; other answers and errors do not count', () => {
    const h = [
      { role: 'user', parts: [{ text: 'plan' }] },
      callTurn('plan'),
      todoTurn('plan', [step(1, 'pack', 'pending'), step(2, 'ship', 'pending')]),
      callTurn('complete'),
      todoTurn('complete', [step(1, 'pack', 'done'), step(2, 'ship', 'in_progress')]),
      { role: 'model', parts: [{ functionCall: { name: 'action_todo_update', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'action_todo_update', response: { error: 'no step with that id' } } }] },
      { role: 'model', parts: [{ functionCall: { name: 'action_shop_search', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'action_shop_search', response: { result: { todo: { steps: [] } } } } }] },
      { role: 'model', parts: [{ text: 'ok' }] },
    ];
    assert.deepEqual(latestPlan(h), [
      { id: '1', title: 'pack', status: 'done', checked: 'true', mark: '\u2713' },
      { id: '2', title: 'ship', status: 'in_progress', checked: 'mixed', mark: '\u25D0' },
    ]);
  });

  test('none, malformed steps, unknown states', () => {
    assert.equal(latestPlan([]), null);
    assert.equal(latestPlan(undefined), null);
    assert.equal(latestPlan([{ role: 'user', parts: [{ text: 'hi' }] }]), null);
    assert.deepEqual(
      latestPlan([todoTurn('show', [step(1, 'a', 'weird'), { id: 2 }, null, { title: 'no id' }])]),
      [{ id: '1', title: 'a', status: 'pending', checked: 'false', mark: '\u25CB' }],
    );
    assert.deepEqual(latestPlan([todoTurn('show', [])]), []);
  });
});

describe('the checklist', () => {
  test('shown above the last answer, updated by the next answer; the key goes back', async (t) => {
    const h1 = [
      { role: 'user', parts: [{ text: 'Plan the move' }] },
      callTurn('plan'),
      todoTurn('plan', [step(1, 'pack', 'pending'), step(2, 'ship', 'pending')]),
      { role: 'model', parts: [{ text: 'Planned.' }] },
    ];
    const h2 = [
      ...h1,
      { role: 'user', parts: [{ text: 'Packed' }] },
      callTurn('complete'),
      todoTurn('complete', [step(1, 'pack', 'done'), step(2, 'ship', 'in_progress')]),
      { role: 'model', parts: [{ text: 'Marked.' }] },
    ];
    const fetch = scriptedFetch([
      json({ type: 'response', message: 'Planned.', history: h1, conversation: 'c1.key', serverCalls: [{ name: 'todo.plan', ok: true, ms: 1 }] }),
      json({ type: 'response', message: 'Marked.', history: h2, conversation: 'c1.key', serverCalls: [{ name: 'todo.complete', ok: true, ms: 1 }] }),
    ]);
    const { window, container } = page();
    const chat = mountChat(container, { fetch, storage: window.sessionStorage });
    t.after(() => chat.destroy());
    const root = container.querySelector('.gemini-chat');
    /* the compact view's checklist (the expanded one is hidden) */
    const list = () => [...root.querySelectorAll('.gemini-chat__compact .gemini-chat__todo')].find((el) => !el.closest('[hidden]'));

    assert.equal(list(), undefined, 'no plan, no checklist');
    await chat.send('Plan the move');
    let section = list();
    assert.ok(section, 'the checklist shows');
    assert.equal(section.getAttribute('aria-label'), 'Plan');
    assert.equal(section.querySelector('.gemini-chat__todo-title').textContent, 'Plan: 0 of 2 done');
    let boxes = [...section.querySelectorAll('[role="checkbox"]')];
    assert.deepEqual(boxes.map((b) => shownText(b).trim()), ['\u25CBpack', '\u25CBship']);
    assert.deepEqual(boxes.map((b) => b.getAttribute('aria-checked')), ['false', 'false']);
    assert.ok(boxes.every((b) => b.getAttribute('aria-readonly') === 'true'));
    assert.equal(section.querySelector('ul').children.length, 2, 'a list, one item per step');
    /* above the last answer */
    const answer = root.querySelector('.gemini-chat__compact [data-role="assistant"]');
    assert.ok(section.compareDocumentPosition(answer) & window.Node.DOCUMENT_POSITION_FOLLOWING);

    await chat.send('Packed');
    assert.equal(fetch.requests[0].body.conversation, undefined, 'the first request has no key');
    assert.equal(fetch.requests[1].body.conversation, 'c1.key', 'the server\'s key goes back');
    section = list();
    boxes = [...section.querySelectorAll('[role="checkbox"]')];
    assert.deepEqual(boxes.map((b) => b.getAttribute('aria-checked')), ['true', 'mixed']);
    assert.equal(section.querySelector('.gemini-chat__todo-title').textContent, 'Plan: 1 of 2 done');
    assert.deepEqual([...section.querySelectorAll('li')].map((li) => li.getAttribute('data-status')), ['done', 'in_progress']);
    assert.match(shownText(boxes[1]), /\(in progress\)/);
    assert.doesNotMatch(shownText(boxes[0]), /in progress/);

    /* kept across a reload of the tab, forgotten with the conversation */
    const saved = JSON.parse(window.sessionStorage.getItem('gemini-agent:history'));
    assert.equal(saved.conversation, 'c1.key');
    chat.clear();
    assert.equal(list(), undefined, 'a new conversation has no plan');
    assert.equal(JSON.parse(window.sessionStorage.getItem('gemini-agent:history')).conversation, '');
  });

  test('the expanded view shows it too', async (t) => {
    const h = [{ role: 'user', parts: [{ text: 'x' }] }, callTurn('plan'), todoTurn('plan', [step(1, 'a', 'done')]), { role: 'model', parts: [{ text: 'ok' }] }];
    const fetch = scriptedFetch([json({ type: 'response', message: 'ok', history: h, conversation: 'c1.k' })]);
    const { window, container } = page();
    const chat = mountChat(container, { fetch, storage: window.sessionStorage, expanded: true });
    t.after(() => chat.destroy());
    await chat.send('x');
    const root = container.querySelector('.gemini-chat');
    const shown = [...root.querySelectorAll('.gemini-chat__todo')].filter((el) => !el.closest('[hidden]'));
    assert.equal(shown.length, 1, 'one checklist at a time');
    assert.equal(shown[0].querySelector('[role="checkbox"]').getAttribute('aria-checked'), 'true');
  });
});
