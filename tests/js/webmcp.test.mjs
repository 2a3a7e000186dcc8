// Unit tests for www/agent/webmcp.js (node --test, DOM from jsdom).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createAutomation } from '../../www/agent/automation.js';
import { buildTools, serializeInteractions, toolDefinitions, webmcpTools } from '../../www/agent/tools.js';
import { registerWebMCP, pageGuide } from '../../www/agent/webmcp.js';

const CART = `
  <ul data-foreach="items">
    <li data-id="item-1"><span>Wireless Mouse</span><button data-ref="removeBtn">Remove</button></li>
    <li data-id="item-2"><span>USB-C Hub</span><button data-ref="removeBtn">Remove</button></li>
  </ul>
  <input data-ref="nameInput" placeholder="Name">
  <button data-ref="addBtn">Add</button>`;

function page(body = CART, url = 'http://127.0.0.1:8080/') {
  const dom = new JSDOM(`<!doctype html><html><body>${body}</body></html>`, { url });
  const { window } = dom;
  const automation = createAutomation(window.document);
  window.document.addEventListener('click', (e) => {
    if (e.target.dataset.ref === 'removeBtn') e.target.closest('[data-id]').remove();
  });
  return { window, document: window.document, automation };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
/**
 * Long enough for a change to reach WebMCP: the automation's microtasks, then the batch's timer
 * (and, after a call, the timer that schedules it; the polyfill's toolchange timer). The timer
 * hops after the wait keep it so on a loaded machine, where a 0 ms timer set after our 20 ms one
 * can expire after it.
 */
const settled = async () => {
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (let hop = 0; hop < 8; hop++) await tick();
};

/**
 * A fake current-spec ModelContext: registerTool(tool, {signal}) resolving a
 * promise, lifetime by AbortSignal only; it records everything.
 */
function specContext({ resources = true } = {}) {
  const log = [];
  const live = new Map();
  const signals = new Map();
  const track = (kind, key, item, options) => {
    if (live.has(`${kind}:${key}`)) return Promise.reject(new Error(`duplicate ${kind} ${key}`));
    log.push(['register', kind, key]);
    live.set(`${kind}:${key}`, item);
    signals.set(`${kind}:${key}`, options?.signal);
    options?.signal?.addEventListener('abort', () => {
      log.push(['abort', kind, key]);
      if (live.get(`${kind}:${key}`) === item) live.delete(`${kind}:${key}`);
    });
    return Promise.resolve();
  };
  const ctx = {
    registerTool: (tool, options) => {
      assert.ok(options?.signal instanceof AbortSignal, 'registerTool gets an AbortSignal');
      return track('tool', tool.name, tool, options);
    },
  };
  if (resources) {
    ctx.registerResource = (r, options) => track('resource', r.uri, r, options);
    ctx.registerPrompt = (p, options) => track('prompt', p.name, p, options);
  }
  return { ctx, log, live, signals, tool: (name) => live.get(`tool:${name}`) };
}

describe('document.modelContext (current spec)', () => {
  it('registers every tool of the catalog, the two resources and the page-guide prompt', async () => {
    const { window, automation } = page();
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, () => buildTools(automation), window);
    const names = buildTools(automation).map((t) => t.name);
    assert.deepEqual(fake.log.filter(([, kind]) => kind === 'tool').map(([, , name]) => name), names);
    assert.ok(names.includes('get-page-state') && names.includes('list-interactions'), 'WebMCP gets the WebMCP-only tools');
    assert.deepEqual(fake.log.filter(([, kind]) => kind !== 'tool').map(([, , key]) => key), [
      'state://viewstate',
      'state://interactions',
      'page-guide',
    ]);
    const removal = fake.tool('click-remove-btn');
    assert.equal(removal.inputSchema.properties.coordinate.type, 'string');
    assert.deepEqual(removal.inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-2/removeBtn'],
      'WebMCP names the items (the chat declarations do not)');
    assert.equal(fake.tool('get-page-state').annotations.readOnlyHint, true);
  });

  it('executes through the same catalog and answers with MCP text content', async () => {
    const { window, document, automation } = page();
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const signal = fake.signals.get('tool:click-remove-btn');
    const registered = fake.log.length;
    const result = await fake.tool('click-remove-btn').execute({ coordinate: 'item-2/removeBtn' });
    assert.equal(signal.aborted, false, 'the running tool is not unregistered under its own call');
    await settled();
    assert.equal(signal.aborted, true, 'after the call, the tool is registered again with its new enum');
    assert.deepEqual(fake.log.slice(registered), [
      ['abort', 'tool', 'click-remove-btn'],
      ['register', 'tool', 'click-remove-btn'],
    ]);
    assert.deepEqual(fake.tool('click-remove-btn').inputSchema.properties.coordinate.enum, ['item-1/removeBtn']);
    assert.equal(result.content.length, 1);
    assert.equal(result.content[0].type, 'text');
    const parsed = JSON.parse(result.content[0].text);
    assert.equal(parsed.ok, true);
    assert.equal(document.querySelector('[data-id="item-2"]'), null);
    assert.equal(result.isError, undefined);

    const failed = await fake.tool('click-remove-btn').execute({ coordinate: 'item-9/removeBtn' });
    assert.equal(failed.isError, true);
    assert.equal(JSON.parse(failed.content[0].text).ok, false);
    assert.ok(document.querySelector('[data-id="item-1"]'), 'an unknown coordinate does not hit the first item');
  });

  it('serves the resources and the prompt from the live page', async () => {
    const { window, automation } = page();
    automation.setViewState({ total: 79.98 });
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const view = await fake.live.get('resource:state://viewstate').read();
    assert.deepEqual(JSON.parse(view.contents[0].text), { total: 79.98 });
    assert.equal(view.contents[0].uri, 'state://viewstate');
    assert.equal(view.contents[0].mimeType, 'application/json');
    const interactions = JSON.parse((await fake.live.get('resource:state://interactions').read()).contents[0].text);
    assert.deepEqual(interactions, serializeInteractions(automation.getInteractions()));
    /* as the WebMCP design gives them: "/"-joined coordinates and DOM type names */
    assert.deepEqual(interactions.find((g) => g.refName === 'removeBtn').items.map((i) => [i.coordinate, i.elementType]), [
      ['item-1/removeBtn', 'HTMLButtonElement'],
      ['item-2/removeBtn', 'HTMLButtonElement'],
    ]);
    assert.equal(interactions.find((g) => g.refName === 'nameInput').items[0].elementType, 'HTMLInputElement');
    const prompt = fake.live.get('prompt:page-guide');
    const { messages } = await prompt.get();
    assert.equal(messages[0].role, 'user');
    assert.match(messages[0].content.text, /"total": 79\.98/);
    assert.match(messages[0].content.text, /"id": "item-2"/);
    assert.match(messages[0].content.text, /item-2\/removeBtn: HTMLButtonElement "Remove" of USB-C Hub \[click\]/);
    assert.match(messages[0].content.text, /click-remove-btn/);
  });

  it('re-registers only the tools whose shape changed: an item changes its list\'s tools only', async () => {
    const { window, document, automation } = page(CART + '<select data-ref="sizeSelect"><option value="s">S</option></select>');
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    fake.log.length = 0;

    automation.setViewState({ total: 1 }); // state changes, tools do not
    document.querySelector('[data-ref="nameInput"]').setAttribute('class', 'x');
    await settled();
    assert.deepEqual(fake.log, []);

    document.querySelector('[data-id="item-1"]').remove(); // an item goes: its list's tool, with a new enum
    await settled();
    assert.deepEqual(fake.log, [
      ['abort', 'tool', 'click-remove-btn'],
      ['register', 'tool', 'click-remove-btn'],
    ]);
    assert.deepEqual(fake.tool('click-remove-btn').inputSchema.properties.coordinate.enum, ['item-2/removeBtn']);
    fake.log.length = 0;
    document.querySelector('[data-id="item-2"]').remove(); // the list is empty: no item to name, the tool goes
    await settled();
    assert.deepEqual(fake.log, [['abort', 'tool', 'click-remove-btn']]);
    fake.log.length = 0;

    document.querySelector('[data-ref="sizeSelect"]').append(new window.Option('M', 'm')); // an enum changes
    await settled();
    assert.deepEqual(fake.log, [
      ['abort', 'tool', 'select-size-select'],
      ['register', 'tool', 'select-size-select'],
    ]);
    assert.deepEqual(fake.tool('select-size-select').inputSchema.properties.value.enum, ['s', 'm']);

    fake.log.length = 0;
    document.querySelector('[data-ref="addBtn"]').disabled = true; // a tool disappears
    await settled();
    assert.deepEqual(fake.log, [['abort', 'tool', 'click-add-btn']]);
  });

  it('applies the changes of one frame in one pass; a change undone within it is never seen', async () => {
    const { window, document, automation } = page();
    /* frames on demand (the batch also has a 100 ms timer for tabs without frames) */
    const frames = [];
    window.requestAnimationFrame = (cb) => frames.push(cb);
    window.cancelAnimationFrame = () => {};
    const nextFrame = () => frames.splice(0).forEach((cb) => cb(0));
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    fake.log.length = 0;
    const add = document.querySelector('[data-ref="addBtn"]');
    const name = document.querySelector('[data-ref="nameInput"]');
    /* the page renders in several tasks: a button goes, comes back; a field goes */
    add.disabled = true;
    await tick();
    add.disabled = false;
    await tick();
    name.disabled = true;
    await new Promise((r) => setTimeout(r, 1));
    document.body.insertAdjacentHTML('beforeend', '<button data-ref="helpBtn">Help</button>');
    await settled();
    assert.deepEqual(fake.log, [], 'nothing before the frame');
    assert.equal(frames.length, 1, 'one frame asked for');
    nextFrame();
    assert.deepEqual(fake.log, [
      ['abort', 'tool', 'fill-name-input'],
      ['register', 'tool', 'click-help-btn'],
    ]);
  });

  it('unregisters everything on pagehide by aborting the signals, and only then', async () => {
    const { window, automation } = page();
    const fake = specContext();
    fake.ctx.unregisterTool = () => assert.fail('the signal form is used where the API has it');
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const registered = fake.log.length;
    assert.equal(fake.live.size, registered);
    window.dispatchEvent(new window.Event('pagehide'));
    assert.equal(fake.live.size, 0);
    assert.equal(fake.log.filter(([what]) => what === 'abort').length, registered);

    automation.setViewState({ after: true });
    window.document.querySelector('[data-id]').remove();
    await tick();
    assert.equal(fake.live.size, 0, 'nothing comes back after pagehide');
  });

  it('registers again when the page comes back from the bfcache', async () => {
    const { window, automation } = page();
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const count = fake.live.size;
    window.dispatchEvent(new window.Event('pagehide'));
    window.dispatchEvent(Object.assign(new window.Event('pageshow'), { persisted: true }));
    assert.equal(fake.live.size, count);
  });

  it('dispose() unregisters and stops following the page', async () => {
    const { window, document, automation } = page();
    const fake = specContext({ resources: false });
    window.document.modelContext = fake.ctx;
    const dispose = registerWebMCP(automation, undefined, window);
    dispose();
    assert.equal(fake.live.size, 0);
    fake.log.length = 0;
    document.querySelector('[data-id]').remove();
    window.dispatchEvent(new window.Event('pagehide'));
    await tick();
    assert.deepEqual(fake.log, []);
  });

  it('swallows a rejected registration (a name the page already uses) without warnings', async (t) => {
    const { window, automation } = page();
    const fake = specContext({ resources: false });
    window.document.modelContext = fake.ctx;
    await fake.ctx.registerTool({ name: 'click-add-btn' }, { signal: new AbortController().signal });
    const warn = t.mock.method(console, 'warn');
    const error = t.mock.method(console, 'error');
    const debug = t.mock.method(console, 'debug', () => {});
    registerWebMCP(automation, undefined, window);
    await tick();
    assert.equal(warn.mock.callCount() + error.mock.callCount(), 0);
    assert.equal(debug.mock.callCount(), 1);
  });
});

