/**
 * The chat protocol's client (docs/chat-protocol.md): the requests to the
 * chat routes, streamed answers (NDJSON, read by ndjson.js) and every failure
 * turned into a ChatError in the visitor's words (errors.js), with the
 * Retry-After wait. No DOM and no conversation state: the caller passes the
 * history and the page's state with every request, and owns the
 * AbortSignal that stops one.
 *
 *   const client = createChatClient({ endpoint, fetch, stream: true });
 *   const answer = await client.post('geminiAgent.sendMessage', body, signal, onEvent);
 *
 * @module client
 */
import { isNdjson, NDJSON_TYPE } from './ndjson.js';
import { readResultStream } from './stream.js';
import { UNREACHABLE, diagnoseNetworkError } from './origin.js';
import { ChatError, explainError, streamError, INTERRUPTED, unreadable, parseBody, abortError } from './errors.js';
import { readCommands } from './commands.js';

/**
 * @typedef {object} ChatClient
 * @property {string} statusUrl  GET <endpoint>/geminiAgent.status
 * @property {(route: string, body: object, signal: AbortSignal, onEvent?: (event: object) => void) => Promise<object>} post
 * @property {(url: string) => Promise<ChatError>} networkError
 * @property {(signal?: AbortSignal) => Promise<{ready: boolean|null, model: string}|null>} status
 * @property {(url: string) => Promise<object[]|null>} commands  the user commands (null: not reached)
 * @property {(url: string, name: string, args: string, signal: AbortSignal) => Promise<{output: string, shareWithModel?: boolean}>} command
 */

/**
 * @typedef {object} ClientConfig  what every request of one client shares
 * @property {string} base       the endpoint without a trailing slash
 * @property {string} statusUrl
 * @property {typeof fetch} fetch
 * @property {boolean} stream
 * @property {{warn?: Function, error?: Function}|null} log
 * @property {Location|undefined} location
 */

/**
 * The error for a request to `url` that fetch could not make. On another
 * origin, the server may be there but not accept this page's origin, or
 * answer (nginx's 502, say) where the preflight could not (origin.js).
 * @param {string} url
 * @returns {Promise<ChatError>}
 */
async function networkError(cfg, url) {
  const found = await diagnoseNetworkError({ fetch: cfg.fetch, url, probeUrl: cfg.statusUrl, location: cfg.location });
  if (found.kind === 'refused') {
    cfg.log?.warn?.(`gemini-chat: ${url} is not readable from this origin (http.cors.allowOrigins)`);
    return new ChatError('origin_not_allowed', found.message, { retry: false });
  }
  if (found.kind === 'answer') {
    const res = found.response;
    const data = parseBody(await res.text().catch(() => ''));
    return explainError(res.status, data, res.headers?.get?.('Retry-After') ?? null);
  }
  return new ChatError('network', UNREACHABLE);
}

/**
 * POST one request of the chat protocol and resolve with its answer object.
 * With `stream` on, asks for NDJSON; an answer that is NDJSON is read line
 * by line (readAnswerStream), anything else as one JSON object, as without
 * streaming (a server or proxy that does not stream, and every error the
 * server finds before it starts a stream).
 * @param {string} route
 * @param {object} body
 * @param {AbortSignal} signal
 * @param {(event: object) => void} [onEvent]  each streamed event but the last
 * @returns {Promise<object>}
 */
