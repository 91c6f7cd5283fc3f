--- The PseudoClaude wire protocol (SPEC §8, §11): every request, notification, command and error
--- code the plugin uses, named once. It mirrors the server's `server/pseudoclaude/lsp/protocol.py`
--- as `editors/vscode/src/protocol.ts` does; `tests/editors/test_protocol_sync.py` fails when
--- their sets differ. Shapes are camelCase, as on the wire.
local M = {}

--- Client → server requests (`REQUESTS`), each also a `workspace/executeCommand` command.
M.requests = {
  run = 'pseudoclaude/run',
  compact = 'pseudoclaude/compact',
  compact_preview = 'pseudoclaude/compact/preview',
  compact_undo = 'pseudoclaude/compact/undo',
  context = 'pseudoclaude/context',
  memory_show = 'pseudoclaude/memory/show',
  memory_remember = 'pseudoclaude/memory/remember',
  memory_forget = 'pseudoclaude/memory/forget',
  memory_proposals = 'pseudoclaude/memory/proposals',
  memory_review = 'pseudoclaude/memory/review',
  sessions_list = 'pseudoclaude/sessions/list',
  sessions_resume = 'pseudoclaude/sessions/resume',
  sessions_new = 'pseudoclaude/sessions/new',
  sessions_messages = 'pseudoclaude/sessions/messages',
}

--- Server → client notifications (`NOTIFICATIONS`).
M.notifications = {
  event = 'pseudoclaude/event',
  memory_changed = 'pseudoclaude/memoryChanged',
  memory_proposals_changed = 'pseudoclaude/memoryProposals',
  context_usage = 'pseudoclaude/contextUsage',
}

--- Server → client requests (`SERVER_REQUESTS`): `approve` only to a client that sets
--- `experimental.pseudoclaude.approvals = true` in its `initialize` capabilities (SPEC §11).
M.server_requests = {
  approve = 'pseudoclaude/approve',
}

--- The key of that capability under `capabilities.experimental.pseudoclaude`.
M.approvals_capability = 'approvals'

--- The `decision` of a `pseudoclaude/approve` answer (`ApproveResult`).
M.approve_decisions = { once = 'allowOnce', session = 'allowSession', deny = 'deny' }

--- The `kind` of `pseudoclaude/approve` params.
M.approve_kinds = { write = 'write', run_command = 'runCommand' }

--- The `decision` of `pseudoclaude/memory/review` (`ReviewParams`).
M.review_decisions = { accept = 'accept', reject = 'reject' }

--- The `action` of a memory proposal (the effect on the note file).
M.proposal_actions = { create = 'create', update = 'update', delete = 'delete' }

--- JSON-RPC error codes the server answers with.
M.errors = {
  invalid_params = -32602,
  request_failed = -32803,
  request_cancelled = -32800,
}

--- The `level` of `pseudoclaude/memory/remember` and `forget`, and the note types.
M.memory_levels = { 'project', 'user' }
M.memory_types = { 'user_preference', 'correction_feedback', 'project_knowledge', 'reference_material' }

--- Actions of an approval prompt (`window/showMessageRequest`, SPEC §8).
M.approval_actions = { once = 'Allow once', session = 'Allow for this session', deny = 'Deny' }

--- The nine categories of a context breakdown (`Breakdown`), which add up to `estimatedTokens`, in
--- display order; `free` and `reserved` are beside them.
M.breakdown_categories = {
  'system', 'rules', 'memory', 'tools', 'summary', 'messages', 'toolCalls', 'toolResults', 'spilled',
}

--- The `reason` of a preview that would summarize nothing (`wouldSummarize: false`).
M.preview_reasons = { no_session = 'no session', nothing = 'nothing to summarize', no_shrink = 'would not shrink' }

--- The key under `capabilities.experimental` (and the settings section).
M.experimental_key = 'pseudoclaude'
M.version = 1

--- The server's `workspace/executeCommand` name of a request: `pseudoclaude/a/b` → `pseudoclaude.a.b`.
--- @param method string
--- @return string
function M.command_name(method)
  return (method:gsub('/', '.'))
end

