/**
 * The extension side of the chat view: it keeps the chat's state (the same reducer as the
 * webview), answers the webview's messages with requests to the server, forwards the server's
 * notifications, restores the transcript from `pseudoclaude/sessions/messages` and holds the
 * approvals shown in the chat. No `vscode` import: the adapter (`src/vscode/chatView.ts`) gives it
 * a panel to post to and the few editor services it needs (`ChatEnv`); tests give it fakes.
 */
import { ALLOW_PROJECT, alwaysRuleOf, isPlanMessage, PlanActions, planModeOf, planOf, serverQuestionOf } from '../approvals';
import { CancelSource } from '../cancel';
import { previewPlan } from '../compaction';
import {
  codeActionPlan,
  EditorTracker,
  type CodeActionCommand,
  type EditorChip,
  type EditorSnapshot,
} from '../editorContext';
import { describeFailure, errorMessage, isCancelled, sessionBusy, type BusyRefusal } from '../errors';
import { oneLine, plural, prettyArguments } from '../format';
import { MeterStore } from '../meter';
import { MODE_MEANINGS, offeredModes, isMode } from '../permissions';
import type { AgentClient, CancelToken } from '../ports';
import {
  ApprovalActions,
  Requests,
  type AgentEvent,
  type ApprovalDecision,
  type ApproveParams,
  type ApproveResult,
  type CheckpointStatus,
  type CodeActionArguments,
  type ContextUsageParams,
  type EditorContext,
  type HookEntry,
  type McpChangedParams,
  type McpServer,
  type PermissionMode,
  type RewindMode,
  type RunResult,
  type SessionSummary,
  type SkillsListResult,
  type TranscriptItem,
  type WorktreeFile,
} from '../protocol';
import { normalizeUri, sameUri } from '../uri';
import {
  McpMenu,
  mcpJsonCommand,
  mcpToolName,
  SERVER_ANSWERS,
  serverDecision,
  serverQuestion,
  stillLaunching,
  type McpExit,
} from './mcp';
import { isFromWebview, type FromWebview, type ToWebview } from './messages';
import {
  binaryNote,
  forkedNotice,
  modeItems,
  parseRewind,
  reviewPlan,
  rewindDiffTitle,
  takesConversation,
  turnItems,
  type KeepOpenItem,
  type ReviewChoice,
} from './rewind';
import { hookItems, hooksWait, reviewedNotice, skillItems } from './catalog';
import { parseSlash, type SlashRun } from './slash';
import {
  applyCard,
  changesPlan,
  forceQuestion,
  refusedForChanges,
  removeQuestion,
  worktreeDiffTitle,
  type ChangesChoice,
} from './worktree';
import {
  emptyState,
  fromItems,
  reduce,
  type ApprovalAbout,
  type ApprovalStatus,
  type ChatAction,
  type ChatFolder,
  type ChatItem,
  type ChatState,
  type ItemOf,
  isPlanMode,
  type PlanMode,
  worktreeOf,
} from './model';
import { cleanTasks, sameTasks } from './tasks';

/** How many items of a session's transcript the restored chat shows (the newest). */
export const RESTORE_ITEMS = 200;

export interface ChatPanel {
  post(message: ToWebview): void;
}

/** A write approval's change (or a rewind's file: the file now, after the rewind), for the diff editor. */
export interface DiffRequest {
  id: string;
  /** Relative to the workspace folder. */
  path: string;
  folder: string;
  before: string;
  after: string;
  tool: string;
  /** The editor's title, when not an approval's. */
  title?: string;
}

export interface ChatPickOptions<T> {
  title: string;
  placeHolder?: string;
  /** A `keepOpen` item was chosen: show what it stands for; a line answered shows on the item. */
  onKeep?: (value: T) => Promise<string | undefined>;
}

/** A file of a worktree session, to compare: the folder's (left) and the worktree's (right). */
export interface WorktreeDiff {
  /** The workspace folder's URI. */
  folder: string;
  /** The worktree's root (an absolute path). */
  worktree: string;
  file: WorktreeFile;
  title: string;
}

/** How long after its first event a run's session list is asked again (it shows the run) (ms). */
export const LIST_AFTER_MS = 300;

/** How often a Wait asks whether the busy session is free (ms). */
export const BUSY_POLL_MS = 1000;

/** A prompt refused because its session was busy, held until Fork, Wait or another prompt. */
interface BusyPrompt extends BusyRefusal {
  prompt: string;
  context: EditorContext | undefined;
  folder: string;
  /** Cancels the wait in progress. */
  wait?: CancelSource;
}

/** Resolve after `ms`, or at once when `token` is cancelled. */
export function pause(ms: number, token: CancelToken): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const sub = token.onCancellationRequested(done);
  });
}

/** The message when an action needs the chat's session idle. */
export const RUN_IN_PROGRESS = 'A run is in progress: wait for it, or Stop it first.';

/**
 * A run (or another long action: a compaction, a rewind, a Wait) of one session, started from
 * the chat. Several sessions run at once: the chat shows one; the others go on in the background.
 */
interface SessionRun {
  source: CancelSource;
  folder: string;
  /** Its session (`null`: a chat with no session yet; the run's first event names it). */
  sessionId: string | null;
  /** The session list was asked again since it started (it shows the run). */
  listed?: boolean;
  /**
   * The chat showed it from its transcript mid-run (switched to it while it ran): the start of
   * the answer streaming then may be missing; the transcript is reloaded when it ends.
   */
  joined?: boolean;
}

/** The button of the notification for a background session's approval. */
export const SHOW_SESSION = 'Show Session';

/** What the chat needs from the editor. */
export interface ChatEnv {
  folders(): ChatFolder[];
  activeFolder(): ChatFolder | undefined;
  log(message: string): void;
  copy(text: string): Promise<void>;
  /** Open a link of an answer: a web page, or a path relative to `folder`. */
  openLink(href: string, folder: ChatFolder | null): Promise<void>;
  showDiff(diff: DiffRequest): Promise<void>;
  closeDiff(id: string): void;
  /** A quick pick (Escape: undefined); choosing a `keepOpen` item calls `onKeep` and the list stays. */
  pick<T>(items: KeepOpenItem<T>[], options: ChatPickOptions<T>): Promise<T | undefined>;
  /** The diff of a rewind preview's file (not an approval: no Allow / Deny there). */
  showRewindDiff(diff: DiffRequest): Promise<void>;
  closeRewindDiff(id: string): void;
  /** Bring the chat view up (an inline approval waits there); `focus`: and give it the keyboard. */
  reveal(focus?: boolean): Promise<void>;
  /** Cancel a run the chat did not start (the Ask command's). */
  cancelOtherRun(): Promise<void>;
  /** The chat's folder, its session list or its current session changed (the views refresh). */
  sessionsChanged(folder: ChatFolder): void;
  /** The session the chat showed last in a folder (kept across reloads: a new server resumes it). */
  rememberedSession(folder: string): string | undefined;
  rememberSession(folder: string, sessionId: string): void;
  /** Show the memory (the Show Memory command: `/memory`). */
  showMemory(): Promise<void>;
  /**
   * The MCP menu (a quick pick following `menu`: its rows change as the servers do) until it is
   * closed (undefined) or a row that leaves it is chosen (approve, open a configuration).
   */
  mcpMenu(menu: McpMenu): Promise<McpExit | undefined>;
  /** A modal question with `actions` as buttons; undefined when dismissed (Escape, Cancel). */
  ask(message: string, detail: string, actions: readonly string[]): Promise<string | undefined>;
  /** A file of `folder` (a path relative to it) as text; undefined when it cannot be read. */
  readFile(folder: ChatFolder, path: string): Promise<string | undefined>;
  /** Open where MCP servers are configured: the user's setting, or the folder's `.mcp.json`. */
  openMcpConfig(where: 'settings' | 'mcpJson', folder: ChatFolder): Promise<void>;
  /** The diff of a worktree session's file: the folder's file and the worktree's. */
  showWorktreeDiff(diff: WorktreeDiff): Promise<void>;
  /** A notification (not modal) with `actions` as buttons: the one clicked, or undefined. */
  notify(message: string, actions: readonly string[]): Promise<string | undefined>;
  /**
   * Show a transcript (a sub-agent's) in the view the sessions' transcripts go to (the
   * PseudoClaude output): a header line, then its items (`skipped`: earlier items not shown).
   */
  showTranscript(title: string, items: readonly TranscriptItem[], skipped: number): void;
}

/** How an approval was answered: a denial's message or a plan's feedback; an approved plan's mode. */
interface ApprovalAnswer {
  status: ApprovalStatus;
  message?: string;
  mode?: PlanMode;
}

interface PendingApproval {
  resolve: (answer: ApprovalAnswer) => void;
  /** A plan (`exit_plan_mode`): answered Approve (with a mode) or Keep planning (with feedback). */
  plan?: boolean;
  /** The rule "Always allow" adds (absent: only once, for this session, or deny). */
  rule?: string;
  diff?: DiffRequest;
  /** Its card, shown again after a restore (a reload, a switch of folder) until it is answered. */
  card?: ChatItem;
  /** A project server's start (not part of a run: the end of a run leaves it); its folder. */
  server?: { folder: string; name: string };
  /** Asked when the folder opens, not in a run (a project server, the folder's settings). */
  outsideRun?: boolean;
  /** The session whose run asks (its card shows in that session's transcript only). */
  sessionId?: string;
  /** The folder it is asked in. */
  folder?: string;
}

/** A `window/showMessageRequest` approval's answer (an action title, or none) as a card status. */
export function modalStatus(title: string | undefined | null): ApprovalStatus {
  if (planModeOf(title)) {
    return 'approve';
  }
  switch (title) {
    case PlanActions.keep:
      return 'keepPlanning';
    case ApprovalActions.once:
      return 'allowOnce';
    case ApprovalActions.session:
    case ALLOW_PROJECT:
      return 'allowSession';
    case ApprovalActions.always:
      return 'allowAlways';
    case ApprovalActions.deny:
      return 'deny';
    default:
      // The dialog's "Always allow <rule>" (the rule in the button).
      return title?.startsWith(`${ApprovalActions.always} `) ? 'allowAlways' : 'dismissed';
  }
}

/** The card of a `window/showMessageRequest` approval: `PseudoClaude wants to use <tool>: ...`. */
export function modalApprovalCard(message: string): {
  tool: string;
  title: string;
  detail: string;
  about?: 'mcpServer' | 'permissions' | 'hooks' | 'plan';
  server?: string;
  rule?: string;
} {
  if (isPlanMessage(message)) {
    return { tool: EXIT_PLAN_MODE, title: PLAN_TITLE, detail: planOf(message), about: 'plan' };
  }
  const always = alwaysRuleOf(message);
  const text = always ? always.message : message.trim();
  const settings = /^This folder's (\S+) asks PseudoClaude to use these settings[^\n]*\n([\s\S]*)$/.exec(text);
  if (settings) {
    return {
      tool: '',
      title: `This folder's ${settings[1] ?? ''} asks to use its own settings`,
      detail: (settings[2] ?? '').trim(),
      about: 'permissions',
    };
  }
  const hooks = /^This folder's (\S+) has hooks that would run on your machine[^\n]*\n([\s\S]*)$/.exec(text);
  if (hooks) {
    return {
      tool: '',
      title: `This folder's ${hooks[1] ?? ''} has hooks that would run`,
      detail: (hooks[2] ?? '').trim(),
      about: 'hooks',
    };
  }
  const project = serverQuestionOf(text);
  if (project) {
    return {
      tool: '',
      title: `This project's .mcp.json wants to start the MCP server ${project.server}`,
      detail: `$ ${project.command}`,
      about: 'mcpServer',
      server: project.server,
    };
  }
  const cut = text.indexOf('\n');
  const first = (cut < 0 ? text : text.slice(0, cut)).trim();
  const rest = cut < 0 ? '' : text.slice(cut + 1).trim();
  const tool = /wants to use ([\w.-]+)/.exec(first)?.[1] ?? 'a tool';
  const title = first.replace(/^PseudoClaude wants to use /, 'Allow ');
  return { tool, title: title.endsWith('?') ? title : `${title}?`, detail: rest, ...(always ? { rule: always.rule } : {}) };
}

