-- PseudoClaude user commands (`:help pseudoclaude`). Nothing starts here: the server starts on
-- `vim.lsp.enable('pseudoclaude')` for a buffer, or with the first command.
if vim.g.loaded_pseudoclaude then
  return
end
vim.g.loaded_pseudoclaude = true

local function pc()
  return require('pseudoclaude')
end

local function complete_sessions(arg_lead)
  local out = { 'latest' }
  local client = require('pseudoclaude.client').get(0)
  if client and client.initialized then
    local resp = client:request_sync(require('pseudoclaude.protocol').requests.sessions_list, {
      workspace = require('pseudoclaude.client').workspace(client, 0),
    }, 1000)
    for _, s in ipairs(resp and resp.result and resp.result.sessions or {}) do
      out[#out + 1] = s.id
    end
  end
  return vim.tbl_filter(function(id)
    return vim.startswith(id, arg_lead)
  end, out)
end

local commands = {
  PseudoClaudeAsk = {
    function(o)
      pc().ask(o.args)
    end,
    { nargs = '*', desc = 'PseudoClaude: Ask (the answer streams into the transcript)' },
  },
  PseudoClaudeCompact = {
    function(o)
      pc().compact(o.args)
    end,
    { nargs = '*', desc = 'PseudoClaude: Compact Context [instructions]' },
  },
  PseudoClaudePreview = {
    function(o)
      pc().preview(o.args)
    end,
    { nargs = '*', desc = 'PseudoClaude: preview a compaction [instructions], then compact or cancel' },
  },
  PseudoClaudeUndo = {
    function()
      pc().undo()
    end,
    { nargs = 0, desc = 'PseudoClaude: Undo Compaction (the summarized messages come back)' },
  },
  PseudoClaudeMemory = {
    function()
      pc().memory()
    end,
    { nargs = 0, desc = 'PseudoClaude: Show Memory (index and notes)' },
  },
  PseudoClaudeRemember = {
    function(o)
      pc().remember(o.args)
    end,
    { nargs = '*', desc = 'PseudoClaude: Remember... [text]' },
  },
  PseudoClaudeForget = {
    function()
      pc().forget()
    end,
    { nargs = 0, desc = 'PseudoClaude: forget a memory note' },
  },
  PseudoClaudeSessions = {
    function()
      pc().sessions()
    end,
    { nargs = 0, desc = 'PseudoClaude: pick a session to resume' },
  },
  PseudoClaudeResume = {
    function(o)
      pc().resume(o.args)
    end,
    { nargs = '?', complete = complete_sessions, desc = 'PseudoClaude: Resume Session [id|latest]' },
  },
  PseudoClaudeNew = {
    function()
      pc().new_session()
    end,
    { nargs = 0, desc = 'PseudoClaude: New Session' },
  },
  PseudoClaudeCancel = {
    function()
      pc().cancel()
    end,
    { nargs = 0, desc = 'PseudoClaude: Cancel Run' },
  },
  PseudoClaudeContext = {
    function()
      pc().context()
    end,
    { nargs = 0, desc = 'PseudoClaude: what fills the context (breakdown in a float)' },
  },
  PseudoClaudeChat = {
    function()
      pc().chat()
    end,
    { nargs = 0, desc = 'PseudoClaude: chat (a chat buffer with a prompt)' },
  },
  PseudoClaudeProposals = {
    function()
      pc().proposals()
    end,
    { nargs = 0, desc = 'PseudoClaude: review memory proposals (a diff split each)' },
  },
  PseudoClaudeInstall = {
    function(o)
      -- Waits without a UI (headless, a plugin manager's build step) or with !; else async.
      require('pseudoclaude.install').install({
        python = o.args ~= '' and o.args or nil,
        sync = (o.bang or #vim.api.nvim_list_uis() == 0) or nil,
      })
    end,
    {
      nargs = '?',
      bang = true,
      complete = 'file',
      desc = 'PseudoClaude: install the server into a private environment [python]',
    },
  },
  PseudoClaudeTranscript = {
    function()
      pc().open_transcript()
    end,
    { nargs = 0, desc = 'PseudoClaude: show the transcript' },
  },
}

for name, spec in pairs(commands) do
  vim.api.nvim_create_user_command(name, spec[1], spec[2])
end

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('pseudoclaude_install', { clear = true }),
  callback = function()
    local install = package.loaded['pseudoclaude.install']
    if install then
      install.abort()
    end
  end,
})
