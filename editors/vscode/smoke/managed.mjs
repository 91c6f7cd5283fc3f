// Smoke test of the managed server install in a real VS Code (code-server + Chromium, as
// smoke.mjs): no `pseudoclaude.server.*` setting anywhere, no `pseudoclaude` and no project
// virtual environment on PATH, only the system's `python3` (>= 3.11, with venv) and node.
//
// 1. Installed: opening the PseudoClaude view starts the install; the progress notification
//    "PseudoClaude: installing the server" is up (screenshot vscode-install-progress.png); the
//    environment ends up in globalStorage `server/<version>/venv` with no `venv.tmp-*` left; the
//    chat answers a prompt against the fake model; "PseudoClaude: Show Server Status" shows the
//    managed server (screenshot vscode-server-status.png).
// 2. Failed: a fresh user-data-dir, pip's index unreachable (PIP_INDEX_URL=http://127.0.0.1:9/simple,
//    no pip configuration files, an empty pip cache): exactly one error notification with Retry /
//    Show Log / Set Python Path (screenshot vscode-install-failed.png), Show Log shows pip's error,
//    nothing half-made in globalStorage.
// 3. No Python: PATH has only node's folder: one error notification saying that no Python >= 3.11
//    was found, with the same three actions (screenshot vscode-install-no-python.png), nothing made.
//
//   node managed.mjs --python <venv python> --vsix <pseudoclaude.vsix> --out <dir> [--media <dir>]
//
// --python runs only the fake model; the extension must find its own Python. Needs Node 24
// first on PATH (code-server 4.139); `run.sh` sets everything up and runs this after smoke.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { devNull, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..', '..');
const { values: opts } = parseArgs({
  options: {
    python: { type: 'string' },
    vsix: { type: 'string' },
    out: { type: 'string', default: join(here, 'out', 'managed') },
    media: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    timeout: { type: 'string', default: '120000' },
    // pip downloads the server's dependencies: minutes on a slow line.
    'install-timeout': { type: 'string', default: '600000' },
    keep: { type: 'boolean', default: false },
    // Some of the scenarios only: installed,failed,no-python.
    only: { type: 'string', default: 'installed,failed,no-python' },
  },
});
if (!opts.python || !opts.vsix) {
  console.error('usage: node managed.mjs --python PYTHON --vsix FILE [--out DIR] [--media DIR]');
  process.exit(2);
}
const TIMEOUT = Number(opts.timeout);
const INSTALL_TIMEOUT = Number(opts['install-timeout']);
// The fake model's demo script: this prompt reads README.md, then answers.
const PROMPT = 'What is this project?';
const ANSWER = 'I read README.md with read_file.';
const EXTENSION_ID = 'pseudoclaude.pseudoclaude';
const codeServer = join(here, 'node_modules', '.bin', 'code-server');
mkdirSync(opts.out, { recursive: true });

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const cleanups = [];
let currentPage;
const shots = [];
const vsixVersion = (() => {
  const r = spawnSync('unzip', ['-p', opts.vsix, 'extension/package.json'], { encoding: 'utf8' });
  return r.status === 0 ? JSON.parse(r.stdout).version : undefined;
})();

