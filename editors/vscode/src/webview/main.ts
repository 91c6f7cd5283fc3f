/**
 * The chat webview's script (bundled by esbuild into `out/webview/chat.js`). It only wires the DOM:
 * the state comes from the host (`restore`, then the reducer's actions), the HTML from
 * `../chat/render`, the prompt keys from `../chat/prompt`. Every event listener is attached here
 * (the Content-Security-Policy forbids inline handlers).
 */
import type { FromWebview, ToWebview } from '../chat/messages';
import { emptyState, promptsOf, reduce, type ChatItem, type ChatState } from '../chat/model';
import { PromptHistory, promptKey } from '../chat/prompt';
import {
  renderChip,
  renderEarlier,
  renderFolderOptions,
  renderItem,
  renderMcpButton,
  renderMeter,
  renderModeButton,
  renderModeMenu,
  renderSessionOptions,
  agentRunning,
  renderWelcome,
  renderWorktreeBar,
} from '../chat/render';
import { EndPin, atEnd } from '../chat/scroll';
import { escapeHtml } from '../chat/markdown';
import { completeSlash, renderSlashList, slashCompletions, slashKey, slashWord } from '../chat/slash';
import { renderTasks } from '../chat/tasks';
import { renderBackgroundTasks } from '../chat/agents';
import { nextMode, offeredModes } from '../permissions';
import type { PermissionMode, SlashCommand } from '../protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface Saved {
  history?: string[];
  draft?: string;
  /** The task list shows its header only. */
  tasksCollapsed?: boolean;
}

const api = acquireVsCodeApi();
const post = (m: FromWebview): void => api.postMessage(m);

function el<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) {
    throw new Error(`chat: #${id} is missing`);
  }
  return found as T;
}

const transcript = el<HTMLElement>('transcript');
const meter = el<HTMLElement>('meter');
const prompt = el<HTMLTextAreaElement>('prompt');
const sendButton = el<HTMLButtonElement>('send');
const cancelButton = el<HTMLButtonElement>('cancel');
const sessionSelect = el<HTMLSelectElement>('session');
const folderSelect = el<HTMLSelectElement>('folder');
const status = el<HTMLElement>('status');
const slashList = el<HTMLUListElement>('slash');
const newButton = el<HTMLButtonElement>('new');
const sessionButtons = ['compact', 'undo'].map((id) => el<HTMLButtonElement>(id));
const mcpButton = el<HTMLButtonElement>('mcp');
const chipRow = el<HTMLElement>('chip');
const worktreeBar = el<HTMLElement>('worktree');
const modeButton = el<HTMLButtonElement>('mode');
const modeMenu = el<HTMLElement>('mode-menu');
const modeError = el<HTMLElement>('mode-error');
const tasksBox = el<HTMLElement>('tasks');
const bgTasksBox = el<HTMLElement>('bg-tasks');

const saved = (api.getState() ?? {}) as Saved;
const history = new PromptHistory(saved.history ?? []);
prompt.value = saved.draft ?? '';
let tasksCollapsed = saved.tasksCollapsed === true;

let state: ChatState = emptyState();
let restored = false;
let fullRender = true;
let scheduled = false;
/** What each item element shows (re-rendered when the reducer replaced the item). */
const shown = new Map<string, { item: ChatItem; node: Element }>();
/** Cards (tool calls, summaries) the user unfolded. */
const unfolded = new Set<string>();
/** Sub-agent cards the user folded (they show unfolded while their sub-agent runs). */
const folded = new Set<string>();
const last = { meter: '', sessions: '', folders: '', mcp: '', chip: '', worktree: '', mode: '', modeMenu: '', tasks: '', bgTasks: '' };

/** Whether item's card shows unfolded. */
function isOpen(item: ChatItem): boolean {
  return unfolded.has(item.id) || (agentRunning(item) && !folded.has(item.id));
}
/** Whether the transcript follows its end (kept there when the view gets shorter). */
const pin = new EndPin();

function save(): void {
  api.setState({ history: history.all(), draft: prompt.value, tasksCollapsed } satisfies Saved);
}

function fromHtml(html: string): Element {
  const t = document.createElement('template');
  t.innerHTML = html;
  const node = t.content.firstElementChild;
  if (!node) {
    throw new Error('chat: empty render');
  }
  return node;
}

function atBottom(): boolean {
  return atEnd(transcript);
}

