/**
 * What the server (and so Gemini) receives from the page: read back from the
 * mock's recorded requests. Disabled controls are not offered (no tool for a
 * single element, not among an item's refs in the page state); anything
 * under data-agent="off" (the demo's card number field, the footer),
 * password fields and the widget itself never leave the page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, declaredNames, launchBrowser, openPage, sentPageState, startStack } from './stack.mjs';

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

const decl = (rec, name) => rec.body.tools.flatMap((t) => t.functionDeclarations).find((d) => d.name === name);
/** Every ref the page state mentions: field coordinates' refs and the refs of list items. */
const refsIn = (state) => [
  ...Object.keys(state?.fields ?? {}).map((k) => k.split('/').pop()),
  ...Object.values(state?.lists ?? {}).flatMap((items) => items.flatMap((i) => i.refs)),
];

describe('what the server receives', () => {
  it('leaves disabled buttons out of the tools', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    /* the demo's coupon button is disabled (in a disabled fieldset too) */
    assert.equal(await page.isDisabled('[data-ref="applyCouponBtn"]'), true);
    assert.equal(await ask(page, 'hello'), 'response');
    let [rec] = await stack.mock.requests();
    let names = declaredNames(rec);
    for (const want of ['click-remove-btn', 'click-increase-btn', 'click-decrease-btn', 'fill-name-input',
      'fill-price-input', 'click-add-btn', 'fill-search-input', 'click-search-btn', 'click-checkout-btn',
      'action_shop_searchProducts'])
      assert.ok(names.includes(want), `${want} declared: ${names}`);
    assert.ok(!names.includes('click-apply-coupon-btn'), `click-apply-coupon-btn declared: ${names}`);
    assert.ok(!JSON.stringify(sentPageState(rec)).includes('applyCouponBtn'));
    /* per item too: decrease is disabled at quantity 1, so only the hub (×2) has it */
    assert.deepEqual(sentPageState(rec).lists.items.filter((i) => i.refs.includes('decreaseBtn')).map((i) => i.id), ['item-2']);
    const before = JSON.stringify(decl(rec, 'click-remove-btn'));

    /* an enabled button that becomes disabled disappears: checkout, once
     * the visitor has emptied the cart */
    for (const id of ['item-1', 'item-2', 'item-3']) await page.click(`[data-id="${id}"] [data-ref="removeBtn"]`);
    assert.equal(await page.isDisabled('[data-ref="checkoutBtn"]'), true);
    await stack.mock.reset();
    assert.equal(await ask(page, 'hello'), 'response');
    [rec] = await stack.mock.requests();
    names = declaredNames(rec);
    assert.ok(!names.includes('click-checkout-btn'), `click-checkout-btn declared: ${names}`);
    /* no rows: the list's tool stays, the same, and the page state has no items */
    assert.equal(JSON.stringify(decl(rec, 'click-remove-btn')), before);
    assert.equal(sentPageState(rec).lists, undefined);
    assert.ok(names.includes('click-add-btn'));
    await page.close();
  });

  it('never sends what is under data-agent="off", password fields or the widget', async () => {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    const posted = [];
    page.on('request', (r) => {
      if (r.url().includes('/_jay/actions/geminiAgent.')) posted.push(r.postData() ?? '');
    });
    const card = '4111111111111111';
    await page.fill('#card-number', card);
    /* a password field added by the page: always left out */
    await page.evaluate(() => {
      const form = document.querySelector('#add-form .row');
      const pw = Object.assign(document.createElement('input'), { type: 'password', value: 'hunter2-secret' });
      pw.dataset.ref = 'passwordInput';
      form.append(pw);
    });
    assert.equal(await ask(page, 'remove the hub'), 'response');
    const reqs = await stack.mock.requests();
    assert.equal(reqs.length, 2);
    for (const rec of reqs) {
      const raw = JSON.stringify(rec.body);
      for (const secret of [card, 'cardNumberInput', 'card-number', 'Card number', 'Payment (hidden',
        'hunter2-secret', 'passwordInput', 'password-input', 'Reset the demo',
        /* the widget is data-agent="off" as well */
        'messageInput', 'message-input', 'sendMessage', 'toggle-expand'])
        assert.ok(!raw.includes(secret), `request ${rec.seq} contains "${secret}"`);
      const state = sentPageState(rec);
      assert.ok(state && state.viewState && !('interactions' in state), 'the page state was sent');
      assert.ok(refsIn(state).includes('removeBtn') || rec.seq > 1);
    }
    /* and what the browser posted to the responder in the first place */
    assert.equal(posted.length, 2);
    for (const body of posted) {
      assert.ok(body.includes('"pageState"') && body.includes('"toolDefinitions"'));
      for (const secret of [card, 'cardNumberInput', 'hunter2-secret', 'passwordInput', 'messageInput'])
        assert.ok(!body.includes(secret), `the browser posted "${secret}"`);
    }
    await page.close();
  });
});
