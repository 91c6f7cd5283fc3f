/**
 * The language-client adapter: starts `pseudoclaude lsp` (SPEC §8b) for the window's workspace
 * folders and implements the `AgentClient` port. The only file importing
 * `vscode-languageclient`.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import {
  type CancellationToken,
  type ClientCapabilities,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  type StaticFeature,
  type ServerOptions,
  ShowMessageRequest,
  type ShowMessageRequestParams,
  State,
  WorkDoneProgress,
} from 'vscode-languageclient/node';
import { approvalAnswer, approvalPrompt, isApproval, isPlanApproval, type ModalPrompt, planAnswer, planPrompt } from '../approvals';
import { errorMessage } from '../errors';
import type { AgentClient, RequestOptions } from '../ports';
import {
  APPROVALS_CAPABILITY,
  DIAGNOSTICS_CAPABILITY,
  EXPERIMENTAL_KEY,
  Notifications,
  Requests,
  ServerRequests,
  type AgentEvent,
  type ApproveParams,
  type ApproveResult,
  type ContextUsageParams,
  type DiagnosticsParams,
  type DiagnosticsResult,
  type McpChangedParams,
  type MemoryChangedParams,
  type MemoryProposalsParams,
  type ParamsOf,
  type RequestMethod,
  type ResultOf,
  type WorkDoneProgress as Progress,
} from '../protocol';
import type { ServerStatus } from '../install';
import {
  collectServerSettings,
  describeCommand,
  type Inspect,
  type ServerCommand,
} from '../settings';
import { InstallFailed, type ServerProvider } from './server';
import { sandboxText } from '../permissions';

export interface Listeners {
  onEvent(e: AgentEvent): void;
  onContextUsage(u: ContextUsageParams): void;
  onMemoryChanged(m: MemoryChangedParams): void;
  /** `pseudoclaude/memoryProposals`: the pending memory proposals changed. */
  onMemoryProposals?(p: MemoryProposalsParams): void;
  /** `pseudoclaude/mcpChanged`: the MCP servers of a folder changed. */
  onMcpChanged?(p: McpChangedParams): void;
  /** The server is up (after start or restart). */
  onReady(): void;
  /** A `window/showMessageRequest` approval is up as a modal dialog: an id for `onApprovalAnswered`. */
  onApprovalShown?(message: string): string | undefined;
  onApprovalAnswered?(id: string, title: string | undefined): void;
  /** `pseudoclaude/approve` (SPEC §11 "Diff approvals"): asked for when this is set. */
  onApprove?(params: ApproveParams, token: CancellationToken): Promise<ApproveResult>;
  /** `pseudoclaude/diagnostics`: the diagnostics the editor shows (asked for when this is set). */
  onDiagnostics?(params: DiagnosticsParams): DiagnosticsResult;
}

/**
 * Sets `experimental.pseudoclaude.<flag>: true` for each flag: `approvals` (the server sends
 * `pseudoclaude/approve`), `diagnostics` (it asks `pseudoclaude/diagnostics`).
 */
function experimentalFeature(flags: readonly string[]): StaticFeature {
  return {
    fillClientCapabilities(capabilities: ClientCapabilities): void {
      const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
      const ours = (experimental[EXPERIMENTAL_KEY] ?? {}) as Record<string, unknown>;
      const set = Object.fromEntries(flags.map((f) => [f, true]));
      capabilities.experimental = { ...experimental, [EXPERIMENTAL_KEY]: { ...ours, ...set } };
    },
    initialize(): void {},
    getState(): FeatureState {
      return { kind: 'static' };
    },
    clear(): void {},
  };
}

function inspector(scope?: vscode.Uri): Inspect {
  const config = vscode.workspace.getConfiguration('pseudoclaude', scope);
  return (key) => config.inspect(key);
}

/** The settings object for one folder (or the window): only what the user set. */
export function serverSettings(scope?: vscode.Uri): Record<string, unknown> {
  return collectServerSettings(inspector(scope));
}

