// Tests of the user commands in the chat widget (www/agent/commands.js and
// their use in www/agent/chat.js) in jsdom, against a fake fetch: the list
// `/` opens (rendering, filtering, keyboard, mouse, ARIA), running a command
// without the model, the history and signatures of a shared and of an
// unshared output, errors, and a site without commands. No network.
//
// Run: node --test tests/js/   (needs `scripts/setup-www.sh` for www/vendor)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

import { readFileSync } from 'node:fs';
import { mountChat, ERROR_WORDS, DEFAULT_TEMPLATE } from '../../www/agent/chat.js';
import { DEFAULT_ENDPOINT } from '../../www/agent/origin.js';
import { commandsEndpoint, matchCommands, parseCommandLine, readCommands, sharedTurn } from '../../www/agent/commands.js';

const LISTING = {
  commands: [
    { name: 'greeting', description: 'Say the configured greeting', shareWithModel: true },
    { name: 'grep', description: 'Find a line', shareWithModel: false },
    { name: 'time', description: 'What time it is', shareWithModel: false },
  ],
};

function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

/**
 * A fake fetch: GET …/commands answers `listing` (a Response or a function
 * giving one; counted in fn.lists); the status route answers 405 as a server
 * without it; every other request takes the next step of `steps`.
 */
function fakeFetch(steps = [], { listing = () => json(LISTING) } = {}) {
  const requests = [];
  const lists = [];
  const fn = async (url, init = {}) => {
    if (/\/geminiAgent\.status$/.test(url)) return json({ error: { code: 'method_not_allowed', message: 'use POST' } }, 405);
    if ((init.method ?? 'GET') === 'GET') {
      lists.push(url);
      const answer = typeof listing === 'function' ? listing(url) : listing;
      if (answer instanceof Error) throw answer;
      return answer;
    }
    const request = { url, init, body: init.body ? JSON.parse(init.body) : undefined };
    requests.push(request);
    const step = steps.shift();
    if (step === undefined) throw new Error(`unexpected request #${requests.length} to ${url}`);
    return typeof step === 'function' ? step(request) : step;
  };
  fn.requests = requests;
  fn.lists = lists;
  return fn;
}

