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

/** Interactions (getInteractions()) or a page's automation: the group of a ref. */
const groupsOf = (x) => (Array.isArray(x) ? x : x.getInteractions());
const byRef = (x, ref) => groupsOf(x).find((g) => g.refName === ref);
const coords = (x, ref) => byRef(x, ref)?.items.map((i) => i.coordinate);
const refs = (automation) => automation.getInteractions().map((g) => g.refName);

describe('interactions and coordinates', () => {
  it('gives a flat ref the coordinate [ref]', () => {
    const { automation } = page('<button data-ref="addBtn">Add</button>');
    assert.deepEqual(automation.getInteractions(), [
      {
        refName: 'addBtn',
        items: [{ coordinate: ['addBtn'], element: 'button', elementType: 'HTMLButtonElement', events: ['click'], label: 'Add' }],
      },
    ]);
  });

  it('groups one repeat by ref with [itemId, ref] coordinates, in document order', () => {
    const { automation } = page(CART);
    const state = automation.getInteractions();
    assert.deepEqual(
      state.map((g) => g.refName),
      ['decreaseBtn', 'increaseBtn', 'removeBtn', 'nameInput', 'addBtn'],
    );
    assert.deepEqual(coords(state, 'removeBtn'), [['item-1', 'removeBtn'], ['item-2', 'removeBtn']]);
    assert.deepEqual(coords(state, 'addBtn'), [['addBtn']]);
    const hub = byRef(state, 'removeBtn').items[1];
    assert.equal(hub.itemLabel, 'USB-C Hub');
    assert.equal(hub.label, 'Remove');
    assert.equal(hub.list, 'items');
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
    const state = automation.getInteractions();
    assert.deepEqual(coords(state, 'dropBtn'), [['o1', 'l1', 'dropBtn'], ['o1', 'l2', 'dropBtn'], ['o2', 'l1', 'dropBtn']]);
    assert.deepEqual(coords(state, 'cancelBtn'), [['o1', 'cancelBtn']]);
    assert.equal(byRef(state, 'dropBtn').items[1].itemLabel, 'Ink');
    assert.equal(byRef(state, 'cancelBtn').items[0].itemLabel, 'Order 1');
  });

  it('counts only children of a data-foreach container as items', () => {
    const { automation } = page('<div data-id="x"><button data-ref="b">B</button></div>');
    assert.deepEqual(coords(automation, 'b'), [['b']]);
  });

  it('names items from the view state when it holds them', () => {
    const { automation } = page(CART);
    automation.setViewState({ cart: { items: [{ id: 'item-2', sku: 'X2', name: 'Hub (USB-C)' }] } });
    assert.equal(byRef(automation, 'removeBtn').items[1].itemLabel, 'Hub (USB-C)');
  });

  it('keeps the first of two elements with the same coordinate', () => {
    const { automation } = page('<button data-ref="go">One</button><button data-ref="go">Two</button>');
    const items = byRef(automation, 'go').items;
    assert.equal(items.length, 1);
    assert.equal(items[0].label, 'One');
  });

  it('returns plain JSON (no DOM nodes)', () => {
    const { automation } = page(CART + '<select data-ref="s"><option>a</option></select>');
    automation.setViewState({ total: 1 });
    const state = automation.getPageState();
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
    const interactions = automation.getInteractions();
    assert.deepEqual(JSON.parse(JSON.stringify(interactions)), interactions);
  });

  it('works on an element subtree as root', () => {
    const { document } = page('<div id="a"><button data-ref="in">In</button></div><button data-ref="out">Out</button>');
    const automation = createAutomation(document.getElementById('a'));
    assert.deepEqual(refs(automation), ['in']);
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
  const types = [
    ['<button data-ref="r">B</button>', 'HTMLButtonElement'],
    ['<a data-ref="r" href="#x">Link</a>', 'HTMLAnchorElement'],
    ['<input data-ref="r">', 'HTMLInputElement'],
    ['<select data-ref="r"><option>a</option></select>', 'HTMLSelectElement'],
    ['<textarea data-ref="r"></textarea>', 'HTMLTextAreaElement'],
    ['<div data-ref="r" role="button">D</div>', 'HTMLDivElement'],
  ];
  for (const [html, type] of types) {
    it(`${html} has the DOM type ${type}`, () => {
      assert.equal(page(html).automation.getInteractions()[0].items[0].elementType, type);
    });
  }
  for (const [html, element, events] of cases) {
    it(`${html} → ${element} ${events.join('+')}`, () => {
      const item = page(html).automation.getInteractions()[0].items[0];
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
      assert.deepEqual(refs(automation), ['keep']);
      assert.equal(automation.getInteraction('r'), undefined);
      assert.throws(() => automation.triggerEvent('click', 'r'));
    });
  }

  it('leaves out password inputs even inside repeats, and keeps their siblings', () => {
    const { automation } = page(
      '<div data-foreach="u"><div data-id="a"><input data-ref="pw" type="password"><input data-ref="user"></div></div>',
    );
    assert.deepEqual(refs(automation), ['user']);
  });

  it('leaves out only the disabled items of a repeat, and follows the live DOM', () => {
    const { automation, document } = page(CART);
    const btn = document.querySelector('[data-id="item-1"] [data-ref="removeBtn"]');
    btn.disabled = true;
    assert.deepEqual(coords(automation, 'removeBtn'), [['item-2', 'removeBtn']]);
    assert.throws(() => automation.triggerEvent('click', 'item-1/removeBtn'), /disabled/);
    assert.equal(automation.isDisabled('item-1/removeBtn'), true);
    assert.equal(automation.isDisabled('item-2/removeBtn'), false);
    assert.equal(automation.isDisabled('item-9/removeBtn'), false);
    btn.disabled = false;
    assert.deepEqual(coords(automation, 'removeBtn').length, 2);
  });

  it('never reports data-agent="off" content in the page state', () => {
    const { automation } = page('<div data-agent="off"><label>Card <input data-ref="card" value="4111 1111"></label></div><button data-ref="pay">Pay</button>');
    assert.doesNotMatch(JSON.stringify(automation.getPageState()), /card|4111/i);
    assert.doesNotMatch(JSON.stringify(automation.getInteractions()), /card|4111/i);
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
    ['the title when the text is only a symbol', '<button data-ref="r" title="Close the dialog">×</button>', 'Close the dialog'],
    ['a symbol when nothing says more', '<button data-ref="r">+</button>', '+'],
  ];
  for (const [what, html, label] of labels) {
    it(`label from ${what}`, () => {
      assert.equal(page(html).automation.getInteractions()[0].items[0].label, label);
    });
  }

  it('reports current values: text, select (with options), checkbox', () => {
    const { automation } = page(`
      <input data-ref="t" value="hello">
      <select data-ref="s"><option value="a">A</option><option value="b" selected>B</option><option value="c" disabled>C</option></select>
      <input data-ref="c" type="checkbox" checked>`);
    const [t, s, c] = automation.getInteractions().map((g) => g.items[0]);
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
    assert.equal(byRef(automation, 'removeBtn').description, undefined);
    await automation.loadContracts();
    assert.deepEqual(fetched, ['http://localhost/cart.jay-contract']);
    const state = automation.getInteractions();
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
    assert.equal(byRef(automation, 'b').description, undefined);
  });

  it('reads aria-description, and a title that is not the label', () => {
    const { automation } = page(`
      <button data-ref="a" aria-description="Sends the form">Send</button>
      <button data-ref="b" title="Removes every item">Clear</button>
      <button data-ref="c" title="Close">Close</button>`);
    assert.equal(byRef(automation, 'a').description, 'Sends the form');
    assert.equal(byRef(automation, 'b').description, 'Removes every item');
    assert.equal(byRef(automation, 'c').description, undefined, 'a title that only repeats the label describes nothing');
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
    assert.deepEqual(calls[0].lists.items.map((i) => i.id), ['item-2', 'item-3']);
    assert.deepEqual(coords(automation, 'removeBtn'), [['item-2', 'removeBtn'], ['item-3', 'removeBtn']]);
    assert.equal(byRef(automation, 'addBtn'), undefined);
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

describe('installPageAgent: calls made before the agent loaded', () => {
  /** The stub "Adding the agent to a page" documents, run as the page would run it. */
  const STUB = "window.pageAgent = window.pageAgent || { q: [], setViewState(v) { this.q.push(['setViewState', v]) } };";

  function stubbedPage(body = CART) {
    const dom = new JSDOM(`<!doctype html><html><body>${body}</body></html>`, { url: 'http://localhost/', runScripts: 'outside-only' });
    return { window: dom.window, automation: createAutomation(dom.window.document) };
  }

  it('applies the queued calls in order, then replaces the stub', async () => {
    const { window, automation } = stubbedPage();
    window.eval(STUB);
    window.eval("pageAgent.setViewState({ total: 1 }); pageAgent.setViewState({ items: [], total: 219.96 });");
    window.eval(STUB); // a second copy of the stub keeps the queue
    window.pageAgent.q.push(['updateViewState', { itemCount: 4 }]);
    const stub = window.pageAgent;
    const agent = installPageAgent(automation, window);
    assert.notEqual(window.pageAgent, stub);
    assert.equal(window.pageAgent, agent);
    assert.deepEqual(JSON.parse(JSON.stringify(automation.getViewState())), { items: [], total: 219.96, itemCount: 4 });
    assert.equal(stub.q.length, 0, 'the queue is drained');
    window.eval("pageAgent.setViewState({ total: 2 })");
    assert.equal(automation.getViewState().total, 2);
  });

  it('ignores queued calls of unknown methods, quietly', (t) => {
    const { window, automation } = stubbedPage();
    window.pageAgent = { q: [['getPageState'], ['nope', 1], 'junk', ['setViewState', { ok: true }]] };
    const warn = t.mock.method(console, 'warn');
    const debug = t.mock.method(console, 'debug', () => {});
    installPageAgent(automation, window);
    assert.deepEqual(automation.getViewState(), { ok: true });
    assert.equal(warn.mock.callCount(), 0);
    assert.equal(debug.mock.callCount(), 3);
  });

  it('updateViewState merges one level deep and removes keys set to undefined', () => {
    const { window, automation } = stubbedPage();
    const agent = installPageAgent(automation, window);
    agent.setViewState({ items: [1], total: 5, searchQuery: 'usb' });
    agent.updateViewState({ total: 6, searchQuery: undefined });
    assert.deepEqual(agent.getPageState().viewState, { items: [1], total: 6 });
  });
});

describe('the page state the model reads', () => {
  const SHOP = `
    <table><tbody data-foreach="items">
      <tr data-id="item-1" data-label="Wireless Mouse"><td>Wireless Mouse</td>
        <td><button data-ref="decreaseBtn" aria-label="Decrease quantity" disabled>−</button>
            <button data-ref="increaseBtn" aria-label="Increase quantity">+</button>
            <input data-ref="noteInput" value="gift"></td>
        <td><button data-ref="removeBtn" aria-label="Remove Wireless Mouse">Remove</button></td></tr>
      <tr data-id="item-2" data-label="USB-C Hub"><td>USB-C Hub</td>
        <td><button data-ref="decreaseBtn" aria-label="Decrease quantity">−</button>
            <button data-ref="increaseBtn" aria-label="Increase quantity">+</button>
            <input data-ref="noteInput" value=""></td>
        <td><button data-ref="removeBtn" aria-label="Remove USB-C Hub">Remove</button></td></tr>
    </tbody></table>
    <ul data-foreach="results"><li data-id="p7"><span>Desk Lamp</span><button data-ref="addToCartBtn">Add</button></li></ul>
    <input data-ref="nameInput" value="Lamp">
    <select data-ref="shippingSelect"><option value="std">Standard</option><option value="exp" selected>Express</option></select>
    <input data-ref="giftWrap" type="checkbox" checked>
    <button data-ref="checkoutBtn">Checkout</button>`;

  it('carries the view state, field values and list items with their usable refs, and no interactions', () => {
    const { automation } = page(SHOP);
    automation.setViewState({ total: 79.98 });
    const state = automation.getPageState();
    assert.deepEqual(JSON.parse(JSON.stringify(state)), {
      viewState: { total: 79.98 },
      fields: { 'item-1/noteInput': 'gift', nameInput: 'Lamp', shippingSelect: 'exp', giftWrap: true },
      lists: {
        items: [
          { id: 'item-1', label: 'Wireless Mouse', refs: ['increaseBtn', 'noteInput', 'removeBtn'], labels: { removeBtn: 'Remove Wireless Mouse' } },
          { id: 'item-2', label: 'USB-C Hub', refs: ['decreaseBtn', 'increaseBtn', 'noteInput', 'removeBtn'], labels: { removeBtn: 'Remove USB-C Hub' } },
        ],
        results: [{ id: 'p7', label: 'Desk Lamp', refs: ['addToCartBtn'] }],
      },
    });
    assert.doesNotMatch(JSON.stringify(state), /HTML|element|events|click|description/);
  });

  it('leaves out empty parts, and keeps a deprecated, unserialised interactions alias', () => {
    const { automation } = page('<p>Nothing to do here</p>');
    const state = automation.getPageState();
    assert.equal(JSON.stringify(state), '{"viewState":{}}');
    assert.deepEqual(page(SHOP).automation.getPageState().interactions, page(SHOP).automation.getInteractions());
  });

  it('names nested items by their id path, in page order', () => {
    const { automation } = page(`
      <section data-foreach="orders">
        <div data-id="o1"><h3>Order 1</h3>
          <ul data-foreach="lines"><li data-id="l2"><span>Ink</span><button data-ref="dropBtn">x</button></li></ul>
          <button data-ref="cancelBtn">Cancel order</button></div>
      </section>`);
    assert.deepEqual(automation.getPageState().lists, {
      lines: [{ id: 'o1/l2', label: 'Ink', refs: ['dropBtn'] }],
      orders: [{ id: 'o1', label: 'Order 1', refs: ['cancelBtn'] }],
    });
  });
});

describe('elements without data-ref', () => {
  const PLAIN = `
    <nav><a href="/pricing">Pricing</a> <a href="#faq">FAQ</a></nav>
    <form>
      <label>Your email <input type="email" name="email" value="a@example.com"></label>
      <label>Plan <select name="plan"><option value="free">Free</option><option value="pro">Pro</option></select></label>
      <label><input type="checkbox" name="terms"> I accept the terms</label>
      <label><input type="radio" name="size" value="s"> S</label><label><input type="radio" name="size" value="m"> M</label>
      <textarea aria-label="Message"></textarea>
      <input type="password" name="pw"><input type="hidden" name="token" value="t"><input name="card" autocomplete="cc-number">
      <button>Subscribe now</button>
      <button title="Close the form">×</button>
      <button id="mui-7"></button>
      <button data-ref="sendBtn">Send</button>
      <button>Send</button>
    </form>
    <div role="button" tabindex="0" aria-label="Open menu"></div>
    <details><summary>More options</summary></details>
    <div data-agent="off"><button>Secret</button></div>
    <div data-agent="marked"><button>Unmarked</button><button data-ref="markedBtn">Marked</button></div>
    <ul data-foreach="rows">
      <li data-id="r1"><span>First</span><button>Remove</button></li>
      <li data-id="r2"><span>Second</span><button>Remove</button></li>
    </ul>`;

  it('finds buttons, links, fields, selects and role elements, named from name, label or id', () => {
    const { automation } = page(PLAIN);
    const found = automation.getInteractions().map((g) => [g.refName, g.items.map((i) => i.coordinate.join('/')).join(' ')]);
    assert.deepEqual(Object.fromEntries(found), {
      sendBtn: 'sendBtn',
      markedBtn: 'markedBtn',
      pricing: 'pricing',
      faq: 'faq',
      email: 'email',
      plan: 'plan',
      terms: 'terms',
      'size-s': 'size-s',
      'size-m': 'size-m',
      message: 'message',
      subscribeNow: 'subscribeNow',
      closeTheForm: 'closeTheForm',
      'mui-7': 'mui-7',
      send: 'send',
      openMenu: 'openMenu',
      moreOptions: 'moreOptions',
      remove: 'r1/remove r2/remove',
    });
    const json = JSON.stringify([automation.getInteractions(), automation.getPageState()]);
    for (const secret of ['pw', 'token', 'card', 'Secret', 'Unmarked']) assert.ok(!json.includes(`"${secret}"`), secret);
    assert.deepEqual(automation.getPageState().lists.rows.map((r) => [r.id, r.label, r.refs]), [
      ['r1', 'First', ['remove']],
      ['r2', 'Second', ['remove']],
    ]);
    assert.equal(automation.getPageState().fields.email, 'a@example.com');
  });

  it('a data-ref never loses its name to a found element; equal names get -2, -3', () => {
    const { automation } = page('<button>Save</button><button data-ref="save">Save it</button><button>Save</button><a href="#s">Save</a>');
    assert.deepEqual(refs(automation), ['save', 'save-2', 'save-3', 'save-4']);
    assert.equal(automation.getInteraction('save').label, 'Save it');
  });

  it('data-agent="marked" on the body turns finding off: only data-ref elements', () => {
    const { automation } = page('<div data-agent="marked"><button>Plain</button><input name="q"><button data-ref="go">Go</button></div>');
    assert.deepEqual(refs(automation), ['go']);
  });

  it('keeps at most 48 found refs, giving up links first', (t) => {
    t.mock.method(console, 'debug', () => {});
    const links = Array.from({ length: 40 }, (_, i) => `<a href="/p${i}">Page ${'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz'[i]}</a>`).join('');
    const buttons = Array.from({ length: 20 }, (_, i) => `<button>Action ${'abcdefghijklmnopqrstuvwxyz'[i]}</button>`).join('');
    const { automation } = page(links + buttons + '<button data-ref="mine">Mine</button>');
    const names = refs(automation);
    assert.equal(names.length, 49);
    assert.ok(names.includes('mine'));
    assert.equal(names.filter((n) => n.startsWith('action')).length, 20);
    assert.equal(names.filter((n) => n.startsWith('page')).length, 28);
    assert.ok(names.includes('pageB-2') && !names.includes('pageC-2'), 'equal names are told apart before the cap');
  });

  it('acts on found elements like on marked ones', () => {
    const { automation, document } = page(PLAIN);
    let submitted = 0;
    document.querySelector('form').addEventListener('submit', (e) => {
      e.preventDefault();
      submitted++;
    });
    automation.triggerEvent('input', 'email', 'b@example.com');
    automation.triggerEvent('change', 'plan', 'pro');
    automation.triggerEvent('change', 'terms', true);
    automation.triggerEvent('click', 'subscribeNow');
    assert.equal(document.querySelector('[name=email]').value, 'b@example.com');
    assert.equal(document.querySelector('[name=plan]').value, 'pro');
    assert.equal(document.querySelector('[name=terms]').checked, true);
    assert.equal(submitted, 1);
  });
});
