/** The chat's extension side against a fake server and a fake webview. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ChatHost,
  inlineApprovalCard,
  lineChanges,
  modalApprovalCard,
  modalStatus,
  RUN_IN_PROGRESS,
  SHOW_SESSION,
  type ChatEnv,
  type ChatPickOptions,
  type DiffRequest,
  type WorktreeDiff,
} from '../src/chat/host';
import type { McpExit, McpMenu } from '../src/chat/mcp';
import type { KeepOpenItem } from '../src/chat/rewind';
import type { ToWebview } from '../src/chat/messages';
import { worktreeOf } from '../src/chat/model';
import { renderItem, renderSessionOptions } from '../src/chat/render';
import type { RequestOptions } from '../src/ports';
import type { ContextResult, HookEntry, McpServer, RunResult, SkillEntry, StatusResult, TranscriptItem } from '../src/protocol';
import { reviewedNotice } from '../src/chat/catalog';
import { FakeAgent, fakeEditor, flush, rpcError } from './fakes';

const WS = 'file:///work/app';
const folder = { uri: WS, name: 'app' };
const CONTEXT: ContextResult = {
  sessionId: 's1', checkpoints: { covers: 'all', skipped: [] }, ignoredSettings: [], mode: 'default', sandbox: { enabled: true }, messageCount: 2, estimatedTokens: 12_000, contextWindow: 200_000,
  autoCompactThreshold: 167_000, autoCompactFailures: 0, autoCompactTripped: false,
  breakdown: { system: 2_000, rules: 0, memory: 0, skills: 0, tools: 3_000, summary: 0, messages: 7_000, toolCalls: 0, toolResults: 0, spilled: 0, free: 188_000, reserved: 33_000 },
  rules: [],
};
const SESSIONS = { sessions: [{ id: 's1', title: 'Hello', createdAt: '', updatedAt: '', messageCount: 2, bytes: 10, model: 'm', active: true, running: false, worktree: null, answered: true }] };
const ITEMS: TranscriptItem[] = [{ kind: 'user', text: 'hello', inContext: true }, { kind: 'assistant', text: 'Hi **there**.', inContext: true }];
const RESULT: RunResult = { sessionId: 's1', stopReason: 'completed', text: 'It is a demo.', iterations: 1, usage: { inputTokens: 10, outputTokens: 5 } };

class FakeEnv implements ChatEnv {
  readonly logs: string[] = [];
  readonly copied: string[] = [];
  readonly links: string[] = [];
  readonly diffs: DiffRequest[] = [];
  readonly closed: string[] = [];
  revealed = 0;
  otherCancelled = 0;
  changed = 0;
  folders() { return [folder]; }
  activeFolder() { return undefined; }
  log(m: string) { this.logs.push(m); }
  async copy(t: string) { this.copied.push(t); }
  async openLink(h: string) { this.links.push(h); }
  async showDiff(d: DiffRequest) { this.diffs.push(d); }
  closeDiff(id: string) { this.closed.push(id); }
  /** Whether each reveal gave the chat the keyboard. */
  readonly reveals: boolean[] = [];
  async reveal(focus?: boolean) { this.revealed++; this.reveals.push(focus === true); }
  async cancelOtherRun() { this.otherCancelled++; }
  sessionsChanged() { this.changed++; }
  memoryShown = 0;
  async showMemory() { this.memoryShown++; }
  readonly remembered = new Map<string, string>();
  rememberedSession(f: string) { return this.remembered.get(f); }
  rememberSession(f: string, id: string) { this.remembered.set(f, id); }
  /** Each pick answers with the item whose label includes this text (undefined: Escape); a `keepOpen` item is chosen and the next text answers the same list. */
  picks: (string | undefined)[] = [];
  readonly picked: { title: string; placeHolder?: string; items: KeepOpenItem<unknown>[] }[] = [];
  /** What `onKeep` answered (a note on the item). */
  readonly kept: (string | undefined)[] = [];
  async pick<T>(items: KeepOpenItem<T>[], options: ChatPickOptions<T>): Promise<T | undefined> {
    this.picked.push({ title: options.title, placeHolder: options.placeHolder, items: items as KeepOpenItem<unknown>[] });
    for (;;) {
      const want = this.picks.shift();
      if (want === undefined) {
        return undefined;
      }
      const item = items.find((i) => !i.separator && i.label.includes(want));
      if (!item) {
        throw new Error(`no item with ${want} in ${items.map((i) => i.label).join(' | ')}`);
      }
      if (!item.keepOpen) {
        return item.value;
      }
      this.kept.push(await options.onKeep?.(item.value));
    }
  }
  readonly rewindDiffs: DiffRequest[] = [];
  readonly rewindClosed: string[] = [];
  async showRewindDiff(d: DiffRequest) { this.rewindDiffs.push(d); }
  closeRewindDiff(id: string) { this.rewindClosed.push(id); }
  /** Each MCP menu shown gets the next of these: it acts on the menu, then answers (undefined: closed). */
  menus: ((menu: McpMenu) => Promise<McpExit | undefined> | McpExit | undefined)[] = [];
  readonly menusShown: McpMenu[] = [];
  async mcpMenu(menu: McpMenu) {
    this.menusShown.push(menu);
    const next = this.menus.shift();
    return next ? next(menu) : undefined;
  }
  /** What each modal question answers (undefined: dismissed). */
  answers: (string | undefined)[] = [];
  readonly asked: { message: string; detail: string; actions: readonly string[] }[] = [];
  async ask(message: string, detail: string, actions: readonly string[]) {
    this.asked.push({ message, detail, actions });
    return this.answers.shift();
  }
  readonly files = new Map<string, string>();
  async readFile(_folder: unknown, path: string) { return this.files.get(path); }
  readonly configsOpened: string[] = [];
  async openMcpConfig(where: 'settings' | 'mcpJson') { this.configsOpened.push(where); }
  readonly worktreeDiffs: WorktreeDiff[] = [];
  async showWorktreeDiff(d: WorktreeDiff) { this.worktreeDiffs.push(d); }
  /** Notifications shown; each answers with the next of `clicks` (undefined: dismissed). */
  readonly notified: { message: string; actions: readonly string[] }[] = [];
  clicks: (string | undefined)[] = [];
  async notify(message: string, actions: readonly string[]) {
    this.notified.push({ message, actions });
    return this.clicks.shift();
  }  /** Transcripts shown in the output (a sub-agent's). */
  readonly transcripts: { title: string; items: readonly TranscriptItem[]; skipped: number }[] = [];
  showTranscript(title: string, items: readonly TranscriptItem[], skipped: number) {
    this.transcripts.push({ title, items, skipped });
  }
}

function setup(answers: ConstructorParameters<typeof FakeAgent>[0] = {}, options: ConstructorParameters<typeof ChatHost>[2] = {}) {
  const agent = new FakeAgent({
    'pseudoclaude/context': CONTEXT,
    'pseudoclaude/sessions/list': SESSIONS,
    'pseudoclaude/sessions/messages': (p: unknown) => {
      const { offset = 0, limit, sessionId = 's1' } = p as { offset?: number; limit?: number; sessionId?: string };
      return { sessionId, total: ITEMS.length, items: ITEMS.slice(offset, limit === undefined ? undefined : offset + limit) };
    },
    ...answers,
  });
  const env = new FakeEnv();
  const host = new ChatHost(agent, env, options);
  const posted: ToWebview[] = [];
  host.attach({ post: (m) => posted.push(m) });
  return { agent, env, host, posted };
}

describe('ChatHost: loading', () => {
  it('answers ready with the state, then the transcript restored from the log, the meter and the sessions', async () => {
    const { host, posted, agent } = setup();
    await host.handle({ type: 'ready' });
    assert.equal(posted[0]?.type, 'restore');
    const restores = posted.filter((m): m is Extract<ToWebview, { type: 'restore' }> => m.type === 'restore');
    const last = restores[restores.length - 1]?.state;
    assert.deepEqual(last?.items.map((i) => i.kind), ['user', 'assistant']);
    assert.equal(last?.sessionId, 's1');
    assert.equal(last?.meter?.estimatedTokens, 12_000);
    assert.ok(posted.some((m) => m.type === 'sessions'));
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/sessions/messages').map((c) => c.params), [
      { workspace: WS, sessionId: 's1', offset: 0, limit: 1 },
      { workspace: WS, sessionId: 's1', offset: 0 },
    ]);
  });

  it('posts nothing before ready; a fresh server (no session) shows an empty chat', async () => {
    const { host, posted } = setup({ 'pseudoclaude/context': { ...CONTEXT, sessionId: null } });
    await host.reload();
    assert.deepEqual(posted, []);
    assert.deepEqual(host.current.items, []);
    assert.equal(host.current.sessionId, null);
  });

  it('after a reload (a server with no session) resumes the session the chat showed last', async () => {
    let current: string | null = null;
    const { host, env, agent } = setup({
      'pseudoclaude/context': () => ({ ...CONTEXT, sessionId: current }),
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
    });
    env.remembered.set(WS, 's1');
    await host.handle({ type: 'ready' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/resume')?.params, { workspace: WS, sessionId: 's1' });
    assert.equal(host.current.sessionId, 's1');
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant']);
  });

  it('a reload asked for during a load that found no server yet loads again: the remembered session comes back', async () => {
    // After a window reload the webview's `ready` comes while the server is still starting: the
    // first load cannot read the context; the server's ready (another reload) must not just
    // share that failing load, or the chat stays empty ("New session", no meter).
    let current: string | null = null;
    let release: () => void = () => undefined;
    const starting = new Promise<void>((resolve) => {
      release = resolve;
    });
    let contextCalls = 0;
    const { host, env } = setup({
      'pseudoclaude/context': async () => {
        if (++contextCalls === 1) {
          await starting;
          throw new Error('the PseudoClaude server is not running');
        }
        return { ...CONTEXT, sessionId: current };
      },
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
    });
    env.remembered.set(WS, 's1');
    const ready = host.handle({ type: 'ready' });
    await flush();
    const serverReady = host.reload();
    release();
    await Promise.all([ready, serverReady]);
    assert.equal(host.current.sessionId, 's1');
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant']);
    assert.equal(host.current.meter?.estimatedTokens, 12_000);
  });

  it('remembers the session it shows', async () => {
    const { host, env } = setup();
    await host.handle({ type: 'ready' });
    assert.equal(env.remembered.get(WS), 's1');
  });

  it('ignores malformed webview messages', async () => {
    const { host, env, agent } = setup();
    await host.handle({ type: 'send' });
    await host.handle({ type: 'approve', id: 'x', decision: 'always' });
    await host.handle('ready');
    assert.equal(agent.calls.length, 0);
    assert.equal(env.logs.length, 3);
  });
});

describe('ChatHost: running', () => {
  it('sends the prompt, forwards the folder\'s events, and ends with the result', async () => {
    const { host, posted, agent } = setup({
      'pseudoclaude/run': () => {
        host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'It is ' });
        host.onEvent({ workspace: 'file:///other', sessionId: 's9', kind: 'text', delta: 'NOT HERE' });
        host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'a demo.' });
        return RESULT;
      },
    });
    await host.handle({ type: 'ready' });
    posted.length = 0;
    await host.handle({ type: 'send', prompt: 'What is it?' });
    const run = agent.calls.find((c) => c.method === 'pseudoclaude/run');
    // the chat's session by name (several sessions of the folder may run at once)
    assert.deepEqual(run?.params, { prompt: 'What is it?', workspace: WS, sessionId: 's1' });
    assert.ok(run?.options?.token);
    assert.deepEqual(posted.slice(0, 4).map((m) => m.type), ['runStarted', 'event', 'event', 'runFinished']);
    const items = host.current.items;
    assert.deepEqual(items.slice(-3).map((i) => i.kind), ['user', 'assistant', 'end']);
    const answer = items[items.length - 2];
    assert.equal(answer?.kind === 'assistant' && answer.text, 'It is a demo.');
    assert.equal(host.current.running, false);
  });

  it('cancels its run: the run request is cancelled and the run ends as cancelled', async () => {
    let options: RequestOptions | undefined;
    const { host } = setup({
      'pseudoclaude/run': (_p: unknown, o?: RequestOptions) => {
        options = o;
        return new Promise((_resolve, reject) => {
          o?.token?.onCancellationRequested(() => reject(rpcError(-32800, 'cancelled')));
        });
      },
    });
    const running = host.ask('slow');
    await flush();
    assert.equal(host.hasRun, true);
    assert.equal(await host.cancel(), true);
    await running;
    assert.equal(options?.token?.isCancellationRequested, true);
    const last = host.current.items[host.current.items.length - 1];
    assert.deepEqual(last?.kind === 'end' && last.stopReason, 'canceled');
  });

  it('says why a run failed, and refuses a second run meanwhile', async () => {
    let release: (v: unknown) => void = () => undefined;
    const { host } = setup({ 'pseudoclaude/run': () => new Promise((r) => { release = r; }) });
    const first = host.ask('one');
    await flush();
    await host.ask('two');
    assert.match(JSON.stringify(host.current.items), /A run is in progress/);
    release(RESULT);
    await first;
    const failing = setup({ 'pseudoclaude/run': () => { throw rpcError(-32803, 'no provider configured'); } });
    await failing.host.ask('x');
    const notice = failing.host.current.items.find((i) => i.kind === 'notice');
    assert.deepEqual(notice?.kind === 'notice' && [notice.level, notice.text], ['error', 'the run failed: no provider configured']);
  });

  it('shows a run of the Ask command in its folder, and Stop cancels it through the command', async () => {
    const { host, env } = setup();
    host.otherRunStarted(WS, 'from Ask');
    assert.equal(host.current.running, true);
    assert.equal(host.current.items[0]?.kind === 'user' && host.current.items[0].text, 'from Ask');
    await host.handle({ type: 'cancel' });
    assert.equal(env.otherCancelled, 1);
    host.otherRunFinished(WS, undefined, true);
    assert.equal(host.current.running, false);
    host.otherRunStarted('file:///elsewhere', 'no');
    assert.equal(host.current.running, false);
  });

  it('reloads the transcript when another session becomes current (resumed elsewhere)', async () => {
    const { host, agent } = setup();
    await host.handle({ type: 'ready' });
    const before = agent.calls.length;
    host.onContextUsage({ workspace: WS, sessionId: 's2', estimatedTokens: 1, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: CONTEXT.breakdown });
    await flush();
    await flush();
    assert.ok(agent.calls.slice(before).some((c) => c.method === 'pseudoclaude/sessions/messages'));
  });
});

