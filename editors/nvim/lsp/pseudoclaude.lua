-- PseudoClaude language server (a coding agent per workspace folder), for Neovim 0.11+:
--   vim.lsp.enable('pseudoclaude')
-- or `require('pseudoclaude').setup({ ... })`, which also applies its options. See
-- `:help pseudoclaude`.

---@type vim.lsp.Config
return {
  -- `pseudoclaude lsp`: the one `:PseudoClaudeInstall` installed, else the one on PATH.
  cmd = (require('pseudoclaude.config').server_cmd({})),
  -- Always a folder (the agent needs one): the root of `.PseudoClaude`, `PSEUDOCLAUDE.md` or
  -- `.git` (never HOME for the user folder `~/.PseudoClaude`), else the current directory when it
  -- holds the file, else the file's folder. See `:help pseudoclaude-root`. Only a buffer of a file
  -- starts (or attaches to) a client: not an empty [No Name] one.
  root_dir = function(bufnr, on_dir)
    if require('pseudoclaude.editor').file_of(bufnr) then
      on_dir(require('pseudoclaude.config').root_dir(bufnr))
    end
  end,
  -- The settings object itself is the initializationOptions (SPEC §7); `settings.pseudoclaude`
  -- also answers `workspace/configuration` for the section `pseudoclaude`.
  before_init = function(params, config)
    local settings = config.settings and config.settings.pseudoclaude
    params.initializationOptions = require('pseudoclaude.config').settings_object(settings)
  end,
  -- `experimental.pseudoclaude.approvals`: edits come as `pseudoclaude/approve` with the whole
  -- file before and after, shown as a diff (`setup({ approvals = { diff = false } })` turns it off);
  -- `experimental.pseudoclaude.diagnostics`: the server asks for what `vim.diagnostic` shows.
  capabilities = require('pseudoclaude.config').capabilities(),
  handlers = require('pseudoclaude.handlers'),
  -- No `filetypes`: every file buffer of the folder is attached (the server syncs open documents:
  -- the agent reads their unsaved text and edits them in place); the buffers loaded before the
  -- client started, and those without a filetype, are attached here and by plugin/pseudoclaude.lua.
  -- Its code action requests carry the range's diagnostics of every source (for *Fix*).
  on_init = function(client)
    require('pseudoclaude.client').send_range_diagnostics(client)
    vim.schedule(function()
      require('pseudoclaude.client').attach_all(client)
    end)
  end,
  on_exit = function(code, signal, client_id)
    vim.schedule(function()
      require('pseudoclaude').on_client_exit(client_id, code, signal)
    end)
  end,
}
