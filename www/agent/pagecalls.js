/**
 * The page calls of one model turn: each run in order with the page's tool
 * of that name, its progress line said before and its outcome after, its
 * result shaped for the model. What a call changed on the page is found by
 * an injected watcher (changes.js in the widget), so this module itself
 * touches no DOM and no network.
 *
 * @module pagecalls
 */
import { ChatError, abortError } from './errors.js';
import { resultForModel } from './history.js';

/** Fallback description of a page call when none is injected. */
export function defaultDescribeCall(name, args) {
  const target = args && typeof args === 'object' && args.coordinate ? ` on ${args.coordinate}` : '';
  return `Ran ${name}${target}`;
}

/** The words a server bug gets: a call without the id its result answers. */
const ANONYMOUS_CALL =
  'The server asked for a page action without a call id, so the chat cannot report its result. Nothing was done on the page. Start a new chat to go on.';

/**
 * @typedef {object} PageCallDeps
 * @property {() => Array<{name: string, execute: Function, webmcpOnly?: boolean}>} tools  the catalog now
 * @property {(name: string, args: object, automation: object) => string} describeCall
 * @property {object|null} automation
 * @property {() => {stop: () => object[]}} watch  starts watching the page; stop() gives what changed
 * @property {() => Promise<void>} settle  lets the page react before the next call
 * @property {(line: string) => void} onStart  a call begins ("Clicked Remove…")
 * @property {(line: string, ok: boolean, changed: object[]) => void} onEnd  a call ended
 */

/** The progress line of one call; a describer that throws gets the fallback. */
function lineOf(deps, name, args) {
  try {
    return deps.describeCall(name, args, deps.automation) || defaultDescribeCall(name, args);
  } catch {
    return defaultDescribeCall(name, args);
  }
}

/** Run one tool; whatever it returns or throws becomes {ok, …}. */
async function execute(tool, name, args) {
  if (!tool) return { ok: false, error: `There is no page tool named "${name}" on this page now.` };
  try {
    const result = await tool.execute(args);
    return result && typeof result === 'object' ? result : { ok: true, result };
  } catch (e) {
    return { ok: false, error: e?.message || String(e) };
  }
}

/**
 * Run `calls` in order; the results answer them by id.
 * @param {PageCallDeps} deps
 * @param {any[]} calls
 * @param {AbortSignal} signal  Stop: no further call runs
 * @param {() => boolean} live  false once the conversation was cleared
 * @returns {Promise<{callId: string, result: object, isError: boolean}[]>}
 */
export async function runPageCalls(deps, calls, signal, live) {
  /* Every call must carry the id its result answers; one without is a
   * server bug: run nothing, send nothing, say so. */
  if (calls.some((c) => typeof c?.id !== 'string' || c.id === '')) {
    throw new ChatError('protocol_error', ANONYMOUS_CALL, { retry: false });
  }
  const results = [];
  for (const call of calls) {
    if (signal.aborted) throw abortError();
    const name = String(call?.name ?? '');
    const args = call?.args && typeof call.args === 'object' ? call.args : {};
    const tool = deps.tools().find((t) => t.name === name && !t.webmcpOnly);
    const line = lineOf(deps, name, args);
    deps.onStart(line);
    const watch = deps.watch();
    const result = await execute(tool, name, args);
    await deps.settle();
    const changed = watch.stop();
    if (!live()) throw abortError();
    const ok = result.ok !== false;
    deps.onEnd(ok ? line : `${line} — failed: ${result.error ?? 'unknown error'}`, ok, changed);
    results.push({ callId: call.id, result: resultForModel(result), isError: !ok });
  }
  return results;
}
