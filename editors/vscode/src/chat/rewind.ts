/**
 * Rewind and fork in the chat: `/rewind`'s arguments, and the quick picks of the flow (the
 * prompt, what to take back, the preview's files with Rewind / Cancel) built from the server's
 * results, with the server's words where it has some. Pure: no DOM, no `vscode`; the host runs
 * the flow (`ChatHost.rewind`), the adapter shows the picks.
 */
import { formatAge, oneLine, plural } from '../format';
import type { PickItem } from '../pickers';
import type { CheckpointStatus, RewindFile, RewindMode, RewindPreviewResult, TurnSummary } from '../protocol';

export const REWIND_MODES: readonly RewindMode[] = ['both', 'conversation', 'code'];

/** What `/rewind` accepts (shown when its argument is something else). */
export const REWIND_USAGE =
  "/rewind takes a prompt's number and code, conversation or both, e.g. /rewind 2 code " +
  '(nothing: pick the prompt from a list).';

export type RewindArguments = { turn?: number; mode?: RewindMode } | { error: string };

/** `/rewind [N] [code|conversation|both]`, in any order (as the server reads it). */
export function parseRewind(argument: string): RewindArguments {
  let turn: number | undefined;
  let mode: RewindMode | undefined;
  for (const word of argument.split(/\s+/).filter(Boolean)) {
    const lower = word.toLowerCase();
    if (/^\d+$/.test(word) && turn === undefined && Number(word) > 0) {
      turn = Number(word);
    } else if ((REWIND_MODES as readonly string[]).includes(lower) && mode === undefined) {
      mode = lower as RewindMode;
    } else {
      return { error: `${REWIND_USAGE} "${oneLine(word, 40)}" is neither.` };
    }
  }
  return { ...(turn !== undefined ? { turn } : {}), ...(mode !== undefined ? { mode } : {}) };
}

/** Whether a rewind of `mode` takes the conversation back (the prompt returns to the box). */
export function takesConversation(mode: RewindMode): boolean {
  return mode !== 'code';
}

/** The prompts of the session, newest first: `3. the prompt`, with the files it changed and when. */
export function turnItems(turns: readonly TurnSummary[], now: Date): PickItem<number>[] {
  return [...turns].reverse().map((t) => {
    const when = t.ts > 0 ? formatAge(new Date(t.ts * 1000).toISOString(), now) : '';
    const files = t.filesChanged > 0 ? `${plural(t.filesChanged, 'file')} changed` : 'no file changed';
    return {
      label: `${t.turn}. ${oneLine(t.prompt, 100) || '(empty prompt)'}`,
      description: [files, when].filter(Boolean).join(' · '),
      value: t.turn,
    };
  });
}

/**
 * What to take back: both, the conversation only, the code only. Where the files cannot be
 * restored (checkpoints off or failing), the code choices say why.
 */
export function modeItems(checkpoints?: CheckpointStatus): PickItem<RewindMode>[] {
  const problem = checkpoints?.problem ? oneLine(checkpoints.problem, 200) : undefined;
  return [
    {
      label: '$(discard) Code and conversation',
      description: 'restore the files and take the conversation back',
      ...(problem ? { detail: problem } : {}),
      value: 'both',
    },
    {
      label: '$(comment-discussion) Conversation only',
      description: 'take the conversation back; the files stay as they are',
      value: 'conversation',
    },
    {
      label: '$(file-code) Code only',
      description: 'restore the files; the conversation stays as it is',
      ...(problem ? { detail: problem } : {}),
      value: 'code',
    },
  ];
}

/** What the user chose in the preview: a file (its diff; the list stays), Rewind, or Cancel. */
export type ReviewChoice =
  | { kind: 'file'; path: string }
  | { kind: 'rewind'; mode: RewindMode; force: boolean }
  | { kind: 'cancel' };

/** A quick pick item; `keepOpen`: choosing it shows something and leaves the list up. */
export interface KeepOpenItem<T> extends PickItem<T> {
  keepOpen?: boolean;
}

/** After the rewind: the file's state, as the preview lists it. */
const ACTION_WORDS: Record<RewindFile['action'], string> = {
  restore: 'restored',
  delete: 'deleted',
  create: 'recreated',
};

export const CONFLICT_NOTE = 'changed outside the agent';