function lines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const all = text.split('\n');
  return text.endsWith('\n') ? all.slice(0, -1) : all;
}

/** Lines added and removed from `before` to `after` (counted as multisets: cheap, order-blind). */
export function lineChanges(before: string, after: string): { added: number; removed: number } {
  const left = new Map<string, number>();
  for (const l of lines(before)) {
    left.set(l, (left.get(l) ?? 0) + 1);
  }
  let added = 0;
  for (const l of lines(after)) {
    const n = left.get(l) ?? 0;
    if (n > 0) {
      left.set(l, n - 1);
    } else {
      added++;
    }
  }
  let removed = 0;
  for (const n of left.values()) {
    removed += n;
  }
  return { added, removed };
}

/** The tool that presents a plan. */
const EXIT_PLAN_MODE = 'exit_plan_mode';
/** The title of a plan's card. */
export const PLAN_TITLE = 'Approve this plan and start working?';

export interface InlineCard {
  /** The tool card it is about (an MCP tool's: the model's name of it). */
  tool: string;
  title: string;
  detail: string;
  path?: string;
  about?: ApprovalAbout;
  server?: string;
  args?: string;
  /** The rule "Always allow" adds (a call of a run only). */
  rule?: string;
  /** Why it is asked. */
  reason?: string;
}

/**
 * The card of a `pseudoclaude/approve` request. `folderName`: the folder it is for, named when
 * the window has several (a project server's question comes when a folder opens).
 */
export function inlineApprovalCard(p: ApproveParams, folderName?: string): InlineCard {
  if (p.kind === 'permissions' || p.kind === 'mcpServer' || p.kind === 'hooks') {
    return folderCard(p, folderName);
  }
  const card = callCard(p);
  return {
    ...card,
    ...(p.rule ? { rule: p.rule } : {}),
    ...(p.reason ? { reason: p.reason } : {}),
  };
}

/** A question asked when a folder opens: its own settings file or hooks, a project's MCP server. */
function folderCard(p: ApproveParams, folderName?: string): InlineCard {
  if (p.kind === 'hooks') {
    const file = p.path ?? '.PseudoClaude/hooks.yaml';
    const where = folderName ? `${folderName}'s ${file}` : `This folder's ${file}`;
    return {
      tool: '',
      title: `${where} has hooks that would run`,
      detail: (p.hooks ?? []).map((h) => `${h.name} (${h.event}): ${h.action}`).join('\n'),
      about: 'hooks',
    };
  }
  if (p.kind === 'permissions') {
    const file = p.path ?? '.PseudoClaude/config.yaml';
    const where = folderName ? `${folderName}'s ${file}` : `This folder's ${file}`;
    return {
      tool: '',
      title: `${where} asks to use its own settings`,
      detail: (p.rules ?? []).join('\n'),
      about: 'permissions',
    };
  }
  const server = p.server ?? p.tool;
  const where = folderName ? `${folderName}'s .mcp.json` : "This project's .mcp.json";
  const what = p.command ?? p.url ?? '';
  return {
    tool: '',
    title: `${where} wants to start the MCP server ${server}`,
    detail: p.command ? `$ ${p.command}` : what,
    about: 'mcpServer',
    server,
  };
}

/** A tool call of a run: what it would do. */
function callCard(p: ApproveParams): InlineCard {
  const args = prettyArguments(p.arguments ?? {});
  if (p.kind === 'mcp') {
    const server = p.server ?? '?';
    return {
      tool: p.server ? mcpToolName(p.server, p.tool) : p.tool,
      title: `Call ${p.tool} of the MCP server ${server}?`,
      detail: '',
      about: 'mcp',
      server,
      ...(args && args !== '{}' ? { args } : {}),
    };
  }
  if (p.kind === 'write' && p.path !== undefined) {
    const before = p.before ?? '';
    const after = p.after ?? '';
    const isNew = before === '' && p.tool !== 'edit_file';
    const { added, removed } = lineChanges(before, after);
    const change = isNew
      ? `new file, ${plural(lines(after).length, 'line')}`
      : `${plural(added, 'line')} added, ${removed} removed`;
    return {
      tool: p.tool,
      title: `Allow ${p.tool} to ${isNew ? 'create' : 'change'} ${p.path}?`,
      detail: `${p.path} (${change})`,
      path: p.path,
    };
  }
  const given = typeof p.arguments === 'object' && p.arguments !== null ? (p.arguments as Record<string, unknown>) : {};
  if (p.kind === 'runCommand') {
    const command = p.command ?? String(given.command ?? '');
    return {
      tool: p.tool,
      title: `Allow ${p.tool} to run a command?`,
      detail: [command ? `$ ${command}` : oneLine(JSON.stringify(p.arguments ?? {}), 400), p.cwd ? `in ${p.cwd}` : '']
        .filter(Boolean)
        .join('\n'),
    };
  }
  const path = p.path ?? (typeof given.path === 'string' ? given.path : undefined);
  if (p.kind === 'read' && p.tool === 'read_file' && path !== undefined) {
    return { tool: p.tool, title: `Allow ${p.tool} to read ${path}?`, detail: '' };
  }
  if (p.kind === 'plan') {
    // The plan as Markdown (the request's own field; an older server's: the call's argument).
    const plan = p.plan ?? (typeof given.plan === 'string' ? given.plan : '');
    return { tool: p.tool, title: PLAN_TITLE, detail: plan, about: 'plan', ...(!plan && args && args !== '{}' ? { args } : {}) };
  }
  // A read of something else (a search), a hook, a tool the server knows better: its arguments.
  return { tool: p.tool, title: `Allow ${p.tool}?`, detail: '', ...(args && args !== '{}' ? { args } : {}) };
}

export class ChatHost {
  private state: ChatState;
  private panel: ChatPanel | undefined;
  private ready = false;
  /** The chat's runs, by session (`''`: a chat with no session yet). */
  private readonly runs = new Map<string, SessionRun>();
  private otherRun = false;
  private readonly meters = new MeterStore();
  private readonly approvals = new Map<string, PendingApproval>();
  private nextKey = 1;
  private loading: Promise<void> | undefined;
  private reloadAgain = false;
  /** What a code rewind can restore (from `pseudoclaude/context`). */
  private checkpoints: CheckpointStatus | undefined;
  /** The MCP menu while it is up. */
  private menu: McpMenu | undefined;
  /** The last `pseudoclaude/mcp/list` asked (older answers are dropped). */
  private mcpAsked = 0;
  /** The command line (or URL) of each project server the server asked about, by folder and name. */
  private readonly serverCommands = new Map<string, string>();
  /** Project servers just allowed (by folder and name): they start in the background. */
  private readonly launching = new Set<string>();
  /** The editor: the prompt box's chip and the context a prompt carries. */
  private readonly editor = new EditorTracker();
  /** Prompts refused because their session was busy, by card id. */
  private readonly busy = new Map<string, BusyPrompt>();
  /** Requests of the chat's own that change its session (new, resume) in flight. */
  private switching = 0;
  /** Changes of mode in flight (`pseudoclaude/mode`), sent one after the other. */
  private modeChanging = 0;
  private modeQueue: Promise<unknown> = Promise.resolve();
  private readonly pollMs: number;
  private readonly pause: (ms: number, token: CancelToken) => Promise<void>;

  constructor(
    private readonly agent: AgentClient,
    private readonly env: ChatEnv,
    options: { pollMs?: number; pause?: (ms: number, token: CancelToken) => Promise<void> } = {},
  ) {
    this.pollMs = options.pollMs ?? BUSY_POLL_MS;
    this.pause = options.pause ?? pause;
    const folders = env.folders();
    this.state = emptyState(env.activeFolder() ?? folders[0] ?? null, folders);
  }

  /** The state the chat shows (for tests and the adapter). */
  get current(): ChatState {
    return this.state;
  }

  get folder(): ChatFolder | null {
    return this.state.folder;
  }

  // ------------------------------------------------------------------------ the panel

  /** A webview (re)loaded: it sends `ready`, then gets the state. */
  attach(panel: ChatPanel): void {
    this.panel = panel;
    this.ready = false;
  }

  detach(panel?: ChatPanel): void {
    if (!panel || this.panel === panel) {
      this.panel = undefined;
      this.ready = false;
    }
  }

  private post(message: ToWebview): void {
    if (this.panel && this.ready) {
      this.panel.post(message);
    }
  }

  private dispatch(action: ChatAction): void {
    this.state = reduce(this.state, action);
    this.remember();
    this.post(action);
  }

  private restore(state: ChatState): void {
    // A question still waiting keeps its card (a project server's comes when the folder opens,
    // maybe while the transcript loads).
    // A run's question shows in its session only (a session in the background keeps it until shown).
    const waiting = [...this.approvals.entries()]
      .filter(([id, a]) => a.card && !state.items.some((i) => i.id === id))
      .filter(([, a]) => a.sessionId === undefined || state.sessionId === null || a.sessionId === state.sessionId)
      .map(([, a]) => a.card as ChatItem);
    if (waiting.length > 0) {
      state = { ...state, items: [...state.items, ...waiting] };
    }
    state = { ...state, chip: this.editor.chip(state.folder?.uri) };
    const asking = this.askingOf(state.sessionId);
    state = asking.length > 0 || state.asking ? { ...state, asking } : state;
    this.state = state;
    this.remember();
    this.post({ type: 'restore', state });
  }

  /** The sessions (not `shown`) whose run waits for an approval. */
  private askingOf(shown: string | null): string[] {
    return [...new Set(
      [...this.approvals.values()]
        .filter((a) => a.sessionId !== undefined && a.sessionId !== shown)
        .map((a) => a.sessionId as string),
    )];
  }

  private remember(): void {
    const { folder, sessionId } = this.state;
    if (folder && sessionId && this.env.rememberedSession(folder.uri) !== sessionId) {
      this.env.rememberSession(folder.uri, sessionId);
    }
  }

  /**
   * A server with no current session (just started, e.g. after a window reload) resumes the
   * session the chat showed last, so that the chat and the next prompt go on with it.
   */
  private async resumeRemembered(folder: ChatFolder): Promise<string | null> {
    const remembered = this.env.rememberedSession(folder.uri);
    if (!remembered) {
      return null;
    }
    try {
      const r = await this.agent.request(Requests.sessionsResume, { workspace: folder.uri, sessionId: remembered });
      await this.refreshContext();
      return r.sessionId;
    } catch (e) {
      this.env.log(`chat: resume ${remembered}: ${errorMessage(e)}`);
      return null;
    }
  }

  /** Put the caret in the prompt box (with `text` in it, when given; `keepDraft`: unless it has some already). */
  focus(text?: string, keepDraft = false): void {
    this.post(text === undefined ? { type: 'focus' } : { type: 'focus', text, ...(keepDraft ? { keepDraft } : {}) });
  }