function schedule(): void {
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(render);
  }
}

function renderTranscript(): void {
  if (fullRender) {
    fullRender = false;
    shown.clear();
    const parts = [renderEarlier(state.earlier)];
    for (const item of state.items) {
      parts.push(renderItem(item, isOpen(item)));
    }
    if (state.items.length === 0) {
      parts.push(renderWelcome(state));
    }
    transcript.innerHTML = parts.join('');
    for (const item of state.items) {
      const node = transcript.querySelector(`[data-id="${CSS.escape(item.id)}"]`);
      if (node) {
        shown.set(item.id, { item, node });
      }
    }
    return;
  }
  const welcome = transcript.querySelector('.welcome');
  if (welcome && state.items.length > 0) {
    welcome.remove();
  } else if (welcome) {
    // The server's commands (the `/` hint) or the folder may have come after the restore.
    const html = renderWelcome(state);
    if (welcome.outerHTML !== html) {
      welcome.replaceWith(fromHtml(html));
    }
  }
  for (const item of state.items) {
    const was = shown.get(item.id);
    if (was?.item === item) {
      continue;
    }
    const node = fromHtml(renderItem(item, isOpen(item)));
    if (was) {
      was.node.replaceWith(node);
    } else {
      transcript.append(node);
    }
    shown.set(item.id, { item, node });
  }
}

function render(): void {
  scheduled = false;
  const stick = atBottom();
  renderTranscript();
  const meterHtml = renderMeter(state.meter);
  if (meterHtml !== last.meter) {
    const open = meter.querySelector('details')?.open ?? false;
    meter.innerHTML = meterHtml;
    const details = meter.querySelector('details');
    if (details && open) {
      details.open = true;
    }
    last.meter = meterHtml;
  }
  const sessions = renderSessionOptions(state, new Date());
  if (sessions !== last.sessions) {
    sessionSelect.innerHTML = sessions;
    last.sessions = sessions;
  }
  const folders = renderFolderOptions(state);
  if (folders !== last.folders) {
    folderSelect.innerHTML = folders;
    last.folders = folders;
  }
  folderSelect.hidden = state.folders.length < 2;
  const mcp = renderMcpButton(state.mcp);
  if (mcp.html + mcp.title !== last.mcp) {
    mcpButton.innerHTML = mcp.html;
    mcpButton.title = mcp.title;
    mcpButton.setAttribute('aria-label', mcp.title);
    last.mcp = mcp.html + mcp.title;
  }
  mcpButton.disabled = !state.folder;
  const chip = renderChip(state.chip);
  if (chip !== last.chip) {
    chipRow.innerHTML = chip;
    chipRow.hidden = chip === '';
    last.chip = chip;
  }
  const worktree = renderWorktreeBar(state);
  if (worktree !== last.worktree) {
    worktreeBar.innerHTML = worktree;
    worktreeBar.hidden = worktree === '';
    last.worktree = worktree;
  }
  renderMode();
  renderTaskList();
  renderBackgroundList();
  const running = state.running;
  cancelButton.hidden = !running;
  sendButton.disabled = running;
  // Another session (or a new one) may be picked while this one runs: its run goes on in the background.
  sessionSelect.disabled = false;
  folderSelect.disabled = running;
  newButton.disabled = !state.folder;
  for (const b of sessionButtons) {
    b.disabled = running || !state.folder;
  }
  transcript.setAttribute('aria-busy', String(running));
  const pending = state.items.filter((i) => i.kind === 'approval' && i.status === 'pending');
  const waiting = pending.length > 0;
  const planWait = pending.some((i) => i.kind === 'approval' && i.about === 'plan');
  const busyWait = state.items.some((i) => i.kind === 'busy' && i.status === 'waiting');
  status.textContent = waiting
    ? planWait
      ? 'Waiting for your approval of the plan'
      : 'Waiting for your approval'
    : busyWait
      ? 'Waiting for the session to be free… (Stop cancels)'
      : running
        ? 'Working… (Stop cancels the run)'
        : '';
  if (stick) {
    transcript.scrollTop = transcript.scrollHeight;
  }
  pin.seen(transcript);
}

// ------------------------------------------------------------------------ the task list

