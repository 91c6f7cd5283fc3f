/** The managed install's pure parts: finding Python, the plan, pip's steps, failures, status. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  classifyFailure,
  findOnPath,
  findPython,
  installPlan,
  isSupportedPython,
  leftovers,
  managedCommand,
  noPythonMessage,
  parseProbe,
  parsePythonVersion,
  parseServerVersion,
  pickWheel,
  pipError,
  pipStep,
  pythonCandidates,
  shebangInterpreter,
  staleVersions,
  statusText,
  versionCommand,
  type ProbeResult,
  type PythonCandidate,
} from '../src/install';
import { describeCommand, installStrategy } from '../src/settings';

describe('finding Python', () => {
  it('asks the Python extension first, then python3 and python (py -3 first on Windows)', () => {
    assert.deepEqual(
      pythonCandidates('linux', { path: '/home/u/.venvs/x/bin/python', isDirectory: false }).map((c) => [c.command, ...c.args]),
      [['/home/u/.venvs/x/bin/python'], ['python3'], ['python']],
    );
    assert.deepEqual(pythonCandidates('darwin').map((c) => c.command), ['python3', 'python']);
    assert.deepEqual(
      pythonCandidates('win32', { path: 'C:\\envs\\x', isDirectory: true }).map((c) => [c.command, ...c.args]),
      [['C:\\envs\\x\\Scripts\\python.exe'], ['py', '-3'], ['python'], ['python3']],
    );
    assert.deepEqual(
      pythonCandidates('linux', { path: '/work/.venv', isDirectory: true })[0]?.command,
      '/work/.venv/bin/python',
    );
  });

  it('parses versions and wants 3.11 or newer', () => {
    assert.deepEqual(parsePythonVersion('Python 3.12.4'), [3, 12, 4]);
    assert.deepEqual(parsePythonVersion('3.13.0rc1'), [3, 13, 0]);
    assert.deepEqual(parsePythonVersion('3.11'), [3, 11, 0]);
    assert.equal(parsePythonVersion('command not found'), undefined);
    assert.ok(isSupportedPython('3.11.0') && isSupportedPython('3.14.1') && isSupportedPython('4.0.0'));
    assert.ok(!isSupportedPython('3.10.12') && !isSupportedPython('2.7.18') && !isSupportedPython(''));
    assert.deepEqual(parseProbe('3.12.4\n/usr/bin/python3.12\n'), { ok: true, version: '3.12.4', executable: '/usr/bin/python3.12' });
    assert.equal(parseProbe('garbage').ok, false);
  });

  it('takes the first supported candidate, and names every one tried when none is', async () => {
    const c = pythonCandidates('linux');
    const answers: Record<string, ProbeResult> = {
      python3: { ok: true, version: '3.10.12', executable: '/usr/bin/python3.10' },
      python: { ok: false, error: 'not found' },
    };
    const probe = async (p: PythonCandidate) => answers[p.command] ?? { ok: false, error: 'not found' };
    const none = await findPython(c, probe);
    assert.equal(none.ok, false);
    const message = noPythonMessage(none.tried);
    assert.match(message, /no Python >= 3\.11 found/);
    assert.match(message, /python3 on PATH: Python 3\.10\.12/);
    assert.match(message, /python on PATH: not found/);
    assert.match(message, /pseudoclaude\.server\.pythonPath/);

    answers.python = { ok: true, version: '3.12.1', executable: '/opt/py/bin/python3.12' };
    const found = await findPython(c, probe);
    assert.ok(found.ok);
    assert.equal(found.ok && found.python.executable, '/opt/py/bin/python3.12');
    assert.equal(found.tried.length, 2);
  });

  it('finds pseudoclaude on PATH (with PATHEXT on Windows)', async () => {
    const files = new Set(['/b/pseudoclaude', 'C:\\tools\\pseudoclaude.EXE']);
    const exists = async (f: string) => files.has(f);
    assert.equal(await findOnPath('pseudoclaude', { PATH: '/a:/b' }, 'linux', exists), '/b/pseudoclaude');
    assert.equal(await findOnPath('pseudoclaude', { PATH: '/a' }, 'linux', exists), undefined);
    assert.equal(await findOnPath('pseudoclaude', {}, 'linux', exists), undefined);
    assert.equal(
      await findOnPath('pseudoclaude', { Path: 'C:\\x;C:\\tools', PATHEXT: '.COM;.EXE' }, 'win32', exists),
      'C:\\tools\\pseudoclaude.EXE',
    );
  });
});

describe('the install plan', () => {
  const input = {
    globalStorage: '/gs',
    extensionVersion: '0.2.0',
    wheel: '/ext/bundled/pseudoclaude_lsp-0.2.0-py3-none-any.whl',
    basePython: '/usr/bin/python3.12',
    platform: 'linux' as const,
    suffix: '42-1',
  };

  it('builds in a sibling folder of <globalStorage>/server/<version>/venv', () => {
    const plan = installPlan(input);
    assert.equal(plan.root, '/gs/server');
    assert.equal(plan.versionDir, '/gs/server/0.2.0');
    assert.equal(plan.venv, '/gs/server/0.2.0/venv');
    assert.equal(plan.staging, '/gs/server/0.2.0/venv.tmp-42-1');
    assert.equal(plan.python, '/gs/server/0.2.0/venv/bin/python');
    assert.deepEqual(plan.steps.map((s) => [s.command, ...s.args]), [
      ['/usr/bin/python3.12', '-m', 'venv', '/gs/server/0.2.0/venv.tmp-42-1'],
      ['/gs/server/0.2.0/venv.tmp-42-1/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check',
        '--no-input', '--progress-bar', 'off', input.wheel],
    ]);
    assert.deepEqual(managedCommand(plan), {
      command: '/gs/server/0.2.0/venv/bin/python', args: ['-m', 'pseudoclaude', 'lsp'], source: 'managed',
    });
  });

  it('uses Scripts\\python.exe on Windows', () => {
    const plan = installPlan({ ...input, globalStorage: 'C:\\gs', platform: 'win32' });
    assert.equal(plan.python, 'C:\\gs\\server\\0.2.0\\venv\\Scripts\\python.exe');
    assert.equal(plan.steps[1]?.command, 'C:\\gs\\server\\0.2.0\\venv.tmp-42-1\\Scripts\\python.exe');
  });

  it('removes other versions and interrupted builds, and picks the bundled wheel', () => {
    assert.deepEqual(staleVersions(['0.1.0', '0.2.0', '0.1.5'], '0.2.0'), ['0.1.0', '0.1.5']);
    assert.deepEqual(leftovers(['venv', 'venv.tmp-1-1', 'venv.tmp-9-3']), ['venv.tmp-1-1', 'venv.tmp-9-3']);
    assert.equal(pickWheel(['README', 'pseudoclaude_lsp-0.2.0-py3-none-any.whl']), 'pseudoclaude_lsp-0.2.0-py3-none-any.whl');
    assert.equal(pickWheel(['other-1.0-py3-none-any.whl']), undefined);
  });

  it('shows pip\'s current step', () => {
    assert.equal(pipStep('Processing /ext/bundled/pseudoclaude_lsp-0.2.0-py3-none-any.whl'), 'Processing pseudoclaude_lsp 0.2.0');
    assert.equal(pipStep('Collecting pygls>=2.0 (from pseudoclaude-lsp==0.2.0)'), 'Collecting pygls>=2.0');
    assert.equal(pipStep('  Downloading msgspec-0.19.0-cp312-cp312-manylinux.whl (213 kB)'), 'Downloading msgspec 0.19.0');
    assert.equal(pipStep('Downloading https://files.example/pyyaml-6.0.2.tar.gz (130 kB)'), 'Downloading pyyaml 6.0.2');
    assert.equal(pipStep('Installing collected packages: attrs, pygls'), 'Installing attrs, pygls');
    assert.equal(pipStep('Requirement already satisfied: pip'), undefined);
  });

  it('reads installStrategy: managed unless set to environment', () => {
    assert.equal(installStrategy(() => undefined), 'managed');
    assert.equal(installStrategy(() => ({ globalValue: 'environment' })), 'environment');
    assert.equal(installStrategy(() => ({ defaultValue: 'managed', globalValue: 'bogus' })), 'managed');
  });
});

describe('install failures', () => {
  it('the venv module missing (Debian/Ubuntu)', () => {
    const f = classifyFailure({
      step: 'venv', exitCode: 1, pythonVersion: '3.12.3',
      output: 'The virtual environment was not created successfully because ensurepip is not\navailable.  On Debian/Ubuntu systems, you need to install the python3-venv\npackage',
    });
    assert.equal(f.kind, 'no-venv');
    assert.match(f.message, /sudo apt install python3-venv or python3\.12-venv/);
  });

  it('no network to the package index: pip\'s own error', () => {
    const output = [
      'Processing /ext/bundled/pseudoclaude_lsp-0.2.0-py3-none-any.whl',
      "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(... [Errno -3] Temporary failure in name resolution)': /simple/pygls/",
      'ERROR: Could not find a version that satisfies the requirement pygls>=2 (from pseudoclaude-lsp) (from versions: none)',
      'ERROR: No matching distribution found for pygls>=2',
    ].join('\n');
    const f = classifyFailure({ step: 'pip', exitCode: 1, output });
    assert.equal(f.kind, 'network');
    assert.match(f.message, /package index/);
    assert.match(f.message, /pygls>=2 first/);
    assert.match(f.message, /then Retry/);
    const named = classifyFailure({ step: 'pip', exitCode: 1, output: `Looking in indexes: http://127.0.0.1:9/simple\n${output}` });
    assert.match(named.message, /from the package index http:\/\/127\.0\.0\.1:9\/simple\./);
    assert.match(f.message, /PIP_INDEX_URL/);
  });

  it('a full disk, from pip or from a file operation', () => {
    assert.equal(classifyFailure({ step: 'pip', exitCode: 1, output: "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device" }).kind, 'disk-full');
    const f = classifyFailure({ step: 'files', errno: 'ENOSPC', error: "ENOSPC: no space left on device, mkdir '/gs/server'" });
    assert.equal(f.kind, 'disk-full');
    assert.match(f.message, /disk is full/);
  });

  it('anything else: the command, its exit and pip\'s error', () => {
    const f = classifyFailure({ step: 'pip', command: 'python -m pip install', exitCode: 2, output: 'x\nERROR: boom' });
    assert.equal(f.kind, 'other');
    assert.equal(f.message, 'python -m pip install failed (exit 2): ERROR: boom');
    assert.equal(pipError('a\nb\nc\nd'), 'b c d');
  });
});

describe('server status', () => {
  it('asks the command in use for its version', () => {
    assert.deepEqual(versionCommand({ command: '/v/bin/python', args: ['-m', 'pseudoclaude', 'lsp'], source: 'managed' }), {
      command: '/v/bin/python', args: ['-m', 'pseudoclaude', '--version'],
    });
    assert.deepEqual(versionCommand({ command: '/usr/bin/pseudoclaude', args: ['lsp'], source: 'PATH' }), {
      command: '/usr/bin/pseudoclaude', args: ['--version'],
    });
    assert.equal(versionCommand({ command: 'ssh', args: ['box', 'serve'], source: 'pseudoclaude.server.command' }), undefined);
    assert.equal(parseServerVersion('pseudoclaude 0.2.0\n'), '0.2.0');
    assert.equal(shebangInterpreter('#!/home/u/.venv/bin/python3'), '/home/u/.venv/bin/python3');
    assert.equal(shebangInterpreter('#!/usr/bin/env python3'), 'python3');
    assert.equal(shebangInterpreter('MZ...'), undefined);
  });

  it('says what runs, where it came from, the interpreter and the venv', () => {
    const { title, detail } = statusText(
      {
        command: { command: '/gs/server/0.2.0/venv/bin/python', args: ['-m', 'pseudoclaude', 'lsp'], source: 'managed' },
        version: '0.2.0', interpreter: '/gs/server/0.2.0/venv/bin/python', venv: '/gs/server/0.2.0/venv', running: true,
      },
      describeCommand,
    );
    assert.equal(title, 'PseudoClaude server 0.2.0 is running');
    assert.deepEqual(detail.split('\n'), [
      'Version: 0.2.0',
      'Command: /gs/server/0.2.0/venv/bin/python -m pseudoclaude lsp',
      "From: the extension's own installation (a private virtual environment)",
      'Virtual environment: /gs/server/0.2.0/venv',
    ]);
    const down = statusText({ command: { command: 'pseudoclaude', args: ['lsp'], source: 'default' }, running: false, error: 'spawn pseudoclaude ENOENT' }, describeCommand);
    assert.equal(down.title, 'PseudoClaude server is not running');
    assert.match(down.detail, /Version: unknown/);
    assert.match(down.detail, /Last error: spawn pseudoclaude ENOENT/);
    assert.match(down.detail, /From: the default command/);
    const held = statusText(
      { command: { command: 'pseudoclaude', args: ['lsp'], source: 'PATH' }, running: true, ignored: ["baseUrl: http://127.0.0.1:9 (waits for your approval of this folder's .PseudoClaude/config.yaml)"] },
      describeCommand,
    );
    assert.match(held.detail, /\nNot applied: baseUrl: http:\/\/127\.0\.0\.1:9 \(waits for your approval/);
    const boxed = statusText(
      { command: { command: 'pseudoclaude', args: ['lsp'], source: 'PATH' }, running: true,
        sandbox: ['off (bubblewrap (bwrap) is not installed; commands run unsandboxed (sandbox.enabled: auto))'] },
      describeCommand,
    );
    assert.match(boxed.detail, /\nCommand sandbox: off \(bubblewrap \(bwrap\) is not installed; commands run unsandboxed/);
  });
});
