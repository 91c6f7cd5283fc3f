--- Handlers for what the server sends: `pseudoclaude/event`, `pseudoclaude/contextUsage`,
--- `pseudoclaude/memoryChanged`, `pseudoclaude/memoryProposals`, `pseudoclaude/mcpChanged`, approvals
--- (`pseudoclaude/approve`, or `window/showMessageRequest` without the capability) and the
--- server's `$/cancelRequest` of a pending approval.
local util = require('pseudoclaude.util')
local protocol = require('pseudoclaude.protocol')

local M = {}

local fire = util.fire

M[protocol.notifications.event] = function(_, params)
  require('pseudoclaude.transcript').event(params)
  require('pseudoclaude.chat').event(params)
  if params.kind == 'error' or params.kind == 'compact' then
    require('pseudoclaude').refresh_context(params.workspace)
  end
  fire('PseudoClaudeEvent', params)
end

M[protocol.notifications.context_usage] = function(_, params)
  require('pseudoclaude.meter').usage(params)
  fire('PseudoClaudeContext', params)
end

M[protocol.notifications.memory_changed] = function(_, params)
  fire('PseudoClaudeMemoryChanged', params)
end

--- The number of pending memory proposals changed: the meter shows it; more of them is said once.
M[protocol.notifications.memory_proposals_changed] = function(_, params)
  local fmt = require('pseudoclaude.format')
  local meter = require('pseudoclaude.meter')
  local before = meter.proposals(params.workspace) or 0
  meter.set_proposals(params.workspace, params.count)
  if type(params.count) == 'number' and params.count > before then
    vim.notify(
      string.format(
        'PseudoClaude: %s to review in %s: :PseudoClaudeProposals',
        fmt.plural(params.count, 'memory proposal'),
        fmt.basename(params.workspace)
      ),
      vim.log.levels.INFO,
      { title = 'PseudoClaude' }
    )
  end
  fire('PseudoClaudeProposals', params)
end

--- The MCP servers of a folder changed (a status, their tools): `:PseudoClaudeMcp` shows it.
M[protocol.notifications.mcp_changed] = function(_, params)
  if type(params) == 'table' then
    require('pseudoclaude.mcp').changed(params)
  end
  fire('PseudoClaudeMcpChanged', params)
end

M[protocol.server_requests.approve] = function(err, params, ctx)
  return require('pseudoclaude.approvals').handle(err, params, ctx)
end

M[vim.lsp.protocol.Methods.dollar_cancelRequest] = function(_, params, ctx)
  if type(params) == 'table' and params.id ~= nil then
    require('pseudoclaude.approvals').cancel(ctx.client_id, params.id)
  end
end

local APPROVAL = protocol.approval_actions

--- Is this `window/showMessageRequest` an approval prompt (SPEC §8)?
function M.is_approval(params)
  if params.type ~= vim.lsp.protocol.MessageType.Warning then
    return false
  end
  local titles = {}
  for _, a in ipairs(params.actions or {}) do
    titles[a.title] = true
  end
  return titles[APPROVAL.once] == true and titles[APPROVAL.deny] == true
end

--- Approvals go through `vim.ui.select` with their own prompt and kind (`pseudoclaude_approval`,
--- for UI plugins); dismissing is a denial. Other message requests keep Neovim's handler.
M['window/showMessageRequest'] = function(err, params, ctx, config)
  if not M.is_approval(params) then
    return vim.lsp.handlers['window/showMessageRequest'](err, params, ctx, config)
  end
  local co, is_main = coroutine.running()
  if not co or is_main then
    -- Not resumable here: fall back to Neovim's own (blocking) prompt.
    return vim.lsp.handlers['window/showMessageRequest'](err, params, ctx, config)
  end
  local message = params.message:gsub('%s+$', '')
  if not message:match('^PseudoClaude') then
    message = 'PseudoClaude: ' .. message
  end
  vim.ui.select(params.actions, {
    prompt = message,
    kind = 'pseudoclaude_approval',
    format_item = function(action)
      return action.title
    end,
  }, function(choice)
    vim.schedule(function()
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

return M
