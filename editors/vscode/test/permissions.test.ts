/**
 * Permission modes and rules in the extension: the modes and their meanings, Shift+Tab, the
 * mode picker's HTML and state, the approval cards' "Always allow" and Deny message, the modal
 * fallback's "Always allow <rule>", the webview messages, and Show Permissions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alwaysRule, alwaysRuleOf, approvalAnswer, approvalPrompt } from '../src/approvals';
import { inlineApprovalCard, modalApprovalCard, modalStatus } from '../src/chat/host';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, reduce, type ChatAction, type ChatItem, type ChatState } from '../src/chat/model';
import { promptKey } from '../src/chat/prompt';
import { renderItem, renderModeButton, renderModeMenu } from '../src/chat/render';
import { Controller } from '../src/controller';
import {
  MODE_MEANINGS,
  MODES,
  isMode,
  nextMode,
  offeredModes,
  permissionsReport,
  sandboxText,
  sourceText,
} from '../src/permissions';
import type { ApproveParams, PermissionsResult } from '../src/protocol';
import { Transcript } from '../src/transcript';
import { FakeAgent, FakeUi, StringSink } from './fakes';

const WS = 'file:///work/app';
const folder = { uri: WS, name: 'app' };

const LISTING: PermissionsResult = {
  mode: 'acceptEdits',
  modes: ['strict', 'default', 'acceptEdits', 'plan'],
  rules: [
    { rule: 'Bash(npm run test:*)', decision: 'allow', source: 'local' },
    { rule: 'Read(**/.env)', decision: 'deny', source: 'project' },
    { rule: 'Bash(git push:*)', decision: 'ask', source: 'user' },
    { rule: 'Edit(src/**)', decision: 'allow', source: 'settings' },
  ],
  problems: ['rule "Bsh(ls)" in .PseudoClaude/permissions.yaml: unknown tool "Bsh"'],
  sandbox: { enabled: false, reason: 'bubblewrap is not installed' },
  waiting: ['.PseudoClaude/permissions.yaml'],
};

function run(actions: ChatAction[], state: ChatState = emptyState(folder, [folder])): ChatState {
  return actions.reduce(reduce, state);
}

describe('permission modes', () => {
  it('lists the five modes in order, each with its one-line meaning', () => {
    assert.deepEqual(MODES, ['strict', 'default', 'acceptEdits', 'plan', 'bypassPermissions']);
    assert.equal(MODE_MEANINGS.strict, 'every tool asks first');
    assert.equal(MODE_MEANINGS.default, 'edits and commands follow your approval settings');
    assert.equal(MODE_MEANINGS.acceptEdits, 'edits run without asking; commands still ask');
    assert.equal(MODE_MEANINGS.plan, 'only reading tools run until you approve a plan');
    assert.equal(MODE_MEANINGS.bypassPermissions, 'nothing asks; deny rules still hold');
    assert.ok(isMode('plan'));
    assert.ok(!isMode('yolo'));
    assert.ok(!isMode(undefined));
  });

  it('offers the server\'s modes in the picker\'s order; none known: all but bypassPermissions', () => {
    assert.deepEqual(offeredModes(['plan', 'default', 'nonsense', 'strict']), ['strict', 'default', 'plan']);
    assert.deepEqual(offeredModes(null), ['strict', 'default', 'acceptEdits', 'plan']);
    assert.deepEqual(offeredModes([]), []);
  });

  it('Shift+Tab goes to the next mode offered, wrapping around', () => {
    const offered = offeredModes(['strict', 'default', 'acceptEdits', 'plan']);
    assert.equal(nextMode(offered, 'default'), 'acceptEdits');
    assert.equal(nextMode(offered, 'plan'), 'strict');
    assert.equal(nextMode(offered, 'bypassPermissions'), 'strict', 'a mode no longer offered: the first');
    assert.equal(nextMode(offered, null), 'strict');
    assert.equal(nextMode(['default'], 'default'), undefined, 'nothing else to go to');
    assert.equal(nextMode([], 'default'), undefined);
  });

  it('Shift+Tab in the prompt box cycles the mode; Tab alone and Ctrl+Shift+Tab do not', () => {
    assert.equal(promptKey({ key: 'Tab', shiftKey: true }, 'text', 2, 2), 'cycleMode');
    assert.equal(promptKey({ key: 'Tab', shiftKey: true }, 'text', 0, 4), 'cycleMode', 'with a selection too');
    assert.equal(promptKey({ key: 'Tab', shiftKey: false }, 'text', 2, 2), 'none');
    assert.equal(promptKey({ key: 'Tab', shiftKey: true, ctrlKey: true }, 'text', 2, 2), 'none');
    assert.equal(promptKey({ key: 'Tab', shiftKey: true, isComposing: true }, 'text', 2, 2), 'none');
  });

  it('says the sandbox in a few words', () => {
    assert.equal(sandboxText({ enabled: true }), 'on');
    assert.equal(sandboxText({ enabled: false, reason: 'sandbox.enabled is false' }), 'off (sandbox.enabled is false)');
    assert.equal(sandboxText({ enabled: false }), 'off');
    assert.equal(sandboxText(null), 'unknown');
  });
});

