/** The editor context a prompt carries: paths, the chip, its removal, the code actions' commands. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cleanContext,
  codeActionArguments,
  codeActionPlan,
  CODE_ACTION_COMMANDS,
  contextChip,
  EditorTracker,
  isCodeActionCommand,
  lineSpan,
  locationLabel,
  MAX_OPEN_FILES,
  MAX_SELECTION_CHARS,
  openFilesOf,
  rangesTouch,
  relativePath,
} from '../src/editorContext';
import { isFromWebview } from '../src/chat/messages';
import { CodeActionPrompts, CodeActions, type Range } from '../src/protocol';
import { fakeEditor } from './fakes';

const WS = 'file:///work/app';
const APP = `${WS}/src/app.py`;
const TEXT = ['import os', '', 'def main():', '    print("hi")', '    return 0', ''].join('\n');

function range(sl: number, sc: number, el: number, ec: number): Range {
  return { start: { line: sl, character: sc }, end: { line: el, character: ec } };
}

describe('relativePath', () => {
  it('names a file of the folder relative to it, with /', () => {
    assert.equal(relativePath(WS, APP), 'src/app.py');
    assert.equal(relativePath(`${WS}/`, `${WS}/README.md`), 'README.md');
    assert.equal(relativePath('file:///work/my%20app', 'file:///work/my%20app/a%20b.txt'), 'a b.txt');
    assert.equal(relativePath('file:///c%3A/proj', 'file:///c%3A/proj/src/x.ts'), 'src/x.ts');
    assert.equal(relativePath('file:///C:/proj', 'file:///c%3A/proj/src/x.ts'), 'src/x.ts', 'a drive letter in either case');
  });
  it('answers nothing for other folders, other schemes, the folder itself and names the wire refuses', () => {
    assert.equal(relativePath(WS, 'file:///work/application/x.py'), undefined, 'a prefix is not a parent');
    assert.equal(relativePath(WS, 'file:///elsewhere/x.py'), undefined);
    assert.equal(relativePath(WS, 'untitled:Untitled-1'), undefined);
    assert.equal(relativePath(WS, 'vscode-notebook-cell:/work/app/x.ipynb#1'), undefined);
    assert.equal(relativePath(WS, 'pseudoclaude-diff:/ap1/README.md'), undefined);
    assert.equal(relativePath(WS, WS), undefined);
    assert.equal(relativePath(WS, `${WS}/a%5Cb.py`), undefined, 'a backslash in a name');
    assert.equal(relativePath(WS, `${WS}/src/../../etc/passwd`), undefined);
  });
});

describe('lines and labels', () => {
  it('counts the lines a range covers, 1-based, as the server does', () => {
    assert.equal(lineSpan(range(9, 0, 13, 12)), '10-14');
    assert.equal(lineSpan(range(9, 0, 14, 0)), '10-14', 'an end at the start of a line does not count it');
    assert.equal(lineSpan(range(4, 2, 4, 9)), '5');
    assert.equal(lineSpan(range(4, 0, 5, 0)), '5');
    assert.equal(locationLabel('src/app.py', range(9, 0, 13, 3)), 'src/app.py:10-14');
    assert.equal(locationLabel('src/app.py', range(3, 4, 3, 4)), 'src/app.py', 'an empty selection: the file');
    assert.equal(locationLabel('src/app.py'), 'src/app.py');
  });
  it('describes a context as a chip: the selection, the problems, the open files', () => {
    const chip = contextChip({
      activeFile: 'src/app.py',
      selection: { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'x' },
      openFiles: ['src/app.py', 'README.md'],
      diagnostics: [{ path: 'src/app.py', range: range(3, 4, 3, 9), severity: 'error', message: 'bad' }],
    });
    assert.deepEqual(chip, {
      path: 'src/app.py',
      lines: '3-5',
      label: 'src/app.py:3-5',
      title: 'Sent with src/app.py, lines 3-5 selected; 1 problem the editor reports; open files: README.md',
    });
    assert.equal(contextChip({ activeFile: 'a.py' })?.label, 'a.py');
    assert.equal(contextChip({ openFiles: ['a.py', 'b.py'] })?.label, '2 open files');
    assert.equal(contextChip({}), null);
  });
});

describe('EditorTracker', () => {
  it('shows the active file of the folder, with its selection when there is one', () => {
    const t = new EditorTracker();
    assert.equal(t.chip(WS), null, 'no editor yet');
    t.update(fakeEditor({ uri: APP, text: TEXT }));
    assert.equal(t.chip(WS)?.label, 'src/app.py');
    assert.deepEqual(t.context(WS), { activeFile: 'src/app.py', openFiles: ['src/app.py'] });
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }, [`${WS}/README.md`, 'file:///elsewhere/x.py', 'untitled:Untitled-1']));
    const chip = t.chip(WS);
    assert.equal(chip?.label, 'src/app.py:3-5');
    assert.equal(chip?.lines, '3-5');
    assert.match(chip?.title ?? '', /^Goes with your prompt: src\/app.py, lines 3-5 selected; open files: README.md$/);
    assert.deepEqual(t.context(WS), {
      activeFile: 'src/app.py',
      selection: { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'def main():\n    print("hi")\n    return 0' },
      openFiles: ['src/app.py', 'README.md'],
    });
  });

  it('shows nothing for a file of another folder or scheme, or without an editor', () => {
    const t = new EditorTracker();
    t.update(fakeEditor({ uri: 'file:///elsewhere/x.py', text: 'x', selection: [0, 0, 0, 1] }, [APP]));
    assert.equal(t.chip(WS), null);
    assert.equal(t.context(WS), undefined, 'no chip: nothing is sent (not even the open files)');
    t.update(fakeEditor({ uri: 'untitled:Untitled-1', text: 'x' }));
    assert.equal(t.chip(WS), null);
    t.update(fakeEditor(undefined, [APP]));
    assert.equal(t.chip(WS), null);
    assert.equal(t.chip(undefined), null, 'no folder');
  });

  it('×: nothing goes with the next prompts until the active editor or the selection changes', () => {
    const t = new EditorTracker();
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }));
    t.remove();
    assert.equal(t.chip(WS), null);
    assert.equal(t.context(WS), undefined);
    assert.equal(t.isRemoved, true);
    // The same editor and selection again (the open files changed, the view came back): still removed.
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }, [`${WS}/README.md`]));
    assert.equal(t.context(WS), undefined);
    assert.equal(t.context(WS), undefined, 'the next prompt too');
    // Another selection: the chip is back.
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [0, 0, 0, 9] }));
    assert.equal(t.chip(WS)?.label, 'src/app.py:1');
    t.remove();
    // Another active editor: back too.
    t.update(fakeEditor({ uri: `${WS}/README.md`, text: '# x' }));
    assert.equal(t.chip(WS)?.label, 'README.md');
    assert.equal(t.isRemoved, false);
  });

  it('keeps a code action\'s selection until the editor moves; × drops it', () => {
    const t = new EditorTracker();
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [3, 4, 3, 4] }));
    t.attach(WS, { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'def main(): ...' });
    assert.equal(t.chip(WS)?.label, 'src/app.py:3-5');
    assert.equal(t.chip('file:///other'), null, 'only in its folder');
    assert.deepEqual(t.context(WS)?.selection, { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'def main(): ...' });
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [3, 4, 3, 4] }, [`${WS}/README.md`]));
    assert.equal(t.chip(WS)?.label, 'src/app.py:3-5', 'the open files changed, not the selection');
    t.update(fakeEditor({ uri: APP, text: TEXT, selection: [0, 0, 0, 0] }));
    assert.equal(t.chip(WS)?.label, 'src/app.py', 'the caret moved: the editor\'s chip again');
    t.attach(WS, { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'x' });
    t.remove();
    assert.equal(t.chip(WS), null);
  });

  it('sends at most 20 open files and cuts a huge selection', () => {
    const open = Array.from({ length: 30 }, (_, i) => `${WS}/f${i}.ts`);
    assert.equal(openFilesOf(WS, [...open, ...open]).length, MAX_OPEN_FILES);
    const huge = 'x'.repeat(MAX_SELECTION_CHARS + 10);
    const t = new EditorTracker();
    t.update(fakeEditor({ uri: APP, text: huge, selection: [0, 0, 0, huge.length] }, open));
    const c = t.context(WS);
    assert.equal(c?.selection?.text.length, MAX_SELECTION_CHARS);
    assert.equal(c?.openFiles?.length, MAX_OPEN_FILES);
    assert.equal(c?.openFiles?.[0], 'src/app.py', 'the active file first');
  });

  it('reads the selected text only when a prompt is sent', () => {
    let reads = 0;
    const t = new EditorTracker();
    t.update({
      active: { uri: APP, selection: range(0, 0, 0, 3), selectedText: () => { reads++; return 'imp'; } },
      open: [APP],
    });
    t.chip(WS);
    assert.equal(reads, 0);
    assert.equal(t.context(WS)?.selection?.text, 'imp');
    assert.equal(reads, 1);
  });
});

describe('code actions', () => {
  const ARGS = { path: 'src/app.py', range: range(2, 0, 4, 12), text: 'def main():\n    ...' };
  const PROBLEM = { path: 'src/app.py', range: range(3, 4, 3, 9), severity: 'error' as const, message: '"prnt" is not defined', source: 'pyright' };

  it('are the three commands of the protocol', () => {
    assert.deepEqual(CODE_ACTION_COMMANDS, Object.keys(CodeActions));
    assert.equal(isCodeActionCommand('pseudoclaude.codeAction.fix'), true);
    assert.equal(isCodeActionCommand('pseudoclaude.codeAction.nope'), false);
    assert.equal(isCodeActionCommand('toString'), false);
  });

  it('check their argument: a selection, its problems well formed; anything else is not one', () => {
    assert.deepEqual(codeActionArguments(ARGS), ARGS);
    assert.deepEqual(
      codeActionArguments({ ...ARGS, diagnostics: [PROBLEM, { path: 'x', message: 'no range' }, 'junk'] }),
      { ...ARGS, diagnostics: [PROBLEM] },
    );
    assert.deepEqual(codeActionArguments({ ...ARGS, diagnostics: [] }), ARGS, 'no empty list');
    // The editor's context menu passes the document's URI (it has a `path` too).
    assert.equal(codeActionArguments({ scheme: 'file', path: '/work/app/src/app.py', fsPath: '/work/app/src/app.py' }), undefined);
    assert.equal(codeActionArguments(undefined), undefined);
    assert.equal(codeActionArguments({ ...ARGS, range: { start: { line: -1, character: 0 }, end: { line: 0, character: 0 } } }), undefined);
    assert.equal(codeActionArguments({ ...ARGS, path: '' }), undefined);
    assert.equal(codeActionArguments({ ...ARGS, text: 3 }), undefined);
  });

  it('Explain and Fix send their prompt with the selection (Fix with its problems); Ask sends nothing', () => {
    assert.deepEqual(codeActionPlan('pseudoclaude.codeAction.explain', { ...ARGS, diagnostics: [PROBLEM] }), {
      send: true,
      prompt: CodeActionPrompts['pseudoclaude.codeAction.explain'],
      context: { activeFile: 'src/app.py', selection: ARGS },
    });
    assert.deepEqual(codeActionPlan('pseudoclaude.codeAction.fix', { ...ARGS, diagnostics: [PROBLEM] }), {
      send: true,
      prompt: 'Fix the problems in the selected code.',
      context: { activeFile: 'src/app.py', selection: ARGS, diagnostics: [PROBLEM] },
    });
    assert.deepEqual(codeActionPlan('pseudoclaude.codeAction.fix', ARGS), {
      send: true,
      prompt: 'Fix the problems in the selected code.',
      context: { activeFile: 'src/app.py', selection: ARGS },
    });
    assert.deepEqual(codeActionPlan('pseudoclaude.codeAction.ask', ARGS), { send: false });
  });

  it('find the problems on a selection', () => {
    assert.equal(rangesTouch(range(2, 0, 4, 12), range(3, 4, 3, 9)), true);
    assert.equal(rangesTouch(range(2, 0, 4, 12), range(4, 12, 4, 14)), true, 'touching at the end');
    assert.equal(rangesTouch(range(2, 0, 4, 12), range(5, 0, 5, 3)), false);
    assert.equal(rangesTouch(range(2, 0, 4, 12), range(0, 0, 1, 9)), false);
  });
});

describe('cleanContext', () => {
  it('keeps the well-formed parts of a transcript prompt\'s context', () => {
    assert.deepEqual(
      cleanContext({ activeFile: 'a.py', selection: { path: 'a.py', range: 'bad', text: 'x' }, openFiles: ['a.py', 3], diagnostics: 'x' }),
      { activeFile: 'a.py', openFiles: ['a.py'] },
    );
    assert.equal(cleanContext(null), undefined);
    assert.equal(cleanContext([]), undefined);
    assert.equal(cleanContext({}), undefined);
  });
});

describe('the chip\'s ×', () => {
  it('is a message of the webview', () => {
    assert.equal(isFromWebview({ type: 'removeChip' }), true);
  });
});
