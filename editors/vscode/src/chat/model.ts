/**
 * The chat's state and its reducer (SPEC §11 "Editors"): what the chat view shows, as plain data.
 * The extension host and the webview run the same reducer on the same actions, so the host can
 * hand a freshly loaded webview the exact state it shows (`restore`). Pure: no DOM, no `vscode`.
 */
import { cleanContext, type EditorChip } from '../editorContext';
import type { MeterState } from '../meter';
import { isMode } from '../permissions';
import { cleanTasks, type ChatTask } from './tasks';
import {
  agentArgs,
  agentStatus,
  AGENT_CALLS,
  AGENT_TEXT,
  newAgent,
  taskIdOf,
  withInfo,
  type AgentCall,
  type BackgroundTask,
  type ChatAgent,
} from './agents';
import type {
  AgentEvent,
  AgentInfo,
  ApprovalDecision,
  CompactPreviewResult,
  EditorContext,
  FactCheck,
  McpServer,
  PermissionMode,
  RunResult,
  SandboxState,
  SessionSummary,
  SlashCommand,
  ToolCallItem,
  TranscriptItem,
} from '../protocol';

/** `denied`: the user (or the policy) refused it; `canceled`: the run stopped while it ran. */
export type ToolStatus = 'running' | 'waiting' | 'done' | 'failed' | 'denied' | 'canceled' | 'interrupted';

/** Where an approval is answered: VS Code's modal dialog (`showMessageRequest`) or the card itself. */
export type ApprovalMode = 'modal' | 'inline';
export type ApprovalStatus = 'pending' | ApprovalDecision | 'dismissed' | 'cancelled';

/**
 * What an approval is about, beyond a tool call of the run: a tool of an MCP server (`mcp`),
 * starting a project's MCP server (`mcpServer`), applying what a folder's own settings file
 * asks for (`permissions`) or the plan `exit_plan_mode` presents (`plan`: approved, or kept
 * planning with feedback). `mcpServer` and `permissions` are asked when the folder opens, not in
 * a run; they stay until answered.
 */
export type ApprovalAbout = 'mcp' | 'mcpServer' | 'permissions' | 'hooks' | 'plan';

/** The modes an approved plan may be carried out in. */
export type PlanMode = 'default' | 'acceptEdits';

export function isPlanMode(value: unknown): value is PlanMode {
  return value === 'default' || value === 'acceptEdits';
}

/** Whether an approval is asked outside a run (the end of a run leaves it pending). */
export function outsideRun(about: ApprovalAbout | undefined): boolean {
  return about === 'mcpServer' || about === 'permissions' || about === 'hooks';
}

export type PreviewStatus = 'asking' | 'compacting' | 'done' | 'cancelled' | 'failed';

/** A busy card: `asking` (Fork / Wait), `waiting` (polling; Cancel), `forking`, or how it ended. */
export type BusyStatus = 'asking' | 'waiting' | 'forking' | 'cancelled' | 'failed';

export type NoticeLevel = 'info' | 'warning' | 'error';

/** What a restored item says of the model's context: `false` when it no longer sees it (summarized away, undone). */
export interface ContextFlag {
  outOfContext?: true;
}

/** A line of the session's own history (from the server's transcript): a compaction, an undo, a rewind. */
export type MarkerKind = 'compaction' | 'undo' | 'rewind';

export type ChatItem = (
  /** `turn`: the prompt's number, as the server counts them (rewind, fork); none once rewound away, or until counted. */
  | {
      kind: 'user';
      id: string;
      text: string;
      turn?: number;
      /** What the prompt was sent with (the active file, the selection, the open files). */
      context?: EditorContext;
    }
  | { kind: 'assistant'; id: string; text: string; streaming: boolean; thinking?: string }
  | {
      kind: 'tool';
      id: string;
      callId: string;
      name: string;
      arguments: unknown;
      status: ToolStatus;
      bytes?: number;
      /** The result (or its error) as readable text, from the server. */
      display?: string;
      /** A failed, denied or canceled call's own message. */
      error?: string;
      /** An `agent` call: the sub-agent it started (once its first event or the list says). */
      agent?: ChatAgent;
    }
  | {
      kind: 'approval';
      id: string;
      tool: string;
      title: string;
      detail: string;
      mode: ApprovalMode;
      status: ApprovalStatus;
      /** A write whose change can be shown in the diff editor (inline approvals). */
      path?: string;
      about?: ApprovalAbout;
      /** The MCP server (`mcp`, `mcpServer`). */
      server?: string;
      /** The call's arguments as pretty JSON, shown folded when long (`mcp`). */
      args?: string;
      /** The permission rule "Always allow" adds (absent: it is not offered). */
      rule?: string;
      /** Why it is asked (the mode, or the rule that asks). */
      reason?: string;
      /** What a denial told the agent (a plan kept planning: the feedback). */
      message?: string;
      /** An approved plan: the mode it is carried out in. */
      planMode?: PlanMode;
    }
  /** The summary an earlier compaction put first (from the transcript). */
  | { kind: 'summary'; id: string; text: string }
  | { kind: 'marker'; id: string; marker: MarkerKind; text: string }
  /** The context breakdown at one moment (`/context`). */
  | { kind: 'context'; id: string; meter: MeterState | null }
  /** The session at a glance (`/status`), or the hooks (`/hooks`, `title`), in the server's words. */
  | { kind: 'status'; id: string; text: string; title?: string }
  | {
      kind: 'compact';
      id: string;
      layer: number;
      beforeTokens: number;
      afterTokens: number;
      offloaded: number;
      factCheck?: FactCheck;
    }
  | { kind: 'preview'; id: string; preview: CompactPreviewResult; status: PreviewStatus; result?: string }
  | {
      kind: 'memory';
      id: string;
      status: string;
      changes: { action: string; level: string; filename: string }[];
      error?: string;
    }
  | { kind: 'notice'; id: string; level: NoticeLevel; text: string }
  /**
   * A prompt the server refused because another writer (another window, a terminal) holds the
   * session: Fork (send it in a copy of the session) or Wait (send it here once the session is free).
   */
  | {
      kind: 'busy';
      id: string;
      sessionId: string;
      /** The process writing the session (`null`: not known). */
      pid: number | null;
      prompt: string;
      status: BusyStatus;
      /** Why a fork or the wait failed. */
      error?: string;
    }
  /** What an Apply of a worktree session did: the files written, or the conflicts (nothing written). */
  | { kind: 'worktree'; id: string; level: NoticeLevel; title: string; files: string[]; note?: string }
  | {
      kind: 'end';
      id: string;
      stopReason: string;
      iterations?: number;
      inputTokens?: number;
      outputTokens?: number;
      error?: string;
    }
) &
  ContextFlag;

