/**
 * The conversation kept for the tab (sessionStorage by default): the
 * messages shown, the signed history, the conversation's key, the approval
 * that waits, and the panel's state, so a reload keeps the conversation.
 * Storage may be missing, full or refused (privacy mode): the chat then
 * works without reload memory. No DOM, no network.
 *
 * @module storage
 */
import { alignSignatures } from './history.js';

/** The shape saved; another version is not read. */
export const STORAGE_VERSION = 1;
/** The newest messages kept (the history is kept whole: the server needs it). */
export const MAX_STORED_MESSAGES = 300;

/**
 * The window's sessionStorage, or null where reading it throws (storage disabled).
 * @param {Window|null|undefined} win
 * @returns {Storage|null}
 */
export function tabStorage(win) {
  try {
    return win?.sessionStorage ?? null;
  } catch {
    return null;
  }
}

/**
 * The saved conversation under `key`, checked, or null (none, another
 * version, unreadable). A message saved while streaming is incomplete; an
 * approval card without its approval (or not the one that waits) is
 * undecided.
 * @param {Storage|null} storage
 * @param {string} key
 */
export function loadSaved(storage, key) {
  try {
    const raw = storage?.getItem(key);
    if (!raw) return null;
    const saved = JSON.parse(raw);
    if (saved?.v !== STORAGE_VERSION) return null;
    const messages = Array.isArray(saved.messages)
      ? saved.messages
          .filter((m) => m && typeof m.id === 'string' && typeof m.role === 'string' && typeof m.content === 'string')
          /* saved while its answer was streaming: that request is gone */
          .map((m) => (m.status === 'streaming' ? { ...m, status: 'incomplete' } : m))
      : [];
    const history = Array.isArray(saved.history) ? saved.history : [];
    /* the approval the visitor has not decided yet: its card must be there too */
    const a = saved.approval;
    const card = a && typeof a === 'object' ? messages.find((m) => m.id === a.msgId && m.role === 'approval') : null;
    const approval =
      card && card.status === 'pending' && typeof a.id === 'string' && typeof a.ticket === 'string' && Array.isArray(a.results)
        ? { msgId: a.msgId, id: a.id, ticket: a.ticket, results: a.results }
        : null;
    for (const m of messages) {
      if (m.role === 'approval' && m.status === 'pending' && m !== card) m.status = 'undecided';
    }
    if (card && !approval) card.status = 'undecided';
    return {
      messages,
      history,
      /* saved before the server signed histories: all null (docs/chat-protocol.md) */
      signatures: alignSignatures(saved.signatures, history.length),
      conversation: typeof saved.conversation === 'string' ? saved.conversation : '',
      approval,
      isExpanded: saved.isExpanded === true,
      isOpen: saved.isOpen === true,
      model: typeof saved.model === 'string' ? saved.model : '',
    };
  } catch {
    return null;
  }
}

/**
 * Save the conversation under `key`; a full or refused storage is ignored.
 * @param {Storage|null} storage
 * @param {string} key
 * @param {{messages: object[], history: object[], signatures: unknown[], conversation: string, isExpanded: boolean, isOpen: boolean, model: string}} s
 * @param {object|null} approval  the approval that waits: {msgId, id, ticket, results}
 */
export function saveConversation(storage, key, s, approval) {
  if (!storage) return;
  try {
    storage.setItem(
      key,
      JSON.stringify({
        v: STORAGE_VERSION,
        messages: s.messages.slice(-MAX_STORED_MESSAGES),
        history: s.history,
        signatures: s.signatures,
        conversation: s.conversation,
        approval,
        isExpanded: s.isExpanded,
        isOpen: s.isOpen,
        model: s.model,
      }),
    );
  } catch {
    /* quota or privacy mode: keep going without reload memory */
  }
}
