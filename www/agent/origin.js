/**
 * Where the agent's routes are, and why a request to them from another
 * origin failed (README's http.cors.allowOrigins, docs/deploy/static-site-host.md).
 *
 * The widget lives at `<base>/agent/index.js` and the responder's routes at
 * `<base>/_jay/...` and `<base>/api/agent/...`, so the default URLs are
 * resolved against the module's own URL, not the page's: a site under a
 * prefix (`/~alice/`) and a page that loads the script from the responder's
 * origin need no setting.
 *
 * A browser reports a cross-origin request its server did not allow (no
 * Access-Control-Allow-Origin for this page's origin, http.cors.allowOrigins
 * in agent.yaml) exactly as one that never reached the server: a TypeError.
 * diagnoseNetworkError tells the two apart with two more requests, so that
 * the visitor (and the developer looking at the page) reads which one it is.
 *
 * @module origin
 */

/** The words for a request that never reached the server. */
export const UNREACHABLE = 'Could not reach the server. Check your connection, then retry.';

/**
 * `path` (e.g. '_jay/actions') resolved against the folder above the module
 * at `moduleUrl`: `https://x.org/~alice/agent/chat.js` → `https://x.org/~alice/_jay/actions`.
 * @param {string} path
 * @param {string} moduleUrl  an `import.meta.url`
 * @returns {string}
 */
export function routeUrl(path, moduleUrl) {
  return new URL(`../${String(path).replace(/^\/+/, '')}`, moduleUrl).href;
}

/** The widget's own default: `<base>/_jay/actions` next to `<base>/agent/`. */
export const DEFAULT_ENDPOINT = routeUrl('_jay/actions', import.meta.url);

/**
 * The words for a page whose origin the server does not accept.
 * @param {string} serverOrigin
 * @param {string} pageOrigin
 */
export function originRefused(serverOrigin, pageOrigin) {
  return `The assistant's server (${serverOrigin}) does not accept requests from this page (${pageOrigin}). ` +
    `The site owner must add ${pageOrigin} to http.cors.allowOrigins in the server's agent.yaml.`;
}

/**
 * The origin of `url` when it is an http(s) URL on another origin than the
 * page's, else '' (same origin, or nothing to diagnose).
 * @param {string} url
 * @param {Location|URL|undefined} location  the page's
 */
export function foreignOrigin(url, location) {
  const page = location?.origin;
  if (!page || page === 'null') return '';
  let target;
  try {
    target = new URL(url, location.href);
  } catch {
    return '';
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return '';
  return target.origin === page ? '' : target.origin;
}

/**
 * Why a request to `url` failed as a network error (fetch threw), found by
 * asking `probeUrl` (a GET route on the same server) twice:
 *  - a plain CORS GET (no custom header, so no preflight) that resolves: the
 *    server reads this origin. When its answer says why the request failed
 *    (a 429 or a 5xx, as nginx answers for itself when the responder is
 *    down or busy: its preflight got the same status, which a preflight
 *    cannot pass) it is returned ({kind: 'answer', response}) for the
 *    caller to explain; any other answer: unreachable, as before;
 *  - else a `no-cors` GET that resolves (an opaque answer, whose status the
 *    page cannot see): the server is there but did not allow this origin
 *    ({kind: 'refused', message});
 *  - else, or for a same-origin URL: {kind: 'unreachable', message}.
 * @param {object} o
 * @param {typeof fetch} o.fetch
 * @param {string} o.url       the request that failed
 * @param {string} o.probeUrl  a GET route on the same server
 * @param {Location|URL|undefined} o.location  the page's
 * @returns {Promise<{kind: 'unreachable'|'refused', message: string}|{kind: 'answer', response: Response}>}
 */
export async function diagnoseNetworkError({ fetch: fetchFn, url, probeUrl, location }) {
  const unreachable = { kind: 'unreachable', message: UNREACHABLE };
  const server = foreignOrigin(url, location);
  if (!server || typeof fetchFn !== 'function') return unreachable;
  const init = { method: 'GET', credentials: 'omit', cache: 'no-store' };
  try {
    const response = await fetchFn(probeUrl, { ...init, mode: 'cors' });
    if (response?.status === 429 || response?.status >= 500) return { kind: 'answer', response };
    if (response) return unreachable;
  } catch {
    /* not readable from here: refused, or not there at all */
  }
  try {
    await fetchFn(probeUrl, { ...init, mode: 'no-cors' });
  } catch {
    return unreachable;
  }
  return { kind: 'refused', message: originRefused(server, location.origin) };
}
