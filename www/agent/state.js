/**
 * The conversation's state, as the widget holds it: the messages shown, the
 * signed history and the conversation's key, what the widget is doing
 * (isLoading, statusText, outcome, error), the panel (isExpanded, isOpen,
 * isPeek), and what the server said about itself. The named transitions
 * here change it; deriveView computes the contract's tags from it. No DOM,
 * no network: chat.js renders (template.js) and requests (client.js).
 *
 * @module state
 */
import { NOT_SET_UP } from './errors.js';
import { describeServerCall, describeUsage } from './describe.js';
import { alignSignatures, answerPendingSigned, latestPlan, waitingServerCall } from './history.js';
import { sharedTurn } from './commands.js';

/** Shown when the answering model is the project's offline demo model. */
export const OFFLINE_NOTICE = 'Offline demo model — answers are scripted';

/** @param {unknown} model */
export function isOfflineModel(model) {
  return typeof model === 'string' && model.startsWith('offline-demo');
}

/**
 * @typedef {object} ChatState
 * @property {object[]} messages   the ChatMessage list (chat.js documents it)
 * @property {object[]} history    Gemini `contents`, as the server returned it
 * @property {(string|null)[]} signatures  the server's, one per history turn (null: none needed)
 * @property {string} conversation the server's key of this conversation ('' until it gives one)
 * @property {boolean} isExpanded  full history (true) or compact mode
 * @property {string} model        the model that answered last
 * @property {boolean} isLoading
 * @property {string} error        the visitor's words for the last failure
 * @property {string} errorCode
 * @property {string} statusText   what the widget does now ("Thinking…")
 * @property {object|null} usage   the last request's usage
 * @property {string} outcome      how the last loop ended ('response', 'error', 'stopped', …)
 * @property {boolean} isOpen      the panel, in launcher mode
 * @property {boolean} unread      an answer arrived while the panel was closed
 * @property {boolean} isPeek      the phone's sheet is half height: a page action showed the page
 * @property {{ready: boolean|null, model: string}} server  GET geminiAgent.status, when the server has it
 */

/**
 * A fresh state, from the saved conversation (storage.js loadSaved) when there is one.
 * @param {ReturnType<typeof import('./storage.js').loadSaved>} saved
 * @param {boolean} expanded  the page's choice when nothing was saved
 * @returns {ChatState}
 */
export function createState(saved, expanded) {
  return {
    messages: saved?.messages ?? [],
    history: saved?.history ?? [],
    signatures: saved?.signatures ?? [],
    conversation: saved?.conversation ?? '',
    isExpanded: saved ? saved.isExpanded : Boolean(expanded),
    model: saved?.model ?? '',
    isLoading: false,
    error: '',
    errorCode: '',
    statusText: '',
    usage: null,
    outcome: '',
    isOpen: saved?.isOpen ?? false,
    unread: false,
    isPeek: false,
    server: { ready: null, model: '' },
  };
}

/**
 * The messages since the visitor's last one, split for compact mode: the
 * lines before the turn's last answer (activity), that answer, and the lines
 * after it (notesAfter: "Stopped." comes after the text it stopped).
 * @param {object[]} msgs
 */
export function currentTurn(msgs) {
  let u = msgs.length - 1;
  while (u >= 0 && msgs[u].role !== 'user') u--;
  const turn = msgs.slice(u + 1);
  const answers = turn.filter((m) => m.role === 'assistant');
  const lastAnswer = answers.length ? answers[answers.length - 1] : null;
  const cut = lastAnswer ? turn.indexOf(lastAnswer) : turn.length;
  const isNote = (m) => m.role === 'action' || m.role === 'system' || m.role === 'command';
  return {
    user: u >= 0 ? msgs[u] : null,
    lastAnswer,
    activity: turn.slice(0, cut).filter(isNote),
    notesAfter: turn.slice(cut).filter(isNote),
    approvals: turn.filter((m) => m.role === 'approval'),
  };
}

/**
 * Whether the last turn succeeded: the Usage disclosure is a succeeded
 * turn's (not a failed or stopped one's, nor one still running).
 * @param {ChatState} s
 */
export function turnSucceeded(s) {
  return !s.isLoading && !s.error && s.outcome !== 'stopped' && s.outcome !== 'error';
}