export class AgentLanguageClient implements AgentClient, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private lastStartError: string | undefined;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly listeners: Listeners,
    /** Which server to start (settings, PATH, or the managed install). */
    private readonly servers: ServerProvider,
  ) {}

  private firstFolder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
  }

  /** What Show Server Status reports: the command in use (or the one that would be). */
  async status(): Promise<ServerStatus> {
    const running = this.client?.state === State.Running;
    const resolved = this.servers.last ?? (await this.servers.resolve(this.firstFolder(), false).catch(() => undefined));
    const command: ServerCommand = resolved?.command ?? { command: 'pseudoclaude', args: ['lsp'], source: 'default' };
    const version =
      (running ? this.client?.initializeResult?.serverInfo?.version : undefined) ??
      (await this.servers.askVersion(command));
    const status: ServerStatus = { command, running };
    const interpreter = resolved ? await this.servers.interpreterOf(resolved) : undefined;
    if (version) status.version = version;
    if (interpreter) status.interpreter = interpreter;
    if (resolved?.venv) status.venv = resolved.venv;
    if (!running && this.lastStartError) status.error = this.lastStartError;
    if (running) {
      const { ignored, sandbox } = await this.folderStates();
      if (ignored.length > 0) status.ignored = ignored;
      if (sandbox.length > 0) status.sandbox = sandbox;
    }
    return status;
  }

  /**
   * What each folder's own settings file asks for that waits for an approval (or was declined),
   * and whether its commands run in the sandbox (and why not).
   */
  private async folderStates(): Promise<{ ignored: string[]; sandbox: string[] }> {
    const ignored: string[] = [];
    const sandbox: string[] = [];
    const folders = vscode.workspace.workspaceFolders ?? [];
    for (const folder of folders) {
      const context = await this.request(Requests.context, { workspace: folder.uri.toString() }).catch(() => undefined);
      const where = folders.length > 1 ? `${folder.name}: ` : '';
      for (const i of context?.ignoredSettings ?? []) {
        ignored.push(`${where}${i.key}: ${i.value} (${i.reason})`);
      }
      if (context?.sandbox) {
        sandbox.push(`${where}${sandboxText(context.sandbox)}`);
      }
    }
    return { ignored, sandbox };
  }

  /** Start the server; a failure is shown once with what to change, and remembered. */
  start(): Promise<void> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client?.state === State.Running) {
      return;
    }
    const folder = this.firstFolder();
    let command: ServerCommand;
    try {
      command = (await this.servers.resolve(folder)).command;
    } catch (e) {
      this.lastStartError = errorMessage(e);
      if (!(e instanceof InstallFailed)) {
        // A failed install has shown its own notification already.
        void this.startFailed(this.lastStartError);
      }
      throw e;
    }
    const server: ServerOptions = {
      command: command.command,
      args: command.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
    };
    const options: LanguageClientOptions = {
      // Every file: the server syncs the open documents (the agent reads their unsaved text and
      // edits a dirty one with workspace/applyEdit) and offers its code actions on any range.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      initializationOptions: () => serverSettings(folder?.uri),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === 'pseudoclaude'
                ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : folder?.uri)
                : answers[i],
            );
          },
        },
      },
    };
    const client = new LanguageClient('pseudoclaude', 'PseudoClaude Server', server, options);
    client.onNotification(Notifications.event, (e: AgentEvent) => this.listeners.onEvent(e));
    client.onNotification(Notifications.contextUsage, (u: ContextUsageParams) => this.listeners.onContextUsage(u));
    client.onNotification(Notifications.memoryChanged, (m: MemoryChangedParams) => this.listeners.onMemoryChanged(m));
    client.onNotification(Notifications.memoryProposalsChanged, (p: MemoryProposalsParams) =>
      this.listeners.onMemoryProposals?.(p),
    );
    client.onNotification(Notifications.mcpChanged, (p: McpChangedParams) => this.listeners.onMcpChanged?.(p));
    client.onRequest(ShowMessageRequest.type, (p: ShowMessageRequestParams) => showMessageRequest(p, this.listeners));
    const onApprove = this.listeners.onApprove;
    const onDiagnostics = this.listeners.onDiagnostics;
    const flags = [...(onApprove ? [APPROVALS_CAPABILITY] : []), ...(onDiagnostics ? [DIAGNOSTICS_CAPABILITY] : [])];
    if (flags.length > 0) {
      client.registerFeature(experimentalFeature(flags));
    }
    if (onApprove) {
      client.onRequest(ServerRequests.approve, (p: ApproveParams, token: CancellationToken) => onApprove(p, token));
    }
    if (onDiagnostics) {
      client.onRequest(ServerRequests.diagnostics, (p: DiagnosticsParams) => onDiagnostics(p));
    }
    this.client = client;
    this.log.info(`starting ${describeCommand(command)} (from ${command.source})`);
    try {
      await client.start();
    } catch (e) {
      this.lastStartError = `${describeCommand(command)}: ${errorMessage(e)}`;
      void this.startFailed(this.lastStartError, command);
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      throw new Error(`the PseudoClaude server did not start (${this.lastStartError})`);
    }
    this.lastStartError = undefined;
    this.listeners.onReady();
  }

  private async startFailed(message: string, command?: ServerCommand): Promise<void> {
    const hint =
      command?.source === 'default'
        ? ' Install the pseudoclaude-lsp package, set pseudoclaude.server.pythonPath or pseudoclaude.server.command, ' +
          'or set pseudoclaude.server.installStrategy to managed.'
        : command?.source === 'managed'
          ? ' Show the log for the server\'s output; deleting the extension\'s server folder (see Show Server Status) reinstalls it.'
          : '';
    const choice = await vscode.window.showErrorMessage(
      `PseudoClaude: the server did not start: ${message}.${hint}`,
      'Open Settings',
      'Show Log',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'pseudoclaude.server');
    } else if (choice === 'Show Log') {
      this.log.show();
    }
  }

  async restart(): Promise<void> {
    this.servers.forgetFailure();
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client && client.state !== State.Stopped) {
      await client.stop(10_000).catch((e: unknown) => this.log.warn(`stop: ${errorMessage(e)}`));
    }
  }

  /** Push changed settings; the server pulls `workspace/configuration` again. */
  async settingsChanged(): Promise<void> {
    const client = this.client;
    if (client?.state === State.Running) {
      await client.sendNotification('workspace/didChangeConfiguration', {
        settings: { pseudoclaude: serverSettings(this.firstFolder()?.uri) },
      });
    }
  }

  async request<M extends RequestMethod>(
    method: M,
    params: ParamsOf<M>,
    options: RequestOptions = {},
  ): Promise<ResultOf<M>> {
    if (this.client?.state !== State.Running) {
      await this.start();
    }
    const client = this.client;
    if (!client) {
      throw new Error(`the PseudoClaude server is not running${this.lastStartError ? ` (${this.lastStartError})` : ''}`);
    }
    let progress: vscode.Disposable | undefined;
    let sent: object = params;
    if (options.onProgress) {
      const token = `pseudoclaude-${randomUUID()}`;
      const onProgress = options.onProgress;
      progress = client.onProgress(WorkDoneProgress.type, token, (value) => onProgress(value as Progress));
      sent = { ...params, workDoneToken: token };
    }
    try {
      // Pass a token only when there is one: a trailing `undefined` would be taken as a second
      // parameter, and the params would go out as an array.
      const pending = options.token
        ? client.sendRequest(method, sent, options.token)
        : client.sendRequest(method, sent);
      return (await pending) as ResultOf<M>;
    } finally {
      progress?.dispose();
    }
  }

  dispose(): void {
    void this.stop();
  }
}