  /** Whether the session shown runs (a run of the chat's, or the Ask command's). */
  private running(): boolean {
    return this.shownRun() !== undefined || this.otherRun;
  }

  private runKey(sessionId: string | null = this.state.sessionId): string {
    return sessionId ?? '';
  }

  /** The chat's run of the session shown. */
  private shownRun(): SessionRun | undefined {
    const run = this.runs.get(this.runKey());
    return run && this.isChatFolder(run.folder) ? run : undefined;
  }

  /** A run of the session shown starts. */
  private startRun(folder: string, source = new CancelSource()): SessionRun {
    const run: SessionRun = { source, folder, sessionId: this.state.sessionId };
    this.runs.set(this.runKey(run.sessionId), run);
    return run;
  }

  private endRun(run: SessionRun): void {
    const key = this.runKey(run.sessionId);
    if (this.runs.get(key) === run) {
      this.runs.delete(key);
    }
  }

  /** Whether the chat shows the session of `run` (else it runs in the background). */
  private shows(run: SessionRun): boolean {
    return this.isChatFolder(run.folder) && this.runKey(run.sessionId) === this.runKey();
  }

  /** The sessions the chat runs now (the Sessions view and the tests). */
  get runningSessions(): string[] {
    return [...this.runs.values()].map((r) => r.sessionId ?? '').filter(Boolean);
  }

  private key(prefix: string): string {
    return `${prefix}${this.nextKey++}`;
  }

  // ------------------------------------------------------------------------ webview messages

  async handle(message: unknown): Promise<void> {
    if (!isFromWebview(message)) {
      this.env.log(`chat: ignored a malformed message from the webview`);
      return;
    }
    const m: FromWebview = message;
    switch (m.type) {
      case 'ready':
        this.ready = true;
        this.restore({ ...this.state, folders: this.env.folders() });
        if (!this.running()) {
          await this.reload();
        }
        await Promise.all([this.refreshSessions(), this.refreshMcp()]);
        return;
      case 'send':
        await this.ask(m.prompt);
        return;
      case 'cancel':
        await this.cancel();
        return;
      case 'compactPreview':
        await this.compactPreview();
        return;
      case 'compactConfirm':
        await this.compact(m.id, m.instructions);
        return;
      case 'compactCancel':
        this.dispatch({ type: 'previewDone', id: m.id, status: 'cancelled' });
        return;
      case 'undo':
        await this.undo();
        return;
      case 'newSession':
        await this.newSession();
        return;
      case 'resume':
        await this.resume(m.sessionId);
        return;
      case 'folder':
        await this.switchFolder(m.uri);
        return;
      case 'approve':
        this.answer(m.id, m.decision, m.message, m.mode);
        return;
      case 'setMode':
        await this.setMode(m.mode);
        return;
      case 'showDiff': {
        const diff = this.approvals.get(m.id)?.diff;
        if (diff) {
          await this.env.showDiff(diff).catch((e: unknown) => this.notice('error', `Cannot show the diff: ${errorMessage(e)}`));
        }
        return;
      }
      case 'copy':
        await this.env.copy(m.text);
        return;
      case 'openLink':
        await this.env.openLink(m.href, this.state.folder).catch((e: unknown) =>
          this.notice('error', `Cannot open ${m.href}: ${errorMessage(e)}`),
        );
        return;
      case 'refresh':
        await this.reload();
        await this.refreshSessions();
        return;
      case 'rewind':
        await this.rewind(m.turn);
        return;
      case 'fork':
        await this.fork(m.turn);
        return;
      case 'mcp':
        await this.openMcp();
        return;
      case 'removeChip':
        this.editor.remove();
        this.syncChip();
        return;
      case 'busyFork':
        await this.busyFork(m.id);
        return;
      case 'busyWait':
        await this.busyWait(m.id);
        return;
      case 'busyCancel':
        this.busy.get(m.id)?.wait?.cancel();
        return;
      case 'worktreeChanges':
        await this.worktreeChanges();
        return;
      case 'worktreeApply':
        await this.worktreeApply();
        return;
      case 'worktreeRemove':
        await this.worktreeRemove();
        return;
      case 'stopAgent':
        await this.stopAgent(m.agentId, m.background);
        return;
      case 'agentTranscript':
        await this.agentTranscript(m.agentId);
        return;
    }
  }

  // ------------------------------------------------------------------------ the editor

  /** The editor changed (the active editor, its selection, the open files): the chip follows. */
  editorChanged(snapshot: EditorSnapshot): void {
    this.editor.update(snapshot);
    this.syncChip();
  }

  /** What a prompt sent now in `folder` would carry (the Ask command's; nothing once the chip was removed). */
  editorContext(folder: string): EditorContext | undefined {
    return this.editor.context(folder);
  }

  private syncChip(): void {
    const chip: EditorChip | null = this.editor.chip(this.state.folder?.uri);
    if (JSON.stringify(chip) !== JSON.stringify(this.state.chip)) {
      this.dispatch({ type: 'chip', chip });
    }
  }

  /**
   * A code action (the editor's light bulb or context menu) on a selection of `folder`: the chat
   * comes up with the selection as its chip; Explain and Fix send their prompt with it at once
   * (Fix with the range's problems), Ask puts the caret in the prompt box and waits.
   */
  async codeAction(command: CodeActionCommand, args: CodeActionArguments, folder?: string): Promise<void> {
    const plan = codeActionPlan(command, args);
    if (folder !== undefined && !this.isChatFolder(folder)) {
      if (this.running() || this.runs.size > 0) {
        await this.env.reveal().catch(() => undefined);
        this.notice('warning', RUN_IN_PROGRESS);
        return;
      }
      await this.switchFolder(folder);
      if (!this.isChatFolder(folder)) {
        this.notice('error', `Cannot ask about ${args.path}: it is not in a workspace folder of this window.`);
        return;
      }
    }
    const at = this.needFolder();
    if (!at) {
      return;
    }
    this.editor.attach(at.uri, { path: args.path, range: args.range, text: args.text });
    this.syncChip();
    await this.env.reveal(!plan.send).catch(() => undefined);
    if (!plan.send) {
      this.focus();
      return;
    }
    await this.ask(plan.prompt, plan.context);
  }

  private notice(level: 'info' | 'warning' | 'error', text: string): void {
    this.dispatch({ type: 'notice', level, text: text.replace(/^PseudoClaude: /, '') });
  }

  /** The folder the chat works on, or a notice saying to open one. */
  private needFolder(): ChatFolder | undefined {
    const folder = this.state.folder;
    if (!folder) {
      this.notice('error', 'Open a folder first: the agent works inside a workspace folder.');
    }
    return folder ?? undefined;
  }

  /** The chat's folder when nothing runs in it (else a notice says what is in the way). */
  private idleFolder(): ChatFolder | undefined {
    const folder = this.needFolder();
    if (folder && this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return undefined;
    }
    return folder;
  }

  // ------------------------------------------------------------------------ running

  /**
   * Send a prompt (or run a slash command). `context`: what it is sent with; undefined: the
   * editor's, as the chip shows it; null: nothing.
   */
  async ask(prompt: string, context?: EditorContext | null): Promise<RunResult | undefined> {
    const slash = parseSlash(prompt, this.state.commands);
    if (slash) {
      await this.slash(slash);
      return undefined;
    }
    const folder = this.needFolder();
    if (!folder || prompt.trim() === '') {
      return undefined;
    }
    // Only the session shown refuses: the others' runs go on in the background.
    if (this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return undefined;
    }
    const sent = context === undefined ? this.editor.context(folder.uri) : (context ?? undefined);
    const sessionId = this.state.sessionId;
    const run = this.startRun(folder.uri);
    const { source } = run;
    this.dropBusy();
    this.dispatch({ type: 'runStarted', prompt, ...(sent ? { context: sent } : {}) });
    let reload = false;
    let named: string | null = null;
    try {
      // The chat's session by name: several sessions of the folder may run at once.
      const result = await this.agent.request(
        Requests.run,
        { prompt, workspace: folder.uri, ...(sessionId ? { sessionId } : {}), ...(sent ? { context: sent } : {}) },
        { token: source.token },
      );
      named = result.sessionId || null;
      if (this.shows(run)) {
        this.dispatch({ type: 'runFinished', result });
        reload = run.joined === true;
      }
      return result;
    } catch (e) {
      const busy = sessionBusy(e);
      const shown = this.shows(run);
      if (busy && !source.token.isCancellationRequested) {
        const id = this.key('bz');
        const held = { ...busy, sessionId: busy.sessionId || sessionId || '' };
        this.busy.set(id, { ...held, prompt, context: sent, folder: folder.uri });
        if (shown) {
          this.dispatch({ type: 'busy', id, sessionId: held.sessionId, pid: held.pid, prompt });
        }
      } else if (!shown) {
        this.env.log(`chat: the run of ${run.sessionId ?? 'a new session'}: ${errorMessage(e)}`);
      } else if (isCancelled(e) || source.token.isCancellationRequested) {
        this.dispatch({ type: 'runFinished', canceled: true });
      } else {
        this.dispatch({ type: 'runFinished', error: describeFailure('the run', e).replace(/^PseudoClaude: /, '') });
      }
      return undefined;
    } finally {
      this.endRun(run);
      this.cancelApprovals(run.sessionId ?? named);
      if (reload) {
        await this.reload(); // the start of what streamed before the chat showed it
      }
      await this.afterChange(folder);
    }
  }

  /** Stop the run of the session shown (the chat's, else the Ask command's); the others go on. */
  async cancel(): Promise<boolean> {
    const run = this.shownRun();
    this.cancelApprovals(this.state.sessionId);
    if (run) {
      run.source.cancel();
      return true;
    }
    if (this.otherRun) {
      await this.env.cancelOtherRun();
      return true;
    }
    return false;
  }

  /** Whether the chat's own run of the session shown is in progress (Cancel Run stops it first). */
  get hasRun(): boolean {
    return this.shownRun() !== undefined;
  }

  /** A run started elsewhere (the Ask command) in `folder`. */
  otherRunStarted(folder: string, prompt: string, context?: EditorContext): void {
    if (this.isChatFolder(folder) && !this.shownRun()) {
      this.otherRun = true;
      this.dispatch({ type: 'runStarted', prompt, ...(context ? { context } : {}) });
    }
  }

  otherRunFinished(folder: string, result: RunResult | undefined, canceled: boolean): void {
    if (this.isChatFolder(folder) && this.otherRun) {
      this.otherRun = false;
      this.cancelApprovals(this.state.sessionId);
      this.dispatch(result ? { type: 'runFinished', result } : { type: 'runFinished', canceled, ...(canceled ? {} : { error: 'The run failed.' }) });
      void this.afterChange(this.state.folder);
    }
  }

  private isChatFolder(uri: string): boolean {
    return this.state.folder !== null && sameUri(this.state.folder.uri, uri);
  }

  private async afterChange(folder: ChatFolder | null): Promise<void> {
    if (!folder || !this.isChatFolder(folder.uri)) {
      return;
    }
    await Promise.all([this.refreshContext(), this.refreshSessions(), this.refreshTurns(), this.refreshMcp()]);
    this.env.sessionsChanged(folder);
  }

