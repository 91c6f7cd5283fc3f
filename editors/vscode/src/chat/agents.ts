/**
 * Sub-agents in the chat (docs/agents.md): the parent's `agent` call is one card that holds its
 * sub-agent (type, name, description, status, its own tool calls as they run, its usage), and
 * the session's background tasks are a small list above the prompt box. A sub-agent's events
 * carry its `agentId`; the card of the `agent` call that started it is found by the call's id
 * (`pseudoclaude/agents/list` says `callId`), by the `taskId` a background call answers, or,
 * until the list says, by the order of the calls (the oldest running `agent` call with no
 * sub-agent yet, its description first). Pure: no DOM, no `vscode` (the webview bundles it).
 */
import { escapeHtml as esc } from './escape';
import type { AgentInfo } from '../protocol';

export type AgentStatus = 'running' | 'completed' | 'failed' | 'canceled' | 'max_turns';

const STATUSES: readonly string[] = ['running', 'completed', 'failed', 'canceled', 'max_turns'];

export function agentStatus(value: unknown): AgentStatus | undefined {
  return typeof value === 'string' && STATUSES.includes(value) ? (value as AgentStatus) : undefined;
}

/** One tool call of a sub-agent (a line of its card). */
export interface AgentCall {
  callId: string;
  name: string;
  arguments: unknown;
  status: 'running' | 'done' | 'failed' | 'denied' | 'canceled' | 'interrupted';
  /** The readable result, or the error. */
  display?: string;
}

/** A sub-agent as its card shows it. */
export interface ChatAgent {
  agentId: string;
  status: AgentStatus;
  subagentType?: string;
  name?: string;
  description?: string;
  /** Started with `run_in_background` (a task: Stop asks `pseudoclaude/agents/stop`). */
  background?: boolean;
  calls: AgentCall[];
  /** The end of what it said last (its answer streams here). */
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** The usage is the log's (`agents/list`): live events no longer add to it. */
  usageFinal?: boolean;
  /** Its warnings and errors (the last few). */
  notes: string[];
}

/** A background task of the session (the list above the prompt box), from `task` events. */
export interface BackgroundTask {
  taskId: string;
  status: AgentStatus;
  subagentType: string;
  label: string;
  result?: string;
}

/** At most this many of a sub-agent's calls are kept (the oldest go; its transcript has all). */
export const AGENT_CALLS = 50;
/** At most this many characters of what it says are kept (the end). */
export const AGENT_TEXT = 2000;

export function newAgent(agentId: string, extra: Partial<ChatAgent> = {}): ChatAgent {
  return { agentId, status: 'running', calls: [], text: '', inputTokens: 0, outputTokens: 0, notes: [], ...extra };
}

/** The `taskId` a background `agent` call answers (`{"taskId": "...", "status": "running"}`). */
export function taskIdOf(display: string | undefined): string | undefined {
  if (!display || !display.trimStart().startsWith('{')) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(display) as { taskId?: unknown };
    return typeof parsed.taskId === 'string' && /^agent-[0-9a-f]{6,32}$/.test(parsed.taskId) ? parsed.taskId : undefined;
  } catch {
    return undefined;
  }
}

/** What `agents/list` says of it (the log's word wins over the live guess, but not its live calls). */
export function withInfo(agent: ChatAgent, info: AgentInfo): ChatAgent {
  const status = agentStatus(info.status) ?? agent.status;
  const ended = status !== 'running';
  return {
    ...agent,
    status,
    subagentType: info.subagentType || agent.subagentType,
    ...(info.name ? { name: info.name } : {}),
    description: info.description || agent.description,
    // A sub-agent's log has its usage once it ended; while it runs, the events add up.
    ...(ended && (info.usage.inputTokens > 0 || info.usage.outputTokens > 0)
      ? { inputTokens: info.usage.inputTokens, outputTokens: info.usage.outputTokens, usageFinal: true }
      : {}),
  };
}

/** The `agent` call's arguments, read. */
export function agentArgs(args: unknown): { description?: string; subagentType?: string; name?: string; background?: boolean } {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return {};
  }
  const a = args as Record<string, unknown>;
  const s = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const description = s(a.description) ?? (s(a.prompt) ? (s(a.prompt) ?? '').split(/\s+/).join(' ').slice(0, 80) : undefined);
  return {
    ...(description ? { description } : {}),
    ...(s(a.subagent_type) ? { subagentType: s(a.subagent_type) } : {}),
    ...(s(a.name) ? { name: s(a.name) } : {}),
    ...(a.run_in_background === true ? { background: true } : {}),
  };
}

const TASK_WORDS: Record<AgentStatus, { icon: string; text: string }> = {
  running: { icon: '', text: 'running' },
  completed: { icon: '✓', text: 'completed' },
  failed: { icon: '✗', text: 'failed' },
  canceled: { icon: '○', text: 'stopped' },
  max_turns: { icon: '!', text: 'hit its turn limit' },
};

export function statusWords(status: AgentStatus): { icon: string; text: string } {
  return TASK_WORDS[status];
}

/**
 * The background tasks above the prompt box: a header (`Background tasks 1 running`) then one
 * line each (a spinner while it runs, its state after; Stop for a running one, the transcript
 * for each). Empty (hidden) when the session started none.
 */
export function renderBackgroundTasks(tasks: readonly BackgroundTask[]): string {
  if (tasks.length === 0) {
    return '';
  }
  const running = tasks.filter((t) => t.status === 'running').length;
  const rows = tasks.map((t) => {
    const words = statusWords(t.status);
    const mark = t.status === 'running'
      ? '<span class="task-mark"><span class="task-spinner" aria-hidden="true"></span></span>'
      : `<span class="task-mark" aria-hidden="true">${words.icon}</span>`;
    const id = esc(t.taskId);
    const stop = t.status === 'running'
      ? `<button type="button" class="link" data-action="stopAgent" data-agent="${id}" data-background="true" title="Stop this background sub-agent">Stop</button>`
      : '';
    return (
      `<li class="bg-task bg-task-${t.status}" title="${esc(`${t.label} (${t.subagentType}, ${words.text})${t.result ? `\n${t.result}` : ''}`)}">` +
      `${mark}<span class="bg-task-type">${esc(t.subagentType)}</span><span class="task-text">${esc(t.label)}</span>` +
      `<span class="bg-task-status">${words.text}</span>${stop}` +
      `<button type="button" class="link" data-action="agentTranscript" data-agent="${id}" title="Open its transcript">Transcript</button></li>`
    );
  });
  return (
    `<div class="tasks-header bg-tasks-header"><span class="tasks-title">Background tasks</span>` +
    `<span class="tasks-count">${running > 0 ? `${running} running` : 'none running'}</span></div>` +
    `<ul class="tasks-list bg-tasks-list">${rows.join('')}</ul>`
  );
}