/** The checklist above the prompt box (hidden when the session has no task list). */
function renderTaskList(): void {
  const html = renderTasks(state.tasks, { collapsed: tasksCollapsed, running: state.running });
  if (html !== last.tasks) {
    const focused = tasksBox.contains(document.activeElement);
    tasksBox.innerHTML = html;
    tasksBox.hidden = html === '';
    last.tasks = html;
    if (focused) {
      tasksBox.querySelector<HTMLElement>('.tasks-header')?.focus();
    }
    // The task in progress in view (a long list scrolls).
    tasksBox.querySelector('.task-in_progress')?.scrollIntoView({ block: 'nearest' });
  }
}

/** The background tasks above the task list (hidden when the session started none). */
function renderBackgroundList(): void {
  const html = renderBackgroundTasks(state.bgTasks);
  if (html !== last.bgTasks) {
    bgTasksBox.innerHTML = html;
    bgTasksBox.hidden = html === '';
    last.bgTasks = html;
  }
}

function toggleTasks(): void {
  tasksCollapsed = !tasksCollapsed;
  save();
  renderTaskList();
}

// ------------------------------------------------------------------------ the mode picker

/** The mode menu: open or not, and the row with the keyboard. */
const modePicker = { open: false, active: 0 };

function offered(): PermissionMode[] {
  return state.modes ?? (state.mode ? [state.mode] : offeredModes(null));
}

function renderMode(): void {
  const button = renderModeButton(state);
  if (button.html + button.title !== last.mode) {
    modeButton.innerHTML = button.html;
    modeButton.title = button.title;
    modeButton.setAttribute('aria-label', button.title);
    modeButton.className = `mode-button${state.mode ? ` mode-${state.mode}` : ''}`;
    last.mode = button.html + button.title;
  }
  modeButton.hidden = button.hidden;
  modeButton.disabled = !state.folder;
  if (button.hidden && modePicker.open) {
    closeModeMenu(false);
  }
  modeError.textContent = state.modeError ?? '';
  modeError.hidden = !state.modeError;
  if (modePicker.open) {
    showModeMenu();
  }
}

function showModeMenu(): void {
  const html = renderModeMenu(state, modePicker.active);
  if (html !== last.modeMenu) {
    const focused = modeMenu.contains(document.activeElement);
    modeMenu.innerHTML = html;
    last.modeMenu = html;
    if (focused) {
      modeMenu.querySelector<HTMLElement>('.mode-item.active')?.focus();
    }
  }
  modeMenu.hidden = false;
  modeButton.setAttribute('aria-expanded', 'true');
}

function openModeMenu(): void {
  modePicker.open = true;
  modePicker.active = Math.max(0, offered().indexOf(state.mode as PermissionMode));
  showModeMenu();
  modeMenu.querySelector<HTMLElement>('.mode-item.active')?.focus();
}

function closeModeMenu(focusButton: boolean): void {
  modePicker.open = false;
  modeMenu.hidden = true;
  modeMenu.innerHTML = '';
  last.modeMenu = '';
  modeButton.setAttribute('aria-expanded', 'false');
  if (focusButton) {
    modeButton.focus();
  }
}

function chooseMode(mode: PermissionMode): void {
  closeModeMenu(false);
  prompt.focus();
  if (mode !== state.mode) {
    post({ type: 'setMode', mode });
  }
}

modeMenu.addEventListener('keydown', (e) => {
  const n = offered().length;
  const move = (to: number): void => {
    e.preventDefault();
    modePicker.active = (to + n) % n;
    showModeMenu();
    modeMenu.querySelector<HTMLElement>('.mode-item.active')?.focus();
  };
  switch (e.key) {
    case 'ArrowDown':
      move(modePicker.active + 1);
      break;
    case 'ArrowUp':
      move(modePicker.active - 1);
      break;
    case 'Home':
      move(0);
      break;
    case 'End':
      move(n - 1);
      break;
    case 'Escape':
      e.preventDefault();
      closeModeMenu(true);
      break;
    case 'Tab':
      closeModeMenu(false);
      break;
  }
});

// A click anywhere else closes the menu.
document.addEventListener('mousedown', (e) => {
  if (modePicker.open && e.target instanceof Node && !modeMenu.contains(e.target) && !modeButton.contains(e.target)) {
    closeModeMenu(false);
  }
});

// ------------------------------------------------------------------------ slash completion

/** The completion list shown under the prompt box (empty: hidden). */
const slash = { items: [] as SlashCommand[], selected: 0, dismissed: '' };

