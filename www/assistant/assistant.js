/**
 * The assistant page (www/assistant/index.html): a personal assistant on
 * the run API. Threads on the left, the conversation on the right: each
 * run streams in (status lines, the text as it arrives as sanitised
 * Markdown, then the run's summary), and an action that needs the user's
 * approval shows as a card whose decision resumes the run in place.
 *
 * Sign-in, requests and errors: api.js.
 *
 * @module assistant
 */
import { renderMarkdown, closeOpenMarkdown } from '../agent/markdown.js';
import {
  ApiError, createClient, demoSignIn, explain, loadSession, pageContext, saveSession,
} from './api.js';
import { actionTitle, approvalCardParts, approvalSummary, nameIds, namesFromRun, plainText } from './card.js';

const $ = (id) => document.getElementById(id);
const storage = (() => {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
})();

/** @type {{session: null|{user: string|null, token?: string, cookie?: boolean}, current: string|null, busy: boolean, runThreads: Map<string, string>}} */
const state = { session: null, current: null, busy: false, runThreads: new Map() };

const api = createClient({ fetch: (...a) => window.fetch(...a), token: () => state.session?.token ?? null });

/* ---- small DOM helpers ---- */

/** h('p', {className: 'x', dataset: {a: '1'}, attrs: {'aria-label': 'y'}}, 'text', child) */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  const { dataset, attrs, ...rest } = props;
  Object.assign(el, rest);
  Object.assign(el.dataset, dataset ?? {});
  for (const [k, v] of Object.entries(attrs ?? {})) el.setAttribute(k, v);
  el.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

const when = (ms) => {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
};

/** Say it to screen readers (the live region), once. */
function announce(text) {
  const box = $('announce');
  box.textContent = '';
  setTimeout(() => {
    box.textContent = text;
  }, 50);
}

function showError(message) {
  $('error').textContent = message ?? '';
}

/** An error: a lost session goes back to the sign-in. */
function failed(err, what) {
  if (err instanceof ApiError && err.status === 401 && !state.session?.cookie) {
    signOut(explain(err, what));
    return;
  }
  showError(explain(err, what));
}

/* ---- sign-in ---- */

function showSignIn(message = '') {
  state.session = null;
  $('app').hidden = true;
  $('who').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message;
}

function signOut(message = '') {
  saveSession(storage, null);
  state.current = null;
  $('conversation').replaceChildren();
  history.replaceState(null, '', location.pathname);
  showSignIn(message);
  $('signin-demo').focus();
}

async function signedIn(session) {
  state.session = session;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('who').hidden = false;
  $('who-text').textContent = session.user ? `Signed in as ${session.user}` : 'Signed in with this site\'s session';
  $('sign-out').hidden = !session.token;
  const wanted = new URLSearchParams(location.hash.slice(1)).get('t');
  /* one after the other: the first run API requests to a new store must
   * not race (two fresh connections switching it to WAL at once get "the
   * store is busy") */
  await refreshThreads();
  if (state.session !== session) return false; /* refused (401): back at the sign-in */
  await refreshPending();
  if (wanted) await openThread(wanted);
  else newThread({ focus: false });
  return true;
}

$('signin-demo').addEventListener('click', async () => {
  const button = $('signin-demo');
  button.disabled = true;
  $('signin-error').textContent = '';
  try {
    const session = await demoSignIn((...a) => window.fetch(...a));
    saveSession(storage, session);
    if (await signedIn(session)) $('prompt').focus();
  } catch (e) {
    $('signin-error').textContent = explain(e, 'signin');
  } finally {
    button.disabled = false;
  }
});

$('sign-out').addEventListener('click', () => signOut('You are signed out.'));

/* ---- threads ---- */

