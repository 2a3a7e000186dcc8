// Unit tests for www/agent/tools.js (node --test, DOM from jsdom).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createAutomation } from '../../www/agent/automation.js';
import { buildTools, toolDefinitions, describeCall, kebabCase, serializeInteractions, CATEGORY } from '../../www/agent/tools.js';

function page(body) {
  const dom = new JSDOM(`<!doctype html><html><body>${body}</body></html>`, { url: 'http://localhost/' });
  const { document } = dom.window;
  return { window: dom.window, document, automation: createAutomation(document) };
}

/**
 * A small cart app: remove buttons remove their item (re-rendering in a
 * microtask, like a framework), the add button adds what the inputs hold.
 */
function cartPage() {
  const p = page(`
    <ul data-foreach="items">
      <li data-id="item-1"><span>Wireless Mouse</span><button data-ref="increaseBtn">+</button><button data-ref="removeBtn">Remove</button></li>
      <li data-id="item-2"><span>USB-C Hub</span><button data-ref="increaseBtn">+</button><button data-ref="removeBtn">Remove</button></li>
      <li data-id="item-3"><span>Mechanical Keyboard</span><button data-ref="increaseBtn">+</button><button data-ref="removeBtn">Remove</button></li>
    </ul>
    <input data-ref="nameInput" placeholder="Name">
    <select data-ref="shippingSelect"><option value="">Choose…</option><option value="std">Standard</option><option value="exp">Express</option></select>
    <input data-ref="giftWrap" type="checkbox">
    <button data-ref="addToCartBtn">Add</button>
    <button data-ref="checkoutBtn" disabled>Checkout</button>`);
  const { document, automation } = p;
  const publish = () =>
    automation.setViewState({
      items: [...document.querySelectorAll('[data-id]')].map((li) => ({ id: li.dataset.id, name: li.querySelector('span').textContent })),
    });
  const clicked = [];
  document.addEventListener('click', (e) => {
    const ref = e.target.dataset.ref;
    const li = e.target.closest('[data-id]');
    clicked.push(li ? `${li.dataset.id}/${ref}` : ref);
    if (ref === 'removeBtn') queueMicrotask(() => { li.remove(); publish(); });
    if (ref === 'addToCartBtn') {
      const name = document.querySelector('[data-ref="nameInput"]').value;
      const item = document.createElement('li');
      item.dataset.id = `item-${document.querySelectorAll('[data-id]').length + 1}`;
      item.innerHTML = `<span>${name}</span><button data-ref="removeBtn">Remove</button>`;
      document.querySelector('[data-foreach]').append(item);
      publish();
    }
  });
  publish();
  return { ...p, clicked };
}

const toolNamed = (tools, name) => tools.find((t) => t.name === name);

describe('tool names', () => {
  const cases = [
    ['addToCartBtn', 'add-to-cart-btn'],
    ['removeBtn', 'remove-btn'],
    ['nameInput', 'name-input'],
    ['URLInput', 'url-input'],
    ['HTMLParser', 'html-parser'],
    ['item2Btn', 'item2-btn'],
    ['search_box', 'search-box'],
    ['already-kebab', 'already-kebab'],
    ['with space', 'with-space'],
    ['x', 'x'],
  ];
  for (const [ref, kebab] of cases) {
    it(`${ref} → ${kebab}`, () => assert.equal(kebabCase(ref), kebab));
  }

  it('names one semantic tool per ref, by kind, plus the generic tools', () => {
    const tools = buildTools(cartPage().automation);
    assert.deepEqual(tools.map((t) => t.name), [
      'click-increase-btn',
      'click-remove-btn',
      'fill-name-input',
      'select-shipping-select',
      'toggle-gift-wrap',
      'click-add-to-cart-btn',
      'trigger-interaction',
      'fill-input',
      'get-page-state',
      'list-interactions',
    ]);
    for (const t of tools) {
      assert.equal(t.category, CATEGORY);
      assert.equal(t.category, 'page-automation');
      assert.match(t.name, /^[a-z0-9-]{1,64}$/);
      assert.ok(t.description.length > 0);
    }
  });

  it('gives a clashing name a suffix instead of shadowing a generic tool', () => {
    const tools = buildTools(page('<input data-ref="input"><button data-ref="input-x">a</button><button data-ref="inputX">b</button>').automation);
    assert.deepEqual(tools.map((t) => t.name).slice(0, 3), ['fill-input-2', 'click-input-x', 'click-input-x-2']);
    assert.equal(tools.filter((t) => t.name === 'fill-input').length, 1);
  });
});