export type ItemKind = ChatItem['kind'];
export type ItemOf<K extends ItemKind> = Extract<ChatItem, { kind: K }>;

export interface ChatFolder {
  uri: string;
  name: string;
}

export interface ChatState {
  folder: ChatFolder | null;
  /** The window's workspace folders (a picker shows when there are several). */
  folders: ChatFolder[];
  sessionId: string | null;
  items: ChatItem[];
  /** Messages of the session before the first one shown. */
  earlier: number;
  running: boolean;
  meter: MeterState | null;
  sessions: SessionSummary[];
  /** The server's slash commands; `null` until listed (or when the server has none to list). */
  commands: SlashCommand[] | null;
  /** The folder's MCP servers (`pseudoclaude/mcp/list`); `null` until listed. */
  mcp: McpServer[] | null;
  /** The file (and selection) of the editor that goes with the next prompt; null: none, or removed. */
  chip: EditorChip | null;
  /** The next item id. */
  seq: number;
  /** Sessions (not the one shown) whose run waits for an approval: the picker marks them. */
  asking?: string[];
  /** The permission mode of the session shown (of the next session, before one); `null`: not known (an older server). */
  mode: PermissionMode | null;
  /** The modes the mode picker offers (`pseudoclaude/permissions`); `null`: not listed yet. */
  modes: PermissionMode[] | null;
  /** Whether commands run in the sandbox (`null`: not known). */
  sandbox: SandboxState | null;
  /** Why the last change of mode failed (shown by the picker until the next change). */
  modeError: string | null;
  /** The task list of the session shown (the checklist above the prompt box); empty: hidden. */
  tasks: ChatTask[];
  /** The background sub-agents of the session shown (the list above the prompt box). */
  bgTasks: BackgroundTask[];
  /** Which card (item id) holds each sub-agent. */
  agentCards: Record<string, string>;
}

export function emptyState(folder: ChatFolder | null = null, folders: ChatFolder[] = []): ChatState {
  return {
    folder,
    folders,
    sessionId: null,
    items: [],
    earlier: 0,
    running: false,
    meter: null,
    sessions: [],
    commands: null,
    mcp: null,
    chip: null,
    seq: 1,
    mode: null,
    modes: null,
    sandbox: null,
    modeError: null,
    tasks: [],
    bgTasks: [],
    agentCards: {},
  };
}

