/** The editor's diagnostics on the wire (`pseudoclaude/diagnostics`, Fix from the context menu). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerDiagnostics, diagnosticsOn, severityName, workspaceDiagnostics, type FileDiagnostics } from '../src/diagnostics';
import type { Range } from '../src/protocol';

const WS = 'file:///work/app';

function range(sl: number, sc: number, el: number, ec: number): Range {
  return { start: { line: sl, character: sc }, end: { line: el, character: ec } };
}

const FILES: FileDiagnostics[] = [
  {
    uri: `${WS}/src/app.py`,
    diagnostics: [
      { range: range(9, 4, 9, 8), severity: 1, message: 'unused variable', source: 'pyright' },
      { range: range(2, 0, 2, 5), severity: 0, message: '"prnt" is not defined', source: 'pyright' },
    ],
  },
  { uri: `${WS}/README.md`, diagnostics: [{ range: range(0, 0, 0, 1), severity: 2, message: 'heading', source: '' }] },
  { uri: `${WS}/lib/util.ts`, diagnostics: [{ range: range(4, 1, 4, 2), severity: 3, message: 'could be const' }] },
  { uri: 'file:///elsewhere/x.py', diagnostics: [{ range: range(0, 0, 0, 1), severity: 0, message: 'not ours' }] },
  { uri: 'untitled:Untitled-1', diagnostics: [{ range: range(0, 0, 0, 1), severity: 0, message: 'not a file' }] },
  { uri: `${WS}/clean.py`, diagnostics: [] },
];

describe('diagnostics', () => {
  it('name VS Code\'s severities as the wire does', () => {
    assert.deepEqual([0, 1, 2, 3].map(severityName), ['error', 'warning', 'info', 'hint']);
    assert.equal(severityName(7), 'info');
  });

  it('are the folder\'s files only, relative with /, sorted, with their source when set', () => {
    assert.deepEqual(workspaceDiagnostics(WS, FILES), [
      { path: 'README.md', range: range(0, 0, 0, 1), severity: 'info', message: 'heading' },
      { path: 'lib/util.ts', range: range(4, 1, 4, 2), severity: 'hint', message: 'could be const' },
      { path: 'src/app.py', range: range(2, 0, 2, 5), severity: 'error', message: '"prnt" is not defined', source: 'pyright' },
      { path: 'src/app.py', range: range(9, 4, 9, 8), severity: 'warning', message: 'unused variable', source: 'pyright' },
    ]);
    assert.deepEqual(workspaceDiagnostics('file:///nowhere', FILES), []);
  });

  it('are only the asked paths when the request names some', () => {
    const r = answerDiagnostics({ workspace: `${WS}/`, paths: ['src/app.py', './lib/util.ts', 'missing.py'] }, FILES);
    assert.deepEqual(r.diagnostics.map((d) => [d.path, d.range.start.line]), [['lib/util.ts', 4], ['src/app.py', 2], ['src/app.py', 9]]);
    assert.deepEqual(answerDiagnostics({ workspace: WS, paths: [] }, FILES), { diagnostics: [] });
    assert.equal(answerDiagnostics({ workspace: WS }, FILES).diagnostics.length, 4);
  });

  it('on a selection: the problems that touch it (Fix from the editor\'s menu)', () => {
    const all = workspaceDiagnostics(WS, FILES);
    assert.deepEqual(diagnosticsOn('src/app.py', range(1, 0, 3, 0), all).map((d) => d.message), ['"prnt" is not defined']);
    assert.deepEqual(diagnosticsOn('src/app.py', range(20, 0, 21, 0), all), []);
    assert.deepEqual(diagnosticsOn('README.md', range(0, 0, 5, 0), all).map((d) => d.path), ['README.md']);
  });
});
