--- Where the plugin is, the checkout of pseudoclaude-lsp around it, and its version.
local M = {}

--- `editors/nvim`, symlinks resolved (a `pack/*/start` link or an `rtp` entry both lead here).
--- @return string
function M.plugin_dir()
  local source = debug.getinfo(1, 'S').source:gsub('^@', '')
  local real = vim.uv.fs_realpath(source) or source
  return vim.fs.normalize(vim.fn.fnamemodify(real, ':p:h:h:h'))
end

--- The repository the plugin belongs to: two levels above `editors/nvim`.
--- @return string
function M.repo_root()
  return vim.fs.normalize(vim.fn.fnamemodify(M.plugin_dir(), ':h:h'))
end

--- The `version` of the checkout's `pyproject.toml`, or nil outside a checkout.
--- @return string?
function M.plugin()
  local f = io.open(vim.fs.joinpath(M.repo_root(), 'pyproject.toml'), 'r')
  if not f then
    return nil
  end
  local in_project
  for line in f:lines() do
    local section = line:match('^%s*%[([^%]]+)%]')
    if section then
      in_project = section == 'project'
    elseif in_project then
      local v = line:match('^%s*version%s*=%s*["\']([^"\']+)["\']')
      if v then
        f:close()
        return v
      end
    end
  end
  f:close()
  return nil
end

--- The version in `pseudoclaude --version` output (`pseudoclaude 0.1.0`), or nil.
--- @param output string
--- @return string?
function M.parse(output)
  return (output or ''):match('pseudoclaude%s+v?(%d+[%w%.%-%+]*)')
end

return M