/**
 * The tags the template shows that are computed from the state.
 * @param {ChatState} s
 * @param {{failed: object|null, approval: object|null, launcherMode: boolean}} ctx
 */
export function deriveView(s, { failed, approval, launcherMode }) {
  const msgs = s.messages;
  const turn = currentTurn(msgs);
  const offline = isOfflineModel(s.model) || isOfflineModel(s.server.model);
  const plan = latestPlan(s.history) ?? [];
  const done = plan.filter((st) => st.status === 'done').length;
  return {
    todoSteps: plan,
    todoSummary: plan.length ? `Plan: ${done} of ${plan.length} done` : '',
    notice: s.server.ready === false ? NOT_SET_UP : offline ? OFFLINE_NOTICE : '',
    hasMessages: msgs.length > 0,
    canRetry: failed !== null && !s.isLoading,
    isLauncher: launcherMode,
    isOpen: !launcherMode || s.isOpen,
    lastUserMessage: turn.user ? turn.user.content : '',
    lastAssistantMessage: turn.lastAnswer ? turn.lastAnswer.content : '',
    lastAssistantStatus: turn.lastAnswer?.status ?? '',
    isStreaming: msgs.some((m) => m.status === 'streaming'),
    usageText: turnSucceeded(s) ? describeUsage(s.usage, s.model) : '',
    activity: turn.activity,
    notesAfter: turn.notesAfter,
    approvals: turn.approvals,
    awaitingApproval: approval !== null && !s.isLoading,
  };
}

/**
 * Take in what an answer of the chat protocol carries: the signed history,
 * the conversation's key, the model, the usage; an answer means the server
 * is set up. Returns the lines of the server actions it ran ({content,
 * status}), or null when it names none.
 * @param {ChatState} s
 * @param {any} answer
 */
export function absorbAnswer(s, answer) {
  if (Array.isArray(answer.history)) {
    s.history = answer.history;
    s.signatures = alignSignatures(answer.signatures, answer.history.length);
  }
  if (typeof answer.conversation === 'string') s.conversation = answer.conversation;
  if (typeof answer.model === 'string') s.model = answer.model;
  if (answer.usage && typeof answer.usage === 'object') s.usage = answer.usage;
  if (s.server.ready === false) s.server = { ...s.server, ready: true };
  if (!Array.isArray(answer.serverCalls)) return null;
  return answer.serverCalls.map((c) => ({ content: describeServerCall(c), status: c?.ok === false ? 'failed' : 'ok' }));
}

/**
 * The history and signatures with the page calls still waiting answered
 * "not run", as the server would (or as they are when nothing waits).
 * @param {ChatState} s
 */
function settledHistory(s) {
  return answerPendingSigned(s.history, s.signatures) ?? { history: s.history, signatures: alignSignatures(s.signatures, s.history.length) };
}

/**
 * Stop ended `request` before its answer, after `partial` text was shown
 * (chat.js's rememberStopped says what the history gets, and why).
 * @param {ChatState} s
 * @param {{route: string, payload: any}} request
 * @param {string} partial
 */
export function rememberStopped(s, request, partial) {
  if (request.payload?.approval) return;
  if (request.route === 'geminiAgent.submitToolResults') {
    const done = answerPendingSigned(s.history, s.signatures, request.payload?.results ?? []);
    if (done) {
      s.history = done.history;
      s.signatures = done.signatures;
    }
    return;
  }
  if (!partial.trim() || waitingServerCall(s.history)) return;
  const done = settledHistory(s);
  const message = { role: 'user', parts: [{ text: String(request.payload?.message ?? '') }] };
  s.history = [...done.history, message];
  s.signatures = [...done.signatures, null];
}

/**
 * Add a shared command's output to the history as a user turn (signature
 * null: the server accepts a visitor's turn at the end), after answering
 * page calls still waiting "not run". A server action's call waiting for the
 * visitor's approval keeps it out: that call's answer is the server's to
 * give. Returns whether it was added.
 * @param {ChatState} s
 * @param {string} name
 * @param {string} output
 */
export function shareOutput(s, name, output) {
  if (waitingServerCall(s.history)) return false;
  const done = settledHistory(s);
  s.history = [...done.history, sharedTurn(name, output)];
  s.signatures = [...done.signatures, null];
  return true;
}
