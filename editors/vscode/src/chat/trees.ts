/**
 * The Sessions and Memory views as plain nodes (the adapter turns them into VS Code tree items):
 * the folder's sessions, newest first, the active one marked, each resuming on click; the memory
 * notes per level, each opening its file; and pending memory proposals once the server offers them
 * (`ProposalSource`, SPEC §11 "Memory with consent").
 */
import { formatAge, formatBytes, plural } from '../format';
import type { MemoryShowResult, SessionSummary } from '../protocol';

export interface TreeNode {
  id: string;
  label: string;
  description?: string;
  /** Markdown-free tooltip text. */
  tooltip?: string;
  /** A codicon name (`circle-filled`, `note`, ...). */
  icon?: string;
  /** What a click does: an editor command and its arguments. */
  command?: { id: string; title: string; args: unknown[] };
  /** The `viewItem` context value (menus). */
  contextValue?: string;
  children?: TreeNode[];
  /** With children: shown folded. */
  collapsed?: boolean;
}

/** Commands the nodes run (the adapter registers the chat's own; `vscode.open` is VS Code's). */
export const TREE_COMMANDS = {
  resume: 'pseudoclaude.resumeSession',
  open: 'vscode.open',
  reviewProposal: 'pseudoclaude.reviewProposal',
} as const;

/** One node per session: title, age and size; the active session marked and not clickable. */
export function sessionNodes(sessions: SessionSummary[], now: Date, folderUri: string): TreeNode[] {
  return sessions.map((s) => {
    const title = s.title.trim() || (s.messageCount === 0 ? 'New session' : s.id);
    const bits = [formatAge(s.updatedAt, now), plural(s.messageCount, 'message')];
    const tooltip = [
      title,
      `${s.id} · ${formatBytes(s.bytes)}${s.model ? ` · ${s.model}` : ''}`,
      s.running ? 'Running now (here or in another window)' : '',
      s.worktree ? `Works in a git worktree of its own: branch ${s.worktree}` : '',
      s.active ? 'The current session' : 'Click to resume',
    ].filter(Boolean).join('\n');
    const marks = [s.active ? 'active' : '', s.running ? 'running' : '', s.worktree ? `⎇ ${s.worktree}` : ''].filter(Boolean);
    return {
      id: `session:${s.id}`,
      label: title,
      description: [...marks, ...bits].join(' · '),
      tooltip,
      icon: s.running ? 'sync~spin' : s.active ? 'circle-filled' : s.worktree ? 'git-branch' : 'history',
      contextValue: s.active ? 'session.active' : 'session',
      ...(s.active
        ? {}
        : { command: { id: TREE_COMMANDS.resume, title: 'Resume Session', args: [s.id, folderUri] } }),
    };
  });
}

/** A pending memory proposal as the Memory view lists it (`pseudoclaude/memory/proposals`). */
export interface PendingProposal {
  id: string;
  action: string;
  level: string;
  title: string;
  filename: string;
  summary: string;
  createdAt: string;
}

/**
 * Where the Memory view gets pending proposals: `undefined` while the server does not offer
 * `pseudoclaude/memory/proposals` (the view then shows no proposals group).
 */
export interface ProposalSource {
  list(folderUri: string): Promise<PendingProposal[] | undefined>;
}

const LEVEL_TITLES: Record<string, string> = { project: 'Project memory', user: 'User memory' };

/** Memory: pending proposals (when any), then per level its `MEMORY.md` and its notes. */
export function memoryNodes(
  shown: MemoryShowResult,
  proposals: PendingProposal[] | undefined,
  now: Date,
): TreeNode[] {
  const nodes: TreeNode[] = [];
  if (proposals && proposals.length > 0) {
    nodes.push({
      id: 'proposals',
      label: 'Pending proposals',
      description: String(proposals.length),
      tooltip: 'Changes a background memory update proposed (memory.mode: confirm): click one to review it',
      icon: 'git-pull-request',
      children: proposals.map((p) => ({
        id: `proposal:${p.id}`,
        label: p.title || p.filename,
        description: `${p.action} · ${p.level} · ${formatAge(p.createdAt, now)}`,
        tooltip: [p.summary, `${p.action} ${p.filename} (${p.level} memory)`].filter(Boolean).join('\n'),
        icon: p.action === 'delete' ? 'diff-removed' : p.action === 'create' ? 'diff-added' : 'diff-modified',
        contextValue: 'proposal',
        command: { id: TREE_COMMANDS.reviewProposal, title: 'Review', args: [p.id] },
      })),
    });
  }
  for (const store of shown.stores) {
    const children: TreeNode[] = [
      {
        id: `index:${store.level}`,
        label: 'MEMORY.md',
        description: store.dir,
        tooltip: `The ${store.level} index: ${store.dir}`,
        icon: 'list-unordered',
        command: { id: TREE_COMMANDS.open, title: 'Open', args: [store.indexUri] },
      },
      ...store.notes.map((n) => ({
        id: `note:${store.level}:${n.filename}`,
        label: n.title || n.filename,
        description: n.type,
        tooltip: [n.summary, n.filename].filter(Boolean).join('\n'),
        icon: 'note',
        contextValue: 'note',
        command: { id: TREE_COMMANDS.open, title: 'Open', args: [n.uri] },
      })),
    ];
    nodes.push({
      id: `level:${store.level}`,
      label: LEVEL_TITLES[store.level] ?? store.level,
      description: store.notes.length === 0 ? 'no notes yet' : plural(store.notes.length, 'note'),
      icon: store.level === 'user' ? 'account' : 'folder',
      children,
    });
  }
  return nodes;
}