describe('what a browser agent is told about inputs', () => {
  const FORM = `
    <input type="checkbox" data-ref="agree">
    <input type="radio" name="size" data-ref="small">
    <input type="number" data-ref="qty">
    <input data-ref="note">
    <button data-ref="sendBtn">Send</button>`;

  it('every input item carries its inputType in list-interactions, state://interactions and page-guide', async () => {
    const { window, automation } = page(FORM);
    const fake = specContext();
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const listed = JSON.parse((await fake.tool('list-interactions').execute({})).content[0].text).interactions;
    const resource = JSON.parse((await fake.live.get('resource:state://interactions').read()).contents[0].text);
    assert.deepEqual(resource, listed, 'the resource and the tool say the same');
    const item = (ref) => listed.find((g) => g.refName === ref).items[0];
    assert.deepEqual(
      ['agree', 'small', 'qty', 'note'].map((ref) => [item(ref).elementType, item(ref).inputType]),
      [
        ['HTMLInputElement', 'checkbox'],
        ['HTMLInputElement', 'radio'],
        ['HTMLInputElement', 'number'],
        ['HTMLInputElement', 'text'],
      ],
    );
    assert.notDeepEqual(item('agree'), item('small'), 'the checkbox and the radio differ');
    assert.equal('inputType' in item('sendBtn'), false, 'only inputs have one');

    const text = (await fake.live.get('prompt:page-guide').get()).messages[0].content.text;
    assert.match(text, /- agree: HTMLInputElement type=checkbox \[change\]/);
    assert.match(text, /- small: HTMLInputElement type=radio \[change\]/);
    assert.match(text, /- qty: HTMLInputElement type=number \[input, change\]/);
    assert.match(text, /- sendBtn: HTMLButtonElement "Send" \[click\]/);
  });
});

