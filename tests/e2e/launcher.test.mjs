/**
 * The widget on a desktop and on a phone: a launcher button in the corner
 * opens the chat as a panel (a full-screen sheet on a phone), keyboard
 * first: the launcher is a button with a name, opening puts the cursor in
 * the input, Esc closes and gives focus back to the launcher. The offline
 * demo model is announced as soon as the chat shows, before any message
 * (GET geminiAgent.status). Screenshots: tests/e2e/screenshots/launcher-*.png
 * (E2E_UPDATE_DOCS=1 also refreshes the README's docs/screenshots/phone.png).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ask, trackProblems, lastAnswer, launchBrowser, REPO, screenshot, SEL, SCREENSHOTS, startStack } from './stack.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const L = {
  launcher: '.gemini-chat__launcher',
  frame: '.gemini-chat__frame',
  close: '.gemini-chat [data-ref="closeChat"]',
};

/** A page with nothing of the agent but its one script tag. */
const ONE_TAG = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>One tag</title>
<style>body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: #eef2f6; }
main { max-width: 48rem; margin: 0 auto; padding: 2rem 1.5rem; }
article { background: #fff; border-radius: 12px; padding: 1rem 1.5rem; margin-bottom: 1rem; }
/* a page that stacks its own things high must not hide the widget */
.sticky { position: sticky; bottom: 0; z-index: 9999; background: #1f2937; color: #fff; padding: .75rem 1.5rem; }</style>
</head><body><main>
<h1>A page with one script tag</h1>
${'<article><p>Some page content. The assistant sits in a launcher button in the corner until you open it.</p></article>'.repeat(6)}
</main>
<div class="sticky">A sticky footer with z-index 9999</div>
<script type="module" src="/agent/index.js"></script>
</body></html>`;

let stack;

before(async () => {
  /* as `make demo` without a key: the configured model is the offline demo model */
  stack = await startStack({ model: 'offline-demo' });
});
after(async () => {
  await stack?.stop();
});

/** Open `path` (or the one-tag page) at `viewport`; the launcher or the input shows. */
async function open(viewport, path = '/') {
  const browser = await launchBrowser({ viewport });
  const page = trackProblems(await browser.newPage());
  if (path === 'one-tag') {
    await page.route(`${stack.url}/one-tag.html`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: ONE_TAG }));
    await page.goto(`${stack.url}/one-tag.html`);
  } else {
    await page.goto(`${stack.url}${path}`);
  }
  await page.waitForFunction(() => window.geminiAgent?.chat);
  return { browser, page };
}

const box = (page, sel) => page.locator(sel).first().boundingBox();
const focused = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el?.getAttribute('data-ref') || el?.className || el?.localName;
  });
/** The element at the centre of `sel` belongs to `sel`: nothing of the page is on top of it. */
const onTop = (page, sel) =>
  page.$eval(sel, (el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return el === hit || el.contains(hit);
  });
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function pressAndWait(page, key) {
  await page.evaluate(() => {
    window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
  });
  await page.keyboard.press(key);
}

describe('the launcher', () => {
  it('desktop, one script tag: the launcher opens a panel beside it; chat; Esc closes', async (t) => {
    const { browser, page } = await open(DESKTOP, 'one-tag');
    try {
      const launcher = page.getByRole('button', { name: 'Assistant', exact: true });
      await launcher.waitFor({ state: 'visible' });
      assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
      assert.equal(await page.isVisible(L.frame), false, 'closed until asked');
      /* fixed in the bottom-right corner, above the page's own sticky z-index 9999 footer */
      const lb = await box(page, L.launcher);
      assert.ok(DESKTOP.width - (lb.x + lb.width) <= 32 && DESKTOP.height - (lb.y + lb.height) <= 32, JSON.stringify(lb));
      assert.equal(await page.$eval(L.launcher, (el) => getComputedStyle(el).position), 'fixed');
      assert.ok(await onTop(page, L.launcher), 'the launcher is not under the page');
      await page.mouse.wheel(0, 2000);
      assert.deepEqual(await box(page, L.launcher), lb, 'it stays put when the page scrolls');
      await screenshot(page, 'launcher-desktop-closed.png');

      /* keyboard: Tab to the launcher, Enter opens, the cursor is in the input */
      await page.focus('body');
      for (let i = 0; i < 3 && (await focused(page)) !== 'openChat'; i++) await page.keyboard.press('Shift+Tab');
      assert.equal(await focused(page), 'openChat', 'the launcher is reachable with the keyboard');
      await page.keyboard.press('Enter');
      await page.waitForSelector(L.frame, { state: 'visible' });
      assert.equal(await launcher.getAttribute('aria-expanded'), 'true');
      assert.equal(await focused(page), 'messageInput');
      assert.match(await page.textContent(SEL.notice), /Offline demo model/, 'announced before any message');

      /* chat inside the panel */
      await page.keyboard.type('hello');
      await pressAndWait(page, 'Enter');
      assert.equal(await page.evaluate(() => window.__e2eDone), 'response');
      assert.match(await lastAnswer(page), /offline demo model/);
      const fb = await box(page, L.frame);
      assert.ok(!overlap(fb, await box(page, L.launcher)), 'the panel does not cover the launcher');
      assert.ok(fb.y >= 0 && fb.x >= 0 && fb.x + fb.width <= DESKTOP.width, `inside the window: ${JSON.stringify(fb)}`);
      assert.ok(await onTop(page, SEL.input), 'the input is not under the page');
      assert.ok(await onTop(page, SEL.lastAnswer));
      await screenshot(page, 'launcher-desktop-open.png');

      /* expanded works inside the panel, and the panel stays in the window */
      await page.click(SEL.toggle);
      assert.equal(await page.isVisible(SEL.messages), true);
      const eb = await box(page, L.frame);
      assert.ok(eb.y >= 0 && !overlap(eb, await box(page, L.launcher)), JSON.stringify(eb));
      await screenshot(page, 'launcher-desktop-expanded.png');
      await page.click(SEL.toggle);

      /* Esc closes, focus goes back to the launcher */
      await page.focus(SEL.input);
      await page.keyboard.press('Escape');
      assert.equal(await page.isVisible(L.frame), false);
      assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
      assert.equal(await focused(page), 'openChat');
      /* the launcher toggles with a click too */
      await launcher.click();
      assert.equal(await page.isVisible(L.frame), true);
      await launcher.click();
      assert.equal(await page.isVisible(L.frame), false);
      assert.deepEqual(page.problems, []);
    } finally {
      await browser.close();
    }
  });

  it('desktop, the demo page: the chat stays in its column, announced before any message', async () => {
    const { browser, page } = await open(DESKTOP);
    try {
      await page.waitForSelector(SEL.input, { state: 'visible' });
      assert.equal(await page.isVisible(L.launcher), false, 'no launcher where the page has room');
      assert.equal(await page.isVisible(L.close), false);
      await page.waitForSelector(SEL.notice, { state: 'visible' });
      assert.match(await page.textContent(SEL.notice), /Offline demo model — answers are scripted/);
      assert.equal(await page.evaluate(() => window.geminiAgent.chat.state.messages.length), 0);
      /* Esc in the input does not hide an in-place chat */
      await page.focus(SEL.input);
      await page.keyboard.press('Escape');
      assert.equal(await page.isVisible(SEL.input), true);
      assert.deepEqual(page.problems, []);
    } finally {
      await browser.close();
    }
  });

  it('phone, the demo page: a full-screen sheet; chat changes the cart; Esc closes', async () => {
    const { browser, page } = await open(PHONE);
    try {
      const launcher = page.getByRole('button', { name: 'Assistant', exact: true });
      await launcher.waitFor({ state: 'visible' });
      assert.equal(await page.isVisible(SEL.input), false);
      const lb = await box(page, L.launcher);
      assert.ok(PHONE.width - (lb.x + lb.width) <= 32 && PHONE.height - (lb.y + lb.height) <= 32, JSON.stringify(lb));
      assert.ok(lb.height >= 44, 'a thumb-sized target');
      assert.ok(await onTop(page, L.launcher));
      await screenshot(page, 'launcher-phone-closed.png');

      await launcher.click();
      await page.waitForSelector(L.frame, { state: 'visible' });
      assert.equal(await focused(page), 'messageInput');
      const fb = await box(page, L.frame);
      assert.deepEqual([fb.x, fb.y, fb.width, fb.height].map(Math.round), [0, 0, PHONE.width, PHONE.height], 'full screen');
      assert.ok(await onTop(page, SEL.input));
      const ib = await box(page, SEL.input);
      assert.ok(ib.y + ib.height > PHONE.height - 100, `the input is at the bottom: ${JSON.stringify(ib)}`);
      assert.ok(await page.isVisible(L.close));
      assert.match(await page.textContent(SEL.notice), /Offline demo model/);

      assert.equal(await ask(page, 'Remove the hub'), 'response');
      assert.match(await lastAnswer(page), /Removed USB-C Hub/);
      await screenshot(page, 'launcher-phone-open.png');

      /* Tab stays in the sheet */
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        assert.ok(await page.evaluate(() => document.activeElement.closest('.gemini-chat__frame') !== null), `Tab ${i + 1} left the sheet`);
      }

      /* expanded inside the sheet: the whole conversation, the input still at the bottom */
      await page.click(SEL.toggle);
      assert.equal(await page.isVisible(SEL.messages), true);
      const ib2 = await box(page, SEL.input);
      assert.ok(ib2.y + ib2.height > PHONE.height - 100);
      await screenshot(page, 'launcher-phone-expanded.png');
      await page.click(SEL.toggle);

      await page.focus(SEL.input);
      await page.keyboard.press('Escape');
      assert.equal(await page.isVisible(L.frame), false);
      assert.equal(await focused(page), 'openChat');
      const rows = await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.map((e) => e.dataset.id));
      assert.deepEqual(rows, ['item-1', 'item-3'], 'the page changed behind the sheet');
      await screenshot(page, 'launcher-phone-after.png');

      /* the close button in the sheet does the same */
      await launcher.click();
      await page.click(L.close);
      assert.equal(await page.isVisible(L.frame), false);
      assert.equal(await focused(page), 'openChat');
      assert.deepEqual(page.problems, []);

      /* the README's phone screenshot: refreshed with E2E_UPDATE_DOCS=1, or written when missing */
      const docs = join(REPO, 'docs/screenshots');
      if (process.env.E2E_UPDATE_DOCS === '1' || !existsSync(join(docs, 'phone.png'))) {
        mkdirSync(docs, { recursive: true });
        copyFileSync(join(SCREENSHOTS, 'launcher-phone-open.png'), join(docs, 'phone.png'));
      }
    } finally {
      await browser.close();
    }
  });
});
