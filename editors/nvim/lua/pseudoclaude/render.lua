--- The words of what the server reports, shared by the transcript and the chat buffer (pure
--- functions): a tool call and its result, compaction, memory, warnings and errors, the end of a
--- run, and the messages of a session log.
local context = require('pseudoclaude.context')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

--- The end of a summary message an earlier compaction put first (the server's boundary reminder).
M.SUMMARY_MARKER = '[Context boundary]'

--- `▸ read_file(path: README.md)`
--- @param name string
--- @param arguments any
--- @return string
function M.call(name, arguments)
  return string.format('▸ %s(%s)', tostring(name), fmt.arguments(arguments))
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- `✓ read_file · 2.0 KB`, or `✗ run_command failed: <why>` (the event's `error`, else its preview).
--- @param e {name: string, isError: boolean, bytes?: integer, preview?: string, error?: string}
--- @return string
function M.result(e)
  if e.isError then
    return string.format('✗ %s failed: %s', e.name, fmt.one_line(given(e.error) or e.preview or '', 160))
  end
  return string.format('✓ %s · %s', e.name, fmt.bytes(e.bytes or 0))
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

local ESCAPES = { n = '\n', t = '\t', r = '', b = '', f = '', ['"'] = '"', ['\\'] = '\\', ['/'] = '/' }

--- The readable text of a tool result's preview: the `content` of the tool's JSON envelope
--- (`{"ok":true,"tool":"read_file","content":"...`, SPEC §6), unescaped, even when the preview
--- cuts it; any other text as it is.
--- @param preview string
--- @return string
function M.preview_text(preview)
  local rest = type(preview) == 'string' and preview:match('^{"ok":%a+,"tool":"[^"]*","content":"(.*)$')
  if not rest then
    return preview or ''
  end
  local out, i = {}, 1
  while i <= #rest do
    local c = rest:sub(i, i)
    if c == '"' then
      break
    elseif c == '\\' then
      local n = rest:sub(i + 1, i + 1)
      if n == 'u' then
        local code = tonumber(rest:sub(i + 2, i + 5), 16)
        if not code or #rest:sub(i + 2, i + 5) < 4 then
          break
        end
        out[#out + 1] = vim.fn.nr2char(code)
        i = i + 6
      elseif ESCAPES[n] then
        out[#out + 1] = ESCAPES[n]
        i = i + 2
      else
        break -- cut inside an escape
      end
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

--- Is this log message the summary an earlier compaction put first?
--- @param m table a message of `pseudoclaude/sessions/messages`
--- @return boolean
function M.is_summary(m)
  return m.role == 'user' and type(m.content) == 'string' and m.content:find(M.SUMMARY_MARKER, 1, true) ~= nil
end

--- The summary text without the server's boundary reminder.
--- @param content string
--- @return string
function M.summary_text(content)
  local cut
  local from = 1
  while true do
    local i = content:find(M.SUMMARY_MARKER, from, true)
    if not i then
      break
    end
    cut, from = i, i + 1
  end
  return vim.trim(cut and content:sub(1, cut - 1) or content)
end

--- The fields of a `toolResult` event from a log message's `tool_result` (snake_case).
--- @param r {call_id: string, name: string, content?: string, is_error?: boolean}
--- @return table
function M.log_result(r)
  local content = type(r.content) == 'string' and r.content or ''
  local preview = vim.fn.strcharpart(content, 0, 200)
  local is_error = r.is_error == true
  local err
  if is_error then
    local ok, decoded = pcall(vim.json.decode, content)
    err = ok and type(decoded) == 'table' and given(decoded.error) or nil
  end
  return { id = r.call_id, name = r.name, isError = is_error, bytes = #content, preview = preview, error = err }
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
  [protocol.approval_actions.once] = protocol.approve_decisions.once,
  [protocol.approval_actions.session] = protocol.approve_decisions.session,
  [protocol.approval_actions.deny] = protocol.approve_decisions.deny,
}

return M