describe('semantic tools of repeated items (an enum of the item coordinates)', () => {
  const LIST = `
    <ul data-foreach="items">
      <li data-id="a"><button data-ref="removeBtn">Remove</button><input type="checkbox" data-ref="pick"></li>
      <li data-id="b"><button data-ref="removeBtn" disabled>Remove</button><input type="checkbox" data-ref="pick"></li>
      <li data-id="c"><button data-ref="removeBtn">Remove</button><input type="checkbox" data-ref="pick" disabled></li>
    </ul>
    <button data-ref="addBtn">Add</button>`;

  it('WebMCP tools take the usable coordinates as an enum; the chat declarations stay plain strings', async () => {
    const { window, automation } = page(LIST);
    const fake = specContext({ resources: false });
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    const coordinate = (name) => fake.tool(name).inputSchema.properties.coordinate;
    assert.deepEqual(coordinate('click-remove-btn'), {
      ...toolDefinitions(buildTools(automation)).find((d) => d.name === 'click-remove-btn').inputSchema.properties.coordinate,
      enum: ['a/removeBtn', 'c/removeBtn'],
    }, 'the disabled item is left out; the rest of the schema is the chat one');
    assert.deepEqual(coordinate('toggle-pick').enum, ['a/pick', 'b/pick']);
    assert.deepEqual(fake.tool('toggle-pick').inputSchema.properties.value.enum, ['true', 'false']);
    assert.equal(fake.tool('click-add-btn').inputSchema.properties.coordinate, undefined, 'a single element has none');
    for (const d of toolDefinitions(buildTools(automation))) {
      assert.equal(d.inputSchema.properties.coordinate?.enum, undefined, `${d.name}: no enum for Gemini (prompt cache)`);
    }
    const ok = JSON.parse((await fake.tool('click-remove-btn').execute({ coordinate: 'c/removeBtn' })).content[0].text);
    assert.equal(ok.ok, true, 'an enum value is a coordinate the tool takes');
  });

  it('follows the page: an item enabled joins the enum, a list with no usable item has no tool', async () => {
    const { window, document, automation } = page(LIST);
    const fake = specContext({ resources: false });
    window.document.modelContext = fake.ctx;
    registerWebMCP(automation, undefined, window);
    fake.log.length = 0;
    document.querySelector('[data-id="b"] [data-ref="removeBtn"]').disabled = false;
    await settled();
    assert.deepEqual(fake.log, [
      ['abort', 'tool', 'click-remove-btn'],
      ['register', 'tool', 'click-remove-btn'],
    ]);
    assert.deepEqual(fake.tool('click-remove-btn').inputSchema.properties.coordinate.enum, ['a/removeBtn', 'b/removeBtn', 'c/removeBtn']);
    fake.log.length = 0;
    for (const box of document.querySelectorAll('[data-ref="pick"]')) box.disabled = true;
    await settled();
    assert.deepEqual(fake.log, [['abort', 'tool', 'toggle-pick']], 'an empty enum would admit no call');
    assert.ok(buildTools(automation).some((t) => t.name === 'toggle-pick'), 'the chat keeps it declared');
  });

  it('a list too long to name keeps the plain string', () => {
    const items = Array.from({ length: 201 }, (_, n) => `<li data-id="i${n}"><button data-ref="removeBtn">x</button></li>`);
    const { automation } = page(`<ul data-foreach="items">${items.join('')}</ul>`);
    const remove = webmcpTools(buildTools(automation), automation).find((t) => t.name === 'click-remove-btn');
    assert.equal(remove.inputSchema.properties.coordinate.type, 'string');
    assert.equal(remove.inputSchema.properties.coordinate.enum, undefined);
    const { automation: short } = page(`<ul data-foreach="items">${items.slice(0, 200).join('')}</ul>`);
    const named = webmcpTools(buildTools(short), short).find((t) => t.name === 'click-remove-btn');
    assert.equal(named.inputSchema.properties.coordinate.enum.length, 200);
  });
});

