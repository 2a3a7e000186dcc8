/**
 * The command runner: the plugins' user commands run without the model
 * (commands.js parses and lists them, client.js asks the server). The
 * site's list is asked for once; a command's output goes into the
 * conversation as plain text, and into the history the model sees only
 * when the command shares it and may. No DOM: the widget renders through
 * the callbacks it gives.
 *
 * @module runner
 */
import { ChatError } from './errors.js';
import { shareOutput } from './state.js';

/**
 * @typedef {object} RunnerDeps
 * @property {import('./turn.js').TurnState} w  the widget's named state
 * @property {{commands: Function, command: Function}} client  client.js's
 * @property {string} url  where the commands are ('' : none)
 * @property {() => string} newId
 * @property {(role: string, content: string) => void} addMessage
 * @property {(patch: object) => void} set
 * @property {() => void} persist
 * @property {(outcome: string) => void} onDone  the command ended (still current)
 * @property {{error?: Function}} log
 */

/** @param {RunnerDeps} d */
export function createCommandRunner(d) {
  const { w } = d;
  /** @type {Promise<import('./commands.js').UserCommand[]>|null} */
  let loading = null;

  /**
   * The site's user commands, asked for once (GET <commands>): a 404, an
   * empty list or an answer that is not the listing means none. Only a
   * failure to reach the server is asked again, at the next call.
   */
  function load() {
    if (!d.url) return Promise.resolve([]);
    if (loading) return loading;
    const asked = d.client.commands(d.url); /* null: not reached, ask again next time */
    loading = asked.then((list) => {
      if (list === null) loading = null;
      return list ?? [];
    });
    return loading;
  }

  /** A command's output in the conversation, shared with the model when it says so and may be. */
  function showOutput(name, data) {
    const shared = data.shareWithModel === true && shareOutput(w.s, name, data.output);
    const note = shared
      ? ' (the assistant sees it with your next message)'
      : data.shareWithModel === true
        ? ' (not given to the assistant: an action waits for your approval)'
        : '';
    w.s.messages.push({
      id: d.newId(),
      role: 'command',
      content: data.output,
      timestamp: new Date().toISOString(),
      command: `/${name}`,
      shared,
      commandTitle: `Output of /${name}${note}`,
    });
  }

  /** The command failed or was stopped: the outcome, with the error shown. */
  function failedOutcome(controller, e) {
    if (controller.signal.aborted || e?.name === 'AbortError') {
      w.failed = null;
      w.s.messages.push({ id: d.newId(), role: 'system', content: 'Stopped.', timestamp: new Date().toISOString() });
      return 'stopped';
    }
    const err = e instanceof ChatError ? e : new ChatError('client', `Something went wrong in the chat: ${e?.message || e}`);
    if (!(e instanceof ChatError)) d.log?.error?.('gemini-chat:', e);
    w.s.error = err.message;
    w.s.errorCode = err.code;
    if (err.retry === false) w.failed = null;
    return 'error';
  }

  /**
   * Run a user command (POST <commands>/<name> {args}): the visitor's line,
   * then the output as plain text, marked as a command's. Never rejects.
   * @param {string} name
   * @param {string} args
   * @param {string|null} line  the visitor's line to show; null on Retry (shown already)
   */
  async function run(name, args, line) {
    const controller = new AbortController();
    const gen = w.generation;
    const live = () => gen === w.generation && !w.destroyed;
    w.run = { controller };
    w.failed = { command: { name, args } };
    if (line !== null) d.addMessage('user', line);
    d.set({ isLoading: true, error: '', errorCode: '', outcome: '', statusText: `Running /${name}…` });
    let outcome = 'command';
    try {
      const data = await d.client.command(d.url, name, args, controller.signal);
      w.failed = null;
      if (!live()) return;
      showOutput(name, data);
    } catch (e) {
      if (!live()) return;
      outcome = failedOutcome(controller, e);
    } finally {
      if (w.run?.controller === controller) w.run = null;
      if (live()) {
        d.persist();
        d.set({ isLoading: false, statusText: '', outcome });
        d.onDone(outcome);
      }
    }
  }

  return { load, run };
}
