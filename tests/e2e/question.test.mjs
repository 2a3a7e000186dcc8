/**
 * The model's questions in the widget, in chromium (the built-in plugin
 * `clarification`): a stack exposing it, whose mock model (the `server-call`
 * scenario) calls action_clarification_ask with three questions - a single
 * choice with a default, an optional multiple choice, a required text.
 *
 *  - The card shows radio buttons (the default chosen), checkboxes and a
 *    field, and takes the focus on its first control; the keyboard alone
 *    answers it: Send with the required field empty says what is missing and
 *    sends nothing; filled, the answers reach the model as the call's result
 *    (the mock's /__mock/requests) and its answer is shown.
 *  - On a phone the card fits the full-screen sheet.
 *
 * Screenshots: question-card.png, question-answered.png, question-phone.png.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, conversationOf, lastAnswer, launchBrowser, openPage, screenshot, SEL, startStack, waitDone } from './stack.mjs';

let stack;
let browser;

const QUESTIONS = {
  questions: [
    { id: 'size', text: 'Which size?', kind: 'single', options: ['S', 'M', 'L'], default: 'M' },
    { id: 'extras', text: 'Any extras?', kind: 'multiple', options: ['gift wrap', 'card'], required: false },
    { id: 'note', text: 'A note for us?', kind: 'text' },
  ],
};
const CARD = '.gemini-chat form.gemini-chat__question';

before(async () => {
  stack = await startStack({
    scenario: `server-call tool=action_clarification_ask args='${JSON.stringify(QUESTIONS)}'`,
    yaml: 'plugins: {expose: [clarification]}',
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The response the server gave the model for the ask call, in the last Gemini request. */
async function askResponse() {
  const sent = conversationOf((await stack.mock.requests()).at(-1));
  const parts = sent.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse?.name === 'action_clarification_ask');
  return parts.at(-1)?.functionResponse.response;
}

describe('questions in the widget', () => {
  it('a card of radios, checkboxes and a field; the keyboard answers it; the model reads the answers', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'I want a shirt'), 'question');
    await page.waitForSelector(CARD, { state: 'visible' });
    const shown = await page.$eval(CARD, (form) => ({
      radios: [...form.querySelectorAll('input[type=radio]')].map((r) => [r.parentElement.textContent, r.checked]),
      boxes: [...form.querySelectorAll('input[type=checkbox]')].map((r) => [r.parentElement.textContent, r.checked]),
      fields: form.querySelectorAll('textarea').length,
      focused: document.activeElement?.type ?? document.activeElement?.tagName,
    }));
    assert.deepEqual(shown.radios, [['S', false], ['M', true], ['L', false]]);
    assert.deepEqual(shown.boxes, [['gift wrap', false], ['card', false]]);
    assert.equal(shown.fields, 1);
    assert.equal(shown.focused, 'radio', 'the focus is on the card');
    assert.equal((await stack.mock.requests()).length, 1, 'the model waits');
    await screenshot(page.locator(SEL.widget), 'question-card.png');

    /* keyboard only: the arrow moves the radio choice, Tab reaches the checkboxes, Space ticks */
    await page.keyboard.press('ArrowDown'); /* the first radio has the focus: S -> M */
    await page.keyboard.press('ArrowDown'); /* M -> L */
    await page.keyboard.press('Tab'); /* gift wrap */
    await page.keyboard.press('Tab'); /* card */
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab'); /* the note */
    /* Enter with the required note empty: said, nothing sent */
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${CARD} [role="alert"]:not([hidden])`);
    assert.match(await page.textContent(`${CARD} [role="alert"]`), /A note for us\?/);
    assert.equal((await stack.mock.requests()).length, 1);
    await page.evaluate(() => {
      window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome), { once: true }));
    });
    await page.keyboard.type('please fold it');
    await page.keyboard.press('Enter');
    assert.equal(await waitDone(page), 'response');
    assert.deepEqual(await askResponse(), { result: { answers: { size: 'L', extras: ['card'], note: 'please fold it' } } });
    assert.match(await lastAnswer(page), /Done: .*"size":"L"/);
    assert.equal(await page.isVisible(CARD), false, 'the card is gone');
    await screenshot(page.locator(SEL.widget), 'question-answered.png');
    await page.close();
  });

  it('on a phone the card fits the sheet', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    await page.setViewportSize({ width: 375, height: 740 });
    await page.evaluate(() => sessionStorage.clear());
    await page.reload();
    await page.click('.gemini-chat [data-ref="openChat"]');
    await page.waitForSelector(SEL.input, { state: 'visible' });
    assert.equal(await ask(page, 'I want a shirt'), 'question');
    await page.waitForSelector(CARD, { state: 'visible' });
    const box = await page.locator(CARD).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 375, `the card fits the width: ${JSON.stringify(box)}`);
    const option = await page.locator(`${CARD} .gemini-chat__question-option`).first().boundingBox();
    assert.ok(option.height >= 40, `a finger-sized option: ${option.height}px`);
    await screenshot(page, 'question-phone.png');
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