/** What changes the chat: host → webview messages other than `restore` and `focus`. */
export type ChatAction =
  | { type: 'event'; event: AgentEvent }
  | { type: 'runStarted'; prompt?: string; context?: EditorContext }
  | { type: 'runFinished'; result?: RunResult; canceled?: boolean; error?: string }
  | { type: 'meter'; meter: MeterState | null }
  | { type: 'asking'; sessions: string[] }
  | { type: 'sessions'; sessions: SessionSummary[] }
  | { type: 'folders'; folders: ChatFolder[] }
  | { type: 'commands'; commands: SlashCommand[] | null }
  | { type: 'mcp'; servers: McpServer[] | null }
  /** The prompt box's chip (the editor's active file and selection). */
  | { type: 'chip'; chip: EditorChip | null }
  /**
   * The mode picker: the mode (of the session shown), the modes offered, the sandbox, the error
   * of the last change (`null` clears it); a field left out stays as it is.
   */
  | {
      type: 'mode';
      mode?: PermissionMode | null;
      modes?: PermissionMode[] | null;
      sandbox?: SandboxState | null;
      error?: string | null;
    }
  /** The context breakdown as the meter has it, shown in the transcript (`/context`). */
  | { type: 'contextShown' }
  /** The session at a glance, shown in the transcript (`/status`). */
  | { type: 'statusShown'; text: string; title?: string }
  | {
      type: 'approval';
      id: string;
      tool: string;
      title: string;
      detail: string;
      mode: ApprovalMode;
      path?: string;
      about?: ApprovalAbout;
      server?: string;
      args?: string;
      rule?: string;
      reason?: string;
    }
  /** `message`: what a denial told the agent, or a plan's feedback; `mode`: an approved plan's. */
  | { type: 'approvalDone'; id: string; status: ApprovalStatus; message?: string; mode?: PlanMode }
  /** The task list of the session shown (`pseudoclaude/tasks`, after a load). */
  | { type: 'tasks'; tasks: ChatTask[] }
  | { type: 'preview'; id: string; preview: CompactPreviewResult }
  | { type: 'previewDone'; id: string; status: PreviewStatus; result?: string }
  | { type: 'notice'; level: NoticeLevel; text: string }
  /**
   * The run's prompt was refused (`SessionBusy`): the run ends, the prompt (not sent) leaves the
   * transcript for the busy card, which holds it.
   */
  | { type: 'busy'; id: string; sessionId: string; pid: number | null; prompt: string }
  | { type: 'busyStatus'; id: string; status: BusyStatus; error?: string }
  | { type: 'worktreeResult'; level: NoticeLevel; title: string; files: string[]; note?: string }
  /** The session's prompts as the server numbers them (`pseudoclaude/sessions/turns`). */
  | { type: 'turns'; turns: readonly { turn: number; prompt: string }[] }
  /** The session's sub-agents as their logs say (`pseudoclaude/agents/list`). */
  | { type: 'agents'; agents: readonly AgentInfo[] };

// ------------------------------------------------------------------------------------ helpers

function nextId(state: ChatState): [string, number] {
  return [`i${state.seq}`, state.seq + 1];
}

function withItem(state: ChatState, make: (id: string) => ChatItem): ChatState {
  const [id, seq] = nextId(state);
  return { ...state, items: [...state.items, make(id)], seq };
}

/** Replace the last item matching `test` with `update(item)`; unchanged when none matches. */
function updateLast<K extends ItemKind>(
  state: ChatState,
  kind: K,
  test: (item: ItemOf<K>) => boolean,
  update: (item: ItemOf<K>) => ItemOf<K>,
): ChatState {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item && item.kind === kind && test(item as ItemOf<K>)) {
      const items = state.items.slice();
      items[i] = update(item as ItemOf<K>);
      return { ...state, items };
    }
  }
  return state;
}

function updateById(state: ChatState, id: string, update: (item: ChatItem) => ChatItem): ChatState {
  const i = state.items.findIndex((it) => it.id === id);
  const item = state.items[i];
  if (!item) {
    return state;
  }
  const items = state.items.slice();
  items[i] = update(item);
  return { ...state, items };
}

/** The streaming answer stops streaming (a tool call, the end of the run). */
function closeStreaming(state: ChatState): ChatState {
  const last = state.items[state.items.length - 1];
  if (last?.kind === 'assistant' && last.streaming) {
    const items = state.items.slice();
    items[items.length - 1] = { ...last, streaming: false };
    return { ...state, items };
  }
  return state;
}

/** Tool cards still running when the run ended did not finish (cancelled, failed). */
function interruptTools(state: ChatState): ChatState {
  const open = (i: ChatItem): boolean => i.kind === 'tool' && (i.status === 'running' || i.status === 'waiting');
  if (!state.items.some(open)) {
    return state;
  }
  return {
    ...state,
    items: state.items.map((i) => (i.kind === 'tool' && open(i) ? { ...i, status: 'interrupted', ...endAgent(i.agent) } : i)),
  };
}

/** A foreground sub-agent still running when its call ended without a result: it was cancelled. */
function endAgent(agent: ChatAgent | undefined): { agent?: ChatAgent } {
  return agent && agent.status === 'running' && !agent.background
    ? { agent: { ...agent, status: 'canceled', calls: agent.calls.map((c) => (c.status === 'running' ? { ...c, status: 'interrupted' } : c)) } }
    : {};
}

/** Approvals of the run still pending when it ended (not a project server's: it stays until answered). */
function resolvePendingModals(state: ChatState, status: ApprovalStatus): ChatState {
  const ofRun = (i: ChatItem): boolean => i.kind === 'approval' && i.status === 'pending' && !outsideRun(i.about);
  if (!state.items.some(ofRun)) {
    return state;
  }
  return {
    ...state,
    items: state.items.map((i) => (i.kind === 'approval' && ofRun(i) ? { ...i, status } : i)),
  };
}

