/**
 * The session's task list (SPEC §13 "Plan, then act; a task list"): what the model keeps with
 * `update_tasks`, shown as a checklist above the prompt box for the session the chat shows. The
 * server sends the whole list after each change (a `tasks` event) and answers
 * `pseudoclaude/tasks`; here it is checked, counted and rendered. Pure: no DOM, no `vscode` (the
 * webview bundles it).
 */
import { escapeHtml as esc } from './escape';
import type { TaskStatus } from '../protocol';

export interface ChatTask {
  content: string;
  status: TaskStatus;
}

const STATUSES: readonly string[] = ['pending', 'in_progress', 'completed'];

/** The list as the chat keeps it: items with text, an unknown status read as pending. */
export function cleanTasks(tasks: unknown): ChatTask[] {
  if (!Array.isArray(tasks)) {
    return [];
  }
  const out: ChatTask[] = [];
  for (const t of tasks) {
    if (typeof t !== 'object' || t === null) {
      continue;
    }
    const { content, status } = t as { content?: unknown; status?: unknown };
    if (typeof content !== 'string' || content.trim() === '') {
      continue;
    }
    out.push({ content: content.trim(), status: typeof status === 'string' && STATUSES.includes(status) ? (status as TaskStatus) : 'pending' });
  }
  return out;
}

export function sameTasks(a: readonly ChatTask[], b: readonly ChatTask[]): boolean {
  return a.length === b.length && a.every((t, i) => t.content === b[i]?.content && t.status === b[i]?.status);
}

/** How many are completed, of how many. */
export function taskCount(tasks: readonly ChatTask[]): { done: number; total: number } {
  return { done: tasks.filter((t) => t.status === 'completed').length, total: tasks.length };
}

/** The task being worked on (the first in progress), if any. */
export function currentTask(tasks: readonly ChatTask[]): ChatTask | undefined {
  return tasks.find((t) => t.status === 'in_progress');
}

/**
 * The one line of an `update_tasks` call's card: `2/4 done · ▶ the task in progress` (`4 tasks`
 * when none is done yet; `cleared` for an empty list).
 */
export function tasksLine(tasks: readonly ChatTask[]): string {
  if (tasks.length === 0) {
    return 'cleared';
  }
  const { done, total } = taskCount(tasks);
  const current = currentTask(tasks);
  const count = done === 0 ? `${total} ${total === 1 ? 'task' : 'tasks'}` : `${done}/${total} done`;
  return current ? `${count} · ▶ ${current.content}` : count;
}

const STATUS_WORDS: Record<TaskStatus, string> = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

export interface TasksView {
  /** Only the header line (the list folded). */
  collapsed: boolean;
  /** A run of the session is in progress: the task in progress gets a spinner (else a ▶). */
  running: boolean;
}

/**
 * The checklist: a header (`Tasks 2/5`, the task in progress when folded) that folds the list,
 * then one line per task: completed struck through, in progress in bold with a spinner (▶ when
 * nothing runs), pending plain (folded: the list is hidden). Empty (the element hidden) for an
 * empty list.
 */
export function renderTasks(tasks: readonly ChatTask[], view: TasksView): string {
  if (tasks.length === 0) {
    return '';
  }
  const { done, total } = taskCount(tasks);
  const current = currentTask(tasks);
  const all = done === total;
  const summary = `${done} of ${total} tasks done${current ? `; in progress: ${current.content}` : ''}`;
  const header =
    `<button type="button" class="tasks-header" data-action="toggleTasks" aria-expanded="${!view.collapsed}" ` +
    `aria-controls="tasks-list" title="${esc(view.collapsed ? 'Show the task list' : 'Fold the task list')}">` +
    `<span class="tasks-caret" aria-hidden="true">${view.collapsed ? '▸' : '▾'}</span>` +
    '<span class="tasks-title">Tasks</span>' +
    `<span class="tasks-count${all ? ' tasks-all-done' : ''}" aria-label="${esc(summary)}">${done}/${total}</span>` +
    (view.collapsed && current ? `<span class="tasks-current">${esc(current.content)}</span>` : '') +
    '</button>';
  const rows = tasks.map((t) => {
    const mark =
      t.status === 'completed'
        ? '<span class="task-mark" aria-hidden="true">✓</span>'
        : t.status === 'in_progress'
          ? view.running
            ? '<span class="task-mark"><span class="task-spinner" aria-hidden="true"></span></span>'
            : '<span class="task-mark" aria-hidden="true">▶</span>'
          : '<span class="task-mark" aria-hidden="true">○</span>';
    const text = t.status === 'completed' ? `<s>${esc(t.content)}</s>` : esc(t.content);
    return (
      `<li class="task task-${t.status}" title="${esc(`${t.content} (${STATUS_WORDS[t.status]})`)}">` +
      `${mark}<span class="task-text">${text}</span>` +
      `<span class="visually-hidden"> (${STATUS_WORDS[t.status]})</span></li>`
    );
  });
  return `${header}<ol id="tasks-list" class="tasks-list"${view.collapsed ? ' hidden' : ''}>${rows.join('')}</ol>`;
}
