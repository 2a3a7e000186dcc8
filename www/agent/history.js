/**
 * The signed history the browser holds (docs/chat-protocol.md): Gemini
 * `contents` plus the server's signatures, one per turn. What the browser may
 * add itself (a visitor's turn, the page calls' answers) and what it never
 * writes (a model turn, a server action's answer: the server signs those).
 * Also the page-call result text sent back and the todo plan read from the
 * history. No DOM, no network.
 *
 * @module history
 */

/**
 * A JSON-safe copy: DOM nodes, functions and undefined are dropped (the
 * automation's page state holds elements; they must not be serialised).
 * @param {unknown} value
 */
export function toJSONSafe(value) {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v === 'function') return undefined;
    if (v && typeof v === 'object' && typeof v.nodeType === 'number' && typeof v.nodeName === 'string') return undefined;
    return v;
  });
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * The result text sent back to the model for one page call: what happened,
 * not the page again. `{ok: true}` plus whatever else the tool reported
 * (e.g. `changed`), or `{ok: false, error}`. The tool's `pageState` is left
 * out: the fresh page state travels with the same request as `pageState`,
 * and a result stays in the history for the rest of the conversation.
 * Exported for tests.
 * @param {any} result  what the tool's execute() resolved to
 * @returns {string}    JSON text
 */
export function resultForModel(result) {
  if (result?.ok === false) return JSON.stringify({ ok: false, error: String(result.error ?? 'unknown error') });
  const { ok, pageState, viewState, interactions, ...reported } = result && typeof result === 'object' ? result : {};
  return JSON.stringify({ ok: true, ...(toJSONSafe(reported) ?? {}) });
}

/** What the server tells the model about a page call the visitor moved on from (src/http/chat.c says the same). */
export const NOT_RUN = 'not run: the visitor sent a new message instead';

/**
 * A server action's call, as the model makes it: `action_<plugin>_<name>`
 * (the server refuses page tools named so: tool_name_conflict). Its answer is
 * the server's to give, and to sign; the browser never writes one.
 * @param {unknown} name
 */
export function isServerCall(name) {
  return typeof name === 'string' && name.startsWith('action_');
}

/**
 * The model turn whose calls still wait for answers at the end of `history`:
 * {at, given, calls}, or null when nothing waits. `given` is the server's
 * answers so far (the partial user turn after a mixed turn), or null.
 * @param {object[]} history
 */
function waitingTurn(history) {
  if (!Array.isArray(history) || history.length === 0) return null;
  const isAnswers = (turn) =>
    turn?.role === 'user' && Array.isArray(turn.parts) && turn.parts.length > 0 && turn.parts.every((p) => p?.functionResponse);
  let at = history.length - 1;
  let given = null;
  if (history[at]?.role === 'user') {
    if (!isAnswers(history[at])) return null;
    given = history[at].parts;
    at--;
  }
  const model = history[at];
  if (model?.role !== 'model' || !Array.isArray(model.parts)) return null;
  const calls = [];
  model.parts.forEach((part, k) => {
    if (part?.functionCall) calls.push({ call: part.functionCall, k });
  });
  if (calls.length === 0 || (given && given.length >= calls.length)) return null;
  /* which calls the given answers answer, in call order */
  let next = 0;
  for (const c of calls) {
    const answer = given?.[next]?.functionResponse;
    const hasId = typeof c.call.id === 'string';
    c.answered = Boolean(answer && answer.name === c.call.name && (!hasId || answer.id === c.call.id));
    if (c.answered) c.answer = given[next++];
  }
  return { at, given, calls };
}

/**
 * The name of a server action's call at the end of `history` that still
 * waits for the server's answer (one waiting for the visitor's approval), or
 * ''. Exported for tests.
 * @param {object[]} history
 */
export function waitingServerCall(history) {
  const turn = waitingTurn(history);
  const c = turn?.calls.find((x) => !x.answered && isServerCall(x.call.name));
  return c ? String(c.call.name) : '';
}

/**
 * Complete the model turn whose function calls still wait for answers at the
 * end of `history`, the way the server does when it receives them (docs/chat-protocol.md): one functionResponse per call, in call order, with
 * the call's name and id; answers the server already gave (the user turn
 * after a mixed turn) are kept; the others come from `results` (the
 * browser's `{callId, result, isError}`, `result` JSON text sent as its
 * value), and a page call without a result is answered "not run".
 * A server action's call the server has not answered (one waiting for the
 * visitor's approval) is never answered here: that answer is the server's
 * to give and sign, so the turn cannot be completed and the result is null.
 * Used when Stop ends a request before the server could do it. Exported for tests.
 *
 * @param {object[]} history  Gemini `contents`
 * @param {{callId: string, result: unknown, isError?: boolean}[]} [results]
 * @returns {object[]|null}   a new history, or null when nothing waits (or
 *   the browser may not complete what waits: see waitingServerCall)
 */
