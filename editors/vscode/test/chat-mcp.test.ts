/** The MCP servers in the chat: statuses in words, the header button, the menu's rows, the approvals' words. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALLOW_PROJECT, approvalAnswer, approvalPrompt } from '../src/approvals';
import {
  canApprove,
  McpMenu,
  mcpBadge,
  mcpJsonCommand,
  mcpToolName,
  menuRows,
  primaryAction,
  serverDecision,
  serverQuestion,
  statusWords,
} from '../src/chat/mcp';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, reduce, type ChatState } from '../src/chat/model';
import { renderItem, renderMcpButton } from '../src/chat/render';
import { parseSlash, RUNNABLE } from '../src/chat/slash';
import type { McpServer } from '../src/protocol';

const ready: McpServer = { name: 'echo', source: 'user', status: 'ready', tools: ['echo', 'big', 'image'], error: null };
const starting: McpServer = { name: 'docs', source: 'workspace', status: 'starting', tools: [], error: null };
const waiting: McpServer = { name: 'notes', source: 'project', status: 'needsApproval', tools: [], error: null };
const denied: McpServer = { name: 'notes', source: 'project', status: 'disabled', tools: [], error: 'not approved' };
const off: McpServer = { name: 'off', source: 'project', status: 'disabled', tools: [], error: 'its entry says `approval: deny`' };
const failed: McpServer = { name: 'broken', source: 'acp', status: 'failed', tools: [], error: 'exited with 1:\nTraceback…' };

/** No attribute starting with `on`, no `style=`, no `<script`. */
function assertInert(html: string): void {
  assert.doesNotMatch(html, /<[^>]*\son\w+\s*=/i, 'an inline event handler');
  assert.doesNotMatch(html, /<[^>]*\sstyle\s*=/i, 'an inline style');
  assert.doesNotMatch(html, /<script/i);
}

describe('MCP statuses', () => {
  it('says each status in words', () => {
    assert.equal(statusWords(ready), 'ready · 3 tools');
    assert.equal(statusWords({ ...ready, tools: ['one'] }), 'ready · 1 tool');
    assert.equal(statusWords(starting), 'not started yet');
    assert.equal(statusWords(waiting), 'waits for your approval');
    assert.equal(statusWords(failed), 'failed: exited with 1: Traceback…');
    assert.equal(statusWords({ ...failed, error: null }), 'failed: it did not start');
    assert.equal(statusWords(denied), 'disabled: not approved');
    assert.equal(statusWords({ ...off, error: null }), 'disabled');
  });
  it('approves what waits or was denied; restarts what failed; Enter does that, else unfolds the tools', () => {
    assert.ok(canApprove(waiting) && canApprove(denied));
    assert.ok(!canApprove(off), 'an entry that says deny stays off');
    assert.ok(!canApprove(ready));
    assert.deepEqual(primaryAction(waiting), { kind: 'approve', server: 'notes' });
    assert.deepEqual(primaryAction(denied), { kind: 'approve', server: 'notes' });
    assert.deepEqual(primaryAction(failed), { kind: 'restart', server: 'broken' });
    assert.deepEqual(primaryAction(ready), { kind: 'toggle', server: 'echo' });
    assert.deepEqual(primaryAction(starting), { kind: 'none' });
  });
});

describe('the MCP button', () => {
  it('counts the servers and warns when one failed or waits for an approval', () => {
    assert.deepEqual(mcpBadge(null), { count: null, warn: null, title: 'MCP servers' });
    assert.equal(mcpBadge([]).count, 0);
    assert.match(mcpBadge([]).title, /none configured/);
    assert.deepEqual(mcpBadge([ready, starting]), { count: 2, warn: null, title: 'MCP servers: 2 servers (1 ready)' });
    assert.deepEqual(mcpBadge([ready, waiting]).warn, 'needsApproval');
    assert.equal(mcpBadge([ready, waiting]).title, 'MCP servers: 2 servers (1 ready, 1 waits for your approval)');
    assert.deepEqual(mcpBadge([waiting, failed]).warn, 'failed');
  });
  it('renders the count and the dot', () => {
    assert.deepEqual(renderMcpButton(null), { html: 'MCP', title: 'MCP servers' });
    assert.equal(renderMcpButton([]).html, 'MCP');
    assert.equal(renderMcpButton([ready]).html, 'MCP<span class="mcp-count">1</span>');
    assert.equal(renderMcpButton([ready, failed]).html, 'MCP<span class="mcp-count">2</span><span class="mcp-dot mcp-dot-failed" aria-hidden="true"></span>');
  });
});

