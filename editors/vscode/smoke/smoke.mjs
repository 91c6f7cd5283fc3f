// Smoke test of the packaged extension in a real VS Code: code-server + Debian Chromium driven by
// playwright-core. The .vsix installs offline, the extension activates, "PseudoClaude: Ask"
// returns the fake model's answer in the PseudoClaude output channel, and the status bar shows
// the context meter. A screenshot is saved.
//
//   node smoke.mjs --python <venv python> --vsix <pseudoclaude.vsix> --out <dir>
//
// Run with Node 24 first on PATH (code-server 4.139 needs it); `run.sh` sets everything up.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    python: { type: 'string' },
    vsix: { type: 'string' },
    out: { type: 'string', default: join(here, 'out') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    timeout: { type: 'string', default: '120000' },
    keep: { type: 'boolean', default: false },
  },
});
if (!opts.python || !opts.vsix) {
  console.error('usage: node smoke.mjs --python PYTHON --vsix FILE [--out DIR]');
  process.exit(2);
}
const TIMEOUT = Number(opts.timeout);
const ANSWER = 'I read README.md with read_file.';
const PROMPT = 'What is this project?';
const APPROVAL_PROMPT = 'please run the tests';
const SLOW_PROMPT = 'a slow question';
const codeServer = join(here, 'node_modules', '.bin', 'code-server');
mkdirSync(opts.out, { recursive: true });

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const cleanups = [];
let currentPage;

async function freePort() {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/**
 * The fake model (`pseudoclaude fake-model`) with its demo script (read README.md, then answer)
 * plus two rules: "please run the tests" calls run_command, which needs an approval, and "a slow
 * question" stalls mid-answer, for Cancel Run.
 * Its base URL is the first stdout line.
 */
async function startFakeModel(tmp) {
  const demo = spawnSync(
    opts.python,
    ['-c', 'import json; from pseudoclaude.fake_model import DEMO_SCRIPT; print(json.dumps(DEMO_SCRIPT))'],
    { encoding: 'utf8' },
  );
  if (demo.status !== 0) {
    throw new Error(`cannot read the demo script: ${demo.stderr}`);
  }
  const script = JSON.parse(demo.stdout);
  script.rules.unshift(
    {
      when: { has_tools: true, last_user_contains: APPROVAL_PROMPT },
      reply: { text: 'Running them.', tool_calls: [{ name: 'run_command', arguments: { command: 'true' } }] },
    },
    {
      // Streams two pieces, then goes silent: a run to cancel.
      when: { has_tools: true, last_user_contains: SLOW_PROMPT },
      reply: { text: ['Thinking slowly', ' and', ' never finishing.'], stall: 120, stall_after: 4 },
    },
  );
  const scriptFile = join(tmp, 'fake-model.json');
  writeFileSync(scriptFile, JSON.stringify(script));
  const proc = spawn(opts.python, ['-m', 'pseudoclaude', 'fake-model', '--port', '0', '--script', scriptFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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

function installExtension(dirs) {
  const r = spawnSync(
    codeServer,
    ['--install-extension', opts.vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData,
      '--config', dirs.config],
    { encoding: 'utf8', timeout: TIMEOUT },
  );
  log(`install: ${(r.stdout + r.stderr).trim().split('\n').slice(-2).join(' | ')}`);
  if (r.status !== 0 || !/successfully installed/i.test(r.stdout + r.stderr)) {
    throw new Error(`--install-extension failed (${r.status}): ${r.stdout}${r.stderr}`);
  }
}

/** code-server in its own process group (detached), ended as a group at exit. */
async function startCodeServer(dirs, port, folder) {
  const logFile = join(opts.out, 'code-server.log');
  const proc = spawn(
    codeServer,
    ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--extensions-dir', dirs.extensions,
      '--user-data-dir', dirs.userData, '--config', dirs.config, folder],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const chunks = [];
  proc.stdout.on('data', (d) => chunks.push(d));
  proc.stderr.on('data', (d) => chunks.push(d));
  cleanups.push(() => {
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    writeFileSync(logFile, Buffer.concat(chunks));
  });
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) {
      throw new Error(`code-server exited (${proc.exitCode}): ${Buffer.concat(chunks).toString()}`);
    }
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('code-server did not answer /healthz');
}

/** Run a command from the palette; retried until the extension's contributions are loaded. */
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
      if (Date.now() > deadline) {
        throw e;
      }
      await page.keyboard.press('Escape');
    }
  }
  await input.press('Enter');
}

