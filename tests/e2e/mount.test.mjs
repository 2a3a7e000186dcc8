/**
 * Putting the agent into pages other than the demo:
 *  - the snippet of README "Adding the agent to a page", copied from the
 *    README when the test runs, served as a page of its own: it loads
 *    without errors and its view state reaches the model (so the README
 *    cannot drift from what works);
 *  - tests/e2e/fixtures/plain.html, a page with no data-ref at all: its
 *    buttons, links, fields, select and checkbox become tools named as the
 *    docs/widget.md says, the model's calls act on the page, and what is under
 *    data-agent="off" never leaves it.
 * Both are served by the stack's nginx from a copy of www/ (the repo's www/
 * is not touched).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ask, declaredNames, E2E_DIR, lastAnswer, launchBrowser, openPage, REPO, sentPageState, startStack } from './stack.mjs';

/** The first ```html block of the README section "Adding the agent to a page", verbatim. */
export function readmeSnippet() {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Adding the agent to a page');
  assert.ok(start >= 0, 'README has the section "Adding the agent to a page"');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const m = /```html\n([\s\S]*?)\n```/.exec(section);
  assert.ok(m, 'the section has an html snippet');
  return m[1];
}

let www;
let stack;
let browser;

before(async () => {
  www = mkdtempSync(join(tmpdir(), 'ga-e2e-www-'));
  cpSync(join(REPO, 'www'), www, { recursive: true });
  writeFileSync(
    join(www, 'readme-snippet.html'),
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>The README snippet</title>\n' +
      `<link rel="icon" href="data:,">\n</head>\n<body>\n${readmeSnippet()}\n</body>\n</html>\n`,
  );
  cpSync(join(E2E_DIR, 'fixtures/plain.html'), join(www, 'plain.html'));
  stack = await startStack({ www });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
  if (www) rmSync(www, { recursive: true, force: true });
});

const decl = (rec, name) => rec.body.tools.flatMap((t) => t.functionDeclarations).find((d) => d.name === name);

describe('the README snippet, verbatim', () => {
  it('loads without errors and its view state reaches the model', async () => {
    await stack.mock.scenario('demo');
    await stack.mock.reset();
    const page = await openPage(browser, stack, '/readme-snippet.html');
    const viewState = await page.evaluate(() => window.pageAgent.getPageState().viewState);
    assert.notDeepEqual(viewState, {}, 'the view state published before the agent loaded was applied');
    /* every item of the snippet's list is in it */
    const ids = await page.$$eval(':not([data-agent="off"]) [data-foreach] > [data-id]', (l) =>
      l.filter((e) => !e.closest('[data-agent="off"]')).map((e) => e.dataset.id));
    assert.ok(ids.length > 0);
    for (const id of ids) assert.ok(JSON.stringify(viewState).includes(`"${id}"`), `${id} in ${JSON.stringify(viewState)}`);

    assert.equal(await ask(page, 'what is in my cart?'), 'response');
    const [rec] = await stack.mock.requests();
    const sent = sentPageState(rec);
    assert.deepEqual(sent.viewState, viewState, 'the server got the view state');
    assert.deepEqual(sent.lists.items.map((i) => i.id), ids);
    /* the offline demo model read it: it names what the view state holds */
    const answer = await lastAnswer(page);
    for (const item of viewState.items) assert.match(answer, new RegExp(item.name));
    /* the marked elements are tools; what is under data-agent="off" is not */
    const names = declaredNames(rec);
    for (const want of ['fill-name-input', 'click-add-btn', 'click-remove-btn']) assert.ok(names.includes(want), `${want}: ${names}`);
    assert.match(decl(rec, 'click-add-btn').description, /Add the item named in nameInput/);
    assert.ok(!JSON.stringify(rec.body).includes('"card"'), 'the data-agent="off" field stays on the page');
    assert.deepEqual(page.problems, [], 'no "pageAgent is not defined", no failed load');
    await page.close();
  });
});

