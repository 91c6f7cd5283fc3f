/**
 * The editor as the chat and the server see it: snapshots of the active editor, its selection and
 * the open files (for the prompt box's chip), the diagnostics VS Code shows (for
 * `pseudoclaude/diagnostics` and Fix), the selection as a code action's argument (the editor's
 * context menu). The logic is in `../editorContext` and `../diagnostics`.
 */
import * as vscode from 'vscode';
import { diagnosticsOn, workspaceDiagnostics, type FileDiagnostics } from '../diagnostics';
import { relativePath, type EditorSnapshot } from '../editorContext';
import type { CodeActionArguments, Range } from '../protocol';

/** Editors that are no place the user works in: the chip stays on the file before them. */
const NOT_AN_EDITOR = new Set(['output', 'vscode-terminal', 'debug']);

function rangeOf(r: vscode.Range): Range {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function openUris(): string[] {
  const uris: string[] = [];
  const add = (uri: vscode.Uri | undefined): void => {
    if (uri && uri.scheme === 'file' && !uris.includes(uri.toString())) {
      uris.push(uri.toString());
    }
  };
  add(vscode.window.activeTextEditor?.document.uri);
  for (const e of vscode.window.visibleTextEditors) {
    add(e.document.uri);
  }
  for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
    if (tab.input instanceof vscode.TabInputText) {
      add(tab.input.uri);
    }
  }
  return uris;
}

/** The editor now; `previous`: the snapshot before (kept while an Output view has the focus). */
export function editorSnapshot(previous?: EditorSnapshot): EditorSnapshot {
  const editor = vscode.window.activeTextEditor;
  if (editor && NOT_AN_EDITOR.has(editor.document.uri.scheme)) {
    return { ...(previous ?? { open: [] }), open: openUris() };
  }
  if (!editor) {
    return { open: openUris() };
  }
  const doc = editor.document;
  const selection = editor.selection;
  return {
    active: { uri: doc.uri.toString(), selection: rangeOf(selection), selectedText: () => doc.getText(selection) },
    open: openUris(),
  };
}

/** Calls `onChange` with a new snapshot when the active editor, its selection or the open editors change (debounced). */
export function watchEditor(onChange: (s: EditorSnapshot) => void, delayMs = 60): vscode.Disposable {
  let last = editorSnapshot();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const changed = (): void => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      last = editorSnapshot(last);
      onChange(last);
    }, delayMs);
  };
  const subscriptions = [
    vscode.window.onDidChangeActiveTextEditor(changed),
    vscode.window.onDidChangeTextEditorSelection(changed),
    vscode.window.onDidChangeVisibleTextEditors(changed),
    vscode.window.tabGroups.onDidChangeTabs(changed),
  ];
  onChange(last);
  return {
    dispose: () => {
      if (timer) {
        clearTimeout(timer);
      }
      for (const s of subscriptions) {
        s.dispose();
      }
    },
  };
}

/** Every diagnostic VS Code shows, as plain data. */
export function editorDiagnostics(uri?: vscode.Uri): FileDiagnostics[] {
  const entries: [vscode.Uri, readonly vscode.Diagnostic[]][] = uri ? [[uri, vscode.languages.getDiagnostics(uri)]] : vscode.languages.getDiagnostics();
  return entries.map(([u, diagnostics]) => ({
    uri: u.toString(),
    diagnostics: diagnostics.map((d) => ({
      range: rangeOf(d.range),
      severity: d.severity,
      message: d.message,
      source: d.source,
    })),
  }));
}

/**
 * The active editor's selection as a code action's argument (the editor's context menu), with
 * its problems for Fix, and its folder; undefined without a selection in a workspace file.
 */
export function selectionArguments(withProblems: boolean): { args: CodeActionArguments; folder: string } | undefined {
  const editor = vscode.window.activeTextEditor;
  const doc = editor?.document;
  const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  if (!editor || !doc || !folder || editor.selection.isEmpty) {
    return undefined;
  }
  const path = relativePath(folder.uri.toString(), doc.uri.toString());
  if (path === undefined) {
    return undefined;
  }
  const range = rangeOf(editor.selection);
  const args: CodeActionArguments = { path, range, text: doc.getText(editor.selection) };
  if (withProblems) {
    const problems = diagnosticsOn(path, range, workspaceDiagnostics(folder.uri.toString(), editorDiagnostics(doc.uri)));
    if (problems.length > 0) {
      args.diagnostics = problems;
    }
  }
  return { args, folder: folder.uri.toString() };
}

/** The folder a code action from the server is about: the active editor's, when its file is the argument's. */
export function codeActionFolder(args: CodeActionArguments): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  if (doc && folder && relativePath(folder.uri.toString(), doc.uri.toString()) === args.path) {
    return folder.uri.toString();
  }
  return undefined;
}
