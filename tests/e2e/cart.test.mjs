/**
 * The demo cart page driven by chat, in chromium, against nginx + responder
 * + the offline demo model (the mock in demo mode): the page changes and the
 * agent's final answer shows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, conversationOf, lastAnswer, launchBrowser, openPage, sentPageState, SEL, startStack } from './stack.mjs';

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

const rowIds = (page) => page.$$eval('[data-foreach="items"] > [data-id]', (rows) => rows.map((r) => r.dataset.id));
const rowText = (page, id, cls) => page.textContent(`${SEL.row(id)} .${cls}`);
const total = (page) => page.textContent('#total');
const activity = (page) => page.$$eval('.gemini-chat [data-foreach="activity"] > *', (l) => l.map((e) => e.textContent.trim()));

/** The functionResponse parts of a recorded Gemini request. */
const responsesIn = (rec) =>
  (rec.body?.contents ?? []).flatMap((c) => (c.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse));
const callsIn = (rec) =>
  (rec.body?.contents ?? []).flatMap((c) => (c.parts ?? []).filter((p) => p.functionCall).map((p) => p.functionCall));

describe('the cart by chat (offline demo model)', () => {
  it('removes an item: the row goes, the total changes, the answer shows', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.deepEqual(await rowIds(page), ['item-1', 'item-2', 'item-3']);
    assert.equal(await total(page), '$219.96');

    assert.equal(await ask(page, 'Remove the hub'), 'response');
    assert.deepEqual(await rowIds(page), ['item-1', 'item-3']);
    assert.equal(await total(page), '$119.98');
    const answer = await lastAnswer(page);
    assert.match(answer, /Removed USB-C Hub from the cart/);
    assert.match(answer, /total \$119\.98/);
    assert.match(await page.textContent(SEL.lastQuestion), /Remove the hub/);
    /* a progress line for the click, and the offline model announced */
    assert.ok((await activity(page)).some((l) => /remove/i.test(l) && /hub/i.test(l)), `activity: ${await activity(page)}`);
    assert.match(await page.textContent(SEL.notice), /offline demo model/i);

    /* what Gemini got: the page's tools (a plain coordinate), the items in
     * the page state, then the click's result */
    const reqs = await stack.mock.requests();
    assert.equal(reqs.length, 2);
    const remove = reqs[0].body.tools[0].functionDeclarations.find((d) => d.name === 'click-remove-btn');
    assert.equal(remove.parametersJsonSchema.properties.coordinate.type, 'string');
    assert.equal(remove.parametersJsonSchema.properties.coordinate.enum, undefined);
    /* the items' names are said once: by the view state, not again by the lists */
    assert.deepEqual(sentPageState(reqs[0]).lists.items.map((i) => [i.id, i.label, i.refs.includes('removeBtn')]),
      [['item-1', undefined, true], ['item-2', undefined, true], ['item-3', undefined, true]]);
    assert.deepEqual(sentPageState(reqs[0]).viewState.items.map((i) => [i.id, i.name]),
      [['item-1', 'Wireless Mouse'], ['item-2', 'USB-C Hub'], ['item-3', 'Mechanical Keyboard']]);
    assert.deepEqual(reqs[1].body.tools, reqs[0].body.tools, 'the tools did not change with the item');
    assert.deepEqual(callsIn(reqs[1]).map((c) => [c.name, c.args]), [['click-remove-btn', { coordinate: 'item-2/removeBtn' }]]);
    assert.ok(responsesIn(reqs[1])[0].response.result, JSON.stringify(responsesIn(reqs[1])));
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('fills the form and adds an item (three calls in one turn)', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'add a desk lamp for 19.99'), 'response');
    assert.deepEqual(await rowIds(page), ['item-1', 'item-2', 'item-3', 'item-4']);
    assert.equal(await rowText(page, 'item-4', 'name'), 'Desk Lamp');
    assert.equal(await rowText(page, 'item-4', 'price'), '$19.99');
    assert.equal(await total(page), '$239.95');
    assert.match(await lastAnswer(page), /Added Desk Lamp at \$19\.99 to the cart/);
    /* the form was used like a visitor would: it is empty again after adding */
    assert.equal(await page.inputValue('[data-ref="nameInput"]'), '');
    const reqs = await stack.mock.requests();
    assert.equal(reqs.length, 2);
    assert.deepEqual(responsesIn(reqs[1]).map((r) => r.name), ['fill-name-input', 'fill-price-input', 'click-add-btn']);
    await page.close();
  });

  it('changes the quantity of a repeated item, one click per turn', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'set the keyboard quantity to 3'), 'response');
    assert.equal(await rowText(page, 'item-3', 'quantity'), '3');
    assert.equal(await rowText(page, 'item-1', 'quantity'), '1');
    assert.match(await lastAnswer(page), /Mechanical Keyboard quantity is now 3/);
    const reqs = await stack.mock.requests();
    assert.equal(reqs.length, 3, 'sendMessage, then one submitToolResults per click');
    for (const r of reqs.slice(1)) {
      const call = callsIn(r).at(-1);
      assert.equal(call.name, 'click-increase-btn');
      assert.deepEqual(call.args, { coordinate: 'item-3/increaseBtn' });
    }

    /* the hub goes down to 1; then its decrease button is disabled, so it
     * is no longer offered and the model says so instead of clicking */
    assert.equal(await ask(page, 'decrease the hub'), 'response');
    assert.equal(await rowText(page, 'item-2', 'quantity'), '1');
    assert.equal(await page.isDisabled(`${SEL.row('item-2')} [data-ref="decreaseBtn"]`), true);
    await stack.mock.reset();
    assert.equal(await ask(page, 'decrease the hub'), 'response');
    assert.match(await lastAnswer(page), /cannot change USB-C Hub any further/);
    const last = await stack.mock.requests();
    assert.equal(last.length, 1);
    const hub = sentPageState(last[0]).lists.items.find((i) => i.id === 'item-2');
    assert.deepEqual(hub.refs, ['increaseBtn', 'removeBtn'], 'its decrease button is not offered');
    assert.ok(last[0].body.tools[0].functionDeclarations.some((d) => d.name === 'click-decrease-btn'), 'the tool stays declared');
    await page.close();
  });

  it('runs a server action (search) and then a page action with its result', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    assert.equal(await ask(page, 'search for hdmi and add the first one'), 'response');
    assert.equal(await rowText(page, 'item-4', 'name'), 'USB-C to HDMI Adapter');
    assert.equal(await rowText(page, 'item-4', 'price'), '$19.99');
    const answer = await lastAnswer(page);
    assert.match(answer, /I found 1 product for “hdmi”/);
    assert.match(answer, /Added USB-C to HDMI Adapter at \$19\.99/);
    assert.ok((await page.textContent(SEL.widget)).includes('shop.searchProducts'), 'a progress line for the server action');
    const reqs = await stack.mock.requests();
    /* sendMessage: Gemini asks for the search, the responder runs it and asks again */
    assert.equal(reqs.length, 3);
    const search = responsesIn(reqs[1])[0];
    assert.equal(search.name, 'action_shop_searchProducts');
    assert.equal(search.response.result.products[0].name, 'USB-C to HDMI Adapter');
    assert.deepEqual(responsesIn(reqs[2]).slice(1).map((r) => r.name), ['fill-name-input', 'fill-price-input', 'click-add-btn']);

    /* a plain search: a summary of the results */
    assert.equal(await ask(page, 'search for usb'), 'response');
    assert.match(await lastAnswer(page), /I found 4 products for “usb”/);
    await page.close();
  });

  it('feeds a tool error back: the call names an item that is gone', async () => {
    await stack.mock.reset();
    await stack.mock.scenario('demo', { delay: '1200' });
    try {
      const page = await openPage(browser, stack);
      await ask(page, 'remove the hub', { wait: false });
      /* while the model thinks, the visitor removes the hub by hand */
      await page.click(`${SEL.row('item-2')} [data-ref="removeBtn"]`);
      assert.deepEqual(await rowIds(page), ['item-1', 'item-3']);
      assert.equal(await page.evaluate(() => window.__e2eDone), 'response');
      const answer = await lastAnswer(page);
      assert.match(answer, /the page reported an error/);
      assert.match(answer, /item-2/);
      assert.ok((await activity(page)).some((l) => /failed/.test(l)), `activity: ${await activity(page)}`);
      const reqs = await stack.mock.requests();
      const resp = responsesIn(reqs.at(-1))[0];
      assert.equal(resp.name, 'click-remove-btn');
      assert.ok(resp.response.error, `the widget sent isError: ${JSON.stringify(resp)}`);
      await page.close();
    } finally {
      await stack.mock.scenario('demo');
    }
  });

  /* removing the last rows takes click-remove-btn off the page: the
   * results must still be accepted for the calls made before */
  it('removes the last items by chat (clear the cart)', async () => {
    const page = await openPage(browser, stack);
    try {
      assert.equal(await ask(page, 'clear the cart'), 'response');
      assert.deepEqual(await rowIds(page), []);
      assert.match(await lastAnswer(page), /Removed Wireless Mouse, USB-C Hub and Mechanical Keyboard from the cart\. Your cart is now empty/);
      assert.equal(await page.isDisabled('[data-ref="checkoutBtn"]'), true);
    } finally {
      await page.close();
    }
  });

  it('keeps the conversation (and the cart) across a reload', async () => {
    const page = await openPage(browser, stack);
    await ask(page, 'increase the mouse');
    await ask(page, 'remove the keyboard');
    const before = await page.evaluate(() => window.geminiAgent.chat.state.messages);
    assert.ok(before.length >= 4);
    await page.reload();
    await page.waitForSelector(SEL.input);
    const after = await page.evaluate(() => window.geminiAgent.chat.state.messages);
    assert.deepEqual(after, before);
    assert.match(await page.textContent(SEL.lastQuestion), /remove the keyboard/);
    assert.match(await lastAnswer(page), /Removed Mechanical Keyboard/);
    await page.click(SEL.toggle);
    const shown = await page.$$eval(`${SEL.messages} > [data-role="user"]`, (l) => l.map((e) => e.textContent));
    assert.equal(shown.length, 2);
    assert.match(shown[0], /increase the mouse/);
    await page.click(SEL.toggle); /* back to compact, where the last answer shows */
    /* and it goes on: the history sent after the reload holds both turns */
    await stack.mock.reset();
    assert.equal(await ask(page, 'what is in my cart?'), 'response');
    assert.match(await lastAnswer(page), /Wireless Mouse — \$29\.99 × 2/);
    const [req] = await stack.mock.requests();
    const userTexts = conversationOf(req).filter((c) => c.role === 'user' && c.parts.some((p) => p.text)).map((c) => c.parts[0].text);
    assert.deepEqual(userTexts, ['increase the mouse', 'remove the keyboard', 'what is in my cart?']);
    await page.close();
  });
});
