/**
 * What the user is looking at, as a prompt carries it (`RunParams.context`): the active file of
 * the workspace folder, its selection, the other open files. `EditorTracker` follows the editor
 * (the adapter feeds it snapshots) and answers the chip the prompt box shows and the context a
 * prompt is sent with; the user can remove the chip (×) until the active editor or the selection
 * changes. Also the code actions' commands (`CodeActions`: Explain, Fix, Ask about selection).
 * Pure: no `vscode` import.
 */
import {
  CodeActionPrompts,
  CodeActions,
  type CodeActionArguments,
  type Diagnostic,
  type EditorContext,
  type Position,
  type Range,
  type Selection,
} from './protocol';
import { normalizeUri, sameUri } from './uri';

/** At most this many open files go with a prompt (the server names no more). */
export const MAX_OPEN_FILES = 20;
/** A selection's text is cut to this many characters (the model reads far fewer: the server cuts again). */
export const MAX_SELECTION_CHARS = 32_000;

/**
 * The path of a `file:` URI relative to a folder URI, with `/`; undefined when it is not a file
 * of that folder (another scheme, outside it, the folder itself) or cannot be named on the wire.
 */
export function relativePath(folderUri: string, fileUri: string): string | undefined {
  if (!/^file:/i.test(fileUri) || !/^file:/i.test(folderUri)) {
    return undefined;
  }
  const folder = normalizeUri(folderUri);
  const file = normalizeUri(fileUri.replace(/[?#].*$/, ''));
  if (!file.startsWith(`${folder}/`)) {
    return undefined;
  }
  const path = file.slice(folder.length + 1);
  if (path === '' || path.includes('\\') || path.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    return undefined;
  }
  return path;
}

function samePosition(a: Position, b: Position): boolean {
  return a.line === b.line && a.character === b.character;
}

export function isEmptyRange(r: Range): boolean {
  return samePosition(r.start, r.end);
}

/** `"12"` or `"12-15"`: the 1-based lines a range covers (an end at the start of a line does not count that line). */
export function lineSpan(r: Range): string {
  const first = r.start.line + 1;
  const last = r.end.line + (r.end.character > 0 || r.end.line === r.start.line ? 1 : 0);
  return last <= first ? String(first) : `${first}-${last}`;
}

/** `src/app.py:10-14` (a selection) or `src/app.py`. */
export function locationLabel(path: string, range?: Range): string {
  return range && !isEmptyRange(range) ? `${path}:${lineSpan(range)}` : path;
}

// ------------------------------------------------------------------------------------ the editor

/** The editor as the adapter sees it at one moment. */
export interface EditorSnapshot {
  /** The active text editor: its document's URI and its (primary) selection. */
  active?: {
    uri: string;
    selection: Range;
    /** The selected text (read when a prompt is sent). */
    selectedText(): string;
  };
  /** The URIs of the open text editors (tabs and visible editors), the active one first. */
  open: readonly string[];
}

/** What the prompt box shows: the file (and its selection) that goes with the next prompt. */
export interface EditorChip {
  path: string;
  /** The selection's lines (`10-14`), when there is one. */
  lines?: string;
  label: string;
  /** Its tooltip: what is sent. */
  title: string;
}

function keyOf(s: EditorSnapshot): string {
  const a = s.active;
  if (!a) {
    return '';
  }
  const r = a.selection;
  return `${a.uri}\n${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
}

function cut(text: string): string {
  return text.length > MAX_SELECTION_CHARS ? text.slice(0, MAX_SELECTION_CHARS) : text;
}

/** The open files of `folder` (relative, each once, the first `MAX_OPEN_FILES`). */
export function openFilesOf(folder: string, uris: readonly string[]): string[] {
  const out: string[] = [];
  for (const uri of uris) {
    const path = relativePath(folder, uri);
    if (path !== undefined && !out.includes(path)) {
      out.push(path);
      if (out.length === MAX_OPEN_FILES) {
        break;
      }
    }
  }
  return out;
}

/** The chip of a context: `src/app.py:10-14`, with a tooltip saying what was sent. */
export function contextChip(c: EditorContext): EditorChip | null {
  const path = c.selection?.path ?? c.activeFile;
  const range = c.selection && !isEmptyRange(c.selection.range) ? c.selection.range : undefined;
  const problems = c.diagnostics?.length ?? 0;
  const open = (c.openFiles ?? []).filter((f) => f !== path);
  const said: string[] = [];
  if (path !== undefined) {
    said.push(range ? `${path}, lines ${lineSpan(range)} selected` : path);
  }
  if (problems > 0) {
    said.push(`${problems} ${problems === 1 ? 'problem' : 'problems'} the editor reports`);
  }
  if (open.length > 0) {
    said.push(`open files: ${open.join(', ')}`);
  }
  if (path === undefined) {
    return open.length > 0
      ? { path: '', label: `${open.length} open ${open.length === 1 ? 'file' : 'files'}`, title: `Sent with ${said.join('; ')}` }
      : null;
  }
  return {
    path,
    ...(range ? { lines: lineSpan(range) } : {}),
    label: locationLabel(path, range),
    title: `Sent with ${said.join('; ')}`,
  };
}

/**
 * Follows the editor for the chat: the chip of the active file (and selection) of a folder, the
 * context a prompt carries, an × that leaves it out until the active editor or the selection
 * changes, and a selection a code action attached (kept until then too).
 */
export class EditorTracker {
  private snapshot: EditorSnapshot = { open: [] };
  private removed = false;
  private attached: { folder: string; selection: Selection } | undefined;

  /** A new snapshot of the editor; a new active editor or selection brings a removed chip back. */
  update(next: EditorSnapshot): void {
    if (keyOf(next) !== keyOf(this.snapshot)) {
      this.removed = false;
      this.attached = undefined;
    }
    this.snapshot = next;
  }

  /** The chip's ×: no context with the next prompts (until the editor or the selection changes). */
  remove(): void {
    this.removed = true;
    this.attached = undefined;
  }

  get isRemoved(): boolean {
    return this.removed;
  }

  /** A code action's selection (a path of `folder`), shown and sent instead of the editor's. */
  attach(folder: string, selection: Selection): void {
    this.removed = false;
    this.attached = { folder, selection: { ...selection, text: cut(selection.text) } };
  }

  /** The chip the prompt box shows for `folder` (null: none, or removed). */
  chip(folder: string | undefined): EditorChip | null {
    const context = folder === undefined ? undefined : this.build(folder, false);
    const chip = context?.activeFile === undefined ? null : contextChip(context);
    return chip ? { ...chip, title: chip.title.replace(/^Sent with /, 'Goes with your prompt: ') } : null;
  }

  /** What a prompt sent now in `folder` carries (undefined: nothing, the chip was removed or there is none). */
  context(folder: string): EditorContext | undefined {
    return this.build(folder, true);
  }

  /** The context for `folder`; without `readText` the selection's text is left empty (the chip needs none). */
  private build(folder: string, readText: boolean): EditorContext | undefined {
    if (this.removed) {
      return undefined;
    }
    const openFiles = openFilesOf(folder, this.snapshot.open);
    const withOpen = (c: EditorContext): EditorContext => (openFiles.length > 0 ? { ...c, openFiles } : c);
    if (this.attached && sameUri(this.attached.folder, folder)) {
      const selection = this.attached.selection;
      return withOpen({ activeFile: selection.path, selection });
    }
    const active = this.snapshot.active;
    const path = active ? relativePath(folder, active.uri) : undefined;
    if (!active || path === undefined) {
      return undefined;
    }
    if (isEmptyRange(active.selection)) {
      return withOpen({ activeFile: path });
    }
    const selection: Selection = { path, range: active.selection, text: readText ? cut(active.selectedText()) : '' };
    return withOpen({ activeFile: path, selection });
  }
}

// ------------------------------------------------------------------------------------ code actions

export type CodeActionCommand = keyof typeof CodeActions;

export const CODE_ACTION_COMMANDS = Object.keys(CodeActions) as CodeActionCommand[];

export function isCodeActionCommand(name: unknown): name is CodeActionCommand {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(CodeActions, name);
}

function isPosition(v: unknown): v is Position {
  const p = v as Position;
  return (
    typeof v === 'object' && v !== null &&
    Number.isSafeInteger(p.line) && p.line >= 0 &&
    Number.isSafeInteger(p.character) && p.character >= 0
  );
}

export function isRange(v: unknown): v is Range {
  const r = v as Range;
  return typeof v === 'object' && v !== null && isPosition(r.start) && isPosition(r.end);
}

function isDiagnostic(v: unknown): v is Diagnostic {
  const d = v as Diagnostic;
  return (
    typeof v === 'object' && v !== null && typeof d.path === 'string' && isRange(d.range) &&
    ['error', 'warning', 'info', 'hint'].includes(d.severity) && typeof d.message === 'string' &&
    (d.source === undefined || typeof d.source === 'string')
  );
}

/**
 * A code action's argument (from the server: untrusted shape), checked; undefined when it is not
 * one (the editor's context menu passes the document's URI instead).
 */
export function codeActionArguments(v: unknown): CodeActionArguments | undefined {
  const a = v as CodeActionArguments;
  if (typeof v !== 'object' || v === null || typeof a.path !== 'string' || a.path === '' || !isRange(a.range) || typeof a.text !== 'string') {
    return undefined;
  }
  const diagnostics = Array.isArray(a.diagnostics) ? a.diagnostics.filter(isDiagnostic) : undefined;
  return {
    path: a.path,
    range: { start: { ...a.range.start }, end: { ...a.range.end } },
    text: a.text,
    ...(diagnostics && diagnostics.length > 0 ? { diagnostics } : {}),
  };
}

/** An editor context from the server (a transcript's prompt): its well-formed parts, or undefined. */
export function cleanContext(v: unknown): EditorContext | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return undefined;
  }
  const c = v as Record<string, unknown>;
  const out: EditorContext = {};
  if (typeof c.activeFile === 'string' && c.activeFile !== '') {
    out.activeFile = c.activeFile;
  }
  const s = c.selection as Selection | undefined;
  if (typeof s === 'object' && s !== null && typeof s.path === 'string' && isRange(s.range) && typeof s.text === 'string') {
    out.selection = { path: s.path, range: s.range, text: s.text };
  }
  if (Array.isArray(c.openFiles)) {
    const files = c.openFiles.filter((f): f is string => typeof f === 'string' && f !== '');
    if (files.length > 0) {
      out.openFiles = files;
    }
  }
  if (Array.isArray(c.diagnostics)) {
    const problems = c.diagnostics.filter(isDiagnostic);
    if (problems.length > 0) {
      out.diagnostics = problems;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * What a code action does with its selection: Explain and Fix send their prompt at once with the
 * selection (Fix with its problems); Ask attaches the selection and waits for the question.
 */
export function codeActionPlan(
  command: CodeActionCommand,
  args: CodeActionArguments,
): { send: false } | { send: true; prompt: string; context: EditorContext } {
  const prompt = CodeActionPrompts[command];
  if (prompt === '') {
    return { send: false };
  }
  const selection: Selection = { path: args.path, range: args.range, text: cut(args.text) };
  const context: EditorContext = { activeFile: args.path, selection };
  if (command === 'pseudoclaude.codeAction.fix' && args.diagnostics && args.diagnostics.length > 0) {
    context.diagnostics = args.diagnostics;
  }
  return { send: true, prompt, context };
}

/** Whether two ranges share a position (a problem on the selection's lines: for Fix from the menu). */
export function rangesTouch(a: Range, b: Range): boolean {
  const before = (p: Position, q: Position): boolean => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}
