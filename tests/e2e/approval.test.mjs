/**
 * Approvals in chromium (issue 12 §1 and §2, "approve and reject in the
 * widget"): through nginx + responder + the mock Gemini's `server-call`
 * scenario, whose model calls action_shop_addReview {"productId":"p004",
 * "rating":5,"text":"great"} and then answers "Done: <responses>". The
 * server runs that action (sideEffects: true) only with the visitor's
 * approval: the widget shows the card, and the shop's reviews file in the
 * stack's data dir says whether the review was really added.
 *
 *  - Approve (with the keyboard): one line in the reviews file, the "Done"
 *    answer shown, the card says Approved and has no buttons.
 *  - Reject: no line, an answer still comes.
 *  - A new message instead of a decision: the card is marked not decided,
 *    nothing is added, the conversation goes on.
 *  - A ticket changed in sessionStorage: 403 approval_invalid in plain
 *    words, nothing added. A conversation saved without its signatures:
 *    400 history_tampered in plain words.
 *
 * Screenshots: approval-card.png (the card, wide), approval-card-narrow.png
 * (a phone: the full-screen sheet), approval-approved.png.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ask, conversationOf, lastAnswer, launchBrowser, openPage, screenshot, SEL, startStack, waitDone } from './stack.mjs';

let stack;
let browser;

/* the review is for a product the demo shop has (actions/shop/products.json) */
const ARGS = { productId: 'p004', rating: 5, text: 'great' };