describe('ChatHost: compaction, undo, sessions', () => {
  const PREVIEW = { wouldSummarize: true, beforeTokens: 150_000, estimatedAfterTokens: 12_000, summarizedMessages: 40, keptMessages: 5, firstKeptIndex: 40, spill: { results: 0, bytes: 0 }, message: 'Would summarize the 40 oldest messages.' };

  it('previews first, compacts on confirm with the instructions, and reports the fact check', async () => {
    const { host, agent } = setup({
      'pseudoclaude/compact/preview': PREVIEW,
      'pseudoclaude/compact': { beforeTokens: 150_000, afterTokens: 14_000, offloaded: 0, summarized: true, factCheck: { checked: 9, missing: 1, added: 1 }, message: 'Compacted (150k → 14k tokens); summary checked: 9 facts.' },
    });
    await host.handle({ type: 'compactPreview' });
    assert.ok(!agent.methods().includes('pseudoclaude/compact'), 'nothing compacted before the confirmation');
    const card = host.current.items.find((i) => i.kind === 'preview');
    assert.ok(card?.kind === 'preview' && card.status === 'asking');
    await host.handle({ type: 'compactConfirm', id: card.id, instructions: ' keep the parser ' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/compact')?.params, { workspace: WS, instructions: 'keep the parser' });
    const done = host.current.items.find((i) => i.id === card.id);
    assert.ok(done?.kind === 'preview');
    assert.equal(done.status, 'done');
    assert.equal(done.result, 'Compacted (150k → 14k tokens); summary checked: 9 facts.', 'the result\'s message');
    await host.handle({ type: 'compactConfirm', id: card.id });
    assert.equal(agent.methods().filter((m) => m === 'pseudoclaude/compact').length, 1, 'a card compacts once');
  });

  it('says why there is nothing to compact; Cancel leaves the context alone', async () => {
    const { host, agent } = setup({ 'pseudoclaude/compact/preview': { ...PREVIEW, wouldSummarize: false, reason: 'nothing to summarize', message: 'Nothing would be summarized: everything is recent.' } });
    await host.handle({ type: 'compactPreview' });
    const notice = host.current.items[0];
    assert.ok(notice?.kind === 'notice');
    assert.equal(notice.text, 'Nothing would be summarized: everything is recent.');
    const other = setup({ 'pseudoclaude/compact/preview': PREVIEW });
    await other.host.handle({ type: 'compactPreview' });
    const id = other.host.current.items[0]?.id ?? '';
    await other.host.handle({ type: 'compactCancel', id });
    assert.equal(other.host.current.items[0]?.kind === 'preview' && other.host.current.items[0].status, 'cancelled');
    assert.ok(!agent.methods().includes('pseudoclaude/compact'));
  });

  it('undoes a compaction, reloads the transcript and says what came back in the server\'s words', async () => {
    const { host, agent } = setup({ 'pseudoclaude/compact/undo': { restored: true, beforeTokens: 14_000, afterTokens: 150_000, messageCount: 45, message: 'Undone: 45 messages are back.' } });
    await host.handle({ type: 'undo' });
    assert.ok(agent.methods().includes('pseudoclaude/sessions/messages'), 'reloaded');
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant', 'notice']);
    const notice = host.current.items.at(-1);
    assert.ok(notice?.kind === 'notice');
    assert.deepEqual([notice.level, notice.text], ['info', 'Undone: 45 messages are back.']);
    const none = setup({ 'pseudoclaude/compact/undo': { restored: false, beforeTokens: 1, afterTokens: 1, messageCount: 0, message: 'Nothing to undo: no compaction left to undo.' } });
    await none.host.handle({ type: 'undo' });
    assert.deepEqual(none.host.current.items.map((i) => i.kind === 'notice' && [i.level, i.text]), [['warning', 'Nothing to undo: no compaction left to undo.']]);
  });

  it('starts a new session (an empty chat) and resumes another one (its transcript)', async () => {
    const { host, agent, env } = setup({
      'pseudoclaude/sessions/new': { sessionId: 's2' },
      'pseudoclaude/sessions/resume': { sessionId: 's1', messageCount: 2, badLines: 1, repaired: 0 },
    });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'newSession' });
    assert.equal(host.current.sessionId, 's2');
    assert.equal(host.current.items.length, 0);
    await host.handle({ type: 'resume', sessionId: 's1' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/resume')?.params, { workspace: WS, sessionId: 's1' });
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant', 'notice']);
    assert.ok(env.changed >= 2, 'the Sessions view refreshes');
  });
});

describe('ChatHost: approvals', () => {
  it('shows a modal approval as a pending card and its answer', () => {
    const { host } = setup();
    const id = host.modalApprovalShown('PseudoClaude wants to use run_command: make test\nArguments: {"command": "make test"}');
    const card = host.current.items[0];
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.tool, card.title, card.detail, card.mode, card.status], [
      'run_command', 'Allow run_command: make test?', 'Arguments: {"command": "make test"}', 'modal', 'pending',
    ]);
    host.modalApprovalAnswered(id, 'Allow for this session');
    assert.equal(host.current.items[0]?.kind === 'approval' && host.current.items[0].status, 'allowSession');
    assert.equal(modalStatus(undefined), 'dismissed');
    assert.equal(modalStatus('Deny'), 'deny');
    assert.equal(modalApprovalCard('odd').tool, 'a tool');
  });

  it('pseudoclaude/approve: a card with buttons, the diff for a write, the answer from the webview', async () => {
    const { host, env } = setup();
    const answer = host.approve({
      workspace: WS, sessionId: 's1', tool: 'edit_file', arguments: { path: 'src/a.ts' }, kind: 'write',
      path: 'src/a.ts', before: 'a\nb\n', after: 'a\nB\nc\n',
    });
    await flush();
    const card = host.current.items[0];
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.mode, card.path, card.title, card.detail], ['inline', 'src/a.ts', 'Allow edit_file to change src/a.ts?', 'src/a.ts (2 lines added, 1 removed)']);
    assert.equal(env.revealed, 1);
    assert.deepEqual(env.diffs.map((d) => [d.path, d.before, d.after]), [['src/a.ts', 'a\nb\n', 'a\nB\nc\n']]);
    await host.handle({ type: 'showDiff', id: card.id });
    assert.equal(env.diffs.length, 2, 'Show diff opens it again');
    await host.handle({ type: 'approve', id: card.id, decision: 'allowOnce' });
    assert.deepEqual(await answer, { decision: 'allowOnce', message: null, mode: null, feedback: null });
    assert.deepEqual(env.closed, [card.id]);
    assert.equal(host.current.items[0]?.kind === 'approval' && host.current.items[0].status, 'allowOnce');
  });

  it('a cancelled approval request, or Stop, answers deny', async () => {
    const { host } = setup();
    let cancel: (e: unknown) => unknown = () => undefined;
    const token = { isCancellationRequested: false, onCancellationRequested: (l: (e: unknown) => unknown) => { cancel = l; return { dispose: () => undefined }; } };
    const answer = host.approve({ workspace: WS, sessionId: 's1', tool: 'run_command', arguments: { command: 'rm -rf build' }, kind: 'runCommand', command: 'rm -rf build', cwd: '/work/app' }, token);
    await flush();
    cancel(undefined);
    assert.deepEqual(await answer, { decision: 'deny', message: null, mode: null, feedback: null });
    assert.equal(host.current.items[0]?.kind === 'approval' && host.current.items[0].status, 'cancelled');
    const second = host.approve({ workspace: WS, sessionId: 's1', tool: 'run_command', arguments: {}, kind: 'runCommand', command: 'ls' });
    await flush();
    await host.handle({ type: 'cancel' });
    assert.deepEqual(await second, { decision: 'deny', message: null, mode: null, feedback: null });
  });

  it('counts the lines a write adds and removes', () => {
    assert.deepEqual(lineChanges('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
    assert.deepEqual(lineChanges('', 'x\n'), { added: 1, removed: 0 });
    assert.deepEqual(lineChanges('same', 'same'), { added: 0, removed: 0 });
  });

  it('describes writes and commands', () => {
    assert.deepEqual(inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'write_file', arguments: {}, kind: 'write', path: 'n.txt', before: '', after: 'x\n' }), {
      tool: 'write_file', title: 'Allow write_file to create n.txt?', detail: 'n.txt (new file, 1 line)', path: 'n.txt',
    });
    assert.deepEqual(inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'run_command', arguments: { command: 'make' }, kind: 'runCommand', cwd: '/w' }), {
      tool: 'run_command', title: 'Allow run_command to run a command?', detail: '$ make\nin /w',
    });
  });

  it('describes an MCP tool call (its arguments as JSON) and a project server to start', () => {
    assert.deepEqual(inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'echo', arguments: { text: 'hi' }, kind: 'mcp', server: 'my.echo' }), {
      tool: 'mcp__my_echo__echo', title: 'Call echo of the MCP server my.echo?', detail: '', about: 'mcp', server: 'my.echo',
      args: '{\n  "text": "hi"\n}',
    });
    assert.equal(inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'ping', arguments: {}, kind: 'mcp', server: 'e' }).args, undefined, 'no arguments: nothing to fold');
    assert.deepEqual(inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'notes', arguments: {}, kind: 'mcpServer', server: 'notes', command: 'python notes.py --ro' }), {
      tool: '', title: "This project's .mcp.json wants to start the MCP server notes", detail: '$ python notes.py --ro', about: 'mcpServer', server: 'notes',
    });
    const url = inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'web', arguments: {}, kind: 'mcpServer', server: 'web', url: 'https://mcp.example.com/mcp' }, 'api');
    assert.deepEqual([url.title, url.detail], ["api's .mcp.json wants to start the MCP server web", 'https://mcp.example.com/mcp']);
  });

  it('an MCP call waits in its tool card; its answer goes back', async () => {
    const { host } = setup();
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'c1', name: 'mcp__echo__echo', arguments: { text: 'hi' } });
    const answer = host.approve({ workspace: WS, sessionId: 's1', tool: 'echo', arguments: { text: 'hi' }, kind: 'mcp', server: 'echo' });
    await flush();
    const [tool, card] = host.current.items;
    assert.ok(tool?.kind === 'tool' && card?.kind === 'approval');
    assert.equal(tool.status, 'waiting');
    assert.deepEqual([card.about, card.server, card.args], ['mcp', 'echo', '{\n  "text": "hi"\n}']);
    await host.handle({ type: 'approve', id: card.id, decision: 'allowSession' });
    assert.deepEqual(await answer, { decision: 'allowSession', message: null, mode: null, feedback: null });
    assert.equal(host.current.items[0]?.kind === 'tool' && host.current.items[0].status, 'running');
  });

  it("a project server's question stays through the end of a run, Stop and a reload, until it is answered", async () => {
    const { host, agent } = setup({ 'pseudoclaude/run': RESULT, 'pseudoclaude/mcp/list': { servers: [] } });
    const answer = host.approve({ workspace: WS, sessionId: '', tool: 'notes', arguments: {}, kind: 'mcpServer', server: 'notes', command: 'python notes.py' });
    await flush();
    await host.handle({ type: 'ready' }); // the transcript loads after the question came
    await host.ask('hello');
    await host.handle({ type: 'cancel' });
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.status, card.about], ['pending', 'mcpServer']);
    assert.equal(host.pendingApprovals().length, 1);
    await host.handle({ type: 'approve', id: card.id, decision: 'allowOnce' });
    assert.deepEqual(await answer, { decision: 'allowOnce', message: null, mode: null, feedback: null });
    assert.equal(host.current.items.find((i) => i.kind === 'approval' && i.status === 'allowOnce')?.id, card.id);
    await flush();
    assert.ok(agent.methods().includes('pseudoclaude/mcp/list'), 'the list refreshes after the answer');
  });

  it("a folder's own settings ask with what they would change (the URL first), and stay past a run", async () => {
    const rules = ['baseUrl: http://127.0.0.1:9 (your prompts and API key would be sent there)', 'approvals.runCommand: allow (commands would run without asking)'];
    const params = { workspace: WS, sessionId: '', tool: '.PseudoClaude/config.yaml', arguments: {}, kind: 'permissions' as const, path: '.PseudoClaude/config.yaml', url: 'http://127.0.0.1:9', rules };
    assert.deepEqual(inlineApprovalCard(params), {
      tool: '', title: "This folder's .PseudoClaude/config.yaml asks to use its own settings", detail: rules.join('\n'), about: 'permissions',
    });
    assert.equal(inlineApprovalCard(params, 'api').title, "api's .PseudoClaude/config.yaml asks to use its own settings");
    const { host } = setup({ 'pseudoclaude/run': RESULT });
    const answer = host.approve(params);
    await flush();
    await host.ask('hello');
    await host.handle({ type: 'cancel' });
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.status, card.about], ['pending', 'permissions']);
    await host.handle({ type: 'approve', id: card.id, decision: 'deny' });
    assert.deepEqual(await answer, { decision: 'deny', message: null, mode: null, feedback: null });
    const modal = modalApprovalCard("This folder's .PseudoClaude/config.yaml asks PseudoClaude to use these settings (until you allow them, yours stand):\n- " + rules.join('\n- '));
    assert.deepEqual([modal.about, modal.title, modal.detail.split('\n')[0]], ['permissions', "This folder's .PseudoClaude/config.yaml asks to use its own settings", `- ${rules[0]}`]);
  });

  it("a project server's modal question keeps its card past the end of a run", () => {
    const { host } = setup();
    const id = host.modalApprovalShown("This project's .mcp.json asks PseudoClaude to start the MCP server notes of this project: python notes.py");
    host.otherRunStarted(WS, 'x');
    host.otherRunFinished(WS, RESULT, false);
    const card = host.current.items.find((i) => i.id === id);
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.status, card.about, card.server, card.detail], ['pending', 'mcpServer', 'notes', '$ python notes.py']);
    host.modalApprovalAnswered(id, 'Allow for this project');
    assert.equal(host.current.items.find((i) => i.id === id)?.kind === 'approval' && (host.current.items.find((i) => i.id === id) as { status: string }).status, 'allowSession');
  });
});

const ECHO: McpServer = { name: 'echo', source: 'user', status: 'ready', tools: ['echo', 'big'], error: null };
const NOTES: McpServer = { name: 'notes', source: 'project', status: 'needsApproval', tools: [], error: null };
const BROKEN: McpServer = { name: 'broken', source: 'workspace', status: 'failed', tools: [], error: 'exited with 1' };

