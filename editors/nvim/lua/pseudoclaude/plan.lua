--- The plan the agent asks to carry out (SPEC §13 "Plan, then act"): in plan mode the model
--- presents its plan with `exit_plan_mode`, and the server asks to approve it (`pseudoclaude/approve`
--- of kind `plan`, or without the approvals capability a `window/showMessageRequest` whose actions
--- are the server's). The plan shows in a float (filetype markdown), its keys in the float's
--- footer: `a` approve (the session goes on in `default` mode), `A` approve and accept edits
--- (`acceptEdits` mode), `k` keep planning and tell the model what to change (asked with
--- `vim.ui.input`, empty allowed), `q` / `<Esc>` keep planning without a word. Closing the float
--- some other way keeps planning too; leaving it leaves it open (<C-w>p comes back to it).
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

local DECISION = protocol.approval_decisions
local MODES = protocol.permission_modes

--- The titles of a plan's `window/showMessageRequest` (the server's, `lsp/approver.py`): without
--- the approvals capability a plan is asked with these, and answered with one of them.
M.MESSAGE_ACTIONS = {
  approve = 'Approve',
  accept_edits = 'Approve, accept edits',
  keep = 'Keep planning',
}

--- The float's keys, as its footer says them (`short`: a narrow float).
M.HINT = 'a approve · A approve, accept edits · k keep planning, say why · q keep planning'
M.SHORT_HINT = 'a approve · A accept edits · k say why · q keep planning'
--- Without a way to send feedback (the message request): `k` and `q` are the same.
M.HINT_NO_FEEDBACK = 'a approve · A approve, accept edits · k / q keep planning'

--- What `k` asks.
M.FEEDBACK_PROMPT = 'Keep planning. Tell the model what to change (optional): '

--- The widest the float gets (columns).
M.WIDTH = 100

--- The highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudePlanBorder = 'FloatBorder',
  PseudoClaudePlanTitle = 'FloatTitle',
  PseudoClaudePlanHint = 'Comment',
}
util.link_highlights('plan', M.HIGHLIGHTS)

--- The plan float shown last, while it is open.
--- @type pseudoclaude.PlanView?
M.current = nil

--- @class pseudoclaude.PlanAnswer
--- @field decision string `approve` or `keepPlanning`
--- @field mode? string `approve`: `default` or `acceptEdits`
--- @field feedback? string `keepPlanning`: what the model reads (nil: nothing)

--- @class pseudoclaude.PlanView
--- @field buf integer
--- @field win integer
--- @field closed boolean
--- @field lines string[] the plan's lines, as shown
--- @field hint string the keys, as the footer says them
--- @field close fun(self: pseudoclaude.PlanView)

