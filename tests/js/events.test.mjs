/**
 * events.js on its own (a jsdom page, stub actions): which action each
 * click and key on the widget's root asks for, and that removing the
 * listeners leaves none.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { installEvents } from '../../www/agent/events.js';

function setup(extra = {}) {
  const dom = new JSDOM(`<!doctype html><body><div id="root"><div id="frame">
    <ol><li data-id="card1"><button data-ref="approveAction">A</button></li><li data-id="old"><button data-ref="rejectAction">R</button></li></ol>
    <textarea data-ref="messageInput"></textarea><button data-ref="sendMessage">Send</button><button data-ref="clearChat">New</button>
    <button data-ref="openChat">Open</button><button data-ref="unknown">?</button></div></div><button id="out" data-ref="sendMessage">x</button></body>`);
  const doc = dom.window.document;
  const frame = doc.getElementById('frame');
  const ui = { root: doc.getElementById('root'), frame, inputEl: () => doc.querySelector('textarea'), focusables: () => [...frame.querySelectorAll('button, textarea')] };
  const did = [];
  const record = (name) => (...a) => did.push(a.length ? [name, ...a] : name);
  const actions = {
    sendFromInput: record('send'),
    toggleExpand: record('toggle'),
    stop: record('stop'),
    retry: record('retry'),
    clear: record('clear'),
    decide: record('decide'),
    waitingCard: () => 'card1',
    open: record('open'),
    close: record('close'),
    isPanelOpen: () => false,
    isSheet: () => false,
    render: record('render'),
    showCommands: record('commands'),
    menu: null,
    ...extra,
  };
  const remove = installEvents(doc, ui, actions, ui.inputEl());
  const key = (target, init) => target.dispatchEvent(new dom.window.KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init }));
  return { doc, dom, did, remove, key, frame };
}

describe('the event handlers', () => {
  test('clicks on data-ref elements of the widget, and only there', () => {
    const { doc, did } = setup();
    const click = (sel) => doc.querySelector(sel).click();
    click('#frame [data-ref="sendMessage"]');
    click('[data-ref="clearChat"]');
    click('[data-ref="openChat"]');
    click('[data-ref="unknown"]');
    click('#out');
    assert.deepEqual(did, ['send', 'clear', 'open']);
    assert.equal(doc.activeElement, doc.querySelector('textarea'), 'New chat puts the cursor in the input');
  });

  test('only the waiting approval\'s own card decides', () => {
    const { doc, did } = setup();
    doc.querySelector('[data-ref="rejectAction"]').click();
    doc.querySelector('[data-ref="approveAction"]').click();
    assert.deepEqual(did, [['decide', 'approve']]);
    const none = setup({ waitingCard: () => null });
    none.doc.querySelector('[data-ref="approveAction"]').click();
    assert.deepEqual(none.did, []);
  });

  test('Enter sends from the input (not with Shift), Esc closes the open panel', () => {
    const { doc, did, key } = setup();
    const input = doc.querySelector('textarea');
    key(input, { key: 'Enter', shiftKey: true });
    key(input, { key: 'Enter' });
    key(input, { key: 'Escape' });
    assert.deepEqual(did, ['send']);
    const open = setup({ isPanelOpen: () => true });
    open.key(open.doc.querySelector('textarea'), { key: 'Escape' });
    assert.deepEqual(open.did, ['close']);
  });

  test('Tab wraps inside the phone\'s sheet', () => {
    const { doc, key, frame } = setup({ isPanelOpen: () => true, isSheet: () => true });
    const list = [...frame.querySelectorAll('button, textarea')];
    list.at(-1).focus();
    key(list.at(-1), { key: 'Tab' });
    assert.equal(doc.activeElement, list[0]);
    key(list[0], { key: 'Tab', shiftKey: true });
    assert.equal(doc.activeElement, list.at(-1));
  });

  test('typing renders and shows the commands; remove drops every listener', () => {
    const { doc, dom, did, remove } = setup();
    const input = doc.querySelector('textarea');
    input.dispatchEvent(new dom.window.Event('input', { bubbles: true }));
    assert.deepEqual(did, ['render', 'commands']);
    remove();
    input.dispatchEvent(new dom.window.Event('input', { bubbles: true }));
    doc.querySelector('[data-ref="clearChat"]').click();
    assert.deepEqual(did, ['render', 'commands']);
  });
});
