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
  -- holds the file, else the file's folder. See `:help pseudoclaude-root`.
  root_dir = function(bufnr, on_dir)
    on_dir(require('pseudoclaude.config').root_dir(bufnr))
  end,
  -- The settings object itself is the initializationOptions (SPEC §7); `settings.pseudoclaude`
  -- also answers `workspace/configuration` for the section `pseudoclaude`.
  before_init = function(params, config)
    local settings = config.settings and config.settings.pseudoclaude
    params.initializationOptions = require('pseudoclaude.config').settings_object(settings)
  end,
  -- `experimental.pseudoclaude.approvals`: edits come as `pseudoclaude/approve` with the whole
  -- file before and after, shown as a diff (`setup({ approvals = { diff = false } })` turns it off).
  capabilities = require('pseudoclaude.config').capabilities(),
  handlers = require('pseudoclaude.handlers'),
  on_exit = function(code, signal, client_id)
    vim.schedule(function()
      require('pseudoclaude').on_client_exit(client_id, code, signal)
    end)
  end,
}
