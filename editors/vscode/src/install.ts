/**
 * The managed server install: when no server is configured and none is on `PATH`, the wheel
 * that comes inside the extension is installed into a private virtual environment under the
 * extension's global storage (`<globalStorage>/server/<extension version>/venv`), built in a
 * temporary sibling folder and renamed into place. Pure: finding Python, the plan, pip's steps,
 * the failure messages and the status text; processes and files are the adapter's
 * (src/vscode/server.ts).
 */
import * as path from 'node:path';
import type { ServerCommand } from './settings';

export const MIN_PYTHON: readonly [number, number] = [3, 11];
export const MIN_PYTHON_TEXT = `${MIN_PYTHON[0]}.${MIN_PYTHON[1]}`;
export const WHEEL_PATTERN = /^pseudoclaude_lsp-([^-]+)-py3-none-any\.whl$/;

// ---------------------------------------------------------------------------------------------
// Finding a Python

/** One way to run a Python: a command and the words before the script's own arguments. */
export interface PythonCandidate {
  command: string;
  args: string[];
  /** Where it came from, for messages: "the Python extension's interpreter", "python3 on PATH". */
  origin: string;
}

/** What running a candidate with {@link PROBE_SCRIPT} told. */
export type ProbeResult =
  | { ok: true; version: string; executable: string }
  | { ok: false; error: string };

/** Prints the version (`3.12.4`) and `sys.executable`, one a line. */
export const PROBE_SCRIPT = "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";

/** The interpreter inside a virtual environment (or environment folder). */
export function venvPython(venv: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? path.win32.join(venv, 'Scripts', 'python.exe') : path.posix.join(venv, 'bin', 'python');
}

/**
 * Where to look, in order: the Python extension's selected interpreter (a path to an
 * executable, or to an environment's folder), then `python3` and `python` on PATH; on Windows
 * the `py -3` launcher first, then `python` and `python3`.
 */
export function pythonCandidates(platform: NodeJS.Platform, selected?: { path: string; isDirectory: boolean }): PythonCandidate[] {
  const out: PythonCandidate[] = [];
  if (selected && selected.path) {
    out.push({
      command: selected.isDirectory ? venvPython(selected.path, platform) : selected.path,
      args: [],
      origin: "the Python extension's selected interpreter",
    });
  }
  if (platform === 'win32') {
    out.push({ command: 'py', args: ['-3'], origin: 'py -3 (the Python launcher)' });
    out.push({ command: 'python', args: [], origin: 'python on PATH' });
    out.push({ command: 'python3', args: [], origin: 'python3 on PATH' });
  } else {
    out.push({ command: 'python3', args: [], origin: 'python3 on PATH' });
    out.push({ command: 'python', args: [], origin: 'python on PATH' });
  }
  return out;
}

/** `3.12.4` (or `Python 3.12.4`, `3.13.0rc1`) as numbers; undefined when it is not a version. */
export function parsePythonVersion(text: string): [number, number, number] | undefined {
  const m = /(?:^|\s|Python\s+)(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!m) {
    return undefined;
  }
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

export function isSupportedPython(version: string): boolean {
  const v = parsePythonVersion(version);
  return v !== undefined && (v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]));
}

/** The probe's output: the version line and the executable line. */
export function parseProbe(stdout: string): ProbeResult {
  const [version = '', executable = ''] = stdout.trim().split(/\r?\n/).map((l) => l.trim());
  if (!parsePythonVersion(version)) {
    return { ok: false, error: `unexpected output ${JSON.stringify(stdout.trim().slice(0, 80))}` };
  }
  return { ok: true, version, executable };
}

export interface FoundPython {
  candidate: PythonCandidate;
  version: string;
  /** `sys.executable`: the real interpreter, used to create the venv. */
  executable: string;
}

export interface Tried {
  candidate: PythonCandidate;
  result: ProbeResult;
}

export type PythonSearch = { ok: true; python: FoundPython; tried: Tried[] } | { ok: false; tried: Tried[] };

/** The first candidate that runs and is Python >= 3.11. */
export async function findPython(
  candidates: readonly PythonCandidate[],
  probe: (c: PythonCandidate) => Promise<ProbeResult>,
): Promise<PythonSearch> {
  const tried: Tried[] = [];
  for (const candidate of candidates) {
    const result = await probe(candidate);
    tried.push({ candidate, result });
    if (result.ok && isSupportedPython(result.version)) {
      return {
        ok: true,
        python: { candidate, version: result.version, executable: result.executable || candidate.command },
        tried,
      };
    }
  }
  return { ok: false, tried };
}

