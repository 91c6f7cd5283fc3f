/**
 * The chat as HTML strings: items of the transcript, the context meter (a stacked bar of the
 * breakdown), the session picker's options. Every piece of text from the server or the model is
 * escaped here, or rendered by `renderMarkdown` (no raw HTML). No inline styles and no inline
 * event handlers (the Content-Security-Policy allows neither): widths are SVG attributes, actions
 * are `data-action` attributes the webview script handles.
 */
import { factCheckText, previewPlan } from '../compaction';
import { contextChip, type EditorChip } from '../editorContext';
import { formatAge, formatBytes, formatCount, formatTokens, oneLine, plural, prettyArguments } from '../format';
import { BREAKDOWN_LABELS, formatShare, WARNING_RATIO, type MeterState } from '../meter';
import { MODE_MEANINGS, offeredModes, sandboxText } from '../permissions';
import { BREAKDOWN_CATEGORIES, type Breakdown, type EditorContext, type McpServer, type SessionSummary } from '../protocol';
import { summarizeArguments } from '../transcript';
import { escapeHtml, renderMarkdown } from './markdown';
import { mcpBadge } from './mcp';
import { cleanTasks, tasksLine } from './tasks';
import { agentArgs, statusWords, type AgentCall, type ChatAgent } from './agents';
import { worktreeOf, type ApprovalStatus, type ChatItem, type ChatState, type ItemOf, type PlanMode, type ToolStatus } from './model';

const esc = escapeHtml;

const TOOL_STATUS: Record<ToolStatus, { icon: string; text: string }> = {
  running: { icon: '⋯', text: 'running' },
  waiting: { icon: '⋯', text: 'waiting for approval' },
  done: { icon: '✓', text: 'done' },
  failed: { icon: '✗', text: 'failed' },
  denied: { icon: '⊘', text: 'denied' },
  canceled: { icon: '○', text: 'cancelled' },
  interrupted: { icon: '○', text: 'no result' },
};

const RESULT_LABEL: Partial<Record<ToolStatus, string>> = { failed: 'Error', denied: 'Denied', canceled: 'Cancelled' };

/** The class and the note of an item the model no longer sees (summarized away, undone, rewound). */
const OUT_CLASS = ' out-of-context';
const OUT_NOTE = 'Not in the model\'s context any more (summarized, undone or rewound)';

function outOf(item: ChatItem): { cls: string; attr: string; badge: string } {
  return item.outOfContext
    ? {
        cls: OUT_CLASS,
        attr: ` title="${OUT_NOTE}"`,
        badge: `<span class="out-badge" aria-label="${OUT_NOTE}">not in context</span>`,
      }
    : { cls: '', attr: '', badge: '' };
}

/**
 * A tool card's one-line summary of its arguments: the session's own tools say what they do
 * (`update_tasks`: the count and the task in progress; `exit_plan_mode`: the plan's first line),
 * the others show their arguments.
 */
