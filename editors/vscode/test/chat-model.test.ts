/** The chat's reducer and the transcript restored from the log. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyState, fromItems, promptsOf, reduce, type ChatAction, type ChatState } from '../src/chat/model';
import type { AgentEvent, TranscriptItem } from '../src/protocol';

const WS = 'file:///work/app';
const folder = { uri: WS, name: 'app' };

function ev(e: Record<string, unknown> & { kind: string }): ChatAction {
  return { type: 'event', event: { workspace: WS, sessionId: 's1', ...e } as AgentEvent };
}

function run(actions: ChatAction[], state: ChatState = emptyState(folder, [folder])): ChatState {
  return actions.reduce(reduce, state);
}

describe('reduce', () => {
  it('streams an answer, folds tool calls into cards with their results, and ends the run', () => {
    const s = run([
      { type: 'runStarted', prompt: 'What is this?' },
      ev({ kind: 'text', delta: 'Let me ' }),
      ev({ kind: 'text', delta: 'read it.' }),
      ev({ kind: 'toolCall', id: 'c1', name: 'read_file', arguments: { path: 'README.md' } }),
      ev({ kind: 'toolResult', id: 'c1', name: 'read_file', isError: false, bytes: 42, preview: '{"ok":true,"content":"# Demo"}', status: 'done', display: '# Demo' }),
      ev({ kind: 'text', delta: 'It is a **demo**.' }),
      ev({ kind: 'stop', stopReason: 'completed' }),
      {
        type: 'runFinished',
        result: { sessionId: 's1', stopReason: 'completed', text: 'It is a **demo**.', iterations: 2, usage: { inputTokens: 900, outputTokens: 40 } },
      },
    ]);
    assert.equal(s.running, false);
    assert.equal(s.sessionId, 's1');
    assert.deepEqual(
      s.items.map((i) => i.kind),
      ['user', 'assistant', 'tool', 'assistant', 'end'],
    );
    assert.deepEqual(s.items[1], { kind: 'assistant', id: 'i2', text: 'Let me read it.', streaming: false });
    assert.deepEqual(s.items[2], {
      kind: 'tool', id: 'i3', callId: 'c1', name: 'read_file', arguments: { path: 'README.md' },
      status: 'done', bytes: 42, display: '# Demo',
    });
    assert.deepEqual(s.items[4], {
      kind: 'end', id: 'i5', stopReason: 'completed', iterations: 2, inputTokens: 900, outputTokens: 40,
    });
    assert.equal(new Set(s.items.map((i) => i.id)).size, s.items.length, 'ids are unique');
  });

  it('keeps unchanged items identical (the webview re-renders only what changed)', () => {
    const a = run([{ type: 'runStarted', prompt: 'hi' }, ev({ kind: 'text', delta: 'a' })]);
    const b = reduce(a, ev({ kind: 'text', delta: 'b' }));
    assert.equal(b.items[0], a.items[0]);
    assert.notEqual(b.items[1], a.items[1]);
    assert.equal(b.items[1]?.kind === 'assistant' && b.items[1].text, 'ab');
  });

  it('shows the result text when nothing streamed, and a failed tool as failed', () => {
    const s = run([
      { type: 'runStarted', prompt: 'x' },
      ev({ kind: 'toolCall', id: 'c', name: 'run_command', arguments: { command: 'false' } }),
      ev({ kind: 'toolResult', id: 'c', name: 'run_command', isError: true, bytes: 6, preview: '{"ok":false}', status: 'error', display: 'exit 1', error: 'exit 1' }),
      ev({ kind: 'toolCall', id: 'd', name: 'run_command', arguments: { command: 'rm -rf /' } }),
      ev({ kind: 'toolResult', id: 'd', name: 'run_command', isError: true, bytes: 6, preview: '{"ok":false}', status: 'denied', display: 'denied by the user' }),
      ev({ kind: 'toolCall', id: 'e', name: 'read_file', arguments: {} }),
      ev({ kind: 'toolResult', id: 'e', name: 'read_file', isError: true, bytes: 2, preview: 'old server' }),
      { type: 'runFinished', result: { sessionId: 's1', stopReason: 'completed', text: 'Done.', iterations: 1, usage: { inputTokens: 1, outputTokens: 1 } } },
    ]);
    assert.equal(s.items[1]?.kind === 'tool' && s.items[1].status, 'failed');
    assert.equal(s.items[1]?.kind === 'tool' && s.items[1].error, 'exit 1');
    assert.deepEqual(s.items[2]?.kind === 'tool' && [s.items[2].status, s.items[2].display], ['denied', 'denied by the user']);
    assert.deepEqual(s.items[3]?.kind === 'tool' && [s.items[3].status, s.items[3].display], ['failed', 'old server'], 'an older server: no status');
    assert.deepEqual(s.items[4], { kind: 'assistant', id: 'i5', text: 'Done.', streaming: false });
  });

  it('marks a cancelled run, its unfinished calls and a pending modal approval', () => {
    const s = run([
      { type: 'runStarted', prompt: 'x' },
      ev({ kind: 'text', delta: 'Thinking' }),
      ev({ kind: 'toolCall', id: 'c', name: 'run_command', arguments: {} }),
      { type: 'approval', id: 'ap1', tool: 'run_command', title: 'Allow run_command?', detail: '', mode: 'modal' },
      { type: 'runFinished', canceled: true },
    ]);
    assert.deepEqual(s.items.map((i) => [i.kind, 'status' in i ? i.status : i.kind === 'end' ? i.stopReason : '']), [
      ['user', ''], ['assistant', ''], ['tool', 'interrupted'], ['approval', 'cancelled'], ['end', 'canceled'],
    ]);
    assert.equal(s.items[1]?.kind === 'assistant' && s.items[1].streaming, false);
  });

  it('puts compaction, memory, warnings and errors inline; skips unchanged memory and usage', () => {
    const s = run([
      ev({ kind: 'compact', layer: 2, beforeTokens: 150_000, afterTokens: 20_000, offloaded: 1, factCheck: { checked: 5, missing: 1, added: 1 } }),
      ev({ kind: 'memory', status: 'unchanged', changes: [] }),
      ev({ kind: 'memory', status: 'updated', changes: [{ action: 'create', level: 'project', filename: 'a.md' }] }),
      ev({ kind: 'usage', inputTokens: 1, outputTokens: 1, cacheRead: 0, cacheWrite: 0 }),
      ev({ kind: 'warning', message: 'careful' }),
      ev({ kind: 'error', message: 'boom' }),
    ]);
    assert.deepEqual(s.items.map((i) => i.kind), ['compact', 'memory', 'notice', 'notice']);
    assert.deepEqual(s.items[0], {
      kind: 'compact', id: 'i1', layer: 2, beforeTokens: 150_000, afterTokens: 20_000, offloaded: 1,
      factCheck: { checked: 5, missing: 1, added: 1 },
    });
  });

  it('a call waits while its approval is pending, and runs on after the answer', () => {
    let s = run([
      { type: 'runStarted', prompt: 'x' },
      ev({ kind: 'toolCall', id: 'c', name: 'run_command', arguments: { command: 'make' } }),
      { type: 'approval', id: 'ap1', tool: 'run_command', title: 'Allow?', detail: '', mode: 'inline' },
    ]);
    assert.equal(s.items[1]?.kind === 'tool' && s.items[1].status, 'waiting');
    s = reduce(s, { type: 'approvalDone', id: 'ap1', status: 'allowOnce' });
    assert.equal(s.items[1]?.kind === 'tool' && s.items[1].status, 'running');
  });

  it('resolves approvals and previews by their ids', () => {
    let s = run([
      { type: 'approval', id: 'ap1', tool: 'write_file', title: 'Allow?', detail: 'a.txt', mode: 'inline', path: 'a.txt' },
      { type: 'preview', id: 'pv1', preview: { wouldSummarize: true, beforeTokens: 1, estimatedAfterTokens: 1, summarizedMessages: 1, keptMessages: 1, firstKeptIndex: 1, spill: { results: 0, bytes: 0 }, message: 'Would summarize.' } },
    ]);
    s = reduce(s, { type: 'approvalDone', id: 'ap1', status: 'allowSession' });
    s = reduce(s, { type: 'previewDone', id: 'pv1', status: 'done', result: 'compacted' });
    assert.equal(s.items[0]?.kind === 'approval' && s.items[0].status, 'allowSession');
    assert.equal(s.items[0]?.kind === 'approval' && s.items[0].path, 'a.txt');
    assert.deepEqual(s.items[1]?.kind === 'preview' && [s.items[1].status, s.items[1].result], ['done', 'compacted']);
  });

  it('lists the sessions without changing the one shown (the list may be older)', () => {
    const s = run([{ type: 'sessions', sessions: [
      { id: 'a', title: 'A', createdAt: '', updatedAt: '', messageCount: 2, bytes: 1, model: '', active: false, running: false, worktree: null, answered: true },
      { id: 'b', title: 'B', createdAt: '', updatedAt: '', messageCount: 2, bytes: 1, model: '', active: true, running: false, worktree: null, answered: true },
    ] }], { ...emptyState(folder), sessionId: 'a' });
    assert.equal(s.sessionId, 'a');
    assert.equal(s.sessions.length, 2);
  });
});

describe('fromItems', () => {
  const items: TranscriptItem[] = [
    { kind: 'user', text: 'What is the parser?', inContext: false, ts: 1 },
    { kind: 'toolCall', id: 'c0', name: 'read_file', arguments: { path: 'parser.py' }, status: 'done', preview: 'def parse', bytes: 900, inContext: false },
    { kind: 'summary', text: 'The user asked about the parser.', inContext: true },
    { kind: 'compaction', summarized: 2, kept: 4, message: 'The earlier conversation was summarized: 2 messages replaced by a summary, 4 recent messages kept as they were.', inContext: true },
    { kind: 'user', text: 'Run the tests', inContext: true },
    { kind: 'assistant', text: 'Running them.', thinking: 'make test is the way', inContext: true },
    { kind: 'toolCall', id: 'c1', name: 'run_command', arguments: { command: 'make test' }, status: 'error', preview: 'exit 2: 1 failed', error: 'exit 2', bytes: 40, inContext: true },
    { kind: 'toolCall', id: 'c2', name: 'write_file', arguments: { path: 'a.py' }, status: 'denied', preview: 'denied by the user', error: 'denied by the user', inContext: true },
    { kind: 'toolCall', id: 'c3', name: 'run_command', arguments: { command: 'sleep 99' }, status: 'canceled', preview: '', error: 'the run was cancelled', inContext: true },
    { kind: 'toolCall', id: 'c4', name: 'read_file', arguments: { path: 'b.py' }, status: 'pending', preview: '', inContext: true },
    { kind: 'assistant', text: '  ', inContext: true },
    { kind: 'rewind', message: 'The conversation was rewound.', inContext: true },
    { kind: 'notice', text: 'Resumed with 1 repair.', inContext: true },
  ];

  it('renders a resumed session from its items alone: failed, denied, cancelled calls, the summary, what is out of context', () => {
    const s = fromItems(emptyState(folder), 's9', items, 12);
    assert.equal(s.sessionId, 's9');
    assert.equal(s.earlier, 12);
    assert.equal(s.running, false);
    assert.deepEqual(s.items.map((i) => i.kind), [
      'user', 'tool', 'summary', 'marker', 'user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'marker', 'notice',
    ]);
    assert.deepEqual(s.items.map((i) => i.outOfContext === true), [true, true, false, false, false, false, false, false, false, false, false, false]);
    assert.deepEqual(s.items[0], { kind: 'user', id: 'i1', text: 'What is the parser?', outOfContext: true });
    assert.deepEqual(s.items[2], { kind: 'summary', id: 'i3', text: 'The user asked about the parser.' });
    assert.deepEqual(s.items[3], { kind: 'marker', id: 'i4', marker: 'compaction', text: items[3]?.kind === 'compaction' ? items[3].message : '' });
    assert.deepEqual(s.items[5], { kind: 'assistant', id: 'i6', text: 'Running them.', streaming: false, thinking: 'make test is the way' });
    const tools = s.items.filter((i) => i.kind === 'tool');
    assert.deepEqual(tools.map((t) => [t.callId, t.status, t.display, t.error]), [
      ['c0', 'done', 'def parse', undefined],
      ['c1', 'failed', 'exit 2: 1 failed', 'exit 2'],
      ['c2', 'denied', 'denied by the user', 'denied by the user'],
      ['c3', 'canceled', '', 'the run was cancelled'],
      ['c4', 'interrupted', undefined, undefined],
    ]);
    assert.equal(tools[1]?.bytes, 40);
    assert.deepEqual(s.items[10], { kind: 'marker', id: 'i11', marker: 'rewind', text: 'The conversation was rewound.' });
    assert.deepEqual(s.items[11], { kind: 'notice', id: 'i12', level: 'info', text: 'Resumed with 1 repair.' });
    assert.deepEqual(promptsOf(s), ['What is the parser?', 'Run the tests']);
  });

  it('keeps the folder, the meter, the commands and the id counter of the state it replaces', () => {
    const base = { ...emptyState(folder), seq: 40, meter: null, commands: [{ name: 'undo', description: 'Undo' }] };
    const s = fromItems(base, null, []);
    assert.deepEqual(s.items, []);
    assert.equal(s.folder, folder);
    assert.equal(s.seq, 40);
    assert.equal(s.commands, base.commands);
  });

  it('lists the server\'s commands and shows the context breakdown on /context', () => {
    const meter = { sessionId: 's1', estimatedTokens: 10, contextWindow: 100, autoCompactThreshold: 80 };
    const s = run([{ type: 'meter', meter }, { type: 'commands', commands: [{ name: 'new', description: 'New' }] }, { type: 'contextShown' }]);
    assert.deepEqual(s.commands, [{ name: 'new', description: 'New' }]);
    assert.deepEqual(s.items, [{ kind: 'context', id: 'i1', meter }]);
    assert.equal(run([{ type: 'commands', commands: null }]).commands, null);
  });
});

describe('the editor context', () => {
  const context = { activeFile: 'src/app.py', selection: { path: 'src/app.py', range: { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } }, text: 'x' } };
  it('a prompt keeps what it was sent with; the chip is part of the state', () => {
    const state = run([
      { type: 'chip', chip: { path: 'src/app.py', lines: '3-4', label: 'src/app.py:3-4', title: 't' } },
      { type: 'runStarted', prompt: 'Explain', context },
      { type: 'runStarted', prompt: 'plain' },
    ]);
    assert.equal(state.chip?.label, 'src/app.py:3-4');
    const [first, second] = state.items;
    assert.deepEqual(first?.kind === 'user' && first.context, context);
    assert.equal(second?.kind === 'user' && 'context' in second, false);
    assert.equal(run([{ type: 'chip', chip: null }], state).chip, null);
    assert.equal(emptyState().chip, null);
  });
  it('a restored prompt keeps the context the server logged (its well-formed parts)', () => {
    const items = [
      { kind: 'user', text: 'Explain', inContext: true, context },
      { kind: 'user', text: 'junk', inContext: true, context: 'nonsense' },
    ] as unknown as TranscriptItem[];
    const state = fromItems(emptyState(folder), 's1', items);
    const [first, second] = state.items;
    assert.deepEqual(first?.kind === 'user' && first.context, context);
    assert.equal(second?.kind === 'user' && second.context, undefined);
  });

  it('a session that runs (live): its current calls still run, an older pending call is interrupted', () => {
    const call = (id: string) => ({ kind: 'toolCall', id, name: 'run_command', arguments: {}, status: 'pending', inContext: true }) as TranscriptItem;
    const items: TranscriptItem[] = [
      { kind: 'user', text: 'earlier', inContext: true }, call('old'),
      { kind: 'user', text: 'now', inContext: true }, call('new'),
    ];
    const live = fromItems(emptyState(folder), 's1', items, 0, true);
    assert.equal(live.running, true);
    assert.deepEqual(live.items.filter((i) => i.kind === 'tool').map((i) => i.kind === 'tool' && i.status), ['interrupted', 'running']);
    const done = fromItems(emptyState(folder), 's1', items);
    assert.equal(done.running, false);
    assert.deepEqual(done.items.filter((i) => i.kind === 'tool').map((i) => i.kind === 'tool' && i.status), ['interrupted', 'interrupted']);
  });
});