async function refreshThreads() {
  let threads;
  try {
    threads = await api.threads();
  } catch (e) {
    failed(e, 'load');
    return;
  }
  const list = $('thread-list');
  list.replaceChildren(...threads.map((t) => {
    /* a preview is one line of plain text: the Markdown's words, not its marks */
    const preview = plainText(t.lastMessage?.text ?? '');
    const button = h('button', { type: 'button', className: 'thread', onclick: () => openThread(t.id) },
      h('span', { className: 'title' }, t.title || 'Untitled'),
      preview && h('span', { className: 'preview' }, preview.length > 90 ? `${preview.slice(0, 90)}…` : preview),
      h('time', { dateTime: new Date(t.updatedAt ?? t.createdAt ?? 0).toISOString() }, when(t.updatedAt ?? t.createdAt)));
    if (t.id === state.current) button.setAttribute('aria-current', 'true');
    return h('li', { dataset: { id: t.id } }, button);
  }));
  $('threads-empty').hidden = threads.length > 0;
}

function markCurrent() {
  for (const li of $('thread-list').children) {
    const b = li.querySelector('button');
    if (li.dataset.id === state.current) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
}

function setCurrent(id, title) {
  state.current = id;
  if (title !== undefined) $('chat-title').textContent = title;
  history.replaceState(null, '', id ? `#t=${encodeURIComponent(id)}` : location.pathname);
  markCurrent();
}

function newThread({ focus = true } = {}) {
  setCurrent(null, 'New conversation');
  $('conversation').replaceChildren();
  showError('');
  if (focus) $('prompt').focus();
}

$('new-thread').addEventListener('click', () => newThread());

async function openThread(id, { focusApproval = null } = {}) {
  showError('');
  let data;
  try {
    [data] = await Promise.all([api.thread(id), refreshPending()]);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      newThread({ focus: false });
      showError('That thread was not found.');
      return;
    }
    failed(e, 'load');
    return;
  }
  setCurrent(data.thread?.id ?? id, data.thread?.title || 'Untitled');
  const box = $('conversation');
  box.replaceChildren();
  const lastOfRun = new Map();
  for (const m of data.messages ?? []) {
    let el;
    if (m.role === 'user') {
      el = userMessage(m.text);
    } else {
      const turn = assistantTurn();
      const seg = segment(turn);
      seg.text(m.text, true);
      seg.done();
      el = turn;
    }
    if (m.runId) {
      el.dataset.runId = m.runId;
      lastOfRun.set(m.runId, el);
    }
    box.append(el);
  }
  /* the approvals this thread's runs wait for, after their run's last message */
  for (const a of pendingApprovals) {
    if (state.runThreads.get(a.runId) !== state.current) continue;
    const turn = assistantTurn();
    const seg = segment(turn);
    seg.text('This needs your approval before it runs.', true);
    seg.done();
    turn.append(approvalCard(a, turn, a.runId));
    const after = lastOfRun.get(a.runId);
    if (after) after.after(turn);
    else box.append(turn);
  }
  const card = focusApproval && box.querySelector(`[data-approval-id="${CSS.escape(focusApproval)}"] button`);
  if (card) card.focus();
  scrollToEnd();
}

/* ---- pending approvals ---- */

/** @type {object[]} */
let pendingApprovals = [];

async function refreshPending() {
  let list;
  try {
    list = await api.approvals();
  } catch (e) {
    failed(e, 'load');
    list = [];
  }
  /* which thread each waits in: its run says */
  await Promise.all(list.map(async (a) => {
    if (state.runThreads.has(a.runId)) return;
    try {
      const run = await api.run(a.runId);
      if (run.threadId) state.runThreads.set(a.runId, run.threadId);
    } catch {
      /* gone or unreadable: listed without a thread */
    }
  }));
  pendingApprovals = list;
  $('pending').hidden = list.length === 0;
  $('pending-list').replaceChildren(...list.map((a) => {
    const threadId = state.runThreads.get(a.runId);
    const [title, args] = approvalSummary(a).split(' — ');
    return h('li', { dataset: { approvalId: a.id, tool: a.tool } },
      h('span', { className: 'tool' }, title),
      args && h('span', { className: 'preview' }, args),
      threadId && h('button', { type: 'button', className: 'linkish',
        onclick: () => openThread(threadId, { focusApproval: a.id }) }, 'Open'));
  }));
  return list;
}

