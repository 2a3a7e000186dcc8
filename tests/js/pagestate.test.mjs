// "Nothing is lost": what the model got before the page state became compact
// (the whole interaction list in the page state, coordinate enums and item
// lists in the tool declarations) is still reachable from what it gets now
// (the compact page state + the stable declarations). node --test, jsdom.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { JSDOM } from 'jsdom';
import { createAutomation, coordinateKey } from '../../www/agent/automation.js';
import { buildTools, toolDefinitions } from '../../www/agent/tools.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The last commit with the old page state and enum tools. */
const OLD_COMMIT = '9ddbce3';

/** A page with everything the old state carried: items, labels per item, values, options, checkboxes, nesting. */
const PAGE = `
  <table><tbody data-foreach="items">
    <tr data-id="item-1" data-label="Wireless Mouse"><td>Wireless Mouse</td>
      <td><button data-ref="decreaseBtn" aria-label="Decrease quantity" disabled>−</button>
          <button data-ref="increaseBtn" aria-label="Increase quantity"
                  data-description="Increase this item's quantity by one.">+</button>
          <input data-ref="qtyInput" aria-label="Quantity" value="1">
          <select data-ref="colorSelect"><option value="black">Black</option><option value="white">White</option></select>
          <input type="checkbox" data-ref="giftBox" aria-label="Gift" checked></td>
      <td><button data-ref="removeBtn" aria-label="Remove Wireless Mouse">Remove</button></td></tr>
    <tr data-id="item-2" data-label="USB-C Hub"><td>USB-C Hub</td>
      <td><button data-ref="decreaseBtn" aria-label="Decrease quantity">−</button>
          <button data-ref="increaseBtn" aria-label="Increase quantity"
                  data-description="Increase this item's quantity by one.">+</button>
          <input data-ref="qtyInput" aria-label="Quantity" value="2">
          <select data-ref="colorSelect"><option value="black">Black</option><option value="white" selected>White</option></select>
          <input type="checkbox" data-ref="giftBox" aria-label="Gift"></td>
      <td><button data-ref="removeBtn" aria-label="Remove USB-C Hub">Remove</button></td></tr>
  </tbody></table>
  <section data-foreach="orders"><div data-id="o1"><h3>Order 1</h3>
    <ul data-foreach="lines"><li data-id="l1"><span>Pen</span><button data-ref="dropBtn">Drop</button></li></ul></div></section>
  <label>Name <input data-ref="nameInput" value="Desk lamp"></label>
  <label>Price ($) <input data-ref="priceInput" value="19.99"></label>
  <select data-ref="shippingSelect" aria-label="Shipping">
    <option value="">Choose…</option><option value="std">Standard</option><option value="exp" selected>Express</option>
  </select>
  <label><input type="checkbox" data-ref="termsBox"> I accept</label>
  <button data-ref="addBtn" data-description="Add the item typed above">Add to cart</button>
  <button data-ref="checkoutBtn">Checkout</button>`;

const VIEW = { items: [{ id: 'item-1', name: 'Wireless Mouse' }, { id: 'item-2', name: 'USB-C Hub' }], total: 129.97 };

function load(createAutomationFn = createAutomation) {
  const dom = new JSDOM(`<!doctype html><html><body>${PAGE}</body></html>`, { url: 'http://localhost/' });
  const automation = createAutomationFn(dom.window.document);
  automation.setViewState(VIEW);
  return automation;
}

/**
 * Everything the old representation told the model, as checks against the
 * new one: {what, ok}. `oldState` is {viewState, interactions}, `oldDefs`
 * the old toolDefinitions.
 */
