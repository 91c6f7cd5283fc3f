import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller, HISTORY_ITEMS } from '../src/controller';
import type { RequestOptions } from '../src/ports';
import type { CompactPreviewResult, CompactResult, ContextResult, MemoryShowResult, RunResult, UndoResult } from '../src/protocol';
import { Transcript } from '../src/transcript';
import { FakeAgent, FakeUi, flush, rpcError, StringSink } from './fakes';

const WS = 'file:///work/app';
const CONTEXT: ContextResult = {
  sessionId: 's1', checkpoints: { covers: 'all', skipped: [] }, ignoredSettings: [], mode: 'default', sandbox: { enabled: true }, messageCount: 4, estimatedTokens: 12_000, contextWindow: 200_000,
  autoCompactThreshold: 167_000, autoCompactFailures: 0, autoCompactTripped: false,
  breakdown: {
    system: 2_000, rules: 500, memory: 300, skills: 0, tools: 3_000, summary: 0, messages: 4_000, toolCalls: 700,
    toolResults: 1_500, spilled: 0, free: 188_000, reserved: 33_000,
  },
  rules: [{ path: 'AGENTS.md', tokens: 500, source: 'project' }],
};
const RESULT: RunResult = {
  sessionId: 's1', stopReason: 'completed', text: 'It keeps sessions.', iterations: 2,
  usage: { inputTokens: 1600, outputTokens: 70 },
};

function setup(answers: ConstructorParameters<typeof FakeAgent>[0] = {}, ui = new FakeUi()) {
  const agent = new FakeAgent({ 'pseudoclaude/context': CONTEXT, ...answers });
  const sink = new StringSink();
  const controller = new Controller(agent, ui, new Transcript(sink), () => new Date('2025-06-10T12:00:00Z'));
  return { agent, ui, sink, controller };
}