/* ---- the conversation ---- */

function scrollToEnd() {
  const box = $('conversation');
  box.scrollTop = box.scrollHeight;
}

function userMessage(text, context = null) {
  return h('div', { className: 'msg user', dataset: { role: 'user' } },
    h('p', { className: 'who-said' }, 'You'),
    h('p', { className: 'body' }, text),
    context && h('p', { className: 'attached' }, `Attached: ${context.title || context.id}`));
}

function assistantTurn() {
  return h('div', { className: 'msg assistant', dataset: { role: 'assistant' } },
    h('p', { className: 'who-said' }, 'Assistant'));
}

/**
 * One streamed answer inside an assistant turn: the status line, the
 * steps (tool calls and how they went), the text.
 */
function segment(turn) {
  const status = h('p', { className: 'status' });
  const steps = h('ol', { className: 'steps', hidden: true });
  const text = h('div', { className: 'text' });
  const meta = h('p', { className: 'meta', hidden: true });
  const el = h('div', { className: 'answer', dataset: { state: 'streaming' } }, status, steps, text, meta);
  turn.append(el);
  status.hidden = true;
  let live = '';
  let frame = 0;
  const draw = () => {
    frame = 0;
    text.replaceChildren(renderMarkdown(closeOpenMarkdown(live)));
    scrollToEnd();
  };
  const byName = new Map();
  return {
    el,
    status(words) {
      status.hidden = !words;
      status.textContent = words ?? '';
    },
    call(name, args) {
      const li = h('li', { dataset: { tool: name, state: 'running' } },
        h('code', {}, name), ' ', h('span', { className: 'args' }, JSON.stringify(args ?? {})), ' ',
        h('span', { className: 'outcome' }, '…'));
      steps.hidden = false;
      steps.append(li);
      byName.set(name, [...(byName.get(name) ?? []), li]);
    },
    result(name, ok, ms) {
      let li = (byName.get(name) ?? []).find((x) => x.dataset.state === 'running');
      if (!li) {
        /* a decided action: its call was in the run before */
        li = h('li', { dataset: { tool: name } }, h('code', {}, name), ' ', h('span', { className: 'outcome' }));
        steps.hidden = false;
        steps.append(li);
      }
      li.dataset.state = ok ? 'ok' : 'failed';
      li.querySelector('.outcome').textContent = ok ? `done${ms ? ` (${ms} ms)` : ''}` : 'failed';
    },
    /** The calls still running wait for the user now. */
    waiting() {
      for (const li of steps.querySelectorAll('[data-state="running"]')) {
        li.dataset.state = 'waiting';
        li.querySelector('.outcome').textContent = 'waits for your approval';
      }
    },
    delta(piece) {
      live += piece;
      if (!frame) frame = requestAnimationFrame(draw);
    },
    /** The text as a whole (final: as written, not closed). */
    text(markdown) {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
      live = String(markdown ?? '');
      text.replaceChildren(renderMarkdown(live));
    },
    done(result) {
      el.dataset.state = 'done';
      status.hidden = true;
      if (result?.model) {
        meta.hidden = false;
        meta.textContent = `${result.model}${result.normalized ? ' · some of what was sent was shortened' : ''}`;
      }
    },
    fail(message) {
      el.dataset.state = 'failed';
      status.hidden = true;
      el.append(h('p', { className: 'failed', attrs: { role: 'alert' } }, message));
    },
  };
}

const STATUS_WORDS = {
  planning: () => 'Thinking…',
  executing: (tool) => (tool ? `Running ${tool}…` : 'Running…'),
  awaiting_confirmation: () => 'Waiting for your approval…',
};