/** A result's status (the server's words) as a card's. */
export function resultStatus(status: string | undefined, isError = false): ToolStatus {
  switch (status) {
    case 'done':
      return 'done';
    case 'error':
      return 'failed';
    case 'denied':
      return 'denied';
    case 'canceled':
      return 'canceled';
    case 'pending':
      return 'interrupted';
    default:
      return isError ? 'failed' : 'done';
  }
}

// ------------------------------------------------------------------------------------ reducer

function onEvent(state: ChatState, e: AgentEvent): ChatState {
  if (e.sessionId && e.sessionId !== state.sessionId) {
    state = { ...state, sessionId: e.sessionId };
  }
  if (e.agentId && e.kind !== 'task') {
    // A sub-agent's: under the card of the `agent` call that started it, not in the parent's stream.
    return onAgentEvent(state, e.agentId, e);
  }
  switch (e.kind) {
    case 'text': {
      if (e.delta === '') {
        return state;
      }
      const last = state.items[state.items.length - 1];
      if (last?.kind === 'assistant' && last.streaming) {
        const items = state.items.slice();
        items[items.length - 1] = { ...last, text: last.text + e.delta };
        return { ...state, items };
      }
      return withItem(state, (id) => ({ kind: 'assistant', id, text: e.delta, streaming: true }));
    }
    case 'toolCall':
      return withItem(closeStreaming(state), (id) => ({
        kind: 'tool',
        id,
        callId: e.id,
        name: e.name,
        arguments: e.arguments,
        status: 'running',
      }));
    case 'toolResult': {
      const update = (t: ItemOf<'tool'>): ItemOf<'tool'> => ({
        ...t,
        status: resultStatus(e.status, e.isError),
        bytes: e.bytes,
        // An older server sends no `display`: its error line, else the raw preview.
        display: e.display ?? e.error ?? e.preview,
        ...(e.error ? { error: e.error } : {}),
      });
      const found = updateLast(state, 'tool', (t) => t.callId === e.id, update);
      if (found !== state) {
        return e.name === 'agent' ? agentCallEnded(found, e.id) : found;
      }
      // A result whose call is not shown (the view was restored mid-call).
      return withItem(state, (id) =>
        update({ kind: 'tool', id, callId: e.id, name: e.name, arguments: undefined, status: 'running' }),
      );
    }
    case 'compact':
      return withItem(closeStreaming(state), (id) => ({
        kind: 'compact',
        id,
        layer: e.layer,
        beforeTokens: e.beforeTokens,
        afterTokens: e.afterTokens,
        offloaded: e.offloaded,
        ...(e.factCheck ? { factCheck: e.factCheck } : {}),
      }));
    case 'memory':
      if (e.status === 'unchanged') {
        return state;
      }
      return withItem(state, (id) => ({
        kind: 'memory',
        id,
        status: e.status,
        changes: e.changes ?? [],
        ...(e.error ? { error: e.error } : {}),
      }));
    case 'warning':
      return withItem(state, (id) => ({ kind: 'notice', id, level: 'warning', text: e.message }));
    case 'error':
      return withItem(closeStreaming(state), (id) => ({ kind: 'notice', id, level: 'error', text: e.message }));
    case 'stop':
      return withItem(interruptTools(closeStreaming(state)), (id) => ({ kind: 'end', id, stopReason: e.stopReason }));
    case 'usage':
      return state;
    case 'mode':
      // The session's mode changed (a request, a command, an approved plan): the picker follows.
      return isMode(e.mode) ? { ...state, mode: e.mode, modeError: null } : state;
    case 'tasks':
      // The whole list, after each change (and after a resume, a fork, a rewind).
      return { ...state, tasks: cleanTasks(e.tasks) };
    case 'task': {
      // A background sub-agent started or ended: the list above the prompt box and its card
      // follow; its end is also a line (its result reaches the model with the next request).
      const status = agentStatus(e.status) ?? 'failed';
      const label = e.name || e.description;
      const task: BackgroundTask = {
        taskId: e.taskId,
        status,
        subagentType: e.subagentType,
        label,
        ...(e.result ? { result: e.result } : {}),
      };
      const known = state.bgTasks.some((t) => t.taskId === e.taskId);
      state = {
        ...state,
        bgTasks: known ? state.bgTasks.map((t) => (t.taskId === e.taskId ? task : t)) : [...state.bgTasks, task],
      };
      state = updateAgent(state, e.taskId, { description: e.description }, (a) => ({
        ...a,
        status,
        background: true,
        subagentType: e.subagentType,
        description: e.description,
        ...(e.name ? { name: e.name } : {}),
        ...(status !== 'running' && e.result ? { text: e.result.slice(-AGENT_TEXT) } : {}),
      }));
      if (status === 'running') {
        return state;
      }
      const text = `Background task ${e.taskId} (${e.subagentType}) ${status === 'canceled' ? 'stopped' : status}: ${label}${e.result ? `\n${e.result}` : ''}`;
      const level = status === 'failed' ? 'warning' : 'info';
      return withItem(state, (id) => ({ kind: 'notice', id, level, text }));
    }
  }
}

