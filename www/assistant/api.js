/**
 * The run API for the assistant page (docs/http-api.md "The run API", "Identity"):
 * who the page acts for, the requests, streamed answers, and errors in
 * plain words. No DOM here; assistant.js draws.
 *
 * Sign-in. The page never makes a token: it has no secret. A site signs
 * its users in with its own login and mints the token server-side (docs/http-api.md
 * "Identity" documents the format), usually as the HttpOnly `ga_session`
 * cookie, which the browser then sends with every request by itself. The
 * demo (`make demo`) has no login: it mints a token for the user "demo"
 * and serves it, to this machine only, as /assistant/demo-session.json;
 * "Sign in as the demo user" reads it, keeps it for this tab
 * (sessionStorage) and sends it as `Authorization: Bearer`.
 *
 * @module assistant/api
 */
import { isNdjson, NDJSON_TYPE } from '../agent/ndjson.js';
import { readResultStream } from '../agent/stream.js';
import { diagnoseNetworkError, routeUrl } from '../agent/origin.js';

/** Where the demo serves its session (scripts/render-nginx-conf.sh SESSION),
 * next to this module like every URL here (origin.js). */
export const DEMO_SESSION_URL = routeUrl('assistant/demo-session.json', import.meta.url);
/** The run API's routes are `<base>/api/agent/...` for this page at `<base>/assistant/`. */
export const API_BASE = routeUrl('', import.meta.url);
/** The tab's stored demo session. */
export const SESSION_KEY = 'gemini-agent:assistant-session';
/** How much of the page's main text "Attach this page" sends. */
export const SNIPPET_CHARS = 300;

/** An answer that is not the one asked for: HTTP status (0: none came), code, the server's words. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * What an error means for the user, in plain words.
 * @param {unknown} err
 * @param {'run'|'approval'|'load'|'signin'} [what]  what was being done
 * @returns {string}
 */
export function explain(err, what = 'run') {
  if (!(err instanceof ApiError)) return `Something went wrong: ${err?.message || err}`;
  if (err.status === 401) return 'You are not signed in, or your session has ended. Sign in, then try again.';
  if (err.status === 409 && what === 'approval')
    return 'This approval was already decided (perhaps in another tab), so nothing more was done.';
  if (err.status === 0 && err.code === 'origin_not_allowed') return err.message;
  if (err.status === 0)
    return err.code === 'interrupted'
      ? 'The answer broke off before it was complete. Try again.'
      : 'Could not reach the server. Check your connection, then try again.';
  if (err.message) return err.message;
  return `The server answered HTTP ${err.status}.`;
}

/**
 * A stored session that is still good ({user, token, expiresAt}), or null.
 * @param {Storage|undefined} storage
 * @param {number} [nowSeconds]
 */
export function loadSession(storage, nowSeconds = Date.now() / 1000) {
  try {
    const s = JSON.parse(storage?.getItem(SESSION_KEY) ?? 'null');
    if (s && typeof s.token === 'string' && s.token && typeof s.user === 'string' &&
        (typeof s.expiresAt !== 'number' || s.expiresAt > nowSeconds))
      return { user: s.user, token: s.token, expiresAt: s.expiresAt };
  } catch {
    /* unreadable: as if none */
  }
  try {
    storage?.removeItem(SESSION_KEY);
  } catch {}
  return null;
}

/** @param {Storage|undefined} storage @param {object|null} session */
export function saveSession(storage, session) {
  try {
    if (session) storage?.setItem(SESSION_KEY, JSON.stringify(session));
    else storage?.removeItem(SESSION_KEY);
  } catch {
    /* private mode: the session lasts as long as the page */
  }
}

/**
 * The demo's session, fetched from DEMO_SESSION_URL. A site without it
 * (any real one) answers 404 (or 403 from another machine).
 * @param {typeof fetch} fetchFn
 * @returns {Promise<{user: string, token: string, expiresAt?: number}>}
 */
