// `pseudoclaude acp` driven by the official ACP TypeScript SDK (@agentclientprotocol/sdk) as
// the client, the way an editor would: new session -> prompt (a tool call asked with
// session/request_permission) -> cancel -> list -> load in a new process, then the session as
// `pseudoclaude sessions show` has it; the model option, close, resume and delete; and a
// sub-agent as one tool call streaming its progress (a background one: a card of its own). The SDK
// validates every message it receives against the ACP schema, so this also checks that what
// the agent writes is protocol-valid.
//
// The model is `pseudoclaude fake-model` (scripted); settings come from the user's and the
// workspace's .PseudoClaude/config.yaml and the API key from the environment, as ACP has no
// initializationOptions. PSEUDOCLAUDE_PYTHON names the Python with pseudoclaude installed
// (default: the repository's .venv).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';

const here = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.PSEUDOCLAUDE_PYTHON
  ?? path.resolve(here, '..', '..', '..', '.venv', 'bin', 'python');
const API_KEY = 'sk-ant-test-node-0123456789abcdef';
const DEFAULT_MODEL = 'claude-sonnet-4-6'; // the `model` setting when none is set
const SUMMARY_MODEL = 'claude-haiku-4-5';
const TIMEOUT = 60_000;

const SCRIPT = {
  rules: [{ when: { has_tools: false }, reply: { text: '[]' } }], // memory updates
  turns: [
    { text: 'Let me check.', tool_calls: [{ name: 'run_command', arguments: { command: 'echo', args: ['hi there'] } }] },
    { text: ['It printed ', 'hi there.'] },
    { text: ['Working', ' on it'], delay: 0.05, stall: 30, stall_after: 5 },
    { text: 'Picked up again.' },
  ],
};

function withTimeout(promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), TIMEOUT); }),
  ]);
}

async function until(predicate, what) {
  const deadline = Date.now() + TIMEOUT;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `pseudoclaude fake-model --script FILE`: resolves with its base URL and the process. */
function fakeModel(dir, turns = SCRIPT.turns, rules = []) {
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ ...SCRIPT, rules: [...rules, ...SCRIPT.rules], turns }));
  const proc = spawn(PYTHON, ['-m', 'pseudoclaude', 'fake-model', '--script', script],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    createInterface({ input: proc.stdout }).once('line', (url) => resolve({ url: url.trim(), proc }));
  });
}

