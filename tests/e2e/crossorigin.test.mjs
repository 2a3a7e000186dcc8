/**
 * The widget on a page of another origin, in chromium, as
 * docs/deploy/static-site-host.md sets it up: its blocks are run as
 * written (tests/deploy/recipe.py), with the recipe's two example origins
 * replaced by this test's own (the values the recipe says are the site
 * owner's):
 *   https://www.example.org    → the static site: a plain HTTP server on
 *                                127.0.0.2 serving a folder (the demo cart
 *                                page with the recipe's embed snippet)
 *   https://agent.example.org  → nginx + responder + mock (stack.mjs) on
 *                                127.0.0.1, with the recipe's agent.yaml
 *                                lines and its nginx map line
 * Both ways of the recipe: (a) the page loads the widget from the
 * responder's server, (b) the widget copied beside the page (the recipe's
 * `cp`) with data-endpoint. In each: a chat whose answer is streamed
 * (NDJSON), a page action (a page tool call and its result sent back), an
 * approval of a server action. Then a page on an origin not in the list
 * (the same folder, another port): it reads no answer; with (b) the widget
 * says the server refused this origin; with (a) the widget's script itself
 * is refused. Last, the responder stopped behind nginx: the preflight gets
 * nginx's 502, which no preflight passes, but the widget reads the same 502
 * (the nginx map puts the origin on it) and says the service is not
 * running, not "check your connection".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { ask, lastAnswer, launchBrowser, REPO, SEL, startStack, trackProblems, waitDone } from './stack.mjs';

const RECIPE = join(REPO, 'docs/deploy/static-site-host.md');
/* the recipe's values for the site owner to replace */
const SITE_ORIGIN = 'https://www.example.org';
const AGENT_ORIGIN = 'https://agent.example.org';

let stack;
let browser;
let site; /* {dir, allowed: origin, other: origin, close()} */

/** The recipe's block NAME, as written. */
function block(name) {
  return execFileSync('python3', [join(REPO, 'tests/deploy/recipe.py'), RECIPE, name], { encoding: 'utf8' });
}

/** A recipe block with the owner's two values replaced by this test's. */
function ours(name) {
  return block(name).replaceAll(SITE_ORIGIN, site.allowed).replaceAll(AGENT_ORIGIN, stack.url);
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

/** A static host: GET of the files under `dir`, nothing else; on 127.0.0.2. */
async function staticServer(dir) {
  const srv = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    if (req.method !== 'GET' || !file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'text/plain' }).end(readFileSync(file));
  });
  await new Promise((r, j) => srv.once('error', j).listen(0, '127.0.0.2', r));
  return { origin: `http://127.0.0.2:${srv.address().port}`, close: () => new Promise((r) => srv.close(r)) };
}