describe('ChatHost: MCP servers', () => {
  it('lists the servers for the header after ready, after a run and on mcpChanged of its folder', async () => {
    let servers: McpServer[] = [ECHO];
    const { host, agent, posted } = setup({ 'pseudoclaude/run': RESULT, 'pseudoclaude/mcp/list': () => ({ servers }) });
    await host.handle({ type: 'ready' });
    assert.deepEqual(host.current.mcp, [ECHO]);
    assert.ok(posted.some((m) => m.type === 'mcp'));
    servers = [ECHO, NOTES];
    await host.ask('hello');
    assert.deepEqual(host.current.mcp?.map((s) => s.name), ['echo', 'notes']);
    servers = [];
    const before = agent.methods().filter((m) => m === 'pseudoclaude/mcp/list').length;
    host.onMcpChanged({ workspace: 'file:///elsewhere' });
    host.onMcpChanged({ workspace: WS });
    await flush();
    assert.equal(agent.methods().filter((m) => m === 'pseudoclaude/mcp/list').length, before + 1, 'only for the chat\'s folder');
    assert.deepEqual(host.current.mcp, []);
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/mcp/list').map((c) => c.params)[0], { workspace: WS });
  });

  it('a server without pseudoclaude/mcp/list: no list, and the menu says so', async () => {
    const { host, env } = setup();
    await host.handle({ type: 'ready' });
    assert.equal(host.current.mcp, null);
    await host.handle({ type: 'mcp' });
    assert.equal(env.menusShown.length, 0);
    assert.match(host.current.items.at(-1)?.kind === 'notice' ? (host.current.items.at(-1) as { text: string }).text : '', /Cannot list the MCP servers/);
  });

  it('the menu (the MCP button, /mcp): unfolds tools, restarts a failed server in place', async () => {
    let servers: McpServer[] = [ECHO, BROKEN];
    const { host, env, agent } = setup({
      'pseudoclaude/commands': { commands: [{ name: 'mcp', description: 'MCP servers', hint: '' }] },
      'pseudoclaude/mcp/list': () => ({ servers }),
      'pseudoclaude/mcp/restart': () => {
        servers = [ECHO, { ...BROKEN, status: 'ready', tools: ['q'], error: null }];
        return { server: servers[1] };
      },
    });
    await host.loadCommands();
    env.menus.push(async (menu) => {
      assert.equal(menu.title, 'MCP servers of app');
      assert.deepEqual(menu.rows().filter((r) => r.key.startsWith('server:')).map((r) => r.description), [
        'ready · 2 tools · your settings', 'failed: exited with 1 · config.yaml',
      ]);
      await menu.act({ kind: 'toggle', server: 'echo' });
      assert.deepEqual(menu.rows().filter((r) => r.key.startsWith('tool:')).map((r) => r.label), ['echo', 'big']);
      await menu.act({ kind: 'restart', server: 'broken' });
      assert.equal(menu.servers.find((s) => s.name === 'broken')?.status, 'ready');
      return undefined;
    });
    await host.ask('/mcp');
    assert.equal(env.menusShown.length, 1);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/mcp/restart')?.params, { workspace: WS, server: 'broken' });
    assert.ok(!agent.methods().includes('pseudoclaude/run'), '/mcp is not a prompt');
  });

  it('Approve… asks with the command it would run, then pseudoclaude/mcp/approve; the menu comes back', async () => {
    let servers: McpServer[] = [NOTES];
    const { host, env, agent } = setup({
      'pseudoclaude/mcp/list': () => ({ servers }),
      'pseudoclaude/mcp/approve': () => {
        servers = [{ ...NOTES, status: 'starting' }];
        return { server: servers[0] };
      },
    });
    env.files.set('.mcp.json', JSON.stringify({ mcpServers: { notes: { command: 'python', args: ['notes.py', 'my notes'] } } }));
    env.menus.push(async (menu) => menu.act({ kind: 'approve', server: 'notes' }));
    env.menus.push(async (menu) => {
      assert.equal(menu.servers[0]?.status, 'starting', 'the menu again, with what changed');
      assert.equal(menu.focus, 'server:notes', 'on the server just approved');
      assert.match(menu.rows()[0]?.description ?? '', /^starting… · \.mcp\.json$/, 'just allowed: starting now, not "not started yet"');
      menu.update([{ ...NOTES, status: 'ready', tools: ['n'] }]);
      assert.equal(menu.rows()[0]?.description, 'ready · 1 tool · .mcp.json');
      return undefined;
    });
    env.answers.push('Allow for this project');
    await host.handle({ type: 'mcp' });
    assert.equal(env.asked[0]?.message, "This project's .mcp.json wants to start the MCP server notes");
    assert.match(env.asked[0]?.detail ?? '', /It runs: python notes\.py 'my notes'/);
    assert.deepEqual(env.asked[0]?.actions, ['Allow once', 'Allow for this project', 'Deny']);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/mcp/approve')?.params, { workspace: WS, server: 'notes', decision: 'allowSession' });
    assert.equal(env.menusShown.length, 2);
  });

  it("Approve… on a server whose question is up answers that question (the command from it); dismissed: nothing", async () => {
    const { host, env, agent } = setup({ 'pseudoclaude/mcp/list': { servers: [NOTES] } });
    const answer = host.approve({ workspace: WS, sessionId: '', tool: 'notes', arguments: {}, kind: 'mcpServer', server: 'notes', command: 'uvx notes-server' });
    await flush();
    env.menus.push(async (menu) => menu.act({ kind: 'approve', server: 'notes' }));
    env.answers.push(undefined);
    await host.handle({ type: 'mcp' });
    assert.match(env.asked[0]?.detail ?? '', /It runs: uvx notes-server/);
    assert.equal(host.pendingApprovals().length, 1, 'dismissed: still asked');
    env.menus.push(async (menu) => menu.act({ kind: 'approve', server: 'notes' }));
    env.answers.push('Deny');
    await host.handle({ type: 'mcp' });
    assert.deepEqual(await answer, { decision: 'deny', message: null, mode: null, feedback: null });
    assert.ok(!agent.methods().includes('pseudoclaude/mcp/approve'), 'answered through the question');
  });

  it('opens the configuration from the menu', async () => {
    const { host, env } = setup({ 'pseudoclaude/mcp/list': { servers: [] } });
    env.menus.push(async (menu) => {
      assert.equal(menu.rows()[0]?.label, 'No MCP servers in this folder');
      return menu.act({ kind: 'settings' });
    });
    await host.handle({ type: 'mcp' });
    assert.deepEqual(env.configsOpened, ['settings']);
  });
});

describe('ChatHost: folders', () => {
  it('switches to another folder of the window: its own transcript, meter and sessions', async () => {
    const other = { uri: 'file:///work/lib', name: 'lib' };
    const { host, env, agent } = setup();
    env.folders = () => [folder, other];
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'folder', uri: other.uri });
    assert.equal(host.folder?.uri, other.uri);
    const after = agent.calls.filter((c) => (c.params as { workspace?: string }).workspace === other.uri).map((c) => c.method);
    assert.ok(after.includes('pseudoclaude/context') && after.includes('pseudoclaude/sessions/list'), after.join());
    assert.ok(env.changed >= 1, 'the views follow the chat\'s folder');
    await host.handle({ type: 'folder', uri: 'file:///not/open' });
    assert.equal(host.folder?.uri, other.uri, 'only folders of the window');
  });

  it('follows the window when its folder is removed', async () => {
    const { host, env } = setup();
    const other = { uri: 'file:///work/lib', name: 'lib' };
    env.folders = () => [other];
    host.foldersChanged();
    await flush();
    assert.equal(host.folder?.uri, other.uri);
  });
});

describe('ChatHost: small actions', () => {
  it('copies code and opens links through the editor', async () => {
    const { host, env } = setup();
    await host.handle({ type: 'copy', text: 'make test' });
    await host.handle({ type: 'openLink', href: 'https://example.com' });
    assert.deepEqual(env.copied, ['make test']);
    assert.deepEqual(env.links, ['https://example.com']);
  });
});

