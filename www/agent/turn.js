/**
 * The turn driver: the protocol loop of one visitor turn
 * (docs/chat-protocol.md). Post the request, show its stream, run the page
 * calls an answer asks for and submit their results, until the server
 * answers with text (or blocked), asks the visitor (an approval or a
 * question), the round-trip budget is spent, Stop is pressed, or a request
 * fails. It talks to client.js (requests) and state.js (the conversation),
 * and reports to the widget through the callbacks it is given: no DOM, no
 * storage of its own.
 *
 * @module turn
 */
import { ChatError, abortError } from './errors.js';
import { readApproval } from './decision.js';
import { readQuestion } from './question.js';
import { alignSignatures } from './history.js';
import { absorbAnswer, rememberStopped } from './state.js';
import { createLiveAnswer } from './live.js';

const BAD_ANSWER = 'The server sent an answer the chat cannot use. Try sending your message again.';

/**
 * @typedef {object} TurnState  the widget's named state the driver shares
 * @property {import('./state.js').ChatState} s
 * @property {{route: string, payload: object, card?: string}|{command: object}|null} failed
 *   the request that failed, for Retry
 * @property {{controller: AbortController}|null} run  while a loop (or a command) runs
 * @property {number} generation  bumped by clear() and destroy(): a late result is dropped
 * @property {boolean} destroyed
 */

/**
 * @typedef {object} TurnDeps
 * @property {TurnState} w
 * @property {{post: Function}} client  client.js's
 * @property {number} maxRoundTrips
 * @property {() => object} pageNow  {toolDefinitions, pageState}: what every request carries of the page
 * @property {(calls: object[], signal: AbortSignal, live: () => boolean) => Promise<object[]>} runCalls
 * @property {{show: Function, drop: Function}} live  live.js's display
 * @property {(role: string, content: string, extra?: object) => void} addMessage
 * @property {(patch: object) => void} set
 * @property {() => void} render
 * @property {() => void} persist
 * @property {boolean} canApprove  the template has the approval buttons
 * @property {(a: object, results: object[]) => void} askApproval
 * @property {(q: object, results: object[]) => void} askQuestion
 * @property {(outcome: string) => void} onDone  the loop ended (still current): focus, the page told
 * @property {{error?: Function}} log
 */

/**
 * @typedef {object} Loop  one run of drive(): what its parts share
 * @property {AbortController} controller
 * @property {() => boolean} live  false after clear() or destroy()
 * @property {{route: string, payload: object, card?: string}} request  the request to send next
 * @property {object|null} inFlight  the request while it waits for its answer
 * @property {import('./live.js').LiveAnswer|null} liveAnswer
 * @property {number} trips  requests answered
 */

