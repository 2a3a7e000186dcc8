// The real client: `gemini-agent chat` driven through the
// Claude Agent SDK itself (@anthropic-ai/claude-agent-sdk, pinned in
// package.json), the way an SDK user would point it at Claude Code:
//
//   query({prompt, options: {pathToClaudeCodeExecutable: <gemini-agent>,
//                            executableArgs: ['chat'], ...}})
//
// The SDK spawns the binary with its own flags (stream-json both ways,
// --permission-prompt-tool=stdio when canUseTool is given), sends its
// initialize request, reads the messages back and decides when the run
// ends; these tests assert on what it yields (and, where it throws, on
// exactly what). Gemini is tests/mock/gemini_mock.py on 127.0.0.1, started
// here on a free port and stopped by its PID; no network.
//
//   node --test tests/sdk/                                   build/gemini-agent
//   GA_BIN=build-asan/gemini-agent node --test tests/sdk/    another binary
//
// Needs `scripts/setup-www.sh` (npm ci) for node_modules.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { query } from '@anthropic-ai/claude-agent-sdk';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.resolve(REPO, process.env.GA_BIN || 'build/gemini-agent');
const PY = process.env.PY || '/usr/bin/python3';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const READ_REMINDER = '\n\n<system-reminder>\nWhenever you read a file';
const CASE_MS = 20000; // a case that hangs fails instead of stalling the suite

let tmp; // this run's folder: the port file, the mock's log, one work folder per case
let mock; // the mock's ChildProcess
let base; // http://127.0.0.1:PORT
let nwork = 0;
const live = new Set(); // every query's AbortController: after() kills what a failed case left

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  fs.accessSync(BIN, fs.constants.X_OK); // run `make` first
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ga-sdk-'));
  const log = fs.openSync(path.join(tmp, 'mock.log'), 'w');
  mock = spawn(PY, [path.join(REPO, 'tests/mock/gemini_mock.py'), '--port', '0',
    '--port-file', path.join(tmp, 'mock.port'), '--quiet'], { stdio: ['ignore', 'ignore', log] });
  fs.closeSync(log);
  // the port file appears once the mock listens; health once it answers
  for (let i = 0; i < 200 && !base; i++) {
    try {
      const port = fs.readFileSync(path.join(tmp, 'mock.port'), 'utf8').trim();
      const r = await fetch(`http://127.0.0.1:${port}/__mock/health`);
      if (r.ok) base = `http://127.0.0.1:${port}`;
    } catch {
      await sleep(50);
    }
  }
  assert.ok(base, `the mock did not start: ${fs.readFileSync(path.join(tmp, 'mock.log'), 'utf8')}`);
});

