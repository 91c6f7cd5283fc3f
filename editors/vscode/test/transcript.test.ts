import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentEvent } from '../src/protocol';
import { summarizeArguments, Transcript } from '../src/transcript';
import { StringSink } from './fakes';

const WS = 'file:///work/app';
const ev = (e: Record<string, unknown>): AgentEvent => ({ workspace: WS, sessionId: 's1', ...e }) as AgentEvent;

describe('Transcript', () => {
  it("marks a sub-agent's calls and keeps its text out of the answer", () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.beginRun(WS, 'Ask a helper');
    t.event(ev({ kind: 'toolCall', id: 'p1', name: 'agent', arguments: { description: 'find it' } }));
    t.event(ev({ kind: 'text', delta: 'HELPER TEXT', agentId: 'agent-0a' }));
    t.event(ev({ kind: 'toolCall', id: 'k1', name: 'search_code', arguments: { pattern: 'x' }, agentId: 'agent-0a' }));
    t.event(ev({ kind: 'toolResult', id: 'k1', name: 'search_code', isError: false, bytes: 9, preview: '', status: 'done', display: 'a', agentId: 'agent-0a' }));
    t.event(ev({ kind: 'toolResult', id: 'k2', name: 'read_file', isError: true, bytes: 9, preview: '', status: 'error', display: 'no such file', agentId: 'agent-0a' }));
    t.event(ev({ kind: 'text', delta: 'Done.' }));
    assert.doesNotMatch(sink.text, /HELPER TEXT/);
    assert.match(sink.text, /  ▸ agent\(description: find it\)\n    ↳ agent-0a ▸ search_code\(pattern: x\)\n    ↳ agent-0a ✗ read_file: no such file\nDone\./);
  });

  it('streams the answer and folds tool calls into one line each', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.beginRun(WS, 'What is this project?');
    t.event(ev({ kind: 'text', delta: 'Let me ' }));
    t.event(ev({ kind: 'text', delta: 'look.' }));
    t.event(ev({ kind: 'toolCall', id: 'c1', name: 'read_file', arguments: { path: 'README.md' } }));
    t.event(ev({ kind: 'toolResult', id: 'c1', name: 'read_file', isError: false, bytes: 2048, preview: '{"ok":true}', status: 'done', display: '# x' }));
    t.event(ev({ kind: 'usage', inputTokens: 1, outputTokens: 2, cacheRead: 0, cacheWrite: 0 }));
    t.event(ev({ kind: 'text', delta: 'It keeps sessions.' }));
    t.event(ev({ kind: 'stop', stopReason: 'completed' }));
    t.endRun({ sessionId: 's1', stopReason: 'completed', text: 'Let me look.It keeps sessions.', iterations: 2, usage: { inputTokens: 1600, outputTokens: 70 } });
    assert.equal(
      sink.text,
      [
        '━━ You · app ━━',
        'What is this project?',
        '━━ PseudoClaude ━━',
        'Let me look.',
        '  ▸ read_file(path: README.md)',
        '  ✓ read_file · 2.0 KB',
        'It keeps sessions.',
        '── completed · 2 iterations · 1.6k in / 70 out · session s1 ──',
        '',
      ].join('\n'),
    );
    assert.equal(t.streamedChars, 'Let me look.It keeps sessions.'.length);
  });

  it('prints the result text when nothing streamed, and the error of a failed run', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.beginRun(WS, 'hi');
    t.endRun({ sessionId: 's1', stopReason: 'error', text: 'partial', iterations: 1, usage: { inputTokens: 0, outputTokens: 0 }, error: 'provider failed: 401' });
    assert.match(sink.text, /━━ PseudoClaude ━━\npartial\n── error · 1 iteration/);
    assert.match(sink.text, /✗ provider failed: 401\n$/);
  });

  it('renders failures, compaction, memory, warnings and errors', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.beginRun(WS, 'go');
    t.event(ev({ kind: 'toolResult', id: 'c', name: 'run_command', isError: true, bytes: 10, preview: '{"ok": false}', status: 'denied', display: 'The user denied\nthis call', error: 'denied by the user' }));
    t.event(ev({ kind: 'toolResult', id: 'd', name: 'read_file', isError: true, bytes: 10, preview: '{"ok": false}', status: 'error', display: 'no such file: a.txt' }));
    t.event(ev({ kind: 'compact', layer: 2, beforeTokens: 170_000, afterTokens: 20_000, offloaded: 1 }));
    t.event(ev({ kind: 'compact', layer: 2, beforeTokens: 90_000, afterTokens: 9_000, offloaded: 0, factCheck: { checked: 7, missing: 2, added: 2 } }));
    t.event(ev({ kind: 'memory', status: 'updated', changes: [{ action: 'create', level: 'project', filename: 'project_knowledge_x.md' }] }));
    t.event(ev({ kind: 'memory', status: 'unchanged', changes: [] }));
    t.event(ev({ kind: 'memory', status: 'failed', changes: [], error: 'timeout' }));
    t.event(ev({ kind: 'warning', message: 'spill failed' }));
    t.event(ev({ kind: 'error', message: 'auto-compact failed 3 times' }));
    const lines = sink.text.split('\n').slice(3, -1);
    assert.deepEqual(lines, [
      '  ✗ run_command denied: denied by the user',
      '  ✗ read_file failed: no such file: a.txt',
      '  ⇣ compacted (layer 2): 170k → 20k tokens, 1 result offloaded',
      '  ⇣ compacted (layer 2): 90k → 9k tokens; summary checked: 7 facts, 2 carried by the server',
      '  ✎ memory updated: create project project_knowledge_x.md',
      '  ! memory update failed: timeout',
      '  ! spill failed',
      '  ✗ auto-compact failed 3 times',
    ]);
  });

  it('separates questions with a blank line', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.beginRun(WS, 'one');
    t.abortRun('canceled');
    t.beginRun(WS, 'two');
    assert.equal(sink.text, '━━ You · app ━━\none\n━━ PseudoClaude ━━\n── canceled ──\n\n━━ You · app ━━\ntwo\n━━ PseudoClaude ━━\n');
  });

  it('marks events of another workspace or session with a header', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.event({ workspace: 'file:///work/lib', sessionId: 's9', kind: 'text', delta: 'x' });
    assert.equal(sink.text, '── lib · session s9 ──\nx');
    t.event({ workspace: 'file:///work/lib', sessionId: 's9', kind: 'text', delta: 'y' });
    assert.equal(sink.text, '── lib · session s9 ──\nxy');
  });

  it('leaves task lists to the chat (not even a header for another session)', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.event({ workspace: 'file:///work/lib', sessionId: 's9', kind: 'tasks', tasks: [{ content: 'Write it', status: 'pending' }] });
    assert.equal(sink.text, '');
  });

  it('replays a resumed history briefly from its items, marking what is out of context', () => {
    const sink = new StringSink();
    const t = new Transcript(sink);
    t.note('resumed session s1 (3 messages)');
    t.history([
      { kind: 'summary', text: 'Earlier: the parser.', inContext: false },
      { kind: 'user', text: 'read the\nREADME', inContext: true },
      { kind: 'toolCall', id: 'c', name: 'read_file', arguments: { path: 'README.md' }, status: 'done', preview: 'abc', bytes: 3, inContext: true },
      { kind: 'toolCall', id: 'd', name: 'run_command', arguments: { command: 'make' }, status: 'denied', preview: 'denied', error: 'the user denied it', inContext: true },
      { kind: 'toolCall', id: 'e', name: 'run_command', arguments: { command: 'sleep 9' }, status: 'canceled', preview: '', inContext: true },
      { kind: 'undo', restored: 4, message: 'The last compaction was undone: 4 messages are back in the conversation.', inContext: true },
    ], 2);
    assert.equal(sink.text, [
      '· resumed session s1 (3 messages)',
      '· (2 earlier entries not shown)',
      '  ⇣ summary (not in context): Earlier: the parser.',
      'You: read the README',
      '  ✓ read_file(path: README.md) · 3 B',
      '  ✗ run_command(command: make) denied: the user denied it',
      '  ✗ run_command(command: sleep 9) canceled',
      '· The last compaction was undone: 4 messages are back in the conversation.',
      '',
    ].join('\n'));
  });
});

describe('summarizeArguments', () => {
  it('handles objects, raw strings and nothing', () => {
    assert.equal(summarizeArguments({ command: 'make', args: ['test'] }), 'command: make, args: ["test"]');
    assert.equal(summarizeArguments('{not json'), '{not json');
    assert.equal(summarizeArguments(undefined), '');
    assert.equal(summarizeArguments({ content: 'x'.repeat(500) }, 20).length, 20);
  });
});
