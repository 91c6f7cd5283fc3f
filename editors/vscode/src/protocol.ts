/**
 * The PseudoClaude LSP surface (SPEC §8): method names, params, results and notifications.
 * Pure types and constants: no `vscode` import, so everything here is unit-tested with node.
 */

export const Requests = {
  run: 'pseudoclaude/run',
  compact: 'pseudoclaude/compact',
  context: 'pseudoclaude/context',
  memoryShow: 'pseudoclaude/memory/show',
  memoryRemember: 'pseudoclaude/memory/remember',
  memoryForget: 'pseudoclaude/memory/forget',
  sessionsList: 'pseudoclaude/sessions/list',
  sessionsResume: 'pseudoclaude/sessions/resume',
  sessionsNew: 'pseudoclaude/sessions/new',
  sessionsMessages: 'pseudoclaude/sessions/messages',
} as const;

export const Notifications = {
  event: 'pseudoclaude/event',
  memoryChanged: 'pseudoclaude/memoryChanged',
  contextUsage: 'pseudoclaude/contextUsage',
} as const;

/** JSON-RPC error codes the server answers with. */
export const ErrorCodes = {
  InvalidParams: -32602,
  RequestFailed: -32803,
  RequestCancelled: -32800,
} as const;

export const MEMORY_TYPES = [
  'user_preference',
  'correction_feedback',
  'project_knowledge',
  'reference_material',
] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];
export type MemoryLevel = 'project' | 'user';

/** Every request takes an optional workspace folder URI. */
export interface WorkspaceParams {
  workspace?: string;
}

/** Run and compact accept a client-created work-done token (LSP `WorkDoneProgressParams`). */
export interface WorkDoneParams {
  workDoneToken?: string;
}

export interface RunParams extends WorkspaceParams, WorkDoneParams {
  prompt: string;
  sessionId?: string;
}

export type StopReason =
  | 'completed'
  | 'max_iterations'
  | 'canceled'
  | 'unknown_tool_limit'
  | 'error';

export interface RunResult {
  sessionId: string;
  stopReason: StopReason | string;
  text: string;
  iterations: number;
  usage: { inputTokens: number; outputTokens: number };
  error?: string | null;
}

export interface CompactParams extends WorkspaceParams, WorkDoneParams {
  instructions?: string;
}

export interface CompactResult {
  beforeTokens: number;
  afterTokens: number;
  offloaded: number;
  summarized: boolean;
}

export interface ContextResult {
  sessionId: string | null;
  messageCount: number;
  estimatedTokens: number;
  contextWindow: number;
  autoCompactThreshold: number;
  autoCompactFailures: number;
  autoCompactTripped: boolean;
}

export interface MemoryNote {
  filename: string;
  uri: string;
  type: string;
  title: string;
  summary: string;
}

export interface MemoryStore {
  level: MemoryLevel;
  dir: string;
  indexUri: string;
  notes: MemoryNote[];
}

export interface MemoryShowResult {
  index: string;
  truncated: boolean;
  stores: MemoryStore[];
}

export interface RememberParams extends WorkspaceParams {
  text: string;
  level: MemoryLevel;
  type?: MemoryType;
  title?: string;
}

export interface RememberResult {
  filename: string;
  uri: string;
}

export interface ForgetParams extends WorkspaceParams {
  level: MemoryLevel;
  filename: string;
}

export interface ForgetResult {
  removed: boolean;
}

export interface SessionInfo {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  bytes: number;
  model: string | null;
  active: boolean;
}

export interface SessionsListResult {
  sessions: SessionInfo[];
}

export interface ResumeParams extends WorkspaceParams {
  sessionId: string;
}

export interface ResumeResult {
  sessionId: string;
  messageCount: number;
  badLines: number;
  repaired: number;
}

export interface NewSessionResult {
  sessionId: string;
}

export interface MessagesParams extends WorkspaceParams {
  sessionId?: string;
  offset?: number;
  limit?: number;
}

/** A message in the v1 log shape (SPEC §3); fields other than `role` may be absent. */
export interface LogMessage {
  role: 'user' | 'assistant' | string;
  content?: string;
  tool_calls?: { id: string; name: string; arguments: unknown }[];
  tool_result?: { call_id: string; name: string; content: string; is_error?: boolean };
}

export interface MessagesResult {
  total: number;
  messages: LogMessage[];
}

/** Method → [params, result]: the typed request table the client adapter implements. */
export interface RequestTypes {
  'pseudoclaude/run': [RunParams, RunResult];
  'pseudoclaude/compact': [CompactParams, CompactResult];
  'pseudoclaude/context': [WorkspaceParams, ContextResult];
  'pseudoclaude/memory/show': [WorkspaceParams, MemoryShowResult];
  'pseudoclaude/memory/remember': [RememberParams, RememberResult];
  'pseudoclaude/memory/forget': [ForgetParams, ForgetResult];
  'pseudoclaude/sessions/list': [WorkspaceParams, SessionsListResult];
  'pseudoclaude/sessions/resume': [ResumeParams, ResumeResult];
  'pseudoclaude/sessions/new': [WorkspaceParams, NewSessionResult];
  'pseudoclaude/sessions/messages': [MessagesParams, MessagesResult];
}
export type RequestMethod = keyof RequestTypes;
export type ParamsOf<M extends RequestMethod> = RequestTypes[M][0];
export type ResultOf<M extends RequestMethod> = RequestTypes[M][1];

interface EventBase {
  workspace: string;
  sessionId: string;
}

export type AgentEvent = EventBase &
  (
    | { kind: 'text'; delta: string }
    | { kind: 'toolCall'; id: string; name: string; arguments: unknown }
    | { kind: 'toolResult'; id: string; name: string; isError: boolean; bytes: number; preview: string }
    | { kind: 'compact'; layer: number; beforeTokens: number; afterTokens: number; offloaded: number }
    | {
        kind: 'memory';
        status: 'updated' | 'unchanged' | 'failed';
        changes: { action: string; level: string; filename: string }[];
        error?: string | null;
      }
    | { kind: 'usage'; inputTokens: number; outputTokens: number; cacheRead: number; cacheWrite: number }
    | { kind: 'warning'; message: string }
    | { kind: 'error'; message: string }
    | { kind: 'stop'; stopReason: string }
  );

export interface MemoryChanged {
  workspace: string;
  level: MemoryLevel;
  source: 'hand-edit' | 'update' | 'remember' | 'forget' | string;
}

export interface ContextUsage {
  workspace: string;
  sessionId: string | null;
  estimatedTokens: number;
  contextWindow: number;
  autoCompactThreshold: number;
}

/** The `value` of a `$/progress` work-done notification. */
export type WorkDoneProgress =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'end'; message?: string };

/** Actions of an approval prompt (`window/showMessageRequest`, SPEC §8). */
export const ApprovalActions = {
  once: 'Allow once',
  session: 'Allow for this session',
  deny: 'Deny',
} as const;
