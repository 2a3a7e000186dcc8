/**
 * The widget never misleads, in chromium against nginx + responder + mock:
 * a page action that failed is shown failed (a cross and the reason), never
 * with the check mark of success; what goes back to the model says what
 * happened, not the page again; a request that is too large because of the
 * page is not blamed on the conversation; and the demo page's own copy
 * counts what it shows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, launchBrowser, openPage, screenshot, SEL, startStack } from './stack.mjs';

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

/** The progress lines of the last turn: text, status and the mark drawn before them. */
const activity = (page) =>
  page.$$eval('.gemini-chat [data-foreach="activity"] > *', (l) =>
    l.map((e) => ({
      text: e.textContent.trim(),
      status: e.dataset.status,
      mark: getComputedStyle(e, '::before').content,
      color: getComputedStyle(e).color,
    })));

const responsesIn = (rec) =>
  (rec.body?.contents ?? []).flatMap((c) => (c.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse));

describe('the widget never misleads', () => {
  it('a page action that failed shows a cross and the reason, a done one the check mark', async () => {
    const page = await openPage(browser, stack);
    try {
      await stack.mock.reset();
      await stack.mock.scenario('page-call', { tool: 'click-remove-btn', args: { coordinate: 'item-9/removeBtn' } });
      assert.equal(await ask(page, 'remove item 9'), 'response');
      const [bad] = await activity(page);
      assert.equal(bad.status, 'failed');
      assert.equal(bad.mark, '"✗"', 'a cross, not the check mark');
      assert.match(bad.text, /failed: Unknown coordinate "item-9\/removeBtn"/, 'the reason');
      assert.deepEqual(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.length), 3, 'nothing changed');
      /* the model was told it failed, and how */
      const sent = responsesIn((await stack.mock.requests()).at(-1)).at(-1);
      assert.equal(sent.response.error.ok, false);
      assert.match(sent.response.error.error, /Unknown coordinate/);
      await screenshot(page.locator(SEL.widget), 'honest-failed-action.png');

      await stack.mock.reset();
      await stack.mock.scenario('page-call', { tool: 'click-remove-btn', args: { coordinate: 'item-1/removeBtn' } });
      assert.equal(await ask(page, 'remove the mouse'), 'response');
      const [good] = await activity(page);
      assert.equal(good.status, 'ok');
      assert.equal(good.mark, '"✓"');
      assert.doesNotMatch(good.text, /failed/);
      assert.notEqual(good.color, bad.color, 'a failed line is coloured apart');
      /* what went back to Gemini: what happened, not the view state again */
      const ok = responsesIn((await stack.mock.requests()).at(-1)).at(-1);
      assert.deepEqual(ok.response, { result: { ok: true } });
    } finally {
      await stack.mock.scenario('demo');
      await page.close();
    }
  });

  it('a page that sends too much state is told so, without "start a new chat" and without Retry', async (t) => {
    const page = await openPage(browser, stack);
    try {
      for (const [size, who, code] of [[300 * 1024, 'the responder (maxPageStateBytes)', 'page_state_too_large'],
        [1200 * 1024, 'nginx (client_max_body_size)', 'payload_too_large']]) {
        await page.evaluate((n) => window.pageAgent.setViewState({ notes: 'x'.repeat(n) }), size);
        assert.equal(await ask(page, 'hello'), 'error', who);
        const s = await page.evaluate(() => window.geminiAgent.chat.state);
        t.diagnostic(`${who}: ${s.errorCode}`);
        assert.equal(s.errorCode, code, who);
        const text = await page.textContent(SEL.error);
        assert.match(text, /This page sends more state than the server accepts/, who);
        assert.doesNotMatch(text, /new chat/i);
        assert.equal(await page.isVisible(SEL.retry), false);
      }
      await screenshot(page.locator(SEL.widget), 'honest-page-state-too-large.png');
    } finally {
      await page.close();
    }
  });
});

describe('the demo page counts what it shows', () => {
  it('"1 item", "2 items", units only when they differ, no empty table', async () => {
    const page = await openPage(browser, stack);
    try {
      const count = () => page.textContent('#item-count');
      const click = (id, refName) => page.click(`${SEL.row(id)} [data-ref="${refName}"]`);
      assert.equal(await count(), '3 items (4 units)', 'three rows, the hub twice');
      await click('item-2', 'decreaseBtn');
      assert.equal(await count(), '3 items');
      await click('item-2', 'removeBtn');
      assert.equal(await count(), '2 items');
      await click('item-1', 'removeBtn');
      assert.equal(await count(), '1 item');
      await click('item-3', 'increaseBtn');
      assert.equal(await count(), '1 item (2 units)');
      assert.equal(await page.isVisible('#cart-empty'), false);
      await click('item-3', 'removeBtn');
      /* empty: a sentence, no table header, no "0 items" */
      assert.equal(await page.isVisible('#cart-empty'), true);
      assert.equal(await page.isVisible('#cart-table thead'), false);
      assert.equal(await page.isVisible('#cart-summary'), false);
      assert.equal(await page.isDisabled('[data-ref="checkoutBtn"]'), true);
      await screenshot(page.locator('#cart-title').locator('xpath=..'), 'demo-empty-cart.png');
      await page.click('#reset-demo');
      assert.equal(await count(), '3 items (4 units)');
      assert.equal(await page.isVisible('#cart-table thead'), true);
      assert.deepEqual(page.problems, []);
    } finally {
      await page.close();
    }
  });
});