describe('schemas', () => {
  it('a single button takes no parameters', () => {
    const t = toolNamed(buildTools(cartPage().automation), 'click-add-to-cart-btn');
    assert.deepEqual(t.inputSchema, { type: 'object', properties: {} });
  });

  it('a repeated ref takes a plain string coordinate that points at the page state, not an enum', () => {
    const { automation } = cartPage();
    const t = toolNamed(buildTools(automation), 'click-remove-btn');
    assert.deepEqual(t.inputSchema, {
      type: 'object',
      properties: {
        coordinate: {
          type: 'string',
          description: '"<id>/removeBtn" for an item of the page state\'s lists.items with "removeBtn" in its refs',
        },
      },
      required: ['coordinate'],
    });
  });

  it('declarations do not change when items come and go, and a list tool stays while its list is empty', () => {
    const { automation, document } = cartPage();
    const before = JSON.stringify(toolDefinitions(buildTools(automation)));
    document.querySelector('[data-id="item-2"]').remove();
    assert.equal(JSON.stringify(toolDefinitions(buildTools(automation))), before, 'one item fewer: the same bytes');
    for (const li of document.querySelectorAll('[data-id]')) li.remove();
    assert.equal(JSON.stringify(toolDefinitions(buildTools(automation))), before, 'no items: still the same bytes');
    const li = document.createElement('li');
    li.dataset.id = 'item-7';
    li.innerHTML = '<span>Lamp</span><button data-ref="increaseBtn">+</button><button data-ref="removeBtn">Remove</button>';
    document.querySelector('[data-foreach]').append(li);
    assert.equal(JSON.stringify(toolDefinitions(buildTools(automation))), before, 'new items: the same bytes');
  });

  it('keeps names and order for the life of the page; a single element comes and goes with it', () => {
    const { automation, document } = cartPage();
    const names = () => buildTools(automation).map((t) => t.name);
    const first = names();
    const add = document.querySelector('[data-ref="addToCartBtn"]');
    add.disabled = true;
    assert.deepEqual(names(), first.filter((n) => n !== 'click-add-to-cart-btn'));
    // a new element that comes first in the page is listed after the known ones
    document.body.insertAdjacentHTML('afterbegin', '<button data-ref="helpBtn">Help</button>');
    add.disabled = false;
    const now = names();
    assert.deepEqual(now.filter((n) => n !== 'click-help-btn'), first);
    assert.equal(now.indexOf('click-help-btn'), first.indexOf('trigger-interaction'));
  });

  it('a text field requires a string value', () => {
    const t = toolNamed(buildTools(cartPage().automation), 'fill-name-input');
    assert.deepEqual(t.inputSchema.required, ['value']);
    assert.equal(t.inputSchema.properties.value.type, 'string');
  });

  it('a select offers its option values (not the empty placeholder)', () => {
    const t = toolNamed(buildTools(cartPage().automation), 'select-shipping-select');
    assert.deepEqual(t.inputSchema.properties.value.enum, ['std', 'exp']);
    assert.deepEqual(t.inputSchema.required, ['value']);
    assert.match(t.description, /std = Standard, exp = Express/);
  });

  it('a checkbox takes "true" or "false"', () => {
    const t = toolNamed(buildTools(cartPage().automation), 'toggle-gift-wrap');
    assert.deepEqual(t.inputSchema.properties.value.enum, ['true', 'false']);
  });

  it('a repeated text field takes both coordinate and value', () => {
    const tools = buildTools(page('<div data-foreach="l"><div data-id="a"><input data-ref="qty"></div><div data-id="b"><input data-ref="qty"></div></div>').automation);
    assert.deepEqual(toolNamed(tools, 'fill-qty').inputSchema.required, ['coordinate', 'value']);
  });

  it('leaves disabled elements without tools', () => {
    const tools = buildTools(cartPage().automation);
    assert.equal(toolNamed(tools, 'click-checkout-btn'), undefined);
  });
});

