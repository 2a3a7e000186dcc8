/**
 * The chat widget's view (DOM only): the default template, the widget's
 * elements (root > [frame: the template's content, the launcher button],
 * the question cards' place above the input), and `render`, which writes a
 * state snapshot into them (template.js binds the tags; the attributes on
 * the root are for chat.css and the page). No state of its own beyond the
 * DOM, no network: chat.js decides what to show.
 *
 * @module view
 */
import { bindTemplate } from './template.js';

/** launcher: 'auto' turns the widget into a launcher below this window width (px). */
export const LAUNCHER_BELOW = 860;
/** Below this window width (px) the launcher's panel is a full-screen sheet (chat.css says the same). */
export const SHEET_BELOW = 600;

/** The launcher's content: a speech bubble drawn by chat.css, a label, an unread marker. */
const LAUNCHER_MARKUP =
  '<span class="gemini-chat__launcher-icon" aria-hidden="true"></span>' +
  '<span class="gemini-chat__launcher-label">Assistant</span>' +
  '<span class="gemini-chat__sr gemini-chat__launcher-unread"> (new answer)</span>';

let mounted = 0; /* ids for the panels of several widgets on one page */

/**
 * The approval card's parts (role approval), used by the full history and by
 * compact mode: a heading, then the preview (the item's content, bound by
 * the caller), then APPROVAL_BODY: why, the arguments, the buttons while it
 * waits, and what was decided after. No autofocus on Approve: chat.js focuses
 * the card itself, so a key pressed by habit approves nothing.
 */
const APPROVAL_HEAD = `<p class="gemini-chat__approval-title" data-if="role==approval"><span data-if="status==pending">Needs your approval</span><span data-if="status!=pending">Asked for your approval</span></p>
      <p class="gemini-chat__approval-action" data-if="role==approval" data-bind="actionTitle"></p>`;
const APPROVAL_BODY = `<div class="gemini-chat__approval" data-if="role==approval">
        <p class="gemini-chat__approval-reason" data-if="reason" data-bind="reason"></p>
        <dl class="gemini-chat__args" data-if="args" data-foreach="args" aria-label="Details"><div class="gemini-chat__arg"><dt data-bind="label"></dt><dd data-bind="value"></dd></div></dl>
        <div class="gemini-chat__approval-actions" data-if="status==pending">
          <button type="button" class="gemini-chat__btn gemini-chat__btn--approve" data-ref="approveAction">Approve</button>
          <button type="button" class="gemini-chat__btn gemini-chat__btn--reject" data-ref="rejectAction">Reject</button>
        </div>
        <p class="gemini-chat__approval-hint" data-if="status==pending">Nothing is done until you approve. A new message instead leaves it undone.</p>
        <p class="gemini-chat__decision" data-if="status==approved">Approved</p>
        <p class="gemini-chat__decision" data-if="status==declined">Declined</p>
        <p class="gemini-chat__decision" data-if="status==undecided">Not decided, so not done</p>
        <p class="gemini-chat__decision" data-if="status==invalid">Not done: this approval had expired or was already used</p>
      </div>`;
/* compact mode's card: last while it waits (after the model's words, next to
 * the input), first once decided (before what was done and the answer) */
/* The plan the model keeps (todo plugin): a list of read-only checkboxes;
 * data-checked puts the step's `checked` into aria-checked. */
const TODO_CHECKLIST = `<section class="gemini-chat__todo" data-if="todoSteps" aria-label="Plan">
      <p class="gemini-chat__todo-title" data-bind="todoSummary"></p>
      <ul class="gemini-chat__todo-list" data-foreach="todoSteps">
        <li class="gemini-chat__todo-step"><span class="gemini-chat__todo-check" role="checkbox" aria-readonly="true" data-checked="checked"><span class="gemini-chat__todo-mark" aria-hidden="true" data-bind="mark"></span><span class="gemini-chat__todo-text" data-bind="title"></span><span class="gemini-chat__sr" data-if="status==in_progress"> (in progress)</span></span></li>
      </ul>
    </section>`;

const APPROVAL_CARD = `<div class="gemini-chat__message">
      ${APPROVAL_HEAD}
      <div class="gemini-chat__content" data-bind="content"></div>
      ${APPROVAL_BODY}
    </div>`;

/**
 * The default template. Every element that matters names a contract tag;
 * classes are only for chat.css.
 */