/** The stream's events, drawn into `seg`; `onThread` hears the run's thread. */
function streamInto(seg, onThread) {
  return (ev) => {
    switch (ev.type) {
      case 'status':
        if (ev.threadId) onThread?.(ev.threadId);
        seg.status((STATUS_WORDS[ev.status] ?? (() => `${ev.status}…`))(ev.tool));
        if (ev.status === 'awaiting_confirmation') seg.waiting();
        break;
      case 'delta':
        if (typeof ev.delta === 'string') seg.delta(ev.delta);
        break;
      case 'tool-call':
        seg.call(ev.name, ev.args);
        break;
      case 'tool-result':
        seg.result(ev.name, ev.ok !== false, ev.ms);
        break;
      default:
        break;
    }
  };
}

/** A run's answer in its turn: the summary, and a card when it waits. */
function finishAnswer(result, turn, seg) {
  seg.text(result.summary ?? '');
  seg.done(result);
  if (result.runId) state.runThreads.set(result.runId, result.threadId);
  if (result.mode === 'approval_required' && result.approval) {
    const card = approvalCard(result.approval, turn, result.runId);
    turn.append(card);
    announce(`Approval needed: ${actionTitle(result.approval.tool)}. ${result.approval.reason ?? ''}`);
  } else {
    announce(`Assistant: ${plainText(result.summary ?? '')}`);
  }
  scrollToEnd();
}

function setBusy(busy) {
  state.busy = busy;
  $('send').disabled = busy;
  $('conversation').setAttribute('aria-busy', String(busy));
  for (const b of document.querySelectorAll('.approval[data-state="pending"] .decide button')) b.disabled = busy;
}

async function send(prompt) {
  /* the conversation is this page's main text (<main> holds the threads too) */
  const context = $('attach').checked ? pageContext(document, $('chat')) : null;
  const box = $('conversation');
  const mine = userMessage(prompt, context);
  const turn = assistantTurn();
  box.append(mine, turn);
  const seg = segment(turn);
  seg.status('Sending…');
  scrollToEnd();
  showError('');
  setBusy(true);
  const startedIn = state.current;
  const body = { prompt, ...(startedIn ? { threadId: startedIn } : {}), ...(context ? { attachedContext: [context] } : {}) };
  let told = false;
  try {
    const result = await api.startRun(body, streamInto(seg, (threadId) => {
      /* a new thread exists from the first line on */
      if (!told && !startedIn && state.current === null && box.contains(turn)) {
        told = true;
        setCurrent(threadId, prompt.length > 80 ? `${prompt.slice(0, 80)}…` : prompt);
        refreshThreads();
      }
    }));
    if (result.runId) mine.dataset.runId = result.runId;
    if (!startedIn && state.current === null && box.contains(turn)) setCurrent(result.threadId);
    finishAnswer(result, turn, seg);
  } catch (e) {
    seg.fail(explain(e, 'run'));
    if (e instanceof ApiError && e.status === 401 && !state.session?.cookie) {
      setBusy(false);
      signOut(explain(e, 'run'));
      return;
    }
  } finally {
    setBusy(false);
  }
  await Promise.all([refreshThreads(), refreshPending()]);
}

$('composer').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const prompt = $('prompt').value.trim();
  if (!prompt || state.busy) return;
  $('prompt').value = '';
  send(prompt);
});

$('prompt').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    $('composer').requestSubmit();
  }
});

$('attach').addEventListener('change', () => {
  const note = $('attach-note');
  note.hidden = !$('attach').checked;
  note.textContent = `sends this page's title, address and the start of its text`;
});

/* ---- approval cards ---- */

const STEP_DECIDED = {
  ok: 'approved, done',
  failed: 'approved, failed',
  rejected: 'rejected: did not run',
};

/**
 * The steps of `tool` in `turn` that waited for the user, now decided
 * (outcome ok, failed or rejected): the list no longer says "waits".
 */
