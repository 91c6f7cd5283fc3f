/** Activation: wires the language client, the UI adapter and the commands together. */
import * as vscode from 'vscode';
import { COMMANDS, type CommandName } from './commands';
import { Controller } from './controller';
import { needsRestart } from './settings';
import { Transcript } from './transcript';
import { AgentLanguageClient } from './vscode/client';
import { VsCodeUi } from './vscode/ui';

export interface PseudoClaudeApi {
  controller: Controller;
}

let running: AgentLanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<PseudoClaudeApi> {
  const transcriptChannel = vscode.window.createOutputChannel('PseudoClaude');
  const logChannel = vscode.window.createOutputChannel('PseudoClaude Server', { log: true });
  const ui = new VsCodeUi(transcriptChannel, logChannel);
  const transcript = new Transcript(transcriptChannel);

  let controller: Controller | undefined;
  const client = new AgentLanguageClient(logChannel, {
    onEvent: (e) => controller?.onEvent(e),
    onContextUsage: (u) => controller?.onContextUsage(u),
    onMemoryChanged: (m) => controller?.onMemoryChanged(m),
    onReady: () => void controller?.refreshContext(),
  });
  running = client;
  controller = new Controller(client, ui, transcript);
  const c = controller;

  const handlers: Record<CommandName, (...args: unknown[]) => unknown> = {
    ask: (prompt) => c.ask(typeof prompt === 'string' ? prompt : undefined),
    compact: () => c.compact(),
    undoCompaction: () => c.undoCompaction(),
    showMemory: () => c.showMemory(),
    remember: (text) => c.remember(typeof text === 'string' ? text : undefined),
    openMemoryIndex: () => c.openMemoryIndex(),
    resumeSession: (id) => c.resumeSession(typeof id === 'string' ? id : undefined),
    newSession: () => c.newSession(),
    cancelRun: () => c.cancelRun(),
    showContext: () => c.showContext(),
    showTranscript: () => transcriptChannel.show(true),
    restartServer: async () => {
      await client.restart().catch(() => undefined);
    },
  };
  for (const [name, spec] of Object.entries(COMMANDS) as [CommandName, (typeof COMMANDS)[CommandName]][]) {
    context.subscriptions.push(vscode.commands.registerCommand(spec.id, handlers[name]));
  }

  context.subscriptions.push(
    transcriptChannel,
    logChannel,
    ui,
    vscode.window.onDidChangeActiveTextEditor(() => c.refreshStatus()),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (needsRestart((section) => e.affectsConfiguration(section))) {
        logChannel.info('server settings changed: restarting the server');
        await client.restart().catch(() => undefined);
      } else if (e.affectsConfiguration('pseudoclaude')) {
        await client.settingsChanged();
      }
    }),
  );

  c.refreshStatus();
  if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
    // A failed start is reported by the client (with what to change); commands retry it.
    void client.start().catch(() => undefined);
  }
  return { controller: c };
}

/** Shut the server down cleanly (it drains pending memory updates before it exits). */
export function deactivate(): Promise<void> | undefined {
  const client = running;
  running = undefined;
  return client?.stop();
}
