-- Plan mode and the task list in a real Neovim against the real server and the scripted model
-- (test_nvim.py's PLAN_RULES): the plan float, keep planning with feedback, approve and accept
-- edits, the task list at the top of the chat (events, then pseudoclaude/tasks on reopening).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local h = dofile(vim.fs.joinpath(here, 'nvim_harness.lua'))
local report, step, wait_for, take, contains = h.report, h.step, h.wait_for, h.take, h.contains
local ws = vim.uri_from_fname(h.workspace)
local client, chat

local function context()
  local r = client:request_sync('pseudoclaude/context', { workspace = ws, sessionId = chat.session_id }, 10000)
  assert(r and r.result, vim.inspect(r))
  return r.result
end

local function winbar()
  local win = assert(vim.fn.win_findbuf(chat.buf)[1], 'the chat is not shown')
  return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, maxwidth = 400, use_winbar = true }).str
end

local function chat_lines()
  return vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
end

--- The highlight groups of the head's line `row` (0-based).
local function head_groups(row)
  local NS = require('pseudoclaude.chat.buffer').HEAD_NS
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, NS, { row, 0 }, { row, -1 }, { details = true })) do
    out[#out + 1] = m[4].hl_group
  end
  table.sort(out)
  return out
end

local tasks_seen = {}
vim.api.nvim_create_autocmd('User', { pattern = 'PseudoClaudeTasks', callback = function(ev)
  tasks_seen[#tasks_seen + 1] = ev.data
end })

--- The plan float shown next: its view, after checking it is current and shows markdown.
local function plan_float()
  local shown = take('PseudoClaudeApprovalShown')
  assert(shown.plan and shown.view, vim.inspect(shown))
  local view = shown.view
  assert(vim.api.nvim_get_current_win() == view.win, 'the plan float is not current')
  assert(vim.bo[view.buf].filetype == 'markdown', vim.bo[view.buf].filetype)
  assert(vim.api.nvim_win_get_config(view.win).relative == 'editor', 'not a float')
  return view, shown.params
end

step('plan mode, a prompt: the model keeps a task list and presents its plan', function()
  client = h.setup_plugin({ settings = { approvals = { runCommand = 'ask', write = 'ask' } } })
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(ws)
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  vim.cmd('PseudoClaudeMode plan')
  wait_for('plan mode in the winbar', function()
    return winbar():find('plan mode', 1, true)
  end)
  h.forget('PseudoClaudeApprovalShown')
  h.forget('PseudoClaudeRunDone')
  require('pseudoclaude.chat').submit(chat, 'PLAN-TASKS: make the greeting friendlier')
  local view, params = plan_float()
  assert(params.kind == 'plan' and params.tool == 'exit_plan_mode', vim.inspect(params))
  local lines = vim.api.nvim_buf_get_lines(view.buf, 0, -1, false)
  report.plan_v1 = lines
  assert(lines[1] == '# Plan: a friendlier greeting', lines[1])
  contains(table.concat(lines, '\n'), 'Add a test for greet', 'the plan')
  contains(view.hint, 'a approve', 'the hint')
  contains(vim.api.nvim_win_get_config(view.win).footer[1][1], view.hint, 'the footer')
  -- The task list came first (update_tasks): the block at the top of the chat, the card waits.
  local top = wait_for('the task list', function()
    local l = chat_lines()
    return l[1] == 'Tasks 0/3' and l
  end)
  report.tasks_planned = vim.list_slice(top, 1, 5)
  assert(vim.deep_equal(vim.list_slice(top, 1, 5), { 'Tasks 0/3', '  ▶ Change greet in app.py',
    '  ○ Add a test for greet', '  ○ Run the tests', '' }), vim.inspect(top))
  contains(winbar(), 'tasks 0/3', 'winbar')
  contains(table.concat(chat_lines(), '\n'), '⏸ waiting for your approval', 'the card')
  assert(context().mode == 'plan')
end)

step('k: keep planning, the feedback typed reaches the model; it plans again', function()
  h.answer({ 'also update the README' })
  h.forget('PseudoClaudeApproval')
  vim.api.nvim_feedkeys('k', 'x', false)
  local decided = take('PseudoClaudeApproval')
  assert(decided.decision == 'keepPlanning' and decided.feedback == 'also update the README', vim.inspect(decided))
  contains(h.inputs[#h.inputs], 'Tell the model what to change', 'the question')
  local view = plan_float()
  local lines = vim.api.nvim_buf_get_lines(view.buf, 0, -1, false)
  report.plan_v2 = lines
  contains(table.concat(lines, '\n'), 'Mention the new greeting in README.md', 'the second plan')
  assert(context().mode == 'plan', 'left plan mode without an approval')
end)

step('A: approve and accept edits: the mode, the run goes on, the list moves on', function()
  h.forget('PseudoClaudeApproval')
  vim.api.nvim_feedkeys('A', 'x', false)
  local decided = take('PseudoClaudeApproval')
  assert(decided.decision == 'approve' and decided.mode == 'acceptEdits', vim.inspect(decided))
  wait_for('acceptEdits mode in the winbar', function()
    return winbar():find('acceptEdits mode', 1, true)
  end)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  assert(context().mode == 'acceptEdits', tostring(context().mode))
  local lines = wait_for('the list moved on', function()
    local l = chat_lines()
    return l[1] == 'Tasks 1/4' and l
  end)
  report.tasks_after = vim.list_slice(lines, 1, 6)
  assert(vim.deep_equal(vim.list_slice(lines, 1, 6), { 'Tasks 1/4', '  ✓ Change greet in app.py',
    '  ▶ Add a test for greet', '  ○ Mention the new greeting in README.md', '  ○ Run the tests', '' }),
    vim.inspect(lines))
  assert(vim.deep_equal(head_groups(1), { 'PseudoClaudeTaskDone', 'PseudoClaudeTaskStrike' }), vim.inspect(head_groups(1)))
  assert(vim.deep_equal(head_groups(2), { 'PseudoClaudeTaskCurrent' }), vim.inspect(head_groups(2)))
  report.winbar = winbar()
  contains(report.winbar, 'tasks 1/4', 'winbar')
  local text = table.concat(lines, '\n')
  contains(text, 'Starting with greet.', 'the run after the approval')
  assert(#vim.api.nvim_list_wins() == #vim.tbl_filter(function(w)
    return vim.api.nvim_win_get_config(w).relative == ''
  end, vim.api.nvim_list_wins()), 'a float is left')
end)

step('the chat reopened: the list comes from pseudoclaude/tasks', function()
  vim.cmd('bwipeout! ' .. chat.buf)
  tasks_seen = {}
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  chat = require('pseudoclaude.chat').get(ws)
  wait_for('the list', function()
    return #tasks_seen > 0
  end)
  local lines = chat_lines()
  assert(lines[1] == 'Tasks 1/4' and lines[3] == '  ▶ Add a test for greet', vim.inspect(lines))
  contains(table.concat(lines, '\n'), '## You', 'the history below the list')
  h.no_errors()
end)

h.done('nvim plan e2e')