function updateSlash(): void {
  const value = prompt.value;
  const items = value === slash.dismissed ? [] : slashCompletions(value, prompt.selectionStart, state.commands);
  const same = items.length === slash.items.length && items.every((c, i) => c === slash.items[i]);
  if (!same) {
    slash.items = items;
    slash.selected = 0;
  }
  showSlash();
}

function showSlash(): void {
  const open = slash.items.length > 0;
  slashList.hidden = !open;
  prompt.setAttribute('aria-expanded', String(open));
  if (!open) {
    slashList.innerHTML = '';
    prompt.removeAttribute('aria-activedescendant');
    return;
  }
  slashList.innerHTML = renderSlashList(slash.items, slash.selected, escapeHtml);
  prompt.setAttribute('aria-activedescendant', `slash-${slash.selected}`);
  slashList.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
}

function closeSlash(): void {
  slash.dismissed = prompt.value;
  slash.items = [];
  showSlash();
}

function completeWith(command: SlashCommand | undefined): void {
  if (command) {
    setPrompt(completeSlash(command));
    slash.items = [];
    showSlash();
    prompt.focus();
  }
}

/** A key while the list is open; true when it was handled here. */
function slashKeydown(e: KeyboardEvent): boolean {
  if (slash.items.length === 0) {
    return false;
  }
  const action = slashKey(e, slashWord(prompt.value, prompt.selectionStart), slash.items[slash.selected]);
  const n = slash.items.length;
  switch (action) {
    case 'next':
      slash.selected = (slash.selected + 1) % n;
      showSlash();
      break;
    case 'previous':
      slash.selected = (slash.selected - 1 + n) % n;
      showSlash();
      break;
    case 'complete':
      completeWith(slash.items[slash.selected]);
      break;
    case 'close':
      closeSlash();
      break;
    case 'none':
      return false;
  }
  e.preventDefault();
  return true;
}

slashList.addEventListener('mousedown', (e) => {
  // Keep the caret in the prompt box; a click picks the item.
  e.preventDefault();
  const item = e.target instanceof Element ? e.target.closest<HTMLElement>('.slash-item') : null;
  if (item) {
    completeWith(slash.items[Number(item.dataset.index)]);
  }
});

function send(): void {
  const text = prompt.value;
  if (text.trim() === '' || state.running) {
    return;
  }
  history.push(text);
  prompt.value = '';
  slash.items = [];
  showSlash();
  fitPrompt();
  save();
  post({ type: 'send', prompt: text });
}

/** The prompt box grows with its text up to a limit (CSSOM, which the CSP allows). */
function fitPrompt(): void {
  prompt.style.height = 'auto';
  prompt.style.height = `${Math.min(prompt.scrollHeight + 2, 240)}px`;
}

function setPrompt(text: string): void {
  prompt.value = text;
  const end = text.length;
  prompt.setSelectionRange(end, end);
  fitPrompt();
  save();
}

prompt.addEventListener('keydown', (e) => {
  if (slashKeydown(e)) {
    return;
  }
  const action = promptKey(e, prompt.value, prompt.selectionStart, prompt.selectionEnd);
  if (action === 'send') {
    e.preventDefault();
    send();
  } else if (action === 'previous') {
    const text = history.previous(prompt.value);
    if (text !== undefined) {
      e.preventDefault();
      setPrompt(text);
    }
  } else if (action === 'next') {
    const text = history.next();
    if (text !== undefined) {
      e.preventDefault();
      setPrompt(text);
    }
  } else if (action === 'cycleMode' && state.mode !== null) {
    // Shift+Tab: the next mode offered (the caret stays in the box).
    e.preventDefault();
    const next = nextMode(offered(), state.mode);
    if (next) {
      post({ type: 'setMode', mode: next });
    }
  }
});
prompt.addEventListener('input', () => {
  fitPrompt();
  save();
  updateSlash();
});
prompt.addEventListener('blur', () => {
  slash.items = [];
  showSlash();
});

function copyCode(button: HTMLElement): void {
  const code = button.closest('.code-block')?.querySelector('code')?.textContent ?? '';
  post({ type: 'copy', text: code });
  button.textContent = 'Copied';
  window.setTimeout(() => {
    button.textContent = 'Copy';
  }, 1500);
}

/** What an approval card's "Tell the agent why" field holds (trimmed), if anything. */
function denyMessageOf(id: string): string | undefined {
  const input = transcript.querySelector<HTMLInputElement>(`input.deny-message[data-id="${CSS.escape(id)}"]`);
  const text = input?.value.trim();
  return text ? text : undefined;
}

