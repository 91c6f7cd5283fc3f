/** The chat's reducer and the transcript restored from the log. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyState, fromLog, promptsOf, reduce, summaryText, type ChatAction, type ChatState } from '../src/chat/model';
import type { AgentEvent, LogMessage } from '../src/protocol';

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
      ev({ kind: 'toolResult', id: 'c1', name: 'read_file', isError: false, bytes: 42, preview: '# Demo' }),
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
      status: 'done', bytes: 42, preview: '# Demo',
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
      ev({ kind: 'toolResult', id: 'c', name: 'run_command', isError: true, bytes: 6, preview: 'denied' }),
      { type: 'runFinished', result: { sessionId: 's1', stopReason: 'completed', text: 'Done.', iterations: 1, usage: { inputTokens: 1, outputTokens: 1 } } },
    ]);
    assert.equal(s.items[1]?.kind === 'tool' && s.items[1].status, 'failed');
    assert.deepEqual(s.items[2], { kind: 'assistant', id: 'i3', text: 'Done.', streaming: false });
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
      { type: 'preview', id: 'pv1', preview: { wouldSummarize: true, beforeTokens: 1, estimatedAfterTokens: 1, summarizedMessages: 1, keptMessages: 1, firstKeptIndex: 1, spill: { results: 0, bytes: 0 } } },
    ]);
    s = reduce(s, { type: 'approvalDone', id: 'ap1', status: 'allowSession' });
    s = reduce(s, { type: 'previewDone', id: 'pv1', status: 'done', result: 'compacted' });
    assert.equal(s.items[0]?.kind === 'approval' && s.items[0].status, 'allowSession');
    assert.equal(s.items[0]?.kind === 'approval' && s.items[0].path, 'a.txt');
    assert.deepEqual(s.items[1]?.kind === 'preview' && [s.items[1].status, s.items[1].result], ['done', 'compacted']);
  });

  it('lists the sessions without changing the one shown (the list may be older)', () => {
    const s = run([{ type: 'sessions', sessions: [
      { id: 'a', title: 'A', createdAt: '', updatedAt: '', messageCount: 2, bytes: 1, model: '', active: false },
      { id: 'b', title: 'B', createdAt: '', updatedAt: '', messageCount: 2, bytes: 1, model: '', active: true },
    ] }], { ...emptyState(folder), sessionId: 'a' });
    assert.equal(s.sessionId, 'a');
    assert.equal(s.sessions.length, 2);
  });
});

describe('fromLog', () => {
  const SUMMARY = 'The user asked about X.\n\n[Context boundary] The summary above replaces the earlier conversation.';
  const messages: LogMessage[] = [
    { role: 'user', content: SUMMARY },
    { role: 'assistant', content: 'Understood. I have the summary of our earlier work.' },
    { role: 'user', content: 'What is this project?' },
    { role: 'assistant', content: 'Let me read.', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'README.md' } }] },
    { role: 'tool', tool_result: { call_id: 'c1', name: 'read_file', content: 'é'.repeat(300) } },
    { role: 'assistant', content: 'A demo.', tool_calls: [{ id: 'c2', name: 'run_command', arguments: { command: 'make' } }] },
  ];

  it('rebuilds prompts, answers, tool cards with results and the summary card', () => {
    const s = fromLog(emptyState(folder), 's9', messages, 12);
    assert.equal(s.sessionId, 's9');
    assert.equal(s.earlier, 12);
    assert.deepEqual(s.items.map((i) => i.kind), ['summary', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    assert.equal(s.items[0]?.kind === 'summary' && s.items[0].text, 'The user asked about X.');
    const read = s.items[3];
    assert.ok(read?.kind === 'tool');
    assert.equal(read.status, 'done');
    assert.equal(read.bytes, 600, 'bytes in UTF-8');
    assert.equal(read.preview?.length, 200);
    assert.equal(s.items[5]?.kind === 'tool' && s.items[5].status, 'interrupted', 'a call without a result');
    assert.deepEqual(promptsOf(s), ['What is this project?']);
  });

  it('keeps the folder, the meter and the id counter of the state it replaces', () => {
    const base = { ...emptyState(folder), seq: 40, meter: null };
    const s = fromLog(base, null, []);
    assert.deepEqual(s.items, []);
    assert.equal(s.folder, folder);
    assert.equal(s.seq, 40);
  });

  it('summaryText drops the boundary reminder', () => {
    assert.equal(summaryText('abc\n\n[Context boundary] rest'), 'abc');
    assert.equal(summaryText('no marker'), 'no marker');
  });
});