async function post(cfg, route, body, signal, onEvent) {
  const url = `${cfg.base}/${route}`;
  let res;
  let text;
  try {
    res = await cfg.fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: cfg.stream ? NDJSON_TYPE : 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
    if (signal.aborted) throw abortError();
    if (res.ok && res.body && isNdjson(res.headers?.get?.('Content-Type')))
      return await readAnswerStream(cfg, route, res, signal, onEvent);
    text = await res.text();
  } catch (e) {
    if (signal.aborted || e?.name === 'AbortError') throw abortError();
    if (e instanceof ChatError) throw e;
    const err = await networkError(cfg, url);
    throw signal.aborted ? abortError() : err;
  }
  if (signal.aborted) throw abortError();
  const data = parseBody(text);
  if (!res.ok) {
    const emptyHistory = !Array.isArray(body.history) || body.history.length === 0;
    const err = explainError(res.status, data, res.headers?.get?.('Retry-After') ?? null, Date.now(), { emptyHistory });
    const said = typeof data?.error?.message === 'string' ? `: ${data.error.message}` : '';
    cfg.log?.warn?.(`gemini-chat: ${route} answered HTTP ${res.status} (${err.code})${said}`);
    throw err;
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    throw unreadable(res.status);
  return data;
}

/**
 * Read a streamed answer: every event goes to `onEvent` until the `result`
 * line, whose object is the answer (exactly what the route answers without
 * streaming), or the `error` line, thrown in the visitor's words. A stream
 * that ends, or breaks, before either is an "interrupted" error.
 * @returns {Promise<object>}
 */
async function readAnswerStream(cfg, route, res, signal, onEvent) {
  const show = (event) => {
    try {
      onEvent?.(event);
    } catch (e) {
      cfg.log?.error?.('gemini-chat: a streamed event could not be shown', e);
    }
  };
  let end;
  try {
    end = await readResultStream(res.body, show, signal);
  } catch {
    throw abortError();
  }
  const { last, broken } = end;
  if (broken) {
    if (signal.aborted) throw abortError();
    cfg.log?.warn?.(`gemini-chat: ${route}: the stream broke: ${broken?.message || broken}`);
  }
  if (last?.type === 'result') {
    const data = last.result;
    if (!data || typeof data !== 'object' || Array.isArray(data))
      throw new ChatError('bad_answer', 'The server sent an answer the chat cannot read. Retry in a moment.');
    return data;
  }
  if (last?.type === 'error') {
    const err = streamError(last.error);
    const said = typeof last.error?.message === 'string' ? `: ${last.error.message}` : '';
    cfg.log?.warn?.(`gemini-chat: ${route} failed while streaming (${err.code})${said}`);
    throw err;
  }
  throw new ChatError('interrupted', INTERRUPTED);
}

/** What the server says about itself ({ready, model}), or null: no
 * status route, offline, not JSON. Never rejects. */
async function status(cfg, signal) {
  if (typeof cfg.fetch !== 'function') return null;
  try {
    const res = await cfg.fetch(cfg.statusUrl, {
      method: 'GET',
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
      signal,
    });
    if (!res?.ok) return null;
    const data = JSON.parse(await res.text());
    if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
    return {
      ready: typeof data.ready === 'boolean' ? data.ready : null,
      model: typeof data.model === 'string' ? data.model : '',
    };
  } catch {
    return null;
  }
}

/**
 * The words for a command that failed: the envelope's code, as other errors.
 * @param {string} name
 * @param {number} status
 * @param {any} data
 * @param {string|null} retryAfter
 */
export function commandError(name, status, data, retryAfter) {
  const code = data?.error?.code;
  if (code === 'unknown_action') return new ChatError(code, `This site has no command /${name} now.`, { retry: false });
  if (code === 'action_failed') return new ChatError(code, `The command /${name} failed. Retry in a moment.`);
  return explainError(status, data, retryAfter);
}

/**
 * GET <url>: the site's user commands (commands.js readCommands); a 404, an
 * empty list or an answer that is not the listing is none ([]); null when
 * the server was not reached (worth asking again).
 * @param {ClientConfig} cfg
 * @param {string} url
 */
async function listCommands(cfg, url) {
  let res;
  try {
    res = await cfg.fetch(url, { method: 'GET', headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  } catch {
    return null;
  }
  try {
    return res?.ok ? readCommands(JSON.parse(await res.text())) : [];
  } catch {
    return [];
  }
}

/**
 * POST <url>/<name> {args}: the command's answer ({output, shareWithModel}),
 * or a ChatError in the visitor's words.
 * @param {ClientConfig} cfg
 * @param {string} url  where the commands are
 * @param {string} name
 * @param {string} args
 * @param {AbortSignal} signal
 */
async function runCommand(cfg, url, name, args, signal) {
  const to = `${url}/${encodeURIComponent(name)}`;
  let res;
  let text;
  try {
    res = await cfg.fetch(to, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ args }),
      credentials: 'same-origin',
      signal,
    });
    text = await res.text();
  } catch (e) {
    if (signal.aborted || e?.name === 'AbortError') throw abortError();
    const err = await networkError(cfg, to);
    throw signal.aborted ? abortError() : err;
  }
  const data = parseBody(text);
  if (!res.ok) {
    const err = commandError(name, res.status, data, res.headers?.get?.('Retry-After') ?? null);
    const said = typeof data?.error?.message === 'string' ? `: ${data.error.message}` : '';
    cfg.log?.warn?.(`gemini-chat: command ${name} answered HTTP ${res.status} (${err.code})${said}`);
    throw err;
  }
  if (typeof data?.output !== 'string') throw unreadable(res.status);
  return data;
}

/**
 * @param {object} options
 * @param {string} options.endpoint  where the chat routes are (`<base>/_jay/actions`)
 * @param {typeof fetch} options.fetch
 * @param {boolean} [options.stream=true]  ask for NDJSON
 * @param {{warn?: Function, error?: Function}|null} [options.console]  where problems are logged
 * @param {Location} [options.location]  the page's, to tell another origin's refusal (origin.js)
 * @returns {ChatClient}
 */
export function createChatClient({ endpoint, fetch: fetchFn, stream = true, console: log = null, location }) {
  const base = String(endpoint).replace(/\/+$/, '');
  /** @type {ClientConfig} */
  /* called as a plain function: the browser's fetch refuses another `this` (Illegal invocation) */
  const call = typeof fetchFn === 'function' ? (url, init) => fetchFn(url, init) : null;
  const cfg = { base, statusUrl: `${base}/geminiAgent.status`, fetch: call, stream, log, location };
  return {
    statusUrl: cfg.statusUrl,
    post: (route, body, signal, onEvent) => post(cfg, route, body, signal, onEvent),
    networkError: (url) => networkError(cfg, url),
    status: (signal) => status(cfg, signal),
    commands: (url) => listCommands(cfg, url),
    command: (url, name, args, signal) => runCommand(cfg, url, name, args, signal),
  };
}