function reachability(oldState, oldDefs, newState, newDefs) {
  const checks = [];
  const check = (what, ok) => checks.push({ what, ok: Boolean(ok) });
  const toolsByRef = new Map();
  for (const d of newDefs) {
    const m = /^(click|fill|select|toggle)-(.*)$/.exec(d.name);
    if (m) toolsByRef.set(m[2], d);
  }
  const kebab = (ref) => ref.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  const entries = Object.values(newState.lists ?? {}).flat();
  /* an item's label is in its list entry, or - said once - in the view
   * state's object with the same id */
  const viewNames = new Map();
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (typeof v.id === 'string') viewNames.set(v.id, Object.values(v).filter((x) => typeof x === 'string'));
      Object.values(v).forEach(walk);
    }
  };
  walk(newState.viewState);
  const labelled = (entry, id, label) => entry?.label === label || (viewNames.get(id) ?? []).includes(label);

  check('the view state', JSON.stringify(newState.viewState) === JSON.stringify(oldState.viewState));
  const newNames = new Set(newDefs.map((d) => d.name));
  for (const d of oldDefs) check(`tool ${d.name} is still declared`, newNames.has(d.name));

  for (const group of oldState.interactions) {
    const tool = toolsByRef.get(kebab(group.refName));
    check(`${group.refName} has a tool`, tool);
    if (group.description) check(`${group.refName}: its description`, tool?.description.includes(group.description));
    for (const item of group.items) {
      const key = coordinateKey(item.coordinate);
      const id = item.coordinate.slice(0, -1).join('/');
      const entry = id ? entries.find((e) => e.id === id) : null;
      if (id) {
        check(`${key}: the item ${id} is listed`, entry);
        check(`${key}: ${group.refName} is among its refs`, entry?.refs.includes(group.refName));
        if (item.itemLabel) check(`${key}: item label "${item.itemLabel}"`, labelled(entry, id, item.itemLabel));
      }
      if (item.label) {
        const said = tool?.description.toLowerCase().includes(item.label.toLowerCase()) || entry?.labels?.[group.refName] === item.label;
        check(`${key}: label "${item.label}"`, said);
      }
      if ('value' in item) check(`${key}: value "${item.value}"`, newState.fields?.[key] === item.value);
      if ('checked' in item) check(`${key}: checked ${item.checked}`, newState.fields?.[key] === item.checked);
      for (const o of item.options ?? []) {
        if (o.value === '') continue;
        check(`${key}: option ${o.value}`, tool?.inputSchema.properties.value.enum?.includes(o.value));
        if (o.label && o.label !== o.value) check(`${key}: option label ${o.label}`, tool?.description.includes(`${o.value} = ${o.label}`));
      }
    }
  }
  // every coordinate an old enum offered can still be formed from the page state
  for (const d of oldDefs) {
    for (const coordinate of d.inputSchema.properties?.coordinate?.enum ?? []) {
      const parts = coordinate.split('/');
      const entry = entries.find((e) => e.id === parts.slice(0, -1).join('/'));
      check(`${d.name}: coordinate ${coordinate}`, entry?.refs.includes(parts.at(-1)));
    }
  }
  return checks;
}

const failures = (checks) => checks.filter((c) => !c.ok).map((c) => c.what);

describe('nothing is lost', () => {
  it('everything of the interaction list is reachable from the page state and the tools', () => {
    const automation = load();
    // the old page state was {viewState, interactions, customEvents}: the same interactions
    const oldState = { viewState: automation.getViewState(), interactions: automation.getInteractions() };
    const newState = JSON.parse(JSON.stringify(automation.getPageState()));
    const newDefs = toolDefinitions(buildTools(automation));
    const checks = reachability(oldState, [], newState, newDefs);
    assert.ok(checks.length > 60, `${checks.length} checks`);
    assert.deepEqual(failures(checks), []);
    assert.ok(!('interactions' in newState), 'the interaction list is not repeated');
  });

  it(`everything the old runtime (${OLD_COMMIT}) sent is reachable from what is sent now`, async (t) => {
    let dir;
    try {
      dir = mkdtempSync(join(tmpdir(), 'ga-old-agent-'));
      const show = (path) =>
        execFileSync('git', ['-C', REPO, 'show', `${OLD_COMMIT}:${path}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      writeFileSync(join(dir, 'automation.mjs'), show('www/agent/automation.js'));
      writeFileSync(join(dir, 'tools.mjs'), show('www/agent/tools.js').replace("from './automation.js'", "from './automation.mjs'"));
    } catch {
      if (dir) rmSync(dir, { recursive: true, force: true });
      t.skip(`no git history with ${OLD_COMMIT} here`);
      return;
    }
    try {
      const old = await import(pathToFileURL(join(dir, 'automation.mjs')).href);
      const oldTools = await import(pathToFileURL(join(dir, 'tools.mjs')).href);
      const before = load(old.createAutomation);
      const oldState = JSON.parse(JSON.stringify(before.getPageState()));
      const oldDefs = oldTools.toolDefinitions(oldTools.buildTools(before));
      assert.ok(oldDefs.some((d) => d.inputSchema.properties.coordinate?.enum), 'the old declarations had enums');

      const now = load();
      const newState = JSON.parse(JSON.stringify(now.getPageState()));
      const newDefs = toolDefinitions(buildTools(now));
      const checks = reachability(oldState, oldDefs, newState, newDefs);
      assert.ok(checks.length > 60, `${checks.length} checks`);
      assert.deepEqual(failures(checks), []);

      /* and it costs less: the page state and the tools together are smaller */
      const size = (state, defs) => JSON.stringify(state).length + JSON.stringify(defs).length;
      assert.ok(size(newState, newDefs) < size(oldState, oldDefs), `${size(newState, newDefs)} < ${size(oldState, oldDefs)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