describe('Ask', () => {
  it('sends the prompt for the folder, streams into the transcript and updates the meter', async () => {
    const { agent, ui, sink, controller } = setup({
      'pseudoclaude/run': (_p: unknown, o?: RequestOptions) => {
        assert.equal(ui.status?.text, '$(sync~spin) PseudoClaude', 'busy before any numbers');
        o?.onProgress?.({ kind: 'begin', title: 'run' });
        o?.onProgress?.({ kind: 'report', message: 'model turn 1' });
        controller.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'It keeps ' });
        controller.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'c', name: 'read_file', arguments: { path: 'README.md' } });
        controller.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'sessions.' });
        controller.onContextUsage({ workspace: WS, sessionId: 's1', estimatedTokens: 12_000, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: CONTEXT.breakdown });
        assert.equal(ui.status?.text, '$(sync~spin) 12k/200k');
        return RESULT;
      },
    });
    ui.inputs = ['What is this project?'];
    const result = await controller.ask();
    await flush();
    assert.deepEqual(result, RESULT);
    assert.equal(agent.calls[0]?.method, 'pseudoclaude/run');
    assert.deepEqual(agent.calls[0]?.params, { prompt: 'What is this project?', workspace: WS });
    assert.ok(agent.calls[0]?.options?.token, 'the run is cancellable');
    assert.match(sink.text, /What is this project\?\n━━ PseudoClaude ━━\nIt keeps \n {2}▸ read_file\(path: README.md\)\nsessions\.\n── completed/);
    assert.deepEqual(ui.progressReports, ['model turn 1', 'read_file…']);
    assert.equal(ui.transcriptShown, 1);
    assert.deepEqual(ui.errors(), []);
    assert.equal(ui.status?.text, '12k/200k');
    assert.ok(agent.methods().includes('pseudoclaude/context'), 'the meter refreshes after the run');
  });

  it('sends the editor\'s context with the prompt (as the chat\'s chip shows it) and tells the chat', async () => {
    const { agent, sink, controller } = setup({ 'pseudoclaude/run': RESULT });
    const context = { activeFile: 'src/app.py', selection: { path: 'src/app.py', range: { start: { line: 2, character: 0 }, end: { line: 4, character: 3 } }, text: 'x' } };
    const asked: string[] = [];
    controller.editorContext = (folder) => {
      asked.push(folder.uri);
      return context;
    };
    const started: unknown[] = [];
    controller.listener = { runStarted: (_f, _p, c) => started.push(c) };
    await controller.ask('explain');
    assert.deepEqual(asked, [WS]);
    assert.deepEqual(agent.calls[0]?.params, { prompt: 'explain', workspace: WS, context });
    assert.deepEqual(started, [context]);
    assert.match(sink.text, /explain\n\(with src\/app.py:3-5\)\n━━ PseudoClaude ━━/);
  });

  it('takes the prompt from the command argument', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/run': RESULT });
    await controller.ask('explain');
    assert.deepEqual(agent.calls[0]?.params, { prompt: 'explain', workspace: WS });
    assert.equal(ui.inputOptions.length, 0);
  });

  it('does nothing when the input box is dismissed or empty', async () => {
    const { agent, ui, controller } = setup();
    ui.inputs = [undefined];
    assert.equal(await controller.ask(), undefined);
    ui.inputs = ['   '];
    assert.equal(await controller.ask(), undefined);
    assert.deepEqual(agent.calls, []);
  });

  it('shows the server message of a failed request', async () => {
    const { ui, sink, controller } = setup({
      'pseudoclaude/run': () => { throw rpcError(-32803, 'no model provider configured: set ANTHROPIC_API_KEY'); },
    });
    await controller.ask('hi');
    await flush();
    assert.deepEqual(ui.errors(), ['PseudoClaude: Ask failed: no model provider configured: set ANTHROPIC_API_KEY']);
    assert.match(sink.text, /── failed: no model provider configured/);
  });

  it('reports a run that stopped with an error or at the iteration limit', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/run': { ...RESULT, stopReason: 'error', error: 'rate limited' } });
    await controller.ask('hi');
    assert.deepEqual(ui.errors(), ['PseudoClaude: the run stopped with an error: rate limited']);
    const second = setup({ 'pseudoclaude/run': { ...RESULT, stopReason: 'max_iterations', iterations: 15 } });
    await second.controller.ask('hi');
    assert.match(second.ui.messages[0]?.text ?? '', /stopped after 15 iterations/);
  });

  it('refuses a second run in the same folder while one is in progress', async () => {
    let finish: (r: RunResult) => void = () => undefined;
    const { agent, ui, controller } = setup({ 'pseudoclaude/run': () => new Promise<RunResult>((r) => { finish = r; }) });
    const first = controller.ask('one');
    await flush();
    await controller.ask('two');
    assert.match(ui.errors()[0] ?? '', /a run is already in progress in app/);
    finish(RESULT);
    await first;
    assert.equal(agent.calls.filter((c) => c.method === 'pseudoclaude/run').length, 1);
  });

  it('Cancel Run cancels the request; a RequestCancelled answer is not an error', async () => {
    const { ui, sink, controller } = setup({
      'pseudoclaude/run': (_p: unknown, o?: RequestOptions) =>
        new Promise((_resolve, reject) => {
          o?.token?.onCancellationRequested(() => reject(rpcError(-32800, 'Request cancelled')));
        }),
    });
    const run = controller.ask('long job');
    await flush();
    await controller.cancelRun();
    assert.equal(await run, undefined);
    assert.deepEqual(ui.errors(), []);
    assert.match(sink.text, /── canceled ──/);
  });

  it('the progress notification Cancel button cancels too', async () => {
    const ui = new FakeUi();
    ui.cancelProgress = (t) => setImmediate(() => t.cancel());
    const { controller, sink } = setup({
      'pseudoclaude/run': (_p: unknown, o?: RequestOptions) =>
        new Promise((_resolve, reject) => {
          o?.token?.onCancellationRequested(() => reject(rpcError(-32800, 'Request cancelled')));
        }),
    }, ui);
    await controller.ask('long job');
    assert.match(sink.text, /── canceled ──/);
  });

  it('Cancel Run without a run says so', async () => {
    const { ui, controller } = setup();
    await controller.cancelRun();
    assert.deepEqual(ui.infos(), ['PseudoClaude: no run in progress.']);
  });
});