function mount(t, fetch, chatOptions = {}) {
  const dom = new JSDOM('<!doctype html><html><body><div id="chat"></div></body></html>', {
    url: 'http://127.0.0.1:8080/',
    pretendToBeVisual: true,
  });
  const { window } = dom;
  const warn = window.console.warn.bind(window.console);
  window.console.warn = (...a) => (String(a[0]).startsWith('gemini-chat:') ? undefined : warn(...a));
  const container = window.document.getElementById('chat');
  const chat = mountChat(container, { fetch, storage: null, ...chatOptions });
  t?.after?.(() => chat.destroy());
  const root = container.querySelector('.gemini-chat');
  const input = root.querySelector('[data-ref="messageInput"]');
  return { window, document: window.document, container, chat, root, input };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

/** Type `value` into the input as the visitor would (focus, value, input event), and let the list load. */
async function type(w, value) {
  w.input.focus();
  w.input.value = value;
  w.input.dispatchEvent(new w.window.Event('input', { bubbles: true }));
  await tick();
  await tick();
}

function key(w, name, init = {}) {
  const ev = new w.window.KeyboardEvent('keydown', { key: name, bubbles: true, cancelable: true, ...init });
  w.input.dispatchEvent(ev);
  return ev;
}

const listbox = (w) => w.root.querySelector('[role="listbox"]');
const options = (w) => [...listbox(w).querySelectorAll('[role="option"]')];
const shownNames = (w) => (listbox(w).hidden ? [] : options(w).map((o) => o.querySelector('.gemini-chat__command-name').textContent));
const selected = (w) => options(w).find((o) => o.getAttribute('aria-selected') === 'true');

describe('commands.js helpers', () => {
  test('parseCommandLine: the name and the rest of the line', () => {
    assert.deepEqual(parseCommandLine('/greeting at noon'), { name: 'greeting', args: 'at noon' });
    assert.deepEqual(parseCommandLine('  /time  '), { name: 'time', args: '' });
    assert.deepEqual(parseCommandLine('/note one\ntwo'), { name: 'note', args: 'one\ntwo' });
    assert.equal(parseCommandLine('hello /greeting'), null);
    assert.equal(parseCommandLine('/'), null);
  });
  test('matchCommands: by prefix, only while the input is one /word', () => {
    const list = readCommands(LISTING);
    assert.deepEqual(matchCommands(list, '/').map((c) => c.name), ['greeting', 'grep', 'time']);
    assert.deepEqual(matchCommands(list, '/GRE').map((c) => c.name), ['greeting', 'grep']);
    assert.deepEqual(matchCommands(list, '/gree').map((c) => c.name), ['greeting']);
    assert.deepEqual(matchCommands(list, '/greeting x'), []);
    assert.deepEqual(matchCommands(list, 'gre'), []);
  });
  test('readCommands leaves out what is malformed', () => {
    assert.deepEqual(readCommands({ commands: [{ name: 'ok', description: 'd' }, { name: 'bad name' }, { name: 5 }, null] }), [
      { name: 'ok', description: 'd', shareWithModel: false },
    ]);
    assert.deepEqual(readCommands({ error: {} }), []);
    assert.deepEqual(readCommands(null), []);
  });
  test('commandsEndpoint sits next to the actions endpoint', () => {
    assert.equal(commandsEndpoint('/_jay/actions'), '/_jay/commands');
    assert.equal(commandsEndpoint('/shop/_jay/actions/'), '/shop/_jay/commands');
    assert.equal(commandsEndpoint('https://agent.example.org/_jay/actions'), 'https://agent.example.org/_jay/commands');
    /* another shape: next to the module, as the default endpoint is */
    assert.equal(commandsEndpoint('/api'), new URL('../../www/_jay/commands', import.meta.url).href);
  });
  test('sharedTurn is a user turn naming the command', () => {
    assert.deepEqual(sharedTurn('greeting', 'Howdy'), { role: 'user', parts: [{ text: 'Output of /greeting:\nHowdy' }] });
  });
});

describe('the list `/` opens', () => {
  test('no request until the first `/`; then once; the commands with their descriptions, ARIA in place', async (t) => {
    const fetch = fakeFetch();
    const w = mount(t, fetch);
    await tick();
    assert.equal(fetch.lists.length, 0, 'nothing asked at start');
    await type(w, 'hello');
    assert.equal(fetch.lists.length, 0, 'text without a leading / asks nothing');
    await type(w, '/');
    assert.deepEqual(fetch.lists, [DEFAULT_ENDPOINT.replace(/actions$/, 'commands')]);
    const box = listbox(w);
    assert.equal(box.hidden, false);
    assert.equal(box.getAttribute('aria-label'), 'Commands');
    assert.deepEqual(shownNames(w), ['/greeting', '/grep', '/time']);
    assert.equal(options(w)[0].querySelector('.gemini-chat__command-desc').textContent, 'Say the configured greeting');
    assert.equal(w.input.getAttribute('aria-controls'), box.id);
    assert.equal(w.input.getAttribute('aria-autocomplete'), 'list');
    assert.equal(w.input.getAttribute('aria-activedescendant'), options(w)[0].id);
    assert.equal(selected(w), options(w)[0]);
    await type(w, '');
    await type(w, '/');
    assert.equal(fetch.lists.length, 1, 'the list is asked for once');
  });

  test('filtered as the visitor types; closed when nothing matches or a space follows', async (t) => {
    const w = mount(t, fakeFetch());
    await type(w, '/gre');
    assert.deepEqual(shownNames(w), ['/greeting', '/grep']);
    await type(w, '/greet');
    assert.deepEqual(shownNames(w), ['/greeting']);
    await type(w, '/zzz');
    assert.equal(listbox(w).hidden, true);
    assert.equal(w.input.hasAttribute('aria-activedescendant'), false);
    await type(w, '/greeting now');
    assert.equal(listbox(w).hidden, true);
  });

  test('a command name or description is text, never HTML', async (t) => {
    const listing = () => json({ commands: [{ name: 'x', description: '<img src=x onerror="globalThis.pwned=1">' }] });
    const w = mount(t, fakeFetch([], { listing }));
    await type(w, '/');
    assert.equal(listbox(w).querySelector('img'), null);
    assert.match(options(w)[0].textContent, /<img src=x/);
  });

  test('ArrowDown/ArrowUp move (and wrap), Enter picks: the input gets `/name `, nothing is sent', async (t) => {
    const fetch = fakeFetch();
    const w = mount(t, fetch);
    await type(w, '/');
    assert.equal(key(w, 'ArrowDown').defaultPrevented, true);
    assert.equal(selected(w).getAttribute('data-command'), 'grep');
    assert.equal(w.input.getAttribute('aria-activedescendant'), selected(w).id);
    key(w, 'ArrowDown');
    key(w, 'ArrowDown');
    assert.equal(selected(w).getAttribute('data-command'), 'greeting', 'wraps to the first');
    key(w, 'ArrowUp');
    assert.equal(selected(w).getAttribute('data-command'), 'time', 'wraps to the last');
    const ev = key(w, 'Enter');
    assert.equal(ev.defaultPrevented, true);
    assert.equal(w.input.value, '/time ');
    assert.equal(listbox(w).hidden, true);
    await tick();
    assert.equal(fetch.requests.length, 0, 'picking sends nothing');
    assert.equal(w.chat.state.messages.length, 0);
  });

  test('Tab picks too; Escape closes without touching the text', async (t) => {
    const w = mount(t, fakeFetch());
    await type(w, '/gr');
    key(w, 'ArrowDown');
    key(w, 'Tab');
    assert.equal(w.input.value, '/grep ');
    await type(w, '/ti');
    const ev = key(w, 'Escape');
    assert.equal(ev.defaultPrevented, true);
    assert.equal(listbox(w).hidden, true);
    assert.equal(w.input.value, '/ti');
  });

  test('Escape closes only the list in a launcher panel, not the panel', async (t) => {
    const w = mount(t, fakeFetch(), { launcher: 'always' });
    w.chat.open();
    await type(w, '/');
    key(w, 'Escape');
    assert.equal(listbox(w).hidden, true);
    assert.equal(w.chat.state.isOpen, true);
    key(w, 'Escape');
    assert.equal(w.chat.state.isOpen, false, 'the next Escape closes the panel');
  });

  test('a click on an option picks it; the focus stays in the input', async (t) => {
    const w = mount(t, fakeFetch());
    await type(w, '/');
    const opt = options(w)[2];
    const down = new w.window.MouseEvent('mousedown', { bubbles: true, cancelable: true });
    opt.dispatchEvent(down);
    assert.equal(down.defaultPrevented, true);
    opt.dispatchEvent(new w.window.MouseEvent('click', { bubbles: true }));
    assert.equal(w.input.value, '/time ');
    assert.equal(w.document.activeElement, w.input);
    assert.equal(listbox(w).hidden, true);
  });
});

describe('running a command', () => {
  const H0 = [
    { role: 'user', parts: [{ text: 'hi' }] },
    { role: 'model', parts: [{ text: 'Hello!' }] },
  ];
  const answer = (history = [...H0]) =>
    json({ type: 'response', message: 'Hello!', history, signatures: history.map((turn) => (turn.role === 'model' ? 'sig-model' : null)) });

  test('shared: POST with the rest as args, no model; the output shown as text and added as a user turn with a null signature', async (t) => {
    const fetch = fakeFetch([
      answer(),
      json({ command: 'greeting', output: 'Howdy (at noon) <b>x</b>', shareWithModel: true }),
      (req) => answer([...req.body.history, { role: 'model', parts: [{ text: 'ok' }] }]),
    ]);
    const w = mount(t, fetch, { expanded: true });
    await w.chat.send('hi');
    await w.chat.send('/greeting at noon');
    const post = fetch.requests[1];
    assert.equal(post.url, DEFAULT_ENDPOINT.replace(/actions$/, 'commands/greeting'));
    assert.equal(post.init.method, 'POST');
    assert.deepEqual(post.body, { args: 'at noon' });
    const msgs = w.chat.state.messages;
    assert.deepEqual(msgs.slice(-2).map((m) => [m.role, m.content]), [
      ['user', '/greeting at noon'],
      ['command', 'Howdy (at noon) <b>x</b>'],
    ]);
    assert.equal(msgs.at(-1).shared, true);
    const item = w.root.querySelector(`[data-id="${msgs.at(-1).id}"]`);
    assert.equal(item.getAttribute('data-role'), 'command');
    assert.match(item.querySelector('.gemini-chat__command-title').textContent, /^Output of \/greeting/);
    assert.equal(item.querySelector('b'), null, 'the output is text, not HTML');
    assert.equal(w.chat.state.history.length, 3);
    assert.deepEqual(w.chat.state.history[2], { role: 'user', parts: [{ text: 'Output of /greeting:\nHowdy (at noon) <b>x</b>' }] });
    assert.deepEqual(w.chat.state.signatures, [null, 'sig-model', null]);
    assert.equal(w.chat.state.error, '');
    /* the next message carries it to the model, signatures aligned */
    await w.chat.send('and now?');
    const next = fetch.requests[2];
    assert.match(next.url, /geminiAgent\.sendMessage$/);
    assert.equal(next.body.message, 'and now?');
    assert.deepEqual(next.body.history.at(-1), w.chat.state.history[2]);
    assert.deepEqual(next.body.signatures, [null, 'sig-model', null]);
  });

  test('not shared: the output is shown, the history and signatures stay as they were', async (t) => {
    const fetch = fakeFetch([answer(), json({ command: 'time', output: '05:30', shareWithModel: false })]);
    const w = mount(t, fetch);
    await w.chat.send('hi');
    const before = w.chat.state;
    await w.chat.send('/time');
    assert.deepEqual(fetch.requests[1].body, { args: '' });
    assert.deepEqual(w.chat.state.history, before.history);
    assert.deepEqual(w.chat.state.signatures, before.signatures);
    const out = w.chat.state.messages.at(-1);
    assert.deepEqual([out.role, out.content, out.shared], ['command', '05:30', false]);
    /* compact mode shows it under the visitor's line */
    const activity = w.root.querySelector('.gemini-chat__activity');
    assert.match(activity.textContent, /Output of \/time05:30/);
  });

  test('shared while a server action waits for approval: kept out of the history (the call\'s answer is the server\'s), the card still waits', async (t) => {
    const history = [
      { role: 'user', parts: [{ text: 'review it' }] },
      { role: 'model', parts: [{ functionCall: { name: 'action_shop_addReview', id: 'c1', args: {} } }] },
    ];
    const fetch = fakeFetch([
      json({
        type: 'approval-required',
        history,
        signatures: [null, 'sig-call'],
        approval: { id: 'a1', ticket: 't1', tool: 'shop.addReview', preview: 'Add a review' },
      }),
      json({ command: 'greeting', output: 'Howdy', shareWithModel: true }),
    ]);
    const w = mount(t, fetch);
    await w.chat.send('review it');
    assert.equal(w.chat.state.awaitingApproval, true);
    await w.chat.send('/greeting');
    assert.deepEqual(w.chat.state.history, history);
    assert.deepEqual(w.chat.state.signatures, [null, 'sig-call']);
    const out = w.chat.state.messages.at(-1);
    assert.equal(out.shared, false);
    assert.match(out.commandTitle, /not given to the assistant/);
    assert.equal(w.chat.state.awaitingApproval, true, 'a command does not decide the approval');
  });

  test('the default template and the contract name the command role and commandTitle', () => {
    const contract = readFileSync(new URL('../../www/agent/gemini-chat.jay-contract', import.meta.url), 'utf8');
    assert.match(contract, /tag: commandTitle\b/);
    assert.match(contract, /\| command\)/);
    assert.equal((DEFAULT_TEMPLATE.match(/data-bind="commandTitle"/g) ?? []).length, 2, 'full and compact mode');
  });

  test('a /word that is no command of the site is sent as a message', async (t) => {
    const fetch = fakeFetch([answer()]);
    const w = mount(t, fetch);
    await w.chat.send('/shrug hello');
    assert.match(fetch.requests[0].url, /geminiAgent\.sendMessage$/);
    assert.equal(fetch.requests[0].body.message, '/shrug hello');
  });

  test('errors: the envelope in the visitor\'s words; an unknown command offers no Retry, a failed one does', async (t) => {
    const fetch = fakeFetch([
      json({ error: { code: 'unknown_action', message: "there is no command named 'greeting'" } }, 404),
      json({ error: { code: 'action_failed', message: 'plugin crashed' } }, 502),
      json({ command: 'greeting', output: 'Howdy', shareWithModel: true }),
      json({ error: { code: 'rate_limited', message: 'slow down' } }, 429, { 'Retry-After': '7' }),
    ]);
    const w = mount(t, fetch);
    await w.chat.send('/greeting');
    assert.equal(w.chat.state.error, 'This site has no command /greeting now.');
    assert.equal(w.chat.state.errorCode, 'unknown_action');
    assert.equal(w.chat.state.canRetry, false);
    assert.equal(w.chat.state.history.length, 0);
    await w.chat.send('/greeting again');
    assert.equal(w.chat.state.error, 'The command /greeting failed. Retry in a moment.');
    assert.equal(w.chat.state.canRetry, true);
    await w.chat.retry();
    assert.deepEqual(fetch.requests[2].body, { args: 'again' });
    assert.equal(w.chat.state.error, '');
    assert.equal(w.chat.state.messages.filter((m) => m.content === '/greeting again').length, 1, 'the line is not shown twice');
    assert.equal(w.chat.state.history.length, 1);
    await w.chat.send('/greeting');
    assert.equal(w.chat.state.error, `${ERROR_WORDS.rate_limited.text} Try again in 7 s.`);
  });

  test('an output that is not the answer expected is an error, not a message', async (t) => {
    const w = mount(t, fakeFetch([json({ command: 'greeting' })]));
    await w.chat.send('/greeting');
    assert.equal(w.chat.state.errorCode, 'bad_answer');
    assert.equal(w.chat.state.messages.some((m) => m.role === 'command'), false);
  });

  test('Stop aborts the command in flight', async (t) => {
    let seen;
    const fetch = fakeFetch([
      (req) =>
        new Promise((_, reject) => {
          seen = req;
          req.init.signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
        }),
    ]);
    const w = mount(t, fetch);
    const p = w.chat.send('/greeting');
    while (!seen) await tick();
    assert.equal(w.chat.state.isLoading, true);
    assert.equal(w.chat.state.statusText, 'Running /greeting…');
    w.chat.stop();
    await p;
    assert.equal(w.chat.state.isLoading, false);
    assert.equal(w.chat.state.messages.at(-1).content, 'Stopped.');
    assert.equal(w.chat.state.history.length, 0);
  });
});

