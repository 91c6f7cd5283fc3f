/** The package.json manifest against the command table, SPEC §7/§8b and the source layout. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../src/commands';
import { commandName, Commands, Notifications, Requests } from '../src/protocol';
import { CLIENT_SETTING_KEYS, DEFAULT_SERVER_COMMAND, SERVER_SETTING_KEYS } from '../src/settings';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
  contributes: {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, { default?: unknown; type?: unknown; enum?: unknown[] }> };
  };
};

describe('package.json', () => {
  it('contributes exactly the commands the extension registers', () => {
    assert.deepEqual(
      manifest.contributes.commands.map((c) => [c.command, c.title]),
      Object.values(COMMANDS).map((c) => [c.id, c.title]),
    );
  });
  it('has the command titles of SPEC §8b', () => {
    const titles = manifest.contributes.commands.map((c) => c.title);
    for (const t of [
      'PseudoClaude: Ask', 'PseudoClaude: Compact Context', 'PseudoClaude: Show Memory',
      'PseudoClaude: Remember...', 'PseudoClaude: Open MEMORY.md', 'PseudoClaude: Resume Session',
      'PseudoClaude: New Session', 'PseudoClaude: Cancel Run', 'PseudoClaude: Undo Compaction',
    ]) {
      assert.ok(titles.includes(t), t);
    }
  });
  it("offers Show Hooks and Show Skills in the chat's menu", () => {
    const menus = (manifest.contributes as unknown as { menus: Record<string, { command: string; when: string; group?: string }[]> }).menus;
    const chat = menus['view/title']?.filter((m) => m.when === 'view == pseudoclaude.chat').map((m) => m.command) ?? [];
    assert.ok(chat.includes(COMMANDS.showHooks.id) && chat.includes(COMMANDS.showSkills.id), chat.join(', '));
  });
  it('never clashes with the server commands the language client registers', () => {
    const server = new Set(Commands);
    assert.ok(server.has('pseudoclaude.memory.show'));
    for (const c of manifest.contributes.commands) {
      assert.ok(!server.has(c.command), c.command);
    }
  });
  it('contributes every SPEC §7 setting under pseudoclaude.*, plus the server command', () => {
    const keys = Object.keys(manifest.contributes.configuration.properties).sort();
    const expected = [...SERVER_SETTING_KEYS, ...CLIENT_SETTING_KEYS].map((k) => `pseudoclaude.${k}`).sort();
    assert.deepEqual(keys, expected);
    const props = manifest.contributes.configuration.properties;
    assert.deepEqual(props['pseudoclaude.server.command']?.default, [...DEFAULT_SERVER_COMMAND]);
    assert.deepEqual(props['pseudoclaude.approvals.runCommand']?.enum, ['allow', 'ask', 'deny']);
    assert.equal(props['pseudoclaude.approvals.runCommand']?.default, 'ask');
    assert.equal(props['pseudoclaude.approvals.write']?.default, 'allow');
    assert.equal(props['pseudoclaude.session.retentionDays']?.default, 30);
    assert.equal(props['pseudoclaude.compact.safetyMarginTokens']?.default, 13000);
  });
  it('packages the server wheel (bundled/) and defaults to the managed install', () => {
    const scripts = (manifest as unknown as { scripts: Record<string, string> }).scripts;
    assert.match(scripts.package ?? '', /npm run bundle-server && vsce package/);
    assert.equal(scripts['bundle-server'], 'node scripts/bundle-server.mjs');
    const ignored = readFileSync(join(root, '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim());
    assert.ok(!ignored.some((l) => l.startsWith('bundled') || l === '**/*.whl'), 'bundled/ must go into the .vsix');
    assert.ok(ignored.includes('scripts/**'));
    const strategy = manifest.contributes.configuration.properties['pseudoclaude.server.installStrategy'];
    assert.deepEqual(strategy?.enum, ['managed', 'environment']);
    assert.equal(strategy?.default, 'managed');
  });
  it('targets VS Code >= 1.91 (vscode-languageclient 11) with matching types', () => {
    assert.match(manifest.engines.vscode, /^\^1\.(9[1-9]|[1-9]\d\d)\./);
    assert.equal(manifest.dependencies['vscode-languageclient'], '11.0.0');
    const types = manifest.devDependencies['@types/vscode'] ?? '';
    assert.ok(types.replace(/^[\^~]/, '') <= manifest.engines.vscode.replace(/^[\^~]/, ''), 'types newer than engines');
    assert.equal(manifest.main, './out/src/extension.js');
  });
});

describe('protocol names', () => {
  it('match SPEC §8', () => {
    assert.deepEqual(Object.values(Requests).sort(), [
      'pseudoclaude/agents/list', 'pseudoclaude/agents/stop', 'pseudoclaude/commands', 'pseudoclaude/compact', 'pseudoclaude/compact/preview', 'pseudoclaude/compact/undo',
      'pseudoclaude/context', 'pseudoclaude/hooks/list', 'pseudoclaude/hooks/review', 'pseudoclaude/mcp/approve', 'pseudoclaude/mcp/list', 'pseudoclaude/mcp/restart', 'pseudoclaude/memory/forget', 'pseudoclaude/memory/proposals',
      'pseudoclaude/memory/remember', 'pseudoclaude/memory/review', 'pseudoclaude/memory/show',
      'pseudoclaude/mode', 'pseudoclaude/permissions', 'pseudoclaude/permissions/check',
      'pseudoclaude/rewind', 'pseudoclaude/rewind/file', 'pseudoclaude/rewind/preview', 'pseudoclaude/run',
      'pseudoclaude/sessions/fork', 'pseudoclaude/sessions/list', 'pseudoclaude/sessions/messages',
      'pseudoclaude/sessions/new', 'pseudoclaude/sessions/resume', 'pseudoclaude/sessions/turns', 'pseudoclaude/skills/list',
      'pseudoclaude/status',
      'pseudoclaude/tasks',
      'pseudoclaude/worktree/apply', 'pseudoclaude/worktree/remove', 'pseudoclaude/worktree/status',
    ]);
    assert.deepEqual(Object.values(Notifications).sort(), [
      'pseudoclaude/contextUsage', 'pseudoclaude/event', 'pseudoclaude/mcpChanged', 'pseudoclaude/memoryChanged',
      'pseudoclaude/memoryProposals',
    ]);
    assert.equal(commandName('pseudoclaude/sessions/resume'), 'pseudoclaude.sessions.resume');
    assert.deepEqual(Commands, Object.values(Requests).map(commandName));
  });
});

describe('source layout', () => {
  it('imports vscode only in the adapters', () => {
    const src = join(root, 'src');
    const adapters = new Set(['extension.ts', ...['client.ts', 'server.ts', 'ui.ts', 'chatView.ts', 'trees.ts', 'proposals.ts', 'mcp.ts', 'editor.ts'].map((f) => join('vscode', f))]);
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 10);
    for (const f of files) {
      const text = readFileSync(join(src, f), 'utf8');
      const usesVscode = /from '(vscode|vscode-languageclient[^']*)'/.test(text);
      assert.equal(usesVscode, adapters.has(f), `${f} ${usesVscode ? 'imports' : 'does not import'} vscode`);
    }
  });
});