/** What a plan card's feedback field holds (trimmed), if anything. */
function feedbackOf(id: string): string | undefined {
  const input = transcript.querySelector<HTMLInputElement>(`input.plan-feedback[data-id="${CSS.escape(id)}"]`);
  const text = input?.value.trim();
  return text ? text : undefined;
}

/** Draw item `id` again (`unfolded` changed for it). */
function redraw(id: string): void {
  const item = state.items.find((i) => i.id === id);
  const was = shown.get(id);
  if (!item || !was) {
    return;
  }
  const node = fromHtml(renderItem(item, isOpen(item)));
  was.node.replaceWith(node);
  shown.set(id, { item, node });
}

/** A plan card's Keep planning…: its feedback field opens (with the keyboard), or closes. */
function togglePlanFeedback(id: string, open: boolean): void {
  if (open) {
    unfolded.add(id);
  } else {
    unfolded.delete(id);
  }
  redraw(id);
  const input = transcript.querySelector<HTMLInputElement>(`input.plan-feedback[data-id="${CSS.escape(id)}"]`);
  if (open) {
    input?.focus();
    input?.scrollIntoView({ block: 'nearest' });
  } else {
    transcript.querySelector<HTMLElement>(`button[data-action="planFeedback"][data-id="${CSS.escape(id)}"]`)?.focus();
  }
}

/** Keep planning, with what the feedback field says. */
function keepPlanning(id: string): void {
  const feedback = feedbackOf(id);
  post(feedback ? { type: 'approve', id, decision: 'keepPlanning', message: feedback } : { type: 'approve', id, decision: 'keepPlanning' });
  unfolded.delete(id);
  prompt.focus();
}

function instructionsOf(id: string): string | undefined {
  const input = transcript.querySelector<HTMLInputElement>(`input.instructions[data-id="${CSS.escape(id)}"]`);
  const text = input?.value.trim();
  return text ? text : undefined;
}

document.addEventListener('click', (e) => {
  const target = e.target instanceof Element ? e.target : null;
  if (!target) {
    return;
  }
  const item = target.closest<HTMLElement>('.mode-item[data-mode]');
  if (item) {
    const mode = offered().find((m) => m === item.dataset.mode);
    if (mode) {
      chooseMode(mode);
    }
    return;
  }
  const link = target.closest('a[href]');
  if (link) {
    e.preventDefault();
    post({ type: 'openLink', href: link.getAttribute('href') ?? '' });
    return;
  }
  const button = target.closest<HTMLElement>('[data-action]');
  if (!button || (button instanceof HTMLButtonElement && button.disabled)) {
    return;
  }
  const id = button.dataset.id ?? '';
  switch (button.dataset.action) {
    case 'send':
      send();
      break;
    case 'cancel':
      post({ type: 'cancel' });
      break;
    case 'newSession':
      post({ type: 'newSession' });
      break;
    case 'compactPreview':
      post({ type: 'compactPreview' });
      break;
    case 'undo':
      post({ type: 'undo' });
      break;
    case 'mcp':
      post({ type: 'mcp' });
      break;
    case 'removeChip':
      post({ type: 'removeChip' });
      prompt.focus();
      break;
    case 'copy':
      copyCode(button);
      break;
    case 'approve': {
      const decision = button.dataset.decision;
      if (decision === 'deny') {
        const message = denyMessageOf(id);
        post(message ? { type: 'approve', id, decision, message } : { type: 'approve', id, decision });
        prompt.focus();
      } else if (decision === 'allowOnce' || decision === 'allowSession' || decision === 'allowAlways') {
        post({ type: 'approve', id, decision });
        prompt.focus();
      } else if (decision === 'approve') {
        const mode = button.dataset.mode === 'acceptEdits' ? 'acceptEdits' : 'default';
        post({ type: 'approve', id, decision, mode });
        unfolded.delete(id);
        prompt.focus();
      } else if (decision === 'keepPlanning') {
        keepPlanning(id);
      }
      break;
    }
    case 'planFeedback':
      togglePlanFeedback(id, !unfolded.has(id));
      break;
    case 'toggleTasks':
      toggleTasks();
      break;
    case 'stopAgent':
      post({ type: 'stopAgent', agentId: button.dataset.agent ?? '', background: button.dataset.background === 'true' });
      break;
    case 'agentTranscript':
      if (button.dataset.agent) {
        post({ type: 'agentTranscript', agentId: button.dataset.agent });
      }
      break;
    case 'modeMenu':
      if (modePicker.open) {
        closeModeMenu(false);
      } else {
        openModeMenu();
      }
      break;
    case 'showDiff':
      post({ type: 'showDiff', id });
      break;
    case 'busyFork':
    case 'busyWait':
    case 'busyCancel':
      post({ type: button.dataset.action, id });
      break;
    case 'worktreeChanges':
    case 'worktreeApply':
    case 'worktreeRemove':
      post({ type: button.dataset.action });
      break;
    case 'compactConfirm': {
      const instructions = instructionsOf(id);
      post(instructions ? { type: 'compactConfirm', id, instructions } : { type: 'compactConfirm', id });
      break;
    }
    case 'compactCancel':
      post({ type: 'compactCancel', id });
      break;
    case 'rewind':
    case 'fork': {
      const turn = Number(button.dataset.turn);
      if (Number.isSafeInteger(turn) && turn > 0) {
        post(button.dataset.action === 'rewind' ? { type: 'rewind', turn } : { type: 'fork', turn });
      }
      break;
    }
  }
});