/** The end marker of the run that just finished: the `stop` event's, if it came after the last prompt. */
function lastEnd(state: ChatState): ItemOf<'end'> | undefined {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item?.kind === 'end') {
      return item;
    }
    if (item?.kind === 'user') {
      return undefined;
    }
  }
  return undefined;
}

function onRunFinished(state: ChatState, a: Extract<ChatAction, { type: 'runFinished' }>): ChatState {
  state = resolvePendingModals(interruptTools(closeStreaming({ ...state, running: false })), 'cancelled');
  const r = a.result;
  if (r) {
    if (r.sessionId) {
      state = { ...state, sessionId: r.sessionId };
    }
    const streamed = state.items.some((i, n) => i.kind === 'assistant' && n > lastUserIndex(state));
    if (!streamed && r.text) {
      state = withItem(state, (id) => ({ kind: 'assistant', id, text: r.text, streaming: false }));
    }
    const details = {
      stopReason: r.stopReason,
      iterations: r.iterations,
      inputTokens: r.usage?.inputTokens,
      outputTokens: r.usage?.outputTokens,
      ...(r.error ? { error: r.error } : {}),
    };
    const end = lastEnd(state);
    return end
      ? updateById(state, end.id, (i) => ({ ...i, ...details }) as ChatItem)
      : withItem(state, (id) => ({ kind: 'end', id, ...details }));
  }
  if (a.canceled) {
    return lastEnd(state) ? state : withItem(state, (id) => ({ kind: 'end', id, stopReason: 'canceled' }));
  }
  if (a.error) {
    return withItem(state, (id) => ({ kind: 'notice', id, level: 'error', text: a.error ?? '' }));
  }
  return state;
}

function lastUserIndex(state: ChatState): number {
  for (let i = state.items.length - 1; i >= 0; i--) {
    if (state.items[i]?.kind === 'user') {
      return i;
    }
  }
  return -1;
}

export function reduce(state: ChatState, a: ChatAction): ChatState {
  switch (a.type) {
    case 'event':
      return onEvent(state, a.event);
    case 'runStarted': {
      const { prompt, context } = a;
      // A prompt sent: the line about a refused change of mode has been seen.
      const started = { ...closeStreaming(state), running: true, ...(prompt !== undefined ? { modeError: null } : {}) };
      return prompt === undefined
        ? started
        : withItem(started, (id) => ({ kind: 'user', id, text: prompt, ...(context ? { context } : {}) }));
    }
    case 'runFinished':
      return onRunFinished(state, a);
    case 'meter':
      return { ...state, meter: a.meter };
    case 'asking':
      return { ...state, asking: a.sessions };
    case 'sessions': {
      // The list may be older than the session the chat shows: it does not change it. The server
      // lists sessions with a message: a new one stays as the chat knew it (its worktree's branch).
      const shown = state.sessionId && !a.sessions.some((s) => s.id === state.sessionId)
        ? state.sessions.find((s) => s.id === state.sessionId)
        : undefined;
      return { ...state, sessions: shown ? [shown, ...a.sessions] : a.sessions };
    }
    case 'folders':
      return { ...state, folders: a.folders };
    case 'commands':
      return { ...state, commands: a.commands };
    case 'mcp':
      return { ...state, mcp: a.servers };
    case 'chip':
      return { ...state, chip: a.chip };
    case 'mode':
      return {
        ...state,
        ...(a.mode !== undefined ? { mode: a.mode } : {}),
        ...(a.modes !== undefined ? { modes: a.modes } : {}),
        ...(a.sandbox !== undefined ? { sandbox: a.sandbox } : {}),
        ...(a.error !== undefined ? { modeError: a.error } : {}),
      };
    case 'contextShown': {
      const meter = state.meter;
      return withItem(state, (id) => ({ kind: 'context', id, meter }));
    }
    case 'statusShown': {
      const { text, title } = a;
      return withItem(state, (id) => ({ kind: 'status', id, text, ...(title ? { title } : {}) }));
    }
    case 'approval': {
      const { id, tool, title, detail, mode, path, about, server, args, rule, reason } = a;
      // The call it is about waits for the answer (a question when the folder opens is no call).
      const base = outsideRun(about) ? state : closeStreaming(state);
      const waiting =
        outsideRun(about)
          ? base
          : updateLast(base, 'tool', (t) => t.name === tool && t.status === 'running', (t) => ({ ...t, status: 'waiting' }));
      return {
        ...waiting,
        items: [
          ...waiting.items,
          {
            kind: 'approval',
            id,
            tool,
            title,
            detail,
            mode,
            status: 'pending',
            ...(path ? { path } : {}),
            ...(about ? { about } : {}),
            ...(server !== undefined ? { server } : {}),
            ...(args ? { args } : {}),
            ...(rule ? { rule } : {}),
            ...(reason ? { reason } : {}),
          },
        ],
      };
    }
    case 'approvalDone': {
      const card = state.items.find((i) => i.id === a.id);
      const answered = updateById(state, a.id, (i) =>
        i.kind === 'approval'
          ? { ...i, status: a.status, ...(a.message ? { message: a.message } : {}), ...(a.mode ? { planMode: a.mode } : {}) }
          : i,
      );
      return card?.kind === 'approval' && !outsideRun(card.about)
        ? updateLast(answered, 'tool', (t) => t.name === card.tool && t.status === 'waiting', (t) => ({ ...t, status: 'running' }))
        : answered;
    }
    case 'preview':
      return {
        ...state,
        items: [...state.items, { kind: 'preview', id: a.id, preview: a.preview, status: 'asking' }],
      };
    case 'previewDone':
      return updateById(state, a.id, (i) =>
        i.kind === 'preview' ? { ...i, status: a.status, ...(a.result ? { result: a.result } : {}) } : i,
      );
    case 'notice':
      return withItem(state, (id) => ({ kind: 'notice', id, level: a.level, text: a.text }));
    case 'turns':
      return numberPrompts(state, a.turns);
    case 'busy':
      return onBusy(state, a);
    case 'busyStatus':
      return updateById(state, a.id, (i) =>
        i.kind === 'busy' ? { ...i, status: a.status, ...(a.error ? { error: a.error } : {}) } : i,
      );
    case 'tasks':
      return { ...state, tasks: cleanTasks(a.tasks) };
    case 'agents':
      return onAgents(state, a.agents);
    case 'worktreeResult': {
      const { level, title, files, note } = a;
      return withItem(state, (id) => ({ kind: 'worktree', id, level, title, files, ...(note ? { note } : {}) }));
    }
  }
}