describe('the mode picker', () => {
  it('its button shows the mode, with what it means as the tooltip; hidden without a mode', () => {
    const b = renderModeButton({ mode: 'plan' });
    assert.match(b.html, /<span class="mode-label">Mode:<\/span><span class="mode-name">plan<\/span>/);
    assert.match(b.title, /only reading tools run until you approve a plan/);
    assert.match(b.title, /Shift\+Tab/);
    assert.equal(b.hidden, false);
    assert.equal(renderModeButton({ mode: null }).hidden, true);
  });

  it('its menu offers only the server\'s modes, each with its meaning, the current one checked', () => {
    const html = renderModeMenu({ mode: 'default', modes: ['strict', 'default', 'plan'], sandbox: { enabled: true } }, 1);
    const names = [...html.matchAll(/data-mode="(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(names, ['strict', 'default', 'plan']);
    assert.match(html, /role="menuitemradio" aria-checked="true" tabindex="0" class="mode-item mode-default checked active"/);
    assert.match(html, /aria-checked="false" tabindex="-1" class="mode-item mode-strict"/);
    assert.match(html, /<span class="mode-item-meaning">every tool asks first<\/span>/);
    assert.match(html, /Sandbox for commands: on/);
    assert.match(html, /bypassPermissions: turn on <code>permissions.allowBypass<\/code>/);
    assert.doesNotMatch(html, /data-mode="bypassPermissions"/);
    const all = renderModeMenu({ mode: 'bypassPermissions', modes: [...MODES], sandbox: null });
    assert.match(all, /data-mode="bypassPermissions"/);
    assert.doesNotMatch(all, /allowBypass/, 'no hint when it is offered');
    assert.doesNotMatch(all, /Sandbox/, 'nothing said of a sandbox not known');
  });

  it('follows the host\'s mode action and the session\'s mode events', () => {
    let s = run([{ type: 'mode', mode: 'default', modes: ['strict', 'default'], sandbox: { enabled: true } }]);
    assert.deepEqual([s.mode, s.modes, s.sandbox], ['default', ['strict', 'default'], { enabled: true }]);
    s = reduce(s, { type: 'mode', error: 'Cannot switch to bypassPermissions: not allowed' });
    assert.deepEqual([s.mode, s.modeError], ['default', 'Cannot switch to bypassPermissions: not allowed'], 'fields left out stay');
    s = reduce(s, { type: 'event', event: { workspace: WS, sessionId: 's1', kind: 'mode', mode: 'plan' } });
    assert.deepEqual([s.mode, s.modeError], ['plan', null], 'a mode event changes the mode and clears the error');
    assert.equal(reduce(s, { type: 'event', event: { workspace: WS, sessionId: 's1', kind: 'mode', mode: 'odd' } }).mode, 'plan');
    assert.equal(emptyState().mode, null);
    assert.equal(emptyState().modes, null);
  });
});

describe('approvals: Always allow and the denial\'s message', () => {
  const command: ApproveParams = {
    workspace: WS, sessionId: 's1', tool: 'run_command', arguments: { command: 'npm run test --watch' }, kind: 'runCommand',
    command: 'npm run test --watch', cwd: '/work/app', rule: 'Bash(npm run test:*)', reason: 'default mode asks before commands',
  };

  it('the card of a call has the rule and why it is asked; a folder\'s question never does', () => {
    const card = inlineApprovalCard(command);
    assert.deepEqual([card.title, card.rule, card.reason], ['Allow run_command to run a command?', 'Bash(npm run test:*)', 'default mode asks before commands']);
    const none = inlineApprovalCard({ ...command, rule: undefined, reason: undefined });
    assert.ok(!('rule' in none) && !('reason' in none));
    const server = inlineApprovalCard({ workspace: WS, sessionId: '', tool: 'x', arguments: {}, kind: 'mcpServer', server: 'x', command: 'x', rule: 'mcp__x' });
    assert.equal(server.rule, undefined);
  });

  it('cards for the new kinds: a read, a plan, anything else by its arguments (not "run a command")', () => {
    const read = inlineApprovalCard({ workspace: WS, sessionId: 's1', tool: 'read_file', arguments: { path: '.env' }, kind: 'read', rule: 'Read(.env)' });
    assert.deepEqual([read.title, read.rule], ['Allow read_file to read .env?', 'Read(.env)']);
    const plan = inlineApprovalCard({ workspace: WS, sessionId: 's1', tool: 'exit_plan_mode', arguments: { plan: '1. Parse\n2. Test' }, kind: 'plan' });
    assert.deepEqual([plan.title, plan.detail], ['Approve this plan and start working?', '1. Parse\n2. Test']);
    const search = inlineApprovalCard({ workspace: WS, sessionId: 's1', tool: 'search_code', arguments: { query: 'TODO' }, kind: 'read' });
    assert.equal(search.title, 'Allow search_code?');
    assert.match(search.args ?? '', /"query": "TODO"/);
    const hook = inlineApprovalCard({ workspace: WS, sessionId: 's1', tool: '.PseudoClaude/hooks.yaml', arguments: {}, kind: 'hooks', path: '.PseudoClaude/hooks.yaml', hooks: [{ name: 'lint', event: 'Stop', action: 'shell: make lint' }] });
    assert.deepEqual([hook.title, hook.detail, hook.about], ["This folder's .PseudoClaude/hooks.yaml has hooks that would run", 'lint (Stop): shell: make lint', 'hooks']);
  });

  it('renders Always allow with its rule (only with one), the reason, and Deny with its message field', () => {
    const item: ChatItem = {
      kind: 'approval', id: 'ap1', tool: 'run_command', title: 'Allow run_command to run a command?', detail: '$ npm run test',
      mode: 'inline', status: 'pending', rule: 'Bash(npm run <test>:*)', reason: 'default mode asks before commands',
    };
    const html = renderItem(item);
    assert.match(html, /data-decision="allowAlways" data-id="ap1"[^>]*>Always allow <code>Bash\(npm run &lt;test&gt;:\*\)<\/code><\/button>/);
    assert.match(html, /title="Adds Bash\(npm run &lt;test&gt;:\*\) to this folder&#39;s \.PseudoClaude\/permissions\.local\.yaml/);
    assert.match(html, /<div class="approval-reason">Why: default mode asks before commands<\/div>/);
    assert.match(html, /<div class="deny-row"><input type="text" class="deny-message" data-id="ap1" placeholder="Tell the agent why \(optional\)"/);
    assert.match(html, /data-decision="deny" data-id="ap1">Deny<\/button><\/div>/);
    for (const d of ['allowOnce', 'allowSession']) {
      assert.match(html, new RegExp(`data-decision="${d}" data-id="ap1"`));
    }
    const plain = renderItem({ ...item, rule: undefined, reason: undefined });
    assert.doesNotMatch(plain, /allowAlways|Always allow|approval-reason/);
    assert.match(plain, /class="deny-message"/);
    const server = renderItem({ ...item, about: 'mcpServer', server: 'x', rule: undefined });
    assert.doesNotMatch(server, /deny-message/, 'no message for a question outside a run');
    assert.match(server, />Allow for this project</);
    const modal = renderItem({ ...item, mode: 'modal' });
    assert.match(modal, /Waiting for your answer in the dialog: Allow once, Allow for this session, Always allow Bash\(npm run &lt;test&gt;:\*\) or Deny\./);
    assert.doesNotMatch(modal, /<button/);
  });

  it('the answered line names the rule added, or what the agent was told', () => {
    const base: ChatItem = { kind: 'approval', id: 'ap1', tool: 'run_command', title: 'Allow run_command to run a command?', detail: '', mode: 'inline', status: 'allowAlways', rule: 'Bash(make:*)' };
    const always = renderItem(base);
    assert.match(always, /approval-allowAlways/);
    assert.match(always, /<strong>Always allowed:<\/strong> <span>run_command to run a command<\/span> <span class="approval-added">· <code>Bash\(make:\*\)<\/code> added to \.PseudoClaude\/permissions\.local\.yaml<\/span>/);
    assert.match(always, />✓</);
    const denied = renderItem({ ...base, status: 'deny', message: 'use <make check>' });
    assert.match(denied, /<strong>Denied:<\/strong>.*told the agent: “use &lt;make check&gt;”/);
    assert.doesNotMatch(denied, /added to/);
  });

  it('the reducer keeps the rule and reason on the card, and the message with the answer', () => {
    let s = run([{ type: 'approval', id: 'ap1', tool: 'run_command', title: 't', detail: '', mode: 'inline', rule: 'Bash(ls:*)', reason: 'why' }]);
    const card = s.items[0];
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.rule, card.reason], ['Bash(ls:*)', 'why']);
    s = reduce(s, { type: 'approvalDone', id: 'ap1', status: 'deny', message: 'no' });
    const done = s.items[0];
    assert.ok(done?.kind === 'approval');
    assert.deepEqual([done.status, done.message], ['deny', 'no']);
  });

  it('takes allowAlways and a message from the webview; setMode only with a known mode', () => {
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'allowAlways' }));
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'deny', message: 'why' }));
    assert.ok(!isFromWebview({ type: 'approve', id: 'a', decision: 'deny', message: 3 }));
    assert.ok(isFromWebview({ type: 'setMode', mode: 'plan' }));
    assert.ok(!isFromWebview({ type: 'setMode', mode: 'yolo' }));
    assert.ok(!isFromWebview({ type: 'setMode' }));
  });
});