before(async () => {
  stack = await startStack({ scenario: `server-call args='${JSON.stringify(ARGS)}'` });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/* compact mode's card (its list is shown before or after the answer: the visible one) */
const CARD = '.gemini-chat [data-foreach="approvals"]:not([hidden]) > [data-role="approval"]';
const APPROVE = `${CARD} [data-ref="approveAction"]`;
const REJECT = `${CARD} [data-ref="rejectAction"]`;

/** The reviews the shop wrote (actions/shop/shop.c: <dataDir>/shop-reviews.jsonl), one object a line. */
function reviews() {
  const file = join(stack.dataDir, 'shop-reviews.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** What the card shows: its status, the action's title, the preview, the arguments (labelled), the visible buttons and decision. */
const card = (page, sel = CARD) =>
  page.$eval(sel, (el) => {
    const seen = (e) => e && !e.closest('[hidden]');
    return {
      status: el.dataset.status,
      title: el.querySelector('[data-bind="actionTitle"]').textContent.trim(),
      preview: el.querySelector('[data-bind="content"]').textContent.trim(),
      args: [...el.querySelectorAll('[data-foreach="args"] > *')].map((a) => [
        a.querySelector('[data-bind="label"]').textContent,
        a.querySelector('[data-bind="value"]').textContent,
      ]),
      buttons: [...el.querySelectorAll('button')].filter(seen).map((b) => b.textContent.trim()),
      decision: [...el.querySelectorAll('.gemini-chat__decision')].filter(seen).map((d) => d.textContent.trim()),
    };
  });

/** The response the server gave the model for the addReview call, in the last Gemini request. */
async function reviewResponse() {
  const sent = conversationOf((await stack.mock.requests()).at(-1));
  const parts = sent.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse?.name === 'action_shop_addReview');
  return parts.at(-1)?.functionResponse.response;
}

describe('approvals in the widget', () => {
  it('Approve, with the keyboard: the review is added once and the answer is shown', async () => {
    await stack.mock.reset();
    const before = reviews().length;
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'Please add a 5 star review "great" to p004'), 'approval');

    /* the card: what will happen, the arguments, Approve and Reject; nothing done yet */
    await page.waitForSelector(APPROVE, { state: 'visible' });
    const shown = await card(page);
    assert.equal(shown.status, 'pending');
    assert.ok(shown.preview.length > 10, `preview: ${shown.preview}`);
    assert.equal(shown.title, 'Add review', 'the action in words, not shop.addReview');
    assert.deepEqual(shown.args, [['Product', 'p004'], ['Rating', '5'], ['Text', 'great']], 'labels, not productId');
    assert.deepEqual(shown.buttons, ['Approve', 'Reject']);
    assert.equal(await page.getAttribute(SEL.widget, 'data-loading'), 'false', 'no spinner while the visitor decides');
    assert.equal(await page.isEnabled(SEL.input), true, 'the input stays usable');
    assert.equal(reviews().length, before, 'nothing is added before the visitor approves');
    assert.equal((await stack.mock.requests()).length, 1);
    await screenshot(page.locator(SEL.widget), 'approval-card.png');

    /* keyboard only: from the input, Shift+Tab reaches the card's buttons, with a clear focus ring */
    let onApprove = false;
    for (let i = 0; i < 8 && !onApprove; i++) {
      await page.keyboard.press('Shift+Tab');
      onApprove = await page.evaluate(() => document.activeElement?.getAttribute('data-ref') === 'approveAction');
    }
    assert.ok(onApprove, 'Approve is reachable with the keyboard');
    const ring = await page.evaluate(() => {
      const st = getComputedStyle(document.activeElement);
      return { style: st.outlineStyle, width: parseFloat(st.outlineWidth) };
    });
    assert.equal(ring.style, 'solid');
    assert.ok(ring.width >= 2, `outline ${ring.width}px`);
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.keyboard.press('Enter');
    assert.equal(await waitDone(page), 'response');

    assert.match(await lastAnswer(page), /^Done: /);
    const added = reviews();
    assert.equal(added.length, before + 1, 'one review, once');
    assert.deepEqual([added.at(-1).productId, added.at(-1).rating, added.at(-1).text], ['p004', 5, 'great']);
    const response = await reviewResponse();
    assert.equal(response?.result?.ok ?? response?.output?.ok, true, `the model was told it was done: ${JSON.stringify(response)}`);
    const decided = await card(page);
    assert.equal(decided.status, 'approved');
    assert.deepEqual(decided.buttons, [], 'no buttons after the decision');
    assert.deepEqual(decided.decision, ['Approved']);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-ref')), 'messageInput', 'focus back in the input');
    await screenshot(page.locator(SEL.widget), 'approval-approved.png');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('Reject: nothing is added, and the model answers', async () => {
    await stack.mock.reset();
    const before = reviews().length;
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'Review p1 please'), 'approval');
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(REJECT);
    assert.equal(await waitDone(page), 'response');
    assert.ok((await lastAnswer(page)).length > 0, 'an answer appears');
    assert.equal(reviews().length, before, 'no review was added');
    const response = await reviewResponse();
    assert.ok(response && response.result === undefined && response.error !== undefined, `the call was answered as not done: ${JSON.stringify(response)}`);
    const decided = await card(page);
    assert.equal(decided.status, 'declined');
    assert.deepEqual(decided.buttons, []);
    assert.deepEqual(decided.decision, ['Declined']);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('a new message instead of a decision: the card is marked not decided, nothing is added', async () => {
    await stack.mock.reset();
    const before = reviews().length;
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'Review p1'), 'approval');
    /* the model of this scenario asks again: a new card for the new message */
    assert.equal(await ask(page, 'Hmm, tell me first what you will write'), 'approval');
    assert.equal(reviews().length, before);
    await page.click(SEL.toggle);
    const cards = `${SEL.messages} > [data-role="approval"]`;
    const states = await page.$$eval(cards, (l) => l.map((e) => e.dataset.status));
    assert.deepEqual(states, ['undecided', 'pending']);
    const first = await card(page, cards); /* the first in the conversation */
    assert.deepEqual(first.buttons, []);
    assert.deepEqual(first.decision, ['Not decided, so not done']);
    /* the server told the model the first call did not run */
    const sent = conversationOf((await stack.mock.requests()).at(-1));
    const answers = sent.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse?.name === 'action_shop_addReview');
    assert.ok(answers.length >= 1 && answers[0].functionResponse.response?.result === undefined, JSON.stringify(answers));
    await page.click(SEL.toggle);
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(REJECT);
    assert.equal(await waitDone(page), 'response');
    assert.equal(reviews().length, before);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('two actions in one turn: a card for each, one after the other', async () => {
    await stack.mock.scenario('server-call', { n: '2', args: JSON.stringify(ARGS) });
    await stack.mock.reset();
    try {
      const before = reviews().length;
      const page = await openPage(browser, stack);
      assert.equal(await ask(page, 'Add two reviews to p004'), 'approval');
      const decide = async (sel) => {
        await page.evaluate(() => {
          window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
        });
        await page.click(sel);
        return waitDone(page);
      };
      const pending = `${CARD}[data-status="pending"]`;
      assert.equal(await decide(`${pending} [data-ref="approveAction"]`), 'approval', 'the second call asks too');
      assert.equal(reviews().length, before + 1, 'the first ran');
      assert.deepEqual(await page.$$eval(CARD, (l) => l.map((e) => e.dataset.status)), ['approved', 'pending']);
      assert.equal(await decide(`${pending} [data-ref="rejectAction"]`), 'response');
      assert.equal(reviews().length, before + 1, 'the second was declined');
      assert.deepEqual(await page.$$eval(CARD, (l) => l.map((e) => e.dataset.status)), ['approved', 'declined']);
      assert.match(await lastAnswer(page), /^Done: /);
      assert.deepEqual(page.problems, []);
      await page.close();
    } finally {
      await stack.mock.scenario('server-call', { args: JSON.stringify(ARGS) });
    }
  });

  it('on a phone the card fills the sheet, and its buttons are big enough to touch', async () => {
    await stack.mock.reset();
    const phone = await launchBrowser({ viewport: { width: 390, height: 760 } });
    try {
      const page = await phone.newPage();
      await page.goto(stack.url);
      await page.click('.gemini-chat__launcher');
      await page.waitForSelector(SEL.input, { state: 'visible' });
      assert.equal(await ask(page, 'Review p1'), 'approval');
      await page.waitForSelector(APPROVE, { state: 'visible' });
      const boxes = await Promise.all([APPROVE, REJECT].map((s) => page.locator(s).boundingBox()));
      for (const b of boxes) {
        assert.ok(b.height >= 40, `button height ${b.height}`);
        assert.ok(b.x >= 0 && b.x + b.width <= 390, 'inside the screen');
      }
      await screenshot(page, 'approval-card-narrow.png');
      await page.click(REJECT);
      await page.close();
    } finally {
      await phone.close();
    }
  });

  it('a changed ticket is refused (approval_invalid) in plain words; nothing is added', async () => {
    await stack.mock.reset();
    const before = reviews().length;
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'Review p1'), 'approval');
    /* the waiting approval is kept for the tab: forge its ticket, reload, approve */
    await page.evaluate(() => {
      const key = 'gemini-agent:history';
      const saved = JSON.parse(sessionStorage.getItem(key));
      const t = saved.approval.ticket;
      saved.approval.ticket = `${t.slice(0, -4)}${t.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      sessionStorage.setItem(key, JSON.stringify(saved));
    });
    await page.reload();
    await page.waitForSelector(APPROVE, { state: 'visible' });
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(APPROVE);
    assert.equal(await waitDone(page), 'error');
    assert.match(await page.textContent(SEL.error), /This approval has expired or was already used/);
    assert.equal(await page.isVisible(SEL.retry), false, 'no Retry: the ticket cannot become valid');
    assert.equal((await card(page)).status, 'invalid');
    assert.equal(reviews().length, before, 'nothing ran');
    assert.deepEqual(page.problems.filter((p) => !/HTTP 403: .*submitToolResults$/.test(p)), []);
    await page.close();
  });

  it('a conversation saved without its signatures is refused (history_tampered) in plain words', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'Review p1'), 'approval');
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.click(REJECT);
    assert.equal(await waitDone(page), 'response');
    /* as an older widget saved it: the history, no signatures */
    await page.evaluate(() => {
      const key = 'gemini-agent:history';
      const saved = JSON.parse(sessionStorage.getItem(key));
      delete saved.signatures;
      sessionStorage.setItem(key, JSON.stringify(saved));
    });
    await page.reload();
    await page.waitForSelector(SEL.input, { state: 'visible' });
    const calls = (await stack.mock.requests()).length;
    assert.equal(await ask(page, 'and now?'), 'error');
    assert.match(await page.textContent(SEL.error), /could not verify this conversation.*Start a new chat/);
    assert.equal((await stack.mock.requests()).length, calls, 'Gemini was not called');
    assert.deepEqual(page.problems.filter((p) => !/HTTP 400: .*sendMessage$/.test(p)), []);
    await page.close();
  });
});
