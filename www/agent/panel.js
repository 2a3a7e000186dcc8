/**
 * The panel: where the widget sits. In place, or a launcher button in the
 * corner that opens the chat as a panel ('always', or 'auto' on windows
 * narrower than `launcherBelow` px, followed through matchMedia); below
 * SHEET_BELOW px the open panel is a full-screen sheet, which a page
 * action makes half height (data-peek, chat.css) so the visitor sees the
 * page change. Keeps `w.launcherMode` in the widget's named state.
 *
 * @module panel
 */
import { SHEET_BELOW } from './view.js';

/**
 * @param {object} d
 * @param {object} d.w  the widget's named state: s, launcherMode, destroyed
 * @param {Window|null} d.win
 * @param {Document} d.doc
 * @param {{frame: HTMLElement, launcher: HTMLElement, inputEl: Function}} d.ui
 * @param {'auto'|'always'|'never'|string} d.setting
 * @param {number} d.launcherBelow
 * @param {() => void} d.render
 * @param {() => void} d.persist
 */
export function createPanel({ w, win, doc, ui, setting, launcherBelow, render, persist }) {
  const media = (q) => (typeof win?.matchMedia === 'function' ? win.matchMedia(q) : null);
  const narrow = setting === 'auto' ? media(`(max-width: ${launcherBelow - 0.02}px)`) : null;
  const sheet = media(`(max-width: ${SHEET_BELOW - 0.02}px)`); /* the panel fills the screen */
  w.launcherMode = setting === 'always' || (setting === 'auto' && Boolean(narrow?.matches));

  const onWidth = () => {
    const now = Boolean(narrow?.matches);
    if (now === w.launcherMode) return;
    const hadFocus = ui.frame.contains(doc.activeElement);
    w.launcherMode = now;
    render();
    if (w.launcherMode && !w.s.isOpen && hadFocus) ui.launcher.focus();
  };
  narrow?.addEventListener?.('change', onWidth);

  const isPanelOpen = () => w.launcherMode && w.s.isOpen;
  const isSheet = () => Boolean(sheet?.matches);

  /** Launcher mode: show the panel and put the cursor in the input. */
  function open() {
    if (w.destroyed) return;
    w.s.isOpen = true;
    w.s.isPeek = false;
    w.s.unread = false;
    persist();
    render();
    ui.inputEl()?.focus();
  }

  /** Launcher mode: hide the panel; focus goes back to the launcher. */
  function close() {
    if (w.destroyed || !isPanelOpen()) return;
    w.s.isOpen = false;
    persist();
    render();
    ui.launcher.focus();
  }

  /** A page action runs: the phone's full-screen sheet becomes half height. */
  function peek() {
    if (!isPanelOpen() || !isSheet() || w.s.isPeek) return;
    w.s.isPeek = true;
    render();
  }

  return {
    open,
    close,
    peek,
    isPanelOpen,
    isSheet,
    destroy: () => narrow?.removeEventListener?.('change', onWidth),
  };
}
