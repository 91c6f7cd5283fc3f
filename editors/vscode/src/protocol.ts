/**
 * The PseudoClaude LSP surface (SPEC §8, §11): method names, params, results and notifications.
 * It mirrors the server's `server/pseudoclaude/lsp/protocol.py` (names and shapes, camelCase as on
 * the wire) as `editors/nvim/lua/pseudoclaude/protocol.lua` does; `tests/editors/test_protocol_sync.py`
 * fails when their requests, notifications, commands or error codes differ.
 * Pure types and constants: no `vscode` import, so everything here is unit-tested with node.
 */

/** Client → server requests (`REQUESTS`), each also a `workspace/executeCommand` command. */
export const Requests = {
  run: 'pseudoclaude/run',
  compact: 'pseudoclaude/compact',
  compactPreview: 'pseudoclaude/compact/preview',
  compactUndo: 'pseudoclaude/compact/undo',
  context: 'pseudoclaude/context',
  memoryShow: 'pseudoclaude/memory/show',
  memoryRemember: 'pseudoclaude/memory/remember',
  memoryForget: 'pseudoclaude/memory/forget',
  memoryProposals: 'pseudoclaude/memory/proposals',
  memoryReview: 'pseudoclaude/memory/review',
  sessionsList: 'pseudoclaude/sessions/list',
  sessionsResume: 'pseudoclaude/sessions/resume',
  sessionsNew: 'pseudoclaude/sessions/new',
  sessionsMessages: 'pseudoclaude/sessions/messages',
} as const;

/** Server → client notifications (`NOTIFICATIONS`). */
export const Notifications = {
  event: 'pseudoclaude/event',
  memoryChanged: 'pseudoclaude/memoryChanged',
  memoryProposalsChanged: 'pseudoclaude/memoryProposals',
  contextUsage: 'pseudoclaude/contextUsage',
} as const;

/** JSON-RPC error codes the server answers with (`INVALID_PARAMS`, `REQUEST_FAILED`, `REQUEST_CANCELLED`). */
export const ErrorCodes = {
  InvalidParams: -32602,
  RequestFailed: -32803,
  RequestCancelled: -32800,
} as const;