describe('folders', () => {
  it('asks which folder in a multi-root window without an active editor', async () => {
    const ui = new FakeUi([{ uri: 'file:///w/a', name: 'a' }, { uri: 'file:///w/b', name: 'b' }]);
    ui.picks = ['b'];
    const { agent, controller } = setup({ 'pseudoclaude/run': RESULT }, ui);
    await controller.ask('hi');
    assert.deepEqual(agent.calls[0]?.params, { prompt: 'hi', workspace: 'file:///w/b' });
  });
  it('uses the active editor folder without asking', async () => {
    const b = { uri: 'file:///w/b', name: 'b' };
    const ui = new FakeUi([{ uri: 'file:///w/a', name: 'a' }, b], b);
    const { agent, controller } = setup({ 'pseudoclaude/run': RESULT }, ui);
    await controller.ask('hi');
    assert.equal(ui.pickedFrom.length, 0);
    assert.deepEqual(agent.calls[0]?.params, { prompt: 'hi', workspace: 'file:///w/b' });
  });
  it('needs an open folder', async () => {
    const { ui, agent, controller } = setup({}, new FakeUi([]));
    await controller.ask('hi');
    assert.match(ui.errors()[0] ?? '', /open a folder first/);
    assert.deepEqual(agent.calls, []);
  });
});