describe('a page without data-ref (tests/e2e/fixtures/plain.html)', () => {
  it('offers its controls as tools named from their name, label or id', async () => {
    await stack.mock.scenario('text', { say: 'Hello.' });
    await stack.mock.reset();
    const page = await openPage(browser, stack, '/plain.html');
    assert.equal(await ask(page, 'hello'), 'response');
    const [rec] = await stack.mock.requests();
    const names = declaredNames(rec).filter((n) => !n.startsWith('action_'));
    assert.deepEqual(names.sort(), [
      'click-close-the-banner', // <button title="Close the banner">×</button>: the title names it
      'click-done', // the ✓ buttons of the data-foreach list: aria-label="Done", one tool for both
      'click-newsletter', // <a href="#news">Newsletter</a>
      'click-subscribe', // <button>Subscribe</button>
      'click-to-do', // <a href="#todo">To do</a>
      'fill-email', // <input name="email">
      'fill-input',
      'select-frequency', // <select name="frequency">
      'toggle-terms', // <input type="checkbox" name="terms">
      'trigger-interaction',
    ]);
    assert.equal(
      decl(rec, 'click-subscribe').description,
      'Sign up for the newsletter with the email above (accept the terms first). Label: "Subscribe".',
    );
    assert.equal(decl(rec, 'fill-email').description, 'Fill the Email field with text (replaces what is there).');
    assert.match(decl(rec, 'select-frequency').description, /Options: weekly = Every week, monthly = Every month\./);
    assert.deepEqual(decl(rec, 'select-frequency').parametersJsonSchema.properties.value.enum, ['weekly', 'monthly']);
    assert.match(decl(rec, 'toggle-terms').description, /Label: "I accept the terms"/);
    assert.equal(decl(rec, 'click-done').parametersJsonSchema.properties.coordinate.type, 'string');

    const state = sentPageState(rec);
    assert.deepEqual(state.fields, { frequency: 'weekly', terms: false });
    assert.deepEqual(state.lists, {
      /* their labels are the view state's (said once) */
      todos: [
        { id: 't1', refs: ['done'] },
        { id: 't2', refs: ['done'] },
      ],
    });
    assert.deepEqual(state.viewState.todos.map((t) => [t.id, t.title ?? t.label ?? t.text]), [['t1', 'Buy milk'], ['t2', 'Call Anna']]);
    const raw = JSON.stringify(rec.body);
    for (const secret of ['4111111111111111', '"card"', 'Card']) assert.ok(!raw.includes(secret), secret);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('acts on them when the model calls the tools', async () => {
    const page = await openPage(browser, stack, '/plain.html');
    const call = async (tool, args) => {
      await stack.mock.scenario('page-call', { tool, args: JSON.stringify(args) });
      assert.equal(await ask(page, `use ${tool}`), 'response');
      assert.doesNotMatch(await lastAnswer(page), /"ok":\s*false|error/i, `${tool} ${JSON.stringify(args)}`);
    };
    await call('fill-email', { value: 'ann@example.com' });
    await call('select-frequency', { value: 'monthly' });
    await call('toggle-terms', { value: 'true' });
    await call('click-subscribe', {});
    assert.equal(await page.textContent('#status'), 'Subscribed ann@example.com (monthly).');
    await call('click-done', { coordinate: 't1/done' });
    assert.deepEqual(await page.$$eval('[data-foreach="todos"] > li', (l) => l.map((e) => e.dataset.id)), ['t2']);
    await call('click-close-the-banner', {});
    assert.equal(await page.isHidden('#banner'), true);

    /* the page's updateViewState calls reached the model too */
    await stack.mock.scenario('text', { say: 'ok' });
    await stack.mock.reset();
    await ask(page, 'and now?');
    const [rec] = await stack.mock.requests();
    const state = sentPageState(rec);
    assert.equal(state.viewState.subscribed, 'ann@example.com');
    assert.deepEqual(state.viewState.todos, [{ id: 't2', text: 'Call Anna' }]);
    assert.deepEqual(state.fields, { email: 'ann@example.com', frequency: 'monthly', terms: true });
    assert.ok(!declaredNames(rec).includes('click-close-the-banner'), 'the hidden banner\'s button is gone');
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
