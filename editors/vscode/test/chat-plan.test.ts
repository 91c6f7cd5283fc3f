/** Plan mode in the chat: the plan's card (and its modal), the task list above the prompt box. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPlanApproval, PlanActions, planAnswer, planModeOf, planOf, planPrompt } from '../src/approvals';
import { chatHtml } from '../src/chat/html';
import { isFromWebview } from '../src/chat/messages';
import { emptyState, fromItems, reduce, type ChatAction, type ChatItem, type ChatState } from '../src/chat/model';
import { renderItem, toolSummary } from '../src/chat/render';
import { parseSlash } from '../src/chat/slash';
import { cleanTasks, currentTask, renderTasks, taskCount, tasksLine, type ChatTask } from '../src/chat/tasks';
import type { AgentEvent } from '../src/protocol';

const WS = 'file:///work/app';
const folder = { uri: WS, name: 'app' };
const PLAN = '## Add a `--name` option\n\n1. **Parse** it in `main()`\n2. Document it in <README.md>\n';

function ev(e: Record<string, unknown> & { kind: string }, sessionId = 's1'): ChatAction {
  return { type: 'event', event: { workspace: WS, sessionId, ...e } as AgentEvent };
}

function run(actions: ChatAction[], state: ChatState = emptyState(folder, [folder])): ChatState {
  return actions.reduce(reduce, state);
}

function planItem(extra: Partial<Extract<ChatItem, { kind: 'approval' }>> = {}): ChatItem {
  return {
    kind: 'approval', id: 'ap1', tool: 'exit_plan_mode', title: 'Approve this plan and start working?', detail: PLAN,
    mode: 'inline', status: 'pending', about: 'plan', ...extra,
  };
}

/** No attribute starting with `on`, no `style=`, no `<script`. */
function assertInert(html: string): void {
  assert.doesNotMatch(html, /<[^>]*\son\w+\s*=/i);
  assert.doesNotMatch(html, /<[^>]*\sstyle\s*=/i);
  assert.doesNotMatch(html, /<script/i);
}

const TASKS: ChatTask[] = [
  { content: 'Parse the option', status: 'completed' },
  { content: 'Use it in <main>', status: 'in_progress' },
  { content: 'Document it', status: 'pending' },
  { content: 'Run it', status: 'pending' },
];