describe('folderRequest: pick the folder, call the request, report the failure', () => {
  const NEW = { sessionId: 'n1' };

  it('sends the built params for the picked folder and answers what onResult makes of the result', async () => {
    const ui = new FakeUi([{ uri: 'file:///w/a', name: 'a' }, { uri: 'file:///w/b', name: 'b' }]);
    ui.picks = ['b'];
    const { agent, controller } = setup({ 'pseudoclaude/sessions/resume': { sessionId: 's', messageCount: 2, badLines: 0, repaired: 0 } }, ui);
    const seen: unknown[] = [];
    const answer = await controller.folderRequest({
      what: 'Resume Session',
      method: 'pseudoclaude/sessions/resume',
      params: (folder) => ({ sessionId: `latest-of-${folder.name}` }),
      onResult: (r, folder, params) => {
        seen.push(folder.name, params);
        return r.messageCount * 10;
      },
    });
    assert.equal(answer, 20);
    assert.deepEqual(agent.calls.map((c) => [c.method, c.params]), [
      ['pseudoclaude/sessions/resume', { sessionId: 'latest-of-b', workspace: 'file:///w/b' }],
    ]);
    assert.deepEqual(seen, ['b', { sessionId: 'latest-of-b', workspace: 'file:///w/b' }]);
    assert.deepEqual(ui.errors(), []);
  });

  it('without params sends the workspace alone; a given folder is not picked', async () => {
    const ui = new FakeUi([{ uri: 'file:///w/a', name: 'a' }, { uri: 'file:///w/b', name: 'b' }]);
    const { agent, controller } = setup({ 'pseudoclaude/sessions/new': NEW }, ui);
    const id = await controller.folderRequest({
      what: 'New Session',
      method: 'pseudoclaude/sessions/new',
      folder: { uri: 'file:///w/a', name: 'a' },
      onResult: (r) => r.sessionId,
    });
    assert.equal(id, 'n1');
    assert.equal(ui.pickedFrom.length, 0);
    assert.deepEqual(agent.calls[0]?.params, { workspace: 'file:///w/a' });
  });

  it('a failed request is shown as "<what> failed" with the server message; the meter still refreshes', async () => {
    const { agent, ui, controller } = setup({
      'pseudoclaude/sessions/new': () => { throw rpcError(-32803, 'a run is in progress in app\nTraceback (most recent call last)'); },
    });
    let called = false;
    const answer = await controller.folderRequest({
      what: 'New Session',
      method: 'pseudoclaude/sessions/new',
      refresh: true,
      onResult: () => { called = true; },
    });
    await flush();
    assert.equal(answer, undefined);
    assert.equal(called, false);
    assert.deepEqual(ui.errors(), ['PseudoClaude: New Session failed: a run is in progress in app']);
    assert.deepEqual(agent.methods(), ['pseudoclaude/sessions/new', 'pseudoclaude/context']);
  });

  it('a failure while building the params or using the result is reported the same way', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/sessions/new': NEW });
    await controller.folderRequest({
      what: 'Resume Session',
      method: 'pseudoclaude/sessions/resume',
      refresh: true,
      params: () => { throw rpcError(-32803, 'cannot list sessions'); },
      onResult: () => undefined,
    });
    await controller.folderRequest({
      what: 'New Session',
      method: 'pseudoclaude/sessions/new',
      onResult: () => { throw new Error('the transcript is gone'); },
    });
    assert.deepEqual(ui.errors(), [
      'PseudoClaude: Resume Session failed: cannot list sessions',
      'PseudoClaude: New Session failed: the transcript is gone',
    ]);
    assert.deepEqual(agent.methods(), ['pseudoclaude/sessions/new'], 'nothing sent, no meter refresh for the params failure');
  });

  it('no folder, a dismissed prompt or a cancelled request: nothing shown, nothing more sent', async () => {
    const none = setup({ 'pseudoclaude/sessions/new': NEW }, new FakeUi([]));
    assert.equal(await none.controller.folderRequest({ what: 'New Session', method: 'pseudoclaude/sessions/new', onResult: () => 1 }), undefined);
    assert.deepEqual(none.agent.calls, []);

    const { agent, ui, controller } = setup({
      'pseudoclaude/compact': () => { throw rpcError(-32800, 'cancelled'); },
    });
    const dismissed = await controller.folderRequest({
      what: 'Compact Context',
      method: 'pseudoclaude/compact',
      refresh: true,
      params: async () => undefined,
      onResult: () => 1,
    });
    assert.equal(dismissed, undefined);
    assert.deepEqual(agent.calls, []);
    const cancelled = await controller.folderRequest({
      what: 'Compact Context',
      method: 'pseudoclaude/compact',
      params: () => ({}),
      onResult: () => 1,
    });
    assert.equal(cancelled, undefined);
    assert.deepEqual(ui.errors(), []);
  });

  it('progress runs the request in a cancellable notification with work-done reports', async () => {
    const { agent, ui, controller } = setup({
      'pseudoclaude/compact': (_p: unknown, o?: RequestOptions) => {
        o?.onProgress?.({ kind: 'report', message: 'summarizing' });
        return { beforeTokens: 2, afterTokens: 1, offloaded: 0, summarized: true };
      },
    });
    const after = await controller.folderRequest({
      what: 'Compact Context',
      method: 'pseudoclaude/compact',
      progress: 'PseudoClaude: compacting the context',
      params: () => ({ instructions: 'keep the plan' }),
      onResult: (r) => r.afterTokens,
    });
    assert.equal(after, 1);
    assert.deepEqual(ui.progressTitles, ['PseudoClaude: compacting the context']);
    assert.deepEqual(ui.progressReports, ['summarizing']);
    assert.ok(agent.calls[0]?.options?.token, 'the request is cancellable');
    assert.deepEqual(agent.calls[0]?.params, { instructions: 'keep the plan', workspace: WS });
  });

  it('Resume Session reports a failed session list as its own failure', async () => {
    const { agent, ui, controller } = setup({
      'pseudoclaude/sessions/list': () => { throw rpcError(-32602, 'workspace: not a folder of this server'); },
    });
    await controller.resumeSession();
    assert.deepEqual(ui.errors(), ['PseudoClaude: Resume Session failed: workspace: not a folder of this server']);
    assert.deepEqual(agent.methods(), ['pseudoclaude/sessions/list']);
  });
});

const PREVIEW: CompactPreviewResult = {
  wouldSummarize: true, beforeTokens: 170_000, estimatedAfterTokens: 24_000, summarizedMessages: 12,
  keptMessages: 8, firstKeptIndex: 12, spill: { results: 2, bytes: 120_000 },
  message: 'Would summarize the 12 oldest messages and keep the 8 newest messages as they are: about 170k → 24k tokens.',
};
const COMPACTED: CompactResult = {
  beforeTokens: 170_000, afterTokens: 20_000, offloaded: 2, summarized: true,
  factCheck: { checked: 12, missing: 2, added: 2 },
  message: 'Compacted: the earlier conversation is now a summary (170k → 20k tokens).',
};
const NOTHING: CompactPreviewResult = {
  wouldSummarize: false, reason: 'nothing to summarize', beforeTokens: 900, estimatedAfterTokens: 900,
  summarizedMessages: 0, keptMessages: 3, firstKeptIndex: 0, spill: { results: 0, bytes: 0 },
  message: 'Nothing would be summarized: everything is recent (900 tokens).',
};

