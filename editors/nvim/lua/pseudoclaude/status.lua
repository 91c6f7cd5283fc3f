--- `/status` in the chat: a session at a glance (its mode, the model, the tokens, the sandbox,
--- the MCP servers, hooks and skills) in the server's words (`text` of `pseudoclaude/status`,
--- what `pseudoclaude status` prints), in a float.
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

--- The float's last line.
M.HELP = 'q or <Esc> closes'

--- The lines of the float: the server's text, then how to close it.
--- @param r pseudoclaude.StatusResult
--- @return string[]
function M.lines(r)
  local text = type(r) == 'table' and type(r.text) == 'string' and vim.trim(r.text) or ''
  local lines = text ~= '' and vim.split(text, '\n', { plain = true }) or { '(this server sends no status text)' }
  vim.list_extend(lines, { '', M.HELP })
  return lines
end

--- Ask for the status of `session` (the folder's current one when nil) and show it.
--- @param workspace? string
--- @param session? string
function M.open(workspace, session)
  local params = { workspace = workspace, sessionId = session }
  client.request_or_fail(protocol.requests.status, params, 'Status', function(r)
    require('pseudoclaude.context').open_float(M.lines(r), 'PseudoClaude status · ' .. fmt.basename(params.workspace))
  end)
end

return M