  /**
   * The numbers of the prompts sent since the transcript was loaded (a live prompt has none
   * until the server counts it), from `pseudoclaude/sessions/turns`: their Rewind and Fork
   * actions appear.
   */
  private async refreshTurns(): Promise<void> {
    const folder = this.state.folder;
    const sessionId = this.state.sessionId;
    if (!folder || !sessionId || this.running() || !this.state.items.some((i) => i.kind === 'user' && i.turn === undefined && !i.outOfContext)) {
      return;
    }
    try {
      const r = await this.agent.request(Requests.sessionsTurns, { workspace: folder.uri, sessionId });
      if (this.isChatFolder(folder.uri) && this.state.sessionId === sessionId && !this.running()) {
        this.dispatch({ type: 'turns', turns: r.turns.map((t) => ({ turn: t.turn, prompt: t.prompt })) });
      }
    } catch (e) {
      this.env.log(`chat: turns of ${sessionId}: ${errorMessage(e)}`);
    }
  }

  // ------------------------------------------------------------------------ slash commands

  /**
   * The server's slash commands, once per server start; a server without the request (an older
   * one) lists none: the prompt box offers no completion.
   */
  async loadCommands(): Promise<void> {
    try {
      const r = await this.agent.request(Requests.slashCommands, {});
      this.dispatch({ type: 'commands', commands: r.commands });
    } catch (e) {
      this.env.log(`chat: slash commands: ${errorMessage(e)}`);
      this.dispatch({ type: 'commands', commands: null });
    }
  }

  /** Run a slash command typed in the prompt box. */
  private async slash(run: SlashRun): Promise<void> {
    switch (run.name) {
      case 'compact':
        await this.compactNow(run.argument);
        return;
      case 'undo':
        await this.undo();
        return;
      case 'context':
        await this.refreshContext();
        this.dispatch({ type: 'contextShown' });
        return;
      case 'status':
        await this.showStatus();
        return;
      case 'memory':
        await this.env.showMemory().catch((e: unknown) => this.notice('error', describeFailure('Show Memory', e)));
        return;
      case 'mcp':
        await this.openMcp();
        return;
      case 'hooks':
        await this.showHooks();
        return;
      case 'new':
      case 'worktree':
        // A run of the session shown goes on in the background.
        await this.newSession(run.name === 'worktree' ? { worktree: true } : {});
        return;
      case 'plan': {
        // plan mode; `/plan <task>` then sends the task
        const set = await this.setMode('plan');
        if (set && 'message' in set && run.argument) {
          await this.ask(run.argument);
        }
        return;
      }
      case 'do':
        await this.setMode('default');
        return;
      case 'rewind': {
        const args = parseRewind(run.argument);
        if ('error' in args) {
          this.notice('warning', args.error);
          return;
        }
        await this.rewind(args.turn, args.mode);
        return;
      }
    }
  }

  /**
   * `/status`: the chat's session at a glance (its mode, model, tokens, the sandbox, MCP servers,
   * hooks and skills), in the server's words, as a card in the transcript. Read-only: it shows
   * during a run too.
   */
  private async showStatus(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    const sessionId = this.state.sessionId;
    try {
      const r = await this.agent.request(Requests.status, { workspace: folder.uri, ...(sessionId ? { sessionId } : {}) });
      this.dispatch({ type: 'statusShown', text: r.text });
    } catch (e) {
      this.notice('error', describeFailure('Status', e));
    }
  }

  /** `/hooks`: the folder's hooks by event, in the server's words (a card). */
  private async showHooks(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    try {
      const r = await this.agent.request(Requests.hooksList, { workspace: folder.uri });
      this.dispatch({ type: 'statusShown', title: 'Hooks', text: r.text });
    } catch (e) {
      this.notice('error', describeFailure('Hooks', e));
    }
  }

  /**
   * Show Hooks (the chat's menu): a quick pick of the folder's hooks, each with its event,
   * source and status; choosing one shows the `/hooks` card. When the folder's own hooks wait
   * (asked before and declined or dismissed), its first entry asks again
   * (`pseudoclaude/hooks/review`: the approval shows in the chat as when the folder opens).
   */
  async openHooks(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    let hooks: HookEntry[];
    try {
      hooks = (await this.agent.request(Requests.hooksList, { workspace: folder.uri })).hooks;
    } catch (e) {
      this.notice('error', describeFailure('Hooks', e));
      return;
    }
    if (hooks.length === 0) {
      this.notice('info', 'No hooks: add them to ~/.PseudoClaude/hooks.yaml or the folder\'s .PseudoClaude/hooks.yaml.');
      return;
    }
    const picked = await this.env.pick(hookItems(hooks), {
      title: `PseudoClaude: Hooks of ${folder.name}`,
      placeHolder: hooksWait(hooks) ? "This folder's own hooks wait for your approval" : 'Choose a hook to see them all in the chat',
    });
    if (picked?.kind === 'review') {
      await this.reviewHooks(folder, hooks);
    } else if (picked?.kind === 'show') {
      await this.showHooks();
    }
  }

  /** `pseudoclaude/hooks/review`: the folder's `hooks.yaml` asked again; a line says what changed. */
  private async reviewHooks(folder: ChatFolder, before: HookEntry[]): Promise<void> {
    try {
      const r = await this.agent.request(Requests.hooksReview, { workspace: folder.uri });
      const said = reviewedNotice(before, r.hooks);
      this.notice(said.level, said.text);
    } catch (e) {
      this.notice('error', describeFailure('Review hooks', e));
    }
  }

  /**
   * Show Skills (the chat's menu): a quick pick of the folder's skills (name, what it does,
   * where it is defined, whether the session loaded it); choosing one puts `/<name> ` in the
   * prompt box to complete and send.
   */
  async openSkills(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    const sessionId = this.state.sessionId;
    let result: SkillsListResult;
    try {
      result = await this.agent.request(Requests.skillsList, { workspace: folder.uri, ...(sessionId ? { sessionId } : {}) });
    } catch (e) {
      this.notice('error', describeFailure('Skills', e));
      return;
    }
    if (result.skills.length === 0 && result.problems.length === 0) {
      this.notice('info', 'No skills: add one as .PseudoClaude/skills/<name>/SKILL.md (or .claude/skills/).');
      return;
    }
    const picked = await this.env.pick(skillItems(result), {
      title: `PseudoClaude: Skills of ${folder.name}`,
      placeHolder: 'Choose a skill to use it in your next prompt',
    });
    if (picked?.kind !== 'skill') {
      return;
    }
    if (!picked.skill.command) {
      this.notice('info', `The skill ${picked.skill.name} cannot be run as a command: the model loads it when it needs it.`);
      return;
    }
    await this.env.reveal(true);
    this.focus(`/${picked.skill.name} `);
  }

  /**
   * `/compact [instructions]`: compact now (the command is the confirmation), cancellable with
   * Stop; the transcript is reloaded (what was summarized shows as out of context), then the
   * server's line says what happened.
   */
  private async compactNow(instructions: string): Promise<void> {
    const folder = this.idleFolder();
    if (!folder) {
      return;
    }
    const run = this.startRun(folder.uri);
    const { source } = run;
    this.dispatch({ type: 'runStarted' });
    let line: { level: 'info' | 'error'; text: string };
    try {
      const r = await this.agent.request(
        Requests.compact,
        { workspace: folder.uri, ...(instructions ? { instructions } : {}) },
        { token: source.token },
      );
      line = { level: 'info', text: r.message };
    } catch (e) {
      line = {
        level: 'error',
        text: isCancelled(e) || source.token.isCancellationRequested ? 'Compaction cancelled.' : describeFailure('Compact', e),
      };
    } finally {
      this.endRun(run);
    }
    if (!this.shows(run)) {
      await this.afterChange(folder); // the chat shows another session now: its transcript stays
      return;
    }
    this.dispatch({ type: 'runFinished' });
    await this.reload();
    this.notice(line.level, line.text);
    await this.afterChange(folder);
  }

  // ------------------------------------------------------------------------ notifications

  /**
   * An event of a run in the chat's folder: shown when it is the chat's session's (other sessions
   * of the folder may run at the same time); a chat with no session yet takes the run's.
   */
  onEvent(e: AgentEvent): void {
    if (!this.isChatFolder(e.workspace)) {
      return;
    }
    const shown = this.state.sessionId;
    const pending = shown === null ? this.runs.get('') : undefined;
    if (pending && e.sessionId) {
      // The run of a chat with no session yet: its first event names the session.
      this.runs.delete('');
      pending.sessionId = e.sessionId;
      this.runs.set(e.sessionId, pending);
    }
    const run = e.sessionId ? this.runs.get(e.sessionId) : this.shownRun();
    if (e.kind === 'mode' || e.kind === 'tasks') {
      // The mode or the task list of the session shown (a chat with no session yet: of its
      // run's) changed; another session's is asked for when the chat shows it.
      if (e.sessionId === this.state.sessionId || (pending !== undefined && run === pending)) {
        this.dispatch({ type: 'event', event: e });
      }
      return;
    }
    if (shown === null || !e.sessionId || e.sessionId === shown) {
      this.dispatch({ type: 'event', event: e });
      if (
        e.kind === 'task' ||
        (e.kind === 'toolResult' && e.name === 'agent' && !e.agentId) ||
        (e.agentId !== undefined && !this.agentsSeen.has(e.agentId))
      ) {
        // A sub-agent appeared, ended, or its call did: its card learns what its log says.
        if (e.agentId) {
          this.agentsSeen.add(e.agentId);
        }
        void this.refreshAgents();
      }
    }
    // Another session's event (a run in the background): its transcript is reloaded when the
    // chat shows it again; the session list marks it running.
    if (run && !run.listed) {
      // The session list marks the run's session running (and any other that runs now).
      run.listed = true;
      const timer = setTimeout(() => {
        if (this.runs.get(this.runKey(run.sessionId)) === run) {
          void this.refreshSessions();
        }
      }, LIST_AFTER_MS);
      (timer as { unref?: () => void }).unref?.();
    }
  }

  onContextUsage(u: ContextUsageParams): void {
    if (!this.isChatFolder(u.workspace)) {
      return;
    }
    if (this.state.sessionId !== null && u.sessionId !== null && u.sessionId !== this.state.sessionId &&
      (this.running() || this.runs.has(u.sessionId))) {
      return; // another session of the folder, running beside the chat's (or in its background)
    }
    const switched =
      u.sessionId !== this.state.sessionId && u.sessionId !== null && this.state.sessionId !== null && this.switching === 0;
    this.meters.usage(u);
    this.dispatch({ type: 'meter', meter: this.meters.get(u.workspace) ?? null });
    if (switched && !this.running()) {
      // Resumed or started elsewhere (a command, the Sessions view): show that session.
      void this.reload().then(() => this.refreshSessions());
    }
  }

  /**
   * The session of the chat's folder changed through a command (resume, new, undo): the chat
   * shows it (a run of the session shown before goes on in the background).
   */
  async sessionChanged(folder: string): Promise<void> {
    if (this.isChatFolder(folder)) {
      await this.reload();
      await this.refreshSessions();
    }
  }

  // ------------------------------------------------------------------------ loading

  /** The meter of the chat's folder from `pseudoclaude/context`; its session id. */
  private async refreshContext(): Promise<string | null | undefined> {
    const folder = this.state.folder;
    if (!folder) {
      return undefined;
    }
    try {
      const c = await this.agent.request(Requests.context, { workspace: folder.uri });
      this.checkpoints = c.checkpoints;
      this.meters.context(folder.uri, c);
      this.dispatch({ type: 'meter', meter: this.meters.get(folder.uri) ?? null });
      if (this.modeChanging === 0) {
        // The session's mode (the next session's, before one): an older server says none.
        this.syncMode({ mode: isMode(c.mode) ? c.mode : null, sandbox: c.sandbox ?? null });
      }
      return c.sessionId;
    } catch (e) {
      this.env.log(`chat: context of ${folder.name}: ${errorMessage(e)}`);
      return undefined;
    }
  }