describe('ChatHost: slash commands', () => {
  const COMMANDS = { commands: [
    { name: 'compact', description: 'Summarize now', hint: 'focus' },
    { name: 'undo', description: 'Undo the last compaction' },
    { name: 'context', description: 'Show the context' },
    { name: 'memory', description: 'Show the memory' },
    { name: 'new', description: 'Start a new session' },
  ] };

  it('lists the server\'s commands once asked (a server start); an older server lists none', async () => {
    const { host, posted } = setup({ 'pseudoclaude/commands': COMMANDS });
    await host.handle({ type: 'ready' });
    await host.loadCommands();
    assert.deepEqual(host.current.commands, COMMANDS.commands);
    assert.ok(posted.some((m) => m.type === 'commands'));
    const old = setup();
    await old.host.loadCommands();
    assert.equal(old.host.current.commands, null);
    assert.match(old.env.logs.join('\n'), /slash commands: Unhandled method/);
  });

  it('/compact focus on X compacts with those instructions, reloads the transcript and shows the server\'s line', async () => {
    const { host, agent } = setup({
      'pseudoclaude/commands': COMMANDS,
      'pseudoclaude/compact': { beforeTokens: 9, afterTokens: 3, offloaded: 0, summarized: true, factCheck: { checked: 0, missing: 0, added: 0 }, message: 'Compacted: the earlier conversation is now a summary.' },
    });
    await host.loadCommands();
    assert.equal(await host.ask('/compact focus on X'), undefined);
    assert.ok(!agent.methods().includes('pseudoclaude/run'), 'not a prompt');
    const call = agent.calls.find((c) => c.method === 'pseudoclaude/compact');
    assert.deepEqual(call?.params, { workspace: WS, instructions: 'focus on X' });
    assert.ok(call?.options?.token, 'Stop cancels it');
    assert.equal(host.current.running, false);
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant', 'notice']);
    const notice = host.current.items.at(-1);
    assert.equal(notice?.kind === 'notice' && notice.text, 'Compacted: the earlier conversation is now a summary.');
  });

  it('/undo, /context, /memory and /new run their commands; unknown /words go to the model', async () => {
    const { host, agent, env } = setup({
      'pseudoclaude/commands': COMMANDS,
      'pseudoclaude/compact/undo': { restored: false, beforeTokens: 1, afterTokens: 1, messageCount: 0, message: 'Nothing to undo: no compaction left to undo.' },
      'pseudoclaude/sessions/new': { sessionId: 's7' },
      'pseudoclaude/run': RESULT,
    });
    await host.loadCommands();
    await host.handle({ type: 'send', prompt: '/undo' });
    assert.ok(agent.methods().includes('pseudoclaude/compact/undo'));
    assert.equal(host.current.items.at(-1)?.kind === 'notice' && (host.current.items.at(-1) as { text: string }).text, 'Nothing to undo: no compaction left to undo.');
    await host.handle({ type: 'send', prompt: '/context' });
    const shown = host.current.items.at(-1);
    assert.ok(shown?.kind === 'context');
    assert.equal(shown.meter?.estimatedTokens, 12_000, 'the breakdown the meter has');
    await host.handle({ type: 'send', prompt: '/memory' });
    assert.equal(env.memoryShown, 1);
    await host.handle({ type: 'send', prompt: '/new' });
    assert.equal(host.current.sessionId, 's7');
    assert.ok(!agent.methods().includes('pseudoclaude/run'));
    await host.handle({ type: 'send', prompt: '/etc/hosts: what is it for?' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/run')?.params, { prompt: '/etc/hosts: what is it for?', workspace: WS, sessionId: 's7' });
  });
});

describe('ChatHost: /status', () => {
  const TEXT = 'session: s1\nmode: acceptEdits\nmodel: claude-sonnet-4-6 (anthropic)\nMCP: none\nhooks: none\nskills: none';
  const STATUS: StatusResult = {
    session: 's1', mode: 'acceptEdits', provider: 'anthropic', model: 'claude-sonnet-4-6',
    tokens: { used: 12_000, window: 200_000, autoCompactThreshold: 167_000, billed: null },
    sandbox: { enabled: false, reason: 'not installed' }, mcp: [], hooks: [], skills: [], ignoredSettings: [], text: TEXT,
  };
  const LISTED = { commands: [{ name: 'status', description: 'Show the session at a glance' }] };

  it('shows the server\'s text as a card, for the chat\'s session; it is not a prompt', async () => {
    const { host, agent, posted } = setup({ 'pseudoclaude/commands': LISTED, 'pseudoclaude/status': STATUS });
    await host.handle({ type: 'ready' });
    await host.loadCommands();
    await host.handle({ type: 'send', prompt: '/status' });
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/status').map((c) => c.params), [{ workspace: WS, sessionId: 's1' }]);
    assert.ok(!agent.methods().includes('pseudoclaude/run'), 'not a prompt');
    const shown = host.current.items.at(-1);
    assert.ok(shown?.kind === 'status');
    assert.equal(shown.text, TEXT);
    assert.ok(posted.some((m) => m.type === 'statusShown'), 'the webview gets it too');
    const html = renderItem(shown);
    assert.match(html, /<section class="card status-card"[^>]*aria-label="Status">/);
    assert.ok(html.includes('<pre class="card-pre">session: s1\nmode: acceptEdits\n'), html);
  });

  it('a failure is a notice; a server that does not list /status sends it to the model', async () => {
    const { host } = setup({ 'pseudoclaude/commands': LISTED, 'pseudoclaude/status': () => { throw rpcError(-32803, 'no active session'); } });
    await host.loadCommands();
    await host.handle({ type: 'send', prompt: '/status' });
    const notice = host.current.items.at(-1);
    assert.ok(notice?.kind === 'notice' && notice.level === 'error' && notice.text.includes('no active session'), JSON.stringify(notice));
    const old = setup({ 'pseudoclaude/commands': { commands: [] }, 'pseudoclaude/run': RESULT });
    await old.host.loadCommands();
    await old.host.handle({ type: 'send', prompt: '/status' });
    assert.ok(old.agent.methods().includes('pseudoclaude/run') && !old.agent.methods().includes('pseudoclaude/status'));
  });
});

describe('ChatHost: rewind and fork', () => {
  const TURN_ITEMS: TranscriptItem[] = [
    { kind: 'user', text: 'hello', turn: 1, inContext: true },
    { kind: 'assistant', text: 'Hi.', inContext: true },
    { kind: 'user', text: 'add a changelog', turn: 2, inContext: true },
    { kind: 'assistant', text: 'Added CHANGELOG.md.', inContext: true },
  ];
  const PREVIEW = {
    turn: 2, prompt: 'add a changelog', droppedMessages: 4,
    files: [
      { path: 'CHANGELOG.md', action: 'delete' as const, conflict: false },
      { path: 'README.md', action: 'restore' as const, conflict: true },
      { path: 'logo.png', action: 'restore' as const, conflict: false },
    ],
    message: 'Rewind would take 3 files back to before prompt 2 (1 conflict: changed outside the agent, left alone unless forced) and the conversation back to before prompt 2 (4 messages taken back).',
  };
  const FILES: Record<string, unknown> = {
    'CHANGELOG.md': { path: 'CHANGELOG.md', current: '# Changes\n', restored: null, binary: false },
    'README.md': { path: 'README.md', current: '# Demo, edited\n', restored: '# Demo\n', binary: false },
    'logo.png': { path: 'logo.png', current: '', restored: '', binary: true },
  };
  let items: TranscriptItem[] = TURN_ITEMS;
  const messages = (p: unknown) => {
    const { offset = 0, limit, sessionId = 's1' } = p as { offset?: number; limit?: number; sessionId?: string };
    return { sessionId, total: items.length, items: items.slice(offset, limit === undefined ? undefined : offset + limit) };
  };
  function rewindSetup(answers: Parameters<typeof setup>[0] = {}) {
    items = TURN_ITEMS;
    const ctx = setup({
      'pseudoclaude/sessions/messages': messages,
      'pseudoclaude/rewind/preview': (p: unknown) => {
        const { mode } = p as { mode: string };
        return mode === 'conversation' ? { ...PREVIEW, files: [], message: 'Rewind would take the conversation back to before prompt 2 (4 messages taken back).' } : PREVIEW;
      },
      'pseudoclaude/rewind/file': (p: unknown) => FILES[(p as { path: string }).path],
      'pseudoclaude/rewind': (p: unknown) => {
        const { force } = p as { force?: boolean };
        items = [
          TURN_ITEMS[0] as TranscriptItem, TURN_ITEMS[1] as TranscriptItem,
          { kind: 'user', text: 'add a changelog', inContext: false },
          { kind: 'assistant', text: 'Added CHANGELOG.md.', inContext: false },
          { kind: 'rewind', message: 'The conversation was rewound.', inContext: true },
        ];
        return force
          ? { restoredFiles: ['CHANGELOG.md', 'README.md', 'logo.png'], conflicts: [], messageCount: 2, message: 'Rewound to before prompt 2: 3 files restored; the conversation is back to before prompt 2 (2 messages).' }
          : { restoredFiles: ['CHANGELOG.md', 'logo.png'], conflicts: ['README.md'], messageCount: 2, message: 'Rewound to before prompt 2: 2 files restored, 1 conflict left alone; the conversation is back to before prompt 2 (2 messages).' };
      },
      ...answers,
    });
    return ctx;
  }
  const lastNotice = (host: ChatHost) => {
    const n = [...host.current.items].reverse().find((i) => i.kind === 'notice');
    return n?.kind === 'notice' ? [n.level, n.text] : undefined;
  };

  it('restores the prompts\' numbers from the transcript: the ones a rewind took back have none', async () => {
    const { host } = rewindSetup();
    await host.handle({ type: 'ready' });
    assert.deepEqual(host.current.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' && i.turn), [1, 2]);
  });

  it('Rewind to here…: the mode, the preview\'s files (diffs of the file now and after), then Rewind and overwrite', async () => {
    const { host, env, agent, posted } = rewindSetup();
    await host.handle({ type: 'ready' });
    env.picks = ['Code and conversation', 'README.md', 'logo.png', 'CHANGELOG.md', 'Rewind and overwrite'];
    await host.handle({ type: 'rewind', turn: 2 });
    const [modes, review] = env.picked;
    assert.equal(modes?.title, 'Rewind to before prompt 2: “add a changelog”');
    assert.deepEqual(modes?.items.map((i) => i.label), ['$(discard) Code and conversation', '$(comment-discussion) Conversation only', '$(file-code) Code only']);
    assert.equal(review?.placeHolder, PREVIEW.message);
    assert.deepEqual(review?.items.map((i) => [i.label, i.description]), [
      ['$(discard) Rewind', 'restores 2 files, takes back 4 messages; leaves 1 file changed outside the agent as it is'],
      ['$(warning) Rewind and overwrite 1 changed file', 'also puts back what was changed outside the agent'],
      ['$(close) Cancel', 'change nothing'],
      ['3 files: select one to see its diff', undefined],
      ['$(file) CHANGELOG.md', 'deleted'],
      ['$(warning) README.md', 'restored · changed outside the agent'],
      ['$(file) logo.png', 'restored'],
    ]);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/rewind/preview')?.params, { workspace: WS, sessionId: 's1', turn: 2, mode: 'both' });
    // README.md: now (left) and after the rewind (right); logo.png is binary: a note instead; CHANGELOG.md is deleted by it.
    assert.deepEqual(env.rewindDiffs.map((d) => [d.path, d.before, d.after, d.title]), [
      ['README.md', '# Demo, edited\n', '# Demo\n', 'README.md (now ↔ after the rewind to before prompt 2)'],
      ['CHANGELOG.md', '# Changes\n', '', 'CHANGELOG.md (deleted by the rewind to before prompt 2)'],
    ]);
    assert.deepEqual(env.kept, [undefined, 'logo.png is a binary file: no diff to show (the rewind puts it back whole).', undefined]);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/rewind')?.params, { workspace: WS, sessionId: 's1', turn: 2, mode: 'both', force: true });
    assert.deepEqual(env.rewindClosed.sort(), env.rewindDiffs.map((d) => d.id).sort(), 'the diffs close with the list');
    // The transcript reloaded: the rewound prompt is out of context and has no actions; the server's line.
    const users = host.current.items.filter((i) => i.kind === 'user');
    assert.deepEqual(users.map((i) => i.kind === 'user' && [i.turn, i.outOfContext]), [[1, undefined], [undefined, true]]);
    assert.ok(host.current.items.some((i) => i.kind === 'marker' && i.marker === 'rewind'));
    assert.deepEqual(lastNotice(host), ['info', 'Rewound to before prompt 2: 3 files restored; the conversation is back to before prompt 2 (2 messages).']);
    assert.deepEqual(posted.filter((m) => m.type === 'focus').at(-1), { type: 'focus', text: 'add a changelog', keepDraft: true });
    assert.equal(host.hasRun, false);
  });

  it('Rewind without force leaves the conflicting files and names them', async () => {
    const { host, env } = rewindSetup();
    await host.handle({ type: 'ready' });
    env.picks = ['Code and conversation', 'Rewind'];
    await host.handle({ type: 'rewind', turn: 2 });
    assert.deepEqual(lastNotice(host), ['warning', 'Rewound to before prompt 2: 2 files restored, 1 conflict left alone; the conversation is back to before prompt 2 (2 messages). Changed outside the agent, left as they are: README.md.']);
  });

  it('Escape or Cancel at any step changes nothing', async () => {
    for (const picks of [[undefined], ['Code only', undefined], ['Code only', 'README.md', 'Cancel']]) {
      const { host, env, agent } = rewindSetup();
      await host.handle({ type: 'ready' });
      const before = host.current.items.length;
      env.picks = picks;
      await host.handle({ type: 'rewind', turn: 2 });
      assert.ok(!agent.methods().includes('pseudoclaude/rewind'), JSON.stringify(picks));
      assert.equal(host.current.items.length, before);
      assert.deepEqual(env.rewindClosed, env.rewindDiffs.map((d) => d.id));
    }
  });

  it('the conversation only: no files, the server\'s line, then Rewind; the prompt back in the box', async () => {
    const { host, env, agent, posted } = rewindSetup();
    await host.handle({ type: 'ready' });
    env.picks = ['Conversation only', 'Rewind'];
    await host.handle({ type: 'rewind', turn: 2 });
    const review = env.picked[1];
    assert.equal(review?.placeHolder, 'Rewind would take the conversation back to before prompt 2 (4 messages taken back).');
    assert.deepEqual(review?.items.map((i) => i.label), ['$(discard) Rewind', '$(close) Cancel']);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/rewind')?.params, { workspace: WS, sessionId: 's1', turn: 2, mode: 'conversation' });
    assert.ok(posted.some((m) => m.type === 'focus' && m.text === 'add a changelog'));
  });

  it('code and conversation with no file to restore rewinds the conversation; the code only has nothing to do', async () => {
    const noFiles = { ...PREVIEW, files: [], message: 'Rewind would take 0 files back to before prompt 2. The files cannot be restored: checkpoints are off.' };
    const { host, env, agent } = rewindSetup({ 'pseudoclaude/rewind/preview': noFiles });
    await host.handle({ type: 'ready' });
    env.picks = ['Code only'];
    await host.handle({ type: 'rewind', turn: 2 });
    assert.deepEqual(lastNotice(host), ['info', noFiles.message]);
    assert.equal(env.picked.length, 1, 'no confirmation: nothing to do');
    env.picks = ['Code and conversation', undefined];
    await host.handle({ type: 'rewind', turn: 2 });
    assert.deepEqual(lastNotice(host), ['info', noFiles.message], 'why no file is restored stays in the chat');
    env.picks = ['Code and conversation', 'Rewind the conversation'];
    await host.handle({ type: 'rewind', turn: 2 });
    assert.equal((agent.calls.find((c) => c.method === 'pseudoclaude/rewind')?.params as { mode: string }).mode, 'conversation');
  });

  it('/rewind lists the prompts (newest first), /rewind N mode skips the picks, a bad argument says what is accepted', async () => {
    const { host, env, agent } = rewindSetup({
      'pseudoclaude/commands': { commands: [{ name: 'rewind', description: 'Rewind', hint: 'n' }] },
      'pseudoclaude/sessions/turns': { turns: [{ turn: 1, prompt: 'hello', ts: 0, filesChanged: 0 }, { turn: 2, prompt: 'add a changelog', ts: 0, filesChanged: 2 }] },
    });
    await host.handle({ type: 'ready' });
    await host.loadCommands();
    env.picks = ['1. hello', undefined];
    await host.ask('/rewind');
    assert.deepEqual(env.picked[0]?.items.map((i) => [i.label, i.description]), [['2. add a changelog', '2 files changed'], ['1. hello', 'no file changed']]);
    assert.equal(env.picked[1]?.title, 'Rewind to before prompt 1: “hello”');
    env.picked.length = 0;
    env.picks = ['Rewind'];
    await host.ask('/rewind 2 code');
    assert.equal(env.picked.length, 1, 'straight to the preview');
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/rewind')?.params, { workspace: WS, sessionId: 's1', turn: 2, mode: 'code' });
    await host.ask('/rewind two');
    assert.match(lastNotice(host)?.[1] ?? '', /^\/rewind takes a prompt's number and code, conversation or both.*"two" is neither\.$/);
    assert.ok(!agent.methods().includes('pseudoclaude/run'));
  });

  it('refuses while a run is in progress, like the other actions; a failed rewind says why', async () => {
    let release: (v: unknown) => void = () => undefined;
    const { host, env, agent } = rewindSetup({ 'pseudoclaude/run': () => new Promise((r) => { release = r; }) });
    await host.handle({ type: 'ready' });
    const run = host.ask('more');
    await flush();
    await host.handle({ type: 'rewind', turn: 1 });
    await host.handle({ type: 'fork', turn: 1 });
    assert.deepEqual(lastNotice(host), ['warning', RUN_IN_PROGRESS]);
    assert.equal(env.picked.length, 0);
    assert.ok(!agent.methods().includes('pseudoclaude/sessions/fork'));
    release(RESULT);
    await run;
    const failing = rewindSetup({ 'pseudoclaude/rewind': () => { throw rpcError(-32803, 'a run is in progress in this workspace'); } });
    await failing.host.handle({ type: 'ready' });
    failing.env.picks = ['Conversation only', 'Rewind'];
    await failing.host.handle({ type: 'rewind', turn: 2 });
    assert.deepEqual(lastNotice(failing.host), ['error', 'Rewind failed: a run is in progress in this workspace']);
  });

  it('Fork from here: a new session with the conversation before the prompt; the chat shows it, the prompt in the box', async () => {
    let current = 's1';
    const { host, agent, posted, env } = rewindSetup({
      'pseudoclaude/context': () => ({ ...CONTEXT, sessionId: current }),
      'pseudoclaude/sessions/fork': { sessionId: 's2' },
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        items = [TURN_ITEMS[0] as TranscriptItem, TURN_ITEMS[1] as TranscriptItem, { kind: 'notice', text: 'Forked from another session.', inContext: true }];
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
    });
    await host.handle({ type: 'ready' });
    const changed = env.changed;
    await host.handle({ type: 'fork', turn: 2 });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/fork')?.params, { workspace: WS, sessionId: 's1', turn: 2 });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/resume')?.params, { workspace: WS, sessionId: 's2' });
    assert.equal(host.current.sessionId, 's2');
    // The fork's transcript says where it comes from: the notice adds where the original is.
    assert.deepEqual(host.current.items.slice(-2).map((i) => i.kind === 'notice' && i.text), [
      'Forked from another session.', 'The original session is unchanged: pick it in the session list to go back to it.',
    ]);
    assert.ok(posted.some((m) => m.type === 'focus' && m.text === 'add a changelog' && m.keepDraft));
    assert.ok(env.changed > changed, 'the Sessions view refreshes');
  });

  it('numbers a prompt sent in the chat once its run ended (its actions appear)', async () => {
    const { host, agent } = rewindSetup({
      'pseudoclaude/run': RESULT,
      'pseudoclaude/sessions/turns': { turns: [{ turn: 1, prompt: 'hello', ts: 0, filesChanged: 0 }, { turn: 2, prompt: 'add a changelog', ts: 0, filesChanged: 2 }, { turn: 3, prompt: 'one more', ts: 0, filesChanged: 0 }] },
    });
    await host.handle({ type: 'ready' });
    assert.ok(!agent.methods().includes('pseudoclaude/sessions/turns'), 'every prompt shown has its number');
    await host.ask('one more');
    const last = host.current.items.filter((i) => i.kind === 'user').at(-1);
    assert.equal(last?.kind === 'user' && last.turn, 3);
  });
});

describe('ChatHost: the editor context', () => {
  const APP = `${WS}/src/app.py`;
  const TEXT = 'import os\n\ndef main():\n    print("hi")\n    return 0\n';
  const chipLabel = (h: ChatHost): string | undefined => h.current.chip?.label;
  const sel = (sl: number, sc: number, el: number, ec: number) => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });

  it('the prompt box\'s chip follows the active editor and its selection (posted when it changes)', async () => {
    const { host, posted } = setup();
    await host.handle({ type: 'ready' });
    assert.equal(host.current.chip, null);
    posted.length = 0;
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT }));
    assert.equal(chipLabel(host), 'src/app.py');
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [0, 3, 0, 3] }));
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }));
    assert.equal(chipLabel(host), 'src/app.py:3-5');
    // The caret moving inside the file does not change the chip: one message per change.
    assert.deepEqual(posted.filter((m) => m.type === 'chip').map((m) => m.type === 'chip' && m.chip?.label), ['src/app.py', 'src/app.py:3-5']);
    host.editorChanged(fakeEditor({ uri: 'file:///elsewhere/x.py', text: 'x' }));
    assert.equal(host.current.chip, null, 'a file of another folder');
  });

  it('a prompt carries the editor\'s context, and the chat shows it under the prompt', async () => {
    const { host, agent } = setup({ 'pseudoclaude/run': RESULT });
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }, [`${WS}/README.md`]));
    await host.handle({ type: 'send', prompt: 'Why does it return 0?' });
    const run = agent.calls.find((c) => c.method === 'pseudoclaude/run');
    const context = {
      activeFile: 'src/app.py',
      selection: { path: 'src/app.py', range: sel(2, 0, 4, 12), text: 'def main():\n    print("hi")\n    return 0' },
      openFiles: ['src/app.py', 'README.md'],
    };
    assert.deepEqual(run?.params, { prompt: 'Why does it return 0?', workspace: WS, context });
    const user = host.current.items.find((i) => i.kind === 'user');
    assert.deepEqual(user?.kind === 'user' && user.context, context);
  });

  it('× on the chip: the next prompts go without context until the selection changes', async () => {
    const { host, agent, posted } = setup({ 'pseudoclaude/run': RESULT });
    await host.handle({ type: 'ready' });
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }));
    posted.length = 0;
    await host.handle({ type: 'removeChip' });
    assert.equal(host.current.chip, null);
    assert.deepEqual(posted.filter((m) => m.type === 'chip'), [{ type: 'chip', chip: null }]);
    await host.handle({ type: 'send', prompt: 'one' });
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }, [`${WS}/README.md`]));
    await host.handle({ type: 'send', prompt: 'two' });
    const runs = agent.calls.filter((c) => c.method === 'pseudoclaude/run').map((c) => c.params);
    assert.deepEqual(runs, [{ prompt: 'one', workspace: WS, sessionId: 's1' }, { prompt: 'two', workspace: WS, sessionId: 's1' }]);
    const users = host.current.items.filter((i) => i.kind === 'user');
    assert.ok(users.every((u) => u.kind === 'user' && u.context === undefined), 'no chip under them');
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [0, 0, 0, 9] }));
    assert.equal(chipLabel(host), 'src/app.py:1');
    await host.handle({ type: 'send', prompt: 'three' });
    const third = agent.calls.filter((c) => c.method === 'pseudoclaude/run')[2]?.params as { context?: { selection?: { text: string } } };
    assert.equal(third.context?.selection?.text, 'import os');
  });

  it('slash commands carry no context', async () => {
    const { host, agent } = setup({ 'pseudoclaude/compact': { message: 'Compacted.' } });
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [2, 0, 4, 12] }));
    await host.loadCommands();
    await host.ask('/compact');
    assert.ok(!agent.calls.some((c) => c.method === 'pseudoclaude/run'));
  });

  it('a restored webview gets the chip with the state', async () => {
    const { host, posted } = setup();
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT }));
    await host.handle({ type: 'ready' });
    const restore = posted.find((m) => m.type === 'restore');
    assert.equal(restore?.type === 'restore' && restore.state.chip?.label, 'src/app.py');
  });

  it('the Ask command\'s run shows the context it was sent with', () => {
    const { host } = setup();
    host.otherRunStarted(WS, 'from Ask', { activeFile: 'src/app.py' });
    const user = host.current.items[0];
    assert.deepEqual(user?.kind === 'user' && user.context, { activeFile: 'src/app.py' });
    assert.deepEqual(host.editorContext(WS), undefined, 'no editor yet');
    host.editorChanged(fakeEditor({ uri: APP, text: TEXT }));
    assert.deepEqual(host.editorContext(WS), { activeFile: 'src/app.py', openFiles: ['src/app.py'] });
  });

  it('a transcript\'s prompt keeps the context the server logged with it', async () => {
    const items: TranscriptItem[] = [
      { kind: 'user', text: 'Explain the selected code.', inContext: true, context: { activeFile: 'a.py', selection: { path: 'a.py', range: sel(0, 0, 1, 0), text: 'x' } } } as TranscriptItem,
      { kind: 'assistant', text: 'It sets x.', inContext: true },
    ];
    const { host } = setup({
      'pseudoclaude/sessions/messages': { sessionId: 's1', total: 2, items },
    });
    await host.reload();
    const user = host.current.items[0];
    assert.equal(user?.kind === 'user' && user.context?.selection?.path, 'a.py');
  });

  describe('code actions', () => {
    const ARGS = { path: 'src/app.py', range: sel(2, 0, 4, 12), text: 'def main():\n    print("hi")\n    return 0' };
    const PROBLEM = { path: 'src/app.py', range: sel(3, 4, 3, 9), severity: 'error' as const, message: 'bad', source: 'pyright' };

    it('Explain: the chat comes up with the selection and sends the prompt with it', async () => {
      const { host, agent, env } = setup({ 'pseudoclaude/run': RESULT });
      host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [3, 2, 3, 2] }, [`${WS}/README.md`]));
      await host.codeAction('pseudoclaude.codeAction.explain', ARGS, WS);
      assert.deepEqual(env.reveals, [false], 'shown, the editor keeps the keyboard');
      const run = agent.calls.find((c) => c.method === 'pseudoclaude/run');
      assert.deepEqual(run?.params, {
        prompt: 'Explain the selected code.',
        workspace: WS,
        context: { activeFile: 'src/app.py', selection: ARGS },
      });
      assert.equal(chipLabel(host), 'src/app.py:3-5', 'the selection is the chip');
      const user = host.current.items.find((i) => i.kind === 'user');
      assert.equal(user?.kind === 'user' && user.context?.selection?.path, 'src/app.py');
    });

    it('Fix: the range\'s problems go with it', async () => {
      const { host, agent } = setup({ 'pseudoclaude/run': RESULT });
      await host.codeAction('pseudoclaude.codeAction.fix', { ...ARGS, diagnostics: [PROBLEM] });
      const run = agent.calls.find((c) => c.method === 'pseudoclaude/run');
      assert.deepEqual(run?.params, {
        prompt: 'Fix the problems in the selected code.',
        workspace: WS,
        context: { activeFile: 'src/app.py', selection: ARGS, diagnostics: [PROBLEM] },
      });
    });

    it('Ask: the prompt box gets the keyboard with the selection attached; nothing is sent until the user does', async () => {
      const { host, agent, env, posted } = setup({ 'pseudoclaude/run': RESULT });
      await host.handle({ type: 'ready' });
      host.editorChanged(fakeEditor({ uri: APP, text: TEXT, selection: [3, 2, 3, 2] }));
      posted.length = 0;
      await host.codeAction('pseudoclaude.codeAction.ask', ARGS, WS);
      assert.deepEqual(env.reveals, [true]);
      assert.ok(!agent.calls.some((c) => c.method === 'pseudoclaude/run'));
      assert.deepEqual(posted.map((m) => m.type), ['chip', 'focus']);
      assert.equal(chipLabel(host), 'src/app.py:3-5');
      await host.handle({ type: 'send', prompt: 'Why return 0?' });
      const run = agent.calls.find((c) => c.method === 'pseudoclaude/run');
      assert.deepEqual(run?.params, { prompt: 'Why return 0?', workspace: WS, sessionId: 's1', context: { activeFile: 'src/app.py', selection: ARGS, openFiles: ['src/app.py'] } });
    });

    it('say that a run is in progress instead of starting another', async () => {
      let release: (v: unknown) => void = () => undefined;
      const { host, agent } = setup({ 'pseudoclaude/run': () => new Promise((r) => { release = r; }) });
      const first = host.ask('one');
      await flush();
      await host.codeAction('pseudoclaude.codeAction.explain', ARGS, WS);
      assert.equal(agent.calls.filter((c) => c.method === 'pseudoclaude/run').length, 1);
      const notice = host.current.items.at(-1);
      assert.deepEqual(notice?.kind === 'notice' && [notice.level, notice.text], ['warning', RUN_IN_PROGRESS]);
      release(RESULT);
      await first;
    });

    it('switch the chat to the file\'s folder first (and refuse a folder the window does not have)', async () => {
      const other = { uri: 'file:///work/lib', name: 'lib' };
      const { host, env, agent } = setup({ 'pseudoclaude/run': RESULT });
      env.folders = () => [folder, other];
      await host.codeAction('pseudoclaude.codeAction.explain', ARGS, other.uri);
      assert.equal(host.folder?.uri, other.uri);
      assert.equal((agent.calls.find((c) => c.method === 'pseudoclaude/run')?.params as { workspace: string }).workspace, other.uri);
      await host.codeAction('pseudoclaude.codeAction.explain', ARGS, 'file:///nowhere');
      const notice = host.current.items.at(-1);
      assert.match(notice?.kind === 'notice' ? notice.text : '', /not in a workspace folder of this window/);
    });
  });
});

