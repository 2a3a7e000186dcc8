/**
 * The chat protocol's errors (docs/chat-protocol.md, docs/http-api.md):
 * ChatError, the visitor's words for every error code the server or nginx
 * sends (ERROR_WORDS), Retry-After, and the few answers that are no error
 * code (a cut stream, an unreadable body). No DOM, no network: client.js
 * makes the requests.
 *
 * @module errors
 */


/** An error to show in the widget: `message` is written for the visitor. */
export class ChatError extends Error {
  /**
   * @param {string} code     the server's error code, or network / bad_answer / protocol_error / http_<status>
   * @param {string} message  plain words for the visitor
   * @param {{retry?: boolean}} [options]  retry: false when sending the same request again cannot help
   */
  constructor(code, message, { retry = true } = {}) {
    super(message);
    this.name = 'ChatError';
    this.code = code;
    this.retry = retry;
  }
}

/** Shown when the server has no Gemini API key (the `not_configured` error, or the status route's ready: false). */
export const NOT_SET_UP = 'The assistant is not set up yet. The site owner can fix this.';

/**
 * The visitor's words for every error code the server sends: the responder's
 * codes (docs/http-api.md and docs/chat-protocol.md) and nginx's own
 * (nginx/gemini-agent.conf). Our own words always: the server's message text
 * may name files or carry the upstream's wording, and is only logged to the
 * console. `retry: false` hides Retry where sending the same request again
 * cannot help; `wait: true` adds "Try again in N s." when Retry-After is known.
 * @type {Record<string, {text: string, retry?: boolean, wait?: boolean}>}
 */
export const ERROR_WORDS = {
  /* the request the widget sent */
  invalid_json: { text: "The server could not read the chat's last request. Reload the page, then try again.", retry: false },
  bad_request: { text: "The server did not accept the chat's last request. Reload the page, then try again.", retry: false },
  schema_violation: { text: "The chat's last request did not match what the server expects. Reload the page, then try again.", retry: false },
  bad_content_length: { text: "The chat's last request reached the server with a wrong length. Retry in a moment." },
  incomplete_body: { text: "The chat's last request did not reach the server whole. Check your connection, then retry." },
  unsupported_media_type: { text: "The server did not accept the format of the chat's requests. The site owner can fix this.", retry: false },
  payload_too_large: { text: 'This conversation has grown too large to send. Start a new chat to go on.', retry: false },
  page_state_too_large: { text: 'This page sends more state than the server accepts, so the assistant cannot work on it. The site owner can fix this.', retry: false },
  invalid_history: { text: 'This conversation can no longer be continued. Start a new chat to go on.', retry: false },
  history_tampered: {
    text: 'The server could not verify this conversation, so it cannot be continued. Start a new chat to go on.',
    retry: false,
  },
  approval_invalid: {
    text: 'This approval has expired or was already used, so the server did not act on it now. Ask again if you still want it done.',
    retry: false,
  },
  tool_name_conflict: { text: 'This page offers the assistant a tool name the server reserves, so the assistant cannot work on it. The site owner can fix this.', retry: false },
  /* where the widget sent it */
  not_found: { text: 'The assistant is not available at this address. The site owner can fix this.', retry: false },
  unknown_action: { text: "This server does not offer the assistant's chat. The site owner can fix this.", retry: false },
  method_not_allowed: { text: "The server does not accept the chat's requests this way. The site owner can fix this.", retry: false },
  /* the server and its configuration */
  not_configured: { text: NOT_SET_UP, retry: false },
  config_error: { text: 'The assistant is not configured correctly. The site owner can fix this.', retry: false },
  action_failed: { text: 'A server action failed while answering. Retry in a moment.' },
  overloaded: { text: 'The assistant is answering many visitors right now.', wait: true },
  budget_exhausted: { text: 'The assistant has reached its usage limit for now.', wait: true },
  budget_unavailable: { text: 'The assistant cannot check its usage limits right now, so it is not answering. Retry in a moment.' },
  internal_error: { text: 'The server ran into a problem. Retry in a moment.' },
  /* the model service (Gemini) */
  upstream_auth: { text: "The AI service refused this site's access key. The site owner can fix this.", retry: false },
  upstream_rejected: { text: 'The AI service could not answer this request. Retry, or start a new chat if it happens again.' },
  upstream_rate_limited: { text: 'The AI service is busy right now.', wait: true },
  upstream_unavailable: { text: 'The AI service is not available right now. Retry in a moment.' },
  upstream_timeout: { text: 'The AI service took too long to answer. Retry, or ask for something smaller.' },
  upstream_bad_response: { text: 'The AI service sent an answer the assistant could not use. Retry, or rephrase your request.' },
  /* nginx in front of the server */
  rate_limited: { text: 'Too many requests from here right now.', wait: true },
  responder_unavailable: { text: 'The assistant service is not running right now. Try again later.' },
  service_unavailable: { text: 'The assistant service is overloaded right now. Try again later.' },
  responder_timeout: { text: 'The assistant service did not answer in time. Retry in a moment.' },
};

