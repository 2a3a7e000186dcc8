/**
 * decision.js on its own: the approval card's words (the action's title,
 * labelled arguments) and the card the assistant page builds with it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';
import { actionTitle, argLabel, argLines, argSummary, buildDecisionCard, readApproval } from '../../www/agent/decision.js';

const APPROVAL = {
  id: 'call-r',
  tool: 'shop.addReview',
  args: { productId: 'p004', rating: 5, text: 'great' },
  reason: 'It adds a review.',
  preview: 'Add a customer review (productId: p004, rating: 5, text: great)',
  ticket: 't1.x.y',
};

describe('decision: the words of an approval', () => {
  test('the title of an action: its name in words, without the plugin; a title given wins', () => {
    assert.equal(actionTitle('shop.addReview'), 'Add review');
    assert.equal(actionTitle('crm.create_lead'), 'Create lead');
    assert.equal(actionTitle('shop.addReview', 'Add a review'), 'Add a review');
    assert.equal(actionTitle(''), 'An action');
  });

  test('the label of an argument: words, a trailing Id dropped; a label given wins', () => {
    assert.equal(argLabel('productId'), 'Product');
    assert.equal(argLabel('rating'), 'Rating');
    assert.equal(argLabel('max_items'), 'Max items');
    assert.equal(argLabel('id'), 'Id', 'a lone id stays');
    assert.equal(argLabel('productId', 'Product code'), 'Product code');
  });

  test('readApproval: title and labelled arguments; the server\'s labels, then the schema\'s titles', () => {
    const a = readApproval(APPROVAL);
    assert.equal(a.title, 'Add review');
    assert.equal(argSummary(a.args), 'Product: p004, Rating: 5, Text: great');
    const schema = { properties: { rating: { title: 'Stars' }, text: { title: 'Review' } } };
    const b = readApproval({ ...APPROVAL, title: 'Add a review', labels: { text: 'Your words' } }, schema);
    assert.equal(b.title, 'Add a review');
    assert.equal(argSummary(b.args), 'Product: p004, Stars: 5, Your words: great');
    assert.equal(readApproval({ ...APPROVAL, ticket: '' }), null, 'no ticket: nothing to decide');
  });

  test('argLines: values in words, anything but text as JSON', () => {
    assert.deepEqual(argLines({ tags: ['a'], n: null }).map((l) => l.value), ['["a"]', 'null']);
    assert.deepEqual(argLines(['not', 'an', 'object']), []);
  });
});

describe('decision: the card', () => {
  const doc = new JSDOM('<!doctype html><body></body>').window.document;

  test('title, preview, reason, labelled arguments, one button per decision; text never as HTML', () => {
    const got = [];
    const a = readApproval({ ...APPROVAL, args: { note: '<img src=x onerror=alert(1)>' } });
    const card = buildDecisionCard(doc, a, { onDecide: (v) => got.push(v) });
    assert.equal(card.querySelector('.ga-decision__title').textContent, 'Add review');
    assert.equal(card.querySelector('.ga-decision__title').title, 'shop.addReview', 'the raw id only on hover');
    assert.equal(card.querySelector('.ga-decision__reason').textContent, 'It adds a review.');
    assert.deepEqual([...card.querySelectorAll('dt')].map((e) => e.textContent), ['Note']);
    assert.equal(card.querySelector('img'), null, 'an argument is text');
    const buttons = [...card.querySelectorAll('button')];
    assert.deepEqual(buttons.map((b) => b.textContent), ['Approve', 'Reject']);
    buttons[0].click();
    assert.deepEqual(got, ['approve']);
  });

  test('"Approve always" is a secondary (link-style) button, "Approve" the primary one', () => {
    const decisions = [
      ['approve_once', 'Approve', 'Run it this once', 'primary'],
      ['approve_and_always_allow', 'Approve always', 'Run it, and from now on', 'secondary'],
      ['reject', 'Reject', 'Do not run it', 'plain'],
    ];
    const card = buildDecisionCard(doc, readApproval(APPROVAL), { decisions });
    const cls = Object.fromEntries([...card.querySelectorAll('button')].map((b) => [b.textContent, b.className]));
    assert.match(cls.Approve, /--primary/);
    assert.match(cls['Approve always'], /--secondary/);
    const css = readFileSync(new URL('../../www/agent/decision.css', import.meta.url), 'utf8');
    const rule = /\.ga-decision__btn--secondary\s*\{([^}]*)\}/.exec(css)?.[1] ?? '';
    assert.match(rule, /background:\s*none/, 'no fill: it does not look like Approve');
    assert.match(rule, /text-decoration:\s*underline/, 'it reads as a link');
  });
});