describe('navigator.modelContext (older Chrome / MCP-B)', () => {
  it('removes tools through the returned registration handles', async () => {
    const { window, automation } = page();
    const registered = [];
    const unregistered = [];
    const resources = [];
    window.navigator.modelContext = {
      registerTool(tool) {
        registered.push(tool.name);
        return { unregister: () => unregistered.push(tool.name) };
      },
      registerResource(resource) {
        resources.push(resource.uri);
        return { unregister: () => unregistered.push(resource.uri) };
      },
    };
    registerWebMCP(automation, undefined, window);
    assert.deepEqual(registered, buildTools(automation).map((t) => t.name));
    assert.deepEqual(resources, ['state://viewstate', 'state://interactions']);

    window.document.querySelector('[data-id="item-1"]').remove();
    window.document.querySelector('[data-ref="addBtn"]').disabled = true;
    await settled();
    assert.deepEqual(unregistered, ['click-remove-btn', 'click-add-btn']);
    assert.equal(registered.length, buildTools(automation).length + 2, 'click-remove-btn registered again, nothing else');
    assert.equal(registered.at(-1), 'click-remove-btn');

    unregistered.length = 0;
    window.dispatchEvent(new window.Event('pagehide'));
    assert.deepEqual(
      unregistered.sort(),
      [...buildTools(automation).map((t) => t.name), 'state://interactions', 'state://viewstate'].sort(),
    );
  });

  it('removes tools with unregisterTool(name) when registerTool returns nothing', async () => {
    const { window, automation } = page();
    const live = new Set();
    window.navigator.modelContext = {
      registerTool(tool) {
        live.add(tool.name);
      },
      unregisterTool(name) {
        live.delete(name);
      },
    };
    registerWebMCP(automation, undefined, window);
    assert.equal(live.size, buildTools(automation).length);
    window.dispatchEvent(new window.Event('pagehide'));
    assert.equal(live.size, 0);
  });

  it('takes a registration handle that arrives asynchronously', async () => {
    const { window, automation } = page();
    const unregistered = [];
    window.navigator.modelContext = {
      registerTool: async (tool) => ({ unregister: () => unregistered.push(tool.name) }),
    };
    const dispose = registerWebMCP(automation, undefined, window);
    await tick();
    dispose();
    assert.equal(unregistered.length, buildTools(automation).length);
  });

  it('prefers document.modelContext when both exist', () => {
    const { window, automation } = page();
    const fake = specContext({ resources: false });
    window.document.modelContext = fake.ctx;
    let touched = false;
    Object.defineProperty(window.navigator, 'modelContext', {
      configurable: true,
      get() {
        touched = true;
        return { registerTool: () => assert.fail('navigator used') };
      },
    });
    registerWebMCP(automation, undefined, window);
    assert.equal(touched, false, 'the deprecated alias is not even read');
    assert.ok(fake.live.size > 0);
  });
});