export async function demoSignIn(fetchFn) {
  let res;
  try {
    res = await fetchFn(DEMO_SESSION_URL, { cache: 'no-store', credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', '');
  }
  if (res.status === 404 || res.status === 403)
    throw new ApiError(res.status, 'no_demo_sign_in',
      'This site offers no demo sign-in. Sign in with the site\'s own login, then reload this page.');
  const data = await res.json().catch(() => null);
  if (!res.ok || typeof data?.token !== 'string' || !data.token)
    throw new ApiError(res.status || 0, 'bad_session', 'The demo sign-in answered something unreadable.');
  return { user: typeof data.user === 'string' ? data.user : 'demo', token: data.token,
    ...(typeof data.expiresAt === 'number' ? { expiresAt: data.expiresAt } : {}) };
}

/**
 * "Attach this page": what the run's attachedContext says of it.
 * @param {Document} doc
 * @param {Element|null} [root]  where the main text is: the page's <main> unless given
 * @returns {{type: 'page', id: string, title: string, snippet: string}}
 */
export function pageContext(doc, root = null) {
  const main = root ?? doc.querySelector('main') ?? doc.body;
  const text = String(main?.innerText ?? main?.textContent ?? '').replace(/\s+/g, ' ').trim();
  return {
    type: 'page',
    id: doc.defaultView?.location?.pathname ?? '/',
    title: doc.title,
    snippet: [...text].slice(0, SNIPPET_CHARS).join(''),
  };
}

/**
 * The run API, for one page.
 * @param {object} options
 * @param {typeof fetch} options.fetch
 * @param {() => string|null} options.token  the Bearer token, or null (the site's cookie, if any)
 * @param {string} [options.base=API_BASE]  where `api/agent/...` is, ending in '/'
 * @param {Location} [options.location]  the page's (globalThis.location): a failed request to
 *   another origin is checked for a refused origin (origin.js)
 */
export function createClient({ fetch: fetchFn, token, base = API_BASE, location = globalThis.location }) {
  function headers(extra = {}) {
    const t = token();
    return { ...(t ? { Authorization: `Bearer ${t}` } : {}), ...extra };
  }

  async function send(method, path, body, accept = 'application/json', signal) {
    const url = `${base}${path}`;
    try {
      return await fetchFn(url, {
        method,
        headers: headers({ Accept: accept, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }),
        body: body !== undefined ? JSON.stringify(body) : undefined,
        credentials: 'same-origin',
        cache: 'no-store',
        signal,
      });
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
      const found = await diagnoseNetworkError({ fetch: fetchFn, url, probeUrl: `${base}api/agent/threads`, location });
      if (signal?.aborted) throw e;
      if (found.kind === 'refused') throw new ApiError(0, 'origin_not_allowed', found.message);
      if (found.kind === 'answer') throw await failure(found.response);
      throw new ApiError(0, 'network', '');
    }
  }

  /** The error envelope of a failed answer as an ApiError. */
  async function failure(res) {
    const data = await res.json().catch(() => null);
    const e = data?.error;
    return new ApiError(res.status, typeof e?.code === 'string' ? e.code : 'http_error',
      typeof e?.message === 'string' ? e.message : '');
  }

  async function getJson(path) {
    const res = await send('GET', path);
    if (!res.ok) throw await failure(res);
    const data = await res.json().catch(() => null);
    if (!data || typeof data !== 'object') throw new ApiError(res.status, 'bad_answer', 'The server sent an unreadable answer.');
    return data;
  }

  /**
   * POST asking for NDJSON; every event but the last goes to onEvent; the
   * result line's answer is returned, an error line thrown. A plain JSON
   * answer (a server or proxy that does not stream) is the answer itself.
   * @returns {Promise<object>} the answer (docs/http-api.md, "The answer")
   */
  async function stream(path, body, onEvent, signal) {
    const res = await send('POST', path, body, NDJSON_TYPE, signal);
    if (!res.ok) throw await failure(res);
    if (!res.body || !isNdjson(res.headers.get('Content-Type'))) {
      const data = await res.json().catch(() => null);
      if (!data || typeof data !== 'object') throw new ApiError(res.status, 'bad_answer', 'The server sent an unreadable answer.');
      return data;
    }
    /* a stream that breaks before its last line is "interrupted" below */
    const { last } = await readResultStream(res.body, onEvent, signal);
    if (last?.type === 'result' && last.result && typeof last.result === 'object') return last.result;
    if (last?.type === 'error') {
      const e = last.error;
      throw new ApiError(200, typeof e?.code === 'string' ? e.code : 'stream_error',
        typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : 'The run failed.');
    }
    throw new ApiError(0, 'interrupted', '');
  }

  const id = (s) => encodeURIComponent(String(s));
  return {
    /**
     * Signed in or not, always a 200 (no 401 logged on every load).
     * @returns {Promise<{signedIn: boolean, user?: string, reason?: string}>}
     */
    session: async () => {
      const data = await getJson('api/agent/session');
      return { signedIn: data.signedIn === true,
        ...(typeof data.user === 'string' ? { user: data.user } : {}),
        ...(typeof data.reason === 'string' ? { reason: data.reason } : {}) };
    },
    /** @returns {Promise<object[]>} the user's threads, newest first */
    threads: async () => (await getJson('api/agent/threads')).threads ?? [],
    /** @returns {Promise<{thread: object, messages: object[]}>} */
    thread: (threadId) => getJson(`api/agent/threads/${id(threadId)}`),
    /** @returns {Promise<object>} the run's state and actions (threadId among them) */
    run: (runId) => getJson(`api/agent/runs/${id(runId)}`),
    /** @returns {Promise<object[]>} the user's pending approvals */
    approvals: async () => (await getJson('api/agent/approvals?status=pending')).approvals ?? [],
    /** A run, streamed: {prompt, threadId?, attachedContext?} */
    startRun: (body, onEvent, signal) => stream('api/agent/run/stream', body, onEvent, signal),
    /** Decide an approval; the run's new answer, streamed. */
    decide: (approvalId, decision, feedback, onEvent, signal) =>
      stream(`api/agent/approvals/${id(approvalId)}`, { decision, ...(feedback ? { feedback } : {}) }, onEvent, signal),
  };
}
