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
 *    (errors.js ERROR_WORDS).
 *  - Streams answers (option `stream`, on by default): asks for NDJSON
 *    (`Accept: application/x-ndjson`), shows the model's text as it arrives
 *    (rendered once per animation frame, unfinished Markdown closed by
 *    markdown.js's closeOpenMarkdown) and what the server is doing
 *    ("Searching products…"); the `result` line is handled exactly as the
 *    single JSON answer, which is still read when the server sends one. Stop
 *    keeps the text received, marked stopped, on screen; the history gets
 *    only what the server can vouch for (state.js rememberStopped).
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
 *    server's action results in the history (history.js latestPlan), each step a
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
 *    The default template is view.js's DEFAULT_TEMPLATE; a page may ship its own
 *    as a <template> inside the container or as <template id="gemini-chat">.
 *
 * What it does not do: find the page's interactions or build tools (the
 * automation and tools modules do, passed in by index.js), or ever insert the
 * model's text as HTML (Markdown goes through marked + DOMPurify, everything
 * else is textContent).
 *
 * How it is built: mountChat only assembles the parts, which share the
 * widget's named state (`w` below) and each do one job (docs/widget.md has
 * the table): turn.js the protocol loop of a visitor turn, live.js the
 * streamed text, pagecalls.js the page calls, asks.js the approval and
 * question cards, runner.js the user commands, events.js the listeners,
 * panel.js the launcher and the sheet, screen.js rendering and saving.
 *
 * @module chat
 */
import { commandsEndpoint, createCommandMenu, parseCommandLine } from './commands.js';
import { DEFAULT_ENDPOINT } from './origin.js';
import { createChatClient } from './client.js';
import { createView, LAUNCHER_BELOW } from './view.js';
import { toJSONSafe } from './history.js';
import { markChanged, watchChanges } from './changes.js';
import { loadSaved, tabStorage } from './storage.js';
import { createState } from './state.js';
import { createScreen } from './screen.js';
import { createPanel } from './panel.js';
import { createLiveDisplay } from './live.js';
import { defaultDescribeCall, runPageCalls } from './pagecalls.js';
import { createTurnDriver } from './turn.js';
import { createAsks } from './asks.js';
import { createCommandRunner } from './runner.js';
import { installEvents } from './events.js';

export { OFFLINE_NOTICE } from './state.js';
export { DEFAULT_TEMPLATE, LAUNCHER_BELOW, SHEET_BELOW } from './view.js';

/* what chat.js exported before its parts had modules of their own */
export { bindTemplate } from './template.js';
export { ChatError, NOT_SET_UP, ERROR_WORDS, retryAfterSeconds, explainError } from './errors.js';
export { describeServerAction, describeServerCall, describeUsage } from './describe.js';
export { toJSONSafe, resultForModel, waitingServerCall, answerPendingCalls, latestPlan, alignSignatures, answerPendingSigned } from './history.js';
export { readApproval } from './decision.js';

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

/** `value`, or `fallback` when it is undefined (as a default parameter would). */
function given(value, fallback) {
  return value === undefined ? fallback : value;
}

/** The options with their defaults; the container's data- attributes count too. */
function readOptions(container, options) {
  const floating = given(options.floating, container.hasAttribute('data-floating'));
  const endpoint = given(options.endpoint, DEFAULT_ENDPOINT);
  return {
    automation: given(options.automation, null),
    tools: given(options.tools, () => []),
    toolDefinitions: given(options.toolDefinitions, defaultToolDefinitions),
    describeCall: given(options.describeCall, defaultDescribeCall),
    endpoint,
    storageKey: given(options.storageKey, 'gemini-agent:history'),
    maxRoundTrips: given(options.maxRoundTrips, 15),
    fetch: given(options.fetch, globalThis.fetch),
    expanded: given(options.expanded, container.hasAttribute('data-expanded')),
    floating,
    checkStatus: given(options.checkStatus, true),
    stream: given(options.stream, container.getAttribute('data-stream') !== 'false'),
    commandsUrl: options.commands === false ? '' : String(options.commands ?? commandsEndpoint(endpoint)).replace(/\/+$/, ''),
    /* 'always' (a button in the corner opens the chat as a panel), 'never'
     * (the chat sits where the container is), or 'auto' (panel.js); a
     * floating widget (no container on the page) is always a launcher */
    launcher: String(options.launcher ?? container.getAttribute('data-launcher') ?? (floating ? 'always' : 'auto')),
    launcherBelow: Number(options.launcherBelow ?? container.getAttribute('data-launcher-below')) || LAUNCHER_BELOW,
  };
}