async function freePort() {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

async function startFakeModel() {
  const proc = spawn(opts.python, ['-m', 'pseudoclaude', 'fake-model', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => proc.kill('SIGTERM'));
  const lines = createInterface({ input: proc.stdout });
  const [url] = await Promise.race([
    once(lines, 'line'),
    once(proc, 'exit').then(([code]) => {
      throw new Error(`fake-model exited with ${code}`);
    }),
  ]);
  return url.trim();
}

/**
 * The PATH the extension sees: node (for code-server) and the system folders, without any folder
 * that has `pseudoclaude`, without the repository's .venv and without pyenv's shims; its
 * `python3` must be >= 3.11 and have the venv module.
 */
function managedPath() {
  const venvBin = join(repo, '.venv', 'bin');
  const dirs = [dirname(process.execPath), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']
    .filter((d) => existsSync(d) && d !== venvBin && !existsSync(join(d, 'pseudoclaude')));
  const path = dirs.join(delimiter);
  const env = { PATH: path, HOME: process.env.HOME ?? '/root' };
  const which = spawnSync('sh', ['-c', 'command -v pseudoclaude; command -v python3'], { env, encoding: 'utf8' });
  const found = which.stdout.trim().split('\n');
  if (found.length !== 1 || !found[0]) {
    throw new Error(`PATH ${path}: expected python3 and no pseudoclaude, found ${JSON.stringify(found)}`);
  }
  const probe = spawnSync('python3', ['-c', 'import sys, venv, ensurepip; print("%d.%d.%d" % sys.version_info[:3]); print(sys.prefix)'], {
    env,
    encoding: 'utf8',
  });
  const [version = '', prefix = ''] = probe.stdout.trim().split('\n');
  const [major, minor] = version.split('.').map(Number);
  if (probe.status !== 0 || major < 3 || (major === 3 && minor < 11)) {
    throw new Error(`python3 on ${path} is not a Python >= 3.11 with venv: ${probe.stdout}${probe.stderr}`);
  }
  if (resolve(prefix).startsWith(join(repo, '.venv'))) {
    throw new Error(`python3 on ${path} is the repository's .venv`);
  }
  return { path, python: `${found[0]} (Python ${version})` };
}

function installExtension(dirs) {
  const r = spawnSync(
    codeServer,
    ['--install-extension', opts.vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData, '--config', dirs.config],
    { encoding: 'utf8', timeout: TIMEOUT },
  );
  if (r.status !== 0 || !/successfully installed/i.test(r.stdout + r.stderr)) {
    throw new Error(`--install-extension failed (${r.status}): ${r.stdout}${r.stderr}`);
  }
}

/** code-server in its own process group with exactly `env`; returns its stop function. */
async function startCodeServer(dirs, port, folder, env, name) {
  const proc = spawn(
    codeServer,
    ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--extensions-dir', dirs.extensions,
      '--user-data-dir', dirs.userData, '--config', dirs.config, folder],
    // VSCODE_CLI=1: the extension host gets exactly `env`, not the PATH of a login shell that
    // code-server would otherwise resolve (which could have pyenv's or a project's Python).
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, VSCODE_CLI: '1' } },
  );
  const chunks = [];
  proc.stdout.on('data', (d) => chunks.push(d));
  proc.stderr.on('data', (d) => chunks.push(d));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    if (proc.exitCode === null) {
      await Promise.race([once(proc, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
    }
    writeFileSync(join(opts.out, `code-server-${name}.log`), Buffer.concat(chunks));
  };
  cleanups.push(stop);
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) {
      throw new Error(`code-server exited (${proc.exitCode}): ${Buffer.concat(chunks).toString()}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) {
        return stop;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('code-server did not answer /healthz');
}

async function runCommand(page, title) {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    try {
      await row.waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await page.keyboard.press('Escape');
    }
  }
  await input.press('Enter');
}

async function chatFrame(page) {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      try {
        if (await frame.locator('#prompt').count()) return frame;
      } catch {
        // a frame that went away meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('no chat webview frame with #prompt');
}

async function shot(page, name) {
  const file = join(opts.out, name);
  await page.screenshot({ path: file });
  shots.push(file);
  if (opts.media) {
    mkdirSync(opts.media, { recursive: true });
    copyFileSync(file, join(opts.media, name));
  }
  log(`screenshot: ${file}`);
}

/** Every file and folder under `dir` (relative paths), for the messages. */
function tree(dir) {
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).sort() : [];
}

/** A fresh project, user-data-dir (User settings: the fake model, no server settings) and extension. */
function setUp(tmp, name, baseUrl) {
  const root = join(tmp, name);
  const folder = join(root, 'project');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'README.md'), '# Demo project\n\nIt keeps sessions and memory.\n');
  const dirs = { extensions: join(root, 'extensions'), userData: join(root, 'user-data'), config: join(root, 'config.yaml') };
  writeFileSync(dirs.config, 'auth: none\ncert: false\n');
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(
    join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'pseudoclaude.provider': 'anthropic',
        'pseudoclaude.apiKey': 'sk-test',
        'pseudoclaude.baseUrl': baseUrl,
        'pseudoclaude.memory.enabled': false,
        'pseudoclaude.memory.userDir': join(root, 'user-memory'),
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'extensions.autoCheckUpdates': false,
        'telemetry.telemetryLevel': 'off',
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'window.commandCenter': false,
      },
      null,
      2,
    ),
  );
  installExtension(dirs);
  const storage = join(dirs.userData, 'User', 'globalStorage', EXTENSION_ID);
  return { root, folder, dirs, storage, versionDir: join(storage, 'server', vsixVersion ?? '0.0.0') };
}

/** No `pseudoclaude.server.*` in any settings file of the user-data-dir. */
function assertNoServerSettings(userData) {
  for (const f of readdirSync(userData, { recursive: true }).map(String).filter((f) => f.endsWith('settings.json'))) {
    const text = spawnSync('cat', [join(userData, f)], { encoding: 'utf8' }).stdout;
    if (text.includes('pseudoclaude.server.')) {
      throw new Error(`${f} sets a pseudoclaude.server.* setting`);
    }
  }
}

async function openWorkbench(browser, port, folder) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  currentPage = page;
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  // The PseudoClaude view activates the extension, which starts (and so installs) the server.
  const icon = page.locator('.part.activitybar .action-item [aria-label^="PseudoClaude"]').first();
  await icon.waitFor({ state: 'visible' });
  await icon.click();
  await page.locator('.part.sidebar .pane-header', { hasText: 'Chat' }).first().waitFor({ state: 'visible' });
  return page;
}

const toasts = (page) => page.locator('.notifications-toasts .notification-toast');

async function installed(browser, tmp, baseUrl, path) {
  const s = setUp(tmp, 'installed', baseUrl);
  assertNoServerSettings(s.dirs.userData);
  const env = { ...process.env, PATH: path };
  for (const k of Object.keys(env)) {
    if (k.startsWith('PSEUDOCLAUDE_') || k === 'VIRTUAL_ENV' || k.startsWith('PYENV')) delete env[k];
  }
  const port = await freePort();
  const stop = await startCodeServer(s.dirs, port, s.folder, env, 'installed');
  const page = await openWorkbench(browser, port, s.folder);
  log('installed: workbench loaded, PseudoClaude view open');

  const progress = toasts(page).filter({ hasText: 'PseudoClaude: installing the server' }).first();
  await progress.waitFor({ state: 'visible' });
  await page.locator('.notifications-toasts .notification-toast.notification-fade-in-done', { hasText: 'installing the server' })
    .first().waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
  // A step of pip's rather than the first "Looking for Python" line, when it comes in time.
  await progress.filter({ hasText: /Collecting|Downloading|Using cached|Successfully/ })
    .waitFor({ state: 'visible', timeout: 60_000 }).catch(() => log('installed: no pip step in the progress notification yet'));
  // A click in the empty editor area: the activity bar's tooltip (from opening the view) goes.
  await page.mouse.click(900, 250);
  await page.waitForTimeout(500);
  await shot(page, 'vscode-install-progress.png');
  log(`installed: progress: ${(await progress.innerText()).replace(/\s+/g, ' ').trim()}`);
  await progress.waitFor({ state: 'detached', timeout: INSTALL_TIMEOUT });
  log('installed: the progress notification is gone');

  const venv = join(s.versionDir, 'venv');
  if (!existsSync(join(venv, 'bin', 'python')) || !existsSync(join(venv, 'pyvenv.cfg'))) {
    throw new Error(`no environment at ${venv}: ${JSON.stringify(tree(s.storage).slice(0, 20))}`);
  }
  const left = readdirSync(s.versionDir).filter((e) => e !== 'venv');
  if (left.length) {
    throw new Error(`left next to the environment in ${s.versionDir}: ${JSON.stringify(left)}`);
  }
  log(`installed: ${venv} (nothing else in ${s.versionDir})`);

  const chat = await chatFrame(page);
  const box = chat.locator('#prompt');
  await box.click();
  await box.fill(PROMPT);
  await box.press('Enter');
  await chat.locator('.msg.assistant', { hasText: ANSWER }).waitFor({ state: 'visible' });
  await chat.locator('details.tool', { hasText: 'read_file' }).first().waitFor({ state: 'visible' });
  log('installed: the chat answered against the fake model');

  await runCommand(page, 'PseudoClaude: Show Server Status');
  const dialog = page.locator('.monaco-dialog-box').first();
  await dialog.waitFor({ state: 'visible' });
  await dialog.filter({ hasText: /PseudoClaude server .*is running/ }).waitFor({ state: 'visible' });
  const status = (await dialog.innerText()).replace(/\s+/g, ' ');
  for (const want of [venv, 'private virtual environment']) {
    if (!status.includes(want)) throw new Error(`Show Server Status does not say ${JSON.stringify(want)}: ${status}`);
  }
  await page.mouse.move(900, 250);
  await shot(page, 'vscode-server-status.png');
  log(`installed: status: ${status}`);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  const errors = await toasts(page).filter({ hasText: /failed|could not|did not start/i }).allInnerTexts();
  if (errors.length) throw new Error(`error notifications: ${errors.join(' | ')}`);
  await page.close();
  await stop();
}

/**
 * The install's failure: exactly one PseudoClaude notification, an error, with Retry / Show Log /
 * Set Python Path; returns its locator and text.
 */
async function oneFailure(page) {
  const failure = toasts(page).filter({ hasText: 'could not be installed' }).first();
  await failure.waitFor({ state: 'visible', timeout: INSTALL_TIMEOUT });
  await page.locator('.notifications-toasts .notification-toast.notification-fade-in-done', { hasText: 'could not be installed' })
    .first().waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
  // Anything else that would come (a second error for the same failure) has time to show.
  await page.waitForTimeout(3000);
  const all = await toasts(page).allInnerTexts();
  const errors = all.filter((t) => /PseudoClaude/.test(t));
  if (errors.length !== 1) {
    throw new Error(`expected one PseudoClaude notification, found ${errors.length}: ${errors.join(' | ')}`);
  }
  const buttons = (await failure.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts()).map((b) => b.trim());
  if (JSON.stringify(buttons) !== JSON.stringify(['Retry', 'Show Log', 'Set Python Path'])) {
    throw new Error(`the failure's buttons: ${JSON.stringify(buttons)}`);
  }
  if ((await failure.locator('.codicon-error').count()) === 0) {
    throw new Error('the failure notification is not an error');
  }
  return { failure, text: (await failure.innerText()).replace(/\s+/g, ' ').trim() };
}

async function failed(browser, tmp, baseUrl, path) {
  const s = setUp(tmp, 'failed', baseUrl);
  assertNoServerSettings(s.dirs.userData);
  const pipCache = join(s.root, 'pip-cache');
  mkdirSync(pipCache);
  const env = {
    ...process.env,
    PATH: path,
    PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
    PIP_NO_CACHE_DIR: '1',
    PIP_CACHE_DIR: pipCache,
    // No pip.conf: its find-links or extra index could satisfy the requirements.
    PIP_CONFIG_FILE: devNull,
  };
  for (const k of Object.keys(env)) {
    if (k.startsWith('PSEUDOCLAUDE_') || k === 'VIRTUAL_ENV' || k.startsWith('PYENV') || k === 'PIP_FIND_LINKS' || k === 'PIP_EXTRA_INDEX_URL') {
      delete env[k];
    }
  }
  const port = await freePort();
  const stop = await startCodeServer(s.dirs, port, s.folder, env, 'failed');
  const page = await openWorkbench(browser, port, s.folder);
  log('failed: workbench loaded, PseudoClaude view open');

  const { failure, text } = await oneFailure(page);
  log(`failed: ${text}`);
  if (!/package index/.test(text)) {
    throw new Error(`the failure does not name the package index: ${text}`);
  }
  await page.mouse.click(900, 250);
  await page.waitForTimeout(500);
  await shot(page, 'vscode-install-failed.png');

  const made = tree(join(s.storage, 'server'));
  if (made.length) {
    throw new Error(`half-made in globalStorage after the failure: ${JSON.stringify(made.slice(0, 20))}`);
  }
  log(`failed: nothing in ${join(s.storage, 'server')}`);

  await failure.locator('.monaco-button', { hasText: 'Show Log' }).click();
  await page.waitForFunction(
    () => /127\.0\.0\.1:9|No matching distribution/.test((document.querySelector('.part.panel')?.textContent ?? '').replace(/\u00a0/g, ' ')),
    undefined,
    { timeout: TIMEOUT },
  );
  log("failed: Show Log shows pip's output");
  await page.close();
  await stop();
}

/** No Python at all on PATH (only node's folder): one failure that says so, nothing made. */
async function noPython(browser, tmp, baseUrl) {
  const s = setUp(tmp, 'no-python', baseUrl);
  assertNoServerSettings(s.dirs.userData);
  const nodeDir = dirname(process.execPath);
  for (const exe of ['python3', 'python']) {
    if (existsSync(join(nodeDir, exe))) throw new Error(`${nodeDir} has ${exe}`);
  }
  const env = { ...process.env, PATH: nodeDir };
  for (const k of Object.keys(env)) {
    if (k.startsWith('PSEUDOCLAUDE_') || k === 'VIRTUAL_ENV' || k.startsWith('PYENV')) delete env[k];
  }
  const port = await freePort();
  const stop = await startCodeServer(s.dirs, port, s.folder, env, 'no-python');
  const page = await openWorkbench(browser, port, s.folder);
  log('no python: workbench loaded, PseudoClaude view open');
  const { text } = await oneFailure(page);
  log(`no python: ${text}`);
  if (!/no Python >= 3\.11 found/i.test(text)) {
    throw new Error(`the failure does not say that no Python was found: ${text}`);
  }
  await page.mouse.click(900, 250);
  await page.waitForTimeout(500);
  await shot(page, 'vscode-install-no-python.png');
  const made = tree(join(s.storage, 'server'));
  if (made.length) {
    throw new Error(`made in globalStorage without a Python: ${JSON.stringify(made.slice(0, 20))}`);
  }
  await page.close();
  await stop();
}

async function main() {
  if (!vsixVersion) throw new Error(`cannot read the version of ${opts.vsix}`);
  const tmp = mkdtempSync(join(tmpdir(), 'pseudoclaude-managed-'));
  cleanups.push(() => (opts.keep ? log(`kept ${tmp}`) : rmSync(tmp, { recursive: true, force: true })));
  const baseUrl = await startFakeModel();
  const { path, python } = managedPath();
  log(`fake model at ${baseUrl}; PATH ${path}; python3 is ${python}`);
  const browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  cleanups.push(() => browser.close());
  const only = new Set(opts.only.split(','));
  if (only.has('installed')) await installed(browser, tmp, baseUrl, path);
  if (only.has('failed')) await failed(browser, tmp, baseUrl, path);
  if (only.has('no-python')) await noPython(browser, tmp, baseUrl);
  writeFileSync(join(opts.out, 'result.json'), JSON.stringify({ ok: true, seconds: (Date.now() - t0) / 1000, screenshots: shots }, null, 2));
}

let failedRun = false;
try {
  await main();
  console.log(`vscode managed install smoke: ${opts.only.split(',').length} passed, 0 failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
} catch (e) {
  failedRun = true;
  console.error(`vscode managed install smoke failed: ${e instanceof Error ? e.stack : e}`);
  if (currentPage && !currentPage.isClosed()) {
    await currentPage.screenshot({ path: join(opts.out, 'failure.png') }).catch(() => undefined);
    console.error(`screenshot of the failure: ${join(opts.out, 'failure.png')}`);
  }
  console.log('vscode managed install smoke: failed');
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // best effort
    }
  }
}
process.exit(failedRun ? 1 : 0);
