--- The transcript: a scratch buffer (`pseudoclaude://transcript`) fed by `pseudoclaude/event`.
--- The answer streams in as it arrives; each tool call and its result fold into one line.
local fmt = require('pseudoclaude.format')
local render = require('pseudoclaude.render')

local M = {}

M.NAME = 'pseudoclaude://transcript'

local state = {
  bufnr = nil, --- @type integer?
  at_line_start = true,
  streamed = 0,
  current = nil, --- @type {workspace: string, sessionId: string}?
}

--- The transcript buffer, created on first use.
--- @return integer
function M.bufnr()
  if state.bufnr and vim.api.nvim_buf_is_valid(state.bufnr) then
    return state.bufnr
  end
  local b = vim.fn.bufnr(M.NAME)
  if b < 0 then
    b = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(b, M.NAME)
  end
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = false
  vim.bo[b].filetype = 'pseudoclaude'
  state.bufnr = b
  state.at_line_start = true
  return b
end

--- All lines of the transcript (for tests and scripts).
function M.lines()
  return vim.api.nvim_buf_get_lines(M.bufnr(), 0, -1, false)
end

--- Characters of answer text streamed since the last `begin_run`.
function M.streamed()
  return state.streamed
end

local function follow(b)
  local last = vim.api.nvim_buf_line_count(b)
  for _, win in ipairs(vim.fn.win_findbuf(b)) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
end

local function write(text)
  if text == '' then
    return
  end
  local b = M.bufnr()
  local parts = vim.split(text, '\n', { plain = true })
  local last = vim.api.nvim_buf_line_count(b)
  local tail = vim.api.nvim_buf_get_lines(b, last - 1, last, false)[1] or ''
  parts[1] = tail .. parts[1]
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, last - 1, last, false, parts)
  vim.bo[b].modifiable = false
  state.at_line_start = text:sub(-1) == '\n'
  follow(b)
end

local function line(text)
  if not state.at_line_start then
    write('\n')
  end
  write(text .. '\n')
end

--- Show the transcript in a window (`open`: `vsplit`, `split`, `tab` or `none`), keeping focus.
function M.open(how)
  local b = M.bufnr()
  if how == 'none' or #vim.fn.win_findbuf(b) > 0 then
    return
  end
  local win = vim.api.nvim_get_current_win()
  if how == 'tab' then
    vim.cmd('tab sbuffer ' .. b)
  elseif how == 'split' then
    vim.cmd('belowright sbuffer ' .. b)
  else
    vim.cmd('vertical belowright sbuffer ' .. b)
  end
  vim.wo.wrap = true
  vim.wo.linebreak = true
  follow(b)
  if vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_set_current_win(win)
  end
end

--- The header of a new question.
function M.begin_run(workspace, prompt, context)
  state.streamed = 0
  if vim.api.nvim_buf_line_count(M.bufnr()) > 1 then
    line('')
  end
  line(string.format('━━ You · %s ━━', fmt.basename(workspace)))
  local chip = require('pseudoclaude.editor').label(context)
  if chip ~= '' then
    line('Context: ' .. chip)
  end
  line((prompt:gsub('%s+$', '')))
  line('━━ PseudoClaude ━━')
  state.current = { workspace = workspace, sessionId = '' }
end

--- The footer of a finished run; prints `result.text` when nothing streamed.
function M.end_run(result)
  if state.streamed == 0 and type(result.text) == 'string' and result.text ~= '' then
    write(result.text)
  end
  line(render.footer(result))
  if type(result.error) == 'string' and result.error ~= '' then
    line('✗ ' .. fmt.one_line(result.error, 300))
  end
end

--- A run that ended without a result (cancelled, or the request failed).
function M.abort_run(reason)
  line(string.format('── %s ──', reason))
end

--- A note from the plugin itself (resume, new session...).
function M.note(text)
  if type(text) ~= 'string' or text == '' then
    return
  end
  line('· ' .. text)
end

--- One line of a transcript item (`pseudoclaude/sessions/messages`), or nil for an empty one.
--- Items the model no longer sees end in ` (not in context)`.
--- @param item pseudoclaude.TranscriptItem
--- @return string?
function M.item_line(item)
  local kind, text = item.kind, nil
  if kind == 'user' then
    local chip = require('pseudoclaude.editor').label(item.context)
    text = vim.trim(item.text or '') ~= '' and ('You' .. (chip ~= '' and (' [' .. chip .. ']') or '') .. ': '
      .. fmt.one_line(item.text, 400)) or nil
  elseif kind == 'assistant' then
    text = vim.trim(item.text or '') ~= '' and ('PseudoClaude: ' .. fmt.one_line(item.text, 400)) or nil
  elseif kind == 'toolCall' then
    text = '  ' .. render.call(item.name, item.arguments) .. ' · ' .. render.result(item)
  elseif kind == 'summary' then
    text = 'Summary: ' .. fmt.one_line(item.text or '', 400)
  elseif kind == 'notice' then
    text = '· ' .. fmt.one_line(item.text or '', 400)
  elseif item.message then
    text = '· ' .. fmt.one_line(item.message, 400)
  end
  if text and item.inContext == false then
    text = text .. ' (not in context)'
  end
  return text
end

--- The items of a resumed session, replayed briefly (`skipped`: earlier items not shown).
--- @param items pseudoclaude.TranscriptItem[]
--- @param skipped integer
function M.history(items, skipped)
  if skipped > 0 then
    line(string.format('· (%s not shown)', fmt.plural(skipped, 'earlier item')))
  end
  for _, item in ipairs(items) do
    local text = M.item_line(item)
    if text then
      line(text)
    end
  end
end

--- One `pseudoclaude/event` notification.
function M.event(e)
  local cur = state.current
  if not cur or cur.workspace ~= e.workspace or (cur.sessionId ~= '' and cur.sessionId ~= e.sessionId) then
    line(string.format('── %s · session %s ──', fmt.basename(e.workspace), tostring(e.sessionId)))
  end
  state.current = { workspace = e.workspace, sessionId = e.sessionId }
  local kind = e.kind
  local sub = type(e.agentId) == 'string' and e.agentId ~= '' and kind ~= 'task'
  if sub then -- a sub-agent's: its calls and their results, marked, never its streamed text
    if kind == 'toolCall' then
      line(string.format('    ↳ %s %s', e.agentId, render.call(e.name, e.arguments)))
    elseif kind == 'toolResult' then
      line(string.format('    ↳ %s %s', e.agentId, render.result(e)))
    end
    return
  elseif kind == 'task' then
    line('  ' .. require('pseudoclaude.agents').task_line(e))
    return
  end
  if kind == 'text' then
    state.streamed = state.streamed + #(e.delta or '')
    write(e.delta or '')
  elseif kind == 'toolCall' then
    line('  ' .. render.call(e.name, e.arguments))
  elseif kind == 'toolResult' then
    line('  ' .. render.result(e))
  else
    local text = render.notice(e)
    if text then
      line('  ' .. text)
    end
  end
end

--- Forget everything (a fresh buffer).
function M.clear()
  local b = M.bufnr()
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, {})
  vim.bo[b].modifiable = false
  state.at_line_start = true
  state.current = nil
  state.streamed = 0
end

return M