describe('ChatHost: a busy session', () => {
  const BUSY = () => Object.assign(new Error('session s1 is busy: process 4242 is writing it'), { code: -32011, data: { sessionId: 's1', pid: 4242 } });
  const listed = (running: boolean, id = 's1') => ({ sessions: [{ ...SESSIONS.sessions[0], id, running }] });
  const busyCard = (host: ChatHost) => host.current.items.find((i) => i.kind === 'busy');

  it('a prompt refused with SessionBusy: the run ends, the prompt leaves the transcript for a card with Fork and Wait', async () => {
    const { host } = setup({ 'pseudoclaude/run': () => { throw BUSY(); } });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'send', prompt: 'add tests' });
    assert.equal(host.current.running, false);
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant', 'busy'], 'the unsent prompt is not shown as sent');
    const card = busyCard(host);
    assert.deepEqual(card?.kind === 'busy' && [card.sessionId, card.pid, card.prompt, card.status], ['s1', 4242, 'add tests', 'asking']);
    assert.ok(!host.current.items.some((i) => i.kind === 'notice'), 'no error line besides the card');
  });

  it('Fork: sessions/fork of the busy session, the chat switches to the fork and sends the prompt there', async () => {
    let current = 's1';
    const runs: unknown[] = [];
    const { host, agent } = setup({
      'pseudoclaude/context': () => ({ ...CONTEXT, sessionId: current }),
      'pseudoclaude/run': (p: unknown) => {
        runs.push(p);
        if ((p as { sessionId?: string }).sessionId === 's1') {
          throw BUSY();
        }
        return { ...RESULT, sessionId: 's2' };
      },
      'pseudoclaude/sessions/fork': { sessionId: 's2' },
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
    });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'send', prompt: 'add tests' });
    const card = busyCard(host);
    assert.ok(card);
    await host.handle({ type: 'busyFork', id: card.id });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/fork')?.params, { workspace: WS, sessionId: 's1' });
    assert.equal(host.current.sessionId, 's2');
    assert.deepEqual(runs.map((r) => (r as { sessionId?: string }).sessionId), ['s1', 's2']);
    assert.deepEqual((runs[1] as { prompt: string }).prompt, 'add tests');
    const notice = host.current.items.find((i) => i.kind === 'notice');
    assert.match(notice?.kind === 'notice' ? notice.text : '', /^Forked the busy session: .*goes on in process 4242/);
    assert.deepEqual(host.current.items.slice(-3).map((i) => i.kind), ['user', 'assistant', 'end'], 'the prompt ran in the fork');
    assert.ok(!busyCard(host), 'the card went with the old transcript');
  });

  it('Wait: sessions/list every poll until the session is not running, then the prompt goes to that session', async () => {
    let polls = 0;
    const paused: number[] = [];
    let busy = true;
    const { host, agent, posted } = setup(
      {
        'pseudoclaude/run': () => {
          if (busy) {
            throw BUSY();
          }
          return RESULT;
        },
        'pseudoclaude/sessions/list': () => {
          polls++;
          return listed(polls < 3);
        },
      },
      { pause: async (ms) => { paused.push(ms); } },
    );
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'send', prompt: 'add tests' });
    busy = false;
    const card = busyCard(host);
    assert.ok(card);
    posted.length = 0;
    polls = 0;
    await host.handle({ type: 'busyWait', id: card.id });
    assert.deepEqual(paused, [1000, 1000], 'one pause of a second between two asks');
    assert.ok(polls >= 3);
    assert.ok(posted.some((m) => m.type === 'busyStatus' && m.status === 'waiting'));
    const runs = agent.calls.filter((c) => c.method === 'pseudoclaude/run').map((c) => c.params);
    assert.deepEqual(runs.at(-1), { prompt: 'add tests', workspace: WS, sessionId: 's1' });
    assert.deepEqual(host.current.items.slice(-3).map((i) => i.kind), ['user', 'assistant', 'end']);
    assert.equal(host.current.running, false);
  });

  it('Wait ends with Cancel (or Stop): nothing is sent, the prompt is back in the box; a failed list says why', async () => {
    let release: () => void = () => undefined;
    const { host, agent, posted } = setup(
      { 'pseudoclaude/run': () => { throw BUSY(); }, 'pseudoclaude/sessions/list': () => listed(true) },
      { pause: (_ms, token) => new Promise((r) => { release = r; token.onCancellationRequested(() => r()); }) },
    );
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'send', prompt: 'add tests' });
    const card = busyCard(host);
    assert.ok(card);
    const waiting = host.handle({ type: 'busyWait', id: card.id });
    await flush();
    assert.equal(host.current.running, true, 'Stop shows while waiting');
    await host.handle({ type: 'send', prompt: 'another' });
    assert.match(JSON.stringify(host.current.items.at(-1)), /A run is in progress/);
    await host.handle({ type: 'busyCancel', id: card.id });
    await waiting;
    release();
    const done = busyCard(host);
    assert.deepEqual(done?.kind === 'busy' && done.status, 'cancelled');
    assert.equal(host.current.running, false);
    assert.ok(posted.some((m) => m.type === 'focus' && m.text === 'add tests' && m.keepDraft));
    assert.equal(agent.calls.filter((c) => c.method === 'pseudoclaude/run').length, 1, 'sent once, refused');

    const failing = setup(
      { 'pseudoclaude/run': () => { throw BUSY(); }, 'pseudoclaude/sessions/list': () => { throw rpcError(-32803, 'the server is gone'); } },
      { pause: async () => undefined },
    );
    await failing.host.handle({ type: 'send', prompt: 'x' });
    const c2 = busyCard(failing.host);
    assert.ok(c2);
    await failing.host.handle({ type: 'busyWait', id: c2.id });
    const ended = busyCard(failing.host);
    assert.deepEqual(ended?.kind === 'busy' && [ended.status, ended.error], ['failed', 'cannot tell whether the session is free: the server is gone']);
  });

  it('Stop cancels the wait too; another prompt instead leaves the card unanswered', async () => {
    const { host } = setup(
      { 'pseudoclaude/run': () => { throw BUSY(); }, 'pseudoclaude/sessions/list': () => listed(true) },
      { pause: (_ms, token) => new Promise((r) => token.onCancellationRequested(() => r())) },
    );
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'send', prompt: 'one' });
    const first = busyCard(host);
    assert.ok(first);
    await host.handle({ type: 'send', prompt: 'two' });
    const cards = host.current.items.filter((i) => i.kind === 'busy');
    assert.deepEqual(cards.map((c) => c.kind === 'busy' && [c.prompt, c.status, c.error ?? '']), [
      ['one', 'failed', 'you sent another prompt instead.'],
      ['two', 'asking', ''],
    ]);
    await host.handle({ type: 'busyFork', id: first.id }); // answered already: nothing happens
    const second = cards[1];
    assert.ok(second);
    const waiting = host.handle({ type: 'busyWait', id: second.id });
    await flush();
    await host.handle({ type: 'cancel' });
    await waiting;
    const after = host.current.items.filter((i) => i.kind === 'busy').at(-1);
    assert.equal(after?.kind === 'busy' && after.status, 'cancelled');
  });

  it('shows only the events of its session: another session of the folder runs beside it', async () => {
    const { host } = setup({
      'pseudoclaude/run': () => {
        host.onEvent({ workspace: WS, sessionId: 's9', kind: 'text', delta: 'OTHER SESSION' });
        host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'mine' });
        return RESULT;
      },
    });
    await host.handle({ type: 'ready' });
    await host.ask('hello?');
    const text = host.current.items.map((i) => (i.kind === 'assistant' ? i.text : '')).join('|');
    assert.match(text, /mine/);
    assert.doesNotMatch(text, /OTHER SESSION/);
    host.onContextUsage({ workspace: WS, sessionId: 's1', estimatedTokens: 5, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: CONTEXT.breakdown });
    assert.equal(host.current.meter?.estimatedTokens, 5);
  });
});