/** The refused prompt leaves the transcript (it was not sent); the card that holds it follows. */
function onBusy(state: ChatState, a: Extract<ChatAction, { type: 'busy' }>): ChatState {
  let next = { ...interruptTools(closeStreaming(state)), running: false };
  const last = next.items[next.items.length - 1];
  if (last?.kind === 'user' && last.turn === undefined && last.text === a.prompt) {
    next = { ...next, items: next.items.slice(0, -1) };
  }
  return {
    ...next,
    items: [
      ...next.items,
      { kind: 'busy', id: a.id, sessionId: a.sessionId, pid: a.pid, prompt: a.prompt, status: 'asking' },
    ],
  };
}

/** The branch of the worktree the chat's session works in (`null`: it works in the folder itself). */
export function worktreeOf(state: Pick<ChatState, 'sessions' | 'sessionId'>): string | null {
  return (state.sessionId && state.sessions.find((s) => s.id === state.sessionId)?.worktree) || null;
}

/**
 * The numbers of the prompts sent since the transcript was loaded: the prompts with no number
 * after the last one that has one (rewound prompts, out of context, never get one), matched from
 * the end with the server's last turns by their text; the first that does not match stops it.
 */
export function numberPrompts(state: ChatState, turns: readonly { turn: number; prompt: string }[]): ChatState {
  const open: number[] = [];
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item?.kind !== 'user') {
      continue;
    }
    if (item.turn !== undefined) {
      break;
    }
    if (!item.outOfContext) {
      open.push(i);
    }
  }
  if (open.length === 0 || turns.length === 0) {
    return state;
  }
  const items = state.items.slice();
  let t = turns.length - 1;
  for (const i of open) {
    const item = items[i];
    const next = turns[t];
    if (item?.kind !== 'user' || !next || next.prompt.trim() !== item.text.trim()) {
      break;
    }
    items[i] = { ...item, turn: next.turn };
    t--;
  }
  return { ...state, items };
}

// ------------------------------------------------------------------------------------ sub-agents

type ToolItem = ItemOf<'tool'>;

function isAgentCard(i: ChatItem): i is ToolItem {
  return i.kind === 'tool' && i.name === 'agent';
}

/**
 * The card that holds sub-agent `agentId`: the one it was put in, else the `agent` call `callId`,
 * the background call that answered its `taskId`, the oldest running `agent` call with no
 * sub-agent yet (its description first); none: a card of its own at the end (its call is not
 * shown: an earlier page, a restore).
 */
function cardOf(state: ChatState, agentId: string, hint: { callId?: string; description?: string }): [ChatState, string] {
  const linked = state.agentCards[agentId];
  if (linked && state.items.some((i) => i.id === linked)) {
    return [state, linked];
  }
  const cards = state.items.filter(isAgentCard);
  const free = (i: ToolItem): boolean => !i.agent || i.agent.agentId === agentId;
  const found =
    (hint.callId ? cards.find((i) => i.callId === hint.callId) : undefined) ??
    cards.find((i) => taskIdOf(i.display) === agentId) ??
    (() => {
      const open = cards.filter((i) => free(i) && !i.agent && (i.status === 'running' || i.status === 'waiting'));
      return (hint.description ? open.find((i) => agentArgs(i.arguments).description === hint.description) : undefined) ?? open[0];
    })();
  if (found) {
    return [{ ...state, agentCards: { ...state.agentCards, [agentId]: found.id } }, found.id];
  }
  const [id, seq] = nextId(state);
  const card: ToolItem = {
    kind: 'tool',
    id,
    callId: hint.callId ?? '',
    name: 'agent',
    arguments: hint.description ? { description: hint.description } : {},
    status: 'running',
  };
  return [{ ...state, items: [...state.items, card], seq, agentCards: { ...state.agentCards, [agentId]: id } }, id];
}

