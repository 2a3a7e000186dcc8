/**
 * The chat widget: the component of gemini-chat.jay-contract.
 *
 * What it does
 *  - Holds the conversation in the browser (the server is stateless): the
 *    Gemini `history` the server returns, and the messages shown, both kept in
 *    sessionStorage so a reload of the same tab keeps the conversation.
 *  - Runs the tool loop of the chat protocol (docs/chat-protocol.md):
 *    sendMessage → run the page calls in order → fresh toolDefinitions and
 *    pageState → submitToolResults → … until a `response` or `blocked`, at most
 *    `maxRoundTrips` requests per user message; Stop aborts the loop and the
 *    request in flight. Every action taken is one line, marked done or failed
 *    (with the reason); every server error code has its own plain words
 *    (ERROR_WORDS).
 *  - Streams answers (option `stream`, on by default): asks for NDJSON
 *    (`Accept: application/x-ndjson`), shows the model's text as it arrives
 *    (rendered once per animation frame, unfinished Markdown closed by
 *    markdown.js's closeOpenMarkdown) and what the server is doing
 *    ("Searching products…"); the `result` line is handled exactly as the
 *    single JSON answer, which is still read when the server sends one. Stop
 *    keeps the text received, marked stopped, on screen; the history gets
 *    only what the server can vouch for (see rememberStopped).
 *  - Keeps the server's signatures with the history (`signatures`, one per
 *    turn, null for a turn that needs none), in sessionStorage too, and sends
 *    them back with every request: the server refuses a model turn it did not
 *    sign (400 history_tampered), so the widget never writes one itself.
 *  - Asks the visitor before a server action with side effects runs (an
 *    `approval-required` answer): an approval card in the conversation says
 *    what will happen and with which arguments, with Approve and Reject; the
 *    decision goes back with the server's ticket (submitToolResults
 *    `approval`). Only the visitor's click decides: the card is inside the
 *    widget, which the page automation never sees (data-agent="off"), and
 *    the handle has no way to approve.
 *  - Asks the visitor the model's questions (a `question` answer, e.g. of the
 *    built-in `clarification` plugin): a card (question.js) with radio
 *    buttons, checkboxes or a field per question, defaults preselected,
 *    required ones enforced, the focus on its first control; Send answers
 *    goes back as submitToolResults `answer` {id, answers} (with the page
 *    results of the same turn). A new message instead leaves it unanswered.
 *  - Offers the plugins' user commands (commands.js): `/` at the start of the
 *    input lists them (GET /_jay/commands, once, at the first `/`); sending
 *    `/name rest` runs one without the model (POST /_jay/commands/<name>),
 *    shows its output as text, and adds it to the history as a user turn
 *    only when the command shares it with the model. A `/word` that is no
 *    command is sent as a message.
 *  - Keeps the conversation's key (`conversation`, docs/chat-protocol.md):
 *    the server gives one in its first answer and plugins keep their state
 *    under it (the todo plan); sent back with every request, forgotten with
 *    the conversation.
 *  - Shows the plan the model keeps (the todo plugin) as a compact checklist
 *    above the last answer: the latest `{"todo": {"steps": [...]}}` among the
 *    server's action results in the history (latestPlan), each step a
 *    read-only checkbox (checked: done; mixed: in progress), updated with
 *    every answer.
 *  - Asks the server on start what it runs (GET geminiAgent.status), so the
 *    offline demo model or a missing API key is said before the first message.
 *  - Sits where its container is, or, when floating or on narrow windows, is
 *    a launcher button in the corner that opens the chat as a panel (a
 *    full-screen sheet on phones); Esc closes it and focus returns to the
 *    launcher.
 *  - Renders from an HTML template whose elements name contract tags:
 *      data-ref="tag"       interactive tags (messageInput, sendMessage, …);
 *                           handled by delegation, so any element works
 *      data-bind="tag"      data tags, written as text; data-format="markdown"
 *                           renders the model's Markdown sanitised (markdown.js);
 *                           a <time> gets datetime= and a local hh:mm
 *      data-checked="tag"   aria-checked="<tag's value>" (a checkbox's state)
 *      data-if="expr"       shown only when expr holds: "tag", "!tag",
 *                           "tag==value", "tag!=value" (arrays: non-empty)
 *      data-foreach="tag"   a container repeated per item of a list tag; its
 *                           first element child is the item template; each
 *                           copy gets data-id (and data-role, data-status
 *                           for messages);
 *                           inside it, tags resolve on the item first
 *    The default template is DEFAULT_TEMPLATE below; a page may ship its own
 *    as a <template> inside the container or as <template id="gemini-chat">.
 *
 * What it does not do: find the page's interactions or build tools (the
 * automation and tools modules do, passed in by index.js), or ever insert the
 * model's text as HTML (Markdown goes through marked + DOMPurify, everything
 * else is textContent).
 *
 * @module chat
 */
import { closeOpenMarkdown } from './markdown.js';
import { buildQuestionCard, describeAnswers, firstControl, readQuestion } from './question.js';
import { commandsEndpoint, createCommandMenu, parseCommandLine, readCommands } from './commands.js';
import { DEFAULT_ENDPOINT } from './origin.js';
import { createChatClient } from './client.js';
import { createView, LAUNCHER_BELOW, SHEET_BELOW } from './view.js';
import { ChatError, explainError, unreadable, parseBody, abortError } from './errors.js';
import { describeServerAction } from './describe.js';
import { toJSONSafe, resultForModel, alignSignatures } from './history.js';
import { readApproval } from './decision.js';
import { markChanged, watchChanges } from './changes.js';
import { loadSaved, saveConversation, tabStorage } from './storage.js';
import { absorbAnswer, createState, deriveView, rememberStopped as rememberStoppedIn, shareOutput as shareOutputIn } from './state.js';

export { OFFLINE_NOTICE } from './state.js';
export { DEFAULT_TEMPLATE, LAUNCHER_BELOW, SHEET_BELOW } from './view.js';