after(async () => {
  for (const ac of live) ac.abort();
  if (mock && mock.exitCode === null) {
    mock.kill('SIGTERM');
    await once(mock, 'exit');
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/* --- helpers ------------------------------------------------------------------------ */

// The mock's default scenario: scenario('server-steps', {calls: [...]}).
async function scenario(name, params = {}) {
  const body = { name };
  for (const [k, v] of Object.entries(params)) body[k] = typeof v === 'string' ? v : JSON.stringify(v);
  const r = await fetch(`${base}/__mock/scenario`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, await r.text());
}

// A fresh working folder holding a.txt ("hello\nworld\n").
function workdir() {
  const dir = path.join(tmp, `work${++nwork}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'a.txt'), 'hello\nworld\n');
  return dir;
}

// What the SDK passes to the child: ours, plus what an SDK user keeps
// (PATH, the sanitizers' options), minus anything that would pick
// another key or a log.
function childEnv(extra = {}) {
  const env = { ...process.env };
  delete env.GOOGLE_API_KEY;
  delete env.GEMINI_AGENT_LOG;
  return {
    ...env,
    GEMINI_BASE_URL: base,
    GEMINI_API_KEY: 'test-key',
    GEMINI_AGENT_CONFIG: path.join(tmp, 'no-such-agent.yaml'),
    // the saved sessions (term/keep.h): never the real ~/.local/state
    XDG_STATE_HOME: path.join(tmp, 'state'),
    ...extra,
  };
}

function sdkOptions(cwd, extra = {}) {
  const stderr = [];
  const abortController = new AbortController();
  live.add(abortController);
  return {
    stderr,
    options: {
      abortController,
      pathToClaudeCodeExecutable: BIN,
      executableArgs: ['chat'],
      cwd,
      env: childEnv(),
      stderr: (d) => stderr.push(d),
      ...extra,
    },
  };
}

// Run one query to its end: every yielded message, and what it threw.
async function run(prompt, cwd, extra = {}) {
  const { stderr, options } = sdkOptions(cwd, extra);
  const msgs = [];
  let error = null;
  try {
    for await (const m of query({ prompt, options })) msgs.push(m);
  } catch (e) {
    error = e;
  }
  return { msgs, error, stderr };
}

// Assertions with the transcript and the child's stderr shown when they fail.
function explained(t, r, fn) {
  try {
    fn();
  } catch (e) {
    t.diagnostic(`messages:\n${r.msgs.map((m) => JSON.stringify(m)).join('\n')}`);
    t.diagnostic(`thrown: ${r.error && r.error.stack}`);
    t.diagnostic(`stderr:\n${r.stderr.join('')}`);
    throw e;
  }
}

const ofType = (msgs, type) => msgs.filter((m) => m.type === type);
const blocks = (msgs, role) =>
  msgs.filter((m) => m.type === role).flatMap((m) => (Array.isArray(m.message.content) ? m.message.content : []));

// An async iterable of SDK user messages the test feeds as it goes
// (streaming input), and a way to wait for the Nth result.
function conversation() {
  const queue = [];
  let wake = null;
  let closed = false;
  const results = [];
  const waiters = [];
  return {
    say(text) {
      queue.push({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' });
      if (wake) wake();
    },
    close() {
      closed = true;
      if (wake) wake();
    },
    saw(m) {
      if (m.type !== 'result') return;
      results.push(m);
      while (waiters.length && waiters[0].n <= results.length) waiters.shift().resolve();
    },
    result(n) {
      return n <= results.length ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length) yield queue.shift();
        if (closed) return;
        await new Promise((r) => (wake = r));
        wake = null;
      }
    },
  };
}

// A streaming-input query over conversation(): its Query, the
// conversation to feed, r (messages, what it threw, the child's stderr)
// and reading, which settles when the SDK's iteration ends.
function streaming(cwd, extra = {}) {
  const conv = conversation();
  const { stderr, options } = sdkOptions(cwd, extra);
  const q = query({ prompt: conv, options });
  const r = { msgs: [], error: null, stderr };
  const reading = (async () => {
    try {
      for await (const m of q) {
        r.msgs.push(m);
        conv.saw(m);
      }
    } catch (e) {
      r.error = e;
    }
  })();
  return { q, conv, r, reading };
}

async function mockRequests() {
  const r = await fetch(`${base}/__mock/requests`);
  return r.json();
}

/* --- single prompts ----------------------------------------------------------------- */

test('a plain answer: init, the assistant text, a success result', { timeout: CASE_MS }, async (t) => {
  await scenario('text');
  const cwd = workdir();
  const r = await run('hi', cwd);
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(r.msgs.map((m) => m.type), ['system', 'assistant', 'result']);
    const [init, answer, result] = r.msgs;
    assert.equal(init.subtype, 'init');
    assert.match(init.session_id, UUID);
    assert.equal(init.cwd, cwd);
    assert.equal(init.permissionMode, 'default');
    assert.ok(['Read', 'Write', 'Edit', 'Glob', 'Grep', 'Bash'].every((n) => init.tools.includes(n)), init.tools.join());
    assert.deepEqual(init.mcp_servers, []);
    assert.equal(typeof init.model, 'string');
    assert.deepEqual(answer.message.content, [{ type: 'text', text: 'Hello from the mock.' }]);
    assert.equal(answer.message.role, 'assistant');
    assert.equal(answer.parent_tool_use_id, null);
    assert.equal(result.subtype, 'success');
    assert.equal(result.is_error, false);
    assert.equal(result.result, 'Hello from the mock.');
    assert.equal(result.stop_reason, 'end_turn');
    assert.equal(result.num_turns, 1);
    assert.deepEqual(result.permission_denials, []);
    assert.ok(result.usage.input_tokens > 0 && result.usage.output_tokens > 0);
    assert.ok(r.msgs.every((m) => m.session_id === init.session_id));
  });
});

test('a Read round trip: tool_use, the numbered lines in tool_result, the answer', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Read', { file_path: 'a.txt' }]] });
  const cwd = workdir();
  const r = await run('read a.txt', cwd);
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(r.msgs.map((m) => m.type), ['system', 'assistant', 'user', 'assistant', 'result']);
    const [use] = blocks(r.msgs, 'assistant').filter((b) => b.type === 'tool_use');
    assert.equal(use.name, 'Read');
    assert.deepEqual(use.input, { file_path: 'a.txt' });
    const [res] = blocks(r.msgs, 'user');
    assert.equal(res.type, 'tool_result');
    assert.equal(res.tool_use_id, use.id);
    assert.equal(res.is_error, false);
    assert.ok(res.content.startsWith('     1→hello\n     2→world\n'), res.content);
    assert.ok(res.content.includes(READ_REMINDER), res.content);
    const structured = r.msgs[2].tool_use_result;
    assert.equal(structured.type, 'text');
    assert.equal(structured.file.filePath, path.join(cwd, 'a.txt'));
    assert.equal(structured.file.content, 'hello\nworld\n');
    const result = r.msgs[4];
    assert.equal(result.subtype, 'success');
    assert.equal(result.num_turns, 2);
    assert.ok(result.result.startsWith('Done:'), result.result);
    assert.deepEqual(result.permission_denials, []);
  });
});

test('canUseTool denies a Write: not created, an is_error tool_result, permission_denials', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const cwd = workdir();
  const asked = [];
  const r = await run('write b.txt', cwd, {
    canUseTool: async (toolName, input, opts) => {
      asked.push({ toolName, input, toolUseID: opts.toolUseID });
      return { behavior: 'deny', message: 'not now' };
    },
  });
  explained(t, r, () => {
    assert.equal(r.error, null);
    const [use] = blocks(r.msgs, 'assistant').filter((b) => b.type === 'tool_use');
    assert.deepEqual(asked, [{ toolName: 'Write', input: { file_path: 'b.txt', content: 'new\n' }, toolUseID: use.id }]);
    assert.equal(fs.existsSync(path.join(cwd, 'b.txt')), false);
    assert.deepEqual(blocks(r.msgs, 'user'), [
      { type: 'tool_result', tool_use_id: use.id, content: 'not now', is_error: true },
    ]);
    const result = r.msgs.at(-1);
    assert.equal(result.type, 'result');
    assert.equal(result.subtype, 'success'); // the model read the denial and answered
    assert.deepEqual(result.permission_denials, [
      { tool_name: 'Write', tool_use_id: use.id, tool_input: { file_path: 'b.txt', content: 'new\n' } },
    ]);
  });
});

test('canUseTool allows a Write with an updated input: the file holds the update', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const cwd = workdir();
  const r = await run('write b.txt', cwd, {
    canUseTool: async (toolName, input) => ({ behavior: 'allow', updatedInput: { ...input, content: 'changed\n' } }),
  });
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.equal(fs.readFileSync(path.join(cwd, 'b.txt'), 'utf8'), 'changed\n');
    const [res] = blocks(r.msgs, 'user');
    assert.equal(res.is_error, false);
    assert.equal(res.content, `File created successfully at: ${path.join(cwd, 'b.txt')}`);
    const result = r.msgs.at(-1);
    assert.equal(result.subtype, 'success');
    assert.deepEqual(result.permission_denials, []);
  });
});

test('canUseTool denies with interrupt: the prompt ends there, an error result', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const cwd = workdir();
  const r = await run('write b.txt', cwd, {
    canUseTool: async () => ({ behavior: 'deny', message: 'stop everything', interrupt: true }),
  });
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.equal(fs.existsSync(path.join(cwd, 'b.txt')), false);
    assert.deepEqual(r.msgs.map((m) => m.type), ['system', 'assistant', 'user', 'result']);
    assert.equal(blocks(r.msgs, 'user')[0].content, 'stop everything');
    const result = r.msgs[3];
    assert.equal(result.subtype, 'error_during_execution');
    assert.deepEqual(result.errors, ['interrupted by the user']);
    assert.equal(result.permission_denials.length, 1);
  });
});

// As Claude Code's: the block's events, its assistant message when the
// block completes, then the message's end with its stop_reason.
test('includePartialMessages: the block streamed, its assistant message, the message ended', { timeout: CASE_MS }, async (t) => {
  await scenario('text');
  const r = await run('hi', workdir(), { includePartialMessages: true });
  explained(t, r, () => {
    assert.equal(r.error, null);
    const kinds = r.msgs.map((m) => (m.type === 'stream_event' ? m.event.type : m.type));
    assert.deepEqual(kinds.filter((k) => k !== 'content_block_delta'), [
      'system', 'message_start', 'content_block_start', 'content_block_stop', 'assistant',
      'message_delta', 'message_stop', 'result',
    ]);
    assert.equal(r.msgs.find((m) => m.type === 'stream_event' && m.event.type === 'message_delta')
      .event.delta.stop_reason, 'end_turn');
    const text = ofType(r.msgs, 'stream_event')
      .filter((m) => m.event.type === 'content_block_delta')
      .map((m) => m.event.delta.text)
      .join('');
    assert.equal(text, 'Hello from the mock.');
    assert.equal(r.msgs.at(-1).result, 'Hello from the mock.');
  });
});

test('without canUseTool a Write is denied (default mode, no prompt channel)', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const cwd = workdir();
  const r = await run('write b.txt', cwd);
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.equal(fs.existsSync(path.join(cwd, 'b.txt')), false);
    const [res] = blocks(r.msgs, 'user');
    assert.equal(res.is_error, true);
    assert.match(res.content, /^Permission to use Write denied/);
    assert.equal(r.msgs.at(-1).permission_denials.length, 1);
  });
});

test('Gemini answers 429: an assistant error, an error result with errors, no throw', { timeout: CASE_MS }, async (t) => {
  await scenario('error', { status: '429', retry: '0s' });
  const r = await run('hi', workdir());
  explained(t, r, () => {
    // in stream-json input mode the child exits 0 when the SDK closes its
    // stdin after the result, so the SDK yields the error result and ends
    // quietly (an exit status other than 0 would make it throw)
    assert.equal(r.error, null);
    assert.deepEqual(r.msgs.map((m) => m.type), ['system', 'assistant', 'result']);
    const [, answer, result] = r.msgs;
    assert.equal(answer.error, 'rate_limit');
    assert.match(answer.message.content[0].text, /^API Error: upstream_rate_limited/);
    assert.equal(result.subtype, 'error_during_execution');
    assert.equal(result.is_error, true);
    assert.deepEqual(result.errors, [answer.message.content[0].text]);
    assert.equal(result.result, answer.message.content[0].text);
    assert.equal(result.stop_reason, null);
  });
});

test('Gemini refuses the key: a system error and an error result, then the SDK throws', { timeout: CASE_MS }, async (t) => {
  await scenario('text');
  const r = await run('hi', workdir(), { env: childEnv({ GEMINI_API_KEY: 'bad-key' }) });
  explained(t, r, () => {
    // a refused key stops the session (exit 1): the SDK yields what came,
    // then throws with the error result's text
    assert.deepEqual(r.msgs.map((m) => `${m.type}/${m.subtype ?? ''}`), [
      'system/init', 'system/error', 'result/error_during_execution',
    ]);
    const result = r.msgs[2];
    assert.equal(result.is_error, true);
    assert.match(result.errors[0], /^API Error: upstream_auth/);
    assert.ok(r.error instanceof Error);
    assert.equal(r.error.message, `Claude Code returned an error result: ${result.errors[0]}`);
  });
});

test('no key at all: one system error, then the SDK throws on exit status 1', { timeout: CASE_MS }, async (t) => {
  const env = childEnv();
  delete env.GEMINI_API_KEY;
  const r = await run('hi', workdir(), { env });
  explained(t, r, () => {
    assert.equal(r.msgs.length, 1);
    assert.equal(r.msgs[0].type, 'system');
    assert.equal(r.msgs[0].subtype, 'error');
    assert.match(r.msgs[0].error, /GEMINI_API_KEY/);
    assert.ok(r.error instanceof Error);
    assert.match(r.error.message, /^Claude Code process exited with code 1/);
  });
});

/* --- streaming input: the Query object's control requests ------------------------- */

test('streaming input: setPermissionMode(acceptEdits), then a Write runs unasked', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const cwd = workdir();
  const { q, conv, r, reading } = streaming(cwd);
  const mode = await q.setPermissionMode('acceptEdits');
  conv.say('write b.txt');
  await conv.result(1);
  conv.close();
  await reading;
  explained(t, r, () => {
    assert.equal(mode, undefined); // the SDK resolves with nothing once answered
    assert.equal(r.error, null);
    assert.equal(ofType(r.msgs, 'system')[0].permissionMode, 'acceptEdits');
    assert.equal(fs.readFileSync(path.join(cwd, 'b.txt'), 'utf8'), 'new\n');
    const result = ofType(r.msgs, 'result')[0];
    assert.equal(result.subtype, 'success');
    assert.deepEqual(result.permission_denials, []);
  });
});

test('streaming input: interrupt() while canUseTool waits ends that prompt; the next runs', { timeout: CASE_MS }, async (t) => {
  await scenario('server-steps', { calls: [['Bash', { command: 'echo hi > made.txt' }]] });
  const cwd = workdir();
  let interrupted;
  const { q, conv, r, reading } = streaming(cwd, {
    canUseTool: async () => {
      interrupted = await q.interrupt();
      return { behavior: 'deny', message: 'too late: the prompt was interrupted' };
    },
  });
  conv.say('run it');
  await conv.result(1);
  // the interrupted prompt is taken back, so this is the conversation's
  // first user text: [[mock:text]] picks the mock's answer
  conv.say('[[mock:text]] hi');
  await conv.result(2);
  conv.close();
  await reading;
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(interrupted, { still_queued: [] }); // the control response, passed through
    assert.equal(fs.existsSync(path.join(cwd, 'made.txt')), false);
    const [first, second] = ofType(r.msgs, 'result');
    assert.equal(first.subtype, 'error_during_execution');
    assert.deepEqual(first.errors, ['interrupted by the user']);
    assert.equal(first.permission_denials.length, 1);
    const [use] = blocks(r.msgs, 'assistant').filter((b) => b.type === 'tool_use');
    assert.deepEqual(blocks(r.msgs, 'user')[0], {
      type: 'tool_result', tool_use_id: use.id, content: 'interrupted by the user', is_error: true,
    });
    assert.equal(second.subtype, 'success');
    assert.equal(second.result, 'Hello from the mock.');
    assert.equal(second.session_id, first.session_id);
  });
});

test('streaming input: setModel() while canUseTool waits applies from the next prompt on', { timeout: CASE_MS }, async (t) => {
  // the prompt's remaining calls keep the model they started with (a
  // set_model during a prompt freed the string they still used: ASan)
  await scenario('server-steps', { calls: [['Write', { file_path: 'b.txt', content: 'new\n' }]] });
  const seq0 = (await mockRequests()).length;
  const cwd = workdir();
  let answered;
  const { q, conv, r, reading } = streaming(cwd, {
    model: 'gemini-3.8-flash',
    canUseTool: async (toolName, input) => {
      answered = await q.setModel('gemini-2.5-pro');
      return { behavior: 'allow', updatedInput: input };
    },
  });
  conv.say('write b.txt');
  await conv.result(1);
  await scenario('text');
  conv.say('hi again');
  await conv.result(2);
  conv.close();
  await reading;
  const models = (await mockRequests()).slice(seq0).map((m) => m.model);
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.equal(answered, undefined); // the SDK resolves with nothing once answered
    assert.equal(fs.readFileSync(path.join(cwd, 'b.txt'), 'utf8'), 'new\n');
    const inits = r.msgs.filter((m) => m.subtype === 'init');
    assert.deepEqual(inits.map((m) => m.model), ['gemini-3.8-flash', 'gemini-2.5-pro']);
    const [first, second] = ofType(r.msgs, 'result');
    assert.equal(first.subtype, 'success');
    assert.deepEqual(Object.keys(first.modelUsage), ['gemini-3.8-flash']);
    assert.equal(second.subtype, 'success');
    assert.deepEqual(Object.keys(second.modelUsage), ['gemini-2.5-pro']);
    assert.deepEqual(models, ['gemini-3.8-flash', 'gemini-3.8-flash', 'gemini-2.5-pro']);
  });
});

test('streaming input: interrupt() while Gemini thinks drops the call; the next prompt runs', { timeout: CASE_MS }, async (t) => {
  await scenario('text', { delay: '5000' });
  const seq0 = (await mockRequests()).length;
  const cwd = workdir();
  const { q, conv, r, reading } = streaming(cwd);
  const t0 = Date.now();
  conv.say('hi');
  // the call is in flight once the mock has read it
  while ((await mockRequests()).length === seq0) await sleep(20);
  const interrupted = await q.interrupt();
  await conv.result(1);
  const ms = Date.now() - t0;
  await scenario('text');
  conv.say('hi again');
  await conv.result(2);
  conv.close();
  await reading;
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(interrupted, { still_queued: [] });
    assert.ok(ms < 4000, `the interrupted prompt ended after ${ms} ms`);
    assert.deepEqual(r.msgs.map((m) => `${m.type}/${m.subtype ?? ''}`), [
      'system/init', 'result/error_during_execution', 'system/init', 'assistant/', 'result/success',
    ]);
    const [first, second] = ofType(r.msgs, 'result');
    assert.equal(first.is_error, true);
    assert.deepEqual(first.errors, ['interrupted by the user']);
    assert.equal(second.result, 'Hello from the mock.');
  });
});

// mcpServerStatus() before any prompt, then one prompt "hi": what the
// status said and what the run yielded.
async function mcpStatusThenHi(opts) {
  const { q, conv, r, reading } = streaming(workdir(), opts);
  const before = await q.mcpServerStatus();
  conv.say('hi');
  await conv.result(1);
  conv.close();
  await reading;
  return { before, r };
}

test('mcp: init lists the mcp plugin\'s servers, mcpServerStatus() too', { timeout: CASE_MS }, async (t) => {
  // a configuration exposing the built-in mcp plugin with one stdio server
  // (@modelcontextprotocol/server-everything, a devDependency)
  const every = path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const conf = path.join(tmp, 'mcp-conf');
  fs.mkdirSync(conf);
  fs.writeFileSync(path.join(conf, 'mcp.json'),
    JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [every, 'stdio'] } } }));
  fs.writeFileSync(path.join(conf, 'agent.yaml'),
    `actions: []\ndataDir: ${conf}/var\nplugins:\n  dirs: []\n  expose: [mcp]\n  config:\n    mcp: {configFile: mcp.json}\n`);
  await scenario('text');
  const { before, r } = await mcpStatusThenHi({
    env: childEnv({ GEMINI_AGENT_CONFIG: path.join(conf, 'agent.yaml') }),
  });
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(before, [{ name: 'everything', status: 'connected' }]);
    const init = r.msgs[0];
    assert.deepEqual(init.mcp_servers, [{ name: 'everything', status: 'connected' }]);
    assert.ok(init.tools.includes('everything_echo'), init.tools.join());
    assert.ok(init.tools.includes('Read'), init.tools.join());
  });
});

test('mcp: without the plugin, mcp_servers and mcpServerStatus() are empty', { timeout: CASE_MS }, async (t) => {
  await scenario('text');
  const { before, r } = await mcpStatusThenHi({});
  explained(t, r, () => {
    assert.equal(r.error, null);
    assert.deepEqual(before, []);
    assert.deepEqual(r.msgs[0].mcp_servers, []);
  });
});