describe('the MCP menu', () => {
  it('lists each server with its status, source and tools; then where to configure more', () => {
    const rows = menuRows([ready, waiting, failed]);
    assert.deepEqual(rows.map((r) => r.key), ['server:echo', 'server:notes', 'server:broken', 'sep:configure', 'mcpJson', 'settings']);
    const [echo, notes, broken] = rows;
    assert.deepEqual([echo?.label, echo?.description, echo?.icon, echo?.color], ['echo', 'ready · 3 tools · your settings', 'pass', 'testing.iconPassed']);
    assert.equal(echo?.detail, 'echo, big, image · Enter lists them');
    assert.equal(notes?.description, 'waits for your approval · .mcp.json');
    assert.deepEqual(notes?.buttons.map((b) => b.tooltip), ['Approve…']);
    assert.match(notes?.detail ?? '', /Approve…/);
    assert.equal(broken?.description, 'failed: exited with 1: Traceback… · the editor');
    assert.deepEqual(broken?.buttons.map((b) => [b.tooltip, b.action.kind]), [['Restart', 'restart']]);
    assert.equal(menuRows([starting])[0]?.description, 'not started yet · config.yaml');
    assert.match(menuRows([starting])[0]?.detail ?? '', /starts when a run first needs its tools/);
  });
  it('with no server, says how to add one', () => {
    const rows = menuRows([]);
    assert.equal(rows[0]?.label, 'No MCP servers in this folder');
    assert.match(rows[0]?.detail ?? '', /\.mcp\.json.*pseudoclaude\.mcp\.servers/);
    assert.deepEqual(rows.slice(2).map((r) => r.action.kind), ['mcpJson', 'settings']);
  });
  it('unfolds a server\'s tools under it and folds them again', async () => {
    const menu = new McpMenu('app', [ready, starting], async () => undefined);
    let changes = 0;
    menu.onChange(() => changes++);
    await menu.act({ kind: 'toggle', server: 'echo' });
    const rows = menu.rows();
    assert.deepEqual(rows.slice(0, 5).map((r) => r.label), ['echo', 'echo', 'big', 'image', 'docs']);
    assert.deepEqual(rows[1]?.description, 'tool of echo');
    assert.equal(rows[0]?.detail, 'Tools below · Enter hides them');
    await menu.act({ kind: 'toggle', server: 'echo' });
    assert.equal(menu.rows()[1]?.label, 'docs');
    assert.equal(changes, 2);
  });
  it('restarts in place: "restarting…", then the new entry (or why it failed)', async () => {
    let finish: (s: McpServer | undefined) => void = () => undefined;
    const menu = new McpMenu('app', [failed], () => new Promise((r) => (finish = r)));
    const done = menu.act({ kind: 'restart', server: 'broken' });
    assert.match(menu.rows()[0]?.description ?? '', /^restarting… · /);
    assert.equal(menu.rows()[0]?.icon, 'loading~spin');
    assert.equal(await menu.act({ kind: 'restart', server: 'broken' }), undefined, 'once at a time');
    finish({ ...failed, status: 'ready', tools: ['q'], error: null });
    assert.equal(await done, undefined);
    assert.equal(menu.rows()[0]?.description, 'ready · 1 tool · the editor');
    const bad = new McpMenu('app', [failed], async () => {
      throw new Error('no such server');
    });
    await bad.act({ kind: 'restart', server: 'broken' });
    assert.equal(bad.rows()[0]?.description, 'failed: the restart failed: no such server · the editor');
  });
  it('says "starting…" for a server just allowed until it is ready (or failed)', () => {
    const menu = new McpMenu('app', [waiting], async () => undefined, { launching: ['notes'], focus: 'notes' });
    assert.equal(menu.focus, 'server:notes');
    assert.equal(menu.rows()[0]?.detail, 'This list follows it.');
    assert.match(menu.rows()[0]?.description ?? '', /^starting… /, 'the answer may not have reached the server yet');
    menu.update([{ ...waiting, status: 'starting' }]);
    assert.match(menu.rows()[0]?.description ?? '', /^starting… /);
    menu.update([{ ...waiting, status: 'failed', error: 'boom' }]);
    assert.equal(menu.rows()[0]?.description, 'failed: boom · .mcp.json');
    menu.update([{ ...waiting, status: 'starting' }]);
    assert.equal(menu.rows()[0]?.description, 'not started yet · .mcp.json', 'once settled, starting is "not started yet" again');
    assert.deepEqual(new McpMenu('app', [ready], async () => undefined, { launching: ['echo'] }).rows()[0]?.description, 'ready · 3 tools · your settings');
  });
  it('returns what leaves the menu', async () => {
    const menu = new McpMenu('app', [waiting], async () => undefined);
    assert.deepEqual(await menu.act({ kind: 'approve', server: 'notes' }), { kind: 'approve', server: 'notes' });
    assert.deepEqual(await menu.act({ kind: 'settings' }), { kind: 'settings' });
    assert.equal(await menu.act({ kind: 'none' }), undefined);
    assert.equal(menu.title, 'MCP servers of app');
  });
  it('follows the list while it is up', () => {
    const menu = new McpMenu('app', [waiting], async () => undefined);
    let changes = 0;
    menu.onChange(() => changes++);
    menu.update([{ ...waiting, status: 'ready', tools: ['n'] }]);
    assert.equal(menu.rows()[0]?.description, 'ready · 1 tool · .mcp.json');
    menu.updateOne({ ...ready });
    assert.deepEqual(menu.servers.map((s) => s.name), ['notes', 'echo']);
    assert.equal(changes, 2);
  });
});