/* what chat.js exported before its parts had modules of their own */
export { bindTemplate } from './template.js';
export { ChatError, NOT_SET_UP, ERROR_WORDS, retryAfterSeconds, explainError } from './errors.js';
export { describeServerAction, describeServerCall, describeUsage } from './describe.js';
export { toJSONSafe, resultForModel, waitingServerCall, answerPendingCalls, latestPlan, alignSignatures, answerPendingSigned } from './history.js';
export { readApproval } from './decision.js';

/** Fallback description of a page call when none is injected. */
function defaultDescribeCall(name, args) {
  const target = args && typeof args === 'object' && args.coordinate ? ` on ${args.coordinate}` : '';
  return `Ran ${name}${target}`;
}

/** Fallback serialisation of the catalog (tools.js's toolDefinitions does the same). */
function defaultToolDefinitions(tools) {
  return tools
    .filter((t) => !t.webmcpOnly)
    .map(({ name, description, inputSchema, category }) => ({
      name,
      description,
      inputSchema,
      category: category || 'page-automation',
    }));
}

/** Let the page react (re-render, observers) before the next call runs. */
function settle(win) {
  return new Promise((resolve) => (win?.setTimeout ?? setTimeout)(resolve, 0));
}

/* --- the component ----------------------------------------------------------------- */

/**
 * @typedef {object} ChatMessage
 * @property {string} id
 * @property {'user'|'assistant'|'system'|'action'|'approval'|'command'} role
 *   user and assistant are the conversation; action is one line per action
 *   taken (page or server); system is a note from the widget (stopped, limit,
 *   blocked); approval is the card of a server action that waits for (or
 *   waited for) the visitor's decision; command is a user command's output
 *   (plain text)
 * @property {string} content    for approval cards: the preview, what will happen
 * @property {string} timestamp  ISO 8601
 * @property {'ok'|'failed'|'streaming'|'stopped'|'incomplete'|'pending'|'approved'|'declined'|'undecided'|'invalid'} [status]
 *   action lines: ok or failed; an assistant answer still arriving is
 *   streaming, then, when it never completed, stopped (Stop) or incomplete
 *   (an error); a complete answer has none. Approval cards: pending (the
 *   buttons show), approved, declined, undecided (the visitor moved on), or
 *   invalid (the server refused the ticket: expired or used)
 * @property {string} [tool]    approval cards: the action (`plugin.name`)
 * @property {string} [reason]  approval cards: why the server asks, in words
 * @property {{id: string, name: string, value: string}[]} [args]  approval cards: the arguments
 * @property {string} [expires] approval cards: ISO 8601, when the ticket expires
 * @property {string} [command]  command outputs: `/name`
 * @property {boolean} [shared]  command outputs: added to the history the model sees
 * @property {string} [commandTitle]  command outputs: what the output is, in words
 */

/**
 * @typedef {object} ChatHandle
 * @property {object} state      a read-only snapshot (a fresh copy on every read)
 *   of the contract's tags plus history, model, usage, errorCode
 * @property {(text: string) => Promise<void>} send
 *   send a message as if typed; ignored (resolves at once) when the text is
 *   blank or a request is in flight; resolves when the loop has ended
 * @property {() => Promise<void>} retry   re-send the request that failed
 * @property {() => void} stop             abort the loop and the request in flight
 * @property {() => void} clear            forget the conversation
 * @property {() => void} open             launcher mode: show the panel, focus the input
 * @property {() => void} close            launcher mode: hide the panel, focus the launcher
 * @property {() => void} destroy          stop, remove the widget, drop listeners
 *
 * There is deliberately no approve(): a server action waiting for approval
 * is decided by the visitor's click on the card's buttons, never by a script.
 */

/**
 * Mount the chat widget into `container`.
 *
 * @param {HTMLElement} container  where the widget goes (its non-template children are replaced)
 * @param {object} options
 * @param {object} [options.automation]  the AutomationAPI (automation.js); getPageState() feeds `pageState`
 * @param {() => Array<{name: string, execute: Function, webmcpOnly?: boolean}>} [options.tools]
 *   returns the current tool catalog (tools.js buildTools); called afresh every round trip
 * @param {(tools: object[]) => object[]} [options.toolDefinitions]  catalog → JSON for the server (tools.js)
 * @param {(name: string, args: object, automation: object) => string} [options.describeCall]
 *   one progress line per page call, e.g. "Clicked Remove on USB-C Hub" (tools.js)
 * @param {string} [options.endpoint]  where the chat protocol is; default `<base>/_jay/actions` for
 *   this module at `<base>/agent/chat.js` (origin.js DEFAULT_ENDPOINT), so the page may be anywhere
 * @param {string} [options.storageKey='gemini-agent:history']
 * @param {number} [options.maxRoundTrips=15]  requests per user message before the widget stops
 * @param {typeof fetch} [options.fetch=globalThis.fetch]
 * @param {Storage|null} [options.storage]  defaults to the window's sessionStorage
 * @param {HTMLTemplateElement|string} [options.template]
 *   defaults to a <template> inside the container, else <template id="gemini-chat">, else DEFAULT_TEMPLATE
 * @param {boolean} [options.expanded=false]  start in full mode (a saved choice wins)
 * @param {boolean} [options.floating]  no place on the page: always a launcher (also: data-floating on the container)
 * @param {'auto'|'always'|'never'} [options.launcher]  also data-launcher on the container; default
 *   'always' when floating, else 'auto': in place on wide windows, a launcher button in the corner
 *   below `launcherBelow` px that opens the chat as a panel (a full-screen sheet below 600 px)
 * @param {number} [options.launcherBelow=860]  also data-launcher-below
 * @param {boolean} [options.checkStatus=true]  ask GET <endpoint>/geminiAgent.status on start
 *   (the offline demo model and a server without a key are announced before the first message)
 * @param {boolean} [options.stream=true]  ask for streamed answers (NDJSON) and show the text as it
 *   arrives; false: one JSON answer per request (also data-stream="false" on the container)
 * @param {string|false} [options.commands]  where the user commands are (GET lists, POST
 *   <commands>/<name> runs); default next to `endpoint` (`/_jay/actions` → `/_jay/commands`);
 *   false: no commands
 * @returns {ChatHandle}
 */
