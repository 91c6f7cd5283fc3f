/**
 * Which server to start, and the managed install (src/install.ts): the settings, else
 * `pseudoclaude` on PATH, else (strategy `managed`) the wheel inside the extension installed
 * into `<globalStorage>/server/<version>/venv` with a progress notification, one notification
 * with Retry / Show Log / Set Python Path when that fails. Processes and files live here.
 */
import { execFile, spawn } from 'node:child_process';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../errors';
import {
  FAILURE_ACTIONS,
  NO_WHEEL,
  PROBE_SCRIPT,
  classifyFailure,
  failureNotification,
  findOnPath,
  findPython,
  installPlan,
  leftovers,
  managedCommand,
  noPythonMessage,
  parseProbe,
  parseServerVersion,
  pickWheel,
  pipStep,
  pythonCandidates,
  shebangInterpreter,
  staleVersions,
  versionCommand,
  type Failure,
  type InstallPlan,
  type ProbeResult,
  type PythonCandidate,
  type StepFailure,
} from '../install';
import { installStrategy, resolveServerCommand, type Inspect, type ServerCommand } from '../settings';

/** A failed managed install, already reported to the user (no second notification). */
export class InstallFailed extends Error {}

export interface ResolvedServer {
  command: ServerCommand;
  interpreter?: string;
  venv?: string;
}

function inspector(scope?: vscode.Uri): Inspect {
  const config = vscode.workspace.getConfiguration('pseudoclaude', scope);
  return (key) => config.inspect(key);
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const st = await fs.stat(file);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      await fs.access(file, fsConstants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; error?: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve({ code: null, stdout: '', error: 'not found' });
      } else if (err) {
        const text = `${stderr || stdout || err.message}`.trim().split(/\r?\n/).pop() ?? err.message;
        resolve({ code: typeof err.code === 'number' ? err.code : null, stdout, error: text });
      } else {
        resolve({ code: 0, stdout });
      }
    });
  });
}

