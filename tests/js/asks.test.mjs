/**
 * asks.js on its own (a jsdom page, a stub drive): the approval that waits
 * for the visitor's decision and the model's question, each going back
 * through drive only when the visitor acts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createAsks } from '../../www/agent/asks.js';
import { createState } from '../../www/agent/state.js';

function setup() {
  const dom = new JSDOM('<!doctype html><body><button id="page">page</button><div id="root"><div id="frame"><div id="q"></div><textarea data-ref="messageInput"></textarea></div></div></body>');
  const doc = dom.window.document;
  const w = { s: createState(null, false), approval: null, question: null, launcherMode: false, destroyed: false };
  const ui = { root: doc.getElementById('root'), frame: doc.getElementById('frame'), questionHost: doc.getElementById('q'), inputEl: () => doc.querySelector('textarea') };
  const driven = [];
  let n = 0;
  const asks = createAsks({
    w,
    doc,
    ui,
    newId: () => `m${n++}`,
    addMessage: (role, content) => w.s.messages.push({ id: `m${n++}`, role, content }),
    persist: () => {},
    render: () => {},
    drive: async (...a) => driven.push(a),
  });
  return { doc, w, ui, asks, driven };
}

const APPROVAL = { id: 'c1', ticket: 'T', tool: 'shop.order', title: 'Order', preview: 'Order 2 mugs', reason: 'r', args: [], expires: '' };
const QUESTION = { id: 'q1', questions: [{ id: 'size', question: 'Which size?', options: [{ label: 'S' }, { label: 'M' }] }] };

describe('the visitor\'s cards', () => {
  test('an approval waits as a card; the decision goes back with the ticket and the results', async () => {
    const { w, asks, driven } = setup();
    asks.askApproval(APPROVAL, [{ callId: 'p' }]);
    assert.equal(w.s.messages[0].status, 'pending');
    assert.equal(w.approval.ticket, 'T');
    await asks.decide('approve');
    assert.equal(w.s.messages[0].status, 'approved');
    assert.equal(w.approval, null);
    assert.deepEqual(driven, [['geminiAgent.submitToolResults', { approval: { id: 'c1', ticket: 'T', decision: 'approve' }, results: [{ callId: 'p' }] }, 'm0']]);
    await asks.decide('reject');
    assert.equal(driven.length, 1, 'no approval waits: nothing is sent');
  });

  test('no decision while a loop runs; a new message leaves the card undecided', () => {
    const { w, asks, driven } = setup();
    asks.askApproval(APPROVAL, []);
    w.s.isLoading = true;
    asks.decide('approve');
    assert.equal(driven.length, 0);
    assert.equal(asks.settleApproval('undecided').id, 'c1');
    assert.equal(w.s.messages[0].status, 'undecided');
  });

  test('the focus goes to the waiting card, not while the visitor is on the page', () => {
    const { doc, ui, asks } = setup();
    asks.askApproval(APPROVAL, []);
    const item = doc.createElement('li');
    item.setAttribute('data-id', 'm0');
    ui.frame.append(item);
    doc.getElementById('page').focus();
    asks.focusWaiting('approval');
    assert.equal(doc.activeElement.id, 'page');
    doc.activeElement.blur();
    asks.focusWaiting('approval');
    assert.equal(doc.activeElement, item);
    assert.equal(item.getAttribute('tabindex'), '-1');
  });

  test('a question is a card above the input; its answers go back, shown as the visitor\'s turn', async () => {
    const { w, ui, asks, driven } = setup();
    asks.askQuestion(QUESTION, []);
    assert.equal(ui.questionHost.children.length, 1);
    assert.equal(w.question.id, 'q1');
    await asks.answerQuestion({ size: 'M' });
    assert.equal(ui.questionHost.children.length, 0);
    assert.equal(w.s.messages.at(-1).role, 'user');
    assert.deepEqual(driven, [['geminiAgent.submitToolResults', { answer: { id: 'q1', answers: { size: 'M' } } }]]);
    asks.askQuestion(QUESTION, []);
    assert.equal(asks.dropQuestion().id, 'q1');
    assert.equal(w.question, null);
  });
});
