/**
 * The messages between the extension host and the chat webview (`postMessage` both ways), typed.
 * Host → webview: the reducer's actions (`ChatAction`), a whole state (`restore`) and `focus`.
 * Webview → host: what the user did. `isFromWebview` checks what arrives from the webview (it is
 * untrusted input as far as the host is concerned).
 */
import { isPlanMode, type ChatAction, type ChatState, type PlanMode } from './model';
import { isMode } from '../permissions';
import type { ApprovalDecision, PermissionMode } from '../protocol';

export type ToWebview =
  | ChatAction
  /** The whole state: after the webview loaded, a reload from the log, a resume. */
  | { type: 'restore'; state: ChatState }
  /**
   * Put the caret in the prompt box (the view was opened by a command), with `text` in it when
   * given (`keepDraft`: only when the box is empty: a rewound or forked prompt).
   */
  | { type: 'focus'; text?: string; keepDraft?: boolean };

export type FromWebview =
  /** The webview loaded and waits for `restore`. */
  | { type: 'ready' }
  | { type: 'send'; prompt: string }
  | { type: 'cancel' }
  /** Compact: ask the server for the preview first. */
  | { type: 'compactPreview' }
  /** The preview card's Compact button (with optional instructions for the summary). */
  | { type: 'compactConfirm'; id: string; instructions?: string }
  | { type: 'compactCancel'; id: string }
  | { type: 'undo' }
  | { type: 'newSession' }
  | { type: 'resume'; sessionId: string }
  | { type: 'folder'; uri: string }
  /**
   * An approval card's answer; `message`: a denial's words for the agent (why, or what to do
   * instead), or a plan's feedback (`keepPlanning`); `mode`: what an approved plan runs in.
   */
  | { type: 'approve'; id: string; decision: ApprovalDecision; message?: string; mode?: PlanMode }
  /** The mode picker (or Shift+Tab in the prompt box): the permission mode of the session shown. */
  | { type: 'setMode'; mode: PermissionMode }
  /** Open the diff of a write approval again. */
  | { type: 'showDiff'; id: string }
  | { type: 'copy'; text: string }
  | { type: 'openLink'; href: string }
  | { type: 'refresh' }
  /** A prompt's "Rewind to here…" (its number, as the server counts prompts). */
  | { type: 'rewind'; turn: number }
  /** A prompt's "Fork from here". */
  | { type: 'fork'; turn: number }
  /** The header's MCP button: the MCP menu. */
  | { type: 'mcp' }
  /** The × of the prompt box's chip: the next prompts go without the editor's context. */
  | { type: 'removeChip' }
  /** A busy card's buttons: Fork (send in a copy of the session), Wait (send when it is free), Cancel (stop waiting). */
  | { type: 'busyFork'; id: string }
  | { type: 'busyWait'; id: string }
  | { type: 'busyCancel'; id: string }
  /** The worktree line's buttons. */
  | { type: 'worktreeChanges' }
  | { type: 'worktreeApply' }
  | { type: 'worktreeRemove' }
  /**
   * A sub-agent's Stop: a background one (a task) is stopped by itself; a foreground one (or one
   * not known yet, `agentId` empty) stops with the run.
   */
  | { type: 'stopAgent'; agentId: string; background: boolean }
  /** A sub-agent's Open transcript: its conversation in the PseudoClaude output. */
  | { type: 'agentTranscript'; agentId: string };

const DECISIONS: readonly string[] = ['allowOnce', 'allowSession', 'allowAlways', 'deny', 'approve', 'keepPlanning'];

function str(v: unknown): v is string {
  return typeof v === 'string';
}

/** A prompt's number: a positive integer. */
function turn(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

/** Whether `m` is a well-formed webview message (fields of the right types). */
export function isFromWebview(m: unknown): m is FromWebview {
  if (typeof m !== 'object' || m === null) {
    return false;
  }
  const o = m as Record<string, unknown>;
  switch (o.type) {
    case 'ready':
    case 'cancel':
    case 'compactPreview':
    case 'undo':
    case 'newSession':
    case 'refresh':
    case 'mcp':
    case 'removeChip':
    case 'worktreeChanges':
    case 'worktreeApply':
    case 'worktreeRemove':
      return true;
    case 'send':
      return str(o.prompt);
    case 'compactConfirm':
      return str(o.id) && (o.instructions === undefined || str(o.instructions));
    case 'compactCancel':
    case 'showDiff':
    case 'busyFork':
    case 'busyWait':
    case 'busyCancel':
      return str(o.id);
    case 'resume':
      return str(o.sessionId);
    case 'folder':
      return str(o.uri);
    case 'approve':
      return (
        str(o.id) &&
        str(o.decision) &&
        DECISIONS.includes(o.decision) &&
        (o.message === undefined || str(o.message)) &&
        (o.mode === undefined || isPlanMode(o.mode))
      );
    case 'setMode':
      return isMode(o.mode);
    case 'copy':
      return str(o.text);
    case 'openLink':
      return str(o.href);
    case 'rewind':
    case 'fork':
      return turn(o.turn);
    case 'stopAgent':
      return str(o.agentId) && typeof o.background === 'boolean';
    case 'agentTranscript':
      return str(o.agentId) && o.agentId !== '';
    default:
      return false;
  }
}