describe('Compact Context', () => {
  it('previews, asks, compacts with the same instructions and reports the fact check', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/compact/preview': PREVIEW, 'pseudoclaude/compact': COMPACTED });
    ui.inputs = ['focus on the parser'];
    ui.confirms = [true];
    await controller.compact();
    await flush();
    assert.deepEqual(agent.methods(), ['pseudoclaude/compact/preview', 'pseudoclaude/compact', 'pseudoclaude/context']);
    assert.deepEqual(agent.calls[0]?.params, { workspace: WS, instructions: 'focus on the parser' });
    assert.deepEqual(agent.calls[1]?.params, { workspace: WS, instructions: 'focus on the parser' });
    assert.ok(agent.calls[1]?.options?.onProgress, 'the compaction reports progress');
    assert.deepEqual(ui.progressTitles, ['PseudoClaude: compacting the context']);
    assert.deepEqual(ui.confirmations, [{
      message: PREVIEW.message,
      action: 'Compact',
      detail: 'Tokens: 170,000 → about 24,000\n' +
        'Summarized: 12 messages; kept: 8 (from message 13)\n' +
        'Offloaded: 2 tool results (117.2 KB)\n' +
        'Folder: app',
    }]);
    assert.deepEqual(ui.infos(), ['PseudoClaude: Compacted: the earlier conversation is now a summary (170k → 20k tokens).'], 'the server\'s line');
    assert.deepEqual(ui.errors(), []);
  });
  it('Cancel in the dialog compacts nothing', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/compact/preview': PREVIEW, 'pseudoclaude/compact': COMPACTED });
    ui.inputs = [''];
    ui.confirms = [false];
    await controller.compact();
    await flush();
    assert.deepEqual(agent.methods(), ['pseudoclaude/compact/preview']);
    assert.deepEqual(agent.calls[0]?.params, { workspace: WS });
    assert.equal(ui.confirmations.length, 1);
    assert.deepEqual(ui.infos(), []);
    assert.deepEqual(ui.errors(), []);
    assert.deepEqual(ui.progressTitles, []);
  });
  it('says why nothing would be summarized, without asking', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/compact/preview': NOTHING, 'pseudoclaude/compact': COMPACTED });
    ui.inputs = [''];
    await controller.compact();
    assert.deepEqual(agent.methods(), ['pseudoclaude/compact/preview']);
    assert.deepEqual(ui.confirmations, []);
    assert.deepEqual(ui.infos(), ['PseudoClaude: Nothing would be summarized: everything is recent (900 tokens).']);
    const none = setup({ 'pseudoclaude/compact/preview': { ...NOTHING, reason: 'no session', beforeTokens: 0, spill: { results: 1, bytes: 9 }, message: 'Nothing would be summarized: no conversation yet (0 tokens).' } });
    none.ui.inputs = [''];
    await none.controller.compact();
    assert.deepEqual(none.ui.infos(), ['PseudoClaude: Nothing would be summarized: no conversation yet (0 tokens).']);
  });
  it('offers to offload tool results when only that would happen', async () => {
    const { agent, ui, controller } = setup({
      'pseudoclaude/compact/preview': { ...NOTHING, reason: 'would not shrink', spill: { results: 1, bytes: 60_000 }, message: 'Nothing would be summarized: a summary would not be smaller (900 tokens; 1 tool result (60,000 bytes) would be saved to files).' },
      'pseudoclaude/compact': { beforeTokens: 30_000, afterTokens: 16_000, offloaded: 1, summarized: false, factCheck: { checked: 0, missing: 0, added: 0 }, message: 'Saved 1 tool result to files (30k → 16k tokens); nothing older than the recent window to summarize.' },
    });
    ui.inputs = [''];
    ui.confirms = [true];
    await controller.compact();
    assert.deepEqual(agent.methods().slice(0, 2), ['pseudoclaude/compact/preview', 'pseudoclaude/compact']);
    assert.match(ui.confirmations[0]?.message ?? '', /^Nothing would be summarized: a summary would not be smaller/);
    assert.equal(ui.confirmations[0]?.detail, 'Tokens: 900 → about 900\nOffloaded: 1 tool result (58.6 KB)\nFolder: app');
    assert.deepEqual(ui.infos(), ['PseudoClaude: Saved 1 tool result to files (30k → 16k tokens); nothing older than the recent window to summarize.']);
  });
  it('Escape cancels; a failed preview or compaction shows the server message', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/compact/preview': () => { throw rpcError(-32803, 'a run is in progress'); } });
    ui.inputs = [undefined];
    await controller.compact();
    assert.deepEqual(agent.calls, []);
    ui.inputs = [''];
    await controller.compact();
    assert.deepEqual(ui.errors(), ['PseudoClaude: Compact Context failed: a run is in progress']);
    assert.deepEqual(ui.confirmations, []);
    const late = setup({
      'pseudoclaude/compact/preview': PREVIEW,
      'pseudoclaude/compact': () => { throw rpcError(-32803, 'no active session to compact'); },
    });
    late.ui.inputs = [''];
    late.ui.confirms = [true];
    await late.controller.compact();
    assert.deepEqual(late.ui.errors(), ['PseudoClaude: Compact Context failed: no active session to compact']);
  });
});