/** "no Python >= 3.11 found: tried python3 on PATH (3.10.12), python on PATH (not found)". */
export function noPythonMessage(tried: readonly Tried[]): string {
  const parts = tried.map(({ candidate, result }) => {
    const what = candidate.args.length ? [candidate.command, ...candidate.args].join(' ') : candidate.command;
    const label = candidate.origin.startsWith(what) ? candidate.origin : `${candidate.origin} (${what})`;
    return `${label}: ${result.ok ? `Python ${result.version}` : result.error}`;
  });
  return (
    `no Python >= ${MIN_PYTHON_TEXT} found to install the server with. Tried ${parts.join('; ')}. ` +
    `Install Python ${MIN_PYTHON_TEXT} or newer, or set pseudoclaude.server.pythonPath.`
  );
}

/**
 * `name` on `PATH`: the first folder holding it as a file (on Windows with one of `PATHEXT`'s
 * extensions), or undefined.
 */
export async function findOnPath(
  name: string,
  env: { PATH?: string; Path?: string; PATHEXT?: string },
  platform: NodeJS.Platform,
  isExecutableFile: (file: string) => Promise<boolean>,
): Promise<string | undefined> {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter((d) => d !== '');
  const exts = platform === 'win32' ? (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e !== '') : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const file = p.join(dir, name + ext);
      if (await isExecutableFile(file)) {
        return file;
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The plan

export interface InstallPlan {
  /** `<globalStorage>/server`: one folder per extension version. */
  root: string;
  /** `<root>/<extension version>`. */
  versionDir: string;
  /** `<versionDir>/venv`: the finished environment (present only when complete). */
  venv: string;
  /** The sibling the environment is built in, renamed to `venv` when complete. */
  staging: string;
  /** The interpreter of the finished environment: the server runs as `<it> -m pseudoclaude lsp`. */
  python: string;
  /** The commands, in order (the second runs the staging environment's own Python). */
  steps: { title: string; command: string; args: string[] }[];
}

export interface PlanInput {
  globalStorage: string;
  extensionVersion: string;
  wheel: string;
  /** The interpreter that creates the environment. */
  basePython: string;
  platform: NodeJS.Platform;
  /** Makes the staging folder's name unique (the process id and a counter will do). */
  suffix: string;
}

export function installPlan(input: PlanInput): InstallPlan {
  const p = input.platform === 'win32' ? path.win32 : path.posix;
  const root = p.join(input.globalStorage, 'server');
  const versionDir = p.join(root, input.extensionVersion);
  const venv = p.join(versionDir, 'venv');
  const staging = p.join(versionDir, `venv.tmp-${input.suffix}`);
  return {
    root,
    versionDir,
    venv,
    staging,
    python: venvPython(venv, input.platform),
    steps: [
      { title: 'Creating a private virtual environment', command: input.basePython, args: ['-m', 'venv', staging] },
      {
        title: 'Installing pseudoclaude-lsp and its dependencies with pip',
        command: venvPython(staging, input.platform),
        args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', input.wheel],
      },
    ],
  };
}

/** The server command of a finished managed environment. */
export function managedCommand(plan: Pick<InstallPlan, 'python'>): ServerCommand {
  return { command: plan.python, args: ['-m', 'pseudoclaude', 'lsp'], source: 'managed' };
}

/** Entries of `<root>` to delete after a successful install: every other version's folder. */
export function staleVersions(entries: readonly string[], currentVersion: string): string[] {
  return entries.filter((e) => e !== currentVersion);
}

/** Entries of `<versionDir>` left by an interrupted install (staging folders). */
export function leftovers(entries: readonly string[]): string[] {
  return entries.filter((e) => e.startsWith('venv.tmp-'));
}

/** The bundled wheel among the files of the extension's `bundled/` folder. */
export function pickWheel(files: readonly string[]): string | undefined {
  return files.filter((f) => WHEEL_PATTERN.test(f)).sort().pop();
}

/** A short progress message from one line of pip's output, or undefined for the others. */
export function pipStep(line: string): string | undefined {
  const l = line.trim();
  const m = /^(Processing|Collecting|Downloading|Using cached|Building wheel for|Installing collected packages:|Successfully installed)\s+(.*)$/.exec(l);
  if (!m) {
    return undefined;
  }
  const [, verb, rest = ''] = m;
  const file = rest.replace(/\s*\(.*\)\s*$/, '').replace(/^.*[\\/]/, '');
  // A wheel's or source archive's file name as `name version`: the notification has one line.
  const dist = /^([A-Za-z0-9_.]+?)-(\d[^-]*?)(?:-[^/]*\.whl|\.tar\.gz|\.zip)$/.exec(file);
  const what = dist ? `${dist[1]} ${dist[2]}` : file;
  const short = what.length > 60 ? `${what.slice(0, 57)}...` : what;
  return `${verb === 'Installing collected packages:' ? 'Installing' : verb} ${short}`;
}

// ---------------------------------------------------------------------------------------------
// Failures

export type FailureKind = 'no-python' | 'no-venv' | 'network' | 'disk-full' | 'no-wheel' | 'other';

export interface Failure {
  kind: FailureKind;
  message: string;
}

/** What failed: a step's exit and output, or a file operation's error code. */
export interface StepFailure {
  step: 'venv' | 'pip' | 'files';
  /** The command line, for the message. */
  command?: string;
  exitCode?: number | null;
  /** The step's whole output (stdout and stderr). */
  output?: string;
  /** A Node error's `code` (`ENOSPC`, `ENOENT`, ...). */
  errno?: string;
  /** A Node error's message. */
  error?: string;
  /** The base interpreter's version (`3.12.4`), for the python3.X-venv hint. */
  pythonVersion?: string;
}

const NETWORK = [
  /Could not find a version that satisfies the requirement/i,
  /No matching distribution found/i,
  /NewConnectionError/,
  /Failed to establish a new connection/i,
  /Temporary failure in name resolution/i,
  /Name or service not known/i,
  /nodename nor servname/i,
  /getaddrinfo failed/i,
  /Network is unreachable/i,
  /Connection refused/i,
  /ConnectTimeoutError/,
  /ReadTimeoutError/,
  /ProxyError/,
  /SSLError/,
  /CERTIFICATE_VERIFY_FAILED/,
];

/** pip's `ERROR: ...` lines (its own summary of what went wrong), else the last lines. */
export function pipError(output: string): string {
  const lines = output.split(/\r?\n/).map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const errors = lines.filter((l) => /^ERROR:/.test(l.trim()));
  const picked = errors.length ? errors.slice(-2) : lines.slice(-3);
  return picked.map((l) => l.trim()).join(' ') || '(no output)';
}

export function classifyFailure(f: StepFailure): Failure {
  const output = f.output ?? '';
  const text = `${output}\n${f.error ?? ''}`;
  if (f.errno === 'ENOSPC' || /No space left on device|ENOSPC|Errno 28\b/.test(text)) {
    return {
      kind: 'disk-full',
      message:
        'the disk is full: the server could not be installed (it needs about 50 MB in the ' +
        "extension's storage folder). Free some space and try again.",
    };
  }
  if (f.step === 'venv' && /ensurepip is not available|No module named venv|No module named ensurepip|python3-venv/.test(text)) {
    const v = parsePythonVersion(f.pythonVersion ?? '');
    const versioned = v ? ` or python${v[0]}.${v[1]}-venv` : '';
    return {
      kind: 'no-venv',
      message:
        `this Python cannot create virtual environments: its venv module is missing. ` +
        `On Debian and Ubuntu: sudo apt install python3-venv${versioned}; then try again.`,
    };
  }
  if (f.step === 'pip' && NETWORK.some((re) => re.test(output))) {
    const index = /Looking in indexes:\s*(\S+)/.exec(output)?.[1]?.replace(/,$/, '');
    const requirement = /No matching distribution found for (\S+)/.exec(output)?.[1];
    const what = requirement ? `the server's dependencies (${requirement} first)` : "the server's dependencies";
    const where = index ? `the package index ${index}` : 'the package index';
    return {
      kind: 'network',
      message:
        `pip could not get ${what} from ${where}. ` +
        "Check the network connection, or pip's index and proxy settings (pip.conf, PIP_INDEX_URL, HTTPS_PROXY), " +
        "then Retry. Show Log has pip's output.",
    };
  }
  if (f.step === 'files') {
    return { kind: 'other', message: `the server could not be installed: ${f.error ?? f.errno ?? 'a file operation failed'}.` };
  }
  const what = f.command ?? (f.step === 'venv' ? 'python -m venv' : 'pip install');
  const detail = f.error ?? pipError(output);
  const exit = f.exitCode !== undefined && f.exitCode !== null ? ` (exit ${f.exitCode})` : '';
  return { kind: 'other', message: `${what} failed${exit}: ${detail}` };
}

export const NO_WHEEL: Failure = {
  kind: 'no-wheel',
  message:
    'this copy of the extension carries no server to install. Install the pseudoclaude-lsp ' +
    'package (pip install pseudoclaude-lsp), or set pseudoclaude.server.pythonPath.',
};

/** The one notification of a failed install (its buttons: Retry, Show Log, Set Python Path). */
export function failureNotification(f: Failure): string {
  return `PseudoClaude: the server could not be installed: ${f.message}`;
}

export const FAILURE_ACTIONS = ['Retry', 'Show Log', 'Set Python Path'] as const;

// ---------------------------------------------------------------------------------------------
// Show Server Status

export interface ServerStatus {
  command: ServerCommand;
  /** The server's version, or why it is not known. */
  version?: string;
  /** The interpreter that runs the server, when known. */
  interpreter?: string;
  /** The managed environment's folder (managed installs only). */
  venv?: string;
  running: boolean;
  /** The last start's error, if it failed. */
  error?: string;
  /** What the folders' own settings files ask for that is not applied, and why (one line each). */
  ignored?: string[];
  /** Whether each folder's commands run in the sandbox: `on`, or `off (why)` (one line each). */
  sandbox?: string[];
}

const ORIGINS: Record<ServerCommand['source'], string> = {
  'pseudoclaude.server.command': 'the pseudoclaude.server.command setting',
  'pseudoclaude.server.pythonPath': 'the pseudoclaude.server.pythonPath setting',
  default: 'the default command (pseudoclaude lsp on PATH)',
  PATH: 'pseudoclaude found on PATH',
  managed: "the extension's own installation (a private virtual environment)",
};

export function describeOrigin(source: ServerCommand['source']): string {
  return ORIGINS[source];
}

/**
 * How to ask the command in use for its version: `<python> -m pseudoclaude --version`,
 * `pseudoclaude --version`, or a command setting ending in `lsp` with `--version` instead.
 */
export function versionCommand(c: ServerCommand): { command: string; args: string[] } | undefined {
  const args = c.args;
  if (args[args.length - 1] !== 'lsp') {
    return undefined;
  }
  return { command: c.command, args: [...args.slice(0, -1), '--version'] };
}

/** `pseudoclaude 0.1.0` → `0.1.0`. */
export function parseServerVersion(stdout: string): string | undefined {
  const m = /(\d+\.\d+[^\s]*)/.exec(stdout);
  return m?.[1];
}

/** The interpreter of a script's `#!` line (`#!/usr/bin/env python3` → `python3`). */
export function shebangInterpreter(firstLine: string): string | undefined {
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(firstLine);
  if (!m) {
    return undefined;
  }
  return path.posix.basename(m[1] ?? '') === 'env' && m[2] ? m[2] : m[1];
}

/** The status's title and detail lines (a modal's message and detail). */
export function statusText(s: ServerStatus, describe: (c: ServerCommand) => string): { title: string; detail: string } {
  const title = !s.running
    ? 'PseudoClaude server is not running'
    : s.version
      ? `PseudoClaude server ${s.version} is running`
      : 'PseudoClaude server is running';
  const lines = [
    `Version: ${s.version ?? 'unknown'}`,
    `Command: ${describe(s.command)}`,
    `From: ${describeOrigin(s.command.source)}`,
  ];
  // The managed command runs the interpreter itself: its path once is enough.
  if (s.interpreter !== s.command.command) {
    lines.push(`Interpreter: ${s.interpreter ?? 'unknown'}`);
  }
  if (s.venv) {
    lines.push(`Virtual environment: ${s.venv}`);
  }
  if (s.error) {
    lines.push(`Last error: ${s.error}`);
  }
  for (const line of s.sandbox ?? []) {
    lines.push(`Command sandbox: ${line}`);
  }
  for (const line of s.ignored ?? []) {
    lines.push(`Not applied: ${line}`);
  }
  return { title, detail: lines.join('\n') };
}