transcript.addEventListener(
  'toggle',
  (e) => {
    const details = e.target;
    if (details instanceof HTMLDetailsElement && details.dataset.id) {
      if (details.open) {
        unfolded.add(details.dataset.id);
        folded.delete(details.dataset.id);
      } else {
        unfolded.delete(details.dataset.id);
        if (details.classList.contains('agent-card')) {
          folded.add(details.dataset.id);
        }
      }
      pin.seen(transcript);
    }
  },
  true,
);

transcript.addEventListener('scroll', () => pin.seen(transcript), { passive: true });
// The view got shorter (another view opened below it, the prompt grew) or taller: a transcript
// that was at its end stays there.
new ResizeObserver(() => {
  if (pin.resized(transcript)) {
    transcript.scrollTop = transcript.scrollHeight;
  }
}).observe(transcript);

transcript.addEventListener('keydown', (e) => {
  const target = e.target;
  // Enter in an approval's "Tell the agent why" field denies, with it.
  if (e.key === 'Enter' && !e.isComposing && target instanceof HTMLInputElement && target.classList.contains('deny-message')) {
    e.preventDefault();
    const id = target.dataset.id ?? '';
    const text = target.value.trim();
    post(text ? { type: 'approve', id, decision: 'deny', message: text } : { type: 'approve', id, decision: 'deny' });
    prompt.focus();
    return;
  }
  // Enter in a plan's feedback field keeps planning, with it; Escape closes the field.
  if (target instanceof HTMLInputElement && target.classList.contains('plan-feedback')) {
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault();
      keepPlanning(target.dataset.id ?? '');
    } else if (e.key === 'Escape') {
      e.preventDefault();
      togglePlanFeedback(target.dataset.id ?? '', false);
    }
    return;
  }
  // Enter in a preview's instructions field confirms the compaction.
  if (e.key === 'Enter' && target instanceof HTMLInputElement && target.classList.contains('instructions')) {
    e.preventDefault();
    const id = target.dataset.id ?? '';
    const text = target.value.trim();
    post(text ? { type: 'compactConfirm', id, instructions: text } : { type: 'compactConfirm', id });
  }
});

sessionSelect.addEventListener('change', () => {
  if (sessionSelect.value !== '') {
    post({ type: 'resume', sessionId: sessionSelect.value });
  }
});
folderSelect.addEventListener('change', () => post({ type: 'folder', uri: folderSelect.value }));

window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data as ToWebview;
  if (!m || typeof m !== 'object' || typeof m.type !== 'string') {
    return;
  }
  if (m.type === 'restore') {
    state = m.state;
    restored = true;
    fullRender = true;
    history.seed(promptsOf(state));
    schedule();
    return;
  }
  if (m.type === 'focus') {
    if (m.text !== undefined && !(m.keepDraft && prompt.value.trim() !== '')) {
      setPrompt(m.text);
    }
    prompt.focus();
    return;
  }
  if (!restored) {
    return; // the restore that follows `ready` includes it
  }
  state = reduce(state, m);
  schedule();
});

fitPrompt();
post({ type: 'ready' });
prompt.focus();
