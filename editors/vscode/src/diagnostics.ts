/**
 * The editor's diagnostics on the wire (`pseudoclaude/diagnostics`, the Fix code action): what
 * `vscode.languages.getDiagnostics()` lists, as plain data from the adapter, mapped to the
 * workspace folder's `Diagnostic`s (paths relative with `/`). Pure: no `vscode` import.
 */
import { rangesTouch, relativePath } from './editorContext';
import type { Diagnostic, DiagnosticsParams, Range, Severity } from './protocol';

/** One file's diagnostics as the editor has them (`severity`: VS Code's `DiagnosticSeverity`). */
export interface FileDiagnostics {
  uri: string;
  diagnostics: readonly EditorDiagnostic[];
}

export interface EditorDiagnostic {
  range: Range;
  /** 0 error, 1 warning, 2 information, 3 hint (`vscode.DiagnosticSeverity`). */
  severity: number;
  message: string;
  source?: string | undefined;
}

const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info', 'hint'];

/** VS Code's `DiagnosticSeverity` as the wire names it (an unknown one: `info`). */
export function severityName(severity: number): Severity {
  return SEVERITIES[severity] ?? 'info';
}

function wanted(paths: readonly string[] | undefined): ((path: string) => boolean) | undefined {
  if (paths === undefined) {
    return undefined;
  }
  const set = new Set(paths.map((p) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, '')));
  return (path) => set.has(path);
}

/**
 * The diagnostics of the files under `workspace` (only `paths` when given), sorted by path and
 * position, each as the wire has it.
 */
export function workspaceDiagnostics(
  workspace: string,
  files: readonly FileDiagnostics[],
  paths?: readonly string[],
): Diagnostic[] {
  const only = wanted(paths);
  const out: Diagnostic[] = [];
  for (const file of files) {
    const path = relativePath(workspace, file.uri);
    if (path === undefined || (only && !only(path))) {
      continue;
    }
    for (const d of file.diagnostics) {
      const source = typeof d.source === 'string' && d.source !== '' ? d.source : undefined;
      out.push({
        path,
        range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
        severity: severityName(d.severity),
        message: d.message,
        ...(source !== undefined ? { source } : {}),
      });
    }
  }
  return out.sort(
    (a, b) =>
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character,
  );
}

/** The answer to `pseudoclaude/diagnostics`. */
export function answerDiagnostics(params: DiagnosticsParams, files: readonly FileDiagnostics[]): { diagnostics: Diagnostic[] } {
  const paths = Array.isArray(params.paths) ? params.paths.filter((p): p is string => typeof p === 'string') : undefined;
  return { diagnostics: workspaceDiagnostics(params.workspace, files, paths) };
}

/** The problems of `path` on `range` (Fix from the editor's menu: the selection's). */
export function diagnosticsOn(path: string, range: Range, all: readonly Diagnostic[]): Diagnostic[] {
  return all.filter((d) => d.path === path && rangesTouch(d.range, range));
}
