--- Options of `require('pseudoclaude').setup(opts)`.
local M = {}

--- @class pseudoclaude.Options
--- @field cmd? string[] How to start the server (default: the `pseudoclaude` that
---   `:PseudoClaudeInstall` installed, else `{'pseudoclaude', 'lsp'}` from PATH).
--- @field python? string A Python that has the package: starts `<python> -m pseudoclaude lsp`.
--- @field settings? table Server settings (SPEC §7 keys: provider, model, baseUrl, apiKey,
---   contextWindow, maxIterations, thinking, approvals = {runCommand, write, mcp},
---   memory = {enabled, userDir}, dataDir, session = {retentionDays}, compact = {...},
---   mcp = {servers = {name = {command, args?, env?} | {type = 'http', url}}, startTimeout,
---   toolTimeout}).
--- @field transcript? {open: 'vsplit'|'split'|'tab'|'none'} Where `:PseudoClaudeAsk` shows it.
--- @field approvals? {diff: boolean} `diff = true` (default): the client asks the server for
---   `pseudoclaude/approve` and shows an edit as a diff split; `false`: the server asks with
---   `window/showMessageRequest` (a plain prompt).
--- @field chat? {width: number, prompt_height: integer} The chat window: columns (a fraction of
---   the screen when below 1) and the height of its prompt.
--- @field enable? boolean Call `vim.lsp.enable('pseudoclaude')` (default true).
M.defaults = {
  cmd = nil,
  python = nil,
  settings = {},
  transcript = { open = 'vsplit' },
  approvals = { diff = true },
  chat = { width = 0.4, prompt_height = 3 },
  enable = true,
}

--- @type pseudoclaude.Options
M.options = vim.deepcopy(M.defaults)

M.DEFAULT_CMD = { 'pseudoclaude', 'lsp' }

--- The server command for the options and where it comes from (`cmd`, `python`, `install`,
--- `PATH`): `cmd`, else `<python> -m pseudoclaude lsp`, else the environment of
--- `:PseudoClaudeInstall` when it exists, else `pseudoclaude lsp` from PATH.
--- @param opts? pseudoclaude.Options
--- @return string[], string
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
    return vim.deepcopy(opts.cmd), 'cmd'
  end
  if opts.python ~= nil then
    vim.validate('python', opts.python, 'string')
    return { vim.fn.expand(opts.python), '-m', 'pseudoclaude', 'lsp' }, 'python'
  end
  local installed = require('pseudoclaude.install').server_cmd()
  if installed then
    return installed, 'install'
  end
  return vim.deepcopy(M.DEFAULT_CMD), 'PATH'
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
  vim.validate('approvals.diff', merged.approvals.diff, 'boolean')
  vim.validate('chat.width', merged.chat.width, function(v)
    return type(v) == 'number' and v > 0
  end, false, 'a number of columns, or a fraction of the screen below 1')
  vim.validate('chat.prompt_height', merged.chat.prompt_height, function(v)
    return type(v) == 'number' and v >= 1
  end, false, 'a height of at least 1')
  M.options = merged
  return merged
end

--- The client capabilities the options ask for (SPEC §11): `experimental.pseudoclaude.approvals`
--- (edits asked as `pseudoclaude/approve`, shown as a diff), `experimental.pseudoclaude.diagnostics`
--- (the plugin answers `pseudoclaude/diagnostics` with what `vim.diagnostic` shows), and
--- `workspace.workspaceEdit.documentChanges` (Neovim applies versioned edits, and the plugin's
--- `workspace/applyEdit` refuses one made on an older version of the buffer).
--- @param opts? pseudoclaude.Options
--- @return table
function M.capabilities(opts)
  opts = opts or M.options
  local protocol = require('pseudoclaude.protocol')
  return {
    experimental = {
      [protocol.experimental_key] = {
        [protocol.approvals_capability] = opts.approvals.diff ~= false,
        [protocol.diagnostics_capability] = true,
      },
    },
    workspace = { workspaceEdit = { documentChanges = true } },
  }
end

--- What makes a folder a workspace root, in this order: the nearest folder holding the first
--- marker found wins, like `vim.fs.root()`.
M.ROOT_MARKERS = { '.PseudoClaude', 'PSEUDOCLAUDE.md', '.git' }

local function same_dir(a, b)
  return (vim.uv.fs_realpath(a) or vim.fs.normalize(a)) == (vim.uv.fs_realpath(b) or vim.fs.normalize(b))
end

--- Does `dir` hold `marker`? `~/.PseudoClaude` does not count: it is the user's config and memory
--- folder, and must never make HOME a workspace.
local function holds(dir, marker)
  if not vim.uv.fs_stat(vim.fs.joinpath(dir, marker)) then
    return false
  end
  return not (marker == '.PseudoClaude' and same_dir(dir, vim.uv.os_homedir()))
end

--- The workspace folder of a buffer and why: the root found by `ROOT_MARKERS` (from the buffer's
--- folder, else the current directory); without one, the current directory when it holds the
--- buffer's file (and is not HOME), else the file's own folder; a buffer without a file gets the
--- current directory.
--- @param bufnr? integer
--- @return string root, string why
function M.root_info(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local cwd = vim.fs.normalize(assert(vim.uv.cwd()))
  local name = ''
  if vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == '' then
    name = vim.api.nvim_buf_get_name(bufnr)
  end
  local folder = name ~= '' and vim.fs.normalize(vim.fn.fnamemodify(name, ':p:h')) or nil
  local start = folder or cwd
  for _, marker in ipairs(M.ROOT_MARKERS) do
    if holds(start, marker) then
      return start, 'it holds ' .. marker
    end
    for dir in vim.fs.parents(start) do
      if holds(dir, marker) then
        return dir, 'it holds ' .. marker
      end
    end
  end
  if not folder then
    return cwd, 'no marker, and the buffer has no file: the current directory'
  end
  if not same_dir(cwd, vim.uv.os_homedir()) and vim.fs.relpath(cwd, folder) then
    return cwd, 'no marker: the current directory, which holds the file'
  end
  return folder, "no marker: the file's own folder"
end

--- The workspace folder of a buffer (`root_info` without the reason).
--- @param bufnr? integer
--- @return string
function M.root_dir(bufnr)
  return (M.root_info(bufnr))
end

--- The settings as JSON objects: an empty table would be encoded as `[]`.
function M.settings_object(settings)
  if type(settings) ~= 'table' or next(settings) == nil then
    return vim.empty_dict()
  end
  return settings
end

return M
