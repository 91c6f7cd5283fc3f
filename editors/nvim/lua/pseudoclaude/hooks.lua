--- `:PseudoClaudeHooks` (and `/hooks` in the chat): the folder's hooks by event, in the server's
--- words (`text` of `pseudoclaude/hooks/list`, what `pseudoclaude hooks list` prints): what each
--- runs, where it is defined, whether it runs (a folder's own `hooks.yaml` waits for your
--- approval) and every entry that cannot be read, with its file, line and why. In a float.
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

--- The float's last line.
M.HELP = 'q or <Esc> closes'

--- The lines of the float: the server's text, then how to close it.
--- @param r pseudoclaude.HooksListResult
--- @return string[]
function M.lines(r)
  local text = type(r) == 'table' and type(r.text) == 'string' and vim.trim(r.text) or ''
  local lines = text ~= '' and vim.split(text, '\n', { plain = true }) or { '(this server sends no hooks text)' }
  vim.list_extend(lines, { '', M.HELP })
  return lines
end

--- Ask for the hooks of the folder (`workspace`, else the current buffer's) and show them.
--- @param workspace? string
function M.open(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.hooks_list, params, 'Hooks', function(r)
    require('pseudoclaude.context').open_float(M.lines(r), 'PseudoClaude hooks · ' .. fmt.basename(params.workspace))
  end)
end

return M
