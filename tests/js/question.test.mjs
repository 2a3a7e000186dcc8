// Tests of the widget's question card (question.js, and chat.js's `question`
// answer): what the card shows (radio buttons, checkboxes, a field; defaults
// preselected; required marked), that required questions are enforced before
// anything is sent, the submitToolResults body (`answer` {id, answers}, with
// the page results of the same turn), the focus on the card's first control,
// and a new message instead of an answer. jsdom against a scripted fake
// fetch; no network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import { mountChat } from '../../www/agent/chat.js';
import { readQuestion, describeAnswers } from '../../www/agent/question.js';

function page() {
  const dom = new JSDOM('<!doctype html><html><head></head><body><div id="chat"></div></body></html>', {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true,
  });
  return { window: dom.window, document: dom.window.document, container: dom.window.document.getElementById('chat') };
}

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

function scriptedFetch(steps) {
  const requests = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) return json({ error: { code: 'method_not_allowed', message: 'use POST' } }, 405);
    requests.push({ url, body: JSON.parse(init.body) });
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request #${requests.length} to ${url}`);
    return typeof step === 'function' ? step() : step;
  };
  fn.requests = requests;
  return fn;
}

function mount(t, fetch) {
  const { window, document, container } = page();
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
    automation: { getPageState: () => ({ viewState: {} }) },
    tools,
    describeCall: (name, args) => `Removed ${args?.name}`,
    fetch,
    storage: null,
    checkStatus: false,
  });
  t.after(() => chat.destroy());
  return { window, document, chat, executed, root: container.querySelector('.gemini-chat') };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond) {
  for (let i = 0; i < 50 && !cond(); i++) await tick();
  assert.ok(cond(), 'the condition never held');
}

const ASK = { role: 'user', parts: [{ text: 'a shirt please' }] };
const CALL = { role: 'model', parts: [{ functionCall: { id: 'call-q', name: 'action_clarification_ask', args: {} } }] };
const QUESTION = {
  id: 'call-q',
  tool: 'clarification.ask',
  questions: [
    { id: 'size', text: 'Which size?', kind: 'single', options: ['S', 'M', 'L'], required: true, default: 'M' },
    { id: 'extras', text: 'Any extras?', kind: 'multiple', options: ['gift wrap', 'card'], required: false, default: ['card'] },
    { id: 'note', text: 'A note?', kind: 'text', required: true },
  ],
};
function asked(extra = {}) {
  return json({ type: 'question', question: QUESTION, calls: [], history: [ASK, CALL], signatures: [null, 's1'], serverCalls: [], ...extra });
}
const DONE = json({ type: 'response', message: 'Thanks!', history: [ASK, CALL], signatures: [null, 's1'], serverCalls: [] });

test('readQuestion checks what the card needs', () => {
  assert.equal(readQuestion(null), null);
  assert.equal(readQuestion({ id: 'x', questions: [] }), null);
  assert.equal(readQuestion({ id: 'x', questions: [{ id: 'a', text: 'A', kind: 'single' }] }), null, 'a choice needs options');
  assert.equal(readQuestion({ id: 'x', questions: [{ id: 'a', text: 'A', kind: 'text' }, { id: 'a', text: 'B', kind: 'text' }] }), null, 'ids unique');
  assert.equal(readQuestion({ id: 'x', questions: [{ id: 'a b', text: 'A', kind: 'text' }] }), null, 'id characters');
  const q = readQuestion(QUESTION);
  assert.equal(q.questions.length, 3);
  assert.equal(q.questions[2].required, true);
  assert.equal(readQuestion({ id: 'x', questions: [{ id: 'a', text: 'A', kind: 'text' }] }).questions[0].required, true, 'required by default');
  assert.equal(describeAnswers(q.questions, { size: 'L', extras: ['card'] }), 'Which size? L · Any extras? card');
});

