/** Sub-agents in the chat: one card per `agent` call with its sub-agent's calls, the background tasks' list. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderBackgroundTasks, taskIdOf } from '../src/chat/agents';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, fromItems, reduce, type ChatAction, type ChatState, type ItemOf } from '../src/chat/model';
import { agentRunning, renderItem } from '../src/chat/render';
import type { AgentEvent, AgentInfo, TranscriptItem } from '../src/protocol';

const WS = 'file:///work/app';
const folder = { uri: WS, name: 'app' };
const A1 = 'agent-00000000000000a1';
const A2 = 'agent-00000000000000a2';

function ev(e: Record<string, unknown> & { kind: string }): ChatAction {
  return { type: 'event', event: { workspace: WS, sessionId: 's1', ...e } as AgentEvent };
}

function run(actions: ChatAction[], state: ChatState = emptyState(folder, [folder])): ChatState {
  return actions.reduce(reduce, state);
}

function cards(s: ChatState): ItemOf<'tool'>[] {
  return s.items.filter((i): i is ItemOf<'tool'> => i.kind === 'tool' && i.name === 'agent');
}

function info(agentId: string, callId: string, extra: Partial<AgentInfo> = {}): AgentInfo {
  return {
    agentId,
    callId,
    name: '',
    subagentType: 'explore',
    description: 'find the parser',
    status: 'running',
    startedAt: '2025-01-01T00:00:00Z',
    usage: { inputTokens: 0, outputTokens: 0 },
    ...extra,
  };
}

const call = (id: string, description: string, extra: Record<string, unknown> = {}): ChatAction =>
  ev({ kind: 'toolCall', id, name: 'agent', arguments: { prompt: `${description}, please`, description, subagent_type: 'explore', ...extra } });

describe('sub-agent cards', () => {
  it("puts a sub-agent's events under its `agent` call, not in the parent's stream", () => {
    const s = run([
      { type: 'runStarted', prompt: 'Look around' },
      ev({ kind: 'text', delta: 'Asking a helper.' }),
      call('p1', 'find the parser'),
      ev({ kind: 'text', delta: 'I will grep.', agentId: A1 }),
      ev({ kind: 'toolCall', id: 'k1', name: 'grep', arguments: { pattern: 'parse' }, agentId: A1 }),
      ev({ kind: 'usage', inputTokens: 1200, outputTokens: 30, cacheRead: 0, cacheWrite: 0, agentId: A1 }),
      ev({ kind: 'toolResult', id: 'k1', name: 'grep', isError: false, bytes: 20, preview: '', status: 'done', display: 'src/parse.ts:1', agentId: A1 }),
      ev({ kind: 'toolCall', id: 'k2', name: 'read_file', arguments: { path: 'src/parse.ts' }, agentId: A1 }),
      ev({ kind: 'usage', inputTokens: 800, outputTokens: 20, cacheRead: 0, cacheWrite: 0, agentId: A1 }),
    ]);
    assert.deepEqual(s.items.map((i) => i.kind), ['user', 'assistant', 'tool']);
    const [card] = cards(s);
    assert.ok(card?.agent);
    assert.equal(card.agent.agentId, A1);
    assert.equal(card.agent.status, 'running');
    assert.equal(card.agent.subagentType, 'explore');
    assert.equal(card.agent.description, 'find the parser');
    assert.deepEqual(card.agent.calls.map((c) => [c.name, c.status]), [['grep', 'done'], ['read_file', 'running']]);
    assert.equal(card.agent.text, '', 'what it said before a call is cleared by the call');
    assert.deepEqual([card.agent.inputTokens, card.agent.outputTokens], [2000, 50]);
    assert.equal(s.agentCards[A1], card.id);
    assert.ok(agentRunning(card));

    const html = renderItem(card, true);
    assert.match(html, /class="card tool agent-card agent-running"/);
    assert.match(html, /<span class="agent-type">explore<\/span>/);
    assert.match(html, /find the parser/);
    assert.match(html, /running · 2 calls · 2(\.0)?k in \/ 50 out/);
    assert.match(html, /<li class="agent-call agent-call-done"[^>]*>.*grep/);
    assert.match(html, /agent-call-running.*read_file/);
    assert.match(html, /data-action="stopAgent" data-agent="agent-00000000000000a1" title="Stop this sub-agent: the agent is told/);
    assert.match(html, /data-action="agentTranscript" data-agent="agent-00000000000000a1"/);

    // The parent's call ends: the sub-agent completed; its answer folds in; no Stop any more.
    const done = run(
      [
        ev({ kind: 'toolResult', id: 'k2', name: 'read_file', isError: false, bytes: 99, preview: '', status: 'done', display: 'x', agentId: A1 }),
        ev({ kind: 'toolResult', id: 'p1', name: 'agent', isError: false, bytes: 40, preview: '', status: 'done', display: 'The parser is in src/parse.ts.' }),
      ],
      s,
    );
    const [ended] = cards(done);
    assert.equal(ended?.agent?.status, 'completed');
    assert.ok(ended && !agentRunning(ended));
    const endedHtml = renderItem(ended!, true);
    assert.match(endedHtml, /completed · 2 calls/);
    assert.match(endedHtml, /Its answer/);
    assert.match(endedHtml, /The parser is in src\/parse\.ts\./);
    assert.doesNotMatch(endedHtml, /stopAgent/);
    assert.match(endedHtml, /Open transcript/);
  });

  it('two sub-agents at once: agents/list puts each under the call that started it (callId)', () => {
    let s = run([
      { type: 'runStarted', prompt: 'Two things' },
      call('p1', 'first job'),
      call('p2', 'second job'),
      // The second one speaks first, with no description to go by: it lands in the first free card...
      ev({ kind: 'toolCall', id: 'k1', name: 'grep', arguments: {}, agentId: A2 }),
    ]);
    assert.equal(cards(s)[0]?.agent?.agentId, A2);
    // ...until the logs say which call started it.
    s = run([{ type: 'agents', agents: [info(A2, 'p2', { description: 'second job' })] }], s);
    assert.equal(s.agentCards[A2], cards(s)[1]?.id);
    // A task event's description finds its card among the free ones.
    s = run([ev({ kind: 'toolCall', id: 'k2', name: 'ls', arguments: {}, agentId: A1 })], s);
    assert.equal(s.agentCards[A1], cards(s)[0]?.id);
  });

  it('the end of the run cancels a foreground sub-agent still running', () => {
    const s = run([
      { type: 'runStarted', prompt: 'Go' },
      call('p1', 'slow job'),
      ev({ kind: 'toolCall', id: 'k1', name: 'run_command', arguments: { command: 'sleep 100' }, agentId: A1 }),
      { type: 'runFinished', canceled: true },
    ]);
    const [card] = cards(s);
    assert.equal(card?.status, 'interrupted');
    assert.equal(card?.agent?.status, 'canceled');
    assert.equal(card?.agent?.calls[0]?.status, 'interrupted');
    assert.match(renderItem(card!, false), /stopped/);
  });

  it('agents/list gives the final usage and state of a restored transcript\'s cards', () => {
    const items: TranscriptItem[] = [
      { kind: 'user', text: 'Look', inContext: true },
      { kind: 'toolCall', id: 'p1', name: 'agent', arguments: { prompt: 'x', description: 'find the parser' }, status: 'done', preview: 'Found it.', inContext: true },
    ];
    let s = fromItems(emptyState(folder, [folder]), 's1', items);
    s = reduce(s, { type: 'agents', agents: [info(A1, 'p1', { status: 'completed', usage: { inputTokens: 5000, outputTokens: 400 } })] });
    const [card] = cards(s);
    assert.equal(card?.agent?.status, 'completed');
    assert.deepEqual([card?.agent?.inputTokens, card?.agent?.outputTokens], [5000, 400]);
    assert.match(renderItem(card!, false), /completed · 5(\.0)?k in \/ 400 out/);
  });
});

describe('background tasks', () => {
  it('task events fill the list above the prompt; the card is found by the taskId its call answered', () => {
    let s = run([
      { type: 'runStarted', prompt: 'Start one' },
      call('p1', 'long job', { run_in_background: true, name: 'finder' }),
      ev({ kind: 'task', agentId: A1, taskId: A1, status: 'running', subagentType: 'general-purpose', description: 'long job', name: 'finder' }),
      ev({ kind: 'toolResult', id: 'p1', name: 'agent', isError: false, bytes: 40, preview: '', status: 'done', display: JSON.stringify({ taskId: A1, status: 'running' }) }),
      ev({ kind: 'toolCall', id: 'k1', name: 'grep', arguments: { pattern: 'x' }, agentId: A1 }),
      { type: 'runFinished', result: { sessionId: 's1', stopReason: 'completed', text: 'started', iterations: 1, usage: { inputTokens: 1, outputTokens: 1 } } },
    ]);
    assert.deepEqual(s.bgTasks, [{ taskId: A1, status: 'running', subagentType: 'general-purpose', label: 'finder' }]);
    assert.ok(!s.items.some((i) => i.kind === 'notice'), 'the start is the list, not a line');
    const [card] = cards(s);
    assert.equal(card?.agent?.background, true);
    assert.equal(card?.agent?.status, 'running', 'the run ended, the task goes on');
    assert.equal(card?.agent?.calls.length, 1);
    const html = renderItem(card!, false);
    assert.match(html, /running · background · 1 call/);
    assert.match(html, /data-action="stopAgent" data-agent="agent-00000000000000a1" data-background="true"/);
    const list = renderBackgroundTasks(s.bgTasks);
    assert.match(list, /Background tasks/);
    assert.match(list, /1 running/);
    assert.match(list, /finder/);
    assert.match(list, /data-action="stopAgent"/);

    s = run([ev({ kind: 'task', agentId: A1, taskId: A1, status: 'completed', subagentType: 'general-purpose', description: 'long job', name: 'finder', result: 'It is 42.' })], s);
    assert.equal(s.bgTasks[0]?.status, 'completed');
    assert.equal(cards(s)[0]?.agent?.status, 'completed');
    const notice = s.items.find((i) => i.kind === 'notice');
    assert.match(notice?.kind === 'notice' ? notice.text : '', /Background task agent-00000000000000a1 \(general-purpose\) completed: finder\nIt is 42\./);
    const after = renderBackgroundTasks(s.bgTasks);
    assert.match(after, /none running/);
    assert.doesNotMatch(after, /stopAgent/);
    assert.match(renderItem(cards(s)[0]!, true), /It is 42\./);
  });

  it('a task whose call is not shown gets a card of its own; a stopped one says so', () => {
    const s = run([
      ev({ kind: 'task', agentId: A2, taskId: A2, status: 'canceled', subagentType: 'explore', description: 'old job', result: 'stopped by the user' }),
    ]);
    const [card] = cards(s);
    assert.equal(card?.agent?.status, 'canceled');
    assert.equal(card?.agent?.description, 'old job');
    assert.match(renderBackgroundTasks(s.bgTasks), /stopped/);
  });

  it('reads the taskId of a background call, and nothing else', () => {
    assert.equal(taskIdOf('{"taskId": "agent-0123456789abcdef", "status": "running"}'), 'agent-0123456789abcdef');
    assert.equal(taskIdOf('The answer is 42.'), undefined);
    assert.equal(taskIdOf('{"taskId": "../../etc"}'), undefined);
    assert.equal(taskIdOf(undefined), undefined);
  });
});

describe('sub-agent messages from the webview', () => {
  it('checks Stop and Open transcript', () => {
    assert.ok(isFromWebview({ type: 'stopAgent', agentId: A1, background: true }));
    assert.ok(isFromWebview({ type: 'stopAgent', agentId: '', background: false }));
    assert.ok(!isFromWebview({ type: 'stopAgent', agentId: A1 }));
    assert.ok(isFromWebview({ type: 'agentTranscript', agentId: A1 }));
    assert.ok(!isFromWebview({ type: 'agentTranscript', agentId: '' }));
  });
});
