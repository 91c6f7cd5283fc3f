/** The Sessions and Memory views' nodes, the diff documents, and the manifest of the views. */
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { DiffStore, diffIdOf, diffUris, pathOf } from '../src/chat/diffs';
import { memoryNodes, sessionNodes, TREE_COMMANDS } from '../src/chat/trees';
import type { DiffRequest } from '../src/chat/host';
import { ACCEPT, REJECT, reviewProposal, serverProposals } from '../src/chat/proposals';
import { COMMANDS } from '../src/commands';
import { FakeAgent, rpcError } from './fakes';

const root = join(__dirname, '..', '..');
const NOW = new Date('2025-06-10T12:00:00Z');

describe('Sessions view', () => {
  it('lists the sessions; the active one is marked, the others resume on click in their folder', () => {
    const nodes = sessionNodes(
      [
        { id: 's2', title: 'Fix the parser', createdAt: '', updatedAt: '2025-06-10T11:00:00Z', messageCount: 12, bytes: 4096, model: 'm', active: true },
        { id: 's1', title: '', createdAt: '', updatedAt: '2025-06-08T12:00:00Z', messageCount: 0, bytes: 10, model: '', active: false },
      ],
      NOW,
      'file:///w',
    );
    assert.deepEqual(nodes.map((n) => [n.label, n.description, n.icon]), [
      ['Fix the parser', 'active · 1 h ago · 12 messages', 'circle-filled'],
      ['New session', '2 days ago · 0 messages', 'history'],
    ]);
    assert.equal(nodes[0]?.command, undefined);
    assert.deepEqual(nodes[1]?.command, { id: TREE_COMMANDS.resume, title: 'Resume Session', args: ['s1', 'file:///w'] });
    assert.equal(TREE_COMMANDS.resume, COMMANDS.resumeSession.id);
  });
});

describe('Memory view', () => {
  const shown = {
    index: '', truncated: false,
    health: { lines: 1, bytes: 1, maxLines: 200, maxBytes: 25_000 },
    stores: [
      { level: 'project' as const, dir: '/w/.PseudoClaude/memory', indexUri: 'file:///w/.PseudoClaude/memory/MEMORY.md', notes: [
        { filename: 'tests.md', uri: 'file:///w/.PseudoClaude/memory/tests.md', type: 'project_knowledge', title: 'Run the tests', summary: 'make test' },
      ] },
      { level: 'user' as const, dir: '/home/u/.PseudoClaude/memory', indexUri: 'file:///home/u/.PseudoClaude/memory/MEMORY.md', notes: [] },
    ],
  };
  it('groups the notes per level; each opens its file', () => {
    const nodes = memoryNodes(shown, undefined, NOW);
    assert.deepEqual(nodes.map((n) => [n.label, n.description]), [['Project memory', '1 note'], ['User memory', 'no notes yet']]);
    const project = nodes[0]?.children ?? [];
    assert.deepEqual(project.map((n) => [n.label, n.command?.id, n.command?.args]), [
      ['MEMORY.md', 'vscode.open', ['file:///w/.PseudoClaude/memory/MEMORY.md']],
      ['Run the tests', 'vscode.open', ['file:///w/.PseudoClaude/memory/tests.md']],
    ]);
  });
  it('shows pending proposals first when the source has some', () => {
    const nodes = memoryNodes(shown, [
      { id: 'p1', action: 'create', level: 'project', title: 'Use pnpm', filename: 'pnpm.md', summary: 'pnpm, not npm', createdAt: '2025-06-10T11:59:00Z' },
    ], NOW);
    assert.equal(nodes[0]?.label, 'Pending proposals');
    assert.deepEqual(nodes[0]?.children?.map((n) => [n.label, n.description, n.command?.args]), [['Use pnpm', 'create · project · 1 min ago', ['p1']]]);
    assert.equal(memoryNodes(shown, [], NOW)[0]?.label, 'Project memory');
  });
});