/** @param {TurnDeps} d */
export function createTurnDriver(d) {
  const { w } = d;

  /** What every request carries besides its payload: the conversation and the page now. */
  function requestBody(payload) {
    const { s } = w;
    return {
      ...payload,
      history: s.history,
      signatures: alignSignatures(s.signatures, s.history.length),
      ...(s.conversation ? { conversation: s.conversation } : {}),
      ...d.pageNow(),
    };
  }

  /** Take in what an answer carries; the server actions it ran are one line each. */
  function absorb(answer) {
    const lines = absorbAnswer(w.s, answer);
    d.persist();
    if (lines) for (const l of lines) d.addMessage('action', l.content, { status: l.status });
    else d.render();
  }

  /** Send the loop's request; its streamed events show as they come. Resolves with the answer, taken in. */
  async function postRequest(loop) {
    const { controller, live, request } = loop;
    w.failed = request;
    loop.inFlight = request;
    const streamed = createLiveAnswer();
    loop.liveAnswer = streamed;
    const answer = await d.client.post(request.route, requestBody(request.payload), controller.signal, (event) => {
      if (live() && !controller.signal.aborted) d.live.show(streamed, event);
    });
    loop.inFlight = null;
    loop.trips++;
    w.failed = null;
    if (!live()) throw abortError();
    d.live.drop(loop.liveAnswer);
    loop.liveAnswer = null;
    absorb(answer);
    return answer;
  }

  /** The model's words that come with calls, when it has some. */
  function sayAlong(answer) {
    if (typeof answer.message === 'string' && answer.message.trim()) d.addMessage('assistant', answer.message);
  }

  /** Run the page calls of an answer (none: none); a Stop meanwhile ends the loop. */
  async function runAnswerCalls(loop, calls) {
    const results = calls?.length ? await d.runCalls(calls, loop.controller.signal, loop.live) : [];
    if (loop.controller.signal.aborted || !loop.live()) throw abortError();
    return results;
  }

  /**
   * An answer that waits for the visitor (approval-required or question):
   * the page calls of the same turn run first, then the card asks.
   * @returns {Promise<string>} the loop's outcome
   */
  async function askVisitor(loop, answer) {
    const approvalAsked = answer.type === 'approval-required';
    const wanted = approvalAsked ? readApproval(answer.approval) : readQuestion(answer.question);
    if (!wanted || (answer.calls !== undefined && !Array.isArray(answer.calls))) throw new ChatError('bad_answer', BAD_ANSWER);
    sayAlong(answer);
    const results = await runAnswerCalls(loop, answer.calls);
    if (!approvalAsked) {
      d.askQuestion(wanted, results);
      return 'question';
    }
    if (!d.canApprove) {
      d.addMessage(
        'system',
        `The assistant wants to do something that needs your approval (${wanted.preview}), but this page's chat cannot ask for it, so it was not done.`,
      );
      return 'approval-unavailable';
    }
    d.askApproval(wanted, results);
    return 'approval';
  }

  /**
   * Act on one answer: the loop's outcome when it ends here, or null when
   * the page calls ran and their results are the next request.
   * @returns {Promise<string|null>}
   */
  async function handleAnswer(loop, answer) {
    if (answer.type === 'response') {
      d.addMessage('assistant', answer.message ?? '');
      return 'response';
    }
    if (answer.type === 'blocked') {
      d.addMessage('system', answer.message || 'The model declined to answer this. Try rephrasing your request.');
      return 'blocked';
    }
    if (answer.type === 'approval-required' || answer.type === 'question') return askVisitor(loop, answer);
    if (answer.type !== 'tool-calls' || !Array.isArray(answer.calls) || answer.calls.length === 0)
      throw new ChatError('bad_answer', BAD_ANSWER);
    sayAlong(answer);
    if (loop.trips >= d.maxRoundTrips) {
      d.addMessage('system', `Stopped after ${d.maxRoundTrips} round trips without a final answer. Ask me to continue if you want me to go on.`);
      return 'limit';
    }
    const results = await runAnswerCalls(loop, answer.calls);
    d.set({ statusText: 'Thinking…' });
    loop.request = { route: 'geminiAgent.submitToolResults', payload: { results } };
    return null;
  }

  /** Stop ended the loop: the partial answer marked, the history given what it may (state.js rememberStopped). */
  function endStopped(loop) {
    w.failed = null;
    if (!loop.live()) return 'stopped';
    if (loop.liveAnswer?.msg) loop.liveAnswer.msg.status = 'stopped';
    if (loop.inFlight) rememberStopped(w.s, loop.inFlight, loop.liveAnswer?.text ?? '');
    d.addMessage('system', 'Stopped.');
    return 'stopped';
  }

  /**
   * The loop ended by Stop or a failure: the partial answer is marked, the
   * error is shown.
   * @returns {string} the outcome
   */
  function endEarly(loop, e) {
    if (loop.controller.signal.aborted || e?.name === 'AbortError') return endStopped(loop);
    if (!loop.live()) return 'error';
    const { s } = w;
    if (loop.liveAnswer?.msg) loop.liveAnswer.msg.status = 'incomplete';
    const err = e instanceof ChatError ? e : new ChatError('client', `Something went wrong in the chat: ${e?.message || e}`);
    /* the ticket was refused: the card must not say the decision was carried out */
    if (err.code === 'approval_invalid' && loop.request.card) {
      const decided = s.messages.find((m) => m.id === loop.request.card);
      if (decided) decided.status = 'invalid';
    }
    if (!(e instanceof ChatError)) d.log?.error?.('gemini-chat:', e);
    s.error = err.message;
    s.errorCode = err.code;
    if (err.retry === false) w.failed = null; /* the same request again cannot help */
    return 'error';
  }

  /** The loop is over: idle again, saved, and the widget told. */
  function finishLoop(loop, outcome) {
    if (w.run?.controller === loop.controller) w.run = null;
    if (loop.live()) {
      d.persist();
      d.set({ isLoading: false, statusText: '', outcome });
      d.onDone(outcome);
    } else if (!w.destroyed && !w.run) {
      d.set({ isLoading: false, statusText: '' });
    }
  }

  /**
   * One visitor turn: post `payload` to `route` and go on until the loop
   * ends. Never rejects.
   * @param {string} route
   * @param {object} payload
   * @param {string} [card]  an approval decision: the id of its card
   */
  async function drive(route, payload, card) {
    const gen = w.generation;
    /** @type {Loop} */
    const loop = {
      controller: new AbortController(),
      live: () => gen === w.generation && !w.destroyed,
      request: { route, payload, card },
      inFlight: null,
      liveAnswer: null,
      trips: 0,
    };
    w.run = { controller: loop.controller };
    w.failed = null;
    d.set({ isLoading: true, error: '', errorCode: '', outcome: '', statusText: 'Thinking…' });
    let outcome = null;
    try {
      while (outcome === null) outcome = await handleAnswer(loop, await postRequest(loop));
    } catch (e) {
      outcome = endEarly(loop, e);
    } finally {
      finishLoop(loop, outcome ?? 'error');
    }
  }

  return { drive };
}