describe('the plan card', () => {
  it('renders the plan as Markdown with Approve, Approve and accept edits and Keep planning…', () => {
    const html = renderItem(planItem());
    assertInert(html);
    assert.match(html, /^<section class="card approval pending approval-plan" data-id="ap1" role="group"/);
    assert.match(html, /<h2>Add a <code>--name<\/code> option<\/h2>/);
    assert.match(html, /<strong>Parse<\/strong>/);
    assert.doesNotMatch(html, /<README\.md>/, 'raw HTML in the plan is escaped');
    assert.match(html, /<button type="button" class="primary" data-action="approve" data-decision="approve" data-mode="default" data-id="ap1" title="Carry the plan out in default mode: [^"]+">Approve<\/button>/);
    assert.match(html, /data-decision="approve" data-mode="acceptEdits" data-id="ap1" title="Carry the plan out in acceptEdits mode: edits run without asking; commands still ask">Approve and accept edits<\/button>/);
    assert.match(html, /<button type="button" data-action="planFeedback" data-id="ap1" aria-expanded="false"[^>]*>Keep planning…<\/button>/);
    // The feedback field is there, hidden until Keep planning… opens it.
    assert.match(html, /<div class="deny-row plan-feedback-row" hidden><input type="text" class="plan-feedback" data-id="ap1" placeholder="What should change in the plan\?"/);
    assert.match(html, /data-action="approve" data-decision="keepPlanning" data-id="ap1">Keep planning<\/button>/);
  });

  it('with Keep planning… open, the field shows', () => {
    const html = renderItem(planItem(), true);
    assert.match(html, /aria-expanded="true"/);
    assert.match(html, /<div class="deny-row plan-feedback-row"><input type="text" class="plan-feedback"/);
  });

  it('a modal plan says to answer in the dialog', () => {
    const html = renderItem(planItem({ mode: 'modal' }));
    assert.doesNotMatch(html, /data-action="approve"/);
    assert.match(html, /Waiting for your answer in the dialog: Approve, Approve and accept edits or Keep planning\./);
    assert.match(html, /<h2>/);
  });

  it('answered: one line (the mode, or the feedback) that unfolds to the plan', () => {
    const approved = renderItem(planItem({ status: 'approve', planMode: 'acceptEdits' }));
    assertInert(approved);
    assert.match(approved, /^<details class="event approval-line plan-line approval-approve" data-id="ap1">/);
    assert.match(approved, /<strong>Plan approved:<\/strong> <span>acceptEdits<\/span>/);
    assert.match(approved, /show the plan/);
    assert.match(approved, /<div class="plan-body markdown"><h2>/);
    assert.match(renderItem(planItem({ status: 'approve', planMode: 'acceptEdits' }), true), /^<details [^>]* open>/);
    const kept = renderItem(planItem({ status: 'keepPlanning', message: 'Also <update> the tests' }));
    assert.match(kept, /<strong>Kept planning:<\/strong> <span>“Also &lt;update&gt; the tests”<\/span>/);
    assert.match(kept, /aria-hidden="true">↺<\/span>/);
    assert.match(renderItem(planItem({ status: 'keepPlanning' })), /<strong>Kept planning<\/strong><span class="plan-show/);
    assert.match(renderItem(planItem({ status: 'cancelled' })), /No longer asked \(the run ended\)/);
    assert.match(renderItem(planItem({ status: 'dismissed', mode: 'modal' })), /Dismissed: kept planning/);
  });

  it('the reducer keeps the mode of an approved plan, the feedback of one kept planning', () => {
    let s = run([
      ev({ kind: 'toolCall', id: 'c1', name: 'exit_plan_mode', arguments: { plan: PLAN } }),
      { type: 'approval', id: 'ap1', tool: 'exit_plan_mode', title: 't', detail: PLAN, mode: 'inline', about: 'plan' },
    ]);
    assert.equal(s.items[0]?.kind === 'tool' && s.items[0].status, 'waiting');
    s = reduce(s, { type: 'approvalDone', id: 'ap1', status: 'approve', mode: 'acceptEdits' });
    const card = s.items[1];
    assert.ok(card?.kind === 'approval');
    assert.deepEqual([card.about, card.status, card.planMode], ['plan', 'approve', 'acceptEdits']);
    assert.equal(s.items[0]?.kind === 'tool' && s.items[0].status, 'running');
    // The approved plan switches the session's mode: the picker follows the mode event.
    s = reduce(s, ev({ kind: 'mode', mode: 'acceptEdits' }));
    assert.equal(s.mode, 'acceptEdits');
  });

  it('the webview may answer approve (with default or acceptEdits) and keepPlanning (with feedback)', () => {
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'approve', mode: 'acceptEdits' }));
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'approve', mode: 'default' }));
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'approve' }));
    assert.ok(isFromWebview({ type: 'approve', id: 'a', decision: 'keepPlanning', message: 'smaller steps' }));
    assert.ok(!isFromWebview({ type: 'approve', id: 'a', decision: 'approve', mode: 'bypassPermissions' }));
    assert.ok(!isFromWebview({ type: 'approve', id: 'a', decision: 'approve', mode: 1 }));
    assert.ok(!isFromWebview({ type: 'approve', id: 'a', decision: 'approveAll' }));
  });
});

