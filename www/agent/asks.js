/**
 * The visitor's cards: the approval of a server action with side effects
 * (its card is a message, rendered by the template; decision.js reads it)
 * and the model's question (question.js builds its form, above the input).
 * Each waits in the widget's named state (`w.approval`, `w.question`) until
 * the visitor decides, answers or moves on; the decision or the answers go
 * back through `drive` (turn.js). Only the visitor's click decides: the
 * handle has no way to approve.
 *
 * @module asks
 */
import { buildQuestionCard, describeAnswers, firstControl } from './question.js';

/**
 * @typedef {object} AsksDeps
 * @property {object} w  the widget's named state: s, approval, question, launcherMode, destroyed
 * @property {Document} doc
 * @property {{root: HTMLElement, frame: HTMLElement, questionHost: HTMLElement, inputEl: () => HTMLElement|null}} ui
 * @property {() => string} newId
 * @property {(role: string, content: string) => void} addMessage
 * @property {() => void} persist
 * @property {() => void} render
 * @property {(route: string, payload: object, card?: string) => Promise<void>} drive
 */

/** @param {AsksDeps} d */
export function createAsks(d) {
  const { w, doc, ui } = d;
  const hidden = () => w.launcherMode && !w.s.isOpen;

  /**
   * Show the approval card and wait for the visitor (the loop ends here;
   * decide() starts the next one). `results`: the page calls of the same
   * model turn, already run, sent with the decision.
   */
  function askApproval(a, results) {
    const card = {
      id: d.newId(),
      role: 'approval',
      content: a.preview,
      timestamp: new Date().toISOString(),
      status: 'pending',
      tool: a.tool,
      actionTitle: a.title,
      reason: a.reason,
      args: a.args,
      expires: a.expires,
    };
    w.approval = { msgId: card.id, id: a.id, ticket: a.ticket, results };
    w.s.messages.push(card);
    if (hidden()) w.s.unread = true;
    d.persist();
    d.render();
  }

  /**
   * Mark the card of the waiting approval (`status`: approved, declined or
   * undecided) and forget the approval: its buttons go.
   * @returns {{msgId: string, id: string, ticket: string, results: object[]}|null}  the approval it was
   */
  function settleApproval(status) {
    const a = w.approval;
    if (!a) return null;
    w.approval = null;
    const card = w.s.messages.find((m) => m.id === a.msgId);
    if (card) card.status = status;
    return a;
  }

  /**
   * The visitor's decision on the waiting approval: submitToolResults with
   * the ticket (and the page results of the same turn). Only the card's
   * buttons call this.
   * @param {'approve'|'reject'} decision
   */
  function decide(decision) {
    if (w.destroyed || w.s.isLoading || !w.approval) return Promise.resolve();
    const a = settleApproval(decision === 'approve' ? 'approved' : 'declined');
    d.persist();
    const payload = { approval: { id: a.id, ticket: a.ticket, decision } };
    if (a.results.length > 0) payload.results = a.results;
    return d.drive('geminiAgent.submitToolResults', payload, a.msgId);
  }

  /** The visitor is busy elsewhere: on the page, outside the widget. */
  function onThePage(active) {
    return active && active !== doc.body && !ui.frame.contains(active);
  }

  /**
   * Put the focus on the card of the waiting approval (the item itself, not
   * its Approve button: a key pressed by habit must not approve anything),
   * unless the visitor is busy elsewhere: typing in the input, or on the page.
   */
  function focusCard() {
    if (!w.approval || hidden()) return;
    const active = doc.activeElement;
    if (active === ui.inputEl() || onThePage(active)) return;
    const node = [...ui.root.querySelectorAll(`[data-id="${w.approval.msgId}"]`)].find((el) => !el.closest('[hidden]'));
    if (!node) return;
    if (!node.hasAttribute('tabindex')) node.setAttribute('tabindex', '-1');
    node.focus();
  }

  /** Show the card of a question answer; `results` are the page calls' of the same turn. */
  function askQuestion(q, results) {
    const form = buildQuestionCard(doc, q, (answers) => answerQuestion(answers));
    w.question = { id: q.id, questions: q.questions, results, form };
    ui.questionHost.replaceChildren(form);
    if (hidden()) w.s.unread = true;
  }

  /** Forget the waiting question and take its card away. */
  function dropQuestion() {
    const q = w.question;
    w.question = null;
    ui.questionHost.replaceChildren();
    return q;
  }

  /** The visitor sent the card: the answers (and the page results) go back. */
  function answerQuestion(answers) {
    if (w.destroyed || w.s.isLoading || !w.question) return Promise.resolve();
    const q = dropQuestion();
    d.addMessage('user', describeAnswers(q.questions, answers));
    const payload = { answer: { id: q.id, answers } };
    if (q.results.length > 0) payload.results = q.results;
    return d.drive('geminiAgent.submitToolResults', payload);
  }

  /**
   * The focus to the card's first control: from the input the message was
   * sent from too (the answer is what comes next), but not while the
   * visitor types a new message there or works on the page.
   */
  function focusQuestion() {
    if (!w.question || hidden()) return;
    const active = doc.activeElement;
    if (active === ui.inputEl() && String(active.value ?? '').trim()) return;
    if (onThePage(active)) return;
    firstControl(w.question.form)?.focus();
  }

  /** The loop ended waiting for the visitor: the focus to what waits. */
  function focusWaiting(outcome) {
    if (outcome === 'approval') focusCard();
    if (outcome === 'question') focusQuestion();
  }

  return { askApproval, settleApproval, decide, askQuestion, dropQuestion, answerQuestion, focusWaiting };
}