describe('descriptions', () => {
  it('reads them from data-description', () => {
    const tools = buildTools(page('<button data-ref="addBtn" data-description="Add the typed item to the cart">Add</button>').automation);
    assert.equal(tools[0].description, 'Add the typed item to the cart');
  });

  it('reads them from a linked contract', async () => {
    const { automation, window } = page('<link rel="jay-contract" href="c.jay-contract"><button data-ref="addBtn">Add</button>');
    window.fetch = async () => ({ ok: true, text: async () => '- tag: addBtn\n  type: interactive\n  description: From the contract\n' });
    await automation.loadContracts();
    assert.equal(buildTools(automation)[0].description, 'From the contract. Label: "Add".');
  });

  const readable = [
    ['<button data-ref="addToCartBtn">Add to cart</button>', 'Click the Add To Cart button.'],
    ['<a data-ref="helpLink" href="#">Help</a>', 'Click the Help link.'],
    ['<a data-ref="help" href="#">help</a>', 'Click the Help link.'],
    ['<button data-ref="goBtn">Check out now</button>', 'Click the Go button. Label: "Check out now".'],
    ['<input data-ref="nameInput">', 'Fill the Name field with text (replaces what is there).'],
    ['<select data-ref="country"></select>', 'Choose an option in the Country dropdown.'],
    ['<input type="checkbox" data-ref="giftWrap">', 'Check or uncheck the Gift Wrap checkbox.'],
  ];
  for (const [html, description] of readable) {
    it(`makes "${description}" from the ref name`, () => {
      assert.equal(buildTools(page(html).automation)[0].description, description);
    });
  }

  it('never lists the items of a repeated ref (they are in the page state)', () => {
    const t = toolNamed(buildTools(cartPage().automation), 'click-remove-btn');
    assert.equal(t.description, 'Click the Remove button.');
    assert.doesNotMatch(JSON.stringify(t), /item-1|Wireless Mouse/);
  });

  it('adds the label every element of the ref shares, and only then', () => {
    const same = page(`<div data-foreach="l">
      <p data-id="a"><button data-ref="decBtn" aria-label="Decrease quantity">−</button></p>
      <p data-id="b"><button data-ref="decBtn" aria-label="Decrease quantity">−</button></p></div>`);
    assert.equal(buildTools(same.automation)[0].description, 'Click the Dec button. Label: "Decrease quantity".');
    const differ = page(`<div data-foreach="l">
      <p data-id="a"><button data-ref="dropBtn" aria-label="Drop Pen">x</button></p>
      <p data-id="b"><button data-ref="dropBtn" aria-label="Drop Ink">x</button></p></div>`);
    assert.equal(buildTools(differ.automation)[0].description, 'Click the Drop button.');
    assert.deepEqual(differ.automation.getPageState().lists.l.map((i) => i.labels), [{ dropBtn: 'Drop Pen' }, { dropBtn: 'Drop Ink' }]);
  });
});