export function answerPendingCalls(history, results = []) {
  const turn = waitingTurn(history);
  if (!turn || turn.calls.some((c) => !c.answered && isServerCall(c.call.name))) return null;
  const { at, given } = turn;
  const parts = [];
  for (const { call, k, answered, answer } of turn.calls) {
    if (answered) {
      parts.push(answer);
      continue;
    }
    const hasId = typeof call.id === 'string';
    const id = hasId ? call.id : `call_${at}_${k}`;
    const r = results.find((x) => x?.callId === id);
    let response;
    if (!r) {
      response = { error: NOT_RUN };
    } else {
      let value = r.result ?? null;
      if (typeof value === 'string') {
        try {
          value = JSON.parse(value);
        } catch {
          /* text that is not JSON goes as it is */
        }
      }
      response = { [r.isError ? 'error' : 'result']: value };
    }
    parts.push({ functionResponse: { name: call.name, ...(hasId ? { id: call.id } : {}), response } });
  }
  return [...history.slice(0, given ? history.length - 1 : history.length), { role: 'user', parts }];
}

/** The server actions of the todo plugin, as the model calls them. */
const TODO_PREFIX = 'action_todo_';
const TODO_STATES = { pending: ['false', '\u25CB'], in_progress: ['mixed', '\u25D0'], done: ['true', '\u2713'] };

/**
 * The plan the model keeps (the todo plugin): the steps of the latest
 * `{"todo": {"steps": [...]}}` that one of its actions returned in the
 * history (functionResponse parts of user turns, newest first), as the
 * checklist shows them; null when there is none. Each step:
 * {id, title, status, checked: 'true'|'false'|'mixed', mark}. Steps with an
 * unknown status count as pending; malformed ones are left out.
 *
 * @param {unknown} history  the Gemini history the server returned
 * @returns {{id: string, title: string, status: string, checked: string, mark: string}[]|null}
 */
export function latestPlan(history) {
  const turns = Array.isArray(history) ? history : [];
  for (let t = turns.length - 1; t >= 0; t--) {
    const parts = Array.isArray(turns[t]?.parts) ? turns[t].parts : [];
    for (let p = parts.length - 1; p >= 0; p--) {
      const fr = parts[p]?.functionResponse;
      if (!fr || typeof fr.name !== 'string' || !fr.name.startsWith(TODO_PREFIX)) continue;
      const steps = fr.response?.result?.todo?.steps;
      if (!Array.isArray(steps)) continue; /* an error answer: the plan before it holds */
      return steps
        .filter((st) => st && (typeof st.id === 'number' || typeof st.id === 'string') && typeof st.title === 'string')
        .map((st) => {
          const status = Object.hasOwn(TODO_STATES, st.status) ? st.status : 'pending';
          const [checked, mark] = TODO_STATES[status];
          return { id: String(st.id), title: st.title, status, checked, mark };
        });
    }
  }
  return null;
}

/**
 * `signatures` as long as a history of `n` turns: entry i the server's
 * signature string for turn i, else null (a turn that needs none, or an old
 * saved conversation without them: the server then decides). Exported for tests.
 * @param {unknown} signatures
 * @param {number} n
 * @returns {(string|null)[]}
 */
export function alignSignatures(signatures, n) {
  const list = Array.isArray(signatures) ? signatures : [];
  return Array.from({ length: n }, (_, i) => (typeof list[i] === 'string' ? list[i] : null));
}

/**
 * answerPendingCalls with the signatures kept aligned: the turns kept keep
 * theirs; the completed answer turn keeps the partial turn's (the server
 * signs only its own answers in it, in order, so the page's results added
 * between them leave it valid), or is null when it is new. Exported for tests.
 * @param {object[]} history
 * @param {(string|null)[]} signatures  aligned with history
 * @param {{callId: string, result: unknown, isError?: boolean}[]} [results]
 * @returns {{history: object[], signatures: (string|null)[]}|null}  null as answerPendingCalls
 */
export function answerPendingSigned(history, signatures, results = []) {
  const done = answerPendingCalls(history, results);
  if (!done) return null;
  const sigs = alignSignatures(signatures, history.length);
  const replaced = done.length === history.length; /* the partial turn was completed in place */
  return { history: done, signatures: [...sigs.slice(0, done.length - 1), replaced ? sigs[history.length - 1] : null] };
}