/**
 * Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or null.
 * @param {string|null|undefined} value
 * @param {number} [now=Date.now()]
 */
export function retryAfterSeconds(value, now = Date.now()) {
  const v = String(value ?? '').trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** @param {number|null} seconds */
function waitWords(seconds) {
  if (seconds === null) return ' Wait a moment, then retry.';
  if (seconds < 120) return ` Try again in ${Math.max(1, seconds)} s.`;
  if (seconds < 2 * 3600) return ` Try again in ${Math.ceil(seconds / 60)} min.`;
  /* a daily budget can be hours away */
  return ` Try again in ${Math.ceil(seconds / 3600)} h.`;
}

/**
 * Turn a failed answer (the JSON error envelope, or none) into a ChatError
 * in plain words. Exported for tests.
 * @param {number} status
 * @param {any} body        parsed JSON or undefined
 * @param {string|null} [retryAfter]  the Retry-After header
 * @param {number} [now]
 * @param {{emptyHistory?: boolean}} [request]  what was sent: with no history
 *   yet, a request that is too large is the page's doing, and a new chat cannot help
 * @returns {ChatError}
 */
export function explainError(status, body, retryAfter = null, now = Date.now(), request = {}) {
  const sent = typeof body?.error?.code === 'string' ? body.error.code : '';
  const code = sent || `http_${status}`;
  let entry = Object.hasOwn(ERROR_WORDS, code) ? ERROR_WORDS[code] : null;
  if (!entry && status === 413) entry = ERROR_WORDS.payload_too_large;
  if (entry === ERROR_WORDS.payload_too_large && request.emptyHistory) entry = ERROR_WORDS.page_state_too_large;
  if (!entry && status === 429) entry = ERROR_WORDS.rate_limited;
  if (entry) {
    const text = entry.wait ? entry.text + waitWords(retryAfterSeconds(retryAfter, now)) : entry.text;
    return new ChatError(code, text, { retry: entry.retry !== false });
  }
  if (status >= 400 && status < 500)
    return new ChatError(code, `The server did not accept the chat's request (HTTP ${status}). Reload the page, then try again.`);
  return new ChatError(code, `The server could not answer (HTTP ${status}). Retry in a moment.`);
}

/**
 * The error of a stream's `error` line (the inner object of the HTTP error
 * envelope) in the visitor's words: the code's own words when we know it.
 * A stream has no Retry-After header: a budget spent at a later step says
 * when in `retryAfter` (seconds).
 * @param {any} error  `{code, message, retryAfter?}`
 * @returns {ChatError}
 */
export function streamError(error) {
  const code = typeof error?.code === 'string' ? error.code : '';
  const after = Number.isFinite(error?.retryAfter) && error.retryAfter >= 0 ? String(Math.ceil(error.retryAfter)) : null;
  if (code && Object.hasOwn(ERROR_WORDS, code)) return explainError(502, { error }, after);
  return new ChatError(code || 'stream_error', 'The answer was cut off by a problem on the server. Retry in a moment.');
}

/** The words for a stream that ended without its `result` or `error` line. */
export const INTERRUPTED = 'The connection was interrupted before the answer was complete. Retry in a moment.';

/** @param {number} status  an answer that is not what the chat reads */
export function unreadable(status) {
  return new ChatError('bad_answer', `The server sent an answer the chat cannot read (HTTP ${status}). Retry in a moment.`);
}

/**
 * An answer's body as JSON, or undefined when it is not JSON (an HTML page
 * from a proxy, say).
 * @param {string} text
 */
export function parseBody(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function abortError() {
  const e = new Error('The chat was stopped');
  e.name = 'AbortError';
  return e;
}