describe('execute', () => {
  it('clicks the chosen item, waits for the page, and answers with the fresh page state', async () => {
    const { automation, clicked } = cartPage();
    const result = await toolNamed(buildTools(automation), 'click-remove-btn').execute({ coordinate: 'item-2/removeBtn' });
    assert.equal(result.ok, true);
    assert.deepEqual(clicked, ['item-2/removeBtn']);
    assert.deepEqual(result.pageState.viewState.items.map((i) => i.id), ['item-1', 'item-3']);
    assert.deepEqual(result.pageState.lists.items.map((i) => i.id), ['item-1', 'item-3']);
    assert.equal(result.pageState.interactions === undefined || !Object.keys(result.pageState).includes('interactions'), true);
  });

  it('accepts the bare item id for a repeated ref', async () => {
    const { automation, clicked } = cartPage();
    const result = await toolNamed(buildTools(automation), 'click-remove-btn').execute({ coordinate: 'item-3' });
    assert.equal(result.ok, true);
    assert.deepEqual(clicked, ['item-3/removeBtn']);
  });

  it('fills, then clicks a parameterless tool', async () => {
    const { automation, document } = cartPage();
    const tools = buildTools(automation);
    const events = [];
    const input = document.querySelector('[data-ref="nameInput"]');
    input.addEventListener('input', () => events.push(`input:${input.value}`));
    input.addEventListener('change', () => events.push('change'));
    assert.equal((await toolNamed(tools, 'fill-name-input').execute({ value: 'Desk lamp' })).ok, true);
    assert.deepEqual(events, ['input:Desk lamp', 'change']);
    const result = await toolNamed(tools, 'click-add-to-cart-btn').execute({});
    assert.equal(result.ok, true);
    assert.equal(result.pageState.viewState.items.at(-1).name, 'Desk lamp');
  });

  it('selects and toggles', async () => {
    const { automation, document } = cartPage();
    const tools = buildTools(automation);
    assert.equal((await toolNamed(tools, 'select-shipping-select').execute({ value: 'exp' })).ok, true);
    assert.equal(document.querySelector('select').value, 'exp');
    assert.equal((await toolNamed(tools, 'toggle-gift-wrap').execute({ value: 'true' })).ok, true);
    assert.equal(document.querySelector('[type=checkbox]').checked, true);
    await toolNamed(tools, 'toggle-gift-wrap').execute({ value: 'false' });
    assert.equal(document.querySelector('[type=checkbox]').checked, false);
  });

  const errors = [
    ['click-remove-btn', { coordinate: 'item-9/removeBtn' }, /Unknown coordinate "item-9\/removeBtn".*item-1\/removeBtn/],
    ['click-remove-btn', { coordinate: 'item-1/increaseBtn' }, /Unknown coordinate/],
    ['click-remove-btn', {}, /coordinate is required/],
    ['click-remove-btn', undefined, /coordinate is required/],
    ['fill-name-input', {}, /value is required/],
    ['fill-name-input', { value: { a: 1 } }, /value must be a string/],
    ['select-shipping-select', { value: 'Overnight' }, /"Overnight" is not an option.*"std"/],
    ['select-shipping-select', {}, /value is required/],
    ['toggle-gift-wrap', { value: 'yes' }, /"true" or "false"/],
    ['trigger-interaction', {}, /coordinate is required/],
    ['trigger-interaction', { coordinate: 'item-7/removeBtn' }, /Unknown coordinate/],
    ['trigger-interaction', { coordinate: 'addToCartBtn', event: 'input' }, /does not take "input"/],
    ['trigger-interaction', { coordinate: 'checkoutBtn' }, /"checkoutBtn" is disabled right now/],
    ['click-remove-btn', { coordinate: { id: 'item-1' } }, /coordinate must be a string.*item-1\/removeBtn/],
    ['click-remove-btn', { coordinate: 'item-1/addToCartBtn' }, /Unknown coordinate "item-1\/addToCartBtn" for click-remove-btn; valid coordinates now: item-1\/removeBtn, item-2\/removeBtn, item-3\/removeBtn$/],
    ['fill-input', { coordinate: 'addToCartBtn', value: 'x' }, /not a field/],
    ['fill-input', { coordinate: 'nameInput' }, /value is required/],
    ['fill-input', { coordinate: 'shippingSelect', value: 'nope' }, /not an option/],
  ];
  for (const [name, args, message] of errors) {
    it(`${name} ${JSON.stringify(args)} → {ok: false} ${message}`, async () => {
      const { automation, clicked } = cartPage();
      const result = await toolNamed(buildTools(automation), name).execute(args);
      assert.equal(result.ok, false);
      assert.match(result.error, message);
      assert.deepEqual(clicked, [], 'nothing was clicked');
    });
  }

  it('fails cleanly on a tool whose element went away since the catalog was built', async () => {
    const { automation, document } = cartPage();
    const tool = toolNamed(buildTools(automation), 'click-add-to-cart-btn');
    const button = document.querySelector('[data-ref="addToCartBtn"]');
    button.disabled = true;
    assert.deepEqual(await tool.execute({}), { ok: false, error: '"addToCartBtn" is disabled right now' });
    button.remove();
    assert.deepEqual(await tool.execute({}), { ok: false, error: '"addToCartBtn" is not on the page right now' });
  });

  it('names a disabled item, and an empty list, in plain words', async () => {
    const { automation, document, clicked } = cartPage();
    const tool = toolNamed(buildTools(automation), 'click-remove-btn');
    document.querySelector('[data-id="item-2"] [data-ref="removeBtn"]').disabled = true;
    let result = await tool.execute({ coordinate: 'item-2' });
    assert.equal(result.error, '"item-2/removeBtn" is disabled right now; valid coordinates for click-remove-btn now: item-1/removeBtn, item-3/removeBtn');
    for (const li of document.querySelectorAll('[data-id]')) li.remove();
    const still = toolNamed(buildTools(automation), 'click-remove-btn');
    assert.ok(still, 'the tool stays while the list is empty');
    result = await still.execute({ coordinate: 'item-1/removeBtn' });
    assert.equal(
      result.error,
      'Unknown coordinate "item-1/removeBtn" for click-remove-btn; valid coordinates now: ' +
        "none: no item in the page state's lists.items has a usable removeBtn right now",
    );
    assert.deepEqual(clicked, []);
  });

  it('never throws, even when the automation does', async () => {
    const { automation } = cartPage();
    const broken = { ...automation, triggerEvent() { throw new Error('page exploded'); } };
    const tools = buildTools(broken);
    const argsFor = { 'click-remove-btn': { coordinate: 'item-1/removeBtn' }, 'click-increase-btn': { coordinate: 'item-1' } };
    for (const t of tools) {
      const result = await t.execute(argsFor[t.name] ?? { coordinate: 'nameInput', value: 'true' });
      assert.equal(typeof result.ok, 'boolean', t.name);
      if (!t.webmcpOnly && t.name !== 'select-shipping-select') assert.deepEqual(result, { ok: false, error: 'page exploded' }, t.name);
    }
  });

  it('trigger-interaction clicks by coordinate, defaulting the event', async () => {
    const { automation, clicked } = cartPage();
    const result = await toolNamed(buildTools(automation), 'trigger-interaction').execute({ coordinate: 'item-1/removeBtn' });
    assert.equal(result.ok, true);
    assert.deepEqual(clicked, ['item-1/removeBtn']);
  });

  it('fill-input fills text, selects and checkboxes', async () => {
    const { automation, document } = cartPage();
    const fill = toolNamed(buildTools(automation), 'fill-input');
    assert.equal((await fill.execute({ coordinate: 'nameInput', value: 'Lamp' })).ok, true);
    assert.equal((await fill.execute({ coordinate: 'shippingSelect', value: 'std' })).ok, true);
    assert.equal((await fill.execute({ coordinate: 'giftWrap', value: 'true' })).ok, true);
    assert.equal(document.querySelector('[data-ref="nameInput"]').value, 'Lamp');
    assert.equal(document.querySelector('select').value, 'std');
    assert.equal(document.querySelector('[type=checkbox]').checked, true);
  });

  it('get-page-state and list-interactions read the page', async () => {
    const { automation } = cartPage();
    const tools = buildTools(automation);
    const state = await toolNamed(tools, 'get-page-state').execute({});
    assert.deepEqual(state, { ok: true, pageState: automation.getPageState() });
    const list = await toolNamed(tools, 'list-interactions').execute();
    assert.deepEqual(list, { ok: true, interactions: serializeInteractions(automation.getInteractions()) });
    const remove = list.interactions.find((g) => g.refName === 'removeBtn');
    assert.deepEqual(remove.items[1], {
      coordinate: 'item-2/removeBtn',
      elementType: 'HTMLButtonElement',
      events: ['click'],
      label: 'Remove',
      itemLabel: 'USB-C Hub',
    });
    const select = list.interactions.find((g) => g.refName === 'shippingSelect').items[0];
    assert.equal(select.elementType, 'HTMLSelectElement');
    assert.equal(select.coordinate, 'shippingSelect');
    assert.deepEqual(select.options.map((o) => o.value), ['', 'std', 'exp']);
  });
});