describe('without WebMCP', () => {
  it('does nothing and logs nothing alarming', async (t) => {
    const { window, document, automation } = page();
    const warn = t.mock.method(console, 'warn');
    const error = t.mock.method(console, 'error');
    const log = t.mock.method(console, 'log');
    t.mock.method(console, 'debug', () => {});
    const dispose = registerWebMCP(automation, undefined, window);
    assert.equal(typeof dispose, 'function');
    document.querySelector('[data-id]').remove();
    window.dispatchEvent(new window.Event('pagehide'));
    await tick();
    dispose();
    assert.equal(warn.mock.callCount() + error.mock.callCount() + log.mock.callCount(), 0);
  });

  it('ignores a modelContext without registerTool', (t) => {
    const { window, automation } = page();
    window.document.modelContext = {};
    t.mock.method(console, 'debug', () => {});
    const warn = t.mock.method(console, 'warn');
    registerWebMCP(automation, undefined, window)();
    assert.equal(warn.mock.callCount(), 0);
  });
});

describe('pageGuide', () => {
  it('describes state, interactions and tools', () => {
    const { automation } = page('<button data-ref="addBtn" data-description="Adds it">Add</button>');
    const text = pageGuide(automation.getPageState(), buildTools(automation), automation.getInteractions());
    assert.match(text, /addBtn: HTMLButtonElement "Add" \[click\] — Adds it/);
    assert.match(text, /Tools: click-add-btn, trigger-interaction/);
  });
});