/** Update sub-agent `agentId` in its card (made from the call's arguments the first time). */
function updateAgent(
  state: ChatState,
  agentId: string,
  hint: { callId?: string; description?: string },
  update: (agent: ChatAgent) => ChatAgent,
): ChatState {
  const [linked, id] = cardOf(state, agentId, hint);
  return updateById(linked, id, (i) => {
    if (i.kind !== 'tool') {
      return i;
    }
    const { background, ...args } = agentArgs(i.arguments);
    const agent = i.agent ?? newAgent(agentId, { ...args, ...(background ? { background } : {}) });
    return { ...i, agent: update(agent) };
  });
}

function keepCalls(calls: AgentCall[]): AgentCall[] {
  return calls.length > AGENT_CALLS ? calls.slice(calls.length - AGENT_CALLS) : calls;
}

function onAgentEvent(state: ChatState, agentId: string, e: AgentEvent): ChatState {
  switch (e.kind) {
    case 'text':
      return e.delta === '' ? state : updateAgent(state, agentId, {}, (a) => ({ ...a, text: (a.text + e.delta).slice(-AGENT_TEXT) }));
    case 'toolCall':
      return updateAgent(state, agentId, {}, (a) => ({
        ...a,
        // What it said before this call is done; the next answer starts afresh.
        text: '',
        calls: keepCalls([...a.calls, { callId: e.id, name: e.name, arguments: e.arguments, status: 'running' }]),
      }));
    case 'toolResult': {
      const status = resultStatus(e.status, e.isError);
      const display = e.display ?? e.error ?? e.preview;
      return updateAgent(state, agentId, {}, (a) => {
        const known = a.calls.some((c) => c.callId === e.id);
        const done = (c: AgentCall): AgentCall => ({ ...c, status: status === 'waiting' ? 'running' : status, ...(display ? { display } : {}) });
        return {
          ...a,
          calls: known
            ? a.calls.map((c) => (c.callId === e.id ? done(c) : c))
            : keepCalls([...a.calls, done({ callId: e.id, name: e.name, arguments: undefined, status: 'running' })]),
        };
      });
    }
    case 'usage':
      return updateAgent(state, agentId, {}, (a) =>
        a.usageFinal ? a : { ...a, inputTokens: a.inputTokens + e.inputTokens, outputTokens: a.outputTokens + e.outputTokens },
      );
    case 'warning':
    case 'error':
      return updateAgent(state, agentId, {}, (a) => ({ ...a, notes: [...a.notes, e.message].slice(-3) }));
    default:
      // Compactions, memory, modes, task lists and stops of a sub-agent are its own business.
      return state;
  }
}

/**
 * The parent's `agent` call ended: a background one answered its task's id (its sub-agent goes
 * on); a foreground one's sub-agent ended with it (the list says exactly how, later).
 */
function agentCallEnded(state: ChatState, callId: string): ChatState {
  const card = [...state.items].reverse().find((i): i is ToolItem => isAgentCard(i) && i.callId === callId);
  if (!card) {
    return state;
  }
  const taskId = taskIdOf(card.display);
  if (taskId) {
    return updateAgent(state, taskId, { callId }, (a) => ({ ...a, background: true }));
  }
  const agent = card.agent;
  if (!agent || agent.background || agent.status !== 'running') {
    return state;
  }
  const status = card.status === 'done' ? 'completed' : card.status === 'failed' ? 'failed' : 'canceled';
  return updateById(state, card.id, (i) =>
    i.kind === 'tool' && i.agent
      ? { ...i, agent: { ...i.agent, status, calls: i.agent.calls.map((c) => (c.status === 'running' ? { ...c, status: 'interrupted' } : c)) } }
      : i,
  );
}

/**
 * The log names the call that started it: a sub-agent put in another card by the order of the
 * calls moves there (with what it showed so far).
 */
function relink(state: ChatState, agentId: string, callId: string | undefined): ChatState {
  const linked = state.agentCards[agentId];
  const from = linked ? state.items.find((i) => i.id === linked) : undefined;
  const to = callId ? state.items.find((i): i is ToolItem => isAgentCard(i) && i.callId === callId) : undefined;
  if (!to || !from || from.kind !== 'tool' || from.id === to.id || (to.agent && to.agent.agentId !== agentId)) {
    return state;
  }
  const agent = from.agent;
  const items = state.items.map((i) =>
    i.id === from.id && i.kind === 'tool' ? { ...i, agent: undefined } : i.id === to.id && i.kind === 'tool' ? { ...i, ...(agent ? { agent } : {}) } : i,
  );
  return { ...state, items, agentCards: { ...state.agentCards, [agentId]: to.id } };
}

