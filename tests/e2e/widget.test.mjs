/**
 * The chat widget itself: compact and expanded modes (with the screenshots
 * the README shows), the Stop button, the model's Markdown rendered inert,
 * and a server error shown in plain words with a working Retry.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ask, lastAnswer, launchBrowser, openPage, REPO, screenshot, SEL, startStack, waitDone } from './stack.mjs';

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

const visible = (page, sel) => page.isVisible(sel);

describe('the chat widget', () => {
  it('shows the last exchange in compact mode and the whole history expanded (screenshots)', async () => {
    await stack.mock.scenario('demo');
    const page = await openPage(browser, stack);
    /* compact by default */
    assert.equal(await page.getAttribute(SEL.widget, 'data-expanded'), 'false');
    assert.equal(await visible(page, SEL.messages), false);

    await ask(page, 'Remove the hub');
    await ask(page, 'add a desk lamp for 19.99');
    /* compact: the input, the last question and its answer only */
    assert.equal(await visible(page, SEL.messages), false);
    assert.equal(await visible(page, SEL.input), true);
    assert.equal((await page.textContent(SEL.lastQuestion)).trim(), 'add a desk lamp for 19.99');
    assert.match(await lastAnswer(page), /Added Desk Lamp/);
    const compactText = await page.innerText(SEL.widget);
    assert.ok(!compactText.includes('Remove the hub'), 'the earlier question is not shown in compact mode');
    await screenshot(page, 'compact.png');
    await screenshot(page.locator(SEL.widget), 'widget-compact.png');

    /* expanded: every message, scrollable */
    await page.click(SEL.toggle);
    assert.equal(await page.getAttribute(SEL.widget, 'data-expanded'), 'true');
    assert.equal(await page.getAttribute(SEL.toggle, 'aria-expanded'), 'true');
    assert.equal(await visible(page, SEL.messages), true);
    const users = await page.$$eval(`${SEL.messages} > [data-role="user"]`, (l) => l.map((e) => e.textContent.trim()));
    assert.equal(users.length, 2);
    assert.match(users[0], /Remove the hub/);
    const answers = await page.$$eval(`${SEL.messages} > [data-role="assistant"]`, (l) => l.map((e) => e.textContent));
    assert.ok(answers.some((a) => /Removed USB-C Hub/.test(a)) && answers.some((a) => /Added Desk Lamp/.test(a)));
    await screenshot(page, 'expanded.png');
    await screenshot(page.locator(SEL.widget), 'widget-expanded.png');

    /* and back */
    await page.click(SEL.toggle);
    assert.equal(await visible(page, SEL.messages), false);
    await page.close();

    /* The README's two screenshots: refreshed with E2E_UPDATE_DOCS=1, or
     * written when missing, so an ordinary run leaves the checkout alone. */
    const docs = join(REPO, 'docs/screenshots');
    for (const name of ['compact.png', 'expanded.png']) {
      if (process.env.E2E_UPDATE_DOCS === '1' || !existsSync(join(docs, name))) {
        mkdirSync(docs, { recursive: true });
        copyFileSync(join(REPO, 'tests/e2e/screenshots', name), join(docs, name));
      }
    }
  });

  it('Enter sends, Shift+Enter adds a line, a blank message is not sent', async () => {
    await stack.mock.scenario('demo');
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    await page.fill(SEL.input, '   ');
    await page.press(SEL.input, 'Enter');
    assert.equal(await page.isDisabled(SEL.send), true);
    await page.fill(SEL.input, 'hello');
    await page.press(SEL.input, 'Shift+Enter');
    await page.type(SEL.input, 'there');
    assert.equal(await page.inputValue(SEL.input), 'hello\nthere');
    assert.equal((await stack.mock.requests()).length, 0);
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(SEL.send);
    assert.equal(await waitDone(page), 'response');
    assert.equal(await page.inputValue(SEL.input), '');
    assert.match(await lastAnswer(page), /offline demo model/);
    assert.equal((await stack.mock.requests()).length, 1);
    await page.close();
  });

  it('Stop aborts the request in flight and the chat stays usable', async () => {
    await stack.mock.scenario('slow', { ms: '20000' });
    const page = await openPage(browser, stack);
    try {
      await ask(page, 'remove the hub', { wait: false });
      await page.waitForSelector(SEL.stop, { state: 'visible' });
      assert.equal(await page.getAttribute(SEL.widget, 'data-loading'), 'true');
      assert.equal(await page.isDisabled(SEL.send), true);
      const t0 = Date.now();
      await page.click(SEL.stop);
      assert.equal(await waitDone(page, 5000), 'stopped');
      assert.ok(Date.now() - t0 < 3000, 'stopped at once, not after the slow answer');
      assert.equal(await page.getAttribute(SEL.widget, 'data-loading'), 'false');
      assert.equal(await visible(page, SEL.stop), false);
      assert.match(await page.innerText(SEL.widget), /Stopped\./);
      /* nothing happened to the page */
      assert.equal(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.length), 3);
    } finally {
      await stack.mock.scenario('demo');
    }
    assert.equal(await ask(page, 'remove the hub'), 'response');
    assert.match(await lastAnswer(page), /Removed USB-C Hub/);
    await page.close();
  });

  it("renders the model's Markdown inert: no script, no handler, no javascript: link", async () => {
    const say = [
      'Here is **bold**, *emphasis* and a list:\n\n- one\n- two',
      '<script>window.__pwned = "script"; alert("script")</script>',
      '<img src="x" onerror="window.__pwned = \'img\'; alert(\'img\')">',
      '![remote](http://198.51.100.7/pixel.png)',
      '[click me](javascript:window.__pwned=\'link\';alert(\'link\'))',
      '<a href="javascript:alert(\'raw\')" id="raw-link">raw link</a>',
      '<iframe src="javascript:alert(\'frame\')"></iframe>',
      '<svg onload="alert(\'svg\')"></svg>',
      '[safe](https://example.com/docs)',
    ].join('\n\n'); /* blank lines: each piece its own block, so the links are Markdown links */
    await stack.mock.scenario('text', { say });
    const page = await openPage(browser, stack);
    const dialogs = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    const offsite = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.url) && !r.url().startsWith('data:')) offsite.push(r.url());
    });
    try {
      assert.equal(await ask(page, 'show me some markdown'), 'response');
    } finally {
      await stack.mock.scenario('demo');
    }
    const answer = page.locator(SEL.lastAnswer);
    /* Markdown works */
    assert.equal(await answer.locator('strong').first().textContent(), 'bold');
    assert.equal(await answer.locator('li').count(), 2);
    /* nothing active made it into the widget */
    const widget = page.locator(SEL.widget);
    for (const tag of ['script', 'iframe', 'svg', 'img', 'object', 'embed'])
      assert.equal(await widget.locator(tag).count(), 0, `<${tag}> in the widget`);
    const attrs = await page.$$eval(`${SEL.widget} *`, (els) =>
      els.flatMap((e) => [...e.attributes].map((a) => `${a.name}=${a.value}`)).filter((a) => /^on/i.test(a) || /javascript:/i.test(a)));
    assert.deepEqual(attrs, []);
    const hrefs = await answer.locator('a').evaluateAll((l) => l.map((a) => a.getAttribute('href')));
    assert.ok(hrefs.includes('https://example.com/docs'), `hrefs: ${hrefs}`);
    for (const h of hrefs) assert.ok(h === null || /^(https?:|mailto:)/.test(h), `unsafe href ${h}`);
    /* the raw HTML is shown as text */
    assert.match(await answer.textContent(), /<script>window\.__pwned/);
    /* clicking the former javascript: link runs nothing */
    assert.equal(await answer.locator('a', { hasText: 'click me' }).count(), 1);
    await answer.locator('a', { hasText: 'click me' }).click();
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(offsite, [], 'no image or other resource loaded from another host');
    await page.close();
  });

  it('shows a server error in plain words, and Retry sends it again', async () => {
    await stack.mock.scenario('error', { status: '400' });
    const page = await openPage(browser, stack);
    try {
      assert.equal(await ask(page, 'remove the hub'), 'error');
      await page.waitForSelector(SEL.error, { state: 'visible' });
      const text = await page.textContent(SEL.error);
      assert.match(text, /could not answer/i);
      assert.ok(!/[{}]/.test(text), `plain words, not JSON: ${text}`);
      assert.equal(await visible(page, SEL.retry), true);
    } finally {
      await stack.mock.scenario('demo');
    }
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(SEL.retry);
    assert.equal(await waitDone(page), 'response');
    assert.match(await lastAnswer(page), /Removed USB-C Hub/);
    assert.equal(await visible(page, SEL.error), false);
    await page.close();
  });
});
