/** Worktree sessions and busy sessions in the chat: the pure parts (words, lists, cards, HTML). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionBusy, SESSION_BUSY } from '../src/errors';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, reduce, worktreeOf, type ChatState } from '../src/chat/model';
import { renderItem, renderSessionOptions, renderWorktreeBar } from '../src/chat/render';
import { parseSlash, RUNNABLE } from '../src/chat/slash';
import { sessionNodes } from '../src/chat/trees';
import { applyCard, changesPlan, forceQuestion, refusedForChanges, removeQuestion, worktreeDiffTitle } from '../src/chat/worktree';
import { sessionItems } from '../src/pickers';
import type { SessionSummary } from '../src/protocol';

const NOW = new Date('2025-06-10T12:00:30Z');
const session = (over: Partial<SessionSummary>): SessionSummary => ({
  id: 's', title: 'T', createdAt: '', updatedAt: '2025-06-10T12:00:00Z', messageCount: 2, bytes: 1, model: '', active: false, running: false, worktree: null, answered: true, ...over,
});

function assertInert(html: string): void {
  assert.doesNotMatch(html, /<[^>]*\son\w+\s*=/i, 'an inline event handler');
  assert.doesNotMatch(html, /<[^>]*\sstyle\s*=/i, 'an inline style');
  assert.doesNotMatch(html, /<script/i);
}

describe('a busy session', () => {
  it('reads SessionBusy (-32011, data {sessionId, pid}); other errors are not', () => {
    assert.equal(SESSION_BUSY, -32011);
    const e = Object.assign(new Error('session s1 is busy: process 4242 is writing it'), { code: -32011, data: { sessionId: 's1', pid: 4242 } });
    assert.deepEqual(sessionBusy(e), { sessionId: 's1', pid: 4242, message: 'session s1 is busy: process 4242 is writing it' });
    const bare = Object.assign(new Error('session s2 is busy: process ? is writing it'), { code: -32011 });
    assert.deepEqual(sessionBusy(bare), { sessionId: 's2', pid: null, message: 'session s2 is busy: process ? is writing it' });
    assert.equal(sessionBusy(Object.assign(new Error('x'), { code: -32803 })), undefined);
    assert.equal(sessionBusy('busy'), undefined);
  });

  it('the refused prompt leaves the transcript; the card holds it, with Fork and Wait', () => {
    let s: ChatState = { ...emptyState({ uri: 'file:///w', name: 'w' }), sessionId: 's1' };
    s = reduce(s, { type: 'runStarted', prompt: 'add tests' });
    s = reduce(s, { type: 'busy', id: 'bz1', sessionId: 's1', pid: 4242, prompt: 'add tests' });
    assert.equal(s.running, false);
    assert.deepEqual(s.items.map((i) => i.kind), ['busy']);
    const html = renderItem(s.items[0]!);
    assertInert(html);
    assert.match(html, /Not sent: this session is busy/);
    assert.match(html, /Process 4242 is writing it/);
    assert.match(html, /<pre class="card-pre busy-prompt">add tests<\/pre>/);
    assert.match(html, /<button type="button" class="primary" data-action="busyFork" data-id="bz1"[^>]*>Fork<\/button>/);
    assert.match(html, /<button type="button" data-action="busyWait" data-id="bz1"[^>]*>Wait<\/button>/);
    const waiting = renderItem(reduce(s, { type: 'busyStatus', id: 'bz1', status: 'waiting' }).items[0]!);
    assert.match(waiting, /Waiting for the session to be free…/);
    assert.match(waiting, /data-action="busyCancel" data-id="bz1"[^>]*>Cancel</);
    assert.doesNotMatch(waiting, /busyFork/);
    const cancelled = renderItem(reduce(s, { type: 'busyStatus', id: 'bz1', status: 'cancelled' }).items[0]!);
    assert.match(cancelled, /Not sent: you stopped waiting\. Your prompt is back in the box\./);
    assert.doesNotMatch(cancelled, /<button/);
    const unknown = renderItem({ kind: 'busy', id: 'b', sessionId: 's', pid: null, prompt: '<b>', status: 'asking' });
    assert.match(unknown, /Another process is writing it/);
    assert.match(unknown, /&lt;b&gt;/);
  });

  it('the webview\'s buttons are well-formed messages', () => {
    for (const type of ['busyFork', 'busyWait', 'busyCancel']) {
      assert.equal(isFromWebview({ type, id: 'bz1' }), true);
      assert.equal(isFromWebview({ type }), false);
    }
    for (const type of ['worktreeChanges', 'worktreeApply', 'worktreeRemove']) {
      assert.equal(isFromWebview({ type }), true);
    }
  });
});

describe('worktree sessions', () => {
  const STATUS = {
    sessionId: 's3', path: '/d/worktrees/s3', branch: 'pseudoclaude/s3', base: 'abc',
    files: [{ path: 'a.py', action: 'create' as const }, { path: 'b.py', action: 'modify' as const }, { path: 'c.txt', action: 'delete' as const }],
    message: '3 files changed',
  };

  it('/worktree is one of the chat\'s commands', () => {
    assert.ok((RUNNABLE as readonly string[]).includes('worktree'));
    assert.deepEqual(parseSlash('/worktree', [{ name: 'worktree', description: 'x' }]), { name: 'worktree', argument: '' });
    assert.equal(parseSlash('/worktree', [{ name: 'new', description: 'x' }]), undefined, 'a server without it');
  });

  it('the Changes list: Apply, Close, then each file with its action (a diff each)', () => {
    const plan = changesPlan(STATUS, 'app');
    assert.ok(plan.kind === 'pick');
    assert.equal(plan.title, 'Worktree pseudoclaude/s3: 3 files changed');
    assert.deepEqual(plan.items.map((i) => [i.label, i.separator ?? false, i.keepOpen ?? false]), [
      ['$(check) Apply to app', false, false],
      ['$(close) Close', false, false],
      ['3 files: select one to see its diff (app ↔ worktree)', true, false],
      ['$(diff-added) a.py', false, true],
      ['$(diff-modified) b.py', false, true],
      ['$(diff-removed) c.txt', false, true],
    ]);
    assert.deepEqual(changesPlan({ ...STATUS, files: [] }, 'app'), { kind: 'nothing', message: 'No changes yet in the worktree of this session (branch pseudoclaude/s3).' });
    assert.equal(worktreeDiffTitle({ path: 'c.txt', action: 'delete' }, 'b'), 'c.txt (deleted in the worktree)');
  });

  it('an Apply: the files written, or the conflicts listed and nothing written, or the server\'s line', () => {
    assert.deepEqual(applyCard({ sessionId: 's', applied: ['a.py'], conflicts: [], message: 'applied 1 file to the main tree' }, 'app'), {
      level: 'info', title: 'Applied 1 file to app', files: ['a.py'], note: 'They are written into the folder, not committed. The session goes on in its worktree.',
    });
    const conflict = applyCard({ sessionId: 's', applied: [], conflicts: ['a.py', 'b.py'], message: 'nothing applied' }, 'app');
    assert.deepEqual([conflict.level, conflict.title, conflict.files], ['warning', 'Nothing applied: 2 files changed in app too since the worktree was made', ['a.py', 'b.py']]);
    assert.match(conflict.note ?? '', /The folder's versions are left as they are\./);
    assert.deepEqual(applyCard({ sessionId: 's', applied: [], conflicts: [], message: 'nothing to apply: the main tree has every change of the session' }, 'app'), {
      level: 'info', title: 'Nothing to apply: app has every change of the session', files: [],
    });
    let s: ChatState = emptyState();
    s = reduce(s, { type: 'worktreeResult', ...conflict });
    const html = renderItem(s.items[0]!);
    assertInert(html);
    assert.match(html, /class="card worktree-result worktree-warning"/);
    assert.match(html, /<li><code>a\.py<\/code><\/li><li><code>b\.py<\/code><\/li>/);
  });

  it('Remove asks first; a refusal for changes not applied is told apart and asked again, in the folder\'s words', () => {
    assert.equal(removeQuestion('pseudoclaude/s3', 'app').message, 'Remove the worktree of this session (branch pseudoclaude/s3)?');
    const refusal = Object.assign(new Error('the worktree of session s3 has 1 change not applied to the main tree (a.py): apply them or remove with force'), { code: -32803 });
    assert.equal(refusedForChanges(refusal), true);
    assert.equal(refusedForChanges(Object.assign(new Error('session s3 has no worktree'), { code: -32803 })), false);
    assert.equal(forceQuestion(refusal.message, 'app').detail, 'The worktree of session s3 has 1 change not applied to app (a.py).\n\nRemove it anyway? Those changes are lost.');
  });

  it('a list without the chat\'s session (the server lists sessions with a message) keeps it as the chat knew it', () => {
    const mine = session({ id: 's3', worktree: 'pseudoclaude/s3' });
    let s: ChatState = { ...emptyState(), sessionId: 's3', sessions: [mine] };
    s = reduce(s, { type: 'sessions', sessions: [session({ id: 's1' })] });
    assert.deepEqual(s.sessions.map((x) => x.id), ['s3', 's1']);
    assert.equal(worktreeOf(s), 'pseudoclaude/s3');
    s = reduce(s, { type: 'sessions', sessions: [session({ id: 's3', worktree: null, title: 'Now listed' })] });
    assert.deepEqual(s.sessions.map((x) => [x.id, x.title]), [['s3', 'Now listed']], 'the server\'s entry once it has one');
  });

  it('the worktree line: the branch of the chat\'s session, with Changes, Apply and Remove', () => {
    const state: ChatState = {
      ...emptyState({ uri: 'file:///w', name: 'w' }),
      sessionId: 's3',
      sessions: [session({ id: 's3', worktree: 'pseudoclaude/s3' }), session({ id: 's1' })],
    };
    assert.equal(worktreeOf(state), 'pseudoclaude/s3');
    const html = renderWorktreeBar(state);
    assertInert(html);
    assert.match(html, /<span class="wt-branch">pseudoclaude\/s3<\/span>/);
    for (const action of ['worktreeChanges', 'worktreeApply', 'worktreeRemove']) {
      assert.match(html, new RegExp(`data-action="${action}"`));
    }
    assert.match(renderWorktreeBar({ ...state, running: true }), /data-action="worktreeApply" disabled/);
    assert.equal(renderWorktreeBar({ ...state, sessionId: 's1' }), '', 'a session in the folder itself: no line');
  });

  it('the session lists mark worktree sessions with their branch, running ones with ●', () => {
    const sessions = [
      session({ id: 'a', title: 'Parser', running: true, worktree: 'pseudoclaude/a' }),
      session({ id: 'b', title: 'Docs', running: true, active: true }),
      session({ id: 'c', title: 'Old' }),
    ];
    const html = renderSessionOptions({ ...emptyState(), sessionId: 'b', sessions }, NOW);
    assert.equal(
      html,
      '<option value="a" title="Running now\nIn a git worktree, branch pseudoclaude/a">● Parser · ⎇ pseudoclaude/a · just now</option>' +
        '<option value="b" selected title="Running now">● Docs · just now</option>' +
        '<option value="c">Old · just now</option>',
    );
    const picks = sessionItems(sessions, NOW);
    assert.equal(picks[0]?.description, '$(sync~spin) running · $(git-branch) pseudoclaude/a · just now · 2 messages');
    const nodes = sessionNodes(sessions, NOW, 'file:///w');
    assert.deepEqual(nodes.map((n) => [n.description, n.icon]), [
      ['running · ⎇ pseudoclaude/a · just now · 2 messages', 'sync~spin'],
      ['active · running · just now · 2 messages', 'sync~spin'],
      ['just now · 2 messages', 'history'],
    ]);
    assert.match(nodes[0]?.tooltip ?? '', /Works in a git worktree of its own: branch pseudoclaude\/a/);
  });
});