/** The server's `workspace/executeCommand` name of a request: `pseudoclaude/a/b` → `pseudoclaude.a.b`. */
export function commandName(method: string): string {
  return method.replace(/\//g, '.');
}

/** The server's commands (`COMMANDS`): one per request. */
export const Commands: readonly string[] = Object.values(Requests).map(commandName);

/** The key under `capabilities.experimental` (and the settings section). */
export const EXPERIMENTAL_KEY = 'pseudoclaude';
export const PROTOCOL_VERSION = 1;

/** `capabilities.experimental.pseudoclaude` in the `initialize` result. */
export interface Capability {
  version: number;
  requests: string[];
  notifications: string[];
  commands: string[];
}

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

/** Params of the requests that take nothing but the workspace (`EmptyParams`). */
export type EmptyParams = WorkspaceParams;

export interface RunParams extends WorkspaceParams, WorkDoneParams {
  prompt: string;
  /** `"new"`, an id, `"latest"`; default: the workspace's current session. */
  sessionId?: string;
}

export type StopReason =
  | 'completed'
  | 'max_iterations'
  | 'canceled'
  | 'unknown_tool_limit'
  | 'error';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface RunResult {
  sessionId: string;
  stopReason: StopReason | string;
  text: string;
  iterations: number;
  usage: Usage;
  /** Present only when the run stopped with an error. */
  error?: string;
}

export interface CompactParams extends WorkspaceParams, WorkDoneParams {
  instructions?: string;
}

/**
 * What the server checked in a summary against the part it replaces (SPEC §11 "Summary fact
 * check"): items (user prompts, changed paths, the last prompt) checked, missing from the summary,
 * and carried into it under `Carried facts (checked by the server)`.
 */
export interface FactCheck {
  checked: number;
  missing: number;
  added: number;
}

export interface CompactResult {
  beforeTokens: number;
  afterTokens: number;
  offloaded: number;
  summarized: boolean;
  /** All zero when nothing was summarised. */
  factCheck: FactCheck;
}

/** Tool results a compaction would offload to files (Layer 1). */
export interface SpillPreview {
  results: number;
  bytes: number;
}

/** Why a preview would summarise nothing (`wouldSummarize: false`). */
export type PreviewReason = 'no session' | 'nothing to summarize' | 'would not shrink';

/** `pseudoclaude/compact/preview`: what `pseudoclaude/compact` would do now (nothing written). */
export interface CompactPreviewResult {
  wouldSummarize: boolean;
  /** Present with `wouldSummarize: false`. */
  reason?: PreviewReason | string;
  beforeTokens: number;
  estimatedAfterTokens: number;
  summarizedMessages: number;
  keptMessages: number;
  firstKeptIndex: number;
  spill: SpillPreview;
}

/** `pseudoclaude/compact/undo`. */
export interface UndoResult {
  restored: boolean;
  /** Why nothing was restored (`restored: false`). */
  reason?: string;
  beforeTokens: number;
  afterTokens: number;
  messageCount: number;
}

/**
 * What fills the context, in tokens (SPEC §11 "Context breakdown"): the nine categories add up to
 * `estimatedTokens`; `free` (window minus the estimate) and `reserved` (summary reserve + safety
 * margin) are beside them.
 */
export interface Breakdown {
  system: number;
  rules: number;
  memory: number;
  tools: number;
  summary: number;
  messages: number;
  toolCalls: number;
  toolResults: number;
  spilled: number;
  free: number;
  reserved: number;
}

/** The nine categories of a `Breakdown` that add up to the estimate, in display order. */
export const BREAKDOWN_CATEGORIES = [
  'system',
  'rules',
  'memory',
  'tools',
  'summary',
  'messages',
  'toolCalls',
  'toolResults',
  'spilled',
] as const satisfies readonly (keyof Breakdown)[];

export interface ContextResult {
  sessionId: string | null;
  messageCount: number;
  estimatedTokens: number;
  contextWindow: number;
  autoCompactThreshold: number;
  autoCompactFailures: number;
  autoCompactTripped: boolean;
  breakdown: Breakdown;
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

/** How full the injected index is: lines and bytes before any cut, against the limits. */
export interface IndexHealth {
  lines: number;
  bytes: number;
  maxLines: number;
  maxBytes: number;
}

export interface MemoryShowResult {
  index: string;
  truncated: boolean;
  stores: MemoryStore[];
  /** Always sent by this server (optional here for older servers). */
  health?: IndexHealth;
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

/** A memory change a background update proposed (`memory.mode: confirm`). */
export interface Proposal {
  id: string;
  createdAt: string;
  sessionId: string;
  /** The effect on the file. */
  action: 'create' | 'update' | 'delete' | string;
  level: MemoryLevel;
  type: string;
  title: string;
  summary: string;
  filename: string;
  /** The whole note file (front matter included) before; `""` when absent. */
  before: string;
  /** The whole note file after; `""` for a delete. */
  after: string;
}

export interface ProposalsResult {
  /** Oldest first. */
  proposals: Proposal[];
}

export interface ReviewParams extends WorkspaceParams {
  id: string;
  decision: 'accept' | 'reject';
  /** An edited `after` to accept instead: a whole file, or a body without front matter. */
  content?: string;
}

export interface ReviewResult {
  applied: boolean;
  filename?: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  bytes: number;
  /** `""` when the session has no answer yet. */
  model: string;
  active: boolean;
}

export interface SessionsListResult {
  sessions: SessionSummary[];
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
  /** >= 0 (default 0). */
  offset?: number;
  /** >= 1 (default: all). */
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
  'pseudoclaude/compact/preview': [CompactParams, CompactPreviewResult];
  'pseudoclaude/compact/undo': [EmptyParams, UndoResult];
  'pseudoclaude/context': [EmptyParams, ContextResult];
  'pseudoclaude/memory/show': [EmptyParams, MemoryShowResult];
  'pseudoclaude/memory/remember': [RememberParams, RememberResult];
  'pseudoclaude/memory/forget': [ForgetParams, ForgetResult];
  'pseudoclaude/memory/proposals': [EmptyParams, ProposalsResult];
  'pseudoclaude/memory/review': [ReviewParams, ReviewResult];
  'pseudoclaude/sessions/list': [EmptyParams, SessionsListResult];
  'pseudoclaude/sessions/resume': [ResumeParams, ResumeResult];
  'pseudoclaude/sessions/new': [EmptyParams, NewSessionResult];
  'pseudoclaude/sessions/messages': [MessagesParams, MessagesResult];
}
export type RequestMethod = keyof RequestTypes;
export type ParamsOf<M extends RequestMethod> = RequestTypes[M][0];
export type ResultOf<M extends RequestMethod> = RequestTypes[M][1];

// `RequestTypes` has exactly the methods of `Requests` (a compile error otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const requestTableComplete: Same<RequestMethod, (typeof Requests)[keyof typeof Requests]> = true;
void requestTableComplete;

interface EventBase {
  workspace: string;
  sessionId: string;
}

export type AgentEvent = EventBase &
  (
    | { kind: 'text'; delta: string }
    | { kind: 'toolCall'; id: string; name: string; arguments: unknown }
    | { kind: 'toolResult'; id: string; name: string; isError: boolean; bytes: number; preview: string }
    | {
        kind: 'compact';
        layer: number;
        beforeTokens: number;
        afterTokens: number;
        offloaded: number;
        /** Layer 2 only. */
        factCheck?: FactCheck;
      }
    | {
        kind: 'memory';
        status: 'updated' | 'unchanged' | 'proposed' | 'failed';
        changes: { action: string; level: string; filename: string }[];
        error?: string | null;
      }
    | { kind: 'usage'; inputTokens: number; outputTokens: number; cacheRead: number; cacheWrite: number }
    | { kind: 'warning'; message: string }
    | { kind: 'error'; message: string }
    | { kind: 'stop'; stopReason: string }
  );

/** `pseudoclaude/memoryChanged` params. */
export interface MemoryChangedParams {
  workspace: string;
  level: MemoryLevel;
  source: 'hand-edit' | 'update' | 'remember' | 'forget' | 'review' | string;
}

/** `pseudoclaude/memoryProposals` params: the pending proposals changed. */
export interface MemoryProposalsParams {
  workspace: string;
  count: number;
}

/** `pseudoclaude/contextUsage` params. */
export interface ContextUsageParams {
  workspace: string;
  sessionId: string | null;
  estimatedTokens: number;
  contextWindow: number;
  autoCompactThreshold: number;
  breakdown: Breakdown;
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

/**
 * Server → client requests (`SERVER_REQUESTS`). `pseudoclaude/approve` goes only to clients that
 * set `experimental.pseudoclaude.approvals: true` in their `initialize` capabilities (SPEC §11
 * "Diff approvals"); other clients keep `window/showMessageRequest`.
 */
export const ServerRequests = {
  approve: 'pseudoclaude/approve',
} as const;

/** The client capability under `experimental.pseudoclaude` that asks for `pseudoclaude/approve`. */
export const APPROVALS_CAPABILITY = 'approvals';

export type ApprovalDecision = 'allowOnce' | 'allowSession' | 'deny';

/** `pseudoclaude/approve` params: one tool call to approve, with the whole file before and after. */
export interface ApproveParams {
  workspace: string;
  sessionId: string;
  tool: string;
  arguments: unknown;
  kind: 'write' | 'runCommand';
  /** Relative to the workspace (writes). */
  path?: string;
  /** The whole file without the change (`""` for a new file). */
  before?: string;
  /** The whole file with the change. */
  after?: string;
  /** The command line (`run_command`). */
  command?: string;
  /** The folder the command runs in (`run_command`). */
  cwd?: string;
}

export interface ApproveResult {
  decision: ApprovalDecision;
}