/** `pseudoclaude acp` as a subprocess and an SDK client app over its stdio. */
function startAgent(env, dir, log) {
  const proc = spawn(PYTHON, ['-m', 'pseudoclaude', 'acp'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = [];
  proc.stderr.on('data', (chunk) => stderr.push(chunk));
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const updates = [];
  const permissions = [];
  const app = acp.client({ name: 'node-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      log.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
    });
  return { proc, stream, app, updates, permissions, exited, stderr };
}

/** The editor closes the agent's stdin: it exits on its own (0), and the key was never sent. */
async function closed(agent, log) {
  agent.proc.stdin.end();
  assert.equal(await withTimeout(agent.exited, 'the agent to exit'), 0);
  assert.ok(!JSON.stringify(log).includes(API_KEY));
}

const ofKind = (updates, sessionId, kind) => updates
  .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
  .map((n) => n.update);
const text = (updates, sessionId) => ofKind(updates, sessionId, 'agent_message_chunk')
  .map((u) => u.content.text).join('');

test('new, prompt with a permission, cancel, list, load in a new process', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pseudoclaude-acp-node-'));
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws');
  mkdirSync(home);
  mkdirSync(path.join(ws, '.PseudoClaude'), { recursive: true });
  writeFileSync(path.join(ws, 'README.md'), '# ws\nA small sample project.\n');
  const fake = await fakeModel(dir);
  // where the prompts go is the user's own setting (a folder's own would wait for an approval)
  mkdirSync(path.join(home, '.PseudoClaude'));
  writeFileSync(path.join(home, '.PseudoClaude', 'config.yaml'), [
    'provider: anthropic', `baseUrl: ${fake.url}`,
    'memory:', `  userDir: ${path.join(dir, 'user-memory')}`,
    // off: a sandboxed command no rule names would run without asking (sandbox.autoAllow)
    'sandbox:', '  enabled: false', ''].join('\n'));
  writeFileSync(path.join(ws, '.PseudoClaude', 'config.yaml'), [
    'maxRetries: 0', 'approvals:', '  runCommand: ask', ''].join('\n'));
  const env = { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: API_KEY };
  const log = [];
  try {
    // -- the first process: new, prompt (tool call with permission), cancel, list
    const first = startAgent(env, dir, log);
    const sessionId = await first.app.connectWith(first.stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {},
        clientInfo: { name: 'node-test', version: '1' },
      });
      assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
      assert.equal(init.agentCapabilities.loadSession, true);
      assert.deepEqual(init.agentCapabilities.sessionCapabilities,
        { list: {}, resume: {}, close: {}, delete: {} });

      const made = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const { sessionId } = made;
      assert.equal(made.modes.currentModeId, 'default');
      assert.deepEqual(made.modes.availableModes.map((m) => m.id), ['strict', 'default', 'acceptEdits', 'plan']);
      assert.deepEqual(made.configOptions.map((o) => [o.id, o.currentValue]),
        [['mode', 'default'], ['model', DEFAULT_MODEL]]);
      await until(() => ofKind(first.updates, sessionId, 'available_commands_update').length, 'commands');
      const [commands] = ofKind(first.updates, sessionId, 'available_commands_update');
      const names = commands.availableCommands.map((c) => c.name);
      for (const name of ['compact', 'undo', 'context', 'memory', 'rewind', 'mcp', 'plan', 'do']) {
        assert.ok(names.includes(name), `${name} in ${names}`);
      }
      assert.ok(!names.includes('new')); // the client starts new threads itself

      const done = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'say hi there' }],
      }), 'prompt');
      assert.equal(done.stopReason, 'end_turn');
      assert.equal(text(first.updates, sessionId), 'Let me check.It printed hi there.');
      assert.equal(first.permissions.length, 1);
      const [asked] = first.permissions;
      assert.equal(asked.sessionId, sessionId);
      assert.equal(asked.toolCall.title, 'run_command: echo \'hi there\'');
      assert.deepEqual(asked.options.map((o) => o.kind), ['allow_once', 'allow_always', 'allow_always', 'reject_once']);
      assert.equal(asked.options[2].name, 'Always allow Bash(echo:*)');
      const [call] = ofKind(first.updates, sessionId, 'tool_call');
      assert.equal(call.toolCallId, asked.toolCall.toolCallId);
      assert.equal(call.status, 'pending');
      assert.equal(call.kind, 'execute');
      const results = ofKind(first.updates, sessionId, 'tool_call_update');
      assert.deepEqual(results.map((u) => u.status), ['in_progress', 'completed']);
      assert.match(results[1].content[0].content.text, /hi there/);
      const usage = ofKind(first.updates, sessionId, 'usage_update').at(-1);
      assert.equal(usage.size, 200_000);
      assert.ok(usage.used > 0);

      // cancel a prompt while the model streams
      const before = first.updates.length;
      const running = ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'take your time' }],
      });
      await until(() => first.updates.slice(before).some((n) => n.update.sessionUpdate === 'agent_message_chunk'), 'a chunk');
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
      const cancelled = await withTimeout(running, 'the cancelled prompt');
      assert.equal(cancelled.stopReason, 'cancelled');

      const again = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'go on' }],
      }), 'the prompt after the cancel');
      assert.equal(again.stopReason, 'end_turn');

      const listed = await ctx.request(acp.methods.agent.session.list, { cwd: ws });
      assert.deepEqual(listed.sessions.map((s) => s.sessionId), [sessionId]);
      assert.equal(listed.sessions[0].title, 'say hi there');
      return sessionId;
    });
    first.proc.stdin.end(); // the editor closes the agent's stdin: it exits on its own
    assert.equal(await withTimeout(first.exited, 'the first agent to exit'), 0);

    // -- a new process: list, load (the history replayed), prompt again
    const second = startAgent(env, dir, log);
    await second.app.connectWith(second.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const listed = await ctx.request(acp.methods.agent.session.list, {});
      assert.equal(listed.sessions.length, 0); // no folder opened yet in this process
      const inFolder = await ctx.request(acp.methods.agent.session.list, { cwd: ws });
      assert.deepEqual(inFolder.sessions.map((s) => s.sessionId), [sessionId]);

      await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
      const users = ofKind(second.updates, sessionId, 'user_message_chunk').map((u) => u.content.text);
      assert.deepEqual(users, ['say hi there', 'take your time', 'go on']);
      const [call] = ofKind(second.updates, sessionId, 'tool_call'); // replayed finished
      assert.equal(call.title, 'run_command: echo \'hi there\'');
      assert.equal(call.status, 'completed');
      assert.match(call.content[0].content.text, /hi there/);
      assert.equal(ofKind(second.updates, sessionId, 'tool_call_update').length, 0);
      assert.match(text(second.updates, sessionId), /^Let me check\.It printed hi there\.Picked up again\.$/);
      assert.ok(ofKind(second.updates, sessionId, 'usage_update').length);

      const unknown = await ctx.request(acp.methods.agent.session.load, {
        sessionId: '20200101-000000-abcd', cwd: ws, mcpServers: [],
      }).then(() => null, (error) => error);
      assert.equal(unknown?.code, -32002);
    });
    second.proc.stdin.end();
    assert.equal(await withTimeout(second.exited, 'the second agent to exit'), 0);

    // -- the same session through the CLI
    const shown = JSON.parse(execFileSync(PYTHON, ['-m', 'pseudoclaude', 'sessions', 'show', 'latest',
      '--workspace', ws, '--json'], { env, encoding: 'utf8' }));
    assert.equal(shown.id, sessionId);
    assert.deepEqual(shown.messages.filter((m) => m.role === 'user' && m.content).map((m) => m.content),
      ['say hi there', 'take your time', 'go on']);
    const toolResults = shown.messages.filter((m) => m.tool_result);
    assert.equal(toolResults.length, 1);
    assert.match(toolResults[0].tool_result.content, /hi there/);

    assert.ok(!JSON.stringify(log).includes(API_KEY));
    assert.ok(!Buffer.concat([...first.stderr, ...second.stderr]).toString().includes(API_KEY));
  } finally {
    fake.proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A folder with the user's settings (the fake model's URL, and `extra` lines) in `dir`. */