function decideSteps(turn, tool, outcome) {
  for (const li of turn.querySelectorAll('.steps [data-state="waiting"]')) {
    if (li.dataset.tool !== tool) continue;
    li.dataset.state = outcome;
    li.querySelector('.outcome').textContent = STEP_DECIDED[outcome];
  }
}

/**
 * A card for the approval `a` ({id, tool, reason, preview}) of run `runId`;
 * its decision resumes the run, whose new answer goes into `turn` after
 * the card.
 */
function approvalCard(a, turn, runId) {
  const parts = approvalCardParts(document, a, { busy: state.busy, onDecide: (d) => decide(d) });
  const { card, buttons, feedback, form, outcome, error } = parts;
  /* an id the run found (a product's _id) shows with its name */
  if (runId)
    api.run(runId).then((run) => nameIds(card, namesFromRun(run)), () => {
      /* unreadable: the ids stay as they are */
    });
  const title = `“${actionTitle(a.tool)}”`;

  /* the card's end: decided here, or elsewhere (409) */
  function settle(cardState, words) {
    card.dataset.state = cardState;
    form.remove();
    outcome.hidden = false;
    outcome.textContent = words;
    outcome.focus();
  }

  async function decide(decision) {
    if (state.busy) return;
    const note = feedback.value.trim();
    error.textContent = '';
    for (const b of buttons) b.disabled = true;
    card.dataset.state = 'deciding';
    setBusy(true);
    const seg = segment(turn);
    seg.status('Sending your decision…');
    let ran = null; /* the decided action's tool-result: true, false, or none seen */
    const onEvent = streamInto(seg);
    const said = decision === 'reject' ? 'Rejected' : decision === 'approve_once' ? 'Approved' : 'Approved, and always allowed from now on';
    try {
      const result = await api.decide(a.id, decision, note, (ev) => {
        if (ev.type === 'tool-result' && ev.name === a.tool && ran === null) ran = ev.ok !== false;
        onEvent(ev);
      });
      decideSteps(turn, a.tool, decision === 'reject' ? 'rejected' : ran === false ? 'failed' : 'ok');
      settle(decision === 'reject' ? 'rejected' : 'approved', decision === 'reject'
        ? `${said}: ${title} did not run.${note ? ` Your note: “${note}”.` : ''}`
        : `${said}: ${title} ${ran === false ? 'failed' : 'ran'}.`);
      finishAnswer(result, turn, seg);
      outcome.focus();
    } catch (e) {
      seg.el.remove();
      if (e instanceof ApiError && e.status === 409) {
        settle('conflict', explain(e, 'approval'));
      } else {
        card.dataset.state = 'pending';
        for (const b of buttons) b.disabled = false;
        error.textContent = explain(e, 'approval');
        if (e instanceof ApiError && e.status === 401 && !state.session?.cookie) {
          setBusy(false);
          signOut(explain(e, 'approval'));
          return;
        }
      }
    } finally {
      setBusy(false);
    }
    await Promise.all([refreshThreads(), refreshPending()]);
  }
  return card;
}

/* ---- start ---- */

/*
 * Signed in? GET /api/agent/session answers 200 either way (a 401 on
 * every load would be logged as a failed request): with the tab's demo
 * session it checks that token, without one the site's own cookie, if any.
 */
async function start() {
  const stored = loadSession(storage);
  let who;
  state.session = stored; /* its token is the one checked */
  try {
    who = await api.session();
  } catch (e) {
    if (stored) await signedIn(stored); /* the first request says what is wrong */
    else showSignIn(explain(e, 'load'));
    return;
  }
  if (who.signedIn) {
    await signedIn(stored ?? { user: who.user, cookie: true });
  } else if (stored) {
    saveSession(storage, null);
    showSignIn(explain(new ApiError(401, 'unauthorized', who.reason), 'load'));
  } else {
    showSignIn('');
  }
}

start();