describe('Undo Compaction', () => {
  it('restores the summarized messages, notes it in the transcript and refreshes the meter', async () => {
    const { agent, ui, sink, controller } = setup({
      'pseudoclaude/compact/undo': { restored: true, beforeTokens: 20_000, afterTokens: 170_000, messageCount: 42, message: 'Undone: what the last compaction summarized is back (42 messages, 20k → 170k tokens).' } satisfies UndoResult,
    });
    await controller.undoCompaction();
    await flush();
    assert.deepEqual(agent.methods(), ['pseudoclaude/compact/undo', 'pseudoclaude/context']);
    assert.deepEqual(agent.calls[0]?.params, { workspace: WS });
    assert.deepEqual(ui.progressTitles, ['PseudoClaude: undoing the last compaction']);
    assert.deepEqual(ui.infos(), ['PseudoClaude: Undone: what the last compaction summarized is back (42 messages, 20k → 170k tokens).']);
    assert.match(sink.text, /· Undone: what the last compaction summarized is back \(42 messages, 20k → 170k tokens\)/);
    assert.deepEqual(ui.confirmations, [], 'undo does not ask');
  });
  it('says why nothing was restored', async () => {
    const { ui, sink, controller } = setup({
      'pseudoclaude/compact/undo': { restored: false, reason: 'no compaction to undo', beforeTokens: 900, afterTokens: 900, messageCount: 3, message: 'Nothing to undo: no compaction to undo.' },
    });
    await controller.undoCompaction();
    assert.deepEqual(ui.messages.map((m) => [m.level, m.text]), [['warn', 'PseudoClaude: Nothing to undo: no compaction to undo.']]);
    assert.equal(sink.text, '');
  });
  it('a failure shows the server message', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/compact/undo': () => { throw rpcError(-32803, 'a run is in progress'); } });
    await controller.undoCompaction();
    assert.deepEqual(ui.errors(), ['PseudoClaude: Undo Compaction failed: a run is in progress']);
  });
});

const MEMORY: MemoryShowResult = {
  index: '## Project Memory\n- [project_knowledge] Tests — make test (project_knowledge_tests.md)',
  truncated: false,
  health: { lines: 2, bytes: 80, maxLines: 200, maxBytes: 25_600 },
  stores: [
    { level: 'project', dir: '/work/app/.PseudoClaude/memory', indexUri: 'file:///work/app/.PseudoClaude/memory/MEMORY.md', notes: [
      { filename: 'project_knowledge_tests.md', uri: 'file:///work/app/.PseudoClaude/memory/project_knowledge_tests.md', type: 'project_knowledge', title: 'Tests', summary: 'make test' },
    ] },
    { level: 'user', dir: '/home/u/.PseudoClaude/memory', indexUri: 'file:///home/u/.PseudoClaude/memory/MEMORY.md', notes: [] },
  ],
};

