/**
 * Sessions in a git worktree of their own, in the chat: the words of the header's line, the
 * Changes list (the files and what the session did to each; Apply at the top), the card of an
 * Apply (what was written into the folder, or the conflicts and nothing written) and the
 * questions of Remove. Pure: no DOM, no `vscode`; the host runs the flow (`ChatHost.worktree*`).
 */
import { oneLine, plural } from '../format';
import { ErrorCodes, type WorktreeApplyResult, type WorktreeFile, type WorktreeStatusResult } from '../protocol';
import type { KeepOpenItem } from './rewind';

/** A worktree file's action in words, and its icon in a quick pick. */
export const WORKTREE_ACTIONS: Record<WorktreeFile['action'], { words: string; icon: string }> = {
  create: { words: 'new file', icon: '$(diff-added)' },
  modify: { words: 'changed', icon: '$(diff-modified)' },
  delete: { words: 'deleted', icon: '$(diff-removed)' },
};

/** What the user chose in the Changes list: a file (its diff; the list stays), Apply, or nothing. */
export type ChangesChoice = { kind: 'file'; file: WorktreeFile } | { kind: 'apply' } | { kind: 'close' };

export type ChangesPlan =
  | { kind: 'nothing'; message: string }
  | { kind: 'pick'; title: string; placeHolder: string; items: KeepOpenItem<ChangesChoice>[] };

/**
 * The Changes list of a worktree session: Apply first (it writes every change into the folder),
 * then the files, each opening the diff of the folder's file and the worktree's.
 */
export function changesPlan(status: WorktreeStatusResult, folderName: string): ChangesPlan {
  if (status.files.length === 0) {
    return { kind: 'nothing', message: `No changes yet in the worktree of this session (branch ${status.branch}).` };
  }
  const n = plural(status.files.length, 'file');
  return {
    kind: 'pick',
    title: `Worktree ${status.branch}: ${n} changed`,
    placeHolder: `Select a file to see its diff; Apply writes the changes into ${folderName}`,
    items: [
      {
        label: `$(check) Apply to ${folderName}`,
        description: `write the ${n} into the folder (nothing is written when one of them changed there too)`,
        value: { kind: 'apply' },
      },
      { label: '$(close) Close', description: 'apply nothing now', value: { kind: 'close' } },
      { label: `${n}: select one to see its diff (${folderName} ↔ worktree)`, separator: true, value: { kind: 'close' } },
      ...status.files.map((f) => ({
        label: `${WORKTREE_ACTIONS[f.action].icon} ${f.path}`,
        description: WORKTREE_ACTIONS[f.action].words,
        keepOpen: true,
        value: { kind: 'file' as const, file: f },
      })),
    ],
  };
}

/** The title of a file's diff editor: the folder's file (left) and the worktree's (right). */
export function worktreeDiffTitle(file: WorktreeFile, branch: string): string {
  const what =
    file.action === 'create' ? 'new in the worktree' : file.action === 'delete' ? 'deleted in the worktree' : `folder ↔ ${branch}`;
  return `${file.path} (${what})`;
}

/** The card an Apply leaves in the chat. */
export interface ApplyCard {
  level: 'info' | 'warning';
  title: string;
  files: string[];
  note?: string;
}

/**
 * What an Apply did: the files written into the folder, or (a file changed in the folder too) the
 * conflicts, named one per line, and nothing written; or the server's line when there was nothing
 * to apply.
 */
export function applyCard(r: WorktreeApplyResult, folderName: string): ApplyCard {
  if (r.conflicts.length > 0) {
    return {
      level: 'warning',
      title: `Nothing applied: ${plural(r.conflicts.length, 'file')} changed in ${folderName} too since the worktree was made`,
      files: r.conflicts,
      note:
        `The folder's ${r.conflicts.length === 1 ? 'version is' : 'versions are'} left as ${r.conflicts.length === 1 ? 'it is' : 'they are'}. ` +
        'Undo your change there (or bring the session\'s change over by hand), then Apply again.',
    };
  }
  if (r.applied.length === 0) {
    return { level: 'info', title: capital(oneLine(r.message, 300).replace(/(the )?main tree/g, folderName)), files: [] };
  }
  return {
    level: 'info',
    title: `Applied ${plural(r.applied.length, 'file')} to ${folderName}`,
    files: r.applied,
    note: 'They are written into the folder, not committed. The session goes on in its worktree.',
  };
}

function capital(text: string): string {
  return text ? `${text[0]?.toUpperCase()}${text.slice(1)}` : text;
}

/** The modal question before Remove. */
export function removeQuestion(branch: string, folderName: string): { message: string; detail: string; action: string } {
  return {
    message: `Remove the worktree of this session (branch ${branch})?`,
    detail:
      `The worktree's folder and its branch are deleted; the session goes on in ${folderName} itself. ` +
      'Changes you did not apply are refused unless you confirm again.',
    action: 'Remove',
  };
}

/** The modal warning when Remove was refused for changes not applied; its answer forces it. */
export function forceQuestion(message: string, folderName: string): { message: string; detail: string; action: string } {
  const said = oneLine(message, 600)
    .replace(/:\s*apply them or remove with force\.?$/i, '')
    .replace(/(the )?main tree/g, folderName);
  return {
    message: `This worktree has changes that are not in ${folderName}`,
    detail: `${capital(said)}.\n\nRemove it anyway? Those changes are lost.`,
    action: 'Remove Anyway',
  };
}

/** Whether a failed Remove was refused for changes not applied (the server's RequestFailed). */
export function refusedForChanges(e: unknown): boolean {
  const o = typeof e === 'object' && e !== null ? (e as { code?: unknown; message?: unknown }) : {};
  return o.code === ErrorCodes.RequestFailed && typeof o.message === 'string' && /not applied|with force/i.test(o.message);
}
