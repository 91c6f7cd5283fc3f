--- The chat's items and their lines (pure functions): the items of a session's transcript
--- (`pseudoclaude/sessions/messages`, built by the server), the lines and highlights of each item,
--- and the folded line of a tool card, a summary or the model's reasoning.
local fmt = require('pseudoclaude.format')
local render = require('pseudoclaude.render')

local M = {}

--- Lines of a tool result's preview inside its card.
M.PREVIEW_LINES = 6

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- The lines of a text: a final newline ends the last line.
--- @param text? string
--- @return string[]
function M.text_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

local function printable(s)
  return (s:gsub('[%z\1-\8\11-\31\127]', '?'))
end

--- The preview lines of a tool result in its card (`  │ ...`): the server's readable preview.
local function preview_lines(item)
  local out = {}
  local preview = given(item.preview) or ''
  if vim.trim(preview) == '' then
    return out
  end
  local lines = M.text_lines(printable((preview:gsub('\t', '  '))))
  for i = 1, math.min(#lines, M.PREVIEW_LINES) do
    out[#out + 1] = '  │ ' .. lines[i]
  end
  if #lines > M.PREVIEW_LINES then
    out[#out + 1] = '  │ …'
  end
  return out
end

local function indented(title, text)
  local lines = { title }
  for _, l in ipairs(M.text_lines(text)) do
    lines[#lines + 1] = l == '' and '' or ('  ' .. l)
  end
  return lines
end

--- The status of a tool card in words (its body line, and its folded line).
--- @param item pseudoclaude.ChatItem
--- @return string
function M.tool_status(item)
  local agent = item.agent
  if agent and (item.status == 'done' or item.status == 'running' or item.status == nil or agent.background) then
    return require('pseudoclaude.agents').status_words(agent)
  end
  if item.status == 'approval' then
    return '⏸ waiting for your approval'
  elseif item.status == 'running' or item.status == nil then
    return '… running'
  end
  return render.result(item)
end

M.SUMMARY_TITLE = '▸ Summary of the earlier conversation'
M.THINKING_TITLE = '▸ Thinking'

--- The line under `## You` that says what context a prompt was sent with
--- (`Context: app.py:10-14 · 3 open files`); nil without one.
--- @param context? pseudoclaude.EditorContext
--- @return string?
function M.context_line(context)
  local label = require('pseudoclaude.editor').label(context)
  return label ~= '' and ('Context: ' .. label) or nil
end

--- The lines of one item. `first`: it is the first item of the buffer (no blank line above it).
--- @param item pseudoclaude.ChatItem
--- @param first? boolean
--- @return string[]
function M.item_lines(item, first)
  local kind = item.kind
  if kind == 'user' then
    local lines = first and {} or { '' }
    vim.list_extend(lines, { '## You' })
    local chip = M.context_line(item.context)
    if chip then
      lines[#lines + 1] = chip
    end
    vim.list_extend(lines, M.text_lines(item.text))
    vim.list_extend(lines, { '', '## PseudoClaude' })
    return lines
  elseif kind == 'assistant' then
    return M.text_lines(item.text)
  elseif kind == 'toolCall' then
    local lines = { render.call(item.name, item.arguments), '  ' .. M.tool_status(item) }
    if item.agent then -- a sub-agent's card: its live steps, then its answer
      lines[2] = lines[2] .. ' · ' .. require('pseudoclaude.agents').summary(item.agent)
      vim.list_extend(lines, require('pseudoclaude.agents').step_lines(item.agent))
    end
    if item.status == 'done' then
      vim.list_extend(lines, preview_lines(item))
    end
    return lines
  elseif kind == 'summary' then
    return indented(M.SUMMARY_TITLE, item.text)
  elseif kind == 'thinking' then
    return indented(M.THINKING_TITLE, item.text)
  elseif kind == 'notice' or kind == 'compaction' or kind == 'undo' or kind == 'rewind' then
    return { '> ' .. fmt.one_line(item.text or '', 1000) }
  elseif kind == 'footer' then
    return { item.text }
  elseif kind == 'earlier' then
    return { string.format('*(%s not shown)*', fmt.plural(item.count_hidden or 0, 'earlier item')) }
  end
  return { '*' .. (item.text or '') .. '*' }
end

--- Whether the model no longer sees an item (summarized away, or undone): shown, but dimmed.
--- @param item pseudoclaude.ChatItem
--- @return boolean
function M.out_of_context(item)
  return item.inContext == false
end

M.OUT_OF_CONTEXT = 'not in context'

local TOOL_STATUS = {
  done = 'PseudoClaudeChatOk',
  error = 'PseudoClaudeChatError',
  denied = 'PseudoClaudeChatPending',
  canceled = 'PseudoClaudeChatPending',
  pending = 'PseudoClaudeChatPending',
  approval = 'PseudoClaudeChatPending',
  running = 'PseudoClaudeChatPending',
}

--- The highlight group of each line of an item (false: the buffer's own, markdown). Every line
--- of an item out of the context is `PseudoClaudeChatOutOfContext`.
--- @param item pseudoclaude.ChatItem
--- @param lines string[] its lines (`item_lines`)
--- @return (string|false)[]
function M.line_groups(item, lines)
  local groups = {}
  local dim = M.out_of_context(item)
  for i = 1, #lines do
    groups[i] = dim and 'PseudoClaudeChatOutOfContext' or false
  end
  if dim then
    return groups
  end
  local kind = item.kind
  if kind == 'toolCall' then
    groups[1] = 'PseudoClaudeChatTool'
    groups[2] = TOOL_STATUS[item.status] or false
    for i = 3, #lines do
      groups[i] = item.agent and require('pseudoclaude.agents').step_group(lines[i]) or 'PseudoClaudeChatPreview'
    end
  elseif kind == 'summary' or kind == 'thinking' then
    groups[1] = 'PseudoClaudeChatTool'
    for i = 2, #lines do
      groups[i] = 'PseudoClaudeChatPreview'
    end
  elseif kind == 'notice' then
    groups[1] = lines[1]:find('^> ✗') and 'PseudoClaudeChatError'
      or (lines[1]:find('^> !') and 'PseudoClaudeChatPending' or 'PseudoClaudeChatNotice')
  elseif kind == 'compaction' or kind == 'undo' or kind == 'rewind' then
    groups[1] = 'PseudoClaudeChatNotice'
  elseif kind == 'footer' or kind == 'earlier' or kind == 'hint' then
    groups[1] = 'PseudoClaudeChatFooter'
  elseif kind == 'user' then
    local chip = M.context_line(item.context)
    for i, l in ipairs(lines) do
      if chip and l == chip then
        groups[i] = 'PseudoClaudeChatContext'
        break
      end
    end
  end
  return groups
end

--- The chat's highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudeChatTool = 'Function',
  PseudoClaudeChatOk = 'DiagnosticOk',
  PseudoClaudeChatError = 'DiagnosticError',
  PseudoClaudeChatPending = 'DiagnosticWarn',
  PseudoClaudeChatPreview = 'Comment',
  PseudoClaudeChatNotice = 'DiagnosticInfo',
  PseudoClaudeChatFooter = 'Comment',
  PseudoClaudeChatOutOfContext = 'NonText',
  PseudoClaudeChatContext = 'Special',
  PseudoClaudeChatChip = 'PmenuSel',
  PseudoClaudeChatChipHint = 'Comment',
}

--- Whether an item folds (its lines beyond the first hide under one line).
function M.foldable(item)
  return item.kind == 'toolCall' or item.kind == 'summary' or item.kind == 'thinking'
end

--- The folded line of a tool card, a summary or the model's reasoning.
--- @param item pseudoclaude.ChatItem
--- @return string
function M.fold_line(item)
  local dim = M.out_of_context(item) and (' · ' .. M.OUT_OF_CONTEXT) or ''
  if item.kind == 'summary' or item.kind == 'thinking' then
    local title = item.kind == 'summary' and M.SUMMARY_TITLE or M.THINKING_TITLE
    return string.format('%s · %s%s', title, fmt.plural((item.count or 1) - 1, 'line'), dim)
  end
  local agent = item.agent and (' · ' .. require('pseudoclaude.agents').summary(item.agent)) or ''
  return render.call(item.name, item.arguments) .. ' · ' .. M.tool_status(item) .. agent .. dim
end

--- The folded line in highlighted pieces ('foldtext' may return `{text, group}` chunks): the
--- call, its status in the status's colour; all dimmed when the item is out of the context (the
--- fold's own highlight would show it as bright as the rest).
--- @param item pseudoclaude.ChatItem
--- @return [string, string][]
function M.fold_chunks(item)
  if M.out_of_context(item) then
    return { { M.fold_line(item), 'PseudoClaudeChatOutOfContext' } }
  end
  if item.kind == 'summary' or item.kind == 'thinking' then
    local title = item.kind == 'summary' and M.SUMMARY_TITLE or M.THINKING_TITLE
    return { { title, 'PseudoClaudeChatTool' },
      { ' · ' .. fmt.plural((item.count or 1) - 1, 'line'), 'PseudoClaudeChatFooter' } }
  end
  local chunks = {
    { render.call(item.name, item.arguments), 'PseudoClaudeChatTool' },
    { ' · ', 'PseudoClaudeChatFooter' },
    { M.tool_status(item), TOOL_STATUS[item.status] or 'PseudoClaudeChatFooter' },
  }
  if item.agent then
    chunks[#chunks + 1] = { ' · ' .. require('pseudoclaude.agents').summary(item.agent), 'PseudoClaudeChatFooter' }
  end
  return chunks
end

local function blank(s)
  return type(s) ~= 'string' or vim.trim(s) == ''
end

--- The chat items of a page of transcript items (`pseudoclaude/sessions/messages`); `earlier`:
--- items before these that are not shown. The server builds the items (statuses, readable
--- previews, summaries, compactions): the chat only shows them.
--- @param items pseudoclaude.TranscriptItem[]
--- @param earlier integer
--- @return pseudoclaude.ChatItem[]
function M.from_transcript(items, earlier)
  local out = {}
  if earlier > 0 then
    out[1] = { kind = 'earlier', count_hidden = earlier }
  end
  local function add(item, from)
    item.inContext = from.inContext ~= false
    item.ts = type(from.ts) == 'number' and from.ts or nil
    out[#out + 1] = item
  end
  for _, t in ipairs(items) do
    local kind = t.kind
    if kind == 'user' then
      if not blank(t.text) then
        add({ kind = 'user', text = t.text, turn = type(t.turn) == 'number' and t.turn or nil,
          context = type(t.context) == 'table' and t.context or nil }, t)
      end
    elseif kind == 'assistant' then
      if not blank(t.thinking) then
        add({ kind = 'thinking', text = t.thinking }, t)
      end
      if not blank(t.text) then
        add({ kind = 'assistant', text = t.text }, t)
      end
    elseif kind == 'toolCall' then
      add({
        kind = 'toolCall',
        id = t.id,
        name = t.name,
        arguments = t.arguments,
        status = given(t.status) or 'pending',
        preview = given(t.preview),
        error = given(t.error),
        bytes = type(t.bytes) == 'number' and t.bytes or nil,
      }, t)
    elseif kind == 'summary' then
      add({ kind = 'summary', text = type(t.text) == 'string' and t.text or '' }, t)
    elseif kind == 'compaction' or kind == 'undo' or kind == 'rewind' then
      add({ kind = kind, text = given(t.message) or kind }, t)
    elseif not blank(t.text) or not blank(t.message) then -- notice, and kinds of a newer server
      add({ kind = 'notice', text = given(t.text) or t.message }, t)
    end
  end
  return out
end

return M