describe('MCP approvals', () => {
  it('asks about a project server with the command it would run', () => {
    const q = serverQuestion(waiting, "python notes.py 'my notes'");
    assert.equal(q.message, "This project's .mcp.json wants to start the MCP server notes");
    assert.match(q.detail, /^It runs: python notes\.py 'my notes'\n\n/);
    assert.match(q.detail, /remembered on this machine, for this folder and this exact command/);
    assert.match(serverQuestion(denied, 'x').detail, /You denied it earlier/);
    assert.match(serverQuestion(waiting, 'https://mcp.example.com/mcp').detail, /^It connects to https:/);
    assert.match(serverQuestion(waiting, undefined).detail, /read it there before you allow it/);
    assert.equal(serverDecision('Allow for this project'), 'allowSession');
    assert.equal(serverDecision('Allow once'), 'allowOnce');
    assert.equal(serverDecision(undefined), undefined);
  });
  it('reads the command line of a .mcp.json server as the server shows it', () => {
    const json = JSON.stringify({
      mcpServers: {
        notes: { command: 'python', args: ['notes.py', 'my notes', "it's"] },
        web: { type: 'http', url: 'https://mcp.example.com/mcp?token=secret' },
        odd: { args: [] },
      },
    });
    assert.equal(mcpJsonCommand(json, 'notes'), `python notes.py 'my notes' 'it'"'"'s'`);
    assert.equal(mcpJsonCommand(json, 'web'), 'https://mcp.example.com/mcp');
    assert.equal(mcpJsonCommand(json, 'odd'), undefined);
    assert.equal(mcpJsonCommand(json, 'missing'), undefined);
    assert.equal(mcpJsonCommand('{not json', 'notes'), undefined);
    assert.equal(mcpJsonCommand(undefined, 'notes'), undefined);
  });
  it('names an MCP tool as the model sees it', () => {
    assert.equal(mcpToolName('echo', 'echo'), 'mcp__echo__echo');
    assert.equal(mcpToolName('my.server', 'dotted.name'), 'mcp__my_server__dotted_name');
  });
  it('renders an MCP call\'s card: the tool, its server, the arguments (folded when long)', () => {
    const args = '{\n  "text": "<hi>"\n}';
    const html = renderItem({
      kind: 'approval', id: 'ap1', tool: 'mcp__echo__echo', title: 'Call echo of the MCP server echo?', detail: '',
      mode: 'inline', status: 'pending', about: 'mcp', server: 'echo', args,
    });
    assert.match(html, /class="card approval pending approval-mcp"/);
    assert.match(html, /Call echo of the MCP server echo\?/);
    assert.match(html, /<details class="approval-args" open><summary><span class="card-label">Arguments<\/span>/);
    assert.match(html, /&lt;hi&gt;/);
    assert.match(html, />Allow for this session</);
    assertInert(html);
    const long = JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])), null, 2);
    assert.match(renderItem({ kind: 'approval', id: 'ap2', tool: 't', title: 'Call t of the MCP server s?', detail: '', mode: 'inline', status: 'pending', about: 'mcp', args: long }), /<details class="approval-args">/);
    const done = renderItem({
      kind: 'approval', id: 'ap1', tool: 'mcp__echo__echo', title: 'Call echo of the MCP server echo?', detail: '',
      mode: 'inline', status: 'allowOnce', about: 'mcp', server: 'echo', args,
    });
    assert.match(done, /<strong>Allowed once:<\/strong> <span>call echo of the MCP server echo<\/span>/);
  });
  it("renders a project server's card: the command, Allow for this project", () => {
    const html = renderItem({
      kind: 'approval', id: 'ap3', tool: '', title: "This project's .mcp.json wants to start the MCP server notes",
      detail: '$ python notes.py', mode: 'inline', status: 'pending', about: 'mcpServer', server: 'notes',
    });
    assert.match(html, /aria-label="Approval to start the MCP server notes"/);
    assert.match(html, /<pre class="card-pre">\$ python notes\.py<\/pre>/);
    assert.match(html, /data-decision="allowSession" data-id="ap3">Allow for this project</);
    assert.match(html, /with your permissions/);
    assertInert(html);
    const done = renderItem({
      kind: 'approval', id: 'ap3', tool: '', title: 'x', detail: '$ python notes.py', mode: 'inline', status: 'allowSession',
      about: 'mcpServer', server: 'notes',
    });
    assert.match(done, /<strong>Allowed for this project:<\/strong> <span>start the MCP server notes \(\.mcp\.json\)<\/span>/);
  });
  it('leaves a project server\'s question up when a run ends; the run\'s own are no longer asked', () => {
    let s: ChatState = emptyState({ uri: 'file:///w', name: 'w' });
    s = reduce(s, { type: 'approval', id: 'a1', tool: '', title: 'start', detail: '', mode: 'inline', about: 'mcpServer', server: 'notes' });
    s = reduce(s, { type: 'runStarted', prompt: 'go' });
    s = reduce(s, { type: 'event', event: { workspace: 'file:///w', sessionId: 's', kind: 'toolCall', id: 'c', name: 'mcp__echo__echo', arguments: {} } });
    s = reduce(s, { type: 'approval', id: 'a2', tool: 'mcp__echo__echo', title: 'Call echo?', detail: '', mode: 'inline', about: 'mcp' });
    assert.equal(s.items.find((i) => i.kind === 'tool')?.kind === 'tool' && (s.items.find((i) => i.kind === 'tool') as { status: string }).status, 'waiting');
    s = reduce(s, { type: 'runFinished', canceled: true });
    const status = (id: string) => (s.items.find((i) => i.id === id) as { status: string } | undefined)?.status;
    assert.equal(status('a1'), 'pending');
    assert.equal(status('a2'), 'cancelled');
    s = reduce(s, { type: 'mcp', servers: [ready] });
    assert.deepEqual(s.mcp, [ready]);
    assert.equal(emptyState().mcp, null);
  });
  it('a modal project question reads Allow for this project, and answers the server\'s action', () => {
    const request = {
      type: 2,
      message: "This project's .mcp.json asks PseudoClaude to start the MCP server notes of this project: python notes.py",
      actions: [{ title: 'Allow once' }, { title: 'Allow for this session' }, { title: 'Deny' }],
    };
    const p = approvalPrompt(request);
    assert.equal(p.message, "PseudoClaude: this project's .mcp.json wants to start the MCP server notes");
    assert.match(p.detail ?? '', /^It runs: python notes\.py/);
    assert.deepEqual(p.buttons.map((b) => b.title), ['Allow once', ALLOW_PROJECT, 'Deny']);
    assert.deepEqual(approvalAnswer(request, ALLOW_PROJECT), { title: 'Allow for this session' });
    assert.deepEqual(approvalAnswer(request, 'Allow once'), { title: 'Allow once' });
  });
});

describe('/mcp and the MCP button', () => {
  it('/mcp runs in the chat (when the server lists it); the button posts mcp', () => {
    assert.ok((RUNNABLE as readonly string[]).includes('mcp'));
    assert.deepEqual(parseSlash('/mcp', [{ name: 'mcp', description: 'MCP servers', hint: '' }]), { name: 'mcp', argument: '' });
    assert.equal(parseSlash('/mcp', [{ name: 'compact', description: '', hint: '' }]), undefined);
    assert.equal(isFromWebview({ type: 'mcp' }), true);
  });
});
