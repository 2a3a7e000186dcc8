/**
 * WebMCP: with @mcp-b/webmcp-polyfill (npm) loaded before the agent's
 * scripts, the page registers the same tools with document.modelContext;
 * a browser agent lists them, with an enum of the usable item coordinates
 * on the tools of repeated items ("<id>/<ref>"), and calls click-remove-btn;
 * the page changes and only the tools of that list are registered again
 * (list-interactions gives each input its type). Emptying the cart takes
 * the cart's item tools and checkout away. Without WebMCP the page logs
 * nothing alarming.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, openPage, REPO, SEL, startStack } from './stack.mjs';

const POLYFILL = join(REPO, 'node_modules/@mcp-b/webmcp-polyfill/dist/index.iife.js');

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The tools registered through the polyfill (the browser agent's view). */
const listTools = (page) =>
  page.evaluate(async () => (await document.modelContext.getTools()).map((t) => ({ name: t.name, inputSchema: t.inputSchema })));

describe('WebMCP', () => {
  it('registers the page tools with the polyfill; calling click-remove-btn changes the page', async () => {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    /* the polyfill runs before any of the page's scripts */
    await page.addInitScript({ content: readFileSync(POLYFILL, 'utf8') });
    /* count the toolchange events a browser agent would hear */
    await page.addInitScript(() => {
      window.__toolchanges = 0;
      document.modelContext.addEventListener('toolchange', () => window.__toolchanges++);
    });
    await page.goto(stack.url);
    await page.waitForSelector(SEL.input);
    assert.equal(await page.evaluate(() => Boolean(document.modelContext?.__isWebMCPPolyfill)), true);

    /* registration happens after the agent starts: wait for it */
    await page.waitForFunction(async () => (await document.modelContext.getTools()).some((t) => t.name === 'click-remove-btn'));
    const tools = await listTools(page);
    const names = tools.map((t) => t.name);
    for (const want of ['click-remove-btn', 'click-increase-btn', 'fill-name-input', 'fill-price-input', 'click-add-btn',
      'fill-search-input', 'click-search-btn', 'trigger-interaction', 'fill-input', 'get-page-state', 'list-interactions'])
      assert.ok(names.includes(want), `${want} registered: ${names}`);
    assert.ok(!names.includes('click-apply-coupon-btn'), 'the disabled button is not offered');
    assert.ok(!names.some((n) => /card-number|message-input/.test(n)), `data-agent="off" stays out: ${names}`);
    const remove = tools.find((t) => t.name === 'click-remove-btn');
    const coordinates = (list, name) => list.find((t) => t.name === name)?.inputSchema.properties.coordinate.enum;
    assert.equal(remove.inputSchema.properties.coordinate.type, 'string');
    assert.deepEqual(remove.inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-2/removeBtn', 'item-3/removeBtn']);
    /* decreaseBtn is disabled at quantity 1: only item-2 (quantity 2) is offered */
    assert.deepEqual(coordinates(tools, 'click-decrease-btn'), ['item-2/decreaseBtn']);
    await page.waitForTimeout(300); /* the registrations' own toolchanges */
    const changesBefore = await page.evaluate(() => window.__toolchanges);

    /* call it the way a browser agent does */
    const result = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'click-remove-btn');
      return document.modelContext.executeTool(tool, JSON.stringify({ coordinate: 'item-2/removeBtn' }));
    });
    assert.equal(typeof result, 'string');
    assert.doesNotMatch(result, /"ok":\s*false/);
    assert.deepEqual(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.map((e) => e.dataset.id)), ['item-1', 'item-3']);
    assert.equal(await page.textContent('#total'), '$119.98');

    /* the cart's item tools are registered again without item-2; decrease had only item-2: it goes */
    await page.waitForTimeout(300);
    const now = await listTools(page);
    assert.deepEqual(coordinates(now, 'click-remove-btn'), ['item-1/removeBtn', 'item-3/removeBtn']);
    assert.deepEqual(coordinates(now, 'click-increase-btn'), ['item-1/increaseBtn', 'item-3/increaseBtn']);
    assert.ok(!now.some((t) => t.name === 'click-decrease-btn'), 'no usable item: no tool');
    const same = (list) => list.filter((t) => !/^click-(remove|increase|decrease)-btn$/.test(t.name)).map((t) => JSON.stringify(t)).sort();
    assert.deepEqual(same(now), same(tools), 'the other tools are untouched');
    assert.equal(await page.evaluate(() => window.__toolchanges), changesBefore + 5,
      'two re-registrations (unregister + register each) and one removal');

    /* an unknown coordinate is an error, never the first item */
    const bad = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'trigger-interaction');
      try {
        return await document.modelContext.executeTool(tool, JSON.stringify({ coordinate: 'item-9/removeBtn' }));
      } catch (e) {
        return `threw: ${e.message}`;
      }
    });
    assert.match(bad, /item-9|unknown|not found|no such/i);
    assert.deepEqual(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.map((e) => e.dataset.id)), ['item-1', 'item-3']);

    /* state through the WebMCP-only tool */
    const state = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'get-page-state');
      return document.modelContext.executeTool(tool, '{}');
    });
    assert.match(state, /Mechanical Keyboard/);
    assert.doesNotMatch(state, /USB-C Hub/);

    /* list-interactions: "/"-joined coordinates and DOM type names, as WebMCP gives them */
    const listed = JSON.parse(JSON.parse(await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'list-interactions');
      return document.modelContext.executeTool(tool, '{}');
    })).content[0].text);
    const removeItems = listed.interactions.find((g) => g.refName === 'removeBtn').items;
    assert.deepEqual(removeItems.map((i) => [i.coordinate, i.elementType]),
      [['item-1/removeBtn', 'HTMLButtonElement'], ['item-3/removeBtn', 'HTMLButtonElement']]);
    const input = (ref) => listed.interactions.find((g) => g.refName === ref).items[0];
    assert.deepEqual([input('nameInput').elementType, input('nameInput').inputType], ['HTMLInputElement', 'text']);
    assert.deepEqual([input('searchInput').elementType, input('searchInput').inputType], ['HTMLInputElement', 'search']);
    assert.equal('inputType' in removeItems[0], false);

    /* emptying the cart: the item tools and checkout (disabled) go; the rest stays */
    for (const id of ['item-1', 'item-3']) await page.click(`[data-id="${id}"] [data-ref="removeBtn"]`);
    await page.waitForTimeout(400);
    const after = (await listTools(page)).map((t) => t.name);
    for (const gone of ['click-checkout-btn', 'click-remove-btn', 'click-increase-btn'])
      assert.ok(!after.includes(gone), `${gone} gone: ${after.join(' ')}`);
    assert.ok(after.includes('fill-name-input') && after.includes('trigger-interaction'), after.join(' '));
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('without WebMCP the page works and logs no warning or error', async () => {
    const page = await openPage(browser, stack);
    const noisy = [];
    page.on('console', (m) => {
      if (m.type() === 'warning' || m.type() === 'error') noisy.push(m.text());
    });
    await page.reload();
    await page.waitForSelector(SEL.input);
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => 'modelContext' in document || 'modelContext' in navigator), false);
    assert.deepEqual(noisy, []);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