/** The extension's "PseudoClaude Server" log channel, as the extension host wrote it. */
function findServerLog(userData) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.name === 'PseudoClaude Server.log') {
        found.push(path);
      }
    }
  };
  walk(join(userData, 'logs'));
  if (found.length === 0) {
    throw new Error('no "PseudoClaude Server" log: did the extension activate?');
  }
  return found.map((f) => readFileSync(f, 'utf8')).join('\n');
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'pseudoclaude-vscode-'));
  cleanups.push(() => (opts.keep ? log(`kept ${tmp}`) : rmSync(tmp, { recursive: true, force: true })));
  const folder = join(tmp, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'README.md'), '# Demo project\n\nIt keeps sessions and memory.\n');
  const dirs = {
    extensions: join(tmp, 'extensions'),
    userData: join(tmp, 'user-data'),
    config: join(tmp, 'config.yaml'),
  };
  writeFileSync(dirs.config, 'auth: none\ncert: false\n');
  const baseUrl = await startFakeModel(tmp);
  log(`fake model at ${baseUrl}`);
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(
    join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'pseudoclaude.server.pythonPath': opts.python,
        'pseudoclaude.provider': 'anthropic',
        'pseudoclaude.apiKey': 'sk-test',
        'pseudoclaude.baseUrl': baseUrl,
        'pseudoclaude.approvals.runCommand': 'ask',
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'extensions.autoCheckUpdates': false,
        'telemetry.telemetryLevel': 'off',
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
      },
      null,
      2,
    ),
  );
  installExtension(dirs);
  const port = await freePort();
  await startCodeServer(dirs, port, folder);
  log(`code-server on port ${port}`);

  const browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  currentPage = page;
  /** Wait until the panel (the PseudoClaude output channel) shows `text`. */
  const panelHas = (text) =>
    page.waitForFunction(
      (t) => (document.querySelector('.part.panel')?.textContent ?? '').replace(/\u00a0/g, ' ').includes(t),
      text,
      { timeout: TIMEOUT },
    );
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  log('workbench loaded');

  // Ask: the command palette, then the input box.
  await runCommand(page, 'PseudoClaude: Ask');
  const box = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'PseudoClaude: Ask' }).waitFor({ state: 'visible' });
  await box.fill(PROMPT);
  await box.press('Enter');
  log('asked');

  // The answer streams into the PseudoClaude output channel.
  await panelHas(ANSWER);
  log('answer shown in the output channel');
  await panelHas('── completed · 2 iterations');

  // The status bar meter: `<tokens>/200k` once the server reported context usage.
  const meter = await page.waitForFunction(
    () => {
      const items = [...document.querySelectorAll('.part.statusbar .statusbar-item')];
      const hit = items.map((i) => (i.textContent ?? '').trim()).find((t) => /^\d+(\.\d)?k?\/200k$/.test(t));
      return hit ?? false;
    },
    undefined,
    { timeout: TIMEOUT },
  );
  const meterText = await meter.jsonValue();
  log(`status bar meter: ${meterText}`);
  const meterItem = page.locator('.part.statusbar .statusbar-item', { hasText: /\/200k$/ }).first();
  await meterItem.hover();
  await page.locator('.monaco-hover, .workbench-hover', { hasText: 'Auto-compact at 167,000' }).first()
    .waitFor({ state: 'visible' });
  log('meter tooltip shows the threshold');

  // Show Context (a request without a cancellation token) answers in a notification.
  await runCommand(page, 'PseudoClaude: Show Context');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'of 200,000 tokens' }).first();
  await toast.waitFor({ state: 'visible' });
  const contextText = (await toast.innerText()).replace(/\s+/g, ' ');
  if (!/PseudoClaude \(project\): [\d,]+ of 200,000 tokens · 4 messages · session \d{8}-\d{6}-[0-9a-f]{4}/.test(contextText)) {
    throw new Error(`unexpected Show Context message: ${contextText}`);
  }
  log(`show context: ${contextText.slice(0, 120)}`);

  const panelText = (await page.locator('.part.panel').innerText()).replace(/\u00a0/g, ' ');
  writeFileSync(join(opts.out, 'output-channel.txt'), panelText);
  for (const expected of ['━━ You · project ━━', PROMPT, '▸ read_file(path: README.md)', '── completed · 2 iterations']) {
    if (!panelText.includes(expected)) {
      throw new Error(`output channel lacks ${JSON.stringify(expected)}:\n${panelText}`);
    }
  }
  const errors = await page.locator('.notifications-toasts .notification-toast', { hasText: 'PseudoClaude' }).allInnerTexts();
  if (errors.some((t) => /failed|did not start/i.test(t))) {
    throw new Error(`error notifications: ${errors.join(' | ')}`);
  }
  const shot = join(opts.out, 'vscode-smoke.png');
  await page.mouse.move(10, 10);
  await page.screenshot({ path: shot });
  log(`screenshot: ${shot}`);

  // An approval: run_command under `approvals.runCommand: ask` is a modal dialog.
  await runCommand(page, 'PseudoClaude: Ask');
  await page.locator('.quick-input-widget', { hasText: 'PseudoClaude: Ask' }).waitFor({ state: 'visible' });
  await box.fill(APPROVAL_PROMPT);
  await box.press('Enter');
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'run_command' });
  await dialog.waitFor({ state: 'visible' });
  const buttons = (await dialog.locator('.monaco-button').allInnerTexts()).map((t) => t.trim()).filter(Boolean);
  for (const b of ['Allow once', 'Allow for this session', 'Deny']) {
    if (!buttons.includes(b)) {
      throw new Error(`approval dialog lacks ${b}: ${buttons.join(', ')}`);
    }
  }
  const approvalShot = join(opts.out, 'vscode-approval.png');
  await page.screenshot({ path: approvalShot });
  log(`approval dialog (${buttons.join(' / ')}), screenshot: ${approvalShot}`);
  await dialog.locator('.monaco-button', { hasText: 'Allow once' }).click();
  await panelHas('✓ run_command');
  log('approved: run_command ran');

  // Cancel Run: a run that stalls mid-answer ends as canceled, without an error message.
  // (the approved run finished: its footer follows the tool line; the panel renders only the tail)
  await page.waitForFunction(
    () => /✓ run_command[\s\S]*── completed · 2 iterations/.test(
      (document.querySelector('.part.panel')?.textContent ?? '').replace(/\u00a0/g, ' ')),
    undefined,
    { timeout: TIMEOUT },
  );
  await runCommand(page, 'PseudoClaude: Ask');
  await page.locator('.quick-input-widget', { hasText: 'PseudoClaude: Ask' }).waitFor({ state: 'visible' });
  await box.fill(SLOW_PROMPT);
  await box.press('Enter');
  await panelHas('Thinking slowly');
  await runCommand(page, 'PseudoClaude: Cancel Run');
  await panelHas('── canceled ──');
  log('cancelled: the transcript says canceled');

  const serverLog = findServerLog(dirs.userData);
  writeFileSync(join(opts.out, 'pseudoclaude-server.log'), serverLog);
  const bad = serverLog.split('\n').filter((l) => /\[error\]|expected an object|failed/i.test(l));
  if (bad.length > 0) {
    throw new Error(`the extension's server log has errors:\n${bad.join('\n')}`);
  }
  writeFileSync(
    join(opts.out, 'result.json'),
    JSON.stringify({ ok: true, meter: meterText, seconds: (Date.now() - t0) / 1000, screenshots: [shot, approvalShot] }, null, 2),
  );
}

let failed = false;
try {
  await main();
  console.log(`vscode smoke: 1 passed, 0 failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
} catch (e) {
  failed = true;
  console.error(`vscode smoke failed: ${e instanceof Error ? e.stack : e}`);
  if (currentPage) {
    await currentPage.screenshot({ path: join(opts.out, 'failure.png') }).catch(() => undefined);
    console.error(`screenshot of the failure: ${join(opts.out, 'failure.png')}`);
  }
  console.log('vscode smoke: 0 passed, 1 failed');
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // best effort
    }
  }
}
process.exit(failed ? 1 : 0);
