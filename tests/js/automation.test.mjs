// Unit tests for www/agent/automation.js (node --test, DOM from jsdom).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createAutomation, installPageAgent, parseContract, coordinateKey } from '../../www/agent/automation.js';

function page(body, { url = 'http://localhost/' } = {}) {
  const dom = new JSDOM(`<!doctype html><html><head></head><body>${body}</body></html>`, { url });
  const { window } = dom;
  return { window, document: window.document, automation: createAutomation(window.document) };
}

/** Let microtasks and a timer run (onStateChange delivery). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

const CART = `
  <ul data-foreach="items">
    <li data-id="item-1"><span>Wireless Mouse</span> <span>$29.99</span>
      <button data-ref="decreaseBtn">-</button><button data-ref="increaseBtn">+</button>
      <button data-ref="removeBtn">Remove</button></li>
    <li data-id="item-2"><span>USB-C Hub</span> <span>$49.99</span>
      <button data-ref="decreaseBtn">-</button><button data-ref="increaseBtn">+</button>
      <button data-ref="removeBtn">Remove</button></li>
  </ul>
  <input data-ref="nameInput" placeholder="Name">
  <button data-ref="addBtn">Add to cart</button>`;

const byRef = (state, ref) => state.interactions.find((g) => g.refName === ref);
const coords = (state, ref) => byRef(state, ref)?.items.map((i) => i.coordinate);

describe('interactions and coordinates', () => {
  it('gives a flat ref the coordinate [ref]', () => {
    const { automation } = page('<button data-ref="addBtn">Add</button>');
    assert.deepEqual(automation.getPageState().interactions, [
      { refName: 'addBtn', items: [{ coordinate: ['addBtn'], element: 'button', events: ['click'], label: 'Add' }] },
    ]);
  });

  it('groups one repeat by ref with [itemId, ref] coordinates, in document order', () => {
    const { automation } = page(CART);
    const state = automation.getPageState();
    assert.deepEqual(
      state.interactions.map((g) => g.refName),
      ['decreaseBtn', 'increaseBtn', 'removeBtn', 'nameInput', 'addBtn'],
    );
    assert.deepEqual(coords(state, 'removeBtn'), [['item-1', 'removeBtn'], ['item-2', 'removeBtn']]);
    assert.deepEqual(coords(state, 'addBtn'), [['addBtn']]);
    const hub = byRef(state, 'removeBtn').items[1];
    assert.equal(hub.itemLabel, 'USB-C Hub');
    assert.equal(hub.label, 'Remove');
  });

  it('gives nested repeats [outerId, innerId, ref]', () => {
    const { automation } = page(`
      <section data-foreach="orders">
        <div data-id="o1"><h3>Order 1</h3>
          <ul data-foreach="lines">
            <li data-id="l1"><span>Pen</span><button data-ref="dropBtn">x</button></li>
            <li data-id="l2"><span>Ink</span><button data-ref="dropBtn">x</button></li>
          </ul>
          <button data-ref="cancelBtn">Cancel order</button>
        </div>
        <div data-id="o2"><ul data-foreach="lines"><li data-id="l1"><span>Pad</span><button data-ref="dropBtn">x</button></li></ul></div>
      </section>`);
    const state = automation.getPageState();
    assert.deepEqual(coords(state, 'dropBtn'), [['o1', 'l1', 'dropBtn'], ['o1', 'l2', 'dropBtn'], ['o2', 'l1', 'dropBtn']]);
    assert.deepEqual(coords(state, 'cancelBtn'), [['o1', 'cancelBtn']]);
    assert.equal(byRef(state, 'dropBtn').items[1].itemLabel, 'Ink');
    assert.equal(byRef(state, 'cancelBtn').items[0].itemLabel, 'Order 1');
  });

  it('counts only children of a data-foreach container as items', () => {
    const { automation } = page('<div data-id="x"><button data-ref="b">B</button></div>');
    assert.deepEqual(coords(automation.getPageState(), 'b'), [['b']]);
  });

  it('names items from the view state when it holds them', () => {
    const { automation } = page(CART);
    automation.setViewState({ cart: { items: [{ id: 'item-2', sku: 'X2', name: 'Hub (USB-C)' }] } });
    assert.equal(byRef(automation.getPageState(), 'removeBtn').items[1].itemLabel, 'Hub (USB-C)');
  });

  it('keeps the first of two elements with the same coordinate', () => {
    const { automation } = page('<button data-ref="go">One</button><button data-ref="go">Two</button>');
    const items = byRef(automation.getPageState(), 'go').items;
    assert.equal(items.length, 1);
    assert.equal(items[0].label, 'One');
  });

  it('returns plain JSON (no DOM nodes)', () => {
    const { automation } = page(CART + '<select data-ref="s"><option>a</option></select>');
    automation.setViewState({ total: 1 });
    const state = automation.getPageState();
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
    assert.deepEqual(state.customEvents, []);
  });

  it('works on an element subtree as root', () => {
    const { document } = page('<div id="a"><button data-ref="in">In</button></div><button data-ref="out">Out</button>');
    const automation = createAutomation(document.getElementById('a'));
    assert.deepEqual(automation.getPageState().interactions.map((g) => g.refName), ['in']);
  });
});

describe('events and element per kind', () => {
  const cases = [
    ['<button data-ref="r">B</button>', 'button', ['click']],
    ['<a data-ref="r" href="#x">Link</a>', 'a', ['click']],
    ['<div data-ref="r" role="button">D</div>', 'div[role=button]', ['click']],
    ['<span data-ref="r">S</span>', 'span', ['click']],
    ['<input data-ref="r" type="submit" value="Go">', 'input[type=submit]', ['click']],
    ['<input data-ref="r">', 'input[type=text]', ['input', 'change']],
    ['<input data-ref="r" type="email">', 'input[type=email]', ['input', 'change']],
    ['<input data-ref="r" type="number">', 'input[type=number]', ['input', 'change']],
    ['<input data-ref="r" type="search">', 'input[type=search]', ['input', 'change']],
    ['<textarea data-ref="r"></textarea>', 'textarea', ['input', 'change']],
    ['<select data-ref="r"><option>a</option></select>', 'select', ['change']],
    ['<input data-ref="r" type="checkbox">', 'input[type=checkbox]', ['change']],
    ['<input data-ref="r" type="radio">', 'input[type=radio]', ['change']],
  ];
  for (const [html, element, events] of cases) {
    it(`${html} → ${element} ${events.join('+')}`, () => {
      const item = page(html).automation.getPageState().interactions[0].items[0];
      assert.equal(item.element, element);
      assert.deepEqual(item.events, events);
    });
  }
});

describe('what is left out', () => {
  const cases = [
    ['a disabled button', '<button data-ref="r" disabled>B</button>'],
    ['a disabled input', '<input data-ref="r" disabled>'],
    ['an aria-disabled button', '<button data-ref="r" aria-disabled="true">B</button>'],
    ['a button inside fieldset[disabled]', '<fieldset disabled><button data-ref="r">B</button></fieldset>'],
    ['a non-form element inside fieldset[disabled]', '<fieldset disabled><div><span data-ref="r">S</span></div></fieldset>'],
    ['an element marked data-agent="off"', '<button data-ref="r" data-agent="off">B</button>'],
    ['the whole data-agent="off" subtree', '<div data-agent="off"><form><div><input data-ref="r"></div></form></div>'],
    ['a password input', '<input data-ref="r" type="password">'],
    ['a hidden input', '<input data-ref="r" type="hidden" value="x">'],
    ['an element inside [hidden]', '<div hidden><button data-ref="r">B</button></div>'],
    ['an element with an empty ref', '<button data-ref=" ">B</button>'],
  ];
  for (const [what, html] of cases) {
    it(`leaves out ${what}`, () => {
      const { automation } = page(html + '<button data-ref="keep">K</button>');
      const state = automation.getPageState();
      assert.deepEqual(state.interactions.map((g) => g.refName), ['keep']);
      assert.equal(automation.getInteraction('r'), undefined);
      assert.throws(() => automation.triggerEvent('click', 'r'));
    });
  }

  it('leaves out password inputs even inside repeats, and keeps their siblings', () => {
    const { automation } = page(
      '<div data-foreach="u"><div data-id="a"><input data-ref="pw" type="password"><input data-ref="user"></div></div>',
    );
    assert.deepEqual(automation.getPageState().interactions.map((g) => g.refName), ['user']);
  });

  it('leaves out only the disabled items of a repeat, and follows the live DOM', () => {
    const { automation, document } = page(CART);
    const btn = document.querySelector('[data-id="item-1"] [data-ref="removeBtn"]');
    btn.disabled = true;
    assert.deepEqual(coords(automation.getPageState(), 'removeBtn'), [['item-2', 'removeBtn']]);
    assert.throws(() => automation.triggerEvent('click', 'item-1/removeBtn'), /disabled/);
    btn.disabled = false;
    assert.deepEqual(coords(automation.getPageState(), 'removeBtn').length, 2);
  });

  it('never reports data-agent="off" content in the page state', () => {
    const { automation } = page('<div data-agent="off"><label>Card <input data-ref="card" value="4111 1111"></label></div><button data-ref="pay">Pay</button>');
    assert.doesNotMatch(JSON.stringify(automation.getPageState()), /card|4111/i);
  });
});

describe('labels and descriptions', () => {
  const labels = [
    ['button text', '<button data-ref="r">  Add   to cart </button>', 'Add to cart'],
    ['aria-label first', '<button data-ref="r" aria-label="Remove USB-C Hub">×</button>', 'Remove USB-C Hub'],
    ['aria-labelledby', '<span id="t">Total</span><button data-ref="r" aria-labelledby="t">?</button>', 'Total'],
    ['an input button value', '<input data-ref="r" type="button" value="Go">', 'Go'],
    ['a <label for>', '<label for="n">Item name</label><input id="n" data-ref="r" value="lamp">', 'Item name'],
    ['a wrapping <label> without the options', '<label>Size <select data-ref="r"><option>Small</option></select></label>', 'Size'],
    ['a placeholder', '<input data-ref="r" placeholder="Price">', 'Price'],
    ['80 chars at most', `<button data-ref="r">${'x'.repeat(200)}</button>`, `${'x'.repeat(79)}…`],
  ];
  for (const [what, html, label] of labels) {
    it(`label from ${what}`, () => {
      assert.equal(page(html).automation.getPageState().interactions[0].items[0].label, label);
    });
  }

  it('reports current values: text, select (with options), checkbox', () => {
    const { automation } = page(`
      <input data-ref="t" value="hello">
      <select data-ref="s"><option value="a">A</option><option value="b" selected>B</option><option value="c" disabled>C</option></select>
      <input data-ref="c" type="checkbox" checked>`);
    const [t, s, c] = automation.getPageState().interactions.map((g) => g.items[0]);
    assert.equal(t.value, 'hello');
    assert.equal(s.value, 'b');
    assert.deepEqual(s.options, [{ value: 'a', label: 'A' }, { value: 'b', label: 'B' }]);
    assert.equal(c.checked, true);
  });

  it('uses data-description, else the contract, else none', async () => {
    const { automation, window } = page(`
      <link rel="jay-contract" href="/cart.jay-contract">
      <button data-ref="addBtn" data-description="Add the typed item">Add</button>
      <button data-ref="removeBtn">Remove</button>
      <button data-ref="otherBtn">Other</button>`);
    const fetched = [];
    window.fetch = async (url) => {
      fetched.push(url);
      return {
        ok: true,
        text: async () => `name: cart
tags:
  - tag: addBtn
    type: interactive
    description: from the contract
  - tag: removeBtn
    type: interactive
    elementType: HTMLButtonElement
    description: 'Remove an item from the cart'
`,
      };
    };
    assert.equal(byRef(automation.getPageState(), 'removeBtn').description, undefined);
    await automation.loadContracts();
    assert.deepEqual(fetched, ['http://localhost/cart.jay-contract']);
    const state = automation.getPageState();
    assert.equal(byRef(state, 'addBtn').description, 'Add the typed item');
    assert.equal(byRef(state, 'removeBtn').description, 'Remove an item from the cart');
    assert.equal('description' in byRef(state, 'otherBtn'), false);
    assert.equal(automation.getInteraction('removeBtn').description, 'Remove an item from the cart');
  });

  it('skips a contract that cannot be fetched, quietly', async (t) => {
    const { automation, window } = page('<link rel="jay-contract" href="/gone.jay-contract"><button data-ref="b">B</button>');
    window.fetch = async () => ({ ok: false, status: 404, text: async () => '' });
    const warn = t.mock.method(console, 'warn');
    const error = t.mock.method(console, 'error');
    t.mock.method(console, 'debug', () => {});
    await automation.loadContracts();
    assert.equal(warn.mock.callCount() + error.mock.callCount(), 0);
    assert.equal(byRef(automation.getPageState(), 'b').description, undefined);
  });
});

describe('parseContract', () => {
  it('reads interactive tags at any depth, with quoting, blocks and type lists', () => {
    const map = parseContract(`name: gemini-chat
# a comment
tags:
  - tag: messages
    type: sub-contract
    repeated: true
    tags:
      - tag: content
        type: data
        description: not interactive
      - tag: retryBtn
        type: interactive
        description: "Retry \\"this\\" message"
  - tag: messageInput
    type: interactive
    elementType: HTMLTextAreaElement
    description: >
      The text the user
      is typing
  - tag: sendMessage
    type: [variant, interactive]
    description: Send it
      right away
  - tag: toggleExpand
    type: interactive
  - description: 'It''s first'
    tag: clearBtn
    type: interactive
`);
    assert.deepEqual(Object.fromEntries(map), {
      retryBtn: 'Retry "this" message',
      messageInput: 'The text the user is typing',
      sendMessage: 'Send it right away',
      clearBtn: "It's first",
    });
  });
});

describe('triggerEvent', () => {
  it('throws on an unknown coordinate and never touches the first item', () => {
    const { automation, document } = page(CART);
    let clicks = 0;
    document.querySelector('[data-id="item-1"] [data-ref="removeBtn"]').addEventListener('click', () => clicks++);
    for (const bad of ['item-9/removeBtn', ['item-9', 'removeBtn'], 'removeBtn', 'nope', '', undefined]) {
      assert.throws(() => automation.triggerEvent('click', bad), /Unknown coordinate/);
    }
    assert.equal(clicks, 0);
  });

  it('accepts both coordinate forms and clicks the right element', () => {
    const { automation, document } = page(CART);
    const clicked = [];
    document.addEventListener('click', (e) => clicked.push(e.target.closest('[data-id]')?.dataset.id ?? e.target.dataset.ref));
    automation.triggerEvent('click', 'item-2/removeBtn');
    automation.triggerEvent('click', ['item-1', 'increaseBtn']);
    automation.triggerEvent('click', ['addBtn']);
    assert.deepEqual(clicked, ['item-2', 'item-1', 'addBtn']);
  });

  it('refuses an event the element does not take', () => {
    const { automation } = page(CART);
    assert.throws(() => automation.triggerEvent('input', 'addBtn', 'x'), /does not take "input"/);
  });

  it('fills a text input with the native setter, then fires input then change (bubbling)', () => {
    const { automation, document, window } = page(CART);
    const input = document.querySelector('[data-ref="nameInput"]');
    const seen = [];
    input.addEventListener('input', (e) => seen.push(['input', e.target.value, e.bubbles]));
    input.addEventListener('change', (e) => seen.push(['change', e.target.value, e.bubbles]));
    document.body.addEventListener('input', () => seen.push(['body-input']));
    automation.triggerEvent('input', 'nameInput', 'Desk lamp');
    assert.deepEqual(seen, [['input', 'Desk lamp', true], ['body-input'], ['change', 'Desk lamp', true]]);
    assert.ok(window);
  });

  it('goes around a value property overridden on the element (the way frameworks track it)', () => {
    const { automation, document, window } = page('<input data-ref="name"><textarea data-ref="note"></textarea>');
    for (const [ref, proto] of [['name', window.HTMLInputElement.prototype], ['note', window.HTMLTextAreaElement.prototype]]) {
      const el = document.querySelector(`[data-ref="${ref}"]`);
      const nativeGet = Object.getOwnPropertyDescriptor(proto, 'value').get;
      let overrideCalls = 0;
      Object.defineProperty(el, 'value', {
        configurable: true,
        get: () => nativeGet.call(el),
        set: () => overrideCalls++,
      });
      automation.triggerEvent('change', ref, 'typed');
      assert.equal(overrideCalls, 0, `${ref}: the instance setter must not be used`);
      assert.equal(nativeGet.call(el), 'typed');
    }
  });

  it('dispatches just the event when no value is given', () => {
    const { automation, document } = page('<input data-ref="q" value="x">');
    const seen = [];
    for (const type of ['input', 'change']) document.querySelector('input').addEventListener(type, () => seen.push(type));
    automation.triggerEvent('change', 'q');
    assert.deepEqual(seen, ['change']);
  });

  it('selects an option and fires change; refuses values that are not options', () => {
    const { automation, document } = page(
      '<select data-ref="size"><option value="s">Small</option><option value="m">Medium</option><option value="x" disabled>XL</option></select>',
    );
    const select = document.querySelector('select');
    const seen = [];
    select.addEventListener('change', () => seen.push(select.value));
    automation.triggerEvent('change', 'size', 'm');
    assert.deepEqual(seen, ['m']);
    assert.throws(() => automation.triggerEvent('change', 'size', 'Large'), /not an option/);
    assert.throws(() => automation.triggerEvent('change', 'size', 'x'), /not an option/);
    assert.equal(select.value, 'm');
  });

  it('sets checkboxes to the given state, firing input and change only on a change', () => {
    const { automation, document } = page('<input data-ref="gift" type="checkbox">');
    const box = document.querySelector('input');
    const seen = [];
    box.addEventListener('input', () => seen.push('input'));
    box.addEventListener('change', () => seen.push(`change:${box.checked}`));
    automation.triggerEvent('change', 'gift', true);
    assert.equal(box.checked, true);
    automation.triggerEvent('change', 'gift', 'true');
    automation.triggerEvent('change', 'gift', 'false');
    assert.equal(box.checked, false);
    assert.deepEqual(seen, ['input', 'change:true', 'input', 'change:false']);
    assert.throws(() => automation.triggerEvent('change', 'gift', 'maybe'), /true or false/);
  });

  it('checks and unchecks radios', () => {
    const { automation, document } = page(
      '<input data-ref="fast" type="radio" name="ship"><input data-ref="slow" type="radio" name="ship" checked>',
    );
    const [fast, slow] = document.querySelectorAll('input');
    const changes = [];
    fast.addEventListener('change', () => changes.push(fast.checked));
    automation.triggerEvent('change', 'fast', true);
    assert.equal(fast.checked, true);
    assert.equal(slow.checked, false);
    automation.triggerEvent('change', 'fast', false);
    assert.equal(fast.checked, false);
    assert.deepEqual(changes, [true, false]);
  });
});

describe('getInteraction', () => {
  it('finds an item by either form, with its DOM node; undefined when unknown', () => {
    const { automation, document } = page(CART);
    const found = automation.getInteraction('item-2/removeBtn');
    assert.equal(found.refName, 'removeBtn');
    assert.deepEqual(found.coordinate, ['item-2', 'removeBtn']);
    assert.equal(found.node, document.querySelector('[data-id="item-2"] [data-ref="removeBtn"]'));
    assert.deepEqual(automation.getInteraction(['item-2', 'removeBtn']).coordinate, found.coordinate);
    assert.equal(automation.getInteraction('item-3/removeBtn'), undefined);
  });

  it('coordinateKey joins arrays with "/"', () => {
    assert.equal(coordinateKey(['a', 'b', 'c']), 'a/b/c');
    assert.equal(coordinateKey('a/b'), 'a/b');
  });
});

describe('onStateChange', () => {
  it('fires once after setViewState, with the fresh page state', async () => {
    const { automation } = page(CART);
    const calls = [];
    automation.onStateChange((s) => calls.push(s));
    automation.setViewState({ total: 1 });
    automation.setViewState({ total: 2 });
    await tick();
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].viewState, { total: 2 });
    assert.deepEqual(automation.getViewState(), { total: 2 });
  });

  it('fires once for a burst of DOM mutations plus setViewState', async () => {
    const { automation, document } = page(CART);
    const calls = [];
    automation.onStateChange((s) => calls.push(s));
    document.querySelector('[data-id="item-1"]').remove();
    const li = document.createElement('li');
    li.dataset.id = 'item-3';
    li.innerHTML = '<span>Keyboard</span><button data-ref="removeBtn">Remove</button>';
    document.querySelector('[data-foreach]').append(li);
    automation.setViewState({ items: 2 });
    document.querySelector('[data-ref="addBtn"]').disabled = true;
    await tick();
    assert.equal(calls.length, 1);
    assert.deepEqual(coords(calls[0], 'removeBtn'), [['item-2', 'removeBtn'], ['item-3', 'removeBtn']]);
    assert.equal(byRef(calls[0], 'addBtn'), undefined);
  });

  it('ignores mutations inside data-agent="off" (the chat widget) and unrelated attributes', async () => {
    const { automation, document } = page(CART + '<div data-agent="off" id="chat"><p>hi</p></div>');
    let calls = 0;
    automation.onStateChange(() => calls++);
    document.getElementById('chat').append(document.createElement('p'));
    document.querySelector('#chat p').textContent = 'changed';
    document.body.className = 'busy';
    await tick();
    assert.equal(calls, 0);
  });

  it('stops after unsubscribe', async () => {
    const { automation, document } = page(CART);
    let calls = 0;
    const off = automation.onStateChange(() => calls++);
    off();
    automation.setViewState({});
    document.querySelector('[data-foreach]').innerHTML = '';
    await tick();
    assert.equal(calls, 0);
  });

  it('keeps notifying the others when one callback throws', async (t) => {
    const { automation } = page(CART);
    const error = t.mock.method(console, 'error', () => {});
    let calls = 0;
    automation.onStateChange(() => {
      throw new Error('boom');
    });
    automation.onStateChange(() => calls++);
    automation.setViewState({ a: 1 });
    await tick();
    assert.equal(calls, 1);
    assert.equal(error.mock.callCount(), 1);
  });
});

describe('installPageAgent', () => {
  it('publishes window.pageAgent and fires pageagent:ready', async () => {
    const { automation, window } = page(CART);
    let ready = null;
    window.addEventListener('pageagent:ready', (e) => (ready = e.detail));
    const agent = installPageAgent(automation, window);
    assert.equal(window.pageAgent, agent);
    assert.equal(ready, agent);
    assert.equal(agent.automation, automation);
    const calls = [];
    automation.onStateChange((s) => calls.push(s.viewState));
    window.pageAgent.setViewState({ total: 219.96 });
    assert.deepEqual(window.pageAgent.getPageState().viewState, { total: 219.96 });
    await tick();
    assert.deepEqual(calls, [{ total: 219.96 }]);
  });

  it('adopts a view state the page published before the agent loaded', () => {
    const { automation, window } = page(CART);
    window.pageAgent = { viewState: { early: true } };
    installPageAgent(automation, window);
    assert.deepEqual(automation.getViewState(), { early: true });
  });
});
