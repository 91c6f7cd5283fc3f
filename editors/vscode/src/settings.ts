/**
 * Settings (SPEC §7, §8b): which `pseudoclaude.*` keys go to the server, and how the server
 * process is started. Pure: VS Code's configuration is reached through an injected `inspect`.
 */

/**
 * The server's keys, as contributed under `pseudoclaude.*` (generated from the server's table
 * by `make protocol`, as package.json's settings are).
 */
import { SERVER_SETTING_KEYS } from './protocol';

export { SERVER_SETTING_KEYS };

/** The editor's own keys: how to start the server. Never sent to it. */
export const CLIENT_SETTING_KEYS = ['server.command', 'server.pythonPath', 'server.installStrategy'] as const;

export type InstallStrategy = 'managed' | 'environment';

/** `pseudoclaude.server.installStrategy`: `managed` unless the user chose `environment`. */
export function installStrategy(inspect: Inspect): InstallStrategy {
  return explicitValue(inspect('server.installStrategy')) === 'environment' ? 'environment' : 'managed';
}

export const DEFAULT_SERVER_COMMAND: readonly string[] = ['pseudoclaude', 'lsp'];

/** What `WorkspaceConfiguration.inspect` reports for one key (only the fields used here). */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type Inspect = (key: string) => Inspected | undefined;

export class SettingsError extends Error {}

/** The value the user set (folder over workspace over user settings), or undefined. */
export function explicitValue(inspected: Inspected | undefined): unknown {
  if (!inspected) {
    return undefined;
  }
  for (const v of [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue]) {
    if (v !== undefined && v !== null && v !== '') {
      return v;
    }
  }
  return undefined;
}

/**
 * The settings object for `initializationOptions` and `workspace/configuration`: only the keys
 * the user set, nested by their dots (`approvals.runCommand` → `{approvals: {runCommand}}`).
 * Defaults are left out so that `.PseudoClaude/config.yaml` files still count (the server's
 * precedence puts LSP settings above them).
 */
export function collectServerSettings(inspect: Inspect): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = explicitValue(inspect(key));
    if (value === undefined) {
      continue;
    }
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next === 'object' && next !== null) {
        node = next as Record<string, unknown>;
      } else {
        const fresh: Record<string, unknown> = {};
        node[part] = fresh;
        node = fresh;
      }
    }
    node[parts[parts.length - 1] as string] = value;
  }
  return out;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /**
   * Where it came from: a setting; `default` (`pseudoclaude lsp`, not yet looked up); `PATH`
   * (`pseudoclaude` found there); `managed` (the extension's own virtual environment).
   */
  source: 'pseudoclaude.server.command' | 'pseudoclaude.server.pythonPath' | 'default' | 'PATH' | 'managed';
}

export interface Variables {
  workspaceFolder?: string;
  userHome: string;
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` in one command word. */
export function substitute(word: string, vars: Variables): string {
  let s = word.replace(/\$\{userHome\}/g, vars.userHome);
  if (vars.workspaceFolder !== undefined) {
    s = s.replace(/\$\{workspaceFolder\}/g, vars.workspaceFolder);
  }
  if (s === '~' || s.startsWith('~/')) {
    s = vars.userHome + s.slice(1);
  }
  return s;
}

/**
 * How to start the server: `pseudoclaude.server.command` when set; else
 * `<pseudoclaude.server.pythonPath> -m pseudoclaude lsp`; else `pseudoclaude lsp`.
 */
export function resolveServerCommand(inspect: Inspect, vars: Variables): ServerCommand {
  const command = explicitValue(inspect('server.command'));
  if (command !== undefined) {
    if (
      !Array.isArray(command) ||
      command.length === 0 ||
      !command.every((w): w is string => typeof w === 'string' && w.length > 0)
    ) {
      throw new SettingsError(
        'pseudoclaude.server.command must be a non-empty array of strings, ' +
          'for example ["pseudoclaude", "lsp"]',
      );
    }
    const words = command.map((w) => substitute(w, vars));
    return { command: words[0] as string, args: words.slice(1), source: 'pseudoclaude.server.command' };
  }
  const python = explicitValue(inspect('server.pythonPath'));
  if (python !== undefined) {
    if (typeof python !== 'string' || python.trim() === '') {
      throw new SettingsError('pseudoclaude.server.pythonPath must be the path of a Python interpreter');
    }
    return {
      command: substitute(python.trim(), vars),
      args: ['-m', 'pseudoclaude', 'lsp'],
      source: 'pseudoclaude.server.pythonPath',
    };
  }
  return {
    command: DEFAULT_SERVER_COMMAND[0] as string,
    args: DEFAULT_SERVER_COMMAND.slice(1),
    source: 'default',
  };
}

/** The command line as one string, for messages. */
export function describeCommand(c: ServerCommand): string {
  return [c.command, ...c.args].map((w) => (/\s/.test(w) ? JSON.stringify(w) : w)).join(' ');
}

/** Did a configuration change touch a key that needs a server restart? */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return CLIENT_SETTING_KEYS.some((k) => affects(`pseudoclaude.${k}`));
}