describe('toolDefinitions', () => {
  it('gives the server {name, description, inputSchema, category} without WebMCP-only tools', () => {
    const tools = buildTools(cartPage().automation);
    assert.deepEqual(tools.filter((t) => t.webmcpOnly).map((t) => t.name), ['get-page-state', 'list-interactions']);
    const defs = toolDefinitions(tools);
    assert.equal(defs.length, tools.length - 2);
    assert.ok(!defs.some((d) => d.name === 'get-page-state' || d.name === 'list-interactions'));
    for (const d of defs) assert.deepEqual(Object.keys(d), ['name', 'description', 'inputSchema', 'category']);
    assert.deepEqual(JSON.parse(JSON.stringify(defs)), defs);
    assert.deepEqual(defs.find((d) => d.name === 'click-add-to-cart-btn'), {
      name: 'click-add-to-cart-btn',
      description: 'Click the Add To Cart button.',
      inputSchema: { type: 'object', properties: {} },
      category: 'page-automation',
    });
  });
});

describe('describeCall', () => {
  const lines = [
    ['click-remove-btn', { coordinate: 'item-2/removeBtn' }, 'Clicked Remove on USB-C Hub'],
    ['click-remove-btn', { coordinate: 'item-2' }, 'Clicked Remove on USB-C Hub'],
    ['click-increase-btn', { coordinate: 'item-1/increaseBtn' }, 'Clicked Increase on Wireless Mouse'],
    ['click-add-to-cart-btn', {}, 'Clicked Add'],
    ['fill-name-input', { value: 'Desk lamp' }, 'Filled Name with "Desk lamp"'],
    ['select-shipping-select', { value: 'exp' }, 'Selected "Express" in Shipping'],
    ['toggle-gift-wrap', { value: 'true' }, 'Checked Gift Wrap'],
    ['toggle-gift-wrap', { value: 'false' }, 'Unchecked Gift Wrap'],
    ['trigger-interaction', { coordinate: 'item-3/removeBtn' }, 'Clicked Remove on Mechanical Keyboard'],
    ['trigger-interaction', { coordinate: 'nameInput', event: 'change' }, 'Triggered change on Name'],
    ['fill-input', { coordinate: 'nameInput', value: 'Desk lamp' }, 'Filled Name with "Desk lamp"'],
    ['get-page-state', {}, 'Read the page state'],
    ['list-interactions', {}, 'Listed the page interactions'],
    ['shop.searchProducts', { query: 'usb' }, 'Ran shop.searchProducts'],
  ];
  for (const [name, args, line] of lines) {
    it(`${name} ${JSON.stringify(args)} → ${line}`, () => {
      assert.equal(describeCall(name, args, cartPage().automation), line);
    });
  }

  it('still names an item after the call removed it', async () => {
    const { automation } = cartPage();
    const tools = buildTools(automation);
    await toolNamed(tools, 'click-remove-btn').execute({ coordinate: 'item-2/removeBtn' });
    assert.equal(describeCall('click-remove-btn', { coordinate: 'item-2/removeBtn' }, automation), 'Clicked Remove on USB-C Hub');
  });

  it('remembers a tool that is gone with its last item', async () => {
    const { automation, document } = page('<div data-foreach="x"><div data-id="only"><b>Solo</b><button data-ref="dropBtn">Drop</button></div></div>');
    buildTools(automation);
    document.querySelector('[data-id]').remove();
    assert.equal(describeCall('click-drop-btn', { coordinate: 'only/dropBtn' }, automation), 'Clicked Drop on Solo');
  });
});

