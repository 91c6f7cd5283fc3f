--- `:PseudoClaudeHooks` (and `/hooks` in the chat): the folder's hooks by event, in the server's
--- words (`text` of `pseudoclaude/hooks/list`, what `pseudoclaude hooks list` prints): what each
--- runs, where it is defined, whether it runs (a folder's own `hooks.yaml` waits for your
--- approval) and every entry that cannot be read, with its file, line and why. In a float; when
--- the folder's own hooks wait (declined or dismissed before), `a` asks about them again
--- (`pseudoclaude/hooks/review`, the same question as when the folder opens).
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

--- The float's last line.
M.HELP = 'q or <Esc> closes'
--- The float's last line when the folder's own hooks wait for an approval.
M.REVIEW_HELP = "a review this folder's hooks · q close"

--- Whether the folder's own `hooks.yaml` has hooks that do not run for want of an approval.
--- @param r pseudoclaude.HooksListResult
--- @return boolean
function M.waiting(r)
  for _, h in ipairs(type(r) == 'table' and type(r.hooks) == 'table' and r.hooks or {}) do
    if h.source == 'workspace' and (h.status == 'needsApproval' or h.status == 'denied') then
      return true
    end
  end
  return false
end

--- The lines of the float: the server's text, then the keys.
--- @param r pseudoclaude.HooksListResult
--- @return string[]
function M.lines(r)
  local text = type(r) == 'table' and type(r.text) == 'string' and vim.trim(r.text) or ''
  local lines = text ~= '' and vim.split(text, '\n', { plain = true }) or { '(this server sends no hooks text)' }
  vim.list_extend(lines, { '', M.waiting(r) and M.REVIEW_HELP or M.HELP })
  return lines
end

--- What a review changed, in one line, and its level.
--- @param r pseudoclaude.HooksListResult
--- @return string, integer
function M.reviewed(r)
  local running = {}
  for _, h in ipairs(type(r) == 'table' and type(r.hooks) == 'table' and r.hooks or {}) do
    if h.source == 'workspace' and h.status == 'active' then
      running[#running + 1] = h.name
    end
  end
  if M.waiting(r) then
    return "PseudoClaude: this folder's hooks stay off: they were not approved.", vim.log.levels.WARN
  elseif #running > 0 then
    return "PseudoClaude: this folder's hooks run now: " .. table.concat(running, ', ') .. '.', vim.log.levels.INFO
  end
  return "PseudoClaude: nothing waits for an approval in this folder's .PseudoClaude/hooks.yaml.", vim.log.levels.INFO
end

--- Show a hooks list in the float (`a` reviews when the folder's own hooks wait).
--- @param r pseudoclaude.HooksListResult
--- @param workspace string
function M.show(r, workspace)
  local buf = require('pseudoclaude.context').open_float(M.lines(r), 'PseudoClaude hooks · ' .. fmt.basename(workspace))
  if M.waiting(r) then
    vim.keymap.set('n', 'a', function()
      M.review(workspace)
    end, { buffer = buf, nowait = true, desc = "PseudoClaude: review this folder's hooks" })
  end
end

--- Ask about the folder's own `hooks.yaml` again (the approval as when the folder opens), then
--- show the hooks and say what changed.
--- @param workspace? string
function M.review(workspace)
  require('pseudoclaude.context').close_float() -- the question takes the screen
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.hooks_review, params, 'Review hooks', function(r)
    M.show(r, params.workspace)
    util.notify(M.reviewed(r))
  end)
end

--- Ask for the hooks of the folder (`workspace`, else the current buffer's) and show them.
--- @param workspace? string
function M.open(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.hooks_list, params, 'Hooks', function(r)
    M.show(r, params.workspace)
  end)
end

return M