--- The lines of a plan (its Markdown; a final newline ends the last line).
--- @param plan? string
--- @return string[]
function M.lines(plan)
  local text = type(plan) == 'string' and plan or ''
  local lines = vim.split((text:gsub('\r\n', '\n')), '\n', { plain = true })
  while #lines > 1 and vim.trim(lines[#lines]) == '' do
    lines[#lines] = nil
  end
  if #lines == 1 and vim.trim(lines[1]) == '' then
    lines = { '*(the model gave no plan)*' }
  end
  return lines
end

--- The plan of a `window/showMessageRequest` (nil: it is not a plan's): its actions are the
--- server's plan actions, its message the plan after a first line.
--- @param params table
--- @return string?
function M.from_message(params)
  if type(params) ~= 'table' or type(params.actions) ~= 'table' then
    return nil
  end
  local titles = {}
  for _, a in ipairs(params.actions) do
    if type(a) == 'table' then
      titles[a.title] = true
    end
  end
  if not (titles[M.MESSAGE_ACTIONS.approve] and titles[M.MESSAGE_ACTIONS.keep]) then
    return nil
  end
  local message = type(params.message) == 'string' and params.message or ''
  -- "PseudoClaude's plan:\n\n<plan>"
  local plan = message:match("^[^\n]*[Pp]lan:%s*\n(.*)$")
  return plan or message
end

--- The size of the float for `lines`: as wide as the longest line (at most `M.WIDTH` and the
--- screen), as high as the lines wrapped at that width (at most the screen).
--- @param lines string[]
--- @param title string
--- @return integer width, integer height
function M.size(lines, title)
  local max_w = math.max(20, math.min(M.WIDTH, vim.o.columns - 6))
  local width = math.max(vim.fn.strdisplaywidth(title) + 4, vim.fn.strdisplaywidth(M.HINT) + 4)
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  width = math.min(width, max_w)
  local height = 0
  for _, l in ipairs(lines) do
    height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  return width, math.max(1, math.min(height, vim.o.lines - 6))
end

--- Show a plan in a float and call `on_answer(answer)` once with the user's answer (never after
--- `view:close()`). `opts.feedback = false`: `k` asks nothing (the answer cannot carry it).
--- @param plan string the plan (Markdown)
--- @param on_answer fun(answer: pseudoclaude.PlanAnswer)
--- @param opts? {feedback?: boolean, title?: string}
--- @return pseudoclaude.PlanView
function M.open(plan, on_answer, opts)
  opts = opts or {}
  local feedback = opts.feedback ~= false
  local origin = vim.api.nvim_get_current_win()
  -- Typing in the chat's prompt when the plan comes: its keys are Normal mode keys, and the
  -- prompt gets Insert mode back after.
  local was_inserting = vim.fn.mode():sub(1, 1) == 'i'
  if was_inserting then
    vim.cmd.stopinsert()
  end
  local lines = M.lines(plan)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  -- Vim's markdown syntax marks `_` inside words (test_app.py) as an error: not here.
  vim.api.nvim_create_autocmd('Syntax', {
    buffer = buf,
    callback = function()
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent! syntax clear markdownError')
      end)
    end,
  })
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local title = opts.title or 'PseudoClaude plan'
  local width, height = M.size(lines, title)
  local hint = feedback and M.HINT or M.HINT_NO_FEEDBACK
  if vim.fn.strdisplaywidth(hint) + 2 > width then
    hint = feedback and M.SHORT_HINT or 'a approve · A accept edits · q keep planning'
  end
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 2),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = 'minimal',
    border = 'rounded',
    title = { { ' ' .. title .. ' ', 'PseudoClaudePlanTitle' } },
    title_pos = 'center',
    footer = { { ' ' .. hint .. ' ', 'PseudoClaudePlanHint' } },
    footer_pos = 'center',
    zindex = 60,
  })
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].breakindent = true
  vim.wo[win].conceallevel = 2
  vim.wo[win].winhighlight = 'FloatBorder:PseudoClaudePlanBorder'
  vim.api.nvim_win_set_cursor(win, { 1, 0 })

  --- @type pseudoclaude.PlanView
  local view = { buf = buf, win = win, closed = false, lines = lines, hint = hint }
  local group = vim.api.nvim_create_augroup('pseudoclaude_plan_' .. buf, { clear = true })

  function view.close(self)
    if self.closed then
      return
    end
    self.closed = true
    if M.current == self then
      M.current = nil
    end
    pcall(vim.api.nvim_del_augroup_by_id, group)
    if vim.api.nvim_win_is_valid(self.win) then
      pcall(vim.api.nvim_win_close, self.win, true)
    end
    if vim.api.nvim_buf_is_valid(self.buf) then
      pcall(vim.api.nvim_buf_delete, self.buf, { force = true })
    end
    if vim.api.nvim_win_is_valid(origin) then
      pcall(vim.api.nvim_set_current_win, origin)
      if was_inserting and vim.bo[vim.api.nvim_win_get_buf(origin)].buftype == 'prompt' then
        vim.cmd('startinsert!')
      end
    end
  end

  local answered = false
  local function answer(a)
    if answered or view.closed then
      return
    end
    answered = true
    view:close()
    on_answer(a)
  end
  local function approve(mode)
    return function()
      answer({ decision = DECISION.approve, mode = mode })
    end
  end
  local function keep_planning()
    answer({ decision = DECISION.keep_planning })
  end
  local function ask_feedback()
    if not feedback then
      return keep_planning()
    end
    vim.ui.input({ prompt = M.FEEDBACK_PROMPT }, function(text)
      local said = type(text) == 'string' and vim.trim(text) or ''
      answer({ decision = DECISION.keep_planning, feedback = said ~= '' and said or nil })
    end)
  end
  local keys = {
    { 'a', approve(MODES.default), 'PseudoClaude plan: approve (default mode)' },
    { 'A', approve(MODES.accept_edits), 'PseudoClaude plan: approve and accept edits' },
    { 'k', ask_feedback, 'PseudoClaude plan: keep planning, telling the model what to change' },
    { 'q', keep_planning, 'PseudoClaude plan: keep planning' },
    { '<Esc>', keep_planning, 'PseudoClaude plan: keep planning' },
  }
  for _, k in ipairs(keys) do
    vim.keymap.set('n', k[1], k[2], { buffer = buf, nowait = true, desc = k[3] })
  end
  -- Closed some other way (`:q`, CTRL-W c, the buffer wiped): keep planning, without a word.
  local function user_closed()
    if view.closed or answered then
      return
    end
    vim.schedule(function()
      if not answered then
        answered = true
        view:close()
        on_answer({ decision = DECISION.keep_planning })
      end
    end)
  end
  vim.api.nvim_create_autocmd('WinClosed', { group = group, pattern = tostring(win), callback = user_closed })
  vim.api.nvim_create_autocmd('BufWipeout', { group = group, buffer = buf, callback = user_closed })
  M.current = view
  return view
end

--- The title of the message request's action for an answer.
--- @param a pseudoclaude.PlanAnswer
--- @return string
function M.action_title(a)
  if a.decision == DECISION.approve then
    return a.mode == MODES.accept_edits and M.MESSAGE_ACTIONS.accept_edits or M.MESSAGE_ACTIONS.approve
  end
  return M.MESSAGE_ACTIONS.keep
end

return M