describe('diff documents', () => {
  it('names both sides after the file, in a virtual scheme, per approval', () => {
    const sides = diffUris('ap3', 'src/my file.ts', 'edit_file');
    assert.equal(sides.before, 'pseudoclaude-diff:/ap3/before/src/my%20file.ts');
    assert.equal(sides.after, 'pseudoclaude-diff:/ap3/after/src/my%20file.ts');
    assert.equal(sides.title, 'src/my file.ts (edit_file: proposed change) — PseudoClaude');
    assert.equal(diffUris('a', '../../etc/passwd', 'w').after, 'pseudoclaude-diff:/a/after/etc/passwd');
  });
  it('serves the texts from memory until the approval is answered', () => {
    const store = new DiffStore();
    const sides = store.add('ap1', 'a b.txt', 'write_file', 'old\n', 'new\n');
    assert.equal(store.text(pathOf(sides.before)), 'old\n');
    assert.equal(store.text('/ap1/after/a b.txt'), 'new\n');
    assert.equal(diffIdOf('/ap1/after/a b.txt'), 'ap1');
    store.remove('ap1');
    assert.equal(store.text('/ap1/after/a b.txt'), undefined);
  });
});

describe('package.json: the PseudoClaude views', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    activationEvents: string[];
    contributes: {
      viewsContainers: { activitybar: { id: string; title: string; icon: string }[] };
      views: Record<string, { id: string; type?: string; name: string }[]>;
      menus: Record<string, { command: string }[]>;
      commands: { command: string }[];
    };
    scripts: Record<string, string>;
    devDependencies: Record<string, string>;
    dependencies: Record<string, string>;
  };
  it('has the activity bar container with a shipped icon, the chat webview and the two trees', () => {
    const container = manifest.contributes.viewsContainers.activitybar.find((c) => c.id === 'pseudoclaude');
    assert.deepEqual(container && [container.title, container.icon], ['PseudoClaude', 'media/pseudoclaude.svg']);
    assert.ok(existsSync(join(root, 'media', 'pseudoclaude.svg')));
    assert.ok(existsSync(join(root, 'media', 'chat.css')));
    assert.deepEqual(manifest.contributes.views.pseudoclaude?.map((v) => [v.id, v.type ?? 'tree']), [
      ['pseudoclaude.chat', 'webview'], ['pseudoclaude.sessions', 'tree'], ['pseudoclaude.memory', 'tree'],
    ]);
    for (const view of ['pseudoclaude.chat', 'pseudoclaude.sessions', 'pseudoclaude.memory']) {
      assert.ok(manifest.activationEvents.includes(`onView:${view}`), view);
    }
  });
  it('menus use contributed commands only', () => {
    const known = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const entries of Object.values(manifest.contributes.menus)) {
      for (const e of entries) {
        assert.ok(known.has(e.command), e.command);
      }
    }
  });
  it('bundles the webview script at compile time; the libraries are not shipped as dependencies', () => {
    assert.match(manifest.scripts.compile ?? '', /npm run bundle/);
    assert.match(manifest.scripts.bundle ?? '', /^esbuild src\/webview\/main.ts --bundle .*--outfile=out\/webview\/chat.js$/);
    assert.match(manifest.scripts.test ?? '', /^npm run compile && node --test/);
    assert.ok(manifest.devDependencies['markdown-it'] && manifest.devDependencies.esbuild);
    assert.deepEqual(Object.keys(manifest.dependencies), ['vscode-languageclient']);
    const bundle = readFileSync(join(root, 'out', 'webview', 'chat.js'), 'utf8');
    assert.ok(bundle.length > 10_000);
    assert.doesNotMatch(bundle, /\brequire\(|import\s*\(/, 'one self-contained script');
  });
});

describe('the extension host', () => {
  it('loads only vscode, the language client and Node (markdown-it lives in the webview bundle)', () => {
    const allowed = new Set(['vscode', 'vscode-languageclient/node', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const seen = new Set<string>();
    const outside = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) {
        return;
      }
      seen.add(file);
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
        if (!spec) {
          continue;
        }
        if (spec.startsWith('.')) {
          visit(resolve(dirname(file), spec.endsWith('.js') ? spec : `${spec}.js`));
        } else if (!allowed.has(spec)) {
          outside.add(`${spec} (from ${file})`);
        }
      }
    };
    visit(join(root, 'out', 'src', 'extension.js'));
    assert.ok(seen.size > 15, 'the walk followed the requires');
    assert.ok([...seen].some((f) => f.endsWith(join('chat', 'host.js'))));
    assert.deepEqual([...outside], []);
  });
});

