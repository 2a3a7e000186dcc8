#!/usr/bin/env node
/**
 * `make cost`: run the scripted conversation (conversation.mjs) and print
 * what it sent to Gemini. `--json FILE` also writes the figures.
 */
import { writeFileSync } from 'node:fs';
import { MESSAGES, runConversation } from './conversation.mjs';

const r = await runConversation();
const pct = (x) => `${(100 * x).toFixed(1)}%`;
console.log(`conversation: ${MESSAGES.length} messages on the demo page, offline demo model`);
console.log(`outcomes: ${r.outcomes.join(' ')}`);
console.log(`Gemini calls: ${r.calls}`);
console.log(`bytes sent: ${r.bytes} (${(r.bytes / 1024).toFixed(1)} KB)`);
console.log(`prefix kept by each follow-up call: ${r.kept.map(pct).join(' ')}`);
console.log(`prefix kept: min ${pct(r.keptMin)}, median ${pct(r.keptMedian)}; ` +
  `${r.below90} of ${r.kept.length} follow-ups below 90%, ${r.below21} below 21%`);
const out = process.argv.indexOf('--json');
if (out > 0) {
  const { records, ...figures } = r;
  writeFileSync(process.argv[out + 1], JSON.stringify(figures, null, 2));
}