describe('ChatHost: sessions at once', () => {
  /** A server with sessions s1 (current) and s2: each run waits until released; the transcript is as it is now. */
  function twoSessions() {
    let current = 's1';
    const runs = new Map<string, { release: (r: RunResult) => void; options?: RequestOptions }>();
    const logs: Record<string, TranscriptItem[]> = {
      s1: [...ITEMS],
      s2: [],
    };
    const list = () => ({
      sessions: ['s1', 's2'].map((id) => ({ ...SESSIONS.sessions[0], id, title: id === 's1' ? 'First' : 'Second', active: id === current, running: runs.has(id) })),
    });
    const t = setup({
      'pseudoclaude/context': () => ({ ...CONTEXT, sessionId: current }),
      'pseudoclaude/sessions/list': list,
      'pseudoclaude/sessions/new': () => { current = 's2'; return { sessionId: 's2' }; },
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
      'pseudoclaude/sessions/messages': (p: unknown) => {
        const { offset = 0, limit, sessionId = current } = p as { offset?: number; limit?: number; sessionId?: string };
        const items = logs[sessionId] ?? [];
        return { sessionId, total: items.length, items: items.slice(offset, limit === undefined ? undefined : offset + limit) };
      },
      'pseudoclaude/sessions/turns': { turns: [] },
      'pseudoclaude/run': (p: unknown, options?: RequestOptions) => {
        const { sessionId = current, prompt } = p as { sessionId?: string; prompt: string };
        current = sessionId;
        logs[sessionId]?.push({ kind: 'user', text: prompt, inContext: true });
        return new Promise((resolve, reject) => {
          runs.set(sessionId, { release: (r) => { runs.delete(sessionId); resolve(r); }, options });
          options?.token?.onCancellationRequested(() => { runs.delete(sessionId); reject(rpcError(-32800, 'cancelled')); });
        });
      },
    });
    return { ...t, runs, logs };
  }
  const text = (host: ChatHost): string => host.current.items.flatMap((i) => (i.kind === 'assistant' ? [i.text] : [])).join('|');

  it('switching to another session does not stop a run; a prompt there runs beside it; events go to their session', async () => {
    const { host, agent, runs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('long task');
    await flush();
    assert.equal(host.current.running, true);
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'Working on it' });
    await host.handle({ type: 'newSession' });
    assert.equal(host.current.sessionId, 's2');
    assert.equal(host.current.running, false, 'the new session does not run');
    assert.equal(runs.get('s1')?.options?.token?.isCancellationRequested, false, 'the first run goes on');
    assert.deepEqual(host.runningSessions, ['s1']);
    // a prompt in the second session while the first runs
    const second = host.ask('quick question');
    await flush();
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/run').map((c) => (c.params as { sessionId?: string }).sessionId), ['s1', 's2']);
    assert.equal(host.current.running, true);
    assert.deepEqual(host.runningSessions.sort(), ['s1', 's2']);
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'BACKGROUND' });
    host.onEvent({ workspace: WS, sessionId: 's2', kind: 'text', delta: 'Here.' });
    assert.equal(text(host), 'Here.');
    runs.get('s2')?.release({ ...RESULT, sessionId: 's2', text: 'Here.' });
    await second;
    assert.equal(host.current.running, false);
    assert.equal(runs.has('s1'), true, 'the first still runs');
    runs.get('s1')?.release({ ...RESULT, text: 'Done.' });
    await first;
    assert.equal(host.current.sessionId, 's2', 'the end of a background run leaves the chat where it is');
    assert.doesNotMatch(JSON.stringify(host.current.items), /Done\.|long task/);
  });

  it('switching back reloads the transcript as it is now, then streams live; its end reloads it', async () => {
    const { host, runs, logs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('long task');
    await flush();
    await host.handle({ type: 'newSession' });
    // what the first session did meanwhile (the server's transcript while it runs)
    logs.s1?.push({ kind: 'assistant', text: 'Step one done.', inContext: true });
    logs.s1?.push({ kind: 'toolCall', id: 'c1', name: 'run_command', arguments: { command: 'make' }, status: 'pending', inContext: true } as TranscriptItem);
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'missed while away' });
    await host.handle({ type: 'resume', sessionId: 's1' });
    assert.equal(host.current.sessionId, 's1');
    assert.equal(host.current.running, true, 'Stop shows: the session runs');
    assert.deepEqual(host.current.items.map((i) => i.kind), ['user', 'assistant', 'user', 'assistant', 'tool']);
    const tool = host.current.items.at(-1);
    assert.equal(tool?.kind === 'tool' && tool.status, 'running', 'its call is still running, not interrupted');
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolResult', id: 'c1', name: 'run_command', isError: false, display: 'ok' } as never);
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'text', delta: 'Live now.' });
    assert.match(text(host), /Live now\./);
    logs.s1?.push({ kind: 'assistant', text: 'All done, live now.', inContext: true });
    runs.get('s1')?.release({ ...RESULT, text: 'All done, live now.' });
    await first;
    assert.equal(host.current.running, false);
    assert.equal(host.current.items.at(-1)?.kind === 'assistant' && (host.current.items.at(-1) as { text: string }).text, 'All done, live now.');
  });

  it('Stop cancels only the run of the session shown', async () => {
    const { host, runs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('one');
    await flush();
    await host.handle({ type: 'newSession' });
    const second = host.ask('two');
    await flush();
    const one = runs.get('s1')?.options?.token;
    const two = runs.get('s2')?.options?.token;
    await host.handle({ type: 'cancel' });
    await second;
    assert.equal(two?.isCancellationRequested, true);
    assert.equal(one?.isCancellationRequested, false);
    assert.equal(host.current.items.at(-1)?.kind === 'end' && (host.current.items.at(-1) as { stopReason: string }).stopReason, 'canceled');
    // a session that does not run: Stop there leaves the background run alone
    await host.handle({ type: 'cancel' });
    assert.equal(one?.isCancellationRequested, false);
    runs.get('s1')?.release(RESULT);
    await first;
  });

  it('an approval of a background session is not lost: a notification, a mark in the picker, the card when shown', async () => {
    const { host, env, runs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('deploy');
    await flush();
    await host.handle({ type: 'newSession' });
    const revealed = env.revealed;
    const answer = host.approve({ workspace: WS, sessionId: 's1', tool: 'run_command', arguments: {}, kind: 'runCommand', command: 'make deploy' });
    await flush();
    assert.ok(!host.current.items.some((i) => i.kind === 'approval'), 'not in the session shown');
    assert.equal(env.revealed, revealed, 'the chat is not pulled away');
    assert.deepEqual(env.notified.map((n) => [n.message, n.actions]), [['Session "First" needs your approval: Allow run_command to run a command?', [SHOW_SESSION]]]);
    assert.deepEqual(host.current.asking, ['s1']);
    assert.match(renderSessionOptions(host.current, new Date()), /First · needs your approval/);
    // the Stop of the session shown does not answer it
    await host.handle({ type: 'cancel' });
    await host.handle({ type: 'resume', sessionId: 's1' });
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.equal(card?.kind === 'approval' && card.status, 'pending');
    assert.deepEqual(host.current.asking, []);
    await host.handle({ type: 'approve', id: card?.id, decision: 'allowOnce' });
    assert.deepEqual(await answer, { decision: 'allowOnce', message: null, mode: null, feedback: null });
    runs.get('s1')?.release(RESULT);
    await first;
  });

  it("the notification's button shows the session with the question", async () => {
    const { host, env, runs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('deploy');
    await flush();
    await host.handle({ type: 'newSession' });
    env.clicks = [SHOW_SESSION];
    const answer = host.approve({ workspace: WS, sessionId: 's1', tool: 'run_command', arguments: {}, kind: 'runCommand', command: 'make deploy' });
    for (let i = 0; i < 5; i++) await flush();
    assert.equal(host.current.sessionId, 's1');
    assert.equal(env.reveals.at(-1), true);
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.equal(card?.kind === 'approval' && card.status, 'pending');
    // the run ends without an answer: its question goes
    runs.get('s1')?.release(RESULT);
    await first;
    assert.deepEqual(await answer, { decision: 'deny', message: null, mode: null, feedback: null });
  });

  it('the meter shows the session shown, not a background run\'s', async () => {
    const { host, runs } = twoSessions();
    await host.handle({ type: 'ready' });
    const first = host.ask('one');
    await flush();
    await host.handle({ type: 'newSession' });
    const calls = host.current.meter?.estimatedTokens;
    host.onContextUsage({ workspace: WS, sessionId: 's1', estimatedTokens: 99_999, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: CONTEXT.breakdown });
    assert.equal(host.current.meter?.estimatedTokens, calls);
    assert.equal(host.current.sessionId, 's2');
    runs.get('s1')?.release(RESULT);
    await first;
  });
});

describe('ChatHost: worktree sessions', () => {
  const BRANCH = 'pseudoclaude/s3';
  const WT_SESSIONS = { sessions: [{ ...SESSIONS.sessions[0], id: 's3', worktree: BRANCH }, { ...SESSIONS.sessions[0], active: false }] };
  const STATUS = {
    sessionId: 's3', path: '/data/worktrees/s3', branch: BRANCH, base: 'abc',
    files: [{ path: 'src/new.py', action: 'create' as const }, { path: 'README.md', action: 'modify' as const }, { path: 'old.txt', action: 'delete' as const }],
    message: '3 files changed in the worktree on branch pseudoclaude/s3',
  };
  function wtSetup(answers: Parameters<typeof setup>[0] = {}) {
    return setup({
      'pseudoclaude/commands': { commands: [{ name: 'new', description: 'Start a new session' }, { name: 'worktree', description: 'Start a new session in a git worktree of its own' }] },
      'pseudoclaude/context': { ...CONTEXT, sessionId: 's3' },
      'pseudoclaude/sessions/list': WT_SESSIONS,
      'pseudoclaude/sessions/new': (p: unknown) => ({ sessionId: 's3', worktree: (p as { worktree?: boolean }).worktree ? { path: STATUS.path, branch: BRANCH, base: 'abc' } : null }),
      'pseudoclaude/worktree/status': STATUS,
      ...answers,
    });
  }

  it('/worktree starts a session in a worktree: the chat shows it empty, its branch on the worktree line', async () => {
    const { host, agent, posted } = wtSetup({ 'pseudoclaude/sessions/list': SESSIONS, 'pseudoclaude/context': CONTEXT });
    await host.handle({ type: 'ready' });
    await host.loadCommands();
    posted.length = 0;
    await host.handle({ type: 'send', prompt: '/worktree' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/sessions/new')?.params, { workspace: WS, worktree: true });
    assert.ok(!agent.methods().includes('pseudoclaude/run'), 'not a prompt');
    assert.equal(host.current.sessionId, 's3');
    const shown = posted.find((m): m is Extract<ToWebview, { type: 'restore' }> => m.type === 'restore');
    assert.equal(shown && worktreeOf(shown.state), BRANCH, 'its branch at once, before the server lists the session');
    const notice = host.current.items.find((i) => i.kind === 'notice');
    assert.match(notice?.kind === 'notice' ? notice.text : '', /branch pseudoclaude\/s3, in \/data\/worktrees\/s3\. Its changes reach app only when you apply them/);
    const plain = wtSetup();
    await plain.host.newSession();
    assert.deepEqual(plain.agent.calls.find((c) => c.method === 'pseudoclaude/sessions/new')?.params, { workspace: WS });
  });

  it('a new session the server does not list yet (no message) keeps its branch; its meter before the answer reloads nothing', async () => {
    let host!: ChatHost;
    const setupResult = wtSetup({
      'pseudoclaude/sessions/list': SESSIONS, // the server lists sessions with a message only
      'pseudoclaude/context': CONTEXT,
      'pseudoclaude/sessions/new': () => {
        // The server's meter of the new session may come before the answer.
        host.onContextUsage({ workspace: WS, sessionId: 's3', estimatedTokens: 1, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: CONTEXT.breakdown });
        return { sessionId: 's3', worktree: { path: STATUS.path, branch: BRANCH, base: 'abc' } };
      },
      'pseudoclaude/worktree/remove': { sessionId: 's3', message: 'removed the worktree of session s3 and its branch; the session goes on in the folder itself' },
    });
    host = setupResult.host;
    await host.handle({ type: 'ready' });
    await host.newSession({ worktree: true });
    await flush();
    await flush();
    assert.equal(host.current.sessionId, 's3');
    assert.equal(worktreeOf(host.current), BRANCH, 'still shown after the list came back without it');
    assert.ok(host.current.items.some((i) => i.kind === 'notice' && /git worktree of its own/.test(i.text)), 'the notice stays');
    setupResult.env.answers = ['Remove'];
    await host.handle({ type: 'worktreeRemove' });
    assert.equal(worktreeOf(host.current), null, 'removed: no branch any more');
  });

  it('outside a git repository the server says why; nothing changes', async () => {
    const { host } = wtSetup({ 'pseudoclaude/sessions/new': () => { throw rpcError(-32803, '/w is not a git repository: worktree sessions need git'); } });
    await host.newSession({ worktree: true });
    const notice = host.current.items.at(-1);
    assert.deepEqual(notice?.kind === 'notice' && [notice.level, notice.text], ['error', 'New session in a worktree failed: /w is not a git repository: worktree sessions need git']);
    assert.equal(host.current.sessionId, null);
  });

  it('Changes: the files and their action; a file opens the diff of the folder\'s file and the worktree\'s; Apply from the list', async () => {
    const { host, env, agent } = wtSetup({
      'pseudoclaude/worktree/apply': { sessionId: 's3', applied: ['README.md', 'old.txt', 'src/new.py'], conflicts: [], message: 'applied 3 files to the main tree' },
    });
    await host.handle({ type: 'ready' });
    env.picks = ['README.md', 'src/new.py', 'Apply to app'];
    await host.handle({ type: 'worktreeChanges' });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/worktree/status')?.params, { workspace: WS, sessionId: 's3' });
    const list = env.picked[0];
    assert.equal(list?.title, 'Worktree pseudoclaude/s3: 3 files changed');
    assert.deepEqual(list?.items.filter((i) => i.keepOpen).map((i) => [i.label, i.description]), [
      ['$(diff-added) src/new.py', 'new file'],
      ['$(diff-modified) README.md', 'changed'],
      ['$(diff-removed) old.txt', 'deleted'],
    ]);
    assert.deepEqual(env.worktreeDiffs.map((d) => [d.file.path, d.worktree, d.folder, d.title]), [
      ['README.md', '/data/worktrees/s3', WS, 'README.md (folder ↔ pseudoclaude/s3)'],
      ['src/new.py', '/data/worktrees/s3', WS, 'src/new.py (new in the worktree)'],
    ]);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/worktree/apply')?.params, { workspace: WS, sessionId: 's3' });
    const card = host.current.items.at(-1);
    assert.deepEqual(card?.kind === 'worktree' && [card.level, card.title, card.files], ['info', 'Applied 3 files to app', ['README.md', 'old.txt', 'src/new.py']]);
  });

  it('Apply with a file changed in the folder too: the conflicts listed, nothing applied', async () => {
    const { host } = wtSetup({
      'pseudoclaude/worktree/apply': { sessionId: 's3', applied: [], conflicts: ['README.md'], message: 'nothing applied: 1 file changed in the main tree too since the worktree was made: README.md' },
    });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'worktreeApply' });
    const card = host.current.items.at(-1);
    assert.ok(card?.kind === 'worktree');
    assert.equal(card.level, 'warning');
    assert.equal(card.title, 'Nothing applied: 1 file changed in app too since the worktree was made');
    assert.deepEqual(card.files, ['README.md']);
    assert.match(card.note ?? '', /Apply again/);
  });

  it('Remove: asked first; refused for changes not applied, a second question removes it with force', async () => {
    const removes: unknown[] = [];
    const { host, env } = wtSetup({
      'pseudoclaude/worktree/remove': (p: unknown) => {
        removes.push(p);
        if (!(p as { force?: boolean }).force) {
          throw rpcError(-32803, 'the worktree of session s3 has 2 changes not applied to the main tree (README.md, src/new.py): apply them or remove with force');
        }
        return { sessionId: 's3', message: 'removed the worktree of session s3 and its branch; the session goes on in the folder itself' };
      },
    });
    await host.handle({ type: 'ready' });
    env.answers = [undefined];
    await host.handle({ type: 'worktreeRemove' });
    assert.equal(removes.length, 0, 'dismissed: nothing removed');
    env.answers = ['Remove', 'Remove Anyway'];
    await host.handle({ type: 'worktreeRemove' });
    assert.deepEqual(env.asked.map((a) => a.message), [
      'Remove the worktree of this session (branch pseudoclaude/s3)?',
      'Remove the worktree of this session (branch pseudoclaude/s3)?',
      'This worktree has changes that are not in app',
    ]);
    assert.equal(env.asked[2]?.detail, 'The worktree of session s3 has 2 changes not applied to app (README.md, src/new.py).\n\nRemove it anyway? Those changes are lost.');
    assert.deepEqual(removes, [{ workspace: WS, sessionId: 's3' }, { workspace: WS, sessionId: 's3', force: true }]);
    const notice = host.current.items.at(-1);
    assert.equal(notice?.kind === 'notice' && notice.text, 'Removed the worktree of session s3 and its branch; the session goes on in the folder itself');
    // Refused again but not confirmed: the worktree stays.
    removes.length = 0;
    env.answers = ['Remove', undefined];
    await host.handle({ type: 'worktreeRemove' });
    assert.deepEqual(removes, [{ workspace: WS, sessionId: 's3' }]);
    assert.match(JSON.stringify(host.current.items.at(-1)), /The worktree stays \(branch pseudoclaude\/s3\)/);
  });

  it('a session that works in the folder itself has no worktree line to act on', async () => {
    const { host, agent } = setup();
    await host.handle({ type: 'ready' });
    assert.equal(worktreeOf(host.current), null);
    await host.handle({ type: 'worktreeApply' });
    assert.ok(!agent.methods().some((m) => m.startsWith('pseudoclaude/worktree/')));
    assert.match(JSON.stringify(host.current.items.at(-1)), /works in the folder itself/);
  });
});

describe('ChatHost: permission mode', () => {
  const LISTING = {
    mode: 'default', modes: ['strict', 'default', 'acceptEdits', 'plan'], rules: [], problems: [], sandbox: { enabled: true }, waiting: [],
  };

  it('the picker shows the session\'s mode (context) and the modes offered (permissions)', async () => {
    const { host, agent } = setup({ 'pseudoclaude/permissions': LISTING });
    await host.handle({ type: 'ready' });
    assert.deepEqual([host.current.mode, host.current.modes, host.current.sandbox], ['default', ['strict', 'default', 'acceptEdits', 'plan'], { enabled: true }]);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/permissions')?.params, { workspace: WS, sessionId: 's1' });
  });

  it('an older server (no mode, no permissions request): no picker, nothing shown', async () => {
    const { mode: _mode, sandbox: _sandbox, ...old } = CONTEXT;
    const { host, env } = setup({ 'pseudoclaude/context': old });
    await host.handle({ type: 'ready' });
    assert.deepEqual([host.current.mode, host.current.modes], [null, null]);
    assert.match(env.logs.join('\n'), /permissions of app: Unhandled method/);
  });

  it('a picked mode is sent for the session shown, shown at once, and confirmed by the server', async () => {
    let release: () => void = () => undefined;
    const { host, agent, posted } = setup({
      'pseudoclaude/permissions': LISTING,
      'pseudoclaude/mode': (p: unknown) => new Promise((resolve) => {
        release = () => resolve({ mode: (p as { mode: string }).mode, message: 'plan mode: only reading tools run until you approve a plan' });
      }),
    });
    await host.handle({ type: 'ready' });
    const sent = host.handle({ type: 'setMode', mode: 'plan' });
    await flush();
    assert.equal(host.current.mode, 'plan', 'shown before the answer');
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/mode')?.params, { workspace: WS, mode: 'plan', sessionId: 's1' });
    release();
    await sent;
    assert.equal(host.current.mode, 'plan');
    assert.equal(host.current.modeError, null);
    assert.ok(posted.some((m) => m.type === 'mode' && m.mode === 'plan'));
  });

  it('a refused mode goes back to the one before and says why under the picker', async () => {
    const { host } = setup({
      'pseudoclaude/permissions': LISTING,
      'pseudoclaude/mode': () => {
        throw rpcError(-32803, 'bypassPermissions is not allowed: set permissions.allowBypass: true in your user settings');
      },
    });
    await host.handle({ type: 'ready' });
    const r = await host.setMode('bypassPermissions');
    assert.equal(host.current.mode, 'default');
    assert.equal(host.current.modeError, 'Cannot switch to bypassPermissions: bypassPermissions is not allowed: set permissions.allowBypass: true in your user settings');
    assert.deepEqual(r, { error: host.current.modeError });
    // The next change that works clears it.
    const ok = setup({ 'pseudoclaude/mode': { mode: 'strict', message: 'strict mode' } });
    await ok.host.setMode('strict');
    assert.equal(ok.host.current.modeError, null);
  });

  it('with no session yet, the mode is for the next session (no sessionId)', async () => {
    const { host, agent } = setup({ 'pseudoclaude/mode': { mode: 'acceptEdits', message: 'the next session starts in acceptEdits mode' } });
    assert.equal(host.current.sessionId, null);
    const r = await host.setMode('acceptEdits');
    assert.deepEqual(agent.calls.at(-1)?.params, { workspace: WS, mode: 'acceptEdits' });
    assert.deepEqual(r, { message: 'the next session starts in acceptEdits mode' });
    assert.equal(host.current.mode, 'acceptEdits');
  });

  it('follows the mode events of the session shown only', async () => {
    const { host } = setup({ 'pseudoclaude/permissions': LISTING });
    await host.handle({ type: 'ready' });
    host.onEvent({ workspace: WS, sessionId: 'other', kind: 'mode', mode: 'bypassPermissions' });
    assert.equal(host.current.mode, 'default');
    assert.equal(host.current.sessionId, 's1', 'another session\'s event does not switch the chat');
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'mode', mode: 'acceptEdits' });
    assert.equal(host.current.mode, 'acceptEdits');
    host.onEvent({ workspace: 'file:///elsewhere', sessionId: 's1', kind: 'mode', mode: 'plan' });
    assert.equal(host.current.mode, 'acceptEdits');
  });

  it('Set Permission Mode: a quick pick of the modes offered with their meaning, the current one marked', async () => {
    const { host, env, agent } = setup({
      'pseudoclaude/permissions': LISTING,
      'pseudoclaude/mode': { mode: 'strict', message: 'strict mode: every tool asks first' },
    });
    await host.handle({ type: 'ready' });
    env.picks = ['strict'];
    const r = await host.pickMode();
    const list = env.picked.at(-1);
    assert.equal(list?.title, 'PseudoClaude: Set Permission Mode');
    assert.deepEqual(list?.items.map((i) => [i.label, i.description]), [
      ['strict', 'every tool asks first'],
      ['$(check) default', 'edits and commands follow your approval settings'],
      ['acceptEdits', 'edits run without asking; commands still ask'],
      ['plan', 'only reading tools run until you approve a plan'],
    ]);
    assert.deepEqual(r, { message: 'strict mode: every tool asks first' });
    assert.equal(host.current.mode, 'strict');
    env.picks = [undefined];
    const before = agent.calls.length;
    assert.equal(await host.pickMode(), undefined, 'Escape changes nothing');
    assert.ok(!agent.calls.slice(before).some((c) => c.method === 'pseudoclaude/mode'));
  });

  it('Always allow answers allowAlways (only with a rule); Deny carries what to tell the agent', async () => {
    const { host } = setup();
    const ask = (rule?: string) => host.approve({
      workspace: WS, sessionId: 's1', tool: 'run_command', arguments: { command: 'npm run test' }, kind: 'runCommand',
      command: 'npm run test', ...(rule ? { rule } : {}), reason: 'default mode asks before commands',
    });
    const always = ask('Bash(npm run test:*)');
    await flush();
    const card = host.current.items.at(-1);
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.rule, card.reason], ['Bash(npm run test:*)', 'default mode asks before commands']);
    await host.handle({ type: 'approve', id: card.id, decision: 'allowAlways', message: 'ignored' });
    assert.deepEqual(await always, { decision: 'allowAlways', message: null, mode: null, feedback: null });
    const answered = host.current.items.at(-1);
    assert.equal(answered?.kind === 'approval' && answered.status, 'allowAlways');

    const noRule = ask();
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'allowAlways' });
    assert.deepEqual(await noRule, { decision: 'allowSession', message: null, mode: null, feedback: null }, 'nothing to add: for this session');

    const denied = ask('Bash(npm run test:*)');
    await flush();
    const id = host.current.items.at(-1)?.id ?? '';
    await host.handle({ type: 'approve', id, decision: 'deny', message: '  run make check instead  ' });
    assert.deepEqual(await denied, { decision: 'deny', message: 'run make check instead', mode: null, feedback: null });
    const line = host.current.items.at(-1);
    assert.ok(line?.kind === 'approval' && line.message === 'run make check instead');

    const blank = ask();
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'deny', message: '   ' });
    assert.deepEqual(await blank, { decision: 'deny', message: null, mode: null, feedback: null });
  });
});