describe('the plan as a modal (window/showMessageRequest)', () => {
  const request = {
    type: 3,
    message: `PseudoClaude's plan:\n\n${PLAN}`,
    actions: [{ title: 'Approve' }, { title: 'Approve, accept edits' }, { title: 'Keep planning' }],
  };

  it('is recognised by its actions; the plan is the detail; Escape keeps planning', () => {
    assert.ok(isPlanApproval(request));
    assert.ok(!isPlanApproval({ type: 2, message: 'x', actions: [{ title: 'Allow once' }, { title: 'Deny' }] }));
    assert.equal(planOf(request.message), PLAN.trim());
    assert.deepEqual(planPrompt(request), {
      message: 'PseudoClaude: approve this plan and start working?',
      detail: PLAN.trim(),
      buttons: [
        { title: 'Approve', isCloseAffordance: false },
        { title: 'Approve and accept edits', isCloseAffordance: false },
        { title: 'Keep planning', isCloseAffordance: true },
      ],
    });
  });

  it("answers with the server's own action titles", () => {
    assert.deepEqual(planAnswer(request, PlanActions.approve), { title: 'Approve' });
    assert.deepEqual(planAnswer(request, PlanActions.approveEdits), { title: 'Approve, accept edits' });
    assert.deepEqual(planAnswer(request, PlanActions.keep), { title: 'Keep planning' });
    assert.deepEqual(planAnswer(request, undefined), { title: 'Keep planning' }, 'dismissed: keep planning');
    const ours = { ...request, actions: [{ title: 'Approve' }, { title: 'Approve and accept edits' }, { title: 'Keep planning' }] };
    assert.deepEqual(planAnswer(ours, PlanActions.approveEdits), { title: 'Approve and accept edits' });
  });

  it('without an approve with edits accepted, offers none', () => {
    const two = { ...request, actions: [{ title: 'Approve' }, { title: 'Keep planning' }] };
    assert.deepEqual(planPrompt(two).buttons.map((b) => b.title), ['Approve', 'Keep planning']);
  });

  it('names the mode of each button', () => {
    assert.equal(planModeOf('Approve'), 'default');
    assert.equal(planModeOf('Approve and accept edits'), 'acceptEdits');
    assert.equal(planModeOf('Approve, accept edits'), 'acceptEdits');
    assert.equal(planModeOf('Keep planning'), undefined);
    assert.equal(planModeOf(undefined), undefined);
  });
});

