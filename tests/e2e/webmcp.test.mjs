/**
 * WebMCP: with @mcp-b/webmcp-polyfill (npm) loaded before the agent's
 * scripts, the page registers the same tools with document.modelContext;
 * a browser agent lists them and calls click-remove-btn, and the page
 * changes. Without WebMCP the page logs nothing alarming.
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
    assert.deepEqual(remove.inputSchema.properties.coordinate.enum, ['item-1/removeBtn', 'item-2/removeBtn', 'item-3/removeBtn']);

    /* call it the way a browser agent does */
    const result = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'click-remove-btn');
      return document.modelContext.executeTool(tool, JSON.stringify({ coordinate: 'item-2/removeBtn' }));
    });
    assert.equal(typeof result, 'string');
    assert.doesNotMatch(result, /"ok":\s*false/);
    assert.deepEqual(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.map((e) => e.dataset.id)), ['item-1', 'item-3']);
    assert.equal(await page.textContent('#total'), '$119.98');

    /* the tool is registered again with the new shape: item-2 is gone from its enum */
    await page.waitForFunction(async () => {
      const t = (await document.modelContext.getTools()).find((x) => x.name === 'click-remove-btn');
      return t && !t.inputSchema.properties.coordinate.enum.includes('item-2/removeBtn');
    });

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
