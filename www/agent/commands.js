/**
 * User commands in the chat widget (docs/widget.md "The chat widget"):
 * the plugins' commands the server lists at GET /_jay/commands, offered when
 * the visitor types `/` at the start of the input, and run by POST
 * /_jay/commands/<name> without the model.
 *
 * This module holds what does not need the widget's state: reading the
 * listing, parsing a `/name rest of line`, the history turn of a shared
 * output, and the suggestion list under the input (a listbox the input
 * points into with aria-activedescendant, so the focus never leaves the
 * input). chat.js fetches, runs, and keeps the history.
 *
 * Everything shown here is textContent: a command's name and description
 * come from a plugin, never as HTML.
 *
 * @module commands
 */
import { routeUrl } from './origin.js';

/**
 * @typedef {object} UserCommand
 * @property {string} name
 * @property {string} description
 * @property {boolean} shareWithModel
 */

/** A command name as the server's registry accepts one (src/registry/plugin.c valid_name). */
const NAME = /^[A-Za-z_][\w-]*$/;

/**
 * Where the commands are, next to the chat protocol's endpoint:
 * `/_jay/actions` → `/_jay/commands` (any prefix kept); for an endpoint of
 * another shape, `<base>/_jay/commands` next to this module (origin.js).
 * @param {string} endpoint
 */
export function commandsEndpoint(endpoint) {
  const e = String(endpoint ?? '').replace(/\/+$/, '');
  return /\/actions$/.test(e) ? e.replace(/\/actions$/, '/commands') : routeUrl('_jay/commands', import.meta.url);
}

/**
 * The commands of a GET /_jay/commands answer; anything malformed is left
 * out (an answer that is not the listing gives none).
 * @param {any} data
 * @returns {UserCommand[]}
 */
export function readCommands(data) {
  const list = Array.isArray(data?.commands) ? data.commands : [];
  return list
    .filter((c) => typeof c?.name === 'string' && NAME.test(c.name))
    .map((c) => ({
      name: c.name,
      description: typeof c.description === 'string' ? c.description : '',
      shareWithModel: c.shareWithModel === true,
    }));
}

/**
 * `/name rest of line` → {name, args}; null for text that does not start
 * with a slash and a word. `args` is the rest after the first run of spaces.
 * @param {string} text
 * @returns {{name: string, args: string}|null}
 */
export function parseCommandLine(text) {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(String(text ?? '').trim());
  return m ? { name: m[1], args: m[2] ?? '' } : null;
}

/**
 * The commands whose name begins with what follows the `/` (case-insensitive),
 * while the input is only `/word`; none once a space or a line follows.
 * @param {UserCommand[]} list
 * @param {string} value  the input's text
 */
export function matchCommands(list, value) {
  const m = /^\/(\S*)$/.exec(String(value ?? ''));
  if (!m) return [];
  const prefix = m[1].toLowerCase();
  return list.filter((c) => c.name.toLowerCase().startsWith(prefix));
}

/**
 * The user turn that puts a shared command's output in the history the model
 * sees with the next message.
 * @param {string} name
 * @param {string} output
 */
export function sharedTurn(name, output) {
  return { role: 'user', parts: [{ text: `Output of /${name}:\n${output}` }] };
}

/**
 * The suggestion list for `input`: created beside it, hidden until update()
 * finds matches. The focus stays in the input; the active option is named by
 * its aria-activedescendant.
 * @param {HTMLTextAreaElement|HTMLInputElement} input
 * @param {{id: string, onPick: (command: UserCommand) => void}} options
 *   id: the list's id (unique on the page; options are id-0, id-1, …);
 *   onPick: called after the input was filled with `/name ` (the menu is
 *   closed by then)
 */
export function createCommandMenu(input, { id, onPick }) {
  const doc = input.ownerDocument;
  const box = doc.createElement('ul');
  box.id = id;
  box.className = 'gemini-chat__commands';
  box.setAttribute('role', 'listbox');
  box.setAttribute('aria-label', 'Commands');
  box.hidden = true;
  input.insertAdjacentElement('beforebegin', box);
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', id);

  /** @type {UserCommand[]} */
  let shown = [];
  let active = 0;

  function optionId(i) {
    return `${id}-${i}`;
  }

  function paint() {
    box.replaceChildren(
      ...shown.map((c, i) => {
        const li = doc.createElement('li');
        li.id = optionId(i);
        li.className = 'gemini-chat__command';
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === active));
        li.setAttribute('data-command', c.name);
        const name = doc.createElement('span');
        name.className = 'gemini-chat__command-name';
        name.textContent = `/${c.name}`;
        const desc = doc.createElement('span');
        desc.className = 'gemini-chat__command-desc';
        desc.textContent = c.description;
        li.append(name, desc);
        return li;
      }),
    );
    input.setAttribute('aria-activedescendant', optionId(active));
    box.children[active]?.scrollIntoView?.({ block: 'nearest' });
  }

  function close() {
    if (box.hidden && shown.length === 0) return;
    shown = [];
    box.hidden = true;
    box.replaceChildren();
    input.removeAttribute('aria-activedescendant');
  }

  function pick(i) {
    const c = shown[i];
    if (!c) return;
    input.value = `/${c.name} `;
    close();
    input.focus();
    const end = input.value.length;
    input.setSelectionRange?.(end, end);
    onPick(c);
  }

  /* the focus stays in the input: a press on an option must not take it */
  const onDown = (ev) => ev.preventDefault();
  const onClick = (ev) => {
    const li = ev.target?.closest?.('[role="option"]');
    if (li && box.contains(li)) pick([...box.children].indexOf(li));
  };
  box.addEventListener('mousedown', onDown);
  box.addEventListener('click', onClick);

  return {
    get isOpen() {
      return !box.hidden;
    },
    get element() {
      return box;
    },
    /**
     * Show the commands matching the input's text, or close when none does.
     * @param {UserCommand[]} list
     */
    update(list) {
      const before = shown[active]?.name;
      shown = matchCommands(list, input.value);
      if (shown.length === 0) {
        close();
        return;
      }
      const kept = shown.findIndex((c) => c.name === before);
      active = kept >= 0 ? kept : 0;
      box.hidden = false;
      paint();
    },
    close,
    /**
     * The list's keys, while it is open: ArrowDown/ArrowUp move, Enter or Tab
     * picks, Escape closes. True when the key was the list's.
     * @param {KeyboardEvent} ev
     */
    handleKey(ev) {
      if (box.hidden || ev.isComposing || ev.altKey || ev.ctrlKey || ev.metaKey) return false;
      const n = shown.length;
      switch (ev.key) {
        case 'ArrowDown':
          active = (active + 1) % n;
          break;
        case 'ArrowUp':
          active = (active - 1 + n) % n;
          break;
        case 'Enter':
        case 'Tab':
          if (ev.shiftKey) return false;
          ev.preventDefault();
          pick(active);
          return true;
        case 'Escape':
          ev.preventDefault();
          close();
          return true;
        default:
          return false;
      }
      ev.preventDefault();
      paint();
      return true;
    },
    destroy() {
      close();
      box.removeEventListener('mousedown', onDown);
      box.removeEventListener('click', onClick);
      box.remove();
      input.removeAttribute('aria-autocomplete');
      input.removeAttribute('aria-controls');
    },
  };
}
