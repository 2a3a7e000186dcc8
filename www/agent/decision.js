/**
 * The approval of a server action (an `approval-required` answer,
 * docs/chat-protocol.md) as a visitor reads it.
 *
 * @module decision
 */
import { actionWords } from './describe.js';

/**
 * One argument of an approval, as the card lists it: its name and its value
 * in words (text as it is, anything else as JSON).
 * @param {string} name
 * @param {unknown} value
 */
function argLine(name, value) {
  let text;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return { id: name, name, value: text };
}

/**
 * The `approval` of an approval-required answer, checked: what the card
 * shows and what the decision must carry back. Null when the server sent
 * something the widget cannot use (no id or no ticket). Exported for tests.
 * @param {any} approval  {id, tool, args, reason, preview, ticket, expiresAt}
 */
export function readApproval(approval) {
  if (!approval || typeof approval !== 'object') return null;
  const { id, ticket } = approval;
  if (typeof id !== 'string' || id === '' || typeof ticket !== 'string' || ticket === '') return null;
  const tool = typeof approval.tool === 'string' ? approval.tool : '';
  const args = approval.args && typeof approval.args === 'object' && !Array.isArray(approval.args) ? approval.args : {};
  const expiry = Number.isFinite(approval.expiresAt) ? new Date(approval.expiresAt) : null;
  const words = tool ? actionWords(tool).join(' ') : 'an action';
  return {
    id,
    ticket,
    tool,
    preview: typeof approval.preview === 'string' && approval.preview.trim() ? approval.preview : `Run ${words} (${tool || 'server action'}).`,
    reason: typeof approval.reason === 'string' ? approval.reason : '',
    args: Object.entries(args).map(([k, v]) => argLine(k, v)),
    expires: expiry && !Number.isNaN(expiry.getTime()) ? expiry.toISOString() : '',
  };
}
