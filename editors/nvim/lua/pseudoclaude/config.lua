--- Options of `require('pseudoclaude').setup(opts)`.
local M = {}

--- @class pseudoclaude.Options
--- @field cmd? string[] How to start the server (default `{'pseudoclaude', 'lsp'}`).
--- @field python? string A Python that has the package: starts `<python> -m pseudoclaude lsp`.
--- @field settings? table Server settings (SPEC §7 keys: provider, model, baseUrl, apiKey,
---   contextWindow, maxIterations, thinking, approvals = {runCommand, write},
---   memory = {enabled, userDir}, dataDir, session = {retentionDays}, compact = {...}).
--- @field transcript? {open: 'vsplit'|'split'|'tab'|'none'} Where `:PseudoClaudeAsk` shows it.
--- @field enable? boolean Call `vim.lsp.enable('pseudoclaude')` (default true).
M.defaults = {
  cmd = nil,
  python = nil,
  settings = {},
  transcript = { open = 'vsplit' },
  enable = true,
}

--- @type pseudoclaude.Options
M.options = vim.deepcopy(M.defaults)

M.DEFAULT_CMD = { 'pseudoclaude', 'lsp' }

--- The server command for the options: `cmd`, else `<python> -m pseudoclaude lsp`, else the default.
--- @param opts? pseudoclaude.Options
--- @return string[]
function M.server_cmd(opts)
  opts = opts or M.options
  if opts.cmd ~= nil then
    vim.validate('cmd', opts.cmd, function(v)
      if type(v) ~= 'table' or #v == 0 then
        return false
      end
      for _, w in ipairs(v) do
        if type(w) ~= 'string' or w == '' then
          return false
        end
      end
      return true
    end, false, 'a non-empty list of strings, e.g. {"pseudoclaude", "lsp"}')
    return vim.deepcopy(opts.cmd)
  end
  if opts.python ~= nil then
    vim.validate('python', opts.python, 'string')
    return { vim.fn.expand(opts.python), '-m', 'pseudoclaude', 'lsp' }
  end
  return vim.deepcopy(M.DEFAULT_CMD)
end

--- Merge user options over the defaults.
--- @param opts? pseudoclaude.Options
function M.set(opts)
  opts = opts or {}
  vim.validate('opts', opts, 'table')
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  M.server_cmd(merged) -- validates cmd / python
  local open = merged.transcript.open
  if not vim.tbl_contains({ 'vsplit', 'split', 'tab', 'none' }, open) then
    error(string.format('pseudoclaude: transcript.open must be vsplit, split, tab or none (got %s)', open))
  end
  M.options = merged
  return merged
end

--- The settings as JSON objects: an empty table would be encoded as `[]`.
function M.settings_object(settings)
  if type(settings) ~= 'table' or next(settings) == nil then
    return vim.empty_dict()
  end
  return settings
end

return M
