--- Handlers for what the server sends: `pseudoclaude/event` (a `mode` event to the session's
--- mode, a `tasks` event to its chat's task list, the others to the transcript and the chat),
--- `pseudoclaude/contextUsage`, `pseudoclaude/memoryChanged`, `pseudoclaude/memoryProposals`,
--- `pseudoclaude/mcpChanged`, approvals (`pseudoclaude/approve`, or `window/showMessageRequest`
--- without the capability; a plan in either shows in the plan float), the server's
--- `$/cancelRequest` of a pending approval, `pseudoclaude/diagnostics` (what `vim.diagnostic`
--- shows) and `workspace/applyEdit` (the agent's edit of an unsaved buffer).
local util = require('pseudoclaude.util')
local protocol = require('pseudoclaude.protocol')

local M = {}

local fire = util.fire

--- After a tool ran, the unmodified buffers of the folder show their files as they are on disk
--- now (`:checktime`: the agent wrote one, or a command changed it); a buffer with unsaved
--- changes is left alone (the agent's edits of those come as `workspace/applyEdit`).
function M.reload_unmodified(workspace)
  if type(workspace) ~= 'string' then
    return
  end
  local editor = require('pseudoclaude.editor')
  local root = editor.root(workspace)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and not vim.bo[b].modified and editor.path_of(b, root) then
      pcall(vim.cmd.checktime, b)
    end
  end
end

M[protocol.notifications.event] = function(_, params)
  if params.kind == 'mode' then
    -- A session's permission mode changed: the chat's winbar shows it (not a line of a run).
    require('pseudoclaude.permissions').event(params)
    return fire('PseudoClaudeEvent', params)
  elseif params.kind == 'tasks' then
    -- The session's task list: the block at the top of its chat (not a line of a run).
    require('pseudoclaude.tasks').event(params)
    return fire('PseudoClaudeEvent', params)
  end
  require('pseudoclaude.transcript').event(params)
  require('pseudoclaude.chat').event(params)
  if params.kind == 'error' or params.kind == 'compact' then
    require('pseudoclaude').refresh_context(params.workspace)
  elseif params.kind == 'toolResult' then
    M.reload_unmodified(params.workspace)
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

local function invalid(message)
  return nil, vim.lsp.rpc_response_error(protocol.errors.invalid_params, message)
end

--- `pseudoclaude/diagnostics` `{workspace, paths?}`: the diagnostics Neovim shows in the loaded
--- buffers of the folder (`vim.diagnostic.get()`, every source but the pseudoclaude clients),
--- positions in the client's encoding.
M[protocol.server_requests.diagnostics] = function(_, params, ctx)
  if type(params) ~= 'table' or type(params.workspace) ~= 'string' or params.workspace == '' then
    return invalid('pseudoclaude/diagnostics: workspace must be a folder URI')
  end
  local paths = params.paths
  if paths == vim.NIL then
    paths = nil
  end
  if paths ~= nil then
    if type(paths) ~= 'table' or not vim.iter(paths):all(function(p)
      return type(p) == 'string'
    end) then
      return invalid('pseudoclaude/diagnostics: paths must be a list of relative paths')
    end
  end
  local editor = require('pseudoclaude.editor')
  local c = vim.lsp.get_client_by_id(ctx.client_id)
  local found = editor.diagnostics(editor.root(params.workspace), paths, c and c.offset_encoding or 'utf-16')
  fire('PseudoClaudeDiagnostics', { workspace = params.workspace, paths = paths, count = #found })
  return { diagnostics = found }
end

--- The first document of an edit that changed since the version the edit was made on:
--- `why`, or nil.
function M.stale_document(edit)
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    local doc = type(change) == 'table' and change.textDocument
    local version = type(doc) == 'table' and doc.version
    if type(version) == 'number' and version > 0 and type(doc.uri) == 'string' then
      local bufnr = vim.uri_to_bufnr(doc.uri)
      local now = vim.lsp.util.buf_versions[bufnr]
      if vim.api.nvim_buf_is_loaded(bufnr) and now > version then
        return string.format('%s changed in the editor since the agent read it (version %d, now %d)',
          vim.fn.fnamemodify(vim.uri_to_fname(doc.uri), ':t'), version, now)
      end
    end
  end
end

--- Close the undo block of each loaded buffer an edit changes: the edit is an undo step of its
--- own (`u` takes back the agent's edit, not what was typed just before). Setting 'undolevels'
--- closes the block, even to its own value.
function M.break_undo(edit)
  local uris = {}
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if type(change) == 'table' and type(change.textDocument) == 'table' and type(change.textDocument.uri) == 'string' then
      uris[#uris + 1] = change.textDocument.uri
    end
  end
  for uri in pairs(type(edit.changes) == 'table' and edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  for _, uri in ipairs(uris) do
    local bufnr = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(bufnr) then
      vim.api.nvim_buf_call(bufnr, function()
        vim.go.undolevels = vim.go.undolevels
      end)
    end
  end
end

--- `workspace/applyEdit`: the agent's edit of a file with unsaved changes (the server writes the
--- others to disk itself). Applied as Neovim applies an edit: one undo step (`u` takes it back),
--- the buffer stays modified, nothing is written. Quiet (Neovim's own handler prints its label),
--- and refused when the buffer changed since the version the edit was made on (Neovim's own skips
--- such an edit and still answers that it applied it). Fires `User PseudoClaudeEdit`.
M[vim.lsp.protocol.Methods.workspace_applyEdit] = function(_, params, ctx)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    return invalid('workspace/applyEdit: expected {edit}')
  end
  local c = vim.lsp.get_client_by_id(ctx.client_id)
  -- A `null` version (an untracked document) is no version: Neovim compares it as a number.
  for _, change in ipairs(type(params.edit.documentChanges) == 'table' and params.edit.documentChanges or {}) do
    if type(change) == 'table' and type(change.textDocument) == 'table' and change.textDocument.version == vim.NIL then
      change.textDocument.version = nil
    end
  end
  local result
  local stale = M.stale_document(params.edit)
  if stale then
    result = { applied = false, failureReason = stale }
  else
    M.break_undo(params.edit)
    local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, c and c.offset_encoding or 'utf-16')
    result = ok and { applied = true }
      or { applied = false, failureReason = require('pseudoclaude.client').error_message(err) }
  end
  fire('PseudoClaudeEdit', { label = params.label, applied = result.applied, failureReason = result.failureReason })
  return result
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

--- A plan without the approvals capability (the server's plan actions): the plan float, whose
--- answer is the action of its title (a message carries no feedback: `k` keeps planning). It is
--- pending like an approval: the server's `$/cancelRequest` (or its exit) closes it.
local function plan_message(plan, params, ctx, co)
  local p = require('pseudoclaude.plan')
  local approvals = require('pseudoclaude.approvals')
  local function pick(title)
    for _, a in ipairs(params.actions) do
      if a.title == title then
        return a
      end
    end
    return vim.NIL
  end
  local pending = { client_id = ctx.client_id, request_id = approvals.request_id(), params = params, done = false }
  function pending.settle(decision, err, _, extra)
    if pending.done then
      return
    end
    pending.done = true
    for i, other in ipairs(approvals.pending) do
      if other == pending then
        table.remove(approvals.pending, i)
        break
      end
    end
    if pending.view then
      pending.view:close()
    end
    extra = extra or {}
    fire('PseudoClaudeApproval', { params = params, decision = decision, mode = extra.mode, cancelled = err ~= nil })
    vim.schedule(function()
      if err then
        return coroutine.resume(co, nil, err)
      end
      coroutine.resume(co, pick(p.action_title({ decision = decision, mode = extra.mode })))
    end)
  end
  approvals.pending[#approvals.pending + 1] = pending
  pending.view = p.open(plan, function(a)
    pending.settle(a.decision, nil, nil, { mode = a.mode })
  end, { feedback = false })
  fire('PseudoClaudeApprovalShown', { params = params, diff = false, plan = true, view = pending.view })
end

--- Approvals go through `vim.ui.select` with their own prompt and kind (`pseudoclaude_approval`,
--- for UI plugins); dismissing is a denial. A plan shows in the plan float. Other message
--- requests keep Neovim's handler.
M['window/showMessageRequest'] = function(err, params, ctx, config)
  local plan = type(params) == 'table' and require('pseudoclaude.plan').from_message(params)
  if plan then
    local co, is_main = coroutine.running()
    if co and not is_main then
      plan_message(plan, params, ctx, co)
      return coroutine.yield()
    end
  end
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