/**
 * Approvals as modal dialogs (Esc = Deny), shown as a pending card in the chat meanwhile; a plan
 * too (Approve, Approve and accept edits, Keep planning; Esc = Keep planning); other message
 * requests as usual.
 */
/** A modal question whose answer the chat also shows as a card (shown, then answered). */
async function askInChat(
  p: ShowMessageRequestParams,
  listeners: Listeners,
  prompt: ModalPrompt,
  show: typeof vscode.window.showWarningMessage,
): Promise<string | undefined> {
  const card = listeners.onApprovalShown?.(p.message);
  let picked: { title: string } | undefined;
  try {
    picked = await show(prompt.message, { modal: true, detail: prompt.detail }, ...prompt.buttons);
  } finally {
    if (card !== undefined) {
      listeners.onApprovalAnswered?.(card, picked?.title);
    }
  }
  return picked?.title;
}

async function showMessageRequest(p: ShowMessageRequestParams, listeners: Listeners): Promise<{ title: string } | null> {
  if (isPlanApproval(p)) {
    return planAnswer(p, await askInChat(p, listeners, planPrompt(p), vscode.window.showInformationMessage));
  }
  if (isApproval(p)) {
    return approvalAnswer(p, await askInChat(p, listeners, approvalPrompt(p), vscode.window.showWarningMessage));
  }
  const show =
    p.type === 1
      ? vscode.window.showErrorMessage
      : p.type === 2
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const picked = await show(p.message, ...(p.actions ?? []));
  return picked ?? null;
}