export function mountChat(container, options = {}) {
  const {
    automation = null,
    tools = () => [],
    toolDefinitions = defaultToolDefinitions,
    describeCall = defaultDescribeCall,
    endpoint = DEFAULT_ENDPOINT,
    storageKey = 'gemini-agent:history',
    maxRoundTrips = 15,
    fetch: fetchFn = globalThis.fetch,
    expanded = container.hasAttribute('data-expanded'),
    floating = container.hasAttribute('data-floating'),
    checkStatus = true,
    stream = container.getAttribute('data-stream') !== 'false',
  } = options;
  const commandsUrl = options.commands === false ? '' : String(options.commands ?? commandsEndpoint(endpoint)).replace(/\/+$/, '');
  /* launcher: 'always' (a button in the corner opens the chat as a panel),
   * 'never' (the chat sits where the container is), or 'auto': in place on
   * wide windows, a launcher on windows narrower than launcherBelow px.
   * A floating widget (no container on the page) is always a launcher. */
  const launcherSetting = String(options.launcher ?? container.getAttribute('data-launcher') ?? (floating ? 'always' : 'auto'));
  const launcherBelow = Number(options.launcherBelow ?? container.getAttribute('data-launcher-below')) || LAUNCHER_BELOW;
  const doc = container.ownerDocument;
  const win = doc.defaultView;
  /* the window's console when a problem is logged (a test may swap it) */
  const log = { warn: (...a) => win?.console?.warn?.(...a), error: (...a) => win?.console?.error?.(...a) };
  const client = createChatClient({ endpoint, fetch: fetchFn, stream, console: log, location: win?.location });
  const storage = options.storage === undefined ? tabStorage(win) : options.storage;

  /* state */
  const saved = loadSaved(storage, storageKey);
  const s = createState(saved, expanded);

  let seq = 0;
  let run = null; /* {controller} while a loop runs */
  let failed = null; /* {route, payload, card?} of the request that failed, for Retry */
  /* the approval that waits for the visitor: {msgId, id, ticket, results}
   * (msgId: its card; results: the page calls of the same turn, already run) */
  let approval = saved?.approval ?? null;
  let destroyed = false;
  let generation = 0; /* bumped by clear() and destroy(): a running loop's late results are dropped */
  let frameQueued = false; /* a render is scheduled for the next animation frame */

  const ui = createView(container, { template: options.template, floating });
  const { root, frame, launcher, canApprove, questionHost } = ui;

  /* launcher mode follows the window's width ('auto') through matchMedia */
  const media = (q) => (typeof win?.matchMedia === 'function' ? win.matchMedia(q) : null);
  const narrow = launcherSetting === 'auto' ? media(`(max-width: ${launcherBelow - 0.02}px)`) : null;
  const sheet = media(`(max-width: ${SHEET_BELOW - 0.02}px)`); /* the panel fills the screen */
  let launcherMode = launcherSetting === 'always' || (launcherSetting === 'auto' && Boolean(narrow?.matches));
  const onWidth = () => {
    const now = Boolean(narrow?.matches);
    if (now === launcherMode) return;
    const hadFocus = frame.contains(doc.activeElement);
    launcherMode = now;
    render();
    if (launcherMode && !s.isOpen && hadFocus) launcher.focus();
  };
  narrow?.addEventListener?.('change', onWidth);

  function derived() {
    return deriveView(s, { failed, approval, launcherMode });
  }

  function snapshot() {
    /* the waiting approval without its ticket: the ticket is only ever sent back */
    return {
      ...s,
      ...derived(),
      approval: approval ? { id: approval.id, card: approval.msgId } : null,
      question: question ? { id: question.id, questions: question.questions } : null,
    };
  }

  /* --- questions from the model (question.js) --- */

  /* the question waiting for the visitor: {id, questions, results, form}, or
   * null; its card sits in questionHost, above the input, outside the
   * template (built by question.js, never re-rendered) */
  let question = null;

  /** Show the card of a question answer; `results` are the page calls' of the same turn. */
  function askQuestion(q, results) {
    const form = buildQuestionCard(doc, q, (answers) => answerQuestion(answers));
    question = { id: q.id, questions: q.questions, results, form };
    questionHost.replaceChildren(form);
    if (launcherMode && !s.isOpen) s.unread = true;
  }

  /** Forget the waiting question and take its card away. */
  function dropQuestion() {
    const q = question;
    question = null;
    questionHost.replaceChildren();
    return q;
  }

  /** The visitor sent the card: the answers (and the page results) go back. */
  function answerQuestion(answers) {
    if (destroyed || s.isLoading || !question) return Promise.resolve();
    const q = dropQuestion();
    addMessage('user', describeAnswers(q.questions, answers));
    const payload = { answer: { id: q.id, answers } };
    if (q.results.length > 0) payload.results = q.results;
    return drive('geminiAgent.submitToolResults', payload);
  }

  /**
   * The focus to the card's first control: from the input the message was
   * sent from too (the answer is what comes next), but not while the
   * visitor types a new message there or works on the page.
   */
  function focusQuestion() {
    if (!question || (launcherMode && !s.isOpen)) return;
    const active = doc.activeElement;
    if (active === inputEl() && String(active.value ?? '').trim()) return;
    if (active && active !== doc.body && !frame.contains(active)) return;
    firstControl(question.form)?.focus();
  }

  function inputEl() {
    return ui.inputEl();
  }

  function render() {
    if (destroyed) return;
    ui.render(snapshot(), { launcherMode, unread: s.unread, isPeek: s.isPeek });
  }


  function persist() {
    saveConversation(storage, storageKey, s, approval);
  }

  function newId() {
    return `m${Date.now().toString(36)}-${(seq++).toString(36)}`;
  }

  /** Render at the next animation frame (at most one render a frame), for text that streams in. */
  function renderSoon() {
    if (frameQueued || destroyed) return;
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

  /** @param {{status?: 'ok'|'failed'}} [extra]  status: for action lines */
  function addMessage(role, content, extra = {}) {
    s.messages.push({
      id: newId(),
      role,
      content: String(content),
      timestamp: new Date().toISOString(),
      ...(extra.status ? { status: extra.status } : {}),
    });
    if ((role === 'assistant' || role === 'system') && launcherMode && !s.isOpen) s.unread = true;
    persist();
    render();
  }

  function set(patch) {
    Object.assign(s, patch);
    render();
  }

  /* the protocol */
  function currentTools() {
    try {
      const list = tools();
      return Array.isArray(list) ? list : [];
    } catch (e) {
      win?.console?.warn?.('gemini-chat: building the tool catalog failed', e);
      return [];
    }
  }

  function currentPageState() {
    try {
      return toJSONSafe(automation?.getPageState?.()) ?? {};
    } catch (e) {
      win?.console?.warn?.('gemini-chat: reading the page state failed', e);
      return {};
    }
  }

  function absorb(answer) {
    const lines = absorbAnswer(s, answer);
    persist();
    if (lines) for (const l of lines) addMessage('action', l.content, { status: l.status });
    else render();
  }

  /**
   * On a phone the open panel is a full-screen sheet that hides the page: a
   * page action makes it a half-height sheet (data-peek, chat.css), so the
   * visitor sees the page change, until the panel is opened again.
   */
  function peekIfSheet() {
    if (!launcherMode || !s.isOpen || !sheet?.matches || s.isPeek) return;
    set({ isPeek: true });
  }

  /** Mark what a page action changed; when peeking, bring it into view above the sheet. */
  function showChanged(changed) {
    if (changed.length === 0) return;
    markChanged(changed, { setTimeout: (f, ms) => (win?.setTimeout ?? setTimeout)(f, ms) });
    if (!s.isPeek) return;
    const top = frame.getBoundingClientRect?.().top ?? 0;
    const box = changed[0].getBoundingClientRect?.();
    if (box && (box.top < 0 || box.bottom > top)) changed[0].scrollIntoView?.({ block: 'start' });
  }

  async function runCalls(calls, signal, live) {
    /* Every call must carry the id its result answers; one without is a
     * server bug: run nothing, send nothing, say so. */
    const anonymous = calls.find((c) => typeof c?.id !== 'string' || c.id === '');
    if (anonymous) {
      throw new ChatError(
        'protocol_error',
        'The server asked for a page action without a call id, so the chat cannot report its result. Nothing was done on the page. Start a new chat to go on.',
        { retry: false },
      );
    }
    const results = [];
    for (const call of calls) {
      if (signal.aborted) throw abortError();
      const name = String(call?.name ?? '');
      const args = call?.args && typeof call.args === 'object' ? call.args : {};
      const tool = currentTools().find((t) => t.name === name && !t.webmcpOnly);
      let line;
      try {
        line = describeCall(name, args, automation) || defaultDescribeCall(name, args);
      } catch {
        line = defaultDescribeCall(name, args);
      }
      set({ statusText: `${line}…` });
      peekIfSheet();
      const watch = watchChanges(doc, root);
      let result;
      if (!tool) {
        result = { ok: false, error: `There is no page tool named "${name}" on this page now.` };
      } else {
        try {
          result = await tool.execute(args);
          if (!result || typeof result !== 'object') result = { ok: true, result };
        } catch (e) {
          result = { ok: false, error: e?.message || String(e) };
        }
      }
      await settle(win);
      const changed = watch.stop();
      if (!live()) throw abortError();
      showChanged(changed);
      const ok = result.ok !== false;
      addMessage('action', ok ? line : `${line} — failed: ${result.error ?? 'unknown error'}`, { status: ok ? 'ok' : 'failed' });
      results.push({ callId: call.id, result: resultForModel(result), isError: !ok });
    }
    return results;
  }

  /**
   * @typedef {object} LiveAnswer  the text a request streams, while it streams
   * @property {string} text    the current step's text so far (the deltas since
   *   the step's first one; until a new step's first delta, the previous step's)
   * @property {boolean} stale  a new step has begun: its first delta replaces the text
   * @property {ChatMessage|null} msg  its bubble: an assistant message with
   *   status 'streaming', made at the first delta
   */

  /**
   * Show one streamed event (docs/chat-protocol.md): statuses as the
   * status line, text deltas in the live bubble (rendered at the next frame),
   * usage and model kept. Unknown kinds and fields are ignored.
   * @param {LiveAnswer} liveAnswer
   * @param {any} event
   */
  function showEvent(liveAnswer, event) {
    switch (event.type) {
      case 'status': {
        /* a heartbeat repeats the current status to keep proxies from timing
         * out: what is shown stays, and no new step begins */
        if (event.heartbeat === true) return;
        if (event.status === 'thinking') {
          liveAnswer.stale = true;
          set({ statusText: 'Thinking…' });
        } else if (event.status === 'tool') {
          set({ statusText: `${describeServerAction(event.tool)}…` });
        } else if (event.status === 'waiting') {
          set({ statusText: 'Getting ready to act on the page…' });
        }
        return;
      }
      case 'delta': {
        if (typeof event.delta !== 'string' || event.delta === '') return;
        if (liveAnswer.stale || !liveAnswer.msg) s.statusText = 'Writing…'; /* a step's first text */
        if (liveAnswer.stale) {
          liveAnswer.text = '';
          liveAnswer.stale = false;
        }
        liveAnswer.text += event.delta;
        if (!liveAnswer.msg) {
          liveAnswer.msg = { id: newId(), role: 'assistant', content: '', timestamp: new Date().toISOString(), status: 'streaming' };
          s.messages.push(liveAnswer.msg);
        }
        liveAnswer.msg.content = closeOpenMarkdown(liveAnswer.text);
        renderSoon();
        return;
      }
      case 'usage':
        if (event.usage && typeof event.usage === 'object' && !Array.isArray(event.usage)) s.usage = event.usage;
        if (typeof event.model === 'string') s.model = event.model;
        renderSoon();
        return;
      default:
      /* tool-call and tool-result: the result's serverCalls and calls say the same, and are what is shown */
    }
  }

  /** The answer arrived: its bubble goes, the answer is shown as without streaming. */
  function dropLive(liveAnswer) {
    if (!liveAnswer?.msg) return;
    const at = s.messages.indexOf(liveAnswer.msg);
    if (at >= 0) s.messages.splice(at, 1);
    liveAnswer.msg = null;
  }

  /**
   * Stop ended `request` before its answer, after `partial` text was shown.
   * The server keeps nothing, so the history the browser holds is what the
   * next request sends: give it what the visitor did, in a shape the server
   * accepts (docs/chat-protocol.md). The model's text stays on screen,
   * marked stopped, but never enters the history: a model turn needs the
   * server's signature, and the browser cannot make one (the server would
   * refuse the next request: history_tampered).
   *  - sendMessage: with text, the visitor's message as a user turn
   *    (signature null; page calls still waiting before it are answered "not
   *    run" first, as the server would); without text, nothing: the message
   *    stays on screen but is not sent.
   *  - submitToolResults: the page actions did run, so the waiting calls are
   *    answered with their results (as the server would have); no model turn.
   *  - an approval decision, or anything else that leaves a server action's
   *    call waiting: nothing. That call's answer is the server's to give and
   *    sign; the next message makes the server answer it "not run".
   * @param {{route: string, payload: any}} request
   * @param {string} partial
   */
  function rememberStopped(request, partial) {
    rememberStoppedIn(s, request, partial);
  }


  /**
   * Show the approval card of an approval-required answer and wait for the
   * visitor (the loop ends here; decide() starts the next one). `results`:
   * the page calls of the same model turn, already run, sent with the decision.
   * @param {ReturnType<typeof readApproval>} a
   * @param {object[]} results
   */
  function askApproval(a, results) {
    const card = {
      id: newId(),
      role: 'approval',
      content: a.preview,
      timestamp: new Date().toISOString(),
      status: 'pending',
      tool: a.tool,
      actionTitle: a.title,
      reason: a.reason,
      args: a.args,
      expires: a.expires,
    };
    approval = { msgId: card.id, id: a.id, ticket: a.ticket, results };
    s.messages.push(card);
    if (launcherMode && !s.isOpen) s.unread = true;
    persist();
    render();
  }

  /**
   * Mark the card of the waiting approval (`status`: approved, declined or
   * undecided) and forget the approval: its buttons go.
   * @returns {{msgId: string, id: string, ticket: string, results: object[]}|null}  the approval it was
   */
  function settleApproval(status) {
    const a = approval;
    if (!a) return null;
    approval = null;
    const card = s.messages.find((m) => m.id === a.msgId);
    if (card) card.status = status;
    return a;
  }

  /**
   * The visitor's decision on the waiting approval: submitToolResults with the
   * ticket (and the page results of the same turn), then the loop goes on.
   * Only the card's buttons call this.
   * @param {'approve'|'reject'} decision
   */
  function decide(decision) {
    if (destroyed || s.isLoading || !approval) return Promise.resolve();
    const a = settleApproval(decision === 'approve' ? 'approved' : 'declined');
    persist();
    const payload = { approval: { id: a.id, ticket: a.ticket, decision } };
    if (a.results.length > 0) payload.results = a.results;
    return drive('geminiAgent.submitToolResults', payload, a.msgId);
  }

  /**
   * Put the focus on the card of the waiting approval (the item itself, not
   * its Approve button: a key pressed by habit must not approve anything),
   * unless the visitor is busy elsewhere: typing in the input, or on the page.
   */
  function focusCard() {
    if (!approval || (launcherMode && !s.isOpen)) return;
    const active = doc.activeElement;
    if (active === inputEl() || (active && active !== doc.body && !frame.contains(active))) return;
    const node = [...root.querySelectorAll(`[data-id="${approval.msgId}"]`)].find((el) => !el.closest('[hidden]'));
    if (!node) return;
    if (!node.hasAttribute('tabindex')) node.setAttribute('tabindex', '-1');
    node.focus();
  }

  /**
   * @typedef {object} Loop  one run of drive(): what its parts share
   * @property {AbortController} controller
   * @property {() => boolean} live  false after clear() or destroy()
   * @property {{route: string, payload: object, card?: string}} request  the request to send next
   * @property {object|null} inFlight  the request while it waits for its answer
   * @property {LiveAnswer|null} liveAnswer
   * @property {number} trips  requests answered
   */

  /** What every request carries besides its payload: the conversation and the page now. */
  function requestBody(payload) {
    return {
      ...payload,
      history: s.history,
      signatures: alignSignatures(s.signatures, s.history.length),
      ...(s.conversation ? { conversation: s.conversation } : {}),
      toolDefinitions: toolDefinitions(currentTools()),
      pageState: currentPageState(),
    };
  }

  /** Send the loop's request; its streamed events show as they come. Resolves with the answer, taken in. */
  async function postRequest(loop) {
    const { controller, live, request } = loop;
    failed = request;
    loop.inFlight = request;
    const streamed = { text: '', stale: false, msg: null };
    loop.liveAnswer = streamed;
    const answer = await client.post(request.route, requestBody(request.payload), controller.signal, (event) => {
      if (live() && !controller.signal.aborted) showEvent(streamed, event);
    });
    loop.inFlight = null;
    loop.trips++;
    failed = null;
    if (!live()) throw abortError();
    dropLive(loop.liveAnswer);
    loop.liveAnswer = null;
    absorb(answer);
    return answer;
  }

  const BAD_ANSWER = 'The server sent an answer the chat cannot use. Try sending your message again.';

  /** The model's words that come with calls, when it has some. */
  function sayAlong(answer) {
    if (typeof answer.message === 'string' && answer.message.trim()) addMessage('assistant', answer.message);
  }

  /** Run the page calls of an answer (none: none); a Stop meanwhile ends the loop. */
  async function runAnswerCalls(loop, calls) {
    const results = calls?.length ? await runCalls(calls, loop.controller.signal, loop.live) : [];
    if (loop.controller.signal.aborted || !loop.live()) throw abortError();
    return results;
  }

  /**
   * An answer that waits for the visitor (approval-required or question):
   * the page calls of the same turn run first, then the card asks.
   * @returns {Promise<string>} the loop's outcome
   */
  async function askVisitor(loop, answer) {
    const approvalAsked = answer.type === 'approval-required';
    const wanted = approvalAsked ? readApproval(answer.approval) : readQuestion(answer.question);
    if (!wanted || (answer.calls !== undefined && !Array.isArray(answer.calls))) throw new ChatError('bad_answer', BAD_ANSWER);
    sayAlong(answer);
    const results = await runAnswerCalls(loop, answer.calls);
    if (!approvalAsked) {
      askQuestion(wanted, results);
      return 'question';
    }
    if (!canApprove) {
      addMessage(
        'system',
        `The assistant wants to do something that needs your approval (${wanted.preview}), but this page's chat cannot ask for it, so it was not done.`,
      );
      return 'approval-unavailable';
    }
    askApproval(wanted, results);
    return 'approval';
  }

  /**
   * Act on one answer: the loop's outcome when it ends here, or null when
   * the page calls ran and their results are the next request.
   * @returns {Promise<string|null>}
   */
  async function handleAnswer(loop, answer) {
    if (answer.type === 'response') {
      addMessage('assistant', answer.message ?? '');
      return 'response';
    }
    if (answer.type === 'blocked') {
      addMessage('system', answer.message || 'The model declined to answer this. Try rephrasing your request.');
      return 'blocked';
    }
    if (answer.type === 'approval-required' || answer.type === 'question') return askVisitor(loop, answer);
    if (answer.type !== 'tool-calls' || !Array.isArray(answer.calls) || answer.calls.length === 0)
      throw new ChatError('bad_answer', BAD_ANSWER);
    sayAlong(answer);
    if (loop.trips >= maxRoundTrips) {
      addMessage('system', `Stopped after ${maxRoundTrips} round trips without a final answer. Ask me to continue if you want me to go on.`);
      return 'limit';
    }
    const results = await runAnswerCalls(loop, answer.calls);
    set({ statusText: 'Thinking…' });
    loop.request = { route: 'geminiAgent.submitToolResults', payload: { results } };
    return null;
  }

  /**
   * The loop ended by Stop or a failure: the partial answer is marked, the
   * history gets what it may (rememberStopped), the error is shown.
   * @returns {string} the outcome
   */
  function endEarly(loop, e) {
    const bubble = loop.liveAnswer?.msg;
    if (loop.controller.signal.aborted || e?.name === 'AbortError') {
      failed = null;
      if (!loop.live()) return 'stopped';
      if (bubble) bubble.status = 'stopped';
      if (loop.inFlight) rememberStopped(loop.inFlight, loop.liveAnswer?.text ?? '');
      addMessage('system', 'Stopped.');
      return 'stopped';
    }
    if (!loop.live()) return 'error';
    if (bubble) bubble.status = 'incomplete';
    const err = e instanceof ChatError ? e : new ChatError('client', `Something went wrong in the chat: ${e?.message || e}`);
    /* the ticket was refused: the card must not say the decision was carried out */
    if (err.code === 'approval_invalid' && loop.request.card) {
      const decided = s.messages.find((m) => m.id === loop.request.card);
      if (decided) decided.status = 'invalid';
    }
    if (!(e instanceof ChatError)) win?.console?.error?.('gemini-chat:', e);
    s.error = err.message;
    s.errorCode = err.code;
    if (err.retry === false) failed = null; /* the same request again cannot help */
    return 'error';
  }

  /** The loop is over: idle again, saved, focus to what waits, and the page told. */
  function finishLoop(loop, outcome) {
    if (run?.controller === loop.controller) run = null;
    if (loop.live()) {
      persist();
      set({ isLoading: false, statusText: '', outcome });
      if (outcome === 'approval') focusCard();
      if (outcome === 'question') focusQuestion();
      container.dispatchEvent(new win.CustomEvent('gemini-chat:done', { bubbles: true, detail: { outcome } }));
    } else if (!destroyed && !run) {
      set({ isLoading: false, statusText: '' });
    }
  }

  /**
   * The loop: post `payload` to `route`, run page calls, submit their results,
   * until the server answers with text (or blocked), asks for the visitor's
   * approval, the round-trip budget is spent, Stop is pressed, or a request
   * fails. Never rejects.
   * @param {string} route
   * @param {object} payload
   * @param {string} [card]  an approval decision: the id of its card
   */
  async function drive(route, payload, card) {
    const gen = generation;
    /** @type {Loop} */
    const loop = {
      controller: new AbortController(),
      live: () => gen === generation && !destroyed,
      request: { route, payload, card },
      inFlight: null,
      liveAnswer: null,
      trips: 0,
    };
    run = { controller: loop.controller };
    failed = null;
    set({ isLoading: true, error: '', errorCode: '', outcome: '', statusText: 'Thinking…' });
    let outcome = null;
    try {
      while (outcome === null) outcome = await handleAnswer(loop, await postRequest(loop));
    } catch (e) {
      outcome = endEarly(loop, e);
    } finally {
      finishLoop(loop, outcome ?? 'error');
    }
  }

  /* --- user commands (commands.js) --- */

  /** @type {Promise<import('./commands.js').UserCommand[]>|null} */
  let commandsLoad = null;

  /**
   * The site's user commands, asked for once (GET <commands>): a 404, an
   * empty list or an answer that is not the listing means none. Only a
   * failure to reach the server is asked again, at the next `/`.
   */
  function loadCommands() {
    if (!commandsUrl || typeof fetchFn !== 'function') return Promise.resolve([]);
    if (commandsLoad) return commandsLoad;
    const asked = (async () => {
      let res;
      try {
        res = await fetchFn(commandsUrl, { method: 'GET', headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      } catch {
        return null; /* not reached: ask again next time */
      }
      try {
        return res?.ok ? readCommands(JSON.parse(await res.text())) : [];
      } catch {
        return [];
      }
    })();
    commandsLoad = asked.then((list) => {
      if (list === null) commandsLoad = null;
      return list ?? [];
    });
    return commandsLoad;
  }

  /** The words for a command that failed: the envelope's code, as other errors. */
  function commandError(name, status, data, retryAfter) {
    const code = data?.error?.code;
    if (code === 'unknown_action')
      return new ChatError(code, `This site has no command /${name} now.`, { retry: false });
    if (code === 'action_failed') return new ChatError(code, `The command /${name} failed. Retry in a moment.`);
    return explainError(status, data, retryAfter);
  }

  /**
   * Add a shared command's output to the history as a user turn (signature
   * null: the server accepts a visitor's turn at the end), after answering
   * page calls still waiting "not run" as rememberStopped does. A server
   * action's call waiting for the visitor's approval keeps it out: that
   * call's answer is the server's to give. Returns whether it was added.
   */
  function shareOutput(name, output) {
    return shareOutputIn(s, name, output);
  }


  /**
   * POST <commands>/<name> {args}: the command's answer ({output,
   * shareWithModel}), or a ChatError in the visitor's words.
   */
  async function postCommand(name, args, signal) {
    const url = `${commandsUrl}/${encodeURIComponent(name)}`;
    let res;
    let text;
    try {
      res = await fetchFn(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ args }),
        credentials: 'same-origin',
        signal,
      });
      text = await res.text();
    } catch (e) {
      if (signal.aborted || e?.name === 'AbortError') throw abortError();
      const err = await client.networkError(url);
      throw signal.aborted ? abortError() : err;
    }
    const data = parseBody(text);
    if (!res.ok) {
      const err = commandError(name, res.status, data, res.headers?.get?.('Retry-After') ?? null);
      const said = typeof data?.error?.message === 'string' ? `: ${data.error.message}` : '';
      win?.console?.warn?.(`gemini-chat: command ${name} answered HTTP ${res.status} (${err.code})${said}`);
      throw err;
    }
    if (typeof data?.output !== 'string') throw unreadable(res.status);
    return data;
  }

  /** A command's output in the conversation, shared with the model when it says so and may be. */
  function showCommandOutput(name, data) {
    const shared = data.shareWithModel === true && shareOutput(name, data.output);
    const note = shared
      ? ' (the assistant sees it with your next message)'
      : data.shareWithModel === true
        ? ' (not given to the assistant: an action waits for your approval)'
        : '';
    s.messages.push({
      id: newId(),
      role: 'command',
      content: data.output,
      timestamp: new Date().toISOString(),
      command: `/${name}`,
      shared,
      commandTitle: `Output of /${name}${note}`,
    });
  }

  /**
   * Run a user command without the model (POST <commands>/<name> {args}):
   * the visitor's line, then the output as plain text, marked as a command's.
   * @param {string} name
   * @param {string} args
   * @param {string|null} line  the visitor's line to show; null on Retry (shown already)
   */
  async function runCommand(name, args, line) {
    const controller = new AbortController();
    const gen = generation;
    const live = () => gen === generation && !destroyed;
    run = { controller };
    failed = { command: { name, args } };
    if (line !== null) addMessage('user', line);
    set({ isLoading: true, error: '', errorCode: '', outcome: '', statusText: `Running /${name}…` });
    let outcome = 'command';
    try {
      const data = await postCommand(name, args, controller.signal);
      failed = null;
      if (!live()) return;
      showCommandOutput(name, data);
    } catch (e) {
      if (!live()) return;
      if (controller.signal.aborted || e?.name === 'AbortError') {
        failed = null;
        outcome = 'stopped';
        s.messages.push({ id: newId(), role: 'system', content: 'Stopped.', timestamp: new Date().toISOString() });
      } else {
        outcome = 'error';
        const err = e instanceof ChatError ? e : new ChatError('client', `Something went wrong in the chat: ${e?.message || e}`);
        if (!(e instanceof ChatError)) win?.console?.error?.('gemini-chat:', e);
        s.error = err.message;
        s.errorCode = err.code;
        if (err.retry === false) failed = null;
      }
    } finally {
      if (run?.controller === controller) run = null;
      if (live()) {
        persist();
        set({ isLoading: false, statusText: '', outcome });
        container.dispatchEvent(new win.CustomEvent('gemini-chat:done', { bubbles: true, detail: { outcome } }));
      }
    }
  }

  function send(text) {
    const message = String(text ?? '');
    if (destroyed || s.isLoading || !message.trim()) return Promise.resolve();
    const cmd = commandsUrl ? parseCommandLine(message) : null;
    if (!cmd) return sendMessage(message);
    /* busy while the list is read, so a second send waits its turn */
    set({ isLoading: true, statusText: '' });
    return loadCommands().then((list) => {
      s.isLoading = false;
      if (destroyed) return undefined;
      /* a /word that is no command of this site is an ordinary message */
      if (!list.some((c) => c.name === cmd.name)) return sendMessage(message);
      return runCommand(cmd.name, cmd.args, message.trim());
    });
  }

  function sendMessage(message) {
    /* a new message instead of a decision: the action is not done (the
     * server answers its call "not run"), and its card says so */
    settleApproval('undecided');
    dropQuestion(); /* ...and a question left: the server answers it "not answered" */
    addMessage('user', message.trim());
    return drive('geminiAgent.sendMessage', { message: message.trim() });
  }

  function retry() {
    if (destroyed || s.isLoading || !failed) return Promise.resolve();
    if (failed.command) return runCommand(failed.command.name, failed.command.args, null);
    const { route, payload, card } = failed;
    return drive(route, payload, card);
  }

  function stop() {
    run?.controller.abort();
  }

  function clear() {
    generation++;
    stop();
    failed = null;
    approval = null;
    dropQuestion();
    s.messages = [];
    s.history = [];
    s.signatures = [];
    s.conversation = '';
    s.error = '';
    s.errorCode = '';
    s.outcome = '';
    persist();
    render();
  }

  /** Launcher mode: show the panel and put the cursor in the input. */
  function open() {
    if (destroyed) return;
    s.isOpen = true;
    s.isPeek = false;
    s.unread = false;
    persist();
    render();
    inputEl()?.focus();
  }

  /** Launcher mode: hide the panel; focus goes back to the launcher. */
  function close() {
    if (destroyed || !launcherMode || !s.isOpen) return;
    s.isOpen = false;
    persist();
    render();
    launcher.focus();
  }

  /** What the server says about itself (GET <endpoint>/geminiAgent.status:
   * {ready, model}); any failure is silent, the chat works without it. */
  const statusController = typeof AbortController === 'function' ? new AbortController() : null;
  async function loadStatus() {
    if (!checkStatus) return;
    const found = await client.status(statusController?.signal);
    if (!found || destroyed) return;
    s.server = found;
    render();
  }

  function sendFromInput() {
    const input = inputEl();
    if (!input || s.isLoading || !String(input.value).trim()) return;
    const text = input.value;
    input.value = '';
    menu?.close();
    send(text);
  }

  /* events, delegated so that any template works */
  const onClick = (ev) => {
    const el = ev.target?.closest?.('[data-ref]');
    if (!el || !root.contains(el)) return;
    switch (el.getAttribute('data-ref')) {
      case 'sendMessage':
        ev.preventDefault();
        sendFromInput();
        break;
      case 'toggleExpand':
        s.isExpanded = !s.isExpanded;
        persist();
        render();
        break;
      case 'stopLoop':
        stop();
        break;
      case 'retry':
        retry();
        break;
      case 'clearChat':
        clear();
        inputEl()?.focus();
        break;
      case 'approveAction':
      case 'rejectAction': {
        /* only the waiting approval's own card decides */
        const item = el.closest('[data-id]');
        if (!approval || item?.getAttribute('data-id') !== approval.msgId) break;
        decide(el.getAttribute('data-ref') === 'approveAction' ? 'approve' : 'reject');
        inputEl()?.focus(); /* the buttons are gone */
        break;
      }
      case 'openChat':
        if (launcherMode && s.isOpen) close();
        else open();
        break;
      case 'closeChat':
        close();
        break;
      default:
    }
  };
  const onKeyDown = (ev) => {
    if (menu?.isOpen && ev.target === inputEl() && menu.handleKey(ev)) return;
    if (ev.key === 'Escape' && launcherMode && s.isOpen && !ev.isComposing) {
      ev.preventDefault();
      close();
      return;
    }
    /* the full-screen sheet covers the page: Tab stays inside it */
    if (ev.key === 'Tab' && launcherMode && s.isOpen && sheet?.matches && frame.contains(ev.target)) {
      const list = ui.focusables();
      if (list.length === 0) return;
      const first = list[0];
      const last = list[list.length - 1];
      if (ev.shiftKey && doc.activeElement === first) {
        ev.preventDefault();
        last.focus();
      } else if (!ev.shiftKey && doc.activeElement === last) {
        ev.preventDefault();
        first.focus();
      }
      return;
    }
    if (ev.key !== 'Enter' || ev.shiftKey || ev.isComposing || ev.keyCode === 229) return;
    const el = ev.target?.closest?.('[data-ref="messageInput"]');
    if (!el || !root.contains(el)) return;
    ev.preventDefault();
    sendFromInput();
  };
  const onInput = (ev) => {
    if (!ev.target?.closest?.('[data-ref="messageInput"]')) return;
    render();
    showCommands();
  };
  /* the command list, under an input the widget's own template or the page's has */
  const menuInput = inputEl();
  const menu = commandsUrl && menuInput ? createCommandMenu(menuInput, { id: `${frame.id}-commands`, onPick: () => render() }) : null;
  /** At a `/` at the start of the input: the commands matching what is typed. */
  function showCommands() {
    const input = inputEl();
    if (!menu || input !== menuInput) return;
    if (!String(input.value).startsWith('/')) {
      menu.close();
      return;
    }
    loadCommands().then((list) => {
      if (!destroyed && doc.activeElement === input) menu.update(list);
    });
  }
  const onFocusOut = (ev) => {
    if (ev.target === menuInput) menu?.close();
  };
  const onSubmit = (ev) => {
    ev.preventDefault();
    sendFromInput();
  };
  root.addEventListener('click', onClick);
  root.addEventListener('keydown', onKeyDown);
  root.addEventListener('input', onInput);
  root.addEventListener('submit', onSubmit);
  root.addEventListener('focusout', onFocusOut);
  render();
  loadStatus();

  return {
    get state() {
      return JSON.parse(JSON.stringify(snapshot()));
    },
    send,
    retry,
    stop,
    clear,
    open,
    close,
    destroy() {
      generation++;
      destroyed = true;
      stop();
      statusController?.abort();
      narrow?.removeEventListener?.('change', onWidth);
      root.removeEventListener('click', onClick);
      root.removeEventListener('keydown', onKeyDown);
      root.removeEventListener('input', onInput);
      root.removeEventListener('submit', onSubmit);
      root.removeEventListener('focusout', onFocusOut);
      menu?.destroy();
      root.remove();
    },
  };
}