describe('the modal fallback: Always allow <rule>', () => {
  const request = {
    type: 2,
    message: "PseudoClaude wants to use run_command: npm run test\nAlways allow adds the rule Bash(npm run test:*) to this folder's .PseudoClaude/permissions.local.yaml",
    actions: [{ title: 'Allow once' }, { title: 'Allow for this session' }, { title: 'Always allow' }, { title: 'Deny' }],
  };

  it('finds the rule in the message\'s last line', () => {
    assert.equal(alwaysRule(request.message), 'Bash(npm run test:*)');
    assert.equal(alwaysRuleOf(request.message)?.message, 'PseudoClaude wants to use run_command: npm run test');
    assert.equal(alwaysRule('PseudoClaude wants to use run_command: ls'), undefined);
  });

  it('the dialog\'s button names the rule and answers "Always allow"', () => {
    const p = approvalPrompt(request);
    assert.deepEqual(p.buttons.map((b) => b.title), ['Allow once', 'Allow for this session', 'Always allow Bash(npm run test:*)', 'Deny']);
    assert.deepEqual(approvalAnswer(request, 'Always allow Bash(npm run test:*)'), { title: 'Always allow' });
    assert.deepEqual(approvalAnswer(request, 'Deny'), { title: 'Deny' });
    const bare = { ...request, message: 'PseudoClaude wants to use run_command: ls' };
    assert.equal(approvalPrompt(bare).buttons[2]?.title, 'Always allow', 'no rule named: the action as it is');
  });

  it('the chat\'s card of a dialog has the rule; its answer counts as allowAlways', () => {
    const card = modalApprovalCard(request.message);
    assert.deepEqual([card.tool, card.rule, card.detail], ['run_command', 'Bash(npm run test:*)', '']);
    assert.equal(card.title, 'Allow run_command: npm run test?');
    assert.equal(modalStatus('Always allow Bash(npm run test:*)'), 'allowAlways');
    assert.equal(modalStatus('Always allow'), 'allowAlways');
  });
});

