--- The words of what the server reports, shared by the transcript and the chat buffer (pure
--- functions): a tool call and its result, compaction, memory, warnings and errors, the end of a
--- run.
local context = require('pseudoclaude.context')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

--- The arguments of the session's own bookkeeping tools, in words: `update_tasks` says its
--- list's count (`3 tasks, 1 done`), `exit_plan_mode` its plan's first line, `agent` its type and
--- description (`explore: find the words`). Nil for the others.
local function own_arguments(name, arguments)
  if type(arguments) ~= 'table' then
    return nil
  end
  if name == 'update_tasks' and type(arguments.tasks) == 'table' then
    local done = 0
    for _, t in ipairs(arguments.tasks) do
      if type(t) == 'table' and t.status == 'completed' then
        done = done + 1
      end
    end
    return string.format('%s, %d done', fmt.plural(#arguments.tasks, 'task'), done)
  elseif name == 'agent' then
    local kind = type(arguments.subagent_type) == 'string' and arguments.subagent_type ~= '' and arguments.subagent_type
      or 'general-purpose'
    local what = ''
    for _, key in ipairs({ 'name', 'description', 'prompt' }) do
      if type(arguments[key]) == 'string' and vim.trim(arguments[key]) ~= '' then
        what = ': ' .. fmt.one_line(arguments[key], 80)
        break
      end
    end
    return kind .. what .. (arguments.run_in_background == true and ', background' or '')
  elseif name == 'exit_plan_mode' and type(arguments.plan) == 'string' then
    for line in arguments.plan:gmatch('[^\n]+') do
      local words = vim.trim((line:gsub('^%s*#+%s*', '')))
      if words ~= '' then
        return fmt.one_line(words, 120)
      end
    end
  end
  return nil
end

--- `▸ read_file(path: README.md)` (`▸ update_tasks(3 tasks, 1 done)`, `▸ exit_plan_mode(Plan: …)`)
--- @param name string
--- @param arguments any
--- @return string
function M.call(name, arguments)
  return string.format('▸ %s(%s)', tostring(name), own_arguments(name, arguments) or fmt.arguments(arguments))
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- The status of a finished tool call in words, from a `toolResult` event or a transcript
--- `toolCall` item (`status`, `error`, `bytes`): `✓ read_file · 2.0 KB`,
--- `✗ run_command failed: <why>`, `⊘ write_file denied: <why>`, `⊘ run_command canceled`.
--- @param e {name: string, status?: string, isError?: boolean, bytes?: integer, error?: string, preview?: string, display?: string}
--- @return string
function M.result(e)
  local status = e.status
  if status == nil or status == vim.NIL then
    status = e.isError and 'error' or 'done'
  end
  local why = given(e.error) or given(e.display) or given(e.preview)
  local name = tostring(e.name)
  if status == 'done' then
    return string.format('✓ %s · %s', name, fmt.bytes(type(e.bytes) == 'number' and e.bytes or 0))
  elseif status == 'denied' then
    return string.format('⊘ %s denied', name) .. (why and (': ' .. fmt.one_line(why, 160)) or '')
  elseif status == 'canceled' then
    return string.format('⊘ %s canceled', name) .. (why and (': ' .. fmt.one_line(why, 160)) or '')
  elseif status == 'pending' then
    return string.format('… %s: no result', name)
  end
  return string.format('✗ %s failed: %s', name, fmt.one_line(why or 'the tool failed', 160))
end

local function changes_text(changes)
  local out = {}
  for _, c in ipairs(type(changes) == 'table' and changes or {}) do
    out[#out + 1] = string.format('%s %s %s', c.action, c.level, c.filename)
  end
  return #out > 0 and (': ' .. table.concat(out, ', ')) or ''
end

--- The one line of a `compact`, `memory`, `warning` or `error` event (nil for the others, and for
--- a memory update that changed nothing).
--- @param e pseudoclaude.Event
--- @return string?
function M.notice(e)
  local kind = e.kind
  if kind == 'compact' then
    local spilled = (e.offloaded or 0) > 0 and (', ' .. fmt.plural(e.offloaded, 'result') .. ' offloaded') or ''
    local checked = type(e.factCheck) == 'table' and ('; ' .. context.fact_check_text(e.factCheck)) or ''
    return string.format(
      '⇣ compacted (layer %s): %s → %s tokens%s%s',
      tostring(e.layer),
      fmt.tokens(e.beforeTokens or 0),
      fmt.tokens(e.afterTokens or 0),
      spilled,
      checked
    )
  elseif kind == 'memory' then
    if e.status == 'failed' then
      return '! memory update failed: ' .. fmt.one_line(given(e.error) or 'unknown error', 200)
    elseif e.status == 'updated' then
      return '✎ memory updated' .. changes_text(e.changes)
    elseif e.status == 'proposed' then
      return '✎ memory proposed' .. changes_text(e.changes) .. ' (review: :PseudoClaudeProposals)'
    end
  elseif kind == 'warning' then
    return '! ' .. fmt.one_line(e.message or '', 300)
  elseif kind == 'error' then
    return '✗ ' .. fmt.one_line(e.message or '', 300)
  end
  return nil
end

--- `── completed · 2 iterations · 1.6k in / 70 out · session s1 ──` (without the session when
--- `with_session` is false).
--- @param result pseudoclaude.RunResult
--- @param with_session? boolean
--- @return string
function M.footer(result, with_session)
  local usage = ''
  if type(result.usage) == 'table' then
    usage = string.format(
      ' · %s in / %s out',
      fmt.tokens(result.usage.inputTokens or 0),
      fmt.tokens(result.usage.outputTokens or 0)
    )
  end
  return string.format(
    '── %s · %s%s%s ──',
    tostring(result.stopReason),
    fmt.plural(result.iterations or 0, 'iteration'),
    usage,
    with_session == false and '' or (' · session ' .. tostring(result.sessionId))
  )
end

--- Shown with a proposal: `create · project · Build — project_knowledge_build.md`.
--- @param p pseudoclaude.Proposal
--- @return string
function M.proposal_label(p)
  local title = given(p.title) or p.filename
  local label = string.format('%s · %s · %s', p.action, p.level, title)
  if title ~= p.filename then
    label = label .. ' — ' .. p.filename
  end
  return label
end

--- `allowOnce` etc. for the titles of the `window/showMessageRequest` approval (`Allow once`...).
M.decision_of_title = {
  [protocol.approval_actions.once] = protocol.approval_decisions.allow_once,
  [protocol.approval_actions.session] = protocol.approval_decisions.allow_session,
  [protocol.approval_actions.always] = protocol.approval_decisions.allow_always,
  [protocol.approval_actions.deny] = protocol.approval_decisions.deny,
}

return M