test('a question answer shows a card: radios, checkboxes, a field, defaults, focus', async (t) => {
  const fetch = scriptedFetch([asked(), DONE]);
  const { chat, root, document } = mount(t, fetch);
  await chat.send('a shirt please');
  const card = root.querySelector('form.gemini-chat__question');
  assert.ok(card, 'the card is shown');
  assert.equal(card.getAttribute('data-call'), 'call-q');
  const radios = [...card.querySelectorAll('input[type="radio"]')];
  assert.deepEqual(radios.map((r) => r.parentElement.textContent), ['S', 'M', 'L']);
  assert.deepEqual(radios.map((r) => r.checked), [false, true, false], 'the default is chosen');
  assert.equal(new Set(radios.map((r) => r.name)).size, 1, 'one radio group');
  const boxes = [...card.querySelectorAll('input[type="checkbox"]')];
  assert.deepEqual(boxes.map((b) => b.checked), [false, true]);
  const field = card.querySelector('textarea');
  assert.ok(field, 'the text question is a field');
  assert.equal(card.querySelector(`label[for="${field.id}"]`).textContent, 'A note? *', 'labelled, marked required');
  assert.match(card.querySelector('legend').textContent, /Which size\? \*/);
  assert.match(card.querySelectorAll('legend')[1].textContent, /\(optional\)/);
  assert.equal(document.activeElement, radios[0], 'the focus is on the first control');
  assert.equal(chat.state.question.id, 'call-q');
  assert.equal(fetch.requests.length, 1);

  /* required enforced: the note is empty, nothing is sent */
  card.requestSubmit();
  await tick();
  assert.equal(fetch.requests.length, 1, 'nothing sent with a required question left');
  const error = card.querySelector('[role="alert"]');
  assert.equal(error.hidden, false);
  assert.match(error.textContent, /A note\?/);
  assert.equal(document.activeElement, field, 'the focus goes to what is missing');

  radios[2].checked = true;
  boxes[0].checked = true;
  field.value = 'thanks';
  card.requestSubmit();
  await until(() => fetch.requests.length === 2 && !chat.state.isLoading);
  const body = fetch.requests[1].body;
  assert.match(fetch.requests[1].url, /geminiAgent\.submitToolResults$/);
  assert.deepEqual(body.answer, { id: 'call-q', answers: { size: 'L', extras: ['gift wrap', 'card'], note: 'thanks' } });
  assert.equal(body.results, undefined, 'no page results in this turn');
  assert.deepEqual(body.history, [ASK, CALL]);
  assert.equal(root.querySelector('form.gemini-chat__question'), null, 'the card is gone');
  assert.equal(chat.state.question, null);
  const texts = chat.state.messages.map((m) => `${m.role}: ${m.content}`);
  assert.deepEqual(texts.slice(-2), ['user: Which size? L · Any extras? gift wrap, card · A note? thanks', 'assistant: Thanks!']);
});

test('page calls of the same turn run first and go with the answer', async (t) => {
  const calls = [{ id: 'c1', name: 'remove-item', args: { name: 'hat' } }];
  const fetch = scriptedFetch([asked({ calls }), DONE]);
  const { chat, root, executed } = mount(t, fetch);
  await chat.send('a shirt please');
  assert.deepEqual(executed, ['hat']);
  const card = root.querySelector('form.gemini-chat__question');
  card.querySelector('textarea').value = 'x';
  card.requestSubmit();
  await until(() => fetch.requests.length === 2 && !chat.state.isLoading);
  assert.equal(fetch.requests[1].body.results.length, 1);
  assert.equal(fetch.requests[1].body.results[0].callId, 'c1');
  assert.deepEqual(fetch.requests[1].body.answer.answers, { size: 'M', extras: ['card'], note: 'x' });
});

test('a new message instead of an answer takes the card away', async (t) => {
  const fetch = scriptedFetch([asked(), DONE]);
  const { chat, root } = mount(t, fetch);
  await chat.send('a shirt please');
  assert.ok(root.querySelector('form.gemini-chat__question'));
  await chat.send('never mind');
  assert.equal(root.querySelector('form.gemini-chat__question'), null);
  assert.equal(fetch.requests[1].body.message, 'never mind');
  assert.equal(fetch.requests[1].body.answer, undefined);
});

test('an unusable question is an error, not a card', async (t) => {
  const fetch = scriptedFetch([json({ type: 'question', question: { id: 'q', questions: [] }, history: [ASK, CALL] })]);
  const { chat, root } = mount(t, fetch);
  await chat.send('a shirt please');
  assert.equal(root.querySelector('form.gemini-chat__question'), null);
  assert.match(chat.state.error, /cannot use/);
});

test('the card does not take the focus from a new message being typed', async (t) => {
  let input = null;
  const fetch = scriptedFetch([
    () => {
      input.focus();
      input.value = 'and also a hat';
      return asked();
    },
  ]);
  const { chat, root, document } = mount(t, fetch);
  input = root.querySelector('[data-ref="messageInput"]');
  await chat.send('a shirt please');
  assert.ok(root.querySelector('form.gemini-chat__question'), 'the card is shown');
  assert.equal(document.activeElement, input, 'the focus stays where the visitor types');
});
