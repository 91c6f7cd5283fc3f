/** Quick-pick items for sessions and memory, built from server results. */
import { formatAge, formatBytes, plural } from './format';
import type { MemoryLevel, MemoryShowResult, SessionSummary } from './protocol';
import { MEMORY_TYPES } from './protocol';

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  /** A separator line (`kind: Separator` in VS Code); never picked. */
  separator?: boolean;
  /** Offer a "forget" button on this item. */
  forgettable?: boolean;
  value: T;
}

/** Sessions, newest first as the server lists them: title, age, messages, model. */
export function sessionItems(sessions: SessionSummary[], now: Date): PickItem<SessionSummary>[] {
  return sessions.map((s) => {
    const bits = [formatAge(s.updatedAt, now), plural(s.messageCount, 'message')];
    if (s.model) {
      bits.push(s.model);
    }
    if (s.worktree) {
      bits.unshift(`$(git-branch) ${s.worktree}`); // works in a git worktree of its own
    }
    if (s.running) {
      bits.unshift('$(sync~spin) running'); // being written now, here or in another window
    }
    return {
      label: `${s.active ? '$(circle-filled) ' : ''}${s.title.trim() || '(no messages yet)'}`,
      description: bits.join(' · '),
      detail: `${s.id} · ${formatBytes(s.bytes)}${s.active ? ' · active' : ''}`,
      value: s,
    };
  });
}

export type MemoryPick =
  | { kind: 'index' }
  | { kind: 'file'; uri: string; level: MemoryLevel; filename?: string };

const LEVEL_TITLE: Record<MemoryLevel, string> = { project: 'Project memory', user: 'User memory' };

/** The injected index first, then per store its `MEMORY.md` and its notes. */
export function memoryItems(result: MemoryShowResult): PickItem<MemoryPick>[] {
  const items: PickItem<MemoryPick>[] = [
    {
      label: '$(book) Memory index as the model sees it',
      description: result.truncated ? 'truncated' : undefined,
      value: { kind: 'index' },
    },
  ];
  for (const store of result.stores) {
    items.push({
      label: `${LEVEL_TITLE[store.level] ?? store.level}`,
      separator: true,
      value: { kind: 'index' },
    });
    items.push({
      label: '$(list-unordered) MEMORY.md',
      description: store.dir,
      value: { kind: 'file', uri: store.indexUri, level: store.level },
    });
    for (const note of store.notes) {
      items.push({
        label: note.title || note.filename,
        description: note.type,
        detail: note.summary || undefined,
        forgettable: true,
        value: { kind: 'file', uri: note.uri, level: store.level, filename: note.filename },
      });
    }
    if (store.notes.length === 0) {
      items.push({
        label: '(no notes yet)',
        description: 'use "PseudoClaude: Remember..."',
        value: { kind: 'file', uri: store.indexUri, level: store.level },
      });
    }
  }
  return items;
}

export const MEMORY_TYPE_HELP: Record<(typeof MEMORY_TYPES)[number], string> = {
  user_preference: 'how you like things done',
  correction_feedback: 'a mistake not to repeat',
  project_knowledge: 'a fact about this project',
  reference_material: 'where to find something',
};

export function levelItems(): PickItem<MemoryLevel>[] {
  return [
    { label: 'Project', description: 'this workspace (.PseudoClaude/memory)', value: 'project' },
    { label: 'User', description: 'all your projects (~/.PseudoClaude/memory)', value: 'user' },
  ];
}

export function typeItems(): PickItem<(typeof MEMORY_TYPES)[number]>[] {
  return MEMORY_TYPES.map((t) => ({ label: t, description: MEMORY_TYPE_HELP[t], value: t }));
}