export const DEFAULT_TEMPLATE = `
<section class="gemini-chat__panel" aria-label="Chat with the page assistant">
  <header class="gemini-chat__header">
    <h2 class="gemini-chat__title">Assistant</h2>
    <button type="button" class="gemini-chat__btn gemini-chat__btn--ghost" data-ref="clearChat" data-if="hasMessages" title="Forget this conversation and start a new one">New chat</button>
    <button type="button" class="gemini-chat__btn gemini-chat__btn--ghost" data-ref="toggleExpand">
      <span data-if="!isExpanded">Show all</span><span data-if="isExpanded">Compact</span>
    </button>
    <button type="button" class="gemini-chat__btn gemini-chat__btn--ghost gemini-chat__close" data-ref="closeChat" data-if="isLauncher" aria-label="Close the assistant" title="Close (Esc)">&#x2715;</button>
  </header>
  <p class="gemini-chat__notice" data-if="notice" data-bind="notice"></p>
  <ol class="gemini-chat__messages" data-if="isExpanded" data-foreach="messages" aria-live="polite" aria-label="Conversation" tabindex="0">
    <li class="gemini-chat__message">
      <span class="gemini-chat__sr" data-if="role==user">You said: </span>
      <span class="gemini-chat__sr" data-if="role==assistant">Assistant: </span>
      ${APPROVAL_HEAD}
      <p class="gemini-chat__command-title" data-if="role==command" data-bind="commandTitle"></p>
      <div class="gemini-chat__content" data-if="role==assistant" data-bind="content" data-format="markdown"></div>
      <div class="gemini-chat__content" data-if="role!=assistant" data-bind="content"></div>
      ${APPROVAL_BODY}
      <span class="gemini-chat__mark" data-if="status==stopped">(stopped)</span>
      <span class="gemini-chat__mark" data-if="status==incomplete">(incomplete)</span>
      <time class="gemini-chat__time" data-bind="timestamp"></time>
    </li>
  </ol>
  <div class="gemini-chat__compact" data-if="!isExpanded" aria-live="polite">
    <p class="gemini-chat__message" data-role="user" data-if="lastUserMessage"><span class="gemini-chat__sr">You said: </span><span data-bind="lastUserMessage"></span></p>
    <div class="gemini-chat__approvals" data-if="!awaitingApproval" data-foreach="approvals">${APPROVAL_CARD}</div>
    <ul class="gemini-chat__activity" data-foreach="activity"><li class="gemini-chat__message"><span class="gemini-chat__command-title" data-if="role==command" data-bind="commandTitle"></span><span class="gemini-chat__content" data-bind="content"></span></li></ul>
    ${TODO_CHECKLIST}
    <div class="gemini-chat__message" data-role="assistant" data-if="lastAssistantMessage"><span class="gemini-chat__sr">Assistant: </span><div class="gemini-chat__content" data-bind="lastAssistantMessage" data-format="markdown"></div><span class="gemini-chat__mark" data-if="lastAssistantStatus==stopped">(stopped)</span><span class="gemini-chat__mark" data-if="lastAssistantStatus==incomplete">(incomplete)</span></div>
    <ul class="gemini-chat__activity gemini-chat__activity--after" data-foreach="notesAfter"><li class="gemini-chat__message"><span class="gemini-chat__content" data-bind="content"></span></li></ul>
    <div class="gemini-chat__approvals" data-if="awaitingApproval" data-foreach="approvals">${APPROVAL_CARD}</div>
  </div>
  <div class="gemini-chat__todo-full" data-if="isExpanded">${TODO_CHECKLIST}</div>
  <details class="gemini-chat__usage" data-if="usageText"><summary>Usage</summary><span data-bind="usageText"></span></details>
  <p class="gemini-chat__empty" data-if="!hasMessages">Ask a question about this page, or ask me to do something on it.</p>
  <div class="gemini-chat__status" data-if="isLoading" role="status">
    <span class="gemini-chat__spinner" aria-hidden="true"></span>
    <span class="gemini-chat__status-text" data-bind="statusText"></span>
    <button type="button" class="gemini-chat__btn gemini-chat__btn--stop" data-ref="stopLoop">Stop</button>
  </div>
  <div class="gemini-chat__error" data-if="error" role="alert">
    <span data-bind="error"></span>
    <button type="button" class="gemini-chat__btn" data-ref="retry" data-if="canRetry">Retry</button>
  </div>
  <form class="gemini-chat__form" autocomplete="off">
    <textarea class="gemini-chat__input" data-ref="messageInput" rows="1" aria-label="Message to the assistant" placeholder="Ask the assistant…" title="Enter sends; Shift+Enter adds a line"></textarea>
    <button type="submit" class="gemini-chat__btn gemini-chat__btn--send" data-ref="sendMessage">Send</button>
  </form>
</section>`;

/**
 * The template's content: options.template (an element or page-authored
 * HTML), else a <template> inside the container, else
 * <template id="gemini-chat">, else DEFAULT_TEMPLATE.
 * @param {HTMLElement} container
 * @param {HTMLTemplateElement|string|undefined} template
 */
function templateContent(container, template) {
  const doc = container.ownerDocument;
  let t = template ?? container.querySelector(':scope > template') ?? doc.querySelector('template#gemini-chat');
  if (typeof t === 'string' || !t) {
    const el = doc.createElement('template');
    el.innerHTML = typeof t === 'string' ? t : DEFAULT_TEMPLATE; /* page-authored or ours, never the model's */
    t = el;
  }
  return t.content.cloneNode(true);
}