function setUp(dir, fakeUrl, extra = []) {
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws');
  mkdirSync(path.join(home, '.PseudoClaude'), { recursive: true });
  mkdirSync(path.join(ws, '.PseudoClaude'), { recursive: true });
  writeFileSync(path.join(ws, 'README.md'), '# ws\n');
  writeFileSync(path.join(home, '.PseudoClaude', 'config.yaml'), [
    'provider: anthropic', `baseUrl: ${fakeUrl}`,
    'memory:', `  userDir: ${path.join(dir, 'user-memory')}`,
    'sandbox:', '  enabled: false', ...extra, ''].join('\n'));
  writeFileSync(path.join(ws, '.PseudoClaude', 'config.yaml'), 'maxRetries: 0\n');
  return { ws, env: { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: API_KEY } };
}

test('the model option, then close, resume and delete', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pseudoclaude-acp-node-'));
  const fake = await fakeModel(dir, [
    { text: 'First answer.' },
    { text: ['Working', ' on it', ' slowly'], delay: 0.05, stall: 30, stall_after: 5 },
    { text: 'Resumed answer.' },
  ]);
  const { ws, env } = setUp(dir, fake.url, ['compact:', `  model: ${SUMMARY_MODEL}`]);
  const modelsAsked = async () => (await (await fetch(`${fake.url}/_requests`)).json())
    .filter((r) => r.body.tools).map((r) => r.body.model);
  const log = [];
  try {
    const agent = startAgent(env, dir, log);
    await agent.app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId, configOptions } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const model = configOptions.find((o) => o.id === 'model');
      assert.deepEqual(model.options.map((o) => o.value), [DEFAULT_MODEL, SUMMARY_MODEL]);

      // the model option: the session's next requests use the model chosen
      const set = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId, configId: 'model', value: SUMMARY_MODEL,
      });
      assert.equal(set.configOptions.find((o) => o.id === 'model').currentValue, SUMMARY_MODEL);
      await until(() => ofKind(agent.updates, sessionId, 'config_option_update').length, 'the option update');
      const [changed] = ofKind(agent.updates, sessionId, 'config_option_update');
      assert.equal(changed.configOptions.find((o) => o.id === 'model').currentValue, SUMMARY_MODEL);
      const first = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'hello' }],
      }), 'the first prompt');
      assert.equal(first.stopReason, 'end_turn');
      assert.deepEqual(await modelsAsked(), [SUMMARY_MODEL]);

      // delete is refused while a prompt runs; close cancels it
      const running = ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'take your time' }],
      });
      await until(() => text(agent.updates, sessionId).includes('Working'), 'a chunk');
      const refused = await ctx.request(acp.methods.agent.session.delete, { sessionId })
        .then(() => null, (error) => error);
      assert.equal(refused?.code, -32001);
      await withTimeout(ctx.request(acp.methods.agent.session.close, { sessionId }), 'close');
      assert.equal((await withTimeout(running, 'the closed prompt')).stopReason, 'cancelled');

      // resume: no history replayed; modes, options and commands as for a new session
      const before = agent.updates.length;
      const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, mcpServers: [] });
      assert.equal(resumed.modes.currentModeId, 'default');
      assert.deepEqual(resumed.configOptions.map((o) => o.id), ['mode', 'model']);
      await until(() => ofKind(agent.updates.slice(before), sessionId, 'available_commands_update').length, 'commands');
      assert.equal(ofKind(agent.updates.slice(before), sessionId, 'user_message_chunk').length, 0);
      const again = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'go on' }],
      }), 'the prompt after resume');
      assert.equal(again.stopReason, 'end_turn');
      assert.match(text(agent.updates, sessionId), /Resumed answer\.$/);

      // delete: the folder goes; a second delete resolves too (the SDK treats -32002 as done)
      assert.deepEqual(await ctx.request(acp.methods.agent.session.delete, { sessionId }), {});
      assert.ok(!existsSync(path.join(ws, '.PseudoClaude', 'sessions', sessionId)));
      const listed = await ctx.request(acp.methods.agent.session.list, { cwd: ws });
      assert.deepEqual(listed.sessions, []);
      await ctx.request(acp.methods.agent.session.delete, { sessionId });
    });
    await closed(agent, log);
  } finally {
    fake.proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sub-agent is one tool call whose content streams its progress; a background one a card of its own', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pseudoclaude-acp-node-'));
  const EXPLORE = 'You are an explore sub-agent';
  const GENERAL = 'You are a general-purpose sub-agent';
  const sub = (system, afterResult, reply) => ({ when: { system_contains: system, last_is_tool_result: afterResult }, reply, times: 1 });
  const fake = await fakeModel(dir, [
    { text: 'Handing it over.', tool_calls: [{ name: 'agent', arguments: { subagent_type: 'explore', description: 'find the title', prompt: 'What is the title of README.md?' } }] },
    { text: 'The title is ws.' },
    { text: 'Started it.', tool_calls: [{ name: 'agent', arguments: { description: 'count files', prompt: 'Count the files.', run_in_background: true } }] },
    { text: 'It runs in the background.' },
  ], [
    sub(EXPLORE, false, { text: 'SUBTEXT looking.', tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] }),
    sub(EXPLORE, true, { text: 'SUBANSWER: the title is ws' }),
    sub(GENERAL, false, { text: 'BGTEXT counting.', tool_calls: [{ name: 'find_files', arguments: { pattern: '*' } }] }),
    sub(GENERAL, true, { text: 'BGANSWER: one file' }),
  ]);
  const { ws, env } = setUp(dir, fake.url);
  const log = [];
  const contentText = (u) => (u.content ?? []).map((c) => c.content?.text ?? '');
  try {
    const agent = startAgent(env, dir, log);
    await agent.app.connectWith(agent.stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const first = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'what is the title?' }],
      }), 'the prompt with a sub-agent');
      assert.equal(first.stopReason, 'end_turn');
      // one card: the agent call; the sub-agent's read_file is in its content, not a card
      const [start] = ofKind(agent.updates, sessionId, 'tool_call');
      assert.equal(start.title, 'explore agent: find the title');
      const card = start.toolCallId;
      const updates = ofKind(agent.updates, sessionId, 'tool_call_update');
      assert.deepEqual([...new Set(updates.map((u) => u.toolCallId))], [card]);
      assert.ok(updates.some((u) => contentText(u).some((t) => t.includes('SUBTEXT looking.'))), 'its text streams');
      const done = updates.at(-1);
      assert.equal(done.status, 'completed');
      const shown = contentText(done);
      assert.equal(shown[0], '✓ read_file: README.md');
      assert.ok(shown.at(-1).includes('SUBANSWER: the title is ws'), shown.join(' | '));
      assert.equal(text(agent.updates, sessionId), 'Handing it over.The title is ws.'); // not SUBTEXT

      // a background sub-agent: the agent call ends at once; its task is a card of its own
      const second = await withTimeout(ctx.request(acp.methods.agent.session.prompt, {
        sessionId, prompt: [{ type: 'text', text: 'count them in the background' }],
      }), 'the prompt with a background sub-agent');
      assert.equal(second.stopReason, 'end_turn');
      const taskCard = () => ofKind(agent.updates, sessionId, 'tool_call_update')
        .filter((u) => u.toolCallId.startsWith('task-'));
      await until(() => taskCard().some((u) => u.status === 'completed'), 'the task card to end');
      const [taskStart] = ofKind(agent.updates, sessionId, 'tool_call').filter((u) => u.toolCallId.startsWith('task-'));
      assert.ok(taskStart, 'the task has a card of its own');
      const ended = taskCard().find((u) => u.status === 'completed');
      assert.ok(contentText(ended).some((t) => t.includes('BGANSWER: one file')), contentText(ended).join(' | '));
      assert.ok(!text(agent.updates, sessionId).includes('BGTEXT'));
    });
    await closed(agent, log);
  } finally {
    fake.proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
