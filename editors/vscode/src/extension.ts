/**
 * Activation: wires the language client, the UI adapter, the chat view, the tree views and the
 * commands together.
 */
import * as vscode from 'vscode';
import { ChatHost } from './chat/host';
import { DIFF_SCHEME, PROPOSAL_SCHEME, REWIND_SCHEME } from './chat/diffs';
import { ProposalReviews, serverProposals } from './chat/proposals';
import { TREE_COMMANDS } from './chat/trees';
import { COMMANDS, type CommandName } from './commands';
import { Controller } from './controller';
import { answerDiagnostics } from './diagnostics';
import { codeActionArguments, type CodeActionCommand } from './editorContext';
import { statusText } from './install';
import { describeCommand, needsRestart } from './settings';
import { Transcript } from './transcript';
import { CHAT_VIEW, ChatViewProvider, DiffDocuments, EMPTY_SCHEME, EmptyDocuments, chatEnv } from './vscode/chatView';
import { AgentLanguageClient } from './vscode/client';
import { codeActionFolder, editorDiagnostics, selectionArguments, watchEditor } from './vscode/editor';
import { ServerProvider } from './vscode/server';
import { ProposalDocuments, reviewEnv } from './vscode/proposals';
import { MemoryTree, SessionsTree } from './vscode/trees';
import { VsCodeUi } from './vscode/ui';

export interface PseudoClaudeApi {
  controller: Controller;
  chat: ChatHost;
}

