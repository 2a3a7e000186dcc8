/**
 * The streaming display: what one request's streamed events
 * (docs/chat-protocol.md) change in the conversation while the answer
 * arrives. Statuses become the status line, text deltas grow a live
 * assistant bubble (unfinished Markdown closed by markdown.js's
 * closeOpenMarkdown), usage and model are kept. No DOM, no network: the
 * caller renders (`renderSoon`, at most once a frame).
 *
 * @module live
 */
import { closeOpenMarkdown } from './markdown.js';
import { describeServerAction } from './describe.js';

/**
 * @typedef {object} LiveAnswer  the text a request streams, while it streams
 * @property {string} text    the current step's text so far (the deltas since
 *   the step's first one; until a new step's first delta, the previous step's)
 * @property {boolean} stale  a new step has begun: its first delta replaces the text
 * @property {object|null} msg  its bubble: an assistant message with status
 *   'streaming', made at the first delta
 */

/** @returns {LiveAnswer} */
export function createLiveAnswer() {
  return { text: '', stale: false, msg: null };
}

/**
 * The display of one widget's streamed answers.
 * @param {object} deps
 * @param {import('./state.js').ChatState} deps.s  the conversation's state
 * @param {() => string} deps.newId   a fresh message id
 * @param {(patch: object) => void} deps.set  change the state and render now
 * @param {() => void} deps.renderSoon  render at the next frame
 */
export function createLiveDisplay({ s, newId, set, renderSoon }) {
  /** A status event: the status line; a heartbeat changes nothing. */
  function showStatus(liveAnswer, event) {
    /* a heartbeat repeats the current status to keep proxies from timing
     * out: what is shown stays, and no new step begins */
    if (event.heartbeat === true) return;
    if (event.status === 'thinking') {
      liveAnswer.stale = true;
      set({ statusText: 'Thinking…' });
    } else if (event.status === 'tool') {
      set({ statusText: `${describeServerAction(event.tool)}…` });
    } else if (event.status === 'waiting') {
      set({ statusText: 'Getting ready to act on the page…' });
    }
  }

  /** A text delta: the live bubble grows (made at the step's first text). */
  function showDelta(liveAnswer, delta) {
    if (typeof delta !== 'string' || delta === '') return;
    if (liveAnswer.stale || !liveAnswer.msg) s.statusText = 'Writing…'; /* a step's first text */
    if (liveAnswer.stale) {
      liveAnswer.text = '';
      liveAnswer.stale = false;
    }
    liveAnswer.text += delta;
    if (!liveAnswer.msg) {
      liveAnswer.msg = { id: newId(), role: 'assistant', content: '', timestamp: new Date().toISOString(), status: 'streaming' };
      s.messages.push(liveAnswer.msg);
    }
    liveAnswer.msg.content = closeOpenMarkdown(liveAnswer.text);
    renderSoon();
  }

  /**
   * Show one streamed event. Unknown kinds and fields are ignored;
   * tool-call and tool-result too: the result's serverCalls and calls say
   * the same, and are what is shown.
   * @param {LiveAnswer} liveAnswer
   * @param {any} event
   */
  function show(liveAnswer, event) {
    if (event.type === 'status') showStatus(liveAnswer, event);
    else if (event.type === 'delta') showDelta(liveAnswer, event.delta);
    else if (event.type === 'usage') {
      if (event.usage && typeof event.usage === 'object' && !Array.isArray(event.usage)) s.usage = event.usage;
      if (typeof event.model === 'string') s.model = event.model;
      renderSoon();
    }
  }

  /** The answer arrived: its bubble goes, the answer is shown as without streaming. */
  function drop(liveAnswer) {
    if (!liveAnswer?.msg) return;
    const at = s.messages.indexOf(liveAnswer.msg);
    if (at >= 0) s.messages.splice(at, 1);
    liveAnswer.msg = null;
  }

  return { show, drop };
}