describe('memory proposals', () => {
  const PROPOSAL = {
    id: 'p1', createdAt: '2025-06-10T11:00:00Z', sessionId: 's1', action: 'update', level: 'project' as const,
    type: 'project_knowledge', title: 'Tests', summary: 'make test runs everything', filename: 'tests.md',
    before: '---\ntitle: Tests\n---\nmake\n', after: '---\ntitle: Tests\n---\nmake test\n',
  };
  const env = () => {
    const calls = { diffs: [] as DiffRequest[], closed: [] as string[], infos: [] as string[], errors: [] as string[], asked: [] as string[] };
    let answer: string | undefined;
    return {
      calls,
      answer: (a: string | undefined) => { answer = a; },
      env: {
        showDiff: async (d: DiffRequest) => { calls.diffs.push(d); },
        closeDiff: (id: string) => { calls.closed.push(id); },
        choose: async (m: string) => { calls.asked.push(m); return answer; },
        info: (m: string) => { calls.infos.push(m); },
        error: (m: string) => { calls.errors.push(m); },
      },
    };
  };

  it('lists the server\'s pending proposals; an older server has none', async () => {
    const agent = new FakeAgent({ 'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] } });
    assert.deepEqual(await serverProposals(agent, () => undefined).list('file:///w'), [
      { id: 'p1', action: 'update', level: 'project', title: 'Tests', filename: 'tests.md', summary: 'make test runs everything', createdAt: '2025-06-10T11:00:00Z' },
    ]);
    const logs: string[] = [];
    assert.equal(await serverProposals(new FakeAgent(), (m) => logs.push(m)).list('file:///w'), undefined);
    assert.equal(logs.length, 1);
  });

  it('reviews a proposal: the whole note before/after as a diff, then accept', async () => {
    const agent = new FakeAgent({
      'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] },
      'pseudoclaude/memory/review': { applied: true, filename: 'tests.md' },
    });
    const e = env();
    e.answer(ACCEPT);
    assert.equal(await reviewProposal(agent, e.env, 'file:///w', 'p1'), true);
    assert.deepEqual(e.calls.diffs.map((d) => [d.id, d.path, d.before, d.after]), [['memory-p1', 'project/tests.md', PROPOSAL.before, PROPOSAL.after]]);
    assert.deepEqual(e.calls.closed, ['memory-p1']);
    assert.deepEqual(e.calls.asked, ['PseudoClaude proposes to update tests.md (project memory): make test runs everything']);
    assert.deepEqual(agent.calls.find((c) => c.method === 'pseudoclaude/memory/review')?.params, { workspace: 'file:///w', id: 'p1', decision: 'accept' });
    assert.deepEqual(e.calls.infos, ['PseudoClaude: accepted: tests.md (project memory).']);
  });

  it('rejects, or leaves it for later when dismissed; a stale one says why', async () => {
    const rejecting = new FakeAgent({ 'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] }, 'pseudoclaude/memory/review': { applied: false } });
    const e = env();
    e.answer(REJECT);
    await reviewProposal(rejecting, e.env, 'file:///w', 'p1');
    assert.equal(rejecting.calls.find((c) => c.method === 'pseudoclaude/memory/review')?.params && (rejecting.calls.find((c) => c.method === 'pseudoclaude/memory/review')?.params as { decision: string }).decision, 'reject');
    const later = new FakeAgent({ 'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] } });
    const l = env();
    assert.equal(await reviewProposal(later, l.env, 'file:///w', 'p1'), false);
    assert.ok(!later.methods().includes('pseudoclaude/memory/review'));
    const stale = new FakeAgent({
      'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] },
      'pseudoclaude/memory/review': () => { throw rpcError(-32803, 'the note changed since the proposal'); },
    });
    const s = env();
    s.answer(ACCEPT);
    await reviewProposal(stale, s.env, 'file:///w', 'p1');
    assert.deepEqual(s.calls.errors, ['PseudoClaude: Review failed: the note changed since the proposal']);
  });
});
