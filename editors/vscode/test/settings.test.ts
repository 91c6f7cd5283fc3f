import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  collectServerSettings,
  describeCommand,
  explicitValue,
  needsRestart,
  resolveServerCommand,
  SettingsError,
  substitute,
  type Inspected,
} from '../src/settings';

function inspector(values: Record<string, Inspected>) {
  return (key: string) => values[key];
}
const vars = { workspaceFolder: '/work/app', userHome: '/home/u' };

describe('collectServerSettings', () => {
  it('sends only what the user set, nested by dots', () => {
    const s = collectServerSettings(inspector({
      provider: { defaultValue: '', globalValue: 'anthropic' },
      baseUrl: { defaultValue: '', workspaceValue: 'http://127.0.0.1:9' },
      apiKey: { defaultValue: '', globalValue: 'sk-test' },
      maxIterations: { defaultValue: 15 },
      'approvals.runCommand': { defaultValue: 'ask', workspaceFolderValue: 'deny', globalValue: 'allow' },
      'approvals.write': { defaultValue: 'allow', globalValue: 'ask' },
      'compact.auto': { defaultValue: true, globalValue: false },
      model: { defaultValue: '', globalValue: '' },
      contextWindow: { defaultValue: null, globalValue: null },
    }));
    assert.deepEqual(s, {
      provider: 'anthropic',
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'sk-test',
      approvals: { runCommand: 'deny', write: 'ask' },
      compact: { auto: false },
    });
  });
  it('is empty when nothing is set', () => {
    assert.deepEqual(collectServerSettings(() => undefined), {});
  });
  it('prefers the folder value, then workspace, then user', () => {
    assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 }), 3);
    assert.equal(explicitValue({ globalValue: 1, workspaceValue: 2 }), 2);
    assert.equal(explicitValue({ globalValue: false }), false);
    assert.equal(explicitValue({ defaultValue: 'x' }), undefined);
  });
});

describe('resolveServerCommand', () => {
  it('defaults to pseudoclaude lsp', () => {
    const c = resolveServerCommand(() => undefined, vars);
    assert.deepEqual([c.command, ...c.args], ['pseudoclaude', 'lsp']);
    assert.equal(c.source, 'default');
  });
  it('uses <python> -m pseudoclaude lsp when a Python path is set', () => {
    const c = resolveServerCommand(inspector({ 'server.pythonPath': { globalValue: '~/venv/bin/python' } }), vars);
    assert.deepEqual([c.command, ...c.args], ['/home/u/venv/bin/python', '-m', 'pseudoclaude', 'lsp']);
    assert.equal(c.source, 'pseudoclaude.server.pythonPath');
  });
  it('an explicit command wins, with variables expanded', () => {
    const c = resolveServerCommand(inspector({
      'server.command': { defaultValue: ['pseudoclaude', 'lsp'], workspaceValue: ['${workspaceFolder}/.venv/bin/pseudoclaude', 'lsp'] },
      'server.pythonPath': { globalValue: '/usr/bin/python3' },
    }), vars);
    assert.deepEqual([c.command, ...c.args], ['/work/app/.venv/bin/pseudoclaude', 'lsp']);
    assert.equal(describeCommand(c), '/work/app/.venv/bin/pseudoclaude lsp');
  });
  it('rejects a malformed command with the setting named', () => {
    for (const bad of [[], 'pseudoclaude lsp', [1, 2], ['']]) {
      assert.throws(
        () => resolveServerCommand(inspector({ 'server.command': { globalValue: bad } }), vars),
        (e: unknown) => e instanceof SettingsError && /pseudoclaude\.server\.command/.test(e.message),
      );
    }
  });
  it('quotes words with spaces in messages', () => {
    assert.equal(describeCommand({ command: '/my env/python', args: ['-m', 'x'], source: 'default' }), '"/my env/python" -m x');
  });
  it('substitutes ${userHome} and leaves unknown variables', () => {
    assert.equal(substitute('${userHome}/x', vars), '/home/u/x');
    assert.equal(substitute('${foo}', vars), '${foo}');
    assert.equal(substitute('~', vars), '/home/u');
  });
});

describe('needsRestart', () => {
  it('restarts for the server keys only', () => {
    assert.ok(needsRestart((s) => s === 'pseudoclaude.server.pythonPath'));
    assert.ok(needsRestart((s) => s === 'pseudoclaude.server.command'));
    assert.ok(!needsRestart((s) => s === 'pseudoclaude.model'));
  });
});
