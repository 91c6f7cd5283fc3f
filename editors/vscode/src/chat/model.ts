/**
 * The chat's state and its reducer (SPEC §11 "Editors"): what the chat view shows, as plain data.
 * The extension host and the webview run the same reducer on the same actions, so the host can
 * hand a freshly loaded webview the exact state it shows (`restore`). Pure: no DOM, no `vscode`.
 */
import type { MeterState } from '../meter';
import type {
  AgentEvent,
  ApprovalDecision,
  CompactPreviewResult,
  FactCheck,
  LogMessage,
  RunResult,
  SessionSummary,
} from '../protocol';

export type ToolStatus = 'running' | 'waiting' | 'done' | 'failed' | 'interrupted';

/** Where an approval is answered: VS Code's modal dialog (`showMessageRequest`) or the card itself. */
export type ApprovalMode = 'modal' | 'inline';
export type ApprovalStatus = 'pending' | ApprovalDecision | 'dismissed' | 'cancelled';

export type PreviewStatus = 'asking' | 'compacting' | 'done' | 'cancelled' | 'failed';

export type NoticeLevel = 'info' | 'warning' | 'error';

export type ChatItem =
  | { kind: 'user'; id: string; text: string }
  | { kind: 'assistant'; id: string; text: string; streaming: boolean }
  | {
      kind: 'tool';
      id: string;
      callId: string;
      name: string;
      arguments: unknown;
      status: ToolStatus;
      bytes?: number;
      preview?: string;
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
    }
  /** The summary an earlier compaction put first (from the log). */
  | { kind: 'summary'; id: string; text: string }
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
  | {
      kind: 'end';
      id: string;
      stopReason: string;
      iterations?: number;
      inputTokens?: number;
      outputTokens?: number;
      error?: string;
    };

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
  /** The next item id. */
  seq: number;
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
    seq: 1,
  };
}

/** What changes the chat: host → webview messages other than `restore` and `focus`. */
export type ChatAction =
  | { type: 'event'; event: AgentEvent }
  | { type: 'runStarted'; prompt?: string }
  | { type: 'runFinished'; result?: RunResult; canceled?: boolean; error?: string }
  | { type: 'meter'; meter: MeterState | null }
  | { type: 'sessions'; sessions: SessionSummary[] }
  | { type: 'folders'; folders: ChatFolder[] }
  | {
      type: 'approval';
      id: string;
      tool: string;
      title: string;
      detail: string;
      mode: ApprovalMode;
      path?: string;
    }
  | { type: 'approvalDone'; id: string; status: ApprovalStatus }
  | { type: 'preview'; id: string; preview: CompactPreviewResult }
  | { type: 'previewDone'; id: string; status: PreviewStatus; result?: string }
  | { type: 'notice'; level: NoticeLevel; text: string };

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
    items: state.items.map((i) => (i.kind === 'tool' && open(i) ? { ...i, status: 'interrupted' } : i)),
  };
}

function resolvePendingModals(state: ChatState, status: ApprovalStatus): ChatState {
  if (!state.items.some((i) => i.kind === 'approval' && i.status === 'pending')) {
    return state;
  }
  return {
    ...state,
    items: state.items.map((i) => (i.kind === 'approval' && i.status === 'pending' ? { ...i, status } : i)),
  };
}

// ------------------------------------------------------------------------------------ reducer