describe('the task list', () => {
  it('keeps items with text, an unknown status as pending', () => {
    assert.deepEqual(
      cleanTasks([{ content: ' a ', status: 'completed' }, { content: '', status: 'pending' }, { content: 'b', status: 'odd' }, null, 'c', { status: 'pending' }]),
      [{ content: 'a', status: 'completed' }, { content: 'b', status: 'pending' }],
    );
    assert.deepEqual(cleanTasks(undefined), []);
    assert.deepEqual(taskCount(TASKS), { done: 1, total: 4 });
    assert.equal(currentTask(TASKS)?.content, 'Use it in <main>');
  });

  it('renders nothing for an empty list (the checklist hides)', () => {
    assert.equal(renderTasks([], { collapsed: false, running: true }), '');
  });

  it('one line per task: done struck through, in progress in bold with a spinner while running, pending plain', () => {
    const html = renderTasks(TASKS, { collapsed: false, running: true });
    assertInert(html);
    assert.match(html, /^<button type="button" class="tasks-header" data-action="toggleTasks" aria-expanded="true" aria-controls="tasks-list"/);
    assert.match(html, /<span class="tasks-title">Tasks<\/span><span class="tasks-count" aria-label="1 of 4 tasks done; in progress: Use it in &lt;main&gt;">1\/4<\/span>/);
    assert.match(html, /<ol id="tasks-list" class="tasks-list">/);
    assert.equal((html.match(/<li class="task /g) ?? []).length, 4);
    assert.match(html, /<li class="task task-completed"[^>]*><span class="task-mark" aria-hidden="true">✓<\/span><span class="task-text"><s>Parse the option<\/s><\/span>/);
    assert.match(html, /<li class="task task-in_progress"[^>]*><span class="task-mark"><span class="task-spinner" aria-hidden="true"><\/span><\/span><span class="task-text">Use it in &lt;main&gt;<\/span>/);
    assert.match(html, /<li class="task task-pending"[^>]*><span class="task-mark" aria-hidden="true">○<\/span><span class="task-text">Document it<\/span>/);
    assert.match(html, /\(in progress\)<\/span><\/li>/, 'the status in words, for screen readers');
    assert.doesNotMatch(html, /<main>/);
  });

  it('the task in progress gets ▶ when nothing runs', () => {
    const html = renderTasks(TASKS, { collapsed: false, running: false });
    assert.match(html, /<li class="task task-in_progress"[^>]*><span class="task-mark" aria-hidden="true">▶<\/span>/);
    assert.doesNotMatch(html, /task-spinner/);
  });

  it('folded: the header only, with the task in progress', () => {
    const html = renderTasks(TASKS, { collapsed: true, running: true });
    assert.match(html, /aria-expanded="false"/);
    assert.match(html, /<span class="tasks-caret" aria-hidden="true">▸<\/span>/);
    assert.match(html, /<span class="tasks-current">Use it in &lt;main&gt;<\/span><\/button><ol id="tasks-list" class="tasks-list" hidden>/);
    const done = renderTasks(TASKS.map((t) => ({ ...t, status: 'completed' as const })), { collapsed: true, running: false });
    assert.match(done, /<span class="tasks-count tasks-all-done"[^>]*>4\/4<\/span><\/button><ol/);
  });

  it('the reducer follows the tasks events and the pseudoclaude/tasks answer; another session starts with none', () => {
    let s = run([ev({ kind: 'tasks', tasks: TASKS })]);
    assert.deepEqual(s.tasks, TASKS);
    s = reduce(s, { type: 'tasks', tasks: [{ content: 'x', status: 'completed' }] });
    assert.deepEqual(s.tasks, [{ content: 'x', status: 'completed' }]);
    assert.deepEqual(fromItems(s, 's1', []).tasks, s.tasks, 'the same session reloaded keeps it until asked again');
    assert.deepEqual(fromItems(s, 's2', []).tasks, [], 'another session: not this list');
    assert.deepEqual(emptyState().tasks, []);
  });

  it("the session's own tools say what they do on their cards' line", () => {
    assert.equal(tasksLine(TASKS), '1/4 done · ▶ Use it in <main>');
    assert.equal(tasksLine(TASKS.map((t) => ({ ...t, status: 'pending' as const }))), '4 tasks');
    assert.equal(tasksLine([{ content: 'One', status: 'pending' }]), '1 task');
    assert.equal(tasksLine([]), 'cleared');
    assert.equal(toolSummary('update_tasks', { tasks: TASKS }), '1/4 done · ▶ Use it in <main>');
    assert.equal(toolSummary('exit_plan_mode', { plan: PLAN }), 'Add a `--name` option');
    assert.equal(toolSummary('read_file', { path: 'a.md' }), 'path: a.md');
    assert.equal(toolSummary('update_tasks', 'not json'), 'not json');
    const card = renderItem({ kind: 'tool', id: 't1', callId: 'c1', name: 'update_tasks', arguments: { tasks: TASKS }, status: 'done' });
    assert.match(card, /<span class="tool-args" title="1\/4 done · ▶ Use it in &lt;main&gt;">1\/4 done · ▶ Use it in &lt;main&gt;<\/span>/);
  });

  it('has its place above the prompt box, hidden until there is a list', () => {
    const html = chatHtml({ cspSource: 'x', nonce: 'n', scriptUri: 's', styleUri: 'c' });
    assert.match(
      html,
      /<footer class="composer">\s*<section id="bg-tasks" class="tasks bg-tasks" aria-label="Background tasks" hidden><\/section>\s*<section id="tasks" class="tasks" aria-label="Task list" hidden><\/section>/,
    );
    assert.ok(html.indexOf('id="tasks"') < html.indexOf('id="prompt"'));
  });
});

describe('/plan and /do', () => {
  it('are commands the chat runs, /plan with its task', () => {
    const listed = [{ name: 'plan', description: 'x' }, { name: 'do', description: 'y' }];
    assert.deepEqual(parseSlash('/plan add a --verbose flag', listed), { name: 'plan', argument: 'add a --verbose flag' });
    assert.deepEqual(parseSlash('/do', listed), { name: 'do', argument: '' });
    assert.equal(parseSlash('/plan', []), undefined); // a server that does not list it
  });
});
