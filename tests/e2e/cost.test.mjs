/**
 * What a chat turn costs (the targets below), over the scripted
 * conversation of tests/cost/conversation.mjs: the bytes sent to Gemini
 * stay within 0.6 of what the same conversation cost before the request
 * was made cache-friendly, and every follow-up call's request begins with
 * at least 90% of the previous call's, byte for byte, in Gemini's reading
 * order. `make cost` prints the same figures.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MESSAGES, runConversation } from '../cost/conversation.mjs';

/* The same conversation before (commit 9ddbce3): 18 Gemini calls. */
const BYTES_BEFORE = 310130;
/* Added since, on purpose, to every call: the bound on what it may write
 * (`,"generationConfig":{"maxOutputTokens":8192}`, the budget's bound on the answer). It
 * is allowed on top of the target, call by call, and nothing else is. */
const OUTPUT_BOUND_BYTES = ',"generationConfig":{"maxOutputTokens":8192}'.length;

let run;
before(async () => {
  run = await runConversation();
});
after(() => {});

describe('the cost of a conversation on the demo page', () => {
  it('answers every message', () => {
    assert.equal(run.outcomes.length, MESSAGES.length);
    assert.deepEqual(run.outcomes.filter((o) => o !== 'response'), []);
    assert.deepEqual(run.problems, []);
  });

  it('sends at most 0.6 of the bytes it sent before', () => {
    const target = 0.6 * BYTES_BEFORE + run.calls * OUTPUT_BOUND_BYTES;
    assert.ok(run.bytes <= target,
      `${run.bytes} bytes in ${run.calls} calls; the target is ${Math.floor(target)}`);
  });

  it('begins every follow-up request with at least 90% of the previous one', () => {
    const low = run.kept.map((k, i) => [i + 2, k]).filter(([, k]) => k < 0.9);
    assert.deepEqual(low.map(([call, k]) => `call ${call}: ${(100 * k).toFixed(1)}%`), []);
  });
});
