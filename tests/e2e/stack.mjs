/**
 * tests/e2e/stack.mjs — what every browser test needs: the mock Gemini
 * server, the responder and a private nginx on loopback, and Debian's
 * chromium driven by playwright-core.
 *
 *   const stack = await startStack();            // mock in demo mode
 *   const browser = await launchBrowser();
 *   const page = await browser.newPage();
 *   await page.goto(stack.url);
 *   ...
 *   await browser.close(); await stack.stop();
 *
 * startStack({scenario}) starts the mock with another default scenario
 * ('NAME k=v', as gemini_mock.py --scenario); stack.mock.scenario(name,
 * params) changes it later, stack.mock.requests() returns what Gemini was
 * sent (GET /__mock/requests), stack.mock.reset() clears it.
 *
 * The site always has a secret (auth.secretFile: 32 random bytes, mode
 * 0600, as `gemini-agent setup` writes it): the chat protocol signs the
 * history and the approval tickets with it (docs/chat-protocol.md).
 * startStack({auth}) names another `auth` member instead (an object, written
 * into agent.yaml as it is; the secret file is still written, at
 * stack.secretFile, for the test to name).
 *
 * startStack({session: 'demo'}) signs a user in as `make demo` does, for
 * the run API (www/assistant/): a token for that user from `gemini-agent
 * auth issue` (signed with the same secret), served as
 * /assistant/demo-session.json (scripts/render-nginx-conf.sh SESSION);
 * stack.session is {user, token, expiresAt} and stack.issueToken(user)
 * makes another user's token.
 *
 * Everything lives in one temp dir (removed by stop() unless KEEP_TMP=1);
 * every process started here is stopped by stop(), and killed when the test
 * process exits any other way (a failed assertion, an exception, a signal).
 * The browser is Debian's /usr/bin/chromium (E2E_CHROMIUM overrides) with a
 * fresh profile: playwright never downloads one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const E2E_DIR = join(REPO, 'tests/e2e');
export const SCREENSHOTS = join(E2E_DIR, 'screenshots');

const PY = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const GA_BIN = process.env.GA_BIN ?? join(REPO, 'build/gemini-agent');
const NGINX = process.env.NGINX_BIN ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');
const CHROMIUM = process.env.E2E_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/* ---- processes: everything started here is killed when this process exits ---- */

/** @type {Set<{proc: import('node:child_process').ChildProcess, pidFile?: string}>} */
const live = new Set();
/** Temp dirs to remove on exit. */
const dirs = new Set();

function killAllNow() {
  for (const p of live) {
    try {
      p.proc.kill('SIGKILL');
    } catch {}
    for (const pid of workersOf(p.pidFile)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }
  live.clear();
  if (process.env.KEEP_TMP !== '1') for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
process.once('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killAllNow();
    process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 })[sig]);
  });
}

/** The responder's worker PIDs from its pid file ("workers: PID PID"). */
function workersOf(pidFile) {
  if (!pidFile) return [];
  try {
    const line = readFileSync(pidFile, 'utf8').split('\n')[1] ?? '';
    return line.replace(/^workers:/, '').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function start(cmd, args, { log, env, pidFile } = {}) {
  const fd = log ? openSync(log, 'a') : 'ignore';
  const proc = spawn(cmd, args, { stdio: ['ignore', fd, fd], env: env ?? process.env });
  const entry = { proc, pidFile, exited: new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal }))) };
  proc.once('error', () => {});
  live.add(entry);
  entry.exited.then(() => live.delete(entry));
  return entry;
}