describe('ChatHost: plans', () => {
  const PLAN = '## Add a --name option\n\n1. **Parse** it in `main()`\n2. Document it';
  const planParams = { workspace: WS, sessionId: 's1', tool: 'exit_plan_mode', arguments: { plan: PLAN }, kind: 'plan' as const, plan: PLAN };

  it('shows the plan in a card (its tool call waiting); Approve and accept edits answers approve with the mode', async () => {
    const { host, env } = setup();
    await host.handle({ type: 'ready' });
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'c1', name: 'exit_plan_mode', arguments: { plan: PLAN } });
    const answer = host.approve(planParams);
    await flush();
    const tool = host.current.items.find((i) => i.kind === 'tool');
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.ok(tool?.kind === 'tool' && card?.kind === 'approval');
    assert.equal(tool.status, 'waiting');
    assert.deepEqual([card.about, card.tool, card.title, card.detail, card.mode], ['plan', 'exit_plan_mode', 'Approve this plan and start working?', PLAN, 'inline']);
    assert.ok(env.revealed > 0, 'the chat comes up');
    assert.deepEqual(env.diffs, [], 'no diff for a plan');
    await host.handle({ type: 'approve', id: card.id, decision: 'approve', mode: 'acceptEdits' });
    assert.deepEqual(await answer, { decision: 'approve', mode: 'acceptEdits', message: null, feedback: null });
    const done = host.current.items.find((i) => i.id === card.id);
    assert.ok(done?.kind === 'approval');
    assert.deepEqual([done.status, done.planMode], ['approve', 'acceptEdits']);
    const after = host.current.items.find((i) => i.kind === 'tool');
    assert.equal(after?.kind === 'tool' && after.status, 'running');
  });

  it('Approve alone carries it out in default mode (an unknown mode too)', async () => {
    const { host } = setup();
    const first = host.approve(planParams);
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'approve' });
    assert.deepEqual(await first, { decision: 'approve', mode: 'default', message: null, feedback: null });
    const second = host.approve(planParams);
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'approve', mode: 'bypassPermissions' as never });
    // the webview's message is checked: an unknown mode is dropped before it reaches the card
    const card = host.current.items.at(-1);
    assert.equal(card?.kind === 'approval' && card.status, 'pending');
    host.decide(card?.id ?? '', 'approve');
    assert.deepEqual(await second, { decision: 'approve', mode: 'default', message: null, feedback: null });
  });

  it('Keep planning sends the feedback (trimmed; none: null); a denial or the end of the run keeps planning too', async () => {
    const { host } = setup();
    const said = host.approve(planParams);
    await flush();
    const id = host.current.items.at(-1)?.id ?? '';
    await host.handle({ type: 'approve', id, decision: 'keepPlanning', message: '  also update the tests  ' });
    assert.deepEqual(await said, { decision: 'keepPlanning', feedback: 'also update the tests', message: null, mode: null });
    const card = host.current.items.find((i) => i.id === id);
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.status, card.message], ['keepPlanning', 'also update the tests']);
    const blank = host.approve(planParams);
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'keepPlanning', message: '   ' });
    assert.deepEqual(await blank, { decision: 'keepPlanning', feedback: null, message: null, mode: null });
    const denied = host.approve(planParams);
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'deny', message: 'smaller steps' });
    assert.deepEqual(await denied, { decision: 'keepPlanning', feedback: 'smaller steps', message: null, mode: null });
    const stopped = host.approve(planParams);
    await flush();
    await host.handle({ type: 'cancel' });
    assert.deepEqual(await stopped, { decision: 'keepPlanning', feedback: null, message: null, mode: null });
    const last = host.current.items.at(-1);
    assert.equal(last?.kind === 'approval' && last.status, 'cancelled');
  });

  it("a plan's answers to a call's question deny it", async () => {
    const { host } = setup();
    const answer = host.approve({ workspace: WS, sessionId: 's1', tool: 'run_command', arguments: {}, kind: 'runCommand', command: 'make' });
    await flush();
    await host.handle({ type: 'approve', id: host.current.items.at(-1)?.id ?? '', decision: 'approve', mode: 'acceptEdits' });
    assert.deepEqual(await answer, { decision: 'deny', message: null, mode: null, feedback: null });
  });

  it('an older server sends the plan as the call\'s argument only', () => {
    const card = inlineApprovalCard({ workspace: WS, sessionId: 's', tool: 'exit_plan_mode', arguments: { plan: 'Do it' }, kind: 'plan' });
    assert.deepEqual(card, { tool: 'exit_plan_mode', title: 'Approve this plan and start working?', detail: 'Do it', about: 'plan' });
  });

  it('a plan asked with window/showMessageRequest (a modal): its card, then the button picked', () => {
    const { host } = setup();
    const id = host.modalApprovalShown(`PseudoClaude's plan:\n\n${PLAN}`);
    const card = host.current.items.at(-1);
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.about, card.tool, card.detail, card.mode], ['plan', 'exit_plan_mode', PLAN, 'modal']);
    host.modalApprovalAnswered(id, 'Approve and accept edits');
    const done = host.current.items.at(-1);
    assert.ok(done?.kind === 'approval');
    assert.deepEqual([done.status, done.planMode], ['approve', 'acceptEdits']);
    const again = host.modalApprovalShown(`PseudoClaude's plan:\n\n${PLAN}`);
    host.modalApprovalAnswered(again, 'Keep planning');
    const kept = host.current.items.at(-1);
    assert.equal(kept?.kind === 'approval' && kept.status, 'keepPlanning');
    assert.equal(modalStatus('Approve'), 'approve');
    assert.equal(modalStatus('Approve, accept edits'), 'approve');
    assert.equal(modalStatus('Keep planning'), 'keepPlanning');
  });
});

