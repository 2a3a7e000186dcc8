/**
 * Streamed answers in chromium, through nginx + responder + the mock
 * Gemini's streaming (`streamGenerateContent?alt=sse`, tests/mock/README.md
 * "Streaming"): the text shows as it arrives, Stop keeps what arrived
 * (marked stopped) on screen but not in the history (a model turn needs the
 * server's signature), leaves the widget idle at once and the conversation
 * usable, and a streamed answer ends in the same DOM as the single JSON one.
 *
 * Needs the responder's NDJSON streaming (docs/chat-protocol.md): a
 * responder without it answers one JSON object, and the first test says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ask, conversationOf, lastAnswer, launchBrowser, openPage, screenshot, SEL, startStack, trackProblems, waitDone } from './stack.mjs';

let stack;
let browser;

before(async () => {
  stack = await startStack({ scenario: 'text' });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Record the Content-Type of every chat answer the page receives. */
function chatAnswerTypes(page) {
  const types = [];
  page.on('response', (r) => {
    if (/\/_jay\/actions\/geminiAgent\.(sendMessage|submitToolResults)$/.test(r.url()))
      types.push(r.headers()['content-type'] ?? '');
  });
  return types;
}

/**
 * Sample the compact answer's text every few ms until the chat is done:
 * the texts seen, in order, without repeats.
 */
async function watchAnswer(page, timeout = 30000) {
  return page.evaluate(
    ({ sel, ms }) =>
      new Promise((resolve, reject) => {
        const seen = [];
        const look = () => {
          const text = document.querySelector(sel)?.textContent.trim() ?? '';
          if (text && seen.at(-1) !== text) seen.push(text);
        };
        const timer = setInterval(look, 10);
        const give = setTimeout(() => {
          clearInterval(timer);
          reject(new Error(`the chat did not finish within ${ms} ms; seen ${JSON.stringify(seen)}`));
        }, ms);
        window.__e2eDone.then((outcome) => {
          look();
          clearInterval(timer);
          clearTimeout(give);
          resolve({ outcome, seen });
        });
      }),
    { sel: SEL.lastAnswer, ms: timeout },
  );
}

/** The widget's answer DOM, for comparing two pages: ids and times left out. */
const answerDom = (page) =>
  page.$eval('.gemini-chat', (root) => {
    const norm = (html) =>
      html
        .replace(/ data-id="[^"]*"/g, '')
        .replace(/<time([^>]*) datetime="[^"]*">[^<]*<\/time>/g, '<time$1></time>');
    const compact = root.querySelector('[data-bind="lastAssistantMessage"]').closest('[data-role="assistant"]');
    const bubbles = [...root.querySelectorAll('[data-foreach="messages"] > [data-role="assistant"]')];
    return { compact: norm(compact.outerHTML), expanded: bubbles.map((b) => norm(b.outerHTML)) };
  });

const SAY = 'Found **2 hubs** for you: the USB-C Hub and the USB-A Hub, both in stock today.';