export function toolSummary(name: string, args: unknown, max = 80): string {
  const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
  if (name === 'update_tasks' && given && Array.isArray(given.tasks)) {
    return oneLine(tasksLine(cleanTasks(given.tasks)), max);
  }
  if (name === 'exit_plan_mode' && given && typeof given.plan === 'string') {
    const first = given.plan.split('\n').map((l) => l.replace(/^\s*#+\s*/, '').trim()).find((l) => l !== '');
    return oneLine(first ?? '', max);
  }
  return summarizeArguments(args, max);
}

function toolCard(item: ItemOf<'tool'>, open: boolean): string {
  if (item.name === 'agent') {
    return agentCard(item, open);
  }
  const status = TOOL_STATUS[item.status];
  const out = outOf(item);
  const size = item.bytes !== undefined && item.status !== 'running' ? ` · ${formatBytes(item.bytes)}` : '';
  const args = toolSummary(item.name, item.arguments);
  const body: string[] = [];
  const pretty = prettyArguments(item.arguments);
  if (pretty) {
    body.push('<div class="card-label">Arguments</div>', `<pre class="card-pre">${esc(pretty)}</pre>`);
  }
  const shown = item.display !== undefined && item.display !== '' ? item.display : item.error;
  if (shown !== undefined) {
    const cut = item.status === 'done' && item.bytes !== undefined && item.bytes > new TextEncoder().encode(shown).length;
    body.push(
      `<div class="card-label">${RESULT_LABEL[item.status] ?? 'Result'}${cut ? ' (start)' : ''}</div>`,
      `<pre class="card-pre">${esc(shown) || '<span class="muted">(empty)</span>'}${cut ? '<span class="muted">…</span>' : ''}</pre>`,
    );
    if (item.error && item.display && !item.display.includes(item.error)) {
      body.push(`<div class="card-error">${esc(oneLine(item.error, 600))}</div>`);
    }
  } else if (item.status === 'running') {
    body.push('<div class="muted">Waiting for the result…</div>');
  } else if (item.status === 'waiting') {
    body.push('<div class="muted">Waiting for your approval below.</div>');
  } else if (item.status === 'interrupted') {
    body.push('<div class="muted">The call ended without a result (the run was cancelled or failed).</div>');
  }
  return (
    `<details class="card tool tool-${item.status}${out.cls}" data-id="${esc(item.id)}"${out.attr}${open ? ' open' : ''}>` +
    `<summary aria-label="${esc(`Tool ${item.name}, ${status.text}`)}">` +
    `<span class="tool-icon" aria-hidden="true">${status.icon}</span>` +
    `<span class="tool-name">${esc(item.name)}</span>` +
    (args ? `<span class="tool-args" title="${esc(oneLine(args, 300))}">${esc(args)}</span>` : '<span class="tool-args"></span>') +
    `<span class="tool-status">${status.text}${size}</span>` +
    out.badge +
    '</summary>' +
    `<div class="card-body">${body.join('')}</div>` +
    '</details>'
  );
}

/** Whether an `agent` card shows unfolded by itself: while its sub-agent runs (its calls in view). */
export function agentRunning(item: ChatItem): boolean {
  return item.kind === 'tool' && item.name === 'agent' && (item.agent ? item.agent.status === 'running' && !item.agent.background : item.status === 'running');
}

function agentCallLine(call: AgentCall): string {
  const status = TOOL_STATUS[call.status];
  const args = toolSummary(call.name, call.arguments, 70);
  const icon = call.status === 'running'
    ? '<span class="agent-call-icon"><span class="task-spinner" aria-hidden="true"></span></span>'
    : `<span class="agent-call-icon" aria-hidden="true">${status.icon}</span>`;
  const tip = [args, call.display ? oneLine(call.display, 300) : ''].filter(Boolean).join('\n');
  return (
    `<li class="agent-call agent-call-${call.status}"${tip ? ` title="${esc(tip)}"` : ''}>` +
    `${icon}<span class="tool-name">${esc(call.name)}</span>` +
    `<span class="tool-args">${esc(args)}</span>` +
    `<span class="visually-hidden"> (${status.text})</span></li>`
  );
}

/**
 * An `agent` call: one card for its sub-agent. The header: its type (and name), the task's
 * description, its state, how many calls and tokens; unfolded (by itself while it runs): its
 * tool calls as they run, what it says, its answer once it ended, Stop while it runs, and its
 * transcript.
 */
function agentCard(item: ItemOf<'tool'>, open: boolean): string {
  const out = outOf(item);
  const args = agentArgs(item.arguments);
  const agent: ChatAgent | undefined = item.agent;
  const type = agent?.subagentType ?? args.subagentType ?? 'general-purpose';
  const name = agent?.name ?? args.name;
  const description = agent?.description ?? args.description ?? '';
  const background = agent?.background ?? args.background ?? false;
  // Before its first event the call's own state tells (a denied or failed call never started one).
  const state = agent
    ? agent.status
    : item.status === 'running' || item.status === 'waiting'
      ? 'running'
      : item.status === 'done'
        ? 'completed'
        : item.status === 'failed' || item.status === 'denied'
          ? 'failed'
          : 'canceled';
  const running = state === 'running';
  const words = item.status === 'waiting' ? { icon: '', text: 'waiting for approval' } : item.status === 'denied' ? { icon: '⊘', text: 'denied' } : statusWords(state);
  const calls = agent?.calls ?? [];
  const tokens = agent && (agent.inputTokens > 0 || agent.outputTokens > 0)
    ? `${formatTokens(agent.inputTokens)} in / ${formatTokens(agent.outputTokens)} out`
    : '';
  const facts = [
    background ? 'background' : '',
    calls.length > 0 ? plural(calls.length, 'call') : '',
    tokens,
  ].filter(Boolean);
  const icon = running
    ? '<span class="tool-icon"><span class="task-spinner" aria-hidden="true"></span></span>'
    : `<span class="tool-icon" aria-hidden="true">${words.icon}</span>`;
  const body: string[] = [];
  if (calls.length > 0) {
    body.push(`<ol class="agent-calls" aria-label="Its tool calls">${calls.map(agentCallLine).join('')}</ol>`);
  } else if (running) {
    body.push('<div class="muted">Starting…</div>');
  }
  if (agent?.text && running) {
    body.push(`<div class="agent-text markdown">${renderMarkdown(agent.text)}</div>`);
  }
  for (const note of agent?.notes ?? []) {
    body.push(`<div class="card-error">${esc(oneLine(note, 300))}</div>`);
  }
  const answer = background ? (running ? undefined : agent?.text) : item.display ?? item.error;
  if (!running && answer) {
    body.push(
      `<details class="agent-answer"><summary class="card-label">${state === 'completed' ? 'Its answer' : 'How it ended'}</summary>` +
        `<div class="markdown">${renderMarkdown(answer)}</div></details>`,
    );
  }
  const buttons: string[] = [];
  if (running) {
    const stopTip = background
      ? 'Stop this background sub-agent (the run goes on)'
      : 'Stop this sub-agent: the agent is told, and the run goes on without its answer';
    buttons.push(
      `<button type="button" data-action="stopAgent" data-agent="${esc(agent?.agentId ?? '')}"${background ? ' data-background="true"' : ''} ` +
        `title="${esc(stopTip)}">Stop</button>`,
    );
  }
  if (agent) {
    buttons.push(
      `<button type="button" class="link" data-action="agentTranscript" data-agent="${esc(agent.agentId)}" ` +
        `title="${esc(`Open the transcript of ${agent.agentId} in the PseudoClaude output`)}">Open transcript</button>`,
    );
  }
  if (buttons.length > 0) {
    body.push(`<div class="buttons agent-buttons">${buttons.join('')}</div>`);
  }
  const label = `Sub-agent ${type}${name ? ` ${name}` : ''}: ${description}, ${words.text}`;
  return (
    `<details class="card tool agent-card agent-${item.status === 'waiting' ? 'waiting' : state}${out.cls}" data-id="${esc(item.id)}"${out.attr}${open ? ' open' : ''}>` +
    `<summary aria-label="${esc(label)}">` +
    icon +
    `<span class="agent-type">${esc(type)}</span>` +
    (name ? `<span class="agent-name">${esc(name)}</span>` : '') +
    `<span class="tool-args" title="${esc(description)}">${esc(oneLine(description, 120))}</span>` +
    `<span class="tool-status">${words.text}${facts.length > 0 ? ` · ${facts.join(' · ')}` : ''}</span>` +
    out.badge +
    '</summary>' +
    `<div class="card-body">${body.join('')}</div>` +
    '</details>'
  );
}

const APPROVAL_DONE: Record<Exclude<ApprovalStatus, 'pending'>, string> = {
  allowOnce: 'Allowed once',
  allowSession: 'Allowed for this session',
  allowAlways: 'Always allowed',
  deny: 'Denied',
  approve: 'Plan approved',
  keepPlanning: 'Kept planning',
  dismissed: 'Dismissed: denied',
  cancelled: 'No longer asked (the run ended)',
};

/** The answered line's words for a plan (any answer but Approve keeps planning). */
const PLAN_DONE: Partial<Record<Exclude<ApprovalStatus, 'pending'>, string>> = {
  deny: 'Kept planning',
  dismissed: 'Dismissed: kept planning',
};

/** The answered line's words for a project server's start (remembered for the project, not a session). */
const SERVER_DONE: Partial<Record<Exclude<ApprovalStatus, 'pending'>, string>> = {
  allowSession: 'Allowed for this project',
  allowAlways: 'Allowed for this project',
  cancelled: 'No longer asked',
};

/** Arguments up to this many lines show unfolded in an approval card. */
const ARGS_OPEN_LINES = 12;

/** What was asked, for the answered line: `run_command to run a command`, `call echo of the MCP server echo`. */
function asked(item: ItemOf<'approval'>): string {
  if (item.about === 'permissions') {
    return item.title.replace(/ asks to use its own settings$/, "'s settings").replace(/^This folder's/, "this folder's");
  }
  if (item.about === 'hooks') {
    return item.title.replace(/ has hooks that would run$/, "'s hooks").replace(/^This folder's/, "this folder's");
  }
  if (item.about === 'mcpServer') {
    return `start the MCP server ${item.server ?? item.tool} (.mcp.json)`;
  }
  const text = item.title.replace(/^Allow /, '').replace(/\?$/, '');
  return item.about === 'mcp' ? text.replace(/^Call /, 'call ') : text;
}

/** An MCP call's arguments: folded (with a one-line preview) when long, like a tool card. */
function approvalArgs(item: ItemOf<'approval'>): string {
  if (!item.args) {
    return '';
  }
  const lines = item.args.split('\n').length;
  const open = lines <= ARGS_OPEN_LINES;
  return (
    `<details class="approval-args"${open ? ' open' : ''}>` +
    `<summary><span class="card-label">Arguments</span>` +
    `<span class="approval-args-preview muted">${esc(oneLine(item.args, 120))}</span></summary>` +
    `<pre class="card-pre">${esc(item.args)}</pre></details>`
  );
}

/** What each mode an approved plan may run in means, for its buttons' tooltips. */
const PLAN_BUTTONS: { mode: PlanMode; label: string }[] = [
  { mode: 'default', label: 'Approve' },
  { mode: 'acceptEdits', label: 'Approve and accept edits' },
];

/**
 * A plan to approve (`exit_plan_mode`): the plan as Markdown, then Approve (in default mode, or
 * with edits accepted) and Keep planning…, which opens a field for what should change (`open`:
 * it is open; Enter sends it). Answered: one line (`Plan approved: acceptEdits`, `Kept planning:
 * “…”`) that unfolds to the plan again.
 */
function planCard(item: ItemOf<'approval'>, open: boolean): string {
  const id = esc(item.id);
  const plan = item.detail.trim()
    ? `<div class="plan-body markdown">${renderMarkdown(item.detail)}</div>`
    : item.args
      ? `<pre class="card-pre">${esc(item.args)}</pre>`
      : '<div class="plan-body muted">(the plan is empty)</div>';
  if (item.status !== 'pending') {
    const approved = item.status === 'approve';
    const done = PLAN_DONE[item.status] ?? APPROVAL_DONE[item.status];
    const what = approved
      ? esc(item.planMode ?? 'default')
      : item.status === 'keepPlanning' && item.message
        ? `“${esc(oneLine(item.message, 300))}”`
        : '';
    return (
      `<details class="event approval-line plan-line approval-${item.status}" data-id="${id}"${open ? ' open' : ''}>` +
      `<summary title="Show the plan"><span class="event-icon approval-icon" aria-hidden="true">${approved ? '✓' : item.status === 'keepPlanning' ? '↺' : '✗'}</span>` +
      `<strong>${done}${what ? ':' : ''}</strong>${what ? ` <span>${what}</span>` : ''}` +
      '<span class="plan-show muted"> · <span class="when-closed">show the plan</span><span class="when-open">hide the plan</span></span></summary>' +
      `${plan}</details>`
    );
  }
  const parts = [
    `<section class="card approval pending approval-plan" data-id="${id}" role="group" aria-label="The agent's plan, for your approval">`,
    `<div class="card-title"><span class="approval-icon plan-icon" aria-hidden="true">☰</span>${esc(item.title)}</div>`,
    plan,
  ];
  if (item.mode === 'inline') {
    parts.push(
      '<div class="buttons plan-buttons">',
      '<span class="plan-approve" role="group" aria-label="Approve the plan">',
      ...PLAN_BUTTONS.map(
        (b, i) =>
          `<button type="button"${i === 0 ? ' class="primary"' : ''} data-action="approve" data-decision="approve" data-mode="${b.mode}" data-id="${id}" ` +
          `title="${esc(`Carry the plan out in ${b.mode} mode: ${MODE_MEANINGS[b.mode]}`)}">${b.label}</button>`,
      ),
      '</span>',
      `<button type="button" data-action="planFeedback" data-id="${id}" aria-expanded="${open}" ` +
        `title="Stay in plan mode: tell the agent what to change in the plan">Keep planning…</button>`,
      '</div>',
      `<div class="deny-row plan-feedback-row"${open ? '' : ' hidden'}>` +
        `<input type="text" class="plan-feedback" data-id="${id}" placeholder="What should change in the plan?" ` +
        `aria-label="What the agent should change in the plan; Enter sends it and the agent keeps planning">` +
        `<button type="button" data-action="approve" data-decision="keepPlanning" data-id="${id}">Keep planning</button>` +
        '</div>',
    );
  } else {
    parts.push(
      `<div class="muted">Waiting for your answer in the dialog: ${PLAN_BUTTONS.map((b) => b.label).join(', ')} or Keep planning.</div>`,
    );
  }
  parts.push('</section>');
  return parts.join('');
}

function approvalCard(item: ItemOf<'approval'>, open = false): string {
  if (item.about === 'plan') {
    return planCard(item, open);
  }
  const id = esc(item.id);
  const status = item.status;
  const server = item.about === 'mcpServer';
  const settings = item.about === 'permissions';
  const hooks = item.about === 'hooks';
  const project = server || settings || hooks; // remembered for the folder, not a session
  if (status !== 'pending') {
    // Answered: one line (what was asked stays in its tooltip).
    const allowed = status === 'allowOnce' || status === 'allowSession' || status === 'allowAlways';
    const done = (project ? SERVER_DONE[status] : undefined) ?? APPROVAL_DONE[status];
    const rule =
      status === 'allowAlways' && item.rule && !project
        ? ` <span class="approval-added">· <code>${esc(item.rule)}</code> added to .PseudoClaude/permissions.local.yaml</span>`
        : '';
    const said = status === 'deny' && item.message ? ` <span class="approval-said">· told the agent: “${esc(oneLine(item.message, 300))}”</span>` : '';
    return (
      `<div class="event approval-line approval-${status}" data-id="${id}" role="note" ` +
      `title="${esc([item.title, item.reason, item.detail, item.args].filter(Boolean).join('\n'))}">` +
      `<span class="event-icon approval-icon" aria-hidden="true">${allowed ? '✓' : '✗'}</span>` +
      `<strong>${done}:</strong> <span>${esc(oneLine(asked(item), 200))}</span>${rule}${said}</div>`
    );
  }
  const label = server
    ? `Approval to start the MCP server ${item.server ?? item.tool}`
    : settings
      ? "Approval of this folder's settings"
      : hooks
        ? "Approval of this folder's hooks"
        : `Approval for ${item.tool}`;
  const parts = [
    `<section class="card approval pending${item.about ? ` approval-${item.about}` : ''}" data-id="${id}" role="group" aria-label="${esc(label)}">`,
    `<div class="card-title"><span class="approval-icon" aria-hidden="true">⚠</span>${esc(item.title)}</div>`,
  ];
  if (item.reason) {
    parts.push(`<div class="approval-reason">Why: ${esc(oneLine(item.reason, 300))}</div>`);
  }
  if (settings) {
    const rules = item.detail.split('\n').filter(Boolean);
    parts.push(`<ul class="approval-rules">${rules.map((r) => `<li><code>${esc(r)}</code></li>`).join('')}</ul>`);
  }
  // A write's change: "Show diff" beside what it changes (opens the diff editor again).
  const diff = item.path && item.mode === 'inline' && !project
    ? `<button type="button" class="link" data-action="showDiff" data-id="${id}">Show diff</button>`
    : '';
  if (!settings && item.detail) {
    parts.push(
      diff
        ? `<div class="approval-file"><pre class="card-pre">${esc(item.detail)}</pre>${diff}</div>`
        : `<pre class="card-pre">${esc(item.detail)}</pre>`,
    );
  }
  parts.push(approvalArgs(item));
  if (server) {
    parts.push(
      '<div class="approval-note muted">It runs on this machine with your permissions. ' +
        'Allow for this project: remembered on this machine, for this folder and this exact command.</div>',
    );
  }
  if (settings) {
    parts.push(
      '<div class="approval-note muted">The file comes with the project. Until you allow it, your own settings stand. ' +
        'Allow for this project: remembered on this machine, for this folder, until the file changes.</div>',
    );
  }
  if (item.mode === 'inline' && project) {
    parts.push(
      '<div class="buttons">',
      `<button type="button" class="primary" data-action="approve" data-decision="allowOnce" data-id="${id}">Allow once</button>`,
      `<button type="button" data-action="approve" data-decision="allowSession" data-id="${id}">Allow for this project</button>`,
      `<button type="button" data-action="approve" data-decision="deny" data-id="${id}">Deny</button>`,
      '</div>',
    );
  } else if (item.mode === 'inline') {
    // A call of a run: Allow once / for this session / always (the rule it adds), then Deny
    // with what to tell the agent.
    const always = item.rule
      ? `<button type="button" class="always" data-action="approve" data-decision="allowAlways" data-id="${id}" ` +
        `title="${esc(`Adds ${item.rule} to this folder's .PseudoClaude/permissions.local.yaml: calls it covers run without asking from now on`)}">` +
        `Always allow <code>${esc(item.rule)}</code></button>`
      : '';
    parts.push(
      '<div class="buttons">',
      `<button type="button" class="primary" data-action="approve" data-decision="allowOnce" data-id="${id}">Allow once</button>`,
      `<button type="button" data-action="approve" data-decision="allowSession" data-id="${id}">Allow for this session</button>`,
      always,
      item.detail ? '' : diff,
      '</div>',
      '<div class="deny-row">',
      `<input type="text" class="deny-message" data-id="${id}" placeholder="Tell the agent why (optional)" ` +
        `aria-label="What to tell the agent when you deny (optional); Enter denies">`,
      `<button type="button" data-action="approve" data-decision="deny" data-id="${id}">Deny</button>`,
      '</div>',
    );
  } else {
    const answers = ['Allow once', server ? 'Allow for this project' : 'Allow for this session', ...(item.rule ? [`Always allow ${item.rule}`] : [])];
    parts.push(`<div class="muted">Waiting for your answer in the dialog: ${esc(answers.join(', '))} or Deny.</div>`);
  }
  parts.push('</section>');
  return parts.join('');
}

function previewCard(item: ItemOf<'preview'>): string {
  const plan = previewPlan(item.preview);
  const id = esc(item.id);
  const lines = plan.kind === 'confirm' ? plan.detail.split('\n') : [];
  const parts = [
    `<section class="card preview preview-${item.status}" data-id="${id}" role="group" aria-label="Compaction preview">`,
    `<div class="card-title">${esc(plan.message.replace(/^PseudoClaude: /, ''))}</div>`,
  ];
  if (lines.length > 0) {
    parts.push(`<ul class="preview-lines">${lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`);
  }
  if (item.status === 'asking' && plan.kind === 'confirm') {
    parts.push(
      `<label class="field"><span>Instructions for the summary (optional)</span>` +
        `<input type="text" class="instructions" data-id="${id}" placeholder="e.g. keep the parser decisions"></label>`,
      '<div class="buttons">',
      `<button type="button" class="primary" data-action="compactConfirm" data-id="${id}">Compact</button>`,
      `<button type="button" data-action="compactCancel" data-id="${id}">Cancel</button>`,
      '</div>',
    );
  } else if (item.status === 'compacting') {
    parts.push('<div class="muted">Compacting…</div>');
  } else if (item.status === 'cancelled') {
    parts.push('<div class="muted">Not compacted.</div>');
  }
  if (item.result) {
    parts.push(`<div class="preview-result">${esc(item.result.replace(/^PseudoClaude: /, ''))}</div>`);
  }
  parts.push('</section>');
  return parts.join('');
}

function compactLine(item: ItemOf<'compact'>): string {
  const change = `${formatTokens(item.beforeTokens)} → ${formatTokens(item.afterTokens)} tokens`;
  const what = item.layer >= 2 ? 'Context compacted' : 'Tool results offloaded';
  const bits = [change];
  if (item.offloaded > 0) {
    bits.push(`${plural(item.offloaded, 'result')} offloaded`);
  }
  if (item.factCheck) {
    bits.push(factCheckText(item.factCheck));
  }
  return (
    `<div class="event compact" data-id="${esc(item.id)}" role="note">` +
    `<span class="event-icon" aria-hidden="true">⇣</span><strong>${what}</strong> ` +
    `<span>${esc(bits.join(' · '))}</span></div>`
  );
}

function memoryLine(item: ItemOf<'memory'>): string {
  const changes = item.changes.map((c) => `${c.action} ${c.filename} (${c.level})`).join(', ');
  let title: string;
  let text: string;
  if (item.status === 'failed') {
    title = 'Memory update failed';
    text = item.error ?? 'unknown error';
  } else if (item.status === 'proposed') {
    title = 'Memory changes proposed';
    text = changes ? `${changes}: review them in the Memory view` : 'review them in the Memory view';
  } else {
    title = 'Memory updated';
    text = changes;
  }
  return (
    `<div class="event memory memory-${esc(item.status)}" data-id="${esc(item.id)}" role="note">` +
    `<span class="event-icon" aria-hidden="true">✎</span><strong>${title}</strong>` +
    (text ? ` <span>${esc(oneLine(text, 400))}</span>` : '') +
    '</div>'
  );
}

/** Who holds a busy session, in words. */
function holder(pid: number | null): string {
  return pid === null ? 'Another process' : `Process ${Math.trunc(pid)}`;
}

/**
 * A prompt refused because another writer holds the session: the prompt (not sent), then Fork or
 * Wait; while waiting, Cancel; how it ended, in one line.
 */
function busyCard(item: ItemOf<'busy'>): string {
  const id = esc(item.id);
  const who = holder(item.pid);
  const prompt = `<pre class="card-pre busy-prompt">${esc(item.prompt)}</pre>`;
  if (item.status === 'cancelled' || item.status === 'failed') {
    const text =
      item.status === 'cancelled'
        ? 'Not sent: you stopped waiting. Your prompt is back in the box.'
        : `Not sent: ${item.error ?? 'the session could not be continued'}`;
    return (
      `<div class="event busy-line busy-${item.status}" data-id="${id}" role="note" title="${esc(item.prompt)}">` +
      `<span class="event-icon approval-icon" aria-hidden="true">✗</span><span>${esc(oneLine(text, 400))}</span></div>`
    );
  }
  const parts = [
    `<section class="card busy busy-${item.status}" data-id="${id}" role="group" aria-label="Session busy">`,
  ];
  if (item.status === 'waiting') {
    parts.push(
      `<div class="card-title"><span class="busy-spinner" aria-hidden="true"></span>Waiting for the session to be free…</div>`,
      `<div class="busy-detail">${esc(who)} is still writing it; checked every second. Your prompt is sent here as soon as it is done:</div>`,
      prompt,
      '<div class="buttons">',
      `<button type="button" data-action="busyCancel" data-id="${id}" title="Stop waiting; your prompt goes back in the box">Cancel</button>`,
      '</div>',
    );
  } else if (item.status === 'forking') {
    parts.push(`<div class="card-title">Forking the session…</div>`, prompt);
  } else {
    parts.push(
      `<div class="card-title"><span class="approval-icon" aria-hidden="true">⚠</span>Not sent: this session is busy</div>`,
      `<div class="busy-detail">${esc(who)} is writing it (another window, a terminal or the Ask command). A session takes one writer at a time.</div>`,
      prompt,
      '<div class="buttons">',
      `<button type="button" class="primary" data-action="busyFork" data-id="${id}" ` +
        `title="A new session with this conversation so far; your prompt is sent there">Fork</button>`,
      `<button type="button" data-action="busyWait" data-id="${id}" ` +
        `title="Send your prompt here once the session is free">Wait</button>`,
      '</div>',
      '<div class="approval-note muted">Fork: go on in a new session with this conversation so far, beside the run in progress. ' +
        'Wait: send it here once that run is done.</div>',
    );
  }
  parts.push('</section>');
  return parts.join('');
}

/** What an Apply of a worktree did: the files written (or the conflicts, nothing written). */
function worktreeCard(item: ItemOf<'worktree'>): string {
  const files = item.files.length
    ? `<ul class="worktree-files">${item.files.map((f) => `<li><code>${esc(f)}</code></li>`).join('')}</ul>`
    : '';
  return (
    `<section class="card worktree-result worktree-${item.level}" data-id="${esc(item.id)}" role="${item.level === 'info' ? 'note' : 'alert'}">` +
    `<div class="card-title"><span class="event-icon" aria-hidden="true">${item.level === 'info' ? '✓' : '⚠'}</span>${esc(item.title)}</div>` +
    files +
    (item.note ? `<div class="approval-note muted">${esc(item.note)}</div>` : '') +
    '</section>'
  );
}

function endLine(item: ItemOf<'end'>): string {
  const bits: string[] = [];
  switch (item.stopReason) {
    case 'completed':
      bits.push('Done');
      break;
    case 'canceled':
      bits.push('Cancelled');
      break;
    case 'max_iterations':
      bits.push('Stopped at the maxIterations limit: ask again to continue');
      break;
    case 'unknown_tool_limit':
      bits.push('Stopped: the model called unknown tools twice in a row');
      break;
    case 'blocked':
      bits.push('Not sent: a hook refused the prompt');
      break;
    default:
      bits.push(`Stopped: ${item.stopReason}`);
  }
  if (item.iterations !== undefined) {
    bits.push(plural(item.iterations, 'model turn'));
  }
  if (item.inputTokens !== undefined && item.outputTokens !== undefined) {
    bits.push(`${formatTokens(item.inputTokens)} in / ${formatTokens(item.outputTokens)} out`);
  }
  const cls = item.error || !['completed', 'canceled'].includes(item.stopReason) ? ' end-warn' : '';
  return (
    `<div class="end${cls}" data-id="${esc(item.id)}" role="note">${esc(bits.join(' · '))}` +
    (item.error ? `<div class="end-error">${esc(oneLine(item.error, 600))}</div>` : '') +
    '</div>'
  );
}

const MARKER_ICON: Record<ItemOf<'marker'>['marker'], string> = { compaction: '⇣', undo: '⇡', rewind: '↶' };

function markerLine(item: ItemOf<'marker'>): string {
  return (
    `<div class="event marker marker-${item.marker}" data-id="${esc(item.id)}" role="note">` +
    `<span class="event-icon" aria-hidden="true">${MARKER_ICON[item.marker]}</span>` +
    `<span>${esc(item.text)}</span></div>`
  );
}

/** The context breakdown at one moment (`/context`): the meter with its table unfolded. */
function contextCard(item: ItemOf<'context'>): string {
  return (
    `<section class="card context-card" data-id="${esc(item.id)}" role="group" aria-label="Context">` +
    '<div class="card-title">What fills the context</div>' +
    `${renderMeter(item.meter, true)}</section>`
  );
}

/** `/status` (and `/hooks`): the server's text as it lines up (a preformatted block). */
function statusCard(item: ItemOf<'status'>): string {
  const title = esc(item.title ?? 'Status');
  return (
    `<section class="card status-card" data-id="${esc(item.id)}" role="group" aria-label="${title}">` +
    `<div class="card-title">${title}</div>` +
    `<pre class="card-pre">${esc(item.text)}</pre></section>`
  );
}

/**
 * A prompt's actions (shown on hover and on keyboard focus, hidden while a run is in progress):
 * Rewind to here… and Fork from here, by the prompt's number.
 */
function promptActions(turn: number): string {
  const n = String(Math.trunc(turn));
  return (
    `<span class="prompt-actions" role="group" aria-label="Prompt ${n}">` +
    `<span class="prompt-number">prompt ${n}</span>` +
    `<button type="button" class="prompt-action" data-action="rewind" data-turn="${n}" ` +
    `title="Rewind to before prompt ${n}: restore the files, the conversation or both (a preview first)">Rewind to here…</button>` +
    `<button type="button" class="prompt-action" data-action="fork" data-turn="${n}" ` +
    `title="Fork from here: a new session with the conversation before prompt ${n}; this one stays as it is">Fork from here</button>` +
    '</span>'
  );
}

// ------------------------------------------------------------------------------------ editor chips

/** A file icon (with text lines when a selection goes with it). */
function fileIcon(selection: boolean): string {
  return (
    '<svg class="chip-icon" viewBox="0 0 16 16" aria-hidden="true">' +
    '<path d="M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3"/>' +
    (selection ? '<path class="chip-icon-lines" d="M5.5 8h5 M5.5 10.5h5 M5.5 13h3"/>' : '') +
    '</svg>'
  );
}

/** `src/` (muted), `app.py`, `:10-14`: a chip's words. */
function chipLabel(chip: EditorChip): string {
  const cut = chip.path.lastIndexOf('/');
  const dir = cut >= 0 ? chip.path.slice(0, cut + 1) : '';
  const name = cut >= 0 ? chip.path.slice(cut + 1) : chip.path;
  return (
    '<span class="chip-label">' +
    (dir ? `<span class="chip-dir">${esc(dir)}</span>` : '') +
    `<span class="chip-name">${esc(name || chip.label)}</span>` +
    (chip.lines ? `<span class="chip-lines">:${esc(chip.lines)}</span>` : '') +
    '</span>'
  );
}

/**
 * The prompt box's chip: the editor's file (and selection) that goes with the next prompt, with
 * an × that leaves it out; empty without one.
 */
export function renderChip(chip: EditorChip | null): string {
  if (!chip) {
    return '';
  }
  return (
    `<span class="chip" title="${esc(chip.title)}">` +
    fileIcon(chip.lines !== undefined) +
    chipLabel(chip) +
    `<button type="button" class="chip-remove" data-action="removeChip" title="Leave it out of the next prompt" ` +
    `aria-label="${esc(`Leave ${chip.label} out of the next prompt`)}">×</button>` +
    '</span>'
  );
}

/** The line under a sent prompt: the file (and selection, problems) it was sent with. */
function sentContext(context: EditorContext | undefined): string {
  const chip = context ? contextChip(context) : null;
  if (!chip) {
    return '';
  }
  const problems = context?.diagnostics?.length ?? 0;
  return (
    `<div class="sent-context"><span class="chip chip-sent" title="${esc(chip.title)}">` +
    fileIcon(chip.lines !== undefined) +
    (chip.path ? chipLabel(chip) : `<span class="chip-label"><span class="chip-name">${esc(chip.label)}</span></span>`) +
    (problems > 0 ? `<span class="chip-problems">${esc(plural(problems, 'problem'))}</span>` : '') +
    '</span></div>'
  );
}

/** One item of the transcript; `open`: a tool card shown unfolded. */
export function renderItem(item: ChatItem, open = false): string {
  // Dimmed when out of context: messages, tool cards and the summary; never markers or notices.
  const id = esc(item.id);
  const out = outOf(item);
  switch (item.kind) {
    case 'user':
      return (
        `<div class="msg user${out.cls}" data-id="${id}"${out.attr}><div class="who">You${out.badge}` +
        (item.turn !== undefined ? promptActions(item.turn) : '') +
        '</div>' +
        `<div class="user-text">${esc(item.text)}</div>` +
        sentContext(item.context) +
        '</div>'
      );
    case 'assistant':
      return (
        `<div class="msg assistant${item.streaming ? ' streaming' : ''}${out.cls}" data-id="${id}"${out.attr}>` +
        out.badge +
        (item.thinking
          ? `<details class="thinking"><summary>Thinking</summary><div class="markdown">${renderMarkdown(item.thinking)}</div></details>`
          : '') +
        `<div class="markdown">${renderMarkdown(item.text)}</div></div>`
      );
    case 'tool':
      return toolCard(item, open);
    case 'approval':
      return approvalCard(item, open);
    case 'summary':
      return (
        `<details class="card summary${out.cls}" data-id="${id}"${out.attr}${open ? ' open' : ''}>` +
        `<summary><span class="event-icon" aria-hidden="true">⇣</span>Summary of the earlier conversation${out.badge}</summary>` +
        `<div class="card-body markdown">${renderMarkdown(item.text)}</div></details>`
      );
    case 'marker':
      return markerLine(item);
    case 'context':
      return contextCard(item);
    case 'status':
      return statusCard(item);
    case 'compact':
      return compactLine(item);
    case 'preview':
      return previewCard(item);
    case 'memory':
      return memoryLine(item);
    case 'notice':
      return (
        `<div class="notice notice-${item.level}" data-id="${id}" role="${item.level === 'error' ? 'alert' : 'note'}">` +
        `${esc(item.text)}</div>`
      );
    case 'end':
      return endLine(item);
    case 'busy':
      return busyCard(item);
    case 'worktree':
      return worktreeCard(item);
  }
}

/** What the transcript shows before the first prompt. */
export function renderWelcome(state: ChatState): string {
  const where = state.folder ? ` about <strong>${esc(state.folder.name)}</strong>` : '';
  if (!state.folder) {
    return '<div class="welcome"><p>Open a folder: the agent works inside a workspace folder.</p></div>';
  }
  return (
    '<div class="welcome">' +
    `<p>Ask PseudoClaude${where}. It reads, edits and runs commands in the workspace; ` +
    'what your approval settings say to ask about (by default: running a command) waits for your answer here.</p>' +
    '<p class="muted"><kbd>Enter</kbd> sends · <kbd>Shift</kbd>+<kbd>Enter</kbd> adds a line · ' +
    '<kbd>↑</kbd> <kbd>↓</kbd> browse earlier prompts' +
    (state.commands && state.commands.length > 0 ? ' · <kbd>/</kbd> lists the commands' : '') +
    '</p>' +
    '</div>'
  );
}

/** The note above a transcript that starts later in the session. */
export function renderEarlier(earlier: number): string {
  return earlier > 0
    ? `<div class="earlier muted">${esc(plural(earlier, 'earlier entry', 'earlier entries'))} not shown</div>`
    : '';
}

// ------------------------------------------------------------------------------------ the meter

/** Units of the bar (the SVG's viewBox width). */
export const BAR_UNITS = 1000;
/** Smallest width of a non-empty category, so that it can be seen and hovered. */
const MIN_UNITS = 4;

export interface BarSegment {
  /** A breakdown key (its CSS class `seg-<key>`); `used` without a breakdown. */
  key: string;
  label: string;
  tokens: number;
  x: number;
  width: number;
  title: string;
}

/**
 * The stacked bar: the ten categories in order, then `free`, as shares of the context window (of
 * the estimate when it exceeds the window). A non-empty category is at least `MIN_UNITS` wide.
 */
export function barSegments(meter: MeterState): BarSegment[] {
  const b = meter.breakdown;
  const estimate = Math.max(0, meter.estimatedTokens);
  const total = Math.max(meter.contextWindow, estimate, 1);
  const keys = [...BREAKDOWN_CATEGORIES] as (keyof Breakdown)[];
  const tokensOf = (key: keyof Breakdown): number => (b ? Math.max(0, Number(b[key]) || 0) : 0);
  const counts = b ? keys.map((key) => ({ key, tokens: tokensOf(key) })) : [{ key: 'messages' as const, tokens: estimate }];
  const segments: BarSegment[] = [];
  let x = 0;
  for (const { key, tokens } of counts) {
    if (tokens <= 0) {
      continue;
    }
    const width = Math.min(BAR_UNITS - x, Math.max(MIN_UNITS, (tokens / total) * BAR_UNITS));
    const label = b ? BREAKDOWN_LABELS[key] : 'Used';
    segments.push({
      key: b ? key : 'used',
      label,
      tokens,
      x,
      width,
      title: `${label}: ${formatCount(tokens)} tokens (${formatShare(tokens, meter.contextWindow)})`,
    });
    x += width;
  }
  const free = b ? tokensOf('free') : Math.max(0, meter.contextWindow - estimate);
  if (x < BAR_UNITS) {
    segments.push({
      key: 'free',
      label: BREAKDOWN_LABELS.free,
      tokens: free,
      x,
      width: BAR_UNITS - x,
      title: `${BREAKDOWN_LABELS.free}: ${formatCount(free)} tokens (${formatShare(free, meter.contextWindow)})`,
    });
  }
  return segments.map((s) => ({ ...s, x: round(s.x), width: round(s.width) }));
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The context meter: the stacked bar (a tooltip per segment), the numbers, the breakdown table. */
export function renderMeter(meter: MeterState | null, open = false): string {
  if (!meter || meter.contextWindow <= 0) {
    return '<div class="meter-empty muted">Context: no conversation yet</div>';
  }
  const segments = barSegments(meter);
  const pct = formatShare(meter.estimatedTokens, meter.contextWindow);
  const summary =
    `${formatCount(meter.estimatedTokens)} of ${formatCount(meter.contextWindow)} tokens (${pct})`;
  const near =
    meter.autoCompactTripped ||
    (meter.autoCompactThreshold > 0 && meter.estimatedTokens >= meter.autoCompactThreshold * WARNING_RATIO);
  const threshold =
    meter.autoCompactThreshold > 0 && meter.contextWindow > 0
      ? round(Math.min(1, meter.autoCompactThreshold / Math.max(meter.contextWindow, meter.estimatedTokens)) * BAR_UNITS)
      : undefined;
  const rects = segments
    .map(
      (s) =>
        `<rect class="seg seg-${esc(s.key)}" x="${s.x}" y="0" width="${s.width}" height="10">` +
        `<title>${esc(s.title)}</title></rect>`,
    )
    .join('');
  const marker =
    threshold === undefined
      ? ''
      : `<rect class="threshold" x="${Math.max(0, threshold - 2)}" y="0" width="3" height="10">` +
        `<title>${esc(`Auto-compact at ${formatCount(meter.autoCompactThreshold)} tokens`)}</title></rect>`;
  const rows = segments
    .filter((s) => s.key !== 'free')
    .map((s) => legendRow(s.key, s.label, s.tokens, meter.contextWindow))
    .join('');
  const extra = meter.breakdown
    ? legendRow('free', BREAKDOWN_LABELS.free, Math.max(0, meter.breakdown.free), meter.contextWindow) +
      legendRow('reserved', BREAKDOWN_LABELS.reserved, Math.max(0, meter.breakdown.reserved), meter.contextWindow)
    : '';
  const warn = meter.autoCompactTripped
    ? '<div class="meter-warn">Automatic compaction stopped after repeated failures: use Compact.</div>'
    : near
      ? '<div class="meter-warn">Close to the auto-compact threshold.</div>'
      : '';
  return (
    `<svg class="meter-bar${near ? ' near' : ''}" viewBox="0 0 ${BAR_UNITS} 10" preserveAspectRatio="none" ` +
    `role="img" aria-label="${esc(`Context: ${summary}`)}">${rects}${marker}</svg>` +
    `<details class="legend"${open ? ' open' : ''}>` +
    `<summary><span class="meter-text">${esc(`${formatTokens(meter.estimatedTokens)} / ${formatTokens(meter.contextWindow)} tokens`)}</span>` +
    `<span class="muted"> · ${esc(pct)} · auto-compact at ${esc(formatTokens(meter.autoCompactThreshold))}</span></summary>` +
    `<table><thead><tr><th scope="col">Context</th><th scope="col">Tokens</th><th scope="col">Share</th></tr></thead>` +
    `<tbody>${rows}${extra}</tbody></table></details>` +
    warn
  );
}

function legendRow(key: string, label: string, tokens: number, window: number): string {
  return (
    `<tr><td><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect class="seg seg-${esc(key)}" width="10" height="10"/></svg>` +
    `${esc(label)}</td><td>${esc(formatCount(tokens))}</td><td>${esc(formatShare(tokens, window))}</td></tr>`
  );
}

// ------------------------------------------------------------------------------------ pickers

/** The session picker's `<option>`s: the active session selected, newest first. */
export function renderSessionOptions(state: ChatState, now: Date): string {
  const sessions: SessionSummary[] = state.sessions.slice();
  if (state.sessionId && !sessions.some((s) => s.id === state.sessionId)) {
    sessions.unshift({
      id: state.sessionId, title: '', createdAt: '', updatedAt: '', messageCount: 0, bytes: 0, model: '', active: true, running: false, worktree: null, answered: false,
    });
  }
  if (sessions.length === 0) {
    return '<option value="" selected>New session</option>';
  }
  const options = sessions.map((s) => {
    const title = oneLine(s.title.trim() || (s.messageCount === 0 ? 'New session' : s.id), 60);
    const when = s.updatedAt ? ` · ${formatAge(s.updatedAt, now)}` : '';
    const selected = s.id === state.sessionId ? ' selected' : '';
    const running = s.running ? '● ' : ''; // being written now, here or in another window
    const asks = state.asking?.includes(s.id) === true; // its run waits for an approval (in the background)
    const asking = asks ? ' · needs your approval' : '';
    const branch = s.worktree ? ` · ⎇ ${s.worktree}` : ''; // works in a git worktree of its own
    const tip = [
      s.running ? 'Running now' : '',
      asks ? 'Its run waits for your approval: pick it to answer' : '',
      s.worktree ? `In a git worktree, branch ${s.worktree}` : '',
    ].filter(Boolean).join('\n');
    return `<option value="${esc(s.id)}"${selected}${tip ? ` title="${esc(tip)}"` : ''}>${esc(`${running}${title}${asking}${branch}${when}`)}</option>`;
  });
  if (!state.sessionId) {
    options.unshift('<option value="" selected>New session</option>');
  }
  return options.join('');
}

/** A git branch icon (the worktree line). */
const BRANCH_ICON =
  '<svg class="wt-icon" viewBox="0 0 16 16" aria-hidden="true">' +
  '<circle cx="4.5" cy="3.5" r="1.6"/><circle cx="4.5" cy="12.5" r="1.6"/><circle cx="11.5" cy="5.5" r="1.6"/>' +
  '<path d="M4.5 5.1v5.8 M11.5 7.1c0 2.6-4.5 2.4-6.6 4.1"/></svg>';

/**
 * The line under the header when the chat's session works in a git worktree: its branch, and
 * Changes, Apply and Remove. Empty otherwise.
 */
export function renderWorktreeBar(state: ChatState): string {
  const branch = worktreeOf(state);
  if (!branch) {
    return '';
  }
  const off = state.running ? ' disabled' : '';
  return (
    `<span class="wt-where" title="${esc(`This session works in a git worktree of its own, on branch ${branch}: its changes reach the folder when you apply them`)}">` +
    `${BRANCH_ICON}<span class="wt-branch">${esc(branch)}</span><span class="wt-label muted">worktree</span></span>` +
    '<span class="wt-buttons">' +
    `<button type="button" data-action="worktreeChanges" title="The files this session changed in its worktree; select one to see its diff">Changes</button>` +
    `<button type="button" data-action="worktreeApply"${off} title="Write the session's changes into the folder (nothing is written when one of them changed there too)">Apply</button>` +
    `<button type="button" data-action="worktreeRemove"${off} title="Delete the worktree and its branch; the session goes on in the folder itself">Remove</button>` +
    '</span>'
  );
}

export function renderFolderOptions(state: ChatState): string {
  return state.folders
    .map((f) => `<option value="${esc(f.uri)}"${f.uri === state.folder?.uri ? ' selected' : ''}>${esc(f.name)}</option>`)
    .join('');
}

/** The header's MCP button: its text (the number of servers; a dot when one failed or waits for an approval) and tooltip. */
export function renderMcpButton(servers: readonly McpServer[] | null): { html: string; title: string } {
  const b = mcpBadge(servers);
  const count = b.count === null || b.count === 0 ? '' : `<span class="mcp-count">${b.count}</span>`;
  const dot = b.warn ? `<span class="mcp-dot mcp-dot-${b.warn}" aria-hidden="true"></span>` : '';
  return { html: `MCP${count}${dot}`, title: b.title };
}

// ------------------------------------------------------------------------------------ the mode picker

/**
 * The prompt box's mode button: `Mode: default ▾`, its tooltip (what the mode means), hidden
 * when the server says no mode (an older one).
 */
export function renderModeButton(state: Pick<ChatState, 'mode'>): { html: string; title: string; hidden: boolean } {
  const mode = state.mode;
  if (mode === null) {
    return { html: '', title: '', hidden: true };
  }
  return {
    html:
      `<span class="mode-label">Mode:</span><span class="mode-name">${esc(mode)}</span>` +
      '<span class="mode-caret" aria-hidden="true">▾</span>',
    title: `Permission mode ${mode}: ${MODE_MEANINGS[mode]}. Click to change; Shift+Tab in the prompt box cycles.`,
    hidden: false,
  };
}

/**
 * The mode picker's menu: the modes offered, each with what it means, the current one checked
 * (`active`: the row with the keyboard), then the sandbox and how to get bypassPermissions
 * when it is not offered.
 */
export function renderModeMenu(state: Pick<ChatState, 'mode' | 'modes' | 'sandbox'>, active = -1): string {
  const modes = state.modes ?? (state.mode ? [state.mode] : offeredModes(null));
  const rows = modes.map((m, i) => {
    const checked = m === state.mode;
    return (
      `<button type="button" role="menuitemradio" aria-checked="${checked}" tabindex="${i === active ? 0 : -1}" ` +
      `class="mode-item mode-${esc(m)}${checked ? ' checked' : ''}${i === active ? ' active' : ''}" data-mode="${esc(m)}" data-index="${i}">` +
      `<span class="mode-check" aria-hidden="true">${checked ? '✓' : ''}</span>` +
      `<span class="mode-item-name">${esc(m)}</span>` +
      `<span class="mode-item-meaning">${esc(MODE_MEANINGS[m])}</span></button>`
    );
  });
  const notes: string[] = [];
  if (state.sandbox) {
    notes.push(`Sandbox for commands: ${esc(sandboxText(state.sandbox))}`);
  }
  if (state.modes && !state.modes.includes('bypassPermissions')) {
    notes.push('bypassPermissions: turn on <code>permissions.allowBypass</code> in your user settings');
  }
  return (
    rows.join('') +
    (notes.length > 0 ? `<div class="mode-menu-notes">${notes.map((n) => `<div>${n}</div>`).join('')}</div>` : '')
  );
}