/** SIGTERM, wait up to `grace` ms, then SIGKILL (workers too). */
async function stopProc(entry, grace = 5000) {
  if (!entry || entry.proc.exitCode !== null || entry.proc.signalCode !== null) return;
  const workers = workersOf(entry.pidFile);
  entry.proc.kill('SIGTERM');
  const t = setTimeout(() => {
    entry.proc.kill('SIGKILL');
    for (const pid of workers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }, grace);
  await entry.exited;
  clearTimeout(t);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, timeout = 10000, entry = null) {
  const t0 = Date.now();
  for (;;) {
    try {
      if (await fn()) return;
    } catch {}
    if (entry && entry.proc.exitCode !== null) throw new Error(`${what}: the process exited (${entry.proc.exitCode})`);
    if (Date.now() - t0 > timeout) throw new Error(`${what}: not ready within ${timeout} ms`);
    await sleep(25);
  }
}

/** A free TCP port on 127.0.0.1 (the kernel's choice). */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

function tail(file, n = 800) {
  try {
    const t = readFileSync(file, 'utf8');
    return t.slice(-n);
  } catch {
    return '(no log)';
  }
}

/* ---- the stack ---- */

/**
 * @param {object} [options]
 * @param {string} [options.scenario]  the mock's default scenario ('NAME k=v'); default: demo mode
 * @param {string} [options.www]       web root (default the repo's www/)
 * @param {number} [options.workers=2]
 * @param {string} [options.model='gemini-3.8-flash']
 * @param {string} [options.session]  a user to sign in as `make demo` does (the run API)
 * @param {object} [options.auth]     agent.yaml's `auth` member; default {secretFile: <the stack's secret>}
 * @param {string} [options.yaml]     more of agent.yaml, appended as it is (e.g. `plugins: {dirs: [...]}`)
 * @param {(site: string) => string} [options.nginxEdit]  the rendered site.conf's text → the text nginx
 *   runs (a test's own change to the snippet, as tests/http/lib.sh GA_NGINX_EDIT)
 */
export async function startStack({ scenario, www = join(REPO, 'www'), workers = 2, model = 'gemini-3.8-flash', session, auth, yaml = '', nginxEdit } = {}) {
  if (!existsSync(GA_BIN)) throw new Error(`${GA_BIN} is missing: run make`);
  const dir = mkdtempSync(join(tmpdir(), 'ga-e2e-'));
  dirs.add(dir);
  const procs = {};

  /* the mock Gemini server: demo mode answers the cart page's requests */
  const portFile = join(dir, 'mock.port');
  const mockArgs = [join(REPO, 'tests/mock/gemini_mock.py'), '--host', '127.0.0.1', '--port', '0', '--port-file', portFile];
  mockArgs.push(...(scenario ? ['--scenario', scenario] : ['--demo']));
  procs.mock = start(PY, mockArgs, { log: join(dir, 'mock.log') });
  await waitFor('the mock', () => existsSync(portFile) && readFileSync(portFile, 'utf8').trim() !== '', 10000, procs.mock)
    .catch((e) => { throw new Error(`${e.message}\n${tail(join(dir, 'mock.log'))}`); });
  const mockUrl = `http://127.0.0.1:${readFileSync(portFile, 'utf8').trim()}`;
  await waitFor('the mock health', async () => (await fetch(`${mockUrl}/__mock/health`)).ok);

  /* the responder, on a unix socket, with a config pointing at the mock */
  writeFileSync(join(dir, '.gemini.yaml'),
    `apiKey: 'e2e-test-key-not-real'\nmodel: ${model}\nsystemPrompt: ''\nbaseUrl: '${mockUrl}'\n`, { mode: 0o600 });
  mkdirSync(join(dir, 'var'));
  /* the site secret: signed history and approval tickets need one (and sign-in tokens) */
  const secretFile = join(dir, 'site-secret');
  writeFileSync(secretFile, randomBytes(32), { mode: 0o600 });
  /* JSON is YAML: the auth member as one flow mapping */
  writeFileSync(join(dir, 'agent.yaml'),
    `gemini: '${dir}/.gemini.yaml'\nactions: ['${REPO}/actions']\ndataDir: '${dir}/var'\n` +
    `auth: ${JSON.stringify(auth ?? { secretFile })}\n` +
    (yaml ? `${yaml.replace(/\n?$/, '\n')}` : ''));
  /* the run API's sign-in, as scripts/demo.sh does it */
  const issueToken = (user, ttl = 3600) => {
    const token = execFileSync(GA_BIN, ['auth', 'issue', '--user', user, '--ttl', String(ttl), '--config', join(dir, 'agent.yaml')],
      { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir } }).trim();
    return { user, token, expiresAt: Number(token.split('.')[2]) };
  };
  let demoSession = null;
  if (session) {
    demoSession = issueToken(session);
    writeFileSync(join(dir, 'demo-session.json'), `${JSON.stringify(demoSession)}\n`, { mode: 0o600 });
  }
  const sock = join(dir, 'ga.sock');
  const pidFile = join(dir, 'ga.pid');
  /* nothing inherited but PATH: a GEMINI_API_KEY or GEMINI_BASE_URL in the
   * developer's environment must not send the tests to the real API */
  const env = { PATH: process.env.PATH, HOME: dir, TMPDIR: tmpdir() };
  procs.ga = start(GA_BIN, ['serve', '--config', join(dir, 'agent.yaml'), '--socket', sock,
    '--workers', String(workers), '--pid-file', pidFile], { log: join(dir, 'ga.log'), env, pidFile });
  await waitFor('the responder', () => existsSync(sock) && workersOf(pidFile).length === workers, 10000, procs.ga)
    .catch((e) => { throw new Error(`${e.message}\n${tail(join(dir, 'ga.log'))}`); });

  /* nginx with the real site snippet (scripts/render-nginx-conf.sh, as make demo) */
  const port = await freePort();
  const ngxDir = join(dir, 'nginx');
  await new Promise((res, rej) => {
    const p = spawn(join(REPO, 'scripts/render-nginx-conf.sh'),
      [ngxDir, String(port), sock, www, '1000r/s', ...(session ? [join(dir, 'demo-session.json')] : [])],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.once('exit', (code) => (code === 0 ? res() : rej(new Error(`render-nginx-conf.sh failed: ${err}`))));
  });
  if (nginxEdit) writeFileSync(join(ngxDir, 'site.conf'), nginxEdit(readFileSync(join(ngxDir, 'site.conf'), 'utf8')));
  procs.nginx = start(NGINX, ['-c', join(ngxDir, 'nginx.conf'), '-p', `${ngxDir}/`, '-e', join(ngxDir, 'error.log')],
    { log: join(ngxDir, 'stdout.log') });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('nginx', async () => (await fetch(`${url}/`)).status > 0, 10000, procs.nginx)
    .catch((e) => { throw new Error(`${e.message}\n${tail(join(ngxDir, 'error.log'))}`); });

  const control = async (method, path, body) => {
    const res = await fetch(`${mockUrl}${path}`, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (!res.ok) throw new Error(`mock ${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  };

  let stopped = false;
  return {
    url,
    dir,
    /** where the responder's data goes (dataDir): the shop's reviews file, the store */
    dataDir: join(dir, 'var'),
    secretFile,
    model,
    session: demoSession,
    issueToken,
    mock: {
      url: mockUrl,
      /** Set the default scenario (null: back to the start-up one is not kept; use 'demo'). */
      scenario: (name, params = {}) => control('POST', '/__mock/scenario', { name, ...params }),
      reset: () => control('POST', '/__mock/reset'),
      /** @returns {Promise<object[]>} every Gemini request since the last reset */
      requests: () => control('GET', '/__mock/requests'),
    },
    logs: () => ({ mock: tail(join(dir, 'mock.log')), ga: tail(join(dir, 'ga.log')), nginx: tail(join(ngxDir, 'error.log')) }),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopProc(procs.nginx);
      await stopProc(procs.ga);
      await stopProc(procs.mock);
      if (process.env.KEEP_TMP === '1') console.log(`# kept ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
  };
}

/* ---- the browser ---- */

/**
 * Debian's chromium, headless, with a fresh profile in a temp dir.
 * @returns {Promise<{context: import('playwright-core').BrowserContext, newPage(): Promise<import('playwright-core').Page>, close(): Promise<void>}>}
 */
export async function launchBrowser({ viewport = { width: 1200, height: 860 } } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install-deps.sh (Debian's chromium)`);
  const profile = mkdtempSync(join(tmpdir(), 'ga-e2e-profile-'));
  dirs.add(profile);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
  const blank = context.pages();
  let closed = false;
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      for (const p of blank.splice(0)) await p.close();
      return page;
    },
    async close() {
      if (closed) return;
      closed = true;
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
      dirs.delete(profile);
    },
  };
}

/* ---- driving the widget ---- */

export const SEL = {
  widget: '.gemini-chat',
  input: '.gemini-chat [data-ref="messageInput"]',
  send: '.gemini-chat [data-ref="sendMessage"]',
  stop: '.gemini-chat [data-ref="stopLoop"]',
  toggle: '.gemini-chat [data-ref="toggleExpand"]',
  retry: '.gemini-chat [data-ref="retry"]',
  notice: '.gemini-chat [data-bind="notice"]',
  error: '.gemini-chat [data-bind="error"]',
  lastAnswer: '.gemini-chat [data-bind="lastAssistantMessage"]',
  lastQuestion: '.gemini-chat [data-bind="lastUserMessage"]',
  messages: '.gemini-chat [data-foreach="messages"]',
  row: (id) => `[data-foreach="items"] > [data-id="${id}"]`,
};

/** Collect the page's errors, failed console lines and HTTP errors in
 * page.problems (a test asserts it stays empty). */
export function trackProblems(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    /* a failed load is reported below with its URL */
    if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(`console.error: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.problems = problems;
  return page;
}

/** Open the demo page and wait until the widget is mounted. */
export async function openPage(browser, stack, path = '/') {
  const page = trackProblems(await browser.newPage());
  await page.goto(`${stack.url}${path}`);
  await page.waitForSelector(SEL.input, { state: 'visible' });
  return page;
}

/**
 * Type a message into the widget and press Enter, like a visitor; resolves
 * with the loop's outcome ('response', 'error', 'stopped', ...) once the
 * widget reports it is done (the gemini-chat:done event).
 */
export async function ask(page, text, { wait = true, timeout = 30000 } = {}) {
  await page.evaluate(() => {
    window.__e2eDone = new Promise((r) => document.addEventListener('gemini-chat:done', (e) => r(e.detail?.outcome ?? 'done'), { once: true }));
  });
  await page.fill(SEL.input, text);
  await page.press(SEL.input, 'Enter');
  if (!wait) return null;
  return waitDone(page, timeout);
}

export async function waitDone(page, timeout = 30000) {
  return page.evaluate((ms) => Promise.race([
    window.__e2eDone,
    new Promise((_, rej) => setTimeout(() => rej(new Error(`the chat did not finish within ${ms} ms`)), ms)),
  ]), timeout);
}

/** The widget's last answer as the visitor sees it (rendered text). */
export async function lastAnswer(page) {
  return (await page.textContent(SEL.lastAnswer))?.trim() ?? '';
}

/** Names of the function declarations in a recorded Gemini request. */
export function declaredNames(record) {
  return (record?.body?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? t.function_declarations ?? []).map((d) => d.name));
}

/** The turn the responder sends the page state in (the request's last,
 * before any server-only step of that request), or undefined. */
export function pageTurn(record) {
  return (record?.body?.contents ?? []).find(
    (c) => c.role === 'user' && c.parts?.length === 1 && /\n<page-state>\n/.test(c.parts[0].text ?? ''));
}

/** The visitor's conversation of a recorded request: its contents without
 * the page state's turn. */
export function conversationOf(record) {
  const turn = pageTurn(record);
  return (record?.body?.contents ?? []).filter((c) => c !== turn);
}

/** The JSON between the <page-state> markers of a recorded request's page
 * state turn (the responder sends the page state as a turn of its own), or
 * null. */
export function sentPageState(record) {
  const text = pageTurn(record)?.parts?.[0]?.text ?? '';
  const i = text.lastIndexOf('<page-state>');
  const j = text.indexOf('</page-state>', i);
  if (i < 0 || j < 0) return null;
  return JSON.parse(text.slice(i + '<page-state>'.length, j));
}

/** Save a screenshot under tests/e2e/screenshots/ (created by the run). */
export async function screenshot(target, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, name);
  await target.screenshot({ path: file });
  return file;
}