function onEvent(state: ChatState, e: AgentEvent): ChatState {
  if (e.sessionId && e.sessionId !== state.sessionId) {
    state = { ...state, sessionId: e.sessionId };
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
        status: e.isError ? 'failed' : 'done',
        bytes: e.bytes,
        preview: e.preview,
      });
      const found = updateLast(state, 'tool', (t) => t.callId === e.id, update);
      if (found !== state) {
        return found;
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
      const prompt = a.prompt;
      const started = { ...closeStreaming(state), running: true };
      return prompt === undefined ? started : withItem(started, (id) => ({ kind: 'user', id, text: prompt }));
    }
    case 'runFinished':
      return onRunFinished(state, a);
    case 'meter':
      return { ...state, meter: a.meter };
    case 'sessions':
      // The list may be older than the session the chat shows: it does not change it.
      return { ...state, sessions: a.sessions };
    case 'folders':
      return { ...state, folders: a.folders };
    case 'approval': {
      const { id, tool, title, detail, mode, path } = a;
      // The call it is about waits for the answer.
      const waiting = updateLast(closeStreaming(state), 'tool', (t) => t.name === tool && t.status === 'running', (t) => ({
        ...t,
        status: 'waiting',
      }));
      return {
        ...waiting,
        items: [
          ...waiting.items,
          { kind: 'approval', id, tool, title, detail, mode, status: 'pending', ...(path ? { path } : {}) },
        ],
      };
    }
    case 'approvalDone': {
      const card = state.items.find((i) => i.id === a.id);
      const answered = updateById(state, a.id, (i) => (i.kind === 'approval' ? { ...i, status: a.status } : i));
      return card?.kind === 'approval'
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
  }
}

// ------------------------------------------------------------------------------------ the log

/** The end of a summary message an earlier compaction put first (the server's boundary reminder). */
export const SUMMARY_MARKER = '[Context boundary]';

export function isSummaryMessage(m: LogMessage): boolean {
  return m.role === 'user' && typeof m.content === 'string' && m.content.includes(SUMMARY_MARKER);
}

/** The summary text without the server's boundary reminder. */
export function summaryText(content: string): string {
  const cut = content.lastIndexOf(SUMMARY_MARKER);
  return (cut < 0 ? content : content.slice(0, cut)).trim();
}

/** Characters of a tool result kept as its preview (as the `toolResult` event's). */
export const RESULT_PREVIEW_CHARS = 200;

/**
 * The transcript of a session from its messages (`pseudoclaude/sessions/messages`): prompts,
 * answers, tool cards with their results, the summary of an earlier compaction (its
 * acknowledgement is not shown). `earlier`: messages before these that are not shown. Only for a
 * session that is not running: calls without results show as interrupted.
 */
export function fromLog(base: ChatState, sessionId: string | null, messages: LogMessage[], earlier = 0): ChatState {
  let state: ChatState = { ...base, sessionId, items: [], earlier, running: false };
  let afterSummary = false;
  for (const m of messages) {
    if (m.tool_result) {
      const r = m.tool_result;
      const content = typeof r.content === 'string' ? r.content : JSON.stringify(r.content ?? '');
      const update = (t: ItemOf<'tool'>): ItemOf<'tool'> => ({
        ...t,
        status: r.is_error ? 'failed' : 'done',
        bytes: new TextEncoder().encode(content).length,
        preview: content.slice(0, RESULT_PREVIEW_CHARS),
      });
      const found = updateLast(state, 'tool', (t) => t.callId === r.call_id, update);
      state =
        found !== state
          ? found
          : withItem(state, (id) =>
              update({ kind: 'tool', id, callId: r.call_id, name: r.name, arguments: undefined, status: 'running' }),
            );
      afterSummary = false;
      continue;
    }
    if (isSummaryMessage(m)) {
      state = withItem(state, (id) => ({ kind: 'summary', id, text: summaryText(m.content ?? '') }));
      afterSummary = true;
      continue;
    }
    const content = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'user') {
      if (content.trim() !== '') {
        state = withItem(state, (id) => ({ kind: 'user', id, text: content }));
      }
    } else if (m.role === 'assistant') {
      if (content.trim() !== '' && !afterSummary) {
        state = withItem(state, (id) => ({ kind: 'assistant', id, text: content, streaming: false }));
      }
      for (const call of m.tool_calls ?? []) {
        state = withItem(state, (id) => ({
          kind: 'tool',
          id,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
          status: 'running',
        }));
      }
    }
    afterSummary = false;
  }
  // Calls whose results are not in the log did not finish (a cancelled or crashed run).
  return interruptTools(state);
}

/** The prompts of the transcript, oldest first (the prompt box's history after a restore). */
export function promptsOf(state: ChatState): string[] {
  return state.items.filter((i): i is ItemOf<'user'> => i.kind === 'user').map((i) => i.text);
}
