--- What every part of the plugin does the same way: tell the user, and fire a `User` autocmd.
local M = {}

--- A notification titled PseudoClaude.
--- @param msg string
--- @param level? integer a `vim.log.levels` value (default INFO)
function M.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'PseudoClaude' })
end

--- Fire the `User` autocmd `pattern` with `data` (what tests and user configs hook on).
--- @param pattern string
--- @param data? any
function M.fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, data = data, modeline = false })
end

return M
