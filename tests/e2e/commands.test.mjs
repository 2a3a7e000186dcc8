/**
 * User commands in the widget, in chromium (docs/widget.md "Commands"): a stack whose
 * agent.yaml loads the out-of-tree example plugin (tests/plugins/hello,
 * built here into a temp folder as t_plugins.sh does), with its command
 * `greeting [ARG]` shared with the model and greeting "Howdy".
 *
 *  - Typing `/` offers greeting with its description (a listbox the input
 *    points into); the keyboard picks it; sending `/greeting at noon` shows
 *    "Howdy (at noon)" as a command's output, without a Gemini call.
 *  - The next message carries that output to the model: the mock's
 *    /__mock/requests show it in the contents Gemini received.
 *  - On a phone the list fits the full-screen sheet.
 *
 * Screenshots: commands-list.png, commands-output.png, commands-expanded.png,
 * commands-narrow.png.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ask, conversationOf, launchBrowser, openPage, REPO, screenshot, SEL, startStack, waitDone } from './stack.mjs';

let stack;
let browser;
let plugins;

const LIST = '.gemini-chat .gemini-chat__commands';
const OPTION = `${LIST} [role="option"]`;
const OUTPUT = '.gemini-chat [data-foreach="activity"] > [data-role="command"]';

before(async () => {
  plugins = mkdtempSync(join(tmpdir(), 'ga-e2e-plugins-'));
  execFileSync('make', ['-s', '-C', join(REPO, 'tests/plugins'), `OUT=${plugins}`, `${plugins}/hello.so`], { stdio: 'pipe' });
  stack = await startStack({
    scenario: "text say='Noted.'",
    yaml: `plugins: {dirs: ['${plugins}'], expose: all, config: {hello: {greeting: Howdy}}}`,
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
  if (plugins) rmSync(plugins, { recursive: true, force: true });
});

/** The list as the visitor sees it: the options' names and descriptions, and which one is active. */
const shown = (page) =>
  page.$$eval(`${LIST}:not([hidden]) [role="option"]`, (opts) =>
    opts.map((o) => ({
      name: o.querySelector('.gemini-chat__command-name').textContent,
      desc: o.querySelector('.gemini-chat__command-desc').textContent,
      selected: o.getAttribute('aria-selected') === 'true',
      id: o.id,
    })));

describe('user commands in the widget', () => {
  it('`/` offers greeting; the keyboard picks it; its output is shown without the model; the next message carries it', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    await page.focus(SEL.input);
    await page.keyboard.type('/');
    await page.waitForSelector(`${LIST}:not([hidden])`);
    const list = await shown(page);
    assert.deepEqual(list.map((o) => [o.name, o.desc, o.selected]), [
      ['/forget', 'Forget what hello knows (a side effect)', true],
      ['/greeting', 'Say the configured greeting', false],
    ]);
    assert.equal(await page.getAttribute(SEL.input, 'aria-activedescendant'), list[0].id);
    assert.equal(await page.getAttribute(LIST, 'role'), 'listbox');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-ref')), 'messageInput');
    await page.keyboard.type('gre');
    assert.deepEqual((await shown(page)).map((o) => [o.name, o.selected]), [['/greeting', true]]);
    await screenshot(page.locator(SEL.widget), 'commands-list.png');

    /* Enter picks (the list's key, not a send) */
    await page.keyboard.press('Enter');
    assert.equal(await page.inputValue(SEL.input), '/greeting ');
    assert.equal(await page.isVisible(LIST), false);
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.keyboard.type('at noon');
    await page.keyboard.press('Enter');
    assert.equal(await waitDone(page), 'command');
    await page.waitForSelector(OUTPUT);
    const out = await page.$eval(OUTPUT, (el) => ({
      title: el.querySelector('.gemini-chat__command-title').textContent,
      text: el.querySelector('.gemini-chat__content').textContent,
    }));
    assert.match(out.title, /^Output of \/greeting/);
    assert.equal(out.text, 'Howdy (at noon)');
    assert.equal((await page.textContent(SEL.lastQuestion)).trim(), '/greeting at noon');
    assert.equal((await stack.mock.requests()).length, 0, 'no Gemini call for a command');
    await screenshot(page.locator(SEL.widget), 'commands-output.png');
    /* the whole conversation shows it too, marked as a command's output */
    await page.click(SEL.toggle);
    const full = await page.$eval(`${SEL.messages} > [data-role="command"]`, (el) => el.textContent);
    assert.match(full, /Output of \/greeting[\s\S]*Howdy \(at noon\)/);
    await screenshot(page.locator(SEL.widget), 'commands-expanded.png');
    await page.click(SEL.toggle);

    /* shared with the model: in the contents of the next request */
    assert.equal(await ask(page, 'what did the command say?'), 'response');
    const reqs = await stack.mock.requests();
    assert.ok(reqs.length >= 1);
    const texts = conversationOf(reqs.at(-1)).flatMap((c) => (c.parts ?? []).map((p) => [c.role, p.text]));
    const at = texts.findIndex(([role, text]) => role === 'user' && text === 'Output of /greeting:\nHowdy (at noon)');
    assert.ok(at >= 0, `the shared output is in the contents: ${JSON.stringify(texts)}`);
    assert.ok(texts.slice(at + 1).some(([role, text]) => role === 'user' && /what did the command say\?/.test(text ?? '')),
      'the visitor\'s message follows it');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('on a phone, the list fits the sheet and a click picks', async () => {
    const page = await openPage(browser, stack);
    await page.setViewportSize({ width: 390, height: 780 });
    await page.evaluate(() => sessionStorage.clear());
    await page.reload();
    await page.click('.gemini-chat [data-ref="openChat"]');
    await page.waitForSelector(SEL.input, { state: 'visible' });
    await page.focus(SEL.input);
    await page.keyboard.type('/');
    await page.waitForSelector(`${LIST}:not([hidden])`);
    const box = await page.locator(LIST).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `the list fits the width: ${JSON.stringify(box)}`);
    assert.ok(box.y >= 0, 'the list is on screen');
    await screenshot(page, 'commands-narrow.png');
    await page.click(`${OPTION}[data-command="greeting"]`);
    assert.equal(await page.inputValue(SEL.input), '/greeting ');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-ref')), 'messageInput');
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
