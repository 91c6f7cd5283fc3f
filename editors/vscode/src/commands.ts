/**
 * The editor commands (SPEC §8b titles). Their ids differ from the server's
 * `workspace/executeCommand` commands (`pseudoclaude.run`, `pseudoclaude.compact`, ...), which
 * the language client registers in VS Code by themselves.
 */
import { CodeActions } from './protocol';

export interface CommandSpec {
  id: string;
  title: string;
}

export const COMMANDS = {
  ask: { id: 'pseudoclaude.ask', title: 'PseudoClaude: Ask' },
  compact: { id: 'pseudoclaude.compactContext', title: 'PseudoClaude: Compact Context' },
  undoCompaction: { id: 'pseudoclaude.undoCompaction', title: 'PseudoClaude: Undo Compaction' },
  showMemory: { id: 'pseudoclaude.showMemory', title: 'PseudoClaude: Show Memory' },
  remember: { id: 'pseudoclaude.remember', title: 'PseudoClaude: Remember...' },
  openMemoryIndex: { id: 'pseudoclaude.openMemoryIndex', title: 'PseudoClaude: Open MEMORY.md' },
  resumeSession: { id: 'pseudoclaude.resumeSession', title: 'PseudoClaude: Resume Session' },
  newSession: { id: 'pseudoclaude.newSession', title: 'PseudoClaude: New Session' },
  newWorktreeSession: { id: 'pseudoclaude.newWorktreeSession', title: 'PseudoClaude: New Session in a Worktree' },
  cancelRun: { id: 'pseudoclaude.cancelRun', title: 'PseudoClaude: Cancel Run' },
  showContext: { id: 'pseudoclaude.showContext', title: 'PseudoClaude: Show Context' },
  showTranscript: { id: 'pseudoclaude.showTranscript', title: 'PseudoClaude: Show Transcript' },
  restartServer: { id: 'pseudoclaude.restartServer', title: 'PseudoClaude: Restart Server' },
  showServerStatus: { id: 'pseudoclaude.showServerStatus', title: 'PseudoClaude: Show Server Status' },
  openChat: { id: 'pseudoclaude.openChat', title: 'PseudoClaude: Open Chat' },
  refreshSessions: { id: 'pseudoclaude.refreshSessions', title: 'PseudoClaude: Refresh Sessions' },
  refreshMemory: { id: 'pseudoclaude.refreshMemory', title: 'PseudoClaude: Refresh Memory' },
  allowChange: { id: 'pseudoclaude.allowChange', title: 'PseudoClaude: Allow This Change' },
  denyChange: { id: 'pseudoclaude.denyChange', title: 'PseudoClaude: Deny This Change' },
  acceptProposal: { id: 'pseudoclaude.acceptProposal', title: 'PseudoClaude: Accept Memory Proposal' },
  rejectProposal: { id: 'pseudoclaude.rejectProposal', title: 'PseudoClaude: Reject Memory Proposal' },
  showMcpServers: { id: 'pseudoclaude.showMcpServers', title: 'PseudoClaude: Show MCP Servers' },
  setPermissionMode: { id: 'pseudoclaude.setPermissionMode', title: 'PseudoClaude: Set Permission Mode' },
  showPermissions: { id: 'pseudoclaude.showPermissions', title: 'PseudoClaude: Show Permissions' },
  showHooks: { id: 'pseudoclaude.showHooks', title: 'PseudoClaude: Show Hooks' },
  showSkills: { id: 'pseudoclaude.showSkills', title: 'PseudoClaude: Show Skills' },
  // The code actions' commands (the server offers them on a range; the editor's context menu on
  // the selection): the chat with the selection attached.
  explainSelection: { id: 'pseudoclaude.codeAction.explain', title: CodeActions['pseudoclaude.codeAction.explain'] },
  fixSelection: { id: 'pseudoclaude.codeAction.fix', title: CodeActions['pseudoclaude.codeAction.fix'] },
  askAboutSelection: { id: 'pseudoclaude.codeAction.ask', title: CodeActions['pseudoclaude.codeAction.ask'] },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
