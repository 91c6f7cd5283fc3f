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

--- The prompts' numbers of the current session (then, for :PseudoClaudeRewind, what to take back).
local function complete_turns(arg_lead, cmdline)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  if arg_lead ~= '' then
    table.remove(words)
  end
  local rewind = (words[1] or ''):match('Fo') == nil -- :PseudoClaudeRewind, not :PseudoClaudeFork
  local has_turn, has_mode = false, false
  for i = 2, #words do
    has_turn = has_turn or words[i]:match('^%d+$') ~= nil
    has_mode = has_mode or words[i]:match('^%a+$') ~= nil
  end
  local out = {}
  if not has_turn and (rewind or #words < 2) then
    local client = require('pseudoclaude.client').get(0)
    if client and client.initialized then
      local resp = client:request_sync(require('pseudoclaude.protocol').requests.sessions_turns, {
        workspace = require('pseudoclaude.client').workspace(client, 0),
      }, 1000)
      local turns = resp and resp.result and resp.result.turns or {}
      for i = #turns, 1, -1 do
        out[#out + 1] = tostring(turns[i].turn)
      end
    end
  end
  if rewind and not has_mode then
    vim.list_extend(out, { 'both', 'conversation', 'code' })
  end
  return vim.tbl_filter(function(w)
    return vim.startswith(w, arg_lead)
  end, out)
end

local commands = {
  PseudoClaudeAsk = {
    function(o)
      pc().ask(o.args, { range = o.range > 0 and { o.line1, o.line2 } or nil })
    end,
    { nargs = '*', range = true, desc = 'PseudoClaude: Ask (the answer streams into the transcript; a range sends the selection)' },
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
    function(o)
      pc().sessions(nil, { beside = o.bang })
    end,
    { nargs = 0, bang = true, desc = 'PseudoClaude: pick a session to resume (! opens its chat beside the one shown)' },
  },
  PseudoClaudeResume = {
    function(o)
      pc().resume(o.args)
    end,
    { nargs = '?', complete = complete_sessions, desc = 'PseudoClaude: Resume Session [id|latest]' },
  },
  PseudoClaudeRewind = {
    function(o)
      pc().rewind(o.args)
    end,
    {
      nargs = '*',
      complete = complete_turns,
      desc = 'PseudoClaude: rewind the code, the conversation or both to before a prompt [turn] [mode]',
    },
  },
  PseudoClaudeFork = {
    function(o)
      pc().fork(o.args)
    end,
    { nargs = '?', complete = complete_turns, desc = 'PseudoClaude: continue in a new session [from before turn]' },
  },
  PseudoClaudeNew = {
    function()
      pc().new_session()
    end,
    { nargs = 0, desc = 'PseudoClaude: New Session' },
  },
  PseudoClaudeWorktree = {
    function(o)
      pc().worktree(o.args, nil, { bang = o.bang })
    end,
    {
      nargs = '?',
      bang = true,
      complete = function(arg_lead)
        return vim.tbl_filter(function(w)
          return vim.startswith(w, arg_lead)
        end, { 'status', 'apply', 'remove', 'remove!' })
      end,
      desc = 'PseudoClaude: the worktree of the session: status (its changes), apply (to the folder), remove[!]',
    },
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
  PseudoClaudeAgents = {
    function()
      pc().agents()
    end,
    { nargs = 0, desc = 'PseudoClaude: the sub-agents of the session (<CR> transcript, x stops a background one)' },
  },
  PseudoClaudeMcp = {
    function()
      pc().mcp()
    end,
    { nargs = 0, desc = 'PseudoClaude: the MCP servers of the folder (approve, restart, tools)' },
  },
  PseudoClaudeChat = {
    function(o)
      pc().chat({ range = o.range > 0 and { o.line1, o.line2 } or nil })
    end,
    { nargs = 0, range = true, desc = 'PseudoClaude: chat (a chat buffer with a prompt; a range attaches the selection)' },
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
  PseudoClaudeMode = {
    function(o)
      pc().mode(o.args)
    end,
    {
      nargs = '?',
      complete = function(arg_lead)
        return require('pseudoclaude.permissions').complete(arg_lead)
      end,
      desc = 'PseudoClaude: the permission mode of the session [strict|default|acceptEdits|plan|bypassPermissions]',
    },
  },
  PseudoClaudeHooks = {
    function()
      pc().hooks()
    end,
    { nargs = 0, desc = 'PseudoClaude: the hooks of the folder by event, and whether each runs (in a float)' },
  },
  PseudoClaudeSkills = {
    function()
      pc().skills()
    end,
    { nargs = 0, desc = 'PseudoClaude: the skills of the folder; <CR> puts /<name> in the chat (in a float)' },
  },
  PseudoClaudePermissions = {
    function()
      pc().permissions()
    end,
    { nargs = 0, desc = 'PseudoClaude: the permission mode, the sandbox and the rules (in a float)' },
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

-- The server's code actions (Explain, Fix, Ask about selection) run the plugin's own commands.
require('pseudoclaude.code_actions').register()

-- Every file buffer of a folder is attached to its client (the server syncs open documents),
-- also those without a filetype (Neovim's `vim.lsp.enable` attaches on `FileType` only).
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufFilePost' }, {
  group = vim.api.nvim_create_augroup('pseudoclaude_attach', { clear = true }),
  callback = function(ev)
    if vim.bo[ev.buf].buftype ~= '' then
      return
    end
    if not (vim.lsp.is_enabled('pseudoclaude') or vim.lsp.get_clients({ name = 'pseudoclaude' })[1]) then
      return
    end
    -- After the FileType of the same load, which starts the client of a typed buffer.
    vim.schedule(function()
      require('pseudoclaude.client').attach_buffer(ev.buf)
    end)
  end,
})

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('pseudoclaude_install', { clear = true }),
  callback = function()
    local install = package.loaded['pseudoclaude.install']
    if install then
      install.abort()
    end
  end,
})
