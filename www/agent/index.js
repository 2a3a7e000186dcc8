/**
 * The one-script-tag entry: put the agent into any page.
 *
 *   <div data-gemini-chat></div>            (or <div id="gemini-chat">; optional:
 *                                            without one the widget floats in a corner)
 *   <script type="module" src="/agent/index.js"></script>
 *
 * On load it creates the page's AutomationAPI and publishes
 * `window.pageAgent` (installPageAgent, which applies the calls a page queued
 * before this module loaded), reads the descriptions of any
 * `<link rel="jay-contract">`, injects chat.css (next to this module), mounts
 * the chat widget in the container, and registers the same tools with WebMCP
 * when the browser offers it. The page publishes its view state with
 * `window.pageAgent.setViewState(obj)` (or `updateViewState(patch)`); a
 * classic script that runs before this module first adds the one-line stub
 *   window.pageAgent = window.pageAgent || { q: [], setViewState(v) { this.q.push(['setViewState', v]) } };
 *
 * Settings, as attributes of the container:
 *   data-endpoint="https://agent.example.org/_jay/actions"
 *                                        where the chat protocol is served; by
 *                                        default `<base>/_jay/actions` for this
 *                                        script at `<base>/agent/index.js`, so
 *                                        only a copy of the widget on another
 *                                        host than the responder needs it
 *   data-storage-key="gemini-agent:history"
 *   data-max-round-trips="15"
 *   data-expanded                        start in full mode (compact by default)
 *   data-floating                        float in the bottom-right corner
 *   data-stream="false"                  one JSON answer per request instead of
 *                                        streamed text (read by mountChat)
 * A `<template>` inside the container, or `<template id="gemini-chat">`,
 * replaces the widget's markup (see gemini-chat.jay-contract).
 *
 * Once started, `window.geminiAgent` is `{automation, chat, tools(), dispose()}`
 * and the window receives a `gemini-agent:ready` event with the same object.
 *
 * @module index
 */
import { createAutomation, installPageAgent } from './automation.js';
import { buildTools, toolDefinitions, describeCall } from './tools.js';
import { mountChat } from './chat.js';

const CSS_URL = new URL('./chat.css', import.meta.url).href;

/**
 * Add chat.css to the document once.
 * @param {Document} doc
 */
export function injectStyles(doc = document) {
  const present = [...doc.querySelectorAll('link[rel~="stylesheet"]')].some((l) => l.href === CSS_URL);
  if (present) return;
  const link = doc.createElement('link');
  link.rel = 'stylesheet';
  link.href = CSS_URL;
  link.setAttribute('data-gemini-chat-css', '');
  doc.head.append(link);
}

/**
 * The element the widget goes into: `[data-gemini-chat]`, else `#gemini-chat`
 * (never a <template>), else a new floating container at the end of <body>.
 * @param {Document} doc
 */
export function findContainer(doc = document) {
  const found =
    doc.querySelector('[data-gemini-chat]:not(template)') ?? doc.querySelector('#gemini-chat:not(template)');
  if (found) return found;
  const host = doc.createElement('div');
  host.setAttribute('data-gemini-chat', '');
  host.setAttribute('data-floating', '');
  doc.body.append(host);
  return host;
}

/**
 * @typedef {object} GeminiAgent
 * @property {ReturnType<typeof createAutomation>} automation
 * @property {import('./chat.js').ChatHandle} chat
 * @property {() => object[]} tools  the current tool catalog
 * @property {() => void} dispose    unmount the widget, unregister WebMCP
 */

/**
 * Start the agent on a document. Idempotent per window: a second call
 * returns the running agent.
 *
 * @param {object} [options]
 * @param {Document} [options.doc=document]
 * @param {HTMLElement} [options.container]  defaults to findContainer()
 * @param {object} [options.chat]            extra mountChat options (endpoint, fetch, …)
 * @returns {GeminiAgent}
 */
export function start({ doc = document, container, chat: chatOptions = {} } = {}) {
  const win = doc.defaultView;
  if (win.geminiAgent) return win.geminiAgent;

  const automation = createAutomation(doc);
  installPageAgent(automation, win);
  automation.loadContracts?.();
  injectStyles(doc);

  const host = container ?? findContainer(doc);
  const data = host.dataset;
  const tools = () => buildTools(automation);
  const maxRoundTrips = Number.parseInt(data.maxRoundTrips ?? '', 10);
  const chat = mountChat(host, {
    automation,
    tools,
    toolDefinitions,
    describeCall,
    ...(data.endpoint ? { endpoint: data.endpoint } : {}),
    ...(data.storageKey ? { storageKey: data.storageKey } : {}),
    ...(maxRoundTrips > 0 ? { maxRoundTrips } : {}),
    ...chatOptions,
  });

  /* WebMCP is optional: load it on the side so that a problem there never
   * keeps the chat from working. */
  let disposeWebMCP = null;
  let disposed = false;
  import('./webmcp.js')
    .then(({ registerWebMCP }) => {
      if (disposed) return;
      const d = registerWebMCP(automation, tools, win);
      disposeWebMCP = typeof d === 'function' ? d : null;
    })
    .catch((err) => console.debug('[gemini-agent] WebMCP not enabled:', err?.message ?? err));

  const agent = {
    automation,
    chat,
    tools,
    dispose() {
      disposed = true;
      disposeWebMCP?.();
      chat.destroy();
      if (win.geminiAgent === agent) delete win.geminiAgent;
    },
  };
  win.geminiAgent = agent;
  win.dispatchEvent(new win.CustomEvent('gemini-agent:ready', { detail: agent }));
  return agent;
}

/* Start on load. Module scripts run after the document is parsed; an
 * `async` or dynamically imported copy may run earlier, so wait if needed. */
if (typeof document !== 'undefined') {
  const go = () => {
    try {
      start();
    } catch (err) {
      console.error('[gemini-agent] could not start', err);
    }
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', go, { once: true });
  else go();
}