--- The server's commands (`COMMANDS`), one per request, sorted.
--- @type string[]
M.commands = {}
for _, method in pairs(M.requests) do
  M.commands[#M.commands + 1] = M.command_name(method)
end
table.sort(M.commands)

-- Shapes of the results and notifications the plugin reads (LuaLS annotations only).

--- @class pseudoclaude.Usage
--- @field inputTokens integer
--- @field outputTokens integer

--- `pseudoclaude/run`
--- @class pseudoclaude.RunResult
--- @field sessionId string
--- @field stopReason string completed | max_iterations | canceled | unknown_tool_limit | error
--- @field text string
--- @field iterations integer
--- @field usage pseudoclaude.Usage
--- @field error? string present only when the run stopped with an error

--- What the server checked in a summary against the part it replaces (SPEC §11): items checked,
--- missing from the summary, and carried into it (`Carried facts (checked by the server)`).
--- @class pseudoclaude.FactCheck
--- @field checked integer
--- @field missing integer
--- @field added integer

--- `pseudoclaude/compact`
--- @class pseudoclaude.CompactResult
--- @field beforeTokens integer
--- @field afterTokens integer
--- @field offloaded integer
--- @field summarized boolean
--- @field factCheck pseudoclaude.FactCheck all zero when nothing was summarized

--- @class pseudoclaude.SpillPreview
--- @field results integer
--- @field bytes integer

--- `pseudoclaude/compact/preview` (params `{instructions?}`): what a compaction would do now.
--- @class pseudoclaude.CompactPreviewResult
--- @field wouldSummarize boolean
--- @field reason? string with `wouldSummarize: false`: one of `M.preview_reasons`
--- @field beforeTokens integer
--- @field estimatedAfterTokens integer
--- @field summarizedMessages integer
--- @field keptMessages integer
--- @field firstKeptIndex integer
--- @field spill pseudoclaude.SpillPreview

--- `pseudoclaude/compact/undo` (params `{}`)
--- @class pseudoclaude.UndoResult
--- @field restored boolean
--- @field reason? string why nothing was restored
--- @field beforeTokens integer
--- @field afterTokens integer
--- @field messageCount integer

--- What fills the context, in tokens: `M.breakdown_categories` add up to `estimatedTokens`.
--- @class pseudoclaude.Breakdown
--- @field system integer
--- @field rules integer
--- @field memory integer
--- @field tools integer
--- @field summary integer
--- @field messages integer
--- @field toolCalls integer
--- @field toolResults integer
--- @field spilled integer
--- @field free integer window minus the estimate, not below 0
--- @field reserved integer summary reserve + safety margin

--- `pseudoclaude/context`
--- @class pseudoclaude.ContextResult
--- @field sessionId string|vim.NIL
--- @field messageCount integer
--- @field estimatedTokens integer
--- @field contextWindow integer
--- @field autoCompactThreshold integer
--- @field autoCompactFailures integer
--- @field autoCompactTripped boolean
--- @field breakdown pseudoclaude.Breakdown

--- @class pseudoclaude.MemoryNote
--- @field filename string
--- @field uri string
--- @field type string
--- @field title string
--- @field summary string

--- @class pseudoclaude.MemoryStore
--- @field level 'project'|'user'
--- @field dir string
--- @field indexUri string
--- @field notes pseudoclaude.MemoryNote[]

--- How full the injected index is: lines and bytes before any cut, against the limits.
--- @class pseudoclaude.IndexHealth
--- @field lines integer
--- @field bytes integer
--- @field maxLines integer
--- @field maxBytes integer

--- `pseudoclaude/memory/show`
--- @class pseudoclaude.MemoryShowResult
--- @field index string exactly what the prompt gets
--- @field truncated boolean
--- @field stores pseudoclaude.MemoryStore[]
--- @field health pseudoclaude.IndexHealth

--- A memory change a background update proposed (`memory.mode: confirm`).
--- @class pseudoclaude.Proposal
--- @field id string
--- @field createdAt string
--- @field sessionId string
--- @field action string the effect on the file: create | update | delete
--- @field level 'project'|'user'
--- @field type string
--- @field title string
--- @field summary string
--- @field filename string
--- @field before string the whole note file before (`""` when absent)
--- @field after string the whole note file after (`""` for a delete)

--- `pseudoclaude/memory/proposals`
--- @class pseudoclaude.ProposalsResult
--- @field proposals pseudoclaude.Proposal[] oldest first

--- `pseudoclaude/memory/review` (params `{id, decision = 'accept'|'reject', content?}`)
--- @class pseudoclaude.ReviewResult
--- @field applied boolean
--- @field filename? string

--- `pseudoclaude/memory/remember`
--- @class pseudoclaude.RememberResult
--- @field filename string
--- @field uri string

--- `pseudoclaude/memory/forget`
--- @class pseudoclaude.ForgetResult
--- @field removed boolean

--- @class pseudoclaude.SessionSummary
--- @field id string
--- @field title string
--- @field createdAt string
--- @field updatedAt string
--- @field messageCount integer
--- @field bytes integer
--- @field model string
--- @field active boolean

--- `pseudoclaude/sessions/list`
--- @class pseudoclaude.SessionsListResult
--- @field sessions pseudoclaude.SessionSummary[]

--- `pseudoclaude/sessions/resume`
--- @class pseudoclaude.ResumeResult
--- @field sessionId string
--- @field messageCount integer
--- @field badLines integer
--- @field repaired integer

--- `pseudoclaude/sessions/new`
--- @class pseudoclaude.NewSessionResult
--- @field sessionId string

--- `pseudoclaude/sessions/messages`: messages in the v1 log shape (SPEC §3, snake_case).
--- @class pseudoclaude.MessagesResult
--- @field total integer
--- @field messages table[]

--- `pseudoclaude/event`: `kind` text, toolCall, toolResult, compact (`factCheck?` on layer 2),
--- memory, usage, warning, error, stop, with that kind's fields.
--- @class pseudoclaude.Event
--- @field workspace string
--- @field sessionId string
--- @field kind string

--- `pseudoclaude/contextUsage`
--- @class pseudoclaude.ContextUsageParams
--- @field workspace string
--- @field sessionId string|vim.NIL
--- @field estimatedTokens integer
--- @field contextWindow integer
--- @field autoCompactThreshold integer
--- @field breakdown pseudoclaude.Breakdown

--- `pseudoclaude/memoryChanged`
--- @class pseudoclaude.MemoryChangedParams
--- @field workspace string
--- @field level string
--- @field source string

--- `pseudoclaude/approve` (server → client): approve one tool call; answer `{decision}`, one of
--- `M.approve_decisions`.
--- @class pseudoclaude.ApproveParams
--- @field workspace string
--- @field sessionId string
--- @field tool string
--- @field arguments any
--- @field kind 'write'|'runCommand'
--- @field path? string relative to the workspace (writes)
--- @field before? string the whole file without the change (`""` for a new file)
--- @field after? string the whole file with the change
--- @field command? string the command line (`run_command`)
--- @field cwd? string the folder the command runs in (`run_command`)

--- `pseudoclaude/memoryProposals`
--- @class pseudoclaude.MemoryProposalsParams
--- @field workspace string
--- @field count integer

return M