export class ServerProvider {
  private counter = 0;
  last: ResolvedServer | undefined;
  /**
   * The last failed install, until Retry or a restart (settings change, Restart Server): every
   * request would start the server again, and each start would otherwise install again and
   * show another notification.
   */
  private failed: InstallFailed | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    /** Called by the failure notification's Retry. */
    private readonly retry: () => void,
  ) {}

  private get extensionVersion(): string {
    return String((this.context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0');
  }

  private plan(basePython = 'python3', wheel = ''): InstallPlan {
    return installPlan({
      globalStorage: this.context.globalStorageUri.fsPath,
      extensionVersion: this.extensionVersion,
      wheel,
      basePython,
      platform: process.platform,
      suffix: `${process.pid}-${++this.counter}`,
    });
  }

  /**
   * The server command for `folder`. With `install` false (Show Server Status) the managed
   * command is returned whether or not it is installed yet.
   */
  async resolve(folder: vscode.WorkspaceFolder | undefined, install = true): Promise<ResolvedServer> {
    const inspect = inspector(folder?.uri);
    const command = resolveServerCommand(inspect, { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir() });
    let resolved: ResolvedServer;
    if (command.source !== 'default') {
      const interpreter = command.source === 'pseudoclaude.server.pythonPath' ? command.command : undefined;
      resolved = interpreter ? { command, interpreter } : { command };
    } else {
      const found = await findOnPath('pseudoclaude', process.env, process.platform, isExecutableFile);
      if (found) {
        resolved = { command: { command: found, args: ['lsp'], source: 'PATH' } };
      } else if (installStrategy(inspect) === 'environment') {
        resolved = { command };
      } else {
        const plan = this.plan();
        resolved = { command: managedCommand(plan), interpreter: plan.python, venv: plan.venv };
        if (install && !(await isExecutableFile(plan.python))) {
          if (this.failed) {
            throw this.failed;
          }
          await this.installWithProgress(folder);
        }
      }
    }
    this.last = resolved;
    return resolved;
  }

  private async installWithProgress(folder: vscode.WorkspaceFolder | undefined): Promise<void> {
    let failure: Failure | undefined;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'PseudoClaude: installing the server', cancellable: false },
      async (progress) => {
        failure = await this.install(folder, (message) => progress.report({ message }));
      },
    );
    if (failure) {
      this.log.error(`managed install failed: ${failure.message}`);
      this.failed = new InstallFailed(failure.message);
      void this.notifyFailure(failure);
      throw this.failed;
    }
  }

  /** The next start installs again (Retry, Restart Server, a changed setting). */
  forgetFailure(): void {
    this.failed = undefined;
  }

  private async notifyFailure(f: Failure): Promise<void> {
    const choice = await vscode.window.showErrorMessage(failureNotification(f), ...FAILURE_ACTIONS);
    if (choice === 'Retry') {
      this.forgetFailure();
      this.retry();
    } else if (choice === 'Show Log') {
      this.log.show();
    } else if (choice === 'Set Python Path') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'pseudoclaude.server.pythonPath');
    }
  }

  /** The Python extension's selected interpreter, if it is installed and has one. */
  private async selectedInterpreter(folder: vscode.WorkspaceFolder | undefined): Promise<{ path: string; isDirectory: boolean } | undefined> {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (!ext) {
      return undefined;
    }
    try {
      const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000));
      const api = (await Promise.race([ext.isActive ? Promise.resolve(ext.exports) : ext.activate(), timeout])) as
        | { environments?: { getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path?: string } | undefined } }
        | undefined;
      const env = api?.environments?.getActiveEnvironmentPath?.(folder?.uri);
      if (!env?.path) {
        return undefined;
      }
      const st = await fs.stat(env.path).catch(() => undefined);
      return { path: env.path, isDirectory: st?.isDirectory() ?? false };
    } catch (e) {
      this.log.warn(`the Python extension's interpreter: ${errorMessage(e)}`);
      return undefined;
    }
  }

  private async probe(c: PythonCandidate): Promise<ProbeResult> {
    const r = await run(c.command, [...c.args, '-c', PROBE_SCRIPT], 15_000);
    if (r.error !== undefined) {
      return { ok: false, error: r.error };
    }
    return parseProbe(r.stdout);
  }

  /** Runs one step, its output line by line to the log and to `onLine`. */
  private step(command: string, args: string[], onLine: (line: string) => void): Promise<{ code: number | null; output: string; errno?: string; error?: string }> {
    this.log.info(`$ ${[command, ...args].join(' ')}`);
    return new Promise((resolve) => {
      let output = '';
      let pending = '';
      const child = spawn(command, args, {
        env: { ...process.env, PYTHONUNBUFFERED: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
        windowsHide: true,
      });
      const take = (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        output += text;
        pending += text;
        const lines = pending.split(/\r?\n/);
        pending = lines.pop() ?? '';
        for (const line of lines) {
          this.log.info(line);
          onLine(line);
        }
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.on('error', (e: NodeJS.ErrnoException) => resolve({ code: null, output, errno: e.code, error: e.message }));
      child.on('close', (code) => {
        if (pending) {
          this.log.info(pending);
          onLine(pending);
        }
        resolve({ code, output });
      });
    });
  }

  /** The install; undefined when it succeeded, else what went wrong. Leaves nothing half-made. */
  private async install(folder: vscode.WorkspaceFolder | undefined, report: (m: string) => void): Promise<Failure | undefined> {
    const bundled = path.join(this.context.extensionUri.fsPath, 'bundled');
    const wheelName = pickWheel(await fs.readdir(bundled).catch(() => []));
    if (!wheelName) {
      return NO_WHEEL;
    }
    report('Looking for Python 3.11 or newer');
    const search = await findPython(
      pythonCandidates(process.platform, await this.selectedInterpreter(folder)),
      (c) => this.probe(c),
    );
    for (const t of search.tried) {
      this.log.info(`python: ${t.candidate.origin}: ${t.result.ok ? `${t.result.version} (${t.result.executable})` : t.result.error}`);
    }
    if (!search.ok) {
      return { kind: 'no-python', message: noPythonMessage(search.tried) };
    }
    const python = search.python;
    const plan = this.plan(python.executable, path.join(bundled, wheelName));
    this.log.info(`installing ${wheelName} with Python ${python.version} (${python.executable}) into ${plan.venv}`);
    const files = (e: unknown): Failure =>
      classifyFailure({ step: 'files', errno: (e as NodeJS.ErrnoException).code, error: errorMessage(e) });
    try {
      await fs.mkdir(plan.versionDir, { recursive: true });
      for (const old of leftovers(await fs.readdir(plan.versionDir))) {
        await fs.rm(path.join(plan.versionDir, old), { recursive: true, force: true }).catch(() => undefined);
      }
    } catch (e) {
      return files(e);
    }
    const kinds: StepFailure['step'][] = ['venv', 'pip'];
    for (const [i, step] of plan.steps.entries()) {
      report(step.title);
      const r = await this.step(step.command, step.args, (line) => {
        const s = pipStep(line);
        if (s) {
          report(s);
        }
      });
      if (r.code !== 0) {
        await fs.rm(plan.staging, { recursive: true, force: true }).catch(() => undefined);
        await fs.rmdir(plan.versionDir).catch(() => undefined); // only when empty
        const f: StepFailure = {
          step: kinds[i] ?? 'pip',
          command: [path.basename(step.command), ...step.args.slice(0, 3)].join(' '),
          exitCode: r.code,
          output: r.output,
          pythonVersion: python.version,
        };
        if (r.errno !== undefined) f.errno = r.errno;
        if (r.error !== undefined) f.error = r.error;
        return classifyFailure(f);
      }
    }
    try {
      await fs.rename(plan.staging, plan.venv);
    } catch (e) {
      await fs.rm(plan.staging, { recursive: true, force: true }).catch(() => undefined);
      if (!(await isExecutableFile(plan.python))) {
        return files(e);
      }
      // Another window finished first: use its environment.
    }
    this.log.info(`installed the server into ${plan.venv}`);
    for (const old of staleVersions(await fs.readdir(plan.root).catch(() => []), this.extensionVersion)) {
      this.log.info(`removing the server of extension version ${old}`);
      await fs.rm(path.join(plan.root, old), { recursive: true, force: true }).catch(() => undefined);
    }
    return undefined;
  }

  /** `--version` of the command in use (undefined when it cannot be asked). */
  async askVersion(c: ServerCommand): Promise<string | undefined> {
    const v = versionCommand(c);
    if (!v) {
      return undefined;
    }
    const r = await run(v.command, v.args, 15_000);
    return r.error === undefined ? parseServerVersion(r.stdout) : undefined;
  }

  /** The interpreter behind a resolved command, when it can be told. */
  async interpreterOf(r: ResolvedServer): Promise<string | undefined> {
    if (r.interpreter) {
      return r.interpreter;
    }
    if (r.command.source === 'PATH') {
      const head = await fs.readFile(r.command.command, 'utf8').then((t) => t.slice(0, 300).split('\n')[0] ?? '').catch(() => '');
      return shebangInterpreter(head);
    }
    return /python[\d.]*(\.exe)?$/i.test(path.basename(r.command.command)) ? r.command.command : undefined;
  }
}