describe('memory commands', () => {
  it('Show Memory opens a picked note', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/memory/show': MEMORY });
    ui.picks = ['Tests'];
    await controller.showMemory();
    assert.deepEqual(ui.opened, ['file:///work/app/.PseudoClaude/memory/project_knowledge_tests.md']);
  });
  it('Show Memory opens the injected index as a document', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/memory/show': MEMORY });
    ui.picks = ['Memory index'];
    await controller.showMemory();
    assert.deepEqual(ui.texts, [{ content: MEMORY.index, language: 'markdown' }]);
  });
  it('the forget button asks, then forgets the note', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/memory/show': MEMORY, 'pseudoclaude/memory/forget': { removed: true } });
    ui.picks = ['Tests'];
    ui.forgetOnPick = [true];
    ui.confirms = [true];
    await controller.showMemory();
    const forget = agent.calls.find((c) => c.method === 'pseudoclaude/memory/forget');
    assert.deepEqual(forget?.params, { workspace: WS, level: 'project', filename: 'project_knowledge_tests.md' });
  });
  it('Remember... sends text, level and type, and offers to open the note', async () => {
    const { agent, ui, controller } = setup({ 'pseudoclaude/memory/remember': { filename: 'user_preference_tabs.md', uri: 'file:///home/u/.PseudoClaude/memory/user_preference_tabs.md' } });
    ui.inputs = ['  I prefer tabs  '];
    ui.picks = ['User', 'user_preference'];
    ui.choice = 'Open';
    await controller.remember();
    assert.deepEqual(agent.calls[0]?.params, { workspace: WS, text: 'I prefer tabs', level: 'user', type: 'user_preference' });
    assert.deepEqual(ui.infos(), ['PseudoClaude: remembered in user_preference_tabs.md (user memory).']);
    assert.deepEqual(ui.opened, ['file:///home/u/.PseudoClaude/memory/user_preference_tabs.md']);
  });
  it('Remember... shows a refused secret as the server says it', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/memory/remember': () => { throw rpcError(-32602, 'text: looks like a secret (API key); not remembered'); } });
    ui.inputs = ['sk-ant-123'];
    ui.picks = ['Project', 'project_knowledge'];
    await controller.remember();
    assert.deepEqual(ui.errors(), ['PseudoClaude: Remember failed: text: looks like a secret (API key); not remembered']);
  });
  it('Open MEMORY.md asks which level and opens its index', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/memory/show': MEMORY });
    ui.picks = ['Project'];
    await controller.openMemoryIndex();
    assert.deepEqual(ui.opened, ['file:///work/app/.PseudoClaude/memory/MEMORY.md']);
  });
  it('Open MEMORY.md explains a missing file', async () => {
    const { ui, controller } = setup({ 'pseudoclaude/memory/show': MEMORY });
    ui.picks = ['User'];
    ui.openFails = new Error('Unable to read file');
    await controller.openMemoryIndex();
    assert.match(ui.errors()[0] ?? '', /cannot open \/home\/u\/\.PseudoClaude\/memory\/MEMORY\.md \(no user memory yet: "PseudoClaude: Remember\.\.\." creates it\): Unable to read file/);
  });
});

