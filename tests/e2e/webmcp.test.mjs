/**
 * WebMCP: with @mcp-b/webmcp-polyfill (npm) loaded before the agent's
 * scripts, the page registers the same tools with document.modelContext;
 * a browser agent lists them and calls click-remove-btn, and the page
 * changes -- without a single toolchange, since no declaration depends on
 * the items; emptying the cart fires exactly one (checkout goes). Without
 * WebMCP the page logs nothing alarming.
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
    assert.equal(remove.inputSchema.properties.coordinate.type, 'string');
    assert.equal(remove.inputSchema.properties.coordinate.enum, undefined);
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

    /* nothing is registered again: no declaration depends on the items */
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__toolchanges), changesBefore, 'removing an item fires no toolchange');
    assert.deepEqual((await listTools(page)).map((t) => JSON.stringify(t)), tools.map((t) => JSON.stringify(t)));

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
    assert.equal(listed.interactions.find((g) => g.refName === 'nameInput').items[0].elementType, 'HTMLInputElement');

    /* emptying the cart: the checkout button is disabled, its tool goes -- one toolchange */
    const changes = await page.evaluate(() => window.__toolchanges);
    for (const id of ['item-1', 'item-3']) await page.click(`[data-id="${id}"] [data-ref="removeBtn"]`);
    await page.waitForTimeout(400);
    assert.equal(await page.evaluate(() => window.__toolchanges), changes + 1, 'one tool gone: one toolchange');
    const after = (await listTools(page)).map((t) => t.name);
    assert.ok(!after.includes('click-checkout-btn') && after.includes('click-remove-btn'), after.join(' '));
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
