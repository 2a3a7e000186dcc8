/**
 * The todo plugin's plan in chromium: through nginx + responder + the mock
 * Gemini, whose `server-steps` scenario calls action_todo_plan
 * {"steps": ["Pack the boxes", "Book the van"]} and then action_todo_complete
 * {"id": 1} in one request (both run on the server: the todo tools have no
 * side effects). The widget shows the plan as a checklist above the answer,
 * each step a read-only checkbox with its checked state; the next message of
 * the same conversation (the server's conversation key goes back) completes
 * step 2 of the same stored plan, and the checklist follows.
 *
 * Screenshot: todo-checklist.png.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ask, launchBrowser, lastAnswer, openPage, screenshot, SEL, startStack } from './stack.mjs';

let stack;
let browser;

const CALLS = [
  ['action_todo_plan', { steps: ['Pack the boxes', 'Book the van'] }],
  ['action_todo_complete', { id: 1 }],
];

before(async () => {
  stack = await startStack({ scenario: `server-steps calls='${JSON.stringify(CALLS)}'`, yaml: 'plugins: {expose: [todo]}' });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/* the compact view's checklist */
const TODO = '.gemini-chat .gemini-chat__compact .gemini-chat__todo';

/** What the checklist says: its title and, per step, the shown text and aria-checked. */
const checklist = (page) =>
  page.$eval(TODO, (el) => ({
    hidden: Boolean(el.closest('[hidden]')),
    title: el.querySelector('.gemini-chat__todo-title').textContent,
    steps: [...el.querySelectorAll('li [role="checkbox"]')].map((b) => [
      b.querySelector('.gemini-chat__todo-text').textContent,
      b.getAttribute('aria-checked'),
    ]),
  }));

describe('the todo plan in the widget', () => {
  it('a checklist above the answer, kept across the turns of one conversation', async () => {
    const page = await openPage(browser, stack);
    assert.equal(await page.$eval(TODO, (el) => Boolean(el.closest('[hidden]'))), true, 'no plan yet: no checklist');

    assert.equal(await ask(page, 'Help me plan the move'), 'response');
    assert.match(await lastAnswer(page), /^Done: /);
    let shown = await checklist(page);
    assert.equal(shown.hidden, false);
    assert.equal(shown.title, 'Plan: 1 of 2 done');
    assert.deepEqual(shown.steps, [['Pack the boxes', 'true'], ['Book the van', 'false']]);
    /* above the last answer */
    const above = await page.evaluate((sel) => {
      const todo = document.querySelector(sel);
      const answer = document.querySelector('.gemini-chat__compact [data-role="assistant"]');
      return Boolean(todo.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING);
    }, TODO);
    assert.ok(above, 'the checklist is above the answer');
    const role = await page.$eval(`${TODO} ul`, (ul) => ul.children.length);
    assert.equal(role, 2, 'a list with one item per step');
    await screenshot(page.locator(SEL.widget), 'todo-checklist.png');

    /* the plan is kept on the server under this conversation */
    const dir = join(stack.dataDir, 'todo');
    assert.ok(existsSync(dir) && readdirSync(dir).filter((f) => f.endsWith('.json')).length === 1, 'one stored plan');

    /* the next turn: the model completes step 2 of the stored plan */
    await stack.mock.scenario('server-call', { tool: 'action_todo_complete', args: '{"id":2}' });
    assert.equal(await ask(page, 'The van is booked'), 'response');
    shown = await checklist(page);
    assert.equal(shown.title, 'Plan: 2 of 2 done');
    assert.deepEqual(shown.steps, [['Pack the boxes', 'true'], ['Book the van', 'true']]);
    const sent = (await stack.mock.requests()).at(-1);
    assert.ok(JSON.stringify(sent.body).includes('Pack the boxes'), 'the model read the stored plan');
    assert.deepEqual(page.problems ?? [], []);
    await page.close();
  });
});
