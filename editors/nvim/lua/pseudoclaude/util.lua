--- What every part of the plugin does the same way: tell the user, fire a `User` autocmd, link
--- its highlight groups.
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

--- Link the plugin's highlight groups (`{group = linked group}`) as defaults, now and again after
--- every colorscheme (which clears them).
--- @param name string the augroup's suffix (`pseudoclaude_<name>_highlights`)
--- @param highlights table<string, string>
function M.link_highlights(name, highlights)
  local function define()
    for group, link in pairs(highlights) do
      vim.api.nvim_set_hl(0, group, { link = link, default = true })
    end
  end
  define()
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = vim.api.nvim_create_augroup('pseudoclaude_' .. name .. '_highlights', { clear = true }),
    callback = define,
  })
end

return M