/** What the sub-agents' logs say (`agents/list`): the cards of the calls it names, and the tasks. */
function onAgents(state: ChatState, infos: readonly AgentInfo[]): ChatState {
  for (const info of infos) {
    const callId = info.callId || undefined;
    const shown =
      state.agentCards[info.agentId] !== undefined ||
      state.items.some((i) => isAgentCard(i) && ((callId !== undefined && i.callId === callId) || taskIdOf(i.display) === info.agentId));
    if (shown) {
      state = relink(state, info.agentId, callId);
      state = updateAgent(state, info.agentId, { ...(callId ? { callId } : {}), description: info.description }, (a) => withInfo(a, info));
    }
    const task = state.bgTasks.find((t) => t.taskId === info.agentId);
    const status = agentStatus(info.status);
    if (task && status && task.status !== status) {
      state = { ...state, bgTasks: state.bgTasks.map((t) => (t.taskId === info.agentId ? { ...t, status } : t)) };
    } else if (!task && status) {
      const id = state.agentCards[info.agentId];
      const card = id ? state.items.find((i) => i.id === id) : undefined;
      if (card?.kind === 'tool' && card.agent?.background) {
        const bg: BackgroundTask = { taskId: info.agentId, status, subagentType: info.subagentType, label: info.name || info.description };
        state = { ...state, bgTasks: [...state.bgTasks, bg] };
      }
    }
  }
  return state;
}

// ------------------------------------------------------------------------------------ the transcript

function toolOf(t: ToolCallItem, id: string): ItemOf<'tool'> {
  return {
    kind: 'tool',
    id,
    callId: t.id,
    name: t.name,
    arguments: t.arguments,
    status: resultStatus(t.status),
    ...(t.bytes !== undefined ? { bytes: t.bytes } : {}),
    ...(t.status !== 'pending' ? { display: t.preview } : {}),
    ...(t.error ? { error: t.error } : {}),
  };
}

/** The editor context a prompt of the transcript was sent with, when the server says (an object). */
function contextOf(t: TranscriptItem & { kind: 'user' }): EditorContext | undefined {
  return cleanContext(t.context);
}

/** The chat item of a transcript item (the server built it; nothing is decoded here). */
function chatItemOf(t: TranscriptItem, id: string): ChatItem {
  switch (t.kind) {
    case 'user': {
      const context = contextOf(t);
      return {
        kind: 'user',
        id,
        text: t.text,
        ...(t.turn !== undefined ? { turn: t.turn } : {}),
        ...(context ? { context } : {}),
      };
    }
    case 'assistant':
      return { kind: 'assistant', id, text: t.text, streaming: false, ...(t.thinking ? { thinking: t.thinking } : {}) };
    case 'toolCall':
      return toolOf(t, id);
    case 'summary':
      return { kind: 'summary', id, text: t.text };
    case 'compaction':
    case 'undo':
    case 'rewind':
      return { kind: 'marker', id, marker: t.kind, text: t.message };
    case 'notice':
      return { kind: 'notice', id, level: 'info', text: t.text };
  }
}

/**
 * The transcript of a session from its items (`pseudoclaude/sessions/messages`), as the server
 * built them: prompts, answers, tool cards with their status and readable result, the summary of
 * a compaction, the compactions, undos and rewinds. Items the model no longer sees stay, marked
 * `outOfContext`. `earlier`: items before these that are not shown. `live`: the session runs
 * (its events stream on from here): calls still pending are running; otherwise they show as
 * interrupted.
 */
export function fromItems(
  base: ChatState,
  sessionId: string | null,
  items: readonly TranscriptItem[],
  earlier = 0,
  live = false,
): ChatState {
  // Another session's task list is not this one's (its own is asked for after the load).
  const same = sessionId === base.sessionId;
  const tasks = same ? base.tasks : [];
  // Its background tasks (the list) stay; the cards are rebuilt (`agents/list` fills them in).
  const bgTasks = same ? base.bgTasks : [];
  let state: ChatState = { ...base, sessionId, items: [], earlier, running: live, tasks, bgTasks, agentCards: {} };
  for (const t of items) {
    if ((t.kind === 'user' || t.kind === 'assistant') && t.text.trim() === '' && !(t.kind === 'assistant' && t.thinking)) {
      continue;
    }
    state = withItem(state, (id) => {
      const item = chatItemOf(t, id);
      return t.inContext === false ? { ...item, outOfContext: true } : item;
    });
    const added = state.items[state.items.length - 1];
    const taskId = added && isAgentCard(added) ? taskIdOf(added.display) : undefined;
    if (added && taskId) {
      // A background call: its sub-agent (a task) is known by the id it answered.
      state = updateAgent(state, taskId, { callId: (added as ToolItem).callId }, (a) => ({ ...a, background: true }));
    }
  }
  if (live) {
    // The calls of the prompt running now still wait for their result.
    const from = lastUserIndex(state);
    return {
      ...state,
      items: state.items.map((i, n) => (n > from && i.kind === 'tool' && i.status === 'interrupted' ? { ...i, status: 'running' } : i)),
    };
  }
  return interruptTools(state);
}

/** The prompts of the transcript, oldest first (the prompt box's history after a restore). */
export function promptsOf(state: ChatState): string[] {
  return state.items.filter((i): i is ItemOf<'user'> => i.kind === 'user').map((i) => i.text);
}