describe('with the @mcp-b/webmcp-polyfill runtime', () => {
  // The polyfill reads browser globals; lend it the jsdom window's for this suite.
  const globals = ['window', 'document', 'navigator', 'Document', 'Node', 'Element', 'HTMLElement', 'HTMLFormElement',
    'HTMLInputElement', 'HTMLTextAreaElement', 'HTMLSelectElement', 'HTMLButtonElement', 'SubmitEvent', 'ShadowRoot',
    'MutationObserver', 'location'];
  const saved = new Map();
  let env;
  let polyfill;

  before(async () => {
    env = page();
    for (const name of globals) {
      saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name));
      Object.defineProperty(globalThis, name, { value: name === 'window' ? env.window : env.window[name], configurable: true, writable: true });
    }
    polyfill = await import('@mcp-b/webmcp-polyfill');
    polyfill.initializeWebMCPPolyfill();
  });

  after(() => {
    polyfill?.cleanupWebMCPPolyfill();
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else delete globalThis[name];
    }
  });

  it('lists the tools, runs click-remove-btn, follows the page and cleans up on pagehide', async (t) => {
    const warn = t.mock.method(console, 'warn');
    const { window, document, automation } = env;
    const mc = document.modelContext;
    assert.ok(mc, 'the polyfill installed document.modelContext');
    let changes = 0;
    mc.addEventListener('toolchange', () => changes++);
    registerWebMCP(automation, undefined, window);
    await settled();
    const listed = await mc.getTools();
    assert.deepEqual(listed.map((x) => x.name).sort(), buildTools(automation).map((x) => x.name).sort());
    const removeTool = listed.find((x) => x.name === 'click-remove-btn');
    assert.deepEqual(removeTool.inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-2/removeBtn']);

    changes = 0;
    const out = JSON.parse(await mc.executeTool(removeTool, JSON.stringify({ coordinate: 'item-2/removeBtn' })));
    assert.equal(JSON.parse(out.content[0].text).ok, true);
    assert.equal(document.querySelector('[data-id="item-2"]'), null);
    await settled();
    assert.equal(changes, 2, 'one tool registered again: its removal and its registration, nothing else');
    assert.deepEqual((await mc.getTools()).find((x) => x.name === 'click-remove-btn').inputSchema.properties.coordinate.enum,
      ['item-1/removeBtn'], 'the removed item is no longer offered');

    changes = 0;
    document.querySelector('[data-ref="addBtn"]').disabled = true;
    await settled();
    assert.equal(changes, 1, 'one tool gone: one toolchange');

    window.dispatchEvent(new window.Event('pagehide'));
    assert.deepEqual(await mc.getTools(), []);
    assert.equal(warn.mock.callCount(), 0, 'the deprecated navigator alias was not read');
  });
});