  async refreshSessions(): Promise<void> {
    const folder = this.state.folder;
    if (!folder) {
      return;
    }
    try {
      const list = await this.agent.request(Requests.sessionsList, { workspace: folder.uri });
      if (this.isChatFolder(folder.uri)) {
        this.dispatch({ type: 'sessions', sessions: list.sessions });
      }
    } catch (e) {
      this.env.log(`chat: sessions of ${folder.name}: ${errorMessage(e)}`);
    }
  }

  /**
   * The transcript of the folder's current session from the server's log (the newest
   * `RESTORE_ITEMS` items), sent to the webview as a whole. A call during a load is answered
   * by one more load after it (calls during that one share it).
   */
  reload(): Promise<void> {
    if (this.loading) {
      // What the load in progress read may be out of date (it may have asked a server that was
      // still starting, before the session was resumed): one more load follows it.
      this.reloadAgain = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.reloadAgain = false;
        await this.load();
      } while (this.reloadAgain);
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const folder = this.state.folder;
    if (!folder) {
      this.restore({ ...this.state, items: [], sessionId: null, earlier: 0 });
      return;
    }
    let sessionId = await this.refreshContext();
    if (sessionId === undefined) {
      return;
    }
    if (sessionId === null && !this.running()) {
      sessionId = await this.resumeRemembered(folder);
    }
    let items: readonly TranscriptItem[] = [];
    let earlier = 0;
    if (sessionId !== null) {
      try {
        const head = await this.agent.request(Requests.sessionsMessages, { workspace: folder.uri, sessionId, offset: 0, limit: 1 });
        const offset = Math.max(0, head.total - RESTORE_ITEMS);
        const page =
          head.total <= 1
            ? head
            : await this.agent.request(Requests.sessionsMessages, { workspace: folder.uri, sessionId, offset });
        items = page.items;
        earlier = offset;
      } catch (e) {
        this.env.log(`chat: messages of ${sessionId}: ${errorMessage(e)}`);
        return;
      }
    }
    if (!this.isChatFolder(folder.uri)) {
      return;
    }
    const run = this.runs.get(this.runKey(sessionId));
    if (run && run === this.shownRun() && this.state.running) {
      return; // a run of the session shown started meanwhile: its live state wins
    }
    if (!run && this.otherRun && sessionId === this.state.sessionId) {
      return; // the Ask command's run: its live state wins
    }
    if (run) {
      // A session that runs (in the background until now): its transcript as it is now, live
      // from here on (its calls still pending are running, not interrupted).
      run.joined = true;
    }
    // A refused change of mode was about the session shown before.
    const base = sessionId === this.state.sessionId ? this.state : { ...this.state, modeError: null };
    this.restore(fromItems(base, sessionId, items, earlier, run !== undefined));
    await Promise.all([this.refreshPermissions(), this.refreshTasks(), this.refreshAgents()]);
  }

  /** Sub-agents whose first event was seen (the list is asked once more for each). */
  private readonly agentsSeen = new Set<string>();
  private agentsLoading: Promise<void> | undefined;
  private agentsAgain = false;

  /**
   * The sub-agents of the session shown (`pseudoclaude/agents/list`): their cards learn which
   * call started each (`callId`), their state and usage from the logs. A call during one in
   * flight asks once more after it. A server without the request (an older one) says nothing.
   */
  refreshAgents(): Promise<void> {
    if (this.agentsLoading) {
      this.agentsAgain = true;
      return this.agentsLoading;
    }
    this.agentsLoading = (async () => {
      do {
        this.agentsAgain = false;
        await this.loadAgents();
      } while (this.agentsAgain);
    })().finally(() => {
      this.agentsLoading = undefined;
    });
    return this.agentsLoading;
  }

  private async loadAgents(): Promise<void> {
    const folder = this.state.folder;
    const sessionId = this.state.sessionId;
    if (!folder || !sessionId) {
      return;
    }
    try {
      const r = await this.agent.request(Requests.agentsList, { workspace: folder.uri, sessionId });
      if (!this.isChatFolder(folder.uri) || this.state.sessionId !== sessionId || (r.sessionId && r.sessionId !== sessionId)) {
        return;
      }
      if (r.agents.length > 0) {
        this.dispatch({ type: 'agents', agents: r.agents });
      }
    } catch (e) {
      this.env.log(`chat: sub-agents of ${sessionId}: ${errorMessage(e)}`);
    }
  }

  /**
   * A sub-agent's Stop (`pseudoclaude/agents/stop`): it alone stops. A background one's task
   * event updates the card and the list; a foreground one's `agent` call answers that it was
   * stopped and the run goes on. A card whose sub-agent is not known yet stops the run.
   */
  private async stopAgent(agentId: string, _background: boolean): Promise<void> {
    const folder = this.state.folder;
    const sessionId = this.state.sessionId;
    if (agentId === '' || !folder || !sessionId) {
      await this.cancel();
      return;
    }
    try {
      await this.agent.request(Requests.agentsStop, { workspace: folder.uri, sessionId, agentId });
    } catch (e) {
      this.notice('warning', `Cannot stop ${agentId}: ${errorMessage(e)}`);
    }
    await this.refreshAgents();
  }

  /** A sub-agent's Open transcript: its conversation (the newest items) in the PseudoClaude output. */
  private async agentTranscript(agentId: string): Promise<void> {
    const folder = this.state.folder;
    const sessionId = this.state.sessionId;
    if (!folder || !sessionId) {
      return;
    }
    const card = this.state.items.find((i) => i.kind === 'tool' && i.agent?.agentId === agentId);
    const agent = card?.kind === 'tool' ? card.agent : undefined;
    const what = agent ? `${agent.subagentType ?? 'sub-agent'}${agent.name ? ` ${agent.name}` : ''}: ${agent.description ?? ''}` : agentId;
    try {
      const params = { workspace: folder.uri, sessionId, agentId };
      const head = await this.agent.request(Requests.sessionsMessages, { ...params, offset: 0, limit: 1 });
      const offset = Math.max(0, head.total - RESTORE_ITEMS);
      const page = head.total <= 1 ? head : await this.agent.request(Requests.sessionsMessages, { ...params, offset });
      this.env.showTranscript(`sub-agent ${agentId} (${oneLine(what, 120)}) of session ${sessionId}`, page.items, offset);
    } catch (e) {
      this.notice('error', `Cannot open the transcript of ${agentId}: ${errorMessage(e)}`);
    }
  }

  /**
   * The task list of the session shown (`pseudoclaude/tasks`): the checklist above the prompt
   * box, after a load (a resume, a reload, another folder); then `tasks` events keep it. A
   * server without the request (an older one) shows none.
   */
  async refreshTasks(): Promise<void> {
    const folder = this.state.folder;
    const sessionId = this.state.sessionId;
    if (!folder || !sessionId) {
      return;
    }
    try {
      const r = await this.agent.request(Requests.tasks, { workspace: folder.uri, sessionId });
      if (!this.isChatFolder(folder.uri) || this.state.sessionId !== sessionId || (r.sessionId && r.sessionId !== sessionId)) {
        return; // the chat shows another session now: its own list follows
      }
      const tasks = cleanTasks(r.tasks);
      if (!sameTasks(tasks, this.state.tasks)) {
        this.dispatch({ type: 'tasks', tasks });
      }
    } catch (e) {
      this.env.log(`chat: tasks of ${sessionId}: ${errorMessage(e)}`);
    }
  }

  private async switchFolder(uri: string): Promise<void> {
    const folder = this.env.folders().find((f) => sameUri(f.uri, uri));
    if (!folder || (this.state.folder && sameUri(this.state.folder.uri, uri))) {
      return;
    }
    if (this.runs.size > 0) {
      // The chat's runs (shown or in the background) are of this folder's sessions.
      this.notice('warning', RUN_IN_PROGRESS);
      this.restore(this.state);
      return;
    }
    this.otherRun = false;
    this.restore({ ...emptyState(folder, this.env.folders()), seq: this.state.seq, commands: this.state.commands });
    this.env.sessionsChanged(folder);
    await this.reload();
    await Promise.all([this.refreshSessions(), this.refreshMcp()]);
  }

  /** The window's folders changed. */
  foldersChanged(): void {
    const folders = this.env.folders();
    const keep = this.state.folder && folders.find((f) => normalizeUri(f.uri) === normalizeUri(this.state.folder?.uri ?? ''));
    if (keep) {
      this.dispatch({ type: 'folders', folders });
      return;
    }
    this.restore({ ...emptyState(this.env.activeFolder() ?? folders[0] ?? null, folders), commands: this.state.commands });
    void this.reload().then(() => Promise.all([this.refreshSessions(), this.refreshMcp()]));
  }

  // ------------------------------------------------------------------------ session actions

