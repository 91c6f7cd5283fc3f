--- The session's task list (SPEC §13 "a task list"): the model keeps it with `update_tasks`, the
--- server tells it (`tasks` events, after each change and after a resume) and answers
--- `pseudoclaude/tasks`. Each chat shows its session's list as a block at the top of its buffer
--- (`Tasks 2/5`, then `✓` done, `▶` in progress, `○` pending, one line each; nothing when the
--- list is empty) and its count in the winbar (`tasks 2/5`).
local client = require('pseudoclaude.client')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

local STATUS = protocol.task_statuss

--- The mark of each status.
M.MARKS = {
  [STATUS.completed] = '✓',
  [STATUS.in_progress] = '▶',
  [STATUS.pending] = '○',
}

--- The highlight groups (`default`: a colorscheme may set them). A done item is dimmed and
--- struck through (`PseudoClaudeTaskDone` and `PseudoClaudeTaskStrike`), the item in progress
--- stands out.
M.HIGHLIGHTS = {
  PseudoClaudeTasksTitle = 'Title',
  PseudoClaudeTasksCount = 'Comment',
  PseudoClaudeTaskDone = 'Comment',
  PseudoClaudeTaskCurrent = 'DiagnosticWarn',
  PseudoClaudeTaskPending = 'Normal',
  PseudoClaudeTaskPendingMark = 'Comment',
}
util.link_highlights('tasks', M.HIGHLIGHTS)

local function define_strike()
  vim.api.nvim_set_hl(0, 'PseudoClaudeTaskStrike', { strikethrough = true, default = true })
end
define_strike()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('pseudoclaude_tasks_strike', { clear = true }),
  callback = define_strike,
})

--- The items of a list as the server gives them (`{content, status}`), the bad ones left out.
--- @param list any
--- @return pseudoclaude.TaskItem[]
function M.normalize(list)
  local out = {}
  for _, t in ipairs(type(list) == 'table' and list or {}) do
    if type(t) == 'table' and type(t.content) == 'string' and vim.trim(t.content) ~= '' then
      out[#out + 1] = { content = t.content, status = type(t.status) == 'string' and t.status or STATUS.pending }
    end
  end
  return out
end

--- How many are done, and how many there are.
--- @param list pseudoclaude.TaskItem[]
--- @return integer done, integer total
function M.counts(list)
  local done = 0
  for _, t in ipairs(list) do
    if t.status == STATUS.completed then
      done = done + 1
    end
  end
  return done, #list
end

--- The lines of the block and their highlights (`{line (0-based), col, end_col, group,
--- priority?}`): `Tasks 2/5`, an item a line, a blank line after. No lines for an empty list.
--- @param list pseudoclaude.TaskItem[]
--- @return string[] lines, table[] marks
function M.lines(list)
  if #list == 0 then
    return {}, {}
  end
  local done, total = M.counts(list)
  local title, count = 'Tasks', string.format(' %d/%d', done, total)
  local lines = { title .. count }
  local marks = {
    { 0, 0, #title, 'PseudoClaudeTasksTitle' },
    { 0, #title, #title + #count, 'PseudoClaudeTasksCount' },
  }
  for _, t in ipairs(list) do
    local mark = M.MARKS[t.status] or M.MARKS[STATUS.pending]
    local text = (t.content:gsub('%s+', ' '))
    local prefix = '  ' .. mark .. ' '
    local line = prefix .. text
    local row = #lines
    lines[#lines + 1] = line
    if t.status == STATUS.completed then
      marks[#marks + 1] = { row, 0, #line, 'PseudoClaudeTaskDone' }
      marks[#marks + 1] = { row, #prefix, #line, 'PseudoClaudeTaskStrike', 4097 }
    elseif t.status == STATUS.in_progress then
      marks[#marks + 1] = { row, 0, #line, 'PseudoClaudeTaskCurrent' }
    else
      marks[#marks + 1] = { row, 0, #prefix, 'PseudoClaudeTaskPendingMark' }
      marks[#marks + 1] = { row, #prefix, #line, 'PseudoClaudeTaskPending' }
    end
  end
  lines[#lines + 1] = ''
  return lines, marks
end

--- The winbar's words for a list: `tasks 2/5` (nil when empty).
--- @param list? pseudoclaude.TaskItem[]
--- @return string?
function M.words(list)
  if not list or #list == 0 then
    return nil
  end
  return string.format('tasks %d/%d', M.counts(list))
end

--- Show `list` as the task list of `chat` (its block, its winbar).
--- @param chat pseudoclaude.Chat
--- @param list any the server's items
function M.set(chat, list)
  list = M.normalize(list)
  local same = vim.deep_equal(chat.tasks or {}, list) and (chat.head ~= nil) == (#list > 0)
  chat.tasks = list
  if not same then
    local lines, marks = M.lines(list)
    require('pseudoclaude.chat.buffer').set_head(chat, { lines = lines, marks = marks })
    pcall(vim.cmd, 'redrawstatus!')
  end
  util.fire('PseudoClaudeTasks', { workspace = chat.workspace, sessionId = chat.session_id, tasks = list })
end

--- A `tasks` event: the list of its session's chat (none open: nothing; the chat asks when it
--- opens).
--- @param e {workspace: string, sessionId?: string, tasks: any}
function M.event(e)
  if type(e) ~= 'table' then
    return
  end
  local chat = require('pseudoclaude.chat').chat_of_event(e)
  if chat then
    M.set(chat, e.tasks)
  end
end

--- Ask the server for the task list of the chat's session (`pseudoclaude/tasks`) and show it;
--- quiet on failure (a server without it). A chat with no session yet has none.
--- @param chat pseudoclaude.Chat
--- @param done? fun(err?: table)
function M.fetch(chat, done)
  done = done or function() end
  local sid = chat.session_id
  if not sid then
    if chat.tasks and #chat.tasks > 0 then
      M.set(chat, {})
    end
    return done()
  end
  client.request(protocol.requests.tasks, { workspace = chat.workspace, sessionId = sid }, function(err, r)
    if err or type(r) ~= 'table' then
      return done(err)
    end
    if chat.session_id == sid and vim.api.nvim_buf_is_valid(chat.buf) then
      M.set(chat, r.tasks)
    end
    done()
  end)
end

return M