describe('ChatHost: the task list', () => {
  const TASKS = [
    { content: 'Parse the option', status: 'completed' as const },
    { content: 'Use it', status: 'in_progress' as const },
    { content: 'Document it', status: 'pending' as const },
  ];

  it('is asked for with the transcript, then follows the tasks events of the session shown only', async () => {
    const { host, agent, posted } = setup({ 'pseudoclaude/tasks': { sessionId: 's1', tasks: TASKS } });
    await host.handle({ type: 'ready' });
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/tasks').map((c) => c.params), [{ workspace: WS, sessionId: 's1' }]);
    assert.deepEqual(host.current.tasks, TASKS);
    assert.ok(posted.some((m) => m.type === 'tasks'), 'the webview gets it');
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'tasks', tasks: [{ content: 'Parse the option', status: 'completed' }] });
    assert.deepEqual(host.current.tasks, [{ content: 'Parse the option', status: 'completed' }]);
    host.onEvent({ workspace: WS, sessionId: 's9', kind: 'tasks', tasks: TASKS });
    assert.deepEqual(host.current.tasks, [{ content: 'Parse the option', status: 'completed' }], "another session's list is not shown");
    assert.equal(host.current.sessionId, 's1');
    host.onEvent({ workspace: 'file:///work/other', sessionId: 's1', kind: 'tasks', tasks: [] });
    assert.equal(host.current.tasks.length, 1, "another folder's is not either");
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'tasks', tasks: [] });
    assert.deepEqual(host.current.tasks, [], 'cleared: the checklist hides');
  });

  it("another session shown: the list goes, that session's is asked for; a new session has none", async () => {
    const lists: Record<string, typeof TASKS> = { s1: TASKS, s2: [{ content: 'Other work', status: 'pending' }] as typeof TASKS };
    let current = 's1';
    const { host, agent } = setup({
      'pseudoclaude/context': () => ({ ...CONTEXT, sessionId: current }),
      'pseudoclaude/sessions/resume': (p: unknown) => {
        current = (p as { sessionId: string }).sessionId;
        return { sessionId: current, messageCount: 2, badLines: 0, repaired: 0 };
      },
      'pseudoclaude/sessions/new': () => {
        current = 's3';
        return { sessionId: 's3', worktree: null };
      },
      'pseudoclaude/tasks': (p: unknown) => {
        const id = (p as { sessionId: string }).sessionId;
        return { sessionId: id, tasks: lists[id] ?? [] };
      },
    });
    await host.handle({ type: 'ready' });
    assert.equal(host.current.tasks.length, 3);
    await host.handle({ type: 'resume', sessionId: 's2' });
    assert.deepEqual(host.current.tasks, [{ content: 'Other work', status: 'pending' }]);
    await host.handle({ type: 'newSession' });
    assert.equal(host.current.sessionId, 's3');
    assert.deepEqual(host.current.tasks, []);
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/tasks').map((c) => (c.params as { sessionId: string }).sessionId), ['s1', 's2']);
  });

  it("a new chat's run shows its session's list; an older server (no pseudoclaude/tasks) shows none", async () => {
    let release: (r: RunResult) => void = () => undefined;
    const { host, env } = setup({
      'pseudoclaude/context': { ...CONTEXT, sessionId: null },
      'pseudoclaude/run': () => new Promise<RunResult>((resolve) => { release = resolve; }),
    });
    await host.handle({ type: 'ready' });
    assert.deepEqual(host.current.tasks, []);
    const running = host.ask('plan the option');
    await flush();
    host.onEvent({ workspace: WS, sessionId: 's5', kind: 'tasks', tasks: TASKS });
    assert.deepEqual(host.current.tasks, TASKS);
    release({ ...RESULT, sessionId: 's5' });
    await running;
    assert.deepEqual(host.current.tasks, TASKS);
    const older = setup();
    await older.host.handle({ type: 'ready' });
    assert.deepEqual(older.host.current.tasks, []);
    assert.ok(older.env.logs.some((l) => l.startsWith('chat: tasks of s1')), older.env.logs.join('\n'));
    assert.equal(env.logs.filter((l) => l.startsWith('chat: tasks')).length, 0, 'no session yet: nothing asked');
  });
});

describe('ChatHost: hooks', () => {
  const HOOKS = [{ name: 'lint', event: 'PostToolUse', action: 'shell: npm run lint' }];
  const TEXT = 'PostToolUse:\n  lint  shell: npm run lint  (.PseudoClaude/hooks.yaml): waits for your approval';

  it("a folder's hooks.yaml asks with each hook and what it runs, and stays past a run", async () => {
    const params = { workspace: WS, sessionId: '', tool: '.PseudoClaude/hooks.yaml', arguments: {}, kind: 'hooks' as const, path: '.PseudoClaude/hooks.yaml', hooks: HOOKS };
    assert.deepEqual(inlineApprovalCard(params), {
      tool: '', title: "This folder's .PseudoClaude/hooks.yaml has hooks that would run", detail: 'lint (PostToolUse): shell: npm run lint', about: 'hooks',
    });
    assert.equal(inlineApprovalCard(params, 'api').title, "api's .PseudoClaude/hooks.yaml has hooks that would run");
    const { host } = setup({ 'pseudoclaude/run': RESULT });
    const answer = host.approve(params);
    await flush();
    await host.ask('hello');
    await host.handle({ type: 'cancel' });
    const card = host.current.items.find((i) => i.kind === 'approval');
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.status, card.about], ['pending', 'hooks']);
    assert.match(renderItem(card), /aria-label="Approval of this folder&#39;s hooks"/);
    await host.handle({ type: 'approve', id: card.id, decision: 'allowSession' });
    assert.deepEqual(await answer, { decision: 'allowSession', message: null, mode: null, feedback: null });
    const answered = host.current.items.find((i) => i.id === card.id);
    assert.ok(answered?.kind === 'approval');
    assert.match(renderItem(answered), /Allowed for this project:<\/strong> <span>this folder&#39;s \.PseudoClaude\/hooks\.yaml&#39;s hooks/);
    const modal = modalApprovalCard("This folder's .PseudoClaude/hooks.yaml has hooks that would run on your machine (until you allow them, they do not):\n- lint (PostToolUse): shell: npm run lint");
    assert.deepEqual([modal.about, modal.title, modal.detail], ['hooks', "This folder's .PseudoClaude/hooks.yaml has hooks that would run", '- lint (PostToolUse): shell: npm run lint']);
  });

  it('/hooks shows the server\'s text as a card titled Hooks; it is not a prompt', async () => {
    const LISTED = { commands: [{ name: 'hooks', description: 'Show the hooks' }] };
    const { host, agent } = setup({ 'pseudoclaude/commands': LISTED, 'pseudoclaude/hooks/list': { hooks: [], text: TEXT } });
    await host.handle({ type: 'ready' });
    await host.loadCommands();
    await host.handle({ type: 'send', prompt: '/hooks' });
    assert.deepEqual(agent.calls.filter((c) => c.method === 'pseudoclaude/hooks/list').map((c) => c.params), [{ workspace: WS }]);
    assert.ok(!agent.methods().includes('pseudoclaude/run'), 'not a prompt');
    const shown = host.current.items.at(-1);
    assert.ok(shown?.kind === 'status' && shown.title === 'Hooks' && shown.text === TEXT);
    const html = renderItem(shown);
    assert.match(html, /aria-label="Hooks"><div class="card-title">Hooks<\/div>/);
    assert.ok(html.includes('waits for your approval'), html);
  });

  it('a prompt a hook refused ends with its reason', () => {
    const html = renderItem({ kind: 'end', id: 'e', stopReason: 'blocked', error: '[hook no-secrets] no secrets in prompts' });
    assert.match(html, /Not sent: a hook refused the prompt/);
    assert.match(html, /\[hook no-secrets\] no secrets in prompts/);
  });
});

describe('ChatHost: Show Hooks and Show Skills', () => {
  const waiting: HookEntry[] = [
    { name: 'notify', event: 'Stop', source: 'user', status: 'active', action: 'shell: notify-send done' },
    { name: 'lint', event: 'PostToolUse', source: 'workspace', status: 'denied', action: 'shell: npm run lint' },
    { name: 'typo', event: 'PreTool', source: 'workspace', status: 'invalid', action: '', error: '/w/.PseudoClaude/hooks.yaml:9: unknown event "PreTool"' },
  ];
  const approved = waiting.map((h) => (h.name === 'lint' ? { ...h, status: 'active' as const } : h));

  it('lists each hook with its event, source and status; Review… asks again and says what changed', async () => {
    let reviewed = 0;
    const { host, env, agent } = setup({
      'pseudoclaude/hooks/list': { hooks: waiting, text: 'Stop:\n  notify …' },
      'pseudoclaude/hooks/review': () => {
        reviewed++;
        return { hooks: approved, text: '' };
      },
    });
    await host.handle({ type: 'ready' });
    env.picks = ['Review'];
    await host.openHooks();
    const list = env.picked.at(-1);
    assert.equal(list?.title, 'PseudoClaude: Hooks of app');
    assert.deepEqual(list?.items.map((i) => [i.label, i.description ?? '', i.detail ?? '']), [
      ["$(shield) Review this folder's hooks…", 'let .PseudoClaude/hooks.yaml run', ''],
      ['$(pass) notify', 'Stop · ~/.PseudoClaude/hooks.yaml · runs', 'shell: notify-send done'],
      ['$(circle-slash) lint', 'PostToolUse · .PseudoClaude/hooks.yaml · declined', 'shell: npm run lint'],
      ['$(error) typo', 'PreTool · .PseudoClaude/hooks.yaml · cannot be read', '/w/.PseudoClaude/hooks.yaml:9: unknown event "PreTool"'],
    ]);
    assert.equal(reviewed, 1);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/hooks/review')?.params, { workspace: WS });
    const notice = host.current.items.at(-1);
    assert.ok(notice?.kind === 'notice');
    assert.equal(notice.text, "This folder's hooks run now: lint.");
  });

  it('offers no Review… when nothing waits; a review declined again says the hooks stay off', async () => {
    const { host, env } = setup({
      'pseudoclaude/hooks/list': { hooks: approved, text: 'Hooks text' },
      'pseudoclaude/hooks/review': { hooks: waiting, text: '' },
    });
    await host.handle({ type: 'ready' });
    env.picks = ['notify'];
    await host.openHooks();
    assert.ok(!env.picked.at(-1)?.items.some((i) => i.label.includes('Review')));
    const card = host.current.items.at(-1);
    assert.ok(card?.kind === 'status' && card.text === 'Hooks text', 'choosing a hook shows the /hooks card');
  });

  it('a declined review leaves a warning', () => {
    assert.deepEqual(reviewedNotice(waiting, waiting), { level: 'warning', text: "This folder's hooks stay off: they were not approved." });
    assert.equal(reviewedNotice([], []).level, 'info');
  });

  it('lists the skills; choosing one puts /<name> in the prompt box; one the model loads says so', async () => {
    const skill = (name: string, more: Partial<SkillEntry> = {}): SkillEntry => ({
      name, description: `what ${name} does`, source: 'workspace', loaded: false, path: `.PseudoClaude/skills/${name}/SKILL.md`, model: true, command: true, tools: [], ...more,
    });
    const { host, env, agent, posted } = setup({
      'pseudoclaude/skills/list': {
        sessionId: 's1',
        skills: [skill('review', { hint: '[path]', loaded: true }), skill('style', { source: 'claude', command: false })],
        problems: [{ path: '.claude/skills/bad/SKILL.md', line: 2, message: 'no description', source: 'claude', name: 'bad' }],
      },
    });
    await host.handle({ type: 'ready' });
    env.picks = ['review'];
    await host.openSkills();
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/skills/list')?.params, { workspace: WS, sessionId: 's1' });
    assert.deepEqual(env.picked.at(-1)?.items.map((i) => [i.label, i.description ?? '', i.detail ?? '']), [
      ['$(check) /review [path]', '.PseudoClaude/skills · loaded', 'what review does'],
      ['style', '.claude/skills · the model loads it', 'what style does'],
      ['Cannot be read', '', ''],
      ['$(error) bad', '.claude/skills', '.claude/skills/bad/SKILL.md:2: no description'],
    ]);
    assert.deepEqual(posted.at(-1), { type: 'focus', text: '/review ' });
    assert.equal(env.reveals.at(-1), true);
    env.picks = ['style'];
    await host.openSkills();
    const notice = host.current.items.at(-1);
    assert.ok(notice?.kind === 'notice' && notice.text.includes('the model loads it when it needs it'));
  });
});

describe('ChatHost: sub-agents', () => {
  const A1 = 'agent-00000000000000a1';
  const INFO = {
    agentId: A1, callId: 'p1', name: 'finder', subagentType: 'explore', description: 'find it', status: 'running',
    startedAt: '2025-01-01T00:00:00Z', usage: { inputTokens: 0, outputTokens: 0 },
  };

  it("asks agents/list when a sub-agent appears; its card follows the log's word", async () => {
    const { host, agent } = setup({ 'pseudoclaude/agents/list': { sessionId: 's1', agents: [INFO] } });
    await host.handle({ type: 'ready' });
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'p1', name: 'agent', arguments: { prompt: 'find it' } });
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'k1', name: 'grep', arguments: {}, agentId: A1 });
    host.onEvent({ workspace: WS, sessionId: 's1', kind: 'toolCall', id: 'k2', name: 'ls', arguments: {}, agentId: A1 });
    await flush();
    await flush();
    const asked = agent.calls.filter((c) => c.method === 'pseudoclaude/agents/list');
    assert.ok(asked.length >= 1 && asked.length <= 3, `agents/list asked ${asked.length} times`);
    assert.deepEqual(asked[asked.length - 1]?.params, { workspace: WS, sessionId: 's1' });
    const card = host.current.items.find((i) => i.kind === 'tool' && i.name === 'agent');
    assert.equal(card?.kind === 'tool' ? card.agent?.name : undefined, 'finder');
    assert.equal(card?.kind === 'tool' ? card.agent?.calls.length : 0, 2);
  });

  it('Stop: a background sub-agent by agents/stop; Open transcript pages its messages into the output', async () => {
    const { host, agent, env } = setup({
      'pseudoclaude/agents/list': { sessionId: 's1', agents: [] },
      'pseudoclaude/agents/stop': { sessionId: 's1', agentId: A1, status: 'canceled' },
      'pseudoclaude/sessions/messages': (p: unknown) => {
        const { agentId } = p as { agentId?: string };
        const items: TranscriptItem[] = agentId
          ? [{ kind: 'user', text: 'find it', inContext: true }, { kind: 'assistant', text: 'Found.', inContext: true }]
          : ITEMS;
        return { sessionId: 's1', total: items.length, items };
      },
    });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'stopAgent', agentId: A1, background: true });
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/agents/stop')?.params, { workspace: WS, sessionId: 's1', agentId: A1 });
    // a foreground one stops alone too (the run goes on): agents/stop as well
    await host.handle({ type: 'stopAgent', agentId: A1, background: false });
    const stops = agent.calls.filter((c) => c.method === 'pseudoclaude/agents/stop');
    assert.equal(stops.length, 2);
    await host.handle({ type: 'agentTranscript', agentId: A1 });
    const paged = agent.calls.filter((c) => c.method === 'pseudoclaude/sessions/messages' && (c.params as { agentId?: string }).agentId === A1);
    assert.deepEqual(paged.map((c) => c.params), [
      { workspace: WS, sessionId: 's1', agentId: A1, offset: 0, limit: 1 },
      { workspace: WS, sessionId: 's1', agentId: A1, offset: 0 },
    ]);
    assert.equal(env.transcripts.length, 1);
    assert.match(env.transcripts[0]?.title ?? '', /sub-agent agent-00000000000000a1 .* of session s1/);
    assert.deepEqual(env.transcripts[0]?.items.map((i) => i.kind), ['user', 'assistant']);
  });

  it('Stop of a background sub-agent that already ended says why', async () => {
    const { host } = setup({
      'pseudoclaude/agents/list': { sessionId: 's1', agents: [] },
      'pseudoclaude/agents/stop': () => {
        throw rpcError(-32803, `sub-agent ${A1} is not running: it ended completed`);
      },
    });
    await host.handle({ type: 'ready' });
    await host.handle({ type: 'stopAgent', agentId: A1, background: true });
    const notice = host.current.items.find((i) => i.kind === 'notice');
    assert.match(notice?.kind === 'notice' ? notice.text : '', /Cannot stop agent-00000000000000a1: sub-agent agent-00000000000000a1 is not running/);
  });
});