export function fileItem(f: RewindFile): KeepOpenItem<ReviewChoice> {
  return {
    label: `${f.conflict ? '$(warning)' : '$(file)'} ${f.path}`,
    description: [ACTION_WORDS[f.action] ?? f.action, f.conflict ? CONFLICT_NOTE : ''].filter(Boolean).join(' · '),
    keepOpen: true,
    value: { kind: 'file', path: f.path },
  };
}

/** The title of a file's diff editor: the file now (left) and after the rewind (right). */
export function rewindDiffTitle(f: Pick<RewindFile, 'path' | 'action'>, turn: number): string {
  const what =
    f.action === 'delete'
      ? 'deleted by the rewind'
      : f.action === 'create'
        ? 'recreated by the rewind'
        : 'now ↔ after the rewind';
  return `${f.path} (${what} to before prompt ${turn})`;
}

/** The note shown on a binary file's item instead of a diff. */
export function binaryNote(path: string): string {
  return `${path} is a binary file: no diff to show (the rewind puts it back whole).`;
}

export type ReviewPlan =
  | { kind: 'nothing'; message: string }
  | {
      kind: 'confirm';
      title: string;
      placeHolder: string;
      items: KeepOpenItem<ReviewChoice>[];
      /** The server's line, to keep in the chat: the files are left out (it may say why they cannot be restored). */
      note?: string;
    };

/**
 * The preview as a list: Rewind (and, with files changed outside the agent, Rewind and
 * overwrite them), Cancel, then the files (each opens its diff). A code rewind with no file to
 * put back has nothing to do; with the conversation too it rewinds only the conversation (the
 * code part would restore nothing, or fail where the files cannot be restored).
 */
export function reviewPlan(preview: RewindPreviewResult, mode: RewindMode): ReviewPlan {
  const message = preview.message.replace(/^PseudoClaude: /, '');
  const files = preview.files;
  if (mode === 'code' && files.length === 0) {
    return { kind: 'nothing', message };
  }
  const conflicts = files.filter((f) => f.conflict).length;
  const effective: RewindMode = mode === 'both' && files.length === 0 ? 'conversation' : mode;
  const conversation = takesConversation(effective) ? plural(preview.droppedMessages, 'message') : '';
  const parts = [
    files.length > 0 ? `restores ${plural(files.length - conflicts, 'file')}` : '',
    conversation ? `takes back ${conversation}` : '',
  ].filter(Boolean);
  const items: KeepOpenItem<ReviewChoice>[] = [
    {
      label: effective === mode ? '$(discard) Rewind' : '$(discard) Rewind the conversation',
      description:
        parts.join(', ') +
        (conflicts > 0 ? `; leaves ${plural(conflicts, 'file')} ${CONFLICT_NOTE} as ${conflicts === 1 ? 'it is' : 'they are'}` : '') +
        (effective === mode ? '' : ' (no file to restore)'),
      value: { kind: 'rewind', mode: effective, force: false },
    },
  ];
  if (conflicts > 0) {
    items.push({
      label: `$(warning) Rewind and overwrite ${plural(conflicts, 'changed file')}`,
      description: `also puts back what was ${CONFLICT_NOTE}`,
      value: { kind: 'rewind', mode: effective, force: true },
    });
  }
  items.push({ label: '$(close) Cancel', description: 'change nothing', value: { kind: 'cancel' } });
  if (files.length > 0) {
    items.push(
      { label: `${plural(files.length, 'file')}: select one to see its diff`, separator: true, value: { kind: 'cancel' } },
      ...files.map(fileItem),
    );
  }
  const prompt = oneLine(preview.prompt, 60);
  return {
    kind: 'confirm',
    title: `Rewind to before prompt ${preview.turn}${prompt ? `: “${prompt}”` : ''}`,
    placeHolder: message,
    items,
    ...(effective === mode ? {} : { note: message }),
  };
}

/**
 * The notice after a fork. `announced`: the new session's transcript already says it was forked
 * (the server's line): the notice only adds where the original is.
 */
export function forkedNotice(turn: number, announced = false): string {
  const original = 'the original session is unchanged: pick it in the session list to go back to it.';
  return announced
    ? `${original[0]?.toUpperCase()}${original.slice(1)}`
    : `Forked from prompt ${turn} into a new session (the conversation before it); ${original}`;
}