/** The demo cart page with the widget's container and script replaced by `snippet`. */
function cartPage(snippet) {
  const html = readFileSync(join(REPO, 'www/index.html'), 'utf8');
  const div = '<div data-gemini-chat></div>';
  const script = '<script type="module" src="/agent/index.js"></script>';
  assert.ok(html.includes(div) && html.includes(script), 'www/index.html still has the widget where this test expects it');
  return html.replace(div, snippet.trim()).replace(script, '');
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ga-e2e-static-'));
  const allowed = await staticServer(dir);
  const other = await staticServer(dir);
  site = {
    dir,
    allowed: allowed.origin,
    other: other.origin,
    async close() {
      await allowed.close();
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  /* the responder allows the static site's origin, as the recipe says */
  const yaml = block('agent.yaml').replaceAll(SITE_ORIGIN, site.allowed);
  const mapLine = block('map').replaceAll(SITE_ORIGIN, site.allowed);
  stack = await startStack({
    yaml,
    nginxEdit: (conf) => {
      const open = 'map $http_origin $gemini_agent_cors {\n';
      assert.ok(conf.includes(open), 'the snippet has the map the recipe names');
      return conf.replace(open, `${open}${mapLine}`);
    },
  });
  /* (b): the recipe's copy, with GA and SITE set as it asks */
  execFileSync('sh', ['-euc', block('copy')], { env: { PATH: process.env.PATH, GA: REPO, SITE: dir } });
  copyFileSync(join(REPO, 'www/cart.jay-contract'), join(dir, 'cart.jay-contract'));
  writeFileSync(join(dir, 'a.html'), cartPage(ours('embed')));
  writeFileSync(join(dir, 'b.html'), cartPage(ours('embed-copy')));
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
  await site?.close();
});

/* the approval card, as approval.test.mjs finds it */
const CARD = '.gemini-chat [data-foreach="approvals"]:not([hidden]) > [data-role="approval"]';
const APPROVE = `${CARD} [data-ref="approveAction"]`;
const ARGS = { productId: 'p004', rating: 5, text: 'great' };

function reviews() {
  const file = join(stack.dataDir, 'shop-reviews.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Every chat request the page makes: [url, status, content-type]. */
function chatAnswers(page) {
  const seen = [];
  page.on('response', (r) => {
    if (/\/_jay\/actions\/geminiAgent\.(sendMessage|submitToolResults)$/.test(r.url()))
      seen.push([r.url(), r.status(), r.headers()['content-type'] ?? '']);
  });
  return seen;
}

async function open(origin, file) {
  const page = trackProblems(await browser.newPage());
  await page.goto(`${origin}/${file}`);
  await page.waitForSelector(SEL.input, { state: 'visible' });
  return page;
}

for (const [way, file] of [['a. the widget loaded from the responder', 'a.html'], ['b. the widget copied, data-endpoint', 'b.html']]) {
  describe(way, () => {
    it('a streamed chat and a page action, across the two origins', async () => {
      await stack.mock.scenario('demo');
      await stack.mock.reset();
      const page = await open(site.allowed, file);
      const answers = chatAnswers(page);
      const script = await page.evaluate(() => document.querySelector('script[type="module"][src*="agent/index.js"]').src);
      assert.equal(new URL(script).origin, file === 'a.html' ? stack.url : site.allowed, 'the widget came from where the recipe says');

      assert.equal(await ask(page, 'Hello'), 'response');
      assert.match(await lastAnswer(page), /Hello/);
      assert.deepEqual(answers.map(([u, s, t]) => [u, s, t.split(';')[0]]),
        [[`${stack.url}/_jay/actions/geminiAgent.sendMessage`, 200, 'application/x-ndjson']], 'streamed, from the responder');

      /* a page action: the model calls the page's remove tool, the widget clicks and sends the result back */
      const rows = () => page.$$eval('[data-foreach="items"] > [data-id]', (l) => l.map((e) => e.dataset.id));
      assert.deepEqual(await rows(), ['item-1', 'item-2', 'item-3']);
      assert.equal(await ask(page, 'Remove the hub'), 'response');
      assert.deepEqual(await rows(), ['item-1', 'item-3']);
      assert.match(await lastAnswer(page), /Removed USB-C Hub/);
      assert.deepEqual(answers.slice(1).map(([u, s]) => [u.replace(stack.url, ''), s]), [
        ['/_jay/actions/geminiAgent.sendMessage', 200],
        ['/_jay/actions/geminiAgent.submitToolResults', 200],
      ]);
      assert.equal((await stack.mock.requests()).length, 3);
      assert.deepEqual(page.problems, []);
      await page.close();
    });

    it('an approval of a server action', async () => {
      await stack.mock.scenario('server-call', { args: JSON.stringify(ARGS) });
      await stack.mock.reset();
      const before = reviews().length;
      const page = await open(site.allowed, file);
      assert.equal(await ask(page, 'Please add a 5 star review "great" to p004'), 'approval');
      await page.waitForSelector(APPROVE, { state: 'visible' });
      assert.equal(reviews().length, before, 'nothing before the approval');
      await page.evaluate(() => {
        window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
      });
      await page.click(APPROVE);
      assert.equal(await waitDone(page), 'response');
      assert.match(await lastAnswer(page), /^Done: /);
      assert.equal(reviews().length, before + 1, 'the review was added, once');
      assert.deepEqual(page.problems, []);
      await page.close();
      await stack.mock.scenario('demo');
    });
  });
}

describe('a page on an origin not in the list', () => {
  it('b. the copied widget reads no answer and says the server refused this origin', async () => {
    await stack.mock.scenario('demo');
    await stack.mock.reset();
    const page = await browser.newPage();
    await page.goto(`${site.other}/b.html`);
    await page.waitForSelector(SEL.input, { state: 'visible' });
    assert.equal(await ask(page, 'Hello'), 'error');
    const error = (await page.textContent(SEL.error)).trim();
    assert.match(error, new RegExp(`server \\(${stack.url.replace(/[.:/]/g, '\\$&')}\\) does not accept requests from this page ` +
      `\\(${site.other.replace(/[.:/]/g, '\\$&')}\\)`));
    assert.match(error, /http\.cors\.allowOrigins/);
    assert.doesNotMatch(error, /Check your connection/);
    assert.equal((await stack.mock.requests()).length, 0, 'nothing reached Gemini');
    /* the page itself cannot read the responder either */
    const read = await page.evaluate((u) => fetch(u).then((r) => `read ${r.status}`, (e) => e.name), `${stack.url}/_jay/actions/geminiAgent.status`);
    assert.equal(read, 'TypeError');
    await page.close();
  });

  it('a. the widget\'s script from the responder is refused: no widget', async () => {
    const page = await browser.newPage();
    const failed = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await page.goto(`${site.other}/a.html`);
    await page.waitForLoadState('load');
    await page.waitForTimeout(300);
    assert.equal(await page.$(SEL.widget), null, 'no widget');
    assert.ok(failed.includes(`${stack.url}/agent/index.js`), `the script was refused: ${failed}`);
    /* the same page on the listed origin has it (the difference is the origin alone) */
    const ok = await open(site.allowed, 'a.html');
    assert.ok(await ok.$(SEL.widget));
    await ok.close();
    await page.close();
  });
});

describe('the responder stopped, nginx still up', () => {
  it('the listed origin reads nginx\'s own 502 (the map), and the widget says the service is not running', async () => {
    const page = await open(site.allowed, 'b.html');
    /* the responder's master (first line of its pid file); its workers follow it */
    const master = Number(readFileSync(join(stack.dir, 'ga.pid'), 'utf8').split('\n')[0]);
    assert.ok(master > 0);
    process.kill(master, 'SIGTERM');
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${stack.url}/_jay/actions/geminiAgent.status`);
      if (res.status === 502) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(await ask(page, 'Hello'), 'error');
    const error = (await page.textContent(SEL.error)).trim();
    assert.match(error, /not running/, `the widget: ${error}`);
    assert.doesNotMatch(error, /allowOrigins|Check your connection/);
    await page.close();
  });
});
