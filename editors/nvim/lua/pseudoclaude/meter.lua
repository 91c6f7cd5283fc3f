--- The context meter: per workspace folder, fed by `pseudoclaude/contextUsage` (tokens and their
--- breakdown) and `pseudoclaude/context` (the same plus the auto-compact breaker). `statusline()` renders it.
local fmt = require('pseudoclaude.format')

local M = {}

--- Share of the auto-compact threshold at which the meter shows the warning highlight.
M.WARNING_RATIO = 0.85

--- @type table<string, table> workspace URI -> state
M.states = {}
--- @type table<string, boolean> workspace URI -> a run is in flight
M.running = {}
--- @type table<string, integer> workspace URI -> pending memory proposals
M.pending_proposals = {}
--- @type table<string, table> session id -> its state (several sessions of a folder may run at once)
M.sessions = {}

local function key(uri)
  return (tostring(uri or ''):gsub('/+$', ''))
end

function M.get(workspace)
  return M.states[key(workspace)]
end

--- A `pseudoclaude/contextUsage` notification: tokens change, the breaker state stays.
function M.usage(u)
  local k = key(u.workspace)
  local old = M.states[k]
  local same = old and old.sessionId == u.sessionId
  local was = type(u.sessionId) == 'string' and M.sessions[u.sessionId] or nil
  if not same and was then
    old, same = was, true
  end
  M.states[k] = {
    sessionId = u.sessionId,
    estimatedTokens = u.estimatedTokens,
    contextWindow = u.contextWindow,
    autoCompactThreshold = u.autoCompactThreshold,
    autoCompactFailures = same and old.autoCompactFailures or 0,
    autoCompactTripped = same and old.autoCompactTripped or false,
    breakdown = u.breakdown or (same and old.breakdown or nil),
  }
  if type(u.sessionId) == 'string' then
    M.sessions[u.sessionId] = M.states[k]
  end
  vim.cmd.redrawstatus({ bang = true })
end

--- A `pseudoclaude/context` answer: the full picture (and the session's permission mode).
function M.context(workspace, c)
  require('pseudoclaude.permissions').context(workspace, c)
  M.states[key(workspace)] = {
    sessionId = c.sessionId,
    estimatedTokens = c.estimatedTokens,
    contextWindow = c.contextWindow,
    autoCompactThreshold = c.autoCompactThreshold,
    autoCompactFailures = c.autoCompactFailures,
    autoCompactTripped = c.autoCompactTripped == true,
    breakdown = c.breakdown,
  }
  if type(c.sessionId) == 'string' then
    M.sessions[c.sessionId] = M.states[key(workspace)]
  end
  vim.cmd.redrawstatus({ bang = true })
end

function M.set_running(workspace, on)
  M.running[key(workspace)] = on or nil
  vim.cmd.redrawstatus({ bang = true })
end

function M.is_running(workspace)
  return M.running[key(workspace)] == true
end

--- The number of pending memory proposals (`pseudoclaude/memoryProposals`), nil before any.
function M.proposals(workspace)
  return M.pending_proposals[key(workspace)]
end

function M.set_proposals(workspace, count)
  M.pending_proposals[key(workspace)] = tonumber(count)
  vim.cmd.redrawstatus({ bang = true })
end

--- `normal`, `warning` (close to the auto-compact threshold) or `error` (breaker tripped).
function M.level(state)
  if not state then
    return 'normal'
  end
  if state.autoCompactTripped then
    return 'error'
  end
  local threshold = tonumber(state.autoCompactThreshold) or 0
  if threshold > 0 and state.estimatedTokens >= threshold * M.WARNING_RATIO then
    return 'warning'
  end
  return 'normal'
end

--- The meter text: `PseudoClaude` before numbers are known, else `12k/200k`; a leading `!` when
--- the breaker tripped and `…` while a run is in flight; ` · 2 proposals` while memory
--- proposals wait for review.
function M.text(workspace)
  local state = M.get(workspace)
  local busy = M.is_running(workspace) and '… ' or ''
  local count = M.proposals(workspace) or 0
  local pending = count > 0 and (' · ' .. fmt.plural(count, 'proposal')) or ''
  if not state then
    return busy .. 'PseudoClaude' .. pending
  end
  local mark = state.autoCompactTripped and '! ' or ''
  return busy .. mark .. fmt.tokens(state.estimatedTokens) .. '/' .. fmt.tokens(state.contextWindow) .. pending
end

--- The meter of one session of a folder (a chat's winbar): its tokens when known, else the
--- folder's meter.
--- @param workspace string
--- @param session_id? string
--- @return string
function M.session_text(workspace, session_id)
  local state = session_id and M.sessions[session_id]
  if not state then
    return M.text(workspace)
  end
  local mark = state.autoCompactTripped and '! ' or ''
  return mark .. fmt.tokens(state.estimatedTokens) .. '/' .. fmt.tokens(state.contextWindow)
end

--- A longer description for `:PseudoClaudeContext`.
function M.describe(workspace, c)
  local parts = {
    string.format('%s of %s tokens', fmt.count(c.estimatedTokens), fmt.count(c.contextWindow)),
    fmt.plural(c.messageCount or 0, 'message'),
    (c.sessionId and c.sessionId ~= vim.NIL) and ('session ' .. c.sessionId) or 'no session yet',
    'auto-compact at ' .. fmt.count(c.autoCompactThreshold),
  }
  local text = string.format('PseudoClaude (%s): %s.', fmt.basename(workspace), table.concat(parts, ' · '))
  if c.autoCompactTripped then
    text = text
      .. string.format(
        ' Auto-compact stopped after %s: run :PseudoClaudeCompact.',
        fmt.plural(c.autoCompactFailures or 3, 'failure')
      )
  end
  return text
end

return M
