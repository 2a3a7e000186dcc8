/**
 * The assistant page (www/assistant/, the run API) in chromium, through
 * the real stack: nginx + responder + the mock Gemini, signed in as `make
 * demo` does it (startStack({session}): a session secret, `gemini-agent
 * auth issue`, /assistant/demo-session.json for this machine only).
 *
 * Sign-in, a streamed answer (text before the end), attached context, an
 * approval approved in the page resuming the run in place, one rejected,
 * the offline demo model's own review request, pending approvals after a
 * reload, an approval already decided elsewhere (409), a lost session
 * (401), and the threads after a reload. What a visitor sees: no failed
 * request on load (the session check answers 200), one main landmark and
 * headings in order, cards with the action's title and labelled
 * arguments, "Approve always" secondary, steps that say how a decision
 * went, thread previews in plain text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, screenshot, startStack } from './stack.mjs';

let stack;
let browser;
let page;

const REVIEW = (rating, text) =>
  `[[mock:page-call tool=action_shop_addReview args='{"productId":"p004","rating":${rating},"text":"${text}"}']]`;

before(async () => {
  stack = await startStack({ session: 'demo' });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.failedLoads = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/^Failed to load resource/.test(m.text())) page.failedLoads.push(m.text());
    else page.problems.push(`console.error: ${m.text()}`);
  });
  /* expected: the tests' own 401 and 409 below (allowed there) */
  page.allowed = new Set();
  page.on('response', (r) => {
    const path = new URL(r.url()).pathname;
    if (r.status() === 401 && page.expect401 && path.startsWith('/api/agent/')) return;
    if (r.status() >= 400 && !page.allowed.has(`${r.status()} ${path}`) && !path.endsWith('/favicon.ico'))
      page.problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

/* ---- helpers ---- */

const api = async (method, path, body, token = stack.session.token) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
};

/** Send a message like a user (type, Enter) and wait until its answer is done or failed. */
async function send(text, { attach = false } = {}) {
  const before = await page.locator('.msg.assistant').count();
  if (attach !== await page.getByLabel('Attach this page').isChecked()) await page.getByLabel('Attach this page').click();
  await page.getByLabel('Message').fill(text);
  await page.getByLabel('Message').press('Enter');
  const turn = page.locator('.msg.assistant').nth(before);
  await turn.locator('.answer:not([data-state="streaming"])').first().waitFor({ timeout: 30000 });
  return turn;
}

const reviews = () => {
  const f = join(stack.dir, 'var', 'shop-reviews.jsonl');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
};

async function newThread() {
  await page.getByRole('button', { name: 'New thread' }).click();
  assert.equal(await page.locator('#chat-title').textContent(), 'New conversation');
  assert.equal(await page.locator('#conversation').textContent(), '');
}

/** The levels of the visible headings, in document order. */
const headingLevels = () => page.$$eval('h1, h2, h3, h4, h5, h6', (hs) =>
  hs.filter((e) => e.offsetParent !== null).map((e) => Number(e.tagName[1])));

/** One main landmark; the first heading an h1, and no level skipped on the way down. */
async function assertLandmarksAndHeadings(when) {
  assert.equal(await page.locator('main, [role="main"]').count(), 1, `${when}: one main landmark`);
  assert.equal(await page.locator('main').isVisible(), true, `${when}: the main landmark shows`);
  const levels = await headingLevels();
  assert.equal(levels[0], 1, `${when}: the first heading is an h1: ${levels}`);
  levels.forEach((l, i) => assert.ok(i === 0 || l <= levels[i - 1] + 1, `${when}: heading order ${levels}`));
}

describe('the assistant page (run API)', () => {
  it('signs in as the demo user', async () => {
    await page.goto(`${stack.url}/assistant/`);
    const signIn = page.getByRole('button', { name: 'Sign in as the demo user' });
    await signIn.waitFor();
    /* signed out, found without a failed request: no 401 in the console */
    assert.deepEqual(page.failedLoads, [], 'no failed request on load');
    assert.deepEqual(page.problems, []);
    await assertLandmarksAndHeadings('signed out');
    assert.match(await page.locator('#signin').textContent(), /real site signs you in\s+with its own login/);
    assert.equal(await page.locator('#app').isVisible(), false);
    await signIn.click();
    await page.locator('#app').waitFor();
    assert.equal(await page.locator('#who-text').textContent(), 'Signed in as demo');
    await page.waitForFunction(() => document.activeElement === document.getElementById('prompt'));
    assert.equal(await page.locator('#threads-empty').isVisible(), true);
    await assertLandmarksAndHeadings('signed in');
  });

  it('streams an answer: the text shows before the end, then the summary', async () => {
    await page.evaluate(() => {
      /* sample the answer's text until it is done */
      window.__seen = [];
      const look = () => {
        const seg = [...document.querySelectorAll('.msg.assistant .answer')].at(-1);
        const t = seg?.querySelector('.text')?.textContent ?? '';
        const status = seg?.querySelector('.status');
        const said = status && !status.hidden ? status.textContent : '';
        const entry = `${seg?.dataset.state}|${said}|${t}`;
        if (seg && window.__seen.at(-1) !== entry) window.__seen.push(entry);
      };
      window.__timer = setInterval(look, 10);
    });
    const turn = await send('say hello [[mock:text chunks=3 gap=400]]');
    const seen = await page.evaluate(() => {
      clearInterval(window.__timer);
      return window.__seen;
    });
    const final = 'Hello from the mock.';
    assert.equal((await turn.locator('.text').textContent()).trim(), final);
    const partial = seen.filter((e) => e.startsWith('streaming|') && e.split('|')[2] && e.split('|')[2] !== final);
    assert.ok(partial.length >= 1, `a partial text while streaming: ${JSON.stringify(seen)}`);
    assert.ok(seen.some((e) => e.startsWith('streaming|Thinking…|')), `a status line: ${JSON.stringify(seen)}`);
    assert.equal(await turn.locator('.answer').getAttribute('data-state'), 'done');
    /* the completed answer is announced; the new thread is current and listed */
    await page.waitForFunction(() => document.getElementById('announce').textContent === 'Assistant: Hello from the mock.');
    assert.match(await page.locator('#chat-title').textContent(), /say hello/);
    const current = page.locator('#thread-list button[aria-current="true"]');
    await current.waitFor();
    assert.match(await current.textContent(), /say hello/);
    assert.match(page.url(), /#t=/);
  });

  it('attaches this page when asked', async () => {
    await stack.mock.reset();
    const turn = await send('and once more', { attach: true });
    assert.equal((await turn.locator('.text').textContent()).trim(), 'Hello from the mock.');
    assert.match(await page.locator('.msg.user').last().textContent(), /Attached: Assistant — gemini-agent/);
    const sent = (await stack.mock.requests()).at(-1).body.systemInstruction.parts.map((p) => p.text).join('');
    assert.match(sent, /\[ATTACHED CONTEXT\]/);
    const ctx = JSON.parse(sent.slice(sent.indexOf('[ATTACHED CONTEXT]') + '[ATTACHED CONTEXT]'.length));
    assert.equal(ctx.length, 1);
    assert.equal(ctx[0].type, 'page');
    assert.equal(ctx[0].id, '/assistant/');
    assert.equal(ctx[0].title, 'Assistant — gemini-agent');
    assert.ok(ctx[0].snippet.startsWith('New conversation') || ctx[0].snippet.includes('say hello'), ctx[0].snippet);
    assert.ok([...ctx[0].snippet].length <= 300);
    /* the same thread: the two runs share it */
    assert.equal(await page.locator('#conversation .msg.user').count(), 2);
    await page.getByLabel('Attach this page').click();
  });

  it('an approval approved in the page resumes the run in place', async () => {
    await newThread();
    const turn = await send(`review the hub ${REVIEW(5, 'Great')}`);
    const card = turn.locator('.approval');
    await card.waitFor();
    assert.equal(await card.getAttribute('data-state'), 'pending');
    /* the action's title and labelled arguments, not its ids */
    assert.equal(await card.locator('h3').textContent(), 'Approval needed: Add review');
    assert.match(await card.locator('.reason').textContent(), /side effects needs the user's approval/);
    assert.deepEqual(await card.locator('dl.preview dt').allTextContents(), ['Product', 'Rating', 'Text']);
    assert.deepEqual(await card.locator('dl.preview dd').allTextContents(), ['p004', '5', 'Great']);
    assert.match(await turn.locator('.answer .text').first().textContent(), /needs your approval/);
    await assertLandmarksAndHeadings('a card');
    await page.waitForFunction(() => /^Approval needed: Add review/.test(document.getElementById('announce').textContent));
    /* "Approve always" is the lesser button: not filled like "Approve" */
    const look = (name) => card.getByRole('button', { name, exact: true }).evaluate((b) => {
      const cs = getComputedStyle(b);
      return { bg: cs.backgroundColor, weight: cs.fontWeight };
    });
    const [approve, always] = [await look('Approve'), await look('Approve always')];
    assert.notEqual(approve.bg, 'rgba(0, 0, 0, 0)');
    assert.equal(always.bg, 'rgba(0, 0, 0, 0)', `Approve always: ${JSON.stringify(always)}`);
    assert.ok(Number(always.weight) < Number(approve.weight), `${JSON.stringify([approve, always])}`);
    /* listed as waiting, too */
    await page.locator('#pending').waitFor();
    assert.equal(await page.locator('#pending-list li').count(), 1);
    assert.equal(await page.locator('#pending-list .tool').textContent(), 'Add review');
    assert.equal(reviews().includes('Great'), false, 'nothing ran before the approval');
    await screenshot(page, 'assistant-approval.png');

    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('.approval')?.dataset.state === 'approved');
    assert.equal(await card.locator('.outcome').textContent(), 'Approved: “Add review” ran.');
    assert.equal(await card.getByRole('button').count(), 0, 'the decision is made: no buttons left');
    /* the resumed answer, in the same turn, after the card */
    const resumed = turn.locator('.approval + .answer');
    await resumed.locator('xpath=self::*[@data-state="done"]').waitFor();
    const text = await resumed.locator('.text').textContent();
    assert.match(text, /"review":\{/);
    assert.match(text, /"text":"Great"/);
    assert.match(await resumed.locator('.steps').textContent(), /shop\.addReview\s+done/);
    assert.ok(reviews().includes('"text":"Great"'), 'the review was written');
    await page.waitForFunction(() => document.getElementById('pending').hidden);
    await page.waitForFunction(() => /^Assistant: Done:/.test(document.getElementById('announce').textContent));
    await screenshot(page, 'assistant-approved.png');
  });

  it('a rejected approval: the card says so, the run answers the refusal', async () => {
    await newThread();
    const turn = await send(`review the hub again ${REVIEW(2, 'Meh')}`);
    const card = turn.locator('.approval');
    await card.waitFor();
    await card.getByLabel('Feedback for the assistant (optional)').fill('not now');
    await card.getByRole('button', { name: 'Reject' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('.approval')].at(-1)?.dataset.state === 'rejected');
    assert.equal(await card.locator('.outcome').textContent(), 'Rejected: “Add review” did not run. Your note: “not now”.');
    const resumed = turn.locator('.approval + .answer');
    await resumed.locator('xpath=self::*[@data-state="done"]').waitFor();
    assert.match(await resumed.locator('.text').textContent(), /the user declined this action: not now/);
    assert.equal(await turn.locator('.steps li[data-tool="shop.addReview"][data-state="rejected"] .outcome').first().textContent(),
      'rejected: did not run');
    assert.doesNotMatch(await turn.textContent(), /waits for your approval/);
    assert.equal(reviews().includes('Meh'), false, 'the rejected review was never written');
  });

  it('the offline demo model asks to write a review; "Approve always" runs it', async () => {
    await newThread();
    const turn = await send('review the USB-C hub 4 stars: solid and small');
    const card = turn.locator('.approval');
    await card.waitFor();
    assert.match(await turn.locator('.steps').textContent(), /shop\.searchProducts.*done/s);
    assert.match(await turn.locator('.steps').first().textContent(), /shop\.addReview \{.*\} waits for your approval/);
    /* the product the search found is named beside its id */
    await card.locator('dl.preview dd', { hasText: 'USB-C Hub (p004)' }).waitFor();
    assert.deepEqual(await card.locator('dl.preview dd').allTextContents(), ['USB-C Hub (p004)', '4', 'solid and small']);
    await card.getByRole('button', { name: 'Approve always' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('.approval')].at(-1)?.dataset.state === 'approved');
    assert.equal(await card.locator('.outcome').textContent(), 'Approved, and always allowed from now on: “Add review” ran.');
    const resumed = turn.locator('.approval + .answer');
    await resumed.locator('xpath=self::*[@data-state="done"]').waitFor();
    /* the step that waited says how the decision went */
    const waited = turn.locator('.steps').first().locator('li[data-tool="shop.addReview"]');
    assert.equal(await waited.getAttribute('data-state'), 'ok');
    assert.equal(await waited.locator('.outcome').textContent(), 'approved, done');
    assert.doesNotMatch(await turn.textContent(), /waits for your approval/);
    assert.equal((await resumed.locator('.text').textContent()).trim(),
      'Done: your 4-star review of USB-C Hub is posted: “solid and small”.');
    assert.equal(await resumed.locator('.text strong').textContent(), 'USB-C Hub', 'Markdown rendered');
  });

  it('a pending approval survives a reload, and is decided from there', async () => {
    await newThread();
    await send(`review it later ${REVIEW(4, 'Later')}`);
    await page.reload();
    await page.locator('#app').waitFor();
    /* still signed in (this tab), the same thread open with its card */
    await page.waitForFunction(() => /review it later/.test(document.getElementById('chat-title').textContent));
    await page.locator('#pending').waitFor();
    assert.match(await page.locator('#pending-list').textContent(), /Add review.*Text: Later/s);
    const card = page.locator('.approval[data-state="pending"]');
    await card.waitFor();
    assert.equal(await card.count(), 1);
    /* after its run's message */
    assert.equal(await page.locator('.msg.user + .msg.assistant .approval').count(), 1);
    /* from the list: opens the thread and focuses the card */
    await newThread();
    await page.locator('#pending-list').getByRole('button', { name: 'Open' }).click();
    await page.waitForFunction(() => document.activeElement?.closest('.approval'));
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('.approval')?.dataset.state === 'approved');
    const resumed = page.locator('.approval + .answer');
    await resumed.locator('xpath=self::*[@data-state="done"]').waitFor();
    assert.match(await resumed.locator('.text').textContent(), /"text":"Later"/);
  });

  it('an approval decided elsewhere: "already decided" (409), nothing runs twice', async () => {
    await newThread();
    const turn = await send(`review it twice ${REVIEW(3, 'Twice')}`);
    const card = turn.locator('.approval');
    await card.waitFor();
    const id = await card.getAttribute('data-approval-id');
    const other = await api('POST', `/api/agent/approvals/${id}`, { decision: 'approve_once' });
    assert.equal(other.status, 200);
    page.allowed.add(`409 /api/agent/approvals/${id}`);
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('.approval')].at(-1)?.dataset.state === 'conflict');
    assert.match(await card.locator('.outcome').textContent(), /already decided/);
    assert.equal(reviews().split('"text":"Twice"').length - 1, 1, 'written once');
  });

  it('after a reload the threads are listed, newest first, and open', async () => {
    await page.reload();
    await page.locator('#app').waitFor();
    const items = page.locator('#thread-list > li');
    await items.first().waitFor();
    const titles = await page.locator('#thread-list .title').allTextContents();
    assert.equal(titles.length, 6, JSON.stringify(titles));
    assert.match(titles[0], /review it twice/);
    assert.match(titles.at(-1), /say hello/);
    /* previews are plain text: the demo model's "**USB-C Hub**" shows as "USB-C Hub" */
    const previews = await page.locator('#thread-list .preview').allTextContents();
    assert.ok(previews.some((p) => /review of USB-C Hub is posted/.test(p)), JSON.stringify(previews));
    assert.ok(previews.every((p) => !/\*\*|`|^#/.test(p)), JSON.stringify(previews));
    const listed = await api('GET', '/api/agent/threads');
    assert.deepEqual(titles, listed.body.threads.map((t) => t.title));
    await page.locator('#thread-list .title', { hasText: 'say hello' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#conversation .msg').length === 4);
    assert.deepEqual((await page.locator('#conversation .msg.assistant .text').allTextContents()).map((t) => t.trim()),
      ['Hello from the mock.', 'Hello from the mock.']);
    assert.match(await page.locator('#thread-list button[aria-current="true"]').textContent(), /say hello/);
    await screenshot(page, 'assistant-threads.png');
  });

  it('a lost session goes back to the sign-in, in plain words (401)', async () => {
    await page.evaluate(() => {
      const k = 'gemini-agent:assistant-session';
      const s = JSON.parse(sessionStorage.getItem(k));
      sessionStorage.setItem(k, JSON.stringify({ ...s, token: `${s.token.slice(0, -4)}AAAA` }));
    });
    page.expect401 = true;
    await page.reload();
    await page.locator('#signin').waitFor();
    assert.match(await page.locator('#signin-error').textContent(), /not signed in, or your session has ended/);
    assert.equal(await page.locator('#app').isVisible(), false);
    await page.getByRole('button', { name: 'Sign in as the demo user' }).click();
    await page.locator('#app').waitFor();
    assert.equal(await page.locator('#thread-list > li').count(), 6);
    page.expect401 = false;
  });

  it('had no page errors', () => {
    assert.deepEqual(page.problems, []);
  });
});
