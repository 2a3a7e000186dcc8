/**
 * The widget's screen: the one place the named state is written to the
 * view (view.js) and to the tab's storage (storage.js). A message is added,
 * the state patched, a render done now or at the next animation frame (for
 * text that streams in). The snapshot is what the view and the handle's
 * `state` read: the waiting approval without its ticket (the ticket is only
 * ever sent back).
 *
 * @module screen
 */
import { deriveView } from './state.js';
import { saveConversation } from './storage.js';

/**
 * @param {object} d
 * @param {object} d.w  the widget's named state: s, failed, approval, question, launcherMode, destroyed
 * @param {{render: Function}} d.view  view.js's
 * @param {Window|null} d.win  for the animation frame
 * @param {Storage|null} d.storage
 * @param {string} d.storageKey
 */
export function createScreen({ w, view, win, storage, storageKey }) {
  let seq = 0;
  let frameQueued = false; /* a render is scheduled for the next animation frame */

  function snapshot() {
    const { s, failed, approval, question, launcherMode } = w;
    return {
      ...s,
      ...deriveView(s, { failed, approval, launcherMode }),
      approval: approval ? { id: approval.id, card: approval.msgId } : null,
      question: question ? { id: question.id, questions: question.questions } : null,
    };
  }

  function render() {
    if (w.destroyed) return;
    view.render(snapshot(), { launcherMode: w.launcherMode, unread: w.s.unread, isPeek: w.s.isPeek });
  }

  /** Render at the next animation frame (at most one render a frame). */
  function renderSoon() {
    if (frameQueued || w.destroyed) return;
    frameQueued = true;
    const later =
      typeof win?.requestAnimationFrame === 'function'
        ? (f) => win.requestAnimationFrame(f)
        : (f) => (win?.setTimeout ?? setTimeout)(f, 16);
    later(() => {
      frameQueued = false;
      render();
    });
  }

  function persist() {
    saveConversation(storage, storageKey, w.s, w.approval);
  }

  function newId() {
    return `m${Date.now().toString(36)}-${(seq++).toString(36)}`;
  }

  /** @param {{status?: 'ok'|'failed'}} [extra]  status: for action lines */
  function addMessage(role, content, extra = {}) {
    w.s.messages.push({
      id: newId(),
      role,
      content: String(content),
      timestamp: new Date().toISOString(),
      ...(extra.status ? { status: extra.status } : {}),
    });
    if ((role === 'assistant' || role === 'system') && w.launcherMode && !w.s.isOpen) w.s.unread = true;
    persist();
    render();
  }

  function set(patch) {
    Object.assign(w.s, patch);
    render();
  }

  return { snapshot, render, renderSoon, persist, newId, addMessage, set };
}