describe('Show Permissions', () => {
  it('reports the mode, the modes offered, the sandbox, the rules by decision, problems and waiting files', () => {
    const text = permissionsReport(LISTING, 'app', 's1');
    assert.match(text, /^# Permissions of app\n/);
    assert.match(text, /- \*\*Mode:\*\* `acceptEdits` — edits run without asking; commands still ask \(session `s1`\)/);
    assert.match(text, /- \*\*Modes offered:\*\* `strict`, `default`, `acceptEdits`, `plan` \(bypassPermissions needs `permissions.allowBypass`/);
    assert.match(text, /- \*\*Sandbox:\*\* off \(bubblewrap is not installed\)/);
    const deny = text.indexOf('### Deny');
    const ask = text.indexOf('### Ask');
    const allow = text.indexOf('### Allow');
    assert.ok(deny > 0 && deny < ask && ask < allow, 'deny, then ask, then allow');
    assert.match(text, /- `Read\(\*\*\/\.env\)` — project: \.PseudoClaude\/permissions\.yaml/);
    assert.match(text, /- `Bash\(npm run test:\*\)` — local: \.PseudoClaude\/permissions\.local\.yaml/);
    assert.match(text, /- `Edit\(src\/\*\*\)` — settings: the permissions setting/);
    assert.match(text, /## Problems\n\n- rule "Bsh\(ls\)"/);
    assert.match(text, /## Waiting for your approval\n\n.*ignored until you approve them\.\n\n- `\.PseudoClaude\/permissions\.yaml`/);
    const empty = permissionsReport({ ...LISTING, rules: [], problems: [], waiting: [], modes: [...MODES], sandbox: { enabled: true } }, 'app');
    assert.match(empty, /No rules: the mode decides every call\./);
    assert.match(empty, /## Problems\n\nNone\./);
    assert.match(empty, /None: every permission file of this folder is in effect\./);
    assert.match(empty, /\*\*Sandbox:\*\* on/);
    assert.doesNotMatch(empty, /needs `permissions.allowBypass`/);
    assert.equal(sourceText('blacklist'), 'blacklist');
  });

  it('the command asks for the chat\'s session and opens the report', async () => {
    const agent = new FakeAgent({ 'pseudoclaude/permissions': LISTING });
    const ui = new FakeUi();
    const controller = new Controller(agent, ui, new Transcript(new StringSink()));
    controller.chatSession = () => 's7';
    await controller.showPermissions();
    assert.deepEqual(agent.calls[0]?.params, { sessionId: 's7', workspace: WS });
    assert.equal(ui.texts[0]?.language, 'markdown');
    assert.equal(ui.texts[0]?.title, 'Permissions of app', 'a read-only report, not an untitled file');
    assert.match(ui.texts[0]?.content ?? '', /# Permissions of app[\s\S]*session `s7`/);
    const failing = new Controller(new FakeAgent({}), ui, new Transcript(new StringSink()));
    await failing.showPermissions();
    assert.match(ui.errors()[0] ?? '', /^PseudoClaude: Show Permissions failed: Unhandled method pseudoclaude\/permissions/);
  });
});

describe('the mode picker\'s error line', () => {
  it('goes when a prompt is sent', () => {
    const s = run([{ type: 'mode', mode: 'default', error: 'Cannot switch to plan: busy' }]);
    assert.equal(s.modeError, 'Cannot switch to plan: busy');
    assert.equal(reduce(s, { type: 'runStarted' }).modeError, 'Cannot switch to plan: busy', 'not for a compaction');
    assert.equal(reduce(s, { type: 'runStarted', prompt: 'go on' }).modeError, null);
  });
});
