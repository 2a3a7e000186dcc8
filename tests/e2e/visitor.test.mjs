/**
 * What a visitor sees on a phone (390 × 844): the page an action changes is
 * not hidden under the chat's full-screen sheet (the sheet goes to half
 * height while the action runs and after it, and what changed is marked for
 * a moment); "Stopped." comes after the partial answer it stopped; the
 * "Usage" disclosure belongs to a turn that succeeded, never a failed one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, launchBrowser, lastAnswer, screenshot, SEL, startStack, trackProblems, waitDone } from './stack.mjs';

const PHONE = { width: 390, height: 844 };
const FRAME = '.gemini-chat__frame';
const USAGE = '.gemini-chat details.gemini-chat__usage';

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser({ viewport: PHONE });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The demo page on a phone, its chat opened from the launcher (a full-screen sheet). */
async function openSheet() {
  const page = trackProblems(await browser.newPage());
  await page.goto(stack.url);
  await page.waitForFunction(() => window.geminiAgent?.chat);
  await page.click('.gemini-chat__launcher');
  await page.waitForSelector(SEL.input, { state: 'visible' });
  return page;
}

/** Record, from now on, what the page saw: the sheet's height when a row left the cart, and the marked elements. */
function record(page) {
  return page.evaluate(() => {
    window.__seen = { frameTopWhenChanged: null, marked: [] };
    const frame = document.querySelector('.gemini-chat__frame');
    new MutationObserver((list) => {
      for (const m of list) {
        if (m.type === 'childList' && m.target.id === 'cart-items' && window.__seen.frameTopWhenChanged === null)
          window.__seen.frameTopWhenChanged = frame.getBoundingClientRect().top;
        if (m.type === 'attributes' && m.target.hasAttribute('data-gemini-changed'))
          window.__seen.marked.push(m.target.id || m.target.localName);
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-gemini-changed'] });
  });
}

describe('what a visitor sees on a phone', () => {
  it('a page action shows the page: the sheet goes to half height, and what changed is marked', async () => {
    await stack.mock.scenario('demo');
    const page = await openSheet();
    const full = await page.locator(FRAME).boundingBox();
    assert.ok(full.y <= 1 && full.height >= PHONE.height - 1, `a full-screen sheet at first: ${JSON.stringify(full)}`);
    await record(page);
    assert.equal(await ask(page, 'remove the hub'), 'response');
    assert.match(await lastAnswer(page), /Removed/);
    const seen = await page.evaluate(() => window.__seen);
    assert.ok(seen.frameTopWhenChanged >= PHONE.height * 0.4, `the page is visible while the action runs (sheet top ${seen.frameTopWhenChanged})`);
    assert.ok(seen.marked.includes('cart-items'), `the cart's rows are marked: ${JSON.stringify(seen.marked)}`);
    const now = await page.locator(FRAME).boundingBox();
    assert.ok(now.y >= PHONE.height * 0.4, `and after it: ${JSON.stringify(now)}`);
    assert.equal(await page.getAttribute(SEL.widget, 'data-peek'), 'true');
    assert.ok(await page.isVisible(SEL.input), 'the chat stays usable');
    const cart = await page.locator('#cart-items').boundingBox();
    assert.ok(cart.y + 10 < now.y, `the cart is above the sheet: cart ${JSON.stringify(cart)}, sheet ${JSON.stringify(now)}`);
    await screenshot(page, 'visitor-phone-peek.png');
    /* the mark goes again */
    await page.waitForFunction(() => !document.querySelector('[data-gemini-changed]'), null, { timeout: 5000 });
    /* opening the chat again: the full sheet */
    await page.keyboard.press('Escape');
    await page.click('.gemini-chat__launcher');
    const again = await page.locator(FRAME).boundingBox();
    assert.ok(again.y <= 1, `full-screen again: ${JSON.stringify(again)}`);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('"Stopped." shows after the partial answer it stopped, not above it', async () => {
    await stack.mock.scenario('text', { say: 'One two three four five six seven eight nine', chunks: '3', gap: '3000' });
    const page = await openSheet();
    await ask(page, 'count slowly', { wait: false });
    await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent.trim() ?? '') !== '', SEL.lastAnswer, { timeout: 10000 });
    await page.click(SEL.stop);
    assert.equal(await waitDone(page, 5000), 'stopped');
    const order = await page.evaluate((sel) => {
      const answer = document.querySelector(sel);
      const note = [...document.querySelectorAll('.gemini-chat__compact li')].find((li) => !li.closest('[hidden]') && li.textContent.trim() === 'Stopped.');
      return note ? answer.compareDocumentPosition(note) : 0;
    }, SEL.lastAnswer);
    assert.ok(order & 4 /* FOLLOWING */, `the note follows the answer (position ${order})`);
    await screenshot(page, 'visitor-phone-stopped.png');
    await page.close();
  });

  it('"Usage" shows on a turn that succeeded, and not on a failed one', async () => {
    await stack.mock.scenario('text', { say: 'Hello.' });
    const page = await openSheet();
    assert.equal(await ask(page, 'hello'), 'response');
    assert.equal(await page.isVisible(USAGE), true, 'a succeeded turn has its usage');
    await stack.mock.scenario('error');
    assert.equal(await ask(page, 'hello again'), 'error');
    assert.equal(await page.isVisible(SEL.error), true);
    assert.equal(await page.isVisible(USAGE), false, 'no usage on the failed turn');
    await page.close();
  });
});