let running: AgentLanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<PseudoClaudeApi> {
  const transcriptChannel = vscode.window.createOutputChannel('PseudoClaude');
  const logChannel = vscode.window.createOutputChannel('PseudoClaude Server', { log: true });
  const ui = new VsCodeUi(transcriptChannel, logChannel);
  const transcript = new Transcript(transcriptChannel);

  let controller: Controller | undefined;
  let chat: ChatHost | undefined;
  let sessionsTree: SessionsTree | undefined;
  let memoryTree: MemoryTree | undefined;
  // Retry (after a failed managed install) starts again; the next start always tries again.
  const servers = new ServerProvider(context, logChannel, () => void running?.start().catch(() => undefined));
  const client = new AgentLanguageClient(logChannel, {
    onEvent: (e) => {
      controller?.onEvent(e);
      chat?.onEvent(e);
      if (e.kind === 'memory') {
        memoryTree?.refresh();
      }
    },
    onContextUsage: (u) => {
      controller?.onContextUsage(u);
      chat?.onContextUsage(u);
    },
    onMemoryChanged: (m) => {
      controller?.onMemoryChanged(m);
      memoryTree?.refresh();
    },
    onMemoryProposals: () => memoryTree?.refresh(),
    onMcpChanged: (m) => chat?.onMcpChanged(m),
    onReady: () => {
      void controller?.refreshContext();
      void chat?.reload().then(() => chat?.refreshSessions());
      void chat?.loadCommands();
      void chat?.refreshMcp();
      sessionsTree?.refresh();
      memoryTree?.refresh();
    },
    onApprovalShown: (message) => chat?.modalApprovalShown(message),
    onApprovalAnswered: (id, title) => chat?.modalApprovalAnswered(id, title),
    onApprove: (params, token) => (chat ? chat.approve(params, token) : Promise.resolve({ decision: 'deny', message: null, mode: null, feedback: null })),
    onDiagnostics: (params) => answerDiagnostics(params, editorDiagnostics()),
  }, servers);
  running = client;
  controller = new Controller(client, ui, transcript);
  const c = controller;

  // The chat view and the Sessions / Memory views (SPEC §11 "Editors"), on the chat's folder.
  const chatView: ChatViewProvider = new ChatViewProvider(context.extensionUri, (): ChatHost => h);
  const diffs = new DiffDocuments();
  // The files of a rewind preview: the file now and after the rewind.
  const rewindDiffs = new DiffDocuments(REWIND_SCHEME, '(this rewind preview is closed)\n');
  const sessions = new SessionsTree(client, () => h.folder?.uri);
  const memory = new MemoryTree(client, () => h.folder?.uri);
  sessionsTree = sessions;
  memoryTree = memory;
  memory.proposals = serverProposals(client, (m) => logChannel.info(m));
  // Memory proposals reviewed as diffs whose right side can be edited before Accept.
  const proposalDocs = new ProposalDocuments();
  const reviews = new ProposalReviews(client, reviewEnv(proposalDocs, (message, ...actions) => ui.error(message, ...actions)));
  const h: ChatHost = new ChatHost(
    client,
    chatEnv(logChannel, chatView, diffs, rewindDiffs, context.workspaceState, {
      cancelOtherRun: () => c.cancelRun(),
      showMemory: () => c.showMemory(),
      // A sub-agent's transcript goes where a resumed session's does: the PseudoClaude output.
      showTranscript: (title, items, skipped) => {
        transcript.note(title);
        transcript.history(items, skipped);
        transcriptChannel.show(true);
      },
      sessionsChanged: () => {
        sessions.refresh();
        memory.refresh();
      },
    }),
  );
  chat = h;
  // The Ask command's prompt goes with the editor's context too (as the chat's chip shows it).
  c.editorContext = (folder) => h.editorContext(folder.uri);
  // Show Permissions is about the session the chat shows (in that folder).
  c.chatSession = (folder) => (h.folder && h.folder.uri === folder.uri ? (h.current.sessionId ?? undefined) : undefined);
  c.listener = {
    runStarted: (folder, prompt, context) => h.otherRunStarted(folder.uri, prompt, context),
    runFinished: (folder, result, canceled) => h.otherRunFinished(folder.uri, result, canceled),
    sessionChanged: (folder) => {
      void h.sessionChanged(folder.uri);
      sessions.refresh();
    },
  };
  const folderOf = (uri: unknown) =>
    typeof uri === 'string' ? ui.folders().find((f) => f.uri === uri) : undefined;
  const sessionsView = vscode.window.createTreeView('pseudoclaude.sessions', { treeDataProvider: sessions });
  const memoryView = vscode.window.createTreeView('pseudoclaude.memory', { treeDataProvider: memory });
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(CHAT_VIEW, chatView),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs),
    diffs,
    vscode.workspace.registerTextDocumentContentProvider(REWIND_SCHEME, rewindDiffs),
    rewindDiffs,
    vscode.workspace.registerTextDocumentContentProvider(EMPTY_SCHEME, new EmptyDocuments()),
    sessions,
    memory,
    sessionsView,
    memoryView,
    sessionsView.onDidChangeVisibility((e) => e.visible && sessions.refresh()),
    memoryView.onDidChangeVisibility((e) => e.visible && memory.refresh()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => h.foldersChanged()),
    // The prompt box's chip follows the active editor and its selection.
    watchEditor((snapshot) => h.editorChanged(snapshot)),
    // A pending memory proposal (Memory view): its diff, then Accept / Reject.
    vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, proposalDocs, { isCaseSensitive: true }),
    proposalDocs,
    proposalDocs.onDidClose((id) => reviews.closed(id)),
    vscode.commands.registerCommand(TREE_COMMANDS.reviewProposal, async (id: unknown) => {
      const folder = h.folder?.uri;
      if (typeof id !== 'string' || !folder) {
        return;
      }
      if (await reviews.review(folder, id)) {
        memory.refresh();
      }
    }),
  );

  /**
   * A code action's command: its argument from the server (the light bulb), else the active
   * editor's selection (the editor's context menu, which passes the document's URI).
   */
  const codeAction = (command: CodeActionCommand) => async (arg: unknown): Promise<void> => {
    const given = codeActionArguments(arg);
    const target = given
      ? { args: given, folder: codeActionFolder(given) }
      : selectionArguments(command === 'pseudoclaude.codeAction.fix');
    if (!target) {
      void ui.info('PseudoClaude: select some code in a file of the workspace first.');
      return;
    }
    await h.codeAction(command, target.args, target.folder);
  };

  const handlers: Record<CommandName, (...args: unknown[]) => unknown> = {
    ask: (prompt) => c.ask(typeof prompt === 'string' ? prompt : undefined),
    compact: () => c.compact(),
    undoCompaction: () => c.undoCompaction(),
    showMemory: () => c.showMemory(),
    remember: (text) => c.remember(typeof text === 'string' ? text : undefined),
    openMemoryIndex: () => c.openMemoryIndex(),
    resumeSession: (id, folder) => c.resumeSession(typeof id === 'string' ? id : undefined, folderOf(folder)),
    newSession: () => c.newSession(),
    // A session in a git worktree of its own, in the chat (its changes reach the folder when applied).
    newWorktreeSession: async () => {
      await chatView.reveal(false);
      await h.newSession({ worktree: true });
    },
    cancelRun: async () => {
      if (h.hasRun) {
        await h.cancel();
      } else {
        await c.cancelRun();
      }
    },
    showContext: () => c.showContext(),
    showTranscript: () => transcriptChannel.show(true),
    restartServer: async () => {
      await client.restart().catch(() => undefined);
    },
    showServerStatus: async () => {
      const { title, detail } = statusText(await client.status(), describeCommand);
      const choice = await vscode.window.showInformationMessage(title, { modal: true, detail }, 'Show Log');
      if (choice === 'Show Log') {
        logChannel.show();
      }
    },
    openChat: async () => {
      await chatView.reveal(false);
      h.focus();
    },
    refreshSessions: () => sessions.refresh(),
    refreshMemory: () => memory.refresh(),
    // The title buttons of an approval's diff editor answer that approval.
    allowChange: () => {
      const id = diffs.activeId();
      if (id) {
        h.decide(id, 'allowOnce');
      }
    },
    denyChange: () => {
      const id = diffs.activeId();
      if (id) {
        h.decide(id, 'deny');
      }
    },
    // The title buttons of a memory proposal's diff (the right side as it is then).
    acceptProposal: (resource) => {
      const id = proposalDocs.idOf(resource);
      if (id) {
        reviews.decide(id, 'accept');
      }
    },
    rejectProposal: (resource) => {
      const id = proposalDocs.idOf(resource);
      if (id) {
        reviews.decide(id, 'reject');
      }
    },
    // The chat's MCP menu (its header's MCP button, `/mcp`), for the chat's folder.
    showMcpServers: () => h.openMcp(),
    // The mode of the session the chat shows (as its mode picker sets it).
    setPermissionMode: async () => {
      const r = await h.pickMode();
      if (r && 'error' in r) {
        void ui.error(`PseudoClaude: ${r.error}`);
      } else if (r) {
        void ui.info(`PseudoClaude: ${r.message}`);
      }
    },
    showPermissions: () => c.showPermissions(),
    // The chat's menu: the chat's folder's hooks (Review… asks about its own again) and skills.
    showHooks: async () => {
      await chatView.reveal(false);
      await h.openHooks();
    },
    showSkills: async () => {
      await chatView.reveal(false);
      await h.openSkills();
    },
    explainSelection: codeAction('pseudoclaude.codeAction.explain'),
    fixSelection: codeAction('pseudoclaude.codeAction.fix'),
    askAboutSelection: codeAction('pseudoclaude.codeAction.ask'),
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
        if (e.affectsConfiguration('pseudoclaude.permissions') || e.affectsConfiguration('pseudoclaude.sandbox')) {
          // The modes offered (permissions.allowBypass), the sandbox, the start mode.
          await h.refreshPermissions();
        }
      }
    }),
  );

  c.refreshStatus();
  if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
    // A failed start is reported by the client (with what to change); commands retry it.
    void client.start().catch(() => undefined);
  }
  return { controller: c, chat: h };
}

/** Shut the server down cleanly (it drains pending memory updates before it exits). */
export function deactivate(): Promise<void> | undefined {
  const client = running;
  running = undefined;
  return client?.stop();
}
