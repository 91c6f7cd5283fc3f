/** The Sessions and Memory views' nodes, the diff documents, and the manifest of the views. */
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import {
  DIFF_SCHEME,
  DiffStore,
  PROPOSAL_SCHEME,
  ProposalFiles,
  diffIdOf,
  diffUris,
  pathOf,
  proposalKeyOf,
  proposalOf,
  proposalTitle,
  proposalUris,
  type ProposalDiff,
} from '../src/chat/diffs';
import { memoryNodes, sessionNodes, TREE_COMMANDS } from '../src/chat/trees';
import {
  ACCEPT,
  REJECT,
  ProposalReviews,
  acceptContent,
  reviewMessage,
  serverProposals,
  staleMessage,
} from '../src/chat/proposals';
import { COMMANDS } from '../src/commands';
import { FakeAgent, rpcError } from './fakes';

const root = join(__dirname, '..', '..');
const NOW = new Date('2025-06-10T12:00:00Z');

describe('Sessions view', () => {
  it('lists the sessions; the active one is marked, the others resume on click in their folder', () => {
    const nodes = sessionNodes(
      [
        { id: 's2', title: 'Fix the parser', createdAt: '', updatedAt: '2025-06-10T11:00:00Z', messageCount: 12, bytes: 4096, model: 'm', active: true, running: false, worktree: null, answered: true },
        { id: 's1', title: '', createdAt: '', updatedAt: '2025-06-08T12:00:00Z', messageCount: 0, bytes: 10, model: '', active: false, running: false, worktree: null, answered: true },
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
      menus: Record<string, { command: string; when?: string; group?: string }[]>;
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
  it('gives edit approvals and memory proposals their own diff title buttons, each on its scheme only', () => {
    const title = manifest.contributes.menus['editor/title'] ?? [];
    const when = (command: string) => title.filter((e) => e.command === command).map((e) => e.when);
    assert.deepEqual(when(COMMANDS.allowChange.id), [`resourceScheme == ${DIFF_SCHEME}`]);
    assert.deepEqual(when(COMMANDS.denyChange.id), [`resourceScheme == ${DIFF_SCHEME}`]);
    assert.deepEqual(when(COMMANDS.acceptProposal.id), [`resourceScheme == ${PROPOSAL_SCHEME}`]);
    assert.deepEqual(when(COMMANDS.rejectProposal.id), [`resourceScheme == ${PROPOSAL_SCHEME}`]);
    assert.notEqual(DIFF_SCHEME, PROPOSAL_SCHEME);
    assert.deepEqual(
      title.filter((e) => e.when?.includes(PROPOSAL_SCHEME)).map((e) => [e.command, e.group]),
      [[COMMANDS.acceptProposal.id, 'navigation@1'], [COMMANDS.rejectProposal.id, 'navigation@2']],
    );
    const icons = Object.fromEntries(
      (manifest.contributes.commands as { command: string; icon?: string }[]).map((c) => [c.command, c.icon]),
    );
    assert.equal(icons[COMMANDS.acceptProposal.id], '$(check)');
    assert.equal(icons[COMMANDS.rejectProposal.id], '$(close)');
  });
  it('offers the code actions\' commands on a selection in the editor\'s context menu, not in the palette', () => {
    const ids = [COMMANDS.explainSelection.id, COMMANDS.fixSelection.id, COMMANDS.askAboutSelection.id];
    assert.deepEqual(ids, ['pseudoclaude.codeAction.explain', 'pseudoclaude.codeAction.fix', 'pseudoclaude.codeAction.ask']);
    const context = manifest.contributes.menus['editor/context'] ?? [];
    assert.deepEqual(context.map((e) => [e.command, e.when]), ids.map((id) => [id, 'editorHasSelection && resourceScheme == file']));
    const palette = manifest.contributes.menus.commandPalette ?? [];
    for (const id of ids) {
      assert.deepEqual(palette.filter((e) => e.command === id).map((e) => e.when), ['false'], id);
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

describe('memory proposal documents', () => {
  const P: ProposalDiff = { id: 'p1', level: 'project', filename: 'project_knowledge_tests.md', action: 'create', before: '', after: 'new\n' };
  it('have a short tab title: the file, its level and what happens', () => {
    assert.equal(proposalTitle(P), 'project_knowledge_tests.md (project memory: new note)');
    assert.equal(proposalTitle({ ...P, action: 'update', level: 'user' }), 'project_knowledge_tests.md (user memory: change)');
    assert.equal(proposalTitle({ ...P, action: 'delete' }), 'project_knowledge_tests.md (project memory: delete)');
  });
  it('live in their own scheme (not the edit approvals\'), named after the note and its level', () => {
    const sides = proposalUris({ ...P, filename: 'my note.md' });
    assert.equal(sides.before, 'pseudoclaude-proposal:/project%20memory/my%20note.md?proposal=p1&side=before');
    assert.equal(sides.after, 'pseudoclaude-proposal:/project%20memory/my%20note.md?proposal=p1&side=after');
    assert.equal(proposalKeyOf(sides.after), '/project memory/my note.md?proposal=p1&side=after');
    assert.deepEqual(proposalOf(proposalKeyOf(sides.after)), { id: 'p1', side: 'after' });
    assert.deepEqual(proposalOf('proposal=20261130-214633-383ae680&side=before'), { id: '20261130-214633-383ae680', side: 'before' });
    assert.equal(proposalOf('side=before'), undefined);
    assert.equal(proposalUris({ ...P, filename: '../../x.md' }).after, 'pseudoclaude-proposal:/project%20memory/x.md?proposal=p1&side=after');
  });
  it('serve the left side read-only and keep saves of the right side in memory', () => {
    let now = 1000;
    const files = new ProposalFiles(() => now);
    const sides = files.add(P);
    const before = proposalKeyOf(sides.before);
    const after = proposalKeyOf(sides.after);
    assert.equal(files.get(before)?.text, '', 'a new note: the left side is empty');
    assert.equal(files.get(before)?.readonly, true);
    assert.equal(files.get(after)?.readonly, false);
    assert.equal(files.write(before, 'x'), 'readonly');
    const mtime = files.get(after)?.mtime ?? 0;
    assert.equal(files.write(after, 'edited\n'), undefined);
    assert.equal(files.get(after)?.text, 'edited\n');
    assert.ok((files.get(after)?.mtime ?? 0) > mtime, 'a save changes the mtime (same clock)');
    now = 5000;
    files.add(P);
    assert.equal(files.get(after)?.text, 'edited\n', 'reviewed again: the saved edit is still there');
    assert.equal(files.afterKey('p1'), after);
    assert.deepEqual(files.remove('p1').sort(), [after, before].sort());
    assert.equal(files.has('p1'), false);
    assert.equal(files.write(after, 'late'), 'missing');
  });
  it('make the right side of a delete read-only too', () => {
    const files = new ProposalFiles();
    const sides = files.add({ ...P, action: 'delete', before: 'old\n', after: '' });
    assert.equal(files.get(proposalKeyOf(sides.after))?.readonly, true);
  });
});

describe('memory proposals', () => {
  const PROPOSAL = {
    id: 'p1', createdAt: '2025-06-10T11:00:00Z', sessionId: 's1', action: 'update' as const, level: 'project' as const,
    type: 'project_knowledge', title: 'Tests', summary: 'make test runs everything', filename: 'tests.md',
    before: '---\ntitle: Tests\n---\nmake\n', after: '---\ntitle: Tests\n---\nmake test\n',
  };
  const tick = () => new Promise((r) => setImmediate(r));
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 100 && !cond(); i++) {
      await tick();
    }
    assert.ok(cond(), 'timed out');
  };
  /** A ReviewEnv recording the calls; the notification answers `answer` (undefined: stays up). */
  const env = () => {
    const calls = {
      diffs: [] as ProposalDiff[], closed: [] as [string, boolean][], infos: [] as string[], errors: [] as string[],
      asked: [] as string[],
    };
    const state = { answer: undefined as string | undefined, right: undefined as string | undefined, errorAnswer: undefined as string | undefined };
    return {
      calls,
      state,
      env: {
        showDiff: async (d: ProposalDiff) => {
          calls.diffs.push(d);
          state.right ??= d.after;
        },
        closeDiff: async (id: string, forget: boolean) => { calls.closed.push([id, forget]); },
        rightText: () => state.right,
        choose: (m: string) => {
          calls.asked.push(m);
          return state.answer === undefined ? new Promise<undefined>(() => undefined) : Promise.resolve(state.answer);
        },
        info: (m: string) => { calls.infos.push(m); },
        error: async (m: string) => { calls.errors.push(m); return state.errorAnswer; },
      },
    };
  };
  const agentWith = (review: unknown) =>
    new FakeAgent({ 'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] }, 'pseudoclaude/memory/review': review });
  const reviewParams = (agent: FakeAgent) =>
    agent.calls.filter((c) => c.method === 'pseudoclaude/memory/review').map((c) => c.params);

  it('lists the server\'s pending proposals; an older server has none', async () => {
    const agent = new FakeAgent({ 'pseudoclaude/memory/proposals': { proposals: [PROPOSAL] } });
    assert.deepEqual(await serverProposals(agent, () => undefined).list('file:///w'), [
      { id: 'p1', action: 'update', level: 'project', title: 'Tests', filename: 'tests.md', summary: 'make test runs everything', createdAt: '2025-06-10T11:00:00Z' },
    ]);
    const logs: string[] = [];
    assert.equal(await serverProposals(new FakeAgent(), (m) => logs.push(m)).list('file:///w'), undefined);
    assert.equal(logs.length, 1);
  });

  it('says what is proposed and that the right side can be edited (not for a delete)', () => {
    assert.equal(
      reviewMessage(PROPOSAL),
      'PseudoClaude proposes to update tests.md (project memory): make test runs everything. You can edit the right side before you accept.',
    );
    assert.equal(reviewMessage({ ...PROPOSAL, action: 'delete', summary: '' }), 'PseudoClaude proposes to delete tests.md (project memory).');
    assert.match(staleMessage(PROPOSAL), /project\/tests\.md changed since this proposal was made .*Nothing was written; the proposal stays/);
  });

  it('sends the right side as content only when it differs from the proposal (never for a delete)', () => {
    assert.equal(acceptContent(PROPOSAL, PROPOSAL.after), undefined);
    assert.equal(acceptContent(PROPOSAL, PROPOSAL.after.replace(/\n/g, '\r\n')), undefined, 'line ends do not count');
    assert.equal(acceptContent(PROPOSAL, undefined), undefined);
    assert.equal(acceptContent(PROPOSAL, 'body only\r\n'), 'body only\n');
    assert.equal(acceptContent({ ...PROPOSAL, action: 'delete', after: '' }, 'x'), undefined);
  });

  it('accepts from the notification: the whole note before/after as a diff, no content when unedited', async () => {
    const agent = agentWith({ applied: true, filename: 'tests.md', message: 'Accepted: tests.md is written to project memory.' });
    const e = env();
    e.state.answer = ACCEPT;
    assert.equal(await new ProposalReviews(agent, e.env).review('file:///w', 'p1'), true);
    assert.deepEqual(e.calls.diffs.map((d) => [d.id, d.level, d.filename, d.action, d.before, d.after]), [
      ['p1', 'project', 'tests.md', 'update', PROPOSAL.before, PROPOSAL.after],
    ]);
    assert.deepEqual(e.calls.closed, [['p1', true]]);
    assert.deepEqual(e.calls.asked, [reviewMessage(PROPOSAL)]);
    assert.deepEqual(reviewParams(agent), [{ workspace: 'file:///w', id: 'p1', decision: 'accept' }]);
    assert.deepEqual(e.calls.infos, ['PseudoClaude: Accepted: tests.md is written to project memory.']);
  });

  it('accepts the edited right side from the title button', async () => {
    const agent = agentWith({ applied: true, filename: 'tests.md', message: 'Accepted: tests.md is written to project memory.' });
    const e = env();
    const reviews = new ProposalReviews(agent, e.env);
    const done = reviews.review('file:///w', 'p1');
    await tick();
    assert.ok(reviews.reviewing('p1'));
    e.state.right = `${PROPOSAL.after}Also: make lint.\n`;
    reviews.decide('p1', 'accept');
    assert.equal(await done, true);
    assert.deepEqual(reviewParams(agent), [
      { workspace: 'file:///w', id: 'p1', decision: 'accept', content: `${PROPOSAL.after}Also: make lint.\n` },
    ]);
    assert.deepEqual(e.calls.infos, ['PseudoClaude: Accepted: tests.md is written to project memory.']);
    assert.equal(reviews.reviewing('p1'), false);
    reviews.decide('p1', 'accept');
    assert.equal(e.calls.infos.at(-1), 'PseudoClaude: that proposal was already accepted.', 'a late click on the old notification');
    assert.equal(reviewParams(agent).length, 1);
  });

  it('rejects from the title button; closing the diff leaves the proposal for later', async () => {
    const agent = agentWith({ applied: false, message: 'Rejected the proposed change to tests.md (project memory is unchanged).' });
    const e = env();
    const reviews = new ProposalReviews(agent, e.env);
    const rejecting = reviews.review('file:///w', 'p1');
    await tick();
    reviews.decide('p1', 'reject');
    assert.equal(await rejecting, true);
    assert.deepEqual(reviewParams(agent), [{ workspace: 'file:///w', id: 'p1', decision: 'reject' }]);
    assert.deepEqual(e.calls.infos, ['PseudoClaude: Rejected the proposed change to tests.md (project memory is unchanged).']);

    const later = agentWith({ applied: true, message: 'Accepted: tests.md is written to project memory.' });
    const l = env();
    const laterReviews = new ProposalReviews(later, l.env);
    const closing = laterReviews.review('file:///w', 'p1');
    await tick();
    laterReviews.closed('p1');
    assert.equal(await closing, false);
    assert.deepEqual(reviewParams(later), []);
    assert.deepEqual(l.calls.closed, [['p1', false]], 'a saved edit stays for the next review');
  });

  it('a second click on the proposal brings its diff back instead of a second review', async () => {
    const agent = agentWith({ applied: true, message: 'Accepted: tests.md is written to project memory.' });
    const e = env();
    const reviews = new ProposalReviews(agent, e.env);
    const first = reviews.review('file:///w', 'p1');
    await tick();
    assert.equal(await reviews.review('file:///w', 'p1'), false);
    assert.equal(e.calls.diffs.length, 2);
    assert.equal(e.calls.asked.length, 1);
    reviews.closed('p1');
    assert.equal(await first, false);
  });

  it('a stale proposal is refused clearly, stays queued and its diff stays open (Reject still works)', async () => {
    let refuse = true;
    const agent = agentWith((params: { decision: string }) => {
      if (params.decision === 'accept' && refuse) {
        throw rpcError(-32803, 'proposal p1 is stale: project/tests.md changed since it was proposed (a hand edit or another accepted change); nothing was written');
      }
      return { applied: false, message: 'Rejected the proposed change to tests.md (project memory is unchanged).' };
    });
    const e = env();
    e.state.answer = ACCEPT;
    e.state.errorAnswer = REJECT;
    const reviews = new ProposalReviews(agent, e.env);
    assert.equal(await reviews.review('file:///w', 'p1'), true);
    assert.deepEqual(e.calls.errors, [staleMessage(PROPOSAL)]);
    assert.deepEqual(reviewParams(agent).map((p) => (p as { decision: string }).decision), ['accept', 'reject'], 'Reject on the error message');
    assert.deepEqual(e.calls.closed, [['p1', true]], 'the diff closed only after the reject');
    refuse = false;
  });

  it('an edited text the server cannot use keeps the diff open to fix it; an emptied one is not sent', async () => {
    let calls = 0;
    const agent = agentWith((params: { content?: string }) => {
      calls += 1;
      if (params.content?.includes('sk-')) {
        throw rpcError(-32602, 'refused: the text looks like it contains an API key; memory never stores secrets');
      }
      return { applied: true, filename: 'tests.md', message: 'Accepted: tests.md is written to project memory.' };
    });
    const e = env();
    const reviews = new ProposalReviews(agent, e.env);
    const done = reviews.review('file:///w', 'p1');
    await tick();
    e.state.right = '  \n';
    reviews.decide('p1', 'accept');
    await until(() => e.calls.errors.length === 1);
    assert.equal(calls, 0);
    assert.deepEqual(e.calls.errors, ['PseudoClaude: the right side is empty: write the note there, or reject the proposal.']);
    e.state.right = 'key sk-abc\n';
    reviews.decide('p1', 'accept');
    await until(() => e.calls.errors.length === 2);
    assert.equal(e.calls.errors.at(-1), 'PseudoClaude: Accept failed: refused: the text looks like it contains an API key; memory never stores secrets');
    assert.deepEqual(e.calls.closed, []);
    e.state.right = 'make test runs everything\n';
    reviews.decide('p1', 'accept');
    assert.equal(await done, true);
    assert.equal(e.calls.infos.at(-1), 'PseudoClaude: Accepted: tests.md is written to project memory.');
  });

  it('a proposal reviewed elsewhere meanwhile closes its diff', async () => {
    let listed = 0;
    const agent = new FakeAgent({
      'pseudoclaude/memory/proposals': () => ({ proposals: listed++ === 0 ? [PROPOSAL] : [] }),
      'pseudoclaude/memory/review': () => { throw rpcError(-32602, 'unknown proposal p1'); },
    });
    const e = env();
    e.state.answer = REJECT;
    assert.equal(await new ProposalReviews(agent, e.env).review('file:///w', 'p1'), true);
    assert.deepEqual(e.calls.errors, []);
    assert.deepEqual(e.calls.infos, ['PseudoClaude: that proposal was already reviewed.']);
    assert.deepEqual(e.calls.closed, [['p1', false]]);
  });
});
