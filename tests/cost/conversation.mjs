/**
 * tests/cost/conversation.mjs — what a chat turn costs: a scripted
 * 10-message conversation on the demo cart page, in Chromium, against nginx
 * + the responder + the offline demo model, and the requests Gemini was
 * sent, measured.
 *
 * Two figures:
 *   - bytes: the request bodies sent to Gemini, summed;
 *   - prefix: for each follow-up call, the share of the previous call's
 *     request that the new one repeats byte for byte from its start, read
 *     in Gemini's order (systemInstruction, tools, contents). Gemini's
 *     implicit cache serves a repeated prefix at a discount, so everything
 *     after the first difference is paid in full.
 *
 * Used by `make cost` (tests/cost/cost.mjs prints the table) and by the
 * browser test tests/e2e/cost.test.mjs (which asserts the targets).
 */
import { ask, launchBrowser, openPage, startStack } from '../e2e/stack.mjs';

/** The conversation: the same ten messages before and after any change. */
export const MESSAGES = [
  'What is in my cart?',
  'Increase the mouse',
  'Search for usb',
  'Add a desk lamp for 19.99',
  'Set the keyboard quantity to 3',
  'Remove the hub',
  'What is in my cart?',
  'Decrease the mouse',
  'Search for keyboard',
  'What is in my cart?',
];

/** The request as Gemini reads it: instruction, tools, then contents. */
export function readingOrder(body) {
  return ['systemInstruction', 'tools', 'contents']
    .map((k) => (body?.[k] === undefined ? '' : JSON.stringify(body[k])))
    .join('');
}

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Figures from the recorded requests (GET /__mock/requests records).
 * @param {object[]} records
 */
export function measure(records) {
  const reqs = records.filter((r) => r.method === 'POST' && r.body && typeof r.body === 'object');
  const bytes = reqs.reduce((n, r) => n + (r.raw_len ?? JSON.stringify(r.body).length), 0);
  const texts = reqs.map((r) => readingOrder(r.body));
  const kept = [];
  for (let i = 1; i < texts.length; i++) kept.push(commonPrefix(texts[i - 1], texts[i]) / texts[i - 1].length);
  const sorted = [...kept].sort((a, b) => a - b);
  return {
    calls: reqs.length,
    bytes,
    kept,
    keptMin: sorted[0] ?? 1,
    keptMedian: sorted.length ? sorted[Math.floor(sorted.length / 2)] : 1,
    below90: kept.filter((k) => k < 0.9).length,
    below21: kept.filter((k) => k < 0.21).length,
  };
}

/** Run the conversation; returns the answers and the figures. */
export async function runConversation({ messages = MESSAGES } = {}) {
  const stack = await startStack();
  const browser = await launchBrowser();
  try {
    await stack.mock.reset();
    const page = await openPage(browser, stack);
    const outcomes = [];
    for (const m of messages) outcomes.push(await ask(page, m));
    const records = await stack.mock.requests();
    return { outcomes, records, ...measure(records), problems: page.problems };
  } finally {
    await browser.close();
    await stack.stop();
  }
}