describe('streamed answers', () => {
  it('shows the text as it arrives, before the full answer', async () => {
    await stack.mock.scenario('text', { say: SAY, chunks: '3', gap: '400' });
    const page = await openPage(browser, stack);
    const types = chatAnswerTypes(page);
    await ask(page, 'any hubs?', { wait: false });
    const { outcome, seen } = await watchAnswer(page);
    assert.equal(outcome, 'response');
    assert.match(types[0] ?? '', /^application\/x-ndjson/, `the responder streamed (Content-Type: ${types[0]})`);
    const full = 'Found 2 hubs for you: the USB-C Hub and the USB-A Hub, both in stock today.';
    assert.equal(seen.at(-1), full);
    const partial = seen.filter((t) => t !== full);
    assert.ok(partial.length >= 2, `at least two partial texts before the full one: ${JSON.stringify(seen)}`);
    for (const t of partial) assert.ok(full.startsWith(t), `a partial text is a beginning of the answer: ${JSON.stringify(t)}`);
    assert.doesNotMatch(seen.join('\n'), /\*\*/, 'no raw Markdown markers on the way');
    assert.equal(await page.$eval(SEL.lastAnswer, (el) => el.querySelector('strong')?.textContent), '2 hubs');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('Stop during a slow stream keeps the text so far, marked stopped; idle at once; the next message works', async () => {
    await stack.mock.scenario('text', { say: 'One two three four five six seven eight nine', chunks: '3', gap: '3000' });
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    await ask(page, 'count slowly', { wait: false });
    await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent.trim() ?? '') !== '', SEL.lastAnswer, { timeout: 10000 });
    const partial = await lastAnswer(page);
    assert.ok('One two three four five six seven eight nine'.startsWith(partial) && partial.length < 40, `partial: ${partial}`);
    const t0 = Date.now();
    await page.click(SEL.stop);
    assert.equal(await waitDone(page, 5000), 'stopped');
    assert.ok(Date.now() - t0 < 1500, `idle at once (${Date.now() - t0} ms)`);
    assert.equal(await page.getAttribute(SEL.widget, 'data-loading'), 'false');
    assert.equal(await page.isVisible(SEL.stop), false);
    assert.equal(await lastAnswer(page), partial, 'the text received stays');
    assert.equal(await page.isVisible('.gemini-chat__compact .gemini-chat__mark >> text=(stopped)'), true);
    assert.match(await page.innerText(SEL.widget), /Stopped\./);
    await page.waitForTimeout(3500); /* past the next delta: nothing more arrives */
    assert.equal(await lastAnswer(page), partial, 'nothing arrives after Stop');
    await screenshot(page.locator(SEL.widget), 'stream-stopped.png');

    /* the next message gets a normal answer; Gemini gets the visitor's message, and never a
     * model turn the browser wrote (the server signs model turns and refuses unsigned ones) */
    await stack.mock.scenario('text', { say: 'Ten.' });
    assert.equal(await ask(page, 'go on'), 'response');
    assert.equal(await lastAnswer(page), 'Ten.');
    const sent = conversationOf((await stack.mock.requests()).at(-1));
    const texts = sent.map((c) => [c.role, (c.parts ?? []).map((p) => p.text ?? '').join('')]);
    assert.ok(!texts.some(([role, t]) => role === 'model' && t === partial), `no model turn of the partial text: ${JSON.stringify(texts)}`);
    const said = texts.filter(([role]) => role === 'user').map(([, t]) => t).join('\n');
    assert.match(said, /count slowly[\s\S]*go on$/, 'both messages, in order');
    await page.click(SEL.toggle);
    const stopped = await page.$$eval(`${SEL.messages} > [data-role="assistant"]`, (l) => l.map((e) => e.dataset.status ?? ''));
    assert.deepEqual(stopped, ['stopped', '']);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('ends in the same DOM as the single JSON answer', async () => {
    const say = 'Found **2 hubs**:\n\n- USB-C Hub\n- `USB-A Hub`\n\nWant *either*?';
    await stack.mock.scenario('text', { say, chunks: '3', gap: '150' });

    const streamed = await openPage(browser, stack);
    const streamedTypes = chatAnswerTypes(streamed);
    assert.equal(await ask(streamed, 'hubs?'), 'response');
    assert.match(streamedTypes[0] ?? '', /^application\/x-ndjson/);

    const single = trackProblems(await browser.newPage());
    const singleTypes = chatAnswerTypes(single);
    /* the same page with data-stream="false" on the widget's container */
    await single.route(`${stack.url}/`, async (route) => {
      const res = await route.fetch();
      const body = (await res.text()).replace('<div data-gemini-chat>', '<div data-gemini-chat data-stream="false">');
      await route.fulfill({ response: res, body });
    });
    await single.goto(`${stack.url}/`);
    await single.waitForSelector(SEL.input, { state: 'visible' });
    assert.equal(await ask(single, 'hubs?'), 'response');
    assert.match(singleTypes[0] ?? '', /^application\/json/);

    const a = await answerDom(streamed);
    const b = await answerDom(single);
    assert.equal(a.compact, b.compact);
    await streamed.click(SEL.toggle);
    await single.click(SEL.toggle);
    assert.deepEqual((await answerDom(streamed)).expanded, (await answerDom(single)).expanded);
    assert.match(a.compact, /<strong>2 hubs<\/strong>/);
    assert.deepEqual(streamed.problems, []);
    assert.deepEqual(single.problems, []);
    await streamed.close();
    await single.close();
  });

  it('Stop while the answer after a page action streams: the next request tells Gemini what the page did', async () => {
    await stack.mock.scenario('page-call', { tool: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' }, chunks: '3', gap: '3000' });
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    await ask(page, 'remove the hub', { wait: false });
    /* the call runs on the page, then submitToolResults streams its first delta */
    await page.waitForFunction((sel) => /^Done:/.test(document.querySelector(sel)?.textContent.trim() ?? ''), SEL.lastAnswer, { timeout: 10000 });
    assert.equal(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.length), 2, 'the hub is gone');
    const partial = await lastAnswer(page);
    await page.click(SEL.stop);
    assert.equal(await waitDone(page, 5000), 'stopped');
    assert.equal(await lastAnswer(page), partial);

    await stack.mock.scenario('text', { say: 'You are welcome.' });
    assert.equal(await ask(page, 'thanks'), 'response', 'the server accepts the history the widget kept');
    assert.equal(await lastAnswer(page), 'You are welcome.');
    const sent = conversationOf((await stack.mock.requests()).at(-1));
    const at = sent.findLastIndex((c) => c.role === 'model' && c.parts?.some((p) => p.functionCall?.name === 'click-remove-btn'));
    assert.ok(at >= 0, 'the call is in the history');
    const answer = sent[at + 1];
    assert.equal(answer.role, 'user');
    assert.deepEqual(
      answer.parts.filter((p) => p.functionResponse).map((p) => p.functionResponse.response),
      [{ result: { ok: true } }],
      'the result the page reported, not "not run"',
    );
    assert.ok(!sent.slice(at + 1).some((c) => c.role === 'model'), 'no model turn of the stopped text (the server signs those)');
    const after = sent.slice(at + 1).flatMap((c) => c.parts ?? []).map((p) => p.text).filter(Boolean);
    assert.equal(after.at(-1), 'thanks');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it('a page action over the stream: the tool runs, then the answer streams', async () => {
    await stack.mock.scenario('text-and-call', { tool: 'click-remove-btn', args: { coordinate: 'item-2/removeBtn' }, chunks: '3', gap: '100' });
    const page = await openPage(browser, stack);
    const types = chatAnswerTypes(page);
    assert.equal(await ask(page, 'remove the hub'), 'response');
    assert.deepEqual(types.map((t) => t.split(';')[0]), ['application/x-ndjson', 'application/x-ndjson']);
    assert.equal(await page.$$eval('[data-foreach="items"] > [data-id]', (r) => r.length), 2, 'the hub is gone');
    assert.match(await lastAnswer(page), /^Done: /);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