  /**
   * A new session (`worktree`: in a git worktree of its own, whose changes reach the folder when
   * applied); the chat shows it, empty.
   */
  async newSession(options: { worktree?: boolean } = {}): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    const what = options.worktree ? 'New session in a worktree' : 'New session';
    this.switching++;
    try {
      const r = await this.agent.request(Requests.sessionsNew, {
        workspace: folder.uri,
        ...(options.worktree ? { worktree: true } : {}),
      }).finally(() => this.switching--);
      const branch = r.worktree?.branch ?? null;
      const listed: SessionSummary[] = this.state.sessions.some((s) => s.id === r.sessionId)
        ? this.state.sessions
        : [
            {
              id: r.sessionId, title: '', createdAt: '', updatedAt: '', messageCount: 0, bytes: 0, model: '',
              active: true, running: false, worktree: branch, answered: false,
            },
            ...this.state.sessions,
          ];
      this.restore({ ...fromItems({ ...this.state, sessions: listed }, r.sessionId, []) });
      if (r.worktree) {
        this.notice(
          'info',
          `New session in a git worktree of its own: branch ${r.worktree.branch}, in ${r.worktree.path}. ` +
            `Its changes reach ${folder.name} only when you apply them (Changes, Apply above).`,
        );
      }
      this.focus();
    } catch (e) {
      this.notice('error', describeFailure(what, e));
    }
    await this.afterChange(folder);
  }

  async resume(sessionId: string): Promise<void> {
    const folder = this.needFolder();
    if (!folder || sessionId === '' || sessionId === this.state.sessionId) {
      return;
    }
    this.switching++;
    try {
      const r = await this.agent.request(Requests.sessionsResume, { workspace: folder.uri, sessionId })
        .finally(() => this.switching--);
      await this.reload();
      if (r.badLines > 0 || r.repaired > 0) {
        this.notice(
          'warning',
          `Resumed ${r.sessionId}: ${plural(r.badLines, 'unreadable line')} skipped, ${plural(r.repaired, 'repair')} made to the history.`,
        );
      }
    } catch (e) {
      this.notice('error', describeFailure('Resume', e));
      this.restore(this.state); // the picker shows the session that is still current
    }
    await this.afterChange(folder);
  }

  // ------------------------------------------------------------------------ compaction

  async compactPreview(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    try {
      const preview = await this.agent.request(Requests.compactPreview, { workspace: folder.uri });
      const plan = previewPlan(preview, folder.name);
      if (plan.kind === 'nothing') {
        this.notice('info', plan.message);
        return;
      }
      this.dispatch({ type: 'preview', id: this.key('pv'), preview });
    } catch (e) {
      this.notice('error', describeFailure('Compact preview', e));
    }
  }

  async compact(id: string, instructions?: string): Promise<void> {
    const folder = this.needFolder();
    const card = this.state.items.find((i) => i.id === id);
    if (!folder || card?.kind !== 'preview' || card.status !== 'asking') {
      return;
    }
    this.dispatch({ type: 'previewDone', id, status: 'compacting' });
    const text = instructions?.trim();
    try {
      const r = await this.agent.request(Requests.compact, {
        workspace: folder.uri,
        ...(text ? { instructions: text } : {}),
      });
      this.dispatch({ type: 'previewDone', id, status: 'done', result: r.message });
    } catch (e) {
      this.dispatch({
        type: 'previewDone',
        id,
        status: 'failed',
        result: isCancelled(e) ? 'Cancelled.' : describeFailure('Compact', e),
      });
    }
    await this.refreshContext();
  }

  async undo(): Promise<void> {
    const folder = this.needFolder();
    if (!folder) {
      return;
    }
    try {
      const r = await this.agent.request(Requests.compactUndo, { workspace: folder.uri });
      if (r.restored && !this.running()) {
        await this.reload(); // what came back is in context again
      }
      this.notice(r.restored ? 'info' : 'warning', r.message);
    } catch (e) {
      this.notice('error', describeFailure('Undo compaction', e));
    }
    await this.refreshContext();
  }

  // ------------------------------------------------------------------------ rewind and fork

  /** The text of prompt `turn` as the chat shows it. */
  private promptOf(turn: number): string | undefined {
    return this.state.items.find((i): i is ItemOf<'user'> => i.kind === 'user' && i.turn === turn)?.text;
  }

  /**
   * "Rewind to here…" and `/rewind`: the prompt (picked from the session's prompts when not
   * given), what to take back (unless given), then the preview: the server's line, Rewind (and
   * Rewind and overwrite, when files changed outside the agent), Cancel, and the files, each
   * opening the diff of the file now and after the rewind. Escape at any step changes nothing.
   * After it the transcript is reloaded and the server's line shows; a rewind of the
   * conversation puts the prompt back in the box (unless a draft is there).
   */
  async rewind(turn?: number, mode?: RewindMode): Promise<void> {
    const folder = this.idleFolder();
    if (!folder) {
      return;
    }
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      this.notice('info', 'Nothing to rewind: this session has no prompt yet.');
      return;
    }
    const at = { workspace: folder.uri, sessionId };
    if (turn === undefined) {
      let turns;
      try {
        turns = (await this.agent.request(Requests.sessionsTurns, at)).turns;
      } catch (e) {
        this.notice('error', describeFailure('Rewind', e));
        return;
      }
      if (turns.length === 0) {
        this.notice('info', 'Nothing to rewind: this session has no prompt yet.');
        return;
      }
      turn = await this.env.pick(turnItems(turns, new Date()), {
        title: 'Rewind: back to before which prompt?',
        placeHolder: 'Pick a prompt (the newest first)',
      });
      if (turn === undefined) {
        return;
      }
    }
    const target = turn;
    if (mode === undefined) {
      const prompt = this.promptOf(target);
      mode = await this.env.pick(modeItems(this.checkpoints), {
        title: `Rewind to before prompt ${target}${prompt ? `: “${oneLine(prompt, 60)}”` : ''}`,
        placeHolder: 'What to take back',
      });
      if (mode === undefined) {
        return;
      }
    }
    let preview;
    try {
      preview = await this.agent.request(Requests.rewindPreview, { ...at, turn: target, mode });
    } catch (e) {
      this.notice('error', describeFailure('Rewind preview', e));
      return;
    }
    const plan = reviewPlan(preview, mode);
    if (plan.kind === 'nothing') {
      this.notice('info', plan.message);
      return;
    }
    if (plan.note) {
      this.notice('info', plan.note); // what the pick's one line cannot show whole: why no file is restored
    }
    const flow = this.key('rw');
    const diffs = new Map<string, string>();
    const files = new Map(preview.files.map((f) => [f.path, f]));
    let choice: ReviewChoice | undefined;
    try {
      choice = await this.env.pick(plan.items, {
        title: plan.title,
        placeHolder: plan.placeHolder,
        onKeep: async (c) => {
          const file = c.kind === 'file' ? files.get(c.path) : undefined;
          if (!file) {
            return undefined;
          }
          const id = diffs.get(file.path) ?? `${flow}-${diffs.size + 1}`;
          try {
            const f = await this.agent.request(Requests.rewindFile, { ...at, turn: target, path: file.path });
            if (f.binary) {
              return binaryNote(file.path);
            }
            diffs.set(file.path, id);
            await this.env.showRewindDiff({
              id,
              path: file.path,
              folder: folder.uri,
              before: f.current ?? '',
              after: f.restored ?? '',
              tool: 'rewind',
              title: rewindDiffTitle(file, target),
            });
            return undefined;
          } catch (e) {
            return `Cannot show the diff: ${errorMessage(e)}`;
          }
        },
      });
    } finally {
      // The texts of "now" would be out of date after the rewind: the diffs go with the list.
      for (const id of diffs.values()) {
        this.env.closeRewindDiff(id);
      }
    }
    if (choice?.kind !== 'rewind') {
      return;
    }
    if (this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return;
    }
    // Nothing else starts meanwhile (a prompt, another rewind); the rewind is not cancellable.
    const run = this.startRun(folder.uri);
    let line: { level: 'info' | 'warning' | 'error'; text: string };
    let done = false;
    try {
      const r = await this.agent.request(Requests.rewind, {
        ...at,
        turn: target,
        mode: choice.mode,
        ...(choice.force ? { force: true } : {}),
      });
      done = true;
      line =
        r.conflicts.length > 0
          ? { level: 'warning', text: `${r.message} Changed outside the agent, left as they are: ${r.conflicts.join(', ')}.` }
          : { level: 'info', text: r.message };
    } catch (e) {
      line = { level: 'error', text: describeFailure('Rewind', e) };
    } finally {
      this.endRun(run);
    }
    if (!this.shows(run)) {
      await this.afterChange(folder);
      return;
    }
    await this.reload();
    this.notice(line.level, line.text);
    if (done && takesConversation(choice.mode) && preview.prompt.trim() !== '') {
      this.focus(preview.prompt, true);
    }
    await this.afterChange(folder);
  }

  /**
   * "Fork from here": a new session with the conversation before prompt `turn` (the source
   * stays as it is, in the Sessions list); the chat switches to it, with the prompt in the box
   * to edit and send (unless a draft is there).
   */
  async fork(turn: number): Promise<void> {
    const folder = this.idleFolder();
    if (!folder) {
      return;
    }
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      return;
    }
    const prompt = this.promptOf(turn);
    let forked: string;
    try {
      forked = (await this.agent.request(Requests.sessionsFork, { workspace: folder.uri, sessionId, turn })).sessionId;
    } catch (e) {
      this.notice('error', describeFailure('Fork', e));
      return;
    }
    await this.resume(forked);
    if (this.state.sessionId !== forked) {
      return; // the resume failed: its notice says why
    }
    // The fork's transcript ends with the server's line saying where it comes from.
    this.notice('info', forkedNotice(turn, this.state.items.at(-1)?.kind === 'notice'));
    if (prompt !== undefined && prompt.trim() !== '') {
      this.focus(prompt, true);
    }
  }

  // ------------------------------------------------------------------------ a busy session

  /** Busy cards still asking are not answered any more (another prompt was sent). */
  private dropBusy(): void {
    for (const [id, b] of [...this.busy.entries()]) {
      if (!b.wait) {
        this.busy.delete(id);
        this.dispatch({ type: 'busyStatus', id, status: 'failed', error: 'you sent another prompt instead.' });
      }
    }
  }

  /** The busy card `id`'s prompt, when the chat can act on it now (else a notice says why). */
  private busyPrompt(id: string): BusyPrompt | undefined {
    const b = this.busy.get(id);
    if (!b || b.wait) {
      return undefined;
    }
    if (!this.isChatFolder(b.folder)) {
      return undefined;
    }
    if (this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return undefined;
    }
    return b;
  }

  /**
   * Fork on a busy card: a new session with the busy one's conversation so far (`sessions/fork`),
   * the chat switches to it and the prompt is sent there; the busy session goes on as it is.
   */
  async busyFork(id: string): Promise<void> {
    const b = this.busyPrompt(id);
    if (!b) {
      return;
    }
    this.busy.delete(id);
    this.dispatch({ type: 'busyStatus', id, status: 'forking' });
    let forked: string;
    try {
      forked = (await this.agent.request(Requests.sessionsFork, { workspace: b.folder, sessionId: b.sessionId })).sessionId;
    } catch (e) {
      this.dispatch({ type: 'busyStatus', id, status: 'failed', error: `the fork failed: ${errorMessage(e)}` });
      this.focus(b.prompt, true);
      return;
    }
    await this.resume(forked);
    if (this.state.sessionId !== forked) {
      this.focus(b.prompt, true); // the resume failed: its notice says why
      return;
    }
    const who = b.pid === null ? 'another process' : `process ${b.pid}`;
    this.notice(
      'info',
      `Forked the busy session: this new session has its conversation so far, and your prompt goes on here. ` +
        `The original goes on in ${who}; pick it in the session list to go back to it.`,
    );
    await this.ask(b.prompt, b.context ?? null);
  }

  /**
   * Wait on a busy card: ask for the folder's sessions every second until that session is not
   * running any more, then send the prompt in it (after reloading what the other writer added).
   * Stop, or the card's Cancel, ends the wait (the prompt goes back in the box); so does a failed
   * list or the session's disappearance.
   */
  async busyWait(id: string): Promise<void> {
    const b = this.busyPrompt(id);
    if (!b) {
      return;
    }
    const source = new CancelSource();
    b.wait = source;
    const run = this.startRun(b.folder, source);
    this.dispatch({ type: 'busyStatus', id, status: 'waiting' });
    this.dispatch({ type: 'runStarted' });
    let free = false;
    let error: string | undefined;
    try {
      while (!source.token.isCancellationRequested) {
        const list = await this.agent.request(Requests.sessionsList, { workspace: b.folder }, { token: source.token });
        if (this.isChatFolder(b.folder)) {
          this.dispatch({ type: 'sessions', sessions: list.sessions });
        }
        const session = list.sessions.find((s) => s.id === b.sessionId);
        if (!session) {
          error = `session ${b.sessionId} is not listed any more.`;
          break;
        }
        if (!session.running) {
          free = true;
          break;
        }
        await this.pause(this.pollMs, source.token);
      }
    } catch (e) {
      if (!isCancelled(e) && !source.token.isCancellationRequested) {
        error = `cannot tell whether the session is free: ${errorMessage(e)}`;
      }
    } finally {
      this.endRun(run);
      this.busy.delete(id);
    }
    this.dispatch({ type: 'runFinished' });
    if (!free || source.token.isCancellationRequested) {
      this.dispatch({ type: 'busyStatus', id, status: error ? 'failed' : 'cancelled', ...(error ? { error } : {}) });
      this.focus(b.prompt, true);
      return;
    }
    if (!this.isChatFolder(b.folder)) {
      return;
    }
    // What the other writer added comes first; then the prompt, in the same session.
    if (this.state.sessionId !== b.sessionId) {
      await this.resume(b.sessionId);
    } else {
      await this.reload();
    }
    if (this.state.sessionId === b.sessionId) {
      await this.ask(b.prompt, b.context ?? null);
    } else {
      this.focus(b.prompt, true);
    }
  }

  // ------------------------------------------------------------------------ worktree sessions

  /** The chat's folder and session when the session works in a worktree (else a notice). */
  private worktreeSession(): { folder: ChatFolder; sessionId: string; branch: string } | undefined {
    const folder = this.needFolder();
    const sessionId = this.state.sessionId;
    const branch = worktreeOf(this.state);
    if (!folder) {
      return undefined;
    }
    if (!sessionId || !branch) {
      this.notice('info', 'This session works in the folder itself, not in a worktree (/worktree starts one that does).');
      return undefined;
    }
    return { folder, sessionId, branch };
  }

  /**
   * Changes (the worktree line): the files the session changed in its worktree, each opening the
   * diff of the folder's file and the worktree's (the list stays up); Apply at the top.
   */
  async worktreeChanges(): Promise<void> {
    const at = this.worktreeSession();
    if (!at) {
      return;
    }
    let status;
    try {
      status = await this.agent.request(Requests.worktreeStatus, { workspace: at.folder.uri, sessionId: at.sessionId });
    } catch (e) {
      this.notice('error', describeFailure('Worktree changes', e));
      return;
    }
    const plan = changesPlan(status, at.folder.name);
    if (plan.kind === 'nothing') {
      this.notice('info', plan.message);
      return;
    }
    const choice: ChangesChoice | undefined = await this.env.pick(plan.items, {
      title: plan.title,
      placeHolder: plan.placeHolder,
      onKeep: async (c) => {
        if (c.kind !== 'file') {
          return undefined;
        }
        try {
          await this.env.showWorktreeDiff({
            folder: at.folder.uri,
            worktree: status.path,
            file: c.file,
            title: worktreeDiffTitle(c.file, status.branch),
          });
          return undefined;
        } catch (e) {
          return `Cannot show the diff: ${errorMessage(e)}`;
        }
      },
    });
    if (choice?.kind === 'apply') {
      await this.worktreeApply();
    }
  }

  /**
   * Apply (the worktree line, the Changes list): the session's changes written into the folder;
   * a card says which files, or (a file changed in the folder too) lists the conflicts: then
   * nothing was written.
   */
  async worktreeApply(): Promise<void> {
    const at = this.worktreeSession();
    if (!at) {
      return;
    }
    if (this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return;
    }
    try {
      const r = await this.agent.request(Requests.worktreeApply, { workspace: at.folder.uri, sessionId: at.sessionId });
      this.dispatch({ type: 'worktreeResult', ...applyCard(r, at.folder.name) });
    } catch (e) {
      const busy = sessionBusy(e);
      this.notice(
        busy ? 'warning' : 'error',
        busy ? `Not applied: ${busy.message} (wait for its run to end).` : describeFailure('Apply', e),
      );
    }
    await this.env.reveal().catch(() => undefined);
  }

  /**
   * Remove (the worktree line): after a modal question, the worktree and its branch are deleted
   * and the session goes on in the folder. With changes not applied the server refuses: a modal
   * warning names them and offers to remove it anyway (they are lost).
   */
  async worktreeRemove(): Promise<void> {
    const at = this.worktreeSession();
    if (!at) {
      return;
    }
    if (this.running()) {
      this.notice('warning', RUN_IN_PROGRESS);
      return;
    }
    const q = removeQuestion(at.branch, at.folder.name);
    if ((await this.env.ask(q.message, q.detail, [q.action])) !== q.action) {
      return;
    }
    const params = { workspace: at.folder.uri, sessionId: at.sessionId };
    const removed = (message: string): void => {
      // The session works in the folder now (the server's list may not name a new session yet).
      this.dispatch({
        type: 'sessions',
        sessions: this.state.sessions.map((s) => (s.id === at.sessionId ? { ...s, worktree: null } : s)),
      });
      this.notice('info', capitalized(message.replace(/(the )?main tree/g, at.folder.name)));
    };
    try {
      removed((await this.agent.request(Requests.worktreeRemove, params)).message);
    } catch (e) {
      if (!refusedForChanges(e)) {
        this.notice('error', describeFailure('Remove the worktree', e));
        return;
      }
      const f = forceQuestion(errorMessage(e), at.folder.name);
      if ((await this.env.ask(f.message, f.detail, [f.action])) !== f.action) {
        this.notice('info', `The worktree stays (branch ${at.branch}): Apply brings its changes into ${at.folder.name}.`);
        return;
      }
      try {
        removed((await this.agent.request(Requests.worktreeRemove, { ...params, force: true })).message);
      } catch (again) {
        this.notice('error', describeFailure('Remove the worktree', again));
        return;
      }
    }
    await this.afterChange(at.folder);
  }

  // ------------------------------------------------------------------------ MCP servers

  /**
   * The MCP servers of the chat's folder from `pseudoclaude/mcp/list`, for the header's button
   * (and the menu, when it is up). A server without the request lists none (`null`).
   */
  async refreshMcp(): Promise<void> {
    const folder = this.state.folder;
    if (!folder) {
      return;
    }
    const asked = ++this.mcpAsked;
    let servers: McpServer[] | null;
    try {
      servers = (await this.agent.request(Requests.mcpList, { workspace: folder.uri })).servers;
    } catch (e) {
      this.env.log(`chat: MCP servers of ${folder.name}: ${errorMessage(e)}`);
      servers = null;
    }
    if (asked !== this.mcpAsked || !this.isChatFolder(folder.uri)) {
      return; // a newer list was asked for, or the chat changed folder meanwhile
    }
    for (const key of [...this.launching]) {
      const [at, name] = key.split('\n');
      if (at === normalizeUri(folder.uri) && !stillLaunching(servers?.find((s) => s.name === name))) {
        this.launching.delete(key);
      }
    }
    this.dispatch({ type: 'mcp', servers });
    if (servers) {
      this.menu?.update(servers);
    }
  }

  /** `pseudoclaude/mcpChanged`: the servers of `workspace` changed. */
  onMcpChanged(p: McpChangedParams): void {
    if (this.isChatFolder(p.workspace)) {
      void this.refreshMcp();
    }
  }

  /**
   * The MCP menu (the header's MCP button, `/mcp`): the folder's servers with their status,
   * source and tools. Enter on one lists its tools, restarts it (failed) or asks whether to
   * approve it (Approve…: the command it would run, Allow once / Allow for this project / Deny),
   * after which the menu comes back with what changed.
   */
  async openMcp(): Promise<void> {
    const folder = this.needFolder();
    if (!folder || this.menu) {
      return;
    }
    await this.refreshMcp();
    if (this.state.mcp === null) {
      this.notice('error', 'Cannot list the MCP servers: the server does not answer pseudoclaude/mcp/list (see the PseudoClaude Server log).');
      return;
    }
    let focus: string | undefined;
    for (;;) {
      if (!this.isChatFolder(folder.uri)) {
        return;
      }
      const launching = [...this.launching]
        .map((key) => key.split('\n'))
        .filter(([at]) => at === normalizeUri(folder.uri))
        .map(([, name]) => name ?? '');
      const menu = new McpMenu(folder.name, this.state.mcp ?? [], (server) => this.restartMcp(folder, server), {
        launching,
        ...(focus !== undefined ? { focus } : {}),
      });
      this.menu = menu;
      let exit: McpExit | undefined;
      try {
        exit = await this.env.mcpMenu(menu);
      } finally {
        this.menu = undefined;
      }
      if (!exit) {
        return;
      }
      if (exit.kind === 'approve') {
        await this.approveMcp(folder, exit.server);
        focus = exit.server;
        continue; // back to the menu, on that server, which shows what changed
      }
      await this.env.openMcpConfig(exit.kind, folder).catch((e: unknown) =>
        this.notice('error', `Cannot open ${exit.kind === 'settings' ? 'the setting' : '.mcp.json'}: ${errorMessage(e)}`),
      );
      return;
    }
  }

  /** `pseudoclaude/mcp/restart`: the server's new entry (the list refreshes too). */
  private async restartMcp(folder: ChatFolder, server: string): Promise<McpServer | undefined> {
    const r = await this.agent.request(Requests.mcpRestart, { workspace: folder.uri, server });
    void this.refreshMcp();
    return r.server;
  }

  /**
   * Approve… on a server of the menu: the question (with the command it would run), then the
   * answer: to the server's own question when it is still up in the chat, else with
   * `pseudoclaude/mcp/approve`. Dismissed: nothing changes.
   */
  private async approveMcp(folder: ChatFolder, name: string): Promise<void> {
    const server = (this.state.mcp ?? []).find((s) => s.name === name);
    if (!server) {
      return;
    }
    const command =
      this.serverCommands.get(serverKey(folder.uri, name)) ??
      (server.source === 'project' ? mcpJsonCommand(await this.env.readFile(folder, '.mcp.json'), name) : undefined);
    const { message, detail } = serverQuestion(server, command);
    const picked = await this.env.ask(message, detail, SERVER_ANSWERS.map((a) => a.title));
    const decision = serverDecision(picked);
    if (!decision) {
      return;
    }
    const asking = [...this.approvals.entries()].find(
      ([, a]) => a.server && a.server.name === name && sameUri(a.server.folder, folder.uri),
    );
    if (decision !== 'deny') {
      this.launching.add(serverKey(folder.uri, name));
    }
    if (asking) {
      this.settle(asking[0], decision); // the server's question gets the answer
      return;
    }
    try {
      await this.agent.request(Requests.mcpApprove, { workspace: folder.uri, server: name, decision });
    } catch (e) {
      this.launching.delete(serverKey(folder.uri, name));
      this.notice('error', describeFailure(`Approve ${name}`, e));
    }
    await this.refreshMcp();
  }

  // ------------------------------------------------------------------------ permission mode

  /** The mode picker's fields, dispatched when one changed. */
  private syncMode(next: { mode?: PermissionMode | null; modes?: PermissionMode[] | null; sandbox?: ChatState['sandbox'] }): void {
    const s = this.state;
    const same =
      (next.mode === undefined || next.mode === s.mode) &&
      (next.modes === undefined || JSON.stringify(next.modes) === JSON.stringify(s.modes)) &&
      (next.sandbox === undefined || JSON.stringify(next.sandbox) === JSON.stringify(s.sandbox));
    if (!same) {
      this.dispatch({ type: 'mode', ...next });
    }
  }

  /**
   * The modes the picker offers, the mode and the sandbox, from `pseudoclaude/permissions` (for
   * the session shown). A server without the request (an older one) offers no picker.
   */
  async refreshPermissions(): Promise<void> {
    const folder = this.state.folder;
    if (!folder) {
      return;
    }
    const sessionId = this.state.sessionId;
    try {
      const r = await this.agent.request(Requests.permissions, { workspace: folder.uri, ...(sessionId ? { sessionId } : {}) });
      if (!this.isChatFolder(folder.uri) || this.state.sessionId !== sessionId) {
        return; // the chat shows another session now: its own listing follows
      }
      this.syncMode({
        modes: offeredModes(r.modes),
        ...(isMode(r.mode) && this.modeChanging === 0 ? { mode: r.mode } : {}),
        sandbox: r.sandbox,
      });
    } catch (e) {
      this.env.log(`chat: permissions of ${folder.name}: ${errorMessage(e)}`);
    }
  }

  /**
   * The mode picker, Shift+Tab, the Set Permission Mode command: `pseudoclaude/mode` for the
   * session shown (with none yet: the mode the next one starts in). The picker shows the new
   * mode at once; a refusal (an unknown mode, bypassPermissions not allowed) puts the mode back
   * and shows why under the picker. Changes are sent in order. Returns the server's line, or
   * the error.
   */
  setMode(mode: PermissionMode): Promise<{ message: string } | { error: string } | undefined> {
    const folder = this.needFolder();
    if (!folder) {
      return Promise.resolve(undefined);
    }
    const sessionId = this.state.sessionId;
    const was = this.state.mode;
    this.modeChanging++;
    this.dispatch({ type: 'mode', mode, error: null });
    const sent = this.modeQueue.then(async () => {
      try {
        const r = await this.agent.request(Requests.mode, { workspace: folder.uri, mode, ...(sessionId ? { sessionId } : {}) });
        if (this.isChatFolder(folder.uri) && this.state.sessionId === sessionId && this.state.mode === mode) {
          this.syncMode({ mode: isMode(r.mode) ? r.mode : mode });
        }
        return { message: r.message };
      } catch (e) {
        const error = `Cannot switch to ${mode}: ${errorMessage(e)}`;
        if (this.isChatFolder(folder.uri) && this.state.sessionId === sessionId && this.state.mode === mode) {
          this.dispatch({ type: 'mode', mode: was, error });
        }
        return { error };
      } finally {
        this.modeChanging--;
      }
    });
    this.modeQueue = sent;
    return sent;
  }

  /**
   * Set Permission Mode (the Command Palette): the modes offered, each with what it means, the
   * current one marked; the one picked is set as the picker would.
   */
  async pickMode(): Promise<{ message: string } | { error: string } | undefined> {
    const folder = this.needFolder();
    if (!folder) {
      return { error: 'Open a folder first: the agent works inside a workspace folder.' };
    }
    await this.refreshPermissions();
    const current = this.state.mode;
    const modes = this.state.modes ?? offeredModes(null);
    const picked = await this.env.pick(
      modes.map((m) => ({
        label: `${m === current ? '$(check) ' : ''}${m}`,
        description: MODE_MEANINGS[m],
        value: m,
      })),
      {
        title: 'PseudoClaude: Set Permission Mode',
        placeHolder: current ? `Now: ${current}. What may the agent do without asking?` : 'What may the agent do without asking?',
      },
    );
    return picked === undefined ? undefined : this.setMode(picked);
  }

  // ------------------------------------------------------------------------ approvals

  /** A `window/showMessageRequest` approval is up (a modal dialog): its card. Returns its id. */
  modalApprovalShown(message: string): string {
    const id = this.key('ap');
    const card = modalApprovalCard(message);
    this.dispatch({ type: 'approval', id, mode: 'modal', ...card });
    return id;
  }

  modalApprovalAnswered(id: string, title: string | undefined | null): void {
    const mode = planModeOf(title);
    this.dispatch({ type: 'approvalDone', id, status: modalStatus(title), ...(mode ? { mode } : {}) });
  }

  /**
   * `pseudoclaude/approve`: a card with Allow once / Allow for this session / Deny in the chat
   * (and the change in the diff editor for a write) until the user answers; a cancelled request
   * or run answers `deny`. A plan (`kind: plan`): its Markdown with Approve (`default`), Approve
   * and accept edits (`acceptEdits`) and Keep planning (with feedback); anything but an approval
   * (a cancelled request, the end of the run) keeps planning.
   */
  async approve(p: ApproveParams, token?: CancelToken): Promise<ApproveResult> {
    const id = this.key('ap');
    const folders = this.env.folders();
    const named = folders.length > 1 ? folders.find((f) => sameUri(f.uri, p.workspace))?.name : undefined;
    const card = inlineApprovalCard(p, named);
    const diff: DiffRequest | undefined =
      p.kind === 'write' && p.path !== undefined
        ? { id, path: p.path, folder: p.workspace, before: p.before ?? '', after: p.after ?? '', tool: p.tool }
        : undefined;
    const server = p.kind === 'mcpServer' ? { folder: p.workspace, name: card.server ?? p.tool } : undefined;
    if (server && (p.command ?? p.url)) {
      this.serverCommands.set(serverKey(server.folder, server.name), (p.command ?? p.url) as string);
    }
    const outside = server !== undefined || p.kind === 'permissions' || p.kind === 'hooks';
    const sessionId = outside ? undefined : p.sessionId || undefined;
    const plan = p.kind === 'plan';
    const status = new Promise<ApprovalAnswer>((resolve) => {
      this.approvals.set(id, {
        resolve,
        ...(plan ? { plan } : {}),
        ...(card.rule ? { rule: card.rule } : {}),
        ...(diff ? { diff } : {}),
        ...(server ? { server } : {}),
        outsideRun: outside,
        ...(sessionId ? { sessionId } : {}),
        folder: p.workspace,
      });
    });
    const action: ChatAction = { type: 'approval', id, mode: 'inline', ...card };
    const pending = this.approvals.get(id);
    // A session in the background (the chat shows another one): its question waits, with its
    // card, until the chat shows that session; a notification says so, with a button to go there.
    const background = sessionId !== undefined && !this.showsSession(p.workspace, sessionId);
    if (background) {
      if (pending) {
        pending.card = reduce({ ...this.state, items: [] }, action).items.find((i) => i.id === id);
      }
      this.asking();
    } else {
      this.dispatch(action);
      const shown = this.state.items.find((i) => i.id === id);
      if (pending && shown) {
        pending.card = shown;
      }
    }
    const cancelled = token?.onCancellationRequested(() => this.settle(id, 'cancelled'));
    if (token?.isCancellationRequested) {
      this.settle(id, 'cancelled');
    }
    if (background) {
      void this.notifyBackground(id, sessionId, card.title);
    } else {
      await this.env.reveal().catch(() => undefined);
      if (diff) {
        await this.env.showDiff(diff).catch((e: unknown) => this.env.log(`chat: diff of ${diff.path}: ${errorMessage(e)}`));
      }
    }
    const { status: answer, message, mode } = await status;
    cancelled?.dispose();
    if (plan) {
      // Approved (in the mode chosen), else kept planning (with the feedback, if any).
      return answer === 'approve'
        ? { decision: 'approve', mode: mode ?? 'default', message: null, feedback: null }
        : { decision: 'keepPlanning', feedback: answer === 'keepPlanning' && message ? message : null, message: null, mode: null };
    }
    const allowed = answer === 'allowOnce' || answer === 'allowSession' || answer === 'allowAlways';
    if (server) {
      if (allowed) {
        this.launching.add(serverKey(server.folder, server.name));
      }
      void this.refreshMcp();
    }
    return { decision: allowed ? answer : 'deny', message: !allowed && message ? message : null, mode: null, feedback: null };
  }

  /** Whether the chat shows `sessionId` of `folder` (a chat with no session yet shows its first run's). */
  private showsSession(folder: string, sessionId: string): boolean {
    if (!this.isChatFolder(folder)) {
      return false;
    }
    const shown = this.state.sessionId;
    return shown === sessionId || (shown === null && (this.runs.has('') || this.runs.size === 0));
  }

  /** The title of a session as the picker shows it. */
  private sessionTitle(sessionId: string): string {
    const s = this.state.sessions.find((x) => x.id === sessionId);
    return oneLine(s?.title.trim() || sessionId, 60);
  }

  /** The sessions whose run waits for an approval the chat does not show: the picker marks them. */
  private asking(): void {
    const ids = this.askingOf(this.state.sessionId);
    if (JSON.stringify(ids) !== JSON.stringify(this.state.asking ?? [])) {
      this.dispatch({ type: 'asking', sessions: ids });
    }
  }

  /**
   * A background session's approval: a notification naming the session, with a button that
   * shows it (the card waits there). Answered meanwhile, or cancelled: nothing to do.
   */
  private async notifyBackground(id: string, sessionId: string, what: string): Promise<void> {
    const title = this.sessionTitle(sessionId);
    const clicked = await this.env
      .notify(`Session "${title}" needs your approval: ${what}`, [SHOW_SESSION])
      .catch(() => undefined);
    const pending = this.approvals.get(id);
    if (clicked !== SHOW_SESSION || !pending) {
      return;
    }
    await this.showSession(pending.folder ?? '', sessionId);
  }

  /** Bring the chat up on `sessionId` of `folder` (an approval waits there). */
  async showSession(folder: string, sessionId: string): Promise<void> {
    await this.env.reveal(true).catch(() => undefined);
    if (!this.isChatFolder(folder)) {
      this.notice('warning', `That session is of another folder: pick ${this.env.folders().find((f) => sameUri(f.uri, folder))?.name ?? 'it'} first.`);
      return;
    }
    await this.resume(sessionId);
    const diff = [...this.approvals.values()].find((a) => a.sessionId === sessionId && a.diff)?.diff;
    if (diff && this.state.sessionId === sessionId) {
      await this.env.showDiff(diff).catch((e: unknown) => this.env.log(`chat: diff of ${diff.path}: ${errorMessage(e)}`));
    }
  }

  /**
   * An answer from the card: "Always allow" only where a rule was offered (else it counts as
   * for this session, as the server takes it); a denial's message (trimmed) goes to the agent.
   * A plan is approved (in `mode`: default unless acceptEdits) or kept planning (any other
   * answer), with the feedback (trimmed); a plan's answers to anything else deny.
   */
  private answer(id: string, decision: ApprovalDecision, message?: string, mode?: PlanMode): void {
    const pending = this.approvals.get(id);
    if (pending?.plan) {
      if (decision === 'approve') {
        this.settle(id, 'approve', undefined, isPlanMode(mode) ? mode : 'default');
      } else {
        this.settle(id, 'keepPlanning', message?.trim() || undefined);
      }
      return;
    }
    const plain = decision === 'approve' || decision === 'keepPlanning' ? 'deny' : decision;
    const status = plain === 'allowAlways' && !pending?.rule ? 'allowSession' : plain;
    const said = decision === 'deny' ? message?.trim() : undefined;
    this.settle(id, status, said || undefined);
  }

  private settle(id: string, status: ApprovalStatus, message?: string, mode?: PlanMode): void {
    const pending = this.approvals.get(id);
    if (!pending) {
      return;
    }
    this.approvals.delete(id);
    this.dispatch({ type: 'approvalDone', id, status, ...(message ? { message } : {}), ...(mode ? { mode } : {}) });
    if (pending.sessionId !== undefined) {
      this.asking();
    }
    if (pending.diff) {
      this.env.closeDiff(id);
    }
    pending.resolve({ status, ...(message ? { message } : {}), ...(mode ? { mode } : {}) });
  }

  /**
   * The approvals of the run of `sessionId` are no longer asked (a project server's question
   * stays, and so do the other sessions' runs' questions; `null`: a session not known yet).
   */
  private cancelApprovals(sessionId: string | null): void {
    for (const [id, a] of [...this.approvals.entries()]) {
      if (!a.outsideRun && (a.sessionId === undefined || sessionId === null || a.sessionId === sessionId)) {
        this.settle(id, 'cancelled');
      }
    }
  }

  /** Inline approvals waiting for an answer (the adapter's diff editor buttons use the newest). */
  pendingApprovals(): string[] {
    return [...this.approvals.keys()];
  }

  /** Answer an inline approval from outside the webview (the diff editor's title buttons). */
  decide(id: string, decision: ApprovalDecision): void {
    this.answer(id, decision);
  }
}

function capitalized(text: string): string {
  return text ? `${text[0]?.toUpperCase()}${text.slice(1)}` : text;
}

function serverKey(folder: string, server: string): string {
  return `${normalizeUri(folder)}\n${server}`;
}