describe('a site without commands', () => {
  test('a 404 listing: no list, and `/greeting` goes to the model as a message', async (t) => {
    const fetch = fakeFetch([json({ type: 'response', message: 'ok', history: [] })], {
      listing: () => json({ error: { code: 'not_found', message: 'no route' } }, 404),
    });
    const w = mount(t, fetch);
    await type(w, '/');
    assert.equal(listbox(w).hidden, true);
    await type(w, '/gr');
    assert.equal(fetch.lists.length, 1, 'asked once, not at every key');
    await w.chat.send('/greeting');
    assert.match(fetch.requests[0].url, /geminiAgent\.sendMessage$/);
    assert.equal(w.chat.state.error, '');
  });

  test('an empty list: nothing offered', async (t) => {
    const w = mount(t, fakeFetch([], { listing: () => json({ commands: [] }) }));
    await type(w, '/');
    assert.equal(listbox(w).hidden, true);
  });

  test('a network failure is asked again at the next `/`', async (t) => {
    let n = 0;
    const fetch = fakeFetch([], { listing: () => (n++ === 0 ? new TypeError('offline') : json(LISTING)) });
    const w = mount(t, fetch);
    await type(w, '/');
    assert.equal(listbox(w).hidden, true);
    await type(w, '');
    await type(w, '/');
    assert.equal(fetch.lists.length, 2);
    assert.deepEqual(shownNames(w), ['/greeting', '/grep', '/time']);
  });

  test('commands: false asks nothing, and sends /words as messages', async (t) => {
    const fetch = fakeFetch([json({ type: 'response', message: 'ok', history: [] })]);
    const w = mount(t, fetch, { commands: false });
    await type(w, '/');
    assert.equal(listbox(w), null);
    await w.chat.send('/greeting');
    assert.equal(fetch.lists.length, 0);
    assert.match(fetch.requests[0].url, /geminiAgent\.sendMessage$/);
  });
});