/** @param {Document} doc @param {string} panelId */
function makeLauncher(doc, panelId) {
  const launcher = doc.createElement('button');
  launcher.type = 'button';
  launcher.className = 'gemini-chat__launcher';
  launcher.setAttribute('data-ref', 'openChat');
  launcher.setAttribute('aria-controls', panelId);
  launcher.innerHTML = LAUNCHER_MARKUP; /* ours, constant */
  return launcher;
}

/**
 * The flags of a render that are not in the state snapshot.
 * @typedef {{launcherMode: boolean, unread: boolean, isPeek: boolean}} RenderFlags
 */

/**
 * Root attributes, the launcher and the frame's dialog role.
 * @param {{root: HTMLElement, frame: HTMLElement, launcher: HTMLElement}} el
 * @param {any} state
 * @param {RenderFlags} flags
 */
function renderShell({ root, frame, launcher }, state, { launcherMode, unread, isPeek }) {
  root.setAttribute('data-loading', String(state.isLoading));
  root.setAttribute('data-expanded', String(state.isExpanded));
  root.setAttribute('data-launcher', String(launcherMode));
  root.setAttribute('data-open', String(state.isOpen));
  root.setAttribute('data-peek', String(launcherMode && state.isOpen && isPeek));
  root.setAttribute('data-unread', String(launcherMode && !state.isOpen && unread));
  launcher.hidden = !launcherMode;
  launcher.setAttribute('aria-expanded', String(launcherMode && state.isOpen));
  if (frame.hidden === state.isOpen) frame.hidden = !state.isOpen;
  if (launcherMode) {
    frame.setAttribute('role', 'dialog');
    frame.setAttribute('aria-label', 'Chat with the page assistant');
  } else {
    frame.removeAttribute('role');
    frame.removeAttribute('aria-label');
  }
  root.setAttribute('aria-busy', String(state.isLoading));
  if (state.outcome) root.setAttribute('data-outcome', state.outcome);
  else root.removeAttribute('data-outcome');
}

/**
 * Build the widget in `container` (its non-template children are replaced).
 * @param {HTMLElement} container
 * @param {{template?: HTMLTemplateElement|string, floating?: boolean}} options
 */
export function createView(container, { template, floating = false }) {
  const doc = container.ownerDocument;
  const root = doc.createElement('div');
  root.className = floating ? 'gemini-chat gemini-chat--floating' : 'gemini-chat';
  root.setAttribute('data-agent', 'off');
  const frame = doc.createElement('div');
  frame.className = 'gemini-chat__frame';
  frame.id = `gemini-chat-panel-${++mounted}`;
  frame.append(templateContent(container, template));
  const launcher = makeLauncher(doc, frame.id);
  root.append(frame, launcher);
  const kept = [...container.children].filter((c) => c.localName === 'template');
  container.replaceChildren(...kept, root);
  /* the question cards (question.js) sit above the input, outside the template */
  const questionHost = doc.createElement('div');
  questionHost.className = 'gemini-chat__questions';
  const form = frame.querySelector('form.gemini-chat__form');
  if (form) form.before(questionHost);
  else frame.append(questionHost);
  /* a page's own template may have no approval card: then no action that
   * needs the visitor's approval can be approved here (chat.js says so);
   * asked before binding, which takes the item templates out */
  const canApprove = Boolean(frame.querySelector('[data-ref="approveAction"]') && frame.querySelector('[data-ref="rejectAction"]'));
  const bound = bindTemplate(root);
  const inputEl = () => root.querySelector('[data-ref="messageInput"]');
  let shownCount = -1;

  /**
   * Show `state` (the handle's snapshot).
   * @param {any} state
   * @param {RenderFlags} flags
   */
  function render(state, flags) {
    bound.update(state);
    renderShell({ root, frame, launcher }, state, flags);
    /* text arriving in a live region is announced once, when it is complete */
    for (const el of frame.querySelectorAll('[aria-live]')) {
      if (state.isStreaming) el.setAttribute('aria-busy', 'true');
      else el.removeAttribute('aria-busy');
    }
    for (const el of root.querySelectorAll('[data-ref="toggleExpand"]'))
      el.setAttribute('aria-expanded', String(state.isExpanded));
    const input = inputEl();
    const blank = !input || !String(input.value ?? '').trim();
    for (const el of root.querySelectorAll('[data-ref="sendMessage"]')) el.disabled = state.isLoading || blank;
    if (state.isExpanded && state.messages.length !== shownCount) {
      for (const list of bound.lists('messages')) list.scrollTop = list.scrollHeight;
    }
    shownCount = state.isExpanded ? state.messages.length : -1;
  }

  /** Visible, enabled elements of the panel that take focus, in order. */
  function focusables() {
    const sel = 'button, [href], input, textarea, select, [tabindex]:not([tabindex="-1"])';
    return [...frame.querySelectorAll(sel)].filter((el) => !el.disabled && !el.closest('[hidden]') && el.getClientRects().length > 0);
  }

  return {
    root,
    frame,
    launcher,
    questionHost,
    canApprove,
    inputEl,
    render,
    focusables,
  };
}
