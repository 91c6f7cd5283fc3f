--- Handlers for what the server sends: `pseudoclaude/event`, `pseudoclaude/contextUsage`,
--- `pseudoclaude/memoryChanged`, and approval prompts (`window/showMessageRequest`).
local protocol = require('pseudoclaude.protocol')

local M = {}

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, data = data, modeline = false })
end

M[protocol.notifications.event] = function(_, params)
  require('pseudoclaude.transcript').event(params)
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

M[protocol.notifications.memory_proposals_changed] = function(_, params)
  fire('PseudoClaudeProposals', params)
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