describe('a page without data-ref', () => {
  it('gets tools named after its controls, described by their labels, and they act', async () => {
    const { automation, document } = page(`
      <form><label>Email <input type="email" name="email"></label>
        <label>Plan <select name="plan"><option value="free">Free</option><option value="pro">Pro</option></select></label>
        <button>Subscribe</button></form>
      <button id="x-9" title="Close the banner">×</button>`);
    let sent = null;
    document.querySelector('form').addEventListener('submit', (e) => {
      e.preventDefault();
      sent = new document.defaultView.FormData(e.target).get('email');
    });
    const tools = buildTools(automation);
    const defs = Object.fromEntries(toolDefinitions(tools).map((d) => [d.name, d.description]));
    assert.deepEqual(defs, {
      'fill-email': 'Fill the Email field with text (replaces what is there).',
      'select-plan': 'Choose an option in the Plan dropdown. Options: free = Free, pro = Pro.',
      'click-subscribe': 'Click the Subscribe button.',
      'click-close-the-banner': 'Click the Close The Banner button.',
      'trigger-interaction': toolNamed(tools, 'trigger-interaction').description,
      'fill-input': toolNamed(tools, 'fill-input').description,
    });
    assert.equal((await toolNamed(tools, 'fill-email').execute({ value: 'a@example.com' })).ok, true);
    assert.equal((await toolNamed(tools, 'click-subscribe').execute({})).ok, true);
    assert.equal(sent, 'a@example.com');
  });
});
