/** Rewind and fork in the chat: `/rewind`'s arguments, the picks, the prompts' numbers and actions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DiffStore, REWIND_SCHEME, diffUris, pathOf } from '../src/chat/diffs';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, fromItems, numberPrompts, reduce, type ChatState } from '../src/chat/model';
import { renderItem } from '../src/chat/render';
import {
  REWIND_USAGE,
  binaryNote,
  fileItem,
  forkedNotice,
  modeItems,
  parseRewind,
  reviewPlan,
  rewindDiffTitle,
  turnItems,
} from '../src/chat/rewind';
import { RUNNABLE, parseSlash } from '../src/chat/slash';
import type { RewindPreviewResult } from '../src/protocol';

const folder = { uri: 'file:///work/app', name: 'app' };

describe('/rewind', () => {
  it('is a command the chat runs', () => {
    assert.ok((RUNNABLE as readonly string[]).includes('rewind'));
    assert.deepEqual(parseSlash('/rewind 2 code', [{ name: 'rewind', description: 'Rewind' }]), { name: 'rewind', argument: '2 code' });
  });
  it('takes a prompt\'s number and a mode, in any order, each optional', () => {
    assert.deepEqual(parseRewind(''), {});
    assert.deepEqual(parseRewind('3'), { turn: 3 });
    assert.deepEqual(parseRewind('  2   code '), { turn: 2, mode: 'code' });
    assert.deepEqual(parseRewind('Conversation 4'), { turn: 4, mode: 'conversation' });
    assert.deepEqual(parseRewind('both'), { mode: 'both' });
  });
  it('says what it accepts otherwise', () => {
    for (const bad of ['0', '-1', 'two', '2 3', 'code both', '2.5', '2 code please']) {
      const r = parseRewind(bad);
      assert.ok('error' in r, bad);
      assert.ok(r.error.startsWith(REWIND_USAGE), r.error);
    }
    const r = parseRewind('2 everything');
    assert.ok('error' in r && r.error.endsWith('"everything" is neither.'));
  });
});

describe('the rewind picks', () => {
  const NOW = new Date('2025-06-10T12:00:00Z');
  it('lists the prompts newest first, with the files each changed and when', () => {
    const items = turnItems([
      { turn: 1, prompt: 'hello\nthere', ts: NOW.getTime() / 1000 - 7200, filesChanged: 0 },
      { turn: 2, prompt: 'add a changelog', ts: NOW.getTime() / 1000 - 30, filesChanged: 1 },
    ], NOW);
    assert.deepEqual(items.map((i) => [i.label, i.description, i.value]), [
      ['2. add a changelog', '1 file changed · just now', 2],
      ['1. hello there', 'no file changed · 2 h ago', 1],
    ]);
  });
  it('offers both, the conversation only, the code only; the code ones say why files cannot be restored', () => {
    assert.deepEqual(modeItems().map((i) => [i.value, i.detail]), [['both', undefined], ['conversation', undefined], ['code', undefined]]);
    const off = modeItems({ covers: 'all', skipped: [], problem: 'The files cannot be restored: checkpoints are off.' });
    assert.deepEqual(off.map((i) => i.detail), ['The files cannot be restored: checkpoints are off.', undefined, 'The files cannot be restored: checkpoints are off.']);
  });
  it('labels each file with what the rewind does to it, conflicts marked; choosing one keeps the list', () => {
    assert.deepEqual(fileItem({ path: 'a.ts', action: 'restore', conflict: false }), {
      label: '$(file) a.ts', description: 'restored', keepOpen: true, value: { kind: 'file', path: 'a.ts' },
    });
    assert.equal(fileItem({ path: 'new.ts', action: 'delete', conflict: false }).description, 'deleted');
    assert.equal(fileItem({ path: 'gone.ts', action: 'create', conflict: true }).description, 'recreated · changed outside the agent');
    assert.equal(fileItem({ path: 'gone.ts', action: 'create', conflict: true }).label, '$(warning) gone.ts');
    assert.equal(rewindDiffTitle({ path: 'gone.ts', action: 'create' }, 3), 'gone.ts (recreated by the rewind to before prompt 3)');
    assert.match(binaryNote('logo.png'), /^logo.png is a binary file: no diff to show/);
  });
  const PREVIEW: RewindPreviewResult = {
    turn: 2, prompt: 'add a changelog', droppedMessages: 3, files: [{ path: 'a.ts', action: 'restore', conflict: false }],
    message: 'PseudoClaude: Rewind would take 1 file back to before prompt 2 and the conversation back to before prompt 2 (3 messages taken back).',
  };
  it('confirms with Rewind and Cancel, the server\'s line as the placeholder, the files under them', () => {
    const plan = reviewPlan(PREVIEW, 'both');
    assert.equal(plan.kind, 'confirm');
    if (plan.kind !== 'confirm') {
      return;
    }
    assert.equal(plan.title, 'Rewind to before prompt 2: “add a changelog”');
    assert.equal(plan.placeHolder, 'Rewind would take 1 file back to before prompt 2 and the conversation back to before prompt 2 (3 messages taken back).');
    assert.deepEqual(plan.items.map((i) => [i.label, i.value]), [
      ['$(discard) Rewind', { kind: 'rewind', mode: 'both', force: false }],
      ['$(close) Cancel', { kind: 'cancel' }],
      ['1 file: select one to see its diff', { kind: 'cancel' }],
      ['$(file) a.ts', { kind: 'file', path: 'a.ts' }],
    ]);
    assert.equal(plan.items[0]?.description, 'restores 1 file, takes back 3 messages');
    assert.equal(plan.items[2]?.separator, true);
    const code = reviewPlan(PREVIEW, 'code');
    assert.equal(code.kind === 'confirm' && code.items[0]?.description, 'restores 1 file');
  });
  it('offers to overwrite the files changed outside the agent', () => {
    const plan = reviewPlan({ ...PREVIEW, files: [...PREVIEW.files, { path: 'b.ts', action: 'restore', conflict: true }, { path: 'c.ts', action: 'delete', conflict: true }] }, 'code');
    assert.ok(plan.kind === 'confirm');
    assert.deepEqual(plan.items.slice(0, 3).map((i) => [i.label, i.description, i.value]), [
      ['$(discard) Rewind', 'restores 1 file; leaves 2 files changed outside the agent as they are', { kind: 'rewind', mode: 'code', force: false }],
      ['$(warning) Rewind and overwrite 2 changed files', 'also puts back what was changed outside the agent', { kind: 'rewind', mode: 'code', force: true }],
      ['$(close) Cancel', 'change nothing', { kind: 'cancel' }],
    ]);
  });
  it('a code rewind with no file has nothing to do; with the conversation, it rewinds the conversation only', () => {
    const empty = { ...PREVIEW, files: [], message: 'Rewind would take 0 files back to before prompt 2. The files cannot be restored: checkpoints are off.' };
    assert.deepEqual(reviewPlan(empty, 'code'), { kind: 'nothing', message: empty.message });
    const both = reviewPlan(empty, 'both');
    assert.ok(both.kind === 'confirm');
    assert.deepEqual(both.items.map((i) => [i.label, i.description, i.value]), [
      ['$(discard) Rewind the conversation', 'takes back 3 messages (no file to restore)', { kind: 'rewind', mode: 'conversation', force: false }],
      ['$(close) Cancel', 'change nothing', { kind: 'cancel' }],
    ]);
    assert.equal(both.note, empty.message, 'the chat keeps the server\'s line (why no file is restored)');
    assert.equal(reviewPlan(PREVIEW, 'both').kind === 'confirm' && (reviewPlan(PREVIEW, 'both') as { note?: string }).note, undefined);
  });
  it('the fork\'s notice', () => {
    assert.equal(forkedNotice(2), 'Forked from prompt 2 into a new session (the conversation before it); the original session is unchanged: pick it in the session list to go back to it.');
    assert.equal(forkedNotice(2, true), 'The original session is unchanged: pick it in the session list to go back to it.');
  });
});

describe('the prompts\' numbers', () => {
  const loaded = (): ChatState =>
    fromItems(emptyState(folder), 's1', [
      { kind: 'user', text: 'one', turn: 1, inContext: true },
      { kind: 'user', text: 'two', inContext: false },
      { kind: 'rewind', message: 'The conversation was rewound.', inContext: true },
    ]);
  it('come from the transcript; a rewound prompt has none', () => {
    assert.deepEqual(loaded().items.map((i) => i.kind === 'user' && i.turn), [1, undefined, false]);
  });
  it('a prompt sent since gets its number from the server\'s turns, matched by its text from the end', () => {
    let s = reduce(loaded(), { type: 'runStarted', prompt: 'two again' });
    s = reduce(s, { type: 'runFinished' });
    s = reduce(s, { type: 'runStarted', prompt: 'three' });
    s = reduce(s, { type: 'runFinished' });
    const turns = [{ turn: 1, prompt: 'one' }, { turn: 2, prompt: 'two again' }, { turn: 3, prompt: 'three' }];
    const numbered = reduce(s, { type: 'turns', turns });
    assert.deepEqual(numbered.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.turn), [1, undefined, 2, 3]);
    // A prompt the server does not have (the run failed before it was logged) gets none; nor the ones before it.
    const missing = reduce(s, { type: 'turns', turns: turns.slice(0, 2) });
    assert.deepEqual(missing.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.turn), [1, undefined, undefined, undefined]);
    assert.equal(numberPrompts(numbered, turns), numbered, 'nothing left to number: the same state');
  });
});

describe('the prompts\' actions', () => {
  it('Rewind to here… and Fork from here on a prompt that has a number, as buttons the script handles', () => {
    const html = renderItem({ kind: 'user', id: 'i4', text: 'add a changelog', turn: 2 });
    assert.match(html, /<span class="prompt-actions" role="group" aria-label="Prompt 2">/);
    assert.match(html, /<button type="button" class="prompt-action" data-action="rewind" data-turn="2" title="Rewind to before prompt 2: [^"]+">Rewind to here…<\/button>/);
    assert.match(html, /<button type="button" class="prompt-action" data-action="fork" data-turn="2" title="Fork from here: [^"]+">Fork from here<\/button>/);
    assert.doesNotMatch(html, /\son\w+=|\sstyle=/);
    assert.doesNotMatch(renderItem({ kind: 'user', id: 'i5', text: 'rewound away', outOfContext: true }), /prompt-actions/);
  });
  it('the webview\'s messages carry the prompt\'s number (a positive integer)', () => {
    assert.equal(isFromWebview({ type: 'rewind', turn: 2 }), true);
    assert.equal(isFromWebview({ type: 'fork', turn: 1 }), true);
    for (const turn of [0, -1, 1.5, '2', undefined, Number.NaN]) {
      assert.equal(isFromWebview({ type: 'rewind', turn }), false, String(turn));
      assert.equal(isFromWebview({ type: 'fork', turn }), false, String(turn));
    }
  });
});

describe('rewind diff documents', () => {
  it('have a scheme of their own (no approval buttons) and the rewind\'s title', () => {
    const store = new DiffStore(REWIND_SCHEME);
    const sides = store.add('rw1-1', 'src/a.ts', 'rewind', 'now\n', 'before\n', 'src/a.ts (now ↔ after the rewind to before prompt 2)');
    assert.equal(sides.before, 'pseudoclaude-rewind:/rw1-1/before/src/a.ts');
    assert.equal(sides.title, 'src/a.ts (now ↔ after the rewind to before prompt 2)');
    assert.equal(store.text(pathOf(sides.after, REWIND_SCHEME)), 'before\n');
    assert.equal(diffUris('a', 'b', 'write_file').title, 'b (write_file: proposed change) — PseudoClaude', 'the approvals\' as before');
  });
});