describe('sessions', () => {
  const SESSIONS = { sessions: [
    { id: '20250610-115500-abcd', title: 'fix the parser', createdAt: '2025-06-10T11:00:00Z', updatedAt: '2025-06-10T11:55:00Z', messageCount: 30, bytes: 4300, model: 'm', active: false, running: false, worktree: null, answered: true },
  ] };
  it('Resume Session picks from the list, resumes and replays the tail', async () => {
    const { agent, ui, sink, controller } = setup({
      'pseudoclaude/sessions/list': SESSIONS,
      'pseudoclaude/sessions/resume': { sessionId: '20250610-115500-abcd', messageCount: 30, badLines: 0, repaired: 0 },
      'pseudoclaude/sessions/messages': { sessionId: '20250610-115500-abcd', total: 30, items: [{ kind: 'assistant', text: 'Done.', inContext: true }] },
    });
    ui.picks = ['fix the parser'];
    await controller.resumeSession();
    assert.deepEqual(agent.calls[1]?.params, { workspace: WS, sessionId: '20250610-115500-abcd' });
    assert.deepEqual(agent.calls[2]?.params, { workspace: WS, sessionId: '20250610-115500-abcd', offset: 0, limit: 1 });
    assert.deepEqual(agent.calls[3]?.params, { workspace: WS, sessionId: '20250610-115500-abcd', offset: 30 - HISTORY_ITEMS, limit: HISTORY_ITEMS });
    assert.match(sink.text, /resumed session 20250610-115500-abcd \(30 messages\)\n· \(10 earlier entries not shown\)\nPseudoClaude: Done\./);
    assert.deepEqual(ui.infos(), ['PseudoClaude: resumed session 20250610-115500-abcd (30 messages).']);
    assert.equal(ui.pickedFrom[0]?.items[0]?.description, '5 min ago · 30 messages · m');
  });
  it('Resume Session warns about repairs and says when there is nothing to resume', async () => {
    const { ui, controller } = setup({
      'pseudoclaude/sessions/list': SESSIONS,
      'pseudoclaude/sessions/resume': { sessionId: 'x', messageCount: 3, badLines: 1, repaired: 2 },
      'pseudoclaude/sessions/messages': { sessionId: 'x', total: 3, items: [] },
    });
    ui.picks = ['fix'];
    await controller.resumeSession();
    assert.match(ui.messages.find((m) => m.level === 'warn')?.text ?? '', /1 unreadable line skipped, 2 repairs/);
    const empty = setup({ 'pseudoclaude/sessions/list': { sessions: [] } });
    await empty.controller.resumeSession();
    assert.deepEqual(empty.ui.infos(), ['PseudoClaude: no sessions yet in app.']);
  });
  it('Resume Session takes an id argument without listing', async () => {
    const { agent, controller } = setup({
      'pseudoclaude/sessions/resume': { sessionId: 'latest-id', messageCount: 0, badLines: 0, repaired: 0 },
      'pseudoclaude/sessions/messages': { sessionId: 'latest-id', total: 0, items: [] },
    });
    await controller.resumeSession('latest');
    assert.equal(agent.calls[0]?.method, 'pseudoclaude/sessions/resume');
    assert.deepEqual(agent.calls[0]?.params, { workspace: WS, sessionId: 'latest' });
  });
  it('New Session starts one and notes it', async () => {
    const { ui, sink, controller } = setup({ 'pseudoclaude/sessions/new': { sessionId: 'n1' } });
    await controller.newSession();
    assert.deepEqual(ui.infos(), ['PseudoClaude: new session n1.']);
    assert.match(sink.text, /new session n1 in app/);
  });
});

describe('status and context', () => {
  it('refreshContext fills the meter; failures only reach the log', async () => {
    const { ui, controller } = setup();
    await controller.refreshContext();
    assert.equal(ui.status?.text, '12k/200k');
    const failing = setup({ 'pseudoclaude/context': () => { throw new Error('server not running'); } });
    await failing.controller.refreshContext();
    assert.equal(failing.ui.status?.text, 'PseudoClaude');
    assert.deepEqual(failing.ui.errors(), []);
    assert.match(failing.ui.logs[0] ?? '', /server not running/);
  });
  it('Show Context warns when the breaker tripped and can start a compaction', async () => {
    const ui = new FakeUi();
    const { agent, controller } = setup({
      'pseudoclaude/context': { ...CONTEXT, autoCompactFailures: 3, autoCompactTripped: true },
      'pseudoclaude/compact/preview': NOTHING,
    }, ui);
    ui.choice = 'Compact Context';
    ui.inputs = [''];
    await controller.showContext();
    assert.match(ui.messages[0]?.text ?? '', /12,000 of 200,000 tokens · 4 messages · session s1 .* Auto-compact stopped after 3 failures/);
    assert.equal(ui.messages[0]?.level, 'warn');
    assert.equal(ui.status?.level, 'error');
    assert.ok(agent.methods().includes('pseudoclaude/compact/preview'));
    assert.equal(ui.infos().at(-1), `PseudoClaude: ${NOTHING.message}`);
  });
  it('an error event refreshes the breaker state', async () => {
    const { agent, controller } = setup();
    controller.onEvent({ workspace: WS, sessionId: 's1', kind: 'error', message: 'auto-compact failed' });
    await flush();
    assert.deepEqual(agent.methods(), ['pseudoclaude/context']);
  });
});