/**
 * The page as the turn driver sees it: the catalog and the page state every
 * request carries, and the page calls run (pagecalls.js) with their progress
 * lines, the sheet peeking and what they changed marked (changes.js).
 */
function createPageAccess(o, { w, win, doc, ui, panel, screen }) {
  const later = (f, ms) => (win?.setTimeout ?? setTimeout)(f, ms);
  function tools() {
    try {
      const list = o.tools();
      return Array.isArray(list) ? list : [];
    } catch (e) {
      win?.console?.warn?.('gemini-chat: building the tool catalog failed', e);
      return [];
    }
  }
  function pageState() {
    try {
      return toJSONSafe(o.automation?.getPageState?.()) ?? {};
    } catch (e) {
      win?.console?.warn?.('gemini-chat: reading the page state failed', e);
      return {};
    }
  }
  /** Mark what a page action changed; when peeking, bring it into view above the sheet. */
  function showChanged(changed) {
    if (changed.length === 0) return;
    markChanged(changed, { setTimeout: later });
    if (!w.s.isPeek) return;
    const top = ui.frame.getBoundingClientRect?.().top ?? 0;
    const box = changed[0].getBoundingClientRect?.();
    if (box && (box.top < 0 || box.bottom > top)) changed[0].scrollIntoView?.({ block: 'start' });
  }
  const deps = {
    tools,
    describeCall: o.describeCall,
    automation: o.automation,
    watch: () => watchChanges(doc, ui.root),
    /* let the page react (re-render, observers) before the next call runs */
    settle: () => new Promise((resolve) => later(resolve, 0)),
    onStart: (line) => {
      screen.set({ statusText: `${line}…` });
      panel.peek();
    },
    onEnd: (line, ok, changed) => {
      showChanged(changed);
      screen.addMessage('action', line, { status: ok ? 'ok' : 'failed' });
    },
  };
  return {
    pageNow: () => ({ toolDefinitions: o.toolDefinitions(tools()), pageState: pageState() }),
    runCalls: (calls, signal, live) => runPageCalls(deps, calls, signal, live),
  };
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
  const o = readOptions(container, options);
  const doc = container.ownerDocument;
  const win = doc.defaultView;
  /* the window's console when a problem is logged (a test may swap it) */
  const log = { warn: (...a) => win?.console?.warn?.(...a), error: (...a) => win?.console?.error?.(...a) };
  const client = createChatClient({ endpoint: o.endpoint, fetch: o.fetch, stream: o.stream, console: log, location: win?.location });
  const storage = options.storage === undefined ? tabStorage(win) : options.storage;
  const saved = loadSaved(storage, o.storageKey);

  /* the widget's named state, shared by its parts */
  const w = {
    s: createState(saved, o.expanded), /* the conversation (state.js) */
    failed: null, /* {route, payload, card?} or {command} of the request that failed, for Retry */
    run: null, /* {controller} while a loop or a command runs */
    approval: saved?.approval ?? null, /* the approval that waits for the visitor (asks.js) */
    question: null, /* the question that waits for the visitor (asks.js) */
    generation: 0, /* bumped by clear() and destroy(): a running loop's late results are dropped */
    destroyed: false,
    launcherMode: false, /* panel.js */
  };
  const { s } = w;
  const ui = createView(container, { template: options.template, floating: o.floating });
  const screen = createScreen({ w, view: ui, win, storage, storageKey: o.storageKey });
  const { render, persist, newId, addMessage, set } = screen;
  const panel = createPanel({ w, win, doc, ui, setting: o.launcher, launcherBelow: o.launcherBelow, render, persist });
  const page = createPageAccess(o, { w, win, doc, ui, panel, screen });
  const done = (outcome) => container.dispatchEvent(new win.CustomEvent('gemini-chat:done', { bubbles: true, detail: { outcome } }));
  /* the cards start the next loop, and the loop asks with the cards */
  const asks = createAsks({ w, doc, ui, newId, addMessage, persist, render, drive: (...a) => turn.drive(...a) });
  const turn = createTurnDriver({
    w, client, log, maxRoundTrips: o.maxRoundTrips, ...page, addMessage, set, render, persist,
    live: createLiveDisplay({ s, newId, set, renderSoon: screen.renderSoon }),
    canApprove: ui.canApprove, askApproval: asks.askApproval, askQuestion: asks.askQuestion,
    onDone: (outcome) => {
      asks.focusWaiting(outcome);
      done(outcome);
    },
  });
  const commands = createCommandRunner({
    w, client, log, newId, addMessage, set, persist, onDone: done,
    url: typeof o.fetch === 'function' ? o.commandsUrl : '',
  });

  function send(text) {
    const message = String(text ?? '');
    if (w.destroyed || s.isLoading || !message.trim()) return Promise.resolve();
    const cmd = o.commandsUrl ? parseCommandLine(message) : null;
    if (!cmd) return sendMessage(message);
    /* busy while the list is read, so a second send waits its turn */
    set({ isLoading: true, statusText: '' });
    return commands.load().then((list) => {
      s.isLoading = false;
      if (w.destroyed) return undefined;
      /* a /word that is no command of this site is an ordinary message */
      if (!list.some((c) => c.name === cmd.name)) return sendMessage(message);
      return commands.run(cmd.name, cmd.args, message.trim());
    });
  }

  function sendMessage(message) {
    /* a new message instead of a decision: the action is not done (the
     * server answers its call "not run"), and its card says so */
    asks.settleApproval('undecided');
    asks.dropQuestion(); /* ...and a question left: the server answers it "not answered" */
    addMessage('user', message.trim());
    return turn.drive('geminiAgent.sendMessage', { message: message.trim() });
  }

  function retry() {
    if (w.destroyed || s.isLoading || !w.failed) return Promise.resolve();
    if (w.failed.command) return commands.run(w.failed.command.name, w.failed.command.args, null);
    const { route, payload, card } = w.failed;
    return turn.drive(route, payload, card);
  }

  const stop = () => w.run?.controller.abort();

  function clear() {
    w.generation++;
    stop();
    w.failed = null;
    w.approval = null;
    asks.dropQuestion();
    Object.assign(s, { messages: [], history: [], signatures: [], conversation: '', error: '', errorCode: '', outcome: '' });
    persist();
    render();
  }

  /* the command list, under an input the widget's own template or the page's has */
  const menuInput = ui.inputEl();
  const menu = o.commandsUrl && menuInput ? createCommandMenu(menuInput, { id: `${ui.frame.id}-commands`, onPick: () => render() }) : null;
  /** At a `/` at the start of the input: the commands matching what is typed. */
  function showCommands() {
    const input = ui.inputEl();
    if (!menu || input !== menuInput) return;
    if (!String(input.value).startsWith('/')) {
      menu.close();
      return;
    }
    commands.load().then((list) => {
      if (!w.destroyed && doc.activeElement === input) menu.update(list);
    });
  }
  function sendFromInput() {
    const input = ui.inputEl();
    if (!input || s.isLoading || !String(input.value).trim()) return;
    const text = input.value;
    input.value = '';
    menu?.close();
    send(text);
  }
  const removeEvents = installEvents(doc, ui, {
    sendFromInput, stop, retry, clear, render, showCommands, menu, decide: asks.decide,
    open: panel.open, close: panel.close, isPanelOpen: panel.isPanelOpen, isSheet: panel.isSheet,
    waitingCard: () => w.approval?.msgId ?? null,
    toggleExpand: () => {
      s.isExpanded = !s.isExpanded;
      persist();
      render();
    },
  }, menuInput);

  /* what the server says about itself (GET <endpoint>/geminiAgent.status:
   * {ready, model}); any failure is silent, the chat works without it */
  const statusController = typeof AbortController === 'function' ? new AbortController() : null;
  render();
  if (o.checkStatus) {
    client.status(statusController?.signal).then((found) => {
      if (!found || w.destroyed) return;
      s.server = found;
      render();
    });
  }

  return {
    get state() {
      return JSON.parse(JSON.stringify(screen.snapshot()));
    },
    send, retry, stop, clear, open: panel.open, close: panel.close,
    destroy() {
      w.generation++;
      w.destroyed = true;
      stop();
      statusController?.abort();
      panel.destroy();
      removeEvents();
      menu?.destroy();
      ui.root.remove();
    },
  };
}
