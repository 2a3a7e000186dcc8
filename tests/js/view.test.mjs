/**
 * view.js on its own (DOM only, no state of the chat, no network): the
 * widget's elements, the template chosen, and render writing a state
 * snapshot into them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createView, DEFAULT_TEMPLATE } from '../../www/agent/view.js';
import { createState, deriveView } from '../../www/agent/state.js';

function container(body = '<div id="chat"><p>replaced</p></div>') {
  const dom = new JSDOM(`<!doctype html><body>${body}</body>`, { pretendToBeVisual: true });
  return dom.window.document.getElementById('chat');
}

/** A snapshot as chat.js makes it: the state and the tags computed from it. */
function snapshot(patch = {}, ctx = {}) {
  const s = { ...createState(null, false), ...patch };
  return { ...s, ...deriveView(s, { failed: null, approval: null, launcherMode: false, ...ctx }) };
}
const FLAGS = { launcherMode: false, unread: false, isPeek: false };
const msg = (id, role, content, extra = {}) => ({ id, role, content, timestamp: '2030-01-01T10:00:00Z', ...extra });

describe('the view', () => {
  test('builds root > [frame, launcher] in the container, marked off-limits to the page automation', () => {
    const c = container();
    const ui = createView(c, {});
    assert.equal(c.children.length, 1);
    assert.equal(ui.root.getAttribute('data-agent'), 'off');
    assert.deepEqual([...ui.root.children], [ui.frame, ui.launcher]);
    assert.equal(ui.launcher.getAttribute('aria-controls'), ui.frame.id);
    assert.ok(ui.inputEl(), 'the default template has the input');
    assert.ok(ui.questionHost.nextElementSibling?.matches('form'), 'the question cards sit above the input');
    assert.equal(ui.canApprove, true);
  });

  test('a page template wins; one without approval buttons cannot approve', () => {
    const c = container('<div id="chat"><template><ol data-foreach="messages"><li data-bind="content"></li></ol><textarea data-ref="messageInput"></textarea></template></div>');
    const ui = createView(c, {});
    assert.equal(ui.canApprove, false);
    assert.equal(c.querySelector('template') !== null, true, 'the page template stays');
    ui.render(snapshot({ messages: [msg('a', 'user', 'hi')] }), FLAGS);
    assert.deepEqual([...ui.root.querySelectorAll('li')].map((li) => li.textContent), ['hi']);
  });

  test('render: the tags, and the root\'s attributes for chat.css', () => {
    const ui = createView(container(), { template: DEFAULT_TEMPLATE });
    ui.render(snapshot({ isLoading: true, statusText: 'Thinking…', messages: [msg('a', 'user', 'hi')] }), FLAGS);
    assert.equal(ui.root.getAttribute('data-loading'), 'true');
    assert.equal(ui.root.querySelector('[data-bind="statusText"]').textContent, 'Thinking…');
    assert.equal(ui.root.querySelector('[data-bind="lastUserMessage"]').textContent, 'hi');
    assert.equal(ui.root.querySelector('[data-ref="sendMessage"]').disabled, true, 'no send while loading');
    assert.equal(ui.launcher.hidden, true, 'no launcher in place');
  });

  test('launcher mode: a dialog, closed until opened; the sheet peeks only when open', () => {
    const ui = createView(container(), {});
    ui.render(snapshot({}, { launcherMode: true }), { launcherMode: true, unread: true, isPeek: true });
    assert.equal(ui.frame.hidden, true);
    assert.equal(ui.frame.getAttribute('role'), 'dialog');
    assert.equal(ui.root.getAttribute('data-unread'), 'true');
    assert.equal(ui.root.getAttribute('data-peek'), 'false', 'a closed panel does not peek');
    ui.render(snapshot({ isOpen: true }, { launcherMode: true }), { launcherMode: true, unread: false, isPeek: true });
    assert.equal(ui.frame.hidden, false);
    assert.equal(ui.root.getAttribute('data-peek'), 'true');
  });

  test('compact mode: "Stopped." after the stopped answer; Usage only for a turn that succeeded', () => {
    const ui = createView(container(), {});
    const messages = [msg('u', 'user', 'count'), msg('a', 'assistant', 'One two', { status: 'stopped' }), msg('s', 'system', 'Stopped.')];
    ui.render(snapshot({ messages, outcome: 'stopped', usage: { totalTokens: 9 } }), FLAGS);
    const answer = ui.root.querySelector('[data-bind="lastAssistantMessage"]');
    const note = [...ui.root.querySelectorAll('.gemini-chat__compact li')].find((li) => li.textContent === 'Stopped.' && !li.closest('[hidden]'));
    assert.ok(note && answer.compareDocumentPosition(note) & 4, 'the note follows the answer');
    assert.equal(ui.root.querySelector('details.gemini-chat__usage').hidden, true, 'no Usage after Stop');
    ui.render(snapshot({ messages: [msg('u', 'user', 'hi'), msg('b', 'assistant', 'Hello')], outcome: 'response', usage: { totalTokens: 9 } }), FLAGS);
    assert.equal(ui.root.querySelector('details.gemini-chat__usage').hidden, false);
  });

  test('an approval card: the action\'s title and labelled arguments', () => {
    const ui = createView(container(), {});
    const card = msg('c', 'approval', 'Add a review…', {
      status: 'pending', tool: 'shop.addReview', actionTitle: 'Add review', reason: '',
      args: [{ id: 'productId', name: 'productId', label: 'Product', value: 'p004' }],
    });
    ui.render(snapshot({ messages: [msg('u', 'user', 'review'), card] }, { approval: { msgId: 'c' } }), FLAGS);
    const shown = [...ui.root.querySelectorAll('[data-foreach="approvals"] > [data-id="c"]')].find((el) => !el.closest('[hidden]'));
    assert.equal(shown.querySelector('[data-bind="actionTitle"]').textContent, 'Add review');
    assert.equal(shown.querySelector('dt').textContent, 'Product');
  });
});
